//! The assembled dm-crypt world for one policy: every component, the domain event enum, and the
//! handlers that move bios between them.
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
//! Threads (crypt threads, kcryptd_io, and the submitting contexts of jobs and flushers) are
//! *actors*: each is idle, running on a CPU, asleep on a request pool, or blocked on the crypto
//! backlog. Their CPU work shares the [`CpuPool`].

use super::bio::{Bio, BioId, BioSlab, Dir, Origin};
use super::block::{BatchState, RequestQueue};
use super::cpu::CpuPool;
use super::device::{Device, DeviceWake};
use super::ids::{ActorId, QueueClass, ReclaimSlot, TaskOwner};
use super::invariants::{InvariantReport, Occupancy, QUEUES, Queue, Snapshot, TimeInStage};
use super::memory::{Allocator, pages_for};
use super::observe::{DirectionObs, IssueTrace, RunEnd, RunObs, Stage};
use super::policy::{CryptOp, CryptQueuePolicy, PolicyInfo, Topology, Work};
use super::pressure::Bounce;
use super::workload::{Job, Writer};
use crate::engine::{EventId, Model, Scheduler, SimDuration, SimTime};
use crate::model::config::{CryptoEngine, QueueMode, Scenario};
use crate::stats::Histogram;
use std::collections::VecDeque;

/// Length of one bandwidth / IOPS sample interval (fio's default `bw_avg_time` is 500 ms).
pub const SAMPLE_INTERVAL: SimDuration = SimDuration::from_ms(500);

/// Everything that can happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A job issues its next I/O (open-loop arrival, or closed-loop think time over).
    JobIssue {
        /// Job index.
        job: u32,
    },
    /// The CPU pool's earliest task finishes.
    CpuDone,
    /// A bio's fixed device latency ends.
    DeviceDelay {
        /// The bio.
        bio: BioId,
    },
    /// A device channel finishes its request.
    DeviceDone {
        /// Channel index.
        chan: u32,
    },
    /// The request queue's unplug timer fires.
    UnplugTimer,
    /// CFQ's idle timer fires.
    CfqIdle,
    /// An actor woken on a request pool retries.
    PoolWake {
        /// The actor.
        actor: ActorId,
    },
    /// A `congestion_wait` times out.
    CongestionTimeout {
        /// Waiter slot.
        waiter: u32,
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
    /// The async crypto engine finished a bio.
    EngineDone {
        /// The bio.
        bio: BioId,
    },
    /// A crypt thread's last backlogged crypto request entered the engine queue.
    BacklogUnblock {
        /// The actor.
        actor: ActorId,
    },
    /// A GFP_ATOMIC stream's next allocation.
    AtomicArrival {
        /// Stream index.
        stream: u32,
    },
    /// A driver frees an atomic buffer of this order.
    AtomicFree {
        /// Block order.
        order: u32,
    },
    /// kswapd's 2.6.33 nap ends.
    KswapdNapEnd,
    /// A thread asleep on dm-crypt's empty `page_pool` reaches its 5·HZ timeout.
    MempoolTimeout {
        /// The actor.
        actor: ActorId,
    },
    /// A bandwidth / IOPS sample interval ends.
    Sample,
    /// The warm-up ends: statistics start.
    WarmupEnd,
}

/// What an actor is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActorKind {
    /// Crypt thread `i` of the policy.
    Crypt(usize),
    /// kcryptd_io.
    Io,
    /// The submitting context of job `j` (used when it submits to the disk itself).
    JobCtx(u32),
    /// The submitting context of writer `w`'s flusher.
    FlusherCtx(u32),
}

/// What step a CPU task finishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Crypt(CryptOp),
    IoHop,
    InlineEncrypt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ActorState {
    Idle,
    Cpu {
        bio: BioId,
        step: Step,
    },
    PoolWait {
        bio: BioId,
    },
    Backlog,
    /// Asleep on dm-crypt's `page_pool`, or napping after a partial clone.
    MemWait,
}

/// A write whose bounce pages an actor is still gathering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Held {
    bio: BioId,
    /// A partial clone was just split off: nap before going on.
    nap: bool,
}

#[derive(Debug)]
struct Actor {
    kind: ActorKind,
    state: ActorState,
    batch: BatchState,
    /// Bios waiting for this actor (kcryptd_io's list, or a context's pending submissions).
    queue: VecDeque<BioId>,
    /// A write it is gathering bounce pages for (memory model only).
    held: Option<Held>,
}

/// Who sleeps in `congestion_wait`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CwWho {
    /// A buffered writer throttled in balance_dirty_pages.
    Writer(u32),
    /// A flusher backing off a congested disk.
    Flusher(u32),
    /// kswapd between reclaim priorities.
    Kswapd,
    /// A direct reclaimer (its slot).
    Reclaim(ReclaimSlot),
    /// A crypt thread napping after a partial clone (its actor index).
    CryptNap(ActorId),
}

#[derive(Debug, Clone, Copy)]
struct CwWaiter {
    who: CwWho,
    class: QueueClass,
    since: SimTime,
    timer: EventId,
}

/// The async crypto engine: a FIFO drained at a fixed rate, bounded in 512-byte requests.
#[derive(Debug)]
struct AsyncEngine {
    queue_limit: u64,
    unit_ns: f64,
    busy_until: SimTime,
}

/// Running statistics of one direction.
#[derive(Debug)]
struct DirStats {
    obs: DirectionObs,
    window_ios: u64,
    window_bytes: u64,
}

