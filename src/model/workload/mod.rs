//! The load on the machine (fio's job options, `mm/page-writeback.c` for the flusher): fio jobs,
//! buffered writers and their flushers, application jobs with CPU phases, and Mel Gorman's
//! fake-gitk. `docs/model/workloads.md` describes them.
//!
//! Workloads: fio-like jobs (closed or open loop) and buffered writers with their flusher.
//!
//! A fio job draws from its own named random streams (`<name>.<copy>/arrival`, `/offset`, `/mix`,
//! `/think`, `/service`), so the arrival times, offsets and device service draws it produces are
//! the same under every policy: policies are compared with common random numbers.
//!
//! A job starts at its `startdelay` (or at a time drawn in its `startdelay` range from its own
//! stream `<name>.<copy>/startdelay`). A finite job (fio's `io_size` or `number_ios`) counts what
//! it issues, warm-up included; once that reaches its limit it issues nothing more, and when its
//! last I/O completes it is done. When every finite job of the world is done the world asks the
//! engine to stop ([`Scheduler::request_stop`]): the run ends there, background workloads and
//! all.
//!
//! A buffered writer dirties page cache at a fixed rate in 64 KiB steps. Before each step it runs
//! `balance_dirty_pages`: while its dirty plus under-writeback data exceed the dirty limit it sleeps
//! in `congestion_wait(ASYNC, HZ/10)`. Its flusher writes dirty data back in `chunk`-sized async
//! bios (512 KiB: the largest request) while the disk beneath is not write-congested, and backs
//! off with `congestion_wait(ASYNC, HZ/10)` when it is, as 2.6.32's background writeback does.
//!
//! fio's think time (`thinktime`, `thinktime_blocks`, `thinktime_spin`) and `cpuio` processes,
//! the application's CPU work and its accounting live in the submodule `app`.

pub mod gitk;

use crate::engine::{RngStreams, Scheduler, SimDuration, SimRng, SimTime};
use crate::model::base::bio::{Bio, Dir, Origin};
use crate::model::base::config::{Arrivals, BufferedWriter, FioJob, RwKind};
use crate::model::base::ids::ActorId;
use crate::model::base::obs::FiniteJobObs;
use rand::RngExt;

/// The workloads' events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadEvent {
    /// A job issues its next I/O (open-loop arrival, or closed-loop think time over).
    JobIssue {
        /// Job index.
        job: u32,
    },
    /// A buffered writer dirties its next step of data.
    WriterTick {
        /// Writer index.
        writer: u32,
    },
    /// A flusher looks for dirty data to write back.
    FlusherRun {
        /// Writer index.
        writer: u32,
    },
    /// A job with fio's `thinktime` (re)starts issuing: its start, or its pause is over.
    JobResume {
        /// Job index.
        job: u32,
    },
    /// A serving job's wait for its replicas' answers is over (or, at its start, it takes
    /// its first request).
    ServeStep {
        /// Job index.
        job: u32,
    },
    /// A transfer on the node's link may have left the wire (`serve:`).
    LinkDone {
        /// The outbound direction (else inbound).
        outbound: bool,
        /// The link's version when this was scheduled: stale if it changed since.
        version: u64,
    },
    /// A `cpuio` process starts its next chunk of CPU work.
    CpuIoRun {
        /// Process index (in the world's `cpuio` list).
        process: u32,
    },
}

/// Bytes a buffered writer dirties per step.
pub(in crate::model) const DIRTY_STEP: u64 = 64 * 1024;

