//! The laws every run must obey, checked at its end: Little's law in its exact finite-horizon
//! form for each queue the model keeps in a data structure and for the whole system,
//! conservation of requests, request tags and bounce pages, the CPU books, and a clock that
//! never went back.
//!
//! # Little's law, exactly
//!
//! Watch a queue `Q` over `[0, T]` and let `N(t)` be the number of requests in it. Every request
//! that was ever in `Q` contributes its time there: all of its stay if it left before `T`, its
//! stay up to `T` if it is still there. Then, on every sample path and with no stationarity
//! assumption,
//!
//! ```text
//!   ∫₀ᵀ N(t) dt  =  Σ_requests (time spent in Q within [0, T])
//! ```
//!
//! (the identity `L·T = Σ W` that Little's law takes to the limit). qsim's clock is integer
//! nanoseconds, so both sides are integers in request·ns and must be *equal*, not close.
//!
//! The two sides come from different code, which is what makes the check worth having:
//!
//! - the left side integrates the data structure's own count (the policy's `len()`, the
//!   elevator's `queued()`, the device's `inflight()`, the pool's sleepers, the bio slab's
//!   `live()`), read by [`Occupancy`] before every event. Counts change only while an event is
//!   handled, so `N` is constant between two events and Σ count × gap is the exact integral;
//! - the right side sums the bios' own per-stage clocks ([`Bio::stage_ns`], advanced by
//!   [`Bio::enter`] at each hand-over), or issue-to-completion times for the whole system
//!   ([`TimeInStage`]).
//!
//! A bio that leaves a container without changing stage, a stage change with no container
//! behind it, or a container that loses or duplicates an item breaks the equality.
//!
//! # Conservation
//!
//! Requests issued = completed + in flight; each issuer's own in-flight count agrees with the
//! bios it owns; request tags allocated = requests in the elevator + on the device; bounce pages
//! allocated = freed + held by bios in flight; the crypt queue holds no more items than there
//! are bios; on CPUs with identity, the CPUs' busy times sum to the machine's, which fits in
//! `cpus × T`, and the idle time booked beside waiting threads fits in the idle time
//! ([`cpu_laws`]); and the clock never moved backwards (the engine asserts this per event in debug
//! builds; [`Occupancy`] counts regressions in every build, and the end-of-run check requires
//! none).
//!
//! The checks are pure functions of a [`Snapshot`] of numbers, so a test can feed them wrong
//! numbers and watch them fail.

use crate::engine::SimTime;
use crate::model::base::bio::Bio;
use crate::model::base::obs::Stage;
use serde::{Deserialize, Deserializer, Serialize};

/// A queue whose occupancy is integrated and checked against Little's law.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Queue {
    /// The crypt policy's lists (`policy.len()`) ↔ [`Stage::CryptQueue`].
    CryptQueue,
    /// kcryptd_io's list plus the bio it is running the hop for ↔ [`Stage::IoQueue`]. The stage
    /// covers the io thread's CPU hop too, so the count adds the one bio on its CPU.
    IoHop,
    /// Submitters asleep on a full request pool (`queue.sleepers()`) ↔ [`Stage::PoolSleep`]. Each
    /// sleeper holds exactly one bio. A woken sleeper leaves the list at the free and retries in
    /// a zero-delay event at the same instant, so the gap adds nothing to either side.
    PoolSleep,
    /// Requests in the elevator (`queue.queued()`) ↔ [`Stage::BlockQueue`].
    BlockQueue,
    /// Requests on the device, fixed delay included (`device.inflight()`) ↔ [`Stage::Device`].
    Device,
    /// Bios in flight (`bios.live()`) ↔ issue to completion.
    System,
}

/// Number of [`Queue`]s.
pub const QUEUES: usize = Queue::ALL.len();

impl Queue {
    /// Every checked queue, in report order.
    pub const ALL: [Queue; 6] = [
        Queue::CryptQueue,
        Queue::IoHop,
        Queue::PoolSleep,
        Queue::BlockQueue,
        Queue::Device,
        Queue::System,
    ];

