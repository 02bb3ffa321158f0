//! Latency histogram in nanoseconds using fio's bucket scheme (`stat.h`, `stat.c`).
//!
//! fio splits the range into groups by the position of the most significant bit and each group
//! into 2^6 = 64 equal buckets: values below 128 ns get one bucket each, every larger value
//! lands in a bucket whose width is 1/64 of its group's lower bound, so a bucket midpoint is
//! within 1/128 (0.78%) of every value in it. 29 groups of 64 give 1856 `u64` counters
//! (14.5 KiB), covering up to 2^34 ns (about 17.2 s); larger values pile into the last bucket
//! and are counted in [`Histogram::clipped`] so the report can warn.
//!
//! Using fio's scheme means qsim's percentiles and json+ `bins` mean exactly what fio's do, and
//! fio's own scripts (`fio_jsonplus_clat2csv`) read them.
//!
//! Beside the buckets the histogram keeps what buckets would blur: the exact count, minimum,
//! maximum and sum, a Welford mean/M2 pair for the sample standard deviation, and exact counts
//! for fio's 32 coarse latency buckets (the `lat (usec)   : 50=…%` lines), whose edges such as
//! 750 ns do not fall on bucket boundaries. Memory is fixed whatever the number of samples.

use serde::ser::{SerializeMap, SerializeStruct, Serializer};
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;

/// Bits of a value kept below its most significant bit (fio's `FIO_IO_U_PLAT_BITS`).
pub const PLAT_BITS: u32 = 6;
/// Buckets per group (fio's `FIO_IO_U_PLAT_VAL`).
pub const PLAT_VAL: usize = 1 << PLAT_BITS;
/// Number of groups (fio's `FIO_IO_U_PLAT_GROUP_NR`).
pub const PLAT_GROUPS: usize = 29;
/// Number of buckets (fio's `FIO_IO_U_PLAT_NR`): 1856.
pub const PLAT_NR: usize = PLAT_GROUPS * PLAT_VAL;
/// Values at or above this many nanoseconds (2^34, about 17.2 s) share the last bucket.
pub const CLIP_NS: u64 = 1 << 34;

/// Number of fio nanosecond latency buckets (`FIO_IO_U_LAT_N_NR`).
pub const LAT_N_NR: usize = 10;
/// Number of fio microsecond latency buckets (`FIO_IO_U_LAT_U_NR`).
pub const LAT_U_NR: usize = 10;
/// Number of fio millisecond latency buckets (`FIO_IO_U_LAT_M_NR`).
pub const LAT_M_NR: usize = 12;
/// All fio latency buckets: nanosecond, then microsecond, then millisecond ones.
pub const LAT_NR: usize = LAT_N_NR + LAT_U_NR + LAT_M_NR;

/// Exclusive upper edges, in ns, of fio's latency buckets; the last bucket (`>=2000` ms) has none.
///
/// fio files a value under 1000 ns by its ns value, under 1 ms by `ns / 1000` and otherwise by
/// `ns / 1_000_000`, each into ranges 0–1, 2–3, 4–9, 10–19, 20–49, 50–99, 100–249, 250–499,
/// 500–749 and 750–999 (plus 1000–1999 and the rest for ms). Integer division makes those the
/// half-open nanosecond ranges ending at these edges.
pub const LAT_UPPER_NS: [u64; LAT_NR - 1] = [
    2,
    4,
    10,
    20,
    50,
    100,
    250,
    500,
    750,
    1_000,
    2_000,
    4_000,
    10_000,
    20_000,
    50_000,
    100_000,
    250_000,
    500_000,
    750_000,
    1_000_000,
    2_000_000,
    4_000_000,
    10_000_000,
    20_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    750_000_000,
    1_000_000_000,
    2_000_000_000,
];

/// Index of the fio latency bucket (`0..LAT_NR`) that `ns` falls in.
pub fn lat_bucket_index(ns: u64) -> usize {
    LAT_UPPER_NS.partition_point(|&edge| edge <= ns)
}

/// [`lat_bucket_index`] in a `const` context.
const fn lat_bucket_index_const(ns: u64) -> usize {
    let mut i = 0;
    while i < LAT_UPPER_NS.len() && LAT_UPPER_NS[i] <= ns {
        i += 1;
    }
    i
}

