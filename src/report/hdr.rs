//! HdrHistogram's files of a run's completion latencies, written beside fio's in
//! `--fio-dir` ([`super::fiodir`]):
//!
//! - `<prefix>_clat_<dir>.hgrm`: HdrHistogram's percentile distribution text (what
//!   `outputPercentileDistribution` prints and HdrHistogram's online plotter and users' scripts
//!   read): columns `Value Percentile TotalCount 1/(1-Percentile)`, values in milliseconds,
//!   five steps per halving of the distance to 100 %, then the `#[Mean = …]` footer.
//! - `<prefix>_clat.hlog`: an HdrHistogram interval log (one interval covering the measured
//!   window per direction, tagged `read` or `write`, each a V2 deflate-compressed histogram in
//!   ns), which the `hdrhistogram` crate, HdrHistogram's Java `HistogramLogProcessor` and
//!   HdrHistogram's other ports load.
//!
//! Both are built from the report's pooled clat buckets (fio's scheme, within 0.78 %): each
//! bucket's count is recorded at its midpoint into an HdrHistogram of 3 significant digits
//! (1 ns to 2^35 ns), so the HdrHistogram percentiles are the report's to within 0.1 %.

use super::LatencySummary;
use crate::stats::histogram::CLIP_NS;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use std::fmt::Write as _;
use std::io;
use std::time::Duration;

/// Significant digits of the HdrHistogram (relative resolution 2^-10, about 0.1 %).
pub const SIGFIG: u8 = 3;

/// ns per unit of the `.hgrm` values (milliseconds, the plotter's axis unit).
const HGRM_UNIT_NS: f64 = 1e6;

/// The HdrHistogram of `clat`'s buckets, each counted at its midpoint (`None` when it has no
/// bucket to record, or one out of range).
pub fn histogram(clat: &LatencySummary) -> Option<Histogram<u64>> {
    if clat.bins.is_empty() {
        return None;
    }
    let mut h = Histogram::<u64>::new_with_bounds(1, 2 * CLIP_NS, SIGFIG).ok()?;
    for &(value, count) in &clat.bins {
        h.record_n(value.clamp(1, 2 * CLIP_NS), count).ok()?;
    }
    Some(h)
}

/// HdrHistogram's percentile distribution text of `h`, values in ms.
pub fn hgrm(h: &Histogram<u64>) -> String {
    let ms = |v: u64| v as f64 / HGRM_UNIT_NS;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:>12} {:>14} {:>10} {:>14}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    let mut total = 0u64;
    for v in h.iter_quantiles(5) {
        let q = v.quantile_iterated_to();
        total += v.count_since_last_iteration();
        let value = ms(v.value_iterated_to());
        if q < 1.0 {
            let _ = writeln!(
                s,
                "{value:12.6} {q:2.12} {total:10} {:14.2}",
                1.0 / (1.0 - q)
            );
        } else {
            let _ = writeln!(s, "{value:12.6} {q:2.12} {total:10}");
        }
    }
    let (mean, sd) = (h.mean() / HGRM_UNIT_NS, h.stdev() / HGRM_UNIT_NS);
    let _ = writeln!(s, "#[Mean    = {mean:12.6}, StdDeviation   = {sd:12.6}]");
    let _ = writeln!(
        s,
        "#[Max     = {:12.6}, Total count    = {:12}]",
        ms(h.max()),
        h.len()
    );
    // HdrHistogram's sub-bucket count: the power of two that holds 2 × 10^SIGFIG.
    let sub_buckets = (2 * 10u64.pow(u32::from(SIGFIG))).next_power_of_two();
    let _ = writeln!(
        s,
        "#[Buckets = {:12}, SubBuckets     = {:12}]",
        h.buckets(),
        sub_buckets
    );
    s
}

