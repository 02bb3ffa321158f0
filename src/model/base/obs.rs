//! What one simulation run measured: the model fills these, `report` turns them into text.
//!
//! Everything here has a fixed size whatever the simulated duration: latencies go into
//! histograms, per-interval bandwidth into running summaries.

use crate::engine::{SimDuration, SimTime};
use crate::stats::{Histogram, Running};
use serde::{Deserialize, Serialize};

/// Stages a bio's time is split into ("where the time went").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stage {
    /// Allocating page-cache pages before the I/O: the slow path, direct reclaim and its
    /// congestion waits (only with a `memory:` section and buffered readers).
    DirectReclaim,
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
    pub const ALL: [Stage; 8] = [
        Stage::DirectReclaim,
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
    /// Whether only the memory model records time in this stage: reports leave its row out
    /// when a run has no `memory:` section and nothing landed in it, so output without a
    /// memory model reads as before the stage existed.
    pub fn needs_memory_model(self) -> bool {
        matches!(self, Stage::DirectReclaim)
    }
    /// Short label for reports.
    pub fn label(self) -> &'static str {
        match self {
            Stage::DirectReclaim => "direct reclaim",
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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
            // The report reads a stage's count, mean, 99th percentile and sum, never its spread.
            stages: (0..Stage::COUNT)
                .map(|_| Histogram::counts_only())
                .collect(),
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
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CongestionWaitObs {
    /// Waits started.
    pub waits: u64,
    /// Waits that ended early because the class's congestion cleared.
    pub woken_early: u64,
    /// Total time slept.
    pub total: SimDuration,
}

/// Block-layer counters for the disk.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
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
    /// Requests the device completed, reads then writes (the disk's `ios` in
    /// `/proc/diskstats`).
    pub completed: [u64; 2],
    /// Time those requests spent in the request queue and on the device, from insertion to
    /// completion, summed, reads then writes (the disk's read and write `ticks`).
    pub ticks: [SimDuration; 2],
    /// CFQ's estimates of whether the disk queues commands (`cfq_update_hw_tag`), then how
    /// many of them found it not queueing (`hw_tag` cleared).
    pub ncq_estimates: [u64; 2],
    /// CFQ slices handed to a close cooperator instead of idling (`cfq_close_cooperator`),
    /// then preemptions of an idling queue by a close request (`cfq_rq_close`).
    pub cfq_coop: [u64; 2],
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
            completed: pair(self.completed, earlier.completed),
            ticks: [
                self.ticks[0].saturating_sub(earlier.ticks[0]),
                self.ticks[1].saturating_sub(earlier.ticks[1]),
            ],
            ncq_estimates: pair(self.ncq_estimates, earlier.ncq_estimates),
            cfq_coop: pair(self.cfq_coop, earlier.cfq_coop),
        }
    }
}

/// Writer-side counters.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WritebackObs {
    /// Bytes dirtied by buffered writers.
    pub dirtied_bytes: u64,
    /// Bytes written back (completed).
    pub written_back_bytes: u64,
    /// Time buffered writers spent throttled in balance_dirty_pages.
    pub throttled: SimDuration,
}

/// One `page allocation failure` as the kernel would log it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocFailure {
    /// When it happened.
    pub at: SimTime,
    /// Allocation order.
    pub order: u32,
    /// Free pages in the zone at that moment.
    pub free: u64,
}

/// Time in `congestion_wait` (or `wait_iff_congested`) by one kind of caller, per class.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CallerWaits {
    /// SYNC (index 0) and ASYNC (index 1) queues.
    pub class: [CongestionWaitObs; 2],
    /// `wait_iff_congested` calls that returned at once (nothing congested).
    pub skipped: u64,
}

