//! Tests of the job-file reader. Each expected reading was checked against fio 3.33
//! (`fio --parse-only --debug=parse`, `fio --showcmd`).

use super::values::size_multiplier;
use super::*;
use crate::scenario::{Arrivals, FioJob, RwKind, WorkloadKind, resolve};

fn read(text: &str) -> Result<JobFile, Error> {
    load_str(
        "job.fio",
        text,
        resolve(DEFAULT_MACHINE).expect("shipped"),
        DEFAULT_MACHINE,
    )
}

fn ok(text: &str) -> JobFile {
    read(text).unwrap_or_else(|e| panic!("{e}"))
}

fn err(text: &str) -> Error {
    match read(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

fn job(f: &JobFile, i: usize) -> &FioJob {
    match &f.scenario.workloads[i].kind {
        WorkloadKind::Fio(j) => j,
        other => panic!("not a fio job: {other:?}"),
    }
}

fn depth(j: &FioJob) -> u32 {
    match j.arrivals {
        Arrivals::Closed { iodepth, .. } | Arrivals::Open { iodepth, .. } => iodepth,
    }
}

#[test]
fn sizes_follow_kb_base_as_fio_3_33_reads_them() {
    // fio 3.33 --debug=parse: under 1024, 4k 4K 4KB 4kB 4kb 4Ki = 4096, 4KiB 4kib = 4000,
    // 1MiB = 1000000, 1MB = 1048576; under 1000 the other way round; b or nothing is 1.
    for (suffix, under_1024, under_1000) in [
        ("", 1, 1),
        ("b", 1, 1),
        ("B", 1, 1),
        ("k", 1024, 1000),
        ("K", 1024, 1000),
        ("KB", 1024, 1000),
        ("kB", 1024, 1000),
        ("Ki", 1024, 1000),
        ("KiB", 1000, 1024),
        ("kib", 1000, 1024),
        ("MiB", 1_000_000, 1_048_576),
        ("MB", 1_048_576, 1_000_000),
        ("g", 1 << 30, 1_000_000_000),
        ("t", 1 << 40, 1_000_000_000_000),
    ] {
        assert_eq!(size_multiplier(suffix, 1024), Some(under_1024), "{suffix}");
        assert_eq!(size_multiplier(suffix, 1000), Some(under_1000), "{suffix}");
    }
    assert_eq!(size_multiplier("x", 1024), None);
    assert_eq!(size_multiplier("kbb", 1024), None);
}

#[test]
fn the_seed_job_is_hubbard_2019s_workload() {
    let f = ok(
        "[reader]\ndirect=1\nioengine=libaio\nblocksize=4096\nsize=1g\nnumjobs=1\n\
                rw=read\niodepth=64\n",
    );
    assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    let hubbard = resolve("hubbard-2019").unwrap();
    assert_eq!(
        format!("{:?}", f.scenario.workloads),
        format!("{:?}", hubbard.workloads)
    );
    assert_eq!(f.scenario.duration, hubbard.duration);
    assert_eq!(f.scenario.warmup, hubbard.warmup);
    assert_eq!(f.scenario.name, "job");
}

#[test]
fn comments_spaces_and_later_options_read_as_fio_reads_them() {
    let f = ok(
        "# a comment\n; another\n[j]  \nbs = 8k ; inline\nsize=1m # too\n\
                iodepth=2\nioengine=libaio\ndirect=1\niodepth=4\n",
    );
    let j = job(&f, 0);
    assert_eq!((j.bs, j.size, depth(j)), (8192, 1 << 20, 4));
}

#[test]
fn a_global_section_applies_to_the_jobs_after_it_only() {
    let f = ok("[global]\nbs=4k\nsize=64m\n[a]\n[global]\nbs=16k\n[b]\n[c]\nbs=8k\n");
    let bs: Vec<u64> = (0..3).map(|i| job(&f, i).bs).collect();
    assert_eq!(bs, [4096, 16384, 8192]);
    assert_eq!(job(&f, 0).size, 64 << 20);
}

/// Jobs after the first inherit only the last occurrence of each [global] option: they must
/// read as if every line were applied, aliases (bs/blocksize, direct/buffered) included.
#[test]
fn jobs_inherit_global_options_as_written() {
    let f = ok(
        "[global]\nbs=4k\ndirect=1\nbuffered=1\nblocksize=8k\nverify=md5\nsize=1m\n\
                [a]\n[global]\ndirect=1\nbs=16k\nverify=md5\n[b]\n[c]\nbuffered=1\n[d]\nbs=,4k\n",
    );
    let got: Vec<(u64, bool)> = (0..4).map(|i| (job(&f, i).bs, job(&f, i).direct)).collect();
    assert_eq!(
        got,
        [(8192, false), (16384, true), (16384, false), (4096, true)]
    );
    // The [global] lines are warned once each, under [global], not once per job.
    let shown: Vec<String> = f.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        shown,
        [
            "job.fio:6: [global] verify: fio option not modelled by qsim: ignored (2 times, lines 6 \
          to 12)"
        ]
    );
    // An error in an overridden [global] value is still found (at the first job after it).
    let e = err("[global]\nbs=4q\nbs=4k\n[a]\nsize=1m\n").to_string();
    assert!(
        e.starts_with("job.fio:2:4: [a] bs: \"4q\" is not a size"),
        "{e}"
    );
}

#[test]
fn bom_runtime_0_include_and_variables() {
    // A leading byte-order mark is skipped; runtime=0 is fio's "no limit".
    let f = ok("\u{feff}[r]\nsize=1m\nruntime=0\n");
    assert_eq!(
        f.scenario.duration,
        resolve(DEFAULT_MACHINE).unwrap().duration
    );
    for (text, want) in [
        (
            "[r]\ninclude x.fio\n",
            "job.fio:2:1: `include x.fio`: qsim does not expand",
        ),
        (
            "include\n[r]\n",
            "job.fio:1:1: `include FILE`: qsim does not expand",
        ),
        (
            "[r]\nsize=1m\nbs=${BS}k\n",
            "job.fio:3:4: `${BS}`: qsim does not substitute",
        ),
        (
            "[r]\nsize=1m\nname=${\n",
            "job.fio:3:6: `${`: qsim does not substitute",
        ),
    ] {
        let e = err(text).to_string();
        assert!(e.starts_with(want), "{text}\n{e}");
    }
    // A key that only starts with the word is an option as usual.
    let e = err("[r]\nincluded=1\n").to_string();
    assert!(e.contains("fio has no option `included`"), "{e}");
}

#[test]
fn synchronous_engines_submit_one_io_at_a_time() {
    // fio's default engine is psync: iodepth has no effect, and qsim says so.
    let f = ok("[j]\nsize=1m\niodepth=32\n");
    assert_eq!(depth(job(&f, 0)), 1);
    assert_eq!(f.warnings.len(), 1);
    assert_eq!(f.warnings[0].line, 3);
    assert!(f.warnings[0].message.contains("psync"), "{}", f.warnings[0]);
    let f = ok("[j]\nsize=1m\niodepth=32\nioengine=io_uring\n");
    assert_eq!(depth(job(&f, 0)), 32);
    assert!(f.warnings.is_empty());
    // libaio queues only with direct=1: a buffered io_submit completes before it returns.
    let f = ok("[j]\nsize=1m\niodepth=32\nioengine=libaio\n");
    assert_eq!(depth(job(&f, 0)), 1);
    assert!(
        f.warnings[0].message.contains("buffered"),
        "{}",
        f.warnings[0]
    );
    let f = ok("[j]\nsize=1m\niodepth=32\nioengine=libaio\ndirect=1\n");
    assert_eq!(depth(job(&f, 0)), 32);
}

#[test]
fn mixes_rates_and_think_times_map_onto_the_workload() {
    let f = ok("[global]\nsize=64m\nioengine=libaio\ndirect=1\niodepth=8\n\
                [mix]\nrw=randrw\nrwmixwrite=30\n\
                [paced]\nrw=randread\nrate_iops=2000\n\
                [bw]\nrw=randread\nrate=8m\nrate_process=poisson\n\
                [think]\nrw=randread\nthinktime=500\n");
    let mix = job(&f, 0);
    assert_eq!((mix.rw, mix.rwmixread), (RwKind::RandRw, 70));
    assert!(matches!(
        job(&f, 1).arrivals,
        Arrivals::Open { rate, poisson: false, iodepth: 8 } if rate == 2000.0
    ));
    // 8m = 8 MiB/s in 4 KiB blocks.
    assert!(matches!(
        job(&f, 2).arrivals,
        Arrivals::Open { rate, poisson: true, .. } if rate == 2048.0
    ));
    // fio's thinktime keeps its own rule (a pause after each completed I/O by default).
    let think = job(&f, 3);
    assert!(matches!(
        &think.arrivals,
        Arrivals::Closed { think: None, .. }
    ));
    let tt = think.thinktime.expect("thinktime");
    assert_eq!(
        (tt.time, tt.spin, tt.blocks, tt.on_issue),
        (SimDuration::from_us(500), SimDuration::ZERO, 1, false)
    );
}

#[test]
fn think_time_options_start_ranges_and_cpuio_map_onto_workloads() {
    let f = ok(
        "[global]\nsize=64m\n[burst]\nioengine=libaio\ndirect=1\niodepth=8\n\
                rw=randwrite\nthinktime=250ms\nthinktime_blocks=32\n\
                thinktime_blocks_type=issue\nthinktime_spin=100\nstartdelay=0-2\n\
                [app]\nioengine=cpuio\ncpuload=150\ncpuchunks=10000\nnumjobs=2\n\
                cpumode=qsort\n",
    );
    let b = job(&f, 0);
    let tt = b.thinktime.expect("thinktime");
    assert_eq!(
        (tt.time, tt.spin, tt.blocks, tt.on_issue),
        (
            SimDuration::from_ms(250),
            SimDuration::from_us(100),
            32,
            true
        )
    );
    assert_eq!(
        (b.startdelay, b.startdelay_high),
        (SimDuration::ZERO, Some(SimDuration::from_secs(2)))
    );
    let WorkloadKind::CpuIo(c) = &f.scenario.workloads[1].kind else {
        panic!("cpuio")
    };
    // fio clamps cpuload to 100.
    assert_eq!(
        (c.cpuload, c.cpuchunks, c.numjobs),
        (100, SimDuration::from_ms(10), 2)
    );
    let shown: Vec<String> = f.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        shown
            .iter()
            .any(|w| w.contains("[app] cpuload: cpuload=150 is over 100")),
        "{shown:?}"
    );
    assert!(
        shown.iter().any(|w| w.contains("[app] cpumode: qsort")),
        "{shown:?}"
    );
    // Companions without thinktime are ignored (fio ignores them), with a warning.
    let f = ok("[j]\nsize=1m\nthinktime_spin=5\n");
    assert!(job(&f, 0).thinktime.is_none());
    assert!(
        f.warnings[0]
            .to_string()
            .contains("no effect without thinktime"),
        "{:?}",
        f.warnings
    );
}

