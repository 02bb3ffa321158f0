//! `device:`: the disk's kind and the overrides that kind accepts, the presets' defaults
//! (numbers in [`crate::model::base::physics`]), the request floor, and its `qsim check` rows.
//!
//! Presets (their numbers live in [`crate::model::base::physics`]):
//!
//! | preset | values |
//! |---|---|
//! | `hdd5400` | seek 2 ms track-to-track, 12 ms mean; one revolution at 5400 rpm; 60 MB/s; 320 GB; depth 1 |
//! | `hdd7200` | seek 2 ms track-to-track, 8.5 ms mean; one revolution at 7200 rpm; 105 MB/s; 1 TB; depth 31 |
//! | `nvme` | latency 45 µs; 1 channel; 3.5 GB/s; overhead 5.18 µs − 4096 B / rate (≈ 193k IOPS at 4 KiB); depth 1023; a 12 ms controller pause every 1.37 s on average (`stall_length: 0` turns them off) |
//! | `sata-ssd` | Samsung 870 EVO on AHCI: latency 66.72 µs; 1 channel; 560 MB/s; overhead so a 4 KiB read costs 10.2 µs (98k IOPS at QD32, 13k at QD1); NCQ depth 32; no pauses |
//! | `nvme-gen4` | Samsung 990 PRO 2 TB, PCIe 4.0: latency 50.17 µs; 1 channel; 7.45 GB/s; overhead so a 4 KiB read costs 714 ns (1.4M IOPS); depth 1023; no pauses |
//! | `nvme-gen5` | Samsung 9100 PRO 2 TB, PCIe 5.0: latency 50.17 µs (assumed); 1 channel; 14.7 GB/s; overhead so a 4 KiB read costs 541 ns (1.85M IOPS); depth 1023; no pauses |
//! | `ramdisk` | brd: no latency, no seek; overhead 1 µs; memcpy at 10 GB/s; 64 channels; depth 1000000 (all assumed); no pauses |
//!
//! An HDD's seek time over distance d is `min + (full − min)·√(d / capacity)`. Over uniform random
//! positions E[√|U₁ − U₂|] = 8/15, so the mean seek is `min + (full − min)·8/15`, and a preset's
//! full stroke is chosen as `min + (mean − min)·15/8`. When a file overrides `seek_min` only, the
//! full stroke is recomputed so the preset's mean seek holds; likewise an NVMe `overhead` follows
//! an overridden `transfer_rate` so a 4 KiB request still costs 5.18 µs in the bottleneck.
//! `hdd7200` keeps the 2 ms track-to-track seek of `hdd5400`; only its mean (8.5 ms) differs. An
//! HDD preset with any override is reported as `<preset> (custom)`.
//!
//! An HDD preset with `disks: N` (2 or more) is N such drives behind one SAS HBA, striped as md
//! RAID0 in `chunk`-byte chunks (default 512 KiB, mdadm's): the capacity is N times the
//! member's, and `chunk` is refused on a single disk (docs/model/device.md §3d). The NVMe
//! presets (`nvme`, `nvme-gen4`, `nvme-gen5`) take `disks` and `chunk` the same way: N whole
//! drives, each with the preset's numbers (§3e); `sata-ssd` and `ramdisk` are single drives.

use super::Error;
use super::check::{Checker, MAX_DISK_BYTES, Zero, fmt_ns, loc};
use super::describe::{Rows, fmt_secs, row};
use super::distribution::{RawDistribution, distribution, fmt_dist};
use super::schema::{names, raw_section};
use super::types::*;
use super::units::{Duration, Rate, Size, format_bandwidth, format_bytes, trim_float};
use super::workload::MAX_REQUEST_BYTES;
use crate::engine::SimDuration;
use crate::model::base::physics::{
    HDD5400, HDD7200, HddPreset, MD_CHUNK, NVME_GEN4, NVME_GEN5, NVME_LATENCY, NVME_QUEUE_DEPTH,
    NVME_RATE, NVME_STALL_INTERVAL, NVME_STALL_LENGTH, RAMDISK, SATA_SSD, SsdPreset,
    mean_random_seek, mean_service, nvme_bottleneck_secs, nvme_overhead, revolution,
    sector_crypto_secs, sector_device_secs,
};
use serde_saphyr::Location;

