//! The min/low/high watermarks of one lowmem zone, from the memory size: `min_free_kbytes`
//! (`init_per_zone_wmark_min` in `mm/page_alloc.c`) and the marks `setup_per_zone_wmarks` sets
//! from it (2.6.32 and 5.9; a single lowmem zone takes all of `pages_min`, its
//! `lowmem_reserve` is 0; the 5.9 watermark boost is not modelled). docs/model/memory.md §2-§3.
//! The check that reads them is [`super::zone::zone_watermark_ok`].

/// The 5.9 default of `vm.watermark_scale_factor` (in units of 1/10000 of the zone).
pub const DEFAULT_WATERMARK_SCALE_FACTOR: u64 = 10;

/// Kilobytes per page.
const PAGE_KB: u64 = 4;

/// Which kernel's rules compute `min_free_kbytes` and the watermarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatermarkKernel {
    /// 2.6.32 (docs/model/memory.md §2–§3; 2.6.31 is the same): `min_free_kbytes` clamped to
    /// [128, 65536] kB, `low = 1.25·min`, `high = 1.5·min`.
    V2_6_32,
    /// 5.9: `min_free_kbytes` clamped to [128, 262144] kB; the low/high distance above min is
    /// the larger of `min/4` and `managed · watermark_scale_factor / 10000`.
    V5_9,
}

/// Integer square root (the largest `r` with `r² ≤ n`), as the kernel's `int_sqrt`.
fn int_sqrt(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    // Start from the float estimate and correct it: exact for every u64.
    let mut r = (n as f64).sqrt() as u64;
    while r.checked_mul(r).is_none_or(|sq| sq > n) {
        r -= 1;
    }
    while (r + 1).checked_mul(r + 1).is_some_and(|sq| sq <= n) {
        r += 1;
    }
    r
}

/// The kernel's default `min_free_kbytes` for `lowmem_kb` kilobytes of buffer-usable low
/// memory: `int_sqrt(16 · lowmem_kB)`, clamped to [128, 65536] kB (2.6.32) or [128, 262144] kB
/// (5.9); docs/model/memory.md §2. The kernel's code, not its comment table: for 8 GiB the code
/// gives 11585 where the kernel's comment says 11584.
pub fn min_free_kbytes(lowmem_kb: u64, kernel: WatermarkKernel) -> u64 {
    let cap = match kernel {
        WatermarkKernel::V2_6_32 => 65_536,
        WatermarkKernel::V5_9 => 262_144,
    };
    int_sqrt(lowmem_kb.saturating_mul(16)).clamp(128, cap)
}

/// Which of a zone's three watermarks an allocation is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// `WMARK_MIN`: the slow path's floor (before the HIGH/HARDER reductions).
    Min,
    /// `WMARK_LOW`: the fast path's floor; missing it wakes kswapd.
    Low,
    /// `WMARK_HIGH`: where kswapd stops reclaiming.
    High,
}

/// A zone's watermarks, in pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watermarks {
    /// `WMARK_MIN`.
    pub min: u64,
    /// `WMARK_LOW`.
    pub low: u64,
    /// `WMARK_HIGH`.
    pub high: u64,
}

impl Watermarks {
    /// 2.6.32's marks for the only lowmem zone: `min = min_free_kbytes / 4` pages,
    /// `low = min + min/4`, `high = min + min/2` (integer division, as the kernel's shifts).
    pub fn v2_6_32(min_free_kbytes: u64) -> Self {
        let min = min_free_kbytes / PAGE_KB;
        Watermarks {
            min,
            low: min + min / 4,
            high: min + min / 2,
        }
    }

    /// 5.9's marks for the only lowmem zone of `managed_pages` pages: `min` as in 2.6.32,
    /// `delta = max(min/4, managed · scale_factor / 10000)`, `low = min + delta`,
    /// `high = min + 2·delta`.
    pub fn v5_9(min_free_kbytes: u64, managed_pages: u64, scale_factor: u64) -> Self {
        let min = min_free_kbytes / PAGE_KB;
        // mult_frac(managed, scale_factor, 10000) without overflow.
        let scaled = (managed_pages / 10_000) * scale_factor
            + (managed_pages % 10_000) * scale_factor / 10_000;
        let delta = (min / 4).max(scaled);
        Watermarks {
            min,
            low: min + delta,
            high: min + 2 * delta,
        }
    }

