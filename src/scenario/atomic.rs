//! `memory.atomic:`: GFP_ATOMIC allocation streams (a driver refilling its RX ring), their
//! presets, rates and buddy-order mix; and their `qsim check` rows.
//!
//! | field | default | why |
//! |---|---|---|
//! | `atomic[*].name` | `atomic<index>` | as workloads |
//! | `atomic[*].preset` | `custom` | nothing hidden unless asked for |
//! | `atomic[*].orders` | {0: 0.5, 1: 0.3, 2: 0.2} | the model docs' default RX mix [assumed] |
//! | `atomic[*].buffer` | 8 KiB | one A-MSDU; only used to turn `bandwidth` into allocations |
//! | `atomic[*].poisson` | true | independent packet arrivals |
//! | `atomic[*].burst` | 1 | buffers per arrival; a driver refilling its RX ring in one go allocates many [assumed] |
//! | `atomic[*].hold` | exponential, mean 2 ms | an RX buffer lives until softirq processing hands it on [assumed] |
//!
//! The `iwlagn` preset: orders {2: 1.0}, buffer 8 KiB: an 8 KiB A-MSDU needs 8448 B plus the skb
//! tail, a 16 KiB order-2 block; the file still gives `rate` or `bandwidth`.
//!
//! The `rsync` preset: orders {2: 1.0}, buffer 1500 B: a TCP receive of one Ethernet frame,
//! forced to order 2 by the force-highorder test hack that every kernel of Mel Gorman's 2009
//! tables carried; a bandwidth-limited rsync gives `bandwidth` (the stream's bandwidth is
//! the file's, e.g. 1MB/s [assumed]).
//!
//! A stream gives exactly one of `rate` (allocations per second: `500/s`, or a plain number) and
//! `bandwidth` (divided by `buffer`); `buffer` without `bandwidth` is refused. `orders` weights
//! are normalised to sum 1 and stored by order, trailing zero orders dropped; an `iwlagn` stream
//! with `orders` or `buffer` is reported as `iwlagn (custom)`.

use super::Error;
use super::check::{Checker, at, val};
use super::describe::{Rows, row};
use super::distribution::{RawDistribution, distribution, fmt_dist};
use super::schema::{names, raw_section};
use super::types::*;
use super::units::{CountRate, Duration, Rate, Size, format_bandwidth, format_bytes, trim_float};
use crate::engine::SimDuration;
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_saphyr::{Location, Spanned};
use std::fmt;

/// Most GFP_ATOMIC streams a scenario may list.
pub const MAX_ATOMIC_STREAMS: usize = 64;
/// Largest buddy order (`MAX_ORDER − 1` in 2.6.32).
pub const MAX_ORDER: usize = 10;
/// Default GFP_ATOMIC order mix of a `custom` stream (docs/model, assumed).
const DEFAULT_ORDERS: &[f64] = &[0.5, 0.3, 0.2];
/// The `iwlagn` preset's order mix: every RX refill is an order-2 (16 KiB) block.
const IWLAGN_ORDERS: &[f64] = &[0.0, 0.0, 1.0];
/// Bytes per allocation when a stream gives `bandwidth` (one 8 KiB A-MSDU buffer).
const DEFAULT_BUFFER: u64 = 8 << 10;
/// The `rsync` preset's bytes per allocation: one 1500-byte Ethernet frame per skb.
const RSYNC_BUFFER: u64 = 1500;

names! {
    /// `memory.atomic[*].preset`.
    pub enum AtomicPresetName {
        /// iwlagn RX refill: 8 KiB A-MSDU buffers in order-2 blocks.
        Iwlagn = "iwlagn",
        /// Everything from the fields (and their defaults).
        Custom = "custom",
        /// A bandwidth-limited rsync's TCP receive at the forced order 2.
        Rsync = "rsync",
    }
}

