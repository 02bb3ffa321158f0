//! Export files of `qsim run`: `--json FILE` (the full results: fio-compatible json+ jobs, one
//! per run, plus qsim's replication summary and the plot data), `--csv FILE` and
//! `--markdown FILE` in hyperfine's layouts (docs/output.md §3), one row per run and metric.
//! This module only builds the bytes; [`crate::output`] writes them (whole or not at all, and
//! through devices, pipes and symlinks).
//!
//! hyperfine's CSV has the columns `command,mean,stddev,median,user,system,min,max`; qsim has
//! several metrics per run, so it adds `metric` and `unit` after `command`, leaves out
//! `user`/`system` (no process ran), and adds the 95 % confidence half-width and the paired
//! comparison against the reference (`relative` = mean ratio to the reference, its 95 %
//! half-width, and the verdict), then, for a sweep or a study, hyperfine's `parameter_<name>`
//! columns. The Markdown file has one hyperfine table per metric.

use super::metrics::{METRICS, MetricId, Metrics};
use super::plots::PlotData;
use super::replications::{Pairing, values, zero_everywhere};
use crate::stats::compare::{Interval, Summary, Verdict, paired_diff, ratio, verdict};
use serde::Serialize;
use std::fmt::Write as _;

/// One metric of one run across its replications, compared with the reference run.
#[derive(Debug, Clone, Serialize)]
pub struct MetricRow {
    /// The run's label (hyperfine's "command").
    pub command: String,
    /// The metric's label.
    pub metric: &'static str,
    /// Its unit (empty for counts and rates named in the label).
    pub unit: &'static str,
    /// Whether lower is better.
    pub lower_is_better: bool,
    /// Mean, σ, min, max and 95 % half-width across replications.
    pub summary: Summary,
    /// Median across replications.
    pub median: f64,
    /// The value in each replication, in replication order (hyperfine's `times`).
    pub times: Vec<f64>,
    /// Paired difference against the reference, with its 95 % interval (`None` for the
    /// reference itself or with fewer than two replications).
    pub difference: Option<Interval>,
    /// Ratio of means against the reference, with its 95 % interval (`None` as above, or
    /// when the reference's mean is 0).
    pub relative: Option<Interval>,
    /// `lower`, `higher` or `within noise` against the reference (`None` as above).
    pub verdict: Option<&'static str>,
    /// The run this one is compared against, when runs have references of their own
    /// (variants crossed with policies: [`Pairing::two_way`]); absent when it is the export's
    /// one reference.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub against: Option<String>,
    /// hyperfine's `parameters` of a scan: the swept paths and this run's values (a study's
    /// run: its knob and value); absent outside a sweep ([`super::sweep::parameters`]).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub parameters: std::collections::BTreeMap<String, String>,
}

/// Every measured metric of every run, run-major, in the summary's metric order; metrics not
/// measured in a run (no memory model) or zero everywhere are left out, as in the text
/// summary. Each run is compared with its reference in `pairing`. Returns the base
/// reference's label too.
pub fn metric_rows(runs: &[(String, Vec<Metrics>)], pairing: &Pairing) -> (String, Vec<MetricRow>) {
    let Some((base_label, _)) = runs.get(pairing.base) else {
        return (String::new(), Vec::new());
    };
    let varies = pairing.varies();
    let mut rows = Vec::new();
    for (i, (label, reps)) in runs.iter().enumerate() {
        let r = pairing.of(i);
        let (ref_label, reference) = &runs[r];
        for (id, m) in MetricId::all() {
            if zero_everywhere(id, runs) {
                continue;
            }
            let xs = values(reps, id);
            if xs.iter().any(|x| x.is_nan()) {
                continue;
            }
            let rs = values(reference, id);
            let vs_ref = r != i;
            let difference = vs_ref.then(|| paired_diff(&xs, &rs).ok()).flatten();
            rows.push(MetricRow {
                command: label.clone(),
                metric: m.label,
                unit: m.unit,
                lower_is_better: m.lower_is_better,
                summary: Summary::of(&xs),
                median: median(&xs),
                relative: vs_ref.then(|| ratio(&xs, &rs).ok()).flatten(),
                verdict: difference.map(|d| match verdict(&d, m.lower_is_better) {
                    Verdict::WithinNoise => "within noise",
                    _ if d.estimate < 0.0 => "lower",
                    _ => "higher",
                }),
                difference,
                times: xs,
                parameters: Default::default(),
                against: (varies && vs_ref).then(|| ref_label.clone()),
            });
        }
    }
    (base_label.clone(), rows)
}