/// An HdrHistogram interval log of `dirs` (tag, histogram), each one interval from 0 to
/// `measured_ns`, written with a fixed base time (the epoch), so it reproduces byte for byte.
pub fn hlog(dirs: &[(&str, &Histogram<u64>)], measured_ns: u64) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    let bad = |e: String| io::Error::other(e);
    {
        let mut w = IntervalLogWriterBuilder::new()
            .add_comment("qsim: completion latency (clat) per direction, ns, pooled replications")
            .with_base_time(std::time::UNIX_EPOCH)
            .with_max_value_divisor(HGRM_UNIT_NS)
            .begin_log_with(&mut buf, &mut serializer)
            .map_err(|e| bad(e.to_string()))?;
        for (tag, h) in dirs {
            let tag = Tag::new(tag).ok_or_else(|| bad(format!("bad tag {tag}")))?;
            w.write_histogram(
                h,
                Duration::ZERO,
                Duration::from_nanos(measured_ns),
                Some(tag),
            )
            .map_err(|e| bad(format!("{e:?}")))?;
        }
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Histogram as FioHistogram;
    use hdrhistogram::serialization::Deserializer;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    fn clat() -> LatencySummary {
        let mut h = FioHistogram::new();
        for i in 1..=10_000u64 {
            h.record(40_000 + i * i * 7);
        }
        // As the report builds a block's summary, bins kept (json+).
        LatencySummary::from_histogram(&h, Some(&[50.0, 90.0, 99.0, 99.9]), true)
    }

    /// The interval log loads back with the crate and gives the fio percentiles within 0.1 %.
    #[test]
    fn the_interval_log_loads_and_gives_the_percentiles_back() {
        let c = clat();
        let h = histogram(&c).unwrap();
        let log = hlog(&[("read", &h)], 5_000_000_000).unwrap();
        let text = String::from_utf8(log.clone()).unwrap();
        assert!(text.contains("#[BaseTime: 0.000"), "{text}");
        let mut found = 0;
        for entry in IntervalLogIterator::new(&log) {
            let LogEntry::Interval(iv) = entry.unwrap() else {
                continue;
            };
            assert_eq!(iv.tag().unwrap().as_str(), "read");
            assert_eq!(iv.duration(), Duration::from_secs(5));
            use base64::Engine as _;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(iv.encoded_histogram())
                .unwrap();
            let back: Histogram<u64> = Deserializer::new()
                .deserialize(&mut bytes.as_slice())
                .unwrap();
            assert_eq!(back.len(), c.n);
            for (p, &want) in [50.0, 90.0, 99.0, 99.9].iter().zip(&c.percentiles_ns) {
                let got = back.value_at_quantile(p / 100.0);
                assert!(
                    got.abs_diff(want) <= want / 1000 + 1,
                    "p{p}: {got} vs {want}"
                );
            }
            found += 1;
        }
        assert_eq!(found, 1);
    }

    #[test]
    fn the_percentile_text_has_hdrhistograms_columns_and_footer() {
        let h = histogram(&clat()).unwrap();
        let text = hgrm(&h);
        let mut lines = text.lines();
        let head: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
        assert_eq!(
            head,
            ["Value", "Percentile", "TotalCount", "1/(1-Percentile)"]
        );
        let rows: Vec<Vec<f64>> = text
            .lines()
            .filter(|l| !l.starts_with('#') && l.trim_start().starts_with(char::is_numeric))
            .map(|l| l.split_whitespace().map(|v| v.parse().unwrap()).collect())
            .collect();
        assert!(
            rows.windows(2)
                .all(|w| w[0][1] <= w[1][1] && w[0][0] <= w[1][0])
        );
        let last = rows.last().unwrap();
        assert_eq!((last[1], last[2], last.len()), (1.0, 10_000.0, 3));
        assert!(text.contains("#[Mean    = "), "{text}");
        assert!(text.contains("Total count    =        10000]"), "{text}");
        assert!(text.contains("SubBuckets     =         2048]"), "{text}");
    }
}
