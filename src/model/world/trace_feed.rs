//! The world's side of a trace: it names the lanes, hands every closed bio stage to the
//! [`Tracer`], and tells it what every lane is doing at the end of each event.

use crate::engine::SimTime;
use crate::model::base::bio::{Bio, BioId, Origin};
use crate::model::base::ids::QueueClass;
use crate::model::base::obs::Stage;
use crate::model::crypt::policy::Topology;
use crate::model::crypt::threads::{ActorKind, ActorState};
use crate::model::mm::cwait::{CwWho, Waiter};
use crate::model::mm::kswapd::KState;
use crate::model::observe::trace::{Activity, LaneStates, Trace, TraceWindow, Tracer};
use crate::model::world::World;

impl World {
    /// Starts tracing `win` (see the module doc); the run should stop at `win.to`.
    pub(in crate::model) fn start_trace(&mut self, win: TraceWindow) {
        let threads: Vec<String> = self
            .actors
            .iter()
            .map(|a| self.actor_name(a.kind))
            .collect();
        let lists = self.policy.queue_names();
        let lists: Vec<&str> =
            if self.info.topology == Topology::Plain || self.info.topology == Topology::Inline {
                Vec::new()
            } else {
                lists.to_vec()
            };
        self.tracer = Some(Box::new(Tracer::new(
            win,
            self.info.name,
            &threads,
            &lists,
            self.device.channel_bios().len(),
            self.cpu.cpus(),
            self.engine.is_some(),
            self.memory.zone().is_some(),
        )));
    }

    /// The lane label of a thread.
    fn actor_name(&self, kind: ActorKind) -> String {
        let crypt = self.crypt_actors.len();
        match kind {
            ActorKind::Crypt(i) if crypt > 1 => format!("kcryptd/{i}"),
            ActorKind::Crypt(_) => "kcryptd".into(),
            ActorKind::Io => "kcryptd_io".into(),
            ActorKind::AsyncIo => "kcryptd_async_io".into(),
            ActorKind::DmcryptWrite => "dmcrypt_write".into(),
            ActorKind::JobCtx(j) => format!("job {}", self.jobs[j as usize].label()),
            ActorKind::FlusherCtx(w) if self.writers.len() > 1 => format!("flusher/{w}"),
            ActorKind::FlusherCtx(_) => "flusher".into(),
            ActorKind::ProcCtx(p) => format!("gitk/{p}"),
            ActorKind::SwapWriter => "swap writer".into(),
        }
    }

    /// Who issued `b`, in words.
    fn origin_name(&self, b: &Bio) -> String {
        match b.origin {
            Origin::Job(j) => format!("job {}", self.jobs[j as usize].label()),
            Origin::Writeback(w) if self.writers.len() > 1 => format!("writeback/{w}"),
            Origin::Writeback(_) => "writeback".into(),
            Origin::Proc(p) => format!("gitk/{p} read"),
            Origin::SwapIn(p) => format!("gitk/{p} swap-in"),
            Origin::SwapOut => "swap-out".into(),
            // Pieces are named by [`World::trace_bio`], which knows the parent's traced index.
            Origin::Piece(_) => "piece".into(),
        }
    }

    /// The traced index of bio `id` (`b`), adding it on first sight; a piece's parent is added
    /// first, so that the piece can name it (`piece 2/4 of #7`) and be counted under it.
    fn trace_bio(&self, t: &mut Tracer, id: BioId, b: &Bio) -> u32 {
        let Origin::Piece(p) = b.origin else {
            return t.bio(id as usize, b, None, || self.origin_name(b));
        };
        let pb = &self.bios[p];
        let pk = t.bio(p as usize, pb, None, || self.origin_name(pb));
        t.bio(id as usize, b, Some(pk), || {
            let limit = u64::from(self.split_limit(p).unwrap_or(b.bytes).max(1));
            let i = b.offset.saturating_sub(pb.offset) / limit + 1;
            let n = u64::from(pb.bytes).div_ceil(limit);
            format!("piece {i}/{n} of #{pk}")
        })
    }

    /// Moves bio `id` to `stage` at `now` ([`Bio::enter`]), handing the closed stage to the
    /// tracer when one runs: the one place a bio's stage changes while it is in the slab.
    #[inline]
    pub(in crate::model) fn enter(&mut self, id: BioId, stage: Stage, now: SimTime) {
        let closed = self.bios[id].enter(stage, now);
        if self.tracer.is_some() {
            self.trace_closed(id, closed, now);
        }
    }

    #[cold]
    fn trace_closed(&mut self, id: BioId, closed: (Stage, SimTime), now: SimTime) {
        let mut t = self.tracer.take().expect("tracer");
        let b = &self.bios[id];
        t.stage_closed(id as usize, closed, now, |t| self.trace_bio(t, id, b));
        self.tracer = Some(t);
    }

