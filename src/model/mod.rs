//! The dm-crypt world: workloads, dm-crypt's queues and threads, CPUs, the block layer, the
//! device and memory, wired together as one [`Model`](crate::engine::Model) per queue policy.
//!
//! The model measures; it never formats. [`run_policy`] runs one policy of a scenario and returns
//! its [`RunObs`]; [`run_replication_with`] also records what a [`Recording`] asks for (an issue
//! trace, a [`timeline`](observe::timeline)).
//!
//! # Subsystems
//!
//! One folder per kernel subsystem; each owns its state and its events (a variant of
//! [`world::Event`]) and schedules them on any scheduler whose event type carries them. The
//! [`world`] holds the subsystems and routes events and bios between them: it is the only place
//! that knows them all, and the only `impl World`. The folders import each other only downwards
//! (`tests/tidy.rs` checks there is no circle):
//!
//! ```text
//! base  <-  cpu, block, mm  <-  crypt, workload, net  <-  observe  <-  world
//! ```
//!
//! | folder | models | kernel | docs/model |
//! |---|---|---|---|
//! | [`base`] | bios, identities, the scenario as the model reads it, physics, sampling, what a run measured | `include/linux/blk_types.h` | `README.md` |
//! | [`cpu`] | processor sharing; the per-CPU machine (softirq, CFS weights, placement) | `kernel/sched/` | `cpu.md` |
//! | [`block`] | request queue, pools, congestion, plugging, CFQ, deadline, blk-mq, the device | `block/`, `drivers/nvme/` | `block.md`, `device.md` |
//! | [`mm`] | the zone, watermarks, kswapd, direct reclaim, `congestion_wait`, GFP_ATOMIC, the mempool, swap | `mm/` | `memory.md`, `kswapd.md` |
//! | [`crypt`] | dm-crypt's table and flags, its threads, the async engine, the queue policies | `drivers/md/dm-crypt.c` | `crypt.md` |
//! | [`net`] | a NIC's receive ring, the TCP socket and window, the paced sender | `drivers/net/e1000e/`, `net/ipv4/tcp*.c` | `memory.md` §7a |
//! | [`workload`] | fio jobs, buffered writers and flushers, apps, fake-gitk | — | `workloads.md` |
//! | [`observe`] | the recorder and warm-up gate, timeline, trace, invariant books | — | `measurements.md` |
//! | [`world`] | the assembled world: the cast, the routing, each subsystem's adapter | — | `README.md` |

pub mod base;
pub mod block;
pub mod cpu;
pub mod crypt;
pub mod mm;
pub mod net;
pub mod observe;
pub mod workload;
pub mod world;

use crate::engine::{Limits, Scheduler, SimTime, StopReason};
use crate::model::base::config::Scenario;
use base::obs::RunObs;
use crypt::policy::PolicyInfo;

/// Names of the queue policies a scenario may list (`none` = no dm-crypt at all).
pub fn policy_names() -> Vec<&'static str> {
    crypt::policy::REGISTRY.iter().map(|p| p.name).collect()
}

/// Result of one run: what it measured and the invariants checked at its end.
#[derive(Debug)]
pub struct RunResult {
    /// The measurements.
    pub obs: RunObs,
    /// Invariant violations (empty when the run is sound): [`RunResult::invariants`]'
    /// [`violations`](observe::invariants::InvariantReport::violations).
    pub violations: Vec<String>,
    /// Every invariant with its figures (Little's law per queue, conservation, clock).
    pub invariants: observe::invariants::InvariantReport,
    /// The first issues of each job, if [`run_traced`] asked for them (otherwise empty).
    pub issue_trace: base::obs::IssueTrace,
    /// The trace of [`Recording::trace`]'s window, if the run asked for one.
    pub trace: Option<observe::trace::Trace>,
    /// The sink [`run_replication_logged`] was given, back after the run (every completed,
    /// measured I/O was handed to it); `None` otherwise.
    pub io_sink: Option<Box<dyn observe::recorder::IoSink>>,
}

impl RunResult {
    /// A copy of this result for another run of the same model (see [`model_key`]), labelled
    /// `policy`; `None` when it holds an I/O sink, which belongs to one run alone.
    pub fn copy_as(&self, policy: &str) -> Option<RunResult> {
        if self.io_sink.is_some() {
            return None;
        }
        let mut obs = self.obs.clone();
        obs.policy = policy.to_string();
        Some(RunResult {
            obs,
            violations: self.violations.clone(),
            invariants: self.invariants.clone(),
            issue_trace: self.issue_trace.clone(),
            trace: self.trace.clone(),
            io_sink: None,
        })
    }
}

