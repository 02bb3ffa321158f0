//! Mel Gorman's fake-gitk as a process: the [`Gitk`] state machine (one per copy) and the
//! world's adapter that carries out its steps.
//!
//! Each loop: **read** the commit logs (sync buffered reads of `bs`, sequential over its
//! region, each allocating its page-cache pages, maybe in direct reclaim), appending each read
//! to an anonymous buffer (**grow**: one anonymous page per 4 KiB read, allocated as
//! `GFP_HIGHUSER_MOVABLE`, maybe in direct reclaim); then **walk** the buffer in `bs` steps,
//! touching each page in order (a swapped page is a major fault: the process blocks until its
//! read from swap completes, its neighbours in swap read ahead beside it; a page read ahead
//! whose read is still in flight is waited for) and hashing the step on a CPU at `hash_cost` per
//! MiB; the hash map grows in proportion to the logs walked, and each commit the step walked is
//! **inserted**: a touch of one uniformly random page of the map grown so far (drawn from the
//! copy's own `inserts` stream), faulting like a walk's touch, the remaining inserts resumed
//! after the fault; then **free** the buffer (pages and swap slots). After `loops` loops the copy is done; the run
//! ends when every finite job and every copy is done. A progress line is printed every
//! `progress_every` bytes processed (read or walked); the longest gap between two lines (the
//! first from the start) is the stall a user sees.

use crate::engine::{RngStreams, SimDuration, SimRng, SimTime};
use crate::model::base::config::{FakeGitk, Scenario, WorkloadKind};
use crate::model::base::ids::ActorId;
use crate::model::base::obs::ProcObs;
use crate::model::mm::memory::{PAGE_SIZE, pages_for};
use rand::RngExt;

/// What a process does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Read `bytes` of logs at device offset `offset`.
    Read {
        /// Device byte offset.
        offset: u64,
        /// Bytes.
        bytes: u32,
    },
    /// Grow the hash map by `pages` anonymous pages (the commits just walked).
    Map {
        /// Pages.
        pages: u32,
    },
    /// Insert `left` more commits just walked into the hash map, each a touch of a random map
    /// page ([`Gitk::insert_page`]).
    Insert {
        /// Inserts still to do (the one under way included).
        left: u64,
    },
    /// Walk pages `first..first + pages` of the buffer.
    Walk {
        /// First page.
        first: u32,
        /// Pages.
        pages: u32,
    },
    /// Free the buffer (the loop ends).
    Free,
    /// All loops done.
    Done,
}

/// One fake-gitk copy.
#[derive(Debug)]
pub struct Gitk {
    cfg: FakeGitk,
    label: String,
    /// Its submitting context.
    pub ctx: ActorId,
    /// The shared file its logs are (one per fake-gitk workload: its copies share it).
    pub file: u32,
    /// Reads the read under way still waits for (its own and other copies' of its pages).
    pub(in crate::model) pending_reads: u32,
    /// Pages of its logs asked for: cached, waited for, read itself ([`ProcObs::log_pages`]).
    pub(in crate::model) log_pages: [u64; 3],
    loops: u32,
    read: u64,
    grown: u32,
    walked: u32,
    /// Pages of the hash map built so far this loop.
    mapped: u32,
    /// Inserts still to do for the commits walked (the pending-touch counter).
    inserts: u64,
    /// The page of the insert under way, drawn and not yet touched (kept across its fault).
    insert_at: Option<u32>,
    units: u64,
    lines: u64,
    last_line: SimTime,
    max_gap: SimDuration,
    started: Option<SimTime>,
    finished: Option<SimTime>,
    pub(in crate::model) fault_since: Option<SimTime>,
    pub(in crate::model) fault_page: u32,
    /// Pages the fault in progress allocates (its page and its readahead).
    pub(in crate::model) fault_pages: u32,
    faults: u64,
    /// Of `faults`, those an insert took.
    insert_faults: u64,
    fault_time: SimDuration,
    reads: u64,
    bytes_read: u64,
    pub(in crate::model) service: SimRng,
    pub(in crate::model) crypt: SimRng,
    /// Draws the inserts' pages, apart from the I/O streams so that they shift no other draw.
    inserts_rng: SimRng,
}

