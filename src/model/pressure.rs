//! The processes that press on memory and relieve it, as state machines driven by the world's
//! events: kswapd, direct reclaimers, GFP_ATOMIC streams, and dm-crypt's bounce-page mempool.
//! Each follows `../shared/MODEL.md` §5–§7 (Linux 2.6.32 unless a [`VmBehaviour`] switch says
//! otherwise); [`super::memory::Mem`] holds the pages they move.
//!
//! **kswapd** (`balance_pgdat` and the `kswapd()` loop):
//! ```text
//! SLEEP ─wake(k)─► BALANCE(order): pass (prio 12, counters 0)
//!   step: zone passes high(order)? → AFTER
//!         scan lru>>prio pages (CPU: scan_cost per page) → zone passes high? → AFTER
//!         scanned and prio < 10: skip_below_min and zone below min → SKIP
//!                                else congestion_wait(cwait_class, HZ/10)
//!         reclaimed ≥ 32 → new pass; prio − 1; prio < 0 → (reclaimed < 32 and not
//!         force_highorder → order 0) new pass
//! AFTER: a wake raised the order → BALANCE(new order); no nap → SLEEP;
//!        nap: below high → HIGH_HIT, BALANCE; NAP(HZ/10), woken → LOW_HIT, BALANCE;
//!        below high → HIGH_HIT, BALANCE; else SLEEP
//! ```
//! A wake while kswapd is awake only raises its target order. A zone that is `all_unreclaimable`
//! counts as balanced. kswapd writes dirty pages out (pageout) once a pass has scanned more than
//! 64 pages and more than 1.5 times what it reclaimed.
//!
//! **Direct reclaim** (`__alloc_pages_slowpath` → `try_to_free_pages`), for readers filling
//! page cache and writers dirtying it: an attempt scans priorities 12 → 0, stopping once 32
//! pages are reclaimed, with `congestion_wait(cwait_class, HZ/10)` after each scan below
//! priority 10; then the allocation is retried at min, and on failure
//! `congestion_wait(cwait_class, HZ/50)` precedes the next attempt. An attempt that freed
//! nothing restarts the slow path (waking kswapd again from 2.6.32 on); the OOM killer is not
//! modelled, so it also waits HZ/50. With `wait_iff_congested` (2.6.37) both waits sleep only if
//! the disk is congested in that class and a reclaim batch flagged the zone congested. Direct
//! reclaim writes dirty pages out only while the disk is not write-congested
//! (`may_write_to_queue`: reclaimers lack kswapd's `PF_SWAPWRITE`).
//!
//! **GFP_ATOMIC streams**: arrivals at a rate, an order per arrival, the fast path then the
//! atomic floor; a failure is counted by order; a granted buffer is freed after its hold time.
//!
//! **dm-crypt's page_pool** (`crypt_alloc_buffer` through `mempool_alloc`): for each bounce page
//! a try at the MempoolTry floor (0.75·min), then the reserve; the first `min_bio_pages` pages
//! may sleep on the pool (woken when a freed bounce page refills the reserve, or after 5·HZ);
//! later pages may not: the clone goes out partial and kcryptd naps
//! `congestion_wait(cwait_class, HZ/100)` before allocating the rest. Only writeback bios split;
//! a fio job's write waits on the pool instead.

use super::bio::{Bio, BioId};
use super::cwait::CwWho;
use super::event::Event;
use super::ids::{ActorId, QueueClass, ReclaimSlot, TaskOwner};
use super::memory::{DEF_PRIORITY, Gfp, Mem, PAGE_SIZE, PageState, SWAP_CLUSTER_MAX};
use super::observe::Stage;
use super::world::World;
use super::zone::Mark;
use crate::engine::{EventId, Scheduler, SimDuration, SimRng, SimTime};
use crate::model::config::{AtomicStream, VmBehaviour};
use rand::RngExt;

/// The memory processes' events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemEvent {
    /// A GFP_ATOMIC stream's next allocation.
    AtomicArrival {
        /// Stream index.
        stream: u32,
    },
    /// A driver frees an atomic buffer of this order.
    AtomicFree {
        /// Block order.
        order: u32,
    },
    /// kswapd's 2.6.33 nap ends.
    KswapdNapEnd,
    /// A thread asleep on dm-crypt's empty `page_pool` reaches its 5·HZ timeout.
    MempoolTimeout {
        /// The thread.
        actor: ActorId,
    },
}

/// kswapd's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KState {
    /// Asleep until an allocation misses low.
    Sleep,
    /// Scanning (a CPU task is running).
    Scan,
    /// In `congestion_wait`.
    CongestionWait,
    /// The 2.6.33 short nap before sleeping.
    Nap,
}

/// kswapd.
#[derive(Debug)]
pub(super) struct Kswapd {
    pub(super) state: KState,
    /// `kswapd_max_order`: the highest order a wake asked for since it was last read.
    target: Option<u32>,
    order: u32,
    prio: i32,
    reclaimed: u64,
    scanned: u64,
    /// The pages the running scan found (applied when it started; acted on when it ends).
    last_scanned: u64,
    pub(super) awake_since: Option<SimTime>,
    nap_timer: Option<EventId>,
}

