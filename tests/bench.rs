//! `bench/mm1.sh` times the whole model against a hand-written M/M/1 (`bench/mm1_floor.rs`) on
//! the premise that both simulate the same customers. This pins the premise (not the timing):
//! on 100,000 arrivals the two serve the same number with the same mean sojourn, to the digit.

use crate::util::Run;

/// The floor itself, compiled into the tests (its `main` is the example's).
#[path = "../bench/mm1_floor.rs"]
#[allow(dead_code)]
mod floor;

#[test]
fn the_floor_and_the_model_serve_the_same_customers() {
    let f = floor::simulate(100_000);
    let (served, mean) = (f.served, format!("{:.1}", f.mean_sojourn_ns));
    // 100,000 arrivals at 900/s: 111.111111111 s, rounded to the ns as the floor rounds it.
    let r = Run::of(&["run", "bench/mm1.yaml", "--set", "duration=111111111111ns"]);
    r.assert_ok();
    assert!(
        r.stdout
            .contains(&format!("where the time went (read: {served} I/Os")),
        "the floor served {served}:\n{}",
        r.stdout
    );
    let avg = r
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("lat (nsec):"))
        .and_then(|l| l.split("avg=").nth(1))
        .and_then(|v| v.split(',').next())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .expect("a lat line with an average");
    assert_eq!(format!("{avg:.1}"), mean, "mean sojourn, ns");
}
