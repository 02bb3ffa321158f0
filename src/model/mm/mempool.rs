//! dm-crypt's bounce-page `page_pool` (`crypt_alloc_buffer` through `mempool_alloc`) as a
//! component: `Mempool` owns the reserve, the threads asleep on it and their wait clocks, and
//! takes `&mut` of the zone's [`Mem`] for each page; its methods say what the world must do next
//! (wake kswapd, split a partial clone, put a thread to sleep, wake a sleeper). The world's thin
//! adapter (`src/model/world/mempool.rs`) acts on those outcomes. The kernel rules are in
//! [`crate::model::mm::pressure`]'s documentation.

use crate::engine::{EventId, SimDuration, SimTime};
use crate::model::base::bio::BioId;
use crate::model::base::ids::ActorId;
use crate::model::mm::memory::{Gfp, Mem, PageState};
use std::collections::VecDeque;

/// Outcome of asking for a bio's bounce pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::model) enum Bounce {
    /// All pages are held: encrypt and submit.
    Ready,
    /// The thread sleeps on the empty pool.
    Asleep,
    /// A partial clone was split off with the pages held so far; the thread encrypts and
    /// submits it, then naps.
    Partial(BioId),
}

/// What became of one bounce page's try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::model) enum PageOutcome {
    /// The page is held (from the zone or the reserve).
    Got,
    /// Zone and reserve are empty and the clone may go out partial with the pages held.
    Split,
    /// Zone and reserve are empty: the thread sleeps on the pool.
    Sleep,
}

/// One bounce page's try: its outcome, and whether the zone asked for kswapd.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::model) struct PageTry {
    /// What the caller does next.
    pub(in crate::model) outcome: PageOutcome,
    /// The zone fell below its low watermark: the world wakes kswapd (order 0).
    pub(in crate::model) wake_kswapd: bool,
}

/// dm-crypt's `page_pool`: the reserve, the sleepers and the per-thread wait clocks.
#[derive(Debug)]
pub(in crate::model) struct Mempool {
    /// The reserve's size when full (`page_pool`).
    capacity: u32,
    /// Pages in the reserve (counted in the zone's `pages.bounce`).
    reserve: u32,
    /// Pages below which a clone may not go out partial.
    min_bio_pages: u32,
    /// Actors asleep on the empty pool, in arrival order, with their timeout timers.
    sleepers: VecDeque<(ActorId, EventId)>,
    /// Per-actor time a pool sleep or a partial nap started.
    wait_since: Vec<Option<SimTime>>,
}

impl Mempool {
    /// A full pool of `capacity` pages for `actors` threads and contexts.
    pub(in crate::model) fn new(capacity: u32, min_bio_pages: u32, actors: usize) -> Mempool {
        Mempool {
            capacity,
            reserve: capacity,
            min_bio_pages,
            sleepers: VecDeque::new(),
            wait_since: vec![None; actors],
        }
    }

    /// Pages in the reserve.
    pub(in crate::model) fn reserve(&self) -> u32 {
        self.reserve
    }

    /// Whether the reserve fits in the zone's `bounce` pages (`Err` says how not).
    pub(in crate::model) fn check(&self, bounce_pages: u64) -> Result<(), String> {
        if u64::from(self.reserve) > bounce_pages {
            return Err(format!(
                "page_pool reserve {} exceeds the {} bounce pages",
                self.reserve, bounce_pages
            ));
        }
        Ok(())
    }

    /// Tries one bounce page for a clone holding `held` pages: the zone at the mempool floor,
    /// then the reserve; when both are empty, a clone holding `min_bio_pages` may go out
    /// partial if `may_split`, else the thread sleeps.
    pub(in crate::model) fn try_page(
        &mut self,
        mem: &mut Mem,
        held: u32,
        may_split: bool,
        now: SimTime,
    ) -> PageTry {
        let a = mem.alloc(0, Gfp::MempoolTry, PageState::Bounce, now);
        let outcome = if a.granted {
            if mem.measuring() {
                mem.obs.bounce_from_zone += 1;
            }
            PageOutcome::Got
        } else if self.reserve > 0 {
            self.reserve -= 1;
            if mem.measuring() {
                mem.obs.bounce_from_reserve += 1;
            }
            PageOutcome::Got
        } else if held >= self.min_bio_pages && may_split {
            PageOutcome::Split
        } else {
            PageOutcome::Sleep
        };
        PageTry {
            outcome,
            wake_kswapd: a.wake_kswapd,
        }
    }

