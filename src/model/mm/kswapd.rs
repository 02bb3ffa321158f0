//! kswapd (`balance_pgdat` and the `kswapd()` loop) as a component: [`Kswapd`]'s state
//! machine takes `&mut` of the zone's [`Mem`] and returns a [`KAction`] (scan at a priority,
//! congestion-wait, nap, nothing) that the world's adapter (the `impl World` below) carries
//! out; and pageout, which kswapd and direct reclaim share. The state diagram and the kernel
//! rules are in [`crate::model::mm::pressure`]'s documentation.

use crate::engine::{EventId, Scheduler, SimTime};
use crate::model::base::config::VmBehaviour;
use crate::model::base::ids::TaskOwner;
use crate::model::mm::cwait::CwWho;
use crate::model::mm::memory::{DEF_PRIORITY, Mem, PAGE_SIZE, SWAP_CLUSTER_MAX, Scan};
use crate::model::mm::pressure::MemEvent;
use crate::model::mm::zone::Mark;
use crate::model::world::World;
use crate::model::world::event::Event;

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

impl World {
    // ----- the world's adapter: kswapd's scans, waits and nap timer ---------------------------

    /// `wakeup_kswapd(order)`.
    pub(in crate::model) fn wake_kswapd(&mut self, order: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let p = self.pr();
        let (timer, act) = p.kswapd.wake(&mut p.mem, &p.vm, order, now);
        if let Some(t) = timer {
            sched.cancel(t);
        }
        self.kswapd_act(act, sched);
    }

    /// Does what kswapd's state machine asked for.
    fn kswapd_act(&mut self, act: KAction, sched: &mut Scheduler<Event>) {
        match act {
            KAction::Nothing => {}
            KAction::Scan {
                prio,
                may_writepage,
            } => {
                let scan = self.shrink(prio, may_writepage, None, TaskOwner::Kswapd, sched);
                let p = self.pr();
                p.kswapd.scan_started(&mut p.mem, scan);
            }
            KAction::CongestionWait => {
                let class = self.cwait_class();
                let t = self.sc.kernel.hz_div(10);
                self.congestion_wait(CwWho::Kswapd, class, t, sched);
            }
            KAction::Nap => {
                let t = self.sc.kernel.hz_div(10);
                let id = sched.schedule_in(t, Event::Memory(MemEvent::KswapdNapEnd));
                self.pr().kswapd.nap_timer = Some(id);
            }
        }
    }

