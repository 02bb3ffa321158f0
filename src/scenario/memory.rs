//! `memory:`: one lowmem zone's size and starting layout and dm-crypt's pools; and its
//! `qsim check` rows. The GFP_ATOMIC streams are [`super::atomic`].
//!
//! Defaults, each with its reason (docs/model):
//!
//! | field | default | why |
//! |---|---|---|
//! | `memory` | absent: unlimited memory | every scenario written before the memory model runs unchanged |
//! | `memory.preset` | none | `mel-512mb`: ram 512 MiB, unreclaimable 64 MiB (32 MiB mapped), swap 2 GiB at 5 GiB: Mel Gorman's 2009 machines [layout assumed] |
//! | `memory.swap` | 0: no swap | anonymous memory is then never reclaimed |
//! | `memory.swap_offset` | 5 GiB | after a 5 GiB filesystem volume [assumed] |
//! | `memory.swappiness` | 60 | the kernel's `vm_swappiness` |
//! | `memory.min_free_kbytes` | `int_sqrt(16·ram_kB)` clamped to [128, 65536] (5792 for 2 GiB) | the kernel's own boot-time value, 2.6.32 |
//! | `memory.mapped` | half of `unreclaimable` | mapped, referenced pages sit on the file LRU: reclaim scans and rotates them [assumed] |
//! | `memory.unreclaimable` | half of `ram`, rounded down to 4 KiB | kernel + anonymous memory of a busy desktop without swap [assumed] |
//! | `memory.page_cache` | `ram − unreclaimable − 16·min` pages | the run starts with free = 16·min, far above high, so pressure comes from the workloads |
//! | `memory.coalesce` | 0.5 | halfway between a perfect buddy allocator (1) and no merging (0) [assumed] |
//! | `memory.scan_cost` | 200 ns per page | order of magnitude of an LRU scan step on 2009 hardware [assumed] |
//! | `memory.page_pool` | 32 pages | dm-crypt's `MIN_POOL_PAGES` |
//! | `memory.min_bio_pages` | 8 | dm-crypt's `MIN_BIO_PAGES`: bounce pages a clone may wait for |
//!
//! Memory amounts (`ram`, `unreclaimable`, `page_cache`) must be whole 4 KiB pages; `ram` lies in
//! 64 MiB..=64 GiB; `min_free_kbytes` in 128..=ram/32; `unreclaimable + page_cache` and the
//! `page_pool` reserve (allocated from the zone at boot too) must leave at least the high
//! watermark (1.5·min pages) free at the start; the default `page_cache` is cut to fit.

use super::Error;
use super::atomic::{MAX_ATOMIC_STREAMS, RawAtomic, atomic_stream, describe_atomic};
use super::check::{Checker, Zero, at, loc, val};
use super::describe::{Rows, row};
use super::schema::{Capped, Field, names, raw_section};
use super::types::*;
use super::units::{Duration, Size, format_bytes, trim_float};
use crate::engine::SimDuration;
use crate::model::base::physics::{atomic_floor, mempool_floor};
use crate::model::mm::zone::{WatermarkKernel, Watermarks, min_free_kbytes};
use serde_saphyr::{Location, Spanned};

/// Page size: every memory amount is a whole number of pages.
pub const PAGE: u64 = 4096;
/// Smallest and largest `memory.ram`.
pub const RAM_RANGE: (u64, u64) = (64 << 20, 64 << 30);
/// Free memory at the start when `page_cache` is not given, in multiples of the min watermark.
pub const DEFAULT_FREE_MINS: u64 = 16;

names! {
    /// `memory.preset`.
    pub enum MemoryPresetName {
        /// Mel Gorman's 2009 test machines booted with mem=512MB, 2 GiB swap inside dm-crypt.
        Mel512 = "mel-512mb",
    }
}

