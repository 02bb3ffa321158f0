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

use crate::engine::{RngStreams, SimDuration, SimRng, SimTime};
use crate::model::base::bio::{Bio, BioId, BioSlab};
use crate::model::base::config::{DeviceConfig, HddConfig, NvmeStall};
use rand::RngExt;
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

/// The controller's pause schedule, drawn lazily: the pauses that may still matter, in time
/// order (`(start, end)`), and the stream the next gaps come from.
#[derive(Debug)]
struct Pauses {
    cfg: NvmeStall,
    rng: SimRng,
    /// Pauses not yet over at the last query, oldest first; the last one is the latest drawn.
    ahead: VecDeque<(SimTime, SimTime)>,
    /// End of the latest pause drawn (the next gap starts there).
    drawn_to: SimTime,
}

impl Pauses {
    fn new(cfg: NvmeStall, streams: &RngStreams) -> Pauses {
        Pauses {
            cfg,
            rng: streams.stream("device.stall"),
            ahead: VecDeque::new(),
            drawn_to: SimTime::ZERO,
        }
    }

    /// Draws the next pause: an exponential gap after the last one, then its length.
    fn draw(&mut self) {
        let u: f64 = self.rng.random();
        let gap = SimDuration::from_secs_f64(-self.cfg.interval.as_secs_f64() * (1.0 - u).ln());
        let start = self.drawn_to + gap;
        let end = start + self.cfg.length;
        self.ahead.push_back((start, end));
        self.drawn_to = end;
    }

    /// When work of `work` that starts at `start` is done, the pauses on the way excluded:
    /// it waits out a pause it starts in and stops for every pause that begins before it ends.
    /// `start` never decreases from one call to the next (it is the simulated clock).
    fn finish(&mut self, start: SimTime, work: SimDuration) -> SimTime {
        while self.ahead.front().is_some_and(|&(_, end)| end <= start) {
            self.ahead.pop_front();
        }
        let (mut t, mut left) = (start, work);
        let mut i = 0;
        loop {
            if i == self.ahead.len() {
                self.draw();
            }
            let (a, b) = self.ahead[i];
            if a <= t {
                t = t.max(b);
            } else if t + left <= a {
                return t + left;
            } else {
                left = left.saturating_sub(a.since(t));
                t = b;
            }
            i += 1;
        }
    }
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
mod tests {
    use super::*;
    use crate::model::base::bio::{Dir, Origin};
    use crate::model::base::config::{Distribution, GenericDeviceConfig};

    fn hdd() -> DeviceConfig {
        DeviceConfig::Hdd(HddConfig {
            preset: "test".into(),
            seek_min: SimDuration::from_ms(2),
            seek_full: SimDuration::from_ms(20),
            revolution: SimDuration::from_ms(10),
            transfer_rate: 100e6,
            capacity: 100_000_000_000,
            queue_depth: 1,
            disks: 1,
            chunk: 0,
        })
    }

    #[test]
    fn hdd_sequential_requests_pay_only_transfer() {
        let mut d = Device::new(&hdd());
        let mut bios = BioSlab::default();
        let t = SimTime::ZERO;
        let mut b = Bio::new(Dir::Write, false, 1_000_000, 0, Origin::Job(0), t);
        b.service_u = 0.5;
        let id = bios.insert(b);
        // Head starts at 0 and the request starts at 0: sequential.
        assert_eq!(
            d.accept(id, &bios, t).next(),
            Some(DeviceWake::ChannelDone(SimTime::from_ns(10_000_000), 0))
        );
        assert!(!d.can_accept());
    }

