//! `qsim trace`: one policy of a scenario over a short window, as an event log, a highlighted
//! read with what it waited behind, and a Gantt chart (PNG, SVG and plain text).

use super::{load_input, parse_duration_arg};
use crate::engine::SimDuration;
use crate::error::UsageError;
use crate::experiment::trace::{TraceRequest, trace};
use crate::model::observe::trace::TraceWindow;
use crate::report::trace as words;
use anyhow::Context;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `qsim trace`.
#[derive(Debug, Args)]
pub struct TraceArgs {
    /// A scenario file (`-` reads standard input) or a shipped scenario's name (see `qsim list`).
    pub scenario: String,
    /// The policy to trace [default: the scenario's first].
    #[arg(long, value_name = "POLICY")]
    pub policy: Option<String>,
    /// The variant to trace [default: the base scenario].
    #[arg(long, value_name = "NAME")]
    pub variant: Option<String>,
    /// The window's start, from the run's beginning [default: the end of the warm-up].
    #[arg(long, value_name = "TIME", allow_hyphen_values = true, value_parser = parse_from)]
    pub from: Option<SimDuration>,
    /// The window's length (at most 10s).
    #[arg(long, value_name = "DURATION", default_value_t = crate::experiment::trace::DEFAULT_WINDOW,
        allow_hyphen_values = true, value_parser = parse_duration_arg)]
    pub window: SimDuration,
    /// Stop recording after this many spans (the chart then says where it stopped); at most
    /// 500000, which keeps a trace under half a GiB.
    #[arg(long, value_name = "N", default_value_t = TraceWindow::DEFAULT_MAX_SPANS,
        allow_hyphen_values = true, value_parser = parse_max_spans)]
    pub max_spans: usize,
    /// The read to highlight: `auto` (the one that waited longest in a crypt queue), `none`,
    /// or a bio number from the log.
    #[arg(long, value_name = "auto|none|N", default_value = "auto")]
    pub highlight: String,
    /// Print the whole event log (by default only the highlighted bio's lifetime is logged).
    #[arg(long)]
    pub log: bool,
    /// Print the Gantt chart in plain text (72 columns).
    #[arg(long)]
    pub ascii: bool,
    /// Write gantt.png, gantt.svg, gantt.txt and events.log into this directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Override the scenario's master seed.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = super::values::parse_seed)]
    pub seed: Option<u64>,
    /// Override any scenario field, as `qsim run --set` does.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
}

/// `--from` takes zero too.
fn parse_from(text: &str) -> Result<SimDuration, String> {
    crate::scenario::units::parse_duration(text)
        .map_err(|e| format!("{}\n  hint: {}", e.message, e.hint))
}

/// `--max-spans`: 1 to [`MAX_SPANS`](crate::experiment::trace::MAX_SPANS).
fn parse_max_spans(text: &str) -> Result<usize, String> {
    use crate::experiment::trace::MAX_SPANS;
    text.trim()
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=MAX_SPANS).contains(n))
        .ok_or_else(|| {
            format!(
                "`{text}` is not a span count from 1 to {MAX_SPANS} (the ceiling keeps a trace \
                 under half a GiB)\n  hint: a shorter --window holds fewer spans; the default \
                 is {}",
                TraceWindow::DEFAULT_MAX_SPANS
            )
        })
}

