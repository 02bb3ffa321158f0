//! Beyond one machine: `qsim run --shard i/N` runs a share of a scenario's jobs and writes
//! them to a shard file; `qsim merge` folds the shard files into the report one `qsim run`
//! would have printed, byte for byte.
//!
//! # The partition
//!
//! A plan's jobs are its (run, replication) pairs in the order [`super::run_replicated`]
//! folds them ([`super::planned_jobs`]: run-major, replication 0 first; a variant's or a
//! sweep point's runs are more runs of the same plan). Job `k` belongs to shard `k mod N`, so
//! every shard gets an even share of every run's replications whatever the shard count, and
//! the partition depends on nothing but `k` and `N`.
//!
//! # The shard file
//!
//! JSON Lines, one object per line. Line 1 is the header: the format and qsim's version,
//! `i` and `N`, the plan's job count, the resolved scenario (the `Scenario` the jobs ran:
//! file or shipped scenario, fio job file and machine, `--set`, `--duration`, `--seed` and
//! `-r` all applied), the wall-clock limit, and a fingerprint of all of those but `i`. Each
//! further line is one of the shard's jobs, in increasing `k`: its run and replication, its
//! observations, its broken invariants and, for replication 0, every invariant. Replication
//! 0 always carries its timeline, so `qsim merge` can draw plots or write `--json` whether or
//! not the shards were told; merge drops it when its outputs want none, as a run would not
//! have recorded it. Statistics are written in their exact form ([`crate::stats::exact`]:
//! every counter, `f64` state as bit patterns) and other floats through serde_json's
//! `float_roundtrip`, so every number reads back bit for bit.
//!
//! # Merging
//!
//! [`merge`] checks that the files share one fingerprint and hold shards `0..N` once each,
//! then reads job `k` from shard `k mod N` for `k` in order and folds it exactly as
//! [`super::run_replicated`] does (the same fold), holding one job at a time
//! beside the fold: no more memory than the run in one process. The report and exports go
//! through the same `report_replicated`.

use super::{Error, Fold, RunOptions, parallel_fold, plan, planned_jobs, run_one};
use crate::error::UsageError;
use crate::model::base::obs::RunObs;
use crate::model::observe::invariants::InvariantReport;
use crate::model::{RunResult, base::obs::IssueTrace, crypt::policy};
use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// What line 1 of a shard file says it is.
pub const FORMAT: &str = "qsim-shard";
/// The shard file layout's version; a file of another version is refused.
pub const FORMAT_VERSION: u32 = 1;
/// The longest line `qsim merge` reads (a job with its timeline is a few MiB at most).
const MAX_LINE: u64 = 256 << 20;

/// Shard `index` of `count` (`--shard i/N`, `0 <= i < N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// `i`.
    pub index: usize,
    /// `N`.
    pub count: usize,
}

impl Shard {
    /// Parses `i/N`.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || {
            format!(
                "`{text}` is not a shard\n  hint: write i/N with 0 <= i < N, e.g. 0/4 for the \
                 first of 4 shards"
            )
        };
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count || count > MAX_SHARDS {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Whether job `k` of the plan belongs to this shard.
    pub fn owns(&self, k: usize) -> bool {
        k % self.count == self.index
    }
}

/// The most shards a run may be cut into.
pub const MAX_SHARDS: usize = 100_000;

/// Line 1 of a shard file.
#[derive(Debug, Serialize, Deserialize)]
struct Header {
    /// [`FORMAT`].
    format: String,
    /// [`FORMAT_VERSION`].
    version: u32,
    /// The qsim version that wrote it.
    qsim: String,
    /// FNV-1a 64 of everything below but `shard`, as 16 hex digits.
    fingerprint: String,
    /// `i`.
    shard: usize,
    /// `N`.
    shards: usize,
    /// Jobs in the whole plan (every shard's).
    jobs: usize,
    /// `--time-limit` in ns (`None`: off).
    time_limit_ns: Option<u64>,
    /// The resolved scenario the jobs ran.
    scenario: Scenario,
}

