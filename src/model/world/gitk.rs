//! The world's side of `workload/gitk.rs`: a fake-gitk copy's reads, buffer growth, page walks,
//! hash-map inserts and major faults, through the page allocator, swap and dm-crypt.

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
            Step::Insert { .. } => self.gitk_insert(p, sched),
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

    /// Process `p` reads `bytes` of its logs at `offset`: the pages another copy has read are
    /// found in the page cache, those under another copy's read are waited for, and each run of
    /// absent pages is read with a bio of its own ([`crate::model::mm::filecache`]).
    fn gitk_read(&mut self, p: u32, offset: u64, bytes: u32, sched: &mut Scheduler<Event>) {
        let g = &self.procs[p as usize];
        let (file, first) = (g.file, g.log_page(offset));
        let mut runs = std::mem::take(&mut self.page_runs);
        let req =
            zone(&mut self.memory)
                .mem
                .files
                .request(file, first, pages_for(bytes), p, &mut runs);
        let g = &mut self.procs[p as usize];
        g.pending_reads = req.waits;
        for (sum, n) in g.log_pages.iter_mut().zip(req.pages) {
            *sum += u64::from(n);
        }
        if req.waits == 0 {
            // Every page in the cache: the read returns at once, through the calendar so that
            // a copy running on hits does not recurse.
            sched.schedule_in(
                crate::engine::SimDuration::ZERO,
                Event::Memory(MemEvent::ProcReadHit { proc: p }),
            );
        }
        for &(a, n) in &runs {
            let g = &mut self.procs[p as usize];
            let ctx = g.ctx;
            let bytes = n * PAGE_SIZE as u32;
            let mut bio = Bio::new(
                Dir::Read,
                true,
                bytes,
                g.log_offset(a),
                Origin::Proc(p),
                sched.now(),
            );
            bio.service_u = g.service.random();
            bio.crypt_u = g.crypt.random();
            bio.measured = self.rec.is_measured(sched.now());
            let id = self.admit(bio);
            self.enter(id, Stage::DirectReclaim, sched.now());
            if self.alloc_cache_pages(ReclaimWho::Read { bio: id, ctx }, n, sched) {
                self.bios[id].cache_pages = n;
                self.route(id, ctx, sched);
            }
        }
        self.page_runs = runs;
    }

    /// A read of process `p`'s logs completed: its pages are cached, and every copy that waited
    /// for it (`p` first) goes on once nothing else it waits for is in flight.
    pub(in crate::model) fn gitk_file_read_done(
        &mut self,
        p: u32,
        bio: &Bio,
        sched: &mut Scheduler<Event>,
    ) {
        let g = &self.procs[p as usize];
        let (file, first) = (g.file, g.log_page(bio.offset));
        let mut woken = std::mem::take(&mut self.woken);
        zone(&mut self.memory)
            .mem
            .files
            .read_done(file, first, pages_for(bio.bytes), &mut woken);
        for &w in &woken {
            let g = &mut self.procs[w as usize];
            g.pending_reads -= 1;
            if g.pending_reads == 0 {
                self.gitk_read_done(w, sched);
            }
        }
        woken.clear();
        self.woken = woken;
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
        pr.swap.add_run(p, first..first + pages);
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
        pr.swap.add_run(p, first..first + pages);
        self.gitk_next(p, sched);
    }

    /// Process `p` touches page `pg`: true if it is in memory (now mapped and referenced);
    /// false if the process blocks, in a major fault (its read from swap, with readahead) or
    /// waiting for a read in flight, and goes on from [`World::gitk_next`] once the page is in.
    #[inline]
    fn gitk_touch(&mut self, p: u32, pg: u32, sched: &mut Scheduler<Event>) -> bool {
        zone(&mut self.memory).swap.touch_hit(p, pg) || self.gitk_touch_miss(p, pg, sched)
    }

    /// [`World::gitk_touch`] of a page that is not resident and mapped: a minor fault, a wait
    /// for a read under way, or a major fault.
    #[inline(never)]
    fn gitk_touch_miss(&mut self, p: u32, pg: u32, sched: &mut Scheduler<Event>) -> bool {
        let now = sched.now();
        let pr = zone(&mut self.memory);
        match pr.swap.touch(p, pg) {
            Touch::Hit | Touch::Minor => true,
            Touch::Wait => {
                self.procs[p as usize].wait_began(pg, now);
                false
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
                false
            }
        }
    }

    /// Touches pages `first..first + pages`: all in memory → hash them on a CPU; a swapped one
    /// → a major fault, after which the step is touched again.
    fn gitk_walk(&mut self, p: u32, first: u32, pages: u32, sched: &mut Scheduler<Event>) {
        for pg in first..first + pages {
            if !self.gitk_touch(p, pg, sched) {
                return;
            }
        }
        let cost = self.procs[p as usize].hash_cost(pages);
        self.start_cpu(TaskOwner::Proc(p), cost, sched);
    }

    /// The inserts still due, each a touch of a random map page, at no CPU cost of their own
    /// (`hash_cost` is the walk's and the map's building together). A touch that blocks ends
    /// the turn; once its page is in, the same insert touches it again and the rest follow.
    ///
    /// Between two inserts only the count of inserts due is checked: a touch that does not
    /// block moves neither the loop, the reads nor the map, so the step stays `Insert` while
    /// inserts are due (a million inserts a loop made this check a tenth of a run).
    fn gitk_insert(&mut self, p: u32, sched: &mut Scheduler<Event>) {
        if matches!(self.procs[p as usize].next(), Step::Insert { .. }) {
            loop {
                let pg = self.procs[p as usize].insert_page();
                if !self.gitk_touch(p, pg, sched) {
                    return;
                }
                if !self.procs[p as usize].inserted() {
                    break;
                }
            }
        }
        self.gitk_next(p, sched);
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
        let mut runs = std::mem::take(&mut self.page_runs);
        if !pr.swap.fault_start(&mut pr.mem, (p, page), n, &mut runs) {
            self.page_runs = runs;
            self.end_fault(p, now);
            self.gitk_next(p, sched);
            return;
        }
        for &(slot, pages) in &runs {
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
        self.page_runs = runs;
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
        let mut woken = std::mem::take(&mut self.woken);
        woken.clear();
        for s in first..first + (u64::from(bio.bytes) / PAGE_SIZE) as u32 {
            woken.extend(pr.swap.read_done(&mut pr.mem, s));
        }
        for &q in &woken {
            self.end_fault(q, now);
            self.gitk_next(q, sched);
        }
        woken.clear();
        self.woken = woken;
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

#[cfg(test)]
mod tests {
    use crate::engine::{Limits, RngStreams, Scheduler, SimTime};
    use crate::model::crypt::policy;
    use crate::model::mm::swap::AnonPage;
    use crate::model::world::World;
    use crate::model::world::pressure::zone;
    use rand::RngExt;

    /// One copy, 2 log pages walked a page per step, a 2-page map (one page per step) and 8
    /// commits (1 KiB of logs each): 4 inserts per step. Ample memory: no reclaim.
    const TINY: &str = "
seed: 6
duration: 10s
cpus: 1
device: { kind: hdd7200 }
crypt: { cipher: aes-2009 }
policies: [fifo]
memory: { ram: 128MiB, unreclaimable: 16MiB, mapped: 8MiB, swap: 1MiB, swap_offset: 1GiB }
workloads:
  - { name: g, kind: fake-gitk, size: 8KiB, bs: 4KiB, map: 8KiB, commits: 8, loops: 1,
      hash_cost: 1ms }
";

    /// Fires events one at a time until `done` holds (or the calendar drains).
    fn step_until(
        w: &mut World,
        sched: &mut Scheduler<super::Event>,
        done: impl Fn(&World) -> bool,
    ) {
        let limits = Limits {
            horizon: SimTime::MAX,
            max_work: 1,
        };
        while !done(w) {
            let out = crate::engine::run(w, sched, limits);
            assert_eq!(
                out.events, 1,
                "the run drained before the state was reached"
            );
        }
    }

    /// The inserts by hand. Step 1 grows map page 2 and inserts its 4 commits there (draws
    /// `0..1`). Then page 2 is sent to swap while step 2 hashes. Step 2 grows page 3 and draws
    /// 4 pages among 2 and 3 from the copy's `inserts` stream: 3, 2, 3, 2 (seed 6). The 2nd
    /// insert is a major fault (3 left, its page kept); when the read completes the same
    /// insert touches page 2 again (a hit) and the last two follow at once: no fault on the
    /// 4th (page 2 is in), no second walk of the step, and the loop ends at that instant.
    #[test]
    fn an_insert_on_a_swapped_map_page_faults_and_the_rest_resume() {
        let sc = crate::scenario::load_str("tiny.yaml", TINY).expect("valid scenario");
        let mut draws = RngStreams::new(sc.seed, 0).stream("g.0/inserts");
        let pages: Vec<u32> = (0..8)
            .map(|i| 2 + draws.random_range(0..if i < 4 { 1u32 } else { 2 }))
            .collect();
        assert_eq!(
            pages,
            [2, 2, 2, 2, 3, 2, 3, 2],
            "the stream's draws, checked by hand"
        );
        let mut sched = Scheduler::new();
        let mut w = World::new(&sc, policy::find("fifo").expect("fifo"), 0, &mut sched);
        // Step 1 walked and its inserts done: step 2 is hashing.
        let step2 = super::Step::Walk { first: 1, pages: 1 };
        step_until(&mut w, &mut sched, |w| w.procs[0].next() == step2);
        assert_eq!(w.procs[0].inserts_left(), (0, None));
        // Page 2 to swap: all three anon pages rotate, the two log pages are touched again,
        // the next scan writes page 2, and its write is completed by hand.
        let pr = zone(&mut w.memory);
        pr.swap.scan(&mut pr.mem, 3, true);
        pr.swap.touch(0, 0);
        pr.swap.touch(0, 1);
        assert_eq!(pr.swap.scan(&mut pr.mem, 3, true).written, 1);
        let slots = pr.swap.take_writes();
        pr.swap.write_done(&mut pr.mem, slots[0]);
        assert_eq!(pr.swap.page(0, 2), AnonPage::Swapped { slot: slots[0] });
        // Step 2 hashed, page 3 grown: the insert on page 3 is a hit, the one on page 2 faults.
        step_until(&mut w, &mut sched, |w| w.procs[0].fault_since.is_some());
        let fault_at = sched.now();
        assert_eq!(w.procs[0].inserts_left(), (3, Some(2)));
        assert_eq!(
            (
                w.procs[0].obs().major_faults,
                w.procs[0].obs().insert_faults
            ),
            (1, 1)
        );
        let pr = zone(&mut w.memory);
        assert!(matches!(
            pr.swap.page(0, 2),
            AnonPage::SwapIn { wanted: true, .. }
        ));
        assert!(matches!(
            pr.swap.page(0, 3),
            AnonPage::Resident { mapped: true, .. }
        ));
        // The read completes: the remaining inserts run and the loop ends at that instant.
        step_until(&mut w, &mut sched, |w| w.procs[0].fault_since.is_none());
        let g = &w.procs[0];
        assert_eq!(g.inserts_left(), (0, None));
        assert!(g.is_done(), "no second walk of the step");
        assert_eq!(g.obs().major_faults, 1);
        assert!(g.obs().fault_ns > 0 && sched.now() > fault_at);
        assert_eq!(g.obs().progress_lines, 0);
        let pr = zone(&mut w.memory);
        assert_eq!(pr.swap.obs.swap_ins, 1);
        let report = w.invariants(sched.now());
        assert!(report.violations().is_empty(), "{:?}", report.violations());
    }

    /// Two copies reading the same 4 log pages a page at a time, both starting at 0: the
    /// sequence by hand. Copy 0 asks for page 0 first and reads it; copy 1 asks for it while
    /// that read is in flight and waits for it, issuing nothing. Both wake when it completes
    /// (copy 0 first) and ask for page 1, where the same happens, and so on: each page is read
    /// once, by copy 0, and copy 1 waits for every one. Memory is ample, so the pages stay
    /// cached: the second loop finds all four in the cache for both copies, with no read.
    #[test]
    fn two_copies_read_each_shared_log_page_once() {
        let text = TINY.replace(
            "size: 8KiB, bs: 4KiB, map: 8KiB, commits: 8, loops: 1,",
            "size: 16KiB, bs: 4KiB, numjobs: 2, loops: 2,",
        );
        let sc = crate::scenario::load_str("tiny.yaml", &text).expect("valid scenario");
        let mut sched = Scheduler::new();
        let mut w = World::new(&sc, policy::find("fifo").expect("fifo"), 0, &mut sched);
        // Both copies have asked for page 0: one read in flight, copy 1 waiting for it.
        step_until(&mut w, &mut sched, |w| {
            w.procs.iter().all(|g| g.pending_reads == 1)
        });
        assert_eq!(zone(&mut w.memory).mem.files.reads_in_flight(), 1);
        assert_eq!(w.procs[0].log_pages, [0, 0, 1]);
        assert_eq!(w.procs[1].log_pages, [0, 1, 0]);
        let read_bios = |w: &World| {
            w.bios
                .iter()
                .filter(|b| matches!(b.origin, crate::model::base::bio::Origin::Proc(_)))
                .count()
        };
        assert_eq!(read_bios(&w), 1, "one bio for the page, not two");
        step_until(&mut w, &mut sched, |w| w.procs.iter().all(|g| g.is_done()));
        assert_eq!(
            w.procs[0].obs().log_pages,
            [4, 0, 4],
            "copy 0 read every page, then found them cached"
        );
        assert_eq!(
            w.procs[1].obs().log_pages,
            [4, 4, 0],
            "copy 1 waited for each, then found them cached"
        );
        let files = &zone(&mut w.memory).mem.files;
        assert_eq!(files.cached(), 4, "the pages stay cached after the loop");
        let report = w.invariants(sched.now());
        assert!(report.violations().is_empty(), "{:?}", report.violations());
    }
}
