//! Plots of a run's results (plotters; PNG and SVG), drawn from [`data::PlotData`] only, so a
//! JSON export redraws them without re-simulating.
//!
//! This module owns the pictures: which files a [`data::PlotData`] yields ([`plot_names`]),
//! how each is drawn, and writing them through [`crate::output`] ([`render_all`]). Every plot is written
//! as `<name>.png` and `<name>.svg`, [`WIDTH`] × [`HEIGHT`] px:
//!
//! | name | shows |
//! |---|---|
//! | `percentiles` | read clat (ms, log) against percentile on a "nines" axis, one line per run, 95 % CI band |
//! | `percentiles-each` | with more runs than the line plots draw in colour (8 or more): the same, one small panel per run over the others in grey |
//! | `cdf` | CDF of read clat per run from the pooled histogram, log time axis |
//! | `tail` | the same as 1 − CDF on a log axis (share of reads slower than t): the tail a CDF hides |
//! | `stages` | mean time per stage per run, stacked ("where the time went") |
//! | `failures` | GFP_ATOMIC failures per run by order, and kswapd congestion_wait per class, with CIs (only with memory) |
//! | `timeline-<label>` | replication 0 of a run over time: free pages and watermarks, kswapd state, crypt queues, dirty pages |
//! | `knee-<metric>[-<slice>]` | a sweep: the metric against the swept value, one line per policy with its CI band, knee and crossovers marked |
//! | `tornado-<policy>` | a sensitivity study: each knob's paired effect, low and high, largest on top |
//! | `flags[-<variant>]` | dm-crypt's flag combinations: each one's paired ratio to `dm-crypt` on read p99.9 and total MiB/s, with 95 % CIs |
//!
//! A run whose results equal an earlier run's is labelled `<label> (= <earlier>)` in every
//! plot, since its lines and bars hide under the other's.
//! [`ascii`] draws the same pictures in plain text (`--ascii`), for mail.
//!
//! Text uses DejaVu Sans from the `dejavu` crate, registered with plotters' `ab_glyph`
//! renderer on first use, so drawing needs no system fonts, fontconfig or FreeType. The
//! SVGs name the family `sans-serif`; the bundled font drives their layout.

pub mod ascii;
mod bars;
#[cfg(test)]
mod cvd;
pub mod data;
mod flags;
mod gantt;
mod knee;
#[cfg(test)]
mod layout;
mod lines;
mod multiples;
mod scale;
mod style;
mod timeline;
mod tornado;

use data::PlotData;
pub use gantt::{GanttOptions, gantt_png, gantt_svg};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Width of every plot, px.
pub const WIDTH: u32 = 1200;
/// Height of every plot, px.
pub const HEIGHT: u32 = 800;
/// The size every plot file is drawn at: [`WIDTH`] × [`HEIGHT`] px. `qsim serve` draws its
/// page's plots at the size of their box instead ([`svg_named`]); the layout follows the
/// drawing area, the type keeps its pixel sizes.
pub const SIZE: (u32, u32) = (WIDTH, HEIGHT);

/// Why a plot could not be written; every variant names the file or directory.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The output directory could not be created.
    #[error("cannot create plot directory {}: {source}", dir.display())]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// A plot file could not be written or moved into place.
    #[error("cannot write plot {}: {source}", path.display())]
    Write {
        /// The plot file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// plotters failed while drawing or encoding a plot.
    #[error("cannot draw plot {}: {message}", path.display())]
    Draw {
        /// The plot file.
        path: PathBuf,
        /// plotters' message.
        message: String,
    },
    /// The bundled font could not be registered (a broken build).
    #[error("cannot draw plot {}: the bundled DejaVu Sans font failed to load", path.display())]
    Font {
        /// The plot file.
        path: PathBuf,
    },
}

