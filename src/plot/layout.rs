//! Tests on the drawn pictures: every text element of every plot's SVG, measured with the
//! bundled font as plotters lays it out, must lie inside the image; on the 32 runs of
//! `--flags all`, no two texts may overlap (a legend running over the footer), no label may
//! be cut with an ellipsis, and every run must be named, under a label of its own.

use super::data::PlotData;
use super::style::{FONT, register_fonts};
use super::{SIZE, fixture, plan, render_svg};
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::Path;

/// One drawn text: its content and its box in pixels `(left, top, right, bottom)`.
#[derive(Debug, Clone)]
struct Placed {
    text: String,
    bbox: (f64, f64, f64, f64),
}

/// The value of attribute `name` in the start tag `tag`.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    tag[at..].split('"').next()
}

/// The text of an SVG text element with XML's escapes undone.
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Every text element of `svg`, placed as the browser would: the font size is plotters'
/// pixel size over 1.24 in the SVG, `dy` says the vertical anchor, `text-anchor` the
/// horizontal one, and a `rotate(270, …)` turns the box upright.
fn texts(svg: &str) -> Vec<Placed> {
    assert!(register_fonts());
    let area = BitMapBackend::new("/dev/null", (8, 8)).into_drawing_area();
    let mut out = Vec::new();
    for chunk in svg.split("<text").skip(1) {
        let (tag, rest) = chunk.split_once('>').expect("a text tag");
        let text = unescape(rest.split("</text>").next().unwrap_or_default().trim());
        let num = |n: &str| attr(tag, n).and_then(|v| v.parse::<f64>().ok());
        let (x, y) = (num("x").unwrap_or(0.0), num("y").unwrap_or(0.0));
        let px = num("font-size").expect("a font size") * 1.24;
        let style = if attr(tag, "font-weight") == Some("bold") {
            FontStyle::Bold
        } else {
            FontStyle::Normal
        };
        let font = TextStyle::from((FONT, px, style).into_font());
        let w = f64::from(area.estimate_text_size(&text, &font).expect("measured").0);
        let (l, r) = match attr(tag, "text-anchor") {
            Some("middle") => (x - w / 2.0, x + w / 2.0),
            Some("end") => (x - w, x),
            _ => (x, x + w),
        };
        let (t, b) = match attr(tag, "dy") {
            Some("0.76em") => (y, y + px),
            Some("-0.5ex") => (y - px, y),
            _ => (y - px / 2.0, y + px / 2.0),
        };
        let bbox = if attr(tag, "transform").is_some_and(|t| t.starts_with("rotate(270")) {
            // Turned about (x, y): the run of the text goes up the page.
            let (cx, cy) = (x, y);
            (cx + (t - cy), cy - (r - cx), cx + (b - cy), cy - (l - cx))
        } else {
            (l, t, r, b)
        };
        out.push(Placed { text, bbox });
    }
    out
}

/// Every plot of `data` drawn at `size` as its name and placed texts.
fn drawn(data: &PlotData, size: (u32, u32)) -> Vec<(String, Vec<Placed>)> {
    drawn_at(data, size, false)
        .into_iter()
        .map(|(name, _, texts)| (name, texts))
        .collect()
}

/// [`drawn`], with the size each plot was drawn at; `served`, as `qsim serve` draws it for a
/// box of `size` (the failures plot may come taller: [`super::served_size`]).
#[allow(clippy::type_complexity)]
fn drawn_at(
    data: &PlotData,
    size: (u32, u32),
    served: bool,
) -> Vec<(String, (u32, u32), Vec<Placed>)> {
    assert!(register_fonts());
    plan(data)
        .into_iter()
        .map(|p| {
            let at = if served {
                super::served_size(p.kind, size)
            } else {
                size
            };
            let svg = render_svg(data, p.kind, Path::new(&p.name), at).expect("drawn");
            (p.name, at, texts(&String::from_utf8(svg).expect("UTF-8")))
        })
        .collect()
}

/// Asserts that every text of every plot of `data` lies inside the image.
fn assert_inside(data: &PlotData) {
    assert_inside_at(data, SIZE, false, |_| true);
}

/// Asserts that every text of the plots of `data` that `which` picks by name, drawn at `size`
/// (`served`: as `qsim serve` draws them for a box of that size), lies inside the image.
fn assert_inside_at(data: &PlotData, size: (u32, u32), served: bool, which: impl Fn(&str) -> bool) {
    let picked = drawn_at(data, size, served).into_iter();
    for (name, at, texts) in picked.filter(|(n, _, _)| which(n)) {
        let (w, h) = (f64::from(at.0), f64::from(at.1));
        for t in texts.iter().filter(|t| !t.text.trim().is_empty()) {
            let (l, top, r, b) = t.bbox;
            assert!(
                l >= -1.0 && top >= -1.0 && r <= w + 1.0 && b <= h + 1.0,
                "{name}: {:?} at {:?} leaves the {w}×{h} image",
                t.text,
                t.bbox
            );
        }
    }
}

