//! The "Flag comparison" section (issue 16: should I turn on `cryptsetup --perf-*`?): when a
//! plan runs the default table `dm-crypt` beside at least one `dm-crypt+<flag>…` table (per
//! variant, if there are variants), one row per combination with its read and write clat
//! p50/p99/p99.9, read and write MiB/s and CPU time by context (means over replications), and
//! the paired verdict against `dm-crypt` on read p99.9 and on total throughput (the same
//! common-random-numbers comparison as the replication summary: `within noise`, or the ratio
//! of means as `1.99× better` / `1.20× worse` when the 95 % interval of the paired difference
//! excludes 0). Two lines name the winners. The same ratios with their intervals are the
//! `flags` plot's data ([`FlagPlot`], kept in the plot series of the JSON export).
//!
//! Text only, within 80 columns: flags are written by two-letter codes (a legend heads the
//! section), and the figures come in two tables, latencies then throughput and CPU.

use super::Report;
use super::metrics::{MetricId, Metrics};
use super::replications::{num, values};
use crate::model::crypt::policy::DmFlags;
use crate::stats::compare::{Interval, Summary, Verdict, paired_diff, ratio, verdict};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Each flag's two-letter code in the tables, in [`DmFlags::ALL`] order.
const CODES: [&str; 5] = ["sc", "sf", "nr", "nw", "hp"];

