//! `workloads:`: fio jobs (and the `gitk` preset) and buffered writers, their regions on the
//! disk and their limits; and their `qsim check` rows.
//!
//! `workloads[*].direct` defaults to false: fio's default; `gitk` reads through the page cache
//! too.
//!
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
//! - fio's think time (`thinktime` and its companions), `startdelay` ranges and `kind: cpuio`
//!   are read in the submodule `app`.

use super::Error;
use super::check::{Checker, MAX_DISK_BYTES, at, loc, val};
use super::describe::{Rows, on_off, row};
use super::distribution::{RawDistribution, distribution, fmt_dist};
use super::memory::PAGE;
use super::schema::{Capped, Field, names, raw_section};
use super::types::*;
use super::units::{Duration, Rate, Size, format_bandwidth, format_bytes, trim_float};
use crate::engine::SimDuration;
use serde_saphyr::{Location, Spanned};

/// Largest block or chunk size: 1024 sectors, the largest request.
pub const MAX_REQUEST_BYTES: u64 = 512 * 1024;
/// Largest bio on kernels after 2.6.x: `BIO_MAX_VECS` (256) pages of 4 KiB.
pub const MAX_BIO_BYTES: u64 = 1 << 20;

/// Largest rate at which a buffered writer dirties page cache: 10 GB/s, about a memory bus; it
/// dirties 64 KiB a step, so even then a step is 6.5 µs apart.
pub const MAX_WRITER_RATE: f64 = 10e9;

/// Most workloads a scenario may list. Each is a job group with its own state and report
/// lines; a job run many times is one workload with `numjobs`.
pub const MAX_WORKLOADS: usize = 64;

/// Most I/Os the fio jobs of a scenario may keep in flight together: the sum over workloads of
/// `iodepth × numjobs`. Measured: an NVMe fio job at `iodepth: 65536, numjobs: 16` (a million
/// in flight) peaks at 159 MB, about 150 bytes an I/O, and each worker thread runs its own
/// copy; 262,144 in flight is 40 MB a run, far past any real queue (NVMe: 1023 per queue).
pub const MAX_IN_FLIGHT: u64 = 262_144;

names! {
    /// `workloads[*].kind`.
    pub enum WorkloadKindName {
        /// A fio job.
        Fio = "fio",
        /// The gitk preset fio job.
        Gitk = "gitk",
        /// A buffered writer.
        BufferedWriter = "buffered-writer",
        /// Mel Gorman's fake-gitk process.
        FakeGitk = "fake-gitk",
        /// fio's `ioengine=cpuio`: burns CPU, issues no I/O.
        CpuIo = "cpuio",
        /// A trace replayed (docs/replay.md).
        Replay = "replay",
    }
}

names! {
    /// `workloads[*].rw`.
    pub enum RwName {
        /// Sequential reads.
        Read = "read",
        /// Sequential writes.
        Write = "write",
        /// Random reads.
        RandRead = "randread",
        /// Random writes.
        RandWrite = "randwrite",
        /// Random mix.
        RandRw = "randrw",
    }
}

names! {
    /// `workloads[*].arrivals`.
    pub enum ArrivalsName {
        /// Exponential gaps.
        Poisson = "poisson",
        /// Constant gaps.
        Constant = "constant",
    }
}

