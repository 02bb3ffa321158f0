//! `sweep:` and `sensitivity:`: a scenario expanded into variants, one per point of a grid of
//! one or two parameters, or one per knob moved down and up from the base, so that the
//! replication machinery runs them as any variants (common random numbers: replication `r` of
//! every point draws from the same streams).
//!
//! ```yaml
//! sweep:                                  # one or two parameters; two make a grid
//!   - path: crypt.encrypt_rate+crypt.decrypt_rate   # `+`: one value, several paths
//!     range: { from: 60MB/s, to: 1432MiB/s, points: 10, scale: log }
//!   - path: crypt.cipher                  # or an explicit list
//!     values: [aes-2009, aes-ni]
//! sensitivity:                            # one knob at a time, paired with the base
//!   metric: read_p999_ms                  # a key of the metrics registry (the default)
//!   step: 20%                             # the default relative step
//!   knobs:
//!     - path: memory.ram                  # base value × (1 ∓ step)
//!     - { path: crypt.encrypt_rate+crypt.decrypt_rate, low: 48MB/s, high: 72MB/s }
//! ```
//!
//! - A path is any path `--set` accepts, list items included (`workloads[1].rate`), and each
//!   point is written exactly as `--set path=value` would write it, then validated as the file
//!   is. An error in a point names the point and points at the sweep's parameter
//!   (`sweep[0]: sweep point `crypt.cipher=aes-3000`: crypt.cipher: unknown cipher …`); an
//!   error a point causes in a value of the file keeps that value's line and names the point.
//! - A range spaces `points` values (default [`DEFAULT_POINTS`]) from `from` to `to`, linearly
//!   or geometrically (`scale: log`), over plain numbers, sizes, rates or durations; its ends
//!   are written as given and the points between in the unit of `from`, to four significant
//!   digits (`quantity::format_like`: a whole number stays whole, a size is rounded to whole
//!   4 KiB pages).
//! - Variant names are `path=value`, joined by `,` for two parameters; a study's are `base`,
//!   `knob-` and `knob+` (`knob` is the knob's `name:`, by default its path).
//! - A sensitivity knob without `low`/`high` moves the value the scenario writes for its
//!   (first) path, in the file or a `--set`, by the step; a value the file does not write (a
//!   default, a preset's) needs `low` and `high`. A whole number moves by at least 1.
//! - A sweep or study cannot be combined with `variants:` (refused at the sweep: the tables
//!   lay out one value per row and one policy per column; run one sweep per variant, or remove
//!   the variants with `--set '!variants'`), nor with each other.

mod quantity;

use super::check::{Checker, at, loc};
use super::schema::{names, raw_section};
use super::setarg::{self, Override};
use super::top::{MAX_RUNS, RawScenario, scenario};
use super::types::*;
use super::{Error, MAX_VARIANTS, OverrideLines, Source};
use serde::de::{self, Deserializer, Visitor};
use serde_saphyr::{Location, Spanned};
use std::fmt;

/// `values` (one axis's points as the variant names write them) all written in the first one's
/// unit when they are quantities of one kind (`1432MiB/s` after `60MB/s` shows as `1502MB/s`),
/// so a table column has one unit; otherwise as they are. For display only: the runs keep the
/// exact values.
pub fn in_one_unit(values: &[String]) -> Vec<String> {
    let parsed: Option<Vec<quantity::Quantity>> =
        values.iter().map(|v| quantity::parse(v)).collect();
    match parsed {
        Some(qs)
            if qs
                .iter()
                .all(|q| q.kind == qs[0].kind && q.unit == qs[0].unit) =>
        {
            values.to_vec()
        }
        Some(qs) if qs.iter().all(|q| q.kind == qs[0].kind) => qs
            .iter()
            .map(|q| quantity::format_like(q.base, &qs[0]))
            .collect(),
        _ => values.to_vec(),
    }
}

/// Most parameters of one sweep: two make a grid, whose table is one per value of the second.
pub const MAX_AXES: usize = 2;
/// Points of a range when `points` is not given.
pub const DEFAULT_POINTS: u32 = 10;
/// A knob's relative step when neither it nor the study gives one: 20 %, large enough to
/// move a tail percentile out of its replication noise in the shipped scenarios, small enough to
/// stay in the neighbourhood of the base (an *assumed* default, named so that it can change).
pub const DEFAULT_STEP: f64 = 0.2;
/// The metric a study ranks knobs by when it names none: read clat p99.9.
pub const DEFAULT_METRIC: &str = "read_p999_ms";

