//! Axis scales without drawing: tick positions for linear, logarithmic and "nines"
//! (percentile) axes, number and duration formats for their labels, and spreading labels
//! apart. Pure functions of numbers, so each is tested here on values alone.

/// Axis ticks: labelled (bold grid line) and unlabelled (light grid line) positions.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Ticks {
    pub major: Vec<f64>,
    pub minor: Vec<f64>,
}

/// A padded range `[lo, hi]` for positive values and its 1-2-5 (or decade) ticks for a
/// log axis; the range is widened until it holds at least two labelled ticks.
/// Values beyond `[1e-300, 1e300]` sit at its ends, so the padded range and its decades stay
/// finite and countable.
pub(super) fn log_axis(min: f64, max: f64) -> (f64, f64, Ticks) {
    const LIMIT: f64 = 1e300;
    let min = if min > 0.0 && min.is_finite() {
        min.clamp(1.0 / LIMIT, LIMIT / 10.0)
    } else {
        1.0
    };
    let max = if max.is_finite() && max > min {
        max.min(LIMIT)
    } else {
        min * 10.0
    };
    let mut lo = min / 1.25;
    let mut hi = max * 1.25;
    let decades = (hi / lo).log10();
    let (major_m, minor_m): (&[f64], &[f64]) = if decades <= 1.2 {
        (&[1.0, 2.0, 3.0, 5.0], &[4.0, 6.0, 7.0, 8.0, 9.0])
    } else if decades <= 3.5 {
        (&[1.0, 2.0, 5.0], &[3.0, 4.0, 6.0, 7.0, 8.0, 9.0])
    } else if decades <= 7.0 {
        (&[1.0], &[2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    } else {
        (&[1.0], &[])
    };
    let candidates = |ms: &[f64], lo: f64, hi: f64| -> Vec<f64> {
        let mut v = Vec::new();
        let d0 = lo.log10().floor() as i32 - 1;
        let d1 = hi.log10().ceil() as i32 + 1;
        for d in d0..=d1 {
            for &m in ms {
                let x = m * 10f64.powi(d);
                v.push(x);
            }
        }
        v.sort_by(f64::total_cmp);
        v
    };
    let all_major = candidates(major_m, lo, hi);
    // Widen to the nearest labelled tick on a side with none close by.
    let inside = |lo: f64, hi: f64| all_major.iter().filter(|&&x| x >= lo && x <= hi).count();
    if inside(lo, hi) < 2 {
        if let Some(&below) = all_major.iter().rev().find(|&&x| x <= min) {
            lo = lo.min(below);
        }
        if inside(lo, hi) < 2
            && let Some(&above) = all_major.iter().find(|&&x| x >= max)
        {
            hi = hi.max(above);
        }
    }
    let major = all_major
        .iter()
        .copied()
        .filter(|&x| x >= lo * 0.9999 && x <= hi * 1.0001)
        .collect();
    let minor = candidates(minor_m, lo, hi)
        .into_iter()
        .filter(|&x| x >= lo && x <= hi)
        .collect();
    (lo, hi, Ticks { major, minor })
}

/// Ticks for a linear axis over `[lo, hi]`: a 1-2-5 step giving about `target` labelled
/// ticks at multiples of the step, unlabelled ones halfway; returns the first tick at or
/// above `hi` (where an axis starting at 0 should end) and the ticks up to it.
pub(super) fn linear_axis(lo: f64, hi: f64, target: usize) -> (f64, Ticks) {
    let target = target.max(1);
    // A range too narrow for a normal step (or not finite) gets a unit one.
    let narrow = |hi: f64| !((hi - lo) / target as f64).is_normal();
    let hi = if hi > lo && !narrow(hi) { hi } else { lo + 1.0 };
    let raw = (hi - lo) / target as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|&s| s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag);
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step - 1e-9).ceil() as i64;
    // Far from 0 the step may be below the values' precision: then no ticks, only the range.
    if !(0..=4 * target as i64 + 4).contains(&last.saturating_sub(first)) {
        return (
            hi,
            Ticks {
                major: vec![lo, hi],
                minor: Vec::new(),
            },
        );
    }
    let major: Vec<f64> = (first..=last).map(|k| k as f64 * step).collect();
    let minor = (first - 1..=last)
        .map(|k| (k as f64 + 0.5) * step)
        .filter(|&x| x >= lo)
        .collect();
    (last as f64 * step, Ticks { major, minor })
}

