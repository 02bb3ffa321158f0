//! Value parsers for the command line's numbers: each refuses a negative number as such
//! (clap would otherwise take `-5` for a flag: "unexpected argument '-5'") and states the
//! range to write instead.

use crate::scenario;

/// A whole number from `lo` to `hi` for a flag's value, or why `text` is not one: a negative
/// number (which clap would otherwise take for a flag, "unexpected argument '-5'") is named as
/// such, with the range to write instead.
fn whole_in(text: &str, lo: u64, hi: u64, what: &str) -> Result<u64, String> {
    let t = text.trim();
    match t.parse::<u64>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => {
            let why = if t.starts_with('-') && t[1..].parse::<f64>().is_ok() {
                "is negative".to_string()
            } else if t.parse::<u64>().is_ok() || t.parse::<f64>().is_ok_and(|v| v >= 0.0) {
                format!("is out of range for {what}")
            } else {
                "is not a whole number".to_string()
            };
            Err(format!(
                "`{text}` {why}\n  hint: {what} is a whole number from {lo} to {hi}"
            ))
        }
    }
}

/// `--seed`: any `u64`.
pub(super) fn parse_seed(text: &str) -> Result<u64, String> {
    whole_in(text, 0, u64::MAX, "a seed")
}

/// `-r`: 1 to [`scenario::MAX_REPLICATIONS`].
pub(super) fn parse_replications(text: &str) -> Result<u32, String> {
    let max = u64::from(scenario::MAX_REPLICATIONS);
    whole_in(text, 1, max, "a replication count").map(|n| n as u32)
}

/// `--max-replications`: 2 to [`scenario::MAX_REPLICATIONS`].
pub(super) fn parse_max_replications(text: &str) -> Result<u32, String> {
    let max = u64::from(scenario::MAX_REPLICATIONS);
    whole_in(text, 2, max, "--max-replications").map(|n| n as u32)
}

/// `-j`: 0 (all cores) or a thread count.
pub(super) fn parse_jobs(text: &str) -> Result<usize, String> {
    whole_in(text, 0, 4096, "a thread count (0 = all cores)").map(|n| n as usize)
}
