//! Pages: who holds them and how they come back.
//!
//! Without a `memory:` section memory is unlimited: [`Allocator::Unlimited`] grants every bounce
//! page and only counts them, so conservation (allocated = freed + held) can be checked.
//!
//! With one, [`Mem`] owns the zone (free blocks per order, watermarks) and the state of every
//! allocated page ([`PageStates`]: unreclaimable, clean cache, dirty, under writeback, bounce,
//! atomic, being filled; the `page_pool` reserve's pages count as bounce, while the reserve
//! itself is `Mempool`'s (`mempool.rs` in this folder)), the 2.6.32 allocation attempt (fast path against
//! low, slow path against the class's floor), and one reclaim scan of the file LRU.
//! It keeps no clock of its own beyond the integrals it is told to advance; the processes that
//! drive it (kswapd, direct reclaimers, GFP_ATOMIC streams, dm-crypt's mempool) live in
//! [`crate::model::mm::pressure`], which schedules their events.

/// Where bounce pages come from.
#[derive(Debug, Clone)]
pub enum Allocator {
    /// Allocations always succeed.
    Unlimited {
        /// Pages handed out so far.
        allocated: u64,
        /// Pages returned so far.
        freed: u64,
    },
}

impl Default for Allocator {
    fn default() -> Self {
        Allocator::Unlimited {
            allocated: 0,
            freed: 0,
        }
    }
}

impl Allocator {
    /// Allocates `pages` bounce pages for a write clone; `true` if granted.
    pub fn alloc_bounce(&mut self, pages: u32) -> bool {
        match self {
            Allocator::Unlimited { allocated, .. } => {
                *allocated += u64::from(pages);
                true
            }
        }
    }

    /// Returns `pages` bounce pages (the write completed).
    pub fn free_bounce(&mut self, pages: u32) {
        match self {
            Allocator::Unlimited { freed, .. } => *freed += u64::from(pages),
        }
    }

    /// Pages currently held by dm-crypt.
    pub fn held(&self) -> u64 {
        match self {
            Allocator::Unlimited { allocated, freed } => allocated - freed,
        }
    }
}

/// Pages needed to hold `bytes` (4 KiB pages).
pub fn pages_for(bytes: u32) -> u32 {
    bytes.div_ceil(4096)
}

// ----- the zoned memory model ---------------------------------------------------------------

use crate::engine::{RngStreams, SimDuration, SimRng, SimTime};
use crate::model::base::config::MemoryConfig;
use crate::model::base::obs::{AllocFailure, MemoryObs, PageStates};
use crate::model::mm::zone::{AllocClass, MAX_ORDER, Mark, Watermarks, Zone, zone_watermark_ok};
use crate::stats::Histogram;
use rand::Rng;

/// `SWAP_CLUSTER_MAX`: reclaim's batch and its "enough progress" mark.
pub const SWAP_CLUSTER_MAX: u64 = 32;

/// `DEF_PRIORITY`: reclaim starts by scanning 1/2^12 of the LRU.
pub const DEF_PRIORITY: i32 = 12;

/// Page size.
pub const PAGE_SIZE: u64 = 4096;

/// Who asks for pages, which picks the slow path's floor and what happens on failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gfp {
    /// `GFP_ATOMIC`: min with HIGH and HARDER; fails at once.
    Atomic,
    /// A mempool's first try (no WAIT, no IO): min with HARDER; the caller falls back to the
    /// reserve.
    MempoolTry,
    /// A page-cache allocation (`GFP_HIGHUSER_MOVABLE`) or `GFP_NOIO`: min, no flags; the caller
    /// may enter direct reclaim.
    User,
}

impl Gfp {
    fn class(self) -> AllocClass {
        match self {
            Gfp::Atomic => AllocClass::Atomic,
            Gfp::MempoolTry => AllocClass::MempoolTry,
            Gfp::User => AllocClass::NoIoKernel,
        }
    }
}

/// What one allocation attempt did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attempt {
    /// The block was taken.
    pub granted: bool,
    /// The fast path missed `low`: the caller must wake kswapd for this order.
    pub wake_kswapd: bool,
}

