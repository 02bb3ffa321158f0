//! `qsim check`: the resolved scenario printed with every default filled in and every derived
//! value shown (congestion thresholds, unplug delay, CFQ slices, mean service and crypto times,
//! watermarks and allocation floors), then each variant as the rows where it differs from the
//! base.
//!
//! The text is built as rows (indent, key, value) and rendered at the end, so that a variant can
//! be described by comparing its rows with the base's, keyed by their path of headings.

use super::types::*;
use super::units::{format_bandwidth, format_bytes, trim_float};
use super::validate::MAX_REQUEST_BYTES;
use crate::engine::SimDuration;
use crate::model::physics::{crypto_cost, mean_random_seek, mean_service, moments};
use crate::model::zone::Watermarks;
use std::fmt::Write as _;

fn fmt_secs(s: f64) -> String {
    SimDuration::from_secs_f64(s).to_string()
}

fn fmt_dist(d: &Distribution) -> String {
    let (mean, sd) = moments(d);
    let shape = match d {
        Distribution::Deterministic { value } => format!("constant {value}"),
        Distribution::Exponential { mean } => format!("exponential, mean {mean}"),
        Distribution::Uniform { low, high } => format!("uniform {low}..{high}"),
        Distribution::Lognormal { mean, stddev } => format!("lognormal, mean {mean}, sd {stddev}"),
        Distribution::Empirical { values } => format!("empirical, {} values", values.len()),
    };
    format!("{shape} (mean {}, sd {})", fmt_secs(mean), fmt_secs(sd))
}

fn on_off(b: bool) -> &'static str {
    if b { "on" } else { "off" }
}

/// One line of the description.
enum Line {
    /// `key` padded to the value column, then `value`.
    Row(usize, String, String),
    /// An empty line between sections.
    Blank,
}

/// The description being built.
#[derive(Default)]
struct Rows(Vec<Line>);

/// Column where values start.
const VALUE_COLUMN: usize = 24;

impl Rows {
    fn blank(&mut self) {
        self.0.push(Line::Blank);
    }

    fn render(&self) -> String {
        let mut out = String::new();
        for line in &self.0 {
            match line {
                Line::Blank => out.push('\n'),
                Line::Row(indent, key, value) => {
                    let width = VALUE_COLUMN.saturating_sub(*indent);
                    let mut key = key.clone();
                    if key.chars().count() >= width && !value.is_empty() {
                        key.push(' ');
                    }
                    let _ = writeln!(out, "{:indent$}{key:<width$}{value}", "");
                }
            }
        }
        out
    }

    /// Every row keyed by its path of headings (`kernel.version`), in order; repeats of a path
    /// get `#2`, `#3`, ….
    fn keyed(&self) -> Vec<(String, String)> {
        let mut stack: Vec<(usize, String)> = Vec::new();
        let mut out: Vec<(String, String)> = Vec::new();
        for line in &self.0 {
            let Line::Row(indent, key, value) = line else {
                continue;
            };
            while stack.last().is_some_and(|(i, _)| i >= indent) {
                stack.pop();
            }
            stack.push((*indent, key.clone()));
            let mut path = stack
                .iter()
                .map(|(_, k)| k.as_str())
                .collect::<Vec<_>>()
                .join(".");
            let repeats = out
                .iter()
                .filter(|(p, _)| p.split('#').next() == Some(&path))
                .count();
            if repeats > 0 {
                path = format!("{path}#{}", repeats + 1);
            }
            out.push((path, value.clone()));
        }
        out
    }
}

/// Appends a row.
fn row(o: &mut Rows, indent: usize, key: &str, value: &str) {
    o.0.push(Line::Row(indent, key.to_string(), value.to_string()));
}

/// The resolved scenario with every default filled in and every derived value shown: what
/// `qsim check` prints. Variants follow, each as the rows where it differs from the base.
pub fn describe(s: &Scenario) -> String {
    let mut rows = body(s);
    if !s.variants.is_empty() {
        let base = rows.keyed();
        let o = &mut rows;
        o.blank();
        row(o, 0, "variants", &s.variants.len().to_string());
        for v in &s.variants {
            let changes = diff(&base, &body(&v.scenario).keyed());
            if changes.is_empty() {
                row(o, 2, &v.name, "same as the base");
                continue;
            }
            row(o, 2, &v.name, "differs from the base in:");
            for change in changes {
                row(o, 4, "", &change);
            }
        }
    }
    rows.render()
}

