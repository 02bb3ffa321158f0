//! The dm-crypt world: workloads, dm-crypt's queues and threads, CPUs, the block layer and the
//! device, wired together as one [`Model`](crate::engine::Model) per queue policy.
//!
//! The model measures; it never formats. [`run_policy`] runs one policy of a scenario and returns
//! its [`observe::RunObs`].

pub mod bio;
pub mod block;
pub mod cpu;
pub mod device;
pub mod invariants;
pub mod memory;
pub mod observe;
pub mod policy;
pub mod pressure;
pub mod sampler;
pub mod workload;
pub mod world;
pub mod zone;

use crate::engine::{Limits, Scheduler, SimTime, StopReason};
use crate::scenario::Scenario;
use observe::RunObs;
use policy::PolicyInfo;

/// Names of the queue policies a scenario may list (`none` = no dm-crypt at all).
pub fn policy_names() -> Vec<&'static str> {
    policy::REGISTRY.iter().map(|p| p.name).collect()
}

/// Result of one run: what it measured and the invariants checked at its end.
#[derive(Debug)]
pub struct RunResult {
    /// The measurements.
    pub obs: RunObs,
    /// Invariant violations (empty when the run is sound): [`RunResult::invariants`]'
    /// [`violations`](invariants::InvariantReport::violations).
    pub violations: Vec<String>,
    /// Every invariant with its figures (Little's law per queue, conservation, clock).
    pub invariants: invariants::InvariantReport,
    /// The first issues of each job, if [`run_traced`] asked for them (otherwise empty).
    pub issue_trace: observe::IssueTrace,
}

/// Runs replication 0 of the scenario under one policy to its horizon (or its event budget).
pub fn run_policy(sc: &Scenario, info: &'static PolicyInfo) -> RunResult {
    run_replication(sc, info, 0)
}

/// Runs one replication (its own random streams, same seed) under one policy.
pub fn run_replication(sc: &Scenario, info: &'static PolicyInfo, replication: u64) -> RunResult {
    run_traced(sc, info, replication, 0)
}

/// Like [`run_replication`], also keeping the first `trace_issues` issues of every fio job in
/// [`RunResult::issue_trace`] (bounded: memory grows with `trace_issues`, not with the run).
pub fn run_traced(
    sc: &Scenario,
    info: &'static PolicyInfo,
    replication: u64,
    trace_issues: usize,
) -> RunResult {
    let mut sched = Scheduler::new();
    let mut world = world::World::with_trace(sc, info, replication, trace_issues, &mut sched);
    let limits = Limits {
        horizon: SimTime::ZERO + sc.duration,
        max_events: sc.max_events,
    };
    let outcome = crate::engine::run(&mut world, &mut sched, limits);
    let invariants = world.invariants(sched.now());
    let violations = invariants.violations();
    let issue_trace = world.take_issue_trace();
    let saturated = outcome.stop == StopReason::EventBudget;
    let obs = world.finish(sched.now(), outcome.events, saturated);
    RunResult {
        obs,
        violations,
        invariants,
        issue_trace,
    }
}

/// Builders of small scenarios for tests and benchmarks, without YAML.
pub mod testing {

    /// A 2 GiB laptop's memory: `unreclaimable_mib` MiB in use (half of it mapped on the file
    /// LRU), the rest clean page cache but for ~23 MB free, and an iwlagn-like order-2 receive
    /// stream refilling `burst` buffers `rate` times a second, each held ~100 ms.
    pub fn laptop_memory(
        unreclaimable_mib: u64,
        rate: f64,
        burst: u32,
    ) -> crate::scenario::MemoryConfig {
        use crate::engine::SimDuration;
        use crate::scenario::{AtomicStream, Distribution, MemoryConfig};
        let ram = 2u64 << 30;
        let mfk = 5792;
        let unreclaimable = unreclaimable_mib << 20;
        MemoryConfig {
            ram,
            min_free_kbytes: mfk,
            unreclaimable,
            mapped: unreclaimable / 2,
            page_cache: ram - unreclaimable - 4 * mfk * 1024,
            coalesce: 0.02,
            scan_cost: SimDuration::from_ns(200),
            page_pool: 32,
            min_bio_pages: 8,
            atomic: vec![AtomicStream {
                name: "wifi".into(),
                preset: "iwlagn".into(),
                rate,
                poisson: true,
                orders: vec![0.0, 0.0, 1.0],
                hold: Distribution::Exponential {
                    mean: SimDuration::from_ms(100),
                },
                burst,
            }],
        }
    }
    use crate::engine::SimDuration;
    use crate::scenario::*;

