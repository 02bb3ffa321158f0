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
//! | `iwlagn` (atomic stream) | orders {2: 1.0}, buffer 8 KiB: an 8 KiB A-MSDU needs 8448 B plus the skb tail, a 16 KiB order-2 block (MODEL.md §8); the file still gives `rate` or `bandwidth` |
//!
//! Defaults of the memory-model fields (MODEL.md §5–§7), each with its reason:
//!
//! | field | default | why |
//! |---|---|---|
//! | `kernel.version` | 2.6.32 | the kernel of the 2009 reports (S2009) |
//! | `kernel.patches` | none | the 2009 patches are hypotheses to sweep, not facts (§7) |
//! | `kernel.<switch>` | the version's (`KernelVersion::defaults`), then the patches | an explicit switch wins over both |
//! | `memory` | absent: unlimited memory | every scenario written before the memory model runs unchanged |
//! | `memory.min_free_kbytes` | `int_sqrt(16·ram_kB)` clamped to [128, 65536] (5792 for 2 GiB) | the kernel's own boot-time value, 2.6.32 |
//! | `memory.mapped` | half of `unreclaimable` | mapped, referenced pages sit on the file LRU: reclaim scans and rotates them [assumed] |
//! | `memory.unreclaimable` | half of `ram`, rounded down to 4 KiB | kernel + anonymous memory of a busy desktop without swap [assumed] |
//! | `memory.page_cache` | `ram − unreclaimable − 16·min` pages | the run starts with free = 16·min, far above high, so pressure comes from the workloads |
//! | `memory.coalesce` | 0.5 | halfway between a perfect buddy allocator (1) and no merging (0) [assumed] |
//! | `memory.scan_cost` | 200 ns per page | order of magnitude of an LRU scan step on 2009 hardware [assumed] |
//! | `memory.page_pool` | 32 pages | dm-crypt's `MIN_POOL_PAGES` |
//! | `memory.min_bio_pages` | 8 | dm-crypt's `MIN_BIO_PAGES`: bounce pages a clone may wait for |
//! | `atomic[*].name` | `atomic<index>` | as workloads |
//! | `atomic[*].preset` | `custom` | nothing hidden unless asked for |
//! | `atomic[*].orders` | {0: 0.5, 1: 0.3, 2: 0.2} | MODEL.md §8's default RX mix [assumed] |
//! | `atomic[*].buffer` | 8 KiB | one A-MSDU; only used to turn `bandwidth` into allocations |
//! | `atomic[*].poisson` | true | independent packet arrivals |
//! | `atomic[*].burst` | 1 | buffers per arrival; a driver refilling its RX ring in one go allocates many [assumed] |
//! | `atomic[*].hold` | exponential, mean 2 ms | an RX buffer lives until softirq processing hands it on [assumed] |
//! | `workloads[*].direct` | false | fio's default; `gitk` reads through the page cache too |
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
//! - A buffered writer's `chunk` is a whole number of 4 KiB pages (writeback moves pages).
//! - fio jobs (`gitk` too) run until the run ends unless given `io_size` (fio's alias
//!   `io_limit`: bytes per copy, whole sectors, at least `bs`) or `number_ios` (I/Os per copy,
//!   at least 1); either makes the job finite, and the run then ends when every finite job has
//!   completed its I/O, or at `duration`. `startdelay` (default 0) may exceed `duration`: the
//!   job then never starts and is reported unfinished.
//! - Memory amounts (`ram`, `unreclaimable`, `page_cache`) must be whole 4 KiB pages; `ram` lies
//!   in 64 MiB..=64 GiB; `min_free_kbytes` in 128..=ram/32; `unreclaimable + page_cache` and
//!   the `page_pool` reserve (allocated from the zone at boot too) must leave at least the high
//!   watermark (1.5·min pages) free at the start; the default `page_cache` is cut to fit.
//! - An atomic stream gives exactly one of `rate` (allocations per second: `500/s`, or a plain
//!   number) and `bandwidth` (divided by `buffer`); `buffer` without `bandwidth` is refused.
//!   `orders` weights are normalised to sum 1 and stored by order, trailing zero orders dropped;
//!   an `iwlagn` stream with `orders` or `buffer` is reported as `iwlagn (custom)`.
//! - A patch and an explicit `false` for the switch it sets (`skip_below_min: false` with
//!   `kswapd-stay-awake-when-min`, `crypt.unplug_after_submit: false` with `dm-crypt-unplug`)
//!   are a conflict, reported at the patch: otherwise a variant adding the patch over such a base
//!   would silently change nothing.
//! - Variants: `set:` is a partial scenario merged over the base file: mappings merge field by
//!   field, scalars and lists (`workloads`, `policies`, `patches`, `atomic`) replace, and a
//!   `device:` or distribution whose `kind:` differs from the base's replaces it whole. `set` may
//!   not hold `name`, `description`, `seed` (variants share random numbers) or `variants`. Each
//!   variant is validated in full; an error in a value written inside `set` carries the path
//!   `variants[i].set.…` and the message names the variant. `set` may change `replications`.
//! - `replications` defaults to 10 and lies in 1..=1000.
//! - Bounds on what one `qsim run` holds in memory (each measured, see the constants): at most
//!   [`MAX_VARIANTS`] variants, refused before any is resolved; at most [`MAX_RUNS`] runs
//!   (policies, or each variant's policies); at most [`MAX_TOTAL_REPLICATIONS`] replications
//!   over all runs. [`check_work`] applies the last two again after the command line's `-r`.
//!   At most [`MAX_WORKLOADS`] workloads and [`MAX_ATOMIC_STREAMS`] atomic streams, and at
//!   most [`MAX_IN_FLIGHT`] fio I/Os in flight (`iodepth × numjobs`, summed). Lists are capped
//!   while they are parsed ([`Capped`]): a list far too long costs its count, not its memory.
//! - Degenerate costs are refused with the smallest accepted value: a 512-byte request costs at
//!   least [`MIN_SERVICE`] (100 ns) on average under every policy — the device's part (a
//!   generic `service` mean, an NVMe's `overhead + 512 B / transfer_rate`, an HDD's 512 B /
//!   `transfer_rate`, which a sequential request pays alone) plus dm-crypt's, which policy
//!   `none` skips. A free device behind a dm-crypt that serves is accepted. Arrival rates (fio `rate`, atomic streams) lie in
//!   [`MIN_ARRIVAL_RATE`]..=[`MAX_ARRIVAL_RATE`], bandwidths are at least [`MIN_BANDWIDTH`], a
//!   writer dirties at most [`MAX_WRITER_RATE`], and every duration is at most
//!   [`super::units::MAX_DURATION`] (100 days). CPU costs (`hop_cost`, `per_sector_cost`, the
//!   cipher, `scan_cost`) and think and hold times may be zero on their own: each I/O still
//!   pays the request floor, so the clock moves.
//! - Regions end inside [`MAX_DISK_BYTES`] (1 EiB), checked without overflow, and an HDD's
//!   `capacity` is at most that.
//! - Names (the scenario's, a variant's, a workload's, an atomic stream's; the file stem when
//!   `name` is absent) are at most [`MAX_NAME_CHARS`] characters without control characters
//!   ([`name_problem`]); `/` and `..` are allowed, since a name is a label and the plot writer
//!   makes its own file names from it.
//! - Command-line overrides (`--set path.to.field=value`, `scenario::set_document`) are partial
//!   scenarios merged exactly as a variant's `set:`, in the order given, before any of this
//!   validation, so every rule and message here applies to them. Precedence, lowest first: the
//!   file, a variant's `set:`, the `--set`s. The command line is the user's last word, so a
//!   `--set` reaches the base and every variant even where a variant sets the same field
//!   (`--set kernel.version=2.6.37` runs every variant on 2.6.37). The fixed fields of a
//!   variant's `set:` (`seed`, …) do not bind a `--set`, which changes the base too. An error in
//!   a value a `--set` wrote names the argument (`--set memory.ram=1GB: memory.ram: …`), not a
//!   line of the file.

use super::schema::{
    ArrivalsName, AtomicPresetName, Capped, CipherName, CwaitClassName, DeviceKind, DistKind,
    ElevatorName, EngineName, Field, MAX_LISTED_NAMES, Merge, OrderWeights, QueueModeName,
    RawAtomic, RawBlock, RawCrypt, RawDevice, RawDistribution, RawKernel, RawMemory, RawScenario,
    RawWorkload, RwName, VERSION_NAMES, WorkloadKindName,
};
use super::types::*;
use super::units::{Duration, Rate, Size, format_bandwidth, format_bytes};
use super::{Error, ErrorKind, MINIMAL_SCENARIO, Source, suggestion};
use crate::engine::SimDuration;
use crate::model::zone::{WatermarkKernel, Watermarks, min_free_kbytes};
use serde_saphyr::{Location, Spanned};
use std::collections::HashSet;

/// Allowed `kernel.hz` values.
pub const HZ_VALUES: &[u32] = &[100, 250, 300, 1000];
/// Default `max_events`.
pub const DEFAULT_MAX_EVENTS: u64 = 500_000_000;
/// Default `replications`.
pub const DEFAULT_REPLICATIONS: u32 = 10;
/// Largest `replications` (and `-r`).
pub const MAX_REPLICATIONS: u32 = 1000;
/// Largest block or chunk size: 1024 sectors, the largest request.
pub const MAX_REQUEST_BYTES: u64 = 512 * 1024;
pub use crate::model::physics::SECTOR;
/// Most values an `empirical` distribution may list. Every variant keeps its own copy (8 bytes a
/// value), and the list must fit in the file's YAML budget ([`super::MAX_YAML_NODES`] values in
/// all) with room for the rest of the scenario; 100,000 observations pin a distribution's
/// percentiles down to 0.1 % and beyond.
pub const MAX_EMPIRICAL_VALUES: usize = 100_000;

/// Shortest mean time a 512-byte request may cost, device and dm-crypt together: 100 ns, ten
/// million requests a second per channel, past any real disk. Below it requests complete in
/// (almost) no simulated time,
/// and a closed loop issues and completes I/Os without the clock moving: the event budget runs
/// out within a millisecond of simulated time and the report shows `IOPS=500G` (issue 11).
pub const MIN_SERVICE: SimDuration = SimDuration::from_ns(100);

/// Largest arrival rate of a stream (a fio job's `rate`, an atomic stream's allocations),
/// operations per second: one every [`MIN_SERVICE`] on average. Faster arrivals have gaps that
/// round to zero nanoseconds, so the clock would stop while they arrive.
pub const MAX_ARRIVAL_RATE: f64 = 1e7;

/// Smallest arrival rate, operations per second (one every 10,000 s, under three hours): a
/// slower stream does nothing in any run qsim can do, and its gaps run past
/// [`super::units::MAX_DURATION`].
pub const MIN_ARRIVAL_RATE: f64 = 1e-4;

/// Smallest bandwidth of any kind (media, cipher, writer), bytes per second. A request of at
/// most 512 KiB then costs at most six days.
pub const MIN_BANDWIDTH: f64 = 1.0;

/// Largest rate at which a buffered writer dirties page cache: 10 GB/s, about a memory bus; it
/// dirties 64 KiB a step, so even then a step is 6.5 µs apart.
pub const MAX_WRITER_RATE: f64 = 10e9;

/// The byte past the end of the largest disk, and of any region: 1 EiB (2⁶⁰ bytes). No
/// disk comes near, and every sum of offsets and sizes the model makes stays far from
/// overflowing 64 bits (issue 11: an offset near 2⁶⁴ wrapped its region's end to 1 GiB).
pub const MAX_DISK_BYTES: u64 = 1 << 60;

/// Longest name, in characters, of a scenario, a variant, a workload or an atomic stream.
/// Names label report blocks and plot files (`timeline-<variant>_<policy>.png`): 64 characters
/// read as a label and, even at four bytes a character, leave room in a 255-byte file name for
/// what the plots add.
pub const MAX_NAME_CHARS: usize = 64;

/// How to write a name.
const NAME_HINT: &str = "a name is a short label on one line, at most 64 characters, e.g. \
                         `2.6.30+unplug`";

/// What makes `name` unusable as a label, if anything: more than [`MAX_NAME_CHARS`]
/// characters, or a control character (a newline, a tab, NUL, an escape) that would break the
/// report's lines or a terminal. Anything else is a label, `/`, `..` and spaces included: a
/// variant named `2.6.30/unplug` reads well in a report, and where a name becomes part of a path
/// (`--plots`), the writer makes it a safe file name itself (it must, for names from
/// `--set name=…` and from results files too).
pub fn name_problem(name: &str) -> Option<String> {
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        return Some(format!(
            "the name is {chars} characters long, more than the {MAX_NAME_CHARS} a name may have"
        ));
    }
    name.chars().find(|c| c.is_control()).map(|c| {
        format!(
            "the name holds the control character `{}`",
            c.escape_debug()
        )
    })
}

/// The accepted range of every whole-number field, keyed by its path with list indices and a
/// variant's `variants[i].set.` prefix taken out ([`super::field_key`]). The one place these
/// ranges are written: validation reads them ([`int_range`]), and so does the hint for a value
/// that is not a whole number of the field's type at all (`cpus: -1`, `cpus: 4294967296`).
/// `kernel.hz` (four values), `memory.min_free_kbytes` (its top depends on `ram`) and the
/// buddy orders of `memory.atomic[].orders` are checked, and hinted, where they are resolved.
pub(crate) const INT_RANGES: &[(&str, u64, u64)] = &[
    ("seed", 0, u64::MAX),
    ("max_events", 1, u64::MAX),
    ("replications", 1, MAX_REPLICATIONS as u64),
    ("cpus", 1, 1024),
    ("device.queue_depth", 1, 1_000_000),
    ("device.channels", 1, 4096),
    ("block.nr_requests", 4, 100_000),
    ("block.unplug_threshold", 1, 1_000_000),
    ("block.quantum", 1, 1024),
    ("crypt.async_queue_limit", 1, 1_000_000),
    ("memory.page_pool", 1, 1_000_000),
    ("memory.min_bio_pages", 1, 1_000_000),
    ("memory.atomic[].burst", 1, 100_000),
    ("workloads[].rwmixread", 0, 100),
    ("workloads[].iodepth", 1, 65_536),
    ("workloads[].numjobs", 1, 1024),
    ("workloads[].number_ios", 1, u64::MAX),
];

/// The range of the whole-number field at `path` (`workloads[2].iodepth`,
/// `variants[0].set.cpus`), from [`INT_RANGES`]; `None` for a field not listed there.
pub(crate) fn int_range_of(path: &str) -> Option<(u64, u64)> {
    let key = super::field_key(path);
    INT_RANGES
        .iter()
        .find(|(k, _, _)| *k == key)
        .map(|&(_, lo, hi)| (lo, hi))
}

/// [`int_range_of`] for a field validation reads: every such field is listed (a unit test
/// reads each one), so the fallback, the whole `u64` range, is never taken.
fn int_range(path: &str) -> (u64, u64) {
    let range = int_range_of(path);
    debug_assert!(range.is_some(), "{path} is missing from INT_RANGES");
    range.unwrap_or((0, u64::MAX))
}

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
    "direct",
    "io_size",
    "number_ios",
    "startdelay",
];
const WRITER_FIELDS: &[&str] = &[
    "rate",
    "chunk",
    "background",
    "dirty_limit",
    "size",
    "offset",
];