impl Kswapd {
    fn new() -> Self {
        Kswapd {
            state: KState::Sleep,
            target: None,
            order: 0,
            prio: DEF_PRIORITY,
            reclaimed: 0,
            scanned: 0,
            last_scanned: 0,
            awake_since: None,
            nap_timer: None,
        }
    }
}

/// Who is in direct reclaim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReclaimWho {
    /// A reader filling page cache for `bio`, issued by its job's context `ctx`.
    Read { bio: BioId, ctx: ActorId },
    /// A buffered writer dirtying its next step.
    Writer(u32),
}

/// One allocation in the slow path: pages still to get, and its reclaim attempt's counters.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reclaimer {
    who: ReclaimWho,
    need: u32,
    granted: u32,
    started: SimTime,
    prio: i32,
    reclaimed: u64,
    last_scanned: u64,
}

/// A GFP_ATOMIC stream's state.
#[derive(Debug)]
pub(super) struct AtomicSource {
    cfg: AtomicStream,
    /// Cumulative order probabilities.
    cdf: Vec<f64>,
    arrival: SimRng,
    order: SimRng,
    hold: SimRng,
}

/// Everything the memory processes keep, boxed into the world when there is a `memory:`
/// section.
#[derive(Debug)]
pub(super) struct Pressure {
    pub(super) mem: Mem,
    pub(super) vm: VmBehaviour,
    pub(super) kswapd: Kswapd,
    reclaimers: Vec<Option<Reclaimer>>,
    reclaimer_free: Vec<ReclaimSlot>,
    atomic: Vec<AtomicSource>,
    /// Actors asleep on the empty `page_pool`, in arrival order, with their timeout timers.
    pool_sleepers: std::collections::VecDeque<(ActorId, EventId)>,
    scan_cost: SimDuration,
    /// Per-actor time a pool sleep or a partial nap started.
    pub(super) crypt_wait_since: Vec<Option<SimTime>>,
}

/// Outcome of asking for a bio's bounce pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bounce {
    /// All pages are held: encrypt and submit.
    Ready,
    /// The thread sleeps on the empty pool.
    Asleep,
    /// A partial clone was split off with the pages held so far; the thread encrypts and
    /// submits it, then naps.
    Partial(BioId),
}

impl Pressure {
    pub(super) fn new(
        sc: &crate::model::config::Scenario,
        streams: &crate::engine::RngStreams,
        actors: usize,
        measuring: bool,
    ) -> Option<Box<Pressure>> {
        let cfg = sc.memory.as_ref()?;
        let atomic = cfg
            .atomic
            .iter()
            .map(|a| {
                let total: f64 = a.orders.iter().sum();
                let mut acc = 0.0;
                let cdf = a
                    .orders
                    .iter()
                    .map(|w| {
                        acc += w / total;
                        acc
                    })
                    .collect();
                let s = |what: &str| streams.stream(&format!("atomic.{}/{what}", a.name));
                AtomicSource {
                    cfg: a.clone(),
                    cdf,
                    arrival: s("arrival"),
                    order: s("order"),
                    hold: s("hold"),
                }
            })
            .collect();
        Some(Box::new(Pressure {
            mem: Mem::new(cfg, streams, measuring),
            vm: sc.kernel.vm,
            kswapd: Kswapd::new(),
            reclaimers: Vec::new(),
            reclaimer_free: Vec::new(),
            atomic,
            pool_sleepers: Default::default(),
            scan_cost: cfg.scan_cost,
            crypt_wait_since: vec![None; actors],
        }))
    }

    /// Pages held by direct reclaimers' allocations so far (counted as filling).
    pub(super) fn reclaimer_pages(&self) -> u64 {
        self.reclaimers
            .iter()
            .flatten()
            .map(|r| u64::from(r.granted))
            .sum()
    }

    fn gap(&mut self, i: usize) -> SimDuration {
        let a = &mut self.atomic[i];
        let mean = 1.0 / a.cfg.rate;
        let secs = if a.cfg.poisson {
            let u: f64 = a.arrival.random();
            -mean * (1.0 - u).ln()
        } else {
            mean
        };
        SimDuration::from_secs_f64(secs)
    }
}

impl World {
    fn pr(&mut self) -> &mut Pressure {
        self.memory.zone_mut().expect("memory model is off")
    }

    /// Starts the memory processes: the GFP_ATOMIC streams' first arrivals.
    pub(super) fn start_pressure(&mut self, sched: &mut Scheduler<Event>) {
        let Some(p) = self.memory.zone_mut() else {
            return;
        };
        for i in 0..p.atomic.len() {
            let gap = p.gap(i);
            sched.schedule_in(
                gap,
                Event::Memory(MemEvent::AtomicArrival { stream: i as u32 }),
            );
        }
    }

    /// The memory processes' events.
    pub(super) fn memory_event(&mut self, ev: MemEvent, sched: &mut Scheduler<Event>) {
        match ev {
            MemEvent::AtomicArrival { stream } => self.atomic_arrival(stream, sched),
            MemEvent::AtomicFree { order } => self.atomic_free(order),
            MemEvent::KswapdNapEnd => self.kswapd_nap_end(sched),
            MemEvent::MempoolTimeout { actor } => self.mempool_timeout(actor, sched),
        }
    }

