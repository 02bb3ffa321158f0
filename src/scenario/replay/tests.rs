//! The replay end to end in the library: the binary capture and real blkparse's text of it
//! agree, a replay issues exactly the trace's I/Os, and both modes' times worked by hand.

use super::*;
use crate::model::base::bio::Dir;
use crate::model::{policy_names, run_traced};
use std::collections::BTreeMap;

/// The shipped capture (traces/capture.sh).
fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces")
        .join(name)
}

fn events(format: Format, files: &[PathBuf]) -> Vec<Event> {
    let mut r = reader(format, files).unwrap();
    let mut out = Vec::new();
    while let Some(e) = r.next_event().unwrap() {
        out.push(e);
    }
    out
}

/// A file of `text` in the temporary folder, unique to the test.
fn temp(name: &str, text: &[u8]) -> PathBuf {
    let p = std::env::temp_dir().join(format!("qsim-replay-{}-{name}", std::process::id()));
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn the_binary_capture_and_blkparse_text_of_it_give_the_same_queue_events() {
    let (fb, bin_files) = resolve(&shipped("loop-randrw.blktrace")).unwrap();
    let (ft, text_files) = resolve(&shipped("loop-randrw.blkparse")).unwrap();
    assert_eq!(
        (fb, ft, bin_files.len()),
        (Format::Blktrace, Format::Blkparse, 2)
    );
    let bin = events(fb, &bin_files);
    let text = events(ft, &text_files);
    assert!(bin.len() > 600, "{} queue events", bin.len());
    assert_eq!(bin.len(), text.len());
    // blkparse prints times from the first event; the binary holds the kernel's clock.
    let t0 = bin[0].time_ns;
    for (i, (b, t)) in bin.iter().zip(&text).enumerate() {
        let b = Event {
            time_ns: b.time_ns - t0,
            ..*b
        };
        assert_eq!(&b, t, "queue event {i}");
    }
}

/// The scenario text of a replay of `file` in `mode` on a device of constant service.
fn scenario(file: &Path, mode: &str, extra: &str) -> crate::scenario::Scenario {
    let text = format!(
        "policies: [none]\nduration: 60s\nreplications: 1\nkernel: {{ version: \"6.11\" }}\n\
         device: {{ kind: generic, service: 1ms }}\nworkloads:\n  - {{ kind: replay, file: \
         \"{}\", mode: {mode}{extra} }}\n",
        file.display()
    );
    crate::scenario::load_str("<test>", &text).unwrap()
}

fn none() -> &'static crate::model::crypt::policy::PolicyInfo {
    assert!(policy_names().contains(&"none"));
    crate::model::crypt::policy::REGISTRY
        .iter()
        .find(|p| p.name == "none")
        .unwrap()
}

#[test]
fn a_replay_issues_exactly_the_traces_ios_in_both_modes() {
    let trace = shipped("loop-randrw.blktrace");
    let (f, files) = resolve(&trace).unwrap();
    let mut want: BTreeMap<(bool, u64), u64> = BTreeMap::new();
    for e in events(f, &files).iter().filter(|e| e.op != Op::Skip) {
        *want.entry((e.op == Op::Write, e.bytes)).or_default() += 1;
    }
    for mode in ["open", "closed"] {
        let sc = scenario(&trace, mode, "");
        let run = run_traced(&sc, none(), 0, 100_000);
        assert!(run.violations.is_empty(), "{:?}", run.violations);
        let mut got: BTreeMap<(bool, u64), u64> = BTreeMap::new();
        for r in run.issue_trace.jobs.iter().flatten() {
            *got.entry((r.dir == Dir::Write, u64::from(r.bytes)))
                .or_default() += 1;
        }
        assert_eq!(got, want, "{mode}: issued (write, bytes) histogram");
        let done: u64 = run.obs.finite_jobs.iter().map(|j| j.ios).sum();
        assert_eq!(done, want.values().sum::<u64>(), "{mode}: completed");
    }
}

/// Three I/Os at 0, 100 µs and 5 ms of one process, on a device of one channel that serves
/// each in exactly 1 ms. Open (at most 1024 in flight): issued at 0, 100 µs, 5 ms; the second waits for the first, so
/// the completions are 1, 2 and 6 ms. Closed (one in flight): the first at 0 (done at 1 ms);
/// the second is due 100 µs after the first issue but waits for the slot, so it goes at 1 ms
/// (done at 2 ms); the third is due 4.9 ms after the second's issue: 5.9 ms (done at 6.9 ms).
#[test]
fn open_and_closed_times_worked_by_hand() {
    let log = temp(
        "hand.iolog",
        b"fio version 3 iolog\n10 /dev/x add\n10 /dev/x open\n10 /dev/x read 0 4096\n\
          110 /dev/x read 1048576 4096\n5010 /dev/x write 2097152 4096\n",
    );
    for (mode, issues, end) in [
        ("open", [0, 100_000, 5_000_000], 6_000_000),
        ("closed", [0, 1_000_000, 5_900_000], 6_900_000),
    ] {
        let sc = scenario(&log, mode, "");
        let run = run_traced(&sc, none(), 0, 10);
        let at: Vec<u64> = run.issue_trace.jobs[0]
            .iter()
            .map(|r| r.at.as_ns())
            .collect();
        assert_eq!(at, issues, "{mode}: issue times");
        assert_eq!(
            run.obs.finite_jobs[0].elapsed_ns,
            Some(end),
            "{mode}: last completion"
        );
    }
    // Open with one slot: the second I/O waits for the first's completion, then goes at once.
    let sc = scenario(&log, "open", ", iodepth: 1");
    let run = run_traced(&sc, none(), 0, 10);
    let at: Vec<u64> = run.issue_trace.jobs[0]
        .iter()
        .map(|r| r.at.as_ns())
        .collect();
    assert_eq!(at, [0, 1_000_000, 5_000_000]);
    std::fs::remove_file(log).ok();
}

