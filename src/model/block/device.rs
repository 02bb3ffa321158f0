//! The disk beneath dm-crypt: a service model with internal parallelism.
//!
//! Every device is an optional fixed delay (an infinite server: NVMe's base latency) followed by
//! `channels` servers fed in FIFO order from an internal queue. The device accepts at most
//! `queue_depth` requests; the block layer holds the rest. A request's service time comes from
//! the device kind:
//! - `hdd`: seek by distance from the head (`min + (full - min) * sqrt(d / capacity)`, none when
//!   the request starts where the last ended) + rotation (uniform over one revolution, none when
//!   sequential) + transfer;
//! - `nvme`: after the fixed latency, an exponentially distributed controller overhead (mean
//!   `overhead`) + transfer: flash channels, garbage collection and firmware make service times
//!   vary, which the seed fio run's spread shows;
//! - `generic`: any distribution, independent of size (what textbook validation uses).
//!
//! An HDD with `disks` > 1 is an **md RAID0 array** behind one HBA: a bio is cut at chunk
//! boundaries as `raid0_make_request` does, each piece goes to its member (chunk `c` to member
//! `c mod disks`, at member offset `(c / disks)·chunk` plus the offset within the chunk), and
//! pieces of one bio that fall on one member contiguously travel as one request (the member's
//! queue would merge them). Each member has its own head, its own FIFO and serves one piece at a
//! time; the bio completes when its last piece does. Channel `m` is member `m`.
//!
//! The randomness is the bio's own uniform draw ([`Bio::service_u`]), so a given bio costs the
//! same under every policy.
//!
//! An NVMe controller may also **pause** ([`NvmeStall`]): pauses start at Poisson times drawn
//! from the device's own stream (`device.stall`) and last a fixed length; during one the
//! bottleneck stage does no work, so a command in service finishes that much later and none
//! completes. The schedule of pauses depends on time alone, so every policy sees the same
//! pauses.

mod pauses;

use crate::engine::{RngStreams, SimDuration, SimTime};
use crate::model::base::bio::{Bio, BioId, BioSlab};
use crate::model::base::config::{DeviceConfig, HddConfig};
use pauses::Pauses;
use std::collections::{HashMap, VecDeque};

/// What the caller must schedule after a device call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceWake {
    /// The bio's fixed latency ends at this time: call [`Device::delay_done`].
    DelayDone(SimTime, BioId),
    /// Channel `chan` finishes its current request at this time: call [`Device::channel_done`].
    ChannelDone(SimTime, u32),
}

/// The wake-ups one [`Device::accept`] asks for: none, one, or (an array whose bio spans
/// several idle members) several.
#[derive(Debug, Default)]
pub struct Wakes {
    first: Option<DeviceWake>,
    more: Vec<DeviceWake>,
}

impl Iterator for Wakes {
    type Item = DeviceWake;
    fn next(&mut self) -> Option<DeviceWake> {
        self.first
            .take()
            .or_else(|| (!self.more.is_empty()).then(|| self.more.remove(0)))
    }
}

impl From<Option<DeviceWake>> for Wakes {
    fn from(first: Option<DeviceWake>) -> Wakes {
        Wakes {
            first,
            more: Vec::new(),
        }
    }
}

/// One piece of a bio on one member of an array.
#[derive(Debug, Clone, Copy)]
struct Piece {
    bio: BioId,
    /// Byte offset on the member.
    offset: u64,
    bytes: u64,
    /// The piece's uniform draw (its rotational delay).
    u: f64,
}

/// One drive of an array: its head and the pieces waiting for it.
#[derive(Debug, Default)]
struct Member {
    head: u64,
    queue: VecDeque<Piece>,
}

/// The pieces of a bio of `bytes` at array offset `offset` on `disks` members striped in
/// `chunk`-byte chunks (md RAID0's `map_sector` for one zone of equal members), pieces that are
/// contiguous on one member joined: `(member, member offset, bytes)`, in array order.
pub fn raid0_pieces(offset: u64, bytes: u64, disks: u32, chunk: u64) -> Vec<(u32, u64, u64)> {
    let (disks, chunk) = (u64::from(disks.max(1)), chunk.max(512));
    let mut out: Vec<(u32, u64, u64)> = Vec::new();
    let (mut at, end) = (offset, offset + bytes);
    while at < end {
        let c = at / chunk;
        let within = at % chunk;
        let len = (chunk - within).min(end - at);
        let member = (c % disks) as u32;
        let moff = (c / disks) * chunk + within;
        match out.iter_mut().find(|p| p.0 == member && p.1 + p.2 == moff) {
            Some(p) => p.2 += len,
            None => out.push((member, moff, len)),
        }
        at += len;
    }
    out
}

/// The device's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceEvent {
    /// A bio's fixed device latency ends.
    Delay {
        /// The bio.
        bio: BioId,
    },
    /// A device channel finishes its request.
    Done {
        /// Channel index.
        chan: u32,
    },
}

