//! Direct reclaim (`__alloc_pages_slowpath` → `try_to_free_pages`) for readers filling page
//! cache and writers dirtying it, as a component: `DirectReclaim` owns one `Reclaimer` per
//! allocation in the slow path (a slot table with a free list) and its priority loop's
//! decisions, taking `&mut` of the zone's [`Mem`]; it returns what the world does next (scan,
//! wait, start a new attempt, hand the pages over). The world's adapter
//! (`src/model/world/reclaim.rs`) runs the scans on the CPU and the waits. The kernel rules are in
//! [`crate::model::mm::pressure`]'s documentation.

use crate::engine::SimTime;
use crate::model::base::bio::BioId;
use crate::model::base::ids::{ActorId, ReclaimSlot};
use crate::model::mm::memory::{DEF_PRIORITY, Gfp, Mem, PageState, SWAP_CLUSTER_MAX, Scan};

/// Who is in direct reclaim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::model) enum ReclaimWho {
    /// A reader filling page cache for `bio`, issued by its job's context `ctx`.
    Read { bio: BioId, ctx: ActorId },
    /// A buffered writer dirtying its next step.
    Writer(u32),
    /// A fake-gitk process growing its anonymous buffer.
    Anon { proc: u32 },
    /// A fake-gitk process growing its hash map.
    Map { proc: u32 },
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
        let fast = mem.alloc_fast(r.need, Gfp::User, PageState::Filling);
        r.need -= fast;
        r.granted += fast;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Scheduler, SimDuration};
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
        let mem = &mut w.memory_mut().zone_mut().expect("a zone").mem;
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
