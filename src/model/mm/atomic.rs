//! GFP_ATOMIC sources: drivers that allocate in interrupt context and cannot wait (a wifi
//! card refilling its receive ring). Each stream arrives at a rate, Poisson or evenly spaced,
//! draws one order per arrival and allocates a burst of buffers of that order through the
//! zone's fast path and then its atomic floor (`docs/model/memory.md`). A failure is counted by
//! the zone per order; a granted buffer is freed after its hold time.
//!
//! The component owns its streams' parameters and random streams and works on `&mut Mem`;
//! the world schedules what it asks for (the next arrival, each buffer's free) and wakes
//! kswapd when an allocation dipped below the low watermark.

use crate::engine::{RngStreams, SimDuration, SimRng, SimTime};
use crate::model::base::config::AtomicStream;
use crate::model::mm::memory::{Gfp, Mem, PageState};
use rand::RngExt;

/// One stream's parameters and random streams.
#[derive(Debug)]
struct Source {
    cfg: AtomicStream,
    /// Cumulative order probabilities.
    cdf: Vec<f64>,
    arrival: SimRng,
    order: SimRng,
    hold: SimRng,
}

/// Every GFP_ATOMIC stream of the scenario.
#[derive(Debug)]
pub(in crate::model) struct AtomicSources {
    sources: Vec<Source>,
}

impl AtomicSources {
    /// The streams of a `memory:` section that no process reads (a receive path with a reader
    /// belongs to the `net` folder), each with its own random streams
    /// (`atomic.<name>/arrival`, `/order`, `/hold`).
    pub(in crate::model) fn new(cfgs: &[AtomicStream], streams: &RngStreams) -> AtomicSources {
        let sources = cfgs
            .iter()
            .filter(|a| a.rx.is_none())
            .map(|a| {
                let total: f64 = a.orders.iter().sum();
                let mut acc = 0.0;
                let cdf = a
                    .orders
                    .iter()
                    .map(|w| {
                        acc += w / total;
                        acc
                    })
                    .collect();
                let s = |what: &str| streams.stream(&format!("atomic.{}/{what}", a.name));
                Source {
                    cfg: a.clone(),
                    cdf,
                    arrival: s("arrival"),
                    order: s("order"),
                    hold: s("hold"),
                }
            })
            .collect();
        AtomicSources { sources }
    }

    /// Number of streams.
    pub(in crate::model) fn len(&self) -> usize {
        self.sources.len()
    }

    /// The gap to stream `i`'s next arrival.
    pub(in crate::model) fn gap(&mut self, i: usize) -> SimDuration {
        let a = &mut self.sources[i];
        let mean = 1.0 / a.cfg.rate;
        let secs = if a.cfg.poisson {
            let u: f64 = a.arrival.random();
            -mean * (1.0 - u).ln()
        } else {
            mean
        };
        SimDuration::from_secs_f64(secs)
    }

    /// Stream `i` arrives at `now`: it draws an order and allocates its burst from `mem`.
    /// `hold(d, order)` is called for each granted buffer, in allocation order, with the time
    /// the driver keeps it. Returns the order to wake kswapd at when any allocation asked for
    /// it.
    pub(in crate::model) fn arrive(
        &mut self,
        i: usize,
        mem: &mut Mem,
        now: SimTime,
        mut hold: impl FnMut(SimDuration, u32),
    ) -> Option<u32> {
        let src = &mut self.sources[i];
        let u: f64 = src.order.random();
        let order = src
            .cdf
            .iter()
            .position(|&c| u < c)
            .unwrap_or(src.cdf.len() - 1) as u32;
        let mut wake = false;
        for _ in 0..src.cfg.burst {
            let held = src.cfg.hold.quantile(src.hold.random());
            let got = mem.alloc(order, Gfp::Atomic, PageState::Atomic, now);
            wake |= got.wake_kswapd;
            if got.granted {
                hold(held, order);
            }
        }
        wake.then_some(order)
    }

    /// A driver frees a buffer of `order`.
    pub(in crate::model) fn free(mem: &mut Mem, order: u32) {
        mem.free(order, PageState::Atomic);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing;

    /// The stream alone against a zone: every buffer of a burst is either held or counted as a
    /// failure, frees give the pages back, and a burst that drains the zone asks for kswapd.
    #[test]
    fn a_burst_is_held_or_counted_as_failed_and_frees_give_the_pages_back() {
        let cfg = testing::laptop_memory(1900, 20.0, 64);
        let streams = RngStreams::new(1, 0);
        let mut mem = Mem::new(&cfg, &streams, true);
        let mut atomic = AtomicSources::new(&cfg.atomic, &streams);
        assert_eq!(atomic.len(), 1);
        assert!(atomic.gap(0) > SimDuration::ZERO);
        let free_before = mem.zone.free_pages();
        let mut held = Vec::new();
        let mut woke = false;
        for _ in 0..200 {
            let wake = atomic.arrive(0, &mut mem, SimTime::ZERO, |d, order| held.push((d, order)));
            woke |= wake == Some(2);
        }
        let failed: u64 = mem.obs.atomic_failures.iter().sum();
        assert_eq!(
            held.len() as u64 + failed,
            200 * 64,
            "every buffer is accounted"
        );
        assert!(
            held.iter()
                .all(|&(d, order)| order == 2 && d > SimDuration::ZERO)
        );
        assert!(
            failed > 0,
            "200 bursts of 64 order-2 buffers exhaust the atomic floor"
        );
        assert!(woke, "dipping under low wakes kswapd");
        for &(_, order) in &held {
            AtomicSources::free(&mut mem, order);
        }
        assert_eq!(mem.zone.free_pages(), free_before);
        mem.check_conservation().expect("the zone's books balance");
    }
}
