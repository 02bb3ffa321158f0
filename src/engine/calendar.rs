//! The event calendar: a priority queue of pending events ordered by `(time, seq)`, with
//! cancellation.
//!
//! # Order
//!
//! Every call to [`Calendar::schedule`] takes the next value of a per-calendar sequence counter
//! (its [`EventId`]). Events pop in increasing `(time, seq)` order, so **events scheduled for the
//! same instant fire in the order they were scheduled** (FIFO among ties). Nothing else — no hash,
//! no address, no payload — influences the order, so a run is reproducible from its inputs alone.
//!
//! # Layout (why it is fast)
//!
//! The order lives in a binary min-heap of bare `u128` keys, `time_ns << 64 | seq`: exactly a
//! `BinaryHeap<Reverse<u128>>`, the fastest simple heap there is, whose entries stay 16 bytes
//! whatever the event type. The payloads live beside it, in slots indexed by sequence number:
//!
//! - `recent`: a ring holding the slots of the newest sequence numbers, `seq - base` being the
//!   index. Scheduling appends to it (sequential, cache-friendly); popping moves the payload out
//!   of its slot; cancelling drops it. A slot is pending, cancelled or done.
//! - `old`: a hash map for the few events still pending when their ring slot is retired (see
//!   Memory).
//!
//! Cancellation is therefore exact (a slot says whether its event is still pending) and lazy:
//! the cancelled key stays in the heap and is skipped when it reaches the top. The top of the heap
//! is kept live, so [`Calendar::peek_time`] is a plain read.
//!
//! # Memory
//!
//! Everything is bounded by the number of pending events `n` (plus small constants). The ring is
//! trimmed from the front as its oldest slots finish, and once it exceeds `4n` slots (a
//! long-pending event at the front holds it back) its oldest pending payloads move to `old` and
//! the rest of the front is dropped. Dead heap keys are purged from the top eagerly, and when they
//! outnumber the live ones the heap is rebuilt without them, which costs O(heap) once per O(heap)
//! cancellations. When the calendar empties, every side structure is cleared. A run that
//! schedules and cancels millions of timers therefore does not grow.

use super::time::SimTime;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// Identifies one scheduled event: its insertion sequence number in the [`Calendar`] that issued
/// it (0, 1, 2, … in scheduling order).
///
/// Ids are never reused by a calendar, so cancelling an id that has already fired or been
/// cancelled is detected and harmless. Ordering ids orders events by when they were scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId(u64);

/// Dead heap keys tolerated beyond the live count before the heap is rebuilt without them.
const DEAD_KEYS_SLACK: usize = 4;

/// Ring slots tolerated beyond `4 ×` the live count before the oldest are retired.
const RECENT_SLACK: usize = 256;

/// Capacity (in entries) below which emptied structures keep their allocation for reuse.
const KEEP_CAPACITY: usize = 1024;

/// A priority queue of pending events of type `E`, popped in `(time, seq)` order.
///
/// Guarantee: [`pop`](Calendar::pop) returns the pending event with the smallest time, and among
/// events with equal times the one scheduled first (FIFO). Cancelled events never pop.
/// See the [module docs](self) for the layout and memory bounds.
pub struct Calendar<E> {
    /// Min-heap of packed keys `time_ns << 64 | seq`, live and cancelled alike. Invariant: the
    /// top key, if any, is live.
    heap: BinaryHeap<Reverse<u128>>,
    /// The slot of each event `base + i`.
    recent: VecDeque<Slot<E>>,
    /// The sequence number of `recent[0]`; `base + recent.len() == next_seq`.
    base: u64,
    /// Payloads of pending events whose sequence number is below `base`.
    old: HashMap<u64, E, BuildHasherDefault<SeqHasher>>,
    /// Number of live (pending, not cancelled) events.
    live: usize,
    /// Number of cancelled keys still in `heap`; always `heap.len() - live`.
    dead: usize,
    /// The sequence number the next scheduled event will get.
    next_seq: u64,
}

