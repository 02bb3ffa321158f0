//! The memory model's part of a block: the model's own [`MemoryObs`], embedded whole, beside
//! the figures the report derives from it (totals, rates, shares of the measured window, the
//! stall summary, per-class wait shares). The JSON layout (`qsim.memory`) interleaves the two,
//! so [`MemoryReport`] writes its keys in that order itself.

use super::{CongestionReport, share_pct};
use crate::model::base::obs::{AllocFailure, CallerWaits, CongestionWaitObs, MemoryObs};
use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};

/// What the memory model measured in one run, with what the report derives from it. Counters
/// cover the measured window.
#[derive(Debug, Clone)]
pub struct MemoryReport {
    /// The model's measurements, as the model made them.
    pub obs: MemoryObs,
    /// Mean free pages at a failure, by order (0 for an order without failures).
    pub atomic_fail_free_avg: Vec<f64>,
    /// GFP_ATOMIC allocations attempted, all orders.
    pub atomic_attempts_total: u64,
    /// GFP_ATOMIC failures, all orders.
    pub atomic_failures_total: u64,
    /// GFP_ATOMIC failures per second of the measured window.
    pub atomic_failures_per_s: f64,
    /// kswapd's awake time as a share of the measured window, percent.
    pub kswapd_awake_pct: f64,
    /// kswapd's congestion waits per queue class.
    pub kswapd_waits: CallerWaitsReport,
    /// Length of the direct-reclaim stalls.
    pub direct_stall: StallSummary,
    /// Direct reclaimers' and the allocator's congestion waits per queue class.
    pub direct_waits: CallerWaitsReport,
    /// Time below `min` as a share of the measured window, percent.
    pub below_min_pct: f64,
    /// Free pages at the end (the zone's total less the pages in any state).
    pub end_free: u64,
}

/// One GFP_ATOMIC failure of the log, in report units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AllocFailureReport {
    /// Simulated time since the start (warm-up included), ns.
    pub at_ns: u64,
    /// Allocation order.
    pub order: u32,
    /// Free pages at that moment.
    pub free: u64,
}

impl From<&AllocFailure> for AllocFailureReport {
    fn from(f: &AllocFailure) -> Self {
        AllocFailureReport {
            at_ns: f.at.as_ns(),
            order: f.order,
            free: f.free,
        }
    }
}

/// One kind of caller's congestion waits.
#[derive(Debug, Clone, Serialize)]
pub struct CallerWaitsReport {
    /// The SYNC queue, then the ASYNC queue.
    pub class: Vec<CongestionReport>,
    /// Share of the waits that ended early because congestion cleared, percent.
    pub early_pct: f64,
    /// `wait_iff_congested` calls that returned at once.
    pub skipped: u64,
}

/// Congestion waits on the SYNC then the ASYNC queue in report units, and the share of them
/// that ended early because congestion cleared, percent.
pub(super) fn class_waits(class: &[CongestionWaitObs; 2]) -> (Vec<CongestionReport>, f64) {
    let class: Vec<CongestionReport> = ["sync", "async"]
        .into_iter()
        .zip(class)
        .map(|(class, c)| CongestionReport {
            class: class.to_string(),
            waits: c.waits,
            woken_early: c.woken_early,
            total_ns: c.total.as_ns(),
        })
        .collect();
    let waits = class.iter().map(|c| c.waits).sum();
    let early = class.iter().map(|c| c.woken_early).sum();
    (class, share_pct(early, waits, 0.0))
}

impl From<&CallerWaits> for CallerWaitsReport {
    fn from(w: &CallerWaits) -> Self {
        let (class, early_pct) = class_waits(&w.class);
        CallerWaitsReport {
            class,
            early_pct,
            skipped: w.skipped,
        }
    }
}

