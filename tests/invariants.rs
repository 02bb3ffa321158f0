//! `qsim run --check-invariants`: every run's invariants hold and are printed, one table per
//! policy, on the shipped scenarios and on configurations that exercise the async crypto engine,
//! inline crypto, the ratio policy, blk-mq and small request pools.

use crate::util::{Run, TempDir};

/// One Little's-law row: queue label, ∫N dt, Σ time, verdict.
struct Row {
    queue: String,
    area: u128,
    time_sum: u128,
    holds: bool,
}

/// One policy's printed invariants.
struct Table {
    policy: String,
    little: Vec<Row>,
    conservation: Vec<String>,
}

impl Table {
    fn area(&self, queue: &str) -> u128 {
        self.little
            .iter()
            .find(|r| r.queue == queue)
            .unwrap_or_else(|| panic!("{}: no row {queue}", self.policy))
            .area
    }
}

/// Parses the tables `--check-invariants` prints after the report.
fn tables(text: &str) -> Vec<Table> {
    let mut out: Vec<Table> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("invariants of `") {
            let policy = rest.split('`').next().unwrap().to_string();
            out.push(Table {
                policy,
                little: Vec::new(),
                conservation: Vec::new(),
            });
            continue;
        }
        let Some(table) = out.last_mut() else {
            continue;
        };
        let Some(row) = line.strip_prefix("  ") else {
            continue;
        };
        if row.starts_with("queue ") || row.starts_with(' ') {
            // The header, or a wrapped detail's continuation.
            continue;
        }
        let words: Vec<&str> = row.split_whitespace().collect();
        let n = words.len();
        let numbers = n >= 4 && words[n - 2].parse::<u128>().is_ok();
        if numbers && words[n - 3].parse::<u128>().is_ok() {
            table.little.push(Row {
                queue: words[..n - 3].join(" "),
                area: words[n - 3].parse().unwrap(),
                time_sum: words[n - 2].parse().unwrap(),
                holds: words[n - 1] == "yes",
            });
        } else {
            table.conservation.push(row.to_string());
        }
    }
    out
}

/// Runs `qsim run <args> --check-invariants`, asserts success and that every printed invariant
/// holds, and returns the tables.
fn checked(args: &[&str], policies: usize) -> Vec<Table> {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.push("--check-invariants");
    let run = Run::of(&all);
    run.assert_ok();
    let tables = tables(&run.stdout);
    assert_eq!(
        tables.len(),
        policies,
        "one table per policy:\n{}",
        run.stdout
    );
    for t in &tables {
        assert_eq!(t.little.len(), 6, "{}: {:?}", t.policy, run.stdout);
        for r in &t.little {
            assert!(r.holds, "{}: {} does not hold", t.policy, r.queue);
            assert_eq!(r.area, r.time_sum, "{}: {}", t.policy, r.queue);
        }
        // Six laws always; five more (zone, bounce, dirty, writeback and filling pages) with a
        // memory model.
        // One more per TCP receive path, one for anonymous memory and swap, one for the
        // pages fake-gitk's copies share, and two for CFQ (its own count of waiting requests,
        // and its priority tree).
        let rx = t
            .conservation
            .iter()
            .filter(|c| {
                c.starts_with("receive path")
                    || c.starts_with("anonymous pages")
                    || c.starts_with("shared log pages")
                    || c.starts_with("cfq queued")
                    || c.starts_with("cfq prio tree")
            })
            .count();
        let n = t.conservation.len() - rx;
        assert!(n == 6 || n == 11, "{}: {n} conservation rows", t.policy);
        for c in &t.conservation {
            // `law  yes  detail`: the verdict comes before the detail.
            assert!(c.contains("  yes  "), "{}: {c}", t.policy);
        }
        assert!(t.area("whole system") > 0, "{}", t.policy);
    }
    assert!(!run.stdout.contains("BROKEN"));
    tables
}

