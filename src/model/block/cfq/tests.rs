//! CFQ's rules run by hand: each test feeds requests and completions and checks what CFQ
//! dispatches, as the kernel's `cfq-iosched.c` would.

use super::*;
use crate::model::base::config::{Elevator, KernelVersion, QueueMode};
use crate::model::world::Event;

fn cfq(v: KernelVersion, idle_ms: u64) -> Cfq {
    let mut k = KernelConfig::new(1000);
    k.version = v;
    let cfg = BlockConfig {
        mode: QueueMode::Legacy,
        nr_requests: 128,
        elevator: Elevator::Cfq,
        plug: false,
        unplug_threshold: 4,
        low_latency: v.cfq().has_low_latency,
        cfq_slice_sync: k.hz_div(10),
        cfq_slice_async: k.hz_div(25),
        cfq_slice_idle: SimDuration::from_ms(idle_ms),
        cfq_quantum: 4,
        cfq: v.cfq(),
        ncq_capable: true,
        mq: Default::default(),
    };
    Cfq::new(&cfg, &k)
}

fn ms(t: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_ms(t)
}

/// Dispatches everything CFQ releases at `t`.
fn drain(c: &mut Cfq, s: &mut Scheduler<Event>, t: SimTime) -> Vec<BioId> {
    std::iter::from_fn(|| c.next(s, t)).collect()
}

/// 2.6.32: after a sync completion one async request at a time runs until a sync slice
/// (100 ms) has passed, then the depth grows one per slice up to the quantum.
#[test]
fn the_2_6_32_ramp_counts_from_the_last_sync_completion() {
    let mut s = Scheduler::new();
    let mut c = cfq(KernelVersion::V2_6_32, 0);
    c.insert(1, true, None, (0, 8), &mut s, ms(0));
    assert_eq!(drain(&mut c, &mut s, ms(0)), [1]);
    for id in 10..30 {
        c.insert(id, false, None, (1000 * u64::from(id), 8), &mut s, ms(1));
    }
    // Sync in flight: async waits.
    assert!(drain(&mut c, &mut s, ms(1)).is_empty());
    c.completed(1, true, &mut s, ms(5));
    assert_eq!(drain(&mut c, &mut s, ms(5)), [10]);
    assert!(
        drain(&mut c, &mut s, ms(50)).is_empty(),
        "depth 1 until 100 ms"
    );
    c.completed(10, false, &mut s, ms(60));
    assert_eq!(drain(&mut c, &mut s, ms(60)), [11]);
    assert!(
        drain(&mut c, &mut s, ms(105)).is_empty(),
        "depth 1 after 100 ms"
    );
    assert!(drain(&mut c, &mut s, ms(204)).is_empty());
    assert_eq!(drain(&mut c, &mut s, ms(205)), [12], "depth 2 after 200 ms");
    assert_eq!(drain(&mut c, &mut s, ms(305)), [13], "depth 3 after 300 ms");
    assert_eq!(drain(&mut c, &mut s, ms(405)), [14], "depth 4 after 400 ms");
    // The one busy queue goes past the quantum, still held to the ramp's depth.
    assert_eq!(drain(&mut c, &mut s, ms(905)), [15, 16, 17, 18, 19]);
    assert_eq!(c.in_driver[ASYNC], 9);
}

/// 2.6.31 has no ramp: with nothing sync in flight async runs at once, to the quantum while
/// another queue has requests, to 4 × quantum while it is the one busy queue.
#[test]
fn the_2_6_31_async_queue_waits_only_for_sync_in_flight() {
    let mut s = Scheduler::new();
    let mut c = cfq(KernelVersion::V2_6_31, 0);
    assert!(!c.cfg.low_latency);
    c.insert(1, true, None, (0, 8), &mut s, ms(0));
    assert_eq!(drain(&mut c, &mut s, ms(0)), [1]);
    for id in 10..40 {
        c.insert(id, false, None, (0, 8), &mut s, ms(1));
    }
    assert!(drain(&mut c, &mut s, ms(1)).is_empty());
    c.completed(1, true, &mut s, ms(2));
    assert_eq!(drain(&mut c, &mut s, ms(2)), (10..26).collect::<Vec<_>>());
}

/// `cfq_may_dispatch`: a queue at its quantum goes on only while no other queue has requests
/// waiting: to 4 × quantum up to 2.6.32, without limit in 2.6.33.
#[test]
fn only_the_one_busy_queue_goes_past_the_quantum() {
    for (v, alone) in [(KernelVersion::V2_6_32, 16), (KernelVersion::V2_6_33, 30)] {
        for (other, want) in [(true, 4), (false, alone)] {
            let mut s = Scheduler::new();
            let mut c = cfq(v, 0);
            c.cfg.low_latency = false;
            for id in 0..30 {
                let at = (8 * u64::from(id), 8);
                c.insert(id, true, Some(ActorId(1)), at, &mut s, ms(0));
            }
            if other {
                c.insert(99, true, Some(ActorId(2)), (0, 8), &mut s, ms(0));
            }
            let got = drain(&mut c, &mut s, ms(0)).len();
            assert_eq!(got, want, "{v:?}: another busy queue: {other}");
        }
    }
}