/// What the memory model measured (docs/model/memory.md §11): GFP_ATOMIC failures, kswapd, direct
/// reclaim, dm-crypt's bounce-page pool. Counters start at the warm-up's end.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryObs {
    /// Pages in the zone.
    pub total_pages: u64,
    /// The zone's `min`, `low` and `high` marks, pages.
    pub min: u64,
    /// `low` mark.
    pub low: u64,
    /// `high` mark.
    pub high: u64,
    /// The order-0 GFP_ATOMIC floor (min with HIGH and HARDER, ≈ 0.375·min), pages.
    pub atomic_floor: u64,
    /// GFP_ATOMIC allocations attempted, by order (index = order, 0..=10).
    pub atomic_attempts: Vec<u64>,
    /// GFP_ATOMIC allocations that failed, by order.
    pub atomic_failures: Vec<u64>,
    /// Sum over failures of the free pages at the failure, by order (mean = sum / failures).
    pub atomic_fail_free_sum: Vec<u64>,
    /// The first failures, as log lines would show them (at most [`MemoryObs::LOG_LINES`]).
    pub failure_log: Vec<AllocFailure>,
    /// Times kswapd was woken from sleep.
    pub kswapd_wakeups: u64,
    /// Time kswapd was awake (balancing, waiting or napping).
    pub kswapd_awake: SimDuration,
    /// Balance passes started (`pageoutrun`).
    pub kswapd_passes: u64,
    /// kswapd's congestion waits.
    pub kswapd_waits: CallerWaits,
    /// Congestion waits kswapd skipped because a zone was below min
    /// (`kswapd_skip_congestion_wait`).
    pub kswapd_skips: u64,
    /// Premature sleeps caught by the 2.6.33 nap: woken during the nap.
    pub low_wmark_hit_quickly: u64,
    /// Premature sleeps caught by the 2.6.33 nap: still below high when about to sleep.
    pub high_wmark_hit_quickly: u64,
    /// Sweeps after which kswapd gave up the requested order and balanced for order 0.
    pub order0_fallbacks: u64,
    /// Pages kswapd scanned and reclaimed.
    pub kswapd_scanned: u64,
    /// Pages kswapd freed.
    pub kswapd_reclaimed: u64,
    /// Direct-reclaim stalls (`allocstall`): allocations that had to reclaim themselves.
    pub direct_stalls: u64,
    /// Length of each stall, from the first failed try to the allocation, ns.
    pub direct_stall: Histogram,
    /// Direct reclaimers' and the allocator's waits (HZ/10 and HZ/50).
    pub direct_waits: CallerWaits,
    /// Pages direct reclaim scanned.
    pub direct_scanned: u64,
    /// Pages direct reclaim freed.
    pub direct_reclaimed: u64,
    /// Dirty pages reclaim sent to writeback (pageout).
    pub pageout_pages: u64,
    /// Bounce pages taken from the zone on the mempool's first try.
    pub bounce_from_zone: u64,
    /// Bounce pages taken from the `page_pool` reserve.
    pub bounce_from_reserve: u64,
    /// Times a crypt thread slept on the empty `page_pool`.
    pub mempool_waits: u64,
    /// Time crypt threads slept on the `page_pool`.
    pub mempool_wait_time: SimDuration,
    /// Partial write clones submitted for lack of bounce pages (each followed by an HZ/100 nap).
    pub partial_clones: u64,
    /// Time crypt threads spent in those HZ/100 naps.
    pub partial_nap_time: SimDuration,
    /// Fewest free pages seen.
    pub free_min_seen: u64,
    /// Time-average of free pages.
    pub free_avg: f64,
    /// Time the zone spent below `min`.
    pub below_min: SimDuration,
    /// Page states at the end: clean cache, dirty, under writeback, bounce, atomic buffers.
    pub end_pages: PageStates,
    /// Anonymous memory and swap (all zero without swap or fake-gitk processes).
    pub swap: SwapObs,
    /// GFP_ATOMIC failures the kernel log would show: the "page allocation failure" message
    /// passes `printk_ratelimit()` (10 per 5 s), so a storm logs fewer than it fails.
    #[serde(default)]
    pub atomic_failures_logged: u64,
    /// The TCP receive paths, in `memory.atomic` order (none without a `from:` reader).
    #[serde(default)]
    pub rx: Vec<RxObs>,
}

