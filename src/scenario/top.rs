//! The top level of a scenario file: from [`RawScenario`] to [`Scenario`] (the run's length,
//! seed, replications, CPUs and policies here, each section through its own module), the bounds
//! on the work one `qsim run` may ask for, and the rules every section follows.
//!
//! The sections are the only producers of value errors. Each names the field path
//! (`workloads[1].rate`), points at the value's line and column, and carries a hint.
//!
//! Each section documents its own defaults and rules; what holds across sections is here.
//!
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
//!   while they are parsed ([`super::schema::Capped`]): a list far too long costs its count,
//!   not its memory.
//! - Degenerate costs are refused with the smallest accepted value: a 512-byte request costs at
//!   least [`MIN_SERVICE`] (100 ns) on average under every policy — the device's part (a
//!   generic `service` mean, an NVMe's `overhead + 512 B / transfer_rate`, an HDD's 512 B /
//!   `transfer_rate`, which a sequential request pays alone) plus dm-crypt's, which policy
//!   `none` skips. A free device behind a dm-crypt that serves is accepted. Arrival rates (fio
//!   `rate`, atomic streams) lie in
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
//!   scenarios merged exactly as a variant's `set:` (or into one item of `workloads` or
//!   `memory.atomic`, or removing a section: `setarg`), in the order given, before any of this
//!   validation, so every rule and message here applies to them. Precedence, lowest first: the
//!   file, a variant's `set:`, the `--set`s. The command line is the user's last word, so a
//!   `--set` reaches the base and every variant even where a variant sets the same field
//!   (`--set kernel.version=2.6.37` runs every variant on 2.6.37). The fixed fields of a
//!   variant's `set:` (`seed`, …) do not bind a `--set`, which changes the base too. An error in
//!   a value a `--set` wrote names the argument (`--set memory.ram=1GB: memory.ram: …`), not a
//!   line of the file.

use super::block::{RawBlock, block};
use super::check::{Checker, Zero, loc, val};
use super::crypt::{RawCrypt, crypt};
use super::device::{DeviceKind, RawDevice, device, request_floor};
use super::kernel::{RawKernel, kernel};
use super::memory::{RawMemory, memory};
use super::receiver::link_readers;
use super::schema::{Capped, MAX_LISTED_NAMES, raw_section};
use super::types::*;
use super::units::Duration;
use super::variants::{MAX_VARIANTS, RawVariant, variants};
use super::workload::{MAX_WORKLOADS, RawWorkload, workloads};
use super::{Error, ErrorKind, Source, suggestion};
use crate::engine::SimDuration;
use serde_saphyr::{Location, Spanned};

/// Default `max_events`.
pub const DEFAULT_MAX_EVENTS: u64 = 500_000_000;
/// Default `replications`.
pub const DEFAULT_REPLICATIONS: u32 = 10;
/// Largest `replications` (and `-r`).
pub const MAX_REPLICATIONS: u32 = 1000;

raw_section! {
    /// The whole scenario file.
    pub struct RawScenario {
        /// Scenario name; defaults to the file stem.
        [name] name: String,
        /// One-line purpose.
        [value] description: String,
        /// Master seed.
        [value] seed: u64,
        /// Run length, warm-up included.
        [value] duration: Duration,
        /// Period excluded from statistics.
        [value] warmup: Duration,
        /// Event budget.
        [value] max_events: u64,
        /// Replications per policy and variant.
        [value] replications: u32,
        /// CPUs.
        [value] cpus: u32,
        /// Kernel constants.
        [map] kernel: RawKernel,
        /// The disk (required).
        [map] device: RawDevice,
        /// The disk's request queue.
        [map] block: RawBlock,
        /// dm-crypt settings.
        [map] crypt: RawCrypt,
        /// Policy names.
        [value] policies: Capped<Spanned<String>, MAX_LISTED_NAMES>,
        /// Workloads (at least one).
        [value] workloads: Capped<Spanned<RawWorkload>, MAX_WORKLOADS>,
        /// Memory pressure: one lowmem zone and GFP_ATOMIC streams.
        [map] memory: RawMemory,
        /// Named variants: partial scenarios merged over this file.
        [value] variants: Capped<Spanned<RawVariant>, MAX_VARIANTS>,
        /// Published figures `qsim reproduce` compares with ([`super::published`]).
        [value] published: super::published::RawPublished,
        /// A test machine, or a machine file, whose cpus, memory, disk, cipher (and for a file
        /// kernel) fill what the file leaves out ([`super::machine`]).
        [value] machine: super::machine::MachineRef,
        /// A sweep of one or two parameters, expanded into variants ([`super::sweep`]).
        [value] sweep: Vec<Spanned<super::sweep::RawParam>>,
        /// A one-at-a-time sensitivity study, expanded into variants ([`super::sweep`]).
        [map] sensitivity: super::sweep::RawSensitivity,
    }
}

