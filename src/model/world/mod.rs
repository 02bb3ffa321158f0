//! The assembled dm-crypt world for one policy: it owns the components and routes bios between
//! them, as `drivers/md/dm-crypt.c` and the block layer hand a bio from one kernel subsystem to
//! the next (`docs/model/README.md` §3 follows one read through it).
//!
//! ```text
//!  fio jobs ──issue──► dm-crypt map ──reads──► kcryptd_io ──clone──┐
//!  flusher  ──write──►      │                                      ▼
//!                           └─writes─► crypt queue(s) ─► kcryptd ─► request pool (SYNC/ASYNC)
//!                                        ▲      (policy)            │ plug, elevator
//!                     read completions ──┘                          ▼
//!                                                                 device
//! ```
//!
//! The components live in the model's subsystem folders: the threads
//! ([`crate::model::crypt::threads`]) and the async crypto engine ([`crate::model::crypt::engine`]),
//! the CPUs ([`Cpus`]), the [`RequestQueue`], the [`Device`], the workloads
//! ([`crate::model::workload`]), `congestion_wait` ([`crate::model::mm::cwait`]), the memory model
//! ([`crate::model::mm`]: unlimited, or a zone with kswapd, direct reclaim, GFP_ATOMIC and the
//! mempool), and the [`Recorder`], which owns the statistics and the warm-up gate. Each
//! component's events are a variant of [`Event`].
//!
//! This folder is the only place that knows them all. This file builds them, dispatches events
//! and moves bios from one to the next; `cast.rs` assembles the thread table; each other file is
//! the world's side of the subsystem file of the same name (`kswapd.rs` of `mm/kswapd.rs`,
//! `jobs.rs` of `workload/mod.rs`, `trace_feed.rs` of `observe/trace.rs`, `checks.rs` of
//! `observe/invariants.rs`): what that component asks the world to schedule, start on a CPU or
//! route.

mod app;
mod cast;
mod checks;
pub mod event;
mod gitk;
mod jobs;
mod kswapd;
mod mempool;
mod net;
mod pressure;
mod reclaim;
mod swap;
mod table;
mod threads;
mod timeline;
mod trace_feed;

use crate::engine::{EventId, Model, RngStreams, Scheduler, SimDuration, SimTime};
use crate::model::base::bio::{Bio, BioId, BioSlab, Dir, Origin};
use crate::model::base::config::{CryptoEngine, QueueMode, Scenario};
use crate::model::base::ids::{ActorId, CpuContext, QueueClass, TaskOwner};
use crate::model::base::obs::{RunEnd, RunObs, Stage};
use crate::model::block::device::{Device, DeviceEvent, DeviceWake};
use crate::model::block::queue::{BlockEvent, RequestQueue};
use crate::model::cpu::sched::{Cpus, Done};
use crate::model::crypt::engine::AsyncEngine;
use crate::model::crypt::policy::{CryptOp, CryptQueuePolicy, DmFlags, PolicyInfo, Topology, Work};
use crate::model::crypt::threads::{Actor, ActorKind, ActorState};
use crate::model::mm::Memory;
use crate::model::mm::cwait::{CongestionWaits, CwEvent, CwWho};
use crate::model::mm::memory::Allocator;
use crate::model::observe::recorder::{RecEvent, Recorder};
use crate::model::workload::gitk::Gitk;
use crate::model::workload::{Job, WorkloadEvent, Writer};
use cast::cast;

pub use crate::model::world::event::Event;
pub(in crate::model) use cast::mason_io;

