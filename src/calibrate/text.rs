//! The machine file calibration writes, the description of the fit and the residual table.

use super::fiojson::DirStats;
use super::fit::{Jobs, Role};
use super::{Fitted, Host, InputError, Named, simulate};
use std::fmt::Write as _;

/// The machine file: a header saying how it was produced, then `cpus`, `kernel`, `device` and
/// `crypt` (the parts the inputs gave). Durations in whole nanoseconds, rates in bytes per
/// second, so the file reads back to the fitted values.
pub(super) fn machine_text(host: &Host, fitted: &Fitted, fio: &[Named]) -> String {
    let mut t = String::new();
    t.push_str("# qsim machine file, written by `qsim calibrate` (docs/calibrate.md).\n");
    if !fio.is_empty() {
        let files: Vec<&str> = fio.iter().map(|(n, _)| n.as_str()).collect();
        let _ = writeln!(t, "# device: fitted to fio JSON {}", files.join(", "));
    }
    for s in &host.sources {
        let _ = writeln!(t, "# {s}");
    }
    t.push_str("# Use it as `machine: FILE` in a scenario or `qsim run job.fio --machine FILE`.\n");
    if let Some(c) = host.cpus {
        let _ = writeln!(t, "cpus: {c}");
    }
    if let Some((_, v)) = &host.kernel {
        let _ = writeln!(t, "kernel:\n  version: \"{}\"", v.name());
    }
    t.push_str(&device_text(fitted));
    if let Some(c) = &host.cipher {
        let _ = writeln!(
            t,
            "crypt:\n  encrypt_rate: {:.0}B/s\n  decrypt_rate: {:.0}B/s",
            c.encrypt, c.decrypt
        );
    }
    t
}

/// The `device:` section.
fn device_text(fitted: &Fitted) -> String {
    let ns = |x: f64| format!("{}ns", x.round().max(0.0) as u64);
    match fitted {
        Fitted::Flash {
            kind,
            f,
            queue_depth,
            ..
        } => format!(
            "device:\n  kind: {kind}\n  latency: {}\n  channels: 1\n  overhead: {}\n  \
             transfer_rate: {:.0}B/s\n  queue_depth: {queue_depth}\n",
            ns(f.latency),
            ns(f.overhead()),
            f.rate()
        ),
        Fitted::Disk {
            kind,
            s,
            capacity,
            region,
            queue_depth,
        } => format!(
            "device:\n  kind: {kind}\n  seek_min: {}\n  seek_full: {}\n  revolution: {}\n  \
             transfer_rate: {:.0}B/s\n  capacity: {capacity}B\n  queue_depth: {queue_depth}\n",
            ns(s.seek_min),
            ns(seek_full(s, *capacity, *region)),
            ns(s.revolution),
            s.rate
        ),
    }
}

/// The full-stroke seek: the span fitted over the random job's region, scaled to the whole
/// disk (the seek grows with the square root of the distance).
pub(super) fn seek_full(s: &super::Spinning, capacity: u64, region: u64) -> f64 {
    let scale = (capacity as f64 / region.max(1) as f64).sqrt();
    s.seek_min + s.seek_span * scale
}

/// What was fitted and how, parameter by parameter, within 80 columns.
pub(super) fn describe(fitted: &Fitted, host: &Host) -> String {
    let mut t = String::new();
    match fitted {
        Fitted::Flash {
            kind,
            f,
            queue_depth,
            saturated,
        } => describe_flash(&mut t, kind, f, *queue_depth, *saturated),
        Fitted::Disk {
            kind,
            s,
            capacity,
            region,
            queue_depth,
        } => describe_disk(&mut t, kind, s, *capacity, *region, *queue_depth),
    }
    t.push_str("  (each corrected three times against the model simulated on the same jobs)\n");
    if let Some(c) = &host.cipher {
        let _ = writeln!(
            t,
            "Cipher: {} {}b, one core: encrypt {:.1} MiB/s, decrypt {:.1} MiB/s",
            super::CIPHER,
            host.key_bits,
            c.encrypt / 1048576.0,
            c.decrypt / 1048576.0
        );
    } else {
        t.push_str(
            "Cipher: not measured (no --cryptsetup): the machine file gives no rates, so the \
             scenario's cipher applies (a job file's or trace's default machine: aes-2009, \
             60 MB/s, a 2009 laptop's)\n",
        );
    }
    for (what, v) in [("CPUs", host.cpus.map(|c| c.to_string()))] {
        if let Some(v) = v {
            let _ = writeln!(t, "{what}: {v}");
        }
    }
    if let Some((release, v)) = &host.kernel {
        let _ = writeln!(
            t,
            "Kernel: {release}, modelled as {} (the newest one modelled not newer)",
            v.name()
        );
    }
    within_80(&t)
}

/// Where a parameter row's explanation starts: two spaces, the name, the value and its unit.
const EXPLAINED_AT: usize = 37;

/// `t` within 80 columns, as every text qsim prints: a parameter row's explanation continues
/// under itself, any other long line as [`crate::textfit::fit`] wraps it.
fn within_80(t: &str) -> String {
    let mut out = String::with_capacity(t.len() + 64);
    for line in t.lines() {
        let row = line.starts_with("  ") && !line[2..].starts_with(' ');
        let wide = line.chars().count() > crate::textfit::WIDTH;
        let text = if row && wide {
            crate::textfit::wrap(line, crate::textfit::WIDTH, EXPLAINED_AT).join("\n")
        } else {
            crate::textfit::fit(line)
        };
        out.push_str(&text);
        out.push('\n');
    }
    out
}

