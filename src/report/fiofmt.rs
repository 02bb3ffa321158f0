//! fio's number formatting, reproduced so qsim's text reads like fio 3.x output: `num2str`
//! (`lib/num2str.c`), the unit choices of `display_lat` and `show_clat_percentiles`, the
//! percentile block and the `lat (usec)   :` lines (`stat.c`). Pure string building, no I/O.

use std::fmt::Write as _;

/// Unit suffix appended by [`num2str`] (fio's `enum n2s_unit`, without the bit variants).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum N2sUnit {
    /// No suffix (`IOPS=12.3k`).
    None,
    /// `/s`.
    PerSec,
    /// `B` (`94.2MiB`).
    Byte,
    /// `B/s` (`9648KiB/s`).
    BytePerSec,
}

impl N2sUnit {
    fn suffix(self) -> &'static str {
        match self {
            N2sUnit::None => "",
            N2sUnit::PerSec => "/s",
            N2sUnit::Byte => "B",
            N2sUnit::BytePerSec => "B/s",
        }
    }
}

/// fio's `num2str`: `num` in at most `maxlen` digits (the decimal point counts), dividing by 1000
/// (`pow2 = false`, prefixes k M G T P) or 1024 (`pow2 = true`, Ki Mi Gi Ti Pi) until it fits.
///
/// `base` says what one unit of `num` already is (1, or 1024 for a number of KiB). When a
/// division happened and room is left, decimals show the remainder, formatted with `%.{d}f`
/// and cut after the point; with no room the value is rounded half up. Like fio, a remainder
/// that rounds to 1.0 loses its carry (`x.0`); that is fio's output, so qsim keeps it.
pub fn num2str(num: u64, maxlen: usize, base: u64, pow2: bool, unit: N2sUnit) -> String {
    const SI: [&str; 6] = ["", "k", "M", "G", "T", "P"];
    const IEC: [&str; 6] = ["", "Ki", "Mi", "Gi", "Ti", "Pi"];
    let prefixes = if pow2 { IEC } else { SI };
    let thousand: u64 = if pow2 { 1024 } else { 1000 };

    let mut post_index = 0usize;
    let mut base = base;
    while base > 1 {
        base /= thousand;
        post_index += 1;
    }

    let mut num = num;
    let mut modulo: Option<u64> = None;
    let mut carry = false;
    while post_index < prefixes.len() {
        if digits(num) <= maxlen {
            break;
        }
        let m = num % thousand;
        num /= thousand;
        carry = m >= thousand / 2;
        modulo = Some(m);
        post_index += 1;
    }

    let done = |num: u64, post_index: usize| {
        let prefix = prefixes.get(post_index).copied().unwrap_or("");
        format!("{num}{prefix}{}", unit.suffix())
    };

    let Some(modulo) = modulo else {
        return done(num, post_index);
    };
    let room = maxlen as isize - digits(num) as isize;
    if room <= 1 {
        return done(if carry { num + 1 } else { num }, post_index);
    }
    let decimals = (room - 1) as usize;
    let fraction = format!("{:.*}", decimals, modulo as f64 / thousand as f64);
    // "0.3" → "3"; a remainder rounding to "1.0" keeps "0", as fio's &tmp[2] does.
    let cut = &fraction[2..];
    format!("{num}.{cut}{}{}", prefixes[post_index], unit.suffix())
}

/// Decimal digits of `n` (1 for 0).
fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// The time unit fio picks for a latency line or a percentile block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    /// Nanoseconds.
    Nsec,
    /// Microseconds.
    Usec,
    /// Milliseconds.
    Msec,
}

impl TimeUnit {
    /// fio's label: `nsec`, `usec` or `msec`.
    pub fn label(self) -> &'static str {
        match self {
            TimeUnit::Nsec => "nsec",
            TimeUnit::Usec => "usec",
            TimeUnit::Msec => "msec",
        }
    }
    /// Nanoseconds per unit.
    pub fn divisor(self) -> u64 {
        match self {
            TimeUnit::Nsec => 1,
            TimeUnit::Usec => 1_000,
            TimeUnit::Msec => 1_000_000,
        }
    }
}

/// Unit of a `slat`/`clat`/`lat` line (fio's `nsec_to_msec`, then `nsec_to_usec`): msec when
/// min > 2 ms, max > 99.999999 ms and stddev > 1 ms; usec when min > 2 µs, max > 99.999 µs and
/// stddev > 1 µs; else nsec.
pub fn lat_line_unit(min_ns: u64, max_ns: u64, stddev_ns: f64) -> TimeUnit {
    if min_ns > 2_000_000 && max_ns > 99_999_999 && stddev_ns > 1_000_000.0 {
        TimeUnit::Msec
    } else if min_ns > 2_000 && max_ns > 99_999 && stddev_ns > 1_000.0 {
        TimeUnit::Usec
    } else {
        TimeUnit::Nsec
    }
}

