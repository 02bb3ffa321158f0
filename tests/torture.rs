//! The randomized torture test (`qsim::torture`): a fixed set of random valid scenarios, each
//! checked for panics, broken invariants, a blown event budget and output that depends on the
//! thread count; and every seed that ever failed, replayed. The long run is
//! `cargo run --release --example torture -- --cases 10000`.

use qsim::torture::{self, REGRESSIONS};

/// Cases the CI run checks: seeds `0..CI_CASES`.
const CI_CASES: u64 = 200;

#[test]
fn two_hundred_random_scenarios_pass_every_check() {
    let totals = torture::run_parallel(0, CI_CASES, 2, &|_| {}, &|_, _| {})
        .unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(totals.cases, CI_CASES);
    // The set exercises the budget stop and the early end of finite jobs, not only the horizon.
    assert!(totals.saturated > 0, "{totals:?}");
    assert!(totals.finished > 0, "{totals:?}");
}

#[test]
fn every_seed_that_once_failed_passes() {
    for &(seed, found) in REGRESSIONS {
        torture::run_case(seed).unwrap_or_else(|f| panic!("{f}\n(it once found: {found})"));
    }
}