/// `path: old → new` for every row that differs between `base` and `other`.
fn diff(base: &[(String, String)], other: &[(String, String)]) -> Vec<String> {
    let shown = |v: &str| {
        if v.is_empty() {
            "(heading)".to_string()
        } else {
            v.to_string()
        }
    };
    let mut out = Vec::new();
    for (path, value) in other {
        match base.iter().find(|(p, _)| p == path) {
            Some((_, old)) if old == value => {}
            Some((_, old)) => out.push(format!("{path}: {} → {}", shown(old), shown(value))),
            None => out.push(format!("{path}: (none) → {}", shown(value))),
        }
    }
    for (path, value) in base {
        if !other.iter().any(|(p, _)| p == path) {
            out.push(format!("{path}: {} → (none)", shown(value)));
        }
    }
    out
}

/// Everything but the variants.
fn body(s: &Scenario) -> Rows {
    let mut rows = Rows::default();
    let o = &mut rows;
    row(o, 0, "scenario", &s.name);
    if !s.description.is_empty() {
        row(o, 0, "description", &s.description);
    }
    row(o, 0, "seed", &s.seed.to_string());
    let early = if s.has_finite_jobs() {
        "; ends earlier once every finite job is done"
    } else {
        ""
    };
    row(
        o,
        0,
        "duration",
        &format!(
            "{} (warm-up {}, measured {}{early})",
            s.duration,
            s.warmup,
            s.duration.saturating_sub(s.warmup)
        ),
    );
    row(o, 0, "max_events", &s.max_events.to_string());
    row(o, 0, "replications", &s.replications.to_string());
    row(o, 0, "cpus", &s.cpus.to_string());
    let k = &s.kernel;
    row(
        o,
        0,
        "kernel",
        &format!(
            "HZ={} (jiffy {}, unplug delay {})",
            k.hz,
            k.jiffy(),
            k.unplug_delay()
        ),
    );
    describe_kernel(o, k);

    o.blank();
    describe_device(o, &s.device);

    o.blank();
    let b = &s.block;
    let mode = match b.mode {
        QueueMode::Legacy => "legacy",
        QueueMode::BlkMq => "blk-mq",
    };
    row(o, 0, "block", mode);
    row(o, 2, "nr_requests", &b.nr_requests.to_string());
    match b.mode {
        QueueMode::Legacy => row(
            o,
            2,
            "congestion",
            &format!(
                "on at {} requests per class, off below {} (hard cap {})",
                b.congestion_on(),
                b.congestion_off(),
                3 * b.nr_requests / 2
            ),
        ),
        QueueMode::BlkMq => row(
            o,
            2,
            "congestion",
            &format!(
                "never reported under blk-mq (legacy would turn it on at {}, off below {})",
                b.congestion_on(),
                b.congestion_off()
            ),
        ),
    }
    if b.plug {
        row(
            o,
            2,
            "plug",
            &format!(
                "on: unplug at {} queued requests or after {}",
                b.unplug_threshold,
                k.unplug_delay()
            ),
        );
    } else {
        row(o, 2, "plug", "off");
    }
    match b.elevator {
        Elevator::Fifo => row(o, 2, "elevator", "fifo"),
        Elevator::Cfq => {
            row(o, 2, "elevator", "cfq");
            row(
                o,
                4,
                "slices",
                &format!(
                    "sync {}, async {}, idle {}",
                    b.cfq_slice_sync, b.cfq_slice_async, b.cfq_slice_idle
                ),
            );
            row(o, 4, "quantum", &b.cfq_quantum.to_string());
            row(o, 4, "low_latency", on_off(b.low_latency));
        }
    }

    o.blank();
    let cr = &s.crypt;
    row(o, 0, "crypt", &cr.cipher);
    row(
        o,
        2,
        "rates",
        &format!(
            "encrypt {}, decrypt {}",
            format_bandwidth(cr.encrypt_rate),
            format_bandwidth(cr.decrypt_rate)
        ),
    );
    row(o, 2, "per_sector_cost", &cr.per_sector_cost.to_string());
    row(o, 2, "hop_cost", &cr.hop_cost.to_string());
    if let Some(d) = &cr.cost {
        let (m, sd) = moments(d);
        let (m, sd) = (
            SimDuration::from_secs_f64(m),
            SimDuration::from_secs_f64(sd),
        );
        row(
            o,
            2,
            "cost",
            &format!("per request from a distribution: mean {m}, sd {sd}"),
        );
    }
    match &cr.engine {
        CryptoEngine::Sync => row(o, 2, "engine", "sync"),
        CryptoEngine::Async { queue_limit, rate } => row(
            o,
            2,
            "engine",
            &format!(
                "async: {} at most {queue_limit} crypto requests queued",
                format_bandwidth(*rate)
            ),
        ),
    }
    let unplug = if cr.unplug_after_submit && k.patches.iter().any(|p| p == "dm-crypt-unplug") {
        "on (patch dm-crypt-unplug)".to_string()
    } else {
        on_off(cr.unplug_after_submit).to_string()
    };
    row(o, 2, "unplug_after_submit", &unplug);
    for bytes in [4096u64, MAX_REQUEST_BYTES] {
        row(
            o,
            2,
            &format!("cost {}", format_bytes(bytes)),
            &format!(
                "encrypt {}, decrypt {}",
                crypto_cost(cr, bytes, true),
                crypto_cost(cr, bytes, false)
            ),
        );
    }

    o.blank();
    row(o, 0, "policies", &s.policies.join(", "));

    o.blank();
    row(o, 0, "workloads", &s.workloads.len().to_string());
    for w in &s.workloads {
        describe_workload(o, w);
    }

    if let Some(m) = &s.memory {
        o.blank();
        describe_memory(o, m);
    }
    rows
}

