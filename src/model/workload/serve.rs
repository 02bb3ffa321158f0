//! A storage daemon's request path in front of a fio job's writes (`serve:`,
//! docs/model/workloads.md §2d): the node's network links, and the order of a request's steps.
//!
//! Each copy of a serving job is one of the daemon's threads. Per request it:
//! 1. **receives** `bytes` over the node's inbound link;
//! 2. **checksums** them on a CPU (`handling` plus `bytes / checksum_rate`), a task on the CPU
//!    pool that competes with dm-crypt's threads and everybody else's work;
//! 3. **replicates**: sends the data to each of `replicas` peers over the outbound link, one copy
//!    after the other, then waits `ack` for their answers;
//! 4. **writes**: issues the request's `bytes / bs` writes (up to `iodepth` at a time) and waits
//!    for every one of them, fio's `thinktime_blocks` counted at issue;
//!
//! and only then takes the next request. Each direction of the link is a processor-sharing server
//! at a fixed rate, shared by every serving thread of the node: transfers in progress at once
//! split the wire equally.

use crate::engine::{SimDuration, SimTime};
use crate::model::base::config::{Scenario, WorkloadKind};

/// One direction of the node's network link: a processor-sharing server at `rate` bytes per
/// second. Every transfer in progress gets an equal share of the wire, as TCP flows through one
/// NIC roughly do, so a small request is not held behind a large one.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    rate: f64,
    /// Transfers in progress: the job that waits for each, and its bytes still to send.
    active: Vec<(u32, f64)>,
    /// When `active` was last brought up to date.
    last: SimTime,
    /// Bumped at every change of `active`: a scheduled completion of an older version is stale.
    version: u64,
    /// Bytes carried (for the books).
    bytes: u64,
}

/// A link's next completion to schedule: at `at`, valid while the link is at `version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkWake {
    /// When the first transfer in progress leaves the wire.
    pub at: SimTime,
    /// The link's version when this was computed.
    pub version: u64,
}

/// Bytes below which a transfer counts as sent (the rounding of its completion time).
const SENT: f64 = 1e-3;

impl Link {
    /// An idle link at `rate` bytes per second.
    pub fn new(rate: f64) -> Link {
        Link {
            rate,
            active: Vec::new(),
            last: SimTime::ZERO,
            version: 0,
            bytes: 0,
        }
    }

    /// Sends every transfer in progress its share of the wire from `last` to `now`.
    fn advance(&mut self, now: SimTime) {
        if !self.active.is_empty() {
            let secs = now.since(self.last).as_secs_f64();
            let each = self.rate * secs / self.active.len() as f64;
            for t in &mut self.active {
                t.1 -= each;
            }
        }
        self.last = now;
    }

    /// The next completion: the transfer with the fewest bytes left, at its share of the
    /// wire (whole nanoseconds, rounded up).
    fn wake(&self) -> Option<LinkWake> {
        let least = self.active.iter().map(|t| t.1).min_by(f64::total_cmp)?;
        let secs = least.max(0.0) * self.active.len() as f64 / self.rate;
        let ns = (secs * 1e9).ceil() as u64;
        Some(LinkWake {
            at: self.last + SimDuration::from_ns(ns),
            version: self.version,
        })
    }

    /// Job `job` starts sending `bytes` at `now`; returns the link's next completion.
    pub fn start(&mut self, now: SimTime, job: u32, bytes: u64) -> Option<LinkWake> {
        self.advance(now);
        self.active.push((job, bytes as f64));
        self.bytes += bytes;
        self.version += 1;
        self.wake()
    }

    /// A scheduled completion of `version` fires at `now`: the jobs whose transfers are
    /// sent, in the order they started, and the link's next completion. A stale version
    /// (the link changed since) finishes nothing and schedules nothing.
    pub fn complete(&mut self, now: SimTime, version: u64) -> (Vec<u32>, Option<LinkWake>) {
        if version != self.version {
            return (Vec::new(), None);
        }
        self.advance(now);
        let mut done = Vec::new();
        self.active.retain(|&(job, left)| {
            let sent = left <= SENT;
            if sent {
                done.push(job);
            }
            !sent
        });
        self.version += 1;
        (done, self.wake())
    }

    /// Transfers in progress.
    pub fn in_progress(&self) -> usize {
        self.active.len()
    }

    /// Bytes carried so far (counted when a transfer starts).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// The node's link in both directions.
#[derive(Debug, Clone, PartialEq)]
pub struct Links {
    /// Data arriving from clients and primaries.
    pub inbound: Link,
    /// Data sent to the replicas.
    pub outbound: Link,
}

impl Links {
    /// The links of `sc`'s node: at the rate its serving jobs give (the loader makes them
    /// agree), or idle links of 1 B/s that nothing uses when no job serves.
    pub fn for_scenario(sc: &Scenario) -> Links {
        let rate = sc
            .workloads
            .iter()
            .find_map(|w| match &w.kind {
                WorkloadKind::Fio(f) => f.serve.map(|s| s.link),
                _ => None,
            })
            .unwrap_or(1.0);
        Links {
            inbound: Link::new(rate),
            outbound: Link::new(rate),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_shares_the_wire_between_transfers_in_progress() {
        // 1 GB/s. A: 1 MB at 0. B: 0.25 MB at 0.5 ms, when A has 0.5 MB left.
        let mut l = Link::new(1e9);
        let t0 = SimTime::ZERO;
        let w = l.start(t0, 0, 1_000_000).unwrap();
        assert_eq!(w.at, t0 + SimDuration::from_ms(1));
        let half = t0 + SimDuration::from_us(500);
        let w2 = l.start(half, 1, 250_000).unwrap();
        // Each now gets 0.5 GB/s: B's 0.25 MB leaves at 1.0 ms, A's remaining 0.5 MB has
        // 0.25 MB left then and leaves alone at 1.25 ms.
        assert_eq!(w2.at, t0 + SimDuration::from_ms(1));
        // A's first wake is stale (the link changed).
        assert_eq!(l.complete(w.at, w.version), (Vec::new(), None));
        let (done, next) = l.complete(w2.at, w2.version);
        assert_eq!(done, vec![1]);
        let next = next.unwrap();
        assert_eq!(next.at, t0 + SimDuration::from_us(1250));
        let (done, next) = l.complete(next.at, next.version);
        assert_eq!((done, next, l.in_progress()), (vec![0], None, 0));
        assert_eq!(l.bytes(), 1_250_000);
    }
}
