//! kswapd (`balance_pgdat` and the `kswapd()` loop) as a state machine driven by the world's
//! events, and pageout, which kswapd and direct reclaim share. The state diagram and the
//! kernel rules are in [`super::pressure`]'s documentation.

use super::cwait::CwWho;
use super::event::Event;
use super::ids::TaskOwner;
use super::memory::{DEF_PRIORITY, PAGE_SIZE, SWAP_CLUSTER_MAX};
use super::pressure::MemEvent;
use super::world::World;
use super::zone::Mark;
use crate::engine::{EventId, Scheduler, SimTime};

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
    pub(super) target: Option<u32>,
    pub(super) order: u32,
    pub(super) prio: i32,
    pub(super) reclaimed: u64,
    pub(super) scanned: u64,
    /// The pages the running scan found (applied when it started; acted on when it ends).
    pub(super) last_scanned: u64,
    pub(super) awake_since: Option<SimTime>,
    pub(super) nap_timer: Option<EventId>,
}

impl Kswapd {
    pub(super) fn new() -> Self {
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

impl World {
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
    pub(super) fn kswapd_balanced(&self, order: u32) -> bool {
        let m = &self.memory.zone().expect("memory model is off").mem;
        m.zone_ok(order, Mark::High) || m.all_unreclaimable()
    }

    /// `loop_again`: a new balance pass at `order`.
    pub(super) fn kswapd_pass(&mut self, order: u32, sched: &mut Scheduler<Event>) {
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
    pub(super) fn kswapd_step(&mut self, sched: &mut Scheduler<Event>) {
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
    pub(super) fn shrink(
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
    pub(super) fn kswapd_continue(&mut self, sched: &mut Scheduler<Event>) {
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
    pub(super) fn kswapd_after(&mut self, sched: &mut Scheduler<Event>) {
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

    pub(super) fn kswapd_high_hit(&mut self, order: u32, sched: &mut Scheduler<Event>) {
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

    pub(super) fn kswapd_sleep(&mut self, now: SimTime) {
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
    pub(super) fn pageout(&mut self, pages: u64, sched: &mut Scheduler<Event>) {
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
    use crate::model::pressure::tests::{fill, quiet_world};

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
}
