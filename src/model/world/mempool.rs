//! The world's side of `mm/mempool.rs`: bounce pages for a write clone, partial clones, and
//! threads asleep on the pool.

use crate::engine::{Scheduler, SimDuration, SimTime};
use crate::model::base::bio::{Bio, BioId};
use crate::model::base::ids::ActorId;
use crate::model::base::obs::Stage;
use crate::model::mm::cwait::CwWho;
use crate::model::mm::memory::{PAGE_SIZE, PageState};
use crate::model::mm::mempool::*;
use crate::model::mm::pressure::MemEvent;
use crate::model::world::World;
use crate::model::world::event::Event;

impl World {
    // ----- the world's adapter: acts on the pool's outcomes -----------------------------------

    /// Gets the bounce pages of write `bio` for crypt thread (or inline context) `actor`,
    /// page by page through [`Mempool::try_page`], waking kswapd when the zone asks.
    pub(in crate::model) fn bounce_alloc(
        &mut self,
        actor: ActorId,
        bio: BioId,
        may_split: bool,
        sched: &mut Scheduler<Event>,
    ) -> Bounce {
        let now = sched.now();
        let need = crate::model::mm::memory::pages_for(self.bios[bio].bytes);
        let held = self.bios[bio].bounce_pages;
        let p = self.pr();
        let fast = p.pool.take_fast(&mut p.mem, need.saturating_sub(held));
        self.bios[bio].bounce_pages += fast;
        while self.bios[bio].bounce_pages < need {
            let held = self.bios[bio].bounce_pages;
            let p = self.pr();
            let t = p.pool.try_page(&mut p.mem, held, may_split, now);
            if t.wake_kswapd {
                self.wake_kswapd(0, sched);
            }
            match t.outcome {
                PageOutcome::Got => {
                    self.bios[bio].bounce_pages += 1;
                    // While kswapd is awake, the wake-ups of the pages after this one change
                    // nothing: take them from the zone in one step.
                    let left = need - self.bios[bio].bounce_pages;
                    let p = self.pr();
                    if p.kswapd.wake_changes_nothing(0) {
                        let got = p.pool.take_run(&mut p.mem, left);
                        self.bios[bio].bounce_pages += got;
                    }
                }
                PageOutcome::Split => return Bounce::Partial(self.split_partial(bio, now)),
                PageOutcome::Sleep => {
                    self.pool_sleep(actor, sched);
                    return Bounce::Asleep;
                }
            }
        }
        Bounce::Ready
    }

    /// Splits the pages held so far off `bio` as a partial clone, a new bio in the system.
    pub(in crate::model) fn split_partial(&mut self, parent: BioId, now: SimTime) -> BioId {
        let p = &mut self.bios[parent];
        let pages = p.bounce_pages;
        let bytes = pages * PAGE_SIZE as u32;
        let mut child = Bio::new(p.dir, p.sync, bytes, p.offset, p.origin, now);
        child.service_u = p.service_u;
        child.crypt_u = p.crypt_u;
        child.measured = p.measured;
        child.bounce_pages = pages;
        child.accepted = now;
        p.bytes -= bytes;
        p.offset += u64::from(bytes);
        p.bounce_pages = 0;
        let p = self.pr();
        p.pool.split(&mut p.mem);
        let id = self.admit(child);
        self.enter(id, Stage::CryptService, now);
        id
    }

    /// `actor` sleeps on the empty pool, with its 5·HZ timeout.
    pub(in crate::model) fn pool_sleep(&mut self, actor: ActorId, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let t = SimDuration::from_secs(5);
        let timer = sched.schedule_in(t, Event::Memory(MemEvent::MempoolTimeout { actor }));
        let p = self.pr();
        p.pool.sleep(&mut p.mem, actor, timer, now);
    }

    /// The mempool's 5·HZ sleep ran out: retry.
    pub(in crate::model) fn mempool_timeout(
        &mut self,
        actor: ActorId,
        sched: &mut Scheduler<Event>,
    ) {
        if self.pr().pool.timed_out(actor) {
            self.pool_sleep_end(actor, sched);
        }
    }

