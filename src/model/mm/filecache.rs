//! Page-cache identity for the files that several processes read: [`FileCache`] knows which
//! pages of each such file are in memory, which are being read and who waits for them, so that a
//! process reading a page another has read finds it in the cache, or waits for the read already
//! in flight, instead of reading it again (2.6.32 `do_generic_file_read()`:
//! `find_get_page()`, then `lock_page_killable()` on a page under I/O).
//!
//! The files are fake-gitk's logs: the copies of one `kind: fake-gitk` workload read the same
//! repository, so they share its pages (`docs/model/workloads.md` §5a).
//! Every other buffered read still misses (the model keeps no identity for other files).
//!
//! The cached pages are clean page cache: they are counted in the zone's `clean` pages and leave
//! when a reclaim scan frees clean pages. A scan's clean pages are drawn from the LRU as a whole
//! (`docs/model/memory.md` §8); how many of them are shared file pages is
//! drawn the same way (hypergeometric, from this component's own stream, so no other draw moves),
//! and those are the file's oldest-cached pages (the inactive list's order: first in, first out).
//! Nothing here changes a scenario without fake-gitk copies: no page is ever cached and no
//! draw is made.

use crate::engine::SimRng;
use std::collections::VecDeque;

/// One page of a shared file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// Not in memory.
    Absent,
    /// Being read by read `r` (an index into [`FileCache::reads`]).
    Reading(u32),
    /// In the page cache (and in the FIFO, once).
    Cached,
}

/// A read in flight and the processes waiting for it (its issuer first).
#[derive(Debug, Default)]
struct Read {
    waiters: Vec<u32>,
}

/// What a process asking for pages of a shared file must do; the runs of absent pages it must
/// read itself are in the vector it passed to [`FileCache::request`].
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// Reads it waits for: its own runs plus reads of others already in flight. Zero: every
    /// page was cached (a hit).
    pub waits: u32,
    /// Of the pages asked for: found cached, found under another read, to be read.
    pub pages: [u32; 3],
}

/// The shared files' pages; see the [module docs](self).
#[derive(Debug)]
pub struct FileCache {
    files: Vec<Vec<Slot>>,
    /// Cached pages in the order they were cached, `(file, page)`: a page leaves the cache only
    /// from the front, so each cached page is here exactly once.
    fifo: VecDeque<(u32, u32)>,
    reads: Vec<Read>,
    free_reads: Vec<u32>,
    cached: u64,
    rng: SimRng,
    /// The reads in flight one request waits for (kept for its allocation).
    waited: Vec<u32>,
}

impl FileCache {
    /// No shared file yet; `rng` draws which reclaimed clean pages were the files'.
    pub fn new(rng: SimRng) -> FileCache {
        FileCache {
            files: Vec::new(),
            fifo: VecDeque::new(),
            reads: Vec::new(),
            free_reads: Vec::new(),
            cached: 0,
            rng,
            waited: Vec::new(),
        }
    }

    /// Adds shared files of `pages[i]` pages each, none of them cached.
    pub fn add_files(&mut self, pages: &[u32]) {
        self.files
            .extend(pages.iter().map(|&n| vec![Slot::Absent; n as usize]));
    }

    /// Pages of the shared files in the page cache.
    pub fn cached(&self) -> u64 {
        self.cached
    }

    /// Reads in flight.
    pub fn reads_in_flight(&self) -> usize {
        self.reads.len() - self.free_reads.len()
    }

