//! The command line: `qsim run`, `qsim check`, `qsim list`, `qsim validate`, `qsim reproduce`
//! (clap derive; the doc comments below are the help text). This is the only module that adds `anyhow` context.
//!
//! Every command writes to the `out` it is given (a locked stdout in the binary, a buffer in
//! tests) and never prints on its own, so a closed pipe surfaces as an `io::Error` that `main`
//! recognises.

use crate::engine::SimDuration;
use crate::error::UsageError;
use crate::experiment::{self, RunOptions};
use crate::scenario::{self, Scenario, units};
use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::io::{self, Write};
use std::path::PathBuf;

mod answer;
mod calibrate;
mod conventions;
mod sweep;
pub use calibrate::CalibrateArgs;
pub use conventions::{CompletionsArgs, EXIT_STATUS_HELP, ManArgs, STDIN_NAME, man_pages};
use conventions::{completions_cmd, man_cmd, resolve_scenario};
mod merge;
pub use merge::MergeArgs;
mod values;
use values::{parse_jobs, parse_max_replications, parse_replications, parse_seed};
mod lenient;
mod output;
pub use output::OutputArgs;
mod progress;
mod trace;
pub use crate::serve::ServeArgs;
use progress::Progress;
pub use trace::TraceArgs;

/// Simulates Linux dm-crypt work queues and compares queue policies.
#[derive(Debug, Parser)]
#[command(name = "qsim", version, about, long_about = None)]
#[command(after_help = EXIT_STATUS_HELP)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per process; boxing buys nothing
pub enum Command {
    /// Run every policy of a scenario and print the report.
    Run(RunArgs),
    /// Validate a scenario and print it resolved: every default filled in, every derived value.
    Check {
        /// A scenario file (`-` reads standard input) or a shipped scenario's name (see `qsim list`).
        scenario: String,
        /// Override a scenario field, as `qsim run --set` does, to see its resolved effect.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
    },
    /// List the scenarios shipped inside qsim.
    List,
    /// Redraw the plots of a `qsim run --json FILE` export without re-simulating.
    Plot(PlotArgs),
    /// Run the textbook queues (M/M/1, M/M/c, M/D/1, M/G/1, priority, closed loop) through the
    /// model and compare them with queueing theory; exits 1 if any metric fails.
    Validate(ValidateArgs),
    /// Run a scenario that carries published figures (`published:`) and print each figure
    /// beside the simulated one (mean ± sd over replications), their ratio and a verdict; with
    /// no scenario, every shipped one that has them. Exits 0 whether or not they are
    /// reproduced.
    Reproduce(ReproduceArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    Completions(CompletionsArgs),
    /// Print the man page qsim(1) in roff, or with --out write it and one page per subcommand.
    Man(ManArgs),
    /// Fold the shard files of `qsim run --shard i/N` (all N, any order) into the report and
    /// exports one `qsim run` would write, byte for byte.
    Merge(MergeArgs),
    /// Trace one policy of a scenario over a short window (default: 200 ms after the warm-up):
    /// every bio's moves through the queues, threads and device as an event log and a Gantt
    /// chart, with a read highlighted and what it waited behind.
    Trace(TraceArgs),
    /// Write a machine file from measurements of this box (fio JSON of calibrate/*.fio,
    /// cryptsetup benchmark, lscpu, uname -r), printing the fit and its residuals.
    Calibrate(CalibrateArgs),
    /// Serve a local web page that runs a scenario (default two-queue) and redraws its plots
    /// as its knobs move (policy, cipher speed, write rate, memory, kernel, replications).
    Serve(ServeArgs),
}

/// Arguments of `qsim reproduce`.
#[derive(Debug, Args)]
pub struct ReproduceArgs {
    /// A scenario file or the name of a shipped scenario; without one, every shipped scenario
    /// with a `published:` section, one after another.
    pub scenario: Option<String>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Normal)]
    pub format: Format,
    /// Worker threads running replications in parallel (0 = all cores); the output is the same
    /// whatever the number.
    #[arg(short = 'j', long, value_name = "N", default_value_t = 0, allow_hyphen_values = true,
        value_parser = parse_jobs)]
    pub jobs: usize,
    /// No progress bar (drawn on stderr only when stderr is a terminal and the work takes
    /// longer than a second).
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

