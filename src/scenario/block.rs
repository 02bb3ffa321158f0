//! `block:`: the request queue's mode, size, plugging and elevator; and its `qsim check` rows.
//!
//! Under blk-mq, `nr_requests` (the tag count) stays 128 unless given, rather than following the
//! device's queue depth; `elevator` may only be `fifo`, and `plug`, `unplug_threshold` and the
//! CFQ fields are refused rather than ignored. CFQ fields are refused under `elevator: fifo` too.
//!
//! blk-mq's hardware side (docs/model/block.md §7–8): `hw_queues` defaults from the device (the
//! `nvme` preset one per CPU up to [`NVME_MAX_HW_QUEUES`], every other disk 1), `irq_cpus` to the
//! first CPU of each queue's group ([`default_irq_cpus`]), `rq_affinity` to 1, and `scheduler`
//! as `elevator_get_default` picks: `mq-deadline` for one hardware queue, `none` for several,
//! for the RAM disk (brd is bio-based: no request queue, `hw_queues`, `irq_cpus` and
//! `scheduler` refused) and for the generic device (a textbook server, not a driver: qsim's
//! choice). The mq-deadline tunables are refused unless the scheduler is mq-deadline; every
//! blk-mq field is refused under `mode: legacy` except `irq_cpus` and `rq_affinity`, which set
//! where a legacy queue's BLOCK_SOFTIRQ runs.
//!
//! `low_latency` follows `kernel.version`: off and refused when set to true before 2.6.32 (the
//! tunable does not exist there), on by default from 2.6.32. The version's other CFQ rules
//! ([`KernelVersion::cfq`]) are not settable; CFQ estimates `hw_tag` (the disk queues
//! commands) during the run, and whether the device's queue depth lets it stay set is checked
//! here.

use super::Error;
use super::check::{Checker, Zero, val};
use super::describe::{Rows, on_off, row};
use super::schema::{names, raw_section};
use super::types::*;
use super::units::Duration;
use crate::engine::SimDuration;
use crate::model::block::blkmq::{default_irq_cpus, map_queues};
use serde_saphyr::Spanned;

names! {
    /// `block.mode`.
    pub enum QueueModeName {
        /// Legacy request queue.
        Legacy = "legacy",
        /// blk-mq.
        BlkMq = "blk-mq",
    }
}

names! {
    /// `block.scheduler`.
    pub enum SchedulerName {
        /// No scheduler.
        None = "none",
        /// mq-deadline.
        MqDeadline = "mq-deadline",
    }
}

names! {
    /// `block.elevator`.
    pub enum ElevatorName {
        /// CFQ.
        Cfq = "cfq",
        /// noop / one FIFO.
        Fifo = "fifo",
    }
}

raw_section! {
    /// `block:`.
    pub struct RawBlock {
        /// legacy | blk-mq.
        [value] mode: QueueModeName,
        /// Requests per class, or tags.
        [value] nr_requests: u32,
        /// cfq | fifo.
        [value] elevator: ElevatorName,
        /// Plugging.
        [value] plug: bool,
        /// Queued requests that unplug.
        [value] unplug_threshold: u32,
        /// CFQ low_latency.
        [value] low_latency: bool,
        /// CFQ sync slice.
        [value] slice_sync: Duration,
        /// CFQ async slice.
        [value] slice_async: Duration,
        /// CFQ idle.
        [value] slice_idle: Duration,
        /// CFQ quantum.
        [value] quantum: u32,
        /// blk-mq hardware queues.
        [value] hw_queues: u32,
        /// The CPU taking each hardware queue's interrupt.
        [value] irq_cpus: Vec<Spanned<u32>>,
        /// 0, 1 or 2.
        [value] rq_affinity: u32,
        /// none | mq-deadline.
        [value] scheduler: SchedulerName,
        /// mq-deadline read expiry.
        [value] read_expire: Duration,
        /// mq-deadline write expiry.
        [value] write_expire: Duration,
        /// mq-deadline batch.
        [value] fifo_batch: u32,
        /// mq-deadline writes_starved.
        [value] writes_starved: u32,
    }
}