    /// Process `proc` asks for pages `first..first + n` of `file`: cached pages are hits, pages
    /// under a read in flight make it wait for that read, and each run of absent pages becomes a
    /// read of its own that it issues and waits for, put in `runs` as `(first, pages)` (the
    /// vector is cleared first).
    pub fn request(
        &mut self,
        file: u32,
        first: u32,
        n: u32,
        proc: u32,
        runs: &mut Vec<(u32, u32)>,
    ) -> Request {
        let mut out = Request::default();
        runs.clear();
        self.waited.clear();
        let mut run: Option<(u32, u32)> = None;
        for pg in first..first + n {
            match self.files[file as usize][pg as usize] {
                Slot::Absent => {
                    out.pages[2] += 1;
                    // Any other page ends a run, so an absent page always extends it.
                    run = Some(run.map_or((pg, 1), |(a, len)| (a, len + 1)));
                    continue;
                }
                Slot::Cached => out.pages[0] += 1,
                Slot::Reading(r) => {
                    out.pages[1] += 1;
                    if !self.waited.contains(&r) {
                        self.waited.push(r);
                    }
                }
            }
            runs.extend(run.take());
        }
        runs.extend(run);
        for &r in &self.waited {
            self.reads[r as usize].waiters.push(proc);
        }
        for &(a, len) in runs.iter() {
            let r = self.new_read(proc);
            for slot in &mut self.files[file as usize][a as usize..(a + len) as usize] {
                *slot = Slot::Reading(r);
            }
        }
        out.waits = (self.waited.len() + runs.len()) as u32;
        out
    }

    fn new_read(&mut self, issuer: u32) -> u32 {
        match self.free_reads.pop() {
            Some(r) => {
                self.reads[r as usize].waiters.push(issuer);
                r
            }
            None => {
                self.reads.push(Read {
                    waiters: vec![issuer],
                });
                (self.reads.len() - 1) as u32
            }
        }
    }

    /// The read of pages `first..first + n` of `file` (one run of a [`Request`]) completed:
    /// its pages are cached. Appends the processes that waited for it to `woken`, its issuer
    /// first.
    pub fn read_done(&mut self, file: u32, first: u32, n: u32, woken: &mut Vec<u32>) {
        let Slot::Reading(r) = self.files[file as usize][first as usize] else {
            panic!("file {file} page {first}: a read completed for a page not being read")
        };
        for pg in first..first + n {
            let slot = &mut self.files[file as usize][pg as usize];
            debug_assert_eq!(*slot, Slot::Reading(r), "a read covers its whole run");
            *slot = Slot::Cached;
            self.fifo.push_back((file, pg));
        }
        self.cached += u64::from(n);
        woken.append(&mut self.reads[r as usize].waiters);
        self.free_reads.push(r);
    }

    /// A reclaim scan freed `clean` of the zone's `clean_total` clean pages: draws how many were
    /// shared file pages and drops that many of the oldest cached ones. Returns the count.
    pub fn reclaimed(&mut self, clean: u64, clean_total: u64) -> u64 {
        if self.cached == 0 || clean == 0 {
            return 0;
        }
        debug_assert!(self.cached <= clean_total, "shared pages are clean pages");
        let n = super::memory::draw_hypergeometric(&mut self.rng, clean, self.cached, clean_total);
        for _ in 0..n {
            let (file, pg) = self.fifo.pop_front().expect("cached pages are queued");
            let slot = &mut self.files[file as usize][pg as usize];
            debug_assert_eq!(*slot, Slot::Cached, "the FIFO holds cached pages only");
            *slot = Slot::Absent;
        }
        self.cached -= n;
        n
    }

