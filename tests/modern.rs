//! Today's dm-crypt (issue 16): the kernel versions after 2.6.x, cryptsetup's `--perf-*` flags
//! as `dm-crypt+<flag>` policies, and what the loader refuses about them. Each test runs the
//! real binary on a scenario written to a temporary directory.

use crate::util::{Run, TempDir};
use serde_json::Value;

/// Random 4 KiB direct reads on the NVMe preset (whose completions run in hard IRQ) on a
/// 4-CPU machine, with and without `no_read_workqueue`, on kernels 6.6 and 6.9.
const HARDIRQ_READS: &str = r#"
description: "no_read_workqueue on a hard-IRQ NVMe"
seed: 7
duration: 300ms
warmup: 50ms
cpus: 4
replications: 2
kernel: { version: "6.6" }
device: { kind: nvme }
crypt: { cipher: aes-ni }
policies: [dm-crypt, dm-crypt+no_read_workqueue]
workloads:
  - { name: reader, kind: fio, rw: randread, bs: 4k, iodepth: 4, direct: true }
variants:
  - { name: "6.6", set: { kernel: { version: "6.6" } } }
  - { name: "6.9", set: { kernel: { version: "6.9" } } }
"#;

/// Runs `yaml` with the invariants checked and returns its fio-JSON export's jobs.
fn run_jobs(yaml: &str) -> Vec<Value> {
    let dir = TempDir::new();
    let file = dir.path().join("case.yaml");
    std::fs::write(&file, yaml).unwrap();
    let json = dir.path().join("out.json");
    let run = Run::of(&[
        "run",
        file.to_str().unwrap(),
        "--check-invariants",
        "--json",
        json.to_str().unwrap(),
    ]);
    run.assert_ok();
    let broken: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("invariants of `") && !l.ends_with(": all hold"))
        .collect();
    assert!(broken.is_empty(), "broken invariants:\n{}", run.stdout);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    v["jobs"].as_array().unwrap().clone()
}

fn job<'a>(jobs: &'a [Value], label: &str) -> &'a Value {
    jobs.iter()
        .find(|j| j["qsim"]["policy"] == label)
        .unwrap_or_else(|| panic!("no run labelled {label}"))
}

#[test]
fn no_read_workqueue_on_a_hard_irq_device_is_the_default_on_6_6_but_not_on_6_9() {
    let jobs = run_jobs(HARDIRQ_READS);
    let read = |label: &str| job(&jobs, label)["read"].clone();
    // 6.6 sends a hard-IRQ completion back to kcryptd: the same reads, the same latencies.
    let (def, flag) = (read("6.6/dm-crypt"), read("6.6/dm-crypt+no_read_workqueue"));
    assert_eq!(
        def["clat_ns"], flag["clat_ns"],
        "6.6: the flag changed nothing"
    );
    assert_eq!(def["total_ios"], flag["total_ios"]);
    // 6.9 decrypts in the BH workqueue on the interrupted CPU: no kcryptd hop, lower latency.
    let (def, flag) = (read("6.9/dm-crypt"), read("6.9/dm-crypt+no_read_workqueue"));
    let mean = |r: &Value| r["clat_ns"]["mean"].as_f64().unwrap();
    assert!(
        mean(&flag) < 0.9 * mean(&def),
        "6.9: the flag should save the hop: {} vs {} ns",
        mean(&flag),
        mean(&def)
    );
    assert!(flag["total_ios"].as_u64() > def["total_ios"].as_u64());
}

/// A scenario on `kernel` with `policies` and `extra` sections.
fn case(kernel: &str, policies: &str, extra: &str) -> String {
    format!(
        "duration: 100ms\ndevice: {{ kind: nvme }}\nkernel: {{ version: \"{kernel}\" }}\n\
         policies: {policies}\nworkloads:\n  - {{ kind: fio }}\n{extra}"
    )
}

/// `qsim check` on `yaml` must fail as bad input, saying `words`.
fn refused(yaml: &str, words: &[&str]) {
    let dir = TempDir::new();
    let file = dir.path().join("bad.yaml");
    std::fs::write(&file, yaml).unwrap();
    let run = Run::of(&["check", file.to_str().unwrap()]);
    run.assert_bad_input();
    for w in words {
        assert!(run.stderr.contains(w), "missing {w:?} in:\n{}", run.stderr);
    }
}

