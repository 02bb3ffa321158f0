//! `split`: Chris Mason's 2009 proposal (never merged). A sync queue served by its own thread
//! (read decrypts, sync writes) and an async queue served by another (writeback encrypts). With
//! one CPU the two threads time-share it; with two they run in parallel.

use super::{CryptQueuePolicy, PolicyInfo, Topology, Work};
use std::collections::VecDeque;

/// Registration.
pub const INFO: PolicyInfo = PolicyInfo {
    name: "split",
    summary: "Mason 2009: a sync (read) thread and an async (write) thread, separate FIFOs",
    topology: Topology::Queued,
    threads: 2,
    build: || Box::new(Split::default()),
    io_queues: None,
    flags: super::DmFlags::NONE,
};

/// The slow reference `policy::tests` checks this policy against.
#[cfg(test)]
pub(super) const REFERENCE: Option<super::Reference> = Some(|q, _, thread| super::oldest(q, |w| w.sync == (thread == 0)));

/// Thread 0 serves `sync`, thread 1 serves `async_`.
#[derive(Debug, Default)]
pub struct Split {
    sync: VecDeque<Work>,
    async_: VecDeque<Work>,
}

impl CryptQueuePolicy for Split {
    fn enqueue(&mut self, work: Work) {
        if work.sync {
            self.sync.push_back(work);
        } else {
            self.async_.push_back(work);
        }
    }
    fn next(&mut self, thread: usize) -> Option<Work> {
        if thread == 0 {
            self.sync.pop_front()
        } else {
            self.async_.pop_front()
        }
    }
    fn len(&self) -> usize {
        self.sync.len() + self.async_.len()
    }
    fn queue_names(&self) -> &'static [&'static str] {
        &["sync", "async"]
    }
    fn queue_len(&self, q: usize) -> usize {
        [&self.sync, &self.async_][q].len()
    }
}