/// Read `i` of context 1, 1 GiB from the last: every such read seeks.
fn seeky_read(c: &mut Cfq, s: &mut Scheduler<Event>, i: u64, t: SimTime) {
    c.insert(
        i as BioId,
        true,
        Some(ActorId(1)),
        ((i % 2) * (1 << 21), 8),
        s,
        t,
    );
}

/// `cfq_update_hw_tag`: every 51st completion with more than 5 requests queued or in the
/// driver re-estimates `hw_tag` from the deepest the driver has been since the last estimate.
/// A seeky reader with one request in flight at a time, while writes wait, never takes the
/// driver to 5: 2.6.32 with `low_latency` off then takes the disk as not queueing, and the
/// reader, seeky as it is, gets its idle window back.
#[test]
fn a_driver_never_five_deep_clears_hw_tag_and_gives_seeky_readers_their_idle_window() {
    let mut s = Scheduler::new();
    let mut c = cfq(KernelVersion::V2_6_32, 8);
    c.cfg.low_latency = false;
    for id in 1000..1010 {
        c.insert(id, false, None, (0, 8), &mut s, ms(0));
    }
    let mut estimates = Vec::new();
    for i in 0..120u64 {
        // Each read is queued as the last completes (no think time).
        seeky_read(&mut c, &mut s, i, ms(i));
        assert_eq!(
            drain(&mut c, &mut s, ms(i)),
            [i as BioId],
            "the async queue waits"
        );
        if let Some(hw_tag) = c.completed(i as BioId, true, &mut s, ms(i + 1)) {
            estimates.push((i, hw_tag));
        }
    }
    assert_eq!(estimates, [(50, false), (101, false)]);
    assert_eq!(c.queued_books(), (10, 10), "ten writes wait");
    let q = c.queue_of(true, Some(ActorId(1)), ms(120));
    assert!(c.queues[q].seek.seeky());
    assert!(
        c.queues[q].idle_window,
        "not queueing: the seeky reader idles"
    );
    // The same with the driver 5 deep at one completion keeps hw_tag.
    let mut c = cfq(KernelVersion::V2_6_32, 8);
    c.cfg.low_latency = false;
    for id in 2000..2005 {
        c.insert(
            id,
            true,
            Some(ActorId(1)),
            (8 * u64::from(id - 2000), 8),
            &mut s,
            ms(0),
        );
    }
    assert_eq!(drain(&mut c, &mut s, ms(0)).len(), 5, "one busy sync queue");
    for id in 1000..1010 {
        c.insert(id, false, None, (0, 8), &mut s, ms(0));
    }
    assert_eq!(c.completed(2000, true, &mut s, ms(1)), None);
    for id in 2001..2005 {
        c.completed(id, true, &mut s, ms(1));
    }
    let mut last = None;
    for i in 0..60u64 {
        seeky_read(&mut c, &mut s, i, ms(2 + i));
        drain(&mut c, &mut s, ms(2 + i));
        last = c.completed(i as BioId, true, &mut s, ms(3 + i)).or(last);
    }
    assert_eq!(last, Some(true), "the peak of 5 counts");
}

/// 2.6.32 drains async requests before a sync queue with an idle window dispatches;
/// 2.6.31 sends the sync request at once.
#[test]
fn sync_io_waits_for_the_async_drain_from_2_6_32() {
    for (v, first) in [
        (KernelVersion::V2_6_32, vec![]),
        (KernelVersion::V2_6_31, vec![2]),
    ] {
        let mut s = Scheduler::new();
        let mut c = cfq(v, 8);
        c.insert(1, false, None, (0, 8), &mut s, ms(0));
        assert_eq!(drain(&mut c, &mut s, ms(0)), [1]);
        c.insert(2, true, None, (0, 8), &mut s, ms(1));
        assert_eq!(drain(&mut c, &mut s, ms(1)), first, "{v:?}");
        c.completed(1, false, &mut s, ms(3));
        let rest = drain(&mut c, &mut s, ms(3));
        assert_eq!(rest.len() + first.len(), 1, "{v:?}");
    }
}

/// 2.6.33 ramps from the last *delayed* sync request: a fast read does not restart the
/// ramp, one that took HZ/8 (125 ms) from allocation to completion does.
#[test]
fn the_2_6_33_ramp_counts_from_the_last_delayed_sync_request() {
    let mut s = Scheduler::new();
    let mut c = cfq(KernelVersion::V2_6_33, 0);
    // At start the ramp is as if the last delayed request were HZ ago: depth 10, and the one
    // busy queue is not held to the quantum.
    for id in 10..40 {
        c.insert(id, false, None, (0, 8), &mut s, ms(0));
    }
    assert_eq!(drain(&mut c, &mut s, ms(0)).len(), 10);
    for id in 10..20 {
        c.completed(id, false, &mut s, ms(1));
    }
    // A fast read (5 ms) leaves the ramp alone.
    c.insert(1, true, None, (0, 8), &mut s, ms(1));
    assert_eq!(drain(&mut c, &mut s, ms(1)), [1]);
    c.completed(1, true, &mut s, ms(6));
    assert_eq!(drain(&mut c, &mut s, ms(6)).len(), 10);
    for id in 20..30 {
        c.completed(id, false, &mut s, ms(7));
    }
    // A read that started 130 ms before it completed is delayed: depth 1 again.
    c.insert(2, true, None, (0, 8), &mut s, ms(7));
    assert_eq!(drain(&mut c, &mut s, ms(7)), [2]);
    c.completed(2, true, &mut s, ms(137));
    assert_eq!(drain(&mut c, &mut s, ms(137)), [30]);
    assert!(drain(&mut c, &mut s, ms(336)).is_empty());
    assert_eq!(
        drain(&mut c, &mut s, ms(337)),
        [31],
        "depth 2, 200 ms after it"
    );
}