/// What one TCP receive path measured (docs/model/memory.md §7a). Counters start at the
/// warm-up's end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RxObs {
    /// The stream's name.
    pub name: String,
    /// Segments queued on the socket.
    pub segments: u64,
    /// Frames the NIC dropped for want of a filled descriptor.
    pub ring_drops: u64,
    /// Segments dropped because the socket was over its receive buffer.
    pub socket_drops: u64,
    /// Ring refills that stopped at a failed allocation.
    pub refill_failures: u64,
    /// Times the window closed on the sender.
    pub window_closed: u64,
    /// Time the sender waited for the window, ns.
    pub window_closed_ns: u64,
    /// Most segments waiting in the socket at once.
    pub max_queued: u32,
    /// Most pages held by the ring and the socket together.
    pub max_held_pages: u64,
    /// Largest receive buffer reached, bytes.
    pub max_rcvbuf: u64,
}

impl RxObs {
    /// Pools another replication's counts into `self` (maxima take the larger).
    pub fn merge(&mut self, o: &RxObs) {
        self.segments += o.segments;
        self.ring_drops += o.ring_drops;
        self.socket_drops += o.socket_drops;
        self.refill_failures += o.refill_failures;
        self.window_closed += o.window_closed;
        self.window_closed_ns += o.window_closed_ns;
        self.max_queued = self.max_queued.max(o.max_queued);
        self.max_held_pages = self.max_held_pages.max(o.max_held_pages);
        self.max_rcvbuf = self.max_rcvbuf.max(o.max_rcvbuf);
    }
}

/// What anonymous memory and swap did (docs/model/memory.md, "Anonymous memory and swap").
/// Counters start at the warm-up's end; the levels (`used_end`, `used_peak`) cover the run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SwapObs {
    /// Swap slots (4 KiB pages) of the swap volume; 0 without swap.
    pub total_slots: u64,
    /// Anonymous pages written to swap.
    pub swap_outs: u64,
    /// Swap-out write bios (runs of contiguous slots).
    pub swap_out_bios: u64,
    /// Pages read back from swap (by major faults and their readahead).
    pub swap_ins: u64,
    /// Major faults (each a sync read through dm-crypt that blocks its process).
    pub major_faults: u64,
    /// Touches of a page under swap-out or read ahead: mapped from the swap cache, no I/O.
    pub minor_faults: u64,
    /// Time processes were blocked in major faults (page allocation and read).
    pub fault_time: SimDuration,
    /// Anonymous pages reclaim found with no free swap slot (out of swap).
    pub out_of_swap: u64,
    /// Anonymous pages reclaim scanned.
    pub anon_scanned: u64,
    /// Clean swap-cache pages reclaim freed without a write.
    pub anon_dropped: u64,
    /// Swap slots in use at the end.
    pub used_end: u64,
    /// Most swap slots in use at once.
    pub used_peak: u64,
    /// Each fake-gitk process, in workload order.
    pub procs: Vec<ProcObs>,
    /// Pages swap readahead read beside the faulting ones (counted in `swap_ins` too).
    pub readahead_pages: u64,
}

/// One fake-gitk process.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ProcObs {
    /// The workload's name, with `.<copy>` when it has several copies.
    pub name: String,
    /// From its start to its last loop's end, ns (`None`: unfinished at the run's end).
    pub elapsed_ns: Option<u64>,
    /// Loops completed.
    pub loops: u32,
    /// Progress lines printed.
    pub progress_lines: u64,
    /// Longest gap between consecutive progress lines (from the start for the first), ns.
    pub max_gap_ns: u64,
    /// Major faults it took.
    pub major_faults: u64,
    /// Time it was blocked in major faults, ns.
    pub fault_ns: u64,
    /// Of its major faults, those its hash-map inserts took.
    #[serde(default)]
    pub insert_faults: u64,
    /// Pages of its logs it asked for, by where they were: `[in the page cache, under another
    /// copy's read (waited for), read by itself]`.
    #[serde(default)]
    pub log_pages: [u64; 3],
}

impl SwapObs {
    /// Whether anything anonymous was modelled (swap or a fake-gitk process).
    pub fn is_active(&self) -> bool {
        self.total_slots > 0 || !self.procs.is_empty()
    }

