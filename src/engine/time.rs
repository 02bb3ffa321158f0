//! Simulated time: [`SimTime`] (an instant) and [`SimDuration`] (a span), both integer
//! nanoseconds in a `u64` (about 584 years, far past any horizon).
//!
//! Arithmetic is checked: overflow or a negative span is a programming error and panics with a
//! message, rather than wrapping silently into a wrong result.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub};

/// An instant of simulated time, in nanoseconds since the start of the run.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
pub struct SimTime(u64);

/// A span of simulated time, in nanoseconds.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
pub struct SimDuration(u64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);
    /// The largest representable instant ("never").
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// An instant `ns` nanoseconds after the start.
    pub const fn from_ns(ns: u64) -> Self {
        SimTime(ns)
    }
    /// Nanoseconds since the start.
    pub const fn as_ns(self) -> u64 {
        self.0
    }
    /// The span from `earlier` to `self`; panics if `earlier` is later (time never runs backwards).
    pub fn since(self, earlier: SimTime) -> SimDuration {
        assert!(
            self.0 >= earlier.0,
            "time went backwards: {} ns is before {} ns",
            self.0,
            earlier.0
        );
        SimDuration(self.0 - earlier.0)
    }
    /// The span from `earlier` to `self`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
    /// `self + d`, or `None` on overflow.
    pub fn checked_add(self, d: SimDuration) -> Option<SimTime> {
        self.0.checked_add(d.0).map(SimTime)
    }
    /// `self + d`, clamped at [`SimTime::MAX`].
    pub fn saturating_add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}

impl SimDuration {
    /// Zero length.
    pub const ZERO: SimDuration = SimDuration(0);
    /// The longest representable span.
    pub const MAX: SimDuration = SimDuration(u64::MAX);

    /// `ns` nanoseconds.
    pub const fn from_ns(ns: u64) -> Self {
        SimDuration(ns)
    }
    /// `us` microseconds.
    pub const fn from_us(us: u64) -> Self {
        SimDuration(us * 1_000)
    }
    /// `ms` milliseconds.
    pub const fn from_ms(ms: u64) -> Self {
        SimDuration(ms * 1_000_000)
    }
    /// `s` seconds.
    pub const fn from_secs(s: u64) -> Self {
        SimDuration(s * 1_000_000_000)
    }
    /// Rounds a non-negative number of seconds to the nearest nanosecond (saturating).
    pub fn from_secs_f64(s: f64) -> Self {
        if s.is_nan() || s <= 0.0 {
            SimDuration(0)
        } else {
            let ns = s * 1e9;
            if ns >= u64::MAX as f64 {
                SimDuration(u64::MAX)
            } else {
                SimDuration(round_positive(ns))
            }
        }
    }
    /// Nanoseconds.
    pub const fn as_ns(self) -> u64 {
        self.0
    }
    /// Seconds as a float (for reports and rates only, never for event times).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Whether this is zero.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
    /// `self - other`, or zero if `other` is longer.
    pub fn saturating_sub(self, other: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_sub(other.0))
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(
            self.0
                .checked_add(d.0)
                .expect("simulated time overflowed u64 nanoseconds"),
        )
    }
}

impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        *self = *self + d;
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(
            self.0
                .checked_add(d.0)
                .expect("duration overflowed u64 nanoseconds"),
        )
    }
}

impl AddAssign for SimDuration {
    fn add_assign(&mut self, d: SimDuration) {
        *self = *self + d;
    }
}

impl Sub for SimDuration {
    type Output = SimDuration;
    fn sub(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.checked_sub(d.0).expect("negative duration"))
    }
}

impl Mul<u64> for SimDuration {
    type Output = SimDuration;
    fn mul(self, k: u64) -> SimDuration {
        SimDuration(
            self.0
                .checked_mul(k)
                .expect("duration overflowed u64 nanoseconds"),
        )
    }
}