/// Everything the model reads of `sc` when it runs under policy `info`, as one string: two runs
/// with the same key simulate the same thing, draw for draw, so one can stand for the other.
///
/// It is the scenario as resolved, less what only the report reads (the name, description,
/// variants, sweep plan, the fio options as written, the machine file's name) and less the
/// patch list, which loading has already turned into the switches the model reads
/// (`scenario::kernel`); `crypt.io_queues` is replaced by what it decides for this policy
/// (`mason_io` in `world`: Mason's io threads exist only in the queued layout), so a
/// dm-crypt patch on a run without dm-crypt leaves the key as it was.
pub fn model_key(sc: &Scenario, info: &PolicyInfo) -> String {
    use base::config::{FioGiven, IoQueues};
    let mut s = sc.clone();
    s.name.clear();
    s.description.clear();
    s.variants.clear();
    s.sweep = None;
    s.fio_given = FioGiven::default();
    s.machine_file = None;
    s.kernel.patches.clear();
    s.crypt.io_queues = if world::mason_io(sc, info) {
        IoQueues::MasonV3
    } else {
        IoQueues::One
    };
    let body = serde_json::to_string(&s).expect("a scenario serialises");
    format!("{}\n{body}", info.name)
}

/// Runs replication 0 of the scenario under one policy to its horizon (or its work budget).
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
    let rec = Recording {
        trace_issues,
        ..Recording::default()
    };
    run_replication_with(sc, info, replication, rec)
}

/// What a run records beside its measurements; everything is off by default, and nothing
/// recorded changes what the run simulates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recording {
    /// Keep the first this many issues of every fio job in [`RunResult::issue_trace`] (0:
    /// none).
    pub trace_issues: usize,
    /// Record a [`timeline`](observe::timeline) of at most this many buckets into
    /// [`RunObs::timeline`](base::obs::RunObs::timeline) (`None`: no timeline;
    /// [`observe::timeline::DEFAULT_POINTS`] is the usual count).
    pub timeline_points: Option<usize>,
    /// Keep the per-window sums fio's log files need in
    /// [`RunObs::fio_log`](base::obs::RunObs::fio_log) (bounded; see
    /// [`crate::stats::windows`]).
    pub fio_log: bool,
    /// With [`Recording::fio_log`], also keep fio's histogram log: windows of this many ns
    /// (`log_hist_msec`) written at this `log_hist_coarseness` ([`crate::stats::histlog`]).
    pub hist_log: Option<(u64, u32)>,
    /// With [`Recording::fio_log`], the averaged logs' window in ns (`log_avg_msec`); `None`
    /// (or 0): the recorder's sample interval, 500 ms.
    pub log_avg_ns: Option<u64>,
    /// Record a [`trace`](observe::trace) of this window into [`RunResult::trace`] (bounded by its
    /// `max_spans`). The run still goes to the scenario's horizon: make `duration` the
    /// window's end to stop there.
    pub trace: Option<observe::trace::TraceWindow>,
}

impl Recording {
    /// A timeline of [`observe::timeline::DEFAULT_POINTS`] buckets, nothing else.
    pub fn timeline() -> Recording {
        Recording {
            timeline_points: Some(observe::timeline::DEFAULT_POINTS),
            ..Recording::default()
        }
    }
}

/// Runs one replication under one policy, recording what `rec` asks for.
pub fn run_replication_with(
    sc: &Scenario,
    info: &'static PolicyInfo,
    replication: u64,
    rec: Recording,
) -> RunResult {
    run_replication_until(sc, info, replication, rec, Valve::OPEN)
}

/// Work units run between two looks at the wall clock under a deadline: a few milliseconds of
/// simulation.
pub const SLICE_WORK: u64 = 1 << 18;

/// When a run stops before its horizon on something outside the simulation: a wall-clock
/// deadline (`qsim run --time-limit`, the page's limit) and a flag another thread may raise (a
/// page run superseded by a newer one). The run looks at it between slices of [`SLICE_WORK`]
/// units, so it trips within a few milliseconds; until it trips it changes nothing simulated.
#[derive(Debug, Clone, Copy, Default)]
pub struct Valve<'a> {
    /// Past this instant the run stops.
    pub deadline: Option<std::time::Instant>,
    /// Once this is true the run stops.
    pub cancel: Option<&'a std::sync::atomic::AtomicBool>,
}