raw_section! {
    /// One entry of `memory.atomic:`.
    pub struct RawAtomic {
        /// Name; defaults to `atomic<index>`.
        [name] name: String,
        /// iwlagn | custom.
        [value] preset: AtomicPresetName,
        /// Allocations per second (`500/s` or a plain number).
        [value] rate: CountRate,
        /// Network throughput; divided by `buffer` into allocations per second.
        [value] bandwidth: Rate,
        /// Bytes per allocation, for `bandwidth`.
        [value] buffer: Size,
        /// Weight of each buddy order.
        [value] orders: OrderWeights,
        /// Poisson or evenly spaced arrivals.
        [value] poisson: bool,
        /// How long a buffer is held.
        [value] hold: RawDistribution,
        /// Buffers allocated per arrival (a ring refill).
        [value] burst: u32,
        /// A receive path's ring: descriptors (only with a reader, `from:`).
        [value] ring: u32,
        /// A receive path's round-trip time (only with a reader, `from:`).
        [value] rtt: Duration,
    }
}

/// `orders: {0: 0.5, 1: 0.3, 2: 0.2}`: buddy order → weight, in the order written, each key and
/// value with its own location. Keys are read as signed so that `-1` gets a range message.
#[derive(Debug, Clone)]
pub struct OrderWeights(pub Vec<(Spanned<i64>, Spanned<f64>)>);