/// In [`LAT_OF_BIN`]: the bin holds an edge of the coarse buckets.
const STRADDLES: u8 = u8::MAX;

/// The coarse latency bucket of every value in each fio bin, or [`STRADDLES`] for the few bins
/// with a coarse edge inside them (750 ns, 10 µs, …: not bin boundaries), whose values must be
/// compared with the edges one by one. [`Histogram::record`] looks the coarse bucket up here
/// instead of searching the edges: the search was half the cost of recording a value. The last
/// bin (which also receives clipped values) starts above the last edge.
static LAT_OF_BIN: [u8; PLAT_NR] = {
    let mut table = [0u8; PLAT_NR];
    let mut idx = 0;
    while idx < PLAT_NR {
        let (low, width) = bucket_bounds_const(idx);
        let first = lat_bucket_index_const(low);
        let last = lat_bucket_index_const(low + width - 1);
        table[idx] = if first == last {
            first as u8
        } else {
            STRADDLES
        };
        idx += 1;
    }
    table
};

/// Bucket index of a value in nanoseconds (fio's `plat_val_to_idx`).
///
/// Values below 128 are their own index; a larger value with most significant bit `m` keeps the
/// 6 bits below it: with `e = m - 6`, the index is `((e + 1) << 6) + ((v >> e) & 63)`, capped at
/// the last bucket.
pub fn bucket_index(ns: u64) -> usize {
    if ns < (2 * PLAT_VAL) as u64 {
        return ns as usize;
    }
    let msb = 63 - ns.leading_zeros();
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) as usize) << PLAT_BITS;
    let offset = ((ns >> error_bits) as usize) & (PLAT_VAL - 1);
    (base + offset).min(PLAT_NR - 1)
}

/// Lower bound and width, in ns, of bucket `idx`.
fn bucket_bounds(idx: usize) -> (u64, u64) {
    assert!(idx < PLAT_NR, "histogram bucket {idx} out of range");
    bucket_bounds_const(idx)
}

/// [`bucket_bounds`] for an `idx` known to be in range, usable in a `const` context.
const fn bucket_bounds_const(idx: usize) -> (u64, u64) {
    if idx < 2 * PLAT_VAL {
        return (idx as u64, 1);
    }
    let error_bits = (idx >> PLAT_BITS) as u32 - 1;
    let group_base = 1u64 << (error_bits + PLAT_BITS);
    let k = (idx % PLAT_VAL) as u64;
    (group_base + (k << error_bits), 1u64 << error_bits)
}

/// Value that bucket `idx` stands for (fio's `plat_idx_to_val`): the index itself below 128,
/// otherwise the midpoint `2^(e+6) + (idx mod 64 + 0.5) * 2^e` with `e = idx / 64 - 1`.
pub fn bucket_value(idx: usize) -> u64 {
    let (low, width) = bucket_bounds(idx);
    // Below 128 the width is 1 and fio returns the index itself, not a half.
    low + width / 2
}

/// Half-open range `[low, high)` of values, in ns, that bucket `idx` receives (the last bucket
/// also receives every clipped value).
pub fn bucket_range(idx: usize) -> (u64, u64) {
    let (low, width) = bucket_bounds(idx);
    (low, low + width)
}

/// A latency histogram in nanoseconds with fio's 1856 buckets and exact summary statistics.
#[derive(Clone, PartialEq)]
pub struct Histogram {
    /// Counts per fio bucket.
    bins: Box<[u64; PLAT_NR]>,
    /// Exact counts per fio coarse latency bucket.
    lat_buckets: [u64; LAT_NR],
    /// Values recorded.
    count: u64,
    /// Smallest value recorded (`u64::MAX` while empty).
    min_ns: u64,
    /// Largest value recorded.
    max_ns: u64,
    /// Exact sum of the values.
    sum_ns: u128,
    /// Running mean for Welford's update (the reported mean comes from `sum_ns`).
    welford_mean: f64,
    /// Sum of squared deviations from the mean (Welford's M2).
    m2: f64,
    /// Values at or above [`CLIP_NS`].
    clipped: u64,
    /// Whether Welford's pair is kept: false for a histogram made with
    /// [`Histogram::counts_only`], whose standard deviation nothing reads.
    spread: bool,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Self {
        let bins: Box<[u64; PLAT_NR]> = vec![0u64; PLAT_NR]
            .into_boxed_slice()
            .try_into()
            .expect("a vector of PLAT_NR zeros converts to a boxed array");
        Histogram {
            bins,
            lat_buckets: [0; LAT_NR],
            count: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            welford_mean: 0.0,
            m2: 0.0,
            clipped: 0,
            spread: true,
        }
    }