/// What became of one scheduled event.
enum Slot<E> {
    /// Scheduled, not yet popped or cancelled.
    Pending(E),
    /// Popped, or cancelled: either way its payload is gone.
    Finished,
}

impl<E> Default for Calendar<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> Calendar<E> {
    /// An empty calendar; the first event scheduled gets sequence number 0.
    pub fn new() -> Self {
        Calendar {
            heap: BinaryHeap::new(),
            recent: VecDeque::new(),
            base: 0,
            old: HashMap::default(),
            live: 0,
            dead: 0,
            next_seq: 0,
        }
    }

    /// Adds `ev` to fire at `at` and returns its id (the next sequence number).
    ///
    /// Any time is accepted, even one before events already popped; the run loop
    /// ([`Scheduler`](super::Scheduler)) is what forbids scheduling into the past.
    // Always inlined: with the rare paths outlined it is small, and the call overhead was a
    // third of the cost of a hold step with few events pending (benches/engine.rs).
    #[inline(always)]
    pub fn schedule(&mut self, at: SimTime, ev: E) -> EventId {
        let seq = self.next_seq;
        self.next_seq = seq
            .checked_add(1)
            .expect("calendar sequence number overflowed u64");
        self.trim_recent();
        self.recent.push_back(Slot::Pending(ev));
        self.heap.push(Reverse(pack(at, seq)));
        self.live += 1;
        self.check_counts();
        EventId(seq)
    }

    /// Cancels a pending event. Returns `true` iff it was still pending; `false` if it has
    /// already fired, was already cancelled, or was never issued by this calendar. A cancelled
    /// event never pops, and its payload is dropped here.
    #[inline]
    pub fn cancel(&mut self, id: EventId) -> bool {
        if self.take(id.0).is_none() {
            return false;
        }
        self.live -= 1;
        self.dead += 1;
        self.purge_dead_top();
        if self.dead > self.live + DEAD_KEYS_SLACK {
            self.compact_heap();
        }
        if self.live == 0 {
            self.reset_index();
        }
        self.check_counts();
        true
    }

