//! The command line as a user meets it: bad scenarios give one located, hinted error and exit 2
//! with nothing on stdout; shipped scenarios list, check and run by name; a closed pipe is not
//! an error.

use crate::util::{HOSTILE, Run, TempDir, qsim, run_bounded};
use std::process::Stdio;

/// A valid scenario that the bad ones below each break in one place.
const GOOD: &str = "\
device: { kind: nvme }
policies: [fifo]
workloads:
  - kind: fio
  - kind: fio
    rate: 2000/s
";

/// Writes `text` to a temp file and runs `qsim check` on it.
fn check_text(text: &str) -> (Run, String, TempDir) {
    let dir = TempDir::new();
    let path = dir.file("bad.yaml", text);
    (Run::of(&["check", &path]), path, dir)
}

#[test]
fn the_good_fixture_is_valid() {
    let (run, _, _dir) = check_text(GOOD);
    run.assert_ok();
}

#[test]
fn a_typo_in_a_field_names_file_line_field_and_the_fix() {
    let (run, path, _dir) = check_text(&GOOD.replace("    rate: 2000/s", "    iodpeth: 4"));
    run.assert_bad_input().stderr_has(&[
        &format!("{path}:6:5: workloads[1].iodpeth: unknown field `iodpeth`"),
        "did you mean `iodepth`?",
    ]);
}

#[test]
fn a_typo_at_the_top_level_is_caught_too() {
    let (run, path, _dir) = check_text(&format!("{GOOD}sede: 4\n"));
    run.assert_bad_input()
        .stderr_has(&[&format!("{path}:7:1: sede:"), "did you mean `seed`?"]);
}

#[test]
fn a_wrong_unit_echoes_the_value_and_lists_units() {
    let (run, path, _dir) = check_text(&GOOD.replace(
        "  - kind: fio\n  - kind",
        "  - kind: fio\n    bs: 4kk\n  - kind",
    ));
    run.assert_bad_input().stderr_has(&[
        &format!("{path}:5:9: workloads[0].bs:"),
        "\"4kk\"",
        "KiB",
    ]);
    let (run, path, _dir) = check_text(&format!("{GOOD}duration: 10 parsecs\n"));
    run.assert_bad_input()
        .stderr_has(&[&format!("{path}:7:11: duration:"), "parsecs", "ms"]);
}

#[test]
fn a_negative_rate_is_refused_where_it_stands() {
    let (run, path, _dir) = check_text(&GOOD.replace("2000/s", "-5/s"));
    run.assert_bad_input().stderr_has(&[
        &format!("{path}:6:11: workloads[1].rate: rate must be positive, got \"-5/s\""),
        "  6 |     rate: -5/s",
    ]);
}

#[test]
fn an_empty_file_shows_a_minimal_scenario() {
    let (run, path, _dir) = check_text("");
    run.assert_bad_input().stderr_has(&[
        &format!("error: {path}: the scenario file is empty"),
        "kind: nvme",
    ]);
}

#[test]
fn a_missing_file_names_the_path_the_reason_and_the_shipped_scenarios() {
    let dir = TempDir::new();
    let path = dir.path().join("absent.yaml");
    let path = path.to_str().unwrap();
    Run::of(&["check", path]).assert_bad_input().stderr_has(&[
        &format!("error: {path}: cannot read the scenario file: No such file or directory"),
        "two-queue",
        "nvme-fio",
    ]);
    Run::of(&["run", path]).assert_bad_input();
}

#[test]
fn an_unknown_policy_lists_the_valid_ones() {
    let (run, path, _dir) = check_text(&GOOD.replace("[fifo]", "[fifo, sync-async]"));
    run.assert_bad_input().stderr_has(&[
        &format!("{path}:2:18: policies[1]: unknown policy `sync-async`"),
        "fifo",
        "split",
        "prio",
    ]);
}

#[test]
fn unknown_preset_names_list_the_valid_ones() {
    let (run, _, _dir) = check_text(&GOOD.replace("kind: nvme", "kind: ssd"));
    run.assert_bad_input().stderr_has(&[
        "device.kind: unknown device kind `ssd`",
        "hdd5400, hdd7200, nvme, generic",
    ]);
    let (run, _, _dir) = check_text(&format!("{GOOD}crypt: {{ cipher: aes-2010 }}\n"));
    run.assert_bad_input().stderr_has(&[
        "crypt.cipher: unknown cipher `aes-2010`",
        "did you mean `aes-2009`?",
    ]);
    let (run, _, _dir) = check_text(&GOOD.replace(
        "  - kind: fio\n  - kind: fio",
        "  - kind: fio\n  - kind: dd",
    ));
    run.assert_bad_input().stderr_has(&[
        "workloads[1].kind: unknown workload kind `dd`",
        "fio, gitk, buffered-writer",
    ]);
}