/// Seeky sync I/O on an NCQ disk: 2.6.31 drops the idle window (no drain, no idling),
/// 2.6.32 with low_latency keeps it, 2.6.32 without drops it.
#[test]
fn seeky_queues_keep_idling_only_with_low_latency() {
    let mut s = Scheduler::<Event>::new();
    for (v, ll, keeps) in [
        (KernelVersion::V2_6_31, false, false),
        (KernelVersion::V2_6_32, true, true),
        (KernelVersion::V2_6_32, false, false),
        (KernelVersion::V2_6_33, true, true),
    ] {
        let mut c = cfq(v, 8);
        c.cfg.low_latency = ll;
        for i in 0..100u64 {
            // 1 GiB apart: a seek every time; all at once, so the think time stays 0.
            c.insert(
                i as BioId,
                true,
                None,
                ((i % 2) * (1 << 21), 8),
                &mut s,
                ms(0),
            );
        }
        let q = &c.queues[1];
        assert!(q.seek.seeky() && q.seek.valid());
        assert_eq!(q.idle_window, keeps, "{v:?} low_latency {ll}");
    }
    let mut c = cfq(KernelVersion::V2_6_31, 8);
    let q = c.queue_of(true, None, ms(0));
    assert!(c.queues[q].idle_window, "a new queue idles");
}

/// 2.6.33's target latency scales slices only when the busy queues' sync slices exceed
/// 300 ms: never with qsim's two queues at the default 100 ms, but with 200 ms slices.
#[test]
fn target_latency_scales_long_slices_in_2_6_33() {
    let mut s = Scheduler::<Event>::new();
    let mut c = cfq(KernelVersion::V2_6_33, 8);
    c.insert(1, true, None, (0, 8), &mut s, ms(0));
    c.insert(2, false, None, (0, 8), &mut s, ms(0));
    c.busy_avg = 2;
    assert_eq!(c.new_slice(1), SimDuration::from_ms(100));
    c.cfg.cfq_slice_sync = SimDuration::from_ms(200);
    // expect 2 × 200 = 400 ms > 300 ms: 200 × 300 / 400 = 150 ms.
    assert_eq!(c.new_slice(1), SimDuration::from_ms(150));
    let mut old = cfq(KernelVersion::V2_6_32, 8);
    old.cfg.cfq_slice_sync = SimDuration::from_ms(200);
    old.insert(1, true, None, (0, 8), &mut s, ms(0));
    old.insert(2, false, None, (0, 8), &mut s, ms(0));
    assert_eq!(old.new_slice(1), SimDuration::from_ms(200));
}

const A: Option<ActorId> = Some(ActorId(1));
const B: Option<ActorId> = Some(ActorId(2));

/// Two sequential readers with idle windows take the disk by turns: A keeps it for its
/// 100 ms slice while B waits (CFQ idles for A's next request), then B has it, and B's idle
/// wait holds A off until the idle timer ends B's slice.
#[test]
fn two_sync_readers_with_idle_windows_alternate_by_slices() {
    let mut s = Scheduler::new();
    let mut c = cfq(KernelVersion::V2_6_32, 8);
    c.insert(1, true, A, (0, 128), &mut s, ms(0));
    assert_eq!(drain(&mut c, &mut s, ms(0)), [1]);
    c.insert(2, true, B, (1 << 21, 128), &mut s, ms(1));
    assert!(
        drain(&mut c, &mut s, ms(1)).is_empty(),
        "A's read in flight"
    );
    c.completed(1, true, &mut s, ms(2));
    assert!(c.idle_timer.is_some(), "A idles for its next read");
    assert!(drain(&mut c, &mut s, ms(2)).is_empty());
    for k in 0..33u32 {
        let t = 3 + 3 * u64::from(k);
        c.insert(
            10 + k,
            true,
            A,
            (128 * u64::from(k + 1), 128),
            &mut s,
            ms(t),
        );
        assert_eq!(
            drain(&mut c, &mut s, ms(t)),
            [10 + k],
            "A's slice at {t} ms"
        );
        c.completed(10 + k, true, &mut s, ms(t + 1));
    }
    // A's slice (100 ms) is used up: B's turn.
    assert_eq!(drain(&mut c, &mut s, ms(100)), [2]);
    c.insert(50, true, A, (128 * 40, 128), &mut s, ms(101));
    assert!(
        drain(&mut c, &mut s, ms(101)).is_empty(),
        "B's read in flight"
    );
    c.completed(2, true, &mut s, ms(105));
    assert!(
        drain(&mut c, &mut s, ms(105)).is_empty(),
        "B idles though A waits"
    );
    c.idle_timer();
    assert_eq!(drain(&mut c, &mut s, ms(113)), [50]);
}

