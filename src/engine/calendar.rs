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
//! The hot path is "pop the earliest, schedule one more", and it touches nothing but a binary
//! min-heap of `(key, event)` entries, where the key is the packed integer `time_ns << 64 | seq`:
//! comparing two events is one `u128` comparison, as in a plain `BinaryHeap<Reverse<u128>>`.
//!
//! Cancellation is lazy: a cancelled entry stays in the heap, marked dead, and is dropped when it
//! reaches the top (or when the heap is rebuilt, below). While no cancelled entry is in the heap,
//! `pop` does no liveness check at all. To answer [`Calendar::cancel`] exactly ("was it still
//! pending?") without touching anything on the pop path, the calendar relies on a watermark:
//! events pop in increasing key order, and nothing may be scheduled before the last popped event,
//! so an event has fired iff its key is below the last popped key. A cancel therefore only needs
//! the event's time, which is kept in a side index written once at schedule time:
//!
//! - `recent`: a ring indexed by `seq - base` for the newest sequence numbers (a push per
//!   schedule, sequential and cache-friendly); an entry becomes `None` when cancelled;
//! - `old`: a small hash map for the rare events still pending when their ring slot is retired.
//!
//! # Memory
//!
//! Everything is bounded by the number of pending events `n` (plus small constants): the ring is
//! trimmed from the front and, past `4n` entries, its oldest still-pending times move to `old`
//! (at most `n` of them); dead heap entries are purged from the top eagerly, and once they
//! outnumber the live ones the heap is rebuilt without them, which costs O(heap) once per O(heap)
//! cancellations. When the calendar empties, every side structure is cleared. A run that
//! schedules and cancels millions of timers therefore does not grow.

use super::time::SimTime;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// Identifies one scheduled event: its insertion sequence number in the [`Calendar`] that issued
/// it (0, 1, 2, … in scheduling order).
///
/// Ids are never reused by a calendar, so cancelling an id that has already fired or been
/// cancelled is detected and harmless. Ordering ids orders events by when they were scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId(u64);

/// Dead heap entries tolerated beyond the live count before the heap is rebuilt without them.
const DEAD_ENTRIES_SLACK: usize = 64;

/// Ring entries tolerated beyond `4 ×` the live count before old ones move to the `old` map.
const RECENT_SLACK: usize = 256;

/// Capacity (in entries) below which emptied structures keep their allocation for reuse.
const KEEP_CAPACITY: usize = 1024;

/// A priority queue of pending events of type `E`, popped in `(time, seq)` order.
///
/// Guarantee: [`pop`](Calendar::pop) returns the pending event with the smallest time, and among
/// events with equal times the one scheduled first (FIFO). Cancelled events never pop.
/// See the [module docs](self) for the layout and memory bounds.
pub struct Calendar<E> {
    /// Min-heap (by `key`) of live and cancelled entries. Invariant: the top entry, if any, is
    /// live, so [`Calendar::peek_time`] needs no `&mut`.
    heap: BinaryHeap<Entry<E>>,
    /// Time \[ns\] of each event `base + i`, or `None` once cancelled (fired events keep their
    /// time: the watermark tells them apart).
    recent: VecDeque<Option<u64>>,
    /// The sequence number of `recent[0]`; `base + recent.len() == next_seq`.
    base: u64,
    /// Time \[ns\] of pending events whose sequence number is below `base`.
    old: HashMap<u64, u64, BuildHasherDefault<SeqHasher>>,
    /// One past the key of the last popped event: every key below it has fired.
    fired_below: u128,
    /// Number of live (pending, not cancelled) events.
    live: usize,
    /// Number of cancelled entries still in `heap`; always `heap.len() - live`.
    dead: usize,
    /// The sequence number the next scheduled event will get.
    next_seq: u64,
}

/// A heap entry: the `(time, seq)` key and the payload.
///
/// The key is stored as two `u64` halves rather than one `u128` so the entry is 8-byte aligned:
/// with a small payload that makes it 24 bytes instead of 32, and heap traffic is most of the
/// cost with many events pending.
struct Entry<E> {
    time_ns: u64,
    seq: u64,
    ev: E,
}

