//! The world's side of `observe/timeline.rs`: what the world shows the timeline at each bucket.

use crate::engine::SimTime;
use crate::model::observe::timeline::*;
use crate::model::world::World;

impl World {
    /// Starts recording this run's timeline in at most `points` buckets, from `now`.
    pub(in crate::model) fn record_timeline(&mut self, points: usize, now: SimTime) {
        let r = Recorder::new(&self.sc, &*self.policy, self.memory.zone_mut(), points, now);
        self.timeline = Some(Box::new(r));
    }

    /// The crypt queue was just changed at `now`.
    #[inline]
    pub(in crate::model) fn timeline_crypt(&mut self, now: SimTime) {
        if let Some(r) = self.timeline.as_deref_mut() {
            r.crypt_changed(now, &*self.policy);
        }
    }

    /// The event at `now` is over.
    #[inline]
    pub(in crate::model) fn timeline_event(&mut self, now: SimTime) {
        if let (Some(r), Some(p)) = (self.timeline.as_deref_mut(), self.memory.zone_mut()) {
            r.event_done(now, p);
        }
    }
}