/// Which page state a scan or a transition concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageState {
    /// Never reclaimed.
    Unreclaimable,
    /// Clean page cache.
    Clean,
    /// Dirty page cache.
    Dirty,
    /// Under writeback.
    Writeback,
    /// dm-crypt bounce pages.
    Bounce,
    /// Driver atomic buffers.
    Atomic,
    /// Allocated by a reader or writer, not yet in the cache.
    Filling,
    /// Anonymous memory of a process (on the anon LRU, or being read back from swap).
    Anon,
    /// Anonymous memory under swap-out writeback.
    AnonWriteback,
}

/// What one reclaim scan found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scan {
    /// Pages looked at.
    pub scanned: u64,
    /// Clean pages freed.
    pub reclaimed: u64,
    /// Dirty pages met (sent to pageout or left on the LRU).
    pub dirty: u64,
    /// Dirty pages to send to writeback (pageout); still counted dirty until the caller issues
    /// their write.
    pub pageout: u64,
}

/// A `struct ratelimit_state` with 2.6.32's `__ratelimit()`: at most `burst` messages in a
/// window of `interval` that opens at the first message after the last one closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ratelimit {
    interval: SimDuration,
    burst: u32,
    begin: Option<SimTime>,
    printed: u32,
}

impl Ratelimit {
    /// `printk_ratelimit_state`: 10 messages per 5 seconds (`5 * HZ`), which the page
    /// allocator's "page allocation failure" warning passes through.
    pub fn printk() -> Ratelimit {
        Ratelimit {
            interval: SimDuration::from_secs(5),
            burst: 10,
            begin: None,
            printed: 0,
        }
    }

    /// Whether a message at `now` is printed. As in the kernel, the call that finds the window
    /// expired resets it without restarting it, so the next call opens the new one.
    pub fn allow(&mut self, now: SimTime) -> bool {
        let begin = *self.begin.get_or_insert(now);
        if now > begin.saturating_add(self.interval) {
            self.begin = None;
            self.printed = 0;
        }
        if self.printed < self.burst {
            self.printed += 1;
            return true;
        }
        false
    }
}

/// The zoned memory of one run.
#[derive(Debug)]
pub struct Mem {
    /// The zone.
    pub zone: Zone,
    /// Allocated pages by state.
    pub pages: PageStates,
    cfg: MemoryConfig,
    rng: SimRng,
    /// Counters; the model fills them while `measuring`.
    pub obs: MemoryObs,
    measuring: bool,
    since: SimTime,
    measure_start: SimTime,
    free_area: u128,
    below_min_ns: u64,
    /// Unreclaimable pages that sit on the file LRU (mapped, referenced): scanned, never freed.
    mapped: u64,
    /// Pages scanned since a page was last freed to the zone (`zone->pages_scanned`).
    pages_scanned: u64,
    /// `wait_iff_congested`'s zone flag: a reclaim batch met dirty pages on a congested disk.
    pub zone_congested: bool,
    /// Lowest and highest free count since [`Mem::take_free_range`] last ran.
    free_range: (u64, u64),
    /// GFP_ATOMIC failures since time zero, warm-up included.
    atomic_failed: u64,
    /// `printk_ratelimit()`'s state for the allocation-failure message.
    printk: Ratelimit,
    /// Work done since time zero ([`Mem::work`]).
    work: u64,
    /// The page-cache identity of the files several processes read (their pages are among
    /// the clean ones); no file unless the world adds them.
    pub files: crate::model::mm::filecache::FileCache,
}

/// The counters of a zone of `total` pages with watermarks `marks`, before anything ran.
fn initial_obs(total: u64, marks: Watermarks, zone: &Zone) -> MemoryObs {
    MemoryObs {
        total_pages: total,
        min: marks.min,
        low: marks.low,
        high: marks.high,
        atomic_floor: zone.order0_floor(AllocClass::Atomic),
        atomic_attempts: vec![0; MAX_ORDER],
        atomic_failures: vec![0; MAX_ORDER],
        atomic_fail_free_sum: vec![0; MAX_ORDER],
        failure_log: Vec::new(),
        kswapd_wakeups: 0,
        kswapd_awake: SimDuration::ZERO,
        kswapd_passes: 0,
        kswapd_waits: Default::default(),
        kswapd_skips: 0,
        low_wmark_hit_quickly: 0,
        high_wmark_hit_quickly: 0,
        order0_fallbacks: 0,
        kswapd_scanned: 0,
        kswapd_reclaimed: 0,
        direct_stalls: 0,
        direct_stall: Histogram::new(),
        direct_waits: Default::default(),
        direct_scanned: 0,
        direct_reclaimed: 0,
        pageout_pages: 0,
        bounce_from_zone: 0,
        bounce_from_reserve: 0,
        mempool_waits: 0,
        mempool_wait_time: SimDuration::ZERO,
        partial_clones: 0,
        partial_nap_time: SimDuration::ZERO,
        free_min_seen: zone.free_pages(),
        free_avg: 0.0,
        below_min: SimDuration::ZERO,
        end_pages: PageStates::default(),
        swap: Default::default(),
        atomic_failures_logged: 0,
        rx: Vec::new(),
    }
}