impl<E> Entry<E> {
    /// The packed key; integer order is `(time, seq)` order.
    #[inline]
    fn key(&self) -> u128 {
        (u128::from(self.time_ns) << 64) | u128::from(self.seq)
    }
}

// `BinaryHeap` is a max-heap; ordering entries by reversed key makes it a min-heap. Keys are
// unique (seq is), so this is a total order that never looks at the payload.
impl<E> Ord for Entry<E> {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

impl<E> PartialOrd for Entry<E> {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl<E> Eq for Entry<E> {}

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
            fired_below: 0,
            live: 0,
            dead: 0,
            next_seq: 0,
        }
    }

    /// Adds `ev` to fire at `at` and returns its id (the next sequence number).
    ///
    /// # Panics
    ///
    /// If `at` is before the time of the last popped event: the calendar only moves forward,
    /// which is what lets [`cancel`](Calendar::cancel) tell fired events apart cheaply.
    #[inline]
    pub fn schedule(&mut self, at: SimTime, ev: E) -> EventId {
        let seq = self.next_seq;
        let key = pack(at, seq);
        assert!(
            key >= self.fired_below,
            "event scheduled at {at}, before the last popped event at {}",
            SimTime::from_ns((self.fired_below >> 64) as u64)
        );
        self.next_seq = seq
            .checked_add(1)
            .expect("calendar sequence number overflowed u64");
        self.trim_recent();
        self.recent.push_back(Some(at.as_ns()));
        self.heap.push(Entry {
            time_ns: at.as_ns(),
            seq,
            ev,
        });
        self.live += 1;
        self.check_counts();
        EventId(seq)
    }

    /// Cancels a pending event. Returns `true` iff it was still pending; `false` if it has
    /// already fired, was already cancelled, or was never issued by this calendar. A cancelled
    /// event never pops; its payload is dropped when its entry leaves the heap.
    pub fn cancel(&mut self, id: EventId) -> bool {
        let seq = id.0;
        if seq >= self.next_seq {
            return false;
        }
        let time_ns = if seq >= self.base {
            self.recent[(seq - self.base) as usize]
        } else {
            self.old.get(&seq).copied()
        };
        let Some(time_ns) = time_ns else {
            return false; // already cancelled, or fired and forgotten
        };
        if pack(SimTime::from_ns(time_ns), seq) < self.fired_below {
            return false; // already fired
        }
        if seq >= self.base {
            self.recent[(seq - self.base) as usize] = None;
        } else {
            self.old.remove(&seq);
        }
        self.live -= 1;
        self.dead += 1;
        self.purge_dead_top();
        if self.dead > self.live + DEAD_ENTRIES_SLACK {
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
        let entry = self.heap.pop()?;
        let (key, seq) = (entry.key(), entry.seq);
        debug_assert!(
            self.is_live(seq),
            "calendar invariant: the heap top is live"
        );
        debug_assert!(
            key >= self.fired_below,
            "calendar invariant: keys pop in order"
        );
        self.fired_below = key + 1;
        self.live -= 1;
        if seq < self.base {
            self.old.remove(&seq);
        }
        if self.dead > 0 {
            self.purge_dead_top();
        }
        if self.live == 0 {
            self.reset_index();
        }
        self.check_counts();
        Some((SimTime::from_ns(entry.time_ns), EventId(seq), entry.ev))
    }

    /// The time of the next event [`pop`](Calendar::pop) would return, if any (cancelled events
    /// are never reported).
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|entry| {
            debug_assert!(self.is_live(entry.seq));
            SimTime::from_ns(entry.time_ns)
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

    /// Whether the event `seq`, whose entry is still in the heap, is live (not cancelled).
    fn is_live(&self, seq: u64) -> bool {
        if seq >= self.base {
            self.recent[(seq - self.base) as usize].is_some()
        } else {
            self.old.contains_key(&seq)
        }
    }

    /// Pops dead entries off the top of the heap until the top is live or the heap is empty.
    fn purge_dead_top(&mut self) {
        while let Some(top) = self.heap.peek() {
            if self.is_live(top.seq) {
                break;
            }
            self.heap.pop();
            self.dead -= 1;
        }
    }

    /// Rebuilds the heap from its live entries only.
    #[cold]
    #[inline(never)]
    fn compact_heap(&mut self) {
        let mut entries = std::mem::take(&mut self.heap).into_vec();
        entries.retain(|entry| self.is_live(entry.seq));
        entries.shrink_to((entries.len() * 2).max(KEEP_CAPACITY));
        self.heap = BinaryHeap::from(entries);
        self.dead = 0;
    }

    /// Keeps the ring short: drops front entries no longer needed (cancelled, or fired), and
    /// when it still exceeds `4 × live` entries (a long-pending event at its front holds it
    /// back), retires the oldest ones.
    #[inline]
    fn trim_recent(&mut self) {
        while let Some(&front) = self.recent.front() {
            if let Some(time_ns) = front
                && pack(SimTime::from_ns(time_ns), self.base) >= self.fired_below
            {
                break;
            }
            self.recent.pop_front();
            self.base += 1;
        }
        if self.recent.len() > 4 * self.live + RECENT_SLACK {
            self.retire_recent();
        }
    }

    /// Shortens the ring to `2 × live` entries (plus slack): the retired entries that are still
    /// pending move to `old`, the rest are dropped. Amortised O(1) per schedule.
    #[cold]
    #[inline(never)]
    fn retire_recent(&mut self) {
        let keep = 2 * self.live + RECENT_SLACK / 2;
        while self.recent.len() > keep {
            let front = self.recent.pop_front().expect("ring longer than keep");
            if let Some(time_ns) = front
                && pack(SimTime::from_ns(time_ns), self.base) >= self.fired_below
            {
                self.old.insert(self.base, time_ns);
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
            "old entries leave when they pop or are cancelled"
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
        assert_eq!(
            cal.heap.len(),
            0,
            "dead entries at the top are purged eagerly"
        );
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
            cal.heap.len() <= 2 * cal.len() + DEAD_ENTRIES_SLACK + 1,
            "dead entries are bounded by live ones: heap {} live {}",
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
        // that previous one, so cancelled entries are never at the top and pile up lazily.
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
            heap_max <= 2 + DEAD_ENTRIES_SLACK + 2,
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
            "the far event's time moved to the old index"
        );
        assert!(cal.cancel(far));
        assert!(!cal.cancel(far));
        assert!(cal.is_empty());
        assert!(cal.old.is_empty() && cal.heap.is_empty());
    }

    #[test]
    #[should_panic(expected = "before the last popped event")]
    fn scheduling_before_the_last_popped_event_panics() {
        let mut cal = Calendar::new();
        cal.schedule(t(10), ());
        cal.pop();
        cal.schedule(t(10), ()); // same instant is fine
        cal.schedule(t(9), ());
    }

    /// Checks every internal invariant, walking the whole heap.
    fn check_invariants<E>(cal: &Calendar<E>) {
        assert_eq!(cal.heap.len(), cal.live + cal.dead);
        assert_eq!(cal.base + cal.recent.len() as u64, cal.next_seq);
        let live_entries = cal.heap.iter().filter(|e| cal.is_live(e.seq)).count();
        assert_eq!(live_entries, cal.live);
        assert!(cal.old.len() <= cal.live);
        if let Some(top) = cal.heap.peek() {
            assert!(cal.is_live(top.seq), "the top entry is live");
        }
        for (&seq, &time_ns) in &cal.old {
            assert!(seq < cal.base);
            assert!(pack(SimTime::from_ns(time_ns), seq) >= cal.fired_below);
        }
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
                let at = if rng.random_range(0..20u32) == 0 {
                    base + rng.random_range(100..5_000u64)
                } else {
                    base + rng.random_range(0..6u64)
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