    /// Pools another replication's counters into these (levels take the larger; the
    /// processes stay `self`'s, one replication's, as finite jobs do).
    pub fn merge(&mut self, o: &SwapObs) {
        self.swap_outs += o.swap_outs;
        self.swap_out_bios += o.swap_out_bios;
        self.swap_ins += o.swap_ins;
        self.major_faults += o.major_faults;
        self.minor_faults += o.minor_faults;
        self.fault_time += o.fault_time;
        self.out_of_swap += o.out_of_swap;
        self.anon_scanned += o.anon_scanned;
        self.anon_dropped += o.anon_dropped;
        self.readahead_pages += o.readahead_pages;
        self.used_end = self.used_end.max(o.used_end);
        self.used_peak = self.used_peak.max(o.used_peak);
    }
}

impl MemoryObs {
    /// How many failures [`MemoryObs::failure_log`] keeps.
    pub const LOG_LINES: usize = 8;
}

/// Where the zone's pages are, by state. Their sum plus the free pages is the zone's total.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageStates {
    /// Kernel and anonymous memory that is never reclaimed.
    pub unreclaimable: u64,
    /// Clean page cache (reclaimable).
    pub clean: u64,
    /// Dirty page cache.
    pub dirty: u64,
    /// Page cache under writeback.
    pub writeback: u64,
    /// Bounce pages held by dm-crypt (in flight and in the `page_pool` reserve).
    pub bounce: u64,
    /// Buffers held by drivers' GFP_ATOMIC streams.
    pub atomic: u64,
    /// Pages being filled by readers and writers (allocated, not yet in the cache).
    pub filling: u64,
    /// Anonymous pages in memory (mapped, or being read back from swap).
    #[serde(skip_serializing_if = "is_zero", default)]
    pub anon: u64,
    /// Anonymous pages under swap-out writeback (freed when the write completes).
    #[serde(skip_serializing_if = "is_zero", default)]
    pub anon_writeback: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl PageStates {
    /// All allocated pages.
    pub fn total(&self) -> u64 {
        self.unreclaimable
            + self.clean
            + self.dirty
            + self.writeback
            + self.bounce
            + self.atomic
            + self.filling
            + self.anon
            + self.anon_writeback
    }
}

/// One copy of a finite fio job (`io_size` or `number_ios`): its fixed amount of work and how
/// long it took, counted from its start whatever the warm-up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FiniteJobObs {
    /// The workload's name, with `.<copy>` when it has several copies (`gitk`, `reader.1`).
    pub name: String,
    /// When it could issue its first I/O: its `startdelay`.
    pub start: SimTime,
    /// From `start` to the completion of its last I/O, ns; `None` when the run ended first
    /// (unfinished: reports say so and never print a number for it).
    pub elapsed_ns: Option<u64>,
    /// I/Os it completed, warm-up included.
    pub ios: u64,
    /// Bytes of those I/Os.
    pub bytes: u64,
    /// Its `io_size` limit, bytes (`None`: none).
    pub io_size: Option<u64>,
    /// Its `number_ios` limit (`None`: none).
    pub number_ios: Option<u64>,
}

impl FiniteJobObs {
    /// When its last I/O completed, if it finished.
    pub fn finished(&self) -> Option<SimTime> {
        self.elapsed_ns
            .map(|ns| self.start + SimDuration::from_ns(ns))
    }
}

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RunEnd {
    /// Reached the horizon.
    Horizon,
    /// Used up its work budget (`max_events`: events plus allocation attempts and reclaim
    /// scanning) before the horizon; the figures cover a shortened window.
    Saturated,
    /// Every finite fio job completed its I/O before the horizon; the run stopped there.
    Finished,
    /// Stopped by the wall-clock safety valve (`qsim run --time-limit`): how far it got
    /// depends on the machine's speed, so the figures do not reproduce.
    TimeLimit,
}

