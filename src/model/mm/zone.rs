//! One memory zone as the page allocator sees it: free pages counted per buddy order, the
//! min/low/high watermarks, the watermark check that decides whether an allocation of a given
//! class may take pages, and a buddy-like page store whose frees coalesce only with a tunable
//! probability (a fragmentation model).
//!
//! This module owns the *mechanisms* only; it does not decide who allocates, when kswapd wakes
//! or how reclaim frees pages. Every rule follows `docs/model/memory.md` §2–§6 (watermarks
//! and allocation), which takes them from Linux 2.6.32 (and 5.9 for the later watermark rule):
//!
//! - [`min_free_kbytes`] and [`Watermarks`]: in [`super::watermarks`], re-exported here;
//! - [`zone_watermark_ok`]: `zone_watermark_ok` in 2.6.31/2.6.32 `mm/page_alloc.c`, with the
//!   `ALLOC_HIGH` / `ALLOC_HARDER` adjustments of `gfp_to_alloc_flags` given as [`AllocClass`];
//! - [`Zone::alloc`] / [`Zone::free`]: the per-order free counts of `struct free_area`
//!   (`include/linux/mmzone.h`, `MAX_ORDER` 11), split like `expand()` after
//!   `__rmqueue_smallest()`; merging on free is *not* the exact buddy rule of `__free_one_page()`
//!   but the "counts plus a fragmentation process" of docs/model/memory.md §6: a freed block
//!   merges with a free block of its order with a probability the caller sets, and the caller
//!   supplies the random draws, so randomness stays in the caller's streams.
//!
//! Pages are 4 KiB throughout.

pub use super::watermarks::{
    DEFAULT_WATERMARK_SCALE_FACTOR, Mark, WatermarkKernel, Watermarks, min_free_kbytes,
};

/// Number of buddy orders: blocks of 2^0 .. 2^10 pages (the kernel's `MAX_ORDER`).
pub const MAX_ORDER: usize = 11;

/// The largest order a block may have (`MAX_ORDER - 1`).
pub const TOP_ORDER: u32 = (MAX_ORDER - 1) as u32;

/// The allocation flags that change the watermark check (`ALLOC_HIGH`, `ALLOC_HARDER`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AllocFlags {
    /// `ALLOC_HIGH` (`__GFP_HIGH`): the need is halved first.
    pub high: bool,
    /// `ALLOC_HARDER` (atomic or no-wait callers, rt tasks outside interrupts): a quarter of
    /// the (possibly halved) need is then taken off.
    pub harder: bool,
}

/// The allocation classes of docs/model/memory.md §4, each with the mark and flags it is checked
/// against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocClass {
    /// Every allocation's first attempt: the low mark, no flags. Failing it enters the slow
    /// path and wakes kswapd.
    FastPath,
    /// `GFP_ATOMIC` in the slow path: min with HIGH and HARDER (≈ 0.375·min); never reclaims
    /// or waits, fails at once below its floor.
    Atomic,
    /// A mempool's first try (`mempool_alloc` strips WAIT and IO): min with HARDER (0.75·min).
    MempoolTry,
    /// `GFP_NOIO` / `GFP_KERNEL` in the slow path: min, no flags; may reclaim and retry.
    NoIoKernel,
    /// A reclaimer (`PF_MEMALLOC` / `TIF_MEMDIE`, not in an interrupt, no `NOMEMALLOC`):
    /// `ALLOC_NO_WATERMARKS`, needs only a free block of the order.
    Reclaimer,
}

impl AllocClass {
    /// The mark this class is checked against; `None` for [`AllocClass::Reclaimer`], which
    /// ignores watermarks.
    pub fn mark(self) -> Option<Mark> {
        match self {
            AllocClass::FastPath => Some(Mark::Low),
            AllocClass::Atomic | AllocClass::MempoolTry | AllocClass::NoIoKernel => Some(Mark::Min),
            AllocClass::Reclaimer => None,
        }
    }

    /// The flags this class adds to the watermark check.
    pub fn flags(self) -> AllocFlags {
        match self {
            AllocClass::Atomic => AllocFlags {
                high: true,
                harder: true,
            },
            AllocClass::MempoolTry => AllocFlags {
                high: false,
                harder: true,
            },
            AllocClass::FastPath | AllocClass::NoIoKernel | AllocClass::Reclaimer => {
                AllocFlags::default()
            }
        }
    }
}