/// `label` with every `dm-crypt+<flag>+…` part (a run label is `policy` or `variant/policy`)
/// written by the flags' codes, `dm-crypt-sc-nr`: the short, unique form file names use, so
/// that the 32 runs of `--flags all` get names a reader can tell apart (the long form
/// `timeline-dm-crypt-plus-same_cpu_crypt-plus-submit_fro…` was cut to a hash).
pub fn coded_label(label: &str) -> String {
    label
        .split('/')
        .map(|part| match DmFlags::parse(part) {
            Some(f) if f != DmFlags::NONE => format!("{DEFAULT}-{}", code(f).replace('+', "-")),
            _ => part.to_string(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The flags' codes and names, `"sc same_cpu_crypt, sf submit_from_crypt_cpus, …"`: the key
/// printed wherever [`short_label`]s or [`coded_label`]s are.
pub fn code_key() -> String {
    DmFlags::ALL
        .iter()
        .zip(CODES)
        .map(|((n, _), c)| format!("{c} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `label` as the plots draw it: every `dm-crypt+<flag>+…` part (a run label is `policy` or
/// `variant/policy`) written by its flags' codes joined by `+` (`sc+nr`), as the `flags`
/// chart writes them; `dm-crypt` and every other part stay whole. The 32 runs of
/// `--flags all` become labels of at most 14 characters that differ where the runs do.
pub fn short_label(label: &str) -> String {
    label.split('/').map(code_of).collect::<Vec<_>>().join("/")
}

/// The flag codes that the [`short_label`]s `labels` use, each with its flag's name
/// (`("sc", "same_cpu_crypt")`), in [`DmFlags::ALL`] order: the key a plot prints when it
/// draws coded labels. A part counts only when all of it is codes.
pub fn codes_used<'a>(
    labels: impl IntoIterator<Item = &'a str>,
) -> Vec<(&'static str, &'static str)> {
    let mut used = [false; CODES.len()];
    for part in labels.into_iter().flat_map(|l| l.split('/')) {
        let pieces: Vec<Option<usize>> = part
            .split('+')
            .map(|p| CODES.iter().position(|c| *c == p))
            .collect();
        if pieces.iter().all(Option::is_some) {
            for k in pieces.into_iter().flatten() {
                used[k] = true;
            }
        }
    }
    DmFlags::ALL
        .iter()
        .zip(CODES)
        .zip(used)
        .filter(|(_, u)| *u)
        .map(|(((name, _), code), _)| (code, *name))
        .collect()
}

/// The default table's policy name, the reference of every comparison here.
pub(super) const DEFAULT: &str = "dm-crypt";

/// One combination's paired ratios to the default, as the `flags` plot draws them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlagPlotRow {
    /// The policy (`dm-crypt+no_read_workqueue`).
    pub policy: String,
    /// Read p99.9 over the default's, with its 95 % interval (`None` when not comparable:
    /// one replication, no reads).
    pub read_p999: Option<Interval>,
    /// Total (read + write) MiB/s over the default's, with its 95 % interval.
    pub throughput: Option<Interval>,
}

/// The `flags` plot of one variant (or of the whole plan without variants).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlagPlot {
    /// The variant's name; `None` without variants.
    pub variant: Option<String>,
    /// Every combination but the default, in run order.
    pub rows: Vec<FlagPlotRow>,
}

/// One compared run of a [`Group`]: its flags and its replications' metrics.
pub(super) struct Member<'a> {
    flags: DmFlags,
    pub(super) policy: String,
    pub(super) reps: &'a [Metrics],
}

/// The runs of one variant that the section compares: the default first, then the flagged
/// tables in run order.
pub(super) struct Group<'a> {
    pub(super) variant: Option<String>,
    pub(super) members: Vec<Member<'a>>,
}

/// The groups of `report` with a `dm-crypt` run and at least one `dm-crypt+…` run.
pub(super) fn groups(report: &Report) -> Vec<Group<'_>> {
    let mut out: Vec<Group> = Vec::new();
    for (p, (_, reps)) in report.policies.iter().zip(&report.metrics) {
        let (variant, policy) = match &p.variant {
            Some(v) => (Some(v.name.clone()), v.policy.clone()),
            None => (None, p.policy.clone()),
        };
        let flags = if policy == DEFAULT {
            DmFlags::NONE
        } else {
            match DmFlags::parse(&policy) {
                Some(f) => f,
                None => continue,
            }
        };
        let member = Member {
            flags,
            policy,
            reps,
        };
        match out.iter_mut().find(|g| g.variant == variant) {
            Some(g) => g.members.push(member),
            None => out.push(Group {
                variant,
                members: vec![member],
            }),
        }
    }
    for g in &mut out {
        // The default first; a stable sort keeps the others in run order.
        g.members.sort_by_key(|m| m.flags != DmFlags::NONE);
    }
    out.retain(|g| {
        g.members.first().is_some_and(|m| m.flags == DmFlags::NONE) && g.members.len() > 1
    });
    out
}

/// A flag set by its codes (`nr+nw`), or `dm-crypt` for none.
fn code(flags: DmFlags) -> String {
    if flags == DmFlags::NONE {
        return DEFAULT.to_string();
    }
    DmFlags::ALL
        .iter()
        .zip(CODES)
        .filter(|((_, f), _)| flags.has(*f))
        .map(|(_, c)| c)
        .collect::<Vec<_>>()
        .join("+")
}

/// A policy name's flags by their codes (`dm-crypt+no_read_workqueue` → `nr`), for the
/// plots' labels; a name that is no flagged table comes back whole.
pub fn code_of(policy: &str) -> String {
    DmFlags::parse(policy).map_or_else(|| policy.to_string(), code)
}

/// A paired comparison of metric `key` of `xs` against `rs`: the verdict and the ratio of
/// means with its interval (`None` when they cannot be paired: one replication, a NaN).
pub(super) fn compare(xs: &[Metrics], rs: &[Metrics], key: &str) -> Option<(Verdict, Interval)> {
    let id = MetricId::of_key(key)?;
    let (x, r) = (values(xs, id), values(rs, id));
    let d = paired_diff(&x, &r).ok()?;
    let q = ratio(&x, &r).ok()?;
    Some((verdict(&d, id.metric().lower_is_better), q))
}

/// `within noise`, `1.99× better`, `1.20× worse` (the factor is the ratio or its inverse,
/// whichever is above 1), or `n/a`.
pub(super) fn verdict_words(c: Option<(Verdict, Interval)>) -> String {
    match c {
        None => "n/a".to_string(),
        Some((Verdict::WithinNoise, _)) => "within noise".to_string(),
        Some((v, q)) => {
            let r = q.estimate;
            let factor = if r >= 1.0 { r } else { 1.0 / r };
            let word = if v == Verdict::Better {
                "better"
            } else {
                "worse"
            };
            // Three decimals for a small factor, so 1.004 does not read as 1.00.
            if factor < 1.1 {
                format!("{factor:.3}× {word}")
            } else {
                format!("{factor:.2}× {word}")
            }
        }
    }
}

/// The factor a better verdict wins by (0 for anything else), to rank the winners.
fn win_factor(c: Option<(Verdict, Interval)>) -> f64 {
    match c {
        Some((Verdict::Better, q)) if q.estimate > 0.0 => q.estimate.max(1.0 / q.estimate),
        _ => 0.0,
    }
}

/// The mean of metric `key` over `reps` (NaN when any replication did not measure it).
fn mean(reps: &[Metrics], key: &str) -> f64 {
    let Some(id) = MetricId::of_key(key) else {
        return f64::NAN;
    };
    let xs = values(reps, id);
    if xs.is_empty() || xs.iter().any(|x| x.is_nan()) {
        return f64::NAN;
    }
    Summary::of(&xs).mean
}

/// A table cell of a number: `-` when not measured.
fn cell(x: f64) -> String {
    if x.is_finite() { num(x) } else { "-".into() }
}

/// A table cell of a rate or a CPU share, one decimal: `-` when not measured.
fn cell1(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}")
    } else {
        "-".into()
    }
}

