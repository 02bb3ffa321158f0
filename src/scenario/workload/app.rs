//! fio's think-time options, `startdelay` ranges and `kind: cpuio` (fio's `ioengine=cpuio`):
//! their YAML values, their checks and their `qsim check` rows.
//!
//! | field | default | source |
//! |---|---|---|
//! | `thinktime` | none | fio HOWTO; a bare number counts microseconds, as in fio |
//! | `thinktime_blocks` | 1 | fio's default |
//! | `thinktime_blocks_type` | `complete` | fio's default (`complete` or `issue`) |
//! | `thinktime_spin` | 0 | fio's default; a bare number counts microseconds |
//! | `startdelay` | 0 | a duration, or a range `low-high` (each copy draws its own) |
//! | `cpuload` | required | fio refuses a `cpuio` job without it |
//! | `cpuchunks` | 50000 (µs) | fio's default (`engines/cpu.c`) |
//!
//! The thinktime options other than `thinktime` itself are refused without it (fio ignores
//! them: "only valid if thinktime is set"); `thinktime` is refused beside `rate` and `think`.

use super::{RawWorkload, WorkloadKindName};
use crate::engine::SimDuration;
use crate::model::base::config::{CpuIo, FioJob, ThinkTime, WorkloadConfig, WorkloadKind};
use crate::scenario::Error;
use crate::scenario::check::{Checker, at, loc, val};
use crate::scenario::describe::{Rows, row};
use crate::scenario::schema::names;
use crate::scenario::units::{DURATION_HINT, HINT_SEPARATOR, MAX_DURATION, parse_duration};
use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde_saphyr::Location;
use std::fmt;

/// fio's default `cpuchunks`, µs (`engines/cpu.c`: `.def = "50000"`).
pub const DEFAULT_CPUCHUNKS_US: u64 = 50_000;

/// The hint of every fio-time error.
const MICROS_HINT: &str = "a fio time: a bare number counts microseconds (500 = 500us), or a number and a unit: \
     250us, 2ms, 1s";

/// A fio time: a bare whole number counts microseconds (fio's unit for `thinktime`,
/// `thinktime_spin` and `cpuchunks`), or a duration with its unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Micros(pub SimDuration);

fn micros_error<E: de::Error>(message: String) -> E {
    E::custom(format!("{message}{HINT_SEPARATOR}{MICROS_HINT}"))
}

struct MicrosVisitor;

impl Visitor<'_> for MicrosVisitor {
    type Value = Micros;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a time in microseconds (500) or with a unit (2ms)")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Micros, E> {
        match v.checked_mul(1_000) {
            Some(ns) if ns <= MAX_DURATION.as_ns() => Ok(Micros(SimDuration::from_ns(ns))),
            _ => Err(micros_error(format!(
                "{v} microseconds is longer than 100 days, the longest duration qsim accepts"
            ))),
        }
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Micros, E> {
        match u64::try_from(v) {
            Ok(u) => self.visit_u64(u),
            Err(_) => Err(micros_error(format!("times cannot be negative, got {v}"))),
        }
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Micros, E> {
        Err(micros_error(format!(
            "a bare number is whole microseconds, got {v}; write it with a unit (e.g. {v}us)"
        )))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Micros, E> {
        let t = v.trim();
        if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
            return match t.parse::<u64>() {
                Ok(n) => self.visit_u64(n),
                Err(_) => Err(micros_error(format!("{t:?} is too long"))),
            };
        }
        parse_duration(v)
            .map(Micros)
            .map_err(|e| micros_error(e.to_string()))
    }
}

impl<'de> Deserialize<'de> for Micros {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(MicrosVisitor)
    }
}

/// `startdelay`: a duration, or fio's range `low-high` (also `low:high`), each with a unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DelayRange {
    /// The delay, or the low end of the range.
    pub low: SimDuration,
    /// The high end of the range, if one was given.
    pub high: Option<SimDuration>,
}

struct DelayVisitor;

fn delay_error<E: de::Error>(message: String) -> E {
    E::custom(format!(
        "{message}{HINT_SEPARATOR}{DURATION_HINT}; a range is low-high, e.g. 0s-2s"
    ))
}

