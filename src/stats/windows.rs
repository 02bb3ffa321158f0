//! Per-interval sums of completed I/Os, two directions side by side, in a bounded log: what
//! fio's `write_bw_log`, `write_iops_log` and `write_lat_log` with `log_avg_msec` write, kept
//! as sums so any window can be averaged exactly.
//!
//! The log starts with windows of the sampling interval it is given (the recorder's 500 ms, or
//! fio's `log_avg_msec`).
//! When it holds [`WindowLog::cap`] windows, neighbouring pairs are added into one and the
//! window doubles, so its memory never exceeds `cap` rows whatever the simulated duration
//! (a run of up to `cap` × interval keeps its first resolution). A partial window at the end
//! of a run is dropped, as the bandwidth sampler drops it.

use serde::{Deserialize, Serialize};

/// Rows a log keeps before it halves its resolution: 2048 windows of 500 ms is 17 minutes.
pub const DEFAULT_CAP: usize = 2048;

/// Completions of one direction in one window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowSums {
    /// I/Os completed.
    pub ios: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Sum of their submission latencies, ns.
    pub slat_ns: u128,
    /// Sum of their completion latencies, ns.
    pub clat_ns: u128,
    /// Sum of their total latencies, ns.
    pub lat_ns: u128,
}

impl WindowSums {
    fn add(&mut self, o: &WindowSums) {
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.slat_ns += o.slat_ns;
        self.clat_ns += o.clat_ns;
        self.lat_ns += o.lat_ns;
    }
}

/// A bounded log of equal windows, each with its reads' and writes' [`WindowSums`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowLog {
    /// Width of a window, ns: the sampling interval times a power of two.
    pub window_ns: u64,
    /// Most windows kept (even, at least 2, so halving pairs every row).
    pub cap: usize,
    /// Closed windows in time order: `rows[i]` ends at `(i + 1) * window_ns` after the log's
    /// start; `[reads, writes]`.
    pub rows: Vec<[WindowSums; 2]>,
    /// The window being filled (not serialised).
    #[serde(skip)]
    open: [WindowSums; 2],
    /// Sampling intervals closed into the open window so far, and how many make one window.
    #[serde(skip)]
    ticks: (u64, u64),
    /// fio's histogram log of the same I/Os, when asked for (`log_hist_msec`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hist: Option<super::histlog::HistLog>,
}

impl WindowLog {
    /// An empty log sampled every `interval_ns`, keeping at most `cap` windows.
    pub fn new(interval_ns: u64, cap: usize) -> WindowLog {
        WindowLog {
            window_ns: interval_ns.max(1),
            cap: cap.max(2).next_multiple_of(2),
            rows: Vec::new(),
            open: Default::default(),
            ticks: (0, 1),
            hist: None,
        }
    }

    /// One I/O of direction `dir` (0 reads, 1 writes) completed in the open window.
    pub fn record(&mut self, dir: usize, bytes: u64, slat_ns: u64, clat_ns: u64, lat_ns: u64) {
        let w = &mut self.open[dir];
        w.ios += 1;
        w.bytes += bytes;
        w.slat_ns += u128::from(slat_ns);
        w.clat_ns += u128::from(clat_ns);
        w.lat_ns += u128::from(lat_ns);
    }

    /// Forgets the open window's I/Os (the log restarts, e.g. when the warm-up ends).
    pub fn restart(&mut self) {
        self.open = Default::default();
        self.ticks.0 = 0;
    }

    /// A sampling interval ended: the open window closes once it spans a whole window.
    pub fn tick(&mut self) {
        self.ticks.0 += 1;
        if self.ticks.0 < self.ticks.1 {
            return;
        }
        self.rows.push(std::mem::take(&mut self.open));
        self.ticks.0 = 0;
        if self.rows.len() == self.cap {
            self.halve();
        }
    }

    /// Adds neighbouring windows pairwise: half the rows, twice the width.
    fn halve(&mut self) {
        let rows: Vec<[WindowSums; 2]> = self
            .rows
            .chunks(2)
            .map(|pair| {
                let mut sum = pair[0];
                if let Some(b) = pair.get(1) {
                    sum[0].add(&b[0]);
                    sum[1].add(&b[1]);
                }
                sum
            })
            .collect();
        self.rows = rows;
        self.window_ns *= 2;
        self.ticks.1 *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_close_on_ticks_and_keep_sums() {
        let mut log = WindowLog::new(500, 8);
        log.record(0, 4096, 1, 10, 11);
        log.record(0, 4096, 3, 30, 33);
        log.record(1, 8192, 0, 100, 100);
        log.tick();
        log.tick();
        assert_eq!(log.rows.len(), 2);
        let r = log.rows[0][0];
        assert_eq!(
            (r.ios, r.bytes, r.slat_ns, r.clat_ns, r.lat_ns),
            (2, 8192, 4, 40, 44)
        );
        assert_eq!(log.rows[0][1].ios, 1);
        assert_eq!(log.rows[1], [WindowSums::default(); 2]);
        // An unclosed window is not a row.
        log.record(0, 1, 1, 1, 1);
        assert_eq!(log.rows.len(), 2);
        log.restart();
        log.tick();
        assert_eq!(log.rows[2][0].ios, 0);
    }

    /// Memory stays bounded: at the cap, pairs merge and the window doubles, and every I/O
    /// is still counted once.
    #[test]
    fn a_full_log_halves_its_resolution() {
        let mut log = WindowLog::new(500, 4);
        for i in 0..1000u64 {
            log.record(0, 1, 0, i, i);
            log.tick();
            assert!(log.rows.len() < 4);
        }
        let kept: u64 = log.rows.iter().map(|r| r[0].ios).sum();
        let window = log.window_ns / 500;
        assert!(window.is_power_of_two() && window >= 256, "{window}");
        // Every kept row is a whole window of `window` ticks.
        assert!(log.rows.iter().all(|r| r[0].ios == window));
        assert_eq!(kept, log.rows.len() as u64 * window);
        assert!(log.rows.len() as u64 * window <= 1000);
    }
}