/// Arguments of `qsim plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// A results file written by `qsim run --json FILE`.
    pub results: PathBuf,
    /// Where to write the plots (default: plots/SCENARIO/, SCENARIO being the scenario name).
    #[arg(long, value_name = "DIR")]
    pub plots: Option<PathBuf>,
    /// Print the plain-text pictures (the read clat "nines" plot, GFP_ATOMIC failures) to
    /// stdout, at most 72 columns wide, instead of writing files (unless --plots DIR is given).
    #[arg(long)]
    pub ascii: bool,
}

/// Arguments of `qsim validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Worker threads running replications in parallel (0 = all cores); the table is the same
    /// whatever the number.
    #[arg(short = 'j', long, value_name = "N", default_value_t = 0, allow_hyphen_values = true,
        value_parser = parse_jobs)]
    pub jobs: usize,
    /// No progress bar (drawn on stderr only when stderr is a terminal and the work takes
    /// longer than a second).
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

/// Arguments of `qsim run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// A scenario file (`-` reads standard input) or a shipped scenario's name (see `qsim list`).
    pub scenario: String,
    /// Override the scenario's duration (warm-up included), e.g. 10s or 500ms.
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true,
        value_parser = parse_duration_arg)]
    pub duration: Option<SimDuration>,
    /// Override the scenario's master seed.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// Replications per policy and variant (1 to 1000), overriding `replications:` in the base
    /// and in every variant.
    #[arg(short = 'r', long, value_name = "N", allow_hyphen_values = true,
        value_parser = parse_replications)]
    pub replications: Option<u32>,
    /// Override any scenario field (repeatable): the value is YAML as in the file, e.g.
    /// --set memory.ram=1GiB, --set kernel.patches=[dm-crypt-unplug], --set device.kind=nvme;
    /// an index edits one item of workloads, memory.atomic or variants
    /// (`--set 'workloads[0].io_size=16MiB'`) and `!` removes a top-level section
    /// (`--set '!memory'`). Applied in order to the base and
    /// to every variant, after the variant's own `set:`, and checked like the file.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// What to print and write (shared with `qsim merge`).
    #[command(flatten)]
    pub output: OutputArgs,
    /// Worker threads running policies in parallel (0 = all cores); the output is the same
    /// whatever the number.
    #[arg(short = 'j', long, value_name = "N", default_value_t = 0, allow_hyphen_values = true,
        value_parser = parse_jobs)]
    pub jobs: usize,
    /// Add replications until the headline metric's 95% confidence half-width is within this
    /// share of its mean in every run (e.g. 5%), or --max-replications is reached; the report
    /// says which.
    #[arg(long, value_name = "PERCENT", allow_hyphen_values = true, value_parser = parse_percent)]
    pub precision: Option<f64>,
    /// The metric --precision applies to: p99, p99.9 (read clat), mean (read latency) or
    /// failures (GFP_ATOMIC).
    #[arg(long, value_name = "METRIC", default_value = "p99", value_parser = clap::builder::PossibleValuesParser::new(experiment::HeadlineMetric::NAMES))]
    pub precision_metric: String,
    /// Most replications per run under --precision.
    #[arg(long, value_name = "N", default_value_t = 100, allow_hyphen_values = true,
        value_parser = parse_max_replications)]
    pub max_replications: u32,
    /// Wall-clock safety valve: runs still going this long after qsim started stop, are
    /// reported as stopped by the limit (their figures then depend on the machine's speed),
    /// and qsim exits 1 after the report. `0s` turns the valve off. The work budget
    /// (`max_events`) bounds every run anyway; this catches what it misses.
    #[arg(long, value_name = "DURATION", default_value = "1h", allow_hyphen_values = true,
        value_parser = parse_time_limit)]
    pub time_limit: std::time::Duration,
    /// No progress bar (it is drawn on stderr only when stderr is a terminal and the runs take
    /// longer than a second).
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// For a fio job file (`qsim run job.fio`): the scenario (file or shipped name) whose
    /// machine the jobs run on, its workloads replaced by the jobs [default: hubbard-2019].
    #[arg(long, value_name = "SCENARIO")]
    pub machine: Option<String>,
    /// Run only shard i of N (0 <= i < N) of the (run, replication) jobs, job k going to shard
    /// k mod N, and write a shard file instead of the report; `qsim merge` folds the N files
    /// into the report and exports one run would write, byte for byte. Give every shard the
    /// same scenario and flags; the output flags go to `qsim merge`.
    #[arg(long, value_name = "i/N", value_parser = experiment::shard::Shard::parse)]
    pub shard: Option<experiment::shard::Shard>,
    /// Write the --shard file here (replaced whole, or not at all) instead of standard output.
    #[arg(long, value_name = "FILE", requires = "shard")]
    pub shard_out: Option<PathBuf>,
    /// Sweep a scenario field over values, replacing the file's `sweep:` (give it twice for a
    /// grid): `PATH=v1,v2,v3` lists them, `PATH=FROM..TO[:POINTS[:log]]` spaces POINTS
    /// (default 10) from FROM to TO, in FROM's unit; a+b sets two paths to each value. E.g.
    /// --sweep 'crypt.encrypt_rate+crypt.decrypt_rate=60MB/s..1432MiB/s:10:log'. Each point is a
    /// variant run with the same random numbers; the report adds a table per metric.
    #[arg(long = "sweep", value_name = "PATH=VALUES")]
    pub sweep: Vec<String>,
    /// A one-at-a-time sensitivity study (repeatable, one knob each, replacing the file's
    /// knobs): PATH moves the value the scenario writes down and up by 20%, PATH:30% by 30%,
    /// PATH=LOW..HIGH to those values. The report ranks the knobs by their paired effect.
    #[arg(long = "sensitivity", value_name = "KNOB")]
    pub sensitivity: Vec<String>,
    /// The metric a sensitivity study ranks by: p99, p99.9 (the default), mean, failures, or a
    /// registry key such as read_p999_ms.
    #[arg(long = "sensitivity-metric", value_name = "METRIC")]
    pub sensitivity_metric: Option<String>,
    /// Compare dm-crypt's cryptsetup --perf-* flags: `all` runs every combination of the flags
    /// the scenario's kernel has, `no_read_workqueue,same_cpu_crypt` every combination of
    /// those (flags: same_cpu_crypt, submit_from_crypt_cpus, no_read_workqueue,
    /// no_write_workqueue, high_priority). Replaces the scenario's policies, default table
    /// first; the report adds a "Flag comparison" section paired against `dm-crypt`, and
    /// --plots a `flags` plot.
    #[arg(long = "flags", value_name = "all|FLAG,FLAG")]
    pub flags: Option<String>,
    /// After a flag comparison, rerun its recommended combination and the default with each
    /// machine input (the device's service parameters, the cipher's rates, the CPU count)
    /// moved down and up by STEP, and say which input the answer is most sensitive to:
    /// `--robust` moves them by 20%, `--robust=10%` by 10%, `--robust=0` turns it off. On by
    /// 20% when the machine is a machine file (`qsim calibrate`'s), whose numbers are
    /// measurements.
    #[arg(long, value_name = "STEP", num_args = 0..=1, require_equals = true,
        default_missing_value = answer::DEFAULT_STEP, value_parser = answer::parse_step)]
    pub robust: Option<f64>,
}

