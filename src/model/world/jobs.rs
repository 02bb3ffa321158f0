//! The world's side of `workload/mod.rs`: fio jobs issuing and completing bios, buffered writers
//! dirtying pages and their flushers writing them back.

use crate::engine::{Scheduler, SimDuration};
use crate::model::base::bio::{Bio, BioId, Dir, Origin};
use crate::model::base::config::{Arrivals, RwKind};
use crate::model::base::ids::ActorId;
use crate::model::base::obs::Stage;
use crate::model::base::obs::{FiniteJobObs, IssueRecord};
use crate::model::mm::cwait::CwWho;
use crate::model::mm::reclaim::ReclaimWho;
use crate::model::workload::*;
use crate::model::world::World;
use crate::model::world::event::Event;
use rand::RngExt;

impl World {
    pub(in crate::model) fn start_workloads(&mut self, sched: &mut Scheduler<Event>) {
        for j in 0..self.jobs.len() as u32 {
            let delay = self.jobs[j as usize].start;
            if self.jobs[j as usize].fio_think().is_some() {
                self.start_thinking_job(j, delay, sched);
                continue;
            }
            if self.jobs[j as usize].replay.is_some() {
                self.replay_next(j, sched);
                continue;
            }
            match self.jobs[j as usize].cfg.arrivals {
                Arrivals::Closed { iodepth, .. } if delay.is_zero() => {
                    for _ in 0..iodepth {
                        if self.jobs[j as usize].exhausted() {
                            break;
                        }
                        self.job_submit(j, sched);
                    }
                }
                Arrivals::Closed { iodepth, .. } => {
                    // Each slot of the loop starts with an issue at the start delay.
                    for _ in 0..iodepth {
                        sched.schedule_in(
                            delay,
                            Event::Workload(WorkloadEvent::JobIssue { job: j }),
                        );
                    }
                }
                Arrivals::Open { .. } => {
                    let gap = self.jobs[j as usize].next_gap();
                    sched.schedule_in(
                        delay + gap,
                        Event::Workload(WorkloadEvent::JobIssue { job: j }),
                    );
                }
            }
        }
        for w in 0..self.writers.len() as u32 {
            sched.schedule_in(
                SimDuration::ZERO,
                Event::Workload(WorkloadEvent::WriterTick { writer: w }),
            );
        }
        self.start_cpuio(sched);
    }

    /// A job's issue event: an open-loop arrival or the end of a think time.
    pub(in crate::model) fn job_issue(&mut self, j: u32, sched: &mut Scheduler<Event>) {
        let job = &mut self.jobs[j as usize];
        if let Some(r) = &mut job.replay {
            r.pending = false;
            self.replay_issue(j, sched);
            return;
        }
        if job.exhausted() {
            // A finite job that has issued all its work: no more arrivals, no more issues.
            return;
        }
        if let Arrivals::Open { .. } = job.cfg.arrivals {
            let gap = job.next_gap();
            sched.schedule_in(gap, Event::Workload(WorkloadEvent::JobIssue { job: j }));
            if job.inflight >= job.iodepth() {
                // fio's rate option cannot exceed iodepth either: the arrival is dropped.
                let dir = if job.cfg.rw == RwKind::Write || job.cfg.rw == RwKind::RandWrite {
                    Dir::Write
                } else {
                    Dir::Read
                };
                self.rec.dropped(dir);
                return;
            }
        }
        self.job_submit(j, sched);
    }

    pub(in crate::model) fn job_submit(&mut self, j: u32, sched: &mut Scheduler<Event>) {
        let job = &mut self.jobs[j as usize];
        let bio = job.make_bio(sched, j);
        job.inflight += 1;
        job.issued_ios += 1;
        job.issued_bytes += u64::from(bio.bytes);
        let depth = job.inflight;
        let ctx = job.ctx;
        let rec = IssueRecord {
            at: bio.issued,
            dir: bio.dir,
            offset: bio.offset,
            bytes: bio.bytes,
        };
        self.rec.job_issued(j as usize, depth, rec, sched.now());
        let mut bio = bio;
        bio.measured = self.rec.is_measured(sched.now());
        let id = self.admit(bio);
        if self.sc.crypt.submit_cost.is_zero() {
            self.job_enter(id, ctx, sched);
            return;
        }
        // The process first runs its submission path on a CPU (actors.rs, `Step::Submit`).
        self.enter(id, Stage::Other, sched.now());
        self.actors[ctx.index()].syscalls.push_back(id);
        self.kick(ctx, sched);
    }

