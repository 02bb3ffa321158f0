//! Direct reclaim (`__alloc_pages_slowpath` → `try_to_free_pages`) for readers filling page
//! cache and writers dirtying it, as a component: [`DirectReclaim`] owns one [`Reclaimer`] per
//! allocation in the slow path (a slot table with a free list) and its priority loop's
//! decisions, taking `&mut` of the zone's [`Mem`]; it returns what the world does next (scan,
//! wait, start a new attempt, hand the pages over). The world's adapter (the `impl World`
//! below) runs the scans on the CPU and the waits. The kernel rules are in
//! [`crate::model::mm::pressure`]'s documentation.

use crate::engine::{Scheduler, SimDuration, SimTime};
use crate::model::base::bio::BioId;
use crate::model::base::ids::{ActorId, QueueClass, ReclaimSlot, TaskOwner};
use crate::model::mm::cwait::CwWho;
use crate::model::mm::memory::{DEF_PRIORITY, Gfp, Mem, PageState, SWAP_CLUSTER_MAX, Scan};
use crate::model::world::World;
use crate::model::world::event::Event;

/// Who is in direct reclaim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::model) enum ReclaimWho {
    /// A reader filling page cache for `bio`, issued by its job's context `ctx`.
    Read { bio: BioId, ctx: ActorId },
    /// A buffered writer dirtying its next step.
    Writer(u32),
    /// A fake-gitk process growing its anonymous buffer.
    Anon { proc: u32 },
    /// A fake-gitk process's major fault allocating the page to read into.
    Fault { proc: u32 },
}

/// One allocation in the slow path: pages still to get, and its reclaim attempt's counters.
#[derive(Debug, Clone, Copy)]
pub(in crate::model) struct Reclaimer {
    pub(in crate::model) who: ReclaimWho,
    pub(in crate::model) need: u32,
    pub(in crate::model) granted: u32,
    pub(in crate::model) started: SimTime,
    pub(in crate::model) prio: i32,
    pub(in crate::model) reclaimed: u64,
    pub(in crate::model) last_scanned: u64,
    /// Patch 3 (congestion-both): the ASYNC half of a wait is under way; a wake before this
    /// deadline sleeps on SYNC for the rest.
    pub(in crate::model) both_until: Option<SimTime>,
}

/// What a reclaimer does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::model) enum Next {
    /// Scan at its (new) priority.
    Scan,
    /// `congestion_wait(HZ/10)` before the next priority.
    Wait,
    /// `try_to_free_pages` returned: retry the allocation.
    AttemptEnd,
}

/// The allocation retried after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::model) enum Retry {
    /// All pages are held; the slot is free again.
    Done {
        /// Who gets them.
        who: ReclaimWho,
        /// How many.
        pages: u32,
    },
    /// Some are still missing: wait HZ/50; `progress` if the attempt reclaimed anything.
    Again {
        /// Whether the attempt reclaimed a page.
        progress: bool,
    },
}

/// The direct reclaimers: one slot per allocation in the slow path.
#[derive(Debug, Default)]
pub(in crate::model) struct DirectReclaim {
    slots: Vec<Option<Reclaimer>>,
    free: Vec<ReclaimSlot>,
}

impl DirectReclaim {
    /// The reclaimer in `slot`.
    pub(in crate::model) fn get(&mut self, slot: ReclaimSlot) -> &mut Reclaimer {
        self.slots[slot.index()]
            .as_mut()
            .expect("reclaimer slot is empty")
    }

    /// Pages held by direct reclaimers' allocations so far (counted as filling).
    pub(in crate::model) fn pages(&self) -> u64 {
        self.slots
            .iter()
            .flatten()
            .map(|r| u64::from(r.granted))
            .sum()
    }

    /// `who` enters the slow path at `now` holding `granted` pages, missing `need`: a stall is
    /// counted and a slot taken (a freed one first).
    pub(in crate::model) fn enter(
        &mut self,
        mem: &mut Mem,
        who: ReclaimWho,
        need: u32,
        granted: u32,
        now: SimTime,
    ) -> ReclaimSlot {
        if mem.measuring() {
            mem.obs.direct_stalls += 1;
        }
        let r = Reclaimer {
            who,
            need,
            granted,
            started: now,
            both_until: None,
            prio: DEF_PRIORITY,
            reclaimed: 0,
            last_scanned: 0,
        };
        match self.free.pop() {
            Some(s) => {
                self.slots[s.index()] = Some(r);
                s
            }
            None => {
                self.slots.push(Some(r));
                ReclaimSlot((self.slots.len() - 1) as u32)
            }
        }
    }

    /// The scan's stop: once the attempt has its 32 pages, except at the first priority.
    pub(in crate::model) fn stop(&mut self, slot: ReclaimSlot) -> Option<u64> {
        let r = self.get(slot);
        (r.prio < DEF_PRIORITY).then(|| SWAP_CLUSTER_MAX.saturating_sub(r.reclaimed))
    }

    /// A scan's result, counted.
    pub(in crate::model) fn scanned(&mut self, mem: &mut Mem, slot: ReclaimSlot, scan: Scan) {
        let r = self.get(slot);
        r.reclaimed += scan.reclaimed;
        r.last_scanned = scan.scanned;
        if mem.measuring() {
            mem.obs.direct_scanned += scan.scanned;
            mem.obs.direct_reclaimed += scan.reclaimed;
        }
    }