/// All measurements of one run of one policy.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// When the run ended: the horizon, or earlier once every finite job was done (or the
    /// work budget or the wall-clock limit ran out).
    pub ended: SimTime,
    /// Each copy of each finite fio job, in the world's job order (empty when every job runs
    /// until the end).
    pub finite_jobs: Vec<FiniteJobObs>,
    /// Memory-pressure counters; `None` when the scenario has no `memory:` section.
    pub memory: Option<Box<MemoryObs>>,
    /// CPU busy time per CPU-second: utilisation of the `cpus` pool, 0..=1.
    pub cpu_utilisation: f64,
    /// CPU time by context ([`CpuContext`](crate::model::base::ids::CpuContext) order) per second of the
    /// measured window: 1.0 is one CPU kept busy.
    #[serde(default)]
    pub cpu_by_context: [f64; crate::model::base::ids::CpuContext::COUNT],
    /// Each CPU's busy share of the measured window, 0..=1, on a machine of CPUs with identity
    /// (kernels after 2.6.x); empty on the shared pool.
    #[serde(default)]
    pub cpu_by_cpu: Vec<f64>,
    /// CPU time per second of the measured window (1.0 is one CPU) during which a CPU sat idle
    /// while a thread not bound to its CPU waited beside another task elsewhere: what load
    /// balancing, which qsim does not model, could have used. 0 on the shared pool.
    #[serde(default)]
    pub cpu_idle_beside_waiting: f64,
    /// Crypt queue length: time-average and maximum.
    pub crypt_queue_len_avg: f64,
    /// Maximum crypt queue length seen.
    pub crypt_queue_len_max: u64,
    /// Events the engine processed.
    pub events: u64,
    /// How the run ended.
    pub end: RunEnd,
    /// Replications pooled into these observations (1 for a single run; [`RunObs::merge`]
    /// adds them up), so per-replication figures derive from the pool.
    pub replications: u32,
    /// The run's downsampled timeline (see [`crate::model::observe::timeline`]); `None` unless the run asked
    /// for one ([`crate::model::Recording`]).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub timeline: Option<Box<crate::stats::series::Timeline>>,
    /// Per-window sums of the measured time for fio's log files (see
    /// [`crate::model::observe::recorder::Recorder::keep_fio_log`]); `None` unless the run asked for them
    /// ([`crate::model::Recording::fio_log`]). Like the timeline, pooling keeps replication 0's.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub fio_log: Option<Box<crate::stats::windows::WindowLog>>,
    /// The application's CPU time in the measured window, per process: each fio job copy (its
    /// `crypt.submit_cost` steps and `thinktime_spin`) then each `cpuio` copy, in workload
    /// order. Pooling adds them up, process by process.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub app_cpu: Vec<AppCpuObs>,
}

/// One application process's CPU time ([`RunObs::app_cpu`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppCpuObs {
    /// The workload's name, with `.<copy>` when it has several copies.
    pub name: String,
    /// The workload's name alone.
    pub workload: String,
    /// Whether it is a fio `cpuio` process (no I/O), rather than an I/O job.
    pub cpuio: bool,
    /// CPU time its tasks finished in the measured window, ns (summed over pooled
    /// replications).
    pub cpu_ns: u64,
}

impl RunObs {
    /// The application's CPU time in the measured window, in percent of one CPU (summed over
    /// its processes; 200 is two CPUs' worth). 0 for an empty window.
    pub fn app_cpu_pct(&self) -> f64 {
        let span = self.measured.as_ns();
        if span == 0 {
            return 0.0;
        }
        let cpu: u64 = self.app_cpu.iter().map(|a| a.cpu_ns).sum();
        cpu as f64 / span as f64 * 100.0
    }
}

impl RunObs {
    /// The run's elapsed time: from the earliest start of its finite jobs to the last
    /// completion of the last one, ns. `None` when it has no finite job or any of them is
    /// unfinished.
    pub fn elapsed_ns(&self) -> Option<u64> {
        finite_span(&self.finite_jobs)
    }
}

/// From the earliest start to the latest finish of `jobs`, ns; `None` when `jobs` is empty or
/// any job is unfinished.
pub fn finite_span(jobs: &[FiniteJobObs]) -> Option<u64> {
    let start = jobs.iter().map(|j| j.start).min()?;
    let mut end = start;
    for j in jobs {
        end = end.max(j.finished()?);
    }
    Some(end.since(start).as_ns())
}