/// The fields only mq-deadline takes.
const DEADLINE_FIELDS: &[&str] = &[
    "read_expire",
    "write_expire",
    "fifo_batch",
    "writes_starved",
];

/// The fields only blk-mq takes (besides mq-deadline's).
const MQ_FIELDS: &[&str] = &["hw_queues", "scheduler"];

/// I/O queues the `nvme` preset's controller offers: assumed (the NVMe specification allows
/// up to 65535; consumer drives report from 8 to 128 in their Number of Queues feature), so
/// that up to 32 CPUs each get their own queue.
pub const NVME_MAX_HW_QUEUES: u32 = 32;

/// The fields only the CFQ elevator takes, refused under blk-mq and `elevator: fifo`.
const CFQ_FIELDS: &[&str] = &[
    "low_latency",
    "slice_sync",
    "slice_async",
    "slice_idle",
    "quantum",
];

/// The accepted range of each whole-number field of `block:` ([`super::check::int_range`]).
pub(crate) const INT_RANGES: &[(&str, u64, u64)] = &[
    ("block.nr_requests", 4, 100_000),
    ("block.unplug_threshold", 1, 1_000_000),
    ("block.quantum", 1, 1024),
    ("block.hw_queues", 1, 1024),
    ("block.rq_affinity", 0, 2),
    ("block.fifo_batch", 1, 1_000_000),
    ("block.writes_starved", 0, 1_000_000),
];

/// CFQ's `CFQ_HW_QUEUE_MIN`: a disk that takes at least this many requests at once counts as
/// queueing commands (`hw_tag`).
pub const CFQ_HW_QUEUE_MIN: u32 = 5;

/// Whether `device`'s queue depth reaches [`CFQ_HW_QUEUE_MIN`], so that CFQ's estimate of
/// `hw_tag` can find it queueing (the estimate itself is the run's: `src/model/block/cfq.rs`).
fn ncq_capable(device: &DeviceConfig) -> bool {
    let depth = match device {
        DeviceConfig::Hdd(h) => h.queue_depth,
        DeviceConfig::Nvme(n) => n.queue_depth,
        DeviceConfig::Generic(g) => g.queue_depth,
    };
    depth >= CFQ_HW_QUEUE_MIN
}

/// `block.low_latency`: the version's default (on from 2.6.32), refused when set to true on a
/// version that has no such tunable.
fn low_latency(c: &Checker, b: &RawBlock, kernel: &KernelConfig) -> Result<bool, Error> {
    let has = kernel.version.cfq().has_low_latency;
    match &b.low_latency {
        Some(l) if l.value && !has => Err(c.at("block.low_latency", l).conflict(
            format!(
                "CFQ's low_latency does not exist in {} (it arrived in 2.6.32)",
                kernel.version.name()
            ),
            format!(
                "remove `low_latency` (it is off on {}), or use kernel.version 2.6.32 or later",
                kernel.version.name()
            ),
        )),
        Some(l) => Ok(l.value),
        None => Ok(has),
    }
}

