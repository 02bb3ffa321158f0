//! The processes that press on memory and relieve it, as state machines driven by the world's
//! events: kswapd, direct reclaimers, GFP_ATOMIC streams, and dm-crypt's bounce-page mempool.
//! Each follows `docs/model/kswapd.md` (Linux 2.6.32 unless a [`VmBehaviour`] switch says
//! otherwise); [`crate::model::mm::memory::Mem`] holds the pages they move. Each is a component in its own
//! file (`kswapd.rs`, `reclaim.rs`, `atomic.rs`, `mempool.rs`) that works on `&mut Mem`; this
//! module holds their shared state (`Pressure`) and their events; the world's side of them is
//! in `src/model/world/` under the same file names.
//!
//! **kswapd** (`balance_pgdat` and the `kswapd()` loop):
//! ```text
//! SLEEP ─wake(k)─► BALANCE(order): pass (prio 12, counters 0)
//!   step: zone passes high(order)? → AFTER
//!         scan lru>>prio pages (CPU: scan_cost per page) → zone passes high? → AFTER
//!         scanned and prio < 10: skip_below_min and zone below min → SKIP
//!                                else congestion_wait(cwait_class, HZ/10)
//!         reclaimed ≥ 32 → new pass; prio − 1; prio < 0 → (reclaimed < 32 and not
//!         force_highorder → order 0) new pass
//! AFTER: a wake raised the order → BALANCE(new order); no nap → SLEEP;
//!        nap: below high → HIGH_HIT, BALANCE; NAP(HZ/10), woken → LOW_HIT, BALANCE;
//!        below high → HIGH_HIT, BALANCE; else SLEEP
//! ```
//! A wake while kswapd is awake only raises its target order. A zone that is `all_unreclaimable`
//! counts as balanced. kswapd writes dirty pages out (pageout) once a pass has scanned more than
//! 64 pages and more than 1.5 times what it reclaimed.
//!
//! **Direct reclaim** (`__alloc_pages_slowpath` → `try_to_free_pages`), for readers filling
//! page cache and writers dirtying it: an attempt scans priorities 12 → 0, stopping once 32
//! pages are reclaimed, with `congestion_wait(cwait_class, HZ/10)` after each scan below
//! priority 10; then the allocation is retried at min, and on failure
//! `congestion_wait(cwait_class, HZ/50)` precedes the next attempt. An attempt that freed
//! nothing restarts the slow path (waking kswapd again from 2.6.32 on); the OOM killer is not
//! modelled, so it also waits HZ/50. With `wait_iff_congested` (2.6.37) both waits sleep only if
//! the disk is congested in that class and a reclaim batch flagged the zone congested. Direct
//! reclaim writes dirty pages out only while the disk is not write-congested
//! (`may_write_to_queue`: reclaimers lack kswapd's `PF_SWAPWRITE`).
//!
//! **GFP_ATOMIC streams**: arrivals at a rate, an order per arrival, the fast path then the
//! atomic floor; a failure is counted by order; a granted buffer is freed after its hold time.
//!
//! **dm-crypt's page_pool** (`crypt_alloc_buffer` through `mempool_alloc`): for each bounce page
//! a try at the MempoolTry floor (0.75·min), then the reserve; the first `min_bio_pages` pages
//! may sleep on the pool (woken when a freed bounce page refills the reserve, or after 5·HZ);
//! later pages may not: the clone goes out partial and kcryptd naps
//! `congestion_wait(cwait_class, HZ/100)` before allocating the rest. Only writeback bios split;
//! a fio job's write waits on the pool instead.

use crate::engine::SimDuration;
use crate::model::base::config::VmBehaviour;
use crate::model::base::ids::ActorId;
use crate::model::mm::atomic::AtomicSources;
use crate::model::mm::kswapd::Kswapd;
use crate::model::mm::memory::Mem;
use crate::model::mm::mempool::Mempool;
use crate::model::mm::reclaim::DirectReclaim;

