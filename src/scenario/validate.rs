//! From [`schema::RawScenario`] to [`Scenario`]: every default in one place, every cross-field
//! check, every list of valid names; and [`describe`], which prints the result with its derived
//! values.
//!
//! This is the only producer of value errors. Each names the field path (`workloads[1].rate`),
//! points at the value's line and column, and carries a hint.
//!
//! Presets (MODEL.md §3, §8):
//!
//! | preset | values |
//! |---|---|
//! | `hdd5400` | seek 2 ms track-to-track, 12 ms mean; one revolution at 5400 rpm; 60 MB/s; 320 GB; depth 1 |
//! | `hdd7200` | seek 2 ms track-to-track, 8.5 ms mean; one revolution at 7200 rpm; 105 MB/s; 1 TB; depth 31 |
//! | `nvme` | latency 45 µs; 1 channel; 3.5 GB/s; overhead 5.18 µs − 4096 B / rate (≈ 193k IOPS at 4 KiB); depth 1023 |
//! | `aes-2009` | 60 MB/s both ways |
//! | `aes-ni` | 1432 MiB/s encrypt, 1387 MiB/s decrypt |
//! | `vaes` | 9588 MB/s both ways |
//! | `null` | infinite |
//!
//! An HDD's seek time over distance d is `min + (full − min)·√(d / capacity)`. Over uniform random
//! positions E[√|U₁ − U₂|] = 8/15, so the mean seek is `min + (full − min)·8/15`, and a preset's
//! full stroke is chosen as `min + (mean − min)·15/8`. When a file overrides `seek_min` only, the
//! full stroke is recomputed so the preset's mean seek holds; likewise an NVMe `overhead` follows
//! an overridden `transfer_rate` so a 4 KiB request still costs 5.18 µs in the bottleneck.
//!
//! Choices where the schema leaves room, made here once:
//! - `hdd7200` keeps the 2 ms track-to-track seek of `hdd5400`; only its mean (8.5 ms) differs.
//! - An HDD preset with any override is reported as `<preset> (custom)`; a cipher with
//!   overridden rates as `<cipher> (custom rates)`.
//! - Under blk-mq, `nr_requests` (the tag count) stays 128 unless given, rather than following the
//!   device's queue depth; `elevator` may only be `fifo`, and `plug`, `unplug_threshold` and the
//!   CFQ fields are refused rather than ignored. CFQ fields are refused under `elevator: fifo` too.
//! - `rwmixread` is refused unless `rw: randrw`; `arrivals` unless `rate`; `think` with `rate`.
//! - Default workload names are `<kind><index>` with the 0-based index of the field path
//!   (`gitk0`, `buffered-writer1`). A region without `offset` starts where the previous
//!   workload's region ends; regions must be sector-aligned and, on an HDD, inside its capacity.
//! - `size` defaults to 1 GiB for fio and buffered writers and 256 MiB for `gitk`.

use super::schema::{
    ArrivalsName, CipherName, DeviceKind, DistKind, ElevatorName, EngineName, Field, QueueModeName,
    RawBlock, RawCrypt, RawDevice, RawDistribution, RawScenario, RawWorkload, RwName,
    WorkloadKindName,
};
use super::types::*;
use super::units::{Duration, Rate, format_bytes};
use super::{Error, ErrorKind, MINIMAL_SCENARIO, Source, suggestion};
use crate::engine::SimDuration;
use serde_saphyr::{Location, Spanned};
use std::collections::HashSet;

/// Allowed `kernel.hz` values.
pub const HZ_VALUES: &[u32] = &[100, 250, 300, 1000];
/// Default `max_events`.
pub const DEFAULT_MAX_EVENTS: u64 = 500_000_000;
/// Largest block or chunk size: 1024 sectors, the largest request.
pub const MAX_REQUEST_BYTES: u64 = 512 * 1024;
/// Sector size.
pub const SECTOR: u64 = 512;

const HDD_FIELDS: &[&str] = &[
    "seek_min",
    "seek_full",
    "revolution",
    "transfer_rate",
    "capacity",
    "queue_depth",
];
const NVME_FIELDS: &[&str] = &[
    "latency",
    "channels",
    "overhead",
    "transfer_rate",
    "queue_depth",
];
const GENERIC_FIELDS: &[&str] = &["service", "channels", "queue_depth"];
const FIO_FIELDS: &[&str] = &[
    "rw",
    "rwmixread",
    "bs",
    "size",
    "offset",
    "iodepth",
    "rate",
    "arrivals",
    "think",
    "numjobs",
    "sync",
];
const WRITER_FIELDS: &[&str] = &[
    "rate",
    "chunk",
    "background",
    "dirty_limit",
    "size",
    "offset",
];

/// HDD preset parameters.
struct HddPreset {
    seek_min: SimDuration,
    seek_mean: SimDuration,
    rpm: u64,
    transfer_rate: f64,
    capacity: u64,
    queue_depth: u32,
}

const HDD5400: HddPreset = HddPreset {
    seek_min: SimDuration::from_ms(2),
    seek_mean: SimDuration::from_ms(12),
    rpm: 5400,
    transfer_rate: 60e6,
    capacity: 320_000_000_000,
    queue_depth: 1,
};

const HDD7200: HddPreset = HddPreset {
    seek_min: SimDuration::from_ms(2),
    seek_mean: SimDuration::from_us(8500),
    rpm: 7200,
    transfer_rate: 105e6,
    capacity: 1_000_000_000_000,
    queue_depth: 31,
};

/// NVMe preset: the bottleneck cost of one 4 KiB request.
const NVME_COST_4K: SimDuration = SimDuration::from_ns(5_180);
const NVME_LATENCY: SimDuration = SimDuration::from_us(45);
const NVME_RATE: f64 = 3.5e9;
const NVME_QUEUE_DEPTH: u32 = 1023;

/// Full-stroke seek that gives `mean` over uniform random distances: `min + (mean − min)·15/8`.
fn seek_full_for_mean(min: SimDuration, mean: SimDuration) -> SimDuration {
    let span = mean.saturating_sub(min).as_ns();
    SimDuration::from_ns(min.as_ns() + span * 15 / 8)
}

/// Mean seek over uniform random distances: `min + (full − min)·8/15`.
pub fn mean_random_seek(hdd: &HddConfig) -> SimDuration {
    let span = hdd.seek_full.saturating_sub(hdd.seek_min).as_ns();
    SimDuration::from_ns(hdd.seek_min.as_ns() + span * 8 / 15)
}

