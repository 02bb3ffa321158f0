//! `qsim run --shard i/N` (the shard half of `run`) and `qsim merge`: the command-line side
//! of [`crate::experiment::shard`], which documents the partition and the file.

use super::{OutputArgs, PipeWatch, Progress, RunArgs};
use crate::error::UsageError;
use crate::experiment::shard::{self, MergeError, Shard, ShardSet};
use crate::experiment::{self, RunOptions};
use crate::scenario::Scenario;
use anyhow::Context;
use clap::Args;
use std::io::{self, Write};
use std::path::PathBuf;

/// Arguments of `qsim merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shard files (`qsim run SCENARIO --shard i/N` for i = 0 .. N-1), in any order.
    #[arg(required = true, value_name = "SHARD")]
    pub shards: Vec<PathBuf>,
    /// What to print and write, as `qsim run` takes it.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `qsim run ... --shard i/N`: runs the shard's jobs and writes its shard file.
pub(super) fn shard_cmd(
    sc: &Scenario,
    args: &RunArgs,
    shard: Shard,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    refuse_report_flags(args)?;
    if let Some(path) = &args.shard_out {
        crate::output::check_file("--shard-out", path)?;
        let inputs = super::run_inputs(args);
        let inputs: Vec<(&str, &std::path::Path)> =
            inputs.iter().map(|(w, p)| (*w, p.as_path())).collect();
        crate::output::check_not_input("--shard-out", path, &inputs)?;
    }
    let bar = Progress::new(args.quiet);
    let time_limit = (!args.time_limit.is_zero()).then_some(args.time_limit);
    let bytes = shard::run_shard(sc, shard, args.jobs, time_limit, &|done, total| {
        bar.tick(done, total)
    });
    bar.finish();
    let bytes = bytes.with_context(|| format!("running scenario `{}`", sc.name))?;
    match &args.shard_out {
        Some(path) => crate::output::write_file(path, &bytes, out)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => {
            out.write_all(&bytes)?;
            out.flush()?;
        }
    }
    Ok(())
}

/// `--shard` writes results, not a report: the flags that shape or extend the report belong
/// to `qsim merge`, and `--precision` needs every run's results after each round.
fn refuse_report_flags(args: &RunArgs) -> Result<(), UsageError> {
    if args.precision.is_some() {
        return Err(UsageError {
            message: "--shard cannot be combined with --precision: a precision target decides \
                      after each round, from every run's results, whether to add replications"
                .to_string(),
            hint: "give the shards a fixed -r N (e.g. the count a --precision run reached), \
                   or run --precision in one process"
                .to_string(),
        });
    }
    if let Some(flag) = args.output.first_given() {
        return Err(UsageError {
            message: format!(
                "{flag} shapes the report, which a --shard run does not write (it writes the \
                 shard's results)"
            ),
            hint: format!("give {flag} to `qsim merge` with the shard files"),
        });
    }
    Ok(())
}

/// The log options of the fio job file behind the shards that `qsim merge --fio-dir` cannot
/// honour, one sentence each naming the option: shard files keep fio's logs as sums over
/// 500 ms windows, and no histogram log. (`--log_hist_msec` and `--log_avg_msec` on the
/// command line are refused instead: there the user can drop them.)
fn unhonoured_job_logs(sc: &Scenario, logs: &crate::report::fiodir::LogOptions) -> Vec<String> {
    let mut out = Vec::new();
    let hist = sc.fio_given.get("log_hist_msec").map(str::trim);
    if let Some(v) = hist.filter(|v| *v != "0") {
        out.push(format!(
            "the job file's log_hist_msec={v} is not honoured by qsim merge: shard files keep \
             no histogram log, so no _clat_hist.1.log is written (run in one process for it)"
        ));
    }
    if logs.avg_msec != crate::report::fiodir::DEFAULT_AVG_MSEC {
        let what = if logs.per_io() {
            "one line per I/O"
        } else {
            "other windows"
        };
        out.push(format!(
            "the job file's log_avg_msec={} is not honoured by qsim merge: shard files keep \
             fio's logs as sums over 500 ms windows, not {what}, so the logs are 500 ms \
             averages (run in one process for them)",
            logs.avg_msec
        ));
    }
    out
}

/// `qsim merge SHARD...`: checks the set, folds it and writes what `qsim run` would.
pub(super) fn merge_cmd(args: &MergeArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    if args.output.log_hist_msec.is_some() {
        return Err(UsageError {
            message: "--log_hist_msec is not available with qsim merge: shard files keep fio's \
                      window logs, not its histogram log"
                .to_string(),
            hint: "run the scenario in one process with --fio-dir and --log_hist_msec".to_string(),
        }
        .into());
    }
    if args.output.log_avg_msec.is_some() {
        return Err(UsageError {
            message: "--log_avg_msec is not available with qsim merge: shard files keep fio's \
                      logs as sums over 500 ms windows, not other windows or every I/O"
                .to_string(),
            hint: "run the scenario in one process with --fio-dir and --log_avg_msec".to_string(),
        }
        .into());
    }
    let set = ShardSet::open(&args.shards)?;
    let name = set.scenario().name.clone();
    let mut fio_logs = args.output.fio_logs(set.scenario());
    if args.output.fio_dir.is_some() {
        for w in unhonoured_job_logs(set.scenario(), &fio_logs) {
            eprintln!("warning: {w}");
        }
    }
    fio_logs.avg_msec = crate::report::fiodir::DEFAULT_AVG_MSEC;
    let opts = RunOptions {
        jobs: 1,
        time_limit: set.time_limit(),
        fio_logs,
        ..args.output.options(&name)
    };
    args.output.check_named()?;
    experiment::check_outputs(&opts)?;
    let inputs: Vec<(&'static str, PathBuf)> = args
        .shards
        .iter()
        .map(|p| ("shard file", p.clone()))
        .collect();
    super::check_not_inputs(&opts, &inputs)?;
    let mut watch = PipeWatch {
        inner: out,
        broken: false,
    };
    let result = shard::merge(set, &opts, &mut watch);
    if watch.broken {
        return Err(io::Error::from(io::ErrorKind::BrokenPipe).into());
    }
    match result {
        Ok(()) => Ok(()),
        Err(MergeError::Shards(e)) => Err(e.into()),
        Err(MergeError::Run(e)) => {
            Err(e).with_context(|| format!("running scenario `{name}` (merged from shards)"))
        }
    }
}
