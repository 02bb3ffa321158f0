//! mq-deadline, blk-mq's default scheduler for single-queue disks (block/mq-deadline.c, 6.6;
//! docs/model/block.md §8).
//!
//! Each direction keeps its requests twice: sorted by sector (`sort_list`) and in arrival
//! order with an expiry time (`fifo_list`, `fifo_time = now + fifo_expire[dir]`). Dispatch
//! (`__dd_dispatch_request`):
//! 1. while the current batch has fewer than `fifo_batch` requests and a request of the last
//!    direction lies at or after that direction's last dispatched end (`deadline_next_request`,
//!    `latest_pos`), dispatch it;
//! 2. otherwise choose a direction: reads if any wait, unless writes wait too and reads have
//!    already been preferred `writes_starved` times (`dd->starved++ >= dd->writes_starved`);
//! 3. in that direction, start from the oldest request if it has expired
//!    (`deadline_check_fifo`) or nothing lies ahead in sort order, else from the next in sort
//!    order; the batch count restarts.
//!
//! Not modelled: I/O priorities (every request is best-effort, so 6.6's per-priority queues
//! and `prio_aging_expire` never act), merging, zoned writes, and a request that starts before
//! `latest_pos` but covers it (`deadline_from_pos` returns it; here the next one after it).

use crate::engine::SimTime;
use crate::model::base::bio::BioId;
use crate::model::base::config::DeadlineTunables;
use std::collections::{BTreeMap, VecDeque};

const READ: usize = 0;
const WRITE: usize = 1;

/// The scheduler's state.
#[derive(Debug)]
pub struct Deadline {
    t: DeadlineTunables,
    /// Per direction: requests by (sector, arrival number).
    sort: [BTreeMap<(u64, u64), (BioId, u64)>; 2],
    /// Per direction: (expiry, sector, arrival number) in arrival order; entries already
    /// dispatched in sort order are skipped when they reach the front.
    fifo: [VecDeque<(SimTime, u64, u64)>; 2],
    /// Per direction: the sector just past the last request dispatched.
    latest_pos: [u64; 2],
    last_dir: usize,
    batching: u32,
    starved: u32,
    seq: u64,
}

impl Deadline {
    /// An empty scheduler with tunables `t`.
    pub fn new(t: DeadlineTunables) -> Deadline {
        Deadline {
            t,
            sort: [BTreeMap::new(), BTreeMap::new()],
            fifo: [VecDeque::new(), VecDeque::new()],
            latest_pos: [0; 2],
            last_dir: READ,
            batching: 0,
            starved: 0,
            seq: 0,
        }
    }

    /// Queues request `id` (`dd_insert_request`): `write` its direction, `(sector, sectors)`
    /// where it lies.
    pub fn insert(&mut self, id: BioId, write: bool, at: (u64, u64), now: SimTime) {
        let dir = usize::from(write);
        let expire = if write {
            self.t.write_expire
        } else {
            self.t.read_expire
        };
        self.seq += 1;
        self.sort[dir].insert((at.0, self.seq), (id, at.1));
        self.fifo[dir].push_back((now + expire, at.0, self.seq));
    }