impl Mem {
    /// The memory of `cfg` at time zero: unreclaimable memory and the initial page cache
    /// allocated, the `page_pool` reserve filled, the rest free. `measuring` is false while a
    /// warm-up runs.
    pub fn new(cfg: &MemoryConfig, streams: &RngStreams, measuring: bool) -> Mem {
        let total = cfg.ram / PAGE_SIZE;
        let marks = Watermarks::v2_6_32(cfg.min_free_kbytes);
        let mut zone = Zone::new(total, marks, cfg.coalesce);
        let mut pages = PageStates {
            unreclaimable: cfg.unreclaimable / PAGE_SIZE,
            clean: cfg.page_cache / PAGE_SIZE,
            bounce: u64::from(cfg.page_pool),
            ..PageStates::default()
        };
        // Unreclaimable memory was allocated at boot in large blocks; the cache and the pool
        // page by page.
        let mut left = pages.unreclaimable;
        for order in (0..MAX_ORDER as u32).rev() {
            while left >= 1 << order {
                assert!(
                    zone.alloc(order),
                    "zone too small for its unreclaimable memory"
                );
                left -= 1 << order;
            }
        }
        for _ in 0..pages.clean + pages.bounce {
            assert!(zone.alloc(0), "zone too small for its initial page cache");
        }
        pages.filling = 0;
        let free = zone.free_pages();
        let obs = initial_obs(total, marks, &zone);
        Mem {
            zone,
            pages,
            cfg: cfg.clone(),
            rng: streams.stream("memory/zone"),
            files: crate::model::mm::filecache::FileCache::new(
                streams.stream("memory/shared-files"),
            ),
            obs,
            measuring,
            since: SimTime::ZERO,
            measure_start: SimTime::ZERO,
            free_area: 0,
            below_min_ns: 0,
            zone_congested: false,
            pages_scanned: 0,
            mapped: (cfg.mapped / PAGE_SIZE).min(pages.unreclaimable),
            free_range: (free, free),
            atomic_failed: 0,
            printk: Ratelimit::printk(),
            work: 0,
        }
    }

    /// The configuration.
    pub fn cfg(&self) -> &MemoryConfig {
        &self.cfg
    }

    /// Whether counters are being kept (the warm-up is over).
    pub fn measuring(&self) -> bool {
        self.measuring
    }

    /// Advances the free-page integrals to `now` (the free count held since the last call).
    pub fn advance(&mut self, now: SimTime) {
        if now <= self.since {
            return;
        }
        if self.measuring {
            let dt = now.since(self.since).as_ns();
            self.free_area += u128::from(dt) * u128::from(self.zone.free_pages());
            if self.zone.free_pages() < self.zone.marks().min {
                self.below_min_ns += dt;
            }
        }
        self.since = now;
    }

    /// Starts the counters (the warm-up ended at `now`).
    pub fn start_measuring(&mut self, now: SimTime) {
        self.advance(now);
        self.measuring = true;
        self.measure_start = now;
        self.obs.free_min_seen = self.zone.free_pages();
    }

    fn note_free_level(&mut self) {
        if self.measuring {
            self.obs.free_min_seen = self.obs.free_min_seen.min(self.zone.free_pages());
        }
    }

    /// Whether the zone passes `mark` at `order` without flags (kswapd's balance check).
    pub fn zone_ok(&self, order: u32, mark: Mark) -> bool {
        zone_watermark_ok(&self.zone, order, mark, Default::default())
    }

