//! dm-crypt queue policies: who queues crypt work, in which lists, and which crypt thread serves
//! what next.
//!
//! A policy is one file defining a type that implements [`CryptQueuePolicy`], a `pub const
//! INFO: PolicyInfo` describing it and a test-only `REFERENCE` (a slow, obvious model of its
//! serving order, or `None` without crypt queues). **To add a policy**, write
//! `src/model/crypt/policy/<name>.rs` with those three items and add its module name to the
//! `policies!` line below: that one line declares the module and registers it, so
//! `policies: [<name>]` in a scenario, `qsim check`, the reports, the reference test and the
//! timeline test all pick it up.
//!
//! The model routes bios by [`Topology`]: `Plain` has no dm-crypt at all, `Queued` sends reads
//! through kcryptd_io then a crypt queue and writes to a crypt queue (2.6.32's layout), `Inline`
//! decrypts in the completion softirq and encrypts in the submitter (5.9's no_read_workqueue /
//! no_write_workqueue), `Workqueue` submits reads directly, decrypts them in kcryptd workers and
//! sends encrypted writes through the sorting `dmcrypt_write` thread (5.8's stock layout).

use crate::model::base::bio::BioId;
use crate::model::base::config::IoQueues;
pub use crate::model::base::flags::DmFlags;

/// Encrypt or decrypt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CryptOp {
    /// Decrypt a read after the device returned it.
    Decrypt,
    /// Encrypt a write into bounce pages before submitting it.
    Encrypt,
}

/// One item of crypt work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Work {
    /// The bio.
    pub bio: BioId,
    /// What to do with it.
    pub op: CryptOp,
    /// REQ_SYNC: reads and sync writes go on a policy's sync / high list.
    pub sync: bool,
    /// The CPU it was queued from (what a bound kcryptd, `same_cpu_crypt`, serves it on).
    pub cpu: u32,
}

/// Where the crypt work of a policy runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topology {
    /// No dm-crypt: bios go straight to the disk.
    Plain,
    /// Crypt threads serve the policy's queues; reads take the kcryptd_io hop first.
    Queued,
    /// No crypt queue: decrypt in the completing context, encrypt in the submitter.
    Inline,
    /// 5.8's stock layout: reads are submitted by the caller and their completions queued to
    /// kcryptd, an unbound workqueue (one worker per CPU); writes are encrypted by kcryptd and
    /// handed to the `dmcrypt_write` thread, which submits them in sector order.
    Workqueue,
}

/// Static description of a policy.
#[derive(Debug, Clone, Copy)]
pub struct PolicyInfo {
    /// Name used in scenarios.
    pub name: &'static str,
    /// One line for `qsim check` and reports.
    pub summary: &'static str,
    /// How the model routes bios.
    pub topology: Topology,
    /// Crypt threads the policy serves with (0 without crypt queues). Under `Workqueue` the
    /// world starts one kcryptd worker per CPU instead; this many serve the reference test.
    pub threads: usize,
    /// Builds a fresh, empty instance.
    pub build: fn() -> Box<dyn CryptQueuePolicy>,
    /// The io queues the policy brings whatever the scenario's `crypt.io_queues` (`None`: the
    /// scenario's).
    pub io_queues: Option<IoQueues>,
    /// cryptsetup's performance flags this policy sets (only `dm-crypt+…` policies set any).
    pub flags: DmFlags,
}

impl PolicyInfo {
    /// Whether the policy has crypt threads serving queues (`Queued` or `Workqueue`).
    pub fn has_crypt_queues(&self) -> bool {
        matches!(self.topology, Topology::Queued | Topology::Workqueue)
    }
}

/// The queues of a policy. The model calls [`enqueue`](CryptQueuePolicy::enqueue) when crypt work
/// arrives and [`next`](CryptQueuePolicy::next) whenever crypt thread `thread` is idle.
pub trait CryptQueuePolicy: std::fmt::Debug {
    /// Queues one item.
    fn enqueue(&mut self, work: Work);
    /// The item thread `thread` should serve next, removed from the queues.
    fn next(&mut self, thread: usize) -> Option<Work>;
    /// Items queued in all lists.
    fn len(&self) -> usize;
    /// Whether nothing is queued.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Names of the policy's separate lists, for per-queue timelines. The default is one list
    /// holding everything; a policy with several lists names each.
    fn queue_names(&self) -> &'static [&'static str] {
        &["crypt"]
    }
    /// Items in list `q` (an index into [`queue_names`](CryptQueuePolicy::queue_names)); the
    /// lists' lengths sum to [`len`](CryptQueuePolicy::len).
    fn queue_len(&self, q: usize) -> usize {
        debug_assert_eq!(q, 0, "the default policy has one list");
        self.len()
    }
}

