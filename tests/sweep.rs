//! Sweeps and sensitivity studies through the binary: the report's tables, located errors for
//! a bad sweep, and the same bytes whatever `-j`.

use crate::util::{Run, TempDir};

/// A short sweep of two-queue's cipher speed, fifo vs split, 3 points, 2 replications.
const SWEEP: &[&str] = &[
    "run",
    "two-queue",
    "--duration",
    "3s",
    "-r",
    "2",
    "-q",
    "--set",
    "policies=[fifo, split]",
    "--sweep",
    "crypt.encrypt_rate+crypt.decrypt_rate=60MB/s..1432MiB/s:3:log",
];

/// The report's sweep section: from the first `Sweep:` table to the end.
fn sweep_section(stdout: &str) -> &str {
    let at = stdout.find("\nSweep: ").expect("a sweep table");
    &stdout[at..]
}

#[test]
fn a_sweep_reports_a_table_per_metric_by_value_and_policy() {
    let r = Run::of(SWEEP);
    r.assert_ok();
    let s = sweep_section(&r.stdout);
    for t in [
        "Sweep: read p99, ms",
        "Sweep: read p99.9, ms",
        "Sweep: read mean, ms",
    ] {
        assert!(s.contains(t), "{t} missing:\n{s}");
    }
    // Rows: the three swept values, each written in the unit of `from` (one unit a column).
    let table: Vec<&str> = s
        .lines()
        .skip_while(|l| !l.starts_with("Sweep: read p99.9"))
        .take(7)
        .collect();
    assert!(
        table[2].contains("fifo") && table[2].contains("split - fifo"),
        "{table:?}"
    );
    assert!(table[3].trim_start().starts_with("60MB/s"), "{table:?}");
    assert!(table[4].trim_start().starts_with("300.2MB/s"), "{table:?}");
    assert!(table[5].trim_start().starts_with("1502MB/s"), "{table:?}");
    assert!(s.lines().all(|l| l.chars().count() <= 80), "{s}");
    // The runs are the variants, one per point and policy.
    assert!(
        r.stdout
            .contains("crypt.encrypt_rate+crypt.decrypt_rate=60MB/s/fifo")
    );
}

#[test]
fn a_sweep_is_the_same_whatever_the_thread_count() {
    let one = Run::of(&[SWEEP, &["-j", "1"]].concat());
    let two = Run::of(&[SWEEP, &["-j", "2"]].concat());
    one.assert_ok();
    assert_eq!(one.stdout, two.stdout);
}

#[test]
fn a_bad_sweep_is_refused_at_its_line() {
    let dir = TempDir::new();
    let base = "device: { kind: nvme }\nworkloads: [{ kind: fio }]\nsweep:\n";
    let file = dir.file(
        "bad.yaml",
        &format!("{base}  - path: crypt.cipher\n    values: [aes-2009, aes-3000]\n"),
    );
    Run::of(&["check", &file]).assert_bad_input().stderr_has(&[
        "bad.yaml:4:5: sweep[0]: sweep point `crypt.cipher=aes-3000`: crypt.cipher: unknown",
        "did you mean `aes-2009`?",
    ]);
    let file = dir.file(
        "range.yaml",
        &format!("{base}  - path: memory.ram\n    range: {{ from: 1GiB, to: 2s }}\n"),
    );
    Run::of(&["check", &file]).assert_bad_input().stderr_has(&[
        "range.yaml:5:",
        "sweep[0].range.to",
        "same kind",
    ]);
    let file = dir.file(
        "both.yaml",
        &format!(
            "{base}  - path: cpus\n    values: [1, 2]\nvariants:\n  - {{ name: a, set: {{}} }}\n"
        ),
    );
    Run::of(&["check", &file])
        .assert_bad_input()
        .stderr_has(&["both.yaml:4:3", "cannot be combined with `variants:`"]);
    Run::of(&["run", "two-queue", "--sweep", "crypt.cipher=aes-3000"])
        .assert_bad_input()
        .stderr_has(&["--sweep crypt.cipher=aes-3000: sweep[0]: sweep point"]);
    Run::of(&["run", "two-queue", "--sweep", "cpus=1..2:x"])
        .assert_bad_input()
        .stderr_has(&["FROM..TO[:POINTS[:log]]"]);
}

#[test]
fn a_sensitivity_study_ranks_its_knobs() {
    let r = Run::of(&[
        "run",
        "two-queue",
        "--duration",
        "3s",
        "-r",
        "2",
        "-q",
        "--set",
        "policies=[split]",
        "--sensitivity",
        "cpus=1..4",
        "--sensitivity",
        "block.nr_requests",
    ]);
    r.assert_ok().stdout_fits_80();
    let s = &r.stdout[r
        .stdout
        .find("\nSensitivity of read p99.9 ms under split")
        .unwrap()..];
    assert!(
        s.contains("block.nr_requests") && s.contains("102") && s.contains("154"),
        "{s}"
    );
    assert!(
        s.contains("cpus") && s.contains(" 1 ") && s.contains(" 4 "),
        "{s}"
    );
    assert!(r.stdout.contains("cpus-") && r.stdout.contains("block.nr_requests+"));
    Run::of(&[
        "run",
        "two-queue",
        "--sensitivity",
        "cpus",
        "--sensitivity-metric",
        "p42",
    ])
    .assert_bad_input()
    .stderr_has(&["unknown metric `p42`"]);
}

#[test]
fn plots_draw_a_knee_per_table_and_qsim_plot_redraws_them() {
    let dir = TempDir::new();
    let (plots, json) = (dir.path().join("p"), dir.path().join("r.json"));
    let (plots, json) = (plots.to_str().unwrap(), json.to_str().unwrap());
    Run::of(&[SWEEP, &["--plots", plots, "--json", json]].concat()).assert_ok_with_plots();
    for f in [
        "knee-read_p99_ms.png",
        "knee-read_p999_ms.svg",
        "knee-read_mean_ms.png",
    ] {
        assert!(dir.path().join("p").join(f).is_file(), "{f} missing");
    }
    // hyperfine's `parameters` in each summary row of the export.
    let export = std::fs::read_to_string(json).unwrap();
    let path = "crypt.encrypt_rate+crypt.decrypt_rate";
    assert!(
        export.contains(&format!(
            "\"parameters\": {{\n          \"{path}\": \"300.2MB/s\""
        )),
        "no parameters in the export"
    );
    let again = dir.path().join("q");
    let r = Run::of(&["plot", json, "--plots", again.to_str().unwrap()]);
    r.assert_ok().stdout_has(&["knee-read_p999_ms.png"]);
    let svg = |d: &str| std::fs::read(dir.path().join(d).join("knee-read_p999_ms.svg")).unwrap();
    assert_eq!(svg("p"), svg("q"), "the export redraws the same knee plot");
}

#[test]
fn a_study_draws_a_tornado_per_policy() {
    let dir = TempDir::new();
    let plots = dir.path().join("p");
    Run::of(&[
        "run",
        "two-queue",
        "--duration",
        "3s",
        "-r",
        "2",
        "-q",
        "--set",
        "policies=[fifo, split]",
        "--sensitivity",
        "cpus=1..4",
        "--plots",
        plots.to_str().unwrap(),
    ])
    .assert_ok_with_plots();
    for f in ["tornado-fifo.png", "tornado-split.svg"] {
        assert!(plots.join(f).is_file(), "{f} missing");
    }
}
