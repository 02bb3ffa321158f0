//! Text renderer: a legend, one fio "normal"-style block per policy (fio 3.x formats, then
//! qsim's own `  label        : k=v` lines and a "where the time went" table per direction), a
//! comparison table across policies and the warnings.
//!
//! Layout rules are those of `docs/output.md` §1 and fio's `stat.c`; the fio-exact pieces live in
//! [`super::fiofmt`]. Everything is built in a string and written once.

use super::fiofmt::{
    LAT_LABELS_M, LAT_LABELS_NU, N2sUnit, TimeUnit, lat_line, lat_line_unit, lat_share_lines,
    num2str, percentile_block, percentile_unit,
};
use super::spread::DirSpread;
use super::{
    Direction, DirectionReport, FiniteJobReport, LatencySummary, PERCENTILE_PRECISION,
    PolicyReport, Report, Warning,
};
pub use crate::textfit as fit;
mod memory;
mod status;
pub mod table;

use super::warning::SUSTAINED_DROP_PERCENT;
use crate::engine::SimDuration;
use table::{Align, Table};

/// A run's name as the text prints it: flagged dm-crypt runs by their flags' codes (`sc+nr`,
/// [`super::flags::short_label`], as the plots and the flag table write them), every other
/// name as it is.
pub fn shown(name: &str) -> String {
    super::flags::short_label(name)
}
use crate::stats::Summary;
use std::fmt::Write as _;
use std::io;

/// Choices of the text renderer.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextOptions {
    /// Show total-latency percentiles instead of clat ones (fio's `lat_percentiles=1`).
    pub lat_percentiles: bool,
    /// Leave out the per-run blocks: the legend and the tables only (`qsim run --summary`).
    pub summary_only: bool,
    /// Print the per-run blocks' lines whole, as fio prints them (`qsim run --fio-exact`):
    /// the bw/iops, `Run status` and `Disk stats` lines are not wrapped at 80 columns.
    pub fio_exact: bool,
}

/// Writes the whole report with default options.
pub fn render(report: &Report, out: &mut dyn io::Write) -> io::Result<()> {
    render_with(report, &TextOptions::default(), out)
}

/// Writes the whole report: legend, comparison tables, warnings, then one block per policy.
pub fn render_with(report: &Report, opts: &TextOptions, out: &mut dyn io::Write) -> io::Result<()> {
    out.write_all(render_parts(report, opts, "").as_bytes())
}

/// The report with `summary` (the tables across replications, flags and sweeps) after the
/// comparison tables: what a reader came for first, the per-run blocks after it.
fn render_parts(report: &Report, opts: &TextOptions, summary: &str) -> String {
    let mut s = String::new();
    legend(report, &mut s);
    s.push('\n');
    comparison(report, &mut s);
    memory::memory_comparison(report, &mut s);
    s.push_str(summary);
    warnings(report, &mut s);
    if !opts.summary_only && !report.policies.is_empty() {
        s.push_str("\nPer-run reports (fio's layout, one block per run):\n");
    }
    let mut blocks = String::new();
    for policy in report.policies.iter().filter(|_| !opts.summary_only) {
        blocks.push('\n');
        policy_block(report, policy, opts, &mut blocks);
    }
    if opts.fio_exact {
        // fio's one-line forms in the blocks; the legend and the tables still fit 80 columns.
        return [fit::fit(&s), blocks].concat();
    }
    s.push_str(&blocks);
    fit::fit(&s)
}

/// Writes the whole text output of `qsim run`: the report ([`render`]) with the replication
/// summary, the flag and sweep tables and the precision line after its comparison tables, then
/// the invariant tables the report holds, in one piece.
pub fn render_run(report: &Report, out: &mut dyn io::Write) -> io::Result<()> {
    render_run_with(report, &TextOptions::default(), out)
}

/// [`render_run`] with the renderer's options (`--summary` leaves out the per-run blocks).
pub fn render_run_with(
    report: &Report,
    opts: &TextOptions,
    out: &mut dyn io::Write,
) -> io::Result<()> {
    let mut summary = String::new();
    super::replications::render(&report.metrics, &report.pairing(), &mut summary);
    super::flags::render(report, &mut summary);
    super::sweep::render(report, &mut summary);
    if let Some(p) = &report.precision {
        summary.push('\n');
        summary.push_str(&p.line());
        summary.push('\n');
    }
    let mut buf = render_parts(report, opts, &summary).into_bytes();
    super::invariants::render_all(report, &mut buf)?;
    out.write_all(&buf)
}

