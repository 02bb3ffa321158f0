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
use std::collections::{BTreeMap, HashMap};
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
    /// On how many lines the option got this warning (1 but for repeats).
    pub count: u64,
    /// The last of those lines (`line` is the first).
    pub last_line: u64,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.file, self.line, self.option, self.message
        )?;
        if self.count > 1 {
            write!(
                f,
                " ({} times, lines {} to {})",
                self.count, self.line, self.last_line
            )?;
        }
        Ok(())
    }
}

/// A job file read onto a machine: the scenario to run and the warnings to show.
#[derive(Debug)]
pub struct JobFile {
    /// The machine's scenario with the jobs as its workloads.
    pub scenario: Scenario,
    /// Options qsim does not model, in the order first warned, each once with the number of
    /// lines it was warned on, at most [`MAX_WARNINGS`] (and one saying how many more).
    pub warnings: Vec<Warning>,
}

/// Reads the job file at `path` onto the machine of `machine` (a scenario file or a shipped
/// scenario's name, resolved with the `--set` overrides `sets`).
///
/// The jobs replace the machine's workloads, so the machine is resolved without them (they
/// could only fail against a `--set` that suits the jobs, at a line of the machine's file the
/// user never wrote), and a `--set` of `workloads` is refused: edit the job file instead.
pub fn load(path: &Path, machine: &str, sets: &[String]) -> Result<JobFile, Error> {
    let shown = path.display().to_string();
    if let Some(arg) = sets.iter().find(|a| sets_workloads(a)) {
        return Err(Error::whole_file(
            ErrorKind::Conflict,
            &format!("--set {arg}"),
            format!(
                "a fio job file's jobs are the workloads: `--set {arg}` would edit the \
                 {machine} machine's own workloads, which {shown} replaces"
            ),
            Some(format!("change the job's option in {shown} instead")),
        ));
    }
    let text = super::read(path, &shown)?;
    let base = resolve_machine(machine, sets)?;
    load_str(&shown, &text, base, machine)
}

/// The machine `machine` names (a scenario file or a shipped scenario's name) resolved with
/// the `--set` overrides `sets`, as a job file runs on it: its own workloads, which the jobs
/// replace, swapped for a small placeholder before anything is checked.
///
/// A machine file (a path ending in `.yaml` or `.yml` that holds only machine fields,
/// `qsim calibrate`'s output) is not a scenario: the jobs then run on [`DEFAULT_MACHINE`]'s
/// scenario with its `device:` removed and the machine file as its `machine:`
/// (`machine_file_sets`).
pub fn resolve_machine(machine: &str, sets: &[String]) -> Result<Scenario, Error> {
    let (base, mut machine_sets) = match machine_file_sets(machine) {
        Some(first) => (DEFAULT_MACHINE, first),
        None => (machine, Vec::new()),
    };
    // The machine scenario's published figures are of its own workloads, which the jobs
    // replace: they do not apply (and their `policy:`-less rows would refuse `--flags`).
    machine_sets.push("!published".to_string());
    machine_sets.extend_from_slice(sets);
    machine_sets.push(PLACEHOLDER_WORKLOADS.to_string());
    super::resolve_with_overrides(base, &machine_sets)
}

/// When `machine` names a machine file rather than a scenario, the overrides that put it
/// under [`DEFAULT_MACHINE`]: that scenario's own disk removed, then `machine: FILE`. The
/// default scenario keeps what a machine file does not say (blk-mq, HZ 1000, policy `none`:
/// the jobs reach the raw device, as they do on the default machine; `--set
/// policies=[dm-crypt]` or `--flags` put dm-crypt back), and the machine file's fields win
/// over the rest of it field by field. A file that does not look like a machine file (it has
/// `workloads:`) is read as a scenario, as before.
fn machine_file_sets(machine: &str) -> Option<Vec<String>> {
    if !super::machine::is_machine_file_name(machine) {
        return None;
    }
    let text = std::fs::read_to_string(machine).ok()?;
    if text.lines().any(|l| l.starts_with("workloads")) {
        return None;
    }
    let quoted = serde_json::to_string(machine).ok()?;
    Some(vec!["!device".to_string(), format!("machine={quoted}")])
}