impl DeviceWake {
    /// The event to schedule, and when.
    pub fn event(self) -> (SimTime, DeviceEvent) {
        match self {
            DeviceWake::DelayDone(t, bio) => (t, DeviceEvent::Delay { bio }),
            DeviceWake::ChannelDone(t, chan) => (t, DeviceEvent::Done { chan }),
        }
    }
}

/// The device state.
#[derive(Debug)]
pub struct Device {
    config: DeviceConfig,
    queue_depth: u32,
    /// Requests on the device (delay, queue or service).
    inflight: u32,
    channels: Vec<Option<BioId>>,
    queue: VecDeque<BioId>,
    /// HDD head position (byte offset just past the last request).
    head: u64,
    busy_since: SimTime,
    busy_total: SimDuration,
    /// The controller's pauses, when it has any.
    pauses: Option<Pauses>,
    /// An array's members (empty for one disk).
    members: Vec<Member>,
    /// The piece each member is serving.
    serving: Vec<Option<Piece>>,
    /// Pieces still to finish, per bio on an array.
    pieces_left: HashMap<BioId, u32>,
}

impl Device {
    /// An idle device whose pauses, if its configuration has any, come from `streams`.
    pub fn seeded(config: &DeviceConfig, streams: &RngStreams) -> Self {
        let mut d = Device::new(config);
        if let DeviceConfig::Nvme(n) = config
            && n.stall.is_on()
        {
            d.pauses = Some(Pauses::new(n.stall, streams));
        }
        d
    }

    /// An idle device; an NVMe's pauses, if any, are those of seed 0, replication 0 (the model
    /// uses [`Device::seeded`]).
    pub fn new(config: &DeviceConfig) -> Self {
        let disks = match config {
            DeviceConfig::Hdd(h) if h.disks > 1 => h.disks,
            _ => 0,
        };
        let (channels, queue_depth) = match config {
            // An array takes every member's NCQ depth (bios counted, not pieces).
            DeviceConfig::Hdd(h) if disks > 1 => (disks, h.queue_depth.saturating_mul(disks)),
            DeviceConfig::Hdd(h) => (1, h.queue_depth),
            DeviceConfig::Nvme(n) => (n.channels, n.queue_depth),
            DeviceConfig::Generic(g) => (g.channels, g.queue_depth),
        };
        Device {
            config: config.clone(),
            queue_depth: queue_depth.max(1),
            inflight: 0,
            channels: vec![None; channels.max(1) as usize],
            queue: VecDeque::new(),
            head: 0,
            busy_since: SimTime::ZERO,
            busy_total: SimDuration::ZERO,
            pauses: None,
            members: (0..disks).map(|_| Member::default()).collect(),
            serving: vec![None; disks as usize],
            pieces_left: HashMap::new(),
        }
    }

    /// The drives of an array (1 for a single disk or any other device).
    pub fn disks(&self) -> usize {
        self.members.len().max(1)
    }

    /// The bio on each channel (`None`: idle), for a trace.
    pub fn channel_bios(&self) -> &[Option<BioId>] {
        &self.channels
    }

    /// Whether the device takes another request now.
    pub fn can_accept(&self) -> bool {
        self.inflight < self.queue_depth
    }

    /// Requests on the device.
    pub fn inflight(&self) -> u32 {
        self.inflight
    }

    /// Time with at least one request on the device, up to `now`.
    pub fn busy_time(&self, now: SimTime) -> SimDuration {
        if self.inflight > 0 {
            self.busy_total + now.since(self.busy_since)
        } else {
            self.busy_total
        }
    }

    /// Takes a request from the block layer; the caller schedules every wake-up returned.
    pub fn accept(&mut self, id: BioId, bios: &BioSlab, now: SimTime) -> Wakes {
        debug_assert!(self.can_accept());
        if self.inflight == 0 {
            self.busy_since = now;
        }
        self.inflight += 1;
        if !self.members.is_empty() {
            return self.accept_striped(id, &bios[id], now);
        }
        if let DeviceConfig::Nvme(n) = &self.config
            && !n.latency.is_zero()
        {
            return Some(DeviceWake::DelayDone(now + n.latency, id)).into();
        }
        self.enqueue(id, bios, now).into()
    }

    /// An array takes a bio: its pieces join their members' queues; idle members start.
    fn accept_striped(&mut self, id: BioId, bio: &Bio, now: SimTime) -> Wakes {
        let DeviceConfig::Hdd(h) = &self.config else {
            unreachable!("only HDD arrays have members")
        };
        let pieces = raid0_pieces(bio.offset, u64::from(bio.bytes), h.disks, h.chunk);
        self.pieces_left.insert(id, pieces.len() as u32);
        let mut wakes = Wakes::default();
        for (i, &(m, offset, bytes)) in pieces.iter().enumerate() {
            // Each piece's own rotational draw, spread from the bio's (golden-ratio steps).
            let u = (bio.service_u + i as f64 * 0.618_033_988_749_895).fract();
            let piece = Piece {
                bio: id,
                offset,
                bytes,
                u,
            };
            let m = m as usize;
            if self.serving[m].is_none() {
                let w = self.start_piece(m, piece, now);
                match wakes.first {
                    None => wakes.first = Some(w),
                    Some(_) => wakes.more.push(w),
                }
            } else {
                self.members[m].queue.push_back(piece);
            }
        }
        wakes
    }