/// The kernel version, patches and each resolved switch with where its value came from.
fn describe_kernel(o: &mut Rows, k: &KernelConfig) {
    row(o, 2, "version", k.version.name());
    row(
        o,
        2,
        "patches",
        &if k.patches.is_empty() {
            "none".to_string()
        } else {
            k.patches.join(", ")
        },
    );
    let d = k.version.defaults();
    let vm = &k.vm;
    let patched = |p: &str| k.patches.iter().any(|q| q == p);
    let origin = |value: bool, default: bool, patch: Option<&str>| -> String {
        let from = if value == default {
            "default".to_string()
        } else if value && patch.is_some_and(patched) {
            format!("patch {}", patch.unwrap_or_default())
        } else {
            "set".to_string()
        };
        format!("{} ({from})", on_off(value))
    };
    let class = |c: CwaitClass| match c {
        CwaitClass::Sync => "sync",
        CwaitClass::Async => "async",
    };
    row(
        o,
        2,
        "cwait_class",
        &format!(
            "{} ({})",
            class(vm.cwait_class),
            if vm.cwait_class == d.cwait_class {
                "default"
            } else {
                "set"
            }
        ),
    );
    row(
        o,
        2,
        "kswapd_nap",
        &origin(vm.kswapd_nap, d.kswapd_nap, None),
    );
    row(
        o,
        2,
        "skip_below_min",
        &origin(
            vm.skip_below_min,
            d.skip_below_min,
            Some("kswapd-stay-awake-when-min"),
        ),
    );
    row(
        o,
        2,
        "wait_iff_congested",
        &origin(vm.wait_iff_congested, d.wait_iff_congested, None),
    );
    row(
        o,
        2,
        "force_highorder",
        &origin(
            vm.force_highorder,
            d.force_highorder,
            Some("force-highorder"),
        ),
    );
    row(
        o,
        2,
        "restart_wakes_kswapd",
        &origin(vm.restart_wakes_kswapd, d.restart_wakes_kswapd, None),
    );
}