/// The scale and unit of three latencies in ms: µs when all are under a millisecond.
fn lat_unit<'a>(xs: impl Iterator<Item = &'a f64>) -> (f64, &'static str) {
    let mut xs = xs;
    if xs.all(|x| !x.is_finite() || *x < 1.0) {
        (1000.0, "us")
    } else {
        (1.0, "ms")
    }
}

/// Writes `rows` (the first column left-aligned, the others right-aligned, two spaces apart)
/// under `heads`: header lines whose items are `(first column index, text)`, each text
/// right-aligned to the end of the column span it heads, up to the next item.
fn table(heads: &[Vec<(usize, &str)>], rows: &[Vec<String>], out: &mut String) {
    let cols = rows.first().map_or(0, Vec::len);
    let mut widths: Vec<usize> = (0..cols)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    // Single-column heads widen their column.
    for line in heads {
        for (k, &(c, text)) in line.iter().enumerate() {
            let next = line.get(k + 1).map_or(cols, |x| x.0);
            if next == c + 1 && c < cols {
                widths[c] = widths[c].max(text.chars().count());
            }
        }
    }
    // Column c ends at ends[c] (from the line's start, after the two-space indent).
    let mut ends = Vec::with_capacity(cols);
    let mut at = 2;
    for (c, w) in widths.iter().enumerate() {
        at += if c == 0 { *w } else { 2 + *w };
        ends.push(at);
    }
    for line in heads {
        let mut s = String::new();
        for (k, &(c, text)) in line.iter().enumerate() {
            let next = line.get(k + 1).map_or(cols, |x| x.0);
            let end = if c == 0 && next == 1 {
                2 + text.chars().count()
            } else {
                ends[next - 1]
            };
            let start = end.saturating_sub(text.chars().count());
            let pad = start
                .saturating_sub(s.chars().count())
                .max(usize::from(!s.is_empty()));
            s.push_str(&" ".repeat(pad));
            s.push_str(text);
        }
        let _ = writeln!(out, "{}", s.trim_end());
    }
    for row in rows {
        let mut s = format!("  {:<w$}", row[0], w = widths[0]);
        for (x, w) in row.iter().zip(&widths).skip(1) {
            let _ = write!(s, "  {x:>w$}");
        }
        let _ = writeln!(out, "{}", s.trim_end());
    }
}

/// Renders the section for every group of `report` (nothing when no variant runs `dm-crypt`
/// beside a flagged table).
pub fn render(report: &Report, out: &mut String) {
    for g in groups(report) {
        render_group(&g, out);
    }
}

/// The read and write clat keys of the latency table, in column order.
const LATENCY_KEYS: [&str; 6] = [
    "read_p50_ms",
    "read_p99_ms",
    "read_p999_ms",
    "write_p50_ms",
    "write_p99_ms",
    "write_p999_ms",
];

/// The MiB/s and CPU keys of the second table, in column order.
const LOAD_KEYS: [&str; 8] = [
    "read_mib_s",
    "write_mib_s",
    "cpu_softirq_pct",
    "cpu_kcryptd_pct",
    "cpu_dmcrypt_write_pct",
    "cpu_submitters_pct",
    "cpu_application_pct",
    "cpu_idle_beside_waiting_pct",
];

