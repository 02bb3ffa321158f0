//! A fio job's `serve:` (qsim's, not fio's): each copy is a storage daemon's thread that
//! receives, checksums and replicates every request before writing it (docs/model/workloads.md
//! §2d).
//!
//! | field | default | why |
//! |---|---|---|
//! | `bytes` | `bs` × `iodepth` | one request's data, written as `bytes / bs` I/Os issued together |
//! | `link` | 3125MB/s (25 Gbit/s) | the node's network link each way [assumed] |
//! | `checksum_rate` | 8GB/s | crc32c on one core [assumed: the order of SSE4.2 crc32c] |
//! | `handling` | 0 | CPU per request besides the checksum |
//! | `replicas` | 2 | peers the data is sent to (three copies in all) |
//! | `ack` | 100us | the replicas' round trip and commit after the data leaves [assumed] |
//!
//! The request's writes replace fio's think time: `serve` is refused beside `thinktime` and its
//! companions, beside `think` and `rate` (a daemon's thread takes its next request when its last
//! one is done), and on a job that reads.

use super::{MAX_WORKLOADS, RawWorkload};
use crate::engine::SimDuration;
use crate::model::base::config::{RwKind, Serve, ThinkTime};
use crate::model::base::config::{WorkloadConfig, WorkloadKind};
use crate::scenario::Error;
use crate::scenario::check::{Checker, Zero, at, loc, val};
use crate::scenario::describe::{Rows, row};
use crate::scenario::schema::Capped;
use crate::scenario::units::{Duration, Rate, Size};
use crate::scenario::units::{format_bandwidth, format_bytes};
use serde_saphyr::Spanned;

crate::scenario::schema::raw_section! {
    /// `workloads[].serve:`.
    pub struct RawServe {
        /// Bytes of one request.
        [value] bytes: Size,
        /// The node's link rate each way.
        [value] link: Rate,
        /// Checksum rate on one CPU.
        [value] checksum_rate: Rate,
        /// CPU per request besides the checksum.
        [value] handling: Duration,
        /// Peers the data is sent to.
        [value] replicas: u32,
        /// Wait for the replicas' answers after the data leaves.
        [value] ack: Duration,
    }
}

/// The default link: 25 Gbit/s [assumed].
pub const DEFAULT_LINK: f64 = 25e9 / 8.0;
/// The default checksum rate: 8 GB/s on one core [assumed].
pub const DEFAULT_CHECKSUM_RATE: f64 = 8e9;
/// The default wait for the replicas' answers [assumed].
pub const DEFAULT_ACK: SimDuration = SimDuration::from_us(100);
/// Most writes one request may take.
pub const MAX_WRITES: u64 = 1 << 16;

/// `serve:` of a fio job writing `bs`-byte blocks with `iodepth` in flight, and the think time
/// that carries its writes (`bytes / bs` issued, then a wait for all of them); `None` when the
/// job has no `serve:`.
pub(super) fn serve(
    c: &Checker,
    w: &RawWorkload,
    path: &str,
    rw: RwKind,
    bs: u64,
    iodepth: u32,
) -> Result<Option<(Serve, ThinkTime)>, Error> {
    let Some(s) = &w.serve else {
        return Ok(None);
    };
    let p = |f: &str| at(path, f);
    let sp = |f: &str| at(&p("serve"), f);
    refuse_beside(c, w, path)?;
    if !matches!(rw, RwKind::Write | RwKind::RandWrite) {
        return Err(c.at(&p("serve"), s).conflict(
            "a serving thread writes what it receives: `serve` needs rw: write or randwrite",
            "set `rw: randwrite` (or `write`), or remove `serve`",
        ));
    }
    let r = &s.value;
    let bytes = val(&r.bytes).map_or(bs * u64::from(iodepth), |b| b.0);
    if bytes == 0 || !bytes.is_multiple_of(bs) || bytes / bs > MAX_WRITES {
        return Err(c.at(&sp("bytes"), loc(&r.bytes).or(loc(&w.bs))).bad_value(
            format!(
                "a request must be 1 to {MAX_WRITES} whole blocks of bs ({}), got {}",
                format_bytes(bs),
                format_bytes(bytes)
            ),
            "e.g. bytes: 4MiB with bs: 1MiB (four writes a request)",
        ));
    }
    let rate = |f: &Option<serde_saphyr::Spanned<Rate>>, name: &str, default: f64| match f {
        Some(x) => c.bandwidth(x, &sp(name)),
        None => Ok(default),
    };
    let serve = Serve {
        bytes,
        link: rate(&r.link, "link", DEFAULT_LINK)?,
        checksum_rate: rate(&r.checksum_rate, "checksum_rate", DEFAULT_CHECKSUM_RATE)?,
        handling: c.dur(
            &r.handling,
            &sp("handling"),
            SimDuration::ZERO,
            Zero::Allowed,
        )?,
        replicas: c.int(&r.replicas, &sp("replicas"), 2)?,
        ack: c.dur(&r.ack, &sp("ack"), DEFAULT_ACK, Zero::Allowed)?,
    };
    let think = ThinkTime {
        time: SimDuration::ZERO,
        spin: SimDuration::ZERO,
        blocks: (bytes / bs) as u32,
        on_issue: true,
    };
    Ok(Some((serve, think)))
}