    /// One attempt of the 2.6.32 page allocator for a block of `order` into `state`: the fast
    /// path against `low`; on a miss (kswapd must be woken) the slow path against the class's
    /// floor. A GFP_ATOMIC failure is counted here, with the free level at the time.
    pub fn alloc(&mut self, order: u32, gfp: Gfp, state: PageState, now: SimTime) -> Attempt {
        self.work += 1;
        let mut wake = false;
        let granted = if self.zone.try_alloc(order, AllocClass::FastPath) {
            true
        } else {
            wake = true;
            self.zone.try_alloc(order, gfp.class())
        };
        let logged = if gfp == Gfp::Atomic && !granted {
            self.atomic_failed += 1;
            self.printk.allow(now)
        } else {
            false
        };
        if gfp == Gfp::Atomic && self.measuring {
            let o = order as usize;
            self.obs.atomic_attempts[o] += 1;
            if !granted {
                self.obs.atomic_failures[o] += 1;
                self.obs.atomic_failures_logged += u64::from(logged);
                self.obs.atomic_fail_free_sum[o] += self.zone.free_pages();
                if self.obs.failure_log.len() < MemoryObs::LOG_LINES {
                    self.obs.failure_log.push(AllocFailure {
                        at: now,
                        order,
                        free: self.zone.free_pages(),
                    });
                }
            }
        }
        if granted {
            *self.state_mut(state) += 1 << order;
            self.note_free_level();
            self.free_range.0 = self.free_range.0.min(self.zone.free_pages());
        }
        Attempt {
            granted,
            wake_kswapd: wake,
        }
    }

    /// Up to `n` order-0 pages into `state` by the fast path alone: exactly what `n` calls of
    /// [`Mem::alloc`]`(0, gfp, state, _)` do while each passes the low mark, in one step (the
    /// hot allocation of page-cache and bounce pages goes page by page otherwise). Stops before
    /// the first page that would miss the low mark, which the caller then asks for with
    /// [`Mem::alloc`] (it wakes kswapd and tries the slow path). Returns the pages granted.
    pub fn alloc_fast(&mut self, n: u32, gfp: Gfp, state: PageState) -> u32 {
        self.take_above(n, AllocClass::FastPath, gfp, state)
    }

    /// Up to `n` order-0 pages into `state` as successive calls of
    /// [`Mem::alloc`]`(0, gfp, state, _)` get them while each is granted: first by the fast
    /// path, then, once the zone is at its low mark, by `gfp`'s slow path; stops before the
    /// first page that would fail. Returns the pages granted and whether any came from the
    /// slow path (each such call would have asked to wake kswapd: the caller must know that
    /// those wake-ups change nothing, for example because kswapd is already awake).
    pub fn alloc_run(&mut self, n: u32, gfp: Gfp, state: PageState) -> (u32, bool) {
        let fast = self.alloc_fast(n, gfp, state);
        let slow = self.take_above(n - fast, gfp.class(), gfp, state);
        (fast + slow, slow > 0)
    }

    /// Up to `n` order-0 pages into `state` while the zone stays above `class`'s order-0 floor,
    /// booked as that many granted calls of [`Mem::alloc`] by `gfp`. Returns the pages taken.
    fn take_above(&mut self, n: u32, class: AllocClass, gfp: Gfp, state: PageState) -> u32 {
        let room = self
            .zone
            .free_pages()
            .saturating_sub(self.zone.order0_floor(class));
        let k = u64::from(n).min(room);
        if k == 0 {
            return 0;
        }
        self.zone.alloc_order0(k);
        self.work += k;
        if gfp == Gfp::Atomic && self.measuring {
            self.obs.atomic_attempts[0] += k;
        }
        *self.state_mut(state) += k;
        // The free count only fell: its last value is the lowest.
        self.note_free_level();
        self.free_range.0 = self.free_range.0.min(self.zone.free_pages());
        k as u32
    }

