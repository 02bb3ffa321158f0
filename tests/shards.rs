//! `qsim run --shard i/N` and `qsim merge`: a scenario with variants run in one process and
//! as 4 shards (under GNU parallel when it is installed) gives the same bytes on stdout and in
//! every export; a damaged or incomplete shard set is refused with a located error.

use crate::util::{HOSTILE, Run, TempDir, qsim, run_within};
use std::path::Path;

/// The scenario and flags every run here shares: variants, several policies, 3 replications.
const SCENARIO: [&str; 6] = ["gfp-atomic-storm", "--duration", "3s", "-r", "3", "-q"];

/// `SCENARIO` followed by `more`.
fn args<'a>(more: &[&'a str]) -> Vec<&'a str> {
    SCENARIO
        .iter()
        .copied()
        .chain(more.iter().copied())
        .collect()
}

/// Runs `qsim run SCENARIO --shard i/4 --shard-out DIR/s<i>.jsonl` for i = 0..4: under GNU
/// parallel when it is on the PATH (not moreutils' `parallel`, which takes other arguments); otherwise one after another (each with its own thread
/// count), unless `QSIM_REQUIRE_PARALLEL=1` asks for parallel, which then fails the test.
fn run_shards(dir: &Path, extra: &[&str]) {
    let out = dir.join("s{}.jsonl");
    let out = out.to_str().expect("UTF-8 temp path");
    let have_parallel = std::process::Command::new("parallel")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success() && o.stdout.starts_with(b"GNU parallel"));
    if have_parallel {
        let mut cmd = std::process::Command::new("parallel");
        cmd.args(["--will-cite", "--halt", "now,fail=1"])
            .arg(env!("CARGO_BIN_EXE_qsim"))
            .arg("run")
            .args(args(extra))
            .args([
                "--shard",
                "{}/4",
                "--shard-out",
                out,
                ":::",
                "0",
                "1",
                "2",
                "3",
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(std::process::Stdio::null());
        let o = cmd.output().expect("GNU parallel runs");
        assert!(
            o.status.success(),
            "parallel failed:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        return;
    }
    assert!(
        std::env::var("QSIM_REQUIRE_PARALLEL").as_deref() != Ok("1"),
        "QSIM_REQUIRE_PARALLEL=1 but GNU parallel is not on the PATH (apt-get install parallel)"
    );
    for i in 0..4 {
        let (shard, path) = (format!("{i}/4"), out.replace("{}", &i.to_string()));
        let jobs = (i + 1).to_string();
        let more = ["--shard", &shard, "--shard-out", &path, "-j", &jobs];
        let r = Run::of(&[&["run"][..], &args(extra), &more].concat());
        assert_eq!(r.code, Some(0), "shard {i}:\n{}", r.stderr);
        assert!(r.stdout.is_empty(), "a shard file went to stdout too");
    }
}

fn shard_paths(dir: &Path) -> Vec<String> {
    (0..4)
        .map(|i| {
            dir.join(format!("s{i}.jsonl"))
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn four_shards_merge_to_the_bytes_of_one_process() {
    let dir = TempDir::new();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (j1, c1, m1, f1) = (p("one.json"), p("one.csv"), p("one.md"), p("one-fio"));
    let one = qsim(
        &[
            &["run"][..],
            &args(&[
                "--json",
                &j1,
                "--csv",
                &c1,
                "--markdown",
                &m1,
                "--fio-dir",
                &f1,
            ]),
        ]
        .concat(),
    )
    .output()
    .unwrap();
    assert!(
        one.status.success(),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );
    run_shards(dir.path(), &[]);
    // Any order on the command line.
    let mut shards = shard_paths(dir.path());
    shards.reverse();
    let (j2, c2, m2, f2) = (p("m.json"), p("m.csv"), p("m.md"), p("m-fio"));
    let mut merge = vec!["merge"];
    merge.extend(shards.iter().map(String::as_str));
    merge.extend([
        "--json",
        &j2,
        "--csv",
        &c2,
        "--markdown",
        &m2,
        "--fio-dir",
        &f2,
    ]);
    let merged = qsim(&merge).output().unwrap();
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    assert!(
        String::from_utf8_lossy(&one.stdout).contains("variants"),
        "the case has variants"
    );
    assert!(one.stdout == merged.stdout, "stdout differs");
    for (a, b) in [(&j1, &j2), (&c1, &c2), (&m1, &m2)] {
        assert!(
            read(Path::new(a)) == read(Path::new(b)),
            "{a} and {b} differ"
        );
    }
    // fio's files for fio-plot: the same folders, the same bytes in every file.
    let files = |root: &str| -> Vec<(String, Vec<u8>)> {
        let mut all = Vec::new();
        for run in std::fs::read_dir(root).unwrap() {
            let run = run.unwrap().path();
            for f in std::fs::read_dir(&run).unwrap() {
                let f = f.unwrap().path();
                let name = f.strip_prefix(root).unwrap().display().to_string();
                all.push((name, read(&f)));
            }
        }
        all.sort();
        all
    };
    let (a, b) = (files(&f1), files(&f2));
    assert!(a.len() > 4, "{} fio files", a.len());
    assert!(a == b, "the --fio-dir trees differ");
}

#[test]
fn merge_writes_the_json_report_and_invariants_as_run_does() {
    let dir = TempDir::new();
    let flags = ["--format", "json", "--check-invariants"];
    let one = qsim(&[&["run"][..], &args(&flags)].concat())
        .output()
        .unwrap();
    assert!(one.status.success());
    run_shards(dir.path(), &[]);
    let shards = shard_paths(dir.path());
    let mut merge: Vec<&str> = vec!["merge"];
    merge.extend(shards.iter().map(String::as_str));
    merge.extend(flags);
    let merged = qsim(&merge).output().unwrap();
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    assert!(one.stdout == merged.stdout, "stdout differs");
    assert!(
        one.stderr == merged.stderr,
        "the invariant tables on stderr differ"
    );
}

#[test]
fn incomplete_mixed_or_damaged_shard_sets_are_refused_with_the_file_named() {
    let dir = TempDir::new();
    run_shards(dir.path(), &[]);
    let s = shard_paths(dir.path());
    let merge = |files: &[&str]| Run::of(&[&["merge"][..], files].concat());
    merge(&[&s[0], &s[1], &s[3]])
        .assert_bad_input()
        .stderr_has(&["shard 2/4 missing", "--shard i/4"]);
    let copy = dir.path().join("copy.jsonl");
    std::fs::copy(&s[1], &copy).unwrap();
    let copy = copy.to_str().unwrap();
    merge(&[&s[0], &s[1], &s[2], &s[3], copy])
        .assert_bad_input()
        .stderr_has(&[&format!(
            "{copy}: line 1: shard 1/4 again: {} is shard 1/4 too",
            s[1]
        )]);
    merge(&[&s[0], &s[1], &s[2], &s[3], &s[1]])
        .assert_bad_input()
        .stderr_has(&[&format!("{}: line 1: given twice", s[1])]);
    // Shard 2 of a run with another seed.
    let other = dir.file("other.jsonl", "");
    let r = Run::of(
        &[
            &["run"][..],
            &args(&["--seed", "9", "--shard", "2/4", "--shard-out", &other]),
        ]
        .concat(),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    merge(&[&s[0], &s[1], &other, &s[3]])
        .assert_bad_input()
        .stderr_has(&[
            &format!("{other}: line 1: from another run than {}", s[0]),
            "--seed",
        ]);
    // The last line cut in half, then the last line gone whole.
    let text = std::fs::read_to_string(&s[2]).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 3, "shard 2 holds jobs");
    let cut = dir.file(
        "cut.jsonl",
        &text[..text.len() - lines[lines.len() - 1].len() / 2],
    );
    merge(&[&s[0], &s[1], &cut, &s[3]])
        .assert_bad_input()
        .stderr_has(&[&format!("{cut}: line {}: the line breaks off", lines.len())]);
    let short = dir.file("short.jsonl", &(lines[..lines.len() - 1].join("\n") + "\n"));
    merge(&[&s[0], &s[1], &short, &s[3]])
        .assert_bad_input()
        .stderr_has(&[
            &format!("{short}: line {}: the file ends where job", lines.len() - 1),
            "truncated",
        ]);
    let report = dir.file("report.txt", "fio-style text\n");
    merge(&[&report])
        .assert_bad_input()
        .stderr_has(&[&format!("{report}: line 1: not a qsim shard file")]);
}

#[test]
fn shard_runs_refuse_what_needs_the_whole_run() {
    Run::of(
        &[
            &["run"][..],
            &args(&["--shard", "0/2", "--precision", "5%"]),
        ]
        .concat(),
    )
    .assert_bad_input()
    .stderr_has(&[
        "--shard cannot be combined with --precision",
        "hint: give the shards a fixed -r N",
    ]);
    Run::of(&[&["run"][..], &args(&["--shard", "0/2", "--json", "x.json"])].concat())
        .assert_bad_input()
        .stderr_has(&["--json shapes the report", "give --json to `qsim merge`"]);
    for bad in ["2/2", "1", "-1/2", "0/0", "a/b"] {
        let flag = format!("--shard={bad}");
        Run::of(&[&["run"][..], &args(&[&flag])].concat())
            .assert_bad_input()
            .stderr_has(&["is not a shard", "0 <= i < N"]);
    }
    let r = Run::of(&[&["run"][..], &args(&["--shard-out", "x.jsonl"])].concat());
    assert_eq!(r.code, Some(2), "--shard-out needs --shard:\n{}", r.stderr);
    assert!(r.stderr.contains("--shard <i/N>"), "{}", r.stderr);
}

/// Issue 14's Done-when: a sweep run as 4 shards (under GNU parallel) and merged prints the same
/// bytes, sweep tables and `--ascii` pictures included, as the sweep in one process.
#[test]
fn a_sweep_in_four_shards_merges_to_the_bytes_of_one_process() {
    let dir = TempDir::new();
    let sweep = [
        "--set",
        "!variants",
        "--sweep",
        "crypt.encrypt_rate+crypt.decrypt_rate=60MB/s..1432MiB/s:4:log",
    ];
    let csv1 = dir.path().join("one.csv");
    let csv1 = csv1.to_str().unwrap();
    let one = Run::of(&[&["run"][..], &args(&sweep), &["--ascii", "--csv", csv1]].concat());
    assert_eq!(one.code, Some(0), "{}", one.stderr);
    assert!(one.stdout.contains("\nSweep: read p99.9"), "{}", one.stdout);
    run_shards(dir.path(), &sweep);
    let csv2 = dir.path().join("m.csv");
    let csv2 = csv2.to_str().unwrap();
    let shards = shard_paths(dir.path());
    let mut merge: Vec<&str> = vec!["merge"];
    merge.extend(shards.iter().map(String::as_str));
    merge.extend(["--ascii", "--csv", csv2]);
    let merged = Run::of(&merge);
    assert_eq!(merged.code, Some(0), "{}", merged.stderr);
    assert!(one.stdout == merged.stdout, "stdout differs");
    assert!(
        read(Path::new(csv1)) == read(Path::new(csv2)),
        "CSV differs"
    );
}

/// Issue 32 case 7: a header's `shards` count is checked against the most shards a run may be
/// cut into before anything is allocated for it (100000000000 aborted on an 8 TB allocation,
/// 30000000 took 2.3 GB), and a set with many shards missing lists ten and counts the rest.
#[test]
fn an_edited_shard_count_is_refused_before_it_allocates() {
    let dir = TempDir::new();
    let tiny = dir.file(
        "tiny.yaml",
        "duration: 200ms\nreplications: 2\ndevice: { kind: generic, service: 1ms }\n\
         policies: [none, fifo]\nworkloads:\n  - { kind: fio, rw: randread, iodepth: 2 }\n",
    );
    let shard = dir.path().join("s0.jsonl");
    let shard = shard.to_str().unwrap();
    let r = Run::of(&["run", &tiny, "-q", "--shard", "0/3", "--shard-out", shard]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let text = std::fs::read_to_string(shard).unwrap();
    assert!(text.contains("\"shards\":3,"), "{text}");
    for n in ["100000000000", "30000000", "100001", "0"] {
        let edited = dir.file(
            &format!("e{n}.jsonl"),
            &text.replace("\"shards\":3,", &format!("\"shards\":{n},")),
        );
        run_within(&["merge", &edited], HOSTILE)
            .assert_bad_input()
            .stderr_has(&[&format!(
                "{edited}: line 1: the header says `shards: {n}`, but a run is cut into 1 to \
                 100000 shards (edited?)"
            )]);
    }
    let edited = dir.file("e5.jsonl", &text.replace("\"shard\":0,", "\"shard\":5,"));
    Run::of(&["merge", &edited])
        .assert_bad_input()
        .stderr_has(&["the header says shard 5 of 3, but shards are numbered 0 to 2"]);
    let many = dir.file(
        "many.jsonl",
        &text.replace("\"shards\":3,", "\"shards\":100000,"),
    );
    let r = run_within(&["merge", &many], HOSTILE);
    r.assert_bad_input().stderr_has(&[
        "shards 1/100000, 2/100000, 3/100000, 4/100000, 5/100000, 6/100000, 7/100000, \
         8/100000, 9/100000, 10/100000 … and 99989 more missing",
    ]);
    assert!(r.stderr.len() < 1000, "{} bytes on stderr", r.stderr.len());
}

/// `qsim merge a.jsonl --json a.jsonl` would replace a shard with the report: refused.
#[test]
fn merge_refuses_to_export_over_a_shard_file() {
    let dir = TempDir::new();
    let tiny = dir.file(
        "tiny.yaml",
        "duration: 100ms\nreplications: 1\ndevice: { kind: generic, service: 1ms }\n\
         policies: [none]\nworkloads:\n  - { kind: fio, rw: randread, iodepth: 2 }\n",
    );
    let shard = dir.path().join("s0.jsonl");
    let shard = shard.to_str().unwrap();
    let r = Run::of(&["run", &tiny, "-q", "--shard", "0/1", "--shard-out", shard]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let before = std::fs::read(shard).unwrap();
    Run::of(&["merge", shard, "--json", shard])
        .assert_bad_input()
        .stderr_has(&[&format!(
            "--json {shard}: is the shard file this command reads"
        )]);
    Run::of(&["run", &tiny, "-q", "--shard", "0/1", "--shard-out", &tiny])
        .assert_bad_input()
        .stderr_has(&["--shard-out", "is the scenario file this command reads"]);
    assert!(
        std::fs::read(shard).unwrap() == before,
        "the shard is untouched"
    );
}