/// One plot: its file stem and what to draw.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Planned {
    name: String,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Percentiles,
    /// One small panel per run ([`multiples`]), when a line plot has too many runs to
    /// draw each in colour.
    PercentilesEach,
    Cdf,
    Tail,
    Stages,
    Failures,
    /// The registry metric at this index of `report::metrics::METRICS`, one bar per run.
    Metric(usize),
    /// The timeline of run `i`.
    Timeline(usize),
    /// The knee plot of the sweep's table `i`.
    Knee(usize),
    /// The tornado chart of the study's ranking `i`.
    Tornado(usize),
    /// The flag comparison `i` ([`data::PlotData::flags`]).
    Flags(usize),
}

/// The plots `data` yields, in the order [`render_all`] writes them.
fn plan(data: &PlotData) -> Vec<Planned> {
    let mut out = vec![Planned {
        name: "percentiles".into(),
        kind: Kind::Percentiles,
    }];
    if data.runs.len() > lines::MAX_LINES {
        out.push(Planned {
            name: "percentiles-each".into(),
            kind: Kind::PercentilesEach,
        });
    }
    out.extend([
        Planned {
            name: "cdf".into(),
            kind: Kind::Cdf,
        },
        Planned {
            name: "tail".into(),
            kind: Kind::Tail,
        },
        Planned {
            name: "stages".into(),
            kind: Kind::Stages,
        },
    ]);
    if data.runs.iter().any(|r| r.memory.is_some()) {
        out.push(Planned {
            name: "failures".into(),
            kind: Kind::Failures,
        });
    }
    // Only keys the registry knows: a results file's keys never become file names unchecked.
    for (i, m) in crate::report::metrics::METRICS.iter().enumerate() {
        if data
            .runs
            .iter()
            .any(|r| r.metrics.iter().any(|x| x.key == m.key))
        {
            out.push(Planned {
                name: format!("metric-{}", m.key),
                kind: Kind::Metric(i),
            });
        }
    }
    sweep_plots(data, &mut out);
    for (i, f) in data.flags.iter().enumerate() {
        let name = match &f.variant {
            Some(v) => format!("flags-{}", file_label(v, i)),
            None => "flags".to_string(),
        };
        out.push(Planned {
            name,
            kind: Kind::Flags(i),
        });
    }
    let mut taken: std::collections::HashSet<String> = out.iter().map(|p| p.name.clone()).collect();
    for (i, run) in data.runs.iter().enumerate() {
        if run.timeline.is_none() {
            continue;
        }
        let label = crate::report::flags::coded_label(&run.label);
        let base = format!("timeline-{}", file_label(&label, i));
        let mut name = base.clone();
        let mut k = 2;
        while taken.contains(&name) {
            name = format!("{base}-{k}");
            k += 1;
        }
        taken.insert(name.clone());
        out.push(Planned {
            name,
            kind: Kind::Timeline(i),
        });
    }
    out
}

/// The knee plots of a sweep and the tornado charts of a study, if `data` holds one: only
/// metric keys of the registry and safe file labels become file names.
fn sweep_plots(data: &PlotData, out: &mut Vec<Planned>) {
    let Some(sw) = &data.sweep else { return };
    let known = |key: &str| crate::report::metrics::METRICS.iter().any(|m| m.key == key);
    for (i, c) in sw.curves.iter().enumerate() {
        if !known(&c.metric) {
            continue;
        }
        let name = match &c.slice {
            Some(s) => format!("knee-{}-{}", c.metric, file_label(s, i)),
            None => format!("knee-{}", c.metric),
        };
        out.push(Planned {
            name,
            kind: Kind::Knee(i),
        });
    }
    for (i, r) in sw.rankings.iter().enumerate() {
        out.push(Planned {
            name: format!("tornado-{}", file_label(&r.policy, i)),
            kind: Kind::Tornado(i),
        });
    }
}