#[test]
fn a_yaml_syntax_error_is_located() {
    let (run, path, _dir) =
        check_text("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    name: a: b\n");
    run.assert_bad_input().stderr_has(&[&format!("{path}:4:")]);
}

#[test]
fn a_bad_memory_field_names_file_line_and_field() {
    let (run, path, _dir) = check_text(&format!("{GOOD}memory:\n  ram: 2GiB\n  coalesce: 1.5\n"));
    run.assert_bad_input().stderr_has(&[
        &format!("{path}:9:13: memory.coalesce: is a probability, between 0 and 1, got 1.5"),
        "  9 |   coalesce: 1.5",
    ]);
    let (run, path, _dir) = check_text(&format!("{GOOD}memory:\n  ram: 2GB\n"));
    run.assert_bad_input().stderr_has(&[
        &format!("{path}:8:8: memory.ram: must be a whole number of 4KiB pages"),
        "binary units",
    ]);
    let (run, path, _dir) = check_text(&format!("{GOOD}memory:\n  page_cache: 1GiB\n"));
    run.assert_bad_input().stderr_has(&[&format!(
        "{path}:8:3: memory.ram: the memory section has no `ram`"
    )]);
}

#[test]
fn a_bad_atomic_stream_names_its_index_and_field() {
    let (run, path, _dir) = check_text(&format!(
        "{GOOD}memory:\n  ram: 2GiB\n  atomic:\n    - preset: iwlagn\n      rate: 500/s\n      orders: {{2: 1, 12: 1}}\n"
    ));
    run.assert_bad_input().stderr_has(&[
        &format!("{path}:12:22: memory.atomic[0].orders: order 12 is out of range"),
        "{0: 0.5, 1: 0.3, 2: 0.2}",
    ]);
    let (run, path, _dir) = check_text(&format!(
        "{GOOD}memory:\n  ram: 2GiB\n  atomic:\n    - preset: iwlgn\n"
    ));
    run.assert_bad_input().stderr_has(&[
        &format!("{path}:10:15: memory.atomic[0].preset: unknown atomic preset `iwlgn`"),
        "did you mean `iwlagn`?",
    ]);
}

#[test]
fn an_error_inside_a_variant_points_into_its_set() {
    let (run, path, _dir) = check_text(&format!(
        "{GOOD}kernel: {{ hz: 1000 }}\nvariants:\n  - name: old\n    set:\n      kernel:\n        patches: [force-higorder]\n"
    ));
    run.assert_bad_input().stderr_has(&[
        &format!(
            "{path}:12:19: variants[0].set.kernel.patches[0]: in variant `old`: unknown patch `force-higorder`"
        ),
        "did you mean `force-highorder`?",
    ]);
}

#[test]
fn check_shows_memory_derived_values_and_variants() {
    let (run, _, _dir) = check_text(&format!(
        "{GOOD}memory:\n  ram: 2GiB\n  atomic:\n    - {{ preset: iwlagn, bandwidth: 4MB/s }}\nvariants:\n  - name: \"2.6.30\"\n    set: {{ kernel: {{ version: \"2.6.30\" }} }}\n"
    ));
    run.assert_ok().stdout_has_words(&[
        "min 1448, low 1810, high 2172 pages",
        "GFP_ATOMIC order-0 543 pages, mempool first try 1086 pages",
        "kernel.version: 2.6.32 → 2.6.30",
    ]);
}

#[test]
fn check_shows_both_shipped_scenarios_with_derived_thresholds() {
    for name in ["two-queue", "nvme-fio"] {
        Run::of(&["check", name]).assert_ok().stdout_has_words(&[
            name,
            "113",
            "103",
            "mean service",
            "cost 4KiB",
        ]);
    }
    Run::of(&["check", "scenarios/two-queue.yaml"])
        .assert_ok()
        .stdout_has_words(&["unplug delay 4ms", "12ms mean over random distances"]);
}

