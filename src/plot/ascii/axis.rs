//! The axes of the plain-text charts: the mapping of a value to a cell (linear, log or
//! "nines"), the domain a set of values gets, and its labelled ticks. Pure functions of
//! numbers; every value that cannot be placed (NaN, ±inf, ≤ 0 on a log axis, a percentile
//! outside `[0, 100)` on a nines axis) maps to `None` and is left out, never a panic.

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Equal steps for equal differences.
    Linear,
    /// Equal steps for equal ratios (values ≤ 0 are not shown).
    Log,
    /// Percentiles on the "nines" axis: position −log10(1 − p/100), so 90, 99, 99.9 and 99.99
    /// are equally spaced (values outside `[0, 100)` are not shown).
    Nines,
}

/// Largest |value| an axis accepts: beyond it spans and steps lose their meaning in f64.
const LIMIT: f64 = 1e150;

impl Scale {
    /// The position of `v` on this scale, or `None` when it cannot be shown.
    pub fn to_pos(self, v: f64) -> Option<f64> {
        if !v.is_finite() || v.abs() > LIMIT {
            return None;
        }
        match self {
            Scale::Linear => Some(v),
            Scale::Log => (v > 0.0).then(|| v.log10()),
            Scale::Nines => (0.0..100.0)
                .contains(&v)
                .then(|| -(1.0 - v / 100.0).log10())
                .filter(|p| p.is_finite()),
        }
    }
}

/// An axis fitted to some values: its domain in positions and its labelled ticks.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Axis {
    pub scale: Scale,
    /// Lowest position shown.
    pub lo: f64,
    /// Highest position shown (> `lo`).
    pub hi: f64,
    /// Labelled ticks: position and label, ascending.
    pub ticks: Vec<(f64, String)>,
}

impl Axis {
    /// The axis for `values` (positions on `scale`, all finite); `None` when there are none.
    pub fn fit(scale: Scale, positions: &[f64]) -> Option<Axis> {
        let min = positions.iter().copied().fold(f64::INFINITY, f64::min);
        let max = positions.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !(min.is_finite() && max.is_finite()) {
            return None;
        }
        Some(match scale {
            Scale::Linear => linear(min, max),
            Scale::Log => log(min, max),
            Scale::Nines => nines(min, max),
        })
    }

    /// The cell of position `p` among `cells` (0 for `lo`, `cells - 1` for `hi`), clamped;
    /// monotone in `p`.
    pub fn cell(&self, p: f64, cells: usize) -> usize {
        let last = cells.saturating_sub(1);
        let f = ((p - self.lo) / (self.hi - self.lo)).clamp(0.0, 1.0);
        ((f * last as f64).round() as usize).min(last)
    }
}

/// A "nice" step (1, 2 or 5 × 10^k) near `raw`.
fn nice_step(raw: f64) -> f64 {
    let k = raw.log10().floor();
    let base = 10f64.powf(k);
    let m = raw / base;
    let m = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * base
}

fn linear(min: f64, max: f64) -> Axis {
    let (min, max) = if max > min {
        (min, max)
    } else if min == 0.0 {
        (0.0, 1.0)
    } else {
        let d = min.abs() / 2.0;
        (min - d, max + d)
    };
    let step = nice_step((max - min) / 5.0);
    let lo = (min / step).floor() * step;
    let hi = (max / step).ceil() * step;
    let hi = if hi > lo { hi } else { lo + step };
    let n = ((hi - lo) / step).round() as usize;
    let ticks = (0..=n)
        .map(|i| {
            let v = lo + i as f64 * step;
            (v, number(v, step))
        })
        .collect();
    Axis {
        scale: Scale::Linear,
        lo,
        hi,
        ticks,
    }
}

/// A log axis from the 1-2-5 step at or below `min` to the one at or above `max` (positions
/// are log10 of values), labelled at 1, 2 and 5 × 10^k over at most three decades, at decades
/// (every one, or fewer to keep about six labels) beyond.
fn log(min: f64, max: f64) -> Axis {
    let steps = |d: f64| [d, d + 2f64.log10(), d + 5f64.log10()];
    let lo = steps(min.floor())
        .into_iter()
        .rev()
        .find(|p| *p <= min + 1e-9)
        .unwrap_or(min.floor());
    let hi = [steps(max.floor()), steps(max.floor() + 1.0)]
        .concat()
        .into_iter()
        .find(|p| *p >= max - 1e-9 && *p > lo + 1e-9)
        .unwrap_or(lo + 1.0);
    let decades = hi.ceil() - lo.floor();
    let every = (decades / 6.0).floor() as i32 + 1;
    let mut ticks = Vec::new();
    for d in (lo.floor() as i32)..=(hi.ceil() as i32) {
        let d0 = lo.floor() as i32;
        if decades > 3.0 && (d - d0) % every != 0 {
            continue;
        }
        let ms: &[f64] = if decades <= 3.0 {
            &[1.0, 2.0, 5.0]
        } else {
            &[1.0]
        };
        for &m in ms {
            let p = d as f64 + m.log10();
            if p >= lo - 1e-9 && p <= hi + 1e-9 {
                let v = m * 10f64.powi(d);
                ticks.push((p, number(v, v)));
            }
        }
    }
    Axis {
        scale: Scale::Log,
        lo,
        hi,
        ticks,
    }
}

/// The percentiles a nines axis labels: 0, 50, 90, then one more nine each.
fn nines_ticks() -> Vec<(f64, String)> {
    let mut v = vec![(0.0, "0".to_string()), (2f64.log10(), "50".to_string())];
    let mut label = "9".to_string();
    for k in 1..=12 {
        label = if k == 1 {
            "90".into()
        } else if k == 2 {
            "99".into()
        } else if k == 3 {
            "99.9".into()
        } else {
            format!("{label}9")
        };
        v.push((k as f64, label.clone()));
    }
    v
}

fn nines(min: f64, max: f64) -> Axis {
    let all = nines_ticks();
    let lo = all
        .iter()
        .rev()
        .find(|t| t.0 <= min + 1e-9)
        .map_or(0.0, |t| t.0);
    let hi = all
        .iter()
        .find(|t| t.0 >= max - 1e-9 && t.0 > lo)
        .map_or(max.ceil().max(lo + 1.0), |t| t.0);
    let ticks = all
        .into_iter()
        .filter(|t| t.0 >= lo - 1e-9 && t.0 <= hi + 1e-9)
        .collect();
    Axis {
        scale: Scale::Nines,
        lo,
        hi,
        ticks,
    }
}

/// `v` as a short tick label with as many decimals as `step` needs: `0.25`, `40`, `1.5k`,
/// `20M`, `1e-7`.
pub fn number(v: f64, step: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let step = if step.is_finite() && step > 0.0 {
        step
    } else {
        10f64.powf(v.abs().log10().floor())
    };
    let a = v.abs().max(step);
    if !(1e-4..1e15).contains(&a) {
        return format!("{v:.0e}");
    }
    let (div, suffix) = if a >= 1e12 {
        (1e12, "T")
    } else if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let s = step / div;
    let decimals = if s >= 1.0 {
        0
    } else {
        ((-s.log10()) - 1e-9).ceil().clamp(0.0, 6.0) as usize
    };
    format!("{:.*}{suffix}", decimals, v / div)
}