    /// The marks of `kernel` for a zone of `managed_pages` pages (5.9 with the default
    /// [`DEFAULT_WATERMARK_SCALE_FACTOR`]).
    pub fn for_kernel(kernel: WatermarkKernel, min_free_kbytes: u64, managed_pages: u64) -> Self {
        match kernel {
            WatermarkKernel::V2_6_32 => Self::v2_6_32(min_free_kbytes),
            WatermarkKernel::V5_9 => Self::v5_9(
                min_free_kbytes,
                managed_pages,
                DEFAULT_WATERMARK_SCALE_FACTOR,
            ),
        }
    }

    /// The number of pages of one mark.
    pub fn get(&self, mark: Mark) -> u64 {
        match mark {
            Mark::Min => self.min,
            Mark::Low => self.low,
            Mark::High => self.high,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KB: u64 = 1;
    const MB: u64 = 1024 * KB;
    const GB: u64 = 1024 * MB;

    #[test]
    fn int_sqrt_is_exact() {
        for n in [0, 1, 2, 3, 4, 15, 16, 17, 99, 100, 101, u64::MAX] {
            let r = int_sqrt(n);
            assert!(r * r <= n, "{n}");
            assert!((r + 1).checked_mul(r + 1).is_none_or(|sq| sq > n), "{n}");
        }
    }

    #[test]
    fn min_free_kbytes_matches_the_model_table() {
        let table = [
            (16 * MB, 512),
            (64 * MB, 1024),
            (256 * MB, 2048),
            (GB, 4096),
            (2 * GB, 5792),
            (4 * GB, 8192),
            // The kernel's own comment says 11584, but its code,
            // int_sqrt(16 · 8388608) = int_sqrt(134217728), is 11585 (11585² = 134212225).
            (8 * GB, 11585),
            (16 * GB, 16384),
        ];
        for (lowmem, want) in table {
            for kernel in [WatermarkKernel::V2_6_32, WatermarkKernel::V5_9] {
                assert_eq!(
                    min_free_kbytes(lowmem, kernel),
                    want,
                    "{lowmem} kB {kernel:?}"
                );
            }
        }
    }

    #[test]
    fn min_free_kbytes_is_clamped_per_kernel() {
        assert_eq!(min_free_kbytes(0, WatermarkKernel::V2_6_32), 128);
        assert_eq!(min_free_kbytes(MB, WatermarkKernel::V5_9), 128);
        // 1 TiB: sqrt(16 · 2^30) = 131072.
        assert_eq!(min_free_kbytes(1024 * GB, WatermarkKernel::V2_6_32), 65_536);
        assert_eq!(min_free_kbytes(1024 * GB, WatermarkKernel::V5_9), 131_072);
        assert_eq!(
            min_free_kbytes(64 * 1024 * GB, WatermarkKernel::V5_9),
            262_144
        );
    }

    #[test]
    fn laptop_watermarks_2_6_32() {
        let m = Watermarks::v2_6_32(min_free_kbytes(2 * GB, WatermarkKernel::V2_6_32));
        assert_eq!(
            m,
            Watermarks {
                min: 1448,
                low: 1810,
                high: 2172
            }
        );
        assert_eq!(
            m,
            Watermarks::for_kernel(WatermarkKernel::V2_6_32, 5792, 1 << 19)
        );
    }

    #[test]
    fn watermarks_5_9_use_the_scale_factor_when_it_is_larger() {
        // 2 GiB = 524288 pages: 524288 · 10 / 10000 = 524 > 1448/4 = 362.
        let m = Watermarks::for_kernel(WatermarkKernel::V5_9, 5792, 1 << 19);
        assert_eq!(
            m,
            Watermarks {
                min: 1448,
                low: 1448 + 524,
                high: 1448 + 2 * 524
            }
        );
        // A small zone: min/4 wins, and the marks match 2.6.32's low.
        let small = Watermarks::v5_9(5792, 100_000, DEFAULT_WATERMARK_SCALE_FACTOR);
        assert_eq!(small.low, 1810);
        assert_eq!(small.high, 1448 + 2 * 362);
    }
}
