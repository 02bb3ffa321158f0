//! The domain-free discrete-event kernel: simulated time, the event calendar, random streams and
//! the run loop with its limits. Nothing in here knows about the system being modelled.
//!
//! A [`Model`] receives one event at a time together with a [`Scheduler`], through which it reads
//! the clock and schedules or cancels further events. [`run`] pops events in calendar order
//! (time, then scheduling order; see [`Calendar`]) and stops at a horizon, when nothing is left to
//! do, at a work budget (events plus the model's own work units), or when the model asks it to ([`Scheduler::request_stop`]), whichever
//! comes first.

pub mod calendar;
pub mod rng;
pub mod time;

pub use calendar::{Calendar, EventId};
pub use rng::{RngStreams, SimRng};
pub use time::{SimDuration, SimTime};

/// A simulated system: reacts to its own events by changing state and scheduling more.
pub trait Model {
    /// The events this model schedules for itself.
    type Event;

    /// Handles `ev`, which fires at `sched.now()`.
    fn handle(&mut self, ev: Self::Event, sched: &mut Scheduler<Self::Event>);

    /// Work the model has done inside its events since it was created, in units of about one
    /// event's cost (an allocation attempt, a batch of pages scanned): [`run`] counts it with
    /// the events fired against [`Limits::max_work`], so a model that does much inside few
    /// events is bounded too. A model whose events do bounded work keeps the default, 0.
    fn work(&self) -> u64 {
        0
    }
}

/// The clock and the calendar of pending events, as seen by a [`Model`].
pub struct Scheduler<E> {
    /// The current simulated time: the time of the event being handled, or where the last
    /// [`run`] stopped.
    now: SimTime,
    /// Pending events.
    calendar: Calendar<E>,
    /// The model asked the current [`run`] to return after the event being handled.
    stop: bool,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> Scheduler<E> {
    /// A scheduler at time zero with nothing pending.
    pub fn new() -> Self {
        Scheduler {
            now: SimTime::ZERO,
            calendar: Calendar::new(),
            stop: false,
        }
    }

    /// The current simulated time.
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Schedules `ev` at the absolute time `at`. Events at the same instant fire in the order
    /// they were scheduled.
    ///
    /// # Panics
    ///
    /// If `at` is before [`now`](Scheduler::now): scheduling into the past is a programming error.
    #[inline]
    pub fn schedule_at(&mut self, at: SimTime, ev: E) -> EventId {
        assert!(
            at >= self.now,
            "event scheduled in the past: at {at}, now {}",
            self.now
        );
        self.calendar.schedule(at, ev)
    }

    /// Schedules `ev` after the delay `d` from now (zero fires after the events already due now).
    ///
    /// # Panics
    ///
    /// If `now + d` overflows the simulated clock.
    #[inline]
    pub fn schedule_in(&mut self, d: SimDuration, ev: E) -> EventId {
        let at = self.now + d;
        self.calendar.schedule(at, ev)
    }

    /// Cancels a pending event; `true` iff it was still pending (not fired, not cancelled).
    #[inline]
    pub fn cancel(&mut self, id: EventId) -> bool {
        self.calendar.cancel(id)
    }

    /// Number of pending (scheduled, not fired, not cancelled) events.
    #[inline]
    pub fn pending(&self) -> usize {
        self.calendar.len()
    }

    /// Asks [`run`] to return once the event being handled is done, with
    /// [`StopReason::Stopped`], whatever else is pending: the model has reached its own end
    /// condition. The clock stays at the current event and pending events stay pending. The
    /// request is consumed by the `run` that honours it (a later `run` continues normally); made
    /// outside a run, it stops the next one before its first event.
    #[inline]
    pub fn request_stop(&mut self) {
        self.stop = true;
    }

    /// Whether a stop has been requested and not yet honoured.
    #[inline]
    pub fn stop_requested(&self) -> bool {
        self.stop
    }
}

/// When [`run`] must stop.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Last instant at which events may fire (inclusive). [`SimTime::MAX`] means no horizon.
    pub horizon: SimTime,
    /// Most work in this call of [`run`] (not counting earlier calls): one unit per event
    /// fired plus the units the model reports ([`Model::work`]).
    pub max_work: u64,
}

/// Why [`run`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The next pending event is after the horizon; the clock was advanced to the horizon.
    Horizon,
    /// No event is pending; the clock was advanced to the horizon if it is finite.
    Drained,
    /// [`Limits::max_work`] units of work were done and more events were due by the horizon.
    WorkBudget,
    /// The model asked to stop ([`Scheduler::request_stop`]); the clock stays at the event that
    /// asked.
    Stopped,
}