/// A scalar as written in the file (a name, number or unit value), kept as its text.
#[derive(Debug, Clone, PartialEq)]
pub struct Scalar(pub String);

impl<'de> serde::Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a value: a name, a number, or a number with a unit (60MB/s)")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            // `null` is a name too: the null cipher (`crypt.cipher=null`).
            fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
                Ok(Scalar("null".to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

names! {
    /// `sweep[i].range.scale`.
    pub enum ScaleName {
        /// Evenly spaced values.
        Linear = "linear",
        /// Evenly spaced logarithms (a constant ratio between neighbours).
        Log = "log",
    }
}

raw_section! {
    /// One parameter of `sweep:`.
    pub struct RawParam {
        /// The path (or `a+b` paths) each value is written to.
        [value] path: String,
        /// The values, in order.
        [value] values: Vec<Spanned<Scalar>>,
        /// Or a range of numbers.
        [value] range: RawRange,
    }
}

raw_section! {
    /// `sweep[i].range`.
    pub struct RawRange {
        /// First value, and the unit of the generated ones.
        [value] from: Scalar,
        /// Last value.
        [value] to: Scalar,
        /// How many values, ends included.
        [value] points: u32,
        /// Linear or log spacing.
        [value] scale: ScaleName,
    }
}

raw_section! {
    /// The `sensitivity:` section.
    pub struct RawSensitivity {
        /// The metric the knobs are ranked by (a registry key).
        [value] metric: String,
        /// The default relative step, a percentage.
        [value] step: Scalar,
        /// The knobs.
        [value] knobs: Vec<Spanned<RawKnob>>,
    }
}

raw_section! {
    /// One knob of `sensitivity.knobs`.
    pub struct RawKnob {
        /// Its label (default: its path).
        [value] name: String,
        /// The path (or `a+b` paths) it sets.
        [value] path: String,
        /// Its relative step, a percentage (default: the study's).
        [value] step: Scalar,
        /// Its low value (with `high`, instead of a step).
        [value] low: Scalar,
        /// Its high value.
        [value] high: Scalar,
    }
}

/// One parameter resolved: its label, paths, values and where the file wrote it.
struct Axis {
    param: SweepParam,
    /// `sweep[i]` or `sensitivity.knobs[i]`.
    place: String,
    loc: Location,
}

/// Expands `raw`'s `sweep:` or `sensitivity:` (if any) into `base`'s variants and records the
/// plan in `base.sweep`. `raw` is the file with the command line's `--set`s applied.
pub(crate) fn expand(
    c: &Checker,
    raw: &RawScenario,
    stem: &str,
    base: &mut Scenario,
) -> Result<(), Error> {
    let (place, l) = match (&raw.sweep, &raw.sensitivity) {
        (None, None) => return Ok(()),
        (Some(_), Some(s)) => {
            return Err(c.at("sensitivity", s).conflict(
                "a scenario holds a sweep or a sensitivity study, not both",
                "run them one after the other; --set '!sweep' or --set '!sensitivity' removes \
                 one from the command line",
            ));
        }
        (Some(s), None) => ("sweep", s.referenced),
        (None, Some(s)) => ("sensitivity", s.referenced),
    };
    if let Some(v) = &raw.variants {
        return Err(c.at(place, l).conflict(
            format!("`{place}:` cannot be combined with `variants:`"),
            format!(
                "the {place} makes its own variants, one per point, laid out by value and \
                 policy; sweep one scenario per variant, or drop the variants with --set \
                 '!variants' (they start at line {})",
                v.referenced.line()
            ),
        ));
    }
    let mut clean = raw.clone();
    clean.sweep = None;
    clean.sensitivity = None;
    let (variants, plan) = match (&raw.sweep, &raw.sensitivity) {
        (Some(s), _) => grid(c, s, &clean, stem, base)?,
        (_, Some(s)) => sensitivity(c, s, &clean, stem, base)?,
        (None, None) => return Ok(()),
    };
    base.variants = variants;
    base.sweep = Some(plan);
    Ok(())
}

/// The `sweep:` grid: its axes, then one variant per combination, the first axis outermost.
fn grid(
    c: &Checker,
    s: &Spanned<Vec<Spanned<RawParam>>>,
    clean: &RawScenario,
    stem: &str,
    base: &Scenario,
) -> Result<(Vec<Variant>, SweepPlan), Error> {
    if s.value.is_empty() || s.value.len() > MAX_AXES {
        return Err(c.at("sweep", s).bad_value(
            format!("the sweep lists {} parameters", s.value.len()),
            "list one parameter, or two for a grid: `- { path: crypt.cipher, values: \
             [aes-2009, aes-ni] }`",
        ));
    }
    let axes = s
        .value
        .iter()
        .enumerate()
        .map(|(i, p)| axis(c, i, p))
        .collect::<Result<Vec<_>, _>>()?;
    let counts: Vec<usize> = axes.iter().map(|a| a.param.values.len()).collect();
    let total: usize = counts.iter().product();
    bounded(c, "sweep", s.referenced, total, base.policies.len())?;
    let mut variants = Vec::with_capacity(total);
    for k in 0..total {
        let picks: Vec<(&Axis, &SweepValue)> = match counts.as_slice() {
            [_] => vec![(&axes[0], &axes[0].param.values[k])],
            [_, n] => vec![
                (&axes[0], &axes[0].param.values[k / n]),
                (&axes[1], &axes[1].param.values[k % n]),
            ],
            _ => unreachable!("one or two axes"),
        };
        let name = picks
            .iter()
            .map(|(a, v)| format!("{}={}", a.param.name, v.text))
            .collect::<Vec<_>>()
            .join(",");
        let sets: Vec<(&Axis, String)> = picks
            .iter()
            .flat_map(|(a, v)| {
                a.param
                    .paths
                    .iter()
                    .map(|p| (*a, format!("{p}={}", v.text)))
            })
            .collect();
        let sc = point(c, clean, stem, &sets, &name)?;
        variants.push(Variant {
            name,
            scenario: Box::new(sc),
        });
    }
    let plan = SweepPlan {
        kind: SweepKind::Grid,
        params: axes.into_iter().map(|a| a.param).collect(),
        metric: None,
    };
    Ok((variants, plan))
}

/// Refuses a sweep whose runs (points × policies) or points pass the bounds of one run.
fn bounded(
    c: &Checker,
    place: &str,
    l: Location,
    points: usize,
    policies: usize,
) -> Result<(), Error> {
    if points > MAX_VARIANTS || points * policies > MAX_RUNS {
        return Err(c.at(place, l).bad_value(
            format!(
                "{points} points × {policies} policies = {} runs; one `qsim run` holds at most \
                 {MAX_VARIANTS} points and {MAX_RUNS} runs",
                points * policies
            ),
            "fewer points or policies, or split the sweep over several runs (e.g. one per \
             value of the second parameter)",
        ));
    }
    Ok(())
}

/// The paths of a `path:` field (`a+b` → `[a, b]`), each one `--set` accepts.
fn paths(
    c: &Checker,
    place: &str,
    f: &Option<Spanned<String>>,
    l: Location,
) -> Result<Vec<String>, Error> {
    let here = at(place, "path");
    let Some(p) = f else {
        return Err(c.at(&here, l).missing(
            "no `path`",
            "name the field to vary as --set names it, e.g. `path: memory.ram` or \
             `path: workloads[1].rate`",
        ));
    };
    const FIXED: &[&str] = &[
        "name",
        "description",
        "seed",
        "variants",
        "sweep",
        "sensitivity",
        "published",
    ];
    let mut out = Vec::new();
    for one in p.value.split('+').map(str::trim) {
        let bad = |why: String| {
            c.at(&here, p).bad_value(
                format!("`{one}` cannot be swept: {why}"),
                "give a field path as --set takes it (memory.ram, workloads[0].io_size), or \
                 several joined by `+` to set them to one value",
            )
        };
        setarg::parse(&format!("{one}=0")).map_err(|e| bad(e.message().to_string()))?;
        let top = one.split(['.', '[']).next().unwrap_or("");
        if FIXED.contains(&top) {
            return Err(bad(format!("`{top}` is shared by every point")));
        }
        if out.iter().any(|o| o == one) {
            return Err(bad("it is listed twice".to_string()));
        }
        out.push(one.to_string());
    }
    Ok(out)
}

/// One `sweep:` parameter resolved.
fn axis(c: &Checker, i: usize, p: &Spanned<RawParam>) -> Result<Axis, Error> {
    let place = format!("sweep[{i}]");
    let paths = paths(c, &place, &p.value.path, p.referenced)?;
    let name = paths.join("+");
    let (texts, log) = match (&p.value.values, &p.value.range) {
        (Some(_), Some(r)) => {
            return Err(c.at(&at(&place, "range"), r).conflict(
                "the parameter gives both `values` and `range`",
                "keep one: a list of values, or a range { from, to, points, scale }",
            ));
        }
        (None, None) => {
            return Err(c.at(&place, p).missing(
                "the parameter gives neither `values` nor `range`",
                "add `values: [a, b, c]` or `range: { from: 1GiB, to: 4GiB, points: 4 }`",
            ));
        }
        (Some(v), None) => (listed(c, &place, v)?, false),
        (None, Some(r)) => range(c, &at(&place, "range"), r)?,
    };
    let param = SweepParam {
        name,
        paths,
        log,
        unit: String::new(),
        values: Vec::new(),
    };
    Ok(Axis {
        param: with_values(param, texts),
        place,
        loc: p.referenced,
    })
}

/// `param` with the values `texts` and, when all are numbers of one kind, their numbers.
fn with_values(mut param: SweepParam, texts: Vec<String>) -> SweepParam {
    let qs: Vec<Option<quantity::Quantity>> = texts.iter().map(|t| quantity::parse(t)).collect();
    let first = qs.first().cloned().flatten();
    let same = first.as_ref().is_some_and(|f| {
        qs.iter()
            .all(|q| q.as_ref().is_some_and(|q| q.kind == f.kind))
    });
    if let (Some(f), true) = (&first, same) {
        param.unit = f.unit.clone();
    }
    param.values = texts
        .into_iter()
        .zip(qs)
        .map(|(text, q)| SweepValue {
            text,
            x: match (&first, q, same) {
                (Some(f), Some(q), true) => Some(q.base / f.scale),
                _ => None,
            },
        })
        .collect();
    param
}

/// An explicit `values:` list: not empty, at most [`MAX_VARIANTS`], no value twice.
fn listed(
    c: &Checker,
    place: &str,
    v: &Spanned<Vec<Spanned<Scalar>>>,
) -> Result<Vec<String>, Error> {
    let here = at(place, "values");
    if v.value.is_empty() || v.value.len() > MAX_VARIANTS {
        return Err(c.at(&here, v).bad_value(
            format!(
                "{} values; a sweep takes 1 to {MAX_VARIANTS}",
                v.value.len()
            ),
            "list the values to try, e.g. `values: [1GiB, 2GiB, 4GiB]`",
        ));
    }
    let mut out: Vec<String> = Vec::new();
    for (k, x) in v.value.iter().enumerate() {
        let text = x.value.0.trim().to_string();
        if text.is_empty() || out.contains(&text) {
            return Err(c.at(&format!("{here}[{k}]"), x).conflict(
                format!("the value `{text}` is empty or listed twice"),
                "each point of a sweep is one value, listed once",
            ));
        }
        out.push(text);
    }
    Ok(out)
}

/// A `range:` spaced into its values; `true` with `scale: log`.
fn range(c: &Checker, place: &str, r: &Spanned<RawRange>) -> Result<(Vec<String>, bool), Error> {
    let rr = &r.value;
    let end =
        |f: &Option<Spanned<Scalar>>, key: &str| -> Result<(String, quantity::Quantity), Error> {
            let here = at(place, key);
            let Some(s) = f else {
                return Err(c.at(&here, r).missing(
                    format!("the range has no `{key}`"),
                    "give both ends: `range: { from: 60MB/s, to: 1432MiB/s, points: 10 }`",
                ));
            };
            let q = quantity::parse(&s.value.0).ok_or_else(|| {
                c.at(&here, s).bad_value(
                    format!("`{}` is not a number, size, rate or duration", s.value.0),
                    "a range spans numbers (0.5, 128, 2GiB, 60MB/s, 10ms); list names with \
                 `values: [a, b]`",
                )
            })?;
            Ok((s.value.0.trim().to_string(), q))
        };
    let (from_text, from) = end(&rr.from, "from")?;
    let (to_text, to) = end(&rr.to, "to")?;
    if from.kind != to.kind || from.base == to.base {
        return Err(c.at(&at(place, "to"), &rr.to).bad_value(
            format!("the range runs from `{from_text}` to `{to_text}`"),
            "both ends are the same kind of number (two rates, two sizes…) and differ",
        ));
    }
    let points = rr.points.as_ref().map_or(DEFAULT_POINTS, |p| p.value);
    if !(2..=MAX_VARIANTS as u32).contains(&points) {
        return Err(c.at(&at(place, "points"), &rr.points).bad_value(
            format!("{points} points; a range takes 2 to {MAX_VARIANTS}"),
            "the points include both ends: `points: 10`",
        ));
    }
    let log = rr.scale.as_ref().is_some_and(|s| s.value == ScaleName::Log);
    if log && (from.base <= 0.0 || to.base <= 0.0) {
        return Err(c.at(&at(place, "scale"), &rr.scale).bad_value(
            "a log range needs two positive ends",
            "use `scale: linear`, or start the range above zero",
        ));
    }
    let n = points as usize;
    let mut texts: Vec<String> = Vec::with_capacity(n);
    for k in 0..n {
        let t = k as f64 / (n - 1) as f64;
        let v = if log {
            (from.base.ln() + t * (to.base.ln() - from.base.ln())).exp()
        } else {
            from.base + t * (to.base - from.base)
        };
        let text = match k {
            0 => from_text.clone(),
            _ if k == n - 1 => to_text.clone(),
            _ => quantity::format_like(v, &from),
        };
        if texts.contains(&text) {
            return Err(c.at(&at(place, "points"), &rr.points).bad_value(
                format!("{points} points from `{from_text}` to `{to_text}` write `{text}` twice"),
                "fewer points, or a wider range (whole numbers stay whole, sizes whole pages)",
            ));
        }
        texts.push(text);
    }
    Ok((texts, log))
}

/// The scenario of one point: `clean` with each `path=value` of `sets` applied as a `--set`
/// would be, resolved in full. `sets` name the axis each comes from, whose place an error in
/// the value points at.
fn point(
    c: &Checker,
    clean: &RawScenario,
    stem: &str,
    sets: &[(&Axis, String)],
    name: &str,
) -> Result<Scenario, Error> {
    let label = format!("sweep point `{name}`");
    let mut src = Source::new(c.src.name, c.src.text);
    src.overrides = c.src.overrides.clone();
    let mut first = c
        .src
        .text
        .bytes()
        .filter(|b| matches!(b, b'\n' | b'\r'))
        .count() as u64
        + 2;
    first = src
        .overrides
        .iter()
        .map(|o| o.last + 2)
        .fold(first, u64::max);
    let mut merged = clean.clone();
    for (axis, set) in sets {
        let back = |e: Error| relocate(c, e, &label, axis, name);
        let parsed = setarg::parse(set).map_err(back)?;
        let doc = parsed.doc;
        let last = first + doc.lines().count() as u64 - 1;
        let padded = format!("{}{doc}", "\n".repeat(first as usize - 1));
        let lines = OverrideLines {
            label: label.clone(),
            first,
            last,
        };
        let mut own = Source::new(&label, &padded);
        own.overrides.push(lines.clone());
        let over: Spanned<RawScenario> =
            serde_saphyr::from_str_with_options(&padded, super::yaml_options())
                .map_err(|e| back(own.yaml_error(&e)))?;
        src.overrides.push(lines);
        first = last + 2;
        let o = Override {
            label: label.clone(),
            edit: parsed.edit,
            raw: over.value,
        };
        o.apply(&mut merged).map_err(back)?;
    }
    let pc = Checker { src: &src };
    let axis = sets.first().map(|s| s.0);
    scenario(&pc, &merged, stem).map_err(|e| match axis {
        Some(a) if e.0.file == label => relocate(c, e, &label, a, name),
        _ => {
            let mut e = e;
            e.0.message = format!("in sweep point `{name}`: {}", e.0.message);
            e
        }
    })
}

/// An error in a point's own value, moved to the parameter that wrote it and naming the point.
fn relocate(c: &Checker, e: Error, label: &str, axis: &Axis, name: &str) -> Error {
    if e.0.file != label && e.0.line.is_some() {
        let mut e = e;
        e.0.message = format!("in sweep point `{name}`: {}", e.0.message);
        return e;
    }
    let field =
        e.0.path
            .as_deref()
            .map(|p| format!("{p}: "))
            .unwrap_or_default();
    let hint = e.0.hint.clone().unwrap_or_else(|| {
        "change the parameter's values (`qsim check` shows the base value)".to_string()
    });
    let mut out = c.at(&axis.place, axis.loc).bad_value(
        format!("sweep point `{name}`: {field}{}", e.0.message),
        hint,
    );
    out.0.kind = e.0.kind;
    out
}

/// The `sensitivity:` study: the base, then each knob's low and high variants.
fn sensitivity(
    c: &Checker,
    s: &Spanned<RawSensitivity>,
    clean: &RawScenario,
    stem: &str,
    base: &Scenario,
) -> Result<(Vec<Variant>, SweepPlan), Error> {
    let sv = &s.value;
    let step = match &sv.step {
        Some(st) => percent(c, "sensitivity.step", st)?,
        None => DEFAULT_STEP,
    };
    let Some(knobs) = sv.knobs.as_ref().filter(|k| !k.value.is_empty()) else {
        return Err(c
            .at("sensitivity.knobs", loc(&sv.knobs).unwrap_or(s.referenced))
            .missing(
                "the study lists no knobs",
                "list the fields to move, e.g. `knobs: [{ path: memory.ram }, { path: cpus }]`",
            ));
    };
    bounded(
        c,
        "sensitivity.knobs",
        knobs.referenced,
        1 + 2 * knobs.value.len(),
        base.policies.len(),
    )?;
    let mut variants = vec![Variant {
        name: "base".to_string(),
        scenario: Box::new(base.clone()),
    }];
    let mut params: Vec<SweepParam> = Vec::new();
    for (i, k) in knobs.value.iter().enumerate() {
        let axis = knob(c, i, k, step)?;
        if params.iter().any(|p| p.name == axis.param.name) || axis.param.name == "base" {
            return Err(c.at(&axis.place, k).conflict(
                format!("two knobs are called `{}`", axis.param.name),
                "give each knob its own `name:`",
            ));
        }
        for (v, sign) in axis.param.values.iter().take(2).zip(["-", "+"]) {
            let sets: Vec<(&Axis, String)> = axis
                .param
                .paths
                .iter()
                .map(|p| (&axis, format!("{p}={}", v.text)))
                .collect();
            let name = format!("{}{sign}", axis.param.name);
            let sc = point(c, clean, stem, &sets, &name)?;
            variants.push(Variant {
                name,
                scenario: Box::new(sc),
            });
        }
        params.push(axis.param);
    }
    let metric = sv
        .metric
        .as_ref()
        .map_or(DEFAULT_METRIC.to_string(), |m| m.value.clone());
    let plan = SweepPlan {
        kind: SweepKind::Sensitivity,
        params,
        metric: Some(metric),
    };
    Ok((variants, plan))
}

/// A percentage (`20%`, `20`) as a fraction in (0, 1).
fn percent(c: &Checker, place: &str, s: &Spanned<Scalar>) -> Result<f64, Error> {
    let t = s.value.0.trim();
    match t.strip_suffix('%').unwrap_or(t).trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p < 100.0 => Ok(p / 100.0),
        _ => Err(c.at(place, s).bad_value(
            format!("`{t}` is not a step between 0% and 100%"),
            "a step is a percentage of the base value, e.g. `step: 20%`",
        )),
    }
}

/// One knob resolved: its low and high values (and the base's, when known, third).
fn knob(c: &Checker, i: usize, k: &Spanned<RawKnob>, step: f64) -> Result<Axis, Error> {
    let place = format!("sensitivity.knobs[{i}]");
    let kv = &k.value;
    let paths = paths(c, &place, &kv.path, k.referenced)?;
    let name = kv
        .name
        .as_ref()
        .map_or_else(|| paths.join("+"), |n| n.value.clone());
    let texts = match (&kv.low, &kv.high) {
        (Some(lo), Some(hi)) => vec![lo.value.0.trim().to_string(), hi.value.0.trim().to_string()],
        (None, None) => {
            let step = match &kv.step {
                Some(s) => percent(c, &at(&place, "step"), s)?,
                None => step,
            };
            stepped(c, &place, k, &paths[0], step)?
        }
        (lo, _) => {
            let missing = if lo.is_some() { "high" } else { "low" };
            return Err(c.at(&at(&place, missing), k).missing(
                format!("the knob gives one of `low` and `high` but not `{missing}`"),
                "give both, or neither to move the base value by the step",
            ));
        }
    };
    if texts[0] == texts[1] {
        return Err(c.at(&place, k).bad_value(
            format!("the knob's low and high are both `{}`", texts[0]),
            "give two different values, or a larger step",
        ));
    }
    inverted(c, &place, k, &texts)?;
    let param = SweepParam {
        name,
        paths,
        log: false,
        unit: String::new(),
        values: Vec::new(),
    };
    Ok(Axis {
        param: with_values(param, texts),
        place,
        loc: k.referenced,
    })
}

/// Refuses a knob whose `low` is above its `high` (both numbers of one kind): the tornado
/// chart would draw each bar the wrong way round. Names (`aes-2009`, `aes-ni`) have no order.
fn inverted(c: &Checker, place: &str, k: &Spanned<RawKnob>, texts: &[String]) -> Result<(), Error> {
    let (Some(lo), Some(hi)) = (quantity::parse(&texts[0]), quantity::parse(&texts[1])) else {
        return Ok(());
    };
    if lo.kind != hi.kind || lo.base <= hi.base {
        return Ok(());
    }
    let l = k.value.low.as_ref().map(|v| v.referenced);
    Err(c.at(&at(place, "low"), l).bad_value(
        format!(
            "the knob's low `{}` is above its high `{}`",
            texts[0], texts[1]
        ),
        format!(
            "swap them: `low: {}, high: {}` (low is the value below the base)",
            texts[1], texts[0]
        ),
    ))
}

/// The base value of `path` moved down and up by `step`: `[low, high, base]`.
fn stepped(
    c: &Checker,
    place: &str,
    k: &Spanned<RawKnob>,
    path: &str,
    step: f64,
) -> Result<Vec<String>, Error> {
    let Some(text) = written(c.src, path) else {
        return Err(c.at(&at(place, "path"), &k.value.path).missing(
            format!("the scenario does not write a value for `{path}` to step from"),
            "a default or a preset's value is not written: give the knob `low:` and `high:`",
        ));
    };
    let Some(q) = quantity::parse(&text) else {
        return Err(c.at(&at(place, "path"), &k.value.path).bad_value(
            format!("`{path}` is `{text}`, not a number to step"),
            "give the knob `low:` and `high:` values",
        ));
    };
    let mut low = quantity::format_like(q.base * (1.0 - step), &q);
    let mut high = quantity::format_like(q.base * (1.0 + step), &q);
    let whole = quantity::format_like(q.base, &q);
    if q.integer && low == whole {
        low = format!("{}", q.base as i64 - 1);
    }
    if q.integer && high == whole {
        high = format!("{}", q.base as i64 + 1);
    }
    Ok(vec![low, high, text])
}

/// The value the scenario writes for `path`: the last `--set` of exactly that path, else the
/// file's (a scalar; `None` when absent or not a scalar).
fn written(src: &Source<'_>, path: &str) -> Option<String> {
    for o in src.overrides.iter().rev() {
        let arg = o.label.strip_prefix("--set ").unwrap_or(&o.label);
        if let Some((p, v)) = arg.split_once('=')
            && p.trim() == path
        {
            return Some(v.trim().to_string());
        }
    }
    let doc: serde_json::Value = serde_saphyr::from_str(src.text).ok()?;
    let mut node = &doc;
    for key in path.split('.') {
        let (name, index) = match key.split_once('[') {
            Some((n, rest)) => (n, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (key, None),
        };
        node = node.get(name)?;
        if let Some(i) = index {
            node = node.get(i)?;
        }
    }
    match node {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
