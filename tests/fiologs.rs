//! fio's per-I/O logs (`log_avg_msec=0`) and averaging windows in `qsim run --fio-dir`: fio's
//! columns, one line per completed I/O of replication 0, the job file's options acting as the
//! flags do, byte-identical logs whatever `-j`, and fio's `fiologparser.py` reading them
//! (skipped when it is missing, unless `QSIM_REQUIRE_FIO_TOOLS=1`).

use crate::fiotools::run_tool;
use crate::util::{Run, TempDir};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const KINDS: [&str; 5] = ["bw", "iops", "lat", "slat", "clat"];

/// `qsim run ARGS -q --fio-dir DIR/NAME EXTRA` (and `--json DIR/NAME.json`); returns the folder.
fn run_into(dir: &TempDir, name: &str, args: &[&str], extra: &[&str]) -> PathBuf {
    let out = dir.path().join(name);
    let json = dir.path().join(format!("{name}.json"));
    let mut all: Vec<&str> = args.to_vec();
    all.extend([
        "-q",
        "--fio-dir",
        out.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    all.extend(extra);
    Run::of(&all).assert_ok();
    out
}

/// A per-I/O log's lines, each parsed as fio 3.33 writes them: `time, value, ddir, bs, prio`
/// (or with `offset` before `prio`).
fn lines(path: &Path, offset: bool) -> Vec<Vec<u64>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let cols = if offset { 6 } else { 5 };
    text.lines()
        .map(|l| {
            let v: Vec<u64> = l.split(", ").map(|x| x.parse().expect(l)).collect();
            assert_eq!(v.len(), cols, "{l}");
            v
        })
        .collect()
}

/// Each run's (label, read I/Os, write I/Os, read lat mean ns) from a `--json` export.
fn ios(json: &Path) -> Vec<(String, u64, u64, f64)> {
    let v: Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["read"]["total_ios"].as_u64().unwrap(),
                j["write"]["total_ios"].as_u64().unwrap(),
                j["read"]["lat_ns"]["mean"].as_f64().unwrap(),
            )
        })
        .collect()
}

const TWO_QUEUE: &[&str] = &["run", "two-queue", "--duration", "4s", "-r", "1"];
const TQ_PREFIX: &str = "randread-iodepth-1-numjobs-1";

/// Every log line parses with fio's columns; each log has one line per completed I/O of the
/// run (its JSON's reads and writes: one replication, so the pooled counts are replication
/// 0's); times never decrease; the values are what each log holds (iops 1, bs the I/O's
/// size, lat = slat + clat, bw = bytes × 10⁶ / clat as fio computes it).
#[test]
fn per_io_logs_have_fios_columns_and_one_line_per_io() {
    let dir = TempDir::new();
    let out = run_into(
        &dir,
        "out",
        TWO_QUEUE,
        &["--log_avg_msec", "0", "--log_offset"],
    );
    let runs = ios(&dir.path().join("out.json"));
    assert_eq!(runs.len(), 3);
    for (label, reads, writes, _) in runs {
        let run = out.join(label.trim_start_matches("two-queue-"));
        let logs: Vec<Vec<Vec<u64>>> = KINDS
            .iter()
            .map(|k| lines(&run.join(format!("{TQ_PREFIX}_{k}.1.log")), true))
            .collect();
        let [bw, iops, lat, slat, clat] = &logs[..] else {
            unreachable!()
        };
        assert_eq!(lat.len() as u64, reads + writes, "{label}");
        let dirs = |ddir| lat.iter().filter(|l| l[2] == ddir).count() as u64;
        assert_eq!((dirs(0), dirs(1)), (reads, writes), "{label}");
        assert!(
            lat.windows(2).all(|w| w[0][0] <= w[1][0]),
            "{label}: time order"
        );
        assert!(lat.last().unwrap()[0] <= 4_000);
        for i in 0..lat.len() {
            let (l, s, c, b, n) = (&lat[i], &slat[i], &clat[i], &bw[i], &iops[i]);
            // time, ddir, bs, offset and prio agree across the logs.
            for other in [s, c, b, n] {
                assert_eq!(
                    (other[0], other[2], other[3], other[4], other[5]),
                    (l[0], l[2], l[3], l[4], l[5])
                );
            }
            assert!(l[3] > 0 && l[3] % 512 == 0, "{l:?}");
            assert_eq!(l[5], 0, "priority");
            assert_eq!(l[1], s[1] + c[1]);
            assert_eq!(n[1], 1);
            assert_eq!(b[1], (l[3] * 1_000_000).checked_div(c[1]).unwrap_or(0));
        }
    }
}