/// One revolution at `rpm`, rounded to the nanosecond.
fn revolution(rpm: u64) -> SimDuration {
    SimDuration::from_ns((60_000_000_000 + rpm / 2) / rpm)
}

/// NVMe overhead that makes a 4 KiB request cost [`NVME_COST_4K`] at `rate` (never negative).
fn nvme_overhead(rate: f64) -> SimDuration {
    let transfer_4k = 4096.0 / rate;
    SimDuration::from_secs_f64(NVME_COST_4K.as_secs_f64() - transfer_4k)
}

fn cipher_rates(c: CipherName) -> (f64, f64) {
    const MIB: f64 = 1_048_576.0;
    match c {
        CipherName::Aes2009 => (60e6, 60e6),
        CipherName::AesNi => (1432.0 * MIB, 1387.0 * MIB),
        CipherName::Vaes => (9588e6, 9588e6),
        CipherName::Null => (f64::INFINITY, f64::INFINITY),
    }
}

fn val<T: Clone>(f: &Field<T>) -> Option<T> {
    f.as_ref().map(|s| s.value.clone())
}

fn loc<T>(f: &Field<T>) -> Option<Location> {
    f.as_ref().map(|s| s.referenced)
}

fn at(parent: &str, field: &str) -> String {
    if parent.is_empty() {
        field.to_string()
    } else {
        format!("{parent}.{field}")
    }
}

/// Builds located errors for one source.
struct Checker<'s, 'a> {
    src: &'s Source<'a>,
}