/// Shortest mean time a 512-byte request may cost, device and dm-crypt together: 100 ns, ten
/// million requests a second per channel, past any real disk. Below it requests complete in
/// (almost) no simulated time,
/// and a closed loop issues and completes I/Os without the clock moving: the event budget runs
/// out within a millisecond of simulated time and the report shows `IOPS=500G` (issue 11).
pub const MIN_SERVICE: SimDuration = SimDuration::from_ns(100);

names! {
    /// Device presets (`device.kind`).
    pub enum DeviceKind {
        /// 5400 rpm laptop disk.
        Hdd5400 = "hdd5400",
        /// 7200 rpm desktop disk.
        Hdd7200 = "hdd7200",
        /// NVMe SSD.
        Nvme = "nvme",
        /// Any service distribution.
        Generic = "generic",
        /// A RAM disk (brd): a memory copy per request.
        Ramdisk = "ramdisk",
        /// A SATA SSD on AHCI.
        SataSsd = "sata-ssd",
        /// A PCIe 4.0 NVMe SSD of 2022 (Samsung 990 PRO).
        NvmeGen4 = "nvme-gen4",
        /// A PCIe 5.0 NVMe SSD of 2025 (Samsung 9100 PRO).
        NvmeGen5 = "nvme-gen5",
    }
}

impl DeviceKind {
    /// The fields this kind takes besides `kind`, in the order its hint lists them; a field of
    /// another kind is refused at its own line.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            DeviceKind::Hdd5400 | DeviceKind::Hdd7200 => &[
                "seek_min",
                "seek_full",
                "revolution",
                "transfer_rate",
                "capacity",
                "queue_depth",
                "disks",
                "chunk",
            ],
            DeviceKind::SataSsd => &[
                "latency",
                "channels",
                "overhead",
                "transfer_rate",
                "queue_depth",
            ],
            DeviceKind::NvmeGen4 | DeviceKind::NvmeGen5 => &[
                "latency",
                "channels",
                "overhead",
                "transfer_rate",
                "queue_depth",
                "disks",
                "chunk",
            ],
            DeviceKind::Nvme => &[
                "latency",
                "channels",
                "overhead",
                "transfer_rate",
                "queue_depth",
                "stall_interval",
                "stall_length",
                "disks",
                "chunk",
            ],
            DeviceKind::Generic => &["service", "channels", "queue_depth"],
            DeviceKind::Ramdisk => &["channels", "overhead", "transfer_rate", "queue_depth"],
        }
    }

    /// The preset numbers of a spinning-disk kind: a new HDD preset is a variant above, an arm
    /// here and in [`DeviceKind::fields`], and its numbers in [`crate::model::base::physics`].
    fn hdd_preset(self) -> Option<&'static HddPreset> {
        match self {
            DeviceKind::Hdd5400 => Some(&HDD5400),
            DeviceKind::Hdd7200 => Some(&HDD7200),
            _ => None,
        }
    }
}

raw_section! {
    /// `device:`: a kind and the overrides that kind accepts.
    pub struct RawDevice {
        /// Preset.
        [kind] kind: DeviceKind,
        /// HDD: track-to-track seek.
        [value] seek_min: Duration,
        /// HDD: full-stroke seek.
        [value] seek_full: Duration,
        /// HDD: one revolution.
        [value] revolution: Duration,
        /// HDD, NVMe: media transfer rate.
        [value] transfer_rate: Rate,
        /// HDD: capacity.
        [value] capacity: Size,
        /// All: requests accepted at once.
        [value] queue_depth: u32,
        /// NVMe: fixed latency.
        [value] latency: Duration,
        /// NVMe, generic: parallel servers.
        [value] channels: u32,
        /// NVMe: per-request cost in the bottleneck stage.
        [value] overhead: Duration,
        /// Generic: service-time distribution.
        [map] service: RawDistribution,
        /// NVMe: mean time between controller pauses.
        [value] stall_interval: Duration,
        /// NVMe: length of one controller pause (0: none).
        [value] stall_length: Duration,
        /// HDD, NVMe: drives striped as md RAID0.
        [value] disks: u32,
        /// HDD or NVMe array: the RAID0 chunk.
        [value] chunk: Size,
    }
}

/// The accepted range of each whole-number field of `device:` ([`super::check::int_range`]).
pub(crate) const INT_RANGES: &[(&str, u64, u64)] = &[
    ("device.queue_depth", 1, 1_000_000),
    ("device.channels", 1, 4096),
    ("device.disks", 1, 64),
];

