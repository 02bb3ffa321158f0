//! An NVMe controller's pauses ([`NvmeStall`]), drawn lazily from one random stream: when a
//! piece of work that starts at a given time is done, the pauses on its way excluded.

use crate::engine::{SimDuration, SimRng, SimTime};
use crate::model::base::config::NvmeStall;
use rand::RngExt;
use std::collections::VecDeque;

/// The controller's pause schedule, drawn lazily: the pauses that may still matter, in time
/// order (`(start, end)`), and the stream the next gaps come from.
#[derive(Debug)]
pub(super) struct Pauses {
    pub(super) cfg: NvmeStall,
    pub(super) rng: SimRng,
    /// Pauses not yet over at the last query, oldest first; the last one is the latest drawn.
    pub(super) ahead: VecDeque<(SimTime, SimTime)>,
    /// End of the latest pause drawn (the next gap starts there).
    pub(super) drawn_to: SimTime,
}

impl Pauses {
    pub(super) fn new(cfg: NvmeStall, rng: SimRng) -> Pauses {
        Pauses {
            cfg,
            rng,
            ahead: VecDeque::new(),
            drawn_to: SimTime::ZERO,
        }
    }

    /// Draws the next pause: an exponential gap after the last one, then its length.
    pub(super) fn draw(&mut self) {
        let u: f64 = self.rng.random();
        let gap = SimDuration::from_secs_f64(-self.cfg.interval.as_secs_f64() * (1.0 - u).ln());
        let start = self.drawn_to + gap;
        let end = start + self.cfg.length;
        self.ahead.push_back((start, end));
        self.drawn_to = end;
    }

    /// When work of `work` that starts at `start` is done, the pauses on the way excluded:
    /// it waits out a pause it starts in and stops for every pause that begins before it ends.
    /// `start` never decreases from one call to the next (it is the simulated clock).
    pub(super) fn finish(&mut self, start: SimTime, work: SimDuration) -> SimTime {
        while self.ahead.front().is_some_and(|&(_, end)| end <= start) {
            self.ahead.pop_front();
        }
        let (mut t, mut left) = (start, work);
        let mut i = 0;
        loop {
            if i == self.ahead.len() {
                self.draw();
            }
            let (a, b) = self.ahead[i];
            if a <= t {
                t = t.max(b);
            } else if t + left <= a {
                return t + left;
            } else {
                left = left.saturating_sub(a.since(t));
                t = b;
            }
            i += 1;
        }
    }
}