impl Gitk {
    /// Copy `copy` of the workload `name`, whose logs are shared file `file`.
    pub fn new(name: &str, copy: u32, file: u32, cfg: &FakeGitk, streams: &RngStreams) -> Gitk {
        let s = |what: &str| streams.stream(&format!("{name}.{copy}/{what}"));
        Gitk {
            cfg: cfg.clone(),
            label: if cfg.numjobs > 1 {
                format!("{name}.{copy}")
            } else {
                name.to_string()
            },
            ctx: ActorId(0),
            file,
            pending_reads: 0,
            log_pages: [0; 3],
            loops: 0,
            read: 0,
            grown: 0,
            walked: 0,
            mapped: 0,
            inserts: 0,
            insert_at: None,
            units: 0,
            lines: 0,
            last_line: SimTime::ZERO,
            max_gap: SimDuration::ZERO,
            started: None,
            finished: None,
            fault_since: None,
            fault_page: 0,
            fault_pages: 0,
            faults: 0,
            insert_faults: 0,
            fault_time: SimDuration::ZERO,
            reads: 0,
            bytes_read: 0,
            service: s("service"),
            crypt: s("crypt"),
            inserts_rng: s("inserts"),
        }
    }

    /// Pages of its anonymous memory at most: the log buffer and the hash map.
    pub fn buffer_pages(&self) -> u32 {
        self.log_pages() + self.map_pages()
    }

    /// Pages of its logs (the shared file's size).
    pub fn log_pages(&self) -> u32 {
        (self.cfg.size / PAGE_SIZE) as u32
    }

    /// The page of its logs at device offset `offset`.
    pub fn log_page(&self, offset: u64) -> u32 {
        ((offset - self.cfg.offset) / PAGE_SIZE) as u32
    }

    /// The device offset of page `page` of its logs.
    pub fn log_offset(&self, page: u32) -> u64 {
        self.cfg.offset + u64::from(page) * PAGE_SIZE
    }

    fn map_pages(&self) -> u32 {
        (self.cfg.map / PAGE_SIZE) as u32
    }

    /// Map pages due once `walked` log pages are walked: the map grows in proportion.
    fn map_due(&self) -> u32 {
        let log = u64::from(self.log_pages().max(1));
        (u64::from(self.map_pages()) * u64::from(self.walked) / log) as u32
    }

    /// Commits in the first `walked` pages of the logs: `commits · bytes / size`, so that a
    /// loop inserts exactly `commits`, `size / commits` bytes of logs each.
    fn commits_in(&self, walked: u32) -> u64 {
        let bytes = u128::from(walked) * u128::from(PAGE_SIZE);
        (u128::from(self.cfg.commits) * bytes / u128::from(self.cfg.size.max(1))) as u64
    }

    /// Whether all its loops are done.
    pub fn is_done(&self) -> bool {
        self.finished.is_some()
    }

    /// It starts at `now`.
    pub fn start(&mut self, now: SimTime) {
        self.started = Some(now);
        self.last_line = now;
    }

    /// The next step, from where the loop stands.
    pub fn next(&self) -> Step {
        if self.loops >= self.cfg.loops {
            return Step::Done;
        }
        if self.read < self.cfg.size {
            let bytes = self.cfg.bs.min(self.cfg.size - self.read) as u32;
            return Step::Read {
                offset: self.cfg.offset + self.read,
                bytes,
            };
        }
        let due = self.map_due();
        if self.mapped < due {
            return Step::Map {
                pages: due - self.mapped,
            };
        }
        if self.inserts > 0 {
            return Step::Insert { left: self.inserts };
        }
        if self.walked < self.grown {
            let step = pages_for(self.cfg.bs as u32);
            return Step::Walk {
                first: self.walked,
                pages: step.min(self.grown - self.walked),
            };
        }
        Step::Free
    }

    /// A read of `bytes` completed: the pages the buffer must grow by.
    pub fn read_done(&mut self, bytes: u32) -> u32 {
        self.read += u64::from(bytes);
        self.reads += 1;
        self.bytes_read += u64::from(bytes);
        pages_for(bytes)
    }

    /// The buffer grew by `pages` (the read's data is in it).
    pub fn grown(&mut self, pages: u32, now: SimTime) {
        self.grown += pages;
        self.progress(u64::from(pages) * PAGE_SIZE, now);
    }

    /// The hash map grew by `pages`; returns the index of its first new page in the process's
    /// anonymous region (after the log buffer).
    pub fn mapped(&mut self, pages: u32) -> u32 {
        let first = self.log_pages() + self.mapped;
        self.mapped += pages;
        first
    }

