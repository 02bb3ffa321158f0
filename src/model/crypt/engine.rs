//! The async crypto engine (`crypto: async`): a FIFO drained at a fixed rate, bounded in
//! 512-byte requests, as a hardware offload behind the crypto API. A crypt thread hands it a
//! bio's requests and goes on unless the queue overflows, in which case it blocks on the
//! backlog until its last request is admitted.
//!
//! The crypt threads themselves are actors of the world ([`crate::model::world`]); their events live
//! here.

use crate::engine::{SimDuration, SimTime};
use crate::model::base::bio::BioId;
use crate::model::base::ids::ActorId;

/// The crypt side's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CryptEvent {
    /// The async crypto engine finished a bio.
    EngineDone {
        /// The bio.
        bio: BioId,
    },
    /// A crypt thread's last backlogged crypto request entered the engine queue.
    BacklogUnblock {
        /// The thread.
        actor: ActorId,
    },
}

/// Where a bio handed to the engine stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Submitted {
    /// When the engine finishes the bio.
    pub finish: SimTime,
    /// When the submitting thread may go on, if the queue overflowed (it sits on the backlog
    /// until then); `None`: at once.
    pub unblock: Option<SimTime>,
}

/// The async crypto engine.
#[derive(Debug)]
pub struct AsyncEngine {
    queue_limit: u64,
    unit_ns: f64,
    busy_until: SimTime,
}

impl AsyncEngine {
    /// An idle engine admitting `queue_limit` requests (at least one) and serving `rate`
    /// bytes/s.
    pub fn new(queue_limit: u32, rate: f64) -> Self {
        AsyncEngine {
            queue_limit: u64::from(queue_limit.max(1)),
            unit_ns: 512.0 / rate * 1e9,
            busy_until: SimTime::ZERO,
        }
    }

    /// Queues `units` 512-byte requests at `now`.
    pub fn submit(&mut self, units: u64, now: SimTime) -> Submitted {
        let start = now.max(self.busy_until);
        let finish = start + SimDuration::from_secs_f64(units as f64 * self.unit_ns / 1e9);
        self.busy_until = finish;
        // The last request enters the queue once no more than `queue_limit` remain ahead of
        // and including it; until then the thread sits on the backlog.
        let room = SimDuration::from_secs_f64(self.queue_limit as f64 * self.unit_ns / 1e9);
        let enter = SimTime::from_ns(finish.as_ns().saturating_sub(room.as_ns()));
        Submitted {
            finish,
            unblock: (enter > now).then_some(enter),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engine_serves_in_order_and_backlogs_past_its_queue_limit() {
        // 512 B at 512 MB/s: 1 µs per request; room for 4 requests.
        let mut e = AsyncEngine::new(4, 512e6);
        let t0 = SimTime::ZERO;
        let a = e.submit(2, t0);
        assert_eq!(a.finish, SimTime::from_ns(2_000));
        assert_eq!(a.unblock, None);
        // 2 + 8 requests queued: the last enters once 4 remain, at 6 µs.
        let b = e.submit(8, t0);
        assert_eq!(b.finish, SimTime::from_ns(10_000));
        assert_eq!(b.unblock, Some(SimTime::from_ns(6_000)));
        // After the engine drained, a new bio starts at once.
        let c = e.submit(1, SimTime::from_ns(20_000));
        assert_eq!(c.finish, SimTime::from_ns(21_000));
        assert_eq!(c.unblock, None);
    }

    #[test]
    fn a_zero_queue_limit_still_admits_one_request() {
        let mut e = AsyncEngine::new(0, 512e6);
        let s = e.submit(3, SimTime::ZERO);
        assert_eq!(s.unblock, Some(SimTime::from_ns(2_000)));
    }
}
