//! `qsim trace`: the window's stage sums equal an independent `qsim run` report of the same
//! window, fifo shows a read waiting behind a write encryption and split does not, and bad
//! flags are refused with a hint.

use crate::util::{HOSTILE, Run, TempDir, run_within};

/// `direction,stage -> trace ns` from a trace's stages.csv.
fn trace_sums(csv: &str) -> Vec<(String, String, u128, u64)> {
    csv.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[0].into(),
                f[1].into(),
                f[2].parse().unwrap(),
                f[4].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_traced_windows_stage_sums_equal_a_separate_runs_report() {
    let dir = TempDir::new();
    let out = dir.path().join("t");
    let out_s = out.to_str().unwrap();
    Run::of(&["trace", "two-queue", "--policy", "fifo", "--out", out_s]).assert_ok();
    let sums = trace_sums(&std::fs::read_to_string(out.join("stages.csv")).unwrap());
    // The same window as an ordinary run: warm-up to the window's start, duration to its end.
    let json = dir.path().join("w.json");
    Run::of(&[
        "run",
        "two-queue",
        "--set",
        "policies=[fifo]",
        "--set",
        "warmup=2s",
        "--duration",
        "2.2s",
        "-r",
        "1",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ])
    .assert_ok();
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let stages = &j["jobs"][0]["qsim"]["stages"];
    let mut checked = 0;
    for (dir, label, traced, bios) in sums {
        let row = stages[&dir]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["label"] == label.as_str())
            .unwrap_or_else(|| panic!("{dir} {label} in the report"));
        assert_eq!(row["n"].as_u64(), Some(bios), "{dir} {label}: same bios");
        let report = row["mean_ns"].as_f64().unwrap() * bios as f64;
        let tol = 1e-9 * report.max(1.0) + 1.0;
        assert!(
            (traced as f64 - report).abs() <= tol,
            "{dir} {label}: trace {traced} ns, report {report} ns"
        );
        checked += u32::from(traced > 0);
    }
    assert!(checked >= 4, "several stages had time in them");
}

#[test]
fn fifo_shows_a_read_behind_a_write_encryption_and_split_does_not() {
    let fifo = Run::of(&["trace", "two-queue", "--policy", "fifo"]);
    fifo.assert_ok().stdout_has(&[
        "reads waited in a crypt queue",
        "encrypting on kcryptd",
        "trace and report agree",
    ]);
    let split = Run::of(&["trace", "two-queue", "--policy", "split"]);
    split
        .assert_ok()
        .stdout_has(&["No read waited in a crypt queue", "trace and report agree"]);
}

#[test]
fn bad_trace_flags_are_refused_with_a_hint() {
    Run::of(&["trace", "two-queue", "--policy", "nosuch"])
        .assert_bad_input()
        .stderr_has(&["--policy nosuch", "hint:"]);
    Run::of(&["trace", "two-queue", "--window", "11s"])
        .assert_bad_input()
        .stderr_has(&["--window", "hint:"]);
    Run::of(&["trace", "two-queue", "--highlight", "99999"])
        .assert_bad_input()
        .stderr_has(&["--highlight", "hint:"]);
    Run::of(&["trace", "two-queue", "--variant", "x"])
        .assert_bad_input()
        .stderr_has(&["--variant x", "hint:"]);
}

/// teach/cwait's claim, seen in the trace: under 2.6.31 kswapd's congestion_wait runs to its
/// 100 ms timeout every time (the whole sleep, even one begun before the window), under 2.6.30
/// it ends early.
#[test]
fn kswapds_waits_time_out_under_2_6_31_and_end_early_under_2_6_30() {
    let marks = |variant: &str, what: &str| -> Vec<String> {
        let run = Run::of(&["trace", "teach/cwait", "--variant", variant, "--log"]);
        run.assert_ok();
        run.stdout
            .lines()
            .filter(|l| l.contains("kswapd") && l.contains(what))
            .map(String::from)
            .collect()
    };
    let late = marks("2.6.31", "congestion_wait(ASYNC) timed out after");
    assert!(!late.is_empty());
    assert!(late.iter().all(|l| l.contains("after 100ms")), "{late:#?}");
    assert!(marks("2.6.31", "woke early").is_empty());
    assert!(!marks("2.6.30", "congestion_wait(SYNC) woke early").is_empty());
}

/// The bio a log line is about: its first `#k` (the line's own bio; `of #p` comes later).
fn bio_of(line: &str) -> Option<&str> {
    line.split_whitespace().find(|w| w.starts_with('#'))
}

