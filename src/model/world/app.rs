//! The world's side of `workload/app.rs`: an application job's phases (think time, CPU work,
//! I/O) started on the CPUs and the block path.

use crate::engine::{Scheduler, SimDuration, SimTime};
use crate::model::base::ids::TaskOwner;
use crate::model::base::obs::AppCpuObs;
use crate::model::workload::WorkloadEvent;
use crate::model::workload::app::*;
use crate::model::world::World;
use crate::model::world::event::Event;

impl World {
    /// Counts `work` of application CPU time finished at `now` for `who`, if measured.
    pub(super) fn app_cpu(&mut self, who: App, work: SimDuration, now: SimTime) {
        if work.is_zero() || !self.rec.is_measured(now) {
            return;
        }
        match who {
            App::Job(j) => self.jobs[j as usize].cpu_ns += work.as_ns(),
            App::CpuIo(p) => self.cpuio[p as usize].cpu_ns += work.as_ns(),
        }
    }

    /// Every application process's CPU time: the fio job copies, then the `cpuio` copies.
    pub(in crate::model) fn app_cpu_observations(&self) -> Vec<AppCpuObs> {
        // A copy's label is `<workload>.<copy>` when the workload has several.
        let workload = |label: &str, copies: u32| match label.rsplit_once('.') {
            Some((w, _)) if copies > 1 => w.to_string(),
            _ => label.to_string(),
        };
        let jobs = self.jobs.iter().map(|j| AppCpuObs {
            name: j.label.clone(),
            workload: workload(&j.label, j.cfg.numjobs),
            cpuio: false,
            cpu_ns: j.cpu_ns,
        });
        let procs = self.cpuio.iter().map(|p| AppCpuObs {
            name: p.label.clone(),
            workload: workload(&p.label, p.cfg.numjobs),
            cpuio: true,
            cpu_ns: p.cpu_ns,
        });
        jobs.chain(procs).collect()
    }

    /// A job with fio's think time starts at `delay`: it fills its queue then, or at once.
    pub(super) fn start_thinking_job(
        &mut self,
        j: u32,
        delay: SimDuration,
        sched: &mut Scheduler<Event>,
    ) {
        if delay.is_zero() {
            self.job_fill(j, sched);
        } else {
            let ev = Event::Workload(WorkloadEvent::JobResume { job: j });
            sched.schedule_in(delay, ev);
        }
    }

    /// fio's I/O loop for a job with think time: issue until `iodepth` are in flight, the
    /// job's work is done, or (counting issues) a pause is due.
    fn job_fill(&mut self, j: u32, sched: &mut Scheduler<Event>) {
        loop {
            let job = &self.jobs[j as usize];
            let Some(tt) = job.fio_think() else { return };
            if job.phase != Phase::Running || job.inflight >= job.iodepth() || job.exhausted() {
                return;
            }
            self.job_submit(j, sched);
            if tt.on_issue && self.jobs[j as usize].think_due(&tt) {
                self.think_begin(j, sched);
                return;
            }
        }
    }

    /// The job's start, or the end of its pause: it issues again.
    pub(in crate::model) fn job_resume(&mut self, j: u32, sched: &mut Scheduler<Event>) {
        self.jobs[j as usize].phase = Phase::Running;
        self.job_fill(j, sched);
    }

    /// A completion of a job with think time (its in-flight count already lowered).
    pub(super) fn think_completed(&mut self, j: u32, sched: &mut Scheduler<Event>) {
        let job = &self.jobs[j as usize];
        let Some(tt) = job.fio_think() else { return };
        match job.phase {
            Phase::Quiesce if job.inflight == 0 => self.think_start(j, sched),
            Phase::Running if !tt.on_issue && job.think_due(&tt) => self.think_begin(j, sched),
            Phase::Running => self.job_fill(j, sched),
            Phase::Quiesce | Phase::Spin | Phase::Sleep => {}
        }
    }

    /// A pause is due: remember the counter (fio reads it before quiescing), then wait for
    /// the I/Os in flight.
    fn think_begin(&mut self, j: u32, sched: &mut Scheduler<Event>) {
        let job = &mut self.jobs[j as usize];
        let Some(tt) = job.fio_think() else { return };
        job.last_think_blocks = job.think_counter(&tt);
        job.phase = Phase::Quiesce;
        if job.inflight == 0 {
            self.think_start(j, sched);
        }
    }

    /// Nothing in flight: spin, or sleep the whole think time.
    fn think_start(&mut self, j: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let job = &mut self.jobs[j as usize];
        let Some(tt) = job.fio_think() else { return };
        if tt.spin.is_zero() {
            self.think_sleep(j, tt.time, sched);
            return;
        }
        job.phase = Phase::Spin;
        job.spin_started = now;
        self.start_cpu(TaskOwner::Spin(j), tt.spin, sched);
    }

    /// The spin is done: sleep what is left of the think time (fio's `thinktime - total`,
    /// `total` being the wall time the spin took).
    pub(in crate::model) fn spin_done(&mut self, j: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let Some(tt) = self.jobs[j as usize].fio_think() else {
            return;
        };
        self.app_cpu(App::Job(j), tt.spin, now);
        let took = now.since(self.jobs[j as usize].spin_started);
        let left = tt.time.saturating_sub(took);
        self.think_sleep(j, left, sched);
    }

    /// Sleeps `d` (none when zero), then issues again.
    fn think_sleep(&mut self, j: u32, d: SimDuration, sched: &mut Scheduler<Event>) {
        if d.is_zero() {
            self.job_resume(j, sched);
            return;
        }
        self.jobs[j as usize].phase = Phase::Sleep;
        sched.schedule_in(d, Event::Workload(WorkloadEvent::JobResume { job: j }));
    }

    /// Schedules each `cpuio` process's first chunk at its start.
    pub(super) fn start_cpuio(&mut self, sched: &mut Scheduler<Event>) {
        for p in 0..self.cpuio.len() as u32 {
            let start = self.cpuio[p as usize].start;
            let ev = Event::Workload(WorkloadEvent::CpuIoRun { process: p });
            sched.schedule_in(start, ev);
        }
    }

    /// A `cpuio` process burns its next chunk.
    pub(in crate::model) fn cpuio_run(&mut self, p: u32, sched: &mut Scheduler<Event>) {
        let chunk = self.cpuio[p as usize].cfg.cpuchunks;
        self.start_cpu(TaskOwner::CpuIo(p), chunk, sched);
    }

    /// A chunk is done: count it, then sleep (or burn the next one at once at 100 %).
    pub(in crate::model) fn cpuio_chunk_done(&mut self, p: u32, sched: &mut Scheduler<Event>) {
        let cfg = &self.cpuio[p as usize].cfg;
        let (chunk, sleep) = (cfg.cpuchunks, cfg.sleep());
        self.app_cpu(App::CpuIo(p), chunk, sched.now());
        if sleep.is_zero() {
            self.cpuio_run(p, sched);
        } else {
            let ev = Event::Workload(WorkloadEvent::CpuIoRun { process: p });
            sched.schedule_in(sleep, ev);
        }
    }
}