/// The 2009 test patches `kernel.patches` accepts (MODEL.md §7), each a hypothesis mapped onto
/// one switch: `kswapd-stay-awake-when-min` → `skip_below_min`, `force-highorder` →
/// `force_highorder`, `dm-crypt-unplug` → `crypt.unplug_after_submit`.
pub const PATCHES: &[&str] = &[
    "kswapd-stay-awake-when-min",
    "force-highorder",
    "dm-crypt-unplug",
];

/// Page size: every memory amount is a whole number of pages.
pub const PAGE: u64 = 4096;
/// Smallest and largest `memory.ram`.
pub const RAM_RANGE: (u64, u64) = (64 << 20, 64 << 30);
/// Largest buddy order (`MAX_ORDER − 1` in 2.6.32).
pub const MAX_ORDER: usize = 10;
/// Default GFP_ATOMIC order mix of a `custom` stream (MODEL.md §8, assumed).
const DEFAULT_ORDERS: &[f64] = &[0.5, 0.3, 0.2];
/// The `iwlagn` preset's order mix: every RX refill is an order-2 (16 KiB) block.
const IWLAGN_ORDERS: &[f64] = &[0.0, 0.0, 1.0];
/// Free memory at the start when `page_cache` is not given, in multiples of the min watermark.
pub const DEFAULT_FREE_MINS: u64 = 16;
/// Bytes per allocation when a stream gives `bandwidth` (one 8 KiB A-MSDU buffer).
const DEFAULT_BUFFER: u64 = 8 << 10;

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

