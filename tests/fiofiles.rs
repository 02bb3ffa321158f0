//! fio's files as fio writes them, checked against the real tools when they are installed
//! (else skipped, unless `QSIM_REQUIRE_FIO_TOOLS=1`): fio 3.33's own JSON for the same job
//! file, fio's `fiologparser_hist.py` on qsim's histogram log, and the `hdrhistogram` crate
//! on qsim's HdrHistogram files.

use crate::fiotools::{run_tool, tool};
use crate::util::{Run, TempDir};
use serde_json::Value;
use std::collections::BTreeSet;
use std::process::Command;

/// The seed job: 16 MiB of 4 KiB random reads through psync, on a file in `dir`.
fn seed_job(dir: &TempDir) -> String {
    let file = dir.path().join("data");
    dir.file(
        "seed.fio",
        &format!(
            "[seed]\nfilename={}\nsize=16m\nrw=randread\nbs=4k\nioengine=psync\n",
            file.display()
        ),
    )
}

/// Every key path of `v` (`/jobs[]/read/clat_ns/N`); the entries of `percentile` and `bins`
/// maps and of qsim's own object are data, not keys, and are not descended into.
fn key_paths(v: &Value, path: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                let p = format!("{path}/{k}");
                out.insert(p.clone());
                if !matches!(k.as_str(), "percentile" | "bins" | "qsim") {
                    key_paths(x, &p, out);
                }
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|x| key_paths(x, &format!("{path}[]"), out)),
        _ => {}
    }
}

/// Keys qsim writes and fio does not for this job, each documented in docs/output.md §2:
/// the three job options fio-plot selects files by (and the job's name), and qsim's object.
const QSIM_ONLY: [&str; 4] = [
    "/jobs[]/job options/name",
    "/jobs[]/job options/iodepth",
    "/jobs[]/job options/numjobs",
    "/jobs[]/qsim",
];

/// Real fio 3.33 and qsim, given the same job file, write JSON with the same key set (less
/// the documented allow-list), the same percentile keys, and floats in fio's `%f` form.
#[test]
fn json_has_real_fios_keys() {
    let Some(fio) = tool("fio") else {
        return;
    };
    let dir = TempDir::new();
    let job = seed_job(&dir);
    let real = run_tool(Command::new(fio).current_dir(dir.path()).args([
        "--output-format=json",
        "--output=real.json",
        &job,
    ]));
    let real: Value = serde_json::from_slice(&std::fs::read(dir.path().join("real.json")).unwrap())
        .unwrap_or_else(|e| panic!("fio's JSON: {e}\n{real}"));
    let ours = Run::of(&["run", &job, "--format", "json", "-q"]);
    assert_eq!(ours.code, Some(0), "{}", ours.stderr);
    let ours_json: Value = serde_json::from_str(&ours.stdout).unwrap();
    let (mut want, mut got) = (BTreeSet::new(), BTreeSet::new());
    key_paths(&real, "", &mut want);
    key_paths(&ours_json, "", &mut got);
    let missing: Vec<&String> = want.difference(&got).collect();
    assert!(missing.is_empty(), "fio writes, qsim does not: {missing:?}");
    let extra: Vec<&String> = got
        .difference(&want)
        .filter(|k| !QSIM_ONLY.contains(&k.as_str()))
        .collect();
    assert!(extra.is_empty(), "qsim writes, fio does not: {extra:?}");
    let pct = |v: &Value| -> Vec<String> {
        let map = v["jobs"][0]["read"]["clat_ns"]["percentile"]
            .as_object()
            .unwrap();
        map.keys().cloned().collect()
    };
    assert_eq!(pct(&real), pct(&ours_json));
    // fio's floats: six decimals, also where the value is whole.
    assert!(ours.stdout.contains("\"latency_percentile\": 100.000000"));
    assert!(ours.stdout.contains("\"usr_cpu\": 0.000000"));
    // One job's runtime and I/Os, as fio counts them: 16 MiB is 4096 reads of 4 KiB.
    let read = &ours_json["jobs"][0]["read"];
    assert_eq!(read["total_ios"], real["jobs"][0]["read"]["total_ios"]);
    assert_eq!(read["io_bytes"], 16 << 20);
    let (bytes, ms) = (
        read["io_bytes"].as_f64().unwrap(),
        read["runtime"].as_f64().unwrap(),
    );
    let bw = read["bw_bytes"].as_f64().unwrap();
    assert!(
        (bytes * 1000.0 / ms - bw).abs() / bw < 0.01,
        "{bytes} B in {ms} ms vs {bw} B/s"
    );
}

