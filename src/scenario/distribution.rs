//! Distributions (`think`, `hold`, `service`, `crypt.cost`): a bare duration or a map with
//! `kind:`; and how `qsim check` prints one.

use super::Error;
use super::check::{Checker, at, loc};
use super::describe::fmt_secs;
use super::schema::{Field, Merge, names, raw_section};
use super::types::*;
use super::units::Duration;
use crate::engine::SimDuration;
use crate::model::base::physics::moments;
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_saphyr::Spanned;
use std::fmt;

/// Most values an `empirical` distribution may list. Every variant keeps its own copy (8 bytes a
/// value), and the list must fit in the file's YAML budget ([`super::MAX_YAML_NODES`] values in
/// all) with room for the rest of the scenario; 100,000 observations pin a distribution's
/// percentiles down to 0.1 % and beyond.
pub const MAX_EMPIRICAL_VALUES: usize = 100_000;

names! {
    /// Distribution kinds (`kind:` inside a distribution map).
    pub enum DistKind {
        /// Constant.
        Deterministic = "deterministic",
        /// Exponential.
        Exponential = "exponential",
        /// Uniform.
        Uniform = "uniform",
        /// Lognormal.
        Lognormal = "lognormal",
        /// Empirical.
        Empirical = "empirical",
    }
}

impl DistKind {
    /// The parameters this kind takes (all required), in the order its hint lists them.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            DistKind::Deterministic => &["value"],
            DistKind::Exponential => &["mean"],
            DistKind::Uniform => &["low", "high"],
            DistKind::Lognormal => &["mean", "stddev"],
            DistKind::Empirical => &["values"],
        }
    }
}

raw_section! {
    /// The map form of a distribution: a kind and the parameters that kind takes.
    pub struct RawDistMap {
        /// Which distribution.
        [kind] kind: DistKind,
        /// Exponential, lognormal: mean.
        [value] mean: Duration,
        /// Deterministic: the value.
        [value] value: Duration,
        /// Uniform: lower bound.
        [value] low: Duration,
        /// Uniform: upper bound.
        [value] high: Duration,
        /// Lognormal: standard deviation.
        [value] stddev: Duration,
        /// Empirical: the observed values.
        [value] values: Vec<Spanned<Duration>>,
    }
}

/// A distribution as written: a bare duration (deterministic) or a map with `kind:`.
///
/// Read with a visitor (`visit_str` / `visit_map`) rather than an untagged enum, so a bad
/// duration says what is wrong with it instead of "did not match any variant".
#[derive(Debug, Clone)]
pub enum RawDistribution {
    /// `think: 1ms`.
    Fixed(Duration),
    /// `think: {kind: exponential, mean: 2ms}`.
    Map(Box<RawDistMap>),
}

impl<'de> Deserialize<'de> for RawDistribution {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawDistribution;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a duration (deterministic) or a map such as {kind: exponential, mean: 1ms}",
                )
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawDistribution, E> {
                Duration::deserialize(de::value::U64Deserializer::<E>::new(v))
                    .map(RawDistribution::Fixed)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawDistribution, E> {
                Duration::deserialize(de::value::I64Deserializer::<E>::new(v))
                    .map(RawDistribution::Fixed)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawDistribution, E> {
                Duration::deserialize(de::value::F64Deserializer::<E>::new(v))
                    .map(RawDistribution::Fixed)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawDistribution, E> {
                Duration::deserialize(de::value::StrDeserializer::<E>::new(v))
                    .map(RawDistribution::Fixed)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawDistribution, A::Error> {
                RawDistMap::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|m| RawDistribution::Map(Box::new(m)))
            }
        }
        d.deserialize_any(V)
    }
}

impl super::schema::Relocate for RawDistribution {
    fn relocate(&mut self, l: serde_saphyr::Location) {
        if let RawDistribution::Map(m) = self {
            m.relocate(l);
        }
    }
}

impl Merge for RawDistribution {
    fn merge(&mut self, over: Self) {
        match (self, over) {
            (RawDistribution::Map(a), RawDistribution::Map(b)) => a.merge(*b),
            (this, over) => *this = over,
        }
    }
}

/// A distribution: a bare duration is a constant; a map names its `kind` and takes that
/// kind's parameters ([`DistKind::fields`]), all of them.
pub(crate) fn distribution(
    c: &Checker,
    d: &Spanned<RawDistribution>,
    path: &str,
) -> Result<Distribution, Error> {
    let m = match &d.value {
        RawDistribution::Fixed(v) => return Ok(Distribution::Deterministic { value: v.0 }),
        RawDistribution::Map(m) => m,
    };
    let Some(kind) = &m.kind else {
        return Err(c.at(path, d).missing(
            "the distribution has no `kind`",
            format!(
                "add `kind:` with one of {}; a bare duration (1ms) means a constant",
                DistKind::NAMES.join(", ")
            ),
        ));
    };
    let kind = kind.value;
    let allowed = kind.fields();
    c.only(
        &m.present(),
        allowed,
        path,
        &format!("a `{}` distribution", kind.name()),
    )?;
    let need = |f: &Field<Duration>, name: &str| -> Result<SimDuration, Error> {
        f.as_ref().map(|s| s.value.0).ok_or_else(|| {
            c.at(&at(path, name), d).missing(
                format!("a `{}` distribution needs `{name}`", kind.name()),
                format!("it takes: {}", allowed.join(", ")),
            )
        })
    };
    Ok(match kind {
        DistKind::Deterministic => Distribution::Deterministic {
            value: need(&m.value, "value")?,
        },
        DistKind::Exponential => {
            let mean = positive_mean(c, m, path, need(&m.mean, "mean")?, kind)?;
            Distribution::Exponential { mean }
        }
        DistKind::Uniform => {
            let (low, high) = (need(&m.low, "low")?, need(&m.high, "high")?);
            if high < low {
                return Err(c
                    .at(&at(path, "high"), &m.high)
                    .conflict(format!("high ({high}) is below low ({low})"), "swap them"));
            }
            Distribution::Uniform { low, high }
        }
        DistKind::Lognormal => {
            let mean = positive_mean(c, m, path, need(&m.mean, "mean")?, kind)?;
            Distribution::Lognormal {
                mean,
                stddev: need(&m.stddev, "stddev")?,
            }
        }
        DistKind::Empirical => Distribution::Empirical {
            values: empirical(c, d, m, path)?,
        },
    })
}