/// One copy of a fio job.
#[derive(Debug)]
pub struct Job {
    pub(in crate::model) cfg: FioJob,
    /// The workload's name, with `.<copy>` when it has several copies.
    pub(in crate::model) label: String,
    /// Its submitting context (an actor of the world).
    pub(in crate::model) ctx: ActorId,
    pub(in crate::model) inflight: u32,
    /// I/Os and bytes issued since the start, warm-up included (what `number_ios` and
    /// `io_size` count).
    pub(in crate::model) issued_ios: u64,
    pub(in crate::model) issued_bytes: u64,
    /// I/Os and bytes completed since the start, warm-up included.
    pub(in crate::model) done_ios: u64,
    pub(in crate::model) done_bytes: u64,
    /// When a finite job's last I/O completed.
    pub(in crate::model) finished: Option<SimTime>,
    /// When this copy starts: `startdelay`, or its draw in the `startdelay` range.
    pub(in crate::model) start: SimDuration,
    /// Where fio's think-time loop is (always running without `thinktime`).
    pub(in crate::model) phase: app::Phase,
    /// The think-time counter at the last pause (fio's `last_thinktime_blocks`).
    pub(in crate::model) last_think_blocks: u64,
    /// When the current `thinktime_spin` started.
    pub(in crate::model) spin_started: SimTime,
    /// Application CPU time finished in the measured window, ns.
    pub(in crate::model) cpu_ns: u64,
    next_seq: u64,
    arrival: SimRng,
    /// The mean gap between open-loop arrivals, seconds (`1 / rate`), divided once here
    /// rather than per arrival.
    gap_mean: f64,
    offset: SimRng,
    mix: SimRng,
    pub(in crate::model) think: SimRng,
    service: SimRng,
    crypt: SimRng,
    /// A replaying job's place in its trace (`kind: replay`); `None` for a plain fio job.
    pub(in crate::model) replay: Option<replay::Cursor>,
}

impl Job {
    /// The job's name (with `.<copy>` when it has several copies).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Copy `copy` of the job named `name`.
    pub fn new(name: &str, copy: u32, cfg: &FioJob, ctx: ActorId, streams: &RngStreams) -> Job {
        let s = |what: &str| streams.stream(&format!("{name}.{copy}/{what}"));
        Job {
            cfg: cfg.clone(),
            label: if cfg.numjobs > 1 {
                format!("{name}.{copy}")
            } else {
                name.to_string()
            },
            ctx,
            inflight: 0,
            issued_ios: 0,
            issued_bytes: 0,
            done_ios: 0,
            done_bytes: 0,
            finished: None,
            start: app::start_delay(cfg.startdelay, cfg.startdelay_high, || s("startdelay")),
            phase: app::Phase::Running,
            last_think_blocks: 0,
            spin_started: SimTime::ZERO,
            cpu_ns: 0,
            next_seq: cfg.offset,
            arrival: s("arrival"),
            gap_mean: match cfg.arrivals {
                Arrivals::Open { rate, .. } => 1.0 / rate,
                Arrivals::Closed { .. } => 0.0,
            },
            offset: s("offset"),
            mix: s("mix"),
            think: s("think"),
            service: s("service"),
            crypt: s("crypt"),
            replay: cfg.replay.as_ref().map(|r| replay::cursor(r, copy)),
        }
    }

    /// I/Os of this job in flight, by its own account.
    pub fn inflight(&self) -> u32 {
        self.inflight
    }

    /// Whether the job has a fixed amount of work (`io_size` or `number_ios`).
    pub fn is_finite(&self) -> bool {
        self.cfg.is_finite()
    }

    /// Whether a finite job has issued all its work: it issues nothing more.
    pub(in crate::model) fn exhausted(&self) -> bool {
        self.cfg.io_size.is_some_and(|b| self.issued_bytes >= b)
            || self.cfg.number_ios.is_some_and(|n| self.issued_ios >= n)
            || self.replay.as_ref().is_some_and(replay::Cursor::done)
    }

    /// What a finite job did (`None` for a job that runs until the end).
    pub(in crate::model) fn finite_obs(&self) -> Option<FiniteJobObs> {
        if !self.is_finite() {
            return None;
        }
        let start = SimTime::ZERO + self.start;
        Some(FiniteJobObs {
            name: self.label.clone(),
            start,
            elapsed_ns: self.finished.map(|t| t.since(start).as_ns()),
            ios: self.done_ios,
            bytes: self.done_bytes,
            io_size: self.cfg.io_size,
            number_ios: self.cfg.number_ios,
        })
    }

    pub(in crate::model) fn iodepth(&self) -> u32 {
        match self.cfg.arrivals {
            Arrivals::Closed { iodepth, .. } | Arrivals::Open { iodepth, .. } => iodepth,
        }
    }