/// `block:` (all defaults when absent); the CFQ slices default to the kernel's HZ fractions.
pub(crate) fn block(
    c: &Checker,
    b: Option<&RawBlock>,
    kernel: &KernelConfig,
    device: &DeviceConfig,
    cpus: u32,
) -> Result<BlockConfig, Error> {
    let empty = RawBlock::default();
    let b = b.unwrap_or(&empty);
    let modern = kernel.version.is_modern();
    let mode = match val(&b.mode) {
        Some(QueueModeName::BlkMq) => QueueMode::BlkMq,
        Some(_) if modern => {
            return Err(c.at("block.mode", &b.mode).conflict(
                format!(
                    "kernel {} has only blk-mq: the legacy request queue went in 5.0",
                    kernel.version.name()
                ),
                "write `mode: blk-mq` or leave `mode` out (blk-mq is the default after 2.6.x)",
            ));
        }
        None if modern => QueueMode::BlkMq,
        _ => QueueMode::Legacy,
    };
    let nr_requests = c.int(&b.nr_requests, "block.nr_requests", 128)?;
    let elevator = elevator(c, b, mode)?;
    let plug = match (mode, &b.plug) {
        (QueueMode::BlkMq, Some(p)) if p.value => {
            return Err(c.at("block.plug", p).conflict(
                "blk-mq queues are not plugged in this model",
                "leave `plug` out under blk-mq, or use mode: legacy",
            ));
        }
        (QueueMode::BlkMq, _) => false,
        (QueueMode::Legacy, p) => val(p).unwrap_or(true),
    };
    if !plug && let Some(u) = &b.unplug_threshold {
        return Err(c.at("block.unplug_threshold", u).conflict(
            "`unplug_threshold` applies only to a plugged queue",
            "remove it, or plug the queue (legacy mode, plug: true)",
        ));
    }
    let unplug_threshold = c.int(&b.unplug_threshold, "block.unplug_threshold", 4)?;
    cfq_only(c, b, mode, elevator)?;
    Ok(BlockConfig {
        mode,
        nr_requests,
        elevator,
        plug,
        unplug_threshold,
        low_latency: low_latency(c, b, kernel)?,
        cfq_slice_sync: c.dur(
            &b.slice_sync,
            "block.slice_sync",
            kernel.hz_div(10),
            Zero::Refused,
        )?,
        cfq_slice_async: c.dur(
            &b.slice_async,
            "block.slice_async",
            kernel.hz_div(25),
            Zero::Refused,
        )?,
        cfq_slice_idle: c.dur(
            &b.slice_idle,
            "block.slice_idle",
            kernel.hz_div(125),
            Zero::Allowed,
        )?,
        cfq_quantum: c.int(&b.quantum, "block.quantum", 4)?,
        cfq: kernel.version.cfq(),
        ncq_capable: ncq_capable(device),
        mq: blk_mq(c, b, mode, kernel, device, cpus)?,
    })
}

/// Whether the device is the RAM disk (brd, a bio-based driver).
fn is_brd(device: &DeviceConfig) -> bool {
    matches!(device, DeviceConfig::Nvme(n) if n.preset == "ramdisk")
}

/// The device's hardware queues by default: an NVMe preset (`nvme`, `nvme-gen4`, `nvme-gen5`)
/// one per CPU up to [`NVME_MAX_HW_QUEUES`] (`nvme_setup_io_queues`), any other disk one (AHCI,
/// SAS).
fn default_hw_queues(device: &DeviceConfig, cpus: u32) -> u32 {
    match device {
        DeviceConfig::Nvme(n) if n.preset.starts_with("nvme") => cpus.min(NVME_MAX_HW_QUEUES),
        _ => 1,
    }
}

/// The blk-mq fields: hardware queues, interrupt CPUs, `rq_affinity`, the scheduler.
fn blk_mq(
    c: &Checker,
    b: &RawBlock,
    mode: QueueMode,
    kernel: &KernelConfig,
    device: &DeviceConfig,
    cpus: u32,
) -> Result<BlkMqConfig, Error> {
    let brd = is_brd(device);
    let present = b.present();
    let refuse = |fields: &[&str], owner: &str, hint: &str| {
        let bad: Vec<_> = present
            .iter()
            .copied()
            .filter(|(name, _)| fields.contains(name))
            .collect();
        c.only(&bad, &[], "block", owner).map_err(|mut e| {
            e.0.hint = Some(hint.to_string());
            e
        })
    };
    if mode == QueueMode::Legacy {
        refuse(
            &[MQ_FIELDS, DEADLINE_FIELDS].concat(),
            "a legacy queue",
            "hardware queues and mq schedulers need mode: blk-mq",
        )?;
    }
    if brd {
        refuse(
            &[MQ_FIELDS, DEADLINE_FIELDS, &["irq_cpus"]].concat(),
            "the RAM disk",
            "brd is bio-based: it has no hardware queue, interrupt or scheduler",
        )?;
    }
    let hw_queues = c.int(
        &b.hw_queues,
        "block.hw_queues",
        default_hw_queues(device, cpus),
    )?;
    if hw_queues > cpus {
        return Err(c.at("block.hw_queues", &b.hw_queues).bad_value(
            format!("{hw_queues} hardware queues for {cpus} CPUs"),
            "at most one hardware queue per CPU: blk_mq_map_queues leaves the others unmapped",
        ));
    }
    let irq_cpus = irq_cpus(c, b, hw_queues, cpus)?;
    let scheduler = scheduler(b, mode, hw_queues, brd, device);
    if scheduler != MqScheduler::MqDeadline {
        refuse(
            DEADLINE_FIELDS,
            "a queue without mq-deadline",
            "mq-deadline's tunables need scheduler: mq-deadline",
        )?;
    }
    let deadline = deadline(c, b, kernel)?;
    Ok(BlkMqConfig {
        hw_queues,
        irq_cpus,
        queue_map: map_queues(cpus, hw_queues),
        rq_affinity: c.int(&b.rq_affinity, "block.rq_affinity", 1)?,
        bio_based: brd,
        scheduler,
        deadline,
    })
}

