//! Anonymous memory and swap, as a component: [`Swap`] owns every process's anonymous pages
//! (each one absent, resident, under swap-out, swapped, or being read back), the anon LRU, the
//! swap volume's slots, and the anon/file scan balance of 2.6.32's `get_scan_ratio`. It works
//! on `&mut Mem` (the zone's page books) and returns what the world must do (the slots to
//! write); the world's adapter (`src/model/world/swap.rs`) issues the swap bios through dm-crypt
//! and acts on their completions. The rules are in `docs/model/memory.md`, "Anonymous memory
//! and swap".
//!
//! - **LRU.** One FIFO of resident anonymous pages, in the order they became resident, with a
//!   referenced bit (the PTE's young bit: set when the page is written or touched): a scan
//!   meeting a referenced page clears the bit and moves it to the tail (a rotation); else the
//!   page is reclaimed. This folds 2.6.32's active and inactive anon lists into one
//!   second-chance list.
//! - **Swap-out.** A reclaimed page with a clean copy in swap (swap cache) is freed at once; any
//!   other gets a swap slot (next-fit from a cursor, as `scan_swap_map`), is unmapped and written
//!   as an async WRITE bio; it stays allocated (`AnonWriteback`) until the write completes, then
//!   is freed. No slot left: the page stays, counted out of swap (`activate_locked`).
//! - **Swap-in with readahead** (2.6.32 `do_swap_page` → `swapin_readahead`,
//!   `valid_swaphandles`). Touching a swapped page is a major fault: the window is the run of
//!   allocated slots around the faulting one inside its aligned cluster of
//!   `1 << PAGE_CLUSTER` slots; a page is allocated for every slot of the window whose page is
//!   only in swap (may direct reclaim), each run of contiguous slots is read with one plain
//!   READ (sync for the request pools, without `BIO_RW_SYNCIO`), and the process blocks until
//!   its own page's read completes. The pages read ahead land in the swap cache, on the LRU,
//!   unmapped and unreferenced; touching one later is a minor fault (no I/O), touching one
//!   whose read is still in flight waits for that read. A faulted page keeps its slot as its
//!   swap-cache copy unless swap is more than half full (`vm_swap_full`). Touching a page
//!   still under swap-out maps it again from the swap cache (a minor fault, no I/O).
//! - **Scan balance** (`get_scan_ratio`, 2.6.32 mm/vmscan.c): no free swap → file only; file +
//!   free ≤ high → anon only; else `ap = (swappiness+1)·(scanned_anon+1)/(rotated_anon+1)`,
//!   `fp = (201−swappiness)·(scanned_file+1)/(rotated_file+1)`, anon share `100·ap/(ap+fp+1)`
//!   percent, each list's recent counts halved once its scanned count passes a quarter of the
//!   list. Each list's target is `size >> priority` times its share (the whole list at
//!   priority 0), batched through `nr_saved_scan` until it reaches `SWAP_CLUSTER_MAX`.

use crate::engine::SimRng;
use crate::model::base::config::MemoryConfig;
use crate::model::base::obs::SwapObs;
use crate::model::mm::memory::{Mem, PAGE_SIZE, PageState, SWAP_CLUSTER_MAX};
use std::collections::VecDeque;

/// Largest swap-out write: contiguous slots are written as one bio of at most this many pages
/// (the elevator's back-merge of swap_writepage's one-page bios, capped at 128 KiB).
pub const SWAP_WRITE_PAGES: u32 = 32;

/// Swap readahead's cluster: `1 << PAGE_CLUSTER` slots (2.6.32 `page_cluster`, set to 3 by
/// `swap_setup()` in mm/swap.c on machines with more than 16 MiB of RAM).
pub const PAGE_CLUSTER: u32 = 3;

