//! `qsim reproduce`'s report: each published figure of a scenario's `published:` section beside
//! the simulated one (mean ± sd over replications, as Mel Gorman reported his), their ratio and
//! a plain verdict; each published claim (a ratio of two runs' means or of their spreads, or a
//! difference within noise) with both values and its verdict. Text for people, JSON for machines.
//!
//! A reproduction report is not a test: a row the model misses says "not reproduced: the model
//! shows …", with the simulated value, and the scenario's reason when it gives one (`why:`,
//! flagged as out of date if the row reproduces after all); the command still succeeds.

use super::metrics::{METRICS, Metric, Metrics};
use crate::scenario::published::{Claim, ClaimKind, Published, Row, Rule, RunRef};
use crate::stats::compare::{Summary, Verdict, paired_diff, verdict};
use serde::Serialize;
use std::fmt::Write as _;

/// One run's per-replication metrics, named as the scenario names it.
#[derive(Debug, Clone)]
pub struct RunMetrics {
    /// The run's variant and policy.
    pub run: RunRef,
    /// The report's label for it.
    pub label: String,
    /// One entry per replication.
    pub reps: Vec<Metrics>,
}

/// A value over replications: mean and sample standard deviation of the finite ones.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Spread {
    /// Mean (NaN when no replication measured it; JSON null).
    pub mean: f64,
    /// Sample standard deviation (0 for one replication).
    pub stddev: f64,
    /// Replications that measured it.
    pub n: usize,
}

/// One published figure against the model.
#[derive(Debug, Clone, Serialize)]
pub struct RowResult {
    /// What the figure is.
    pub name: String,
    /// The run compared.
    pub run: String,
    /// The metric key.
    pub metric: String,
    /// The metric's unit.
    pub unit: String,
    /// The published value.
    pub published: f64,
    /// The published standard deviation, when given.
    pub published_stddev: Option<f64>,
    /// The simulated value over replications.
    pub simulated: Spread,
    /// simulated mean / published.
    pub ratio: f64,
    /// The verdict rule, in words.
    pub rule: String,
    /// Whether the simulated mean satisfies the rule.
    pub reproduced: bool,
    /// "reproduced", or "not reproduced: the model shows …".
    pub verdict: String,
    /// Why the model misses it, in the scenario's words: given only when it is not reproduced.
    pub why: Option<String>,
    /// The scenario says why the model misses it, but it is reproduced: the `why:` is out of
    /// date.
    pub stale_why: bool,
}

/// One published claim against the model.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimResult {
    /// What the claim says.
    pub name: String,
    /// The metric key.
    pub metric: String,
    /// The metric's unit.
    pub unit: String,
    /// The first run.
    pub a: String,
    /// The second run.
    pub b: String,
    /// The first run's value.
    pub a_value: Spread,
    /// The second run's value.
    pub b_value: Spread,
    /// mean(a) / mean(b); for a spread claim stddev(a) / stddev(b).
    pub ratio: f64,
    /// `ratio` or `spread ratio` with its rule, or `within noise`.
    pub test: String,
    /// For `noise`: the paired verdict (`within noise`, `lower`, `higher`).
    pub noise: Option<String>,
    /// Whether the claim holds in the model.
    pub reproduced: bool,
    /// "reproduced", or "not reproduced: the model shows …".
    pub verdict: String,
    /// Why the model misses it, in the scenario's words: given only when it is not reproduced.
    pub why: Option<String>,
    /// The scenario says why the model misses it, but it is reproduced: the `why:` is out of
    /// date.
    pub stale_why: bool,
}

/// The reproduction of one scenario.
#[derive(Debug, Clone, Serialize)]
pub struct Reproduction {
    /// The scenario's name.
    pub scenario: String,
    /// Where the published figures come from.
    pub source: String,
    /// Replications per run.
    pub replications: u32,
    /// The rows, in file order.
    pub rows: Vec<RowResult>,
    /// The claims, in file order.
    pub claims: Vec<ClaimResult>,
}

