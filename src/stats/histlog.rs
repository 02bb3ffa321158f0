//! fio's histogram log (`write_hist_log` with `log_hist_msec`): per window of completion time,
//! each direction's clat counts in fio's 1856 buckets ([`super::histogram`]), summed in groups
//! of `2^log_hist_coarseness` when written. fio's `tools/hist/fiologparser_hist.py` reads it.
//!
//! A window's counts are kept sparse (only non-zero buckets), so a run of a few busy buckets
//! costs a few bytes per window. At [`HIST_CAP`] windows neighbouring pairs are added into one
//! and the window doubles, as [`super::windows::WindowLog`] does, so memory stays bounded
//! whatever the simulated duration. A partial window at the end of a run is written if it holds
//! any I/O, as fio writes its last histogram at a job's end ([`HistLog::finish`]).

use super::histogram::{PLAT_NR, bucket_index};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Windows a histogram log keeps before it halves its resolution (each holds at most 1856
/// non-zero buckets per direction, 8 bytes each).
pub const HIST_CAP: usize = 512;

/// Most `log_hist_coarseness` fio accepts: 2^6 = 64 buckets summed into one column.
pub const MAX_COARSENESS: u32 = 6;

/// A window's non-zero buckets of one direction: `(bucket index, count)`, ascending.
pub type SparseBins = Vec<(u16, u32)>;

/// A bounded log of equal windows of completion time, each with its reads' and writes' clat
/// buckets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistLog {
    /// Width of a window, ns: `log_hist_msec` times a power of two.
    pub window_ns: u64,
    /// fio's `log_hist_coarseness`: 2^c buckets make one written column.
    pub coarseness: u32,
    /// Closed windows in time order, `[reads, writes]`; `rows[i]` ends at
    /// `(i + 1) * window_ns` after the log's origin.
    pub rows: Vec<[SparseBins; 2]>,
    /// When the log started (the end of the warm-up), ns of simulated time.
    #[serde(skip)]
    origin_ns: u64,
    /// The open window's counts, reads then writes (dense; empty once deserialised).
    #[serde(skip)]
    open: Vec<u32>,
}

impl HistLog {
    /// An empty log of `window_ns` windows written at `coarseness` (capped at
    /// [`MAX_COARSENESS`]), starting at simulated time 0.
    pub fn new(window_ns: u64, coarseness: u32) -> HistLog {
        HistLog {
            window_ns: window_ns.max(1),
            coarseness: coarseness.min(MAX_COARSENESS),
            rows: Vec::new(),
            origin_ns: 0,
            open: vec![0; 2 * PLAT_NR],
        }
    }

    /// Forgets everything and starts again at `now_ns` (the end of the warm-up).
    pub fn restart(&mut self, now_ns: u64) {
        self.rows.clear();
        self.open.iter_mut().for_each(|c| *c = 0);
        self.origin_ns = now_ns;
    }

    /// An I/O of direction `dir` (0 reads, 1 writes) completed at `now_ns` after `clat_ns`.
    pub fn record(&mut self, dir: usize, clat_ns: u64, now_ns: u64) {
        while now_ns >= self.open_end() {
            self.close();
        }
        if let Some(c) = self.open.get_mut(dir * PLAT_NR + bucket_index(clat_ns)) {
            *c = c.saturating_add(1);
        }
    }

    /// The run ended at `now_ns`: the windows before it close, and the open one too when it
    /// holds any I/O (fio also writes its last, partial histogram at the job's end); its line
    /// carries the window's nominal end.
    pub fn finish(&mut self, now_ns: u64) {
        while now_ns >= self.open_end() {
            self.close();
        }
        if self.open.iter().any(|&c| c > 0) {
            self.close();
        }
    }

    /// The end of the open window, ns of simulated time.
    fn open_end(&self) -> u64 {
        let closed = self.rows.len() as u64 + 1;
        self.origin_ns
            .saturating_add(closed.saturating_mul(self.window_ns))
    }

    /// Closes the open window into a row (halving the log when it is full).
    fn close(&mut self) {
        let sparse = |counts: &[u32]| -> SparseBins {
            let nonzero = counts.iter().enumerate().filter(|(_, c)| **c > 0);
            nonzero.map(|(i, &c)| (i as u16, c)).collect()
        };
        let row = [sparse(&self.open[..PLAT_NR]), sparse(&self.open[PLAT_NR..])];
        self.rows.push(row);
        self.open.iter_mut().for_each(|c| *c = 0);
        if self.rows.len() >= HIST_CAP {
            self.halve();
        }
    }

    /// Adds neighbouring windows pairwise: half the rows, twice the width.
    fn halve(&mut self) {
        let rows = std::mem::take(&mut self.rows);
        let mut it = rows.into_iter();
        while let Some(mut a) = it.next() {
            if let Some(b) = it.next() {
                for d in 0..2 {
                    a[d] = merge(&a[d], &b[d]);
                }
            }
            self.rows.push(a);
        }
        self.window_ns = self.window_ns.saturating_mul(2);
    }