/// The memory processes' events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemEvent {
    /// A GFP_ATOMIC stream's next allocation.
    AtomicArrival {
        /// Stream index.
        stream: u32,
    },
    /// A driver frees an atomic buffer of this order.
    AtomicFree {
        /// Block order.
        order: u32,
    },
    /// kswapd's 2.6.33 nap ends.
    KswapdNapEnd,
    /// A thread asleep on dm-crypt's empty `page_pool` reaches its 5·HZ timeout.
    MempoolTimeout {
        /// The thread.
        actor: ActorId,
    },
    /// A fake-gitk process starts.
    ProcStart {
        /// The process.
        proc: u32,
    },
    /// A fake-gitk process found every page of its read in the page cache.
    ProcReadHit {
        /// The process.
        proc: u32,
    },
}

/// Everything the memory processes keep, boxed into the world when there is a `memory:`
/// section.
#[derive(Debug)]
pub(in crate::model) struct Pressure {
    pub(in crate::model) mem: Mem,
    pub(in crate::model) vm: VmBehaviour,
    pub(in crate::model) kswapd: Kswapd,
    /// The direct reclaimers.
    pub(in crate::model) reclaim: DirectReclaim,
    /// The GFP_ATOMIC streams.
    pub(in crate::model) atomic: AtomicSources,
    /// dm-crypt's `page_pool`.
    pub(in crate::model) pool: Mempool,
    pub(in crate::model) scan_cost: SimDuration,
    /// Anonymous memory and swap.
    pub(in crate::model) swap: crate::model::mm::swap::Swap,
    /// Draws for swap bios.
    pub(in crate::model) swap_rng: crate::engine::SimRng,
}

