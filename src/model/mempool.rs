//! dm-crypt's bounce-page `page_pool` (`crypt_alloc_buffer` through `mempool_alloc`): each
//! page from the zone at the mempool floor or from the reserve, sleeping on an empty pool, and
//! partial clones with kcryptd's nap. The kernel rules are in [`super::pressure`]'s
//! documentation.

use super::bio::{Bio, BioId};
use super::cwait::CwWho;
use super::event::Event;
use super::ids::ActorId;
use super::memory::{Gfp, PAGE_SIZE, PageState};
use super::observe::Stage;
use super::pressure::MemEvent;
use super::world::World;
use crate::engine::{Scheduler, SimDuration, SimTime};

/// Outcome of asking for a bio's bounce pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bounce {
    /// All pages are held: encrypt and submit.
    Ready,
    /// The thread sleeps on the empty pool.
    Asleep,
    /// A partial clone was split off with the pages held so far; the thread encrypts and
    /// submits it, then naps.
    Partial(BioId),
}

impl World {
    // ----- dm-crypt's bounce pages -------------------------------------------------------------

    /// Gets the bounce pages of write `bio` for crypt thread (or inline context) `actor`:
    /// each page tries the zone at the mempool floor, then the reserve. Pages below
    /// `min_bio_pages` may sleep on the pool; later ones make the clone partial when
    /// `may_split` (writeback bios under kcryptd), else sleep too.
    pub(super) fn bounce_alloc(
        &mut self,
        actor: ActorId,
        bio: BioId,
        may_split: bool,
        sched: &mut Scheduler<Event>,
    ) -> Bounce {
        let now = sched.now();
        let need = super::memory::pages_for(self.bios[bio].bytes);
        let min_bio_pages = self.pr().mem.cfg().min_bio_pages;
        while self.bios[bio].bounce_pages < need {
            let a = self
                .pr()
                .mem
                .alloc(0, Gfp::MempoolTry, PageState::Bounce, now);
            if a.wake_kswapd {
                self.wake_kswapd(0, sched);
            }
            let p = self.pr();
            if a.granted {
                if p.mem.measuring() {
                    p.mem.obs.bounce_from_zone += 1;
                }
            } else if !p.mem.take_reserve() {
                let held = self.bios[bio].bounce_pages;
                if held >= min_bio_pages && may_split {
                    return Bounce::Partial(self.split_partial(bio, now));
                }
                self.pool_sleep(actor, sched);
                return Bounce::Asleep;
            }
            self.bios[bio].bounce_pages += 1;
        }
        Bounce::Ready
    }

    /// Splits the pages held so far off `bio` as a partial clone, a new bio in the system.
    pub(super) fn split_partial(&mut self, parent: BioId, now: SimTime) -> BioId {
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
        let measuring = self.pr().mem.measuring();
        if measuring {
            self.pr().mem.obs.partial_clones += 1;
        }
        let id = self.admit(child);
        self.bios[id].enter(Stage::CryptService, now);
        id
    }

    pub(super) fn pool_sleep(&mut self, actor: ActorId, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let t = SimDuration::from_secs(5);
        let timer = sched.schedule_in(t, Event::Memory(MemEvent::MempoolTimeout { actor }));
        let p = self.pr();
        p.pool_sleepers.push_back((actor, timer));
        p.crypt_wait_since[actor.index()] = Some(now);
        if p.mem.measuring() {
            p.mem.obs.mempool_waits += 1;
        }
    }

    /// A bounce page refilled the reserve: wake the first sleeper.
    pub(super) fn pool_wake_one(&mut self, sched: &mut Scheduler<Event>) {
        if let Some((actor, timer)) = self.pr().pool_sleepers.pop_front() {
            sched.cancel(timer);
            self.pool_sleep_end(actor, sched);
        }
    }

    /// The mempool's 5·HZ sleep ran out: retry.
    pub(super) fn mempool_timeout(&mut self, actor: ActorId, sched: &mut Scheduler<Event>) {
        let p = self.pr();
        if let Some(i) = p.pool_sleepers.iter().position(|&(a, _)| a == actor) {
            p.pool_sleepers.remove(i);
            self.pool_sleep_end(actor, sched);
        }
    }

    pub(super) fn pool_sleep_end(&mut self, actor: ActorId, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let warmup = self.rec.warmup();
        let p = self.pr();
        if let Some(since) = p.crypt_wait_since[actor.index()].take()
            && p.mem.measuring()
        {
            p.mem.obs.mempool_wait_time += now.saturating_since(since.max(warmup));
        }
        self.bounce_resume(actor, sched);
    }

    /// A write's bounce pages come back at its completion.
    pub(super) fn free_bounce(&mut self, pages: u32, sched: &mut Scheduler<Event>) {
        for _ in 0..pages {
            if self.pr().mem.free_bounce_page() {
                self.pool_wake_one(sched);
            }
        }
    }

    /// Starts a crypt thread's HZ/100 nap after a partial clone.
    pub(super) fn partial_nap(&mut self, actor: ActorId, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        self.pr().crypt_wait_since[actor.index()] = Some(now);
        let class = self.cwait_class();
        let t = self.sc.kernel.hz_div(100);
        self.congestion_wait(CwWho::CryptNap(actor), class, t, sched);
    }

    /// The partial-clone nap ended.
    pub(super) fn partial_nap_end(&mut self, actor: ActorId, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let warmup = self.rec.warmup();
        let p = self.pr();
        if let Some(since) = p.crypt_wait_since[actor.index()].take()
            && p.mem.measuring()
        {
            p.mem.obs.partial_nap_time += now.saturating_since(since.max(warmup));
        }
        self.bounce_resume(actor, sched);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::actors::ActorState;
    use crate::model::bio::{Dir, Origin};
    use crate::model::pressure::tests::{fill, quiet_world};
    use crate::model::zone::AllocClass;

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
        let m = &w.memory.zone().expect("a zone").mem;
        assert_eq!((m.obs.bounce_from_zone, m.obs.bounce_from_reserve), (4, 0));
        assert_eq!(m.reserve(), 32);
        // Exhaust the zone down to the atomic floor: now the reserve serves.
        fill(&mut w, now, |m| {
            m.zone.free_pages() > m.zone.order0_floor(AllocClass::Atomic)
        });
        let bio = write(&mut w, 8, now);
        assert_eq!(w.bounce_alloc(a, bio, false, &mut sched), Bounce::Ready);
        assert_eq!(w.bios[bio].bounce_pages, 8);
        let m = &w.memory.zone().expect("a zone").mem;
        assert_eq!((m.obs.bounce_from_reserve, m.reserve()), (8, 24));
        // Past the reserve the thread sleeps on the pool (a fio write does not split).
        let big = write(&mut w, 30, now);
        assert_eq!(w.bounce_alloc(a, big, false, &mut sched), Bounce::Asleep);
        assert_eq!(w.bios[big].bounce_pages, 24);
        let m = &w.memory.zone().expect("a zone").mem;
        assert_eq!((m.reserve(), m.obs.mempool_waits), (0, 1));
        // A completed write's pages refill the reserve first, waking the sleeper.
        w.actors[a.index()].state = ActorState::MemWait;
        w.free_bounce(8, &mut sched);
        assert_eq!(w.memory.zone().expect("a zone").mem.reserve(), 8);
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
}
