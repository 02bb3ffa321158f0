//! Quantities with units as scenario files write them: sizes (`4k`, `1MiB`), durations (`100us`,
//! `1.5ms`) and rates (`2000/s`, `60MB/s`).
//!
//! Each quantity has a parser that returns a precise [`UnitError`] (the bad value echoed, the
//! accepted units listed, a hint with examples) and a serde `Deserialize` impl built on a visitor,
//! so YAML integers and strings both reach the parser and every failure keeps its line and column.
//!
//! Conventions, chosen so that a fio user reads them without surprise:
//! - **Sizes.** IEC and SI prefixes mean what they say (`4KiB` = 4096, `4kB` = `4KB` = 4000), and a
//!   bare prefix letter is a power of two (`4k` = `4K` = 4096, `1G` = 2³⁰), as `bs=4k` means to
//!   everyone. A fraction is allowed when the result is a whole number of bytes (`1.5KiB` = 1536).
//!   An integer is bytes.
//! - **Durations.** `ns`, `us` (or `µs`), `ms`, `s`, `min`, `h`; fractions round to the nearest
//!   nanosecond. A bare number is refused ("durations need a unit"), except `0`, which needs none.
//!   `m` is refused too: it reads as minutes to some and milli to others.
//! - **Rates.** A byte-unit before `/s` makes a bandwidth (`60MB/s`, `512KiB/s`, `100B/s`); no unit
//!   makes an operation rate (`2000/s`, or `2000 iops`). A bare prefix (`2k/s`) is refused as
//!   ambiguous between 2000 operations and 2 KiB per second. Rates must be positive.

use crate::engine::SimDuration;
use serde::de::{self, Deserialize, Deserializer, Visitor};
use std::fmt;

/// Separates message and hint inside a serde custom error message, so that
/// [`split_hint`] can recover the hint after serde-saphyr has added the location.
pub(crate) const HINT_SEPARATOR: char = '\u{1f}';

/// Hint shown with every size error.
pub const SIZE_HINT: &str = "a size is bytes, or a number and a unit: 4096, 4k (= 4KiB = 4096), 4kB (= 4000), 1MiB, 2GiB, 1G";
/// Hint shown with every duration error.
pub const DURATION_HINT: &str =
    "a duration is a number and a unit: 250ns, 100us, 1.5ms, 20ms, 60s, 2min";
/// Hint shown with every rate error.
pub const RATE_HINT: &str = "a rate is a number and a unit: 2000/s or 2000 iops (operations), 60MB/s, 60MiB/s, 512KiB/s (bytes)";

/// The longest duration a scenario (or `--duration`) may give for anything: 100 days. Runs of
/// 1000 hours fit; every sum and product of durations the model and `qsim check` make (a
/// per-sector cost times 1024 sectors, a start delay plus a run) stays far inside the 584
/// years that 64 bits of nanoseconds hold.
pub const MAX_DURATION: SimDuration = SimDuration::from_secs(100 * 24 * 3600);

/// Size units, in the order the error message lists them, with their multipliers.
const SIZE_UNITS: &[(&str, u64)] = &[
    ("B", 1),
    ("k", 1 << 10),
    ("K", 1 << 10),
    ("M", 1 << 20),
    ("G", 1 << 30),
    ("T", 1 << 40),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
    ("kB", 1_000),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
];
/// Size units as listed in messages.
const SIZE_UNIT_LIST: &str = "B, k, M, G, T, KiB, MiB, GiB, TiB, kB, MB, GB, TB";

/// Duration units with their length in nanoseconds.
const DURATION_UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("μs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("min", 60_000_000_000),
    ("h", 3_600_000_000_000),
];
/// Duration units as listed in messages.
const DURATION_UNIT_LIST: &str = "ns, us, ms, s, min, h";

/// Byte units a bandwidth may use before `/s` (the bare prefixes are excluded: ambiguous).
const RATE_BYTE_UNITS: &[(&str, u64)] = &[
    ("B", 1),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
    ("kB", 1_000),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
];

/// A value that failed to parse, with a message that echoes it and a hint with examples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitError {
    /// What is wrong, quoting the value.
    pub message: String,
    /// How to write it instead.
    pub hint: String,
}

