//! The decisions of dm-crypt's modern layout (4.19 and later; `stock-5.8` and the `dm-crypt`
//! policies, topology [`Topology::Workqueue`]): which flags of the table are in force on the
//! scenario's kernel, where a read's decryption runs once the device has completed it, and
//! whether kcryptd or `dmcrypt_write` submits an encrypted write (docs/model/crypt.md §1, §3).
//!
//! The mechanisms themselves are the world's threads and queues (`actors.rs`): this module
//! only routes a bio to one of them.

use super::bio::BioId;
use super::event::Event;
use super::ids::TaskOwner;
use super::observe::Stage;
use super::policy::{CryptOp, DmFlags, PolicyInfo, Topology, Work};
use super::world::World;
use crate::engine::Scheduler;
use crate::model::config::{
    CompletionSite, DeviceConfig, DmCryptRules, HardirqFallback, IrqContext, Scenario,
};

/// The flags a run's dm-crypt table has in force, resolved against its kernel's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Table {
    /// The policy's flags (the loader refused those the kernel lacks).
    pub(super) flags: DmFlags,
    /// The kernel's dm-crypt rules, `None` for a 2.6.x kernel (`stock-5.8` then runs 5.8's
    /// layout whatever the version).
    pub(super) rules: Option<DmCryptRules>,
}

impl Table {
    /// The table of policy `info` on `sc`'s kernel.
    pub(super) fn new(sc: &Scenario, info: &PolicyInfo) -> Table {
        let modern = info.topology == Topology::Workqueue;
        Table {
            flags: if modern { info.flags } else { DmFlags::NONE },
            rules: if modern {
                sc.kernel.version.dmcrypt()
            } else {
                None
            },
        }
    }

    /// Whether flag `f` is set.
    pub(super) fn has(&self, f: DmFlags) -> bool {
        self.flags.has(f)
    }
}

/// Where a read's decryption runs after the device completed its clone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DecryptAt {
    /// Queued on kcryptd (the default; `no_read_workqueue`'s fallback on kernels that send a
    /// hard-IRQ completion to the workqueue).
    Kcryptd,
    /// Inline in the completion: a softirq (or the tasklet / BH work item of a hard-IRQ
    /// completion), or the submitting task for a synchronous RAM disk.
    Inline,
}

/// Where `kcryptd_queue_crypt()` sends a read completed at `site`, with `no_read_workqueue`
/// set or not, under `rules`.
pub(super) fn decrypt_at(
    no_read_wq: bool,
    rules: &DmCryptRules,
    site: CompletionSite,
) -> DecryptAt {
    if !no_read_wq {
        return DecryptAt::Kcryptd;
    }
    match (site.context, rules.hardirq_fallback) {
        (IrqContext::Hardirq, HardirqFallback::Workqueue) => DecryptAt::Kcryptd,
        _ => DecryptAt::Inline,
    }
}

impl World {
    /// Where the block layer completes `bio`'s clone (the device and its queues decide).
    pub(super) fn completion_site(&self, bio: BioId) -> CompletionSite {
        let cpu = self.bios[bio].submit_cpu;
        let context = match &self.sc.device {
            DeviceConfig::Nvme(n) if n.preset == "ramdisk" => IrqContext::Submitter,
            DeviceConfig::Nvme(_) => IrqContext::Hardirq,
            _ => IrqContext::Softirq,
        };
        CompletionSite { cpu, context }
    }

    /// A read's clone came back from the device under the workqueue layout: decrypt it in the
    /// completion (`no_read_workqueue`, where the kernel allows) or queue it on kcryptd.
    pub(super) fn read_completed_wq(&mut self, bio: BioId, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let site = self.completion_site(bio);
        let at = match &self.table.rules {
            Some(rules) => decrypt_at(self.table.has(DmFlags::NO_READ_WORKQUEUE), rules, site),
            None => DecryptAt::Kcryptd,
        };
        match at {
            DecryptAt::Kcryptd => {
                self.enter(bio, Stage::CryptQueue, now);
                let (op, sync) = (CryptOp::Decrypt, self.bios[bio].sync);
                let cpu = site.cpu;
                self.policy_enqueue(Work { bio, op, sync, cpu }, sched);
            }
            DecryptAt::Inline => {
                self.enter(bio, Stage::CryptService, now);
                let cost = self.crypto_cost(CryptOp::Decrypt, bio);
                self.start_cpu(TaskOwner::Softirq(bio), cost, sched);
            }
        }
    }

    /// Whether writes are encrypted by their submitter and submitted directly
    /// (`no_write_workqueue` on a kernel that has it).
    pub(super) fn writes_inline(&self) -> bool {
        self.info.topology == Topology::Inline
            || (self.table.rules.is_some_and(|r| r.bypass_flags)
                && self.table.has(DmFlags::NO_WRITE_WORKQUEUE))
    }

    /// Whether a kcryptd worker submits the write it encrypted synchronously itself
    /// (`submit_from_crypt_cpus`) instead of handing it to `dmcrypt_write`.
    pub(super) fn worker_submits_writes(&self) -> bool {
        self.table.rules.is_some()
            && self.table.has(DmFlags::SUBMIT_FROM_CRYPT_CPUS)
            && self.engine.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::KernelVersion;

    fn site(context: IrqContext) -> CompletionSite {
        CompletionSite { cpu: 1, context }
    }

    #[test]
    fn a_hard_irq_completion_falls_back_by_era() {
        let rules = |v: KernelVersion| v.dmcrypt().expect("modern");
        let hard = site(IrqContext::Hardirq);
        // 5.9's tasklet and 6.9's BH workqueue decrypt inline; 6.6 queues to kcryptd.
        assert_eq!(
            decrypt_at(true, &rules(KernelVersion::V5_9), hard),
            DecryptAt::Inline
        );
        assert_eq!(
            decrypt_at(true, &rules(KernelVersion::V6_6), hard),
            DecryptAt::Kcryptd
        );
        assert_eq!(
            decrypt_at(true, &rules(KernelVersion::V6_9), hard),
            DecryptAt::Inline
        );
        for v in [
            KernelVersion::V5_9,
            KernelVersion::V6_6,
            KernelVersion::V6_12,
        ] {
            let soft = site(IrqContext::Softirq);
            assert_eq!(
                decrypt_at(true, &rules(v), soft),
                DecryptAt::Inline,
                "{v:?}"
            );
            assert_eq!(
                decrypt_at(false, &rules(v), hard),
                DecryptAt::Kcryptd,
                "{v:?}"
            );
        }
    }
}
