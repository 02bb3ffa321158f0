//! The `memory:` section: the zone's layout (ram, watermarks, unreclaimable, cache, page
//! pool) drawn so that it fits, and the GFP_ATOMIC streams under `atomic:`.

use super::*;
use crate::model::mm::zone::{WatermarkKernel, Watermarks, min_free_kbytes};

#[derive(Debug, Clone, Default)]
pub(super) struct Atomic {
    pub(super) name: Option<String>,
    pub(super) preset: Option<&'static str>,
    pub(super) rate: Option<Q<f64>>,
    pub(super) bandwidth: Option<Q<RateV>>,
    pub(super) buffer: Option<Q<u64>>,
    pub(super) orders: Option<Vec<(u64, String)>>,
    pub(super) poisson: Option<bool>,
    pub(super) hold: Option<Dist>,
    pub(super) burst: Option<u32>,
    /// A receive path's ring (only on a stream a writer reads).
    pub(super) ring: Option<u32>,
}

/// Most GFP_ATOMIC allocations per second a stream asks for (rate × burst).
pub(super) const MAX_ATOMIC_PER_S: u64 = 200_000;

pub(super) fn atomic(g: &mut G) -> Atomic {
    let mut a = Atomic {
        name: g.maybe(0.5, |g| {
            g.pick(&["wifi", "rx", "atomic1", "net α", "skb"])
                .to_string()
        }),
        preset: g.maybe(0.6, |g| g.pick(&["iwlagn", "custom"])),
        poisson: g.maybe(0.4, |g| g.chance(0.5)),
        hold: g.maybe(0.6, |g| dist(g, 0, 200_000_000)),
        burst: g.maybe(0.6, |g| g.edge(1, 128, 1024) as u32),
        ..Atomic::default()
    };
    let per_s = MAX_ATOMIC_PER_S / u64::from(a.burst.unwrap_or(1));
    if g.chance(0.6) {
        let n = g.log(1, per_s.min(2000));
        let text = match g.int(0, 2) {
            0 => n.to_string(),
            1 => format!("{n}/s"),
            _ => format!("{n}.5"),
        };
        let v = if text.ends_with(".5") {
            n as f64 + 0.5
        } else {
            n as f64
        };
        a.rate = Some(q(v, text));
    } else {
        // Allocations = bandwidth / buffer, with buffer at least 1500 bytes.
        let hi = (per_s * 1500).min(50_000_000) as f64;
        a.bandwidth = Some(bandwidth(g, hi.min(100e3), hi));
        a.buffer = g.maybe(0.5, |g| {
            let b = g.log(1500, 65536);
            size(g, b)
        });
    }
    a.orders = g.maybe(0.5, |g| {
        let mut os: Vec<u64> = (0..=10).filter(|_| g.chance(0.3)).collect();
        if os.is_empty() {
            os.push(g.int(0, 10));
        }
        let mut out: Vec<(u64, String)> = os
            .iter()
            .map(|&o| {
                let w = g.pick(&["0", "1", "0.5", "0.25", "2", "0.001", "3"]);
                (o, w.to_string())
            })
            .collect();
        if out.iter().all(|(_, w)| w == "0") {
            out[0].1 = "1".into();
        }
        if g.chance(0.3) {
            out.reverse();
        }
        out
    });
    a
}

impl Atomic {
    pub(super) fn yaml(&self, g: &mut G) -> Y {
        let mut e = Vec::new();
        if let Some(n) = &self.name {
            e.push(("name".into(), Y::S(quoted(n))));
        }
        put(&mut e, "preset", &self.preset);
        put(&mut e, "rate", &self.rate);
        put(&mut e, "bandwidth", &self.bandwidth);
        put(&mut e, "buffer", &self.buffer);
        if let Some(o) = &self.orders {
            e.push((
                "orders".into(),
                Y::M {
                    entries: o
                        .iter()
                        .map(|(k, w)| (k.to_string(), Y::S(w.clone())))
                        .collect(),
                    flow: g.chance(0.7),
                },
            ));
        }
        put(&mut e, "poisson", &self.poisson);
        if let Some(h) = &self.hold {
            e.push(("hold".into(), h.yaml()));
        }
        put(&mut e, "burst", &self.burst);
        put(&mut e, "ring", &self.ring);
        Y::M {
            entries: e,
            flow: g.chance(0.2),
        }
    }
}