impl UnitError {
    fn new(message: String, hint: &str) -> Self {
        UnitError {
            message,
            hint: hint.to_string(),
        }
    }

    /// Converts into a serde error that carries the hint behind [`HINT_SEPARATOR`].
    pub(crate) fn into_serde<E: de::Error>(self) -> E {
        E::custom(format!("{}{HINT_SEPARATOR}{}", self.message, self.hint))
    }
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (hint: {})", self.message, self.hint)
    }
}

impl std::error::Error for UnitError {}

/// Splits a serde custom message produced by [`UnitError::into_serde`] into message and hint.
pub(crate) fn split_hint(msg: &str) -> (&str, Option<&str>) {
    match msg.split_once(HINT_SEPARATOR) {
        Some((m, h)) => (m, Some(h)),
        None => (msg, None),
    }
}

/// A decimal number as written, kept exact: `mantissa / 10^scale_digits`, with its sign.
struct Decimal {
    negative: bool,
    mantissa: u128,
    scale_digits: u32,
}

impl Decimal {
    fn scale(&self) -> u128 {
        10u128.pow(self.scale_digits)
    }
    fn as_f64(&self) -> f64 {
        let v = self.mantissa as f64 / 10f64.powi(self.scale_digits as i32);
        if self.negative { -v } else { v }
    }
    fn is_zero(&self) -> bool {
        self.mantissa == 0
    }
}

/// Splits `text` into a leading decimal number and the rest (whitespace between them dropped).
/// Returns `None` when there is no number at the start.
fn split_number(text: &str) -> Option<(Decimal, &str)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut negative = false;
    if i < bytes.len() && (bytes[i] == b'-' || bytes[i] == b'+') {
        negative = bytes[i] == b'-';
        i += 1;
    }
    let mut mantissa: u128 = 0;
    let mut digits = 0u32;
    let mut scale_digits = 0u32;
    let mut seen_dot = false;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_digit() {
            // 30 significant digits is far past any sensible value; refuse rather than overflow.
            if digits >= 30 {
                return None;
            }
            mantissa = mantissa * 10 + u128::from(c - b'0');
            digits += 1;
            if seen_dot {
                scale_digits += 1;
            }
        } else if c == b'.' && !seen_dot {
            seen_dot = true;
        } else {
            break;
        }
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    let rest = text[i..].trim_start();
    Some((
        Decimal {
            negative,
            mantissa,
            scale_digits,
        },
        rest,
    ))
}

fn lookup(units: &[(&str, u64)], unit: &str) -> Option<u64> {
    units.iter().find(|(u, _)| *u == unit).map(|&(_, m)| m)
}

/// Parses a size into bytes: `512`, `4k`, `4KiB`, `4kB`, `1.5MiB`, `2 GiB`.
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    // Echo at most a screenful of the value in messages.
    let shown = super::shorten(text);
    let t = text.trim();
    let bad_unit = || {
        UnitError::new(
            format!("{shown:?}: expected a number and one of {SIZE_UNIT_LIST}"),
            SIZE_HINT,
        )
    };
    let (num, unit) = split_number(t).ok_or_else(bad_unit)?;
    let mult = if unit.is_empty() {
        1
    } else {
        lookup(SIZE_UNITS, unit).ok_or_else(bad_unit)?
    };
    if num.negative && !num.is_zero() {
        return Err(UnitError::new(
            format!("sizes cannot be negative, got {shown:?}"),
            SIZE_HINT,
        ));
    }
    let total = num
        .mantissa
        .checked_mul(u128::from(mult))
        .ok_or_else(|| UnitError::new(format!("{shown:?} is too large"), SIZE_HINT))?;
    if total % num.scale() != 0 {
        return Err(UnitError::new(
            format!("{shown:?} is not a whole number of bytes"),
            SIZE_HINT,
        ));
    }
    u64::try_from(total / num.scale())
        .map_err(|_| UnitError::new(format!("{shown:?} is too large"), SIZE_HINT))
}

