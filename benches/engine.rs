//! Engine benchmarks: the event calendar under the classic "hold" workload, against a plain
//! `BinaryHeap` of packed `(time, seq)` keys as the baseline.
//!
//! Hold model: the calendar holds N pending events; each step pops the earliest and schedules
//! one more at its time plus an exponential increment (mean 1 µs). Increments are generated
//! before timing so the RNG is not measured. Throughput is in events (one pop + one schedule).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use qsim::engine::{Calendar, RngStreams, SimDuration, SimTime};
use rand::RngExt;
use rand_distr::Exp;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;

/// Pending-event counts the hold model is run at.
const PENDING: [usize; 3] = [1, 1_000, 100_000];
/// Hold steps per timed iteration (amortises criterion's per-iteration overhead).
const STEPS_PER_ITER: u64 = 1_000;
/// Pre-generated increments; a power of two so the index wraps with a mask.
const INCREMENTS: usize = 1 << 16;
/// Far-future delay of the timeouts in the cancellation benchmark [ns].
const TIMEOUT_NS: u64 = 1_000_000;

/// Exponential increments with mean 1 µs, rounded to whole nanoseconds.
fn increments_ns() -> Vec<u64> {
    let mut rng = RngStreams::new(1, 0).stream("bench-increments");
    let exp = Exp::new(1.0 / 1_000.0).expect("positive rate");
    (0..INCREMENTS)
        .map(|_| SimDuration::from_secs_f64(rng.sample(exp) * 1e-9).as_ns())
        .collect()
}

/// Cycles through the pre-generated increments.
struct Increments {
    values: Vec<u64>,
    next: usize,
}

impl Increments {
    fn next_ns(&mut self) -> u64 {
        let v = self.values[self.next];
        self.next = (self.next + 1) & (INCREMENTS - 1);
        v
    }
}

fn hold(c: &mut Criterion) {
    let values = increments_ns();
    let mut group = c.benchmark_group("hold");
    group.throughput(Throughput::Elements(STEPS_PER_ITER));
    for &n in &PENDING {
        group.bench_with_input(BenchmarkId::new("calendar", n), &n, |b, &n| {
            let mut inc = Increments {
                values: values.clone(),
                next: 0,
            };
            let mut cal: Calendar<u32> = Calendar::new();
            for i in 0..n {
                cal.schedule(SimTime::from_ns(inc.next_ns()), i as u32);
            }
            b.iter(|| {
                for _ in 0..STEPS_PER_ITER {
                    let (at, _, ev) = cal.pop().expect("hold keeps N pending");
                    let next = at + SimDuration::from_ns(inc.next_ns());
                    cal.schedule(next, black_box(ev));
                }
            });
            assert_eq!(cal.len(), n);
        });
        group.bench_with_input(BenchmarkId::new("binary_heap_u128", n), &n, |b, &n| {
            let mut inc = Increments {
                values: values.clone(),
                next: 0,
            };
            let mut heap: BinaryHeap<Reverse<u128>> = BinaryHeap::new();
            let mut seq: u64 = 0;
            for _ in 0..n {
                heap.push(Reverse((u128::from(inc.next_ns()) << 64) | u128::from(seq)));
                seq += 1;
            }
            b.iter(|| {
                for _ in 0..STEPS_PER_ITER {
                    let Reverse(key) = heap.pop().expect("hold keeps N pending");
                    let at = (key >> 64) as u64;
                    let next = at.checked_add(inc.next_ns()).expect("no overflow");
                    heap.push(Reverse((u128::from(next) << 64) | u128::from(seq)));
                    seq += 1;
                    black_box(key);
                }
            });
            assert_eq!(heap.len(), n);
        });
    }
    group.finish();
}

/// Hold with a timeout per step: each step also cancels the previous far-future timeout and arms
/// a new one, so half of all schedules are cancelled before they fire (the lazy-deletion path).
fn hold_with_cancelled_timeouts(c: &mut Criterion) {
    let values = increments_ns();
    let mut group = c.benchmark_group("hold_cancel_timeout");
    group.throughput(Throughput::Elements(STEPS_PER_ITER));
    for &n in &PENDING {
        group.bench_with_input(BenchmarkId::new("calendar", n), &n, |b, &n| {
            let mut inc = Increments {
                values: values.clone(),
                next: 0,
            };
            let mut cal: Calendar<u32> = Calendar::new();
            for i in 0..n {
                cal.schedule(SimTime::from_ns(inc.next_ns()), i as u32);
            }
            let mut timeout = cal.schedule(SimTime::from_ns(TIMEOUT_NS), u32::MAX);
            b.iter(|| {
                for _ in 0..STEPS_PER_ITER {
                    let (at, _, ev) = cal.pop().expect("hold keeps N pending");
                    assert!(cal.cancel(timeout), "the timeout never fires first");
                    timeout = cal.schedule(at + SimDuration::from_ns(TIMEOUT_NS), u32::MAX);
                    cal.schedule(at + SimDuration::from_ns(inc.next_ns()), black_box(ev));
                }
            });
            assert_eq!(cal.len(), n + 1);
        });
    }
    group.finish();
}