/// One policy's world.
#[derive(Debug)]
pub struct World {
    sc: Scenario,
    info: &'static PolicyInfo,
    policy: Box<dyn CryptQueuePolicy>,
    /// The dm-crypt table's flags in force on this kernel (the workqueue layout).
    table: crate::model::crypt::table::Table,
    bios: BioSlab,
    cpu: Cpus<TaskOwner>,
    cpu_event: Option<EventId>,
    device: Device,
    queue: RequestQueue,
    actors: Vec<Actor>,
    io_actor: ActorId,
    crypt_actors: Vec<ActorId>,
    /// Mason's kcryptd_async_io, when the io queues are `mason-v3`.
    async_io_actor: Option<ActorId>,
    /// 5.8's `dmcrypt_write` thread, under the `Workqueue` topology.
    write_actor: Option<ActorId>,
    engine: Option<AsyncEngine>,
    /// The memory model: unlimited, or a zone.
    memory: Memory,
    /// The fake-gitk processes, in workload order (none without a memory model).
    procs: Vec<Gitk>,
    /// The TCP receive paths, in `memory.atomic` order (none without a memory model).
    rx: Vec<crate::model::net::rx::RxPath>,
    jobs: Vec<Job>,
    writers: Vec<Writer>,
    /// The fio `cpuio` processes (application CPU load), in workload order.
    cpuio: Vec<crate::model::workload::CpuProc>,
    /// The node's network link each way, for serving jobs (`serve:`).
    links: crate::model::workload::serve::Links,
    cw: CongestionWaits,
    /// Every statistic, behind the warm-up gate.
    rec: Recorder,
    scratch: Vec<Done<TaskOwner>>,
    /// Processes a completed read wakes, of shared log pages or from swap (kept for its
    /// allocation).
    woken: Vec<u32>,
    /// The runs of pages a fake-gitk log read or fault must fetch (kept for its allocation;
    /// taken while in use, so a nested use allocates its own).
    page_runs: Vec<(u32, u32)>,
    /// Pieces of split bios in the slab (not requests of their own: the system's books
    /// subtract them).
    pieces_live: u64,
    /// Each CPU's busy time when the warm-up ended (per-CPU machine only).
    cpu_busy_at_warmup: Vec<u128>,
    /// [`Machine::idle_beside_waiting_ns`](crate::model::cpu::sched::Machine::idle_beside_waiting_ns) at
    /// the end of the warm-up.
    idle_beside_waiting_at_warmup: u128,
    /// Each context's CPU time when the warm-up ended.
    cpu_at_warmup: [u128; CpuContext::COUNT],
    /// The timeline, when a run asks for one.
    timeline: Option<Box<crate::model::observe::timeline::Recorder>>,
    /// The trace of a window, when a run asks for one.
    tracer: Option<Box<crate::model::observe::trace::Tracer>>,
}

impl World {
    /// Builds the world for `policy` in replication `replication` (which picks the random
    /// streams) and schedules its first events.
    pub fn new(
        sc: &Scenario,
        info: &'static PolicyInfo,
        replication: u64,
        sched: &mut Scheduler<Event>,
    ) -> World {
        Self::with_trace(sc, info, replication, 0, sched)
    }