/// `device:`: its kind, then the fields that kind takes, each over the preset's value.
pub(crate) fn device(c: &Checker, d: &RawDevice, here: Location) -> Result<DeviceConfig, Error> {
    let Some(kind) = &d.kind else {
        return Err(c.at("device", here).missing(
            "the device has no `kind`",
            format!("add `kind:` with one of {}", DeviceKind::NAMES.join(", ")),
        ));
    };
    let kind = kind.value;
    let owner = format!("device kind `{}`", kind.name());
    c.only(&d.present(), kind.fields(), "device", &owner)?;
    match kind.hdd_preset() {
        Some(p) => hdd(c, d, kind, p),
        None if kind == DeviceKind::Nvme => nvme(c, d),
        None if kind == DeviceKind::Ramdisk => ramdisk(c, d),
        None if kind == DeviceKind::SataSsd => ssd(c, d, &SATA_SSD, kind),
        None if kind == DeviceKind::NvmeGen4 => ssd(c, d, &NVME_GEN4, kind),
        None if kind == DeviceKind::NvmeGen5 => ssd(c, d, &NVME_GEN5, kind),
        None => generic(c, d, here),
    }
}

/// A spinning disk: the preset's numbers under any overrides. An overridden `seek_min` alone
/// keeps the preset's mean seek (the full stroke follows).
fn hdd(c: &Checker, d: &RawDevice, kind: DeviceKind, p: &HddPreset) -> Result<DeviceConfig, Error> {
    let seek_min = c.dur(&d.seek_min, "device.seek_min", p.seek_min, Zero::Allowed)?;
    let seek_full = match &d.seek_full {
        Some(s) => s.value.0,
        None if seek_min > p.seek_mean => {
            return Err(c.at("device.seek_min", &d.seek_min).conflict(
                format!(
                    "seek_min {seek_min} exceeds the preset's mean seek {}",
                    p.seek_mean
                ),
                "give `seek_full` as well, or a smaller seek_min",
            ));
        }
        None => HddPreset::seek_full(seek_min, p.seek_mean),
    };
    if seek_full < seek_min {
        return Err(c.at("device.seek_full", &d.seek_full).conflict(
            format!("the full-stroke seek ({seek_full}) is shorter than seek_min ({seek_min})"),
            "seek_full is the longest seek; make it at least seek_min",
        ));
    }
    let revolution = c.dur(
        &d.revolution,
        "device.revolution",
        revolution(p.rpm),
        Zero::Refused,
    )?;
    let transfer_rate = match &d.transfer_rate {
        Some(s) => c.bandwidth(s, "device.transfer_rate")?,
        None => p.transfer_rate,
    };
    let capacity = match &d.capacity {
        Some(s) if s.value.0 == 0 => {
            return Err(c
                .at("device.capacity", s)
                .bad_value("the capacity is zero", CAPACITY_HINT));
        }
        Some(s) if s.value.0 > MAX_DISK_BYTES => {
            return Err(c.at("device.capacity", s).bad_value(
                format!(
                    "{} is larger than 1EiB, the largest disk qsim models",
                    format_bytes(s.value.0)
                ),
                CAPACITY_HINT,
            ));
        }
        Some(s) => s.value.0,
        None => p.capacity,
    };
    let custom = d
        .present()
        .iter()
        .any(|(f, _)| !matches!(*f, "disks" | "chunk"));
    let (disks, chunk) = array(c, d)?;
    Ok(DeviceConfig::Hdd(HddConfig {
        preset: if custom {
            format!("{} (custom)", kind.name())
        } else {
            kind.name().to_string()
        },
        seek_min,
        seek_full,
        revolution,
        transfer_rate,
        capacity,
        queue_depth: c.int(&d.queue_depth, "device.queue_depth", p.queue_depth)?,
        disks,
        chunk,
    }))
}

/// An HDD's or NVMe drive's `disks` and `chunk`: one drive and no chunk by default; an
/// array's chunk defaults to md's 512 KiB and must be a whole number of 4 KiB pages (raid0
/// refuses a chunk below a page).
fn array(c: &Checker, d: &RawDevice) -> Result<(u32, u64), Error> {
    let disks = c.int(&d.disks, "device.disks", 1)?;
    match &d.chunk {
        Some(ch) if disks < 2 => Err(c.at("device.chunk", ch).conflict(
            "`chunk` applies only to an array",
            "add `disks:` (2 or more) to stripe several drives, or remove `chunk`",
        )),
        Some(ch) if ch.value.0 == 0 || ch.value.0 % 4096 != 0 || ch.value.0 > 1 << 30 => {
            Err(c.at("device.chunk", ch).bad_value(
                format!("a chunk of {} bytes", ch.value.0),
                "give a whole number of 4KiB pages up to 1GiB, e.g. 512KiB (md's default)",
            ))
        }
        Some(ch) => Ok((disks, ch.value.0)),
        None if disks < 2 => Ok((1, 0)),
        None => Ok((disks, MD_CHUNK)),
    }
}

