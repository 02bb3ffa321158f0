//! fio job files in: `qsim run job.fio` on the files of `tests/fio/`. Good files run on the
//! NVMe machine and print the fio-style report, with a warning for each option qsim does not
//! model; broken ones fail with exit 2 at their file and line. Each file's expected reading was
//! checked with fio 3.33 (`fio --parse-only`, `fio --showcmd`); its comment says how.

use crate::util::Run;

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