    /// An open-loop M/M/1 (or M/M/c with `channels`): Poisson arrivals at `rate_per_s`, generic
    /// device with exponential service of mean `service`, blk-mq with a huge tag pool (no
    /// plugging, no elevator), no dm-crypt work unless the policy adds it.
    pub fn mm1(
        rate_per_s: f64,
        service: SimDuration,
        channels: u32,
        duration: SimDuration,
    ) -> Scenario {
        let kernel = KernelConfig::new(250);
        Scenario {
            name: "mm1".into(),
            description: "M/M/1 through the real model".into(),
            seed: 1,
            duration,
            warmup: SimDuration::ZERO,
            max_events: u64::MAX,
            replications: 1,
            cpus: 1,
            device: DeviceConfig::Generic(GenericDeviceConfig {
                service: Distribution::Exponential { mean: service },
                channels,
                queue_depth: 1 << 30,
            }),
            block: BlockConfig {
                mode: QueueMode::BlkMq,
                nr_requests: 1 << 30,
                elevator: Elevator::Fifo,
                plug: false,
                unplug_threshold: 4,
                low_latency: false,
                cfq_slice_sync: kernel.hz_div(10),
                cfq_slice_async: kernel.hz_div(25),
                cfq_slice_idle: kernel.hz_div(125),
                cfq_quantum: 4,
            },
            kernel,
            crypt: CryptConfig {
                cipher: "null".into(),
                encrypt_rate: f64::INFINITY,
                decrypt_rate: f64::INFINITY,
                per_sector_cost: SimDuration::ZERO,
                hop_cost: SimDuration::ZERO,
                cost: None,
                engine: CryptoEngine::Sync,
                unplug_after_submit: false,
            },
            policies: vec!["none".into()],
            workloads: vec![WorkloadConfig {
                name: "poisson".into(),
                kind: WorkloadKind::Fio(FioJob {
                    rw: RwKind::RandRead,
                    rwmixread: 100,
                    bs: 4096,
                    size: 1 << 30,
                    offset: 0,
                    arrivals: Arrivals::Open {
                        rate: rate_per_s,
                        poisson: true,
                        iodepth: 1 << 30,
                    },
                    numjobs: 1,
                    sync_writes: false,
                    direct: true,
                    io_size: None,
                    number_ios: None,
                    startdelay: SimDuration::ZERO,
                }),
            }],
            memory: None,
            variants: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimDuration;

    #[test]
    fn mm1_mean_sojourn_is_close_to_theory() {
        let sc = testing::mm1(
            800.0,
            SimDuration::from_ms(1),
            1,
            SimDuration::from_secs(400),
        );
        let r = run_policy(&sc, policy::find("none").unwrap());
        assert!(r.violations.is_empty(), "{:?}", r.violations);
        let lat = &r.obs.dirs[0].lat;
        let mean_ms = lat.mean() / 1e6;
        // 1 / (mu - lambda) = 5 ms; 320k customers keep the sampling error near 1 %.
        assert!((mean_ms - 5.0).abs() < 0.25, "mean sojourn {mean_ms} ms");
    }
}

/// Mechanism tests: each switches one mechanism on or off and checks the effect it must have.
#[cfg(test)]
mod mechanism_tests {
    use super::*;
    use observe::{RunObs, Stage};

    fn run(yaml: &str) -> Vec<RunObs> {
        let sc = crate::scenario::load_str("test.yaml", yaml).expect("test scenario is valid");
        sc.policies
            .iter()
            .map(|p| {
                let r = run_policy(&sc, policy::find(p).unwrap());
                assert!(r.violations.is_empty(), "{p}: {:?}", r.violations);
                r.obs
            })
            .collect()
    }

    const READER_ON_IDLE_DISK: &str = "
duration: 10s
device: { kind: generic, service: 1ms }
block: { elevator: fifo }
crypt: { cipher: null, hop_cost: 0ns, unplug_after_submit: UNPLUG }
policies: [none, fifo]
workloads:
  - { kind: fio, rw: randread, iodepth: 1 }
";

    #[test]
    fn the_unplug_timer_delays_reads_that_kcryptd_io_submits() {
        let plugged = run(&READER_ON_IDLE_DISK.replace("UNPLUG", "false"));
        let unplugged = run(&READER_ON_IDLE_DISK.replace("UNPLUG", "true"));
        let mean_ms = |o: &RunObs| o.dirs[0].lat.mean() / 1e6;
        // Without dm-crypt the reader unplugs after its own submission: 1 ms per read.
        assert!((mean_ms(&plugged[0]) - 1.0).abs() < 0.01);
        // Through dm-crypt the reader's unplug comes before kcryptd_io submits the clone, which
        // then waits for the unplug timer: 3*HZ/1000 -> one jiffy = 4 ms at HZ=250.
        assert!(
            (mean_ms(&plugged[1]) - 5.0).abs() < 0.01,
            "{}",
            mean_ms(&plugged[1])
        );
        assert!(plugged[1].block.timer_unplugs > 1000);
        // The dm-crypt-unplug hypothesis removes that delay.
        assert!((mean_ms(&unplugged[1]) - 1.0).abs() < 0.01);
        assert_eq!(unplugged[1].block.timer_unplugs, 0);
    }

    #[test]
    fn a_full_request_pool_blocks_the_submitter() {
        let obs = run("
duration: 5s
device: { kind: generic, service: 1ms }
block: { elevator: fifo, nr_requests: 4 }
policies: [none]
workloads:
  - { kind: fio, rw: randwrite, iodepth: 16 }
");
        let o = &obs[0];
        assert!(o.block.pool_sleeps[1] > 100, "{:?}", o.block);
        // The job itself sleeps in get_request: that time is submission latency.
        assert!(
            o.dirs[1].slat.mean() > 1e6,
            "slat {}",
            o.dirs[1].slat.mean()
        );
        assert!(o.dirs[1].stages[Stage::PoolSleep.index()].percentile(99.0) > 500_000);
    }

    const SPLIT_ON_CPUS: &str = "
duration: 20s
cpus: CPUS
device: { kind: generic, service: 100us, channels: 8 }
block: { mode: blk-mq }
crypt: { cipher: aes-2009, hop_cost: 0ns }
policies: [split]
workloads:
  - { kind: fio, rw: randread, iodepth: 1, bs: 64k }
  - { kind: fio, rw: randwrite, iodepth: 4, bs: 512k }
";

    #[test]
    fn split_threads_time_share_one_cpu_and_run_in_parallel_on_two() {
        let one = run(&SPLIT_ON_CPUS.replace("CPUS", "1"));
        let two = run(&SPLIT_ON_CPUS.replace("CPUS", "2"));
        let svc = |o: &RunObs| o.dirs[0].stages[Stage::CryptService.index()].mean() / 1e3;
        // 64 KiB at 60 MB/s is 1092 us of CPU; with the write thread always busy, one CPU
        // halves the read thread's speed.
        assert!(
            (svc(&two[0]) - 1092.0).abs() < 15.0,
            "two cpus: {} us",
            svc(&two[0])
        );
        assert!(
            (svc(&one[0]) - 2184.0).abs() < 60.0,
            "one cpu: {} us",
            svc(&one[0])
        );
    }

    #[test]
    fn an_async_engine_backlog_blocks_the_fifo_thread() {
        let obs = run("
duration: 20s
device: { kind: generic, service: 100us, channels: 8 }
block: { mode: blk-mq }
crypt: { cipher: aes-2009, hop_cost: 0ns, engine: async, async_queue_limit: 100 }
policies: [fifo]
workloads:
  - { kind: fio, rw: randread, iodepth: 1, think: 5ms }
  - { kind: fio, rw: randwrite, iodepth: 1, bs: 512k, think: 50ms }
");
        let o = &obs[0];
        // A 512 KiB write is 1024 crypto requests against a queue of 100: kcryptd blocks until
        // 924 of them have drained (~7.9 ms at 60 MB/s) and reads queued behind it wait.
        let p99 = o.dirs[0].stages[Stage::CryptQueue.index()].percentile(99.9);
        assert!(p99 > 5_000_000, "read crypt-queue p99.9 {p99} ns");
    }

    const WRITEBACK: &str = "
duration: 20s
device: { kind: hdd7200 }
block: { mode: MODE }
crypt: { cipher: aes-ni }
policies: [none]
workloads:
  - { kind: buffered-writer, rate: 200MB/s }
";

    #[test]
    fn congestion_waits_end_early_on_clears_only_with_legacy_queues() {
        let legacy = run(&WRITEBACK.replace("MODE", "legacy"));
        let mq = run(&WRITEBACK.replace("MODE", "blk-mq"));
        let cw = &legacy[0].congestion_waits[1];
        assert!(cw.waits > 0 && cw.woken_early > 0, "{cw:?}");
        assert!(legacy[0].block.clears[1] > 0);
        let cw = &mq[0].congestion_waits[1];
        assert!(cw.waits > 0, "{cw:?}");
        assert_eq!(cw.woken_early, 0, "blk-mq never clears congestion");
        // Every blk-mq wait lasts its full HZ/10.
        assert_eq!(cw.total.as_ns() / cw.waits, 100_000_000);
    }
}

/// Common random numbers: every policy sees the same workload draws.
#[cfg(test)]
mod crn_tests {
    use super::*;

    /// Two-queue-like: a laptop disk under CFQ, 2009 AES, open-loop Poisson reads and writes
    /// beside a buffered writer, under every registered policy. `iodepth` is large enough that
    /// no arrival is ever dropped, so every arrival is an issue.
    const OPEN_LOOP: &str = "
duration: 60s
device: { kind: hdd5400 }
block: { elevator: cfq }
crypt: { cipher: aes-2009 }
policies: [fifo, prio]
workloads:
  - { name: reads, kind: fio, rw: randread, rate: 20/s, iodepth: 65536 }
  - { name: writes, kind: fio, rw: write, bs: 64k, rate: 20/s, iodepth: 65536 }
  - { kind: buffered-writer, rate: 5MB/s }
";
    /// Issues compared per job.
    const TRACED: usize = 1_000;

    fn runs(replication: u64) -> Vec<RunResult> {
        let sc = crate::scenario::load_str("crn.yaml", OPEN_LOOP).expect("valid scenario");
        // Every registered policy, whatever the scenario lists.
        policy::REGISTRY
            .iter()
            .map(|info| {
                let r = run_traced(&sc, info, replication, TRACED);
                let p = info.name;
                assert!(r.violations.is_empty(), "{p}: {:?}", r.violations);
                assert_eq!(r.obs.dirs[0].dropped + r.obs.dirs[1].dropped, 0, "{p}");
                r
            })
            .collect()
    }

    #[test]
    fn a_policy_change_leaves_the_arrival_sequence_alone() {
        let all = runs(0);
        let base = &all[0];
        assert_eq!(base.issue_trace.jobs.len(), 2);
        for job in &base.issue_trace.jobs {
            assert_eq!(
                job.len(),
                TRACED,
                "the trace keeps exactly the first {TRACED}"
            );
            assert!(job.windows(2).all(|w| w[0].at < w[1].at));
        }
        for r in &all[1..] {
            for (j, (got, want)) in r
                .issue_trace
                .jobs
                .iter()
                .zip(&base.issue_trace.jobs)
                .enumerate()
            {
                let first_diff = got.iter().zip(want).position(|(a, b)| a != b);
                assert_eq!(
                    first_diff, None,
                    "{} vs {}: job {j} differs at issue {first_diff:?}",
                    r.obs.policy, base.obs.policy
                );
            }
        }
        // Not vacuous: what happened after issue did change with the policy.
        let mut read_lat: Vec<u64> = all
            .iter()
            .map(|r| r.obs.dirs[0].lat.mean() as u64)
            .collect();
        read_lat.sort_unstable();
        read_lat.dedup();
        assert!(read_lat.len() >= 3, "policies barely differ: {read_lat:?}");
    }

    #[test]
    fn another_replication_draws_other_arrivals() {
        let sc = crate::scenario::load_str("crn.yaml", OPEN_LOOP).expect("valid scenario");
        let fifo = policy::find("fifo").unwrap();
        let a = run_traced(&sc, fifo, 0, 10).issue_trace;
        let b = run_traced(&sc, fifo, 1, 10).issue_trace;
        assert_ne!(a.jobs[0], b.jobs[0]);
        // Off unless asked for.
        assert!(run_replication(&sc, fifo, 0).issue_trace.jobs.is_empty());
    }
}