/// Whether two boxes share more than a sliver (2 px each way).
fn overlap(a: (f64, f64, f64, f64), b: (f64, f64, f64, f64)) -> bool {
    a.0.max(b.0) + 2.0 < a.2.min(b.2) && a.1.max(b.1) + 2.0 < a.3.min(b.3)
}

#[test]
fn every_text_of_every_plot_lies_inside_the_image() {
    assert_inside(&fixture::with_memory());
    assert_inside(&fixture::without_memory());
    assert_inside(&fixture::five_variants());
    assert_inside(&fixture::flags_all());
}

/// The sizes `qsim serve` may draw its plots at: its bounds, and the boxes its page asks for in
/// a 900×720 window, at 1280×720 (one plot per row) and in the projector layout there (as
/// tests/serve.rs measures them in Chromium), and that layout's box at a zoom of 1.5.
const SERVE_SIZES: [(u32, u32); 7] = [
    (480, 320),
    (2400, 1600),
    (480, 1600),
    (496, 331),
    (876, 584),
    (800, 393),
    (982, 480),
];
/// The page's boxes of [`SERVE_SIZES`] (within the bounds, not at them).
const PAGE_SIZES: [(u32, u32); 3] = [(496, 331), (876, 584), (982, 480)];
const SERVE_PLOTS: [&str; 3] = ["percentiles", "stages", "failures"];

/// The plots `qsim serve` draws at the size of their box keep their text inside the image at
/// every size it may ask for, and with three runs (the policies of two-queue, what the page
/// opens on) the percentile and stage plots keep their texts apart at the sizes its page asks
/// for; the failures plot too, side by side in a wide box and taller than a narrow one
/// ([`super::served_size`]).
#[test]
fn the_plots_the_page_draws_fit_every_size_it_may_ask() {
    for data in [
        fixture::with_memory(),
        fixture::without_memory(),
        fixture::five_variants(),
    ] {
        for size in SERVE_SIZES {
            assert_inside_at(&data, size, true, |n| SERVE_PLOTS.contains(&n));
        }
        // Five runs' bars crowd a plot 331 px tall: their end labels may touch there.
        for size in PAGE_SIZES.into_iter().filter(|_| data.runs.len() <= 3) {
            for (name, _, texts) in drawn_at(&data, size, true)
                .into_iter()
                .filter(|(n, _, _)| SERVE_PLOTS.contains(&n.as_str()))
            {
                let texts: Vec<&Placed> =
                    texts.iter().filter(|t| !t.text.trim().is_empty()).collect();
                for (i, a) in texts.iter().enumerate() {
                    for b in &texts[i + 1..] {
                        assert!(
                            !overlap(a.bbox, b.bbox),
                            "{size:?} {name}: {:?} {:?} overlaps {:?} {:?}",
                            a.text,
                            a.bbox,
                            b.text,
                            b.bbox
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn the_32_runs_of_flags_all_are_each_named_once_uncut_and_nothing_overlaps() {
    let data = fixture::flags_all();
    let labels = super::drawn_labels(&data);
    let distinct: std::collections::BTreeSet<&String> = labels.iter().collect();
    assert_eq!(distinct.len(), 32, "{labels:?}");
    assert!(labels.iter().all(|l| l.chars().count() <= 14), "{labels:?}");
    for (name, texts) in drawn(&data, SIZE) {
        let texts: Vec<&Placed> = texts.iter().filter(|t| !t.text.trim().is_empty()).collect();
        for t in &texts {
            assert!(!t.text.contains('…'), "{name}: {:?} is cut", t.text);
        }
        for (i, a) in texts.iter().enumerate() {
            for b in &texts[i + 1..] {
                assert!(
                    !overlap(a.bbox, b.bbox),
                    "{name}: {:?} {:?} overlaps {:?} {:?}",
                    a.text,
                    a.bbox,
                    b.text,
                    b.bbox
                );
            }
        }
        if ["percentiles", "percentiles-each", "cdf", "tail", "stages"].contains(&name.as_str()) {
            for l in &labels {
                let n = texts.iter().filter(|t| &t.text == l).count();
                assert_eq!(n, 1, "{name}: run {l:?} is named {n} times");
            }
        }
    }
}

#[test]
fn a_rotated_text_s_box_stands_upright() {
    let svg = r#"<text x="14" y="400" dy="0.76em" text-anchor="middle" font-family="sans-serif" font-size="16.129" transform="rotate(270, 14, 400)">read latency</text>"#;
    let t = &texts(svg)[0];
    let (l, top, r, b) = t.bbox;
    assert!(r - l < 25.0 && b - top > 80.0, "{:?}", t.bbox);
    assert!(top < 400.0 && b > 400.0 && l >= 14.0 - 1.0);
}

#[test]
fn every_file_name_has_at_most_60_characters() {
    let mut data = fixture::five_variants();
    // A sensitivity study's run label, the longest the shipped docs make.
    data.runs[3].label = "crypt.encrypt_rate+crypt.decrypt_rate+/split".into();
    for d in [fixture::flags_all(), data] {
        for f in super::plot_files(&d) {
            assert!(f.chars().count() <= 60, "{f}");
        }
    }
}