    /// Returns `n` order-0 pages of `state`: exactly `n` calls of [`Mem::free`]`(0, state)`,
    /// with the same draws of the coalescing stream.
    pub fn free_pages(&mut self, n: u64, state: PageState) {
        if n == 0 {
            return;
        }
        let f = self.state_mut(state);
        assert!(*f >= n, "freeing {n} pages of {state:?} which holds {f}");
        *f -= n;
        self.pages_scanned = 0;
        let rng = &mut self.rng;
        self.zone.free_order0(n, &mut || rng.next_u64());
        // The free count only rose: its last value is the highest.
        self.free_range.1 = self.free_range.1.max(self.zone.free_pages());
    }

    fn state_mut(&mut self, state: PageState) -> &mut u64 {
        let p = &mut self.pages;
        match state {
            PageState::Unreclaimable => &mut p.unreclaimable,
            PageState::Clean => &mut p.clean,
            PageState::Dirty => &mut p.dirty,
            PageState::Writeback => &mut p.writeback,
            PageState::Bounce => &mut p.bounce,
            PageState::Atomic => &mut p.atomic,
            PageState::Filling => &mut p.filling,
            PageState::Anon => &mut p.anon,
            PageState::AnonWriteback => &mut p.anon_writeback,
        }
    }

    /// Moves `pages` pages from one state to another (a read filled its pages, a flusher took
    /// dirty pages to writeback, a write completed).
    pub fn transition(&mut self, pages: u64, from: PageState, to: PageState) {
        let f = self.state_mut(from);
        assert!(
            *f >= pages,
            "moving {pages} pages out of {from:?} which holds {f}"
        );
        *f -= pages;
        *self.state_mut(to) += pages;
    }

    /// Returns a block of `order` held in `state` to the zone (it may coalesce).
    pub fn free(&mut self, order: u32, state: PageState) {
        let n = 1u64 << order;
        let f = self.state_mut(state);
        assert!(*f >= n, "freeing {n} pages of {state:?} which holds {f}");
        *f -= n;
        self.pages_scanned = 0;
        let rng = &mut self.rng;
        self.zone.free(order, &mut || rng.next_u64());
        self.free_range.1 = self.free_range.1.max(self.zone.free_pages());
    }

    /// The lowest and highest free counts the zone passed through since the previous call
    /// (or since it was built), then starts a new range at the current count. Lets a caller
    /// that looks once per event still see a dip (or a peak) that did not outlast the event.
    pub fn take_free_range(&mut self) -> (u64, u64) {
        let free = self.zone.free_pages();
        std::mem::replace(&mut self.free_range, (free, free))
    }

    /// GFP_ATOMIC allocations that failed since time zero, warm-up included (the counters in
    /// [`MemoryObs`] start at the warm-up's end).
    pub fn atomic_failures_total(&self) -> u64 {
        self.atomic_failed
    }

    /// 2.6.32's `all_unreclaimable`: the zone was scanned six times over its reclaimable pages
    /// with no page freed to it since; kswapd then stops balancing it.
    pub fn all_unreclaimable(&self) -> bool {
        self.pages_scanned >= 6 * self.lru_pages()
    }

    /// Reclaimable pages (`zone_reclaimable_pages`): the file LRU, and the anonymous pages
    /// (none without swap or processes).
    pub fn lru_pages(&self) -> u64 {
        let anon = if self.cfg.swap > 0 {
            self.pages.anon + self.pages.anon_writeback
        } else {
            0
        };
        self.file_lru_pages() + anon
    }

    /// Pages on the file LRU (clean, dirty, under writeback, mapped).
    pub fn file_lru_pages(&self) -> u64 {
        self.pages.clean + self.pages.dirty + self.pages.writeback + self.mapped
    }

    /// Pages a reclaim pass at `priority` scans: the LRU shifted by the priority, at least one
    /// batch (or the whole LRU if smaller).
    pub fn scan_target(&self, priority: i32) -> u64 {
        let lru = self.file_lru_pages();
        (lru >> priority.clamp(0, 63)).max(SWAP_CLUSTER_MAX.min(lru))
    }

