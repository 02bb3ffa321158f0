//! Rendering tests: every expected file appears, PNGs and SVGs have the promised size, no
//! temporary file stays behind, and failures name the file.
//!
//! Set `QSIM_PLOT_PREVIEW=DIR` to keep a copy of the fixtures' plots in `DIR` for a look.

use super::*;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};

/// A fresh empty directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("qsim-plot-test-{}-{tag}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.len() > 24, "PNG too short");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR", "first chunk is IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

/// The value of attribute `name` in the first `<svg ...>` tag.
fn svg_attr(text: &str, name: &str) -> Option<String> {
    let tag = &text[text.find("<svg")?..];
    let tag = &tag[..tag.find('>')?];
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    Some(tag[at..at + tag[at..].find('"')?].to_string())
}

fn files_in(dir: &Path) -> BTreeSet<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect()
}

/// Renders `data` and checks the file set, the sizes and the order of the returned paths.
fn render_and_check(data: &PlotData, tag: &str) -> Vec<String> {
    let tmp = TempDir::new(tag);
    let dir = tmp.0.join("plots"); // missing: render_all creates it
    let paths = render_all(data, &dir).unwrap();
    let want = plot_files(data);
    let got: Vec<String> = paths
        .iter()
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_string())
        .collect();
    assert_eq!(got, want, "paths in plot_files order");
    assert!(paths.iter().all(|p| p.parent() == Some(dir.as_path())));
    assert_eq!(
        files_in(&dir),
        want.iter().cloned().collect::<BTreeSet<_>>(),
        "exactly the promised files, no temporaries"
    );
    for p in &paths {
        let bytes = fs::read(p).unwrap();
        match p.extension().and_then(|e| e.to_str()) {
            Some("png") => assert_eq!(png_size(&bytes), (WIDTH, HEIGHT), "{}", p.display()),
            Some("svg") => {
                let text = String::from_utf8(bytes).unwrap();
                assert!(text.trim_start().starts_with("<svg"), "{}", p.display());
                assert_eq!(svg_attr(&text, "width").as_deref(), Some("1200"));
                assert_eq!(svg_attr(&text, "height").as_deref(), Some("800"));
                assert!(
                    text.contains("sans-serif"),
                    "text uses the registered family"
                );
            }
            other => panic!("unexpected extension {other:?}"),
        }
    }
    if let Ok(preview) = std::env::var("QSIM_PLOT_PREVIEW") {
        let preview = Path::new(&preview);
        fs::create_dir_all(preview).unwrap();
        for p in &paths {
            let name = format!("{tag}-{}", p.file_name().unwrap().to_str().unwrap());
            fs::copy(p, preview.join(name)).unwrap();
        }
    }
    plot_names(data)
}

#[test]
fn a_scenario_with_memory_gets_every_plot() {
    let data = fixture::with_memory();
    let names = render_and_check(&data, "memory");
    assert_eq!(
        names,
        [
            "percentiles",
            "cdf",
            "tail",
            "stages",
            "failures",
            "timeline-2.6.30",
            "timeline-2.6.31",
            "timeline-baseline"
        ]
    );
}

#[test]
fn without_memory_there_is_no_failures_plot_and_timelines_only_where_recorded() {
    let data = fixture::without_memory();
    let names = render_and_check(&data, "nomemory");
    assert_eq!(
        names,
        [
            "percentiles",
            "cdf",
            "tail",
            "stages",
            "timeline-fifo",
            "timeline-split"
        ]
    );
}

#[test]
fn five_variants_with_awkward_labels_render() {
    let data = fixture::five_variants();
    let names = render_and_check(&data, "five");
    assert!(names.contains(&"failures".to_string()));
    assert!(names.contains(&"timeline-plus-kswapd-stay-awake".to_string()));
}

#[test]
fn an_empty_plan_still_draws_the_fixed_plots() {
    let data = PlotData {
        sweep: None,
        flags: Vec::new(),
        scenario: "empty".into(),
        seed: 1,
        replications: 1,
        runs: Vec::new(),
    };
    assert_eq!(
        render_and_check(&data, "empty"),
        ["percentiles", "cdf", "tail", "stages"]
    );
}

#[test]
fn labels_become_safe_distinct_file_names() {
    assert_eq!(file_label("2.6.30/split", 0), "2.6.30_split");
    assert_eq!(
        file_label("+kswapd-stay-awake", 0),
        "plus-kswapd-stay-awake"
    );
    assert_eq!(file_label("2.6.32+fix", 0), "2.6.32-plus-fix");
    assert_eq!(file_label("two words", 0), "two_words");
    assert_eq!(file_label("a / b", 0), "a_b");
    assert_eq!(file_label("../x", 0), "x");
    assert_eq!(file_label("", 3), "run3");
    let mut data = fixture::without_memory();
    data.runs[1].label = "fifo".into(); // two runs with one label
    let names = plot_names(&data);
    assert!(names.contains(&"timeline-fifo".to_string()));
    assert!(names.contains(&"timeline-fifo-2".to_string()));
}