/// Parses a duration: `250ns`, `100us`, `1.5ms`, `60s`, `2min`, `1h`, or a bare `0`.
/// Fractions of a nanosecond round to the nearest nanosecond.
pub fn parse_duration(text: &str) -> Result<SimDuration, UnitError> {
    // Echo at most a screenful of the value in messages.
    let shown = super::shorten(text);
    let t = text.trim();
    let (num, unit) = split_number(t).ok_or_else(|| {
        UnitError::new(
            format!("{shown:?}: expected a number and one of {DURATION_UNIT_LIST}"),
            DURATION_HINT,
        )
    })?;
    if unit.is_empty() {
        if num.is_zero() {
            return Ok(SimDuration::ZERO);
        }
        return Err(UnitError::new(
            format!("durations need a unit, got {shown:?}"),
            DURATION_HINT,
        ));
    }
    if unit == "m" {
        return Err(UnitError::new(
            format!(
                "{shown:?}: `m` is ambiguous; write `min` for minutes or `ms` for milliseconds"
            ),
            DURATION_HINT,
        ));
    }
    let unit_ns = lookup(DURATION_UNITS, unit).ok_or_else(|| {
        UnitError::new(
            format!(
                "{shown:?}: unknown duration unit {:?}; expected one of {DURATION_UNIT_LIST}",
                super::shorten_to(unit, 20)
            ),
            DURATION_HINT,
        )
    })?;
    if num.negative && !num.is_zero() {
        return Err(UnitError::new(
            format!("durations cannot be negative, got {shown:?}"),
            DURATION_HINT,
        ));
    }
    let scaled = num
        .mantissa
        .checked_mul(u128::from(unit_ns))
        .ok_or_else(|| UnitError::new(format!("{shown:?} is too long"), DURATION_HINT))?;
    let ns = (scaled + num.scale() / 2) / num.scale();
    if ns > u128::from(MAX_DURATION.as_ns()) {
        return Err(UnitError::new(
            format!("{shown:?} is longer than 100 days, the longest duration qsim accepts"),
            DURATION_HINT,
        ));
    }
    Ok(SimDuration::from_ns(ns as u64))
}

/// A rate: bytes per second or operations per second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rate {
    /// Bandwidth, bytes per second.
    BytesPerSec(f64),
    /// Operations (I/Os) per second.
    OpsPerSec(f64),
}

impl Rate {
    /// Bytes per second, if this is a bandwidth.
    pub fn bytes_per_sec(self) -> Option<f64> {
        match self {
            Rate::BytesPerSec(b) => Some(b),
            Rate::OpsPerSec(_) => None,
        }
    }
    /// Operations per second, converting a bandwidth with the operation size `bytes_per_op`.
    pub fn ops_per_sec(self, bytes_per_op: u64) -> f64 {
        match self {
            Rate::OpsPerSec(o) => o,
            Rate::BytesPerSec(b) => b / bytes_per_op as f64,
        }
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Rate::BytesPerSec(b) => write!(f, "{}", format_bandwidth(b)),
            Rate::OpsPerSec(o) => write!(f, "{}/s", trim_float(o, 3)),
        }
    }
}

/// Parses a rate: `2000/s`, `2000 iops`, `60MB/s`, `60MiB/s`, `512KiB/s`. Must be positive.
pub fn parse_rate(text: &str) -> Result<Rate, UnitError> {
    // Echo at most a screenful of the value in messages.
    let shown = super::shorten(text);
    let t = text.trim();
    let bad = || {
        UnitError::new(
            format!(
                "{shown:?}: expected a number followed by /s, iops, or a byte unit and /s \
                 (B/s, kB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s)"
            ),
            RATE_HINT,
        )
    };
    let (num, rest) = split_number(t).ok_or_else(bad)?;
    let rate = if rest.eq_ignore_ascii_case("iops") {
        Rate::OpsPerSec(num.as_f64())
    } else if let Some(unit) = rest.strip_suffix("/s") {
        let unit = unit.trim_end();
        if unit.is_empty() {
            Rate::OpsPerSec(num.as_f64())
        } else if let Some(mult) = lookup(RATE_BYTE_UNITS, unit) {
            Rate::BytesPerSec(num.as_f64() * mult as f64)
        } else if lookup(SIZE_UNITS, unit).is_some() {
            return Err(UnitError::new(
                format!(
                    "{shown:?} is ambiguous: write {n}000/s for operations or {n}{unit}iB/s for bytes",
                    n = trim_float(num.as_f64(), 3),
                    unit = unit.to_ascii_uppercase(),
                ),
                RATE_HINT,
            ));
        } else {
            return Err(bad());
        }
    } else if rest.is_empty() {
        return Err(UnitError::new(
            format!("rates need a unit, got {shown:?}"),
            RATE_HINT,
        ));
    } else {
        return Err(bad());
    };
    let value = match rate {
        Rate::BytesPerSec(v) | Rate::OpsPerSec(v) => v,
    };
    if value.is_nan() || value <= 0.0 || value.is_infinite() {
        return Err(UnitError::new(
            format!("rate must be positive, got {shown:?}"),
            RATE_HINT,
        ));
    }
    Ok(rate)
}