/// The `mel-512mb` preset's defaults: ram, unreclaimable, mapped, swap, bytes. The machine
/// booted with `mem=512MB`; its LVM on dm-crypt held a 2 GiB swap volume (Message-ID
/// 1258054235-3208-1-git-send-email-mel@csn.ul.ie); the kernel, daemons and desktop hold
/// 64 MiB, half of it mapped [assumed]; the swap volume follows a 5 GiB ext3 volume.
pub const MEL_512MB: [u64; 4] = [512 << 20, 64 << 20, 32 << 20, 2 << 30];

raw_section! {
    /// `memory:`.
    pub struct RawMemory {
        /// A machine preset whose values the other fields override.
        [value] preset: MemoryPresetName,
        /// Size of the zone (required without a preset).
        [value] ram: Size,
        /// `min_free_kbytes`, in kB.
        [value] min_free_kbytes: u64,
        /// Memory that never becomes free.
        [value] unreclaimable: Size,
        /// The part of `unreclaimable` on the file LRU (scanned, never freed).
        [value] mapped: Size,
        /// Clean page cache at the start.
        [value] page_cache: Size,
        /// Probability that a freed block merges with a free buddy.
        [value] coalesce: f64,
        /// Reclaim's CPU cost per page scanned.
        [value] scan_cost: Duration,
        /// dm-crypt's page_pool reserve, pages.
        [value] page_pool: u32,
        /// Bounce pages a write clone may wait for.
        [value] min_bio_pages: u32,
        /// GFP_ATOMIC streams.
        [value] atomic: Capped<Spanned<RawAtomic>, MAX_ATOMIC_STREAMS>,
        /// Swap space inside dm-crypt.
        [value] swap: Size,
        /// Where the swap volume starts on the device.
        [value] swap_offset: Size,
        /// `vm.swappiness`.
        [value] swappiness: u32,
    }
}

/// The accepted range of each whole-number field of `memory:` ([`super::check::int_range`]).
pub(crate) const INT_RANGES: &[(&str, u64, u64)] = &[
    ("memory.page_pool", 1, 1_000_000),
    ("memory.min_bio_pages", 1, 1_000_000),
    ("memory.swappiness", 0, 100),
];

/// Largest swap volume: 64 GiB, a 2009 swap partition many times over.
pub const MAX_SWAP: u64 = 64 << 30;

/// Where the swap volume starts when `swap_offset` is not given: after a 5 GiB filesystem
/// volume, as in Mel Gorman's LVM-on-dm-crypt layout [assumed position].
pub const DEFAULT_SWAP_OFFSET: u64 = 5 << 30;

/// The zone's starting layout, bytes, as the section resolves it.
struct Layout {
    unreclaimable: u64,
    mapped: u64,
    page_cache: u64,
}

/// `memory:`: the zone's size and layout, dm-crypt's pools and the GFP_ATOMIC streams.
pub(crate) fn memory(c: &Checker, m: &RawMemory, here: Location) -> Result<MemoryConfig, Error> {
    let ram = ram(c, m, here)?;
    let mfk = min_free(c, m, ram)?;
    let layout = layout(c, m, ram, Watermarks::v2_6_32(mfk))?;
    let coalesce = match &m.coalesce {
        None => 0.5,
        Some(s) if (0.0..=1.0).contains(&s.value) => s.value,
        Some(s) => {
            return Err(c.at("memory.coalesce", s).bad_value(
                format!("is a probability, between 0 and 1, got {}", s.value),
                "0 never merges freed blocks (fragmentation builds up), 1 always merges; 0.5 is the default",
            ));
        }
    };
    let scan_cost = c.dur(
        &m.scan_cost,
        "memory.scan_cost",
        SimDuration::from_ns(200),
        Zero::Allowed,
    )?;
    let page_pool = c.int(&m.page_pool, "memory.page_pool", 32)?;
    let min_bio_pages = c.int(&m.min_bio_pages, "memory.min_bio_pages", 8)?;
    let (swap, swap_offset) = swap(c, m)?;
    let swappiness = c.int(&m.swappiness, "memory.swappiness", 60)?;
    Ok(MemoryConfig {
        swap,
        swap_offset,
        swappiness,
        ram,
        min_free_kbytes: mfk,
        unreclaimable: layout.unreclaimable,
        mapped: layout.mapped,
        page_cache: layout.page_cache,
        coalesce,
        scan_cost,
        page_pool,
        min_bio_pages,
        atomic: atomic_streams(c, m)?,
    })
}

