//! Top-level error handling for the binary: how an error chain prints and which exit code it
//! maps to.
//!
//! | exit | when |
//! |---|---|
//! | 0 | success, or the reader of stdout went away (`qsim list \| head -1`) |
//! | 1 | a run failed (a simulator invariant broke, a report could not be written) |
//! | 2 | bad input: a scenario error, a bad command-line value or output path, checked before anything runs (clap's own usage errors also exit 2) |
//! | 130 | interrupted (SIGINT, SIGTERM, SIGHUP): unfinished temporary files removed ([`crate::output`]) |
//!
//! Layer errors ([`crate::scenario::Error`], [`UsageError`]) travel inside an [`anyhow::Error`]
//! and are found again by walking its chain, so `cli` is free to add context.

use std::io;

/// A command-line value that parses but cannot be used with this scenario (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{message}\n  hint: {hint}")]
pub struct UsageError {
    /// What is wrong, naming the flag.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

/// Whether the chain contains a broken pipe: stdout's reader has gone, which is not a failure.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// The process exit code for an error chain (see the module table).
pub fn exit_code(err: &anyhow::Error) -> i32 {
    if is_broken_pipe(err) {
        return 0;
    }
    for e in err.chain() {
        if let Some(s) = e.downcast_ref::<crate::scenario::Error>() {
            return s.exit_code();
        }
        if e.downcast_ref::<UsageError>().is_some()
            || e.downcast_ref::<crate::output::OutputError>().is_some()
        {
            return 2;
        }
    }
    1
}

/// The message to print after `error: `: every link of the chain, joined by `: `, skipping a
/// link whose text the previous one already shows (a scenario error quotes its OS reason).
pub fn render(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for e in err.chain() {
        let text = e.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn broken_pipes_exit_zero_even_under_context() {
        let e = anyhow::Error::from(io::Error::from(io::ErrorKind::BrokenPipe)).context("writing");
        assert!(is_broken_pipe(&e));
        assert_eq!(exit_code(&e), 0);
    }

    #[test]
    fn scenario_and_usage_errors_exit_two_others_one() {
        let s = crate::scenario::load_str("x.yaml", "").unwrap_err();
        assert_eq!(exit_code(&anyhow::Error::from(s).context("loading")), 2);
        let u = UsageError {
            message: "bad".into(),
            hint: "good".into(),
        };
        assert_eq!(exit_code(&anyhow::Error::from(u)), 2);
        let other: anyhow::Result<()> = Err(io::Error::other("disk full")).context("report");
        assert_eq!(exit_code(&other.unwrap_err()), 1);
    }

    #[test]
    fn render_skips_repeated_reasons() {
        let e = crate::scenario::load(std::path::Path::new("/nonexistent/x.yaml")).unwrap_err();
        let shown = render(&anyhow::Error::from(e));
        assert_eq!(
            shown.matches("No such file or directory").count(),
            1,
            "{shown}"
        );
        let e: anyhow::Result<()> = Err(io::Error::other("disk full")).context("writing report");
        assert_eq!(render(&e.unwrap_err()), "writing report: disk full");
    }
}
