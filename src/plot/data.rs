//! Reading plot data back: `qsim plot` takes the series a `qsim run --json` export holds
//! (`qsim.plots`, the types of [`crate::report::plots`], re-exported here) and checks every
//! value it will draw, so both commands draw from exactly the same numbers without
//! re-simulating, and a damaged file gets an error naming the field.

pub use crate::report::plots::{
    MemoryPlot, PLOT_PERCENTILES, PercentileBand, PlotData, RunPlot, Spread,
};
use crate::stats::series::Timeline;
use serde::Deserialize;

/// Most runs a results file may hold for `qsim plot`: each gets a row in every bar chart and
/// possibly a timeline page, so more would be unreadable and slow.
pub const MAX_RUNS: usize = 4096;
/// Most distinct stage names over all runs (each is a colour and a legend entry).
pub const MAX_STAGES: usize = 64;
/// Most buckets a timeline grid may have (qsim records about a thousand).
pub const MAX_BUCKETS: usize = 1 << 20;
/// Most series (gauges, counts, state bands, levels, states of a band) of one kind a
/// timeline may carry.
pub const MAX_SERIES: usize = 256;

/// Why a results file's text is not plot data qsim can draw. [`DecodeError::field`] names the
/// offending place as a JSON path (`qsim.plots.runs[0].timeline.states[0].states`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecodeError {
    /// The text is not JSON.
    #[error("line {line}, column {column}: not JSON: {message}")]
    NotJson {
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// serde_json's message.
        message: String,
    },
    /// The JSON has no `qsim.plots` object.
    #[error("no `qsim.plots` object (fio's own JSON has none)")]
    NoPlots,
    /// `qsim.plots` does not have the shape of [`PlotData`].
    #[error("`qsim.plots` is not qsim's plot data: {0}")]
    Shape(String),
    /// The shape is right but a value cannot be drawn.
    #[error("`{field}` {message}")]
    Invalid {
        /// Where, as a JSON path.
        field: String,
        /// What is wrong with it.
        message: String,
    },
}

impl DecodeError {
    /// The message for a file shown as `file`: `file:LINE:COLUMN: not JSON: ...` for a syntax
    /// error (editors jump there), `file: ...` otherwise.
    pub fn in_file(&self, file: &str) -> String {
        match self {
            DecodeError::NotJson {
                line,
                column,
                message,
            } => format!("{file}:{line}:{column}: not JSON: {message}"),
            e => format!("{file}: {e}"),
        }
    }

    /// The JSON path of the offending value, when the error is about one value.
    pub fn field(&self) -> Option<&str> {
        match self {
            DecodeError::Invalid { field, .. } => Some(field),
            _ => None,
        }
    }
}

/// Reads the plot data out of the text of a `qsim run --json` export and checks it can be
/// drawn ([`PlotData::check`]). The plots are drawn only from data that passed here, so a
/// hand-edited or damaged file gets an error naming the field instead of a wrong picture.
pub fn from_results_json(text: &str) -> Result<PlotData, DecodeError> {
    // Only `qsim.plots` is kept: the fio jobs beside it (most of a large export) are skipped
    // while parsing, so memory stays near the plot data's own size, not the file's.
    #[derive(Deserialize)]
    struct Results {
        qsim: Option<Qsim>,
    }
    #[derive(Deserialize)]
    struct Qsim {
        plots: Option<PlotData>,
    }
    let results: Results = serde_json::from_str(text).map_err(|e| {
        if e.classify() == serde_json::error::Category::Data {
            DecodeError::Shape(e.to_string())
        } else {
            DecodeError::NotJson {
                line: e.line(),
                column: e.column(),
                message: e.to_string(),
            }
        }
    })?;
    let data = results
        .qsim
        .and_then(|q| q.plots)
        .ok_or(DecodeError::NoPlots)?;
    data.check()?;
    Ok(data)
}

/// `Err(Invalid)` at `field` unless `ok`.
fn need(ok: bool, field: impl FnOnce() -> String, message: &str) -> Result<(), DecodeError> {
    if ok {
        Ok(())
    } else {
        Err(DecodeError::Invalid {
            field: field(),
            message: message.to_string(),
        })
    }
}

/// At most `max` items at `field`.
fn at_most(len: usize, max: usize, field: impl FnOnce() -> String) -> Result<(), DecodeError> {
    if len <= max {
        Ok(())
    } else {
        Err(DecodeError::Invalid {
            field: field(),
            message: format!("has {len} entries; at most {max} can be drawn"),
        })
    }
}