    /// Member `m` starts serving `piece`.
    fn start_piece(&mut self, m: usize, piece: Piece, now: SimTime) -> DeviceWake {
        let DeviceConfig::Hdd(h) = &self.config else {
            unreachable!("only HDD arrays have members")
        };
        let head = &mut self.members[m].head;
        let service = hdd_service(h, head, piece.offset, piece.bytes, piece.u);
        self.serving[m] = Some(piece);
        self.channels[m] = Some(piece.bio);
        DeviceWake::ChannelDone(now + service, m as u32)
    }

    /// The fixed latency of `id` has elapsed: it joins the channel queue.
    pub fn delay_done(&mut self, id: BioId, bios: &BioSlab, now: SimTime) -> Option<DeviceWake> {
        self.enqueue(id, bios, now)
    }

    fn enqueue(&mut self, id: BioId, bios: &BioSlab, now: SimTime) -> Option<DeviceWake> {
        if let Some(chan) = self.channels.iter().position(Option::is_none) {
            Some(self.start(chan, id, &bios[id], now))
        } else {
            self.queue.push_back(id);
            None
        }
    }

    fn start(&mut self, chan: usize, id: BioId, bio: &Bio, now: SimTime) -> DeviceWake {
        self.channels[chan] = Some(id);
        let service = self.service_time(bio);
        let done = match &mut self.pauses {
            Some(p) => p.finish(now, service),
            None => now + service,
        };
        DeviceWake::ChannelDone(done, chan as u32)
    }

    /// Service time of `bio` given the current head position.
    fn service_time(&mut self, bio: &Bio) -> SimDuration {
        match &self.config {
            DeviceConfig::Hdd(h) => {
                let bytes = u64::from(bio.bytes);
                hdd_service(h, &mut self.head, bio.offset, bytes, bio.service_u)
            }
            DeviceConfig::Nvme(n) => {
                let overhead = -n.overhead.as_secs_f64() * (1.0 - bio.service_u).ln();
                SimDuration::from_secs_f64(overhead + f64::from(bio.bytes) / n.transfer_rate)
            }
            DeviceConfig::Generic(g) => g.service.quantile(bio.service_u),
        }
    }

    /// Channel `chan` finished: returns the finished bio (`None` when an array member finished
    /// a piece of a bio whose other pieces are still out) and, if another starts, its wake-up.
    pub fn channel_done(
        &mut self,
        chan: u32,
        bios: &BioSlab,
        now: SimTime,
    ) -> (Option<BioId>, Option<DeviceWake>) {
        let chan = chan as usize;
        if !self.members.is_empty() {
            return self.member_done(chan, now);
        }
        let done = self.channels[chan].take().expect("channel was idle");
        self.inflight -= 1;
        if self.inflight == 0 {
            self.busy_total += now.since(self.busy_since);
        }
        let next = self
            .queue
            .pop_front()
            .map(|id| self.start(chan, id, &bios[id], now));
        (Some(done), next)
    }

    /// Member `m` finished its piece: the bio is done if that was its last one.
    fn member_done(&mut self, m: usize, now: SimTime) -> (Option<BioId>, Option<DeviceWake>) {
        let piece = self.serving[m].take().expect("member was idle");
        self.channels[m] = None;
        let left = self
            .pieces_left
            .get_mut(&piece.bio)
            .expect("a piece of a bio the array holds");
        *left -= 1;
        let done = (*left == 0).then(|| {
            self.pieces_left.remove(&piece.bio);
            self.inflight -= 1;
            if self.inflight == 0 {
                self.busy_total += now.since(self.busy_since);
            }
            piece.bio
        });
        let next = self.members[m]
            .queue
            .pop_front()
            .map(|p| self.start_piece(m, p, now));
        (done, next)
    }
}

/// An HDD's service time for `bytes` at `offset` with its head at `*head` (moved past the
/// request): seek by distance + rotation (`u` of one revolution) + transfer; transfer alone when
/// the request starts where the head is.
fn hdd_service(h: &HddConfig, head: &mut u64, offset: u64, bytes: u64, u: f64) -> SimDuration {
    let dist = offset.abs_diff(*head);
    *head = offset + bytes;
    let transfer = bytes as f64 / h.transfer_rate;
    if dist == 0 {
        return SimDuration::from_secs_f64(transfer);
    }
    let frac = (dist as f64 / h.capacity.max(1) as f64).min(1.0).sqrt();
    let (min, full) = (h.seek_min.as_secs_f64(), h.seek_full.as_secs_f64());
    let seek = min + (full - min) * frac;
    let rotation = h.revolution.as_secs_f64() * u;
    SimDuration::from_secs_f64(seek + rotation + transfer)
}

#[cfg(test)]
mod tests;
