//! Hand-built scenario and run observations shared by the renderer tests, and the tests of
//! [`Report::new`](super::Report::new).

use super::*;
use crate::engine::SimDuration;
use crate::engine::SimTime;
use crate::model::base::obs::{
    AllocFailure, BlockObs, CallerWaits, CongestionWaitObs, FiniteJobObs, MemoryObs, PageStates,
    WritebackObs,
};
use crate::scenario::{
    BlockConfig, CryptConfig, CryptoEngine, DeviceConfig, Elevator, FioJob, KernelConfig,
    NvmeConfig, QueueMode, WorkloadConfig,
};

/// A two-policy scenario with one 4 KiB randrw fio job at depth 8.
pub(crate) fn scenario() -> Scenario {
    Scenario {
        name: "two-queue".to_string(),
        description: "reads behind writeback".to_string(),
        fio_given: Default::default(),
        machine_file: None,
        seed: 42,
        duration: SimDuration::from_secs(11),
        warmup: SimDuration::from_secs(1),
        max_events: 1_000_000,
        replications: 1,
        cpus: 2,
        kernel: KernelConfig::new(250),
        device: DeviceConfig::Nvme(NvmeConfig {
            latency: SimDuration::from_us(20),
            channels: 4,
            overhead: SimDuration::from_us(5),
            transfer_rate: 1e9,
            queue_depth: 32,
            stall: crate::model::base::config::NvmeStall::NONE,
            disks: 1,
            chunk: 0,
            preset: "custom".into(),
        }),
        block: BlockConfig {
            mode: QueueMode::Legacy,
            nr_requests: 128,
            elevator: Elevator::Cfq,
            plug: true,
            unplug_threshold: 4,
            low_latency: true,
            cfq_slice_sync: SimDuration::from_ms(100),
            cfq_slice_async: SimDuration::from_ms(40),
            cfq_slice_idle: SimDuration::from_ms(8),
            cfq_quantum: 8,
            cfq: crate::model::base::config::KernelVersion::V2_6_32.cfq(),
            ncq_capable: true,
            mq: Default::default(),
        },
        crypt: CryptConfig {
            cipher: "aes-ni".to_string(),
            encrypt_rate: 1e9,
            decrypt_rate: 1e9,
            per_sector_cost: SimDuration::from_ns(100),
            hop_cost: SimDuration::from_us(2),
            cost: None,
            engine: CryptoEngine::Sync,
            unplug_after_submit: false,
            io_queues: crate::model::base::config::IoQueues::One,
            submit_cost: SimDuration::ZERO,
            clone_submit_cost: SimDuration::ZERO,
            max_read_size: 0,
            max_write_size: 0,
        },
        policies: vec!["fifo".to_string(), "split".to_string()],
        workloads: vec![WorkloadConfig {
            name: "fio".to_string(),
            kind: WorkloadKind::Fio(FioJob {
                rw: RwKind::RandRw,
                rwmixread: 50,
                bs: 4096,
                size: 1 << 30,
                offset: 0,
                arrivals: Arrivals::Closed {
                    iodepth: 8,
                    think: None,
                },
                numjobs: 1,
                sync_writes: false,
                direct: true,
                io_size: None,
                number_ios: None,
                startdelay: SimDuration::ZERO,
                thinktime: None,
                startdelay_high: None,
                serve: None,
                replay: None,
            }),
        }],
        memory: None,
        variants: Vec::new(),
        sweep: None,
    }
}

fn direction(ios: u64, slat: &[u64], clat: &[u64], bw: &[f64], stage_ns: &[u64]) -> DirectionObs {
    let mut d = DirectionObs {
        ios,
        bytes: ios * 4096,
        issued: ios + 1,
        ..DirectionObs::new()
    };
    for (i, (&s, &c)) in slat.iter().zip(clat).enumerate() {
        d.slat.record(s);
        d.clat.record(c);
        d.lat.record(s + c);
        // Split each latency between crypt queue wait, device and "other" (the slat).
        let device = stage_ns[i % stage_ns.len()].min(c);
        d.stages[Stage::Device.index()].record(device);
        d.stages[Stage::CryptQueue.index()].record(c - device);
        d.stages[Stage::Other.index()].record(s);
    }
    for &b in bw {
        d.bw_kib_s.push(b);
        d.iops.push(b / 4.0);
    }
    d
}

