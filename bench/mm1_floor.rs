//! The floor for issue 30's paired comparison: an M/M/1 queue simulated by hand with a binary
//! heap, drawing the same arrivals and service times as `bench/mm1.yaml` run through the whole
//! model (the same named random streams, the same inverse transforms, the same rounding to
//! whole nanoseconds), so both simulate the same customers and one can be timed against the
//! other. It keeps only what a bare simulator needs: the event heap, the waiting line, the
//! count and the sum of the sojourn times.
//!
//! ```text
//! cargo run --release --example mm1_floor -- [CUSTOMERS]   # default 10,000,000
//! ```
//!
//! It prints the customers served, the mean sojourn in ns and the events handled; `bench/mm1.sh`
//! checks the first two against qsim's report and times both, and `tests/bench.rs` (which
//! includes this file as a module) checks them on a short run in `cargo test`.

use qsim::engine::RngStreams;
use rand::RngExt;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Arrival rate, per second (ρ = 0.9 with a 1 ms mean service): as in `bench/mm1.yaml`.
const RATE: f64 = 900.0;
/// Mean service time, seconds.
const SERVICE_S: f64 = 1e-3;
/// The scenario's seed.
const SEED: u64 = 1;

/// Seconds to whole nanoseconds, rounded, as `SimDuration::from_secs_f64` does.
fn ns(s: f64) -> u64 {
    if s.is_nan() || s <= 0.0 {
        0
    } else {
        (s * 1e9).round() as u64
    }
}

/// An exponential draw of mean `mean` seconds from the uniform `u`, in ns (the model's inverse
/// transform: `-mean · ln(1 − u)`).
fn exp_ns(mean: f64, u: f64) -> u64 {
    let u = u.clamp(0.0, 1.0 - f64::EPSILON);
    ns(-mean * (1.0 - u).ln())
}

fn main() {
    let customers: u64 = std::env::args()
        .nth(1)
        .map_or(Ok(10_000_000), |a| a.replace('_', "").parse())
        .unwrap_or_else(|e| {
            eprintln!("mm1_floor: CUSTOMERS must be a whole number: {e}");
            std::process::exit(2)
        });
    let f = simulate(customers);
    println!(
        "served {} mean_sojourn_ns {:.1} events {}",
        f.served, f.mean_sojourn_ns, f.events
    );
}

/// What one run of the floor gives.
pub struct Floor {
    /// Customers whose service ended by the end of the run.
    pub served: u64,
    /// Their mean time from arrival to the end of service, ns.
    pub mean_sojourn_ns: f64,
    /// Events handled (arrivals and departures).
    pub events: u64,
}

/// Runs the M/M/1 for the time `customers` arrivals take on average (the scenario's duration).
pub fn simulate(customers: u64) -> Floor {
    let end = ns(customers as f64 / RATE);
    let streams = RngStreams::new(SEED, 0);
    let mut arrivals = streams.stream("poisson.0/arrival");
    let mut service = streams.stream("poisson.0/service");

    // Events: (time, sequence, kind) with kind 0 = arrival, 1 = departure; the sequence keeps
    // ties in scheduling order, as qsim's calendar does.
    let mut heap: BinaryHeap<Reverse<(u64, u64, u8)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut line: VecDeque<(u64, u64)> = VecDeque::new(); // (arrival time, service ns)
    let mut busy = false;
    let (mut served, mut sum_ns, mut events) = (0u64, 0u128, 0u64);
    let first = exp_ns(1.0 / RATE, arrivals.random());
    heap.push(Reverse((first, seq, 0)));
    seq += 1;
    let mut in_service = (0u64, 0u64);
    while let Some(Reverse((now, _, kind))) = heap.pop() {
        if now > end {
            break;
        }
        events += 1;
        if kind == 0 {
            let s = exp_ns(SERVICE_S, service.random());
            line.push_back((now, s));
            let gap = exp_ns(1.0 / RATE, arrivals.random());
            heap.push(Reverse((now + gap, seq, 0)));
            seq += 1;
        } else {
            busy = false;
            served += 1;
            sum_ns += u128::from(now - in_service.0);
        }
        if !busy && let Some(next) = line.pop_front() {
            busy = true;
            in_service = next;
            heap.push(Reverse((now + next.1, seq, 1)));
            seq += 1;
        }
    }
    let mean_sojourn_ns = if served == 0 {
        0.0
    } else {
        sum_ns as f64 / served as f64
    };
    Floor {
        served,
        mean_sojourn_ns,
        events,
    }
}