/// M/M/1 at utilisation 0.8 through the real model (open Poisson workload, generic device with
/// exponential service, `none` policy): every event goes through the same handlers a user's
/// scenario does. Throughput is in engine events, counted by a first run.
fn mm1_through_the_model(c: &mut Criterion) {
    use qsim::engine::SimDuration;
    use qsim::model::{crypt::policy, run_policy, testing};
    let sc = testing::mm1(
        800.0,
        SimDuration::from_ms(1),
        1,
        SimDuration::from_secs(200),
    );
    let none = policy::find("none").expect("the none policy is registered");
    let events = run_policy(&sc, none).obs.events;
    let mut group = c.benchmark_group("mm1_model");
    group.throughput(Throughput::Elements(events));
    group.sample_size(20);
    group.bench_function("rho0.8_200s", |b| {
        b.iter(|| run_policy(&sc, none).obs.events)
    });
    group.finish();
}

/// The memory model's cost per event: the 2009 laptop (`two-queue`, `fifo`, 20 s) without a
/// memory model and with the pressured 2 GiB one (kswapd, direct reclaim, an order-2 receive
/// stream). Throughput is in each run's own engine events, so the two ns/event figures compare
/// directly; their difference is what the memory model adds to an average event.
fn memory_model_per_event(c: &mut Criterion) {
    use qsim::engine::SimDuration;
    use qsim::model::{Recording, crypt::policy, run_policy, run_replication_with, testing};
    let mut plain = qsim::scenario::resolve("two-queue").expect("shipped scenario");
    plain.duration = SimDuration::from_secs(20);
    plain.memory = None;
    let mut pressed = plain.clone();
    pressed.memory = Some(testing::laptop_memory(1900, 20.0, 64));
    let fifo = policy::find("fifo").expect("the fifo policy is registered");
    let mut group = c.benchmark_group("memory_model");
    group.sample_size(10);
    for (name, sc) in [("without", &plain), ("with", &pressed)] {
        let events = run_policy(sc, fifo).obs.events;
        group.throughput(Throughput::Elements(events));
        group.bench_function(name, |b| b.iter(|| run_policy(sc, fifo).obs.events));
        // The same run recording its timeline (1000 buckets): the recorder's cost per event.
        let timeline = || run_replication_with(sc, fifo, 0, Recording::timeline()).obs;
        group.bench_function(format!("{name}_timeline"), |b| b.iter(|| timeline().events));
    }
    group.finish();

    // The zone's own operations: an order-0 allocation and free, and a 32-page reclaim scan.
    let mut group = c.benchmark_group("zone_ops");
    group.throughput(Throughput::Elements(1));
    let cfg = testing::laptop_memory(1024, 20.0, 1);
    let streams = qsim::engine::RngStreams::new(1, 0);
    let mut mem = qsim::model::mm::memory::Mem::new(&cfg, &streams, true);
    let now = qsim::engine::SimTime::ZERO;
    use qsim::model::mm::memory::{Gfp, PageState};
    group.bench_function("alloc_free_order0", |b| {
        b.iter(|| {
            let a = mem.alloc(0, Gfp::User, PageState::Filling, now);
            assert!(a.granted);
            mem.free(0, PageState::Filling);
        })
    });
    group.bench_function("scan_32_and_refill", |b| {
        b.iter(|| {
            let s = mem.scan(32, false, None);
            for _ in 0..s.reclaimed {
                mem.alloc(0, Gfp::User, PageState::Clean, now);
            }
            s.reclaimed
        })
    });
    group.finish();
}

/// The recorder's histogram, recorded into as a completed bio records into it: a spread of
/// latencies (the fio bins and coarse buckets both vary), the same into a counts-only stage
/// histogram, and a stage that stays at zero.
fn histogram_record(c: &mut Criterion) {
    let mut group = c.benchmark_group("histogram_record");
    group.throughput(Throughput::Elements(1));
    // A per-stage histogram records the same values without Welford's update (no stddev).
    for (name, mut h) in [
        ("spread_values", qsim::stats::Histogram::new()),
        (
            "spread_values_counts_only",
            qsim::stats::Histogram::counts_only(),
        ),
    ] {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        group.bench_function(name, |b| {
            b.iter(|| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // 0 to about 16 ms, log-spread: every group of bins is visited.
                h.record((x >> 40) >> (x & 15));
            })
        });
    }
    let mut zeros = qsim::stats::Histogram::new();
    group.bench_function("zeros", |b| {
        b.iter(|| zeros.record(std::hint::black_box(0)))
    });
    group.finish();
}

criterion_group!(
    name = benches;
    // Criterion's charts need system fonts, which a fresh machine lacks; the numbers are the point.
    config = Criterion::default().without_plots();
    targets = hold,
    hold_with_cancelled_timeouts,
    mm1_through_the_model,
    memory_model_per_event,
    histogram_record
);
criterion_main!(benches);