/// Unit of a percentile block, from the smallest and largest percentile *values*.
pub fn percentile_unit(min_ns: u64, max_ns: u64) -> TimeUnit {
    if min_ns > 2_000_000 && max_ns > 99_999_999 {
        TimeUnit::Msec
    } else if min_ns > 2_000 && max_ns > 99_999 {
        TimeUnit::Usec
    } else {
        TimeUnit::Nsec
    }
}

/// One fio latency line: `    <name> (<unit>): min=…, max=…, avg=%5.02f, stdev=%5.02f\n`.
///
/// min and max are divided (truncating) into the unit and printed through 6-digit
/// [`num2str`]; `name` is `slat`, `clat` or ` lat` (padded by the caller).
pub fn lat_line(name: &str, min_ns: u64, max_ns: u64, mean_ns: f64, stddev_ns: f64) -> String {
    let unit = lat_line_unit(min_ns, max_ns, stddev_ns);
    let d = unit.divisor();
    format!(
        "    {name} ({}): min={}, max={}, avg={:5.2}, stdev={:5.2}\n",
        unit.label(),
        num2str(min_ns / d, 6, 1, false, N2sUnit::None),
        num2str(max_ns / d, 6, 1, false, N2sUnit::None),
        mean_ns / d as f64,
        stddev_ns / d as f64,
    )
}

/// fio's percentile block (`show_clat_percentiles`) for percentiles `list` (ascending) whose
/// values are `values_ns`; `name` is `clat` or `lat`, `precision` the decimals of the list.
///
/// Returns the header line and the `     |` lines, each ending in a newline; empty when there
/// is nothing to show.
pub fn percentile_block(name: &str, list: &[f64], values_ns: &[u64], precision: usize) -> String {
    if list.is_empty() || list.len() != values_ns.len() {
        return String::new();
    }
    let min_v = values_ns.iter().copied().min().unwrap_or(0);
    let max_v = values_ns.iter().copied().max().unwrap_or(0);
    let unit = percentile_unit(min_v, max_v);
    let scale_down = match unit {
        TimeUnit::Nsec => 0,
        TimeUnit::Usec => 1,
        TimeUnit::Msec => 2,
    };
    // fio sizes the column from the truncated maximum although entries round up; log10(0)
    // gives fio a width below 5, hence the max.
    let scaled_max = max_v / unit.divisor();
    let time_width = if scaled_max == 0 {
        5
    } else {
        digits(scaled_max).max(5)
    };
    let per_line = (80 - 7) / (precision + 10 + time_width);

    let mut out = format!("    {name} percentiles ({}):\n     |", unit.label());
    for (j, (&p, &v)) in list.iter().zip(values_ns).enumerate() {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        let is_last = j == list.len() - 1;
        let mut v = v;
        for _ in 0..scale_down {
            v = v.div_ceil(1_000);
        }
        let _ = write!(
            out,
            " {:>pw$.prec$}th=[{:>tw$}]{}",
            p,
            v,
            if is_last { '\n' } else { ',' },
            pw = precision + 3,
            prec = precision,
            tw = time_width,
        );
        if is_last {
            break;
        }
        if j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
    out
}

/// Labels of fio's nanosecond and microsecond latency lines.
pub const LAT_LABELS_NU: [&str; 10] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
];
/// Labels of fio's millisecond latency line.
pub const LAT_LABELS_M: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];

