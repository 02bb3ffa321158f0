//! `dm-crypt`: the kernel's own dm-crypt layout for the scenario's kernel version (4.19 and
//! later, docs/model/crypt.md §1): reads submitted by the caller and decrypted by kcryptd, an
//! unbound workqueue with up to one work item per online CPU; writes encrypted by kcryptd and
//! submitted in sector order by `dmcrypt_write`. Its variants carry cryptsetup's `--perf-*`
//! flags in their names (`dm-crypt+no_read_workqueue+no_write_workqueue`, [`super::DmFlags`]),
//! which the world reads to route bios; the crypt queue itself is kcryptd's FIFO (per CPU under
//! `same_cpu_crypt`, [`super::bound::Bound`]).

use super::fifo::Fifo;
use super::{DmFlags, PolicyInfo, Topology};

/// Registration: the layout with no flags set.
pub const INFO: PolicyInfo = PolicyInfo {
    name: crate::model::base::flags::TABLE_POLICY,
    summary: "the kernel's dm-crypt (4.19+): kcryptd workers per CPU, dmcrypt_write; flags as dm-crypt+<flag>",
    topology: Topology::Workqueue,
    threads: 4,
    build: || Box::new(Fifo::default()),
    io_queues: None,
    flags: DmFlags::NONE,
};

/// The slow reference `policy::tests` checks this policy against: one FIFO, whichever worker
/// asks.
#[cfg(test)]
pub(super) const REFERENCE: Option<super::Reference> = Some(|q, _, _| super::oldest(q, |_| true));