    /// An empty histogram that keeps everything but the standard deviation: the counts,
    /// buckets, percentiles, minimum, maximum, exact sum and mean are those [`Histogram::new`]
    /// gives, and [`Histogram::stddev`] is NaN. Recording skips Welford's update, a division
    /// whose latency was the largest single cost of recording a value; the recorder's
    /// per-stage histograms, of which the report reads only counts, means and percentiles, are
    /// made this way.
    pub fn counts_only() -> Self {
        Histogram {
            spread: false,
            ..Histogram::new()
        }
    }

    /// Records one value in nanoseconds.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        if ns == 0 && self.max_ns == 0 {
            // Only zeros so far (a stage this run's bios never enter, the commonest value by
            // far): only the counts and the minimum change.
            self.record_zeros(1);
            return;
        }
        self.record_value(ns);
    }

    /// Records `n` zeros at once, exactly as `n` calls of [`Histogram::record`]`(0)` would, into
    /// a histogram that holds only zeros (or nothing): bin 0 and its coarse bucket count them
    /// and the minimum becomes 0, while the maximum, sum, clip count and Welford's mean and
    /// spread stay exactly as they are (`0 + 0/n` and `m2 + 0·0`).
    ///
    /// # Panics
    /// If a nonzero value has been recorded (the zeros' order would then matter to the
    /// spread).
    #[inline]
    pub fn record_zeros(&mut self, n: u64) {
        if n == 0 {
            return;
        }
        assert_eq!(
            self.max_ns, 0,
            "zeros recorded in bulk after a nonzero value"
        );
        self.bins[0] += n;
        self.lat_buckets[usize::from(LAT_OF_BIN[0])] += n;
        self.count += n;
        self.min_ns = 0;
    }

    /// [`Histogram::record`] of a value that may change more than the counts.
    #[inline(never)]
    fn record_value(&mut self, ns: u64) {
        let bin = bucket_index(ns);
        self.bins[bin] += 1;
        let lat = match LAT_OF_BIN[bin] {
            STRADDLES => lat_bucket_index(ns),
            lat => usize::from(lat),
        };
        self.lat_buckets[lat] += 1;
        if ns >= CLIP_NS {
            self.clipped += 1;
        }
        self.count += 1;
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns += u128::from(ns);
        if self.spread {
            let x = ns as f64;
            let delta = x - self.welford_mean;
            self.welford_mean += delta / self.count as f64;
            self.m2 += delta * (x - self.welford_mean);
        }
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Whether nothing has been recorded.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Adds another histogram's values, as if each had been recorded here.
    ///
    /// Counts, minimum, maximum and sum merge exactly; the spread merges with Chan et al.'s
    /// parallel formula (the same one fio's `__sum_stat` uses).
    pub fn merge(&mut self, other: &Histogram) {
        if other.count == 0 {
            return;
        }
        let spread = self.spread && other.spread;
        if self.count == 0 {
            self.clone_from(other);
            self.keep_spread(spread);
            return;
        }
        for (mine, theirs) in self.bins.iter_mut().zip(other.bins.iter()) {
            *mine += *theirs;
        }
        for (mine, theirs) in self.lat_buckets.iter_mut().zip(other.lat_buckets.iter()) {
            *mine += *theirs;
        }
        if spread {
            let (n_a, n_b) = (self.count as f64, other.count as f64);
            let n = n_a + n_b;
            let delta = other.welford_mean - self.welford_mean;
            self.welford_mean += delta * n_b / n;
            self.m2 += other.m2 + delta * delta * n_a * n_b / n;
        }
        self.keep_spread(spread);
        self.count += other.count;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        self.sum_ns += other.sum_ns;
        self.clipped += other.clipped;
    }

    /// Exact mean in ns (sum / count); 0 when empty.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }

    /// Whether the standard deviation is kept (not a [`Histogram::counts_only`] histogram, nor
    /// a merge with one).
    pub fn keeps_spread(&self) -> bool {
        self.spread
    }

    /// Drops Welford's pair unless `keep`: a merge with a histogram that has none has none.
    fn keep_spread(&mut self, keep: bool) {
        if !keep {
            self.spread = false;
            self.welford_mean = 0.0;
            self.m2 = 0.0;
        }
    }

    /// Sample standard deviation in ns (divides by n - 1, as fio does); 0 below two values;
    /// NaN for a histogram that does not keep it ([`Histogram::counts_only`]).
    pub fn stddev(&self) -> f64 {
        if !self.spread {
            f64::NAN
        } else if self.count < 2 {
            0.0
        } else {
            (self.m2.max(0.0) / (self.count - 1) as f64).sqrt()
        }
    }

    /// Smallest value recorded, exact; 0 when empty.
    pub fn min(&self) -> u64 {
        if self.count == 0 { 0 } else { self.min_ns }
    }

    /// Largest value recorded, exact; 0 when empty.
    pub fn max(&self) -> u64 {
        self.max_ns
    }

    /// Exact sum of all values, in ns.
    pub fn sum(&self) -> u128 {
        self.sum_ns
    }

    /// Values at or above [`CLIP_NS`] (they sit in the last bucket; min, max and mean stay exact).
    pub fn clipped(&self) -> u64 {
        self.clipped
    }

    /// Percentile `p` (0..=100) with fio's semantics: the midpoint of the first bucket whose
    /// cumulative count reaches `p / 100 * count`. 0 when empty.
    ///
    /// For `p = 0` the first non-empty bucket is returned (fio never asks for it).
    pub fn percentile(&self, p: f64) -> u64 {
        self.percentiles(&[p])[0]
    }

    /// Several percentiles in one pass over the buckets; same semantics as
    /// [`Histogram::percentile`], results in the order of `ps`.
    pub fn percentiles(&self, ps: &[f64]) -> Vec<u64> {
        let mut out = vec![0u64; ps.len()];
        if self.count == 0 || ps.is_empty() {
            return out;
        }
        let mut order: Vec<usize> = (0..ps.len()).collect();
        order.sort_by(|&a, &b| ps[a].total_cmp(&ps[b]));
        let n = self.count as f64;
        let mut next = 0;
        let mut cumulative = 0u64;
        for (idx, &c) in self.bins.iter().enumerate() {
            if c == 0 {
                continue;
            }
            cumulative += c;
            while next < order.len() && cumulative as f64 >= ps[order[next]] / 100.0 * n {
                out[order[next]] = bucket_value(idx);
                next += 1;
            }
            if next == order.len() {
                return out;
            }
        }
        // Only percentiles above 100 get here; give them the largest bucket, as p = 100 would.
        let last = self.bins.iter().rposition(|&c| c > 0).unwrap_or(0);
        for &i in &order[next..] {
            out[i] = bucket_value(last);
        }
        out
    }

    /// Non-zero buckets in increasing order as `(bucket value in ns, count)`: fio's json+ `bins`.
    pub fn bins(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.bins
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c > 0)
            .map(|(idx, &c)| (bucket_value(idx), c))
    }

    /// Exact counts per fio coarse latency bucket (edges in [`LAT_UPPER_NS`]): the first
    /// [`LAT_N_NR`] are the nsec buckets, then [`LAT_U_NR`] usec, then [`LAT_M_NR`] msec.
    pub fn lat_bucket_counts(&self) -> &[u64; LAT_NR] {
        &self.lat_buckets
    }

    /// Values strictly below `ns`, estimated from the buckets: exact below 128 ns and on bucket
    /// edges; a bucket that straddles `ns` is split in proportion to the overlap.
    pub fn count_below(&self, ns: u64) -> f64 {
        let mut below = 0.0;
        for (idx, &c) in self.bins.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let (low, high) = bucket_range(idx);
            if high <= ns {
                below += c as f64;
            } else if low < ns {
                below += c as f64 * (ns - low) as f64 / (high - low) as f64;
            } else {
                break;
            }
        }
        below
    }

    /// Share (0..=1) of values strictly below `ns`, from [`Histogram::count_below`]; 0 when empty.
    pub fn fraction_below(&self, ns: u64) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.count_below(ns) / self.count as f64
        }
    }
}