/// The accepted range of each whole-number field at the top level
/// ([`super::check::int_range`]).
pub(crate) const INT_RANGES: &[(&str, u64, u64)] = &[
    ("seed", 0, u64::MAX),
    ("max_events", 1, u64::MAX),
    ("replications", 1, MAX_REPLICATIONS as u64),
    ("cpus", 1, 1024),
];

/// Validates a parsed file into a [`Scenario`]; `stem` is the default name. `overrides` are the
/// command line's `--set`s, in order. The base scenario (the file with the overrides merged over
/// it) is resolved first, then each variant (the file, its `set:`, then the overrides).
pub(crate) fn validate(
    raw: Spanned<RawScenario>,
    src: &Source<'_>,
    stem: &str,
    overrides: &[super::setarg::Override],
) -> Result<Scenario, Error> {
    let c = Checker { src };
    let file = raw.value;
    let mut raw = file.clone();
    for o in overrides {
        o.apply(&mut raw).map_err(|e| with_overrides(src, e))?;
    }
    // Each variant is a whole scenario: refuse a list too long before resolving any of it.
    if let Some(list) = &raw.variants
        && list.value.over()
    {
        let e = c.at("variants", list).bad_value(
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
    super::sweep::expand(&c, &raw, stem, &mut base).map_err(|e| with_overrides(src, e))?;
    work_in_bounds(&c, &raw, &base).map_err(|e| with_overrides(src, e))?;
    if let Some(p) = &raw.published {
        super::published::published(&c, p, &base, None).map_err(|e| with_overrides(src, e))?;
    }
    Ok(base)
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
    let e = c.at(path, l).bad_value(problem, WORK_HINT);
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
    // An error inside a machine file is about that file alone.
    let elsewhere = !from_override && e.0.file != src.name;
    if !src.overrides.is_empty() && !from_override && !elsewhere {
        let labels: Vec<&str> = src.overrides.iter().map(|o| o.label.as_str()).collect();
        e.0.message = format!("with {}: {}", labels.join(", "), e.0.message);
    }
    e
}

/// Resolves everything but `variants` (left empty).
pub(crate) fn scenario(c: &Checker, raw: &RawScenario, stem: &str) -> Result<Scenario, Error> {
    match super::machine::expand(c, raw)? {
        Some(expanded) => resolved(c, &expanded, stem),
        None => resolved(c, raw, stem),
    }
}

/// `duration` and `warmup`, the warm-up shorter.
fn horizon(c: &Checker, raw: &RawScenario) -> Result<(SimDuration, SimDuration), Error> {
    let duration = c.dur(
        &raw.duration,
        "duration",
        SimDuration::from_secs(60),
        Zero::Refused,
    )?;
    let warmup = c.dur(&raw.warmup, "warmup", SimDuration::ZERO, Zero::Allowed)?;
    if warmup >= duration {
        return Err(c.at("warmup", &raw.warmup).conflict(
            format!("the warm-up ({warmup}) must be shorter than the duration ({duration})"),
            "lengthen `duration` or shorten `warmup`; the warm-up is part of the duration",
        ));
    }
    Ok((duration, warmup))
}

/// What the machine bounds the workloads by: the disk's capacity, and the largest bio of the
/// kernel (512 KiB on 2.6.x, 1 MiB after).
/// The workloads, checked against the memory model they need, with every `from:` writer
/// linked to its receive path.
fn linked_workloads(
    c: &Checker,
    raw: &RawScenario,
    bounds: super::workload::Bounds,
    mut memory: Option<&mut MemoryConfig>,
) -> Result<Vec<WorkloadConfig>, Error> {
    let mut list = workloads(c, &raw.workloads, bounds)?;
    super::workload::need_memory(c, &raw.workloads, &list, memory.is_some())?;
    link_readers(
        c,
        &raw.workloads,
        &mut list,
        raw.memory.as_ref(),
        memory.take(),
    )?;
    Ok(list)
}

fn bounds(kernel: &KernelConfig, capacity: Option<u64>) -> super::workload::Bounds {
    let max_request = if kernel.version.is_modern() {
        super::workload::MAX_BIO_BYTES
    } else {
        super::workload::MAX_REQUEST_BYTES
    };
    super::workload::Bounds {
        capacity,
        max_request,
    }
}

/// [`scenario`] once its `machine:` is expanded.
fn resolved(c: &Checker, raw: &RawScenario, stem: &str) -> Result<Scenario, Error> {
    let name = match &raw.name {
        Some(s) => c.name(
            s,
            "name",
            "the name is empty",
            "give a short name, or leave `name` out to use the file name",
        )?,
        None => c.stem_name(stem)?,
    };
    let description = val(&raw.description).unwrap_or_default();
    let seed = val(&raw.seed).unwrap_or(1);
    let (duration, warmup) = horizon(c, raw)?;
    let max_events = c.int(&raw.max_events, "max_events", DEFAULT_MAX_EVENTS)?;
    let replications = c.int(&raw.replications, "replications", DEFAULT_REPLICATIONS)?;
    let cpus = c.int(&raw.cpus, "cpus", 1)?;
    let (kernel, patch_locs) = kernel(c, raw.kernel.as_ref().map(|k| &k.value))?;
    let Some(raw_device) = &raw.device else {
        return Err(c.at("device", None::<Location>).missing(
            "the scenario has no device",
            format!(
                "add one, e.g. `device: {{ kind: hdd5400 }}`; kinds: {}",
                DeviceKind::NAMES.join(", ")
            ),
        ));
    };
    let device = device(c, &raw_device.value, raw_device.referenced)?;
    let raw_block = raw.block.as_ref().map(|b| &b.value);
    let block = block(c, raw_block, &kernel, &device, cpus)?;
    let crypt = crypt(
        c,
        raw.crypt.as_ref().map(|b| &b.value),
        &patch_locs,
        &kernel,
    )?;
    let policies = policies(c, &raw.policies, &kernel)?;
    request_floor(
        c,
        &raw_device.value,
        raw_device.referenced,
        &device,
        &crypt,
        &policies,
    )?;
    let mut memory = match &raw.memory {
        Some(m) => {
            super::dmcrypt::no_memory_model(c, m.referenced, &kernel)?;
            Some(memory(c, &m.value, m.referenced)?)
        }
        None => None,
    };
    let capacity = super::device::capacity(&device);
    let workloads = linked_workloads(c, raw, bounds(&kernel, capacity), memory.as_mut())?;
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
        sweep: None,
        fio_given: Default::default(),
        machine_file: raw
            .machine
            .as_ref()
            .map(|m| m.value.0.trim().to_string())
            .filter(|m| super::machine::is_machine_file_name(m)),
    })
}

