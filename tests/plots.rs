//! `qsim run --plots` and `qsim plot` through the real binary: the promised PNG and SVG files
//! appear at 1200×800 for the shipped memory scenarios, and a JSON export redraws the same set
//! byte for byte without re-simulating.

use crate::util::{Run, TempDir};
use std::collections::BTreeSet;
use std::path::Path;

/// Width and height from a PNG's IHDR chunk (the first chunk after the signature).
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.len() > 24, "PNG too short");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

fn files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .expect("plot directory")
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect()
}

/// Checks every file in `dir` is a valid 1200×800 PNG or SVG and returns the file names.
fn check_plots(dir: &Path) -> BTreeSet<String> {
    let names = files(dir);
    for name in &names {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        if name.ends_with(".png") {
            assert_eq!(png_size(&bytes), (1200, 800), "{name}");
        } else {
            assert!(name.ends_with(".svg"), "unexpected file {name}");
            let text = String::from_utf8(bytes).expect("SVG is text");
            let tag = &text[text.find("<svg").expect("an svg element")..];
            let tag = &tag[..tag.find('>').unwrap()];
            assert!(
                tag.contains("width=\"1200\"") && tag.contains("height=\"800\""),
                "{name}: {tag}"
            );
            assert!(text.trim_end().ends_with("</svg>"), "{name} is complete");
        }
    }
    names
}

#[test]
fn run_draws_every_plot_and_qsim_plot_redraws_the_same_from_json() {
    for (scenario, timelines) in [
        ("two-queue", &["fifo", "split", "prio"][..]),
        (
            "gfp-atomic-storm",
            &[
                "2.6.30",
                "2.6.31",
                "baseline",
                "plus-kswapd-stay-awake",
                "plus-dm-crypt-unplug",
            ][..],
        ),
    ] {
        let tmp = TempDir::new();
        let dir = tmp.path().join("plots");
        let json = tmp.path().join("results.json");
        Run::of(&[
            "run",
            scenario,
            "--duration",
            "8s",
            "-r",
            "3",
            "--plots",
            dir.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ])
        .assert_ok_with_plots();
        let names = check_plots(&dir);
        let mut want: BTreeSet<String> = BTreeSet::new();
        let stems = ["percentiles", "cdf", "tail", "stages", "failures"]
            .iter()
            .map(|s| s.to_string())
            .chain(timelines.iter().map(|t| format!("timeline-{t}")));
        for stem in stems {
            want.insert(format!("{stem}.png"));
            want.insert(format!("{stem}.svg"));
        }
        assert_eq!(names, want, "{scenario}");

        let again = tmp.path().join("again");
        let redraw = Run::of(&[
            "plot",
            json.to_str().unwrap(),
            "--plots",
            again.to_str().unwrap(),
        ]);
        redraw.assert_ok();
        assert_eq!(redraw.stdout.lines().count(), want.len(), "lists each file");
        assert_eq!(files(&again), names, "{scenario}: the same set");
        for name in &names {
            assert_eq!(
                std::fs::read(dir.join(name)).unwrap(),
                std::fs::read(again.join(name)).unwrap(),
                "{scenario}: {name} redrawn identically"
            );
        }
    }
}

#[test]
fn without_memory_there_is_no_failures_plot() {
    let tmp = TempDir::new();
    let dir = tmp.path().join("p");
    Run::of(&[
        "run",
        "nvme-fio",
        "--duration",
        "300ms",
        "-r",
        "2",
        "--plots",
        dir.to_str().unwrap(),
    ])
    .assert_ok_with_plots();
    let names = check_plots(&dir);
    assert!(names.contains("percentiles.png") && names.contains("cdf.svg"));
    assert!(
        !names.iter().any(|n| n.starts_with("failures")),
        "{names:?}"
    );
}

#[test]
fn qsim_plot_rejects_files_that_are_not_qsim_results() {
    let tmp = TempDir::new();
    let fio = tmp.file("fio.json", "{\"fio version\": \"fio-3.33\", \"jobs\": []}");
    Run::of(&["plot", &fio]).assert_bad_input().stderr_has(&[
        "fio.json",
        "qsim.plots",
        "qsim run SCENARIO --json FILE",
    ]);
    let broken = tmp.file("broken.json", "{\"qsim\": ");
    Run::of(&["plot", &broken])
        .assert_bad_input()
        .stderr_has(&["broken.json:1:", "not JSON"]);
    Run::of(&["plot", "/nonexistent/results.json"])
        .assert_bad_input()
        .stderr_has(&["cannot read /nonexistent/results.json"]);
}

/// A results file holding one run `label` with the timeline `timeline` (JSON text).
fn results_with(label: &str, timeline: &str) -> String {
    format!(
        r#"{{"qsim": {{"plots": {{"scenario": "hand-made", "seed": 1, "replications": 1,
        "runs": [{{"label": "{label}", "read_percentiles": [], "read_clat_bins": [[1000, 3]],
        "read_stages": [["device service", 1000.0]], "memory": null,
        "timeline": {timeline}}}]}}}}}}"#
    )
}

#[test]
fn qsim_plot_refuses_state_rows_without_names_instead_of_panicking() {
    // Issue 11, case 2: empty kswapd state names panicked in the timeline (exit 101).
    let tmp = TempDir::new();
    let timeline = r#"{"grid": {"start_ns": 0, "bucket_ns": 1000, "buckets": 2},
        "gauges": [], "counts": [], "levels": [],
        "states": [{"name": "kswapd", "states": [], "time_ns": [[400, 600], [1000, 0]]}]}"#;
    let file = tmp.file("states.json", &results_with("fifo", timeline));
    let dir = tmp.path().join("p");
    Run::of(&["plot", &file, "--plots", dir.to_str().unwrap()])
        .assert_bad_input()
        .stderr_has(&[
            "states.json",
            "qsim.plots.runs[0].timeline.states[0].time_ns[0]",
            "names 0 states",
        ]);
    assert!(!dir.exists(), "nothing drawn");
}

#[test]
fn qsim_plot_gives_long_labels_short_file_names() {
    // Issue 11, case 4 (plot side): a 20k-character label became a file name too long for
    // the file system, after a long wait.
    let tmp = TempDir::new();
    let timeline = r#"{"grid": {"start_ns": 0, "bucket_ns": 1000, "buckets": 2},
        "gauges": [{"name": "crypt queue io", "unit": "requests", "min": [0, null], "max": [3, null]}],
        "counts": [], "states": [], "levels": []}"#;
    let label = "x".repeat(20_000);
    let file = tmp.file("long.json", &results_with(&label, timeline));
    let dir = tmp.path().join("p");
    Run::of(&["plot", &file, "--plots", dir.to_str().unwrap()]).assert_ok();
    let names = check_plots(&dir);
    let timelines: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("timeline-"))
        .collect();
    assert_eq!(timelines.len(), 2, "{names:?}");
    assert!(timelines.iter().all(|n| n.len() < 100), "{timelines:?}");
}
