//! The request queue of the disk beneath dm-crypt (2.6.32 legacy queue, or blk-mq).
//!
//! Owns, for a legacy queue:
//! - two request pools by class (SYNC = reads and sync writes, ASYNC = other writes) of
//!   `nr_requests` each, with the kernel's congestion thresholds (on at `nr - nr/8 + 1`, off below
//!   `nr - nr/8 - nr/16 - 1`: 113 and 103 for 128), the "full" flag, request batching, and a queue
//!   of sleepers per class; every free below the off threshold is a congestion *clear* that wakes
//!   every `congestion_wait` sleeper of the class (the caller does the waking);
//! - plugging: a request added to an empty elevator plugs the queue; it unplugs at
//!   `unplug_threshold` queued requests, when the unplug timer fires (3·HZ/1000 with a one-jiffy
//!   floor: 4 ms at HZ=250), when a bio flagged for unplug is added, when a submitter goes to sleep
//!   on a full pool, or when a completion runs the queue;
//! - the elevator: `fifo` (noop), or CFQ with a sync queue per io context, one async queue and
//!   the kernel version's rules (`src/model/block/cfq.rs`).
//!
//! blk-mq keeps one tag pool for both classes (shared by every hardware queue), never reports
//! congestion and has no unplug timer; its scheduler is `none` (a FIFO) or mq-deadline
//! (`src/model/block/deadline.rs`). Where a request completes, on which CPU and in which context,
//! is [`RequestQueue::completion_site`] (`src/model/block/blkmq.rs`). Under dm-crypt every submitter is a kcryptd thread, so CFQ sees one sync context;
//! without it (policy `none`) each process submitting its own I/O has its own.

use crate::engine::{EventId, Scheduler, SimDuration, SimTime};
use crate::model::base::bio::{BioId, Dir};
use crate::model::base::config::{
    BlockConfig, CompletionSite, Elevator, KernelConfig, MqScheduler, QueueMode,
};
use crate::model::base::obs::BlockObs;
use crate::model::block::cfq::Cfq;
use crate::model::block::deadline::Deadline;
use std::collections::VecDeque;

use crate::model::base::ids::ActorId;
pub use crate::model::base::ids::QueueClass;
/// Index of the SYNC class in per-class arrays.
const SYNC: usize = 0;
/// Index of the ASYNC class in per-class arrays.
const ASYNC: usize = 1;
/// Requests a fresh batcher may allocate past a full pool (BLK_BATCH_REQ).
const BATCH_REQUESTS: u32 = 32;

/// The request queue's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockEvent {
    /// The unplug timer fires.
    UnplugTimer,
    /// CFQ's idle timer fires.
    CfqIdle,
    /// A submitter woken on a request pool retries.
    PoolWake {
        /// The submitter.
        actor: ActorId,
    },
}

/// Per-submitter request-batching state (the kernel keeps it in the io_context).
#[derive(Debug, Clone, Copy, Default)]
pub struct BatchState {
    nr_batch: u32,
    last_waited: SimTime,
}

impl BatchState {
    fn is_batching(&self, now: SimTime, window: SimDuration) -> bool {
        self.nr_batch == BATCH_REQUESTS
            || (self.nr_batch > 0 && now < self.last_waited.saturating_add(window))
    }
    /// Becomes a batcher (on waking from a pool sleep, or on filling the pool).
    pub fn set_batching(&mut self, now: SimTime, window: SimDuration) {
        if !self.is_batching(now, window) {
            self.nr_batch = BATCH_REQUESTS;
            self.last_waited = now;
        }
    }
}

/// What freeing a request did.
#[derive(Debug, Clone, Copy, Default)]
pub struct Freed {
    /// The class's congestion cleared (every free below the off threshold): wake its waiters.
    pub cleared: bool,
    /// A pool sleeper to wake (it becomes a batcher and retries).
    pub wake: Option<ActorId>,
}

#[derive(Debug)]
enum ElevatorState {
    Fifo(VecDeque<BioId>),
    Cfq(Box<Cfq>),
    Deadline(Box<Deadline>),
}

/// The disk's request queue.
#[derive(Debug)]
pub struct RequestQueue {
    cfg: BlockConfig,
    unplug_delay: SimDuration,
    batch_window: SimDuration,
    on: u32,
    off: u32,
    count: [u32; 2],
    congested: [bool; 2],
    congested_since: [SimTime; 2],
    full: [bool; 2],
    sleepers: [VecDeque<ActorId>; 2],
    plugged: bool,
    plug_timer: Option<EventId>,
    queued: u32,
    elevator: ElevatorState,
    /// Counters for the report (`device_busy` is the world's to fill).
    pub counters: BlockObs,
}