/// One page of a process's anonymous buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnonPage {
    /// Not allocated.
    Absent,
    /// In memory and on the anon LRU (entry `stamp`); `slot`: its clean copy in swap.
    Resident {
        /// LRU generation of its one valid LRU entry.
        stamp: u32,
        /// Touched since the last scan met it.
        referenced: bool,
        /// Swap-cache copy.
        slot: Option<u32>,
        /// In the process's page table; false for a page swap readahead brought into the
        /// swap cache that the process has not touched yet (touching it is a minor fault).
        mapped: bool,
    },
    /// Unmapped and being written to `slot`; `rescued`: touched meanwhile.
    SwapOut {
        /// Its slot.
        slot: u32,
        /// Mapped again from the swap cache while the write ran.
        rescued: bool,
    },
    /// Only in swap.
    Swapped {
        /// Its slot.
        slot: u32,
    },
    /// A read of its slot is in flight (its page is allocated): its own major fault's, or
    /// another fault's readahead.
    SwapIn {
        /// Its slot.
        slot: u32,
        /// Its process is blocked until the read completes.
        wanted: bool,
    },
}

/// What touching a page found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Touch {
    /// In memory.
    Hit,
    /// Under swap-out or read ahead into the swap cache: mapped from the swap cache.
    Minor,
    /// Its read is in flight (readahead): the process waits for it.
    Wait,
    /// Swapped: a major fault must read `slot`.
    Major {
        /// The page's slot.
        slot: u32,
    },
}

/// A slot's user: a process's page, a page whose buffer was freed while its write (`Orphan`)
/// or its readahead read (`OrphanIn`) ran, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotUse {
    Free,
    Page { proc: u32, page: u32 },
    Orphan,
    OrphanIn,
}

/// What one anon scan batch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AnonScan {
    /// Pages looked at.
    pub scanned: u64,
    /// Pages freed at once (clean swap-cache copies).
    pub reclaimed: u64,
    /// Referenced pages moved to the tail (and pages kept for want of a slot).
    pub rotated: u64,
    /// Pages sent to swap-out (their slots wait in [`Swap::take_writes`]).
    pub written: u64,
}

/// Anonymous memory and the swap volume.
#[derive(Debug)]
pub struct Swap {
    slots: Vec<SlotUse>,
    used: u64,
    cursor: usize,
    /// Byte offset of the swap volume on the device.
    offset: u64,
    procs: Vec<Vec<AnonPage>>,
    lru: VecDeque<(u32, u32, u32)>,
    next_gen: u32,
    /// Resident pages on the LRU.
    resident: u64,
    /// Pages whose write is in flight after their buffer was freed.
    orphans: u64,
    /// Pages whose readahead read is in flight after their buffer was freed.
    orphans_in: u64,
    /// `recent_scanned` and `recent_rotated`, [anon, file].
    recent_scanned: [u64; 2],
    recent_rotated: [u64; 2],
    /// `nr_saved_scan`, [anon, file].
    saved: [u64; 2],
    swappiness: u64,
    writes: Vec<u32>,
    /// The slots a fault reads, before they are cut into runs (kept for its allocation).
    read: Vec<u32>,
    /// Counters (kept while the zone is measuring).
    pub obs: SwapObs,
}

impl Swap {
    /// The swap of `cfg` with one buffer of `pages[i]` pages per process.
    pub fn new(cfg: &MemoryConfig, pages: &[u32]) -> Swap {
        let total = (cfg.swap / PAGE_SIZE) as usize;
        Swap {
            slots: vec![SlotUse::Free; total],
            used: 0,
            cursor: 0,
            offset: cfg.swap_offset,
            procs: pages
                .iter()
                .map(|&n| vec![AnonPage::Absent; n as usize])
                .collect(),
            lru: VecDeque::new(),
            next_gen: 0,
            resident: 0,
            orphans: 0,
            orphans_in: 0,
            recent_scanned: [0; 2],
            recent_rotated: [0; 2],
            saved: [0; 2],
            swappiness: u64::from(cfg.swappiness.min(100)),
            writes: Vec::new(),
            read: Vec::new(),
            obs: SwapObs {
                total_slots: total as u64,
                ..SwapObs::default()
            },
        }
    }