/// A tick value without noise digits: `0.05`, `2.5`, `10`, `1200`.
pub(super) fn fmt_num(v: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let a = v.abs();
    let decimals = if a >= 100.0 {
        0
    } else {
        // Enough decimals for three significant digits, then trailing zeros trimmed.
        (2 - a.log10().floor() as i32).clamp(0, 9) as usize
    };
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A tick value `v` of an axis whose ticks are `step` apart, with the decimals the step needs
/// and no more (`100.25` and `100.5` for steps of 0.25, `104` for steps of 1), so that ticks
/// far from 0 on a narrow range (a 2 ms window 100 ms into a run) stay distinct.
pub(super) fn fmt_tick(v: f64, step: f64) -> String {
    if !(step.is_finite() && step > 0.0) {
        return fmt_num(v);
    }
    let decimals = (0..=6)
        .find(|&d| {
            let x = step * 10f64.powi(d);
            (x - x.round()).abs() <= 1e-6 * x
        })
        .unwrap_or(6) as usize;
    format!("{v:.decimals$}")
}

/// `mean ± half` with the half-width to two significant digits and the mean to the same
/// decimals (`0.300 ± 0.054`, `2900 ± 373`); just the mean when `half` is not positive.
pub(super) fn fmt_pm(mean: f64, half: f64) -> String {
    if !(half > 0.0 && half.is_finite()) {
        return fmt_num(mean);
    }
    let decimals = (1 - half.log10().floor() as i32).max(0) as usize;
    format!("{mean:.decimals$} ± {half:.decimals$}")
}

/// A duration given in ns, in the unit that keeps the number between 1 and 1000:
/// `500 ns`, `20 µs`, `1.5 ms`, `2 s`.
pub(super) fn fmt_ns(ns: f64) -> String {
    let a = ns.abs();
    if a < 1e3 {
        format!("{} ns", fmt_num(ns))
    } else if a < 1e6 {
        format!("{} µs", fmt_num(ns / 1e3))
    } else if a < 1e9 {
        format!("{} ms", fmt_num(ns / 1e6))
    } else {
        format!("{} s", fmt_num(ns / 1e9))
    }
}

/// A unit for the durations of one plot, chosen from its data: the largest of s, ms, µs and
/// ns in which the largest value is at least 1 (s only from 10 s up), so an NVMe plot reads
/// `56 µs` where it read `0.0561 ms`, and a disk plot stays in ms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct TimeUnit {
    /// Its symbol: `s`, `ms`, `µs` or `ns`.
    pub name: &'static str,
    /// Nanoseconds in one of it.
    pub ns: f64,
}

impl TimeUnit {
    /// The unit for a plot whose largest duration is `max_ns`.
    pub fn for_max(max_ns: f64) -> TimeUnit {
        let units = [("s", 1e10, 1e9), ("ms", 1e6, 1e6), ("µs", 1e3, 1e3)];
        for (name, from, ns) in units {
            if max_ns >= from {
                return TimeUnit { name, ns };
            }
        }
        TimeUnit {
            name: "ns",
            ns: 1.0,
        }
    }

    /// `ns` nanoseconds in this unit.
    pub fn of(self, ns: f64) -> f64 {
        ns / self.ns
    }
}

/// A swept parameter as a reader says it: the scenario paths joined by `+` become words,
/// a shared leading part said once (`crypt.encrypt_rate+crypt.decrypt_rate` →
/// `crypt encrypt rate and decrypt rate`, `device.iops` → `device iops`).
pub(super) fn axis_name(axis: &str) -> String {
    let parts: Vec<Vec<&str>> = axis.split('+').map(|p| p.split('.').collect()).collect();
    let first = &parts[0];
    let shared = (0..first.len().saturating_sub(1))
        .take_while(|&k| parts.iter().all(|p| p.len() > k + 1 && p[k] == first[k]))
        .count();
    let words = |segs: &[&str]| segs.join(" ").replace('_', " ");
    let tails: Vec<String> = parts.iter().map(|p| words(&p[shared..])).collect();
    let tails = tails.join(" and ");
    if shared == 0 {
        tails
    } else {
        format!("{} {tails}", words(&first[..shared]))
    }
}

/// The "nines" transform of a percentile: `-log10(1 - p/100)`, so 90 → 1, 99 → 2,
/// 99.9 → 3.
pub(super) fn nines(p: f64) -> f64 {
    -(1.0 - p / 100.0).log10()
}