/// `memory.swap` (whole pages, at most [`MAX_SWAP`]; default none) and `memory.swap_offset`
/// (whole pages; default [`DEFAULT_SWAP_OFFSET`]).
fn swap(c: &Checker, m: &RawMemory) -> Result<(u64, u64), Error> {
    let preset_swap = if m.preset.is_some() { MEL_512MB[3] } else { 0 };
    let swap = val(&m.swap).map_or(preset_swap, |s| s.0);
    pages_only(c, swap, &m.swap, "memory.swap")?;
    if swap > MAX_SWAP {
        return Err(c.at("memory.swap", &m.swap).bad_value(
            format!(
                "at most {}, got {}",
                format_bytes(MAX_SWAP),
                format_bytes(swap)
            ),
            "Mel Gorman's machines had a 2GiB swap volume",
        ));
    }
    let offset = val(&m.swap_offset).map_or(DEFAULT_SWAP_OFFSET, |s| s.0);
    pages_only(c, offset, &m.swap_offset, "memory.swap_offset")?;
    if m.swap_offset.is_some() && swap == 0 {
        return Err(c.at("memory.swap_offset", &m.swap_offset).conflict(
            "a swap offset without swap",
            "give `swap:` its size (e.g. `swap: 2GiB`), or drop `swap_offset`",
        ));
    }
    Ok((swap, offset))
}

/// `memory.ram`: required, whole pages, inside [`RAM_RANGE`].
fn ram(c: &Checker, m: &RawMemory, here: Location) -> Result<u64, Error> {
    let Some(ram_f) = &m.ram else {
        if m.preset.is_some() {
            return Ok(MEL_512MB[0]);
        }
        return Err(c.at("memory.ram", here).missing(
            "the memory section has no `ram`",
            "give the size of the machine's low memory, e.g. `ram: 2GiB`",
        ));
    };
    let ram = ram_f.value.0;
    let (lo, hi) = RAM_RANGE;
    if ram < lo || ram > hi {
        return Err(c.at("memory.ram", ram_f).bad_value(
            format!(
                "must be between {} and {}, got {}",
                format_bytes(lo),
                format_bytes(hi),
                format_bytes(ram)
            ),
            "one lowmem zone of a 2009-era machine: 512MiB, 2GiB, 4GiB, …",
        ));
    }
    pages_only(c, ram, &m.ram, "memory.ram")?;
    Ok(ram)
}

/// `memory.min_free_kbytes`: the kernel's boot-time value for `ram` unless given, in
/// 128..=ram/32.
fn min_free(c: &Checker, m: &RawMemory, ram: u64) -> Result<u64, Error> {
    let ram_kb = ram / 1024;
    let default_mfk = min_free_kbytes(ram_kb, WatermarkKernel::V2_6_32);
    let max_mfk = ram_kb / 32;
    match &m.min_free_kbytes {
        None => Ok(default_mfk),
        Some(s) if (128..=max_mfk).contains(&s.value) => Ok(s.value),
        Some(s) => Err(c.at("memory.min_free_kbytes", s).bad_value(
            format!(
                "must be between 128 and {max_mfk} for {} of ram, got {}",
                format_bytes(ram),
                s.value
            ),
            format!(
                "the kernel's own value for {} is {default_mfk} (leave the field out for it); \
                 at most ram/32, so that the default layout (half unreclaimable, 16·min \
                 free) still fits",
                format_bytes(ram)
            ),
        )),
    }
}

