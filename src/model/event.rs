//! The world's event: one variant per component, each holding that component's own event
//! type, so a handler can only be reached through the component that scheduled it.
//!
//! The calendar orders events by (time, insertion sequence) alone; the variant never affects
//! the order.

pub use super::block::BlockEvent;
pub use super::crypt::CryptEvent;
pub use super::cwait::CwEvent;
pub use super::device::DeviceEvent;
pub use super::pressure::MemEvent;
pub use super::recorder::RecEvent;
pub use super::workload::WorkloadEvent;

/// Everything that can happen, by the component it belongs to.
///
/// `repr(u32)` puts the component's event at an aligned offset after a 4-byte tag, so moving an
/// event out of the calendar is whole aligned loads and stores; with the default one-byte tag the
/// payload sat at offset 1 and its copies were overlapping 8- and 4-byte moves that stalled
/// store forwarding in the run loop (about 10 % of a run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Event {
    /// A fio job or a buffered writer ([`super::workload`]).
    Workload(WorkloadEvent),
    /// The CPU pool's earliest task finishes ([`super::cpu`]).
    CpuDone,
    /// The device ([`super::device`]).
    Device(DeviceEvent),
    /// The request queue ([`super::block`]).
    Block(BlockEvent),
    /// A `congestion_wait` sleeper ([`super::cwait`]).
    Cwait(CwEvent),
    /// The crypt threads and the async crypto engine ([`super::crypt`]).
    Crypt(CryptEvent),
    /// The memory processes: GFP_ATOMIC streams, kswapd, the mempool ([`super::pressure`]).
    Memory(MemEvent),
    /// Sampling and the warm-up gate ([`super::recorder`]).
    Recorder(RecEvent),
}
