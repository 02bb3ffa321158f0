//! fio job files in: `qsim run job.fio` on the files of `tests/fio/`. Good files run on the
//! NVMe machine and print the fio-style report, with a warning for each option qsim does not
//! model; broken ones fail with exit 2 at their file and line. Each file's expected reading was
//! checked with fio 3.33 (`fio --parse-only`, `fio --showcmd`); its comment says how.

use crate::util::{HOSTILE, Run, TempDir, run_within};

/// Runs a job file briefly (one replication of 300 ms: `timed.fio` starts at 100 ms).
fn run(file: &str) -> Run {
    Run::of(&["run", file, "--duration", "300ms", "-r", "1"])
}

#[test]
fn the_seed_job_runs_as_hubbard_2019_does() {
    let args = ["--duration", "100ms", "-r", "1"];
    let fio = Run::of(&[&["run", "tests/fio/reader.fio"][..], &args].concat());
    fio.assert_ok();
    let yaml = Run::of(&[&["run", "hubbard-2019"][..], &args].concat());
    yaml.assert_ok();
    // Same machine, same job, same seed: the same report but for the names.
    // (The workload is `reader` in both; the scenario is named after the file.)
    let body = |out: &str, name: &str| -> Vec<String> {
        // The Description line and its continuation lines (wrapped at 80 columns).
        let mut in_description = false;
        out.lines()
            .skip(2)
            .filter(|l| {
                in_description = l.contains("Description")
                    || (in_description && l.starts_with("                 "));
                !in_description
            })
            .map(|l| l.replace(name, "reader"))
            .collect()
    };
    assert_eq!(
        body(&fio.stdout, "reader"),
        body(&yaml.stdout, "hubbard-2019")
    );
    fio.stdout_has(&[
        "qsim 0.1.0: scenario reader",
        "fio job file reader.fio on the hubbard-2019 machine",
        "reader: (groupid=0, jobs=1)",
        "read: IOPS=",
        "clat percentiles (usec):",
    ]);
}

#[test]
fn good_job_files_run_and_print_the_fio_style_report() {
    for (file, head) in [
        ("global", "global: (groupid=0, jobs=2)"),
        ("several", "several: (groupid=0, jobs=3)"),
        ("kb_base", "kb_base: (groupid=0, jobs=1)"),
        ("units", "units: (groupid=0, jobs=1)"),
        ("rate", "rate: (groupid=0, jobs=2)"),
        ("timed", "timed: (groupid=0, jobs=1)"),
    ] {
        let r = run(&format!("tests/fio/{file}.fio"));
        r.assert_ok();
        r.stdout_has(&[head, "read: IOPS="]);
    }
}

#[test]
fn unmodelled_options_are_named_in_warnings() {
    let r = run("tests/fio/unsupported.fio");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    r.stdout_has(&["unsupported: (groupid=0, jobs=1)", "write: IOPS="]);
    let f = "tests/fio/unsupported.fio";
    assert_eq!(
        r.stderr.lines().collect::<Vec<_>>(),
        [
            format!("warning: {f}:10: [checker] verify: fio option not modelled by qsim: ignored"),
            format!(
                "warning: {f}:11: [checker] norandommap: fio option not modelled by qsim: ignored"
            ),
            format!(
                "warning: {f}:9: [checker] iodepth: iodepth=32 has no effect with \
                 ioengine=psync (synchronous: one I/O at a time, as in fio)"
            ),
        ]
    );
    let r = run("tests/fio/mixed.fio");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    r.stdout_has(&["mixed: (groupid=0, jobs=2)", "read: IOPS=", "write: IOPS="]);
    r.stderr_has(&["warning: tests/fio/mixed.fio:14: [copy] rw: a sequential read/write mix"]);
}

#[test]
fn broken_job_files_fail_at_their_file_and_line() {
    for (file, first) in [
        // fio 3.33 reads `[writer` as a job named `write`; qsim refuses it.
        (
            "broken",
            "error: tests/fio/broken.fio:6:1: unterminated `[`",
        ),
        // fio: "failed parsing rw=sideways", exit 1.
        (
            "bad-value",
            "error: tests/fio/bad-value.fio:4:4: [reader] rw: unknown rw pattern \"sideways\"",
        ),
        // fio: "option <direct=1> outside of [] job section", exit 1.
        (
            "outside",
            "error: tests/fio/outside.fio:2:1: option `direct=1` comes before any [section]",
        ),
        // fio: "Bad option <iodpeth=64>", "Did you mean iodepth?", exit 1.
        (
            "typo",
            "error: tests/fio/typo.fio:6:9: [reader] iodpeth: fio has no option `iodpeth`",
        ),
        // fio reads 4k as 4000 under kb_base=1000 (--debug=parse); qsim needs whole sectors.
        (
            "bad-kb",
            "error: tests/fio/bad-kb.fio:6:4: [reader] bs: \"4k\" is 4000 bytes under \
             kb_base=1000",
        ),
    ] {
        let r = run(&format!("tests/fio/{file}.fio"));
        r.assert_bad_input();
        assert!(
            r.stderr.starts_with(first),
            "{file}: expected {first:?}, got:\n{}",
            r.stderr
        );
    }
}