/// Refuses fields a serving job cannot take: fio's think time (the request is its pause), a
/// per-I/O `think`, an open-loop `rate`.
fn refuse_beside(c: &Checker, w: &RawWorkload, path: &str) -> Result<(), Error> {
    let others = [
        ("thinktime", loc(&w.thinktime)),
        ("thinktime_blocks", loc(&w.thinktime_blocks)),
        ("thinktime_blocks_type", loc(&w.thinktime_blocks_type)),
        ("thinktime_spin", loc(&w.thinktime_spin)),
        ("think", loc(&w.think)),
        ("rate", loc(&w.rate)),
    ];
    if let Some((name, l)) = others.iter().find(|(_, l)| l.is_some()) {
        return Err(c.at(&at(path, name), *l).conflict(
            format!("`{name}` cannot be combined with `serve`"),
            "a serving thread issues a request's writes together and takes the next request \
             when they are done: remove it",
        ));
    }
    Ok(())
}

/// Refuses serving workloads that give the node's link different rates: the node has one link
/// each way, which every serving thread shares.
pub(super) fn one_link(
    c: &Checker,
    raw: &Spanned<Capped<Spanned<RawWorkload>, MAX_WORKLOADS>>,
    workloads: &[WorkloadConfig],
) -> Result<(), Error> {
    let mut first: Option<(usize, f64)> = None;
    for (i, (w, r)) in workloads.iter().zip(raw.value.iter()).enumerate() {
        let WorkloadKind::Fio(f) = &w.kind else {
            continue;
        };
        let Some(s) = f.serve else { continue };
        match first {
            None => first = Some((i, s.link)),
            Some((j, link)) if link != s.link => {
                let rs = r.value.serve.as_ref().map(|x| &x.value);
                let l = rs.and_then(|x| loc(&x.link)).or(Some(r.referenced));
                return Err(c.at(&format!("workloads[{i}].serve.link"), l).conflict(
                    format!(
                        "the node has one link, and workloads[{j}] gives it {}; this one gives {}",
                        format_bandwidth(link),
                        format_bandwidth(s.link)
                    ),
                    "give every serving workload the same `link` (or leave it out: 25 Gbit/s)",
                ));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// `serve:`'s rows in `qsim check`.
pub(super) fn describe_serve(o: &mut Rows, s: &Serve, bs: u64) {
    let writes = s.bytes / bs;
    row(
        o,
        4,
        "serve",
        &format!(
            "requests of {} ({writes} write{}), {} replicas, ack {}",
            format_bytes(s.bytes),
            if writes == 1 { "" } else { "s" },
            s.replicas,
            s.ack
        ),
    );
    row(
        o,
        4,
        "serve link",
        &format!("{} each way, shared", format_bandwidth(s.link)),
    );
    row(
        o,
        4,
        "serve cpu",
        &format!(
            "{} a request (checksum at {}, handling {})",
            s.cpu(),
            format_bandwidth(s.checksum_rate),
            s.handling
        ),
    );
}