impl Checker<'_, '_> {
    fn err(
        &self,
        kind: ErrorKind,
        loc: Option<Location>,
        path: &str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Error {
        self.src.error(kind, loc, path, message, Some(hint.into()))
    }

    /// A whole number in `min..=max`, or `default` when absent.
    fn int<T>(&self, f: &Field<T>, path: &str, default: T, min: T, max: T) -> Result<T, Error>
    where
        T: Copy + PartialOrd + std::fmt::Display,
    {
        match f {
            None => Ok(default),
            Some(s) if s.value >= min && s.value <= max => Ok(s.value),
            Some(s) => Err(self.err(
                ErrorKind::BadValue,
                Some(s.referenced),
                path,
                format!("must be between {min} and {max}, got {}", s.value),
                format!("write a whole number from {min} to {max}"),
            )),
        }
    }

    /// A duration, or `default`; with `positive`, zero is refused.
    fn dur(
        &self,
        f: &Field<Duration>,
        path: &str,
        default: SimDuration,
        positive: bool,
    ) -> Result<SimDuration, Error> {
        match f {
            Some(s) if positive && s.value.0.is_zero() => Err(self.err(
                ErrorKind::BadValue,
                Some(s.referenced),
                path,
                "must be longer than zero",
                super::units::DURATION_HINT,
            )),
            Some(s) => Ok(s.value.0),
            None => Ok(default),
        }
    }

    /// A bandwidth (bytes per second); an operation rate is refused.
    fn bandwidth(&self, s: &Spanned<Rate>, path: &str) -> Result<f64, Error> {
        match s.value {
            Rate::BytesPerSec(b) => Ok(b),
            Rate::OpsPerSec(_) => Err(self.err(
                ErrorKind::BadValue,
                Some(s.referenced),
                path,
                format!("expected a bandwidth in bytes per second, got {}", s.value),
                "write it with a byte unit: 60MB/s, 1432MiB/s, 512KiB/s",
            )),
        }
    }

    /// Refuses any present field that is not in `allowed`.
    fn only(
        &self,
        present: &[(&'static str, Location)],
        allowed: &[&str],
        parent: &str,
        owner: &str,
    ) -> Result<(), Error> {
        match present.iter().find(|(name, _)| !allowed.contains(name)) {
            None => Ok(()),
            Some(&(name, l)) => Err(self.err(
                ErrorKind::Conflict,
                Some(l),
                &at(parent, name),
                format!("`{name}` does not apply to {owner}"),
                format!("{owner} takes: {}", allowed.join(", ")),
            )),
        }
    }

    fn size_multiple(
        &self,
        bytes: u64,
        f: &Field<super::units::Size>,
        path: &str,
    ) -> Result<(), Error> {
        if !bytes.is_multiple_of(SECTOR) {
            return Err(self.err(
                ErrorKind::BadValue,
                loc(f),
                path,
                format!(
                    "must be a multiple of 512 bytes (one sector), got {}",
                    format_bytes(bytes)
                ),
                "use 4k, 512, 64KiB, 1MiB, …",
            ));
        }
        Ok(())
    }
}

/// Validates a parsed file into a [`Scenario`]; `stem` is the default name.
pub(crate) fn validate(
    raw: Spanned<RawScenario>,
    src: &Source<'_>,
    stem: &str,
) -> Result<Scenario, Error> {
    let c = Checker { src };
    let raw = raw.value;

    let name = match &raw.name {
        Some(s) if s.value.trim().is_empty() => {
            return Err(c.err(
                ErrorKind::BadValue,
                Some(s.referenced),
                "name",
                "the name is empty",
                "give a short name, or leave `name` out to use the file name",
            ));
        }
        Some(s) => s.value.clone(),
        None => stem.to_string(),
    };
    let description = val(&raw.description).unwrap_or_default();
    let seed = val(&raw.seed).unwrap_or(1);
    let duration = c.dur(&raw.duration, "duration", SimDuration::from_secs(60), true)?;
    let warmup = c.dur(&raw.warmup, "warmup", SimDuration::ZERO, false)?;
    if warmup >= duration {
        return Err(c.err(
            ErrorKind::Conflict,
            loc(&raw.warmup),
            "warmup",
            format!("the warm-up ({warmup}) must be shorter than the duration ({duration})"),
            "lengthen `duration` or shorten `warmup`; the warm-up is part of the duration",
        ));
    }
    let max_events = c.int(
        &raw.max_events,
        "max_events",
        DEFAULT_MAX_EVENTS,
        1,
        u64::MAX,
    )?;
    let cpus = c.int(&raw.cpus, "cpus", 1, 1, 1024)?;

    let hz = match raw.kernel.as_ref().and_then(|k| k.value.hz.as_ref()) {
        None => 250,
        Some(s) if HZ_VALUES.contains(&s.value) => s.value,
        Some(s) => {
            return Err(c.err(
                ErrorKind::BadValue,
                Some(s.referenced),
                "kernel.hz",
                format!("HZ must be 100, 250, 300 or 1000, got {}", s.value),
                "these are the kernel's CONFIG_HZ choices; 250 is the default",
            ));
        }
    };
    let kernel = KernelConfig::new(hz);

    let device = match &raw.device {
        Some(d) => device(&c, &d.value, d.referenced)?,
        None => {
            return Err(c.err(
                ErrorKind::Missing,
                None,
                "device",
                "the scenario has no device",
                "add one, e.g. `device: { kind: hdd5400 }`; kinds: hdd5400, hdd7200, nvme, generic",
            ));
        }
    };
    let block = block(&c, raw.block.as_ref().map(|b| &b.value), &kernel)?;
    let crypt = crypt(&c, raw.crypt.as_ref().map(|b| &b.value))?;
    let policies = policies(&c, &raw.policies)?;

    let raw_workloads = match &raw.workloads {
        Some(w) if !w.value.is_empty() => w,
        other => {
            return Err(c.err(
                ErrorKind::Missing,
                loc(other),
                "workloads",
                "the scenario has no workload",
                format!("add at least one, for example:\n{MINIMAL_SCENARIO}"),
            ));
        }
    };
    let capacity = match &device {
        DeviceConfig::Hdd(h) => Some(h.capacity),
        _ => None,
    };
    let mut workloads: Vec<WorkloadConfig> = Vec::new();
    let mut names: HashSet<String> = HashSet::new();
    let mut cursor = 0u64;
    for (i, w) in raw_workloads.value.iter().enumerate() {
        let path = format!("workloads[{i}]");
        let wl = workload(&c, &w.value, w.referenced, &path, i, &mut cursor, capacity)?;
        if !names.insert(wl.name.clone()) {
            return Err(c.err(
                ErrorKind::Conflict,
                loc(&w.value.name).or(Some(w.referenced)),
                &at(&path, "name"),
                format!("workload name `{}` is used twice", wl.name),
                "give each workload its own `name:` (the default is <kind><index>)",
            ));
        }
        workloads.push(wl);
    }

    Ok(Scenario {
        name,
        description,
        seed,
        duration,
        warmup,
        max_events,
        cpus,
        kernel,
        device,
        block,
        crypt,
        policies,
        workloads,
        memory: None,
        variants: Vec::new(),
    })
}

fn device(c: &Checker, d: &RawDevice, here: Location) -> Result<DeviceConfig, Error> {
    let Some(kind) = &d.kind else {
        return Err(c.err(
            ErrorKind::Missing,
            Some(here),
            "device",
            "the device has no `kind`",
            "add `kind:` with one of hdd5400, hdd7200, nvme, generic",
        ));
    };
    let kind = kind.value;
    let owner = format!("device kind `{}`", kind.name());
    let present = d.present();
    let queue_depth =
        |default: u32| c.int(&d.queue_depth, "device.queue_depth", default, 1, 1_000_000);
    match kind {
        DeviceKind::Hdd5400 | DeviceKind::Hdd7200 => {
            c.only(&present, HDD_FIELDS, "device", &owner)?;
            let p = if kind == DeviceKind::Hdd5400 {
                &HDD5400
            } else {
                &HDD7200
            };
            let seek_min = c.dur(&d.seek_min, "device.seek_min", p.seek_min, false)?;
            let seek_full = match &d.seek_full {
                Some(s) => s.value.0,
                None if seek_min > p.seek_mean => {
                    return Err(c.err(
                        ErrorKind::Conflict,
                        loc(&d.seek_min),
                        "device.seek_min",
                        format!(
                            "seek_min {seek_min} exceeds the preset's mean seek {}",
                            p.seek_mean
                        ),
                        "give `seek_full` as well, or a smaller seek_min",
                    ));
                }
                None => seek_full_for_mean(seek_min, p.seek_mean),
            };
            if seek_full < seek_min {
                return Err(c.err(
                    ErrorKind::Conflict,
                    loc(&d.seek_full),
                    "device.seek_full",
                    format!(
                        "the full-stroke seek ({seek_full}) is shorter than seek_min ({seek_min})"
                    ),
                    "seek_full is the longest seek; make it at least seek_min",
                ));
            }
            let revolution = c.dur(&d.revolution, "device.revolution", revolution(p.rpm), true)?;
            let transfer_rate = match &d.transfer_rate {
                Some(s) => c.bandwidth(s, "device.transfer_rate")?,
                None => p.transfer_rate,
            };
            let capacity = match &d.capacity {
                Some(s) if s.value.0 == 0 => {
                    return Err(c.err(
                        ErrorKind::BadValue,
                        Some(s.referenced),
                        "device.capacity",
                        "the capacity is zero",
                        "give the disk size, e.g. 320GB or 1TB",
                    ));
                }
                Some(s) => s.value.0,
                None => p.capacity,
            };
            let custom = !present.is_empty();
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
                queue_depth: queue_depth(p.queue_depth)?,
            }))
        }
        DeviceKind::Nvme => {
            c.only(&present, NVME_FIELDS, "device", &owner)?;
            let transfer_rate = match &d.transfer_rate {
                Some(s) => c.bandwidth(s, "device.transfer_rate")?,
                None => NVME_RATE,
            };
            Ok(DeviceConfig::Nvme(NvmeConfig {
                latency: c.dur(&d.latency, "device.latency", NVME_LATENCY, false)?,
                channels: c.int(&d.channels, "device.channels", 1, 1, 4096)?,
                overhead: c.dur(
                    &d.overhead,
                    "device.overhead",
                    nvme_overhead(transfer_rate),
                    false,
                )?,
                transfer_rate,
                queue_depth: queue_depth(NVME_QUEUE_DEPTH)?,
            }))
        }
        DeviceKind::Generic => {
            c.only(&present, GENERIC_FIELDS, "device", &owner)?;
            let Some(service) = &d.service else {
                return Err(c.err(
                    ErrorKind::Missing,
                    Some(here),
                    "device.service",
                    "a generic device needs a `service` distribution",
                    "e.g. `service: {kind: exponential, mean: 1ms}`, or `service: 1ms` for a constant",
                ));
            };
            Ok(DeviceConfig::Generic(GenericDeviceConfig {
                service: distribution(c, service, "device.service")?,
                channels: c.int(&d.channels, "device.channels", 1, 1, 4096)?,
                queue_depth: queue_depth(1_000_000)?,
            }))
        }
    }
}

