//! Finite fio jobs through the real binary: a job with `io_size` or `number_ios` ends the run
//! when it is done, the report gives its elapsed time (text and JSON), a job that cannot finish
//! is reported unfinished, and the output is the same on every run and thread count.

use crate::util::{Run, TempDir};
use serde_json::Value;

/// A 1 ms device without dm-crypt: the reader's 200 reads of 4 KiB at depth 1 take 200 ms
/// behind nothing but a background writer's share of the device.
const FINITE: &str = "\
duration: 60s
warmup: 100ms
replications: 3
device: { kind: generic, service: { kind: exponential, mean: 1ms } }
block: { elevator: fifo }
crypt: { cipher: null, hop_cost: 0ns }
policies: [none, fifo]
workloads:
  - { name: reader, kind: fio, io_size: 800KiB, startdelay: 50ms }
  - { name: bg, kind: fio, rw: randwrite, iodepth: 2 }
";

fn run_text(file: &str, extra: &[&str]) -> String {
    let mut args = vec!["run", file];
    args.extend_from_slice(extra);
    let run = Run::of(&args);
    run.assert_ok();
    run.stdout
}

#[test]
fn a_finite_job_ends_the_run_and_reports_its_elapsed_time() {
    let dir = TempDir::new();
    let file = dir.file("finite.yaml", FINITE);
    let text = run_text(&file, &[]);
    // Three replications: each block gives the spread, then replication 0's job line.
    assert_eq!(
        text.matches("  ±σ 3 reps    : elapsed=").count(),
        2,
        "{text}"
    );
    let elapsed: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  elapsed rep0 : "))
        .collect();
    assert_eq!(elapsed.len(), 2, "one line per policy:\n{text}");
    for line in &elapsed {
        assert!(line.ends_with(" (io=800KiB, ios=200)"), "{line}");
        // Three reads in flight share the device: roughly 3 ms per read, far below 60 s.
        let time = line
            .trim_start_matches("  elapsed rep0 : ")
            .split(' ')
            .next()
            .unwrap();
        let secs = match time.strip_suffix("ms") {
            Some(ms) => ms.parse::<f64>().map(|ms| ms / 1e3),
            None => time.trim_end_matches('s').parse::<f64>(),
        }
        .unwrap_or_else(|_| panic!("a time: {line}"));
        assert!(secs > 0.2 && secs < 2.0, "{line}");
    }
    // The measured window ends with the reader, not at 60 s.
    assert!(!text.contains("59900msec"), "{text}");
    assert!(!text.contains("Warnings:"), "{text}");
    // The replication summary has the elapsed metric and Mel's table.
    assert!(text.contains("    elapsed            "), "{text}");
    let table = text
        .split("Elapsed time and GFP_ATOMIC failures (mean and stddev over 3 replications):\n")
        .nth(1)
        .expect("the elapsed table");
    let rows: Vec<&str> = table.lines().take(3).collect();
    assert!(rows[0].starts_with("  run"), "{table}");
    assert!(
        rows[1].starts_with("  none ") && rows[1].ends_with("-       -"),
        "{table}"
    );
    assert!(rows[2].starts_with("  fifo "), "{table}");
    // Deterministic: the same bytes again, and whatever the thread count.
    assert_eq!(text, run_text(&file, &[]));
    assert_eq!(text, run_text(&file, &["-j", "1"]));
}

#[test]
fn json_gives_fios_elapsed_and_qsims_elapsed_ns() {
    let dir = TempDir::new();
    let file = dir.file("finite.yaml", FINITE);
    // One replication: the blocks pool replications, and this checks one run's figures.
    let v: Value =
        serde_json::from_str(&run_text(&file, &["--format", "json", "-r", "1"])).unwrap();
    for job in v["jobs"].as_array().unwrap() {
        let q = &job["qsim"];
        let ns = q["elapsed_ns"].as_u64().expect("finished: a number");
        assert_eq!(q["end"], "Finished");
        assert_eq!(q["finite_jobs"][0]["name"], "reader");
        assert_eq!(q["finite_jobs"][0]["ios"], 200);
        // fio's elapsed: the run's end (start delay + elapsed) in whole seconds, rounded up.
        let end_ns = 50_000_000 + ns;
        assert_eq!(
            job["elapsed"].as_u64().unwrap(),
            end_ns.div_ceil(1_000_000_000)
        );
        // The reads issued in the warm-up (from 50 to 100 ms) are not in fio's figures.
        let reads = job["read"]["total_ios"].as_u64().unwrap();
        assert!(reads > 100 && reads < 200, "{reads}");
    }
}

#[test]
fn a_job_that_cannot_finish_is_reported_unfinished_not_as_a_number() {
    let dir = TempDir::new();
    let file = dir.file("finite.yaml", FINITE);
    let text = run_text(&file, &["--duration", "150ms", "-r", "2"]);
    assert_eq!(
        text.matches("  elapsed rep0 : unfinished at 150ms (io=")
            .count(),
        2,
        "{text}"
    );
    assert!(
        text.contains("elapsed=unfinished in 2 of 2 replications"),
        "{text}"
    );
    assert!(
        text.contains("Warnings:\n  none: reader did not finish"),
        "{text}"
    );
    assert!(text.contains("  none  unfinished  2 of 2"), "{text}");
    let v: Value = serde_json::from_str(&run_text(
        &file,
        &["--duration", "150ms", "--format", "json"],
    ))
    .unwrap();
    assert!(v["jobs"][0]["qsim"]["elapsed_ns"].is_null());
    assert_eq!(v["jobs"][0]["qsim"]["end"], "Horizon");
    assert_eq!(v["jobs"][0]["qsim"]["warnings"][0]["kind"], "unfinished");
}

#[test]
fn check_shows_the_amount_and_the_start_delay() {
    let dir = TempDir::new();
    let file = dir.file("finite.yaml", FINITE);
    Run::of(&["check", &file]).assert_ok().stdout_has_words(&[
        "io_size 800KiB, then it stops",
        "unlimited (runs until the run ends)",
        "ends earlier once every finite job is done",
        "50ms",
    ]);
    // A bad value is a located error with a hint.
    let bad = dir.file(
        "bad.yaml",
        &FINITE.replace("io_size: 800KiB", "io_limit: 1k"),
    );
    let run = Run::of(&["check", &bad]);
    run.assert_bad_input();
    assert!(
        run.stderr.contains("workloads[0].io_size"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("less than one block"), "{}", run.stderr);
}