    /// `pages` more pages walked and hashed: their commits are due to be inserted, once the
    /// map has grown for them (none while the map has no page yet: a map of fewer pages than
    /// the walk has steps starts a few steps in).
    pub fn walked(&mut self, pages: u32, now: SimTime) {
        let before = self.commits_in(self.walked);
        self.walked += pages;
        if self.map_due() > 0 {
            self.inserts += self.commits_in(self.walked) - before;
        }
        self.progress(u64::from(pages) * PAGE_SIZE, now);
    }

    /// The page (an index in its anonymous region) the insert under way touches: drawn
    /// uniformly among the map's pages grown so far, once per insert, and kept until
    /// [`Gitk::inserted`], so that an insert that faults touches the same page again
    /// afterwards and every policy draws the same pages in the same order.
    pub fn insert_page(&mut self) -> u32 {
        debug_assert!(
            self.inserts > 0 && self.mapped > 0,
            "an insert without a map"
        );
        let log = self.log_pages();
        let mapped = self.mapped;
        *self
            .insert_at
            .get_or_insert_with(|| log + self.inserts_rng.random_range(0..mapped))
    }

    /// The insert under way touched its page (in memory now). Returns whether inserts are
    /// still due.
    pub fn inserted(&mut self) -> bool {
        self.insert_at = None;
        self.inserts -= 1;
        self.inserts > 0
    }

    /// The buffer was freed: the loop ends; the last one finishes the copy at `now`.
    pub fn freed(&mut self, now: SimTime) {
        debug_assert_eq!(self.inserts, 0, "freed with inserts to do");
        self.loops += 1;
        self.read = 0;
        self.grown = 0;
        self.walked = 0;
        self.mapped = 0;
        if self.loops >= self.cfg.loops {
            self.finished = Some(now);
        }
    }

    /// CPU time to hash `pages` pages.
    pub fn hash_cost(&self, pages: u32) -> SimDuration {
        let bytes = u64::from(pages) * PAGE_SIZE;
        SimDuration::from_ns(
            (u128::from(self.cfg.hash_cost.as_ns()) * u128::from(bytes) / (1 << 20)) as u64,
        )
    }

    fn progress(&mut self, bytes: u64, now: SimTime) {
        self.units += bytes;
        while self.units >= self.cfg.progress_every {
            self.units -= self.cfg.progress_every;
            self.lines += 1;
            self.max_gap = self.max_gap.max(now.since(self.last_line));
            self.last_line = now;
        }
    }

    /// A major fault on `page` began at `now`.
    pub fn fault_began(&mut self, page: u32, now: SimTime) {
        self.fault_since = Some(now);
        self.fault_page = page;
        self.faults += 1;
        if self.insert_at == Some(page) {
            self.insert_faults += 1;
        }
    }

    /// At `now` it found `page` under a read another fault issued (readahead) and waits for
    /// it: no major fault of its own, but blocked time.
    pub fn wait_began(&mut self, page: u32, now: SimTime) {
        self.fault_since = Some(now);
        self.fault_page = page;
    }

    /// The fault's read completed at `now`; returns its page.
    pub fn fault_ended(&mut self, now: SimTime) -> u32 {
        let since = self.fault_since.take().expect("a fault in progress");
        self.fault_time += now.since(since);
        self.fault_page
    }

    /// What it did.
    pub fn obs(&self) -> ProcObs {
        ProcObs {
            name: self.label.clone(),
            elapsed_ns: self
                .finished
                .zip(self.started)
                .map(|(f, s)| f.since(s).as_ns()),
            loops: self.loops,
            progress_lines: self.lines,
            max_gap_ns: self.max_gap.as_ns(),
            major_faults: self.faults,
            fault_ns: self.fault_time.as_ns(),
            insert_faults: self.insert_faults,
            log_pages: self.log_pages,
        }
    }

    /// Its run as a finite job: from its start delay to its last loop's end, its reads.
    pub fn finite_obs(&self) -> crate::model::base::obs::FiniteJobObs {
        let start = SimTime::ZERO + self.cfg.startdelay;
        crate::model::base::obs::FiniteJobObs {
            name: self.label.clone(),
            start,
            elapsed_ns: self.finished.map(|t| t.since(start).as_ns()),
            ios: self.reads,
            bytes: self.bytes_read,
            io_size: Some(self.cfg.size * u64::from(self.cfg.loops)),
            number_ios: None,
        }
    }

