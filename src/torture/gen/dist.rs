//! Distributions of durations (`service:`, `think:`, `hold:`, `cost:`): drawing one, a
//! variant's partial override of one, the loader's merge and its rules.

use super::*;

/// Distribution kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DK {
    Det,
    Exp,
    Uni,
    Logn,
    Emp,
}

impl DK {
    pub(super) fn name(self) -> &'static str {
        match self {
            DK::Det => "deterministic",
            DK::Exp => "exponential",
            DK::Uni => "uniform",
            DK::Logn => "lognormal",
            DK::Emp => "empirical",
        }
    }
}

/// A distribution as written: a bare duration or a map.
#[derive(Debug, Clone)]
pub(super) enum Dist {
    Fixed(Q<u64>),
    Map(DistMap),
}

#[derive(Debug, Clone, Default)]
pub(super) struct DistMap {
    pub(super) kind: Option<DK>,
    pub(super) mean: Option<Q<u64>>,
    pub(super) value: Option<Q<u64>>,
    pub(super) low: Option<Q<u64>>,
    pub(super) high: Option<Q<u64>>,
    pub(super) stddev: Option<Q<u64>>,
    pub(super) values: Option<Vec<Q<u64>>>,
    pub(super) flow: bool,
}

/// A distribution of durations in `lo..=hi` ns (its values and parameters stay in that range,
/// so `lo > 0` keeps every draw above zero).
pub(super) fn dist(g: &mut G, lo: u64, hi: u64) -> Dist {
    let kind = g.pick(&[DK::Det, DK::Exp, DK::Uni, DK::Logn, DK::Emp]);
    if g.chance(0.2) {
        return Dist::Fixed(dur_in(g, lo, hi));
    }
    let positive = lo.max(1);
    let mut m = DistMap {
        kind: Some(kind),
        flow: g.chance(0.6),
        ..DistMap::default()
    };
    match kind {
        DK::Det => m.value = Some(dur_in(g, lo, hi)),
        DK::Exp => m.mean = Some(dur_in(g, positive, hi)),
        DK::Uni => {
            let a = dur_in(g, lo, hi);
            let b = dur_in(g, a.v.max(lo), hi);
            m.low = Some(a);
            m.high = Some(b);
        }
        DK::Logn => {
            let mean = dur_in(g, positive, hi);
            let sd = dur_in(g, 0, mean.v.saturating_mul(2).max(1));
            m.mean = Some(mean);
            m.stddev = Some(sd);
        }
        DK::Emp => {
            let n = g.int(1, 12) as usize;
            m.values = Some((0..n).map(|_| dur_in(g, lo, hi)).collect());
        }
    }
    Dist::Map(m)
}

impl Dist {
    /// The loader's merge of an override over `self`.
    pub(super) fn merge(&mut self, over: Dist) {
        match (self, over) {
            (Dist::Map(a), Dist::Map(b)) => {
                if matches!((a.kind, b.kind), (Some(x), Some(y)) if x != y) {
                    *a = b;
                    return;
                }
                set(&mut a.kind, b.kind);
                set(&mut a.mean, b.mean);
                set(&mut a.value, b.value);
                set(&mut a.low, b.low);
                set(&mut a.high, b.high);
                set(&mut a.stddev, b.stddev);
                set(&mut a.values, b.values);
            }
            (this, over) => *this = over,
        }
    }

    /// Why the loader must refuse it, if it must.
    pub(super) fn problem(&self, positive: bool) -> Option<String> {
        let m = match self {
            Dist::Fixed(d) => return (positive && d.v == 0).then(|| "zero service".into()),
            Dist::Map(m) => m,
        };
        let Some(kind) = m.kind else {
            return Some("distribution without kind".into());
        };
        let present = [
            ("mean", m.mean.is_some()),
            ("value", m.value.is_some()),
            ("low", m.low.is_some()),
            ("high", m.high.is_some()),
            ("stddev", m.stddev.is_some()),
            ("values", m.values.is_some()),
        ];
        let allowed: &[&str] = match kind {
            DK::Det => &["value"],
            DK::Exp => &["mean"],
            DK::Uni => &["low", "high"],
            DK::Logn => &["mean", "stddev"],
            DK::Emp => &["values"],
        };
        for (name, here) in present {
            if here != allowed.contains(&name) {
                return Some(format!("{name} with {}", kind.name()));
            }
        }
        match kind {
            DK::Uni if m.high.as_ref()?.v < m.low.as_ref()?.v => Some("high < low".into()),
            _ => None,
        }
    }

    pub(super) fn yaml(&self) -> Y {
        match self {
            Dist::Fixed(d) => Y::S(d.text.clone()),
            Dist::Map(m) => {
                let mut e = Vec::new();
                if let Some(k) = m.kind {
                    e.push(("kind".into(), Y::S(k.name().into())));
                }
                put(&mut e, "mean", &m.mean);
                put(&mut e, "value", &m.value);
                put(&mut e, "low", &m.low);
                put(&mut e, "high", &m.high);
                put(&mut e, "stddev", &m.stddev);
                if let Some(v) = &m.values {
                    e.push((
                        "values".into(),
                        Y::L {
                            items: v.iter().map(|d| Y::S(d.text.clone())).collect(),
                            flow: true,
                        },
                    ));
                }
                Y::M {
                    entries: e,
                    flow: m.flow,
                }
            }
        }
    }
}

/// A partial override of `d` (some of its parameters, with or without `kind:`), as a variant
/// writes one; or a whole new distribution.
pub(super) fn dist_override(g: &mut G, d: &Dist, lo: u64, hi: u64) -> Dist {
    match d {
        Dist::Map(m) if g.chance(0.5) => {
            let fresh = match dist(g, lo, hi) {
                Dist::Map(f) if f.kind == m.kind => f,
                _ => return dist(g, lo, hi),
            };
            // Keep a random subset of the fresh same-kind parameters.
            let mut o = DistMap {
                kind: if g.chance(0.5) { m.kind } else { None },
                flow: true,
                ..DistMap::default()
            };
            if g.chance(0.6) {
                o.mean = fresh.mean;
            }
            if g.chance(0.6) {
                o.value = fresh.value;
            }
            if g.chance(0.6) {
                o.low = fresh.low;
            }
            if g.chance(0.6) {
                o.high = fresh.high;
            }
            if g.chance(0.6) {
                o.stddev = fresh.stddev;
            }
            if g.chance(0.6) {
                o.values = fresh.values;
            }
            Dist::Map(o)
        }
        _ => dist(g, lo, hi),
    }
}
