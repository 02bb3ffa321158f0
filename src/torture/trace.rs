//! The traces of the torture run: one small random trace per seed (blkparse text, a binary
//! blktrace capture or a fio iolog), valid or hostile (a field made non-numeric or negative,
//! a zero size, an unknown action, times out of order, a record cut short, a huge `pdu_len`).
//! A valid trace must load and replay, as `kind: replay` in a random mode, issuing exactly
//! its reads and writes with every invariant holding; a hostile one must be refused with a
//! located error (a line or a byte offset), never a panic.

use crate::scenario::replay::{TraceError, blktrace, check};
use rand::RngExt;

/// One drawn trace: its file name (the extension tells its kind), its bytes, whether it is
/// valid, and how many reads and writes it holds.
#[derive(Debug, Clone)]
pub struct TraceCase {
    /// `torture.blkparse`, `torture.iolog` or `torture.blktrace.0`.
    pub name: &'static str,
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// No damage was drawn.
    pub valid: bool,
    /// Reads and writes in the trace.
    pub ios: u64,
}

/// The trace of `seed`.
pub fn trace_file(seed: u64) -> TraceCase {
    let mut rng = crate::engine::RngStreams::new(seed, 0).stream("torture/trace");
    let n = rng.random_range(1..=200u64);
    let kind = rng.random_range(0..3u32);
    let damage = rng.random_bool(0.3).then(|| rng.random_range(0..n));
    let mut t = 0u64;
    let mut text = String::new();
    let mut bin: Vec<Vec<u8>> = Vec::new();
    if kind == 1 {
        text.push_str("fio version 3 iolog\n1 /dev/x add\n");
    }
    for i in 0..n {
        t += rng.random_range(0..2_000_000u64);
        let (write, sector, blocks) = (
            rng.random_bool(0.4),
            rng.random_range(0..1u64 << 20),
            rng.random_range(1..=256u64),
        );
        let pid = 100 + rng.random_range(0..3u32);
        let broken = damage == Some(i);
        let at = if broken && rng.random_bool(0.3) {
            t / 2
        } else {
            t
        };
        match kind {
            0 => {
                let rwbs = if write { "WS" } else { "R" };
                let mut line = format!(
                    "  8,0 0 {i} {}.{:09} {pid} Q {rwbs} {sector} + {blocks} [p{pid}]\n",
                    at / 1_000_000_000,
                    at % 1_000_000_000
                );
                if broken {
                    line = line.replace(" Q ", if at == t { " K " } else { " Q " });
                    line = line.replace(&format!("+ {blocks}"), "+ -1");
                }
                text.push_str(&line);
            }
            1 => {
                let act = if write { "write" } else { "read" };
                let len = if broken {
                    "0".to_string()
                } else {
                    (blocks * 512).to_string()
                };
                text.push_str(&format!(
                    "{} /dev/x {act} {} {len}\n",
                    at / 1000 + 1,
                    sector * 512
                ));
            }
            _ => {
                let action = blktrace::queue_action(write, true);
                let mut rec =
                    blktrace::record(at, sector, blocks as u32 * 512, action, pid, 8 << 20, &[]);
                if broken {
                    match rng.random_range(0..3u32) {
                        0 => rec.truncate(30),
                        1 => rec[46..48].copy_from_slice(&u16::MAX.to_le_bytes()),
                        _ => rec[28] = 99,
                    }
                }
                bin.push(rec);
            }
        }
    }
    let (name, bytes) = match kind {
        0 => ("torture.blkparse", text.into_bytes()),
        1 => ("torture.iolog", text.into_bytes()),
        _ => ("torture.blktrace.0", bin.concat()),
    };
    TraceCase {
        name,
        bytes,
        valid: damage.is_none(),
        ios: n,
    }
}

/// Checks the trace of `seed` in the folder `dir` (see the module docs).
pub(super) fn check_case(seed: u64, dir: &std::path::Path) -> Result<(), String> {
    let case = trace_file(seed);
    let path = dir.join(case.name);
    std::fs::write(&path, &case.bytes).map_err(|e| e.to_string())?;
    let loaded = check(&path, None);
    match (case.valid, loaded) {
        (true, Ok(c)) if c.summary.ios == case.ios => replay_case(seed, &path, case.ios),
        (true, Ok(c)) => Err(format!("{} of {} I/Os read", c.summary.ios, case.ios)),
        (true, Err(e)) => Err(format!("a valid trace was refused: {e}")),
        (false, Ok(_)) => Err("a damaged trace was accepted".to_string()),
        (false, Err(e)) => located(&e),
    }
}

/// A refusal must say where: a line, a byte offset, or the whole file with a hint.
fn located(e: &TraceError) -> Result<(), String> {
    if e.line.is_some() || e.byte.is_some() || !e.hint.is_empty() {
        Ok(())
    } else {
        Err(format!("an unlocated refusal: {e}"))
    }
}

/// The trace replayed under `none` in a random mode: exactly its I/Os, every invariant.
fn replay_case(seed: u64, path: &std::path::Path, ios: u64) -> Result<(), String> {
    let mode = if seed.is_multiple_of(2) {
        "open"
    } else {
        "closed"
    };
    let yaml = format!(
        "policies: [none]\nduration: 3600s\nreplications: 1\ndevice: {{ kind: nvme }}\n\
         workloads:\n  - {{ kind: replay, file: {:?}, mode: {mode} }}\n",
        path.display()
    );
    let sc = crate::scenario::load_str("<torture>", &yaml).map_err(|e| e.to_string())?;
    let info = crate::model::crypt::policy::REGISTRY
        .iter()
        .find(|p| p.name == "none")
        .ok_or("no policy none")?;
    let run = crate::model::run_policy(&sc, info);
    if !run.violations.is_empty() {
        return Err(format!("{mode} replay: {:?}", run.violations));
    }
    let done: u64 = run.obs.finite_jobs.iter().map(|j| j.ios).sum();
    if done != ios {
        return Err(format!("{mode} replay completed {done} of {ios} I/Os"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drawn_traces_load_and_replay_or_are_refused_located() {
        let dir = std::env::temp_dir().join(format!("qsim-trace-cases-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (mut valid, mut hostile) = (0, 0);
        for seed in 0..150 {
            let case = trace_file(seed);
            if case.valid {
                valid += 1;
            } else {
                hostile += 1;
            }
            let sub = dir.join(seed.to_string());
            std::fs::create_dir_all(&sub).unwrap();
            check_case(seed, &sub).unwrap_or_else(|e| panic!("seed {seed} ({}): {e}", case.name));
        }
        std::fs::remove_dir_all(&dir).ok();
        assert!(
            valid > 50 && hostile > 20,
            "{valid} valid, {hostile} hostile"
        );
    }
}