    /// The queue mm's waits sleep on.
    fn cwait_class(&self) -> QueueClass {
        QueueClass::from_cwait(self.sc.kernel.vm.cwait_class)
    }

    // ----- GFP_ATOMIC ------------------------------------------------------------------------

    pub(super) fn atomic_arrival(&mut self, i: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let p = self.pr();
        let gap = p.gap(i as usize);
        sched.schedule_in(gap, Event::Memory(MemEvent::AtomicArrival { stream: i }));
        let src = &mut p.atomic[i as usize];
        let u: f64 = src.order.random();
        let order = src
            .cdf
            .iter()
            .position(|&c| u < c)
            .unwrap_or(src.cdf.len() - 1) as u32;
        let burst = src.cfg.burst;
        let mut wake = false;
        for _ in 0..burst {
            let hold = src.cfg.hold.quantile(src.hold.random());
            let got = p.mem.alloc(order, Gfp::Atomic, PageState::Atomic, now);
            wake |= got.wake_kswapd;
            if got.granted {
                sched.schedule_in(hold, Event::Memory(MemEvent::AtomicFree { order }));
            }
        }
        if wake {
            self.wake_kswapd(order, sched);
        }
    }

    pub(super) fn atomic_free(&mut self, order: u32) {
        self.pr().mem.free(order, PageState::Atomic);
    }

    // ----- kswapd ----------------------------------------------------------------------------

    /// `wakeup_kswapd(order)`: only an asleep (or napping) kswapd wakes; otherwise the order is
    /// only remembered.
    pub(super) fn wake_kswapd(&mut self, order: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let p = self.pr();
        if p.mem.zone_ok(order, Mark::Low) {
            return;
        }
        let k = &mut p.kswapd;
        k.target = Some(k.target.map_or(order, |t| t.max(order)));
        match k.state {
            KState::Sleep => {
                k.awake_since = Some(now);
                if p.mem.measuring() {
                    p.mem.obs.kswapd_wakeups += 1;
                }
                let order = k.target.take().unwrap_or(0);
                self.kswapd_pass(order, sched);
            }
            KState::Nap => {
                if let Some(t) = k.nap_timer.take() {
                    sched.cancel(t);
                }
                if p.mem.measuring() {
                    p.mem.obs.low_wmark_hit_quickly += 1;
                }
                let order = k.target.take().unwrap_or(0).max(k.order);
                self.kswapd_pass(order, sched);
            }
            KState::Scan | KState::CongestionWait => {}
        }
    }

    /// Whether kswapd's zone is balanced for `order`: passes high, or is all_unreclaimable.
    fn kswapd_balanced(&self, order: u32) -> bool {
        let m = &self.memory.zone().expect("memory model is off").mem;
        m.zone_ok(order, Mark::High) || m.all_unreclaimable()
    }

    /// `loop_again`: a new balance pass at `order`.
    fn kswapd_pass(&mut self, order: u32, sched: &mut Scheduler<Event>) {
        let p = self.pr();
        let k = &mut p.kswapd;
        k.order = order;
        k.prio = DEF_PRIORITY;
        k.reclaimed = 0;
        k.scanned = 0;
        if p.mem.measuring() {
            p.mem.obs.kswapd_passes += 1;
        }
        self.kswapd_step(sched);
    }

    /// The top of one priority step.
    fn kswapd_step(&mut self, sched: &mut Scheduler<Event>) {
        let order = self.pr().kswapd.order;
        if self.kswapd_balanced(order) {
            self.kswapd_after(sched);
            return;
        }
        let k = &self.pr().kswapd;
        let may_writepage = k.scanned > 2 * SWAP_CLUSTER_MAX && k.scanned > k.reclaimed * 3 / 2;
        let prio = k.prio;
        let scan = self.shrink(prio, may_writepage, None, TaskOwner::Kswapd, sched);
        let p = self.pr();
        let k = &mut p.kswapd;
        k.scanned += scan.scanned;
        k.reclaimed += scan.reclaimed;
        k.last_scanned = scan.scanned;
        k.state = KState::Scan;
        if p.mem.measuring() {
            p.mem.obs.kswapd_scanned += scan.scanned;
            p.mem.obs.kswapd_reclaimed += scan.reclaimed;
        }
    }

    /// One reclaim scan at `prio` for kswapd or a direct reclaimer (`tag` names its CPU task):
    /// frees what it can, flags the zone congested if it met dirty pages on a write-congested
    /// disk, sends dirty pages to pageout, and charges the scan's CPU time.
    fn shrink(
        &mut self,
        prio: i32,
        may_writepage: bool,
        stop: Option<u64>,
        tag: TaskOwner,
        sched: &mut Scheduler<Event>,
    ) -> super::memory::Scan {
        let congested = self.write_congested();
        let p = self.pr();
        let target = p.mem.scan_target(prio);
        let scan = p.mem.scan(target, may_writepage, stop);
        if scan.dirty > 0 && congested {
            p.mem.zone_congested = true;
        }
        if p.mem.measuring() {
            p.mem.obs.pageout_pages += scan.pageout;
        }
        let cost = p.scan_cost * scan.scanned.max(1);
        self.pageout(scan.pageout, sched);
        self.start_cpu(tag, cost, sched);
        scan
    }

