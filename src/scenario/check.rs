//! The loader's shared checks: the located-error builder every section uses, the ranges of
//! whole-number fields, names, bandwidths, arrival rates and list lengths.

use super::schema::{Capped, Field};
use super::units::{Duration, Rate, Size, format_bytes};
use super::{Error, ErrorKind, Source};
use crate::engine::SimDuration;
use crate::model::base::physics::SECTOR;
use serde_saphyr::{Location, Spanned};

/// Largest arrival rate of a stream (a fio job's `rate`, an atomic stream's allocations),
/// operations per second: one every [`super::MIN_SERVICE`] on average. Faster arrivals have gaps that
/// round to zero nanoseconds, so the clock would stop while they arrive.
pub const MAX_ARRIVAL_RATE: f64 = 1e7;

/// Smallest arrival rate, operations per second (one every 10,000 s, under three hours): a
/// slower stream does nothing in any run qsim can do, and its gaps run past
/// [`super::units::MAX_DURATION`].
pub const MIN_ARRIVAL_RATE: f64 = 1e-4;

/// Smallest bandwidth of any kind (media, cipher, writer), bytes per second. A request of at
/// most 512 KiB then costs at most six days.
pub const MIN_BANDWIDTH: f64 = 1.0;

/// The byte past the end of the largest disk, and of any region: 1 EiB (2⁶⁰ bytes). No
/// disk comes near, and every sum of offsets and sizes the model makes stays far from
/// overflowing 64 bits (issue 11: an offset near 2⁶⁴ wrapped its region's end to 1 GiB).
pub const MAX_DISK_BYTES: u64 = 1 << 60;

/// Longest name, in characters, of a scenario, a variant, a workload or an atomic stream.
/// Names label report blocks and plot files (`timeline-<variant>_<policy>.png`): 64 characters
/// read as a label and, even at four bytes a character, leave room in a 255-byte file name for
/// what the plots add.
pub const MAX_NAME_CHARS: usize = 64;

/// How to write a name.
pub(crate) const NAME_HINT: &str = "a name is a short label on one line, at most 64 characters, e.g. \
                         `2.6.30+unplug`";

/// What makes `name` unusable as a label, if anything: more than [`MAX_NAME_CHARS`]
/// characters, or a control character (a newline, a tab, NUL, an escape) that would break the
/// report's lines or a terminal. Anything else is a label, `/`, `..` and spaces included: a
/// variant named `2.6.30/unplug` reads well in a report, and where a name becomes part of a path
/// (`--plots`), the writer makes it a safe file name itself (it must, for names from
/// `--set name=…` and from results files too).
pub fn name_problem(name: &str) -> Option<String> {
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        return Some(format!(
            "the name is {chars} characters long, more than the {MAX_NAME_CHARS} a name may have"
        ));
    }
    name.chars().find(|c| c.is_control()).map(|c| {
        format!(
            "the name holds the control character `{}`",
            c.escape_debug()
        )
    })
}

/// The accepted range of every whole-number field, keyed by its path with list indices and a
/// variant's `variants[i].set.` prefix taken out ([`super::field_key`]): each section's own
/// table (`top::INT_RANGES`, `device::INT_RANGES`, …), the one place a range is written.
/// Validation reads them ([`int_range`]), and so does the hint for a value that is not a whole
/// number of the field's type at all (`cpus: -1`, `cpus: 4294967296`). `kernel.hz` (four
/// values), `memory.min_free_kbytes` (its top depends on `ram`) and the buddy orders of
/// `memory.atomic[].orders` are checked, and hinted, where they are resolved.
const INT_RANGES: &[&[(&str, u64, u64)]] = &[
    super::top::INT_RANGES,
    super::device::INT_RANGES,
    super::block::INT_RANGES,
    super::crypt::INT_RANGES,
    super::memory::INT_RANGES,
    super::atomic::INT_RANGES,
    super::workload::INT_RANGES,
];

/// The range of the whole-number field at `path` (`workloads[2].iodepth`,
/// `variants[0].set.cpus`), from [`INT_RANGES`]; `None` for a field not listed there.
pub(crate) fn int_range_of(path: &str) -> Option<(u64, u64)> {
    let key = super::field_key(path);
    INT_RANGES
        .iter()
        .flat_map(|table| table.iter())
        .find(|(k, _, _)| *k == key)
        .map(|&(_, lo, hi)| (lo, hi))
}

/// [`int_range_of`] for a field validation reads: every such field is listed (a unit test
/// reads each one), so the fallback, the whole `u64` range, is never taken.
pub(crate) fn int_range(path: &str) -> (u64, u64) {
    let range = int_range_of(path);
    debug_assert!(range.is_some(), "{path} is missing from INT_RANGES");
    range.unwrap_or((0, u64::MAX))
}

/// The value of a field, if present.
pub(crate) fn val<T: Clone>(f: &Field<T>) -> Option<T> {
    f.as_ref().map(|s| s.value.clone())
}

