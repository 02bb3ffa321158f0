//! `qsim run --fio-dir`: one folder per run holding one fio json+ job and fio's log files, read
//! by the real tools when they are installed: fio-plot 1.1.21 (`-l`, `-C`, `-g`), fio's
//! `fio_jsonplus_clat2csv` and `fio2gnuplot`. A tool that is missing skips its test, unless
//! `QSIM_REQUIRE_FIO_TOOLS=1` (as CI sets it), where a missing tool fails the test.
//!
//! The layout and the log lines are checked here by parsing, whatever is installed.

use crate::util::{Run, TempDir, qsim};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The two-queue laptop, short: reads (gitk) and buffered writes, three policies.
fn fio_dir(dir: &TempDir) -> PathBuf {
    fio_dir_of(dir, "two-queue", "4s")
}

/// `qsim run SCENARIO --duration SECS -r 1 --fio-dir DIR/out`; returns DIR/out.
fn fio_dir_of(dir: &TempDir, scenario: &str, secs: &str) -> PathBuf {
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    Run::of(&[
        "run",
        scenario,
        "--duration",
        secs,
        "-r",
        "1",
        "-q",
        "--fio-dir",
        o,
    ])
    .assert_ok();
    out
}

/// `tool` on the PATH, or `None`; a missing tool fails when `QSIM_REQUIRE_FIO_TOOLS=1`.
pub(crate) fn tool(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        let required = std::env::var("QSIM_REQUIRE_FIO_TOOLS").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "{name} is not installed and QSIM_REQUIRE_FIO_TOOLS=1"
        );
        eprintln!("skipped: {name} is not installed");
    }
    found
}