    /// Like [`World::new`], also keeping the first `trace_issues` issues of every job (see
    /// [`World::take_issue_trace`]); 0 keeps none.
    pub fn with_trace(
        sc: &Scenario,
        info: &'static PolicyInfo,
        replication: u64,
        trace_issues: usize,
        sched: &mut Scheduler<Event>,
    ) -> World {
        let streams = RngStreams::new(sc.seed, replication);
        let c = cast(sc, info, &streams);
        let engine = match sc.crypt.engine {
            CryptoEngine::Sync => None,
            CryptoEngine::Async { queue_limit, rate } => Some(AsyncEngine::new(queue_limit, rate)),
        };
        // The fake-gitk processes live in anonymous memory: without a memory model there is
        // none.
        let procs = match sc.memory {
            Some(_) => crate::model::workload::gitk::processes(sc, &streams),
            None => Vec::new(),
        };
        let proc_pages: Vec<u32> = procs.iter().map(Gitk::buffer_pages).collect();
        let pressure = crate::model::mm::pressure::Pressure::new(
            sc,
            &streams,
            c.actors.len(),
            sc.warmup.is_zero(),
            &proc_pages,
            &crate::model::workload::gitk::file_pages(&procs),
        );
        let mut w = World {
            sc: sc.clone(),
            info,
            policy: if info.flags.has(DmFlags::SAME_CPU_CRYPT) {
                Box::new(crate::model::crypt::policy::bound::Bound::new(sc.cpus))
            } else {
                (info.build)()
            },
            table: crate::model::crypt::table::Table::new(sc, info),
            bios: BioSlab::default(),
            // Kernels after 2.6.x run on CPUs with identity and priority; the 2.6.x
            // layouts keep the shared pool their results were validated on.
            cpu: if sc.kernel.version.is_modern() {
                Cpus::per_cpu(sc.cpus, CpuContext::COUNT)
            } else {
                Cpus::shared(sc.cpus, CpuContext::COUNT)
            },
            cpu_event: None,
            device: Device::seeded(&sc.device, &streams),
            queue: RequestQueue::new(&sc.block, &sc.kernel),
            rec: Recorder::new(sc.warmup, sched.now(), c.jobs.len(), trace_issues),
            actors: c.actors,
            io_actor: c.io,
            crypt_actors: c.crypt,
            async_io_actor: c.async_io,
            write_actor: c.write,
            engine,
            memory: pressure.map_or(Memory::Unlimited(Allocator::default()), Memory::Zone),
            procs,
            rx: crate::model::net::rx::paths(sc),
            jobs: c.jobs,
            writers: c.writers,
            cpuio: crate::model::workload::cpuio_procs(sc, &streams),
            links: crate::model::workload::serve::Links::for_scenario(sc),
            cw: CongestionWaits::default(),
            scratch: Vec::new(),
            woken: Vec::new(),
            page_runs: Vec::new(),
            cpu_at_warmup: [0; CpuContext::COUNT],
            pieces_live: 0,
            cpu_busy_at_warmup: Vec::new(),
            idle_beside_waiting_at_warmup: 0,
            timeline: None,
            tracer: None,
        };
        w.rec.start(sched);
        w.start_workloads(sched);
        w.start_pressure(sched);
        w.start_rx(sched);
        w
    }

    /// Keeps the sums of fio's averaged logs (`--fio-dir`) over windows of `window` (`None`:
    /// the sample interval), and its histogram log when `hist` asks for one; the recorder
    /// drops them by default.
    pub fn keep_fio_log(
        &mut self,
        window: Option<crate::engine::SimDuration>,
        hist: Option<(u64, u32)>,
        sched: &mut Scheduler<Event>,
    ) {
        self.rec.keep_fio_log(window, hist, sched);
    }

    /// Hands every completed, measured I/O to `sink`
    /// ([`crate::model::observe::recorder::IoSink`]).
    pub fn send_ios_to(&mut self, sink: Box<dyn crate::model::observe::recorder::IoSink>) {
        self.rec.send_ios_to(sink);
    }

    /// The sink given to [`World::send_ios_to`], if any.
    pub fn take_io_sink(&mut self) -> Option<Box<dyn crate::model::observe::recorder::IoSink>> {
        self.rec.take_io_sink()
    }

    /// The memory model, for tests that script its processes by hand.
    #[cfg(test)]
    pub(in crate::model) fn memory_mut(&mut self) -> &mut Memory {
        &mut self.memory
    }

    // ----- CPU ------------------------------------------------------------------------------

    /// Puts `owner`'s task of `work` on the CPUs.
    pub(in crate::model) fn start_cpu(
        &mut self,
        owner: TaskOwner,
        work: SimDuration,
        sched: &mut Scheduler<Event>,
    ) {
        let (class, place, ctx) = self.task_spec(owner);
        let cpu = self
            .cpu
            .add(sched.now(), work, owner, class, place, ctx.index());
        if let TaskOwner::Actor(a) = owner {
            self.actors[a.index()].cpu = cpu;
        }
        self.reschedule_cpu(sched);
    }

    fn reschedule_cpu(&mut self, sched: &mut Scheduler<Event>) {
        if let Some(id) = self.cpu_event.take() {
            sched.cancel(id);
        }
        if let Some(t) = self.cpu.next_completion(sched.now()) {
            self.cpu_event = Some(sched.schedule_at(t, Event::CpuDone));
        }
    }

