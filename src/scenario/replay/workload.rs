//! `workloads[*]` of `kind: replay`: its fields (`file`, `mode`, `device`, `iodepth`,
//! `startdelay`), the trace checked when the scenario loads, and its `qsim check` rows.
//!
//! - `file` (required) is relative to the scenario file's folder.
//! - `mode` is `open` (default) or `closed`; `iodepth` defaults to 1024 open (the trace's
//!   own depth passes through unless it is deeper) and 1 closed (per process).
//! - `device` (`major,minor`) picks one device of a trace that holds several.
//! - The replay is one copy in open mode and one copy per traced process in closed mode.

use super::super::Error;
use super::super::check::{Checker, at, val};
use super::super::describe::{Rows, row};
use super::super::types::*;
use super::super::units::format_bytes;
use super::super::workload::RawWorkload;
use crate::model::base::replay::{Replay, ReplayMode, TraceHandle};
use serde_saphyr::Location;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A replay's default in-flight cap in open mode.
pub const OPEN_IODEPTH: u32 = 1024;

super::super::schema::names! {
    /// `workloads[*].mode` of a replay.
    pub enum ModeName {
        /// At the trace's times.
        Open = "open",
        /// Each process waits for its previous I/O.
        Closed = "closed",
    }
}

/// Where a replay's `file` is: relative to the scenario file's folder.
fn trace_path(scenario: &str, file: &str) -> PathBuf {
    let p = Path::new(file);
    if p.is_absolute() {
        return p.into();
    }
    match Path::new(scenario).parent() {
        Some(d) if !d.as_os_str().is_empty() && !scenario.starts_with('<') => d.join(p),
        _ => p.into(),
    }
}

/// A replay workload: the trace checked, its handle made, the job it runs as.
pub(crate) fn replay(
    c: &Checker,
    w: &RawWorkload,
    here: Location,
    path: &str,
    cursor: &mut u64,
    bounds: (Option<u64>, u64),
) -> Result<FioJob, Error> {
    let p = |f: &str| at(path, f);
    let Some(file) = &w.file else {
        return Err(c.at(&p("file"), here).missing(
            "a replay workload needs a `file`",
            "name the trace, e.g. `file: traces/loop-randrw.blktrace` (blkparse text, blktrace \
             NAME.blktrace.N files or a fio iolog), relative to the scenario file",
        ));
    };
    let mode = match val(&w.mode).unwrap_or(ModeName::Open) {
        ModeName::Open => ReplayMode::Open,
        ModeName::Closed => ReplayMode::Closed,
    };
    let (trace, checked) = checked_trace(c, w, file, path, bounds.0)?;
    let s = &checked.summary;
    let max_request = bounds.1;
    let numjobs = match mode {
        ReplayMode::Open => 1,
        ReplayMode::Closed => s.processes.len() as u32,
    };
    let default_depth = if mode == ReplayMode::Open {
        OPEN_IODEPTH
    } else {
        1
    };
    let iodepth = c.int(&w.iodepth, &p("iodepth"), default_depth)?;
    *cursor = (*cursor).max(s.extent.div_ceil(512) * 512);
    let (startdelay, startdelay_high) = super::super::workload::start_delay_of(w);
    if startdelay_high.is_some() {
        return Err(c.at(&p("startdelay"), &w.startdelay).bad_value(
            "a replay takes one start delay, not a range",
            "give a single duration, e.g. startdelay: 1s",
        ));
    }
    Ok(FioJob {
        rw: RwKind::RandRw,
        rwmixread: (s.reads * 100 / s.ios.max(1)) as u32,
        bs: 4096,
        size: s.extent.div_ceil(512).max(1) * 512,
        offset: 0,
        arrivals: Arrivals::Closed {
            iodepth,
            think: None,
        },
        numjobs,
        sync_writes: false,
        direct: true,
        io_size: None,
        number_ios: None,
        startdelay,
        thinktime: None,
        startdelay_high: None,
        serve: None,
        replay: Some(Box::new(Replay {
            file: trace.display().to_string(),
            mode,
            summary: s.clone(),
            source: TraceHandle(Some(Arc::new(super::FileTrace::new(
                checked.clone(),
                max_request,
            )))),
        })),
    })
}

/// The replay's trace found and checked, and within the disk.
fn checked_trace(
    c: &Checker,
    w: &RawWorkload,
    file: &serde_saphyr::Spanned<String>,
    path: &str,
    capacity: Option<u64>,
) -> Result<(PathBuf, Arc<super::Checked>), Error> {
    let p = |f: &str| at(path, f);
    let trace = trace_path(c.src.name, &file.value);
    let device = w.device.as_ref().map(|d| d.value.as_str());
    let checked = super::check(&trace, device).map_err(|e| {
        let mut err = e.clone().into_error();
        if err.0.line.is_none() {
            // A problem with the trace as a whole points at the scenario's `file:` line.
            err = c
                .at(&p("file"), file)
                .bad_value(format!("{}: {}", e.file, e.message), e.hint.clone());
        }
        err
    })?;
    let s = &checked.summary;
    if let Some(cap) = capacity
        && s.extent > cap
    {
        return Err(c.at(&p("file"), file).bad_value(
            format!(
                "the trace reaches {} into its device, past the disk's {}",
                format_bytes(s.extent),
                format_bytes(cap)
            ),
            "replay it on a larger disk (`device.capacity`)",
        ));
    }
    Ok((trace, checked))
}

