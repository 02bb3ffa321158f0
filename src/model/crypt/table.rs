//! The decisions of dm-crypt's modern layout (4.19 and later; `stock-5.8` and the `dm-crypt`
//! policies, topology [`Topology::Workqueue`]): which flags of the table are in force on the
//! scenario's kernel, where a read's decryption runs once the device has completed it, and
//! whether kcryptd or `dmcrypt_write` submits an encrypted write (docs/model/crypt.md §1, §3).
//!
//! The mechanisms themselves are the world's threads and queues (`threads.rs` here, `src/model/world/threads.rs` for what
//! they do): this module
//! only routes a bio to one of them.

use crate::model::base::config::{
    CompletionSite, DmCryptRules, HardirqFallback, IrqContext, Scenario,
};
use crate::model::crypt::policy::{DmFlags, PolicyInfo, Topology};

/// The flags a run's dm-crypt table has in force, resolved against its kernel's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(in crate::model) struct Table {
    /// The policy's flags (the loader refused those the kernel lacks).
    pub(in crate::model) flags: DmFlags,
    /// The kernel's dm-crypt rules, `None` for a 2.6.x kernel (`stock-5.8` then runs 5.8's
    /// layout whatever the version).
    pub(in crate::model) rules: Option<DmCryptRules>,
}

impl Table {
    /// The table of policy `info` on `sc`'s kernel.
    pub(in crate::model) fn new(sc: &Scenario, info: &PolicyInfo) -> Table {
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
    pub(in crate::model) fn has(&self, f: DmFlags) -> bool {
        self.flags.has(f)
    }
}

/// The bio size limit of 6.11's `get_max_request_sectors()` when the module parameter is 0.
pub const DEFAULT_MAX_REQUEST: u32 = 128 * 1024;
/// Writes are also capped at `BIO_MAX_VECS` pages (1 MiB with 4 KiB pages).
pub const BIO_MAX_BYTES: u32 = 256 * 4096;
/// Spreads the pieces' device draws over [0, 1) (the golden ratio's fractional part), so that
/// the pieces of one bio are not served alike.
pub(in crate::model) const PIECE_STEP: f64 = 0.618_033_988_749_894_9;

/// Where a read's decryption runs after the device completed its clone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::model) enum DecryptAt {
    /// Queued on kcryptd (the default; `no_read_workqueue`'s fallback on kernels that send a
    /// hard-IRQ completion to the workqueue).
    Kcryptd,
    /// Inline in the completion: a softirq (or the tasklet / BH work item of a hard-IRQ
    /// completion), or the submitting task for a synchronous RAM disk.
    Inline,
}

/// Where `kcryptd_queue_crypt()` sends a read completed at `site`, with `no_read_workqueue`
/// set or not, under `rules`.
pub(in crate::model) fn decrypt_at(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::base::config::KernelVersion;

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