/// GFP_ATOMIC's order-0 floor in pages: min with HIGH (halve) then HARDER (take a quarter).
pub fn atomic_floor(min: u64) -> u64 {
    let need = min - min / 2;
    need - need / 4
}

/// A mempool's first try, order 0: min with HARDER only (0.75·min).
pub fn mempool_floor(min: u64) -> u64 {
    min - min / 4
}

/// The memory section with its derived watermarks, floors and starting free pages.
fn describe_memory(o: &mut Rows, m: &MemoryConfig) {
    const PAGE: u64 = 4096;
    let marks = Watermarks::v2_6_32(m.min_free_kbytes);
    let kernel_mfk = crate::model::zone::min_free_kbytes(
        m.ram / 1024,
        crate::model::zone::WatermarkKernel::V2_6_32,
    );
    row(
        o,
        0,
        "memory",
        &format!(
            "{} ({} pages), one lowmem zone",
            format_bytes(m.ram),
            m.ram / PAGE
        ),
    );
    row(
        o,
        2,
        "min_free_kbytes",
        &if m.min_free_kbytes == kernel_mfk {
            format!("{} (the kernel's value for this ram)", m.min_free_kbytes)
        } else {
            format!(
                "{} (set; the kernel's would be {kernel_mfk})",
                m.min_free_kbytes
            )
        },
    );
    row(
        o,
        2,
        "watermarks",
        &format!(
            "min {}, low {}, high {} pages",
            marks.min, marks.low, marks.high
        ),
    );
    row(
        o,
        2,
        "floors",
        &format!(
            "GFP_ATOMIC order-0 {} pages, mempool first try {} pages",
            atomic_floor(marks.min),
            mempool_floor(marks.min)
        ),
    );
    let free = (m.ram - m.unreclaimable - m.page_cache) / PAGE;
    row(
        o,
        2,
        "start",
        &format!(
            "{} unreclaimable ({} mapped on the LRU), {} page cache ({} pages), {free} pages \
             free ({}·min)",
            format_bytes(m.unreclaimable),
            format_bytes(m.mapped),
            format_bytes(m.page_cache),
            m.page_cache / PAGE,
            trim_float(free as f64 / marks.min.max(1) as f64, 1)
        ),
    );
    row(
        o,
        2,
        "coalesce",
        &format!(
            "{} (probability that a freed block merges with its buddy)",
            trim_float(m.coalesce, 3)
        ),
    );
    row(
        o,
        2,
        "scan_cost",
        &format!("{} per page scanned", m.scan_cost),
    );
    row(
        o,
        2,
        "page_pool",
        &format!(
            "{} pages; a write clone waits for its first {} bounce pages",
            m.page_pool, m.min_bio_pages
        ),
    );
    row(
        o,
        2,
        "atomic",
        &match m.atomic.len() {
            0 => "none".to_string(),
            1 => "1 stream".to_string(),
            n => format!("{n} streams"),
        },
    );
    for a in &m.atomic {
        row(
            o,
            4,
            &a.name,
            &format!(
                "{}: {}/s, {}",
                a.preset,
                trim_float(a.rate, 3),
                if a.poisson {
                    "poisson"
                } else {
                    "evenly spaced"
                }
            ),
        );
        let orders: Vec<String> = a
            .orders
            .iter()
            .enumerate()
            .filter(|(_, p)| **p > 0.0)
            .map(|(k, p)| format!("{k}: {}%", trim_float(p * 100.0, 1)))
            .collect();
        row(o, 6, "orders", &orders.join(", "));
        row(o, 6, "hold", &fmt_dist(&a.hold));
        if a.burst > 1 {
            row(o, 6, "burst", &format!("{} buffers per arrival", a.burst));
        }
        let pages: f64 = a
            .orders
            .iter()
            .enumerate()
            .map(|(k, p)| p * f64::from(1u32 << k))
            .sum();
        let held = a.rate * f64::from(a.burst) * a.hold.mean_secs();
        row(
            o,
            6,
            "held",
            &format!(
                "≈ {} buffers, {} pages on average (rate × mean hold)",
                trim_float(held, 2),
                trim_float(held * pages, 1)
            ),
        );
    }
}