#[test]
fn cpuio_options_on_another_engine_and_bad_think_values_are_errors() {
    for (text, line, want) in [
        (
            "[j]\nsize=1m\ncpuload=50\n",
            3,
            "[j] cpuload: `cpuload` is an option of ioengine=cpuio",
        ),
        (
            "[j]\nsize=1m\nthinktime=5\nthinktime_blocks_type=later\n",
            4,
            "[j] thinktime_blocks_type: expected complete or issue",
        ),
        (
            "[j]\nsize=1m\nstartdelay=5-2\n",
            3,
            "[j] startdelay: the range \"5-2\" ends before it starts",
        ),
        (
            "[j]\nsize=1m\nthinktime=5\nthinktime_blocks=0\n",
            4,
            "[j] thinktime_blocks",
        ),
        ("[a]\nsize=1m\n[app]\nioengine=cpuio\n", 3, "[app]"),
    ] {
        let e = err(text).to_string();
        assert!(
            e.starts_with(&format!("job.fio:{line}:")) && e.contains(want),
            "{text}\n{e}"
        );
    }
}

#[test]
fn runtime_time_based_ramp_and_startdelay_set_the_run_length() {
    // runtime is in seconds and thinktime in microseconds without a unit (fio 3.33).
    let f = ok("[j]\nsize=1m\nruntime=2\nramp_time=500ms\nstartdelay=1\ntime_based\n");
    assert_eq!(f.scenario.duration, SimDuration::from_ms(3500));
    assert_eq!(f.scenario.warmup, SimDuration::from_ms(500));
    let j = job(&f, 0);
    assert_eq!((j.io_size, j.startdelay), (None, SimDuration::from_secs(1)));
    // Without time_based the job does its size once (fio's size is also the amount).
    let f = ok("[j]\nsize=1m\nruntime=2\n");
    assert_eq!(job(&f, 0).io_size, Some(1 << 20));
}

