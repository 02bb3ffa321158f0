//! `qsim run --fio-dir DIR`: fio's files, laid out as fio-plot reads them.
//!
//! fio-plot's unit is one fio run per JSON file with one job in it, and one folder per thing
//! compared (`-C` compares folders). So each run of the report (a policy, or a variant's
//! policy) gets a folder named after its label ([`safe_dir_name`]) holding:
//!
//! - `<rw>-<iodepth>-<numjobs>.json`: the run alone as fio json+ (the same job object as in
//!   `--json`, built from the pooled replications), with its `disk_util` entry;
//! - `<rw>-iodepth-<N>-numjobs-<M>_{bw,iops,lat,slat,clat}.1.log`: fio's `write_bw_log`,
//!   `write_iops_log` and `write_lat_log` files with `log_avg_msec=500` by default, from
//!   replication 0 of the run ([`log_text`]); with `log_avg_msec=N` over N-ms windows, and with
//!   `log_avg_msec=0` one line per I/O, streamed to the files while the run is simulated
//!   ([`super::fiolog`], not built here). Which logs, the window and fio's offset column are
//!   [`LogOptions`] (fio's `write_*_log`, `log_avg_msec` and `log_offset`);
//! - `<rw>-iodepth-<N>-numjobs-<M>_clat_hist.1.log`: fio's histogram log, when asked for with
//!   `log_hist_msec` ([`crate::stats::histlog`]);
//! - `<rw>-iodepth-<N>-numjobs-<M>_clat_{read,write}.hgrm` and `_clat.hlog`: HdrHistogram's
//!   percentile text and interval log of the pooled clat ([`super::hdr`]).
//!
//! Each averaged log line is fio's `time, value, ddir, bs, prio` (`500, 79313, 0, 0, 0`): the time
//! in ms at the end of the window, counted from the end of the warm-up (fio counts from the job's
//! start; qsim's statistics start when the warm-up ends); the value averaged over the window:
//! bandwidth in KiB/s and IOPS as the bytes and I/Os completed in the window over its length,
//! latencies in ns as the mean of the I/Os completed in the window (slat, clat and lat as the text
//! report defines them); `ddir` 0 for reads and 1 for writes; block size 0, as fio writes for
//! averaged entries, and priority 0. A direction with nothing completed in a window gets no line
//! for it, as fio skips it. qsim does not keep its jobs apart, so all of a run's jobs are in job
//! 1's files (`.1.log`); fio-plot sums bandwidth and IOPS over a run's job files and averages
//! latencies, which gives the same series. Windows are 500 ms, qsim's default
//! ([`DEFAULT_AVG_MSEC`]; fio's is 0, per-I/O logs, which are big), or `log_avg_msec`'s; a run
//! longer than [`crate::stats::windows::DEFAULT_CAP`] windows (17 minutes at 500 ms) doubles them
//! as often as needed, so the log's memory does not grow with the simulated time; a partial last
//! window is dropped. With `log_offset=1` every line has fio's offset column after the block size
//! (0 for an averaged entry).

use super::{JobOptions, Report};
use crate::model::base::config::DeviceConfig;
use crate::stats::windows::{WindowLog, WindowSums};
use std::fmt::Write as _;
use std::path::PathBuf;

/// The disk's name in fio's `Disk stats` and `disk_util`: `nvme0n1` for the NVMe model,
/// `sda` for any other. A label only (the model has one disk beneath dm-crypt).
pub fn disk_name(device: &DeviceConfig) -> &'static str {
    match device {
        DeviceConfig::Nvme(_) => "nvme0n1",
        DeviceConfig::Hdd(_) | DeviceConfig::Generic(_) => "sda",
    }
}