/// clap value parser for `--precision`: `5%`, `5` or `0.5%` (percent of the mean).
fn parse_percent(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let number = t.strip_suffix('%').unwrap_or(t).trim();
    match number.parse::<f64>() {
        Ok(p) if p > 0.0 && p < 100.0 && p.is_finite() => Ok(p / 100.0),
        _ => Err(format!(
            "`{text}` is not a percentage between 0 and 100\n  hint: write it like 5% or 0.5%"
        )),
    }
}

/// Report formats of `qsim run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// fio-style text.
    Normal,
    /// JSON.
    Json,
}

impl Format {
    /// The name `experiment::RunOptions::format` expects.
    pub fn name(self) -> &'static str {
        match self {
            Format::Normal => "normal",
            Format::Json => "json",
        }
    }
}

/// clap value parser for `--duration`: the scenario file's duration syntax.
fn parse_duration_arg(text: &str) -> Result<SimDuration, String> {
    match units::parse_duration(text) {
        Ok(d) if d.is_zero() => Err("the duration must be longer than zero".to_string()),
        Ok(d) => Ok(d),
        Err(e) => Err(format!("{}\n  hint: {}", e.message, e.hint)),
    }
}

/// clap value parser for `--time-limit`: a duration in the scenario file's syntax (wall
/// clock here); `0s` means no limit.
fn parse_time_limit(text: &str) -> Result<std::time::Duration, String> {
    match units::parse_duration(text) {
        Ok(d) => Ok(std::time::Duration::from_nanos(d.as_ns())),
        Err(e) => Err(format!("{}\n  hint: {}", e.message, e.hint)),
    }
}