/// A run with 10 reads (two of them slow) and 4 writes over 10 s.
pub(crate) fn run(policy: &str, end: RunEnd) -> RunObs {
    let read_slat = [
        812, 900, 1_000, 1_100, 1_200, 1_300, 1_400, 1_500, 2_000, 48_213,
    ];
    let read_clat = [
        38_112, 40_000, 52_000, 60_000, 70_000, 90_000, 120_000, 300_000, 2_500_000, 41_870_336,
    ];
    let write_slat = [3_000, 4_000, 5_000, 1_650_000];
    let write_clat = [3_100_000, 9_000_000, 20_000_000, 212_000_000];
    let reads = direction(
        10,
        &read_slat,
        &read_clat,
        &[9_312.0, 9_904.0, 9_650.0],
        &[30_000],
    );
    let writes = direction(
        4,
        &write_slat,
        &write_clat,
        &[4_416.0, 5_120.0],
        &[1_000_000],
    );
    let mut clat_all = reads.clat.clone();
    clat_all.merge(&writes.clat);
    RunObs {
        policy: policy.to_string(),
        measured: SimDuration::from_secs(10),
        dirs: [reads, writes],
        clat_all,
        depth_buckets: [4, 3, 5, 2, 0, 0, 0],
        congestion_waits: [
            CongestionWaitObs {
                waits: 38,
                woken_early: 10,
                total: SimDuration::from_ms(412),
            },
            CongestionWaitObs {
                waits: 270,
                woken_early: 30,
                total: SimDuration::from_ms(2_911),
            },
        ],
        block: BlockObs {
            congested: [SimDuration::from_ms(12), SimDuration::from_ms(340)],
            pool_sleeps: [3, 120],
            clears: [40, 210],
            timer_unplugs: 15,
            threshold_unplugs: 230,
            dispatched: 36_180,
            device_busy: SimDuration::from_ms(8_731),
            completed: [24_120, 12_060],
            ticks: [SimDuration::from_ms(15_001), SimDuration::from_ms(230_499)],
            ncq_estimates: [0, 0],
            cfq_coop: [0, 0],
        },
        writeback: WritebackObs {
            dirtied_bytes: 300 << 20,
            written_back_bytes: 280 << 20,
            throttled: SimDuration::from_ms(1_250),
        },
        ended: SimTime::ZERO + SimDuration::from_secs(11),
        finite_jobs: Vec::new(),
        memory: None,
        cpu_utilisation: 0.4321,
        cpu_by_context: Default::default(),
        cpu_by_cpu: Vec::new(),
        cpu_idle_beside_waiting: 0.0,
        crypt_queue_len_avg: 3.25,
        crypt_queue_len_max: 41,
        events: 123_456,
        end,
        timeline: None,
        fio_log: None,
        replications: 1,
        app_cpu: Vec::new(),
    }
}