macro_rules! policies {
    ($($m:ident),* $(,)?) => {
        $(pub mod $m;)*
        /// Every registered policy, in registration order.
        pub const REGISTRY: &[PolicyInfo] = &[$($m::INFO),*];
        /// Each registered policy's slow reference, in registration order (beside
        /// [`REGISTRY`]).
        #[cfg(test)]
        const REFERENCES: &[Option<Reference>] = &[$($m::REFERENCE),*];
    };
}

/// A slow, obvious reference model of a queued policy, for the registry test: given everything
/// queued as `(arrival seq, work)` in arrival order, the reference's own state and the asking
/// thread, the index of the item to serve next. Each policy file defines `REFERENCE` (`None`
/// for a policy without crypt queues), so a new policy brings its own reference.
#[cfg(test)]
pub(crate) type Reference = fn(&[(u64, Work)], &mut RefState, usize) -> Option<usize>;

/// The state a [`Reference`] may keep between calls: (serving the sync list, items served in
/// this batch), starting at (true, 0).
#[cfg(test)]
pub(crate) type RefState = (bool, u32);

/// The oldest queued item that `f` accepts: the usual building block of a [`Reference`].
#[cfg(test)]
pub(crate) fn oldest(q: &[(u64, Work)], f: impl Fn(&Work) -> bool) -> Option<usize> {
    q.iter()
        .enumerate()
        .filter(|(_, (_, w))| f(w))
        .min_by_key(|(_, (s, _))| *s)
        .map(|(i, _)| i)
}

policies!(
    none, fifo, split, prio, ratio, inline, mason_v3, stock58, dm_crypt
);
pub mod bound;

/// Looks a policy up by name: a registered one, or `dm-crypt+<flag>+…` ([`DmFlags::parse`]).
pub fn find(name: &str) -> Option<&'static PolicyInfo> {
    if let Some(p) = REGISTRY.iter().find(|p| p.name == name) {
        return Some(p);
    }
    let flags = DmFlags::parse(name)?;
    Some(&flagged()[usize::from(flags.0)])
}

/// The `dm-crypt` policy with every set of flags, indexed by [`DmFlags`]' bits; built once.
fn flagged() -> &'static [PolicyInfo] {
    static TABLE: std::sync::OnceLock<Vec<PolicyInfo>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        (0..1u8 << DmFlags::ALL.len())
            .map(|bits| {
                let flags = DmFlags(bits);
                PolicyInfo {
                    name: Box::leak(flags.policy_name().into_boxed_str()),
                    flags,
                    ..dm_crypt::INFO
                }
            })
            .collect()
    })
}

/// A `policies:` entry that stands for several `dm-crypt` tables: `dm-crypt+*` (every
/// combination of the flags the kernel has) or `dm-crypt+{flag,flag,…}` (every combination of
/// just those). [`FlagPattern::parse`] reads one; [`DmFlags::combinations`] expands it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagPattern {
    /// `dm-crypt+*`: whatever flags the kernel has.
    All,
    /// `dm-crypt+{…}`: these flags (at least one), whether the kernel has them or not.
    Subset(DmFlags),
}

impl FlagPattern {
    /// The pattern `name` is: `None` when it is no pattern (a plain policy name, right or
    /// wrong), `Some(Err(why))` for a pattern that is malformed (an unknown or repeated flag
    /// in the braces, empty braces, text after them).
    pub fn parse(name: &str) -> Option<Result<FlagPattern, String>> {
        let rest = name.strip_prefix(dm_crypt::INFO.name)?.strip_prefix('+')?;
        if rest == "*" {
            return Some(Ok(FlagPattern::All));
        }
        let inner = rest.strip_prefix('{')?;
        let Some(inner) = inner.strip_suffix('}') else {
            return Some(Err("the flag list must end with `}`".into()));
        };
        let mut flags = DmFlags::NONE;
        for part in inner.split(',').map(str::trim) {
            if part.is_empty() {
                return Some(Err("an empty flag in the braces".into()));
            }
            let Some(&(_, f)) = DmFlags::ALL.iter().find(|(n, _)| *n == part) else {
                return Some(Err(format!("unknown flag `{part}`")));
            };
            if flags.has(f) {
                return Some(Err(format!("flag `{part}` is listed twice")));
            }
            flags.0 |= f.0;
        }
        Some(Ok(FlagPattern::Subset(flags)))
    }
}

/// The policy used by topologies without crypt queues: holds nothing.
#[derive(Debug, Default)]
pub struct NoQueue;