/// A run label as a file-name part: `/` and white space become `_`, `+` becomes `plus`
/// (`+kswapd-stay-awake` → `plus-kswapd-stay-awake`, `2.6.30/split` → `2.6.30_split`), any
/// other character outside `[A-Za-z0-9._-]` becomes `_`, runs of separators collapse and
/// none lead or trail. An empty result becomes `run<i>`; one longer than [`MAX_FILE_LABEL`]
/// bytes keeps its first 28 and adds `-` and 16 hex digits of a hash of the whole label.
pub fn file_label(label: &str, i: usize) -> String {
    safe_label(label).unwrap_or_else(|| format!("run{i}"))
}

/// [`file_label`] without its fallback: `None` when nothing of `label` is left.
fn safe_label(label: &str) -> Option<String> {
    let mut raw = String::new();
    for c in label.chars() {
        match c {
            '+' => raw.push_str("-plus-"),
            c if c.is_ascii_alphanumeric() || c == '.' => raw.push(c),
            '-' => raw.push('-'),
            _ => raw.push('_'),
        }
    }
    let mut out = String::new();
    for c in raw.chars() {
        let sep = c == '-' || c == '_';
        if sep && out.ends_with(['-', '_']) {
            continue;
        }
        out.push(c);
    }
    let out = out.trim_matches(['-', '_', '.']);
    if out.is_empty() {
        return None;
    }
    if out.len() <= MAX_FILE_LABEL {
        return Some(out.to_string());
    }
    // Long: a prefix plus a hash of the whole label, so two labels sharing the prefix still
    // get different names. `out` is ASCII, so any byte index is a character boundary.
    let keep = out[..MAX_FILE_LABEL - 17].trim_end_matches(['-', '_', '.']);
    Some(format!("{keep}-{:016x}", fnv1a(label.as_bytes())))
}

/// Longest [`file_label`], bytes: `timeline-`, the label, a `-2` against a clash and
/// `.png` stay within 60 characters, a name a reader can take in.
pub const MAX_FILE_LABEL: usize = 45;

/// FNV-1a, 64 bit: a stable hash for long labels' file names (the same label gives the same
/// name on every machine and in every version).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The directory name `--plots` uses for a scenario called `name` (under `plots/`): its
/// [`file_label`], so no `/`, `..` or white space can lead outside `plots/`, at most
/// [`MAX_FILE_LABEL`] bytes, and `scenario` when nothing is left.
pub fn dir_name(name: &str) -> String {
    safe_label(name).unwrap_or_else(|| "scenario".to_string())
}

/// The file stems `data` yields, in order: `percentiles`, `cdf`, `stages`, `failures`
/// (when some run has memory figures), then `timeline-<label>` per run with a timeline.
/// Each is written as `<stem>.png` and `<stem>.svg`.
pub fn plot_names(data: &PlotData) -> Vec<String> {
    plan(data).into_iter().map(|p| p.name).collect()
}

/// The file names `data` yields, in the order [`render_all`] returns them
/// (`percentiles.png`, `percentiles.svg`, `cdf.png`, ...).
pub fn plot_files(data: &PlotData) -> Vec<String> {
    plot_names(data)
        .into_iter()
        .flat_map(|n| [format!("{n}.png"), format!("{n}.svg")])
        .collect()
}

/// Draws every plot of `data` into `dir` (created if missing) as PNG and SVG, each file
/// written by [`crate::output::write_file`] (whole or not at all; through a symlink or a
/// device), and returns the paths in the order of [`plot_files`]. Existing files of the same
/// names are replaced.
pub fn render_all(data: &PlotData, dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    fs::create_dir_all(dir).map_err(|source| PlotError::CreateDir {
        dir: dir.to_path_buf(),
        source,
    })?;
    let mut out = Vec::new();
    for p in plan(data) {
        let png = dir.join(format!("{}.png", p.name));
        write(&png, &render_png(data, p.kind, &png)?)?;
        out.push(png);
        let svg = dir.join(format!("{}.svg", p.name));
        write(&svg, &render_svg(data, p.kind, &svg, SIZE)?)?;
        out.push(svg);
    }
    Ok(out)
}

