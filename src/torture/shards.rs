//! The shard files of a torture case: the case's scenario run as `N` shards
//! ([`crate::experiment::shard::run_shard`]) must merge into the report of one process, and
//! the same files damaged as a hostile or careless user would (a count edited, a field
//! dropped, the file cut short, a line lost or repeated, a list inside a job shortened or
//! grown) must give the merge a clear error or a report, never a panic. Counts are edited
//! with their header's fingerprint recomputed ([`crate::experiment::shard::reseal`]), so an
//! edit reaches the checks behind it; every edited count is bounded before it allocates
//! (issue 32), so a case with one that is not shows up as a runaway allocation or an abort.

use crate::engine::{RngStreams, SimRng};
use crate::experiment::shard::{self, Shard, ShardSet};
use crate::experiment::{self, RunOptions};
use crate::scenario::Scenario;
use rand::RngExt;
use serde_json::Value;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Damaged shard sets tried per case.
const MUTANTS: usize = 6;

/// Counts an edit writes into a header or a job line: the edges of every bound and far past.
const COUNTS: [u64; 9] = [
    0,
    1,
    2,
    99_999,
    100_000,
    100_001,
    30_000_000,
    100_000_000_000,
    u64::MAX,
];

/// Runs `sc` as 1 to 3 shards, checks that they merge to `text` (the one-process text
/// report with the invariant tables), then merges [`MUTANTS`] damaged copies of them.
pub(super) fn check_shards(seed: u64, sc: &Scenario, text: &[u8]) -> Result<(), String> {
    let mut rng = RngStreams::new(seed, 0).stream("torture/shards");
    let n = rng.random_range(1..=3usize);
    let files = (0..n)
        .map(|index| {
            shard::run_shard(sc, Shard { index, count: n }, 1, None, &|_, _| {})
                .map_err(|e| format!("shard {index}/{n} failed: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let merged = merge(&files).map_err(|e| format!("{n} shards: {e}"))?;
    if merged.as_deref() != Ok(text) {
        return Err(format!(
            "{n} shards merged to another report than one process:\n{}",
            match &merged {
                Ok(m) => String::from_utf8_lossy(m).into_owned(),
                Err(e) => e.clone(),
            }
        ));
    }
    for m in 0..MUTANTS {
        let mut damaged = files.clone();
        let what = mutate(&mut rng, &mut damaged);
        // A report or a refusal are both right answers; a panic is not.
        let _report_or_refusal =
            merge(&damaged).map_err(|e| format!("{n} shards, mutant {m} ({what}): {e}"))?;
    }
    Ok(())
}

/// Reads and merges `files` as `qsim merge --check-invariants` does: `Ok(Ok(report))`,
/// `Ok(Err(message))` for a refusal, `Err` for a panic or an error with no message.
fn merge(files: &[Vec<u8>]) -> Result<Result<Vec<u8>, String>, String> {
    let run = || {
        let readers: Vec<(std::path::PathBuf, Box<dyn std::io::BufRead>)> = files
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let r: Box<dyn std::io::BufRead> = Box::new(std::io::Cursor::new(f.clone()));
                (format!("s{i}.jsonl").into(), r)
            })
            .collect();
        let set = ShardSet::from_readers(readers).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        shard::merge(set, &report_options(), &mut out).map_err(|e| e.to_string())?;
        Ok::<Vec<u8>, String>(out)
    };
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(Err(e)) if e.trim().is_empty() => Err("a refusal with no message".to_string()),
        Ok(r) => Ok(r),
        Err(p) => Err(format!("panic: {}", super::panic_text(&*p))),
    }
}

/// Damages one of `files` in one way and says how.
fn mutate(rng: &mut SimRng, files: &mut [Vec<u8>]) -> String {
    let i = rng.random_range(0..files.len());
    let f = &mut files[i];
    match rng.random_range(0..6) {
        0 => {
            let key = ["shards", "shard", "jobs"][rng.random_range(0..3)];
            let v = COUNTS[rng.random_range(0..COUNTS.len())];
            edit_line(f, 0, |h| set_key(h, key, v));
            *f = shard::reseal(f);
            format!("file {i}: header {key} = {v}")
        }
        1 => {
            let v = COUNTS[rng.random_range(0..COUNTS.len())];
            edit_line(f, 0, |h| {
                if let Some(sc) = h.get_mut("scenario") {
                    set_key(sc, "replications", v);
                }
            });
            *f = shard::reseal(f);
            format!("file {i}: scenario replications = {v}")
        }
        2 => {
            let line = rng.random_range(0..lines(f).max(1));
            let key = ["job", "run", "rep"][rng.random_range(0..3)];
            let v = COUNTS[rng.random_range(0..COUNTS.len())];
            edit_line(f, line, |j| set_key(j, key, v));
            format!("file {i}: line {line} {key} = {v}")
        }
        3 => {
            let line = rng.random_range(0..lines(f).max(1));
            let pick = rng.random_range(0..64usize);
            let deep = rng.random_bool(0.5);
            edit_line(f, line, |v| drop_field(v, pick, deep));
            *f = shard::reseal(f);
            format!("file {i}: line {line} a field dropped")
        }
        4 => {
            let line = rng.random_range(0..lines(f).max(1));
            let (pick, grow) = (rng.random_range(0..256usize), rng.random_bool(0.5));
            edit_line(f, line, |v| {
                resize_list(v, &mut pick.clone(), grow);
            });
            format!("file {i}: line {line} a list resized")
        }
        _ => {
            let cut = rng.random_range(0..=f.len());
            f.truncate(cut);
            format!("file {i}: cut at byte {cut}")
        }
    }
}

/// Lines in `f`.
fn lines(f: &[u8]) -> usize {
    f.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count()
}

/// Rewrites line `n` of `f` through `edit` when it is JSON (the others stay as they are).
fn edit_line(f: &mut Vec<u8>, n: usize, edit: impl FnOnce(&mut Value)) {
    let mut out: Vec<Vec<u8>> = f.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    let Some(line) = out.get_mut(n) else { return };
    let Ok(mut v) = serde_json::from_slice::<Value>(line) else {
        return;
    };
    edit(&mut v);
    if let Ok(bytes) = serde_json::to_vec(&v) {
        *line = bytes;
    }
    *f = out.join(&b'\n');
}

/// Sets `key` of object `v` to `n`.
fn set_key(v: &mut Value, key: &str, n: u64) {
    if let Some(o) = v.as_object_mut() {
        o.insert(key.to_string(), Value::from(n));
    }
}

/// Removes the `pick`-th key (modulo their number) of `v` or, when `deep`, of the first
/// object found under it.
fn drop_field(v: &mut Value, pick: usize, deep: bool) {
    let Some(o) = v.as_object_mut() else { return };
    if deep && let Some(inner) = o.values_mut().find(|x| x.is_object()) {
        return drop_field(inner, pick, false);
    }
    let keys: Vec<String> = o.keys().cloned().collect();
    if !keys.is_empty() {
        o.remove(&keys[pick % keys.len()]);
    }
}

/// Shortens (drops the last half) or grows (repeats) the `pick`-th list found in `v`, depth
/// first; returns whether it found one.
fn resize_list(v: &mut Value, pick: &mut usize, grow: bool) -> bool {
    match v {
        Value::Array(items) => {
            if *pick == 0 {
                if grow {
                    let again = items.clone();
                    items.extend(again);
                } else {
                    items.truncate(items.len() / 2);
                }
                return true;
            }
            *pick -= 1;
            items.iter_mut().any(|x| resize_list(x, pick, grow))
        }
        Value::Object(o) => o.values_mut().any(|x| resize_list(x, pick, grow)),
        _ => false,
    }
}

/// How both sides of the comparison report: the text format, one worker,
/// `--check-invariants`.
fn report_options() -> RunOptions {
    RunOptions {
        format: "normal".to_string(),
        jobs: 1,
        check_invariants: true,
        ..RunOptions::default()
    }
}

/// The text report `check_shards` compares with: one process, `--check-invariants`.
pub(super) fn one_process(sc: &Scenario) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    match experiment::run_and_report(sc, &report_options(), &mut out, &|_, _| {}) {
        Ok(()) => Ok(out),
        Err(e) => Err(e.to_string()),
    }
}
