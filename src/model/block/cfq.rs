//! CFQ, the elevator of the legacy request queue, as the kernel version's `block/cfq-iosched.c`
//! runs it: one sync queue per io context, one async queue shared by every writer, slices served
//! from the service tree, preemption, the quantum, idling, and the version's rules
//! ([`CfqRules`]): the `low_latency` async ramp (from the last sync completion in 2.6.32, the last
//! *delayed* one in 2.6.33), the async drain before sync I/O, idling for seeky queues on NCQ
//! disks, and 2.6.33's target latency. docs/model/block.md §5 gives each rule with its kernel
//! function.
//!
//! The io context is the submitter's: a process submitting its own I/O (a fio job's or a
//! fake-gitk copy's context, policy `none` or `inline`) gets its own sync queue with its own
//! seek statistics and idle window (`cfq_get_queue` keyed by the task's `cfq_io_context`); I/O
//! submitted by dm-crypt's threads shares one sync queue, as qsim has always modelled it.

use crate::engine::{EventId, Scheduler, SimDuration, SimTime};
use crate::model::base::bio::BioId;
use crate::model::base::config::{BlockConfig, CfqRules, KernelConfig};
use crate::model::base::ids::ActorId;
use crate::model::block::queue::BlockEvent;
use std::collections::VecDeque;

/// Index of the SYNC class in per-class arrays.
const SYNC: usize = 0;
/// Index of the ASYNC class in per-class arrays.
const ASYNC: usize = 1;
/// Index of the one async queue in [`Cfq::queues`] (`cfqd->async_cfqq[ioprio]` of the default
/// priority, shared by every writer).
const ASYNC_Q: usize = 0;
/// CFQ async requests per slice: 2 × (2 + 2 × 3) for the default priority 4
/// (`cfq_prio_to_maxrq`).
const ASYNC_RQ_PER_SLICE: u32 = 16;
/// `CIC_SEEK_THR`: a context whose mean seek distance exceeds this many sectors is seeky.
const SEEK_THR: u64 = 8 * 1024;
/// `sample_valid()`: the seek statistics count once they hold more than this many samples.
const SAMPLES_VALID: u64 = 80;
/// `CFQ_MIN_TT`: a seeky queue's idle wait is at most this many milliseconds (2.6.31/2.6.32).
const MIN_TT_MS: u64 = 2;
/// `cfq_hist_divisor`: the busy-queue average keeps (divisor − 1)/divisor of its maximum.
const HIST_DIVISOR: u32 = 4;
/// `CFQ_SLICE_SCALE`: each priority level adds base/5 to the slice (`cfq_prio_slice`).
const SLICE_SCALE: i64 = 5;
/// The default best-effort priority every qsim context has (`IOPRIO_NORM`).
const PRIO_NORM: i64 = 4;

/// `cfq_update_io_seektime`: the decaying mean seek distance of one io context, in sectors.
#[derive(Debug, Clone, Copy, Default)]
struct Seek {
    last_pos: u64,
    samples: u64,
    total: u64,
    mean: u64,
}

impl Seek {
    /// A request at sector `pos` of `sectors` sectors was queued.
    fn update(&mut self, pos: u64, sectors: u64) {
        let sdist = if self.last_pos == 0 {
            0
        } else {
            pos.abs_diff(self.last_pos)
        };
        // The kernel caps an odd long seek (a page-in, a fragment): looser for the first ones.
        let slack = if self.samples <= 60 {
            2 * 1024 * 1024
        } else {
            2 * 1024 * 64
        };
        let sdist = sdist.min(self.mean * 4 + slack);
        self.samples = (7 * self.samples + 256) / 8;
        self.total = (7 * self.total + 256 * sdist) / 8;
        self.mean = (self.total + self.samples / 2) / self.samples;
        self.last_pos = pos + sectors;
    }
    fn seeky(&self) -> bool {
        self.mean > SEEK_THR
    }
    fn valid(&self) -> bool {
        self.samples > SAMPLES_VALID
    }
}

/// One `cfq_queue`: a sync queue of one io context, or the shared async queue.
#[derive(Debug)]
struct CfqQueue {
    /// The io context (`None`: the async queue, or the sync queue of dm-crypt's threads).
    ctx: Option<ActorId>,
    sync: bool,
    /// Queued requests, each with its start time (allocation, `rq->start_time`).
    fifo: VecDeque<(BioId, SimTime)>,
    /// Requests of this queue in the driver (`cfqq->dispatched`).
    dispatched: u32,
    /// The context's seek statistics (`cic->seek_*`).
    seek: Seek,
    /// `cfq_cfqq_idle_window` (or 2.6.33's `cfq_should_idle`).
    idle_window: bool,
    /// Place on the service tree: `rb_key` in jiffies, then the order of insertion (the
    /// red-black tree puts an equal key to the right).
    rb_key: (i64, u64),
}