/// Prints the summary, not the 1856 counters.
impl fmt::Debug for Histogram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Histogram")
            .field("count", &self.count)
            .field("min", &self.min())
            .field("max", &self.max())
            .field("mean", &self.mean())
            .field("stddev", &self.stddev())
            .field("clipped", &self.clipped)
            .finish_non_exhaustive()
    }
}

/// Serialises the summary and the non-zero bins (bucket value in ns → count), fio json+ style.
/// A [`Histogram`]'s whole state ([`super::exact`]): the non-zero buckets as (index, count),
/// the sum as decimal text (it is a `u128`), the Welford pair as `f64` bit patterns.
#[derive(Serialize, Deserialize)]
struct ExactHistogram {
    bins: Vec<(u32, u64)>,
    lat_buckets: Vec<u64>,
    count: u64,
    min_ns: u64,
    max_ns: u64,
    sum_ns: String,
    welford_mean: u64,
    m2: u64,
    clipped: u64,
    /// Written only for a histogram that does not keep its spread, so that every other
    /// histogram's exact form is what it was before the field existed.
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    spread: bool,
}

fn yes() -> bool {
    true
}

fn is_yes(b: &bool) -> bool {
    *b
}

impl Histogram {
    fn to_exact(&self) -> ExactHistogram {
        ExactHistogram {
            bins: (self.bins.iter().enumerate())
                .filter(|&(_, &c)| c > 0)
                .map(|(i, &c)| (i as u32, c))
                .collect(),
            lat_buckets: self.lat_buckets.to_vec(),
            count: self.count,
            min_ns: self.min_ns,
            max_ns: self.max_ns,
            sum_ns: self.sum_ns.to_string(),
            welford_mean: self.welford_mean.to_bits(),
            m2: self.m2.to_bits(),
            clipped: self.clipped,
            spread: self.spread,
        }
    }

