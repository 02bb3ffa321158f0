//! The "is it noise?" summary: each run's headline metrics across its replications (mean and
//! 95 % confidence half-width), and each run against its reference run ([`Pairing`]: the
//! first of the plan, or with variants and policies the first policy of its variant) as a
//! paired difference over common random numbers, tagged better, worse or within
//! noise, in hyperfine's manner. With finite jobs, a last table in the shape of Mel Gorman's
//! 2009 kernel comparison follows: per run, the elapsed time and the GFP_ATOMIC failures as
//! mean and sample standard deviation. Text only, within 80 columns.

use super::metrics::{ATOMIC_FAILURES, ELAPSED, MetricId, Metrics};
use super::text::shown;
use crate::stats::compare::{Summary, Verdict, paired_diff, ratio, verdict};
use std::fmt::Write as _;

/// A number with about four significant digits.
pub(crate) fn num(x: f64) -> String {
    let a = x.abs();
    if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 10.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

fn value(s: &Summary, unit: &str) -> String {
    let sp = if unit.is_empty() { "" } else { " " };
    if s.n < 2 || !s.ci95_half.is_finite() {
        format!("{}{sp}{unit}", num(s.mean))
    } else {
        format!(
            "{} ± {}{sp}{unit}",
            num(s.mean),
            num(s.ci95_half),
            unit = unit
        )
    }
}

/// Whether metric `m` is zero in every replication of every run: the summary and the
/// exports leave it out (kswapd never waited on that class, say).
pub fn zero_everywhere(id: MetricId, runs: &[(String, Vec<Metrics>)]) -> bool {
    runs.iter().all(|(_, r)| r.iter().all(|x| x[id] == 0.0))
}

/// Metric `id` in each of `reps`, in replication order.
pub fn values(reps: &[Metrics], id: MetricId) -> Vec<f64> {
    reps.iter().map(|x| x[id]).collect()
}

/// Which of `runs` the others are compared against: the first run of the variant named
/// `baseline` if there is one, else the first run.
pub fn reference_index(runs: &[(String, Vec<Metrics>)]) -> usize {
    runs.iter()
        .position(|(l, _)| l == "baseline" || l.starts_with("baseline/"))
        .unwrap_or(0)
}

/// Which run each run is compared against (docs/output.md §3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pairing {
    /// Per run, the index of the run it is compared against (its own index for a reference).
    pub refs: Vec<usize>,
    /// The reference every other reference leads to: the first run of the base variant.
    pub base: usize,
}

impl Pairing {
    /// Every run against one: the first run of the variant named `baseline`, else the first.
    pub fn single(runs: &[(String, Vec<Metrics>)]) -> Pairing {
        let base = reference_index(runs);
        Pairing {
            refs: vec![base; runs.len()],
            base,
        }
    }

    /// Runs of variants crossed with policies, `cells[i]` being run `i`'s (variant, policy):
    /// within a variant each policy is paired against the variant's first policy, which is
    /// paired against the same policy of the base variant (the one named `baseline`, else the
    /// first), or that variant's first run when it did not run the policy. A variant changes
    /// the machine or the load, a policy only the queueing: a policy's effect is read against
    /// its own variant, never against another load.
    pub fn two_way(cells: &[(String, String)]) -> Pairing {
        let base_variant = cells
            .iter()
            .find(|(v, _)| v == "baseline")
            .or(cells.first())
            .map_or("", |(v, _)| v.as_str());
        let first_of = |v: &str| cells.iter().position(|(w, _)| w == v).unwrap_or(0);
        let base = first_of(base_variant);
        let refs = cells
            .iter()
            .enumerate()
            .map(|(i, (v, p))| {
                let first = first_of(v);
                if i != first {
                    first
                } else if v != base_variant {
                    cells
                        .iter()
                        .position(|(w, q)| w == base_variant && q == p)
                        .unwrap_or(base)
                } else {
                    i
                }
            })
            .collect();
        Pairing { refs, base }
    }

