//! The `workloads:` list: fio jobs (with fio's think time and `startdelay` ranges), gitk,
//! buffered writers and `cpuio` processes, and the loader's rules on the list as a whole
//! (names, regions on the disk, I/Os in flight, some I/O).

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WK {
    Fio,
    Gitk,
    Writer,
    /// `kind: fake-gitk`: a process with an anonymous buffer (needs `memory:`).
    FakeGitk,
    /// `kind: cpuio`: fio's CPU-burning engine (no I/O, no region).
    CpuIo,
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
    /// A writer's receive path (`from:`), by stream name.
    pub(super) from: Option<String>,
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
    /// fake-gitk: its hash map's bytes.
    pub(super) map: Option<Q<u64>>,
    /// fake-gitk: commits inserted into the map.
    pub(super) commits: Option<u64>,
    /// The high end of a `startdelay` range (written `low-high`).
    pub(super) startdelay_high: Option<Q<u64>>,
    /// fio's think time: the pause, in a fio spelling (a bare number is microseconds).
    pub(super) thinktime: Option<Q<u64>>,
    pub(super) thinktime_blocks: Option<u32>,
    pub(super) thinktime_blocks_type: Option<&'static str>,
    pub(super) thinktime_spin: Option<Q<u64>>,
    pub(super) cpuload: Option<u32>,
    pub(super) cpuchunks: Option<Q<u64>>,
    /// qsim's `serve:` on a closed-loop writing fio job.
    pub(super) serve: Option<Serve>,
}

/// A fio job's `serve:`; `link` is one of a few spellings whose rates are known, so the
/// generator can tell when two workloads disagree on the node's link (the loader refuses).
#[derive(Debug, Clone, Default)]
pub(super) struct Serve {
    pub(super) bytes: Option<Q<u64>>,
    pub(super) link: Option<(&'static str, u64)>,
    pub(super) checksum_rate: Option<Q<RateV>>,
    pub(super) handling: Option<Q<u64>>,
    pub(super) replicas: Option<u32>,
    pub(super) ack: Option<Q<u64>>,
}

impl Serve {
    fn draw(g: &mut G, bs: u64) -> Serve {
        Serve {
            bytes: g.maybe(0.6, |g| {
                let n = g.edge(1, 8, 64);
                size(g, n * bs)
            }),
            link: g.maybe(0.6, |g| {
                g.pick(&[
                    ("1GB/s", 1_000_000_000),
                    ("3125MB/s", 3_125_000_000),
                    ("100MB/s", 100_000_000),
                ])
            }),
            checksum_rate: g.maybe(0.5, |g| bandwidth(g, 100e6, 20e9)),
            handling: g.maybe(0.4, |g| dur_in(g, 0, 100_000)),
            replicas: g.maybe(0.5, |g| g.int(0, 3) as u32),
            ack: g.maybe(0.5, |g| dur_in(g, 0, 2_000_000)),
        }
    }

    fn yaml(&self, g: &mut G) -> Y {
        let mut e = Vec::new();
        put(&mut e, "bytes", &self.bytes);
        if let Some((text, _)) = self.link {
            e.push(("link".into(), Y::S(text.into())));
        }
        put(&mut e, "checksum_rate", &self.checksum_rate);
        put(&mut e, "handling", &self.handling);
        put(&mut e, "replicas", &self.replicas);
        put(&mut e, "ack", &self.ack);
        Y::M {
            entries: e,
            flow: g.chance(0.5),
        }
    }
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
    w.map = g.maybe(0.3, |g| {
        let b = if g.chance(0.1) {
            0
        } else {
            multiple(g, PAGE, PAGE, 256 << 20)
        };
        size(g, b)
    });
    w.numjobs = g.maybe(0.4, |g| g.edge(1, 4, 64) as u32);
    w.startdelay = g.maybe(0.2, |g| dur_in(g, 0, duration_ns + duration_ns / 4));
    // Commits only into a map, at least 64 B of logs each (what the loader accepts).
    if w.map.as_ref().is_some_and(|m| m.v > 0) {
        let most = w.size.as_ref().map_or(64 << 20, |s| s.v) / 64;
        w.commits = g.maybe(0.6, |g| {
            if g.chance(0.05) {
                0
            } else {
                g.edge(1, (most / 16).max(1), most)
            }
        });
    }
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
                WK::CpuIo => "cpuio",
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
        if let Some(f) = &self.from {
            e.push(("from".into(), Y::S(quoted(f))));
        }
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
        match (&self.startdelay, &self.startdelay_high) {
            (Some(lo), Some(hi)) => {
                e.push((
                    "startdelay".into(),
                    Y::S(format!("{}-{}", lo.text, hi.text)),
                ));
            }
            _ => put(&mut e, "startdelay", &self.startdelay),
        }
        put(&mut e, "thinktime", &self.thinktime);
        put(&mut e, "thinktime_blocks", &self.thinktime_blocks);
        put(&mut e, "thinktime_blocks_type", &self.thinktime_blocks_type);
        put(&mut e, "thinktime_spin", &self.thinktime_spin);
        put(&mut e, "cpuload", &self.cpuload);
        put(&mut e, "cpuchunks", &self.cpuchunks);
        put(&mut e, "chunk", &self.chunk);
        put(&mut e, "background", &self.background);
        put(&mut e, "dirty_limit", &self.dirty_limit);
        put(&mut e, "loops", &self.loops);
        put(&mut e, "progress_every", &self.progress_every);
        put(&mut e, "hash_cost", &self.hash_cost);
        put(&mut e, "map", &self.map);
        put(&mut e, "commits", &self.commits);
        if let Some(sv) = &self.serve {
            e.push(("serve".into(), sv.yaml(g)));
        }
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
        if let Some(p) = app_problem(w) {
            return Some(p);
        }
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
            WK::CpuIo => format!("cpuio{i}"),
        };
        let name = w.name.clone().unwrap_or(default_name);
        if names.contains(&name) {
            return Some(format!("workload name {name} twice"));
        }
        names.push(name);
        if kind == WK::CpuIo {
            // No region: the layout cursor stays where it is.
            continue;
        }
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
    if ws.iter().all(|w| w.kind == Some(WK::CpuIo)) {
        return Some("every workload is cpuio".into());
    }
    // The node has one link: every serving workload must give it the same rate.
    let links: Vec<u64> = ws
        .iter()
        .filter_map(|w| w.serve.as_ref())
        .map(|s| s.link.map_or(3_125_000_000, |l| l.1))
        .collect();
    if links.windows(2).any(|p| p[0] != p[1]) {
        return Some("serving workloads with different links".into());
    }
    None
}