#[test]
fn options_fio_knows_and_qsim_does_not_are_warned_at_their_line() {
    let f = ok("[global]\nverify=md5\n[a]\nsize=1m\n[b]\nsize=1m\nrw=rw\n");
    let shown: Vec<String> = f.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        shown,
        [
            // One warning for the [global] line, not one per job that inherits it.
            "job.fio:2: [global] verify: fio option not modelled by qsim: ignored",
            "job.fio:7: [b] rw: a sequential read/write mix is not modelled: runs as randrw \
             (random offsets, same mix)",
        ]
    );
}

#[test]
fn jobs_of_one_name_are_told_apart() {
    let f = ok("[j]\nsize=1m\n[j]\nsize=1m\n[k]\nname=j\nsize=1m\n");
    let names: Vec<&str> = f
        .scenario
        .workloads
        .iter()
        .map(|w| w.name.as_str())
        .collect();
    assert_eq!(names, ["j", "j.2", "j.3"]);
}

/// The error's place and text: `file:line: path: message`.
fn first_line(e: &Error) -> String {
    e.to_string().lines().next().unwrap_or("").to_string()
}

#[test]
fn broken_files_are_refused_at_their_line() {
    for (text, expected) in [
        (
            "direct=1\n[j]\n",
            "job.fio:1:1: option `direct=1` comes before any [section]",
        ),
        ("[j]\nsize=1m\n[k\n", "job.fio:3:1: unterminated `[`"),
        ("[]\n", "job.fio:1:1: `[]` is not a section header"),
        ("[j]\n=4k\n", "job.fio:2:1: no option name before `=`"),
        (
            "; nothing\n[global]\nbs=4k\n",
            "job.fio:2: the job file has no job section",
        ),
        (
            "[j]\nsize=1m\niodpeth=4\n",
            "job.fio:3:9: [j] iodpeth: fio has no option",
        ),
        (
            "[j]\nsize=1m\ndirect=true\n",
            "job.fio:3:8: [j] direct: expected 0 or 1",
        ),
        (
            "[j]\nsize=1m\ndirect\n",
            "job.fio:3:1: [j] direct: `direct` needs a value",
        ),
        (
            "[j]\nkb_base=999\n",
            "job.fio:2:9: [j] kb_base: kb_base must be 1024 or 1000",
        ),
        (
            "[j]\nsize=50%\n",
            "job.fio:2:6: [j] size: \"50%\": a percentage",
        ),
        (
            "[j]\nsize=1.5m\n",
            "job.fio:2:6: [j] size: \"1.5m\": fio sizes are whole",
        ),
        (
            "[j]\nsize=1m\nrw=trim\n",
            "job.fio:3:4: [j] rw: rw=trim: qsim does not model trims",
        ),
        (
            "[j]\nsize=1m\nruntime=soon\n",
            "job.fio:3:9: [j] runtime: \"soon\" is not a time",
        ),
        ("[j]\nrw=read\n", "job.fio:1: [j]: job `j` has no size"),
        (
            "[j]\nsize=1m\niodepth=0\n",
            "job.fio:3:9: [j] iodepth: must be between 1 and",
        ),
        (
            "[global]\nkb_base=1000\n[j]\nsize=1m\nbs=4k\n",
            "job.fio:5:4: [j] bs: \"4k\" is 4000 bytes under kb_base=1000",
        ),
        (
            "[j]\nsize=1m\nrate_iops=10\nthinktime=5\n",
            "job.fio:4: [j] thinktime: thinktime with a rate limit",
        ),
    ] {
        let e = err(text);
        assert!(
            first_line(&e).starts_with(expected),
            "{text:?}:\n{e}\nexpected {expected:?}"
        );
        assert!(e.hint().is_some(), "{e}");
    }
}