/// A run label as one safe directory name: ASCII letters, digits, `.`, `_`, `-` and `+`
/// kept, anything else (`/` of `variant/policy` included) turned into `_`; never empty, `.` or
/// `..`.
pub fn safe_dir_name(label: &str) -> String {
    let name: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() || name.chars().all(|c| c == '.') {
        format!("run{}", "_".repeat(name.len()))
    } else {
        name
    }
}

/// `<rw>-<iodepth>-<numjobs>.json`, the JSON file name fio-plot's benchmark script writes.
pub fn json_name(o: &JobOptions) -> String {
    format!("{}-{}-{}.json", o.rw, o.iodepth, o.numjobs)
}

/// `<rw>-iodepth-<N>-numjobs-<M>`, the log prefix fio-plot `-g` selects files by.
pub fn log_prefix(o: &JobOptions) -> String {
    format!("{}-iodepth-{}-numjobs-{}", o.rw, o.iodepth, o.numjobs)
}

/// The five fio logs, by the suffix fio gives each file.
pub const LOG_KINDS: [&str; 5] = ["bw", "iops", "lat", "slat", "clat"];

/// qsim's `log_avg_msec` when neither the command line nor the job file gives one. fio's own
/// default is 0, one line per I/O: a run of a few simulated seconds at NVMe speed completes
/// millions of I/Os, so five per-I/O logs run to hundreds of megabytes; 500 ms windows (fio's
/// `bwavgtime`) keep the files small and are what fio-plot's graphs are usually drawn from.
pub const DEFAULT_AVG_MSEC: u64 = 500;

/// Which of fio's logs `--fio-dir` writes, and how: fio's `log_avg_msec`, `write_bw_log`,
/// `write_iops_log`, `write_lat_log` and `log_offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogOptions {
    /// fio's `log_avg_msec`: 0 writes one line per I/O ([`super::fiolog`]), N > 0 averages
    /// over windows of N ms.
    pub avg_msec: u64,
    /// Write the bandwidth log (`_bw`).
    pub bw: bool,
    /// Write the IOPS log (`_iops`).
    pub iops: bool,
    /// Write the latency logs (`_lat`, `_slat`, `_clat`), as fio's `write_lat_log` does.
    pub lat: bool,
    /// fio's `log_offset`: an offset column after the block size.
    pub offset: bool,
}

impl Default for LogOptions {
    /// Every log, averaged over [`DEFAULT_AVG_MSEC`], without offsets.
    fn default() -> LogOptions {
        LogOptions {
            avg_msec: DEFAULT_AVG_MSEC,
            bw: true,
            iops: true,
            lat: true,
            offset: false,
        }
    }
}

impl LogOptions {
    /// Whether the logs are fio's per-I/O ones (`log_avg_msec=0`).
    pub fn per_io(&self) -> bool {
        self.avg_msec == 0
    }

    /// The logs written, in [`LOG_KINDS`] order.
    pub fn kinds(&self) -> Vec<&'static str> {
        let on = [self.bw, self.iops, self.lat, self.lat, self.lat];
        LOG_KINDS
            .into_iter()
            .zip(on)
            .filter_map(|(k, on)| on.then_some(k))
            .collect()
    }
}

/// The text of fio log `kind` (one of [`LOG_KINDS`]) of `log`, with fio's offset column (0 for
/// an averaged entry) when `offset`.
pub fn log_text(log: &WindowLog, kind: &str, offset: bool) -> String {
    let mut s = String::new();
    let window_ns = u128::from(log.window_ns);
    let offset = if offset { "0, " } else { "" };
    for (i, row) in log.rows.iter().enumerate() {
        let end_ms = (i as u128 + 1) * window_ns / 1_000_000;
        for (ddir, w) in row.iter().enumerate() {
            if w.ios == 0 {
                continue;
            }
            let value = window_value(w, kind, window_ns);
            let _ = writeln!(s, "{end_ms}, {value}, {ddir}, 0, {offset}0");
        }
    }
    s
}

