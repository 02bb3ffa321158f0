//! Output paths of `qsim run` and `qsim plot` (issue 11): checked before simulating, written
//! through devices, pipes and symlinks without replacing them, `-` for stdout, the report kept
//! when an export fails, names never used as paths, and no temporary file left by SIGINT.

use crate::util::{Run, TempDir, qsim};
use std::fs;
use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::Path;

/// A scenario that runs in milliseconds.
const TINY: &str = "name: tiny\nduration: 300ms\nwarmup: 50ms\nreplications: 2\n\
                    device: { kind: nvme }\nworkloads:\n  - kind: fio\n    iodepth: 4\n";

fn temps_in(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.contains(".tmp") {
            found.push(name);
        }
        if e.file_type().unwrap().is_dir() {
            found.extend(temps_in(&e.path()));
        }
    }
    found
}

#[test]
fn a_bad_export_path_fails_before_simulating() {
    let dir = TempDir::new();
    let sc = dir.file("tiny.yaml", TINY);
    // Far too many replications to finish quickly: the check must come first.
    let run = Run::of(&[
        "run",
        &sc,
        "-r",
        "1000",
        "--json",
        "/nonexistent/dir/x.json",
    ]);
    run.assert_bad_input().stderr_has(&[
        "--json /nonexistent/dir/x.json",
        "create the directory first",
    ]);
    let file = dir.file("plots-here", "not a directory");
    Run::of(&["run", &sc, "-r", "1000", "--plots", &file])
        .assert_bad_input()
        .stderr_has(&["exists and is not a directory"]);
    let d = dir.path().to_str().unwrap();
    Run::of(&["run", &sc, "-r", "1000", "--csv", d])
        .assert_bad_input()
        .stderr_has(&["is a directory"]);
    let same = dir.path().join("same").to_str().unwrap().to_string();
    Run::of(&[
        "run",
        &sc,
        "-r",
        "1000",
        "--csv",
        &same,
        "--markdown",
        &same,
    ])
    .assert_bad_input()
    .stderr_has(&["--csv writes the same file"]);
    // Two spellings of one new file are one file.
    let dotted = dir.path().join(".").join("same");
    Run::of(&[
        "run",
        &sc,
        "-r",
        "1000",
        "--csv",
        &same,
        "--json",
        dotted.to_str().unwrap(),
    ])
    .assert_bad_input()
    .stderr_has(&["--json writes the same file"]);
}