impl Valve<'_> {
    /// No valve: the run goes to its horizon or its work budget.
    pub const OPEN: Valve<'static> = Valve {
        deadline: None,
        cancel: None,
    };

    /// A valve with a deadline only (`None`: none).
    pub fn until(deadline: Option<std::time::Instant>) -> Valve<'static> {
        Valve {
            deadline,
            cancel: None,
        }
    }

    fn armed(&self) -> bool {
        self.deadline.is_some() || self.cancel.is_some()
    }

    /// Whether the run must stop now.
    pub fn tripped(&self) -> bool {
        self.cancel
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
            || self
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
    }
}

/// [`run_replication_with`] with a [`Valve`]: once it trips the run stops at its next slice of
/// [`SLICE_WORK`] units and ends as [`base::obs::RunEnd::TimeLimit`]. The slices do not change
/// what is simulated (the engine continues exactly where it stopped); only a run that the valve
/// stops depends on the machine's speed.
pub fn run_replication_until(
    sc: &Scenario,
    info: &'static PolicyInfo,
    replication: u64,
    rec: Recording,
    valve: Valve<'_>,
) -> RunResult {
    run_replication_logged(sc, info, replication, rec, valve, None)
}

/// [`run_replication_until`], also handing every completed, measured I/O to `sink` (fio's
/// per-I/O logs: the caller formats and writes them as they come, so nothing grows with the
/// simulated time); the sink comes back in [`RunResult::io_sink`]. Handing records out
/// changes nothing simulated.
pub fn run_replication_logged(
    sc: &Scenario,
    info: &'static PolicyInfo,
    replication: u64,
    rec: Recording,
    valve: Valve<'_>,
    sink: Option<Box<dyn observe::recorder::IoSink>>,
) -> RunResult {
    let mut sched = Scheduler::new();
    let mut world = world::World::with_trace(sc, info, replication, rec.trace_issues, &mut sched);
    if let Some(points) = rec.timeline_points {
        world.record_timeline(points, sched.now());
    }
    if rec.fio_log {
        let window = rec.log_avg_ns.map(crate::engine::SimDuration::from_ns);
        world.keep_fio_log(window, rec.hist_log, &mut sched);
    }
    if let Some(sink) = sink {
        world.send_ios_to(sink);
    }
    if let Some(win) = rec.trace {
        world.start_trace(win);
    }
    let horizon = SimTime::ZERO + sc.duration;
    let (mut events, mut work) = (0u64, 0u64);
    let mut timed_out = false;
    let stop = loop {
        let left = sc.max_events.saturating_sub(work);
        let slice = if valve.armed() {
            left.min(SLICE_WORK)
        } else {
            left
        };
        let limits = Limits {
            horizon,
            max_work: slice,
        };
        let outcome = crate::engine::run(&mut world, &mut sched, limits);
        events += outcome.events;
        work = work.saturating_add(outcome.work);
        if outcome.stop != StopReason::WorkBudget || work >= sc.max_events {
            break outcome.stop;
        }
        if valve.tripped() {
            timed_out = true;
            break outcome.stop;
        }
    };
    let invariants = world.invariants(sched.now());
    let violations = invariants.violations();
    let issue_trace = world.take_issue_trace();
    let trace = world.take_trace(sched.now());
    let io_sink = world.take_io_sink();
    let saturated = stop == StopReason::WorkBudget && !timed_out;
    let mut obs = world.finish(sched.now(), events, saturated);
    if timed_out {
        obs.end = base::obs::RunEnd::TimeLimit;
    }
    RunResult {
        obs,
        violations,
        invariants,
        issue_trace,
        trace,
        io_sink,
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
    ) -> crate::model::base::config::MemoryConfig {
        use crate::engine::SimDuration;
        use crate::model::base::config::{AtomicStream, Distribution, MemoryConfig};
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
            swap: 0,
            swap_offset: 0,
            swappiness: 60,
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
                rx: None,
            }],
        }
    }
    use crate::engine::SimDuration;
    use crate::model::base::config::*;

    /// dm-crypt at no cost (the null cipher, no hops, no submission cost): for models that only
    /// pass bios through, like [`mm1`]'s.
    fn free_crypt() -> CryptConfig {
        CryptConfig {
            cipher: "null".into(),
            encrypt_rate: f64::INFINITY,
            decrypt_rate: f64::INFINITY,
            per_sector_cost: SimDuration::ZERO,
            hop_cost: SimDuration::ZERO,
            cost: None,
            engine: CryptoEngine::Sync,
            unplug_after_submit: false,
            io_queues: crate::model::base::config::IoQueues::One,
            submit_cost: SimDuration::ZERO,
            clone_submit_cost: SimDuration::ZERO,
            max_read_size: 0,
            max_write_size: 0,
        }
    }

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
            fio_given: Default::default(),
            machine_file: None,
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
                cfq: kernel.version.cfq(),
                ncq_capable: false,
                mq: Default::default(),
            },
            kernel,
            crypt: free_crypt(),
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimDuration;

    #[test]
    fn the_time_limit_slices_change_nothing_until_the_valve_trips() {
        let mut sc = crate::scenario::resolve("two-queue").expect("shipped");
        // 60 s of fifo is about 870k work units (measured): several slices.
        sc.duration = SimDuration::from_secs(60);
        let info = crypt::policy::find("fifo").expect("fifo");
        let whole = run_replication_with(&sc, info, 1, Recording::default());
        let far = std::time::Instant::now() + std::time::Duration::from_secs(3600);
        let sliced =
            run_replication_until(&sc, info, 1, Recording::default(), Valve::until(Some(far)));
        assert_eq!(format!("{:?}", whole.obs), format!("{:?}", sliced.obs));
        // A deadline already past stops the run after its first slice.
        let past = std::time::Instant::now();
        let cut =
            run_replication_until(&sc, info, 1, Recording::default(), Valve::until(Some(past)));
        assert_eq!(cut.obs.end, base::obs::RunEnd::TimeLimit);
        assert!(cut.obs.ended < SimTime::ZERO + sc.duration);
        assert!(cut.violations.is_empty(), "{:?}", cut.violations);
    }

    #[test]
    fn mm1_mean_sojourn_is_close_to_theory() {
        let sc = testing::mm1(
            800.0,
            SimDuration::from_ms(1),
            1,
            SimDuration::from_secs(400),
        );
        let r = run_policy(&sc, crypt::policy::find("none").unwrap());
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
    use base::obs::{RunObs, Stage};

    fn run(yaml: &str) -> Vec<RunObs> {
        let sc = crate::scenario::load_str("test.yaml", yaml).expect("test scenario is valid");
        sc.policies
            .iter()
            .map(|p| {
                let r = run_policy(&sc, crypt::policy::find(p).unwrap());
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
        crypt::policy::REGISTRY
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
        let fifo = crypt::policy::find("fifo").unwrap();
        let a = run_traced(&sc, fifo, 0, 10).issue_trace;
        let b = run_traced(&sc, fifo, 1, 10).issue_trace;
        assert_ne!(a.jobs[0], b.jobs[0]);
        // Off unless asked for.
        assert!(run_replication(&sc, fifo, 0).issue_trace.jobs.is_empty());
    }
}

/// Finite fio jobs (`io_size`, `number_ios`, `startdelay`) and the run end they bring.
#[cfg(test)]
mod finite_tests {
    use super::*;
    use crate::engine::SimDuration;
    use base::obs::FiniteJobObs;

    /// A 1 ms deterministic device without dm-crypt: a read at depth 1 takes exactly 1 ms.
    const IDLE_DISK: &str = "
duration: DURATION
warmup: WARMUP
device: { kind: generic, service: 1ms }
block: { elevator: fifo }
crypt: { cipher: null, hop_cost: 0ns }
policies: [none]
workloads:
";

    fn scenario(duration: &str, warmup: &str, workloads: &str) -> Scenario {
        let yaml = IDLE_DISK
            .replace("DURATION", duration)
            .replace("WARMUP", warmup)
            + workloads;
        crate::scenario::load_str("finite.yaml", &yaml).expect("valid scenario")
    }

    /// Runs the scenario's only policy with the first `trace` issues of each job kept; every
    /// invariant must hold, however early the run ended.
    fn run(sc: &Scenario, trace: usize) -> RunResult {
        let r = run_traced(sc, crypt::policy::find("none").unwrap(), 0, trace);
        assert!(r.violations.is_empty(), "{:?}", r.violations);
        r
    }

    fn ms(ns: u64) -> f64 {
        ns as f64 / 1e6
    }

    fn job<'a>(r: &'a RunResult, name: &str) -> &'a FiniteJobObs {
        r.obs
            .finite_jobs
            .iter()
            .find(|j| j.name == name)
            .unwrap_or_else(|| panic!("no finite job {name}: {:?}", r.obs.finite_jobs))
    }

    #[test]
    fn a_job_stops_after_io_size_and_the_run_ends_with_it() {
        let sc = scenario("10s", "0s", "  - { name: r, kind: fio, io_size: 400KiB }\n");
        let r = run(&sc, 0);
        let j = job(&r, "r");
        // 100 reads of 4 KiB, one after another, 1 ms each.
        assert_eq!((j.ios, j.bytes), (100, 400 << 10));
        let elapsed = j.elapsed_ns.expect("finished");
        assert!((ms(elapsed) - 100.0).abs() < 0.5, "{elapsed} ns");
        assert_eq!(r.obs.end, base::obs::RunEnd::Finished);
        assert_eq!(
            r.obs.ended,
            j.finished().unwrap(),
            "the run ends at its last completion"
        );
        assert_eq!(r.obs.elapsed_ns(), Some(elapsed));
        // The measured window is the run, not the 10 s asked for: IOPS and BW stay right.
        assert_eq!(r.obs.measured, r.obs.ended.since(SimTime::ZERO));
        assert_eq!(r.obs.dirs[0].ios, 100);
        assert_eq!(r.obs.dirs[0].issued, 100);
    }

    #[test]
    fn number_ios_counts_issues_at_any_depth_and_open_loops_stop_arriving() {
        let sc = scenario(
            "10s",
            "0s",
            "  - { name: deep, kind: fio, number_ios: 50, iodepth: 4, bs: 8k }\n  \
             - { name: open, kind: fio, number_ios: 30, rate: 200/s }\n",
        );
        let r = run(&sc, 0);
        let (deep, open) = (job(&r, "deep"), job(&r, "open"));
        assert_eq!((deep.ios, deep.bytes), (50, 50 * 8192));
        assert_eq!((open.ios, open.bytes), (30, 30 * 4096));
        // A depth larger than the work issues only the work.
        let sc = scenario(
            "10s",
            "0s",
            "  - { name: d, kind: fio, number_ios: 3, iodepth: 8 }\n",
        );
        let r = run(&sc, 0);
        assert_eq!(job(&r, "d").ios, 3);
        assert_eq!(r.obs.dirs[0].issued, 3);
        assert_eq!(r.obs.end, base::obs::RunEnd::Finished);
        // With both limits the first one reached ends the job.
        let sc = scenario(
            "10s",
            "0s",
            "  - { name: a, kind: fio, number_ios: 7, io_size: 1MiB }\n  \
             - { name: b, kind: fio, number_ios: 700, io_size: 16KiB }\n",
        );
        let r = run(&sc, 0);
        assert_eq!((job(&r, "a").ios, job(&r, "b").ios), (7, 4));
    }

    #[test]
    fn startdelay_holds_the_first_issue_and_elapsed_counts_from_it() {
        let sc = scenario(
            "10s",
            "0s",
            "  - { name: late, kind: fio, number_ios: 20, iodepth: 2, startdelay: 2s }\n  \
             - { name: open, kind: fio, number_ios: 5, rate: 100/s, startdelay: 3s }\n",
        );
        let r = run(&sc, 10);
        let first = |j: usize| r.issue_trace.jobs[j][0].at;
        assert_eq!(first(0), SimTime::ZERO + SimDuration::from_secs(2));
        assert!(first(1) > SimTime::ZERO + SimDuration::from_secs(3));
        let late = job(&r, "late");
        assert_eq!(late.start, SimTime::ZERO + SimDuration::from_secs(2));
        // Two in flight on a one-at-a-time device: 20 reads take 20 ms from the start delay.
        assert!(
            (ms(late.elapsed_ns.unwrap()) - 20.0).abs() < 0.5,
            "{late:?}"
        );
        // The run's elapsed time spans both jobs, from the earliest start.
        let open = job(&r, "open");
        assert_eq!(
            r.obs.elapsed_ns(),
            Some(open.finished().unwrap().since(late.start).as_ns())
        );
        // Without a start delay a closed loop issues at once, as before.
        let sc = scenario("1s", "0s", "  - { kind: fio, number_ios: 2 }\n");
        assert_eq!(run(&sc, 1).issue_trace.jobs[0][0].at, SimTime::ZERO);
    }

    #[test]
    fn the_run_ends_at_the_last_finite_completion_with_background_work_in_flight() {
        let sc = scenario(
            "30s",
            "0s",
            "  - { name: short, kind: fio, number_ios: 10, numjobs: 2 }\n  \
             - { name: long, kind: fio, number_ios: 200 }\n  \
             - { name: bg, kind: fio, rw: randwrite, iodepth: 4 }\n",
        );
        let r = run(&sc, 0);
        let names: Vec<&str> = r.obs.finite_jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(
            names,
            ["short.0", "short.1", "long"],
            "copies are named, bg is not finite"
        );
        let last = r
            .obs
            .finite_jobs
            .iter()
            .map(|j| j.finished().expect("every finite job finished"))
            .max()
            .unwrap();
        assert_eq!(r.obs.ended, last);
        assert_eq!(job(&r, "long").finished(), Some(last));
        assert!(
            r.obs.ended < SimTime::ZERO + SimDuration::from_secs(5),
            "{:?}",
            r.obs.ended
        );
        // The background writer still had I/O in flight: the invariants (checked in `run`)
        // count it up to the end, as they do at a horizon.
        assert!(r.invariants.little.iter().any(|c| c.area > 0));
    }

    #[test]
    fn a_job_that_cannot_finish_is_unfinished_and_the_run_goes_to_its_horizon() {
        let sc = scenario(
            "1s",
            "0s",
            "  - { name: big, kind: fio, io_size: 1GiB }\n  \
             - { name: never, kind: fio, number_ios: 5, startdelay: 2s }\n  \
             - { name: quick, kind: fio, number_ios: 5 }\n",
        );
        let r = run(&sc, 0);
        assert_eq!(r.obs.end, base::obs::RunEnd::Horizon);
        assert_eq!(r.obs.ended, SimTime::ZERO + SimDuration::from_secs(1));
        let big = job(&r, "big");
        assert_eq!(big.elapsed_ns, None);
        assert!(big.ios > 900 && big.ios < 1000, "{big:?}");
        assert_eq!(job(&r, "never").ios, 0);
        assert_eq!(job(&r, "never").elapsed_ns, None);
        assert!(job(&r, "quick").elapsed_ns.is_some());
        assert_eq!(
            r.obs.elapsed_ns(),
            None,
            "one unfinished job: no run elapsed time"
        );
        // Without finite jobs nothing changes.
        let sc = scenario("1s", "0s", "  - { kind: fio }\n");
        let r = run(&sc, 0);
        assert!(r.obs.finite_jobs.is_empty());
        assert_eq!(
            (r.obs.end, r.obs.elapsed_ns()),
            (base::obs::RunEnd::Horizon, None)
        );
    }

    #[test]
    fn a_run_that_ends_inside_the_warm_up_measures_nothing_and_stays_sound() {
        let sc = scenario("10s", "5s", "  - { name: r, kind: fio, number_ios: 10 }\n");
        let r = run(&sc, 0);
        assert_eq!(r.obs.end, base::obs::RunEnd::Finished);
        assert_eq!(r.obs.measured, SimDuration::ZERO);
        assert_eq!(r.obs.dirs[0].ios, 0);
        assert_eq!(
            job(&r, "r").ios,
            10,
            "the job's own count includes the warm-up"
        );
    }

    #[test]
    fn a_finite_gitk_under_memory_pressure_ends_the_run_and_conserves_pages() {
        let sc = crate::scenario::load_str(
            "gitk.yaml",
            "duration: 60s\ndevice: { kind: hdd5400 }\ncrypt: { cipher: aes-2009 }\n\
             policies: [fifo]\nmemory: { ram: 2GiB, unreclaimable: 1900MiB }\n\
             workloads:\n  - { kind: gitk, io_size: 1MiB, startdelay: 1s }\n  \
             - { kind: buffered-writer, rate: 20MB/s }\n",
        )
        .unwrap();
        let r = run_policy(&sc, crypt::policy::find("fifo").unwrap());
        assert!(r.violations.is_empty(), "{:?}", r.violations);
        assert_eq!(r.obs.end, base::obs::RunEnd::Finished);
        assert_eq!(r.obs.finite_jobs[0].ios, 256);
        assert!(r.obs.ended < SimTime::ZERO + SimDuration::from_secs(60));
    }
}
