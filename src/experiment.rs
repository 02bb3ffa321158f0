//! Scenario → one run per policy → report (STUB: being written).

use crate::scenario::Scenario;
use std::io::Write;

/// Options of `qsim run` that change how a scenario runs or prints.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Output format: "normal" or "json".
    pub format: String,
}

/// Runs every policy of the scenario and writes the report to `out`.
pub fn run_and_report(
    _scenario: &Scenario,
    _opts: &RunOptions,
    _out: &mut dyn Write,
) -> std::io::Result<()> {
    Ok(())
}