fn block(c: &Checker, b: Option<&RawBlock>, kernel: &KernelConfig) -> Result<BlockConfig, Error> {
    let empty = RawBlock {
        mode: None,
        nr_requests: None,
        elevator: None,
        plug: None,
        unplug_threshold: None,
        low_latency: None,
        slice_sync: None,
        slice_async: None,
        slice_idle: None,
        quantum: None,
    };
    let b = b.unwrap_or(&empty);
    let mode = match val(&b.mode) {
        Some(QueueModeName::BlkMq) => QueueMode::BlkMq,
        _ => QueueMode::Legacy,
    };
    let nr_requests = c.int(&b.nr_requests, "block.nr_requests", 128, 4, 100_000)?;
    let elevator = match (mode, &b.elevator) {
        (QueueMode::BlkMq, Some(e)) if e.value == ElevatorName::Cfq => {
            return Err(c.err(
                ErrorKind::Conflict,
                Some(e.referenced),
                "block.elevator",
                "blk-mq has no CFQ elevator",
                "leave `elevator` out (or write fifo) under blk-mq, or use mode: legacy",
            ));
        }
        (QueueMode::BlkMq, _) => Elevator::Fifo,
        (QueueMode::Legacy, Some(e)) if e.value == ElevatorName::Fifo => Elevator::Fifo,
        (QueueMode::Legacy, _) => Elevator::Cfq,
    };
    let plug = match (mode, &b.plug) {
        (QueueMode::BlkMq, Some(p)) if p.value => {
            return Err(c.err(
                ErrorKind::Conflict,
                Some(p.referenced),
                "block.plug",
                "blk-mq queues are not plugged in this model",
                "leave `plug` out under blk-mq, or use mode: legacy",
            ));
        }
        (QueueMode::BlkMq, _) => false,
        (QueueMode::Legacy, p) => val(p).unwrap_or(true),
    };
    if !plug && let Some(u) = &b.unplug_threshold {
        return Err(c.err(
            ErrorKind::Conflict,
            Some(u.referenced),
            "block.unplug_threshold",
            "`unplug_threshold` applies only to a plugged queue",
            "remove it, or plug the queue (legacy mode, plug: true)",
        ));
    }
    let unplug_threshold = c.int(
        &b.unplug_threshold,
        "block.unplug_threshold",
        4,
        1,
        1_000_000,
    )?;
    if elevator != Elevator::Cfq {
        let owner = if mode == QueueMode::BlkMq {
            "a blk-mq queue"
        } else {
            "the fifo elevator"
        };
        c.only(&b.cfq_fields(), &[], "block", owner)
            .map_err(|mut e| {
                e.0.hint = Some("CFQ settings need mode: legacy and elevator: cfq".to_string());
                e
            })?;
    }
    Ok(BlockConfig {
        mode,
        nr_requests,
        elevator,
        plug,
        unplug_threshold,
        low_latency: val(&b.low_latency).unwrap_or(true),
        cfq_slice_sync: c.dur(&b.slice_sync, "block.slice_sync", kernel.hz_div(10), true)?,
        cfq_slice_async: c.dur(&b.slice_async, "block.slice_async", kernel.hz_div(25), true)?,
        cfq_slice_idle: c.dur(&b.slice_idle, "block.slice_idle", kernel.hz_div(125), false)?,
        cfq_quantum: c.int(&b.quantum, "block.quantum", 4, 1, 1024)?,
    })
}

fn crypt(c: &Checker, r: Option<&RawCrypt>) -> Result<CryptConfig, Error> {
    let empty = RawCrypt {
        cipher: None,
        encrypt_rate: None,
        decrypt_rate: None,
        per_sector_cost: None,
        hop_cost: None,
        cost: None,
        engine: None,
        async_queue_limit: None,
        async_rate: None,
        unplug_after_submit: None,
    };
    let r = r.unwrap_or(&empty);
    let cipher = val(&r.cipher).unwrap_or(CipherName::Aes2009);
    let (mut encrypt_rate, mut decrypt_rate) = cipher_rates(cipher);
    if let Some(s) = &r.encrypt_rate {
        encrypt_rate = c.bandwidth(s, "crypt.encrypt_rate")?;
    }
    if let Some(s) = &r.decrypt_rate {
        decrypt_rate = c.bandwidth(s, "crypt.decrypt_rate")?;
    }
    let custom = r.encrypt_rate.is_some() || r.decrypt_rate.is_some();
    let engine = match val(&r.engine).unwrap_or(EngineName::Sync) {
        EngineName::Sync => {
            let stray = [
                ("async_queue_limit", loc(&r.async_queue_limit)),
                ("async_rate", loc(&r.async_rate)),
            ];
            if let Some((name, l)) = stray.iter().find(|(_, l)| l.is_some()) {
                return Err(c.err(
                    ErrorKind::Conflict,
                    *l,
                    &at("crypt", name),
                    format!("`{name}` applies only to engine: async"),
                    "add `engine: async`, or remove it",
                ));
            }
            CryptoEngine::Sync
        }
        EngineName::Async => CryptoEngine::Async {
            queue_limit: c.int(
                &r.async_queue_limit,
                "crypt.async_queue_limit",
                100,
                1,
                1_000_000,
            )?,
            rate: match &r.async_rate {
                Some(s) => c.bandwidth(s, "crypt.async_rate")?,
                None => encrypt_rate,
            },
        },
    };
    Ok(CryptConfig {
        cipher: if custom {
            format!("{} (custom rates)", cipher.name())
        } else {
            cipher.name().to_string()
        },
        encrypt_rate,
        decrypt_rate,
        per_sector_cost: c.dur(
            &r.per_sector_cost,
            "crypt.per_sector_cost",
            SimDuration::ZERO,
            false,
        )?,
        hop_cost: c.dur(
            &r.hop_cost,
            "crypt.hop_cost",
            SimDuration::from_us(10),
            false,
        )?,
        cost: match &r.cost {
            Some(d) => Some(distribution(c, d, "crypt.cost")?),
            None => None,
        },
        engine,
        unplug_after_submit: val(&r.unplug_after_submit).unwrap_or(false),
    })
}