/// The workloads a machine is resolved with under a job file (its own are replaced by the
/// jobs): one small job that fits any machine.
const PLACEHOLDER_WORKLOADS: &str = "workloads=[{kind: fio, bs: 4KiB, size: 4KiB}]";

/// Whether a `--set` argument edits (or removes) `workloads`.
fn sets_workloads(arg: &str) -> bool {
    let path = arg.split('=').next().unwrap_or("").trim();
    let path = path.strip_prefix('!').unwrap_or(path).trim();
    path == "workloads" || path.starts_with("workloads[") || path.starts_with("workloads.")
}

/// Reads job-file text (`name` names it in errors, its stem names the scenario) onto `base`,
/// the machine's scenario (`machine` names it in the description).
pub fn load_str(name: &str, text: &str, base: Scenario, machine: &str) -> Result<JobFile, Error> {
    // A UTF-8 byte-order mark (some Windows editors write one) is not part of the first line.
    // fio 3.33 does not skip it (parse_jobs_ini strips only blanks before it looks for `[`)
    // and refuses the first line as an option outside any section; qsim skips it, since the
    // mark is invisible in an editor and the file is otherwise fio's.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut r = Reader {
        name,
        text,
        machine,
        warnings: Warnings::new(name),
    };
    let sections = r.sections()?;
    let jobs = r.jobs(&sections)?;
    let mut scenario = r.scenario(&jobs, base, machine)?;
    scenario.fio_given = given(&sections);
    Ok(JobFile {
        scenario,
        warnings: r.warnings.into_list(),
    })
}

/// Reads job-file `text` (named `name`) onto the default machine: `Ok` when it is read or
/// refused at a line of the file, `Err` saying what is wrong otherwise (a refusal with no
/// line, or one past the file's end). The fuzz target `fio` and the torture run use it.
pub fn read_checked(name: &str, text: &str) -> Result<(), String> {
    use std::sync::OnceLock;
    static MACHINE: OnceLock<Scenario> = OnceLock::new();
    let machine = MACHINE.get_or_init(|| {
        resolve_machine(DEFAULT_MACHINE, &[]).expect("the default machine resolves")
    });
    match load_str(name, text, machine.clone(), DEFAULT_MACHINE) {
        Ok(job) => {
            let _ = super::describe(&job.scenario);
            for w in &job.warnings {
                let _ = w.to_string();
            }
            Ok(())
        }
        Err(e) => {
            let shown = e.to_string();
            let lines = text
                .strip_prefix('\u{feff}')
                .unwrap_or(text)
                .lines()
                .count()
                .max(1);
            match e.line() {
                Some(l) if l >= 1 && l as usize <= lines => Ok(()),
                other => Err(format!(
                    "the job file was refused at line {other:?} of {lines}:\n{shown}"
                )),
            }
        }
    }
}

/// The options the file gives as fio's JSON lists them: the `[global]` sections' before the
/// first job, then that job's own; the last of each name kept, a bare flag with `""`.
fn given(sections: &[Section]) -> super::FioGiven {
    fn add(list: &mut Vec<(String, String)>, opts: &[Opt]) {
        for o in opts {
            let value = o.value.clone().unwrap_or_default();
            match list.iter_mut().find(|(k, _)| *k == o.key) {
                Some(entry) => entry.1 = value,
                None => list.push((o.key.clone(), value)),
            }
        }
    }
    let mut g = super::FioGiven::default();
    for s in sections {
        if s.name == "global" {
            add(&mut g.global, &s.opts);
        } else {
            add(&mut g.job, &s.opts);
            break;
        }
    }
    g
}

