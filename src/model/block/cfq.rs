//! CFQ, the elevator of the legacy request queue, as the kernel version's `block/cfq-iosched.c`
//! runs it: one sync queue per io context, one async queue shared by every writer, slices served
//! from the service tree, preemption, the quantum, idling, and the version's rules
//! ([`CfqRules`]): the `low_latency` async ramp (from the last sync completion in 2.6.32, the last
//! *delayed* one in 2.6.33), the async drain before sync I/O, idling for seeky queues on NCQ
//! disks, and 2.6.33's target latency. docs/model/block.md §5 gives each rule with its kernel
//! function.
//!
//! Within a queue, requests go in one-way elevator order from the head's position, with short
//! back seeks at twice the cost (`cfq_choose_req`, `cfq_find_next_rq`), except that the first
//! dispatch of a slice takes the queue's oldest request if it has waited past its FIFO expiry
//! (`cfq_check_fifo`).
//!
//! 2.6.30 to 2.6.32 also file every busy queue by its next request's sector (`prio_trees`,
//! [`prio_tree`]): a queue running empty hands the disk to a queue whose next request lies
//! within the active io context's mean seek distance of the head instead of idling
//! (`cfq_close_cooperator`), and a request that close preempts an idling queue
//! (`cfq_rq_close` in `cfq_should_preempt`).
//!
//! The io context is the submitter's: a process submitting its own I/O (a fio job's or a
//! fake-gitk copy's context, policy `none` or `inline`) gets its own sync queue with its own
//! seek statistics and idle window (`cfq_get_queue` keyed by the task's `cfq_io_context`); I/O
//! submitted by dm-crypt's threads shares one sync queue, as qsim has always modelled it.

use crate::engine::{EventId, Scheduler, SimDuration, SimTime};
use crate::model::base::bio::BioId;
use crate::model::base::config::{
    BlockConfig, CFQ_BACK_MAX_SECTORS, CFQ_BACK_PENALTY, CfqRules, KernelConfig, cfq_fifo_expire,
};
use crate::model::base::ids::ActorId;
use crate::model::block::queue::BlockEvent;
use prio_tree::{RbTree, Search};
use std::collections::{BTreeSet, VecDeque};

mod prio_tree;

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
/// `CFQ_HW_QUEUE_MIN`: the driver depth (and queue length) that counts as load, and the peak
/// depth that counts as a queueing disk.
const HW_QUEUE_MIN: u32 = 5;
/// Completions under load between two `hw_tag` estimates, less one (`hw_tag_samples++ < 50`).
const HW_TAG_SAMPLES: u32 = 50;
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

/// One queued request: its bio, its io context (`RQ_CIC`), when it was queued
/// (`rq->start_time`), its first sector and length, and its insertion number (which orders
/// requests at the same sector).
#[derive(Debug, Clone, Copy)]
struct Rq {
    id: BioId,
    ctx: Option<ActorId>,
    start: SimTime,
    pos: u64,
    sectors: u64,
    seq: u64,
}

/// A request's place in its queue's sector order (`cfqq->sort_list`): first sector, then
/// insertion number.
type SortKey = (u64, u64);

/// `cfq_choose_req`: of two requests of one queue, the one to serve first from the head at
/// `last`: the nearer ahead, a back seek of at most [`CFQ_BACK_MAX_SECTORS`] counting
/// [`CFQ_BACK_PENALTY`] times its distance; farther behind "wraps", and of two wrapped requests the
/// lower goes first (one back seek). Equal distances take the higher sector.
fn choose(a: Option<SortKey>, b: Option<SortKey>, last: u64) -> Option<SortKey> {
    let (Some(r1), Some(r2)) = (a, b) else {
        return a.or(b);
    };
    if r1 == r2 {
        return Some(r2);
    }
    let dist = |s: u64| {
        if s >= last {
            Some(s - last)
        } else if s + CFQ_BACK_MAX_SECTORS >= last {
            Some((last - s) * CFQ_BACK_PENALTY)
        } else {
            None
        }
    };
    let (s1, s2) = (r1.0, r2.0);
    Some(match (dist(s1), dist(s2)) {
        (Some(d1), Some(d2)) => {
            if d1 < d2 || (d1 == d2 && s1 >= s2) {
                r1
            } else {
                r2
            }
        }
        (Some(_), None) => r1,
        (None, Some(_)) => r2,
        (None, None) => {
            if s1 <= s2 {
                r1
            } else {
                r2
            }
        }
    })
}