/// Median of `xs` (NaN when empty).
fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// A CSV field: quoted when it holds a comma, quote or line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A number for CSV: empty when NaN or infinite.
fn csv_num(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        String::new()
    }
}

/// The CSV export: a header, then one line per run and metric, every run against the first
/// (or `baseline`).
pub fn csv(runs: &[(String, Vec<Metrics>)]) -> String {
    csv_with_parameters(runs, &Pairing::single(runs), &[])
}

/// The CSV export of `report`: [`csv`], with hyperfine's `parameter_<name>` columns when the
/// runs came from a sweep or a sensitivity study (one per swept path; empty where a run does
/// not set it, as a study's base).
pub fn report_csv(report: &super::Report) -> String {
    let params: Vec<_> = (0..report.metrics.len())
        .map(|i| super::sweep::parameters(report, i))
        .collect();
    csv_with_parameters(&report.metrics, &report.pairing(), &params)
}

/// [`csv`] with each run against its reference in `pairing` (a `against` column names it
/// when runs have references of their own) and `params[i]` (run `i`'s swept values) as
/// trailing `parameter_<name>` columns.
fn csv_with_parameters(
    runs: &[(String, Vec<Metrics>)],
    pairing: &Pairing,
    params: &[std::collections::BTreeMap<String, String>],
) -> String {
    let (_, rows) = metric_rows(runs, pairing);
    let names: std::collections::BTreeSet<&String> = params.iter().flat_map(|p| p.keys()).collect();
    let varies = pairing.varies();
    let mut s = String::from(
        "command,metric,unit,mean,stddev,median,min,max,ci95_half,relative,relative_ci95_half,verdict",
    );
    if varies {
        s.push_str(",against");
    }
    for n in &names {
        s.push(',');
        s.push_str(&csv_field(&format!("parameter_{n}")));
    }
    s.push('\n');
    for r in &rows {
        let rel = r.relative.as_ref();
        let run = runs.iter().position(|(l, _)| *l == r.command);
        let _ = write!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{}",
            csv_field(&r.command),
            csv_field(r.metric),
            r.unit,
            csv_num(r.summary.mean),
            csv_num(r.summary.stddev),
            csv_num(r.median),
            csv_num(r.summary.min),
            csv_num(r.summary.max),
            csv_num(r.summary.ci95_half),
            rel.map_or(String::new(), |i| csv_num(i.estimate)),
            rel.map_or(String::new(), |i| csv_num(i.half_width())),
            r.verdict.unwrap_or("")
        );
        if varies {
            s.push(',');
            s.push_str(&csv_field(r.against.as_deref().unwrap_or("")));
        }
        for n in &names {
            let v = run.and_then(|i| params.get(i)).and_then(|p| p.get(*n));
            s.push(',');
            s.push_str(&v.map_or(String::new(), |v| csv_field(v)));
        }
        s.push('\n');
    }
    s
}

/// Decimals for about four significant digits of `x` (2 at most, as hyperfine prints).
fn decimals(x: f64) -> usize {
    match x.abs() {
        a if a >= 100.0 => 1,
        _ => 2,
    }
}