fn render_group(g: &Group, out: &mut String) {
    let reference = g.members[0].reps;
    let reps = reference.len();
    let whose = match &g.variant {
        Some(v) => format!(", variant {v}"),
        None => String::new(),
    };
    let intro = format!(
        "Flag comparison{whose} (means over {reps} replications; verdicts paired against \
         dm-crypt, 95% CI; flags: {}; CPU: sirq softirq, kcr kcryptd workers, dmw \
         dmcrypt_write, sub submitters, app application, idle time a CPU stood idle while \
         a thread waited elsewhere, as qsim migrates no task):\n",
        code_key()
    );
    out.push('\n');
    out.push_str(&super::text::fit::fill(&intro, super::text::fit::WIDTH));
    let p999: Vec<Option<(Verdict, Interval)>> = g
        .members
        .iter()
        .map(|m| compare(m.reps, reference, "read_p999_ms"))
        .collect();
    let tput: Vec<Option<(Verdict, Interval)>> = g
        .members
        .iter()
        .map(|m| compare(m.reps, reference, "total_mib_s"))
        .collect();
    latency_table(g, &p999, out);
    out.push('\n');
    load_table(g, &tput, out);
    winners(g, &p999, &tput, out);
    super::answer::render_recommendation(&super::answer::recommend_group(g), out);
}

/// The section's first table: read and write clat percentiles per combination, and the read
/// p99.9 verdict.
fn latency_table(g: &Group, p999: &[Option<(Verdict, Interval)>], out: &mut String) {
    // Latencies in µs when every one is under a millisecond.
    let lat: Vec<Vec<f64>> = g
        .members
        .iter()
        .map(|m| LATENCY_KEYS.iter().map(|k| mean(m.reps, k)).collect())
        .collect();
    let (rs, ru) = lat_unit(lat.iter().flat_map(|l| &l[..3]));
    let (ws, wu) = lat_unit(lat.iter().flat_map(|l| &l[3..]));
    let rows: Vec<Vec<String>> = g
        .members
        .iter()
        .zip(&lat)
        .enumerate()
        .map(|(i, (m, l))| {
            let mut row = vec![code(m.flags)];
            row.extend(l[..3].iter().map(|x| cell(x * rs)));
            row.extend(l[3..].iter().map(|x| cell(x * ws)));
            row.push(if i == 0 {
                "reference".into()
            } else {
                verdict_words(p999[i])
            });
            row
        })
        .collect();
    let (rh, wh) = (format!("read clat ({ru})"), format!("write clat ({wu})"));
    table(
        &[
            vec![(1, rh.as_str()), (4, wh.as_str()), (7, "read p99.9")],
            vec![
                (0, "flags"),
                (1, "p50"),
                (2, "p99"),
                (3, "p99.9"),
                (4, "p50"),
                (5, "p99"),
                (6, "p99.9"),
                (7, "vs dm-crypt"),
            ],
        ],
        &rows,
        out,
    );
}

/// The section's second table: MiB/s and CPU by context per combination, and the throughput
/// verdict.
fn load_table(g: &Group, tput: &[Option<(Verdict, Interval)>], out: &mut String) {
    let rows: Vec<Vec<String>> = g
        .members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let mut row = vec![code(m.flags)];
            row.extend(LOAD_KEYS.iter().map(|k| cell1(mean(m.reps, k))));
            row.push(if i == 0 {
                "reference".into()
            } else {
                verdict_words(tput[i])
            });
            row
        })
        .collect();
    table(
        &[
            vec![(1, "MiB/s"), (3, "CPU, % of one CPU"), (9, "total MiB/s")],
            vec![
                (0, "flags"),
                (1, "read"),
                (2, "write"),
                (3, "sirq"),
                (4, "kcr"),
                (5, "dmw"),
                (6, "sub"),
                (7, "app"),
                (8, "idle"),
                (9, "vs dm-crypt"),
            ],
        ],
        &rows,
        out,
    );
}