/// Prints with the largest unit that keeps the value exact to three decimals: `4ms`, `100us`,
/// `1.5s`, `812ns`.
impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        let (div, unit) = if ns >= 1_000_000_000 {
            (1_000_000_000u64, "s")
        } else if ns >= 1_000_000 {
            (1_000_000, "ms")
        } else if ns >= 1_000 {
            (1_000, "us")
        } else {
            (1, "ns")
        };
        if ns.is_multiple_of(div) {
            write!(f, "{}{}", ns / div, unit)
        } else {
            let v = ns as f64 / div as f64;
            let s = format!("{v:.3}");
            let s = s.trim_end_matches('0').trim_end_matches('.');
            write!(f, "{s}{unit}")
        }
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t={}", SimDuration(self.0))
    }
}

/// `x.round() as u64` for a finite `0 < x < 2^64`, without a call into libm (`f64::round` is
/// one on x86-64's baseline; it was 3 % of a run's cycles): truncate, then add one if the part
/// cut off is at least a half (rounding half away from zero, as `round` does). The part cut
/// off, `x - trunc(x)`, is exact in floating point, and from 2^52 up every double is whole.
/// Below 2^52 the conversions go through `i64` (one instruction each way on x86-64, where
/// the unsigned ones are a branchy sequence): the same values, as `x` and its whole part are
/// far inside `i64`'s range.
#[inline]
fn round_positive(x: f64) -> u64 {
    if x < (1u64 << 52) as f64 {
        let whole = x as i64;
        (whole + i64::from(x - whole as f64 >= 0.5)) as u64
    } else {
        x as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `round_positive` is `f64::round` on every kind of input: halves, the largest double
    /// below a half, around 2^52 and 2^53, and a million values spread over the range.
    #[test]
    fn round_positive_matches_round() {
        let mut xs = vec![
            f64::MIN_POSITIVE,
            0.49999999999999994,
            0.5,
            1.5,
            2.5,
            1e9 - 0.5,
            4503599627370495.5,
            4503599627370496.0,
            4503599627370497.0,
            9007199254740993.0,
            1.8e19,
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..1_000_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // A random mantissa at a random scale from 2^-20 to 2^63.
            let m = (state >> 11) as f64 / (1u64 << 53) as f64;
            let e = (state % 84) as i32 - 20;
            xs.push(m * 2f64.powi(e));
            xs.push((m * 2f64.powi(e)).floor() + 0.5);
        }
        for x in xs.into_iter().filter(|&x| x > 0.0 && x < u64::MAX as f64) {
            assert_eq!(round_positive(x), x.round() as u64, "{x:e}");
        }
    }

    #[test]
    fn display_picks_exact_units() {
        assert_eq!(SimDuration::from_ms(4).to_string(), "4ms");
        assert_eq!(SimDuration::from_us(100).to_string(), "100us");
        assert_eq!(SimDuration::from_ms(1500).to_string(), "1.5s");
        assert_eq!(SimDuration::from_ns(812).to_string(), "812ns");
        assert_eq!(SimDuration::from_ns(5_180).to_string(), "5.18us");
        assert_eq!(SimDuration::ZERO.to_string(), "0ns");
    }

    #[test]
    fn since_measures_forward_spans() {
        let a = SimTime::from_ns(10);
        let b = a + SimDuration::from_ns(32);
        assert_eq!(b.since(a).as_ns(), 32);
        assert_eq!(a.saturating_since(b), SimDuration::ZERO);
    }

    #[test]
    #[should_panic(expected = "time went backwards")]
    fn since_refuses_backwards_time() {
        let _ = SimTime::from_ns(1).since(SimTime::from_ns(2));
    }

    #[test]
    fn from_secs_f64_rounds_and_saturates() {
        assert_eq!(SimDuration::from_secs_f64(1.5e-9).as_ns(), 2);
        assert_eq!(SimDuration::from_secs_f64(-1.0).as_ns(), 0);
        assert_eq!(SimDuration::from_secs_f64(1e30), SimDuration::MAX);
    }
}