/// fio's `show_lat`: the non-zero shares (in percent) as `  lat (<unit>)   : 2=…%, 4=…%`, at
/// most five per line with the prefix repeated. Empty when every share is zero.
pub fn lat_share_lines(unit: TimeUnit, labels: &[&str], shares_pct: &[f64]) -> String {
    let mut out = String::new();
    let mut on_line = 0;
    for (label, &share) in labels.iter().zip(shares_pct) {
        if share <= 0.0 {
            continue;
        }
        if on_line == 0 {
            let _ = write!(out, "  lat ({})   : ", unit.label());
        } else {
            out.push_str(", ");
        }
        let _ = write!(out, "{label}={share:3.2}%");
        on_line += 1;
        if on_line == 5 {
            out.push('\n');
            on_line = 0;
        }
    }
    if on_line != 0 {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn num2str_follows_fio() {
        let n = |v, len| num2str(v, len, 1, false, N2sUnit::None);
        assert_eq!(n(0, 4), "0");
        assert_eq!(n(2412, 4), "2412");
        assert_eq!(n(9999, 4), "9999");
        assert_eq!(n(12_345, 4), "12.3k");
        assert_eq!(n(123_456, 4), "123k");
        // No room for decimals: rounded half up.
        assert_eq!(n(123_500, 4), "124k");
        assert_eq!(n(1_234_567, 4), "1235k");
        assert_eq!(n(10_000, 4), "10.0k");
        // fio's lost carry: 0.96 formats as "1.0" and the "0" after the point is kept.
        assert_eq!(n(12_960, 4), "12.0k");
        // Six digits, as display_lat uses for min/max.
        assert_eq!(n(37_724_112, 6), "37724k");
        assert_eq!(n(999_999, 6), "999999");
        assert_eq!(n(1_000_000, 6), "1000.0k");
        // IEC and units.
        assert_eq!(num2str(98_795_520, 4, 1, true, N2sUnit::Byte), "94.2MiB");
        assert_eq!(
            num2str(9_879_552, 4, 1, true, N2sUnit::BytePerSec),
            "9648KiB/s"
        );
        assert_eq!(
            num2str(9_879_552, 4, 1, false, N2sUnit::BytePerSec),
            "9880kB/s"
        );
        assert_eq!(num2str(512, 4, 1, true, N2sUnit::Byte), "512B");
        // A base of 1024 starts at Ki.
        assert_eq!(num2str(4, 4, 1024, true, N2sUnit::Byte), "4KiB");
        assert_eq!(num2str(42, 4, 1, false, N2sUnit::PerSec), "42/s");
    }

    #[test]
    fn lat_line_unit_rules() {
        // All three conditions are needed.
        assert_eq!(lat_line_unit(812, 48_213, 903.0), TimeUnit::Nsec);
        assert_eq!(lat_line_unit(3_000, 1_650_000, 27_930.0), TimeUnit::Usec);
        assert_eq!(lat_line_unit(3_000, 1_650_000, 999.0), TimeUnit::Nsec);
        assert_eq!(lat_line_unit(2_000, 1_650_000, 5_000.0), TimeUnit::Nsec);
        assert_eq!(lat_line_unit(3_000, 99_999, 5_000.0), TimeUnit::Nsec);
        assert_eq!(
            lat_line_unit(3_000_000, 212_000_000, 21_070_000.0),
            TimeUnit::Msec
        );
        assert_eq!(
            lat_line_unit(3_000_000, 99_999_999, 21_070_000.0),
            TimeUnit::Usec
        );
        assert_eq!(percentile_unit(52_000, 40_109_000), TimeUnit::Usec);
        assert_eq!(percentile_unit(3_500_000, 211_000_000), TimeUnit::Msec);
        assert_eq!(percentile_unit(1_500, 211_000_000), TimeUnit::Nsec);
    }

    #[test]
    fn lat_line_formats_like_fio() {
        assert_eq!(
            lat_line("slat", 812, 48_213, 2_114.37, 903.12),
            "    slat (nsec): min=812, max=48213, avg=2114.37, stdev=903.12\n"
        );
        assert_eq!(
            lat_line("clat", 38_112, 41_870_336, 658_310.0, 1_874_200.0),
            "    clat (usec): min=38, max=41870, avg=658.31, stdev=1874.20\n"
        );
        assert_eq!(
            lat_line(" lat", 3_100_000, 212_400_000, 19_280_000.0, 21_070_000.0),
            "     lat (msec): min=3, max=212, avg=19.28, stdev=21.07\n"
        );
        assert_eq!(
            lat_line("clat", 5, 7, 6.0, 1.0),
            "    clat (nsec): min=5, max=7, avg= 6.00, stdev= 1.00\n"
        );
    }

    #[test]
    fn percentile_block_matches_hand_built_text() {
        let list = [
            1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
            99.95, 99.99,
        ];
        let values = [
            51_968, 70_144, 86_528, 115_200, 146_432, 179_200, 220_160, 272_384, 370_688, 569_344,
            1_122_304, 2_039_808, 8_454_144, 13_828_096, 26_345_472, 31_326_208, 40_108_032,
        ];
        let expected = "    clat percentiles (usec):
     |  1.00th=[   52],  5.00th=[   71], 10.00th=[   87], 20.00th=[  116],
     | 30.00th=[  147], 40.00th=[  180], 50.00th=[  221], 60.00th=[  273],
     | 70.00th=[  371], 80.00th=[  570], 90.00th=[ 1123], 95.00th=[ 2040],
     | 99.00th=[ 8455], 99.50th=[13829], 99.90th=[26346], 99.95th=[31327],
     | 99.99th=[40109]
";
        assert_eq!(percentile_block("clat", &list, &values, 2), expected);

        // A six-digit column leaves room for only four entries as well, but widens them.
        let wide = percentile_block("lat", &[50.0, 99.0], &[3_000, 123_456_789], 2);
        assert_eq!(
            wide,
            "    lat percentiles (usec):\n     | 50.00th=[     3], 99.00th=[123457]\n"
        );
        assert_eq!(percentile_block("clat", &[], &[], 2), "");
    }

    #[test]
    fn lat_share_lines_wrap_at_five() {
        let shares = [0.6, 8.73, 27.67, 14.33, 4.0, 3.67, 0.0, 0.0, 0.0, 0.0];
        let labels = ["50", "100", "250", "500", "750", "1000", "a", "b", "c", "d"];
        assert_eq!(
            lat_share_lines(TimeUnit::Usec, &labels, &shares),
            "  lat (usec)   : 50=0.60%, 100=8.73%, 250=27.67%, 500=14.33%, 750=4.00%\n  lat (usec)   : 1000=3.67%\n"
        );
        assert_eq!(
            lat_share_lines(TimeUnit::Msec, &LAT_LABELS_M, &[0.0; 12]),
            ""
        );
    }
}