    fn cpu_done(&mut self, sched: &mut Scheduler<Event>) {
        self.cpu_event = None;
        let mut done = std::mem::take(&mut self.scratch);
        done.clear();
        self.cpu.finished(sched.now(), &mut done);
        for &Done { tag: owner, .. } in &done {
            match owner {
                TaskOwner::Softirq(bio) => self.complete_bio(bio, sched),
                TaskOwner::Kswapd => self.kswapd_scanned(sched),
                TaskOwner::Reclaim(slot) => self.reclaim_scanned(slot, sched),
                TaskOwner::Actor(a) => self.actor_cpu_done(a, sched),
                TaskOwner::Proc(p) => self.gitk_cpu_done(p, sched),
                TaskOwner::Spin(j) => self.spin_done(j, sched),
                TaskOwner::CpuIo(p) => self.cpuio_chunk_done(p, sched),
            }
        }
        self.scratch = done;
        self.reschedule_cpu(sched);
    }

    // ----- block layer ----------------------------------------------------------------------

    /// Tries to get a request for `bio` on behalf of actor `a` and insert it. On a full pool
    /// the actor sleeps holding the bio and `false` is returned.
    pub(in crate::model) fn try_submit(
        &mut self,
        a: ActorId,
        bio: BioId,
        sched: &mut Scheduler<Event>,
    ) -> bool {
        let now = sched.now();
        let class = self.bios[bio].class();
        let actor = &mut self.actors[a.index()];
        if !self.queue.get_request(class, &mut actor.batch, now) {
            actor.state = ActorState::PoolWait { bio };
            self.enter(bio, Stage::PoolSleep, now);
            self.queue.sleep(class, a, sched);
            self.dispatch(sched);
            return false;
        }
        let unplug = self.submit_unplugs(a);
        self.bios[bio].submit_cpu = self.actors[a.index()].cpu;
        self.enter(bio, Stage::BlockQueue, now);
        let b = &self.bios[bio];
        let (sync, at) = (b.sync, (b.offset, b.bytes, b.dir));
        // CFQ's io context: a process submitting its own I/O has its own; the swap writer and
        // a flusher submit a direct reclaimer's pageout in that reclaimer's; dm-crypt's threads,
        // the flushers' writeback and kswapd's pageout share one.
        let ctx = match self.actors[a.index()].kind {
            ActorKind::JobCtx(_) | ActorKind::ProcCtx(_) => Some(a),
            ActorKind::SwapWriter | ActorKind::FlusherCtx(_) => b.cic,
            _ => None,
        };
        self.queue.insert(bio, sync, at, unplug, ctx, sched);
        self.dispatch(sched);
        true
    }

    fn pool_wake(&mut self, a: ActorId, sched: &mut Scheduler<Event>) {
        let ActorState::PoolWait { bio } = self.actors[a.index()].state else {
            unreachable!("pool wake for an actor that is not asleep on the pool")
        };
        let now = sched.now();
        let window = self.sc.kernel.hz_div(50);
        let actor = &mut self.actors[a.index()];
        actor.batch.set_batching(now, window);
        actor.state = ActorState::Idle;
        if self.try_submit(a, bio, sched) {
            if matches!(
                self.actors[a.index()].kind,
                ActorKind::JobCtx(_)
                    | ActorKind::FlusherCtx(_)
                    | ActorKind::ProcCtx(_)
                    | ActorKind::SwapWriter
            ) {
                self.bios[bio].accepted = now;
            }
            self.kick(a, sched);
        }
    }

    /// Moves requests from the elevator to the device while both allow it.
    fn dispatch(&mut self, sched: &mut Scheduler<Event>) {
        while self.device.can_accept() {
            let Some(bio) = self.queue.next_dispatch(sched) else {
                break;
            };
            let now = sched.now();
            self.enter(bio, Stage::Device, now);
            for wake in self.device.accept(bio, &self.bios, now) {
                schedule_device(wake, sched);
            }
        }
    }