impl CfqQueue {
    /// `cfq_init_cfqq`: a sync queue starts with an idle window.
    fn new(ctx: Option<ActorId>, sync: bool, idles: bool) -> Self {
        CfqQueue {
            ctx,
            sync,
            fifo: VecDeque::new(),
            dispatched: 0,
            seek: Seek::default(),
            idle_window: sync && idles,
            rb_key: (0, 0),
        }
    }
}

/// The CFQ elevator's state.
#[derive(Debug)]
pub(in crate::model) struct Cfq {
    /// The async queue first, then one sync queue per io context in order of first use.
    queues: Vec<CfqQueue>,
    active: Option<usize>,
    slice_end: SimTime,
    dispatched_in_slice: u32,
    /// Requests in the driver by class (`rq_in_driver[]`; SYNC's is `sync_flight`).
    in_driver: [u32; 2],
    idle_timer: Option<EventId>,
    /// The sync requests in the driver: start time and queue (for 2.6.33's delayed-sync rule).
    sync_started: Vec<(BioId, SimTime, usize)>,
    /// `last_end_sync_rq` (2.6.32) or `last_delayed_sync` (2.6.33), in jiffies.
    last_sync: i64,
    /// Insertions into the service tree so far (orders equal keys).
    tree_seq: u64,
    /// `busy_queues_avg` of the one group (2.6.33's target latency).
    busy_avg: u32,
    cfg: BlockConfig,
    rules: CfqRules,
    hz: u32,
    jiffy_ns: u64,
}

impl Cfq {
    /// An idle CFQ for `cfg` under `kernel`'s HZ.
    pub(in crate::model) fn new(cfg: &BlockConfig, kernel: &KernelConfig) -> Self {
        let rules = cfg.cfq;
        Cfq {
            queues: vec![CfqQueue::new(None, false, false)],
            active: None,
            slice_end: SimTime::ZERO,
            dispatched_in_slice: 0,
            in_driver: [0; 2],
            idle_timer: None,
            sync_started: Vec::new(),
            // 2.6.32 starts the ramp at init; 2.6.33 as if the last delayed request were HZ ago.
            last_sync: if rules.ramp_from_delayed_sync {
                -i64::from(kernel.hz)
            } else {
                0
            },
            tree_seq: 0,
            busy_avg: 0,
            cfg: cfg.clone(),
            rules,
            hz: kernel.hz,
            jiffy_ns: kernel.jiffy().as_ns(),
        }
    }

    fn jiffies(&self, t: SimTime) -> i64 {
        (t.as_ns() / self.jiffy_ns) as i64
    }

    /// The queue of a request (`cfq_get_queue`): the shared async queue, or the sync queue of
    /// io context `ctx`, created on its first request.
    fn queue_of(&mut self, sync: bool, ctx: Option<ActorId>) -> usize {
        if !sync {
            return ASYNC_Q;
        }
        if let Some(i) = self.queues.iter().position(|q| q.sync && q.ctx == ctx) {
            return i;
        }
        let idles = !self.cfg.cfq_slice_idle.is_zero();
        self.queues.push(CfqQueue::new(ctx, true, idles));
        self.queues.len() - 1
    }

    /// Queues with requests waiting (`busy_queues`: a queue leaves the tree when its last
    /// request is dispatched, even while active).
    fn busy(&self) -> usize {
        self.queues.iter().filter(|q| !q.fifo.is_empty()).count()
    }

    /// `cfq_service_tree_add` (not at the front): a queue's key is now plus
    /// `cfq_slice_offset`, `(busy_queues − 1) × (cfq_prio_slice(sync, 0) − its own slice)`.
    fn service_tree_add(&mut self, q: usize, now: SimTime) {
        let base = |d: SimDuration| (d.as_ns() / self.jiffy_ns) as i64;
        let slice = |sync: bool| {
            if sync {
                base(self.cfg.cfq_slice_sync)
            } else {
                base(self.cfg.cfq_slice_async)
            }
        };
        let sync_slice = slice(true);
        let top = sync_slice + sync_slice / SLICE_SCALE * PRIO_NORM;
        // Negative when a configured async slice exceeds it: the kernel's unsigned sum wraps
        // to a key before now, which `time_before` orders the same way.
        let offset = (self.busy() as i64 - 1).max(0) * (top - slice(self.queues[q].sync));
        self.tree_seq += 1;
        self.queues[q].rb_key = (self.jiffies(now) + offset, self.tree_seq);
    }

