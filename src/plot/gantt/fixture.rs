//! A hand-made trace for the Gantt chart's tests: a FIFO kcryptd encrypting a 512 KiB write
//! while reads wait behind it in the crypt queue.

use crate::engine::SimTime;
use crate::model::base::bio::Dir;
use crate::model::base::obs::Stage;
use crate::model::observe::trace::{
    Activity, Lane, LaneKind, Mark, Span, StageSpan, Trace, TracedBio,
};
use crate::plot::gantt::GanttOptions;

/// `ms` as an instant (to the µs).
pub(in crate::plot) fn at(ms: f64) -> SimTime {
    SimTime::from_ns((ms * 1e6).round() as u64)
}

/// A 40 ms window of a FIFO kcryptd on 2 CPUs: write #0 (512 KiB) is encrypted on kcryptd
/// from 101 to 121 ms while reads #2 and #3 and write #1 queue behind it in `crypt queue`;
/// then the reads are decrypted in turn and write #1 takes kcryptd to the window's end,
/// with read #4 waiting behind it. kswapd reclaims and sits in congestion_wait; a device
/// span of an earlier read (#5) lies before the window.
pub(in crate::plot) fn fixture() -> Trace {
    let names: [(&str, LaneKind); 11] = [
        ("kcryptd", LaneKind::Thread),
        ("kcryptd_io", LaneKind::Thread),
        ("job reader", LaneKind::Thread),
        ("flusher writer", LaneKind::Thread),
        ("CPUs", LaneKind::Cpus),
        ("kswapd", LaneKind::Kswapd),
        ("device ch0", LaneKind::Device),
        ("device ch1", LaneKind::Device),
        ("crypt queue", LaneKind::Queue),
        ("kcryptd_io queue", LaneKind::Queue),
        ("elevator", LaneKind::Queue),
    ];
    let lanes = names
        .iter()
        .map(|&(n, kind)| Lane {
            name: n.into(),
            kind,
        })
        .collect();
    use Stage::*;
    let bios: [Traced; 6] = [
        (
            Dir::Write,
            512 << 10,
            "flusher writer",
            97.9,
            Some(126.0),
            &[
                (Other, 3, 97.9, 98.0),
                (CryptQueue, 8, 98.0, 101.0),
                (CryptService, 0, 101.0, 121.0),
                (IoQueue, 9, 121.0, 121.1),
                (IoQueue, 1, 121.1, 121.4),
                (BlockQueue, 10, 121.4, 122.0),
                (Device, 6, 122.0, 126.0),
            ],
        ),
        (
            Dir::Write,
            512 << 10,
            "flusher writer",
            109.9,
            None,
            &[
                (Other, 3, 109.9, 110.0),
                (CryptQueue, 8, 110.0, 121.2),
                (CryptService, 0, 121.2, 140.0),
            ],
        ),
        (
            Dir::Read,
            4 << 10,
            "job reader",
            103.0,
            Some(121.1),
            &[
                (Other, 2, 103.0, 103.05),
                (BlockQueue, 10, 103.05, 103.2),
                (Device, 7, 103.2, 103.4),
                (CryptQueue, 8, 103.4, 121.0),
                (CryptService, 0, 121.0, 121.1),
            ],
        ),
        (
            Dir::Read,
            4 << 10,
            "job reader",
            106.0,
            Some(121.2),
            &[
                (Other, 2, 106.0, 106.05),
                (BlockQueue, 10, 106.05, 106.2),
                (Device, 7, 106.2, 106.4),
                (CryptQueue, 8, 106.4, 121.1),
                (CryptService, 0, 121.1, 121.2),
            ],
        ),
        (
            Dir::Read,
            4 << 10,
            "job reader",
            121.5,
            None,
            &[
                (Other, 2, 121.5, 121.55),
                (BlockQueue, 10, 121.55, 121.7),
                (Device, 6, 126.0, 126.2),
                (CryptQueue, 8, 126.2, 140.0),
            ],
        ),
        (
            Dir::Read,
            4 << 10,
            "job reader",
            89.0,
            Some(95.1),
            &[(Device, 7, 90.0, 95.0), (CryptService, 0, 95.0, 95.1)],
        ),
    ];
    let mut spans = Vec::new();
    let mut traced = Vec::new();
    for (i, (dir, bytes, origin, issued, done, path)) in bios.iter().enumerate() {
        let mut stages = Vec::new();
        for &(stage, lane, a, b) in *path {
            spans.push(Span {
                lane,
                start: at(a),
                end: at(b),
                what: Activity::Bio {
                    bio: i as u32,
                    stage,
                },
            });
            if stages.last().is_some_and(|s: &StageSpan| s.stage == stage) {
                stages.last_mut().unwrap().end = at(b);
            } else {
                stages.push(StageSpan {
                    stage,
                    start: at(a),
                    end: at(b),
                    piece: None,
                });
            }
        }
        traced.push(TracedBio {
            dir: *dir,
            sync: *dir == Dir::Read,
            bytes: *bytes,
            origin: origin.to_string(),
            parent: None,
            issued: at(*issued),
            completed: done.map(at),
            measured: true,
            stages,
        });
    }
    let other: [(u32, Activity, f64, f64); 9] = [
        (5, Activity::State("reclaiming"), 100.0, 112.0),
        (5, Activity::State("congestion_wait"), 112.0, 118.5),
        (5, Activity::State("reclaiming"), 118.5, 127.0),
        (3, Activity::State("pool sleep"), 124.0, 131.0),
        (4, Activity::Runnable(2), 99.0, 112.0),
        (4, Activity::Runnable(1), 112.0, 118.5),
        (4, Activity::Runnable(3), 118.5, 127.0),
        (4, Activity::Runnable(1), 127.0, 140.0),
        (5, Activity::State("reclaiming"), 80.0, 85.0),
    ];
    for (lane, what, a, b) in other {
        spans.push(Span {
            lane,
            start: at(a),
            end: at(b),
            what,
        });
    }
    spans.sort_by_key(|s| s.end);
    let mark = |ms: f64, lane: u32, what: &str| Mark {
        at: at(ms),
        lane,
        what: what.into(),
    };
    Trace {
        policy: "fifo".into(),
        from: at(100.0),
        to: at(140.0),
        cpus: 2,
        lanes,
        spans,
        bios: traced,
        marks: vec![
            mark(95.0, 5, "kswapd woke"),
            mark(
                118.5,
                5,
                "congestion_wait ended early (a request completed)",
            ),
            mark(125.0, 0, "GFP_ATOMIC order-0 failure"),
        ],
        truncated: None,
    }
}

/// A bio of the fixture: direction, bytes, origin, issued and completed (ms), and its path:
/// `(stage, lane, from ms, to ms)`.
type Traced = (
    Dir,
    u32,
    &'static str,
    f64,
    Option<f64>,
    &'static [(Stage, u32, f64, f64)],
);

/// The fixture's options: a title and read #2 highlighted.
pub(in crate::plot) fn opts() -> GanttOptions {
    GanttOptions {
        title: "two-queue, policy fifo: 100-140 ms".into(),
        highlight: Some(2),
        width: None,
    }
}

/// The fixture with `n` more reads waiting in the elevator from 130 ms on.
pub(in crate::plot) fn deep_elevator(n: u32) -> Trace {
    let mut t = fixture();
    for k in 0..n {
        let stage = crate::model::base::obs::Stage::BlockQueue;
        t.spans.push(crate::model::observe::trace::Span {
            lane: 10,
            start: at(130.0 + f64::from(k) * 0.5),
            end: at(139.0),
            what: crate::model::observe::trace::Activity::Bio { bio: 4, stage },
        });
    }
    t
}