/// `qsim run two-queue` for 6 s, one replication, with `--fio-dir DIR/out` and a histogram log
/// of 1 s windows; returns the fifo run's folder.
fn fifo_with_hist_log(dir: &TempDir) -> std::path::PathBuf {
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    let args = [
        "run",
        "two-queue",
        "--duration",
        "6s",
        "-r",
        "1",
        "-q",
        "--fio-dir",
        o,
    ];
    Run::of(&[&args[..], &["--log_hist_msec", "1000"]].concat()).assert_ok();
    out.join("fifo")
}

const PREFIX: &str = "randread-iodepth-1-numjobs-1";

/// The run's read clat percentiles from its fio JSON: `(p, ns)` for `ps`.
fn read_percentiles(run: &std::path::Path, ps: &[f64]) -> Vec<(f64, f64)> {
    let v: Value =
        serde_json::from_slice(&std::fs::read(run.join("randread-1-1.json")).unwrap()).unwrap();
    let map = &v["jobs"][0]["read"]["clat_ns"]["percentile"];
    ps.iter()
        .map(|p| (*p, map[format!("{p:.6}")].as_f64().unwrap()))
        .collect()
}

/// fio's `fiologparser_hist.py` (Debian ships it gzipped among fio's docs) and a python3 with
/// the numpy and pandas it imports; `None` (skipped) when missing, unless
/// `QSIM_REQUIRE_FIO_TOOLS=1`.
fn fiologparser_hist(dir: &TempDir) -> Option<std::path::PathBuf> {
    let gz = std::path::Path::new("/usr/share/doc/fio/fiologparser_hist.py.gz");
    let required = std::env::var("QSIM_REQUIRE_FIO_TOOLS").is_ok_and(|v| v == "1");
    let imports = Command::new("python3")
        .args(["-c", "import numpy, pandas"])
        .status()
        .is_ok_and(|s| s.success());
    if !gz.is_file() || !imports {
        assert!(!required, "fiologparser_hist.py, numpy or pandas missing");
        eprintln!("skipped: fiologparser_hist.py, numpy or pandas missing");
        return None;
    }
    let script = run_tool(Command::new("gzip").arg("-dc").arg(gz));
    Some(std::path::PathBuf::from(
        dir.file("fiologparser_hist.py", &script),
    ))
}

/// fio's own parser reads qsim's histogram log: over the whole run its median, p90 and p99
/// of reads are the report's to within 3 % (the script interpolates linearly between bucket
/// midpoints, the report takes the midpoint of the bucket that reaches the rank: they differ
/// by up to about one bucket width, 1/64 of the value, plus the interpolation).
#[test]
fn fiologparser_hist_reads_the_histogram_log() {
    let dir = TempDir::new();
    let Some(script) = fiologparser_hist(&dir) else {
        return;
    };
    let run = fifo_with_hist_log(&dir);
    let log = run.join(format!("{PREFIX}_clat_hist.1.log"));
    let said = run_tool(
        Command::new("python3")
            .arg(&script)
            .args(["--noweight", "-i", "100000", "--directions", "r"])
            .args(["--percentiles", "50:90:99"])
            .arg(&log),
    );
    let mut lines = said.lines();
    let head: Vec<&str> = lines.next().unwrap().split(", ").collect();
    let row: Vec<&str> = lines.next().expect(&said).split(", ").collect();
    for (p, want) in read_percentiles(&run, &[50.0, 90.0, 99.0]) {
        let col = head.iter().position(|h| *h == format!("{p:.0}%")).unwrap();
        let got: f64 = row[col].parse().unwrap();
        assert!(
            (got - want).abs() <= 0.03 * want,
            "p{p}: {got} vs {want}\n{said}"
        );
    }
}