/// Per-context seek statistics: a seeky reader loses its idle window (2.6.32 without
/// low_latency, NCQ) and idles only CFQ_MIN_TT, while a sequential reader beside it keeps
/// its own; the same two streams merged into one queue would look seeky.
#[test]
fn a_seeky_reader_loses_its_idle_window_without_affecting_the_other() {
    let mut s = Scheduler::<Event>::new();
    let mut c = cfq(KernelVersion::V2_6_32, 8);
    c.cfg.low_latency = false;
    let mut merged = cfq(KernelVersion::V2_6_32, 8);
    merged.cfg.low_latency = false;
    for i in 0..100u32 {
        let seeky = (u64::from(i) % 2) * (1 << 21);
        let sequential = (1 << 22) + 128 * u64::from(i);
        c.insert(2 * i, true, A, (seeky, 8), &mut s, ms(0));
        c.insert(2 * i + 1, true, B, (sequential, 128), &mut s, ms(0));
        merged.insert(2 * i, true, None, (128 * u64::from(i), 128), &mut s, ms(0));
        merged.insert(2 * i + 1, true, None, (sequential, 128), &mut s, ms(0));
    }
    let (qa, qb) = (c.queue_of(true, A, ms(0)), c.queue_of(true, B, ms(0)));
    assert!(c.queues[qa].seek.seeky() && !c.queues[qa].idle_window);
    assert!(!c.queues[qb].seek.seeky() && c.queues[qb].idle_window);
    assert_eq!(c.idle_len(qa), SimDuration::from_ms(2));
    assert_eq!(c.idle_len(qb), SimDuration::from_ms(8));
    let q = merged.queue_of(true, None, ms(0));
    assert!(
        merged.queues[q].seek.seeky(),
        "two sequential streams interleaved"
    );
}

/// The async queue waits while any sync queue has a request in the driver.
#[test]
fn the_async_queue_waits_while_any_sync_request_is_in_flight() {
    let mut s = Scheduler::new();
    let mut c = cfq(KernelVersion::V2_6_31, 0);
    c.insert(1, true, A, (0, 8), &mut s, ms(0));
    c.insert(2, true, B, (1 << 20, 8), &mut s, ms(0));
    c.insert(3, false, None, (1 << 22, 8), &mut s, ms(0));
    // Without idling, A's slice ends as its queue empties and B's starts.
    assert_eq!(drain(&mut c, &mut s, ms(0)), [1, 2]);
    c.completed(1, true, &mut s, ms(1));
    assert!(
        drain(&mut c, &mut s, ms(1)).is_empty(),
        "B's read in flight"
    );
    c.completed(2, true, &mut s, ms(2));
    assert_eq!(drain(&mut c, &mut s, ms(2)), [3]);
}

/// A scripted mix of sync and async requests with idling: the order CFQ dispatches in.
fn scripted(ctx: Option<ActorId>) -> Vec<(u64, BioId)> {
    let mut s = Scheduler::new();
    let mut c = cfq(KernelVersion::V2_6_32, 8);
    let (mut out, mut flight) = (Vec::new(), Vec::<(u64, BioId, bool)>::new());
    let mut fire: Option<SimTime> = None;
    let mut next: BioId = 0;
    for t in 0..600u64 {
        let now = ms(t);
        if fire.is_some_and(|f| f <= now) {
            c.idle_timer();
            fire = None;
        }
        let done: Vec<_> = flight.iter().filter(|&&(d, ..)| d <= t).copied().collect();
        flight.retain(|&(d, ..)| d > t);
        for (_, id, sync) in done {
            c.completed(id, sync, &mut s, now);
        }
        for (every, sync) in [(7, true), (5, false)] {
            if t % every == 0 {
                let far = if t % 49 == 0 { 1 << 22 } else { 0 };
                c.insert(
                    next,
                    sync,
                    ctx.filter(|_| sync),
                    (far + 128 * t, 128),
                    &mut s,
                    now,
                );
                next += 1;
            }
        }
        for id in drain(&mut c, &mut s, now) {
            let sync = c.sync_started.iter().any(|&(b, ..)| b == id);
            out.push((t, id));
            flight.push((t + 3, id, sync));
        }
        match (c.idle_timer, c.active) {
            (Some(_), Some(a)) if fire.is_none() => {
                fire = Some((now + c.idle_len(a)).min(c.slice_end.max(now)));
            }
            (None, _) => fire = None,
            _ => {}
        }
    }
    out
}

/// One process submitting its own I/O is served exactly as the crypt threads' shared
/// queue was: the per-context queues change nothing with a single context.
#[test]
fn one_process_behaves_as_the_shared_sync_queue() {
    let own = scripted(A);
    assert!(own.len() > 100, "{} dispatched", own.len());
    assert_eq!(own, scripted(None));
}