raw_section! {
    /// One entry of `workloads:`; fio fields and buffered-writer fields side by side.
    pub struct RawWorkload {
        /// Name; defaults to `<kind><index>`.
        [name] name: String,
        /// fio | gitk | buffered-writer.
        [kind] kind: WorkloadKindName,
        /// fio: direction pattern.
        [value] rw: RwName,
        /// fio: read percentage for randrw.
        [value] rwmixread: u32,
        /// fio: block size.
        [value] bs: Size,
        /// Both: region size.
        [value] size: Size,
        /// Both: region offset.
        [value] offset: Size,
        /// fio: I/Os in flight.
        [value] iodepth: u32,
        /// fio: open-loop rate; buffered-writer: dirtying rate.
        [value] rate: Rate,
        /// fio: poisson | constant (open loop only).
        [value] arrivals: ArrivalsName,
        /// fio: think time (closed loop only).
        [value] think: RawDistribution,
        /// fio: copies of the job.
        [value] numjobs: u32,
        /// fio: writes carry REQ_SYNC.
        [value] sync: bool,
        /// fio: reads bypass the page cache (O_DIRECT).
        [value] direct: bool,
        /// fio: bytes of I/O per copy, then it stops issuing (`io_limit` is fio's alias).
        #[serde(alias = "io_limit")]
        [value] io_size: Size,
        /// fio: I/Os per copy, then it stops issuing.
        [value] number_ios: u64,
        /// fio: when each copy starts (a duration, or a range `low-high`).
        [value] startdelay: app::DelayRange,
        /// buffered-writer: the receive path (a `memory.atomic` stream) whose socket it reads,
        /// writing what arrives instead of dirtying at `rate`.
        [value] from: String,
        /// buffered-writer: writeback request size.
        [value] chunk: Size,
        /// buffered-writer: background threshold.
        [value] background: Size,
        /// buffered-writer: dirty limit.
        [value] dirty_limit: Size,
        /// fake-gitk: loops (read, walk, free).
        [value] loops: u32,
        /// fake-gitk: bytes processed per progress line.
        [value] progress_every: Size,
        /// fake-gitk: CPU time to hash one MiB of its buffer.
        [value] hash_cost: Duration,
        /// fake-gitk: bytes of the parent→child hash map built per loop.
        [value] map: Size,
        /// fake-gitk: commits in its logs, each inserted into the hash map as it is walked.
        [value] commits: u64,
        /// fio: pause after `thinktime_blocks` I/Os (bare number: microseconds).
        [value] thinktime: app::Micros,
        /// fio: I/Os between pauses.
        [value] thinktime_blocks: u32,
        /// fio: count `complete`d or `issue`d I/Os.
        [value] thinktime_blocks_type: app::BlocksTypeName,
        /// fio: CPU burnt at the start of each pause (bare number: microseconds).
        [value] thinktime_spin: app::Micros,
        /// cpuio: percentage of one CPU each copy burns.
        [value] cpuload: u32,
        /// cpuio: CPU burnt per cycle (bare number: microseconds).
        [value] cpuchunks: app::Micros,
        /// fio (qsim's): a storage daemon's request before each burst of writes.
        [map] serve: serve::RawServe,
        /// replay: the trace file, relative to the scenario file.
        [value] file: String,
        /// replay: open | closed.
        [value] mode: super::replay::workload::ModeName,
        /// replay: the traced device to replay (`major,minor`).
        [value] device: String,
    }
}

impl WorkloadKindName {
    /// The fields this kind takes besides `name` and `kind`, in the order its hint lists them;
    /// a field of another kind is refused at its own line.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            WorkloadKindName::Fio | WorkloadKindName::Gitk => &[
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
                "thinktime",
                "thinktime_blocks",
                "thinktime_blocks_type",
                "thinktime_spin",
                "serve",
            ],
            WorkloadKindName::BufferedWriter => &[
                "rate",
                "from",
                "chunk",
                "background",
                "dirty_limit",
                "size",
                "offset",
            ],
            WorkloadKindName::FakeGitk => &[
                "size",
                "offset",
                "bs",
                "loops",
                "progress_every",
                "hash_cost",
                "map",
                "commits",
                "numjobs",
                "startdelay",
            ],
            WorkloadKindName::CpuIo => &["cpuload", "cpuchunks", "numjobs", "startdelay"],
            WorkloadKindName::Replay => &["file", "mode", "device", "iodepth", "startdelay"],
        }
    }
}

/// The accepted range of each whole-number field of `workloads[]`
/// ([`super::check::int_range`]).
pub(crate) const INT_RANGES: &[(&str, u64, u64)] = &[
    ("workloads[].rwmixread", 0, 100),
    ("workloads[].iodepth", 1, 65_536),
    ("workloads[].numjobs", 1, 1024),
    ("workloads[].number_ios", 1, u64::MAX),
    ("workloads[].loops", 1, 1000),
    ("workloads[].commits", 0, u64::MAX),
    ("workloads[].thinktime_blocks", 1, 1_000_000_000),
    ("workloads[].cpuload", 1, 100),
    ("workloads[].serve.replicas", 0, 64),
];

