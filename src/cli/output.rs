//! `qsim run`'s output flags ([`OutputArgs`]): the report's format, the exports, the plots and
//! fio's files.

use super::{Format, plots_dir};
use crate::experiment::RunOptions;
use crate::report::fiodir::{DEFAULT_AVG_MSEC, LogOptions};
use crate::scenario::Scenario;
use clap::Args;
use std::path::PathBuf;

/// The flags that choose what `qsim run` (and `qsim merge`, which takes the same) prints and
/// writes: the report's format, the invariant tables, the exports, the plots, fio's files and
/// the plain-text pictures.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Normal)]
    pub format: Format,
    /// After the report, print each policy's run invariants (Little's law per queue and for the
    /// whole system, conservation of requests, tags and bounce pages, CFQ's count of waiting
    /// requests, the CPU books, the clock) and exit 1 if any fails. With --format json the
    /// tables go to stderr.
    #[arg(long)]
    pub check_invariants: bool,
    /// Also write the full results as JSON: fio-compatible json+ jobs (one per run, pooled over
    /// replications) plus qsim's summary and plot data (`qsim plot` reads it).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write the replication summary as CSV (hyperfine's columns plus metric and verdict).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Also write the replication summary as Markdown tables (hyperfine's layout), for mail.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Draw the plots (PNG and SVG: latency percentiles, CDF, where the time went, failures
    /// and congestion, a timeline per run) into DIR, by default plots/SCENARIO/ (the scenario
    /// name, created as needed); a named DIR's parent must exist. The files written are listed
    /// on stderr. `--plots SCENARIO` (no DIR) reads the word as the scenario.
    #[arg(long, value_name = "DIR", num_args = 0..=1)]
    pub plots: Option<Option<PathBuf>>,
    /// Also write fio's files for fio-plot into DIR: per run a folder (its label) holding the
    /// run as one fio json+ job (`<rw>-<iodepth>-<numjobs>.json`) and fio's bw, iops, lat,
    /// slat and clat logs (averaged over 500 ms unless --log_avg_msec says otherwise), so
    /// `fio-plot -i DIR/fifo DIR/split -C`, `-l` and `-g` read them.
    #[arg(long, value_name = "DIR")]
    pub fio_dir: Option<PathBuf>,
    /// With --fio-dir, fio's `log_avg_msec`: average the bw, iops and latency logs over
    /// windows of MS milliseconds of simulated time, or with 0 write one line per completed
    /// I/O of replication 0 (`time, value, ddir, bs, prio`), streamed to the files during the
    /// run. fio's default is 0; qsim's is 500, as per-I/O logs of a fast device run to
    /// hundreds of megabytes. A fio job file's `log_avg_msec` is the default.
    #[arg(long = "log_avg_msec", value_name = "MS", requires = "fio_dir",
          value_parser = clap::value_parser!(u64).range(0..=86_400_000))]
    pub log_avg_msec: Option<u64>,
    /// With --fio-dir, fio's `log_offset`: the logs get an offset column after the block
    /// size (the I/O's byte offset; 0 for an averaged entry). A fio job file's
    /// `log_offset=1` also asks for it.
    #[arg(long = "log_offset", requires = "fio_dir")]
    pub log_offset: bool,
    /// With --fio-dir, also write fio's histogram log of clat (`<prefix>_clat_hist.1.log`,
    /// which fio's fiologparser_hist.py reads) with windows of MS milliseconds of simulated
    /// time; fio's option of that name. A fio job file's `log_hist_msec` is the default.
    #[arg(long = "log_hist_msec", value_name = "MS", requires = "fio_dir",
          value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub log_hist_msec: Option<u64>,
    /// fio's `log_hist_coarseness`: the histogram log sums 2^N of fio's 1856 buckets into one
    /// column (0 to 6). A fio job file's value is the default, else 0.
    #[arg(long = "log_hist_coarseness", value_name = "N", requires = "log_hist_msec",
          value_parser = clap::value_parser!(u32).range(0..=6))]
    pub log_hist_coarseness: Option<u32>,
    /// After the text report, print plain-text pictures for mail (at most 72 columns): read
    /// clat against percentile on a "nines" axis per run, GFP_ATOMIC failures per run when
    /// the scenario models memory, and a knee curve per sweep table (`qsim plot --ascii`
    /// prints them from a --json export).
    #[arg(long)]
    pub ascii: bool,
    /// Print only the tables (policy comparison, memory, replication summary, flag, sweep and
    /// sensitivity tables, warnings), without the per-run fio blocks: for --flags all and
    /// sweeps, whose blocks run to thousands of lines. The JSON format ignores it.
    #[arg(long)]
    pub summary: bool,
    /// Print the per-run blocks' lines whole, in fio's one-line forms (the bw and iops lines,
    /// `Run status` and `Disk stats`), instead of wrapping them at 80 columns; the legend
    /// and the tables still fit 80. For scripts that parse fio's text.
    #[arg(long)]
    pub fio_exact: bool,
}