    /// After a scan ran on the CPU: enough reclaimed ends the attempt; a scan below priority
    /// 10 that found pages waits; else the next priority.
    pub(in crate::model) fn after_scan(&mut self, slot: ReclaimSlot) -> Next {
        let r = *self.get(slot);
        if r.reclaimed >= SWAP_CLUSTER_MAX {
            Next::AttemptEnd
        } else if r.last_scanned > 0 && r.prio < DEF_PRIORITY - 2 {
            Next::Wait
        } else {
            self.next_prio(slot)
        }
    }

    /// Lowers the priority: past 0 the attempt ends.
    pub(in crate::model) fn next_prio(&mut self, slot: ReclaimSlot) -> Next {
        let r = self.get(slot);
        r.prio -= 1;
        if r.prio < 0 {
            Next::AttemptEnd
        } else {
            Next::Scan
        }
    }

    /// A wait ended: after the allocator's HZ/50 wait (attempt finished) a fresh
    /// `try_to_free_pages` scans; after a HZ/10 wait the priority loop goes on.
    pub(in crate::model) fn woken(&mut self, slot: ReclaimSlot) -> Next {
        let r = self.get(slot);
        if r.prio < 0 || r.reclaimed >= SWAP_CLUSTER_MAX {
            r.prio = DEF_PRIORITY;
            r.reclaimed = 0;
            Next::Scan
        } else {
            self.next_prio(slot)
        }
    }

    /// Retries the allocation at min after an attempt; with all pages held the slot is freed
    /// and the stall recorded.
    pub(in crate::model) fn retry(
        &mut self,
        mem: &mut Mem,
        slot: ReclaimSlot,
        now: SimTime,
    ) -> Retry {
        let r = self.get(slot);
        let progress = r.reclaimed > 0;
        while r.need > 0 && mem.alloc(0, Gfp::User, PageState::Filling, now).granted {
            r.need -= 1;
            r.granted += 1;
        }
        let r = *r;
        if r.need > 0 {
            return Retry::Again { progress };
        }
        self.slots[slot.index()] = None;
        self.free.push(slot);
        if mem.measuring() {
            mem.obs.direct_stall.record(now.since(r.started).as_ns());
        }
        Retry::Done {
            who: r.who,
            pages: r.granted,
        }
    }

    /// Marks the attempt finished, so the wait's end starts a new one.
    pub(in crate::model) fn finish_attempt(&mut self, slot: ReclaimSlot) {
        self.get(slot).prio = -1;
    }
}

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
            ReclaimWho::Fault { proc } => self.gitk_fault_page(proc, sched),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::mm::pressure::tests::{fill, quiet_world};
    use crate::model::mm::zone::AllocClass;

    fn scan(scanned: u64, reclaimed: u64) -> Scan {
        Scan {
            scanned,
            reclaimed,
            ..Scan::default()
        }
    }

    /// The priority loop alone, scripted against a zone at the min floor: scans below
    /// priority 10 wait, 32 reclaimed pages end the attempt, a failed retry waits and the
    /// wait's end starts a fresh attempt, and a retry with room frees the slot for reuse.
    #[test]
    fn a_reclaimer_walks_its_priorities_and_hands_its_pages_over_once_the_zone_has_room() {
        let mut sched = Scheduler::new();
        let mut w = quiet_world(&mut sched);
        let now = sched.now();
        fill(&mut w, now, |m| {
            m.zone.free_pages() > m.zone.order0_floor(AllocClass::NoIoKernel)
        });
        let mem = &mut w.memory.zone_mut().expect("a zone").mem;
        let mut dr = DirectReclaim::default();
        let who = ReclaimWho::Writer(3);
        let s = dr.enter(mem, who, 2, 1, now);
        assert_eq!((s, dr.pages()), (ReclaimSlot(0), 1));
        // Priority 12 scans without a stop; then 11 and 10 go straight on.
        assert_eq!(dr.stop(s), None);
        dr.scanned(mem, s, scan(10, 0));
        assert_eq!(dr.after_scan(s), Next::Scan);
        assert_eq!(dr.stop(s), Some(32));
        for _ in 0..2 {
            dr.scanned(mem, s, scan(10, 4));
            assert_eq!(dr.after_scan(s), Next::Scan);
        }
        // Below priority 10 a scan that found pages waits; its end goes on to priority 8.
        assert_eq!(dr.get(s).prio, 9);
        dr.scanned(mem, s, scan(10, 4));
        assert_eq!(dr.after_scan(s), Next::Wait);
        assert_eq!(dr.woken(s), Next::Scan);
        assert_eq!((dr.get(s).prio, dr.stop(s)), (8, Some(20)));
        dr.scanned(mem, s, scan(40, 20));
        assert_eq!(dr.after_scan(s), Next::AttemptEnd);
        // The zone is still at its floor: the retry fails, the wait's end starts afresh.
        assert_eq!(dr.retry(mem, s, now), Retry::Again { progress: true });
        dr.finish_attempt(s);
        assert_eq!(dr.woken(s), Next::Scan);
        assert_eq!((dr.get(s).prio, dr.get(s).reclaimed), (DEF_PRIORITY, 0));
        // Room in the zone: the retry gets the rest and frees the slot.
        for _ in 0..8 {
            mem.free(0, PageState::Clean);
        }
        let later = now + SimDuration::from_ms(7);
        assert_eq!(dr.retry(mem, s, later), Retry::Done { who, pages: 3 });
        assert_eq!(dr.pages(), 0);
        assert!(mem.measuring());
        assert_eq!(mem.obs.direct_stalls, 1);
        assert_eq!((mem.obs.direct_scanned, mem.obs.direct_reclaimed), (80, 32));
        // The freed slot is taken first by the next stall.
        assert_eq!(dr.enter(mem, who, 1, 0, later), s);
    }
}