/// Formats a duration in ns with an adaptive unit: `812 ns`, `38.1 us`, `8.5 ms`, `1.250 s`
/// (one decimal for us and ms, three for s, as hyperfine does).
pub fn adaptive_ns(ns: f64) -> String {
    if ns < 999.5 {
        format!("{ns:.0} ns")
    } else if ns < 999_950.0 {
        format!("{:.1} us", ns / 1e3)
    } else if ns < 999_950_000.0 {
        format!("{:.1} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
}

/// The one unit a table column of durations is shown in, chosen from the column's data: the
/// finest of ns, us, ms and s that writes its largest value in at most four integer digits,
/// with decimals enough for two significant digits of its smallest (at most three), so µs on
/// NVMe and ms on disks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColumnUnit {
    div: f64,
    /// The unit's name for the header: `ns`, `us`, `ms` or `s`.
    pub label: &'static str,
    decimals: usize,
}

impl ColumnUnit {
    /// The unit for a column holding `ns` (non-finite and zero values are ignored).
    pub fn of(ns: impl IntoIterator<Item = f64>) -> Self {
        let shown: Vec<f64> = ns
            .into_iter()
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        let max = shown.iter().copied().fold(0.0, f64::max);
        // The finest unit that keeps the largest value under five integer digits.
        let (div, label, least) = if max < 9_999.5 {
            (1.0, "ns", 0)
        } else if max < 9_999_950.0 {
            (1e3, "us", 1)
        } else if max < 9_999_950_000.0 {
            (1e6, "ms", 1)
        } else {
            (1e9, "s", 3)
        };
        if shown.is_empty() {
            // Nothing but zeros (or nothing measured): ms, as a disk's times would be.
            return ColumnUnit {
                div: 1e6,
                label: "ms",
                decimals: 1,
            };
        }
        let min = shown.iter().copied().fold(f64::INFINITY, f64::min) / div;
        let needed = match min.is_finite() && label != "ns" {
            true => (1.0 - min.log10().floor()).max(0.0) as usize,
            false => 0,
        };
        ColumnUnit {
            div,
            label,
            decimals: least.max(needed).min(3),
        }
    }

    /// `ns` in this unit, without the unit's name (`-` when not finite).
    pub fn show(&self, ns: f64) -> String {
        match ns.is_finite() {
            true => format!("{:.*}", self.decimals, ns / self.div),
            false => "-".to_string(),
        }
    }
}

/// [`adaptive_ns`] without the space, for `key=value` lines: `812ns`, `38.1us`, `1.250s`.
fn compact_ns(ns: f64) -> String {
    adaptive_ns(ns).replace(' ', "")
}

/// Widest line the memory lines produce.
const WIDTH: usize = 80;

/// Writes `items` as `  label        : a, b, c` lines of at most [`WIDTH`] columns, repeating
/// the label on each line as fio's `lat (usec)   :` lines do (an item wider than a line gets a
/// line of its own).
fn kv_lines(label: &str, items: &[String], s: &mut String) {
    wrap_items(&format!("  {label:<13}: "), items, s);
}

/// Writes `items` after `prefix`, separated by `, `, starting a new line (with the prefix
/// again) before an item that would pass [`WIDTH`] columns.
fn wrap_items(prefix: &str, items: &[String], s: &mut String) {
    let width = |l: &str| l.chars().count();
    let mut line = prefix.to_string();
    for item in items {
        if width(&line) > width(prefix) {
            if width(&line) + 2 + width(item) > WIDTH {
                s.push_str(&line);
                s.push('\n');
                line = prefix.to_string();
            } else {
                line.push_str(", ");
            }
        }
        line.push_str(item);
    }
    if width(&line) > width(prefix) {
        s.push_str(&line);
        s.push('\n');
    }
}

/// `mean±σ` of a summary in a unit of `div` ns (or 1 for plain numbers), both with the
/// decimals the mean needs for about four significant digits (at most `max_dec`).
fn mean_sd(x: &Summary, div: f64, max_dec: usize) -> String {
    let (m, sd) = (x.mean / div, x.stddev / div);
    let dec = match m.abs() {
        a if a >= 1000.0 => 0,
        a if a >= 100.0 => 1,
        a if a >= 10.0 => 2,
        _ => 3,
    }
    .min(max_dec);
    format!("{m:.dec$}±{sd:.dec$}")
}

/// The spread lines of a direction: fio's single values as mean ± σ across replications,
/// in the units the block above uses for them.
fn spread_lines(d: &DirectionReport, sp: &DirSpread, reps: usize, s: &mut String) {
    let lat_unit = lat_line_unit(d.lat.min_ns, d.lat.max_ns, d.lat.stddev_ns);
    let (cmin, cmax) = match (d.clat.percentiles_ns.first(), d.clat.percentiles_ns.last()) {
        (Some(&lo), Some(&hi)) => (lo, hi),
        _ => (d.clat.min_ns, d.clat.max_ns),
    };
    let pct_unit = percentile_unit(cmin, cmax);
    let mut items = vec![
        format!("IOPS={}", mean_sd(&sp.iops, 1.0, 1)),
        format!("BW={}KiB/s", mean_sd(&sp.bw_kib_s, 1.0, 1)),
        format!(
            "lat avg={}{}",
            mean_sd(&sp.lat_mean_ns, lat_unit.divisor() as f64, 2),
            lat_unit.label()
        ),
    ];
    for (p, x) in &sp.clat_ns {
        items.push(format!(
            "clat p{p}={}{}",
            mean_sd(x, pct_unit.divisor() as f64, 2),
            pct_unit.label()
        ));
    }
    wrap_items(&format!("   ±σ {reps:>3} reps: "), &items, s);
}

/// Whole milliseconds, rounded to nearest.
fn ms_rounded(ns: u64) -> u64 {
    ns.saturating_add(500_000) / 1_000_000
}

fn legend(r: &Report, s: &mut String) {
    let _ = writeln!(s, "qsim {}: scenario {}", r.qsim_version, r.scenario);
    if !r.description.is_empty() {
        s.push_str(&fit::fill(&r.description, fit::WIDTH));
    }
    let policies: Vec<String> = r.policies.iter().map(|p| shown(&p.policy)).collect();
    let head = format!(
        "seed={}, duration={}, warm-up={} (excluded)",
        r.seed,
        SimDuration::from_ns(r.duration_ns),
        SimDuration::from_ns(r.warmup_ns),
    );
    if r.variants.is_empty() {
        let _ = writeln!(s, "{head}, policies: {}", policies.join(", "));
    } else {
        variants_header(r, &head, s);
    }
    if r.policies.iter().any(|p| shown(&p.policy) != p.policy) {
        let key = format!(
            "Runs with dm-crypt flags are named by the flags' codes (sc+nr is \
             dm-crypt+same_cpu_crypt+no_read_workqueue): {}.",
            super::flags::code_key()
        );
        s.push_str(&fit::fill(&key, fit::WIDTH));
    }
    s.push('\n');
    s.push_str(&fit::fill(
        "Legend: slat is the time from issue until dm-crypt accepted the bio (the block layer,\n\
         for policy \"none\"), clat the time from there to completion, and lat = slat + clat.\n\
         Percentiles are midpoints of fio's histogram buckets (within 0.8%). The \"lat (usec)\"\n\
         lines count clat as a share of all completed I/Os. IOPS, BW and runtime cover the\n\
         measured window (warm-up excluded); bw and iops lines summarise 500 ms samples of\n\
         simulated time. Run status takes each block as one job. Disk stats are the disk\n\
         beneath dm-crypt: ticks from queue insertion to completion, util the time with a\n\
         request on the device; merge=0/0, as the model never merges requests.\n",
        fit::WIDTH,
    ));
    if r.policies.iter().any(|p| !p.finite_jobs.is_empty()) {
        s.push_str(&fit::fill(
            "Finite jobs (io_size, number_ios) stop issuing once their work is issued; a run\n\
             ends when every one has completed its I/O, or at its duration. elapsed is a job's\n\
             time from its start (startdelay) to its last completion, io and ios its completed\n\
             work, warm-up included.\n",
            fit::WIDTH,
        ));
    }
    if r.policies.iter().any(|p| p.memory.is_some()) {
        s.push_str(&fit::fill(
            "Memory lines count from the warm-up's end, in pages of the one zone modelled;\n\
             cwait is time in congestion_wait (or wait_iff_congested) per queue class, early\n\
             the share of waits ended by congestion clearing, free_at_fail the mean free\n\
             pages at a GFP_ATOMIC failure, stalls the direct-reclaim stalls (allocstall).\n",
            fit::WIDTH,
        ));
    }
}

/// The header line of a scenario with variants: how many variants and policies ran, then the
/// variants and their policies.
fn variants_header(r: &Report, head: &str, s: &mut String) {
    let first = &r.variants[0].policies;
    let same = r.variants.iter().all(|v| &v.policies == first);
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let runs = plural(r.policies.len(), "run");
    let variants = plural(r.variants.len(), "variant");
    if same {
        let policies = match first.len() {
            1 => "1 policy".to_string(),
            n => format!("{n} policies"),
        };
        let _ = writeln!(s, "{head}, {variants} x {policies} = {runs}");
        let names: Vec<&str> = r.variants.iter().map(|v| v.name.as_str()).collect();
        wrapped_list("variants: ", &names, ',', s);
        let policies: Vec<String> = first.iter().map(|p| shown(p)).collect();
        let policies: Vec<&str> = policies.iter().map(String::as_str).collect();
        wrapped_list("policies: ", &policies, ',', s);
    } else {
        let _ = writeln!(s, "{head}, {variants}, {runs}");
        let list: Vec<String> = r
            .variants
            .iter()
            .map(|v| {
                let names: Vec<String> = v.policies.iter().map(|p| shown(p)).collect();
                format!("{} ({})", v.name, names.join(", "))
            })
            .collect();
        let list: Vec<&str> = list.iter().map(String::as_str).collect();
        wrapped_list("variants (policies): ", &list, ';', s);
    }
}

/// `lead` and `items` joined by `sep` and a space, wrapped at [`WIDTH`] columns under the
/// first item.
fn wrapped_list(lead: &str, items: &[&str], sep: char, s: &mut String) {
    let indent = " ".repeat(lead.chars().count());
    let mut line = lead.to_string();
    for (i, item) in items.iter().enumerate() {
        let last = i + 1 == items.len();
        let piece = if last {
            (*item).to_string()
        } else {
            format!("{item}{sep}")
        };
        let fresh = line.chars().count() == indent.len();
        if !fresh && line.chars().count() + 1 + piece.chars().count() > WIDTH {
            s.push_str(&line);
            s.push('\n');
            line.clone_from(&indent);
        } else if !fresh {
            line.push(' ');
        }
        line.push_str(&piece);
    }
    s.push_str(&line);
    s.push('\n');
}

fn policy_block(r: &Report, p: &PolicyReport, opts: &TextOptions, s: &mut String) {
    let _ = writeln!(
        s,
        "{}: (groupid=0, jobs={}): err={:2}: policy={}: seed={}: reps={}",
        r.scenario,
        r.jobs,
        0,
        shown(&p.policy),
        r.seed,
        r.replications
    );
    if !r.description.is_empty() {
        let _ = writeln!(s, "  Description  : [{}]", r.description);
    }
    for (k, d) in p.directions.iter().enumerate() {
        if d.ios > 0 {
            direction_block(r, d, opts, s);
            if let Some(sp) = &p.spread
                && let Some(ds) = &sp.directions[k]
            {
                spread_lines(d, ds, sp.replications, s);
            }
        }
    }
    let lat = &p.latency_pct;
    s.push_str(&lat_share_lines(
        TimeUnit::Nsec,
        &LAT_LABELS_NU,
        &lat.nsec_pct,
    ));
    s.push_str(&lat_share_lines(
        TimeUnit::Usec,
        &LAT_LABELS_NU,
        &lat.usec_pct,
    ));
    s.push_str(&lat_share_lines(
        TimeUnit::Msec,
        &LAT_LABELS_M,
        &lat.msec_pct,
    ));
    let d = &p.depth_pct;
    let _ = writeln!(
        s,
        "  IO depths    : 1={:3.1}%, 2={:3.1}%, 4={:3.1}%, 8={:3.1}%, 16={:3.1}%, 32={:3.1}%, >=64={:3.1}%",
        d[0], d[1], d[2], d[3], d[4], d[5], d[6]
    );
    let (read, write) = (p.direction(Direction::Read), p.direction(Direction::Write));
    let _ = writeln!(
        s,
        "     issued rwts: total={},{},0,0 short=0,0,0,0 dropped={},{},0,0",
        read.issued, write.issued, read.dropped, write.dropped
    );
    qsim_lines(r, p, s);
    for d in &p.directions {
        if d.ios > 0 {
            s.push('\n');
            stage_table(r, d, s);
        }
    }
    status::status_lines(r, p, s);
}

fn direction_block(r: &Report, d: &DirectionReport, opts: &TextOptions, s: &mut String) {
    let iops = u128::from(d.ios) * 1000 / u128::from(d.runtime_ms.max(1));
    let iops = u64::try_from(iops).unwrap_or(u64::MAX);
    let _ = writeln!(
        s,
        "  {}: IOPS={}, BW={} ({})({}/{}msec)",
        d.direction.name(),
        num2str(iops, 4, 1, false, N2sUnit::None),
        num2str(d.bw_bytes_per_s, 4, 1, true, N2sUnit::BytePerSec),
        num2str(d.bw_bytes_per_s, 4, 1, false, N2sUnit::BytePerSec),
        num2str(d.bytes, 4, 1, true, N2sUnit::Byte),
        d.runtime_ms
    );
    for (name, l) in [("slat", &d.slat), ("clat", &d.clat), (" lat", &d.lat)] {
        if l.n > 0 {
            s.push_str(&lat_line(name, l.min_ns, l.max_ns, l.mean_ns, l.stddev_ns));
        }
    }
    let (name, shown) = if opts.lat_percentiles {
        ("lat", &d.lat)
    } else {
        ("clat", &d.clat)
    };
    if shown.n > 0 {
        s.push_str(&percentile_block(
            name,
            &r.percentile_list,
            &shown.percentiles_ns,
            PERCENTILE_PRECISION,
        ));
    }
    let bw = &d.bw_kib_s;
    if bw.samples > 0 {
        // fio keeps min and max as integers and switches to MiB once the mean passes 1 GiB/s.
        let (mut min, mut max, mut mean, mut dev) =
            (bw.min as u64, bw.max as u64, bw.mean, bw.stddev);
        let mut unit = "KiB";
        if mean > 1024.0 * 1024.0 {
            min = (min as f64 / 1024.0) as u64;
            max = (max as f64 / 1024.0) as u64;
            mean /= 1024.0;
            dev /= 1024.0;
            unit = "MiB";
        }
        let _ = writeln!(
            s,
            "   bw ({unit:>5}/s): min={min:5}, max={max:5}, per={:3.2}%, avg={mean:5.2}, stdev={dev:5.2}, samples={}",
            d.bw_agg_pct, bw.samples
        );
    }
    let io = &d.iops_samples;
    if io.samples > 0 {
        let _ = writeln!(
            s,
            "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}",
            io.min as u64, io.max as u64, io.mean, io.stddev, io.samples
        );
    }
}

/// An elapsed time: `23.41s`, or with an adaptive unit below a second (`100.0ms`).
fn elapsed_text(ns: u64) -> String {
    if ns >= 1_000_000_000 {
        format!("{:.2}s", ns as f64 / 1e9)
    } else {
        compact_ns(ns as f64)
    }
}

/// `23.41s (io=64.0MiB, ios=16384)`, or `unfinished at 300s (io=12.3MiB of 64.0MiB, ...)`.
fn finite_job_text(j: &FiniteJobReport, end_ns: u64) -> String {
    let bytes = |b: u64| num2str(b, 4, 1, true, N2sUnit::Byte);
    let io = match j.io_size {
        Some(limit) if j.elapsed_ns.is_none() => format!("{} of {}", bytes(j.bytes), bytes(limit)),
        _ => bytes(j.bytes),
    };
    let ios = match j.number_ios {
        Some(limit) if j.elapsed_ns.is_none() => format!("{} of {limit}", j.ios),
        _ => j.ios.to_string(),
    };
    let time = match j.elapsed_ns {
        Some(ns) => elapsed_text(ns),
        None => format!("unfinished at {}", SimDuration::from_ns(end_ns)),
    };
    format!("{time} (io={io}, ios={ios})")
}

fn qsim_lines(r: &Report, p: &PolicyReport, s: &mut String) {
    finite_lines(p, s);
    device_lines(p, s);
    metrics_line(p, s);
    if let Some(m) = &p.memory {
        memory::memory_lines(m, s);
    }
    memory_spread_lines(p, s);
    stop_lines(r, p, s);
}

/// The finite jobs' elapsed times (with replications, their spread first).
fn finite_lines(p: &PolicyReport, s: &mut String) {
    let named = p.finite_jobs.len() > 1;
    // With replications the block pools them all, but a job's elapsed time is one
    // replication's: say which, and give the spread across all of them first.
    let label = match p
        .spread
        .as_ref()
        .and_then(|sp| sp.elapsed.as_ref().map(|e| (sp, e)))
    {
        Some((sp, e)) => {
            let n = sp.replications;
            let text = match &e.seconds {
                Some(x) => format!("elapsed={}s", mean_sd(x, 1.0, 2)),
                None => format!(
                    "elapsed=unfinished in {} of {n} replications",
                    n - e.finished
                ),
            };
            kv_lines(&format!("±σ {n} reps"), &[text], s);
            "elapsed rep0"
        }
        None => "elapsed",
    };
    for j in &p.finite_jobs {
        let text = finite_job_text(j, p.end_ns);
        if named {
            let _ = writeln!(s, "  {label:<13}: {}: {text}", j.name);
        } else {
            let _ = writeln!(s, "  {label:<13}: {text}");
        }
    }
}

/// Congestion waits, block-layer counters, writeback, the CPU pool and the crypt queue.
fn device_lines(p: &PolicyReport, s: &mut String) {
    let (sync, asyn) = (&p.congestion[0], &p.congestion[1]);
    let _ = writeln!(
        s,
        "  congestion   : sync_waits={} ({}ms), async_waits={} ({}ms), early={:.1}%",
        sync.waits,
        ms_rounded(sync.total_ns),
        asyn.waits,
        ms_rounded(asyn.total_ns),
        p.congestion_early_pct
    );
    let b = &p.block;
    let _ = writeln!(
        s,
        "  block        : congested_ms={}/{}, pool_sleeps={}/{}, clears={}/{} (sync/async), \
         unplugs={}/{} (timer/threshold), dispatched={}, util={:3.2}%",
        ms_rounded(b.congested_ns[0]),
        ms_rounded(b.congested_ns[1]),
        b.pool_sleeps[0],
        b.pool_sleeps[1],
        b.clears[0],
        b.clears[1],
        b.timer_unplugs,
        b.threshold_unplugs,
        b.dispatched,
        b.device_util_pct
    );
    if b.ncq_estimates[0] > 0 {
        let _ = writeln!(
            s,
            "  cfq hw_tag   : estimates={}, cleared={} (the disk taken as not queueing)",
            b.ncq_estimates[0], b.ncq_estimates[1]
        );
    }
    if b.cfq_coop != [0, 0] {
        let _ = writeln!(
            s,
            "  cfq coop     : jumps={}, preempts={} (a close queue ran instead of idling)",
            b.cfq_coop[0], b.cfq_coop[1]
        );
    }
    let w = &p.writeback;
    if w.dirtied_bytes > 0 || w.written_back_bytes > 0 || w.throttled_ns > 0 || p.memory.is_some() {
        let _ = writeln!(
            s,
            "  writeback    : dirtied={}, written={}, throttled={}ms",
            num2str(w.dirtied_bytes, 4, 1, true, N2sUnit::Byte),
            num2str(w.written_back_bytes, 4, 1, true, N2sUnit::Byte),
            ms_rounded(w.throttled_ns)
        );
    }
    let _ = writeln!(s, "  cpu          : util={:3.2}%", p.cpu_util_pct);
    if let Some(c) = &p.cpu {
        cpu_lines(s, c);
    }
    app_cpu_lines(p, s);
    let _ = writeln!(
        s,
        "  crypt queue  : avg={:.2}, max={}",
        p.crypt_queue_len_avg, p.crypt_queue_len_max
    );
}

/// The application's CPU time by workload, in percent of one CPU (workloads that used some;
/// nothing when none did): `app cpu : total=…%, reader=…%, app=…% (cpuio ×6)`.
fn app_cpu_lines(p: &PolicyReport, s: &mut String) {
    if p.app_cpu.is_empty() {
        return;
    }
    let total: f64 = p.app_cpu.iter().map(|a| a.pct).sum();
    let mut items = vec![format!("total={}%", super::replications::num(total))];
    for a in p.app_cpu.iter().filter(|a| a.pct > 0.0) {
        let what = match (a.cpuio, a.copies) {
            (true, 1) => " (cpuio)".to_string(),
            (true, n) => format!(" (cpuio ×{n})"),
            (false, 1) => String::new(),
            (false, n) => format!(" (×{n})"),
        };
        items.push(format!(
            "{}={}%{what}",
            a.workload,
            super::replications::num(a.pct)
        ));
    }
    kv_lines("app cpu", &items, s);
}

/// The registry's metrics that ask for a place in the block ([`super::metrics::Metric::in_block`]),
/// as `key=value` (the key carries the unit); nothing when none does.
fn metrics_line(p: &PolicyReport, s: &mut String) {
    kv_lines("metrics", &metric_items(p.metrics.in_block()), s);
}

/// `key=value` items of `rows` (a `-` for a value not measured).
fn metric_items<'a>(rows: impl Iterator<Item = (&'a super::metrics::Metric, f64)>) -> Vec<String> {
    rows.map(|(m, v)| {
        let value = if v.is_finite() {
            super::replications::num(v)
        } else {
            "-".to_string()
        };
        format!("{}={value}", m.key)
    })
    .collect()
}