/// Runs `cmd` to success and returns its stdout and stderr together.
pub(crate) fn run_tool(cmd: &mut Command) -> String {
    let out = cmd.output().expect("the tool runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("the JSON file")).expect("valid JSON")
}

/// Parses a fio log: `time, value, ddir, bs, prio` integers per line.
fn log_lines(path: &Path) -> Vec<[u64; 5]> {
    let text = std::fs::read_to_string(path).expect("the log");
    text.lines()
        .map(|l| {
            let v: Vec<u64> = l.split(", ").map(|x| x.parse().expect(l)).collect();
            v.try_into()
                .unwrap_or_else(|_| panic!("not 5 columns: {l}"))
        })
        .collect()
}

const PREFIX: &str = "randread-iodepth-1-numjobs-1";

#[test]
fn each_run_is_a_folder_with_one_job_and_fio_logs() {
    let dir = TempDir::new();
    let out = fio_dir(&dir);
    for policy in ["fifo", "split", "prio"] {
        let run = out.join(policy);
        let v = json(&run.join("randread-1-1.json"));
        assert_eq!(
            v["fio version"],
            format!("qsim-{}", env!("CARGO_PKG_VERSION"))
        );
        let jobs = v["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 1, "{policy}: one job per file");
        let job = &jobs[0];
        assert_eq!(job["qsim"]["policy"], policy);
        for (key, want) in [("rw", "randread"), ("iodepth", "1"), ("numjobs", "1")] {
            assert_eq!(job["job options"][key], want);
        }
        assert!(job["read"]["clat_ns"]["bins"].is_object(), "json+ bins");
        assert_eq!(v["disk_util"][0]["name"], "sda");
        assert!(v["disk_util"][0]["read_ios"].as_u64().unwrap() > 0);
        // Logs: 500 ms windows, reads and writes; IOPS x 0.5 s are the window's I/Os, which
        // add up to the JSON's total less the dropped partial window.
        for kind in ["bw", "iops", "lat", "slat", "clat"] {
            let lines = log_lines(&run.join(format!("{PREFIX}_{kind}.1.log")));
            assert!(lines.len() >= 2, "{policy} {kind}: {} lines", lines.len());
            for l in &lines {
                assert!(l[0] % 500 == 0 && l[0] > 0 && l[2] <= 1 && l[3] == 0 && l[4] == 0);
            }
            assert!(lines.windows(2).all(|w| w[0][0] <= w[1][0]), "time order");
        }
        let iops = log_lines(&run.join(format!("{PREFIX}_iops.1.log")));
        for (ddir, name) in [(0, "read"), (1, "write")] {
            let logged: u64 = iops.iter().filter(|l| l[2] == ddir).map(|l| l[1] / 2).sum();
            let total = job[name]["total_ios"].as_u64().unwrap();
            assert!(logged <= total, "{policy} {name}: {logged} of {total}");
            // split may hold a short run's writes back: only reads must show.
            assert!(logged > 0 || name == "write", "{policy}: no reads logged");
            // Each window's mean latency lies within the run's extremes.
            let lat = log_lines(&run.join(format!("{PREFIX}_lat.1.log")));
            let (min, max) = (
                job[name]["lat_ns"]["min"].as_u64().unwrap(),
                job[name]["lat_ns"]["max"].as_u64().unwrap(),
            );
            assert!(
                lat.iter()
                    .filter(|l| l[2] == ddir)
                    .all(|l| l[1] >= min && l[1] <= max)
            );
        }
    }
}

#[test]
fn a_fio_dir_that_is_a_file_is_refused_before_running() {
    let dir = TempDir::new();
    let file = dir.file("taken", "a file");
    Run::of(&["run", "two-queue", "--fio-dir", &file])
        .assert_bad_input()
        .stderr_has(&["--fio-dir", "exists and is not a directory"]);
}

/// fio-plot 1.1.21 draws `-l` for one run, `-C` comparing two policy folders, and `-g` from
/// the logs of two folders, each as a PNG.
#[test]
fn fio_plot_draws_qsim_output() {
    let Some(fio_plot) = tool("fio-plot") else {
        return;
    };
    let dir = TempDir::new();
    let out = fio_dir(&dir);
    let (fifo, split) = (out.join("fifo"), out.join("split"));
    let graphs = dir.path().join("graphs");
    std::fs::create_dir_all(&graphs).unwrap();
    let cases: [(&str, Vec<&Path>, &[&str]); 3] = [
        ("l", vec![&fifo], &["-l"]),
        ("C", vec![&fifo, &split], &["-C"]),
        ("g", vec![&fifo, &split], &["-g", "-t", "iops", "lat"]),
    ];
    for (name, inputs, flags) in cases {
        let mut cmd = Command::new(&fio_plot);
        cmd.current_dir(&graphs).arg("-i").args(inputs);
        cmd.args(["-T", "qsim", "-r", "randread", "-d", "1", "-n", "1", "-o"]);
        cmd.arg(format!("{name}.png")).args(flags);
        let said = run_tool(&mut cmd);
        let png = graphs.join(format!("{name}.png"));
        let bytes = std::fs::read(&png).unwrap_or_else(|_| panic!("no {name}.png:\n{said}"));
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{name}");
    }
}

/// fio's `fio_jsonplus_clat2csv` turns the run's json+ bins into its CSV; the read clat
/// counts add up to the job's read I/Os.
#[test]
fn fio_jsonplus_clat2csv_reads_the_json() {
    let Some(clat2csv) = tool("fio_jsonplus_clat2csv") else {
        return;
    };
    let dir = TempDir::new();
    let out = fio_dir(&dir);
    let file = out.join("split").join("randread-1-1.json");
    let csv = dir.path().join("clat");
    run_tool(Command::new(clat2csv).arg(&file).arg(&csv));
    let text = std::fs::read_to_string(dir.path().join("clat_job0")).expect("clat_job0");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(", ").collect();
    let col = header
        .iter()
        .position(|h| *h == "read_clat_ns_count")
        .unwrap();
    let counted: u64 = lines
        .filter_map(|l| l.split(", ").nth(col)?.trim().parse::<u64>().ok())
        .sum();
    assert_eq!(counted, json(&file)["jobs"][0]["read"]["total_ios"]);
}

/// fio's `fio2gnuplot` parses the bandwidth log and computes its statistics: the mean it
/// finds is the mean of the logged values (of a read-only run: it does not tell directions
/// apart).
#[test]
fn fio2gnuplot_reads_the_logs() {
    let Some(fio2gnuplot) = tool("fio2gnuplot") else {
        return;
    };
    let dir = TempDir::new();
    let out = fio_dir_of(&dir, "nvme-fio", "2s");
    let run = out.join("fifo");
    let plots = dir.path().join("gnuplot");
    std::fs::create_dir_all(&plots).unwrap();
    let log = "randread-iodepth-64-numjobs-1_bw.1.log";
    run_tool(
        Command::new(fio2gnuplot)
            .current_dir(&run)
            .args(["-p", "*_bw.1.log", "-d"])
            .arg(&plots),
    );
    let global = std::fs::read_to_string(plots.join("_bw.1.global")).expect("_bw.1.global");
    let avg: f64 = global
        .lines()
        .find_map(|l| l.strip_prefix("avg="))
        .expect("avg=")
        .parse()
        .unwrap();
    let lines = log_lines(&run.join(log));
    let mean = lines.iter().map(|l| l[1] as f64).sum::<f64>() / lines.len() as f64;
    assert!((avg - mean).abs() < 0.01, "{avg} vs {mean}");
}

/// Every run of the scenario gets its folder, named after its label.
#[test]
fn every_run_gets_its_folder() {
    let dir = TempDir::new();
    let out = dir.path().join("o");
    let status = qsim(&[
        "run",
        "nvme-fio",
        "--duration",
        "1s",
        "-r",
        "1",
        "-q",
        "--fio-dir",
    ])
    .arg(&out)
    .stdout(std::process::Stdio::null())
    .status()
    .unwrap();
    assert!(status.success());
    let mut runs: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    runs.sort();
    assert_eq!(runs, ["fifo", "inline", "none", "prio", "ratio", "split"]);
}
