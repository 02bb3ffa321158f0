//! fio job files in: `qsim run job.fio` reads fio's INI job format as fio 3.33 reads it and
//! turns it into a scenario on a machine (the `hubbard-2019` NVMe machine by default).
//!
//! ```text
//! job.fio ──sections──▶ [global]/[job] options ──apply──▶ Job ──yaml──▶ workloads: (validated
//!    │                      (file:line each)                 │          as any scenario's)
//!    └── located Error (file:line:col, [job] option, hint)   └── Warning (file:line, option)
//! ```
//!
//! - Sections: `[global]` options apply to every job after it; a later `[global]` adds to
//!   (and overrides) them for the jobs that follow only. `;` and `#` start comments, also after
//!   a value. `key=value`, spaces allowed around `=`; a bare `key` only for fio's flags
//!   (`time_based`, `group_reporting`). Later options override earlier ones.
//! - Sizes follow fio's `kb_base` (applied before any other option of the job, as fio sorts
//!   it first): with the default 1024, `4k` = `4K` = `4KB` = 4096 and fio's compatibility rule
//!   reads the IEC spelling the other way, `4KiB` = 4000; with `kb_base=1000`, `4k` = `4KB` = 4000
//!   and `4KiB` = 4096. Times are fio's: `runtime`, `ramp_time` and `startdelay` in seconds
//!   without a unit, `thinktime` in microseconds.
//! - Each job becomes one fio workload (docs/model/workloads.md, "fio job files" lists every
//!   option and what it maps to). The job's entries are written as a `workloads:` list and
//!   validated by the same code as a scenario file's, so every bound holds; an error there is
//!   reported at the job file's line that set the value.
//! - An option fio knows (`fio --cmdhelp=all`, listed in `fio/options.rs`) that qsim has no
//!   mechanism for is named in a [`Warning`] (file, line, option), never dropped silently; an
//!   option fio does not know is an error, as in fio ("Bad option").

mod options;
#[cfg(test)]
mod tests;

use super::error::Inner;
use super::{Error, ErrorKind, Scenario};
use crate::engine::SimDuration;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// The scenario whose machine (host, device, block layer, crypt, policies, seed,
/// replications) a job file runs on unless told otherwise: the 2019 NVMe fio run's.
pub const DEFAULT_MACHINE: &str = "hubbard-2019";

/// Whether a `qsim run` argument names a fio job file: it ends in `.fio`.
pub fn is_job_file(arg: &str) -> bool {
    Path::new(arg)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("fio"))
}

/// An option of a job file that qsim reads but cannot honour (or honours only in part): where
/// it is and what qsim does instead. Printed on stderr by `qsim run`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The job file as named.
    pub file: String,
    /// 1-based line of the option.
    pub line: u64,
    /// The option as written (`verify`), with its job (`[reader] verify`).
    pub option: String,
    /// What qsim does with it.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.file, self.line, self.option, self.message
        )
    }
}

/// A job file read onto a machine: the scenario to run and the warnings to show.
#[derive(Debug)]
pub struct JobFile {
    /// The machine's scenario with the jobs as its workloads.
    pub scenario: Scenario,
    /// Options qsim does not model, in file order, each once.
    pub warnings: Vec<Warning>,
}

/// Reads the job file at `path` onto the machine of `machine` (a scenario file or a shipped
/// scenario's name, resolved with the `--set` overrides `sets`).
pub fn load(path: &Path, machine: &str, sets: &[String]) -> Result<JobFile, Error> {
    let shown = path.display().to_string();
    let text = super::read(path, &shown)?;
    let base = super::resolve_with_overrides(machine, sets)?;
    load_str(&shown, &text, base, machine)
}

/// Reads job-file text (`name` names it in errors, its stem names the scenario) onto `base`,
/// the machine's scenario (`machine` names it in the description).
pub fn load_str(name: &str, text: &str, base: Scenario, machine: &str) -> Result<JobFile, Error> {
    let mut r = Reader {
        name,
        lines: text.lines().collect(),
        warnings: Vec::new(),
    };
    let sections = r.sections()?;
    let jobs = r.jobs(&sections)?;
    let scenario = r.scenario(&jobs, base, machine)?;
    let mut warnings: Vec<Warning> = Vec::new();
    for w in r.warnings {
        if !warnings.contains(&w) {
            warnings.push(w);
        }
    }
    Ok(JobFile { scenario, warnings })
}

/// One `key[=value]` line.
#[derive(Debug, Clone)]
struct Opt {
    key: String,
    value: Option<String>,
    line: u64,
    /// 1-based column of the value (of the key when there is none).
    col: u64,
}

/// A `[name]` section and its options.
struct Section {
    name: String,
    line: u64,
    opts: Vec<Opt>,
}