impl<'de> Deserialize<'de> for OrderWeights {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OrderWeights;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of buddy order to weight, such as {0: 0.5, 1: 0.3, 2: 0.2}")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OrderWeights, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = map.next_key::<Spanned<i64>>()? {
                    out.push((k, map.next_value::<Spanned<f64>>()?));
                }
                Ok(OrderWeights(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// The accepted range of each whole-number field of `memory.atomic[]`
/// ([`super::check::int_range`]).
pub(crate) const INT_RANGES: &[(&str, u64, u64)] = &[
    ("memory.atomic[].burst", 1, 100_000),
    ("memory.atomic[].ring", 2, 4096),
];

/// One entry of `memory.atomic:`.
pub(crate) fn atomic_stream(
    c: &Checker,
    a: &RawAtomic,
    here: Location,
    path: &str,
    index: usize,
) -> Result<AtomicStream, Error> {
    let p = |f: &str| at(path, f);
    let name = match &a.name {
        Some(s) => c.name(
            s,
            &p("name"),
            "the name is empty",
            "give a short name, or leave it out for atomic<index>",
        )?,
        None => format!("atomic{index}"),
    };
    let preset = val(&a.preset).unwrap_or(AtomicPresetName::Custom);
    let buffer = match preset {
        AtomicPresetName::Rsync => RSYNC_BUFFER,
        _ => DEFAULT_BUFFER,
    };
    let rate = stream_rate(c, a, here, path, buffer)?;
    let preset_orders = match preset {
        AtomicPresetName::Iwlagn | AtomicPresetName::Rsync => IWLAGN_ORDERS,
        AtomicPresetName::Custom => DEFAULT_ORDERS,
    };
    let orders = match &a.orders {
        Some(o) => orders(c, o, &p("orders"))?,
        None => preset_orders.to_vec(),
    };
    let hold = match &a.hold {
        Some(h) => distribution(c, h, &p("hold"))?,
        None => Distribution::Exponential {
            mean: SimDuration::from_ms(2),
        },
    };
    let overridden = a.orders.is_some() || a.buffer.is_some();
    Ok(AtomicStream {
        name,
        preset: if preset != AtomicPresetName::Custom && overridden {
            format!("{} (custom)", preset.name())
        } else {
            preset.name().to_string()
        },
        rate,
        poisson: val(&a.poisson).unwrap_or(true),
        orders,
        hold,
        burst: c.int(&a.burst, &at(path, "burst"), 1)?,
        rx: None,
    })
}

/// Allocations per second: `rate`, or `bandwidth` over `buffer`; exactly one of the two.
fn stream_rate(
    c: &Checker,
    a: &RawAtomic,
    here: Location,
    path: &str,
    default_buffer: u64,
) -> Result<f64, Error> {
    let p = |f: &str| at(path, f);
    match (&a.rate, &a.bandwidth) {
        (Some(_), Some(b)) => Err(c.at(&p("bandwidth"), b).conflict(
            "give `rate` or `bandwidth`, not both",
            "`rate` counts allocations per second; `bandwidth` is a throughput divided by \
             `buffer`",
        )),
        (None, None) => Err(c.at(&p("rate"), here).missing(
            "the stream has neither `rate` nor `bandwidth`",
            "allocations per second (`rate: 500/s`) or a network throughput (`bandwidth: \
             4MB/s`, divided by `buffer`, 8KiB by default)",
        )),
        (Some(r), None) => {
            if let Some(b) = &a.buffer {
                return Err(c.at(&p("buffer"), b).conflict(
                    "`buffer` is used only with `bandwidth`",
                    "remove `buffer`, or replace `rate` by `bandwidth`",
                ));
            }
            match r.value.0 {
                Rate::OpsPerSec(n) => c.arrival_rate(n, &r.value.0, Some(r.referenced), &p("rate")),
                Rate::BytesPerSec(b) => Err(c.at(&p("rate"), r).bad_value(
                    format!(
                        "`rate` counts allocations per second, got the throughput {}",
                        format_bandwidth(b)
                    ),
                    format!(
                        "write `bandwidth: {}` (divided by `buffer`), or `rate: 500/s`",
                        format_bandwidth(b)
                    ),
                )),
            }
        }
        (None, Some(b)) => {
            let bytes = c.bandwidth(b, &p("bandwidth"))?;
            let buffer = match &a.buffer {
                Some(s) if s.value.0 == 0 => {
                    return Err(c.at(&p("buffer"), s).bad_value(
                        "the buffer size is zero",
                        "bytes per allocation, e.g. 8KiB (an A-MSDU), 4KiB, 1500",
                    ));
                }
                Some(s) => s.value.0,
                None => default_buffer,
            };
            c.arrival_rate(
                bytes / buffer as f64,
                &format!("{} over {} buffers", b.value, format_bytes(buffer)),
                Some(b.referenced),
                &p("bandwidth"),
            )
        }
    }
}

/// `orders:` → probabilities indexed by order, summing to 1, without trailing zero orders.
fn orders(c: &Checker, o: &Spanned<OrderWeights>, path: &str) -> Result<Vec<f64>, Error> {
    let example = "map each buddy order (0 to 10) to a weight: {0: 0.5, 1: 0.3, 2: 0.2}";
    let mut w = [0.0f64; MAX_ORDER + 1];
    let mut seen = [false; MAX_ORDER + 1];
    for (k, v) in &o.value.0 {
        let order = match usize::try_from(k.value) {
            Ok(n) if n <= MAX_ORDER => n,
            _ => {
                return Err(c.at(path, k).bad_value(
                    format!(
                        "order {} is out of range: buddy orders run from 0 to {MAX_ORDER}",
                        k.value
                    ),
                    example,
                ));
            }
        };
        if seen[order] {
            return Err(c.at(path, k).conflict(
                format!("order {order} is listed twice"),
                "list each order once",
            ));
        }
        seen[order] = true;
        if !(v.value.is_finite() && v.value >= 0.0) {
            return Err(c.at(&format!("{path}.{order}"), v).bad_value(
                format!(
                    "the weight of order {order} must be a number ≥ 0, got {}",
                    v.value
                ),
                "weights are relative: they are divided by their sum",
            ));
        }
        w[order] = v.value;
    }
    let sum: f64 = w.iter().sum();
    if !(sum > 0.0 && sum.is_finite()) {
        return Err(c
            .at(path, o)
            .bad_value("the weights add up to zero: no order can be drawn", example));
    }
    let len = w.iter().rposition(|&x| x > 0.0).map_or(0, |i| i + 1);
    Ok(w[..len].iter().map(|x| x / sum).collect())
}

/// One stream's rows in `qsim check`: rate, orders, hold time and what it holds on average.
pub(crate) fn describe_atomic(o: &mut Rows, a: &AtomicStream) {
    if let Some(rx) = &a.rx {
        return super::receiver::describe_rx(o, a, rx);
    }
    row(
        o,
        4,
        &a.name,
        &format!(
            "{}: {}/s, {}",
            a.preset,
            trim_float(a.rate, 3),
            if a.poisson {
                "poisson"
            } else {
                "evenly spaced"
            }
        ),
    );
    let orders: Vec<String> = a
        .orders
        .iter()
        .enumerate()
        .filter(|(_, p)| **p > 0.0)
        .map(|(k, p)| format!("{k}: {}%", trim_float(p * 100.0, 1)))
        .collect();
    row(o, 6, "orders", &orders.join(", "));
    row(o, 6, "hold", &fmt_dist(&a.hold));
    if a.burst > 1 {
        row(o, 6, "burst", &format!("{} buffers per arrival", a.burst));
    }
    let pages: f64 = a
        .orders
        .iter()
        .enumerate()
        .map(|(k, p)| p * f64::from(1u32 << k))
        .sum();
    let held = a.rate * f64::from(a.burst) * a.hold.mean_secs();
    row(
        o,
        6,
        "held",
        &format!(
            "≈ {} buffers, {} pages on average (rate × mean hold)",
            trim_float(held, 2),
            trim_float(held * pages, 1)
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::testutil::*;

    #[test]
    fn atomic_streams_resolve_presets_rates_and_orders() {
        let m = mem(
            "  atomic:\n    - preset: iwlagn\n      bandwidth: 4MB/s\n    - rate: 500/s\n    - name: tcp\n      rate: 250\n      orders: {1: 1}\n      poisson: false\n      hold: 1ms\n    - bandwidth: 1MiB/s\n      buffer: 4KiB\n      orders: {3: 3, 1: 1, 0: 0, 5: 0}\n    - { preset: iwlagn, rate: 10, orders: {1: 1} }\n",
        );
        let a = &m.atomic;
        assert_eq!(a.len(), 5);
        assert_eq!(
            (a[0].name.as_str(), a[0].preset.as_str()),
            ("atomic0", "iwlagn")
        );
        assert_eq!(a[0].rate, 4e6 / 8192.0);
        assert_eq!(a[0].orders, vec![0.0, 0.0, 1.0]);
        assert!(a[0].poisson);
        assert!(
            matches!(a[0].hold, Distribution::Exponential { mean } if mean == SimDuration::from_ms(2))
        );
        assert_eq!((a[1].preset.as_str(), a[1].rate), ("custom", 500.0));
        assert_eq!(a[1].orders, vec![0.5, 0.3, 0.2]);
        assert_eq!(
            (a[2].name.as_str(), a[2].rate, a[2].poisson),
            ("tcp", 250.0, false)
        );
        assert_eq!(a[2].orders, vec![0.0, 1.0]);
        assert!(matches!(a[2].hold, Distribution::Deterministic { .. }));
        assert_eq!(a[3].rate, 256.0);
        assert_eq!(
            a[3].orders,
            vec![0.0, 0.25, 0.0, 0.75],
            "normalised, trailing zeros dropped"
        );
        assert_eq!(a[4].preset, "iwlagn (custom)");
        assert_eq!(a[4].orders, vec![0.0, 1.0]);
    }

    #[test]
    fn atomic_errors_name_the_stream_field() {
        let at = |s: &str| err(&format!("{MEM}  atomic:\n    - {s}\n"));
        let e = at("{ rate: 5, orders: {0: 1, 11: 1} }");
        assert_eq!(e.kind(), ErrorKind::BadValue);
        assert_eq!(
            place(&e),
            (Some(7), Some(33), Some("memory.atomic[0].orders"))
        );
        assert!(e.message().contains("order 11"), "{e}");
        assert!(
            e.hint().unwrap().contains("{0: 0.5, 1: 0.3, 2: 0.2}"),
            "{e}"
        );
        let e = at("{ rate: 5, orders: {-1: 1} }");
        assert_eq!(e.path(), Some("memory.atomic[0].orders"));
        let e = at("{ rate: 5, orders: {2: -0.5} }");
        assert_eq!(
            place(&e),
            (Some(7), Some(30), Some("memory.atomic[0].orders.2"))
        );
        let e = at("{ rate: 5, orders: {2: 0} }");
        assert!(e.message().contains("add up to zero"), "{e}");
        let e = at("{ rate: 5, orders: {2: 1, +2: 1} }");
        assert!(e.message().contains("duplicate key"), "{e}");
        let e = at("{ rate: 5, orders: {x: 1} }");
        assert_eq!(e.path(), Some("memory.atomic[0].orders.x"));
        assert!(e.hint().unwrap().contains("buddy order"), "{e}");
        let e = at("{ rate: 5, bandwidth: 4MB/s }");
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert_eq!(
            place(&e),
            (Some(7), Some(29), Some("memory.atomic[0].bandwidth"))
        );
        let e = at("{ preset: iwlagn }");
        assert_eq!(e.kind(), ErrorKind::Missing);
        assert_eq!(place(&e), (Some(7), Some(7), Some("memory.atomic[0].rate")));
        assert!(e.hint().unwrap().contains("bandwidth: 4MB/s"), "{e}");
        let e = at("{ rate: 4MB/s }");
        assert_eq!(e.path(), Some("memory.atomic[0].rate"));
        assert!(e.hint().unwrap().contains("bandwidth: 4MB/s"), "{e}");
        let e = at("{ rate: 5, buffer: 4KiB }");
        assert_eq!(e.path(), Some("memory.atomic[0].buffer"));
        let e = at("{ bandwidth: 4MB/s, buffer: 0 }");
        assert_eq!(e.path(), Some("memory.atomic[0].buffer"));
        let e = at("{ bandwidth: 500/s }");
        assert!(e.message().contains("bandwidth"), "{e}");
        let e = at("{ rate: -3 }");
        assert_eq!(
            place(&e),
            (Some(7), Some(15), Some("memory.atomic[0].rate"))
        );
        assert!(e.message().contains("positive"), "{e}");
        let e = at("{ rate: 5, preset: iwlang }");
        assert_eq!(e.kind(), ErrorKind::UnknownName);
        assert!(e.hint().unwrap().contains("did you mean `iwlagn`?"), "{e}");
        let e = at("{ rate: 5, hold: {kind: uniform, low: 2ms, high: 1ms} }");
        assert_eq!(e.path(), Some("memory.atomic[0].hold.high"));
        let e = at("{ rate: 5, name: ' ' }");
        assert_eq!(e.path(), Some("memory.atomic[0].name"));
        let e = err(&format!(
            "{MEM}  atomic:\n    - {{ rate: 5 }}\n    - {{ rate: 5, name: atomic0 }}\n"
        ));
        assert_eq!(
            place(&e),
            (Some(8), Some(24), Some("memory.atomic[1].name"))
        );
    }

    #[test]
    fn one_stream_alone_takes_a_rate_or_a_bandwidth() {
        let a = |yaml: &str| {
            section::<RawAtomic, _>(yaml, |c, r, here| {
                atomic_stream(c, r, here, "memory.atomic[0]", 0)
            })
        };
        let s = a("preset: iwlagn\nbandwidth: 8MB/s\n").unwrap();
        assert_eq!((s.name.as_str(), s.preset.as_str()), ("atomic0", "iwlagn"));
        assert_eq!(s.orders, IWLAGN_ORDERS);
        assert!((s.rate - 8e6 / 8192.0).abs() < 1e-9);
        let e = a("rate: 500/s\nbuffer: 4KiB\n").unwrap_err();
        assert_eq!(
            (e.line(), e.path()),
            (Some(2), Some("memory.atomic[0].buffer"))
        );
        let e = a("poisson: false\n").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Missing);
    }
}