    /// Index into per-queue arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The bio stage whose time this queue's occupancy must match (`None`: issue to completion).
    pub fn stage(self) -> Option<Stage> {
        match self {
            Queue::CryptQueue => Some(Stage::CryptQueue),
            Queue::IoHop => Some(Stage::IoQueue),
            Queue::PoolSleep => Some(Stage::PoolSleep),
            Queue::BlockQueue => Some(Stage::BlockQueue),
            Queue::Device => Some(Stage::Device),
            Queue::System => None,
        }
    }

    /// Label for reports.
    pub fn label(self) -> &'static str {
        match self {
            Queue::CryptQueue => "crypt queue",
            Queue::IoHop => "kcryptd_io hop",
            Queue::PoolSleep => "request-pool sleep",
            Queue::BlockQueue => "block queue",
            Queue::Device => "device",
            Queue::System => "whole system",
        }
    }
}

// Stages the per-stage checks do not cover (crypt service, other) have no single container:
// crypto work is spread over CPU tasks, softirqs and the async engine's pending events, and
// "other" over every submitter's private list. Their time is still inside the whole-system check.

/// The time integral of each queue's count, from the run's start, in request·ns.
#[derive(Debug, Clone)]
pub struct Occupancy {
    areas: [u128; QUEUES],
    since: SimTime,
    regressions: u64,
}

impl Occupancy {
    /// Nothing integrated yet; integration starts at `start`.
    pub fn new(start: SimTime) -> Self {
        Occupancy {
            areas: [0; QUEUES],
            since: start,
            regressions: 0,
        }
    }

    /// Moves the integration point to `now` and returns the gap in ns if it is positive; the
    /// caller then adds the counts that held over the gap with [`Occupancy::add`]. A `now`
    /// before the last point is counted as a clock regression and integrates nothing.
    #[inline]
    pub fn advance(&mut self, now: SimTime) -> Option<u64> {
        let (now, since) = (now.as_ns(), self.since.as_ns());
        if now <= since {
            if now < since {
                self.regressions += 1;
            }
            return None;
        }
        self.since = SimTime::from_ns(now);
        Some(now - since)
    }

    /// Adds `counts[q] × gap_ns` to each queue's integral.
    #[inline]
    pub fn add(&mut self, gap_ns: u64, counts: [u64; QUEUES]) {
        for (area, n) in self.areas.iter_mut().zip(counts) {
            *area += u128::from(n) * u128::from(gap_ns);
        }
    }

    /// The integrals so far, in request·ns, indexed by [`Queue::index`].
    pub fn areas(&self) -> [u128; QUEUES] {
        self.areas
    }

    /// The last time integrated to.
    pub fn since(&self) -> SimTime {
        self.since
    }

    /// Times the clock was seen going backwards.
    pub fn regressions(&self) -> u64 {
        self.regressions
    }
}

/// Time spent in each queue by bios that have completed, in ns (the in-flight bios' part is
/// added at the end by [`TimeInStage::totals`]).
#[derive(Debug, Clone, Default)]
pub struct TimeInStage {
    done: [u128; QUEUES],
}

impl TimeInStage {
    /// Adds a completed bio's time (its stages closed, `now` its completion).
    #[inline]
    pub fn completed(&mut self, bio: &Bio, now: SimTime) {
        for q in Queue::ALL {
            self.done[q.index()] += u128::from(match q.stage() {
                Some(s) => bio.stage_ns[s.index()],
                None => system_ns(bio, now),
            });
        }
    }

    /// Per-queue time of every bio up to `end`: completed bios' whole stays plus the in-flight
    /// bios' stays so far, the stage each is in now counted up to `end`.
    pub fn totals<'a>(&self, live: impl Iterator<Item = &'a Bio>, end: SimTime) -> [u128; QUEUES] {
        let mut sum = self.done;
        for bio in live {
            for q in Queue::ALL {
                sum[q.index()] += u128::from(match q.stage() {
                    Some(s) => {
                        let open = if bio.stage == s {
                            end.since(bio.stage_since).as_ns()
                        } else {
                            0
                        };
                        bio.stage_ns[s.index()] + open
                    }
                    None => system_ns(bio, end),
                });
            }
        }
        sum
    }
}

