//! Text renderer: a legend, one fio "normal"-style block per policy (fio 3.x formats, then
//! qsim's own `  label        : k=v` lines and a "where the time went" table per direction), a
//! comparison table across policies and the warnings.
//!
//! Layout rules are those of `OUTPUT.md` §1 and fio's `stat.c`; the fio-exact pieces live in
//! [`super::fiofmt`]. Everything is built in a string and written once.

use super::fiofmt::{
    LAT_LABELS_M, LAT_LABELS_NU, N2sUnit, TimeUnit, lat_line, lat_line_unit, lat_share_lines,
    num2str, percentile_block, percentile_unit,
};
use super::spread::DirSpread;
use super::{
    CallerWaitsReport, Direction, DirectionReport, FiniteJobReport, LatencySummary, MemoryReport,
    PERCENTILE_PRECISION, PolicyReport, Report, Warning,
};
use crate::engine::SimDuration;
use crate::stats::Summary;
use std::fmt::Write as _;
use std::io;

/// Choices of the text renderer.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextOptions {
    /// Show total-latency percentiles instead of clat ones (fio's `lat_percentiles=1`).
    pub lat_percentiles: bool,
}

/// Writes the whole report with default options.
pub fn render(report: &Report, out: &mut dyn io::Write) -> io::Result<()> {
    render_with(report, &TextOptions::default(), out)
}