/// The sector of queue `n`'s next request, the key `prio_trees` compare against (a filed queue
/// always has one: it leaves the tree when its last request is dispatched).
fn next_pos(queues: &[CfqQueue], n: usize) -> u64 {
    queues[n].next_rq.map_or(0, |(pos, _)| pos)
}

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

/// `cfq_update_io_thinktime`: the decaying mean time, in jiffies, from an io context's last
/// sync completion to its next request, each sample capped at twice `slice_idle`.
#[derive(Debug, Clone, Copy, Default)]
struct ThinkTime {
    /// `cic->last_end_request`, in jiffies.
    last_end: i64,
    samples: u64,
    total: u64,
    mean: u64,
}

impl ThinkTime {
    /// A request arrives at jiffy `now`.
    fn update(&mut self, now: i64, cap: u64) {
        let t = ((now - self.last_end).max(0) as u64).min(cap);
        self.samples = (7 * self.samples + 256) / 8;
        self.total = (7 * self.total + 256 * t) / 8;
        self.mean = (self.total + 128) / self.samples;
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
    /// Queued requests in arrival order (`cfqq->fifo`).
    fifo: VecDeque<Rq>,
    /// The same requests in sector order (`cfqq->sort_list`).
    sorted: BTreeSet<SortKey>,
    /// The request the queue serves next unless its FIFO has expired (`cfqq->next_rq`).
    next_rq: Option<SortKey>,
    /// The FIFO was checked in this slice (`CFQ_CFQQ_FLAG_fifo_expire`).
    fifo_checked: bool,
    /// Requests of this queue in the driver (`cfqq->dispatched`).
    dispatched: u32,
    /// The seek statistics: the context's (`cic->seek_*`, its own async requests included)
    /// before 2.6.33, the queue's (`cfqq->seek_*`) from it.
    seek: Seek,
    /// The context's think time (`cic->ttime_*`), from every request of the context (its own
    /// async ones included) since its last sync completion.
    think: ThinkTime,
    /// `cfq_cfqq_idle_window` (or 2.6.33's `cfq_should_idle`).
    idle_window: bool,
    /// Place on the service tree: `rb_key` in jiffies, then the order of insertion (the
    /// red-black tree puts an equal key to the right).
    rb_key: (i64, u64),
    /// The queue took the disk as a close cooperator, and may not again until it is next
    /// chosen from the service tree (`CFQ_CFQQ_FLAG_coop`).
    coop: bool,
    /// The queue preempted as a close cooperator, so its first selection keeps `coop`
    /// (`CFQ_CFQQ_FLAG_coop_preempt`, 2.6.32).
    coop_preempt: bool,
}

impl CfqQueue {
    /// `cfq_init_cfqq`: a sync queue starts with an idle window.
    fn new(ctx: Option<ActorId>, sync: bool, idles: bool) -> Self {
        CfqQueue {
            ctx,
            sync,
            fifo: VecDeque::new(),
            sorted: BTreeSet::new(),
            next_rq: None,
            fifo_checked: false,
            dispatched: 0,
            seek: Seek::default(),
            think: ThinkTime::default(),
            idle_window: sync && idles,
            rb_key: (0, 0),
            coop: false,
            coop_preempt: false,
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
    /// Where the last request handed to the device ends (`cfqd->last_position`), in sectors.
    last_position: u64,
    /// Requests queued so far (orders requests at the same sector).
    rq_seq: u64,
    /// `busy_queues_avg` of the one group (2.6.33's target latency).
    busy_avg: u32,
    /// Requests waiting in the queues (`cfqd->rq_queued`).
    queued: u32,
    /// CFQ's estimate that the disk queues commands (`cfqd->hw_tag`): it starts set and is
    /// re-estimated from the peak in-driver depth at every 51st completion under load
    /// (`cfq_update_hw_tag`).
    hw_tag: bool,
    /// Completions under load counted towards the next estimate (`hw_tag_samples`).
    hw_tag_samples: u32,
    /// The deepest the driver has been since the last estimate (`rq_in_driver_peak`).
    in_driver_peak: u32,
    /// Every busy queue filed by the sector of its next request as it was when the queue was
    /// last filed (`prio_trees`; qsim's queues all have the default priority, so one tree).
    prio: RbTree,
    /// The io context of the slice's first dispatched request (`cfqd->active_cic`): `None`
    /// before it, then the queue whose seek statistics are that context's (`None` inside: a
    /// context whose statistics qsim does not keep, which counts as having no valid samples).
    active_cic: Option<Option<usize>>,
    /// The queue that preempted the last slice, served next (`cfq_preempt_queue` puts it at
    /// the front of the service tree).
    front: Option<usize>,
    /// A sync request arrived while the async queue had the disk (`cfq_should_preempt`).
    sync_arrived: bool,
    /// Slices handed to a close cooperator, and preemptions by a close request.
    coop_counts: [u64; 2],
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
            last_position: 0,
            rq_seq: 0,
            busy_avg: 0,
            queued: 0,
            hw_tag: true,
            hw_tag_samples: 0,
            in_driver_peak: 0,
            prio: RbTree::default(),
            active_cic: None,
            front: None,
            sync_arrived: false,
            coop_counts: [0; 2],
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
    fn queue_of(&mut self, sync: bool, ctx: Option<ActorId>, now: SimTime) -> usize {
        if !sync {
            return ASYNC_Q;
        }
        if let Some(i) = self.queues.iter().position(|q| q.sync && q.ctx == ctx) {
            return i;
        }
        let idles = !self.cfg.cfq_slice_idle.is_zero();
        let mut queue = CfqQueue::new(ctx, true, idles);
        // `cfq_alloc_io_context`: the context's think time counts from its creation.
        queue.think.last_end = self.jiffies(now);
        self.queues.push(queue);
        self.queues.len() - 1
    }

    /// `slice_idle` in whole jiffies.
    fn slice_idle_jiffies(&self) -> u64 {
        self.cfg.cfq_slice_idle.as_ns() / self.jiffy_ns
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
    /// `cfq_rq_enqueued`'s seek and idle-window updates for a sync one, and its preemption
    /// check).
    pub(in crate::model) fn insert<E: From<BlockEvent>>(
        &mut self,
        id: BioId,
        sync: bool,
        ctx: Option<ActorId>,
        (pos, sectors): (u64, u64),
        sched: &mut Scheduler<E>,
        now: SimTime,
    ) {
        let q = self.queue_of(sync, ctx, now);
        self.rq_seq += 1;
        let rq = Rq {
            id,
            ctx,
            start: now,
            pos,
            sectors,
            seq: self.rq_seq,
        };
        let last = self.last_position;
        self.queued += 1;
        let queue = &mut self.queues[q];
        queue.fifo.push_back(rq);
        queue.sorted.insert((pos, rq.seq));
        // `cfq_add_rq_rb`: the new request may be the better next one, and the queue is then
        // filed again by its sector.
        let prev = queue.next_rq;
        queue.next_rq = choose(prev, Some((pos, rq.seq)), last);
        let refile = queue.next_rq != prev;
        if self.queues[q].fifo.len() == 1 {
            self.service_tree_add(q, now);
        }
        if refile {
            self.prio_tree_add(q);
        }
        if sync && self.active.is_some_and(|a| !self.queues[a].sync) {
            self.sync_arrived = true;
        }
        let (now_j, cap) = (self.jiffies(now), 2 * self.slice_idle_jiffies());
        if sync {
            // `cfq_rq_enqueued`: think time, seek distance, then the idle window.
            self.queues[q].think.update(now_j, cap);
            self.queues[q].seek.update(pos, sectors);
            self.queues[q].idle_window = self.update_idle_window(q);
        } else if let Some(c) = ctx {
            // An async request of a process's own (a direct reclaimer's swap-out): it goes to
            // the shared async queue, but `cfq_rq_enqueued` still moves its io context's think
            // time and, before 2.6.33, its seek statistics. qsim keeps a context's statistics
            // in its sync queue, created here if the context has none yet; its idle window is
            // recomputed at its next sync request (`cfq_update_idle_window` skips an async
            // queue).
            let s = self.queue_of(true, Some(c), now);
            self.queues[s].think.update(now_j, cap);
            if self.rules.seek_per_context {
                self.queues[s].seek.update(pos, sectors);
            }
        }
        if self.preempts_as_close(q, pos) {
            // `cfq_preempt_queue`: the idling slice ends and this queue is served next.
            self.coop_counts[1] += 1;
            self.expire(sched, now);
            self.front = Some(q);
        }
    }

    /// The last rule of `cfq_should_preempt` (2.6.30 to 2.6.32): a request of queue `q` at
    /// sector `pos` preempts the active queue while that queue idles for its next request, if
    /// it lies as close to the head as the active context's requests do (`cfq_rq_close`);
    /// 2.6.32 lets a queue already marked a cooperator do so only as the one busy queue, and
    /// marks it (`coop`, and `coop_preempt` so that its selection keeps the mark).
    fn preempts_as_close(&mut self, q: usize, pos: u64) -> bool {
        let (Some(a), Some(cic)) = (self.active, self.active_cic) else {
            return false;
        };
        if !self.rules.close_cooperator
            || a == q
            || self.idle_timer.is_none()
            || !self.rq_close(cic, pos)
        {
            return false;
        }
        if self.rules.coop_preempt_marks {
            if self.queues[q].coop && self.busy() > 1 {
                return false;
            }
            self.queues[q].coop = true;
            self.queues[q].coop_preempt = true;
        }
        true
    }

    /// `cfq_rq_close`: a request at sector `pos` is as close to the head as the active
    /// context's requests are, within its mean seek distance (`CIC_SEEK_THR` while its
    /// statistics are not yet valid, or not kept: `cic` is the queue holding them).
    fn rq_close(&self, cic: Option<usize>, pos: u64) -> bool {
        let sdist = match cic.map(|c| &self.queues[c].seek) {
            Some(seek) if seek.valid() => seek.mean,
            _ => SEEK_THR,
        };
        pos.abs_diff(self.last_position) <= sdist
    }

    /// `cfq_prio_tree_add`: queue `q` is filed again by its next request's sector, or left
    /// out while it has none, or while another queue's next request starts at that same
    /// sector as the search finds it.
    fn prio_tree_add(&mut self, q: usize) {
        if !self.rules.close_cooperator {
            return;
        }
        if self.prio.contains(q) {
            self.prio.erase(q);
        }
        let Some((sector, _)) = self.queues[q].next_rq else {
            return;
        };
        let queues = &self.queues;
        if let Search::Vacant { parent, right } =
            self.prio.search(|n| sector.cmp(&next_pos(queues, n)))
        {
            self.prio.insert(q, parent, right);
        }
    }

    /// `cfq_close_cooperator` without marking (its `probe`): a busy queue, not already marked
    /// a cooperator, whose next request lies close to the head (`cfqq_close`): the one the
    /// search for the head's sector ends at (at once if its next request starts there), else
    /// its neighbour on the head's side. Needs a request dispatched in this slice.
    fn close_cooperator(&self) -> Option<usize> {
        if !self.rules.close_cooperator {
            return None;
        }
        let cic = self.active_cic?;
        let sector = self.last_position;
        let found = match self.prio.search(|n| sector.cmp(&next_pos(&self.queues, n))) {
            Search::Found(n) => n,
            Search::Vacant { parent, .. } => {
                let p = parent?;
                let at = next_pos(&self.queues, p);
                if self.rq_close(cic, at) {
                    p
                } else {
                    let n = if at < sector {
                        self.prio.next(p)
                    } else {
                        self.prio.prev(p)
                    }?;
                    if !self.rq_close(cic, next_pos(&self.queues, n)) {
                        return None;
                    }
                    n
                }
            }
        };
        (!self.queues[found].coop).then_some(found)
    }

    /// `cfq_update_idle_window`: none without `slice_idle`; none for a seeky context on an NCQ
    /// disk (unless 2.6.32's `low_latency` keeps it); else, once the think time has 80 samples,
    /// idle while the context thinks no longer than `slice_idle` (2.6.32: `CFQ_MIN_TT` for a
    /// seeky one); before that, as it was.
    fn update_idle_window(&self, q: usize) -> bool {
        if self.cfg.cfq_slice_idle.is_zero() {
            return false;
        }
        if self.rules.lone_sync_queue_idles {
            // 2.6.33: a sync queue alone on its service tree idles.
            return true;
        }
        let queue = &self.queues[q];
        let keeps = self.rules.seeky_idle_with_latency && self.cfg.low_latency;
        if self.hw_tag && queue.seek.seeky() && !keeps {
            return false;
        }
        if !queue.think.valid() {
            return queue.idle_window;
        }
        let limit =
            if self.rules.seeky_idle_with_latency && queue.seek.valid() && queue.seek.seeky() {
                (MIN_TT_MS * u64::from(self.hz)).div_ceil(1000)
            } else {
                self.slice_idle_jiffies()
            };
        queue.think.mean <= limit
    }

    /// `cfq_arm_slice_timer` (2.6.32+): no idling when the context's mean think time exceeds
    /// what is left of the slice.
    fn thinks_past_slice(&self, q: usize, now: SimTime) -> bool {
        let think = &self.queues[q].think;
        self.rules.idle_within_slice_only
            && think.valid()
            && self.jiffies(self.slice_end) - self.jiffies(now) < think.mean as i64
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
        if q.dispatched >= max {
            // At its quantum, only the one busy queue goes on: to 4 × quantum, or (2.6.33)
            // without limit.
            if self.busy() > 1 {
                return false;
            }
            max = if self.rules.sole_queue_unlimited {
                u32::MAX
            } else {
                max.saturating_mul(4)
            };
        }
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
                let front = self.front.take();
                let pick = match front.filter(|&f| !self.queues[f].fifo.is_empty()) {
                    Some(f) => f,
                    None => self.pick()?,
                };
                // `cfq_set_active_queue(NULL)`: a queue taken from the service tree is no
                // longer a cooperator, unless it preempted as one (2.6.32).
                if !self.queues[pick].coop_preempt {
                    self.queues[pick].coop = false;
                }
                self.start_slice(pick, now);
                continue;
            };
            let sync = self.queues[a].sync;
            // A sync request that arrived during an async slice preempts it. (The async queue
            // starts a slice from the service tree only while no sync request waits.)
            let preempt = !sync && self.sync_arrived;
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
            // `cfq_select_queue`: a busy queue whose next request lies close to the head takes
            // the disk rather than the active queue waiting or idling.
            if let Some(c) = self.close_cooperator() {
                self.coop_counts[0] += 1;
                self.queues[c].coop = true;
                self.expire(sched, now);
                self.start_slice(c, now);
                continue;
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
                if self.in_driver == [0, 0] && !self.thinks_past_slice(a, now) {
                    self.arm_idle(a, sched, now);
                    return None;
                }
            }
            self.expire(sched, now);
        }
        None
    }

    /// `__cfq_set_active_queue`: queue `q` starts a slice.
    fn start_slice(&mut self, q: usize, now: SimTime) {
        self.active = Some(q);
        self.queues[q].coop_preempt = false;
        self.queues[q].fifo_checked = false;
        self.dispatched_in_slice = 0;
        self.sync_arrived = false;
        self.slice_end = now + self.new_slice(q);
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
        let rq = self.take_request(a, now)?;
        let (id, start) = (rq.id, rq.start);
        if self.active_cic.is_none() {
            // `cfq_dispatch_request`: the slice's first request names the active context.
            self.active_cic = Some(if self.queues[a].sync {
                Some(a)
            } else {
                self.stats_queue(rq.ctx)
            });
        }
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

    /// The request queue `a` dispatches now, removed from its lists (`cfq_check_fifo`, then
    /// `cfqq->next_rq`; `cfq_dispatch_insert`), the head then moving to its end
    /// (`cfq_activate_request`).
    fn take_request(&mut self, a: usize, now: SimTime) -> Option<Rq> {
        let last = self.last_position;
        // The first dispatch of a slice checks the FIFO: an expired oldest request goes first.
        let from_fifo = !self.queues[a].fifo_checked && {
            let expire = i64::from(cfq_fifo_expire(self.hz, self.queues[a].sync));
            let front_start = self.queues[a].fifo.front()?.start;
            self.jiffies(now) >= self.jiffies(front_start) + expire
        };
        let queue = &mut self.queues[a];
        queue.fifo_checked = true;
        let i = if from_fifo {
            0
        } else {
            let (_, seq) = queue.next_rq.expect("a queue with requests has a next one");
            queue.fifo.iter().position(|r| r.seq == seq)?
        };
        let rq = queue.fifo.remove(i)?;
        self.queued -= 1;
        let key = (rq.pos, rq.seq);
        if self.rules.next_after_each_dispatch || queue.next_rq == Some(key) {
            // `cfq_find_next_rq`: the neighbours in sector order, the lowest when none follows.
            let after = queue.sorted.range((key.0, key.1 + 1)..).next().copied();
            let after = after.or_else(|| queue.sorted.first().copied().filter(|&k| k != key));
            let before = queue.sorted.range(..key).next_back().copied();
            queue.next_rq = choose(after, before, last);
        }
        queue.sorted.remove(&key);
        let emptied = queue.fifo.is_empty();
        self.last_position = rq.pos + rq.sectors;
        if emptied && self.prio.contains(a) {
            // `cfq_del_cfqq_rr`: an empty queue leaves the trees; a busy one keeps its place
            // however its next request moved.
            self.prio.erase(a);
        }
        Some(rq)
    }

    fn arm_idle<E: From<BlockEvent>>(&mut self, q: usize, sched: &mut Scheduler<E>, now: SimTime) {
        let at = (now + self.idle_len(q)).min(self.slice_end.max(now));
        self.idle_timer = Some(sched.schedule_at(at, E::from(BlockEvent::CfqIdle)));
    }

    /// Request `id` of class `sync` completed at `now` (`cfq_completed_request`); the new
    /// `hw_tag` if the completion made an estimate of it.
    pub(in crate::model) fn completed<E: From<BlockEvent>>(
        &mut self,
        id: BioId,
        sync: bool,
        sched: &mut Scheduler<E>,
        now: SimTime,
    ) -> Option<bool> {
        let estimate = self.update_hw_tag();
        if !sync {
            self.in_driver[ASYNC] -= 1;
            self.queues[ASYNC_Q].dispatched -= 1;
            return estimate;
        }
        self.in_driver[SYNC] -= 1;
        let Some(i) = self.sync_started.iter().position(|&(b, ..)| b == id) else {
            return estimate;
        };
        let (_, start, q) = self.sync_started.swap_remove(i);
        self.queues[q].dispatched -= 1;
        let now_j = self.jiffies(now);
        self.queues[q].think.last_end = now_j;
        if self.rules.ramp_from_delayed_sync {
            // Delayed: it took at least the sync FIFO expiry (HZ/8) since it started.
            let expire = i64::from(cfq_fifo_expire(self.hz, true));
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
            && !self.thinks_past_slice(q, now)
            && self.close_cooperator().is_none()
        {
            self.arm_idle(q, sched, now);
        }
        estimate
    }

    /// `cfq_update_hw_tag`, at each completion (the completing request still counted in the
    /// driver): only completions with more than `CFQ_HW_QUEUE_MIN` requests queued or in the
    /// driver count, and every 51st sets `hw_tag` if the driver held at least that many at once
    /// since the last estimate. A disk whose driver never reaches that depth, because the
    /// disk's queue is shallower or CFQ's own limits keep it so, is taken as not queueing.
    /// The new `hw_tag` when this completion made an estimate.
    fn update_hw_tag(&mut self) -> Option<bool> {
        let in_driver = self.in_driver[SYNC] + self.in_driver[ASYNC];
        self.in_driver_peak = self.in_driver_peak.max(in_driver);
        if self.queued <= HW_QUEUE_MIN && in_driver <= HW_QUEUE_MIN {
            return None;
        }
        self.hw_tag_samples += 1;
        if self.hw_tag_samples <= HW_TAG_SAMPLES {
            return None;
        }
        self.hw_tag = self.in_driver_peak >= HW_QUEUE_MIN;
        self.hw_tag_samples = 0;
        self.in_driver_peak = 0;
        Some(self.hw_tag)
    }

    /// CFQ's books: the requests it counts as waiting (`rq_queued`, which its `hw_tag`
    /// estimate reads), then the requests in its queues; the two must agree.
    pub(in crate::model) fn queued_books(&self) -> (u64, u64) {
        let in_queues: usize = self.queues.iter().map(|q| q.fifo.len()).sum();
        (u64::from(self.queued), in_queues as u64)
    }

    /// The idle timer fired: the active slice ends.
    pub(in crate::model) fn idle_timer(&mut self) {
        self.idle_timer = None;
        self.active = None;
        self.active_cic = None;
    }

    /// Slices handed to a close cooperator (`cfq_close_cooperator`), then preemptions by a
    /// close request (`cfq_rq_close`), so far.
    pub(in crate::model) fn coop_counts(&self) -> [u64; 2] {
        self.coop_counts
    }

    /// Checks the priority tree: a valid red-black tree holding only busy queues (a busy queue
    /// may be missing from it, as the kernel leaves out one whose next request starts at
    /// another's). The first broken rule, if any.
    pub(in crate::model) fn check_prio_tree(&self) -> Result<(), String> {
        self.prio.check()?;
        match self
            .prio
            .in_order()
            .into_iter()
            .find(|&n| self.queues[n].fifo.is_empty())
        {
            Some(n) => Err(format!(
                "queue {n} is filed in the priority tree with no request"
            )),
            None => Ok(()),
        }
    }

    /// The queue holding io context `ctx`'s seek statistics: its sync queue (`None`: a
    /// context without a process, such as the flusher's or kswapd's, whose statistics qsim
    /// does not keep).
    fn stats_queue(&self, ctx: Option<ActorId>) -> Option<usize> {
        ctx?;
        self.queues.iter().position(|q| q.sync && q.ctx == ctx)
    }

    /// `cfq_slice_expired`: the active queue goes back into the service tree
    /// (`cfq_resort_rr_list`) if it still has requests.
    fn expire<E: From<BlockEvent>>(&mut self, sched: &mut Scheduler<E>, now: SimTime) {
        self.active_cic = None;
        if let Some(a) = self.active.take()
            && !self.queues[a].fifo.is_empty()
        {
            // `cfq_resort_rr_list`: back on the service tree, and filed again by its sector.
            self.service_tree_add(a, now);
            self.prio_tree_add(a);
        }
        if let Some(t) = self.idle_timer.take() {
            sched.cancel(t);
        }
    }
}

#[cfg(test)]
mod tests;