    fn pool_sleep_end(&mut self, actor: ActorId, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let warmup = self.rec.warmup();
        let p = self.pr();
        p.pool.sleep_end(&mut p.mem, actor, now, warmup);
        self.bounce_resume(actor, sched);
    }

    /// A write's bounce pages come back at its completion, each refill waking a sleeper.
    pub(in crate::model) fn free_bounce(&mut self, pages: u32, sched: &mut Scheduler<Event>) {
        for left in (1..=pages).rev() {
            let p = self.pr();
            if p.pool.is_full() {
                // Every page left goes back to the zone with nothing in between (only a refill
                // wakes a sleeper): one run, the same coalescing draws in the same order.
                p.mem.free_pages(u64::from(left), PageState::Bounce);
                return;
            }
            if let Some((actor, timer)) = p.pool.free_page(&mut p.mem) {
                sched.cancel(timer);
                self.pool_sleep_end(actor, sched);
            }
        }
    }

    /// Starts a crypt thread's HZ/100 nap after a partial clone.
    pub(in crate::model) fn partial_nap(&mut self, actor: ActorId, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        self.pr().pool.nap(actor, now);
        let class = self.cwait_class();
        let t = self.sc.kernel.hz_div(100);
        self.congestion_wait(CwWho::CryptNap(actor), class, t, sched);
    }