#[test]
fn exports_write_through_symlinks_devices_and_pipes() {
    let dir = TempDir::new();
    let sc = dir.file("tiny.yaml", TINY);
    let target = dir.path().join("target.csv");
    fs::write(&target, "old").unwrap();
    let link = dir.path().join("link.csv");
    symlink(&target, &link).unwrap();
    let fifo = dir.path().join("fifo.md");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read_to_string(fifo).unwrap())
    };
    // A private device node like /dev/null; mknod needs root, which CI has.
    let node = dir.path().join("null");
    let have_node = std::process::Command::new("mknod")
        .arg(&node)
        .args(["c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success());
    let mut args = vec![
        "run".to_string(),
        sc.clone(),
        "--csv".into(),
        link.to_str().unwrap().into(),
        "--markdown".into(),
        fifo.to_str().unwrap().into(),
    ];
    if have_node {
        args.extend(["--json".into(), node.to_str().unwrap().into()]);
    } else {
        eprintln!("mknod is not permitted here: the device node part was skipped");
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Run::of(&args).assert_ok();
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(fs::read_to_string(&target).unwrap().starts_with("command,"));
    assert!(reader.join().unwrap().contains("| Command |"));
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    if have_node {
        assert!(
            fs::symlink_metadata(&node)
                .unwrap()
                .file_type()
                .is_char_device(),
            "the device node was replaced"
        );
    }
    assert!(temps_in(dir.path()).is_empty());
}

#[test]
fn dash_writes_an_export_to_stdout_after_the_report() {
    let dir = TempDir::new();
    let sc = dir.file("tiny.yaml", TINY);
    let run = Run::of(&["run", &sc, "--csv", "-"]);
    run.assert_ok();
    let report_end = run.stdout.find("command,").expect("the CSV on stdout");
    assert!(run.stdout[..report_end].contains("fifo:"), "{}", run.stdout);
}

#[test]
fn a_failed_export_keeps_the_report_and_the_other_files() {
    let dir = TempDir::new();
    let sc = dir.file("tiny.yaml", TINY);
    let plots = dir.path().join("plots");
    // The plot directory exists, but a directory squats on one plot's file name.
    fs::create_dir_all(plots.join("percentiles.png")).unwrap();
    let json = dir.path().join("r.json");
    let run = Run::of(&[
        "run",
        &sc,
        "--plots",
        plots.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stdout.contains("fifo:"), "the report was lost");
    assert!(run.stderr.contains("percentiles.png"), "{}", run.stderr);
    assert!(json.exists(), "the JSON export was skipped");
    assert!(temps_in(dir.path()).is_empty());
}

#[test]
fn plots_lists_its_files_takes_no_scenario_and_needs_a_named_dirs_parent() {
    let dir = TempDir::new();
    let sc = dir.file("tiny.yaml", TINY);
    // `--plots SCENARIO`: the word is the scenario, the plots go to plots/tiny/.
    let mut cmd = qsim(&["run", "--plots", &sc, "-r", "1"]);
    cmd.current_dir(dir.path());
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let listed: Vec<&str> = stderr.lines().filter(|l| l.ends_with(".png")).collect();
    assert!(listed.contains(&"plots/tiny/percentiles.png"), "{stderr}");
    for path in &listed {
        assert!(dir.path().join(path).is_file(), "{path} listed but missing");
    }
    // A named directory is created, its parent is not.
    let deep = dir.path().join("missing/plots");
    Run::of(&["run", &sc, "-r", "1", "--plots", deep.to_str().unwrap()])
        .assert_bad_input()
        .stderr_has(&["is not an existing directory", "--plots "]);
    assert!(!dir.path().join("missing").exists());
    let named = dir.path().join("mine");
    Run::of(&["run", &sc, "-r", "1", "--plots", named.to_str().unwrap()]).assert_ok_with_plots();
    assert!(named.join("cdf.svg").is_file());
}

#[test]
fn a_scenario_name_never_leads_outside_plots() {
    let dir = TempDir::new();
    for (name, expect) in [("/abs/dir", "plots/abs_dir"), ("../..", "plots/scenario")] {
        let text = TINY.replace("name: tiny", &format!("name: \"{name}\""));
        let sc = dir.file("named.yaml", &text);
        let mut cmd = qsim(&["run", &sc, "-r", "1", "--plots"]);
        cmd.current_dir(dir.path());
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert!(
            dir.path().join(expect).join("percentiles.png").exists(),
            "{name}"
        );
        assert!(!Path::new("/abs").exists());
    }
    // Also through --set.
    let sc = dir.file("tiny.yaml", TINY);
    let mut cmd = qsim(&["run", &sc, "-r", "1", "--set", "name=../../up", "--plots"]);
    cmd.current_dir(dir.path());
    assert!(cmd.output().unwrap().status.success());
    assert!(dir.path().join("plots/up/percentiles.png").exists());
    assert!(!dir.path().join("../up").exists());
}

#[test]
fn an_interrupt_leaves_no_temporary_file_and_exits_130() {
    let dir = TempDir::new();
    // 24 variants × 2 policies: about fifty timeline plots, so most of the run writes files.
    let mut text = TINY.replace("replications: 2", "replications: 1");
    text.push_str("policies: [fifo, split]\nvariants:\n");
    for i in 0..24 {
        text.push_str(&format!(
            "  - {{ name: v{i}, set: {{ cpus: {} }} }}\n",
            i % 4 + 1
        ));
    }
    let sc = dir.file("many.yaml", &text);
    // Signal at moments spread over the run: while simulating, and while plots are written.
    let mut interrupted = 0;
    for delay_ms in (0..12u64).map(|k| 10 + 60 * k) {
        let plots = dir.path().join(format!("p{delay_ms}"));
        let child = qsim(&["run", &sc, "--plots", plots.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(130) => {
                interrupted += 1;
                assert!(stderr.contains("qsim: interrupted;"), "{stderr}");
            }
            Some(0) => {}
            other => panic!("exit {other:?}: {stderr}"),
        }
        if plots.exists() {
            assert!(temps_in(&plots).is_empty(), "after {delay_ms} ms");
        }
    }
    assert!(interrupted > 0, "no run was interrupted: make them longer");
}

#[test]
fn summary_prints_the_tables_without_the_per_run_blocks() {
    let dir = TempDir::new();
    let sc = dir.file(
        "tiny.yaml",
        &TINY.replace("device:", "policies: [fifo, split]\ndevice:"),
    );
    let full = Run::of(&["run", &sc]);
    full.assert_ok();
    let short = Run::of(&["run", &sc, "--summary"]);
    short.assert_ok();
    assert!(full.stdout.contains("  read: IOPS="), "{}", full.stdout);
    assert!(!short.stdout.contains("  read: IOPS="), "{}", short.stdout);
    for table in ["Comparison (", "Across 2 replications"] {
        assert!(short.stdout.contains(table), "{table}:\n{}", short.stdout);
        // The tables are the full report's, word for word; the full one's blocks follow them.
        let from = |t: &str| t[t.find(table).unwrap()..].to_string();
        let tables = full.stdout.split("\nPer-run reports").next().unwrap();
        assert_eq!(from(&short.stdout), from(tables));
    }
    assert!(short.stdout.lines().count() * 2 < full.stdout.lines().count());
}