pub use crate::model::physics::mean_random_seek;

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

    /// A whole number in the field's range ([`int_range`]), or `default` when absent.
    fn int<T>(&self, f: &Field<T>, path: &str, default: T) -> Result<T, Error>
    where
        T: Copy + Into<u64> + std::fmt::Display,
    {
        let (min, max) = int_range(path);
        match f {
            None => Ok(default),
            Some(s) if (min..=max).contains(&s.value.into()) => Ok(s.value),
            Some(s) => Err(self.err(
                ErrorKind::BadValue,
                Some(s.referenced),
                path,
                format!("must be between {min} and {max}, got {}", s.value),
                format!("write a whole number from {min} to {max}"),
            )),
        }
    }

    /// A name as written (`name:` of the scenario, a variant, a workload or an atomic stream),
    /// already known not to be blank: at most [`MAX_NAME_CHARS`] characters and no control
    /// characters ([`name_problem`]).
    fn name(&self, s: &Spanned<String>, path: &str) -> Result<String, Error> {
        match name_problem(&s.value) {
            None => Ok(s.value.clone()),
            Some(problem) => Err(self.err(
                ErrorKind::BadValue,
                Some(s.referenced),
                path,
                problem,
                NAME_HINT,
            )),
        }
    }

    /// The scenario's default name, the file stem, under the same rules as a written name.
    fn stem_name(&self, stem: &str) -> Result<String, Error> {
        match name_problem(stem) {
            None => Ok(stem.to_string()),
            Some(problem) => Err(self.err(
                ErrorKind::BadValue,
                None,
                "name",
                format!("the scenario is named after its file, and {problem}"),
                format!("add a `name:` to the scenario; {NAME_HINT}"),
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
            Rate::BytesPerSec(b) if b < MIN_BANDWIDTH => Err(self.err(
                ErrorKind::BadValue,
                Some(s.referenced),
                path,
                format!("{} is below 1 B/s, the slowest bandwidth accepted", s.value),
                "at 1 B/s a 512 KiB request already takes six days; write e.g. 60MB/s",
            )),
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

    /// An arrival rate (operations per second, after any conversion from a bandwidth) inside
    /// [`MIN_ARRIVAL_RATE`]..=[`MAX_ARRIVAL_RATE`]; `written` is the value as the file wrote
    /// it, for the message.
    fn arrival_rate(
        &self,
        ops: f64,
        written: &dyn std::fmt::Display,
        l: Option<Location>,
        path: &str,
    ) -> Result<f64, Error> {
        if (MIN_ARRIVAL_RATE..=MAX_ARRIVAL_RATE).contains(&ops) {
            return Ok(ops);
        }
        let (what, why) = if ops > MAX_ARRIVAL_RATE {
            (
                "more than 10000000 arrivals a second",
                "faster arrivals come less than 100ns apart, and their gaps round to zero \
                 nanoseconds",
            )
        } else {
            (
                "fewer than one arrival in 10000 s",
                "a slower stream does nothing within a run",
            )
        };
        Err(self.err(
            ErrorKind::BadValue,
            l,
            path,
            format!(
                "{written} makes {what} ({}/s)",
                super::units::trim_float(ops, 6)
            ),
            format!("an arrival rate lies between 0.0001/s and 10000000/s: {why}"),
        ))
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

/// Validates a parsed file into a [`Scenario`]; `stem` is the default name. `overrides` are the
/// command line's `--set`s, in order. The base scenario (the file with the overrides merged over
/// it) is resolved first, then each variant (the file, its `set:`, then the overrides).
pub(crate) fn validate(
    raw: Spanned<RawScenario>,
    src: &Source<'_>,
    stem: &str,
    overrides: &[RawScenario],
) -> Result<Scenario, Error> {
    let c = Checker { src };
    let file = raw.value;
    let mut raw = file.clone();
    for o in overrides {
        raw.merge(o.clone());
    }
    // Each variant is a whole scenario: refuse a list too long before resolving any of it.
    if let Some(list) = &raw.variants
        && list.value.over()
    {
        let e = c.err(
            ErrorKind::BadValue,
            Some(list.referenced),
            "variants",
            format!(
                "{} variants; a scenario may list at most {MAX_VARIANTS}",
                list.value.total
            ),
            "split the sweep over several scenario files (a script can write them), or \
             sweep one field at a time with --set",
        );
        return Err(with_overrides(src, src.at_key(e, "variants")));
    }
    let mut base = scenario(&c, &raw, stem).map_err(|e| with_overrides(src, e))?;
    base.variants =
        variants(&c, &file, &raw, stem, overrides).map_err(|e| with_overrides(src, e))?;
    work_in_bounds(&c, &raw, &base).map_err(|e| with_overrides(src, e))?;
    Ok(base)
}

/// Most variants a scenario may list. A comparison of kernels and patches needs a handful (the
/// shipped scenarios list five); past 100 the report, one block per variant and policy, is no
/// longer read, and every variant is a whole scenario to resolve and hold. A larger sweep is a
/// script writing one scenario per point.
pub const MAX_VARIANTS: usize = 100;

/// Most workloads a scenario may list. Each is a job group with its own state and report
/// lines; a job run many times is one workload with `numjobs`.
pub const MAX_WORKLOADS: usize = 64;

/// Most GFP_ATOMIC streams a scenario may list.
pub const MAX_ATOMIC_STREAMS: usize = 64;

/// Most I/Os the fio jobs of a scenario may keep in flight together: the sum over workloads of
/// `iodepth × numjobs`. Measured: an NVMe fio job at `iodepth: 65536, numjobs: 16` (a million
/// in flight) peaks at 159 MB, about 150 bytes an I/O, and each worker thread runs its own
/// copy; 262,144 in flight is 40 MB a run, far past any real queue (NVMe: 1023 per queue).
pub const MAX_IN_FLIGHT: u64 = 262_144;

/// Refuses fio jobs that together keep more than [`MAX_IN_FLIGHT`] I/Os in flight, at the
/// `iodepth` (or `numjobs`) of the workload that passes the bound.
fn in_flight_bounded(
    c: &Checker,
    raw: &Spanned<Capped<Spanned<RawWorkload>, MAX_WORKLOADS>>,
    workloads: &[WorkloadConfig],
) -> Result<(), Error> {
    let mut total = 0u64;
    for (i, (w, r)) in workloads.iter().zip(raw.value.iter()).enumerate() {
        let WorkloadKind::Fio(f) = &w.kind else {
            continue;
        };
        let depth = match f.arrivals {
            Arrivals::Closed { iodepth, .. } | Arrivals::Open { iodepth, .. } => iodepth,
        };
        total += u64::from(depth) * u64::from(f.numjobs);
        if total > MAX_IN_FLIGHT {
            let (field, l) = match (&r.value.iodepth, &r.value.numjobs) {
                (Some(d), _) => ("iodepth", Some(d.referenced)),
                (None, Some(n)) => ("numjobs", Some(n.referenced)),
                (None, None) => ("iodepth", Some(r.referenced)),
            };
            return Err(c.err(
                ErrorKind::BadValue,
                l,
                &format!("workloads[{i}].{field}"),
                format!(
                    "the fio jobs keep {total} I/Os in flight in all (iodepth × numjobs, summed \
                     up to this workload); at most {MAX_IN_FLIGHT} may be"
                ),
                "every I/O in flight is held in memory (about 150 bytes, in each worker \
                 thread's run); real queues hold a few thousand: lower iodepth or numjobs",
            ));
        }
    }
    Ok(())
}

/// Refuses a list that held more items than it may ([`Capped::over`]), naming how many it
/// held and the most it may hold, at the list's key.
fn too_long<T, const MAX: usize>(
    c: &Checker,
    list: &Spanned<Capped<T, MAX>>,
    path: &str,
    what: &str,
    hint: &str,
) -> Result<(), Error> {
    if !list.value.over() {
        return Ok(());
    }
    let e = c.err(
        ErrorKind::BadValue,
        Some(list.referenced),
        path,
        format!(
            "{} {what}; a scenario may list at most {MAX}",
            list.value.total
        ),
        hint,
    );
    Err(c.src.at_key(e, path))
}

/// Most runs one scenario asks for: its policies, or with variants every variant's policies.
/// Each run keeps its first replication and its pooled observations until the report is
/// written. Measured with `/usr/bin/time -v` on two-queue with 85 variants × 3 policies (255
/// runs, 60 s each, `-r 2`): 204 MB peak, 0.8 MB a run; 427 MB (1.7 MB a run) with `--json` and
/// `--plots`. At 256 runs a `qsim run` stays under half a GiB whatever it exports.
pub const MAX_RUNS: usize = 256;

/// Most replications one `qsim run` may do in all, over every run (runs × replications). Each
/// replication's summary is kept for the spread and the confidence intervals: about 0.8 KB
/// apiece (measured: 18 runs × 400 replications add 5.6 MB), so this adds at most ~80 MB to
/// the [`MAX_RUNS`] bound.
pub const MAX_TOTAL_REPLICATIONS: u64 = 100_000;

/// How many runs a resolved scenario asks for: one per policy, or with variants one per
/// variant and policy of that variant (the plan `qsim run` carries out).
pub fn run_count(sc: &Scenario) -> usize {
    if sc.variants.is_empty() {
        sc.policies.len()
    } else {
        sc.variants.iter().map(|v| v.scenario.policies.len()).sum()
    }
}

/// How many replications a resolved scenario asks for in all: each run's `replications`, or
/// `replications` for every run when given (the command line's `-r`, or under `--precision`
/// the most a run may reach).
pub fn total_replications(sc: &Scenario, replications: Option<u32>) -> u64 {
    let per = |s: &Scenario| u64::from(replications.unwrap_or(s.replications));
    if sc.variants.is_empty() {
        sc.policies.len() as u64 * per(sc)
    } else {
        sc.variants
            .iter()
            .map(|v| v.scenario.policies.len() as u64 * per(&v.scenario))
            .sum()
    }
}

/// The hint for a scenario that asks for too much at once.
const WORK_HINT: &str = "fewer variants, policies or replications; or split the scenario: \
                         every run and replication of one `qsim run` is held in memory until \
                         the report is written";

/// Why a resolved scenario asks for more than one `qsim run` may hold, if it does, as the
/// message of an error: more than [`MAX_RUNS`] runs, or more than [`MAX_TOTAL_REPLICATIONS`]
/// replications in all (with `replications` for every run when given).
fn work_problem(sc: &Scenario, replications: Option<u32>) -> Option<String> {
    let runs = run_count(sc);
    let what = if sc.variants.is_empty() {
        format!("{runs} policies")
    } else {
        format!("{} variants with {runs} runs in all", sc.variants.len())
    };
    if runs > MAX_RUNS {
        return Some(format!(
            "{what}: a scenario may ask for at most {MAX_RUNS} runs (a policy of a variant is \
             one run)"
        ));
    }
    let total = total_replications(sc, replications);
    (total > MAX_TOTAL_REPLICATIONS).then(|| {
        let each = match replications {
            Some(r) => format!(" × {r} replications"),
            None => String::new(),
        };
        format!(
            "{what}{each} make {total} replications; one run of qsim may do at most \
             {MAX_TOTAL_REPLICATIONS}"
        )
    })
}

/// The file's bounds on work ([`work_problem`]), located at `variants:` (or `replications:`, or
/// `policies:`), after everything is resolved.
fn work_in_bounds(c: &Checker, raw: &RawScenario, sc: &Scenario) -> Result<(), Error> {
    let Some(problem) = work_problem(sc, None) else {
        return Ok(());
    };
    let too_many_runs = run_count(sc) > MAX_RUNS;
    let (path, l) = match (&raw.variants, &raw.replications) {
        (_, Some(r)) if !too_many_runs => ("replications", Some(r.referenced)),
        (Some(v), _) => ("variants", Some(v.referenced)),
        (None, _) => ("policies", loc(&raw.policies)),
    };
    let e = c.err(ErrorKind::BadValue, l, path, problem, WORK_HINT);
    Err(c.src.at_key(e, path))
}

/// Checks a resolved scenario against the bounds on one `qsim run` ([`MAX_RUNS`] runs,
/// [`MAX_TOTAL_REPLICATIONS`] replications in all) after the command line has changed it:
/// `replications` counts every run with that many (the `-r` value, or under `--precision` the
/// most replications a run may reach), and `origin` names the argument in the error (`-r 500`),
/// which is a [`ErrorKind::BadValue`] with exit code 2 like any scenario error. Loading
/// already checked the file and its `--set`s without them.
pub fn check_work(sc: &Scenario, replications: Option<u32>, origin: &str) -> Result<(), Error> {
    match work_problem(sc, replications) {
        None => Ok(()),
        Some(problem) => Err(Error::whole_file(
            ErrorKind::BadValue,
            origin,
            format!("the scenario `{}` has {problem}", sc.name),
            Some(WORK_HINT.to_string()),
        )),
    }
}

/// An error about a value of the file that only the `--set`s made wrong (`ram` lowered below
/// the file's `unreclaimable`) says which overrides were in force.
fn with_overrides(src: &Source<'_>, mut e: Error) -> Error {
    let from_override = src.overrides.iter().any(|o| o.label == e.0.file);
    if !src.overrides.is_empty() && !from_override {
        let labels: Vec<&str> = src.overrides.iter().map(|o| o.label.as_str()).collect();
        e.0.message = format!("with {}: {}", labels.join(", "), e.0.message);
    }
    e
}

/// Resolves everything but `variants` (left empty).
fn scenario(c: &Checker, raw: &RawScenario, stem: &str) -> Result<Scenario, Error> {
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
        Some(s) => c.name(s, "name")?,
        None => c.stem_name(stem)?,
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
    let max_events = c.int(&raw.max_events, "max_events", DEFAULT_MAX_EVENTS)?;
    let replications = c.int(&raw.replications, "replications", DEFAULT_REPLICATIONS)?;
    let cpus = c.int(&raw.cpus, "cpus", 1)?;

    let (kernel, patch_locs) = kernel(c, raw.kernel.as_ref().map(|k| &k.value))?;

    let device = match &raw.device {
        Some(d) => device(c, &d.value, d.referenced)?,
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
    let block = block(c, raw.block.as_ref().map(|b| &b.value), &kernel)?;
    let crypt = crypt(c, raw.crypt.as_ref().map(|b| &b.value), &patch_locs)?;
    let policies = policies(c, &raw.policies)?;
    if let Some(d) = &raw.device {
        request_floor(c, &d.value, d.referenced, &device, &crypt, &policies)?;
    }
    let memory = match &raw.memory {
        Some(m) => Some(memory(c, &m.value, m.referenced)?),
        None => None,
    };

    let raw_workloads = match &raw.workloads {
        Some(w) if !w.value.is_empty() => {
            too_long(
                c,
                w,
                "workloads",
                "workloads",
                "give a job several copies with `numjobs` rather than listing it many times",
            )?;
            w
        }
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
        let wl = workload(c, &w.value, w.referenced, &path, i, &mut cursor, capacity)?;
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
    in_flight_bounded(c, raw_workloads, &workloads)?;

    Ok(Scenario {
        name,
        description,
        seed,
        duration,
        warmup,
        max_events,
        replications,
        cpus,
        kernel,
        device,
        block,
        crypt,
        policies,
        workloads,
        memory,
        variants: Vec::new(),
    })
}

/// The `variants:` list (of `raw`, the file with the overrides): each variant's `set:` merged
/// over the `file`, then the command line's `overrides` over that, and resolved in full.
fn variants(
    c: &Checker,
    file: &RawScenario,
    raw: &RawScenario,
    stem: &str,
    overrides: &[RawScenario],
) -> Result<Vec<Variant>, Error> {
    let Some(list) = &raw.variants else {
        return Ok(Vec::new());
    };
    if list.value.is_empty() {
        return Err(c.err(
            ErrorKind::Missing,
            Some(list.referenced),
            "variants",
            "the variant list is empty",
            "list at least one, e.g. `- { name: \"2.6.30\", set: { kernel: { version: \"2.6.30\" } } }`, \
             or remove `variants:`",
        ));
    }
    let mut base = file.clone();
    base.variants = None;
    let mut out: Vec<Variant> = Vec::new();
    for (i, v) in list.value.iter().enumerate() {
        let path = format!("variants[{i}]");
        let name = match &v.value.name {
            None => {
                return Err(c.err(
                    ErrorKind::Missing,
                    Some(v.referenced),
                    &at(&path, "name"),
                    "the variant has no `name`",
                    "name it as the report should label it, e.g. `name: \"2.6.30\"`",
                ));
            }
            Some(s) if s.value.trim().is_empty() => {
                return Err(c.err(
                    ErrorKind::BadValue,
                    Some(s.referenced),
                    &at(&path, "name"),
                    "the variant name is empty",
                    "name it as the report should label it, e.g. `name: \"2.6.30\"`",
                ));
            }
            Some(s) => c.name(s, &at(&path, "name"))?,
        };
        if out.iter().any(|o| o.name == name) {
            return Err(c.err(
                ErrorKind::Conflict,
                loc(&v.value.name),
                &at(&path, "name"),
                format!("variant name `{name}` is used twice"),
                "give each variant its own name: the report labels its results with it",
            ));
        }
        let Some(set) = &v.value.set else {
            return Err(c.err(
                ErrorKind::Missing,
                Some(v.referenced),
                &at(&path, "set"),
                format!("variant `{name}` has no `set`"),
                "add the fields it changes, e.g. `set: { kernel: { version: \"2.6.30\" } }`",
            ));
        };
        let set_path = at(&path, "set");
        let fixed = [
            ("name", loc(&set.value.name)),
            ("description", loc(&set.value.description)),
            ("seed", loc(&set.value.seed)),
            ("variants", loc(&set.value.variants)),
        ];
        if let Some(&(field, l)) = fixed.iter().find(|(_, l)| l.is_some()) {
            let hint = match field {
                "seed" => {
                    "variants share the base's seed so that they compare on the same random \
                     numbers; change `seed` at the top level"
                }
                "variants" => "variants do not nest: list every variant at the top level",
                _ => {
                    "a variant is labelled by the `name:` beside its `set:`; the scenario's name \
                     and description are shared"
                }
            };
            return Err(c.err(
                ErrorKind::Conflict,
                l,
                &at(&set_path, field),
                format!("a variant cannot set `{field}`"),
                hint,
            ));
        }
        let mut merged = base.clone();
        merged.merge(set.value.clone());
        for o in overrides {
            merged.merge(o.clone());
        }
        let resolved =
            scenario(c, &merged, stem).map_err(|e| in_variant(c, e, &set_path, &name))?;
        out.push(Variant {
            name,
            scenario: Box::new(resolved),
        });
    }
    Ok(out)
}

/// Marks an error raised while resolving a variant: the message names the variant, and when
/// the value at fault was written inside its `set:` the path says so (`variants[0].set.kernel.
/// version`); a value of the base file keeps its own path.
fn in_variant(c: &Checker, mut e: Error, set_path: &str, name: &str) -> Error {
    let inside = match (e.line(), e.column()) {
        (Some(l), Some(col)) => c
            .src
            .outline
            .path_at(l, col, false)
            .is_some_and(|p| p == set_path || p.starts_with(&format!("{set_path}."))),
        _ => false,
    };
    if inside {
        e.0.path = Some(match e.0.path.take() {
            Some(p) if !p.is_empty() => format!("{set_path}.{p}"),
            _ => set_path.to_string(),
        });
    }
    e.0.message = format!("in variant `{name}`: {}", e.0.message);
    e
}

/// `kernel:`: HZ, then the version's switches, the patches, and the explicit knobs in that
/// order. Also returns each patch with its location, for the crypt section's check.
fn kernel(
    c: &Checker,
    k: Option<&RawKernel>,
) -> Result<(KernelConfig, Vec<(String, Location)>), Error> {
    let hz = match k.and_then(|k| k.hz.as_ref()) {
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
    let mut kernel = KernelConfig::new(hz);
    let Some(k) = k else {
        return Ok((kernel, Vec::new()));
    };
    if let Some(v) = &k.version {
        kernel.version = v.value.version().ok_or_else(|| {
            c.err(
                ErrorKind::UnknownName,
                Some(v.referenced),
                "kernel.version",
                format!("unknown kernel version `{}`", super::shorten(&v.value.0)),
                format!(
                    "qsim models {} (MODEL.md §6); 2.6.32 is the default",
                    VERSION_NAMES.join(", ")
                ),
            )
        })?;
    }
    let patches = patches(c, &k.patches)?;
    let mut vm = kernel.version.defaults();
    let patched = |name: &str| patches.iter().find(|(p, _)| p == name).map(|(_, l)| *l);
    if patched("kswapd-stay-awake-when-min").is_some() {
        vm.skip_below_min = true;
    }
    if patched("force-highorder").is_some() {
        vm.force_highorder = true;
    }
    if let Some(cw) = &k.cwait_class {
        vm.cwait_class = match cw.value {
            CwaitClassName::Sync => CwaitClass::Sync,
            CwaitClassName::Async => CwaitClass::Async,
        };
    }
    let knobs: [(&str, &Field<bool>, &mut bool, Option<&str>); 5] = [
        ("kswapd_nap", &k.kswapd_nap, &mut vm.kswapd_nap, None),
        (
            "skip_below_min",
            &k.skip_below_min,
            &mut vm.skip_below_min,
            Some("kswapd-stay-awake-when-min"),
        ),
        (
            "wait_iff_congested",
            &k.wait_iff_congested,
            &mut vm.wait_iff_congested,
            None,
        ),
        (
            "force_highorder",
            &k.force_highorder,
            &mut vm.force_highorder,
            Some("force-highorder"),
        ),
        (
            "restart_wakes_kswapd",
            &k.restart_wakes_kswapd,
            &mut vm.restart_wakes_kswapd,
            None,
        ),
    ];
    for (field, f, slot, patch) in knobs {
        let Some(s) = f else { continue };
        if !s.value
            && let Some(patch) = patch
            && let Some(pl) = patched(patch)
        {
            return Err(patch_conflict(
                c,
                &patches,
                patch,
                pl,
                &format!("kernel.{field}"),
                s.referenced,
            ));
        }
        *slot = s.value;
    }
    kernel.vm = vm;
    kernel.patches = patches.iter().map(|(p, _)| p.clone()).collect();
    Ok((kernel, patches))
}

/// A patch listed together with `<field>: false`, which undoes it: located at the patch.
fn patch_conflict(
    c: &Checker,
    patches: &[(String, Location)],
    patch: &str,
    patch_loc: Location,
    field: &str,
    field_loc: Location,
) -> Error {
    let index = patches.iter().position(|(p, _)| p == patch).unwrap_or(0);
    let short = field.rsplit('.').next().unwrap_or(field);
    c.err(
        ErrorKind::Conflict,
        Some(patch_loc),
        &format!("kernel.patches[{index}]"),
        format!(
            "the patch `{patch}` turns `{field}` on, but line {} sets it to false",
            field_loc.line()
        ),
        format!("the patch is that switch turned on: remove the patch or the `{short}: false`"),
    )
}

/// `kernel.patches`: known names, each once. An empty list is allowed (a variant may clear the
/// base's patches with `patches: []`).
fn patches(
    c: &Checker,
    f: &Field<Capped<Spanned<String>, MAX_LISTED_NAMES>>,
) -> Result<Vec<(String, Location)>, Error> {
    let Some(list) = f else {
        return Ok(Vec::new());
    };
    too_long(
        c,
        list,
        "kernel.patches",
        "patches",
        "each patch may be listed once",
    )?;
    let mut out: Vec<(String, Location)> = Vec::new();
    for (i, p) in list.value.iter().enumerate() {
        let path = format!("kernel.patches[{i}]");
        if !PATCHES.contains(&p.value.as_str()) {
            // MODEL.md spells them with underscores; suggest the dashed name for those too.
            let normal = p.value.trim().to_ascii_lowercase().replace('_', "-");
            let hint = match suggestion(&normal, PATCHES) {
                Some(s) => format!("did you mean `{s}`? valid patches: {}", PATCHES.join(", ")),
                None => format!("valid patches: {}", PATCHES.join(", ")),
            };
            return Err(c.err(
                ErrorKind::UnknownName,
                Some(p.referenced),
                &path,
                format!("unknown patch `{}`", super::shorten(&p.value)),
                hint,
            ));
        }
        if out.iter().any(|(q, _)| *q == p.value) {
            return Err(c.err(
                ErrorKind::Conflict,
                Some(p.referenced),
                &path,
                format!("patch `{}` is listed twice", super::shorten(&p.value)),
                "list each patch once",
            ));
        }
        out.push((p.value.clone(), p.referenced));
    }
    Ok(out)
}

/// `memory:`: the zone's size and layout, dm-crypt's pools and the GFP_ATOMIC streams.
fn memory(c: &Checker, m: &RawMemory, here: Location) -> Result<MemoryConfig, Error> {
    let Some(ram_f) = &m.ram else {
        return Err(c.err(
            ErrorKind::Missing,
            Some(here),
            "memory.ram",
            "the memory section has no `ram`",
            "give the size of the machine's low memory, e.g. `ram: 2GiB`",
        ));
    };
    let ram = ram_f.value.0;
    let (lo, hi) = RAM_RANGE;
    if ram < lo || ram > hi {
        return Err(c.err(
            ErrorKind::BadValue,
            Some(ram_f.referenced),
            "memory.ram",
            format!(
                "must be between {} and {}, got {}",
                format_bytes(lo),
                format_bytes(hi),
                format_bytes(ram)
            ),
            "one lowmem zone of a 2009-era machine: 512MiB, 2GiB, 4GiB, …",
        ));
    }
    pages_only(c, ram, &m.ram, "memory.ram")?;
    let ram_kb = ram / 1024;
    let default_mfk = min_free_kbytes(ram_kb, WatermarkKernel::V2_6_32);
    let max_mfk = ram_kb / 32;
    let mfk = match &m.min_free_kbytes {
        None => default_mfk,
        Some(s) if (128..=max_mfk).contains(&s.value) => s.value,
        Some(s) => {
            return Err(c.err(
                ErrorKind::BadValue,
                Some(s.referenced),
                "memory.min_free_kbytes",
                format!(
                    "must be between 128 and {max_mfk} for {} of ram, got {}",
                    format_bytes(ram),
                    s.value
                ),
                format!(
                    "the kernel's own value for {} is {default_mfk} (leave the field out for it); \
                     at most ram/32, so that the default layout (half unreclaimable, 16·min \
                     free) still fits",
                    format_bytes(ram)
                ),
            ));
        }
    };
    let marks = Watermarks::v2_6_32(mfk);
    let unreclaimable = match &m.unreclaimable {
        Some(s) => {
            pages_only(c, s.value.0, &m.unreclaimable, "memory.unreclaimable")?;
            s.value.0
        }
        None => ram / 2 / PAGE * PAGE,
    };
    let high_bytes = marks.high * PAGE;
    // dm-crypt's page_pool reserve is allocated from the zone at boot too (its range is
    // checked below, with the other counts).
    let pool_bytes = val(&m.page_pool).map_or(32, u64::from).saturating_mul(PAGE);
    let room = ram.saturating_sub(high_bytes);
    if pool_bytes > room {
        return Err(c.err(
            ErrorKind::Conflict,
            loc(&m.page_pool),
            "memory.page_pool",
            format!(
                "a reserve of {} pages leaves less than the high watermark ({} pages) free in \
                 {} of ram",
                pool_bytes / PAGE,
                marks.high,
                format_bytes(ram)
            ),
            format!(
                "at most {} pages; dm-crypt's own reserve is 32 (MIN_POOL_PAGES)",
                room / PAGE
            ),
        ));
    }
    // The largest unreclaimable amount that leaves `high` free with the page_pool reserve and
    // no page cache at all.
    let max_unreclaimable = room - pool_bytes;
    if unreclaimable > max_unreclaimable {
        return Err(c.err(
            ErrorKind::Conflict,
            loc(&m.unreclaimable),
            "memory.unreclaimable",
            format!(
                "{} of {} ram leaves less than the high watermark ({} pages) free beside the \
                 page_pool reserve ({} pages)",
                format_bytes(unreclaimable),
                format_bytes(ram),
                marks.high,
                pool_bytes / PAGE
            ),
            format!(
                "at most {} ({} bytes); the zone must start above its high watermark",
                format_bytes(max_unreclaimable),
                max_unreclaimable
            ),
        ));
    }
    let mapped = match &m.mapped {
        Some(s) => {
            pages_only(c, s.value.0, &m.mapped, "memory.mapped")?;
            if s.value.0 > unreclaimable {
                return Err(c.err(
                    ErrorKind::Conflict,
                    Some(s.referenced),
                    "memory.mapped",
                    format!(
                        "{} is more than the {} of unreclaimable memory it is part of",
                        format_bytes(s.value.0),
                        format_bytes(unreclaimable)
                    ),
                    "mapped pages are the part of `unreclaimable` that reclaim scans (and \
                     rotates) on the file LRU; at most all of it",
                ));
            }
            s.value.0
        }
        None => unreclaimable / 2 / PAGE * PAGE,
    };
    let page_cache = match &m.page_cache {
        Some(s) => {
            pages_only(c, s.value.0, &m.page_cache, "memory.page_cache")?;
            let max = max_unreclaimable - unreclaimable;
            if s.value.0 > max {
                return Err(c.err(
                    ErrorKind::Conflict,
                    Some(s.referenced),
                    "memory.page_cache",
                    format!(
                        "{} of cache plus {} unreclaimable leaves less than the high watermark \
                         ({} pages) free beside the page_pool reserve ({} pages) in {} of ram",
                        format_bytes(s.value.0),
                        format_bytes(unreclaimable),
                        marks.high,
                        pool_bytes / PAGE,
                        format_bytes(ram)
                    ),
                    format!(
                        "at most {} ({max} bytes); the zone must start above its high watermark",
                        format_bytes(max)
                    ),
                ));
            }
            s.value.0
        }
        // Start with free = 16·min pages (16·min_free_kbytes KiB): well above high, so the
        // run begins quiet and pressure builds from the workloads.
        // Never so much that the reserve would leave less than `high` free.
        None => ram
            .saturating_sub(unreclaimable)
            .saturating_sub(DEFAULT_FREE_MINS * marks.min * PAGE)
            .min(max_unreclaimable - unreclaimable),
    };
    let coalesce = match &m.coalesce {
        None => 0.5,
        Some(s) if (0.0..=1.0).contains(&s.value) => s.value,
        Some(s) => {
            return Err(c.err(
                ErrorKind::BadValue,
                Some(s.referenced),
                "memory.coalesce",
                format!("is a probability, between 0 and 1, got {}", s.value),
                "0 never merges freed blocks (fragmentation builds up), 1 always merges; 0.5 is the default",
            ));
        }
    };
    let scan_cost = c.dur(
        &m.scan_cost,
        "memory.scan_cost",
        SimDuration::from_ns(200),
        false,
    )?;
    let page_pool = c.int(&m.page_pool, "memory.page_pool", 32)?;
    let min_bio_pages = c.int(&m.min_bio_pages, "memory.min_bio_pages", 8)?;
    let mut atomic: Vec<AtomicStream> = Vec::new();
    if let Some(list) = &m.atomic {
        too_long(
            c,
            list,
            "memory.atomic",
            "atomic streams",
            "a machine has a few drivers allocating GFP_ATOMIC; merge streams by adding their \
             rates",
        )?;
        for (i, a) in list.value.iter().enumerate() {
            let path = format!("memory.atomic[{i}]");
            let stream = atomic_stream(c, &a.value, a.referenced, &path, i)?;
            if atomic.iter().any(|s| s.name == stream.name) {
                return Err(c.err(
                    ErrorKind::Conflict,
                    loc(&a.value.name).or(Some(a.referenced)),
                    &at(&path, "name"),
                    format!("atomic stream name `{}` is used twice", stream.name),
                    "give each stream its own `name:` (the default is atomic<index>)",
                ));
            }
            atomic.push(stream);
        }
    }
    Ok(MemoryConfig {
        ram,
        min_free_kbytes: mfk,
        unreclaimable,
        mapped,
        page_cache,
        coalesce,
        scan_cost,
        page_pool,
        min_bio_pages,
        atomic,
    })
}

/// Refuses a memory amount that is not a whole number of 4 KiB pages.
fn pages_only(c: &Checker, bytes: u64, f: &Field<Size>, path: &str) -> Result<(), Error> {
    if bytes.is_multiple_of(PAGE) {
        return Ok(());
    }
    let down = bytes / PAGE * PAGE;
    Err(c.err(
        ErrorKind::BadValue,
        loc(f),
        path,
        format!(
            "must be a whole number of 4KiB pages, got {}",
            format_bytes(bytes)
        ),
        format!(
            "use binary units (2GiB, 512MiB), or {} ({down} bytes) rounded down",
            format_bytes(down)
        ),
    ))
}

/// One entry of `memory.atomic:`.
fn atomic_stream(
    c: &Checker,
    a: &RawAtomic,
    here: Location,
    path: &str,
    index: usize,
) -> Result<AtomicStream, Error> {
    let p = |f: &str| at(path, f);
    let name = match &a.name {
        Some(s) if s.value.trim().is_empty() => {
            return Err(c.err(
                ErrorKind::BadValue,
                Some(s.referenced),
                &p("name"),
                "the name is empty",
                "give a short name, or leave it out for atomic<index>",
            ));
        }
        Some(s) => c.name(s, &p("name"))?,
        None => format!("atomic{index}"),
    };
    let preset = val(&a.preset).unwrap_or(AtomicPresetName::Custom);
    let rate = match (&a.rate, &a.bandwidth) {
        (Some(_), Some(b)) => {
            return Err(c.err(
                ErrorKind::Conflict,
                Some(b.referenced),
                &p("bandwidth"),
                "give `rate` or `bandwidth`, not both",
                "`rate` counts allocations per second; `bandwidth` is a throughput divided by \
                 `buffer`",
            ));
        }
        (None, None) => {
            return Err(c.err(
                ErrorKind::Missing,
                Some(here),
                &p("rate"),
                "the stream has neither `rate` nor `bandwidth`",
                "allocations per second (`rate: 500/s`) or a network throughput (`bandwidth: \
                 4MB/s`, divided by `buffer`, 8KiB by default)",
            ));
        }
        (Some(r), None) => {
            if let Some(b) = &a.buffer {
                return Err(c.err(
                    ErrorKind::Conflict,
                    Some(b.referenced),
                    &p("buffer"),
                    "`buffer` is used only with `bandwidth`",
                    "remove `buffer`, or replace `rate` by `bandwidth`",
                ));
            }
            match r.value.0 {
                Rate::OpsPerSec(n) => {
                    c.arrival_rate(n, &r.value.0, Some(r.referenced), &p("rate"))?
                }
                Rate::BytesPerSec(b) => {
                    return Err(c.err(
                        ErrorKind::BadValue,
                        Some(r.referenced),
                        &p("rate"),
                        format!(
                            "`rate` counts allocations per second, got the throughput {}",
                            format_bandwidth(b)
                        ),
                        format!(
                            "write `bandwidth: {}` (divided by `buffer`), or `rate: 500/s`",
                            format_bandwidth(b)
                        ),
                    ));
                }
            }
        }
        (None, Some(b)) => {
            let bytes = c.bandwidth(b, &p("bandwidth"))?;
            let buffer = match &a.buffer {
                Some(s) if s.value.0 == 0 => {
                    return Err(c.err(
                        ErrorKind::BadValue,
                        Some(s.referenced),
                        &p("buffer"),
                        "the buffer size is zero",
                        "bytes per allocation, e.g. 8KiB (an A-MSDU), 4KiB, 1500",
                    ));
                }
                Some(s) => s.value.0,
                None => DEFAULT_BUFFER,
            };
            c.arrival_rate(
                bytes / buffer as f64,
                &format!("{} over {} buffers", b.value, format_bytes(buffer)),
                Some(b.referenced),
                &p("bandwidth"),
            )?
        }
    };
    let preset_orders = match preset {
        AtomicPresetName::Iwlagn => IWLAGN_ORDERS,
        AtomicPresetName::Custom => DEFAULT_ORDERS,
    };
    let orders = match &a.orders {
        Some(o) => orders(c, o, &p("orders"))?,
        None => preset_orders.to_vec(),
    };
    let hold = match &a.hold {
        Some(h) => distribution(c, h, &p("hold"))?,
        None => Distribution::Exponential {
            mean: SimDuration::from_ms(2),
        },
    };
    let overridden = a.orders.is_some() || a.buffer.is_some();
    Ok(AtomicStream {
        name,
        preset: if preset == AtomicPresetName::Iwlagn && overridden {
            format!("{} (custom)", preset.name())
        } else {
            preset.name().to_string()
        },
        rate,
        poisson: val(&a.poisson).unwrap_or(true),
        orders,
        hold,
        burst: c.int(&a.burst, &at(path, "burst"), 1)?,
    })
}

/// `orders:` → probabilities indexed by order, summing to 1, without trailing zero orders.
fn orders(c: &Checker, o: &Spanned<OrderWeights>, path: &str) -> Result<Vec<f64>, Error> {
    let example = "map each buddy order (0 to 10) to a weight: {0: 0.5, 1: 0.3, 2: 0.2}";
    let mut w = [0.0f64; MAX_ORDER + 1];
    let mut seen = [false; MAX_ORDER + 1];
    for (k, v) in &o.value.0 {
        let order = match usize::try_from(k.value) {
            Ok(n) if n <= MAX_ORDER => n,
            _ => {
                return Err(c.err(
                    ErrorKind::BadValue,
                    Some(k.referenced),
                    path,
                    format!(
                        "order {} is out of range: buddy orders run from 0 to {MAX_ORDER}",
                        k.value
                    ),
                    example,
                ));
            }
        };
        if seen[order] {
            return Err(c.err(
                ErrorKind::Conflict,
                Some(k.referenced),
                path,
                format!("order {order} is listed twice"),
                "list each order once",
            ));
        }
        seen[order] = true;
        if !(v.value.is_finite() && v.value >= 0.0) {
            return Err(c.err(
                ErrorKind::BadValue,
                Some(v.referenced),
                &format!("{path}.{order}"),
                format!(
                    "the weight of order {order} must be a number ≥ 0, got {}",
                    v.value
                ),
                "weights are relative: they are divided by their sum",
            ));
        }
        w[order] = v.value;
    }
    let sum: f64 = w.iter().sum();
    if !(sum > 0.0 && sum.is_finite()) {
        return Err(c.err(
            ErrorKind::BadValue,
            Some(o.referenced),
            path,
            "the weights add up to zero: no order can be drawn",
            example,
        ));
    }
    let len = w.iter().rposition(|&x| x > 0.0).map_or(0, |i| i + 1);
    Ok(w[..len].iter().map(|x| x / sum).collect())
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
    let queue_depth = |default: u32| c.int(&d.queue_depth, "device.queue_depth", default);
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
                Some(s) if s.value.0 > MAX_DISK_BYTES => {
                    return Err(c.err(
                        ErrorKind::BadValue,
                        Some(s.referenced),
                        "device.capacity",
                        format!(
                            "{} is larger than 1EiB, the largest disk qsim models",
                            format_bytes(s.value.0)
                        ),
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
            let overhead = c.dur(
                &d.overhead,
                "device.overhead",
                nvme_overhead(transfer_rate),
                false,
            )?;
            Ok(DeviceConfig::Nvme(NvmeConfig {
                latency: c.dur(&d.latency, "device.latency", NVME_LATENCY, false)?,
                channels: c.int(&d.channels, "device.channels", 1)?,
                overhead,
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
            let dist = distribution(c, service, "device.service")?;
            Ok(DeviceConfig::Generic(GenericDeviceConfig {
                service: dist,
                channels: c.int(&d.channels, "device.channels", 1)?,
                queue_depth: queue_depth(1_000_000)?,
            }))
        }
    }
}

/// Refuses a scenario in which a 512-byte request could cost less than [`MIN_SERVICE`] under one
/// of its policies: the device's part (a generic service mean, an NVMe's `overhead + 512 B /
/// transfer_rate`, an HDD's `512 B / transfer_rate`, which a sequential request pays alone)
/// plus dm-crypt's (`crypt.cost`'s mean, or the cheaper of encrypting and decrypting 512 B),
/// which policy `none` skips. A free device is fine when dm-crypt is the server (the textbook
/// checks of `qsim validate` do that); both free is not: requests then complete in no
/// simulated time and a closed loop never lets the clock move. Located at the device field
/// that sets its part.
fn request_floor(
    c: &Checker,
    raw: &RawDevice,
    here: Location,
    device: &DeviceConfig,
    crypt: &CryptConfig,
    policies: &[String],
) -> Result<(), Error> {
    let bytes = SECTOR as f64;
    let (dev, what, path, l, hint) = match device {
        DeviceConfig::Hdd(h) => (
            bytes / h.transfer_rate,
            format!(
                "a disk streaming {} moves a 512-byte sector in {}",
                format_bandwidth(h.transfer_rate),
                fmt_ns(bytes / h.transfer_rate)
            ),
            "device.transfer_rate",
            loc(&raw.transfer_rate),
            "the most an HDD may stream is 5.12GB/s (one sector in 100ns); real ones do 50 to \
             300 MB/s",
        ),
        DeviceConfig::Nvme(n) => {
            let cost = n.overhead.as_secs_f64() + bytes / n.transfer_rate;
            let (path, l) = match (&raw.overhead, &raw.transfer_rate) {
                (Some(o), _) => ("device.overhead", Some(o.referenced)),
                (None, t) => ("device.transfer_rate", loc(t)),
            };
            (
                cost,
                format!(
                    "a 512-byte request holds the NVMe device {} (overhead {} + 512 B at {})",
                    fmt_ns(cost),
                    n.overhead,
                    format_bandwidth(n.transfer_rate)
                ),
                path,
                l,
                "overhead + 512 B / transfer_rate must make at least 100ns: raise `overhead` (the \
                 preset's makes a 4 KiB request cost 5.18us) or lower `transfer_rate`",
            )
        }
        DeviceConfig::Generic(g) => (
            g.service.mean_secs(),
            format!("the mean service time is {}", fmt_ns(g.service.mean_secs())),
            "device.service",
            loc(&raw.service),
            "give a service time of at least 100ns on average, e.g. `service: 1ms` or \
             `{kind: exponential, mean: 100us}`",
        ),
    };
    let crypto = match &crypt.cost {
        Some(d) => d.mean_secs(),
        None => crate::model::physics::crypto_cost(crypt, SECTOR, true)
            .min(crate::model::physics::crypto_cost(crypt, SECTOR, false))
            .as_secs_f64(),
    };
    for p in policies {
        let plain = crate::model::policy::find(p)
            .is_some_and(|i| i.topology == crate::model::policy::Topology::Plain);
        let total = if plain { dev } else { dev + crypto };
        if SimDuration::from_secs_f64(total) >= MIN_SERVICE {
            continue;
        }
        let adds = if plain {
            format!("policy `{p}` adds no dm-crypt work")
        } else {
            format!("dm-crypt adds {} under policy `{p}`", fmt_ns(crypto))
        };
        return Err(c.err(
            ErrorKind::BadValue,
            l.or(Some(here)),
            path,
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

/// Seconds as a duration for a message, with fractions of a nanosecond kept (`0.146ns`).
fn fmt_ns(secs: f64) -> String {
    if secs * 1e9 < 1.0 {
        format!("{}ns", super::units::trim_float(secs * 1e9, 3))
    } else {
        SimDuration::from_secs_f64(secs).to_string()
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
    let nr_requests = c.int(&b.nr_requests, "block.nr_requests", 128)?;
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
    let unplug_threshold = c.int(&b.unplug_threshold, "block.unplug_threshold", 4)?;
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
        cfq_quantum: c.int(&b.quantum, "block.quantum", 4)?,
    })
}

fn crypt(
    c: &Checker,
    r: Option<&RawCrypt>,
    patches: &[(String, Location)],
) -> Result<CryptConfig, Error> {
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
    let unplug_patch = patches
        .iter()
        .find(|(p, _)| p == "dm-crypt-unplug")
        .map(|(_, l)| *l);
    let unplug_after_submit = match (&r.unplug_after_submit, unplug_patch) {
        (Some(s), Some(pl)) if !s.value => {
            return Err(patch_conflict(
                c,
                patches,
                "dm-crypt-unplug",
                pl,
                "crypt.unplug_after_submit",
                s.referenced,
            ));
        }
        (_, Some(_)) => true,
        (s, None) => val(s).unwrap_or(false),
    };
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
            queue_limit: c.int(&r.async_queue_limit, "crypt.async_queue_limit", 100)?,
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
        unplug_after_submit,
    })
}

fn policies(
    c: &Checker,
    f: &Field<Capped<Spanned<String>, MAX_LISTED_NAMES>>,
) -> Result<Vec<String>, Error> {
    let valid = crate::model::policy_names();
    let Some(list) = f else {
        return Ok(vec!["fifo".to_string()]);
    };
    too_long(
        c,
        list,
        "policies",
        "policies",
        "each policy may be listed once",
    )?;
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
                format!("unknown policy `{}`", super::shorten(&p.value)),
                hint,
            ));
        }
        if out.contains(&p.value) {
            return Err(c.err(
                ErrorKind::Conflict,
                Some(p.referenced),
                &path,
                format!("policy `{}` is listed twice", super::shorten(&p.value)),
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
                Some(v) if !v.value.is_empty() && v.value.len() <= MAX_EMPIRICAL_VALUES => {
                    v.value.iter().map(|x| x.value.0).collect()
                }
                Some(v) => {
                    return Err(c.err(
                        ErrorKind::BadValue,
                        Some(v.referenced),
                        &at(path, "values"),
                        format!(
                            "needs 1 to {MAX_EMPIRICAL_VALUES} values, got {}",
                            v.value.len()
                        ),
                        "list observed durations: [1ms, 2ms, 1.5ms]; for a larger sample, \
                         list a random subset of it",
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
        Some(s) => c.name(s, &at(path, "name"))?,
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
            let rwmixread = c.int(&w.rwmixread, &p("rwmixread"), 50)?;
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
            let iodepth = c.int(&w.iodepth, &p("iodepth"), 1)?;
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
                        rate: c.arrival_rate(
                            rate.value.ops_per_sec(bs),
                            &match rate.value {
                                Rate::BytesPerSec(_) => {
                                    format!("{} in {} blocks", rate.value, format_bytes(bs))
                                }
                                Rate::OpsPerSec(_) => rate.value.to_string(),
                            },
                            Some(rate.referenced),
                            &p("rate"),
                        )?,
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
            let (io_size, number_ios, startdelay) = fio_limits(c, w, path, bs)?;
            (
                WorkloadKind::Fio(FioJob {
                    rw,
                    rwmixread,
                    bs,
                    size,
                    offset,
                    arrivals,
                    numjobs: c.int(&w.numjobs, &p("numjobs"), 1)?,
                    sync_writes: val(&w.sync).unwrap_or(false),
                    direct: val(&w.direct).unwrap_or(false),
                    io_size,
                    number_ios,
                    startdelay,
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
            let rate = match c.bandwidth(rate, &p("rate"))? {
                b if b > MAX_WRITER_RATE => {
                    return Err(c.err(
                        ErrorKind::BadValue,
                        Some(rate.referenced),
                        &p("rate"),
                        format!(
                            "a writer dirtying {} is faster than the 10GB/s accepted",
                            rate.value
                        ),
                        "10GB/s is about a memory bus; a buffered writer of a few hundred MB/s \
                         already outruns any disk",
                    ));
                }
                b => b,
            };
            let chunk = request_size(&w.chunk, "chunk", MAX_REQUEST_BYTES)?;
            if !chunk.is_multiple_of(PAGE) {
                // The flusher writes page-cache pages: a part-page chunk would move bytes to
                // writeback without moving any page (torture seed 3).
                return Err(c.err(
                    ErrorKind::BadValue,
                    loc(&w.chunk),
                    &p("chunk"),
                    format!(
                        "must be a whole number of 4KiB pages, got {}",
                        format_bytes(chunk)
                    ),
                    format!(
                        "writeback writes whole page-cache pages: 4KiB, 64KiB, 512KiB, or {} \
                         rounded up",
                        format_bytes(chunk.div_ceil(PAGE) * PAGE)
                    ),
                ));
            }
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
/// A fio job's amount of work and start: `io_size` (whole sectors, at least one block),
/// `number_ios` (at least 1), `startdelay` (default 0). Absent limits mean the job runs until
/// the run ends.
fn fio_limits(
    c: &Checker,
    w: &RawWorkload,
    path: &str,
    bs: u64,
) -> Result<(Option<u64>, Option<u64>, SimDuration), Error> {
    let p = |f: &str| at(path, f);
    let io_size = match &w.io_size {
        None => None,
        Some(s) => {
            let v = s.value.0;
            c.size_multiple(v, &w.io_size, &p("io_size"))?;
            if v < bs {
                return Err(c.err(
                    ErrorKind::Conflict,
                    Some(s.referenced),
                    &p("io_size"),
                    format!(
                        "the job would do less than one block: io_size {} < bs {}",
                        format_bytes(v),
                        format_bytes(bs)
                    ),
                    "io_size (fio's io_limit) is the bytes each copy does before it stops: make \
                     it at least `bs`, or leave it out for a job that runs until the end",
                ));
            }
            Some(v)
        }
    };
    let number_ios = match &w.number_ios {
        None => None,
        Some(s) if s.value == 0 => {
            return Err(c.err(
                ErrorKind::BadValue,
                Some(s.referenced),
                &p("number_ios"),
                "must be at least 1, got 0",
                "the I/Os each copy issues before it stops; leave it out for no limit",
            ));
        }
        Some(s) => Some(s.value),
    };
    let startdelay = c.dur(&w.startdelay, &p("startdelay"), SimDuration::ZERO, false)?;
    Ok((io_size, number_ios, startdelay))
}

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
    let end = match offset.checked_add(size) {
        Some(end) if end <= MAX_DISK_BYTES => end,
        _ => {
            return Err(c.err(
                ErrorKind::BadValue,
                loc(&w.offset).or(loc(&w.size)),
                &at(path, if w.offset.is_some() { "offset" } else { "size" }),
                format!(
                    "the region starts at {} and is {} long: it would end past 1EiB ({} bytes), \
                     the largest disk qsim models",
                    format_bytes(offset),
                    format_bytes(size),
                    MAX_DISK_BYTES
                ),
                "give an offset and a size inside the disk, e.g. offset: 1GiB, size: 4GiB",
            ));
        }
    };
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
    use super::super::MAX_ECHO_CHARS;
    use super::super::describe::describe;
    use super::super::load_str;
    use super::*;
    use crate::model::physics::{crypto_cost, mean_service, moments};

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

    /// Torture seed 3: a 512-byte writeback chunk moved bytes to writeback without moving any
    /// page, and the run broke its dirty-page conservation law. Chunks are whole pages now.
    #[test]
    fn a_writeback_chunk_is_whole_pages() {
        let writer = |chunk: &str| {
            format!(
                "device: {{ kind: nvme }}\nmemory: {{ ram: 256MiB }}\nworkloads:\n  - \
                 {{ kind: buffered-writer, rate: 6MB/s, chunk: {chunk}, dirty_limit: 11303 }}\n"
            )
        };
        let e = err(&writer("0.5KiB"));
        assert_eq!(e.kind(), ErrorKind::BadValue);
        assert_eq!(e.path(), Some("workloads[0].chunk"));
        assert!(e.message().contains("whole number of 4KiB pages"), "{e}");
        assert!(e.hint().unwrap_or("").contains("4KiB rounded up"), "{e}");
        let e = err(&writer("6k"));
        assert!(e.hint().unwrap_or("").contains("8KiB rounded up"), "{e}");
        ok(&writer("8k"));
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
        assert!(
            text.contains("unlimited (runs until the run ends)"),
            "{text}"
        );
        assert!(!text.contains("ends earlier"), "{text}");
        let text = describe(&ok("device: { kind: nvme }\nworkloads:\n  \
             - { kind: gitk, io_size: 64MiB, number_ios: 100, numjobs: 2, startdelay: 5s }\n"));
        assert!(
            text.contains(
                "io_size 64MiB or number_ios 100 per copy, whichever comes first, then it stops"
            ),
            "{text}"
        );
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with("startdelay") && l.ends_with(" 5s")),
            "{text}"
        );
        assert!(
            text.contains("measured 60s; ends earlier once every finite job is done)"),
            "{text}"
        );
    }

    // ---- kernel version, patches and switches ----

    /// Line, column, path and hint of an error, for compact assertions.
    fn place(e: &Error) -> (Option<u64>, Option<u64>, Option<&str>) {
        (e.line(), e.column(), e.path())
    }

    #[test]
    fn no_memory_section_resolves_as_before() {
        let s = ok(BASE);
        assert_eq!(s.kernel.version, KernelVersion::V2_6_32);
        assert!(s.kernel.patches.is_empty());
        assert_eq!(s.kernel.vm, KernelVersion::V2_6_32.defaults());
        assert!(s.memory.is_none());
        assert!(s.variants.is_empty());
        assert!(!s.crypt.unplug_after_submit);
        let WorkloadKind::Fio(f) = &s.workloads[0].kind else {
            panic!("fio")
        };
        assert!(!f.direct);
        // Shipped scenarios: of these two only two-queue asks for memory pressure, and neither
        // lists variants (gfp-atomic-storm and mel-2009 do).
        for (name, memory) in [("two-queue", true), ("nvme-fio", false)] {
            let s = super::super::resolve(name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(s.kernel.version, KernelVersion::V2_6_32, "{name}");
            assert!(s.kernel.patches.is_empty(), "{name}");
            assert_eq!(s.kernel.vm, KernelVersion::V2_6_32.defaults(), "{name}");
            assert_eq!(s.memory.is_some(), memory, "{name}");
            assert!(s.variants.is_empty(), "{name}");
            for w in &s.workloads {
                if let WorkloadKind::Fio(f) = &w.kind {
                    assert!(!f.direct, "{name}: {}", w.name);
                }
            }
        }
    }

    #[test]
    fn each_version_brings_its_own_switches() {
        for v in KernelVersion::ALL {
            let s = ok(&format!("{BASE}kernel: {{ version: \"{}\" }}\n", v.name()));
            assert_eq!((s.kernel.version, s.kernel.vm), (v, v.defaults()));
        }
        // Unquoted works too: 2.6.30 is not a YAML number.
        let s = ok(&format!("{BASE}kernel: {{ version: 2.6.30 }}\n"));
        assert_eq!(s.kernel.vm.cwait_class, CwaitClass::Sync);
        assert!(!s.kernel.vm.restart_wakes_kswapd);
        let d = |v: KernelVersion| v.defaults();
        assert_eq!(d(KernelVersion::V2_6_31).cwait_class, CwaitClass::Async);
        assert!(d(KernelVersion::V2_6_32).restart_wakes_kswapd);
        assert!(!d(KernelVersion::V2_6_32).kswapd_nap);
        assert!(d(KernelVersion::V2_6_33).kswapd_nap);
        assert!(!d(KernelVersion::V2_6_33).skip_below_min);
        let v37 = d(KernelVersion::V2_6_37);
        assert!(v37.skip_below_min && v37.wait_iff_congested && !v37.force_highorder);
        assert_eq!(
            super::super::schema::VERSION_NAMES,
            KernelVersion::ALL.map(|v| v.name())
        );
    }

    #[test]
    fn version_errors_name_the_valid_versions() {
        let e = err(&format!("{BASE}kernel:\n  version: 2.6\n"));
        assert_eq!(e.kind(), ErrorKind::BadValue);
        assert_eq!(place(&e), (Some(5), Some(12), Some("kernel.version")));
        assert!(e.message().contains("three parts"), "{e}");
        assert!(
            e.hint()
                .unwrap()
                .contains("2.6.30, 2.6.31, 2.6.32, 2.6.33, 2.6.37")
        );
        let e = err(&format!("{BASE}kernel:\n  version: 32\n"));
        assert!(e.message().contains("the number 32"), "{e}");
        let e = err(&format!("{BASE}kernel:\n  version: \"2.6.35\"\n"));
        assert_eq!(e.kind(), ErrorKind::UnknownName);
        assert_eq!(place(&e), (Some(5), Some(12), Some("kernel.version")));
        assert_eq!(e.message(), "unknown kernel version `2.6.35`");
        assert!(e.hint().unwrap().contains("2.6.37"), "{e}");
    }

    #[test]
    fn patches_set_their_switch_and_knobs_override_the_version() {
        let s = ok(&format!(
            "{BASE}kernel: {{ patches: [force-highorder, kswapd-stay-awake-when-min, dm-crypt-unplug] }}\n"
        ));
        assert_eq!(
            s.kernel.patches,
            vec![
                "force-highorder",
                "kswapd-stay-awake-when-min",
                "dm-crypt-unplug"
            ]
        );
        assert!(s.kernel.vm.skip_below_min && s.kernel.vm.force_highorder);
        assert!(s.crypt.unplug_after_submit);
        // Everything else stays 2.6.32's.
        let d = KernelVersion::V2_6_32.defaults();
        assert_eq!(
            (s.kernel.vm.kswapd_nap, s.kernel.vm.cwait_class),
            (d.kswapd_nap, d.cwait_class)
        );
        // Knobs win over the version.
        let s = ok(&format!(
            "{BASE}kernel:\n  version: 2.6.37\n  skip_below_min: false\n  wait_iff_congested: false\n  cwait_class: sync\n  kswapd_nap: false\n  restart_wakes_kswapd: false\n  force_highorder: true\n"
        ));
        let vm = s.kernel.vm;
        assert!(!vm.skip_below_min && !vm.wait_iff_congested && !vm.kswapd_nap);
        assert!(!vm.restart_wakes_kswapd && vm.force_highorder);
        assert_eq!(vm.cwait_class, CwaitClass::Sync);
        // A knob agreeing with a patch is fine.
        let s = ok(&format!(
            "{BASE}kernel: {{ patches: [force-highorder], force_highorder: true }}\ncrypt: {{ unplug_after_submit: true }}\n"
        ));
        assert!(s.kernel.vm.force_highorder && s.crypt.unplug_after_submit);
        // An empty list is no patches.
        assert!(
            ok(&format!("{BASE}kernel: {{ patches: [] }}\n"))
                .kernel
                .patches
                .is_empty()
        );
    }

    #[test]
    fn a_patch_undone_by_its_own_switch_is_a_conflict() {
        let e = err(&format!(
            "{BASE}kernel:\n  patches: [kswapd-stay-awake-when-min]\n  skip_below_min: false\n"
        ));
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert_eq!(place(&e), (Some(5), Some(13), Some("kernel.patches[0]")));
        assert!(e.message().contains("line 6 sets it to false"), "{e}");
        assert!(e.hint().unwrap().contains("skip_below_min: false"), "{e}");
        let e = err(&format!(
            "{BASE}kernel:\n  patches: [force-highorder, dm-crypt-unplug]\ncrypt:\n  unplug_after_submit: false\n"
        ));
        assert_eq!(place(&e), (Some(5), Some(30), Some("kernel.patches[1]")));
        assert!(e.message().contains("crypt.unplug_after_submit"), "{e}");
        assert!(e.message().contains("line 7"), "{e}");
    }

    #[test]
    fn patch_errors_suggest_the_name() {
        let e = err(&format!(
            "{BASE}kernel:\n  patches: [kswapd_stay_awake_when_min]\n"
        ));
        assert_eq!(e.kind(), ErrorKind::UnknownName);
        assert_eq!(place(&e), (Some(5), Some(13), Some("kernel.patches[0]")));
        assert!(
            e.hint()
                .unwrap()
                .starts_with("did you mean `kswapd-stay-awake-when-min`?"),
            "{e}"
        );
        let e = err(&format!("{BASE}kernel:\n  patches: [dmcrypt-unplug]\n"));
        assert!(e.hint().unwrap().contains("`dm-crypt-unplug`"), "{e}");
        let e = err(&format!("{BASE}kernel:\n  patches: [swap-token]\n"));
        assert!(e.hint().unwrap().starts_with("valid patches: "), "{e}");
        let e = err(&format!(
            "{BASE}kernel:\n  patches: [force-highorder, force-highorder]\n"
        ));
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert_eq!(place(&e), (Some(5), Some(30), Some("kernel.patches[1]")));
        let e = err(&format!("{BASE}kernel:\n  cwait_class: both\n"));
        assert_eq!(e.path(), Some("kernel.cwait_class"));
        assert!(e.hint().unwrap().contains("sync, async"), "{e}");
    }

    // ---- memory ----

    const MEM: &str =
        "device: { kind: hdd5400 }\nworkloads:\n  - kind: gitk\nmemory:\n  ram: 2GiB\n";

    fn mem(extra: &str) -> MemoryConfig {
        ok(&format!("{MEM}{extra}")).memory.expect("memory")
    }

    #[test]
    fn mapped_and_burst_default_and_are_checked() {
        let m = mem("");
        assert_eq!(m.mapped, m.unreclaimable / 2);
        assert_eq!(m.mapped % 4096, 0);
        let m = mem(
            "  unreclaimable: 1GiB\n  mapped: 256MiB\n  atomic:\n    - { rate: 10, burst: 64 }\n",
        );
        assert_eq!(m.mapped, 256 << 20);
        assert_eq!(m.atomic[0].burst, 64);
        assert_eq!(mem("  atomic:\n    - rate: 10\n").atomic[0].burst, 1);
        let e = err(&format!("{MEM}  unreclaimable: 1GiB\n  mapped: 2GiB\n"));
        assert_eq!(e.path(), Some("memory.mapped"));
        assert_eq!(e.kind(), ErrorKind::Conflict);
        let e = err(&format!("{MEM}  atomic:\n    - {{ rate: 10, burst: 0 }}\n"));
        assert_eq!(e.path(), Some("memory.atomic[0].burst"));
    }

    #[test]
    fn memory_defaults_follow_the_kernel() {
        let m = mem("");
        assert_eq!(m.ram, 2 << 30);
        assert_eq!(m.min_free_kbytes, 5792);
        assert_eq!(m.unreclaimable, 1 << 30);
        // Free at the start is 16·min = 16 · 1448 pages.
        assert_eq!(m.page_cache, (1 << 30) - 16 * 1448 * 4096);
        assert_eq!(m.ram - m.unreclaimable - m.page_cache, 23_168 * 4096);
        assert_eq!(m.coalesce, 0.5);
        assert_eq!(m.scan_cost, SimDuration::from_ns(200));
        assert_eq!((m.page_pool, m.min_bio_pages), (32, 8));
        assert!(m.atomic.is_empty());
        // The kernel's formula at the smallest zone; half of ram rounds down to a page.
        let small = |ram: &str| {
            ok(&format!("{BASE}memory: {{ ram: {ram} }}\n"))
                .memory
                .expect("memory")
        };
        let m = small("64MiB");
        assert_eq!(m.min_free_kbytes, 1024);
        let m = small(&format!("{}", (64 << 20) + 4096));
        assert_eq!(m.unreclaimable, (32 << 20));
        assert_eq!(small("64GiB").min_free_kbytes, 32768);
    }

    #[test]
    fn memory_fields_override() {
        let m = mem(
            "  min_free_kbytes: 4096\n  unreclaimable: 512MiB\n  page_cache: 1GiB\n  coalesce: 1\n  scan_cost: 1us\n  page_pool: 64\n  min_bio_pages: 1\n",
        );
        assert_eq!(m.min_free_kbytes, 4096);
        assert_eq!((m.unreclaimable, m.page_cache), (512 << 20, 1 << 30));
        assert_eq!(m.coalesce, 1.0);
        assert_eq!(m.scan_cost, SimDuration::from_us(1));
        assert_eq!((m.page_pool, m.min_bio_pages), (64, 1));
        // page_cache follows a given unreclaimable.
        let m = mem("  unreclaimable: 1536MiB\n");
        assert_eq!(m.page_cache, (512 << 20) - 16 * 1448 * 4096);
        // Too much unreclaimable for the default cache: the cache shrinks to nothing.
        let m = mem("  unreclaimable: 2032MiB\n");
        assert_eq!(m.page_cache, 0);
    }

    #[test]
    fn memory_errors_are_located_with_hints() {
        let e =
            err("device: { kind: nvme }\nworkloads:\n  - kind: fio\nmemory:\n  coalesce: 0.2\n");
        assert_eq!(e.kind(), ErrorKind::Missing);
        assert_eq!(place(&e), (Some(5), Some(3), Some("memory.ram")));
        assert!(e.hint().unwrap().contains("ram: 2GiB"), "{e}");
        let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\nmemory:\n  ram: 32MiB\n");
        assert_eq!(place(&e), (Some(5), Some(8), Some("memory.ram")));
        assert!(e.message().contains("between 64MiB and 64GiB"), "{e}");
        let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\nmemory:\n  ram: 65GiB\n");
        assert_eq!(e.path(), Some("memory.ram"));
        let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\nmemory:\n  ram: 2GB\n");
        assert_eq!(place(&e), (Some(5), Some(8), Some("memory.ram")));
        assert!(e.message().contains("4KiB pages"), "{e}");
        assert!(e.hint().unwrap().contains("1999998976 bytes"), "{e}");
        let e = err(&format!("{MEM}  min_free_kbytes: 100\n"));
        assert_eq!(
            place(&e),
            (Some(6), Some(20), Some("memory.min_free_kbytes"))
        );
        assert!(e.message().contains("between 128 and 65536"), "{e}");
        assert!(e.hint().unwrap().contains("5792"), "{e}");
        let e = err(&format!("{MEM}  min_free_kbytes: 65537\n"));
        assert_eq!(e.path(), Some("memory.min_free_kbytes"));
        let e = err(&format!("{MEM}  unreclaimable: 1000001\n"));
        assert_eq!(e.path(), Some("memory.unreclaimable"));
        let e = err(&format!("{MEM}  coalesce: 1.5\n"));
        assert_eq!(place(&e), (Some(6), Some(13), Some("memory.coalesce")));
        assert!(e.message().contains("probability"), "{e}");
        let e = err(&format!("{MEM}  coalesce: .nan\n"));
        assert_eq!(e.path(), Some("memory.coalesce"));
        let e = err(&format!("{MEM}  page_pool: 0\n"));
        assert_eq!(e.path(), Some("memory.page_pool"));
        let e = err(&format!("{MEM}  min_bio_pages: 0\n"));
        assert_eq!(e.path(), Some("memory.min_bio_pages"));
        let e = err(&format!("{MEM}  scan_cost: 5\n"));
        assert_eq!(e.path(), Some("memory.scan_cost"));
        let e = err(&format!("{MEM}  ramm: 3\n"));
        assert_eq!(e.kind(), ErrorKind::UnknownField);
        assert!(e.hint().unwrap().contains("did you mean `ram`?"), "{e}");
    }

    #[test]
    fn the_start_must_leave_high_free_and_the_hint_gives_the_largest_value() {
        // high = 1448 + 724 = 2172 pages, and the page_pool reserve takes 32 more.
        let high = 2172 * 4096u64;
        let max_unrecl = (2u64 << 30) - high - 32 * 4096;
        let e = err(&format!("{MEM}  unreclaimable: {}\n", max_unrecl + 4096));
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert_eq!(place(&e), (Some(6), Some(18), Some("memory.unreclaimable")));
        assert!(e.message().contains("high watermark (2172 pages)"), "{e}");
        assert!(
            e.hint().unwrap().contains(&format!("({max_unrecl} bytes)")),
            "{e}"
        );
        assert_eq!(
            mem(&format!("  unreclaimable: {max_unrecl}\n")).page_cache,
            0
        );
        let max_cache = max_unrecl - (1 << 30);
        let e = err(&format!("{MEM}  page_cache: {}\n", max_cache + 4096));
        assert_eq!(place(&e), (Some(6), Some(15), Some("memory.page_cache")));
        assert!(
            e.hint().unwrap().contains(&format!("({max_cache} bytes)")),
            "{e}"
        );
        let m = mem(&format!("  page_cache: {max_cache}\n"));
        assert_eq!((m.ram - m.unreclaimable - m.page_cache) / 4096, 2172 + 32);
    }

    /// Torture seed 101511: cache and unreclaimable memory left exactly `high` free, then the
    /// model allocated a page_pool of 244 pages from it at boot and panicked ("zone too small
    /// for its initial page cache"). The reserve now counts in the layout, and every layout
    /// the loader accepts boots.
    #[test]
    fn the_page_pool_counts_in_the_starting_layout() {
        let run = |memory: &str| {
            let text = format!(
                "duration: 20ms\ndevice: {{ kind: nvme }}\nworkloads:\n  - {{ kind: \
                 buffered-writer, rate: 89MB/s }}\nmemory:\n{memory}"
            );
            let sc = ok(&text);
            let info = crate::model::policy::find("fifo").unwrap();
            let r = crate::model::run_policy(&sc, info);
            assert!(r.violations.is_empty(), "{:?}", r.violations);
            sc.memory.unwrap()
        };
        // ram 2 GiB, min_free_kbytes 152: min 38, high 57 pages.
        let seed_101511 = "  ram: 2048M\n  min_free_kbytes: 152\n  unreclaimable: 1256960k\n  \
                           page_cache: 860123136\n  page_pool: 244\n";
        let e = err(&format!(
            "device: {{ kind: nvme }}\nworkloads:\n  - kind: fio\nmemory:\n{seed_101511}"
        ));
        assert_eq!(e.path(), Some("memory.page_cache"));
        assert!(e.message().contains("page_pool reserve (244 pages)"), "{e}");
        let fits = seed_101511.replace("860123136", &(860123136 - 244 * 4096).to_string());
        let m = run(&fits);
        assert_eq!((m.ram - m.unreclaimable - m.page_cache) / 4096, 57 + 244);
        // A large reserve cuts the default cache instead of overrunning the zone.
        // 64 MiB: 16384 pages, min_free_kbytes 1024, min 256, high 384; unreclaimable 8192.
        let m = run("  ram: 64MiB\n  page_pool: 7000\n");
        assert_eq!(m.page_cache / 4096, 16384 - 384 - 7000 - 8192);
        assert_eq!((m.ram - m.unreclaimable - m.page_cache) / 4096, 384 + 7000);
        // A reserve larger than the zone is refused where it is written.
        let e = err(
            "device: { kind: nvme }\nworkloads:\n  - kind: fio\nmemory:\n  ram: 64MiB\n  \
             page_pool: 1000000\n",
        );
        assert_eq!(e.path(), Some("memory.page_pool"));
        assert!(
            e.hint().unwrap_or("").contains("at most 16000 pages"),
            "{e}"
        );
    }

    #[test]
    fn atomic_streams_resolve_presets_rates_and_orders() {
        let m = mem(
            "  atomic:\n    - preset: iwlagn\n      bandwidth: 4MB/s\n    - rate: 500/s\n    - name: tcp\n      rate: 250\n      orders: {1: 1}\n      poisson: false\n      hold: 1ms\n    - bandwidth: 1MiB/s\n      buffer: 4KiB\n      orders: {3: 3, 1: 1, 0: 0, 5: 0}\n    - { preset: iwlagn, rate: 10, orders: {1: 1} }\n",
        );
        let a = &m.atomic;
        assert_eq!(a.len(), 5);
        assert_eq!(
            (a[0].name.as_str(), a[0].preset.as_str()),
            ("atomic0", "iwlagn")
        );
        assert_eq!(a[0].rate, 4e6 / 8192.0);
        assert_eq!(a[0].orders, vec![0.0, 0.0, 1.0]);
        assert!(a[0].poisson);
        assert!(
            matches!(a[0].hold, Distribution::Exponential { mean } if mean == SimDuration::from_ms(2))
        );
        assert_eq!((a[1].preset.as_str(), a[1].rate), ("custom", 500.0));
        assert_eq!(a[1].orders, vec![0.5, 0.3, 0.2]);
        assert_eq!(
            (a[2].name.as_str(), a[2].rate, a[2].poisson),
            ("tcp", 250.0, false)
        );
        assert_eq!(a[2].orders, vec![0.0, 1.0]);
        assert!(matches!(a[2].hold, Distribution::Deterministic { .. }));
        assert_eq!(a[3].rate, 256.0);
        assert_eq!(
            a[3].orders,
            vec![0.0, 0.25, 0.0, 0.75],
            "normalised, trailing zeros dropped"
        );
        assert_eq!(a[4].preset, "iwlagn (custom)");
        assert_eq!(a[4].orders, vec![0.0, 1.0]);
    }

    #[test]
    fn atomic_errors_name_the_stream_field() {
        let at = |s: &str| err(&format!("{MEM}  atomic:\n    - {s}\n"));
        let e = at("{ rate: 5, orders: {0: 1, 11: 1} }");
        assert_eq!(e.kind(), ErrorKind::BadValue);
        assert_eq!(
            place(&e),
            (Some(7), Some(33), Some("memory.atomic[0].orders"))
        );
        assert!(e.message().contains("order 11"), "{e}");
        assert!(
            e.hint().unwrap().contains("{0: 0.5, 1: 0.3, 2: 0.2}"),
            "{e}"
        );
        let e = at("{ rate: 5, orders: {-1: 1} }");
        assert_eq!(e.path(), Some("memory.atomic[0].orders"));
        let e = at("{ rate: 5, orders: {2: -0.5} }");
        assert_eq!(
            place(&e),
            (Some(7), Some(30), Some("memory.atomic[0].orders.2"))
        );
        let e = at("{ rate: 5, orders: {2: 0} }");
        assert!(e.message().contains("add up to zero"), "{e}");
        let e = at("{ rate: 5, orders: {2: 1, +2: 1} }");
        assert!(e.message().contains("duplicate key"), "{e}");
        let e = at("{ rate: 5, orders: {x: 1} }");
        assert_eq!(e.path(), Some("memory.atomic[0].orders.x"));
        assert!(e.hint().unwrap().contains("buddy order"), "{e}");
        let e = at("{ rate: 5, bandwidth: 4MB/s }");
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert_eq!(
            place(&e),
            (Some(7), Some(29), Some("memory.atomic[0].bandwidth"))
        );
        let e = at("{ preset: iwlagn }");
        assert_eq!(e.kind(), ErrorKind::Missing);
        assert_eq!(place(&e), (Some(7), Some(7), Some("memory.atomic[0].rate")));
        assert!(e.hint().unwrap().contains("bandwidth: 4MB/s"), "{e}");
        let e = at("{ rate: 4MB/s }");
        assert_eq!(e.path(), Some("memory.atomic[0].rate"));
        assert!(e.hint().unwrap().contains("bandwidth: 4MB/s"), "{e}");
        let e = at("{ rate: 5, buffer: 4KiB }");
        assert_eq!(e.path(), Some("memory.atomic[0].buffer"));
        let e = at("{ bandwidth: 4MB/s, buffer: 0 }");
        assert_eq!(e.path(), Some("memory.atomic[0].buffer"));
        let e = at("{ bandwidth: 500/s }");
        assert!(e.message().contains("bandwidth"), "{e}");
        let e = at("{ rate: -3 }");
        assert_eq!(
            place(&e),
            (Some(7), Some(15), Some("memory.atomic[0].rate"))
        );
        assert!(e.message().contains("positive"), "{e}");
        let e = at("{ rate: 5, preset: iwlang }");
        assert_eq!(e.kind(), ErrorKind::UnknownName);
        assert!(e.hint().unwrap().contains("did you mean `iwlagn`?"), "{e}");
        let e = at("{ rate: 5, hold: {kind: uniform, low: 2ms, high: 1ms} }");
        assert_eq!(e.path(), Some("memory.atomic[0].hold.high"));
        let e = at("{ rate: 5, name: ' ' }");
        assert_eq!(e.path(), Some("memory.atomic[0].name"));
        let e = err(&format!(
            "{MEM}  atomic:\n    - {{ rate: 5 }}\n    - {{ rate: 5, name: atomic0 }}\n"
        ));
        assert_eq!(
            place(&e),
            (Some(8), Some(24), Some("memory.atomic[1].name"))
        );
    }

    #[test]
    fn fio_direct_is_fios_option() {
        let s = ok(
            "device: { kind: nvme }\nworkloads:\n  - kind: fio\n    direct: true\n  - kind: gitk\n",
        );
        let WorkloadKind::Fio(f) = &s.workloads[0].kind else {
            panic!("fio")
        };
        assert!(f.direct);
        let WorkloadKind::Fio(g) = &s.workloads[1].kind else {
            panic!("fio")
        };
        assert!(!g.direct, "gitk reads through the page cache");
        let e = err(
            "device: { kind: nvme }\nworkloads:\n  - kind: buffered-writer\n    rate: 1MB/s\n    direct: true\n",
        );
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert_eq!(e.path(), Some("workloads[0].direct"));
    }

    #[test]
    fn finite_jobs_take_fios_io_size_number_ios_and_startdelay() {
        let fio = |s: &Scenario, i: usize| match &s.workloads[i].kind {
            WorkloadKind::Fio(f) => f.clone(),
            WorkloadKind::BufferedWriter(_) => panic!("fio"),
        };
        // Defaults: unlimited, starting at once; gitk too.
        let s = ok("device: { kind: nvme }\nworkloads:\n  - kind: fio\n  - kind: gitk\n");
        for i in 0..2 {
            let f = fio(&s, i);
            assert_eq!(
                (f.io_size, f.number_ios, f.startdelay),
                (None, None, SimDuration::ZERO)
            );
            assert!(!f.is_finite());
        }
        assert!(!s.has_finite_jobs());
        let s = ok("device: { kind: nvme }\nworkloads:\n  \
             - { kind: gitk, io_size: 64MiB, startdelay: 5s }\n  \
             - { kind: fio, number_ios: 1000 }\n  \
             - { kind: fio, io_limit: 1MiB, number_ios: 10, bs: 64k }\n  \
             - { kind: buffered-writer, rate: 1MB/s }\n");
        let g = fio(&s, 0);
        assert_eq!(g.io_size, Some(64 << 20));
        assert_eq!(g.startdelay, SimDuration::from_secs(5));
        assert!(g.is_finite() && s.has_finite_jobs());
        // The gitk preset is otherwise unchanged.
        assert!(matches!(
            g.arrivals,
            Arrivals::Closed {
                iodepth: 1,
                think: Some(_)
            }
        ));
        assert_eq!(
            (fio(&s, 1).io_size, fio(&s, 1).number_ios),
            (None, Some(1000))
        );
        assert_eq!(fio(&s, 2).io_size, Some(1 << 20), "io_limit is fio's alias");
        assert_eq!(fio(&s, 2).number_ios, Some(10));

        // Errors point at the value, name the field and say what to do.
        let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    io_size: 2k\n");
        assert_eq!(place(&e), (Some(4), Some(14), Some("workloads[0].io_size")));
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert!(e.message().contains("less than one block"), "{e}");
        assert!(e.hint().unwrap().contains("at least `bs`"), "{e}");
        let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    io_size: 4100\n");
        assert_eq!(e.path(), Some("workloads[0].io_size"));
        assert!(e.message().contains("multiple of 512"), "{e}");
        let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    number_ios: 0\n");
        assert_eq!(
            place(&e),
            (Some(4), Some(17), Some("workloads[0].number_ios"))
        );
        assert!(e.hint().unwrap().contains("leave it out"), "{e}");
        let e =
            err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    startdelay: 5 parsecs\n");
        assert_eq!(e.path(), Some("workloads[0].startdelay"));
        let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    number_ios: -3\n");
        assert_eq!(e.path(), Some("workloads[0].number_ios"));
        // They are fio options: a buffered writer refuses them.
        for field in ["io_size: 1MiB", "number_ios: 5", "startdelay: 1s"] {
            let e = err(&format!(
                "device: {{ kind: nvme }}\nworkloads:\n  - kind: buffered-writer\n    \
                 rate: 1MB/s\n    {field}\n"
            ));
            assert_eq!(e.kind(), ErrorKind::Conflict, "{field}");
            let name = field.split(':').next().unwrap();
            assert_eq!(e.path(), Some(format!("workloads[0].{name}").as_str()));
        }
    }

    // ---- variants ----

    const VBASE: &str = "\
name: base
seed: 7
kernel:
  hz: 1000
  patches: [force-highorder]
device: { kind: hdd5400, seek_min: 3ms }
workloads:
  - kind: gitk
  - kind: buffered-writer
    rate: 20MB/s
memory:
  ram: 2GiB
  coalesce: 0.25
variants:
";

    fn variant(s: &Scenario, name: &str) -> Scenario {
        let v = s.variants.iter().find(|v| v.name == name).expect("variant");
        (*v.scenario).clone()
    }

    #[test]
    fn variants_merge_over_the_base() {
        let s = ok(&format!(
            "{VBASE}  - name: \"2.6.30\"\n    set: {{ kernel: {{ version: \"2.6.30\" }} }}\n  - name: small\n    set:\n      memory: {{ ram: 1GiB }}\n      kernel: {{ patches: [] }}\n      workloads:\n        - kind: fio\n  - name: nvme\n    set: {{ device: {{ kind: nvme }}, duration: 10s }}\n  - name: same\n    set: {{}}\n"
        ));
        assert_eq!(s.kernel.version, KernelVersion::V2_6_32);
        assert_eq!(s.variants.len(), 4);
        let old = variant(&s, "2.6.30");
        assert_eq!(old.name, "base");
        assert_eq!(old.seed, 7);
        assert!(old.variants.is_empty());
        assert_eq!(old.kernel.hz, 1000, "hz kept");
        assert_eq!(old.kernel.version, KernelVersion::V2_6_30);
        assert_eq!(old.kernel.patches, vec!["force-highorder"], "patches kept");
        assert_eq!(old.kernel.vm.cwait_class, CwaitClass::Sync);
        assert!(old.kernel.vm.force_highorder);
        assert_eq!(old.workloads.len(), 2);
        let small = variant(&s, "small");
        let m = small.memory.as_ref().unwrap();
        assert_eq!(
            (m.ram, m.coalesce),
            (1 << 30, 0.25),
            "memory merged field by field"
        );
        assert_eq!(m.min_free_kbytes, 4096, "defaults follow the merged ram");
        assert!(small.kernel.patches.is_empty() && !small.kernel.vm.force_highorder);
        assert_eq!(small.workloads.len(), 1, "lists replace");
        assert_eq!(small.workloads[0].name, "fio0");
        let nvme = variant(&s, "nvme");
        assert!(
            matches!(nvme.device, DeviceConfig::Nvme(_)),
            "a new kind replaces the device whole (seek_min does not follow)"
        );
        assert_eq!(nvme.duration, SimDuration::from_secs(10));
        let same = variant(&s, "same");
        assert_eq!(
            serde_json::to_string(&same).unwrap(),
            serde_json::to_string(&Scenario {
                variants: Vec::new(),
                ..s.clone()
            })
            .unwrap()
        );
    }

    #[test]
    fn errors_inside_set_point_at_the_set() {
        let e = err(&format!(
            "{VBASE}  - name: a\n    set:\n      kernel:\n        version: \"2.6.35\"\n"
        ));
        assert_eq!(
            place(&e),
            (Some(18), Some(18), Some("variants[0].set.kernel.version"))
        );
        assert!(
            e.message()
                .starts_with("in variant `a`: unknown kernel version"),
            "{e}"
        );
        let e = err(&format!(
            "{VBASE}  - name: a\n    set: {{}}\n  - name: b\n    set:\n      memory:\n        atomic:\n          - {{ rate: 5, orders: {{12: 1}} }}\n"
        ));
        assert_eq!(
            place(&e),
            (
                Some(21),
                Some(33),
                Some("variants[1].set.memory.atomic[0].orders")
            )
        );
        assert!(e.message().contains("variant `b`"), "{e}");
        // A typo inside set is a parse error, located by the outline.
        let e = err(&format!(
            "{VBASE}  - name: a\n    set:\n      kernle: {{}}\n"
        ));
        assert_eq!(e.kind(), ErrorKind::UnknownField);
        assert_eq!(
            place(&e),
            (Some(17), Some(7), Some("variants[0].set.kernle"))
        );
        assert!(e.hint().unwrap().contains("did you mean `kernel`?"), "{e}");
        // A base value that the variant makes wrong keeps its own path, and names the variant.
        let e = err(&format!(
            "warmup: 5s\n{VBASE}  - name: long\n    set: {{ duration: 10s }}\n  - name: b\n    set: {{ duration: 1s }}\n"
        ));
        assert!(e.message().starts_with("in variant `b`:"), "{e}");
        assert_eq!(place(&e), (Some(1), Some(9), Some("warmup")));
        // A patch in the set against a knob of the base: located at the patch in the set.
        let e = err(&format!(
            "{VBASE}  - name: p\n    set: {{ kernel: {{ patches: [dm-crypt-unplug] }} }}\n"
        )
        .replace("memory:", "crypt: { unplug_after_submit: false }\nmemory:"));
        assert_eq!(
            place(&e),
            (
                Some(17),
                Some(32),
                Some("variants[0].set.kernel.patches[0]")
            )
        );
    }

    #[test]
    fn variant_names_and_fixed_fields_are_checked() {
        let e = err(&format!("{VBASE}  - name: a\n    set: {{ seed: 3 }}\n"));
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert_eq!(
            place(&e),
            (Some(16), Some(18), Some("variants[0].set.seed"))
        );
        assert!(e.hint().unwrap().contains("same random numbers"), "{e}");
        for field in ["name: x", "description: x", "variants: []"] {
            let e = err(&format!("{VBASE}  - name: a\n    set: {{ {field} }}\n"));
            let key = field.split(':').next().unwrap();
            assert_eq!(e.path(), Some(format!("variants[0].set.{key}").as_str()));
        }
        let e = err(&format!(
            "{VBASE}  - name: a\n    set: {{}}\n  - name: a\n    set: {{}}\n"
        ));
        assert_eq!(place(&e), (Some(17), Some(11), Some("variants[1].name")));
        assert!(e.message().contains("used twice"), "{e}");
        let e = err(&format!("{VBASE}  - name: \"\"\n    set: {{}}\n"));
        assert_eq!(e.path(), Some("variants[0].name"));
        let e = err(&format!("{VBASE}  - set: {{}}\n"));
        assert_eq!(e.kind(), ErrorKind::Missing);
        assert_eq!(e.path(), Some("variants[0].name"));
        let e = err(&format!("{VBASE}  - name: a\n"));
        assert_eq!(e.path(), Some("variants[0].set"));
        let e = err(&VBASE.replace("variants:\n", "variants: []\n"));
        assert_eq!(e.path(), Some("variants"));
    }

    /// `n` variants over `base`, each changing `cpus`.
    fn with_variants(base: &str, n: usize) -> String {
        let mut text = format!("{base}variants:\n");
        for i in 0..n {
            text.push_str(&format!(
                "  - {{ name: v{i}, set: {{ cpus: {} }} }}\n",
                i % 4 + 1
            ));
        }
        text
    }

    #[test]
    fn variants_are_capped_before_any_is_resolved() {
        // Issue 11 case 5: 20k variants passed 8 GiB; the cap stops them at the list.
        let base = "device: { kind: nvme }\nworkloads: [{ kind: fio }]\n";
        let s = ok(&with_variants(base, MAX_VARIANTS));
        assert_eq!(s.variants.len(), MAX_VARIANTS);
        let e = err(&with_variants(base, 20_000));
        assert_eq!(place(&e), (Some(3), Some(1), Some("variants")));
        assert_eq!(
            e.message(),
            "20000 variants; a scenario may list at most 100"
        );
        assert!(e.hint().unwrap().contains("several scenario files"), "{e}");
        let e = err(&with_variants(base, MAX_VARIANTS + 1));
        assert_eq!(e.path(), Some("variants"));
    }

    #[test]
    fn runs_and_replications_in_all_are_bounded() {
        // 65 variants × 4 policies = 260 runs > 256.
        let four = "device: { kind: nvme }\nworkloads: [{ kind: fio }]\npolicies: [fifo, split, prio, none]\n";
        let e = err(&with_variants(four, 65));
        assert_eq!(e.path(), Some("variants"));
        assert!(
            e.message().starts_with(
                "65 variants with 260 runs in all: a scenario may ask for at most 256 runs"
            ),
            "{e}"
        );
        let s = ok(&with_variants(four, 64));
        assert_eq!((run_count(&s), total_replications(&s, None)), (256, 2560));
        // 256 runs × 391 replications = 100096 > 100000, located at `replications:`.
        let e = err(&with_variants(&format!("{four}replications: 391\n"), 64));
        assert_eq!(e.path(), Some("replications"));
        assert_eq!(
            e.message(),
            "64 variants with 256 runs in all make 100096 replications; one run of qsim may do at most 100000"
        );
        ok(&with_variants(&format!("{four}replications: 390\n"), 64));
        // The command line's -r is checked on the resolved scenario.
        assert!(check_work(&s, Some(390), "-r 390").is_ok());
        let e = check_work(&s, Some(1000), "-r 1000").unwrap_err();
        assert_eq!(
            (e.file(), e.kind(), e.exit_code()),
            ("-r 1000", ErrorKind::BadValue, 2)
        );
        assert!(
            e.message()
                .contains("× 1000 replications make 256000 replications"),
            "{e}"
        );
        assert!(
            e.to_string()
                .starts_with("-r 1000: the scenario `t` has 64 variants"),
            "{e}"
        );
        // Without variants, the policies are the runs.
        let s = ok(four);
        assert_eq!((run_count(&s), total_replications(&s, Some(3))), (4, 12));
    }

    #[test]
    fn names_are_short_labels_on_one_line() {
        let long = "x".repeat(MAX_NAME_CHARS + 1);
        let base = "device: { kind: nvme }\nworkloads: [{ kind: fio }]\n";
        ok(&format!("{base}name: \"{}\"\n", "é".repeat(MAX_NAME_CHARS)));
        // A slash or `..` is a label here; the plot writer makes its own file names.
        ok(&format!(
            "{base}name: ../a/b\nvariants: [{{ name: 2.6.30/unplug, set: {{}} }}]\n"
        ));
        for (text, path) in [
            (format!("{base}name: {long}\n"), "name"),
            (format!("{base}name: \"a\\nb\"\n"), "name"),
            (format!("{base}name: \"a\\0b\"\n"), "name"),
            (
                format!("{base}variants: [{{ name: {long}, set: {{}} }}]\n"),
                "variants[0].name",
            ),
            (
                format!("{base}variants: [{{ name: \"\\ta\", set: {{}} }}]\n"),
                "variants[0].name",
            ),
            (
                format!("device: {{ kind: nvme }}\nworkloads: [{{ kind: fio, name: {long} }}]\n"),
                "workloads[0].name",
            ),
            (
                format!("{base}memory: {{ ram: 1GiB, atomic: [{{ rate: 5/s, name: {long} }}] }}\n"),
                "memory.atomic[0].name",
            ),
        ] {
            let e = err(&text);
            assert_eq!(
                (e.kind(), e.path()),
                (ErrorKind::BadValue, Some(path)),
                "{e}"
            );
            assert!(e.hint().unwrap().contains("at most 64 characters"), "{e}");
        }
        let e = err(&format!("{base}name: {long}\n"));
        assert_eq!(
            e.message(),
            "the name is 65 characters long, more than the 64 a name may have"
        );
        let e = err(&format!("{base}name: \"a\\nb\"\n"));
        assert_eq!(e.message(), "the name holds the control character `\\n`");
        // A name from the file stem is held to the same rules.
        let e = load_str(&format!("dir/{long}.yaml"), base).unwrap_err();
        assert_eq!((e.path(), e.line()), (Some("name"), None));
        assert!(e.hint().unwrap().starts_with("add a `name:`"), "{e}");
        // 20k characters (issue 11 case 4) in a --set as well.
        let e = super::super::load_str_with_overrides(
            "t.yaml",
            base,
            &[format!("name={}", "n".repeat(20_000))],
        )
        .unwrap_err();
        assert!(e.file().starts_with("--set name=nnn"), "{}", e.file());
        assert_eq!(e.file().chars().count(), "--set ".len() + MAX_ECHO_CHARS);
        assert!(e.message().contains("20000 characters"), "{e}");
    }

    #[test]
    fn a_request_must_take_at_least_min_service() {
        // Issue 11 case 6: a zero service time ran 65 s and printed IOPS=500G.
        let w = "workloads: [{ kind: fio }]\n";
        let free_crypt = "crypt: { cipher: null, hop_cost: 0ns }\n";
        for (device, path) in [
            ("{ kind: generic, service: 0 }", "device.service"),
            ("{ kind: generic, service: 99ns }", "device.service"),
            (
                "{ kind: generic, service: { kind: exponential, mean: 50ns } }",
                "device.service",
            ),
            (
                "{ kind: generic, service: { kind: empirical, values: [0, 0, 1ns] } }",
                "device.service",
            ),
            (
                "{ kind: nvme, overhead: 0, transfer_rate: 100GB/s }",
                "device.overhead",
            ),
            (
                "{ kind: nvme, transfer_rate: 10TB/s, overhead: 1ns }",
                "device.overhead",
            ),
            (
                "{ kind: hdd5400, transfer_rate: 10GB/s }",
                "device.transfer_rate",
            ),
        ] {
            // Without dm-crypt (policy none), and with a dm-crypt that costs nothing.
            for extra in ["policies: [fifo, none]\n", free_crypt] {
                let e = err(&format!("device: {device}\n{w}{extra}"));
                assert_eq!(
                    (e.kind(), e.path()),
                    (ErrorKind::BadValue, Some(path)),
                    "{device}: {e}"
                );
                assert!(
                    e.message()
                        .ends_with("; a request must take at least 100ns"),
                    "{e}"
                );
                assert!(e.hint().unwrap().contains("100ns"), "{e}");
            }
        }
        let e = err(&format!(
            "device: {{ kind: generic, service: 0 }}\n{w}policies: [none]\n"
        ));
        assert_eq!(
            e.message(),
            "the mean service time is 0ns and policy `none` adds no dm-crypt work; a request \
             must take at least 100ns"
        );
        assert_eq!((e.line(), e.column()), (Some(1), Some(35)));
        let e = err(&format!(
            "device: {{ kind: generic, service: 0 }}\n{w}{free_crypt}"
        ));
        assert!(
            e.message()
                .contains("dm-crypt adds 0ns under policy `fifo`"),
            "{e}"
        );
        // At the floor, the presets, and a free device behind a dm-crypt that does the serving
        // (as `qsim validate`'s priority queue does) load.
        for text in [
            "device: { kind: generic, service: 100ns }\npolicies: [none]\n",
            "device: { kind: generic, service: { kind: uniform, low: 0, high: 200ns } }\n\
             policies: [none]\n",
            "device: { kind: nvme, transfer_rate: 1TB/s }\npolicies: [none]\n",
            "device: { kind: nvme, overhead: 0 }\npolicies: [none]\n",
            "device: { kind: hdd7200, transfer_rate: 5.12GB/s }\npolicies: [none]\n",
            "device: { kind: generic, service: 0 }\npolicies: [fifo]\n",
            "device: { kind: generic, service: 0ns }\npolicies: [prio]\n\
             crypt: { cipher: null, hop_cost: 0ns, cost: { kind: exponential, mean: 1ms } }\n",
        ] {
            ok(&format!("{text}{w}"));
        }
    }

    #[test]
    fn arrival_rates_and_bandwidths_are_bounded() {
        let nvme = "device: { kind: nvme }\n";
        for (text, path, says) in [
            (
                "workloads: [{ kind: fio, rate: 20000000/s }]",
                "workloads[0].rate",
                "more than 10000000",
            ),
            (
                "workloads: [{ kind: fio, rate: 100GB/s, bs: 512 }]",
                "workloads[0].rate",
                "100GB/s in 512B blocks",
            ),
            (
                "workloads: [{ kind: fio, rate: 0.00001/s }]",
                "workloads[0].rate",
                "fewer than one arrival",
            ),
            (
                "workloads: [{ kind: buffered-writer, rate: 20GB/s }]",
                "workloads[0].rate",
                "10GB/s",
            ),
            (
                "workloads: [{ kind: buffered-writer, rate: 0.5B/s }]",
                "workloads[0].rate",
                "below 1 B/s",
            ),
            (
                "workloads: [{ kind: fio }]\ncrypt: { encrypt_rate: 0.001B/s }",
                "crypt.encrypt_rate",
                "below 1 B/s",
            ),
            (
                "workloads: [{ kind: fio }]\nmemory: { ram: 1GiB, atomic: [{ rate: 1e12 }] }",
                "memory.atomic[0].rate",
                "more than 10000000",
            ),
            (
                "workloads: [{ kind: fio }]\nmemory: { ram: 1GiB, atomic: [{ bandwidth: 1B/s, buffer: 1GiB }] }",
                "memory.atomic[0].bandwidth",
                "1B/s over 1GiB buffers",
            ),
        ] {
            let e = err(&format!("{nvme}{text}\n"));
            assert_eq!(e.path(), Some(path), "{text}: {e}");
            assert!(e.message().contains(says), "{text}: {e}");
        }
        ok(&format!(
            "{nvme}workloads: [{{ kind: fio, rate: 10000000/s }}, {{ kind: fio, rate: 0.0001/s }}]\n"
        ));
    }

    #[test]
    fn offsets_and_sizes_cannot_overflow() {
        // Issue 11 case 7: `offset 18446744073709551104B, size 1GiB (ends at 1073741312B)`.
        let e = err(
            "device: { kind: nvme }\nworkloads:\n  - kind: fio\n    offset: 18446744073709551104\n",
        );
        assert_eq!(place(&e), (Some(4), Some(13), Some("workloads[0].offset")));
        assert!(
            e.message().starts_with("the region starts at 18446744073709551104B and is 1GiB long: it would end past 1EiB"),
            "{e}"
        );
        // Without an offset, the region that follows the previous one is checked as well.
        // (1048576TiB is 1 EiB: the first region fills the largest disk.)
        let e = err(
            "device: { kind: nvme }\nworkloads:\n  - { kind: fio, size: 1048576TiB }\n  \
             - { kind: fio, size: 4k }\n",
        );
        assert_eq!(e.path(), Some("workloads[1].size"), "{e}");
        ok(
            "device: { kind: nvme }\nworkloads:\n  - { kind: fio, offset: 1048575TiB, size: 1TiB }\n",
        );
        let e = err("device: { kind: hdd5400, capacity: 2000000TB }\nworkloads: [{ kind: fio }]\n");
        assert_eq!(e.path(), Some("device.capacity"));
    }

    #[test]
    fn durations_are_at_most_100_days_so_sums_of_them_cannot_overflow() {
        let e = err(&format!("{BASE}duration: 2401h\n"));
        assert_eq!(e.path(), Some("duration"));
        assert!(e.message().contains("longer than 100 days"), "{e}");
        let e = err(&format!(
            "{BASE}crypt: {{ per_sector_cost: 18446744073709551615ns }}\n"
        ));
        assert_eq!(e.path(), Some("crypt.per_sector_cost"));
        // The longest of everything still describes: per-sector cost × 1024 sectors, a full
        // stroke of 100 days in the mean seek.
        let s = ok(
            "device: { kind: hdd5400, seek_full: 2400h }\nworkloads: [{ kind: fio }]\n\
                    duration: 2400h\ncrypt: { per_sector_cost: 2400h }\n",
        );
        assert!(describe(&s).contains("per_sector_cost"));
    }

    #[test]
    fn long_lists_cost_their_count_not_their_memory() {
        // Issue 11 case 5: 83,000 variants of `{name: vN}` took 790 MB to refuse before the
        // lists were capped while parsing.
        let base = "device: { kind: nvme }\nworkloads: [{ kind: fio }]\n";
        let mut text = format!("{base}variants:\n");
        for i in 0..83_000 {
            text.push_str(&format!("  - {{name: v{i}}}\n"));
        }
        let e = err(&text);
        assert_eq!(place(&e), (Some(3), Some(1), Some("variants")));
        assert_eq!(
            e.message(),
            "83000 variants; a scenario may list at most 100"
        );
        let raw: RawScenario = serde_saphyr::from_str(&text).unwrap();
        let list = raw.variants.unwrap().value;
        assert_eq!((list.items.len(), list.total), (MAX_VARIANTS, 83_000));
        // Workloads, atomic streams, policies and patches likewise.
        let many = |item: &str, n: usize| vec![item; n].join(", ");
        for (text, path, says) in [
            (
                format!(
                    "device: {{ kind: nvme }}\nworkloads: [{}]\n",
                    many("{kind: fio}", 65)
                ),
                "workloads",
                "65 workloads; a scenario may list at most 64",
            ),
            (
                format!(
                    "{base}memory: {{ ram: 1GiB, atomic: [{}] }}\n",
                    many("{rate: 1/s}", 65)
                ),
                "memory.atomic",
                "65 atomic streams",
            ),
            (
                format!("{base}policies: [{}]\n", many("fifo", 65)),
                "policies",
                "65 policies",
            ),
            (
                format!(
                    "{base}kernel: {{ patches: [{}] }}\n",
                    many("force-highorder", 65)
                ),
                "kernel.patches",
                "65 patches",
            ),
        ] {
            let e = err(&text);
            assert_eq!(e.path(), Some(path), "{e}");
            assert!(e.message().starts_with(says), "{e}");
        }
        // Inside a variant's `set:` the error stays at the variant's list.
        let e = err(&format!(
            "{base}variants:\n  - name: a\n    set:\n      workloads: [{}]\n",
            many("{kind: fio}", 65)
        ));
        assert_eq!(
            place(&e),
            (Some(6), Some(7), Some("variants[0].set.workloads"))
        );
        // A list that is no list still says so.
        let e = err(&format!("{base}policies: fifo\n"));
        assert_eq!(e.message(), "expected a list, got \"fifo\"");
    }

    #[test]
    fn ios_in_flight_are_bounded() {
        let e = err(
            "device: { kind: nvme }\nworkloads:\n  - { kind: fio, iodepth: 65536, numjobs: 4 }\n  - { kind: fio, numjobs: 2 }\n",
        );
        assert_eq!(e.path(), Some("workloads[1].numjobs"));
        assert!(
            e.message()
                .starts_with("the fio jobs keep 262146 I/Os in flight in all"),
            "{e}"
        );
        ok(
            "device: { kind: nvme }\nworkloads:\n  - { kind: fio, iodepth: 65536, numjobs: 4 }\n  - { kind: buffered-writer, rate: 1MB/s }\n",
        );
        let e = err(
            "device: { kind: nvme }\nworkloads:\n  - { kind: fio, iodepth: 65536, numjobs: 5 }\n",
        );
        assert_eq!(e.path(), Some("workloads[0].iodepth"));
    }
}