/// `workloads:`: at least one, each resolved in order (a region without `offset` starts where
/// the previous one ends), names unique, I/Os in flight bounded.
pub(crate) fn workloads(
    c: &Checker,
    list: &Field<Capped<Spanned<RawWorkload>, MAX_WORKLOADS>>,
    bounds: Bounds,
) -> Result<Vec<WorkloadConfig>, Error> {
    let raw = match list {
        Some(w) if !w.value.is_empty() => {
            c.too_long(
                w,
                "workloads",
                "workloads",
                "give a job several copies with `numjobs` rather than listing it many times",
            )?;
            w
        }
        other => {
            return Err(c.at("workloads", loc(other)).missing(
                "the scenario has no workload",
                format!(
                    "add at least one, for example:\n{}",
                    super::MINIMAL_SCENARIO
                ),
            ));
        }
    };
    let mut out: Vec<WorkloadConfig> = Vec::new();
    let mut cursor = 0u64;
    for (i, w) in raw.value.iter().enumerate() {
        let path = format!("workloads[{i}]");
        let wl = workload(c, &w.value, w.referenced, &path, i, &mut cursor, bounds)?;
        if out.iter().any(|o| o.name == wl.name) {
            return Err(c
                .at(
                    &at(&path, "name"),
                    loc(&w.value.name).or(Some(w.referenced)),
                )
                .conflict(
                    format!("workload name `{}` is used twice", wl.name),
                    "give each workload its own `name:` (the default is <kind><index>)",
                ));
        }
        out.push(wl);
    }
    app::some_io(c, raw.value.iter().next().map(|w| w.referenced), &out)?;
    in_flight_bounded(c, raw, &out)?;
    serve::one_link(c, raw, &out)?;
    Ok(out)
}

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
            return Err(c.at(&format!("workloads[{i}].{field}"), l).bad_value(
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

/// Where a workload sits while it is resolved: its field path, the layout cursor (the end of
/// the previous region) and the disk's capacity, if it has one.
struct Place<'p> {
    path: &'p str,
    cursor: &'p mut u64,
    capacity: Option<u64>,
    /// The largest request (`bs`) the kernel passes as one bio.
    max_request: u64,
}

/// What the machine bounds a workload by: the disk's capacity (if it has one) and the largest
/// bio (512 KiB on 2.6.x, whose requests stop at 1024 sectors; 1 MiB after, `BIO_MAX_VECS`
/// pages).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    /// The disk's capacity, bytes.
    pub(crate) capacity: Option<u64>,
    /// The largest `bs`, bytes.
    pub(crate) max_request: u64,
}

impl Place<'_> {
    fn field(&self, name: &str) -> String {
        at(self.path, name)
    }
}

/// One entry of `workloads:`.
fn workload(
    c: &Checker,
    w: &RawWorkload,
    here: Location,
    path: &str,
    index: usize,
    cursor: &mut u64,
    bounds: Bounds,
) -> Result<WorkloadConfig, Error> {
    let Some(kind) = &w.kind else {
        return Err(c.at(path, here).missing(
            "the workload has no `kind`",
            format!(
                "add `kind:` with one of {}",
                WorkloadKindName::NAMES.join(", ")
            ),
        ));
    };
    let kind = kind.value;
    let name = match &w.name {
        Some(s) => c.name(
            s,
            &at(path, "name"),
            "the name is empty",
            "give a short name, or leave it out for <kind><index>",
        )?,
        None => format!("{}{index}", kind.name()),
    };
    let owner = format!("workload kind `{}`", kind.name());
    c.only(&w.present(), kind.fields(), path, &owner)?;
    let mut place = Place {
        path,
        cursor,
        capacity: bounds.capacity,
        max_request: bounds.max_request,
    };
    let kind_cfg = match kind {
        WorkloadKindName::Fio | WorkloadKindName::Gitk => {
            WorkloadKind::Fio(fio(c, w, &mut place, kind == WorkloadKindName::Gitk)?)
        }
        WorkloadKindName::BufferedWriter => {
            WorkloadKind::BufferedWriter(writer(c, w, here, &mut place)?)
        }
        WorkloadKindName::FakeGitk => WorkloadKind::FakeGitk(gitk::fake_gitk(c, w, &mut place)?),
        WorkloadKindName::CpuIo => WorkloadKind::CpuIo(app::cpuio(c, w, here, path)?),
        WorkloadKindName::Replay => WorkloadKind::Fio(super::replay::workload::replay(
            c,
            w,
            here,
            path,
            place.cursor,
            (place.capacity, place.max_request),
        )?),
    };
    Ok(WorkloadConfig {
        name,
        kind: kind_cfg,
    })
}