#[test]
fn list_shows_every_shipped_scenario_with_its_purpose() {
    let run = Run::of(&["list"]);
    run.assert_ok().stdout_has_words(&[
        "two-queue",
        "nvme-fio",
        "gfp-atomic-storm",
        "mel-2009",
        "cloudflare-2020",
        "hubbard-2019",
        "mel-2009-swap",
        "burst-node",
        "storage-server",
        "storage-daemon",
        "nvme-desktop",
        "hdd-array",
    ]);
    // One line per file of scenarios/ and of the teaching set in scenarios/teach/.
    let files: usize = ["/scenarios", "/scenarios/teach"]
        .iter()
        .map(|dir| {
            std::fs::read_dir(format!("{}{dir}", env!("CARGO_MANIFEST_DIR")))
                .unwrap()
                .filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .path()
                        .extension()
                        .is_some_and(|x| x == "yaml")
                })
                .count()
        })
        .sum();
    assert_eq!(run.stdout.lines().count(), files, "{}", run.stdout);
}

#[test]
fn run_resolves_a_shipped_name_from_any_directory() {
    let dir = TempDir::new();
    let out = qsim(&["run", "two-queue", "--duration", "3s", "--seed", "5"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("two-queue"));
}

#[test]
fn run_refuses_a_duration_inside_the_warmup() {
    Run::of(&["run", "two-queue", "--duration", "1s"])
        .assert_bad_input()
        .stderr_has(&["--duration 1s", "warm-up"]);
}

#[test]
fn usage_errors_exit_two() {
    for args in [
        &["run"][..],
        &["run", "two-queue", "--duration", "10"],
        &["run", "two-queue", "--format", "xml"],
        &["frobnicate"],
    ] {
        let run = Run::of(args);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty());
        assert!(!run.stderr.contains("panicked"));
    }
    Run::of(&["run", "two-queue", "--duration", "10"]).stderr_has(&["durations need a unit"]);
}