impl OutputArgs {
    /// The first of these flags given, as written on the command line (a `--shard` run
    /// refuses them: they belong to `qsim merge`).
    pub fn first_given(&self) -> Option<&'static str> {
        [
            ("--format json", self.format == Format::Json),
            ("--json", self.json.is_some()),
            ("--csv", self.csv.is_some()),
            ("--markdown", self.markdown.is_some()),
            ("--plots", self.plots.is_some()),
            ("--fio-dir", self.fio_dir.is_some()),
            ("--ascii", self.ascii),
            ("--summary", self.summary),
            ("--fio-exact", self.fio_exact),
            ("--check-invariants", self.check_invariants),
        ]
        .into_iter()
        .find_map(|(flag, on)| on.then_some(flag))
    }

    /// Checks a directory named with `--plots DIR` as `--json` checks its file: its parent must
    /// exist ([`crate::output::check_named_dir`]); the default `plots/SCENARIO/` is created.
    pub fn check_named(&self) -> Result<(), crate::output::OutputError> {
        match &self.plots {
            Some(Some(dir)) => crate::output::check_named_dir("--plots", dir),
            _ => Ok(()),
        }
    }

    /// The run options these flags set, for the scenario `name` (the default plot directory);
    /// the rest (threads, precision, time limit) at their defaults for the caller to fill.
    pub fn options(&self, name: &str) -> RunOptions {
        RunOptions {
            format: self.format.name().to_string(),
            check_invariants: self.check_invariants,
            json_file: self.json.clone(),
            csv_file: self.csv.clone(),
            markdown_file: self.markdown.clone(),
            plots_dir: self.plots.as_ref().map(|d| plots_dir(d.as_deref(), name)),
            fio_dir: self.fio_dir.clone(),
            ascii: self.ascii,
            summary_only: self.summary,
            fio_exact: self.fio_exact,
            ..RunOptions::default()
        }
    }

    /// fio's histogram log as `--log_hist_msec` and `--log_hist_coarseness` ask for it, else
    /// as the fio job file behind `sc` does (its job's options, then its `[global]` ones):
    /// (window ns, coarseness), or `None`.
    pub fn log_hist(&self, sc: &Scenario) -> Option<(u64, u32)> {
        self.fio_dir.as_ref()?;
        let given = |name: &str| job_number(sc, name);
        let ms = self
            .log_hist_msec
            .or_else(|| given("log_hist_msec").filter(|&ms| ms > 0))?;
        let c = self
            .log_hist_coarseness
            .or_else(|| given("log_hist_coarseness").map(|c| c.min(6) as u32))
            .unwrap_or(0);
        Some((ms.saturating_mul(1_000_000), c))
    }

    /// fio's logs as `--log_avg_msec` and `--log_offset` ask for them, else as the fio job file
    /// behind `sc` does (`log_avg_msec`, `log_offset`, and `write_bw_log`, `write_iops_log`,
    /// `write_lat_log`: naming any of them writes only those, as fio does), else qsim's
    /// defaults ([`LogOptions::default`]).
    pub fn fio_logs(&self, sc: &Scenario) -> LogOptions {
        let named = |name: &str| sc.fio_given.get(name).is_some();
        let (bw, iops, lat) = (
            named("write_bw_log"),
            named("write_iops_log"),
            named("write_lat_log"),
        );
        let any = bw || iops || lat;
        LogOptions {
            avg_msec: self
                .log_avg_msec
                .or_else(|| job_number(sc, "log_avg_msec"))
                .unwrap_or(DEFAULT_AVG_MSEC),
            bw: bw || !any,
            iops: iops || !any,
            lat: lat || !any,
            // fio reads a bare boolean option as 1.
            offset: self.log_offset
                || sc
                    .fio_given
                    .get("log_offset")
                    .is_some_and(|v| v.trim() != "0"),
        }
    }
}

/// The number a fio job file behind `sc` gives option `name` (its job's value, then its
/// `[global]` one); the loader has checked it.
fn job_number(sc: &Scenario, name: &str) -> Option<u64> {
    sc.fio_given.get(name).and_then(|v| v.trim().parse().ok())
}