/// A workload's `startdelay`: its low end and the high end of a range.
pub(crate) fn start_delay_of(w: &RawWorkload) -> (SimDuration, Option<SimDuration>) {
    app::start_delay(w)
}

/// A size field in whole sectors, or `default`.
fn size_of(c: &Checker, f: &Field<Size>, path: &str, default: u64) -> Result<u64, Error> {
    let v = val(f).map(|s| s.0).unwrap_or(default);
    c.size_multiple(v, f, path)?;
    Ok(v)
}

/// A request size (`bs`, `chunk`): whole sectors, 512 B to [`MAX_REQUEST_BYTES`].
fn request_size(c: &Checker, f: &Field<Size>, path: &str, default: u64) -> Result<u64, Error> {
    request_size_up_to(c, f, path, default, MAX_REQUEST_BYTES)
}

/// A request size of whole sectors, 512 B to `max` (a 2.6.x request or a later kernel's bio).
fn request_size_up_to(
    c: &Checker,
    f: &Field<Size>,
    path: &str,
    default: u64,
    max: u64,
) -> Result<u64, Error> {
    let v = size_of(c, f, path, default)?;
    if v == 0 || v > max {
        let hint = if max == MAX_REQUEST_BYTES {
            "the largest request is 1024 sectors = 512KiB (1MiB bios on kernels after 2.6.x)"
        } else {
            "the largest bio is BIO_MAX_VECS = 256 pages = 1MiB"
        };
        return Err(c.at(path, f).bad_value(
            format!(
                "must be between 512 and {}, got {}",
                format_bytes(max),
                format_bytes(v)
            ),
            hint,
        ));
    }
    Ok(v)
}

/// A fio job (`gitk` is one with other defaults: 256 MiB, 2 ms exponential think time).
fn fio(c: &Checker, w: &RawWorkload, place: &mut Place, gitk: bool) -> Result<FioJob, Error> {
    let path = place.path;
    let p = |f: &str| at(path, f);
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
        return Err(c.at(&p("rwmixread"), m).conflict(
            "`rwmixread` applies only to rw: randrw",
            "set `rw: randrw`, or remove rwmixread",
        ));
    }
    let rwmixread = c.int(&w.rwmixread, &p("rwmixread"), 50)?;
    let bs = request_size_up_to(c, &w.bs, &p("bs"), 4096, place.max_request)?;
    let default_size = if gitk { 256 << 20 } else { 1 << 30 };
    let size = size_of(c, &w.size, &p("size"), default_size)?;
    if size < bs {
        return Err(c.at(&p("size"), loc(&w.size).or(loc(&w.bs))).conflict(
            format!(
                "the region ({}) is smaller than one block ({})",
                format_bytes(size),
                format_bytes(bs)
            ),
            "make `size` at least `bs`",
        ));
    }
    let iodepth = c.int(&w.iodepth, &p("iodepth"), 1)?;
    let arrivals = arrivals(c, w, place.path, bs, iodepth, gitk)?;
    let offset = region(c, w, place, size)?;
    let (io_size, number_ios) = fio_limits(c, w, place.path, bs)?;
    let (startdelay, startdelay_high) = app::start_delay(w);
    let (serve, thinktime) = match serve::serve(c, w, place.path, rw, bs, iodepth)? {
        Some((s, t)) => (Some(s), Some(t)),
        None => (None, app::thinktime(c, w, place.path)?),
    };
    Ok(FioJob {
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
        thinktime,
        startdelay_high,
        serve,
        replay: None,
    })
}