/// The memory headline figures' spread across replications (with two or more).
fn memory_spread_lines(p: &PolicyReport, s: &mut String) {
    if let Some(sp) = &p.spread
        && let (Some(f), Some([cs, ca])) = (&sp.atomic_failures, &sp.kswapd_cwait_s)
    {
        kv_lines(
            &format!("±σ {} reps", sp.replications),
            &[
                format!("gfp_atomic_failures={}", mean_sd(f, 1.0, 1)),
                format!("kswapd_cwait_sync={}s", mean_sd(cs, 1.0, 2)),
                format!("kswapd_cwait_async={}s", mean_sd(ca, 1.0, 2)),
            ],
            s,
        );
    }
}

/// Why the run stopped short of its window, when it did.
fn stop_lines(r: &Report, p: &PolicyReport, s: &mut String) {
    if p.end == crate::model::base::obs::RunEnd::TimeLimit {
        let _ = writeln!(
            s,
            "  time limit   : stopped by --time-limit after {} of the {} window; not reproducible",
            SimDuration::from_ns(p.measured_ns / u64::from(p.replications.max(1))),
            SimDuration::from_ns(r.duration_ns.saturating_sub(r.warmup_ns))
        );
    }
    if p.saturated() {
        let planned = r.duration_ns.saturating_sub(r.warmup_ns);
        let _ = writeln!(
            s,
            "  budget       : stopped at the work budget (max_events={}) after {} of the {} window; \
             figures cover that part only",
            r.max_events,
            // Pooled replications: one replication's mean window.
            SimDuration::from_ns(p.measured_ns / u64::from(p.replications.max(1))),
            SimDuration::from_ns(planned)
        );
    }
}