    fn device_done(&mut self, chan: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let (bio, next) = self.device.channel_done(chan, &self.bios, now);
        if let Some(wake) = next {
            schedule_device(wake, sched);
        }
        // An array member finished a piece of a bio still out on other members.
        let Some(bio) = bio else {
            return;
        };
        let (sync, class, dir) = {
            let b = &self.bios[bio];
            (b.sync, b.class(), b.dir)
        };
        // The disk's own accounting: one completed request and its time from insertion.
        let b = &self.bios[bio];
        let queued = b.stage_ns[Stage::BlockQueue.index()] + b.stage_ns[Stage::Device.index()];
        let ticks = SimDuration::from_ns(queued) + now.since(b.stage_since);
        self.queue.counters.completed[dir as usize] += 1;
        self.queue.counters.ticks[dir as usize] += ticks;
        self.queue.completed(bio, sync, sched);
        // End the clone: writes are done, reads still need decrypting.
        match (dir, self.info.topology) {
            (Dir::Write, _) | (Dir::Read, Topology::Plain) => self.complete_bio(bio, sched),
            (Dir::Read, Topology::Queued) => {
                self.enter(bio, Stage::CryptQueue, now);
                let op = CryptOp::Decrypt;
                let cpu = self.bios[bio].submit_cpu;
                self.policy_enqueue(Work { bio, op, sync, cpu }, sched);
            }
            (Dir::Read, Topology::Workqueue) => self.read_completed_wq(bio, sched),
            (Dir::Read, Topology::Inline) => {
                self.enter(bio, Stage::CryptService, now);
                let cost = self.crypto_cost(CryptOp::Decrypt, bio);
                self.start_cpu(TaskOwner::Softirq(bio), cost, sched);
            }
        }
        // Then the request goes back to its pool.
        let freed = self.queue.free_request(class, now);
        if freed.cleared {
            self.congestion_clear(class, sched);
        }
        if let Some(actor) = freed.wake {
            let ev = Event::Block(BlockEvent::PoolWake { actor });
            sched.schedule_in(SimDuration::ZERO, ev);
        }
        self.dispatch(sched);
    }

    /// Whether writeback should back off: the disk beneath reports ASYNC congestion.
    pub(in crate::model) fn write_congested(&self) -> bool {
        self.sc.block.mode == QueueMode::Legacy && self.queue.is_congested(QueueClass::Async)
    }

    // ----- dm-crypt entry and bio completion ------------------------------------------------

    /// Issues a new bio from a workload: dm-crypt's map, or the submitting context.
    #[inline]
    pub(in crate::model) fn issue(
        &mut self,
        mut bio: Bio,
        ctx: ActorId,
        sched: &mut Scheduler<Event>,
    ) {
        bio.measured = self.rec.is_measured(sched.now());
        let id = self.admit(bio);
        self.route(id, ctx, sched);
    }

    /// Puts a new bio into the system (counted as issued) without routing it yet.
    #[inline]
    pub(in crate::model) fn admit(&mut self, bio: Bio) -> BioId {
        self.rec.issued(bio.dir, bio.measured);
        self.bios.insert(bio)
    }

    /// Sends an admitted bio on its way: dm-crypt's map (which may first split it, 6.11+), or
    /// the submitting context `ctx`.
    pub(in crate::model) fn route(
        &mut self,
        id: BioId,
        ctx: ActorId,
        sched: &mut Scheduler<Event>,
    ) {
        match self.split_limit(id) {
            Some(limit) => self.split(id, limit, ctx, sched),
            None => self.route_one(id, ctx, sched),
        }
    }