/// A replay's rows in `qsim check`: the trace, what it holds, the mode.
pub(crate) fn describe(o: &mut Rows, name: &str, f: &FioJob, r: &Replay) {
    let s = &r.summary;
    row(o, 2, name, &format!("replay: {} ({})", r.file, s.format));
    if let Some(d) = &s.device {
        row(o, 4, "device", d);
    }
    row(
        o,
        4,
        "I/Os",
        &format!(
            "{} ({} reads, {} writes), {}; {} skipped",
            s.ios,
            s.reads,
            s.ios - s.reads,
            format_bytes(s.bytes),
            s.skipped
        ),
    );
    row(o, 4, "span", &format!("{:.6} s", s.span_ns as f64 * 1e-9));
    row(
        o,
        4,
        "flags",
        &format!("{} sync, {} meta/FUA/readahead", s.sync, s.flagged),
    );
    row(o, 4, "extent", &format_bytes(s.extent));
    let names: Vec<String> = s
        .processes
        .iter()
        .take(8)
        .map(|(pid, n)| {
            if n.is_empty() {
                pid.to_string()
            } else {
                format!("{pid} {n}")
            }
        })
        .collect();
    let more = s.processes.len().saturating_sub(8);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    row(o, 4, "processes", &format!("{}{more}", names.join(", ")));
    let depth = match f.arrivals {
        Arrivals::Closed { iodepth, .. } | Arrivals::Open { iodepth, .. } => iodepth,
    };
    let loop_text = match r.mode {
        ReplayMode::Open => format!("open: at the trace's times, at most {depth} in flight"),
        ReplayMode::Closed => format!(
            "closed: each process waits its trace gap after its previous issue, {depth} in \
             flight each ({} copies)",
            f.numjobs
        ),
    };
    row(o, 4, "mode", &loop_text);
}

/// Whether a `qsim run` argument names a trace rather than a scenario: not a `.yaml`,
/// `.yml` or `.fio` file, and either named as a trace (`.blkparse`, `.iolog`,
/// `NAME.blktrace.N`) or [`super::resolve`] finds a format for it (a capture's
/// `NAME.blktrace.N` files, blktrace's magic, an iolog's version line, a blkparse event line).
pub fn is_trace(arg: &str) -> bool {
    let p = Path::new(arg);
    let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
    if ["yaml", "yml", "fio"]
        .iter()
        .any(|x| x.eq_ignore_ascii_case(ext))
    {
        return false;
    }
    // A trace's own name is taken as one even when its content does not read as one, so
    // the error is the trace reader's ("not blkparse's format…"), not a YAML parser's.
    let named = ["blkparse", "iolog"]
        .iter()
        .any(|x| x.eq_ignore_ascii_case(ext))
        || p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.contains(".blktrace."));
    named || super::resolve(p).is_ok()
}

/// `qsim run TRACE`: the trace replayed on the machine of the scenario `machine` names (its
/// own workloads replaced, as a fio job file's are), with the `--set` overrides `sets`. A
/// blktrace or blkparse trace replays open (at its times), a fio iolog closed (as fio
/// replays it); a scenario with `kind: replay` chooses otherwise.
pub fn load(path: &Path, machine: &str, sets: &[String]) -> Result<Scenario, Error> {
    let shown = path.display().to_string();
    let (format, _) = super::resolve(path).map_err(super::TraceError::into_error)?;
    let mode = if format == super::Format::Iolog {
        "closed"
    } else {
        "open"
    };
    let base = super::super::fio::resolve_machine(machine, sets)?;
    let oldest = base
        .variants
        .iter()
        .map(|v| v.scenario.kernel.version)
        .fold(base.kernel.version, Ord::min);
    let quoted = serde_json::to_string(&shown).unwrap_or_default();
    let doc = format!(
        "device: {{ kind: nvme }}\nkernel: {{ version: \"{}\" }}\nworkloads:\n  - {{ kind: replay, \
         file: {quoted}, mode: {mode} }}\n",
        oldest.name()
    );
    let parsed = super::super::load_str("<replay>", &doc)?;
    let mut sc = base;
    sc.name = path
        .file_name()
        .and_then(|f| f.to_str())
        .map(|f| f.split('.').next().unwrap_or(f).to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "replay".into());
    sc.description = format!("trace {shown} replayed ({mode}) on the {machine} machine");
    sc.workloads = parsed.workloads.clone();
    for v in &mut sc.variants {
        v.scenario.workloads = parsed.workloads.clone();
    }
    Ok(sc)
}