/// mq-deadline's tunables over the kernel's defaults.
fn deadline(c: &Checker, b: &RawBlock, kernel: &KernelConfig) -> Result<DeadlineTunables, Error> {
    let k = DeadlineTunables::kernel(kernel);
    Ok(DeadlineTunables {
        read_expire: c.dur(
            &b.read_expire,
            "block.read_expire",
            k.read_expire,
            Zero::Allowed,
        )?,
        write_expire: c.dur(
            &b.write_expire,
            "block.write_expire",
            k.write_expire,
            Zero::Allowed,
        )?,
        fifo_batch: c.int(&b.fifo_batch, "block.fifo_batch", k.fifo_batch)?,
        writes_starved: c.int(&b.writes_starved, "block.writes_starved", k.writes_starved)?,
    })
}

/// `block.irq_cpus`: one CPU per hardware queue, each below `cpus`.
fn irq_cpus(c: &Checker, b: &RawBlock, hw_queues: u32, cpus: u32) -> Result<Vec<u32>, Error> {
    let Some(list) = &b.irq_cpus else {
        return Ok(default_irq_cpus(cpus, hw_queues));
    };
    if list.value.len() != hw_queues as usize {
        return Err(c.at("block.irq_cpus", list).bad_value(
            format!(
                "{} interrupt CPUs for {hw_queues} hardware queues",
                list.value.len()
            ),
            "give one CPU per hardware queue, e.g. [0, 1, 2, 3] for four queues",
        ));
    }
    list.value
        .iter()
        .map(|cpu| {
            if cpu.value < cpus {
                Ok(cpu.value)
            } else {
                Err(c.at("block.irq_cpus", cpu).bad_value(
                    format!("CPU {} does not exist: the machine has {cpus}", cpu.value),
                    format!("CPUs are numbered 0 to {}", cpus - 1),
                ))
            }
        })
        .collect()
}

/// `block.scheduler`, or the kernel's default (`elevator_get_default`): mq-deadline for a
/// request-based disk with one hardware queue, none otherwise (and none for the textbook
/// generic device and under a legacy queue, which has its elevator instead).
fn scheduler(
    b: &RawBlock,
    mode: QueueMode,
    hw_queues: u32,
    brd: bool,
    device: &DeviceConfig,
) -> MqScheduler {
    match val(&b.scheduler) {
        Some(SchedulerName::MqDeadline) => MqScheduler::MqDeadline,
        Some(SchedulerName::None) => MqScheduler::None,
        None if mode == QueueMode::Legacy || brd => MqScheduler::None,
        None if matches!(device, DeviceConfig::Generic(_)) => MqScheduler::None,
        None if hw_queues == 1 => MqScheduler::MqDeadline,
        None => MqScheduler::None,
    }
}

/// The elevator: CFQ under the legacy queue unless `fifo` is asked for, FIFO under blk-mq.
fn elevator(c: &Checker, b: &RawBlock, mode: QueueMode) -> Result<Elevator, Error> {
    Ok(match (mode, &b.elevator) {
        (QueueMode::BlkMq, Some(e)) if e.value == ElevatorName::Cfq => {
            return Err(c.at("block.elevator", e).conflict(
                "blk-mq has no CFQ elevator",
                "leave `elevator` out (or write fifo) under blk-mq, or use mode: legacy",
            ));
        }
        (QueueMode::BlkMq, _) => Elevator::Fifo,
        (QueueMode::Legacy, Some(e)) if e.value == ElevatorName::Fifo => Elevator::Fifo,
        (QueueMode::Legacy, _) => Elevator::Cfq,
    })
}