    /// [`World::route`] for one bio (or one piece).
    pub(in crate::model) fn route_one(
        &mut self,
        id: BioId,
        ctx: ActorId,
        sched: &mut Scheduler<Event>,
    ) {
        let now = sched.now();
        let (dir, sync) = (self.bios[id].dir, self.bios[id].sync);
        let waiter = matches!(
            self.bios[id].origin,
            Origin::Job(_) | Origin::Proc(_) | Origin::SwapIn(_)
        ) && sync;
        self.enter(id, Stage::Other, now);
        let direct = match self.info.topology {
            Topology::Queued => false,
            // 5.8 submits a read's clone from the caller; only writes queue to kcryptd (and
            // not even they under no_write_workqueue).
            Topology::Workqueue => dir == Dir::Read || self.writes_inline(),
            Topology::Plain | Topology::Inline => true,
        };
        if direct {
            self.actors[ctx.index()].queue.push_back(id);
            self.kick(ctx, sched);
            return;
        }
        // dm-crypt's map only queues the bio: it is accepted at once.
        self.bios[id].accepted = now;
        match dir {
            Dir::Read => {
                self.enter(id, Stage::IoQueue, now);
                self.queue_for_io_thread(id, sched);
            }
            Dir::Write => {
                self.enter(id, Stage::CryptQueue, now);
                let op = CryptOp::Encrypt;
                let cpu = self.actors[ctx.index()].cpu;
                self.policy_enqueue(
                    Work {
                        bio: id,
                        op,
                        sync,
                        cpu,
                    },
                    sched,
                );
            }
        }
        if waiter {
            // The issuer now waits and unplugs the dm device, which unplugs the disk
            // beneath: before kcryptd_io or kcryptd has submitted the clone.
            self.queue.unplug(sched);
            self.dispatch(sched);
        }
    }

    pub(in crate::model) fn complete_bio(&mut self, id: BioId, sched: &mut Scheduler<Event>) {
        if self.bios[id].is_piece() {
            self.piece_done(id, sched);
            return;
        }
        let now = sched.now();
        let b = &self.bios[id];
        if let Origin::Job(j) = b.origin
            && b.bounce_pages == 0
            && self.tracer.is_none()
        {
            // The commonest completion, read where it lies instead of moved out of the slab
            // first: nothing before the slot is freed can touch the slab or the calendar
            // (no bounce pages to free, no tracer), so it is the path below, step for step.
            self.bios[id].enter(Stage::Other, now);
            let b = &self.bios[id];
            let bytes = b.bytes;
            self.memory.cache_done(b);
            self.rec.completed(b, now);
            self.bios.release(id);
            self.job_completed(j, bytes, sched);
            return;
        }
        let mut bio = self.bios.remove(id);
        let closed = bio.enter(Stage::Other, now);
        if self.tracer.is_some() {
            self.trace_completed(id, &bio, closed, now);
        }
        self.free_bio_bounce(&bio, sched);
        self.memory.cache_done(&bio);
        self.rec.completed(&bio, now);
        match bio.origin {
            Origin::Job(j) => self.job_completed(j, bio.bytes, sched),
            Origin::Writeback(w) => self.writeback_completed(w, bio.bytes, sched),
            Origin::Proc(p) => self.gitk_file_read_done(p, &bio, sched),
            Origin::SwapIn(_) => self.swapin_done(&bio, sched),
            Origin::SwapOut => self.swapout_done(&bio),
            Origin::Piece(_) => unreachable!("pieces complete through piece_done"),
        }
    }

    // ----- congestion_wait ------------------------------------------------------------------

    /// `congestion_wait(class, timeout)` for `who` (see [`crate::model::mm::cwait`]).
    pub(in crate::model) fn congestion_wait(
        &mut self,
        who: CwWho,
        class: QueueClass,
        timeout: SimDuration,
        sched: &mut Scheduler<Event>,
    ) {
        self.cw.wait(who, class, timeout, sched);
        self.rec.wait_began(class);
    }

    /// A congestion clear of `class`: every sleeper on its queue wakes, in sleep order.
    fn congestion_clear(&mut self, class: QueueClass, sched: &mut Scheduler<Event>) {
        if self.cw.is_idle(class) {
            return;
        }
        let waiters = self.cw.take_queue(class);
        for &slot in &waiters {
            let w = self.cw.wake(slot, sched);
            self.end_wait(w, true, sched);
        }
        self.cw.give_back(class, waiters);
    }

