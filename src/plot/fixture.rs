//! Synthetic but realistic [`PlotData`] for the plot tests: shapes and magnitudes like the
//! gfp-atomic-storm and two-queue scenarios produce (tails that grow with the nines, a
//! storm of order-0 and order-1 failures, kswapd stalling in congestion_wait, free pages
//! hovering at the watermarks), made by small deterministic stand-in processes.

use super::data::*;
use crate::stats::series::{Grid, Level, Timeline};

/// A small deterministic generator (xorshift64*), enough for fixture noise.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn spread(mean: f64, rel: f64) -> Spread {
    Spread {
        mean,
        stddev: mean * rel,
        ci95_half: mean * rel * 0.715,
        values: Vec::new(),
    }
}

/// Read percentiles read off pooled `bins`, with a replication spread that widens in the
/// tail (fewer samples there).
fn percentiles(bins: &[(u64, u64)]) -> Vec<PercentileBand> {
    let total: u64 = bins.iter().map(|b| b.1).sum();
    PLOT_PERCENTILES
        .iter()
        .map(|&p| {
            let want = (p / 100.0 * total as f64).ceil() as u64;
            let mut acc = 0;
            let ns = bins
                .iter()
                .find(|b| {
                    acc += b.1;
                    acc >= want
                })
                .map_or(0, |b| b.0);
            let nines = -(1.0 - p / 100.0).log10();
            PercentileBand {
                p,
                ns: spread(ns as f64, 0.03 + 0.035 * nines),
            }
        })
        .collect()
}

/// Pooled bins on a log-linear grid (16 per octave) from a log-normal body at
/// `median_ms` plus a heavier tail of weight `tail_share` at `tail_ms`.
fn bins(median_ms: f64, tail_ms: f64, tail_share: f64, reads: f64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut ns = 8_000.0f64;
    while ns < 4e9 {
        let step = ns / 16.0;
        let mid = ns + step / 2.0;
        let z = |m: f64, s: f64| {
            let x = (mid / (m * 1e6)).ln() / s;
            (-0.5 * x * x).exp() / (mid * s)
        };
        let density = (1.0 - tail_share) * z(median_ms, 0.45) + tail_share * z(tail_ms, 0.9);
        let count = (density * step * reads * 0.4).round() as u64;
        if count > 0 {
            out.push((mid as u64, count));
        }
        ns += step;
    }
    out
}

fn stages(scale: f64, reclaim_ms: f64, memory: bool) -> Vec<(String, f64)> {
    let mut v = Vec::new();
    if memory {
        v.push(("direct reclaim".to_string(), reclaim_ms * 1e6));
    }
    for (name, ms) in [
        ("crypt queue wait", 1.9),
        ("crypt service", 0.35),
        ("kcryptd_io hop", 0.12),
        ("request-pool sleep", 0.6),
        ("block queue wait", 0.8),
        ("device service", 0.45),
        ("other", 0.03),
    ] {
        v.push((name.to_string(), ms * scale * 1e6));
    }
    v
}

fn memory(failures: f64, orders: &[(u32, f64)], sync_s: f64, async_s: f64) -> MemoryPlot {
    MemoryPlot {
        failures_by_order: orders
            .iter()
            .map(|&(o, share)| (o, spread(failures * share, 0.2)))
            .collect(),
        failures: spread(failures, 0.18),
        kswapd_cwait_s: [spread(sync_s, 0.25), spread(async_s, 0.3)],
    }
}

/// The watermarks and the GFP_ATOMIC floor of the memory stand-in, pages.
const MIN: f64 = 2_000.0;
const LOW: f64 = 2_500.0;
const HIGH: f64 = 3_000.0;
const FLOOR: f64 = 1_000.0;

/// The series a memory stand-in records into.
#[derive(Debug, Clone, Copy)]
struct MemSeries {
    free: usize,
    dirty: usize,
    writeback: usize,
    failures: usize,
    kswapd: usize,
}

impl MemSeries {
    /// Adds the memory series and levels to `tl`.
    fn add(tl: &mut Timeline) -> MemSeries {
        let ids = MemSeries {
            free: tl.add_gauge("free pages", "pages"),
            dirty: tl.add_gauge("dirty pages", "pages"),
            writeback: tl.add_gauge("writeback pages", "pages"),
            failures: tl.add_count("GFP_ATOMIC failures"),
            kswapd: tl.add_states("kswapd", &["asleep", "reclaiming", "congestion_wait"]),
        };
        let level = |name: &str, value: f64| Level {
            name: name.into(),
            value,
        };
        tl.levels = vec![
            level("high", HIGH),
            level("low", LOW),
            level("min", MIN),
            level("GFP_ATOMIC floor", FLOOR),
        ];
        ids
    }
}