impl Spread {
    fn check(&self, at: &str) -> Result<(), DecodeError> {
        need(
            self.mean.is_finite(),
            || format!("{at}.mean"),
            "is not a finite number",
        )?;
        need(
            self.stddev.is_finite() && self.stddev >= 0.0,
            || format!("{at}.stddev"),
            "must be a finite number ≥ 0",
        )?;
        need(
            self.ci95_half.is_finite() && self.ci95_half >= 0.0,
            || format!("{at}.ci95_half"),
            "must be a finite number ≥ 0",
        )
    }
}

impl PlotData {
    /// Checks every value the plots use: a scenario name that is a plain file name (issue 11,
    /// case 3: `qsim plot` makes `plots/<scenario>/`), finite numbers where numbers are drawn, percentiles
    /// in `[0, 100)`, histogram bins in ascending order, timeline series as long as their grid
    /// and state rows as long as the state names (the recorder's invariants), and counts
    /// bounded by [`MAX_RUNS`], [`MAX_STAGES`], [`MAX_BUCKETS`] and [`MAX_SERIES`]. qsim's own
    /// exports always pass.
    pub fn check(&self) -> Result<(), DecodeError> {
        const AT: &str = "qsim.plots";
        // `qsim plot` names its default directory after the scenario (plots/<scenario>/).
        let name = self.scenario.as_str();
        need(
            !name.is_empty()
                && name.len() <= 255
                && name != "."
                && name != ".."
                && !name.contains(['/', '\\'])
                && !name.chars().any(char::is_control),
            || format!("{AT}.scenario"),
            "must be a plain file name (no `/`, not `.` or `..`, no control characters, at \
             most 255 bytes): qsim plot names its default directory after it",
        )?;
        at_most(self.runs.len(), MAX_RUNS, || format!("{AT}.runs"))?;
        at_most(self.flags.len(), MAX_RUNS, || format!("{AT}.flags"))?;
        for (i, f) in self.flags.iter().enumerate() {
            at_most(f.rows.len(), MAX_RUNS, || format!("{AT}.flags[{i}].rows"))?;
        }
        let mut stages = std::collections::HashSet::new();
        for (i, r) in self.runs.iter().enumerate() {
            let at = format!("{AT}.runs[{i}]");
            for (k, b) in r.read_percentiles.iter().enumerate() {
                need(
                    b.p.is_finite() && (0.0..100.0).contains(&b.p),
                    || format!("{at}.read_percentiles[{k}].p"),
                    "must be a percentile in [0, 100)",
                )?;
                b.ns.check(&format!("{at}.read_percentiles[{k}].ns"))?;
            }
            for (k, w) in r.read_clat_bins.windows(2).enumerate() {
                need(
                    w[0].0 < w[1].0,
                    || format!("{at}.read_clat_bins[{}]", k + 1),
                    "must come after the bin before it (bins ascend by latency)",
                )?;
            }
            for (k, (name, ns)) in r.read_stages.iter().enumerate() {
                need(
                    ns.is_finite(),
                    || format!("{at}.read_stages[{k}]"),
                    "is not a finite number",
                )?;
                stages.insert(name.as_str());
                at_most(stages.len(), MAX_STAGES, || {
                    format!("{AT}.runs[*].read_stages (distinct names)")
                })?;
            }
            if let Some(m) = &r.memory {
                for (k, (_, s)) in m.failures_by_order.iter().enumerate() {
                    s.check(&format!("{at}.memory.failures_by_order[{k}]"))?;
                }
                m.failures.check(&format!("{at}.memory.failures"))?;
                for (k, s) in m.kswapd_cwait_s.iter().enumerate() {
                    s.check(&format!("{at}.memory.kswapd_cwait_s[{k}]"))?;
                }
            }
            if let Some(t) = &r.timeline {
                check_timeline(t, &format!("{at}.timeline"))?;
            }
        }
        Ok(())
    }
}