    /// When it started (its start delay) and finished.
    pub fn span(&self) -> (SimTime, Option<SimTime>) {
        (SimTime::ZERO + self.cfg.startdelay, self.finished)
    }
}

/// The fake-gitk copies of a scenario, in workload order.
pub(in crate::model) fn processes(sc: &Scenario, streams: &RngStreams) -> Vec<Gitk> {
    let mut out = Vec::new();
    let mut file = 0;
    for wl in &sc.workloads {
        if let WorkloadKind::FakeGitk(g) = &wl.kind {
            for copy in 0..g.numjobs {
                out.push(Gitk::new(&wl.name, copy, file, g, streams));
            }
            file += 1;
        }
    }
    out
}

/// The pages of each shared file (one per fake-gitk workload, in order) that `procs` read.
pub(in crate::model) fn file_pages(procs: &[Gitk]) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    for g in procs {
        if out.len() <= g.file as usize {
            out.push(g.log_pages());
        }
    }
    out
}

impl Gitk {
    /// Pages its buffer holds so far this loop.
    pub fn grown_pages(&self) -> u32 {
        self.grown
    }

    /// Inserts still to do, and the page of the one under way if it is drawn.
    #[cfg(test)]
    pub(in crate::model) fn inserts_left(&self) -> (u64, Option<u32>) {
        (self.inserts, self.insert_at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> FakeGitk {
        FakeGitk {
            size: 5 * PAGE_SIZE,
            offset: 1 << 20,
            bs: 2 * PAGE_SIZE,
            loops: 2,
            progress_every: 3 * PAGE_SIZE,
            hash_cost: SimDuration::from_ms(4),
            numjobs: 1,
            startdelay: SimDuration::ZERO,
            map: 0,
            commits: 0,
        }
    }

    /// A 3-page hash map over a 5-page buffer grows in proportion to the pages walked, before
    /// each walk step (3·2/5 → 1, 3·4/5 → 2, 3·5/5 → 3), after the buffer in the process's
    /// region, and starts again empty on the next loop.
    #[test]
    fn the_hash_map_grows_as_the_logs_are_walked() {
        let c = FakeGitk {
            map: 3 * PAGE_SIZE,
            ..cfg()
        };
        let mut g = Gitk::new("g", 0, 0, &c, &RngStreams::new(1, 0));
        assert_eq!(g.buffer_pages(), 8, "the region holds buffer and map");
        g.start(SimTime::ZERO);
        for bytes in [2u32, 2, 1] {
            let pages = g.read_done(bytes * PAGE_SIZE as u32);
            g.grown(pages, SimTime::ZERO);
        }
        let mut steps = Vec::new();
        loop {
            match g.next() {
                Step::Walk { pages, .. } => g.walked(pages, SimTime::ZERO),
                Step::Map { pages } => steps.push((pages, g.mapped(pages))),
                Step::Free => break,
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(steps, vec![(1, 5), (1, 6), (1, 7)]);
        g.freed(SimTime::ZERO);
        assert!(matches!(g.next(), Step::Read { .. }));
    }

    /// Walks `g`'s loop to its end as the world would (no fault): the map's growth, the inserts
    /// of each step and the pages they touch.
    fn inserts_of_a_loop(g: &mut Gitk) -> Vec<(u64, Vec<u32>)> {
        g.start(SimTime::ZERO);
        for bytes in [2u32, 2, 1] {
            let pages = g.read_done(bytes * PAGE_SIZE as u32);
            g.grown(pages, SimTime::ZERO);
        }
        let mut out = Vec::new();
        loop {
            match g.next() {
                Step::Walk { pages, .. } => g.walked(pages, SimTime::ZERO),
                Step::Map { pages } => _ = g.mapped(pages),
                Step::Insert { left } => {
                    let mut touched = Vec::new();
                    while g.inserts_left().0 > 0 {
                        let pg = g.insert_page();
                        assert_eq!(g.insert_page(), pg, "drawn once per insert");
                        touched.push(pg);
                        g.inserted();
                    }
                    out.push((left, touched));
                }
                Step::Free => return out,
                other => panic!("{other:?}"),
            }
        }
    }

    /// 10 commits in 5 pages of logs walked 2, 2, 1 pages at a time: 4, 4 and 2 inserts
    /// (`10·pages walked/5`, 2 KiB each), after each step's map page is grown, each on a
    /// page of the map grown so far (5; then 5 or 6; then 5 to 7).
    #[test]
    fn each_step_inserts_its_commits_into_the_map_grown_so_far() {
        let c = FakeGitk {
            map: 3 * PAGE_SIZE,
            commits: 10,
            ..cfg()
        };
        let mut g = Gitk::new("g", 0, 0, &c, &RngStreams::new(1, 0));
        let steps = inserts_of_a_loop(&mut g);
        let counts: Vec<u64> = steps.iter().map(|(left, _)| *left).collect();
        assert_eq!(counts, [4, 4, 2]);
        for ((_, pages), top) in steps.iter().zip([5, 6, 7]) {
            assert!(pages.iter().all(|&p| (5..=top).contains(&p)), "{steps:?}");
        }
        // A one-page map has no page until the last step (1·4/5 = 0): the inserts of the
        // first two steps touch nothing, the last step's 2 touch page 5.
        let c = FakeGitk {
            map: PAGE_SIZE,
            commits: 10,
            ..cfg()
        };
        let mut g = Gitk::new("g", 0, 0, &c, &RngStreams::new(1, 0));
        assert_eq!(inserts_of_a_loop(&mut g), [(2, vec![5, 5])]);
        // Without commits there is no insert.
        let mut g = Gitk::new(
            "g",
            0,
            0,
            &FakeGitk {
                map: PAGE_SIZE,
                ..cfg()
            },
            &RngStreams::new(1, 0),
        );
        assert_eq!(inserts_of_a_loop(&mut g), []);
    }

    #[test]
    fn the_gitk_machine_reads_grows_walks_frees_and_loops() {
        let mut g = Gitk::new("g", 0, 0, &cfg(), &RngStreams::new(1, 0));
        let t = |ms| SimTime::ZERO + SimDuration::from_ms(ms);
        g.start(t(0));
        for lp in 0..2u64 {
            // Read 2 + 2 + 1 pages, growing the buffer after each read.
            for (i, bytes) in [2u32, 2, 1].iter().enumerate() {
                let off = (1 << 20) + i as u64 * 2 * PAGE_SIZE;
                let want = Step::Read {
                    offset: off,
                    bytes: bytes * PAGE_SIZE as u32,
                };
                assert_eq!(g.next(), want);
                assert_eq!(g.read_done(bytes * PAGE_SIZE as u32), *bytes);
                g.grown(*bytes, t(10 * lp + i as u64 + 1));
            }
            assert_eq!(g.buffer_pages(), 5);
            // Walk it in steps of bs.
            for (first, pages) in [(0u32, 2u32), (2, 2), (4, 1)] {
                assert_eq!(g.next(), Step::Walk { first, pages });
                g.walked(pages, t(10 * lp + 5));
            }
            assert_eq!(g.next(), Step::Free);
            g.freed(t(10 * lp + 6));
        }
        assert_eq!(g.next(), Step::Done);
        let o = g.obs();
        assert_eq!(o.loops, 2);
        assert_eq!(o.elapsed_ns, Some(16_000_000));
        // 20 pages processed, a line every 3: 6 lines.
        assert_eq!(o.progress_lines, 6);
        // Hashing 2 pages at 4 ms per MiB.
        assert_eq!(g.hash_cost(2).as_ns(), 31_250);
    }

    #[test]
    fn the_longest_progress_gap_is_the_stall() {
        let mut g = Gitk::new("g", 0, 0, &cfg(), &RngStreams::new(1, 0));
        let t = |ms| SimTime::ZERO + SimDuration::from_ms(ms);
        g.start(t(100));
        g.grown(3, t(110));
        g.grown(3, t(500));
        g.fault_began(4, t(500));
        assert_eq!(g.fault_ended(t(700)), 4);
        g.walked(3, t(800));
        let o = g.obs();
        assert_eq!(o.progress_lines, 3);
        assert_eq!(o.max_gap_ns, 390_000_000);
        assert_eq!((o.major_faults, o.fault_ns), (1, 200_000_000));
        assert_eq!(o.elapsed_ns, None);
    }
}

/// fake-gitk through the whole model: swap storms, faults block, pages are conserved.
#[cfg(test)]
mod world_tests {
    use crate::model::{crypt::policy, run_policy};

    /// 128 MiB of RAM, 256 MiB of swap inside dm-crypt, two copies of a fake-gitk whose
    /// buffers together exceed the RAM.
    const SMALL: &str = "
duration: 600s
cpus: 1
device: { kind: hdd7200 }
crypt: { cipher: aes-2009 }
policies: [fifo]
memory: { ram: 128MiB, unreclaimable: 16MiB, mapped: 8MiB, swap: SWAP, swap_offset: 1GiB }
workloads:
  - { kind: fake-gitk, numjobs: 2, size: 64MiB, loops: 2, hash_cost: 1ms }
";

    #[test]
    fn a_swap_storm_faults_pages_back_blocks_the_processes_and_conserves_pages() {
        let sc = crate::scenario::load_str("gitk.yaml", &SMALL.replace("SWAP", "256MiB"))
            .expect("valid scenario");
        let r = run_policy(&sc, policy::find("fifo").unwrap());
        assert!(r.violations.is_empty(), "{:?}", r.violations);
        assert_eq!(r.obs.end, crate::model::base::obs::RunEnd::Finished);
        let m = r.obs.memory.as_ref().expect("a zone");
        let s = &m.swap;
        assert!(s.swap_outs > 1000 && s.swap_ins > 1000, "{s:?}");
        // Readahead: each fault reads its cluster's swapped neighbours too.
        assert!(
            s.swap_ins > s.major_faults && s.readahead_pages > 0,
            "{s:?}"
        );
        assert!(s.swap_ins - s.readahead_pages <= s.major_faults, "{s:?}");
        // Each fault waited for a read through dm-crypt: several ms on a disk.
        assert!(s.fault_time.as_ns() / s.major_faults > 1_000_000, "{s:?}");
        assert_eq!(s.procs.len(), 2);
        for p in &s.procs {
            assert_eq!(p.loops, 2);
            assert_eq!(p.progress_lines, 2 * 2 * 64);
            assert!(p.max_gap_ns > 0 && p.elapsed_ns.is_some());
        }
        // Everything was given back: no anon page; the only slots left are those of writes
        // still in flight for freed buffers when the last copy ended the run.
        assert_eq!(m.end_pages.anon, 0);
        assert_eq!(s.used_end, m.end_pages.anon_writeback);
        assert_eq!(r.obs.finite_jobs.len(), 2);
        assert!(r.obs.elapsed_ns().is_some());
    }

    /// The same storm with a 16 MiB map, without and with 4,000 commits (16 KiB of logs each,
    /// so a map page is touched about once a loop and often goes to swap in between): the
    /// inserts fault swapped map pages back (about 45 per copy), and every page is still
    /// conserved.
    #[test]
    fn hash_map_inserts_fault_swapped_map_pages_back() {
        let run = |extra: &str| {
            let text = SMALL.replace("SWAP", "256MiB").replace(
                "hash_cost: 1ms",
                &format!("hash_cost: 1ms, map: 16MiB{extra}"),
            );
            let sc = crate::scenario::load_str("gitk.yaml", &text).expect("valid scenario");
            let r = run_policy(&sc, policy::find("fifo").unwrap());
            assert!(r.violations.is_empty(), "{:?}", r.violations);
            assert_eq!(r.obs.end, crate::model::base::obs::RunEnd::Finished);
            r.obs.memory.expect("a zone").swap
        };
        let (without, with) = (run(""), run(", commits: 4000"));
        let inserts = |s: &crate::model::base::obs::SwapObs| -> u64 {
            s.procs.iter().map(|p| p.insert_faults).sum()
        };
        assert_eq!(inserts(&without), 0);
        assert!(inserts(&with) > 0, "{with:?}");
        assert!(with.procs.iter().all(|p| p.loops == 2));
    }

    #[test]
    fn out_of_swap_is_reported_and_the_run_goes_on() {
        let sc = crate::scenario::load_str("gitk.yaml", &SMALL.replace("SWAP", "4MiB"))
            .expect("valid scenario");
        let mut sc = sc;
        sc.duration = crate::engine::SimDuration::from_secs(60);
        let r = run_policy(&sc, policy::find("fifo").unwrap());
        assert!(r.violations.is_empty(), "{:?}", r.violations);
        let s = &r.obs.memory.as_ref().expect("a zone").swap;
        assert!(s.out_of_swap > 0, "{s:?}");
        assert_eq!(s.used_peak, 1024);
    }
}
