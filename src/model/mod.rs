//! The dm-crypt world: workloads, dm-crypt's queues and threads, CPUs, the block layer and the
//! device, wired together as one [`Model`](crate::engine::Model) per queue policy.
//!
//! The model measures; it never formats. [`run_policy`] runs one policy of a scenario and returns
//! its [`RunObs`](observe::RunObs).

pub mod bio;
pub mod block;
pub mod cpu;
pub mod device;
pub mod memory;
pub mod observe;
pub mod policy;
pub mod sampler;
pub mod workload;
pub mod world;

use crate::engine::{Limits, Scheduler, SimTime, StopReason};
use crate::scenario::Scenario;
use observe::RunObs;
use policy::PolicyInfo;

/// Names of the queue policies a scenario may list (`none` = no dm-crypt at all).
pub fn policy_names() -> Vec<&'static str> {
    policy::REGISTRY.iter().map(|p| p.name).collect()
}

/// Result of one run: what it measured and the conservation violations found at its end.
#[derive(Debug)]
pub struct RunResult {
    /// The measurements.
    pub obs: RunObs,
    /// Invariant violations (empty when the run is sound).
    pub violations: Vec<String>,
}

/// Runs the scenario under one policy to its horizon (or its event budget).
pub fn run_policy(sc: &Scenario, info: &'static PolicyInfo) -> RunResult {
    let mut sched = Scheduler::new();
    let mut world = world::World::new(sc, info, &mut sched);
    let limits = Limits {
        horizon: SimTime::ZERO + sc.duration,
        max_events: sc.max_events,
    };
    let outcome = crate::engine::run(&mut world, &mut sched, limits);
    let violations = world.check_invariants();
    let saturated = outcome.stop == StopReason::EventBudget;
    let obs = world.finish(sched.now(), outcome.events, saturated);
    RunResult { obs, violations }
}

/// Builders of small scenarios for tests and benchmarks, without YAML.
pub mod testing {
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
        let kernel = KernelConfig { hz: 250 };
        Scenario {
            name: "mm1".into(),
            description: "M/M/1 through the real model".into(),
            seed: 1,
            duration,
            warmup: SimDuration::ZERO,
            max_events: u64::MAX,
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
                }),
            }],
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