/// A zone: total pages, free blocks per order, watermarks, and the probability that a freed
/// block merges with a free block of its order.
///
/// Conservation: `Σ nr_free[o]·2^o` equals [`Zone::free_pages`], and free + allocated pages
/// equal [`Zone::total_pages`] ([`Zone::check_conservation`]).
#[derive(Debug, Clone)]
pub struct Zone {
    total: u64,
    nr_free: [u64; MAX_ORDER],
    free: u64,
    allocated: u64,
    marks: Watermarks,
    coalesce_prob: f64,
    /// `coalesce_prob` as an integer threshold on a draw's top 53 bits ([`coin_threshold`]).
    coalesce_below: u64,
}

impl Zone {
    /// A zone of `total_pages`, all free, held in as many top-order blocks as fit and the rest
    /// in the fewest smaller blocks (a freshly booted, unfragmented zone).
    ///
    /// # Panics
    /// If `coalesce_prob` is not within [0, 1].
    pub fn new(total_pages: u64, marks: Watermarks, coalesce_prob: f64) -> Self {
        let mut nr_free = [0; MAX_ORDER];
        nr_free[MAX_ORDER - 1] = total_pages >> TOP_ORDER;
        for (o, n) in nr_free.iter_mut().enumerate().take(MAX_ORDER - 1) {
            *n = (total_pages >> o) & 1;
        }
        Self::with_free_lists(total_pages, nr_free, marks, coalesce_prob)
    }

    /// A zone of `total_pages` whose free blocks are exactly `nr_free` (blocks per order); every
    /// other page counts as allocated. For building fragmented states.
    ///
    /// # Panics
    /// If the free blocks hold more than `total_pages` pages, or `coalesce_prob` is not within
    /// [0, 1].
    pub fn with_free_lists(
        total_pages: u64,
        nr_free: [u64; MAX_ORDER],
        marks: Watermarks,
        coalesce_prob: f64,
    ) -> Self {
        assert!(
            (0.0..=1.0).contains(&coalesce_prob),
            "coalesce probability {coalesce_prob} is not within [0, 1]"
        );
        let free: u64 = nr_free.iter().enumerate().map(|(o, &n)| n << o).sum();
        assert!(
            free <= total_pages,
            "free lists hold {free} pages, more than the zone's {total_pages}"
        );
        Zone {
            total: total_pages,
            nr_free,
            free,
            allocated: total_pages - free,
            marks,
            coalesce_prob,
            coalesce_below: coin_threshold(coalesce_prob),
        }
    }

    /// Pages in the zone.
    pub fn total_pages(&self) -> u64 {
        self.total
    }

    /// Free pages (`NR_FREE_PAGES`), whatever their order.
    pub fn free_pages(&self) -> u64 {
        self.free
    }

    /// Pages handed out and not yet returned.
    pub fn allocated_pages(&self) -> u64 {
        self.allocated
    }

    /// Free blocks per order: `nr_free()[o]` blocks of 2^o pages each.
    pub fn nr_free(&self) -> &[u64; MAX_ORDER] {
        &self.nr_free
    }

    /// The zone's watermarks.
    pub fn marks(&self) -> Watermarks {
        self.marks
    }

    /// The probability that a freed block merges with a free block of its order.
    pub fn coalesce_prob(&self) -> f64 {
        self.coalesce_prob
    }

    /// Whether a free block of order `order` or higher exists.
    pub fn has_block(&self, order: u32) -> bool {
        (order as usize..MAX_ORDER).any(|o| self.nr_free[o] > 0)
    }

    /// Whether an allocation of `class` at `order` passes its watermark check in this zone (for
    /// [`AllocClass::Reclaimer`], whether a block of the order exists at all). A pass implies
    /// [`Zone::alloc`] at that order succeeds.
    pub fn allows(&self, order: u32, class: AllocClass) -> bool {
        match class.mark() {
            Some(mark) => zone_watermark_ok(self, order, mark, class.flags()),
            None => self.has_block(order),
        }
    }

    /// The floor of `class` for order 0: an order-0 allocation of `class` fails its watermark
    /// check exactly when the zone's free pages are at or below it (0 for
    /// [`AllocClass::Reclaimer`], which fails only on an empty zone). For
    /// [`AllocClass::Atomic`] this is the GFP_ATOMIC floor, ≈ 0.375·min. Computed by the same
    /// code as [`zone_watermark_ok`].
    pub fn order0_floor(&self, class: AllocClass) -> u64 {
        class
            .mark()
            .map_or(0, |mark| adjusted_need(self.marks.get(mark), class.flags()))
    }

