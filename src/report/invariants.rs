//! The invariant tables `qsim run --check-invariants` prints after the report: per run,
//! Little's law per queue, then the conservation laws ([`crate::model::observe::invariants`]).

use crate::model::observe::invariants::InvariantReport;
use std::io::Write;

/// Writes one policy's invariant table: Little's law per queue (∫N dt against Σ time, both
/// exact integers in ns), then the conservation laws.
pub fn render_invariants(
    policy: &str,
    inv: &InvariantReport,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let verdict = |ok: bool| if ok { "yes" } else { "NO" };
    let holds = if inv.holds() { "all hold" } else { "BROKEN" };
    let policy = super::text::shown(policy);
    let head = format!("invariants of `{policy}` over [0, {}]: {holds}", inv.end);
    if head.chars().count() <= super::text::fit::WIDTH {
        writeln!(out, "\n{head}")?;
    } else {
        // A long run label (a sweep point's): the span and verdict on a line of their own.
        writeln!(
            out,
            "\ninvariants of `{policy}`\n  over [0, {}]: {holds}",
            inv.end
        )?;
    }
    writeln!(
        out,
        "  {:<20} {:>24} {:>24}  holds",
        "queue", "∫N dt [req·ns]", "Σ time [ns]"
    )?;
    for c in &inv.little {
        writeln!(
            out,
            "  {:<20} {:>24} {:>24}  {}",
            c.queue.label(),
            c.area,
            c.time_sum,
            verdict(c.holds)
        )?;
    }
    let law_width = inv
        .conservation
        .iter()
        .map(|c| c.law.len())
        .max()
        .unwrap_or(0);
    // The verdict before the detail, so it stays in one column however long the details;
    // a detail that would pass 80 columns wraps under itself.
    let indent = 2 + law_width + 2 + 5;
    for c in &inv.conservation {
        let line = format!(
            "  {:<law_width$}  {:<5}{}",
            c.law,
            verdict(c.holds),
            c.detail
        );
        for l in super::text::fit::wrap(&line, super::text::fit::WIDTH, indent) {
            writeln!(out, "{l}")?;
        }
    }
    Ok(())
}

/// Writes the invariant table of every run `report` holds ([`super::Report::invariants`]), in
/// run order; nothing when it holds none.
pub fn render_all(report: &super::Report, out: &mut dyn Write) -> std::io::Result<()> {
    for (label, inv) in &report.invariants {
        render_invariants(label, inv, out)?;
    }
    Ok(())
}