/// The location of a field's value, if present.
pub(crate) fn loc<T>(f: &Field<T>) -> Option<Location> {
    f.as_ref().map(|s| s.referenced)
}

/// `parent.field`, or `field` at the top level.
pub(crate) fn at(parent: &str, field: &str) -> String {
    if parent.is_empty() {
        field.to_string()
    } else {
        format!("{parent}.{field}")
    }
}

/// Something an error can point at: a location, perhaps unknown, or a parsed value's.
pub(crate) trait Locate {
    /// Where it was written, if known.
    fn location(&self) -> Option<Location>;
}

impl Locate for Location {
    fn location(&self) -> Option<Location> {
        Some(*self)
    }
}

impl Locate for Option<Location> {
    fn location(&self) -> Option<Location> {
        *self
    }
}

impl<T> Locate for Spanned<T> {
    fn location(&self) -> Option<Location> {
        Some(self.referenced)
    }
}

impl<T> Locate for Option<Spanned<T>> {
    fn location(&self) -> Option<Location> {
        loc(self)
    }
}

impl<L: Locate + ?Sized> Locate for &L {
    fn location(&self) -> Option<Location> {
        (**self).location()
    }
}

/// Whether a duration may be zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Zero {
    /// Zero is a value like any other (a CPU cost, a delay).
    Allowed,
    /// Zero is refused: "must be longer than zero" (a run's length, a slice).
    Refused,
}

/// Builds located errors for one source.
pub(crate) struct Checker<'s, 'a> {
    /// The text being checked, for locations.
    pub src: &'s Source<'a>,
}

/// An error about to be built: where it points and the field path it names
/// ([`Checker::at`]); one method per [`ErrorKind`] a section raises takes the message and hint.
pub(crate) struct At<'c, 's, 'a> {
    c: &'c Checker<'s, 'a>,
    loc: Option<Location>,
    path: &'c str,
}

impl At<'_, '_, '_> {
    fn build(self, kind: ErrorKind, message: impl Into<String>, hint: impl Into<String>) -> Error {
        self.c
            .src
            .error(kind, self.loc, self.path, message, Some(hint.into()))
    }

    /// A value out of its range or of the wrong form.
    pub fn bad_value(self, message: impl Into<String>, hint: impl Into<String>) -> Error {
        self.build(ErrorKind::BadValue, message, hint)
    }

    /// Two values that do not go together.
    pub fn conflict(self, message: impl Into<String>, hint: impl Into<String>) -> Error {
        self.build(ErrorKind::Conflict, message, hint)
    }

    /// A required value that is absent.
    pub fn missing(self, message: impl Into<String>, hint: impl Into<String>) -> Error {
        self.build(ErrorKind::Missing, message, hint)
    }

    /// A name that is not one of the valid ones.
    pub fn unknown(self, message: impl Into<String>, hint: impl Into<String>) -> Error {
        self.build(ErrorKind::UnknownName, message, hint)
    }
}

impl<'s, 'a> Checker<'s, 'a> {
    /// An error at `l` (ignored if unknown) about the field at `path`:
    /// `c.at("device.seek_min", &d.seek_min).conflict(message, hint)`.
    pub fn at<'c>(&'c self, path: &'c str, l: impl Locate) -> At<'c, 's, 'a> {
        At {
            c: self,
            loc: l.location(),
            path,
        }
    }

    /// A whole number in the field's range ([`int_range`]), or `default` when absent.
    pub fn int<T>(&self, f: &Field<T>, path: &str, default: T) -> Result<T, Error>
    where
        T: Copy + Into<u64> + std::fmt::Display,
    {
        let (min, max) = int_range(path);
        match f {
            None => Ok(default),
            Some(s) if (min..=max).contains(&s.value.into()) => Ok(s.value),
            Some(s) => Err(self.at(path, s).bad_value(
                format!("must be between {min} and {max}, got {}", s.value),
                format!("write a whole number from {min} to {max}"),
            )),
        }
    }

    /// A name as written (`name:` of the scenario, a variant, a workload or an atomic stream):
    /// not blank (`empty` is the message then, `blank_hint` its hint), at most
    /// [`MAX_NAME_CHARS`] characters and no control characters ([`name_problem`]).
    pub fn name(
        &self,
        s: &Spanned<String>,
        path: &str,
        empty: &str,
        blank_hint: &str,
    ) -> Result<String, Error> {
        if s.value.trim().is_empty() {
            return Err(self.at(path, s).bad_value(empty, blank_hint));
        }
        match name_problem(&s.value) {
            None => Ok(s.value.clone()),
            Some(problem) => Err(self.at(path, s).bad_value(problem, NAME_HINT)),
        }
    }

