//! fio's per-I/O logs (`log_avg_msec=0`, fio's default): one line per completed I/O in each of
//! `<prefix>_{bw,iops,lat,slat,clat}.1.log`, streamed to the run folder while replication 0 of
//! the run is simulated, so nothing of them is kept in memory.
//!
//! The model hands each completed, measured I/O to a sink ([`IoSink`]); [`PerIoLogs`] is the
//! one that formats it as fio 3.33's `flush_samples` does and writes it, through a bounded buffer, into a hidden
//! temporary file per log beside its final name ([`crate::output::StreamFile`]). Only once the
//! whole run has succeeded are the files renamed into place ([`PerIoLogs::commit`]); a failed
//! or interrupted run leaves none behind.
//!
//! A line is fio's `time, value, ddir, bs, prio`, or `time, value, ddir, bs, offset, prio`
//! with `log_offset=1` ([`io_line`]):
//!
//! - `time`: the completion time in ms (truncated), counted from the end of the warm-up as the
//!   averaged logs' times are (fio counts from the job's start);
//! - `value`: lat, slat and clat in ns (as the text report defines them); for bw, the bytes
//!   over the I/O's completion latency as fio's `add_bw_sample` computes it,
//!   `bytes * 1000000 / clat_ns` (integer division, 0 for a zero clat: fio's "KiB/s" of one
//!   I/O is bytes per ms); for iops, 1;
//! - `ddir` 0 for a read, 1 for a write; `bs` the I/O's bytes; `offset` its byte offset on the
//!   device; `prio` 0 (fio's priority bit, without `log_prio`).
//!
//! qsim writes every log's line when the I/O completes, in completion order, so times never
//! decrease (fio writes the slat line when the I/O is submitted).

use super::fiodir::{LogOptions, log_name};
use crate::model::observe::recorder::{IoRecord, IoSink};
use crate::output::StreamFile;
use std::io::{self, Write as _};
use std::path::Path;

/// Appends the line of log `kind` (one of [`super::fiodir::LOG_KINDS`]) for `io` to `out`, with
/// the offset column when `offset`.
pub fn io_line(kind: &str, io: &IoRecord, offset: bool, out: &mut Vec<u8>) {
    let value = match kind {
        "bw" => match io.clat_ns {
            0 => 0,
            clat => u64::from(io.bytes) * 1_000_000 / clat,
        },
        "iops" => 1,
        "slat" => io.slat_ns,
        "clat" => io.clat_ns,
        _ => io.lat_ns,
    };
    let ms = io.time_ns / 1_000_000;
    let _ = write!(out, "{ms}, {value}, {}, {}, ", io.dir, io.bytes);
    if offset {
        let _ = write!(out, "{}, ", io.offset);
    }
    out.extend_from_slice(b"0\n");
}

/// One run's per-I/O logs being written: a [`StreamFile`] per log, the first write error (after
/// which nothing more is written), and the I/Os seen.
#[derive(Debug)]
pub struct PerIoLogs {
    files: Vec<(&'static str, StreamFile)>,
    offset: bool,
    error: Option<io::Error>,
    ios: u64,
    line: Vec<u8>,
}

impl PerIoLogs {
    /// Starts the logs `opts` asks for in the existing folder `dir`, named after `prefix`.
    pub fn create(dir: &Path, prefix: &str, opts: &LogOptions) -> io::Result<PerIoLogs> {
        let files = opts
            .kinds()
            .into_iter()
            .map(|kind| Ok((kind, StreamFile::create(&dir.join(log_name(prefix, kind)))?)))
            .collect::<io::Result<Vec<_>>>()?;
        Ok(PerIoLogs {
            files,
            offset: opts.offset,
            error: None,
            ios: 0,
            line: Vec::with_capacity(96),
        })
    }

    /// A set whose files could not be started: it writes nothing, and its commit returns
    /// `error`.
    pub fn failed(error: io::Error) -> PerIoLogs {
        PerIoLogs {
            files: Vec::new(),
            offset: false,
            error: Some(error),
            ios: 0,
            line: Vec::new(),
        }
    }

    /// I/Os handed over so far (lines in each log).
    pub fn ios(&self) -> u64 {
        self.ios
    }

    /// Renames every log into place, or returns the first error met while writing them (the
    /// temporary files are then removed).
    pub fn commit(self) -> io::Result<()> {
        if let Some(e) = self.error {
            return Err(e);
        }
        for (_, f) in self.files {
            f.commit()?;
        }
        Ok(())
    }

    /// The final paths of the logs.
    pub fn paths(&self) -> Vec<&Path> {
        self.files.iter().map(|(_, f)| f.path()).collect()
    }
}

impl IoSink for PerIoLogs {
    fn completed(&mut self, io: &IoRecord) {
        if self.error.is_some() {
            return;
        }
        self.ios += 1;
        for (kind, f) in &mut self.files {
            self.line.clear();
            io_line(kind, io, self.offset, &mut self.line);
            if let Err(e) = f.write_all(&self.line) {
                self.error = Some(e);
                return;
            }
        }
    }

