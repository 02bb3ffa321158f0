//! Tests of the anonymous pages, their LRU, the swap slots and the runs that stand for
//! calls one by one.

use super::*;
use crate::engine::{RngStreams, SimTime};
use crate::model::mm::memory::Gfp;

/// A 64 MiB zone with `swap_pages` slots and one process of `pages` pages.
fn setup(swap_pages: u64, pages: u32) -> (Mem, Swap) {
    let mut cfg = crate::model::testing::laptop_memory(0, 1.0, 1);
    cfg.ram = 64 << 20;
    cfg.min_free_kbytes = 1024;
    cfg.unreclaimable = 0;
    cfg.mapped = 0;
    cfg.page_cache = 0;
    cfg.atomic.clear();
    cfg.swap = swap_pages * PAGE_SIZE;
    cfg.swap_offset = 1 << 30;
    let mem = Mem::new(&cfg, &RngStreams::new(1, 0), true);
    let swap = Swap::new(&cfg, &[pages]);
    (mem, swap)
}

/// `fault_start` of `page` with `budget` pages: the runs to read, or `None`. The runs
/// vector starts with a junk entry, so a `fault_start` that does not clear it fails.
fn fault(
    swap: &mut Swap,
    mem: &mut Mem,
    proc: u32,
    page: u32,
    budget: u32,
) -> Option<Vec<(u32, u32)>> {
    let mut runs = vec![(u32::MAX, 1)];
    let started = swap.fault_start(mem, (proc, page), budget, &mut runs);
    assert!(started || runs.is_empty());
    started.then_some(runs)
}

fn grow(mem: &mut Mem, swap: &mut Swap, pages: u32) {
    for pg in 0..pages {
        assert!(
            mem.alloc(0, Gfp::User, PageState::Anon, SimTime::ZERO)
                .granted
        );
        swap.add_run(0, pg..pg + 1);
    }
}

/// A returned write list keeps its allocation for the next scan, unless writes were
/// queued while it was out: those are kept and the returned list is dropped.
#[test]
fn a_returned_write_list_is_reused_and_never_hides_new_writes() {
    let (mut mem, mut swap) = setup(100, 8);
    grow(&mut mem, &mut swap, 8);
    // New pages are referenced: the first pass only rotates them.
    swap.scan(&mut mem, 8, true);
    swap.scan(&mut mem, 4, true);
    let out = swap.take_writes();
    let (len, cap) = (out.len(), out.capacity());
    assert!(len > 0 && swap.writes.is_empty());
    swap.return_writes(out);
    assert_eq!((swap.writes.len(), swap.writes.capacity()), (0, cap));
    swap.scan(&mut mem, 4, true);
    let out = swap.take_writes();
    swap.writes.push(99);
    swap.return_writes(out);
    assert_eq!(swap.writes, [99]);
}

#[test]
fn a_swap_out_holds_its_page_until_the_write_completes() {
    let (mut mem, mut swap) = setup(100, 4);
    grow(&mut mem, &mut swap, 4);
    let free0 = mem.zone.free_pages();
    // New pages are referenced: the first scan only rotates them.
    let a = swap.scan(&mut mem, 4, true);
    assert_eq!((a.scanned, a.rotated, a.written), (4, 4, 0));
    let a = swap.scan(&mut mem, 2, true);
    assert_eq!((a.scanned, a.written), (2, 2));
    assert_eq!(swap.take_writes(), vec![0, 1]);
    // Under writeback: still allocated, not free.
    assert_eq!(mem.zone.free_pages(), free0);
    assert_eq!((mem.pages.anon, mem.pages.anon_writeback), (2, 2));
    assert_eq!(swap.check(&mem), Ok(()));
    swap.write_done(&mut mem, 0);
    assert_eq!(mem.zone.free_pages(), free0 + 1);
    assert_eq!(swap.page(0, 0), AnonPage::Swapped { slot: 0 });
    // Page 1 is touched while its write runs: mapped again, kept with its slot.
    assert_eq!(swap.touch(0, 1), Touch::Minor);
    swap.write_done(&mut mem, 1);
    assert!(matches!(
        swap.page(0, 1),
        AnonPage::Resident { slot: Some(1), .. }
    ));
    assert_eq!(mem.pages.anon, 3);
    assert_eq!(
        (swap.used(), swap.obs.swap_outs, swap.obs.minor_faults),
        (2, 2, 1)
    );
    assert_eq!(swap.check(&mem), Ok(()));
}

