//! The warnings a report carries: conditions the reader must know before trusting a block
//! (a spent work budget, the wall-clock limit, dropped arrivals, an unfinished job, clipped
//! latencies), found from each block and the scenario it ran.

use super::PolicyReport;
use crate::model::base::obs::RunEnd;
use crate::scenario::Scenario;
use crate::stats::histogram::CLIP_NS;
use serde::Serialize;

/// The share of open-loop arrivals, in percent, whose dropping at the `iodepth` cap marks a
/// sustained overload rather than a transient. A queue offered `ρ` times what it serves drops
/// `1 − 1/ρ` of its arrivals in the long run, so any `ρ` above 1.0101 drops at least 1 %; a
/// stable one drops only in transients: the NVMe preset's 12 ms controller pause every 1.37 s
/// on average can cost at most 12 / 1370 = 0.9 % of a stream's arrivals. (A cap-32 M/M/1/K
/// queue loses 1 % from about `ρ` = 0.94: near saturation, it is reported as saturated.)
pub const SUSTAINED_DROP_PERCENT: u64 = 1;

/// Whether `dropped` arrivals beside `issued` ones are a sustained overload:
/// at least [`SUSTAINED_DROP_PERCENT`] of all arrivals.
pub fn sustained_drops(dropped: u64, issued: u64) -> bool {
    let arrivals = u128::from(dropped) + u128::from(issued);
    u128::from(dropped) * 100 >= arrivals * u128::from(SUSTAINED_DROP_PERCENT)
}

/// Something the reader must know before trusting a block.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Warning {
    /// The run used up its work budget (`max_events`: events plus allocation attempts and
    /// reclaim scanning) before the horizon, so the figures cover a shortened window. This
    /// bounds the simulation's cost; it is not by itself a sign of overload.
    WorkBudget {
        /// Policy concerned.
        policy: String,
        /// Measured window actually covered, ns.
        measured_ns: u64,
        /// Measured window the scenario asked for (duration − warm-up), ns.
        planned_ns: u64,
        /// The scenario's work budget.
        max_events: u64,
    },
    /// The wall-clock safety valve (`qsim run --time-limit`) stopped the run: the figures
    /// cover a window that depends on the machine's speed and do not reproduce.
    TimeLimit {
        /// Policy concerned.
        policy: String,
        /// Measured window covered (mean over replications), ns.
        measured_ns: u64,
        /// Measured window the scenario asked for (duration − warm-up), ns.
        planned_ns: u64,
    },
    /// Open-loop arrivals found their job at its `iodepth` cap and were dropped. When they are
    /// at least [`SUSTAINED_DROP_PERCENT`] of the arrivals the offered load is at or beyond what
    /// this policy serves (the queue would grow without bound); fewer are a transient: a burst
    /// or a device pause outran the cap while the policy keeps up on average.
    Overloaded {
        /// Policy concerned.
        policy: String,
        /// Arrivals dropped in the measured window.
        dropped: u64,
        /// Arrivals issued in the measured window.
        issued: u64,
        /// Whether the drops are a sustained overload (at least [`SUSTAINED_DROP_PERCENT`] of
        /// the arrivals), not a transient.
        sustained: bool,
    },
    /// A finite job had not completed its I/O when the run reached its horizon: its elapsed
    /// time is unknown, not the duration.
    Unfinished {
        /// Policy concerned.
        policy: String,
        /// The job (`name` or `name.copy`).
        job: String,
        /// When the run ended, ns.
        end_ns: u64,
        /// I/Os it completed.
        ios: u64,
        /// Bytes it completed.
        bytes: u64,
        /// Its `io_size` (`None`: no limit).
        io_size: Option<u64>,
        /// Its `number_ios` (`None`: no limit).
        number_ios: Option<u64>,
    },
    /// Latencies at or above the histogram's top landed in its last bucket.
    HistogramClipped {
        /// Policy concerned.
        policy: String,
        /// Samples clipped.
        count: u64,
        /// The histogram's top, ns.
        limit_ns: u64,
    },
}

impl Warning {
    /// The warnings of block `p`, which ran scenario `sc` (a variant's, with variants), in
    /// the order the report lists them.
    pub fn of(p: &PolicyReport, sc: &Scenario) -> Vec<Warning> {
        let mut out = Vec::new();
        if p.saturated() {
            out.push(Warning::WorkBudget {
                policy: p.policy.clone(),
                // One replication's window, comparable with the planned one.
                measured_ns: p.measured_ns / u64::from(p.replications.max(1)),
                planned_ns: sc.duration.as_ns().saturating_sub(sc.warmup.as_ns()),
                max_events: sc.max_events,
            });
        }
        if p.end == RunEnd::TimeLimit {
            out.push(Warning::TimeLimit {
                policy: p.policy.clone(),
                measured_ns: p.measured_ns / u64::from(p.replications.max(1)),
                planned_ns: sc.duration.as_ns().saturating_sub(sc.warmup.as_ns()),
            });
        }
        let dropped: u64 = p.directions.iter().map(|d| d.dropped).sum();
        if dropped > 0 {
            let issued = p.directions.iter().map(|d| d.issued).sum();
            out.push(Warning::Overloaded {
                policy: p.policy.clone(),
                dropped,
                issued,
                sustained: sustained_drops(dropped, issued),
            });
        }
        for j in p.finite_jobs.iter().filter(|j| j.elapsed_ns.is_none()) {
            out.push(Warning::Unfinished {
                policy: p.policy.clone(),
                job: j.name.clone(),
                end_ns: p.end_ns,
                ios: j.ios,
                bytes: j.bytes,
                io_size: j.io_size,
                number_ios: j.number_ios,
            });
        }
        if p.clipped > 0 {
            out.push(Warning::HistogramClipped {
                policy: p.policy.clone(),
                count: p.clipped,
                limit_ns: CLIP_NS,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::sustained_drops;

    #[test]
    fn one_percent_of_the_arrivals_divides_a_transient_from_an_overload() {
        assert!(!sustained_drops(0, 100));
        assert!(!sustained_drops(56, 82_411)); // storage-server's device pauses: 0.07 %
        assert!(!sustained_drops(9, 900)); // 9 of 909: 0.99 %
        assert!(sustained_drops(10, 990)); // 10 of 1000: exactly 1 %
        assert!(sustained_drops(1, 0));
        // ρ = 1.0101 drops 1 − 1/ρ = 1 % of its arrivals.
        assert!(sustained_drops(100, 9_900));
        assert!(!sustained_drops(u64::MAX / 200, u64::MAX / 2));
    }
}
