//! The calendar's batches: events a model schedules many at a time and never cancels (a burst's
//! buffer frees, each at its own drawn time), kept apart from the calendar's heap.
//!
//! A batch is sorted once by its keys (`time_ns << 64 | seq`, the calendar's order; through
//! 8-byte proxies when they fit, [`sort_keys`]) and kept as a run with a cursor; the runs' next
//! keys sit in a small heap. Popping the next batched event moves a cursor and sifts once among
//! as many entries as there are runs in flight, where scheduling each event alone would push and
//! pop it through the calendar's heap, every other pending event included. The order is the
//! calendar's exactly: a batch's events take consecutive sequence numbers, as the same number
//! of single schedules would, and [`Calendar`](super::calendar::Calendar) takes the smaller of
//! the two structures' next keys.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::collections::binary_heap::PeekMut;

/// One batch: its keys sorted, its events where they were given.
struct Run<E> {
    /// The batch's keys, sorted; those before `next` have popped.
    keys: Vec<u128>,
    /// The index of the next key to pop.
    next: usize,
    /// The events in the order given: the one of key `k` is at `(k as u64 - first)`, as the
    /// batch's sequence numbers are consecutive. Sorting the 16-byte keys alone moves far less
    /// than sorting the events with them.
    events: Vec<Option<E>>,
    /// The sequence number of the batch's first event.
    first: u64,
}

/// Runs of batched events; see the [module docs](self).
pub(super) struct Batches<E> {
    /// The runs; an emptied run keeps its allocations for the next batch.
    runs: Vec<Run<E>>,
    /// The next key of every non-empty run, with the run's index.
    heads: BinaryHeap<Reverse<(u128, u32)>>,
    /// Indices of emptied runs, reused before a new run is added.
    spare: Vec<u32>,
    /// Pending events over all runs.
    len: usize,
    /// Scratch for [`sort_keys`].
    short: Vec<u64>,
}

/// Sorts a batch's keys (distinct, as their sequence numbers are; times from `lo` on, sequence
/// numbers from `first` on). When each key's time past `lo` and its place in the batch fit in 64
/// bits together, which is nearly always, the 8-byte proxies `(time − lo) << b | place` are
/// sorted instead: the same order, as the place orders ties exactly as the sequence number
/// does, at half the width, in the standard library's branchless sort of integers.
fn sort_keys(keys: &mut [u128], short: &mut Vec<u64>, lo: u64, first: u64) {
    let n = keys.len() as u64;
    let b = 64 - (n - 1).leading_zeros().min(63) as u64 + u64::from(n == 1);
    let span = keys
        .iter()
        .map(|&k| (k >> 64) as u64 - lo)
        .max()
        .unwrap_or(0);
    if b >= 64 || span >> (64 - b) != 0 {
        keys.sort_unstable();
        return;
    }
    short.clear();
    short.extend(
        keys.iter()
            .map(|&k| (((k >> 64) as u64 - lo) << b) | (k as u64 - first)),
    );
    short.sort_unstable();
    let mask = (1u64 << b) - 1;
    for (k, &s) in keys.iter_mut().zip(short.iter()) {
        *k = super::calendar::pack_ns(lo + (s >> b), first + (s & mask));
    }
}

impl<E> Batches<E> {
    /// No runs.
    pub(super) fn new() -> Self {
        Batches {
            runs: Vec::new(),
            heads: BinaryHeap::new(),
            spare: Vec::new(),
            len: 0,
            short: Vec::new(),
        }
    }