/// A memory model's measurements: order-0 and order-2 GFP_ATOMIC streams with failures,
/// kswapd waiting on the ASYNC queue, nine direct-reclaim stalls.
pub(crate) fn memory_obs() -> MemoryObs {
    let mut direct_stall = Histogram::new();
    for ms in [2, 3, 5, 8, 13, 21, 34, 88, 136] {
        direct_stall.record(ms * 1_000_000);
    }
    let async_waits = |waits, woken_early, ms| CallerWaits {
        class: [
            CongestionWaitObs::default(),
            CongestionWaitObs {
                waits,
                woken_early,
                total: SimDuration::from_ms(ms),
            },
        ],
        skipped: 0,
    };
    let mut atomic_attempts = vec![0; 11];
    let mut atomic_failures = vec![0; 11];
    let mut atomic_fail_free_sum = vec![0; 11];
    atomic_attempts[0] = 98_000;
    atomic_attempts[2] = 12_034;
    atomic_failures[2] = 37;
    atomic_fail_free_sum[2] = 37 * 512;
    MemoryObs {
        total_pages: 524_288,
        min: 1_448,
        low: 1_810,
        high: 2_172,
        atomic_floor: 543,
        atomic_attempts,
        atomic_failures,
        atomic_fail_free_sum,
        failure_log: vec![
            AllocFailure {
                at: SimTime::from_ns(12_345_678_901),
                order: 2,
                free: 512,
            },
            AllocFailure {
                at: SimTime::from_ns(12_400_000_000),
                order: 2,
                free: 498,
            },
        ],
        kswapd_wakeups: 41,
        kswapd_awake: SimDuration::from_ms(4_300),
        kswapd_passes: 57,
        kswapd_waits: async_waits(51, 6, 4_100),
        kswapd_skips: 0,
        low_wmark_hit_quickly: 0,
        high_wmark_hit_quickly: 2,
        order0_fallbacks: 3,
        kswapd_scanned: 180_000,
        kswapd_reclaimed: 150_000,
        direct_stalls: 9,
        direct_stall,
        direct_waits: async_waits(10, 0, 200),
        direct_scanned: 4_000,
        direct_reclaimed: 3_100,
        pageout_pages: 250,
        bounce_from_zone: 20_000,
        bounce_from_reserve: 120,
        mempool_waits: 3,
        mempool_wait_time: SimDuration::from_ms(12),
        partial_clones: 0,
        partial_nap_time: SimDuration::ZERO,
        free_min_seen: 402,
        free_avg: 2_010.4,
        below_min: SimDuration::from_ms(1_230),
        end_pages: PageStates {
            unreclaimable: 131_072,
            clean: 300_000,
            dirty: 60_000,
            writeback: 25_000,
            bounce: 40,
            atomic: 96,
            filling: 12,
            ..PageStates::default()
        },
        swap: Default::default(),
        atomic_failures_logged: 10,
        rx: Vec::new(),
    }
}

/// [`run`] with [`memory_obs`].
pub(crate) fn run_with_memory(policy: &str) -> RunObs {
    let mut r = run(policy, RunEnd::Horizon);
    r.memory = Some(Box::new(memory_obs()));
    r
}

/// [`run`] ended early by a finite job, `gitk`: 23.41 s from its start at 2 s, 64 MiB in
/// 16384 reads; with `unfinished`, still running at the 11 s horizon instead.
pub(crate) fn run_finite(policy: &str, unfinished: bool) -> RunObs {
    let mut r = run(policy, RunEnd::Finished);
    let start = SimTime::ZERO + SimDuration::from_secs(2);
    let (elapsed_ns, ios) = if unfinished {
        r.end = RunEnd::Horizon;
        (None, 3_150)
    } else {
        (Some(23_410_000_000), 16_384)
    };
    r.finite_jobs = vec![FiniteJobObs {
        name: "gitk".to_string(),
        start,
        elapsed_ns,
        ios,
        bytes: ios * 4096,
        io_size: Some(64 << 20),
        number_ios: None,
    }];
    r.ended = r.finite_jobs[0]
        .finished()
        .unwrap_or(SimTime::ZERO + SimDuration::from_secs(11));
    r
}

pub(crate) fn report() -> Report {
    Report::new(
        &scenario(),
        &[
            run("fifo", RunEnd::Horizon),
            run("split", RunEnd::Saturated),
        ],
    )
}

