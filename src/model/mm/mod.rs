//! Memory management (`mm/page_alloc.c`, `mm/vmscan.c`, `mm/backing-dev.c`, `mm/mempool.c`,
//! `mm/swap_state.c`, 2.6.32 unless a switch says otherwise): the zone and its watermarks,
//! kswapd, direct reclaim, `congestion_wait`, GFP_ATOMIC streams, dm-crypt's page pool and swap.
//! `docs/model/memory.md` and `docs/model/kswapd.md` describe them.
//!
//! The memory model behind one interface: `Memory` is either unlimited (every bounce page
//! granted and only counted) or a zone with the processes that press on it and relieve it
//! (`crate::model::mm::pressure::Pressure`). The world holds one `Memory` and asks it; only the
//! zone-only processes (kswapd, direct reclaim, GFP_ATOMIC, the mempool) reach inside.

pub mod atomic;
pub mod binomial;
pub mod cwait;
pub mod filecache;
pub mod kswapd;
pub mod memory;
pub mod mempool;
pub mod pressure;
pub mod reclaim;
pub mod swap;
pub mod watermarks;
pub mod zone;

use crate::engine::SimTime;
use crate::model::base::bio::{Bio, Origin};
use crate::model::base::obs::{MemoryObs, ProcObs};
use crate::model::mm::memory::{Allocator, PAGE_SIZE, PageState, pages_for};
use crate::model::mm::pressure::Pressure;

/// The run's memory.
#[derive(Debug)]
pub(in crate::model) enum Memory {
    /// No `memory:` section: allocations always succeed.
    Unlimited(Allocator),
    /// A zone under pressure.
    Zone(Box<Pressure>),
}

impl Memory {
    /// Whether the run models a zone (allocations may wait, fail or reclaim).
    #[inline]
    pub fn is_zone(&self) -> bool {
        matches!(self, Memory::Zone(_))
    }

    /// The zone's processes, with a `memory:` section.
    #[inline]
    pub fn zone(&self) -> Option<&Pressure> {
        match self {
            Memory::Zone(p) => Some(p),
            Memory::Unlimited(_) => None,
        }
    }

    /// The zone's processes, mutably.
    #[inline]
    pub fn zone_mut(&mut self) -> Option<&mut Pressure> {
        match self {
            Memory::Zone(p) => Some(p),
            Memory::Unlimited(_) => None,
        }
    }

    /// Allocation attempts and reclaim scanning so far (the engine's work units).
    #[inline]
    pub fn work(&self) -> u64 {
        self.zone().map_or(0, |p| p.mem.work())
    }

    /// Brings the zone's integrals up to `now` (before each event).
    #[inline]
    pub fn advance(&mut self, now: SimTime) {
        if let Memory::Zone(p) = self {
            p.mem.advance(now);
        }
    }

    /// The warm-up ended: the zone's counters start.
    pub fn start_measuring(&mut self, now: SimTime) {
        if let Memory::Zone(p) = self {
            p.mem.start_measuring(now);
        }
    }

    /// Moves `n` pages from one state to another (the zone's books; nothing when unlimited).
    #[inline]
    pub fn transition(&mut self, n: u64, from: PageState, to: PageState) {
        if let Memory::Zone(p) = self {
            p.mem.transition(n, from, to);
        }
    }

    /// An encrypted write took its bounce pages without waiting: with unlimited memory they
    /// are granted here (the zone grants them before encrypting, in the mempool).
    pub fn grant_unlimited_bounce(&mut self, bio: &mut Bio) {
        if let Memory::Unlimited(a) = self {
            let pages = pages_for(bio.bytes);
            let granted = a.alloc_bounce(pages);
            debug_assert!(granted, "unlimited memory refused a bounce page");
            bio.bounce_pages = pages;
        }
    }

    /// Returns `pages` bounce pages with unlimited memory (`true`); with a zone they must go
    /// back through the mempool, which may wake a sleeper (`false`: nothing done here).
    pub fn free_unlimited_bounce(&mut self, pages: u32) -> bool {
        match self {
            Memory::Unlimited(a) => {
                a.free_bounce(pages);
                true
            }
            Memory::Zone(_) => false,
        }
    }

    /// A completed bio's page cache: pages being filled become clean, and writeback ends.
    pub fn cache_done(&mut self, bio: &Bio) {
        if let Memory::Zone(p) = self {
            if bio.cache_pages > 0 {
                let n = u64::from(bio.cache_pages);
                p.mem.transition(n, PageState::Filling, PageState::Clean);
            }
            if matches!(bio.origin, Origin::Writeback(_)) {
                let n = u64::from(bio.bytes) / PAGE_SIZE;
                p.mem.transition(n, PageState::Writeback, PageState::Clean);
            }
        }
    }

    /// Bounce pages allocated and freed over the run, given those `held` by live bios (with a
    /// zone, the page_pool reserve counts as allocated and freed).
    pub fn bounce_books(&self, held: u64) -> (u64, u64) {
        match self {
            Memory::Zone(p) => (
                held + u64::from(p.pool.reserve()),
                u64::from(p.pool.reserve()),
            ),
            Memory::Unlimited(Allocator::Unlimited { allocated, freed }) => (*allocated, *freed),
        }
    }

    /// Closes the zone's books at `now` (kswapd awake until now counts, from `warmup`).
    pub fn finish(
        self,
        now: SimTime,
        warmup: SimTime,
        procs: Vec<ProcObs>,
        rx: Vec<crate::model::base::obs::RxObs>,
    ) -> Option<Box<MemoryObs>> {
        let Memory::Zone(mut p) = self else {
            return None;
        };
        if let Some(since) = p.kswapd.awake_since
            && p.mem.measuring()
        {
            p.mem.obs.kswapd_awake += now.saturating_since(since.max(warmup));
        }
        let mut swap = p.swap.finish();
        swap.procs = procs;
        let mut obs = p.mem.finish(now);
        obs.swap = swap;
        obs.rx = rx;
        Some(Box::new(obs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimDuration;

    #[test]
    fn unlimited_memory_grants_and_counts_bounce_pages_back() {
        let mut m = Memory::Unlimited(Allocator::default());
        assert!(!m.is_zone());
        let t = SimTime::ZERO + SimDuration::from_ms(1);
        let mut b = Bio::new(
            crate::model::base::bio::Dir::Write,
            false,
            3 * 4096,
            0,
            Origin::Job(0),
            t,
        );
        m.grant_unlimited_bounce(&mut b);
        assert_eq!(b.bounce_pages, 3);
        assert_eq!(m.bounce_books(3), (3, 0));
        assert!(m.free_unlimited_bounce(b.bounce_pages));
        m.cache_done(&b);
        assert_eq!(m.bounce_books(0), (3, 3));
        assert_eq!(m.work(), 0);
        assert!(m.finish(t, SimTime::ZERO, Vec::new(), Vec::new()).is_none());
    }
}
