//! The world's side of `mm/reclaim.rs`: direct reclaimers' scans on a CPU, their waits, and the
//! pages handed to the reader, writer or fault that asked.

use crate::engine::{Scheduler, SimDuration};
use crate::model::base::ids::{ActorId, QueueClass, ReclaimSlot, TaskOwner};
use crate::model::mm::cwait::CwWho;
use crate::model::mm::memory::{Gfp, PageState};
use crate::model::mm::reclaim::*;
use crate::model::world::World;
use crate::model::world::event::Event;

impl World {
    // ----- the world's adapter: scans, waits and hand-overs -----------------------------------

    /// Allocates `pages` order-0 pages for `who` as page cache being filled. `true` if all were
    /// granted at once; otherwise the rest are got by a direct reclaimer, which calls back
    /// [`World::reclaim_done`] when it has them.
    pub(in crate::model) fn alloc_cache_pages(
        &mut self,
        who: ReclaimWho,
        pages: u32,
        sched: &mut Scheduler<Event>,
    ) -> bool {
        let now = sched.now();
        let mut granted = self
            .pr()
            .mem
            .alloc_fast(pages, Gfp::User, PageState::Filling);
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
            if woke {
                // Later pages ask no wake-up: take the run the zone grants in one step.
                granted += self
                    .pr()
                    .mem
                    .alloc_run(pages - granted, Gfp::User, PageState::Filling)
                    .0;
            }
        }
        if granted == pages {
            return true;
        }
        let p = self.pr();
        let slot = p
            .reclaim
            .enter(&mut p.mem, who, pages - granted, granted, now);
        self.reclaim_step(slot, sched);
        false
    }

    /// One priority step of `try_to_free_pages`: scan, charging the reclaimer's CPU.
    pub(in crate::model) fn reclaim_step(
        &mut self,
        slot: ReclaimSlot,
        sched: &mut Scheduler<Event>,
    ) {
        // Direct reclaimers lack PF_SWAPWRITE: no pageout to a write-congested disk.
        let may_writepage = !self.write_congested();
        let p = self.pr();
        let prio = p.reclaim.get(slot).prio;
        let stop = p.reclaim.stop(slot);
        let tag = TaskOwner::Reclaim(slot);
        let scan = self.shrink(prio, may_writepage, stop, tag, sched);
        let p = self.pr();
        p.reclaim.scanned(&mut p.mem, slot, scan);
    }

    /// The io context a reclaim scan's swap-outs are charged to in CFQ: a direct reclaimer's
    /// own submitting context (the reading job's, the fake-gitk copy's); `None` for kswapd and
    /// for a buffered writer, whose writes the flusher submits.
    pub(in crate::model) fn reclaimer_context(&mut self, tag: TaskOwner) -> Option<ActorId> {
        let TaskOwner::Reclaim(slot) = tag else {
            return None;
        };
        let who = self.pr().reclaim.get(slot).who;
        match who {
            ReclaimWho::Read { ctx, .. } => Some(ctx),
            ReclaimWho::Anon { proc } | ReclaimWho::Map { proc } | ReclaimWho::Fault { proc } => {
                Some(self.procs[proc as usize].ctx)
            }
            ReclaimWho::Writer(_) => None,
        }
    }

    /// A direct reclaimer's scan finished on the CPU.
    pub(in crate::model) fn reclaim_scanned(
        &mut self,
        slot: ReclaimSlot,
        sched: &mut Scheduler<Event>,
    ) {
        let next = self.pr().reclaim.after_scan(slot);
        self.reclaim_next(slot, next, sched);
    }

    /// Acts on the reclaimer's decision.
    fn reclaim_next(&mut self, slot: ReclaimSlot, next: Next, sched: &mut Scheduler<Event>) {
        match next {
            Next::Scan => self.reclaim_step(slot, sched),
            Next::Wait => {
                let t = self.sc.kernel.hz_div(10);
                self.reclaim_wait(slot, t, sched);
            }
            Next::AttemptEnd => self.reclaim_attempt_end(slot, sched),
        }
    }

    /// `congestion_wait` (or, with 2.6.37's switch, `wait_iff_congested`) for a reclaimer;
    /// `wait_iff_congested` with nothing congested returns at once.
    pub(in crate::model) fn reclaim_wait(
        &mut self,
        slot: ReclaimSlot,
        t: SimDuration,
        sched: &mut Scheduler<Event>,
    ) {
        let mut class = self.cwait_class();
        let iff = self.sc.kernel.vm.wait_iff_congested;
        let congested = self.sc.block.mode == crate::model::base::config::QueueMode::Legacy
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
        if self.sc.kernel.vm.congestion_both {
            // Patch 3: ASYNC first, whatever the version's class; SYNC for the rest.
            class = QueueClass::Async;
            self.pr().reclaim.get(slot).both_until = Some(sched.now() + t);
        }
        self.congestion_wait(CwWho::Reclaim(slot), class, t, sched);
    }

    /// A reclaimer's wait ended: after a HZ/10 wait the priority loop goes on; after the
    /// allocator's HZ/50 wait a new attempt starts. Under patch 3 an ASYNC wait that ended
    /// early first sleeps on SYNC for what is left of its timeout.
    pub(in crate::model) fn reclaim_woken(
        &mut self,
        slot: ReclaimSlot,
        sched: &mut Scheduler<Event>,
    ) {
        let now = sched.now();
        if let Some(until) = self.pr().reclaim.get(slot).both_until.take()
            && now < until
        {
            let rest = until.since(now);
            self.congestion_wait(CwWho::Reclaim(slot), QueueClass::Sync, rest, sched);
            return;
        }
        let next = self.pr().reclaim.woken(slot);
        self.reclaim_next(slot, next, sched);
    }

    /// `try_to_free_pages` returned: retry the allocation at min; wait HZ/50 and try again if
    /// it still fails.
    pub(in crate::model) fn reclaim_attempt_end(
        &mut self,
        slot: ReclaimSlot,
        sched: &mut Scheduler<Event>,
    ) {
        let now = sched.now();
        let p = self.pr();
        match p.reclaim.retry(&mut p.mem, slot, now) {
            Retry::Done { who, pages } => self.reclaim_done(who, pages, sched),
            Retry::Again { progress } => {
                if !progress && self.sc.kernel.vm.restart_wakes_kswapd {
                    // No progress: the slow path restarts, and 2.6.32 wakes kswapd again there.
                    self.wake_kswapd(0, sched);
                }
                self.pr().reclaim.finish_attempt(slot);
                let t = self.sc.kernel.hz_div(50);
                self.reclaim_wait(slot, t, sched);
            }
        }
    }

    /// A direct reclaimer got all its pages.
    pub(in crate::model) fn reclaim_done(
        &mut self,
        who: ReclaimWho,
        pages: u32,
        sched: &mut Scheduler<Event>,
    ) {
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
            ReclaimWho::Anon { proc } => self.gitk_grown(proc, pages, sched),
            ReclaimWho::Map { proc } => self.gitk_mapped(proc, pages, sched),
            ReclaimWho::Fault { proc } => self.gitk_fault_page(proc, sched),
        }
    }
}