/// `policies:`: names from the model's registry (or `dm-crypt+<flag>…`), each once, that the
/// kernel has; `fifo` when absent (`dm-crypt` after 2.6.x).
///
/// Two patterns stand for many tables ([`FlagPattern`]): `dm-crypt+*` is every combination of
/// the flags the kernel has (a kernel without a flag is silently spared it), and
/// `dm-crypt+{a,b,…}` every combination of just those (a flag the kernel lacks is refused as
/// the table would be, "Invalid feature arguments", at the entry's line). Either expands in
/// place to the default `dm-crypt` first, then by number of flags in [`DmFlags::ALL`] order
/// ([`DmFlags::combinations`]). A name that two entries give and a pattern made is listed
/// once, where it first came; a name written out twice is an error, as without patterns. The
/// expanded list holds at most [`MAX_LISTED_NAMES`] names.
///
/// [`FlagPattern`]: crate::model::crypt::policy::FlagPattern
/// [`DmFlags::ALL`]: crate::model::crypt::policy::DmFlags::ALL
/// [`DmFlags::combinations`]: crate::model::crypt::policy::DmFlags::combinations
fn policies(
    c: &Checker,
    f: &Option<Spanned<Capped<Spanned<String>, MAX_LISTED_NAMES>>>,
    kernel: &KernelConfig,
) -> Result<Vec<String>, Error> {
    use crate::model::crypt::policy::FlagPattern;
    let valid = crate::model::policy_names();
    let Some(list) = f else {
        return Ok(vec![
            if kernel.version.is_modern() {
                "dm-crypt"
            } else {
                "fifo"
            }
            .to_string(),
        ]);
    };
    c.too_long(
        list,
        "policies",
        "policies",
        "each policy may be listed once",
    )?;
    if list.value.is_empty() {
        return Err(c.at("policies", list).missing(
            "the policy list is empty",
            format!("name at least one of: {}", valid.join(", ")),
        ));
    }
    const FLAGS: &str = "; dm-crypt's flags as dm-crypt+<flag>+…: same_cpu_crypt, \
                         submit_from_crypt_cpus, no_read_workqueue, no_write_workqueue, \
                         high_priority; every combination as dm-crypt+* or dm-crypt+{a,b}";
    // Each name as written, its canonical name (flags in any order are one table) and whether
    // a pattern made it (duplicates of those are dropped, not refused).
    let mut out: Vec<(String, &'static str, bool)> = Vec::new();
    for (i, p) in list.value.iter().enumerate() {
        let path = format!("policies[{i}]");
        let named = super::shorten(&p.value);
        if let Some(pattern) = FlagPattern::parse(&p.value) {
            expand_pattern(c, &path, p, pattern, kernel, &mut out)?;
            continue;
        }
        let Some(info) = crate::model::crypt::policy::find(&p.value) else {
            let hint = match suggestion(&p.value, &valid) {
                Some(s) => format!("did you mean `{s}`? valid policies: {}", valid.join(", ")),
                None => format!("valid policies: {}", valid.join(", ")),
            };
            return Err(c.at(&path, p).unknown(
                format!("unknown policy `{named}`"),
                format!("{hint}{FLAGS}"),
            ));
        };
        super::dmcrypt::policy_fits(c, &path, p, info, kernel)?;
        match out.iter().find(|(_, n, _)| *n == info.name) {
            Some((_, _, false)) => {
                return Err(c.at(&path, p).conflict(
                    format!("policy `{named}` is listed twice"),
                    "list each policy once; replications, not repeats, measure noise",
                ));
            }
            // Already made by a pattern above: it keeps that place.
            Some((_, _, true)) => {}
            None => out.push((p.value.clone(), info.name, false)),
        }
    }
    Ok(out.into_iter().map(|(n, _, _)| n).collect())
}

/// The names a flag pattern (`dm-crypt+*`, `dm-crypt+{a,b}`, written at `path`) expands to on
/// `kernel`, appended to `out` unless already there (a name a pattern makes is never refused as
/// a repeat); the list may not grow past [`MAX_LISTED_NAMES`].
fn expand_pattern(
    c: &Checker,
    path: &str,
    p: &Spanned<String>,
    pattern: Result<crate::model::crypt::policy::FlagPattern, String>,
    kernel: &KernelConfig,
    out: &mut Vec<(String, &'static str, bool)>,
) -> Result<(), Error> {
    use crate::model::crypt::policy::{DmFlags, FlagPattern};
    let named = super::shorten(&p.value);
    let pattern = pattern.map_err(|why| {
        c.at(path, p).unknown(
            format!("`{named}`: {why}"),
            "write dm-crypt+* for every combination of the kernel's flags, or \
                 dm-crypt+{a,b} with flags among same_cpu_crypt, submit_from_crypt_cpus, \
                 no_read_workqueue, no_write_workqueue, high_priority",
        )
    })?;
    let set = match pattern {
        FlagPattern::All => {
            // The plain table on this kernel: refused before 4.19 like `dm-crypt`.
            let base = crate::model::crypt::policy::find("dm-crypt").expect("registered");
            super::dmcrypt::policy_fits(c, path, p, base, kernel)?;
            kernel
                .version
                .dmcrypt()
                .map_or(DmFlags::NONE, |r| r.flags())
        }
        FlagPattern::Subset(set) => {
            let all = crate::model::crypt::policy::find(&set.policy_name()).expect("a flag set");
            super::dmcrypt::policy_fits(c, path, p, all, kernel)?;
            set
        }
    };
    for flags in set.combinations() {
        let info = crate::model::crypt::policy::find(&flags.policy_name()).expect("a flag set");
        if !out.iter().any(|(_, n, _)| *n == info.name) {
            out.push((info.name.to_string(), info.name, true));
        }
    }
    if out.len() > MAX_LISTED_NAMES {
        return Err(c.at(path, p).bad_value(
            format!(
                "`{named}` makes the policy list {} names long; at most \
                     {MAX_LISTED_NAMES} may be listed",
                out.len()
            ),
            "name fewer flags in the braces, or fewer other policies",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::distribution::RawDistribution;
    use crate::scenario::schema::Merge;
    use crate::scenario::testutil::*;

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

    /// A modern scenario on `version` with `policies` (YAML flow text).
    fn modern(version: &str, policies: &str) -> String {
        format!(
            "device: {{ kind: nvme }}\nkernel: {{ version: \"{version}\" }}\n\
             workloads: [{{ kind: fio }}]\npolicies: {policies}\n"
        )
    }

    #[test]
    fn flag_patterns_expand_to_every_combination_the_kernel_has() {
        let s = ok(&modern("6.12", "[dm-crypt+*]"));
        assert_eq!(s.policies.len(), 32);
        assert_eq!(s.policies[0], "dm-crypt");
        assert_eq!(s.policies[1], "dm-crypt+same_cpu_crypt");
        assert_eq!(
            s.policies[31],
            "dm-crypt+same_cpu_crypt+submit_from_crypt_cpus+no_read_workqueue+\
             no_write_workqueue+high_priority"
        );
        // 5.9 has no high_priority: 16; 4.19 has neither no-workqueue flag: 4.
        let s = ok(&modern("5.9", "[dm-crypt+*]"));
        assert_eq!(s.policies.len(), 16);
        assert!(s.policies.iter().all(|p| !p.contains("high_priority")));
        assert_eq!(ok(&modern("4.19", "[dm-crypt+*]")).policies.len(), 4);
        // A subset in braces, in place among other names.
        let s = ok(&modern(
            "6.12",
            "[none, \"dm-crypt+{no_write_workqueue,no_read_workqueue}\"]",
        ));
        assert_eq!(
            s.policies,
            [
                "none",
                "dm-crypt",
                "dm-crypt+no_read_workqueue",
                "dm-crypt+no_write_workqueue",
                "dm-crypt+no_read_workqueue+no_write_workqueue"
            ]
        );
    }

    #[test]
    fn a_flag_the_kernel_lacks_in_braces_is_refused_at_its_entry() {
        let e = err(&modern(
            "5.9",
            "[none, \"dm-crypt+{same_cpu_crypt,high_priority}\"]",
        ));
        assert_eq!((e.line(), e.path()), (Some(4), Some("policies[1]")));
        assert!(e.message().contains("Invalid feature arguments"), "{e}");
        assert!(e.message().contains("high_priority"), "{e}");
        let e = err(&modern("6.12", "[\"dm-crypt+{no_read_wq}\"]"));
        assert_eq!(e.kind(), ErrorKind::UnknownName);
        assert!(e.message().contains("unknown flag `no_read_wq`"), "{e}");
        // Before 4.19 there is no dm-crypt to expand.
        let e = err(&format!("{BASE}policies: [dm-crypt+*]\n"));
        assert_eq!(e.path(), Some("policies[0]"));
    }

    #[test]
    fn names_a_pattern_makes_twice_are_listed_once() {
        // An explicit name before or after a pattern keeps the first place; the pattern adds
        // the rest once.
        let s = ok(&modern(
            "6.12",
            "[dm-crypt+no_read_workqueue, \"dm-crypt+{no_read_workqueue}\", dm-crypt]",
        ));
        assert_eq!(s.policies, ["dm-crypt+no_read_workqueue", "dm-crypt"]);
        let s = ok(&modern(
            "6.12",
            "[dm-crypt+*, \"dm-crypt+{high_priority}\"]",
        ));
        assert_eq!(s.policies.len(), 32);
        // Written out twice (in any flag order) is still an error.
        let e = err(&modern(
            "6.12",
            "[dm-crypt+no_read_workqueue+same_cpu_crypt, dm-crypt+same_cpu_crypt+no_read_workqueue]",
        ));
        assert!(e.message().contains("twice"), "{e}");
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
    fn merge_is_deep_for_mappings_and_keeps_every_span() {
        let base: RawScenario = serde_saphyr::from_str(
            "kernel:\n  hz: 1000\n  patches: [force-highorder]\ndevice:\n  kind: hdd5400\n  seek_min: 3ms\ncrypt:\n  cost: {kind: uniform, low: 1ms, high: 2ms}\npolicies: [fifo, split]\n",
        )
        .unwrap();
        let over: RawScenario = serde_saphyr::from_str(
            "kernel:\n  version: 2.6.30\ndevice:\n  kind: hdd5400\n  capacity: 1TB\ncrypt:\n  cost: {high: 3ms}\npolicies: [fifo]\nmemory: {ram: 1GiB}\n",
        )
        .unwrap();
        let mut m = base.clone();
        m.merge(over);
        let k = m.kernel.as_ref().unwrap();
        assert_eq!(k.value.hz.as_ref().map(|h| h.value), Some(1000), "kept");
        assert_eq!(
            k.value.hz.as_ref().unwrap().referenced.line(),
            2,
            "base line"
        );
        let v = k.value.version.as_ref().unwrap();
        assert_eq!((v.value.0.as_str(), v.referenced.line()), ("2.6.30", 2));
        assert_eq!(k.value.patches.as_ref().unwrap().value.len(), 1);
        let d = &m.device.as_ref().unwrap().value;
        assert!(
            d.seek_min.is_some() && d.capacity.is_some(),
            "same kind: merged"
        );
        let Some(RawDistribution::Map(cost)) = m
            .crypt
            .as_ref()
            .unwrap()
            .value
            .cost
            .as_ref()
            .map(|c| &c.value)
        else {
            panic!("map")
        };
        assert!(cost.low.is_some());
        assert_eq!(
            cost.high.as_ref().unwrap().referenced.line(),
            7,
            "from the override"
        );
        assert_eq!(m.policies.as_ref().unwrap().value.len(), 1, "lists replace");
        assert!(m.memory.is_some(), "absent in the base: taken whole");
        // A different kind replaces the mapping whole.
        let mut m = base;
        m.merge(serde_saphyr::from_str("device: {kind: nvme}\n").unwrap());
        let d = &m.device.as_ref().unwrap().value;
        assert!(d.seek_min.is_none());
        assert_eq!(d.kind.as_ref().unwrap().value, DeviceKind::Nvme);
    }
}