/// A flash SSD preset (`sata-ssd`, `nvme-gen4`, `nvme-gen5`): the NVMe model with the
/// preset's numbers ([`SsdPreset`]), one channel and no controller pauses; an overridden
/// `transfer_rate` moves the default `overhead` so that a 4 KiB request still costs the
/// preset's [`SsdPreset::cost_4k`] in the bottleneck.
fn ssd(c: &Checker, d: &RawDevice, p: &SsdPreset, kind: DeviceKind) -> Result<DeviceConfig, Error> {
    let transfer_rate = match &d.transfer_rate {
        Some(s) => c.bandwidth(s, "device.transfer_rate")?,
        None => p.transfer_rate,
    };
    // `disks` and `chunk` are among the fields of the NVMe generations only (`sata-ssd`'s are
    // refused before this): on `sata-ssd` this is one drive.
    let (disks, chunk) = array(c, d)?;
    Ok(DeviceConfig::Nvme(NvmeConfig {
        latency: c.dur(&d.latency, "device.latency", p.latency, Zero::Allowed)?,
        channels: c.int(&d.channels, "device.channels", 1)?,
        overhead: c.dur(
            &d.overhead,
            "device.overhead",
            p.overhead(transfer_rate),
            Zero::Allowed,
        )?,
        transfer_rate,
        queue_depth: c.int(&d.queue_depth, "device.queue_depth", p.queue_depth)?,
        stall: NvmeStall::NONE,
        disks,
        chunk,
        preset: kind.name().into(),
    }))
}

/// How to give an HDD's capacity.
const CAPACITY_HINT: &str = "give the disk size, e.g. 320GB or 1TB";

/// An NVMe device: the preset under any overrides; an overridden `transfer_rate` moves the
/// default `overhead` so that a 4 KiB request still costs [`crate::model::base::physics::NVME_COST_4K`].
fn nvme(c: &Checker, d: &RawDevice) -> Result<DeviceConfig, Error> {
    let transfer_rate = match &d.transfer_rate {
        Some(s) => c.bandwidth(s, "device.transfer_rate")?,
        None => NVME_RATE,
    };
    let overhead = c.dur(
        &d.overhead,
        "device.overhead",
        nvme_overhead(transfer_rate),
        Zero::Allowed,
    )?;
    let (disks, chunk) = array(c, d)?;
    Ok(DeviceConfig::Nvme(NvmeConfig {
        latency: c.dur(&d.latency, "device.latency", NVME_LATENCY, Zero::Allowed)?,
        channels: c.int(&d.channels, "device.channels", 1)?,
        overhead,
        transfer_rate,
        queue_depth: c.int(&d.queue_depth, "device.queue_depth", NVME_QUEUE_DEPTH)?,
        stall: NvmeStall {
            interval: c.dur(
                &d.stall_interval,
                "device.stall_interval",
                NVME_STALL_INTERVAL,
                Zero::Refused,
            )?,
            length: c.dur(
                &d.stall_length,
                "device.stall_length",
                NVME_STALL_LENGTH,
                Zero::Allowed,
            )?,
        },
        disks,
        chunk,
        preset: "nvme".into(),
    }))
}

/// A RAM disk (brd): the NVMe model with no fixed latency, a per-request overhead and a
/// memory-copy transfer rate, and enough channels and depth that only the CPUs queue (the
/// preset's numbers are [`RAMDISK`]).
fn ramdisk(c: &Checker, d: &RawDevice) -> Result<DeviceConfig, Error> {
    let transfer_rate = match &d.transfer_rate {
        Some(s) => c.bandwidth(s, "device.transfer_rate")?,
        None => RAMDISK.transfer_rate,
    };
    Ok(DeviceConfig::Nvme(NvmeConfig {
        latency: SimDuration::ZERO,
        channels: c.int(&d.channels, "device.channels", RAMDISK.channels)?,
        overhead: c.dur(
            &d.overhead,
            "device.overhead",
            RAMDISK.overhead,
            Zero::Allowed,
        )?,
        transfer_rate,
        queue_depth: c.int(&d.queue_depth, "device.queue_depth", RAMDISK.queue_depth)?,
        stall: NvmeStall::NONE,
        disks: 1,
        chunk: 0,
        preset: "ramdisk".into(),
    }))
}

