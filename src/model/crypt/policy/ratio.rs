//! `ratio`: one crypt thread over a sync and an async list in batches, as btrfs's worker does
//! (fs/btrfs/volumes.c, 2.6.32): up to 64 sync items, then switch if async work waits; up to 32
//! async items, then switch if sync work waits. Sync gets about two thirds of the thread under
//! load, and neither list starves.
//!
//! Not modelled (yet): btrfs also unplugs the disk when it leaves the sync list, and requeues
//! itself when the disk is write-congested after more than 8 items of a batch.

use super::{CryptQueuePolicy, PolicyInfo, Topology, Work};
use std::collections::VecDeque;

/// Sync items per batch.
pub const SYNC_BATCH: u32 = 64;
/// Async items per batch.
pub const ASYNC_BATCH: u32 = 32;

/// Registration.
pub const INFO: PolicyInfo = PolicyInfo {
    name: "ratio",
    summary: "one thread, btrfs batches: 64 sync then 32 async while both wait",
    topology: Topology::Queued,
    threads: 1,
    build: || Box::new(Ratio::new()),
    io_queues: None,
    flags: super::DmFlags::NONE,
};

/// The slow reference `policy::tests` checks this policy against: the batch rule spelled out
/// over a scan of everything queued.
#[cfg(test)]
pub(super) const REFERENCE: Option<super::Reference> = Some(|q, state, _| {
    let (on_sync, served) = state;
    let has = |s: bool| q.iter().any(|(_, w)| w.sync == s);
    let limit = if *on_sync { SYNC_BATCH } else { ASYNC_BATCH };
    if !has(*on_sync) || (*served >= limit && has(!*on_sync)) {
        if has(!*on_sync) {
            *on_sync = !*on_sync;
        }
        *served = 0;
    }
    let s = *on_sync;
    let i = super::oldest(q, |w| w.sync == s);
    if i.is_some() {
        *served += 1;
    }
    i
});

/// Two lists and the batch in progress.
#[derive(Debug)]
pub struct Ratio {
    lists: [VecDeque<Work>; 2],
    /// 0 = serving the sync list, 1 = the async list.
    current: usize,
    served: u32,
}

impl Ratio {
    /// Starts on the sync list.
    pub fn new() -> Self {
        Ratio { lists: [VecDeque::new(), VecDeque::new()], current: 0, served: 0 }
    }
}

impl Default for Ratio {
    fn default() -> Self {
        Self::new()
    }
}

impl CryptQueuePolicy for Ratio {
    fn enqueue(&mut self, work: Work) {
        self.lists[usize::from(!work.sync)].push_back(work);
    }
    fn next(&mut self, _thread: usize) -> Option<Work> {
        let other = 1 - self.current;
        let limit = if self.current == 0 { SYNC_BATCH } else { ASYNC_BATCH };
        let exhausted = self.lists[self.current].is_empty();
        if exhausted || (self.served >= limit && !self.lists[other].is_empty()) {
            if !self.lists[other].is_empty() {
                self.current = other;
            }
            self.served = 0;
        }
        let w = self.lists[self.current].pop_front();
        if w.is_some() {
            self.served += 1;
        }
        w
    }
    fn len(&self) -> usize {
        self.lists[0].len() + self.lists[1].len()
    }
    fn queue_names(&self) -> &'static [&'static str] {
        &["sync", "async"]
    }
    fn queue_len(&self, q: usize) -> usize {
        self.lists[q].len()
    }
}
