//! The network receive path (Linux 2.6.32 `drivers/net/e1000e/netdev.c`, `net/core/skbuff.c`,
//! `net/ipv4/tcp.c`, `net/ipv4/tcp_input.c`, `net/ipv4/tcp_output.c`; `docs/model/memory.md`
//! §7a): a NIC's receive ring refilled with GFP_ATOMIC buffers, the TCP socket that holds the
//! received data until its process reads it, the receive window that closes the sender, and the
//! sender itself (a bandwidth-limited peer).
//!
//! Where the plain GFP_ATOMIC streams of [`crate::model::mm::atomic`] free each buffer after a
//! drawn holding time, a receive path holds its buffers for as long as the kernel would: in the
//! ring until a frame lands in them, then in the socket until the receiving process (a buffered
//! writer reading the socket, [`crate::model::workload`]) copies the data out. When that process
//! stalls, in direct reclaim or in `balance_dirty_pages()`, the socket fills up to what the
//! window and the receive buffer allow.
//!
//! The folder sits beside `crypt` and `workload`: it allocates from [`crate::model::mm`] and
//! schedules its own [`NetEvent`]; `world/net.rs` carries them out.

pub mod rx;

/// The receive paths' events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetEvent {
    /// The sender's next paced transmission, or its retransmission once the timeout ran out.
    Send {
        /// The receive path.
        path: u32,
    },
}
