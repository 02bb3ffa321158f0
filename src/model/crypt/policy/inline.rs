//! `inline`: 5.9's `no_read_workqueue` + `no_write_workqueue`. No crypt queue: reads are decrypted
//! in the completion (softirq) context, writes are encrypted by the submitter, which then submits
//! the clone itself. The cost lands on whichever CPU context is there; no workqueue hops.

use super::{NoQueue, PolicyInfo, Topology};

/// Registration.
pub const INFO: PolicyInfo = PolicyInfo {
    name: "inline",
    summary: "5.9 no_read/no_write_workqueue: decrypt in softirq, encrypt in the submitter",
    topology: Topology::Inline,
    threads: 0,
    build: || Box::new(NoQueue),
    io_queues: None,
    flags: super::DmFlags::NONE,
};

/// The slow reference `policy::tests` checks this policy against.
#[cfg(test)]
pub(super) const REFERENCE: Option<super::Reference> = None;