    /// Checks `class`'s watermark at `order` and, if it passes, takes the block; `true` if the
    /// allocation succeeded.
    #[inline]
    pub fn try_alloc(&mut self, order: u32, class: AllocClass) -> bool {
        self.allows(order, class) && self.alloc(order)
    }

    /// Takes a block of 2^`order` pages, ignoring watermarks: the smallest free block of order
    /// ≥ `order` is removed and split down, each split returning its unused half to the free
    /// list one order below (the kernel's `__rmqueue_smallest` + `expand`). `false` if no block
    /// of order ≥ `order` is free (or `order` exceeds [`TOP_ORDER`]).
    pub fn alloc(&mut self, order: u32) -> bool {
        let k = order as usize;
        let Some(found) = (k..MAX_ORDER).find(|&o| self.nr_free[o] > 0) else {
            return false;
        };
        self.nr_free[found] -= 1;
        for lower in k..found {
            self.nr_free[lower] += 1;
        }
        self.free -= 1 << order;
        self.allocated += 1 << order;
        true
    }

    /// `n` order-0 pages taken as `n` calls of [`Zone::alloc`]`(0)` would take them (each from
    /// the smallest free block, split down), ignoring watermarks; the caller has checked that
    /// at least `n` pages are free. Order-0 blocks are taken in one step; a split leaves its
    /// halves one per lower order, the order-0 one taken by the next page.
    ///
    /// # Panics
    /// If fewer than `n` pages are free.
    pub fn alloc_order0(&mut self, n: u64) {
        assert!(n <= self.free, "taking {n} pages with {} free", self.free);
        let mut left = n;
        while left > 0 {
            if self.nr_free[0] > 0 {
                let t = left.min(self.nr_free[0]);
                self.nr_free[0] -= t;
                left -= t;
                continue;
            }
            let found = (1..MAX_ORDER)
                .find(|&o| self.nr_free[o] > 0)
                .expect("free pages are on the free lists");
            self.nr_free[found] -= 1;
            // The halves split off go one per lower order (`expand`); the page left over is
            // this allocation.
            for lower in 0..found {
                self.nr_free[lower] += 1;
            }
            left -= 1;
        }
        self.free -= n;
        self.allocated += n;
    }

    /// Returns a block of 2^`order` pages. While a free block of the same order exists (below
    /// the top order), the block merges with it with probability [`Zone::coalesce_prob`] and
    /// moves up an order; `draw` is called once per merge opportunity and returns a random
    /// 64-bit word, which merges when the uniform `rand` makes of it (`random::<f64>()`: its top
    /// 53 bits times 2⁻⁵³) is below the probability ([`coin_threshold`] compares the same
    /// thing in integers). With probability 1 frees always coalesce as far as the counts allow;
    /// with 0 they never do.
    ///
    /// # Panics
    /// If more pages are returned than are allocated, or `order` exceeds [`TOP_ORDER`].
    #[inline]
    pub fn free(&mut self, order: u32, draw: &mut impl FnMut() -> u64) {
        assert!(order <= TOP_ORDER, "order {order} above {TOP_ORDER}");
        let pages = 1u64 << order;
        assert!(
            pages <= self.allocated,
            "freeing {pages} pages with only {} allocated",
            self.allocated
        );
        self.allocated -= pages;
        self.free += pages;
        self.place(order as usize, draw);
    }

    /// Returns `n` single pages, exactly as `n` calls of [`Zone::free`]`(0, draw)`: the
    /// counts move once, and each page still draws its merges in turn.
    ///
    /// # Panics
    /// If more pages are returned than are allocated.
    #[inline]
    pub fn free_order0(&mut self, n: u64, draw: &mut impl FnMut() -> u64) {
        assert!(
            n <= self.allocated,
            "freeing {n} pages with only {} allocated",
            self.allocated
        );
        self.allocated -= n;
        self.free += n;
        for _ in 0..n {
            self.place(0, draw);
        }
    }

    /// Puts a freed block of `order` on a free list, merging it up while a block of its order
    /// is free and the draw says the buddy is that one.
    #[inline(always)]
    fn place(&mut self, order: usize, draw: &mut impl FnMut() -> u64) {
        let mut o = order;
        while o < MAX_ORDER - 1 && self.nr_free[o] > 0 && draw() >> 11 < self.coalesce_below {
            // The buddy leaves its free list; the pair is one block an order up.
            self.nr_free[o] -= 1;
            o += 1;
        }
        self.nr_free[o] += 1;
    }