/// Why the loader must refuse `w`'s think-time and cpuio fields, if it must.
fn app_problem(w: &Workload) -> Option<String> {
    let think_on = w.thinktime.as_ref().is_some_and(|t| t.v > 0);
    let companions = w.thinktime_blocks.is_some()
        || w.thinktime_blocks_type.is_some()
        || w.thinktime_spin.is_some();
    if companions && !think_on {
        return Some("a thinktime companion without thinktime".into());
    }
    if think_on && (w.rate.is_some() || w.think.is_some()) {
        return Some("thinktime beside rate or think".into());
    }
    if w.thinktime_blocks == Some(0) {
        return Some("thinktime_blocks 0".into());
    }
    if w.serve.is_some() {
        let fields = w.thinktime.is_some() || companions || w.rate.is_some() || w.think.is_some();
        if fields || !matches!(w.rw, Some("write" | "randwrite")) || w.kind != Some(WK::Fio) {
            return Some("serve beside think time or rate, or on a job that reads".into());
        }
    }
    if w.kind == Some(WK::CpuIo) && !w.cpuload.is_some_and(|l| (1..=100).contains(&l)) {
        return Some("cpuio without a cpuload in 1..=100".into());
    }
    if w.cpuchunks
        .as_ref()
        .is_some_and(|c| c.v == 0 || c.v % 1_000 != 0)
    {
        return Some("cpuchunks not whole microseconds above zero".into());
    }
    None
}

/// A fio time of `ns` (whole microseconds): a bare number of microseconds (fio's unit) or a
/// duration spelling.
fn fio_time(g: &mut G, ns: u64) -> Q<u64> {
    if g.chance(0.4) {
        q(ns, format!("{}", ns / 1_000))
    } else {
        dur(g, ns)
    }
}

/// Now and then (on the side stream, so the main draws stay as they were): fio's think time
/// on a closed-loop job without `think`, a `startdelay` range, and a `cpuio` process.
pub(super) fn add_app_options(g: &mut G, ws: &mut Vec<Workload>, duration_ns: u64) {
    for w in ws.iter_mut() {
        let fio = matches!(w.kind, Some(WK::Fio | WK::Gitk));
        if fio && w.rate.is_none() && w.think.is_none() && g.chance(0.3) {
            let us = g.edge(1, 500_000, 5_000_000);
            w.thinktime = Some(fio_time(g, us * 1_000));
            w.thinktime_blocks = g.maybe(0.6, |g| g.edge(1, 64, 100_000) as u32);
            w.thinktime_blocks_type = g.maybe(0.4, |g| g.pick(&["complete", "issue"]));
            w.thinktime_spin = g.maybe(0.4, |g| {
                let spin = g.int(0, us * 2);
                fio_time(g, spin * 1_000)
            });
        }
        let writes = matches!(w.rw, Some("write" | "randwrite")) && w.kind == Some(WK::Fio);
        if writes && w.thinktime.is_none() && w.rate.is_none() && w.think.is_none() {
            let bs = w.bs.as_ref().map_or(4096, |b| b.v);
            w.serve = g.maybe(0.2, |g| Serve::draw(g, bs));
        }
        if fio && g.chance(0.15) {
            let lo = w
                .startdelay
                .clone()
                .unwrap_or_else(|| dur_in(g, 0, duration_ns / 2));
            let span = dur_in(g, 0, duration_ns);
            w.startdelay_high = Some(dur(g, lo.v + span.v));
            w.startdelay = Some(lo);
        }
    }
    if g.chance(0.25) {
        let mut w = Workload {
            name: g.maybe(0.4, |g| g.pick(&["app", "cpu", "burn"]).to_string()),
            kind: Some(WK::CpuIo),
            cpuload: Some(g.int(1, 100) as u32),
            ..Workload::default()
        };
        w.cpuchunks = g.maybe(0.6, |g| {
            let us = g.edge(100, 50_000, 1_000_000);
            fio_time(g, us * 1_000)
        });
        w.numjobs = g.maybe(0.4, |g| g.edge(1, 4, 16) as u32);
        w.startdelay = g.maybe(0.3, |g| dur_in(g, 0, duration_ns));
        ws.push(w);
        if workloads_problem(ws, None).is_some() {
            ws.pop();
        }
    }
}

pub(super) fn workloads(g: &mut G, duration_ns: u64) -> Vec<Workload> {
    let n = g.log(1, 4) as usize;
    (0..n).map(|_| workload(g, duration_ns)).collect()
}