    /// The scenario's default name, the file stem, under the same rules as a written name.
    pub fn stem_name(&self, stem: &str) -> Result<String, Error> {
        match name_problem(stem) {
            None => Ok(stem.to_string()),
            Some(problem) => Err(self.at("name", None::<Location>).bad_value(
                format!("the scenario is named after its file, and {problem}"),
                format!("add a `name:` to the scenario; {NAME_HINT}"),
            )),
        }
    }

    /// A duration, or `default`; zero refused or not, as `zero` says.
    pub fn dur(
        &self,
        f: &Field<Duration>,
        path: &str,
        default: SimDuration,
        zero: Zero,
    ) -> Result<SimDuration, Error> {
        match f {
            Some(s) if zero == Zero::Refused && s.value.0.is_zero() => Err(self
                .at(path, s)
                .bad_value("must be longer than zero", super::units::DURATION_HINT)),
            Some(s) => Ok(s.value.0),
            None => Ok(default),
        }
    }

    /// A bandwidth (bytes per second); an operation rate is refused.
    pub fn bandwidth(&self, s: &Spanned<Rate>, path: &str) -> Result<f64, Error> {
        match s.value {
            Rate::BytesPerSec(b) if b < MIN_BANDWIDTH => Err(self.at(path, s).bad_value(
                format!("{} is below 1 B/s, the slowest bandwidth accepted", s.value),
                "at 1 B/s a 512 KiB request already takes six days; write e.g. 60MB/s",
            )),
            Rate::BytesPerSec(b) => Ok(b),
            Rate::OpsPerSec(_) => Err(self.at(path, s).bad_value(
                format!("expected a bandwidth in bytes per second, got {}", s.value),
                "write it with a byte unit: 60MB/s, 1432MiB/s, 512KiB/s",
            )),
        }
    }

    /// An arrival rate (operations per second, after any conversion from a bandwidth) inside
    /// [`MIN_ARRIVAL_RATE`]..=[`MAX_ARRIVAL_RATE`]; `written` is the value as the file wrote
    /// it, for the message.
    pub fn arrival_rate(
        &self,
        ops: f64,
        written: &dyn std::fmt::Display,
        l: Option<Location>,
        path: &str,
    ) -> Result<f64, Error> {
        if (MIN_ARRIVAL_RATE..=MAX_ARRIVAL_RATE).contains(&ops) {
            return Ok(ops);
        }
        let (what, why) = if ops > MAX_ARRIVAL_RATE {
            (
                "more than 10000000 arrivals a second",
                "faster arrivals come less than 100ns apart, and their gaps round to zero \
                 nanoseconds",
            )
        } else {
            (
                "fewer than one arrival in 10000 s",
                "a slower stream does nothing within a run",
            )
        };
        Err(self.at(path, l).bad_value(
            format!(
                "{written} makes {what} ({}/s)",
                super::units::trim_float(ops, 6)
            ),
            format!("an arrival rate lies between 0.0001/s and 10000000/s: {why}"),
        ))
    }

    /// Refuses any present field that is not in `allowed`.
    pub fn only(
        &self,
        present: &[(&'static str, Location)],
        allowed: &[&str],
        parent: &str,
        owner: &str,
    ) -> Result<(), Error> {
        match present.iter().find(|(name, _)| !allowed.contains(name)) {
            None => Ok(()),
            Some(&(name, l)) => Err(self.at(&at(parent, name), l).conflict(
                format!("`{name}` does not apply to {owner}"),
                format!("{owner} takes: {}", allowed.join(", ")),
            )),
        }
    }

    /// Refuses a size that is not a whole number of sectors.
    pub fn size_multiple(&self, bytes: u64, f: &Field<Size>, path: &str) -> Result<(), Error> {
        if !bytes.is_multiple_of(SECTOR) {
            return Err(self.at(path, f).bad_value(
                format!(
                    "must be a multiple of 512 bytes (one sector), got {}",
                    format_bytes(bytes)
                ),
                "use 4k, 512, 64KiB, 1MiB, …",
            ));
        }
        Ok(())
    }

    /// Refuses a list that held more items than it may ([`Capped::over`]), naming how many it
    /// held and the most it may hold, at the list's key.
    pub fn too_long<T, const MAX: usize>(
        &self,
        list: &Spanned<Capped<T, MAX>>,
        path: &str,
        what: &str,
        hint: &str,
    ) -> Result<(), Error> {
        if !list.value.over() {
            return Ok(());
        }
        let e = self.at(path, list).bad_value(
            format!(
                "{} {what}; a scenario may list at most {MAX}",
                list.value.total
            ),
            hint,
        );
        Err(self.src.at_key(e, path))
    }
}

/// Seconds as a duration for a message, with fractions of a nanosecond kept (`0.146ns`).
pub(crate) fn fmt_ns(secs: f64) -> String {
    if secs * 1e9 < 1.0 {
        format!("{}ns", super::units::trim_float(secs * 1e9, 3))
    } else {
        SimDuration::from_secs_f64(secs).to_string()
    }
}