/// Completing a swap-out bio's slots together frees, maps again and orphans exactly as
/// completing them one by one: the same pages, LRU, counts, free lists and coalescing
/// stream (the zone's next frees draw the same merges).
#[test]
fn completing_a_run_of_writes_is_completing_them_one_by_one() {
    for orphaned in [false, true] {
        let build = || {
            let (mut mem, mut swap) = setup(100, 16);
            grow(&mut mem, &mut swap, 16);
            swap.scan(&mut mem, 16, true);
            swap.scan(&mut mem, 16, true);
            let w = swap.take_writes();
            assert_eq!(w, (0..16).collect::<Vec<_>>());
            if orphaned {
                swap.free_all(&mut mem, 0);
            } else {
                for pg in [1, 5, 6, 15] {
                    assert_eq!(swap.touch(0, pg), Touch::Minor);
                }
            }
            (mem, swap)
        };
        let (mut mem_a, mut swap_a) = build();
        let (mut mem_b, mut swap_b) = build();
        swap_a.writes_done(&mut mem_a, 0..16);
        for s in 0..16 {
            swap_b.write_done(&mut mem_b, s);
        }
        assert_eq!(swap_a.procs, swap_b.procs);
        assert_eq!(swap_a.lru, swap_b.lru);
        assert_eq!(
            (swap_a.used(), swap_a.resident),
            (swap_b.used(), swap_b.resident)
        );
        assert_eq!(mem_a.pages, mem_b.pages);
        assert_eq!(mem_a.zone.nr_free(), mem_b.zone.nr_free());
        assert_eq!(swap_a.check(&mem_a), Ok(()));
        alloc(&mut mem_a, 40);
        alloc(&mut mem_b, 40);
        mem_a.free_pages(40, PageState::Anon);
        mem_b.free_pages(40, PageState::Anon);
        assert_eq!(mem_a.zone.nr_free(), mem_b.zone.nr_free());
    }
}

/// A run of new pages joins the LRU as the same pages filed one by one by `push_lru`; a
/// hit is the hit of `touch` and anything else is left for `touch`.
#[test]
fn adding_a_run_is_adding_each_page_and_a_hit_is_touchs_hit() {
    let (_, mut a) = setup(100, 8);
    let (_, mut b) = setup(100, 8);
    a.add_run(0, 2..7);
    for pg in 2..7 {
        assert_eq!(b.page(0, pg), AnonPage::Absent);
        b.push_lru(0, pg, None);
    }
    assert_eq!(
        (a.procs.clone(), a.lru.clone()),
        (b.procs.clone(), b.lru.clone())
    );
    assert_eq!((a.resident, a.next_gen), (b.resident, b.next_gen));
    assert!(!a.touch_hit(0, 0), "an absent page is no hit");
    assert_eq!(a.page(0, 0), AnonPage::Absent);
    let AnonPage::Resident { stamp, .. } = a.page(0, 3) else {
        panic!("page 3 is resident")
    };
    a.procs[0][3] = AnonPage::Resident {
        stamp,
        referenced: false,
        slot: Some(7),
        mapped: false,
    };
    assert!(
        !a.touch_hit(0, 3),
        "an unmapped page is a minor fault, not a hit"
    );
    assert_eq!(a.touch(0, 3), Touch::Minor);
    a.procs[0][3] = AnonPage::Resident {
        stamp,
        referenced: false,
        slot: None,
        mapped: true,
    };
    assert!(a.touch_hit(0, 3));
    assert!(matches!(
        a.page(0, 3),
        AnonPage::Resident {
            referenced: true,
            mapped: true,
            ..
        }
    ));
}