    #[test]
    fn hdd_full_stroke_pays_seek_rotation_transfer() {
        let mut d = Device::new(&hdd());
        let mut bios = BioSlab::default();
        let t = SimTime::ZERO;
        let mut b = Bio::new(Dir::Read, true, 100_000, 100_000_000_000, Origin::Job(0), t);
        b.service_u = 0.5;
        let id = bios.insert(b);
        // 20 ms seek + 5 ms rotation + 1 ms transfer.
        assert_eq!(
            d.accept(id, &bios, t).next(),
            Some(DeviceWake::ChannelDone(SimTime::from_ns(26_000_000), 0))
        );
    }

    /// A scripted pause schedule: pauses at [10, 22) µs and [50, 62) µs.
    fn paused() -> Pauses {
        let mut p = Pauses::new(
            NvmeStall {
                interval: SimDuration::from_secs(1000),
                length: SimDuration::from_us(12),
            },
            &RngStreams::new(1, 0),
        );
        let us = |x| SimTime::ZERO + SimDuration::from_us(x);
        p.ahead = VecDeque::from([(us(10), us(22)), (us(50), us(62))]);
        p.drawn_to = us(62);
        p
    }

    #[test]
    fn a_pause_stops_the_work_in_service_and_delays_what_starts_in_it() {
        let us = |x| SimTime::ZERO + SimDuration::from_us(x);
        let mut p = paused();
        // Done before the pause: untouched; ending exactly at its start: untouched.
        assert_eq!(p.finish(us(0), SimDuration::from_us(5)), us(5));
        assert_eq!(p.finish(us(5), SimDuration::from_us(5)), us(10));
        // Spanning it: 4 µs before, 12 µs paused, 3 µs after.
        assert_eq!(p.finish(us(6), SimDuration::from_us(7)), us(25));
        // Starting inside it: waits for its end.
        assert_eq!(p.finish(us(15), SimDuration::from_us(5)), us(27));
        // Spanning both pauses: 28 µs of work from 22 µs ends after the second.
        assert_eq!(p.finish(us(22), SimDuration::from_us(30)), us(64));
        // Past pauses are dropped; later ones are drawn from the stream.
        assert!(p.finish(us(70), SimDuration::from_us(1)) >= us(71));
        assert!(p.ahead.front().is_some_and(|&(a, _)| a > us(62)));
    }

    #[test]
    fn pauses_come_at_the_configured_rate_and_length() {
        let stall = NvmeStall {
            interval: SimDuration::from_ms(100),
            length: SimDuration::from_ms(5),
        };
        let mut p = Pauses::new(stall, &RngStreams::new(7, 3));
        for _ in 0..2000 {
            p.draw();
        }
        let (first, last) = (p.ahead[0], p.ahead[1999]);
        assert!(p.ahead.iter().all(|&(a, b)| b.since(a) == stall.length));
        // 1999 gaps of 100 ms mean (plus 5 ms pauses): within 10 %.
        let mean = last.0.since(first.0).as_secs_f64() / 1999.0;
        assert!((mean - 0.105).abs() < 0.0105, "{mean}");
        // The device draws its schedule from its own stream: same seed, same pauses.
        let mut q = Pauses::new(stall, &RngStreams::new(7, 3));
        q.draw();
        assert_eq!(q.ahead[0], first);
    }

    #[test]
    fn generic_channels_serve_in_parallel_then_queue() {
        let cfg = DeviceConfig::Generic(GenericDeviceConfig {
            service: Distribution::Deterministic {
                value: SimDuration::from_us(10),
            },
            channels: 2,
            queue_depth: 8,
        });
        let mut d = Device::new(&cfg);
        let mut bios = BioSlab::default();
        let t = SimTime::ZERO;
        let ids: Vec<_> = (0..3)
            .map(|_| bios.insert(Bio::new(Dir::Read, true, 4096, 0, Origin::Job(0), t)))
            .collect();
        assert!(d.accept(ids[0], &bios, t).next().is_some());
        assert!(d.accept(ids[1], &bios, t).next().is_some());
        assert_eq!(d.accept(ids[2], &bios, t).next(), None);
        let t1 = SimTime::from_ns(10_000);
        let (done, next) = d.channel_done(0, &bios, t1);
        assert_eq!(done, Some(ids[0]));
        assert_eq!(
            next,
            Some(DeviceWake::ChannelDone(SimTime::from_ns(20_000), 0))
        );
        assert_eq!(d.inflight(), 2);
        assert_eq!(d.busy_time(t1).as_ns(), 10_000);
    }