    /// kswapd's scan finished on the CPU.
    pub(super) fn kswapd_scanned(&mut self, sched: &mut Scheduler<Event>) {
        let order = self.pr().kswapd.order;
        if self.kswapd_balanced(order) {
            self.kswapd_after(sched);
            return;
        }
        let p = self.pr();
        let k = &p.kswapd;
        if k.last_scanned > 0 && k.prio < DEF_PRIORITY - 2 {
            if p.vm.skip_below_min && !p.mem.zone_ok(order, Mark::Min) {
                if p.mem.measuring() {
                    p.mem.obs.kswapd_skips += 1;
                }
            } else {
                p.kswapd.state = KState::CongestionWait;
                let class = self.cwait_class();
                let t = self.sc.kernel.hz_div(10);
                self.congestion_wait(CwWho::Kswapd, class, t, sched);
                return;
            }
        }
        self.kswapd_continue(sched);
    }

    /// After the priority step's optional wait.
    fn kswapd_continue(&mut self, sched: &mut Scheduler<Event>) {
        let p = self.pr();
        let k = &mut p.kswapd;
        if k.reclaimed >= SWAP_CLUSTER_MAX {
            let order = k.order;
            self.kswapd_pass(order, sched);
            return;
        }
        k.prio -= 1;
        if k.prio < 0 {
            let mut order = k.order;
            if k.reclaimed < SWAP_CLUSTER_MAX && !p.vm.force_highorder && order > 0 {
                order = 0;
                if p.mem.measuring() {
                    p.mem.obs.order0_fallbacks += 1;
                }
            }
            self.kswapd_pass(order, sched);
            return;
        }
        self.kswapd_step(sched);
    }

    /// kswapd's congestion wait ended.
    pub(super) fn kswapd_woken(&mut self, sched: &mut Scheduler<Event>) {
        self.pr().kswapd.state = KState::Scan;
        let order = self.pr().kswapd.order;
        if self.kswapd_balanced(order) {
            self.kswapd_after(sched);
        } else {
            self.kswapd_continue(sched);
        }
    }

    /// `balance_pgdat` returned: go on at a higher order if a wake asked for one, else nap or
    /// sleep.
    fn kswapd_after(&mut self, sched: &mut Scheduler<Event>) {
        let p = self.pr();
        p.mem.zone_congested = false;
        let k = &mut p.kswapd;
        if let Some(t) = k.target.take()
            && t > k.order
        {
            self.kswapd_pass(t, sched);
            return;
        }
        if !p.vm.kswapd_nap {
            self.kswapd_sleep(sched.now());
            return;
        }
        let order = k.order;
        if !self.kswapd_balanced(order) {
            self.kswapd_high_hit(order, sched);
            return;
        }
        let p = self.pr();
        p.kswapd.state = KState::Nap;
        let t = self.sc.kernel.hz_div(10);
        let id = sched.schedule_in(t, Event::Memory(MemEvent::KswapdNapEnd));
        self.pr().kswapd.nap_timer = Some(id);
    }

    fn kswapd_high_hit(&mut self, order: u32, sched: &mut Scheduler<Event>) {
        let p = self.pr();
        if p.mem.measuring() {
            p.mem.obs.high_wmark_hit_quickly += 1;
        }
        self.kswapd_pass(order, sched);
    }

    /// The 2.6.33 nap ended without a wake.
    pub(super) fn kswapd_nap_end(&mut self, sched: &mut Scheduler<Event>) {
        self.pr().kswapd.nap_timer = None;
        let order = self.pr().kswapd.order;
        if !self.kswapd_balanced(order) {
            self.kswapd_high_hit(order, sched);
        } else {
            self.kswapd_sleep(sched.now());
        }
    }

    fn kswapd_sleep(&mut self, now: SimTime) {
        let warmup = self.rec.warmup();
        let p = self.pr();
        p.kswapd.state = KState::Sleep;
        if let Some(since) = p.kswapd.awake_since.take()
            && p.mem.measuring()
        {
            p.mem.obs.kswapd_awake += now.saturating_since(since.max(warmup));
        }
    }

    // ----- pageout ---------------------------------------------------------------------------

    /// Sends `pages` dirty pages to writeback: the writer holding the most dirty data writes
    /// them as async bios (at most 512 KiB each) through dm-crypt.
    fn pageout(&mut self, pages: u64, sched: &mut Scheduler<Event>) {
        let mut left = pages * PAGE_SIZE;
        while left > 0 {
            let Some(w) = (0..self.writers.len()).max_by_key(|&w| self.writers[w].dirty_bytes())
            else {
                return;
            };
            let have = self.writers[w].dirty_bytes();
            if have == 0 {
                return;
            }
            let n = left.min(have).min(512 * 1024);
            self.writer_write(w as u32, n, sched);
            left -= n;
        }
    }

    // ----- direct reclaim --------------------------------------------------------------------

