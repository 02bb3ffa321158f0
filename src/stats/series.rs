//! Bounded time series for timelines: a fixed number of equal-width buckets over a known
//! window, filled at record time, so memory depends on the bucket count and never on the
//! simulated duration.
//!
//! Three kinds of series share one bucket grid ([`Timeline`]):
//! - a [`Gauge`] is a step function (a level that holds until the next record: free pages, a
//!   queue length); each bucket keeps the minimum and maximum the level took inside it, so a
//!   spike one nanosecond long still shows after downsampling;
//! - a [`Count`] counts point events per bucket (allocation failures);
//! - a [`States`] band keeps, per bucket, the time spent in each of a few named states
//!   (kswapd asleep, reclaiming, in congestion_wait).
//!
//! Constant reference lines (watermarks) are [`Level`]s. Everything is plain data with serde
//! on both sides, so a JSON export can carry a timeline and `qsim plot` can read it back.
//! Times are integer nanoseconds; records must come in non-decreasing time order per series.

use serde::{Deserialize, Serialize};

/// The bucket grid every series of a [`Timeline`] shares: `buckets` buckets of `bucket_ns`
/// from `start_ns`. Records before `start_ns` count in bucket 0, records past the end in the
/// last bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grid {
    /// Start of bucket 0, ns.
    pub start_ns: u64,
    /// Width of a bucket, ns (at least 1).
    pub bucket_ns: u64,
    /// Number of buckets (at least 1).
    pub buckets: usize,
}

impl Grid {
    /// A grid of at most `points` buckets covering `[start_ns, end_ns)`; the width is rounded
    /// up so the grid covers the whole window.
    pub fn covering(start_ns: u64, end_ns: u64, points: usize) -> Grid {
        let points = points.max(1) as u64;
        let span = end_ns.saturating_sub(start_ns).max(1);
        let bucket_ns = span.div_ceil(points).max(1);
        Grid {
            start_ns,
            bucket_ns,
            buckets: span.div_ceil(bucket_ns) as usize,
        }
    }

    /// The bucket holding time `t`, clamped into the grid.
    pub fn index(&self, t: u64) -> usize {
        let i = t.saturating_sub(self.start_ns) / self.bucket_ns;
        (i as usize).min(self.buckets - 1)
    }

    /// Start of bucket `i`, ns.
    pub fn bucket_start(&self, i: usize) -> u64 {
        self.start_ns + i as u64 * self.bucket_ns
    }

    /// End of the grid, ns.
    pub fn end_ns(&self) -> u64 {
        self.bucket_start(self.buckets)
    }
}

/// A step-function level downsampled to min/max per bucket. A bucket the level never
/// visited (before the first record) holds `NaN` in both.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gauge {
    /// What it measures, e.g. "free pages".
    pub name: String,
    /// Unit of the values, e.g. "pages".
    pub unit: String,
    /// Smallest level per bucket (`null` in JSON for `NaN`).
    #[serde(with = "nan_as_null")]
    pub min: Vec<f64>,
    /// Largest level per bucket (`null` in JSON for `NaN`).
    #[serde(with = "nan_as_null")]
    pub max: Vec<f64>,
    /// The current level and the bucket it was last extended to (not serialised).
    #[serde(skip)]
    cursor: Option<(usize, f64)>,
}

impl Gauge {
    /// An empty gauge on `grid`.
    pub fn new(name: &str, unit: &str, grid: &Grid) -> Gauge {
        Gauge {
            name: name.to_string(),
            unit: unit.to_string(),
            min: vec![f64::NAN; grid.buckets],
            max: vec![f64::NAN; grid.buckets],
            cursor: None,
        }
    }

    fn touch(&mut self, i: usize, v: f64) {
        if self.min[i].is_nan() || v < self.min[i] {
            self.min[i] = v;
        }
        if self.max[i].is_nan() || v > self.max[i] {
            self.max[i] = v;
        }
    }

    /// The level becomes `v` at time `t`. Buckets since the previous record take the previous
    /// level, so a long quiet stretch still draws as a flat line.
    pub fn record(&mut self, grid: &Grid, t: u64, v: f64) {
        let i = grid.index(t);
        if let Some((last, prev)) = self.cursor {
            for j in last + 1..=i {
                self.touch(j, prev);
            }
        }
        self.touch(i, v);
        self.cursor = Some((i.max(self.cursor.map_or(0, |c| c.0)), v));
    }