/// The same seed gives byte-identical per-I/O logs on one thread and on two.
#[test]
fn per_io_logs_do_not_depend_on_the_thread_count() {
    let dir = TempDir::new();
    let per_io = ["--log_avg_msec", "0", "--seed", "7"];
    let one = run_into(
        &dir,
        "one",
        TWO_QUEUE,
        &[&per_io[..], &["-j", "1"]].concat(),
    );
    let two = run_into(
        &dir,
        "two",
        TWO_QUEUE,
        &[&per_io[..], &["-j", "2"]].concat(),
    );
    let mut compared = 0;
    for run in ["fifo", "split", "prio"] {
        for k in KINDS {
            let name = format!("{TQ_PREFIX}_{k}.1.log");
            let a = std::fs::read(one.join(run).join(&name)).unwrap();
            let b = std::fs::read(two.join(run).join(&name)).unwrap();
            assert!(!a.is_empty() && a == b, "{run}/{name} differs with -j 2");
            compared += 1;
        }
    }
    assert_eq!(compared, 15);
}

/// `--log_avg_msec N` averages over N ms: windows end at N, 2N, …; no temporary file is left
/// in the folder.
#[test]
fn averaged_logs_take_the_asked_window() {
    let dir = TempDir::new();
    let out = run_into(&dir, "out", TWO_QUEUE, &["--log_avg_msec", "250"]);
    let iops = lines(
        &out.join("fifo").join(format!("{TQ_PREFIX}_iops.1.log")),
        false,
    );
    assert!(iops.len() >= 8, "{}", iops.len());
    assert!(
        iops.iter().all(|l| l[0] % 250 == 0 && l[3] == 0),
        "{iops:?}"
    );
    let hidden = std::fs::read_dir(out.join("fifo"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with('.')
        })
        .count();
    assert_eq!(hidden, 0);
}

const JOB: &str = "[h]\nsize=16m\nrw=randread\nbs=4k\n";
const JOB_PREFIX: &str = "randread-iodepth-1-numjobs-1";

/// A job file's `write_lat_log` and `log_avg_msec=0` give the latency logs `--log_avg_msec 0`
/// gives, byte for byte, and only those (fio writes the logs a job asks for); its
/// `log_offset=1` adds the offset column.
#[test]
fn a_job_files_log_options_act_as_the_flags_do() {
    let dir = TempDir::new();
    let plain = dir.file("plain.fio", JOB);
    let asks = dir.file(
        "asks.fio",
        &format!("{JOB}write_lat_log=x\nlog_avg_msec=0\n"),
    );
    let offset = dir.file(
        "offset.fio",
        &format!("{JOB}write_iops_log=x\nlog_offset=1\n"),
    );
    let flag = run_into(
        &dir,
        "flag",
        &["run", &plain, "-r", "1"],
        &["--log_avg_msec", "0"],
    );
    let job = run_into(&dir, "job", &["run", &asks, "-r", "1"], &[]);
    for k in ["lat", "slat", "clat"] {
        let name = format!("{JOB_PREFIX}_{k}.1.log");
        let a = std::fs::read(flag.join("none").join(&name)).unwrap();
        let b = std::fs::read(job.join("none").join(&name)).unwrap();
        assert!(a == b, "{name} differs");
        assert_eq!(
            a.iter().filter(|&&c| c == b'\n').count(),
            4096,
            "16 MiB of 4 KiB"
        );
    }
    for k in ["bw", "iops"] {
        assert!(
            flag.join("none")
                .join(format!("{JOB_PREFIX}_{k}.1.log"))
                .is_file()
        );
        assert!(
            !job.join("none")
                .join(format!("{JOB_PREFIX}_{k}.1.log"))
                .exists()
        );
    }
    // The command line overrides the job file: 500 ms averages again.
    let over = run_into(
        &dir,
        "over",
        &["run", &asks, "-r", "1"],
        &["--log_avg_msec", "500"],
    );
    let lat = lines(
        &over.join("none").join(format!("{JOB_PREFIX}_lat.1.log")),
        false,
    );
    assert!(lat.iter().all(|l| l[0] % 500 == 0 && l[3] == 0), "{lat:?}");
    let off = run_into(&dir, "off", &["run", &offset, "-r", "1"], &[]);
    let iops = lines(
        &off.join("none").join(format!("{JOB_PREFIX}_iops.1.log")),
        true,
    );
    assert!(
        iops.iter().all(|l| l[3] == 0 && l[4] == 0),
        "averaged: offset 0"
    );
    assert!(
        !off.join("none")
            .join(format!("{JOB_PREFIX}_lat.1.log"))
            .exists()
    );
}

