//! The torture generator: one seed → one random *valid* scenario file.
//!
//! A scenario is first drawn as a tree of optional fields that mirrors the file (`Sc`, `Kernel`,
//! `Device`, …, each value with the exact text it is written as), then printed as YAML. Every
//! option comes from one ChaCha8 stream of [`RngStreams`], so a seed is a complete description
//! of the case.
//!
//! Validity is by construction where that is simple (ranges, sector multiples, page multiples)
//! and by a mirror of the loader's cross-field rules where it is not ([`Sc::problem`]): a
//! variant's `set:` is merged over the base exactly as the loader merges it (mappings field by
//! field, lists replaced, a mapping whose `kind:` changes replaced whole), and a draw whose
//! merge breaks a rule is drawn again. The loader is then the judge: if it refuses a file this
//! module produced, either the mirror or the loader is wrong, and the case fails.
//!
//! Costs are kept small so a case runs in milliseconds: durations of 50–300 ms, at most 3
//! replications, and an event budget shared out over the runs of the scenario's plan.

use super::yaml::{Y, quoted};
use crate::engine::RngStreams;
use crate::engine::SimRng;
use crate::model::zone::{WatermarkKernel, Watermarks, min_free_kbytes};
use rand::RngExt;

/// Events all runs of one report pass may fire together (each run's `max_events` is at most
/// this divided by the number of runs).
pub const EVENTS_PER_PASS: u64 = 240_000;

/// The random source and the draws the generator needs.
pub(crate) struct G {
    rng: SimRng,
}

impl G {
    fn new(seed: u64) -> G {
        G {
            rng: RngStreams::new(seed, 0).stream("torture"),
        }
    }
    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }
    fn int(&mut self, lo: u64, hi: u64) -> u64 {
        self.rng.random_range(lo..=hi)
    }
    fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.rng.random_range(0..xs.len())].clone()
    }
    /// A log-uniform integer in `lo..=hi` (`lo >= 1`): small and large values alike.
    fn log(&mut self, lo: u64, hi: u64) -> u64 {
        let (a, b) = ((lo as f64).ln(), (hi as f64 + 1.0).ln());
        let x = self.rng.random_range(a..b).exp() as u64;
        x.clamp(lo, hi)
    }
    /// Usually a log-uniform `lo..=typical`; one draw in twenty is an edge: `lo`, `max` or a
    /// log-uniform value up to `max`.
    fn edge(&mut self, lo: u64, typical: u64, max: u64) -> u64 {
        if self.chance(0.95) {
            return self.log(lo, typical);
        }
        match self.int(0, 2) {
            0 => lo,
            1 => max,
            _ => self.log(lo, max),
        }
    }
    /// `Some(f())` with probability `p`.
    fn maybe<T>(&mut self, p: f64, f: impl FnOnce(&mut G) -> T) -> Option<T> {
        if self.chance(p) { Some(f(self)) } else { None }
    }
}

/// A value with the text it is written as.
#[derive(Debug, Clone)]
pub(crate) struct Q<T> {
    v: T,
    text: String,
}

fn q<T>(v: T, text: String) -> Q<T> {
    Q { v, text }
}

/// A duration of `ns` nanoseconds, written in one of the exact spellings the parser accepts.
fn dur(g: &mut G, ns: u64) -> Q<u64> {
    let mut forms = vec![format!("{ns}ns")];
    if ns == 0 {
        forms.extend(["0".to_string(), "0ms".to_string(), "0s".to_string()]);
    }
    if ns.is_multiple_of(1_000) {
        forms.push(format!("{}us", ns / 1_000));
        forms.push(format!("{} us", ns / 1_000));
    }
    if ns.is_multiple_of(1_000_000) {
        forms.push(format!("{}ms", ns / 1_000_000));
    } else if ns.is_multiple_of(1_000) && ns >= 1_000_000 {
        // A fraction of a millisecond, exact to the microsecond.
        let frac = format!("{:06}", ns % 1_000_000);
        forms.push(format!(
            "{}.{}ms",
            ns / 1_000_000,
            frac.trim_end_matches('0')
        ));
    }
    if ns.is_multiple_of(1_000_000_000) && ns > 0 {
        forms.push(format!("{}s", ns / 1_000_000_000));
    }
    let text = g.pick(&forms);
    q(ns, text)
}

/// A duration drawn log-uniformly in `lo..=hi` ns, rounded to whole microseconds when above one.
fn dur_in(g: &mut G, lo: u64, hi: u64) -> Q<u64> {
    let mut ns = g.log(lo.max(1), hi);
    if ns > 10_000 {
        ns = (ns / 1_000 * 1_000).max(lo);
    }
    if lo == 0 && g.chance(0.05) {
        ns = 0;
    }
    dur(g, ns)
}

/// A byte count in one of the exact spellings of the size parser.
fn size(g: &mut G, bytes: u64) -> Q<u64> {
    let mut forms = vec![bytes.to_string()];
    let bin = [
        (1u64 << 10, &["k", "K", "KiB"][..]),
        (1 << 20, &["M", "MiB"][..]),
        (1 << 30, &["G", "GiB"][..]),
    ];
    for (unit, names) in bin {
        if bytes.is_multiple_of(unit) && bytes > 0 {
            for n in names {
                forms.push(format!("{}{n}", bytes / unit));
            }
        }
    }
    for (unit, name) in [(1_000u64, "kB"), (1_000_000, "MB"), (1_000_000_000, "GB")] {
        if bytes.is_multiple_of(unit) && bytes > 0 {
            forms.push(format!("{}{name}", bytes / unit));
        }
    }
    if bytes % 1024 == 512 {
        forms.push(format!("{}.5KiB", bytes / 1024));
    }
    let text = g.pick(&forms);
    q(bytes, text)
}

/// A multiple of `unit` in `lo..=hi` (both multiples of `unit`), log-uniform.
fn multiple(g: &mut G, unit: u64, lo: u64, hi: u64) -> u64 {
    g.log(lo / unit, hi / unit) * unit
}

/// What a rate counts: operations per second or bytes per second (a bandwidth).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RateV {
    Ops,
    Bw,
}

/// A bandwidth between `lo` and `hi` bytes/s, written with one of the byte units.
fn bandwidth(g: &mut G, lo: f64, hi: f64) -> Q<RateV> {
    let units: [(&str, f64); 6] = [
        ("B/s", 1.0),
        ("KiB/s", 1024.0),
        ("kB/s", 1e3),
        ("MB/s", 1e6),
        ("MiB/s", 1_048_576.0),
        ("GB/s", 1e9),
    ];
    let fitting: Vec<(&str, f64)> = units
        .iter()
        .copied()
        .filter(|&(_, u)| (hi / u).floor() >= (lo / u).ceil().max(1.0))
        .collect();
    let (name, u) = g.pick(&fitting);
    let n = g.log((lo / u).ceil().max(1.0) as u64, (hi / u).floor() as u64);
    q(RateV::Bw, format!("{n}{name}"))
}

/// An operation rate between `lo` and `hi` per second: `N/s` or `N iops`.
fn ops(g: &mut G, lo: u64, hi: u64) -> Q<RateV> {
    let n = g.log(lo, hi);
    let text = if g.chance(0.7) {
        format!("{n}/s")
    } else {
        format!("{n} iops")
    };
    q(RateV::Ops, text)
}

/// Distribution kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DK {
    Det,
    Exp,
    Uni,
    Logn,
    Emp,
}

impl DK {
    fn name(self) -> &'static str {
        match self {
            DK::Det => "deterministic",
            DK::Exp => "exponential",
            DK::Uni => "uniform",
            DK::Logn => "lognormal",
            DK::Emp => "empirical",
        }
    }
}

/// A distribution as written: a bare duration or a map.
#[derive(Debug, Clone)]
enum Dist {
    Fixed(Q<u64>),
    Map(DistMap),
}

#[derive(Debug, Clone, Default)]
struct DistMap {
    kind: Option<DK>,
    mean: Option<Q<u64>>,
    value: Option<Q<u64>>,
    low: Option<Q<u64>>,
    high: Option<Q<u64>>,
    stddev: Option<Q<u64>>,
    values: Option<Vec<Q<u64>>>,
    flow: bool,
}