/// Three readers with backlogs share the disk round-robin by slices: each becomes busy
/// `(busy − 1) × 80 ms` after the one before on the service tree, and a queue expired with
/// requests left goes back behind the others.
#[test]
fn busy_sync_queues_take_turns_in_service_tree_order() {
    let mut s = Scheduler::new();
    let mut c = cfq(KernelVersion::V2_6_32, 8);
    let ctxs = [A, B, Some(ActorId(3))];
    for (i, &ctx) in ctxs.iter().enumerate() {
        for k in 0..1000u64 {
            let id = (1000 * i as u64 + k) as BioId;
            c.insert(
                id,
                true,
                ctx,
                ((i as u64) << 22 | (128 * k), 128),
                &mut s,
                ms(0),
            );
        }
    }
    let keys: Vec<i64> = (1..4).map(|q| c.queues[q].rb_key.0).collect();
    assert_eq!(keys, [0, 80, 160], "cfq_slice_offset at HZ=1000");
    let (mut owners, mut flight) = (Vec::new(), Vec::new());
    for t in 0..450u64 {
        for id in flight.drain(..) {
            c.completed(id, true, &mut s, ms(t));
        }
        for id in drain(&mut c, &mut s, ms(t)) {
            let owner = id / 1000;
            if owners.last() != Some(&owner) {
                owners.push(owner);
            }
            flight.push(id);
        }
    }
    assert_eq!(owners, [0, 1, 2, 0, 1]);
}

/// `cfq_choose_req` by hand, with the kernel's head: the end of the last request handed
/// to the driver *before* the one being dispatched (`last_position` moves when a request
/// is activated, after its successor was chosen). From 20,008, 21,500 lies 1,492 sectors
/// ahead and 19,000 lies 1,008 behind (2,016 with the back-seek penalty): 21,500 first.
/// Its successor, chosen from 20,008: 19,000 (2,016) against 60,000 (39,992 ahead). Then,
/// from 21,508: 60,000 (38,492) against 100 (21,408 behind, 42,816); and 100 last.
/// Arrival order would be 19,000, 21,500, 60,000, 100.
#[test]
fn a_queue_is_served_in_one_way_elevator_order_with_short_back_seeks() {
    for v in [KernelVersion::V2_6_31, KernelVersion::V2_6_32] {
        let mut s = Scheduler::new();
        let mut c = cfq(v, 0);
        c.insert(1, true, None, (20_000, 8), &mut s, ms(0));
        assert_eq!(drain(&mut c, &mut s, ms(0)), [1]);
        c.completed(1, true, &mut s, ms(1));
        for (id, pos) in [(2, 19_000), (3, 21_500), (4, 60_000), (5, 100)] {
            c.insert(id, true, None, (pos, 8), &mut s, ms(1));
        }
        assert_eq!(drain(&mut c, &mut s, ms(1)), [3, 2, 4, 5], "{v:?}");
    }
    // A request beyond the 16 MiB back-seek limit waits for everything ahead of the head.
    let mut s = Scheduler::new();
    let mut c = cfq(KernelVersion::V2_6_32, 0);
    c.insert(1, true, None, (100_000, 8), &mut s, ms(0));
    assert_eq!(drain(&mut c, &mut s, ms(0)), [1]);
    c.completed(1, true, &mut s, ms(1));
    c.insert(
        2,
        true,
        None,
        (100_008 - 2 * 16 * 1024 - 1, 8),
        &mut s,
        ms(1),
    );
    c.insert(3, true, None, (900_000, 8), &mut s, ms(1));
    assert_eq!(drain(&mut c, &mut s, ms(1)), [3, 2]);
}

/// `cfq_check_fifo`: the first dispatch of a slice takes the oldest request once it has
/// waited the sync FIFO expiry (HZ/8, 125 ms), wherever it lies. A (200,000) waits while
/// four nearer requests fill the quantum; C (6,000), F (10) and D (199,000) arrive; at
/// 200 ms a new slice dispatches A first. Then the versions differ: 2.6.31 keeps the next
/// request chosen at insertion (C, nearest ahead of the head at 4,968), and from A's end
/// D (1,008 behind) before F (too far behind: it wraps); 2.6.32 re-chooses the next from
/// A's neighbours with the head not yet moved (the lowest, F, a 4,958-sector back seek,
/// against D, 194,032 ahead), then C, then D.
#[test]
fn an_expired_request_goes_first_in_a_new_slice_and_2_6_32_rechooses_the_next() {
    for (v, order) in [
        (KernelVersion::V2_6_31, [10, 11, 12, 13]),
        (KernelVersion::V2_6_32, [10, 13, 11, 12]),
    ] {
        let mut s = Scheduler::new();
        let mut c = cfq(v, 0);
        // A waiting write keeps the reader from being the one busy queue (held to the quantum).
        c.insert(99, false, None, (0, 8), &mut s, ms(0));
        c.insert(10, true, None, (200_000, 8), &mut s, ms(0));
        for (id, pos) in [(1, 4_936), (2, 4_944), (3, 4_952), (4, 4_960)] {
            c.insert(id, true, None, (pos, 8), &mut s, ms(0));
        }
        assert_eq!(drain(&mut c, &mut s, ms(0)), [1, 2, 3, 4], "{v:?}");
        for (id, pos) in [(11, 6_000), (13, 10), (12, 199_000)] {
            c.insert(id, true, None, (pos, 8), &mut s, ms(10));
        }
        assert!(
            drain(&mut c, &mut s, ms(10)).is_empty(),
            "the quantum is full"
        );
        for id in 1..=4 {
            c.completed(id, true, &mut s, ms(200));
        }
        assert_eq!(drain(&mut c, &mut s, ms(200)), order, "{v:?}");
    }
}