/// Writes one plot file; `-` is not special here (it is a file name in the plot directory).
fn write(path: &Path, bytes: &[u8]) -> Result<(), PlotError> {
    crate::output::write_file(path, bytes, &mut std::io::sink()).map_err(|source| {
        PlotError::Write {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// Draws every plot of `data` in memory, as [`render_all`] would but writing no file: each
/// into a [`WIDTH`] × [`HEIGHT`] RGB buffer (not encoded) and into an SVG string. Returns the
/// SVG text's total length. The fuzzer and the tests use it to run the drawing code on any
/// data that [`data::from_results_json`] accepts.
pub fn draw_in_memory(data: &PlotData) -> Result<usize, PlotError> {
    let mut svg_len = 0;
    for p in plan(data) {
        let path = PathBuf::from(&p.name);
        draw_rgb(data, p.kind, &path)?;
        svg_len += render_svg(data, p.kind, &path, SIZE)?.len();
    }
    Ok(svg_len)
}

/// One plot of `data` as an SVG string `size` = (width, height) px, by the name [`plot_names`]
/// gives it (`percentiles`, `stages`, `failures`, ...), or `None` when `data` yields no plot of
/// that name. `qsim serve` draws its page's plots through it at the size of their box on the
/// page (so one SVG unit is one CSS pixel and the type keeps its size); at [`SIZE`] they are the
/// pictures `qsim run --plots` writes. The caller bounds `size` (the drawing holds the SVG
/// text only, no pixel buffer); the failures plot may come taller than asked, its two panels
/// stacked in a narrow box.
pub fn svg_named(
    data: &PlotData,
    name: &str,
    size: (u32, u32),
) -> Result<Option<String>, PlotError> {
    let Some(p) = plan(data).into_iter().find(|p| p.name == name) else {
        return Ok(None);
    };
    let path = PathBuf::from(format!("{name}.svg"));
    let bytes = render_svg(data, p.kind, &path, served_size(p.kind, size))?;
    // plotters writes the SVG into a String, so its bytes are UTF-8.
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// The size [`svg_named`] draws plot `kind` at for a box of `size`: the box, but for the
/// failures plot in a box too narrow for its panels side by side, which comes taller
/// ([`bars::failures_size`]; the page lets it grow downwards).
fn served_size(kind: Kind, size: (u32, u32)) -> (u32, u32) {
    match kind {
        Kind::Failures => bars::failures_size(size),
        _ => size,
    }
}

/// For each run, the first earlier run whose results are the same (its read latency
/// histogram, stages, memory figures and metrics; not its timeline or label), if any: two
/// policies that behave alike draw on top of each other, and the legend must say so.
fn same_as(data: &PlotData) -> Vec<Option<usize>> {
    let same = |a: &data::RunPlot, b: &data::RunPlot| {
        a.read_clat_bins == b.read_clat_bins
            && a.read_percentiles == b.read_percentiles
            && a.read_stages == b.read_stages
            && a.memory == b.memory
            && a.metrics == b.metrics
    };
    (0..data.runs.len())
        .map(|k| (0..k).find(|&j| same(&data.runs[j], &data.runs[k])))
        .collect()
}

/// Each run's label as drawn: its [`short_label`](crate::report::flags::short_label)
/// (`sc+nr` for `dm-crypt+same_cpu_crypt+no_read_workqueue`), or its whole label where two
/// runs' short labels would be the same.
fn drawn_labels(data: &PlotData) -> Vec<String> {
    let short: Vec<String> = data
        .runs
        .iter()
        .map(|r| crate::report::flags::short_label(&r.label))
        .collect();
    short
        .iter()
        .enumerate()
        .map(|(k, l)| {
            if short.iter().filter(|x| *x == l).count() > 1 {
                data.runs[k].label.clone()
            } else {
                l.clone()
            }
        })
        .collect()
}

/// `data` with each run labelled as drawn ([`drawn_labels`]), and each run that repeats an
/// earlier one labelled `<label> (= <earlier label>)`.
fn marked(data: &PlotData) -> std::borrow::Cow<'_, PlotData> {
    let twins = same_as(data);
    let labels = drawn_labels(data);
    let same = data.runs.iter().zip(&labels).all(|(r, l)| &r.label == l);
    if same && twins.iter().all(Option::is_none) {
        return std::borrow::Cow::Borrowed(data);
    }
    let mut out = data.clone();
    for (k, j) in twins.iter().enumerate() {
        out.runs[k].label = match j {
            Some(j) => format!("{} (= {})", labels[k], labels[*j]),
            None => labels[k].clone(),
        };
    }
    std::borrow::Cow::Owned(out)
}

/// Draws plot `kind` on `root`; runs with identical results are marked in the labels
/// ([`marked`]).
fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &PlotData,
    kind: Kind,
) -> style::Drawn<(), DB> {
    let data = &*marked(data);
    match kind {
        Kind::Percentiles => lines::percentiles(root, data),
        Kind::PercentilesEach => multiples::percentiles_each(root, data),
        Kind::Cdf => lines::cdf(root, data),
        Kind::Tail => lines::tail(root, data),
        Kind::Stages => bars::stages(root, data),
        Kind::Failures => bars::failures(root, data),
        Kind::Metric(i) => bars::metric(root, data, &crate::report::metrics::METRICS[i]),
        Kind::Timeline(i) => timeline::timeline(root, data, &data.runs[i]),
        Kind::Knee(i) => match &data.sweep {
            Some(sw) => knee::knee(root, data, &sw.curves[i]),
            None => Ok(()),
        },
        Kind::Tornado(i) => match &data.sweep {
            Some(sw) => tornado::tornado(root, data, &sw.rankings[i]),
            None => Ok(()),
        },
        Kind::Flags(i) => flags::flags(root, data, &data.flags[i]),
    }
}

fn fonts(path: &Path) -> Result<(), PlotError> {
    if style::register_fonts() {
        Ok(())
    } else {
        Err(PlotError::Font {
            path: path.to_path_buf(),
        })
    }
}

fn draw_err(path: &Path, e: impl std::fmt::Display) -> PlotError {
    PlotError::Draw {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Plot `kind` as raw RGB pixels (`path` only names it in errors).
fn draw_rgb(data: &PlotData, kind: Kind, path: &Path) -> Result<Vec<u8>, PlotError> {
    fonts(path)?;
    let mut rgb = vec![0u8; WIDTH as usize * HEIGHT as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&root, data, kind).map_err(|e| draw_err(path, e))?;
        root.present().map_err(|e| draw_err(path, e))?;
    }
    Ok(rgb)
}

/// Plot `kind` as PNG bytes (`path` only names it in errors).
fn render_png(data: &PlotData, kind: Kind, path: &Path) -> Result<Vec<u8>, PlotError> {
    let rgb = draw_rgb(data, kind, path)?;
    encode_png(&rgb, WIDTH, HEIGHT, path)
}

/// An RGB buffer of `width` × `height` as PNG bytes (`path` only names it in errors).
fn encode_png(rgb: &[u8], width: u32, height: u32, path: &Path) -> Result<Vec<u8>, PlotError> {
    let mut png = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::png::PngEncoder::new(&mut png),
        rgb,
        width,
        height,
        image::ColorType::Rgb8,
    )
    .map_err(|e| draw_err(path, e))?;
    Ok(png)
}

/// Plot `kind` as SVG bytes, `size` = (width, height) px (`path` only names it in errors).
fn render_svg(
    data: &PlotData,
    kind: Kind,
    path: &Path,
    size: (u32, u32),
) -> Result<Vec<u8>, PlotError> {
    fonts(path)?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        draw(&root, data, kind).map_err(|e| draw_err(path, e))?;
        root.present().map_err(|e| draw_err(path, e))?;
    }
    Ok(svg.into_bytes())
}

#[cfg(test)]
mod fixture;

#[cfg(test)]
mod tests;