/// The recorder's invariants of a timeline (see [`Timeline`]): its grid within bounds and
/// every series one value per bucket. `at` names it in the error. `qsim merge` checks a shard
/// file's timelines with it too, before anything draws them.
pub fn check_timeline(t: &Timeline, at: &str) -> Result<(), DecodeError> {
    let g = &t.grid;
    need(
        g.bucket_ns >= 1,
        || format!("{at}.grid.bucket_ns"),
        "must be at least 1",
    )?;
    need(
        (1..=MAX_BUCKETS).contains(&g.buckets),
        || format!("{at}.grid.buckets"),
        &format!("must be between 1 and {MAX_BUCKETS}"),
    )?;
    need(
        (g.buckets as u64)
            .checked_mul(g.bucket_ns)
            .and_then(|span| span.checked_add(g.start_ns))
            .is_some(),
        || format!("{at}.grid"),
        "ends past the largest time qsim can represent (start_ns + buckets × bucket_ns)",
    )?;
    let n = g.buckets;
    let len = |what: String, got: usize| {
        need(
            got == n,
            || what,
            &format!("has {got} buckets; the grid has {n}"),
        )
    };
    at_most(t.gauges.len(), MAX_SERIES, || format!("{at}.gauges"))?;
    for (k, s) in t.gauges.iter().enumerate() {
        len(format!("{at}.gauges[{k}].min"), s.min.len())?;
        len(format!("{at}.gauges[{k}].max"), s.max.len())?;
        for (b, (&lo, &hi)) in s.min.iter().zip(&s.max).enumerate() {
            need(
                (lo.is_nan() && hi.is_nan()) || (lo.is_finite() && hi.is_finite() && lo <= hi),
                || format!("{at}.gauges[{k}] bucket {b}"),
                "needs min ≤ max, both numbers or both null (an unvisited bucket)",
            )?;
        }
    }
    at_most(t.counts.len(), MAX_SERIES, || format!("{at}.counts"))?;
    for (k, c) in t.counts.iter().enumerate() {
        len(format!("{at}.counts[{k}].counts"), c.counts.len())?;
    }
    at_most(t.states.len(), MAX_SERIES, || format!("{at}.states"))?;
    for (k, s) in t.states.iter().enumerate() {
        at_most(s.states.len(), MAX_SERIES, || {
            format!("{at}.states[{k}].states")
        })?;
        len(format!("{at}.states[{k}].time_ns"), s.time_ns.len())?;
        for (b, row) in s.time_ns.iter().enumerate() {
            need(
                row.len() == s.states.len(),
                || format!("{at}.states[{k}].time_ns[{b}]"),
                &format!(
                    "has {} entries but `states` names {} states",
                    row.len(),
                    s.states.len()
                ),
            )?;
            let total: u128 = row.iter().map(|&x| u128::from(x)).sum();
            need(
                total <= u128::from(g.bucket_ns),
                || format!("{at}.states[{k}].time_ns[{b}]"),
                "adds up to more time than the bucket is long (grid.bucket_ns)",
            )?;
        }
    }
    at_most(t.levels.len(), MAX_SERIES, || format!("{at}.levels"))?;
    for (k, l) in t.levels.iter().enumerate() {
        need(
            l.value.is_finite(),
            || format!("{at}.levels[{k}].value"),
            "is not a finite number",
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A results file holding one run whose timeline is `timeline` (JSON text).
    fn results(timeline: &str) -> String {
        format!(
            r#"{{"qsim": {{"plots": {{"scenario": "s", "seed": 1, "replications": 1, "runs": [
                {{"label": "fifo", "read_percentiles": [], "read_clat_bins": [],
                  "read_stages": [], "memory": null, "timeline": {timeline}}}]}}}}}}"#
        )
    }

    fn invalid_field(text: &str) -> String {
        match from_results_json(text) {
            Err(DecodeError::Invalid { field, .. }) => field,
            other => panic!("expected an invalid field, got {other:?}"),
        }
    }

    #[test]
    fn state_rows_must_match_the_state_names() {
        // Issue 11, case 2: empty state names with non-empty rows made `qsim plot` index out
        // of bounds while drawing.
        let t = r#"{"grid": {"start_ns": 0, "bucket_ns": 10, "buckets": 2}, "gauges": [],
            "counts": [], "levels": [],
            "states": [{"name": "kswapd", "states": [], "time_ns": [[5], [5]]}]}"#;
        let text = results(t);
        assert_eq!(
            invalid_field(&text),
            "qsim.plots.runs[0].timeline.states[0].time_ns[0]"
        );
        let msg = from_results_json(&text).unwrap_err().in_file("r.json");
        assert!(msg.starts_with("r.json: `qsim.plots.runs[0]"), "{msg}");
        assert!(msg.contains("names 0 states"), "{msg}");
        // With names for every column it decodes.
        let ok = t.replace(r#""states": []"#, r#""states": ["asleep"]"#);
        assert!(from_results_json(&results(&ok)).is_ok());
    }

    #[test]
    fn series_must_be_as_long_as_the_grid_and_times_fit_in_a_bucket() {
        let grid = r#""grid": {"start_ns": 0, "bucket_ns": 10, "buckets": 2}"#;
        let t = format!(
            r#"{{{grid}, "gauges": [{{"name": "q", "unit": "", "min": [1], "max": [2]}}],
                "counts": [], "states": [], "levels": []}}"#
        );
        assert_eq!(
            invalid_field(&results(&t)),
            "qsim.plots.runs[0].timeline.gauges[0].min"
        );
        let t = format!(
            r#"{{{grid}, "gauges": [{{"name": "q", "unit": "", "min": [3, null], "max": [2, null]}}],
                "counts": [], "states": [], "levels": []}}"#
        );
        assert_eq!(
            invalid_field(&results(&t)),
            "qsim.plots.runs[0].timeline.gauges[0] bucket 0"
        );
        let t = format!(
            r#"{{{grid}, "gauges": [], "counts": [{{"name": "c", "counts": [1, 2, 3]}}],
                "states": [], "levels": []}}"#
        );
        assert_eq!(
            invalid_field(&results(&t)),
            "qsim.plots.runs[0].timeline.counts[0].counts"
        );
        let t = format!(
            r#"{{{grid}, "gauges": [], "counts": [], "levels": [],
                "states": [{{"name": "k", "states": ["a", "b"], "time_ns": [[6, 5], [0, 0]]}}]}}"#
        );
        assert_eq!(
            invalid_field(&results(&t)),
            "qsim.plots.runs[0].timeline.states[0].time_ns[0]"
        );
    }

    #[test]
    fn grids_that_overflow_or_are_empty_are_refused() {
        for (grid, field) in [
            (
                r#"{"start_ns": 0, "bucket_ns": 0, "buckets": 1}"#,
                "grid.bucket_ns",
            ),
            (
                r#"{"start_ns": 0, "bucket_ns": 1, "buckets": 0}"#,
                "grid.buckets",
            ),
            (
                r#"{"start_ns": 18446744073709551000, "bucket_ns": 1000, "buckets": 1}"#,
                "grid",
            ),
        ] {
            let t = format!(
                r#"{{"grid": {grid}, "gauges": [], "counts": [], "states": [], "levels": []}}"#
            );
            assert_eq!(
                invalid_field(&results(&t)),
                format!("qsim.plots.runs[0].timeline.{field}")
            );
        }
    }

    #[test]
    fn percentiles_and_bins_must_be_drawable() {
        let run = |body: &str| {
            format!(
                r#"{{"qsim": {{"plots": {{"scenario": "s", "seed": 1, "replications": 1,
                "runs": [{{"label": "a", "read_stages": [], "memory": null, "timeline": null, {body}}}]}}}}}}"#
            )
        };
        let pct = r#""read_clat_bins": [], "read_percentiles": [{"p": 100, "ns": {"mean": 1, "stddev": 0, "ci95_half": 0}}]"#;
        assert_eq!(
            invalid_field(&run(pct)),
            "qsim.plots.runs[0].read_percentiles[0].p"
        );
        let neg = pct
            .replace(r#""p": 100"#, r#""p": 50"#)
            .replace(r#""ci95_half": 0"#, r#""ci95_half": -1"#);
        assert_eq!(
            invalid_field(&run(&neg)),
            "qsim.plots.runs[0].read_percentiles[0].ns.ci95_half"
        );
        let bins = r#""read_percentiles": [], "read_clat_bins": [[5, 1], [3, 1]]"#;
        assert_eq!(
            invalid_field(&run(bins)),
            "qsim.plots.runs[0].read_clat_bins[1]"
        );
    }

    #[test]
    fn a_scenario_name_that_is_a_path_is_refused() {
        // Issue 11, case 3 (qsim plot): the default directory is plots/<scenario>/.
        // As JSON string contents: `a\\b` is a\b, `x\u0001` holds a control character.
        for bad in ["../..", "/abs/dir", "a/b", "..", "", r"a\\b", r"x\u0001"] {
            let text = format!(
                r#"{{"qsim": {{"plots": {{"scenario": "{bad}", "seed": 1, "replications": 1, "runs": []}}}}}}"#
            );
            assert_eq!(invalid_field(&text), "qsim.plots.scenario", "{bad:?}");
        }
        let ok = r#"{"qsim": {"plots": {"scenario": "two-queue", "seed": 1, "replications": 1, "runs": []}}}"#;
        assert!(from_results_json(ok).is_ok());
    }

    #[test]
    fn other_files_get_their_own_errors() {
        let e = from_results_json("{\"qsim\": ").unwrap_err();
        assert!(e.in_file("b.json").starts_with("b.json:1:"), "{e}");
        assert_eq!(from_results_json("{}"), Err(DecodeError::NoPlots));
        assert!(matches!(
            from_results_json(r#"{"qsim": {"plots": {"scenario": 3}}}"#),
            Err(DecodeError::Shape(_))
        ));
    }
}