#[test]
fn an_error_the_scenario_checks_find_is_moved_to_the_job_files_line() {
    // io_size below one block: found by the workload checks, reported at the io_size line.
    let e = err("[j]\nsize=1m\nbs=8k\nio_size=4k\n");
    assert!(
        first_line(&e).starts_with("job.fio:4: [j] io_size: "),
        "{e}"
    );
    assert!(e.to_string().contains("4 | io_size=4k"), "{e}");
}

#[test]
fn job_files_are_told_by_their_extension() {
    assert!(is_job_file("tests/fio/reader.fio"));
    assert!(is_job_file("JOB.FIO"));
    assert!(!is_job_file("two-queue"));
    assert!(!is_job_file("scenarios/two-queue.yaml"));
}

#[test]
fn a_region_past_an_hdds_end_is_refused_at_its_size() {
    // two-queue's disk is an HDD (320 GB by default): a 1 TiB region does not fit.
    let base = resolve("two-queue").expect("shipped");
    let e = load_str("job.fio", "[j]\nsize=1t\n", base, "two-queue").unwrap_err();
    assert!(
        first_line(&e).starts_with("job.fio:2: [j] size: the job's region ends at"),
        "{e}"
    );
    let base = resolve("two-queue").expect("shipped");
    assert!(load_str("job.fio", "[j]\nsize=1g\n", base, "two-queue").is_ok());
}

