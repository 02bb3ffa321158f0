//! The torture generator: one seed → one random *valid* scenario file.
//!
//! A scenario is first drawn as a tree of optional fields that mirrors the file (`Sc`, `Kernel`,
//! `Device`, …, each value with the exact text it is written as), then printed as YAML. Every
//! option comes from one ChaCha8 stream of [`RngStreams`], so a seed is a complete description
//! of the case.
//!
//! Validity is by construction where that is simple (ranges, sector multiples, page multiples)
//! and by a mirror of the loader's cross-field rules where it is not ([`Sc::problem`]): a
//! variant's `set:` is merged over the base exactly as the loader merges it (mappings field by
//! field, lists replaced, a mapping whose `kind:` changes replaced whole), and a draw whose
//! merge breaks a rule is drawn again. The loader is then the judge: if it refuses a file this
//! module produced, either the mirror or the loader is wrong, and the case fails.
//!
//! Costs are kept small so a case runs in milliseconds: durations of 50–300 ms, at most 3
//! replications, and an event budget shared out over the runs of the scenario's plan.
//!
//! One submodule per section of the file (`kernel`, `device`, `block`, `crypt`, `memory`,
//! `workload`), plus `values` and `dist` for the values they share and `scenario` for the whole
//! file; this module holds the random source, the written-value type and the driver.

use super::yaml::{Y, quoted};
use crate::engine::RngStreams;
use crate::engine::SimRng;
use rand::RngExt;

/// Events all runs of one report pass may fire together (each run's `max_events` is at most
/// this divided by the number of runs).
pub const EVENTS_PER_PASS: u64 = 240_000;

/// The random source and the draws the generator needs.
pub(crate) struct G {
    rng: SimRng,
    /// The stream of the draws added after the main stream's layout was fixed (fake-gitk,
    /// `crypt.submit_cost`): a case that draws none of them is the file it always was.
    side: SimRng,
}

impl G {
    fn new(seed: u64) -> G {
        let streams = RngStreams::new(seed, 0);
        G {
            rng: streams.stream("torture"),
            side: streams.stream("torture/side"),
        }
    }
    /// Runs `f` with its draws taken from the side stream ([`G::side`]'s field), leaving the
    /// main stream where it was.
    fn side<T>(&mut self, f: impl FnOnce(&mut G) -> T) -> T {
        std::mem::swap(&mut self.rng, &mut self.side);
        let out = f(self);
        std::mem::swap(&mut self.rng, &mut self.side);
        out
    }
    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }
    fn int(&mut self, lo: u64, hi: u64) -> u64 {
        self.rng.random_range(lo..=hi)
    }
    fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.rng.random_range(0..xs.len())].clone()
    }
    /// A log-uniform integer in `lo..=hi` (`lo >= 1`): small and large values alike.
    fn log(&mut self, lo: u64, hi: u64) -> u64 {
        let (a, b) = ((lo as f64).ln(), (hi as f64 + 1.0).ln());
        let x = self.rng.random_range(a..b).exp() as u64;
        x.clamp(lo, hi)
    }
    /// Usually a log-uniform `lo..=typical`; one draw in twenty is an edge: `lo`, `max` or a
    /// log-uniform value up to `max`.
    fn edge(&mut self, lo: u64, typical: u64, max: u64) -> u64 {
        if self.chance(0.95) {
            return self.log(lo, typical);
        }
        match self.int(0, 2) {
            0 => lo,
            1 => max,
            _ => self.log(lo, max),
        }
    }
    /// `Some(f())` with probability `p`.
    fn maybe<T>(&mut self, p: f64, f: impl FnOnce(&mut G) -> T) -> Option<T> {
        if self.chance(p) { Some(f(self)) } else { None }
    }
}

/// A value with the text it is written as.
#[derive(Debug, Clone)]
pub(crate) struct Q<T> {
    v: T,
    text: String,
}

fn q<T>(v: T, text: String) -> Q<T> {
    Q { v, text }
}

fn set<T>(base: &mut Option<T>, over: Option<T>) {
    if over.is_some() {
        *base = over;
    }
}

fn put<T: Text>(e: &mut Vec<(String, Y)>, key: &str, v: &Option<T>) {
    if let Some(v) = v {
        e.push((key.to_string(), Y::S(v.text())));
    }
}

/// A value's YAML spelling.
trait Text {
    fn text(&self) -> String;
}
impl<T> Text for Q<T> {
    fn text(&self) -> String {
        self.text.clone()
    }
}
impl Text for bool {
    fn text(&self) -> String {
        self.to_string()
    }
}
impl Text for u32 {
    fn text(&self) -> String {
        self.to_string()
    }
}
impl Text for u64 {
    fn text(&self) -> String {
        self.to_string()
    }
}
impl Text for &'static str {
    fn text(&self) -> String {
        (*self).to_string()
    }
}

/// A merge of every field of a struct: nested mappings through their own merge, the rest
/// replaced.
macro_rules! merge_struct {
    ($a:expr, $b:expr; $($f:ident),*) => {{
        let b = $b;
        $(set(&mut $a.$f, b.$f);)*
    }};
}

mod block;
mod crypt;
mod device;
mod dist;
mod kernel;
mod memory;
mod scenario;
mod values;
mod workload;

use block::*;
use crypt::*;
use device::*;
use dist::*;
use kernel::*;
use memory::*;
use scenario::*;
use values::*;
use workload::*;

/// The `max_events` of each run given `runs` runs in a pass: a share of [`EVENTS_PER_PASS`],
/// sometimes tiny; a lone run sometimes gets up to three times that.
fn budget(g: &mut G, runs: u64) -> u64 {
    if runs == 1 && g.chance(0.2) {
        // Past the 2^18 units of a `--time-limit` slice: runs that go in several slices.
        return g.int(200_000, 3 * EVENTS_PER_PASS);
    }
    let share = (EVENTS_PER_PASS / runs.max(1)).max(1);
    if g.chance(0.1) {
        g.int(1, share.min(200))
    } else {
        g.int(share / 2, share).max(1)
    }
}

/// The generated scenario for `seed`, as YAML text.
pub fn scenario_yaml(seed: u64) -> String {
    let mut g = G::new(seed);
    let mut sc = base(&mut g);
    if g.chance(0.5) {
        let n = g.int(1, 3);
        let names = [
            "2.6.30", "baseline", "+patch", "v1", "v2", "nvme", "ω", "a/b",
        ];
        for _ in 0..n {
            let name = loop {
                let candidate = g.pick(&names).to_string();
                if !sc.variants.iter().any(|(v, _)| *v == candidate) {
                    break candidate;
                }
            };
            let mut chosen = Sc::default();
            for _ in 0..30 {
                let set = variant_set(&mut g, &sc);
                let mut merged = sc.clone();
                merged.merge(set.clone());
                if merged.problem().is_none() {
                    chosen = set;
                    break;
                }
            }
            sc.variants.push((name, chosen));
        }
    }
    // The event budget: shared out over every run of one report pass.
    let merged: Vec<Sc> = if sc.variants.is_empty() {
        vec![sc.clone()]
    } else {
        sc.variants
            .iter()
            .map(|(_, s)| {
                let mut m = sc.clone();
                m.merge(s.clone());
                m
            })
            .collect()
    };
    let runs: u64 = merged.iter().map(Sc::runs).sum();
    let share = budget(&mut g, runs);
    sc.max_events = Some(share);
    for (_, s) in &mut sc.variants {
        if s.max_events.is_some() {
            s.max_events = Some(g.int(1, share));
        }
    }
    sc.yaml(&mut g, true).document()
}

#[cfg(test)]
mod tests;