#[test]
fn the_loader_refuses_flags_and_layouts_a_kernel_does_not_have() {
    refused(
        &case("5.8", "[dm-crypt+no_read_workqueue]", ""),
        &[
            "policies[0]",
            "no `no_read_workqueue` (added in 5.9)",
            "Invalid feature arguments",
        ],
    );
    refused(
        &case("6.9", "[dm-crypt+high_priority]", ""),
        &["added in 6.10"],
    );
    refused(
        &case("2.6.32", "[dm-crypt]", ""),
        &["kernels 4.19 and later"],
    );
    refused(&case("6.6", "[fifo]", ""), &["`fifo`", "use `dm-crypt`"]);
    refused(
        &case("6.6", "[dm-crypt+bogus]", ""),
        &["unknown policy", "no_read_workqueue"],
    );
    refused(
        &case("6.6", "[dm-crypt]", "memory: { ram: 512MiB }\n"),
        &[":7:", "reclaim rules stop at 2.6.37"],
    );
    refused(
        &case("6.6", "[dm-crypt]", "block: { mode: legacy }\n"),
        &["block.mode", "only blk-mq"],
    );
    refused(
        "device: { kind: nvme }\nkernel: { version: 6.10 }\nworkloads:\n  - { kind: fio }\n",
        &["kernel.version", "quote it"],
    );
}

#[test]
fn flags_are_accepted_in_any_order_and_the_default_policy_follows_the_kernel() {
    let dir = TempDir::new();
    let file = dir.path().join("ok.yaml");
    let yaml = case(
        "6.12",
        "[none, dm-crypt, dm-crypt+no_write_workqueue+no_read_workqueue]",
        "",
    );
    std::fs::write(&file, yaml).unwrap();
    Run::of(&["check", file.to_str().unwrap()]).assert_ok();
    let plain = "duration: 100ms\ndevice: { kind: nvme }\nkernel: { version: \"6.6\" }\n\
                 workloads:\n  - { kind: fio }\n";
    std::fs::write(&file, plain).unwrap();
    let out = Run::of(&["check", file.to_str().unwrap()]);
    out.assert_ok();
    assert!(out.stdout.contains("dm-crypt"), "{}", out.stdout);
}

/// A sequential stream of large direct reads on an 8-CPU NVMe machine: 6.10 decrypts each bio
/// on one kcryptd worker; 6.11 cuts it at `max_read_size` into pieces that several workers
/// decrypt at once.
const SPLIT_READS: &str = r#"
description: "6.11 splits large reads"
seed: 11
duration: 200ms
warmup: 20ms
cpus: 8
replications: 1
kernel: { version: "6.11" }
device: { kind: nvme }
crypt: { cipher: aes-ni }
policies: [dm-crypt]
workloads:
  - { name: stream, kind: fio, rw: read, bs: 1M, iodepth: 1, direct: true }
variants:
  - { name: "6.10", set: { kernel: { version: "6.10" } } }
  - { name: "6.11", set: { kernel: { version: "6.11" } } }
"#;

#[test]
fn six_eleven_decrypts_the_pieces_of_one_read_on_several_cpus() {
    let jobs = run_jobs(SPLIT_READS);
    let busy_cpus = |label: &str| {
        job(&jobs, label)["qsim"]["cpu"]["by_cpu"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v.as_f64().unwrap() > 5.0)
            .count()
    };
    assert_eq!(busy_cpus("6.10"), 1, "one worker decrypts each whole bio");
    assert!(busy_cpus("6.11") >= 2, "the pieces spread over CPUs");
    let bw = |label: &str| job(&jobs, label)["read"]["bw_bytes"].as_f64().unwrap();
    assert!(
        bw("6.11") > 1.3 * bw("6.10"),
        "splitting parallelises decryption: {} vs {} B/s",
        bw("6.11"),
        bw("6.10")
    );
}

/// A small desktop on 6.12 for the flag comparison: 4 KiB reads beside a 256 KiB writer.
const FLAGS_DESKTOP: &str = r#"
description: "flag comparison"
seed: 16
duration: 300ms
warmup: 50ms
cpus: 4
replications: 3
kernel: { version: "6.12" }
device: { kind: nvme }
crypt: { cipher: aes-ni }
policies: [none]
workloads:
  - { name: reader, kind: fio, rw: randread, bs: 4k, iodepth: 1, direct: true }
  - { name: writer, kind: fio, rw: write, bs: 256k, rate: 300/s, iodepth: 8, direct: true }
"#;