    /// The run ended: every log is flushed, synced and closed, so a finished run waiting for
    /// the others holds no buffer or open file.
    fn ended(&mut self) {
        for (_, f) in &mut self.files {
            if let Err(e) = f.close() {
                self.error.get_or_insert(e);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io() -> IoRecord {
        IoRecord {
            time_ns: 1_234_999_999,
            dir: 1,
            bytes: 4096,
            offset: 8192,
            slat_ns: 1_000,
            clat_ns: 40_000,
            lat_ns: 41_000,
        }
    }

    fn line(kind: &str, io: &IoRecord, offset: bool) -> String {
        let mut out = Vec::new();
        io_line(kind, io, offset, &mut out);
        String::from_utf8(out).unwrap()
    }

    /// fio's columns: time in ms (truncated), the value, ddir, the real block size, the
    /// offset with log_offset=1, priority 0; bw as fio's add_bw_sample computes it.
    #[test]
    fn a_line_is_fios_per_io_entry() {
        let io = io();
        assert_eq!(line("lat", &io, false), "1234, 41000, 1, 4096, 0\n");
        assert_eq!(line("slat", &io, false), "1234, 1000, 1, 4096, 0\n");
        assert_eq!(line("clat", &io, true), "1234, 40000, 1, 4096, 8192, 0\n");
        assert_eq!(line("iops", &io, false), "1234, 1, 1, 4096, 0\n");
        // 4096 B in 40 µs: 4096 * 1e6 / 40000 = 102400 (bytes per ms).
        assert_eq!(line("bw", &io, false), "1234, 102400, 1, 4096, 0\n");
        let instant = IoRecord { clat_ns: 0, ..io };
        assert_eq!(line("bw", &instant, false), "1234, 0, 1, 4096, 0\n");
    }

    /// Lines go to the temporary files, which only a commit renames into place; an
    /// uncommitted set leaves nothing behind.
    #[test]
    fn logs_appear_only_when_committed() {
        let dir = std::env::temp_dir().join(format!("qsim-fiolog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let opts = LogOptions {
            avg_msec: 0,
            bw: false,
            iops: false,
            ..LogOptions::default()
        };
        let mut logs = PerIoLogs::create(&dir, "p", &opts).unwrap();
        logs.completed(&io());
        logs.completed(&IoRecord {
            time_ns: 2_000_000_000,
            ..io()
        });
        assert_eq!(logs.ios(), 2);
        let paths: Vec<_> = logs.paths().iter().map(|p| p.to_path_buf()).collect();
        assert_eq!(paths.len(), 3, "lat, slat, clat");
        assert!(paths.iter().all(|p| !p.exists()));
        drop(logs);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing left");
        let mut logs = PerIoLogs::create(&dir, "p", &opts).unwrap();
        logs.completed(&io());
        logs.commit().unwrap();
        let lat = std::fs::read_to_string(dir.join("p_lat.1.log")).unwrap();
        assert_eq!(lat, "1234, 41000, 1, 4096, 0\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A real run through the model: the sink gets exactly one line per completed, measured
    /// I/O of the run (the run's own count), in completion order, and the run measures what
    /// it measures without one.
    #[test]
    fn one_line_per_completed_io_of_the_run() {
        use crate::engine::SimDuration;
        use crate::model::{Recording, Valve, crypt::policy, run_replication_logged, testing};
        let mut sc = testing::mm1(200.0, SimDuration::from_ms(1), 1, SimDuration::from_secs(5));
        sc.warmup = SimDuration::from_secs(1);
        let dir = std::env::temp_dir().join(format!("qsim-fiolog-run-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let logs = PerIoLogs::create(&dir, "p", &LogOptions::default()).unwrap();
        let info = policy::find("none").unwrap();
        let r = run_replication_logged(
            &sc,
            info,
            0,
            Recording::default(),
            Valve::OPEN,
            Some(Box::new(logs)),
        );
        let sink: Box<dyn std::any::Any> = r.io_sink.expect("handed back");
        let logs = sink.downcast::<PerIoLogs>().expect("our sink");
        let ios = r.obs.dirs[0].ios + r.obs.dirs[1].ios;
        assert!(ios > 500, "{ios}");
        assert_eq!(logs.ios(), ios);
        logs.commit().unwrap();
        let lat = std::fs::read_to_string(dir.join("p_lat.1.log")).unwrap();
        assert_eq!(lat.lines().count() as u64, ios);
        let times: Vec<u64> = lat
            .lines()
            .map(|l| l.split(", ").next().unwrap().parse().unwrap())
            .collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
        assert!(*times.last().unwrap() < 4_000, "after the warm-up's end");
        let without = crate::model::run_replication(&sc, info, 0);
        assert_eq!(without.obs.dirs[0].ios, r.obs.dirs[0].ios);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