fn policies(c: &Checker, f: &Field<Vec<Spanned<String>>>) -> Result<Vec<String>, Error> {
    let valid = crate::model::policy_names();
    let Some(list) = f else {
        return Ok(vec!["fifo".to_string()]);
    };
    if list.value.is_empty() {
        return Err(c.err(
            ErrorKind::Missing,
            Some(list.referenced),
            "policies",
            "the policy list is empty",
            format!("name at least one of: {}", valid.join(", ")),
        ));
    }
    let mut out: Vec<String> = Vec::new();
    for (i, p) in list.value.iter().enumerate() {
        let path = format!("policies[{i}]");
        if !valid.contains(&p.value.as_str()) {
            let hint = match suggestion(&p.value, &valid) {
                Some(s) => format!("did you mean `{s}`? valid policies: {}", valid.join(", ")),
                None => format!("valid policies: {}", valid.join(", ")),
            };
            return Err(c.err(
                ErrorKind::UnknownName,
                Some(p.referenced),
                &path,
                format!("unknown policy `{}`", p.value),
                hint,
            ));
        }
        if out.contains(&p.value) {
            return Err(c.err(
                ErrorKind::Conflict,
                Some(p.referenced),
                &path,
                format!("policy `{}` is listed twice", p.value),
                "list each policy once; replications, not repeats, measure noise",
            ));
        }
        out.push(p.value.clone());
    }
    Ok(out)
}

fn distribution(
    c: &Checker,
    d: &Spanned<RawDistribution>,
    path: &str,
) -> Result<Distribution, Error> {
    let m = match &d.value {
        RawDistribution::Fixed(v) => return Ok(Distribution::Deterministic { value: v.0 }),
        RawDistribution::Map(m) => m,
    };
    let kinds = "deterministic, exponential, uniform, lognormal, empirical";
    let Some(kind) = &m.kind else {
        return Err(c.err(
            ErrorKind::Missing,
            Some(d.referenced),
            path,
            "the distribution has no `kind`",
            format!("add `kind:` with one of {kinds}; a bare duration (1ms) means a constant"),
        ));
    };
    let kind = kind.value;
    let allowed: &[&str] = match kind {
        DistKind::Deterministic => &["value"],
        DistKind::Exponential => &["mean"],
        DistKind::Uniform => &["low", "high"],
        DistKind::Lognormal => &["mean", "stddev"],
        DistKind::Empirical => &["values"],
    };
    c.only(
        &m.present(),
        allowed,
        path,
        &format!("a `{}` distribution", kind.name()),
    )?;
    let need = |f: &Field<Duration>, name: &str| -> Result<SimDuration, Error> {
        f.as_ref().map(|s| s.value.0).ok_or_else(|| {
            c.err(
                ErrorKind::Missing,
                Some(d.referenced),
                &at(path, name),
                format!("a `{}` distribution needs `{name}`", kind.name()),
                format!("it takes: {}", allowed.join(", ")),
            )
        })
    };
    Ok(match kind {
        DistKind::Deterministic => Distribution::Deterministic {
            value: need(&m.value, "value")?,
        },
        DistKind::Exponential => {
            let mean = need(&m.mean, "mean")?;
            if mean.is_zero() {
                return Err(c.err(
                    ErrorKind::BadValue,
                    loc(&m.mean),
                    &at(path, "mean"),
                    "an exponential mean must be longer than zero",
                    "for no delay at all, leave the field out",
                ));
            }
            Distribution::Exponential { mean }
        }
        DistKind::Uniform => {
            let (low, high) = (need(&m.low, "low")?, need(&m.high, "high")?);
            if high < low {
                return Err(c.err(
                    ErrorKind::Conflict,
                    loc(&m.high),
                    &at(path, "high"),
                    format!("high ({high}) is below low ({low})"),
                    "swap them",
                ));
            }
            Distribution::Uniform { low, high }
        }
        DistKind::Lognormal => {
            let mean = need(&m.mean, "mean")?;
            if mean.is_zero() {
                return Err(c.err(
                    ErrorKind::BadValue,
                    loc(&m.mean),
                    &at(path, "mean"),
                    "a lognormal mean must be longer than zero",
                    "use a deterministic 0 for no delay",
                ));
            }
            Distribution::Lognormal {
                mean,
                stddev: need(&m.stddev, "stddev")?,
            }
        }
        DistKind::Empirical => {
            let values = match &m.values {
                Some(v) if !v.value.is_empty() && v.value.len() <= 1_000_000 => {
                    v.value.iter().map(|x| x.value.0).collect()
                }
                Some(v) => {
                    return Err(c.err(
                        ErrorKind::BadValue,
                        Some(v.referenced),
                        &at(path, "values"),
                        format!("needs 1 to 1000000 values, got {}", v.value.len()),
                        "list observed durations: [1ms, 2ms, 1.5ms]",
                    ));
                }
                None => {
                    return Err(c.err(
                        ErrorKind::Missing,
                        Some(d.referenced),
                        &at(path, "values"),
                        "an `empirical` distribution needs `values`",
                        "list observed durations: [1ms, 2ms, 1.5ms]",
                    ));
                }
            };
            Distribution::Empirical { values }
        }
    })
}