fn describe_device(o: &mut Rows, dev: &DeviceConfig) {
    match dev {
        DeviceConfig::Hdd(h) => {
            row(o, 0, "device", &format!("hdd, preset {}", h.preset));
            row(
                o,
                2,
                "seek",
                &format!(
                    "{} track-to-track, {} full stroke, {} mean over random distances",
                    h.seek_min,
                    h.seek_full,
                    mean_random_seek(h)
                ),
            );
            row(
                o,
                2,
                "revolution",
                &format!(
                    "{} (mean rotational delay {})",
                    h.revolution,
                    SimDuration::from_ns(h.revolution.as_ns() / 2)
                ),
            );
            row(o, 2, "transfer_rate", &format_bandwidth(h.transfer_rate));
            row(o, 2, "capacity", &format_bytes(h.capacity));
            row(o, 2, "queue_depth", &h.queue_depth.to_string());
        }
        DeviceConfig::Nvme(n) => {
            row(o, 0, "device", "nvme");
            row(o, 2, "latency", &n.latency.to_string());
            row(o, 2, "channels", &n.channels.to_string());
            row(o, 2, "overhead", &n.overhead.to_string());
            row(o, 2, "transfer_rate", &format_bandwidth(n.transfer_rate));
            row(o, 2, "queue_depth", &n.queue_depth.to_string());
            let bottleneck = n.overhead.as_secs_f64() + 4096.0 / n.transfer_rate;
            row(
                o,
                2,
                "4KiB capacity",
                &format!(
                    "{} IOPS ({} per request in the bottleneck, x{} channels)",
                    trim_float(f64::from(n.channels) / bottleneck, 0),
                    fmt_secs(bottleneck),
                    n.channels
                ),
            );
        }
        DeviceConfig::Generic(g) => {
            row(o, 0, "device", "generic");
            row(o, 2, "service", &fmt_dist(&g.service));
            row(o, 2, "channels", &g.channels.to_string());
            row(o, 2, "queue_depth", &g.queue_depth.to_string());
        }
    }
    row(
        o,
        2,
        "mean service",
        &format!(
            "4KiB random read {}, 512KiB sequential write {}",
            mean_service(dev, 4096, true),
            mean_service(dev, MAX_REQUEST_BYTES, false)
        ),
    );
}