/// The value of percentile `p` in `l`, if `p` is in the report's list.
fn percentile_of(r: &Report, l: &LatencySummary, p: f64) -> Option<u64> {
    r.percentile_list
        .iter()
        .position(|&q| q == p)
        .and_then(|i| l.percentiles_ns.get(i).copied())
}

/// Right-aligns every column but the first, which is left-aligned; two spaces between columns.
/// The first row is the header.
fn table(rows: &[Vec<String>], indent: &str, s: &mut String) {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let head = rows.first().cloned().unwrap_or_default();
    let mut t = Table::new(indent.len()).stackable();
    for c in 0..cols {
        let h = head.get(c).map_or("", String::as_str);
        t = t.column(h, if c == 0 { Align::Left } else { Align::Right });
    }
    for r in rows.iter().skip(1) {
        t.row(r);
    }
    s.push_str(&t.render(fit::WIDTH));
}

fn stage_table(r: &Report, d: &DirectionReport, s: &mut String) {
    let _ = writeln!(
        s,
        "  where the time went ({}: {} I/Os, share of total latency):",
        d.direction.name(),
        d.ios
    );
    let p99_total = percentile_of(r, &d.lat, 99.0).map(|v| v as f64);
    let means = ColumnUnit::of(d.stages.iter().map(|st| st.mean_ns).chain([d.lat.mean_ns]));
    let p99s = ColumnUnit::of(d.stages.iter().map(|st| st.p99_ns as f64).chain(p99_total));
    let mut rows = vec![vec![
        "stage".to_string(),
        format!("mean ({})", means.label),
        format!("p99 ({})", p99s.label),
        "share".to_string(),
    ]];
    for st in &d.stages {
        rows.push(vec![
            st.label.clone(),
            means.show(st.mean_ns),
            p99s.show(st.p99_ns as f64),
            format!("{:.1}%", st.share_pct),
        ]);
    }
    let total_share: f64 = d.stages.iter().map(|st| st.share_pct).sum();
    rows.push(vec![
        "total (lat)".to_string(),
        means.show(d.lat.mean_ns),
        p99_total.map_or("-".to_string(), |v| p99s.show(v)),
        format!("{total_share:.1}%"),
    ]);
    table(&rows, "    ", s);
}