/// Before its expiry the oldest request waits its turn in sector order.
#[test]
fn an_unexpired_oldest_request_waits_its_turn_in_sector_order() {
    let mut s = Scheduler::new();
    let mut c = cfq(KernelVersion::V2_6_32, 0);
    c.insert(1, true, None, (500_000, 8), &mut s, ms(0));
    c.insert(2, true, None, (8, 8), &mut s, ms(0));
    assert_eq!(drain(&mut c, &mut s, ms(0)), [2, 1]);
    for id in [1, 2] {
        c.completed(id, true, &mut s, ms(1));
    }
    // A new slice at 1 ms (the queue ran empty and expired): checked, nothing expired.
    c.insert(3, true, None, (900_000, 8), &mut s, ms(1));
    assert_eq!(drain(&mut c, &mut s, ms(1)), [3]);
    c.insert(4, true, None, (100, 8), &mut s, ms(2));
    c.insert(5, true, None, (900_100, 8), &mut s, ms(2));
    c.completed(3, true, &mut s, ms(3));
    // Same slice (ends at 101 ms); 4 is older than 5 but not expired: 5 lies ahead.
    assert_eq!(drain(&mut c, &mut s, ms(3)), [5, 4]);
}

/// One reader from `from` ms: each request completes 1 ms after it arrives, and the next
/// arrives `think` ms after that (HZ=1000). Returns when the next would arrive.
fn think_rounds(c: &mut Cfq, s: &mut Scheduler<Event>, from: u64, rounds: u64, think: u64) -> u64 {
    let mut t = from;
    for i in from..from + rounds {
        c.insert(i as BioId, true, None, (i * 8, 8), s, ms(t));
        assert_eq!(drain(c, s, ms(t)), [i as BioId]);
        c.completed(i as BioId, true, s, ms(t + 1));
        c.idle_timer();
        t += 1 + think;
    }
    t
}

/// `cfq_update_io_thinktime` and `cfq_update_idle_window`: once its think time counts, a
/// context whose mean think time exceeds `slice_idle` (8 ms) loses its idle window, one that
/// thinks 5 ms keeps it, on both kernels; each sample is capped at twice `slice_idle`.
#[test]
fn a_context_that_thinks_longer_than_slice_idle_loses_its_idle_window() {
    for v in [KernelVersion::V2_6_31, KernelVersion::V2_6_32] {
        for (think, idles) in [(5, true), (12, false), (500, false)] {
            let (mut s, mut c) = (Scheduler::new(), cfq(v, 8));
            // `sample_valid`: the decaying count (256 per sample) passes 80 at the third.
            let t = think_rounds(&mut c, &mut s, 0, 2, think);
            assert!(!c.queues[1].think.valid() && c.queues[1].idle_window);
            think_rounds(&mut c, &mut s, t, 100, think);
            let tt = c.queues[1].think;
            assert!(
                tt.valid() && tt.mean == think.min(16),
                "{v:?} {think}: {tt:?}"
            );
            assert_eq!(c.queues[1].idle_window, idles, "{v:?} think {think} ms");
        }
    }
}

/// `cfq_arm_slice_timer` (2.6.32): a context thinking 5 ms on average is not waited for when
/// less than that is left of its slice; 2.6.31 arms the timer (up to the slice's end).
#[test]
fn linux_2_6_32_does_not_idle_past_the_slice_for_a_slow_thinker() {
    for (v, arms) in [
        (KernelVersion::V2_6_31, true),
        (KernelVersion::V2_6_32, false),
    ] {
        let (mut s, mut c) = (Scheduler::new(), cfq(v, 8));
        let t = think_rounds(&mut c, &mut s, 0, 100, 5);
        // A new slice starts at t; its request completes 97 ms in, 3 ms before the end.
        c.insert(500, true, None, (10_000, 8), &mut s, ms(t));
        assert_eq!(drain(&mut c, &mut s, ms(t)), [500]);
        c.completed(500, true, &mut s, ms(t + 97));
        assert_eq!(c.idle_timer.is_some(), arms, "{v:?}");
    }
}