    /// The partial-clone nap ended.
    pub(in crate::model) fn partial_nap_end(
        &mut self,
        actor: ActorId,
        sched: &mut Scheduler<Event>,
    ) {
        let now = sched.now();
        let warmup = self.rec.warmup();
        let p = self.pr();
        p.pool.nap_end(&mut p.mem, actor, now, warmup);
        self.bounce_resume(actor, sched);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::base::bio::{Dir, Origin};
    use crate::model::crypt::threads::ActorState;
    use crate::model::mm::pressure::tests::{fill, quiet_world};
    use crate::model::mm::zone::AllocClass;

    /// A write of `pages` pages, admitted to `w`.
    fn write(w: &mut World, pages: u32, now: SimTime) -> BioId {
        let bytes = pages * PAGE_SIZE as u32;
        w.admit(Bio::new(Dir::Write, false, bytes, 0, Origin::Job(0), now))
    }

    #[test]
    fn the_mempool_falls_back_to_its_reserve_then_sleeps_and_a_free_refills_it() {
        let mut sched = Scheduler::new();
        let mut w = quiet_world(&mut sched);
        let now = sched.now();
        let a = w.crypt_actors[0];
        // The zone still above the mempool floor: the pages come from the zone.
        let bio = write(&mut w, 4, now);
        assert_eq!(w.bounce_alloc(a, bio, false, &mut sched), Bounce::Ready);
        let p = w.memory.zone().expect("a zone");
        assert_eq!(
            (p.mem.obs.bounce_from_zone, p.mem.obs.bounce_from_reserve),
            (4, 0)
        );
        assert_eq!(p.pool.reserve(), 32);
        // Exhaust the zone down to the atomic floor: now the reserve serves.
        fill(&mut w, now, |m| {
            m.zone.free_pages() > m.zone.order0_floor(AllocClass::Atomic)
        });
        let bio = write(&mut w, 8, now);
        assert_eq!(w.bounce_alloc(a, bio, false, &mut sched), Bounce::Ready);
        assert_eq!(w.bios[bio].bounce_pages, 8);
        let p = w.memory.zone().expect("a zone");
        assert_eq!((p.mem.obs.bounce_from_reserve, p.pool.reserve()), (8, 24));
        // Past the reserve the thread sleeps on the pool (a fio write does not split).
        let big = write(&mut w, 30, now);
        assert_eq!(w.bounce_alloc(a, big, false, &mut sched), Bounce::Asleep);
        assert_eq!(w.bios[big].bounce_pages, 24);
        let p = w.memory.zone().expect("a zone");
        assert_eq!((p.pool.reserve(), p.mem.obs.mempool_waits), (0, 1));
        // A completed write's pages refill the reserve first, waking the sleeper.
        w.actors[a.index()].state = ActorState::MemWait;
        w.free_bounce(8, &mut sched);
        assert_eq!(w.memory.zone().expect("a zone").pool.reserve(), 8);
        assert_eq!(w.actors[a.index()].state, ActorState::Idle);
    }

    #[test]
    fn a_writeback_bio_goes_out_partial_once_it_holds_min_bio_pages() {
        let mut sched = Scheduler::new();
        let mut w = quiet_world(&mut sched);
        let now = sched.now();
        let a = w.crypt_actors[0];
        fill(&mut w, now, |m| {
            m.zone.free_pages() > m.zone.order0_floor(AllocClass::Atomic)
        });
        let bio = w.admit(Bio::new(
            Dir::Write,
            false,
            40 * 4096,
            0,
            Origin::Writeback(0),
            now,
        ));
        let Bounce::Partial(child) = w.bounce_alloc(a, bio, true, &mut sched) else {
            panic!("expected a partial clone");
        };
        assert_eq!(w.bios[child].bounce_pages, 32);
        assert_eq!(w.bios[child].bytes, 32 * 4096);
        assert_eq!((w.bios[bio].bounce_pages, w.bios[bio].bytes), (0, 8 * 4096));
        assert_eq!(w.memory.zone().expect("a zone").mem.obs.partial_clones, 1);
    }

    /// The pool alone, scripted against a zone at its atomic floor: two reserve pages, then a
    /// split once `min_bio_pages` are held, a sleep below it; frees refill the reserve and wake
    /// the sleepers in arrival order, then go back to the zone.
    #[test]
    fn the_pool_alone_splits_sleeps_and_wakes_its_sleepers_in_order() {
        let mut sched = Scheduler::new();
        let mut w = quiet_world(&mut sched);
        let now = sched.now();
        fill(&mut w, now, |m| {
            m.zone.free_pages() > m.zone.order0_floor(AllocClass::Atomic)
        });
        let mem = &mut w.memory.zone_mut().expect("a zone").mem;
        let (a, b) = (ActorId(0), ActorId(1));
        let mut pool = Mempool::new(2, 3, 2);
        let got = |t: PageTry| t.outcome;
        assert_eq!(got(pool.try_page(mem, 0, true, now)), PageOutcome::Got);
        assert_eq!(got(pool.try_page(mem, 1, true, now)), PageOutcome::Got);
        assert_eq!(pool.reserve(), 0);
        // Empty: below min_bio_pages a writeback clone sleeps too; at it, it splits.
        assert_eq!(got(pool.try_page(mem, 2, true, now)), PageOutcome::Sleep);
        assert_eq!(got(pool.try_page(mem, 3, true, now)), PageOutcome::Split);
        assert_eq!(got(pool.try_page(mem, 3, false, now)), PageOutcome::Sleep);
        let timeout = |who| Event::Memory(MemEvent::MempoolTimeout { actor: who });
        let ta = sched.schedule_in(SimDuration::from_secs(5), timeout(a));
        let tb = sched.schedule_in(SimDuration::from_secs(5), timeout(b));
        pool.sleep(mem, a, ta, now);
        pool.sleep(mem, b, tb, now);
        assert!(pool.timed_out(b));
        assert!(!pool.timed_out(b), "a sleeper times out once");
        pool.sleep(mem, b, tb, now);
        let later = now + SimDuration::from_ms(3);
        assert_eq!(pool.free_page(mem).map(|s| s.0), Some(a));
        pool.sleep_end(mem, a, later, SimTime::ZERO);
        assert_eq!(pool.free_page(mem).map(|s| s.0), Some(b));
        assert_eq!(pool.reserve(), 2);
        let bounce = mem.pages.bounce;
        assert_eq!(
            pool.free_page(mem),
            None,
            "a full reserve sends the page to the zone"
        );
        assert_eq!(mem.pages.bounce, bounce - 1);
        assert!(pool.check(mem.pages.bounce).is_ok());
        assert!(pool.check(1).is_err());
        // No warm-up: the counters run from the start.
        assert!(mem.measuring());
        assert_eq!(mem.obs.mempool_waits, 3);
        assert_eq!(mem.obs.mempool_wait_time, SimDuration::from_ms(3));
    }
}