/// Whether a table checked the memory model's page conservation.
fn checks_pages(t: &Table) -> bool {
    [
        "zone pages",
        "dirty pages",
        "writeback pages",
        "filling pages",
    ]
    .iter()
    .all(|law| t.conservation.iter().any(|c| c.starts_with(law)))
}

/// mel-2009-swap's rsync is a TCP receive path read by a writer: its ring and socket agree with
/// the zone's books under every kernel, and its line shows in the report.
#[test]
fn mel_2009_swap_keeps_the_receive_paths_and_shared_pages_books() {
    let args = ["mel-2009-swap", "-r", "1", "--duration", "30s"];
    let tables = checked(&args, 7);
    for t in &tables {
        let row = t
            .conservation
            .iter()
            .find(|c| c.starts_with("receive path"))
            .unwrap_or_else(|| panic!("{}: {:?}", t.policy, t.conservation));
        assert!(row.contains("255 ring"), "{}: {row}", t.policy);
        // The fake-gitk copies' shared log pages, CFQ's count of waiting requests and its
        // priority tree are checked too (and held: `checked`).
        for law in ["shared log pages", "cfq queued", "cfq prio tree"] {
            assert!(
                t.conservation.iter().any(|c| c.starts_with(law)),
                "{}: {law}: {:?}",
                t.policy,
                t.conservation
            );
        }
    }
    let run = Run::of(&["run", args[0], args[1], args[2], args[3], args[4]]);
    assert!(
        run.stdout.contains("rx rsync     : segments="),
        "{}",
        run.stdout
    );
}

#[test]
fn gfp_atomic_storm_conserves_pages_under_every_variant() {
    let tables = checked(&["gfp-atomic-storm", "--duration", "10s"], 5);
    for t in &tables {
        assert!(checks_pages(t), "{}: {:?}", t.policy, t.conservation);
    }
}

/// mel-2009 ends when its reader is done, long before its 300 s cap, under every variant; a
/// run cut short by `--duration` leaves the reader unfinished, which is no error. Every
/// invariant holds either way.
#[test]
fn mel_2009_satisfies_every_invariant_whether_the_reader_finishes_or_not() {
    for args in [
        &["mel-2009", "-r", "1"][..],
        &["mel-2009", "-r", "2", "--duration", "5s"][..],
    ] {
        let tables = checked(args, 5);
        for t in &tables {
            assert!(checks_pages(t), "{}: {:?}", t.policy, t.conservation);
        }
    }
    let run = Run::of(&["run", "mel-2009", "-r", "1", "--check-invariants"]);
    let ends: Vec<&str> = run
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("invariants of `"))
        .map(|l| {
            l.split(" over [0, ")
                .nth(1)
                .unwrap()
                .split(']')
                .next()
                .unwrap()
        })
        .collect();
    assert_eq!(ends.len(), 5);
    assert!(
        ends.iter().all(|e| *e != "t=300s"),
        "a run went to the cap: {ends:?}"
    );
    let short = Run::of(&["run", "mel-2009", "-r", "1", "--duration", "5s"]);
    short.assert_ok();
    assert_eq!(
        short
            .stdout
            .matches("  elapsed      : unfinished at 5s")
            .count(),
        5
    );
}

#[test]
fn two_queue_satisfies_every_invariant() {
    let tables = checked(&["two-queue", "--duration", "5s"], 3);
    for t in &tables {
        assert!(checks_pages(t), "{}: {:?}", t.policy, t.conservation);
        // Reads and writeback pass through every queue of the 2009 layout.
        for q in ["crypt queue", "kcryptd_io hop", "block queue", "device"] {
            assert!(t.area(q) > 0, "{}: {q} never held anything", t.policy);
        }
    }
}

#[test]
fn nvme_fio_satisfies_every_invariant() {
    let tables = checked(&["nvme-fio", "--duration", "300ms"], 6);
    let none = tables.iter().find(|t| t.policy == "none").unwrap();
    // The closed loop keeps 64 reads in flight over 300 ms.
    assert_eq!(none.area("whole system"), 64 * 300_000_000);
}

