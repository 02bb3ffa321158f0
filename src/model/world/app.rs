//! The world's side of `workload/app.rs`: an application job's phases (think time, CPU work,
//! I/O) started on the CPUs and the block path.

use crate::engine::{Scheduler, SimDuration, SimTime};
use crate::model::base::ids::TaskOwner;
use crate::model::base::obs::AppCpuObs;
use crate::model::workload::WorkloadEvent;
use crate::model::workload::app::*;
use crate::model::workload::serve::LinkWake;
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
        if self.jobs[j as usize].cfg.serve.is_some() {
            // A daemon's thread starts by receiving its first request.
            let ev = Event::Workload(WorkloadEvent::ServeStep { job: j });
            sched.schedule_in(delay, ev);
        } else if delay.is_zero() {
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
            Phase::Quiesce | Phase::Spin | Phase::Sleep | Phase::Receive | Phase::Replicate => {}
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
        if self.jobs[j as usize].cfg.serve.is_some() {
            // The request's writes are all done: the thread takes the next request.
            self.serve_receive(j, sched);
            return;
        }
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
        if let Some(serve) = self.jobs[j as usize].cfg.serve {
            self.app_cpu(App::Job(j), serve.cpu(), now);
            self.serve_replicate(j, sched);
            return;
        }
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

    /// A serving job's step is over: after receiving, it checksums; after the replicas'
    /// answers, it writes; at its start, it receives its first request.
    pub(in crate::model) fn serve_step(&mut self, j: u32, sched: &mut Scheduler<Event>) {
        match self.jobs[j as usize].phase {
            Phase::Receive => {
                let job = &mut self.jobs[j as usize];
                let Some(serve) = job.cfg.serve else { return };
                job.phase = Phase::Spin;
                job.spin_started = sched.now();
                self.start_cpu(TaskOwner::Spin(j), serve.cpu(), sched);
            }
            Phase::Replicate => self.job_resume(j, sched),
            _ => self.serve_receive(j, sched),
        }
    }

    /// A serving job receives its next request over the node's inbound link.
    fn serve_receive(&mut self, j: u32, sched: &mut Scheduler<Event>) {
        let job = &mut self.jobs[j as usize];
        let Some(serve) = job.cfg.serve else { return };
        job.phase = Phase::Receive;
        let wake = self.links.inbound.start(sched.now(), j, serve.bytes);
        schedule_link(false, wake, sched);
    }

    /// A serving job sends its request to each replica over the outbound link (one transfer
    /// of all the copies).
    fn serve_replicate(&mut self, j: u32, sched: &mut Scheduler<Event>) {
        let job = &mut self.jobs[j as usize];
        let Some(serve) = job.cfg.serve else { return };
        job.phase = Phase::Replicate;
        let bytes = serve.bytes * u64::from(serve.replicas);
        let wake = self.links.outbound.start(sched.now(), j, bytes);
        schedule_link(true, wake, sched);
    }

    /// A link's scheduled completion fires: received requests go on to their checksum; a
    /// request whose copies have left waits `ack` for the replicas' answers.
    pub(in crate::model) fn link_done(
        &mut self,
        outbound: bool,
        version: u64,
        sched: &mut Scheduler<Event>,
    ) {
        let now = sched.now();
        let link = if outbound {
            &mut self.links.outbound
        } else {
            &mut self.links.inbound
        };
        let (done, wake) = link.complete(now, version);
        schedule_link(outbound, wake, sched);
        for j in done {
            if outbound {
                let ack = self.jobs[j as usize]
                    .cfg
                    .serve
                    .map_or(SimDuration::ZERO, |s| s.ack);
                let ev = Event::Workload(WorkloadEvent::ServeStep { job: j });
                sched.schedule_in(ack, ev);
            } else {
                self.serve_step(j, sched);
            }
        }
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

/// Schedules a link's next completion, if it has one.
fn schedule_link(outbound: bool, wake: Option<LinkWake>, sched: &mut Scheduler<Event>) {
    if let Some(w) = wake {
        let ev = WorkloadEvent::LinkDone {
            outbound,
            version: w.version,
        };
        sched.schedule_at(w.at, Event::Workload(ev));
    }
}

#[cfg(test)]
mod tests {
    use crate::model::crypt::policy;

    /// One serving thread, by hand: 8 KiB requests on an 8.192 MB/s link (1 ms in), a checksum
    /// at the same rate (1 ms of CPU), two replicas (16 KiB out: 2 ms) answering 1 ms later,
    /// then two 4 KiB writes one after the other on a 100 µs disk: 5.2 ms a request. In one
    /// second: 192 requests written whole (the 193rd's checksum ends at 1000.4 ms), so 384
    /// writes and 192 ms of checksum.
    #[test]
    fn a_serving_thread_receives_checksums_replicates_then_writes() {
        let yaml = "
duration: 1s
cpus: 2
device: { kind: generic, service: 100us }
block: { elevator: fifo }
policies: [none]
workloads:
  - kind: fio
    rw: randwrite
    bs: 4k
    direct: true
    serve: { bytes: 8k, link: 8192000B/s, checksum_rate: 8192000B/s, replicas: 2, ack: 1ms }
";
        let sc = crate::scenario::load_str("test.yaml", yaml).expect("valid test scenario");
        let r = crate::model::run_policy(&sc, policy::find("none").expect("registered"));
        assert!(r.violations.is_empty(), "{:?}", r.violations);
        assert_eq!(r.obs.dirs[1].ios, 384);
        let cpu: u64 = r.obs.app_cpu.iter().map(|a| a.cpu_ns).sum();
        assert_eq!(cpu, 192_000_000);
    }

    /// Two threads receiving at once share the link: each request takes 2 ms to arrive
    /// instead of 1, and the two checksums start together.
    #[test]
    fn serving_threads_share_the_link() {
        let yaml = "
duration: 1s
cpus: 2
device: { kind: generic, service: 100us, channels: 2 }
block: { elevator: fifo }
policies: [none]
workloads:
  - kind: fio
    rw: randwrite
    bs: 8k
    direct: true
    numjobs: 2
    serve: { bytes: 8k, link: 8192000B/s, checksum_rate: 8192000B/s, replicas: 1, ack: 0ns }
";
        // Per request: 2 ms in (shared), 1 ms checksum (a CPU each), 2 ms out (shared), one
        // 100 µs write each in parallel: 5.1 ms; 196 requests each in 1 s (the 197th's
        // checksum ends at 999.6 + 3 ms), 392 writes in all.
        let sc = crate::scenario::load_str("test.yaml", yaml).expect("valid test scenario");
        let r = crate::model::run_policy(&sc, policy::find("none").expect("registered"));
        assert!(r.violations.is_empty(), "{:?}", r.violations);
        assert_eq!(r.obs.dirs[1].ios, 392);
    }
}