    /// Scans up to `target` pages of the LRU in batches of [`SWAP_CLUSTER_MAX`], stopping after
    /// the batch in which `stop_after` pages were reclaimed (if given; without a stop the whole
    /// scan is one draw). Each batch's make-up is
    /// drawn from the LRU's composition (hypergeometric, drawn as successive binomials): clean
    /// pages are freed, dirty pages are returned for pageout if `may_writepage` (else they stay
    /// on the LRU), pages under writeback are skipped.
    pub fn scan(&mut self, target: u64, may_writepage: bool, stop_after: Option<u64>) -> Scan {
        let mut out = Scan::default();
        let mut left = target;
        // Dirty pages already picked for pageout stay dirty until the caller issues them: keep
        // them out of later batches.
        let mut dirty_avail = self.pages.dirty;
        while left > 0 {
            let clean = self.pages.clean;
            let others = dirty_avail + self.pages.writeback + self.mapped;
            let lru = clean + others;
            if lru == 0 {
                break;
            }
            // Without an early stop the batches' draws add up to one draw of the whole scan.
            let batch = if stop_after.is_some() {
                SWAP_CLUSTER_MAX
            } else {
                left
            };
            let n = left.min(batch).min(lru);
            let c = draw_hypergeometric(&mut self.rng, n, clean, lru);
            let d = draw_hypergeometric(&mut self.rng, n - c, dirty_avail, others);
            self.work += 1 + c;
            self.files.reclaimed(c, clean);
            self.free_pages(c, PageState::Clean);
            out.dirty += d;
            if may_writepage {
                dirty_avail -= d;
                out.pageout += d;
            }
            out.scanned += n;
            out.reclaimed += c;
            self.pages_scanned += n;
            left -= n;
            if stop_after.is_some_and(|s| out.reclaimed >= s) {
                break;
            }
        }
        self.note_free_level();
        out
    }

    /// Work done since time zero, in units of about one event's cost: one per allocation
    /// attempt, one per scan batch and one per page a scan freed. The engine counts it against
    /// the run's budget ([`crate::engine::Model::work`]).
    pub fn work(&self) -> u64 {
        self.work
    }

    /// Final counters at `now`: averages, the end state of the pages.
    pub fn finish(mut self, now: SimTime) -> MemoryObs {
        self.advance(now);
        let span = now.saturating_since(self.measure_start).as_ns();
        self.obs.free_avg = if span == 0 {
            self.zone.free_pages() as f64
        } else {
            self.free_area as f64 / span as f64
        };
        self.obs.below_min = SimDuration::from_ns(self.below_min_ns);
        self.obs.end_pages = self.pages;
        self.obs
    }

    /// Page conservation: the zone's own books balance, and its allocated pages are exactly
    /// the pages held in some state. `Err` describes the first mismatch.
    pub fn check_conservation(&self) -> Result<(), String> {
        self.zone.check_conservation()?;
        if self.pages.total() != self.zone.allocated_pages() {
            return Err(format!(
                "pages by state sum to {} but the zone has {} allocated ({:?})",
                self.pages.total(),
                self.zone.allocated_pages(),
                self.pages
            ));
        }
        Ok(())
    }
}

/// Successes in `n` draws without replacement from `total` items of which `good` are good,
/// drawn as a binomial with the good share, capped by what exists (exact at the extremes, close
/// when `n` is small against `total`, which a 32-page batch against an LRU of thousands is).
pub(super) fn draw_hypergeometric(rng: &mut SimRng, n: u64, good: u64, total: u64) -> u64 {
    if n == 0 || good == 0 {
        return 0;
    }
    if good >= total {
        return n;
    }
    let p = good as f64 / total as f64;
    let k = crate::model::mm::binomial::sample(rng, n, p);
    let bad = total - good;
    k.min(good).max(n.saturating_sub(bad))
}

#[cfg(test)]
mod ratelimit_tests {
    use super::*;

    /// 2.6.32's `__ratelimit()` by hand: ten messages pass in the window that opens at the
    /// first, the eleventh does not; the first call after the window (5 s) resets it and
    /// passes, and the window restarts at the call after that.
    #[test]
    fn ten_messages_per_five_seconds_with_the_kernels_reset() {
        let mut r = Ratelimit::printk();
        let t = |ms: u64| SimTime::from_ns(ms * 1_000_000);
        assert!((0..10).all(|i| r.allow(t(i))), "the first ten pass");
        assert!(!r.allow(t(10)));
        assert!(!r.allow(t(5_000)), "5 s after the first is still inside");
        assert!(r.allow(t(5_001)), "past 5 s the window resets");
        // That call left the window unopened: the next one opens it, nine more pass.
        assert!((0..9).all(|i| r.allow(t(6_000 + i))));
        assert!(!r.allow(t(6_100)));
        assert!(r.allow(t(11_001)), "5 s after 6.000 s");
    }
}