    /// Whether reclaim balances anon against file pages (there is a swap volume).
    pub fn enabled(&self) -> bool {
        !self.slots.is_empty()
    }

    /// Slots in use.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// Resident anonymous pages on the LRU.
    pub fn resident(&self) -> u64 {
        self.resident
    }

    /// Page `page` of process `proc`.
    pub fn page(&self, proc: u32, page: u32) -> AnonPage {
        self.procs[proc as usize][page as usize]
    }

    /// Byte offset on the device of `slot`.
    pub fn slot_offset(&self, slot: u32) -> u64 {
        self.offset + u64::from(slot) * PAGE_SIZE
    }

    /// The slot at byte offset `offset` of the device.
    pub fn slot_at(&self, offset: u64) -> u32 {
        ((offset - self.offset) / PAGE_SIZE) as u32
    }

    fn push_lru(&mut self, proc: u32, page: u32, slot: Option<u32>) {
        self.push_lru_as(proc, page, slot, true, true);
    }

    fn push_lru_as(&mut self, proc: u32, page: u32, slot: Option<u32>, mapped: bool, refd: bool) {
        let stamp = self.next_gen;
        self.next_gen = self.next_gen.wrapping_add(1);
        self.procs[proc as usize][page as usize] = AnonPage::Resident {
            stamp,
            referenced: refd,
            slot,
            mapped,
        };
        self.lru.push_back((proc, page, stamp));
        self.resident += 1;
    }

    /// Process `proc` wrote the new pages `pages` of its buffer or map (already counted `Anon`
    /// in the zone): each joins the LRU in turn, referenced and mapped, with a fresh stamp, in
    /// one pass over the process's row.
    pub fn add_run(&mut self, proc: u32, pages: std::ops::Range<u32>) {
        let row = &mut self.procs[proc as usize][pages.start as usize..pages.end as usize];
        self.lru.reserve(row.len());
        for (pg, state) in pages.zip(row.iter_mut()) {
            assert_eq!(*state, AnonPage::Absent, "page {pg} exists");
            let stamp = self.next_gen;
            self.next_gen = self.next_gen.wrapping_add(1);
            *state = AnonPage::Resident {
                stamp,
                referenced: true,
                slot: None,
                mapped: true,
            };
            self.lru.push_back((proc, pg, stamp));
        }
        self.resident += row.len() as u64;
    }

    /// Process `proc` touches `page` if it is resident and mapped: the [`Touch::Hit`] of
    /// [`Swap::touch`], with its one effect (the page is marked referenced), and `true`. Any
    /// other page is left as it was and `false` returned, for [`Swap::touch`] to handle. The
    /// hit is nearly every touch of a walk or an insert, so it is kept small enough to inline
    /// into those loops.
    #[inline]
    pub fn touch_hit(&mut self, proc: u32, page: u32) -> bool {
        match &mut self.procs[proc as usize][page as usize] {
            AnonPage::Resident {
                referenced,
                mapped: true,
                ..
            } => {
                *referenced = true;
                true
            }
            _ => false,
        }
    }

    /// Process `proc` touches `page`.
    pub fn touch(&mut self, proc: u32, page: u32) -> Touch {
        let full = self.swap_full();
        let p = &mut self.procs[proc as usize][page as usize];
        match p {
            AnonPage::Resident {
                referenced,
                mapped,
                slot,
                ..
            } => {
                *referenced = true;
                if *mapped {
                    return Touch::Hit;
                }
                // Read ahead: do_swap_page finds it in the swap cache and maps it.
                *mapped = true;
                self.obs.minor_faults += 1;
                if full && let Some(s) = slot.take() {
                    self.free_slot(s);
                }
                Touch::Minor
            }
            AnonPage::SwapOut { rescued, .. } => {
                if !*rescued {
                    *rescued = true;
                    self.obs.minor_faults += 1;
                }
                Touch::Minor
            }
            AnonPage::Swapped { slot } => Touch::Major { slot: *slot },
            AnonPage::SwapIn { wanted, .. } => {
                *wanted = true;
                Touch::Wait
            }
            AnonPage::Absent => unreachable!("touching page {page} in state {p:?}"),
        }
    }

