//! The world's side of `crypt/threads.rs`: the crypt threads, kcryptd_io and the submitting
//! contexts taking work, running it on a CPU and passing bios on.

use crate::engine::{Scheduler, SimDuration, SimTime};
use crate::model::base::bio::{BioId, Dir, Origin};
use crate::model::base::ids::{ActorId, TaskOwner};
use crate::model::base::obs::Stage;
use crate::model::crypt::engine::CryptEvent;
use crate::model::crypt::policy::{CryptOp, Topology, Work};
use crate::model::crypt::threads::*;
use crate::model::mm::mempool::Bounce;
use crate::model::world::World;
use crate::model::world::event::Event;

impl World {
    #[inline]
    pub(in crate::model) fn actor(&mut self, a: ActorId) -> &mut Actor {
        &mut self.actors[a.index()]
    }

    /// CPU cost of encrypting or decrypting `bio` on one CPU: its bytes at the cipher's rate,
    /// or a draw from the scenario's cost distribution.
    pub(in crate::model) fn crypto_cost(&self, op: CryptOp, bio: BioId) -> SimDuration {
        let c = &self.sc.crypt;
        let b = &self.bios[bio];
        if let Some(d) = &c.cost {
            return d.quantile(b.crypt_u);
        }
        crate::model::base::physics::crypto_cost(c, u64::from(b.bytes), op == CryptOp::Encrypt)
    }