    /// The level set by the latest record (`None` before the first, and in a gauge read back
    /// from JSON, which does not carry it).
    pub fn last(&self) -> Option<f64> {
        self.cursor.map(|(_, v)| v)
    }

    /// Extends the current level to the end of the grid (call once when the run ends).
    pub fn finish(&mut self, grid: &Grid) {
        self.finish_at(grid, grid.end_ns());
    }

    /// Extends the current level through the bucket holding `t`, the end of a run that
    /// stopped before the grid's end: later buckets stay unvisited (`NaN`).
    pub fn finish_at(&mut self, grid: &Grid, t: u64) {
        if let Some((last, v)) = self.cursor {
            let end = grid.index(t);
            for j in last + 1..=end {
                self.touch(j, v);
            }
            self.cursor = Some((last.max(end), v));
        }
    }
}

/// JSON has no NaN: an unvisited bucket is written as `null` and read back as `NaN`.
mod nan_as_null {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[f64], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|x| (!x.is_nan()).then_some(*x)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        let v: Vec<Option<f64>> = Vec::deserialize(d)?;
        Ok(v.into_iter().map(|x| x.unwrap_or(f64::NAN)).collect())
    }
}

/// Point events counted per bucket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Count {
    /// What it counts, e.g. "GFP_ATOMIC failures".
    pub name: String,
    /// Events per bucket.
    pub counts: Vec<u64>,
}

impl Count {
    /// An empty count on `grid`.
    pub fn new(name: &str, grid: &Grid) -> Count {
        Count {
            name: name.to_string(),
            counts: vec![0; grid.buckets],
        }
    }

    /// `n` events at time `t`.
    pub fn add(&mut self, grid: &Grid, t: u64, n: u64) {
        self.counts[grid.index(t)] += n;
    }

    /// Total events (saturating: a count read from a file may hold anything).
    pub fn total(&self) -> u64 {
        self.counts.iter().fold(0, |a, &n| a.saturating_add(n))
    }
}

/// Time spent in each of a few named states, per bucket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct States {
    /// What is in these states, e.g. "kswapd".
    pub name: String,
    /// The states' names; `time_ns[b][k]` is the time in state `k` during bucket `b`.
    pub states: Vec<String>,
    /// Time per state per bucket, ns.
    pub time_ns: Vec<Vec<u64>>,
    /// The current state and since when (not serialised).
    #[serde(skip)]
    cursor: Option<(usize, u64)>,
}

impl States {
    /// A band on `grid` over `states`, in none of them until the first [`States::enter`].
    pub fn new(name: &str, states: &[&str], grid: &Grid) -> States {
        States {
            name: name.to_string(),
            states: states.iter().map(|s| s.to_string()).collect(),
            time_ns: vec![vec![0; states.len()]; grid.buckets],
            cursor: None,
        }
    }

    /// Charges the current state with the time from its start up to `t`.
    fn charge(&mut self, grid: &Grid, t: u64) {
        let Some((k, since)) = self.cursor else {
            return;
        };
        let end = t.min(grid.end_ns());
        let mut from = since.max(grid.start_ns);
        while from < end {
            let i = grid.index(from);
            let to = grid.bucket_start(i + 1).min(end);
            self.time_ns[i][k] += to - from;
            from = to;
        }
    }

    /// Enters state `k` at time `t` (leaving the current one).
    pub fn enter(&mut self, grid: &Grid, t: u64, k: usize) {
        assert!(k < self.states.len(), "state {k} out of range");
        self.charge(grid, t);
        self.cursor = Some((k, t));
    }

    /// Charges the current state up to `t` (call once when the run ends).
    pub fn finish(&mut self, grid: &Grid, t: u64) {
        self.charge(grid, t);
        if let Some((k, _)) = self.cursor {
            self.cursor = Some((k, t));
        }
    }

    /// The state with the most time in bucket `b` (`None` if no time was charged there).
    pub fn dominant(&self, b: usize) -> Option<usize> {
        let row = &self.time_ns[b];
        let (k, &t) = row
            .iter()
            .enumerate()
            .max_by_key(|&(k, &t)| (t, usize::MAX - k))?;
        (t > 0).then_some(k)
    }
}