    /// fio's histogram log text: per closed window and direction with I/O, one line
    /// `end_ms, ddir, bs, c0, c1, …` with `1856 >> coarseness` columns.
    pub fn text(&self, bs: u64) -> String {
        let mut s = String::new();
        let group = 1usize << self.coarseness;
        let mut columns = vec![0u64; PLAT_NR / group];
        for (i, row) in self.rows.iter().enumerate() {
            let end_ms = (i as u128 + 1) * u128::from(self.window_ns) / 1_000_000;
            for (ddir, bins) in row.iter().enumerate() {
                if bins.is_empty() {
                    continue;
                }
                columns.iter_mut().for_each(|c| *c = 0);
                for &(idx, count) in bins {
                    columns[usize::from(idx) / group] += u64::from(count);
                }
                let _ = write!(s, "{end_ms}, {ddir}, {bs}");
                for c in &columns {
                    let _ = write!(s, ", {c}");
                }
                s.push('\n');
            }
        }
        s
    }
}

/// The sum of two sparse bucket lists, ascending.
fn merge(a: &[(u16, u32)], b: &[(u16, u32)]) -> SparseBins {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(&(x, c)), Some(&(y, d))) if x == y => {
                out.push((x, c.saturating_add(d)));
                i += 1;
                j += 1;
            }
            (Some(&(x, c)), Some(&(y, _))) if x < y => {
                out.push((x, c));
                i += 1;
            }
            (Some(&e), None) => {
                out.push(e);
                i += 1;
            }
            (_, Some(&e)) => {
                out.push(e);
                j += 1;
            }
            (None, None) => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::histogram::bucket_value;

    #[test]
    fn windows_close_by_completion_time_and_write_fio_lines() {
        let mut log = HistLog::new(1_000_000_000, 0);
        log.restart(5_000_000_000);
        log.record(0, 100, 5_100_000_000);
        log.record(0, 100, 5_200_000_000);
        log.record(1, 38_144, 5_900_000_000);
        // Nothing in the second second; the third closes both.
        log.record(0, 100, 7_500_000_000);
        assert_eq!(log.rows.len(), 2);
        // The run's end closes the partial third window, which holds an I/O.
        let mut ended = log.clone();
        ended.finish(7_600_000_000);
        assert_eq!(ended.rows.len(), 3);
        assert_eq!(ended.rows[2][0], [(100, 1)]);
        assert_eq!(log.rows[0][0], [(100, 2)]);
        assert!(log.rows[1][0].is_empty() && log.rows[1][1].is_empty());
        let text = log.text(4096);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "no line for an idle direction or window");
        let read: Vec<u64> = lines[0].split(", ").map(|v| v.parse().unwrap()).collect();
        assert_eq!(&read[..3], [1000, 0, 4096]);
        assert_eq!(read.len(), 3 + PLAT_NR);
        assert_eq!(read[3 + 100], 2);
        let write: Vec<u64> = lines[1].split(", ").map(|v| v.parse().unwrap()).collect();
        assert_eq!(
            bucket_value(write[3..].iter().position(|&c| c == 1).unwrap()),
            38_144
        );
    }

    #[test]
    fn coarseness_sums_neighbouring_buckets() {
        let mut log = HistLog::new(1_000_000, 2);
        for ns in [0, 1, 2, 3, 4] {
            log.record(0, ns, 0);
        }
        log.record(0, 0, 1_000_000);
        let text = log.text(0);
        let cols: Vec<u64> = text
            .trim()
            .split(", ")
            .map(|v| v.parse().unwrap())
            .collect();
        assert_eq!(cols.len(), 3 + PLAT_NR / 4);
        assert_eq!(&cols[3..5], [4, 1]);
    }

    /// Memory stays bounded: at the cap pairs merge, the window doubles, no count is lost.
    #[test]
    fn a_full_log_halves_its_resolution() {
        let mut log = HistLog::new(1_000, 0);
        for i in 0..10_000u64 {
            log.record(0, i % 300, i * 1_000);
            assert!(log.rows.len() < HIST_CAP);
        }
        let kept: u64 = log
            .rows
            .iter()
            .flat_map(|r| &r[0])
            .map(|&(_, c)| u64::from(c))
            .sum();
        let per_row = log.window_ns / 1_000;
        assert!(per_row.is_power_of_two() && per_row >= 16, "{per_row}");
        assert_eq!(kept, log.rows.len() as u64 * per_row);
        assert!(
            log.rows
                .iter()
                .all(|r| r[0].windows(2).all(|w| w[0].0 < w[1].0))
        );
    }
}