/// `x` with `dec` decimals, `-` when not finite.
fn cell(x: f64, dec: usize) -> String {
    if x.is_finite() {
        format!("{x:.dec$}")
    } else {
        "-".to_string()
    }
}

/// The Markdown export: per metric, hyperfine's table (`Mean ± σ`, min, max, and the mean
/// relative to the run's reference with its propagated σ) plus a verdict column from the paired
/// 95 % interval; an `Against` column names each run's reference when runs have their own
/// ([`Pairing::two_way`]).
pub fn markdown(runs: &[(String, Vec<Metrics>)], pairing: &Pairing) -> String {
    let (base_label, rows) = metric_rows(runs, pairing);
    let reps = runs.iter().map(|(_, m)| m.len()).max().unwrap_or(0);
    let varies = pairing.varies();
    let mut s = String::new();
    if varies {
        let _ = writeln!(
            s,
            "Mean ± σ over {reps} replications; Relative is against the run in Against (± σ), \
             a variant's first policy against `{base_label}`; the verdict uses the paired 95% \
             confidence interval."
        );
    } else {
        let _ = writeln!(
            s,
            "Mean ± σ over {reps} replications; Relative is against `{base_label}` (± σ); the \
             verdict uses the paired 95% confidence interval."
        );
    }
    for m in METRICS {
        let of_metric: Vec<&MetricRow> = rows.iter().filter(|r| r.metric == m.label).collect();
        if of_metric.is_empty() {
            continue;
        }
        let unit = if m.unit.is_empty() {
            String::new()
        } else {
            format!(" [{}]", m.unit)
        };
        let (head, rule) = if varies {
            (" Against |", ":---|")
        } else {
            ("", "")
        };
        let _ = writeln!(s, "\n### {}{unit}\n", m.label);
        let _ = writeln!(
            s,
            "| Command | Mean{unit} | Min{unit} | Max{unit} | Relative | Verdict |{head}"
        );
        let _ = writeln!(s, "|:---|---:|---:|---:|---:|:---|{rule}");
        for r in &of_metric {
            // A row names its reference when references vary; otherwise it is the base.
            let ref_label = r.against.as_deref().unwrap_or(&base_label);
            let is_ref = r.command == ref_label;
            let reference = of_metric.iter().find(|x| x.command == ref_label);
            let relative = match reference {
                _ if is_ref => "1.00".to_string(),
                Some(b) if b.summary.mean != 0.0 => {
                    let q = r.summary.mean / b.summary.mean;
                    let rel = |x: &Summary| x.stddev / x.mean;
                    let sd = q.abs() * (rel(&r.summary).powi(2) + rel(&b.summary).powi(2)).sqrt();
                    format!("{:.2} ± {:.2}", q, sd)
                }
                _ => "-".to_string(),
            };
            let dec = decimals(r.summary.mean);
            let against = match (varies, is_ref) {
                (false, _) => String::new(),
                (true, true) => " - |".to_string(),
                (true, false) => format!(" `{ref_label}` |"),
            };
            let _ = writeln!(
                s,
                "| `{}` | {} ± {} | {} | {} | {} | {} |{against}",
                r.command,
                cell(r.summary.mean, dec),
                cell(r.summary.stddev, dec),
                cell(r.summary.min, dec),
                cell(r.summary.max, dec),
                relative,
                r.verdict.unwrap_or(if is_ref { "reference" } else { "-" })
            );
        }
    }
    s
}

/// qsim's part of the `--json` export.
#[derive(Debug, Serialize)]
pub struct ResultsQsim<'a> {
    /// Layout version of this object ([`super::SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The run every other is compared against, or, when runs have references of their own
    /// (a summary row's `against`), the one those lead to.
    pub reference: String,
    /// Replications per run (the largest, if variants differ).
    pub replications: u32,
    /// One row per run and metric ([`metric_rows`]).
    pub summary: Vec<MetricRow>,
    /// How a `--precision` target ended, as the text report says it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<String>,
    /// What the plots draw; `qsim plot` reads it back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plots: Option<&'a PlotData>,
}