pub(super) const PAGE: u64 = 4096;

#[derive(Debug, Clone, Default)]
pub(super) struct Memory {
    pub(super) ram: Option<Q<u64>>,
    pub(super) min_free_kbytes: Option<u64>,
    pub(super) unreclaimable: Option<Q<u64>>,
    pub(super) mapped: Option<Q<u64>>,
    pub(super) page_cache: Option<Q<u64>>,
    pub(super) coalesce: Option<Q<f64>>,
    pub(super) scan_cost: Option<Q<u64>>,
    pub(super) page_pool: Option<u32>,
    pub(super) min_bio_pages: Option<u32>,
    pub(super) atomic: Option<Vec<Atomic>>,
    pub(super) swap: Option<Q<u64>>,
    pub(super) swap_offset: Option<Q<u64>>,
    pub(super) swappiness: Option<u32>,
}

/// The zone's layout as the loader resolves it: (ram, high watermark pages, unreclaimable).
pub(super) fn layout(ram: u64, mfk: Option<u64>, unrec: Option<u64>) -> (u64, u64, u64) {
    let mfk = mfk.unwrap_or_else(|| min_free_kbytes(ram / 1024, WatermarkKernel::V2_6_32));
    let high = Watermarks::v2_6_32(mfk).high;
    (mfk, high, unrec.unwrap_or(ram / 2 / PAGE * PAGE))
}

/// A memory section; `full` draws `ram` (a base), else a partial override.
pub(super) fn memory(g: &mut G, full: bool, p: f64) -> Memory {
    let ram_mib = if full || g.chance(p * 0.5) {
        Some(g.pick(&[64u64, 96, 128, 256, 512, 1024, 2048, 3072, 4096, 8192]))
    } else {
        None
    };
    let mut m = Memory {
        ram: ram_mib.map(|mib| size(g, mib << 20)),
        ..Memory::default()
    };
    // Layout fields are drawn against this ram (a partial override's may not fit the base's:
    // the mirror then refuses the draw).
    let ram = ram_mib.unwrap_or(g.pick(&[256u64, 2048])) << 20;
    let ram_kb = ram / 1024;
    m.min_free_kbytes = g.maybe(p * 0.4, |g| g.edge(128, ram_kb / 32, ram_kb / 32));
    let (_, high, _) = layout(ram, m.min_free_kbytes, None);
    // dm-crypt's reserve comes out of the zone at boot too: sometimes all the room there is.
    m.page_pool = g.maybe(p * 0.4, |g| {
        let most = (ram / PAGE - high).min(1_000_000);
        if g.chance(0.03) {
            most as u32
        } else {
            g.log(1, 256.min(most)) as u32
        }
    });
    let pool = u64::from(m.page_pool.unwrap_or(32)) * PAGE;
    let room = (ram - high * PAGE).saturating_sub(pool);
    m.unreclaimable = g.maybe(p * 0.6, |g| {
        let b = if g.chance(0.1) {
            room
        } else {
            g.int(0, room / PAGE) * PAGE
        };
        size(g, b)
    });
    let unrec = m
        .unreclaimable
        .as_ref()
        .map_or(ram / 2 / PAGE * PAGE, |u| u.v);
    m.mapped = g.maybe(p * 0.5, |g| {
        let b = g.int(0, unrec / PAGE) * PAGE;
        size(g, b)
    });
    // The default unreclaimable (half the ram) may not fit beside a pool that took most of
    // the room: then there is no room for cache either.
    let left = room.saturating_sub(unrec);
    m.page_cache = g.maybe(p * 0.4, |g| {
        let b = if g.chance(0.1) {
            left
        } else {
            g.int(0, left / PAGE) * PAGE
        };
        size(g, b)
    });
    m.coalesce = g.maybe(p * 0.6, |g| {
        let x = g.pick(&[0.0, 0.02, 0.1, 0.5, 0.9, 1.0]);
        let text = if x == 1.0 {
            "1".to_string()
        } else {
            x.to_string()
        };
        q(x, text)
    });
    m.scan_cost = g.maybe(p * 0.4, |g| dur_in(g, 0, 2_000));
    m.min_bio_pages = g.maybe(p * 0.4, |g| g.edge(1, 64, 100_000) as u32);
    m.atomic = g.maybe(p * 0.8, |g| {
        let n = g.int(0, 3) as usize;
        (0..n).map(|_| atomic(g)).collect()
    });
    swap(g, &mut m, p);
    m
}