    /// Lets an idle actor pick up its next piece of work.
    pub(in crate::model) fn kick(&mut self, a: ActorId, sched: &mut Scheduler<Event>) {
        if self.actor(a).state != ActorState::Idle {
            return;
        }
        match self.actor(a).kind {
            ActorKind::Crypt(t) => self.kick_crypt(a, t, sched),
            ActorKind::Io | ActorKind::AsyncIo => {
                let actor = self.actor(a);
                let Some(bio) = actor.queue.pop_front() else {
                    return;
                };
                // Mason's atomic_dec_and_test on the queue's counter as the work starts.
                actor.emptied = actor.queue.is_empty();
                actor.state = ActorState::Cpu {
                    bio,
                    step: Step::IoHop,
                };
                // The io thread's hop, then its submission of the clone, in one CPU step.
                let cost = self.sc.crypt.hop_cost + self.sc.crypt.clone_submit_cost;
                self.start_cpu(TaskOwner::Actor(a), cost, sched);
            }
            ActorKind::JobCtx(_)
            | ActorKind::FlusherCtx(_)
            | ActorKind::ProcCtx(_)
            | ActorKind::SwapWriter => self.kick_context(a, sched),
            ActorKind::DmcryptWrite => self.kick_write_thread(a, sched),
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
            self.enter(work.bio, Stage::CryptService, now);
            self.actor(a).waker = work.cpu;
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
        let inline = self.writes_inline();
        while self.actor(a).state == ActorState::Idle {
            let held = self.actor(a).held.take().map(|h| h.bio);
            let Some(bio) = held.or_else(|| self.actor(a).queue.pop_front()) else {
                self.start_syscall(a, sched);
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
                // Encrypted inline, then the clone submitted from the same context.
                let cost =
                    self.crypto_cost(CryptOp::Encrypt, bio) + self.sc.crypt.clone_submit_cost;
                self.enter(bio, Stage::CryptService, now);
                self.actor(a).state = ActorState::Cpu {
                    bio,
                    step: Step::InlineEncrypt,
                };
                self.start_cpu(TaskOwner::Actor(a), cost, sched);
            } else if !self.start_clone_submit(a, bio, sched) && self.try_submit(a, bio, sched) {
                self.bios[bio].accepted = now;
            }
        }
        self.context_idle(a, sched);
    }

    /// A job's process with nothing left to submit runs the submission path of its next issued
    /// I/O on a CPU (`crypt.submit_cost`), if it has one.
    fn start_syscall(&mut self, a: ActorId, sched: &mut Scheduler<Event>) {
        if let Some(bio) = self.actor(a).syscalls.pop_front() {
            self.actor(a).state = ActorState::Cpu {
                bio,
                step: Step::Submit,
            };
            self.start_cpu(TaskOwner::Actor(a), self.sc.crypt.submit_cost, sched);
        }
    }

    /// Starts actor `a`'s CPU step of submitting dm-crypt's clone `bio` to the disk
    /// (`crypt.clone_submit_cost`), if the clone costs anything: not under the plain table,
    /// which has no clone. Returns whether it started one.
    fn start_clone_submit(&mut self, a: ActorId, bio: BioId, sched: &mut Scheduler<Event>) -> bool {
        let cost = self.sc.crypt.clone_submit_cost;
        if cost.is_zero() || self.info.topology == Topology::Plain {
            return false;
        }
        self.actor(a).state = ActorState::Cpu {
            bio,
            step: Step::CloneSubmit,
        };
        self.start_cpu(TaskOwner::Actor(a), cost, sched);
        true
    }

    /// A submitting context has nothing in hand: a flusher may continue writing back.
    fn context_idle(&mut self, a: ActorId, sched: &mut Scheduler<Event>) {
        let actor = &self.actors[a.index()];
        if actor.state == ActorState::Idle
            && actor.queue.is_empty()
            && let ActorKind::FlusherCtx(w) = actor.kind
        {
            let ev = crate::model::workload::WorkloadEvent::FlusherRun { writer: w };
            sched.schedule_in(SimDuration::ZERO, Event::Workload(ev));
        }
    }

    /// Actor `a`'s CPU step ended.
    pub(in crate::model) fn actor_cpu_done(&mut self, a: ActorId, sched: &mut Scheduler<Event>) {
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
                } else if self.async_io_actor.is_some()
                    || (self.write_actor.is_some() && !self.worker_submits_writes())
                {
                    // Mason V3 and 5.8: kcryptd never submits; an io thread does.
                    self.enter(bio, Stage::IoQueue, now);
                    self.queue_for_io_thread(bio, sched);
                } else if !self.start_clone_submit(a, bio, sched) {
                    self.try_submit(a, bio, sched);
                }
            }
            Step::WriteWake => self.take_write_tree(a),
            Step::Submit => self.job_enter(bio, a, sched),
            Step::CloneSubmit => {
                let context = matches!(
                    self.actor(a).kind,
                    ActorKind::JobCtx(_)
                        | ActorKind::FlusherCtx(_)
                        | ActorKind::ProcCtx(_)
                        | ActorKind::SwapWriter
                );
                let submitted = self.try_submit(a, bio, sched);
                if submitted && context {
                    self.bios[bio].accepted = now;
                }
                // dmcrypt_write ran through its batch: still running, it takes the tree
                // kcryptd filled meanwhile at once (no wake-up hop).
                let w = self.actor(a);
                if submitted && w.kind == ActorKind::DmcryptWrite && w.queue.is_empty() {
                    self.take_write_tree(a);
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
    pub(in crate::model) fn crypt_event(&mut self, ev: CryptEvent, sched: &mut Scheduler<Event>) {
        match ev {
            CryptEvent::EngineDone { bio } => match self.bios[bio].dir {
                Dir::Read => self.complete_bio(bio, sched),
                Dir::Write => {
                    // 2.6.32: an async encryption completion hands the clone to kcryptd_io.
                    self.enter(bio, Stage::IoQueue, sched.now());
                    self.queue_for_io_thread(bio, sched);
                }
            },
            CryptEvent::BacklogUnblock { actor } => {
                self.actor(actor).state = ActorState::Idle;
                self.kick(actor, sched);
            }
        }
    }

    /// Queues `bio` for the thread that submits it: kcryptd_io; under Mason's io queues
    /// kcryptd_async_io unless the bio carries `BIO_RW_SYNCIO`; under 5.8, a write for
    /// `dmcrypt_write`'s tree.
    pub(in crate::model) fn queue_for_io_thread(
        &mut self,
        bio: BioId,
        sched: &mut Scheduler<Event>,
    ) {
        if let Some(w) = self.write_actor {
            let offset = self.bios[bio].offset;
            let actor = self.actor(w);
            actor.tree_seq += 1;
            let key = (offset, actor.tree_seq);
            actor.tree.insert(key, bio);
            self.kick(w, sched);
            return;
        }
        let io = match self.async_io_actor {
            Some(x) if !self.bios[bio].syncio => x,
            _ => self.io_actor,
        };
        self.actor(io).queue.push_back(bio);
        self.kick(io, sched);
    }

    /// Whether actor `a`'s submission unplugs the disk: a job's context always (it waits next),
    /// a flusher never; kcryptd and kcryptd_io under `crypt.unplug_after_submit`; Mason's io
    /// threads when their queue emptied (the async one only with no sync bio queued);
    /// `dmcrypt_write` at the end of its batch (`blk_finish_plug`).
    pub(in crate::model) fn submit_unplugs(&self, a: ActorId) -> bool {
        let actor = &self.actors[a.index()];
        let after = self.sc.crypt.unplug_after_submit;
        let mason = self.async_io_actor.is_some();
        match actor.kind {
            ActorKind::Crypt(_) => after,
            ActorKind::Io => after || (mason && actor.emptied),
            ActorKind::AsyncIo => {
                after || (actor.emptied && self.actors[self.io_actor.index()].queue.is_empty())
            }
            ActorKind::DmcryptWrite => actor.queue.is_empty(),
            ActorKind::JobCtx(_) | ActorKind::ProcCtx(_) => true,
            ActorKind::FlusherCtx(_) | ActorKind::SwapWriter => false,
        }
    }

    /// `dmcrypt_write`: submits its batch in order until the pool puts it to sleep. With none
    /// left it looks at the tree, as `dmcrypt_write()` does under its lock: a thread that was
    /// running (it just submitted) takes a tree kcryptd filled meanwhile at once; a sleeping
    /// one is woken (one hop) and takes the tree whole only when it runs, so every write
    /// inserted during its wake-up joins the same sorted batch ([`Step::WriteWake`]).
    fn kick_write_thread(&mut self, a: ActorId, sched: &mut Scheduler<Event>) {
        let mut running = false;
        while self.actor(a).state == ActorState::Idle {
            if let Some(bio) = self.actor(a).queue.pop_front() {
                if !self.start_clone_submit(a, bio, sched) {
                    self.try_submit(a, bio, sched);
                }
                running = true;
                continue;
            }
            let Some((_, &first)) = self.actor(a).tree.first_key_value() else {
                return;
            };
            if running {
                self.take_write_tree(a);
                continue;
            }
            self.actor(a).state = ActorState::Cpu {
                bio: first,
                step: Step::WriteWake,
            };
            self.start_cpu(TaskOwner::Actor(a), self.sc.crypt.hop_cost, sched);
        }
    }

    /// `dmcrypt_write` swaps out its whole tree: the writes, in sector order, become its batch.
    fn take_write_tree(&mut self, a: ActorId) {
        let actor = self.actor(a);
        let tree = std::mem::take(&mut actor.tree);
        actor.queue.extend(tree.into_values());
    }

    // ----- the policy's crypt queue ---------------------------------------------------------

    /// Queues crypt work and lets every crypt thread look for it.
    pub(in crate::model) fn policy_enqueue(&mut self, work: Work, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        self.rec.crypt_len_tick(now, self.policy.len());
        let before: Vec<usize> = match self.tracer {
            Some(_) => (0..self.policy.queue_names().len())
                .map(|q| self.policy.queue_len(q))
                .collect(),
            None => Vec::new(),
        };
        self.policy.enqueue(work);
        if self.tracer.is_some() {
            self.trace_crypt_queued(work.bio, &before);
        }
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
    pub(in crate::model) fn context_busy(&self, a: ActorId) -> bool {
        let actor = &self.actors[a.index()];
        actor.state != ActorState::Idle || !actor.queue.is_empty()
    }

    /// A crypt thread or context that slept on the page pool, or napped after a partial
    /// clone, goes on with the write it holds.
    pub(in crate::model) fn bounce_resume(&mut self, a: ActorId, sched: &mut Scheduler<Event>) {
        debug_assert_eq!(self.actor(a).state, ActorState::MemWait);
        self.actor(a).state = ActorState::Idle;
        self.kick(a, sched);
    }
}

impl World {
    /// Bios held by the io threads other than kcryptd_io (Mason's kcryptd_async_io, 5.8's
    /// `dmcrypt_write`), queued or in their hop: the rest of [`Stage::IoQueue`]'s occupancy.
    pub(in crate::model) fn io_thread_occupancy(&self) -> u64 {
        let mut n = 0;
        for a in [self.async_io_actor, self.write_actor]
            .into_iter()
            .flatten()
        {
            let actor = &self.actors[a.index()];
            let hop = matches!(
                actor.state,
                ActorState::Cpu {
                    step: Step::IoHop | Step::CloneSubmit,
                    ..
                }
            );
            n += (actor.queue.len() + actor.tree.len()) as u64 + u64::from(hop);
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Limits, run};
    use crate::model::base::bio::Bio;
    use crate::model::base::obs::RunObs;
    use crate::model::crypt::policy;

    /// A world of `policy` for `yaml` with its workloads removed, for scripting bios by hand.
    fn quiet(yaml: &str, policy: &str, sched: &mut Scheduler<Event>) -> World {
        let mut sc = crate::scenario::load_str("test.yaml", yaml).expect("valid test scenario");
        sc.workloads.clear();
        World::new(&sc, policy::find(policy).expect("registered"), 0, sched)
    }

    /// Runs `w` up to `horizon` (at most 100 events: a scripted test's few).
    fn run_to(w: &mut World, sched: &mut Scheduler<Event>, horizon: SimTime) {
        run(
            w,
            sched,
            Limits {
                horizon,
                max_work: 100,
            },
        );
    }

    fn runs(yaml: &str) -> Vec<RunObs> {
        let sc = crate::scenario::load_str("test.yaml", yaml).expect("valid test scenario");
        sc.policies
            .iter()
            .map(|p| {
                let r = crate::model::run_policy(&sc, policy::find(p).expect("registered"));
                assert!(r.violations.is_empty(), "{p}: {:?}", r.violations);
                r.obs
            })
            .collect()
    }

    const IDLE: &str = "
duration: 10s
cpus: 4
device: { kind: generic, service: 1ms }
block: { elevator: fifo }
crypt: { cipher: null, hop_cost: 2us }
policies: [fifo]
workloads:
  - { kind: fio, rw: randread, iodepth: 1 }
";

    fn in_hop(w: &World, a: ActorId) -> Option<BioId> {
        match w.actors[a.index()].state {
            ActorState::Cpu {
                bio,
                step: Step::IoHop,
            } => Some(bio),
            _ => None,
        }
    }

    #[test]
    fn mason_v3_routes_on_syncio_and_never_submits_from_kcryptd() {
        let mut sched = Scheduler::new();
        let mut w = quiet(IDLE, "mason-v3", &mut sched);
        let asy = w.async_io_actor.expect("mason-v3 starts kcryptd_async_io");
        let (io, now) = (w.io_actor, sched.now());
        // A plain READ (sync for the request pool, no BIO_RW_SYNCIO) takes the async queue.
        let read = w.admit(Bio::new(Dir::Read, true, 4096, 0, Origin::Job(0), now));
        assert!(!w.bios[read].syncio);
        w.route(read, io, &mut sched);
        assert_eq!(in_hop(&w, asy), Some(read));
        assert_eq!(in_hop(&w, io), None);
        // A sync write (WRITE_ODIRECT / WRITE_SYNC) is encrypted by kcryptd, then submitted by
        // kcryptd_io; an async write by kcryptd_async_io (queued behind the read's hop).
        let sync_w = w.admit(Bio::new(Dir::Write, true, 4096, 8192, Origin::Job(0), now));
        let async_w = w.admit(Bio::new(
            Dir::Write,
            false,
            4096,
            1 << 20,
            Origin::Job(0),
            now,
        ));
        w.route(sync_w, io, &mut sched);
        w.route(async_w, io, &mut sched);
        let crypt = w.crypt_actors[0];
        let horizon = now + SimDuration::from_ns(1);
        run_to(&mut w, &mut sched, horizon);
        // kcryptd encrypted the first write (null cipher: only the 2 µs hop), not yet the second.
        assert_eq!(w.bios[sync_w].stage, Stage::CryptService);
        let horizon = now + SimDuration::from_us(3);
        run_to(&mut w, &mut sched, horizon);
        assert_eq!(in_hop(&w, io), Some(sync_w), "sync write to kcryptd_io");
        assert!(
            matches!(w.actors[crypt.index()].state, ActorState::Cpu { bio, .. } if bio == async_w)
        );
        let horizon = now + SimDuration::from_us(5);
        run_to(&mut w, &mut sched, horizon);
        assert_eq!(
            in_hop(&w, asy),
            Some(async_w),
            "async write to kcryptd_async_io"
        );
    }

    #[test]
    fn mason_v3_async_thread_unplugs_only_with_no_sync_bio_queued() {
        let mut sched = Scheduler::new();
        let mut w = quiet(IDLE, "mason-v3", &mut sched);
        let asy = w.async_io_actor.expect("kcryptd_async_io");
        let io = w.io_actor;
        let now = sched.now();
        let b = w.admit(Bio::new(Dir::Read, true, 4096, 0, Origin::Job(0), now));
        // Its queue emptied when it took the bio: it unplugs, unless a sync bio waits.
        w.actors[asy.index()].emptied = true;
        assert!(w.submit_unplugs(asy));
        w.actors[io.index()].queue.push_back(b);
        assert!(!w.submit_unplugs(asy));
        // kcryptd_io unplugs when its own queue emptied, whatever the async queue holds.
        w.actors[io.index()].queue.clear();
        w.actors[io.index()].emptied = true;
        w.actors[asy.index()].queue.push_back(b);
        assert!(w.submit_unplugs(io));
        w.actors[io.index()].emptied = false;
        assert!(!w.submit_unplugs(io));
        // Without Mason's queues kcryptd_io never unplugs on its own (fifo).
        let mut sched = Scheduler::new();
        let mut f = quiet(IDLE, "fifo", &mut sched);
        let fio = f.io_actor;
        f.actors[fio.index()].emptied = true;
        assert!(!f.submit_unplugs(fio));
        assert!(f.async_io_actor.is_none() && f.write_actor.is_none());
    }

    #[test]
    fn mason_v3_unplugs_when_an_io_queue_empties() {
        // fifo: kcryptd_io submits after the reader's unplug, so each read waits for the
        // unplug timer (one jiffy, 4 ms at HZ=250). mason-v3: the read is alone in the async
        // queue with no sync bio queued, so kcryptd_async_io unplugs after submitting it.
        let obs = runs(&IDLE.replace("[fifo]", "[fifo, mason-v3, split]"));
        let mean_ms = |o: &RunObs| o.dirs[0].lat.mean() / 1e6;
        assert!(
            (mean_ms(&obs[0]) - 5.0).abs() < 0.02,
            "{}",
            mean_ms(&obs[0])
        );
        assert!(
            (mean_ms(&obs[1]) - 1.0).abs() < 0.02,
            "{}",
            mean_ms(&obs[1])
        );
        assert_eq!(obs[1].block.timer_unplugs, 0);
        // The idealised split has no unplug rule: its reads still wait for the timer.
        assert!(obs[2].block.timer_unplugs > 1000);
    }

    const STOCK: &str = "
duration: 10s
cpus: 4
device: { kind: generic, service: 1ms, channels: 8 }
block: { mode: blk-mq }
crypt: { cipher: null, hop_cost: 30us }
policies: [stock-5.8, inline, fifo]
workloads:
  - { kind: fio, rw: randread, iodepth: 1 }
  - { kind: fio, rw: randwrite, iodepth: 1, think: 1ms }
";

    /// Three QD1 readers on one CPU, each paying 100 µs of submission path per read before a
    /// 10 µs device: on a CPU they take turns, at most 10,000 reads a second between them;
    /// a mere delay would let each do one per 110 µs (27,000 a second).
    const SUBMIT: &str = "
duration: 2s
cpus: 1
device: { kind: generic, service: 10us, channels: 8 }
block: { mode: blk-mq }
crypt: { cipher: null, submit_cost: 100us }
policies: [none, stock-5.8]
workloads:
  - { kind: fio, rw: randread, iodepth: 1, numjobs: 3 }
";

    #[test]
    fn the_submission_cost_occupies_a_cpu_before_the_bio_enters_the_kernel() {
        for (i, o) in runs(SUBMIT).iter().enumerate() {
            let iops = o.dirs[0].ios as f64 / 2.0;
            assert!(iops <= 10_000.0 * 1.01 && iops > 9_000.0, "{i}: {iops}");
            // Each read's submission (fio's slat) holds its 100 µs, stretched by sharing.
            assert!(
                o.dirs[0].slat.mean() >= 100e3,
                "{i}: {}",
                o.dirs[0].slat.mean()
            );
        }
        // Scripted: a job's issue puts its process on the CPU, and the bio enters the block
        // layer only when that step ends.
        let mut sched = Scheduler::new();
        let sc = crate::scenario::load_str("test.yaml", SUBMIT).expect("valid test scenario");
        let mut w = World::new(
            &sc,
            policy::find("none").expect("registered"),
            0,
            &mut sched,
        );
        w.start_workloads(&mut sched);
        let ctx = w.jobs[0].ctx;
        assert!(matches!(
            w.actors[ctx.index()].state,
            ActorState::Cpu {
                step: Step::Submit,
                ..
            }
        ));
        assert_eq!(w.cpu.runnable(), 3, "one submission task per process");
        assert_eq!(
            w.device.inflight(),
            0,
            "nothing reaches the device before its syscall"
        );
    }

    #[test]
    fn stock_5_8_reads_hop_once_after_the_device_and_writes_pass_dmcrypt_write() {
        let obs = runs(STOCK);
        let us = |o: &RunObs, d: usize, s: Stage| o.dirs[d].stages[s.index()].mean() / 1e3;
        let lat = |o: &RunObs, d: usize| o.dirs[d].lat.mean() / 1e3;
        // Stock: no io hop before submission; one 30 µs kcryptd hop to decrypt.
        assert_eq!(us(&obs[0], 0, Stage::IoQueue), 0.0);
        assert!(
            (lat(&obs[0], 0) - 1030.0).abs() < 1.0,
            "{}",
            lat(&obs[0], 0)
        );
        // Inline: no hop at all. fifo (2.6.32): kcryptd_io's hop, then kcryptd's.
        assert!(
            (lat(&obs[1], 0) - 1000.0).abs() < 1.0,
            "{}",
            lat(&obs[1], 0)
        );
        assert!(
            (lat(&obs[2], 0) - 1060.0).abs() < 1.0,
            "{}",
            lat(&obs[2], 0)
        );
        // Stock writes: kcryptd's hop to encrypt, dmcrypt_write's wake to submit.
        assert!((us(&obs[0], 1, Stage::IoQueue) - 30.0).abs() < 0.5);
        assert!(
            (lat(&obs[0], 1) - 1060.0).abs() < 1.0,
            "{}",
            lat(&obs[0], 1)
        );
    }

    #[test]
    fn dmcrypt_write_takes_its_tree_whole_and_submits_in_sector_order() {
        let mut sched = Scheduler::new();
        let mut w = quiet(STOCK, "stock-5.8", &mut sched);
        assert_eq!(w.crypt_actors.len(), 4, "one kcryptd worker per CPU");
        let wr = w.write_actor.expect("stock-5.8 starts dmcrypt_write");
        let now = sched.now();
        // The thread is busy: encrypted writes gather in its tree in arrival order.
        w.actors[wr.index()].state = ActorState::MemWait;
        let mut ids = Vec::new();
        for sector in [300u64, 100, 200, 100] {
            let b = Bio::new(Dir::Write, false, 4096, sector * 512, Origin::Job(0), now);
            let id = w.admit(b);
            w.queue_for_io_thread(id, &mut sched);
            ids.push(id);
        }
        assert_eq!(w.actors[wr.index()].tree.len(), 4);
        // Swapping the tree out gives sector order, equal sectors by arrival.
        let mut copy = w.actors[wr.index()].tree.clone();
        w.take_write_tree(wr);
        let batch: Vec<BioId> = w.actors[wr.index()].queue.drain(..).collect();
        assert_eq!(batch, vec![ids[1], ids[3], ids[2], ids[0]]);
        std::mem::swap(&mut w.actors[wr.index()].tree, &mut copy);
        // Asleep, it is woken and pays its hop before it takes the tree, so a write encrypted
        // during the wake-up joins the same batch.
        w.actors[wr.index()].state = ActorState::Idle;
        w.kick(wr, &mut sched);
        assert!(matches!(
            w.actors[wr.index()].state,
            ActorState::Cpu {
                step: Step::WriteWake,
                ..
            }
        ));
        assert!(w.actors[wr.index()].queue.is_empty());
        let late = w.admit(Bio::new(
            Dir::Write,
            false,
            4096,
            150 * 512,
            Origin::Job(0),
            now,
        ));
        w.queue_for_io_thread(late, &mut sched);
        ids.push(late);
        assert_eq!(w.actors[wr.index()].tree.len(), 5);
        // After the wake's 30 µs hop it has submitted them all to the device.
        let horizon = now + SimDuration::from_us(31);
        run_to(&mut w, &mut sched, horizon);
        assert!(w.actors[wr.index()].queue.is_empty());
        assert!(ids.iter().all(|&b| w.bios[b].stage == Stage::Device));
    }

    /// dmcrypt_write pays `clone_submit_cost` per clone, one after the other on its one CPU;
    /// under `submit_from_crypt_cpus` each kcryptd worker pays it for its own write, in
    /// parallel.
    #[test]
    fn clones_cost_their_submitter_cpu_time_one_by_one_in_dmcrypt_write() {
        let yaml = STOCK.replace("hop_cost: 30us", "hop_cost: 30us, clone_submit_cost: 1us");
        let mut sched = Scheduler::new();
        let mut w = quiet(&yaml, "stock-5.8", &mut sched);
        let wr = w.write_actor.expect("dmcrypt_write");
        let now = sched.now();
        for sector in [400u64, 100, 300, 200] {
            let b = Bio::new(Dir::Write, false, 4096, sector * 512, Origin::Job(0), now);
            let id = w.admit(b);
            w.queue_for_io_thread(id, &mut sched);
        }
        // Woken (30 µs), then 1 µs per clone: the k-th clone is in the block layer at
        // 30 + k µs, and the batch is plugged until the last.
        let submitted = |w: &World| w.queue.queued() + w.device.inflight();
        for (at_ns, n) in [(30_500, 0), (31_500, 1), (33_500, 3), (34_500, 4)] {
            let horizon = now + SimDuration::from_ns(at_ns);
            run_to(&mut w, &mut sched, horizon);
            assert_eq!(submitted(&w), n, "at {at_ns} ns");
        }
        assert_eq!(w.actors[wr.index()].state, ActorState::Idle);
        assert_eq!(w.device.inflight(), 4, "the plug is released with the last");
        // The same clone cost on the plain table: no clone, no cost.
        let mut sched = Scheduler::new();
        let mut p = quiet(&yaml, "none", &mut sched);
        let ctx = p.io_actor;
        let b = p.admit(Bio::new(Dir::Write, false, 4096, 0, Origin::Job(0), now));
        assert!(!p.start_clone_submit(ctx, b, &mut sched));
    }

    /// With 50 µs a clone, `dmcrypt_write` alone can submit at most 20,000 writes a second;
    /// under `submit_from_crypt_cpus` the four kcryptd workers submit their own.
    #[test]
    fn the_single_write_thread_caps_writes_that_submit_from_crypt_cpus_spreads() {
        let yaml = "
duration: 1s
cpus: 4
kernel: { version: \"6.12\" }
device: { kind: generic, service: 10us, channels: 64, queue_depth: 256 }
block: { mode: blk-mq }
crypt: { cipher: null, hop_cost: 1us, clone_submit_cost: 50us }
policies: [dm-crypt, dm-crypt+submit_from_crypt_cpus]
workloads:
  - { kind: fio, rw: randwrite, direct: true, iodepth: 32, numjobs: 4 }
";
        let obs = runs(yaml);
        let iops: Vec<f64> = obs.iter().map(|o| o.dirs[1].ios as f64).collect();
        assert!(iops[0] <= 20_000.0 * 1.01 && iops[0] > 18_000.0, "{iops:?}");
        assert!(iops[1] > 2.0 * iops[0], "{iops:?}");
    }
}
