//! A run's downsampled timeline, recorded by the model as its state changes: the series a plot
//! needs to show "the minute where free pages fell under min while kswapd slept in
//! congestion_wait". This module owns *what* is recorded and *when*; the bounded container is
//! [`crate::stats::series::Timeline`] (no dm-crypt knowledge there), and drawing it is not the
//! model's business.
//!
//! The window is the whole run, `[0, duration]` (warm-up included), cut into at most
//! [`DEFAULT_POINTS`] buckets unless the run asks for another count, so a timeline's size does
//! not depend on the simulated duration. Recording is off unless a run asks for it
//! ([`crate::model::Recording`]); it only reads the model's state, so a run gives the same
//! measurements with and without it.
//!
//! Series, by name:
//! - gauge `crypt queue <list>` (bios): the length of each list of the policy's crypt queue
//!   ([`CryptQueuePolicy::queue_names`]: `kcryptd` for fifo, `sync`/`async` for split and
//!   ratio, `high`/`low` for prio; none for policies without a crypt queue). Recorded when
//!   work is queued or taken, so a bio that waited no time at all still shows in its bucket's
//!   max.
//!
//! With a `memory:` section, also:
//! - gauge `free pages` (pages), with levels `min`, `low`, `high` and `GFP_ATOMIC floor` (the
//!   free count at or below which an order-0 GFP_ATOMIC allocation fails,
//!   [`Zone::order0_floor`](crate::model::mm::zone::Zone::order0_floor));
//! - count `GFP_ATOMIC failures`: every failed atomic allocation, warm-up included;
//! - states `kswapd`: `asleep`, `reclaiming`, `congestion_wait`, and `nap` when the kernel
//!   variant has 2.6.33's nap;
//! - gauges `dirty pages` and `writeback pages` (pages).
//!
//! These are looked at once at the end of every event and recorded only when they changed, at
//! the event's time. No event is added, so nothing polls. A zone level that did not outlast
//! its event (an atomic burst that dipped under the floor before kswapd's first scan freed
//! pages in the same instant) still reaches the free-pages gauge: [`Mem`] keeps the lowest and
//! highest free count it passed through ([`Mem::take_free_range`]), and both go into the
//! bucket's min and max. Dirty and writeback pages keep only their level at each event's end.

use crate::engine::SimTime;
use crate::model::base::config::Scenario;
use crate::model::crypt::policy::CryptQueuePolicy;
use crate::model::mm::kswapd::KState;
use crate::model::mm::memory::Mem;
use crate::model::mm::pressure::Pressure;
use crate::model::mm::zone::AllocClass;
use crate::stats::series::{Grid, Level, Timeline};

/// Buckets of a timeline when the run does not ask for another number.
pub const DEFAULT_POINTS: usize = 1000;

/// Index of each kswapd state in the `kswapd` band's states.
const ASLEEP: usize = 0;
const RECLAIMING: usize = 1;
const CONGESTION_WAIT: usize = 2;
const NAP: usize = 3;

/// The memory series' indices and the levels last recorded on them.
#[derive(Debug)]
struct MemSeries {
    free: usize,
    dirty: usize,
    writeback: usize,
    failures: usize,
    kswapd: usize,
    last_free: u64,
    last_dirty: u64,
    last_writeback: u64,
    last_failures: u64,
    last_kswapd: usize,
}

/// Records one run's [`Timeline`] while the model runs; [`Recorder::finish`] hands it over.
#[derive(Debug)]
pub(in crate::model) struct Recorder {
    tl: Timeline,
    /// Per crypt-queue list: its gauge and the length last recorded.
    crypt: Vec<(usize, usize)>,
    mem: Option<MemSeries>,
}