/// Refuses the CFQ fields unless the elevator is CFQ.
fn cfq_only(c: &Checker, b: &RawBlock, mode: QueueMode, elevator: Elevator) -> Result<(), Error> {
    if elevator != Elevator::Cfq {
        let owner = if mode == QueueMode::BlkMq {
            "a blk-mq queue"
        } else {
            "the fifo elevator"
        };
        let cfq: Vec<_> = b
            .present()
            .into_iter()
            .filter(|(name, _)| CFQ_FIELDS.contains(name))
            .collect();
        c.only(&cfq, &[], "block", owner).map_err(|mut e| {
            e.0.hint = Some("CFQ settings need mode: legacy and elevator: cfq".to_string());
            e
        })?;
    }
    Ok(())
}

/// `block:`'s rows in `qsim check`: mode, congestion thresholds, plugging and the elevator.
pub(crate) fn describe_block(o: &mut Rows, b: &BlockConfig, k: &KernelConfig) {
    let mode = match b.mode {
        QueueMode::Legacy => "legacy",
        QueueMode::BlkMq => "blk-mq",
    };
    row(o, 0, "block", mode);
    row(o, 2, "nr_requests", &b.nr_requests.to_string());
    match b.mode {
        QueueMode::Legacy => row(
            o,
            2,
            "congestion",
            &format!(
                "on at {} requests per class, off below {} (hard cap {})",
                b.congestion_on(),
                b.congestion_off(),
                3 * b.nr_requests / 2
            ),
        ),
        QueueMode::BlkMq => row(
            o,
            2,
            "congestion",
            &format!(
                "never reported under blk-mq (legacy would turn it on at {}, off below {})",
                b.congestion_on(),
                b.congestion_off()
            ),
        ),
    }
    if b.plug {
        row(
            o,
            2,
            "plug",
            &format!(
                "on: unplug at {} queued requests or after {}",
                b.unplug_threshold,
                k.unplug_delay()
            ),
        );
    } else {
        row(o, 2, "plug", "off");
    }
    match b.mode {
        QueueMode::BlkMq => {
            describe_mq(o, b);
            row(o, 2, "completion", &completion(b));
        }
        QueueMode::Legacy => {
            describe_elevator(o, b, k);
            // The interrupt fields only move a legacy queue's softirq: shown when set.
            if b.mq.irq_cpus != [0] || b.mq.rq_affinity != 1 {
                row(o, 2, "completion", &completion(b));
            }
        }
    }
}

/// Where completions run, in words ([`crate::model::block::blkmq::completion_site`]).
fn completion(b: &BlockConfig) -> String {
    let mq = &b.mq;
    if mq.bio_based {
        return "in the submitting task (brd is bio-based: submit_bio ends the bio)".into();
    }
    let cpus = mq.queue_map.len() as u32;
    let sites: Vec<_> = (0..cpus)
        .map(|cpu| crate::model::block::blkmq::completion_site(b, cpu))
        .collect();
    // One CPU takes every completion: name it rather than "the submitting CPU" for its own.
    let one_cpu = cpus > 1 && sites.iter().all(|s| s.cpu == sites[0].cpu);
    let mut kinds: Vec<String> = Vec::new();
    for (cpu, s) in (0..cpus).zip(&sites) {
        let ctx = match s.context {
            IrqContext::Hardirq => "hard IRQ",
            IrqContext::Softirq => "BLOCK_SOFTIRQ",
            IrqContext::Submitter => "the submitter",
        };
        let place = if s.cpu == cpu && !one_cpu {
            "on the submitting CPU".to_string()
        } else {
            format!("on CPU {}", s.cpu)
        };
        let text = format!("{ctx} {place}");
        if !kinds.contains(&text) {
            kinds.push(text);
        }
    }
    let how = kinds.join(" or ");
    format!("{how} (rq_affinity {})", mq.rq_affinity)
}