    /// A request of `sectors` sectors at sector `pos` from io context `ctx` is queued
    /// (`cfq_insert_request`, `cfq_add_cfqq_rr` for a queue that was empty, then
    /// `cfq_rq_enqueued`'s seek and idle-window updates for a sync one).
    pub(in crate::model) fn insert(
        &mut self,
        id: BioId,
        sync: bool,
        ctx: Option<ActorId>,
        (pos, sectors): (u64, u64),
        now: SimTime,
    ) {
        let q = self.queue_of(sync, ctx);
        self.queues[q].fifo.push_back((id, now));
        if self.queues[q].fifo.len() == 1 {
            self.service_tree_add(q, now);
        }
        if sync {
            self.queues[q].seek.update(pos, sectors);
            self.queues[q].idle_window = self.update_idle_window(q);
        }
    }

    /// `cfq_update_idle_window` (think time not modelled).
    fn update_idle_window(&self, q: usize) -> bool {
        if self.cfg.cfq_slice_idle.is_zero() {
            return false;
        }
        if self.rules.lone_sync_queue_idles {
            // 2.6.33: a sync queue alone on its service tree idles.
            return true;
        }
        let keeps = self.rules.seeky_idle_with_latency && self.cfg.low_latency;
        !(self.cfg.hw_tag && self.queues[q].seek.seeky() && !keeps)
    }

    /// How long the idle timer waits for queue `q`: `slice_idle`, at most `CFQ_MIN_TT` for a
    /// seeky queue before 2.6.33 (`cfq_arm_slice_timer`).
    fn idle_len(&self, q: usize) -> SimDuration {
        let idle = self.cfg.cfq_slice_idle;
        let seek = &self.queues[q].seek;
        if !self.rules.lone_sync_queue_idles && seek.valid() && seek.seeky() {
            // msecs_to_jiffies rounds up.
            let j = (MIN_TT_MS * u64::from(self.hz)).div_ceil(1000);
            idle.min(SimDuration::from_ns(j * self.jiffy_ns))
        } else {
            idle
        }
    }

    /// `cfq_may_dispatch` for the active queue `a`.
    fn may_dispatch(&self, a: usize, now: SimTime) -> bool {
        let q = &self.queues[a];
        // Drain async requests before sync I/O starts (2.6.32+).
        if q.sync
            && self.rules.drain_async_before_sync
            && q.idle_window
            && self.in_driver[ASYNC] > 0
        {
            return false;
        }
        // An async queue waits while sync I/O is in flight (every version).
        if !q.sync && self.in_driver[SYNC] > 0 {
            return false;
        }
        let mut max = self.cfg.cfq_quantum.max(1);
        if !q.sync && self.cfg.low_latency {
            // The async depth ramps up one request per sync slice since the last sync request
            // (completed, or delayed in 2.6.33).
            let slice = (self.cfg.cfq_slice_sync.as_ns() / self.jiffy_ns).max(1) as i64;
            let since = (self.jiffies(now) - self.last_sync).max(0);
            let mut depth = u32::try_from(since / slice).unwrap_or(u32::MAX);
            if depth == 0 && q.dispatched == 0 {
                depth = 1;
            }
            max = max.min(depth);
        }
        q.dispatched < max
    }

    /// The length of a new slice of queue `pick`: its base slice, scaled into the 300 ms target
    /// latency with `low_latency` in 2.6.33 (`cfq_set_prio_slice`).
    fn new_slice(&mut self, pick: usize) -> SimDuration {
        let base = if self.queues[pick].sync {
            self.cfg.cfq_slice_sync
        } else {
            self.cfg.cfq_slice_async
        };
        if !(self.rules.target_latency && self.cfg.low_latency) {
            return base;
        }
        let busy = self.busy() as u32;
        let (lo, hi) = (busy.min(self.busy_avg), busy.max(self.busy_avg));
        self.busy_avg = ((HIST_DIVISOR - 1) * hi + lo + HIST_DIVISOR / 2) / HIST_DIVISOR;
        let sync = u128::from(self.cfg.cfq_slice_sync.as_ns());
        let expect = sync * u128::from(self.busy_avg);
        // cfq_target_latency = HZ * 3/10 jiffies.
        let target = u128::from(self.hz * 3 / 10) * u128::from(self.jiffy_ns);
        if expect <= target {
            return base;
        }
        let b = u128::from(base.as_ns());
        let low = b.min(2 * u128::from(self.cfg.cfq_slice_idle.as_ns()) * b / sync.max(1));
        let scaled = (b * target / expect).max(low);
        SimDuration::from_ns(scaled as u64)
    }

