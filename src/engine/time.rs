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
            let ns = (s * 1e9).round();
            if ns >= u64::MAX as f64 {
                SimDuration(u64::MAX)
            } else {
                SimDuration(ns as u64)
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

#[cfg(test)]
mod tests {
    use super::*;

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
