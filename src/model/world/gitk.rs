//! The world's side of `workload/gitk.rs`: a fake-gitk copy's reads, buffer growth, page walks
//! and major faults, through the page allocator, swap and dm-crypt.

use crate::engine::{Scheduler, SimTime};
use crate::model::base::bio::{Bio, Dir, Origin};
use crate::model::base::ids::{ActorId, TaskOwner};
use crate::model::base::obs::Stage;
use crate::model::crypt::threads::ActorKind;
use crate::model::mm::memory::{PAGE_SIZE, PageState, pages_for};
use crate::model::mm::pressure::MemEvent;
use crate::model::mm::reclaim::ReclaimWho;
use crate::model::mm::swap::Touch;
use crate::model::workload::gitk::*;
use crate::model::world::World;
use crate::model::world::event::Event;
use crate::model::world::pressure::zone;
use rand::RngExt;

impl World {
    /// Process `p` takes its next step.
    pub(in crate::model) fn gitk_next(&mut self, p: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let step = self.procs[p as usize].next();
        match step {
            Step::Read { offset, bytes } => self.gitk_read(p, offset, bytes, sched),
            Step::Walk { first, pages } => self.gitk_walk(p, first, pages, sched),
            Step::Map { pages } => {
                if self.alloc_cache_pages(ReclaimWho::Map { proc: p }, pages, sched) {
                    self.gitk_mapped(p, pages, sched);
                }
            }
            Step::Free => {
                let pr = zone(&mut self.memory);
                pr.swap.free_all(&mut pr.mem, p);
                self.procs[p as usize].freed(now);
                if self.procs[p as usize].is_done() {
                    self.finite_job_done(sched);
                } else {
                    self.gitk_next(p, sched);
                }
            }
            Step::Done => {}
        }
    }

    /// A process starts (its start delay is over).
    pub(in crate::model) fn gitk_start(&mut self, p: u32, sched: &mut Scheduler<Event>) {
        self.procs[p as usize].start(sched.now());
        self.gitk_next(p, sched);
    }

    fn gitk_read(&mut self, p: u32, offset: u64, bytes: u32, sched: &mut Scheduler<Event>) {
        let g = &mut self.procs[p as usize];
        let ctx = g.ctx;
        let mut bio = Bio::new(Dir::Read, true, bytes, offset, Origin::Proc(p), sched.now());
        bio.service_u = g.service.random();
        bio.crypt_u = g.crypt.random();
        bio.measured = self.rec.is_measured(sched.now());
        let pages = pages_for(bytes);
        let id = self.admit(bio);
        self.enter(id, Stage::DirectReclaim, sched.now());
        if self.alloc_cache_pages(ReclaimWho::Read { bio: id, ctx }, pages, sched) {
            self.bios[id].cache_pages = pages;
            self.route(id, ctx, sched);
        }
    }

    /// A process's file read completed: its buffer grows by the data read.
    pub(in crate::model) fn gitk_read_done(&mut self, p: u32, sched: &mut Scheduler<Event>) {
        // The read's size is what the process asked for.
        let g = &mut self.procs[p as usize];
        let bytes = match g.next() {
            Step::Read { bytes, .. } => bytes,
            other => unreachable!("read completion in step {other:?}"),
        };
        let pages = g.read_done(bytes);
        if self.alloc_cache_pages(ReclaimWho::Anon { proc: p }, pages, sched) {
            self.gitk_grown(p, pages, sched);
        }
    }

    /// `pages` anonymous pages were allocated (as filling) for process `p`'s buffer.
    pub(in crate::model) fn gitk_grown(
        &mut self,
        p: u32,
        pages: u32,
        sched: &mut Scheduler<Event>,
    ) {
        let now = sched.now();
        let pr = zone(&mut self.memory);
        pr.mem
            .transition(u64::from(pages), PageState::Filling, PageState::Anon);
        let first = self.procs[p as usize].grown_pages();
        for pg in first..first + pages {
            pr.swap.add(p, pg);
        }
        self.procs[p as usize].grown(pages, now);
        self.gitk_next(p, sched);
    }

    /// `pages` anonymous pages were allocated (as filling) for process `p`'s hash map.
    pub(in crate::model) fn gitk_mapped(
        &mut self,
        p: u32,
        pages: u32,
        sched: &mut Scheduler<Event>,
    ) {
        let pr = zone(&mut self.memory);
        pr.mem
            .transition(u64::from(pages), PageState::Filling, PageState::Anon);
        let first = self.procs[p as usize].mapped(pages);
        for pg in first..first + pages {
            pr.swap.add(p, pg);
        }
        self.gitk_next(p, sched);
    }