impl Recorder {
    /// A recorder over `[0, sc.duration]` in at most `points` buckets, with the series of
    /// `policy`'s lists and (if the run has a memory model) of `pressure`, each starting at
    /// its level at `now`.
    pub(in crate::model) fn new(
        sc: &Scenario,
        policy: &dyn CryptQueuePolicy,
        pressure: Option<&mut Pressure>,
        points: usize,
        now: SimTime,
    ) -> Recorder {
        let grid = Grid::covering(0, sc.duration.as_ns(), points);
        let mut tl = Timeline::new(grid);
        let t = now.as_ns();
        let crypt = policy
            .queue_names()
            .iter()
            .enumerate()
            .map(|(q, name)| {
                let g = tl.add_gauge(&format!("crypt queue {name}"), "bios");
                let len = policy.queue_len(q);
                tl.gauge(g, t, len as f64);
                (g, len)
            })
            .collect();
        let mem = pressure.map(|p| {
            let m = &mut p.mem;
            let marks = m.zone.marks();
            let floor = m.zone.order0_floor(AllocClass::Atomic);
            for (name, value) in [
                ("min", marks.min),
                ("low", marks.low),
                ("high", marks.high),
                ("GFP_ATOMIC floor", floor),
            ] {
                tl.levels.push(Level {
                    name: name.to_string(),
                    value: value as f64,
                });
            }
            let mut states = vec!["asleep", "reclaiming", "congestion_wait"];
            if p.vm.kswapd_nap {
                states.push("nap");
            }
            m.take_free_range();
            let s = MemSeries {
                free: tl.add_gauge("free pages", "pages"),
                dirty: tl.add_gauge("dirty pages", "pages"),
                writeback: tl.add_gauge("writeback pages", "pages"),
                failures: tl.add_count("GFP_ATOMIC failures"),
                kswapd: tl.add_states("kswapd", &states),
                last_free: m.zone.free_pages(),
                last_dirty: m.pages.dirty,
                last_writeback: m.pages.writeback,
                last_failures: m.atomic_failures_total(),
                last_kswapd: kswapd_state(p.kswapd.state),
            };
            tl.gauge(s.free, t, s.last_free as f64);
            tl.gauge(s.dirty, t, s.last_dirty as f64);
            tl.gauge(s.writeback, t, s.last_writeback as f64);
            tl.enter(s.kswapd, t, s.last_kswapd);
            s
        });
        Recorder { tl, crypt, mem }
    }

    /// The crypt queue's lists may have changed at `now`.
    pub(in crate::model) fn crypt_changed(&mut self, now: SimTime, policy: &dyn CryptQueuePolicy) {
        for (q, (g, last)) in self.crypt.iter_mut().enumerate() {
            let len = policy.queue_len(q);
            if len != *last {
                *last = len;
                self.tl.gauge(*g, now.as_ns(), len as f64);
            }
        }
    }

    /// An event at `now` is over: records what it changed in memory.
    pub(in crate::model) fn event_done(&mut self, now: SimTime, p: &mut Pressure) {
        let Some(s) = self.mem.as_mut() else {
            return;
        };
        let t = now.as_ns();
        let m: &mut Mem = &mut p.mem;
        let free = m.zone.free_pages();
        let (lo, hi) = m.take_free_range();
        if lo != free || hi != free || free != s.last_free {
            // The instant's extremes first (if it passed through any), then the level that
            // holds after it.
            if lo < free {
                self.tl.gauge(s.free, t, lo as f64);
            }
            if hi > free {
                self.tl.gauge(s.free, t, hi as f64);
            }
            self.tl.gauge(s.free, t, free as f64);
            s.last_free = free;
        }
        if m.pages.dirty != s.last_dirty {
            s.last_dirty = m.pages.dirty;
            self.tl.gauge(s.dirty, t, s.last_dirty as f64);
        }
        if m.pages.writeback != s.last_writeback {
            s.last_writeback = m.pages.writeback;
            self.tl.gauge(s.writeback, t, s.last_writeback as f64);
        }
        let failed = m.atomic_failures_total();
        if failed != s.last_failures {
            self.tl.count(s.failures, t, failed - s.last_failures);
            s.last_failures = failed;
        }
        let k = kswapd_state(p.kswapd.state);
        if k != s.last_kswapd {
            s.last_kswapd = k;
            self.tl.enter(s.kswapd, t, k);
        }
    }

    /// Closes every series at `now`, the run's end, and hands the timeline over.
    pub(in crate::model) fn finish(mut self, now: SimTime) -> Box<Timeline> {
        self.tl.finish(now.as_ns());
        Box::new(self.tl)
    }
}