/// blk-mq's rows: hardware queues, interrupts, scheduler.
fn describe_mq(o: &mut Rows, b: &BlockConfig) {
    let mq = &b.mq;
    if mq.bio_based {
        row(o, 2, "hw_queues", "none (brd is bio-based)");
        row(o, 2, "scheduler", "none (brd is bio-based)");
        return;
    }
    let cpus = mq.queue_map.len();
    row(
        o,
        2,
        "hw_queues",
        &format!("{} for {cpus} CPUs (blk_mq_map_queues)", mq.hw_queues),
    );
    let irq: Vec<String> = mq.irq_cpus.iter().map(u32::to_string).collect();
    row(o, 2, "irq_cpus", &irq.join(", "));
    match mq.scheduler {
        MqScheduler::None => row(o, 2, "scheduler", "none"),
        MqScheduler::MqDeadline => {
            let d = mq.deadline;
            row(o, 2, "scheduler", "mq-deadline");
            row(
                o,
                4,
                "expire",
                &format!("read {}, write {}", d.read_expire, d.write_expire),
            );
            row(
                o,
                4,
                "batches",
                &format!(
                    "fifo_batch {}, writes_starved {}",
                    d.fifo_batch, d.writes_starved
                ),
            );
        }
    }
}

/// The legacy elevator's rows.
fn describe_elevator(o: &mut Rows, b: &BlockConfig, k: &KernelConfig) {
    match b.elevator {
        Elevator::Fifo => row(o, 2, "elevator", "fifo"),
        Elevator::Cfq => {
            row(o, 2, "elevator", "cfq");
            row(
                o,
                4,
                "slices",
                &format!(
                    "sync {}, async {}, idle {}",
                    b.cfq_slice_sync, b.cfq_slice_async, b.cfq_slice_idle
                ),
            );
            let alone = if b.cfq.sole_queue_unlimited {
                "no limit".to_string()
            } else {
                (4 * b.cfq_quantum).to_string()
            };
            let quantum = format!(
                "{} in flight per queue; the one busy queue: {alone}",
                b.cfq_quantum
            );
            row(o, 4, "quantum", &quantum);
            let expiry = |sync| {
                SimDuration::from_ns(u64::from(cfq_fifo_expire(k.hz, sync)) * k.jiffy().as_ns())
            };
            let next = if b.cfq.next_after_each_dispatch {
                "re-chosen at every dispatch"
            } else {
                "re-chosen when it is dispatched"
            };
            row(
                o,
                4,
                "request order",
                &format!(
                    "sector order, back seeks up to {}MiB at {}x cost; a slice starts with \
                     the oldest if queued {}+ (sync) or {}+ (async); next {next}",
                    (CFQ_BACK_MAX_SECTORS * 512) >> 20,
                    CFQ_BACK_PENALTY,
                    expiry(true),
                    expiry(false),
                ),
            );
            describe_cfq(o, b, k);
        }
    }
}