/// `--log_avg_msec` needs `--fio-dir`; a bad job-file value is refused at its line.
#[test]
fn bad_log_options_are_refused() {
    let clap = Run::of(&["run", "two-queue", "--log_avg_msec", "0"]);
    assert_eq!(clap.code, Some(2), "{}", clap.stderr);
    clap.stderr_has(&["required arguments were not provided", "--fio-dir"]);
    let dir = TempDir::new();
    let bad = dir.file("bad.fio", &format!("{JOB}log_avg_msec=-1\n"));
    Run::of(&["run", &bad, "-r", "1"])
        .assert_bad_input()
        .stderr_has(&["bad.fio:5:14", "log_avg_msec", "not a whole number"]);
}

/// `qsim merge` cannot write per-I/O logs, other windows or a histogram log from shard files:
/// it refuses the flags (writing nothing), and names the job file's options it does not honour
/// in a warning.
#[test]
fn merge_names_the_log_options_it_cannot_honour() {
    let dir = TempDir::new();
    let out = dir.path().join("out");
    for (flag, value) in [("--log_avg_msec", "0"), ("--log_hist_msec", "1000")] {
        let fio_dir = out.to_str().unwrap();
        Run::of(&["merge", "shard.json", "--fio-dir", fio_dir, flag, value])
            .assert_bad_input()
            .stderr_has(&[&format!("{flag} is not available with qsim merge")]);
        assert!(!out.exists(), "{flag}");
    }
    let job = dir.file(
        "logs.fio",
        &format!("{JOB}log_hist_msec=100\nwrite_lat_log=x\nlog_avg_msec=0\n"),
    );
    let shard = dir.path().join("s.jsonl");
    let sharded = Run::of(&[
        "run",
        &job,
        "-r",
        "1",
        "-q",
        "--shard",
        "0/1",
        "--shard-out",
        shard.to_str().unwrap(),
    ]);
    assert_eq!(sharded.code, Some(0), "{}", sharded.stderr);
    let merged = Run::of(&[
        "merge",
        shard.to_str().unwrap(),
        "--fio-dir",
        out.to_str().unwrap(),
    ]);
    assert_eq!(merged.code, Some(0), "{}", merged.stderr);
    merged.stderr_has(&[
        "warning: the job file's log_hist_msec=100 is not honoured by qsim merge",
        "warning: the job file's log_avg_msec=0 is not honoured by qsim merge",
    ]);
    let lat = lines(
        &out.join("none").join(format!("{JOB_PREFIX}_lat.1.log")),
        false,
    );
    assert!(lat.iter().all(|l| l[0] % 500 == 0), "500 ms averages");
    assert!(
        !out.join("none")
            .join(format!("{JOB_PREFIX}_clat_hist.1.log"))
            .exists()
    );
}

