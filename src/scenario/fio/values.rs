//! Values of a job file's options as fio 3.33 reads them: sizes under `kb_base`, times with
//! fio's default units, whole numbers, 0/1 flags, and `read,write` pairs.

use super::{Opt, PerDir, Reader};
use crate::engine::SimDuration;
use crate::scenario::{Error, ErrorKind};

/// How fio writes a size, for hints.
const SIZE_HINT: &str = "a whole number with an optional k/m/g/t/p suffix (4k, 1g); with \
                         fio's default kb_base=1024, 4k = 4KB = 4096 and 4KiB = 4000";

/// How fio writes a time, for hints.
const TIME_HINT: &str = "a whole number with an optional unit: us, ms, s, m (minutes), h, d \
                         (runtime=30, runtime=500ms)";

/// The leading digits of `t` as a number (decimal, or hex after `0x`) and the rest.
fn split_whole(t: &str) -> Option<(u64, &str)> {
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        let end = hex
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(hex.len());
        return Some((u64::from_str_radix(&hex[..end], 16).ok()?, &hex[end..]));
    }
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    Some((t[..end].parse().ok()?, &t[end..]))
}

/// The multiplier of a size suffix (lower case) under `kb`: `k`, `kb`, `ki` are `kb`; `kib`
/// is fio's other base (1000 under 1024, 1024 under 1000); `b` or nothing is 1.
pub(super) fn size_multiplier(suffix: &str, kb: u64) -> Option<u64> {
    let s = suffix.to_ascii_lowercase();
    let mut chars = s.chars();
    let power = match chars.next() {
        None | Some('b') if s.len() <= 1 => return Some(1),
        Some('k') => 1,
        Some('m') => 2,
        Some('g') => 3,
        Some('t') => 4,
        Some('p') => 5,
        _ => return None,
    };
    let base = match chars.as_str() {
        "" | "b" | "i" => kb,
        "ib" => {
            if kb == 1024 {
                1000
            } else {
                1024
            }
        }
        _ => return None,
    };
    base.checked_pow(power)
}

impl Reader<'_> {
    /// The option's value, or an error if it has none (`direct` alone fails in fio too).
    fn text<'o>(&self, job: &str, o: &'o Opt, hint: &str) -> Result<&'o str, Error> {
        match o.value.as_deref() {
            Some(v) if !v.is_empty() => Ok(v),
            _ => Err(self.bad(
                job,
                o,
                ErrorKind::BadValue,
                format!("`{}` needs a value", o.key),
                hint,
            )),
        }
    }

    /// A size: `4k`, `1g`, `4096`, `4KiB` under `kb`.
    pub(super) fn size(&self, job: &str, o: &Opt, v: &str, kb: u64) -> Result<u64, Error> {
        let bad = |msg: String, hint: &str| self.bad(job, o, ErrorKind::BadValue, msg, hint);
        if v.ends_with('%') {
            return Err(bad(
                format!("{v:?}: a percentage of the file or device is not modelled"),
                "give the size in bytes, e.g. size=1g",
            ));
        }
        let Some((n, rest)) = split_whole(v.trim()) else {
            return Err(bad(format!("{v:?} is not a size"), SIZE_HINT));
        };
        if rest.starts_with('.') {
            return Err(bad(
                format!("{v:?}: fio sizes are whole numbers (fio would read only its whole part)"),
                "write it in a smaller unit: 1536k rather than 1.5m",
            ));
        }
        let Some(mult) = size_multiplier(rest.trim(), kb) else {
            return Err(bad(format!("{v:?} is not a size"), SIZE_HINT));
        };
        n.checked_mul(mult)
            .ok_or_else(|| bad(format!("{v:?} is too large"), SIZE_HINT))
    }

    /// A size option's single value.
    pub(super) fn size_opt(&self, job: &str, o: &Opt, kb: u64) -> Result<u64, Error> {
        let v = self.text(job, o, SIZE_HINT)?;
        self.size(job, o, v, kb)
    }

    /// A `read,write` pair of sizes (`bs=4k,8k`); one value applies to both, an empty side
    /// keeps its default; a third (trim) value is read and unused.
    pub(super) fn per_dir(&self, job: &str, o: &Opt, kb: u64) -> Result<PerDir<u64>, Error> {
        let v = self.text(job, o, SIZE_HINT)?;
        let parts: Vec<&str> = v.split(',').map(str::trim).collect();
        let one = |p: &str| -> Result<Option<u64>, Error> {
            if p.is_empty() {
                Ok(None)
            } else {
                self.size(job, o, p, kb).map(Some)
            }
        };
        let read = one(parts[0])?;
        let write = match parts.get(1) {
            None => read,
            Some(p) => one(p)?,
        };
        Ok(PerDir { read, write })
    }

    /// A time in fio's units; `unit_ns` is what a bare number counts (1 s for runtime, 1 µs
    /// for thinktime).
    pub(super) fn time(&self, job: &str, o: &Opt, unit_ns: u64) -> Result<SimDuration, Error> {
        let v = self.text(job, o, TIME_HINT)?;
        let bad = |msg: String| self.bad(job, o, ErrorKind::BadValue, msg, TIME_HINT);
        let Some((n, rest)) = split_whole(v) else {
            return Err(bad(format!("{v:?} is not a time")));
        };
        let ns: u64 = match rest.trim().to_ascii_lowercase().as_str() {
            "" => unit_ns,
            "us" | "usec" => 1_000,
            "ms" | "msec" => 1_000_000,
            "s" | "sec" => 1_000_000_000,
            "m" | "min" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "d" => 86_400_000_000_000,
            other if other.starts_with('.') => {
                return Err(bad(format!("{v:?}: fio times are whole numbers")));
            }
            _ => return Err(bad(format!("{v:?} is not a time"))),
        };
        n.checked_mul(ns)
            .map(SimDuration::from_ns)
            .ok_or_else(|| bad(format!("{v:?} is too long")))
    }

    /// A whole number in `min..=max` (fio accepts a size suffix on numbers: 1k = 1024).
    pub(super) fn int(
        &self,
        job: &str,
        o: &Opt,
        kb: u64,
        min: u64,
        max: u64,
    ) -> Result<u64, Error> {
        let hint = format!("a whole number from {min} to {max}");
        let v = self.text(job, o, &hint)?;
        let n = self.size(job, o, v, kb).map_err(|_| {
            self.bad(
                job,
                o,
                ErrorKind::BadValue,
                format!("{v:?} is not a whole number"),
                &hint,
            )
        })?;
        if n < min || n > max {
            return Err(self.bad(
                job,
                o,
                ErrorKind::BadValue,
                format!("must be between {min} and {max}, got {n}"),
                &hint,
            ));
        }
        Ok(n)
    }

    /// A 0/1 flag (fio refuses `true`, and a flag without its value).
    pub(super) fn flag(&self, job: &str, o: &Opt) -> Result<bool, Error> {
        let hint = "fio's booleans are 0 or 1: direct=1";
        match self.text(job, o, hint)? {
            "0" => Ok(false),
            "1" => Ok(true),
            v => Err(self.bad(
                job,
                o,
                ErrorKind::BadValue,
                format!("expected 0 or 1, got {v:?}"),
                hint,
            )),
        }
    }
}