    /// `vm_swap_full()`: more than half the slots in use.
    fn swap_full(&self) -> bool {
        self.used * 2 > self.slots.len() as u64
    }

    /// `valid_swaphandles`: the readahead window of a fault on `slot`, the run of allocated
    /// slots around it inside its aligned cluster of `1 << PAGE_CLUSTER` (the first slot of
    /// the volume, the swap header in the kernel, is a data slot here).
    fn window(&self, slot: u32) -> std::ops::Range<u32> {
        let base = (slot >> PAGE_CLUSTER) << PAGE_CLUSTER;
        let end = (base + (1 << PAGE_CLUSTER)).min(self.slots.len() as u32);
        let used = |s: u32| self.slots[s as usize] != SlotUse::Free;
        let mut hi = slot + 1;
        while hi < end && used(hi) {
            hi += 1;
        }
        let mut lo = slot;
        while lo > base && used(lo - 1) {
            lo -= 1;
        }
        lo..hi
    }

    /// The page of `slot` when it is only in swap (a read must bring it in).
    fn swapped_page(&self, slot: u32) -> Option<(u32, u32)> {
        match self.slots[slot as usize] {
            SlotUse::Page { proc, page } => {
                matches!(self.page(proc, page), AnonPage::Swapped { .. }).then_some((proc, page))
            }
            _ => None,
        }
    }

    /// Pages a major fault on `page` must allocate: one per slot of its readahead window whose
    /// page is only in swap (the faulting page included; pages already in the swap cache need
    /// no read).
    pub fn fault_pages(&self, proc: u32, page: u32) -> u32 {
        let AnonPage::Swapped { slot } = self.page(proc, page) else {
            unreachable!("fault on a page that is not swapped")
        };
        let w = self.window(slot);
        w.filter(|&s| self.swapped_page(s).is_some()).count() as u32
    }

    /// A major fault on `page` has `budget` pages (counted `Anon`): the faulting page and the
    /// window's other swapped pages (in slot order, while the budget lasts) go under read,
    /// unused pages are freed. Fills `runs` with the runs of contiguous slots to read,
    /// `(first, count)`, and returns true; or returns false, `runs` empty, when the page is no
    /// longer only in swap (its pages all freed: the process touches it again).
    pub fn fault_start(
        &mut self,
        mem: &mut Mem,
        (proc, page): (u32, u32),
        budget: u32,
        runs: &mut Vec<(u32, u32)>,
    ) -> bool {
        runs.clear();
        let target = match self.page(proc, page) {
            AnonPage::Swapped { slot } if budget > 0 => Some(slot),
            _ => None,
        };
        let mut read = std::mem::take(&mut self.read);
        read.clear();
        if let Some(t) = target {
            self.procs[proc as usize][page as usize] = AnonPage::SwapIn {
                slot: t,
                wanted: true,
            };
            read.push(t);
            for s in self.window(t) {
                if read.len() as u32 >= budget {
                    break;
                }
                if let Some((q, pg)) = self.swapped_page(s) {
                    self.procs[q as usize][pg as usize] = AnonPage::SwapIn {
                        slot: s,
                        wanted: false,
                    };
                    read.push(s);
                }
            }
        }
        mem.free_pages(
            u64::from(budget.saturating_sub(read.len() as u32)),
            PageState::Anon,
        );
        if target.is_some() {
            self.obs.readahead_pages += read.len() as u64 - 1;
            read.sort_unstable();
            for &s in &read {
                match runs.last_mut() {
                    Some((first, n)) if *first + *n == s => *n += 1,
                    _ => runs.push((s, 1)),
                }
            }
        }
        self.read = read;
        target.is_some()
    }

