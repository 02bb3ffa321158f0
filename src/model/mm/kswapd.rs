//! kswapd (`balance_pgdat` and the `kswapd()` loop) as a component: `Kswapd`'s state
//! machine takes `&mut` of the zone's [`Mem`] and returns a `KAction` (scan at a priority,
//! congestion-wait, nap, nothing) that the world's adapter (`src/model/world/kswapd.rs`) carries
//! out; and pageout, which kswapd and direct reclaim share. The state diagram and the kernel
//! rules are in [`crate::model::mm::pressure`]'s documentation.

use crate::engine::{EventId, SimTime};
use crate::model::base::config::VmBehaviour;
use crate::model::mm::memory::{DEF_PRIORITY, Mem, SWAP_CLUSTER_MAX, Scan};
use crate::model::mm::zone::Mark;

/// kswapd's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::model) enum KState {
    /// Asleep until an allocation misses low.
    Sleep,
    /// Scanning (a CPU task is running).
    Scan,
    /// In `congestion_wait`.
    CongestionWait,
    /// The 2.6.33 short nap before sleeping.
    Nap,
}

/// What kswapd's state machine asks the world to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::model) enum KAction {
    /// Nothing (kswapd stays as it is, or went to sleep).
    Nothing,
    /// Run one reclaim scan at `prio` on the CPU, then report it with
    /// [`Kswapd::scan_started`].
    Scan {
        /// The scan's priority.
        prio: i32,
        /// Whether dirty pages may be written out.
        may_writepage: bool,
    },
    /// `congestion_wait(cwait_class, HZ/10)`.
    CongestionWait,
    /// The 2.6.33 nap: schedule its HZ/10 end and keep the timer in `nap_timer`.
    Nap,
}

/// kswapd: its state machine and counters, taking `&mut` of the zone's [`Mem`].
#[derive(Debug)]
pub(in crate::model) struct Kswapd {
    pub(in crate::model) state: KState,
    /// `kswapd_max_order`: the highest order a wake asked for since it was last read.
    pub(in crate::model) target: Option<u32>,
    pub(in crate::model) order: u32,
    pub(in crate::model) prio: i32,
    pub(in crate::model) reclaimed: u64,
    pub(in crate::model) scanned: u64,
    /// The pages the running scan found (applied when it started; acted on when it ends).
    pub(in crate::model) last_scanned: u64,
    pub(in crate::model) awake_since: Option<SimTime>,
    pub(in crate::model) nap_timer: Option<EventId>,
    /// The warm-up's end: awake time counts from it.
    pub(in crate::model) warmup: SimTime,
}

