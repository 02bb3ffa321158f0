//! `congestion_wait` bookkeeping: the kernel's two global wait queues (one per
//! [`QueueClass`]), each sleeper's timeout timer, and who sleeps.
//!
//! `congestion_wait(class, timeout)` sleeps until a congestion *clear* of that class (any request
//! freed below the off threshold, `blk_clear_queue_congested`) or the timeout, whichever comes
//! first; it never checks whether anything is congested. This component only keeps the
//! sleepers: the world decides what a wake means for each [`CwWho`], and the recorder counts the
//! waits.

use crate::engine::{EventId, Scheduler, SimDuration, SimTime};
use crate::model::base::ids::{ActorId, QueueClass, ReclaimSlot};

/// Who sleeps in `congestion_wait`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CwWho {
    /// A buffered writer throttled in balance_dirty_pages.
    Writer(u32),
    /// A flusher backing off a congested disk.
    Flusher(u32),
    /// kswapd between reclaim priorities.
    Kswapd,
    /// A direct reclaimer.
    Reclaim(ReclaimSlot),
    /// A crypt thread napping after a partial clone.
    CryptNap(ActorId),
}

/// A sleeper, as handed back when its wait ends.
#[derive(Debug, Clone, Copy)]
pub struct Waiter {
    /// Who sleeps.
    pub who: CwWho,
    /// The queue it sleeps on.
    pub class: QueueClass,
    /// When it went to sleep.
    pub since: SimTime,
    timer: EventId,
}

/// The component's own event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CwEvent {
    /// A sleeper's timeout ran out.
    Timeout {
        /// Its slot.
        waiter: u32,
    },
}

/// The two global wait queues.
#[derive(Debug, Default)]
pub struct CongestionWaits {
    slots: Vec<Option<Waiter>>,
    free: Vec<u32>,
    queues: [Vec<u32>; 2],
}

impl CongestionWaits {
    /// Puts `who` to sleep on `class`'s queue until a clear or `timeout`.
    pub fn wait<E: From<CwEvent>>(
        &mut self,
        who: CwWho,
        class: QueueClass,
        timeout: SimDuration,
        sched: &mut Scheduler<E>,
    ) {
        let slot = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            (self.slots.len() - 1) as u32
        });
        let timer = sched.schedule_in(timeout, E::from(CwEvent::Timeout { waiter: slot }));
        self.slots[slot as usize] = Some(Waiter {
            who,
            class,
            since: sched.now(),
            timer,
        });
        self.queues[class.index()].push(slot);
    }

    /// Empties `class`'s queue for a clear, returning its sleepers' slots in sleep order; wake
    /// each with [`CongestionWaits::wake`], then hand the buffer back with
    /// [`CongestionWaits::give_back`]. Sleepers that a wake puts back to sleep join the queue
    /// afresh, for the next clear.
    pub fn take_queue(&mut self, class: QueueClass) -> Vec<u32> {
        std::mem::take(&mut self.queues[class.index()])
    }

    /// Returns the (drained) buffer of [`CongestionWaits::take_queue`] for reuse.
    pub fn give_back(&mut self, class: QueueClass, mut buf: Vec<u32>) {
        buf.clear();
        let q = &mut self.queues[class.index()];
        if q.is_empty() {
            *q = buf;
        }
    }

    /// Whether nobody sleeps on `class`'s queue.
    pub fn is_idle(&self, class: QueueClass) -> bool {
        self.queues[class.index()].is_empty()
    }

    /// Ends the wait of taken-off sleeper `slot` early: cancels its timer and frees its slot.
    pub fn wake<E: From<CwEvent>>(&mut self, slot: u32, sched: &mut Scheduler<E>) -> Waiter {
        let w = self.end(slot);
        sched.cancel(w.timer);
        w
    }

    /// Sleeper `slot`'s timeout ran out: takes it off its queue and frees its slot.
    pub fn timed_out(&mut self, slot: u32) -> Waiter {
        let w = self.slots[slot as usize].expect("timed-out waiter slot is empty");
        let q = &mut self.queues[w.class.index()];
        let pos = q
            .iter()
            .position(|&s| s == slot)
            .expect("waiter not queued");
        q.swap_remove(pos);
        self.end(slot)
    }

    fn end(&mut self, slot: u32) -> Waiter {
        let w = self.slots[slot as usize]
            .take()
            .expect("waiter slot is empty");
        self.free.push(slot);
        w
    }

    /// Everyone still asleep.
    pub fn sleeping(&self) -> impl Iterator<Item = &Waiter> {
        self.slots.iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Limits, Model};
    use crate::model::world::Event;

    /// A bench: the component alone, fed a script of (time, action), logging how each wait
    /// ended.
    #[derive(Default)]
    struct Bench {
        cw: CongestionWaits,
        log: Vec<(u64, CwWho, bool)>,
    }

    impl Model for Bench {
        type Event = Event;
        fn handle(&mut self, ev: Event, sched: &mut Scheduler<Event>) {
            let now = sched.now().as_ns();
            match ev {
                Event::Cwait(CwEvent::Timeout { waiter }) => {
                    let w = self.cw.timed_out(waiter);
                    self.log.push((now, w.who, false));
                }
                // The script's "a request of the ASYNC class was freed below off".
                Event::Recorder(_) => {
                    let slots = self.cw.take_queue(QueueClass::Async);
                    for &s in &slots {
                        let w = self.cw.wake(s, sched);
                        self.log.push((now, w.who, true));
                    }
                    self.cw.give_back(QueueClass::Async, slots);
                }
                _ => unreachable!(),
            }
        }
    }

    #[test]
    fn a_clear_ends_its_class_early_and_the_other_class_times_out() {
        let mut b = Bench::default();
        let mut sched: Scheduler<Event> = Scheduler::new();
        let ms = SimDuration::from_ms;
        b.cw.wait(CwWho::Kswapd, QueueClass::Async, ms(100), &mut sched);
        b.cw.wait(CwWho::Writer(3), QueueClass::Sync, ms(20), &mut sched);
        b.cw.wait(CwWho::Flusher(1), QueueClass::Async, ms(100), &mut sched);
        sched.schedule_at(
            SimTime::ZERO + ms(30),
            Event::Recorder(crate::model::observe::recorder::RecEvent::Sample),
        );
        let limits = Limits {
            horizon: SimTime::ZERO + ms(1000),
            max_work: u64::MAX,
        };
        crate::engine::run(&mut b, &mut sched, limits);
        assert_eq!(
            b.log,
            [
                (20_000_000, CwWho::Writer(3), false),
                (30_000_000, CwWho::Kswapd, true),
                (30_000_000, CwWho::Flusher(1), true),
            ]
        );
        // The early wakes cancelled their timers: nothing else fired, nobody sleeps.
        assert_eq!(b.cw.sleeping().count(), 0);
        assert!(b.cw.is_idle(QueueClass::Async) && b.cw.is_idle(QueueClass::Sync));
    }

    #[test]
    fn slots_are_reused_after_a_wait_ends() {
        let mut cw = CongestionWaits::default();
        let mut sched: Scheduler<Event> = Scheduler::new();
        cw.wait(
            CwWho::Kswapd,
            QueueClass::Sync,
            SimDuration::from_ms(1),
            &mut sched,
        );
        let w = cw.timed_out(0);
        assert_eq!(w.who, CwWho::Kswapd);
        cw.wait(
            CwWho::Writer(0),
            QueueClass::Async,
            SimDuration::from_ms(1),
            &mut sched,
        );
        assert_eq!(cw.slots.len(), 1);
    }
}