/// The starting layout: unreclaimable memory (its mapped part) and page cache, leaving at
/// least the high watermark free beside dm-crypt's page_pool reserve, which is allocated from
/// the zone at boot too (its range is checked with the other counts).
fn layout(c: &Checker, m: &RawMemory, ram: u64, marks: Watermarks) -> Result<Layout, Error> {
    let unreclaimable = match &m.unreclaimable {
        Some(s) => {
            pages_only(c, s.value.0, &m.unreclaimable, "memory.unreclaimable")?;
            s.value.0
        }
        None if m.preset.is_some() => MEL_512MB[1],
        None => ram / 2 / PAGE * PAGE,
    };
    let pool_bytes = val(&m.page_pool).map_or(32, u64::from).saturating_mul(PAGE);
    let room = ram.saturating_sub(marks.high * PAGE);
    if pool_bytes > room {
        return Err(c.at("memory.page_pool", &m.page_pool).conflict(
            format!(
                "a reserve of {} pages leaves less than the high watermark ({} pages) free in \
                 {} of ram",
                pool_bytes / PAGE,
                marks.high,
                format_bytes(ram)
            ),
            format!(
                "at most {} pages; dm-crypt's own reserve is 32 (MIN_POOL_PAGES)",
                room / PAGE
            ),
        ));
    }
    // The largest unreclaimable amount that leaves `high` free with the page_pool reserve and
    // no page cache at all.
    let max_unreclaimable = room - pool_bytes;
    if unreclaimable > max_unreclaimable {
        return Err(c.at("memory.unreclaimable", &m.unreclaimable).conflict(
            format!(
                "{} of {} ram leaves less than the high watermark ({} pages) free beside the \
                 page_pool reserve ({} pages)",
                format_bytes(unreclaimable),
                format_bytes(ram),
                marks.high,
                pool_bytes / PAGE
            ),
            format!(
                "at most {} ({} bytes); the zone must start above its high watermark",
                format_bytes(max_unreclaimable),
                max_unreclaimable
            ),
        ));
    }
    let mapped = mapped(c, m, unreclaimable)?;
    let max_cache = max_unreclaimable - unreclaimable;
    let page_cache = page_cache(c, m, ram, marks, unreclaimable, max_cache)?;
    Ok(Layout {
        unreclaimable,
        mapped,
        page_cache,
    })
}

/// `memory.page_cache`: whole pages, at most `max_cache`; unless given, what leaves
/// [`DEFAULT_FREE_MINS`]·min pages free (never more than fits).
fn page_cache(
    c: &Checker,
    m: &RawMemory,
    ram: u64,
    marks: Watermarks,
    unreclaimable: u64,
    max_cache: u64,
) -> Result<u64, Error> {
    let pool_bytes = val(&m.page_pool).map_or(32, u64::from).saturating_mul(PAGE);
    match &m.page_cache {
        Some(s) => {
            pages_only(c, s.value.0, &m.page_cache, "memory.page_cache")?;
            if s.value.0 > max_cache {
                return Err(c.at("memory.page_cache", s).conflict(
                    format!(
                        "{} of cache plus {} unreclaimable leaves less than the high watermark \
                         ({} pages) free beside the page_pool reserve ({} pages) in {} of ram",
                        format_bytes(s.value.0),
                        format_bytes(unreclaimable),
                        marks.high,
                        pool_bytes / PAGE,
                        format_bytes(ram)
                    ),
                    format!(
                        "at most {} ({max_cache} bytes); the zone must start above its high \
                         watermark",
                        format_bytes(max_cache)
                    ),
                ));
            }
            Ok(s.value.0)
        }
        // Start with free = 16·min pages (16·min_free_kbytes KiB): well above high, so the
        // run begins quiet and pressure builds from the workloads.
        // Never so much that the reserve would leave less than `high` free.
        None => Ok(ram
            .saturating_sub(unreclaimable)
            .saturating_sub(DEFAULT_FREE_MINS * marks.min * PAGE)
            .min(max_cache)),
    }
}