#[test]
fn flags_compares_every_combination_against_the_default_and_plots_it() {
    let dir = TempDir::new();
    let file = dir.file("desk.yaml", FLAGS_DESKTOP);
    let plots = dir.path().join("plots");
    let json = dir.path().join("out.json");
    let run = Run::of(&[
        "run",
        &file,
        "--flags",
        "no_read_workqueue,no_write_workqueue",
        "--plots",
        plots.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    run.assert_ok_with_plots();
    let out = &run.stdout;
    // The policies are the pattern's, default first; `none` is replaced.
    assert!(out.contains("policies: dm-crypt,"), "{out}");
    let section = out
        .split("\nFlag comparison (")
        .nth(1)
        .unwrap_or_else(|| panic!("no flag comparison:\n{out}"));
    for row in ["  dm-crypt ", "  nr ", "  nw ", "  nr+nw "] {
        assert!(section.contains(row), "no row {row:?}:\n{section}");
    }
    assert!(section.contains("reference"), "{section}");
    // Each verdict reads as noise or a factor.
    let verdicts = section
        .lines()
        .filter(|l| l.starts_with("  n"))
        .filter(|l| l.ends_with("within noise") || l.ends_with("better") || l.ends_with("worse"))
        .count();
    assert_eq!(verdicts, 6, "{section}");
    assert!(section.contains("Best read p99.9: "), "{section}");
    assert!(section.contains("Best throughput: "), "{section}");
    // The whole output fits a mail, its run names by the flags' codes with their key.
    run.stdout_fits_80();
    run.stdout_has_words(&["policies: dm-crypt, nr, nw, nr+nw", "nr no_read_workqueue"]);
    for f in ["flags.png", "flags.svg"] {
        assert!(plots.join(f).is_file(), "no {f}");
    }
    // qsim plot redraws it from the JSON export.
    let again = dir.path().join("again");
    let redraw = Run::of(&[
        "plot",
        json.to_str().unwrap(),
        "--plots",
        again.to_str().unwrap(),
    ]);
    assert_eq!(redraw.code, Some(0), "{}", redraw.stderr);
    assert!(
        again.join("flags.svg").is_file(),
        "qsim plot drew no flags plot"
    );
}

/// The recommendation's factor in `Recommendation: X. Read p99.9 F× better`, and the
/// robustness table's `as run: F× better`: the same paired runs, so the same words.
fn factor_after<'a>(text: &'a str, marker: &str) -> &'a str {
    let at = text
        .find(marker)
        .unwrap_or_else(|| panic!("no {marker:?}:\n{text}"));
    text[at + marker.len()..].split(' ').next().unwrap()
}

#[test]
fn flags_recommend_one_combination_and_robust_checks_it_against_moved_inputs() {
    let dir = TempDir::new();
    let file = dir.file("desk.yaml", FLAGS_DESKTOP);
    let run = Run::of(&[
        "run",
        &file,
        "--flags",
        "no_read_workqueue,no_write_workqueue",
        "--robust=10%",
        "--summary",
    ]);
    run.assert_ok();
    let out = &run.stdout;
    run.stdout_fits_80();
    let rec = out
        .split("\nRecommendation: ")
        .nth(1)
        .unwrap_or_else(|| panic!("no recommendation:\n{out}"));
    let pick = rec.split('.').next().unwrap();
    assert!(["nr", "nw", "nr+nw"].contains(&pick), "{rec}");
    let words = rec.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("3 paired") && words.contains("95% CI"),
        "{rec}"
    );
    let table = out
        .split("\nDoes it hold? ")
        .nth(1)
        .unwrap_or_else(|| panic!("no robustness table:\n{out}"));
    assert!(
        table.starts_with(&format!("{pick} against dm-crypt")),
        "{table}"
    );
    assert!(table.contains("moved down and up by 10%"), "{table}");
    // nvme's drive parameters, aes-ni's two rates, and 4 CPUs moved by 1.
    for row in [
        "  device.latency ",
        "  device.overhead ",
        "  device.transfer_rate ",
        "  crypt.encrypt_rate ",
        "  crypt.decrypt_rate ",
    ] {
        assert!(table.contains(row), "no row {row:?}:\n{table}");
    }
    let cpus = table
        .lines()
        .find(|l| l.starts_with("  cpus "))
        .expect("cpus row");
    let cells: Vec<&str> = cpus.split_whitespace().collect();
    assert_eq!((cells[1], cells[2], cells[4]), ("4", "3", "5"), "{cpus}");
    assert!(
        table.contains("The answer is most sensitive to "),
        "{table}"
    );
    // Common random numbers: the study's base runs are the comparison's own runs.
    assert_eq!(
        factor_after(out, &format!("Recommendation: {pick}. Read p99.9 ")),
        factor_after(table, "as run: "),
        "{out}"
    );
    // Off, and refused where it cannot apply.
    let off = Run::of(&[
        "run",
        &file,
        "--flags",
        "no_read_workqueue",
        "--robust=0",
        "--summary",
    ]);
    off.assert_ok();
    assert!(!off.stdout.contains("Does it hold?"), "{}", off.stdout);
    let bad = Run::of(&["run", &file, "--robust=200%"]);
    assert_eq!(bad.code, Some(2), "{}", bad.stderr);
    bad.stderr_has(&["--robust", "not a step", "percentage"]);
}