/// The flash fit's rows.
fn describe_flash(t: &mut String, kind: &str, f: &super::Flash, queue_depth: u32, saturated: bool) {
    let _ = writeln!(
        t,
        "Device: {kind} (the NVMe model; QD1 reads under 1ms are flash, and a \
                 sequential rate of {:.0} MB/s fits {kind}'s interface)",
        f.rate() / 1e6
    );
    row(
        t,
        "latency",
        f.latency,
        "QD1 mean less the 4KiB bottleneck time",
    );
    row(t, "overhead", f.overhead(), "1/(deep IOPS), less 4KiB/rate");
    let _ = writeln!(
        t,
        "  {:<14}{:>14.3} MB/s  1020KiB / (1MiB − 4KiB bottleneck times)",
        "transfer_rate",
        f.rate() / 1e6
    );
    let _ = writeln!(
        t,
        "  {:<14}{:>14}       assumed (not separable from overhead)",
        "channels", 1
    );
    let _ = writeln!(
        t,
        "  {:<14}{queue_depth:>14}       {kind}'s (not measured)",
        "queue_depth"
    );
    if !saturated {
        t.push_str(
            "  note: the deep random job's latency was under 1.5 × the QD1 one, so it \
                     did not keep the device busy: overhead is an upper bound\n",
        );
    }
}

/// The spinning disk's rows.
fn describe_disk(
    t: &mut String,
    kind: &str,
    s: &super::Spinning,
    capacity: u64,
    region: u64,
    queue_depth: u32,
) {
    let _ = writeln!(
        t,
        "Device: {kind} (the HDD model; QD1 reads over 1ms are a spinning disk, and \
                 one revolution of {:.3}ms is nearest {kind}'s speed)",
        s.revolution / 1e6
    );
    row(
        t,
        "seek_min",
        s.seek_min,
        "QD1 mean less 8/15 of the seek span, half a revolution and the transfer",
    );
    row(
        t,
        "seek_full",
        seek_full(s, capacity, region),
        "seek_min + span; the span from the QD1 variance less the rotation's",
    );
    row(
        t,
        "revolution",
        s.revolution,
        "the QD1 percentiles' rotational part, snapped to the nearest standard spindle speed",
    );
    let _ = writeln!(
        t,
        "  {:<14}{:>14.3} MB/s  the sequential read's bandwidth",
        "transfer_rate",
        s.rate / 1e6
    );
    let _ = writeln!(
        t,
        "  {:<14}{capacity:>14} B     given (--capacity or the job's size)",
        "capacity"
    );
    let _ = writeln!(
        t,
        "  {:<14}{queue_depth:>14}       {kind}'s (not measured)",
        "queue_depth"
    );
}

/// One parameter row of a duration.
fn row(t: &mut String, name: &str, ns: f64, how: &str) {
    let _ = writeln!(t, "  {name:<14}{:>14.3} us    {how}", ns / 1e3);
}

/// The residual table: every job's IOPS, mean latency and p99 completion latency, measured
/// and simulated on the fitted machine, and the relative error.
pub(super) fn residuals(
    fitted: &Fitted,
    host: &Host,
    jobs: &Jobs,
    crypt: bool,
    out: &mut String,
) -> Result<(), InputError> {
    let _ = writeln!(
        out,
        "  {:<12} {:>14} {:>14} {:>9}",
        "metric", "measured", "predicted", "error"
    );
    for role in Role::ALL {
        let (Some(job), Some(m)) = (jobs.get(role), jobs.stats(role)) else {
            continue;
        };
        let Some(p) = simulate(fitted, host, jobs, role, crypt)? else {
            continue;
        };
        let _ = writeln!(out, "  {} ({}:{})", job.name, job.file, job.line);
        for (metric, mv, pv, unit) in metrics(m, &p) {
            let err = if mv > 0.0 {
                (pv - mv) / mv * 100.0
            } else {
                0.0
            };
            let _ = writeln!(
                out,
                "    {:<10} {:>14} {:>14} {:>+8.1}%",
                metric,
                format!("{mv:.1}{unit}"),
                format!("{pv:.1}{unit}"),
                err
            );
        }
        if role.writes() {
            out.push_str("    (the model serves a write as it serves a read of the same size)\n");
        }
    }
    Ok(())
}

/// The compared figures of one job: IOPS, mean latency and p99 completion latency (µs).
fn metrics(m: &DirStats, p: &DirStats) -> Vec<(&'static str, f64, f64, &'static str)> {
    let mut v = vec![
        ("IOPS", m.iops, p.iops, ""),
        ("mean lat", m.lat_mean / 1e3, p.lat_mean / 1e3, "us"),
    ];
    let p99 = |d: &DirStats| {
        d.clat_pct
            .iter()
            .find(|(q, _)| (*q - 99.0).abs() < 1e-9)
            .map(|x| x.1)
    };
    if let (Some(a), Some(b)) = (p99(m), p99(p)) {
        v.push(("p99 clat", a / 1e3, b / 1e3, "us"));
    }
    v
}