impl DirStats {
    fn new() -> Self {
        DirStats {
            obs: DirectionObs::new(),
            window_ios: 0,
            window_bytes: 0,
        }
    }
}

/// One policy's world.
#[derive(Debug)]
pub struct World {
    pub(super) sc: Scenario,
    pub(super) info: &'static PolicyInfo,
    pub(super) policy: Box<dyn CryptQueuePolicy>,
    pub(super) bios: BioSlab,
    pub(super) cpu: CpuPool<TaskOwner>,
    cpu_event: Option<EventId>,
    device: Device,
    pub(super) queue: RequestQueue,
    actors: Vec<Actor>,
    io_actor: ActorId,
    crypt_actors: Vec<ActorId>,
    engine: Option<AsyncEngine>,
    pub(super) alloc: Allocator,
    pub(super) jobs: Vec<Job>,
    pub(super) writers: Vec<Writer>,
    cw_slots: Vec<Option<CwWaiter>>,
    cw_free: Vec<u32>,
    cw_queues: [Vec<u32>; 2],
    pub(super) warmup: SimTime,
    pub(super) measuring: bool,
    dirs: [DirStats; 2],
    clat_all: Histogram,
    pub(super) depth_buckets: [u64; 7],
    pub(super) obs_cw: [super::observe::CongestionWaitObs; 2],
    pub(super) wb: super::observe::WritebackObs,
    crypt_len_area: u128,
    crypt_len_since: SimTime,
    crypt_len_max: u64,
    busy_at_warmup: u128,
    block_at_warmup: super::observe::BlockObs,
    pub(super) issued_total: u64,
    pub(super) completed_total: u64,
    scratch: Vec<TaskOwner>,
    /// Each checked queue's count integrated over the whole run (warm-up included).
    occupancy: Occupancy,
    /// Time completed bios spent in each checked queue.
    time_in_stage: TimeInStage,
    /// The first issues of each job, when a run asks for them.
    pub(super) issue_trace: Option<IssueTrace>,
    /// The memory model, with a `memory:` section.
    pub(super) pressure: Option<Box<super::pressure::Pressure>>,
    /// The timeline, when a run asks for one.
    pub(super) timeline: Option<Box<super::timeline::Recorder>>,
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
        let streams = crate::engine::RngStreams::new(sc.seed, replication);
        let mut actors = Vec::new();
        let mut crypt_actors = Vec::new();
        for i in 0..info.threads {
            crypt_actors.push(ActorId(actors.len() as u32));
            actors.push(Actor::new(ActorKind::Crypt(i)));
        }
        let io_actor = ActorId(actors.len() as u32);
        actors.push(Actor::new(ActorKind::Io));
        let mut jobs = Vec::new();
        let mut writers = Vec::new();
        for wl in &sc.workloads {
            match &wl.kind {
                crate::model::config::WorkloadKind::Fio(f) => {
                    for copy in 0..f.numjobs {
                        let ctx = ActorId(actors.len() as u32);
                        actors.push(Actor::new(ActorKind::JobCtx(jobs.len() as u32)));
                        jobs.push(Job::new(&wl.name, copy, f, ctx, &streams));
                    }
                }
                crate::model::config::WorkloadKind::BufferedWriter(b) => {
                    let ctx = ActorId(actors.len() as u32);
                    actors.push(Actor::new(ActorKind::FlusherCtx(writers.len() as u32)));
                    writers.push(Writer::new(&wl.name, b, ctx, &streams));
                }
            }
        }
        let engine = match sc.crypt.engine {
            CryptoEngine::Sync => None,
            CryptoEngine::Async { queue_limit, rate } => Some(AsyncEngine {
                queue_limit: u64::from(queue_limit.max(1)),
                unit_ns: 512.0 / rate * 1e9,
                busy_until: SimTime::ZERO,
            }),
        };
        let warmup = SimTime::ZERO + sc.warmup;
        let pressure =
            super::pressure::Pressure::new(sc, &streams, actors.len(), sc.warmup.is_zero());
        let mut w = World {
            sc: sc.clone(),
            info,
            policy: (info.build)(),
            bios: BioSlab::default(),
            cpu: CpuPool::new(sc.cpus),
            cpu_event: None,
            device: Device::new(&sc.device),
            queue: RequestQueue::new(&sc.block, &sc.kernel),
            actors,
            io_actor,
            crypt_actors,
            engine,
            alloc: Allocator::default(),
            jobs,
            writers,
            cw_slots: Vec::new(),
            cw_free: Vec::new(),
            cw_queues: [Vec::new(), Vec::new()],
            warmup,
            measuring: sc.warmup.is_zero(),
            dirs: [DirStats::new(), DirStats::new()],
            clat_all: Histogram::new(),
            depth_buckets: [0; 7],
            obs_cw: Default::default(),
            wb: Default::default(),
            crypt_len_area: 0,
            crypt_len_since: warmup,
            crypt_len_max: 0,
            busy_at_warmup: 0,
            block_at_warmup: Default::default(),
            issued_total: 0,
            completed_total: 0,
            scratch: Vec::new(),
            occupancy: Occupancy::new(sched.now()),
            time_in_stage: TimeInStage::default(),
            issue_trace: None,
            pressure,
            timeline: None,
        };
        if trace_issues > 0 {
            w.issue_trace = Some(IssueTrace::new(w.jobs.len(), trace_issues));
        }
        if !w.measuring {
            sched.schedule_at(warmup, Event::WarmupEnd);
        }
        sched.schedule_at(warmup + SAMPLE_INTERVAL, Event::Sample);
        w.start_workloads(sched);
        w.start_pressure(sched);
        w
    }

    // ----- actors and CPU -------------------------------------------------------------------

    pub(super) fn start_cpu(
        &mut self,
        tag: TaskOwner,
        work: SimDuration,
        sched: &mut Scheduler<Event>,
    ) {
        self.cpu.add(sched.now(), work, tag);
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
        for &owner in &done {
            match owner {
                TaskOwner::Softirq(bio) => self.complete_bio(bio, sched),
                TaskOwner::Kswapd => self.kswapd_scanned(sched),
                TaskOwner::Reclaim(slot) => self.reclaim_scanned(slot, sched),
                TaskOwner::Actor(a) => self.actor_cpu_done(a, sched),
            }
        }
        self.scratch = done;
        self.reschedule_cpu(sched);
    }

    /// CPU cost of encrypting or decrypting `bio` on one CPU: its bytes at the cipher's rate,
    /// or a draw from the scenario's cost distribution.
    fn crypto_cost(&self, op: CryptOp, bio: BioId) -> SimDuration {
        let c = &self.sc.crypt;
        let b = &self.bios[bio];
        if let Some(d) = &c.cost {
            return d.quantile(b.crypt_u);
        }
        crate::model::physics::crypto_cost(c, u64::from(b.bytes), op == CryptOp::Encrypt)
    }

    /// Lets an idle actor pick up its next piece of work.
    fn kick(&mut self, a: ActorId, sched: &mut Scheduler<Event>) {
        if self.actors[a.index()].state != ActorState::Idle {
            return;
        }
        let now = sched.now();
        match self.actors[a.index()].kind {
            ActorKind::Crypt(t) => {
                let (bio, op, hop) = if let Some(h) = self.actors[a.index()].held.take() {
                    if h.nap {
                        // A partial clone went out: nap before allocating the rest.
                        self.actors[a.index()].held = Some(Held { nap: false, ..h });
                        self.actors[a.index()].state = ActorState::MemWait;
                        self.partial_nap(a, sched);
                        return;
                    }
                    (h.bio, CryptOp::Encrypt, SimDuration::ZERO)
                } else {
                    let Some(work) = self.policy_next(t, now) else {
                        return;
                    };
                    self.bios[work.bio].enter(Stage::CryptService, now);
                    (work.bio, work.op, self.sc.crypt.hop_cost)
                };
                let mut bio = bio;
                if op == CryptOp::Encrypt && self.pressure.is_some() {
                    let split = matches!(self.bios[bio].origin, Origin::Writeback(_));
                    match self.bounce_alloc(a, bio, split, sched) {
                        Bounce::Ready => {}
                        Bounce::Asleep => {
                            self.actors[a.index()].held = Some(Held { bio, nap: false });
                            self.actors[a.index()].state = ActorState::MemWait;
                            return;
                        }
                        Bounce::Partial(child) => {
                            self.actors[a.index()].held = Some(Held { bio, nap: true });
                            bio = child;
                        }
                    }
                }
                let cost = if self.engine.is_some() {
                    hop + self.sc.crypt.per_sector_cost * self.bios[bio].sectors()
                } else {
                    hop + self.crypto_cost(op, bio)
                };
                self.actors[a.index()].state = ActorState::Cpu {
                    bio,
                    step: Step::Crypt(op),
                };
                self.start_cpu(TaskOwner::Actor(a), cost, sched);
            }
            ActorKind::Io => {
                let Some(bio) = self.actors[a.index()].queue.pop_front() else {
                    return;
                };
                self.actors[a.index()].state = ActorState::Cpu {
                    bio,
                    step: Step::IoHop,
                };
                self.start_cpu(TaskOwner::Actor(a), self.sc.crypt.hop_cost, sched);
            }
            ActorKind::JobCtx(_) | ActorKind::FlusherCtx(_) => {
                // Submit pending bios until one blocks or needs the CPU.
                while self.actors[a.index()].state == ActorState::Idle {
                    let held = self.actors[a.index()].held.take().map(|h| h.bio);
                    let Some(bio) = held.or_else(|| self.actors[a.index()].queue.pop_front())
                    else {
                        break;
                    };
                    let b = &self.bios[bio];
                    if self.info.topology == Topology::Inline
                        && b.dir == Dir::Write
                        && self.pressure.is_some()
                        && self.bounce_alloc(a, bio, false, sched) == Bounce::Asleep
                    {
                        self.actors[a.index()].held = Some(Held { bio, nap: false });
                        self.actors[a.index()].state = ActorState::MemWait;
                        break;
                    }
                    let b = &self.bios[bio];
                    if self.info.topology == Topology::Inline && b.dir == Dir::Write {
                        let cost = self.crypto_cost(CryptOp::Encrypt, bio);
                        self.bios[bio].enter(Stage::CryptService, now);
                        self.actors[a.index()].state = ActorState::Cpu {
                            bio,
                            step: Step::InlineEncrypt,
                        };
                        self.start_cpu(TaskOwner::Actor(a), cost, sched);
                    } else if self.try_submit(a, bio, sched) {
                        self.bios[bio].accepted = now;
                    }
                }
                self.context_idle(a, sched);
            }
        }
    }

    /// A submitting context has nothing in hand: a flusher may continue writing back.
    fn context_idle(&mut self, a: ActorId, sched: &mut Scheduler<Event>) {
        let actor = &self.actors[a.index()];
        if actor.state == ActorState::Idle
            && actor.queue.is_empty()
            && let ActorKind::FlusherCtx(w) = actor.kind
        {
            sched.schedule_in(SimDuration::ZERO, Event::FlusherRun { writer: w });
        }
    }

    fn actor_cpu_done(&mut self, a: ActorId, sched: &mut Scheduler<Event>) {
        let ActorState::Cpu { bio, step } = self.actors[a.index()].state else {
            unreachable!("CPU task finished for an actor not on a CPU")
        };
        self.actors[a.index()].state = ActorState::Idle;
        let now = sched.now();
        match step {
            Step::Crypt(CryptOp::Decrypt) => {
                if let Some(unblock) = self.engine_submit(bio, now, sched) {
                    self.block_on_backlog(a, unblock, sched);
                } else if self.engine.is_none() {
                    self.complete_bio(bio, sched);
                }
            }
            Step::Crypt(CryptOp::Encrypt) => {
                if self.pressure.is_none() {
                    let pages = pages_for(self.bios[bio].bytes);
                    let granted = self.alloc.alloc_bounce(pages);
                    debug_assert!(granted, "unlimited memory refused a bounce page");
                    self.bios[bio].bounce_pages = pages;
                }
                if self.engine.is_some() {
                    if let Some(unblock) = self.engine_submit(bio, now, sched) {
                        self.block_on_backlog(a, unblock, sched);
                    }
                } else {
                    self.try_submit(a, bio, sched);
                }
            }
            Step::IoHop => {
                self.try_submit(a, bio, sched);
            }
            Step::InlineEncrypt => {
                if self.pressure.is_none() {
                    let pages = pages_for(self.bios[bio].bytes);
                    self.alloc.alloc_bounce(pages);
                    self.bios[bio].bounce_pages = pages;
                }
                if self.try_submit(a, bio, sched) {
                    self.bios[bio].accepted = now;
                }
            }
        }
        self.kick(a, sched);
    }

    fn block_on_backlog(&mut self, a: ActorId, until: SimTime, sched: &mut Scheduler<Event>) {
        self.actors[a.index()].state = ActorState::Backlog;
        sched.schedule_at(until, Event::BacklogUnblock { actor: a });
    }

    /// Hands a bio's crypto requests to the async engine, if there is one. Returns when the
    /// submitting thread may go on if the queue overflowed (it is blocked on the backlog until
    /// then), or `None` if it may go on now.
    fn engine_submit(
        &mut self,
        bio: BioId,
        now: SimTime,
        sched: &mut Scheduler<Event>,
    ) -> Option<SimTime> {
        let engine = self.engine.as_mut()?;
        let units = self.bios[bio].sectors();
        let start = now.max(engine.busy_until);
        let finish = start + SimDuration::from_secs_f64(units as f64 * engine.unit_ns / 1e9);
        engine.busy_until = finish;
        sched.schedule_at(finish, Event::EngineDone { bio });
        // The last request enters the queue once no more than `queue_limit` remain ahead of
        // and including it; until then the thread sits on the backlog.
        let room = SimDuration::from_secs_f64(engine.queue_limit as f64 * engine.unit_ns / 1e9);
        let enter = SimTime::from_ns(finish.as_ns().saturating_sub(room.as_ns()));
        (enter > now).then_some(enter)
    }

    fn engine_done(&mut self, bio: BioId, sched: &mut Scheduler<Event>) {
        match self.bios[bio].dir {
            Dir::Read => self.complete_bio(bio, sched),
            Dir::Write => {
                // 2.6.32: an async encryption completion hands the clone to kcryptd_io.
                self.bios[bio].enter(Stage::IoQueue, sched.now());
                let io = self.io_actor;
                self.actors[io.index()].queue.push_back(bio);
                self.kick(io, sched);
            }
        }
    }

    // ----- crypt queue accounting -----------------------------------------------------------

    fn crypt_len_tick(&mut self, now: SimTime) {
        if self.measuring {
            let dt = now.saturating_since(self.crypt_len_since).as_ns();
            self.crypt_len_area += u128::from(dt) * self.policy.len() as u128;
        }
        self.crypt_len_since = now;
    }

    fn policy_enqueue(&mut self, work: Work, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        self.crypt_len_tick(now);
        self.policy.enqueue(work);
        self.timeline_crypt(now);
        if self.measuring {
            self.crypt_len_max = self.crypt_len_max.max(self.policy.len() as u64);
        }
        for i in 0..self.crypt_actors.len() {
            let a = self.crypt_actors[i];
            self.kick(a, sched);
        }
    }

    fn policy_next(&mut self, thread: usize, now: SimTime) -> Option<Work> {
        self.crypt_len_tick(now);
        let work = self.policy.next(thread);
        if work.is_some() {
            self.timeline_crypt(now);
        }
        work
    }

    // ----- block layer ----------------------------------------------------------------------

    /// Tries to get a request for `bio` on behalf of actor `a` and insert it. On a full pool
    /// the actor sleeps holding the bio and `false` is returned.
    fn try_submit(&mut self, a: ActorId, bio: BioId, sched: &mut Scheduler<Event>) -> bool {
        let now = sched.now();
        let class = self.bios[bio].class();
        if !self
            .queue
            .get_request(class, &mut self.actors[a.index()].batch, now)
        {
            self.bios[bio].enter(Stage::PoolSleep, now);
            self.actors[a.index()].state = ActorState::PoolWait { bio };
            self.queue.sleep(class, a, sched);
            self.dispatch(sched);
            return false;
        }
        let unplug = match self.actors[a.index()].kind {
            ActorKind::Crypt(_) | ActorKind::Io => self.sc.crypt.unplug_after_submit,
            ActorKind::JobCtx(_) => true,
            ActorKind::FlusherCtx(_) => false,
        };
        self.bios[bio].enter(Stage::BlockQueue, now);
        let sync = self.bios[bio].sync;
        self.queue.insert(bio, sync, unplug, sched);
        self.dispatch(sched);
        true
    }

    fn pool_wake(&mut self, a: ActorId, sched: &mut Scheduler<Event>) {
        let ActorState::PoolWait { bio } = self.actors[a.index()].state else {
            unreachable!("pool wake for an actor that is not asleep on the pool")
        };
        let now = sched.now();
        let window = self.sc.kernel.hz_div(50);
        self.actors[a.index()].batch.set_batching(now, window);
        self.actors[a.index()].state = ActorState::Idle;
        if self.try_submit(a, bio, sched) {
            if matches!(
                self.actors[a.index()].kind,
                ActorKind::JobCtx(_) | ActorKind::FlusherCtx(_)
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
            self.bios[bio].enter(Stage::Device, now);
            if let Some(wake) = self.device.accept(bio, &self.bios, now) {
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
        let (sync, class, dir) = {
            let b = &self.bios[bio];
            (b.sync, b.class(), b.dir)
        };
        self.queue.completed(sync, sched);
        // End the clone: writes are done, reads still need decrypting.
        match (dir, self.info.topology) {
            (Dir::Write, _) | (Dir::Read, Topology::Plain) => self.complete_bio(bio, sched),
            (Dir::Read, Topology::Queued) => {
                self.bios[bio].enter(Stage::CryptQueue, now);
                let w = Work {
                    bio,
                    op: CryptOp::Decrypt,
                    sync,
                };
                self.policy_enqueue(w, sched);
            }
            (Dir::Read, Topology::Inline) => {
                self.bios[bio].enter(Stage::CryptService, now);
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
            sched.schedule_in(SimDuration::ZERO, Event::PoolWake { actor });
        }
        self.dispatch(sched);
    }

    // ----- dm-crypt entry and bio completion ------------------------------------------------

    /// Issues a new bio from a workload: dm-crypt's map, or the submitting context.
    pub(super) fn issue(&mut self, mut bio: Bio, ctx: ActorId, sched: &mut Scheduler<Event>) {
        bio.measured = sched.now() >= self.warmup;
        let id = self.admit(bio);
        self.route(id, ctx, sched);
    }

    /// Puts a new bio into the system (counted as issued) without routing it yet.
    pub(super) fn admit(&mut self, bio: Bio) -> BioId {
        let measured = bio.measured;
        let dir = bio.dir;
        let id = self.bios.insert(bio);
        self.issued_total += 1;
        if measured {
            self.dirs[dir as usize].obs.issued += 1;
        }
        id
    }

    /// Sends an admitted bio on its way: dm-crypt's map, or the submitting context `ctx`.
    pub(super) fn route(&mut self, id: BioId, ctx: ActorId, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let dir = self.bios[id].dir;
        let waiter = matches!(self.bios[id].origin, Origin::Job(_)) && self.bios[id].sync;
        self.bios[id].enter(Stage::Other, now);
        match self.info.topology {
            Topology::Plain | Topology::Inline => {
                self.actors[ctx.index()].queue.push_back(id);
                self.kick(ctx, sched);
            }
            Topology::Queued => {
                // dm-crypt's map only queues the bio: it is accepted at once.
                self.bios[id].accepted = now;
                match dir {
                    Dir::Read => {
                        self.bios[id].enter(Stage::IoQueue, now);
                        let io = self.io_actor;
                        self.actors[io.index()].queue.push_back(id);
                        self.kick(io, sched);
                    }
                    Dir::Write => {
                        self.bios[id].enter(Stage::CryptQueue, now);
                        let sync = self.bios[id].sync;
                        self.policy_enqueue(
                            Work {
                                bio: id,
                                op: CryptOp::Encrypt,
                                sync,
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
        }
    }

    fn complete_bio(&mut self, id: BioId, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let mut bio = self.bios.remove(id);
        bio.enter(Stage::Other, now);
        if bio.bounce_pages > 0 {
            if self.pressure.is_some() {
                self.free_bounce(bio.bounce_pages, sched);
            } else {
                self.alloc.free_bounce(bio.bounce_pages);
            }
        }
        if let Some(p) = self.pressure.as_mut() {
            if bio.cache_pages > 0 {
                let n = u64::from(bio.cache_pages);
                p.mem.transition(
                    n,
                    super::memory::PageState::Filling,
                    super::memory::PageState::Clean,
                );
            }
            if matches!(bio.origin, Origin::Writeback(_)) {
                let n = u64::from(bio.bytes) / super::memory::PAGE_SIZE;
                p.mem.transition(
                    n,
                    super::memory::PageState::Writeback,
                    super::memory::PageState::Clean,
                );
            }
        }
        self.completed_total += 1;
        self.time_in_stage.completed(&bio, now);
        if bio.measured {
            let d = &mut self.dirs[bio.dir as usize];
            // Page-cache allocation (direct reclaim) happens inside the read call before
            // dm-crypt sees the bio: fio's sync engines count it in completion latency.
            let reclaim = bio.stage_ns[Stage::DirectReclaim.index()];
            let slat = bio.accepted.since(bio.issued).as_ns() - reclaim;
            let clat = now.since(bio.accepted).as_ns() + reclaim;
            d.obs.ios += 1;
            d.obs.bytes += u64::from(bio.bytes);
            d.obs.slat.record(slat);
            d.obs.clat.record(clat);
            d.obs.lat.record(slat + clat);
            for (h, &ns) in d.obs.stages.iter_mut().zip(bio.stage_ns.iter()) {
                h.record(ns);
            }
            d.window_ios += 1;
            d.window_bytes += u64::from(bio.bytes);
            self.clat_all.record(clat);
        }
        match bio.origin {
            Origin::Job(j) => self.job_completed(j, bio.bytes, sched),
            Origin::Writeback(w) => self.writeback_completed(w, bio.bytes, sched),
        }
    }

    // ----- congestion_wait ------------------------------------------------------------------

    /// `congestion_wait(class, timeout)`: sleep on the class's global queue until a clear of that
    /// class or the timeout. It never checks whether anything is congested.
    pub(super) fn congestion_wait(
        &mut self,
        who: CwWho,
        class: QueueClass,
        timeout: SimDuration,
        sched: &mut Scheduler<Event>,
    ) {
        let slot = self.cw_free.pop().unwrap_or_else(|| {
            self.cw_slots.push(None);
            (self.cw_slots.len() - 1) as u32
        });
        let timer = sched.schedule_in(timeout, Event::CongestionTimeout { waiter: slot });
        self.cw_slots[slot as usize] = Some(CwWaiter {
            who,
            class,
            since: sched.now(),
            timer,
        });
        self.cw_queues[class.index()].push(slot);
        if self.measuring {
            self.obs_cw[class.index()].waits += 1;
        }
    }

    fn congestion_clear(&mut self, class: QueueClass, sched: &mut Scheduler<Event>) {
        if self.cw_queues[class.index()].is_empty() {
            return;
        }
        let waiters = std::mem::take(&mut self.cw_queues[class.index()]);
        for &slot in &waiters {
            let w = self.cw_slots[slot as usize].expect("queued waiter slot is empty");
            sched.cancel(w.timer);
            self.end_wait(slot, true, sched);
        }
        let mut waiters = waiters;
        waiters.clear();
        if self.cw_queues[class.index()].is_empty() {
            self.cw_queues[class.index()] = waiters;
        }
    }

    fn congestion_timeout(&mut self, slot: u32, sched: &mut Scheduler<Event>) {
        let w = self.cw_slots[slot as usize].expect("timed-out waiter slot is empty");
        let q = &mut self.cw_queues[w.class.index()];
        let pos = q
            .iter()
            .position(|&s| s == slot)
            .expect("waiter not queued");
        q.swap_remove(pos);
        self.end_wait(slot, false, sched);
    }

    fn end_wait(&mut self, slot: u32, early: bool, sched: &mut Scheduler<Event>) {
        let w = self.cw_slots[slot as usize]
            .take()
            .expect("waiter slot is empty");
        self.cw_free.push(slot);
        let slept = sched.now().since(w.since.max(self.warmup).min(sched.now()));
        if self.measuring {
            let o = &mut self.obs_cw[w.class.index()];
            o.total += slept;
            if early {
                o.woken_early += 1;
            }
        }
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

    /// Whether writeback should back off: the disk beneath reports ASYNC congestion.
    pub(super) fn write_congested(&self) -> bool {
        self.sc.block.mode == QueueMode::Legacy && self.queue.is_congested(QueueClass::Async)
    }

    /// Counts an open-loop arrival dropped because its job had `iodepth` in flight.
    pub(super) fn dirs_dropped(&mut self, dir: Dir) {
        self.dirs[dir as usize].obs.dropped += 1;
    }

    // ----- statistics -----------------------------------------------------------------------

    fn sample(&mut self, sched: &mut Scheduler<Event>) {
        let secs = SAMPLE_INTERVAL.as_secs_f64();
        for d in &mut self.dirs {
            d.obs.bw_kib_s.push(d.window_bytes as f64 / 1024.0 / secs);
            d.obs.iops.push(d.window_ios as f64 / secs);
            d.window_bytes = 0;
            d.window_ios = 0;
        }
        sched.schedule_in(SAMPLE_INTERVAL, Event::Sample);
    }

    fn warmup_end(&mut self, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        self.measuring = true;
        if let Some(p) = self.pressure.as_mut() {
            p.mem.start_measuring(now);
        }
        self.cpu.sync(now);
        self.busy_at_warmup = self.cpu.busy_cpu_ns();
        self.queue.finish(now);
        self.block_at_warmup = self.queue.counters.clone();
        self.block_at_warmup.device_busy = self.device.busy_time(now);
        self.crypt_len_since = now;
        for d in &mut self.dirs {
            d.window_bytes = 0;
            d.window_ios = 0;
        }
    }

    /// Ends the run at `now` and returns what it measured.
    pub fn finish(mut self, now: SimTime, events: u64, saturated: bool) -> RunObs {
        self.crypt_len_tick(now);
        self.cpu.sync(now);
        self.queue.finish(now);
        let measured = now.saturating_since(self.warmup);
        let span = measured.as_ns().max(1);
        let mut totals = self.queue.counters.clone();
        totals.device_busy = self.device.busy_time(now);
        let block = totals.since(&self.block_at_warmup);
        // Waits still in progress count up to now.
        for w in self.cw_slots.iter().flatten() {
            self.obs_cw[w.class.index()].total += now.saturating_since(w.since.max(self.warmup));
        }
        let memory = self.pressure.take().map(|mut p| {
            if let Some(since) = p.kswapd.awake_since
                && p.mem.measuring()
            {
                p.mem.obs.kswapd_awake += now.saturating_since(since.max(self.warmup));
            }
            Box::new(p.mem.finish(now))
        });
        let finite_jobs = self.finite_observations();
        let finished = self.all_finite_jobs_done();
        let [r, w] = self.dirs;
        RunObs {
            policy: self.info.name.to_string(),
            measured,
            dirs: [r.obs, w.obs],
            clat_all: self.clat_all,
            depth_buckets: self.depth_buckets,
            congestion_waits: self.obs_cw,
            block,
            writeback: self.wb,
            ended: now,
            finite_jobs,
            memory,
            cpu_utilisation: (self.cpu.busy_cpu_ns() - self.busy_at_warmup) as f64
                / (span as f64 * f64::from(self.cpu.cpus())),
            crypt_queue_len_avg: self.crypt_len_area as f64 / span as f64,
            crypt_queue_len_max: self.crypt_len_max,
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
        }
    }

    /// Checks the run's invariants at its end, `now` (see [`super::invariants`]): Little's law
    /// per queue and for the whole system, conservation of requests, tags and bounce pages, and
    /// the clock.
    pub fn invariants(&mut self, now: SimTime) -> InvariantReport {
        self.integrate_occupancy(now);
        let mut issuers: Vec<(String, u64, u64)> = Vec::new();
        let mut job_bios = vec![0u64; self.jobs.len()];
        let mut writer_bytes = vec![0u64; self.writers.len()];
        for b in self.bios.iter() {
            match b.origin {
                Origin::Job(j) => job_bios[j as usize] += 1,
                Origin::Writeback(w) => writer_bytes[w as usize] += u64::from(b.bytes),
            }
        }
        for (j, found) in job_bios.into_iter().enumerate() {
            let claimed = u64::from(self.jobs[j].inflight());
            issuers.push((format!("job {j} (bios)"), claimed, found));
        }
        for (w, found) in writer_bytes.into_iter().enumerate() {
            let claimed = self.writers[w].under_writeback();
            issuers.push((format!("writer {w} (bytes)"), claimed, found));
        }
        let held: u64 = self.bios.iter().map(|b| u64::from(b.bounce_pages)).sum();
        let (pages_allocated, pages_freed) = match (&self.pressure, &self.alloc) {
            // With the zone, bounce pages are the zone's: allocated = held + reserve.
            (Some(p), _) => (
                held + u64::from(p.mem.reserve()),
                u64::from(p.mem.reserve()),
            ),
            (None, Allocator::Unlimited { allocated, freed }) => (*allocated, *freed),
        };
        let memory = self.memory_checks(held);
        let snapshot = Snapshot {
            end: now,
            integrated_to: self.occupancy.since(),
            clock_regressions: self.occupancy.regressions(),
            areas: self.occupancy.areas(),
            time_sums: self.time_in_stage.totals(self.bios.iter(), now),
            issued: self.issued_total,
            completed: self.completed_total,
            live: self.bios.live() as u64,
            issuers,
            pages_allocated,
            pages_freed,
            pages_held: held,
            tags_allocated: u64::from(self.queue.allocated(QueueClass::Sync))
                + u64::from(self.queue.allocated(QueueClass::Async)),
            tags_queued: u64::from(self.queue.queued()),
            tags_on_device: u64::from(self.device.inflight()),
            crypt_queued: self.policy.len() as u64,
            memory,
        };
        InvariantReport::check(&snapshot)
    }

    /// The checked queues' counts, read from their containers, indexed by [`Queue::index`].
    #[inline]
    fn occupancy_counts(&self) -> [u64; QUEUES] {
        let io = &self.actors[self.io_actor.index()];
        let io_hop = matches!(
            io.state,
            ActorState::Cpu {
                step: Step::IoHop,
                ..
            }
        );
        let mut n = [0; QUEUES];
        n[Queue::CryptQueue.index()] = self.policy.len() as u64;
        n[Queue::IoHop.index()] = io.queue.len() as u64 + u64::from(io_hop);
        n[Queue::PoolSleep.index()] = self.queue.sleepers() as u64;
        n[Queue::BlockQueue.index()] = u64::from(self.queue.queued());
        n[Queue::Device.index()] = u64::from(self.device.inflight());
        n[Queue::System.index()] = self.bios.live() as u64;
        n
    }

    /// Integrates the checked queues' counts up to `now`. Called before every event, when the
    /// counts are still those that held since the previous one.
    #[inline]
    fn integrate_occupancy(&mut self, now: SimTime) {
        if let Some(gap) = self.occupancy.advance(now) {
            let counts = self.occupancy_counts();
            self.occupancy.add(gap, counts);
        }
    }

    /// The issue trace asked for with [`World::with_trace`] (empty if none was).
    pub fn take_issue_trace(&mut self) -> IssueTrace {
        self.issue_trace.take().unwrap_or_default()
    }
}

impl Actor {
    fn new(kind: ActorKind) -> Self {
        Actor {
            kind,
            state: ActorState::Idle,
            batch: BatchState::default(),
            queue: VecDeque::new(),
            held: None,
        }
    }
}

fn schedule_device(wake: DeviceWake, sched: &mut Scheduler<Event>) {
    match wake {
        DeviceWake::DelayDone(t, bio) => sched.schedule_at(t, Event::DeviceDelay { bio }),
        DeviceWake::ChannelDone(t, chan) => sched.schedule_at(t, Event::DeviceDone { chan }),
    };
}

impl Model for World {
    type Event = Event;

    /// Allocation attempts and reclaim scanning, which happen inside events.
    fn work(&self) -> u64 {
        self.pressure.as_ref().map_or(0, |p| p.mem.work())
    }

    fn handle(&mut self, ev: Event, sched: &mut Scheduler<Event>) {
        self.integrate_occupancy(sched.now());
        if let Some(p) = self.pressure.as_mut() {
            p.mem.advance(sched.now());
        }
        match ev {
            Event::JobIssue { job } => self.job_issue(job, sched),
            Event::CpuDone => self.cpu_done(sched),
            Event::DeviceDelay { bio } => {
                if let Some(wake) = self.device.delay_done(bio, &self.bios, sched.now()) {
                    schedule_device(wake, sched);
                }
            }
            Event::DeviceDone { chan } => self.device_done(chan, sched),
            Event::UnplugTimer => {
                self.queue.unplug_timer();
                self.dispatch(sched);
            }
            Event::CfqIdle => {
                self.queue.idle_timer();
                self.dispatch(sched);
            }
            Event::PoolWake { actor } => self.pool_wake(actor, sched),
            Event::CongestionTimeout { waiter } => self.congestion_timeout(waiter, sched),
            Event::WriterTick { writer } => self.writer_tick(writer, sched),
            Event::FlusherRun { writer } => self.flusher_run(writer, sched),
            Event::EngineDone { bio } => self.engine_done(bio, sched),
            Event::BacklogUnblock { actor } => {
                self.actors[actor.index()].state = ActorState::Idle;
                self.kick(actor, sched);
            }
            Event::AtomicArrival { stream } => self.atomic_arrival(stream, sched),
            Event::AtomicFree { order } => self.atomic_free(order),
            Event::KswapdNapEnd => self.kswapd_nap_end(sched),
            Event::MempoolTimeout { actor } => self.mempool_timeout(actor, sched),
            Event::Sample => self.sample(sched),
            Event::WarmupEnd => self.warmup_end(sched),
        }
        self.timeline_event(sched.now());
    }
}

impl World {
    /// Whether actor `a` (a submitting context) can take another bio right now.
    pub(super) fn context_busy(&self, a: ActorId) -> bool {
        let actor = &self.actors[a.index()];
        actor.state != ActorState::Idle || !actor.queue.is_empty()
    }
}

impl World {
    /// A crypt thread or context that slept on the page pool, or napped after a partial
    /// clone, goes on with the write it holds.
    pub(super) fn bounce_resume(&mut self, a: ActorId, sched: &mut Scheduler<Event>) {
        debug_assert_eq!(self.actors[a.index()].state, ActorState::MemWait);
        self.actors[a.index()].state = ActorState::Idle;
        self.kick(a, sched);
    }
}

impl World {
    /// The memory model's conservation laws: the zone's books, and every page state against
    /// the holders that account for it.
    fn memory_checks(&self, bounce_held: u64) -> Vec<super::invariants::ConservationCheck> {
        use super::invariants::ConservationCheck as C;
        use super::memory::PAGE_SIZE;
        let Some(p) = &self.pressure else {
            return Vec::new();
        };
        let m = &p.mem;
        let pages = m.pages;
        let zone = m.check_conservation();
        let writer_dirty: u64 = self.writers.iter().map(|w| w.dirty_bytes()).sum();
        let writer_wb: u64 = self.writers.iter().map(|w| w.under_writeback()).sum();
        let filling = self.filling_in_bios() + p.reclaimer_pages();
        vec![
            C {
                law: "zone pages",
                detail: match &zone {
                    Ok(()) => format!(
                        "free {} + by state {} = total {}",
                        m.zone.free_pages(),
                        pages.total(),
                        m.zone.total_pages()
                    ),
                    Err(e) => e.clone(),
                },
                holds: zone.is_ok(),
            },
            C {
                law: "bounce pages (zone)",
                detail: format!(
                    "{} = page_pool reserve {} + held by bios {}",
                    pages.bounce,
                    m.reserve(),
                    bounce_held
                ),
                holds: pages.bounce == u64::from(m.reserve()) + bounce_held,
            },
            C {
                law: "dirty pages",
                detail: format!(
                    "{} = writers' dirty {} B / 4 KiB",
                    pages.dirty, writer_dirty
                ),
                holds: pages.dirty * PAGE_SIZE == writer_dirty,
            },
            C {
                law: "writeback pages",
                detail: format!(
                    "{} = writers' writeback {} B / 4 KiB",
                    pages.writeback, writer_wb
                ),
                holds: pages.writeback * PAGE_SIZE == writer_wb,
            },
            C {
                law: "filling pages",
                detail: format!(
                    "{} = reads and reclaimers holding {}",
                    pages.filling, filling
                ),
                holds: pages.filling == filling,
            },
        ]
    }
}
