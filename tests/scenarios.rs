//! Every shipped scenario runs through the real binary, and the headline claims hold.

use crate::util::Run;
use serde_json::Value;

fn json_run(args: &[&str]) -> Value {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let run = Run::of(&all);
    run.assert_ok();
    serde_json::from_str(&run.stdout).expect("qsim's JSON parses")
}

fn job<'a>(v: &'a Value, policy: &str) -> &'a Value {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| {
            j["jobname"]
                .as_str()
                .unwrap()
                .ends_with(&format!("-{policy}"))
        })
        .unwrap_or_else(|| panic!("no job for policy {policy}"))
}

#[test]
fn every_shipped_scenario_runs_briefly_and_completes_io() {
    for name in ["two-queue", "nvme-fio"] {
        let v = json_run(&[name, "--duration", "3s"]);
        for j in v["jobs"].as_array().unwrap() {
            let ios = j["read"]["total_ios"].as_u64().unwrap()
                + j["write"]["total_ios"].as_u64().unwrap();
            assert!(ios > 0, "{name}: {} completed nothing", j["jobname"]);
        }
    }
}

/// Little's law for the closed loop: 64 reads always in flight, so mean latency = 64 / IOPS.
#[test]
fn nvme_fio_without_encryption_satisfies_littles_law() {
    let v = json_run(&["nvme-fio"]);
    let read = &job(&v, "none")["read"];
    let iops = read["iops"].as_f64().unwrap();
    let clat_s = read["clat_ns"]["mean"].as_f64().unwrap() / 1e9;
    let little = 64.0 / iops;
    let err = (clat_s - little).abs() / little;
    assert!(
        err < 0.02,
        "clat {clat_s} s vs 64/IOPS {little} s ({:.2}%)",
        err * 100.0
    );
    // And the preset saturates where the seed fio run did: about 193k IOPS.
    assert!((iops - 193_000.0).abs() / 193_000.0 < 0.03, "IOPS {iops}");
}

/// The headline: one kcryptd FIFO puts read decrypts behind write encryptions.
#[test]
fn two_queue_policies_differ_in_read_tail_latency() {
    let v = json_run(&["two-queue"]);
    let p999 = |p: &str| {
        job(&v, p)["read"]["clat_ns"]["percentile"]["99.900000"]
            .as_u64()
            .unwrap()
    };
    let (fifo, split, prio) = (p999("fifo"), p999("split"), p999("prio"));
    assert!(fifo > 2 * split, "fifo p99.9 {fifo} vs split {split}");
    assert!(fifo > 2 * prio, "fifo p99.9 {fifo} vs prio {prio}");
}

/// Utilisation above 1 ends in bounded time and memory and says so.
#[test]
fn an_overloaded_open_loop_is_reported_saturated() {
    let dir = crate::util::TempDir::new();
    let file = dir.file(
        "overload.yaml",
        "duration: 2s\n\
         device: { kind: generic, service: 1ms }\n\
         block: { mode: blk-mq }\n\
         policies: [none]\n\
         workloads:\n  - { kind: fio, rw: randread, rate: 2000/s, iodepth: 64 }\n",
    );
    let run = Run::of(&["run", &file]);
    run.assert_ok();
    assert!(run.stdout.contains("saturated"), "{}", run.stdout);
    assert!(run.stdout.contains("dropped"), "{}", run.stdout);
}

/// An exhausted event budget ends the run early with a verdict, not a hang.
#[test]
fn an_exhausted_event_budget_is_reported_saturated() {
    let dir = crate::util::TempDir::new();
    let file = dir.file(
        "budget.yaml",
        "duration: 60s\nmax_events: 10000\n\
         device: { kind: generic, service: 1ms }\n\
         policies: [fifo]\n\
         workloads:\n  - { kind: fio, rw: randread, iodepth: 4 }\n",
    );
    let run = Run::of(&["run", &file]);
    run.assert_ok();
    assert!(run.stdout.contains("event budget"), "{}", run.stdout);
}
