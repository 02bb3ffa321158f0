//! Textbook queues through the real model: every `qsim validate` case must put its formula
//! inside the 95 % confidence interval of the replication means, with a half-width under 2 %.
//!
//! The cases, their sizing, warm-up and pass rule are documented in `qsim::validate`; this test
//! runs the same `run_all` the command does, in-process, on every core.

use qsim::validate;

#[test]
fn textbook_queues_agree_with_theory() {
    let results = validate::run_all(0);
    assert!(!results.is_empty());
    assert!(
        validate::all_pass(&results),
        "the simulator disagrees with queueing theory:\n{}",
        validate::render(&results)
    );
}

#[test]
fn the_validate_subcommand_is_wired() {
    // Parsing only: running the cases twice would double the test time. The table itself is
    // checked above; this checks the subcommand is wired and documented.
    let run = crate::util::Run::of(&["validate", "--help"]);
    run.assert_ok().stdout_has(&["textbook queues", "--jobs"]);
}