    /// Requests waiting.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.sort[READ].len() + self.sort[WRITE].len()
    }

    /// Whether no request waits.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The next request in sort order at or after the direction's last dispatched end.
    fn next_in_sort(&self, dir: usize) -> Option<(u64, u64)> {
        let from = (self.latest_pos[dir], 0);
        self.sort[dir].range(from..).next().map(|(k, _)| *k)
    }

    /// The oldest request of `dir` still waiting, and its expiry (dropping dispatched ones).
    fn fifo_front(&mut self, dir: usize) -> Option<(SimTime, (u64, u64))> {
        while let Some(&(exp, sector, seq)) = self.fifo[dir].front() {
            if self.sort[dir].contains_key(&(sector, seq)) {
                return Some((exp, (sector, seq)));
            }
            self.fifo[dir].pop_front();
        }
        None
    }

    /// The request to hand to the device now (`__dd_dispatch_request`).
    pub fn dispatch(&mut self, now: SimTime) -> Option<BioId> {
        if self.batching < self.t.fifo_batch
            && let Some(key) = self.next_in_sort(self.last_dir)
        {
            return Some(self.take(self.last_dir, key));
        }
        let (reads, writes) = (!self.sort[READ].is_empty(), !self.sort[WRITE].is_empty());
        let dir = if reads {
            let starve = writes && {
                let s = self.starved;
                self.starved += 1;
                s >= self.t.writes_starved
            };
            if starve { WRITE } else { READ }
        } else if writes {
            WRITE
        } else {
            return None;
        };
        if dir == WRITE {
            self.starved = 0;
        }
        let (expiry, oldest) = self.fifo_front(dir)?;
        let key = match self.next_in_sort(dir) {
            Some(next) if now < expiry => next,
            _ => oldest,
        };
        self.last_dir = dir;
        self.batching = 0;
        Some(self.take(dir, key))
    }

    /// Dispatches the request at `key` (`deadline_move_request`).
    fn take(&mut self, dir: usize, key: (u64, u64)) -> BioId {
        self.batching += 1;
        let (id, sectors) = self.sort[dir].remove(&key).expect("a queued request");
        self.latest_pos[dir] = key.0 + sectors;
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimDuration;

    fn dl() -> Deadline {
        Deadline::new(DeadlineTunables {
            read_expire: SimDuration::from_ms(500),
            write_expire: SimDuration::from_secs(5),
            fifo_batch: 16,
            writes_starved: 2,
        })
    }

    fn drain(d: &mut Deadline, now: SimTime) -> Vec<BioId> {
        std::iter::from_fn(|| d.dispatch(now)).collect()
    }

    #[test]
    fn requests_leave_in_sector_order_from_the_head_then_wrap_to_the_oldest() {
        let mut d = dl();
        let t = SimTime::ZERO;
        for (id, sector) in [(1, 800), (2, 100), (3, 500), (4, 300)] {
            d.insert(id, false, (sector, 8), t);
        }
        // First dispatch: nothing lies past position 0? Everything does: sort order.
        assert_eq!(drain(&mut d, t), [2, 4, 3, 1]);
        // After 800+8, a request behind the head waits until the sweep ends, then the oldest
        // restarts the sweep.
        d.insert(5, false, (50, 8), t);
        d.insert(6, false, (900, 8), t);
        d.insert(7, false, (60, 8), t);
        assert_eq!(drain(&mut d, t), [6, 5, 7]);
    }

    #[test]
    fn an_expired_read_is_served_before_sort_order_at_the_next_batch() {
        let mut d = Deadline::new(DeadlineTunables {
            fifo_batch: 2,
            ..dl().t
        });
        let t = SimTime::ZERO;
        d.insert(1, false, (1000, 8), t);
        let later = t + SimDuration::from_ms(10);
        for (i, s) in [10u64, 20, 30, 40].iter().enumerate() {
            d.insert(10 + i as u32, false, (*s, 8), later);
        }
        // Not expired: sort order from 0, a batch of 2, then sort order again.
        assert_eq!(d.dispatch(later), Some(10));
        assert_eq!(d.dispatch(later), Some(11));
        // At 500 ms request 1 has expired: the new batch starts from it.
        let expired = t + SimDuration::from_ms(500);
        assert_eq!(d.dispatch(expired), Some(1));
        // Past sector 1008 nothing is left in the batch: the oldest (12) restarts the sweep.
        assert_eq!(drain(&mut d, expired), [12, 13]);
    }

    #[test]
    fn reads_are_preferred_until_writes_have_starved_twice() {
        let mut d = Deadline::new(DeadlineTunables {
            fifo_batch: 1,
            ..dl().t
        });
        let t = SimTime::ZERO;
        for i in 0..6 {
            d.insert(100 + i, false, (u64::from(i) * 8, 8), t);
        }
        d.insert(200, true, (10_000, 8), t);
        d.insert(201, true, (10_008, 8), t);
        // Batches of one. The first continues the (empty) batch; then reads win while
        // `starved` counts 0 and 1, and at 2 a write goes: two reads per write.
        let order = drain(&mut d, t);
        assert_eq!(order, [100, 101, 102, 200, 103, 104, 201, 105]);
        assert!(d.is_empty());
    }
}