#[test]
fn flags_refuses_a_flag_the_kernel_lacks_and_one_it_does_not_know() {
    let dir = TempDir::new();
    let file = dir.file("old.yaml", &FLAGS_DESKTOP.replace("\"6.12\"", "\"5.9\""));
    Run::of(&["run", &file, "--flags", "high_priority"])
        .assert_bad_input()
        .stderr_has(&["--flags high_priority", "Invalid feature arguments"]);
    Run::of(&["run", &file, "--flags", "no_read_wq"])
        .assert_bad_input()
        .stderr_has(&["--flags no_read_wq", "unknown flag `no_read_wq`"]);
    // `all` takes only what 5.9 has: 16 tables.
    let run = Run::of(&["check", &file, "--set", "policies=[\"dm-crypt+*\"]"]);
    run.assert_ok();
    // The row and its continuation lines (a long list wraps under its first item).
    let at = run.stdout.find("\npolicies").expect("policies row");
    let line: String = run.stdout[at + 1..]
        .lines()
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(line.matches("dm-crypt").count(), 16, "{line}");
    assert!(!line.contains("high_priority"), "{line}");
}

/// Today's machines (issue 27): a 4 KiB reader at QD1 on `machine: desktop-2024`, and in a
/// variant on `server-2024` with the PCIe 5.0 drive.
const TODAYS_MACHINES: &str = r#"
description: "today's machines"
seed: 27
duration: 200ms
warmup: 20ms
replications: 2
machine: desktop-2024
kernel: { version: "6.12" }
policies: [none, dm-crypt+no_read_workqueue]
workloads:
  - { name: reader, kind: fio, rw: randread, bs: 4k, iodepth: 1, direct: true }
variants:
  - { name: gen4, set: {} }
  - { name: gen5, set: { machine: server-2024, device: { kind: nvme-gen5 } } }
"#;

#[test]
fn todays_machines_expand_in_check_and_serve_reads_at_their_drives_qd1_time() {
    let dir = TempDir::new();
    let file = dir.file("today.yaml", TODAYS_MACHINES);
    // `qsim check` shows what the machine brought: its CPUs, drive (one hardware queue per
    // CPU, hard-IRQ completions) and cipher, and what the variant's machine and drive change.
    Run::of(&["check", &file]).assert_ok().stdout_has(&[
        "cpus                    8",
        "device                  nvme-gen4",
        "hw_queues             8 for 8 CPUs",
        "hard IRQ on the submitting CPU",
        "crypt                   vaes-zen4",
        "device: nvme-gen4 → nvme-gen5",
        "crypt: vaes-zen4 → vaes-spr",
    ]);
    let jobs = run_jobs(TODAYS_MACHINES);
    let mean = |label: &str| {
        job(&jobs, label)["read"]["clat_ns"]["mean"]
            .as_f64()
            .unwrap()
    };
    // Without dm-crypt a read is the drive's QD1 time: 1 / 19,654 IOPS = 50.88 us (gen4), and
    // the same latency plus the 541 ns bottleneck (gen5, its latency assumed as gen4's).
    for (variant, qd1_ns, decrypt_ns) in [("gen4", 50_880.0, 377.0), ("gen5", 50_707.0, 336.0)] {
        let plain = mean(&format!("{variant}/none"));
        assert!(
            (plain / qd1_ns - 1.0).abs() < 0.005,
            "{variant}: {plain} ns"
        );
        // no_read_workqueue on 6.12 decrypts in the BH workqueue: only the cipher's 4 KiB
        // (Zen 4's 10868 MB/s, Sapphire Rapids' 12176 MB/s) comes on top.
        let inline = mean(&format!("{variant}/dm-crypt+no_read_workqueue"));
        assert!(
            (inline - plain - decrypt_ns).abs() < 60.0,
            "{variant}: {inline} - {plain} ns"
        );
    }
}