impl Visitor<'_> for DelayVisitor {
    type Value = DelayRange;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a duration (2s) or a range (0s-2s)")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<DelayRange, E> {
        if v == 0 {
            return Ok(DelayRange {
                low: SimDuration::ZERO,
                high: None,
            });
        }
        Err(delay_error(format!(
            "durations need a unit, got {v}; did you mean {v}s or {v}ms?"
        )))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<DelayRange, E> {
        match u64::try_from(v) {
            Ok(u) => self.visit_u64(u),
            Err(_) => Err(delay_error(format!(
                "durations cannot be negative, got {v}"
            ))),
        }
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<DelayRange, E> {
        Err(delay_error(format!("durations need a unit, got {v}")))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<DelayRange, E> {
        let t = v.trim();
        // A leading `-` is a negative number, which parse_duration refuses with its message.
        let split = t
            .char_indices()
            .skip(1)
            .find(|&(_, c)| c == '-' || c == ':');
        let parse = |s: &str| parse_duration(s).map_err(|e| delay_error::<E>(e.to_string()));
        let Some((i, _)) = split else {
            return Ok(DelayRange {
                low: parse(t)?,
                high: None,
            });
        };
        let (low, high) = (parse(&t[..i])?, parse(&t[i + 1..])?);
        if high < low {
            return Err(delay_error(format!(
                "the range {t:?} ends before it starts"
            )));
        }
        Ok(DelayRange {
            low,
            high: Some(high),
        })
    }
}

impl<'de> Deserialize<'de> for DelayRange {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DelayVisitor)
    }
}

names! {
    /// `workloads[*].thinktime_blocks_type`.
    pub enum BlocksTypeName {
        /// Count completed I/Os (fio's default).
        Complete = "complete",
        /// Count issued I/Os.
        Issue = "issue",
    }
}

/// A workload's `startdelay`: `(low, high)`, `high` set for a range; 0 when absent.
pub(super) fn start_delay(w: &RawWorkload) -> (SimDuration, Option<SimDuration>) {
    match val(&w.startdelay) {
        Some(d) => (d.low, d.high.filter(|&h| h > d.low)),
        None => (SimDuration::ZERO, None),
    }
}

/// A `startdelay` for a workload that takes no range (fake-gitk): refuses one.
pub(super) fn fixed_start_delay(
    c: &Checker,
    w: &RawWorkload,
    path: &str,
) -> Result<SimDuration, Error> {
    let (low, high) = start_delay(w);
    if high.is_some() {
        return Err(c.at(&at(path, "startdelay"), &w.startdelay).bad_value(
            "a fake-gitk takes one start delay, not a range",
            "give a single duration, e.g. startdelay: 2s (ranges apply to fio and cpuio jobs)",
        ));
    }
    Ok(low)
}

/// A fio job's think time (`None` without `thinktime`, or with `thinktime: 0`, as in fio);
/// refuses its companions without it, and it beside `rate` or `think`.
pub(super) fn thinktime(
    c: &Checker,
    w: &RawWorkload,
    path: &str,
) -> Result<Option<ThinkTime>, Error> {
    let p = |f: &str| at(path, f);
    let time = val(&w.thinktime).map_or(SimDuration::ZERO, |m| m.0);
    if time.is_zero() {
        for (name, l) in [
            ("thinktime_blocks", loc(&w.thinktime_blocks)),
            ("thinktime_blocks_type", loc(&w.thinktime_blocks_type)),
            ("thinktime_spin", loc(&w.thinktime_spin)),
        ] {
            if let Some(l) = l {
                return Err(c.at(&p(name), Some(l)).conflict(
                    format!("`{name}` applies only with a `thinktime`"),
                    "add e.g. `thinktime: 200ms` (the pause), or remove it (fio ignores it \
                     without thinktime)",
                ));
            }
        }
        return Ok(None);
    }
    for (name, l) in [("rate", loc(&w.rate)), ("think", loc(&w.think))] {
        if l.is_some() {
            return Err(c.at(&p("thinktime"), &w.thinktime).conflict(
                format!("`thinktime` cannot be combined with `{name}`"),
                if name == "rate" {
                    "a rate makes the job open-loop, where no I/O waits for another: keep \
                     `rate` or `thinktime`"
                } else {
                    "`think` is qsim's per-I/O think time, `thinktime` fio's paused bursts: \
                     keep one"
                },
            ));
        }
    }
    let blocks = c.int(&w.thinktime_blocks, &p("thinktime_blocks"), 1)?;
    let on_issue = val(&w.thinktime_blocks_type) == Some(BlocksTypeName::Issue);
    let spin = val(&w.thinktime_spin).map_or(SimDuration::ZERO, |m| m.0);
    Ok(Some(ThinkTime {
        time,
        spin,
        blocks,
        on_issue,
    }))
}