/// `pages` pages grown, written to slots `0..pages` and freed from memory.
fn swapped(swap_pages: u64, pages: u32) -> (Mem, Swap) {
    let (mut mem, mut swap) = setup(swap_pages, pages);
    grow(&mut mem, &mut swap, pages);
    swap.scan(&mut mem, u64::from(pages), true);
    swap.scan(&mut mem, u64::from(pages), true);
    for s in swap.take_writes() {
        swap.write_done(&mut mem, s);
    }
    (mem, swap)
}

fn alloc(mem: &mut Mem, n: u32) {
    for _ in 0..n {
        assert!(
            mem.alloc(0, Gfp::User, PageState::Anon, SimTime::ZERO)
                .granted
        );
    }
}

#[test]
fn a_fault_reads_its_aligned_cluster_ahead_into_the_swap_cache() {
    let (mut mem, mut swap) = swapped(100, 10);
    assert_eq!(swap.touch(0, 2), Touch::Major { slot: 2 });
    // valid_swaphandles: the allocated run around slot 2 inside slots 0..8.
    assert_eq!(swap.fault_pages(0, 2), 8);
    alloc(&mut mem, 8);
    assert_eq!(fault(&mut swap, &mut mem, 0, 2, 8), Some(vec![(0, 8)]));
    assert_eq!(swap.check(&mem), Ok(()));
    let woken: Vec<_> = (0..8).filter_map(|s| swap.read_done(&mut mem, s)).collect();
    assert_eq!(woken, vec![0], "only the faulting page's process waited");
    assert_eq!((swap.obs.swap_ins, swap.obs.readahead_pages), (8, 7));
    assert!(matches!(
        swap.page(0, 2),
        AnonPage::Resident {
            slot: Some(2),
            mapped: true,
            ..
        }
    ));
    // A page read ahead: a minor fault maps it, then it is an ordinary hit.
    assert_eq!(swap.touch(0, 3), Touch::Minor);
    assert_eq!(swap.touch(0, 3), Touch::Hit);
    assert_eq!(swap.obs.minor_faults, 1);
    // Untouched pages read ahead are clean in the swap cache: dropped with no write.
    let a = swap.scan(&mut mem, 8, true);
    assert_eq!((a.reclaimed, a.written, a.rotated), (6, 0, 2));
    // Slots 8 and 9: the next cluster holds only them.
    assert_eq!(swap.fault_pages(0, 9), 2);
    assert_eq!(swap.check(&mem), Ok(()));
}

#[test]
fn the_window_stops_at_a_free_slot_and_at_the_volume_end() {
    // 10 of 12 slots used: swap is more than half full, so a fault frees its slot.
    let (mut mem, mut swap) = swapped(12, 10);
    swap.touch(0, 3);
    alloc(&mut mem, 1);
    assert_eq!(fault(&mut swap, &mut mem, 0, 3, 1), Some(vec![(3, 1)]));
    assert_eq!(swap.read_done(&mut mem, 3), Some(0));
    assert!(matches!(
        swap.page(0, 3),
        AnonPage::Resident { slot: None, .. }
    ));
    // Slot 3 is free: a fault on slot 5 reads slots 4..8 only.
    assert_eq!(swap.fault_pages(0, 5), 4);
    // Slot 9's cluster is 8..16, cut to the volume's 12 slots, whose 10 and 11 are free.
    assert_eq!(swap.fault_pages(0, 9), 2);
    assert_eq!(swap.check(&mem), Ok(()));
}