/// One job's line.
#[derive(Debug, Serialize, Deserialize)]
struct JobLine {
    /// Its index `k` in the plan's jobs.
    job: usize,
    /// Its run (index into the plan).
    run: usize,
    /// Its replication.
    rep: u64,
    /// What it measured.
    obs: RunObs,
    /// Its broken invariants.
    violations: Vec<String>,
    /// Every invariant (replication 0 only).
    invariants: Option<InvariantReport>,
}

/// The fingerprint of a shard set: FNV-1a 64 over the JSON of what makes the shards one run.
fn fingerprint(sc: &Scenario, jobs: usize, time_limit_ns: Option<u64>) -> String {
    #[derive(Serialize)]
    struct Input<'a> {
        format: &'a str,
        version: u32,
        qsim: &'a str,
        jobs: usize,
        time_limit_ns: Option<u64>,
        scenario: &'a Scenario,
    }
    let input = Input {
        format: FORMAT,
        version: FORMAT_VERSION,
        qsim: env!("CARGO_PKG_VERSION"),
        jobs,
        time_limit_ns,
        scenario: sc,
    };
    let bytes = serde_json::to_vec(&input).expect("a scenario serialises");
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// Runs shard `shard` of the scenario's jobs over `jobs` threads (0 = all cores) and returns
/// its shard file. `time_limit` is the wall-clock valve of `qsim run`, from now;
/// `progress(done, total)` counts this shard's jobs.
pub fn run_shard(
    sc: &Scenario,
    shard: Shard,
    jobs: usize,
    time_limit: Option<std::time::Duration>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<u8>, Error> {
    let runs = plan(sc);
    let infos = runs
        .iter()
        .map(|r| policy::find(r.policy).ok_or_else(|| Error::UnknownPolicy(r.policy.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    let all = planned_jobs(&runs);
    let mine: Vec<usize> = (0..all.len()).filter(|&k| shard.owns(k)).collect();
    let time_limit_ns = time_limit.map(|t| t.as_nanos().min(u128::from(u64::MAX)) as u64);
    let header = Header {
        format: FORMAT.to_string(),
        version: FORMAT_VERSION,
        qsim: env!("CARGO_PKG_VERSION").to_string(),
        fingerprint: fingerprint(sc, all.len(), time_limit_ns),
        shard: shard.index,
        shards: shard.count,
        jobs: all.len(),
        time_limit_ns,
        scenario: sc.clone(),
    };
    let mut buf = serde_json::to_vec(&header).map_err(std::io::Error::from)?;
    check_readable(&buf, &header.fingerprint)?;
    buf.push(b'\n');
    let deadline = time_limit.map(|t| std::time::Instant::now() + t);
    let finished = AtomicUsize::new(0);
    let mut failed = None;
    parallel_fold(
        mine.len(),
        jobs,
        |m| {
            let (i, rep) = all[mine[m]];
            // Replication 0 always records its timeline and fio's log windows: merge decides
            // whether they are wanted.
            let mut first = crate::model::Recording::default();
            if rep == 0 {
                first = crate::model::Recording::timeline();
                first.fio_log = true;
            }
            let r = run_one(
                &runs[i],
                infos[i],
                rep,
                first,
                crate::model::Valve::until(deadline),
            );
            progress(finished.fetch_add(1, Ordering::Relaxed) + 1, mine.len());
            r
        },
        |m, r| {
            let (run, rep) = all[mine[m]];
            let line = JobLine {
                job: mine[m],
                run,
                rep,
                obs: r.obs,
                violations: r.violations,
                invariants: (rep == 0).then_some(r.invariants),
            };
            let written =
                crate::stats::exact::with_exact(|| serde_json::to_writer(&mut buf, &line));
            match written {
                Ok(()) => buf.push(b'\n'),
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        },
    );
    match failed {
        Some(e) => Err(std::io::Error::from(e).into()),
        None => Ok(buf),
    }
}

/// Checks that a shard header reads back to the scenario it was written from (JSON has no
/// non-finite numbers; a value it cannot carry would otherwise surface only at the merge).
fn check_readable(header: &[u8], fingerprint: &str) -> Result<(), Error> {
    let back: Header = serde_json::from_slice(header).map_err(std::io::Error::from)?;
    if self::fingerprint(&back.scenario, back.jobs, back.time_limit_ns) != fingerprint {
        return Err(std::io::Error::other(
            "the scenario does not read back from its shard header as written",
        )
        .into());
    }
    Ok(())
}

/// `file` (a shard file's bytes) with its header's fingerprint recomputed, if line 1 reads as a
/// header; otherwise `file` unchanged. The fingerprint tells shards of different runs apart;
/// it is no seal against editing, and the fuzzer ([`crate::fuzzing::shard`]) and the torture
/// generator use this so that an edited count reaches the checks behind the fingerprint.
pub fn reseal(file: &[u8]) -> Vec<u8> {
    let end = file.iter().position(|&b| b == b'\n').unwrap_or(file.len());
    let Ok(mut header) = serde_json::from_slice::<Header>(&file[..end]) else {
        return file.to_vec();
    };
    header.fingerprint = fingerprint(&header.scenario, header.jobs, header.time_limit_ns);
    let Ok(mut out) = serde_json::to_vec(&header) else {
        return file.to_vec();
    };
    out.extend_from_slice(&file[end..]);
    out
}

/// Why `qsim merge` failed: its shard files (a usage error, exit 2) or the run they hold.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// A shard file is missing, repeated, from another run, unreadable or truncated.
    #[error(transparent)]
    Shards(#[from] UsageError),
    /// The merged run failed as `qsim run` would have (a broken invariant, the time limit,
    /// an export).
    #[error(transparent)]
    Run(#[from] Error),
}

/// One shard file being read.
struct ShardFile {
    path: PathBuf,
    reader: Box<dyn BufRead>,
    /// Lines read so far.
    line: usize,
}

impl ShardFile {
    /// Opens `path` (a FIFO must open within [`crate::scenario::read_timeout`]) and reads its
    /// header.
    fn open(path: &Path) -> Result<(ShardFile, Header), UsageError> {
        let file = crate::scenario::open_with_deadline(path).map_err(|e| UsageError {
            message: match e.kind() {
                std::io::ErrorKind::TimedOut => e.to_string(),
                _ => format!("cannot read {}: {e}", path.display()),
            },
            hint: match e.kind() {
                std::io::ErrorKind::TimedOut => "start the shard's writer first (`qsim run ... \
                                                 --shard i/N > FIFO &`), or give a regular file"
                    .to_string(),
                _ => "give the files `qsim run SCENARIO --shard i/N` wrote".to_string(),
            },
        })?;
        ShardFile::read(path, Box::new(std::io::BufReader::new(file)))
    }

    /// Reads the header of the shard file `reader`, which `path` names in errors, and checks
    /// every count it gives against its bound before anything is allocated by it.
    fn read(path: &Path, reader: Box<dyn BufRead>) -> Result<(ShardFile, Header), UsageError> {
        let mut f = ShardFile {
            path: path.to_path_buf(),
            reader,
            line: 0,
        };
        let text = f.next_line()?.ok_or_else(|| f.error("the file is empty"))?;
        let header: Header = serde_json::from_str(&text)
            .map_err(|e| f.error(&format!("not a qsim shard file (no shard header: {e})")))?;
        if header.format != FORMAT || header.version != FORMAT_VERSION {
            return Err(f.error(&format!(
                "a `{}` file of version {}, not a {FORMAT} file of version {FORMAT_VERSION}",
                header.format, header.version
            )));
        }
        if header.qsim != env!("CARGO_PKG_VERSION") {
            return Err(f.error(&format!(
                "written by qsim {}, this is qsim {}; run every shard and the merge with one \
                 qsim version",
                header.qsim,
                env!("CARGO_PKG_VERSION")
            )));
        }
        let own = fingerprint(&header.scenario, header.jobs, header.time_limit_ns);
        if own != header.fingerprint {
            return Err(f.error("the header does not match its own fingerprint (edited?)"));
        }
        f.check_counts(&header)?;
        Ok((f, header))
    }

    /// Checks the header's counts against their bounds: `shards` against [`MAX_SHARDS`] (the
    /// merge holds a slot per shard), `shard` below it, and the scenario's runs and
    /// replications against what one `qsim run` may do (the merge plans every job).
    fn check_counts(&self, h: &Header) -> Result<(), UsageError> {
        if h.shards == 0 || h.shards > MAX_SHARDS {
            return Err(self.error(&format!(
                "the header says `shards: {}`, but a run is cut into 1 to {MAX_SHARDS} shards \
                 (edited?)",
                h.shards
            )));
        }
        if h.shard >= h.shards {
            return Err(self.error(&format!(
                "the header says shard {} of {}, but shards are numbered 0 to {} (edited?)",
                h.shard,
                h.shards,
                h.shards - 1
            )));
        }
        if let Err(e) = crate::scenario::check_work(&h.scenario, None, "the header") {
            return Err(self.error(&format!("{} (edited?)", e.message())));
        }
        Ok(())
    }

    /// The next line, without its newline (`None` at the end of the file).
    fn next_line(&mut self) -> Result<Option<String>, UsageError> {
        let mut bytes = Vec::new();
        let n = (&mut self.reader)
            .take(MAX_LINE)
            .read_until(b'\n', &mut bytes)
            .map_err(|e| self.error(&format!("cannot read: {e}")))?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        if bytes.last() != Some(&b'\n') {
            return Err(self.error("the line breaks off: the file is truncated"));
        }
        bytes.pop();
        String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| self.error("not UTF-8 text"))
    }

    /// A usage error located in this file (at the line last read, if any).
    fn error(&self, what: &str) -> UsageError {
        let at = match self.line {
            0 => String::new(),
            n => format!(": line {n}"),
        };
        UsageError {
            message: format!("{}{at}: {what}", self.path.display()),
            hint: "give every file of one `qsim run ... --shard i/N` set, whole and unchanged \
                   (rerun a shard whose file is damaged)"
                .to_string(),
        }
    }

    /// The next job line, which must be job `k` = (run, rep).
    fn next_job(&mut self, k: usize, (run, rep): (usize, u64)) -> Result<JobLine, UsageError> {
        let Some(text) = self.next_line()? else {
            return Err(self.error(&format!(
                "the file ends where job {k} was due: it is truncated"
            )));
        };
        let job: JobLine =
            serde_json::from_str(&text).map_err(|e| self.error(&format!("not a job line: {e}")))?;
        if (job.job, job.run, job.rep) != (k, run, rep) {
            return Err(self.error(&format!(
                "job {} (run {}, replication {}) where job {k} (run {run}, replication {rep}) \
                 was due",
                job.job, job.run, job.rep
            )));
        }
        if rep == 0 && job.invariants.is_none() {
            return Err(self.error("replication 0 without its invariants"));
        }
        if let Some(t) = &job.obs.timeline {
            // Its grid sizes every series the plots and pictures walk.
            crate::plot::data::check_timeline(t, "obs.timeline")
                .map_err(|e| self.error(&format!("the job's timeline: {e}")))?;
        }
        Ok(job)
    }
}

/// A complete set of shard files, in shard order, checked to come from one run.
pub struct ShardSet {
    files: Vec<ShardFile>,
    scenario: Scenario,
    jobs: usize,
    time_limit: Option<std::time::Duration>,
}

impl ShardSet {
    /// Opens every file and checks the set: one fingerprint, one shard count, and shards
    /// `0..N` each exactly once. Errors name the file and what is wrong or missing.
    pub fn open(paths: &[PathBuf]) -> Result<ShardSet, UsageError> {
        let mut opened = Vec::new();
        for p in paths {
            opened.push(ShardFile::open(p)?);
        }
        ShardSet::check(opened)
    }

    /// [`ShardSet::open`]'s checks of the opened files and their headers.
    fn check(opened: Vec<(ShardFile, Header)>) -> Result<ShardSet, UsageError> {
        let Some((first, h0)) = opened.first() else {
            return Err(UsageError {
                message: "no shard files given".to_string(),
                hint: "give the files of `qsim run SCENARIO --shard i/N`, i = 0 .. N-1".into(),
            });
        };
        let n = h0.shards;
        let mut slots: Vec<Option<ShardFile>> = (0..n).map(|_| None).collect();
        for (f, h) in &opened {
            if h.fingerprint != h0.fingerprint {
                return Err(f.error(&format!(
                    "from another run than {} (fingerprint {}, not {}): the scenario, --set, \
                     --duration, --seed, -r or --time-limit differ",
                    first.path.display(),
                    h.fingerprint,
                    h0.fingerprint
                )));
            }
            if h.shards != n {
                return Err(f.error(&format!(
                    "shard {}/{}, but {} is one of {n} shards",
                    h.shard,
                    h.shards,
                    first.path.display()
                )));
            }
        }
        let (sc, jobs, limit) = (h0.scenario.clone(), h0.jobs, h0.time_limit_ns);
        for (f, h) in opened {
            if let Some(other) = &slots[h.shard] {
                if other.path == f.path {
                    return Err(f.error("given twice"));
                }
                return Err(f.error(&format!(
                    "shard {}/{n} again: {} is shard {}/{n} too",
                    h.shard,
                    other.path.display(),
                    h.shard
                )));
            }
            slots[h.shard] = Some(f);
        }
        let missing: Vec<usize> = (0..n).filter(|&i| slots[i].is_none()).collect();
        if !missing.is_empty() {
            return Err(UsageError {
                message: format!(
                    "{} missing: a merge needs all {n} shards of the run",
                    missing_list(&missing, n)
                ),
                hint: format!(
                    "run `qsim run ... --shard i/{n}` for each missing i and merge again"
                ),
            });
        }
        Ok(ShardSet {
            files: slots.into_iter().flatten().collect(),
            scenario: sc,
            jobs,
            time_limit: limit.map(std::time::Duration::from_nanos),
        })
    }

    /// Reads a shard set from readers in memory, each named by its path in errors (for the
    /// fuzzer, [`crate::fuzzing::shard`]): the checks of [`ShardSet::open`] without the files.
    pub fn from_readers(files: Vec<(PathBuf, Box<dyn BufRead>)>) -> Result<ShardSet, UsageError> {
        let opened = files
            .into_iter()
            .map(|(path, reader)| ShardFile::read(&path, reader))
            .collect::<Result<Vec<_>, _>>()?;
        ShardSet::check(opened)
    }

    /// The scenario the shards ran.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The shards' `--time-limit` (`None`: off).
    pub fn time_limit(&self) -> Option<std::time::Duration> {
        self.time_limit
    }
}

/// How many missing shards an error lists by name before it counts the rest.
const MISSING_LISTED: usize = 10;

/// `shard 2/4`, or `shards 3/9, 5/9, 7/9` (the first [`MISSING_LISTED`], then `… and N more`).
fn missing_list(missing: &[usize], n: usize) -> String {
    let named: Vec<String> = missing
        .iter()
        .take(MISSING_LISTED)
        .map(|i| format!("{i}/{n}"))
        .collect();
    let more = missing.len().saturating_sub(MISSING_LISTED);
    format!(
        "shard{} {}{}",
        if missing.len() > 1 { "s" } else { "" },
        named.join(", "),
        match more {
            0 => String::new(),
            more => format!(" … and {more} more"),
        }
    )
}

/// Folds a complete shard set as `qsim run` folds its jobs and writes the report and the
/// exports `opts` asks for (its `time_limit` is the shards'), exactly as `qsim run` would.
pub fn merge(mut set: ShardSet, opts: &RunOptions, out: &mut dyn Write) -> Result<(), MergeError> {
    let runs = plan(&set.scenario);
    let jobs = planned_jobs(&runs);
    let n = set.files.len();
    if jobs.len() != set.jobs {
        return Err(set.files[0]
            .error(&format!(
                "{} jobs, but its scenario plans {}",
                set.jobs,
                jobs.len()
            ))
            .into());
    }
    let timeline = super::wants_timeline(opts);
    let mut fold = Fold::new(runs.len());
    for (k, &(run, rep)) in jobs.iter().enumerate() {
        let line = set.files[k % n].next_job(k, (run, rep))?;
        let mut obs = line.obs;
        if !timeline {
            // As a run whose outputs draw no timeline would not have recorded it.
            obs.timeline = None;
        }
        if opts.fio_dir.is_none() {
            // Likewise fio's log windows, kept only for --fio-dir.
            obs.fio_log = None;
        }
        let invariants = line.invariants.unwrap_or_else(|| InvariantReport {
            end: crate::engine::SimTime::ZERO,
            little: Vec::new(),
            conservation: Vec::new(),
        });
        let result = RunResult {
            obs,
            violations: line.violations,
            invariants,
            issue_trace: IssueTrace::default(),
            trace: None,
            io_sink: None,
        };
        fold.add(run, rep, result);
    }
    for f in &mut set.files {
        if f.next_line()?.is_some() {
            return Err(f.error("more lines than the shard's jobs").into());
        }
    }
    let opts = RunOptions {
        time_limit: set.time_limit,
        ..opts.clone()
    };
    super::report_replicated(&set.scenario, &opts, fold.finish(None), timeline, out)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_names_parse_and_every_job_has_exactly_one_shard() {
        assert_eq!(Shard::parse("0/4"), Ok(Shard { index: 0, count: 4 }));
        assert_eq!(Shard::parse(" 3 / 4 "), Ok(Shard { index: 3, count: 4 }));
        for bad in ["4/4", "0/0", "1", "-1/4", "a/4", "1/b", "", "1/2/3"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        for n in [1, 2, 3, 7] {
            let shards: Vec<Shard> = (0..n).map(|index| Shard { index, count: n }).collect();
            let mut sizes = vec![0; n];
            for k in 0..50 {
                let owners: Vec<usize> = (0..n).filter(|&i| shards[i].owns(k)).collect();
                assert_eq!(owners, [k % n], "job {k} of {n} shards");
                sizes[k % n] += 1;
            }
            let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            assert!(hi - lo <= 1, "{sizes:?}: an even share each");
        }
    }

    /// A 1 s scenario with two policies, `reps` replications each.
    fn tiny(reps: u32) -> Scenario {
        crate::scenario::load_str(
            "t.yaml",
            &format!(
                "duration: 1s\nreplications: {reps}\ndevice: {{ kind: generic, service: 1ms }}\n\
                 policies: [none, fifo]\nworkloads:\n  - {{ kind: fio, rw: randread, iodepth: 2 }}\n"
            ),
        )
        .unwrap()
    }

    /// The report of `sc` in one process, and through `n` shard files and a merge.
    fn one_and_merged(sc: &Scenario, n: usize, opts: &RunOptions) -> (Vec<u8>, Vec<u8>) {
        let mut one = Vec::new();
        super::super::run_and_report(sc, opts, &mut one, &|_, _| {}).unwrap();
        let dir = std::env::temp_dir().join(format!("qsim-shard-unit-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut paths = Vec::new();
        for index in (0..n).rev() {
            let bytes = run_shard(sc, Shard { index, count: n }, 2, None, &|_, _| {}).unwrap();
            let p = dir.join(format!("s{index}"));
            std::fs::write(&p, bytes).unwrap();
            paths.push(p);
        }
        let mut merged = Vec::new();
        merge(ShardSet::open(&paths).unwrap(), opts, &mut merged).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        (one, merged)
    }

    #[test]
    fn merged_shards_fold_to_the_report_of_one_process() {
        let sc = tiny(3);
        assert_eq!(planned_jobs(&plan(&sc)).len(), 6);
        for format in ["normal", "json"] {
            let opts = RunOptions {
                format: format.to_string(),
                jobs: 1,
                check_invariants: true,
                ..RunOptions::default()
            };
            // 7 shards: more shards than jobs leaves one with none.
            for n in [1, 2, 4, 7] {
                let (one, merged) = one_and_merged(&sc, n, &opts);
                assert!(one == merged, "{format}, {n} shards");
            }
        }
    }

    #[test]
    fn every_shipped_scenario_reads_back_as_written() {
        for s in crate::scenario::shipped() {
            let sc = s.load().unwrap();
            let text = serde_json::to_string(&sc).unwrap();
            let back: Scenario = serde_json::from_str(&text).unwrap_or_else(|e| {
                let at = e.column().saturating_sub(80);
                panic!("{}: {e}: {}", s.name, &text[at..(at + 120).min(text.len())])
            });
            assert_eq!(serde_json::to_string(&back).unwrap(), text, "{}", s.name);
        }
    }

    /// Found by the torture cases' shards: the `null` cipher on an async engine gives the
    /// engine an infinite rate, which JSON writes as `null`, and the header did not read
    /// back (every `--shard` run of such a scenario failed).
    #[test]
    fn an_infinite_async_engine_rate_reads_back() {
        let sc = crate::scenario::load_str(
            "t.yaml",
            "duration: 1s\ndevice: { kind: nvme }\ncrypt: { cipher: \"null\", engine: async }\n\
             workloads:\n  - kind: fio\n",
        )
        .unwrap();
        let bytes = run_shard(&sc, Shard { index: 0, count: 1 }, 1, None, &|_, _| {}).unwrap();
        let set = ShardSet::from_readers(vec![(
            PathBuf::from("s0"),
            Box::new(std::io::Cursor::new(bytes)),
        )])
        .unwrap();
        assert!(matches!(
            set.scenario().crypt.engine,
            crate::model::base::config::CryptoEngine::Async { rate, .. } if rate.is_infinite()
        ));
    }

    #[test]
    fn observations_read_back_bit_for_bit() {
        let sc = tiny(1);
        let info = policy::find("fifo").unwrap();
        let r =
            crate::model::run_replication_with(&sc, info, 0, crate::model::Recording::timeline());
        let text = crate::stats::exact::with_exact(|| serde_json::to_string(&r.obs)).unwrap();
        let back: RunObs = serde_json::from_str(&text).unwrap();
        let again = crate::stats::exact::with_exact(|| serde_json::to_string(&back)).unwrap();
        assert_eq!(again, text);
        assert!(back.timeline.is_some());
        assert!(back.dirs[0].clat == r.obs.dirs[0].clat);
        // The report form is untouched outside the exact mode.
        let report = serde_json::to_value(&r.obs.dirs[0].clat).unwrap();
        assert!(report.get("mean_ns").is_some() && report.get("m2").is_none());
        let inv = serde_json::to_string(&r.invariants).unwrap();
        let back: InvariantReport = serde_json::from_str(&inv).unwrap();
        assert_eq!(back, r.invariants);
    }
}
