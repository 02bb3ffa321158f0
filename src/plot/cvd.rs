//! Colour-vision deficiency checks for the palettes: each colour simulated as a protanope,
//! a deuteranope and a tritanope sees it (Machado, Oliveira and Fernandes 2009, severity
//! 1.0, applied in linear RGB), then compared in CIELAB. A palette passes when every pair of
//! its colours is at least [`MIN_DELTA_E`] apart for normal vision and under each
//! simulation, so two series of one plot never become the same shade for a reader.

use plotters::style::RGBColor;

/// Least CIE76 ΔE between any two colours of one plot, under every simulation. About 2.3 is
/// a just-noticeable difference; Okabe–Ito's orange and vermillion come to 18 under
/// deuteranopia, and readers took them for one olive.
pub(super) const MIN_DELTA_E: f64 = 24.0;

/// A colour-vision simulation: a 3×3 matrix on linear RGB.
type Matrix = [[f64; 3]; 3];

/// Normal vision.
const NORMAL: Matrix = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
/// Protanopia (no L cones), Machado et al. 2009 at severity 1.0.
const PROTANOPIA: Matrix = [
    [0.152286, 1.052583, -0.204868],
    [0.114503, 0.786281, 0.099216],
    [-0.003882, -0.048116, 1.051998],
];
/// Deuteranopia (no M cones), Machado et al. 2009 at severity 1.0.
const DEUTERANOPIA: Matrix = [
    [0.367322, 0.860646, -0.227968],
    [0.280085, 0.672501, 0.047413],
    [-0.011820, 0.042940, 0.968881],
];
/// Tritanopia (no S cones), Machado et al. 2009 at severity 1.0.
const TRITANOPIA: Matrix = [
    [1.255528, -0.076749, -0.178779],
    [-0.078411, 0.930809, 0.147602],
    [0.004733, 0.691367, 0.303900],
];

/// Every simulation a palette is checked under, with its name.
pub(super) const VISIONS: [(&str, Matrix); 4] = [
    ("normal", NORMAL),
    ("protanopia", PROTANOPIA),
    ("deuteranopia", DEUTERANOPIA),
    ("tritanopia", TRITANOPIA),
];

/// An sRGB channel (0–255) in linear light (0–1).
fn linear(c: u8) -> f64 {
    let c = f64::from(c) / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// `c` as seen under `m`, in linear RGB clamped to the gamut.
fn simulate(c: RGBColor, m: &Matrix) -> [f64; 3] {
    let v = [linear(c.0), linear(c.1), linear(c.2)];
    m.map(|row| (row[0] * v[0] + row[1] * v[1] + row[2] * v[2]).clamp(0.0, 1.0))
}

/// Linear RGB (sRGB primaries, D65) in CIELAB.
fn lab([r, g, b]: [f64; 3]) -> [f64; 3] {
    let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
    let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
    let f = |t: f64| {
        if t > 0.008856 {
            t.cbrt()
        } else {
            7.787 * t + 16.0 / 116.0
        }
    };
    let (fx, fy, fz) = (f(x), f(y), f(z));
    [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
}

/// CIE76 ΔE between `a` and `b` as seen under `m`.
pub(super) fn delta_e(a: RGBColor, b: RGBColor, m: &Matrix) -> f64 {
    let (p, q) = (lab(simulate(a, m)), lab(simulate(b, m)));
    ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
}

/// CIELAB lightness of `c` for normal vision (0 black – 100 white).
pub(super) fn lightness(c: RGBColor) -> f64 {
    lab(simulate(c, &NORMAL))[0]
}

/// The closest pair of `colours` under any simulation: `(ΔE, vision, i, j)`; `None` for
/// fewer than two colours.
pub(super) fn closest_pair(colours: &[RGBColor]) -> Option<(f64, &'static str, usize, usize)> {
    let mut best: Option<(f64, &'static str, usize, usize)> = None;
    for (name, m) in &VISIONS {
        for i in 0..colours.len() {
            for j in i + 1..colours.len() {
                let d = delta_e(colours[i], colours[j], m);
                if best.is_none_or(|b| d < b.0) {
                    best = Some((d, name, i, j));
                }
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::style::{FILL_COLOURS, LINE_COLOURS, OI_ORANGE, OI_VERMILLION};

    fn assert_apart(what: &str, colours: &[RGBColor]) {
        let (d, vision, i, j) = closest_pair(colours).expect("two colours");
        assert!(
            d >= MIN_DELTA_E,
            "{what}: colours {i} {:?} and {j} {:?} are ΔE {d:.1} apart under {vision}",
            colours[i],
            colours[j]
        );
    }

    #[test]
    fn the_simulation_keeps_grey_and_merges_red_and_green_for_a_deuteranope() {
        let grey = RGBColor(128, 128, 128);
        for (_, m) in &VISIONS {
            let s = simulate(grey, m);
            assert!(
                (s[0] - s[1]).abs() < 0.01 && (s[1] - s[2]).abs() < 0.01,
                "{s:?}"
            );
        }
        let (red, green) = (RGBColor(200, 60, 0), RGBColor(90, 110, 0));
        assert!(delta_e(red, green, &NORMAL) > 40.0);
        assert!(delta_e(red, green, &DEUTERANOPIA) < 15.0);
        assert!(lab(simulate(RGBColor(255, 255, 255), &NORMAL))[0] > 99.9);
    }

    #[test]
    fn the_old_stage_colours_fail_and_every_palette_passes() {
        // The pair the issue saw as two olives in the stages plot.
        assert!(delta_e(OI_ORANGE, OI_VERMILLION, &DEUTERANOPIA) < MIN_DELTA_E);
        assert_apart("line colours", &LINE_COLOURS);
        assert_apart("fill colours", &FILL_COLOURS);
        assert_apart("timeline gauges", &crate::plot::timeline::GAUGE_COLOURS);
    }

    #[test]
    fn line_colours_are_dark_enough_for_a_line_on_white() {
        for c in LINE_COLOURS {
            assert!(lightness(c) < 75.0, "{c:?}: L* {}", lightness(c));
        }
    }
}