    /// Allocates `pages` order-0 pages for `who` as page cache being filled. `true` if all were
    /// granted at once; otherwise the rest are got by a direct reclaimer, which calls back
    /// [`World::reclaim_done`] when it has them.
    pub(super) fn alloc_cache_pages(
        &mut self,
        who: ReclaimWho,
        pages: u32,
        sched: &mut Scheduler<Event>,
    ) -> bool {
        let now = sched.now();
        let mut granted = 0;
        let mut woke = false;
        while granted < pages {
            let a = self.pr().mem.alloc(0, Gfp::User, PageState::Filling, now);
            if a.wake_kswapd && !woke {
                woke = true;
                self.wake_kswapd(0, sched);
            }
            if !a.granted {
                break;
            }
            granted += 1;
        }
        if granted == pages {
            return true;
        }
        let p = self.pr();
        if p.mem.measuring() {
            p.mem.obs.direct_stalls += 1;
        }
        let r = Reclaimer {
            who,
            need: pages - granted,
            granted,
            started: now,
            prio: DEF_PRIORITY,
            reclaimed: 0,
            last_scanned: 0,
        };
        let slot = match p.reclaimer_free.pop() {
            Some(s) => {
                p.reclaimers[s.index()] = Some(r);
                s
            }
            None => {
                p.reclaimers.push(Some(r));
                ReclaimSlot((p.reclaimers.len() - 1) as u32)
            }
        };
        self.reclaim_step(slot, sched);
        false
    }

    fn reclaimer(&mut self, slot: ReclaimSlot) -> &mut Reclaimer {
        self.pr().reclaimers[slot.index()]
            .as_mut()
            .expect("reclaimer slot is empty")
    }

    /// One priority step of `try_to_free_pages`: scan, charging the reclaimer's CPU.
    fn reclaim_step(&mut self, slot: ReclaimSlot, sched: &mut Scheduler<Event>) {
        // Direct reclaimers lack PF_SWAPWRITE: no pageout to a write-congested disk.
        let may_writepage = !self.write_congested();
        let r = *self.reclaimer(slot);
        // Stop once the attempt has its 32 pages, except at the first priority.
        let stop = (r.prio < DEF_PRIORITY).then(|| SWAP_CLUSTER_MAX.saturating_sub(r.reclaimed));
        let tag = TaskOwner::Reclaim(slot);
        let scan = self.shrink(r.prio, may_writepage, stop, tag, sched);
        let r = self.reclaimer(slot);
        r.reclaimed += scan.reclaimed;
        r.last_scanned = scan.scanned;
        let p = self.pr();
        if p.mem.measuring() {
            p.mem.obs.direct_scanned += scan.scanned;
            p.mem.obs.direct_reclaimed += scan.reclaimed;
        }
    }

    /// A direct reclaimer's scan finished on the CPU.
    pub(super) fn reclaim_scanned(&mut self, slot: ReclaimSlot, sched: &mut Scheduler<Event>) {
        let r = *self.reclaimer(slot);
        if r.reclaimed >= SWAP_CLUSTER_MAX {
            self.reclaim_attempt_end(slot, sched);
        } else if r.last_scanned > 0 && r.prio < DEF_PRIORITY - 2 {
            let t = self.sc.kernel.hz_div(10);
            self.reclaim_wait(slot, t, sched);
        } else {
            self.reclaim_next_prio(slot, sched);
        }
    }

    fn reclaim_next_prio(&mut self, slot: ReclaimSlot, sched: &mut Scheduler<Event>) {
        let r = self.reclaimer(slot);
        r.prio -= 1;
        if r.prio < 0 {
            self.reclaim_attempt_end(slot, sched);
        } else {
            self.reclaim_step(slot, sched);
        }
    }

    /// `congestion_wait` (or, with 2.6.37's switch, `wait_iff_congested`) for a reclaimer;
    /// `wait_iff_congested` with nothing congested returns at once.
    fn reclaim_wait(&mut self, slot: ReclaimSlot, t: SimDuration, sched: &mut Scheduler<Event>) {
        let class = self.cwait_class();
        let iff = self.sc.kernel.vm.wait_iff_congested;
        let congested = self.sc.block.mode == crate::model::config::QueueMode::Legacy
            && self.queue.is_congested(class)
            && self.pr().mem.zone_congested;
        if iff && !congested {
            let p = self.pr();
            if p.mem.measuring() {
                p.mem.obs.direct_waits.skipped += 1;
            }
            self.reclaim_woken(slot, sched);
            return;
        }
        self.congestion_wait(CwWho::Reclaim(slot), class, t, sched);
    }

    /// A reclaimer's wait ended: after a HZ/10 wait the priority loop goes on; after the
    /// allocator's HZ/50 wait a new attempt starts.
    pub(super) fn reclaim_woken(&mut self, slot: ReclaimSlot, sched: &mut Scheduler<Event>) {
        let r = *self.reclaimer(slot);
        if r.prio < 0 || r.reclaimed >= SWAP_CLUSTER_MAX {
            // The allocator's retry wait: a fresh try_to_free_pages.
            let r = self.reclaimer(slot);
            r.prio = DEF_PRIORITY;
            r.reclaimed = 0;
            self.reclaim_step(slot, sched);
        } else {
            self.reclaim_next_prio(slot, sched);
        }
    }