/// Applies `qsim run`'s --duration, --seed and --replications to a loaded scenario and to each
/// of its variants (whose resolved copies would otherwise keep the file's values), rechecking
/// what they can break. (`--set` is applied earlier, by the loader, before validation.)
pub fn apply_overrides(sc: &mut Scenario, args: &RunArgs) -> Result<(), UsageError> {
    override_one(sc, args)?;
    for v in &mut sc.variants {
        override_one(&mut v.scenario, args).map_err(|mut e| {
            e.message = format!("in variant `{}`: {}", v.name, e.message);
            e
        })?;
    }
    Ok(())
}

/// Rechecks the bounds on one `qsim run` (runs × replications, [`scenario::check_work`]) with
/// the replications the command line asks for: `-r`, or under `--precision` the most a run may
/// reach.
fn check_run_size(sc: &Scenario, args: &RunArgs) -> Result<(), scenario::Error> {
    if let Some(r) = args.replications {
        scenario::check_work(sc, Some(r), &format!("-r {r}"))?;
    }
    if args.precision.is_some() {
        let largest = std::iter::once(sc.replications)
            .chain(sc.variants.iter().map(|v| v.scenario.replications))
            .max()
            .unwrap_or(1);
        scenario::check_work(
            sc,
            Some(args.max_replications.max(largest)),
            &format!("--max-replications {}", args.max_replications),
        )?;
    }
    Ok(())
}

fn override_one(sc: &mut Scenario, args: &RunArgs) -> Result<(), UsageError> {
    if let Some(d) = args.duration {
        if d <= sc.warmup {
            return Err(UsageError {
                message: format!(
                    "--duration {d} is not longer than the scenario's warm-up ({})",
                    sc.warmup
                ),
                hint: "the warm-up is part of the duration; give a longer --duration".to_string(),
            });
        }
        sc.duration = d;
    }
    if let Some(seed) = args.seed {
        sc.seed = seed;
    }
    if let Some(r) = args.replications {
        sc.replications = r;
    }
    Ok(())
}

/// A writer that remembers whether its reader went away, whatever error type the code above it
/// turns the `io::Error` into.
struct PipeWatch<'a> {
    inner: &'a mut dyn Write,
    broken: bool,
}

impl PipeWatch<'_> {
    fn note<T>(&mut self, r: io::Result<T>) -> io::Result<T> {
        if let Err(e) = &r
            && e.kind() == io::ErrorKind::BrokenPipe
        {
            self.broken = true;
        }
        r
    }
}

impl Write for PipeWatch<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let r = self.inner.write(buf);
        self.note(r)
    }
    fn flush(&mut self) -> io::Result<()> {
        let r = self.inner.flush();
        self.note(r)
    }
}

/// Runs a parsed command line, writing its output to `out`.
pub fn run(cli: Cli, out: &mut dyn Write) -> anyhow::Result<()> {
    match cli.command {
        Command::Run(args) => run_cmd(&args, out),
        Command::Check { scenario, set } => check_cmd(&scenario, &set, out),
        Command::List => list_cmd(out),
        Command::Plot(args) => plot_cmd(&args, out),
        Command::Validate(args) => validate_cmd(&args, out),
        Command::Reproduce(args) => reproduce_cmd(&args, out),
        Command::Completions(args) => completions_cmd(&args, out),
        Command::Man(args) => man_cmd(&args, out),
        Command::Merge(args) => merge::merge_cmd(&args, out),
        Command::Trace(args) => trace::trace_cmd(&args, out),
        Command::Serve(args) => crate::serve::serve_cmd(&args, out),
        Command::Calibrate(args) => calibrate::calibrate_cmd(&args, out),
    }
}

/// The scenario `arg` names: a fio job file (a path ending in `.fio`) on the `machine`
/// scenario's machine (default [`scenario::fio::DEFAULT_MACHINE`]), its warnings printed on
/// stderr; `-` for standard input; or a scenario file or shipped name. `--set` applies to each.
fn load_input(arg: &str, machine: Option<&str>, sets: &[String]) -> anyhow::Result<Scenario> {
    if scenario::fio::is_job_file(arg) {
        let machine = machine.unwrap_or(scenario::fio::DEFAULT_MACHINE);
        let job = scenario::fio::load(std::path::Path::new(arg), machine, sets)?;
        for w in &job.warnings {
            eprintln!("warning: {w}");
        }
        return Ok(job.scenario);
    }
    if scenario::replay::workload::is_trace(arg) {
        let machine = machine.unwrap_or(scenario::fio::DEFAULT_MACHINE);
        return Ok(scenario::replay::workload::load(
            std::path::Path::new(arg),
            machine,
            sets,
        )?);
    }
    if machine.is_some() {
        return Err(UsageError {
            message: "--machine applies only to a fio job file (a path ending in .fio) or a trace"
                .into(),
            hint: "a scenario brings its own machine: drop --machine, or give a job.fio".into(),
        }
        .into());
    }
    Ok(resolve_scenario(arg, sets)?)
}

