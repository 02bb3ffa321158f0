//! `prio`: one crypt thread over two lists, btrfs style, strict: the high list (sync work: read
//! decrypts, sync writes) always drains first. A read waits at most for the encryption in
//! progress; writes can starve while reads keep coming.

use super::{CryptQueuePolicy, PolicyInfo, Topology, Work};
use std::collections::VecDeque;

/// Registration.
pub const INFO: PolicyInfo = PolicyInfo {
    name: "prio",
    summary: "one thread, high list (sync) strictly before low list (async)",
    topology: Topology::Queued,
    threads: 1,
    build: || Box::new(Prio::default()),
    io_queues: None,
    flags: super::DmFlags::NONE,
};

/// The slow reference `policy::tests` checks this policy against.
#[cfg(test)]
pub(super) const REFERENCE: Option<super::Reference> = Some(|q, _, _| super::oldest(q, |w| w.sync).or_else(|| super::oldest(q, |_| true)));

/// High and low lists.
#[derive(Debug, Default)]
pub struct Prio {
    high: VecDeque<Work>,
    low: VecDeque<Work>,
}

impl CryptQueuePolicy for Prio {
    fn enqueue(&mut self, work: Work) {
        if work.sync {
            self.high.push_back(work);
        } else {
            self.low.push_back(work);
        }
    }
    fn next(&mut self, _thread: usize) -> Option<Work> {
        self.high.pop_front().or_else(|| self.low.pop_front())
    }
    fn len(&self) -> usize {
        self.high.len() + self.low.len()
    }
    fn queue_names(&self) -> &'static [&'static str] {
        &["high", "low"]
    }
    fn queue_len(&self, q: usize) -> usize {
        [&self.high, &self.low][q].len()
    }
}