    /// The queue to serve next (`cfq_get_next_queue`): the first busy sync queue of the
    /// service tree, else the async queue if it has requests (qsim serves sync queues first).
    fn pick(&self) -> Option<usize> {
        let first_sync = (0..self.queues.len())
            .filter(|&i| self.queues[i].sync && !self.queues[i].fifo.is_empty())
            .min_by_key(|&i| self.queues[i].rb_key);
        first_sync.or((!self.queues[ASYNC_Q].fifo.is_empty()).then_some(ASYNC_Q))
    }

    /// The next request to hand to the device, if CFQ releases one now.
    pub(in crate::model) fn next<E: From<BlockEvent>>(
        &mut self,
        sched: &mut Scheduler<E>,
        now: SimTime,
    ) -> Option<BioId> {
        // Each pass either dispatches, waits, or expires the active slice; a fresh slice always
        // dispatches or waits, so this ends within three passes.
        for _ in 0..4 {
            let Some(a) = self.active else {
                let pick = self.pick()?;
                self.active = Some(pick);
                self.dispatched_in_slice = 0;
                self.slice_end = now + self.new_slice(pick);
                continue;
            };
            let sync = self.queues[a].sync;
            // A sync request preempts an async slice.
            let preempt = !sync && self.queues.iter().any(|q| q.sync && !q.fifo.is_empty());
            let used_up =
                now >= self.slice_end || (!sync && self.dispatched_in_slice >= ASYNC_RQ_PER_SLICE);
            let other_waits =
                (0..self.queues.len()).any(|i| i != a && !self.queues[i].fifo.is_empty());
            if preempt || (used_up && (self.queues[a].dispatched == 0 || other_waits)) {
                self.expire(sched, now);
                continue;
            }
            if !self.queues[a].fifo.is_empty() {
                return self.dispatch(a, sched, now);
            }
            // The active queue is empty: idle for more of its sync I/O, or expire.
            if sync
                && self.queues[a].idle_window
                && !self.cfg.cfq_slice_idle.is_zero()
                && now < self.slice_end
            {
                if self.idle_timer.is_some() || self.queues[a].dispatched > 0 {
                    return None;
                }
                if self.in_driver == [0, 0] {
                    self.arm_idle(a, sched, now);
                    return None;
                }
            }
            self.expire(sched, now);
        }
        None
    }

    fn dispatch<E: From<BlockEvent>>(
        &mut self,
        a: usize,
        sched: &mut Scheduler<E>,
        now: SimTime,
    ) -> Option<BioId> {
        if !self.may_dispatch(a, now) {
            return None;
        }
        let (id, start) = self.queues[a].fifo.pop_front()?;
        if let Some(t) = self.idle_timer.take() {
            sched.cancel(t);
        }
        let class = if self.queues[a].sync {
            self.sync_started.push((id, start, a));
            SYNC
        } else {
            ASYNC
        };
        self.in_driver[class] += 1;
        self.queues[a].dispatched += 1;
        self.dispatched_in_slice += 1;
        Some(id)
    }

    fn arm_idle<E: From<BlockEvent>>(&mut self, q: usize, sched: &mut Scheduler<E>, now: SimTime) {
        let at = (now + self.idle_len(q)).min(self.slice_end.max(now));
        self.idle_timer = Some(sched.schedule_at(at, E::from(BlockEvent::CfqIdle)));
    }

    /// Request `id` of class `sync` completed at `now` (`cfq_completed_request`).
    pub(in crate::model) fn completed<E: From<BlockEvent>>(
        &mut self,
        id: BioId,
        sync: bool,
        sched: &mut Scheduler<E>,
        now: SimTime,
    ) {
        if !sync {
            self.in_driver[ASYNC] -= 1;
            self.queues[ASYNC_Q].dispatched -= 1;
            return;
        }
        self.in_driver[SYNC] -= 1;
        let Some(i) = self.sync_started.iter().position(|&(b, ..)| b == id) else {
            return;
        };
        let (_, start, q) = self.sync_started.swap_remove(i);
        self.queues[q].dispatched -= 1;
        let now_j = self.jiffies(now);
        if self.rules.ramp_from_delayed_sync {
            // Delayed: it took at least the sync FIFO expiry (HZ/8) since it started.
            let expire = i64::from(self.hz / 8);
            if self.jiffies(start) + expire <= now_j {
                self.last_sync = now_j;
            }
        } else {
            self.last_sync = now_j;
        }
        // The active queue, now empty with nothing in the driver, idles for its next request.
        if self.active == Some(q)
            && self.queues[q].fifo.is_empty()
            && self.in_driver == [0, 0]
            && self.queues[q].idle_window
            && !self.cfg.cfq_slice_idle.is_zero()
            && self.idle_timer.is_none()
        {
            self.arm_idle(q, sched, now);
        }
    }