/// One bio a job issued, as an [`IssueTrace`] records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IssueRecord {
    /// When the job issued it.
    pub at: SimTime,
    /// Read or write.
    pub dir: crate::model::base::bio::Dir,
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

/// Adds a pair of per-class counters.
fn add2<T: Copy + std::ops::Add<Output = T>>(a: &mut [T; 2], b: &[T; 2]) {
    a[0] = a[0] + b[0];
    a[1] = a[1] + b[1];
}

/// Adds `b` into `a` element by element, growing `a` when `b` is longer.
fn add_vec(a: &mut Vec<u64>, b: &[u64]) {
    if a.len() < b.len() {
        a.resize(b.len(), 0);
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// The mean of `a` over `wa` and `b` over `wb`, weighted by the two (0 when both are 0).
fn weighted(a: f64, wa: u64, b: f64, wb: u64) -> f64 {
    let w = wa + wb;
    if w == 0 {
        0.0
    } else {
        (a * wa as f64 + b * wb as f64) / w as f64
    }
}

impl DirectionObs {
    /// Pools `other` into `self`: counts add, histograms and sample summaries merge.
    pub fn merge(&mut self, other: &DirectionObs) {
        self.ios += other.ios;
        self.bytes += other.bytes;
        self.slat.merge(&other.slat);
        self.clat.merge(&other.clat);
        self.lat.merge(&other.lat);
        self.bw_kib_s.merge(&other.bw_kib_s);
        self.iops.merge(&other.iops);
        for (s, o) in self.stages.iter_mut().zip(&other.stages) {
            s.merge(o);
        }
        self.issued += other.issued;
        self.dropped += other.dropped;
    }
}

impl CongestionWaitObs {
    /// Adds `other`'s waits to these.
    pub fn merge(&mut self, other: &CongestionWaitObs) {
        self.waits += other.waits;
        self.woken_early += other.woken_early;
        self.total += other.total;
    }
}

impl CallerWaits {
    /// Adds `other`'s waits to these.
    pub fn merge(&mut self, other: &CallerWaits) {
        for (a, b) in self.class.iter_mut().zip(&other.class) {
            a.merge(b);
        }
        self.skipped += other.skipped;
    }
}

impl MemoryObs {
    /// Pools `other`, a replication of the same zone, into `self`, which measured over
    /// `self_span` (`other` over `other_span`): counters add, the stall histogram merges, the
    /// fewest free pages is the smaller, the time-average of free pages is weighted by the
    /// spans. The failure log and the end-of-run page states stay `self`'s (one run's log and
    /// end, not a sum).
    pub fn merge(&mut self, other: &MemoryObs, self_span: SimDuration, other_span: SimDuration) {
        add_vec(&mut self.atomic_attempts, &other.atomic_attempts);
        add_vec(&mut self.atomic_failures, &other.atomic_failures);
        add_vec(&mut self.atomic_fail_free_sum, &other.atomic_fail_free_sum);
        self.kswapd_wakeups += other.kswapd_wakeups;
        self.kswapd_awake += other.kswapd_awake;
        self.kswapd_passes += other.kswapd_passes;
        self.kswapd_waits.merge(&other.kswapd_waits);
        self.kswapd_skips += other.kswapd_skips;
        self.low_wmark_hit_quickly += other.low_wmark_hit_quickly;
        self.high_wmark_hit_quickly += other.high_wmark_hit_quickly;
        self.order0_fallbacks += other.order0_fallbacks;
        self.kswapd_scanned += other.kswapd_scanned;
        self.kswapd_reclaimed += other.kswapd_reclaimed;
        self.direct_stalls += other.direct_stalls;
        self.direct_stall.merge(&other.direct_stall);
        self.direct_waits.merge(&other.direct_waits);
        self.direct_scanned += other.direct_scanned;
        self.direct_reclaimed += other.direct_reclaimed;
        self.pageout_pages += other.pageout_pages;
        self.bounce_from_zone += other.bounce_from_zone;
        self.bounce_from_reserve += other.bounce_from_reserve;
        self.mempool_waits += other.mempool_waits;
        self.mempool_wait_time += other.mempool_wait_time;
        self.partial_clones += other.partial_clones;
        self.partial_nap_time += other.partial_nap_time;
        self.free_min_seen = self.free_min_seen.min(other.free_min_seen);
        self.free_avg = weighted(
            self.free_avg,
            self_span.as_ns(),
            other.free_avg,
            other_span.as_ns(),
        );
        self.below_min += other.below_min;
        self.swap.merge(&other.swap);
        self.atomic_failures_logged += other.atomic_failures_logged;
        for (a, b) in self.rx.iter_mut().zip(&other.rx) {
            a.merge(b);
        }
    }
}

impl RunObs {
    /// Pools `other`, another replication of the same run, into `self`, as if the two measured
    /// windows had run back to back: counts, times and the measured window add; histograms
    /// and per-interval samples merge (so percentiles are those of all samples); time-averages
    /// are weighted by window length and maxima take the larger. A saturated replication makes
    /// the pool saturated. The end time and the finite jobs' elapsed times stay `self`'s
    /// (replication 0's; the report gives their spread from each replication's sample), and
    /// so does the timeline (one replication's, as drawn). Merging in
    /// a fixed order gives bit-identical pools.
    pub fn merge(&mut self, other: &RunObs) {
        let (span, other_span) = (self.measured, other.measured);
        for (d, o) in self.dirs.iter_mut().zip(&other.dirs) {
            d.merge(o);
        }
        self.clat_all.merge(&other.clat_all);
        for (a, b) in self.depth_buckets.iter_mut().zip(&other.depth_buckets) {
            *a += b;
        }
        for (a, b) in self
            .congestion_waits
            .iter_mut()
            .zip(&other.congestion_waits)
        {
            a.merge(b);
        }
        let b = &other.block;
        add2(&mut self.block.congested, &b.congested);
        add2(&mut self.block.pool_sleeps, &b.pool_sleeps);
        add2(&mut self.block.clears, &b.clears);
        self.block.timer_unplugs += b.timer_unplugs;
        self.block.threshold_unplugs += b.threshold_unplugs;
        self.block.dispatched += b.dispatched;
        self.block.device_busy += b.device_busy;
        add2(&mut self.block.completed, &b.completed);
        add2(&mut self.block.ticks, &b.ticks);
        add2(&mut self.block.ncq_estimates, &b.ncq_estimates);
        add2(&mut self.block.cfq_coop, &b.cfq_coop);
        self.writeback.dirtied_bytes += other.writeback.dirtied_bytes;
        self.writeback.written_back_bytes += other.writeback.written_back_bytes;
        self.writeback.throttled += other.writeback.throttled;
        if let (Some(m), Some(o)) = (self.memory.as_mut(), other.memory.as_ref()) {
            m.merge(o, span, other_span);
        }
        let (wa, wb) = (span.as_ns(), other_span.as_ns());
        self.cpu_utilisation = weighted(self.cpu_utilisation, wa, other.cpu_utilisation, wb);
        for (a, b) in self.cpu_by_context.iter_mut().zip(other.cpu_by_context) {
            *a = weighted(*a, wa, b, wb);
        }
        for (a, &b) in self.cpu_by_cpu.iter_mut().zip(&other.cpu_by_cpu) {
            *a = weighted(*a, wa, b, wb);
        }
        self.cpu_idle_beside_waiting = weighted(
            self.cpu_idle_beside_waiting,
            wa,
            other.cpu_idle_beside_waiting,
            wb,
        );
        self.crypt_queue_len_avg =
            weighted(self.crypt_queue_len_avg, wa, other.crypt_queue_len_avg, wb);
        self.crypt_queue_len_max = self.crypt_queue_len_max.max(other.crypt_queue_len_max);
        self.events += other.events;
        if other.end == RunEnd::TimeLimit {
            self.end = RunEnd::TimeLimit;
        } else if other.end == RunEnd::Saturated && self.end != RunEnd::TimeLimit {
            self.end = RunEnd::Saturated;
        }
        self.measured += other.measured;
        self.replications += other.replications;
        for (a, b) in self.app_cpu.iter_mut().zip(&other.app_cpu) {
            a.cpu_ns += b.cpu_ns;
        }
    }
}
