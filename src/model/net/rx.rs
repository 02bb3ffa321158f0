//! One TCP receive path: the NIC's ring, the socket's receive queue and window, and the paced
//! sender at the other end of the wire (`docs/model/memory.md` §7a).
//!
//! ```text
//! sender ─(paced: mss / bandwidth; stops while the window is closed)─► ring descriptor
//!   no filled descriptor: the NIC drops the frame, the sender retransmits after its RTO
//!   ├─► socket: rmem_alloc > rcvbuf → tcp_prune_queue: rcvbuf grows to rmem_alloc (≤ rmem[2]);
//!   │     still over → the segment is dropped (and retransmitted after the RTO)
//!   │   queued: rmem_alloc += truesize, rcv_ssthresh grows (tcp_grow_window), the right edge
//!   │     of the window moves to rcv_nxt + window (never left)
//!   └─► NAPI poll's end: every empty descriptor refilled with a GFP_ATOMIC buffer of `order`,
//!         stopping at the first failure ("better luck next round": the next poll retries)
//! reader (the process): copies out every queued segment, freeing its buffer; the window
//!   reopens, and once an RTT has passed autotuning may grow rcvbuf (tcp_rcv_space_adjust)
//! ```
//!
//! Delivery is instantaneous (a LAN's wire time is far below the 1.4 ms between 1 MB/s
//! segments), so a segment the sender sends is in the ring at once and nothing is in flight on
//! the wire: the sender may send exactly while the advertised right edge lies a whole segment
//! beyond what it has sent.

use crate::engine::{SimDuration, SimTime};
use crate::model::base::config::RxConfig;
use crate::model::base::obs::RxObs;
use crate::model::mm::memory::{Gfp, Mem, PageState};

/// `TCP_RTO_MIN` (HZ/5): the retransmission timeout of a LAN connection.
pub const RTO_MIN: SimDuration = SimDuration::from_ms(200);
/// `TCP_RTO_MAX`: the backed-off timeout's ceiling.
pub const RTO_MAX: SimDuration = SimDuration::from_secs(120);
/// Segments the initial window offers (`tcp_select_initial_window`: 4 for an MSS ≤ 1460).
pub const INIT_WINDOW_SEGMENTS: u64 = 4;
/// The initial window clamp: 64 KiB − 1 (`tcp_full_space` of the default `tcp_rmem[1]`).
pub const INIT_WINDOW_CLAMP: u64 = 65_535;
/// Bytes autotuning charges per segment (`tcp_rcv_space_adjust`'s `rcvmem`): the MSS plus
/// `MAX_TCP_HEADER` (272 with a distribution kernel's tunnels and wireless headers), 16, and
/// `sizeof(struct sk_buff)` (232 on x86-64), less the MSS.
pub const RCVMEM_OVERHEAD: u64 = 272 + 16 + 232;

/// What the sender's transmission came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    /// The segment is in the socket's receive queue.
    Queued,
    /// The window is closed: the sender waits for the reader to open it.
    WindowClosed,
    /// The frame was dropped (no ring buffer, or the socket over its buffer): the sender
    /// retransmits after this timeout.
    Lost(SimDuration),
}

/// The outcome of one transmission, and whether a refill asked for kswapd (at the ring's
/// order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendOutcome {
    /// What happened to the segment.
    pub sent: Sent,
    /// A refill allocation missed the fast path.
    pub wake_kswapd: bool,
}

/// `tcp_win_from_space` with 2.6.32's `tcp_adv_win_scale` of 2: three quarters of a buffer
/// space can be offered as window.
pub fn win_from_space(space: u64) -> u64 {
    space - space / 4
}

/// `tcp_rmem` as 2.6.32's `tcp_init()` sets it for a machine with `ram_pages` pages of low
/// memory: the pressure threshold `tcp_mem[1]` (half the memory at 256 MiB, falling as a
/// fraction above), a socket's share 1/128 of it in bytes, at most 4 MiB.
pub fn tcp_rmem(ram_pages: u64) -> [u64; 3] {
    let pages_per_mib = 1 << (20 - 12);
    let limit = ram_pages.min(1 << (28 - 12)) / pages_per_mib;
    let limit = ((limit * (ram_pages / pages_per_mib)) >> (12 - 11)).max(128);
    let max_share = (4 << 20).min(limit << (12 - 7));
    [4096, 87_380, max_share.max(87_380)]
}