    /// Bio `id`, already out of the slab, completed at `now`, closing `closed`.
    pub(in crate::model) fn trace_completed(
        &mut self,
        id: BioId,
        b: &Bio,
        closed: (Stage, SimTime),
        now: SimTime,
    ) {
        let Some(mut t) = self.tracer.take() else {
            return;
        };
        t.stage_closed(id as usize, closed, now, |t| self.trace_bio(t, id, b));
        t.completed(id as usize, now);
        self.tracer = Some(t);
    }

    /// Piece `id` of a split bio (`b`, already out of the slab; its parent still in it)
    /// completed at `now`, closing `closed`, as a bio does ([`World::trace_completed`]). When
    /// it is the `last`, its stages become its parent's from the split on.
    pub(in crate::model) fn trace_piece_done(
        &mut self,
        id: BioId,
        b: &Bio,
        closed: (Stage, SimTime),
        now: SimTime,
        last: bool,
    ) {
        let Some(mut t) = self.tracer.take() else {
            return;
        };
        let mut piece = t.traced(id as usize);
        t.stage_closed(id as usize, closed, now, |t| {
            let k = self.trace_bio(t, id, b);
            piece = Some(k);
            k
        });
        t.completed(id as usize, now);
        if let (true, Some(pk), Origin::Piece(p)) = (last, piece, b.origin)
            && let Some(k) = t.traced(p as usize)
        {
            t.adopt(k, pk);
        }
        self.tracer = Some(t);
    }

    /// The policy queued bio `id`; `before` were its lists' lengths just before.
    pub(in crate::model) fn trace_crypt_queued(&mut self, id: BioId, before: &[usize]) {
        let Some(t) = self.tracer.as_deref_mut() else {
            return;
        };
        let list = (0..before.len())
            .find(|&q| self.policy.queue_len(q) > before[q])
            .unwrap_or(0);
        t.crypt_queued(id as usize, list);
    }

    /// A `congestion_wait` of `w` ended at `now`, early or by its timeout. The mark gives the
    /// whole sleep, from `w.since`, even the part before the window (which the recorder's
    /// figure, counting only measured time, leaves out).
    pub(in crate::model) fn trace_wait(&mut self, w: &Waiter, early: bool, now: SimTime) {
        let Some(t) = self.tracer.as_deref_mut() else {
            return;
        };
        let lane = match w.who {
            CwWho::Kswapd => t.kswapd_lane(),
            CwWho::CryptNap(a) => t.thread_lane(a.index()),
            CwWho::Writer(i) | CwWho::Flusher(i) => {
                let a = self.writers[i as usize].ctx;
                t.thread_lane(a.index())
            }
            CwWho::Reclaim(_) => Some(t.queue_stage_lane(3)),
        };
        if let Some(lane) = lane {
            let class = if w.class == QueueClass::Sync {
                "SYNC"
            } else {
                "ASYNC"
            };
            t.wait_ended(lane, class, early, now.since(w.since), now);
        }
    }

    /// Looks at the lanes after an event at `now` (and once before the window's first event).
    pub(in crate::model) fn trace_event(&mut self, now: SimTime, before: bool) {
        let Some(mut t) = self.tracer.take() else {
            return;
        };
        if t.due(now, before) {
            let s = self.lane_states(&mut t);
            t.look(now, &s);
        }
        self.tracer = Some(t);
    }

    /// What every lane is doing now.
    fn lane_states(&self, t: &mut Tracer) -> LaneStates {
        let mut bio = |id: BioId, stage: Option<Stage>| {
            let b = &self.bios[id];
            let k = self.trace_bio(t, id, b);
            Activity::Bio {
                bio: k,
                stage: stage.unwrap_or(b.stage),
            }
        };
        let threads = self
            .actors
            .iter()
            .map(|a| match a.state {
                ActorState::Idle => None,
                ActorState::Cpu { bio: id, .. } | ActorState::PoolWait { bio: id } => {
                    Some(bio(id, None))
                }
                ActorState::Backlog => Some(Activity::State("crypto backlog")),
                ActorState::MemWait => Some(Activity::State("mempool sleep")),
            })
            .collect();
        let channels = self
            .device
            .channel_bios()
            .iter()
            .map(|c| c.map(|id| bio(id, Some(Stage::Device))))
            .collect();
        let mut s = LaneStates {
            threads,
            channels,
            runnable: self.cpu.runnable() as u32,
            ..LaneStates::default()
        };
        if let Some(p) = self.memory.zone() {
            s.kswapd = match p.kswapd.state {
                KState::Sleep => None,
                KState::Scan => Some("reclaiming"),
                KState::CongestionWait => Some("congestion_wait"),
                KState::Nap => Some("nap"),
            };
            s.failures = p.mem.atomic_failures_total();
            s.free = p.mem.zone.free_pages();
        }
        s
    }

    /// Ends the trace at `now`, if one runs.
    pub(in crate::model) fn take_trace(&mut self, now: SimTime) -> Option<Trace> {
        let t = self.tracer.take()?;
        let live = self.bios.iter_ids().map(|(id, b)| (id as usize, b));
        Some(t.finish(now, live, |t, id, b| self.trace_bio(t, id as BioId, b)))
    }
}