/// What a call of [`run`] did.
#[derive(Debug, Clone, Copy)]
pub struct RunOutcome {
    /// Why it stopped.
    pub stop: StopReason,
    /// Events fired by this call.
    pub events: u64,
    /// Work done by this call: its events plus the model's own units.
    pub work: u64,
    /// The clock when it stopped (equal to the scheduler's `now()`).
    pub end: SimTime,
}

/// Runs `model` until the horizon, an empty calendar, the work budget, or a stop request.
///
/// Events fire in calendar order while their time is `<= limits.horizon`. It stops with:
///
/// - [`StopReason::Stopped`] when the model called [`Scheduler::request_stop`] while handling
///   the last fired event (or before the call); the clock stays at that event, the rest of the
///   calendar stays pending, and the request is cleared;
/// - [`StopReason::Horizon`] when the next event is after the horizon; the clock is set to the
///   horizon and that event stays pending;
/// - [`StopReason::Drained`] when no event is pending; the clock is also advanced to the horizon,
///   as simulated time passes even with nothing to do, unless the horizon is [`SimTime::MAX`]
///   (then it stays at the last event);
/// - [`StopReason::WorkBudget`] when this call's work (events fired plus [`Model::work`]'s
///   growth) has reached `limits.max_work` and another event is due by the horizon; the clock
///   stays at the last fired event.
///
/// The end conditions are checked in that order before each event, so a run that drains or
/// reaches its horizon with exactly `max_work` used reports the natural reason, and a stop
/// requested by the last event before the calendar drains reports `Stopped`.
///
/// The clock never moves backwards (checked per event in debug builds, and always at the end).
/// To continue a simulation, call `run` again with the same model and scheduler and a later
/// horizon (or a fresh budget): pending events carry over, and events fired before the earlier
/// horizon are not repeated.
///
/// # Panics
///
/// If `limits.horizon` is before `sched.now()`, which would move the clock backwards.
pub fn run<M: Model>(model: &mut M, sched: &mut Scheduler<M::Event>, limits: Limits) -> RunOutcome {
    let start = sched.now;
    assert!(
        limits.horizon >= start,
        "run horizon {} is before the current time {start}",
        limits.horizon
    );
    let mut events: u64 = 0;
    let work_before = model.work();
    let used =
        |model: &M, events: u64| events.saturating_add(model.work().saturating_sub(work_before));
    let stop = loop {
        if sched.stop {
            sched.stop = false;
            break StopReason::Stopped;
        }
        let Some(next) = sched.calendar.peek_time() else {
            if limits.horizon != SimTime::MAX {
                sched.now = limits.horizon;
            }
            break StopReason::Drained;
        };
        if next > limits.horizon {
            sched.now = limits.horizon;
            break StopReason::Horizon;
        }
        if used(model, events) >= limits.max_work {
            break StopReason::WorkBudget;
        }
        let (at, _, ev) = sched
            .calendar
            .pop()
            .expect("peek_time reported a pending event");
        debug_assert!(
            at >= sched.now,
            "clock moved backwards: {at} after {}",
            sched.now
        );
        sched.now = at;
        events += 1;
        model.handle(ev, sched);
    };
    assert!(
        sched.now >= start && sched.now <= limits.horizon,
        "run ended at {} outside [{start}, {}]",
        sched.now,
        limits.horizon
    );
    RunOutcome {
        stop,
        events,
        work: used(model, events),
        end: sched.now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ticks every `period`, counting the ticks it handled and the times it saw.
    struct Ticker {
        period: SimDuration,
        ticks_max: u64,
        seen: Vec<SimTime>,
    }

    impl Model for Ticker {
        type Event = u64;
        fn handle(&mut self, tick: u64, sched: &mut Scheduler<u64>) {
            self.seen.push(sched.now());
            if tick + 1 < self.ticks_max {
                sched.schedule_in(self.period, tick + 1);
            }
        }
    }

    fn ticker(ticks_max: u64) -> (Ticker, Scheduler<u64>) {
        let mut sched = Scheduler::new();
        sched.schedule_at(SimTime::ZERO, 0);
        let model = Ticker {
            period: SimDuration::from_ns(10),
            ticks_max,
            seen: Vec::new(),
        };
        (model, sched)
    }

    fn limits(horizon_ns: u64, max_work: u64) -> Limits {
        Limits {
            horizon: SimTime::from_ns(horizon_ns),
            max_work,
        }
    }

    /// Does `units` of work inside every event.
    struct Busy {
        units: u64,
        done: u64,
    }

    impl Model for Busy {
        type Event = ();
        fn handle(&mut self, (): (), sched: &mut Scheduler<()>) {
            self.done += self.units;
            sched.schedule_in(SimDuration::from_ns(1), ());
        }
        fn work(&self) -> u64 {
            self.done
        }
    }

    #[test]
    fn work_inside_events_counts_against_the_budget() {
        let mut m = Busy { units: 10, done: 0 };
        let mut sched = Scheduler::new();
        sched.schedule_at(SimTime::ZERO, ());
        // 11 units per event: after 3 events 33 < 35, after the 4th 44 >= 35.
        let out = run(&mut m, &mut sched, limits(1_000, 35));
        assert_eq!(
            (out.stop, out.events, out.work),
            (StopReason::WorkBudget, 4, 44)
        );
        // A later call counts only its own work.
        let out = run(&mut m, &mut sched, limits(1_000, 22));
        assert_eq!(
            (out.stop, out.events, out.work),
            (StopReason::WorkBudget, 2, 22)
        );
    }

    #[test]
    fn stops_at_horizon_inclusive_and_sets_clock() {
        let (mut model, mut sched) = ticker(u64::MAX);
        let out = run(&mut model, &mut sched, limits(55, 1_000));
        assert_eq!(out.stop, StopReason::Horizon);
        assert_eq!(out.events, 6, "ticks at 0, 10, …, 50");
        assert_eq!(out.end, SimTime::from_ns(55));
        assert_eq!(sched.now(), out.end);
        assert_eq!(sched.pending(), 1, "the tick at 60 stays pending");

        // An event exactly at the horizon fires.
        let (mut model, mut sched) = ticker(u64::MAX);
        let out = run(&mut model, &mut sched, limits(50, 1_000));
        assert_eq!((out.stop, out.events), (StopReason::Horizon, 6));
    }

    #[test]
    fn drained_advances_clock_to_finite_horizon() {
        let (mut model, mut sched) = ticker(3);
        let out = run(&mut model, &mut sched, limits(1_000, 1_000));
        assert_eq!((out.stop, out.events), (StopReason::Drained, 3));
        assert_eq!(out.end, SimTime::from_ns(1_000));
        assert_eq!(sched.pending(), 0);

        let (mut model, mut sched) = ticker(3);
        let out = run(
            &mut model,
            &mut sched,
            Limits {
                horizon: SimTime::MAX,
                max_work: 1_000,
            },
        );
        assert_eq!(out.stop, StopReason::Drained);
        assert_eq!(
            out.end,
            SimTime::from_ns(20),
            "no horizon: clock stays at last event"
        );
    }

    #[test]
    fn event_budget_stops_at_last_fired_event() {
        let (mut model, mut sched) = ticker(u64::MAX);
        let out = run(&mut model, &mut sched, limits(1_000, 4));
        assert_eq!((out.stop, out.events), (StopReason::WorkBudget, 4));
        assert_eq!(out.end, SimTime::from_ns(30));
        assert_eq!(sched.now(), SimTime::from_ns(30));

        // Exactly exhausting the budget as the calendar drains reports Drained.
        let (mut model, mut sched) = ticker(4);
        let out = run(&mut model, &mut sched, limits(1_000, 4));
        assert_eq!((out.stop, out.events), (StopReason::Drained, 4));
    }

    #[test]
    fn continuing_with_a_later_horizon_resumes_where_it_stopped() {
        let (mut model, mut sched) = ticker(u64::MAX);
        let first = run(&mut model, &mut sched, limits(25, 1_000));
        assert_eq!((first.stop, first.events), (StopReason::Horizon, 3));
        let second = run(&mut model, &mut sched, limits(25, 1_000));
        assert_eq!((second.stop, second.events), (StopReason::Horizon, 0));
        let third = run(&mut model, &mut sched, limits(65, 1_000));
        assert_eq!((third.stop, third.events), (StopReason::Horizon, 4));
        assert_eq!(third.end, SimTime::from_ns(65));
        // Budget-stopped runs continue too.
        let fourth = run(&mut model, &mut sched, limits(1_000, 2));
        assert_eq!((fourth.stop, fourth.events), (StopReason::WorkBudget, 2));
        let expected: Vec<SimTime> = (0..9).map(|i| SimTime::from_ns(i * 10)).collect();
        assert_eq!(model.seen, expected, "each tick fired once, in order");
    }

    /// Ticks like [`Ticker`] and asks to stop at the tick numbered `stop_at`.
    struct Stopper {
        stop_at: u64,
        seen: Vec<u64>,
    }

    impl Model for Stopper {
        type Event = u64;
        fn handle(&mut self, tick: u64, sched: &mut Scheduler<u64>) {
            self.seen.push(tick);
            sched.schedule_in(SimDuration::from_ns(10), tick + 1);
            if tick == self.stop_at {
                sched.request_stop();
            }
        }
    }

    #[test]
    fn a_stop_request_ends_the_run_at_the_event_that_made_it() {
        let mut sched = Scheduler::new();
        sched.schedule_at(SimTime::ZERO, 0);
        // An event due before the next tick stays pending too.
        sched.schedule_at(SimTime::from_ns(35), 100);
        let mut model = Stopper {
            stop_at: 3,
            seen: Vec::new(),
        };
        let out = run(&mut model, &mut sched, limits(1_000, 1_000));
        assert_eq!((out.stop, out.events), (StopReason::Stopped, 4));
        assert_eq!(
            out.end,
            SimTime::from_ns(30),
            "the clock stays at the stopping event"
        );
        assert_eq!(model.seen, vec![0, 1, 2, 3]);
        assert_eq!(
            sched.pending(),
            2,
            "tick 4 and the event at 35 stay pending"
        );
        assert!(!sched.stop_requested(), "the request is consumed");
        // A later run goes on from there.
        let out = run(&mut model, &mut sched, limits(42, 1_000));
        assert_eq!((out.stop, out.events), (StopReason::Horizon, 2));
        assert_eq!(model.seen, vec![0, 1, 2, 3, 100, 4]);

        // A stop requested by the last event, with nothing else pending, is still a stop: the
        // clock does not jump to the horizon as it would for a drained calendar.
        struct Once;
        impl Model for Once {
            type Event = ();
            fn handle(&mut self, _: (), sched: &mut Scheduler<()>) {
                sched.request_stop();
            }
        }
        let mut sched = Scheduler::new();
        sched.schedule_at(SimTime::from_ns(7), ());
        let out = run(&mut Once, &mut sched, limits(1_000, 1_000));
        assert_eq!(
            (out.stop, out.end),
            (StopReason::Stopped, SimTime::from_ns(7))
        );

        // Requested before the run: nothing fires.
        let (mut model, mut sched) = ticker(u64::MAX);
        sched.request_stop();
        let out = run(&mut model, &mut sched, limits(1_000, 1_000));
        assert_eq!((out.stop, out.events), (StopReason::Stopped, 0));
        assert!(model.seen.is_empty());
    }

    #[test]
    fn same_time_events_fire_in_scheduling_order() {
        struct Log(Vec<char>);
        impl Model for Log {
            type Event = char;
            fn handle(&mut self, ev: char, sched: &mut Scheduler<char>) {
                self.0.push(ev);
                if ev == 'a' {
                    // Zero delay: after everything already due now.
                    sched.schedule_in(SimDuration::ZERO, 'z');
                }
            }
        }
        let mut sched = Scheduler::new();
        for ev in ['a', 'b', 'c'] {
            sched.schedule_at(SimTime::from_ns(5), ev);
        }
        let mut model = Log(Vec::new());
        let out = run(&mut model, &mut sched, limits(5, 100));
        assert_eq!(out.stop, StopReason::Drained);
        assert_eq!(model.0, vec!['a', 'b', 'c', 'z']);
    }

    #[test]
    fn cancelled_events_do_not_fire() {
        let (mut model, mut sched) = ticker(u64::MAX);
        let id = sched.schedule_at(SimTime::from_ns(5), 99);
        assert_eq!(sched.pending(), 2);
        assert!(sched.cancel(id));
        assert!(!sched.cancel(id));
        assert_eq!(sched.pending(), 1);
        run(&mut model, &mut sched, limits(10, 100));
        assert_eq!(model.seen, vec![SimTime::ZERO, SimTime::from_ns(10)]);
    }

    #[test]
    #[should_panic(expected = "scheduled in the past")]
    fn scheduling_into_the_past_panics() {
        let (mut model, mut sched) = ticker(u64::MAX);
        run(&mut model, &mut sched, limits(20, 100));
        sched.schedule_at(SimTime::from_ns(19), 0);
    }

    #[test]
    #[should_panic(expected = "before the current time")]
    fn horizon_before_now_panics() {
        let (mut model, mut sched) = ticker(u64::MAX);
        run(&mut model, &mut sched, limits(20, 100));
        run(&mut model, &mut sched, limits(10, 100));
    }
}