/// `memory.mapped`: whole pages, part of `unreclaimable`; half of it unless given.
fn mapped(c: &Checker, m: &RawMemory, unreclaimable: u64) -> Result<u64, Error> {
    let Some(s) = &m.mapped else {
        let preset = m.preset.is_some() && m.unreclaimable.is_none();
        return Ok(if preset {
            MEL_512MB[2]
        } else {
            unreclaimable / 2 / PAGE * PAGE
        });
    };
    pages_only(c, s.value.0, &m.mapped, "memory.mapped")?;
    if s.value.0 > unreclaimable {
        return Err(c.at("memory.mapped", s).conflict(
            format!(
                "{} is more than the {} of unreclaimable memory it is part of",
                format_bytes(s.value.0),
                format_bytes(unreclaimable)
            ),
            "mapped pages are the part of `unreclaimable` that reclaim scans (and \
             rotates) on the file LRU; at most all of it",
        ));
    }
    Ok(s.value.0)
}

/// `memory.atomic`: each stream resolved, names unique.
fn atomic_streams(c: &Checker, m: &RawMemory) -> Result<Vec<AtomicStream>, Error> {
    let mut atomic: Vec<AtomicStream> = Vec::new();
    let Some(list) = &m.atomic else {
        return Ok(atomic);
    };
    c.too_long(
        list,
        "memory.atomic",
        "atomic streams",
        "a machine has a few drivers allocating GFP_ATOMIC; merge streams by adding their \
         rates",
    )?;
    for (i, a) in list.value.iter().enumerate() {
        let path = format!("memory.atomic[{i}]");
        let stream = atomic_stream(c, &a.value, a.referenced, &path, i)?;
        if atomic.iter().any(|s| s.name == stream.name) {
            return Err(c
                .at(
                    &at(&path, "name"),
                    loc(&a.value.name).or(Some(a.referenced)),
                )
                .conflict(
                    format!("atomic stream name `{}` is used twice", stream.name),
                    "give each stream its own `name:` (the default is atomic<index>)",
                ));
        }
        atomic.push(stream);
    }
    Ok(atomic)
}

/// Refuses a memory amount that is not a whole number of 4 KiB pages.
fn pages_only(c: &Checker, bytes: u64, f: &Field<Size>, path: &str) -> Result<(), Error> {
    if bytes.is_multiple_of(PAGE) {
        return Ok(());
    }
    let down = bytes / PAGE * PAGE;
    Err(c.at(path, f).bad_value(
        format!(
            "must be a whole number of 4KiB pages, got {}",
            format_bytes(bytes)
        ),
        format!(
            "use binary units (2GiB, 512MiB), or {} ({down} bytes) rounded down",
            format_bytes(down)
        ),
    ))
}

/// The memory section with its derived watermarks, floors and starting free pages.
pub(crate) fn describe_memory(o: &mut Rows, m: &MemoryConfig) {
    describe_zone(o, m);
    row(
        o,
        2,
        "coalesce",
        &format!(
            "{} (probability that a freed block merges with its buddy)",
            trim_float(m.coalesce, 3)
        ),
    );
    row(
        o,
        2,
        "scan_cost",
        &format!("{} per page scanned", m.scan_cost),
    );
    row(
        o,
        2,
        "page_pool",
        &format!(
            "{} pages; a write clone waits for its first {} bounce pages",
            m.page_pool, m.min_bio_pages
        ),
    );
    row(
        o,
        2,
        "atomic",
        &match m.atomic.len() {
            0 => "none".to_string(),
            1 => "1 stream".to_string(),
            n => format!("{n} streams"),
        },
    );
    for a in &m.atomic {
        describe_atomic(o, a);
    }
    if m.swap > 0 {
        row(
            o,
            2,
            "swap",
            &format!(
                "{} inside dm-crypt at {}, swappiness {}",
                format_bytes(m.swap),
                format_bytes(m.swap_offset),
                m.swappiness
            ),
        );
    }
}