/// An exponential or lognormal mean, refused at zero.
fn positive_mean(
    c: &Checker,
    m: &RawDistMap,
    path: &str,
    mean: SimDuration,
    kind: DistKind,
) -> Result<SimDuration, Error> {
    if !mean.is_zero() {
        return Ok(mean);
    }
    let (article, hint) = match kind {
        DistKind::Exponential => ("an", "for no delay at all, leave the field out"),
        _ => ("a", "use a deterministic 0 for no delay"),
    };
    Err(c.at(&at(path, "mean"), loc(&m.mean)).bad_value(
        format!("{article} {} mean must be longer than zero", kind.name()),
        hint,
    ))
}

/// An empirical distribution's `values`: 1 to [`MAX_EMPIRICAL_VALUES`] durations.
fn empirical(
    c: &Checker,
    d: &Spanned<RawDistribution>,
    m: &RawDistMap,
    path: &str,
) -> Result<Vec<SimDuration>, Error> {
    match &m.values {
        Some(v) if !v.value.is_empty() && v.value.len() <= MAX_EMPIRICAL_VALUES => {
            Ok(v.value.iter().map(|x| x.value.0).collect())
        }
        Some(v) => Err(c.at(&at(path, "values"), v).bad_value(
            format!(
                "needs 1 to {MAX_EMPIRICAL_VALUES} values, got {}",
                v.value.len()
            ),
            "list observed durations: [1ms, 2ms, 1.5ms]; for a larger sample, \
             list a random subset of it",
        )),
        None => Err(c.at(&at(path, "values"), d).missing(
            "an `empirical` distribution needs `values`",
            "list observed durations: [1ms, 2ms, 1.5ms]",
        )),
    }
}

/// A distribution as `qsim check` shows it: its shape, mean and standard deviation.
pub(crate) fn fmt_dist(d: &Distribution) -> String {
    let (mean, sd) = moments(d);
    let shape = match d {
        Distribution::Deterministic { value } => format!("constant {value}"),
        Distribution::Exponential { mean } => format!("exponential, mean {mean}"),
        Distribution::Uniform { low, high } => format!("uniform {low}..{high}"),
        Distribution::Lognormal { mean, stddev } => format!("lognormal, mean {mean}, sd {stddev}"),
        Distribution::Empirical { values } => format!("empirical, {} values", values.len()),
    };
    format!("{shape} (mean {}, sd {})", fmt_secs(mean), fmt_secs(sd))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::testutil::*;

    #[test]
    fn distribution_moments() {
        let (m, sd) = moments(&Distribution::Uniform {
            low: SimDuration::from_ms(1),
            high: SimDuration::from_ms(3),
        });
        assert!((m - 0.002).abs() < 1e-12 && (sd - 0.002 / 12f64.sqrt()).abs() < 1e-12);
        let (m, sd) = moments(&Distribution::Empirical {
            values: vec![SimDuration::from_ms(1), SimDuration::from_ms(3)],
        });
        assert!((m - 0.002).abs() < 1e-12 && (sd - 0.001).abs() < 1e-12);
    }

    #[test]
    fn distributions_take_a_bare_duration_or_a_map() {
        #[derive(Debug, Deserialize)]
        struct T {
            think: Spanned<RawDistribution>,
        }
        let t: T = serde_saphyr::from_str("think: 1ms\n").unwrap();
        assert!(matches!(t.think.value, RawDistribution::Fixed(d) if d.0.as_ns() == 1_000_000));
        let t: T =
            serde_saphyr::from_str("think:\n  kind: uniform\n  low: 1ms\n  high: 2ms\n").unwrap();
        let RawDistribution::Map(m) = t.think.value else {
            panic!("map form")
        };
        assert_eq!(m.kind.map(|k| k.value), Some(DistKind::Uniform));
        assert_eq!(m.high.map(|h| h.referenced.line()), Some(4));
        let e =
            serde_saphyr::from_str::<T>("think:\n  kind: uniform\n  low: 1 parsec\n").unwrap_err();
        assert_eq!(e.location().map(|l| l.line()), Some(3));
    }

    #[test]
    fn a_distribution_alone_takes_its_kinds_fields_only() {
        let d = |yaml: &str| {
            section::<RawDistribution, _>(yaml, |c, _, _| {
                let raw: Spanned<RawDistribution> = serde_saphyr::from_str(yaml).unwrap();
                distribution(c, &raw, "think")
            })
        };
        assert!(matches!(
            d("2ms\n").unwrap(),
            Distribution::Deterministic { value } if value == SimDuration::from_ms(2)
        ));
        let e = d("kind: uniform\nlow: 1ms\nmean: 2ms\n").unwrap_err();
        assert_eq!((e.line(), e.path()), (Some(3), Some("think.mean")));
        assert_eq!(e.hint(), Some("a `uniform` distribution takes: low, high"));
        let e = d("mean: 2ms\n").unwrap_err();
        assert_eq!(
            e.hint(),
            Some(
                "add `kind:` with one of deterministic, exponential, uniform, lognormal, \
                 empirical; a bare duration (1ms) means a constant"
            )
        );
    }
}