    /// Removes and returns the earliest pending event as `(time, id, event)`: smallest time
    /// first, and among equal times the one scheduled first. `None` when nothing is pending.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, EventId, E)> {
        let Reverse(key) = self.heap.pop()?;
        let seq = key as u64;
        let ev = self
            .take(seq)
            .expect("calendar invariant: the heap top is live");
        self.live -= 1;
        if self.dead > 0 {
            self.purge_dead_top();
        }
        if self.live == 0 {
            self.reset_index();
        }
        self.check_counts();
        Some((SimTime::from_ns((key >> 64) as u64), EventId(seq), ev))
    }

    /// The time of the next event [`pop`](Calendar::pop) would return, if any (cancelled events
    /// are never reported).
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|&Reverse(key)| {
            debug_assert!(self.is_pending(key as u64));
            SimTime::from_ns((key >> 64) as u64)
        })
    }

    /// Number of pending events (cancelled ones are not counted).
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Takes the payload of event `seq` if it is pending, leaving it finished.
    #[inline]
    fn take(&mut self, seq: u64) -> Option<E> {
        if seq >= self.base {
            let slot = self.recent.get_mut((seq - self.base) as usize)?;
            match std::mem::replace(slot, Slot::Finished) {
                Slot::Pending(ev) => Some(ev),
                Slot::Finished => None,
            }
        } else {
            self.old.remove(&seq)
        }
    }

    /// Whether event `seq` is pending.
    fn is_pending(&self, seq: u64) -> bool {
        if seq >= self.base {
            matches!(
                self.recent.get((seq - self.base) as usize),
                Some(Slot::Pending(_))
            )
        } else {
            self.old.contains_key(&seq)
        }
    }

    /// Pops dead keys off the top of the heap until the top is live or the heap is empty.
    #[inline(never)]
    fn purge_dead_top(&mut self) {
        while let Some(&Reverse(key)) = self.heap.peek() {
            if self.is_pending(key as u64) {
                break;
            }
            self.heap.pop();
            self.dead -= 1;
        }
    }

    /// Rebuilds the heap from its live keys only.
    #[cold]
    #[inline(never)]
    fn compact_heap(&mut self) {
        let mut keys = std::mem::take(&mut self.heap).into_vec();
        keys.retain(|&Reverse(key)| self.is_pending(key as u64));
        keys.shrink_to((keys.len() * 2).max(KEEP_CAPACITY));
        self.heap = BinaryHeap::from(keys);
        self.dead = 0;
    }

    /// Keeps the ring short: drops finished slots at the front, and when it still exceeds
    /// `4 × live` slots (a long-pending event at the front holds it back), retires the oldest.
    #[inline]
    fn trim_recent(&mut self) {
        while let Some(Slot::Finished) = self.recent.front() {
            self.recent.pop_front();
            self.base += 1;
        }
        if self.recent.len() > 4 * self.live + RECENT_SLACK {
            self.retire_recent();
        }
    }

    /// Shortens the ring to `2 × live` slots (plus slack): the retired payloads still pending
    /// move to `old`, finished slots are dropped. Amortised O(1) per schedule.
    #[cold]
    #[inline(never)]
    fn retire_recent(&mut self) {
        let keep = 2 * self.live + RECENT_SLACK / 2;
        while self.recent.len() > keep {
            if let Some(Slot::Pending(ev)) = self.recent.pop_front() {
                self.old.insert(self.base, ev);
            }
            self.base += 1;
        }
        let cap = (4 * self.recent.len()).max(KEEP_CAPACITY);
        if self.recent.capacity() > cap {
            self.recent.shrink_to(cap);
        }
    }

    /// Clears the side index once nothing is pending (and so nothing is in the heap either).
    #[inline]
    fn reset_index(&mut self) {
        debug_assert!(self.heap.is_empty() && self.live == 0 && self.dead == 0);
        debug_assert!(
            self.old.is_empty(),
            "old payloads leave when popped or cancelled"
        );
        self.recent.clear();
        self.base = self.next_seq;
        if self.heap.capacity() > KEEP_CAPACITY || self.recent.capacity() > KEEP_CAPACITY {
            self.release_capacity();
        }
    }

    /// Returns the memory of an emptied calendar, keeping a small allocation for reuse.
    #[cold]
    #[inline(never)]
    fn release_capacity(&mut self) {
        self.recent.shrink_to(KEEP_CAPACITY);
        self.heap.shrink_to(KEEP_CAPACITY);
        self.old.shrink_to(0);
    }

    /// Checks the bookkeeping counts (debug builds only).
    fn check_counts(&self) {
        debug_assert_eq!(self.heap.len(), self.live + self.dead);
        debug_assert_eq!(self.base + self.recent.len() as u64, self.next_seq);
        debug_assert!(self.old.len() <= self.live);
    }
}

/// The heap key of an event: time in the high 64 bits, sequence number in the low 64 bits, so
/// integer order is `(time, seq)` order.
#[inline]
fn pack(at: SimTime, seq: u64) -> u128 {
    (u128::from(at.as_ns()) << 64) | u128::from(seq)
}

/// Hasher for the `old` map's sequence-number keys: one multiply (Fibonacci hashing). Keys are
/// our own counters, never adversarial, and iteration order is never used.
#[derive(Default)]
struct SeqHasher(u64);

