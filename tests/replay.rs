//! `kind: replay` and `qsim run TRACE` through the real binary: the shipped capture replays
//! under flags, sweeps, `--set` and shards; `qsim check` shows what the trace holds; hostile
//! traces exit 2 with the trace's file, line and field; real blkparse reads the shipped binary
//! capture into the shipped text (CI, where blktrace is installed).

use crate::util::{Run, TempDir, qsim};

#[test]
fn a_trace_runs_on_a_machine_under_every_flag() {
    let r = Run::of(&[
        "run",
        "traces/loop-randrw.blktrace",
        "--machine",
        "nvme-desktop",
        "--flags",
        "no_read_workqueue",
        "-r",
        "1",
        "-q",
        "--check-invariants",
    ]);
    r.assert_ok();
    r.stdout_has(&[
        "trace traces/loop-randrw.blktrace replayed (open)",
        "Flag comparison",
    ]);
    for t in ["traces/loop-randrw.blkparse", "traces/loop-randrw.iolog"] {
        Run::of(&["run", t, "-r", "1", "-q"]).assert_ok();
    }
}

#[test]
fn check_shows_what_the_trace_holds() {
    let r = Run::of(&["check", "traces/replay-loop.yaml"]);
    r.assert_ok();
    r.stdout_has(&[
        "replay: traces/loop-randrw.blktrace (blktrace)",
        "652 (351 reads, 301 writes)",
        "closed: each process waits its trace gap",
    ]);
}

#[test]
fn set_and_sweep_edit_a_replay() {
    let r = Run::of(&[
        "run",
        "traces/replay-loop.yaml",
        "-r",
        "1",
        "-q",
        "--set",
        "workloads[0].mode=open",
        "--sweep",
        "workloads[0].iodepth=1,4",
        "--check-invariants",
    ]);
    r.assert_ok();
    let bad = Run::of(&[
        "check",
        "traces/replay-loop.yaml",
        "--set",
        "workloads[0].mode=sideways",
    ]);
    bad.assert_bad_input();
}

#[test]
fn shards_of_a_replay_merge_to_one_runs_bytes() {
    let dir = TempDir::new();
    let base = ["run", "traces/replay-loop.yaml", "-r", "2", "-q"];
    let one = qsim(&base).output().unwrap();
    assert!(one.status.success());
    let mut files = Vec::new();
    for i in 0..2 {
        let out = dir.path().join(format!("s{i}.jsonl"));
        let shard = format!("{i}/2");
        let mut args = base.to_vec();
        args.extend(["--shard", &shard, "--shard-out", out.to_str().unwrap()]);
        assert!(qsim(&args).output().unwrap().status.success());
        files.push(out.to_str().unwrap().to_string());
    }
    let mut merge = vec!["merge"];
    merge.extend(files.iter().map(String::as_str));
    let merged = qsim(&merge).output().unwrap();
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&merged.stdout),
        String::from_utf8_lossy(&one.stdout)
    );
}

/// A scenario replaying `trace` (text), both in a fresh folder.
fn scenario_with(dir: &TempDir, trace: &str, extra: &str) -> String {
    dir.file("t.blkparse", trace);
    dir.file(
        "s.yaml",
        &format!("device: {{ kind: nvme }}\nworkloads:\n  - {{ kind: replay, file: t.blkparse{extra} }}\n"),
    )
}

