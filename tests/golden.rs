//! Golden outputs (issues 12 and 31): every shipped scenario and `qsim validate`, in every
//! format, at a short duration and the default seed, must print exactly the bytes pinned in
//! `tests/golden/`.
//!
//! These files pin the report while the code behind it is rearranged. A change that is meant to
//! alter the output regenerates them with `QSIM_BLESS=1 cargo test golden` and says why in its
//! commit; any other difference fails, naming what moved, and the whole new output is left in
//! `target/golden-actual/`.
//!
//! How each output is pinned:
//! - Text (the report, `qsim check`, CSV, Markdown, the ASCII pictures) and any JSON output of
//!   at most [`WHOLE_JSON_BYTES`] is kept whole, byte for byte; a difference is shown as the
//!   first differing line, and `diff -r tests/golden target/golden-actual` shows the rest. The
//!   largest text file, the sweep's report, is some 170 KB: read in review, so kept whole.
//! - A larger JSON output (the `--json` exports, up to 5 MB with their plot series, and the
//!   `--format json` reports, about 100 KB) is pinned by an outline in `NAME.outline` beside
//!   the text: the digest of all its bytes, then its parts with their values or sizes and
//!   digests (`tests/outline.rs` says which). A difference names the deepest outline part that
//!   changed, with its line in the new output, and `diff` of the two outlines shows every part
//!   that moved. Most of the JSON's numbers are pinned in text as well (the report prints each
//!   job's figures, the CSV and Markdown the replication summary); the plot series are pinned
//!   only by their digests. `tests/golden/` so weighs some 1.5 MB instead of 19 MB.
//!
//! No golden pins a plot (PNG or SVG) today.

use crate::outline;
use crate::util::{TempDir, qsim};
use std::fs;
use std::path::{Path, PathBuf};

/// The shipped scenarios, by the names `qsim list` gives them.
const SCENARIOS: &[&str] = &[
    "burst-node",
    "gfp-atomic-storm",
    "hdd-array",
    "hubbard-2019",
    "mel-2009",
    "mel-2009-nocrypt",
    "mel-2009-swap",
    "nvme-desktop",
    "nvme-fio",
    "storage-server",
    "two-queue",
];

/// JSON outputs up to this size are kept whole; larger ones are pinned by their outline.
const WHOLE_JSON_BYTES: usize = 32 * 1024;

/// Long enough to pass every shipped warm-up (at most 4 s), short enough to run in seconds.
const DURATION: &str = "5s";

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn actual_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/golden-actual")
}