/// Summary of the direct-reclaim stall lengths (fio bucket midpoints for percentiles).
#[derive(Debug, Clone, Default, Serialize)]
pub struct StallSummary {
    /// Stalls recorded.
    pub n: u64,
    /// Their total length, ns.
    pub total_ns: u64,
    /// Shortest, ns.
    pub min_ns: u64,
    /// Longest, ns.
    pub max_ns: u64,
    /// Mean, ns.
    pub mean_ns: f64,
    /// Sample standard deviation, ns.
    pub stddev_ns: f64,
    /// Median, ns.
    pub p50_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// 99.9th percentile, ns.
    pub p99_9_ns: u64,
}

impl From<&crate::stats::Histogram> for StallSummary {
    fn from(h: &crate::stats::Histogram) -> Self {
        let [p50_ns, p99_ns, p99_9_ns] = match h.percentiles(&[50.0, 99.0, 99.9])[..] {
            [a, b, c] => [a, b, c],
            _ => [0; 3],
        };
        StallSummary {
            n: h.count(),
            total_ns: u64::try_from(h.sum()).unwrap_or(u64::MAX),
            min_ns: h.min(),
            max_ns: h.max(),
            mean_ns: h.mean(),
            stddev_ns: h.stddev(),
            p50_ns,
            p99_ns,
            p99_9_ns,
        }
    }
}

impl MemoryReport {
    /// The report of `m`, measured over `measured_ns`.
    pub fn new(m: &MemoryObs, measured_ns: u64) -> MemoryReport {
        let of_window = |ns: u64| share_pct(ns, measured_ns, 0.0);
        let atomic_failures_total: u64 = m.atomic_failures.iter().sum();
        MemoryReport {
            obs: m.clone(),
            atomic_fail_free_avg: m
                .atomic_failures
                .iter()
                .zip(&m.atomic_fail_free_sum)
                .map(|(&n, &sum)| if n == 0 { 0.0 } else { sum as f64 / n as f64 })
                .collect(),
            atomic_attempts_total: m.atomic_attempts.iter().sum(),
            atomic_failures_total,
            atomic_failures_per_s: if measured_ns == 0 {
                0.0
            } else {
                atomic_failures_total as f64 * 1e9 / measured_ns as f64
            },
            kswapd_awake_pct: of_window(m.kswapd_awake.as_ns()),
            kswapd_waits: CallerWaitsReport::from(&m.kswapd_waits),
            direct_stall: StallSummary::from(&m.direct_stall),
            direct_waits: CallerWaitsReport::from(&m.direct_waits),
            below_min_pct: of_window(m.below_min.as_ns()),
            end_free: m.total_pages.saturating_sub(m.end_pages.total()),
        }
    }

    /// The failure log in report units.
    pub fn failure_log(&self) -> Vec<AllocFailureReport> {
        self.obs
            .failure_log
            .iter()
            .map(AllocFailureReport::from)
            .collect()
    }
}

