//! `qsim run --json/--csv/--markdown`: the export files of one run agree with each other and
//! with the text summary, fio tooling's keys are there, and thread count changes nothing.

use crate::util::{Run, TempDir};
use serde_json::Value;

/// Runs two-queue for 5 s with 4 replications, writing every export into `dir`; returns the
/// run and the files' contents (json, csv, markdown).
fn exported(dir: &TempDir, jobs: &str) -> (Run, String, String, String) {
    let path = |name: &str| dir.path().join(name).to_str().expect("UTF-8").to_string();
    let (json, csv, md) = (path("r.json"), path("r.csv"), path("r.md"));
    let run = Run::of(&[
        "run",
        "two-queue",
        "--duration",
        "5s",
        "-r",
        "4",
        "-j",
        jobs,
        "--json",
        &json,
        "--csv",
        &csv,
        "--markdown",
        &md,
    ]);
    run.assert_ok();
    let read = |p: &str| std::fs::read_to_string(p).expect("export written");
    (run, read(&json), read(&csv), read(&md))
}

#[test]
fn json_export_has_fio_jobs_and_the_replication_summary() {
    let dir = TempDir::new();
    let (_, json, csv, md) = exported(&dir, "2");
    let v: Value = serde_json::from_str(&json).expect("the export parses");
    assert_eq!(v["fio version"], "qsim-0.1.0");
    let jobs = v["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 3, "one fio job per policy");
    for j in jobs {
        let o = &j["job options"];
        for key in ["rw", "bs", "iodepth", "numjobs"] {
            assert!(o[key].is_string(), "job options.{key} is a string: {o}");
        }
        for key in ["iops", "bw", "iops_stddev", "runtime", "total_ios"] {
            assert!(!j["read"][key].is_null(), "read.{key}");
        }
        let clat = &j["read"]["clat_ns"];
        assert!(clat["percentile"]["99.990000"].is_u64(), "{clat}");
        assert!(clat["bins"].is_object(), "json+ bins");
        assert!(j["latency_ms"].is_object() && j["usr_cpu"].is_number());
        assert_eq!(j["qsim"]["replications"], 4);
        assert_eq!(j["qsim"]["spread"]["replications"], 4);
    }
    let q = &v["qsim"];
    assert_eq!(q["reference"], "fifo");
    assert_eq!(q["replications"], 4);
    let rows = q["summary"].as_array().expect("summary rows");
    // CSV: the same rows, in the same order, with the same means.
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), rows.len() + 1, "{csv}");
    for (row, line) in rows.iter().zip(&lines[1..]) {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells[0], row["command"].as_str().unwrap());
        assert_eq!(cells[1], row["metric"].as_str().unwrap());
        let mean: f64 = cells[3].parse().expect("mean");
        // serde_json's default float parsing may be one ulp off: compare closely, not exactly.
        let json_mean = row["summary"]["mean"].as_f64().unwrap();
        assert!(
            (mean - json_mean).abs() <= 1e-12 * json_mean.abs(),
            "{line}"
        );
        assert_eq!(row["times"].as_array().unwrap().len(), 4);
    }
    // Markdown: a table per metric, a row per run, the same verdicts.
    for row in rows {
        let metric = row["metric"].as_str().unwrap();
        assert!(md.contains(&format!("### {metric}")), "{metric}\n{md}");
        if let Some(verdict) = row["verdict"].as_str() {
            let cmd = row["command"].as_str().unwrap();
            let section = md.split("### ").find(|s| s.starts_with(metric)).unwrap();
            let line = section
                .lines()
                .find(|l| l.starts_with(&format!("| `{cmd}` |")))
                .unwrap_or_else(|| panic!("{cmd} row in {metric}"));
            assert!(line.ends_with(&format!("| {verdict} |")), "{line}");
        }
    }
    // The plot data is there for `qsim plot`.
    let runs = q["plots"]["runs"].as_array().expect("plot runs");
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[0]["read_percentiles"].as_array().unwrap().len(), 10);
    assert!(runs[0]["memory"]["failures"]["mean"].is_number());
}

#[test]
fn exports_do_not_depend_on_the_thread_count() {
    let (a, b) = (TempDir::new(), TempDir::new());
    let one = exported(&a, "1");
    let two = exported(&b, "2");
    assert_eq!(one.0.stdout, two.0.stdout);
    assert_eq!(one.1, two.1, "json");
    assert_eq!(one.2, two.2, "csv");
    assert_eq!(one.3, two.3, "markdown");
}

#[test]
fn blocks_pool_replications_and_show_their_spread() {
    let run = Run::of(&["run", "two-queue", "--duration", "5s", "-r", "3"]);
    run.assert_ok()
        .stdout_has(&["reps=3", "±σ   3 reps: IOPS=", "clat p99.99=", "±σ 3 reps"]);
    let one = Run::of(&["run", "two-queue", "--duration", "5s", "-r", "1"]);
    one.assert_ok();
    assert!(!one.stdout.contains("±σ"), "no spread for one replication");
    // Pooled: the read section counts the I/Os of all three replications.
    let ios = |text: &str| -> u64 {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with("issued rwts: total="))
            .expect("issued line");
        let total = line.split("total=").nth(1).unwrap();
        total.split(',').next().unwrap().parse().unwrap()
    };
    assert!(ios(&run.stdout) > 2 * ios(&one.stdout), "pooled counts");
}

#[test]
fn precision_target_adds_replications_or_says_the_cap_stopped_it() {
    let loose = Run::of(&[
        "run",
        "two-queue",
        "--duration",
        "3s",
        "--precision",
        "50%",
        "--max-replications",
        "8",
    ]);
    loose
        .assert_ok()
        .stdout_has(&["precision: read p99 within ±50% (95% CI) in every run"]);
    let tight = Run::of(&[
        "run",
        "two-queue",
        "--duration",
        "6s",
        "--precision",
        "0.01%",
        "--max-replications",
        "12",
        "--precision-metric",
        "failures",
    ]);
    tight.assert_ok().stdout_has(&[
        "precision: GFP_ATOMIC failures NOT within ±0.01% (95% CI) (the cap stopped it)",
        "after 12 replications",
        "reps=12",
    ]);
    let bad = Run::of(&["run", "two-queue", "--precision", "150%"]);
    assert_eq!(bad.code, Some(2), "{}", bad.stderr);
    assert!(bad.stderr.contains("write it like 5%"), "{}", bad.stderr);
}

#[test]
fn an_unwritable_export_fails_cleanly_and_leaves_nothing() {
    let dir = TempDir::new();
    let missing = dir.path().join("no/such/dir/r.csv");
    let run = Run::of(&[
        "run",
        "two-queue",
        "--duration",
        "3s",
        "-r",
        "2",
        "--csv",
        missing.to_str().unwrap(),
    ]);
    // Refused before simulating, as bad input.
    run.assert_bad_input()
        .stderr_has(&["--csv", "cannot be used", "create the directory first"]);
    assert!(!dir.path().join("no").exists());
}

#[test]
fn no_progress_bar_when_stderr_is_not_a_terminal() {
    // Runs long enough (> 1 s wall) that a bar would be drawn on a terminal.
    let run = Run::of(&["run", "two-queue", "-r", "20"]);
    run.assert_ok();
    let quiet = Run::of(&["run", "two-queue", "-r", "2", "--quiet", "--duration", "3s"]);
    quiet.assert_ok();
}