impl Reproduction {
    /// (rows reproduced, rows, claims reproduced, claims).
    pub fn counts(&self) -> (usize, usize, usize, usize) {
        (
            self.rows.iter().filter(|r| r.reproduced).count(),
            self.rows.len(),
            self.claims.iter().filter(|c| c.reproduced).count(),
            self.claims.len(),
        )
    }

    /// (figures and claims not reproduced, those of them whose scenario says no why).
    pub fn misses(&self) -> (usize, usize) {
        let rows = self.rows.iter().map(|r| (r.reproduced, r.why.is_some()));
        let claims = self.claims.iter().map(|c| (c.reproduced, c.why.is_some()));
        rows.chain(claims)
            .filter(|&(reproduced, _)| !reproduced)
            .fold((0, 0), |(n, bare), (_, why)| {
                (n + 1, bare + usize::from(!why))
            })
    }
}

/// The registry's keys, for the scenario loader to check `metric:` fields against.
pub fn metric_keys() -> Vec<&'static str> {
    METRICS.iter().map(|m| m.key).collect()
}

/// The registry row and position of `key` (the loader checked it exists).
fn metric_of(key: &str) -> (usize, &'static Metric) {
    METRICS
        .iter()
        .enumerate()
        .find(|(_, m)| m.key == key)
        .expect("the loader checked the metric key")
}

/// The finite values of metric `i` over a run's replications.
fn values(run: &RunMetrics, i: usize) -> Vec<f64> {
    run.reps
        .iter()
        .map(|m| m.values[i])
        .filter(|v| v.is_finite())
        .collect()
}

fn spread(xs: &[f64]) -> Spread {
    let s = Summary::of(xs);
    Spread {
        mean: s.mean,
        stddev: if xs.len() > 1 { s.stddev } else { 0.0 },
        n: xs.len(),
    }
}

/// The run `r` names among `runs` (the loader resolved it against the same scenario).
fn find<'a>(runs: &'a [RunMetrics], r: &RunRef) -> &'a RunMetrics {
    runs.iter()
        .find(|x| x.run == *r)
        .expect("the loader resolved the run against this scenario")
}

/// Compares `published` with the simulated `runs`.
pub fn reproduce(
    scenario: &str,
    published: &Published,
    replications: u32,
    runs: &[RunMetrics],
) -> Reproduction {
    Reproduction {
        scenario: scenario.to_string(),
        source: published.source.clone(),
        replications,
        rows: published.rows.iter().map(|r| row_result(r, runs)).collect(),
        claims: published
            .claims
            .iter()
            .map(|c| claim_result(c, runs))
            .collect(),
    }
}

/// One published figure against its run.
fn row_result(row: &Row, runs: &[RunMetrics]) -> RowResult {
    let (i, m) = metric_of(&row.metric);
    let run = find(runs, &row.run);
    let sim = spread(&values(run, i));
    let reproduced = row.rule.holds(sim.mean, row.value);
    let verdict = if reproduced {
        "reproduced".to_string()
    } else {
        format!(
            "not reproduced: the model shows {}",
            value(sim.mean, m.unit)
        )
    };
    RowResult {
        name: row.name.clone(),
        run: run.label.clone(),
        metric: row.metric.clone(),
        unit: m.unit.to_string(),
        published: row.value,
        published_stddev: row.stddev,
        simulated: sim,
        ratio: sim.mean / row.value,
        rule: rule_text(row.rule, m.unit),
        reproduced,
        verdict,
        why: row.why.clone().filter(|_| !reproduced),
        stale_why: reproduced && row.why.is_some(),
    }
}

/// The paired verdict on `a − b` in words: `within noise`, `lower` or `higher`.
fn noise_word(a: &[f64], b: &[f64], lower_is_better: bool) -> &'static str {
    match paired_diff(a, b) {
        Ok(d) => match verdict(&d, lower_is_better) {
            Verdict::WithinNoise => "within noise",
            Verdict::Better if lower_is_better => "lower",
            Verdict::Better => "higher",
            Verdict::Worse if lower_is_better => "higher",
            Verdict::Worse => "lower",
        },
        Err(_) => "not comparable",
    }
}

