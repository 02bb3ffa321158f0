//! What one simulation run measured: the model fills these, `report` turns them into text.
//!
//! Everything here has a fixed size whatever the simulated duration: latencies go into
//! histograms, per-interval bandwidth into running summaries.

use crate::engine::{SimDuration, SimTime};
use crate::stats::{Histogram, Running};
use serde::Serialize;

/// Stages a bio's time is split into ("where the time went").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Stage {
    /// Waiting in a dm-crypt queue (kcryptd or the policy's lists) or for the crypt thread.
    CryptQueue,
    /// Being encrypted or decrypted (CPU time, stretched by CPU sharing, or the async engine).
    CryptService,
    /// kcryptd_io hop: waiting for and running the io thread before the clone is submitted.
    IoQueue,
    /// Sleeping for a free request in the block layer's pool (or blocked on the crypto backlog).
    PoolSleep,
    /// Inserted in the elevator until dispatched to the device (plug and scheduler wait).
    BlockQueue,
    /// On the device.
    Device,
    /// Anything else (submission before dm-crypt accepted the bio, inline softirq wait).
    Other,
}

impl Stage {
    /// All stages in report order.
    pub const ALL: [Stage; 7] = [
        Stage::CryptQueue,
        Stage::CryptService,
        Stage::IoQueue,
        Stage::PoolSleep,
        Stage::BlockQueue,
        Stage::Device,
        Stage::Other,
    ];
    /// Number of stages.
    pub const COUNT: usize = Self::ALL.len();
    /// Index into per-stage arrays.
    pub fn index(self) -> usize {
        self as usize
    }
    /// Short label for reports.
    pub fn label(self) -> &'static str {
        match self {
            Stage::CryptQueue => "crypt queue wait",
            Stage::CryptService => "crypt service",
            Stage::IoQueue => "kcryptd_io hop",
            Stage::PoolSleep => "request-pool sleep",
            Stage::BlockQueue => "block queue wait",
            Stage::Device => "device service",
            Stage::Other => "other",
        }
    }
}

/// Per-direction measurements (fio's read or write section).
#[derive(Debug, Clone, Serialize)]
pub struct DirectionObs {
    /// Completed I/Os counted (issued after the warm-up).
    pub ios: u64,
    /// Bytes of those I/Os.
    pub bytes: u64,
    /// Submission latency: issue until dm-crypt (or the block layer, without dm-crypt) accepted it.
    pub slat: Histogram,
    /// Completion latency: from acceptance to completion.
    pub clat: Histogram,
    /// Total latency: slat + clat.
    pub lat: Histogram,
    /// Bandwidth per 500 ms sample interval, KiB/s.
    pub bw_kib_s: Running,
    /// IOPS per 500 ms sample interval.
    pub iops: Running,
    /// Time per stage, one histogram each, indexed by [`Stage::index`].
    pub stages: Vec<Histogram>,
    /// I/Os issued (counted at issue, after the warm-up).
    pub issued: u64,
    /// Open-loop arrivals dropped because the job had `iodepth` in flight.
    pub dropped: u64,
}

impl DirectionObs {
    /// Nothing measured yet.
    pub fn new() -> Self {
        DirectionObs {
            ios: 0,
            bytes: 0,
            slat: Histogram::new(),
            clat: Histogram::new(),
            lat: Histogram::new(),
            bw_kib_s: Running::new(),
            iops: Running::new(),
            stages: (0..Stage::COUNT).map(|_| Histogram::new()).collect(),
            issued: 0,
            dropped: 0,
        }
    }
}

impl Default for DirectionObs {
    fn default() -> Self {
        Self::new()
    }
}

/// Time spent in `congestion_wait` on one class's queue.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CongestionWaitObs {
    /// Waits started.
    pub waits: u64,
    /// Waits that ended early because the class's congestion cleared.
    pub woken_early: u64,
    /// Total time slept.
    pub total: SimDuration,
}