    /// A job's admitted bio enters the kernel's I/O path from its context `ctx`: a direct I/O
    /// goes to dm-crypt or the block layer, a buffered read first allocates its page-cache
    /// pages, maybe in direct reclaim.
    pub(in crate::model) fn job_enter(
        &mut self,
        id: BioId,
        ctx: ActorId,
        sched: &mut Scheduler<Event>,
    ) {
        let Origin::Job(j) = self.bios[id].origin else {
            unreachable!("only a job's bio takes the submission path")
        };
        // The process has just run its submission path on a CPU (or had none to run).
        let cost = self.sc.crypt.submit_cost;
        self.app_cpu(app::App::Job(j), cost, sched.now());
        let direct = self.jobs[j as usize].cfg.direct;
        let buffered = self.memory.is_zone() && !direct && self.bios[id].dir == Dir::Read;
        if !buffered {
            self.route(id, ctx, sched);
            return;
        }
        let pages = crate::model::mm::memory::pages_for(self.bios[id].bytes);
        self.enter(id, Stage::DirectReclaim, sched.now());
        let who = ReclaimWho::Read { bio: id, ctx };
        if self.alloc_cache_pages(who, pages, sched) {
            self.bios[id].cache_pages = pages;
            self.route(id, ctx, sched);
        }
    }

    /// A job's bio of `bytes` completed: the closed loop goes on, or a finite job that has
    /// issued all its work is done once nothing of it is in flight.
    pub(in crate::model) fn job_completed(
        &mut self,
        j: u32,
        bytes: u32,
        sched: &mut Scheduler<Event>,
    ) {
        let job = &mut self.jobs[j as usize];
        job.inflight -= 1;
        job.done_ios += 1;
        job.done_bytes += u64::from(bytes);
        if job.exhausted() {
            if job.inflight == 0 && job.finished.is_none() {
                job.finished = Some(sched.now());
                self.finite_job_done(sched);
            }
            return;
        }
        if job.replay.is_some() {
            self.replay_next(j, sched);
            return;
        }
        if job.fio_think().is_some() {
            self.think_completed(j, sched);
            return;
        }
        if let Arrivals::Closed { think, .. } = &job.cfg.arrivals {
            match think {
                Some(d) => {
                    let u: f64 = job.think.random();
                    let t = d.quantile(u);
                    sched.schedule_in(t, Event::Workload(WorkloadEvent::JobIssue { job: j }));
                }
                None => self.job_submit(j, sched),
            }
        }
    }

    /// A replaying job issues every I/O that is due and has a slot, then books its next look.
    fn replay_issue(&mut self, j: u32, sched: &mut Scheduler<Event>) {
        loop {
            let job = &self.jobs[j as usize];
            let start = crate::engine::SimTime::ZERO + job.start;
            let due = job.replay.as_ref().and_then(|r| r.due(start));
            if job.inflight >= job.iodepth() || due.is_none_or(|t| t > sched.now()) {
                break;
            }
            self.job_submit(j, sched);
        }
        self.replay_next(j, sched);
    }

    /// Books a replaying job's next issue event, unless one is booked, the trace is over or
    /// every slot is taken (a completion books it then).
    fn replay_next(&mut self, j: u32, sched: &mut Scheduler<Event>) {
        let job = &mut self.jobs[j as usize];
        let start = crate::engine::SimTime::ZERO + job.start;
        let full = job.inflight >= job.iodepth();
        let Some(r) = &mut job.replay else {
            return;
        };
        let Some(due) = r.due(start) else {
            return;
        };
        if r.pending || full {
            return;
        }
        r.pending = true;
        let at = due.max(sched.now());
        sched.schedule_in(
            at.since(sched.now()),
            Event::Workload(WorkloadEvent::JobIssue { job: j }),
        );
    }

    /// A finite job has just completed its last I/O: when no finite job is left running, the
    /// run ends here.
    pub(in crate::model) fn finite_job_done(&mut self, sched: &mut Scheduler<Event>) {
        if self.all_finite_jobs_done() {
            sched.request_stop();
        }
    }

    /// Whether the world has finite jobs and every one of them is done.
    pub(in crate::model) fn all_finite_jobs_done(&self) -> bool {
        let procs = self.procs.len();
        (procs > 0 || self.jobs.iter().any(Job::is_finite))
            && self
                .jobs
                .iter()
                .all(|job| !job.is_finite() || job.finished.is_some())
            && self.all_processes_done()
    }

    /// Every finite job's observations, in job order, then the fake-gitk processes'.
    pub(in crate::model) fn finite_observations(&self) -> Vec<FiniteJobObs> {
        let mut out: Vec<FiniteJobObs> = self.jobs.iter().filter_map(Job::finite_obs).collect();
        out.extend(
            self.procs
                .iter()
                .map(crate::model::workload::gitk::Gitk::finite_obs),
        );
        out
    }