/// Writes the whole report: legend, one block per policy, comparison table, warnings.
pub fn render_with(report: &Report, opts: &TextOptions, out: &mut dyn io::Write) -> io::Result<()> {
    let mut s = String::new();
    legend(report, &mut s);
    for policy in &report.policies {
        s.push('\n');
        policy_block(report, policy, opts, &mut s);
    }
    s.push('\n');
    comparison(report, &mut s);
    memory_comparison(report, &mut s);
    warnings(report, &mut s);
    out.write_all(s.as_bytes())
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
        let _ = writeln!(s, "{}", r.description);
    }
    let policies: Vec<&str> = r.policies.iter().map(|p| p.policy.as_str()).collect();
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
    s.push('\n');
    s.push_str(
        "Legend: slat is the time from issue until dm-crypt accepted the bio (the block layer,\n\
         for policy \"none\"), clat the time from there to completion, and lat = slat + clat.\n\
         Percentiles are midpoints of fio's histogram buckets (within 0.8%). The \"lat (usec)\"\n\
         lines count clat as a share of all completed I/Os. IOPS, BW and runtime cover the\n\
         measured window (warm-up excluded); bw and iops lines summarise 500 ms samples of\n\
         simulated time.\n",
    );
    if r.policies.iter().any(|p| !p.finite_jobs.is_empty()) {
        s.push_str(
            "Finite jobs (io_size, number_ios) stop issuing once their work is issued; a run\n\
             ends when every one has completed its I/O, or at its duration. elapsed is a job's\n\
             time from its start (startdelay) to its last completion, io and ios its completed\n\
             work, warm-up included.\n",
        );
    }
    if r.policies.iter().any(|p| p.memory.is_some()) {
        s.push_str(
            "Memory lines count from the warm-up's end, in pages of the one zone modelled;\n\
             cwait is time in congestion_wait (or wait_iff_congested) per queue class, early\n\
             the share of waits ended by congestion clearing, free_at_fail the mean free\n\
             pages at a GFP_ATOMIC failure, stalls the direct-reclaim stalls (allocstall).\n",
        );
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
        let policies: Vec<&str> = first.iter().map(String::as_str).collect();
        wrapped_list("policies: ", &policies, ',', s);
    } else {
        let _ = writeln!(s, "{head}, {variants}, {runs}");
        let list: Vec<String> = r
            .variants
            .iter()
            .map(|v| format!("{} ({})", v.name, v.policies.join(", ")))
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
        r.scenario, r.jobs, 0, p.policy, r.seed, r.replications
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
    let _ = writeln!(
        s,
        "  crypt queue  : avg={:.2}, max={}",
        p.crypt_queue_len_avg, p.crypt_queue_len_max
    );
    if let Some(m) = &p.memory {
        memory_lines(m, s);
    }
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
    if p.end == crate::model::observe::RunEnd::TimeLimit {
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

/// `sync=N (Tms), async=N (Tms), early=E%, skipped=S`: waits and time per queue class, as the
/// `congestion` line has them.
fn cwait_items(w: &CallerWaitsReport) -> Vec<String> {
    let mut items: Vec<String> = w
        .class
        .iter()
        .map(|c| format!("{}={} ({}ms)", c.class, c.waits, ms_rounded(c.total_ns)))
        .collect();
    items.push(format!("early={:.1}%", w.early_pct));
    items.push(format!("skipped={}", w.skipped));
    items
}

/// The memory model's lines of a policy block (MODEL.md §11), each at most 80 columns.
fn memory_lines(m: &MemoryReport, s: &mut String) {
    kv_lines(
        "memory",
        &[
            format!("pages={}", m.total_pages),
            format!("min={}", m.min),
            format!("low={}", m.low),
            format!("high={}", m.high),
            format!("atomic_floor={}", m.atomic_floor),
        ],
        s,
    );
    kv_lines(
        "free pages",
        &[
            format!("min={}", m.free_min_seen),
            format!("avg={:.0}", m.free_avg),
            format!(
                "below_min={}ms ({:.2}%)",
                ms_rounded(m.below_min_ns),
                m.below_min_pct
            ),
        ],
        s,
    );
    let pct = |n: u64, of: u64| {
        if of == 0 {
            0.0
        } else {
            n as f64 * 100.0 / of as f64
        }
    };
    kv_lines(
        "gfp_atomic",
        &[
            format!("attempts={}", m.atomic_attempts_total),
            format!(
                "failures={} ({:.2}%)",
                m.atomic_failures_total,
                pct(m.atomic_failures_total, m.atomic_attempts_total)
            ),
            format!("fail_rate={:.2}/s", m.atomic_failures_per_s),
        ],
        s,
    );
    for (order, &attempts) in m.atomic_attempts.iter().enumerate() {
        if attempts == 0 {
            continue;
        }
        let failures = m.atomic_failures.get(order).copied().unwrap_or(0);
        let mut items = vec![
            format!("attempts={attempts}"),
            format!("failures={failures} ({:.2}%)", pct(failures, attempts)),
        ];
        if failures > 0 {
            let avg = m.atomic_fail_free_avg.get(order).copied().unwrap_or(0.0);
            items.push(format!("free_at_fail={avg:.0}"));
        }
        kv_lines(&format!("gfp_atomic o{order}"), &items, s);
    }
    kv_lines(
        "kswapd",
        &[
            format!("wakeups={}", m.kswapd_wakeups),
            format!(
                "awake={}ms ({:.2}%)",
                ms_rounded(m.kswapd_awake_ns),
                m.kswapd_awake_pct
            ),
            format!("passes={}", m.kswapd_passes),
            format!("scanned={}", m.kswapd_scanned),
            format!("reclaimed={}", m.kswapd_reclaimed),
            format!("skip_below_min={}", m.kswapd_skips),
            format!("premature_low={}", m.low_wmark_hit_quickly),
            format!("premature_high={}", m.high_wmark_hit_quickly),
            format!("order0_fallbacks={}", m.order0_fallbacks),
        ],
        s,
    );
    kv_lines("kswapd cwait", &cwait_items(&m.kswapd_waits), s);
    let st = &m.direct_stall;
    // Stalls with their total time, as `congestion` shows waits, so the percentiles fit too.
    let mut direct = vec![format!(
        "stalls={} ({}ms)",
        m.direct_stalls,
        ms_rounded(st.total_ns)
    )];
    if st.n > 0 {
        direct.push(format!("p50={}", compact_ns(st.p50_ns as f64)));
        direct.push(format!("p99={}", compact_ns(st.p99_ns as f64)));
        direct.push(format!("p99.9={}", compact_ns(st.p99_9_ns as f64)));
    }
    kv_lines("direct", &direct, s);
    kv_lines(
        "direct",
        &[
            format!("scanned={}", m.direct_scanned),
            format!("reclaimed={}", m.direct_reclaimed),
            format!("pageout={}", m.pageout_pages),
        ],
        s,
    );
    kv_lines("direct cwait", &cwait_items(&m.direct_waits), s);
    kv_lines(
        "bounce",
        &[
            format!("from_zone={}", m.bounce_from_zone),
            format!("from_reserve={}", m.bounce_from_reserve),
            format!(
                "mempool_waits={} ({}ms)",
                m.mempool_waits,
                ms_rounded(m.mempool_wait_ns)
            ),
            format!(
                "partial_clones={} ({}ms)",
                m.partial_clones,
                ms_rounded(m.partial_nap_ns)
            ),
        ],
        s,
    );
    let e = &m.end_pages;
    kv_lines(
        "pages at end",
        &[
            format!("free={}", m.end_free),
            format!("unreclaimable={}", e.unreclaimable),
            format!("clean={}", e.clean),
            format!("dirty={}", e.dirty),
            format!("writeback={}", e.writeback),
            format!("bounce={}", e.bounce),
            format!("atomic={}", e.atomic),
            format!("filling={}", e.filling),
        ],
        s,
    );
    if !m.failure_log.is_empty() {
        let _ = writeln!(
            s,
            "  alloc log    : first {} of {} failures, free: the zone's free pages at each",
            m.failure_log.len(),
            m.atomic_failures_total.max(m.failure_log.len() as u64)
        );
        for f in &m.failure_log {
            // printk's "[%5lu.%06lu] " timestamp; GFP_ATOMIC is mode 0x20 (__GFP_HIGH) in 2.6.3x.
            let _ = writeln!(
                s,
                "  [{:5}.{:06}] swapper: page allocation failure. order:{}, mode:0x20 free:{}",
                f.at_ns / 1_000_000_000,
                f.at_ns % 1_000_000_000 / 1_000,
                f.order,
                f.free
            );
        }
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
fn table(rows: &[Vec<String>], indent: &str, s: &mut String) {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in rows {
        let mut line = String::from(indent);
        for (c, cell) in row.iter().enumerate() {
            if c == 0 {
                let _ = write!(line, "{cell:<w$}", w = widths[0]);
            } else {
                let _ = write!(line, "  {cell:>w$}", w = widths[c]);
            }
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
}

fn stage_table(r: &Report, d: &DirectionReport, s: &mut String) {
    let _ = writeln!(
        s,
        "  where the time went ({}: {} I/Os, share of total latency):",
        d.direction.name(),
        d.ios
    );
    let mut rows = vec![vec![
        "stage".to_string(),
        "mean".to_string(),
        "p99".to_string(),
        "share".to_string(),
    ]];
    for st in &d.stages {
        rows.push(vec![
            st.label.clone(),
            adaptive_ns(st.mean_ns),
            adaptive_ns(st.p99_ns as f64),
            format!("{:.1}%", st.share_pct),
        ]);
    }
    let total_share: f64 = d.stages.iter().map(|st| st.share_pct).sum();
    rows.push(vec![
        "total (lat)".to_string(),
        adaptive_ns(d.lat.mean_ns),
        percentile_of(r, &d.lat, 99.0).map_or("-".to_string(), |v| adaptive_ns(v as f64)),
        format!("{total_share:.1}%"),
    ]);
    table(&rows, "    ", s);
}

fn comparison(r: &Report, s: &mut String) {
    s.push_str("Comparison (read clat percentiles, read IOPS, write throughput):\n");
    let mut rows = vec![
        [
            "policy",
            "p50",
            "p99",
            "p99.9",
            "p99.99",
            "read IOPS",
            "write MiB/s",
        ]
        .iter()
        .map(|h| h.to_string())
        .collect::<Vec<_>>(),
    ];
    let cell = |v: Option<u64>| v.map_or("-".to_string(), |ns| adaptive_ns(ns as f64));
    for c in &r.comparison {
        let mut row = vec![
            c.policy.clone(),
            cell(c.read_clat_ns_p50),
            cell(c.read_clat_ns_p99),
            cell(c.read_clat_ns_p99_9),
            cell(c.read_clat_ns_p99_99),
            format!("{:.0}", c.read_iops),
            format!("{:.2}", c.write_mib_s),
        ];
        if c.saturated {
            row.push("budget".to_string());
        }
        rows.push(row);
    }
    table(&rows, "  ", s);
}

/// With a memory model, a second table: GFP_ATOMIC failures, kswapd's congestion-wait time on
/// the SYNC and ASYNC queues, direct-reclaim stalls and the fewest free pages.
fn memory_comparison(r: &Report, s: &mut String) {
    if r.comparison.iter().all(|c| c.memory.is_none()) {
        return;
    }
    // The blocks pool every replication; this table gives the mean per replication, so its
    // counts read like one run's (and like the replication summary's).
    // The blocks pool every replication; this table gives each run's mean per replication,
    // so its counts read like one run's (and like the replication summary's).
    let pooled = r.policies.iter().any(|p| p.replications > 1);
    if pooled {
        s.push_str(
            "\nMemory per replication (means: atomic failures, kswapd cwait SYNC/ASYNC, direct\n\
             stalls; fewest free pages in any replication):\n",
        );
    } else {
        s.push_str(
            "\nMemory (atomic failures, kswapd cwait SYNC/ASYNC, direct stalls, fewest free):\n",
        );
    }
    let mut rows = vec![
        [
            "policy",
            "atomic fails",
            "cwait sync",
            "cwait async",
            "stalls",
            "free min",
        ]
        .iter()
        .map(|h| h.to_string())
        .collect::<Vec<_>>(),
    ];
    for (c, p) in r.comparison.iter().zip(&r.policies) {
        let reps = u64::from(p.replications.max(1));
        let per = |n: u64| {
            if pooled {
                format!("{:.1}", n as f64 / reps as f64)
            } else {
                n.to_string()
            }
        };
        let row = match &c.memory {
            Some(m) => vec![
                c.policy.clone(),
                per(m.atomic_failures),
                adaptive_ns(m.kswapd_cwait_ns[0] as f64 / reps as f64),
                adaptive_ns(m.kswapd_cwait_ns[1] as f64 / reps as f64),
                per(m.direct_stalls),
                m.free_min_seen.to_string(),
            ],
            None => {
                let mut row = vec![c.policy.clone()];
                row.extend((0..5).map(|_| "-".to_string()));
                row
            }
        };
        rows.push(row);
    }
    table(&rows, "  ", s);
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
        } => format!(
            "{policy}: saturated: {dropped} open-loop arrivals were dropped at the iodepth cap \
             ({issued} issued); the offered rate exceeds what this policy serves. Lower the \
             rate, or raise iodepth to see how deep the queue grows."
        ),
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
mod tests {
    use super::*;
    use crate::model::observe::RunEnd;
    use crate::report::tests::{report, run, run_with_memory, scenario};

    fn rendered(r: &Report) -> String {
        let mut buf = Vec::new();
        render(r, &mut buf).unwrap();
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn adaptive_units() {
        assert_eq!(adaptive_ns(812.0), "812 ns");
        assert_eq!(adaptive_ns(999.6), "1.0 us");
        assert_eq!(adaptive_ns(38_144.0), "38.1 us");
        assert_eq!(adaptive_ns(8_454_144.0), "8.5 ms");
        assert_eq!(adaptive_ns(1_250_000_000.0), "1.250 s");
    }

    #[test]
    fn whole_policy_block() {
        let r = report();
        let mut s = String::new();
        policy_block(&r, &r.policies[0], &TextOptions::default(), &mut s);
        let expected = "\
two-queue: (groupid=0, jobs=1): err= 0: policy=fifo: seed=42: reps=1
  Description  : [reads behind writeback]
  read: IOPS=1, BW=4096B/s (4096B/s)(40.0KiB/10000msec)
    slat (nsec): min=812, max=48213, avg=5942.50, stdev=14856.27
    clat (usec): min=38, max=41870, avg=4514.04, stdev=13147.61
     lat (usec): min=38, max=41918, avg=4519.99, stdev=13162.45
    clat percentiles (usec):
     |  1.00th=[   39],  5.00th=[   39], 10.00th=[   39], 20.00th=[   41],
     | 30.00th=[   52], 40.00th=[   61], 50.00th=[   71], 60.00th=[   90],
     | 70.00th=[  121], 80.00th=[  302], 90.00th=[ 2507], 95.00th=[41681],
     | 99.00th=[41681], 99.50th=[41681], 99.90th=[41681], 99.95th=[41681],
     | 99.99th=[41681]
   bw (  KiB/s): min= 9312, max= 9904, per=100.00%, avg=9622.00, stdev=296.99, samples=3
   iops        : min= 2328, max= 2476, avg=2405.50, stdev=74.25, samples=3
  write: IOPS=0, BW=1638B/s (1638B/s)(16.0KiB/10000msec)
    slat (usec): min=3, max=1650, avg=415.50, stdev=823.00
    clat (msec): min=3, max=212, avg=61.02, stdev=100.89
     lat (msec): min=3, max=213, avg=61.44, stdev=101.71
    clat percentiles (msec):
     |  1.00th=[    4],  5.00th=[    4], 10.00th=[    4], 20.00th=[    4],
     | 30.00th=[    9], 40.00th=[    9], 50.00th=[    9], 60.00th=[   21],
     | 70.00th=[   21], 80.00th=[  213], 90.00th=[  213], 95.00th=[  213],
     | 99.00th=[  213], 99.50th=[  213], 99.90th=[  213], 99.95th=[  213],
     | 99.99th=[  213]
   bw (  KiB/s): min= 4416, max= 5120, per=100.00%, avg=4768.00, stdev=497.80, samples=2
   iops        : min= 1104, max= 1280, avg=1192.00, stdev=124.45, samples=2
  lat (usec)   : 50=14.29%, 100=28.57%, 250=7.14%, 500=7.14%
  lat (msec)   : 4=14.29%, 10=7.14%, 50=14.29%, 250=7.14%
  IO depths    : 1=28.6%, 2=21.4%, 4=35.7%, 8=14.3%, 16=0.0%, 32=0.0%, >=64=0.0%
     issued rwts: total=11,5,0,0 short=0,0,0,0 dropped=0,0,0,0
  congestion   : sync_waits=38 (412ms), async_waits=270 (2911ms), early=13.0%
  block        : congested_ms=12/340, pool_sleeps=3/120, clears=40/210 (sync/async), unplugs=15/230 (timer/threshold), dispatched=36180, util=87.31%
  writeback    : dirtied=300MiB, written=280MiB, throttled=1250ms
  cpu          : util=43.21%
  crypt queue  : avg=3.25, max=41

  where the time went (read: 10 I/Os, share of total latency):
    stage                  mean      p99   share
    crypt queue wait     4.5 ms  41.7 ms   99.2%
    crypt service          0 ns     0 ns    0.0%
    kcryptd_io hop         0 ns     0 ns    0.0%
    request-pool sleep     0 ns     0 ns    0.0%
    block queue wait       0 ns     0 ns    0.0%
    device service      30.0 us  30.1 us    0.7%
    other                5.9 us  48.4 us    0.1%
    total (lat)          4.5 ms  41.7 ms  100.0%

  where the time went (write: 4 I/Os, share of total latency):
    stage                   mean       p99   share
    crypt queue wait     60.0 ms  210.8 ms   97.7%
    crypt service           0 ns      0 ns    0.0%
    kcryptd_io hop          0 ns      0 ns    0.0%
    request-pool sleep      0 ns      0 ns    0.0%
    block queue wait        0 ns      0 ns    0.0%
    device service        1.0 ms    1.0 ms    1.6%
    other               415.5 us    1.6 ms    0.7%
    total (lat)          61.4 ms  212.9 ms  100.0%
";
        assert_eq!(s, expected, "got:\n{s}");
    }

    #[test]
    fn saturated_block_and_comparison() {
        let text = rendered(&report());
        assert!(text.starts_with("qsim "));
        assert!(text.contains("Legend: slat is the time from issue until dm-crypt accepted"));
        assert!(text.contains(
            "  budget       : stopped at the work budget (max_events=1000000) after 10s of the 10s window"
        ));
        let cmp = text
            .split("Comparison (read clat percentiles, read IOPS, write throughput):\n")
            .nth(1)
            .unwrap();
        let lines: Vec<&str> = cmp.lines().take(3).collect();
        assert_eq!(
            lines,
            [
                "  policy      p50      p99    p99.9   p99.99  read IOPS  write MiB/s",
                "  fifo    70.1 us  41.7 ms  41.7 ms  41.7 ms          1         0.00",
                "  split   70.1 us  41.7 ms  41.7 ms  41.7 ms          1         0.00  budget",
            ]
        );
        assert!(
            text.contains("Warnings:\n  split: stopped at the work budget (max_events=1000000:")
        );
    }

    #[test]
    fn direction_without_io_is_omitted() {
        let mut only_reads = run("fifo", RunEnd::Horizon);
        only_reads.dirs[1].ios = 0;
        only_reads.dirs[1].bytes = 0;
        let r = Report::new(&scenario(), &[only_reads.clone(), only_reads]);
        let text = rendered(&r);
        assert!(text.contains("  read: IOPS="));
        assert!(!text.contains("  write: IOPS="));
        assert!(!text.contains("(write: "));
    }

    #[test]
    fn lat_percentiles_option_switches_the_block() {
        let mut buf = Vec::new();
        render_with(
            &report(),
            &TextOptions {
                lat_percentiles: true,
            },
            &mut buf,
        )
        .unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(text.contains("    lat percentiles (usec):"));
        assert!(!text.contains("    clat percentiles ("));
    }

    #[test]
    fn memory_lines_fit_80_columns() {
        let r = Report::new(
            &scenario(),
            &[run_with_memory("fifo"), run_with_memory("split")],
        );
        let mut s = String::new();
        policy_block(&r, &r.policies[0], &TextOptions::default(), &mut s);
        let start = s.find("  memory       :").expect("memory lines");
        let end = s.find("\n\n  where the time went").unwrap();
        let block = &s[start..end];
        let expected =
            "  memory       : pages=524288, min=1448, low=1810, high=2172, atomic_floor=543
  free pages   : min=402, avg=2010, below_min=1230ms (12.30%)
  gfp_atomic   : attempts=110034, failures=37 (0.03%), fail_rate=3.70/s
  gfp_atomic o0: attempts=98000, failures=0 (0.00%)
  gfp_atomic o2: attempts=12034, failures=37 (0.31%), free_at_fail=512
  kswapd       : wakeups=41, awake=4300ms (43.00%), passes=57, scanned=180000
  kswapd       : reclaimed=150000, skip_below_min=0, premature_low=0
  kswapd       : premature_high=2, order0_fallbacks=3
  kswapd cwait : sync=0 (0ms), async=51 (4100ms), early=11.8%, skipped=0
  direct       : stalls=9 (310ms), p50=13.0ms, p99=135.3ms, p99.9=135.3ms
  direct       : scanned=4000, reclaimed=3100, pageout=250
  direct cwait : sync=0 (0ms), async=10 (200ms), early=0.0%, skipped=0
  bounce       : from_zone=20000, from_reserve=120, mempool_waits=3 (12ms)
  bounce       : partial_clones=0 (0ms)
  pages at end : free=8068, unreclaimable=131072, clean=300000, dirty=60000
  pages at end : writeback=25000, bounce=40, atomic=96, filling=12
  alloc log    : first 2 of 37 failures, free: the zone's free pages at each
  [   12.345678] swapper: page allocation failure. order:2, mode:0x20 free:512
  [   12.400000] swapper: page allocation failure. order:2, mode:0x20 free:498";
        assert_eq!(block, expected, "got:\n{block}");
        // Writer throttling is printed whenever the memory model ran.
        assert!(s.contains("  writeback    : dirtied=300MiB, written=280MiB, throttled=1250ms"));
        assert!(s.contains("    direct reclaim "), "{s}");
        let text = rendered(&r);
        // Every line the memory model adds (lines also in a report without it are fio's and
        // may be wider) fits 80 columns.
        let plain = rendered(&report());
        let plain: std::collections::HashSet<&str> = plain.lines().collect();
        for line in text.lines().filter(|l| !plain.contains(l)) {
            assert!(line.chars().count() <= 80, "{} columns: {line}", line.len());
        }
        let cmp = text.split("Memory (atomic failures").nth(1).unwrap();
        let lines: Vec<&str> = cmp.lines().skip(1).take(3).collect();
        assert_eq!(
            lines,
            [
                "  policy  atomic fails  cwait sync  cwait async  stalls  free min",
                "  fifo              37        0 ns      4.100 s       9       402",
                "  split             37        0 ns      4.100 s       9       402",
            ]
        );
        assert!(text.contains("Memory lines count from the warm-up's end"));
    }

    #[test]
    fn finite_jobs_print_their_elapsed_time_or_unfinished_and_a_warning() {
        use crate::report::tests::run_finite;
        let r = Report::new(
            &scenario(),
            &[run_finite("fifo", false), run_finite("split", true)],
        );
        let text = rendered(&r);
        let elapsed: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("  elapsed      :"))
            .collect();
        assert_eq!(
            elapsed,
            [
                "  elapsed      : 23.41s (io=64.0MiB, ios=16384)",
                "  elapsed      : unfinished at 11s (io=12.3MiB of 64.0MiB, ios=3150)",
            ]
        );
        assert!(text.contains("Finite jobs (io_size, number_ios) stop issuing"));
        let warning = text.split("Warnings:\n").nth(1).expect("warnings");
        assert!(
            warning.starts_with(
                "  split: gitk did not finish before the run ended at 11s (it completed \
                 12.3MiB of its io_size 64.0MiB, 3150 I/Os); its elapsed time is unknown"
            ),
            "{warning}"
        );
        // Several finite jobs are named on their lines.
        let mut two = run_finite("fifo", false);
        let mut other = two.finite_jobs[0].clone();
        other.name = "reader.1".to_string();
        other.elapsed_ns = Some(412_500_000);
        two.finite_jobs.push(other);
        let r = Report::new(&scenario(), &[two.clone(), two]);
        let text = rendered(&r);
        assert!(text.contains("  elapsed      : gitk: 23.41s (io=64.0MiB, ios=16384)\n"));
        assert!(text.contains("  elapsed      : reader.1: 412.5ms (io=64.0MiB, ios=16384)\n"));
        // Without finite jobs nothing of this appears.
        let plain = rendered(&report());
        assert!(
            !plain.contains("elapsed") && !plain.contains("Finite jobs"),
            "{plain}"
        );
    }

    #[test]
    fn no_memory_model_no_memory_lines() {
        let text = rendered(&report());
        for word in ["direct reclaim", "memory", "Memory", "gfp_atomic", "kswapd"] {
            assert!(!text.contains(word), "{word} in:\n{text}");
        }
    }

    #[test]
    fn the_header_counts_variants_and_wraps_them() {
        use crate::report::VariantSummary;
        let mut r = report();
        let names = [
            "2.6.30",
            "2.6.31",
            "2.6.32",
            "+kswapd-stay-awake-when-min",
            "+dm-crypt-unplug",
            "+force-highorder",
        ];
        r.variants = names
            .iter()
            .map(|n| VariantSummary {
                name: n.to_string(),
                policies: vec!["fifo".to_string(), "split".to_string()],
            })
            .collect();
        let mut s = String::new();
        legend(&r, &mut s);
        let head: Vec<&str> = s.lines().skip(2).take(4).collect();
        assert_eq!(
            head,
            [
                "seed=42, duration=11s, warm-up=1s (excluded), 6 variants x 2 policies = 2 runs",
                "variants: 2.6.30, 2.6.31, 2.6.32, +kswapd-stay-awake-when-min, +dm-crypt-unplug,",
                "          +force-highorder",
                "policies: fifo, split",
            ]
        );
        r.variants[1].policies.pop();
        let mut s = String::new();
        legend(&r, &mut s);
        let head: Vec<&str> = s.lines().skip(2).take(5).collect();
        assert_eq!(
            head,
            [
                "seed=42, duration=11s, warm-up=1s (excluded), 6 variants, 2 runs",
                "variants (policies): 2.6.30 (fifo, split); 2.6.31 (fifo); 2.6.32 (fifo, split);",
                "                     +kswapd-stay-awake-when-min (fifo, split);",
                "                     +dm-crypt-unplug (fifo, split);",
                "                     +force-highorder (fifo, split)",
            ]
        );
        assert!(head.iter().all(|l| l.chars().count() <= 80), "{s}");
    }
}
