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
//! An HDD or NVMe device with `disks` > 1 is an **md RAID0 array** of identical drives (the
//! `array` submodule): a bio is cut at chunk boundaries as `raid0_make_request` does, each
//! piece goes to its member, and the bio completes when its last piece does. Each member is a
//! whole drive: an HDD member its own head and FIFO, serving one piece at a time; an NVMe member
//! its own `channels` servers fed FIFO and its own pauses.
//!
//! The randomness is the bio's own uniform draw ([`Bio::service_u`]), so a given bio costs the
//! same under every policy.
//!
//! An NVMe controller may also **pause** ([`NvmeStall`](crate::model::base::config::NvmeStall)):
//! pauses start at Poisson times drawn from the device's own stream (`device.stall`; member `m`
//! of an array draws from `device.stall.m`, member 0 from `device.stall`) and last a fixed
//! length; during one the bottleneck stage does no work, so a command in service finishes that
//! much later and none completes. The schedule of pauses depends on time alone, so every policy
//! sees the same pauses.

mod array;
mod pauses;
#[cfg(test)]
mod tests;

use crate::engine::{RngStreams, SimDuration, SimTime};
use crate::model::base::bio::{Bio, BioId, BioSlab};
use crate::model::base::config::{DeviceConfig, HddConfig, NvmeConfig};
pub use array::raid0_pieces;
use array::{Member, Piece};
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

/// The wake-ups one [`Device::accept`] or [`Device::delay_done`] asks for: none, one, or (an
/// array whose bio spans several idle members) several.
#[derive(Debug, Default)]
pub struct Wakes {
    first: Option<DeviceWake>,
    more: Vec<DeviceWake>,
}

impl Wakes {
    /// Adds a wake-up after those already asked for.
    fn push(&mut self, w: DeviceWake) {
        match self.first {
            None => self.first = Some(w),
            Some(_) => self.more.push(w),
        }
    }
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
    /// Requests on the device (delay, queue or service); an array counts bios, not pieces.
    inflight: u32,
    /// The bio on each channel; member `m` of an array owns channels `m·per_member` up to
    /// `(m + 1)·per_member`.
    channels: Vec<Option<BioId>>,
    queue: VecDeque<BioId>,
    /// HDD head position (byte offset just past the last request).
    head: u64,
    busy_since: SimTime,
    busy_total: SimDuration,
    /// The controller's pauses, when it has any (a single drive; an array's are its members').
    pauses: Option<Pauses>,
    /// An array's members (empty for one drive).
    members: Vec<Member>,
    /// Channels of one member.
    per_member: usize,
    /// The piece each channel of an array is serving.
    serving: Vec<Option<Piece>>,
    /// Pieces still to finish, per bio on an array.
    pieces_left: HashMap<BioId, u32>,
}

impl Device {
    /// An idle device whose pauses, if its configuration has any, come from `streams`: a
    /// single drive's from `device.stall`, each member's of an array from its own stream.
    pub fn seeded(config: &DeviceConfig, streams: &RngStreams) -> Self {
        let mut d = Device::new(config);
        if let DeviceConfig::Nvme(n) = config
            && n.stall.is_on()
        {
            if d.members.is_empty() {
                d.pauses = Some(Pauses::new(n.stall, streams.stream(&stall_stream(0))));
            }
            for (m, member) in d.members.iter_mut().enumerate() {
                member.pauses = Some(Pauses::new(n.stall, streams.stream(&stall_stream(m))));
            }
        }
        d
    }

    /// An idle device that never pauses (the model uses [`Device::seeded`], which draws an
    /// NVMe's pauses).
    pub fn new(config: &DeviceConfig) -> Self {
        let (disks, per, depth) = match config {
            DeviceConfig::Hdd(h) => (h.disks, 1, h.queue_depth),
            DeviceConfig::Nvme(n) => (n.disks, n.channels, n.queue_depth),
            DeviceConfig::Generic(g) => (1, g.channels, g.queue_depth),
        };
        let (disks, per) = (disks.max(1) as usize, per.max(1) as usize);
        let array = disks > 1;
        Device {
            config: config.clone(),
            // An array takes every member's depth (bios counted, not pieces).
            queue_depth: depth.saturating_mul(disks as u32).max(1),
            inflight: 0,
            channels: vec![None; disks * per],
            queue: VecDeque::new(),
            head: 0,
            busy_since: SimTime::ZERO,
            busy_total: SimDuration::ZERO,
            pauses: None,
            members: (0..disks)
                .filter(|_| array)
                .map(|_| Member::default())
                .collect(),
            per_member: per,
            serving: vec![None; if array { disks * per } else { 0 }],
            pieces_left: HashMap::new(),
        }
    }

    /// The drives of an array (1 for a single disk or any other device).
    pub fn disks(&self) -> usize {
        self.members.len().max(1)
    }

    /// The bio on each channel (`None`: idle), for a trace; an array's channels member by
    /// member.
    pub fn channel_bios(&self) -> &[Option<BioId>] {
        &self.channels
    }

    /// Whether the device takes another request now.
    pub fn can_accept(&self) -> bool {
        self.inflight < self.queue_depth
    }

    /// Requests on the device (bios, for an array).
    pub fn inflight(&self) -> u32 {
        self.inflight
    }

    /// Time with at least one request on the device, up to `now` (for an array: at least one
    /// bio on any member).
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
        // An array's pieces leave together and every member has the same latency, so one
        // delay stands for all of them.
        if let DeviceConfig::Nvme(n) = &self.config
            && !n.latency.is_zero()
        {
            return Some(DeviceWake::DelayDone(now + n.latency, id)).into();
        }
        self.after_delay(id, bios, now)
    }

    /// The fixed latency of `id` has elapsed: it joins the channel queue (an array's pieces
    /// join their members').
    pub fn delay_done(&mut self, id: BioId, bios: &BioSlab, now: SimTime) -> Wakes {
        self.after_delay(id, bios, now)
    }

    fn after_delay(&mut self, id: BioId, bios: &BioSlab, now: SimTime) -> Wakes {
        if self.members.is_empty() {
            self.enqueue(id, bios, now).into()
        } else {
            self.stripe(id, &bios[id], now)
        }
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
            DeviceConfig::Nvme(n) => nvme_service(n, u64::from(bio.bytes), bio.service_u),
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
        self.finished(now);
        let next = self
            .queue
            .pop_front()
            .map(|id| self.start(chan, id, &bios[id], now));
        (Some(done), next)
    }

    /// A bio left the device at `now`.
    fn finished(&mut self, now: SimTime) {
        self.inflight -= 1;
        if self.inflight == 0 {
            self.busy_total += now.since(self.busy_since);
        }
    }
}

/// The random stream of member `m`'s pauses: member 0's is a single drive's, so that a drive
/// keeps its pauses when others join it.
fn stall_stream(m: usize) -> String {
    match m {
        0 => "device.stall".to_string(),
        m => format!("device.stall.{m}"),
    }
}

/// An NVMe's bottleneck time for `bytes` with uniform draw `u`: an exponential controller
/// overhead (the `u` quantile) plus the transfer.
fn nvme_service(n: &NvmeConfig, bytes: u64, u: f64) -> SimDuration {
    let overhead = -n.overhead.as_secs_f64() * (1.0 - u).ln();
    SimDuration::from_secs_f64(overhead + bytes as f64 / n.transfer_rate)
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