    /// The writer's next step: throttle in balance_dirty_pages, or dirty another 64 KiB.
    pub(in crate::model) fn writer_tick(&mut self, w: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let wr = &mut self.writers[w as usize];
        if wr.dirty + wr.writeback >= wr.cfg.dirty_limit_bytes {
            wr.throttled_since.get_or_insert(now);
            let timeout = self.sc.kernel.hz_div(10);
            let class =
                crate::model::base::ids::QueueClass::from_cwait(self.sc.kernel.vm.cwait_class);
            self.congestion_wait(CwWho::Writer(w), class, timeout, sched);
            self.flusher_run(w, sched);
            return;
        }
        if let Some(since) = wr.throttled_since.take() {
            self.rec.throttle_ended(since, now);
        }
        if self.writer_needs_data(w, sched) {
            return;
        }
        if self.memory.is_zone() {
            // write() copies into freshly allocated page-cache pages.
            let pages = (DIRTY_STEP / crate::model::mm::memory::PAGE_SIZE) as u32;
            if !self.alloc_cache_pages(ReclaimWho::Writer(w), pages, sched) {
                return;
            }
            self.memory.transition(
                u64::from(pages),
                crate::model::mm::memory::PageState::Filling,
                crate::model::mm::memory::PageState::Dirty,
            );
        }
        self.writer_dirtied(w, sched);
    }

    /// The writer's step is in the page cache: count it and schedule the next.
    pub(in crate::model) fn writer_dirtied(&mut self, w: u32, sched: &mut Scheduler<Event>) {
        let wr = &mut self.writers[w as usize];
        wr.dirty += DIRTY_STEP;
        self.rec.dirtied(DIRTY_STEP);
        // A socket's reader goes straight back to its read; the others keep their rate.
        let gap = match wr.cfg.source {
            Some(_) => {
                wr.inbox -= DIRTY_STEP;
                SimDuration::ZERO
            }
            None => wr.step_gap(),
        };
        sched.schedule_in(
            gap,
            Event::Workload(WorkloadEvent::WriterTick { writer: w }),
        );
        self.flusher_run(w, sched);
    }

    /// The flusher writes back whole chunks while the disk is not write-congested.
    pub(in crate::model) fn flusher_run(&mut self, w: u32, sched: &mut Scheduler<Event>) {
        loop {
            let wr = &self.writers[w as usize];
            if wr.flusher_waiting {
                // Only a congestion_wait ending may resume a sleeping flusher.
                return;
            }
            // Whole chunks only, and only while over the background threshold.
            if wr.dirty < wr.cfg.chunk || wr.dirty < wr.cfg.background_bytes {
                return;
            }
            if self.context_busy(wr.ctx) {
                // The flusher's own context is still submitting (blocked on a pool or
                // encrypting inline); it runs the flusher again when it is free.
                return;
            }
            if self.write_congested() {
                self.writers[w as usize].flusher_waiting = true;
                let timeout = self.sc.kernel.hz_div(10);
                let class =
                    crate::model::base::ids::QueueClass::from_cwait(self.sc.kernel.vm.cwait_class);
                self.congestion_wait(CwWho::Flusher(w), class, timeout, sched);
                return;
            }
            let wr = &self.writers[w as usize];
            let n = wr.cfg.chunk.min(wr.dirty);
            self.writer_write(w, n, None, sched);
        }
    }

    /// Takes `n` dirty bytes of writer `w` to writeback as one async bio through dm-crypt (the
    /// flusher's chunks, with `cic` `None`, and reclaim's pageout, charged to the reclaimer's
    /// io context `cic`).
    pub(in crate::model) fn writer_write(
        &mut self,
        w: u32,
        n: u64,
        cic: Option<ActorId>,
        sched: &mut Scheduler<Event>,
    ) {
        {
            let wr = &mut self.writers[w as usize];
            wr.dirty -= n;
            wr.writeback += n;
            let offset = wr.next_offset;
            wr.next_offset += n;
            if wr.next_offset + wr.cfg.chunk > wr.cfg.offset + wr.cfg.size {
                wr.next_offset = wr.cfg.offset;
            }
            let mut bio = Bio::new(
                Dir::Write,
                false,
                n as u32,
                offset,
                Origin::Writeback(w),
                sched.now(),
            );
            bio.service_u = wr.service.random();
            bio.crypt_u = wr.crypt.random();
            bio.cic = cic;
            let ctx = wr.ctx;
            self.memory.transition(
                n / crate::model::mm::memory::PAGE_SIZE,
                crate::model::mm::memory::PageState::Dirty,
                crate::model::mm::memory::PageState::Writeback,
            );
            self.issue(bio, ctx, sched);
        }
    }

    /// Called when a flusher's congestion_wait ends.
    pub(in crate::model) fn flusher_woken(&mut self, w: u32) {
        self.writers[w as usize].flusher_waiting = false;
    }

    pub(in crate::model) fn writeback_completed(
        &mut self,
        w: u32,
        bytes: u32,
        _sched: &mut Scheduler<Event>,
    ) {
        let wr = &mut self.writers[w as usize];
        wr.writeback -= u64::from(bytes);
        self.rec.written_back(u64::from(bytes));
    }
}
