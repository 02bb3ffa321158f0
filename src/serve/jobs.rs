//! The runs behind `qsim serve`'s page: one background worker thread, a cache of finished runs
//! keyed by the resolved scenario, and supersession per page.
//!
//! Each knob state a page submits is a [`Request`]: the page's id (a random token each page
//! makes when it loads), the resolved scenario (every `--set` applied and validated) and its
//! cache key, the scenario's canonical JSON, so two knob states, from one page or two, that
//! resolve to the same scenario share one run. The worker runs one request at a time, pages in
//! the order they asked. A page's newer request replaces its queued one (which is then never
//! run) and stops its running one with another key at the next slice of simulation
//! ([`Progress::stop`] is the run's [`crate::model::Valve`]); a stopped run is not cached. A
//! page asks for the status of its newest request only, and [`Jobs::status`] answers
//! [`Status::Superseded`] for any older one of the same page, so no result of an older knob
//! state is ever shown for a newer one; other pages' requests neither supersede nor stop it.
//!
//! What a run does is the [`Runner`] given to [`Jobs::new`]: the real one
//! ([`super::run::run_all_policies`]) runs every policy of the scenario through
//! [`crate::experiment::run_replicated`]; the tests give a scripted one.

use crate::report::plots::PlotData;
use crate::scenario::Scenario;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Finished runs kept in the cache; the oldest is dropped past this. A two-queue result (three
/// runs' plot series and the text report) is about 100 kB, so the cache stays a few MB.
pub const CACHE_ENTRIES: usize = 32;

/// Requests whose ids [`Jobs::status`] still recognises (older ones answer `Unknown`).
const KEPT_REQUESTS: usize = 64;

/// One knob state submitted by a page, resolved.
#[derive(Debug)]
pub struct Request {
    /// The page that submitted it (its token; empty for a client that sends none).
    pub page: String,
    /// The cache key: the resolved scenario as canonical JSON.
    pub key: String,
    /// The resolved scenario.
    pub scenario: Scenario,
    /// The `--set` arguments that made it from the base scenario, in order.
    pub sets: Vec<String>,
}

/// A finished run of every policy of one resolved scenario.
#[derive(Debug)]
pub struct Finished {
    /// The plot series, one run per policy in the scenario's order.
    pub plots: PlotData,
    /// The fio-style text report `qsim run` prints for the same scenario.
    pub report: String,
    /// Wall-clock time the run took, ms.
    pub elapsed_ms: u64,
}

/// How a run ended.
#[derive(Debug)]
pub enum Outcome {
    /// It finished.
    Done(Finished),
    /// It failed: the text says why (a broken invariant, the wall-clock valve).
    Failed(String),
    /// It was asked to stop (superseded) and did; nothing to keep.
    Stopped,
}

/// A running request's progress, shared with its runner.
#[derive(Debug, Default)]
pub struct Progress {
    /// Replications finished.
    pub done: AtomicUsize,
    /// Replications in all.
    pub total: AtomicUsize,
    /// Set when a newer request of the same page supersedes this one: the runner stops at its
    /// next slice.
    pub stop: AtomicBool,
}

impl Progress {
    /// Whether the runner has been asked to stop.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// What the worker runs for a request.
pub type Runner = Box<dyn Fn(&Scenario, &Progress) -> Outcome + Send + Sync>;

/// A request's status, as the page polls it.
#[derive(Debug)]
pub enum Status {
    /// The page submitted a newer request since: it must not show this one.
    Superseded,
    /// No such request (never submitted, or long forgotten).
    Unknown,
    /// Waiting for the worker.
    Queued,
    /// Running: replications done and in all.
    Running(usize, usize),
    /// Finished.
    Done(Arc<Finished>),
    /// Failed, with why.
    Failed(String),
}

/// The worker and its state.
pub struct Jobs {
    shared: Arc<Shared>,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    runner: Runner,
}

#[derive(Default)]
struct State {
    next_id: u64,
    /// Each page's newest request id (only pages whose newest request is still kept).
    latest: HashMap<String, u64>,
    /// The requests still recognised, by id (at most [`KEPT_REQUESTS`]).
    requests: BTreeMap<u64, Arc<Request>>,
    /// Requests waiting for the worker, oldest first: at most one per page.
    pending: VecDeque<(u64, Arc<Request>)>,
    running: Option<(Arc<Request>, Arc<Progress>)>,
    /// Finished outcomes by key, oldest first.
    cache: VecDeque<(String, Result<Arc<Finished>, String>)>,
}

impl State {
    fn cached(&self, key: &str) -> Option<&Result<Arc<Finished>, String>> {
        self.cache.iter().find(|(k, _)| k == key).map(|(_, o)| o)
    }

    /// Forgets the oldest requests past [`KEPT_REQUESTS`], with their queue places.
    fn forget_old(&mut self) {
        while self.requests.len() > KEPT_REQUESTS {
            let Some((id, req)) = self.requests.pop_first() else {
                break;
            };
            self.pending.retain(|(p, _)| *p != id);
            if self.latest.get(&req.page) == Some(&id) {
                self.latest.remove(&req.page);
            }
        }
    }

    /// After a stopped run of `key`: queue again each page's newest request that joined it.
    fn requeue_joined(&mut self, key: &str) {
        if self.cached(key).is_some() {
            return;
        }
        for (page, id) in &self.latest {
            let Some(req) = self.requests.get(id) else {
                continue;
            };
            let waiting = self.pending.iter().any(|(_, r)| r.page == *page);
            if req.key == key && !waiting {
                self.pending.push_back((*id, Arc::clone(req)));
                // One run serves every page that wants this key.
                break;
            }
        }
    }
}

impl Jobs {
    /// Starts the worker thread, which runs requests through `runner`.
    pub fn new(runner: Runner) -> Jobs {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            runner,
        });
        let worker = Arc::clone(&shared);
        std::thread::spawn(move || work(&worker));
        Jobs { shared }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A runner that panicked poisons nothing we cannot read: the state stays consistent
        // between statements.
        self.shared
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Submits, for `page`, a resolved scenario (cache key `key`) made by `sets`, and returns
    /// its request id. It becomes the page's newest request: the page's queued older one is
    /// dropped, and its running one with another key is asked to stop. A cached key or a key
    /// already running starts nothing new.
    pub fn submit(&self, page: &str, scenario: Scenario, key: String, sets: Vec<String>) -> u64 {
        let mut st = self.lock();
        st.next_id += 1;
        let id = st.next_id;
        let req = Arc::new(Request {
            page: page.to_string(),
            key,
            scenario,
            sets,
        });
        st.requests.insert(id, Arc::clone(&req));
        st.latest.insert(req.page.clone(), id);
        st.pending.retain(|(_, r)| r.page != req.page);
        st.forget_old();
        let mut same_running = false;
        if let Some((r, p)) = &st.running {
            if r.key == req.key {
                same_running = !p.stopped();
            } else if r.page == req.page {
                p.stop.store(true, Ordering::Relaxed);
            }
        }
        if st.cached(&req.key).is_none() && !same_running {
            st.pending.push_back((id, req));
        }
        drop(st);
        self.shared.wake.notify_all();
        id
    }

    /// The status of request `id`, and the request itself while it is remembered.
    pub fn status(&self, id: u64) -> (Status, Option<Arc<Request>>) {
        let st = self.lock();
        let Some(req) = st.requests.get(&id).cloned() else {
            return (Status::Unknown, None);
        };
        let status = if st.latest.get(&req.page) != Some(&id) {
            Status::Superseded
        } else if let Some(o) = st.cached(&req.key) {
            match o {
                Ok(f) => Status::Done(Arc::clone(f)),
                Err(e) => Status::Failed(e.clone()),
            }
        } else if let Some((_, p)) = st.running.as_ref().filter(|(r, _)| r.key == req.key) {
            Status::Running(
                p.done.load(Ordering::Relaxed),
                p.total.load(Ordering::Relaxed),
            )
        } else {
            Status::Queued
        };
        (status, Some(req))
    }

    /// The finished result of request `id`, whether or not it is the newest (the page asks for
    /// plots of the result it shows).
    pub fn finished(&self, id: u64) -> Option<(Arc<Request>, Arc<Finished>)> {
        let st = self.lock();
        let req = st.requests.get(&id)?;
        match st.cached(&req.key)? {
            Ok(f) => Some((Arc::clone(req), Arc::clone(f))),
            Err(_) => None,
        }
    }
}

/// The worker: takes the oldest pending request, runs it, caches what it gives.
fn work(shared: &Shared) {
    loop {
        let (req, progress) = {
            let mut st = shared
                .state
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let req = loop {
                if let Some((_, r)) = st.pending.pop_front() {
                    if st.cached(&r.key).is_none() {
                        break r;
                    }
                    continue;
                }
                st = shared
                    .wake
                    .wait(st)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
            };
            let progress = Arc::new(Progress::default());
            st.running = Some((Arc::clone(&req), Arc::clone(&progress)));
            (req, progress)
        };
        // A panicking run (a simulator bug) fails that run, not the worker.
        let run = || (shared.runner)(&req.scenario, &progress);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
            .unwrap_or_else(|_| Outcome::Failed("the run panicked: a bug in qsim".to_string()));
        let mut st = shared
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        st.running = None;
        let kept = match outcome {
            Outcome::Done(f) => Some(Ok(Arc::new(f))),
            Outcome::Failed(e) => Some(Err(e)),
            Outcome::Stopped => None,
        };
        match kept {
            Some(o) => {
                st.cache.push_back((req.key.clone(), o));
                while st.cache.len() > CACHE_ENTRIES {
                    st.cache.pop_front();
                }
            }
            // Another page may have joined this run before it was stopped: run it for them.
            None => st.requeue_joined(&req.key),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    fn scenario() -> Scenario {
        crate::scenario::resolve("nvme-fio").unwrap()
    }

    fn finished(tag: &str) -> Finished {
        Finished {
            plots: PlotData {
                scenario: tag.to_string(),
                seed: 1,
                replications: 1,
                runs: Vec::new(),
                sweep: None,
                flags: Vec::new(),
            },
            report: tag.to_string(),
            elapsed_ms: 0,
        }
    }

    /// A runner that reports each run's scenario description on `started` and finishes when
    /// `release` says so (or stops when asked to).
    fn scripted() -> (Jobs, mpsc::Receiver<String>, mpsc::Sender<()>) {
        let (started_tx, started) = mpsc::channel();
        let (release, release_rx) = mpsc::channel::<()>();
        let release_rx = Mutex::new(release_rx);
        let started_tx = Mutex::new(started_tx);
        let jobs = Jobs::new(Box::new(move |sc: &Scenario, p: &Progress| {
            p.total.store(2, Ordering::Relaxed);
            p.done.store(1, Ordering::Relaxed);
            started_tx.lock().unwrap().send(sc.description.clone()).ok();
            loop {
                if p.stopped() {
                    return Outcome::Stopped;
                }
                let rx = release_rx.lock().unwrap();
                if rx.recv_timeout(Duration::from_millis(5)).is_ok() {
                    return Outcome::Done(finished(&sc.description));
                }
            }
        }));
        (jobs, started, release)
    }

    fn submit(jobs: &Jobs, tag: &str) -> u64 {
        let mut sc = scenario();
        sc.description = tag.to_string();
        jobs.submit(
            "",
            sc,
            format!("key-{tag}"),
            vec![format!("description={tag}")],
        )
    }

    fn wait_done(jobs: &Jobs, id: u64) -> Arc<Finished> {
        let start = Instant::now();
        loop {
            if let (Status::Done(f), _) = jobs.status(id) {
                return f;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "request {id} never finished"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    #[test]
    fn a_newer_request_supersedes_a_running_one_and_drops_a_queued_one() {
        let (jobs, started, release) = scripted();
        let a = submit(&jobs, "a");
        assert_eq!(started.recv().unwrap(), "a");
        assert!(matches!(jobs.status(a).0, Status::Running(1, 2)));
        let b = submit(&jobs, "b");
        let c = submit(&jobs, "c");
        // a was asked to stop; b was dropped before it ran, or stopped if the worker took it
        // before c came: either way the worker goes on to c.
        let mut next = started.recv().unwrap();
        if next == "b" {
            next = started.recv().unwrap();
        }
        assert_eq!(next, "c");
        assert!(matches!(jobs.status(a).0, Status::Superseded));
        assert!(matches!(jobs.status(b).0, Status::Superseded));
        release.send(()).unwrap();
        assert_eq!(wait_done(&jobs, c).report, "c");
        assert!(jobs.finished(a).is_none(), "a stopped run is not cached");
        assert!(matches!(jobs.status(99).0, Status::Unknown));
    }

    #[test]
    fn pages_supersede_only_their_own_runs_and_share_equal_ones() {
        let (jobs, started, release) = scripted();
        let on = |page: &str, tag: &str| {
            let mut sc = scenario();
            sc.description = tag.to_string();
            jobs.submit(page, sc, format!("key-{tag}"), Vec::new())
        };
        let a = on("A", "a");
        assert_eq!(started.recv().unwrap(), "a");
        // Page B's request waits behind A's run; neither supersedes the other.
        let b = on("B", "b");
        assert!(matches!(jobs.status(a).0, Status::Running(1, 2)));
        assert!(matches!(jobs.status(b).0, Status::Queued));
        // Page C joins A's run; then A moves on, which stops the run C still wants.
        let c = on("C", "a");
        let a2 = on("A", "a2");
        assert!(matches!(jobs.status(a).0, Status::Superseded));
        // a stops; B's b, A's a2 and C's rerun of a then run in the order they were queued,
        // and each page gets its own result.
        let mut seen = Vec::new();
        for _ in 0..3 {
            seen.push(started.recv().unwrap());
            release.send(()).unwrap();
        }
        seen.sort();
        assert_eq!(seen, ["a", "a2", "b"]);
        assert_eq!(wait_done(&jobs, b).report, "b");
        assert_eq!(wait_done(&jobs, c).report, "a");
        assert_eq!(wait_done(&jobs, a2).report, "a2");
    }

    #[test]
    fn the_same_resolved_scenario_is_run_once_and_then_served_from_the_cache() {
        let (jobs, started, release) = scripted();
        let a = submit(&jobs, "a");
        assert_eq!(started.recv().unwrap(), "a");
        // The same key while it runs joins the run instead of stopping it.
        let a2 = submit(&jobs, "a");
        release.send(()).unwrap();
        assert_eq!(wait_done(&jobs, a2).report, "a");
        let a3 = submit(&jobs, "a");
        assert_eq!(wait_done(&jobs, a3).report, "a");
        assert!(
            started.recv_timeout(Duration::from_millis(50)).is_err(),
            "a cache hit runs nothing"
        );
        assert!(matches!(jobs.status(a).0, Status::Superseded));
        assert_eq!(jobs.finished(a).unwrap().1.report, "a");
    }

    #[test]
    fn going_back_to_a_stopped_state_runs_it_again() {
        let (jobs, started, release) = scripted();
        submit(&jobs, "a");
        assert_eq!(started.recv().unwrap(), "a");
        submit(&jobs, "b");
        assert_eq!(started.recv().unwrap(), "b");
        let back = submit(&jobs, "a");
        assert_eq!(started.recv().unwrap(), "a");
        release.send(()).unwrap();
        assert_eq!(wait_done(&jobs, back).report, "a");
    }

    #[test]
    fn a_run_that_panics_fails_and_the_worker_goes_on() {
        let jobs = Jobs::new(Box::new(|sc: &Scenario, _: &Progress| {
            assert!(sc.description != "boom", "a scripted bug");
            Outcome::Done(finished(&sc.description))
        }));
        let id = submit(&jobs, "boom");
        let start = Instant::now();
        while !matches!(jobs.status(id).0, Status::Failed(_)) {
            assert!(start.elapsed() < Duration::from_secs(20), "never failed");
            std::thread::sleep(Duration::from_millis(2));
        }
        let ok = submit(&jobs, "fine");
        assert_eq!(wait_done(&jobs, ok).report, "fine");
    }

    #[test]
    fn the_cache_keeps_the_newest_entries() {
        let jobs = Jobs::new(Box::new(|sc: &Scenario, _: &Progress| {
            Outcome::Done(finished(&sc.description))
        }));
        let mut ids = Vec::new();
        for i in 0..CACHE_ENTRIES + 2 {
            let id = submit(&jobs, &i.to_string());
            wait_done(&jobs, id);
            ids.push(id);
        }
        assert!(
            jobs.finished(ids[0]).is_none(),
            "the oldest entry was dropped"
        );
        assert!(jobs.finished(*ids.last().unwrap()).is_some());
    }
}