#[test]
fn hostile_traces_exit_2_located() {
    let ok = "  7,0 0 1 0.000000000 9 Q R 8 + 8 [a]\n";
    let cases = [
        (
            format!("{ok}  7,0 0 2 0.00000000x 9 Q R 8 + 8 [a]\n"),
            ":2: time:",
        ),
        (
            format!("{ok}  7,0 0 2 0.000000001 9 Q R 8 + -8 [a]\n"),
            ":2: blocks:",
        ),
        (
            format!("{ok}  7,0 0 2 0.000000001 9 Q R 8 + 0 [a]\n"),
            ":2: blocks:",
        ),
        (
            format!("{ok}  7,0 0 2 0.000000001 9 K R 8 + 8 [a]\n"),
            ":2: action:",
        ),
        (
            format!("  7,0 0 2 0.000000009 9 Q R 8 + 8 [a]\n{ok}"),
            ":2: time:",
        ),
        (
            format!("{ok}  8,0 0 2 0.000000001 9 Q R 8 + 8 [a]\n"),
            "7,0, 8,0",
        ),
    ];
    for (trace, needle) in cases {
        let dir = TempDir::new();
        let s = scenario_with(&dir, &trace, "");
        let r = Run::of(&["run", &s, "-r", "1"]);
        r.assert_bad_input();
        r.stderr_has(&[needle]);
    }
    let dir = TempDir::new();
    let s = dir.file(
        "s.yaml",
        "device: { kind: nvme }\nworkloads:\n  - { kind: replay, file: nope.blktrace }\n",
    );
    Run::of(&["check", &s])
        .assert_bad_input()
        .stderr_has(&["s.yaml:3", "file"]);
}

#[test]
fn a_file_named_as_a_trace_gets_the_trace_readers_error_not_yamls() {
    let dir = TempDir::new();
    // Six decimals where blkparse writes nine: not its default format.
    let text = dir.file("short.blkparse", "  8,0 0 1 0.000001 100 Q R 100 + 8 [a]\n");
    Run::of(&["run", &text])
        .assert_bad_input()
        .stderr_has(&["short.blkparse:1: format:", "blkparse's text output"]);
    let cut = dir.file("cut.blktrace.0", "hello\n");
    Run::of(&["run", &cut])
        .assert_bad_input()
        .stderr_has(&["ends inside a record", "truncated"]);
}

/// Real blkparse on the shipped binary capture prints the shipped text byte for byte. Where
/// blkparse is missing the test passes, unless `QSIM_REQUIRE_FIO_TOOLS=1` (CI installs it).
#[test]
fn real_blkparse_reads_the_shipped_capture_into_the_shipped_text() {
    let have = std::process::Command::new("blkparse")
        .arg("-h")
        .output()
        .is_ok();
    if !have {
        let required = std::env::var("QSIM_REQUIRE_FIO_TOOLS").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "blkparse is not installed and QSIM_REQUIRE_FIO_TOOLS=1"
        );
        return;
    }
    let dir = TempDir::new();
    for cpu in 0..2 {
        let name = format!("loop-randrw.blktrace.{cpu}");
        std::fs::copy(
            format!("{}/traces/{name}", env!("CARGO_MANIFEST_DIR")),
            dir.path().join(&name),
        )
        .unwrap();
    }
    let out = std::process::Command::new("blkparse")
        .args(["-i", "loop-randrw"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let shipped = std::fs::read(format!(
        "{}/traces/loop-randrw.blkparse",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    assert!(
        out.stdout == shipped,
        "blkparse's text differs from traces/loop-randrw.blkparse"
    );
}

#[test]
fn a_job_files_read_iolog_replays_the_log_closed() {
    let dir = TempDir::new();
    std::fs::copy(
        format!("{}/traces/loop-randrw.iolog", env!("CARGO_MANIFEST_DIR")),
        dir.path().join("r.iolog"),
    )
    .unwrap();
    let job = dir.file(
        "j.fio",
        "[j]\nread_iolog=r.iolog\nioengine=libaio\ndirect=1\niodepth=2\n",
    );
    let r = Run::of(&["check", &job]);
    r.assert_ok();
    r.stdout_has(&[
        "(iolog3)",
        "501 (351 reads, 150 writes)",
        "2 in flight each",
    ]);
    dir.file(
        "bad.iolog",
        "fio version 3 iolog\n1 /dev/x add\nzz /dev/x read 0 1\n",
    );
    let job = dir.file("k.fio", "[k]\nread_iolog=bad.iolog\n");
    Run::of(&["run", &job])
        .assert_bad_input()
        .stderr_has(&["bad.iolog:3: time: `zz` is not a whole number"]);
}