/// A device with any service distribution (textbook checks).
fn generic(c: &Checker, d: &RawDevice, here: Location) -> Result<DeviceConfig, Error> {
    let Some(service) = &d.service else {
        return Err(c.at("device.service", here).missing(
            "a generic device needs a `service` distribution",
            "e.g. `service: {kind: exponential, mean: 1ms}`, or `service: 1ms` for a constant",
        ));
    };
    let dist = distribution(c, service, "device.service")?;
    Ok(DeviceConfig::Generic(GenericDeviceConfig {
        service: dist,
        channels: c.int(&d.channels, "device.channels", 1)?,
        queue_depth: c.int(&d.queue_depth, "device.queue_depth", 1_000_000)?,
    }))
}

/// Refuses a scenario in which a 512-byte request could cost less than [`MIN_SERVICE`] under one
/// of its policies: the device's part ([`sector_device_secs`]) plus dm-crypt's
/// ([`sector_crypto_secs`]), which policy `none` skips. A free device is fine when dm-crypt is
/// the server (the textbook checks of `qsim validate` do that); both free is not: requests then
/// complete in no simulated time and a closed loop never lets the clock move. Located at the
/// device field that sets its part.
pub(crate) fn request_floor(
    c: &Checker,
    raw: &RawDevice,
    here: Location,
    device: &DeviceConfig,
    crypt: &CryptConfig,
    policies: &[String],
) -> Result<(), Error> {
    let dev = sector_device_secs(device);
    let crypto = sector_crypto_secs(crypt);
    for p in policies {
        let plain = crate::model::crypt::policy::find(p)
            .is_some_and(|i| i.topology == crate::model::crypt::policy::Topology::Plain);
        let total = if plain { dev } else { dev + crypto };
        if SimDuration::from_secs_f64(total) >= MIN_SERVICE {
            continue;
        }
        let adds = if plain {
            format!("policy `{p}` adds no dm-crypt work")
        } else {
            format!("dm-crypt adds {} under policy `{p}`", fmt_ns(crypto))
        };
        let (what, path, l, hint) = floor_culprit(raw, device, dev);
        return Err(c.at(path, l.or(Some(here))).bad_value(
            format!("{what} and {adds}; a request must take at least 100ns"),
            format!(
                "{hint}; or, for a device that costs nothing, give dm-crypt the cost \
                 (`crypt.cost`) and run encrypting policies only. Faster requests complete in no \
                 simulated time: a closed loop never lets the clock move and the run reports \
                 absurd IOPS"
            ),
        ));
    }
    Ok(())
}

/// What the device's part of the request floor is, in words, and the field that sets it
/// (path, location, hint).
fn floor_culprit(
    raw: &RawDevice,
    device: &DeviceConfig,
    dev: f64,
) -> (String, &'static str, Option<Location>, &'static str) {
    match device {
        DeviceConfig::Hdd(h) => (
            format!(
                "a disk streaming {} moves a 512-byte sector in {}",
                format_bandwidth(h.transfer_rate),
                fmt_ns(dev)
            ),
            "device.transfer_rate",
            loc(&raw.transfer_rate),
            "the most an HDD may stream is 5.12GB/s (one sector in 100ns); real ones do 50 to \
             300 MB/s",
        ),
        DeviceConfig::Nvme(n) => {
            let (path, l) = match (&raw.overhead, &raw.transfer_rate) {
                (Some(o), _) => ("device.overhead", Some(o.referenced)),
                (None, t) => ("device.transfer_rate", loc(t)),
            };
            (
                format!(
                    "a 512-byte request holds the NVMe device {} (overhead {} + 512 B at {})",
                    fmt_ns(dev),
                    n.overhead,
                    format_bandwidth(n.transfer_rate)
                ),
                path,
                l,
                "overhead + 512 B / transfer_rate must make at least 100ns: raise `overhead` (the \
                 preset's makes a 4 KiB request cost 5.18us) or lower `transfer_rate`",
            )
        }
        DeviceConfig::Generic(_) => (
            format!("the mean service time is {}", fmt_ns(dev)),
            "device.service",
            loc(&raw.service),
            "give a service time of at least 100ns on average, e.g. `service: 1ms` or \
             `{kind: exponential, mean: 100us}`",
        ),
    }
}