fn workload(
    c: &Checker,
    w: &RawWorkload,
    here: Location,
    path: &str,
    index: usize,
    cursor: &mut u64,
    capacity: Option<u64>,
) -> Result<WorkloadConfig, Error> {
    let Some(kind) = &w.kind else {
        return Err(c.err(
            ErrorKind::Missing,
            Some(here),
            path,
            "the workload has no `kind`",
            "add `kind:` with one of fio, gitk, buffered-writer",
        ));
    };
    let kind = kind.value;
    let name = match &w.name {
        Some(s) if s.value.trim().is_empty() => {
            return Err(c.err(
                ErrorKind::BadValue,
                Some(s.referenced),
                &at(path, "name"),
                "the name is empty",
                "give a short name, or leave it out for <kind><index>",
            ));
        }
        Some(s) => s.value.clone(),
        None => format!("{}{index}", kind.name()),
    };
    let owner = format!("workload kind `{}`", kind.name());
    let p = |f: &str| at(path, f);
    let size_of = |f: &Field<super::units::Size>, name: &str, default: u64| -> Result<u64, Error> {
        let v = val(f).map(|s| s.0).unwrap_or(default);
        c.size_multiple(v, f, &p(name))?;
        Ok(v)
    };
    let request_size =
        |f: &Field<super::units::Size>, name: &str, default: u64| -> Result<u64, Error> {
            let v = size_of(f, name, default)?;
            if v == 0 || v > MAX_REQUEST_BYTES {
                return Err(c.err(
                    ErrorKind::BadValue,
                    loc(f),
                    &p(name),
                    format!("must be between 512 and 512KiB, got {}", format_bytes(v)),
                    "the largest request is 1024 sectors = 512KiB",
                ));
            }
            Ok(v)
        };
    let gitk = kind == WorkloadKindName::Gitk;
    let (kind_cfg, region_size) = match kind {
        WorkloadKindName::Fio | WorkloadKindName::Gitk => {
            c.only(&w.present(), FIO_FIELDS, path, &owner)?;
            let rw = match val(&w.rw).unwrap_or(RwName::RandRead) {
                RwName::Read => RwKind::Read,
                RwName::Write => RwKind::Write,
                RwName::RandRead => RwKind::RandRead,
                RwName::RandWrite => RwKind::RandWrite,
                RwName::RandRw => RwKind::RandRw,
            };
            if rw != RwKind::RandRw
                && let Some(m) = &w.rwmixread
            {
                return Err(c.err(
                    ErrorKind::Conflict,
                    Some(m.referenced),
                    &p("rwmixread"),
                    "`rwmixread` applies only to rw: randrw",
                    "set `rw: randrw`, or remove rwmixread",
                ));
            }
            let rwmixread = c.int(&w.rwmixread, &p("rwmixread"), 50, 0, 100)?;
            let bs = request_size(&w.bs, "bs", 4096)?;
            let size = size_of(&w.size, "size", if gitk { 256 << 20 } else { 1 << 30 })?;
            if size < bs {
                return Err(c.err(
                    ErrorKind::Conflict,
                    loc(&w.size).or(loc(&w.bs)),
                    &p("size"),
                    format!(
                        "the region ({}) is smaller than one block ({})",
                        format_bytes(size),
                        format_bytes(bs)
                    ),
                    "make `size` at least `bs`",
                ));
            }
            let iodepth = c.int(&w.iodepth, &p("iodepth"), 1, 1, 65_536)?;
            let arrivals = match &w.rate {
                Some(rate) => {
                    if let Some(t) = &w.think {
                        return Err(c.err(
                            ErrorKind::Conflict,
                            Some(t.referenced),
                            &p("think"),
                            "`think` applies only to a closed loop, and `rate` makes this job open-loop",
                            "keep `rate` (open loop) or `think` (closed loop), not both",
                        ));
                    }
                    Arrivals::Open {
                        rate: rate.value.ops_per_sec(bs),
                        poisson: val(&w.arrivals).unwrap_or(ArrivalsName::Poisson)
                            == ArrivalsName::Poisson,
                        iodepth,
                    }
                }
                None => {
                    if let Some(a) = &w.arrivals {
                        return Err(c.err(
                            ErrorKind::Conflict,
                            Some(a.referenced),
                            &p("arrivals"),
                            "`arrivals` applies only with `rate` (an open loop)",
                            "add `rate: 2000/s`, or remove arrivals",
                        ));
                    }
                    let think = match &w.think {
                        Some(t) => Some(distribution(c, t, &p("think"))?),
                        None if gitk => Some(Distribution::Exponential {
                            mean: SimDuration::from_ms(2),
                        }),
                        None => None,
                    };
                    Arrivals::Closed { iodepth, think }
                }
            };
            let offset = region(c, w, path, size, cursor, capacity)?;
            (
                WorkloadKind::Fio(FioJob {
                    rw,
                    rwmixread,
                    bs,
                    size,
                    offset,
                    arrivals,
                    numjobs: c.int(&w.numjobs, &p("numjobs"), 1, 1, 1024)?,
                    sync_writes: val(&w.sync).unwrap_or(false),
                    direct: false,
                }),
                size,
            )
        }
        WorkloadKindName::BufferedWriter => {
            c.only(&w.present(), WRITER_FIELDS, path, &owner)?;
            let Some(rate) = &w.rate else {
                return Err(c.err(
                    ErrorKind::Missing,
                    Some(here),
                    &p("rate"),
                    "a buffered writer needs a `rate`",
                    "the rate at which it dirties page cache, e.g. `rate: 20MB/s`",
                ));
            };
            let rate = c.bandwidth(rate, &p("rate"))?;
            let chunk = request_size(&w.chunk, "chunk", MAX_REQUEST_BYTES)?;
            let background = val(&w.background).map(|s| s.0).unwrap_or(0);
            let dirty_limit = val(&w.dirty_limit).map(|s| s.0).unwrap_or(64 << 20);
            if dirty_limit < chunk {
                return Err(c.err(
                    ErrorKind::Conflict,
                    loc(&w.dirty_limit),
                    &p("dirty_limit"),
                    format!(
                        "the dirty limit ({}) is below one chunk ({})",
                        format_bytes(dirty_limit),
                        format_bytes(chunk)
                    ),
                    "raise dirty_limit to at least one chunk",
                ));
            }
            if background >= dirty_limit {
                return Err(c.err(
                    ErrorKind::Conflict,
                    loc(&w.background),
                    &p("background"),
                    format!(
                        "the background threshold ({}) must be below the dirty limit ({})",
                        format_bytes(background),
                        format_bytes(dirty_limit)
                    ),
                    "lower background or raise dirty_limit",
                ));
            }
            let size = size_of(&w.size, "size", 1 << 30)?;
            if size < chunk {
                return Err(c.err(
                    ErrorKind::Conflict,
                    loc(&w.size),
                    &p("size"),
                    format!(
                        "the region ({}) is smaller than one chunk ({})",
                        format_bytes(size),
                        format_bytes(chunk)
                    ),
                    "make `size` at least `chunk`",
                ));
            }
            let offset = region(c, w, path, size, cursor, capacity)?;
            (
                WorkloadKind::BufferedWriter(BufferedWriter {
                    rate,
                    chunk,
                    background_bytes: background,
                    dirty_limit_bytes: dirty_limit,
                    size,
                    offset,
                }),
                size,
            )
        }
    };
    debug_assert!(region_size > 0);
    Ok(WorkloadConfig {
        name,
        kind: kind_cfg,
    })
}

/// The region's offset (given, or right after the previous workload's region), checked to be
/// sector-aligned and inside the disk; moves the layout cursor past the region.
fn region(
    c: &Checker,
    w: &RawWorkload,
    path: &str,
    size: u64,
    cursor: &mut u64,
    capacity: Option<u64>,
) -> Result<u64, Error> {
    let offset = val(&w.offset).map(|s| s.0).unwrap_or(*cursor);
    c.size_multiple(offset, &w.offset, &at(path, "offset"))?;
    let end = offset.saturating_add(size);
    if let Some(cap) = capacity
        && end > cap
    {
        return Err(c.err(
            ErrorKind::Conflict,
            loc(&w.offset).or(loc(&w.size)),
            &at(path, if w.offset.is_some() { "offset" } else { "size" }),
            format!(
                "the region {}..{} runs past the end of the disk ({})",
                format_bytes(offset),
                format_bytes(end),
                format_bytes(cap)
            ),
            "shrink `size`, move `offset`, or give the device a larger `capacity`",
        ));
    }
    *cursor = end;
    Ok(offset)
}

