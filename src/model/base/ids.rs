//! Identities and modes shared by the model's components, as types so the compiler catches
//! mix-ups: a request class is not an index, an actor is not a job, and a CPU task says whose it
//! is without tag bits.

use crate::model::base::bio::BioId;

/// A block-layer request class: the kernel's `BLK_RW_SYNC` / `BLK_RW_ASYNC`. Request pools,
/// congestion flags and the global `congestion_wait` queues are kept per class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QueueClass {
    /// Reads and sync writes.
    Sync,
    /// Other writes (writeback).
    Async,
}

impl QueueClass {
    /// Both classes, in index order.
    pub const ALL: [QueueClass; 2] = [QueueClass::Sync, QueueClass::Async];

    /// The class of a bio with REQ_SYNC set (`true`) or not.
    #[inline]
    pub fn of(sync: bool) -> QueueClass {
        if sync {
            QueueClass::Sync
        } else {
            QueueClass::Async
        }
    }

    /// Index into per-class arrays of the observation structs (0 = SYNC, 1 = ASYNC).
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// The class `congestion_wait` sleeps on for a kernel's [`CwaitClass`] switch.
    ///
    /// [`CwaitClass`]: crate::model::base::config::CwaitClass
    pub fn from_cwait(c: crate::model::base::config::CwaitClass) -> QueueClass {
        match c {
            crate::model::base::config::CwaitClass::Sync => QueueClass::Sync,
            crate::model::base::config::CwaitClass::Async => QueueClass::Async,
        }
    }
}

/// A thread of the world (a crypt thread, kcryptd_io, or a submitting context): an index into
/// the world's actor table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ActorId(pub u32);

impl ActorId {
    /// The index into the actor table.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A slot of a direct reclaimer (an allocation in the slow path).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReclaimSlot(pub u32);

impl ReclaimSlot {
    /// The index into the reclaimer table.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a CPU's time was spent on, as reported ("CPU by context"): each CPU task is booked to
/// one of these by its owner ([`World`](crate::model::world::World) decides).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CpuContext {
    /// Softirq: read decryption in the completion (`no_read_workqueue`, `inline`).
    Softirq = 0,
    /// kcryptd's workers (or 2.6.x's crypt threads): encryption, decryption and their hops.
    Kcryptd = 1,
    /// kcryptd_io and Mason's kcryptd_async_io: their hops.
    KcryptdIo = 2,
    /// `dmcrypt_write`'s wake-ups.
    DmcryptWrite = 3,
    /// Submitting processes and flushers in the kernel: the submission path, and encryption
    /// under `no_write_workqueue` / `inline`.
    Submitter = 4,
    /// Application work that is not I/O (fake-gitk's hashing).
    Application = 5,
    /// kswapd and direct reclaim scanning.
    Reclaim = 6,
}

impl CpuContext {
    /// Every context, in report order.
    pub const ALL: [CpuContext; 7] = [
        CpuContext::Softirq,
        CpuContext::Kcryptd,
        CpuContext::KcryptdIo,
        CpuContext::DmcryptWrite,
        CpuContext::Submitter,
        CpuContext::Application,
        CpuContext::Reclaim,
    ];
    /// Number of contexts.
    pub const COUNT: usize = CpuContext::ALL.len();

    /// Index into per-context arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Its name in reports.
    pub fn label(self) -> &'static str {
        match self {
            CpuContext::Softirq => "softirq",
            CpuContext::Kcryptd => "kcryptd",
            CpuContext::KcryptdIo => "kcryptd_io",
            CpuContext::DmcryptWrite => "dmcrypt_write",
            CpuContext::Submitter => "submitters",
            CpuContext::Application => "application",
            CpuContext::Reclaim => "reclaim",
        }
    }
}

/// Whose work a CPU task is, handed back when the task finishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TaskOwner {
    /// An actor's step (crypto, the kcryptd_io hop, an inline encryption).
    Actor(ActorId),
    /// A completion softirq decrypting this bio (`inline`).
    Softirq(BioId),
    /// A kswapd scan.
    Kswapd,
    /// A direct reclaimer's scan.
    Reclaim(ReclaimSlot),
    /// A fake-gitk process's CPU work (hashing its buffer).
    Proc(u32),
    /// Job `j`'s fio `thinktime_spin` (application CPU work).
    Spin(u32),
    /// A chunk of fio `cpuio` process `p` (application CPU work).
    CpuIo(u32),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_index_the_observation_arrays_in_kernel_order() {
        assert_eq!(QueueClass::Sync.index(), 0);
        assert_eq!(QueueClass::Async.index(), 1);
        assert_eq!(QueueClass::of(true), QueueClass::Sync);
        assert_eq!(QueueClass::of(false), QueueClass::Async);
        for c in QueueClass::ALL {
            assert_eq!(QueueClass::ALL[c.index()], c);
        }
        use crate::model::base::config::CwaitClass;
        for c in [CwaitClass::Sync, CwaitClass::Async] {
            assert_eq!(QueueClass::from_cwait(c).index(), c.index());
        }
    }
}