/// Runs `qsim trace`.
pub fn trace_cmd(args: &TraceArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut sc = load_input(&args.scenario, None, &args.set)?;
    if let Some(dir) = &args.out {
        crate::output::check_dir("--out", dir)?;
    }
    if let Some(seed) = args.seed {
        sc.seed = seed;
    }
    let req = TraceRequest {
        policy: args.policy.clone(),
        variant: args.variant.clone(),
        from: args.from,
        window: args.window,
        max_spans: args.max_spans,
        replication: 0,
    };
    let traced = trace(&sc, &req)?;
    let t = traced
        .result
        .trace
        .as_ref()
        .context("the run recorded no trace")?;
    if let Some(at) = traced.budget_stop {
        let budget = budget_words(traced.scenario.max_events, at);
        if at <= t.from {
            anyhow::bail!(
                "{budget}, before the window starts at {} ms: there is nothing to trace\n  \
                 hint: raise the budget (--set max_events=N) or trace an earlier --from",
                words::ms(t.from)
            );
        }
        eprintln!("warning: {budget}, inside the window: the trace stops there");
    }
    let highlight = highlighted(&args.highlight, t)?;
    let mut s = String::new();
    s.push_str(&header(&traced, t, args.variant.as_deref()));
    s.push_str(&words::read_waits(t));
    if let Some(k) = highlight {
        s.push('\n');
        s.push_str(&words::highlight_text(t, k));
    }
    s.push('\n');
    s.push_str(&words::stage_table(t, &traced.result.obs));
    let log = words::event_log(t);
    s.push('\n');
    if args.log {
        s.push_str("Event log:\n");
        s.push_str(&log);
    } else if let Some(k) = highlight {
        s.push_str(&format!(
            "Event log of #{k}'s lifetime (--log prints the whole window):\n"
        ));
        s.push_str(&words::event_log(&words::around(t, k)));
    }
    let ascii = crate::plot::ascii::gantt(t, highlight, 72);
    if args.ascii {
        s.push('\n');
        s.push_str(&ascii);
    }
    if let Some(dir) = &args.out {
        let opts = crate::plot::GanttOptions {
            title: crate::experiment::trace::gantt_title(&traced.scenario.name, t),
            highlight,
            width: None,
        };
        let charts = Charts {
            png: crate::plot::gantt_png(t, &opts)?,
            svg: crate::plot::gantt_svg(t, &opts)?,
            ascii,
        };
        let written = write_files(dir, t, &traced.result.obs, &log, charts)?;
        s.push_str(&format!("\nWrote {}\n", written.join(", ")));
    }
    out.write_all(s.as_bytes())?;
    Ok(())
}

/// The Gantt chart in its three forms.
struct Charts {
    png: Vec<u8>,
    svg: String,
    ascii: String,
}

/// Writes the trace's files into `dir` (each whole or not at all) and returns their paths.
fn write_files(
    dir: &std::path::Path,
    t: &crate::model::observe::trace::Trace,
    obs: &crate::model::base::obs::RunObs,
    log: &str,
    charts: Charts,
) -> anyhow::Result<Vec<String>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("gantt.png", charts.png),
        ("gantt.svg", charts.svg.into_bytes()),
        ("gantt.txt", charts.ascii.into_bytes()),
        ("events.log", log.as_bytes().to_vec()),
        ("stages.csv", words::stage_csv(t, obs).into_bytes()),
    ];
    let mut written = Vec::new();
    for (name, bytes) in files {
        let path = dir.join(name);
        crate::output::write_file(&path, &bytes, &mut std::io::sink())
            .with_context(|| format!("writing {}", path.display()))?;
        written.push(path.display().to_string());
    }
    Ok(written)
}

/// The bio `--highlight` names in `t`.
fn highlighted(
    arg: &str,
    t: &crate::model::observe::trace::Trace,
) -> Result<Option<u32>, UsageError> {
    match arg {
        "auto" => Ok(words::pick_read(t)),
        "none" => Ok(None),
        n => n
            .parse::<u32>()
            .ok()
            .filter(|&k| (k as usize) < t.bios.len())
            .map(Some)
            .ok_or_else(|| UsageError {
                message: format!("--highlight {n}: not a bio of this trace"),
                hint: format!("give auto, none or a bio number below {}", t.bios.len()),
            }),
    }
}

/// `the work budget (max_events=N) ended the run at T ms`.
fn budget_words(max_events: u64, at: crate::engine::SimTime) -> String {
    format!(
        "the work budget (max_events={max_events}) ended the run at {} ms",
        words::ms(at)
    )
}

/// The first lines: what was traced, over which window, and how much it holds.
fn header(
    traced: &crate::experiment::trace::Traced,
    t: &crate::model::observe::trace::Trace,
    variant: Option<&str>,
) -> String {
    let sc = &traced.scenario;
    let mut s = format!(
        "qsim trace: {}{}, policy {}, window {} to {} ms of simulated time (seed {}, replication 0)\n",
        sc.name,
        variant
            .map(|v| format!(" (variant {v})"))
            .unwrap_or_default(),
        t.policy,
        words::ms(t.from),
        words::ms(t.to),
        sc.seed
    );
    s.push_str(&format!(
        "{} bios, {} spans on {} lanes, {} marks{}\n",
        t.bios.len(),
        t.spans.len(),
        t.lanes.len(),
        t.marks.len(),
        match (t.truncated, traced.budget_stop) {
            (Some(at), _) => format!("; TRUNCATED at {} ms (--max-spans)", words::ms(at)),
            (None, Some(at)) => format!(
                "; STOPPED at {} ms (the work budget, max_events={})",
                words::ms(at),
                sc.max_events
            ),
            (None, None) => String::new(),
        }
    ));
    s
}