    /// The idle timer fired: the active slice ends.
    pub(in crate::model) fn idle_timer(&mut self) {
        self.idle_timer = None;
        self.active = None;
    }

    /// `cfq_slice_expired`: the active queue goes back into the service tree
    /// (`cfq_resort_rr_list`) if it still has requests.
    fn expire<E: From<BlockEvent>>(&mut self, sched: &mut Scheduler<E>, now: SimTime) {
        if let Some(a) = self.active.take()
            && !self.queues[a].fifo.is_empty()
        {
            self.service_tree_add(a, now);
        }
        if let Some(t) = self.idle_timer.take() {
            sched.cancel(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::base::config::{Elevator, KernelVersion, QueueMode};
    use crate::model::world::Event;

    fn cfq(v: KernelVersion, idle_ms: u64) -> Cfq {
        let mut k = KernelConfig::new(1000);
        k.version = v;
        let cfg = BlockConfig {
            mode: QueueMode::Legacy,
            nr_requests: 128,
            elevator: Elevator::Cfq,
            plug: false,
            unplug_threshold: 4,
            low_latency: v.cfq().has_low_latency,
            cfq_slice_sync: k.hz_div(10),
            cfq_slice_async: k.hz_div(25),
            cfq_slice_idle: SimDuration::from_ms(idle_ms),
            cfq_quantum: 4,
            cfq: v.cfq(),
            hw_tag: true,
            mq: Default::default(),
        };
        Cfq::new(&cfg, &k)
    }

    fn ms(t: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_ms(t)
    }

    /// Dispatches everything CFQ releases at `t`.
    fn drain(c: &mut Cfq, s: &mut Scheduler<Event>, t: SimTime) -> Vec<BioId> {
        std::iter::from_fn(|| c.next(s, t)).collect()
    }

    /// 2.6.32: after a sync completion one async request at a time runs until a sync slice
    /// (100 ms) has passed, then the depth grows one per slice up to the quantum.
    #[test]
    fn the_2_6_32_ramp_counts_from_the_last_sync_completion() {
        let mut s = Scheduler::new();
        let mut c = cfq(KernelVersion::V2_6_32, 0);
        c.insert(1, true, None, (0, 8), ms(0));
        assert_eq!(drain(&mut c, &mut s, ms(0)), [1]);
        for id in 10..30 {
            c.insert(id, false, None, (1000 * u64::from(id), 8), ms(1));
        }
        // Sync in flight: async waits.
        assert!(drain(&mut c, &mut s, ms(1)).is_empty());
        c.completed(1, true, &mut s, ms(5));
        assert_eq!(drain(&mut c, &mut s, ms(5)), [10]);
        assert!(
            drain(&mut c, &mut s, ms(50)).is_empty(),
            "depth 1 until 100 ms"
        );
        c.completed(10, false, &mut s, ms(60));
        assert_eq!(drain(&mut c, &mut s, ms(60)), [11]);
        assert!(
            drain(&mut c, &mut s, ms(105)).is_empty(),
            "depth 1 after 100 ms"
        );
        assert!(drain(&mut c, &mut s, ms(204)).is_empty());
        assert_eq!(drain(&mut c, &mut s, ms(205)), [12], "depth 2 after 200 ms");
        assert_eq!(drain(&mut c, &mut s, ms(305)), [13], "depth 3 after 300 ms");
        assert_eq!(
            drain(&mut c, &mut s, ms(405)),
            [14],
            "capped at the quantum, 4"
        );
        assert_eq!(c.in_driver[ASYNC], 4);
        assert!(drain(&mut c, &mut s, ms(900)).is_empty());
    }

    /// 2.6.31 has no ramp: with nothing sync in flight async runs at the quantum at once.
    #[test]
    fn the_2_6_31_async_queue_waits_only_for_sync_in_flight() {
        let mut s = Scheduler::new();
        let mut c = cfq(KernelVersion::V2_6_31, 0);
        assert!(!c.cfg.low_latency);
        c.insert(1, true, None, (0, 8), ms(0));
        assert_eq!(drain(&mut c, &mut s, ms(0)), [1]);
        for id in 10..20 {
            c.insert(id, false, None, (0, 8), ms(1));
        }
        assert!(drain(&mut c, &mut s, ms(1)).is_empty());
        c.completed(1, true, &mut s, ms(2));
        assert_eq!(drain(&mut c, &mut s, ms(2)), [10, 11, 12, 13]);
    }

    /// 2.6.32 drains async requests before a sync queue with an idle window dispatches;
    /// 2.6.31 sends the sync request at once.
    #[test]
    fn sync_io_waits_for_the_async_drain_from_2_6_32() {
        for (v, first) in [
            (KernelVersion::V2_6_32, vec![]),
            (KernelVersion::V2_6_31, vec![2]),
        ] {
            let mut s = Scheduler::new();
            let mut c = cfq(v, 8);
            c.insert(1, false, None, (0, 8), ms(0));
            assert_eq!(drain(&mut c, &mut s, ms(0)), [1]);
            c.insert(2, true, None, (0, 8), ms(1));
            assert_eq!(drain(&mut c, &mut s, ms(1)), first, "{v:?}");
            c.completed(1, false, &mut s, ms(3));
            let rest = drain(&mut c, &mut s, ms(3));
            assert_eq!(rest.len() + first.len(), 1, "{v:?}");
        }
    }

    /// 2.6.33 ramps from the last *delayed* sync request: a fast read does not restart the
    /// ramp, one that took HZ/8 (125 ms) from allocation to completion does.
    #[test]
    fn the_2_6_33_ramp_counts_from_the_last_delayed_sync_request() {
        let mut s = Scheduler::new();
        let mut c = cfq(KernelVersion::V2_6_33, 0);
        // At start the ramp is as if the last delayed request were HZ ago: depth 4 (quantum).
        for id in 10..20 {
            c.insert(id, false, None, (0, 8), ms(0));
        }
        assert_eq!(drain(&mut c, &mut s, ms(0)).len(), 4);
        for id in 10..14 {
            c.completed(id, false, &mut s, ms(1));
        }
        // A fast read (5 ms) leaves the ramp alone.
        c.insert(1, true, None, (0, 8), ms(1));
        assert_eq!(drain(&mut c, &mut s, ms(1)), [1]);
        c.completed(1, true, &mut s, ms(6));
        assert_eq!(drain(&mut c, &mut s, ms(6)).len(), 4);
        for id in 14..18 {
            c.completed(id, false, &mut s, ms(7));
        }
        // A read that started 130 ms before it completed is delayed: depth 1 again.
        c.insert(2, true, None, (0, 8), ms(7));
        assert_eq!(drain(&mut c, &mut s, ms(7)), [2]);
        c.completed(2, true, &mut s, ms(137));
        assert_eq!(drain(&mut c, &mut s, ms(137)), [18]);
        assert!(drain(&mut c, &mut s, ms(336)).is_empty());
        assert_eq!(
            drain(&mut c, &mut s, ms(337)),
            [19],
            "depth 2, 200 ms after it"
        );
    }

    /// Seeky sync I/O on an NCQ disk: 2.6.31 drops the idle window (no drain, no idling),
    /// 2.6.32 with low_latency keeps it, 2.6.32 without drops it.
    #[test]
    fn seeky_queues_keep_idling_only_with_low_latency() {
        for (v, ll, keeps) in [
            (KernelVersion::V2_6_31, false, false),
            (KernelVersion::V2_6_32, true, true),
            (KernelVersion::V2_6_32, false, false),
            (KernelVersion::V2_6_33, true, true),
        ] {
            let mut c = cfq(v, 8);
            c.cfg.low_latency = ll;
            for i in 0..100u64 {
                // 1 GiB apart: a seek every time.
                c.insert(i as BioId, true, None, ((i % 2) * (1 << 21), 8), ms(i));
            }
            let q = &c.queues[1];
            assert!(q.seek.seeky() && q.seek.valid());
            assert_eq!(q.idle_window, keeps, "{v:?} low_latency {ll}");
        }
        let mut c = cfq(KernelVersion::V2_6_31, 8);
        let q = c.queue_of(true, None);
        assert!(c.queues[q].idle_window, "a new queue idles");
    }

    /// 2.6.33's target latency scales slices only when the busy queues' sync slices exceed
    /// 300 ms: never with qsim's two queues at the default 100 ms, but with 200 ms slices.
    #[test]
    fn target_latency_scales_long_slices_in_2_6_33() {
        let mut c = cfq(KernelVersion::V2_6_33, 8);
        c.insert(1, true, None, (0, 8), ms(0));
        c.insert(2, false, None, (0, 8), ms(0));
        c.busy_avg = 2;
        assert_eq!(c.new_slice(1), SimDuration::from_ms(100));
        c.cfg.cfq_slice_sync = SimDuration::from_ms(200);
        // expect 2 × 200 = 400 ms > 300 ms: 200 × 300 / 400 = 150 ms.
        assert_eq!(c.new_slice(1), SimDuration::from_ms(150));
        let mut old = cfq(KernelVersion::V2_6_32, 8);
        old.cfg.cfq_slice_sync = SimDuration::from_ms(200);
        old.insert(1, true, None, (0, 8), ms(0));
        old.insert(2, false, None, (0, 8), ms(0));
        assert_eq!(old.new_slice(1), SimDuration::from_ms(200));
    }

    const A: Option<ActorId> = Some(ActorId(1));
    const B: Option<ActorId> = Some(ActorId(2));

    /// Two sequential readers with idle windows take the disk by turns: A keeps it for its
    /// 100 ms slice while B waits (CFQ idles for A's next request), then B has it, and B's idle
    /// wait holds A off until the idle timer ends B's slice.
    #[test]
    fn two_sync_readers_with_idle_windows_alternate_by_slices() {
        let mut s = Scheduler::new();
        let mut c = cfq(KernelVersion::V2_6_32, 8);
        c.insert(1, true, A, (0, 128), ms(0));
        assert_eq!(drain(&mut c, &mut s, ms(0)), [1]);
        c.insert(2, true, B, (1 << 21, 128), ms(1));
        assert!(
            drain(&mut c, &mut s, ms(1)).is_empty(),
            "A's read in flight"
        );
        c.completed(1, true, &mut s, ms(2));
        assert!(c.idle_timer.is_some(), "A idles for its next read");
        assert!(drain(&mut c, &mut s, ms(2)).is_empty());
        for k in 0..33u32 {
            let t = 3 + 3 * u64::from(k);
            c.insert(10 + k, true, A, (128 * u64::from(k + 1), 128), ms(t));
            assert_eq!(
                drain(&mut c, &mut s, ms(t)),
                [10 + k],
                "A's slice at {t} ms"
            );
            c.completed(10 + k, true, &mut s, ms(t + 1));
        }
        // A's slice (100 ms) is used up: B's turn.
        assert_eq!(drain(&mut c, &mut s, ms(100)), [2]);
        c.insert(50, true, A, (128 * 40, 128), ms(101));
        assert!(
            drain(&mut c, &mut s, ms(101)).is_empty(),
            "B's read in flight"
        );
        c.completed(2, true, &mut s, ms(105));
        assert!(
            drain(&mut c, &mut s, ms(105)).is_empty(),
            "B idles though A waits"
        );
        c.idle_timer();
        assert_eq!(drain(&mut c, &mut s, ms(113)), [50]);
    }

    /// Per-context seek statistics: a seeky reader loses its idle window (2.6.32 without
    /// low_latency, NCQ) and idles only CFQ_MIN_TT, while a sequential reader beside it keeps
    /// its own; the same two streams merged into one queue would look seeky.
    #[test]
    fn a_seeky_reader_loses_its_idle_window_without_affecting_the_other() {
        let mut c = cfq(KernelVersion::V2_6_32, 8);
        c.cfg.low_latency = false;
        let mut merged = cfq(KernelVersion::V2_6_32, 8);
        merged.cfg.low_latency = false;
        for i in 0..100u32 {
            let seeky = (u64::from(i) % 2) * (1 << 21);
            let sequential = (1 << 22) + 128 * u64::from(i);
            c.insert(2 * i, true, A, (seeky, 8), ms(u64::from(i)));
            c.insert(2 * i + 1, true, B, (sequential, 128), ms(u64::from(i)));
            merged.insert(
                2 * i,
                true,
                None,
                (128 * u64::from(i), 128),
                ms(u64::from(i)),
            );
            merged.insert(2 * i + 1, true, None, (sequential, 128), ms(u64::from(i)));
        }
        let (qa, qb) = (c.queue_of(true, A), c.queue_of(true, B));
        assert!(c.queues[qa].seek.seeky() && !c.queues[qa].idle_window);
        assert!(!c.queues[qb].seek.seeky() && c.queues[qb].idle_window);
        assert_eq!(c.idle_len(qa), SimDuration::from_ms(2));
        assert_eq!(c.idle_len(qb), SimDuration::from_ms(8));
        let q = merged.queue_of(true, None);
        assert!(
            merged.queues[q].seek.seeky(),
            "two sequential streams interleaved"
        );
    }

    /// The async queue waits while any sync queue has a request in the driver.
    #[test]
    fn the_async_queue_waits_while_any_sync_request_is_in_flight() {
        let mut s = Scheduler::new();
        let mut c = cfq(KernelVersion::V2_6_31, 0);
        c.insert(1, true, A, (0, 8), ms(0));
        c.insert(2, true, B, (1 << 20, 8), ms(0));
        c.insert(3, false, None, (1 << 22, 8), ms(0));
        // Without idling, A's slice ends as its queue empties and B's starts.
        assert_eq!(drain(&mut c, &mut s, ms(0)), [1, 2]);
        c.completed(1, true, &mut s, ms(1));
        assert!(
            drain(&mut c, &mut s, ms(1)).is_empty(),
            "B's read in flight"
        );
        c.completed(2, true, &mut s, ms(2));
        assert_eq!(drain(&mut c, &mut s, ms(2)), [3]);
    }

    /// A scripted mix of sync and async requests with idling: the order CFQ dispatches in.
    fn scripted(ctx: Option<ActorId>) -> Vec<(u64, BioId)> {
        let mut s = Scheduler::new();
        let mut c = cfq(KernelVersion::V2_6_32, 8);
        let (mut out, mut flight) = (Vec::new(), Vec::<(u64, BioId, bool)>::new());
        let mut fire: Option<SimTime> = None;
        let mut next: BioId = 0;
        for t in 0..600u64 {
            let now = ms(t);
            if fire.is_some_and(|f| f <= now) {
                c.idle_timer();
                fire = None;
            }
            let done: Vec<_> = flight.iter().filter(|&&(d, ..)| d <= t).copied().collect();
            flight.retain(|&(d, ..)| d > t);
            for (_, id, sync) in done {
                c.completed(id, sync, &mut s, now);
            }
            for (every, sync) in [(7, true), (5, false)] {
                if t % every == 0 {
                    let far = if t % 49 == 0 { 1 << 22 } else { 0 };
                    c.insert(next, sync, ctx.filter(|_| sync), (far + 128 * t, 128), now);
                    next += 1;
                }
            }
            for id in drain(&mut c, &mut s, now) {
                let sync = c.sync_started.iter().any(|&(b, ..)| b == id);
                out.push((t, id));
                flight.push((t + 3, id, sync));
            }
            match (c.idle_timer, c.active) {
                (Some(_), Some(a)) if fire.is_none() => {
                    fire = Some((now + c.idle_len(a)).min(c.slice_end.max(now)));
                }
                (None, _) => fire = None,
                _ => {}
            }
        }
        out
    }

    /// One process submitting its own I/O is served exactly as the crypt threads' shared
    /// queue was: the per-context queues change nothing with a single context.
    #[test]
    fn one_process_behaves_as_the_shared_sync_queue() {
        let own = scripted(A);
        assert!(own.len() > 100, "{} dispatched", own.len());
        assert_eq!(own, scripted(None));
    }

    /// Three readers with backlogs share the disk round-robin by slices: each becomes busy
    /// `(busy − 1) × 80 ms` after the one before on the service tree, and a queue expired with
    /// requests left goes back behind the others.
    #[test]
    fn busy_sync_queues_take_turns_in_service_tree_order() {
        let mut s = Scheduler::new();
        let mut c = cfq(KernelVersion::V2_6_32, 8);
        let ctxs = [A, B, Some(ActorId(3))];
        for (i, &ctx) in ctxs.iter().enumerate() {
            for k in 0..1000u64 {
                let id = (1000 * i as u64 + k) as BioId;
                c.insert(id, true, ctx, ((i as u64) << 22 | (128 * k), 128), ms(0));
            }
        }
        let keys: Vec<i64> = (1..4).map(|q| c.queues[q].rb_key.0).collect();
        assert_eq!(keys, [0, 80, 160], "cfq_slice_offset at HZ=1000");
        let (mut owners, mut flight) = (Vec::new(), Vec::new());
        for t in 0..450u64 {
            for id in flight.drain(..) {
                c.completed(id, true, &mut s, ms(t));
            }
            for id in drain(&mut c, &mut s, ms(t)) {
                let owner = id / 1000;
                if owners.last() != Some(&owner) {
                    owners.push(owner);
                }
                flight.push(id);
            }
        }
        assert_eq!(owners, [0, 1, 2, 0, 1]);
    }
}