/// A bio's time in the system up to `t`; a piece of a split bio has none of its own (its
/// parent is in the system the whole time).
fn system_ns(bio: &Bio, t: SimTime) -> u64 {
    if bio.is_piece() {
        0
    } else {
        t.since(bio.issued).as_ns()
    }
}

/// The numbers the checks compare, gathered from a world at the end of its run.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// When the run ended.
    pub end: SimTime,
    /// The last time the occupancy integral reached (must be `end`).
    pub integrated_to: SimTime,
    /// Clock regressions seen.
    pub clock_regressions: u64,
    /// ∫ N dt per queue, request·ns, from the containers' counts.
    pub areas: [u128; QUEUES],
    /// Σ time in the queue per queue, ns, from the bios' clocks.
    pub time_sums: [u128; QUEUES],
    /// Bios issued since the start.
    pub issued: u64,
    /// Bios completed since the start.
    pub completed: u64,
    /// Bios in flight (the slab's count).
    pub live: u64,
    /// Issuers' own in-flight accounts: (issuer, what it believes, what the bios in flight say).
    /// Jobs count bios, writers bytes under writeback.
    pub issuers: Vec<(String, u64, u64)>,
    /// Bounce pages ever allocated.
    pub pages_allocated: u64,
    /// Bounce pages ever freed.
    pub pages_freed: u64,
    /// Bounce pages held by the bios in flight.
    pub pages_held: u64,
    /// Request tags allocated from the pools (both classes).
    pub tags_allocated: u64,
    /// Requests in the elevator.
    pub tags_queued: u64,
    /// Requests on the device.
    pub tags_on_device: u64,
    /// Items in the crypt policy's lists.
    pub crypt_queued: u64,
    /// Pieces of split bios in flight (each may hold a crypt item of its own).
    pub pieces: u64,
    /// The elevator's own books (CFQ's; empty for the others).
    pub elevator: Vec<ConservationCheck>,
    /// Further conservation laws of the memory model (empty without one).
    pub memory: Vec<ConservationCheck>,
    /// The CPU books' laws ([`cpu_laws`]; empty on 2.6.x's shared pool).
    pub cpu: Vec<ConservationCheck>,
}

/// The CPU books of a per-CPU machine of `cpus` CPUs run to `end_ns`: the CPUs' own busy times
/// sum to the machine's busy time, which no more than `cpus × end` can hold; and the time a CPU
/// sat idle beside a waiting movable thread (`idle_beside_ns`) fits in the idle time.
pub fn cpu_laws(
    cpus: u32,
    end_ns: u64,
    busy_per_cpu: &[u128],
    busy_ns: u128,
    idle_beside_ns: u128,
) -> Vec<ConservationCheck> {
    let capacity = u128::from(cpus) * u128::from(end_ns);
    let per_cpu: u128 = busy_per_cpu.iter().sum();
    let idle = capacity.saturating_sub(busy_ns);
    vec![
        ConservationCheck {
            law: "CPU time",
            detail: format!("busy {busy_ns} = Σ CPUs {per_cpu} <= {cpus} × {end_ns} ns"),
            holds: busy_ns == per_cpu && busy_ns <= capacity,
        },
        ConservationCheck {
            law: "CPU balance",
            detail: format!("idle beside waiting {idle_beside_ns} <= idle {idle} ns"),
            holds: idle_beside_ns <= idle && busy_ns <= capacity,
        },
    ]
}

/// Little's law for one queue over the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LittleCheck {
    /// Which queue.
    pub queue: Queue,
    /// ∫₀ᵀ N(t) dt from the container's count, request·ns.
    pub area: u128,
    /// Σ time spent in the queue by every bio, to `T`, ns.
    pub time_sum: u128,
    /// Whether the two are equal.
    pub holds: bool,
}