/// The two closing lines: the best combination on read p99.9 and on total MiB/s.
fn winners(
    g: &Group,
    p999: &[Option<(Verdict, Interval)>],
    tput: &[Option<(Verdict, Interval)>],
    out: &mut String,
) {
    let winner = |cs: &[Option<(Verdict, Interval)>], missing: &str| -> String {
        if cs.iter().skip(1).all(Option::is_none) {
            // Nothing to compare (a write-only load has no read p99.9): no winner to name.
            return format!("n/a ({missing})");
        }
        let best = cs
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, c)| (i, win_factor(*c)))
            .filter(|(_, f)| *f > 0.0)
            .max_by(|a, b| a.1.total_cmp(&b.1));
        match best {
            Some((i, _)) => format!(
                "{} ({})",
                short_label(&g.members[i].policy),
                verdict_words(cs[i])
            ),
            None => "no combination beats the default".to_string(),
        }
    };
    out.push('\n');
    for line in [
        format!("Best read p99.9: {}\n", winner(p999, "no reads")),
        format!("Best throughput: {}\n", winner(tput, "no I/O")),
    ] {
        out.push_str(&super::text::fit::fill(&line, super::text::fit::WIDTH));
    }
}

/// The `flags` plots' data: per group, each flagged table's paired ratios to the default.
pub fn plot_data(report: &Report) -> Vec<FlagPlot> {
    groups(report)
        .iter()
        .map(|g| {
            let reference = g.members[0].reps;
            FlagPlot {
                variant: g.variant.clone(),
                rows: g.members[1..]
                    .iter()
                    .map(|m| FlagPlotRow {
                        policy: m.policy.clone(),
                        read_p999: compare(m.reps, reference, "read_p999_ms").map(|c| c.1),
                        throughput: compare(m.reps, reference, "total_mib_s").map(|c| c.1),
                    })
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every combination's coded label is unique and makes a timeline file name of at most
    /// 60 characters; other labels are left alone.
    #[test]
    fn coded_labels_are_short_and_unique() {
        let mut seen = std::collections::HashSet::new();
        for bits in 0..32u8 {
            let mut policy = DEFAULT.to_string();
            for (name, f) in DmFlags::ALL {
                if DmFlags(bits).has(f) {
                    policy = format!("{policy}+{name}");
                }
            }
            for label in [policy.clone(), format!("6.12/{policy}")] {
                let file = format!(
                    "timeline-{}.png",
                    crate::plot::file_label(&coded_label(&label), 0)
                );
                assert!(file.len() <= 60, "{file}");
                assert!(seen.insert(file.clone()), "{file} twice");
            }
        }
        assert_eq!(
            coded_label("v/dm-crypt+same_cpu_crypt+high_priority"),
            "v/dm-crypt-sc-hp"
        );
        assert_eq!(coded_label("fifo"), "fifo");
        assert_eq!(coded_label("dm-crypt+bogus"), "dm-crypt+bogus");
    }

    #[test]
    fn codes_follow_the_flags_and_verdicts_read_as_factors() {
        assert_eq!(code(DmFlags::NONE), "dm-crypt");
        assert_eq!(code(DmFlags(0b11111)), "sc+sf+nr+nw+hp");
        assert_eq!(code(DmFlags(12)), "nr+nw");
        let q = |e: f64| Interval::around(e, 0.01);
        assert_eq!(
            verdict_words(Some((Verdict::Better, q(0.5)))),
            "2.00× better"
        );
        assert_eq!(verdict_words(Some((Verdict::Worse, q(0.8)))), "1.25× worse");
        assert_eq!(
            verdict_words(Some((Verdict::WithinNoise, q(1.0)))),
            "within noise"
        );
        assert_eq!(verdict_words(None), "n/a");
        assert_eq!(win_factor(Some((Verdict::Worse, q(0.5)))), 0.0);
        assert_eq!(win_factor(Some((Verdict::Better, q(2.0)))), 2.0);
    }

    #[test]
    fn tables_align_their_heads_over_the_columns() {
        let mut out = String::new();
        table(
            &[
                vec![(1, "group"), (3, "v")],
                vec![(0, "k"), (1, "a"), (2, "b"), (3, "vs")],
            ],
            &[
                vec![
                    "dm-crypt".into(),
                    "1.000".into(),
                    "22.00".into(),
                    "x".into(),
                ],
                vec![
                    "nr".into(),
                    "3.000".into(),
                    "4.000".into(),
                    "within noise".into(),
                ],
            ],
            &mut out,
        );
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "                   group             v");
        assert_eq!(lines[1], "  k             a      b            vs");
        assert_eq!(lines[2], "  dm-crypt  1.000  22.00             x");
        assert_eq!(lines[3], "  nr        3.000  4.000  within noise");
    }
}
