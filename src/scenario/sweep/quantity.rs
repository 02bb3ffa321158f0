//! The numbers a sweep spaces and a sensitivity study steps: a plain number, a size, a rate or
//! a duration, read with the scenario's own unit parsers ([`crate::scenario::units`]) and
//! written back in the unit they were given in, so that a generated point reads as the user
//! wrote its ends (`85.71MB/s` between `60MB/s` and `1432MiB/s`).

use crate::scenario::units::{self, Rate};

/// What kind of number a value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A plain number (`0.02`, `128`).
    Number,
    /// A duration, counted in ns.
    Duration,
    /// A bandwidth, bytes per second.
    Bandwidth,
    /// An operation rate (`2000/s`, `20 iops`), per second.
    Ops,
    /// A size, bytes.
    Size,
}

/// A value read as a number: its kind, its value in the kind's base unit (ns, bytes, bytes/s,
/// 1/s), and the unit it was written in with that unit's size in the base unit.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Quantity {
    /// What it measures.
    pub kind: Kind,
    /// Its value in the kind's base unit.
    pub base: f64,
    /// The unit as written (`MB/s`, `GiB`, `ms`; empty for a plain number or bytes).
    pub unit: String,
    /// One `unit` in the base unit.
    pub scale: f64,
    /// Whether it was written as a whole number without a unit (`128`): such a knob stays whole.
    pub integer: bool,
}

/// `text` read as a number of some kind, or `None` when it is none (a name such as `aes-ni`).
pub(crate) fn parse(text: &str) -> Option<Quantity> {
    let t = text.trim();
    if let Ok(v) = t.parse::<f64>()
        && v.is_finite()
    {
        let integer = t
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'-' || b == b'+');
        return Some(Quantity {
            kind: Kind::Number,
            base: v,
            unit: String::new(),
            scale: 1.0,
            integer,
        });
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+')))
        .filter(|&i| i > 0)?;
    let unit = t[split..].trim().to_string();
    let one = format!("1{unit}");
    let q = |kind, base: f64, scale: f64| Quantity {
        kind,
        base,
        unit: unit.clone(),
        scale,
        integer: false,
    };
    if let (Ok(d), Ok(u)) = (units::parse_duration(t), units::parse_duration(&one)) {
        return Some(q(Kind::Duration, d.as_ns() as f64, u.as_ns() as f64));
    }
    match (units::parse_rate(t), units::parse_rate(&one)) {
        (Ok(Rate::BytesPerSec(b)), Ok(Rate::BytesPerSec(u))) => {
            return Some(q(Kind::Bandwidth, b, u));
        }
        (Ok(Rate::OpsPerSec(o)), Ok(Rate::OpsPerSec(u))) => return Some(q(Kind::Ops, o, u)),
        _ => {}
    }
    match (units::parse_size(t), units::parse_size(&one)) {
        (Ok(b), Ok(u)) => Some(q(Kind::Size, b as f64, u as f64)),
        _ => None,
    }
}

/// The bytes a generated size is rounded to: one 4 KiB page, the granularity of every size the
/// model takes (RAM, cache, request and region sizes are whole pages or sectors).
pub(crate) const SIZE_GRAIN: f64 = 4096.0;

/// Writes `base` (in the base unit of `like`'s kind) as `like` was written: in its unit with
/// four significant digits; a whole number stays whole (rounded); a size is rounded to
/// [`SIZE_GRAIN`] and written exactly ([`units::format_bytes`]), since a size must be a whole
/// number of bytes.
pub(crate) fn format_like(base: f64, like: &Quantity) -> String {
    match like.kind {
        Kind::Number if like.integer => format!("{}", base.round() as i64),
        Kind::Size => {
            let bytes = ((base / SIZE_GRAIN).round() * SIZE_GRAIN).max(SIZE_GRAIN);
            units::format_bytes(bytes as u64)
        }
        _ => format!("{}{}", significant(base / like.scale, 4), like.unit),
    }
}

/// `v` with `digits` significant digits, trailing zeros dropped (`85.714` → `85.71`).
pub(crate) fn significant(v: f64, digits: i32) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let magnitude = v.abs().log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).max(0) as usize;
    units::trim_float(v, decimals)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_kind_with_its_unit() {
        let q = parse("60MB/s").unwrap();
        assert_eq!(
            (q.kind, q.base, q.unit.as_str()),
            (Kind::Bandwidth, 60e6, "MB/s")
        );
        assert_eq!(q.base / q.scale, 60.0);
        let q = parse("1432MiB/s").unwrap();
        assert_eq!(q.base, 1432.0 * 1048576.0);
        assert_eq!(parse("1.5ms").unwrap().base, 1.5e6);
        assert_eq!(parse("2GiB").unwrap().kind, Kind::Size);
        assert_eq!(parse("20/s").unwrap().kind, Kind::Ops);
        let n = parse("128").unwrap();
        assert!(n.integer && n.kind == Kind::Number);
        assert!(!parse("0.02").unwrap().integer);
        assert_eq!(parse("aes-ni"), None);
        assert_eq!(parse("2009aes"), None);
    }

    #[test]
    fn writes_back_in_the_unit_given() {
        let like = parse("60MB/s").unwrap();
        assert_eq!(format_like(85.714e6, &like), "85.71MB/s");
        assert_eq!(format_like(1501.56e6, &like), "1502MB/s");
        assert_eq!(format_like(101.6, &parse("128").unwrap()), "102");
        let size = parse("2GiB").unwrap();
        assert_eq!(format_like(1.5 * 1073741824.0, &size), "1536MiB");
        assert_eq!(format_like(5000.0, &size), "4KiB", "whole pages");
        assert_eq!(format_like(8e6, &parse("10ms").unwrap()), "8ms");
        assert_eq!(significant(0.016, 4), "0.016");
    }
}