impl Pressure {
    pub(in crate::model) fn new(
        sc: &crate::model::base::config::Scenario,
        streams: &crate::engine::RngStreams,
        actors: usize,
        measuring: bool,
        proc_pages: &[u32],
        file_pages: &[u32],
    ) -> Option<Box<Pressure>> {
        let cfg = sc.memory.as_ref()?;
        let mut mem = Mem::new(cfg, streams, measuring);
        mem.files.add_files(file_pages);
        Some(Box::new(Pressure {
            swap: crate::model::mm::swap::Swap::new(cfg, proc_pages),
            swap_rng: crate::model::mm::swap::swap_rng(streams),
            mem,
            vm: sc.kernel.vm,
            kswapd: Kswapd::new(),
            reclaim: DirectReclaim::default(),
            atomic: AtomicSources::new(&cfg.atomic, streams),
            pool: Mempool::new(cfg.page_pool, cfg.min_bio_pages, actors),
            scan_cost: cfg.scan_cost,
        }))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::engine::SimTime;
    use crate::engine::{Scheduler, SimDuration};
    use crate::model::base::config::{MemoryConfig, Scenario};
    use crate::model::mm::memory::{Gfp, PAGE_SIZE, PageState};
    use crate::model::world::{Event, World};
    use crate::model::{RunResult, crypt::policy, run_policy};

    pub(crate) fn laptop(unreclaimable_mib: u64, rate: f64, burst: u32) -> MemoryConfig {
        crate::model::testing::laptop_memory(unreclaimable_mib, rate, burst)
    }

    pub(crate) fn two_queue(duration_s: u64) -> Scenario {
        let mut sc = crate::scenario::resolve("two-queue").expect("shipped");
        sc.duration = SimDuration::from_secs(duration_s);
        sc.memory = None;
        sc
    }

    /// A world with a laptop's memory and nothing running in it (no workload, no GFP_ATOMIC
    /// stream, no warm-up), for scripting the memory processes by hand.
    pub(crate) fn quiet_world(sched: &mut Scheduler<Event>) -> World {
        let mut sc = two_queue(1);
        sc.warmup = SimDuration::ZERO;
        sc.workloads.clear();
        let mut mem = laptop(1900, 20.0, 1);
        mem.atomic.clear();
        sc.memory = Some(mem);
        World::new(&sc, policy::find("fifo").expect("fifo"), 0, sched)
    }

    /// Allocates clean page cache from `w`'s zone while `more` says so.
    pub(crate) fn fill(w: &mut World, now: SimTime, more: impl Fn(&Mem) -> bool) {
        let p = w.memory_mut().zone_mut().expect("a zone");
        while more(&p.mem) {
            assert!(p.mem.alloc(0, Gfp::Atomic, PageState::Clean, now).granted);
        }
    }

    fn run_all(sc: &Scenario) -> Vec<RunResult> {
        sc.policies
            .iter()
            .map(|p| {
                let r = run_policy(sc, policy::find(p).unwrap());
                assert!(r.violations.is_empty(), "{p}: {:?}", r.violations);
                r
            })
            .collect()
    }

    /// Under pressure (little reclaimable cache, a bursty order-2 stream) every conservation
    /// law holds, kswapd wakes and waits, readers stall in direct reclaim, and that time shows
    /// in their latency as its own stage.
    #[test]
    fn memory_pressure_keeps_every_invariant() {
        let mut sc = two_queue(20);
        sc.memory = Some(laptop(1900, 20.0, 64));
        for r in run_all(&sc) {
            let m = r.obs.memory.as_ref().expect("memory obs");
            assert!(m.kswapd_wakeups > 0, "{}", r.obs.policy);
            assert!(m.kswapd_waits.class[1].waits > 0, "{}", r.obs.policy);
            assert!(m.direct_stalls > 0, "{}", r.obs.policy);
            let reclaim =
                &r.obs.dirs[0].stages[crate::model::base::obs::Stage::DirectReclaim.index()];
            assert!(reclaim.max() > 0, "{}", r.obs.policy);
            assert!(m.atomic_attempts[2] > 0);
        }
    }

    /// Memory far above the load: kswapd never wakes and no allocation fails or stalls.
    #[test]
    fn ample_memory_never_wakes_kswapd() {
        let mut sc = two_queue(10);
        let mut mem = laptop(256, 20.0, 4);
        mem.ram = 16 << 30;
        mem.min_free_kbytes = 16384;
        mem.page_cache = 1 << 30;
        sc.memory = Some(mem);
        for r in run_all(&sc) {
            let m = r.obs.memory.as_ref().expect("memory obs");
            assert_eq!(m.kswapd_wakeups, 0, "{}", r.obs.policy);
            assert_eq!(m.kswapd_passes, 0);
            assert_eq!(m.atomic_failures.iter().sum::<u64>(), 0);
            assert_eq!(m.direct_stalls, 0);
            assert_eq!(m.mempool_waits + m.partial_clones, 0);
            assert!(m.atomic_attempts[2] > 0);
        }
    }

    /// The pressure scenario under `fifo` with the kernel switches `vm`.
    fn pressed(vm: VmBehaviour) -> crate::model::base::obs::MemoryObs {
        let mut sc = two_queue(20);
        sc.memory = Some(laptop(1900, 20.0, 64));
        sc.policies = vec!["fifo".into()];
        sc.kernel.vm = vm;
        let r = run_all(&sc).pop().expect("one run");
        *r.obs.memory.expect("memory obs")
    }

    fn v2_6_32() -> VmBehaviour {
        crate::model::base::config::KernelVersion::V2_6_32.defaults()
    }

    /// congestion_wait's early wake: on the SYNC queue (2.6.30's WRITE) every read completion
    /// frees a SYNC request far below the off threshold and ends the wait; on the ASYNC queue
    /// only write completions with the ASYNC pool below off do. So 2.6.30's waits are shorter
    /// and nearly all end early (docs/model/kswapd.md §1).
    #[test]
    fn sync_queue_waits_end_at_read_completions() {
        let asy = pressed(v2_6_32());
        let syn = pressed(VmBehaviour {
            cwait_class: crate::model::base::config::CwaitClass::Sync,
            ..v2_6_32()
        });
        assert_eq!(syn.kswapd_waits.class[1].waits, 0);
        assert_eq!(asy.kswapd_waits.class[0].waits, 0);
        let (s, a) = (&syn.kswapd_waits.class[0], &asy.kswapd_waits.class[1]);
        assert!(s.waits > 0 && a.waits > 0);
        let mean = |o: &crate::model::base::obs::CongestionWaitObs| o.total.as_ns() / o.waits;
        assert!(s.woken_early * 10 >= s.waits * 9, "{s:?}");
        assert!(mean(s) * 3 < mean(a) * 2, "sync {s:?} async {a:?}");
        // A wait never outlasts its HZ/10 timeout.
        assert!(mean(a) <= 100_000_000 && mean(s) <= 100_000_000);
    }

    /// 2.6.37's skip: while the zone is below min kswapd counts a skip instead of waiting.
    #[test]
    fn skip_below_min_turns_waits_into_skips() {
        let base = pressed(v2_6_32());
        let skip = pressed(VmBehaviour {
            skip_below_min: true,
            ..v2_6_32()
        });
        assert_eq!(base.kswapd_skips, 0);
        assert!(skip.kswapd_skips > 0);
        assert!(base.below_min > SimDuration::ZERO);
    }

    /// Without force_highorder a sweep that reclaimed under 32 pages drops kswapd to order 0;
    /// with it, never. Here the LRU holds only mapped pages, so no sweep reclaims anything, and
    /// free memory sits just under low so order-2 receive buffers wake kswapd at order 2.
    #[test]
    fn force_highorder_keeps_the_order() {
        let run = |force: bool| {
            let mut sc = two_queue(5);
            sc.warmup = SimDuration::ZERO;
            // Only the receive stream allocates: direct reads, no writer.
            sc.workloads.truncate(1);
            if let crate::model::base::config::WorkloadKind::Fio(f) = &mut sc.workloads[0].kind {
                f.direct = true;
            }
            let mut mem = laptop(0, 20.0, 1);
            mem.page_cache = 0;
            mem.unreclaimable = mem.ram - (1_700 + 32) * PAGE_SIZE;
            mem.mapped = 100 << 20;
            sc.memory = Some(mem);
            sc.policies = vec!["fifo".into()];
            sc.kernel.vm.force_highorder = force;
            let r = run_all(&sc).pop().expect("one run");
            *r.obs.memory.expect("memory obs")
        };
        let base = run(false);
        assert!(base.kswapd_wakeups > 0);
        assert!(base.order0_fallbacks > 0, "{}", base.order0_fallbacks);
        let forced = run(true);
        assert!(forced.kswapd_passes > 0);
        assert_eq!(forced.order0_fallbacks, 0);
    }

    /// The 2.6.33 nap: kswapd sometimes finds itself needed right after balancing.
    #[test]
    fn the_nap_catches_premature_sleeps() {
        let base = pressed(v2_6_32());
        assert_eq!(base.low_wmark_hit_quickly + base.high_wmark_hit_quickly, 0);
        let nap = pressed(VmBehaviour {
            kswapd_nap: true,
            ..v2_6_32()
        });
        assert!(nap.low_wmark_hit_quickly + nap.high_wmark_hit_quickly > 0);
    }

    /// Under blk-mq nothing clears congestion: every wait lasts its full timeout.
    #[test]
    fn blk_mq_waits_always_time_out() {
        let mut sc = two_queue(20);
        sc.memory = Some(laptop(1900, 20.0, 64));
        sc.policies = vec!["fifo".into()];
        sc.block.mode = crate::model::base::config::QueueMode::BlkMq;
        sc.block.elevator = crate::model::base::config::Elevator::Fifo;
        sc.block.plug = false;
        let r = run_all(&sc).pop().expect("one run");
        let m = r.obs.memory.expect("memory obs");
        let w = &m.kswapd_waits.class[1];
        assert!(w.waits > 0);
        assert_eq!(w.woken_early, 0);
        // Each lasted HZ/10 = 100 ms, except one cut by the horizon.
        let full = w.total.as_ns() / 100_000_000;
        assert!(full == w.waits || full + 1 == w.waits, "{w:?}");
    }
}