    pub(in crate::model) fn next_gap(&mut self) -> SimDuration {
        let Arrivals::Open { poisson, .. } = self.cfg.arrivals else {
            unreachable!("only open-loop jobs have arrival gaps")
        };
        let mean = self.gap_mean;
        if poisson {
            let u: f64 = self.arrival.random();
            SimDuration::from_secs_f64(-mean * (1.0 - u).ln())
        } else {
            SimDuration::from_secs_f64(mean)
        }
    }

    pub(in crate::model) fn make_bio<E>(&mut self, sched: &Scheduler<E>, job: u32) -> Bio {
        if let Some(io) = self.replay.as_mut().and_then(|r| r.take(sched.now())) {
            let dir = replay::dir_of(&io);
            let sync = dir == Dir::Read || io.sync;
            let mut bio = Bio::new(
                dir,
                sync,
                io.bytes,
                io.offset,
                Origin::Job(job),
                sched.now(),
            );
            bio.service_u = self.service.random();
            bio.crypt_u = self.crypt.random();
            return bio;
        }
        let bs = self.cfg.bs;
        let dir = match self.cfg.rw {
            RwKind::Read | RwKind::RandRead => Dir::Read,
            RwKind::Write | RwKind::RandWrite => Dir::Write,
            RwKind::RandRw => {
                let u: f64 = self.mix.random();
                if u * 100.0 < f64::from(self.cfg.rwmixread) {
                    Dir::Read
                } else {
                    Dir::Write
                }
            }
        };
        let blocks = (self.cfg.size / bs).max(1);
        let offset = match self.cfg.rw {
            RwKind::Read | RwKind::Write => {
                let o = self.next_seq;
                self.next_seq += bs;
                if self.next_seq + bs > self.cfg.offset + blocks * bs {
                    self.next_seq = self.cfg.offset;
                }
                o
            }
            _ => self.cfg.offset + self.offset.random_range(0..blocks) * bs,
        };
        let sync = dir == Dir::Read || self.cfg.sync_writes;
        let mut bio = Bio::new(dir, sync, bs as u32, offset, Origin::Job(job), sched.now());
        bio.service_u = self.service.random();
        bio.crypt_u = self.crypt.random();
        bio
    }
}

/// A buffered writer and its flusher.
#[derive(Debug)]
pub struct Writer {
    pub(in crate::model) cfg: BufferedWriter,
    /// The flusher's submitting context (an actor of the world).
    pub(in crate::model) ctx: ActorId,
    pub(in crate::model) dirty: u64,
    pub(in crate::model) writeback: u64,
    pub(in crate::model) next_offset: u64,
    pub(in crate::model) service: SimRng,
    pub(in crate::model) crypt: SimRng,
    /// The flusher is asleep in congestion_wait.
    pub(in crate::model) flusher_waiting: bool,
    /// The writer is throttled (since when), or running.
    pub(in crate::model) throttled_since: Option<crate::engine::SimTime>,
    /// A writer that reads a socket (`source`): bytes read and not yet written.
    pub(in crate::model) inbox: u64,
    /// It sleeps in the socket's read until a step's worth has arrived.
    pub(in crate::model) waiting_data: bool,
}

impl Writer {
    /// The writer named `name`.
    pub fn new(name: &str, cfg: &BufferedWriter, ctx: ActorId, streams: &RngStreams) -> Writer {
        Writer {
            cfg: cfg.clone(),
            ctx,
            dirty: 0,
            writeback: 0,
            next_offset: cfg.offset,
            service: streams.stream(&format!("{name}/service")),
            crypt: streams.stream(&format!("{name}/crypt")),
            flusher_waiting: false,
            throttled_since: None,
            inbox: 0,
            waiting_data: false,
        }
    }

    /// Dirty bytes not yet under writeback.
    pub fn dirty_bytes(&self) -> u64 {
        self.dirty
    }

    /// Bytes under writeback, by the writer's own account.
    pub fn under_writeback(&self) -> u64 {
        self.writeback
    }

    pub(in crate::model) fn step_gap(&self) -> SimDuration {
        SimDuration::from_secs_f64(DIRTY_STEP as f64 / self.cfg.rate)
    }
}

/// fio's IO-depth bucket of a submission made with `depth` I/Os in flight (1, 2, 4, … ≥64).
pub fn depth_bucket(depth: u32) -> usize {
    (depth.max(1).ilog2() as usize).min(6)
}

