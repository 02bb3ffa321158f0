//! The receive path scripted by hand against a real zone.

use super::*;
use crate::engine::RngStreams;
use crate::model::testing;

const MSS: u32 = 1448;
/// A forced order-2 buffer's truesize: 16 KiB of data plus a 232-byte `struct sk_buff`.
const TRUESIZE: u32 = 16_384 + 232;

fn cfg(ring: u32) -> RxConfig {
    RxConfig {
        reader: 0,
        ring,
        mss: MSS,
        order: 2,
        truesize: TRUESIZE,
        rmem: [4096, 87_380, 2_097_152],
        rtt: SimDuration::from_ms(1),
        bandwidth: 1e6,
    }
}

fn mem() -> Mem {
    let cfg = testing::laptop_memory(256, 20.0, 1);
    Mem::new(&cfg, &RngStreams::new(1, 0), true)
}

fn at(ms: u64) -> SimTime {
    SimTime::from_ns(ms * 1_000_000)
}

/// `tcp_init()` for 512 MiB: `tcp_mem[1]` = 65536 pages, a socket's share 2 MiB.
#[test]
fn tcp_rmem_follows_tcp_init() {
    assert_eq!(tcp_rmem(131_072), [4096, 87_380, 2_097_152]);
    // 4 GiB: the share is capped at 4 MiB. 64 MiB: tcp_mem[1] = 64 × 64 / 2 = 2048 pages, a
    // share of 64 KiB, under the 87380-byte floor.
    assert_eq!(tcp_rmem(1 << 20)[2], 4 << 20);
    assert_eq!(tcp_rmem(16_384)[2], 87_380);
}

/// A reader that never reads: each segment charges 16616 bytes, the window's right edge
/// (hand-computed: 10136, 14480, 18824, 20272, …) stops at 14 segments, and from the sixth
/// segment on each arrival over `rcvbuf` grows it to what the queue holds (`tcp_clamp_window`).
/// The ring is refilled after every frame, so it stays full.
#[test]
fn a_reader_that_never_reads_closes_the_window_at_fourteen_segments() {
    let mut m = mem();
    let mut rx = RxPath::new("rx", &cfg(16), true);
    assert!(!rx.refill(&mut m, at(0)), "ample memory: no wake");
    assert_eq!(rx.filled(), 15, "one descriptor always stays unused");
    let mut edges = Vec::new();
    for i in 0..14 {
        let out = rx.send(&mut m, at(i));
        assert_eq!(out.sent, Sent::Queued, "segment {i}");
        edges.push(rx.right_edge);
        assert_eq!(rx.filled(), 15);
    }
    assert_eq!(&edges[..4], &[10_136, 14_480, 18_824, 20_272]);
    assert_eq!(rx.rcvbuf, 216_008);
    assert_eq!(rx.rcv_ssthresh, 17_376);
    assert_eq!(rx.send(&mut m, at(14)).sent, Sent::WindowClosed);
    assert!(rx.sender_blocked());
    assert_eq!(rx.queued(), 14);
    assert_eq!(rx.held_pages(), (15 + 14) * 4);
    assert_eq!(
        m.pages.atomic,
        (15 + 14) * 4,
        "the zone's books hold the same"
    );
    assert_eq!(rx.check(), None);
    // The reader copies the 14 segments out: their 56 pages go back and the window reopens.
    assert_eq!(rx.read(&mut m, at(20)), 14 * u64::from(MSS));
    assert_eq!(m.pages.atomic, 15 * 4);
    assert_eq!(rx.unblock(at(20)), Some(SimDuration::from_ms(6)));
    let o = rx.obs(at(20));
    assert_eq!((o.segments, o.window_closed, o.max_queued), (14, 1, 14));
    assert_eq!(o.window_closed_ns, 6_000_000);
    assert_eq!(rx.check(), None);
}

/// With no free memory the refill fails at its first allocation and the ring drains: a frame
/// with no buffer is lost at the NIC, and the sender's timeout doubles from 200 ms.
#[test]
fn an_empty_ring_drops_frames_and_the_sender_backs_off() {
    let mut m = mem();
    // Take every free block the atomic floor allows.
    while m.alloc(0, Gfp::Atomic, PageState::Atomic, at(0)).granted {}
    let mut rx = RxPath::new("rx", &cfg(4), true);
    rx.refill(&mut m, at(0));
    assert_eq!(rx.filled(), 0);
    assert_eq!(
        rx.obs(at(0)).refill_failures,
        1,
        "one failure per refill: it stops there"
    );
    assert_eq!(rx.send(&mut m, at(1)).sent, Sent::Lost(RTO_MIN));
    assert_eq!(
        rx.send(&mut m, at(201)).sent,
        Sent::Lost(SimDuration::from_ms(400))
    );
    let o = rx.obs(at(201));
    assert_eq!((o.ring_drops, o.segments), (2, 0));
    assert_eq!(rx.check(), None);
}

/// Autotuning: a reader that copies 64 KiB within one RTT makes the connection need 128 KiB of
/// space, and the receive buffer grows to 90 segments' worth (`rcvmem` = 1968 bytes each).
#[test]
fn autotuning_grows_the_buffer_from_what_one_rtt_copied() {
    let mut m = mem();
    let mut c = cfg(64);
    c.truesize = 2048;
    let mut rx = RxPath::new("rx", &c, true);
    rx.refill(&mut m, at(0));
    let mut sent = 0;
    while sent < 45 && rx.send(&mut m, at(0)).sent == Sent::Queued {
        sent += 1;
        rx.read(&mut m, at(0));
    }
    assert!(sent >= 45, "2 KiB buffers never close the window ({sent})");
    // One RTT after the start the reader has copied 45 segments.
    rx.read(&mut m, at(1));
    assert_eq!(rx.space, 2 * 45 * u64::from(MSS));
    assert_eq!(rx.rcvbuf, 90 * (u64::from(MSS) + RCVMEM_OVERHEAD));
    assert_eq!(rx.check(), None);
}