/// Issue 27 item 6: a job's largest request is the machine's kernel's. A 1 MiB `bs` loads on
/// nvme-desktop (6.12: 1 MiB bios) and is refused on two-queue (2.6.32: 512 KiB requests),
/// and on a machine whose variants include a 2.6 kernel, since every variant runs the job.
#[test]
fn a_jobs_largest_request_is_the_machines_kernels() {
    let text = "[seq]\nrw=read\nbs=1m\nsize=1g\n";
    let modern = load_str(
        "job.fio",
        text,
        resolve("nvme-desktop").unwrap(),
        "nvme-desktop",
    );
    let f = modern.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(job(&f, 0).bs, 1 << 20);
    let e = load_str("job.fio", text, resolve("two-queue").unwrap(), "two-queue").unwrap_err();
    assert!(
        first_line(&e).contains(
            "job.fio:3: [seq] bs: 1MiB is larger than the largest request of the two-queue \
             machine's kernel (2.6.32): 512KiB"
        ),
        "{e}"
    );
    let mut mixed = resolve("nvme-desktop").unwrap();
    let mut old = mixed.clone();
    old.kernel.version = crate::model::base::config::KernelVersion::V2_6_32;
    mixed.variants = vec![crate::model::base::config::Variant {
        name: "old".into(),
        scenario: Box::new(old),
    }];
    let e = load_str("job.fio", text, mixed, "nvme-desktop").unwrap_err();
    assert!(first_line(&e).contains("512KiB"), "{e}");
}

/// The options as written, for fio's JSON: `[global]` before the first job, and that job's.
#[test]
fn given_options_are_kept_as_written() {
    let f = ok(
        "[global]\nbs=4k\nbs=8k\ntime_based\nruntime=1\n[a]\nsize=1m\nrw=randread\n[b]\nsize=2m\n",
    );
    let g = &f.scenario.fio_given;
    let list = |l: &[(String, String)]| -> Vec<String> {
        l.iter().map(|(k, v)| format!("{k}={v}")).collect()
    };
    assert_eq!(list(&g.global), ["bs=8k", "time_based=", "runtime=1"]);
    assert_eq!(list(&g.job), ["size=1m", "rw=randread"]);
}

/// fio's log options are read, not warned as ignored: the logs are written with `qsim run
/// --fio-dir`; a bad value is refused at its line, as the other options are.
#[test]
fn log_options_are_read_and_bad_values_refused_at_their_line() {
    let f = ok(
        "[j]\nsize=1m\nwrite_lat_log=x\nwrite_bw_log=x\nwrite_iops_log\n\
                log_avg_msec=0\nlog_offset=1\n",
    );
    assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    let f = ok("[j]\nsize=1m\nlog_offset\n");
    assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    for (text, expected) in [
        (
            "[j]\nsize=1m\nlog_avg_msec=-5\n",
            "job.fio:3:14: [j] log_avg_msec: \"-5\" is not a whole number",
        ),
        (
            "[j]\nsize=1m\nlog_avg_msec=often\n",
            "job.fio:3:14: [j] log_avg_msec: \"often\" is not a whole number",
        ),
        (
            "[j]\nsize=1m\nlog_offset=yes\n",
            "job.fio:3:12: [j] log_offset: expected 0 or 1",
        ),
    ] {
        let e = err(text);
        assert!(
            first_line(&e).starts_with(expected),
            "{text:?}:\n{e}\nexpected {expected:?}"
        );
    }
}
