//! The teaching scenarios (`scenarios/teach/`): each runs through the real binary under
//! `--check-invariants` with a `--json` export, and the claim its header states is checked
//! against the numbers. Every file of the directory must have the header's parts (Question,
//! Run, Look for, Claim), be shipped (`qsim list` names it `teach/NAME`) and have a claim in
//! [`CLAIMS`]; so a new teaching scenario without a checked claim fails here.

use crate::util::{Run, TempDir};
use serde_json::Value;
use std::path::Path;

/// A function that checks one scenario's claim against its run.
type Claim = fn(&Outcome);

/// Each teaching scenario (file stem) and the function that checks its header's claim.
const CLAIMS: &[(&str, Claim)] = &[
    ("cwait", cwait_claim),
    ("hol", hol_claim),
    ("little", little_claim),
    ("prio", prio_claim),
    ("watermarks", watermarks_claim),
];

/// The parts every header has, in this order.
const HEADER: &[&str] = &["# Question:", "# Run:", "# Look for:", "# Claim:"];

/// What one `qsim run teach/NAME --check-invariants --json FILE` printed and wrote.
struct Outcome {
    name: String,
    /// The text report with its invariant tables.
    text: String,
    /// The `--json` export.
    json: Value,
    /// `qsim check teach/NAME`: the resolved scenario with its derived values.
    check: String,
}

impl Outcome {
    /// The fio-JSON job of one run (a policy, or a variant's label).
    fn job(&self, label: &str) -> &Value {
        self.json["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["qsim"]["policy"] == label)
            .unwrap_or_else(|| panic!("{}: no run labelled {label}", self.name))
    }

    /// One direction's stage row (`CryptQueue`, `BlockQueue`, …) of a run.
    fn stage(&self, label: &str, dir: &str, stage: &str) -> &Value {
        self.job(label)["qsim"]["stages"][dir]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["stage"] == stage)
            .unwrap_or_else(|| panic!("{}: {label} has no {dir} stage {stage}", self.name))
    }

    /// A run's memory block.
    fn memory(&self, label: &str) -> &Value {
        &self.job(label)["qsim"]["memory"]
    }

    /// The ∫N dt column of a queue's row in the invariant table of `label`.
    fn area(&self, label: &str, queue: &str) -> f64 {
        let head = format!("invariants of `{label}`");
        let at = self.text.find(&head).expect("an invariant table");
        let row = self.text[at..]
            .lines()
            .find_map(|l| l.strip_prefix("  ")?.strip_prefix(queue))
            .unwrap_or_else(|| panic!("{}: no row {queue}", self.name));
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cols[0], cols[1], "{}: {queue}: {row}", self.name);
        cols[0].parse().unwrap()
    }

    /// One 512 KiB-class write encryption, computed from the resolved scenario: the writer's
    /// block size over the cipher's encrypt rate, in ns.
    fn write_encryption_ns(&self) -> f64 {
        // The word after `marker` on the `qsim check` line that starts with `label`.
        let field = |label: &str, marker: &str| -> &str {
            self.check
                .lines()
                .filter(|l| l.trim_start().starts_with(label))
                .find_map(|l| l.split(marker).nth(1))
                .unwrap_or_else(|| panic!("{}: no `{label} … {marker}` in qsim check", self.name))
                .split([',', ' '])
                .next()
                .unwrap()
        };
        let rate = field("rates", "encrypt ");
        let rate: f64 = rate
            .strip_suffix("MB/s")
            .unwrap_or_else(|| panic!("{}: cipher rate {rate} is not in MB/s", self.name))
            .parse()
            .unwrap();
        let bs = field("writer", "bs ");
        let kib: f64 = bs.strip_suffix("KiB").expect("bs in KiB").parse().unwrap();
        kib * 1024.0 / (rate * 1e6) * 1e9
    }
}

/// Runs one teaching scenario as its header says, with the invariants checked, and reads back
/// its outputs. Every run's invariants must hold.
fn outcome(name: &str) -> Outcome {
    let dir = TempDir::new();
    let json = dir.path().join("out.json");
    let json = json.to_str().unwrap();
    let shipped = format!("teach/{name}");
    let run = Run::of(&[
        "run",
        &shipped,
        "-j",
        "2",
        "--check-invariants",
        "--json",
        json,
    ]);
    run.assert_ok();
    let heads: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("invariants of `"))
        .collect();
    assert!(!heads.is_empty(), "{name}: no invariant table");
    assert_eq!(
        heads.iter().filter(|l| l.ends_with(": all hold")).count(),
        heads.len(),
        "{name}: an invariant is broken:\n{}",
        run.stdout
    );
    let check = Run::of(&["check", &shipped]);
    check.assert_ok();
    Outcome {
        name: name.to_string(),
        text: run.stdout,
        json: serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap(),
        check: check.stdout,
    }
}

fn check_claim(name: &str) {
    let (_, claim) = CLAIMS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no claim for {name}"));
    claim(&outcome(name));
}

