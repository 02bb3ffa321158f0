//! CFQ, the elevator of the legacy request queue, as the kernel version's `block/cfq-iosched.c`
//! runs it for qsim's two io contexts (one sync queue, one async queue): slices, preemption,
//! the quantum, idling, and the version's rules ([`CfqRules`]): the `low_latency` async ramp
//! (from the last sync completion in 2.6.32, the last *delayed* one in 2.6.33), the async drain
//! before sync I/O, idling for seeky queues on NCQ disks, and 2.6.33's target latency.
//! docs/model/block.md §5 gives each rule with its kernel function.
//!
//! Under dm-crypt every request comes from a crypt thread or kcryptd_io, so CFQ sees one io
//! context per class; qsim's CFQ therefore schedules classes rather than processes.

use super::bio::BioId;
use super::block::BlockEvent;
use super::event::Event;
use crate::engine::{EventId, Scheduler, SimDuration, SimTime};
use crate::model::config::{BlockConfig, CfqRules, KernelConfig};
use std::collections::VecDeque;

/// Index of the sync queue.
const SYNC: usize = 0;
/// Index of the async queue.
const ASYNC: usize = 1;
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

/// The CFQ elevator's state.
#[derive(Debug)]
pub(super) struct Cfq {
    /// Queued requests per class, each with its start time (allocation, `rq->start_time`).
    queues: [VecDeque<(BioId, SimTime)>; 2],
    active: Option<usize>,
    slice_end: SimTime,
    dispatched_in_slice: u32,
    inflight: [u32; 2],
    idle_timer: Option<EventId>,
    /// Start times of the sync requests in the driver (for 2.6.33's delayed-sync rule).
    sync_started: Vec<(BioId, SimTime)>,
    /// `last_end_sync_rq` (2.6.32) or `last_delayed_sync` (2.6.33), in jiffies.
    last_sync: i64,
    seek: Seek,
    /// The sync queue's idle window (`cfq_cfqq_idle_window`, or 2.6.33's `cfq_should_idle`).
    idle_window: bool,
    /// `busy_queues_avg` of the one group (2.6.33's target latency).
    busy_avg: u32,
    cfg: BlockConfig,
    rules: CfqRules,
    hz: u32,
    jiffy_ns: u64,
}

