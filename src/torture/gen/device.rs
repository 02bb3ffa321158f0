//! The `device:` section: the kind (two HDD presets and the NVMe presets, each alone or as an
//! md RAID0 array, a SATA SSD, a ramdisk, a generic device with a service distribution) and
//! the overrides each kind allows.

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DevKind {
    Hdd5400,
    Hdd7200,
    Nvme,
    Ramdisk,
    Generic,
    SataSsd,
    NvmeGen4,
    NvmeGen5,
}

impl DevKind {
    pub(super) fn name(self) -> &'static str {
        match self {
            DevKind::Hdd5400 => "hdd5400",
            DevKind::Hdd7200 => "hdd7200",
            DevKind::Nvme => "nvme",
            DevKind::Ramdisk => "ramdisk",
            DevKind::Generic => "generic",
            DevKind::SataSsd => "sata-ssd",
            DevKind::NvmeGen4 => "nvme-gen4",
            DevKind::NvmeGen5 => "nvme-gen5",
        }
    }
}

/// Shortest service time a generated generic device may draw (ns): a device that answers in
/// no time would let a closed loop spin without simulated time passing.
pub(super) const MIN_SERVICE_NS: u64 = 20_000;

#[derive(Debug, Clone, Default)]
pub(super) struct Device {
    pub(super) kind: Option<DevKind>,
    pub(super) seek_min: Option<Q<u64>>,
    pub(super) seek_full: Option<Q<u64>>,
    pub(super) revolution: Option<Q<u64>>,
    pub(super) transfer_rate: Option<Q<RateV>>,
    pub(super) capacity: Option<Q<u64>>,
    pub(super) queue_depth: Option<u32>,
    pub(super) latency: Option<Q<u64>>,
    pub(super) channels: Option<u32>,
    pub(super) overhead: Option<Q<u64>>,
    pub(super) service: Option<Dist>,
    pub(super) stall_interval: Option<Q<u64>>,
    pub(super) stall_length: Option<Q<u64>>,
    pub(super) disks: Option<u32>,
    pub(super) chunk: Option<Q<u64>>,
}

/// A device of `kind` with a random subset of its overrides (each with probability `p`).
pub(super) fn device(g: &mut G, kind: DevKind, p: f64) -> Device {
    let mut d = Device {
        kind: Some(kind),
        ..Device::default()
    };
    match kind {
        DevKind::Hdd5400 | DevKind::Hdd7200 => {
            // seek_min never above either preset's mean, seek_full never below any seek_min:
            // any merge of these stays valid.
            d.seek_min = g.maybe(p, |g| dur_in(g, 500_000, 2_000_000));
            d.seek_full = g.maybe(p, |g| dur_in(g, 3_000_000, 30_000_000));
            d.revolution = g.maybe(p, |g| dur_in(g, 4_000_000, 16_000_000));
            d.transfer_rate = g.maybe(p, |g| bandwidth(g, 30e6, 250e6));
            d.capacity = g.maybe(p, |g| {
                if g.chance(0.1) {
                    let b = multiple(g, 1 << 20, 1 << 30, 8 << 30);
                    size(g, b)
                } else {
                    let b = multiple(g, 1 << 30, 20 << 30, 2048 << 30);
                    size(g, b)
                }
            });
            d.queue_depth = g.maybe(p, |g| g.edge(1, 64, 1_000_000) as u32);
            array(g, &mut d, p);
        }
        // The flash presets take the same overrides (no controller pauses); the NVMe
        // generations may be arrays.
        DevKind::SataSsd | DevKind::NvmeGen4 | DevKind::NvmeGen5 => {
            d.latency = g.maybe(p, |g| dur_in(g, 5_000, 200_000));
            d.channels = g.maybe(p, |g| g.log(1, 8) as u32);
            d.overhead = g.maybe(p, |g| dur_in(g, 1_000, 20_000));
            d.transfer_rate = g.maybe(p, |g| bandwidth(g, 0.2e9, 0.6e9));
            d.queue_depth = g.maybe(p, |g| g.log(1, 32) as u32);
            if kind != DevKind::SataSsd {
                array(g, &mut d, p);
            }
        }
        DevKind::Nvme => {
            d.latency = g.maybe(p, |g| dur_in(g, 5_000, 200_000));
            d.channels = g.maybe(p, |g| g.edge(1, 16, 4096) as u32);
            d.overhead = g.maybe(p, |g| dur_in(g, 1_000, 20_000));
            d.transfer_rate = g.maybe(p, |g| bandwidth(g, 0.5e9, 8e9));
            d.queue_depth = g.maybe(p, |g| g.log(1, 1023) as u32);
            d.stall_interval = g.maybe(p, |g| dur_in(g, 10_000_000, 10_000_000_000));
            // Zero (no pauses) now and then: dur_in's floor of 0 draws it.
            d.stall_length = g.maybe(p, |g| dur_in(g, 0, 50_000_000));
            array(g, &mut d, p);
        }
        DevKind::Ramdisk => {
            d.channels = g.maybe(p, |g| g.log(1, 64) as u32);
            d.overhead = g.maybe(p, |g| dur_in(g, 1_000, 20_000));
            d.transfer_rate = g.maybe(p, |g| bandwidth(g, 1e9, 20e9));
            d.queue_depth = g.maybe(p, |g| g.log(1, 1023) as u32);
        }
        DevKind::Generic => {
            d.service = Some(dist(g, MIN_SERVICE_NS, 20_000_000));
            d.channels = g.maybe(p, |g| g.log(1, 8) as u32);
            d.queue_depth = g.maybe(p, |g| g.edge(1, 4096, 1_000_000) as u32);
        }
    }
    d
}