/// One window's value for log `kind`: KiB/s, I/Os per second, or a mean latency in ns
/// (truncated to integers, as fio prints them).
fn window_value(w: &WindowSums, kind: &str, window_ns: u128) -> u128 {
    let ios = u128::from(w.ios);
    match kind {
        "bw" => u128::from(w.bytes) * 1_000_000_000 / 1024 / window_ns,
        "iops" => ios * 1_000_000_000 / window_ns,
        "slat" => w.slat_ns / ios,
        "clat" => w.clat_ns / ios,
        _ => w.lat_ns / ios,
    }
}

/// Each run's folder name, in run order, for runs labelled `labels`: the label made safe
/// ([`safe_dir_name`]); two labels that make the same name (`a/b` and `a_b`) get `-2`, `-3`,
/// … after the later one.
pub fn run_dirs<'a>(labels: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut used: Vec<String> = Vec::new();
    for label in labels {
        let base = safe_dir_name(label);
        let mut name = base.clone();
        for n in 2.. {
            if !used.contains(&name) {
                break;
            }
            name = format!("{base}-{n}");
        }
        used.push(name);
    }
    used
}

/// `<prefix>_<kind>.1.log`, the name fio gives log `kind` of job 1.
pub fn log_name(prefix: &str, kind: &str) -> String {
    format!("{prefix}_{kind}.1.log")
}

/// Every file of `--fio-dir` built in memory, as (path relative to the directory, bytes), in
/// run order: per run its JSON, then its averaged logs when the report carries them (the
/// per-I/O logs of `log_avg_msec=0` are streamed to their files during the run instead:
/// [`super::fiolog`]), in folders named by [`run_dirs`].
pub fn files(report: &Report) -> std::io::Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut out = Vec::new();
    let prefix = log_prefix(&report.job_options);
    let opts = report.fio_log_options;
    let dirs = run_dirs(report.policies.iter().map(|p| p.policy.as_str()));
    for (i, (p, name)) in report.policies.iter().zip(dirs).enumerate() {
        let dir = PathBuf::from(name);
        let mut json = Vec::new();
        super::json::render_run_plus(report, i, &mut json)?;
        out.push((dir.join(json_name(&report.job_options)), json));
        if let Some(Some(log)) = report.fio_logs.get(i) {
            let averaged = if opts.per_io() { vec![] } else { opts.kinds() };
            for kind in averaged {
                let text = log_text(log, kind, opts.offset);
                out.push((dir.join(log_name(&prefix, kind)), text.into_bytes()));
            }
            if let Some(hist) = &log.hist {
                let text = hist.text(report.job_options.bs_bytes);
                out.push((
                    dir.join(format!("{prefix}_clat_hist.1.log")),
                    text.into_bytes(),
                ));
            }
        }
        hdr_files(p, &dir, &prefix, &mut out)?;
    }
    Ok(out)
}