#[test]
fn a_closed_stdout_is_not_an_error() {
    for args in [&["list"][..], &["check", "two-queue"]] {
        let mut child = qsim(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the read end at once, as `| head -0` would.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn check_shows_the_effect_of_a_set() {
    let two_queue = "scenarios/two-queue.yaml";
    Run::of(&["check", two_queue])
        .assert_ok()
        .stdout_has(&["memory                  2GiB (524288 pages)"]);
    // 1 GiB of ram alone leaves the file's 1900 MiB unreclaimable no room: that line of the file
    // is at fault, and the message says which --set made it so.
    Run::of(&["check", two_queue, "--set", "memory.ram=1GiB"])
        .assert_bad_input()
        .stderr_has(&[
            &format!("{two_queue}:69:18: memory.unreclaimable: with --set memory.ram=1GiB:"),
            // 1018 MiB leave the high watermark free; the page_pool reserve takes 32 pages more.
            "at most 1042304KiB",
        ]);
    Run::of(&[
        "check",
        two_queue,
        "--set",
        "memory.ram=1GiB",
        "--set",
        "memory.unreclaimable=700MiB",
        "--set",
        "memory.mapped=350MiB",
        "--set=kernel.patches=[force-highorder]",
    ])
    .assert_ok()
    .stdout_has(&[
        "memory                  1GiB (262144 pages)",
        "force-highorder",
        "replications            10",
    ]);
}

#[test]
fn a_misspelt_set_field_exits_two_with_did_you_mean() {
    Run::of(&[
        "check",
        "scenarios/two-queue.yaml",
        "--set",
        "memory.rm=1GiB",
    ])
    .assert_bad_input()
    .stderr_has(&[
        "error: --set memory.rm=1GiB: memory.rm: unknown field `rm`",
        "did you mean `ram`?",
    ]);
}

#[test]
fn a_bad_set_value_names_the_argument_not_the_file() {
    for args in [
        &[
            "check",
            "scenarios/two-queue.yaml",
            "--set",
            "memory.ram=banana",
        ][..],
        &["run", "two-queue", "--set", "memory.ram=banana"],
    ] {
        let run = Run::of(args);
        run.assert_bad_input().stderr_has(&[
            "error: --set memory.ram=banana: memory.ram: \"banana\"",
            "hint: a size is",
        ]);
        assert!(!run.stderr.contains("two-queue.yaml"), "{}", run.stderr);
    }
    Run::of(&["run", "two-queue", "--set", "memory.ram=1GB"])
        .assert_bad_input()
        .stderr_has(&[
            "error: --set memory.ram=1GB: memory.ram: must be a whole number of 4KiB pages",
        ]);
    Run::of(&["check", "two-queue", "--set", "a..b=1"])
        .assert_bad_input()
        .stderr_has(&["error: --set a..b=1: empty field name", "hint: "]);
}

#[test]
fn run_refuses_replications_out_of_range() {
    for r in ["0", "1001"] {
        let run = Run::of(&["run", "two-queue", "-r", r]);
        assert_eq!(run.code, Some(2), "{}", run.stderr);
        assert!(run.stdout.is_empty());
    }
}

/// Reads are capped by bytes read, not by the size a file reports (0 for a device): issue 11
/// saw `qsim run /dev/zero`, `qsim check /dev/urandom` and `qsim plot /dev/zero` pass 8 GiB.
#[test]
fn endless_special_files_are_refused_after_a_bounded_read() {
    Run::of(&["run", "/dev/zero"])
        .assert_bad_input()
        .stderr_has(&["/dev/zero"]);
    Run::of(&["check", "/dev/urandom"])
        .assert_bad_input()
        .stderr_has(&["/dev/urandom"]);
    let plot = Run::of(&["plot", "/dev/zero"]);
    plot.assert_bad_input()
        .stderr_has(&["cannot read /dev/zero", "more than", "at most 256 MiB"]);
}

#[test]
fn a_set_can_index_a_list_item_and_remove_a_section() {
    let two_queue = "scenarios/two-queue.yaml";
    Run::of(&["check", two_queue])
        .assert_ok()
        .stdout_has(&["loop                closed, iodepth 1"]);
    Run::of(&["check", two_queue, "--set", "workloads[0].iodepth=2"])
        .assert_ok()
        .stdout_has(&["loop                closed, iodepth 2", "writeback"]);
    Run::of(&["check", two_queue, "--set", "workloads[2].iodepth=2"])
        .assert_bad_input()
        .stderr_has(&[
            "error: --set workloads[2].iodepth=2: `workloads[2]` is past the end: the list has 2 items",
            "hint: indexes count from 0: workloads[0] … workloads[1]",
        ]);
    // Without its memory section the same run has no memory pressure: no memory lines at all.
    let args = ["run", "two-queue", "--duration", "3s", "-r", "1"];
    Run::of(&args)
        .assert_ok()
        .stdout_has(&["gfp_atomic   : attempts=", "kswapd       : reclaimed="]);
    let run = Run::of(&[&args[..], &["--set", "!memory"]].concat());
    run.assert_ok().stdout_has(&["read"]);
    for line in ["gfp_atomic", "kswapd", "direct reclaim", "memory       :"] {
        assert!(!run.stdout.contains(line), "{line}:\n{}", run.stdout);
    }
    Run::of(&["check", two_queue, "--set", "!device"])
        .assert_bad_input()
        .stderr_has(&["device: with --set !device: the scenario has no device"]);
}

/// Issue 32 case 10: a FIFO that no process opens for writing, given as a scenario (to check,
/// run and serve), a job file or a shard, is refused after the read deadline (here 300 ms
/// through `QSIM_READ_TIMEOUT_MS`; the last case keeps the default 5 s) with an error that says
/// nothing was written to it, instead of waiting forever.
#[test]
fn a_fifo_without_a_writer_is_refused_after_the_deadline() {
    let dir = TempDir::new();
    for (name, cmd, deadline) in [
        ("ff.yaml", "check", "300"),
        ("ff2.yaml", "run", "300"),
        ("ff3.yaml", "serve", "300"),
        ("ff.fio", "check", "300"),
        ("ff.jsonl", "merge", "300"),
        ("ff4.yaml", "check", ""),
    ] {
        let path = dir.path().join(name);
        let made = std::process::Command::new("mkfifo").arg(&path).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: no mkfifo command");
            return;
        }
        let path = path.to_str().unwrap();
        let env: &[(&str, &str)] = if deadline.is_empty() {
            &[]
        } else {
            &[("QSIM_READ_TIMEOUT_MS", deadline)]
        };
        let r = run_bounded(&[cmd, path], env, HOSTILE);
        let secs = if deadline.is_empty() { "5" } else { "0.3" };
        r.assert_bad_input().stderr_has(&[
            &format!("nothing was written to {path} within {secs} s"),
            "no process opened for writing",
            "start the",
        ]);
    }
}

/// A NUL byte is not text: the error names its line and column (it was "the scenario file is
/// empty" when the NUL came first).
#[test]
fn a_nul_byte_is_located_not_called_an_empty_file() {
    let (run, path, _dir) = check_text("\0device: { kind: nvme }\n");
    run.assert_bad_input().stderr_has(&[
        &format!("{path}:1:1: the file holds a NUL byte at line 1, column 1: it is not text"),
        "hint: save the file as plain UTF-8 text",
    ]);
    let (run, path, _dir) = check_text(&GOOD.replace("rate: 2000/s", "rate: 20\u{0}0/s"));
    run.assert_bad_input().stderr_has(&[&format!(
        "{path}:6:13: the file holds a NUL byte at line 6, column 13"
    )]);
}

/// A UTF-8 byte-order mark (some Windows editors write one) is no part of the scenario.
#[test]
fn a_utf8_byte_order_mark_is_accepted() {
    let (run, _, _dir) = check_text(&format!("\u{feff}{GOOD}"));
    run.assert_ok();
}

/// Negative numbers were taken for flags ("unexpected argument '-5'"): each says what is
/// wrong with the value and the range to write instead.
#[test]
fn negative_command_line_values_say_what_range_to_write() {
    for (args, needles) in [
        (
            &["-r", "-5"][..],
            &[
                "'-5' for '--replications <N>'",
                "`-5` is negative",
                "hint: a replication count is a whole number from 1 to 1000",
            ][..],
        ),
        (
            &["--duration", "-5s"],
            &[
                "'-5s' for '--duration <DURATION>'",
                "durations cannot be negative",
            ],
        ),
        (
            &["--seed", "-1"],
            &[
                "'-1' for '--seed <N>'",
                "`-1` is negative",
                "hint: a seed is a whole number from 0 to",
            ],
        ),
        (
            &["--jobs", "-2"],
            &["'-2' for '--jobs <N>'", "`-2` is negative", "0 = all cores"],
        ),
        (
            &["-r", "0"],
            &["`0` is out of range for a replication count"],
        ),
    ] {
        let r = Run::of(&[&["run", "two-queue"][..], args].concat());
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("unexpected argument"), "{}", r.stderr);
        r.stderr_has(needles);
    }
    let r = Run::of(&["trace", "two-queue", "--seed", "-1"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    r.stderr_has(&["`-1` is negative"]);
}

/// `.nan` got serde's "non-finite float rejected by the configured policy" and an indentation
/// hint: the error now says the value is not finite, at the field, and what to write.
#[test]
fn a_non_finite_duration_says_to_write_a_finite_time() {
    let (run, path, _dir) = check_text(&format!("{GOOD}duration: .nan\n"));
    run.assert_bad_input().stderr_has(&[
        &format!("{path}:7:11: duration: `.nan` is not a finite number"),
        "hint: the duration must be a finite time like `60s`",
    ]);
    assert!(!run.stderr.contains("indentation"), "{}", run.stderr);
}

/// A sensitivity knob whose `low` is above its `high` was accepted (and drew its tornado bar
/// the wrong way round): refused at `low`, with the two values swapped in the hint.
#[test]
fn a_sensitivity_knob_with_low_above_high_is_refused() {
    let (run, path, _dir) = check_text(&format!(
        "{GOOD}sensitivity:\n  knobs:\n    - {{ path: cpus, low: 8, high: 2 }}\n"
    ));
    run.assert_bad_input().stderr_has(&[
        &format!("{path}:9:"),
        "sensitivity.knobs[0].low: the knob's low `8` is above its high `2`",
        "hint: swap them: `low: 2, high: 8`",
    ]);
}

/// An export may not replace the file the command reads (`qsim run x.yaml --json x.yaml`
/// wrote the report over the scenario), by the same name, another name or a hard link.
#[test]
fn an_export_over_its_own_input_file_is_refused() {
    let dir = TempDir::new();
    let sc = dir.file("x.yaml", GOOD);
    let link = dir.path().join("link.yaml");
    std::fs::hard_link(&sc, &link).unwrap();
    let link = link.to_str().unwrap();
    for (flag, out) in [
        ("--json", sc.as_str()),
        ("--csv", link),
        ("--markdown", sc.as_str()),
    ] {
        Run::of(&["run", &sc, "--duration", "100ms", "-r", "1", flag, out])
            .assert_bad_input()
            .stderr_has(&[&format!(
                "{flag} {out}: is the scenario file this command reads ({sc}): writing there \
                 would replace it"
            )]);
    }
    assert_eq!(
        std::fs::read_to_string(&sc).unwrap(),
        GOOD,
        "the scenario is untouched"
    );
}