/// What a fio job does before it stops: `unlimited (runs until the run ends)`, or its
/// `io_size` and `number_ios` per copy.
fn amount_text(f: &FioJob) -> String {
    let limits: Vec<String> = [
        f.io_size.map(|b| format!("io_size {}", format_bytes(b))),
        f.number_ios.map(|n| format!("number_ios {n}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if limits.is_empty() {
        return "unlimited (runs until the run ends)".to_string();
    }
    let copies = if f.numjobs > 1 { " per copy" } else { "" };
    let first = if limits.len() > 1 {
        ", whichever comes first"
    } else {
        ""
    };
    format!(
        "{}{copies}{first}, then it stops; the run ends once every finite job is done",
        limits.join(" or ")
    )
}

fn describe_workload(o: &mut Rows, w: &WorkloadConfig) {
    match &w.kind {
        WorkloadKind::Fio(f) => {
            let rw = match f.rw {
                RwKind::Read => "read".to_string(),
                RwKind::Write => "write".to_string(),
                RwKind::RandRead => "randread".to_string(),
                RwKind::RandWrite => "randwrite".to_string(),
                RwKind::RandRw => format!("randrw, {}% reads", f.rwmixread),
            };
            row(
                o,
                2,
                &w.name,
                &format!("fio: {rw}, bs {}", format_bytes(f.bs)),
            );
            match &f.arrivals {
                Arrivals::Closed { iodepth, think } => {
                    row(o, 4, "loop", &format!("closed, iodepth {iodepth}"));
                    row(
                        o,
                        4,
                        "think",
                        &think
                            .as_ref()
                            .map(fmt_dist)
                            .unwrap_or_else(|| "none".into()),
                    );
                }
                Arrivals::Open {
                    rate,
                    poisson,
                    iodepth,
                } => {
                    row(
                        o,
                        4,
                        "loop",
                        &format!(
                            "open, {} IOPS ({}) {}, at most {iodepth} in flight",
                            trim_float(*rate, 3),
                            format_bandwidth(rate * f.bs as f64),
                            if *poisson { "poisson" } else { "constant gaps" }
                        ),
                    );
                }
            }
            row(o, 4, "numjobs", &f.numjobs.to_string());
            row(o, 4, "amount", &amount_text(f));
            row(o, 4, "startdelay", &f.startdelay.to_string());
            row(o, 4, "sync writes", on_off(f.sync_writes));
            row(
                o,
                4,
                "direct",
                if f.direct {
                    "on (reads bypass the page cache)"
                } else {
                    "off (buffered: with memory:, reads allocate page cache)"
                },
            );
            row(o, 4, "region", &region_text(f.offset, f.size));
        }
        WorkloadKind::BufferedWriter(b) => {
            row(
                o,
                2,
                &w.name,
                &format!("buffered-writer: {}", format_bandwidth(b.rate)),
            );
            row(o, 4, "chunk", &format_bytes(b.chunk));
            row(
                o,
                4,
                "dirty",
                &format!(
                    "flusher starts at {}, writer throttled above {}",
                    format_bytes(b.background_bytes),
                    format_bytes(b.dirty_limit_bytes)
                ),
            );
            row(o, 4, "region", &region_text(b.offset, b.size));
        }
    }
}

fn region_text(offset: u64, size: u64) -> String {
    format!(
        "offset {}, size {} (ends at {})",
        format_bytes(offset),
        format_bytes(size),
        // Validation keeps regions inside 1 EiB; a hand-built config might not.
        offset
            .checked_add(size)
            .map_or_else(|| "past 2^64 bytes".to_string(), format_bytes)
    )
}

#[cfg(test)]
mod tests {
    use super::super::load_str;
    use super::*;

    fn ok(text: &str) -> Scenario {
        load_str("t.yaml", text).unwrap_or_else(|e| panic!("{e}"))
    }

    const BASE: &str = "device: { kind: hdd5400 }\nworkloads:\n  - kind: fio\n";
    const MEM: &str =
        "device: { kind: hdd5400 }\nworkloads:\n  - kind: gitk\nmemory:\n  ram: 2GiB\n";

    #[test]
    fn describe_shows_kernel_memory_and_variants() {
        let text = describe(&ok(&format!(
            "{MEM}  atomic:\n    - {{ name: rx, preset: iwlagn, rate: 500/s }}\nkernel: {{ patches: [dm-crypt-unplug, force-highorder] }}\nvariants:\n  - name: \"2.6.37\"\n    set: {{ kernel: {{ version: \"2.6.37\" }} }}\n"
        )));
        for needle in [
            "  version               2.6.32",
            "  patches               dm-crypt-unplug, force-highorder",
            "  force_highorder       on (patch force-highorder)",
            "  skip_below_min        off (default)",
            "  unplug_after_submit   on (patch dm-crypt-unplug)",
            "min_free_kbytes       5792 (the kernel's value for this ram)",
            "watermarks            min 1448, low 1810, high 2172 pages",
            "GFP_ATOMIC order-0 543 pages, mempool first try 1086 pages",
            "23168 pages free (16·min)",
            "    rx                  iwlagn: 500/s, poisson",
            "      orders            2: 100%",
            "      held              ≈ 1 buffers, 4 pages",
            "variants                1",
            "  2.6.37                differs from the base in:",
            "kernel.version: 2.6.32 → 2.6.37",
            "kernel.skip_below_min: off (default) → on (default)",
            "direct              off",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
        }
        assert_eq!(atomic_floor(1448), 543);
        assert_eq!(mempool_floor(1448), 1086);
        let text = describe(&ok(BASE));
        assert!(
            !text.contains("\nmemory ") && !text.contains("\nvariants "),
            "{text}"
        );
    }
}