    /// The index of the run that run `i` is compared against (its own for a reference; the
    /// base for a run the pairing does not know).
    pub fn of(&self, i: usize) -> usize {
        self.refs.get(i).copied().unwrap_or(self.base)
    }

    /// Whether some run is compared against another run than the base (the report then names
    /// each run's reference).
    pub fn varies(&self) -> bool {
        self.refs
            .iter()
            .enumerate()
            .any(|(i, &r)| r != i && r != self.base)
    }
}

/// Renders the summary of `runs` (label, one [`Metrics`] per replication), each run compared
/// with its reference in `pairing`. Nothing when every run has a single replication.
pub fn render(runs: &[(String, Vec<Metrics>)], pairing: &Pairing, out: &mut String) {
    let Some((base_label, _)) = runs.get(pairing.base) else {
        return;
    };
    let reps = runs.iter().map(|(_, m)| m.len()).max().unwrap_or(0);
    if reps < 2 {
        return;
    }
    let varies = pairing.varies();
    if varies {
        let _ = writeln!(
            out,
            "\nAcross {reps} replications (mean ± 95% CI half-width; each run paired\n\
             against the run named after `vs`):"
        );
    } else {
        let _ = writeln!(
            out,
            "\nAcross {reps} replications (mean ± 95% CI half-width; paired against {}):",
            shown(base_label)
        );
    }
    for (i, (label, reps)) in runs.iter().enumerate() {
        let r = pairing.of(i);
        let (ref_label, reference) = &runs[r];
        if varies && r != i {
            let _ = writeln!(out, "  {} (vs {}):", shown(label), shown(ref_label));
        } else {
            let _ = writeln!(out, "  {}:", shown(label));
        }
        for (id, m) in MetricId::all().filter(|(_, m)| m.summary) {
            let xs = values(reps, id);
            // Not measured (no memory model), or zero in every replication of every run.
            if xs.iter().any(|x| x.is_nan()) || zero_everywhere(id, runs) {
                continue;
            }
            let s = Summary::of(&xs);
            let mut line = format!("    {:<18} {}", m.label, value(&s, m.unit));
            let rs = values(reference, id);
            // A reference without the metric (unfinished, or no memory model) has nothing to
            // compare against.
            if r != i && !rs.iter().any(|x| x.is_nan()) {
                line.push_str(&compare(&xs, &rs, m.lower_is_better, m.unit));
            }
            let _ = writeln!(out, "{line}");
        }
    }
    if runs
        .iter()
        .any(|(_, r)| r.iter().any(|m| m.finite_jobs > 0))
    {
        elapsed_table(runs, reps, out);
    }
}

/// Mean and sample standard deviation of `xs` as two cells with `decimals` and `unit`, or
/// `-` twice when the metric was not measured (every value NaN).
fn mean_sd(xs: &[f64], decimals: usize, unit: &str) -> [String; 2] {
    if xs.iter().all(|x| x.is_nan()) {
        return ["-".to_string(), "-".to_string()];
    }
    let s = Summary::of(xs);
    [
        format!("{:.decimals$}{unit}", s.mean),
        format!("{:.decimals$}{unit}", s.stddev),
    ]
}