    /// Checks the books: the cached count is the cached slots and the FIFO's length, and every
    /// page being read belongs to a read in flight.
    pub fn check(&self) -> Result<(), String> {
        let mut cached = 0u64;
        for (f, pages) in self.files.iter().enumerate() {
            for (pg, slot) in pages.iter().enumerate() {
                match *slot {
                    Slot::Cached => cached += 1,
                    Slot::Reading(r) if self.free_reads.contains(&r) => {
                        return Err(format!("file {f} page {pg}: read {r} is not in flight"));
                    }
                    _ => {}
                }
            }
        }
        if cached != self.cached {
            return Err(format!(
                "shared file pages: {cached} cached, the books say {}",
                self.cached
            ));
        }
        if let Some(&(f, pg)) = self
            .fifo
            .iter()
            .find(|&&(f, pg)| self.files[f as usize][pg as usize] != Slot::Cached)
        {
            return Err(format!(
                "file {f} page {pg} is queued for reclaim but not cached"
            ));
        }
        if self.fifo.len() as u64 != cached {
            return Err(format!(
                "shared file pages: {cached} cached, {} in the FIFO",
                self.fifo.len()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn cache(pages: u32) -> FileCache {
        let mut c = FileCache::new(SimRng::seed_from_u64(7));
        c.add_files(&[pages]);
        c
    }

    /// `proc` asks for pages `first..first + n` of file 0: the runs it must read, and the rest.
    fn ask(c: &mut FileCache, first: u32, n: u32, proc: u32) -> (Vec<(u32, u32)>, Request) {
        let mut runs = vec![(99, 99)];
        let r = c.request(0, first, n, proc, &mut runs);
        (runs, r)
    }

    /// Two copies reading the same 16 pages: the first reads them, the second waits for that
    /// read, both wake when it completes; then a third finds them cached.
    #[test]
    fn a_follower_waits_for_the_leaders_read_then_hits() {
        let mut c = cache(32);
        let (runs, lead) = ask(&mut c, 0, 16, 0);
        assert_eq!(
            (runs, lead.waits, lead.pages),
            (vec![(0, 16)], 1, [0, 0, 16])
        );
        let (runs, follow) = ask(&mut c, 0, 16, 1);
        assert_eq!((runs.len(), follow.waits, follow.pages), (0, 1, [0, 16, 0]));
        assert_eq!(c.reads_in_flight(), 1);
        let mut woken = Vec::new();
        c.read_done(0, 0, 16, &mut woken);
        assert_eq!(woken, vec![0, 1], "the issuer first, then the waiter");
        assert_eq!((c.cached(), c.reads_in_flight()), (16, 0));
        let (runs, third) = ask(&mut c, 0, 16, 2);
        assert_eq!(
            (runs.len(), third.waits, third.pages),
            (0, 0, [16, 0, 0]),
            "a hit: nothing to read, nothing to wait for"
        );
        c.check().unwrap();
    }

    /// A request over cached, in-flight and absent pages reads only the absent runs, and waits
    /// for each distinct read once.
    #[test]
    fn a_mixed_request_reads_only_the_absent_runs() {
        let mut c = cache(16);
        ask(&mut c, 2, 2, 0); // read A: pages 2, 3
        let mut woken = Vec::new();
        ask(&mut c, 6, 1, 0); // read B: page 6
        c.read_done(0, 6, 1, &mut woken); // page 6 cached
        let (runs, r) = ask(&mut c, 0, 10, 1);
        assert_eq!(runs, vec![(0, 2), (4, 2), (7, 3)]);
        assert_eq!(r.waits, 4, "read A plus its own three runs");
        assert_eq!(r.pages, [1, 2, 7]);
        woken.clear();
        c.read_done(0, 2, 2, &mut woken);
        assert_eq!(woken, vec![0, 1]);
        c.check().unwrap();
    }

    /// Reclaim takes the oldest cached pages first; pages cached again after an eviction are
    /// queued afresh, behind the others.
    #[test]
    fn reclaim_takes_the_oldest_cached_pages() {
        let mut c = cache(8);
        let mut woken = Vec::new();
        for pg in 0..8 {
            ask(&mut c, pg, 1, 0);
            c.read_done(0, pg, 1, &mut woken);
        }
        // Every clean page of the zone is a shared one: all four freed are.
        assert_eq!(c.reclaimed(4, 8), 4);
        assert_eq!(c.cached(), 4);
        let (runs, _) = ask(&mut c, 0, 8, 1);
        assert_eq!(runs, vec![(0, 4)], "pages 0-3 went first");
        c.read_done(0, 0, 4, &mut woken);
        assert_eq!(c.reclaimed(4, 8), 4);
        let (runs, _) = ask(&mut c, 0, 8, 1);
        assert_eq!(runs, vec![(4, 4)], "then 4-7, the oldest left");
        c.check().unwrap();
        // No shared page cached: no draw, nothing evicted.
        let mut empty = cache(4);
        assert_eq!(empty.reclaimed(32, 100), 0);
    }
}