/// One receive path's state.
#[derive(Debug)]
pub struct RxPath {
    cfg: RxConfig,
    /// The time between two paced transmissions, from the configuration once.
    pace: SimDuration,
    /// Descriptors holding a buffer.
    filled: u32,
    /// Segments in the socket's receive queue, each holding one buffer.
    queued: u32,
    /// `sk_rmem_alloc`: the queue's truesize, bytes.
    rmem_alloc: u64,
    /// `sk_rcvbuf`, bytes.
    rcvbuf: u64,
    rcv_ssthresh: u64,
    window_clamp: u64,
    /// The highest sequence the receiver has offered (`rcv_wup + rcv_wnd`); it never moves left.
    right_edge: u64,
    /// Bytes received in order (the sender's `snd_nxt` too: nothing is on the wire).
    rcv_nxt: u64,
    /// Bytes the reader copied out.
    copied: u64,
    /// Autotuning: the space measured so far, where its period started, and when.
    space: u64,
    space_seq: u64,
    space_time: SimTime,
    /// The sender waits for the window since then.
    blocked_since: Option<SimTime>,
    /// Consecutive losses of the same segment (the RTO's backoff).
    backoff: u32,
    measuring: bool,
    obs: RxObs,
}

impl RxPath {
    /// The path of `cfg`, with an empty ring and socket; `measuring` is false while a warm-up
    /// runs.
    pub fn new(name: &str, cfg: &RxConfig, measuring: bool) -> RxPath {
        let mss = u64::from(cfg.mss);
        RxPath {
            cfg: cfg.clone(),
            pace: SimDuration::from_secs_f64(f64::from(cfg.mss) / cfg.bandwidth),
            filled: 0,
            queued: 0,
            rmem_alloc: 0,
            rcvbuf: cfg.rmem[1],
            rcv_ssthresh: INIT_WINDOW_SEGMENTS * mss,
            window_clamp: INIT_WINDOW_CLAMP.min(win_from_space(cfg.rmem[1])),
            right_edge: INIT_WINDOW_SEGMENTS * mss,
            rcv_nxt: 0,
            copied: 0,
            space: INIT_WINDOW_SEGMENTS * mss,
            space_seq: 0,
            space_time: SimTime::ZERO,
            blocked_since: None,
            backoff: 0,
            measuring,
            obs: RxObs {
                name: name.to_string(),
                max_rcvbuf: cfg.rmem[1],
                ..RxObs::default()
            },
        }
    }

    /// The configuration.
    pub fn cfg(&self) -> &RxConfig {
        &self.cfg
    }

    /// Descriptors the ring can hold buffers in: one always stays unused so that the ring's
    /// head never meets its tail (`e1000_desc_unused`).
    pub fn capacity(&self) -> u32 {
        self.cfg.ring.saturating_sub(1)
    }

    /// Descriptors holding a buffer.
    pub fn filled(&self) -> u32 {
        self.filled
    }

    /// Segments waiting in the socket.
    pub fn queued(&self) -> u32 {
        self.queued
    }

    /// Pages the path holds (ring and socket).
    pub fn held_pages(&self) -> u64 {
        u64::from(self.filled + self.queued) << self.cfg.order
    }

    /// The time between two paced transmissions.
    pub fn pace(&self) -> SimDuration {
        self.pace
    }

    /// Whether the sender is waiting for the window.
    pub fn sender_blocked(&self) -> bool {
        self.blocked_since.is_some()
    }

    /// The warm-up ended at `now`: counting starts, and a sender already waiting for the window
    /// is counted as waiting from `now`.
    pub fn start_measuring(&mut self, now: SimTime) {
        self.measuring = true;
        if let Some(since) = &mut self.blocked_since {
            *since = now;
        }
    }

    /// What the path measured, with the time the sender is still waiting counted up to `now`.
    pub fn obs(&self, now: SimTime) -> RxObs {
        let mut o = self.obs.clone();
        if let (Some(since), true) = (self.blocked_since, self.measuring) {
            o.window_closed_ns += now.saturating_since(since).as_ns();
        }
        o
    }

    /// The NAPI poll's refill: a GFP_ATOMIC buffer for every empty descriptor, stopping at the
    /// first failure. Returns whether an allocation asked for kswapd.
    pub fn refill(&mut self, mem: &mut Mem, now: SimTime) -> bool {
        let mut wake = false;
        while self.filled < self.capacity() {
            let got = mem.alloc(self.cfg.order, Gfp::Atomic, PageState::Atomic, now);
            wake |= got.wake_kswapd;
            if !got.granted {
                if self.measuring {
                    self.obs.refill_failures += 1;
                }
                break;
            }
            self.filled += 1;
        }
        wake
    }