impl RequestQueue {
    /// An empty, unplugged queue.
    pub fn new(cfg: &BlockConfig, kernel: &KernelConfig) -> Self {
        let elevator = match (cfg.mode, cfg.elevator) {
            (QueueMode::Legacy, Elevator::Cfq) => {
                ElevatorState::Cfq(Box::new(Cfq::new(cfg, kernel)))
            }
            (QueueMode::BlkMq, _) if cfg.mq.scheduler == MqScheduler::MqDeadline => {
                ElevatorState::Deadline(Box::new(Deadline::new(cfg.mq.deadline)))
            }
            _ => ElevatorState::Fifo(VecDeque::new()),
        };
        RequestQueue {
            cfg: cfg.clone(),
            unplug_delay: kernel.unplug_delay(),
            batch_window: kernel.hz_div(50),
            on: cfg.congestion_on(),
            off: cfg.congestion_off(),
            count: [0; 2],
            congested: [false; 2],
            congested_since: [SimTime::ZERO; 2],
            full: [false; 2],
            sleepers: [VecDeque::new(), VecDeque::new()],
            plugged: false,
            plug_timer: None,
            queued: 0,
            elevator,
            counters: BlockObs::default(),
        }
    }

    fn legacy(&self) -> bool {
        self.cfg.mode == QueueMode::Legacy
    }

    /// On which CPU and in which context a request submitted from `submit_cpu` completes
    /// (`blk_mq_complete_request`; [`crate::model::block::blkmq::completion_site`]).
    pub fn completion_site(&self, submit_cpu: u32) -> CompletionSite {
        crate::model::block::blkmq::completion_site(&self.cfg, submit_cpu)
    }

    /// Whether the class is congested (the bdi flag writeback and reclaim look at).
    pub fn is_congested(&self, class: QueueClass) -> bool {
        self.congested[class.index()]
    }

    /// Requests allocated in a class (both classes' tags under blk-mq are counted in SYNC).
    pub fn allocated(&self, class: QueueClass) -> u32 {
        self.count[class.index()]
    }

    /// Requests waiting in the elevator.
    pub fn queued(&self) -> u32 {
        self.queued
    }

    /// CFQ's own books, when CFQ is the elevator: the requests it counts as waiting, then
    /// those in its queues (both must equal [`RequestQueue::queued`]).
    pub fn cfq_books(&self) -> Option<(u64, u64)> {
        match &self.elevator {
            ElevatorState::Cfq(c) => Some(c.queued_books()),
            _ => None,
        }
    }

    /// CFQ's priority tree checked, when CFQ is the elevator: `Err` names the first broken
    /// rule (docs/model/block.md §5, close cooperators).
    pub fn cfq_prio_tree(&self) -> Option<Result<(), String>> {
        match &self.elevator {
            ElevatorState::Cfq(c) => Some(c.check_prio_tree()),
            _ => None,
        }
    }

    /// Tries to allocate a request of `class` for a submitter with batching state `batch`.
    /// On `false` the caller must [`RequestQueue::sleep`].
    pub fn get_request(&mut self, class: QueueClass, batch: &mut BatchState, now: SimTime) -> bool {
        let class = class.index();
        if !self.legacy() {
            let total = self.count[SYNC];
            if total >= self.cfg.nr_requests {
                return false;
            }
            self.count[SYNC] += 1;
            return true;
        }
        let nr = self.cfg.nr_requests;
        if self.count[class] + 1 >= self.on {
            if self.count[class] + 1 >= nr {
                if !self.full[class] {
                    self.full[class] = true;
                    batch.set_batching(now, self.batch_window);
                } else if !batch.is_batching(now, self.batch_window) {
                    return false;
                }
            }
            if !self.congested[class] {
                self.congested[class] = true;
                self.congested_since[class] = now;
            }
        }
        if self.count[class] >= 3 * nr / 2 {
            return false;
        }
        self.count[class] += 1;
        if batch.is_batching(now, self.batch_window) {
            batch.nr_batch -= 1;
        }
        true
    }

    /// Puts `actor` to sleep on the class's pool; the kernel unplugs the queue first, which the
    /// caller must follow with a dispatch attempt.
    pub fn sleep<E: From<BlockEvent>>(
        &mut self,
        class: QueueClass,
        actor: ActorId,
        sched: &mut Scheduler<E>,
    ) {
        let class = if self.legacy() { class.index() } else { SYNC };
        self.counters.pool_sleeps[class] += 1;
        self.sleepers[class].push_back(actor);
        self.unplug(sched);
    }