/// A constant reference line, e.g. the min watermark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Level {
    /// Its label, e.g. "min".
    pub name: String,
    /// Its value, in the unit of the gauges it is drawn with.
    pub value: f64,
}

/// One run's timeline: gauges, counts and state bands on one shared grid, plus reference
/// levels. Its size is fixed when the grid is chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// The bucket grid.
    pub grid: Grid,
    /// Levels (step functions) downsampled to min/max per bucket.
    pub gauges: Vec<Gauge>,
    /// Point events per bucket.
    pub counts: Vec<Count>,
    /// State bands.
    pub states: Vec<States>,
    /// Constant reference lines.
    pub levels: Vec<Level>,
}

impl Timeline {
    /// An empty timeline on `grid`.
    pub fn new(grid: Grid) -> Timeline {
        Timeline {
            grid,
            gauges: Vec::new(),
            counts: Vec::new(),
            states: Vec::new(),
            levels: Vec::new(),
        }
    }

    /// Adds a gauge and returns its index.
    pub fn add_gauge(&mut self, name: &str, unit: &str) -> usize {
        self.gauges.push(Gauge::new(name, unit, &self.grid));
        self.gauges.len() - 1
    }

    /// Adds a count and returns its index.
    pub fn add_count(&mut self, name: &str) -> usize {
        self.counts.push(Count::new(name, &self.grid));
        self.counts.len() - 1
    }

    /// Adds a state band and returns its index.
    pub fn add_states(&mut self, name: &str, states: &[&str]) -> usize {
        self.states.push(States::new(name, states, &self.grid));
        self.states.len() - 1
    }

    /// Records level `v` on gauge `g` at time `t`.
    pub fn gauge(&mut self, g: usize, t: u64, v: f64) {
        let grid = self.grid;
        self.gauges[g].record(&grid, t, v);
    }

    /// Counts `n` events on count `c` at time `t`.
    pub fn count(&mut self, c: usize, t: u64, n: u64) {
        let grid = self.grid;
        self.counts[c].add(&grid, t, n);
    }

    /// Band `s` enters state `k` at time `t`.
    pub fn enter(&mut self, s: usize, t: u64, k: usize) {
        let grid = self.grid;
        self.states[s].enter(&grid, t, k);
    }

    /// Closes every series at time `t` (the end of the run): gauges hold their level through
    /// `t`'s bucket, states are charged up to `t`. Buckets after `t`'s stay empty.
    pub fn finish(&mut self, t: u64) {
        let grid = self.grid;
        for g in &mut self.gauges {
            g.finish_at(&grid, t);
        }
        for s in &mut self.states {
            s.finish(&grid, t);
        }
    }