pub mod app;
pub mod replay;
pub mod serve;
pub use app::{CpuProc, cpuio_procs};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::base::config::Distribution;
    use crate::model::base::sampler::checks::*;

    /// Copy 0 of an open-loop random-read job at `rate_per_s`, Poisson or constant.
    fn open_job(rate_per_s: f64, poisson: bool) -> Job {
        let cfg = FioJob {
            rw: RwKind::RandRead,
            rwmixread: 100,
            bs: 4096,
            size: 1 << 30,
            offset: 0,
            arrivals: Arrivals::Open {
                rate: rate_per_s,
                poisson,
                iodepth: 1,
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
        };
        Job::new(
            "arrivals",
            0,
            &cfg,
            ActorId(0),
            &RngStreams::new(20_090_601, 0),
        )
    }

    /// Poisson arrivals: gaps are exponential with mean 1/rate (moments and KS), and the
    /// counts in windows of 10 mean gaps follow Poisson(10) (chi-square), which also tests that
    /// the gaps are independent, not only their marginal law.
    #[test]
    fn poisson_arrivals_have_exponential_gaps_and_poisson_counts() {
        let rate = 2_000.0;
        let mut job = open_job(rate, true);
        let gaps_ns: Vec<u64> = (0..N).map(|_| job.next_gap().as_ns()).collect();
        let xs: Vec<f64> = gaps_ns.iter().map(|&g| g as f64 * 1e-9).collect();
        let d = Distribution::Exponential {
            mean: SimDuration::from_us(500),
        };
        let (m, v, mu4) = population_moments(&d);
        assert_moments("poisson gaps", &xs, m, v, mu4);
        assert_ks("poisson gaps", &xs, |x| cdf(&d, x));

        // Counts per 5 ms window (λw = 10) over the whole stream's span.
        let lambda_w: f64 = 10.0;
        let window_ns = 5_000_000;
        let mut counts_per_window: Vec<u64> = Vec::new();
        let mut t = 0u64;
        for g in gaps_ns {
            t += g;
            let w = (t / window_ns) as usize;
            if w >= counts_per_window.len() {
                counts_per_window.resize(w + 1, 0);
            }
            counts_per_window[w] += 1;
        }
        counts_per_window.pop(); // the last window is cut short
        let windows = counts_per_window.len() as f64;
        // Cells 0..=4 pooled, 5 ..= 17 single, 18+ pooled: each expects at least 5.
        let (low, high) = (4usize, 18usize);
        let mut pmf = vec![(-lambda_w).exp()];
        for k in 1..high {
            let prev = pmf[k - 1];
            pmf.push(prev * lambda_w / k as f64);
        }
        let mut expected = vec![pmf[..=low].iter().sum::<f64>() * windows];
        expected.extend(pmf[low + 1..high].iter().map(|p| p * windows));
        expected.push((1.0 - pmf.iter().sum::<f64>()) * windows);
        let mut observed = vec![0u64; expected.len()];
        for &c in &counts_per_window {
            let c = c as usize;
            let cell = if c <= low {
                0
            } else {
                (c - low).min(high - low)
            };
            observed[cell] += 1;
        }
        assert_chi_square("poisson window counts", &observed, &expected);
    }

    /// Constant arrivals: every gap is exactly 1/rate, so the k-th arrival is at exactly k gaps.
    #[test]
    fn constant_arrivals_are_exactly_periodic() {
        let mut job = open_job(3_000.0, false);
        let gap = SimDuration::from_secs_f64(1.0 / 3_000.0);
        assert_eq!(gap.as_ns(), 333_333);
        let mut t = SimDuration::ZERO;
        for _ in 0..N {
            let g = job.next_gap();
            assert_eq!(g, gap);
            t += g;
        }
        assert_eq!(t.as_ns(), 333_333 * N as u64);
    }

    #[test]
    fn depth_buckets_follow_fio() {
        let got: Vec<usize> = [1, 2, 3, 4, 7, 8, 16, 31, 32, 63, 64, 1000]
            .iter()
            .map(|&d| depth_bucket(d))
            .collect();
        assert_eq!(got, vec![0, 1, 1, 2, 2, 3, 4, 4, 5, 5, 6, 6]);
    }
}