    /// `try_to_free_pages` returned: retry the allocation at min; wait HZ/50 and try again if
    /// it still fails.
    fn reclaim_attempt_end(&mut self, slot: ReclaimSlot, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let progress = self.reclaimer(slot).reclaimed > 0;
        loop {
            let r = *self.reclaimer(slot);
            if r.need == 0 {
                break;
            }
            let a = self.pr().mem.alloc(0, Gfp::User, PageState::Filling, now);
            if !a.granted {
                break;
            }
            let r = self.reclaimer(slot);
            r.need -= 1;
            r.granted += 1;
        }
        let r = *self.reclaimer(slot);
        if r.need == 0 {
            let p = self.pr();
            p.reclaimers[slot.index()] = None;
            p.reclaimer_free.push(slot);
            if p.mem.measuring() {
                p.mem.obs.direct_stall.record(now.since(r.started).as_ns());
            }
            self.reclaim_done(r.who, r.granted, sched);
            return;
        }
        if !progress && self.sc.kernel.vm.restart_wakes_kswapd {
            // No progress: the slow path restarts, and 2.6.32 wakes kswapd again there.
            self.wake_kswapd(0, sched);
        }
        // Mark the attempt finished so the wait's end starts a new one.
        let r = self.reclaimer(slot);
        r.prio = -1;
        let t = self.sc.kernel.hz_div(50);
        self.reclaim_wait(slot, t, sched);
    }

    /// A direct reclaimer got all its pages.
    fn reclaim_done(&mut self, who: ReclaimWho, pages: u32, sched: &mut Scheduler<Event>) {
        match who {
            ReclaimWho::Read { bio, ctx } => {
                self.bios[bio].cache_pages = pages;
                self.route(bio, ctx, sched);
            }
            ReclaimWho::Writer(w) => {
                self.pr()
                    .mem
                    .transition(u64::from(pages), PageState::Filling, PageState::Dirty);
                self.writer_dirtied(w, sched);
            }
        }
    }

    // ----- dm-crypt's bounce pages -------------------------------------------------------------

    /// Gets the bounce pages of write `bio` for crypt thread (or inline context) `actor`:
    /// each page tries the zone at the mempool floor, then the reserve. Pages below
    /// `min_bio_pages` may sleep on the pool; later ones make the clone partial when
    /// `may_split` (writeback bios under kcryptd), else sleep too.
    pub(super) fn bounce_alloc(
        &mut self,
        actor: ActorId,
        bio: BioId,
        may_split: bool,
        sched: &mut Scheduler<Event>,
    ) -> Bounce {
        let now = sched.now();
        let need = super::memory::pages_for(self.bios[bio].bytes);
        let min_bio_pages = self.pr().mem.cfg().min_bio_pages;
        while self.bios[bio].bounce_pages < need {
            let a = self
                .pr()
                .mem
                .alloc(0, Gfp::MempoolTry, PageState::Bounce, now);
            if a.wake_kswapd {
                self.wake_kswapd(0, sched);
            }
            let p = self.pr();
            if a.granted {
                if p.mem.measuring() {
                    p.mem.obs.bounce_from_zone += 1;
                }
            } else if !p.mem.take_reserve() {
                let held = self.bios[bio].bounce_pages;
                if held >= min_bio_pages && may_split {
                    return Bounce::Partial(self.split_partial(bio, now));
                }
                self.pool_sleep(actor, sched);
                return Bounce::Asleep;
            }
            self.bios[bio].bounce_pages += 1;
        }
        Bounce::Ready
    }

    /// Splits the pages held so far off `bio` as a partial clone, a new bio in the system.
    fn split_partial(&mut self, parent: BioId, now: SimTime) -> BioId {
        let p = &mut self.bios[parent];
        let pages = p.bounce_pages;
        let bytes = pages * PAGE_SIZE as u32;
        let mut child = Bio::new(p.dir, p.sync, bytes, p.offset, p.origin, now);
        child.service_u = p.service_u;
        child.crypt_u = p.crypt_u;
        child.measured = p.measured;
        child.bounce_pages = pages;
        child.accepted = now;
        p.bytes -= bytes;
        p.offset += u64::from(bytes);
        p.bounce_pages = 0;
        let measuring = self.pr().mem.measuring();
        if measuring {
            self.pr().mem.obs.partial_clones += 1;
        }
        let id = self.admit(child);
        self.bios[id].enter(Stage::CryptService, now);
        id
    }

    fn pool_sleep(&mut self, actor: ActorId, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let t = SimDuration::from_secs(5);
        let timer = sched.schedule_in(t, Event::Memory(MemEvent::MempoolTimeout { actor }));
        let p = self.pr();
        p.pool_sleepers.push_back((actor, timer));
        p.crypt_wait_since[actor.index()] = Some(now);
        if p.mem.measuring() {
            p.mem.obs.mempool_waits += 1;
        }
    }

    /// A bounce page refilled the reserve: wake the first sleeper.
    fn pool_wake_one(&mut self, sched: &mut Scheduler<Event>) {
        if let Some((actor, timer)) = self.pr().pool_sleepers.pop_front() {
            sched.cancel(timer);
            self.pool_sleep_end(actor, sched);
        }
    }

    /// The mempool's 5·HZ sleep ran out: retry.
    pub(super) fn mempool_timeout(&mut self, actor: ActorId, sched: &mut Scheduler<Event>) {
        let p = self.pr();
        if let Some(i) = p.pool_sleepers.iter().position(|&(a, _)| a == actor) {
            p.pool_sleepers.remove(i);
            self.pool_sleep_end(actor, sched);
        }
    }