/// `cfq_rq_enqueued` moves an io context's statistics on every request of it, async ones
/// included. A process's own swap-outs (async, 1 GiB from its sequential reads) make it seeky
/// before 2.6.33, so an NCQ disk drops its idle window at its next read (2.6.31); the same
/// writes from kswapd (no context of the reader's) leave it idling; 2.6.33 keeps the seek
/// statistics per queue, so the reader's own writes leave its sync queue sequential.
#[test]
fn a_processs_own_async_writes_move_its_context_statistics() {
    let mut s = Scheduler::<Event>::new();
    let reader = Some(ActorId(7));
    for (v, writer, seeky) in [
        (KernelVersion::V2_6_31, reader, true),
        (KernelVersion::V2_6_31, None, false),
        (KernelVersion::V2_6_33, reader, false),
    ] {
        let mut c = cfq(v, 8);
        for i in 0..20u64 {
            // All at 0 ms, so the think time stays 0: only the seek statistics move.
            let (id, pos) = (2 * i as BioId, i * 8);
            c.insert(id, true, reader, (pos, 8), &mut s, ms(0));
            c.insert(id + 1, false, writer, ((1 << 21) + pos, 8), &mut s, ms(0));
        }
        c.insert(40, true, reader, (160, 8), &mut s, ms(0));
        let q = &c.queues[1];
        assert_eq!(q.ctx, reader);
        assert!(q.seek.valid());
        assert_eq!(q.seek.seeky(), seeky, "{v:?} writes from {writer:?}");
        if v == KernelVersion::V2_6_31 {
            assert_eq!(q.idle_window, !seeky, "{v:?} writes from {writer:?}");
        }
    }
    // A reader whose read completes at 1 ms and whose own swap-out comes at 50 ms: the write
    // is a think-time sample of 49 ms, capped at twice `slice_idle` (16). After the read's
    // own sample of 0: samples (7 × 32 + 256) / 8 = 60, total (7 × 0 + 256 × 16) / 8 = 512.
    let (mut s, mut c) = (Scheduler::new(), cfq(KernelVersion::V2_6_32, 8));
    c.insert(1, true, reader, (0, 8), &mut s, ms(0));
    assert_eq!(drain(&mut c, &mut s, ms(0)), [1]);
    c.completed(1, true, &mut s, ms(1));
    c.insert(2, false, reader, (1 << 21, 8), &mut s, ms(50));
    let q = &c.queues[1];
    assert_eq!((q.think.samples, q.think.total), (60, 512));
    // kswapd's write (no context) moves nothing and creates no queue.
    c.insert(3, false, None, (1 << 21, 8), &mut s, ms(60));
    assert_eq!(c.queues.len(), 2);
    assert_eq!(c.queues[1].think.total, 512);
    // A context whose first request is async gets its statistics in an empty sync queue.
    c.insert(4, false, Some(ActorId(8)), (0, 8), &mut s, ms(70));
    assert!(c.queues.len() == 3 && c.queues[2].sync && c.queues[2].fifo.is_empty());
}

/// The kernels with `cfq_close_cooperator` (2.6.30 to 2.6.32) and the one without it.
const COOP_KERNELS: [(KernelVersion, bool); 4] = [
    (KernelVersion::V2_6_30, true),
    (KernelVersion::V2_6_31, true),
    (KernelVersion::V2_6_32, true),
    (KernelVersion::V2_6_33, false),
];

/// `cfq_select_queue`: the active sync queue, empty with its read in flight, hands the disk
/// to the async queue whose next write lies within `CIC_SEEK_THR` (8,192 sectors, the context
/// having too few seek samples) of the head, marking it a cooperator; at the completion there
/// is then nothing to idle for. A write farther away, or 2.6.33, leaves the reader idling.
#[test]
fn an_empty_queue_hands_the_disk_to_a_close_cooperator_instead_of_idling() {
    for (v, coop) in COOP_KERNELS {
        for (gap, close) in [(100, true), (8_192, true), (8_193, false)] {
            let mut s = Scheduler::new();
            let mut c = cfq(v, 8);
            c.insert(1, true, None, (1_000, 8), &mut s, ms(0));
            assert_eq!(drain(&mut c, &mut s, ms(0)), [1]);
            assert_eq!(c.last_position, 1_008);
            c.insert(2, false, None, (1_008 + gap, 8), &mut s, ms(0));
            let jumps = coop && close;
            // Sync I/O in flight: the write waits either way.
            assert!(drain(&mut c, &mut s, ms(0)).is_empty());
            assert_eq!(c.coop_counts(), [u64::from(jumps), 0], "{v:?} gap {gap}");
            assert_eq!(c.active == Some(ASYNC_Q), jumps);
            assert_eq!(c.queues[ASYNC_Q].coop, jumps);
            c.completed(1, true, &mut s, ms(1));
            assert_eq!(c.idle_timer.is_some(), !jumps, "{v:?} gap {gap}: idling");
            let want: &[BioId] = if jumps { &[2] } else { &[] };
            assert_eq!(drain(&mut c, &mut s, ms(1)), want, "{v:?} gap {gap}");
        }
    }
}