impl Kswapd {
    pub(in crate::model) fn new() -> Self {
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
            warmup: SimTime::ZERO,
        }
    }

    /// Whether [`Kswapd::wake`] at `order` would change nothing: kswapd is awake (scanning or
    /// in a congestion wait) and already remembers an order at least as high.
    pub(in crate::model) fn wake_changes_nothing(&self, order: u32) -> bool {
        matches!(self.state, KState::Scan | KState::CongestionWait)
            && self.target.is_some_and(|t| t >= order)
    }

    /// `wakeup_kswapd(order)` at `now`: only an asleep (or napping) kswapd wakes, starting a
    /// pass (a napping one's timer comes back for the world to cancel); otherwise the order
    /// is only remembered.
    pub(in crate::model) fn wake(
        &mut self,
        mem: &mut Mem,
        vm: &VmBehaviour,
        order: u32,
        now: SimTime,
    ) -> (Option<EventId>, KAction) {
        if mem.zone_ok(order, Mark::Low) {
            return (None, KAction::Nothing);
        }
        self.target = Some(self.target.map_or(order, |t| t.max(order)));
        match self.state {
            KState::Sleep => {
                self.awake_since = Some(now);
                if mem.measuring() {
                    mem.obs.kswapd_wakeups += 1;
                }
                let order = self.target.take().unwrap_or(0);
                (None, self.pass(mem, vm, order, now))
            }
            KState::Nap => {
                let timer = self.nap_timer.take();
                if mem.measuring() {
                    mem.obs.low_wmark_hit_quickly += 1;
                }
                let order = self.target.take().unwrap_or(0).max(self.order);
                (timer, self.pass(mem, vm, order, now))
            }
            KState::Scan | KState::CongestionWait => (None, KAction::Nothing),
        }
    }

    /// Whether the zone is balanced for `order`: passes high, or is all_unreclaimable.
    fn balanced(mem: &Mem, order: u32) -> bool {
        mem.zone_ok(order, Mark::High) || mem.all_unreclaimable()
    }

    /// `loop_again`: a new balance pass at `order`.
    fn pass(&mut self, mem: &mut Mem, vm: &VmBehaviour, order: u32, now: SimTime) -> KAction {
        self.order = order;
        self.prio = DEF_PRIORITY;
        self.reclaimed = 0;
        self.scanned = 0;
        if mem.measuring() {
            mem.obs.kswapd_passes += 1;
        }
        self.step(mem, vm, now)
    }

    /// The top of one priority step: balanced ends the pass, else a scan.
    fn step(&mut self, mem: &mut Mem, vm: &VmBehaviour, now: SimTime) -> KAction {
        if Self::balanced(mem, self.order) {
            return self.after(mem, vm, now);
        }
        let may_writepage =
            self.scanned > 2 * SWAP_CLUSTER_MAX && self.scanned > self.reclaimed * 3 / 2;
        KAction::Scan {
            prio: self.prio,
            may_writepage,
        }
    }

    /// The scan the world ran for [`KAction::Scan`]: counted; kswapd is scanning.
    pub(in crate::model) fn scan_started(&mut self, mem: &mut Mem, scan: Scan) {
        self.scanned += scan.scanned;
        self.reclaimed += scan.reclaimed;
        self.last_scanned = scan.scanned;
        self.state = KState::Scan;
        if mem.measuring() {
            mem.obs.kswapd_scanned += scan.scanned;
            mem.obs.kswapd_reclaimed += scan.reclaimed;
        }
    }

    /// The scan finished on the CPU: below priority 10 a scan that found pages waits (or, with
    /// `skip_below_min` and the zone below min, skips the wait).
    pub(in crate::model) fn scan_done(
        &mut self,
        mem: &mut Mem,
        vm: &VmBehaviour,
        now: SimTime,
    ) -> KAction {
        let order = self.order;
        if Self::balanced(mem, order) {
            return self.after(mem, vm, now);
        }
        if self.last_scanned > 0 && self.prio < DEF_PRIORITY - 2 {
            if vm.skip_below_min && !mem.zone_ok(order, Mark::Min) {
                if mem.measuring() {
                    mem.obs.kswapd_skips += 1;
                }
            } else {
                self.state = KState::CongestionWait;
                return KAction::CongestionWait;
            }
        }
        self.go_on(mem, vm, now)
    }

    /// After the priority step's optional wait: a new pass once 32 pages are reclaimed or
    /// the priorities run out (falling back to order 0 unless `force_highorder`).
    fn go_on(&mut self, mem: &mut Mem, vm: &VmBehaviour, now: SimTime) -> KAction {
        if self.reclaimed >= SWAP_CLUSTER_MAX {
            return self.pass(mem, vm, self.order, now);
        }
        self.prio -= 1;
        if self.prio < 0 {
            let mut order = self.order;
            if self.reclaimed < SWAP_CLUSTER_MAX && !vm.force_highorder && order > 0 {
                order = 0;
                if mem.measuring() {
                    mem.obs.order0_fallbacks += 1;
                }
            }
            return self.pass(mem, vm, order, now);
        }
        self.step(mem, vm, now)
    }

    /// The congestion wait ended.
    pub(in crate::model) fn woken(
        &mut self,
        mem: &mut Mem,
        vm: &VmBehaviour,
        now: SimTime,
    ) -> KAction {
        self.state = KState::Scan;
        if Self::balanced(mem, self.order) {
            self.after(mem, vm, now)
        } else {
            self.go_on(mem, vm, now)
        }
    }

    /// `balance_pgdat` returned: go on at a higher order if a wake asked for one, else nap or
    /// sleep.
    fn after(&mut self, mem: &mut Mem, vm: &VmBehaviour, now: SimTime) -> KAction {
        mem.zone_congested = false;
        if let Some(t) = self.target.take()
            && t > self.order
        {
            return self.pass(mem, vm, t, now);
        }
        if !vm.kswapd_nap {
            self.sleep(mem, now);
            return KAction::Nothing;
        }
        if !Self::balanced(mem, self.order) {
            return self.high_hit(mem, vm, now);
        }
        self.state = KState::Nap;
        KAction::Nap
    }

    fn high_hit(&mut self, mem: &mut Mem, vm: &VmBehaviour, now: SimTime) -> KAction {
        if mem.measuring() {
            mem.obs.high_wmark_hit_quickly += 1;
        }
        self.pass(mem, vm, self.order, now)
    }

    /// The 2.6.33 nap ended without a wake.
    pub(in crate::model) fn nap_end(
        &mut self,
        mem: &mut Mem,
        vm: &VmBehaviour,
        now: SimTime,
    ) -> KAction {
        self.nap_timer = None;
        if !Self::balanced(mem, self.order) {
            self.high_hit(mem, vm, now)
        } else {
            self.sleep(mem, now);
            KAction::Nothing
        }
    }

    /// kswapd sleeps at `now`; its awake time past the warm-up is counted.
    fn sleep(&mut self, mem: &mut Mem, now: SimTime) {
        self.state = KState::Sleep;
        if let Some(since) = self.awake_since.take()
            && mem.measuring()
        {
            mem.obs.kswapd_awake += now.saturating_since(since.max(self.warmup));
        }
    }
}