/// fio's `fiologparser.py` (Debian ships it gzipped among fio's docs), or `None` (skipped)
/// when it is missing, unless `QSIM_REQUIRE_FIO_TOOLS=1`.
fn fiologparser(dir: &TempDir) -> Option<PathBuf> {
    let gz = Path::new("/usr/share/doc/fio/fiologparser.py.gz");
    let python = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !gz.is_file() || !python {
        let required = std::env::var("QSIM_REQUIRE_FIO_TOOLS").is_ok_and(|v| v == "1");
        assert!(!required, "fiologparser.py or python3 missing");
        eprintln!("skipped: fiologparser.py or python3 missing");
        return None;
    }
    let script = run_tool(Command::new("gzip").arg("-dc").arg(gz));
    Some(PathBuf::from(dir.file("fiologparser.py", &script)))
}

/// fio's `fiologparser.py` reads qsim's per-I/O lat log. The script fio 3.33 ships unpacks
/// four columns (`time, value, ddir, bs`, fio's layout before the priority column), so it
/// refuses fio 3.33's own logs as it refuses qsim's; given the first four columns, its default
/// figure (each sample's value held from the previous sample's time to its own, averaged over
/// the run) is the one computed here from qsim's lines, and close to the report's mean read
/// latency (the samples are the last I/O of each millisecond of a steady run).
#[test]
fn fiologparser_reads_the_per_io_lat_log() {
    let dir = TempDir::new();
    let Some(script) = fiologparser(&dir) else {
        return;
    };
    let args = ["run", "nvme-fio", "--duration", "1s", "-r", "1"];
    let out = run_into(&dir, "out", &args, &["--log_avg_msec", "0"]);
    let (_, reads, _, mean) = ios(&dir.path().join("out.json"))
        .into_iter()
        .find(|r| r.0.ends_with("fifo"))
        .unwrap();
    let prefix = "randread-iodepth-64-numjobs-1";
    let log = out.join("fifo").join(format!("{prefix}_lat.1.log"));
    let parsed = lines(&log, false);
    assert_eq!(parsed.len() as u64, reads);
    let whole = Command::new("python3")
        .arg(&script)
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&whole.stderr).contains("too many values to unpack"),
        "the shipped script reads four columns"
    );
    let four: String = parsed
        .iter()
        .map(|l| format!("{}, {}, {}, {}\n", l[0], l[1], l[2], l[3]))
        .collect();
    let four = dir.file("four.log", &four);
    let said = run_tool(Command::new("python3").arg(&script).arg(&four));
    let got: f64 = said.trim().parse().expect(&said);
    let (mut area, mut prev) = (0.0, 0u64);
    for l in &parsed {
        area += l[1] as f64 * (l[0] - prev) as f64;
        prev = l[0];
    }
    let want = area / prev as f64;
    assert!((got - want).abs() <= 1e-6 * want + 0.001, "{got} vs {want}");
    assert!((got - mean).abs() <= 0.05 * mean, "{got} vs mean {mean}");
}

/// With two replications the per-I/O logs are replication 0's: the read lines' mean latency
/// is replication 0's `read mean` in the `--json` summary (its first time), not replication
/// 1's.
#[test]
fn per_io_logs_are_replication_0s() {
    let dir = TempDir::new();
    let args = ["run", "two-queue", "--duration", "4s", "-r", "2"];
    let out = run_into(&dir, "out", &args, &["--log_avg_msec", "0"]);
    let json: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out.json")).unwrap()).unwrap();
    let times = &json["qsim"]["summary"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["command"] == "fifo" && r["metric"] == "read mean")
        .expect("fifo's read mean")["times"];
    let (rep0, rep1) = (times[0].as_f64().unwrap(), times[1].as_f64().unwrap());
    // Distinguishable at far more than the tolerance the log is held to below.
    assert!((rep0 - rep1).abs() > 1e-5 * rep0, "the replications differ");
    let lat = lines(
        &out.join("fifo").join(format!("{TQ_PREFIX}_lat.1.log")),
        false,
    );
    let reads: Vec<u64> = lat.iter().filter(|l| l[2] == 0).map(|l| l[1]).collect();
    let mean_ms = reads.iter().sum::<u64>() as f64 / reads.len() as f64 / 1e6;
    assert!((mean_ms - rep0).abs() <= 1e-9 * rep0, "{mean_ms} vs {rep0}");
}