/// CFQ's version-dependent rows: `low_latency` with where it came from, and the rules the
/// version runs (docs/model/block.md §5).
fn describe_cfq(o: &mut Rows, b: &BlockConfig, k: &KernelConfig) {
    let v = k.version.name();
    let r = b.cfq;
    let ll = if !r.has_low_latency {
        format!("off (no such tunable in {v}; it arrived in 2.6.32)")
    } else {
        let from = if b.low_latency { "default" } else { "set" };
        format!("{} ({from})", on_off(b.low_latency))
    };
    row(o, 4, "low_latency", &ll);
    let ramp = match (b.low_latency, r.ramp_from_delayed_sync) {
        (false, _) => "none: async waits only while sync I/O is in flight".to_string(),
        (true, false) => format!(
            "one async request per {} since the last sync completion, within the quantum",
            b.cfq_slice_sync
        ),
        (true, true) => format!(
            "one async request per {} since the last sync request delayed {}+ (HZ/8)",
            b.cfq_slice_sync,
            k.hz_div(8)
        ),
    };
    row(o, 4, "async ramp", &ramp);
    let drain = if r.drain_async_before_sync {
        "async requests drain before sync I/O starts"
    } else {
        "none"
    };
    row(o, 4, "async drain", drain);
    let seeky = if r.lone_sync_queue_idles {
        "the lone sync queue always idles (cfq_should_idle)"
    } else if r.seeky_idle_with_latency && b.low_latency {
        "seeky queues keep idling (low_latency on)"
    } else {
        "seeky queues do not idle while CFQ takes the disk as queueing (hw_tag)"
    };
    row(o, 4, "seeky idle", seeky);
    if !r.lone_sync_queue_idles {
        let depth = if b.ncq_capable {
            "this disk is deep enough to keep it set"
        } else {
            "this disk's depth is under 5, so the first estimate clears it"
        };
        let ncq = format!(
            "set at start, re-estimated every 51 completions under load from the driver's \
             peak depth (5 or more: queueing); {depth}"
        );
        row(o, 4, "hw_tag", &ncq);
    }
    if !r.lone_sync_queue_idles {
        let past = if r.idle_within_slice_only {
            ", nor past the slice's end"
        } else {
            ""
        };
        let think = format!(
            "idle only while a context's mean think time is at most {}{past}",
            b.cfq_slice_idle
        );
        row(o, 4, "think time", &think);
    }
    let stats = if r.seek_per_context {
        "a context's own async requests (a direct reclaimer's pageouts) move its think time \
         and seek statistics"
    } else {
        "a context's own async requests (a direct reclaimer's pageouts) move its think time; \
         seek statistics are per queue"
    };
    row(o, 4, "context stats", stats);
    describe_cooperators(o, &r);
    if r.target_latency && b.low_latency {
        row(o, 4, "target latency", "slices scaled into 300ms (HZ*3/10)");
    }
}