/// Formats a float with at most `decimals` decimals, trailing zeros removed.
pub fn trim_float(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Formats a byte count in the shortest exact form: IEC when it divides exactly (`4KiB`,
/// `256MiB`), SI when exact to three decimals (`320GB`, `1.5GB`), else plain bytes (`513B`).
pub fn format_bytes(bytes: u64) -> String {
    const IEC: &[(&str, u64)] = &[
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    const SI: &[(&str, u64)] = &[
        ("TB", 1_000_000_000_000),
        ("GB", 1_000_000_000),
        ("MB", 1_000_000),
        ("kB", 1_000),
    ];
    let mut best = format!("{bytes}B");
    let iec = IEC
        .iter()
        .find(|&&(_, m)| bytes >= m && bytes.is_multiple_of(m))
        .map(|&(unit, m)| format!("{}{unit}", bytes / m));
    let si = SI
        .iter()
        .find(|&&(_, m)| bytes >= m)
        .filter(|&&(_, m)| u128::from(bytes) * 1000 % u128::from(m) == 0)
        .map(|&(unit, m)| format!("{}{unit}", trim_float(bytes as f64 / m as f64, 3)));
    for candidate in [iec, si].into_iter().flatten() {
        if candidate.len() < best.len() {
            best = candidate;
        }
    }
    best
}

/// Formats a bandwidth in the shortest form: `inf` for the null cipher, IEC when exact
/// (`1432MiB/s`), else SI to three decimals (`60MB/s`, `3.5GB/s`).
pub fn format_bandwidth(bytes_per_sec: f64) -> String {
    if bytes_per_sec.is_infinite() {
        return "inf".to_string();
    }
    const IEC: &[(&str, f64)] = &[
        ("GiB/s", 1_073_741_824.0),
        ("MiB/s", 1_048_576.0),
        ("KiB/s", 1024.0),
    ];
    const SI: &[(&str, f64)] = &[("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)];
    let iec = IEC
        .iter()
        .map(|&(unit, m)| (unit, bytes_per_sec / m))
        .find(|&(_, q)| q >= 1.0 && q.fract() == 0.0)
        .map(|(unit, q)| format!("{q}{unit}"));
    let si = SI
        .iter()
        .find(|&&(_, m)| bytes_per_sec >= m)
        .map(|&(unit, m)| format!("{}{unit}", trim_float(bytes_per_sec / m, 3)))
        .unwrap_or_else(|| format!("{}B/s", trim_float(bytes_per_sec, 3)));
    match iec {
        Some(i) if i.len() <= si.len() => i,
        _ => si,
    }
}

/// A size in bytes, deserialized from an integer (bytes) or a string with a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Size(pub u64);

/// A duration, deserialized from a string with a unit (or the integer `0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Duration(pub SimDuration);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_bytes(self.0))
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

struct SizeVisitor;

impl Visitor<'_> for SizeVisitor {
    type Value = Size;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a size (bytes, or a number and a unit such as 4k, 1MiB)")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Size, E> {
        Ok(Size(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Size, E> {
        u64::try_from(v).map(Size).map_err(|_| {
            UnitError::new(format!("sizes cannot be negative, got {v}"), SIZE_HINT).into_serde()
        })
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Size, E> {
        Err(UnitError::new(
            format!("{v} is not a whole number of bytes; give a unit or an integer"),
            SIZE_HINT,
        )
        .into_serde())
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Size, E> {
        parse_size(v).map(Size).map_err(UnitError::into_serde)
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SizeVisitor)
    }
}

struct DurationVisitor;

impl Visitor<'_> for DurationVisitor {
    type Value = Duration;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a duration (a number and a unit such as 100us, 20ms)")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Duration, E> {
        if v == 0 {
            return Ok(Duration(SimDuration::ZERO));
        }
        Err(UnitError::new(
            format!("durations need a unit, got {v}; did you mean {v}ms or {v}us?"),
            DURATION_HINT,
        )
        .into_serde())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Duration, E> {
        match u64::try_from(v) {
            Ok(u) => self.visit_u64(u),
            Err(_) => Err(UnitError::new(
                format!("durations cannot be negative, got {v}"),
                DURATION_HINT,
            )
            .into_serde()),
        }
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Duration, E> {
        Err(UnitError::new(format!("durations need a unit, got {v}"), DURATION_HINT).into_serde())
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
        parse_duration(v)
            .map(Duration)
            .map_err(UnitError::into_serde)
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DurationVisitor)
    }
}

struct RateVisitor;

impl Visitor<'_> for RateVisitor {
    type Value = Rate;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a rate (2000/s, 2000 iops, 60MB/s, 512KiB/s)")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Rate, E> {
        Err(UnitError::new(
            format!("rates need a unit, got {v}; did you mean {v}/s (operations) or {v}MB/s?"),
            RATE_HINT,
        )
        .into_serde())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Rate, E> {
        if v <= 0 {
            return Err(
                UnitError::new(format!("rate must be positive, got {v}"), RATE_HINT).into_serde(),
            );
        }
        self.visit_u64(v.unsigned_abs())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Rate, E> {
        Err(UnitError::new(format!("rates need a unit, got {v}"), RATE_HINT).into_serde())
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Rate, E> {
        parse_rate(v).map_err(UnitError::into_serde)
    }
}

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RateVisitor)
    }
}

/// A rate of events per second as `memory.atomic[*].rate` writes it: `500/s`, `500 iops`, or a
/// plain positive number (per second). A byte rate parses too (as [`Rate::BytesPerSec`]) so
/// that validation can point the user at `bandwidth:` instead of failing on the unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CountRate(pub Rate);

struct CountRateVisitor;

impl CountRateVisitor {
    fn number<E: de::Error>(v: f64) -> Result<CountRate, E> {
        if v.is_finite() && v > 0.0 {
            Ok(CountRate(Rate::OpsPerSec(v)))
        } else {
            Err(
                UnitError::new(format!("rate must be positive, got {v}"), COUNT_RATE_HINT)
                    .into_serde(),
            )
        }
    }
}

/// Hint shown with every allocation-rate error.
pub const COUNT_RATE_HINT: &str =
    "an allocation rate is a number per second: 500/s or 500; a throughput goes in `bandwidth:`";

impl Visitor<'_> for CountRateVisitor {
    type Value = CountRate;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a rate per second (500/s, or a plain number)")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<CountRate, E> {
        Self::number(v as f64)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<CountRate, E> {
        Self::number(v as f64)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<CountRate, E> {
        Self::number(v)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<CountRate, E> {
        if let Ok(n) = v.trim().parse::<f64>() {
            return Self::number(n);
        }
        parse_rate(v)
            .map(CountRate)
            .map_err(|e| UnitError::new(e.message, COUNT_RATE_HINT).into_serde())
    }
}

impl<'de> Deserialize<'de> for CountRate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(CountRateVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_iec_si_and_bare_prefixes() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("512B"), Ok(512));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("4kB"), Ok(4000));
        assert_eq!(parse_size("4KB"), Ok(4000));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("320GB"), Ok(320_000_000_000));
        assert_eq!(parse_size("1.5KiB"), Ok(1536));
        assert_eq!(parse_size(" 2 MiB "), Ok(2 << 20));
        assert_eq!(parse_size("0"), Ok(0));
    }

    #[test]
    fn size_errors_echo_the_value_and_list_units() {
        let e = parse_size("4kk").unwrap_err();
        assert_eq!(
            e.message,
            "\"4kk\": expected a number and one of B, k, M, G, T, KiB, MiB, GiB, TiB, kB, MB, GB, TB"
        );
        assert_eq!(e.hint, SIZE_HINT);
        assert!(
            parse_size("10 parsecs")
                .unwrap_err()
                .message
                .contains("\"10 parsecs\"")
        );
        assert!(parse_size("big").unwrap_err().message.contains("\"big\""));
        assert!(parse_size("-4k").unwrap_err().message.contains("negative"));
        assert!(
            parse_size("0.3k")
                .unwrap_err()
                .message
                .contains("whole number of bytes")
        );
        assert!(
            parse_size("99999999T")
                .unwrap_err()
                .message
                .contains("too large")
        );
    }

    #[test]
    fn durations_need_units() {
        assert_eq!(parse_duration("250ns"), Ok(SimDuration::from_ns(250)));
        assert_eq!(parse_duration("100us"), Ok(SimDuration::from_us(100)));
        assert_eq!(parse_duration("100µs"), Ok(SimDuration::from_us(100)));
        assert_eq!(parse_duration("20ms"), Ok(SimDuration::from_ms(20)));
        assert_eq!(parse_duration("1.5ms"), Ok(SimDuration::from_us(1500)));
        assert_eq!(parse_duration("60s"), Ok(SimDuration::from_secs(60)));
        assert_eq!(parse_duration("2min"), Ok(SimDuration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(SimDuration::from_secs(3600)));
        assert_eq!(
            parse_duration("11.111ms"),
            Ok(SimDuration::from_ns(11_111_000))
        );
        assert_eq!(parse_duration("1.5ns"), Ok(SimDuration::from_ns(2)));
        assert_eq!(parse_duration("0"), Ok(SimDuration::ZERO));
        assert_eq!(parse_duration("10 ms"), Ok(SimDuration::from_ms(10)));
    }

    #[test]
    fn duration_errors_are_precise() {
        let e = parse_duration("100").unwrap_err();
        assert_eq!(e.message, "durations need a unit, got \"100\"");
        assert_eq!(e.hint, DURATION_HINT);
        assert!(parse_duration("2m").unwrap_err().message.contains("`min`"));
        let e = parse_duration("10 parsecs").unwrap_err();
        assert!(e.message.contains("\"parsecs\""), "{}", e.message);
        assert!(e.message.contains("ns, us, ms, s, min, h"));
        assert!(
            parse_duration("-1ms")
                .unwrap_err()
                .message
                .contains("negative")
        );
        assert!(parse_duration("ms").unwrap_err().message.contains("\"ms\""));
    }

    #[test]
    fn rates_are_bandwidth_or_operations() {
        assert_eq!(parse_rate("2000/s"), Ok(Rate::OpsPerSec(2000.0)));
        assert_eq!(parse_rate("2000 iops"), Ok(Rate::OpsPerSec(2000.0)));
        assert_eq!(parse_rate("2000IOPS"), Ok(Rate::OpsPerSec(2000.0)));
        assert_eq!(parse_rate("60MB/s"), Ok(Rate::BytesPerSec(60e6)));
        assert_eq!(
            parse_rate("60MiB/s"),
            Ok(Rate::BytesPerSec(60.0 * 1048576.0))
        );
        assert_eq!(parse_rate("512KiB/s"), Ok(Rate::BytesPerSec(524288.0)));
        assert_eq!(parse_rate("3.5GB/s"), Ok(Rate::BytesPerSec(3.5e9)));
        assert_eq!(parse_rate("100 B/s"), Ok(Rate::BytesPerSec(100.0)));
        assert_eq!(Rate::BytesPerSec(8192.0).ops_per_sec(4096), 2.0);
    }

    #[test]
    fn rate_errors_are_precise() {
        let e = parse_rate("-5/s").unwrap_err();
        assert_eq!(e.message, "rate must be positive, got \"-5/s\"");
        assert_eq!(e.hint, RATE_HINT);
        assert!(parse_rate("0/s").unwrap_err().message.contains("positive"));
        assert!(
            parse_rate("2k/s")
                .unwrap_err()
                .message
                .contains("ambiguous")
        );
        assert!(
            parse_rate("2000")
                .unwrap_err()
                .message
                .contains("need a unit")
        );
        assert!(
            parse_rate("60 furlongs/s")
                .unwrap_err()
                .message
                .contains("\"60 furlongs/s\"")
        );
        assert!(parse_rate("fast").unwrap_err().message.contains("\"fast\""));
    }

    #[test]
    fn formats_are_short_and_exact() {
        assert_eq!(format_bytes(4096), "4KiB");
        assert_eq!(format_bytes(256 << 20), "256MiB");
        assert_eq!(format_bytes(320_000_000_000), "320GB");
        assert_eq!(format_bytes(1_000_000_000_000), "1TB");
        assert_eq!(format_bytes(4000), "4kB");
        assert_eq!(format_bytes(513), "513B");
        assert_eq!(format_bandwidth(60e6), "60MB/s");
        assert_eq!(format_bandwidth(1432.0 * 1048576.0), "1432MiB/s");
        assert_eq!(format_bandwidth(3.5e9), "3.5GB/s");
        assert_eq!(format_bandwidth(f64::INFINITY), "inf");
        assert_eq!(Rate::OpsPerSec(2000.0).to_string(), "2000/s");
    }

    #[derive(Debug, serde::Deserialize)]
    struct Probe {
        size: Option<Size>,
        duration: Option<Duration>,
        rate: Option<Rate>,
    }

    fn probe(yaml: &str) -> Result<Probe, String> {
        serde_saphyr::from_str::<Probe>(yaml).map_err(|e| e.to_string())
    }

    #[test]
    fn deserialize_accepts_integers_and_strings() {
        let p = probe("size: 512\nduration: 0\nrate: 2000/s\n").unwrap();
        assert_eq!(p.size, Some(Size(512)));
        assert_eq!(p.duration, Some(Duration(SimDuration::ZERO)));
        assert_eq!(p.rate, Some(Rate::OpsPerSec(2000.0)));
        let p = probe("size: 4k\nduration: 1.5ms\nrate: 60MB/s\n").unwrap();
        assert_eq!(p.size, Some(Size(4096)));
        assert_eq!(p.duration, Some(Duration(SimDuration::from_us(1500))));
        assert_eq!(p.rate, Some(Rate::BytesPerSec(60e6)));
    }

    #[test]
    fn deserialize_errors_carry_the_hint_and_location() {
        let err = serde_saphyr::from_str::<Probe>("duration: 100\n").unwrap_err();
        let loc = err.location().expect("located");
        assert_eq!((loc.line(), loc.column()), (1, 11));
        let serde_saphyr::Error::Message { msg, .. } = err.without_snippet() else {
            panic!("expected a custom message, got {err:?}");
        };
        assert_eq!(
            split_hint(msg),
            (
                "durations need a unit, got 100; did you mean 100ms or 100us?",
                Some(DURATION_HINT)
            )
        );
        assert!(probe("size: -3\n").unwrap_err().contains("negative"));
        assert!(probe("size: 1.5\n").unwrap_err().contains("whole number"));
        assert!(probe("rate: 5\n").unwrap_err().contains("need a unit"));
        assert!(probe("rate: -5\n").unwrap_err().contains("positive"));
    }

    #[test]
    fn count_rates_take_per_second_or_a_plain_number() {
        #[derive(Debug, serde::Deserialize)]
        struct C {
            rate: CountRate,
        }
        let r = |y: &str| serde_saphyr::from_str::<C>(y).map(|c| c.rate.0);
        assert_eq!(r("rate: 500/s").unwrap(), Rate::OpsPerSec(500.0));
        assert_eq!(r("rate: 500").unwrap(), Rate::OpsPerSec(500.0));
        assert_eq!(r("rate: 2.5").unwrap(), Rate::OpsPerSec(2.5));
        assert_eq!(r("rate: \"40\"").unwrap(), Rate::OpsPerSec(40.0));
        // A bandwidth parses, so that validation can say where it belongs.
        assert_eq!(r("rate: 4MB/s").unwrap(), Rate::BytesPerSec(4e6));
        for bad in ["rate: 0", "rate: -5", "rate: fast", "rate: 0/s"] {
            let e = r(bad).unwrap_err().to_string();
            assert!(e.contains("500/s or 500"), "{bad}: {e}");
        }
    }

    #[test]
    fn split_hint_recovers_both_parts() {
        let msg = format!("bad{HINT_SEPARATOR}do this");
        assert_eq!(split_hint(&msg), ("bad", Some("do this")));
        assert_eq!(split_hint("plain"), ("plain", None));
    }
}