/// A distribution of durations in `lo..=hi` ns (its values and parameters stay in that range,
/// so `lo > 0` keeps every draw above zero).
fn dist(g: &mut G, lo: u64, hi: u64) -> Dist {
    let kind = g.pick(&[DK::Det, DK::Exp, DK::Uni, DK::Logn, DK::Emp]);
    if g.chance(0.2) {
        return Dist::Fixed(dur_in(g, lo, hi));
    }
    let positive = lo.max(1);
    let mut m = DistMap {
        kind: Some(kind),
        flow: g.chance(0.6),
        ..DistMap::default()
    };
    match kind {
        DK::Det => m.value = Some(dur_in(g, lo, hi)),
        DK::Exp => m.mean = Some(dur_in(g, positive, hi)),
        DK::Uni => {
            let a = dur_in(g, lo, hi);
            let b = dur_in(g, a.v.max(lo), hi);
            m.low = Some(a);
            m.high = Some(b);
        }
        DK::Logn => {
            let mean = dur_in(g, positive, hi);
            let sd = dur_in(g, 0, mean.v.saturating_mul(2).max(1));
            m.mean = Some(mean);
            m.stddev = Some(sd);
        }
        DK::Emp => {
            let n = g.int(1, 12) as usize;
            m.values = Some((0..n).map(|_| dur_in(g, lo, hi)).collect());
        }
    }
    Dist::Map(m)
}

impl Dist {
    /// The loader's merge of an override over `self`.
    fn merge(&mut self, over: Dist) {
        match (self, over) {
            (Dist::Map(a), Dist::Map(b)) => {
                if matches!((a.kind, b.kind), (Some(x), Some(y)) if x != y) {
                    *a = b;
                    return;
                }
                set(&mut a.kind, b.kind);
                set(&mut a.mean, b.mean);
                set(&mut a.value, b.value);
                set(&mut a.low, b.low);
                set(&mut a.high, b.high);
                set(&mut a.stddev, b.stddev);
                set(&mut a.values, b.values);
            }
            (this, over) => *this = over,
        }
    }

    /// Why the loader must refuse it, if it must.
    fn problem(&self, positive: bool) -> Option<String> {
        let m = match self {
            Dist::Fixed(d) => return (positive && d.v == 0).then(|| "zero service".into()),
            Dist::Map(m) => m,
        };
        let Some(kind) = m.kind else {
            return Some("distribution without kind".into());
        };
        let present = [
            ("mean", m.mean.is_some()),
            ("value", m.value.is_some()),
            ("low", m.low.is_some()),
            ("high", m.high.is_some()),
            ("stddev", m.stddev.is_some()),
            ("values", m.values.is_some()),
        ];
        let allowed: &[&str] = match kind {
            DK::Det => &["value"],
            DK::Exp => &["mean"],
            DK::Uni => &["low", "high"],
            DK::Logn => &["mean", "stddev"],
            DK::Emp => &["values"],
        };
        for (name, here) in present {
            if here != allowed.contains(&name) {
                return Some(format!("{name} with {}", kind.name()));
            }
        }
        match kind {
            DK::Uni if m.high.as_ref()?.v < m.low.as_ref()?.v => Some("high < low".into()),
            _ => None,
        }
    }

    fn yaml(&self) -> Y {
        match self {
            Dist::Fixed(d) => Y::S(d.text.clone()),
            Dist::Map(m) => {
                let mut e = Vec::new();
                if let Some(k) = m.kind {
                    e.push(("kind".into(), Y::S(k.name().into())));
                }
                put(&mut e, "mean", &m.mean);
                put(&mut e, "value", &m.value);
                put(&mut e, "low", &m.low);
                put(&mut e, "high", &m.high);
                put(&mut e, "stddev", &m.stddev);
                if let Some(v) = &m.values {
                    e.push((
                        "values".into(),
                        Y::L {
                            items: v.iter().map(|d| Y::S(d.text.clone())).collect(),
                            flow: true,
                        },
                    ));
                }
                Y::M {
                    entries: e,
                    flow: m.flow,
                }
            }
        }
    }
}

/// A partial override of `d` (some of its parameters, with or without `kind:`), as a variant
/// writes one; or a whole new distribution.
fn dist_override(g: &mut G, d: &Dist, lo: u64, hi: u64) -> Dist {
    match d {
        Dist::Map(m) if g.chance(0.5) => {
            let fresh = match dist(g, lo, hi) {
                Dist::Map(f) if f.kind == m.kind => f,
                _ => return dist(g, lo, hi),
            };
            // Keep a random subset of the fresh same-kind parameters.
            let mut o = DistMap {
                kind: if g.chance(0.5) { m.kind } else { None },
                flow: true,
                ..DistMap::default()
            };
            if g.chance(0.6) {
                o.mean = fresh.mean;
            }
            if g.chance(0.6) {
                o.value = fresh.value;
            }
            if g.chance(0.6) {
                o.low = fresh.low;
            }
            if g.chance(0.6) {
                o.high = fresh.high;
            }
            if g.chance(0.6) {
                o.stddev = fresh.stddev;
            }
            if g.chance(0.6) {
                o.values = fresh.values;
            }
            Dist::Map(o)
        }
        _ => dist(g, lo, hi),
    }
}

fn set<T>(base: &mut Option<T>, over: Option<T>) {
    if over.is_some() {
        *base = over;
    }
}

fn put<T: Text>(e: &mut Vec<(String, Y)>, key: &str, v: &Option<T>) {
    if let Some(v) = v {
        e.push((key.to_string(), Y::S(v.text())));
    }
}

/// A value's YAML spelling.
trait Text {
    fn text(&self) -> String;
}
impl<T> Text for Q<T> {
    fn text(&self) -> String {
        self.text.clone()
    }
}
impl Text for bool {
    fn text(&self) -> String {
        self.to_string()
    }
}
impl Text for u32 {
    fn text(&self) -> String {
        self.to_string()
    }
}
impl Text for u64 {
    fn text(&self) -> String {
        self.to_string()
    }
}
impl Text for &'static str {
    fn text(&self) -> String {
        (*self).to_string()
    }
}

/// A merge of every field of a struct: nested mappings through their own merge, the rest
/// replaced.
macro_rules! merge_struct {
    ($a:expr, $b:expr; $($f:ident),*) => {{
        let b = $b;
        $(set(&mut $a.$f, b.$f);)*
    }};
}

const PATCHES: [&str; 3] = [
    "kswapd-stay-awake-when-min",
    "force-highorder",
    "dm-crypt-unplug",
];

#[derive(Debug, Clone, Default)]
struct Kernel {
    hz: Option<u32>,
    version: Option<&'static str>,
    patches: Option<Vec<&'static str>>,
    cwait_class: Option<&'static str>,
    kswapd_nap: Option<bool>,
    skip_below_min: Option<bool>,
    wait_iff_congested: Option<bool>,
    force_highorder: Option<bool>,
    restart_wakes_kswapd: Option<bool>,
}

fn kernel(g: &mut G, p: f64) -> Kernel {
    Kernel {
        hz: g.maybe(p, |g| g.pick(&[100, 250, 300, 1000])),
        version: g.maybe(p, |g| {
            g.pick(&["2.6.30", "2.6.31", "2.6.32", "2.6.33", "2.6.37"])
        }),
        patches: g.maybe(p * 0.8, |g| {
            let mut v: Vec<&'static str> =
                PATCHES.iter().copied().filter(|_| g.chance(0.5)).collect();
            if v.len() > 1 && g.chance(0.5) {
                v.reverse();
            }
            v
        }),
        cwait_class: g.maybe(p * 0.3, |g| g.pick(&["sync", "async"])),
        kswapd_nap: g.maybe(p * 0.3, |g| g.chance(0.5)),
        skip_below_min: g.maybe(p * 0.3, |g| g.chance(0.5)),
        wait_iff_congested: g.maybe(p * 0.3, |g| g.chance(0.5)),
        force_highorder: g.maybe(p * 0.3, |g| g.chance(0.5)),
        restart_wakes_kswapd: g.maybe(p * 0.3, |g| g.chance(0.5)),
    }
}

