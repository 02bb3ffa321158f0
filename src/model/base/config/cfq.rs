//! CFQ's version rules: what `block/cfq-iosched.c` does differently from one kernel to the
//! next, derived from `kernel.version` (docs/model/block.md §5).

use serde::{Deserialize, Serialize};

/// `cfq_back_max`: a request up to 16 MiB (in 512-byte sectors) behind the head may be chosen
/// by a back seek (the same in 2.6.30 to 2.6.33).
pub const CFQ_BACK_MAX_SECTORS: u64 = 16 * 1024 * 2;
/// `cfq_back_penalty`: a back seek counts this many times its distance.
pub const CFQ_BACK_PENALTY: u64 = 2;

/// `cfq_fifo_expire`: how many jiffies a request waits before the FIFO takes it out of sector
/// order, HZ/8 for sync and HZ/4 for async (the same in 2.6.30 to 2.6.33).
pub fn cfq_fifo_expire(hz: u32, sync: bool) -> u32 {
    if sync { hz / 8 } else { hz / 4 }
}

/// The version-derived rules of CFQ that differ between 2.6.30 and 2.6.33
/// (docs/model/block.md §5). Not settable: they follow `kernel.version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CfqRules {
    /// The `low_latency` tunable exists (2.6.32+); before it, `block.low_latency` is refused.
    pub has_low_latency: bool,
    /// `cfq_may_dispatch`: a sync queue with an idle window waits until no async request is in
    /// the driver (2.6.32+).
    pub drain_async_before_sync: bool,
    /// `cfq_update_idle_window`: a seeky sync queue on an NCQ disk keeps its idle window when
    /// `low_latency` is on (2.6.32); 2.6.31 drops it whenever the disk is NCQ.
    pub seeky_idle_with_latency: bool,
    /// The async ramp counts from the last sync request that took at least the sync FIFO expiry
    /// (HZ/8) from allocation to completion (`last_delayed_sync`, 2.6.33), not from the last
    /// sync completion (`last_end_sync_rq`, 2.6.32).
    pub ramp_from_delayed_sync: bool,
    /// With `low_latency`, a new slice is scaled so that every busy queue's slice fits into
    /// `cfq_target_latency` = 300 ms (`cfq_set_prio_slice`, 2.6.33).
    pub target_latency: bool,
    /// `cfq_should_idle` (2.6.33): a sync queue that is the last of its service tree idles
    /// whatever its seek pattern, for the full `slice_idle`; qsim keeps no per-workload service
    /// trees, so it takes every sync queue to be the last of its tree.
    pub lone_sync_queue_idles: bool,
    /// `cfq_dispatch_insert`: every dispatch re-chooses the queue's next request from the
    /// dispatched one's neighbours in sector order (2.6.32+); before, the next request is
    /// re-chosen only when it is itself the one dispatched (a FIFO-expired request leaves it).
    pub next_after_each_dispatch: bool,
    /// `cfq_arm_slice_timer`: no idling when the context's mean think time exceeds what is
    /// left of the slice (2.6.32+).
    pub idle_within_slice_only: bool,
    /// `cfq_update_io_seektime(cfqd, cic, rq)`: the seek statistics belong to the io context
    /// and every request of it, async ones included, moves them (2.6.30 to 2.6.32); 2.6.33
    /// keeps them per queue (`cfqq->seek_*`), so only the sync queue's own requests count.
    pub seek_per_context: bool,
    /// `cfq_may_dispatch`: the one busy queue, at its quantum, may go on without limit
    /// (2.6.33); before, up to 4 × quantum.
    pub sole_queue_unlimited: bool,
    /// `cfq_close_cooperator` and `cfq_rq_close` (2.6.30 to 2.6.32): every busy queue is filed
    /// by its next request's sector (`prio_trees`); when the active queue runs empty, a queue
    /// whose next request lies within the active io context's mean seek distance of the head
    /// takes the disk instead of idling, and a new request that close preempts an idling
    /// queue. 2.6.33 rewrote the rule into the merging of cooperating sync queues, which qsim
    /// does not model.
    pub close_cooperator: bool,
    /// `cfq_should_preempt` (2.6.32): a close request's queue preempts only if it is not
    /// already marked as a cooperator (or is the one busy queue), and is then marked one
    /// (`coop`, `coop_preempt`).
    pub coop_preempt_marks: bool,
}