#[cfg(test)]
mod tests {
    use super::super::describe::{crypto_cost, describe, mean_service, moments};
    use super::super::load_str;
    use super::*;

    fn ok(text: &str) -> Scenario {
        load_str("t.yaml", text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn err(text: &str) -> Error {
        load_str("t.yaml", text).expect_err("should fail")
    }

    const BASE: &str = "device: { kind: hdd5400 }\nworkloads:\n  - kind: fio\n";

    #[test]
    fn defaults_fill_everything() {
        let s = ok(BASE);
        assert_eq!(s.name, "t");
        assert_eq!(s.seed, 1);
        assert_eq!(s.duration, SimDuration::from_secs(60));
        assert_eq!(s.warmup, SimDuration::ZERO);
        assert_eq!(s.max_events, DEFAULT_MAX_EVENTS);
        assert_eq!(s.cpus, 1);
        assert_eq!(s.kernel.hz, 250);
        assert_eq!(s.policies, vec!["fifo"]);
        assert_eq!(s.block.mode, QueueMode::Legacy);
        assert_eq!(s.block.nr_requests, 128);
        assert_eq!(s.block.elevator, Elevator::Cfq);
        assert!(s.block.plug);
        assert_eq!(s.block.unplug_threshold, 4);
        assert_eq!(s.block.cfq_slice_sync, SimDuration::from_ms(100));
        assert_eq!(s.block.cfq_slice_async, SimDuration::from_ms(40));
        assert_eq!(s.block.cfq_slice_idle, SimDuration::from_ms(8));
        assert_eq!(s.block.cfq_quantum, 4);
        assert_eq!(s.crypt.cipher, "aes-2009");
        assert_eq!(s.crypt.encrypt_rate, 60e6);
        assert_eq!(s.crypt.hop_cost, SimDuration::from_us(10));
        assert!(matches!(s.crypt.engine, CryptoEngine::Sync));
        let WorkloadKind::Fio(f) = &s.workloads[0].kind else {
            panic!("fio")
        };
        assert_eq!(s.workloads[0].name, "fio0");
        assert_eq!(
            (f.rw, f.bs, f.size, f.offset, f.numjobs),
            (RwKind::RandRead, 4096, 1 << 30, 0, 1)
        );
        assert!(matches!(
            f.arrivals,
            Arrivals::Closed {
                iodepth: 1,
                think: None
            }
        ));
    }

    #[test]
    fn hdd_presets_hit_their_mean_seek() {
        let s = ok(BASE);
        let DeviceConfig::Hdd(h) = &s.device else {
            panic!("hdd")
        };
        assert_eq!(h.seek_full, SimDuration::from_us(20_750));
        assert_eq!(mean_random_seek(h), SimDuration::from_ms(12));
        assert_eq!(h.revolution, SimDuration::from_ns(11_111_111));
        assert_eq!((h.capacity, h.queue_depth), (320_000_000_000, 1));
        let s = ok("device: { kind: hdd7200 }\nworkloads:\n  - kind: fio\n");
        let DeviceConfig::Hdd(h) = &s.device else {
            panic!("hdd")
        };
        assert_eq!(mean_random_seek(h), SimDuration::from_us(8_500));
        assert_eq!((h.transfer_rate, h.queue_depth), (105e6, 31));
        // 12ms + 11.111ms/2 + 4096/60MB/s = 17.624ms
        let t = mean_service(&ok(BASE).device, 4096, true);
        assert!((t.as_secs_f64() - 0.017_624).abs() < 1e-6, "{t}");
    }

    #[test]
    fn nvme_preset_gives_193k_iops() {
        let s = ok("device: { kind: nvme }\nworkloads:\n  - kind: fio\n");
        let DeviceConfig::Nvme(n) = &s.device else {
            panic!("nvme")
        };
        let per = n.overhead.as_secs_f64() + 4096.0 / n.transfer_rate;
        assert!((1.0 / per - 193_000.0).abs() < 100.0, "{}", 1.0 / per);
        assert_eq!(n.queue_depth, 1023);
    }

    #[test]
    fn gitk_preset_and_overrides() {
        let s = ok(
            "device: { kind: nvme }\nworkloads:\n  - kind: gitk\n  - kind: gitk\n    iodepth: 4\n    think: 1ms\n",
        );
        let WorkloadKind::Fio(f) = &s.workloads[0].kind else {
            panic!("fio")
        };
        assert_eq!(f.size, 256 << 20);
        assert!(
            matches!(&f.arrivals, Arrivals::Closed { iodepth: 1, think: Some(Distribution::Exponential { mean }) } if *mean == SimDuration::from_ms(2))
        );
        let WorkloadKind::Fio(g) = &s.workloads[1].kind else {
            panic!("fio")
        };
        assert_eq!(g.offset, 256 << 20, "regions follow one another");
        assert!(matches!(
            &g.arrivals,
            Arrivals::Closed {
                iodepth: 4,
                think: Some(Distribution::Deterministic { .. })
            }
        ));
        assert_eq!(s.workloads[1].name, "gitk1");
    }

    #[test]
    fn open_loop_rates_convert_bandwidth_with_bs() {
        let s = ok(
            "device: { kind: nvme }\nworkloads:\n  - kind: fio\n    bs: 64k\n    rate: 64MiB/s\n    arrivals: constant\n",
        );
        let WorkloadKind::Fio(f) = &s.workloads[0].kind else {
            panic!("fio")
        };
        assert!(
            matches!(f.arrivals, Arrivals::Open { rate, poisson: false, iodepth: 1 } if rate == 1024.0)
        );
    }

    #[test]
    fn fields_of_another_kind_are_refused_where_they_stand() {
        let e = err("device:\n  kind: hdd5400\n  latency: 45us\nworkloads:\n  - kind: fio\n");
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert_eq!((e.line(), e.path()), (Some(3), Some("device.latency")));
        assert!(e.hint().unwrap().contains("seek_min"), "{e}");
        let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    chunk: 64k\n");
        assert_eq!(e.path(), Some("workloads[0].chunk"));
        let e = err(
            "device: { kind: nvme }\nworkloads:\n  - kind: fio\n    think: { kind: exponential, value: 1ms }\n",
        );
        assert_eq!(e.path(), Some("workloads[0].think.value"));
        assert_eq!(e.line(), Some(4));
    }

    #[test]
    fn cross_field_checks() {
        let e = err(&format!("{BASE}duration: 5s\nwarmup: 5s\n"));
        assert_eq!(e.path(), Some("warmup"));
        let e = err(&format!("{BASE}kernel: {{ hz: 200 }}\n"));
        assert_eq!(e.path(), Some("kernel.hz"));
        let e = err(&format!("{BASE}block: {{ mode: blk-mq, elevator: cfq }}\n"));
        assert_eq!(e.path(), Some("block.elevator"));
        let e = err(&format!(
            "{BASE}block: {{ elevator: fifo, slice_idle: 0 }}\n"
        ));
        assert_eq!(e.path(), Some("block.slice_idle"));
        let e = err(&format!("{BASE}crypt: {{ async_rate: 1GB/s }}\n"));
        assert_eq!(e.path(), Some("crypt.async_rate"));
        let e = err(&format!("{BASE}crypt: {{ encrypt_rate: 500/s }}\n"));
        assert!(e.message().contains("bandwidth"), "{e}");
        let e = err(
            "device: { kind: nvme }\nworkloads:\n  - kind: fio\n    rate: 10/s\n    think: 1ms\n",
        );
        assert_eq!(e.path(), Some("workloads[0].think"));
        let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    bs: 1M\n");
        assert!(e.message().contains("512KiB"), "{e}");
        let e = err(
            "device: { kind: nvme }\nworkloads:\n  - kind: fio\n  - kind: fio\n    name: fio0\n",
        );
        assert_eq!(e.path(), Some("workloads[1].name"));
        let e = err("device: { kind: hdd5400 }\nworkloads:\n  - kind: fio\n    size: 400GB\n");
        assert!(e.message().contains("past the end of the disk"), "{e}");
        let e = err("device: { kind: generic }\nworkloads:\n  - kind: fio\n");
        assert_eq!(e.path(), Some("device.service"));
        let e = err("device: { kind: nvme }\nworkloads:\n  - kind: buffered-writer\n");
        assert_eq!(e.path(), Some("workloads[0].rate"));
        let e =
            err("device: { kind: nvme }\nworkloads:\n  - kind: buffered-writer\n    rate: 10/s\n");
        assert!(e.message().contains("bandwidth"), "{e}");
    }

    #[test]
    fn policies_are_checked_against_the_registry() {
        let e = err(&format!("{BASE}policies: [fifo, splti]\n"));
        assert_eq!(e.kind(), ErrorKind::UnknownName);
        assert_eq!((e.line(), e.path()), (Some(4), Some("policies[1]")));
        assert!(e.hint().unwrap().contains("did you mean `split`?"), "{e}");
        for name in crate::model::policy_names() {
            assert!(e.hint().unwrap().contains(name));
        }
        let e = err(&format!("{BASE}policies: [fifo, fifo]\n"));
        assert!(e.message().contains("twice"));
        let e = err(&format!("{BASE}policies: []\n"));
        assert_eq!(e.kind(), ErrorKind::Missing);
    }

    #[test]
    fn missing_pieces_are_named() {
        let e = err("workloads:\n  - kind: fio\n");
        assert_eq!(e.path(), Some("device"));
        assert!(e.hint().unwrap().contains("hdd5400"));
        let e = err("device: { kind: nvme }\n");
        assert_eq!(e.path(), Some("workloads"));
        let e = err("device: { kind: nvme }\nworkloads:\n  - { name: x }\n");
        assert_eq!(e.path(), Some("workloads[0]"));
        let e = err("device: { channels: 2 }\nworkloads:\n  - kind: fio\n");
        assert_eq!(e.path(), Some("device"));
    }

    #[test]
    fn cipher_presets_and_custom_rates() {
        let s = ok(&format!("{BASE}crypt: {{ cipher: null }}\n"));
        assert!(s.crypt.encrypt_rate.is_infinite());
        assert_eq!(crypto_cost(&s.crypt, 4096, true), SimDuration::ZERO);
        let s = ok(&format!(
            "{BASE}crypt: {{ cipher: aes-ni, decrypt_rate: 3002MiB/s, engine: async }}\n"
        ));
        assert_eq!(s.crypt.cipher, "aes-ni (custom rates)");
        assert_eq!(s.crypt.encrypt_rate, 1432.0 * 1_048_576.0);
        assert!(
            matches!(s.crypt.engine, CryptoEngine::Async { queue_limit: 100, rate } if rate == 1432.0 * 1_048_576.0)
        );
        // 4 KiB at 60 MB/s = 68.267 µs, plus 8 sectors × 1 µs.
        let s = ok(&format!("{BASE}crypt: {{ per_sector_cost: 1us }}\n"));
        assert_eq!(
            crypto_cost(&s.crypt, 4096, true),
            SimDuration::from_ns(68_267 + 8_000)
        );
    }

    #[test]
    fn distribution_moments() {
        let (m, sd) = moments(&Distribution::Uniform {
            low: SimDuration::from_ms(1),
            high: SimDuration::from_ms(3),
        });
        assert!((m - 0.002).abs() < 1e-12 && (sd - 0.002 / 12f64.sqrt()).abs() < 1e-12);
        let (m, sd) = moments(&Distribution::Empirical {
            values: vec![SimDuration::from_ms(1), SimDuration::from_ms(3)],
        });
        assert!((m - 0.002).abs() < 1e-12 && (sd - 0.001).abs() < 1e-12);
    }

    #[test]
    fn describe_shows_derived_values() {
        let text = describe(&ok(BASE));
        assert!(
            text.contains("on at 113 requests per class, off below 103"),
            "{text}"
        );
        assert!(text.contains("unplug delay 4ms"), "{text}");
        assert!(text.contains("sync 100ms, async 40ms, idle 8ms"), "{text}");
        assert!(text.contains("12ms mean over random distances"), "{text}");
        assert!(text.contains("4KiB random read 17.624ms"), "{text}");
        assert!(text.contains("encrypt 68.267us"), "{text}");
        assert!(text.contains("offset 0B, size 1GiB"), "{text}");
    }
}