    fn pool_sleep_end(&mut self, actor: ActorId, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let warmup = self.rec.warmup();
        let p = self.pr();
        if let Some(since) = p.crypt_wait_since[actor.index()].take()
            && p.mem.measuring()
        {
            p.mem.obs.mempool_wait_time += now.saturating_since(since.max(warmup));
        }
        self.bounce_resume(actor, sched);
    }

    /// A write's bounce pages come back at its completion.
    pub(super) fn free_bounce(&mut self, pages: u32, sched: &mut Scheduler<Event>) {
        for _ in 0..pages {
            if self.pr().mem.free_bounce_page() {
                self.pool_wake_one(sched);
            }
        }
    }

    /// Starts a crypt thread's HZ/100 nap after a partial clone.
    pub(super) fn partial_nap(&mut self, actor: ActorId, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        self.pr().crypt_wait_since[actor.index()] = Some(now);
        let class = self.cwait_class();
        let t = self.sc.kernel.hz_div(100);
        self.congestion_wait(CwWho::CryptNap(actor), class, t, sched);
    }

    /// The partial-clone nap ended.
    pub(super) fn partial_nap_end(&mut self, actor: ActorId, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let warmup = self.rec.warmup();
        let p = self.pr();
        if let Some(since) = p.crypt_wait_since[actor.index()].take()
            && p.mem.measuring()
        {
            p.mem.obs.partial_nap_time += now.saturating_since(since.max(warmup));
        }
        self.bounce_resume(actor, sched);
    }