/// The `kswapd` band's state for kswapd's state machine.
fn kswapd_state(s: KState) -> usize {
    match s {
        KState::Sleep => ASLEEP,
        KState::Scan => RECLAIMING,
        KState::CongestionWait => CONGESTION_WAIT,
        KState::Nap => NAP,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimDuration;
    use crate::model::base::obs::RunObs;
    use crate::model::{Recording, RunResult, crypt::policy, run_replication_with, testing};
    use crate::stats::series::{Count, Gauge, States};

    /// The pressure scenario of the memory tests (two-queue's reader and writer, a 2 GiB
    /// laptop with little to reclaim and a bursty order-2 receive stream), without warm-up so
    /// the run's counters cover the whole timeline.
    fn pressed(secs: u64) -> Scenario {
        let mut sc = crate::model::mm::pressure::tests::two_queue(secs);
        sc.memory = Some(testing::laptop_memory(1900, 20.0, 64));
        sc.warmup = SimDuration::ZERO;
        sc
    }

    fn run(sc: &Scenario, policy: &str, rec: Recording) -> RunResult {
        let r = run_replication_with(sc, policy::find(policy).unwrap(), 0, rec);
        assert!(r.violations.is_empty(), "{policy}: {:?}", r.violations);
        r
    }

    fn recorded(sc: &Scenario, policy: &str) -> (RunObs, Box<Timeline>) {
        let mut obs = run(sc, policy, Recording::timeline()).obs;
        let tl = obs.timeline.take().expect("a timeline was asked for");
        (obs, tl)
    }

    fn gauge<'a>(tl: &'a Timeline, name: &str) -> &'a Gauge {
        tl.find_gauge(name)
            .unwrap_or_else(|| panic!("no gauge {name}"))
    }

    fn count<'a>(tl: &'a Timeline, name: &str) -> &'a Count {
        tl.counts.iter().find(|c| c.name == name).expect("count")
    }

    fn states<'a>(tl: &'a Timeline, name: &str) -> &'a States {
        tl.states.iter().find(|s| s.name == name).expect("states")
    }

    fn names(tl: &Timeline) -> Vec<&str> {
        let g = tl.gauges.iter().map(|g| g.name.as_str());
        let c = tl.counts.iter().map(|c| c.name.as_str());
        let s = tl.states.iter().map(|s| s.name.as_str());
        g.chain(c).chain(s).collect()
    }

    fn level(tl: &Timeline, name: &str) -> f64 {
        tl.levels
            .iter()
            .find(|l| l.name == name)
            .expect("level")
            .value
    }

    #[test]
    fn each_policy_records_its_lists_and_the_memory_series() {
        let sc = pressed(5);
        let memory = [
            "free pages",
            "dirty pages",
            "writeback pages",
            "GFP_ATOMIC failures",
            "kswapd",
        ];
        for info in policy::REGISTRY {
            let (policy, lists) = (info.name, (info.build)().queue_names());
            let (obs, tl) = recorded(&sc, policy);
            let mut want: Vec<String> = lists.iter().map(|l| format!("crypt queue {l}")).collect();
            want.extend(memory.iter().map(|s| s.to_string()));
            assert_eq!(names(&tl), want, "{policy}");
            let m = obs.memory.as_ref().expect("memory obs");
            let levels: Vec<(&str, f64)> = tl
                .levels
                .iter()
                .map(|l| (l.name.as_str(), l.value))
                .collect();
            assert_eq!(
                levels,
                [
                    ("min", m.min as f64),
                    ("low", m.low as f64),
                    ("high", m.high as f64),
                    ("GFP_ATOMIC floor", m.atomic_floor as f64),
                ]
            );
            assert_eq!(tl.grid.buckets, DEFAULT_POINTS);
        }
        // The 2 GiB laptop of docs/model/memory.md §3.
        let (_, tl) = recorded(&sc, "fifo");
        assert_eq!(level(&tl, "min"), 1448.0);
        assert_eq!(level(&tl, "GFP_ATOMIC floor"), 543.0);
        assert_eq!(
            states(&tl, "kswapd").states,
            ["asleep", "reclaiming", "congestion_wait"]
        );
    }

    #[test]
    fn the_nap_variant_has_a_nap_state_and_uses_it() {
        let mut sc = pressed(20);
        sc.kernel.vm.kswapd_nap = true;
        let (_, tl) = recorded(&sc, "fifo");
        let k = states(&tl, "kswapd");
        assert_eq!(k.states, ["asleep", "reclaiming", "congestion_wait", "nap"]);
        let nap: u64 = k.time_ns.iter().map(|b| b[NAP]).sum();
        assert!(nap > 0, "kswapd never napped");
    }

    #[test]
    fn without_memory_only_the_crypt_queues_are_recorded() {
        let sc = testing::mm1(
            200.0,
            SimDuration::from_ms(1),
            1,
            SimDuration::from_secs(10),
        );
        let (obs, tl) = recorded(&sc, "split");
        assert_eq!(names(&tl), ["crypt queue sync", "crypt queue async"]);
        assert!(tl.levels.is_empty());
        assert!(obs.memory.is_none());
        let (_, tl) = recorded(&sc, "none");
        assert!(names(&tl).is_empty());
    }

    #[test]
    fn free_pages_follow_the_zone() {
        let sc = pressed(20);
        let (obs, tl) = recorded(&sc, "fifo");
        let m = obs.memory.as_ref().expect("memory obs");
        let free = gauge(&tl, "free pages");
        // The level at the end is the zone's free count at the end.
        let end_free = m.total_pages - m.end_pages.total();
        assert_eq!(free.last(), Some(end_free as f64));
        let b = tl.grid.buckets - 1;
        assert!(free.min[b] <= end_free as f64 && end_free as f64 <= free.max[b]);
        // Every dip is kept: the lowest bucket minimum is the lowest free count the run saw.
        let lowest = free.min.iter().copied().fold(f64::INFINITY, f64::min);
        assert_eq!(lowest, m.free_min_seen as f64);
        // This run spends time below min, and the timeline shows it.
        assert!(m.below_min > SimDuration::ZERO);
        assert!(lowest < level(&tl, "min"));
        // Dirty and writeback pages end where the zone's books do.
        assert_eq!(
            gauge(&tl, "dirty pages").last(),
            Some(m.end_pages.dirty as f64)
        );
        let wb = gauge(&tl, "writeback pages");
        assert_eq!(wb.last(), Some(m.end_pages.writeback as f64));
        assert!(wb.max.iter().any(|&v| v > 0.0), "writeback never showed");
        // No bucket is left unvisited in a run that reached its horizon.
        for g in &tl.gauges {
            assert!(g.min.iter().all(|v| !v.is_nan()), "{}", g.name);
        }
    }

    #[test]
    fn every_atomic_failure_is_counted_once() {
        // Twice the atomic rate of `pressed`, so that allocations fail under 2.6.32's CFQ too.
        let mut sc = pressed(20);
        sc.memory = Some(testing::laptop_memory(1900, 40.0, 64));
        let (obs, tl) = recorded(&sc, "fifo");
        let m = obs.memory.as_ref().expect("memory obs");
        let failures: u64 = m.atomic_failures.iter().sum();
        assert!(
            failures > 0,
            "the scenario must make atomic allocations fail"
        );
        let c = count(&tl, "GFP_ATOMIC failures");
        assert_eq!(c.total(), failures);
        // Each logged failure lands in its bucket, at a free level the bucket went through
        // (order-2 failures may come well above the order-0 floor: fragmentation).
        let free = gauge(&tl, "free pages");
        assert!(!m.failure_log.is_empty());
        for f in &m.failure_log {
            let b = tl.grid.index(f.at.as_ns());
            assert!(c.counts[b] > 0);
            let v = f.free as f64;
            assert!(free.min[b] <= v && v <= free.max[b], "{f:?} in bucket {b}");
        }
    }

    #[test]
    fn kswapd_states_cover_the_run() {
        let sc = pressed(20);
        let (obs, tl) = recorded(&sc, "fifo");
        let m = obs.memory.as_ref().expect("memory obs");
        let k = states(&tl, "kswapd");
        let total = |s: usize| -> u64 { k.time_ns.iter().map(|b| b[s]).sum() };
        let all: u64 = k.time_ns.iter().flatten().sum();
        assert_eq!(all, sc.duration.as_ns());
        // Awake is every state but asleep, as the run's own counter has it.
        assert_eq!(all - total(ASLEEP), m.kswapd_awake.as_ns());
        assert!(total(RECLAIMING) > 0);
        // Waits that ended are all in the band; at most one HZ/10 wait was still running.
        let cw = total(CONGESTION_WAIT);
        let ended: u64 = m.kswapd_waits.class.iter().map(|c| c.total.as_ns()).sum();
        assert!(ended > 0);
        assert!(cw >= ended && cw <= ended + 100_000_000, "{cw} vs {ended}");
    }

    #[test]
    fn crypt_queue_gauges_reach_the_runs_maximum() {
        let sc = pressed(20);
        let (obs, tl) = recorded(&sc, "fifo");
        let q = gauge(&tl, "crypt queue kcryptd");
        let max = q.max.iter().copied().fold(0.0, f64::max);
        assert_eq!(max, obs.crypt_queue_len_max as f64);
        assert!(max > 0.0);
        let (_, tl) = recorded(&sc, "split");
        for list in ["sync", "async"] {
            let q = gauge(&tl, &format!("crypt queue {list}"));
            assert!(q.max.iter().any(|&v| v > 0.0), "{list} never queued");
        }
    }

    /// Recording only reads: every measurement, invariant and event count is the same.
    #[test]
    fn recording_changes_no_result() {
        let mut nap = pressed(20);
        nap.kernel.vm.kswapd_nap = true;
        let mut warm = pressed(20);
        warm.warmup = SimDuration::from_secs(2);
        let plain = testing::mm1(
            300.0,
            SimDuration::from_ms(2),
            1,
            SimDuration::from_secs(20),
        );
        for (sc, policy) in [
            (&pressed(20), "fifo"),
            (&pressed(20), "split"),
            (&nap, "prio"),
            (&warm, "ratio"),
            (&plain, "fifo"),
        ] {
            let off = run(sc, policy, Recording::default());
            let mut on = run(sc, policy, Recording::timeline());
            assert!(off.obs.timeline.is_none());
            assert!(on.obs.timeline.take().is_some());
            let json = |o: &RunObs| serde_json::to_string(o).expect("serialisable");
            assert_eq!(json(&off.obs), json(&on.obs), "{policy}");
            assert_eq!(off.invariants, on.invariants, "{policy}");
        }
    }

    #[test]
    fn the_timeline_size_does_not_grow_with_the_run() {
        let mut short = testing::mm1(50.0, SimDuration::from_ms(2), 1, SimDuration::from_secs(60));
        short.policies = vec!["fifo".into()];
        short.memory = Some(testing::laptop_memory(1024, 5.0, 1));
        let mut long = short.clone();
        long.duration = SimDuration::from_secs(3600);
        let size = |sc: &Scenario| {
            let (_, tl) = recorded(sc, "fifo");
            let mut lens = vec![tl.grid.buckets];
            lens.extend(tl.gauges.iter().flat_map(|g| [g.min.len(), g.max.len()]));
            lens.extend(tl.counts.iter().map(|c| c.counts.len()));
            lens.extend(tl.states.iter().map(|s| s.time_ns.len()));
            (lens, names(&tl).len())
        };
        let (a, b) = (size(&short), size(&long));
        assert_eq!(a, b);
        assert!(a.0.iter().all(|&n| n == DEFAULT_POINTS));
        // Another bucket count is honoured.
        let rec = Recording {
            timeline_points: Some(60),
            ..Recording::default()
        };
        let tl = run(&long, "fifo", rec).obs.timeline.expect("timeline");
        assert_eq!(tl.grid.buckets, 60);
        assert_eq!(tl.grid.bucket_ns, 60_000_000_000);
    }

    /// A run that stops before its horizon leaves the buckets after its end empty.
    #[test]
    fn a_saturated_run_stops_its_series_at_its_end() {
        let mut sc = pressed(20);
        sc.max_events = 20_000;
        let (obs, tl) = recorded(&sc, "fifo");
        assert_eq!(obs.end, crate::model::base::obs::RunEnd::Saturated);
        let end = obs.measured.as_ns();
        assert!(end < sc.duration.as_ns());
        let last = tl.grid.index(end);
        let free = gauge(&tl, "free pages");
        assert!(!free.min[last].is_nan());
        assert!(free.min[last + 1..].iter().all(|v| v.is_nan()));
        let all: u64 = states(&tl, "kswapd").time_ns.iter().flatten().sum();
        assert_eq!(all, end);
    }
}
