//! `block:`: the request queue's mode, size, plugging and elevator; and its `qsim check` rows.
//!
//! Under blk-mq, `nr_requests` (the tag count) stays 128 unless given, rather than following the
//! device's queue depth; `elevator` may only be `fifo`, and `plug`, `unplug_threshold` and the
//! CFQ fields are refused rather than ignored. CFQ fields are refused under `elevator: fifo` too.
//!
//! `low_latency` follows `kernel.version`: off and refused when set to true before 2.6.32 (the
//! tunable does not exist there), on by default from 2.6.32. The version's other CFQ rules
//! ([`KernelVersion::cfq`]) are not settable; `hw_tag` (the disk queues commands) follows the
//! device's queue depth.

use super::Error;
use super::check::{Checker, Zero, val};
use super::describe::{Rows, on_off, row};
use super::schema::{names, raw_section};
use super::types::*;
use super::units::Duration;

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
    }
}

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
];

/// CFQ's `CFQ_HW_QUEUE_MIN`: a disk that takes at least this many requests at once counts as
/// queueing commands (`hw_tag`).
pub const CFQ_HW_QUEUE_MIN: u32 = 5;

/// `hw_tag` for `device`: its queue depth reaches [`CFQ_HW_QUEUE_MIN`] (the kernel estimates
/// it from the peak depth the driver reaches under load, which is the device's queue depth).
fn hw_tag(device: &DeviceConfig) -> bool {
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
        hw_tag: hw_tag(device),
    })
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
            row(o, 4, "quantum", &b.cfq_quantum.to_string());
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
            "one async request per {} since the last sync completion, at most quantum",
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
    let ncq = if b.hw_tag { "NCQ disk" } else { "no NCQ" };
    let seeky = match (r.lone_sync_queue_idles, b.hw_tag) {
        (true, _) => "the lone sync queue always idles (cfq_should_idle)".to_string(),
        (false, false) => format!("seeky queues idle ({ncq})"),
        (false, true) if r.seeky_idle_with_latency && b.low_latency => {
            format!("seeky queues keep idling ({ncq}, low_latency on)")
        }
        (false, true) => format!("seeky queues do not idle ({ncq})"),
    };
    row(o, 4, "seeky idle", &seeky);
    if r.target_latency && b.low_latency {
        row(o, 4, "target latency", "slices scaled into 300ms (HZ*3/10)");
    }
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
            block(c, Some(r), &KernelConfig::new(1000), &d)
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
}