#[test]
fn builds_fio_numbers() {
    let r = report();
    assert_eq!(r.schema_version, 1);
    assert_eq!(r.jobs, 1);
    assert_eq!(
        r.job_options,
        JobOptions {
            rw: "randrw".into(),
            bs_bytes: 4096,
            iodepth: 8,
            numjobs: 1
        }
    );
    let p = &r.policies[0];
    assert_eq!(p.runtime_ms, 10_000);
    let read = p.direction(Direction::Read);
    assert_eq!(read.bw_bytes_per_s, 4096);
    assert_eq!(read.iops, 1.0);
    assert_eq!(read.clat.percentiles_ns.len(), 17);
    assert_eq!(read.clat.n, 10);
    // 7 of 14 clat values are in [10 us, 1 ms)... share of all completed I/Os.
    let us: f64 = p.latency_pct.usec_pct.iter().sum();
    let ms: f64 = p.latency_pct.msec_pct.iter().sum();
    assert!((us + ms - 100.0).abs() < 1e-9);
    assert!((p.latency_pct.usec_pct[4] - 100.0 * 2.0 / 14.0).abs() < 1e-9);
    assert!((p.depth_pct.iter().sum::<f64>() - 100.0).abs() < 1e-9);
    assert!((p.block.device_util_pct - 87.31).abs() < 1e-9);
    assert!((p.congestion_early_pct - 100.0 * 40.0 / 308.0).abs() < 1e-9);
    // Stage shares of total latency add up to 100% when stages partition lat.
    let shares: f64 = read.stages.iter().map(|s| s.share_pct).sum();
    assert!((shares - 100.0).abs() < 1e-6, "{shares}");
    // Warnings.
    assert_eq!(r.warnings.len(), 1);
    assert!(matches!(&r.warnings[0], Warning::WorkBudget { policy, .. } if policy == "split"));
}

#[test]
fn finite_jobs_give_elapsed_times_and_unfinished_ones_a_warning() {
    let r = Report::new(
        &scenario(),
        &[run_finite("fifo", false), run_finite("split", true)],
    );
    let (done, open) = (&r.policies[0], &r.policies[1]);
    assert_eq!(done.end_ns, 25_410_000_000);
    assert_eq!(done.elapsed_ns(), Some(23_410_000_000));
    assert_eq!(done.finite_jobs[0].start_ns, 2_000_000_000);
    assert_eq!(open.elapsed_ns(), None);
    assert_eq!(open.end_ns, 11_000_000_000);
    assert_eq!(r.warnings.len(), 1);
    assert!(
        matches!(&r.warnings[0], Warning::Unfinished { policy, job, end_ns: 11_000_000_000, ios: 3_150, .. }
                if policy == "split" && job == "gitk"),
        "{:?}",
        r.warnings
    );
    // Without finite jobs: none, and no elapsed time.
    let plain = report();
    assert!(plain.policies.iter().all(|p| p.finite_jobs.is_empty()));
    assert_eq!(plain.policies[0].elapsed_ns(), None);
    assert_eq!(plain.policies[0].end_ns, 11_000_000_000);
}

#[test]
fn direct_reclaim_stage_only_with_a_memory_model() {
    let labels = |r: &Report| -> Vec<Stage> {
        r.policies[0].directions[0]
            .stages
            .iter()
            .map(|s| s.stage)
            .collect()
    };
    // No memory model, and only zero-length samples in the stage: the row is left out.
    let mut plain = run("fifo", RunEnd::Horizon);
    plain.dirs[0].stages[Stage::DirectReclaim.index()].record(0);
    let r = Report::new(&scenario(), &[plain.clone(), plain.clone()]);
    assert!(!labels(&r).contains(&Stage::DirectReclaim));
    assert_eq!(labels(&r).len(), Stage::COUNT - 1);
    // With a memory model in any run, every run keeps it, even at zero.
    let r = Report::new(&scenario(), &[plain.clone(), run_with_memory("split")]);
    assert_eq!(labels(&r), Stage::ALL);
    assert_eq!(r.policies[0].directions[1].stages.len(), Stage::COUNT);
    // Time recorded in it is never hidden.
    plain.dirs[1].stages[Stage::DirectReclaim.index()].record(5_000);
    let r = Report::new(&scenario(), &[plain.clone(), plain]);
    assert_eq!(labels(&r)[0], Stage::DirectReclaim);
}