    /// Checks page conservation: the free lists hold exactly [`Zone::free_pages`], and free
    /// plus allocated pages are the zone's total. `Err` describes the first mismatch.
    pub fn check_conservation(&self) -> Result<(), String> {
        let listed: u64 = self.nr_free.iter().enumerate().map(|(o, &n)| n << o).sum();
        if listed != self.free {
            return Err(format!(
                "free lists hold {listed} pages but the free count is {}",
                self.free
            ));
        }
        if self.free + self.allocated != self.total {
            return Err(format!(
                "{} free + {} allocated != {} total pages",
                self.free, self.allocated, self.total
            ));
        }
        Ok(())
    }
}

/// The integer form of "a uniform draw is below `p`": `rand` turns a 64-bit word `x` into the
/// uniform `(x >> 11)·2⁻⁵³`, which is below `p` exactly when the integer `x >> 11` is below
/// `p·2⁵³` (exact: a power-of-two scaling), that is below its ceiling. Comparing integers gives
/// the same outcome for every word without the conversion and the multiplication, which sat on
/// the coalescing loop's critical path.
pub fn coin_threshold(p: f64) -> u64 {
    (p * (1u64 << 53) as f64).ceil() as u64
}

/// The need the watermark check starts from: the mark's pages, halved by HIGH, then less a
/// quarter with HARDER (integer arithmetic, as the kernel's).
fn adjusted_need(mark_pages: u64, flags: AllocFlags) -> u64 {
    let mut need = mark_pages;
    if flags.high {
        need -= need / 2;
    }
    if flags.harder {
        need -= need / 4;
    }
    need
}

