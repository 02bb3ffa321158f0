//! The application side of the workloads: fio's think time, fio's `cpuio` processes, and the
//! CPU time the application spends (docs/model/workloads.md §2a, §2b).
//!
//! **Think time** follows fio's `handle_thinktime()` (`backend.c`), which fio's I/O loop calls
//! after each issue (and after reaping completions when the queue is full): once the job's
//! counter (I/Os completed, or issued with `thinktime_blocks_type=issue`) has moved
//! `thinktime_blocks` past its value at the last pause, the job remembers the counter, waits for
//! every I/O in flight (`io_u_quiesce`), spins `thinktime_spin` on a CPU, then sleeps
//! `thinktime` minus the time the spin took. Completions during the quiesce count toward the
//! next pause, as in fio, where the counter is read before quiescing.
//!
//! **The spin** is CPU work of `thinktime_spin` put on the CPU pool with the job as its owner
//! ([`TaskOwner::Spin`](crate::model::base::ids::TaskOwner::Spin)): it shares the CPUs with dm-crypt's threads and softirqs, so a busy
//! machine stretches it, and the sleep after it shrinks by as much (fio's `usec_spin` returns
//! the wall time spent). fio spins on the wall clock, so a preempted fio spin ends on time
//! having burnt less CPU; qsim's always burns its full amount.
//!
//! **`cpuio`** (`engines/cpu.c`): each copy burns `cpuchunks` of CPU, then sleeps
//! `cpuchunks × (100 − cpuload) / cpuload`, forever: fio's engine sets `thinktime_blocks=1`
//! and that sleep as its think time. It issues no I/O.
//!
//! **CPU time**: each process's CPU work (its `crypt.submit_cost` steps, its spins, its
//! `cpuio` chunks) is counted when the task finishes inside the measured window.

use super::Job;
use crate::engine::{RngStreams, SimDuration, SimRng};
use crate::model::base::config::{Arrivals, CpuIo, Scenario, ThinkTime, WorkloadKind};
use rand::RngExt;

/// Where a job with fio's `thinktime` is in its loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::model) enum Phase {
    /// Issuing up to `iodepth`.
    Running,
    /// A pause is due: waiting for the I/Os in flight to complete.
    Quiesce,
    /// Burning `thinktime_spin` on a CPU.
    Spin,
    /// Sleeping the rest of `thinktime`.
    Sleep,
    /// A serving job receiving its next request (`serve:`).
    Receive,
    /// A serving job sending its request to the replicas and waiting for their answers.
    Replicate,
}

/// Whose CPU time an application task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::model) enum App {
    /// Fio job `j` (its submission path or its spin).
    Job(u32),
    /// `cpuio` process `p`.
    CpuIo(u32),
}

/// A copy's start: `low`, or with a range a time drawn uniformly in `[low, high]` (whole
/// nanoseconds) from the stream `draw` makes (fio's `startdelay=low-high`: each job picks its
/// own delay in the range).
pub(in crate::model) fn start_delay(
    low: SimDuration,
    high: Option<SimDuration>,
    draw: impl FnOnce() -> SimRng,
) -> SimDuration {
    match high {
        Some(h) if h > low => {
            let ns = draw().random_range(low.as_ns()..=h.as_ns());
            SimDuration::from_ns(ns)
        }
        _ => low,
    }
}

impl Job {
    /// The job's fio think time, when it has one (closed loop only: the loader refuses it
    /// with `rate`).
    pub(in crate::model) fn fio_think(&self) -> Option<ThinkTime> {
        match self.cfg.arrivals {
            Arrivals::Closed { .. } => self.cfg.thinktime,
            Arrivals::Open { .. } => None,
        }
    }

    /// fio's test in `handle_thinktime()`: the counter has moved `thinktime_blocks` since the
    /// last pause.
    pub(in crate::model) fn think_due(&self, tt: &ThinkTime) -> bool {
        self.think_counter(tt) >= self.last_think_blocks + u64::from(tt.blocks)
    }