#[test]
fn a_page_under_readahead_is_waited_for_and_a_freed_buffer_orphans_the_read() {
    let (mut mem, mut swap) = swapped(100, 4);
    let free0 = mem.zone.free_pages();
    swap.touch(0, 0);
    // The budget ran short (two pages): the faulting page and the next one.
    alloc(&mut mem, 2);
    assert_eq!(fault(&mut swap, &mut mem, 0, 0, 2), Some(vec![(0, 2)]));
    assert_eq!(swap.read_done(&mut mem, 0), Some(0));
    assert_eq!(swap.touch(0, 1), Touch::Wait);
    assert_eq!(swap.read_done(&mut mem, 1), Some(0));
    // A fault whose page left swap meanwhile gives its pages back.
    alloc(&mut mem, 3);
    assert_eq!(fault(&mut swap, &mut mem, 0, 1, 3), None);
    assert_eq!(mem.zone.free_pages(), free0 - 2);
    // Page 2 faults with page 3 read ahead; the buffer is freed before page 3 arrives.
    swap.touch(0, 2);
    alloc(&mut mem, 2);
    assert_eq!(fault(&mut swap, &mut mem, 0, 2, 2), Some(vec![(2, 2)]));
    assert_eq!(swap.read_done(&mut mem, 2), Some(0));
    swap.free_all(&mut mem, 0);
    assert_eq!(swap.check(&mem), Ok(()));
    assert_eq!((mem.pages.anon, swap.used()), (1, 1));
    assert_eq!(swap.read_done(&mut mem, 3), None);
    assert_eq!((mem.pages.anon, swap.used()), (0, 0));
    assert_eq!(mem.zone.free_pages(), free0);
    assert_eq!(swap.check(&mem), Ok(()));
}

#[test]
fn out_of_swap_is_counted_and_the_page_stays() {
    let (mut mem, mut swap) = setup(1, 3);
    grow(&mut mem, &mut swap, 3);
    swap.scan(&mut mem, 3, true);
    let a = swap.scan(&mut mem, 3, true);
    assert_eq!((a.written, a.rotated), (1, 2));
    assert_eq!(swap.obs.out_of_swap, 2);
    assert_eq!(mem.pages.anon, 2);
    // Full swap: reclaim stops looking at anon pages.
    assert_eq!(swap.scan_percent(1000, 1000, 10), [0, 100]);
    assert_eq!(swap.check(&mem), Ok(()));
}

#[test]
fn freeing_a_buffer_frees_pages_and_slots_and_orphans_writes_in_flight() {
    let (mut mem, mut swap) = setup(100, 3);
    let free0 = mem.zone.free_pages();
    grow(&mut mem, &mut swap, 3);
    swap.scan(&mut mem, 3, true);
    swap.scan(&mut mem, 2, true);
    let w = swap.take_writes();
    swap.write_done(&mut mem, w[0]);
    swap.free_all(&mut mem, 0);
    assert_eq!(swap.check(&mem), Ok(()));
    assert_eq!((mem.pages.anon, mem.pages.anon_writeback), (0, 1));
    swap.write_done(&mut mem, w[1]);
    assert_eq!(mem.zone.free_pages(), free0);
    assert_eq!(swap.used(), 0);
    assert_eq!(swap.check(&mem), Ok(()));
    // The buffer can grow again at once.
    grow(&mut mem, &mut swap, 3);
    assert_eq!(swap.check(&mem), Ok(()));
}

#[test]
fn the_scan_ratio_follows_get_scan_ratio() {
    let (_, mut swap) = setup(100, 0);
    // Little file cache: anon only.
    assert_eq!(swap.scan_percent(10, 5, 20), [100, 0]);
    // Nothing scanned yet: ap = 61, fp = 141 -> anon 100*61/203 = 30 %.
    assert_eq!(swap.scan_percent(10_000, 5, 20), [30, 70]);
    // File pages keep rotating back while anon pages are reclaimed: pressure moves to
    // anon. ap = 61·1001/11 = 5551, fp = 141·1001/901 = 156: anon 100·5551/5708 = 97 %.
    swap.note(0, 1000, 10);
    swap.note(1, 1000, 900);
    swap.resident = 10_000;
    assert_eq!(swap.scan_percent(10_000, 5, 20), [97, 3]);
    assert_eq!(swap.try_batch(0, 20), 0);
    assert_eq!(swap.try_batch(0, 20), 40);
}