    fn from_exact(e: ExactHistogram) -> Result<Histogram, String> {
        let mut h = Histogram::new();
        for (i, c) in e.bins {
            *h.bins
                .get_mut(i as usize)
                .ok_or_else(|| format!("histogram bucket {i} out of range"))? = c;
        }
        h.lat_buckets = e
            .lat_buckets
            .try_into()
            .map_err(|v: Vec<u64>| format!("{} latency buckets, expected {LAT_NR}", v.len()))?;
        h.count = e.count;
        h.min_ns = e.min_ns;
        h.max_ns = e.max_ns;
        h.sum_ns = e
            .sum_ns
            .parse()
            .map_err(|_| format!("bad sum `{}`", e.sum_ns))?;
        h.welford_mean = f64::from_bits(e.welford_mean);
        h.m2 = f64::from_bits(e.m2);
        h.clipped = e.clipped;
        h.spread = e.spread;
        Ok(h)
    }
}

/// Reads the exact form only ([`super::exact`]); the report form cannot be folded again.
impl<'de> Deserialize<'de> for Histogram {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Histogram::from_exact(ExactHistogram::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// The report form (count, min, max, mean, standard deviation, clipped and the non-empty
/// buckets by value), or inside [`super::exact::with_exact`] the whole state.
impl Serialize for Histogram {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if super::exact::is_exact() {
            return self.to_exact().serialize(serializer);
        }
        struct Bins<'a>(&'a Histogram);
        impl Serialize for Bins<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(None)?;
                for (value, count) in self.0.bins() {
                    map.serialize_entry(&value.to_string(), &count)?;
                }
                map.end()
            }
        }
        let mut s = serializer.serialize_struct("Histogram", 7)?;
        s.serialize_field("count", &self.count)?;
        s.serialize_field("min_ns", &self.min())?;
        s.serialize_field("max_ns", &self.max())?;
        s.serialize_field("mean_ns", &self.mean())?;
        s.serialize_field("stddev_ns", &self.stddev())?;
        s.serialize_field("clipped", &self.clipped)?;
        s.serialize_field("bins", &Bins(self))?;
        s.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table gives every bin's values the coarse bucket the edge search gives: at both
    /// ends of every bin (so a bin it calls whole is whole) and at every edge and its
    /// neighbours; and only a few bins straddle an edge.
    #[test]
    fn the_coarse_bucket_table_agrees_with_the_edge_search() {
        let mut straddling = 0;
        for (idx, &lat) in LAT_OF_BIN.iter().enumerate() {
            let (low, high) = bucket_range(idx);
            if lat == STRADDLES {
                straddling += 1;
                assert_ne!(
                    lat_bucket_index(low),
                    lat_bucket_index(high - 1),
                    "bin {idx}"
                );
            } else {
                assert_eq!(usize::from(lat), lat_bucket_index(low), "bin {idx}");
                assert_eq!(usize::from(lat), lat_bucket_index(high - 1), "bin {idx}");
            }
        }
        assert!(straddling < 32, "{straddling} bins straddle an edge");
        let mut h = Histogram::new();
        let mut expected = [0u64; LAT_NR];
        for &edge in &LAT_UPPER_NS {
            for ns in [edge - 1, edge, edge + 1, CLIP_NS + edge] {
                h.record(ns);
                expected[lat_bucket_index(ns)] += 1;
            }
        }
        assert_eq!(h.lat_buckets, expected);
    }

    /// splitmix64: a tiny deterministic generator so the tests need no RNG crate API.
    struct SplitMix(u64);
    impl SplitMix {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        /// Log-uniform-ish values spanning ns to seconds, like latencies.
        fn latency(&mut self) -> u64 {
            let bits = self.next() % 34;
            let mantissa = self.next();
            if bits == 0 {
                0
            } else {
                mantissa >> (64 - bits)
            }
        }
    }

    #[test]
    fn index_and_value_match_fio_on_fixed_points() {
        assert_eq!(PLAT_NR, 1856);
        // Exact below 128.
        for v in 0..128 {
            assert_eq!(bucket_index(v), v as usize);
            assert_eq!(bucket_value(v as usize), v);
        }
        assert_eq!(bucket_index(128), 128);
        assert_eq!(bucket_index(129), 128);
        assert_eq!(bucket_index(130), 129);
        assert_eq!(bucket_value(128), 129);
        // The spec's worked example.
        assert_eq!(bucket_value(650), 38_144);
        assert_eq!(bucket_index(38_144), 650);
        let (low, high) = bucket_range(650);
        assert_eq!((low, high), (37_888, 38_400));
        assert_eq!(bucket_index(low), 650);
        assert_eq!(bucket_index(high - 1), 650);
        assert_eq!(bucket_index(high), 651);
        // Top of the range and clipping.
        assert_eq!(bucket_index(CLIP_NS - 1), PLAT_NR - 1);
        assert_eq!(bucket_index(CLIP_NS), PLAT_NR - 1);
        assert_eq!(bucket_index(u64::MAX), PLAT_NR - 1);
        assert_eq!(bucket_range(PLAT_NR - 1).1, CLIP_NS);
    }

    #[test]
    fn every_value_lands_in_its_bucket_range_within_relative_error() {
        let mut rng = SplitMix(7);
        for _ in 0..100_000 {
            let v = rng.latency() % CLIP_NS;
            let idx = bucket_index(v);
            let (low, high) = bucket_range(idx);
            assert!(
                low <= v && v < high,
                "{v} not in [{low}, {high}) of bucket {idx}"
            );
            let mid = bucket_value(idx);
            assert!(mid.abs_diff(v) as f64 <= v as f64 / 128.0, "{v} -> {mid}");
        }
        // Buckets tile the range without gaps.
        for idx in 1..PLAT_NR {
            assert_eq!(bucket_range(idx - 1).1, bucket_range(idx).0, "gap at {idx}");
        }
    }

    #[test]
    fn percentiles_match_a_sorted_vec() {
        let mut rng = SplitMix(42);
        for &n in &[1usize, 2, 3, 10, 999, 20_000] {
            let mut h = Histogram::new();
            let mut samples: Vec<u64> = (0..n).map(|_| rng.latency()).collect();
            for &s in &samples {
                h.record(s);
            }
            samples.sort_unstable();
            let ps = [
                1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5,
                99.9, 99.95, 99.99, 100.0,
            ];
            let batch = h.percentiles(&ps);
            for (i, &p) in ps.iter().enumerate() {
                // The slow, obvious answer: the smallest sample with at least p% of samples at or
                // below it, i.e. rank ceil(p/100 * n).
                let target = p / 100.0 * n as f64;
                let rank = (1..=n).find(|&r| r as f64 >= target).unwrap();
                let exact = samples[rank - 1];
                let got = h.percentile(p);
                assert_eq!(got, batch[i]);
                assert_eq!(got, bucket_value(bucket_index(exact)), "n={n} p={p}");
                assert!(
                    got.abs_diff(exact) as f64 <= exact as f64 / 128.0,
                    "n={n} p={p}: {got} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn empty_histogram_reports_zeros() {
        let h = Histogram::new();
        assert_eq!(h.count(), 0);
        assert_eq!(h.percentile(99.0), 0);
        assert_eq!((h.min(), h.max(), h.mean(), h.stddev()), (0, 0, 0.0, 0.0));
        assert_eq!(h.bins().count(), 0);
        assert_eq!(h.fraction_below(1_000), 0.0);
    }

    #[test]
    fn summary_statistics_match_two_pass_computation() {
        let mut rng = SplitMix(3);
        let samples: Vec<u64> = (0..5_000).map(|_| rng.latency() % 50_000_000).collect();
        let mut h = Histogram::new();
        samples.iter().for_each(|&s| h.record(s));
        let n = samples.len() as f64;
        let mean = samples.iter().map(|&s| s as f64).sum::<f64>() / n;
        let var = samples
            .iter()
            .map(|&s| (s as f64 - mean).powi(2))
            .sum::<f64>()
            / (n - 1.0);
        assert_eq!(h.min(), *samples.iter().min().unwrap());
        assert_eq!(h.max(), *samples.iter().max().unwrap());
        assert_eq!(
            h.sum(),
            samples.iter().map(|&s| u128::from(s)).sum::<u128>()
        );
        assert!((h.mean() - mean).abs() <= mean * 1e-12);
        assert!((h.stddev() - var.sqrt()).abs() <= var.sqrt() * 1e-9);
    }

    /// Zeros in bulk, then other values, leave exactly what recording each in turn leaves;
    /// bulk zeros after a nonzero value are refused.
    #[test]
    fn zeros_in_bulk_equal_zeros_one_by_one() {
        let (mut bulk, mut one) = (Histogram::new(), Histogram::new());
        bulk.record_zeros(0);
        assert_eq!(bulk, one);
        bulk.record_zeros(1000);
        for _ in 0..1000 {
            one.record(0);
        }
        assert_eq!(bulk, one);
        for v in [0, 750, 12_345, 0, 9_999_999] {
            bulk.record(v);
            one.record(v);
        }
        assert_eq!(bulk, one);
        let refused = std::panic::catch_unwind(move || bulk.record_zeros(1));
        assert!(refused.is_err());
    }

    #[test]
    fn merge_equals_recording_everything() {
        let mut rng = SplitMix(11);
        let a: Vec<u64> = (0..3_000).map(|_| rng.latency()).collect();
        let b: Vec<u64> = (0..700).map(|_| rng.latency() / 3).collect();
        let (mut ha, mut hb, mut all) = (Histogram::new(), Histogram::new(), Histogram::new());
        a.iter().for_each(|&v| ha.record(v));
        b.iter().for_each(|&v| hb.record(v));
        a.iter().chain(&b).for_each(|&v| all.record(v));
        let mut merged = ha.clone();
        merged.merge(&hb);
        assert_eq!(merged.count(), all.count());
        assert_eq!(
            merged.bins().collect::<Vec<_>>(),
            all.bins().collect::<Vec<_>>()
        );
        assert_eq!(merged.lat_bucket_counts(), all.lat_bucket_counts());
        assert_eq!((merged.min(), merged.max()), (all.min(), all.max()));
        assert_eq!(merged.sum(), all.sum());
        assert_eq!(merged.clipped(), all.clipped());
        assert!((merged.stddev() - all.stddev()).abs() <= all.stddev() * 1e-9);
        // Merging into or from an empty histogram is the identity.
        let mut empty = Histogram::new();
        empty.merge(&all);
        assert_eq!(empty, {
            let mut e = all.clone();
            e.merge(&Histogram::new());
            e
        });
        assert_eq!(empty.percentile(99.0), all.percentile(99.0));
    }

    /// A counts-only histogram is a full one without the spread: the same buckets, extremes,
    /// sum and percentiles after the same values, a NaN standard deviation, and a merge with
    /// one keeps no spread either way round. Its exact form says so and reads back; a full
    /// histogram's exact form has no `spread` key.
    #[test]
    fn counts_only_keeps_everything_but_the_spread() {
        let mut rng = SplitMix(5);
        let values: Vec<u64> = (0..4_000).map(|_| rng.latency()).collect();
        let (mut full, mut counts) = (Histogram::new(), Histogram::counts_only());
        counts.record_zeros(3);
        full.record_zeros(3);
        for &v in &values {
            full.record(v);
            counts.record(v);
        }
        assert_eq!(
            full.bins().collect::<Vec<_>>(),
            counts.bins().collect::<Vec<_>>()
        );
        assert_eq!(full.lat_bucket_counts(), counts.lat_bucket_counts());
        assert_eq!(
            (
                full.count(),
                full.min(),
                full.max(),
                full.sum(),
                full.clipped()
            ),
            (
                counts.count(),
                counts.min(),
                counts.max(),
                counts.sum(),
                counts.clipped()
            )
        );
        assert_eq!(full.mean().to_bits(), counts.mean().to_bits());
        assert_eq!(full.percentile(99.99), counts.percentile(99.99));
        assert!(full.keeps_spread() && full.stddev() > 0.0);
        assert!(!counts.keeps_spread() && counts.stddev().is_nan());
        for (mut a, b) in [
            (full.clone(), counts.clone()),
            (counts.clone(), full.clone()),
            (Histogram::new(), counts.clone()),
            (Histogram::counts_only(), full.clone()),
        ] {
            let want = a.count() + b.count();
            a.merge(&b);
            assert!(!a.keeps_spread() && a.stddev().is_nan());
            assert_eq!(a.count(), want);
        }
        let text = crate::stats::exact::with_exact(|| serde_json::to_string(&counts)).unwrap();
        assert!(text.contains("\"spread\":false"), "{text}");
        let back: Histogram = serde_json::from_str(&text).unwrap();
        assert!(back == counts);
        let text = crate::stats::exact::with_exact(|| serde_json::to_string(&full)).unwrap();
        assert!(!text.contains("spread"), "{text}");
        let back: Histogram = serde_json::from_str(&text).unwrap();
        assert!(back == full);
    }

    #[test]
    fn clipping_counts_and_keeps_exact_extremes() {
        let mut h = Histogram::new();
        h.record(1_000);
        h.record(CLIP_NS - 1);
        h.record(CLIP_NS);
        h.record(40_000_000_000);
        assert_eq!(h.clipped(), 2);
        assert_eq!(h.count(), 4);
        assert_eq!(h.max(), 40_000_000_000);
        let bins: Vec<_> = h.bins().collect();
        assert_eq!(bins.len(), 2);
        assert_eq!(bins[1], (bucket_value(PLAT_NR - 1), 3));
        assert_eq!(h.percentile(100.0), bucket_value(PLAT_NR - 1));
    }

    #[test]
    fn coarse_latency_buckets_follow_fio_edges() {
        let cases = [
            (0, 0),
            (1, 0),
            (2, 1),
            (999, 9),
            (1_000, 10),
            (1_999, 10),
            (2_000, 11),
            (749_999, 18),
            (750_000, 19),
            (999_999, 19),
            (1_000_000, 20),
            (1_999_999_999, 30),
            (2_000_000_000, 31),
            (u64::MAX, 31),
        ];
        for (ns, idx) in cases {
            assert_eq!(lat_bucket_index(ns), idx, "{ns} ns");
        }
        let mut h = Histogram::new();
        [5, 760, 1_500, 3_000_000].iter().for_each(|&v| h.record(v));
        let c = h.lat_bucket_counts();
        assert_eq!((c[2], c[9], c[10], c[21]), (1, 1, 1, 1));
        assert_eq!(c.iter().sum::<u64>(), 4);
    }

    #[test]
    fn fraction_below_is_exact_on_bucket_edges() {
        let mut h = Histogram::new();
        (0..100u64).for_each(|v| h.record(v));
        (0..100u64).for_each(|_| h.record(38_000));
        assert_eq!(h.count_below(50), 50.0);
        assert_eq!(h.count_below(37_888), 100.0);
        assert_eq!(h.count_below(38_400), 200.0);
        assert!((h.fraction_below(38_144) - 0.75).abs() < 1e-12);
    }

    #[test]
    fn serialises_summary_and_bins() {
        let mut h = Histogram::new();
        h.record(100);
        h.record(38_000);
        h.record(38_001);
        let v = serde_json::to_value(&h).unwrap();
        assert_eq!(v["count"], 3);
        assert_eq!(v["bins"]["38144"], 2);
        assert_eq!(v["bins"]["100"], 1);
    }
}