/// The async crypto engine (with its backlog), inline crypto, the ratio policy, blk-mq's
/// shared tag pool made small so submitters sleep, a device that holds requests in the
/// elevator, closed and open loops and a buffered writer, under every policy.
const ASYNC_BLK_MQ: &str = "\
duration: 3s
warmup: 500ms
cpus: 2
device:
  kind: generic
  service: { kind: lognormal, mean: 300us, stddev: 200us }
  channels: 2
  queue_depth: 2
block: { mode: blk-mq, nr_requests: 8 }
crypt: { cipher: aes-2009, engine: async, async_queue_limit: 100, hop_cost: 10us }
policies: [none, fifo, split, prio, ratio, inline]
workloads:
  - { kind: fio, rw: randread, iodepth: 8, think: { kind: exponential, mean: 1ms } }
  - { kind: fio, rw: randwrite, bs: 64k, rate: 100/s, iodepth: 16, sync: true }
  - { kind: fio, rw: randrw, bs: 16k, rate: 300/s, arrivals: constant, iodepth: 4 }
  - { kind: buffered-writer, rate: 10MB/s }
";

#[test]
fn async_engine_inline_ratio_and_a_small_blk_mq_pool_satisfy_every_invariant() {
    let dir = TempDir::new();
    let file = dir.file("async.yaml", ASYNC_BLK_MQ);
    let tables = checked(&[&file], 6);
    for t in &tables {
        assert!(t.area("block queue") > 0, "{}", t.policy);
        assert!(t.area("device") > 0, "{}", t.policy);
        let queued = !matches!(t.policy.as_str(), "none" | "inline");
        assert_eq!(t.area("crypt queue") > 0, queued, "{}", t.policy);
        assert_eq!(t.area("kcryptd_io hop") > 0, queued, "{}", t.policy);
    }
    let pool_sleep = |p: &str| {
        tables
            .iter()
            .find(|t| t.policy == p)
            .unwrap()
            .area("request-pool sleep")
    };
    assert!(pool_sleep("none") > 0 && pool_sleep("inline") > 0);
}

/// A legacy queue under CFQ with a pool of 8 per class: congestion, batching and pool sleeps.
const LEGACY_SMALL_POOL: &str = "\
duration: 4s
warmup: 1s
device: { kind: hdd7200 }
block: { mode: legacy, elevator: cfq, nr_requests: 8 }
crypt: { cipher: aes-ni }
policies: [fifo, ratio, inline]
workloads:
  - { kind: fio, rw: randread, iodepth: 4 }
  - { kind: fio, rw: write, bs: 128k, iodepth: 16 }
  - { kind: buffered-writer, rate: 30MB/s, dirty_limit: 8MiB }
";

#[test]
fn a_small_legacy_pool_under_cfq_satisfies_every_invariant() {
    let dir = TempDir::new();
    let file = dir.file("legacy.yaml", LEGACY_SMALL_POOL);
    for t in checked(&[&file], 3) {
        assert!(t.area("request-pool sleep") > 0, "{}", t.policy);
        assert!(
            t.conservation.iter().any(|c| c.starts_with("bounce pages")),
            "{}",
            t.policy
        );
    }
}

#[test]
fn json_stays_one_document_with_the_tables_on_stderr() {
    let run = Run::of(&[
        "run",
        "nvme-fio",
        "--duration",
        "300ms",
        "--format",
        "json",
        "--check-invariants",
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    serde_json::from_str::<serde_json::Value>(&run.stdout).expect("stdout is one JSON document");
    assert_eq!(tables(&run.stderr).len(), 6, "{}", run.stderr);
}

#[test]
fn without_the_flag_no_table_is_printed() {
    let run = Run::of(&["run", "two-queue", "--duration", "3s"]);
    run.assert_ok();
    assert!(tables(&run.stdout).is_empty());
}