impl Cfq {
    /// An idle CFQ for `cfg` under `kernel`'s HZ.
    pub(super) fn new(cfg: &BlockConfig, kernel: &KernelConfig) -> Self {
        let rules = cfg.cfq;
        Cfq {
            queues: [VecDeque::new(), VecDeque::new()],
            active: None,
            slice_end: SimTime::ZERO,
            dispatched_in_slice: 0,
            inflight: [0; 2],
            idle_timer: None,
            sync_started: Vec::new(),
            // 2.6.32 starts the ramp at init; 2.6.33 as if the last delayed request were HZ ago.
            last_sync: if rules.ramp_from_delayed_sync {
                -i64::from(kernel.hz)
            } else {
                0
            },
            seek: Seek::default(),
            idle_window: !cfg.cfq_slice_idle.is_zero(),
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

    /// A request of `sectors` sectors at sector `pos` is queued (`cfq_insert_request`, then
    /// `cfq_rq_enqueued`'s seek and idle-window updates for a sync one).
    pub(super) fn insert(&mut self, id: BioId, sync: bool, pos: u64, sectors: u64, now: SimTime) {
        let class = if sync { SYNC } else { ASYNC };
        self.queues[class].push_back((id, now));
        if sync {
            self.seek.update(pos, sectors);
            self.idle_window = self.update_idle_window();
        }
    }

    /// `cfq_update_idle_window` (think time not modelled).
    fn update_idle_window(&self) -> bool {
        if self.cfg.cfq_slice_idle.is_zero() {
            return false;
        }
        if self.rules.lone_sync_queue_idles {
            // 2.6.33: the one sync queue is the last of its service tree, so it idles.
            return true;
        }
        let keeps = self.rules.seeky_idle_with_latency && self.cfg.low_latency;
        !(self.cfg.hw_tag && self.seek.seeky() && !keeps)
    }

    /// How long the idle timer waits: `slice_idle`, at most `CFQ_MIN_TT` for a seeky queue
    /// before 2.6.33 (`cfq_arm_slice_timer`).
    fn idle_len(&self) -> SimDuration {
        let idle = self.cfg.cfq_slice_idle;
        if !self.rules.lone_sync_queue_idles && self.seek.valid() && self.seek.seeky() {
            // msecs_to_jiffies rounds up.
            let j = (MIN_TT_MS * u64::from(self.hz)).div_ceil(1000);
            idle.min(SimDuration::from_ns(j * self.jiffy_ns))
        } else {
            idle
        }
    }

    /// `cfq_may_dispatch` for the active queue `a`.
    fn may_dispatch(&self, a: usize, now: SimTime) -> bool {
        // Drain async requests before sync I/O starts (2.6.32+).
        if a == SYNC
            && self.rules.drain_async_before_sync
            && self.idle_window
            && self.inflight[ASYNC] > 0
        {
            return false;
        }
        // An async queue waits while sync I/O is in flight (every version).
        if a == ASYNC && self.inflight[SYNC] > 0 {
            return false;
        }
        let mut max = self.cfg.cfq_quantum.max(1);
        if a == ASYNC && self.cfg.low_latency {
            // The async depth ramps up one request per sync slice since the last sync request
            // (completed, or delayed in 2.6.33).
            let slice = (self.cfg.cfq_slice_sync.as_ns() / self.jiffy_ns).max(1) as i64;
            let since = (self.jiffies(now) - self.last_sync).max(0);
            let mut depth = u32::try_from(since / slice).unwrap_or(u32::MAX);
            if depth == 0 && self.inflight[ASYNC] == 0 {
                depth = 1;
            }
            max = max.min(depth);
        }
        self.inflight[a] < max
    }

    /// The length of a new slice of `pick`: its base slice, scaled into the 300 ms target
    /// latency with `low_latency` in 2.6.33 (`cfq_set_prio_slice`).
    fn new_slice(&mut self, pick: usize) -> SimDuration {
        let base = if pick == SYNC {
            self.cfg.cfq_slice_sync
        } else {
            self.cfg.cfq_slice_async
        };
        if !(self.rules.target_latency && self.cfg.low_latency) {
            return base;
        }
        let busy = self.queues.iter().filter(|q| !q.is_empty()).count() as u32;
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

    /// The next request to hand to the device, if CFQ releases one now.
    pub(super) fn next(&mut self, sched: &mut Scheduler<Event>, now: SimTime) -> Option<BioId> {
        // Each pass either dispatches, waits, or expires the active slice; a fresh slice always
        // dispatches or waits, so this ends within three passes.
        for _ in 0..4 {
            let Some(a) = self.active else {
                let pick = if !self.queues[SYNC].is_empty() {
                    SYNC
                } else if !self.queues[ASYNC].is_empty() {
                    ASYNC
                } else {
                    return None;
                };
                self.active = Some(pick);
                self.dispatched_in_slice = 0;
                self.slice_end = now + self.new_slice(pick);
                continue;
            };
            // A sync request preempts an async slice.
            let preempt = a == ASYNC && !self.queues[SYNC].is_empty();
            let used_up = now >= self.slice_end
                || (a == ASYNC && self.dispatched_in_slice >= ASYNC_RQ_PER_SLICE);
            let other_waits = !self.queues[1 - a].is_empty();
            if preempt || (used_up && (self.inflight[a] == 0 || other_waits)) {
                self.expire(sched);
                continue;
            }
            if !self.queues[a].is_empty() {
                return self.dispatch(a, sched, now);
            }
            // The active queue is empty: idle for more sync I/O, or expire.
            if a == SYNC
                && self.idle_window
                && !self.cfg.cfq_slice_idle.is_zero()
                && now < self.slice_end
            {
                if self.idle_timer.is_some() || self.inflight[SYNC] > 0 {
                    return None;
                }
                if self.inflight[ASYNC] == 0 {
                    self.arm_idle(sched, now);
                    return None;
                }
            }
            self.expire(sched);
        }
        None
    }

    fn dispatch(&mut self, a: usize, sched: &mut Scheduler<Event>, now: SimTime) -> Option<BioId> {
        if !self.may_dispatch(a, now) {
            return None;
        }
        let (id, start) = self.queues[a].pop_front()?;
        if let Some(t) = self.idle_timer.take() {
            sched.cancel(t);
        }
        if a == SYNC {
            self.sync_started.push((id, start));
        }
        self.inflight[a] += 1;
        self.dispatched_in_slice += 1;
        Some(id)
    }

    fn arm_idle(&mut self, sched: &mut Scheduler<Event>, now: SimTime) {
        let at = (now + self.idle_len()).min(self.slice_end.max(now));
        self.idle_timer = Some(sched.schedule_at(at, Event::Block(BlockEvent::CfqIdle)));
    }

    /// Request `id` of class `sync` completed at `now` (`cfq_completed_request`).
    pub(super) fn completed(
        &mut self,
        id: BioId,
        sync: bool,
        sched: &mut Scheduler<Event>,
        now: SimTime,
    ) {
        let class = if sync { SYNC } else { ASYNC };
        self.inflight[class] -= 1;
        if !sync {
            return;
        }
        let start = self
            .sync_started
            .iter()
            .position(|&(b, _)| b == id)
            .map(|i| self.sync_started.swap_remove(i).1);
        let now_j = self.jiffies(now);
        if self.rules.ramp_from_delayed_sync {
            // Delayed: it took at least the sync FIFO expiry (HZ/8) since it started.
            let expire = i64::from(self.hz / 8);
            if start.is_some_and(|s| self.jiffies(s) + expire <= now_j) {
                self.last_sync = now_j;
            }
        } else {
            self.last_sync = now_j;
        }
        if self.active == Some(SYNC)
            && self.queues[SYNC].is_empty()
            && self.inflight == [0, 0]
            && self.idle_window
            && !self.cfg.cfq_slice_idle.is_zero()
            && self.idle_timer.is_none()
        {
            self.arm_idle(sched, now);
        }
    }

    /// The idle timer fired: the sync slice ends.
    pub(super) fn idle_timer(&mut self) {
        self.idle_timer = None;
        self.active = None;
    }

    fn expire(&mut self, sched: &mut Scheduler<Event>) {
        self.active = None;
        if let Some(t) = self.idle_timer.take() {
            sched.cancel(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::{Elevator, KernelVersion, QueueMode};

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
        c.insert(1, true, 0, 8, ms(0));
        assert_eq!(drain(&mut c, &mut s, ms(0)), [1]);
        for id in 10..30 {
            c.insert(id, false, 1000 * u64::from(id), 8, ms(1));
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
        assert_eq!(c.inflight[ASYNC], 4);
        assert!(drain(&mut c, &mut s, ms(900)).is_empty());
    }

    /// 2.6.31 has no ramp: with nothing sync in flight async runs at the quantum at once.
    #[test]
    fn the_2_6_31_async_queue_waits_only_for_sync_in_flight() {
        let mut s = Scheduler::new();
        let mut c = cfq(KernelVersion::V2_6_31, 0);
        assert!(!c.cfg.low_latency);
        c.insert(1, true, 0, 8, ms(0));
        assert_eq!(drain(&mut c, &mut s, ms(0)), [1]);
        for id in 10..20 {
            c.insert(id, false, 0, 8, ms(1));
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
            c.insert(1, false, 0, 8, ms(0));
            assert_eq!(drain(&mut c, &mut s, ms(0)), [1]);
            c.insert(2, true, 0, 8, ms(1));
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
            c.insert(id, false, 0, 8, ms(0));
        }
        assert_eq!(drain(&mut c, &mut s, ms(0)).len(), 4);
        for id in 10..14 {
            c.completed(id, false, &mut s, ms(1));
        }
        // A fast read (5 ms) leaves the ramp alone.
        c.insert(1, true, 0, 8, ms(1));
        assert_eq!(drain(&mut c, &mut s, ms(1)), [1]);
        c.completed(1, true, &mut s, ms(6));
        assert_eq!(drain(&mut c, &mut s, ms(6)).len(), 4);
        for id in 14..18 {
            c.completed(id, false, &mut s, ms(7));
        }
        // A read that started 130 ms before it completed is delayed: depth 1 again.
        c.insert(2, true, 0, 8, ms(7));
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
                c.insert(i as BioId, true, (i % 2) * (1 << 21), 8, ms(i));
            }
            assert!(c.seek.seeky() && c.seek.valid());
            assert_eq!(c.idle_window, keeps, "{v:?} low_latency {ll}");
        }
        let c = cfq(KernelVersion::V2_6_31, 8);
        assert!(c.idle_window, "a new queue idles");
    }

    /// 2.6.33's target latency scales slices only when the busy queues' sync slices exceed
    /// 300 ms: never with qsim's two queues at the default 100 ms, but with 200 ms slices.
    #[test]
    fn target_latency_scales_long_slices_in_2_6_33() {
        let mut c = cfq(KernelVersion::V2_6_33, 8);
        c.insert(1, true, 0, 8, ms(0));
        c.insert(2, false, 0, 8, ms(0));
        c.busy_avg = 2;
        assert_eq!(c.new_slice(SYNC), SimDuration::from_ms(100));
        c.cfg.cfq_slice_sync = SimDuration::from_ms(200);
        // expect 2 × 200 = 400 ms > 300 ms: 200 × 300 / 400 = 150 ms.
        assert_eq!(c.new_slice(SYNC), SimDuration::from_ms(150));
        let mut old = cfq(KernelVersion::V2_6_32, 8);
        old.cfg.cfq_slice_sync = SimDuration::from_ms(200);
        old.insert(1, true, 0, 8, ms(0));
        old.insert(2, false, 0, 8, ms(0));
        assert_eq!(old.new_slice(SYNC), SimDuration::from_ms(200));
    }
}