impl Serialize for MemoryReport {
    /// The model's fields (durations as `<name>_ns`) with the derived ones interleaved, in the
    /// order of `qsim.memory` since schema version 1.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let m = &self.obs;
        let mut s = serializer.serialize_struct("MemoryReport", 45)?;
        s.serialize_field("total_pages", &m.total_pages)?;
        s.serialize_field("min", &m.min)?;
        s.serialize_field("low", &m.low)?;
        s.serialize_field("high", &m.high)?;
        s.serialize_field("atomic_floor", &m.atomic_floor)?;
        s.serialize_field("atomic_attempts", &m.atomic_attempts)?;
        s.serialize_field("atomic_failures", &m.atomic_failures)?;
        s.serialize_field("atomic_fail_free_sum", &m.atomic_fail_free_sum)?;
        s.serialize_field("atomic_fail_free_avg", &self.atomic_fail_free_avg)?;
        s.serialize_field("atomic_attempts_total", &self.atomic_attempts_total)?;
        s.serialize_field("atomic_failures_total", &self.atomic_failures_total)?;
        s.serialize_field("atomic_failures_per_s", &self.atomic_failures_per_s)?;
        s.serialize_field("atomic_failures_logged", &m.atomic_failures_logged)?;
        s.serialize_field("failure_log", &self.failure_log())?;
        s.serialize_field("kswapd_wakeups", &m.kswapd_wakeups)?;
        s.serialize_field("kswapd_awake_ns", &m.kswapd_awake.as_ns())?;
        s.serialize_field("kswapd_awake_pct", &self.kswapd_awake_pct)?;
        s.serialize_field("kswapd_passes", &m.kswapd_passes)?;
        s.serialize_field("kswapd_waits", &self.kswapd_waits)?;
        s.serialize_field("kswapd_skips", &m.kswapd_skips)?;
        s.serialize_field("low_wmark_hit_quickly", &m.low_wmark_hit_quickly)?;
        s.serialize_field("high_wmark_hit_quickly", &m.high_wmark_hit_quickly)?;
        s.serialize_field("order0_fallbacks", &m.order0_fallbacks)?;
        s.serialize_field("kswapd_scanned", &m.kswapd_scanned)?;
        s.serialize_field("kswapd_reclaimed", &m.kswapd_reclaimed)?;
        s.serialize_field("direct_stalls", &m.direct_stalls)?;
        s.serialize_field("direct_stall", &self.direct_stall)?;
        s.serialize_field("direct_waits", &self.direct_waits)?;
        s.serialize_field("direct_scanned", &m.direct_scanned)?;
        s.serialize_field("direct_reclaimed", &m.direct_reclaimed)?;
        s.serialize_field("pageout_pages", &m.pageout_pages)?;
        s.serialize_field("bounce_from_zone", &m.bounce_from_zone)?;
        s.serialize_field("bounce_from_reserve", &m.bounce_from_reserve)?;
        s.serialize_field("mempool_waits", &m.mempool_waits)?;
        s.serialize_field("mempool_wait_ns", &m.mempool_wait_time.as_ns())?;
        s.serialize_field("partial_clones", &m.partial_clones)?;
        s.serialize_field("partial_nap_ns", &m.partial_nap_time.as_ns())?;
        s.serialize_field("free_min_seen", &m.free_min_seen)?;
        s.serialize_field("free_avg", &m.free_avg)?;
        s.serialize_field("below_min_ns", &m.below_min.as_ns())?;
        s.serialize_field("below_min_pct", &self.below_min_pct)?;
        s.serialize_field("end_pages", &m.end_pages)?;
        s.serialize_field("end_free", &self.end_free)?;
        if m.swap.is_active() {
            s.serialize_field("swap", &m.swap)?;
        } else {
            s.skip_field("swap")?;
        }
        if m.rx.is_empty() {
            s.skip_field("rx")?;
        } else {
            s.serialize_field("rx", &m.rx)?;
        }
        s.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys come in the layout's order, and each mirrors the model's value in report
    /// units.
    #[test]
    fn serialises_the_observations_with_the_derived_figures_in_layout_order() {
        let obs = super::super::tests::memory_obs();
        let r = MemoryReport::new(&obs, 10_000_000_000);
        let text = serde_json::to_string(&r).unwrap();
        let keys: Vec<&str> = [
            "total_pages",
            "atomic_fail_free_avg",
            "failure_log",
            "kswapd_awake_ns",
            "kswapd_awake_pct",
            "direct_stall",
            "mempool_wait_ns",
            "below_min_pct",
            "end_pages",
            "end_free",
        ]
        .to_vec();
        let at: Vec<usize> = keys
            .iter()
            .map(|k| text.find(&format!("\"{k}\":")).expect(k))
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{text}");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["kswapd_awake_ns"], 4_300_000_000u64);
        assert_eq!(v["kswapd_awake_pct"], 43.0);
        assert_eq!(v["atomic_failures_total"], 37);
        assert_eq!(v["failure_log"][1]["at_ns"], 12_400_000_000u64);
        assert_eq!(v["direct_stall"]["n"], 9);
        assert_eq!(v["kswapd_waits"]["class"][1]["total_ns"], 4_100_000_000u64);
        assert_eq!(v["end_free"], 524_288 - obs.end_pages.total());
        assert_eq!(v.as_object().unwrap().len(), 43);
    }
}
