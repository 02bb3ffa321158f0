//! Direct reclaim (`__alloc_pages_slowpath` → `try_to_free_pages`) for readers filling page
//! cache and writers dirtying it: one [`Reclaimer`] per allocation in the slow path. The
//! kernel rules are in [`super::pressure`]'s documentation.

use super::bio::BioId;
use super::cwait::CwWho;
use super::event::Event;
use super::ids::{ActorId, ReclaimSlot, TaskOwner};
use super::memory::{DEF_PRIORITY, Gfp, PageState, SWAP_CLUSTER_MAX};
use super::world::World;
use crate::engine::{Scheduler, SimDuration, SimTime};

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
    pub(super) who: ReclaimWho,
    pub(super) need: u32,
    pub(super) granted: u32,
    pub(super) started: SimTime,
    pub(super) prio: i32,
    pub(super) reclaimed: u64,
    pub(super) last_scanned: u64,
}

impl World {
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

    pub(super) fn reclaimer(&mut self, slot: ReclaimSlot) -> &mut Reclaimer {
        self.pr().reclaimers[slot.index()]
            .as_mut()
            .expect("reclaimer slot is empty")
    }

    /// One priority step of `try_to_free_pages`: scan, charging the reclaimer's CPU.
    pub(super) fn reclaim_step(&mut self, slot: ReclaimSlot, sched: &mut Scheduler<Event>) {
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

    pub(super) fn reclaim_next_prio(&mut self, slot: ReclaimSlot, sched: &mut Scheduler<Event>) {
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
    pub(super) fn reclaim_wait(
        &mut self,
        slot: ReclaimSlot,
        t: SimDuration,
        sched: &mut Scheduler<Event>,
    ) {
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
    pub(super) fn reclaim_attempt_end(&mut self, slot: ReclaimSlot, sched: &mut Scheduler<Event>) {
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
    pub(super) fn reclaim_done(
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
        }
    }
}