fn comparison(r: &Report, s: &mut String) {
    const PCTS: [f64; 4] = [50.0, 99.0, 99.9, 99.99];
    // The block's own values, so the two never disagree; none without reads.
    let clat = |p: &PolicyReport, q: f64| {
        let read = p.direction(Direction::Read);
        (read.ios > 0)
            .then(|| percentile_of(r, &read.clat, q))
            .flatten()
            .map(|ns| ns as f64)
    };
    let unit = ColumnUnit::of(
        r.policies
            .iter()
            .flat_map(|p| PCTS.map(|q| clat(p, q)))
            .flatten(),
    );
    let _ = writeln!(
        s,
        "Comparison (read clat percentiles in {}, read IOPS, write throughput):",
        unit.label
    );
    let mut t = Table::new(2).column("policy", Align::Left).stackable();
    for h in [
        "p50",
        "p99",
        "p99.9",
        "p99.99",
        "read\nIOPS",
        "write\nMiB/s",
    ] {
        t = t.column(h, Align::Right);
    }
    if r.policies.iter().any(|p| p.saturated()) {
        t = t.column("", Align::Left);
    }
    for p in &r.policies {
        let read = p.direction(Direction::Read);
        let write = p.direction(Direction::Write);
        let mut row = vec![shown(&p.policy)];
        row.extend(PCTS.map(|q| clat(p, q).map_or("-".to_string(), |ns| unit.show(ns))));
        row.push(format!("{:.0}", read.iops));
        row.push(format!(
            "{:.2}",
            write.bw_bytes_per_s as f64 / (1024.0 * 1024.0)
        ));
        if p.saturated() {
            row.push("budget".to_string());
        }
        t.row(row);
    }
    s.push_str(&t.render(fit::WIDTH));
}