impl Kernel {
    fn merge(&mut self, o: Kernel) {
        merge_struct!(self, o; hz, version, patches, cwait_class, kswapd_nap, skip_below_min,
            wait_iff_congested, force_highorder, restart_wakes_kswapd);
    }
    fn patched(&self, p: &str) -> bool {
        self.patches.as_ref().is_some_and(|v| v.contains(&p))
    }
    fn problem(&self) -> Option<String> {
        if self.skip_below_min == Some(false) && self.patched("kswapd-stay-awake-when-min") {
            return Some("skip_below_min: false with its patch".into());
        }
        if self.force_highorder == Some(false) && self.patched("force-highorder") {
            return Some("force_highorder: false with its patch".into());
        }
        None
    }
    fn yaml(&self) -> Y {
        let mut e = Vec::new();
        put(&mut e, "hz", &self.hz);
        if let Some(v) = self.version {
            e.push(("version".into(), Y::S(quoted(v))));
        }
        if let Some(p) = &self.patches {
            e.push((
                "patches".into(),
                Y::L {
                    items: p.iter().map(|s| Y::S(s.to_string())).collect(),
                    flow: true,
                },
            ));
        }
        put(&mut e, "cwait_class", &self.cwait_class);
        put(&mut e, "kswapd_nap", &self.kswapd_nap);
        put(&mut e, "skip_below_min", &self.skip_below_min);
        put(&mut e, "wait_iff_congested", &self.wait_iff_congested);
        put(&mut e, "force_highorder", &self.force_highorder);
        put(&mut e, "restart_wakes_kswapd", &self.restart_wakes_kswapd);
        Y::map(e)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DevKind {
    Hdd5400,
    Hdd7200,
    Nvme,
    Generic,
}

impl DevKind {
    fn name(self) -> &'static str {
        match self {
            DevKind::Hdd5400 => "hdd5400",
            DevKind::Hdd7200 => "hdd7200",
            DevKind::Nvme => "nvme",
            DevKind::Generic => "generic",
        }
    }
}

/// Shortest service time a generated generic device may draw (ns): a device that answers in
/// no time would let a closed loop spin without simulated time passing.
const MIN_SERVICE_NS: u64 = 20_000;

#[derive(Debug, Clone, Default)]
struct Device {
    kind: Option<DevKind>,
    seek_min: Option<Q<u64>>,
    seek_full: Option<Q<u64>>,
    revolution: Option<Q<u64>>,
    transfer_rate: Option<Q<RateV>>,
    capacity: Option<Q<u64>>,
    queue_depth: Option<u32>,
    latency: Option<Q<u64>>,
    channels: Option<u32>,
    overhead: Option<Q<u64>>,
    service: Option<Dist>,
}

/// A device of `kind` with a random subset of its overrides (each with probability `p`).
fn device(g: &mut G, kind: DevKind, p: f64) -> Device {
    let mut d = Device {
        kind: Some(kind),
        ..Device::default()
    };
    match kind {
        DevKind::Hdd5400 | DevKind::Hdd7200 => {
            // seek_min never above either preset's mean, seek_full never below any seek_min:
            // any merge of these stays valid.
            d.seek_min = g.maybe(p, |g| dur_in(g, 500_000, 2_000_000));
            d.seek_full = g.maybe(p, |g| dur_in(g, 3_000_000, 30_000_000));
            d.revolution = g.maybe(p, |g| dur_in(g, 4_000_000, 16_000_000));
            d.transfer_rate = g.maybe(p, |g| bandwidth(g, 30e6, 250e6));
            d.capacity = g.maybe(p, |g| {
                if g.chance(0.1) {
                    let b = multiple(g, 1 << 20, 1 << 30, 8 << 30);
                    size(g, b)
                } else {
                    let b = multiple(g, 1 << 30, 20 << 30, 2048 << 30);
                    size(g, b)
                }
            });
            d.queue_depth = g.maybe(p, |g| g.edge(1, 64, 1_000_000) as u32);
        }
        DevKind::Nvme => {
            d.latency = g.maybe(p, |g| dur_in(g, 5_000, 200_000));
            d.channels = g.maybe(p, |g| g.edge(1, 16, 4096) as u32);
            d.overhead = g.maybe(p, |g| dur_in(g, 1_000, 20_000));
            d.transfer_rate = g.maybe(p, |g| bandwidth(g, 0.5e9, 8e9));
            d.queue_depth = g.maybe(p, |g| g.log(1, 1023) as u32);
        }
        DevKind::Generic => {
            d.service = Some(dist(g, MIN_SERVICE_NS, 20_000_000));
            d.channels = g.maybe(p, |g| g.log(1, 8) as u32);
            d.queue_depth = g.maybe(p, |g| g.edge(1, 4096, 1_000_000) as u32);
        }
    }
    d
}

impl Device {
    fn merge(&mut self, o: Device) {
        if matches!((self.kind, o.kind), (Some(a), Some(b)) if a != b) {
            *self = o;
            return;
        }
        let Device { service, .. } = &o;
        match (&mut self.service, service.clone()) {
            (Some(a), Some(b)) => a.merge(b),
            (a, b) => set(a, b),
        }
        merge_struct!(self, o; kind, seek_min, seek_full, revolution, transfer_rate, capacity,
            queue_depth, latency, channels, overhead);
    }
    fn capacity(&self) -> Option<u64> {
        match self.kind? {
            DevKind::Hdd5400 => Some(self.capacity.as_ref().map_or(320_000_000_000, |c| c.v)),
            DevKind::Hdd7200 => Some(self.capacity.as_ref().map_or(1_000_000_000_000, |c| c.v)),
            _ => None,
        }
    }
    fn problem(&self) -> Option<String> {
        let Some(kind) = self.kind else {
            return Some("device without kind".into());
        };
        let hdd = matches!(kind, DevKind::Hdd5400 | DevKind::Hdd7200);
        let fields = [
            ("seek_min", self.seek_min.is_some(), hdd),
            ("seek_full", self.seek_full.is_some(), hdd),
            ("revolution", self.revolution.is_some(), hdd),
            (
                "transfer_rate",
                self.transfer_rate.is_some(),
                hdd || kind == DevKind::Nvme,
            ),
            ("capacity", self.capacity.is_some(), hdd),
            ("latency", self.latency.is_some(), kind == DevKind::Nvme),
            ("channels", self.channels.is_some(), !hdd),
            ("overhead", self.overhead.is_some(), kind == DevKind::Nvme),
            ("service", self.service.is_some(), kind == DevKind::Generic),
        ];
        if let Some((f, ..)) = fields.iter().find(|(_, here, ok)| *here && !ok) {
            return Some(format!("device field {f} of another kind"));
        }
        if self
            .transfer_rate
            .as_ref()
            .is_some_and(|r| r.v != RateV::Bw)
        {
            return Some("transfer_rate not a bandwidth".into());
        }
        if kind == DevKind::Generic {
            return match &self.service {
                None => Some("generic without service".into()),
                Some(s) => s.problem(true),
            };
        }
        None
    }
    fn yaml(&self, g: &mut G) -> Y {
        let mut e = Vec::new();
        if let Some(k) = self.kind {
            e.push(("kind".into(), Y::S(k.name().into())));
        }
        put(&mut e, "seek_min", &self.seek_min);
        put(&mut e, "seek_full", &self.seek_full);
        put(&mut e, "revolution", &self.revolution);
        put(&mut e, "transfer_rate", &self.transfer_rate);
        put(&mut e, "capacity", &self.capacity);
        put(&mut e, "queue_depth", &self.queue_depth);
        put(&mut e, "latency", &self.latency);
        put(&mut e, "channels", &self.channels);
        put(&mut e, "overhead", &self.overhead);
        if let Some(s) = &self.service {
            e.push(("service".into(), s.yaml()));
        }
        Y::M {
            entries: e,
            flow: g.chance(0.3),
        }
    }
}

#[derive(Debug, Clone, Default)]
struct Block {
    mode: Option<&'static str>,
    nr_requests: Option<u32>,
    elevator: Option<&'static str>,
    plug: Option<bool>,
    unplug_threshold: Option<u32>,
    low_latency: Option<bool>,
    slice_sync: Option<Q<u64>>,
    slice_async: Option<Q<u64>>,
    slice_idle: Option<Q<u64>>,
    quantum: Option<u32>,
}

fn block(g: &mut G, p: f64) -> Block {
    let mq = g.chance(0.3);
    let mut b = Block {
        mode: g.maybe(p, |_| if mq { "blk-mq" } else { "legacy" }),
        nr_requests: g.maybe(p, |g| g.edge(4, 512, 100_000) as u32),
        ..Block::default()
    };
    if mq {
        b.elevator = g.maybe(p * 0.5, |_| "fifo");
        b.plug = g.maybe(p * 0.5, |_| false);
        return b;
    }
    let cfq = g.chance(0.7);
    b.elevator = if cfq {
        g.maybe(p, |_| "cfq")
    } else {
        Some("fifo")
    };
    let plug = g.chance(0.8);
    b.plug = if plug {
        g.maybe(p, |_| true)
    } else {
        Some(false)
    };
    if plug {
        b.unplug_threshold = g.maybe(p, |g| g.log(1, 32) as u32);
    }
    if cfq {
        b.low_latency = g.maybe(p, |g| g.chance(0.5));
        b.slice_sync = g.maybe(p, |g| dur_in(g, 1_000_000, 200_000_000));
        b.slice_async = g.maybe(p, |g| dur_in(g, 1_000_000, 100_000_000));
        b.slice_idle = g.maybe(p, |g| dur_in(g, 0, 20_000_000));
        b.quantum = g.maybe(p, |g| g.log(1, 32) as u32);
    }
    b
}

impl Block {
    fn merge(&mut self, o: Block) {
        merge_struct!(self, o; mode, nr_requests, elevator, plug, unplug_threshold, low_latency,
            slice_sync, slice_async, slice_idle, quantum);
    }
    fn problem(&self) -> Option<String> {
        let mq = self.mode == Some("blk-mq");
        let cfq_fields = self.low_latency.is_some()
            || self.slice_sync.is_some()
            || self.slice_async.is_some()
            || self.slice_idle.is_some()
            || self.quantum.is_some();
        if mq && self.elevator == Some("cfq") {
            return Some("blk-mq with cfq".into());
        }
        if mq && self.plug == Some(true) {
            return Some("blk-mq plugged".into());
        }
        let plug = !mq && self.plug != Some(false);
        if !plug && self.unplug_threshold.is_some() {
            return Some("unplug_threshold without plugging".into());
        }
        let cfq = !mq && self.elevator != Some("fifo");
        if !cfq && cfq_fields {
            return Some("cfq fields without cfq".into());
        }
        None
    }
    fn yaml(&self) -> Y {
        let mut e = Vec::new();
        put(&mut e, "mode", &self.mode);
        put(&mut e, "nr_requests", &self.nr_requests);
        put(&mut e, "elevator", &self.elevator);
        put(&mut e, "plug", &self.plug);
        put(&mut e, "unplug_threshold", &self.unplug_threshold);
        put(&mut e, "low_latency", &self.low_latency);
        put(&mut e, "slice_sync", &self.slice_sync);
        put(&mut e, "slice_async", &self.slice_async);
        put(&mut e, "slice_idle", &self.slice_idle);
        put(&mut e, "quantum", &self.quantum);
        Y::map(e)
    }
}

#[derive(Debug, Clone, Default)]
struct Crypt {
    cipher: Option<&'static str>,
    encrypt_rate: Option<Q<RateV>>,
    decrypt_rate: Option<Q<RateV>>,
    per_sector_cost: Option<Q<u64>>,
    hop_cost: Option<Q<u64>>,
    cost: Option<Dist>,
    engine: Option<&'static str>,
    async_queue_limit: Option<u32>,
    async_rate: Option<Q<RateV>>,
    unplug_after_submit: Option<bool>,
}

fn crypt(g: &mut G, p: f64) -> Crypt {
    let asynch = g.chance(0.3);
    Crypt {
        cipher: g.maybe(p, |g| {
            g.pick(&["aes-2009", "aes-ni", "vaes", "null", "\"null\""])
        }),
        encrypt_rate: g.maybe(p * 0.3, |g| bandwidth(g, 20e6, 10e9)),
        decrypt_rate: g.maybe(p * 0.3, |g| bandwidth(g, 20e6, 10e9)),
        per_sector_cost: g.maybe(p * 0.5, |g| dur_in(g, 0, 2_000)),
        hop_cost: g.maybe(p, |g| dur_in(g, 0, 50_000)),
        cost: g.maybe(p * 0.2, |g| dist(g, 1_000, 2_000_000)),
        engine: if asynch {
            Some("async")
        } else {
            g.maybe(p * 0.5, |_| "sync")
        },
        async_queue_limit: if asynch {
            g.maybe(p, |g| g.log(1, 200) as u32)
        } else {
            None
        },
        async_rate: if asynch {
            g.maybe(p, |g| bandwidth(g, 20e6, 10e9))
        } else {
            None
        },
        unplug_after_submit: g.maybe(p * 0.5, |g| g.chance(0.5)),
    }
}

impl Crypt {
    fn merge(&mut self, o: Crypt) {
        let Crypt { cost, .. } = &o;
        match (&mut self.cost, cost.clone()) {
            (Some(a), Some(b)) => a.merge(b),
            (a, b) => set(a, b),
        }
        merge_struct!(self, o; cipher, encrypt_rate, decrypt_rate, per_sector_cost, hop_cost,
            engine, async_queue_limit, async_rate, unplug_after_submit);
    }
    fn problem(&self, k: Option<&Kernel>) -> Option<String> {
        if self.unplug_after_submit == Some(false)
            && k.is_some_and(|k| k.patched("dm-crypt-unplug"))
        {
            return Some("unplug_after_submit: false with its patch".into());
        }
        if self.engine != Some("async")
            && (self.async_queue_limit.is_some() || self.async_rate.is_some())
        {
            return Some("async fields without engine: async".into());
        }
        self.cost.as_ref().and_then(|c| c.problem(false))
    }
    fn yaml(&self) -> Y {
        let mut e = Vec::new();
        put(&mut e, "cipher", &self.cipher);
        put(&mut e, "encrypt_rate", &self.encrypt_rate);
        put(&mut e, "decrypt_rate", &self.decrypt_rate);
        put(&mut e, "per_sector_cost", &self.per_sector_cost);
        put(&mut e, "hop_cost", &self.hop_cost);
        if let Some(c) = &self.cost {
            e.push(("cost".into(), c.yaml()));
        }
        put(&mut e, "engine", &self.engine);
        put(&mut e, "async_queue_limit", &self.async_queue_limit);
        put(&mut e, "async_rate", &self.async_rate);
        put(&mut e, "unplug_after_submit", &self.unplug_after_submit);
        Y::map(e)
    }
}

#[derive(Debug, Clone, Default)]
struct Atomic {
    name: Option<String>,
    preset: Option<&'static str>,
    rate: Option<Q<f64>>,
    bandwidth: Option<Q<RateV>>,
    buffer: Option<Q<u64>>,
    orders: Option<Vec<(u64, String)>>,
    poisson: Option<bool>,
    hold: Option<Dist>,
    burst: Option<u32>,
}

/// Most GFP_ATOMIC allocations per second a stream asks for (rate × burst).
const MAX_ATOMIC_PER_S: u64 = 200_000;

fn atomic(g: &mut G) -> Atomic {
    let mut a = Atomic {
        name: g.maybe(0.5, |g| {
            g.pick(&["wifi", "rx", "atomic1", "net α", "skb"])
                .to_string()
        }),
        preset: g.maybe(0.6, |g| g.pick(&["iwlagn", "custom"])),
        poisson: g.maybe(0.4, |g| g.chance(0.5)),
        hold: g.maybe(0.6, |g| dist(g, 0, 200_000_000)),
        burst: g.maybe(0.6, |g| g.edge(1, 128, 1024) as u32),
        ..Atomic::default()
    };
    let per_s = MAX_ATOMIC_PER_S / u64::from(a.burst.unwrap_or(1));
    if g.chance(0.6) {
        let n = g.log(1, per_s.min(2000));
        let text = match g.int(0, 2) {
            0 => n.to_string(),
            1 => format!("{n}/s"),
            _ => format!("{n}.5"),
        };
        let v = if text.ends_with(".5") {
            n as f64 + 0.5
        } else {
            n as f64
        };
        a.rate = Some(q(v, text));
    } else {
        // Allocations = bandwidth / buffer, with buffer at least 1500 bytes.
        let hi = (per_s * 1500).min(50_000_000) as f64;
        a.bandwidth = Some(bandwidth(g, hi.min(100e3), hi));
        a.buffer = g.maybe(0.5, |g| {
            let b = g.log(1500, 65536);
            size(g, b)
        });
    }
    a.orders = g.maybe(0.5, |g| {
        let mut os: Vec<u64> = (0..=10).filter(|_| g.chance(0.3)).collect();
        if os.is_empty() {
            os.push(g.int(0, 10));
        }
        let mut out: Vec<(u64, String)> = os
            .iter()
            .map(|&o| {
                let w = g.pick(&["0", "1", "0.5", "0.25", "2", "0.001", "3"]);
                (o, w.to_string())
            })
            .collect();
        if out.iter().all(|(_, w)| w == "0") {
            out[0].1 = "1".into();
        }
        if g.chance(0.3) {
            out.reverse();
        }
        out
    });
    a
}

impl Atomic {
    fn yaml(&self, g: &mut G) -> Y {
        let mut e = Vec::new();
        if let Some(n) = &self.name {
            e.push(("name".into(), Y::S(quoted(n))));
        }
        put(&mut e, "preset", &self.preset);
        put(&mut e, "rate", &self.rate);
        put(&mut e, "bandwidth", &self.bandwidth);
        put(&mut e, "buffer", &self.buffer);
        if let Some(o) = &self.orders {
            e.push((
                "orders".into(),
                Y::M {
                    entries: o
                        .iter()
                        .map(|(k, w)| (k.to_string(), Y::S(w.clone())))
                        .collect(),
                    flow: g.chance(0.7),
                },
            ));
        }
        put(&mut e, "poisson", &self.poisson);
        if let Some(h) = &self.hold {
            e.push(("hold".into(), h.yaml()));
        }
        put(&mut e, "burst", &self.burst);
        Y::M {
            entries: e,
            flow: g.chance(0.2),
        }
    }
}

const PAGE: u64 = 4096;

#[derive(Debug, Clone, Default)]
struct Memory {
    ram: Option<Q<u64>>,
    min_free_kbytes: Option<u64>,
    unreclaimable: Option<Q<u64>>,
    mapped: Option<Q<u64>>,
    page_cache: Option<Q<u64>>,
    coalesce: Option<Q<f64>>,
    scan_cost: Option<Q<u64>>,
    page_pool: Option<u32>,
    min_bio_pages: Option<u32>,
    atomic: Option<Vec<Atomic>>,
}

/// The zone's layout as the loader resolves it: (ram, high watermark pages, unreclaimable).
fn layout(ram: u64, mfk: Option<u64>, unrec: Option<u64>) -> (u64, u64, u64) {
    let mfk = mfk.unwrap_or_else(|| min_free_kbytes(ram / 1024, WatermarkKernel::V2_6_32));
    let high = Watermarks::v2_6_32(mfk).high;
    (mfk, high, unrec.unwrap_or(ram / 2 / PAGE * PAGE))
}

/// A memory section; `full` draws `ram` (a base), else a partial override.
fn memory(g: &mut G, full: bool, p: f64) -> Memory {
    let ram_mib = if full || g.chance(p * 0.5) {
        Some(g.pick(&[64u64, 96, 128, 256, 512, 1024, 2048, 3072, 4096, 8192]))
    } else {
        None
    };
    let mut m = Memory {
        ram: ram_mib.map(|mib| size(g, mib << 20)),
        ..Memory::default()
    };
    // Layout fields are drawn against this ram (a partial override's may not fit the base's:
    // the mirror then refuses the draw).
    let ram = ram_mib.unwrap_or(g.pick(&[256u64, 2048])) << 20;
    let ram_kb = ram / 1024;
    m.min_free_kbytes = g.maybe(p * 0.4, |g| g.edge(128, ram_kb / 32, ram_kb / 32));
    let (_, high, _) = layout(ram, m.min_free_kbytes, None);
    // dm-crypt's reserve comes out of the zone at boot too: sometimes all the room there is.
    m.page_pool = g.maybe(p * 0.4, |g| {
        let most = (ram / PAGE - high).min(1_000_000);
        if g.chance(0.03) {
            most as u32
        } else {
            g.log(1, 256.min(most)) as u32
        }
    });
    let pool = u64::from(m.page_pool.unwrap_or(32)) * PAGE;
    let room = (ram - high * PAGE).saturating_sub(pool);
    m.unreclaimable = g.maybe(p * 0.6, |g| {
        let b = if g.chance(0.1) {
            room
        } else {
            g.int(0, room / PAGE) * PAGE
        };
        size(g, b)
    });
    let unrec = m
        .unreclaimable
        .as_ref()
        .map_or(ram / 2 / PAGE * PAGE, |u| u.v);
    m.mapped = g.maybe(p * 0.5, |g| {
        let b = g.int(0, unrec / PAGE) * PAGE;
        size(g, b)
    });
    m.page_cache = g.maybe(p * 0.4, |g| {
        let b = if g.chance(0.1) {
            room - unrec
        } else {
            g.int(0, (room - unrec) / PAGE) * PAGE
        };
        size(g, b)
    });
    m.coalesce = g.maybe(p * 0.6, |g| {
        let x = g.pick(&[0.0, 0.02, 0.1, 0.5, 0.9, 1.0]);
        let text = if x == 1.0 {
            "1".to_string()
        } else {
            x.to_string()
        };
        q(x, text)
    });
    m.scan_cost = g.maybe(p * 0.4, |g| dur_in(g, 0, 2_000));
    m.min_bio_pages = g.maybe(p * 0.4, |g| g.edge(1, 64, 100_000) as u32);
    m.atomic = g.maybe(p * 0.8, |g| {
        let n = g.int(0, 3) as usize;
        (0..n).map(|_| atomic(g)).collect()
    });
    m
}

impl Memory {
    fn merge(&mut self, o: Memory) {
        merge_struct!(self, o; ram, min_free_kbytes, unreclaimable, mapped, page_cache,
            coalesce, scan_cost, page_pool, min_bio_pages, atomic);
    }
    fn problem(&self) -> Option<String> {
        let Some(ram) = self.ram.as_ref().map(|r| r.v) else {
            return Some("memory without ram".into());
        };
        let ram_kb = ram / 1024;
        if let Some(m) = self.min_free_kbytes
            && !(128..=ram_kb / 32).contains(&m)
        {
            return Some("min_free_kbytes out of range".into());
        }
        let (_, high, unrec) = layout(
            ram,
            self.min_free_kbytes,
            self.unreclaimable.as_ref().map(|u| u.v),
        );
        let pool = u64::from(self.page_pool.unwrap_or(32)) * PAGE;
        if pool > ram.saturating_sub(high * PAGE) {
            return Some("page_pool above the high watermark".into());
        }
        let max_unrec = ram.saturating_sub(high * PAGE) - pool;
        if unrec > max_unrec {
            return Some("unreclaimable above the high watermark".into());
        }
        if self.mapped.as_ref().is_some_and(|m| m.v > unrec) {
            return Some("mapped above unreclaimable".into());
        }
        if self
            .page_cache
            .as_ref()
            .is_some_and(|c| c.v > max_unrec - unrec)
        {
            return Some("page_cache above the high watermark".into());
        }
        let mut names: Vec<String> = Vec::new();
        for (i, a) in self.atomic.iter().flatten().enumerate() {
            let name = a.name.clone().unwrap_or_else(|| format!("atomic{i}"));
            if names.contains(&name) {
                return Some(format!("atomic name {name} twice"));
            }
            names.push(name);
            if let Some(h) = &a.hold
                && let Some(p) = h.problem(false)
            {
                return Some(p);
            }
        }
        None
    }
    fn yaml(&self, g: &mut G) -> Y {
        let mut e = Vec::new();
        put(&mut e, "ram", &self.ram);
        put(&mut e, "min_free_kbytes", &self.min_free_kbytes);
        put(&mut e, "unreclaimable", &self.unreclaimable);
        put(&mut e, "mapped", &self.mapped);
        put(&mut e, "page_cache", &self.page_cache);
        put(&mut e, "coalesce", &self.coalesce);
        put(&mut e, "scan_cost", &self.scan_cost);
        put(&mut e, "page_pool", &self.page_pool);
        put(&mut e, "min_bio_pages", &self.min_bio_pages);
        if let Some(a) = &self.atomic {
            let items = a.iter().map(|a| a.yaml(g)).collect();
            e.push(("atomic".into(), Y::L { items, flow: false }));
        }
        Y::map(e)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WK {
    Fio,
    Gitk,
    Writer,
}

#[derive(Debug, Clone, Default)]
struct Workload {
    name: Option<String>,
    kind: Option<WK>,
    rw: Option<&'static str>,
    rwmixread: Option<u32>,
    bs: Option<Q<u64>>,
    size: Option<Q<u64>>,
    offset: Option<Q<u64>>,
    iodepth: Option<u32>,
    rate: Option<Q<RateV>>,
    arrivals: Option<&'static str>,
    think: Option<Dist>,
    numjobs: Option<u32>,
    sync: Option<bool>,
    direct: Option<bool>,
    io_size: Option<(Q<u64>, &'static str)>,
    number_ios: Option<u64>,
    startdelay: Option<Q<u64>>,
    chunk: Option<Q<u64>>,
    background: Option<Q<u64>>,
    dirty_limit: Option<Q<u64>>,
}

/// Most I/Os per second an open-loop job is given.
const MAX_OPEN_IOPS: u64 = 20_000;

fn workload(g: &mut G, duration_ns: u64) -> Workload {
    let kind = g.pick(&[WK::Fio, WK::Fio, WK::Gitk, WK::Writer]);
    let mut w = Workload {
        name: g.maybe(0.4, |g| {
            g.pick(&["reader", "writer", "gitk", "job-1", "fio0", "β", "a b"])
                .to_string()
        }),
        kind: Some(kind),
        ..Workload::default()
    };
    let sector = 512;
    w.offset = g.maybe(0.2, |g| {
        let b = multiple(g, sector, sector, 8 << 30);
        size(g, b)
    });
    if kind == WK::Writer {
        w.rate = Some(bandwidth(g, 1e6, 100e6));
        w.chunk = g.maybe(0.5, |g| {
            let b = multiple(g, PAGE, PAGE, 512 << 10);
            size(g, b)
        });
        let chunk = w.chunk.as_ref().map_or(512 << 10, |c| c.v);
        w.dirty_limit = g.maybe(0.5, |g| {
            let b = g.log(chunk, 256 << 20);
            size(g, b)
        });
        let limit = w.dirty_limit.as_ref().map_or(64 << 20, |d| d.v);
        w.background = g.maybe(0.4, |g| {
            let b = g.int(0, limit - 1);
            size(g, b)
        });
        w.size = g.maybe(0.5, |g| {
            let b = multiple(g, sector, chunk.div_ceil(sector) * sector, 2 << 30);
            size(g, b)
        });
        return w;
    }
    w.rw = g.maybe(0.8, |g| {
        g.pick(&["read", "write", "randread", "randwrite", "randrw"])
    });
    if w.rw == Some("randrw") {
        w.rwmixread = g.maybe(0.6, |g| g.int(0, 100) as u32);
    }
    w.bs = g.maybe(0.6, |g| {
        let b = multiple(g, sector, sector, 512 << 10);
        size(g, b)
    });
    let bs = w.bs.as_ref().map_or(4096, |b| b.v);
    w.size = g.maybe(0.5, |g| {
        let b = multiple(g, sector, bs, 2 << 30);
        size(g, b)
    });
    w.iodepth = g.maybe(0.6, |g| g.edge(1, 64, 4096) as u32);
    if g.chance(0.35) {
        w.rate = Some(if g.chance(0.5) {
            ops(g, 1, MAX_OPEN_IOPS)
        } else {
            bandwidth(g, bs as f64, (MAX_OPEN_IOPS * bs).min(2_000_000_000) as f64)
        });
        w.arrivals = g.maybe(0.5, |g| g.pick(&["poisson", "constant"]));
    } else {
        w.think = g.maybe(0.4, |g| dist(g, 0, 20_000_000));
    }
    w.numjobs = g.maybe(0.3, |g| g.edge(1, 4, 64) as u32);
    w.sync = g.maybe(0.3, |g| g.chance(0.5));
    w.direct = g.maybe(0.3, |g| g.chance(0.5));
    w.io_size = g.maybe(0.25, |g| {
        let b = multiple(g, sector, bs, (bs * 200).max(bs));
        let key = g.pick(&["io_size", "io_limit"]);
        (size(g, b), key)
    });
    w.number_ios = g.maybe(0.2, |g| g.log(1, 500));
    w.startdelay = g.maybe(0.25, |g| dur_in(g, 0, duration_ns + duration_ns / 4));
    w
}

impl Workload {
    fn yaml(&self, g: &mut G) -> Y {
        let mut e = Vec::new();
        if let Some(n) = &self.name {
            e.push(("name".into(), Y::S(quoted(n))));
        }
        if let Some(k) = self.kind {
            let name = match k {
                WK::Fio => "fio",
                WK::Gitk => "gitk",
                WK::Writer => "buffered-writer",
            };
            e.push(("kind".into(), Y::S(name.into())));
        }
        put(&mut e, "rw", &self.rw);
        put(&mut e, "rwmixread", &self.rwmixread);
        put(&mut e, "bs", &self.bs);
        put(&mut e, "size", &self.size);
        put(&mut e, "offset", &self.offset);
        put(&mut e, "iodepth", &self.iodepth);
        put(&mut e, "rate", &self.rate);
        put(&mut e, "arrivals", &self.arrivals);
        if let Some(t) = &self.think {
            e.push(("think".into(), t.yaml()));
        }
        put(&mut e, "numjobs", &self.numjobs);
        put(&mut e, "sync", &self.sync);
        put(&mut e, "direct", &self.direct);
        if let Some((s, key)) = &self.io_size {
            e.push((key.to_string(), Y::S(s.text.clone())));
        }
        put(&mut e, "number_ios", &self.number_ios);
        put(&mut e, "startdelay", &self.startdelay);
        put(&mut e, "chunk", &self.chunk);
        put(&mut e, "background", &self.background);
        put(&mut e, "dirty_limit", &self.dirty_limit);
        Y::M {
            entries: e,
            flow: g.chance(0.2),
        }
    }
}

/// Why the loader must refuse this workload list on a disk of `capacity` (HDDs), if it must.
fn workloads_problem(ws: &[Workload], capacity: Option<u64>) -> Option<String> {
    if ws.is_empty() {
        return Some("no workload".into());
    }
    let mut cursor = 0u64;
    let mut names: Vec<String> = Vec::new();
    let mut in_flight = 0u64;
    for (i, w) in ws.iter().enumerate() {
        let Some(kind) = w.kind else {
            return Some("workload without kind".into());
        };
        // gitk is a fio preset, so its iodepth counts too.
        if kind != WK::Writer {
            in_flight += u64::from(w.iodepth.unwrap_or(1)) * u64::from(w.numjobs.unwrap_or(1));
            if in_flight > crate::scenario::MAX_IN_FLIGHT {
                return Some(format!("{in_flight} fio I/Os in flight"));
            }
        }
        let default_name = match kind {
            WK::Fio => format!("fio{i}"),
            WK::Gitk => format!("gitk{i}"),
            WK::Writer => format!("buffered-writer{i}"),
        };
        let name = w.name.clone().unwrap_or(default_name);
        if names.contains(&name) {
            return Some(format!("workload name {name} twice"));
        }
        names.push(name);
        let size = w.size.as_ref().map_or(
            match kind {
                WK::Gitk => 256 << 20,
                _ => 1 << 30,
            },
            |s| s.v,
        );
        let offset = w.offset.as_ref().map_or(cursor, |o| o.v);
        let end = offset.saturating_add(size);
        if capacity.is_some_and(|c| end > c) {
            return Some("region past the end of the disk".into());
        }
        cursor = end;
        if let Some(t) = &w.think
            && let Some(p) = t.problem(false)
        {
            return Some(p);
        }
    }
    None
}

/// A scenario (the base file, or a variant's `set:`).
#[derive(Debug, Clone, Default)]
struct Sc {
    name: Option<String>,
    description: Option<String>,
    seed: Option<u64>,
    duration: Option<Q<u64>>,
    warmup: Option<Q<u64>>,
    max_events: Option<u64>,
    replications: Option<u32>,
    cpus: Option<u32>,
    kernel: Option<Kernel>,
    device: Option<Device>,
    block: Option<Block>,
    crypt: Option<Crypt>,
    policies: Option<Vec<&'static str>>,
    workloads: Option<Vec<Workload>>,
    memory: Option<Memory>,
    variants: Vec<(String, Sc)>,
}

const POLICIES: [&str; 6] = ["none", "fifo", "split", "prio", "ratio", "inline"];
const DEFAULT_DURATION_NS: u64 = 60_000_000_000;

/// Merges `o` into `a` where both are nested mappings.
fn merge_opt<T>(a: &mut Option<T>, o: Option<T>, f: impl FnOnce(&mut T, T)) {
    match (a.as_mut(), o) {
        (Some(x), Some(y)) => f(x, y),
        (None, Some(y)) => *a = Some(y),
        _ => {}
    }
}

impl Sc {
    fn merge(&mut self, o: Sc) {
        let Sc {
            kernel,
            device,
            block,
            crypt,
            memory,
            ..
        } = o.clone();
        merge_opt(&mut self.kernel, kernel, Kernel::merge);
        merge_opt(&mut self.device, device, Device::merge);
        merge_opt(&mut self.block, block, Block::merge);
        merge_opt(&mut self.crypt, crypt, Crypt::merge);
        merge_opt(&mut self.memory, memory, Memory::merge);
        merge_struct!(self, o; name, description, seed, duration, warmup, max_events,
            replications, cpus, policies, workloads);
    }

    fn duration_ns(&self) -> u64 {
        self.duration.as_ref().map_or(DEFAULT_DURATION_NS, |d| d.v)
    }

    /// Runs in one report pass: policies × replications.
    fn runs(&self) -> u64 {
        self.policies.as_ref().map_or(1, |p| p.len() as u64)
            * u64::from(self.replications.unwrap_or(10))
    }

    /// Why the loader must refuse this (resolved, variant-free) scenario, if it must.
    fn problem(&self) -> Option<String> {
        if self.warmup.as_ref().map_or(0, |w| w.v) >= self.duration_ns() {
            return Some("warmup not below duration".into());
        }
        if let Some(k) = &self.kernel
            && let Some(p) = k.problem()
        {
            return Some(p);
        }
        let Some(device) = self.device.as_ref() else {
            return Some("no device".into());
        };
        if let Some(p) = device.problem() {
            return Some(p);
        }
        if let Some(b) = &self.block
            && let Some(p) = b.problem()
        {
            return Some(p);
        }
        if let Some(c) = &self.crypt
            && let Some(p) = c.problem(self.kernel.as_ref())
        {
            return Some(p);
        }
        if let Some(m) = &self.memory
            && let Some(p) = m.problem()
        {
            return Some(p);
        }
        workloads_problem(self.workloads.as_deref().unwrap_or(&[]), device.capacity())
    }

    fn yaml(&self, g: &mut G, top: bool) -> Y {
        let mut e = Vec::new();
        if let Some(n) = &self.name {
            e.push(("name".into(), Y::S(quoted(n))));
        }
        if let Some(d) = &self.description {
            e.push(("description".into(), Y::S(quoted(d))));
        }
        put(&mut e, "seed", &self.seed);
        put(&mut e, "duration", &self.duration);
        put(&mut e, "warmup", &self.warmup);
        put(&mut e, "max_events", &self.max_events);
        put(&mut e, "replications", &self.replications);
        put(&mut e, "cpus", &self.cpus);
        // Sections in a random order: the loader must not care.
        let mut sections: Vec<(String, Y)> = Vec::new();
        if let Some(k) = &self.kernel {
            sections.push(("kernel".into(), k.yaml()));
        }
        if let Some(d) = &self.device {
            sections.push(("device".into(), d.yaml(g)));
        }
        if let Some(b) = &self.block {
            sections.push(("block".into(), b.yaml()));
        }
        if let Some(c) = &self.crypt {
            sections.push(("crypt".into(), c.yaml()));
        }
        if let Some(m) = &self.memory {
            sections.push(("memory".into(), m.yaml(g)));
        }
        if let Some(p) = &self.policies {
            sections.push((
                "policies".into(),
                Y::L {
                    items: p.iter().map(|s| Y::S(s.to_string())).collect(),
                    flow: g.chance(0.8),
                },
            ));
        }
        if let Some(w) = &self.workloads {
            let items = w.iter().map(|w| w.yaml(g)).collect();
            sections.push(("workloads".into(), Y::L { items, flow: false }));
        }
        for i in (1..sections.len()).rev() {
            let j = g.int(0, i as u64) as usize;
            sections.swap(i, j);
        }
        e.extend(sections);
        if top && !self.variants.is_empty() {
            let items = self
                .variants
                .iter()
                .map(|(name, set)| {
                    let mut set_y = set.yaml(g, false);
                    if let Y::M { flow, .. } = &mut set_y {
                        *flow = g.chance(0.5);
                    }
                    Y::map(vec![
                        ("name".into(), Y::S(quoted(name))),
                        ("set".into(), set_y),
                    ])
                })
                .collect();
            e.push(("variants".into(), Y::L { items, flow: false }));
        }
        Y::map(e)
    }
}

fn policies(g: &mut G) -> Vec<&'static str> {
    let n = if g.chance(0.1) {
        POLICIES.len()
    } else {
        g.int(1, 3) as usize
    };
    let mut all = POLICIES.to_vec();
    for i in (1..all.len()).rev() {
        let j = g.int(0, i as u64) as usize;
        all.swap(i, j);
    }
    all.truncate(n);
    all
}

fn any_device(g: &mut G, p: f64) -> Device {
    let kind = g.pick(&[
        DevKind::Hdd5400,
        DevKind::Hdd7200,
        DevKind::Nvme,
        DevKind::Generic,
    ]);
    device(g, kind, p)
}

fn workloads(g: &mut G, duration_ns: u64) -> Vec<Workload> {
    let n = g.log(1, 4) as usize;
    (0..n).map(|_| workload(g, duration_ns)).collect()
}

/// Durations of a base: 50–300 ms, warm-up shorter.
fn horizon(g: &mut G) -> (Q<u64>, Option<Q<u64>>) {
    let d = g.int(50, 300) * 1_000_000;
    let d = dur(g, d);
    let w = g.maybe(0.6, |g| {
        let ns = g.int(0, d.v / 2);
        let ns = if g.chance(0.5) {
            ns / 1_000_000 * 1_000_000
        } else {
            ns
        };
        dur(g, ns)
    });
    (d, w)
}

/// A random valid base scenario (no variants, no event budget yet): drawn until the mirror
/// of the rules finds nothing wrong (the draws below make that the usual first outcome).
fn base(g: &mut G) -> Sc {
    loop {
        let sc = base_draw(g);
        if sc.problem().is_none() {
            return sc;
        }
    }
}

fn base_draw(g: &mut G) -> Sc {
    let (duration, warmup) = horizon(g);
    let d_ns = duration.v;
    let mut sc = Sc {
        name: g.maybe(0.5, |g| {
            g.pick(&["torture", "two-queue", "nvme fio", "Ünïcode", "x"])
                .to_string()
        }),
        description: g.maybe(0.3, |g| {
            g.pick(&["a random case", "", "quotes \" and \\ backslashes"])
                .to_string()
        }),
        seed: g.maybe(0.7, |g| {
            if g.chance(0.5) {
                g.int(0, 1000)
            } else {
                g.int(0, u64::MAX)
            }
        }),
        duration: Some(duration),
        warmup,
        replications: g.maybe(0.95, |g| g.int(1, 3) as u32),
        cpus: g.maybe(0.7, |g| g.edge(1, 16, 1024) as u32),
        kernel: g.maybe(0.6, |g| kernel(g, 0.5)),
        device: Some(any_device(g, 0.3)),
        block: g.maybe(0.5, |g| block(g, 0.5)),
        crypt: g.maybe(0.6, |g| crypt(g, 0.5)),
        policies: g.maybe(0.9, policies),
        workloads: Some(workloads(g, d_ns)),
        memory: g.maybe(0.6, |g| memory(g, true, 0.6)),
        ..Sc::default()
    };
    // Each rule broken by the base's own draw is repaired on the field at fault (the variant
    // draws below are retried instead).
    if let (Some(k), Some(c)) = (&mut sc.kernel, &mut sc.crypt)
        && k.patched("dm-crypt-unplug")
        && c.unplug_after_submit == Some(false)
    {
        c.unplug_after_submit = Some(true);
    }
    if let Some(k) = &mut sc.kernel {
        if k.patched("kswapd-stay-awake-when-min") && k.skip_below_min == Some(false) {
            k.skip_below_min = Some(true);
        }
        if k.patched("force-highorder") && k.force_highorder == Some(false) {
            k.force_highorder = Some(true);
        }
    }
    let cap = sc.device.as_ref().and_then(Device::capacity);
    while workloads_problem(sc.workloads.as_deref().unwrap_or(&[]), cap).is_some() {
        sc.workloads = Some(workloads(g, d_ns));
    }
    sc
}

/// A random `set:` over `base`: a few fields and sections, each drawn as a variant would
/// write it.
fn variant_set(g: &mut G, base: &Sc) -> Sc {
    let mut s = Sc::default();
    let atoms = g.int(0, 3);
    for _ in 0..atoms {
        match g.int(0, 10) {
            0 => s.kernel = Some(kernel(g, 0.3)),
            1 => {
                let base_dev = base.device.as_ref().expect("the base has a device");
                s.device = Some(if g.chance(0.5) {
                    // Same kind: a few fields merged over the base's.
                    let mut d = device(g, base_dev.kind.expect("kind"), 0.4);
                    if g.chance(0.5) {
                        d.kind = None;
                    }
                    if let (Some(b), true) = (&base_dev.service, d.service.is_some()) {
                        d.service = Some(dist_override(g, b, MIN_SERVICE_NS, 20_000_000));
                    }
                    d
                } else {
                    any_device(g, 0.3)
                });
            }
            2 => s.block = Some(block(g, 0.4)),
            3 => {
                let mut c = crypt(g, 0.3);
                if let (Some(b), Some(_)) =
                    (base.crypt.as_ref().and_then(|c| c.cost.as_ref()), &c.cost)
                {
                    c.cost = Some(dist_override(g, b, 1_000, 2_000_000));
                }
                s.crypt = Some(c);
            }
            4 => s.memory = Some(memory(g, base.memory.is_none(), 0.4)),
            5 => s.policies = Some(policies(g)),
            6 => s.workloads = Some(workloads(g, base.duration_ns())),
            7 => s.replications = Some(g.int(1, 3) as u32),
            8 => {
                let (d, w) = horizon(g);
                s.duration = Some(d);
                s.warmup = w;
            }
            9 => s.cpus = Some(g.edge(1, 64, 1024) as u32),
            _ => s.max_events = Some(1),
        }
    }
    s
}

/// The `max_events` of each run given `runs` runs in a pass: a share of [`EVENTS_PER_PASS`],
/// sometimes tiny; a lone run sometimes gets up to three times that.
fn budget(g: &mut G, runs: u64) -> u64 {
    if runs == 1 && g.chance(0.2) {
        // Past the 2^18 units of a `--time-limit` slice: runs that go in several slices.
        return g.int(200_000, 3 * EVENTS_PER_PASS);
    }
    let share = (EVENTS_PER_PASS / runs.max(1)).max(1);
    if g.chance(0.1) {
        g.int(1, share.min(200))
    } else {
        g.int(share / 2, share).max(1)
    }
}

/// The generated scenario for `seed`, as YAML text.
pub fn scenario_yaml(seed: u64) -> String {
    let mut g = G::new(seed);
    let mut sc = base(&mut g);
    if g.chance(0.5) {
        let n = g.int(1, 3);
        let names = [
            "2.6.30", "baseline", "+patch", "v1", "v2", "nvme", "ω", "a/b",
        ];
        for _ in 0..n {
            let name = loop {
                let candidate = g.pick(&names).to_string();
                if !sc.variants.iter().any(|(v, _)| *v == candidate) {
                    break candidate;
                }
            };
            let mut chosen = Sc::default();
            for _ in 0..30 {
                let set = variant_set(&mut g, &sc);
                let mut merged = sc.clone();
                merged.merge(set.clone());
                if merged.problem().is_none() {
                    chosen = set;
                    break;
                }
            }
            sc.variants.push((name, chosen));
        }
    }
    // The event budget: shared out over every run of one report pass.
    let merged: Vec<Sc> = if sc.variants.is_empty() {
        vec![sc.clone()]
    } else {
        sc.variants
            .iter()
            .map(|(_, s)| {
                let mut m = sc.clone();
                m.merge(s.clone());
                m
            })
            .collect()
    };
    let runs: u64 = merged.iter().map(Sc::runs).sum();
    let share = budget(&mut g, runs);
    sc.max_events = Some(share);
    for (_, s) in &mut sc.variants {
        if s.max_events.is_some() {
            s.max_events = Some(g.int(1, share));
        }
    }
    sc.yaml(&mut g, true).document()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_file() {
        for seed in [0, 1, 42, u64::MAX] {
            assert_eq!(scenario_yaml(seed), scenario_yaml(seed));
        }
        assert_ne!(scenario_yaml(1), scenario_yaml(2));
    }

    /// Every knob of the schema appears in the first few hundred files.
    #[test]
    fn the_generator_reaches_every_knob() {
        let all: String = (0..400).map(scenario_yaml).collect();
        let mut wanted: Vec<String> = [
            "name:",
            "description:",
            "seed:",
            "duration:",
            "warmup:",
            "max_events:",
            "replications:",
            "cpus:",
            "hz:",
            "version:",
            "patches:",
            "cwait_class:",
            "kswapd_nap:",
            "skip_below_min:",
            "wait_iff_congested:",
            "force_highorder:",
            "restart_wakes_kswapd:",
            "seek_min:",
            "seek_full:",
            "revolution:",
            "transfer_rate:",
            "capacity:",
            "queue_depth:",
            "latency:",
            "channels:",
            "overhead:",
            "service:",
            "mode: blk-mq",
            "mode: legacy",
            "nr_requests:",
            "elevator: cfq",
            "elevator: fifo",
            "plug:",
            "unplug_threshold:",
            "low_latency:",
            "slice_sync:",
            "slice_async:",
            "slice_idle:",
            "quantum:",
            "encrypt_rate:",
            "decrypt_rate:",
            "per_sector_cost:",
            "hop_cost:",
            "cost:",
            "engine: async",
            "engine: sync",
            "async_queue_limit:",
            "async_rate:",
            "unplug_after_submit:",
            "ram:",
            "min_free_kbytes:",
            "unreclaimable:",
            "mapped:",
            "page_cache:",
            "coalesce:",
            "scan_cost:",
            "page_pool:",
            "min_bio_pages:",
            "atomic:",
            "preset: iwlagn",
            "preset: custom",
            "bandwidth:",
            "buffer:",
            "orders:",
            "poisson:",
            "hold:",
            "burst:",
            "rwmixread:",
            "bs:",
            "size:",
            "offset:",
            "iodepth:",
            "arrivals: poisson",
            "arrivals: constant",
            "think:",
            "numjobs:",
            "sync:",
            "direct:",
            "io_size:",
            "io_limit:",
            "number_ios:",
            "startdelay:",
            "chunk:",
            "background:",
            "dirty_limit:",
            "variants:",
            "set: {}",
            "iops",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for list in [&PATCHES[..], &POLICIES[..]] {
            wanted.extend(list.iter().map(|s| s.to_string()));
        }
        for v in ["2.6.30", "2.6.31", "2.6.32", "2.6.33", "2.6.37"] {
            wanted.push(format!("\"{v}\""));
        }
        for k in [
            "hdd5400",
            "hdd7200",
            "nvme",
            "generic",
            "fio",
            "gitk",
            "buffered-writer",
        ] {
            wanted.push(format!("kind: {k}"));
        }
        for k in [
            "deterministic",
            "exponential",
            "uniform",
            "lognormal",
            "empirical",
        ] {
            wanted.push(format!("kind: {k}"));
        }
        for c in ["aes-2009", "aes-ni", "vaes", "cipher: null", "\"null\""] {
            wanted.push(c.to_string());
        }
        for rw in ["read", "write", "randread", "randwrite", "randrw"] {
            wanted.push(format!("rw: {rw}"));
        }
        let missing: Vec<&String> = wanted
            .iter()
            .filter(|w| !all.contains(w.as_str()))
            .collect();
        assert!(missing.is_empty(), "never generated: {missing:?}");
    }

    #[test]
    fn durations_and_sizes_are_written_exactly() {
        let mut g = G::new(3);
        for ns in [0u64, 1, 999, 1_000, 1_500_000, 2_000_000, 3_000_000_000] {
            for _ in 0..20 {
                let d = dur(&mut g, ns);
                let parsed = crate::scenario::units::parse_duration(&d.text)
                    .unwrap_or_else(|e| panic!("{}: {e:?}", d.text));
                assert_eq!(parsed.as_ns(), ns, "{}", d.text);
            }
        }
        for b in [0u64, 512, 1536, 4096, 1 << 20, 3 << 30, 5_000_000] {
            for _ in 0..20 {
                let s = size(&mut g, b);
                let parsed = crate::scenario::units::parse_size(&s.text)
                    .unwrap_or_else(|e| panic!("{}: {e:?}", s.text));
                assert_eq!(parsed, b, "{}", s.text);
            }
        }
    }
}
