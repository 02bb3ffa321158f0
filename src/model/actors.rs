//! The threads of the world and what they do with a bio: crypt threads pulling from the policy
//! (with the async crypto engine behind them), kcryptd_io's hop, and the submitting contexts of
//! jobs and flushers (which encrypt inline under `inline`).
//!
//! Each actor is idle, running on a CPU, asleep on a request pool, blocked on the crypto
//! backlog, or waiting for memory. [`World::kick`] lets an idle actor take its next piece of
//! work; [`World::actor_cpu_done`] moves it on when its CPU step ends.

use super::bio::{BioId, Dir, Origin};
use super::block::BatchState;
use super::crypt::CryptEvent;
use super::event::Event;
use super::ids::{ActorId, TaskOwner};
use super::mempool::Bounce;
use super::observe::Stage;
use super::policy::PolicyInfo;
use super::policy::{CryptOp, Topology, Work};
use super::workload::{Job, Writer};
use super::world::World;
use crate::engine::RngStreams;
use crate::engine::{Scheduler, SimDuration, SimTime};
use crate::model::config::{Scenario, WorkloadKind};
use std::collections::VecDeque;

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
    /// The submitting context of fake-gitk process `p` (its reads and its faults).
    ProcCtx(u32),
    /// The submitting context of reclaim's swap-out writes.
    SwapWriter,
}