    /// Up to `n` bounce pages straight from the zone while it stays above its low mark: what
    /// `n` calls of [`Mempool::try_page`] would get from the zone without waking kswapd, in
    /// one step. The rest go page by page through [`Mempool::try_page`].
    pub(in crate::model) fn take_fast(&mut self, mem: &mut Mem, n: u32) -> u32 {
        let got = mem.alloc_fast(n, Gfp::MempoolTry, PageState::Bounce);
        if mem.measuring() {
            mem.obs.bounce_from_zone += u64::from(got);
        }
        got
    }

    /// Up to `n` bounce pages from the zone as successive [`Mempool::try_page`] calls would get
    /// them there (fast path, then the mempool's slow path), for a caller that knows the
    /// kswapd wake-ups those calls would ask for change nothing. The rest go page by page.
    pub(in crate::model) fn take_run(&mut self, mem: &mut Mem, n: u32) -> u32 {
        let (got, _) = mem.alloc_run(n, Gfp::MempoolTry, PageState::Bounce);
        if mem.measuring() {
            mem.obs.bounce_from_zone += u64::from(got);
        }
        got
    }

    /// A partial clone was split off (counted).
    pub(in crate::model) fn split(&mut self, mem: &mut Mem) {
        if mem.measuring() {
            mem.obs.partial_clones += 1;
        }
    }

    /// `actor` sleeps on the empty pool from `now`, until a refill or `timer` fires.
    pub(in crate::model) fn sleep(
        &mut self,
        mem: &mut Mem,
        actor: ActorId,
        timer: EventId,
        now: SimTime,
    ) {
        self.sleepers.push_back((actor, timer));
        self.wait_since[actor.index()] = Some(now);
        if mem.measuring() {
            mem.obs.mempool_waits += 1;
        }
    }

    /// Whether the reserve is full: a page freed now goes back to the zone.
    pub(in crate::model) fn is_full(&self) -> bool {
        self.reserve >= self.capacity
    }

    /// Returns one bounce page: it refills the reserve first, waking the first sleeper (its
    /// timer for the world to cancel), else goes back to the zone.
    pub(in crate::model) fn free_page(&mut self, mem: &mut Mem) -> Option<(ActorId, EventId)> {
        if !self.is_full() {
            self.reserve += 1;
            self.sleepers.pop_front()
        } else {
            mem.free(0, PageState::Bounce);
            None
        }
    }

    /// `actor`'s 5·HZ sleep ran out: `true` if it was still asleep (now no longer).
    pub(in crate::model) fn timed_out(&mut self, actor: ActorId) -> bool {
        match self.sleepers.iter().position(|&(a, _)| a == actor) {
            Some(i) => {
                self.sleepers.remove(i);
                true
            }
            None => false,
        }
    }

    /// `actor` starts its nap after a partial clone at `now`.
    pub(in crate::model) fn nap(&mut self, actor: ActorId, now: SimTime) {
        self.wait_since[actor.index()] = Some(now);
    }

    /// `actor`'s pool sleep ended at `now`: its time past `warmup` is counted.
    pub(in crate::model) fn sleep_end(
        &mut self,
        mem: &mut Mem,
        actor: ActorId,
        now: SimTime,
        warmup: SimTime,
    ) {
        if let Some(t) = self.waited(mem, actor, now, warmup) {
            mem.obs.mempool_wait_time += t;
        }
    }

    /// `actor`'s partial-clone nap ended at `now`: its time past `warmup` is counted.
    pub(in crate::model) fn nap_end(
        &mut self,
        mem: &mut Mem,
        actor: ActorId,
        now: SimTime,
        warmup: SimTime,
    ) {
        if let Some(t) = self.waited(mem, actor, now, warmup) {
            mem.obs.partial_nap_time += t;
        }
    }

    /// Ends `actor`'s wait clock; the measured part when the zone is measuring.
    fn waited(
        &mut self,
        mem: &Mem,
        actor: ActorId,
        now: SimTime,
        warmup: SimTime,
    ) -> Option<SimDuration> {
        let since = self.wait_since[actor.index()].take()?;
        mem.measuring()
            .then(|| now.saturating_since(since.max(warmup)))
    }
}