/// One `key[=value]` line.
#[derive(Debug, Clone)]
struct Opt {
    key: String,
    value: Option<String>,
    line: u64,
    /// 1-based column of the value (of the key when there is none).
    col: u64,
    /// Whether it is written in a `[global]` section (its warnings then name `[global]`, and
    /// are counted once however many jobs inherit it).
    global: bool,
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
    /// `read_iolog=`: the job replays this fio iolog instead of generating I/O.
    read_iolog: Option<String>,
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
            read_iolog: None,
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

/// The parser state: the file's name and text, the machine's name, and the warnings so far.
struct Reader<'a> {
    name: &'a str,
    text: &'a str,
    machine: &'a str,
    warnings: Warnings,
}

/// The text of a line before its comment (`;` or `#`), trimmed.
fn uncommented(raw: &str) -> &str {
    let cut = raw.find([';', '#']).unwrap_or(raw.len());
    raw[..cut].trim()
}

impl<'a> Reader<'a> {
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
        let src = self.source_line(line).map(str::to_string);
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
        self.warnings.push(line, option, message);
    }

    /// Line `line` (1-based) of the file, for an error's excerpt (looked up only then: the
    /// reader keeps no table of lines).
    fn source_line(&self, line: u64) -> Option<&'a str> {
        let i = usize::try_from(line.checked_sub(1)?).ok()?;
        self.text.lines().nth(i)
    }

    /// The jobs: each job section with the `[global]` options before it, then its own.
    ///
    /// Each `[global]` option is applied in full once, to the first job after it (which checks
    /// it and warns about it); later jobs inherit only the last occurrence of each global
    /// option, which leaves a job as applying all of them would, since every option sets its
    /// fields whatever they held. So a `[global]` of 20,000 lines costs 20,000 applications
    /// once, then one per distinct option and job, never lines × jobs.
    fn jobs(&mut self, sections: &[Section]) -> Result<Vec<Job>, Error> {
        let mut pending: Vec<&Opt> = Vec::new();
        let mut inherited: Vec<&Opt> = Vec::new();
        let mut jobs = Vec::new();
        for s in sections {
            if s.name == "global" {
                pending.extend(&s.opts);
                continue;
            }
            inherited = last_of_each(inherited, &pending);
            let opts = pending.iter().chain(&inherited).copied().chain(&s.opts);
            jobs.push(self.job(s, opts)?);
            pending.clear();
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
    fn job<'o>(
        &mut self,
        s: &Section,
        opts: impl Iterator<Item = &'o Opt> + Clone,
    ) -> Result<Job, Error> {
        let mut job = Job::new(&s.name, s.line);
        // fio applies kb_base before the job's other options.
        let mut kb = 1024;
        for o in opts.clone().filter(|o| o.key == "kb_base") {
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

/// The options of `old` then `new` (in file order) with only the last occurrence of each
/// option name kept.
fn last_of_each<'o>(old: Vec<&'o Opt>, new: &[&'o Opt]) -> Vec<&'o Opt> {
    let last: HashMap<&str, usize> = new
        .iter()
        .enumerate()
        .map(|(i, o)| (o.key.as_str(), i))
        .collect();
    let mut out: Vec<&Opt> = old
        .into_iter()
        .filter(|o| !last.contains_key(o.key.as_str()))
        .collect();
    out.extend(
        new.iter()
            .enumerate()
            .filter(|(i, o)| last[o.key.as_str()] == *i)
            .map(|(_, o)| *o),
    );
    out
}

/// How a warning names option `o` of job `job`: `[job] key`, or `[global] key` for an option
/// written in a `[global]` section (every job after it inherits it; the warning is one).
fn label(job: &str, o: &Opt) -> String {
    let section = if o.global { "global" } else { job };
    format!("[{section}] {}", o.key)
}

/// The value as written, or empty.
fn value_of(o: &Opt) -> &str {
    o.value.as_deref().unwrap_or("")
}

mod apply;
mod build;
mod parse;
mod think;
mod values;
mod warnings;

pub use parse::MAX_OPTION_LINES;
pub use warnings::MAX_WARNINGS;
use warnings::Warnings;