/// A writer dirtying pages, kswapd reclaiming between the watermarks and stalling in
/// congestion_wait (with probability `stall` per step in the storm), and atomic bursts
/// failing under the floor.
#[derive(Debug, Clone)]
struct MemStandIn {
    ids: MemSeries,
    stall: f64,
    free: f64,
    dirty: f64,
    writeback: f64,
    /// kswapd: 0 asleep, 1 reclaiming, 2 in congestion_wait.
    state: usize,
    stall_left: u32,
}

impl MemStandIn {
    fn new(ids: MemSeries, stall: f64) -> MemStandIn {
        MemStandIn {
            ids,
            stall,
            free: 40_000.0,
            dirty: 0.0,
            writeback: 0.0,
            state: 0,
            stall_left: 0,
        }
    }

    /// One millisecond step at `t` ns.
    fn step(&mut self, tl: &mut Timeline, noise: &mut Noise, t: u64) {
        // A storm between 20 s and 40 s: a faster writer, network bursts, stalls.
        let storm = (20_000_000_000..40_000_000_000).contains(&t);
        // The writer takes pages; dirty pages turn into writeback and come back free.
        let take = if storm { 22.0 } else { 9.0 } + 6.0 * noise.next();
        self.free -= take;
        self.dirty += take;
        let flush = (self.dirty * 0.004).min(self.dirty);
        self.dirty -= flush;
        self.writeback += flush;
        let done = self.writeback * 0.02;
        self.writeback -= done;
        self.kswapd(tl, noise, t, storm);
        // Network receive bursts allocate atomically.
        if noise.next() < if storm { 0.03 } else { 0.004 } {
            let want = 60.0 + 800.0 * noise.next();
            if self.free - want < FLOOR {
                tl.count(self.ids.failures, t, 1 + (want / 200.0) as u64);
            } else {
                self.free -= want;
            }
        }
        self.free = self.free.max(FLOOR * 0.6) + done * 0.2;
        tl.gauge(self.ids.free, t, self.free.round());
        tl.gauge(self.ids.dirty, t, self.dirty.round());
        tl.gauge(self.ids.writeback, t, self.writeback.round());
    }

    /// kswapd: wakes under low, reclaims to high, sometimes stalls.
    fn kswapd(&mut self, tl: &mut Timeline, noise: &mut Noise, t: u64, storm: bool) {
        let next = match self.state {
            0 if self.free < LOW => 1,
            1 if self.free > HIGH + 300.0 => 0,
            1 if storm && noise.next() < self.stall => {
                self.stall_left = 100;
                2
            }
            2 if self.stall_left == 0 => 1,
            s => s,
        };
        if next != self.state {
            tl.enter(self.ids.kswapd, t, next);
            self.state = next;
        }
        match self.state {
            1 => self.free += 22.0 + 4.0 * noise.next(),
            2 => self.stall_left -= 1,
            _ => {}
        }
    }
}

/// Replication 0's timeline over 60 s: the crypt queues given, and with `memory` the memory
/// stand-in ([`MemStandIn`]) stalling with probability `stall`.
fn timeline(seed: u64, memory: bool, queues: &[&str], stall: f64) -> Timeline {
    let end = 60_000_000_000u64;
    let mut tl = Timeline::new(Grid::covering(0, end, 1000));
    let q: Vec<usize> = queues
        .iter()
        .map(|n| tl.add_gauge(&format!("crypt queue {n}"), "requests"))
        .collect();
    let mut noise = Noise(seed | 1);
    let mut mem = memory.then(|| MemStandIn::new(MemSeries::add(&mut tl), stall));
    let mut depth = vec![0.0f64; q.len()];
    if let Some(m) = &mem {
        tl.enter(m.ids.kswapd, 0, 0);
    }
    let step = 1_000_000u64; // 1 ms
    let mut t = 0;
    while t < end {
        for (i, d) in depth.iter_mut().enumerate() {
            let burst = if noise.next() < 0.002 { 40.0 } else { 0.0 };
            *d = (*d + burst + (noise.next() - 0.52) * 4.0 * (i + 1) as f64).clamp(0.0, 128.0);
            tl.gauge(q[i], t, d.round());
        }
        if let Some(m) = &mut mem {
            m.step(&mut tl, &mut noise, t);
        }
        t += step;
    }
    tl.finish(end);
    tl
}

