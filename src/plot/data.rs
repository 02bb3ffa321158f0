//! What the plots draw, as plain serde data: `qsim run` builds it from the replications and
//! writes it into the JSON export (`qsim.plots`), and `qsim plot` reads it back, so both draw
//! from exactly the same numbers without re-simulating.

use crate::stats::series::Timeline;
use serde::{Deserialize, Serialize};

/// The percentiles on the "nines" axis of the percentile plot.
pub const PLOT_PERCENTILES: [f64; 10] =
    [50.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

/// A value across replications: mean, sample standard deviation and the 95 % confidence
/// half-width (Student t; 0 with one replication).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Mean over replications.
    pub mean: f64,
    /// Sample standard deviation over replications.
    pub stddev: f64,
    /// Half-width of the 95 % confidence interval of the mean.
    pub ci95_half: f64,
}

/// One percentile of read clat across replications, ns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PercentileBand {
    /// The percentile, e.g. 99.9.
    pub p: f64,
    /// Its value across replications, ns.
    pub ns: Spread,
}

/// Memory-pressure figures of one run across replications.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryPlot {
    /// GFP_ATOMIC failures per replication by allocation order: `(order, spread)`, for every
    /// order that failed in some replication, ascending.
    pub failures_by_order: Vec<(u32, Spread)>,
    /// All GFP_ATOMIC failures per replication.
    pub failures: Spread,
    /// kswapd's time in congestion_wait per replication, s: SYNC then ASYNC.
    pub kswapd_cwait_s: [Spread; 2],
}

/// One run of the plan (a policy, or a variant's policy) as the plots see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunPlot {
    /// The run's label in the report (`fifo`, `baseline`, `2.6.30/split`).
    pub label: String,
    /// Read clat at each of [`PLOT_PERCENTILES`] across replications.
    pub read_percentiles: Vec<PercentileBand>,
    /// Read clat histogram pooled over every replication: `(bucket midpoint ns, count)`,
    /// non-zero buckets in ascending order (fio's bucket scheme).
    pub read_clat_bins: Vec<(u64, u64)>,
    /// Mean time a read spent in each stage, ns, in pipeline order: `(stage, mean ns)`.
    pub read_stages: Vec<(String, f64)>,
    /// Memory figures; `None` when the scenario has no `memory:` section.
    pub memory: Option<MemoryPlot>,
    /// Replication 0's timeline; `None` when none was recorded.
    pub timeline: Option<Timeline>,
}

/// Everything `qsim plot` needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlotData {
    /// The scenario's name (its file stem), used in titles and the default directory.
    pub scenario: String,
    /// The scenario's seed (footer).
    pub seed: u64,
    /// Replications per run (footer).
    pub replications: u32,
    /// The runs, in report order.
    pub runs: Vec<RunPlot>,
}