/// A capture's per-CPU file of `records`, as `NAME.blktrace.0`.
fn capture(name: &str, records: &[Vec<u8>]) -> PathBuf {
    let base = PathBuf::from(format!("{}.blktrace", temp(name, b"").display()));
    std::fs::remove_file(temp(name, b"")).ok();
    let file = PathBuf::from(format!("{}.0", base.display()));
    std::fs::write(&file, records.concat()).unwrap();
    base
}

fn q(time: u64, sector: u64, write: bool, pid: u32) -> Vec<u8> {
    blktrace::record(
        time,
        sector,
        4096,
        blktrace::queue_action(write, true),
        pid,
        7 << 20,
        &[],
    )
}

fn check_err(base: &Path) -> TraceError {
    let e = check(base, None).unwrap_err();
    cleanup(base);
    e
}

fn cleanup(base: &Path) {
    for f in cpu_files(base).unwrap_or_default() {
        std::fs::remove_file(f).ok();
    }
}

#[test]
fn a_capture_names_its_processes_and_merges_its_cpus_by_time() {
    let note = blktrace::record(0, 0, 0, blktrace::process_action(), 42, 7 << 20, b"fio\0");
    let base = capture("named", &[note, q(10, 8, false, 42), q(30, 16, true, 42)]);
    let cpu1 = PathBuf::from(format!("{}.1", base.display()));
    std::fs::write(&cpu1, q(20, 24, false, 43)).unwrap();
    let c = check(&base, None).unwrap();
    assert_eq!(
        c.summary.processes,
        [(42, "fio".to_string()), (43, String::new())]
    );
    let (f, files) = resolve(&base).unwrap();
    let times: Vec<u64> = events(f, &files).iter().map(|e| e.time_ns).collect();
    assert_eq!(times, [10, 20, 30]);
    let mut s = FileTrace::new(c.clone(), 1 << 20).open(Some(1));
    assert_eq!(
        s.next_io().map(|io| (io.at_ns, io.offset)),
        Some((10, 24 * 512))
    );
    assert_eq!(s.next_io(), None);
    cleanup(&base);
}

#[test]
fn hostile_captures_get_located_errors() {
    let good = q(10, 8, false, 1);
    let mut big_pdu = q(20, 8, false, 1);
    big_pdu[46..48].copy_from_slice(&u16::MAX.to_le_bytes());
    let mut unknown = q(20, 8, false, 1);
    unknown[28] = 99;
    let cases: Vec<(&str, Vec<Vec<u8>>, &str, u64)> = vec![
        (
            "truncated",
            vec![good.clone(), good[..30].to_vec()],
            "record",
            48,
        ),
        ("pdu", vec![good.clone(), big_pdu], "payload", 48),
        ("magic", vec![good.clone(), vec![0xab; 48]], "magic", 48),
        ("action", vec![good.clone(), unknown], "action", 48),
        (
            "backwards",
            vec![good.clone(), q(5, 8, false, 1)],
            "time",
            48,
        ),
    ];
    for (name, recs, field, byte) in cases {
        let e = check_err(&capture(name, &recs));
        assert_eq!(
            (e.field.as_str(), e.byte),
            (field, Some(byte)),
            "{name}: {e}"
        );
    }
    let e = check_err(&capture("empty", &[]));
    assert!(e.message.contains("no reads or writes"), "{e}");
    let other_dev = blktrace::record(
        20,
        8,
        512,
        blktrace::queue_action(true, false),
        1,
        8 << 20,
        &[],
    );
    let base = capture("devices", &[good.clone(), other_dev]);
    let e = check(&base, None).unwrap_err();
    assert!(e.hint.contains("7,0, 8,0"), "{e}: {}", e.hint);
    assert_eq!(check(&base, Some("8,0")).unwrap().summary.ios, 1);
    cleanup(&base);
}

#[test]
fn ten_million_events_of_one_process_stream_in_bounded_memory() {
    /// A blkparse text of `n` queue events, made as it is read.
    #[derive(Debug)]
    struct Lines {
        n: u64,
        i: u64,
        buf: Vec<u8>,
        at: usize,
    }
    impl std::io::Read for Lines {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            if self.at == self.buf.len() {
                if self.i == self.n {
                    return Ok(0);
                }
                self.buf = format!(
                    "  8,0 0 {} {}.{:09} 7 Q R {} + 8 [one]\n",
                    self.i,
                    self.i / 1_000_000,
                    self.i % 1_000_000 * 1000,
                    self.i * 8
                )
                .into_bytes();
                self.at = 0;
                self.i += 1;
            }
            let k = out.len().min(self.buf.len() - self.at);
            out[..k].copy_from_slice(&self.buf[self.at..self.at + k]);
            self.at += k;
            Ok(k)
        }
    }
    let n = 10_000_000;
    let input = std::io::BufReader::new(Lines {
        n,
        i: 0,
        buf: Vec::new(),
        at: 0,
    });
    let mut r = blkparse::Blkparse::new(input, "ten-million");
    let mut book = DevBook::default();
    while let Some(e) = r.next_event().unwrap() {
        book.add(&e, &r).unwrap();
    }
    assert_eq!((book.summary.ios, book.summary.processes.len()), (n, 1));
}