/// `cfq_should_preempt`'s last rule: while the active queue idles for its next request, a
/// request of another queue within the active context's seek distance of the head ends the
/// slice, and that queue is served next (`cfq_preempt_queue`). 2.6.32 marks it a cooperator
/// (kept through its selection by `coop_preempt`); 2.6.30 and 2.6.31 clear the mark when it
/// is selected. 2.6.33 keeps idling.
#[test]
fn a_close_request_preempts_an_idling_queue() {
    const A: Option<ActorId> = Some(ActorId(1));
    const B: Option<ActorId> = Some(ActorId(2));
    for (v, coop) in COOP_KERNELS {
        for (at, close) in [(1_058, true), (1 << 21, false)] {
            let mut s = Scheduler::new();
            let mut c = cfq(v, 8);
            c.insert(1, true, A, (1_000, 8), &mut s, ms(0));
            assert_eq!(drain(&mut c, &mut s, ms(0)), [1]);
            c.completed(1, true, &mut s, ms(1));
            assert!(c.idle_timer.is_some(), "{v:?}: A idles");
            c.insert(2, true, B, (at, 8), &mut s, ms(2));
            let preempts = coop && close;
            assert_eq!(c.coop_counts(), [0, u64::from(preempts)], "{v:?} at {at}");
            assert_eq!(c.idle_timer.is_some(), !preempts);
            let want: &[BioId] = if preempts { &[2] } else { &[] };
            assert_eq!(drain(&mut c, &mut s, ms(2)), want, "{v:?} at {at}");
            let b = c.queue_of(true, B, ms(2));
            assert_eq!(
                c.queues[b].coop,
                preempts && v == KernelVersion::V2_6_32,
                "{v:?}: the mark"
            );
            assert!(!c.queues[b].coop_preempt);
        }
    }
}

/// The `coop` mark: a queue that took the disk as a cooperator may not again until it is
/// chosen from the service tree. A hands the disk to B, B back to A (not marked: it was
/// chosen from the tree), but A then waits for its read rather than handing it to B again.
#[test]
fn a_marked_cooperator_is_not_chosen_twice() {
    const A: Option<ActorId> = Some(ActorId(1));
    const B: Option<ActorId> = Some(ActorId(2));
    for (v, coop) in COOP_KERNELS {
        let mut s = Scheduler::new();
        let mut c = cfq(v, 8);
        c.insert(1, true, A, (1_000, 8), &mut s, ms(0));
        assert_eq!(drain(&mut c, &mut s, ms(0)), [1]);
        c.insert(2, true, B, (1_024, 8), &mut s, ms(0));
        let want: &[BioId] = if coop { &[2] } else { &[] };
        assert_eq!(drain(&mut c, &mut s, ms(0)), want, "{v:?}: A to B");
        if !coop {
            assert_eq!(c.coop_counts(), [0, 0]);
            continue;
        }
        assert_eq!(c.last_position, 1_032);
        c.insert(3, true, A, (1_048, 8), &mut s, ms(0));
        assert_eq!(drain(&mut c, &mut s, ms(0)), [3], "{v:?}: B back to A");
        c.insert(4, true, B, (1_072, 8), &mut s, ms(0));
        assert!(
            drain(&mut c, &mut s, ms(0)).is_empty(),
            "{v:?}: B is marked, A waits"
        );
        assert_eq!(c.coop_counts(), [2, 0]);
        assert!(c.queues[1].coop && c.queues[2].coop);
    }
}

/// `prio_trees` keep a queue where it was filed: a dispatch that moves its next request does
/// not re-file it (the tree's order goes stale), its slice's expiry does
/// (`cfq_resort_rr_list`), and an emptied queue leaves the tree.
#[test]
fn the_priority_tree_refiles_a_queue_only_at_expiry() {
    const A: Option<ActorId> = Some(ActorId(1));
    const B: Option<ActorId> = Some(ActorId(2));
    let mut s = Scheduler::new();
    let mut c = cfq(KernelVersion::V2_6_31, 0);
    c.insert(1, true, A, (100, 8), &mut s, ms(0));
    c.insert(2, true, A, (900_000, 8), &mut s, ms(0));
    c.insert(3, true, B, (500_000, 8), &mut s, ms(0));
    assert_eq!(c.prio.in_order(), [1, 2]);
    // A runs empty and leaves the tree; B's next read is far, so A's slice just ends (no
    // idling here) and B's empties the tree.
    assert_eq!(drain(&mut c, &mut s, ms(0)), [1, 2, 3]);
    assert!(c.prio.in_order().is_empty());
    assert_eq!(c.coop_counts(), [0, 0]);
    let mut s = Scheduler::new();
    let mut c = cfq(KernelVersion::V2_6_31, 8);
    c.cfg.cfq_quantum = 1;
    c.insert(1, true, A, (100, 8), &mut s, ms(0));
    c.insert(2, true, A, (900_000, 8), &mut s, ms(0));
    c.insert(3, true, B, (500_000, 8), &mut s, ms(0));
    assert_eq!(drain(&mut c, &mut s, ms(0)), [1], "the quantum of 1");
    assert_eq!(c.queues[1].next_rq.map(|k| k.0), Some(900_000));
    assert_eq!(c.prio.in_order(), [1, 2], "A kept its place by sector 100");
    c.check_prio_tree().unwrap();
    // A's slice ends (used up): it is filed again, now after B.
    c.completed(1, true, &mut s, ms(200));
    assert_eq!(drain(&mut c, &mut s, ms(200)), [3]);
    assert_eq!(c.prio.in_order(), [1], "B emptied; A filed by 900,000");
    assert!(
        drain(&mut c, &mut s, ms(200)).is_empty(),
        "B waits for its read"
    );
}
