//! `fifo`: 2.6.32's layout. One kcryptd thread serves read decrypts and write encrypts in arrival
//! order from a single list, so one long write encryption delays every read decrypt behind it.

use super::{CryptQueuePolicy, PolicyInfo, Topology, Work};
use std::collections::VecDeque;

/// Registration.
pub const INFO: PolicyInfo = PolicyInfo {
    name: "fifo",
    summary: "2.6.32: one kcryptd FIFO shared by read decrypts and write encrypts",
    topology: Topology::Queued,
    threads: 1,
    build: || Box::new(Fifo::default()),
    io_queues: None,
    flags: super::DmFlags::NONE,
};

/// The slow reference `policy::tests` checks this policy against.
#[cfg(test)]
pub(super) const REFERENCE: Option<super::Reference> = Some(|q, _, _| super::oldest(q, |_| true));

/// One FIFO list.
#[derive(Debug, Default)]
pub struct Fifo {
    queue: VecDeque<Work>,
}

impl CryptQueuePolicy for Fifo {
    fn enqueue(&mut self, work: Work) {
        self.queue.push_back(work);
    }
    fn next(&mut self, _thread: usize) -> Option<Work> {
        self.queue.pop_front()
    }
    fn len(&self) -> usize {
        self.queue.len()
    }
    fn queue_names(&self) -> &'static [&'static str] {
        &["kcryptd"]
    }
    fn queue_len(&self, _q: usize) -> usize {
        self.queue.len()
    }
}