#[cfg(test)]
mod batch_tests {
    use super::*;
    use crate::model::testing::laptop_memory;

    /// Two identical zones of a 2 GiB laptop, fragmented by the same random allocations and
    /// frees (orders 0-3), their free count left at `free`.
    fn twins(seed: u64, free: u64) -> (Mem, Mem) {
        let cfg = laptop_memory(600, 1.0, 1);
        let streams = RngStreams::new(seed, 0);
        let mut a = Mem::new(&cfg, &streams, true);
        let mut b = Mem::new(&cfg, &streams, true);
        let mut x = seed | 1;
        for _ in 0..4000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let order = (x % 4) as u32;
            for m in [&mut a, &mut b] {
                if x.is_multiple_of(3) && m.pages.clean >= 1 << order {
                    m.free(order, PageState::Clean);
                } else {
                    m.alloc(order, Gfp::User, PageState::Clean, SimTime::ZERO);
                }
            }
        }
        for m in [&mut a, &mut b] {
            while m.zone.free_pages() > free {
                // GFP_ATOMIC's floor is below every level asked for.
                assert!(
                    m.alloc(0, Gfp::Atomic, PageState::Clean, SimTime::ZERO)
                        .granted
                );
            }
            while m.zone.free_pages() < free {
                m.free(0, PageState::Clean);
            }
        }
        (a, b)
    }

    /// Everything the two zones could differ in.
    fn same(a: &Mem, b: &Mem) {
        assert_eq!(a.zone.nr_free(), b.zone.nr_free());
        assert_eq!(a.zone.free_pages(), b.zone.free_pages());
        assert_eq!(a.pages, b.pages);
        assert_eq!((a.work, a.free_range), (b.work, b.free_range));
        assert_eq!(format!("{:?}", a.obs), format!("{:?}", b.obs));
        a.zone.check_conservation().unwrap();
    }

    /// `alloc_fast` and `alloc_run` leave the zone exactly as page-by-page `alloc` calls do,
    /// above, across and below the low mark, and stop where those calls would: the reference
    /// asks the zone's own checks whether the next call would be granted (and by which path)
    /// and makes only the calls that would be.
    #[test]
    fn batched_allocations_equal_page_by_page_ones() {
        for (seed, free, n) in [(1, 5000, 40), (2, 1830, 64), (3, 1700, 600), (4, 1200, 9)] {
            for gfp in [Gfp::User, Gfp::MempoolTry, Gfp::Atomic] {
                let (mut a, mut b) = twins(seed, free);
                let fast = a.alloc_fast(n, gfp, PageState::Bounce);
                let mut one = 0;
                while one < n && b.zone.allows(0, AllocClass::FastPath) {
                    let t = b.alloc(0, gfp, PageState::Bounce, SimTime::ZERO);
                    assert!(t.granted && !t.wake_kswapd);
                    one += 1;
                }
                assert_eq!(fast, one, "seed {seed} {gfp:?}");
                same(&a, &b);
                let (mut a, mut b) = twins(seed, free);
                let (run, slow) = a.alloc_run(n, gfp, PageState::Bounce);
                let (mut one, mut woke) = (0, false);
                while one < n && b.zone.allows(0, gfp.class()) {
                    let t = b.alloc(0, gfp, PageState::Bounce, SimTime::ZERO);
                    assert!(t.granted);
                    woke |= t.wake_kswapd;
                    one += 1;
                }
                assert_eq!((run, slow), (one, woke), "seed {seed} {gfp:?}");
                same(&a, &b);
            }
        }
    }

    /// `free_pages(n)` is `n` calls of `free(0)`: the same draws, the same free lists.
    #[test]
    fn batched_frees_equal_page_by_page_ones() {
        for seed in 1..6 {
            let (mut a, mut b) = twins(seed, 1500);
            a.free_pages(300, PageState::Clean);
            for _ in 0..300 {
                b.free(0, PageState::Clean);
            }
            same(&a, &b);
            assert_eq!(a.rng.next_u64(), b.rng.next_u64());
        }
    }
}