#[test]
fn a_missing_job_file_is_a_read_error() {
    let r = run("tests/fio/no-such-job.fio");
    r.assert_bad_input();
    r.stderr_has(&["tests/fio/no-such-job.fio", "cannot read"]);
}

#[test]
fn machine_picks_the_scenario_the_jobs_run_on() {
    let r = Run::of(&[
        "run",
        "tests/fio/global.fio",
        "--machine",
        "two-queue",
        "--duration",
        "300ms",
        "-r",
        "1",
    ]);
    r.assert_ok();
    r.stdout_has(&[
        "fio job file global.fio on the two-queue machine",
        "policies: fifo, split, prio",
        "global: (groupid=0, jobs=2): err= 0: policy=split",
    ]);
    // A scenario has its own machine: --machine beside one is refused, not ignored.
    let r = Run::of(&["run", "two-queue", "--machine", "nvme-fio"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    r.stderr_has(&["--machine applies only to a fio job file"]);
}

#[test]
fn job_files_keep_the_run_invariants() {
    for file in ["reader", "several", "mixed", "rate", "timed"] {
        let r = Run::of(&[
            "run",
            &format!("tests/fio/{file}.fio"),
            "--duration",
            "300ms",
            "-r",
            "1",
            "--check-invariants",
        ]);
        assert_eq!(r.code, Some(0), "{file}: {}\n{}", r.stdout, r.stderr);
    }
}

#[test]
fn check_shows_how_a_job_file_was_read() {
    let r = Run::of(&["check", "tests/fio/several.fio"]);
    r.assert_ok();
    r.stdout_has(&[
        "fio job file several.fio on the hubbard-2019 machine",
        "scan                  fio: read, bs 128KiB",
        "log-writer            fio: write, bs 4KiB",
        "loop                closed, iodepth 16",
        "numjobs             2",
    ]);
    // --set edits the machine the jobs run on.
    let r = Run::of(&[
        "check",
        "tests/fio/reader.fio",
        "--set",
        "device.stall_length=0",
    ]);
    r.assert_ok();
    r.stdout_has(&["stalls                none"]);
}

/// Issue 16: fio's thinktime family, a startdelay range and the cpuio engine carry over from
/// a job file unchanged: `qsim check` shows the bursts, the spin and the cpuio copies, and the
/// run reports the application's CPU time by workload (cpuio only there, not in any latency).
#[test]
fn bursts_spins_and_cpuio_jobs_run_from_a_job_file() {
    Run::of(&["check", "tests/fio/burst.fio"])
        .assert_ok()
        .stdout_has(&[
            "100ms after every 32 I/Os issued, once none is in flight",
            "uniform in 0ns..100ms, drawn per copy",
            "200us of CPU at the start of each pause",
            "cpuio: 60% of one CPU per copy, no I/O",
            "10ms of CPU, then 6.666ms asleep",
        ]);
    let r = run("tests/fio/burst.fio");
    r.assert_ok()
        .stdout_has(&["app cpu      : total=", "reader=", "(cpuio ×3)"]);
    // 4 tenants × 32 writes every ~100 ms: bursts, not a stream.
    assert!(r.stdout.contains("write: IOPS="), "{}", r.stdout);
}

// Issue 32: hostile job files are refused or read in bounded time and memory (each once ran
// past a minute or 4 GiB): `run_within` kills a run after `HOSTILE` and fails one whose peak
// RSS passes 500 MB.

/// A job with 500,000 lines of one unmodelled option: once quadratic de-duplication (past
/// 60 s), now one warning that counts its lines.
#[test]
fn half_a_million_repeats_of_an_option_are_one_warning() {
    let dir = TempDir::new();
    let text = format!(
        "[reader]\nrw=randread\nbs=4k\nsize=1g\n{}",
        "verify=md5\n".repeat(500_000)
    );
    let f = dir.file("verify.fio", &text);
    let r = run_within(&["check", &f], HOSTILE);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(
        r.stderr,
        format!(
            "warning: {f}:5: [reader] verify: fio option not modelled by qsim: ignored (500000 \
             times, lines 5 to 500004)\n"
        )
    );
}

/// `[global]` with 20,000 warned options before 60 jobs: once a copy of every warning per job
/// (past 4 GiB with 2,000 jobs), now one warning for the [global] lines.
#[test]
fn global_options_are_warned_once_for_every_job() {
    let dir = TempDir::new();
    let mut text = format!("[global]\n{}", "verify=md5\n".repeat(20_000));
    for i in 0..60 {
        text.push_str(&format!("[j{i}]\nrw=read\nsize=1m\n"));
    }
    let f = dir.file("global.fio", &text);
    let r = run_within(&["check", &f], HOSTILE);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(
        r.stderr,
        format!(
            "warning: {f}:2: [global] verify: fio option not modelled by qsim: ignored (20000 \
             times, lines 2 to 20001)\n"
        )
    );
    r.stdout_has(&["j59", "fio: read, bs 4KiB"]);
}

/// 100,000 job sections (and a [global] of 20,000 lines before 2,000 jobs): refused at the
/// 65th job's header, before anything is built for the jobs.
#[test]
fn job_sections_past_the_workload_limit_are_refused_at_the_first_one() {
    let dir = TempDir::new();
    let mut many = String::new();
    for i in 0..100_000 {
        many.push_str(&format!("[j{i}]\nrw=read\nsize=1m\n"));
    }
    let mut global = format!("[global]\n{}", "verify=md5\n".repeat(20_000));
    for i in 0..2_000 {
        global.push_str(&format!("[j{i}]\nrw=read\nsize=1m\n"));
    }
    for (name, text, line) in [("many.fio", many, 193), ("global.fio", global, 20_194)] {
        let f = dir.file(name, &text);
        let r = run_within(&["check", &f], HOSTILE);
        r.assert_bad_input().stderr_has(&[
            &format!(
                "error: {f}:{line}:1: [j64]: job section 65: a job file may hold at most 64 jobs"
            ),
            "hint: give one job numjobs=N for N copies of it",
        ]);
    }
}

/// A job file of a million and one option lines is refused at the line past the limit.
#[test]
fn option_lines_past_the_limit_are_refused_at_the_first_one() {
    let dir = TempDir::new();
    let text = format!("[r]\nsize=1m\n{}", "direct=1\n".repeat(1_000_000));
    let f = dir.file("long.fio", &text);
    let r = run_within(&["check", &f], HOSTILE);
    r.assert_bad_input().stderr_has(&[
        &format!("error: {f}:1000002:1: [r]: more than 1000000 option lines"),
        "hint: a job needs a few options",
    ]);
}

/// Issue 32's vague refusals, now clear: a byte-order mark is skipped, `runtime=0` is fio's "no
/// limit", and `include` and `${VAR}` are refused at their line with what to write instead.
#[test]
fn bom_runtime_0_include_and_variables() {
    let dir = TempDir::new();
    let f = dir.file("bom.fio", "\u{feff}[reader]\nrw=read\nsize=1m\n");
    Run::of(&["check", &f])
        .assert_ok()
        .stdout_has(&["reader", "fio: read, bs 4KiB"]);
    let f = dir.file("zero.fio", "[reader]\nrw=read\nsize=1m\nruntime=0\n");
    Run::of(&["check", &f])
        .assert_ok()
        .stdout_has_words(&["duration                5s (warm-up 0ns, measured 5s; ends earlier"]);
    for (name, text, first, hint) in [
        (
            "include.fio",
            "[reader]\nrw=read\n  include common.fio\nsize=1m\n",
            ":3:3: `include common.fio`: qsim does not expand fio's include directive",
            "hint: paste the lines of common.fio here in place of this line",
        ),
        (
            "var.fio",
            "[reader]\nrw=read\nsize=${SIZE}\n",
            ":3:6: `${SIZE}`: qsim does not substitute environment variables",
            "hint: write the value itself in its place",
        ),
    ] {
        let f = dir.file(name, text);
        Run::of(&["check", &f])
            .assert_bad_input()
            .stderr_has(&[&format!("error: {f}{first}"), hint]);
    }
}

/// What the machine brings (its kernel, its duration, its own workloads) is checked against
/// the job file's lines, naming the machine: never a line of the machine's scenario.
#[test]
fn machine_errors_point_at_the_job_file() {
    let dir = TempDir::new();
    let f = dir.file("big.fio", "[r]\nrw=read\nbs=1m\nsize=64m\n");
    Run::of(&["run", &f, "--machine", "two-queue"])
        .assert_bad_input()
        .stderr_has(&[
            &format!(
                "error: {f}:3: [r] bs: 1MiB is larger than the largest request of the two-queue \
                 machine's kernel (2.6.32): 512KiB"
            ),
            "hint: write bs=512k or less",
        ]);
    let f = dir.file("ramp.fio", "[r]\nrw=read\nsize=64m\nramp_time=100\n");
    Run::of(&["run", &f, "--machine", "two-queue"])
        .assert_bad_input()
        .stderr_has(&[&format!(
            "error: {f}:4: [r] ramp_time: ramp_time (100s) is not shorter than the run: no job \
             has a runtime, so it lasts the two-queue machine's duration, 60s"
        )]);
    // two-queue's own writer region ends past 1 GiB; the job's 1 GiB fits.
    let f = dir.file("fits.fio", "[r]\nrw=read\nsize=1g\n");
    let args = [
        "--set",
        "device.capacity=1GiB",
        "--duration",
        "10ms",
        "-r",
        "1",
    ];
    let r = Run::of(&[&["run", &f, "--machine", "two-queue", "-q"][..], &args].concat());
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let r = Run::of(&["run", &f, "--set", "workloads[0].bs=8k"]);
    r.assert_bad_input().stderr_has(&[
        "error: --set workloads[0].bs=8k: a fio job file's jobs are the workloads",
        &format!("hint: change the job's option in {f} instead"),
    ]);
}