/// The table of Mel Gorman's 2009 comparison: one row per run with its elapsed time and its
/// GFP_ATOMIC failures, mean and sample standard deviation over the replications. A run with
/// an unfinished replication shows `unfinished` and how many, never a number.
fn elapsed_table(runs: &[(String, Vec<Metrics>)], reps: usize, out: &mut String) {
    let same_reps = runs.iter().all(|(_, r)| r.len() == reps);
    let _ = writeln!(
        out,
        "\nElapsed time and GFP_ATOMIC failures (mean and stddev over {reps} replications):"
    );
    let mut rows: Vec<Vec<String>> = vec![
        ["run", "elapsed", "stddev", "failures", "stddev"]
            .iter()
            .map(|h| h.to_string())
            .collect(),
    ];
    if !same_reps {
        rows[0].push("reps".to_string());
    }
    let mut unfinished_any = false;
    for (label, reps) in runs {
        let elapsed = values(reps, ELAPSED);
        let unfinished = elapsed.iter().filter(|x| x.is_nan()).count();
        let [e_mean, e_sd] = if unfinished > 0 {
            unfinished_any = true;
            [
                "unfinished".to_string(),
                format!("{unfinished} of {}", reps.len()),
            ]
        } else {
            mean_sd(&elapsed, 2, "s")
        };
        let failures = values(reps, ATOMIC_FAILURES);
        let [f_mean, f_sd] = mean_sd(&failures, 1, "");
        let mut row = vec![shown(label), e_mean, e_sd, f_mean, f_sd];
        if !same_reps {
            row.push(reps.len().to_string());
        }
        rows.push(row);
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for row in &rows {
        let mut line = format!("  {:<w$}", row[0], w = widths[0]);
        for (cell, w) in row.iter().zip(&widths).skip(1) {
            let _ = write!(line, "  {cell:>w$}");
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    if unfinished_any {
        let _ = writeln!(
            out,
            "  unfinished: a finite job was still running when the run reached its duration"
        );
    }
}

/// `  → 1.48 ± 0.10 × lower` (or `higher`), or `  → within noise`.
fn compare(xs: &[f64], rs: &[f64], lower_is_better: bool, unit: &str) -> String {
    let Ok(d) = paired_diff(xs, rs) else {
        return String::new();
    };
    if verdict(&d, lower_is_better) == Verdict::WithinNoise {
        return "  → within noise".to_string();
    }
    let lower = d.estimate < 0.0;
    let (num_, den) = if lower { (rs, xs) } else { (xs, rs) };
    match ratio(num_, den) {
        Ok(r) => format!(
            "  → {} ± {} × {}",
            num(r.estimate),
            num(r.half_width()),
            if lower { "lower" } else { "higher" }
        ),
        // A zero mean on one side has no ratio: give the difference.
        Err(_) => format!(
            "  → {} {}{}{}",
            num(d.estimate.abs()),
            unit,
            if unit.is_empty() { "" } else { " " },
            if lower { "lower" } else { "higher" }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The summary with every run paired against one, as a scenario without variants has it.
    fn render(runs: &[(String, Vec<Metrics>)], out: &mut String) {
        super::render(runs, &Pairing::single(runs), out);
    }

    fn cells(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn policies_pair_within_their_variant_and_variants_policy_by_policy() {
        let c = cells(&[
            ("both", "none"),
            ("both", "dm-crypt"),
            ("small", "none"),
            ("small", "dm-crypt"),
            ("large", "dm-crypt"),
        ]);
        let p = Pairing::two_way(&c);
        // small/dm-crypt against small/none, small/none against both/none; large ran no
        // `none`: its first policy, dm-crypt, is paired against both/dm-crypt.
        assert_eq!(p.refs, [0, 0, 0, 2, 1]);
        assert_eq!(p.base, 0);
        assert!(p.varies());
        // One policy per variant: every variant against the first, as with one reference.
        let p = Pairing::two_way(&cells(&[("2.6.30", "fifo"), ("2.6.31", "fifo")]));
        assert_eq!(p.refs, [0, 0]);
        assert!(!p.varies());
        // A variant named baseline is the base wherever it stands.
        let p = Pairing::two_way(&cells(&[
            ("patched", "fifo"),
            ("patched", "split"),
            ("baseline", "fifo"),
            ("baseline", "split"),
        ]));
        assert_eq!(p.refs, [2, 0, 2, 2]);
        assert_eq!(p.base, 2);
    }

    #[test]
    fn a_varying_pairing_names_each_runs_reference() {
        let base: Vec<Metrics> = [30.0, 32.0, 31.0, 29.0].iter().map(|&x| m(x)).collect();
        let fast: Vec<Metrics> = [10.0, 11.0, 10.5, 9.5].iter().map(|&x| m(x)).collect();
        let runs: Vec<(String, Vec<Metrics>)> = vec![
            ("a/fifo".into(), base.clone()),
            ("a/split".into(), fast.clone()),
            ("b/fifo".into(), fast.clone()),
            ("b/split".into(), fast),
        ];
        let c = cells(&[("a", "fifo"), ("a", "split"), ("b", "fifo"), ("b", "split")]);
        let mut out = String::new();
        super::render(&runs, &Pairing::two_way(&c), &mut out);
        assert!(out.contains("  a/split (vs a/fifo):"), "{out}");
        assert!(out.contains("  b/fifo (vs a/fifo):"), "{out}");
        // b/split equals its reference b/fifo: within noise, where against a/fifo it would be
        // three times lower.
        let b_split = out
            .split("  b/split (vs b/fifo):")
            .nth(1)
            .expect("b/split block");
        let p99 = b_split.lines().find(|l| l.contains("read p99 ")).unwrap();
        assert!(p99.ends_with("within noise"), "{out}");
        assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
    }

    fn m(p99: f64) -> Metrics {
        Metrics::with_read_p99(p99)
    }

    /// A replication of a finite run: `elapsed` s (NaN: unfinished) and `failures`.
    fn fin(elapsed: f64, failures: f64) -> Metrics {
        let mut x = m(10.0);
        x[ELAPSED] = elapsed;
        x[ATOMIC_FAILURES] = failures;
        x.finite_jobs = 1;
        x
    }

    /// The lines of Mel's table (from its header on).
    fn table(out: &str) -> Vec<&str> {
        let start = out
            .find("\nElapsed time and GFP_ATOMIC")
            .unwrap_or_else(|| panic!("no elapsed table:\n{out}"));
        out[start + 1..].lines().collect()
    }

    #[test]
    fn finite_runs_end_with_mels_table_of_elapsed_time_and_failures() {
        let runs = vec![
            (
                "2.6.30".to_string(),
                vec![fin(30.0, 100.0), fin(32.0, 120.0), fin(31.0, 110.0)],
            ),
            (
                "baseline".to_string(),
                vec![fin(40.0, 400.0), fin(44.0, 500.0), fin(42.0, 450.0)],
            ),
            (
                "+kswapd-stay-awake".to_string(),
                vec![fin(41.0, 300.0), fin(43.5, 350.0), fin(42.0, 310.0)],
            ),
        ];
        let mut out = String::new();
        render(&runs, &mut out);
        assert_eq!(
            table(&out),
            [
                "Elapsed time and GFP_ATOMIC failures (mean and stddev over 3 replications):",
                "  run                 elapsed  stddev  failures  stddev",
                "  2.6.30               31.00s   1.00s     110.0    10.0",
                "  baseline             42.00s   2.00s     450.0    50.0",
                "  +kswapd-stay-awake   42.17s   1.26s     320.0    26.5",
            ]
        );
        assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
        // elapsed is a metric like the others, lower is better, compared with the baseline.
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with("elapsed") && l.contains('→'))
            .expect("elapsed line");
        assert!(line.contains("× lower"), "{line}");
    }

    #[test]
    fn an_unfinished_replication_is_never_a_number_and_no_memory_is_a_dash() {
        let runs = vec![
            (
                "fast".to_string(),
                vec![fin(3.0, f64::NAN), fin(3.5, f64::NAN)],
            ),
            (
                "slow".to_string(),
                vec![fin(f64::NAN, f64::NAN), fin(9.0, f64::NAN)],
            ),
        ];
        let mut out = String::new();
        render(&runs, &mut out);
        assert_eq!(
            table(&out),
            [
                "Elapsed time and GFP_ATOMIC failures (mean and stddev over 2 replications):",
                "  run      elapsed  stddev  failures  stddev",
                "  fast       3.25s   0.35s         -       -",
                "  slow  unfinished  1 of 2         -       -",
                "  unfinished: a finite job was still running when the run reached its duration",
            ]
        );
        // The per-run block leaves out a metric with an unfinished replication.
        let slow = out.split("  slow:").nth(1).unwrap();
        let slow = slow.split("\nElapsed").next().unwrap();
        assert!(!slow.contains("elapsed"), "{out}");
        assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
    }

    #[test]
    fn without_finite_jobs_there_is_no_elapsed_anywhere() {
        let a: Vec<Metrics> = [10.0, 12.0, 11.0].iter().map(|&x| m(x)).collect();
        let mut out = String::new();
        render(&[("a".into(), a.clone()), ("b".into(), a)], &mut out);
        assert!(
            !out.contains("elapsed") && !out.contains("Elapsed"),
            "{out}"
        );
    }

    #[test]
    fn runs_with_other_replication_counts_get_a_reps_column() {
        let runs = vec![
            (
                "a".to_string(),
                vec![fin(1.0, 5.0), fin(1.2, 7.0), fin(1.1, 6.0)],
            ),
            ("b".to_string(), vec![fin(2.0, 5.0), fin(2.2, 7.0)]),
        ];
        let mut out = String::new();
        render(&runs, &mut out);
        let t = table(&out);
        assert_eq!(t[1], "  run  elapsed  stddev  failures  stddev  reps");
        assert_eq!(t[3], "  b      2.10s   0.14s       6.0     1.4     2");
    }

    #[test]
    fn identical_runs_are_within_noise_on_every_metric() {
        let a: Vec<Metrics> = [10.0, 12.0, 11.0, 13.0].iter().map(|&x| m(x)).collect();
        let mut out = String::new();
        render(&[("base".into(), a.clone()), ("same".into(), a)], &mut out);
        let same = out.split("  same:").nth(1).expect("second block");
        let lines: Vec<&str> = same.lines().filter(|l| l.contains('→')).collect();
        assert_eq!(lines.len(), 7, "{out}");
        assert!(lines.iter().all(|l| l.ends_with("within noise")), "{out}");
        assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
    }

    #[test]
    fn a_real_gap_is_tagged_with_its_ratio() {
        let base: Vec<Metrics> = [30.0, 32.0, 31.0, 29.0].iter().map(|&x| m(x)).collect();
        let fast: Vec<Metrics> = [10.0, 11.0, 10.5, 9.5].iter().map(|&x| m(x)).collect();
        let mut out = String::new();
        render(&[("fifo".into(), base), ("split".into(), fast)], &mut out);
        let line = out
            .lines()
            .find(|l| l.contains("read p99 ") && l.contains('→'))
            .expect("p99 line");
        assert!(line.contains("× lower"), "{line}");
        assert!(line.contains("2.9"), "{line}");
        // p50 is the same in both: within noise.
        let p50 = out
            .lines()
            .find(|l| l.contains("read p50") && l.contains('→'))
            .expect("p50 line");
        assert!(p50.ends_with("within noise"), "{p50}");
    }

    #[test]
    fn a_run_named_baseline_is_the_reference() {
        let a: Vec<Metrics> = [10.0, 12.0, 11.0, 13.0].iter().map(|&x| m(x)).collect();
        let mut out = String::new();
        render(&[("x".into(), a.clone()), ("baseline".into(), a)], &mut out);
        assert!(out.contains("paired against baseline"), "{out}");
        let x = out.split("  baseline:").next().expect("x block");
        assert!(x.contains("within noise"), "{out}");
    }

    #[test]
    fn one_replication_prints_nothing() {
        let mut out = String::new();
        render(
            &[("a".into(), vec![m(1.0)]), ("b".into(), vec![m(2.0)])],
            &mut out,
        );
        assert!(out.is_empty());
    }
}