    /// The read of `slot` completed. A page its process waits for is mapped and resident
    /// again (its slot kept as the swap-cache copy unless swap is more than half full) and
    /// the process is returned; a page read ahead joins the LRU unmapped and unreferenced,
    /// in the swap cache; a page whose buffer was freed meanwhile is freed with its slot.
    pub fn read_done(&mut self, mem: &mut Mem, slot: u32) -> Option<u32> {
        let (proc, page) = match self.slots[slot as usize] {
            SlotUse::OrphanIn => {
                mem.free(0, PageState::Anon);
                self.orphans_in -= 1;
                self.free_slot(slot);
                return None;
            }
            SlotUse::Page { proc, page } => (proc, page),
            other => unreachable!("read completion for slot {slot} in use {other:?}"),
        };
        let AnonPage::SwapIn { wanted, .. } = self.page(proc, page) else {
            unreachable!("read completion for a page not being read")
        };
        self.obs.swap_ins += 1;
        if !wanted {
            self.push_lru_as(proc, page, Some(slot), false, false);
            return None;
        }
        let slot = if self.swap_full() {
            self.free_slot(slot);
            None
        } else {
            Some(slot)
        };
        self.push_lru(proc, page, slot);
        Some(proc)
    }

    fn alloc_slot(&mut self, proc: u32, page: u32) -> Option<u32> {
        let n = self.slots.len();
        if self.used as usize >= n {
            return None;
        }
        // The slot after `i`, wrapping at the end (a compare, not a division).
        let after = |i: usize| if i + 1 == n { 0 } else { i + 1 };
        let mut i = self.cursor;
        while self.slots[i] != SlotUse::Free {
            i = after(i);
        }
        self.slots[i] = SlotUse::Page { proc, page };
        self.cursor = after(i);
        self.used += 1;
        self.obs.used_peak = self.obs.used_peak.max(self.used);
        Some(i as u32)
    }

    fn free_slot(&mut self, slot: u32) {
        debug_assert_ne!(self.slots[slot as usize], SlotUse::Free);
        self.slots[slot as usize] = SlotUse::Free;
        self.used -= 1;
    }

    /// Scans up to `n` resident pages from the LRU's head (see the module's rules); pages to
    /// write wait in [`Swap::take_writes`]. Without `may_write` (direct reclaim on a congested
    /// disk) a page that needs a write stays.
    pub fn scan(&mut self, mem: &mut Mem, n: u64, may_write: bool) -> AnonScan {
        let mut out = AnonScan::default();
        while out.scanned < n {
            let Some((proc, page, stamp)) = self.lru.pop_front() else {
                break;
            };
            let AnonPage::Resident {
                stamp: g,
                referenced,
                slot,
                mapped,
            } = self.page(proc, page)
            else {
                continue;
            };
            if g != stamp {
                continue;
            }
            out.scanned += 1;
            self.resident -= 1;
            if referenced {
                out.rotated += 1;
                self.push_lru_as(proc, page, slot, mapped, false);
            } else if let Some(slot) = slot {
                // Clean in the swap cache: freed with no write.
                self.procs[proc as usize][page as usize] = AnonPage::Swapped { slot };
                out.reclaimed += 1;
            } else if !may_write {
                self.push_lru_unreferenced(proc, page, None);
            } else if let Some(slot) = self.alloc_slot(proc, page) {
                self.procs[proc as usize][page as usize] = AnonPage::SwapOut {
                    slot,
                    rescued: false,
                };
                mem.transition(1, PageState::Anon, PageState::AnonWriteback);
                self.writes.push(slot);
                out.written += 1;
            } else {
                self.obs.out_of_swap += 1;
                out.rotated += 1;
                self.push_lru_unreferenced(proc, page, None);
            }
        }
        // The clean pages go back to the zone together: nothing above reads the zone, so this
        // is exactly their frees one by one (the same coalescing draws in the same order).
        mem.free_pages(out.reclaimed, PageState::Anon);
        self.obs.anon_scanned += out.scanned;
        self.obs.anon_dropped += out.reclaimed;
        self.obs.swap_outs += out.written;
        self.note(0, out.scanned, out.rotated);
        out
    }

