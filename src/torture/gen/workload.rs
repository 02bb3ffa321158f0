//! The `workloads:` list: fio jobs, gitk and buffered writers, and the loader's rules on the
//! list as a whole (names, regions on the disk, I/Os in flight).

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WK {
    Fio,
    Gitk,
    Writer,
    /// `kind: fake-gitk`: a process with an anonymous buffer (needs `memory:`).
    FakeGitk,
}

#[derive(Debug, Clone, Default)]
pub(super) struct Workload {
    pub(super) name: Option<String>,
    pub(super) kind: Option<WK>,
    pub(super) rw: Option<&'static str>,
    pub(super) rwmixread: Option<u32>,
    pub(super) bs: Option<Q<u64>>,
    pub(super) size: Option<Q<u64>>,
    pub(super) offset: Option<Q<u64>>,
    pub(super) iodepth: Option<u32>,
    pub(super) rate: Option<Q<RateV>>,
    pub(super) arrivals: Option<&'static str>,
    pub(super) think: Option<Dist>,
    pub(super) numjobs: Option<u32>,
    pub(super) sync: Option<bool>,
    pub(super) direct: Option<bool>,
    pub(super) io_size: Option<(Q<u64>, &'static str)>,
    pub(super) number_ios: Option<u64>,
    pub(super) startdelay: Option<Q<u64>>,
    pub(super) chunk: Option<Q<u64>>,
    pub(super) background: Option<Q<u64>>,
    pub(super) dirty_limit: Option<Q<u64>>,
    pub(super) loops: Option<u32>,
    pub(super) progress_every: Option<Q<u64>>,
    pub(super) hash_cost: Option<Q<u64>>,
}

/// Most I/Os per second an open-loop job is given.
pub(super) const MAX_OPEN_IOPS: u64 = 20_000;

pub(super) fn workload(g: &mut G, duration_ns: u64) -> Workload {
    let kind = g.pick(&[WK::Fio, WK::Fio, WK::Gitk, WK::Writer]);
    let mut w = Workload {
        name: g.maybe(0.4, |g| {
            g.pick(&["reader", "writer", "gitk", "job-1", "fio0", "β", "a b"])
                .to_string()
        }),
        kind: Some(kind),
        ..Workload::default()
    };
    let sector = 512;
    w.offset = g.maybe(0.2, |g| {
        let b = multiple(g, sector, sector, 8 << 30);
        size(g, b)
    });
    if kind == WK::Writer {
        w.rate = Some(bandwidth(g, 1e6, 100e6));
        w.chunk = g.maybe(0.5, |g| {
            let b = multiple(g, PAGE, PAGE, 512 << 10);
            size(g, b)
        });
        let chunk = w.chunk.as_ref().map_or(512 << 10, |c| c.v);
        w.dirty_limit = g.maybe(0.5, |g| {
            let b = g.log(chunk, 256 << 20);
            size(g, b)
        });
        let limit = w.dirty_limit.as_ref().map_or(64 << 20, |d| d.v);
        w.background = g.maybe(0.4, |g| {
            let b = g.int(0, limit - 1);
            size(g, b)
        });
        w.size = g.maybe(0.5, |g| {
            let b = multiple(g, sector, chunk.div_ceil(sector) * sector, 2 << 30);
            size(g, b)
        });
        return w;
    }
    w.rw = g.maybe(0.8, |g| {
        g.pick(&["read", "write", "randread", "randwrite", "randrw"])
    });
    if w.rw == Some("randrw") {
        w.rwmixread = g.maybe(0.6, |g| g.int(0, 100) as u32);
    }
    w.bs = g.maybe(0.6, |g| {
        let b = multiple(g, sector, sector, 512 << 10);
        size(g, b)
    });
    let bs = w.bs.as_ref().map_or(4096, |b| b.v);
    w.size = g.maybe(0.5, |g| {
        let b = multiple(g, sector, bs, 2 << 30);
        size(g, b)
    });
    w.iodepth = g.maybe(0.6, |g| g.edge(1, 64, 4096) as u32);
    if g.chance(0.35) {
        w.rate = Some(if g.chance(0.5) {
            ops(g, 1, MAX_OPEN_IOPS)
        } else {
            bandwidth(g, bs as f64, (MAX_OPEN_IOPS * bs).min(2_000_000_000) as f64)
        });
        w.arrivals = g.maybe(0.5, |g| g.pick(&["poisson", "constant"]));
    } else {
        w.think = g.maybe(0.4, |g| dist(g, 0, 20_000_000));
    }
    w.numjobs = g.maybe(0.3, |g| g.edge(1, 4, 64) as u32);
    w.sync = g.maybe(0.3, |g| g.chance(0.5));
    w.direct = g.maybe(0.3, |g| g.chance(0.5));
    w.io_size = g.maybe(0.25, |g| {
        let b = multiple(g, sector, bs, (bs * 200).max(bs));
        let key = g.pick(&["io_size", "io_limit"]);
        (size(g, b), key)
    });
    w.number_ios = g.maybe(0.2, |g| g.log(1, 500));
    w.startdelay = g.maybe(0.25, |g| dur_in(g, 0, duration_ns + duration_ns / 4));
    w
}

/// A fake-gitk process: whole-page reads and buffer, now and then an edge (one page, one
/// byte per progress line, a thousand loops, a buffer past any RAM and swap, free or costly
/// hashing, many copies).
pub(super) fn fake_gitk(g: &mut G, duration_ns: u64) -> Workload {
    let mut w = Workload {
        name: g.maybe(0.4, |g| g.pick(&["gitk", "fake", "mel"]).to_string()),
        kind: Some(WK::FakeGitk),
        ..Workload::default()
    };
    w.bs = g.maybe(0.6, |g| {
        let b = multiple(g, PAGE, PAGE, 512 << 10);
        size(g, b)
    });
    let bs = w.bs.as_ref().map_or(64 << 10, |b| b.v);
    w.size = g.maybe(0.7, |g| {
        let b = if g.chance(0.05) {
            bs
        } else {
            multiple(g, PAGE, bs, 4 << 30)
        };
        size(g, b.max(bs))
    });
    w.offset = g.maybe(0.2, |g| {
        let b = multiple(g, 512, 512, 8 << 30);
        size(g, b)
    });
    w.loops = g.maybe(0.5, |g| g.edge(1, 4, 1000) as u32);
    w.progress_every = g.maybe(0.4, |g| {
        let b = if g.chance(0.05) {
            1
        } else {
            g.log(1, 64 << 20)
        };
        size(g, b)
    });
    w.hash_cost = g.maybe(0.5, |g| dur_in(g, 0, 100_000_000));
    w.numjobs = g.maybe(0.4, |g| g.edge(1, 4, 64) as u32);
    w.startdelay = g.maybe(0.2, |g| dur_in(g, 0, duration_ns + duration_ns / 4));
    w
}

impl Workload {
    pub(super) fn yaml(&self, g: &mut G) -> Y {
        let mut e = Vec::new();
        if let Some(n) = &self.name {
            e.push(("name".into(), Y::S(quoted(n))));
        }
        if let Some(k) = self.kind {
            let name = match k {
                WK::Fio => "fio",
                WK::Gitk => "gitk",
                WK::Writer => "buffered-writer",
                WK::FakeGitk => "fake-gitk",
            };
            e.push(("kind".into(), Y::S(name.into())));
        }
        put(&mut e, "rw", &self.rw);
        put(&mut e, "rwmixread", &self.rwmixread);
        put(&mut e, "bs", &self.bs);
        put(&mut e, "size", &self.size);
        put(&mut e, "offset", &self.offset);
        put(&mut e, "iodepth", &self.iodepth);
        put(&mut e, "rate", &self.rate);
        put(&mut e, "arrivals", &self.arrivals);
        if let Some(t) = &self.think {
            e.push(("think".into(), t.yaml()));
        }
        put(&mut e, "numjobs", &self.numjobs);
        put(&mut e, "sync", &self.sync);
        put(&mut e, "direct", &self.direct);
        if let Some((s, key)) = &self.io_size {
            e.push((key.to_string(), Y::S(s.text.clone())));
        }
        put(&mut e, "number_ios", &self.number_ios);
        put(&mut e, "startdelay", &self.startdelay);
        put(&mut e, "chunk", &self.chunk);
        put(&mut e, "background", &self.background);
        put(&mut e, "dirty_limit", &self.dirty_limit);
        put(&mut e, "loops", &self.loops);
        put(&mut e, "progress_every", &self.progress_every);
        put(&mut e, "hash_cost", &self.hash_cost);
        Y::M {
            entries: e,
            flow: g.chance(0.2),
        }
    }
}

/// Why the loader must refuse this workload list on a disk of `capacity` (HDDs), if it must.
pub(super) fn workloads_problem(ws: &[Workload], capacity: Option<u64>) -> Option<String> {
    if ws.is_empty() {
        return Some("no workload".into());
    }
    let mut cursor = 0u64;
    let mut names: Vec<String> = Vec::new();
    let mut in_flight = 0u64;
    for (i, w) in ws.iter().enumerate() {
        let Some(kind) = w.kind else {
            return Some("workload without kind".into());
        };
        // gitk is a fio preset, so its iodepth counts too; a fake-gitk is a process.
        if kind == WK::Fio || kind == WK::Gitk {
            in_flight += u64::from(w.iodepth.unwrap_or(1)) * u64::from(w.numjobs.unwrap_or(1));
            if in_flight > crate::scenario::MAX_IN_FLIGHT {
                return Some(format!("{in_flight} fio I/Os in flight"));
            }
        }
        let default_name = match kind {
            WK::Fio => format!("fio{i}"),
            WK::Gitk => format!("gitk{i}"),
            WK::Writer => format!("buffered-writer{i}"),
            WK::FakeGitk => format!("fake-gitk{i}"),
        };
        let name = w.name.clone().unwrap_or(default_name);
        if names.contains(&name) {
            return Some(format!("workload name {name} twice"));
        }
        names.push(name);
        let size = w.size.as_ref().map_or(
            match kind {
                WK::Gitk => 256 << 20,
                WK::FakeGitk => 64 << 20, // the loader's default logs per loop
                _ => 1 << 30,
            },
            |s| s.v,
        );
        let offset = w.offset.as_ref().map_or(cursor, |o| o.v);
        let end = offset.saturating_add(size);
        if capacity.is_some_and(|c| end > c) {
            return Some("region past the end of the disk".into());
        }
        cursor = end;
        if let Some(t) = &w.think
            && let Some(p) = t.problem(false)
        {
            return Some(p);
        }
    }
    None
}

pub(super) fn workloads(g: &mut G, duration_ns: u64) -> Vec<Workload> {
    let n = g.log(1, 4) as usize;
    (0..n).map(|_| workload(g, duration_ns)).collect()
}
