//! `kind: fake-gitk`: Mel Gorman's fake-gitk as a process (see `docs/model/workloads.md`).
//!
//! | field | default | why |
//! |---|---|---|
//! | `size` | 64 MiB | commit logs read per loop (and the anonymous buffer's size) [assumed] |
//! | `bs` | 64 KiB | one buffered read (whole 4 KiB pages) [assumed] |
//! | `loops` | 3 | "repeats a few times" [assumed count] |
//! | `progress_every` | 1 MiB | a progress line per this many bytes processed [assumed] |
//! | `hash_cost` | 5 ms per MiB | building the hash map at ≈ 200 MB/s on a 2009 CPU [assumed] |
//! | `map` | 0 | the parent→child hash map's anonymous bytes, built while walking (whole pages) |
//! | `commits` | 0 | commits in the logs, each inserted into the map as walked (0: no inserts) |
//! | `numjobs` | 1 | copies at once |
//! | `startdelay` | 0 | as fio's |
//!
//! A fake-gitk needs a `memory:` section (its buffer is anonymous memory in the zone).

use super::{Place, RawWorkload, region, request_size};
use crate::engine::SimDuration;
use crate::model::base::config::FakeGitk;
use crate::scenario::Error;
use crate::scenario::check::{Checker, Zero, at, val};
use crate::scenario::describe::{Rows, row};
use crate::scenario::memory::PAGE;
use crate::scenario::units::format_bytes;

/// Default bytes read per loop.
pub const DEFAULT_SIZE: u64 = 64 << 20;

/// Fewest log bytes a commit takes: its `commit <40 hex digits>` line and an `Author:` line
/// are already more. It bounds `commits` by `size`, and with it the inserts per page walked.
pub const MIN_COMMIT_BYTES: u64 = 64;

/// A fake-gitk workload.
pub(super) fn fake_gitk(
    c: &Checker,
    w: &RawWorkload,
    place: &mut Place,
) -> Result<FakeGitk, Error> {
    let path = place.path;
    let p = |f: &str| at(path, f);
    let bs = request_size(c, &w.bs, &p("bs"), 64 << 10)?;
    let size = val(&w.size).map_or(DEFAULT_SIZE, |s| s.0);
    let map = val(&w.map).map_or(0, |s| s.0);
    for (v, f, name) in [
        (bs, &w.bs, "bs"),
        (size, &w.size, "size"),
        (map, &w.map, "map"),
    ] {
        if (v == 0 && name != "map") || !v.is_multiple_of(PAGE) {
            return Err(c.at(&p(name), f).bad_value(
                format!(
                    "must be a whole number of 4KiB pages, got {}",
                    format_bytes(v)
                ),
                "the buffer is anonymous memory: 64KiB reads, a 64MiB buffer",
            ));
        }
    }
    if size < bs {
        return Err(c.at(&p("size"), &w.size).conflict(
            format!(
                "the logs ({}) are smaller than one read ({})",
                format_bytes(size),
                format_bytes(bs)
            ),
            "make `size` at least `bs`",
        ));
    }
    let every = val(&w.progress_every).map_or(1 << 20, |s| s.0);
    if every == 0 {
        return Err(c.at(&p("progress_every"), &w.progress_every).bad_value(
            "must be more than 0",
            "a progress line per this many bytes processed, e.g. 1MiB",
        ));
    }
    let hash_cost = c.dur(
        &w.hash_cost,
        &p("hash_cost"),
        SimDuration::from_ms(5),
        Zero::Allowed,
    )?;
    let commits = commits(c, w, path, size, map)?;
    let offset = region(c, w, place, size)?;
    Ok(FakeGitk {
        size,
        offset,
        bs,
        loops: c.int(&w.loops, &p("loops"), 3)?,
        progress_every: every,
        hash_cost,
        numjobs: c.int(&w.numjobs, &p("numjobs"), 1)?,
        startdelay: super::app::fixed_start_delay(c, w, path)?,
        map,
        commits,
    })
}

/// `commits`: none without a map to insert them into, and at least [`MIN_COMMIT_BYTES`] of
/// logs each.
fn commits(c: &Checker, w: &RawWorkload, path: &str, size: u64, map: u64) -> Result<u64, Error> {
    let f = at(path, "commits");
    let commits = c.int(&w.commits, &f, 0)?;
    if commits > 0 && map == 0 {
        return Err(c.at(&f, &w.commits).conflict(
            format!("{commits} commits to insert into a hash map of 0B"),
            "give the map its bytes (`map: 10752000` is 168,000 commits at 64B each), \
             or leave `commits` out",
        ));
    }
    if commits > size / MIN_COMMIT_BYTES {
        return Err(c.at(&f, &w.commits).bad_value(
            format!(
                "{commits} commits in {} of logs is less than {MIN_COMMIT_BYTES}B each",
                format_bytes(size)
            ),
            format!(
                "at most {} commits (one per {MIN_COMMIT_BYTES}B of `size`)",
                size / MIN_COMMIT_BYTES
            ),
        ));
    }
    Ok(commits)
}

/// A fake-gitk's rows in `qsim check`.
pub(super) fn describe(o: &mut Rows, name: &str, g: &FakeGitk) {
    let copies = if g.numjobs > 1 {
        format!(", {} copies", g.numjobs)
    } else {
        String::new()
    };
    row(
        o,
        2,
        name,
        &format!(
            "fake-gitk: {} of logs in {} reads, {} loops{copies}",
            format_bytes(g.size),
            format_bytes(g.bs),
            g.loops
        ),
    );
    row(
        o,
        4,
        "buffer",
        &format!(
            "{} anonymous, walked at {} per MiB; a progress line every {}",
            format_bytes(g.size),
            g.hash_cost,
            format_bytes(g.progress_every)
        ),
    );
    if g.numjobs > 1 {
        row(
            o,
            4,
            "page cache",
            "the copies read one set of logs: a page one copy read is a hit for the others \
             while it stays cached, and a page under a copy's read is waited for",
        );
    }
    if g.map > 0 {
        row(
            o,
            4,
            "hash map",
            &format!(
                "{} anonymous, built while walking, freed with the buffer",
                format_bytes(g.map)
            ),
        );
    }
    if g.commits > 0 {
        row(
            o,
            4,
            "inserts",
            &format!(
                "{} commits per loop ({} of logs each), a random map page each",
                g.commits,
                format_bytes(g.size / g.commits)
            ),
        );
    }
    if !g.startdelay.is_zero() {
        row(o, 4, "start", &format!("after {}", g.startdelay));
    }
    row(o, 4, "region", &super::region_text(g.offset, g.size));
}