/// One published claim against its two runs.
fn claim_result(c: &Claim, runs: &[RunMetrics]) -> ClaimResult {
    let (i, m) = metric_of(&c.metric);
    let (ra, rb) = (find(runs, &c.a), find(runs, &c.b));
    let (xa, xb) = (values(ra, i), values(rb, i));
    let (sa, sb) = (spread(&xa), spread(&xb));
    let mut ratio = sa.mean / sb.mean;
    let (test, noise, reproduced, shows) = match &c.kind {
        ClaimKind::Ratio(rule, target) => {
            let ok = rule.holds(ratio, *target);
            let test = match rule {
                Rule::Within(_) | Rule::Factor(_) if *target != 1.0 => {
                    format!("ratio {} of {}", rule.describe(), trimmed(*target))
                }
                _ => format!("ratio {}", rule.describe()),
            };
            let shows = if sb.mean == 0.0 {
                format!("{} of zero in the second run: no ratio", c.metric)
            } else if *target != 1.0 {
                format!("a ratio of {}", significant(ratio))
            } else {
                format!("a ratio of {}", shown_against(ratio, *rule))
            };
            (test, None, ok, shows)
        }
        ClaimKind::Better => {
            let word = noise_word(&xa, &xb, m.lower_is_better);
            let better = if m.lower_is_better { "lower" } else { "higher" };
            let shows = format!("a difference {word} (ratio {})", significant(ratio));
            (
                format!("{better} beyond noise"),
                Some(word.to_string()),
                word == better,
                shows,
            )
        }
        ClaimKind::Spread(rule) => {
            ratio = sa.stddev / sb.stddev;
            let ok = sa.n > 1 && sb.n > 1 && rule.holds(ratio, 1.0);
            let test = format!("spread ratio {}", rule.describe());
            let shows = spread_shows(c, sa, sb, shown_against(ratio, *rule));
            (test, None, ok, shows)
        }
        ClaimKind::Noise => {
            let word = noise_word(&xa, &xb, m.lower_is_better);
            let shows = format!("a difference {word} (ratio {ratio:.2})");
            let ok = word == "within noise";
            (
                "within noise".to_string(),
                Some(word.to_string()),
                ok,
                shows,
            )
        }
    };
    ClaimResult {
        name: c.name.clone(),
        metric: c.metric.clone(),
        unit: m.unit.to_string(),
        a: ra.label.clone(),
        b: rb.label.clone(),
        a_value: sa,
        b_value: sb,
        ratio,
        test,
        noise,
        reproduced,
        verdict: if reproduced {
            "reproduced".to_string()
        } else {
            format!("not reproduced: the model shows {shows}")
        },
        why: c.why.clone().filter(|_| !reproduced),
        stale_why: reproduced && c.why.is_some(),
    }
}

