//! Scalar values as a scenario file spells them: durations, byte sizes, bandwidths and
//! operation rates, each drawn with one of the exact spellings the parser accepts.

use super::*;

/// A duration of `ns` nanoseconds, written in one of the exact spellings the parser accepts.
pub(super) fn dur(g: &mut G, ns: u64) -> Q<u64> {
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
pub(super) fn dur_in(g: &mut G, lo: u64, hi: u64) -> Q<u64> {
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
pub(super) fn size(g: &mut G, bytes: u64) -> Q<u64> {
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
pub(super) fn multiple(g: &mut G, unit: u64, lo: u64, hi: u64) -> u64 {
    g.log(lo / unit, hi / unit) * unit
}

/// What a rate counts: operations per second or bytes per second (a bandwidth).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RateV {
    Ops,
    Bw,
}

/// A bandwidth between `lo` and `hi` bytes/s, written with one of the byte units.
pub(super) fn bandwidth(g: &mut G, lo: f64, hi: f64) -> Q<RateV> {
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
pub(super) fn ops(g: &mut G, lo: u64, hi: u64) -> Q<RateV> {
    let n = g.log(lo, hi);
    let text = if g.chance(0.7) {
        format!("{n}/s")
    } else {
        format!("{n} iops")
    };
    q(RateV::Ops, text)
}