    fn end_wait(
        &mut self,
        w: crate::model::mm::cwait::Waiter,
        early: bool,
        sched: &mut Scheduler<Event>,
    ) {
        let slept = self.rec.wait_ended(&w, early, sched.now());
        self.trace_wait(&w, early, sched.now());
        self.account_mm_wait(w.who, w.class, slept, early);
        match w.who {
            CwWho::Writer(i) => self.writer_tick(i, sched),
            CwWho::Flusher(i) => {
                self.flusher_woken(i);
                self.flusher_run(i, sched);
            }
            CwWho::Kswapd => self.kswapd_woken(sched),
            CwWho::Reclaim(slot) => self.reclaim_woken(slot, sched),
            CwWho::CryptNap(a) => self.partial_nap_end(a, sched),
        }
    }

    // ----- the run's start and end ----------------------------------------------------------

    fn warmup_end(&mut self, now: SimTime) {
        self.memory.start_measuring(now);
        for rx in &mut self.rx {
            rx.start_measuring(now);
        }
        self.cpu.sync(now);
        self.queue.finish(now);
        let mut block = self.queue.counters.clone();
        block.device_busy = self.device.busy_time(now);
        self.rec.warmup_end(now, self.cpu.busy_cpu_ns(), block);
        for c in CpuContext::ALL {
            self.cpu_at_warmup[c.index()] = self.cpu.account_ns(c.index());
        }
        if let Cpus::PerCpu(m) = &self.cpu {
            self.cpu_busy_at_warmup = (0..m.cpus()).map(|c| m.busy_ns_on(c)).collect();
            self.idle_beside_waiting_at_warmup = m.idle_beside_waiting_ns();
        }
    }

    /// CPUs' worth of idle time beside waiting movable threads over the measured window (0 on
    /// the shared pool, which has no CPUs to be idle apart).
    fn cpu_idle_beside_waiting(&self, now: SimTime) -> f64 {
        let Cpus::PerCpu(m) = &self.cpu else {
            return 0.0;
        };
        let span = now.saturating_since(self.rec.warmup()).as_ns().max(1) as f64;
        (m.idle_beside_waiting_ns() - self.idle_beside_waiting_at_warmup) as f64 / span
    }

    /// Each CPU's busy share of the measured window (empty on the shared pool).
    fn cpu_by_cpu(&self, now: SimTime) -> Vec<f64> {
        let Cpus::PerCpu(m) = &self.cpu else {
            return Vec::new();
        };
        let span = now.saturating_since(self.rec.warmup()).as_ns().max(1) as f64;
        (0..m.cpus())
            .map(|c| {
                let before = self
                    .cpu_busy_at_warmup
                    .get(c as usize)
                    .copied()
                    .unwrap_or(0);
                (m.busy_ns_on(c) - before) as f64 / span
            })
            .collect()
    }

    /// CPU time by context over the measured window, per second of it.
    fn cpu_by_context(&self, now: SimTime) -> [f64; CpuContext::COUNT] {
        let span = now.saturating_since(self.rec.warmup()).as_ns().max(1) as f64;
        CpuContext::ALL.map(|c| {
            let ns = self.cpu.account_ns(c.index()) - self.cpu_at_warmup[c.index()];
            ns as f64 / span
        })
    }