fn run_cmd(args: &RunArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let (sets, labels) = sweep::sets(args)?;
    let mut sc = load_input(&args.scenario, args.machine.as_deref(), &sets)
        .map_err(|e| sweep::relabel(e, &labels))?;
    sweep::check_metric(&sc)?;
    apply_overrides(&mut sc, args)?;
    check_run_size(&sc, args)?;
    if let Some(shard) = args.shard {
        return merge::shard_cmd(&sc, args, shard, out);
    }
    let opts = RunOptions {
        jobs: args.jobs,
        precision: args.precision.map(|target_rel| experiment::Precision {
            target_rel,
            cap: args.max_replications as usize,
            metric: experiment::HeadlineMetric::parse(&args.precision_metric)
                .unwrap_or(experiment::HeadlineMetric::READ_P99),
        }),
        time_limit: (!args.time_limit.is_zero()).then_some(args.time_limit),
        log_hist: args.output.log_hist(&sc),
        fio_logs: args.output.fio_logs(&sc),
        ..args.output.options(&sc.name)
    };
    // Before anything is simulated: a mistyped path costs no simulation time.
    args.output.check_named()?;
    experiment::check_outputs(&opts)?;
    check_not_inputs(&opts, &run_inputs(args))?;
    let mut watch = PipeWatch {
        inner: out,
        broken: false,
    };
    let bar = Progress::new(args.quiet);
    let result =
        experiment::run_report_keep(&sc, &opts, &mut watch, &|done, total| bar.tick(done, total));
    bar.finish();
    // A calibrated machine's numbers are measurements: check the answer against them.
    let robust = args.robust.or_else(|| {
        let default = answer::parse_step(answer::DEFAULT_STEP).ok();
        sc.machine_file.as_ref().and(default)
    });
    let result = match (result, robust) {
        (Ok(report), Some(step)) if step > 0.0 && !watch.broken => {
            answer::check(args, &sets, &sc, &report, step, &mut watch)?;
            Ok(())
        }
        (r, _) => r.map(|_| ()),
    };
    if watch.broken {
        return Err(io::Error::from(io::ErrorKind::BrokenPipe).into());
    }
    result.with_context(|| format!("running scenario `{}`", sc.name))
}

/// The files `qsim run` reads: the scenario or job file (unless a shipped name or standard
/// input) and the `--machine` scenario file.
fn run_inputs(args: &RunArgs) -> Vec<(&'static str, PathBuf)> {
    let mut inputs = Vec::new();
    if args.scenario != "-" && std::path::Path::new(&args.scenario).is_file() {
        inputs.push(("scenario file", PathBuf::from(&args.scenario)));
    }
    if let Some(m) = args
        .machine
        .as_deref()
        .filter(|m| std::path::Path::new(m).is_file())
    {
        inputs.push(("--machine scenario file", PathBuf::from(m)));
    }
    inputs
}