    /// Frees a request of `class` (at completion).
    pub fn free_request(&mut self, class: QueueClass, now: SimTime) -> Freed {
        let class = class.index();
        let mut out = Freed::default();
        if !self.legacy() {
            self.count[SYNC] -= 1;
            out.wake = self.sleepers[SYNC].pop_front();
            return out;
        }
        self.count[class] -= 1;
        if self.count[class] < self.off {
            if self.congested[class] {
                self.congested[class] = false;
                self.counters.congested[class] += now.since(self.congested_since[class]);
            }
            self.counters.clears[class] += 1;
            out.cleared = true;
        }
        if self.count[class] < self.cfg.nr_requests {
            out.wake = self.sleepers[class].pop_front();
            self.full[class] = false;
        }
        out
    }

    /// Adds an allocated request to the elevator, plugging or unplugging as the kernel does.
    /// `at` is the request's (byte offset, bytes, direction) on the disk, for CFQ's seek
    /// statistics and mq-deadline's sort and direction; `ctx`
    /// the io context CFQ files it under (a process submitting its own I/O; `None` for
    /// dm-crypt's threads, which share one).
    pub fn insert<E: From<BlockEvent>>(
        &mut self,
        id: BioId,
        sync: bool,
        at: (u64, u32, Dir),
        unplug: bool,
        ctx: Option<ActorId>,
        sched: &mut Scheduler<E>,
    ) {
        if self.legacy() && self.cfg.plug && self.queued == 0 && !self.plugged {
            self.plugged = true;
            self.plug_timer =
                Some(sched.schedule_in(self.unplug_delay, E::from(BlockEvent::UnplugTimer)));
        }
        self.queued += 1;
        match &mut self.elevator {
            ElevatorState::Fifo(q) => q.push_back(id),
            ElevatorState::Cfq(c) => {
                let (offset, bytes, _) = at;
                let sectors = u64::from(bytes).div_ceil(512);
                c.insert(id, sync, ctx, (offset / 512, sectors), sched, sched.now());
            }
            ElevatorState::Deadline(d) => {
                let (offset, bytes, dir) = at;
                let sectors = u64::from(bytes).div_ceil(512);
                d.insert(id, dir == Dir::Write, (offset / 512, sectors), sched.now());
            }
        }
        if self.plugged && self.queued >= self.cfg.unplug_threshold {
            self.counters.threshold_unplugs += 1;
            self.unplug(sched);
        } else if unplug {
            self.unplug(sched);
        }
    }

    /// Removes the plug (explicit unplug, pool sleep, or a completion running the queue).
    pub fn unplug<E: From<BlockEvent>>(&mut self, sched: &mut Scheduler<E>) {
        if self.plugged {
            self.plugged = false;
            if let Some(t) = self.plug_timer.take() {
                sched.cancel(t);
            }
        }
    }

    /// The unplug timer fired.
    pub fn unplug_timer(&mut self) {
        self.plug_timer = None;
        if self.plugged {
            self.plugged = false;
            self.counters.timer_unplugs += 1;
        }
    }

    /// CFQ's idle timer fired: the sync slice ends.
    pub fn idle_timer(&mut self) {
        if let ElevatorState::Cfq(c) = &mut self.elevator {
            c.idle_timer();
        }
    }

    /// The next request to hand to the device, if the queue is unplugged and the elevator
    /// releases one now.
    pub fn next_dispatch<E: From<BlockEvent>>(
        &mut self,
        sched: &mut Scheduler<E>,
    ) -> Option<BioId> {
        if self.plugged {
            return None;
        }
        let now = sched.now();
        let got = match &mut self.elevator {
            ElevatorState::Fifo(q) => q.pop_front(),
            ElevatorState::Cfq(c) => c.next(sched, now),
            ElevatorState::Deadline(d) => d.dispatch(now),
        };
        if got.is_some() {
            self.queued -= 1;
            self.counters.dispatched += 1;
        }
        got
    }

    /// Dispatched request `id` of class `sync` completed on the device.
    pub fn completed<E: From<BlockEvent>>(
        &mut self,
        id: BioId,
        sync: bool,
        sched: &mut Scheduler<E>,
    ) {
        if let ElevatorState::Cfq(c) = &mut self.elevator
            && let Some(hw_tag) = c.completed(id, sync, sched, sched.now())
        {
            self.counters.ncq_estimates[0] += 1;
            self.counters.ncq_estimates[1] += u64::from(!hw_tag);
        }
        // A completion runs the queue, which removes the plug.
        self.unplug(sched);
    }

