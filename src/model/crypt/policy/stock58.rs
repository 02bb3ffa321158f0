//! `stock-5.8`: dm-crypt as Cloudflare measured it in 2020 (target 1.21; the layout of 4.0–5.8,
//! docs/model/crypt.md). A read is cloned and submitted by its caller; its completion is queued
//! to kcryptd, an unbound workqueue with one worker per online CPU (`max_active =
//! num_online_cpus()`), which decrypts it. A write is queued to kcryptd, encrypted there, put in
//! an rb-tree keyed by sector and handed to the single `dmcrypt_write` thread, which takes the
//! whole tree and submits it in sector order. kcryptd serves its work items in arrival order:
//! this policy is that one FIFO; the world starts the workers and the writer thread.

use super::fifo::Fifo;
use super::{PolicyInfo, Topology};

/// Registration.
pub const INFO: PolicyInfo = PolicyInfo {
    name: "stock-5.8",
    summary: "5.8 stock: reads submitted directly, decrypted by an unbound kcryptd (a worker per CPU); writes sorted by dmcrypt_write",
    topology: Topology::Workqueue,
    threads: 4,
    build: || Box::new(Fifo::default()),
    io_queues: None,
    flags: super::DmFlags::NONE,
};

/// The slow reference `policy::tests` checks this policy against: one FIFO, whichever worker
/// asks.
#[cfg(test)]
pub(super) const REFERENCE: Option<super::Reference> = Some(|q, _, _| super::oldest(q, |_| true));
