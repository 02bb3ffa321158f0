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
//! The randomness is the bio's own uniform draw ([`Bio::service_u`]), so a given bio costs the
//! same under every policy.
//!
//! An NVMe controller may also **pause** ([`NvmeStall`]): pauses start at Poisson times drawn
//! from the device's own stream (`device.stall`) and last a fixed length; during one the
//! bottleneck stage does no work, so a command in service finishes that much later and none
//! completes. The schedule of pauses depends on time alone, so every policy sees the same
//! pauses.

use super::bio::{Bio, BioId, BioSlab};
use crate::engine::{RngStreams, SimDuration, SimRng, SimTime};
use crate::model::config::{DeviceConfig, NvmeStall};
use rand::RngExt;
use std::collections::VecDeque;

/// What the caller must schedule after a device call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceWake {
    /// The bio's fixed latency ends at this time: call [`Device::delay_done`].
    DelayDone(SimTime, BioId),
    /// Channel `chan` finishes its current request at this time: call [`Device::channel_done`].
    ChannelDone(SimTime, u32),
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
        let (channels, queue_depth) = match config {
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
        }
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

    /// Takes a request from the block layer.
    pub fn accept(&mut self, id: BioId, bios: &BioSlab, now: SimTime) -> Option<DeviceWake> {
        debug_assert!(self.can_accept());
        if self.inflight == 0 {
            self.busy_since = now;
        }
        self.inflight += 1;
        if let DeviceConfig::Nvme(n) = &self.config
            && !n.latency.is_zero()
        {
            return Some(DeviceWake::DelayDone(now + n.latency, id));
        }
        self.enqueue(id, bios, now)
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
                let start = bio.offset;
                let dist = start.abs_diff(self.head);
                self.head = start + u64::from(bio.bytes);
                let transfer = f64::from(bio.bytes) / h.transfer_rate;
                if dist == 0 {
                    return SimDuration::from_secs_f64(transfer);
                }
                let frac = (dist as f64 / h.capacity.max(1) as f64).min(1.0).sqrt();
                let (min, full) = (h.seek_min.as_secs_f64(), h.seek_full.as_secs_f64());
                let seek = min + (full - min) * frac;
                let rotation = h.revolution.as_secs_f64() * bio.service_u;
                SimDuration::from_secs_f64(seek + rotation + transfer)
            }
            DeviceConfig::Nvme(n) => {
                let overhead = -n.overhead.as_secs_f64() * (1.0 - bio.service_u).ln();
                SimDuration::from_secs_f64(overhead + f64::from(bio.bytes) / n.transfer_rate)
            }
            DeviceConfig::Generic(g) => g.service.quantile(bio.service_u),
        }
    }

    /// Channel `chan` finished: returns the finished bio and, if another starts, its wake-up.
    pub fn channel_done(
        &mut self,
        chan: u32,
        bios: &BioSlab,
        now: SimTime,
    ) -> (BioId, Option<DeviceWake>) {
        let chan = chan as usize;
        let done = self.channels[chan].take().expect("channel was idle");
        self.inflight -= 1;
        if self.inflight == 0 {
            self.busy_total += now.since(self.busy_since);
        }
        let next = self
            .queue
            .pop_front()
            .map(|id| self.start(chan, id, &bios[id], now));
        (done, next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::bio::{Dir, Origin};
    use crate::model::config::{Distribution, GenericDeviceConfig, HddConfig};

    fn hdd() -> DeviceConfig {
        DeviceConfig::Hdd(HddConfig {
            preset: "test".into(),
            seek_min: SimDuration::from_ms(2),
            seek_full: SimDuration::from_ms(20),
            revolution: SimDuration::from_ms(10),
            transfer_rate: 100e6,
            capacity: 100_000_000_000,
            queue_depth: 1,
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
            d.accept(id, &bios, t),
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
            d.accept(id, &bios, t),
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
        assert!(d.accept(ids[0], &bios, t).is_some());
        assert!(d.accept(ids[1], &bios, t).is_some());
        assert_eq!(d.accept(ids[2], &bios, t), None);
        let t1 = SimTime::from_ns(10_000);
        let (done, next) = d.channel_done(0, &bios, t1);
        assert_eq!(done, ids[0]);
        assert_eq!(
            next,
            Some(DeviceWake::ChannelDone(SimTime::from_ns(20_000), 0))
        );
        assert_eq!(d.inflight(), 2);
        assert_eq!(d.busy_time(t1).as_ns(), 10_000);
    }
}