#[test]
fn a_failed_write_names_the_file_and_leaves_no_temporary() {
    let tmp = TempDir::new("fail");
    // A directory where the PNG should go makes the rename fail.
    fs::create_dir(tmp.0.join("percentiles.png")).unwrap();
    let err = render_all(&fixture::without_memory(), &tmp.0).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("percentiles.png"), "{msg}");
    assert!(matches!(err, PlotError::Write { .. }), "{err:?}");
    assert_eq!(
        files_in(&tmp.0),
        BTreeSet::from(["percentiles.png".to_string()])
    );

    // A file where the directory should be.
    let file = tmp.0.join("not-a-dir");
    fs::write(&file, "x").unwrap();
    let err = render_all(&fixture::without_memory(), &file.join("plots")).unwrap_err();
    assert!(err.to_string().contains("not-a-dir"), "{err}");
}

#[test]
fn the_bundled_font_registers() {
    assert!(style::register_fonts());
    assert!(style::register_fonts(), "idempotent");
}

/// A run `label` whose timeline covers 300 s in 1 s buckets but whose run ended at 35 s,
/// with a hole (no data) between 10 s and 15 s in its queue gauge: the shape of a finite
/// mel-2009 run read back from JSON, where the empty buckets are `null`.
fn finite_run(label: &str) -> PlotData {
    use crate::stats::series::{Grid, Level, Timeline};
    let s = 1_000_000_000u64;
    let mut tl = Timeline::new(Grid::covering(0, 300 * s, 300));
    let free = tl.add_gauge("free pages", "pages");
    let q = tl.add_gauge("crypt queue io", "requests");
    let k = tl.add_states("kswapd", &["asleep", "reclaiming"]);
    tl.levels.push(Level {
        name: "min".into(),
        value: 10.0,
    });
    tl.enter(k, 0, 0);
    for t in 0..35 {
        tl.gauge(free, t * s, 50.0 - t as f64 * 0.5);
        tl.gauge(q, t * s, (t % 7) as f64);
    }
    tl.finish(35 * s);
    for b in 10..15 {
        tl.gauges[q].min[b] = f64::NAN;
        tl.gauges[q].max[b] = f64::NAN;
    }
    let json = serde_json::to_string(&tl).unwrap();
    assert!(json.contains("null"), "the empty buckets go out as null");
    let tl: Timeline = serde_json::from_str(&json).unwrap();
    PlotData {
        sweep: None,
        flags: Vec::new(),
        scenario: "mel-2009".into(),
        seed: 1,
        replications: 1,
        runs: vec![data::RunPlot {
            label: label.into(),
            read_percentiles: Vec::new(),
            read_clat_bins: Vec::new(),
            read_stages: Vec::new(),
            memory: None,
            timeline: Some(tl),
            metrics: Vec::new(),
        }],
    }
}

/// The SVG of the timeline of run 0.
fn timeline_svg(data: &PlotData) -> String {
    assert!(style::register_fonts());
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&root, data, Kind::Timeline(0)).unwrap();
        root.present().unwrap();
    }
    svg
}

#[test]
fn a_finite_run_s_timeline_ends_where_the_run_did_and_leaves_gaps_empty() {
    // Issue 11, case 12: the axis ran to the 300 s horizon and every empty (null) bucket was
    // drawn at the top of its panel.
    let data = finite_run("fifo");
    let tl = data.runs[0].timeline.as_ref().unwrap();
    // The gauges hold their last level through the bucket the run ended in.
    assert_eq!(timeline::used_buckets(tl), 36);
    let svg = timeline_svg(&data);
    let ticks: Vec<f64> = svg
        .split("</text>")
        .filter_map(|s| s.rsplit('>').next()?.trim().parse::<f64>().ok())
        .collect();
    let max_tick = ticks.iter().copied().fold(0.0, f64::max);
    assert!(ticks.contains(&30.0), "{ticks:?}");
    assert!(
        max_tick < 100.0,
        "the time axis stops near 35 s, not at 300 s: {ticks:?}"
    );
    // An empty bucket is a gap, not a line at the top of the axis.
    let edge: Vec<f64> = tl.gauges[1]
        .max
        .iter()
        .map(|&v| timeline::cut(v, 7.0))
        .collect();
    assert!(edge[12].is_nan() && edge[40].is_nan());
    assert_eq!(timeline::runs_of(&edge[..36]), [(0, 10), (15, 36)]);
}