/// The 2.6.31/.32 watermark check (docs/model/memory.md §4): may `zone` hand out a block of order
/// `order` to a caller checked against `mark` with `flags`?
///
/// `free = free_pages − 2^order + 1`; the need starts at the mark, HIGH halves it, then HARDER
/// takes a quarter off; `free ≤ need` (plus a `lowmem_reserve` of 0) fails. Then for every
/// order below `order` the blocks of that order are subtracted from `free` (they cannot serve
/// the request), the need halves, and `free ≤ need` fails.
///
/// An order above [`TOP_ORDER`] never passes (no such block exists).
pub fn zone_watermark_ok(zone: &Zone, order: u32, mark: Mark, flags: AllocFlags) -> bool {
    if order > TOP_ORDER {
        return false;
    }
    let mut need = adjusted_need(zone.marks.get(mark), flags) as i64;
    let mut free = zone.free as i64 - (1i64 << order) + 1;
    // One lowmem zone: lowmem_reserve[classzone] is 0.
    if free <= need {
        return false;
    }
    for o in 0..order as usize {
        free -= (zone.nr_free[o] << o) as i64;
        need >>= 1;
        if free <= need {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const KB: u64 = 1;
    const MB: u64 = 1024 * KB;
    const GB: u64 = 1024 * MB;

    /// The 2 GiB laptop of docs/model/memory.md §3: min 1448, low 1810, high 2172.
    fn laptop_marks() -> Watermarks {
        Watermarks::v2_6_32(min_free_kbytes(2 * GB, WatermarkKernel::V2_6_32))
    }

    /// A zone with `nr_free` as its free lists, 2 GiB laptop marks, no coalescing.
    fn zone_with(nr_free: &[u64]) -> Zone {
        let mut lists = [0; MAX_ORDER];
        lists[..nr_free.len()].copy_from_slice(nr_free);
        Zone::with_free_lists(1 << 19, lists, laptop_marks(), 0.0)
    }

    /// A deterministic stream of 64-bit words and U[0, 1) draws for tests (xorshift64*).
    struct Uniform(u64);
    impl Uniform {
        fn raw(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn next(&mut self) -> f64 {
            (self.raw() >> 11) as f64 / (1u64 << 53) as f64
        }
        fn below(&mut self, n: u64) -> u64 {
            ((self.next() * n as f64) as u64).min(n - 1)
        }
    }

    /// Hands out one fixed word, so that `rand` itself turns it into a uniform.
    struct Word(u64);
    impl rand::TryRng for Word {
        type Error = std::convert::Infallible;
        fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
            Ok(self.0 as u32)
        }
        fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
            Ok(self.0)
        }
        fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
            dst.fill(0);
            Ok(())
        }
    }

    /// The integer comparison decides every word as `rand`'s uniform against the probability
    /// does: random words, and the words on either side of each threshold.
    #[test]
    fn coin_threshold_agrees_with_rands_uniform_for_every_word() {
        use rand::RngExt;
        let mut u = Uniform(0x5eed);
        let mut ps = vec![
            0.0,
            1.0,
            0.5,
            0.02,
            0.25,
            1.0 / 3.0,
            0.1,
            0.9,
            1e-300,
            1.0 - 1e-16,
        ];
        ps.extend((0..200).map(|_| u.next()));
        for p in ps {
            let t = coin_threshold(p);
            let mut words: Vec<u64> = (0..2000).map(|_| u.raw()).collect();
            for m in [t.saturating_sub(1), t, t + 1] {
                let m = m.min((1 << 53) - 1);
                words.extend([m << 11, (m << 11) | 0x7ff]);
            }
            words.extend([0, u64::MAX]);
            for x in words {
                let uniform: f64 = Word(x).random();
                assert_eq!(x >> 11 < t, uniform < p, "p {p} word {x:#x}");
            }
        }
    }

    #[test]
    fn classes_carry_the_model_table_marks_and_flags() {
        use AllocClass::*;
        assert_eq!(FastPath.mark(), Some(Mark::Low));
        assert_eq!(FastPath.flags(), AllocFlags::default());
        assert_eq!(Atomic.mark(), Some(Mark::Min));
        assert!(Atomic.flags().high && Atomic.flags().harder);
        assert_eq!(MempoolTry.mark(), Some(Mark::Min));
        assert!(!MempoolTry.flags().high && MempoolTry.flags().harder);
        assert_eq!(NoIoKernel.mark(), Some(Mark::Min));
        assert_eq!(NoIoKernel.flags(), AllocFlags::default());
        assert_eq!(Reclaimer.mark(), None);
    }

    /// The fewest free order-0 pages at which `class` passes at order 0.
    fn floor(class: AllocClass) -> u64 {
        (0..=5000)
            .find(|&f| zone_with(&[f]).allows(0, class))
            .expect("passes below 5000")
    }

    #[test]
    fn order_0_floors_are_the_model_fractions_of_min() {
        // Passing needs free > need: one page above each floor.
        assert_eq!(floor(AllocClass::Atomic), 543 + 1); // 1448 - 724 - 181 ≈ 0.375·min
        assert_eq!(floor(AllocClass::MempoolTry), 1086 + 1); // 1448 - 362 = 0.75·min
        assert_eq!(floor(AllocClass::NoIoKernel), 1448 + 1);
        assert_eq!(floor(AllocClass::FastPath), 1810 + 1);
        assert_eq!(floor(AllocClass::Reclaimer), 1);
        let min = 1448.0;
        assert!((543.0 / min - 0.375f64).abs() < 0.001);
        assert!((1086.0 / min - 0.75f64).abs() < 1e-9);
        // The laptop's gap between "kswapd woken" (low) and "first atomic failure".
        assert_eq!(1810 - 543, 1267);
    }

    #[test]
    fn order0_floor_is_where_the_check_starts_to_pass() {
        let z = zone_with(&[0]);
        for class in [
            AllocClass::FastPath,
            AllocClass::Atomic,
            AllocClass::MempoolTry,
            AllocClass::NoIoKernel,
            AllocClass::Reclaimer,
        ] {
            assert_eq!(z.order0_floor(class) + 1, floor(class), "{class:?}");
        }
        assert_eq!(z.order0_floor(AllocClass::Atomic), 543);
    }

    #[test]
    fn each_flag_alone_and_together_at_order_0() {
        let z = zone_with(&[1000]);
        let ok = |high, harder| zone_watermark_ok(&z, 0, Mark::Min, AllocFlags { high, harder });
        // need: 1448; HIGH 724; HARDER 1086; both 543. free = 1000.
        assert!(!ok(false, false));
        assert!(ok(true, false));
        assert!(!ok(false, true));
        assert!(ok(true, true));
        assert!(!zone_watermark_ok(&z, 0, Mark::Low, AllocFlags::default()));
        assert!(!zone_watermark_ok(&z, 0, Mark::High, AllocFlags::default()));
        // The boundary: free == need fails.
        let at = zone_with(&[724]);
        let high = AllocFlags {
            high: true,
            harder: false,
        };
        assert!(!zone_watermark_ok(&at, 0, Mark::Min, high));
        assert!(zone_watermark_ok(&zone_with(&[725]), 0, Mark::Min, high));
    }

    /// Orders 0–3 × {no flag, HIGH, HARDER, both} against min (1448) on two fragmented zones,
    /// each verdict worked by hand from docs/model/memory.md §4 (comments give the failing step).
    #[test]
    fn orders_0_to_3_with_and_without_each_flag() {
        let flags = [
            AllocFlags::default(),
            AllocFlags {
                high: true,
                harder: false,
            },
            AllocFlags {
                high: false,
                harder: true,
            },
            AllocFlags {
                high: true,
                harder: true,
            },
        ];
        let table = |z: &Zone| -> Vec<[bool; 4]> {
            (0..4)
                .map(|k| flags.map(|f| zone_watermark_ok(z, k, Mark::Min, f)))
                .collect()
        };
        // 100, 50, 300, 10 blocks of orders 0..3: 1480 pages. Needs 1448 / 724 / 1086 / 543.
        // Orders 0–2 pass everywhere; order 3 subtracts 1200 order-2 pages at the last step:
        // 1473 − 100 − 100 − 1200 = 73 against 181 / 90 / 135 / 67 → only both flags pass.
        let a = zone_with(&[100, 50, 300, 10]);
        assert_eq!(a.free_pages(), 1480);
        assert_eq!(
            table(&a),
            vec![
                [true, true, true, true],
                [true, true, true, true],
                [true, true, true, true],
                [false, false, false, true],
            ]
        );
        // 1000, 100, 50 blocks of orders 0..2: 1400 pages, under min itself.
        // Order 0: only the reduced needs pass. Order 1: 399 left above order 0 against
        // 362 (HIGH) / 543 (HARDER) / 271 (both). Order 2: then 197 against 181 / – / 135.
        // Order 3: 193 − 200 = −7 fails every need.
        let b = zone_with(&[1000, 100, 50]);
        assert_eq!(b.free_pages(), 1400);
        assert_eq!(
            table(&b),
            vec![
                [false, true, true, true],
                [false, true, false, true],
                [false, true, false, true],
                [false, false, false, false],
            ]
        );
    }

    #[test]
    fn hand_computed_high_order_cases() {
        // 100 order-0, 50 order-1, 300 order-2 blocks: 1400 free pages.
        let z = zone_with(&[100, 50, 300]);
        assert_eq!(z.free_pages(), 1400);
        let atomic = AllocClass::Atomic.flags();
        let high = AllocFlags {
            high: true,
            harder: false,
        };
        let harder = AllocClass::MempoolTry.flags();
        let none = AllocFlags::default();
        // Order 2, ATOMIC: free 1397 > 543; -100 → 1297 > 271; -100 → 1197 > 135.
        assert!(zone_watermark_ok(&z, 2, Mark::Min, atomic));
        // Order 2, no flags: 1397 <= 1448.
        assert!(!zone_watermark_ok(&z, 2, Mark::Min, none));
        // Order 2, HIGH: 1397 > 724; 1297 > 362; 1197 > 181.
        assert!(zone_watermark_ok(&z, 2, Mark::Min, high));
        // Order 2, HARDER: 1397 > 1086; 1297 > 543; 1197 > 271.
        assert!(zone_watermark_ok(&z, 2, Mark::Min, harder));
        // Order 1, HARDER: 1399 > 1086; 1299 > 543.
        assert!(zone_watermark_ok(&z, 1, Mark::Min, harder));
        // Order 3, ATOMIC: 1393 > 543; 1293 > 271; 1193 > 135; 1193 - 1200 = -7 <= 67.
        assert!(!zone_watermark_ok(&z, 3, Mark::Min, atomic));
        assert!(!z.has_block(3));

        // Only order-3 blocks: 100 of them, 800 pages.
        let z = zone_with(&[0, 0, 0, 100]);
        // ATOMIC: 793 > 543, nothing below to subtract; needs 271, 135, 67.
        assert!(zone_watermark_ok(&z, 3, Mark::Min, atomic));
        // HARDER: 793 <= 1086.
        assert!(!zone_watermark_ok(&z, 3, Mark::Min, harder));
        // Order 0 with HIGH: 800 > 724.
        assert!(zone_watermark_ok(&z, 0, Mark::Min, high));

        // Order 1 with plenty of order-0 pages and a few order-1 blocks.
        let z = zone_with(&[1000, 10]);
        // ATOMIC: 1019 > 543; 1019 - 1000 = 19 <= 271.
        assert!(!zone_watermark_ok(&z, 1, Mark::Min, atomic));
        assert!(z.has_block(1));
        // Order 0 ATOMIC passes on the same zone.
        assert!(zone_watermark_ok(&z, 0, Mark::Min, atomic));
    }

    #[test]
    fn high_order_fails_on_low_order_blocks_despite_plenty_of_pages() {
        // 50000 free pages, all in order-0 and order-1 blocks: far above every mark.
        let z = zone_with(&[30_000, 10_000]);
        assert_eq!(z.free_pages(), 50_000);
        for class in [
            AllocClass::FastPath,
            AllocClass::Atomic,
            AllocClass::MempoolTry,
            AllocClass::NoIoKernel,
            AllocClass::Reclaimer,
        ] {
            assert!(z.allows(0, class), "{class:?} order 0");
            assert!(z.allows(1, class), "{class:?} order 1");
            assert!(!z.allows(2, class), "{class:?} order 2");
            assert!(!z.allows(3, class), "{class:?} order 3");
        }
        let mut z = z;
        assert!(!z.try_alloc(2, AllocClass::Atomic));
        assert_eq!(z.free_pages(), 50_000);
    }

    #[test]
    fn a_passed_check_means_the_allocation_succeeds() {
        let mut u = Uniform(7);
        for _ in 0..2000 {
            let mut lists = [0; MAX_ORDER];
            for n in lists.iter_mut().take(5) {
                *n = u.below(400);
            }
            let z = Zone::with_free_lists(1 << 19, lists, laptop_marks(), 0.0);
            for order in 0..5 {
                for class in [
                    AllocClass::FastPath,
                    AllocClass::Atomic,
                    AllocClass::MempoolTry,
                    AllocClass::NoIoKernel,
                ] {
                    if z.allows(order, class) {
                        assert!(z.clone().alloc(order), "{lists:?} {order} {class:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_new_zone_is_all_free_in_the_largest_blocks() {
        let z = Zone::new(3 * 1024 + 5, laptop_marks(), 0.5);
        assert_eq!(z.nr_free()[10], 3);
        assert_eq!(z.nr_free()[2], 1);
        assert_eq!(z.nr_free()[0], 1);
        assert_eq!(z.nr_free().iter().sum::<u64>(), 5);
        assert_eq!(z.free_pages(), 3 * 1024 + 5);
        assert_eq!(z.allocated_pages(), 0);
        z.check_conservation().unwrap();
    }

    #[test]
    fn alloc_splits_the_smallest_sufficient_block() {
        let mut z = zone_with(&[0, 1, 0, 0, 1]);
        // Order 0 takes the order-1 block, leaving an order-0 half.
        assert!(z.alloc(0));
        assert_eq!(&z.nr_free()[..5], &[1, 0, 0, 0, 1]);
        // Order 1 must split the order-4 block: halves of orders 1, 2, 3 remain.
        assert!(z.alloc(1));
        assert_eq!(&z.nr_free()[..5], &[1, 1, 1, 1, 0]);
        assert_eq!(z.free_pages(), 1 + 2 + 4 + 8);
        // Nothing of order 4 or above is left.
        assert!(!z.alloc(4));
        assert!(!z.alloc(TOP_ORDER + 1));
        assert!(!zone_watermark_ok(
            &z,
            TOP_ORDER + 1,
            Mark::Min,
            AllocClass::Atomic.flags()
        ));
        z.check_conservation().unwrap();
    }

    #[test]
    fn frees_coalesce_with_probability_one_and_never_with_zero() {
        let total = 4 * 1024;
        for (p, top_blocks, order0_blocks) in [(1.0, 4, 0), (0.0, 0, total)] {
            let mut z = Zone::new(total, laptop_marks(), p);
            let mut draws = 0u64;
            // A word whose uniform is exactly ½.
            let mut u = || {
                draws += 1;
                1u64 << 63
            };
            for _ in 0..total {
                assert!(z.alloc(0));
            }
            assert_eq!(z.free_pages(), 0);
            for _ in 0..total {
                z.free(0, &mut u);
            }
            z.check_conservation().unwrap();
            assert_eq!(z.nr_free()[10], top_blocks, "p = {p}");
            assert_eq!(z.nr_free()[0], order0_blocks, "p = {p}");
            assert_eq!(z.free_pages(), total);
            // With p = 0 every free with a same-order buddy still draws once.
            assert!(draws > 0);
        }
    }

    /// `free_order0(n)` is `n` order-0 frees (same lists, counts and draws) on a zone
    /// fragmented by a random history, for coalescing probabilities 0, ½ and 1.
    #[test]
    fn freeing_a_run_of_pages_is_freeing_them_one_by_one() {
        for p in [0.0, 0.5, 1.0] {
            let (mut a, mut u) = (Zone::new(1 << 14, laptop_marks(), p), Uniform(0x9e37));
            for _ in 0..3000 {
                let order = u.below(4) as u32;
                if u.next() < 0.7 {
                    a.alloc(order);
                } else if a.allocated_pages() >= 1 << order {
                    a.free(order, &mut || u.raw());
                }
            }
            let (mut b, n) = (a.clone(), a.allocated_pages().min(700));
            let (mut ua, mut ub) = (Uniform(7), Uniform(7));
            (0..n).for_each(|_| a.free(0, &mut || ua.raw()));
            b.free_order0(n, &mut || ub.raw());
            assert_eq!(
                (a.nr_free(), a.free_pages()),
                (b.nr_free(), b.free_pages()),
                "{p}"
            );
            assert_eq!(
                (ua.0, a.allocated_pages()),
                (ub.0, b.allocated_pages()),
                "{p}"
            );
            b.check_conservation().unwrap();
        }
    }

    #[test]
    fn a_merge_needs_a_free_block_of_the_same_order() {
        let mut z = Zone::with_free_lists(64, [0; MAX_ORDER], laptop_marks(), 1.0);
        let mut never = || -> u64 { panic!("no merge opportunity, no draw") };
        z.free(2, &mut never);
        assert_eq!(z.nr_free()[2], 1);
        let mut zero = || 0;
        z.free(2, &mut zero);
        assert_eq!(z.nr_free()[2], 0);
        assert_eq!(z.nr_free()[3], 1);
        z.check_conservation().unwrap();
    }

    #[test]
    #[should_panic(expected = "allocated")]
    fn freeing_more_than_allocated_panics() {
        let mut z = Zone::new(16, laptop_marks(), 0.0);
        z.free(0, &mut || 0);
    }

    #[test]
    fn random_alloc_free_conserves_pages() {
        let mut top_blocks_after = Vec::new();
        for (seed, p) in [(1, 0.0), (2, 0.3), (3, 0.9), (4, 1.0)] {
            let mut u = Uniform(seed);
            let total = 1 << 16;
            let mut z = Zone::new(total, laptop_marks(), p);
            // Blocks held by the "caller", by order.
            let mut held: Vec<u32> = Vec::new();
            let mut held_pages = 0u64;
            let mut failed = 0;
            for step in 0..100_000 {
                // Grow until the zone is full (about step 50000), then churn at the edge.
                let alloc = held.is_empty() || u.next() < 0.6;
                if alloc {
                    let order = [0, 0, 0, 0, 1, 2, 3, 5][u.below(8) as usize];
                    let before = z.free_pages();
                    if z.alloc(order) {
                        held.push(order);
                        held_pages += 1 << order;
                        assert_eq!(z.free_pages(), before - (1 << order));
                    } else {
                        failed += 1;
                        assert!(!z.has_block(order));
                        assert_eq!(z.free_pages(), before);
                    }
                } else {
                    let i = u.below(held.len() as u64) as usize;
                    let order = held.swap_remove(i);
                    held_pages -= 1 << order;
                    z.free(order, &mut || u.raw());
                }
                if step % 1000 == 0 {
                    z.check_conservation().unwrap();
                }
                assert_eq!(z.allocated_pages(), held_pages, "step {step}");
            }
            z.check_conservation().unwrap();
            // Return everything: the zone is whole again.
            for order in held.drain(..) {
                z.free(order, &mut || u.raw());
            }
            z.check_conservation().unwrap();
            assert_eq!(z.free_pages(), total);
            assert_eq!(z.allocated_pages(), 0);
            assert!(failed > 0, "p = {p}: the zone never filled");
            top_blocks_after.push(z.nr_free()[10]);
        }
        // Without coalescing no split top-order block ever comes back; the more frees merge,
        // the more of them do.
        assert!(top_blocks_after[0] < 64, "{top_blocks_after:?}");
        assert!(
            top_blocks_after.windows(2).all(|w| w[0] <= w[1])
                && top_blocks_after[0] < top_blocks_after[3],
            "{top_blocks_after:?}"
        );
    }
}