fn warnings(r: &Report, s: &mut String) {
    if r.warnings.is_empty() {
        return;
    }
    s.push_str("\nWarnings:\n");
    for w in &r.warnings {
        let _ = writeln!(s, "  {}", warning_text(w));
    }
}

/// The warning for open-loop arrivals dropped at the iodepth cap: saturation when they are a
/// sustained share of the arrivals, else a transient.
fn overloaded_text(policy: &str, dropped: u64, issued: u64, sustained: bool) -> String {
    let arrivals = dropped + issued;
    let pct = dropped as f64 / arrivals.max(1) as f64 * 100.0;
    if sustained {
        format!(
            "{policy}: saturated: {dropped} of {arrivals} open-loop arrivals ({pct:.2}%) were \
             dropped at the iodepth cap; the offered rate is at or beyond what this policy \
             serves. Lower the rate, or raise iodepth to see how deep the queue grows."
        )
    } else {
        format!(
            "{policy}: {dropped} of {arrivals} open-loop arrivals ({pct:.2}%) were dropped at \
             the iodepth cap. Under {SUSTAINED_DROP_PERCENT}% is a transient such as a burst or \
             a device pause, not an overload. The latencies lack those waits; raise iodepth to \
             keep them."
        )
    }
}

/// One-line text of a warning with a hint that uses the scenario's own settings.
pub fn warning_text(w: &Warning) -> String {
    match w {
        Warning::WorkBudget {
            policy,
            measured_ns,
            planned_ns,
            max_events,
        } => format!(
            "{policy}: stopped at the work budget (max_events={max_events}: events, allocation \
             attempts and pages scanned) after {} of the {} measured window; the figures cover that \
             part only. The budget bounds the simulation's cost and says nothing of overload by \
             itself. Raise max_events or shorten duration.",
            SimDuration::from_ns(*measured_ns),
            SimDuration::from_ns(*planned_ns)
        ),
        Warning::TimeLimit {
            policy,
            measured_ns,
            planned_ns,
        } => format!(
            "{policy}: stopped by the wall-clock limit (--time-limit) after {} of the {} measured \
             window; how far it got depends on this machine's speed, so these figures do not \
             reproduce. Raise --time-limit, or shorten duration or replications.",
            SimDuration::from_ns(*measured_ns),
            SimDuration::from_ns(*planned_ns)
        ),
        Warning::Overloaded {
            policy,
            dropped,
            issued,
            sustained,
        } => overloaded_text(policy, *dropped, *issued, *sustained),
        Warning::Unfinished {
            policy,
            job,
            end_ns,
            ios,
            bytes,
            io_size,
            number_ios,
        } => {
            let size = |b: u64| num2str(b, 4, 1, true, N2sUnit::Byte);
            let mut done = vec![match io_size {
                Some(limit) => format!("{} of its io_size {}", size(*bytes), size(*limit)),
                None => size(*bytes),
            }];
            done.push(match number_ios {
                Some(limit) => format!("{ios} of its number_ios {limit}"),
                None => format!("{ios} I/Os"),
            });
            format!(
                "{policy}: {job} did not finish before the run ended at {} (it completed {}); \
                 its elapsed time is unknown, not a number (NaN in the replication summary). \
                 Raise duration, or lower io_size / number_ios.",
                SimDuration::from_ns(*end_ns),
                done.join(", ")
            )
        }
        Warning::HistogramClipped {
            policy,
            count,
            limit_ns,
        } => format!(
            "{policy}: {count} latencies at or above {} landed in the histogram's last bucket; \
             percentiles that high read low (min, max and mean stay exact).",
            SimDuration::from_ns(*limit_ns)
        ),
    }
}