impl Hasher for SeqHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::SimRng;
    use rand::{RngExt, SeedableRng};
    use std::collections::{BTreeMap, HashMap};

    fn t(ns: u64) -> SimTime {
        SimTime::from_ns(ns)
    }

    #[test]
    fn pops_in_time_order() {
        let mut cal = Calendar::new();
        for (i, ns) in [50u64, 10, 40, 20, 30].into_iter().enumerate() {
            cal.schedule(t(ns), i);
        }
        let times: Vec<u64> = std::iter::from_fn(|| cal.pop())
            .map(|(at, _, _)| at.as_ns())
            .collect();
        assert_eq!(times, vec![10, 20, 30, 40, 50]);
        assert!(cal.is_empty());
        assert_eq!(cal.pop().map(|(_, _, e)| e), None);
    }

    #[test]
    fn equal_times_fire_in_scheduling_order() {
        let mut cal = Calendar::new();
        // Interleave two instants so ties are not simply adjacent insertions.
        for i in 0..100u32 {
            let at = if i % 2 == 0 { t(7) } else { t(3) };
            cal.schedule(at, i);
        }
        let order: Vec<(u64, u32)> = std::iter::from_fn(|| cal.pop())
            .map(|(at, _, e)| (at.as_ns(), e))
            .collect();
        let mut expected: Vec<(u64, u32)> =
            (0..100u32).filter(|i| i % 2 == 1).map(|i| (3, i)).collect();
        expected.extend((0..100u32).filter(|i| i % 2 == 0).map(|i| (7, i)));
        assert_eq!(order, expected);
    }

    #[test]
    fn ids_are_consecutive_sequence_numbers() {
        let mut cal = Calendar::new();
        let a = cal.schedule(t(5), ());
        let b = cal.schedule(t(1), ());
        assert_eq!((a, b), (EventId(0), EventId(1)));
        assert!(a < b);
        assert_eq!(cal.pop().map(|(_, id, _)| id), Some(b));
    }

    #[test]
    fn cancel_is_true_only_while_pending() {
        let mut cal = Calendar::new();
        let a = cal.schedule(t(1), 'a');
        let b = cal.schedule(t(2), 'b');
        let c = cal.schedule(t(3), 'c');
        assert!(cal.cancel(b));
        assert!(!cal.cancel(b), "already cancelled");
        assert_eq!(cal.len(), 2);
        assert_eq!(cal.pop(), Some((t(1), a, 'a')));
        assert!(!cal.cancel(a), "already fired");
        assert_eq!(cal.peek_time(), Some(t(3)));
        assert_eq!(cal.pop(), Some((t(3), c, 'c')));
        assert_eq!(cal.pop(), None);
        assert!(!cal.cancel(EventId(99)), "never issued");
    }

    #[test]
    fn cancelling_the_earliest_moves_peek_to_the_next_live_event() {
        let mut cal = Calendar::new();
        let ids: Vec<EventId> = (0..5u64).map(|i| cal.schedule(t(i), i)).collect();
        assert!(cal.cancel(ids[1]));
        assert!(cal.cancel(ids[0]));
        assert_eq!(cal.peek_time(), Some(t(2)));
        assert!(cal.cancel(ids[2]));
        assert!(cal.cancel(ids[3]));
        assert!(cal.cancel(ids[4]));
        assert_eq!(cal.peek_time(), None);
        assert!(cal.is_empty());
        assert_eq!(cal.heap.len(), 0, "dead keys at the top are purged eagerly");
    }

    #[test]
    fn storage_is_released_after_mass_cancellation() {
        const N: u64 = 100_000;
        let mut cal = Calendar::new();
        let ids: Vec<EventId> = (0..N).map(|i| cal.schedule(t(N - i), i)).collect();
        // Cancel every event except every tenth: timers far in the future, cancelled early.
        for (i, id) in ids.iter().enumerate() {
            if i % 10 != 0 {
                assert!(cal.cancel(*id));
            }
        }
        assert_eq!(cal.len(), (N / 10) as usize);
        assert!(
            cal.heap.len() <= 2 * cal.len() + DEAD_KEYS_SLACK + 1,
            "dead keys are bounded by live ones: heap {} live {}",
            cal.heap.len(),
            cal.len()
        );
        let mut popped = 0;
        while cal.pop().is_some() {
            popped += 1;
        }
        assert_eq!(popped, N / 10);
        assert_eq!((cal.live, cal.dead), (0, 0));
        assert!(cal.heap.is_empty() && cal.recent.is_empty() && cal.old.is_empty());
        assert!(cal.heap.capacity() <= KEEP_CAPACITY);
        assert!(cal.recent.capacity() <= KEEP_CAPACITY);
        // Still usable, and ids keep counting.
        assert_eq!(cal.schedule(t(N), 0), EventId(N));
    }

    #[test]
    fn timer_churn_does_not_grow_memory() {
        // A long run where every step arms a timeout earlier than the previous one and disarms
        // that previous one, so cancelled keys are never at the top and pile up lazily until
        // the heap is compacted.
        const STEPS: u64 = 200_000;
        const FAR_NS: u64 = 10_000_000;
        let mut cal = Calendar::new();
        let mut timer = cal.schedule(t(FAR_NS), 0u64);
        let (mut heap_max, mut recent_max) = (0, 0);
        for step in 1..STEPS {
            let next_timer = cal.schedule(t(FAR_NS - step), step);
            assert!(cal.cancel(timer));
            timer = next_timer;
            cal.schedule(t(step), step);
            let (at, _, ev) = cal.pop().expect("the step event is pending");
            assert_eq!((at, ev), (t(step), step));
            heap_max = heap_max.max(cal.heap.len());
            recent_max = recent_max.max(cal.recent.len());
        }
        assert_eq!(cal.len(), 1);
        assert!(
            heap_max <= 2 + DEAD_KEYS_SLACK + 2,
            "heap peaked at {heap_max}"
        );
        assert!(
            recent_max <= 4 + RECENT_SLACK + 2,
            "ring peaked at {recent_max}"
        );
        assert!(cal.old.len() <= 1);
    }

    #[test]
    fn long_pending_event_moves_to_old_index_and_stays_cancellable() {
        let mut cal = Calendar::new();
        let far = cal.schedule(t(1_000_000), u64::MAX);
        for step in 0..10_000u64 {
            cal.schedule(t(step), step);
            assert_eq!(cal.pop().map(|(_, _, ev)| ev), Some(step));
        }
        assert!(cal.recent.len() <= 4 + RECENT_SLACK + 1, "ring is bounded");
        assert!(
            cal.old.contains_key(&0),
            "the far event's payload moved to the old index"
        );
        assert!(cal.cancel(far));
        assert!(!cal.cancel(far));
        assert!(cal.is_empty());
        assert!(cal.old.is_empty() && cal.heap.is_empty());
    }

    #[test]
    fn cancel_drops_the_payload_at_once() {
        use std::rc::Rc;
        let payload = Rc::new(());
        let mut cal = Calendar::new();
        // An earlier live event keeps the cancelled key off the top, so it stays in the heap.
        cal.schedule(t(1), None);
        let id = cal.schedule(t(2), Some(Rc::clone(&payload)));
        assert_eq!(Rc::strong_count(&payload), 2);
        assert!(cal.cancel(id));
        assert_eq!(cal.heap.len(), 2, "the dead key is still in the heap");
        assert_eq!(Rc::strong_count(&payload), 1, "but the payload is gone");
    }

    #[test]
    fn accepts_times_before_the_last_popped_event() {
        let mut cal = Calendar::new();
        cal.schedule(t(10), 'a');
        cal.pop();
        cal.schedule(t(9), 'b');
        cal.schedule(t(5), 'c');
        assert_eq!(cal.pop().map(|(at, _, e)| (at, e)), Some((t(5), 'c')));
        assert_eq!(cal.pop().map(|(at, _, e)| (at, e)), Some((t(9), 'b')));
    }

    /// Checks every internal invariant, walking the whole heap.
    fn check_invariants<E>(cal: &Calendar<E>) {
        assert_eq!(cal.heap.len(), cal.live + cal.dead);
        assert_eq!(cal.base + cal.recent.len() as u64, cal.next_seq);
        let live_keys = cal
            .heap
            .iter()
            .filter(|&&Reverse(key)| cal.is_pending(key as u64))
            .count();
        assert_eq!(live_keys, cal.live);
        let pending_slots = cal
            .recent
            .iter()
            .filter(|slot| matches!(slot, Slot::Pending(_)))
            .count();
        assert_eq!(pending_slots + cal.old.len(), cal.live);
        if let Some(&Reverse(key)) = cal.heap.peek() {
            assert!(cal.is_pending(key as u64), "the top key is live");
        }
        assert!(cal.old.keys().all(|&seq| seq < cal.base));
    }

    /// Differential fuzz against an obviously correct shadow: a `BTreeMap` keyed by
    /// `(time, seq)`. Every operation's result and the observable state are compared.
    #[test]
    fn matches_btreemap_shadow_under_random_operations() {
        let mut rng = SimRng::seed_from_u64(0x5eed_ca1e);
        let mut cal: Calendar<u32> = Calendar::new();
        let mut shadow: BTreeMap<(u64, u64), u32> = BTreeMap::new();
        let mut time_of: HashMap<u64, u64> = HashMap::new();
        let mut issued: Vec<EventId> = Vec::new();
        let mut base = 0u64;
        let mut payload = 0u32;
        let mut old_max = 0;

        for round in 0..200_000u32 {
            // Phases bias the mix so the calendar repeatedly grows, churns and drains.
            let phase = (round / 5_000) % 3;
            let (w_schedule, w_cancel) = match phase {
                0 => (60, 15),
                1 => (35, 15),
                _ => (20, 30),
            };
            let roll = rng.random_range(0..100u32);
            if roll < w_schedule {
                // Mostly few distinct times near `base`, so ties are common; sometimes far
                // ahead, so long-pending events retire from the ring into the `old` index.
                // Now and then before the last popped time, which the calendar allows.
                let at = match rng.random_range(0..40u32) {
                    0 | 1 => base + rng.random_range(100..5_000u64),
                    2 => base.saturating_sub(rng.random_range(1..4u64)),
                    _ => base + rng.random_range(0..6u64),
                };
                payload += 1;
                let id = cal.schedule(t(at), payload);
                assert_eq!(id, EventId(issued.len() as u64));
                shadow.insert((at, id.0), payload);
                time_of.insert(id.0, at);
                issued.push(id);
                assert!(cal.recent.len() <= 4 * cal.live + RECENT_SLACK);
            } else if roll < w_schedule + w_cancel {
                if issued.is_empty() {
                    continue;
                }
                // Any id ever issued: live, fired or already cancelled.
                let id = issued[rng.random_range(0..issued.len() as u64) as usize];
                let expected = shadow.remove(&(time_of[&id.0], id.0)).is_some();
                assert_eq!(cal.cancel(id), expected, "cancel({id:?}) at round {round}");
            } else if roll < 97 {
                let expected = shadow.pop_first();
                let got = cal.pop();
                match (got, expected) {
                    (None, None) => {}
                    (Some((at, id, ev)), Some(((s_at, s_seq), s_ev))) => {
                        assert_eq!((at.as_ns(), id.0, ev), (s_at, s_seq, s_ev), "round {round}");
                        base = base.max(at.as_ns());
                    }
                    (got, expected) => panic!("round {round}: got {got:?}, shadow {expected:?}"),
                }
            } else {
                // Occasionally jump forward so old ids fall far behind.
                base += rng.random_range(0..20u64);
            }
            assert_eq!(cal.len(), shadow.len(), "len at round {round}");
            assert_eq!(cal.is_empty(), shadow.is_empty());
            assert_eq!(
                cal.peek_time().map(SimTime::as_ns),
                shadow.keys().next().map(|&(at, _)| at),
                "peek_time at round {round}"
            );
            old_max = old_max.max(cal.old.len());
            if round % 101 == 0 {
                check_invariants(&cal);
            }
        }
        check_invariants(&cal);
        assert!(issued.len() > 50_000, "the fuzz exercised enough schedules");
        assert!(old_max > 0, "the fuzz exercised the old index");
    }
}