/// `swap`, `swap_offset` (mostly with swap: without it the loader refuses the offset) and
/// `swappiness`.
fn swap(g: &mut G, m: &mut Memory, p: f64) {
    m.swap = g.maybe(p * 0.3, |g| {
        let b = if g.chance(0.05) {
            crate::scenario::MAX_SWAP
        } else {
            g.int(0, 1 << 20) * PAGE
        };
        size(g, b)
    });
    m.swap_offset = g.maybe(if m.swap.is_some() { p * 0.4 } else { p * 0.02 }, |g| {
        let b = g.int(0, 4 << 20) * PAGE;
        size(g, b)
    });
    m.swappiness = g.maybe(p * 0.3, |g| g.int(0, 100) as u32);
}

impl Memory {
    pub(super) fn merge(&mut self, o: Memory) {
        merge_struct!(self, o; ram, min_free_kbytes, unreclaimable, mapped, page_cache,
            coalesce, scan_cost, page_pool, min_bio_pages, atomic, swap, swap_offset,
            swappiness);
    }
    pub(super) fn problem(&self) -> Option<String> {
        let Some(ram) = self.ram.as_ref().map(|r| r.v) else {
            return Some("memory without ram".into());
        };
        let ram_kb = ram / 1024;
        if let Some(m) = self.min_free_kbytes
            && !(128..=ram_kb / 32).contains(&m)
        {
            return Some("min_free_kbytes out of range".into());
        }
        let (_, high, unrec) = layout(
            ram,
            self.min_free_kbytes,
            self.unreclaimable.as_ref().map(|u| u.v),
        );
        let pool = u64::from(self.page_pool.unwrap_or(32)) * PAGE;
        if pool > ram.saturating_sub(high * PAGE) {
            return Some("page_pool above the high watermark".into());
        }
        let max_unrec = ram.saturating_sub(high * PAGE) - pool;
        if unrec > max_unrec {
            return Some("unreclaimable above the high watermark".into());
        }
        if self.mapped.as_ref().is_some_and(|m| m.v > unrec) {
            return Some("mapped above unreclaimable".into());
        }
        if self
            .page_cache
            .as_ref()
            .is_some_and(|c| c.v > max_unrec - unrec)
        {
            return Some("page_cache above the high watermark".into());
        }
        let swap = self.swap.as_ref().map_or(0, |s| s.v);
        if self.swap_offset.is_some() && swap == 0 {
            return Some("swap_offset without swap".into());
        }
        let mut names: Vec<String> = Vec::new();
        for (i, a) in self.atomic.iter().flatten().enumerate() {
            let name = a.name.clone().unwrap_or_else(|| format!("atomic{i}"));
            if names.contains(&name) {
                return Some(format!("atomic name {name} twice"));
            }
            names.push(name);
            if let Some(h) = &a.hold
                && let Some(p) = h.problem(false)
            {
                return Some(p);
            }
        }
        None
    }
    pub(super) fn yaml(&self, g: &mut G) -> Y {
        let mut e = Vec::new();
        put(&mut e, "ram", &self.ram);
        put(&mut e, "min_free_kbytes", &self.min_free_kbytes);
        put(&mut e, "unreclaimable", &self.unreclaimable);
        put(&mut e, "mapped", &self.mapped);
        put(&mut e, "page_cache", &self.page_cache);
        put(&mut e, "coalesce", &self.coalesce);
        put(&mut e, "scan_cost", &self.scan_cost);
        put(&mut e, "page_pool", &self.page_pool);
        put(&mut e, "min_bio_pages", &self.min_bio_pages);
        if let Some(a) = &self.atomic {
            let items = a.iter().map(|a| a.yaml(g)).collect();
            e.push(("atomic".into(), Y::L { items, flow: false }));
        }
        put(&mut e, "swap", &self.swap);
        put(&mut e, "swap_offset", &self.swap_offset);
        put(&mut e, "swappiness", &self.swappiness);
        Y::map(e)
    }
}