/// hdd-array's 6.12 kernel splits its 512 KiB bios into 128 KiB pieces. The trace agrees with
/// the report; each piece is its own bio of the trace, issued and completed once, with nothing
/// done to it after its completion; every piece of a bio issued and completed in the window
/// completes in it; and the highlighted read is a whole read, with its pieces listed.
#[test]
fn a_split_workload_on_6_12_agrees_and_its_pieces_complete() {
    for policy in ["dm-crypt", "dm-crypt+no_read_workqueue+no_write_workqueue"] {
        let run = Run::of(&["trace", "hdd-array", "--policy", policy, "--log"]);
        run.assert_ok()
            .stdout_has(&["trace and report agree", "piece 4/4 of #"]);
        let head = run
            .stdout
            .lines()
            .find(|l| l.starts_with("Highlighted: "))
            .expect("a highlighted read");
        assert!(head.contains(" read from job "), "{policy}: {head}");
        let log: Vec<&str> = run
            .stdout
            .lines()
            .skip_while(|l| !l.starts_with("Event log"))
            .collect();
        let lane = |l: &str| l.split_whitespace().nth(1).map(str::to_string);
        let mut done = std::collections::HashMap::new();
        let mut issued = std::collections::HashSet::new();
        for (i, l) in log.iter().enumerate() {
            let (Some(k), Some(lane)) = (bio_of(l), lane(l)) else {
                continue;
            };
            if let Some(&at) = done.get(k) {
                panic!("{policy}: {k} after its completion (line {at}): {l}");
            }
            if lane == "issue" {
                assert!(issued.insert(k.to_string()), "{policy}: {k} issued twice");
            } else if lane == "complete" {
                done.insert(k.to_string(), i);
            }
        }
        let mut whole = 0;
        for l in log
            .iter()
            .filter(|l| l.contains(" completes") && !l.contains("piece"))
        {
            let k = bio_of(l).unwrap();
            if !issued.contains(k) || !l.contains(" 512K ") {
                continue;
            }
            let of = format!(" of {k} completes");
            let pieces = log.iter().filter(|l| l.contains(&of)).count();
            assert_eq!(pieces, 4, "{policy}: {k}'s four pieces complete");
            whole += 1;
        }
        assert!(whole > 0, "{policy}: a split bio was issued and completed");
    }
}

/// Issue 32 case 8: a window that starts after the run ends is refused before anything is
/// simulated (it ran ~50 s to its work budget and printed a window ending before it began),
/// and a work budget that ends the run before the window is an error that says so.
#[test]
fn a_window_beyond_the_run_or_its_work_budget_is_refused() {
    run_within(
        &["trace", "two-queue", "--from", "1000h", "--window", "10ms"],
        HOSTILE,
    )
    .assert_bad_input()
    .stderr_has(&[
        "--from 3600000s: the window starts at or after the end of the run: scenario \
             `two-queue` runs for 60s (its duration)",
        "hint: give a --from below 60s",
    ]);
    let r = Run::of(&[
        "trace",
        "teach/hol",
        "--from",
        "1s",
        "--set",
        "max_events=50",
    ]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr
            .contains("error: the work budget (max_events=50) ended the run at ")
            && r.stderr.contains("before the window starts at 1000.000 ms")
            && r.stderr.contains("hint: raise the budget"),
        "{}",
        r.stderr
    );
    // Inside the window: the trace is printed up to there, with a warning and a mark.
    let r = Run::of(&[
        "trace",
        "teach/hol",
        "--from",
        "1s",
        "--set",
        "max_events=700",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stderr.starts_with(
            "warning: the work budget (max_events=700) ended the run at 1146.337 ms, inside \
             the window: the trace stops there"
        ),
        "{}",
        r.stderr
    );
    assert!(
        r.stdout
            .contains("; STOPPED at 1146.337 ms (the work budget, max_events=700)"),
        "{}",
        r.stdout
    );
}

/// Issue 32 case 9: `--max-spans` has a ceiling, stated when refused (100000000 ran to 2.6 GB).
#[test]
fn max_spans_above_its_ceiling_is_refused() {
    for n in ["100000000", "500001", "0", "-5"] {
        let r = run_within(
            &["trace", "nvme-fio", "--window", "10s", "--max-spans", n],
            HOSTILE,
        );
        assert_eq!(r.code, Some(2), "{n}: {}", r.stderr);
        assert!(
            r.stderr.contains("from 1 to 500000") && r.stdout.is_empty(),
            "{n}: {}",
            r.stderr
        );
    }
}
