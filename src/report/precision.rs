//! A precision target (`--precision`, `--precision-metric`) and how it ended: the metric it
//! applies to is a row of the registry ([`super::metrics`]), and the outcome's line closes the
//! text report.

use super::metrics::{HEADLINE_NAMES, MetricId, Metrics};
use serde::{Serialize, Serializer};

/// A precision target (`--precision 5%`): add replications until the headline metric's 95 %
/// confidence half-width is within `target_rel` of its mean in every run, or `cap` is reached.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Precision {
    /// Target half-width relative to the mean (0.05 for 5 %).
    pub target_rel: f64,
    /// Most replications per run.
    pub cap: usize,
    /// The headline metric the target applies to.
    pub metric: HeadlineMetric,
}

/// A metric a precision target may apply to: a row of the registry with a
/// [`Headline`](super::metrics::Headline).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadlineMetric(MetricId);

impl Serialize for HeadlineMetric {
    /// As its `--precision-metric` name.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let m = self.0.metric();
        serializer.serialize_str(m.headline.map_or(m.key, |h| h.name))
    }
}

impl HeadlineMetric {
    /// Names accepted by `--precision-metric`, in registry order.
    pub const NAMES: [&'static str; HEADLINE_NAMES.len()] = HEADLINE_NAMES;

    /// Read clat p99, the default.
    pub const READ_P99: HeadlineMetric = HeadlineMetric(MetricId::of("read_p99_ms"));

    /// The metric named `name` (one of [`HeadlineMetric::NAMES`]).
    pub fn parse(name: &str) -> Option<HeadlineMetric> {
        MetricId::all()
            .find(|(_, m)| m.headline.is_some_and(|h| h.name == name))
            .map(|(id, _)| HeadlineMetric(id))
    }

    /// How the precision line calls it.
    pub fn label(self) -> &'static str {
        self.0
            .metric()
            .headline
            .map_or(self.0.metric().label, |h| h.label)
    }

    /// Its value in one replication's metrics.
    pub fn get(self, m: &Metrics) -> f64 {
        m[self.0]
    }
}

/// How a precision target ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrecisionOutcome {
    /// The target.
    pub target: Precision,
    /// Whether every run reached it (else the cap stopped the runs).
    pub reached: bool,
    /// Replications each run ended with.
    pub replications: usize,
    /// The run furthest from the target and its relative half-width (NaN when unmeasured).
    pub worst: (String, f64),
}

impl PrecisionOutcome {
    /// One line saying what happened, for the end of the report.
    pub fn line(&self) -> String {
        let t = &self.target;
        format!(
            "precision: {} {} ±{}% (95% CI) {} after {} replications;\n  widest: {} {}",
            t.metric.label(),
            if self.reached { "within" } else { "NOT within" },
            (t.target_rel * 1e6).round() / 1e4,
            if self.reached {
                "in every run"
            } else {
                "(the cap stopped it)"
            },
            self.replications,
            self.worst.0,
            if self.worst.1.is_finite() {
                format!("±{:.1}%", self.worst.1 * 100.0)
            } else {
                "unknown (a zero or unmeasured mean)".to_string()
            }
        )
    }
}