    /// Pending batched events.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Adds one batch of `(time_ns, event)` whose sequence numbers are `first`, `first + 1`, …
    /// in the order given.
    pub(super) fn push_run(&mut self, first: u64, items: impl Iterator<Item = (u64, E)>) {
        let i = match self.spare.pop() {
            Some(i) => i,
            None => {
                self.runs.push(Run {
                    keys: Vec::new(),
                    next: 0,
                    events: Vec::new(),
                    first: 0,
                });
                u32::try_from(self.runs.len() - 1).expect("fewer than 2^32 runs in flight")
            }
        };
        let run = &mut self.runs[i as usize];
        run.keys.clear();
        run.next = 0;
        run.events.clear();
        run.first = first;
        let mut lo = u64::MAX;
        for ((at, ev), seq) in items.zip(first..) {
            lo = lo.min(at);
            run.keys.push(super::calendar::pack_ns(at, seq));
            run.events.push(Some(ev));
        }
        if run.keys.is_empty() {
            self.spare.push(i);
            return;
        }
        sort_keys(&mut run.keys, &mut self.short, lo, first);
        self.len += run.keys.len();
        let head = run.keys[0];
        self.heads.push(Reverse((head, i)));
    }

    /// The smallest pending key.
    #[inline]
    pub(super) fn peek_key(&self) -> Option<u128> {
        self.heads.peek().map(|&Reverse((key, _))| key)
    }

    /// Removes and returns the pending event with the smallest key.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<(u128, E)> {
        let mut top = self.heads.peek_mut()?;
        let Reverse((_, i)) = *top;
        let run = &mut self.runs[i as usize];
        let key = run.keys[run.next];
        run.next += 1;
        let ev = run.events[(key as u64 - run.first) as usize]
            .take()
            .expect("each key's event is taken once");
        match run.keys.get(run.next) {
            // Replacing the top sifts it down once: cheaper than a pop and a push.
            Some(&next) => *top = Reverse((next, i)),
            None => {
                PeekMut::pop(top);
                self.spare.push(i);
            }
        }
        self.len -= 1;
        Some((key, ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_proxies_sort_as_the_keys_do() {
        use crate::engine::calendar::pack_ns;
        let mut short = Vec::new();
        let cases: [&[u64]; 6] = [
            &[5],
            &[9, 3, 3, 7, 3],
            &[100, 0, u64::MAX / 2, 1],
            // Too wide for a proxy: the keys are sorted as they are.
            &[0, u64::MAX - 1, 7],
            &[1 << 62, 0, 1 << 62],
            // As wide as a proxy allows (two bits for three places).
            &[(1 << 62) - 1, 0, (1 << 62) - 1],
        ];
        for times in cases {
            let first = 1_000;
            let lo = *times.iter().min().expect("not empty");
            let mut keys: Vec<u128> = (first..)
                .zip(times.iter())
                .map(|(s, &t)| pack_ns(t, s))
                .collect();
            let mut want = keys.clone();
            want.sort_unstable();
            sort_keys(&mut keys, &mut short, lo, first);
            assert_eq!(keys, want, "{times:?}");
        }
    }

    #[test]
    fn runs_merge_in_key_order_and_emptied_runs_are_reused() {
        let mut b: Batches<u32> = Batches::new();
        b.push_run(0, [(30, 3), (10, 1), (20, 2)].into_iter());
        b.push_run(3, [(15, 15), (40, 40)].into_iter());
        b.push_run(5, std::iter::empty());
        assert_eq!(b.len(), 5);
        assert_eq!(b.peek_key(), Some(10 << 64 | 1));
        let mut got = Vec::new();
        for _ in 0..3 {
            got.push(b.pop().expect("pending").1);
        }
        assert_eq!(got, vec![1, 15, 2]);
        // The second run still holds 40: a new batch takes the empty run's place, or a new one.
        b.push_run(5, [(35, 35), (5, 5), (5, 6)].into_iter());
        assert!(b.runs.len() <= 3);
        let rest: Vec<u32> = std::iter::from_fn(|| b.pop().map(|(_, e)| e)).collect();
        // Equal times pop in the order given (their sequence numbers).
        assert_eq!(rest, vec![5, 6, 3, 35, 40]);
        assert_eq!((b.len(), b.peek_key()), (0, None));
        assert_eq!(b.spare.len(), b.runs.len());
        assert!(b.runs.iter().all(|r| r.next == r.keys.len()));
    }
}