/// A fio job's loop: open at `rate` (poisson or constant gaps), or closed with an optional
/// think time.
fn arrivals(
    c: &Checker,
    w: &RawWorkload,
    path: &str,
    bs: u64,
    iodepth: u32,
    gitk: bool,
) -> Result<Arrivals, Error> {
    let p = |f: &str| at(path, f);
    let Some(rate) = &w.rate else {
        if let Some(a) = &w.arrivals {
            return Err(c.at(&p("arrivals"), a).conflict(
                "`arrivals` applies only with `rate` (an open loop)",
                "add `rate: 2000/s`, or remove arrivals",
            ));
        }
        let think = match &w.think {
            Some(t) => Some(distribution(c, t, &p("think"))?),
            // The preset's think time gives way to fio's own, when the job has one.
            None if gitk && val(&w.thinktime).is_none_or(|t| t.0.is_zero()) => {
                Some(Distribution::Exponential {
                    mean: SimDuration::from_ms(2),
                })
            }
            None => None,
        };
        return Ok(Arrivals::Closed { iodepth, think });
    };
    if let Some(t) = &w.think {
        return Err(c.at(&p("think"), t).conflict(
            "`think` applies only to a closed loop, and `rate` makes this job open-loop",
            "keep `rate` (open loop) or `think` (closed loop), not both",
        ));
    }
    let written = match rate.value {
        Rate::BytesPerSec(_) => format!("{} in {} blocks", rate.value, format_bytes(bs)),
        Rate::OpsPerSec(_) => rate.value.to_string(),
    };
    Ok(Arrivals::Open {
        rate: c.arrival_rate(
            rate.value.ops_per_sec(bs),
            &written,
            Some(rate.referenced),
            &p("rate"),
        )?,
        poisson: val(&w.arrivals).unwrap_or(ArrivalsName::Poisson) == ArrivalsName::Poisson,
        iodepth,
    })
}

/// A buffered writer: dirties page cache at `rate` in whole-page chunks, between a
/// background threshold and a dirty limit.
fn writer(
    c: &Checker,
    w: &RawWorkload,
    here: Location,
    place: &mut Place,
) -> Result<BufferedWriter, Error> {
    let path = place.path;
    let p = |f: &str| at(path, f);
    let rate = match (&w.rate, &w.from) {
        (Some(_), Some(from)) => {
            return Err(c.at(&p("from"), from).conflict(
                "a writer that reads a socket (`from`) has no `rate` of its own",
                "it writes what the receive path delivers, at the stream's bandwidth: remove \
                 `rate`",
            ));
        }
        // The stream's bandwidth, filled in once the stream is found (`super::receiver`).
        (None, Some(_)) => None,
        (None, None) => {
            return Err(c.at(&p("rate"), here).missing(
                "a buffered writer needs a `rate`, or a socket to read (`from`)",
                "the rate at which it dirties page cache, e.g. `rate: 20MB/s`, or `from: \
                 rsync` to write what a `memory.atomic` receive path delivers",
            ));
        }
        (Some(rate), None) => Some(rate),
    };
    let rate = match rate {
        None => 0.0,
        Some(rate) => writer_rate(c, rate, &p("rate"))?,
    };
    let chunk = chunk(c, w, place.path)?;
    let background = val(&w.background).map(|s| s.0).unwrap_or(0);
    let dirty_limit = val(&w.dirty_limit).map(|s| s.0).unwrap_or(64 << 20);
    if dirty_limit < chunk {
        return Err(c.at(&p("dirty_limit"), &w.dirty_limit).conflict(
            format!(
                "the dirty limit ({}) is below one chunk ({})",
                format_bytes(dirty_limit),
                format_bytes(chunk)
            ),
            "raise dirty_limit to at least one chunk",
        ));
    }
    if background >= dirty_limit {
        return Err(c.at(&p("background"), &w.background).conflict(
            format!(
                "the background threshold ({}) must be below the dirty limit ({})",
                format_bytes(background),
                format_bytes(dirty_limit)
            ),
            "lower background or raise dirty_limit",
        ));
    }
    let size = size_of(c, &w.size, &p("size"), 1 << 30)?;
    if size < chunk {
        return Err(c.at(&p("size"), &w.size).conflict(
            format!(
                "the region ({}) is smaller than one chunk ({})",
                format_bytes(size),
                format_bytes(chunk)
            ),
            "make `size` at least `chunk`",
        ));
    }
    let offset = region(c, w, place, size)?;
    Ok(BufferedWriter {
        rate,
        chunk,
        background_bytes: background,
        dirty_limit_bytes: dirty_limit,
        size,
        offset,
        source: None,
    })
}

/// A writer's dirtying `rate`, at most [`MAX_WRITER_RATE`].
fn writer_rate(c: &Checker, rate: &Spanned<Rate>, path: &str) -> Result<f64, Error> {
    match c.bandwidth(rate, path)? {
        b if b > MAX_WRITER_RATE => Err(c.at(path, rate).bad_value(
            format!(
                "a writer dirtying {} is faster than the 10GB/s accepted",
                rate.value
            ),
            "10GB/s is about a memory bus; a buffered writer of a few hundred MB/s already \
             outruns any disk",
        )),
        b => Ok(b),
    }
}