/// The percentile at nines position `x` (inverse of [`nines`]), as a label: `50`, `99.9`.
pub(super) fn nines_label(x: f64) -> String {
    let p = 100.0 * (1.0 - 10f64.powf(-x));
    // Round to the precision the position implies (x = 3 → one decimal: 99.9).
    let decimals = (x.ceil() as i32 - 2).max(0) as usize;
    let s = format!("{p:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Pushes label centres `ys` (pixels, any order) apart so neighbours are at least `gap`
/// px apart, keeping them inside `[top, bottom]` as far as possible; returns them in the
/// input order.
pub(super) fn spread_labels(ys: &[i32], gap: i32, top: i32, bottom: i32) -> Vec<i32> {
    let mut idx: Vec<usize> = (0..ys.len()).collect();
    idx.sort_by_key(|&i| ys[i]);
    let mut pos: Vec<i32> = idx.iter().map(|&i| ys[i]).collect();
    for k in 1..pos.len() {
        pos[k] = pos[k].max(pos[k - 1] + gap);
    }
    if let Some(&last) = pos.last()
        && last > bottom
    {
        let shift = last - bottom;
        let n = pos.len();
        pos[n - 1] -= shift;
        for k in (0..n - 1).rev() {
            pos[k] = pos[k].min(pos[k + 1] - gap);
        }
    }
    if let Some(&first) = pos.first()
        && first < top
    {
        let shift = top - first;
        for p in &mut pos {
            *p += shift;
        }
    }
    let mut out = vec![0; ys.len()];
    for (k, &i) in idx.iter().enumerate() {
        out[i] = pos[k];
    }
    out
}

/// The span of `anchor` and every finite estimate and bound of `intervals`, padded by 5 % of
/// its width (at least `min_pad`): the x range of the tornado and flags charts, whose bars start
/// at `anchor` (0 for an effect, 1 for a ratio).
pub(super) fn interval_span<'a>(
    anchor: f64,
    intervals: impl Iterator<Item = &'a crate::stats::compare::Interval>,
    min_pad: f64,
) -> (f64, f64) {
    let (mut lo, mut hi) = (anchor, anchor);
    for e in intervals {
        for v in [e.low, e.high, e.estimate] {
            if v.is_finite() {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
    }
    let pad = ((hi - lo) * 0.05).max(min_pad);
    (lo - pad, hi + pad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swept_axis_reads_as_words() {
        assert_eq!(
            axis_name("crypt.encrypt_rate+crypt.decrypt_rate"),
            "crypt encrypt rate and decrypt rate"
        );
        assert_eq!(axis_name("device.iops"), "device iops");
        assert_eq!(
            axis_name("memory.ram+device.iops"),
            "memory ram and device iops"
        );
        assert_eq!(axis_name("seed"), "seed");
        assert_eq!(axis_name(""), "");
    }

    #[test]
    fn a_plot_s_time_unit_follows_its_largest_value() {
        let name = |ns: f64| TimeUnit::for_max(ns).name;
        assert_eq!(name(200_000.0), "µs", "an NVMe p99.99 of 0.2 ms");
        assert_eq!(name(48.0), "ns");
        assert_eq!(name(2.5e9), "ms", "a disk's 2.5 s stays in ms");
        assert_eq!(name(12e9), "s");
        assert_eq!(name(f64::NAN), "ns");
        assert_eq!(TimeUnit::for_max(56_100.0).of(56_100.0), 56.1);
    }

    #[test]
    fn ticks_far_from_zero_keep_the_decimals_their_step_needs() {
        // A 2 ms window 100 ms in: fmt_num's three significant digits gave "100" thrice.
        let (_, t) = linear_axis(100.0, 102.0, 8);
        let step = t.major[1] - t.major[0];
        let labels: Vec<String> = t.major.iter().map(|&v| fmt_tick(v, step)).collect();
        assert_eq!(
            labels,
            [
                "100.00", "100.25", "100.50", "100.75", "101.00", "101.25", "101.50", "101.75",
                "102.00"
            ]
        );
        assert_eq!(fmt_tick(104.0, 1.0), "104");
        assert_eq!(fmt_tick(0.5, 0.5), "0.5");
        assert_eq!(fmt_tick(1200.0, 200.0), "1200");
        assert_eq!(fmt_tick(3.0, 0.0), fmt_num(3.0));
    }

    #[test]
    fn nines_map_the_labelled_percentiles_to_whole_numbers() {
        for (p, x) in [(90.0, 1.0), (99.0, 2.0), (99.9, 3.0), (99.99, 4.0)] {
            assert!((nines(p) - x).abs() < 1e-9, "{p}");
        }
        let labels: Vec<String> = [nines(50.0), 1.0, 2.0, 3.0, 4.0]
            .iter()
            .map(|&x| nines_label(x))
            .collect();
        assert_eq!(labels, ["50", "90", "99", "99.9", "99.99"]);
    }

    #[test]
    fn numbers_and_durations_print_without_noise() {
        assert_eq!(fmt_num(0.05), "0.05");
        assert_eq!(fmt_num(2.5), "2.5");
        assert_eq!(fmt_num(10.0), "10");
        assert_eq!(fmt_num(1200.0), "1200");
        assert_eq!(fmt_num(0.3), "0.3");
        assert_eq!(fmt_pm(0.3, 0.0536), "0.300 ± 0.054");
        assert_eq!(fmt_pm(2900.0, 373.0), "2900 ± 373");
        assert_eq!(fmt_pm(310.0, 39.9), "310 ± 40");
        assert_eq!(fmt_pm(7.0, 0.0), "7");
        assert_eq!(fmt_ns(500.0), "500 ns");
        assert_eq!(fmt_ns(20_000.0), "20 µs");
        assert_eq!(fmt_ns(1_500_000.0), "1.5 ms");
        assert_eq!(fmt_ns(2e9), "2 s");
    }

    #[test]
    fn log_axes_always_carry_two_labelled_ticks() {
        for (a, b) in [(1.0, 1.1), (0.3, 2.0), (0.02, 80.0), (5e3, 4e7), (7.0, 7.0)] {
            let (lo, hi, t) = log_axis(a, b);
            assert!(lo <= a && hi >= b, "{a}..{b}: {lo}..{hi}");
            assert!(t.major.len() >= 2, "{a}..{b}: {:?}", t.major);
            assert!(t.major.iter().all(|&x| x >= lo * 0.999 && x <= hi * 1.001));
        }
        let (_, _, t) = log_axis(5e3, 4e7);
        assert!(t.major.contains(&1e4) && t.major.contains(&1e7));
        // Found by the plot_data fuzzer: a subnormal minimum padded to 0 took log10 to -inf
        // and the decade count overflowed; the largest finite maximum padded to inf.
        for (a, b) in [
            (5e-324, 1.0),
            (1e-310, 1e-309),
            (1.0, f64::MAX),
            (5e-324, f64::MAX),
        ] {
            let (lo, hi, t) = log_axis(a, b);
            assert!(
                lo > 0.0 && hi.is_finite() && lo < hi,
                "{a}..{b}: {lo}..{hi}"
            );
            assert!(t.major.len() >= 2, "{a}..{b}: {:?}", t.major);
        }
    }

    #[test]
    fn linear_axes_step_by_one_two_five() {
        let (hi, t) = linear_axis(0.0, 9.3, 5);
        assert_eq!(t.major, vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(hi, 10.0);
        let (hi, _) = linear_axis(0.0, 1.0, 5);
        assert!((hi - 1.0).abs() < 1e-12);
        let (hi, t) = linear_axis(5.3, 64.0, 6);
        assert_eq!(t.major, vec![10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0]);
        assert_eq!(hi, 70.0);
    }

    #[test]
    fn linear_axes_survive_ranges_no_step_can_divide() {
        // A subnormal top made the step 0 and the tick range 0..=i64::MAX (never ending).
        for (lo, hi) in [
            (0.0, 5e-324),
            (0.0, 1e-310),
            (1.8e10, 1.8e10 + 1e-6),
            (0.0, f64::MAX),
        ] {
            let (top, t) = linear_axis(lo, hi, 6);
            assert!(
                top >= hi || !top.is_finite() || top > lo,
                "{lo}..{hi}: {top}"
            );
            assert!(
                t.major.len() <= 30 && t.minor.len() <= 30,
                "{lo}..{hi}: {t:?}"
            );
        }
    }

    #[test]
    fn labels_are_pushed_apart_and_kept_inside() {
        let out = spread_labels(&[100, 102, 50, 101], 18, 0, 200);
        let mut s = out.clone();
        s.sort();
        for w in s.windows(2) {
            assert!(w[1] - w[0] >= 18, "{out:?}");
        }
        assert_eq!(out[2], 50);
        let out = spread_labels(&[195, 198, 199], 20, 0, 200);
        assert!(out.iter().all(|&y| y <= 200), "{out:?}");
    }
}