#[test]
fn huge_labels_are_cut_for_drawing_and_for_file_names() {
    // Issue 11, case 4 (plot side): 20k–100k character names made drawing crawl and file
    // names too long for the file system.
    let long = "v".repeat(100_000);
    let a = file_label(&long, 0);
    let b = file_label(&format!("{long}w"), 1);
    assert!(
        a.len() <= MAX_FILE_LABEL && b.len() <= MAX_FILE_LABEL,
        "{a}"
    );
    assert_ne!(a, b, "labels sharing a long prefix stay apart");
    assert!(a.starts_with("vvvv"));
    assert_eq!(
        a,
        file_label(&long, 5),
        "the name depends on the label only"
    );
    assert_eq!(file_label("fifo", 0), "fifo", "short labels are unchanged");

    let mut data = finite_run(&long);
    data.scenario = "s".repeat(50_000);
    data.runs[0].timeline.as_mut().unwrap().levels[0].name = "l".repeat(20_000);
    data.runs[0].read_stages = vec![("x".repeat(30_000), 1e6)];
    data.runs.push(data.runs[0].clone());
    data.runs[1].label = format!("{long}w");
    let names = plot_names(&data);
    assert!(names.iter().all(|n| n.len() < 100), "{names:?}");
    assert_eq!(names.len(), 6);
    // Everything draws, and no text element holds more than the cap.
    assert!(draw_in_memory(&data).is_ok());
    let svg = timeline_svg(&data);
    for t in svg.split("</text>") {
        let body = t.rsplit('>').next().unwrap();
        assert!(
            body.chars().count() <= style::MAX_TEXT_CHARS,
            "{}",
            body.len()
        );
    }
}

#[test]
fn text_is_clipped_to_a_character_count_with_an_ellipsis() {
    assert_eq!(style::clip_chars("abcdef", 4), "abc…");
    assert_eq!(style::clip_chars("abcd", 4), "abcd");
    assert_eq!(style::clip_chars("äöü", 2), "ä…");
    assert_eq!(style::clip_chars("", 3), "");
}

#[test]
fn a_plotted_registry_metric_gets_its_own_bar_chart_and_unknown_keys_none() {
    use crate::report::plots::MetricPlot;
    let mut data = fixture::without_memory();
    let value = |mean: f64| data::Spread {
        mean,
        stddev: mean / 4.0,
        ci95_half: mean / 3.0,
        values: Vec::new(),
    };
    // The first run measured the metric, the second did not; a key the registry does not know
    // (a hand-edited results file) must neither draw a chart nor become a file name.
    data.runs[0].metrics = vec![
        MetricPlot {
            key: "elapsed_s".into(),
            value: value(31.5),
        },
        MetricPlot {
            key: "../../etc/passwd".into(),
            value: value(1.0),
        },
    ];
    let names = render_and_check(&data, "metric");
    assert_eq!(
        names,
        [
            "percentiles",
            "cdf",
            "tail",
            "stages",
            "metric-elapsed_s",
            "timeline-fifo",
            "timeline-split"
        ]
    );
}

#[test]
fn runs_with_identical_results_are_marked_and_others_are_not() {
    let mut data = fixture::without_memory();
    assert!(super::same_as(&data).iter().all(Option::is_none));
    assert!(matches!(
        super::marked(&data),
        std::borrow::Cow::Borrowed(_)
    ));
    let mut twin = data.runs[0].clone();
    twin.label = "twin".into();
    twin.timeline = None; // a timeline never decides
    data.runs.push(twin);
    let k = data.runs.len() - 1;
    let twins = super::same_as(&data);
    assert_eq!(twins[k], Some(0));
    let first = data.runs[0].label.clone();
    assert_eq!(
        super::marked(&data).runs[k].label,
        format!("twin (= {first})")
    );
    // One bin more and they differ.
    data.runs[k].read_clat_bins.push((u64::MAX, 1));
    assert_eq!(super::same_as(&data)[k], None);
}

#[test]
fn few_replications_draw_dots_and_many_draw_whiskers() {
    use crate::report::plots::DOTS_BELOW;
    let mut data = fixture::with_memory();
    for reps in [2u32, DOTS_BELOW as u32 - 1, DOTS_BELOW as u32, 10] {
        data.replications = reps;
        for r in &mut data.runs {
            if let Some(m) = &mut r.memory {
                m.failures.values = if (reps as usize) < DOTS_BELOW {
                    (0..reps).map(|i| f64::from(i) * 10.0).collect()
                } else {
                    Vec::new()
                };
            }
        }
        let files = render_and_check(&data, &format!("dots{reps}"));
        assert!(files.iter().any(|f| f.starts_with("failures")), "{files:?}");
    }
}

#[test]
fn one_plot_by_name_is_the_svg_render_all_writes() {
    let data = fixture::with_memory();
    let svg = svg_named(&data, "percentiles", SIZE)
        .unwrap()
        .expect("a percentile plot");
    assert!(
        svg.starts_with("<svg") && svg.contains("</svg>"),
        "{svg:.80}"
    );
    let path = PathBuf::from("percentiles.svg");
    let kind = plan(&data)[0].kind;
    assert_eq!(
        svg.as_bytes(),
        render_svg(&data, kind, &path, SIZE).unwrap()
    );
    assert!(svg_named(&data, "failures", SIZE).unwrap().is_some());
    assert!(svg_named(&data, "no-such-plot", SIZE).unwrap().is_none());
}