/// One conservation law over the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConservationCheck {
    /// What is conserved.
    pub law: &'static str,
    /// The figures, e.g. `issued 10 = completed 8 + in flight 2`.
    pub detail: String,
    /// Whether it holds.
    pub holds: bool,
}

/// Every invariant of one run, with the figures behind each verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvariantReport {
    /// When the run ended (`T`).
    pub end: SimTime,
    /// Little's law per queue, in [`Queue::ALL`] order.
    pub little: Vec<LittleCheck>,
    /// Conservation laws.
    pub conservation: Vec<ConservationCheck>,
}

impl InvariantReport {
    /// Checks every invariant on `s`.
    pub fn check(s: &Snapshot) -> InvariantReport {
        let little = Queue::ALL
            .iter()
            .map(|&queue| {
                let (area, time_sum) = (s.areas[queue.index()], s.time_sums[queue.index()]);
                LittleCheck {
                    queue,
                    area,
                    time_sum,
                    holds: area == time_sum,
                }
            })
            .collect();
        let mut conservation = vec![
            ConservationCheck {
                law: "requests",
                detail: format!(
                    "issued {} = completed {} + in flight {}",
                    s.issued, s.completed, s.live
                ),
                holds: u128::from(s.issued) == u128::from(s.completed) + u128::from(s.live),
            },
            issuers_check(&s.issuers),
            ConservationCheck {
                law: "request tags",
                detail: format!(
                    "allocated {} = in elevator {} + on device {}",
                    s.tags_allocated, s.tags_queued, s.tags_on_device
                ),
                holds: u128::from(s.tags_allocated)
                    == u128::from(s.tags_queued) + u128::from(s.tags_on_device),
            },
            ConservationCheck {
                law: "bounce pages",
                detail: format!(
                    "allocated {} = freed {} + held by bios in flight {}",
                    s.pages_allocated, s.pages_freed, s.pages_held
                ),
                holds: u128::from(s.pages_allocated)
                    == u128::from(s.pages_freed) + u128::from(s.pages_held),
            },
            ConservationCheck {
                law: "crypt items",
                detail: format!(
                    "{} queued <= {} in flight",
                    s.crypt_queued,
                    s.live + s.pieces
                ),
                holds: s.crypt_queued <= s.live + s.pieces,
            },
        ];
        conservation.extend(s.elevator.iter().cloned());
        conservation.extend(s.memory.iter().cloned());
        conservation.extend(s.cpu.iter().cloned());
        conservation.push(ConservationCheck {
            law: "clock",
            detail: format!(
                "{} regressions; integrated to {} = end {}",
                s.clock_regressions, s.integrated_to, s.end
            ),
            holds: s.clock_regressions == 0 && s.integrated_to == s.end,
        });
        InvariantReport {
            end: s.end,
            little,
            conservation,
        }
    }

    /// Whether every invariant holds.
    pub fn holds(&self) -> bool {
        self.little.iter().all(|c| c.holds) && self.conservation.iter().all(|c| c.holds)
    }

    /// One line per broken invariant (empty when the run is sound).
    pub fn violations(&self) -> Vec<String> {
        let little = self.little.iter().filter(|c| !c.holds).map(|c| {
            format!(
                "Little's law, {}: integral of N dt {} req*ns != time spent {} ns (differ by {})",
                c.queue.label(),
                c.area,
                c.time_sum,
                c.area.abs_diff(c.time_sum)
            )
        });
        let conservation = self
            .conservation
            .iter()
            .filter(|c| !c.holds)
            .map(|c| format!("{}: {}", c.law, c.detail));
        little.chain(conservation).collect()
    }
}

fn issuers_check(issuers: &[(String, u64, u64)]) -> ConservationCheck {
    let wrong = issuers.iter().find(|(_, claimed, found)| claimed != found);
    let detail = match wrong {
        Some((who, claimed, found)) => {
            format!("{who} accounts for {claimed} but its bios in flight carry {found}")
        }
        None => format!(
            "each of {} issuers' in-flight account matches its bios",
            issuers.len()
        ),
    };
    ConservationCheck {
        law: "issuers",
        detail,
        holds: wrong.is_none(),
    }
}

