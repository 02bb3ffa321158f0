//! `qsim check`: the resolved scenario printed with every default filled in and every derived
//! value shown (congestion thresholds, unplug delay, CFQ slices, mean service and crypto times).

use super::types::*;
use super::units::{format_bandwidth, format_bytes, trim_float};
use super::validate::{MAX_REQUEST_BYTES, SECTOR, mean_random_seek};
use crate::engine::SimDuration;
use std::fmt::Write as _;

/// Mean and standard deviation of a distribution, in seconds.
pub fn moments(d: &Distribution) -> (f64, f64) {
    (d.mean_secs(), d.variance_secs2().sqrt())
}

/// Mean device service time for one request of `bytes`, random (`random`) or sequential.
///
/// - HDD: random = mean seek (`min + (full − min)·8/15`) + half a revolution + bytes / rate;
///   sequential = bytes / rate (the head is already on the track and, streaming, on the sector).
/// - NVMe: latency + overhead + bytes / rate (the bottleneck alone is overhead + bytes / rate).
/// - Generic: the service distribution's mean, whatever the size.
pub fn mean_service(dev: &DeviceConfig, bytes: u64, random: bool) -> SimDuration {
    match dev {
        DeviceConfig::Hdd(h) => {
            let transfer = bytes as f64 / h.transfer_rate;
            let positioning = if random {
                mean_random_seek(h).as_secs_f64() + h.revolution.as_secs_f64() / 2.0
            } else {
                0.0
            };
            SimDuration::from_secs_f64(positioning + transfer)
        }
        DeviceConfig::Nvme(n) => SimDuration::from_secs_f64(
            n.latency.as_secs_f64() + n.overhead.as_secs_f64() + bytes as f64 / n.transfer_rate,
        ),
        DeviceConfig::Generic(g) => SimDuration::from_secs_f64(moments(&g.service).0),
    }
}

/// CPU cost of encrypting or decrypting one request of `bytes`: `bytes / rate + sectors ×
/// per_sector_cost` (zero transfer term for the null cipher).
pub fn crypto_cost(crypt: &CryptConfig, bytes: u64, encrypt: bool) -> SimDuration {
    let rate = if encrypt {
        crypt.encrypt_rate
    } else {
        crypt.decrypt_rate
    };
    let transfer = if rate.is_infinite() {
        0.0
    } else {
        bytes as f64 / rate
    };
    SimDuration::from_secs_f64(transfer) + crypt.per_sector_cost * bytes.div_ceil(SECTOR)
}

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

/// The resolved scenario with every default filled in and every derived value shown: what
/// `qsim check` prints.
pub fn describe(s: &Scenario) -> String {
    let mut out = String::new();
    let o = &mut out;
    let row = |o: &mut String, indent: usize, key: &str, value: &str| {
        let width = 24usize.saturating_sub(indent);
        let _ = writeln!(o, "{:indent$}{key:<width$}{value}", "");
    };
    row(o, 0, "scenario", &s.name);
    if !s.description.is_empty() {
        row(o, 0, "description", &s.description);
    }
    row(o, 0, "seed", &s.seed.to_string());
    row(
        o,
        0,
        "duration",
        &format!(
            "{} (warm-up {}, measured {})",
            s.duration,
            s.warmup,
            s.duration.saturating_sub(s.warmup)
        ),
    );
    row(o, 0, "max_events", &s.max_events.to_string());
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

    let _ = writeln!(o);
    describe_device(o, &s.device, &row);

    let _ = writeln!(o);
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

    let _ = writeln!(o);
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
    row(o, 2, "unplug_after_submit", on_off(cr.unplug_after_submit));
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

    let _ = writeln!(o);
    row(o, 0, "policies", &s.policies.join(", "));

    let _ = writeln!(o);
    row(o, 0, "workloads", &s.workloads.len().to_string());
    for w in &s.workloads {
        describe_workload(o, w, &row);
    }
    out
}

type Row<'a> = dyn Fn(&mut String, usize, &str, &str) + 'a;

fn describe_device(o: &mut String, dev: &DeviceConfig, row: &Row) {
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

fn describe_workload(o: &mut String, w: &WorkloadConfig, row: &Row) {
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
            row(o, 4, "sync writes", on_off(f.sync_writes));
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
        format_bytes(offset + size)
    )
}