/// Refuses an export (`--json`, `--csv`, `--markdown`) that is one of `inputs`.
fn check_not_inputs(
    opts: &RunOptions,
    inputs: &[(&'static str, PathBuf)],
) -> Result<(), crate::output::OutputError> {
    let inputs: Vec<(&str, &std::path::Path)> =
        inputs.iter().map(|(w, p)| (*w, p.as_path())).collect();
    let files = [
        ("--json", &opts.json_file),
        ("--csv", &opts.csv_file),
        ("--markdown", &opts.markdown_file),
    ];
    for (flag, path) in files {
        if let Some(path) = path {
            crate::output::check_not_input(flag, path, &inputs)?;
        }
    }
    Ok(())
}

/// `--plots` without a directory means `plots/<scenario name>/`, the name made safe as one
/// directory name ([`crate::plot::dir_name`]): a name never leads outside `plots/`.
fn plots_dir(given: Option<&std::path::Path>, scenario: &str) -> PathBuf {
    given.map_or_else(
        || PathBuf::from("plots").join(crate::plot::dir_name(scenario)),
        Into::into,
    )
}

/// The largest results file `qsim plot` reads: a `--json` export of the most runs a scenario
/// may have (256, with timelines) is about 115 MB.
pub const MAX_RESULTS_BYTES: u64 = 256 << 20;

fn plot_cmd(args: &PlotArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let shown = args.results.display();
    let hint = "give a file written by `qsim run SCENARIO --json FILE`".to_string();
    // Capped by bytes read, not by the size the file reports (0 for /dev/zero).
    let bytes =
        scenario::read_capped(&args.results, MAX_RESULTS_BYTES).map_err(|e| UsageError {
            message: format!("cannot read {shown}: {e}"),
            hint: format!(
                "{hint}; a results file is at most {} MiB",
                MAX_RESULTS_BYTES >> 20
            ),
        })?;
    let text = String::from_utf8(bytes).map_err(|e| UsageError {
        message: format!(
            "{shown}: not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ),
        hint: hint.clone(),
    })?;
    let data = crate::plot::data::from_results_json(&text).map_err(|e| UsageError {
        message: e.in_file(&shown.to_string()),
        hint: match e {
            crate::plot::data::DecodeError::Shape(_) => format!("{hint} with this version of qsim"),
            _ => hint.clone(),
        },
    })?;
    if args.ascii {
        out.write_all(crate::plot::ascii::pictures::render(&data).as_bytes())?;
        if args.plots.is_none() {
            out.flush()?;
            return Ok(());
        }
    }
    let dir = plots_dir(args.plots.as_deref(), &data.scenario);
    match &args.plots {
        Some(named) => crate::output::check_named_dir("--plots", named)?,
        None => crate::output::check_dir("--plots", &dir)?,
    }
    let files = crate::plot::render_all(&data, &dir)?;
    for f in files {
        writeln!(out, "{}", f.display())?;
    }
    out.flush()?;
    Ok(())
}

fn check_cmd(arg: &str, sets: &[String], out: &mut dyn Write) -> anyhow::Result<()> {
    let sc = load_input(arg, None, sets)?;
    out.write_all(scenario::describe(&sc).as_bytes())?;
    out.flush()?;
    Ok(())
}

fn list_cmd(out: &mut dyn Write) -> anyhow::Result<()> {
    let all = scenario::shipped();
    let width = all.iter().map(|s| s.name.len()).max().unwrap_or(0);
    for s in &all {
        writeln!(out, "{:width$}  {}", s.name, s.purpose)?;
    }
    out.flush()?;
    Ok(())
}

fn reproduce_cmd(args: &ReproduceArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    use crate::report::reproduce::{metric_keys, render_json, render_summary, render_text};
    let keys = metric_keys();
    let mut todo = Vec::new();
    match &args.scenario {
        Some(arg) => match scenario::resolve_published(arg, &keys)? {
            (sc, Some(p)) => todo.push((sc, p)),
            (sc, None) => {
                return Err(UsageError {
                    message: format!("the scenario `{}` has no `published:` section", sc.name),
                    hint: "give a scenario that carries published figures; `qsim reproduce` \
                           without a name runs every shipped one that does"
                        .to_string(),
                }
                .into());
            }
        },
        None => {
            for s in scenario::shipped() {
                if let (sc, Some(p)) = scenario::resolve_published(s.name, &keys)? {
                    todo.push((sc, p));
                }
            }
        }
    }
    let json = args.format == Format::Json;
    let mut all = Vec::new();
    let bar = Progress::new(args.quiet);
    for (i, (sc, p)) in todo.iter().enumerate() {
        bar.say(&format!("{} ({} of {})", sc.name, i + 1, todo.len()));
        let r = experiment::reproduce(sc, p, args.jobs, &|done, total| bar.tick(done, total));
        let r = r?;
        if !json {
            let mut text = String::new();
            if i > 0 {
                text.push('\n');
            }
            render_text(&r, &mut text);
            // The bar steps aside while the scenario's tables go to the terminal.
            bar.suspend(|| -> io::Result<()> {
                out.write_all(text.as_bytes())?;
                out.flush()
            })?;
        }
        all.push(r);
    }
    bar.finish();
    let mut text = String::new();
    if json {
        text = render_json(&all);
    } else if args.scenario.is_none() {
        text.push('\n');
        render_summary(&all, &mut text);
    }
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

fn validate_cmd(args: &ValidateArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let bar = Progress::counting(args.quiet, "replications");
    let results = crate::validate::run_all_with(args.jobs, &|done, total| bar.tick(done, total));
    bar.finish();
    out.write_all(crate::validate::render(&results).as_bytes())?;
    out.flush()?;
    let failed = results.iter().filter(|r| !r.pass).count();
    if failed > 0 {
        anyhow::bail!(
            "{failed} of {} validation metrics failed: the simulator disagrees with theory",
            results.len()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::parse_lenient(std::iter::once("qsim").chain(args.iter().copied()))
    }

    #[test]
    fn the_command_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn overrides_reach_every_variant() {
        let mut sc = crate::scenario::resolve("gfp-atomic-storm").expect("shipped");
        assert!(sc.variants.len() > 1);
        let Command::Run(a) = parse(&["run", "x", "--duration", "3s", "--seed", "5"])
            .unwrap()
            .command
        else {
            panic!("run")
        };
        apply_overrides(&mut sc, &a).expect("valid overrides");
        for s in std::iter::once(&sc).chain(sc.variants.iter().map(|v| &*v.scenario)) {
            assert_eq!((s.duration, s.seed), (SimDuration::from_secs(3), 5));
        }
    }

    #[test]
    fn replications_flag_reaches_every_variant_and_is_bounded() {
        let mut sc = crate::scenario::resolve("gfp-atomic-storm").expect("shipped");
        let Command::Run(a) = parse(&["run", "x", "-r", "3"]).unwrap().command else {
            panic!("run")
        };
        assert_eq!(a.replications, Some(3));
        apply_overrides(&mut sc, &a).unwrap();
        assert!(sc.variants.len() > 1);
        for s in std::iter::once(&sc).chain(sc.variants.iter().map(|v| &*v.scenario)) {
            assert_eq!(s.replications, 3);
        }
        // Over a variant that sets its own replications, too.
        let text = "device: { kind: nvme }\nworkloads: [{ kind: fio }]\nvariants:\n  \
                    - { name: a, set: { replications: 50 } }\n";
        let mut sc = crate::scenario::load_str("x.yaml", text).unwrap();
        assert_eq!(sc.variants[0].scenario.replications, 50);
        let Command::Run(a) = parse(&["run", "x", "--replications", "2"]).unwrap().command else {
            panic!("run")
        };
        apply_overrides(&mut sc, &a).unwrap();
        assert_eq!(
            (sc.replications, sc.variants[0].scenario.replications),
            (2, 2)
        );
        let Command::Run(a) = parse(&["run", "x"]).unwrap().command else {
            panic!("run")
        };
        assert_eq!(a.replications, None);
        for bad in ["0", "1001", "-1", "x"] {
            assert_eq!(
                parse(&["run", "x", "-r", bad]).unwrap_err().exit_code(),
                2,
                "{bad}"
            );
        }
    }

    #[test]
    fn set_is_repeatable_on_run_and_check() {
        let Command::Run(a) = parse(&[
            "run",
            "x",
            "--set",
            "memory.ram=1GiB",
            "--set=kernel.patches=[dm-crypt-unplug]",
        ])
        .unwrap()
        .command
        else {
            panic!("run")
        };
        assert_eq!(
            a.set,
            ["memory.ram=1GiB", "kernel.patches=[dm-crypt-unplug]"]
        );
        let mut buf = Vec::new();
        run(
            parse(&[
                "check",
                "nvme-fio",
                "--set",
                "cpus=3",
                "--set",
                "replications=4",
            ])
            .unwrap(),
            &mut buf,
        )
        .unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(text.contains("\ncpus                    3\n"), "{text}");
        assert!(text.contains("\nreplications            4\n"), "{text}");
        let e = run(
            parse(&["check", "nvme-fio", "--set", "cpus=0"]).unwrap(),
            &mut Vec::new(),
        )
        .unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(format!("{e:#}").contains("--set cpus=0: cpus:"), "{e:#}");
    }

    #[test]
    fn run_takes_duration_seed_and_format() {
        let cli = parse(&[
            "run",
            "x.yaml",
            "--duration",
            "1.5s",
            "--seed",
            "9",
            "--format",
            "json",
        ])
        .unwrap();
        let Command::Run(a) = cli.command else {
            panic!("run")
        };
        assert_eq!(a.scenario, "x.yaml");
        assert_eq!(a.duration, Some(SimDuration::from_ms(1500)));
        assert_eq!(a.seed, Some(9));
        assert_eq!(a.output.format, Format::Json);
        let Command::Run(a) = parse(&["run", "x"]).unwrap().command else {
            panic!("run")
        };
        assert_eq!(
            (a.duration, a.seed, a.output.format),
            (None, None, Format::Normal)
        );
    }

    #[test]
    fn run_takes_check_invariants() {
        let Command::Run(a) = parse(&["run", "x", "--check-invariants"]).unwrap().command else {
            panic!("run")
        };
        assert!(a.output.check_invariants);
        let Command::Run(a) = parse(&["run", "x"]).unwrap().command else {
            panic!("run")
        };
        assert!(!a.output.check_invariants);
        assert_eq!(
            parse(&["run", "x", "--check-invariants=yes"])
                .unwrap_err()
                .exit_code(),
            2
        );
    }

    #[test]
    fn validate_takes_jobs() {
        let Command::Validate(a) = parse(&["validate", "-j", "2"]).unwrap().command else {
            panic!("validate")
        };
        assert_eq!(a.jobs, 2);
        let Command::Validate(a) = parse(&["validate"]).unwrap().command else {
            panic!("validate")
        };
        assert_eq!(a.jobs, 0);
        assert_eq!(parse(&["validate", "-j", "x"]).unwrap_err().exit_code(), 2);
    }

    #[test]
    fn bad_flag_values_are_usage_errors() {
        let e = parse(&["run", "x", "--duration", "10"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("durations need a unit"), "{e}");
        assert_eq!(
            parse(&["run", "x", "--duration", "0s"])
                .unwrap_err()
                .exit_code(),
            2
        );
        assert_eq!(
            parse(&["run", "x", "--format", "xml"])
                .unwrap_err()
                .exit_code(),
            2
        );
        assert_eq!(
            parse(&["run", "x", "--seed", "-1"])
                .unwrap_err()
                .exit_code(),
            2
        );
        assert_eq!(parse(&["check"]).unwrap_err().exit_code(), 2);
        assert_eq!(parse(&["frobnicate"]).unwrap_err().exit_code(), 2);
    }

    #[test]
    fn overrides_apply_and_are_checked() {
        let mut sc = scenario::resolve("two-queue").unwrap();
        let Command::Run(a) = parse(&["run", "two-queue", "--duration", "10s", "--seed", "3"])
            .unwrap()
            .command
        else {
            panic!("run")
        };
        apply_overrides(&mut sc, &a).unwrap();
        assert_eq!((sc.duration, sc.seed), (SimDuration::from_secs(10), 3));
        let Command::Run(a) = parse(&["run", "two-queue", "--duration", "1s"])
            .unwrap()
            .command
        else {
            panic!("run")
        };
        let e = apply_overrides(&mut sc, &a).unwrap_err();
        assert!(e.message.contains("--duration 1s"), "{e}");
    }

    #[test]
    fn list_and_check_write_to_the_given_output() {
        let mut buf = Vec::new();
        run(parse(&["list"]).unwrap(), &mut buf).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(
            text.contains("two-queue") && text.contains("nvme-fio"),
            "{text}"
        );
        let mut buf = Vec::new();
        run(parse(&["check", "two-queue"]).unwrap(), &mut buf).unwrap();
        assert!(String::from_utf8(buf).unwrap().contains("113"));
    }

    #[test]
    fn a_scenario_name_is_never_a_path_for_plots() {
        let d = |name: &str| plots_dir(None, name);
        assert_eq!(d("two-queue"), PathBuf::from("plots/two-queue"));
        assert_eq!(d("/abs/dir"), PathBuf::from("plots/abs_dir"));
        assert_eq!(d("../.."), PathBuf::from("plots/scenario"));
        assert_eq!(d(""), PathBuf::from("plots/scenario"));
        let long = d(&"x".repeat(20_000));
        let other = d(&format!("{}y", "x".repeat(20_000)));
        assert!(long.file_name().unwrap().len() <= 80, "{long:?}");
        assert_ne!(long, other, "long names stay distinct");
        assert_eq!(
            plots_dir(Some(std::path::Path::new("../mine")), "x"),
            PathBuf::from("../mine"),
            "a directory the user names is used as given"
        );
    }

    #[test]
    fn a_closed_pipe_is_reported_as_broken_pipe() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::from(io::ErrorKind::BrokenPipe))
            }
            fn flush(&mut self) -> io::Result<()> {
                Err(io::Error::from(io::ErrorKind::BrokenPipe))
            }
        }
        let e = run(parse(&["list"]).unwrap(), &mut Closed).unwrap_err();
        assert!(crate::error::is_broken_pipe(&e));
    }
}
