//! The world's side of `crypt/table.rs`: a bio routed by the table's flags to a crypt queue, a
//! thread, or straight through.

use crate::engine::Scheduler;
use crate::model::base::bio::{Bio, BioId, Dir, Origin};
use crate::model::base::config::{CompletionSite, IrqContext};
use crate::model::base::ids::ActorId;
use crate::model::base::ids::{CpuContext, TaskOwner};
use crate::model::base::obs::Stage;
use crate::model::cpu::sched::{Placement, SchedClass};
use crate::model::crypt::policy::{CryptOp, DmFlags, Topology, Work};
use crate::model::crypt::table::*;
use crate::model::crypt::threads::{ActorKind, ActorState, Step};
use crate::model::world::World;
use crate::model::world::event::Event;

impl World {
    /// The size above which dm-crypt's map splits `id` (6.11+), if it must be split.
    pub(in crate::model) fn split_limit(&self, id: BioId) -> Option<u32> {
        if !self.table.rules.is_some_and(|r| r.split_bios) {
            return None;
        }
        let b = &self.bios[id];
        let c = &self.sc.crypt;
        let param = match b.dir {
            Dir::Read => c.max_read_size,
            Dir::Write => c.max_write_size,
        };
        let mut limit = if param == 0 {
            DEFAULT_MAX_REQUEST
        } else {
            param
        };
        if b.dir == Dir::Write {
            limit = limit.min(BIO_MAX_BYTES);
        }
        let limit = (limit / 512 * 512).max(512);
        (!b.is_piece() && b.bytes > limit).then_some(limit)
    }

    /// `crypt_map()` cuts `id` into pieces of `limit` bytes with `dm_accept_partial_bio()`:
    /// each piece is its own `dm_crypt_io`, routed on its own from `ctx`; the bio completes
    /// with its last piece.
    pub(in crate::model) fn split(
        &mut self,
        id: BioId,
        limit: u32,
        ctx: ActorId,
        sched: &mut Scheduler<Event>,
    ) {
        let now = sched.now();
        self.enter(id, Stage::Other, now);
        let p = &mut self.bios[id];
        p.accepted = now;
        let (bytes, n) = (p.bytes, p.bytes.div_ceil(limit));
        p.pieces_left = n;
        let parent = p.clone();
        for i in 0..n {
            let len = limit.min(bytes - i * limit);
            let offset = parent.offset + u64::from(i * limit);
            let mut piece = Bio::new(parent.dir, parent.sync, len, offset, Origin::Piece(id), now);
            piece.service_u = (parent.service_u + f64::from(i) * PIECE_STEP).fract();
            piece.crypt_u = parent.crypt_u;
            piece.measured = parent.measured;
            piece.syncio = parent.syncio;
            let pid = self.bios.insert(piece);
            self.pieces_live += 1;
            self.route_one(pid, ctx, sched);
        }
    }

    /// A piece of a split bio completed: the bio completes with its last piece, whose path is
    /// the bio's critical path and becomes its time per stage. A trace records the piece's
    /// completion as a bio's, and gives the parent the last piece's stages in place of its
    /// wait for its pieces ([`World::trace_piece_done`]).
    pub(in crate::model) fn piece_done(&mut self, id: BioId, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let mut piece = self.bios.remove(id);
        let closed = piece.enter(Stage::Other, now);
        self.pieces_live -= 1;
        self.free_bio_bounce(&piece, sched);
        let Origin::Piece(parent) = piece.origin else {
            unreachable!("piece_done on a whole bio")
        };
        let p = &mut self.bios[parent];
        p.pieces_left -= 1;
        let last = p.pieces_left == 0;
        if self.tracer.is_some() {
            self.trace_piece_done(id, &piece, closed, now, last);
        }
        if !last {
            self.rec.piece_completed(&piece, now);
            return;
        }
        // Not `World::enter`: the wait since the split is replaced by the piece's stages, in
        // the report's books below and in the trace's (which adopted them above).
        let p = &mut self.bios[parent];
        p.enter(Stage::Other, now);
        p.stage_ns[Stage::Other.index()] -= now.since(piece.issued).as_ns();
        for (a, b) in p.stage_ns.iter_mut().zip(piece.stage_ns) {
            *a += b;
        }
        self.complete_bio(parent, sched);
    }

    /// Gives back the bounce pages `bio` held (a write, from its encryption to its
    /// completion): to the unlimited pool when it has them, else to the mempool.
    pub(in crate::model) fn free_bio_bounce(&mut self, bio: &Bio, sched: &mut Scheduler<Event>) {
        if bio.bounce_pages > 0 && !self.memory.free_unlimited_bounce(bio.bounce_pages) {
            self.free_bounce(bio.bounce_pages, sched);
        }
    }

    /// Where the block layer completes `bio`'s clone: the request queue decides from the CPU
    /// that submitted it (`blk_mq_complete_request`).
    pub(in crate::model) fn completion_site(&self, bio: BioId) -> CompletionSite {
        self.queue.completion_site(self.bios[bio].submit_cpu)
    }