#[cfg(test)]
mod tests;

/// The per-CPU machine's CPU time: by context, then by CPU (percent of one CPU), wrapped.
fn cpu_lines(s: &mut String, c: &super::CpuReport) {
    let ctx: Vec<String> = c
        .by_context
        .iter()
        .map(|(name, pct)| format!("{name}={pct:.1}%"))
        .collect();
    wrap_list(s, "  cpu by ctx   : ", &ctx);
    let cpus: Vec<String> = c
        .by_cpu
        .iter()
        .enumerate()
        .map(|(i, pct)| format!("{i}={pct:.0}%"))
        .collect();
    wrap_list(s, "  cpu by CPU   : ", &cpus);
    let _ = writeln!(
        s,
        "  cpu balance  : idle beside waiting threads={:.1}% (no task migrates in qsim)",
        c.idle_beside_waiting
    );
}

/// `items` after `head`, comma-separated, continued under the first item past 80 columns.
fn wrap_list(s: &mut String, head: &str, items: &[String]) {
    let mut line = head.to_string();
    for (i, item) in items.iter().enumerate() {
        let sep = if i + 1 < items.len() { ", " } else { "" };
        if line.len() + item.len() + sep.len() > 80 && line.len() > head.len() {
            let _ = writeln!(s, "{}", line.trim_end());
            line = " ".repeat(head.len());
        }
        line.push_str(item);
        line.push_str(sep);
    }
    let _ = writeln!(s, "{line}");
}