    /// The gauge named `name`, if any.
    pub fn find_gauge(&self, name: &str) -> Option<&Gauge> {
        self.gauges.iter().find(|g| g.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_covers_the_window_with_at_most_the_asked_points() {
        let g = Grid::covering(0, 60_000_000_000, 1000);
        assert_eq!(g.bucket_ns, 60_000_000);
        assert_eq!(g.buckets, 1000);
        let g = Grid::covering(5, 1005, 3);
        assert_eq!(g.bucket_ns, 334);
        assert_eq!(g.buckets, 3);
        assert!(g.end_ns() >= 1005);
        assert_eq!(g.index(0), 0);
        assert_eq!(g.index(u64::MAX), 2);
    }

    #[test]
    fn a_short_spike_survives_downsampling() {
        let grid = Grid::covering(0, 1000, 10);
        let mut g = Gauge::new("free", "pages", &grid);
        g.record(&grid, 0, 50.0);
        g.record(&grid, 355, 3.0); // 1 ns dip in bucket 3
        g.record(&grid, 356, 50.0);
        g.finish(&grid);
        assert_eq!(g.min[3], 3.0);
        assert_eq!(g.max[3], 50.0);
        for b in [0, 1, 2, 4, 9] {
            assert_eq!((g.min[b], g.max[b]), (50.0, 50.0), "bucket {b}");
        }
    }

    #[test]
    fn a_gauge_fills_quiet_buckets_with_the_held_level() {
        let grid = Grid::covering(0, 100, 10);
        let mut g = Gauge::new("q", "", &grid);
        assert!(g.min[0].is_nan());
        g.record(&grid, 25, 1.0);
        g.record(&grid, 75, 4.0);
        assert!(g.min[1].is_nan(), "before the first record");
        assert_eq!((g.min[2], g.max[2]), (1.0, 1.0));
        assert_eq!((g.min[5], g.max[5]), (1.0, 1.0));
        assert_eq!((g.min[7], g.max[7]), (1.0, 4.0));
        g.finish(&grid);
        assert_eq!((g.min[9], g.max[9]), (4.0, 4.0));
        assert_eq!(g.last(), Some(4.0));
    }

    #[test]
    fn a_run_that_ends_early_leaves_later_buckets_empty() {
        let mut t = Timeline::new(Grid::covering(0, 100, 10));
        let g = t.add_gauge("q", "");
        t.gauge(g, 5, 2.0);
        t.finish(42);
        let q = &t.gauges[g];
        assert_eq!((q.min[4], q.max[4]), (2.0, 2.0));
        assert!(q.min[5].is_nan() && q.max[9].is_nan());
        // Finishing at the window's end fills every bucket, as Gauge::finish does.
        let mut u = Gauge::new("q", "", &t.grid);
        u.record(&t.grid, 5, 2.0);
        u.finish_at(&t.grid, 100);
        assert_eq!(u.max[9], 2.0);
    }

    #[test]
    fn states_charge_time_across_bucket_edges() {
        let grid = Grid::covering(0, 100, 4); // 25 ns buckets
        let mut s = States::new("kswapd", &["asleep", "reclaiming", "cwait"], &grid);
        s.enter(&grid, 0, 0);
        s.enter(&grid, 10, 1);
        s.enter(&grid, 60, 2);
        s.finish(&grid, 100);
        assert_eq!(s.time_ns[0], vec![10, 15, 0]);
        assert_eq!(s.time_ns[1], vec![0, 25, 0]);
        assert_eq!(s.time_ns[2], vec![0, 10, 15]);
        assert_eq!(s.time_ns[3], vec![0, 0, 25]);
        let total: u64 = s.time_ns.iter().flatten().sum();
        assert_eq!(total, 100);
        assert_eq!(s.dominant(2), Some(2));
        assert_eq!(s.dominant(0), Some(1));
    }

    #[test]
    fn counts_and_size_do_not_depend_on_the_window_length() {
        for secs in [60u64, 3600] {
            let mut t = Timeline::new(Grid::covering(0, secs * 1_000_000_000, 500));
            let c = t.add_count("failures");
            let g = t.add_gauge("free", "pages");
            for k in 0..secs {
                t.count(c, k * 1_000_000_000, 2);
                t.gauge(g, k * 1_000_000_000, k as f64);
            }
            t.finish(secs * 1_000_000_000);
            assert_eq!(t.counts[c].total(), 2 * secs);
            assert_eq!(t.counts[c].counts.len(), 500);
            assert_eq!(t.gauges[g].min.len(), 500);
        }
    }

    #[test]
    fn a_timeline_round_trips_through_json() {
        let mut t = Timeline::new(Grid::covering(0, 1000, 4));
        let g = t.add_gauge("free", "pages");
        let s = t.add_states("kswapd", &["asleep", "busy"]);
        t.gauge(g, 0, 7.0);
        t.enter(s, 0, 0);
        t.enter(s, 600, 1);
        t.finish(1000);
        t.levels.push(Level {
            name: "min".into(),
            value: 3.0,
        });
        let back: Timeline = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back.grid, t.grid);
        assert_eq!(back.states[0].time_ns, t.states[0].time_ns);
        assert_eq!(back.levels, t.levels);
        assert_eq!(back.gauges[0].max, t.gauges[0].max);
        // An unvisited bucket goes out as null and comes back as NaN.
        let mut u = Timeline::new(Grid::covering(0, 100, 4));
        let g = u.add_gauge("q", "");
        u.gauge(g, 60, 1.0);
        let json = serde_json::to_string(&u).unwrap();
        assert!(json.contains("null"), "{json}");
        let back: Timeline = serde_json::from_str(&json).unwrap();
        assert!(back.gauges[0].min[0].is_nan());
        assert_eq!(back.gauges[0].min[2], 1.0);
    }
}