/// Block-layer counters for the disk.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BlockObs {
    /// Time each class (SYNC, ASYNC) spent congested.
    pub congested: [SimDuration; 2],
    /// Pool sleeps per class.
    pub pool_sleeps: [u64; 2],
    /// Congestion-clear events per class (every free below the off threshold).
    pub clears: [u64; 2],
    /// Times the queue was unplugged by the timer.
    pub timer_unplugs: u64,
    /// Times the queue was unplugged by reaching the threshold.
    pub threshold_unplugs: u64,
    /// Requests dispatched to the device.
    pub dispatched: u64,
    /// Device busy time (at least one request on it).
    pub device_busy: SimDuration,
}

impl BlockObs {
    /// The counts accumulated since the snapshot `earlier` (the warm-up's end).
    pub fn since(&self, earlier: &BlockObs) -> BlockObs {
        let pair = |a: [u64; 2], b: [u64; 2]| [a[0] - b[0], a[1] - b[1]];
        BlockObs {
            congested: [
                self.congested[0].saturating_sub(earlier.congested[0]),
                self.congested[1].saturating_sub(earlier.congested[1]),
            ],
            pool_sleeps: pair(self.pool_sleeps, earlier.pool_sleeps),
            clears: pair(self.clears, earlier.clears),
            timer_unplugs: self.timer_unplugs - earlier.timer_unplugs,
            threshold_unplugs: self.threshold_unplugs - earlier.threshold_unplugs,
            dispatched: self.dispatched - earlier.dispatched,
            device_busy: self.device_busy.saturating_sub(earlier.device_busy),
        }
    }
}

/// Writer-side counters.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WritebackObs {
    /// Bytes dirtied by buffered writers.
    pub dirtied_bytes: u64,
    /// Bytes written back (completed).
    pub written_back_bytes: u64,
    /// Time buffered writers spent throttled in balance_dirty_pages.
    pub throttled: SimDuration,
}

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum RunEnd {
    /// Reached the horizon.
    Horizon,
    /// Ran out of the event budget: the system is saturated.
    Saturated,
}

/// All measurements of one run of one policy.
#[derive(Debug, Clone, Serialize)]
pub struct RunObs {
    /// Policy name.
    pub policy: String,
    /// Length of the measured window (duration minus warm-up, or less if saturated).
    pub measured: SimDuration,
    /// Reads, then writes.
    pub dirs: [DirectionObs; 2],
    /// Share of clat samples per fio latency bucket is computed from these (all directions).
    pub clat_all: Histogram,
    /// Submissions by number of the job's I/Os in flight at submit (fio depth buckets 1,2,4,..,>=64).
    pub depth_buckets: [u64; 7],
    /// `congestion_wait` on the SYNC (index 0) and ASYNC (index 1) queues.
    pub congestion_waits: [CongestionWaitObs; 2],
    /// Block-layer counters.
    pub block: BlockObs,
    /// Writeback counters.
    pub writeback: WritebackObs,
    /// CPU busy time per CPU-second: utilisation of the `cpus` pool, 0..=1.
    pub cpu_utilisation: f64,
    /// Crypt queue length: time-average and maximum.
    pub crypt_queue_len_avg: f64,
    /// Maximum crypt queue length seen.
    pub crypt_queue_len_max: u64,
    /// Events the engine processed.
    pub events: u64,
    /// How the run ended.
    pub end: RunEnd,
}

/// One bio a job issued, as an [`IssueTrace`] records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IssueRecord {
    /// When the job issued it.
    pub at: SimTime,
    /// Read or write.
    pub dir: super::bio::Dir,
    /// Byte offset on the device.
    pub offset: u64,
    /// Size, bytes.
    pub bytes: u32,
}

/// The first issues of every fio job of a run, for checking that a policy change leaves the
/// workload's draws alone (common random numbers). Off unless asked for, and bounded: at most
/// `cap` records per job, whatever the run's length.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IssueTrace {
    cap: usize,
    /// Per job (in the world's job order), its first issues in issue order.
    pub jobs: Vec<Vec<IssueRecord>>,
}

impl IssueTrace {
    /// A trace keeping the first `cap` issues of each of `jobs` jobs.
    pub fn new(jobs: usize, cap: usize) -> Self {
        IssueTrace {
            cap,
            jobs: vec![Vec::new(); jobs],
        }
    }

    /// Records an issue of job `job` unless its trace is full.
    pub fn record(&mut self, job: usize, rec: IssueRecord) {
        let t = &mut self.jobs[job];
        if t.len() < self.cap {
            t.push(rec);
        }
    }
}