    /// How task `owner` runs on the CPUs: its scheduling class, where it is placed, and the
    /// context its time is booked to (docs/model/cpu.md; the 2.6.x layouts run on the shared
    /// pool, which ignores class and placement).
    pub(in crate::model) fn task_spec(
        &self,
        owner: TaskOwner,
    ) -> (SchedClass, Placement, CpuContext) {
        let normal = SchedClass::NORMAL;
        match owner {
            TaskOwner::Softirq(bio) => {
                let site = self.completion_site(bio);
                match site.context {
                    // brd ends the bio inside submit_bio: the submitter decrypts it, in
                    // crypt_convert() without cond_resched() (atomic under the flag).
                    IrqContext::Submitter => (
                        SchedClass::NoResched,
                        Placement::On(site.cpu),
                        CpuContext::Submitter,
                    ),
                    _ => (
                        SchedClass::Softirq,
                        Placement::On(site.cpu),
                        CpuContext::Softirq,
                    ),
                }
            }
            TaskOwner::Actor(a) => self.actor_spec(a),
            TaskOwner::Kswapd | TaskOwner::Reclaim(_) => {
                (normal, Placement::Wake { prev: None }, CpuContext::Reclaim)
            }
            TaskOwner::Proc(_) => (
                normal,
                Placement::Wake { prev: None },
                CpuContext::Application,
            ),
            // A job's process spinning in its think time runs where the process is.
            TaskOwner::Spin(j) => {
                let cpu = self.actors[self.jobs[j as usize].ctx.index()].cpu;
                let prev = Some(cpu);
                (normal, Placement::Wake { prev }, CpuContext::Application)
            }
            // A cpuio process p starts on CPU p (mod cpus) and stays near it.
            TaskOwner::CpuIo(p) => {
                let prev = Some(p % self.sc.cpus.max(1));
                (normal, Placement::Wake { prev }, CpuContext::Application)
            }
        }
    }

    /// [`World::task_spec`] of a thread: kcryptd's workers are bound under `same_cpu_crypt`
    /// and `WQ_HIGHPRI` (nice −20) on 4.19 or with `high_priority`; `dmcrypt_write` is nice −20
    /// with `high_priority`; every other thread wakes near where it last ran.
    fn actor_spec(
        &self,
        a: crate::model::base::ids::ActorId,
    ) -> (SchedClass, Placement, CpuContext) {
        let actor = &self.actors[a.index()];
        let rules = self.table.rules;
        let flag =
            rules.is_some_and(|r| r.high_priority_flag) && self.table.has(DmFlags::HIGH_PRIORITY);
        let highpri_wq = flag || rules.is_some_and(|r| r.highpri_default);
        let class = |high: bool| {
            if high {
                SchedClass::HIGHPRI
            } else {
                SchedClass::NORMAL
            }
        };
        let wake = Placement::Wake {
            prev: Some(actor.cpu),
        };
        // crypt_convert()'s `atomic` is the direction's no-workqueue flag, wherever the
        // conversion runs (the submitter, or kcryptd when a read falls back to it): such a
        // conversion never calls cond_resched(), so it keeps its CPU against other threads.
        let atomic = match actor.state {
            ActorState::Cpu {
                step: Step::InlineEncrypt,
                ..
            } => rules.is_some(),
            ActorState::Cpu {
                step: Step::Crypt(CryptOp::Decrypt),
                ..
            } => self.table.has(DmFlags::NO_READ_WORKQUEUE),
            _ => false,
        };
        let class = |high: bool| {
            if atomic {
                SchedClass::NoResched
            } else {
                class(high)
            }
        };
        match actor.kind {
            ActorKind::Crypt(i) if self.table.has(DmFlags::SAME_CPU_CRYPT) => (
                class(highpri_wq),
                Placement::On(i as u32),
                CpuContext::Kcryptd,
            ),
            ActorKind::Crypt(_) => (
                class(highpri_wq),
                Placement::Wake {
                    prev: Some(actor.waker),
                },
                CpuContext::Kcryptd,
            ),
            ActorKind::Io | ActorKind::AsyncIo => (class(highpri_wq), wake, CpuContext::KcryptdIo),
            ActorKind::DmcryptWrite => (class(flag), wake, CpuContext::DmcryptWrite),
            ActorKind::JobCtx(_)
            | ActorKind::FlusherCtx(_)
            | ActorKind::ProcCtx(_)
            | ActorKind::SwapWriter => (class(false), wake, CpuContext::Submitter),
        }
    }

    /// A read's clone came back from the device under the workqueue layout: decrypt it in the
    /// completion (`no_read_workqueue`, where the kernel allows) or queue it on kcryptd.
    pub(in crate::model) fn read_completed_wq(&mut self, bio: BioId, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let site = self.completion_site(bio);
        let at = match &self.table.rules {
            Some(rules) => decrypt_at(self.table.has(DmFlags::NO_READ_WORKQUEUE), rules, site),
            None => DecryptAt::Kcryptd,
        };
        match at {
            DecryptAt::Kcryptd => {
                self.enter(bio, Stage::CryptQueue, now);
                let (op, sync) = (CryptOp::Decrypt, self.bios[bio].sync);
                let cpu = site.cpu;
                self.policy_enqueue(Work { bio, op, sync, cpu }, sched);
            }
            DecryptAt::Inline => {
                self.enter(bio, Stage::CryptService, now);
                let cost = self.crypto_cost(CryptOp::Decrypt, bio);
                self.start_cpu(TaskOwner::Softirq(bio), cost, sched);
            }
        }
    }

    /// Whether writes are encrypted by their submitter and submitted directly
    /// (`no_write_workqueue` on a kernel that has it).
    pub(in crate::model) fn writes_inline(&self) -> bool {
        self.info.topology == Topology::Inline
            || (self.table.rules.is_some_and(|r| r.bypass_flags)
                && self.table.has(DmFlags::NO_WRITE_WORKQUEUE))
    }

    /// Whether a kcryptd worker submits the write it encrypted synchronously itself
    /// (`submit_from_crypt_cpus`) instead of handing it to `dmcrypt_write`.
    pub(in crate::model) fn worker_submits_writes(&self) -> bool {
        self.table.rules.is_some()
            && self.table.has(DmFlags::SUBMIT_FROM_CRYPT_CPUS)
            && self.engine.is_none()
    }
}