/// What step a CPU task finishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    Crypt(CryptOp),
    IoHop,
    InlineEncrypt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ActorState {
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
pub(super) struct Held {
    pub(super) bio: BioId,
    /// A partial clone was just split off: nap before going on.
    pub(super) nap: bool,
}

/// One thread.
#[derive(Debug)]
pub(super) struct Actor {
    pub(super) kind: ActorKind,
    pub(super) state: ActorState,
    pub(super) batch: BatchState,
    /// Bios waiting for this actor (kcryptd_io's list, or a context's pending submissions).
    pub(super) queue: VecDeque<BioId>,
    /// A write it is gathering bounce pages for (memory model only).
    pub(super) held: Option<Held>,
}

impl Actor {
    pub(super) fn new(kind: ActorKind) -> Self {
        Actor {
            kind,
            state: ActorState::Idle,
            batch: BatchState::default(),
            queue: VecDeque::new(),
            held: None,
        }
    }
}

/// The actor table: crypt threads, kcryptd_io, then one context per job and per writer.
pub(super) struct Cast {
    pub(super) actors: Vec<Actor>,
    pub(super) crypt: Vec<ActorId>,
    pub(super) io: ActorId,
    pub(super) jobs: Vec<Job>,
    pub(super) writers: Vec<Writer>,
}

pub(super) fn cast(sc: &Scenario, info: &PolicyInfo, streams: &RngStreams) -> Cast {
    let mut actors = Vec::new();
    let next = |actors: &Vec<Actor>| ActorId(actors.len() as u32);
    let mut crypt = Vec::new();
    for i in 0..info.threads {
        crypt.push(next(&actors));
        actors.push(Actor::new(ActorKind::Crypt(i)));
    }
    let io = next(&actors);
    actors.push(Actor::new(ActorKind::Io));
    let (mut jobs, mut writers) = (Vec::new(), Vec::new());
    for wl in &sc.workloads {
        match &wl.kind {
            WorkloadKind::Fio(f) => {
                for copy in 0..f.numjobs {
                    let ctx = next(&actors);
                    actors.push(Actor::new(ActorKind::JobCtx(jobs.len() as u32)));
                    jobs.push(Job::new(&wl.name, copy, f, ctx, streams));
                }
            }
            WorkloadKind::BufferedWriter(b) => {
                let ctx = next(&actors);
                actors.push(Actor::new(ActorKind::FlusherCtx(writers.len() as u32)));
                writers.push(Writer::new(&wl.name, b, ctx, streams));
            }
            WorkloadKind::FakeGitk(_) => {}
        }
    }
    // fake-gitk processes and the swap writer: the memory model finds their contexts by kind.
    super::gitk::cast_contexts(sc, &mut actors);
    Cast {
        actors,
        crypt,
        io,
        jobs,
        writers,
    }
}

impl World {
    #[inline]
    pub(super) fn actor(&mut self, a: ActorId) -> &mut Actor {
        &mut self.actors[a.index()]
    }

    /// CPU cost of encrypting or decrypting `bio` on one CPU: its bytes at the cipher's rate,
    /// or a draw from the scenario's cost distribution.
    pub(super) fn crypto_cost(&self, op: CryptOp, bio: BioId) -> SimDuration {
        let c = &self.sc.crypt;
        let b = &self.bios[bio];
        if let Some(d) = &c.cost {
            return d.quantile(b.crypt_u);
        }
        crate::model::physics::crypto_cost(c, u64::from(b.bytes), op == CryptOp::Encrypt)
    }

    /// Lets an idle actor pick up its next piece of work.
    pub(super) fn kick(&mut self, a: ActorId, sched: &mut Scheduler<Event>) {
        if self.actor(a).state != ActorState::Idle {
            return;
        }
        match self.actor(a).kind {
            ActorKind::Crypt(t) => self.kick_crypt(a, t, sched),
            ActorKind::Io => {
                let Some(bio) = self.actor(a).queue.pop_front() else {
                    return;
                };
                self.actor(a).state = ActorState::Cpu {
                    bio,
                    step: Step::IoHop,
                };
                self.start_cpu(TaskOwner::Actor(a), self.sc.crypt.hop_cost, sched);
            }
            ActorKind::JobCtx(_)
            | ActorKind::FlusherCtx(_)
            | ActorKind::ProcCtx(_)
            | ActorKind::SwapWriter => self.kick_context(a, sched),
        }
    }

    /// Crypt thread `t` (actor `a`) takes its held write or the policy's next item.
    fn kick_crypt(&mut self, a: ActorId, t: usize, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let (bio, op, hop) = if let Some(h) = self.actor(a).held.take() {
            if h.nap {
                // A partial clone went out: nap before allocating the rest.
                self.actor(a).held = Some(Held { nap: false, ..h });
                self.actor(a).state = ActorState::MemWait;
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
        if op == CryptOp::Encrypt && self.memory.is_zone() {
            let split = matches!(self.bios[bio].origin, Origin::Writeback(_));
            match self.bounce_alloc(a, bio, split, sched) {
                Bounce::Ready => {}
                Bounce::Asleep => {
                    self.actor(a).held = Some(Held { bio, nap: false });
                    self.actor(a).state = ActorState::MemWait;
                    return;
                }
                Bounce::Partial(child) => {
                    self.actor(a).held = Some(Held { bio, nap: true });
                    bio = child;
                }
            }
        }
        let cost = if self.engine.is_some() {
            hop + self.sc.crypt.per_sector_cost * self.bios[bio].sectors()
        } else {
            hop + self.crypto_cost(op, bio)
        };
        self.actor(a).state = ActorState::Cpu {
            bio,
            step: Step::Crypt(op),
        };
        self.start_cpu(TaskOwner::Actor(a), cost, sched);
    }

    /// A submitting context submits its pending bios until one blocks or needs the CPU.
    fn kick_context(&mut self, a: ActorId, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let inline = self.info.topology == Topology::Inline;
        while self.actor(a).state == ActorState::Idle {
            let held = self.actor(a).held.take().map(|h| h.bio);
            let Some(bio) = held.or_else(|| self.actor(a).queue.pop_front()) else {
                break;
            };
            let encrypt = inline && self.bios[bio].dir == Dir::Write;
            if encrypt
                && self.memory.is_zone()
                && self.bounce_alloc(a, bio, false, sched) == Bounce::Asleep
            {
                self.actor(a).held = Some(Held { bio, nap: false });
                self.actor(a).state = ActorState::MemWait;
                break;
            }
            if encrypt {
                let cost = self.crypto_cost(CryptOp::Encrypt, bio);
                self.bios[bio].enter(Stage::CryptService, now);
                self.actor(a).state = ActorState::Cpu {
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

    /// A submitting context has nothing in hand: a flusher may continue writing back.
    fn context_idle(&mut self, a: ActorId, sched: &mut Scheduler<Event>) {
        let actor = &self.actors[a.index()];
        if actor.state == ActorState::Idle
            && actor.queue.is_empty()
            && let ActorKind::FlusherCtx(w) = actor.kind
        {
            let ev = super::workload::WorkloadEvent::FlusherRun { writer: w };
            sched.schedule_in(SimDuration::ZERO, Event::Workload(ev));
        }
    }

    /// Actor `a`'s CPU step ended.
    pub(super) fn actor_cpu_done(&mut self, a: ActorId, sched: &mut Scheduler<Event>) {
        let ActorState::Cpu { bio, step } = self.actor(a).state else {
            unreachable!("CPU task finished for an actor not on a CPU")
        };
        self.actor(a).state = ActorState::Idle;
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
                self.memory.grant_unlimited_bounce(&mut self.bios[bio]);
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
                self.memory.grant_unlimited_bounce(&mut self.bios[bio]);
                if self.try_submit(a, bio, sched) {
                    self.bios[bio].accepted = now;
                }
            }
        }
        self.kick(a, sched);
    }

    fn block_on_backlog(&mut self, a: ActorId, until: SimTime, sched: &mut Scheduler<Event>) {
        self.actor(a).state = ActorState::Backlog;
        sched.schedule_at(until, Event::Crypt(CryptEvent::BacklogUnblock { actor: a }));
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
        let s = engine.submit(self.bios[bio].sectors(), now);
        sched.schedule_at(s.finish, Event::Crypt(CryptEvent::EngineDone { bio }));
        s.unblock
    }

    /// The crypt side's events.
    pub(super) fn crypt_event(&mut self, ev: CryptEvent, sched: &mut Scheduler<Event>) {
        match ev {
            CryptEvent::EngineDone { bio } => match self.bios[bio].dir {
                Dir::Read => self.complete_bio(bio, sched),
                Dir::Write => {
                    // 2.6.32: an async encryption completion hands the clone to kcryptd_io.
                    self.bios[bio].enter(Stage::IoQueue, sched.now());
                    self.queue_for_io_thread(bio, sched);
                }
            },
            CryptEvent::BacklogUnblock { actor } => {
                self.actor(actor).state = ActorState::Idle;
                self.kick(actor, sched);
            }
        }
    }

    /// Queues `bio` for kcryptd_io.
    pub(super) fn queue_for_io_thread(&mut self, bio: BioId, sched: &mut Scheduler<Event>) {
        let io = self.io_actor;
        self.actor(io).queue.push_back(bio);
        self.kick(io, sched);
    }

    // ----- the policy's crypt queue ---------------------------------------------------------

    /// Queues crypt work and lets every crypt thread look for it.
    pub(super) fn policy_enqueue(&mut self, work: Work, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        self.rec.crypt_len_tick(now, self.policy.len());
        self.policy.enqueue(work);
        self.timeline_crypt(now);
        self.rec.crypt_len_grew(self.policy.len());
        for i in 0..self.crypt_actors.len() {
            let a = self.crypt_actors[i];
            self.kick(a, sched);
        }
    }

    fn policy_next(&mut self, thread: usize, now: SimTime) -> Option<Work> {
        self.rec.crypt_len_tick(now, self.policy.len());
        let work = self.policy.next(thread);
        if work.is_some() {
            self.timeline_crypt(now);
        }
        work
    }

    /// Whether actor `a` (a submitting context) can take another bio right now.
    pub(super) fn context_busy(&self, a: ActorId) -> bool {
        let actor = &self.actors[a.index()];
        actor.state != ActorState::Idle || !actor.queue.is_empty()
    }

    /// A crypt thread or context that slept on the page pool, or napped after a partial
    /// clone, goes on with the write it holds.
    pub(super) fn bounce_resume(&mut self, a: ActorId, sched: &mut Scheduler<Event>) {
        debug_assert_eq!(self.actor(a).state, ActorState::MemWait);
        self.actor(a).state = ActorState::Idle;
        self.kick(a, sched);
    }
}