/// Read back from a file (`qsim merge`), the law's name becomes the `&'static str` the checks
/// use.
impl<'de> Deserialize<'de> for ConservationCheck {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Owned {
            law: String,
            detail: String,
            holds: bool,
        }
        let o = Owned::deserialize(d)?;
        Ok(ConservationCheck {
            law: interned(o.law),
            detail: o.detail,
            holds: o.holds,
        })
    }
}

/// `name` as a `&'static str`: each distinct name is leaked once and reused, so memory stays
/// bounded by the few laws there are.
fn interned(name: String) -> &'static str {
    static NAMES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(&n) = names.iter().find(|&&n| n == name) {
        return n;
    }
    let n: &'static str = Box::leak(name.into_boxed_str());
    names.push(n);
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimDuration;
    use crate::model::base::bio::{Dir, Origin};

    fn t(ns: u64) -> SimTime {
        SimTime::from_ns(ns)
    }

    /// A hand-run history of the elevator: bio A waits over [10, 40), bio B over [20, 70), and
    /// bio C enters at 60 and is still waiting at the end, 100. Little's law for that queue
    /// needs N(t) = 1, 2, 1, 2, 1 on [10,20), [20,40), [40,60), [60,70), [70,100).
    fn history(count_skew: u64) -> (Occupancy, TimeInStage, Vec<Bio>) {
        let mut occ = Occupancy::new(SimTime::ZERO);
        let steps = [(10, 0), (20, 1), (40, 2), (60, 1), (70, 2), (100, 1)];
        for (now, n) in steps {
            let gap = occ.advance(t(now)).expect("time moves on");
            let mut counts = [0; QUEUES];
            // The skew models a container that miscounts while it holds two requests.
            counts[Queue::BlockQueue.index()] = if n == 2 { n + count_skew } else { n };
            counts[Queue::System.index()] = n;
            occ.add(gap, counts);
        }
        let bio = |issued: u64| Bio::new(Dir::Read, true, 4096, 0, Origin::Job(0), t(issued));
        let mut done = TimeInStage::default();
        for (enter, leave) in [(10, 40), (20, 70)] {
            let mut b = bio(enter);
            b.enter(Stage::BlockQueue, t(enter));
            b.enter(Stage::Other, t(leave));
            done.completed(&b, t(leave));
        }
        let mut c = bio(60);
        c.enter(Stage::BlockQueue, t(60));
        (occ, done, vec![c])
    }

    fn snapshot(occ: &Occupancy, done: &TimeInStage, live: &[Bio]) -> Snapshot {
        Snapshot {
            end: t(100),
            integrated_to: occ.since(),
            clock_regressions: occ.regressions(),
            areas: occ.areas(),
            time_sums: done.totals(live.iter(), t(100)),
            issued: 3,
            completed: 2,
            live: 1,
            issuers: vec![("job0".into(), 1, 1)],
            pages_allocated: 0,
            pages_freed: 0,
            pages_held: 0,
            tags_allocated: 1,
            tags_queued: 1,
            tags_on_device: 0,
            crypt_queued: 0,
            pieces: 0,
            elevator: Vec::new(),
            memory: Vec::new(),
            cpu: Vec::new(),
        }
    }

    #[test]
    fn the_cpu_laws_catch_lost_time_and_idle_time_that_was_not_there() {
        let holds = |v: Vec<ConservationCheck>| v.iter().map(|c| c.holds).collect::<Vec<_>>();
        // Two CPUs for 100 ns: 150 busy (100 + 50), so 50 idle, 30 of it beside a waiting thread.
        assert_eq!(holds(cpu_laws(2, 100, &[100, 50], 150, 30)), [true, true]);
        assert_eq!(holds(cpu_laws(2, 100, &[100, 50], 150, 50)), [true, true]);
        // A CPU's books disagree with the machine's.
        assert_eq!(holds(cpu_laws(2, 100, &[100, 40], 150, 30)), [false, true]);
        // More idle beside waiting threads than there was idle time.
        assert_eq!(holds(cpu_laws(2, 100, &[100, 50], 150, 51)), [true, false]);
        // More busy time than the CPUs had.
        assert_eq!(holds(cpu_laws(2, 100, &[100, 110], 210, 0)), [false, false]);
    }

    #[test]
    fn a_correct_history_satisfies_littles_law_exactly() {
        let (occ, done, live) = history(0);
        let r = InvariantReport::check(&snapshot(&occ, &done, &live));
        assert!(r.holds(), "{:?}", r.violations());
        let bq = &r.little[Queue::BlockQueue.index()];
        // 30 + 50 + 40 ns of waiting.
        assert_eq!((bq.area, bq.time_sum), (120, 120));
        assert_eq!(r.little[Queue::System.index()].area, 120);
    }

    #[test]
    fn a_miscounting_container_is_caught() {
        let (occ, done, live) = history(1);
        let r = InvariantReport::check(&snapshot(&occ, &done, &live));
        assert!(!r.holds());
        let v = r.violations();
        assert_eq!(v.len(), 1, "{v:?}");
        // Two intervals of 20 and 10 ns with one phantom request.
        assert!(v[0].contains("block queue") && v[0].contains("150") && v[0].contains("120"));
        assert!(v[0].contains("differ by 30"), "{}", v[0]);
    }

    #[test]
    fn a_bio_that_skips_its_stage_clock_is_caught() {
        let (occ, mut done, mut live) = history(0);
        // The request still waiting at the end never started its stage clock.
        live[0].stage = Stage::Other;
        let r = InvariantReport::check(&snapshot(&occ, &done, &live));
        assert!(!r.holds());
        assert!(r.violations()[0].contains("block queue"));
        // A completed bio counted twice is caught too.
        let (occ, _, live) = history(0);
        let mut b = Bio::new(Dir::Read, true, 4096, 0, Origin::Job(0), t(10));
        b.enter(Stage::BlockQueue, t(10));
        b.enter(Stage::Other, t(40));
        done.completed(&b, t(40));
        let r = InvariantReport::check(&snapshot(&occ, &done, &live));
        assert!(!r.holds());
    }

    #[test]
    fn fabricated_conservation_figures_are_caught() {
        let (occ, done, live) = history(0);
        let good = snapshot(&occ, &done, &live);
        type Breakage = fn(&mut Snapshot);
        let broken: [(&str, Breakage); 6] = [
            ("requests", |s| s.completed += 1),
            ("issuers", |s| {
                s.issuers.push(("writer0".into(), 524_288, 0))
            }),
            ("request tags", |s| s.tags_on_device += 1),
            ("bounce pages", |s| s.pages_allocated += 8),
            ("crypt items", |s| s.crypt_queued = 5),
            ("clock", |s| s.clock_regressions = 1),
        ];
        for (law, breakage) in broken {
            let mut s = good.clone();
            breakage(&mut s);
            let r = InvariantReport::check(&s);
            let v = r.violations();
            assert_eq!(v.len(), 1, "{law}: {v:?}");
            assert!(v[0].starts_with(law), "{law}: {v:?}");
        }
    }

    #[test]
    fn a_clock_that_goes_back_or_stops_short_is_caught() {
        let mut occ = Occupancy::new(SimTime::ZERO);
        assert_eq!(occ.advance(t(50)), Some(50));
        assert_eq!(occ.advance(t(50)), None);
        assert_eq!(occ.advance(t(30)), None);
        assert_eq!((occ.regressions(), occ.since()), (1, t(50)));
        // Integration that stopped before the end leaves part of [0, T] unaccounted for.
        let (occ, done, live) = history(0);
        let mut s = snapshot(&occ, &done, &live);
        s.end += SimDuration::from_ns(1);
        let clock = InvariantReport::check(&s)
            .conservation
            .into_iter()
            .find(|c| c.law == "clock")
            .unwrap();
        assert!(!clock.holds, "{clock:?}");
    }
}
