//! The world's side of `mm/pressure.rs`: the memory processes' events dispatched, and the
//! GFP_ATOMIC streams' arrivals and frees.

use crate::engine::{Scheduler, SimDuration};
use crate::model::base::ids::QueueClass;
use crate::model::mm::Memory;
use crate::model::mm::atomic::AtomicSources;
use crate::model::mm::cwait::CwWho;
use crate::model::mm::pressure::*;
use crate::model::world::World;
use crate::model::world::event::Event;

impl World {
    pub(in crate::model) fn pr(&mut self) -> &mut Pressure {
        zone(&mut self.memory)
    }

    /// Starts the memory processes: the GFP_ATOMIC streams' first arrivals.
    pub(in crate::model) fn start_pressure(&mut self, sched: &mut Scheduler<Event>) {
        let warmup = self.rec.warmup();
        self.start_processes(sched);
        let Some(p) = self.memory.zone_mut() else {
            return;
        };
        p.kswapd.warmup = warmup;
        for i in 0..p.atomic.len() {
            let gap = p.atomic.gap(i);
            sched.schedule_in(
                gap,
                Event::Memory(MemEvent::AtomicArrival { stream: i as u32 }),
            );
        }
    }

    /// The memory processes' events.
    pub(in crate::model) fn memory_event(&mut self, ev: MemEvent, sched: &mut Scheduler<Event>) {
        match ev {
            MemEvent::AtomicArrival { stream } => self.atomic_arrival(stream, sched),
            MemEvent::AtomicFree { order } => self.atomic_free(order),
            MemEvent::KswapdNapEnd => self.kswapd_nap_end(sched),
            MemEvent::MempoolTimeout { actor } => self.mempool_timeout(actor, sched),
            MemEvent::ProcStart { proc } => self.gitk_start(proc, sched),
            MemEvent::ProcReadHit { proc } => self.gitk_read_done(proc, sched),
        }
    }

    /// The queue mm's waits sleep on.
    pub(in crate::model) fn cwait_class(&self) -> QueueClass {
        QueueClass::from_cwait(self.sc.kernel.vm.cwait_class)
    }

    // ----- GFP_ATOMIC ------------------------------------------------------------------------

    /// A GFP_ATOMIC stream's arrival: the next one is scheduled first, then the burst's
    /// granted buffers' frees, in allocation order.
    pub(in crate::model) fn atomic_arrival(&mut self, i: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let p = self.pr();
        let gap = p.atomic.gap(i as usize);
        sched.schedule_in(gap, Event::Memory(MemEvent::AtomicArrival { stream: i }));
        let wake = p.atomic.arrive(i as usize, &mut p.mem, now, |hold, order| {
            sched.schedule_in(hold, Event::Memory(MemEvent::AtomicFree { order }));
        });
        if let Some(order) = wake {
            self.wake_kswapd(order, sched);
        }
    }

    pub(in crate::model) fn atomic_free(&mut self, order: u32) {
        AtomicSources::free(&mut self.pr().mem, order);
    }

    /// Accounts a wait of `who` that ended after `slept`, per caller and class.
    pub(in crate::model) fn account_mm_wait(
        &mut self,
        who: CwWho,
        class: QueueClass,
        slept: SimDuration,
        early: bool,
    ) {
        let Some(p) = self.memory.zone_mut() else {
            return;
        };
        if !p.mem.measuring() {
            return;
        }
        let w = match who {
            CwWho::Kswapd => &mut p.mem.obs.kswapd_waits,
            CwWho::Reclaim(_) => &mut p.mem.obs.direct_waits,
            _ => return,
        };
        let o = &mut w.class[class.index()];
        o.waits += 1;
        o.total += slept;
        if early {
            o.woken_early += 1;
        }
    }
}

/// The zone's processes, borrowed from the memory field alone, so that another field of the
/// world (the fake-gitk table) can be borrowed beside it; [`World::pr`] borrows the whole world.
pub(super) fn zone(memory: &mut Memory) -> &mut Pressure {
    memory.zone_mut().expect("memory model is off")
}