/// The zone's rows: size, watermarks, allocation floors and the starting layout.
fn describe_zone(o: &mut Rows, m: &MemoryConfig) {
    let marks = Watermarks::v2_6_32(m.min_free_kbytes);
    let kernel_mfk = min_free_kbytes(m.ram / 1024, WatermarkKernel::V2_6_32);
    row(
        o,
        0,
        "memory",
        &format!(
            "{} ({} pages), one lowmem zone",
            format_bytes(m.ram),
            m.ram / PAGE
        ),
    );
    row(
        o,
        2,
        "min_free_kbytes",
        &if m.min_free_kbytes == kernel_mfk {
            format!("{} (the kernel's value for this ram)", m.min_free_kbytes)
        } else {
            format!(
                "{} (set; the kernel's would be {kernel_mfk})",
                m.min_free_kbytes
            )
        },
    );
    row(
        o,
        2,
        "watermarks",
        &format!(
            "min {}, low {}, high {} pages",
            marks.min, marks.low, marks.high
        ),
    );
    row(
        o,
        2,
        "floors",
        &format!(
            "GFP_ATOMIC order-0 {} pages, mempool first try {} pages",
            atomic_floor(marks.min),
            mempool_floor(marks.min)
        ),
    );
    let free = (m.ram - m.unreclaimable - m.page_cache) / PAGE;
    row(
        o,
        2,
        "start",
        &format!(
            "{} unreclaimable ({} mapped on the LRU), {} page cache ({} pages), {free} pages \
             free ({}·min)",
            format_bytes(m.unreclaimable),
            format_bytes(m.mapped),
            format_bytes(m.page_cache),
            m.page_cache / PAGE,
            trim_float(free as f64 / marks.min.max(1) as f64, 1)
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::testutil::*;

    #[test]
    fn mapped_and_burst_default_and_are_checked() {
        let m = mem("");
        assert_eq!(m.mapped, m.unreclaimable / 2);
        assert_eq!(m.mapped % 4096, 0);
        let m = mem(
            "  unreclaimable: 1GiB\n  mapped: 256MiB\n  atomic:\n    - { rate: 10, burst: 64 }\n",
        );
        assert_eq!(m.mapped, 256 << 20);
        assert_eq!(m.atomic[0].burst, 64);
        assert_eq!(mem("  atomic:\n    - rate: 10\n").atomic[0].burst, 1);
        let e = err(&format!("{MEM}  unreclaimable: 1GiB\n  mapped: 2GiB\n"));
        assert_eq!(e.path(), Some("memory.mapped"));
        assert_eq!(e.kind(), ErrorKind::Conflict);
        let e = err(&format!("{MEM}  atomic:\n    - {{ rate: 10, burst: 0 }}\n"));
        assert_eq!(e.path(), Some("memory.atomic[0].burst"));
    }

    #[test]
    fn memory_defaults_follow_the_kernel() {
        let m = mem("");
        assert_eq!(m.ram, 2 << 30);
        assert_eq!(m.min_free_kbytes, 5792);
        assert_eq!(m.unreclaimable, 1 << 30);
        // Free at the start is 16·min = 16 · 1448 pages.
        assert_eq!(m.page_cache, (1 << 30) - 16 * 1448 * 4096);
        assert_eq!(m.ram - m.unreclaimable - m.page_cache, 23_168 * 4096);
        assert_eq!(m.coalesce, 0.5);
        assert_eq!(m.scan_cost, SimDuration::from_ns(200));
        assert_eq!((m.page_pool, m.min_bio_pages), (32, 8));
        assert!(m.atomic.is_empty());
        // The kernel's formula at the smallest zone; half of ram rounds down to a page.
        let small = |ram: &str| {
            ok(&format!("{BASE}memory: {{ ram: {ram} }}\n"))
                .memory
                .expect("memory")
        };
        let m = small("64MiB");
        assert_eq!(m.min_free_kbytes, 1024);
        let m = small(&format!("{}", (64 << 20) + 4096));
        assert_eq!(m.unreclaimable, (32 << 20));
        assert_eq!(small("64GiB").min_free_kbytes, 32768);
    }

    #[test]
    fn memory_fields_override() {
        let m = mem(
            "  min_free_kbytes: 4096\n  unreclaimable: 512MiB\n  page_cache: 1GiB\n  coalesce: 1\n  scan_cost: 1us\n  page_pool: 64\n  min_bio_pages: 1\n",
        );
        assert_eq!(m.min_free_kbytes, 4096);
        assert_eq!((m.unreclaimable, m.page_cache), (512 << 20, 1 << 30));
        assert_eq!(m.coalesce, 1.0);
        assert_eq!(m.scan_cost, SimDuration::from_us(1));
        assert_eq!((m.page_pool, m.min_bio_pages), (64, 1));
        // page_cache follows a given unreclaimable.
        let m = mem("  unreclaimable: 1536MiB\n");
        assert_eq!(m.page_cache, (512 << 20) - 16 * 1448 * 4096);
        // Too much unreclaimable for the default cache: the cache shrinks to nothing.
        let m = mem("  unreclaimable: 2032MiB\n");
        assert_eq!(m.page_cache, 0);
    }

    #[test]
    fn memory_errors_are_located_with_hints() {
        let e =
            err("device: { kind: nvme }\nworkloads:\n  - kind: fio\nmemory:\n  coalesce: 0.2\n");
        assert_eq!(e.kind(), ErrorKind::Missing);
        assert_eq!(place(&e), (Some(5), Some(3), Some("memory.ram")));
        assert!(e.hint().unwrap().contains("ram: 2GiB"), "{e}");
        let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\nmemory:\n  ram: 32MiB\n");
        assert_eq!(place(&e), (Some(5), Some(8), Some("memory.ram")));
        assert!(e.message().contains("between 64MiB and 64GiB"), "{e}");
        let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\nmemory:\n  ram: 65GiB\n");
        assert_eq!(e.path(), Some("memory.ram"));
        let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\nmemory:\n  ram: 2GB\n");
        assert_eq!(place(&e), (Some(5), Some(8), Some("memory.ram")));
        assert!(e.message().contains("4KiB pages"), "{e}");
        assert!(e.hint().unwrap().contains("1999998976 bytes"), "{e}");
        let e = err(&format!("{MEM}  min_free_kbytes: 100\n"));
        assert_eq!(
            place(&e),
            (Some(6), Some(20), Some("memory.min_free_kbytes"))
        );
        assert!(e.message().contains("between 128 and 65536"), "{e}");
        assert!(e.hint().unwrap().contains("5792"), "{e}");
        let e = err(&format!("{MEM}  min_free_kbytes: 65537\n"));
        assert_eq!(e.path(), Some("memory.min_free_kbytes"));
        let e = err(&format!("{MEM}  unreclaimable: 1000001\n"));
        assert_eq!(e.path(), Some("memory.unreclaimable"));
        let e = err(&format!("{MEM}  coalesce: 1.5\n"));
        assert_eq!(place(&e), (Some(6), Some(13), Some("memory.coalesce")));
        assert!(e.message().contains("probability"), "{e}");
        let e = err(&format!("{MEM}  coalesce: .nan\n"));
        assert_eq!(e.path(), Some("memory.coalesce"));
        let e = err(&format!("{MEM}  page_pool: 0\n"));
        assert_eq!(e.path(), Some("memory.page_pool"));
        let e = err(&format!("{MEM}  min_bio_pages: 0\n"));
        assert_eq!(e.path(), Some("memory.min_bio_pages"));
        let e = err(&format!("{MEM}  scan_cost: 5\n"));
        assert_eq!(e.path(), Some("memory.scan_cost"));
        let e = err(&format!("{MEM}  ramm: 3\n"));
        assert_eq!(e.kind(), ErrorKind::UnknownField);
        assert!(e.hint().unwrap().contains("did you mean `ram`?"), "{e}");
    }

    #[test]
    fn the_start_must_leave_high_free_and_the_hint_gives_the_largest_value() {
        // high = 1448 + 724 = 2172 pages, and the page_pool reserve takes 32 more.
        let high = 2172 * 4096u64;
        let max_unrecl = (2u64 << 30) - high - 32 * 4096;
        let e = err(&format!("{MEM}  unreclaimable: {}\n", max_unrecl + 4096));
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert_eq!(place(&e), (Some(6), Some(18), Some("memory.unreclaimable")));
        assert!(e.message().contains("high watermark (2172 pages)"), "{e}");
        assert!(
            e.hint().unwrap().contains(&format!("({max_unrecl} bytes)")),
            "{e}"
        );
        assert_eq!(
            mem(&format!("  unreclaimable: {max_unrecl}\n")).page_cache,
            0
        );
        let max_cache = max_unrecl - (1 << 30);
        let e = err(&format!("{MEM}  page_cache: {}\n", max_cache + 4096));
        assert_eq!(place(&e), (Some(6), Some(15), Some("memory.page_cache")));
        assert!(
            e.hint().unwrap().contains(&format!("({max_cache} bytes)")),
            "{e}"
        );
        let m = mem(&format!("  page_cache: {max_cache}\n"));
        assert_eq!((m.ram - m.unreclaimable - m.page_cache) / 4096, 2172 + 32);
    }

    /// Torture seed 101511: cache and unreclaimable memory left exactly `high` free, then the
    /// model allocated a page_pool of 244 pages from it at boot and panicked ("zone too small
    /// for its initial page cache"). The reserve now counts in the layout, and every layout
    /// the loader accepts boots.
    #[test]
    fn the_page_pool_counts_in_the_starting_layout() {
        let run = |memory: &str| {
            let text = format!(
                "duration: 20ms\ndevice: {{ kind: nvme }}\nworkloads:\n  - {{ kind: \
                 buffered-writer, rate: 89MB/s }}\nmemory:\n{memory}"
            );
            let sc = ok(&text);
            let info = crate::model::crypt::policy::find("fifo").unwrap();
            let r = crate::model::run_policy(&sc, info);
            assert!(r.violations.is_empty(), "{:?}", r.violations);
            sc.memory.unwrap()
        };
        // ram 2 GiB, min_free_kbytes 152: min 38, high 57 pages.
        let seed_101511 = "  ram: 2048M\n  min_free_kbytes: 152\n  unreclaimable: 1256960k\n  \
                           page_cache: 860123136\n  page_pool: 244\n";
        let e = err(&format!(
            "device: {{ kind: nvme }}\nworkloads:\n  - kind: fio\nmemory:\n{seed_101511}"
        ));
        assert_eq!(e.path(), Some("memory.page_cache"));
        assert!(e.message().contains("page_pool reserve (244 pages)"), "{e}");
        let fits = seed_101511.replace("860123136", &(860123136 - 244 * 4096).to_string());
        let m = run(&fits);
        assert_eq!((m.ram - m.unreclaimable - m.page_cache) / 4096, 57 + 244);
        // A large reserve cuts the default cache instead of overrunning the zone.
        // 64 MiB: 16384 pages, min_free_kbytes 1024, min 256, high 384; unreclaimable 8192.
        let m = run("  ram: 64MiB\n  page_pool: 7000\n");
        assert_eq!(m.page_cache / 4096, 16384 - 384 - 7000 - 8192);
        assert_eq!((m.ram - m.unreclaimable - m.page_cache) / 4096, 384 + 7000);
        // A reserve larger than the zone is refused where it is written.
        let e = err(
            "device: { kind: nvme }\nworkloads:\n  - kind: fio\nmemory:\n  ram: 64MiB\n  \
             page_pool: 1000000\n",
        );
        assert_eq!(e.path(), Some("memory.page_pool"));
        assert!(
            e.hint().unwrap_or("").contains("at most 16000 pages"),
            "{e}"
        );
    }

    #[test]
    fn the_section_alone_lays_out_the_zone() {
        let m = |yaml: &str| section::<RawMemory, _>(yaml, memory);
        let z = m("ram: 1GiB\n").unwrap();
        assert_eq!(z.unreclaimable, 512 << 20);
        assert_eq!(z.mapped, 256 << 20);
        assert!(z.atomic.is_empty());
        let e = m("min_free_kbytes: 1024\n").unwrap_err();
        assert_eq!(
            (e.kind(), e.path()),
            (ErrorKind::Missing, Some("memory.ram"))
        );
        let e = m("ram: 1GiB\nmapped: 600MiB\n").unwrap_err();
        assert_eq!((e.line(), e.path()), (Some(2), Some("memory.mapped")));
    }
}