    /// Brings [`RequestQueue::counters`] up to `now` before they are read (at the warm-up's
    /// end and the run's): the congestion time so far, and CFQ's close-cooperator counts,
    /// which CFQ keeps itself.
    pub fn finish(&mut self, now: SimTime) {
        for class in [SYNC, ASYNC] {
            if self.congested[class] {
                self.counters.congested[class] += now.since(self.congested_since[class]);
                self.congested_since[class] = now;
            }
        }
        if let ElevatorState::Cfq(c) = &self.elevator {
            self.counters.cfq_coop = c.coop_counts();
        }
    }

    /// Submitters asleep on the pools.
    pub fn sleepers(&self) -> usize {
        self.sleepers[SYNC].len() + self.sleepers[ASYNC].len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const SYNC: QueueClass = QueueClass::Sync;
    const ASYNC: QueueClass = QueueClass::Async;

    fn cfg(nr: u32) -> BlockConfig {
        let k = KernelConfig::new(250);
        BlockConfig {
            mode: QueueMode::Legacy,
            nr_requests: nr,
            elevator: Elevator::Fifo,
            plug: true,
            unplug_threshold: 4,
            low_latency: true,
            cfq_slice_sync: k.hz_div(10),
            cfq_slice_async: k.hz_div(25),
            cfq_slice_idle: k.hz_div(125),
            cfq_quantum: 4,
            cfq: k.version.cfq(),
            ncq_capable: true,
            mq: Default::default(),
        }
    }

    #[test]
    fn thresholds_match_the_kernel_formula() {
        let c = cfg(128);
        assert_eq!((c.congestion_on(), c.congestion_off()), (113, 103));
        let c = cfg(4);
        assert_eq!((c.congestion_on(), c.congestion_off()), (4, 3));
    }

    #[test]
    fn congestion_sets_at_on_and_clears_below_off_on_every_free() {
        let k = KernelConfig::new(250);
        let mut q = RequestQueue::new(&cfg(128), &k);
        let mut b = BatchState::default();
        let t = SimTime::ZERO;
        for _ in 0..112 {
            assert!(q.get_request(ASYNC, &mut b, t));
        }
        assert!(!q.is_congested(ASYNC));
        assert!(q.get_request(ASYNC, &mut b, t)); // the 113th: count + 1 reaches `on`
        assert!(q.is_congested(ASYNC));
        assert!(!q.is_congested(SYNC));
        // Free down to 103: still congested; the free that leaves 102 clears.
        for _ in 0..10 {
            assert!(!q.free_request(ASYNC, t).cleared);
        }
        assert_eq!(q.allocated(ASYNC), 103);
        assert!(q.free_request(ASYNC, t).cleared);
        assert!(!q.is_congested(ASYNC));
        // Every further free below off is a clear too.
        assert!(q.free_request(ASYNC, t).cleared);
    }

    #[test]
    fn a_full_pool_refuses_non_batchers_and_lets_the_batcher_continue() {
        let k = KernelConfig::new(250);
        let mut q = RequestQueue::new(&cfg(128), &k);
        let mut filler = BatchState::default();
        let mut other = BatchState::default();
        let t = SimTime::ZERO;
        for _ in 0..127 {
            assert!(q.get_request(SYNC, &mut filler, t));
        }
        // The 128th sets "full" and makes its allocator a batcher.
        assert!(q.get_request(SYNC, &mut filler, t));
        assert!(!q.get_request(SYNC, &mut other, t));
        assert!(q.get_request(SYNC, &mut filler, t));
        // Hard cap at 3/2 nr even for a batcher.
        while q.get_request(SYNC, &mut filler, t) {}
        assert!(q.allocated(SYNC) <= 192);
    }

    #[test]
    fn blk_mq_never_congests() {
        let k = KernelConfig::new(250);
        let mut c = cfg(16);
        c.mode = QueueMode::BlkMq;
        let mut q = RequestQueue::new(&c, &k);
        let mut b = BatchState::default();
        for _ in 0..16 {
            assert!(q.get_request(ASYNC, &mut b, SimTime::ZERO));
        }
        assert!(!q.get_request(SYNC, &mut b, SimTime::ZERO));
        assert!(!q.is_congested(ASYNC) && !q.is_congested(SYNC));
        assert!(!q.free_request(ASYNC, SimTime::ZERO).cleared);
    }
}