fn ns(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

fn ms(ns: f64) -> String {
    format!("{:.3} ms", ns / 1e6)
}

/// teach/hol: under fifo a read waits behind the writer's queued encryptions, a mean of about
/// (iodepth − ½) encryptions; under split its crypt queue wait stays below 1 % of one.
fn hol_claim(o: &Outcome) {
    let enc = o.write_encryption_ns();
    assert!(
        (enc - 8.738e6).abs() < 0.01e6,
        "aes-2009, 512 KiB: {}",
        ms(enc)
    );
    let fifo = o.stage("fifo", "read", "CryptQueue");
    let split = o.stage("split", "read", "CryptQueue");
    let (fifo_mean, fifo_p99) = (ns(&fifo["mean_ns"]), ns(&fifo["p99_ns"]));
    let (split_mean, split_p99) = (ns(&split["mean_ns"]), ns(&split["p99_ns"]));
    let expected = 3.5 * enc;
    assert!(
        (fifo_mean - expected).abs() < 0.15 * expected,
        "fifo read crypt queue wait {} vs 3.5 encryptions {}",
        ms(fifo_mean),
        ms(expected)
    );
    assert!(
        fifo_p99 > 3.0 * enc && fifo_p99 < 4.5 * enc,
        "fifo p99 {}",
        ms(fifo_p99)
    );
    assert!(
        split_mean < 0.01 * enc && split_p99 < 0.01 * enc,
        "split read crypt queue wait mean {} p99 {}",
        ms(split_mean),
        ms(split_p99)
    );
    assert!(
        fifo_p99 > 5.0 * split_p99,
        "fifo p99 {} vs split {}",
        ms(fifo_p99),
        ms(split_p99)
    );
}

/// teach/prio: a read's crypt queue wait under prio is not zero but bounded by the one write
/// encryption in service (p99 ≤ 1.5 encryptions, mean about half of one), while fifo's mean is
/// about (8 − ½) encryptions deep.
fn prio_claim(o: &Outcome) {
    let enc = o.write_encryption_ns();
    let prio = o.stage("prio", "read", "CryptQueue");
    let fifo = o.stage("fifo", "read", "CryptQueue");
    let (prio_mean, prio_p99) = (ns(&prio["mean_ns"]), ns(&prio["p99_ns"]));
    let fifo_mean = ns(&fifo["mean_ns"]);
    assert!(
        prio_p99 <= 1.5 * enc,
        "prio p99 {} vs one encryption {}",
        ms(prio_p99),
        ms(enc)
    );
    assert!(
        prio_p99 > 0.5 * enc,
        "prio p99 {}: the item in service is waited for",
        ms(prio_p99)
    );
    assert!(
        (prio_mean - 0.5 * enc).abs() < 0.15 * enc,
        "prio mean {} vs half an encryption {}",
        ms(prio_mean),
        ms(0.5 * enc)
    );
    let deep = 7.5 * enc;
    assert!(
        (fifo_mean - deep).abs() < 0.15 * deep,
        "fifo mean {} vs 7.5 encryptions {}",
        ms(fifo_mean),
        ms(deep)
    );
}

/// teach/cwait: 2.6.30's kswapd waits (SYNC) end early, ≥ 90 %; 2.6.31's (ASYNC) never do and
/// run to the 100 ms timeout, so kswapd spends > 90 % of the measured time in them.
fn cwait_claim(o: &Outcome) {
    let waits = |label: &str, class: usize| {
        let c = &o.memory(label)["kswapd_waits"]["class"][class];
        assert_eq!(c["class"], ["sync", "async"][class]);
        (
            c["waits"].as_u64().unwrap(),
            c["woken_early"].as_u64().unwrap(),
            ns(&c["total_ns"]),
        )
    };
    let (w30, early30, t30) = waits("2.6.30", 0);
    assert_eq!(waits("2.6.30", 1).0, 0, "2.6.30 waits on SYNC only");
    assert!(w30 >= 100, "2.6.30: {w30} kswapd waits");
    assert!(
        early30 as f64 >= 0.9 * w30 as f64,
        "2.6.30: {early30} of {w30} early"
    );
    assert!(
        t30 / (w30 as f64) < 0.5 * 100e6,
        "2.6.30: {} a wait",
        ms(t30 / w30 as f64)
    );
    let (w31, early31, t31) = waits("2.6.31", 1);
    assert_eq!(waits("2.6.31", 0).0, 0, "2.6.31 waits on ASYNC only");
    assert!(w31 >= 100, "2.6.31: {w31} kswapd waits");
    assert_eq!(early31, 0, "2.6.31: no write completes, so no ASYNC clear");
    let per_wait = t31 / w31 as f64;
    assert!(
        per_wait > 0.95 * 100e6 && per_wait <= 100e6,
        "2.6.31: {} a wait",
        ms(per_wait)
    );
    let measured = ns(&o.job("2.6.31")["qsim"]["measured_ns"]);
    assert!(
        t31 > 0.9 * measured,
        "2.6.31: {} of {} in cwait",
        ms(t31),
        ms(measured)
    );
    assert!(o.memory("2.6.31")["direct_stalls"].as_u64().unwrap() > 0);
}

/// teach/watermarks: bursts smaller than the smallest headroom (min − floor) never fail; bursts
/// larger than the largest (high + one reclaim batch − floor) fail at the floor, B − headroom
/// allocations a burst.
fn watermarks_claim(o: &Outcome) {
    for (label, burst) in [("small", 768.0), ("large", 2048.0)] {
        let m = o.memory(label);
        let (floor, min, high) = (ns(&m["atomic_floor"]), ns(&m["min"]), ns(&m["high"]));
        assert_eq!((floor, min, high), (543.0, 1448.0, 2172.0));
        assert!(
            m["kswapd_wakeups"].as_u64().unwrap() > 0,
            "{label}: kswapd wakes"
        );
        let attempts = ns(&m["atomic_attempts_total"]);
        let failures = ns(&m["atomic_failures_total"]);
        let bursts = attempts / burst;
        assert_eq!(bursts.fract(), 0.0, "{label}: whole bursts");
        assert!(bursts >= 50.0, "{label}: {bursts} bursts");
        if burst < min - floor {
            assert_eq!(failures, 0.0, "{label}: {burst} pages fit above the floor");
            let low_point = ns(&m["free_min_seen"]);
            assert!(
                low_point < min && low_point > floor,
                "{label}: low point {low_point}"
            );
        } else {
            assert!(burst > high + 32.0 - floor);
            let per_burst = failures / bursts;
            let (least, most) = (burst - (high + 32.0 - floor), burst - (min - floor));
            assert!(
                per_burst >= least && per_burst <= most,
                "{label}: {per_burst} failures a burst, expected {least}..{most}"
            );
            assert_eq!(
                ns(&m["atomic_fail_free_avg"][0]),
                floor,
                "{label}: fails at the floor"
            );
        }
    }
}

/// teach/little: L (the queue's integrated count) and λW (completions per second × their mean
/// wait) agree within 2 % on the crypt queue and the request queue.
fn little_claim(o: &Outcome) {
    let q = &o.job("fifo")["qsim"];
    let t = ns(&q["measured_ns"]);
    assert_eq!(q["replications"], 1);
    let lambda_w = |stage: &str| {
        ["read", "write"]
            .iter()
            .map(|d| {
                let s = o.stage("fifo", d, stage);
                ns(&s["n"]) * ns(&s["mean_ns"])
            })
            .sum::<f64>()
            / t
    };
    // The report's own time average, and the invariant table's integral over the same [0, T].
    let crypt_l = ns(&q["crypt_queue_len_avg"]);
    assert!((o.area("fifo", "crypt queue") / t - crypt_l).abs() < 1e-6 * crypt_l);
    let block_l = o.area("fifo", "block queue") / t;
    for (queue, l, lw) in [
        ("crypt queue", crypt_l, lambda_w("CryptQueue")),
        ("block queue", block_l, lambda_w("BlockQueue")),
    ] {
        assert!(l > 1.0, "{queue}: L {l} (a live queue)");
        assert!((l - lw).abs() < 0.02 * l, "{queue}: L {l} vs lambda W {lw}");
    }
}

#[test]
fn teach_hol_claim_holds() {
    check_claim("hol");
}

#[test]
fn teach_prio_claim_holds() {
    check_claim("prio");
}

#[test]
fn teach_cwait_claim_holds() {
    check_claim("cwait");
}

#[test]
fn teach_watermarks_claim_holds() {
    check_claim("watermarks");
}

#[test]
fn teach_little_claim_holds() {
    check_claim("little");
}

/// Every file of `scenarios/teach/` has the header's parts, is shipped under `teach/NAME`, and
/// has a claim in [`CLAIMS`] (whose test above runs it); and every claim has its file.
#[test]
fn every_teaching_scenario_has_a_header_and_a_checked_claim() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/teach");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| p.file_stem().unwrap().to_str().unwrap().to_string())
        .collect();
    files.sort();
    let claimed: Vec<&str> = CLAIMS.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        files, claimed,
        "every teaching scenario has a claim test, and only they"
    );
    let list = Run::of(&["list"]);
    list.assert_ok();
    for name in &files {
        let text = std::fs::read_to_string(dir.join(format!("{name}.yaml"))).unwrap();
        let header: String = text
            .lines()
            .take_while(|l| l.starts_with('#') || l.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        let mut at = 0;
        for part in HEADER {
            let found = header[at..]
                .find(part)
                .unwrap_or_else(|| panic!("{name}.yaml: no `{part}` (in order) in its header"));
            at += found + part.len();
        }
        let shipped = format!("teach/{name}");
        assert!(
            header.contains(&format!("qsim run {shipped}")),
            "{name}.yaml: the header says how to run it"
        );
        assert!(
            header.contains(&format!("qsim trace {shipped}")),
            "{name}.yaml: the header says how to trace it"
        );
        assert!(
            header.contains("assumed"),
            "{name}.yaml: says which values are assumed"
        );
        assert!(
            text.contains(&format!("name: {shipped}\n")),
            "{name}.yaml: named {shipped}"
        );
        assert!(
            list.stdout
                .lines()
                .any(|l| l.starts_with(&format!("{shipped} "))),
            "{shipped} is shipped (src/scenario/shipped.rs FILES):\n{}",
            list.stdout
        );
    }
}