/// HdrHistogram's files of run `p` ([`super::hdr`]): a `.hgrm` per direction with I/O and
/// one `.hlog` holding them all; none when no direction has I/O.
fn hdr_files(
    p: &super::PolicyReport,
    dir: &std::path::Path,
    prefix: &str,
    out: &mut Vec<(PathBuf, Vec<u8>)>,
) -> std::io::Result<()> {
    let mut tagged = Vec::new();
    for d in &p.directions {
        let name = match d.direction {
            super::Direction::Read => "read",
            super::Direction::Write => "write",
        };
        if let Some(h) = super::hdr::histogram(&d.clat) {
            let hgrm = super::hdr::hgrm(&h).into_bytes();
            out.push((dir.join(format!("{prefix}_clat_{name}.hgrm")), hgrm));
            tagged.push((name, h));
        }
    }
    if !tagged.is_empty() {
        let refs: Vec<(&str, &hdrhistogram::Histogram<u64>)> =
            tagged.iter().map(|(n, h)| (*n, h)).collect();
        let log = super::hdr::hlog(&refs, p.measured_ns)?;
        out.push((dir.join(format!("{prefix}_clat.hlog")), log));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_become_one_safe_directory_name() {
        assert_eq!(safe_dir_name("split"), "split");
        assert_eq!(safe_dir_name("aes-ni/split"), "aes-ni_split");
        assert_eq!(safe_dir_name("a b:c"), "a_b_c");
        assert_eq!(safe_dir_name(".."), "run__");
        assert_eq!(safe_dir_name(""), "run");
        assert_eq!(safe_dir_name("v1.2+x"), "v1.2+x");
    }

    /// One folder per run even when two labels make the same name; a JSON and HdrHistogram's
    /// files in each, fio's logs only where the report carries them, the histogram log only
    /// where it was asked for.
    #[test]
    fn every_run_gets_its_own_folder() {
        let mut r = crate::report::tests::report();
        r.policies[1].policy = "two/queue".into();
        r.policies[0].policy = "two_queue".into();
        let mut log = WindowLog::new(500_000_000, 4);
        log.hist = Some(crate::stats::histlog::HistLog::new(1_000_000_000, 0));
        r.fio_logs = vec![None, Some(log)];
        let files = files(&r).unwrap();
        let names: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
        let p = "randrw-iodepth-8-numjobs-1";
        let hdr = |dir: &str| {
            [
                format!("{dir}/{p}_clat_read.hgrm"),
                format!("{dir}/{p}_clat_write.hgrm"),
                format!("{dir}/{p}_clat.hlog"),
            ]
        };
        let mut want = vec!["two_queue/randrw-8-1.json".to_string()];
        want.extend(hdr("two_queue"));
        want.push("two_queue-2/randrw-8-1.json".to_string());
        want.extend(LOG_KINDS.map(|k| format!("two_queue-2/{p}_{k}.1.log")));
        want.push(format!("two_queue-2/{p}_clat_hist.1.log"));
        want.extend(hdr("two_queue-2"));
        assert_eq!(names, want);
    }

    #[test]
    fn names_follow_fio_plot() {
        let o = JobOptions {
            rw: "randread".into(),
            bs_bytes: 4096,
            iodepth: 64,
            numjobs: 1,
        };
        assert_eq!(json_name(&o), "randread-64-1.json");
        assert_eq!(log_prefix(&o), "randread-iodepth-64-numjobs-1");
    }

    /// A real run through the model: the log holds the measured windows' I/Os, and the
    /// disk's ticks are the requests' time from insertion to completion, which for policy
    /// `none` on M/M/1 is the whole latency (mean 1/(μ − λ) = 1.25 ms).
    #[test]
    fn a_run_logs_its_windows_and_its_disk_time() {
        use crate::engine::SimDuration;
        use crate::model::{Recording, crypt::policy, run_replication_with, testing};
        let mut sc = testing::mm1(
            200.0,
            SimDuration::from_ms(1),
            1,
            SimDuration::from_secs(20),
        );
        sc.warmup = SimDuration::from_secs(1);
        let rec = Recording {
            fio_log: true,
            ..Recording::default()
        };
        let obs = run_replication_with(&sc, policy::find("none").unwrap(), 0, rec).obs;
        let log = obs.fio_log.as_deref().expect("asked for");
        assert_eq!(log.window_ns, 500_000_000);
        // 19 measured seconds: 38 windows, or 37 when the run stops before the last tick.
        assert!((37..=38).contains(&log.rows.len()), "{}", log.rows.len());
        let logged: u64 = log.rows.iter().map(|r| r[0].ios).sum();
        let read = &obs.dirs[0];
        assert!(
            logged <= read.ios && logged * 38 >= read.ios * 36,
            "{logged} of {}",
            read.ios
        );
        assert!(log.rows.iter().all(|r| r[1].ios == 0), "no writes");
        let b = &obs.block;
        assert!(
            b.completed[0].abs_diff(read.ios) <= 2,
            "{:?} vs {}",
            b.completed,
            read.ios
        );
        let mean_ms = b.ticks[0].as_secs_f64() * 1e3 / b.completed[0] as f64;
        assert!((mean_ms - 1.25).abs() < 0.125, "mean response {mean_ms} ms");
        let lat = read.lat.sum() as f64;
        let ticks = b.ticks[0].as_ns() as f64;
        assert!(
            (ticks - lat).abs() < 0.01 * lat,
            "ticks {ticks} vs lat {lat}"
        );
    }

    /// `log_avg_msec=250`: the log's windows are 250 ms wide, closed by their own events, and
    /// hold the measured I/Os as the 500 ms ones do.
    #[test]
    fn a_run_logs_windows_of_the_asked_width() {
        use crate::engine::SimDuration;
        use crate::model::{Recording, crypt::policy, run_replication_with, testing};
        let mut sc = testing::mm1(200.0, SimDuration::from_ms(1), 1, SimDuration::from_secs(6));
        sc.warmup = SimDuration::from_secs(1);
        let rec = |ms: u64| Recording {
            fio_log: true,
            log_avg_ns: Some(ms * 1_000_000),
            ..Recording::default()
        };
        let info = policy::find("none").unwrap();
        let narrow = run_replication_with(&sc, info, 0, rec(250)).obs;
        let wide = run_replication_with(&sc, info, 0, rec(500)).obs;
        let (n, w) = (narrow.fio_log.unwrap(), wide.fio_log.unwrap());
        assert_eq!((n.window_ns, w.window_ns), (250_000_000, 500_000_000));
        assert!((19..=20).contains(&n.rows.len()), "{}", n.rows.len());
        assert_eq!(
            narrow.dirs[0].ios, wide.dirs[0].ios,
            "nothing simulated changed"
        );
        // Pairs of 250 ms windows add up to the 500 ms ones.
        for (i, row) in w.rows.iter().enumerate().take(n.rows.len() / 2) {
            assert_eq!(row[0].ios, n.rows[2 * i][0].ios + n.rows[2 * i + 1][0].ios);
        }
        let text = log_text(&n, "iops", false);
        assert!(
            text.starts_with("250, ") && text.contains("\n500, "),
            "{text}"
        );
    }

    /// fio's line layout, one line per direction with I/O, values averaged over the window.
    #[test]
    fn logs_are_fio_lines_averaged_per_window() {
        let mut log = WindowLog::new(500_000_000, 16);
        for _ in 0..4 {
            log.record(0, 4096, 1_000, 40_000, 41_000);
        }
        log.record(0, 4096, 2_000, 60_000, 62_000);
        log.record(1, 65536, 0, 1_000_000, 1_000_000);
        log.tick();
        log.tick(); // nothing completed: no line
        log.record(1, 65536, 0, 3_000_000, 3_000_000);
        log.tick();
        assert_eq!(
            log_text(&log, "bw", false),
            "500, 40, 0, 0, 0\n500, 128, 1, 0, 0\n1500, 128, 1, 0, 0\n"
        );
        assert_eq!(
            log_text(&log, "iops", false),
            "500, 10, 0, 0, 0\n500, 2, 1, 0, 0\n1500, 2, 1, 0, 0\n"
        );
        assert_eq!(
            log_text(&log, "clat", false),
            "500, 44000, 0, 0, 0\n500, 1000000, 1, 0, 0\n1500, 3000000, 1, 0, 0\n"
        );
        assert!(log_text(&log, "slat", false).starts_with("500, 1200, 0, 0, 0\n"));
        assert!(log_text(&log, "lat", false).starts_with("500, 45200, 0, 0, 0\n"));
        // log_offset=1: fio's offset column, 0 for an averaged entry.
        assert!(log_text(&log, "lat", true).starts_with("500, 45200, 0, 0, 0, 0\n"));
    }
}