    /// One reclaim scan at `prio` for kswapd or a direct reclaimer (`tag` names its CPU task):
    /// frees what it can, flags the zone congested if it met dirty pages on a write-congested
    /// disk, sends dirty pages to pageout, and charges the scan's CPU time.
    pub(in crate::model) fn shrink(
        &mut self,
        prio: i32,
        may_writepage: bool,
        stop: Option<u64>,
        tag: TaskOwner,
        sched: &mut Scheduler<Event>,
    ) -> Scan {
        let congested = self.write_congested();
        if self.pr().swap.enabled() {
            let scan = self.shrink_lists(prio, may_writepage, stop, sched);
            let p = self.pr();
            if scan.dirty > 0 && congested {
                p.mem.zone_congested = true;
            }
            let cost = p.scan_cost * scan.scanned.max(1);
            self.start_cpu(tag, cost, sched);
            return scan;
        }
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
    pub(in crate::model) fn kswapd_scanned(&mut self, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let p = self.pr();
        let act = p.kswapd.scan_done(&mut p.mem, &p.vm, now);
        self.kswapd_act(act, sched);
    }

    /// kswapd's congestion wait ended.
    pub(in crate::model) fn kswapd_woken(&mut self, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let p = self.pr();
        let act = p.kswapd.woken(&mut p.mem, &p.vm, now);
        self.kswapd_act(act, sched);
    }

    /// The 2.6.33 nap ended without a wake.
    pub(in crate::model) fn kswapd_nap_end(&mut self, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let p = self.pr();
        let act = p.kswapd.nap_end(&mut p.mem, &p.vm, now);
        self.kswapd_act(act, sched);
    }

    // ----- pageout ---------------------------------------------------------------------------

    /// Sends `pages` dirty pages to writeback: the writer holding the most dirty data writes
    /// them as async bios (at most 512 KiB each) through dm-crypt.
    pub(in crate::model) fn pageout(&mut self, pages: u64, sched: &mut Scheduler<Event>) {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Limits, SimDuration};
    use crate::model::mm::pressure::tests::{fill, quiet_world};

    fn run_for(w: &mut World, sched: &mut Scheduler<Event>, d: SimDuration) {
        let limits = Limits {
            horizon: sched.now() + d,
            max_work: u64::MAX,
        };
        crate::engine::run(w, sched, limits);
    }

    #[test]
    fn kswapd_woken_below_low_reclaims_to_high_and_sleeps() {
        let mut sched = Scheduler::new();
        let mut w = quiet_world(&mut sched);
        fill(&mut w, sched.now(), |m| m.zone_ok(0, Mark::Low));
        w.wake_kswapd(0, &mut sched);
        let p = w.memory.zone().expect("a zone");
        assert_eq!(p.kswapd.state, KState::Scan);
        assert_eq!(p.mem.obs.kswapd_wakeups, 1);
        run_for(&mut w, &mut sched, SimDuration::from_secs(1));
        let p = w.memory.zone().expect("a zone");
        assert_eq!(p.kswapd.state, KState::Sleep);
        assert!(p.mem.zone_ok(0, Mark::High));
        assert!(p.mem.obs.kswapd_reclaimed > 0);
        assert!(p.kswapd.awake_since.is_none());
        assert!(p.mem.obs.kswapd_awake > SimDuration::ZERO);
    }

    #[test]
    fn a_wake_above_low_leaves_kswapd_asleep() {
        let mut sched = Scheduler::new();
        let mut w = quiet_world(&mut sched);
        w.wake_kswapd(0, &mut sched);
        let p = w.memory.zone().expect("a zone");
        assert_eq!(p.kswapd.state, KState::Sleep);
        assert_eq!(p.mem.obs.kswapd_wakeups, 0);
    }

    /// The state machine alone, scripted against a zone below low: a wake asks for a scan,
    /// priorities fall, a productive scan below priority 10 waits, a balanced zone naps and
    /// the nap's end sleeps, counting the awake time.
    #[test]
    fn the_state_machine_alone_scans_waits_naps_and_sleeps() {
        let mut sched = Scheduler::new();
        let mut w = quiet_world(&mut sched);
        let now = sched.now();
        fill(&mut w, now, |m| m.zone_ok(0, Mark::Low));
        let p = w.memory.zone_mut().expect("a zone");
        let mem = &mut p.mem;
        let mut vm = p.vm;
        vm.kswapd_nap = true;
        vm.skip_below_min = false;
        let scan = |scanned| Scan {
            scanned,
            ..Scan::default()
        };
        let at = |prio, may_writepage| KAction::Scan {
            prio,
            may_writepage,
        };
        let mut k = Kswapd::new();
        assert_eq!(k.wake(mem, &vm, 0, now), (None, at(DEF_PRIORITY, false)));
        assert_eq!(
            k.state,
            KState::Sleep,
            "asleep until the world runs the scan"
        );
        k.scan_started(mem, scan(10));
        assert_eq!(k.state, KState::Scan);
        // A wake while scanning only remembers the order.
        assert_eq!(k.wake(mem, &vm, 0, now), (None, KAction::Nothing));
        assert_eq!(k.target, Some(0));
        assert_eq!(k.scan_done(mem, &vm, now), at(11, false));
        k.scan_started(mem, scan(10));
        assert_eq!(k.scan_done(mem, &vm, now), at(10, false));
        k.scan_started(mem, scan(10));
        assert_eq!(k.scan_done(mem, &vm, now), at(9, false));
        // Below priority 10 a scan that found pages waits; then pageout is allowed.
        k.scan_started(mem, scan(100));
        assert_eq!(k.scan_done(mem, &vm, now), KAction::CongestionWait);
        assert_eq!(k.state, KState::CongestionWait);
        assert_eq!(k.woken(mem, &vm, now), at(8, true));
        k.scan_started(mem, scan(10));
        // Balanced: the remembered order is not higher, so kswapd naps, then sleeps.
        while !mem.zone_ok(0, Mark::High) {
            mem.free(0, crate::model::mm::memory::PageState::Clean);
        }
        assert_eq!(k.scan_done(mem, &vm, now), KAction::Nap);
        assert_eq!((k.state, k.target), (KState::Nap, None));
        let later = now + SimDuration::from_ms(9);
        assert_eq!(k.nap_end(mem, &vm, later), KAction::Nothing);
        assert_eq!(k.state, KState::Sleep);
        assert!(mem.measuring());
        assert_eq!((mem.obs.kswapd_wakeups, mem.obs.kswapd_passes), (1, 1));
        assert_eq!(mem.obs.kswapd_scanned, 140);
        assert_eq!(mem.obs.kswapd_awake, SimDuration::from_ms(9));
    }
}