#[test]
fn empty_direction_is_zero_filled() {
    let mut run = run("fifo", RunEnd::Horizon);
    run.dirs[1] = direction(0, &[], &[], &[], &[1]);
    let r = Report::new(&scenario(), &[run.clone(), run]);
    let w = r.policies[0].direction(Direction::Write);
    assert_eq!((w.runtime_ms, w.bw_bytes_per_s, w.iops), (0, 0, 0.0));
    assert!(w.clat.percentiles_ns.is_empty());
    assert!(w.stages.iter().all(|s| s.share_pct == 0.0));
}

/// [`report`] with two replications per run attached (the same observations twice), the
/// plot series (no timelines) and a reached precision target: everything `qsim run` puts in a
/// report.
pub(crate) fn replicated_report() -> Report {
    let runs = [run("fifo", RunEnd::Horizon), run_with_memory("split")];
    let mut r = Report::new(&scenario(), &runs);
    let samples: Vec<Vec<spread::RepSample>> = runs
        .iter()
        .map(|o| vec![spread::RepSample::of(o), spread::RepSample::of(o)])
        .collect();
    r.attach_replications(&samples, Some(vec![None, None]));
    r.precision = Some(precision::PrecisionOutcome {
        target: precision::Precision {
            target_rel: 0.05,
            cap: 8,
            metric: precision::HeadlineMetric::READ_P99,
        },
        reached: true,
        replications: 2,
        worst: ("split".to_string(), 0.0),
    });
    r
}

#[test]
fn replications_attach_metrics_spread_and_plot_series_per_run() {
    let r = replicated_report();
    assert_eq!(r.metrics.len(), 2);
    assert_eq!(r.metrics[1].0, "split");
    assert_eq!(r.metrics[1].1.len(), 2);
    // The per-replication metrics are those of the block built from one replication (Debug
    // text, because NaN, elapsed without finite jobs, is not equal to itself).
    assert_eq!(
        format!("{:?}", r.metrics[1].1[0]),
        format!("{:?}", r.policies[1].metrics)
    );
    assert!(r.policies.iter().all(|p| p.spread.is_some()));
    let plots = r.plots.as_ref().expect("plot series");
    assert_eq!(plots.runs.len(), 2);
    assert!(plots.runs[0].memory.is_none() && plots.runs[1].memory.is_some());
    assert_eq!(
        plots.runs[1].memory.as_ref().unwrap().failures.mean,
        r.metrics[1].1[0][metrics::ATOMIC_FAILURES]
    );
}

#[test]
fn app_cpu_is_grouped_by_workload_and_shown_only_when_used() {
    let obs =
        |workload: &str, name: &str, cpuio: bool, cpu_ns: u64| crate::model::base::obs::AppCpuObs {
            name: name.to_string(),
            workload: workload.to_string(),
            cpuio,
            cpu_ns,
        };
    let plain = run("fifo", RunEnd::Horizon);
    let mut busy = plain.clone();
    let span = busy.measured.as_ns();
    busy.app_cpu = vec![
        obs("reader", "reader", false, span / 10),
        obs("idle", "idle", false, 0),
        obs("app", "app.0", true, span / 2),
        obs("app", "app.1", true, span / 2),
    ];
    let r = Report::new(&scenario(), &[plain, busy]);
    assert!(r.policies[0].app_cpu.is_empty());
    let got: Vec<(&str, u32, bool)> = r.policies[1]
        .app_cpu
        .iter()
        .map(|a| (a.workload.as_str(), a.copies, a.cpuio))
        .collect();
    assert_eq!(
        got,
        vec![("reader", 1, false), ("idle", 1, false), ("app", 2, true)]
    );
    assert!((r.policies[1].app_cpu[2].pct - 100.0).abs() < 1e-9);
    let mut text = Vec::new();
    crate::report::text::render(&r, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert_eq!(text.matches("  app cpu      : ").count(), 1, "{text}");
    assert!(
        text.contains("  app cpu      : total=110.0%, reader=10.00%, app=100.0% (cpuio ×2)\n"),
        "{text}"
    );
}