/// A `kind: cpuio` workload: `cpuload` (required, 1..=100), `cpuchunks` (whole µs, default
/// 50 ms), `numjobs`, `startdelay`.
pub(super) fn cpuio(
    c: &Checker,
    w: &RawWorkload,
    here: Location,
    path: &str,
) -> Result<CpuIo, Error> {
    let p = |f: &str| at(path, f);
    let Some(load) = &w.cpuload else {
        return Err(c.at(&p("cpuload"), here).missing(
            "a cpuio workload needs a `cpuload`",
            "the percentage of one CPU each copy burns, e.g. `cpuload: 40` (fio: \"cpu thread \
             needs rate (cpuload=)\")",
        ));
    };
    let cpuload = c.int(&w.cpuload, &p("cpuload"), load.value)?;
    let chunks = val(&w.cpuchunks).map_or(SimDuration::from_us(DEFAULT_CPUCHUNKS_US), |m| m.0);
    if chunks.is_zero() || !chunks.as_ns().is_multiple_of(1_000) {
        return Err(c.at(&p("cpuchunks"), &w.cpuchunks).bad_value(
            format!("must be a whole number of microseconds above zero, got {chunks}"),
            "fio's cpuchunks is an integer in microseconds (default 50000 = 50ms)",
        ));
    }
    let (startdelay, startdelay_high) = start_delay(w);
    Ok(CpuIo {
        cpuload,
        cpuchunks: chunks,
        numjobs: c.int(&w.numjobs, &p("numjobs"), 1)?,
        startdelay,
        startdelay_high,
    })
}

/// Refuses a scenario whose workloads are all `cpuio`: nothing would issue I/O (fio: "a job
/// never finishes unless there is at least one non-cpuio job").
pub(super) fn some_io(
    c: &Checker,
    first: Option<Location>,
    out: &[WorkloadConfig],
) -> Result<(), Error> {
    if out.iter().all(|w| matches!(w.kind, WorkloadKind::CpuIo(_))) {
        return Err(c.at("workloads[0].kind", first).conflict(
            "every workload is cpuio: nothing issues I/O",
            format!(
                "add an I/O workload beside it (kind: {}), as fio needs a non-cpuio job",
                WorkloadKindName::Fio.name()
            ),
        ));
    }
    Ok(())
}

/// `thinktime` rows of a fio job in `qsim check`.
pub(super) fn describe_thinktime(o: &mut Rows, f: &FioJob) {
    let Some(tt) = &f.thinktime else { return };
    let every = if tt.blocks == 1 {
        "every I/O".to_string()
    } else {
        format!("every {} I/Os", tt.blocks)
    };
    let counted = if tt.on_issue { "issued" } else { "completed" };
    row(
        o,
        4,
        "thinktime",
        &format!(
            "{} after {every} {counted}, once none is in flight",
            tt.time
        ),
    );
    if !tt.spin.is_zero() {
        row(
            o,
            4,
            "thinktime_spin",
            &format!("{} of CPU at the start of each pause", tt.spin),
        );
    }
}

/// A `startdelay` as `qsim check` shows it: `2s`, or `uniform in 0ns..2s, per copy`.
pub(super) fn delay_text(low: SimDuration, high: Option<SimDuration>) -> String {
    match high {
        Some(h) => format!("uniform in {low}..{h}, drawn per copy"),
        None => low.to_string(),
    }
}

/// A `cpuio` workload's rows in `qsim check`.
pub(super) fn describe_cpuio(o: &mut Rows, name: &str, c: &CpuIo) {
    row(
        o,
        2,
        name,
        &format!("cpuio: {}% of one CPU per copy, no I/O", c.cpuload),
    );
    row(
        o,
        4,
        "cycle",
        &format!("{} of CPU, then {} asleep", c.cpuchunks, c.sleep()),
    );
    row(o, 4, "numjobs", &c.numjobs.to_string());
    row(
        o,
        4,
        "startdelay",
        &delay_text(c.startdelay, c.startdelay_high),
    );
}