/// gfp-atomic-storm with three kernel variants, memory figures and timelines.
pub(super) fn with_memory() -> PlotData {
    let runs = [
        ("2.6.30", 0.9, 2.6, 310.0, 0.3, 0.0015),
        ("2.6.31", 1.1, 3.0, 1450.0, 0.9, 0.004),
        ("baseline", 1.3, 3.4, 2900.0, 1.8, 0.008),
    ];
    PlotData {
        sweep: None,
        flags: Vec::new(),
        scenario: "gfp-atomic-storm".into(),
        seed: 42,
        replications: 10,
        runs: runs
            .iter()
            .enumerate()
            .map(|(i, &(label, med, tail, fails, cwait, stall))| {
                let bins = bins(med, med * tail * tail * 2.0, 0.015 * (i + 1) as f64, 2e6);
                RunPlot {
                    label: label.into(),
                    read_percentiles: percentiles(&bins),
                    read_clat_bins: bins,
                    read_stages: stages(med, 0.4 * (i + 1) as f64, true),
                    memory: Some(memory(
                        fails,
                        &[(0, 0.7), (1, 0.25), (3, 0.05)],
                        cwait,
                        cwait * 0.4,
                    )),
                    timeline: Some(timeline(7 + i as u64, true, &["kcryptd"], stall)),
                    metrics: Vec::new(),
                }
            })
            .collect(),
    }
}

/// two-queue without a memory model: three policies, queue-only timelines on two.
pub(super) fn without_memory() -> PlotData {
    let runs = [
        ("fifo", 0.6, 3.2, vec!["kcryptd"]),
        ("split", 0.5, 2.2, vec!["read", "write"]),
        ("prio", 0.45, 1.9, vec![]),
    ];
    PlotData {
        sweep: None,
        flags: Vec::new(),
        scenario: "two-queue".into(),
        seed: 1234,
        replications: 5,
        runs: runs
            .iter()
            .enumerate()
            .map(|(i, (label, med, tail, queues))| {
                let bins = bins(*med, med * tail * tail, 0.01, 1e6);
                RunPlot {
                    label: label.to_string(),
                    read_percentiles: percentiles(&bins),
                    read_clat_bins: bins,
                    read_stages: stages(*med, 0.0, false),
                    memory: None,
                    timeline: (!queues.is_empty())
                        .then(|| timeline(100 + i as u64, false, queues, 0.0)),
                    metrics: Vec::new(),
                }
            })
            .collect(),
    }
}

/// gfp-atomic-storm with five variants whose labels are long and carry `+` and `/`.
pub(super) fn five_variants() -> PlotData {
    let labels = [
        "2.6.30",
        "2.6.31",
        "baseline",
        "+kswapd-stay-awake",
        "+dm-crypt-unplug/split",
    ];
    let mut data = with_memory();
    let base = data.runs[2].clone();
    data.runs = labels
        .iter()
        .enumerate()
        .map(|(i, &label)| {
            let f = 1.0 - 0.15 * i as f64;
            let bins = bins(1.3 * f, 30.0 * f, 0.05 * f, 2e6);
            RunPlot {
                label: label.into(),
                read_percentiles: percentiles(&bins),
                read_clat_bins: bins,
                read_stages: stages(f, 1.2 * f, true),
                memory: Some(memory(
                    2900.0 * f * f,
                    &[(0, 0.6), (1, 0.3), (2, 0.1)],
                    1.8 * f,
                    0.5 * f,
                )),
                timeline: (i == 3).then(|| base.timeline.clone()).flatten(),
                metrics: Vec::new(),
            }
        })
        .collect();
    data
}

/// nvme-desktop with `--flags all`: the default table and its 31 flag combinations, times
/// in tens of µs, ten replications, the flag comparison, and one timeline.
pub(super) fn flags_all() -> PlotData {
    use crate::model::crypt::policy::DmFlags;
    use crate::report::flags::{FlagPlot, FlagPlotRow};
    use crate::stats::compare::Interval;
    let base = without_memory().runs[0].timeline.clone();
    let mut data = without_memory();
    data.scenario = "nvme-desktop".into();
    data.replications = 10;
    data.runs = (0..32u8)
        .map(|bits| {
            let mut label = "dm-crypt".to_string();
            for (k, (name, _)) in DmFlags::ALL.iter().enumerate() {
                if bits & (1 << k) != 0 {
                    label = format!("{label}+{name}");
                }
            }
            let f = 1.0 + 0.013 * f64::from(bits) - 0.2 * f64::from(bits & 4) / 4.0;
            let bins = bins(0.05 * f, 0.09 * f * f, 0.02, 1e6);
            RunPlot {
                label,
                read_percentiles: percentiles(&bins),
                read_clat_bins: bins,
                read_stages: stages(0.02 * f, 0.0, false),
                memory: None,
                timeline: (bits == 5).then(|| base.clone()).flatten(),
                metrics: Vec::new(),
            }
        })
        .collect();
    let rows = data.runs[1..]
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let q = 0.8 + 0.02 * k as f64;
            FlagPlotRow {
                policy: r.label.clone(),
                read_p999: Some(Interval::around(q, 0.05)),
                throughput: Some(Interval::around(2.0 - q, 0.03)),
            }
        })
        .collect();
    data.flags = vec![FlagPlot {
        variant: None,
        rows,
    }];
    data
}