/// An md RAID0 array's drives (1 to 64, 4 most often) and, for 2 or more, perhaps a chunk.
fn array(g: &mut G, d: &mut Device, p: f64) {
    d.disks = g.maybe(p, |g| g.edge(1, 4, 64) as u32);
    if d.disks.is_some_and(|n| n >= 2) {
        d.chunk = g.maybe(p, |g| {
            let b = multiple(g, 4096, 512 * 1024, 64 << 20);
            size(g, b)
        });
    }
}

impl Device {
    pub(super) fn merge(&mut self, o: Device) {
        if matches!((self.kind, o.kind), (Some(a), Some(b)) if a != b) {
            *self = o;
            return;
        }
        let Device { service, .. } = &o;
        match (&mut self.service, service.clone()) {
            (Some(a), Some(b)) => a.merge(b),
            (a, b) => set(a, b),
        }
        merge_struct!(self, o; kind, seek_min, seek_full, revolution, transfer_rate, capacity,
            queue_depth, latency, channels, overhead, stall_interval, stall_length, disks, chunk);
    }
    pub(super) fn capacity(&self) -> Option<u64> {
        let disks = u64::from(self.disks.unwrap_or(1));
        let one = match self.kind? {
            DevKind::Hdd5400 => self.capacity.as_ref().map_or(320_000_000_000, |c| c.v),
            DevKind::Hdd7200 => self.capacity.as_ref().map_or(1_000_000_000_000, |c| c.v),
            _ => return None,
        };
        Some(one.saturating_mul(disks))
    }
    pub(super) fn problem(&self) -> Option<String> {
        let Some(kind) = self.kind else {
            return Some("device without kind".into());
        };
        let hdd = matches!(kind, DevKind::Hdd5400 | DevKind::Hdd7200);
        let nvme_like = matches!(
            kind,
            DevKind::Nvme | DevKind::SataSsd | DevKind::NvmeGen4 | DevKind::NvmeGen5
        );
        // The kinds that may be md RAID0 arrays.
        let striped = hdd || matches!(kind, DevKind::Nvme | DevKind::NvmeGen4 | DevKind::NvmeGen5);
        let fields = [
            ("seek_min", self.seek_min.is_some(), hdd),
            ("seek_full", self.seek_full.is_some(), hdd),
            ("revolution", self.revolution.is_some(), hdd),
            (
                "transfer_rate",
                self.transfer_rate.is_some(),
                hdd || nvme_like || kind == DevKind::Ramdisk,
            ),
            ("capacity", self.capacity.is_some(), hdd),
            ("disks", self.disks.is_some(), striped),
            (
                "chunk",
                self.chunk.is_some(),
                striped && self.disks.is_some_and(|n| n >= 2),
            ),
            ("latency", self.latency.is_some(), nvme_like),
            ("channels", self.channels.is_some(), !hdd),
            (
                "overhead",
                self.overhead.is_some(),
                nvme_like || kind == DevKind::Ramdisk,
            ),
            (
                "stall_interval",
                self.stall_interval.is_some(),
                kind == DevKind::Nvme,
            ),
            (
                "stall_length",
                self.stall_length.is_some(),
                kind == DevKind::Nvme,
            ),
            ("service", self.service.is_some(), kind == DevKind::Generic),
        ];
        if let Some((f, ..)) = fields.iter().find(|(_, here, ok)| *here && !ok) {
            return Some(format!("device field {f} of another kind"));
        }
        if self
            .transfer_rate
            .as_ref()
            .is_some_and(|r| r.v != RateV::Bw)
        {
            return Some("transfer_rate not a bandwidth".into());
        }
        if kind == DevKind::Generic {
            return match &self.service {
                None => Some("generic without service".into()),
                Some(s) => s.problem(true),
            };
        }
        None
    }
    pub(super) fn yaml(&self, g: &mut G) -> Y {
        let mut e = Vec::new();
        if let Some(k) = self.kind {
            e.push(("kind".into(), Y::S(k.name().into())));
        }
        put(&mut e, "seek_min", &self.seek_min);
        put(&mut e, "seek_full", &self.seek_full);
        put(&mut e, "revolution", &self.revolution);
        put(&mut e, "transfer_rate", &self.transfer_rate);
        put(&mut e, "capacity", &self.capacity);
        put(&mut e, "queue_depth", &self.queue_depth);
        put(&mut e, "latency", &self.latency);
        put(&mut e, "channels", &self.channels);
        put(&mut e, "overhead", &self.overhead);
        put(&mut e, "stall_interval", &self.stall_interval);
        put(&mut e, "stall_length", &self.stall_length);
        put(&mut e, "disks", &self.disks);
        put(&mut e, "chunk", &self.chunk);
        if let Some(s) = &self.service {
            e.push(("service".into(), s.yaml()));
        }
        Y::M {
            entries: e,
            flow: g.chance(0.3),
        }
    }
}

pub(super) fn any_device(g: &mut G, p: f64) -> Device {
    let kind = g.pick(&[
        DevKind::Hdd5400,
        DevKind::Hdd7200,
        DevKind::Nvme,
        DevKind::Ramdisk,
        DevKind::Generic,
        DevKind::SataSsd,
        DevKind::NvmeGen4,
        DevKind::NvmeGen5,
    ]);
    device(g, kind, p)
}