    fn array(disks: u32, chunk: u64) -> DeviceConfig {
        let DeviceConfig::Hdd(mut h) = hdd() else {
            unreachable!()
        };
        h.disks = disks;
        h.chunk = chunk;
        h.queue_depth = 4;
        DeviceConfig::Hdd(h)
    }

    #[test]
    fn raid0_cuts_at_chunks_and_joins_what_is_contiguous_on_a_member() {
        let k = 1024;
        // 512 KiB from 0 over 4 disks of 128 KiB chunks: one chunk each.
        assert_eq!(
            raid0_pieces(0, 512 * k, 4, 128 * k),
            [
                (0, 0, 128 * k),
                (1, 0, 128 * k),
                (2, 0, 128 * k),
                (3, 0, 128 * k)
            ]
        );
        // From 64 KiB into chunk 1: the rest of disk 1's chunk, then disk 2's.
        assert_eq!(
            raid0_pieces(192 * k, 128 * k, 4, 128 * k),
            [(1, 64 * k, 64 * k), (2, 0, 64 * k)]
        );
        // Two disks, 1 MiB of 256 KiB chunks: chunks 0 and 2 are contiguous on disk 0.
        assert_eq!(
            raid0_pieces(0, 1024 * k, 2, 256 * k),
            [(0, 0, 512 * k), (1, 0, 512 * k)]
        );
        // Stripe row 3 of 4 disks lies at 3 chunks into each member.
        assert_eq!(
            raid0_pieces(13 * 64 * k, 4096, 4, 64 * k),
            [(1, 3 * 64 * k, 4096)]
        );
    }

    #[test]
    fn an_array_serves_the_pieces_of_one_bio_on_its_members_at_once() {
        let k = 1024;
        let mut d = Device::new(&array(4, 128 * k));
        assert_eq!((d.disks(), d.queue_depth), (4, 16));
        let mut bios = BioSlab::default();
        let t = SimTime::ZERO;
        // Sequential from every head (all at 0): transfer only, 128 KiB at 100 MB/s each.
        let big = bios.insert(Bio::new(Dir::Read, true, 512 * 1024, 0, Origin::Job(0), t));
        let wakes: Vec<_> = d.accept(big, &bios, t).collect();
        let each = SimTime::from_ns(1_310_720);
        let want: Vec<_> = (0..4).map(|m| DeviceWake::ChannelDone(each, m)).collect();
        assert_eq!(wakes, want);
        // A second bio on member 2 waits behind the first's piece there.
        let small = bios.insert(Bio::new(Dir::Read, true, 4096, 768 * k, Origin::Job(0), t));
        assert_eq!(d.accept(small, &bios, t).next(), None);
        assert_eq!(d.inflight(), 2);
        // Members 0, 1 and 3 finish: the big bio is still out.
        for m in [0, 1, 3] {
            assert_eq!(d.channel_done(m, &bios, each), (None, None));
        }
        // Member 2 finishes the last piece, then starts the small bio (its head is just past
        // 128 KiB on member 2, the small one starts at 128 KiB: sequential).
        let (done, next) = d.channel_done(2, &bios, each);
        assert_eq!(done, Some(big));
        let after = SimTime::from_ns(1_310_720 + 40_960);
        assert_eq!(next, Some(DeviceWake::ChannelDone(after, 2)));
        assert_eq!(d.channel_done(2, &bios, after), (Some(small), None));
        assert_eq!(d.inflight(), 0);
        assert_eq!(d.busy_time(after), after.since(t));
    }
}