    /// The window the receiver offers now (`__tcp_select_window`): the free receive space as
    /// window, capped by `rcv_ssthresh`, in whole segments; nothing below one segment.
    fn select_window(&self) -> u64 {
        let mss = u64::from(self.cfg.mss);
        let free = win_from_space(self.rcvbuf.saturating_sub(self.rmem_alloc));
        if free < mss {
            return 0;
        }
        free.min(self.rcv_ssthresh) / mss * mss
    }

    /// Offers the current window: the right edge moves right or stays (RFC 793: a receiver
    /// does not shrink the window it offered).
    fn advertise(&mut self) {
        self.right_edge = self.right_edge.max(self.rcv_nxt + self.select_window());
    }

    /// Whether the window lets the sender put one more segment on the wire.
    pub fn window_open(&self) -> bool {
        self.rcv_nxt + u64::from(self.cfg.mss) <= self.right_edge
    }

    /// `tcp_grow_window` after a queued segment: `rcv_ssthresh` grows by two segments while it
    /// is below the clamp and the free space, provided a buffer this heavy would still fit
    /// (`__tcp_grow_window`'s halving test against `tcp_rmem[2]`).
    fn grow_window(&mut self) {
        let mss = u64::from(self.cfg.mss);
        let free = win_from_space(self.rcvbuf.saturating_sub(self.rmem_alloc));
        if self.rcv_ssthresh >= self.window_clamp || self.rcv_ssthresh >= free {
            return;
        }
        let truesize = u64::from(self.cfg.truesize);
        let incr = if win_from_space(truesize) <= mss {
            2 * mss
        } else {
            let mut t = win_from_space(truesize) >> 1;
            let mut w = win_from_space(self.cfg.rmem[2]) >> 1;
            let mut incr = 0;
            while self.rcv_ssthresh <= w {
                if t <= mss {
                    incr = 2 * mss;
                    break;
                }
                t >>= 1;
                w >>= 1;
            }
            incr
        };
        self.rcv_ssthresh = (self.rcv_ssthresh + incr).min(self.window_clamp);
    }

    /// `tcp_prune_queue`'s first step (`tcp_clamp_window`): the receive buffer grows to what the
    /// queue holds, up to `tcp_rmem[2]`; a queue still over it resets `rcv_ssthresh` to two
    /// segments. Collapsing the queue into compact buffers is not modelled. Returns whether the
    /// segment may be queued.
    fn prune(&mut self) -> bool {
        if self.rcvbuf < self.cfg.rmem[2] {
            self.rcvbuf = self.rmem_alloc.min(self.cfg.rmem[2]);
            if self.measuring {
                self.obs.max_rcvbuf = self.obs.max_rcvbuf.max(self.rcvbuf);
            }
        }
        if self.rmem_alloc > self.rcvbuf {
            self.rcv_ssthresh = self.window_clamp.min(2 * u64::from(self.cfg.mss));
            return false;
        }
        true
    }

    /// The retransmission timeout after `backoff` consecutive losses.
    fn rto(&self) -> SimDuration {
        let t = RTO_MIN.as_ns().saturating_mul(1 << self.backoff.min(20));
        SimDuration::from_ns(t.min(RTO_MAX.as_ns()))
    }

    /// The sender transmits its next segment at `now`; the NIC takes it into a filled
    /// descriptor, the stack queues it on the socket, and the poll refills the ring.
    pub fn send(&mut self, mem: &mut Mem, now: SimTime) -> SendOutcome {
        if !self.window_open() {
            if self.blocked_since.is_none() {
                self.blocked_since = Some(now);
                if self.measuring {
                    self.obs.window_closed += 1;
                }
            }
            return SendOutcome {
                sent: Sent::WindowClosed,
                wake_kswapd: false,
            };
        }
        if self.filled == 0 {
            // No buffer to DMA into: the frame is lost at the NIC.
            if self.measuring {
                self.obs.ring_drops += 1;
            }
            return self.lost();
        }
        self.filled -= 1;
        if self.rmem_alloc > self.rcvbuf && !self.prune() {
            mem.free(self.cfg.order, PageState::Atomic);
            if self.measuring {
                self.obs.socket_drops += 1;
            }
            let wake = self.refill(mem, now);
            let mut out = self.lost();
            out.wake_kswapd = wake;
            return out;
        }
        self.queued += 1;
        self.rmem_alloc += u64::from(self.cfg.truesize);
        self.rcv_nxt += u64::from(self.cfg.mss);
        self.backoff = 0;
        self.grow_window();
        self.advertise();
        if self.measuring {
            self.obs.segments += 1;
            self.obs.max_queued = self.obs.max_queued.max(self.queued);
            self.obs.max_held_pages = self.obs.max_held_pages.max(self.held_pages());
        }
        let wake = self.refill(mem, now);
        SendOutcome {
            sent: Sent::Queued,
            wake_kswapd: wake,
        }
    }