impl CryptQueuePolicy for NoQueue {
    fn enqueue(&mut self, work: Work) {
        unreachable!("a policy without crypt threads was given work {work:?}")
    }
    fn next(&mut self, _thread: usize) -> Option<Work> {
        None
    }
    fn len(&self) -> usize {
        0
    }
    fn queue_names(&self) -> &'static [&'static str] {
        &[]
    }
    fn queue_len(&self, _q: usize) -> usize {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn every_policy_matches_a_naive_reference() {
        use rand::{RngExt, SeedableRng};
        for (info, reference) in REGISTRY.iter().zip(REFERENCES) {
            let Some(reference) = reference else {
                assert!(!info.has_crypt_queues(), "{} needs a REFERENCE", info.name);
                continue;
            };
            let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(7);
            let mut fast = (info.build)();
            let mut slow: Vec<(u64, Work)> = Vec::new();
            let mut state = (true, 0u32);
            let mut seq = 0u64;
            let mut order_fast = VecDeque::new();
            let mut order_slow = VecDeque::new();
            for _ in 0..20_000 {
                if rng.random_bool(0.55) {
                    let sync = rng.random_bool(0.4);
                    let w = Work {
                        bio: seq as BioId,
                        op: if sync {
                            CryptOp::Decrypt
                        } else {
                            CryptOp::Encrypt
                        },
                        sync,
                        cpu: 0,
                    };
                    fast.enqueue(w);
                    slow.push((seq, w));
                    seq += 1;
                } else {
                    let thread = rng.random_range(0..info.threads);
                    order_fast.push_back(fast.next(thread));
                    let pick = reference(&slow, &mut state, thread);
                    order_slow.push_back(pick.map(|i| slow.remove(i).1));
                }
                assert_eq!(fast.len(), slow.len(), "{}", info.name);
                let lists = fast.queue_names().len();
                let by_list: usize = (0..lists).map(|q| fast.queue_len(q)).sum();
                assert_eq!(by_list, fast.len(), "{}: lists sum to len", info.name);
            }
            assert_eq!(order_fast, order_slow, "policy {}", info.name);
        }
    }

    #[test]
    fn combinations_come_default_first_then_by_count_in_flag_order() {
        let all = DmFlags(0b11111).combinations();
        assert_eq!(all.len(), 32);
        assert_eq!(all[0], DmFlags::NONE);
        let names: Vec<String> = all.iter().map(|f| f.policy_name()).collect();
        assert_eq!(names[1], "dm-crypt+same_cpu_crypt");
        assert_eq!(names[5], "dm-crypt+high_priority");
        assert_eq!(names[6], "dm-crypt+same_cpu_crypt+submit_from_crypt_cpus");
        assert_eq!(names[15], "dm-crypt+no_write_workqueue+high_priority");
        assert_eq!(names[31].matches('+').count(), 5);
        assert!(all.windows(2).all(|w| w[0].count() <= w[1].count()));
        // Every name is one policy::find accepts, under its canonical name.
        for n in &names {
            assert_eq!(find(n).unwrap().name, n);
        }
        let two = DmFlags::NO_READ_WORKQUEUE
            .union(DmFlags::NO_WRITE_WORKQUEUE)
            .combinations();
        assert_eq!(
            two,
            [
                DmFlags::NONE,
                DmFlags::NO_READ_WORKQUEUE,
                DmFlags::NO_WRITE_WORKQUEUE,
                DmFlags(12)
            ]
        );
    }

    #[test]
    fn patterns_parse_or_say_why_not() {
        assert_eq!(FlagPattern::parse("dm-crypt"), None);
        assert_eq!(FlagPattern::parse("dm-crypt+same_cpu_crypt"), None);
        assert_eq!(FlagPattern::parse("fifo"), None);
        assert_eq!(FlagPattern::parse("dm-crypt+*"), Some(Ok(FlagPattern::All)));
        assert_eq!(
            FlagPattern::parse("dm-crypt+{no_write_workqueue, same_cpu_crypt}"),
            Some(Ok(FlagPattern::Subset(DmFlags(9))))
        );
        for bad in [
            "dm-crypt+{}",
            "dm-crypt+{same_cpu_crypt",
            "dm-crypt+{same_cpu_crypt,same_cpu_crypt}",
            "dm-crypt+{no_read_wq}",
        ] {
            assert!(matches!(FlagPattern::parse(bad), Some(Err(_))), "{bad}");
        }
    }

    #[test]
    fn registry_names_are_unique_and_findable() {
        for p in REGISTRY {
            assert_eq!(find(p.name).unwrap().name, p.name);
            assert_eq!(REGISTRY.iter().filter(|q| q.name == p.name).count(), 1);
            assert_eq!(p.threads > 0, p.has_crypt_queues(), "{}", p.name);
        }
    }
}