/// The bytes a workload may address: an HDD's capacity, times its drives for an array
/// (`None`: no limit is checked for other kinds).
pub(crate) fn capacity(device: &DeviceConfig) -> Option<u64> {
    match device {
        DeviceConfig::Hdd(h) => Some(h.capacity.saturating_mul(u64::from(h.disks))),
        _ => None,
    }
}

/// An array's row: its drives, chunk and total capacity.
fn describe_array(o: &mut Rows, h: &HddConfig) {
    if h.disks > 1 {
        let text = format!(
            "{} drives on one HBA, md RAID0 of {} chunks, {} in all",
            h.disks,
            format_bytes(h.chunk),
            format_bytes(h.capacity.saturating_mul(u64::from(h.disks)))
        );
        row(o, 2, "array", &text);
    }
}

/// An NVMe device's rows (also the flash presets and the ramdisk): its parameters, its pauses,
/// an array's drives, and its 4 KiB capacity.
fn describe_nvme(o: &mut Rows, n: &NvmeConfig) {
    row(o, 0, "device", &n.preset);
    row(o, 2, "latency", &n.latency.to_string());
    row(o, 2, "channels", &n.channels.to_string());
    row(o, 2, "overhead", &n.overhead.to_string());
    row(o, 2, "transfer_rate", &format_bandwidth(n.transfer_rate));
    row(o, 2, "queue_depth", &n.queue_depth.to_string());
    let each = if n.disks > 1 { " of each drive" } else { "" };
    let stall = if n.stall.is_on() {
        format!(
            "{} pauses of the controller{each}, one every {} on average (Poisson)",
            n.stall.length, n.stall.interval
        )
    } else {
        "none".to_string()
    };
    row(o, 2, "stalls", &stall);
    if n.disks > 1 {
        let text = format!(
            "{} drives, md RAID0 of {} chunks, queue_depth {} each ({} in all)",
            n.disks,
            format_bytes(n.chunk),
            n.queue_depth,
            u64::from(n.queue_depth) * u64::from(n.disks)
        );
        row(o, 2, "array", &text);
    }
    let bottleneck = nvme_bottleneck_secs(n.overhead, n.transfer_rate, 4096);
    let servers = f64::from(n.channels) * f64::from(n.disks.max(1));
    let drives = if n.disks > 1 {
        format!(" x{} drives", n.disks)
    } else {
        String::new()
    };
    row(
        o,
        2,
        "4KiB capacity",
        &format!(
            "{} IOPS ({} per request in the bottleneck, x{} channels{drives})",
            trim_float(servers / bottleneck, 0),
            fmt_secs(bottleneck),
            n.channels
        ),
    );
}

/// `device:`'s rows in `qsim check`: the resolved parameters and the mean service times.
pub(crate) fn describe_device(o: &mut Rows, dev: &DeviceConfig) {
    match dev {
        DeviceConfig::Hdd(h) => {
            row(o, 0, "device", &format!("hdd, preset {}", h.preset));
            row(
                o,
                2,
                "seek",
                &format!(
                    "{} track-to-track, {} full stroke, {} mean over random distances",
                    h.seek_min,
                    h.seek_full,
                    mean_random_seek(h)
                ),
            );
            row(
                o,
                2,
                "revolution",
                &format!(
                    "{} (mean rotational delay {})",
                    h.revolution,
                    SimDuration::from_ns(h.revolution.as_ns() / 2)
                ),
            );
            row(o, 2, "transfer_rate", &format_bandwidth(h.transfer_rate));
            row(o, 2, "capacity", &format_bytes(h.capacity));
            row(o, 2, "queue_depth", &h.queue_depth.to_string());
            describe_array(o, h);
        }
        DeviceConfig::Nvme(n) => describe_nvme(o, n),
        DeviceConfig::Generic(g) => {
            row(o, 0, "device", "generic");
            row(o, 2, "service", &fmt_dist(&g.service));
            row(o, 2, "channels", &g.channels.to_string());
            row(o, 2, "queue_depth", &g.queue_depth.to_string());
        }
    }
    row(
        o,
        2,
        "mean service",
        &format!(
            "4KiB random read {}, 512KiB sequential write {}",
            mean_service(dev, 4096, true),
            mean_service(dev, MAX_REQUEST_BYTES, false)
        ),
    );
}

#[cfg(test)]
mod tests;