/// fio's `rw` patterns, as qsim can run them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pattern {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// `rw`/`readwrite`: a sequential mix.
    SeqMix,
    RandRw,
}

impl Pattern {
    fn reads(self) -> bool {
        !matches!(self, Pattern::Write | Pattern::RandWrite)
    }
}

/// A value that fio may give per direction (`bs=4k,8k`: reads, writes).
#[derive(Debug, Clone, Copy, Default)]
struct PerDir<T> {
    read: Option<T>,
    write: Option<T>,
}

/// A job as fio resolved it, before it becomes a workload. `at` records the line and option
/// that set each workload field, to locate errors found later.
struct Job {
    name: String,
    line: u64,
    rw: Pattern,
    rwmixread: Option<u32>,
    bs: PerDir<u64>,
    size: Option<u64>,
    io_size: Option<u64>,
    number_ios: Option<u64>,
    offset: Option<u64>,
    runtime: Option<SimDuration>,
    time_based: bool,
    ramp: SimDuration,
    iodepth: u32,
    numjobs: u32,
    direct: bool,
    sync: bool,
    engine: String,
    rate_iops: PerDir<u64>,
    rate_bw: PerDir<u64>,
    poisson: bool,
    think: Option<SimDuration>,
    think_blocks: Option<u64>,
    think_on_issue: Option<bool>,
    think_spin: Option<SimDuration>,
    startdelay: SimDuration,
    startdelay_high: Option<SimDuration>,
    cpuload: Option<u64>,
    cpuchunks: Option<u64>,
    filename: bool,
    at: BTreeMap<&'static str, (u64, String)>,
}

impl Job {
    fn new(name: &str, line: u64) -> Job {
        Job {
            name: name.to_string(),
            line,
            rw: Pattern::Read,
            rwmixread: None,
            bs: PerDir::default(),
            size: None,
            io_size: None,
            number_ios: None,
            offset: None,
            runtime: None,
            time_based: false,
            ramp: SimDuration::ZERO,
            iodepth: 1,
            numjobs: 1,
            direct: false,
            sync: false,
            engine: "psync".to_string(),
            rate_iops: PerDir::default(),
            rate_bw: PerDir::default(),
            poisson: false,
            think: None,
            think_blocks: None,
            think_on_issue: None,
            think_spin: None,
            startdelay: SimDuration::ZERO,
            startdelay_high: None,
            cpuload: None,
            cpuchunks: None,
            filename: false,
            at: BTreeMap::new(),
        }
    }

    /// Whether fio's engine submits one I/O and waits for it (depth 1 whatever `iodepth`).
    fn sync_engine(&self) -> bool {
        !matches!(self.engine.as_str(), "libaio" | "io_uring" | "posixaio")
    }
}

/// Engines qsim knows: the synchronous ones (`psync` is fio's default) and the asynchronous
/// ones whose `iodepth` is the I/Os in flight.
const KNOWN_ENGINES: &[&str] = &[
    "sync", "psync", "vsync", "pvsync", "pvsync2", "libaio", "io_uring", "posixaio", "cpuio",
];

/// Options read and used without effect on the model: names, files, report grouping.
const HARMLESS: &[&str] = &[
    "name",
    "description",
    "filename",
    "directory",
    "group_reporting",
    "new_group",
    "kb_base",
];

/// The parser state: the file's name and lines, and the warnings so far.
struct Reader<'a> {
    name: &'a str,
    lines: Vec<&'a str>,
    warnings: Vec<Warning>,
}

/// The text of a line before its comment (`;` or `#`), trimmed.
fn uncommented(raw: &str) -> &str {
    let cut = raw.find([';', '#']).unwrap_or(raw.len());
    raw[..cut].trim()
}

