//! `qsim run --shard i/N` (the shard half of `run`) and `qsim merge`: the command-line side
//! of [`crate::experiment::shard`], which documents the partition and the file.

use super::{Format, PipeWatch, Progress, RunArgs, plots_dir};
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
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Normal)]
    pub format: Format,
    /// After the report, print each policy's run invariants and exit 1 if any fails, as
    /// `qsim run --check-invariants` does.
    #[arg(long)]
    pub check_invariants: bool,
    /// Also write the full results as JSON, as `qsim run --json FILE` does.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write the replication summary as CSV, as `qsim run --csv FILE` does.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Also write the replication summary as Markdown tables, as `qsim run --markdown FILE`.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Draw the plots into DIR, by default plots/SCENARIO/, as `qsim run --plots` does.
    #[arg(long, value_name = "DIR", num_args = 0..=1)]
    pub plots: Option<Option<PathBuf>>,
    /// Also write fio's files for fio-plot into DIR, as `qsim run --fio-dir DIR` does.
    #[arg(long, value_name = "DIR")]
    pub fio_dir: Option<PathBuf>,
    /// After the text report, print the plain-text pictures, as `qsim run --ascii` does.
    #[arg(long)]
    pub ascii: bool,
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
    let given = [
        ("--format json", args.format == Format::Json),
        ("--json", args.json.is_some()),
        ("--csv", args.csv.is_some()),
        ("--markdown", args.markdown.is_some()),
        ("--plots", args.plots.is_some()),
        ("--fio-dir", args.fio_dir.is_some()),
        ("--ascii", args.ascii),
        ("--check-invariants", args.check_invariants),
    ];
    if let Some((flag, _)) = given.iter().find(|(_, on)| *on) {
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

/// `qsim merge SHARD...`: checks the set, folds it and writes what `qsim run` would.
pub(super) fn merge_cmd(args: &MergeArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let set = ShardSet::open(&args.shards)?;
    let name = set.scenario().name.clone();
    let opts = RunOptions {
        format: args.format.name().to_string(),
        jobs: 1,
        check_invariants: args.check_invariants,
        precision: None,
        json_file: args.json.clone(),
        csv_file: args.csv.clone(),
        markdown_file: args.markdown.clone(),
        time_limit: set.time_limit(),
        plots_dir: args.plots.as_ref().map(|d| plots_dir(d.as_deref(), &name)),
        fio_dir: args.fio_dir.clone(),
        ascii: args.ascii,
    };
    experiment::check_outputs(&opts)?;
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