/// A published ratio without trailing zeros (`0.1306`, `2.507`).
fn trimmed(x: f64) -> String {
    let s = format!("{x:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A ratio with three significant digits at least (`0.131`, `1.22`, `2.51`).
fn significant(x: f64) -> String {
    if x.abs() >= 1.0 || x == 0.0 || !x.is_finite() {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// What the model shows for a spread claim that does not hold.
fn spread_shows(c: &Claim, sa: Spread, sb: Spread, ratio: String) -> String {
    if sa.n < 2 || sb.n < 2 {
        format!(
            "{} measured in {} and {} replications: a spread needs two",
            c.metric, sa.n, sb.n
        )
    } else if sb.stddev == 0.0 {
        format!(
            "no spread in the second run, {} in the first: no ratio",
            if sa.stddev == 0.0 { "none" } else { "some" }
        )
    } else {
        format!("a spread ratio of {ratio}")
    }
}

/// `x` with two decimals, or as many more (up to six) as it takes for the printed number to
/// fall on the same side of `rule` as `x` itself: a ratio of 1.006 against `at_least: 1.01`
/// prints as 1.006, not as a "1.01" that seems to pass.
fn shown_against(x: f64, rule: Rule) -> String {
    let holds = rule.holds(x, 1.0);
    let mut text = format!("{x:.2}");
    for decimals in 3..=6 {
        match text.parse::<f64>() {
            Ok(shown) if rule.holds(shown, 1.0) != holds => text = format!("{x:.decimals$}"),
            _ => break,
        }
    }
    text
}

/// A value in its metric's unit, a ms value below 1 ms shown in µs.
pub fn value(x: f64, unit: &str) -> String {
    if !x.is_finite() {
        return "n/a".to_string();
    }
    match unit {
        "ms" if x.abs() < 1.0 => format!("{} us", sig(x * 1000.0)),
        "ms" => format!("{} ms", sig(x)),
        "s" => format!("{x:.3} s"),
        "%" => format!("{}%", sig(x)),
        _ => sig(x),
    }
}

/// Decimals that give about four significant figures for `x`; whole numbers from 1000 up.
fn decimals(x: f64) -> usize {
    let a = x.abs();
    if a >= 1000.0 || a == 0.0 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 10.0 {
        2
    } else if a >= 1.0 {
        3
    } else {
        // One more decimal per decade below 1, keeping four significant figures.
        (3.0 - a.log10().floor()).clamp(3.0, 12.0) as usize
    }
}

/// About four significant figures.
fn sig(x: f64) -> String {
    format!("{x:.*}", decimals(x))
}

/// `mean ± sd` in the unit, the sd with the mean's decimals.
fn with_sd(mean: f64, sd: Option<f64>, unit: &str) -> String {
    match sd {
        Some(sd) if mean.is_finite() => {
            // The sd in the mean's display unit.
            let scale = if unit == "ms" && mean.abs() < 1.0 {
                1000.0
            } else {
                1.0
            };
            let m = value(mean, unit);
            let dec = if unit == "s" {
                3
            } else {
                decimals(mean * scale)
            };
            let s = format!("{:.*}", dec, sd * scale);
            match m.split_once(' ') {
                Some((n, u)) => format!("{n} ± {s} {u}"),
                None => match m.strip_suffix('%') {
                    Some(n) => format!("{n} ± {s}%"),
                    None => format!("{m} ± {s}"),
                },
            }
        }
        _ => value(mean, unit),
    }
}

/// A rule in words, its bounds in the metric's display unit.
fn rule_text(rule: Rule, unit: &str) -> String {
    match rule {
        Rule::Range(lo, hi) => format!("in [{}, {}]", value(lo, unit), value(hi, unit)),
        Rule::AtLeast(v) => format!(">= {}", value(v, unit)),
        Rule::AtMost(v) => format!("<= {}", value(v, unit)),
        Rule::Within(_) | Rule::Factor(_) => rule.describe(),
    }
}

/// The published rows as a table (nothing when the scenario publishes only claims); a figure
/// whose name leaves no room for its numbers gets a line of its own above them.
fn rows_table(r: &Reproduction, out: &mut String) {
    use super::text::table::{Align, Table};
    if r.rows.is_empty() {
        return;
    }
    let mut t = Table::new(2)
        .column("figure", Align::Left)
        .column("published", Align::Right)
        .column("simulated", Align::Right)
        .column("ratio", Align::Right)
        .column("rule", Align::Left)
        .column("verdict", Align::Left)
        .stackable();
    for row in &r.rows {
        t.row([
            label(&row.name, &row.run, r),
            with_sd(row.published, row.published_stddev, &row.unit),
            with_sd(row.simulated.mean, Some(row.simulated.stddev), &row.unit),
            ratio(row.ratio),
            row.rule.clone(),
            // "not reproduced: the model shows X" repeats the simulated column: the verdict
            // alone keeps the row within 80 columns (the JSON keeps the whole sentence).
            row.verdict
                .split(':')
                .next()
                .unwrap_or_default()
                .to_string(),
        ]);
    }
    out.push('\n');
    out.push_str(&t.render(super::text::fit::WIDTH));
    rows_why(r, out);
}

/// Under the table: the scenario's reasons for the figures that miss, each reason once with
/// the figures it covers, and the figures that reproduce although the scenario says why not.
fn rows_why(r: &Reproduction, out: &mut String) {
    let mut reasons: Vec<(&str, Vec<&RowResult>)> = Vec::new();
    for row in &r.rows {
        let Some(why) = row.why.as_deref() else {
            continue;
        };
        match reasons.iter_mut().find(|(w, _)| *w == why) {
            Some((_, rows)) => rows.push(row),
            None => reasons.push((why, vec![row])),
        }
    }
    if !reasons.is_empty() {
        out.push_str("\n  why these figures are not reproduced:\n");
    }
    for (why, rows) in &reasons {
        let _ = writeln!(out, "    {}:", labels(rows, r));
        out.push_str(&indented(why, 6));
    }
    let stale: Vec<&RowResult> = r.rows.iter().filter(|x| x.stale_why).collect();
    if !stale.is_empty() {
        let _ = writeln!(
            out,
            "\n  reproduced, though the scenario says why not (its `why:` is out of date): {}",
            labels(&stale, r)
        );
    }
}

/// The figures' labels, a name said once for the runs that follow it:
/// `elapsed [2.6.32-rc6], [2.6.32-rc6 + 1..5], failures [2.6.30]`.
fn labels(rows: &[&RowResult], r: &Reproduction) -> String {
    let mut out = String::new();
    let mut last: Option<&str> = None;
    for row in rows {
        if !out.is_empty() {
            out.push_str(", ");
        }
        let full = label(&row.name, &row.run, r);
        match full.strip_prefix(row.name.as_str()) {
            Some(run) if last == Some(row.name.as_str()) && !run.is_empty() => {
                out.push_str(run.trim_start())
            }
            _ => out.push_str(&full),
        }
        last = Some(&row.name);
    }
    out
}

/// `text` filled to the report's width, every line indented by `indent` spaces.
fn indented(text: &str, indent: usize) -> String {
    let pad = " ".repeat(indent);
    super::text::fit::fill(text, super::text::fit::WIDTH - indent)
        .lines()
        .map(|l| format!("{pad}{l}\n"))
        .collect()
}

/// The text report of one scenario.
pub fn render_text(r: &Reproduction, out: &mut String) {
    let mut text = String::new();
    scenario_text(r, &mut text);
    // Prose and claim lines wider than 80 columns wrap at a space (the table already fits).
    out.push_str(&super::text::fit::fit(&text));
}

fn scenario_text(r: &Reproduction, out: &mut String) {
    let _ = writeln!(out, "{}: {}", r.scenario, r.source);
    let _ = writeln!(
        out,
        "  simulated: mean ± sd over {} replications; ratio = simulated / published",
        r.replications
    );
    let runs = r
        .rows
        .iter()
        .map(|x| &x.run)
        .chain(r.claims.iter().flat_map(|c| [&c.a, &c.b]));
    if runs.into_iter().any(|x| super::text::shown(x) != *x) {
        let _ = writeln!(
            out,
            "  runs with dm-crypt flags by the flags' codes: {}",
            super::flags::code_key()
        );
    }
    rows_table(r, out);
    for c in &r.claims {
        let _ = writeln!(out, "\n  claim: {}", c.name);
        let _ = writeln!(
            out,
            "    {:<24} {}\n    {:<24} {}",
            super::text::shown(&c.a),
            with_sd(c.a_value.mean, Some(c.a_value.stddev), &c.unit),
            super::text::shown(&c.b),
            with_sd(c.b_value.mean, Some(c.b_value.stddev), &c.unit)
        );
        let _ = writeln!(
            out,
            "    {} ({}): ratio {}: {}",
            c.metric,
            c.test,
            if c.ratio.is_finite() {
                significant(c.ratio)
            } else {
                ratio(c.ratio)
            },
            c.verdict
        );
        if let Some(why) = &c.why {
            out.push_str("    why:\n");
            out.push_str(&indented(why, 6));
        }
        if c.stale_why {
            out.push_str(
                "    (reproduced, though the scenario says why not: its `why:` is out of date)\n",
            );
        }
    }
    let (rr, rn, cr, cn) = r.counts();
    let claims = if cn > 0 {
        format!(" and {cr} of {cn} claims")
    } else {
        String::new()
    };
    let _ = writeln!(out, "\n  {rr} of {rn} figures{claims} reproduced");
}

/// The row's label: its name, with the run when the scenario has several.
fn label(name: &str, run: &str, r: &Reproduction) -> String {
    let several = r.rows.iter().any(|x| x.run != r.rows[0].run);
    if several {
        format!("{name} [{}]", super::text::shown(run))
    } else {
        name.to_string()
    }
}

fn ratio(q: f64) -> String {
    if q.is_finite() {
        format!("{q:.2}")
    } else {
        "n/a".to_string()
    }
}

/// The closing summary of several scenarios.
pub fn render_summary(all: &[Reproduction], out: &mut String) {
    let (mut rr, mut rn, mut cr, mut cn) = (0, 0, 0, 0);
    let (mut misses, mut bare) = (0, 0);
    for r in all {
        let (a, b, c, d) = r.counts();
        rr += a;
        rn += b;
        cr += c;
        cn += d;
        let (m, w) = r.misses();
        misses += m;
        bare += w;
    }
    let n = all.len();
    let scenarios = if n == 1 { "scenario" } else { "scenarios" };
    let claims = if cn > 0 {
        format!(" and {cr} of {cn} claims")
    } else {
        String::new()
    };
    let why = match (misses, bare) {
        (0, _) => String::new(),
        (m, 0) => format!("; each of the {m} misses says why"),
        (m, b) => format!("; {b} of the {m} misses say no why (add `why:` to the scenario)"),
    };
    let line =
        format!("Summary: {n} {scenarios}; {rr} of {rn} published figures{claims} reproduced{why}");
    out.push_str(&super::text::fit::fit(&line));
    out.push('\n');
}

/// The JSON document of one or several reproductions.
pub fn render_json(all: &[Reproduction]) -> String {
    #[derive(Serialize)]
    struct Doc<'a> {
        scenarios: &'a [Reproduction],
        figures_reproduced: usize,
        figures: usize,
        claims_reproduced: usize,
        claims: usize,
        /// Figures and claims not reproduced whose scenario says no why.
        misses_without_why: usize,
    }
    let mut t = (0, 0, 0, 0);
    let mut bare = 0;
    for r in all {
        let c = r.counts();
        t = (t.0 + c.0, t.1 + c.1, t.2 + c.2, t.3 + c.3);
        bare += r.misses().1;
    }
    let doc = Doc {
        scenarios: all,
        figures_reproduced: t.0,
        figures: t.1,
        claims_reproduced: t.2,
        claims: t.3,
        misses_without_why: bare,
    };
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_ratio_prints_on_the_side_of_its_rule_it_falls() {
        assert_eq!(shown_against(1.006, Rule::AtLeast(1.01)), "1.006");
        assert_eq!(shown_against(1.0099, Rule::AtLeast(1.01)), "1.0099");
        assert_eq!(shown_against(1.5, Rule::AtLeast(1.01)), "1.50");
        assert_eq!(shown_against(0.7, Rule::AtMost(0.8)), "0.70");
        assert_eq!(shown_against(f64::INFINITY, Rule::AtLeast(2.0)), "inf");
        assert_eq!(shown_against(f64::NAN, Rule::AtLeast(2.0)), "NaN");
    }

    use super::*;

    fn run(variant: &str, iops: &[f64]) -> RunMetrics {
        let key = METRICS.iter().position(|m| m.key == "read_iops").unwrap();
        RunMetrics {
            run: RunRef {
                variant: Some(variant.to_string()),
                policy: "fifo".to_string(),
            },
            label: variant.to_string(),
            reps: iops
                .iter()
                .map(|&x| {
                    let mut m = Metrics::with_read_p99(1.0);
                    m.values[key] = x;
                    m
                })
                .collect(),
        }
    }

    #[test]
    fn rows_and_claims_get_verdicts_both_ways() {
        let runs = [
            run("a", &[100.0, 102.0, 98.0]),
            run("b", &[50.0, 51.0, 49.0]),
        ];
        let row = |value, rule| Row {
            name: "iops".into(),
            run: runs[0].run.clone(),
            metric: "read_iops".into(),
            value,
            stddev: None,
            rule,
            why: None,
        };
        let claim = |kind| Claim {
            name: "a over b".into(),
            metric: "read_iops".into(),
            a: runs[0].run.clone(),
            b: runs[1].run.clone(),
            kind,
            why: None,
        };
        let p = Published {
            source: "test".into(),
            replications: None,
            rows: vec![
                row(101.0, Rule::Within(0.05)),
                row(200.0, Rule::Within(0.05)),
            ],
            claims: vec![
                claim(ClaimKind::Ratio(Rule::AtLeast(1.8), 1.0)),
                claim(ClaimKind::Ratio(Rule::AtLeast(2.5), 1.0)),
                claim(ClaimKind::Noise),
            ],
        };
        let r = reproduce("t", &p, 3, &runs);
        assert!(r.rows[0].reproduced && !r.rows[1].reproduced);
        assert_eq!(r.rows[1].verdict, "not reproduced: the model shows 100.0");
        assert_eq!(r.rows[1].rule, "within 5%");
        assert!((r.rows[0].simulated.stddev - 2.0).abs() < 1e-9);
        assert!(r.claims[0].reproduced && !r.claims[1].reproduced);
        assert!(!r.claims[2].reproduced, "{}", r.claims[2].verdict);
        assert_eq!(r.counts(), (1, 2, 1, 3));
        let mut s = String::new();
        render_text(&r, &mut s);
        assert!(
            s.contains("1 of 2 figures and 1 of 3 claims reproduced"),
            "{s}"
        );
        // The summary counts the misses that give no reason, then says when all do.
        assert_eq!(r.misses(), (3, 3));
        let mut sum = String::new();
        render_summary(std::slice::from_ref(&r), &mut sum);
        let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words(&sum).ends_with("; 3 of the 3 misses say no why (add `why:` to the scenario)"),
            "{sum}"
        );
        assert!(sum.lines().all(|l| l.chars().count() <= 80), "{sum}");
        let mut p = p.clone();
        p.rows[1].why = Some("because".into());
        p.claims[1].why = Some("because".into());
        p.claims[2].why = Some("because".into());
        let r = reproduce("t", &p, 3, &runs);
        assert_eq!(r.misses(), (3, 0));
        let mut sum = String::new();
        render_summary(&[r.clone(), r], &mut sum);
        assert_eq!(
            words(&sum),
            "Summary: 2 scenarios; 2 of 4 published figures and 2 of 6 claims reproduced; each \
             of the 6 misses says why"
        );
    }

    #[test]
    fn published_ratios_and_orders_are_judged() {
        // a is twice b in every replication (paired); c ties b exactly.
        let runs = [
            run("a", &[100.0, 102.0, 98.0]),
            run("b", &[50.0, 51.0, 49.0]),
            run("c", &[50.0, 51.0, 49.0]),
        ];
        let claim = |a: usize, b: usize, kind| Claim {
            name: "c".into(),
            metric: "read_iops".into(),
            a: runs[a].run.clone(),
            b: runs[b].run.clone(),
            kind,
            why: None,
        };
        let p = Published {
            source: "test".into(),
            replications: None,
            rows: vec![],
            claims: vec![
                claim(0, 1, ClaimKind::Ratio(Rule::Within(0.2), 1.8)),
                claim(0, 1, ClaimKind::Ratio(Rule::Within(0.05), 1.8)),
                claim(1, 0, ClaimKind::Ratio(Rule::Within(0.2), 0.5)),
                claim(0, 1, ClaimKind::Better),
                claim(1, 0, ClaimKind::Better),
                claim(1, 2, ClaimKind::Better),
            ],
        };
        let r = reproduce("t", &p, 3, &runs);
        let c = &r.claims;
        assert!(
            c[0].reproduced,
            "2.0 is within 20% of 1.8: {}",
            c[0].verdict
        );
        assert_eq!(c[0].test, "ratio within 20% of 1.8");
        assert_eq!(
            c[1].verdict,
            "not reproduced: the model shows a ratio of 2.00"
        );
        assert!(c[2].reproduced, "0.5 of 0.5: {}", c[2].verdict);
        assert!(c[3].reproduced, "{}", c[3].verdict);
        assert_eq!(c[3].test, "higher beyond noise");
        assert!(!c[4].reproduced, "b is not better than a");
        assert!(!c[5].reproduced, "a tie is no order: {}", c[5].verdict);
        assert_eq!(
            c[5].verdict,
            "not reproduced: the model shows a difference within noise (ratio 1.00)"
        );
    }

    #[test]
    fn spread_claims_compare_stddevs_over_replications() {
        // a: sd 2; b: sd 1; c: no spread; d: one replication; z: zero mean.
        let runs = [
            run("a", &[100.0, 102.0, 98.0]),
            run("b", &[50.0, 51.0, 49.0]),
            run("c", &[50.0, 50.0, 50.0]),
            run("d", &[50.0]),
            run("z", &[0.0, 0.0, 0.0]),
        ];
        let claim = |a: usize, b: usize, kind| Claim {
            name: "c".into(),
            metric: "read_iops".into(),
            a: runs[a].run.clone(),
            b: runs[b].run.clone(),
            kind,
            why: None,
        };
        let p = Published {
            source: "test".into(),
            replications: None,
            rows: vec![],
            claims: vec![
                claim(0, 1, ClaimKind::Spread(Rule::AtLeast(1.5))),
                claim(1, 0, ClaimKind::Spread(Rule::AtLeast(1.5))),
                claim(0, 2, ClaimKind::Spread(Rule::AtLeast(1.5))),
                claim(2, 2, ClaimKind::Spread(Rule::AtLeast(1.5))),
                claim(0, 3, ClaimKind::Spread(Rule::AtMost(100.0))),
                claim(0, 4, ClaimKind::Ratio(Rule::AtLeast(1.01), 1.0)),
            ],
        };
        let r = reproduce("t", &p, 3, &runs);
        let c = &r.claims;
        assert!(c[0].reproduced, "{}", c[0].verdict);
        assert!((c[0].ratio - 2.0).abs() < 1e-9);
        assert_eq!(c[0].test, "spread ratio >= 1.5");
        assert_eq!(
            c[1].verdict,
            "not reproduced: the model shows a spread ratio of 0.50"
        );
        assert!(c[2].reproduced, "some spread over none is more");
        assert_eq!(
            c[3].verdict,
            "not reproduced: the model shows no spread in the second run, none in the first: \
             no ratio"
        );
        assert_eq!(
            c[4].verdict,
            "not reproduced: the model shows read_iops measured in 3 and 1 replications: a \
             spread needs two"
        );
        assert!(c[5].reproduced, "something over zero is more than zero");
        let mut s = String::new();
        render_text(&r, &mut s);
        assert!(
            s.contains("(spread ratio >= 1.5): ratio 2.00: reproduced"),
            "{s}"
        );
    }

    #[test]
    fn values_take_their_units() {
        assert_eq!(value(0.3315, "ms"), "331.5 us");
        assert_eq!(value(12.19, "ms"), "12.19 ms");
        assert_eq!(value(191500.0, ""), "191500");
        assert_eq!(with_sd(0.3315, Some(0.002), "ms"), "331.5 ± 2.0 us");
        assert_eq!(with_sd(0.02, Some(0.01), "%"), "0.02000 ± 0.01000%");
        assert_eq!(with_sd(0.3297, Some(5.8e-17), "ms"), "329.7 ± 0.0 us");
        assert_eq!(
            rule_text(Rule::Range(0.322, 0.33), "ms"),
            "in [322.0 us, 330.0 us]"
        );
    }
}