/// CFQ's close-cooperator row: how a queue near the head takes the disk from an idling one.
fn describe_cooperators(o: &mut Rows, r: &CfqRules) {
    let coop = if !r.close_cooperator {
        "not modelled (2.6.33 merges cooperating sync queues instead)"
    } else if r.coop_preempt_marks {
        "a busy queue whose next request lies within the active context's mean seek distance \
         of the head runs instead of idling; a request that close preempts an idling queue \
         unless its queue is already marked a cooperator"
    } else {
        "a busy queue whose next request lies within the active context's mean seek distance \
         of the head runs instead of idling; a request that close preempts an idling queue"
    };
    row(o, 4, "cooperators", coop);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::testutil::*;

    fn blk(yaml: &str) -> Result<BlockConfig, Error> {
        let d = DeviceConfig::Generic(GenericDeviceConfig {
            service: Distribution::Deterministic {
                value: SimDuration::from_ms(1),
            },
            channels: 1,
            queue_depth: 31,
        });
        section::<RawBlock, _>(yaml, |c, r, _| {
            block(c, Some(r), &KernelConfig::new(1000), &d, 4)
        })
    }

    #[test]
    fn the_section_alone_takes_hz_slices_and_refuses_cfq_fields_elsewhere() {
        let b = blk("nr_requests: 64\n").unwrap();
        assert_eq!(
            (b.nr_requests, b.elevator, b.plug),
            (64, Elevator::Cfq, true)
        );
        assert_eq!(b.cfq_slice_sync, SimDuration::from_ms(100));
        let b = blk("mode: blk-mq\n").unwrap();
        assert_eq!((b.elevator, b.plug), (Elevator::Fifo, false));
        let e = blk("elevator: fifo\nquantum: 8\n").unwrap_err();
        assert_eq!((e.line(), e.path()), (Some(2), Some("block.quantum")));
        assert_eq!(
            e.hint(),
            Some("CFQ settings need mode: legacy and elevator: cfq")
        );
        let e = blk("plug: false\nunplug_threshold: 8\n").unwrap_err();
        assert_eq!(e.path(), Some("block.unplug_threshold"));
        let e = blk("nr_requests: 2\n").unwrap_err();
        assert_eq!(e.hint(), Some("write a whole number from 4 to 100000"));
    }

    /// A scenario on `cpus` CPUs with `device` and `block`.
    fn mq(cpus: u32, device: &str, block: &str) -> String {
        format!(
            "cpus: {cpus}\ndevice: {{ kind: {device} }}\nblock:\n{block}workloads:\n  - kind: fio\n"
        )
    }

    #[test]
    fn blk_mq_defaults_follow_the_device_as_the_kernel_does() {
        let b = ok(&mq(8, "nvme", "  mode: blk-mq\n")).block.mq;
        assert_eq!(
            (b.hw_queues, b.scheduler, b.bio_based),
            (8, MqScheduler::None, false)
        );
        assert_eq!(b.irq_cpus, [0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(b.rq_affinity, 1);
        let b = ok(&mq(64, "nvme", "  mode: blk-mq\n")).block.mq;
        assert_eq!((b.hw_queues, b.queue_map[63]), (NVME_MAX_HW_QUEUES, 31));
        for dev in ["nvme-gen4", "nvme-gen5"] {
            let b = ok(&mq(8, dev, "  mode: blk-mq\n")).block.mq;
            assert_eq!((b.hw_queues, b.scheduler), (8, MqScheduler::None), "{dev}");
        }
        for dev in ["sata-ssd", "hdd7200", "nvme"] {
            let cpus = if dev == "nvme" { 1 } else { 4 };
            let b = ok(&mq(cpus, dev, "  mode: blk-mq\n")).block.mq;
            assert_eq!(
                (b.hw_queues, b.scheduler),
                (1, MqScheduler::MqDeadline),
                "{dev}"
            );
            assert_eq!(b.deadline.read_expire, SimDuration::from_ms(500));
        }
        let b = ok(&mq(4, "ramdisk", "  mode: blk-mq\n")).block.mq;
        assert!(b.bio_based);
        assert_eq!(b.scheduler, MqScheduler::None);
        let text = "cpus: 2\ndevice: { kind: generic, service: 1ms }\nblock: { mode: blk-mq }\n\
                    workloads:\n  - kind: fio\n";
        assert_eq!(ok(text).block.mq.scheduler, MqScheduler::None);
        let b = ok(&mq(
            4,
            "nvme",
            "  mode: blk-mq\n  hw_queues: 2\n  irq_cpus: [3, 1]\n  \
                                 rq_affinity: 2\n  scheduler: mq-deadline\n  fifo_batch: 4\n",
        ))
        .block
        .mq;
        assert_eq!((b.irq_cpus, b.queue_map), (vec![3, 1], vec![0, 0, 1, 1]));
        assert_eq!((b.rq_affinity, b.deadline.fifo_batch), (2, 4));
    }

    #[test]
    fn blk_mq_fields_are_refused_where_they_do_not_apply() {
        let cases = [
            (
                mq(4, "nvme", "  scheduler: none\n"),
                4,
                "block.scheduler",
                "mode: blk-mq",
            ),
            (
                mq(4, "nvme", "  mode: blk-mq\n  hw_queues: 8\n"),
                5,
                "block.hw_queues",
                "at most one",
            ),
            (
                mq(4, "nvme", "  mode: blk-mq\n  irq_cpus: [0, 1]\n"),
                5,
                "block.irq_cpus",
                "one CPU per",
            ),
            (
                mq(
                    2,
                    "nvme",
                    "  mode: blk-mq\n  hw_queues: 1\n  irq_cpus: [2]\n",
                ),
                6,
                "block.irq_cpus",
                "0 to 1",
            ),
            (
                mq(4, "nvme", "  mode: blk-mq\n  read_expire: 1s\n"),
                5,
                "block.read_expire",
                "scheduler: mq-deadline",
            ),
            (
                mq(4, "ramdisk", "  mode: blk-mq\n  irq_cpus: [0]\n"),
                5,
                "block.irq_cpus",
                "bio-based",
            ),
            (
                mq(4, "hdd7200", "  mode: blk-mq\n  rq_affinity: 3\n"),
                5,
                "block.rq_affinity",
                "0 to 2",
            ),
        ];
        for (text, line, path, hint) in cases {
            let e = err(&text);
            assert_eq!(
                (e.line(), e.path()),
                (Some(line), Some(path)),
                "{text}: {e}"
            );
            assert!(e.hint().unwrap().contains(hint), "{text}: {e}");
        }
    }
}