/// The HdrHistogram interval log loads in the `hdrhistogram` crate and gives the report's
/// percentiles back to within 0.1 % (+1 ns): each fio bucket is recorded at its midpoint,
/// which an HdrHistogram of 3 significant digits keeps to 2^-10 of the value; the ranks are
/// the same (the first value whose cumulative count reaches p × N). The `.hgrm` text ends
/// with HdrHistogram's footer and counts the same I/Os.
#[test]
fn the_hdrhistogram_files_give_the_percentiles_back() {
    use base64::Engine as _;
    use hdrhistogram::serialization::Deserializer;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    let dir = TempDir::new();
    let run = fifo_with_hist_log(&dir);
    let bytes = std::fs::read(run.join(format!("{PREFIX}_clat.hlog"))).unwrap();
    let mut read = None;
    for entry in IntervalLogIterator::new(&bytes) {
        if let LogEntry::Interval(iv) = entry.expect("a well-formed interval log") {
            let raw = base64::engine::general_purpose::STANDARD
                .decode(iv.encoded_histogram())
                .unwrap();
            let h: hdrhistogram::Histogram<u64> = Deserializer::new()
                .deserialize(&mut raw.as_slice())
                .unwrap();
            if iv.tag().map(|t| t.as_str()) == Some("read") {
                read = Some(h);
            }
        }
    }
    let read = read.expect("a read interval");
    let ps = [1.0, 50.0, 90.0, 99.0, 99.9, 99.99];
    for (p, want) in read_percentiles(&run, &ps) {
        let got = read.value_at_quantile(p / 100.0) as f64;
        assert!(
            (got - want).abs() <= want / 1000.0 + 1.0,
            "p{p}: {got} vs {want}"
        );
    }
    let hgrm = std::fs::read_to_string(run.join(format!("{PREFIX}_clat_read.hgrm"))).unwrap();
    let total = format!("Total count    = {:>12}]", read.len());
    assert!(hgrm.contains(&total), "{hgrm}");
}

/// A job file asks for the histogram log with fio's own options, without a warning: 100 ms
/// windows, coarseness 1 (928 columns after `time, ddir, bs`), in the `--fio-dir` folder.
#[test]
fn a_job_files_log_hist_options_are_honoured() {
    let dir = TempDir::new();
    let job = dir.file(
        "hist.fio",
        "[h]\nsize=16m\nrw=randread\nbs=4k\nlog_hist_msec=100\nlog_hist_coarseness=1\n\
         write_hist_log=h\n",
    );
    let out = dir.path().join("out");
    let run = Run::of(&[
        "run",
        &job,
        "-r",
        "1",
        "-q",
        "--fio-dir",
        out.to_str().unwrap(),
    ]);
    run.assert_ok();
    let log = std::fs::read_to_string(out.join("none").join(format!("{PREFIX}_clat_hist.1.log")))
        .expect("the histogram log");
    let rows: Vec<Vec<u64>> = log
        .lines()
        .map(|l| l.split(", ").map(|v| v.parse().unwrap()).collect())
        .collect();
    assert!(rows.len() >= 2, "{} windows", rows.len());
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(
            (r[0], r[1], r[2], r.len()),
            ((i as u64 + 1) * 100, 0, 4096, 3 + 928)
        );
    }
    let total: u64 = rows.iter().map(|r| r[3..].iter().sum::<u64>()).sum();
    assert_eq!(total, 4096, "every read of 16 MiB once");
}

/// `--fio-exact` prints fio's one-line forms: the `bw` line ends with its `samples=`, the
/// `Run status` line with its `run=` and the `Disk stats` line with its `util=`, which the
/// default report wraps to fit 80 columns; the legend and the tables still fit 80.
#[test]
fn fio_exact_prints_fios_one_line_forms() {
    let args = ["run", "two-queue", "--duration", "4s", "-r", "1", "-q"];
    let wrapped = Run::of(&args);
    wrapped.assert_ok();
    let exact = Run::of(&[&args[..], &["--fio-exact"]].concat());
    exact.assert_ok();
    let one_line = |out: &str, start: &str, end: &str| {
        out.lines()
            .filter(|l| l.trim_start().starts_with(start))
            .all(|l| l.contains(end))
    };
    for (start, end) in [
        ("bw (", "samples="),
        ("READ: bw=", "run="),
        ("sda: ios=", "util="),
    ] {
        assert!(
            one_line(&exact.stdout, start, end),
            "{start}…{end}:\n{}",
            exact.stdout
        );
    }
    assert!(
        !one_line(&wrapped.stdout, "READ: bw=", "run="),
        "the default wraps it"
    );
    assert!(wrapped.stdout.lines().all(|l| l.chars().count() <= 80));
    assert!(exact.stdout.lines().any(|l| l.chars().count() > 80));
    // The words are the same: joining the wrapped continuations gives fio's lines back.
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(words(&wrapped.stdout), words(&exact.stdout));
}