impl<'a> ResultsQsim<'a> {
    /// qsim's part of the export of `report`: its metrics compared with the reference run,
    /// its precision line and its plot series.
    pub fn of(report: &'a super::Report) -> ResultsQsim<'a> {
        let (reference, mut summary) = metric_rows(&report.metrics, &report.pairing());
        for row in &mut summary {
            if let Some(i) = report.metrics.iter().position(|(l, _)| *l == row.command) {
                row.parameters = super::sweep::parameters(report, i);
            }
        }
        ResultsQsim {
            schema_version: super::SCHEMA_VERSION,
            reference,
            replications: report.replications,
            summary,
            precision: report.precision.as_ref().map(|p| p.line()),
            plots: report.plots.as_ref(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p99: f64, fails: f64) -> Metrics {
        let mut x = Metrics::with_read_p99(p99);
        for (key, v) in [
            ("atomic_failures", fails),
            ("kswapd_cwait_sync_s", 0.0),
            ("kswapd_cwait_async_s", 1.0),
        ] {
            x[MetricId::of(key)] = v;
        }
        x
    }

    fn runs() -> Vec<(String, Vec<Metrics>)> {
        vec![
            (
                "fifo".into(),
                vec![m(30.0, 10.0), m(32.0, 12.0), m(31.0, 11.0), m(29.0, 13.0)],
            ),
            (
                "split, fast".into(),
                vec![m(10.0, 10.0), m(11.0, 12.0), m(10.5, 11.0), m(9.5, 13.0)],
            ),
        ]
    }

    /// Two variants crossed with two policies: b/split equals b/fifo, both three times a/fifo.
    fn crossed() -> (Vec<(String, Vec<Metrics>)>, Pairing) {
        let slow = vec![m(30.0, 10.0), m(32.0, 12.0), m(31.0, 11.0), m(29.0, 13.0)];
        let fast = vec![m(10.0, 10.0), m(11.0, 12.0), m(10.5, 11.0), m(9.5, 13.0)];
        let runs = vec![
            ("a/fifo".to_string(), slow.clone()),
            ("a/split".to_string(), slow),
            ("b/fifo".to_string(), fast.clone()),
            ("b/split".to_string(), fast),
        ];
        let cells: Vec<(String, String)> =
            [("a", "fifo"), ("a", "split"), ("b", "fifo"), ("b", "split")]
                .iter()
                .map(|(v, p)| (v.to_string(), p.to_string()))
                .collect();
        (runs, Pairing::two_way(&cells))
    }

    #[test]
    fn crossed_runs_name_their_reference_in_every_export() {
        let (runs, pairing) = crossed();
        let (base, rows) = metric_rows(&runs, &pairing);
        assert_eq!(base, "a/fifo");
        let p99 = |cmd: &str| {
            rows.iter()
                .find(|r| r.command == cmd && r.metric == "read p99")
                .unwrap()
        };
        assert_eq!(p99("b/split").against.as_deref(), Some("b/fifo"));
        assert_eq!(p99("b/split").verdict, Some("within noise"));
        assert_eq!(p99("b/fifo").against.as_deref(), Some("a/fifo"));
        assert_eq!(p99("b/fifo").verdict, Some("lower"));
        assert!(p99("a/fifo").against.is_none());
        let text = csv_with_parameters(&runs, &pairing, &[]);
        assert!(
            text.lines().next().unwrap().ends_with(",verdict,against"),
            "{text}"
        );
        assert!(
            text.lines()
                .any(|l| l.starts_with("b/split,read p99,") && l.ends_with(",within noise,b/fifo")),
            "{text}"
        );
        let md = markdown(&runs, &pairing);
        assert!(md.contains("| Relative | Verdict | Against |"), "{md}");
        assert!(md.contains("| within noise | `b/fifo` |"), "{md}");
        // One reference for all: no extra column anywhere.
        assert!(!csv(&runs).contains("against"));
        assert!(!markdown(&runs, &Pairing::single(&runs)).contains("Against"));
    }

    #[test]
    fn rows_compare_each_run_with_the_reference() {
        let (reference, rows) = metric_rows(&runs(), &Pairing::single(&runs()));
        assert_eq!(reference, "fifo");
        let p99 = rows
            .iter()
            .find(|r| r.command == "split, fast" && r.metric == "read p99")
            .expect("row");
        assert_eq!(p99.summary.mean, 10.25);
        assert_eq!(p99.median, 10.25);
        assert_eq!(p99.times, vec![10.0, 11.0, 10.5, 9.5]);
        assert_eq!(p99.verdict, Some("lower"));
        let rel = p99.relative.expect("ratio");
        assert!((rel.estimate - 10.25 / 30.5).abs() < 1e-12);
        let fails = rows
            .iter()
            .find(|r| r.command == "split, fast" && r.metric == "GFP_ATOMIC fails")
            .expect("row");
        assert_eq!(fails.verdict, Some("within noise"));
        // kswapd cwait sync is zero everywhere: left out, as in the text summary.
        assert!(rows.iter().all(|r| r.metric != "kswapd cwait sync"));
        let fifo = rows.iter().find(|r| r.command == "fifo").expect("row");
        assert!(fifo.verdict.is_none() && fifo.relative.is_none());
    }

    #[test]
    fn csv_adds_one_parameter_column_per_swept_path() {
        let runs = runs();
        let mut params = vec![std::collections::BTreeMap::new(); runs.len()];
        params[0].insert("crypt.encrypt_rate".to_string(), "60MB/s".to_string());
        params[1].insert("crypt.encrypt_rate".to_string(), "1,2".to_string());
        let text = csv_with_parameters(&runs, &Pairing::single(&runs), &params);
        let mut lines = text.lines();
        assert!(
            lines
                .next()
                .unwrap()
                .ends_with(",verdict,parameter_crypt.encrypt_rate")
        );
        let first = lines.next().unwrap();
        assert!(first.ends_with(",60MB/s"), "{first}");
        assert!(text.contains(",\"1,2\"\n"), "{text}");
        assert_eq!(
            csv_with_parameters(&runs, &Pairing::single(&runs), &[]),
            csv(&runs)
        );
        assert!(!csv(&runs).contains("parameter_"));
    }

    #[test]
    fn csv_has_one_line_per_row_and_quotes_commas() {
        let text = csv(&runs());
        let (_, rows) = metric_rows(&runs(), &Pairing::single(&runs()));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), rows.len() + 1);
        assert!(lines[0].starts_with("command,metric,unit,mean,stddev,median,min,max"));
        let p99 = lines
            .iter()
            .find(|l| l.starts_with("\"split, fast\",read p99,"))
            .expect("quoted command");
        assert!(p99.contains(",10.25,"), "{p99}");
        assert!(p99.ends_with(",lower"), "{p99}");
    }

    #[test]
    fn markdown_has_a_hyperfine_table_per_metric() {
        let text = markdown(&runs(), &Pairing::single(&runs()));
        assert!(text.contains("### read p99 [ms]"), "{text}");
        assert!(
            text.contains("| Command | Mean [ms] | Min [ms] | Max [ms] | Relative | Verdict |")
        );
        assert!(text.contains("|:---|---:|---:|---:|---:|:---|"));
        assert!(
            text.contains("| `fifo` | 30.50 ± 1.29 | 29.00 | 32.00 | 1.00 | reference |"),
            "{text}"
        );
        assert!(
            text.contains("| `split, fast` | 10.25 ± 0.65 | 9.50 | 11.00 | 0.34 ± 0.03 | lower |"),
            "{text}"
        );
    }
}