    /// Accounts a wait of `who` that ended after `slept`, per caller and class.
    pub(super) fn account_mm_wait(
        &mut self,
        who: CwWho,
        class: QueueClass,
        slept: SimDuration,
        early: bool,
    ) {
        let Some(p) = self.memory.zone_mut() else {
            return;
        };
        if !p.mem.measuring() {
            return;
        }
        let w = match who {
            CwWho::Kswapd => &mut p.mem.obs.kswapd_waits,
            CwWho::Reclaim(_) => &mut p.mem.obs.direct_waits,
            _ => return,
        };
        let o = &mut w.class[class.index()];
        o.waits += 1;
        o.total += slept;
        if early {
            o.woken_early += 1;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::config::{MemoryConfig, Scenario};
    use crate::model::{RunResult, policy, run_policy};

    pub(crate) fn laptop(unreclaimable_mib: u64, rate: f64, burst: u32) -> MemoryConfig {
        crate::model::testing::laptop_memory(unreclaimable_mib, rate, burst)
    }

    pub(crate) fn two_queue(duration_s: u64) -> Scenario {
        let mut sc = crate::scenario::resolve("two-queue").expect("shipped");
        sc.duration = SimDuration::from_secs(duration_s);
        sc.memory = None;
        sc
    }

    fn run_all(sc: &Scenario) -> Vec<RunResult> {
        sc.policies
            .iter()
            .map(|p| {
                let r = run_policy(sc, policy::find(p).unwrap());
                assert!(r.violations.is_empty(), "{p}: {:?}", r.violations);
                r
            })
            .collect()
    }

    /// Under pressure (little reclaimable cache, a bursty order-2 stream) every conservation
    /// law holds, kswapd wakes and waits, readers stall in direct reclaim, and that time shows
    /// in their latency as its own stage.
    #[test]
    fn memory_pressure_keeps_every_invariant() {
        let mut sc = two_queue(20);
        sc.memory = Some(laptop(1900, 20.0, 64));
        for r in run_all(&sc) {
            let m = r.obs.memory.as_ref().expect("memory obs");
            assert!(m.kswapd_wakeups > 0, "{}", r.obs.policy);
            assert!(m.kswapd_waits.class[1].waits > 0, "{}", r.obs.policy);
            assert!(m.direct_stalls > 0, "{}", r.obs.policy);
            let reclaim =
                &r.obs.dirs[0].stages[crate::model::observe::Stage::DirectReclaim.index()];
            assert!(reclaim.max() > 0, "{}", r.obs.policy);
            assert!(m.atomic_attempts[2] > 0);
        }
    }

    /// Memory far above the load: kswapd never wakes and no allocation fails or stalls.
    #[test]
    fn ample_memory_never_wakes_kswapd() {
        let mut sc = two_queue(10);
        let mut mem = laptop(256, 20.0, 4);
        mem.ram = 16 << 30;
        mem.min_free_kbytes = 16384;
        mem.page_cache = 1 << 30;
        sc.memory = Some(mem);
        for r in run_all(&sc) {
            let m = r.obs.memory.as_ref().expect("memory obs");
            assert_eq!(m.kswapd_wakeups, 0, "{}", r.obs.policy);
            assert_eq!(m.kswapd_passes, 0);
            assert_eq!(m.atomic_failures.iter().sum::<u64>(), 0);
            assert_eq!(m.direct_stalls, 0);
            assert_eq!(m.mempool_waits + m.partial_clones, 0);
            assert!(m.atomic_attempts[2] > 0);
        }
    }

    /// The pressure scenario under `fifo` with the kernel switches `vm`.
    fn pressed(vm: VmBehaviour) -> crate::model::observe::MemoryObs {
        let mut sc = two_queue(20);
        sc.memory = Some(laptop(1900, 20.0, 64));
        sc.policies = vec!["fifo".into()];
        sc.kernel.vm = vm;
        let r = run_all(&sc).pop().expect("one run");
        *r.obs.memory.expect("memory obs")
    }

    fn v2_6_32() -> VmBehaviour {
        crate::model::config::KernelVersion::V2_6_32.defaults()
    }

    /// congestion_wait's early wake: on the SYNC queue (2.6.30's WRITE) every read completion
    /// frees a SYNC request far below the off threshold and ends the wait; on the ASYNC queue
    /// only write completions with the ASYNC pool below off do. So 2.6.30's waits are shorter
    /// and nearly all end early (MODEL.md trap 4).
    #[test]
    fn sync_queue_waits_end_at_read_completions() {
        let asy = pressed(v2_6_32());
        let syn = pressed(VmBehaviour {
            cwait_class: crate::model::config::CwaitClass::Sync,
            ..v2_6_32()
        });
        assert_eq!(syn.kswapd_waits.class[1].waits, 0);
        assert_eq!(asy.kswapd_waits.class[0].waits, 0);
        let (s, a) = (&syn.kswapd_waits.class[0], &asy.kswapd_waits.class[1]);
        assert!(s.waits > 0 && a.waits > 0);
        let mean = |o: &crate::model::observe::CongestionWaitObs| o.total.as_ns() / o.waits;
        assert!(s.woken_early * 10 >= s.waits * 9, "{s:?}");
        assert!(mean(s) * 2 < mean(a), "sync {s:?} async {a:?}");
        // A wait never outlasts its HZ/10 timeout.
        assert!(mean(a) <= 100_000_000 && mean(s) <= 100_000_000);
    }

    /// 2.6.37's skip: while the zone is below min kswapd counts a skip instead of waiting.
    #[test]
    fn skip_below_min_turns_waits_into_skips() {
        let base = pressed(v2_6_32());
        let skip = pressed(VmBehaviour {
            skip_below_min: true,
            ..v2_6_32()
        });
        assert_eq!(base.kswapd_skips, 0);
        assert!(skip.kswapd_skips > 0);
        assert!(base.below_min > SimDuration::ZERO);
    }

    /// Without force_highorder a sweep that reclaimed under 32 pages drops kswapd to order 0;
    /// with it, never. Here the LRU holds only mapped pages, so no sweep reclaims anything, and
    /// free memory sits just under low so order-2 receive buffers wake kswapd at order 2.
    #[test]
    fn force_highorder_keeps_the_order() {
        let run = |force: bool| {
            let mut sc = two_queue(5);
            sc.warmup = SimDuration::ZERO;
            // Only the receive stream allocates: direct reads, no writer.
            sc.workloads.truncate(1);
            if let crate::model::config::WorkloadKind::Fio(f) = &mut sc.workloads[0].kind {
                f.direct = true;
            }
            let mut mem = laptop(0, 20.0, 1);
            mem.page_cache = 0;
            mem.unreclaimable = mem.ram - (1_700 + 32) * PAGE_SIZE;
            mem.mapped = 100 << 20;
            sc.memory = Some(mem);
            sc.policies = vec!["fifo".into()];
            sc.kernel.vm.force_highorder = force;
            let r = run_all(&sc).pop().expect("one run");
            *r.obs.memory.expect("memory obs")
        };
        let base = run(false);
        assert!(base.kswapd_wakeups > 0);
        assert!(base.order0_fallbacks > 0, "{}", base.order0_fallbacks);
        let forced = run(true);
        assert!(forced.kswapd_passes > 0);
        assert_eq!(forced.order0_fallbacks, 0);
    }

    /// The 2.6.33 nap: kswapd sometimes finds itself needed right after balancing.
    #[test]
    fn the_nap_catches_premature_sleeps() {
        let base = pressed(v2_6_32());
        assert_eq!(base.low_wmark_hit_quickly + base.high_wmark_hit_quickly, 0);
        let nap = pressed(VmBehaviour {
            kswapd_nap: true,
            ..v2_6_32()
        });
        assert!(nap.low_wmark_hit_quickly + nap.high_wmark_hit_quickly > 0);
    }

    /// Under blk-mq nothing clears congestion: every wait lasts its full timeout.
    #[test]
    fn blk_mq_waits_always_time_out() {
        let mut sc = two_queue(20);
        sc.memory = Some(laptop(1900, 20.0, 64));
        sc.policies = vec!["fifo".into()];
        sc.block.mode = crate::model::config::QueueMode::BlkMq;
        sc.block.elevator = crate::model::config::Elevator::Fifo;
        sc.block.plug = false;
        let r = run_all(&sc).pop().expect("one run");
        let m = r.obs.memory.expect("memory obs");
        let w = &m.kswapd_waits.class[1];
        assert!(w.waits > 0);
        assert_eq!(w.woken_early, 0);
        // Each lasted HZ/10 = 100 ms, except one cut by the horizon.
        let full = w.total.as_ns() / 100_000_000;
        assert!(full == w.waits || full + 1 == w.waits, "{w:?}");
    }
}