    /// fio's `thinktime_blocks_counter`: I/Os issued or completed since the start.
    pub(in crate::model) fn think_counter(&self, tt: &ThinkTime) -> u64 {
        if tt.on_issue {
            self.issued_ios
        } else {
            self.done_ios
        }
    }
}

/// One copy of a fio `cpuio` job: it burns CPU in chunks and sleeps between them.
#[derive(Debug)]
pub struct CpuProc {
    pub(in crate::model) cfg: CpuIo,
    /// The workload's name, with `.<copy>` when it has several copies.
    pub(in crate::model) label: String,
    /// When it starts.
    pub(in crate::model) start: SimDuration,
    /// CPU time finished in the measured window, ns.
    pub(in crate::model) cpu_ns: u64,
}

impl CpuProc {
    /// The process's name (with `.<copy>` when it has several copies).
    pub fn label(&self) -> &str {
        &self.label
    }
}

/// The `cpuio` copies of a scenario, in workload order (a copy's start drawn from its stream
/// `<name>.<copy>/startdelay` when its `startdelay` is a range).
pub fn cpuio_procs(sc: &Scenario, streams: &RngStreams) -> Vec<CpuProc> {
    let mut out = Vec::new();
    for wl in &sc.workloads {
        let WorkloadKind::CpuIo(c) = &wl.kind else {
            continue;
        };
        for copy in 0..c.numjobs {
            let name = &wl.name;
            let start = start_delay(c.startdelay, c.startdelay_high, || {
                streams.stream(&format!("{name}.{copy}/startdelay"))
            });
            out.push(CpuProc {
                cfg: c.clone(),
                label: if c.numjobs > 1 {
                    format!("{name}.{copy}")
                } else {
                    name.clone()
                },
                start,
                cpu_ns: 0,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::model::{crypt::policy, run_policy, run_traced};

    /// A 1 ms device that serves eight at once, one CPU, no dm-crypt work, and `workloads`.
    fn scenario(cpus: u32, workloads: &str) -> crate::model::base::config::Scenario {
        let yaml = format!(
            "duration: 1s\nwarmup: 0s\ncpus: {cpus}\ndevice: {{ kind: generic, service: 1ms, channels: 8 }}\n\
             block: {{ mode: blk-mq }}\ncrypt: {{ cipher: null }}\npolicies: [none]\n\
             workloads:\n{workloads}"
        );
        crate::scenario::load_str("test.yaml", &yaml).expect("valid test scenario")
    }

    /// The issue times of job 0, in µs.
    fn issues_us(sc: &crate::model::base::config::Scenario, n: usize) -> Vec<u64> {
        let r = run_traced(sc, policy::find("none").expect("registered"), 0, n);
        assert!(r.violations.is_empty(), "{:?}", r.violations);
        r.issue_trace.jobs[0]
            .iter()
            .map(|i| i.at.as_ns() / 1_000)
            .collect()
    }

    #[test]
    fn counting_issues_a_burst_is_exactly_thinktime_blocks() {
        // Four in flight; the 8th issue makes the pause due: the job waits for its four, then
        // sleeps 100 ms.
        let sc = scenario(
            1,
            "  - { kind: fio, rw: randwrite, iodepth: 4, thinktime: 100ms, thinktime_blocks: 8, \
             thinktime_blocks_type: issue }\n",
        );
        let got = issues_us(&sc, 16);
        let want: Vec<u64> = [0, 1_000, 102_000, 103_000]
            .iter()
            .flat_map(|&t| [t; 4])
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn counting_completions_the_quiesce_feeds_the_next_burst() {
        // fio's default: the 8th completion (at 2 ms, beside three still in flight) makes the
        // pause due; the three that complete during the quiesce count toward the next pause,
        // which therefore comes after five more completions, not eight.
        let sc = scenario(
            1,
            "  - { kind: fio, rw: randwrite, iodepth: 4, thinktime: 100ms, thinktime_blocks: 8 }\n",
        );
        let got = issues_us(&sc, 23);
        let mut want: Vec<u64> = Vec::new();
        for (t, n) in [
            (0, 4),
            (1_000, 4),
            (2_000, 3),
            (103_000, 4),
            (104_000, 4),
            (205_000, 4),
        ] {
            want.extend(std::iter::repeat_n(t, n));
        }
        assert_eq!(got, want);
    }

    #[test]
    fn the_spin_burns_cpu_and_the_sleep_takes_what_is_left() {
        // QD1: read 1 ms, spin 300 µs, sleep 700 µs: a read every 2 ms, 300 µs of CPU each.
        let job = "  - { kind: fio, rw: randread, thinktime: 1000, thinktime_spin: 300 }\n";
        let sc = scenario(1, job);
        assert_eq!(issues_us(&sc, 3), vec![0, 2_000, 4_000]);
        let r = run_policy(&sc, policy::find("none").expect("registered"));
        let app = &r.obs.app_cpu;
        assert_eq!((app.len(), app[0].cpuio), (1, false));
        // 500 pauses end inside the second: 500 × 300 µs.
        assert_eq!(app[0].cpu_ns, 500 * 300_000);
        assert!((r.obs.app_cpu_pct() - 15.0).abs() < 1e-9);
        // Beside a cpuio process burning the only CPU, the spin shares it and takes 600 µs
        // of wall time; fio's sleep is the think time less the spin's wall time, so the
        // period stays 2 ms.
        let busy = format!("{job}  - {{ kind: cpuio, cpuload: 100, cpuchunks: 100000 }}\n");
        assert_eq!(issues_us(&scenario(1, &busy), 3), vec![0, 2_000, 4_000]);
    }

    #[test]
    fn cpuio_uses_its_load_of_one_cpu_and_issues_nothing() {
        // 25 %: 1 ms of CPU, then fio's 1000 × 75 / 25 = 3000 µs asleep.
        let sc = scenario(
            2,
            "  - { kind: fio, rw: randread }\n  - { name: app, kind: cpuio, cpuload: 25, \
             cpuchunks: 1000, numjobs: 2 }\n",
        );
        let r = run_policy(&sc, policy::find("none").expect("registered"));
        assert!(r.violations.is_empty(), "{:?}", r.violations);
        let app: Vec<(&str, bool, u64)> = r
            .obs
            .app_cpu
            .iter()
            .map(|a| (a.name.as_str(), a.cpuio, a.cpu_ns))
            .collect();
        // Each copy finishes 250 chunks of 1 ms in the second.
        assert_eq!(
            app,
            vec![
                ("fio0", false, 0),
                ("app.0", true, 250_000_000),
                ("app.1", true, 250_000_000)
            ]
        );
        assert!(r.obs.app_cpu[1..].iter().all(|a| a.workload == "app"));
        assert!((r.obs.app_cpu_pct() - 50.0).abs() < 1e-9);
        // Only the fio job's reads were issued: one a millisecond.
        let ios = r.obs.dirs[0].ios + r.obs.dirs[1].ios;
        assert!((999..=1000).contains(&ios), "{ios}");
    }

    #[test]
    fn a_startdelay_range_draws_each_copy_its_own_start() {
        let sc = scenario(
            1,
            "  - { kind: fio, rw: randread, number_ios: 1, numjobs: 4, \
             startdelay: 100ms-300ms }\n",
        );
        let starts: Vec<u64> = run_policy(&sc, policy::find("none").expect("registered"))
            .obs
            .finite_jobs
            .iter()
            .map(|j| j.start.as_ns())
            .collect();
        assert_eq!(starts.len(), 4);
        assert!(
            starts
                .iter()
                .all(|&s| (100_000_000..=300_000_000).contains(&s)),
            "{starts:?}"
        );
        let mut distinct = starts.clone();
        distinct.dedup();
        assert_eq!(distinct.len(), 4, "{starts:?}");
        // The draw is the copy's own stream: the same under another policy.
        let again: Vec<u64> = run_policy(&sc, policy::find("fifo").expect("registered"))
            .obs
            .finite_jobs
            .iter()
            .map(|j| j.start.as_ns())
            .collect();
        assert_eq!(starts, again);
    }
}