/// A writer's `chunk`: a request size of whole 4 KiB pages.
fn chunk(c: &Checker, w: &RawWorkload, path: &str) -> Result<u64, Error> {
    let chunk = request_size(c, &w.chunk, &at(path, "chunk"), MAX_REQUEST_BYTES)?;
    if !chunk.is_multiple_of(PAGE) {
        // The flusher writes page-cache pages: a part-page chunk would move bytes to
        // writeback without moving any page (torture seed 3).
        return Err(c.at(&at(path, "chunk"), &w.chunk).bad_value(
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
    Ok(chunk)
}

/// A fio job's amount of work: `io_size` (whole sectors, at least one block), `number_ios` (at
/// least 1). Absent limits mean the job runs until the run ends.
fn fio_limits(
    c: &Checker,
    w: &RawWorkload,
    path: &str,
    bs: u64,
) -> Result<(Option<u64>, Option<u64>), Error> {
    let p = |f: &str| at(path, f);
    let io_size = match &w.io_size {
        None => None,
        Some(s) => {
            let v = s.value.0;
            c.size_multiple(v, &w.io_size, &p("io_size"))?;
            if v < bs {
                return Err(c.at(&p("io_size"), s).conflict(
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
            return Err(c.at(&p("number_ios"), s).bad_value(
                "must be at least 1, got 0",
                "the I/Os each copy issues before it stops; leave it out for no limit",
            ));
        }
        Some(s) => Some(s.value),
    };
    Ok((io_size, number_ios))
}

/// The region's offset (given, or right after the previous workload's region), checked to be
/// sector-aligned and inside the disk; moves the layout cursor past the region.
fn region(c: &Checker, w: &RawWorkload, place: &mut Place, size: u64) -> Result<u64, Error> {
    let offset = val(&w.offset).map(|s| s.0).unwrap_or(*place.cursor);
    c.size_multiple(offset, &w.offset, &place.field("offset"))?;
    let culprit = place.field(if w.offset.is_some() { "offset" } else { "size" });
    let l = loc(&w.offset).or(loc(&w.size));
    let end = match offset.checked_add(size) {
        Some(end) if end <= MAX_DISK_BYTES => end,
        _ => {
            return Err(c.at(&culprit, l).bad_value(
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
    if let Some(cap) = place.capacity
        && end > cap
    {
        return Err(c.at(&culprit, l).conflict(
            format!(
                "the region {}..{} runs past the end of the disk ({})",
                format_bytes(offset),
                format_bytes(end),
                format_bytes(cap)
            ),
            "shrink `size`, move `offset`, or give the device a larger `capacity`",
        ));
    }
    *place.cursor = end;
    Ok(offset)
}

/// What a fio job does before it stops: `unlimited (runs until the run ends)`, or its
/// `io_size` and `number_ios` per copy.
fn amount_text(f: &FioJob) -> String {
    let limits: Vec<String> = [
        f.io_size.map(|b| format!("io_size {}", format_bytes(b))),
        f.number_ios.map(|n| format!("number_ios {n}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if limits.is_empty() {
        return "unlimited (runs until the run ends)".to_string();
    }
    let copies = if f.numjobs > 1 { " per copy" } else { "" };
    let first = if limits.len() > 1 {
        ", whichever comes first"
    } else {
        ""
    };
    format!(
        "{}{copies}{first}, then it stops; the run ends once every finite job is done",
        limits.join(" or ")
    )
}

pub(crate) fn describe_workload(o: &mut Rows, w: &WorkloadConfig) {
    match &w.kind {
        WorkloadKind::Fio(f) => match &f.replay {
            Some(r) => super::replay::workload::describe(o, &w.name, f, r),
            None => describe_fio(o, &w.name, f),
        },
        WorkloadKind::BufferedWriter(b) => {
            row(
                o,
                2,
                &w.name,
                &match b.source {
                    None => format!("buffered-writer: {}", format_bandwidth(b.rate)),
                    Some(_) => format!(
                        "buffered-writer: writes what its socket delivers ({})",
                        format_bandwidth(b.rate)
                    ),
                },
            );
            row(o, 4, "chunk", &format_bytes(b.chunk));
            row(
                o,
                4,
                "dirty",
                &format!(
                    "flusher starts at {}, writer throttled above {}",
                    format_bytes(b.background_bytes),
                    format_bytes(b.dirty_limit_bytes)
                ),
            );
            row(o, 4, "region", &region_text(b.offset, b.size));
        }
        WorkloadKind::FakeGitk(g) => gitk::describe(o, &w.name, g),
        WorkloadKind::CpuIo(cio) => app::describe_cpuio(o, &w.name, cio),
    }
}

/// A fio job's rows in `qsim check`: pattern, loop, amount, start and region.
fn describe_fio(o: &mut Rows, name: &str, f: &FioJob) {
    let rw = match f.rw {
        RwKind::RandRw => format!("randrw, {}% reads", f.rwmixread),
        other => rw_name(other).name().to_string(),
    };
    row(o, 2, name, &format!("fio: {rw}, bs {}", format_bytes(f.bs)));
    match &f.arrivals {
        Arrivals::Closed { iodepth, think } => {
            row(o, 4, "loop", &format!("closed, iodepth {iodepth}"));
            row(
                o,
                4,
                "think",
                &think
                    .as_ref()
                    .map(fmt_dist)
                    .unwrap_or_else(|| "none".into()),
            );
        }
        Arrivals::Open {
            rate,
            poisson,
            iodepth,
        } => {
            row(
                o,
                4,
                "loop",
                &format!(
                    "open, {} IOPS ({}) {}, at most {iodepth} in flight",
                    trim_float(*rate, 3),
                    format_bandwidth(rate * f.bs as f64),
                    if *poisson { "poisson" } else { "constant gaps" }
                ),
            );
        }
    }
    row(o, 4, "numjobs", &f.numjobs.to_string());
    row(o, 4, "amount", &amount_text(f));
    match &f.serve {
        Some(s) => serve::describe_serve(o, s, f.bs),
        None => app::describe_thinktime(o, f),
    }
    row(
        o,
        4,
        "startdelay",
        &app::delay_text(f.startdelay, f.startdelay_high),
    );
    row(o, 4, "sync writes", on_off(f.sync_writes));
    row(
        o,
        4,
        "direct",
        if f.direct {
            "on (reads bypass the page cache)"
        } else {
            "off (buffered: with memory:, reads allocate page cache)"
        },
    );
    row(o, 4, "region", &region_text(f.offset, f.size));
}

/// How a scenario names a direction pattern.
fn rw_name(rw: RwKind) -> RwName {
    match rw {
        RwKind::Read => RwName::Read,
        RwKind::Write => RwName::Write,
        RwKind::RandRead => RwName::RandRead,
        RwKind::RandWrite => RwName::RandWrite,
        RwKind::RandRw => RwName::RandRw,
    }
}

fn region_text(offset: u64, size: u64) -> String {
    format!(
        "offset {}, size {} (ends at {})",
        format_bytes(offset),
        format_bytes(size),
        // Validation keeps regions inside 1 EiB; a hand-built config might not.
        offset
            .checked_add(size)
            .map_or_else(|| "past 2^64 bytes".to_string(), format_bytes)
    )
}

mod app;
mod gitk;
mod serve;
#[cfg(test)]
mod tests;

/// Refuses fake-gitk workloads without a `memory:` section (their buffers are anonymous
/// memory in the zone).
pub(crate) fn need_memory(
    c: &Checker,
    list: &Field<Capped<Spanned<RawWorkload>, MAX_WORKLOADS>>,
    workloads: &[WorkloadConfig],
    memory: bool,
) -> Result<(), Error> {
    let Some(raw) = list else { return Ok(()) };
    for (i, (w, r)) in workloads.iter().zip(raw.value.iter()).enumerate() {
        if matches!(w.kind, WorkloadKind::FakeGitk(_)) && !memory {
            return Err(c.at(&format!("workloads[{i}].kind"), loc(&r.value.kind).or(Some(r.referenced))).conflict(
                "a fake-gitk workload needs a `memory:` section",
                "its buffer is anonymous memory in the zone: add e.g. `memory: { ram: 512MiB, swap: 2GiB }`",
            ));
        }
    }
    Ok(())
}
