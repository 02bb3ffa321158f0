//! The threads of the world and what they do with a bio: crypt threads pulling from the policy
//! (with the async crypto engine behind them), kcryptd_io's hop (and, under Mason's io queues,
//! kcryptd_async_io's, with their unplug-when-empty rule), 5.8's `dmcrypt_write` thread and its
//! sector-sorted tree, and the submitting contexts of jobs and flushers (which encrypt inline
//! under `inline`).
//!
//! Each actor is idle, running on a CPU, asleep on a request pool, blocked on the crypto
//! backlog, or waiting for memory. `World::kick` (in `world/threads.rs`) lets an idle actor take its next piece of
//! work; `World::actor_cpu_done` moves it on when its CPU step ends.

use crate::model::base::bio::BioId;
use crate::model::block::queue::BatchState;
use crate::model::crypt::policy::CryptOp;
use std::collections::{BTreeMap, VecDeque};

/// What an actor is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActorKind {
    /// Crypt thread `i` of the policy.
    Crypt(usize),
    /// kcryptd_io.
    Io,
    /// The submitting context of job `j` (used when it submits to the disk itself).
    JobCtx(u32),
    /// The submitting context of writer `w`'s flusher.
    FlusherCtx(u32),
    /// Mason's kcryptd_async_io: the io thread of bios without `BIO_RW_SYNCIO`.
    AsyncIo,
    /// 5.8's `dmcrypt_write`: submits encrypted writes in sector order.
    DmcryptWrite,
    /// The submitting context of fake-gitk process `p` (its reads and its faults).
    ProcCtx(u32),
    /// The submitting context of reclaim's swap-out writes.
    SwapWriter,
}

/// What step a CPU task finishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::model) enum Step {
    Crypt(CryptOp),
    IoHop,
    InlineEncrypt,
    /// `dmcrypt_write` woke (one hop): it now takes the tree.
    WriteWake,
    /// A job's process ran its submission path (`crypt.submit_cost`): the bio now enters
    /// dm-crypt or the block layer.
    Submit,
    /// A thread (or the caller) submitted a dm-crypt clone to the disk's block layer
    /// (`crypt.clone_submit_cost`): the clone now enters the request queue.
    CloneSubmit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::model) enum ActorState {
    Idle,
    Cpu {
        bio: BioId,
        step: Step,
    },
    PoolWait {
        bio: BioId,
    },
    Backlog,
    /// Asleep on dm-crypt's `page_pool`, or napping after a partial clone.
    MemWait,
}

/// A write whose bounce pages an actor is still gathering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::model) struct Held {
    pub(in crate::model) bio: BioId,
    /// A partial clone was just split off: nap before going on.
    pub(in crate::model) nap: bool,
}

/// One thread.
#[derive(Debug)]
pub(in crate::model) struct Actor {
    pub(in crate::model) kind: ActorKind,
    pub(in crate::model) state: ActorState,
    pub(in crate::model) batch: BatchState,
    /// Bios waiting for this actor (kcryptd_io's list, or a context's pending submissions).
    pub(in crate::model) queue: VecDeque<BioId>,
    /// A write it is gathering bounce pages for (memory model only).
    pub(in crate::model) held: Option<Held>,
    /// Mason's io threads: the queue was empty when this bio was taken (its counter hit zero),
    /// so the disk is unplugged after the bio is submitted.
    pub(in crate::model) emptied: bool,
    /// `dmcrypt_write`'s rb-tree: encrypted writes keyed by (byte offset, arrival seq); the
    /// thread takes it whole into `queue`, in key order.
    pub(in crate::model) tree: BTreeMap<(u64, u64), BioId>,
    /// Arrival counter for `tree`'s keys (equal sectors keep arrival order).
    pub(in crate::model) tree_seq: u64,
    /// A job context's bios whose process has yet to run its submission path on a CPU
    /// (only with a nonzero `crypt.submit_cost`), in issue order.
    pub(in crate::model) syscalls: VecDeque<BioId>,
    /// The CPU it runs on (or last ran on): its home CPU until it first runs; a bound kcryptd
    /// worker's own CPU.
    pub(in crate::model) cpu: u32,
    /// A kcryptd worker: the CPU that queued its current item (where an unbound worker is
    /// woken: the completing CPU of a read, the submitting one of a write).
    pub(in crate::model) waker: u32,
}

impl Actor {
    pub(in crate::model) fn new(kind: ActorKind) -> Self {
        Actor {
            kind,
            state: ActorState::Idle,
            batch: BatchState::default(),
            queue: VecDeque::new(),
            held: None,
            emptied: false,
            tree: BTreeMap::new(),
            tree_seq: 0,
            syscalls: VecDeque::new(),
            cpu: 0,
            waker: 0,
        }
    }
}