    fn lost(&mut self) -> SendOutcome {
        let rto = self.rto();
        self.backoff += 1;
        SendOutcome {
            sent: Sent::Lost(rto),
            wake_kswapd: false,
        }
    }

    /// The reader copies every queued segment out at `now` (each buffer is freed), the window
    /// reopens and autotuning looks at the last RTT. Returns the payload bytes read.
    pub fn read(&mut self, mem: &mut Mem, now: SimTime) -> u64 {
        let n = self.queued;
        for _ in 0..n {
            mem.free(self.cfg.order, PageState::Atomic);
        }
        self.queued = 0;
        self.rmem_alloc = 0;
        let bytes = u64::from(n) * u64::from(self.cfg.mss);
        self.copied += bytes;
        self.space_adjust(now);
        self.advertise();
        bytes
    }

    /// `tcp_rcv_space_adjust`: once per RTT, twice what the reader copied in it becomes the
    /// space the connection needs, and the receive buffer grows to hold that many segments.
    fn space_adjust(&mut self, now: SimTime) {
        if now.saturating_since(self.space_time) < self.cfg.rtt {
            return;
        }
        let space = self.space.max(2 * (self.copied - self.space_seq));
        if space != self.space {
            self.space = space;
            let mss = u64::from(self.cfg.mss);
            let segments = (space / mss).max(1);
            let want = (segments * (mss + RCVMEM_OVERHEAD)).min(self.cfg.rmem[2]);
            if want > self.rcvbuf {
                self.rcvbuf = want;
                self.window_clamp = space;
            }
        }
        self.space_seq = self.copied;
        self.space_time = now;
        if self.measuring {
            self.obs.max_rcvbuf = self.obs.max_rcvbuf.max(self.rcvbuf);
        }
    }

    /// The reader opened the window for a waiting sender: how long it waited.
    pub fn unblock(&mut self, now: SimTime) -> Option<SimDuration> {
        if !self.window_open() {
            return None;
        }
        let since = self.blocked_since.take()?;
        let waited = now.saturating_since(since);
        if self.measuring {
            self.obs.window_closed_ns += waited.as_ns();
        }
        Some(waited)
    }

    /// The path's books: what the ring and socket hold agrees with the counts, and every
    /// segment received was read or still waits. `None` when they agree.
    pub fn check(&self) -> Option<String> {
        let mss = u64::from(self.cfg.mss);
        if self.filled > self.capacity() {
            return Some(format!(
                "{}: {} buffers in a ring of {}",
                self.obs.name,
                self.filled,
                self.capacity()
            ));
        }
        if self.rmem_alloc != u64::from(self.queued) * u64::from(self.cfg.truesize) {
            return Some(format!(
                "{}: rmem_alloc {} for {} queued segments",
                self.obs.name, self.rmem_alloc, self.queued
            ));
        }
        if self.rcv_nxt != self.copied + u64::from(self.queued) * mss {
            return Some(format!(
                "{}: received {} B, read {} B, {} segments queued",
                self.obs.name, self.rcv_nxt, self.copied, self.queued
            ));
        }
        None
    }
}

/// The scenario's receive paths: every `memory.atomic` stream a process reads, in order.
pub fn paths(sc: &crate::model::base::config::Scenario) -> Vec<RxPath> {
    let Some(m) = &sc.memory else {
        return Vec::new();
    };
    m.atomic
        .iter()
        .filter_map(|a| Some(RxPath::new(&a.name, a.rx.as_ref()?, sc.warmup.is_zero())))
        .collect()
}

#[cfg(test)]
mod tests;