fn stdout_of(args: &[&str]) -> Vec<u8> {
    let out = qsim(args).output().expect("the qsim binary runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "qsim {}\nstderr:\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Whether the output `name` is pinned by an outline rather than kept whole.
fn by_outline(name: &str, bytes: &[u8]) -> bool {
    name.ends_with(".json") && bytes.len() > WHOLE_JSON_BYTES
}

/// Compares the output `name` with its golden file, or rewrites that under `QSIM_BLESS=1`
/// (removing the golden in the other form, if the output has crossed the size limit).
/// Returns a description of the first difference, if any.
fn compare(name: &str, bytes: &[u8]) -> Option<String> {
    let (whole, outlined) = (
        golden_dir().join(name),
        golden_dir().join(format!("{name}.outline")),
    );
    let by_outline = by_outline(name, bytes);
    if std::env::var_os("QSIM_BLESS").is_some() {
        fs::create_dir_all(golden_dir()).unwrap();
        let (keep, drop) = match by_outline {
            true => (&outlined, &whole),
            false => (&whole, &outlined),
        };
        let text = by_outline.then(|| outline::render(bytes).into_bytes());
        fs::write(keep, text.as_deref().unwrap_or(bytes)).unwrap();
        if drop.exists() {
            fs::remove_file(drop).unwrap();
        }
        return None;
    }
    match by_outline {
        true => compare_outline(name, &outlined, bytes),
        false => compare_whole(name, &whole, bytes),
    }
}

/// Leaves the whole output `name` in `target/golden-actual/` and returns its path.
fn leave_actual(name: &str, bytes: &[u8]) -> String {
    fs::create_dir_all(actual_dir()).unwrap();
    let path = actual_dir().join(name);
    fs::write(&path, bytes).unwrap();
    format!("target/golden-actual/{name}")
}

fn missing(golden: &Path) -> String {
    format!(
        "{} is missing (QSIM_BLESS=1 writes it)",
        golden
            .strip_prefix(env!("CARGO_MANIFEST_DIR"))
            .unwrap_or(golden)
            .display()
    )
}

fn compare_outline(name: &str, golden: &Path, bytes: &[u8]) -> Option<String> {
    let Ok(want) = fs::read_to_string(golden) else {
        leave_actual(name, bytes);
        return Some(format!("{name}: {}", missing(golden)));
    };
    let fresh = outline::render(bytes);
    if fresh == want {
        return None;
    }
    let actual = leave_actual(name, bytes);
    leave_actual(&format!("{name}.outline"), fresh.as_bytes());
    let why = outline::describe(&want, bytes, &actual).expect("the outlines differ");
    Some(format!(
        "{name} (pinned by tests/golden/{name}.outline): {why}\n  all changed parts: \
         diff tests/golden/{name}.outline {actual}.outline"
    ))
}

fn compare_whole(name: &str, golden: &Path, bytes: &[u8]) -> Option<String> {
    let want = fs::read(golden);
    if want.as_deref().ok() == Some(bytes) {
        return None;
    }
    leave_actual(name, bytes);
    let Ok(want) = want else {
        return Some(format!("{name}: {}", missing(golden)));
    };
    let (want, got) = (
        String::from_utf8_lossy(&want),
        String::from_utf8_lossy(bytes),
    );
    let mut w = want.lines();
    let mut g = got.lines();
    let mut line = 1;
    loop {
        match (w.next(), g.next()) {
            (Some(a), Some(b)) if a == b => line += 1,
            (a, b) => {
                return Some(format!(
                    "{name}, line {line}:\n  golden: {}\n  actual: {}",
                    a.unwrap_or("<end of file>"),
                    b.unwrap_or("<end of file>")
                ));
            }
        }
    }
}

fn check_all(outputs: Vec<(String, Vec<u8>)>) {
    let diffs: Vec<String> = outputs
        .iter()
        .filter_map(|(name, bytes)| compare(name, bytes))
        .collect();
    assert!(
        diffs.is_empty(),
        "output differs from tests/golden (new output in target/golden-actual/; \
         regenerate with QSIM_BLESS=1 only if the change is meant):\n{}",
        diffs.join("\n")
    );
}

/// One scenario's outputs: the text report with its invariant tables and the three exports from
/// one run, the `--format json` report from a second, and `qsim check`'s resolved scenario.
fn scenario_outputs(name: &str) -> Vec<(String, Vec<u8>)> {
    let dir = TempDir::new();
    let file = |ext: &str| dir.path().join(ext).to_str().unwrap().to_string();
    let (json, csv, md) = (file("out.json"), file("out.csv"), file("out.md"));
    let text = stdout_of(&[
        "run",
        name,
        "--duration",
        DURATION,
        "-j",
        "2",
        "--check-invariants",
        "--json",
        &json,
        "--csv",
        &csv,
        "--markdown",
        &md,
    ]);
    let fmt_json = stdout_of(&[
        "run",
        name,
        "--duration",
        DURATION,
        "-j",
        "2",
        "--format",
        "json",
    ]);
    let check = stdout_of(&["check", name]);
    vec![
        (format!("{name}.txt"), text),
        (format!("{name}.format.json"), fmt_json),
        (format!("{name}.json"), fs::read(&json).unwrap()),
        (format!("{name}.csv"), fs::read(&csv).unwrap()),
        (format!("{name}.md"), fs::read(&md).unwrap()),
        (format!("{name}.check.txt"), check),
    ]
}

#[test]
fn shipped_scenarios_print_their_golden_outputs() {
    let outputs = SCENARIOS.iter().flat_map(|s| scenario_outputs(s)).collect();
    check_all(outputs);
}

#[test]
fn validate_prints_its_golden_table() {
    check_all(vec![(
        "validate.txt".to_string(),
        stdout_of(&["validate", "-j", "2"]),
    )]);
}

/// Issues 14 and 28: every line of every golden text output (each shipped scenario's report
/// with its invariant tables, `qsim check`'s resolved scenario, the sweep's report, `qsim
/// validate`'s table, the ASCII pictures) fits 80 columns, counted in characters (`±`, `µ` are
/// one column each), so it survives a plain-text mail without wrapping; and no table row was
/// broken to get there: a cell cut after its `±` would leave a line ending in one.
/// (The Markdown exports are tables for a renderer, not text, and are not held to 80.)
#[test]
fn every_golden_text_fits_80_columns_without_a_broken_cell() {
    let mut seen = 0;
    for entry in fs::read_dir(golden_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.ends_with(".txt") {
            continue;
        }
        seen += 1;
        let text = fs::read_to_string(&path).unwrap();
        for (i, line) in text.lines().enumerate() {
            let n = line.chars().count();
            assert!(n <= 80, "{name}:{}: {n} columns: {line}", i + 1);
            assert!(
                !line.ends_with(" ±"),
                "{name}:{}: a broken cell: {line}",
                i + 1
            );
        }
    }
    // Every scenario's report and check, the sweep's two, validate and the pictures.
    assert!(seen >= 2 * SCENARIOS.len() + 4, "only {seen} golden texts");
}

/// Issue 14: `qsim run two-queue --ascii` ends with the plain-text pictures (pinned in
/// `two-queue.ascii.txt`: the nines plot and the failures bars), every line of the whole output
/// fits 80 columns and every picture line 72; `qsim plot --ascii` prints the same pictures
/// from the run's `--json` export.
#[test]
fn two_queue_ascii_pictures_fit_a_mail_and_match_qsim_plot() {
    let dir = TempDir::new();
    let json = dir.path().join("out.json");
    let json = json.to_str().unwrap();
    let out = stdout_of(&[
        "run",
        "two-queue",
        "--duration",
        DURATION,
        "-j",
        "2",
        "--ascii",
        "--json",
        json,
    ]);
    let text = String::from_utf8(out).unwrap();
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "over 80 columns: {line}");
    }
    let at = text
        .find("Plain-text pictures")
        .expect("the pictures follow the report");
    let pictures = &text[at..];
    for line in pictures.lines() {
        assert!(line.is_ascii() && line.len() <= 72, "{line}");
    }
    assert!(pictures.contains("percentile (nines axis)"), "{pictures}");
    assert!(pictures.contains("99.99") && pictures.contains("GFP_ATOMIC failures"));
    let replot = stdout_of(&["plot", "--ascii", json]);
    assert_eq!(String::from_utf8(replot).unwrap(), pictures);
    check_all(vec![(
        "two-queue.ascii.txt".to_string(),
        pictures.as_bytes().to_vec(),
    )]);
}

/// The shipped sweep (`cipher-sweep`: 10 points × 2 policies) is pinned by its text report with
/// the invariant tables, and by `qsim check`; its `--json` export, with a timeline per run,
/// would weigh some 9 MB.
#[test]
fn the_shipped_sweep_prints_its_golden_report() {
    let run = [
        "run",
        "cipher-sweep",
        "--duration",
        DURATION,
        "-j",
        "2",
        "--check-invariants",
    ];
    check_all(vec![
        ("cipher-sweep.txt".to_string(), stdout_of(&run)),
        (
            "cipher-sweep.check.txt".to_string(),
            stdout_of(&["check", "cipher-sweep"]),
        ),
    ]);
}