    /// Touches pages `first..first + pages`: all in memory → hash them on a CPU; a swapped one
    /// → a major fault.
    fn gitk_walk(&mut self, p: u32, first: u32, pages: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let pr = zone(&mut self.memory);
        for pg in first..first + pages {
            match pr.swap.touch(p, pg) {
                Touch::Hit | Touch::Minor => {}
                Touch::Wait => {
                    self.procs[p as usize].wait_began(pg, now);
                    return;
                }
                Touch::Major { .. } => {
                    self.procs[p as usize].fault_began(pg, now);
                    if pr.mem.measuring() {
                        pr.swap.obs.major_faults += 1;
                    }
                    let n = pr.swap.fault_pages(p, pg);
                    self.procs[p as usize].fault_pages = n;
                    if self.alloc_cache_pages(ReclaimWho::Fault { proc: p }, n, sched) {
                        self.gitk_fault_page(p, sched);
                    }
                    return;
                }
            }
        }
        let cost = self.procs[p as usize].hash_cost(pages);
        self.start_cpu(TaskOwner::Proc(p), cost, sched);
    }

    /// A process's hashing step finished on the CPU.
    pub(in crate::model) fn gitk_cpu_done(&mut self, p: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let g = &mut self.procs[p as usize];
        let Step::Walk { pages, .. } = g.next() else {
            unreachable!("hash step outside a walk")
        };
        g.walked(pages, now);
        self.gitk_next(p, sched);
    }

    /// A faulting process has its pages (as filling): the reads from swap go out, one plain
    /// READ through dm-crypt per run of contiguous slots of the readahead window, from the
    /// process's context. If the page left swap while the process was in reclaim (another
    /// fault read it ahead), the pages are given back and the process touches it again.
    pub(in crate::model) fn gitk_fault_page(&mut self, p: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let pr = zone(&mut self.memory);
        let g = &self.procs[p as usize];
        let (page, n) = (g.fault_page, g.fault_pages);
        pr.mem
            .transition(u64::from(n), PageState::Filling, PageState::Anon);
        let Some(runs) = pr.swap.fault_start(&mut pr.mem, p, page, n) else {
            self.end_fault(p, now);
            self.gitk_next(p, sched);
            return;
        };
        for (slot, pages) in runs {
            let pr = zone(&mut self.memory);
            let offset = pr.swap.slot_offset(slot);
            let g = &mut self.procs[p as usize];
            let ctx = g.ctx;
            let bytes = pages * PAGE_SIZE as u32;
            let mut bio = Bio::new(Dir::Read, true, bytes, offset, Origin::SwapIn(p), now);
            bio.service_u = g.service.random();
            bio.crypt_u = g.crypt.random();
            self.issue(bio, ctx, sched);
        }
    }

    /// Process `p`'s fault (or wait for a read ahead page) ends at `now`.
    fn end_fault(&mut self, p: u32, now: SimTime) {
        let pr = zone(&mut self.memory);
        let since = self.procs[p as usize].fault_since;
        self.procs[p as usize].fault_ended(now);
        if pr.mem.measuring()
            && let Some(s) = since
        {
            pr.swap.obs.fault_time += now.since(s);
        }
    }

    /// A read from swap completed: each of its pages is back; the processes that waited for
    /// one of them go on with their walk.
    pub(in crate::model) fn swapin_done(&mut self, bio: &Bio, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let pr = zone(&mut self.memory);
        let first = pr.swap.slot_at(bio.offset);
        let mut woken = Vec::new();
        for s in first..first + (u64::from(bio.bytes) / PAGE_SIZE) as u32 {
            woken.extend(pr.swap.read_done(&mut pr.mem, s));
        }
        for q in woken {
            self.end_fault(q, now);
            self.gitk_next(q, sched);
        }
    }

    /// Schedules every process's start and finds the contexts cast for them.
    pub(in crate::model) fn start_processes(&mut self, sched: &mut Scheduler<Event>) {
        let ctxs: Vec<ActorId> = (0..self.actors.len())
            .filter(|&i| matches!(self.actors[i].kind, ActorKind::ProcCtx(_)))
            .map(|i| ActorId(i as u32))
            .collect();
        for (p, g) in self.procs.iter_mut().enumerate() {
            g.ctx = ctxs[p];
            let (start, _) = g.span();
            sched.schedule_at(start, Event::Memory(MemEvent::ProcStart { proc: p as u32 }));
        }
    }

    /// Whether every fake-gitk copy is done (true without any).
    pub(in crate::model) fn all_processes_done(&self) -> bool {
        self.procs.iter().all(Gitk::is_done)
    }
}