    fn push_lru_unreferenced(&mut self, proc: u32, page: u32, slot: Option<u32>) {
        self.push_lru(proc, page, slot);
        if let AnonPage::Resident { referenced, .. } = &mut self.procs[proc as usize][page as usize]
        {
            *referenced = false;
        }
    }

    /// Adds a scan of list `l` (0 anon, 1 file) to the recent counts.
    pub fn note(&mut self, l: usize, scanned: u64, rotated: u64) {
        self.recent_scanned[l] += scanned;
        self.recent_rotated[l] += rotated;
    }

    /// The slots sent to swap-out since the last call, in scan order. Hand the vector back
    /// with [`Swap::return_writes`] so the next scan reuses its allocation.
    pub fn take_writes(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.writes)
    }

    /// A vector [`Swap::take_writes`] gave out, done with: emptied, it becomes the list of
    /// pending writes again unless new writes were queued meanwhile (then it is dropped).
    pub fn return_writes(&mut self, mut used: Vec<u32>) {
        if self.writes.is_empty() {
            used.clear();
            self.writes = used;
        }
    }

    /// The write of `slot` completed: its page is freed (or, touched meanwhile, mapped again
    /// with the slot as its swap-cache copy); a freed buffer's page frees its slot too. The
    /// model completes whole bios ([`Swap::writes_done`]); tests complete one slot at a time.
    #[cfg(test)]
    pub fn write_done(&mut self, mem: &mut Mem, slot: u32) {
        self.writes_done(mem, slot..slot + 1);
    }

    /// The write of `slots` completed: each slot's page in turn is freed (or, touched meanwhile,
    /// mapped again with the slot as its swap-cache copy), and a freed buffer's slot is freed
    /// too. The freed pages go back to the zone together at the end: nothing in between reads
    /// the zone, so this is exactly their frees one by one (the same coalescing draws in the
    /// same order).
    pub fn writes_done(&mut self, mem: &mut Mem, slots: std::ops::Range<u32>) {
        let mut freed = 0;
        for slot in slots {
            freed += u64::from(self.write_done_frees(mem, slot));
        }
        mem.free_pages(freed, PageState::AnonWriteback);
    }

    /// The write of `slot` completed, all but the free of its page: `true` if that page is to
    /// be freed (the caller frees it), `false` if it was touched meanwhile and stays mapped.
    fn write_done_frees(&mut self, mem: &mut Mem, slot: u32) -> bool {
        match self.slots[slot as usize] {
            SlotUse::Orphan => {
                self.orphans -= 1;
                self.free_slot(slot);
                true
            }
            SlotUse::Page { proc, page } => {
                let AnonPage::SwapOut { rescued, .. } = self.page(proc, page) else {
                    unreachable!("write completion for a page not under swap-out")
                };
                if rescued {
                    mem.transition(1, PageState::AnonWriteback, PageState::Anon);
                    self.push_lru(proc, page, Some(slot));
                    false
                } else {
                    self.procs[proc as usize][page as usize] = AnonPage::Swapped { slot };
                    true
                }
            }
            SlotUse::Free | SlotUse::OrphanIn => {
                unreachable!("write completion for slot {slot} without a write")
            }
        }
    }

    /// Process `proc` throws its buffer away: resident pages are freed, swapped pages free
    /// their slots, pages under swap-out are freed when their write completes.
    pub fn free_all(&mut self, mem: &mut Mem, proc: u32) {
        // The resident pages go back to the zone together at the end: nothing else here
        // touches the zone, so its draws come in the same order.
        let mut resident = 0;
        for page in 0..self.procs[proc as usize].len() {
            match self.procs[proc as usize][page] {
                AnonPage::Absent => {}
                AnonPage::Resident { slot, .. } => {
                    resident += 1;
                    self.resident -= 1;
                    if let Some(s) = slot {
                        self.free_slot(s);
                    }
                }
                AnonPage::Swapped { slot } => self.free_slot(slot),
                AnonPage::SwapOut { slot, .. } => {
                    self.slots[slot as usize] = SlotUse::Orphan;
                    self.orphans += 1;
                }
                AnonPage::SwapIn { slot, wanted } => {
                    // Another fault's readahead: the page is freed when the read completes.
                    assert!(!wanted, "a blocked process freed its buffer");
                    self.slots[slot as usize] = SlotUse::OrphanIn;
                    self.orphans_in += 1;
                }
            }
            self.procs[proc as usize][page] = AnonPage::Absent;
        }
        mem.free_pages(resident, PageState::Anon);
        self.compact();
    }

    /// Drops stale LRU entries once they outnumber the live ones (bounded memory).
    fn compact(&mut self) {
        if self.lru.len() as u64 <= 2 * self.resident + 1024 {
            return;
        }
        let procs = &self.procs;
        self.lru.retain(|&(p, pg, stamp)| {
            matches!(procs[p as usize][pg as usize], AnonPage::Resident { stamp: g, .. } if g == stamp)
        });
    }

    /// `get_scan_ratio`: percent of pressure on [anon, file], given the file LRU's size and
    /// the zone's free pages and high mark.
    pub fn scan_percent(&mut self, file: u64, free: u64, high: u64) -> [u64; 2] {
        if self.used >= self.slots.len() as u64 {
            return [0, 100];
        }
        if file + free <= high {
            return [100, 0];
        }
        let sizes = [self.resident, file];
        for (l, size) in sizes.into_iter().enumerate() {
            if self.recent_scanned[l] > size / 4 {
                self.recent_scanned[l] /= 2;
                self.recent_rotated[l] /= 2;
            }
        }
        let anon_prio = self.swappiness;
        let file_prio = 200 - self.swappiness;
        let ap = (anon_prio + 1) * (self.recent_scanned[0] + 1) / (self.recent_rotated[0] + 1);
        let fp = (file_prio + 1) * (self.recent_scanned[1] + 1) / (self.recent_rotated[1] + 1);
        let anon = 100 * ap / (ap + fp + 1);
        [anon, 100 - anon]
    }

    /// `nr_scan_try_batch`: list `l`'s share of a pass adds to its saved count, scanned once
    /// it reaches a batch.
    pub fn try_batch(&mut self, l: usize, n: u64) -> u64 {
        self.saved[l] += n;
        if self.saved[l] >= SWAP_CLUSTER_MAX {
            std::mem::take(&mut self.saved[l])
        } else {
            0
        }
    }

    /// Anonymous page conservation: resident and faulting pages against the zone's `Anon`,
    /// pages under swap-out against `AnonWriteback`, slots in use against their users.
    pub fn check(&self, mem: &Mem) -> Result<(), String> {
        let (mut anon, mut wb) = (self.orphans_in, self.orphans);
        let mut slots = self.orphans + self.orphans_in;
        for pages in &self.procs {
            for p in pages {
                match p {
                    AnonPage::Absent => {}
                    AnonPage::Resident { slot, .. } => {
                        anon += 1;
                        slots += u64::from(slot.is_some());
                    }
                    AnonPage::SwapIn { .. } => {
                        anon += 1;
                        slots += 1;
                    }
                    AnonPage::SwapOut { .. } => {
                        wb += 1;
                        slots += 1;
                    }
                    AnonPage::Swapped { .. } => slots += 1,
                }
            }
        }
        let pages = mem.pages;
        if (anon, wb, slots) != (pages.anon, pages.anon_writeback, self.used) {
            return Err(format!(
                "processes hold {anon} anon pages, {wb} under swap-out and {slots} slots; the \
                 zone counts {} and {}, swap {} slots",
                pages.anon, pages.anon_writeback, self.used
            ));
        }
        Ok(())
    }

    /// The counters at the run's end.
    pub fn finish(&self) -> SwapObs {
        let mut o = self.obs.clone();
        o.used_end = self.used;
        o
    }
}

/// A stream for swap bios' device and crypto draws.
pub(in crate::model) fn swap_rng(streams: &crate::engine::RngStreams) -> SimRng {
    streams.stream("memory/swap")
}

#[cfg(test)]
mod tests;
