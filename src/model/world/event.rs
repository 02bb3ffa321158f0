//! The world's event: one variant per component, each holding that component's own event
//! type, so a handler can only be reached through the component that scheduled it.
//!
//! The calendar orders events by (time, insertion sequence) alone; the variant never affects
//! the order.

pub use crate::model::block::device::DeviceEvent;
pub use crate::model::block::queue::BlockEvent;
pub use crate::model::crypt::engine::CryptEvent;
pub use crate::model::mm::cwait::CwEvent;
pub use crate::model::mm::pressure::MemEvent;
pub use crate::model::net::NetEvent;
pub use crate::model::observe::recorder::RecEvent;
pub use crate::model::workload::WorkloadEvent;

/// Everything that can happen, by the component it belongs to.
///
/// `repr(u32)` puts the component's event at an aligned offset after a 4-byte tag, so moving an
/// event out of the calendar is whole aligned loads and stores; with the default one-byte tag the
/// payload sat at offset 1 and its copies were overlapping 8- and 4-byte moves that stalled
/// store forwarding in the run loop (about 10 % of a run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Event {
    /// A fio job or a buffered writer ([`crate::model::workload`]).
    Workload(WorkloadEvent),
    /// The CPU pool's earliest task finishes ([`crate::model::cpu`]).
    CpuDone,
    /// The device ([`crate::model::block::device`]).
    Device(DeviceEvent),
    /// The request queue ([`crate::model::block::queue`]).
    Block(BlockEvent),
    /// A `congestion_wait` sleeper ([`crate::model::mm::cwait`]).
    Cwait(CwEvent),
    /// The crypt threads and the async crypto engine ([`crate::model::crypt::engine`]).
    Crypt(CryptEvent),
    /// The memory processes: GFP_ATOMIC streams, kswapd, the mempool ([`crate::model::mm::pressure`]).
    Memory(MemEvent),
    /// The TCP receive paths' senders ([`crate::model::net`]).
    Net(NetEvent),
    /// Sampling and the warm-up gate ([`crate::model::observe::recorder`]).
    Recorder(RecEvent),
}

/// Each component schedules its own event type on a `Scheduler<E>` for any `E` that can carry
/// it, so no component names the world's [`Event`]: these conversions are the routing table's
/// entry points.
macro_rules! carries {
    ($($variant:ident($ty:ty)),* $(,)?) => {$(
        impl From<$ty> for Event {
            fn from(e: $ty) -> Event {
                Event::$variant(e)
            }
        }
    )*};
}

carries!(
    Workload(WorkloadEvent),
    Device(DeviceEvent),
    Block(BlockEvent),
    Cwait(CwEvent),
    Crypt(CryptEvent),
    Memory(MemEvent),
    Net(NetEvent),
    Recorder(RecEvent),
);
