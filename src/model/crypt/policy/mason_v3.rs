//! `mason-v3`: Chris Mason's "make crypto unplug fix V3" as posted (linux-mm, 13 Nov 2009,
//! Message-ID 20091113125812.GB7891@think; never merged). The crypt side is 2.6.32's: one
//! kcryptd thread, one FIFO of read decrypts and write encrypts. What the patch changes is the
//! io side, which this policy switches on whatever `crypt.io_queues` says: bios flagged
//! `BIO_RW_SYNCIO` go to kcryptd_io, the others to a second single-thread queue,
//! kcryptd_async_io; kcryptd hands every encrypted write to them instead of submitting it; and
//! an io thread unplugs the disk when its queue empties (the async one only with no sync bio
//! queued). Plain READs (swap-in, readahead, O_DIRECT reads) carry no `BIO_RW_SYNCIO` in 2.6.32,
//! so most reads take the async queue. Compare with `split`, the two-thread idea as argued.

use super::fifo::Fifo;
use super::{IoQueues, PolicyInfo, Topology};

/// Registration.
pub const INFO: PolicyInfo = PolicyInfo {
    name: "mason-v3",
    summary: "Mason 2009 as posted: one kcryptd FIFO; sync/async io threads on BIO_RW_SYNCIO",
    topology: Topology::Queued,
    threads: 1,
    build: || Box::new(Fifo::default()),
    io_queues: Some(IoQueues::MasonV3),
    flags: super::DmFlags::NONE,
};

/// The slow reference `policy::tests` checks this policy against: kcryptd's one FIFO.
#[cfg(test)]
pub(super) const REFERENCE: Option<super::Reference> = Some(|q, _, _| super::oldest(q, |_| true));