    /// Ends the run at `now` and returns what it measured.
    pub fn finish(mut self, now: SimTime, events: u64, saturated: bool) -> RunObs {
        self.rec.crypt_len_tick(now, self.policy.len());
        self.cpu.sync(now);
        self.queue.finish(now);
        let warmup = self.rec.warmup();
        let mut totals = self.queue.counters.clone();
        totals.device_busy = self.device.busy_time(now);
        let finite_jobs = self.finite_observations();
        let finished = self.all_finite_jobs_done();
        let (busy, cpus) = (self.cpu.busy_cpu_ns(), self.cpu.cpus());
        let cpu_by_context = self.cpu_by_context(now);
        let cpu_by_cpu = self.cpu_by_cpu(now);
        let cpu_idle_beside_waiting = self.cpu_idle_beside_waiting(now);
        let fio_log = self.rec.take_fio_log(now);
        let app_cpu = self.app_cpu_observations();
        let (r, block, cpu_utilisation) =
            self.rec.finish(now, self.cw.sleeping(), busy, cpus, totals);
        RunObs {
            policy: self.info.name.to_string(),
            measured: now.saturating_since(warmup),
            dirs: r.dirs,
            clat_all: r.clat_all,
            depth_buckets: r.depth_buckets,
            congestion_waits: r.congestion_waits,
            block,
            writeback: r.writeback,
            ended: now,
            finite_jobs,
            memory: self.memory.finish(
                now,
                warmup,
                self.procs.iter().map(Gitk::obs).collect(),
                self.rx.iter().map(|r| r.obs(now)).collect(),
            ),
            cpu_utilisation,
            cpu_by_context,
            cpu_by_cpu,
            cpu_idle_beside_waiting,
            crypt_queue_len_avg: r.crypt_queue_len_avg,
            crypt_queue_len_max: r.crypt_queue_len_max,
            events,
            end: if saturated {
                RunEnd::Saturated
            } else if finished {
                RunEnd::Finished
            } else {
                RunEnd::Horizon
            },
            timeline: self.timeline.take().map(|r| r.finish(now)),
            replications: 1,
            fio_log,
            app_cpu,
        }
    }
}

fn schedule_device(wake: DeviceWake, sched: &mut Scheduler<Event>) {
    let (t, ev) = wake.event();
    sched.schedule_at(t, Event::Device(ev));
}

impl Model for World {
    type Event = Event;

    /// Allocation attempts and reclaim scanning, which happen inside events.
    fn work(&self) -> u64 {
        self.memory.work()
    }

    fn handle(&mut self, ev: Event, sched: &mut Scheduler<Event>) {
        if self.tracer.is_some() {
            self.trace_event(sched.now(), true);
        }
        self.integrate_occupancy(sched.now());
        self.memory.advance(sched.now());
        match ev {
            Event::Workload(ev) => match ev {
                WorkloadEvent::JobIssue { job } => self.job_issue(job, sched),
                WorkloadEvent::WriterTick { writer } => self.writer_tick(writer, sched),
                WorkloadEvent::FlusherRun { writer } => self.flusher_run(writer, sched),
                WorkloadEvent::JobResume { job } => self.job_resume(job, sched),
                WorkloadEvent::ServeStep { job } => self.serve_step(job, sched),
                WorkloadEvent::LinkDone { outbound, version } => {
                    self.link_done(outbound, version, sched)
                }
                WorkloadEvent::CpuIoRun { process } => self.cpuio_run(process, sched),
            },
            Event::CpuDone => self.cpu_done(sched),
            Event::Device(DeviceEvent::Delay { bio }) => {
                for wake in self.device.delay_done(bio, &self.bios, sched.now()) {
                    schedule_device(wake, sched);
                }
            }
            Event::Device(DeviceEvent::Done { chan }) => self.device_done(chan, sched),
            Event::Block(ev) => match ev {
                BlockEvent::UnplugTimer => {
                    self.queue.unplug_timer();
                    self.dispatch(sched);
                }
                BlockEvent::CfqIdle => {
                    self.queue.idle_timer();
                    self.dispatch(sched);
                }
                BlockEvent::PoolWake { actor } => self.pool_wake(actor, sched),
            },
            Event::Cwait(CwEvent::Timeout { waiter }) => {
                let w = self.cw.timed_out(waiter);
                self.end_wait(w, false, sched);
            }
            Event::Crypt(ev) => self.crypt_event(ev, sched),
            Event::Memory(ev) => self.memory_event(ev, sched),
            Event::Net(ev) => self.net_event(ev, sched),
            Event::Recorder(RecEvent::Sample) => self.rec.sample(sched),
            Event::Recorder(RecEvent::WarmupEnd) => self.warmup_end(sched.now()),
            Event::Recorder(RecEvent::LogWindow) => self.rec.log_window(sched),
        }
        self.timeline_event(sched.now());
        if self.tracer.is_some() {
            self.trace_event(sched.now(), false);
        }
    }
}
