//! The world's side of `mm/kswapd.rs`: kswapd's actions carried out (scans on a CPU,
//! `congestion_wait`, naps) and pageout.

use crate::engine::Scheduler;
use crate::model::base::ids::{ActorId, TaskOwner};
use crate::model::mm::cwait::CwWho;
use crate::model::mm::kswapd::*;
use crate::model::mm::memory::{PAGE_SIZE, Scan};
use crate::model::mm::pressure::MemEvent;
use crate::model::world::World;
use crate::model::world::event::Event;

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
        let cic = self.reclaimer_context(tag);
        if self.pr().swap.enabled() {
            let scan = self.shrink_lists(prio, may_writepage, stop, cic, sched);
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
        self.pageout(scan.pageout, cic, sched);
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
    /// them as async bios (at most 512 KiB each) through dm-crypt, on behalf of the reclaiming
    /// task's io context `cic`.
    pub(in crate::model) fn pageout(
        &mut self,
        pages: u64,
        cic: Option<ActorId>,
        sched: &mut Scheduler<Event>,
    ) {
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
            self.writer_write(w as u32, n, cic, sched);
            left -= n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Limits, SimDuration};
    use crate::model::mm::memory::DEF_PRIORITY;
    use crate::model::mm::pressure::tests::{fill, quiet_world};
    use crate::model::mm::zone::Mark;

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