impl Reader<'_> {
    /// A located error at `line` (and `col`), about `path` (`[job] option`).
    fn error(
        &self,
        kind: ErrorKind,
        line: u64,
        col: Option<u64>,
        path: Option<String>,
        message: String,
        hint: &str,
    ) -> Error {
        let src = self
            .lines
            .get(line.saturating_sub(1) as usize)
            .map(|l| l.to_string());
        let long = src.as_ref().is_some_and(|s| s.chars().count() > 160);
        Error(Box::new(Inner {
            kind,
            file: self.name.to_string(),
            line: Some(line),
            column: col,
            path,
            message: super::shorten_to(&message, 400),
            hint: Some(hint.to_string()),
            source_line: src.map(|s| super::shorten_to(&s, 160)),
            caret: if long { None } else { col },
            io: None,
        }))
    }

    /// An error about option `o` of job `job`.
    fn bad(&self, job: &str, o: &Opt, kind: ErrorKind, message: String, hint: &str) -> Error {
        self.error(
            kind,
            o.line,
            Some(o.col),
            Some(format!("[{job}] {}", o.key)),
            message,
            hint,
        )
    }

    fn warn(&mut self, line: u64, option: String, message: String) {
        self.warnings.push(Warning {
            file: self.name.to_string(),
            line,
            option,
            message,
        });
    }

    /// The file's sections in order, each with its options.
    fn sections(&self) -> Result<Vec<Section>, Error> {
        let mut out: Vec<Section> = Vec::new();
        for (i, raw) in self.lines.iter().enumerate() {
            let line = i as u64 + 1;
            let t = uncommented(raw);
            if t.is_empty() {
                continue;
            }
            let lead = (raw.len() - raw.trim_start().len()) as u64 + 1;
            if let Some(rest) = t.strip_prefix('[') {
                out.push(self.header(rest, line, lead)?);
                continue;
            }
            let Some(cur) = out.last_mut() else {
                return Err(self.error(
                    ErrorKind::Syntax,
                    line,
                    Some(lead),
                    None,
                    format!("option `{t}` comes before any [section]"),
                    "put options under a [global] or [job] header, as fio requires (fio: \
                     \"option outside of [] job section\")",
                ));
            };
            let (key, value, col) = match t.split_once('=') {
                Some((k, v)) => {
                    let vcol = raw.find('=').map_or(lead, |e| {
                        e as u64 + 2 + (raw[e + 1..].len() - raw[e + 1..].trim_start().len()) as u64
                    });
                    (k.trim(), Some(v.trim().to_string()), vcol)
                }
                None => (t, None, lead),
            };
            if key.is_empty() {
                return Err(self.error(
                    ErrorKind::Syntax,
                    line,
                    Some(lead),
                    None,
                    "no option name before `=`".to_string(),
                    "write option=value, e.g. bs=4k",
                ));
            }
            cur.opts.push(Opt {
                key: key.to_string(),
                value,
                line,
                col,
            });
        }
        Ok(out)
    }

    /// A `[name]` header; `rest` follows the `[`.
    fn header(&self, rest: &str, line: u64, col: u64) -> Result<Section, Error> {
        let Some(end) = rest.find(']') else {
            return Err(self.error(
                ErrorKind::Syntax,
                line,
                Some(col),
                None,
                "unterminated `[`: the section name has no closing `]`".to_string(),
                "write a section header as [name] on a line of its own, e.g. [reader] or \
                 [global]",
            ));
        };
        let name = rest[..end].trim();
        if name.is_empty() || !rest[end + 1..].trim().is_empty() {
            return Err(self.error(
                ErrorKind::Syntax,
                line,
                Some(col),
                None,
                format!("`[{rest}` is not a section header"),
                "a header is a non-empty name in brackets alone on its line: [reader]",
            ));
        }
        Ok(Section {
            name: name.to_string(),
            line,
            opts: Vec::new(),
        })
    }

    /// The jobs: each job section with the `[global]` options before it, then its own.
    fn jobs(&mut self, sections: &[Section]) -> Result<Vec<Job>, Error> {
        let mut global: Vec<Opt> = Vec::new();
        let mut jobs = Vec::new();
        for s in sections {
            if s.name == "global" {
                global.extend(s.opts.iter().cloned());
                continue;
            }
            let opts: Vec<Opt> = global.iter().chain(&s.opts).cloned().collect();
            jobs.push(self.job(s, &opts)?);
        }
        if jobs.is_empty() {
            let line = sections.last().map_or(1, |s| s.line);
            return Err(self.error(
                ErrorKind::Missing,
                line,
                None,
                None,
                "the job file has no job section (only [global] or nothing)".to_string(),
                "add a job, e.g. [reader] with rw=read, bs=4k, size=1g",
            ));
        }
        Ok(jobs)
    }

    /// One job section, its options (globals first) applied in order.
    fn job(&mut self, s: &Section, opts: &[Opt]) -> Result<Job, Error> {
        let mut job = Job::new(&s.name, s.line);
        // fio applies kb_base before the job's other options.
        let mut kb = 1024;
        for o in opts.iter().filter(|o| o.key == "kb_base") {
            kb = match o.value.as_deref() {
                Some("1024") => 1024,
                Some("1000") => 1000,
                _ => {
                    return Err(self.bad(
                        &s.name,
                        o,
                        ErrorKind::BadValue,
                        format!("kb_base must be 1024 or 1000, got {:?}", value_of(o)),
                        "1024 (fio's default): 4k = 4096; 1000: 4k = 4000 and 4KiB = 4096",
                    ));
                }
            };
        }
        for o in opts {
            self.apply(&mut job, o, kb)?;
        }
        self.check_app_options(&mut job)?;
        Ok(job)
    }
}

/// The value as written, or empty.
fn value_of(o: &Opt) -> &str {
    o.value.as_deref().unwrap_or("")
}

mod apply;
mod build;
mod think;
mod values;
