//! A whole scenario (the base file or a variant's `set:`): its fields and sections, the
//! loader's merge of a `set:` over the base, its rules, its YAML, and the draws of a valid
//! base and of a variant.

use super::*;

/// A scenario (the base file, or a variant's `set:`).
#[derive(Debug, Clone, Default)]
pub(super) struct Sc {
    pub(super) name: Option<String>,
    pub(super) description: Option<String>,
    pub(super) seed: Option<u64>,
    pub(super) duration: Option<Q<u64>>,
    pub(super) warmup: Option<Q<u64>>,
    pub(super) max_events: Option<u64>,
    pub(super) replications: Option<u32>,
    pub(super) cpus: Option<u32>,
    pub(super) kernel: Option<Kernel>,
    pub(super) device: Option<Device>,
    pub(super) block: Option<Block>,
    pub(super) crypt: Option<Crypt>,
    pub(super) policies: Option<Vec<&'static str>>,
    pub(super) workloads: Option<Vec<Workload>>,
    pub(super) memory: Option<Memory>,
    pub(super) variants: Vec<(String, Sc)>,
}

pub(super) const POLICIES: [&str; 8] = [
    "none",
    "fifo",
    "split",
    "prio",
    "ratio",
    "inline",
    "mason-v3",
    "stock-5.8",
];
pub(super) const DEFAULT_DURATION_NS: u64 = 60_000_000_000;

/// Merges `o` into `a` where both are nested mappings.
pub(super) fn merge_opt<T>(a: &mut Option<T>, o: Option<T>, f: impl FnOnce(&mut T, T)) {
    match (a.as_mut(), o) {
        (Some(x), Some(y)) => f(x, y),
        (None, Some(y)) => *a = Some(y),
        _ => {}
    }
}

impl Sc {
    pub(super) fn merge(&mut self, o: Sc) {
        let Sc {
            kernel,
            device,
            block,
            crypt,
            memory,
            ..
        } = o.clone();
        merge_opt(&mut self.kernel, kernel, Kernel::merge);
        merge_opt(&mut self.device, device, Device::merge);
        merge_opt(&mut self.block, block, Block::merge);
        merge_opt(&mut self.crypt, crypt, Crypt::merge);
        merge_opt(&mut self.memory, memory, Memory::merge);
        merge_struct!(self, o; name, description, seed, duration, warmup, max_events,
            replications, cpus, policies, workloads);
    }

    pub(super) fn duration_ns(&self) -> u64 {
        self.duration.as_ref().map_or(DEFAULT_DURATION_NS, |d| d.v)
    }

    /// Runs in one report pass: policies (flag patterns expanded, as the loader does) ×
    /// replications.
    pub(super) fn runs(&self) -> u64 {
        self.policies
            .as_ref()
            .map_or(1, |p| expanded(p, self.kernel.as_ref()).len() as u64)
            * u64::from(self.replications.unwrap_or(10))
    }

    /// What a kernel after 2.6.x refuses: a memory model, a legacy queue (the mirror counts any
    /// `block:` without `mode: blk-mq` against it, which is stricter than the loader), 2.6.x
    /// layouts and flags the kernel lacks; and `dm-crypt` on a 2.6.x kernel.
    fn modern_problem(&self) -> Option<String> {
        let k = self.kernel.as_ref();
        let modern = k.and_then(Kernel::modern).is_some();
        if modern && self.memory.is_some() {
            return Some("memory on a kernel after 2.6.x".into());
        }
        if modern
            && self
                .block
                .as_ref()
                .is_some_and(|b| b.mode != Some("blk-mq"))
        {
            return Some("a block section without blk-mq on a kernel after 2.6.x".into());
        }
        let default = if modern { "dm-crypt" } else { "fifo" };
        let policies = self.policies.clone().unwrap_or_else(|| vec![default]);
        policies.iter().find_map(|p| policy_problem(p, k))
    }

    /// Why the loader must refuse this (resolved, variant-free) scenario, if it must.
    pub(super) fn problem(&self) -> Option<String> {
        if self.warmup.as_ref().map_or(0, |w| w.v) >= self.duration_ns() {
            return Some("warmup not below duration".into());
        }
        if let Some(k) = &self.kernel
            && let Some(p) = k.problem()
        {
            return Some(p);
        }
        let Some(device) = self.device.as_ref() else {
            return Some("no device".into());
        };
        if let Some(p) = device.problem() {
            return Some(p);
        }
        if let Some(b) = &self.block
            && let Some(p) = b
                .problem()
                .or_else(|| b.mq_problem(self.cpus.unwrap_or(1), device.kind))
        {
            return Some(p);
        }
        if let Some(b) = &self.block
            && b.low_latency == Some(true)
            && self.kernel.as_ref().is_some_and(Kernel::before_2_6_32)
        {
            return Some("low_latency on a kernel before 2.6.32".into());
        }
        if let Some(c) = &self.crypt
            && let Some(p) = c.problem(self.kernel.as_ref())
        {
            return Some(p);
        }
        if let Some(p) = self.modern_problem() {
            return Some(p);
        }
        if let Some(m) = &self.memory
            && let Some(p) = m.problem()
        {
            return Some(p);
        }
        let fake_gitk = |w: &Workload| w.kind == Some(WK::FakeGitk);
        if self.memory.is_none() && self.workloads.iter().flatten().any(fake_gitk) {
            return Some("fake-gitk without memory".into());
        }
        if let Some(p) = receiver_problem(
            self.memory.as_ref(),
            self.workloads.as_deref().unwrap_or(&[]),
        ) {
            return Some(p);
        }
        workloads_problem(self.workloads.as_deref().unwrap_or(&[]), device.capacity())
    }

    pub(super) fn yaml(&self, g: &mut G, top: bool) -> Y {
        let mut e = Vec::new();
        if let Some(n) = &self.name {
            e.push(("name".into(), Y::S(quoted(n))));
        }
        if let Some(d) = &self.description {
            e.push(("description".into(), Y::S(quoted(d))));
        }
        put(&mut e, "seed", &self.seed);
        put(&mut e, "duration", &self.duration);
        put(&mut e, "warmup", &self.warmup);
        put(&mut e, "max_events", &self.max_events);
        put(&mut e, "replications", &self.replications);
        put(&mut e, "cpus", &self.cpus);
        // Sections in a random order: the loader must not care.
        let mut sections: Vec<(String, Y)> = Vec::new();
        if let Some(k) = &self.kernel {
            sections.push(("kernel".into(), k.yaml()));
        }
        if let Some(d) = &self.device {
            sections.push(("device".into(), d.yaml(g)));
        }
        if let Some(b) = &self.block {
            sections.push(("block".into(), b.yaml()));
        }
        if let Some(c) = &self.crypt {
            sections.push(("crypt".into(), c.yaml()));
        }
        if let Some(m) = &self.memory {
            sections.push(("memory".into(), m.yaml(g)));
        }
        if let Some(p) = &self.policies {
            sections.push((
                "policies".into(),
                Y::L {
                    // A flag pattern (`dm-crypt+*`, `dm-crypt+{a,b}`) is quoted: `*`, `{` and `,`
                    // mean something to YAML.
                    items: p
                        .iter()
                        .map(|s| {
                            if s.contains(['*', '{']) {
                                Y::S(quoted(s))
                            } else {
                                Y::S(s.to_string())
                            }
                        })
                        .collect(),
                    flow: g.chance(0.8),
                },
            ));
        }
        if let Some(w) = &self.workloads {
            let items = w.iter().map(|w| w.yaml(g)).collect();
            sections.push(("workloads".into(), Y::L { items, flow: false }));
        }
        for i in (1..sections.len()).rev() {
            let j = g.int(0, i as u64) as usize;
            sections.swap(i, j);
        }
        e.extend(sections);
        if top && !self.variants.is_empty() {
            let items = self
                .variants
                .iter()
                .map(|(name, set)| {
                    let mut set_y = set.yaml(g, false);
                    if let Y::M { flow, .. } = &mut set_y {
                        *flow = g.chance(0.5);
                    }
                    Y::map(vec![
                        ("name".into(), Y::S(quoted(name))),
                        ("set".into(), set_y),
                    ])
                })
                .collect();
            e.push(("variants".into(), Y::L { items, flow: false }));
        }
        Y::map(e)
    }
}

/// The flag patterns the generator draws (one of several policies a modern draw may list):
/// the kernel's every combination, and subsets whose flags some kernels lack (the mirror
/// refuses those where they do). `dm-crypt+*` stands for up to 32 runs, so it is drawn least.
pub(super) const FLAG_PATTERNS: [&str; 4] = [
    "dm-crypt+*",
    "dm-crypt+{no_read_workqueue}",
    "dm-crypt+{no_write_workqueue,same_cpu_crypt}",
    "dm-crypt+{high_priority,submit_from_crypt_cpus}",
];

/// Policies for a kernel after 2.6.x: `none`, `dm-crypt` and `dm-crypt+<flags>` (flags the
/// kernel may lack included: the mirror refuses those).
pub(super) fn modern_policies(g: &mut G) -> Vec<&'static str> {
    use crate::model::crypt::policy::{DmFlags, find};
    let n = g.int(1, 4);
    let mut out: Vec<&'static str> = Vec::new();
    for _ in 0..n {
        let name = match g.int(0, 6) {
            0 => "none",
            1 => "dm-crypt",
            2 => g.pick(&FLAG_PATTERNS),
            3 if g.chance(0.5) => FLAG_PATTERNS[0],
            _ => {
                let bits = g.int(1, (1 << DmFlags::ALL.len()) - 1) as u8;
                let name = DmFlags(bits).policy_name();
                find(&name).expect("every flag set is a policy").name
            }
        };
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// The policy names `policies` stand for on kernel `k`: each flag pattern expanded to its
/// combinations (`dm-crypt+*` to the kernel's flags), names a pattern made twice listed once
/// (the mirror of `scenario::top`'s `policies`). Patterns on a kernel without dm-crypt stand
/// for nothing (the loader refuses them).
pub(super) fn expanded(policies: &[&'static str], k: Option<&Kernel>) -> Vec<String> {
    use crate::model::crypt::policy::{DmFlags, FlagPattern, find};
    let mut out: Vec<String> = Vec::new();
    for p in policies {
        let set = match FlagPattern::parse(p) {
            None => {
                let name = find(p).map_or(p.to_string(), |i| i.name.to_string());
                if !out.contains(&name) {
                    out.push(name);
                }
                continue;
            }
            Some(Err(_)) => continue,
            Some(Ok(FlagPattern::Subset(f))) => f,
            Some(Ok(FlagPattern::All)) => k
                .and_then(Kernel::modern)
                .and_then(|v| v.dmcrypt())
                .map_or(DmFlags::NONE, |r| r.flags()),
        };
        for f in set.combinations() {
            let name = f.policy_name();
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// Why a kernel refuses policy `p`, if it does (the mirror of `scenario::kernel::policy_fits`).
pub(super) fn policy_problem(p: &str, k: Option<&Kernel>) -> Option<String> {
    use crate::model::crypt::policy::{DmFlags, FlagPattern, find};
    let dm = p.starts_with("dm-crypt");
    let Some(v) = k.and_then(Kernel::modern) else {
        return dm.then(|| format!("{p} on a 2.6.x kernel"));
    };
    if p == "none" {
        return None;
    }
    if !dm {
        return Some(format!("{p} on kernel {}", v.name()));
    }
    let rules = v.dmcrypt().expect("modern");
    let flags = match FlagPattern::parse(p) {
        // `dm-crypt+*` takes only the flags the kernel has.
        Some(Ok(FlagPattern::All)) => return None,
        Some(Ok(FlagPattern::Subset(f))) => f,
        Some(Err(e)) => return Some(format!("{p}: {e}")),
        None => find(p).expect("generated names are policies").flags,
    };
    let bypass = flags.has(DmFlags::NO_READ_WORKQUEUE) || flags.has(DmFlags::NO_WRITE_WORKQUEUE);
    if (bypass && !rules.bypass_flags)
        || (flags.has(DmFlags::HIGH_PRIORITY) && !rules.high_priority_flag)
    {
        return Some(format!("{p}: a flag kernel {} lacks", v.name()));
    }
    None
}

pub(super) fn policies(g: &mut G) -> Vec<&'static str> {
    let n = if g.chance(0.1) {
        POLICIES.len()
    } else {
        g.int(1, 3) as usize
    };
    let mut all = POLICIES.to_vec();
    for i in (1..all.len()).rev() {
        let j = g.int(0, i as u64) as usize;
        all.swap(i, j);
    }
    all.truncate(n);
    all
}

/// Durations of a base: 50–300 ms, warm-up shorter.
pub(super) fn horizon(g: &mut G) -> (Q<u64>, Option<Q<u64>>) {
    let d = g.int(50, 300) * 1_000_000;
    let d = dur(g, d);
    let w = g.maybe(0.6, |g| {
        let ns = g.int(0, d.v / 2);
        let ns = if g.chance(0.5) {
            ns / 1_000_000 * 1_000_000
        } else {
            ns
        };
        dur(g, ns)
    });
    (d, w)
}

/// Repairs what a kernel after 2.6.x refuses in a base draw (memory, a legacy queue, 2009
/// patches, 2.6.x policies), and draws dm-crypt's module parameters for a kernel that splits
/// bios (dropping them for one that does not).
fn repair_modern(g: &mut G, sc: &mut Sc) {
    let split = sc
        .kernel
        .as_ref()
        .and_then(Kernel::modern)
        .and_then(|v| v.dmcrypt())
        .is_some_and(|r| r.split_bios);
    match (split, &mut sc.crypt) {
        (false, Some(c)) => {
            c.max_read_size = None;
            c.max_write_size = None;
        }
        // A kernel that splits bios: its module parameters are worth drawing more often.
        (true, c) => {
            let c = c.get_or_insert_with(Crypt::default);
            let draw = |g: &mut G| g.side(|g| g.maybe(0.8, split_size));
            if c.max_read_size.is_none() {
                c.max_read_size = draw(g);
            }
            if c.max_write_size.is_none() {
                c.max_write_size = draw(g);
            }
        }
        (false, None) => {}
    }
    if sc.kernel.as_ref().and_then(Kernel::modern).is_some() {
        sc.memory = None;
        if let Some(b) = &mut sc.block {
            b.mode = Some("blk-mq");
        }
        if let Some(k) = &mut sc.kernel {
            k.patches = None;
        }
        if sc.policies.is_some() {
            sc.policies = Some(modern_policies(g));
        }
    }
}

/// A random valid base scenario (no variants, no event budget yet): drawn until the mirror
/// of the rules finds nothing wrong (the draws below make that the usual first outcome).
pub(super) fn base(g: &mut G) -> Sc {
    loop {
        let sc = base_draw(g);
        if sc.problem().is_none() {
            return sc;
        }
    }
}

pub(super) fn base_draw(g: &mut G) -> Sc {
    let (duration, warmup) = horizon(g);
    let d_ns = duration.v;
    let mut sc = Sc {
        name: g.maybe(0.5, |g| {
            g.pick(&["torture", "two-queue", "nvme fio", "Ünïcode", "x"])
                .to_string()
        }),
        description: g.maybe(0.3, |g| {
            g.pick(&["a random case", "", "quotes \" and \\ backslashes"])
                .to_string()
        }),
        seed: g.maybe(0.7, |g| {
            if g.chance(0.5) {
                g.int(0, 1000)
            } else {
                g.int(0, u64::MAX)
            }
        }),
        duration: Some(duration),
        warmup,
        replications: g.maybe(0.95, |g| g.int(1, 3) as u32),
        cpus: g.maybe(0.7, |g| g.edge(1, 16, 1024) as u32),
        kernel: g.maybe(0.6, |g| kernel(g, 0.5)),
        device: Some(any_device(g, 0.3)),
        block: g.maybe(0.5, |g| block(g, 0.5)),
        crypt: g.maybe(0.6, |g| crypt(g, 0.5)),
        policies: g.maybe(0.9, policies),
        workloads: Some(workloads(g, d_ns)),
        memory: g.maybe(0.6, |g| memory(g, true, 0.6)),
        ..Sc::default()
    };
    // Each rule broken by the base's own draw is repaired on the field at fault (the variant
    // draws below are retried instead).
    repair_modern(g, &mut sc);
    if let (Some(k), Some(c)) = (&mut sc.kernel, &mut sc.crypt)
        && k.patched("dm-crypt-unplug")
        && c.io_queues == Some("one")
    {
        c.io_queues = Some("mason-v3");
    }
    if let Some(k) = &mut sc.kernel {
        let patched: Vec<bool> = Kernel::SWITCH_PATCH.iter().map(|p| k.patched(p)).collect();
        for ((_, switch), on) in k.switch_patches().into_iter().zip(patched) {
            if on && *switch == Some(false) {
                *switch = Some(true);
            }
        }
    }
    let cap = sc.device.as_ref().and_then(Device::capacity);
    while workloads_problem(sc.workloads.as_deref().unwrap_or(&[]), cap).is_some() {
        sc.workloads = Some(workloads(g, d_ns));
    }
    g.side(|g| add_fake_gitk(g, &mut sc, cap));
    g.side(|g| add_receiver(g, &mut sc));
    let d_ns = sc.duration_ns();
    if let Some(ws) = sc.workloads.as_mut() {
        g.side(|g| super::workload::add_app_options(g, ws, d_ns));
    }
    sc
}

/// Now and then a fake-gitk process joins the base's workloads, with the memory it needs
/// (drawn if the base had none) and, more often than elsewhere, swap; all on the side stream.
fn add_fake_gitk(g: &mut G, sc: &mut Sc, cap: Option<u64>) {
    if !g.chance(0.25) {
        return;
    }
    let d_ns = sc.duration_ns();
    let ws = sc.workloads.get_or_insert_with(Vec::new);
    let fits = (0..10).any(|_| {
        ws.push(fake_gitk(g, d_ns));
        let ok = workloads_problem(ws, cap).is_none();
        if !ok {
            ws.pop();
        }
        ok
    });
    if !fits {
        return;
    }
    if sc.memory.is_none() {
        sc.memory = (0..30)
            .map(|_| memory(g, true, 0.6))
            .find(|m| m.problem().is_none());
    }
    if let Some(m) = &mut sc.memory
        && m.swap.is_none()
        && g.chance(0.6)
    {
        let b = if g.chance(0.05) {
            crate::scenario::MAX_SWAP
        } else {
            g.int(0, 1 << 19) * PAGE
        };
        m.swap = Some(size(g, b));
    }
    if sc.memory.is_none()
        && let Some(ws) = &mut sc.workloads
    {
        ws.pop();
    }
}

/// Now and then the first buffered writer reads the first GFP_ATOMIC stream's socket
/// (`from:`), which makes that stream a receive path; all on the side stream.
fn add_receiver(g: &mut G, sc: &mut Sc) {
    if !g.chance(0.3) {
        return;
    }
    let mut s = sc.clone();
    let Some(a) = s
        .memory
        .as_mut()
        .and_then(|m| m.atomic.as_mut()?.first_mut())
    else {
        return;
    };
    let name = a.name.clone().unwrap_or_else(|| "atomic0".into());
    a.rate = None;
    a.hold = None;
    a.burst = None;
    a.poisson = None;
    a.buffer = None;
    if a.bandwidth.is_none() {
        a.bandwidth = Some(super::values::bandwidth(g, 100e3, 20e6));
    }
    a.orders = Some(vec![(g.int(0, 3), "1".into())]);
    a.ring = g.maybe(0.5, |g| g.edge(2, 512, 4096) as u32);
    let Some(w) = s
        .workloads
        .iter_mut()
        .flatten()
        .find(|w| w.kind == Some(WK::Writer))
    else {
        return;
    };
    w.rate = None;
    w.from = Some(name);
    if s.problem().is_none() {
        *sc = s;
    }
}

/// What the loader refuses about receive paths: a `from:` naming no stream, a stream read
/// twice or carrying a plain stream's fields, a `ring` on a stream nobody reads.
fn receiver_problem(m: Option<&Memory>, ws: &[Workload]) -> Option<String> {
    let streams: &[Atomic] = m.and_then(|m| m.atomic.as_deref()).unwrap_or(&[]);
    let name = |i: usize, a: &Atomic| a.name.clone().unwrap_or_else(|| format!("atomic{i}"));
    let mut read = vec![false; streams.len()];
    for w in ws.iter().filter(|w| w.from.is_some()) {
        let from = w.from.as_deref().unwrap_or_default();
        if w.kind != Some(WK::Writer) || w.rate.is_some() {
            return Some("from on a non-writer or beside rate".into());
        }
        let Some(i) = streams
            .iter()
            .enumerate()
            .position(|(i, a)| name(i, a) == from)
        else {
            return Some(format!("from names no stream ({from})"));
        };
        if std::mem::replace(&mut read[i], true) {
            return Some("a stream read twice".into());
        }
        let a = &streams[i];
        let plain = a.rate.is_some()
            || a.hold.is_some()
            || a.burst.is_some()
            || a.poisson.is_some()
            || a.buffer.is_some();
        let orders = a.orders.as_ref().map_or(
            if matches!(a.preset, Some("iwlagn")) {
                1
            } else {
                3
            },
            |o| o.iter().filter(|(_, w)| w != "0").count(),
        );
        if plain || a.bandwidth.is_none() || orders != 1 {
            return Some("a read stream that is not a receive path".into());
        }
    }
    if streams
        .iter()
        .zip(&read)
        .any(|(a, r)| a.ring.is_some() && !r)
    {
        return Some("ring on a stream nobody reads".into());
    }
    None
}

/// A random `set:` over `base`: a few fields and sections, each drawn as a variant would
/// write it.
pub(super) fn variant_set(g: &mut G, base: &Sc) -> Sc {
    let mut s = Sc::default();
    let atoms = g.int(0, 3);
    for _ in 0..atoms {
        match g.int(0, 10) {
            0 => s.kernel = Some(kernel(g, 0.3)),
            1 => {
                let base_dev = base.device.as_ref().expect("the base has a device");
                s.device = Some(if g.chance(0.5) {
                    // Same kind: a few fields merged over the base's.
                    let mut d = device(g, base_dev.kind.expect("kind"), 0.4);
                    if g.chance(0.5) {
                        d.kind = None;
                    }
                    if let (Some(b), true) = (&base_dev.service, d.service.is_some()) {
                        d.service = Some(dist_override(g, b, MIN_SERVICE_NS, 20_000_000));
                    }
                    d
                } else {
                    any_device(g, 0.3)
                });
            }
            2 => s.block = Some(block(g, 0.4)),
            3 => {
                let mut c = crypt(g, 0.3);
                if let (Some(b), Some(_)) =
                    (base.crypt.as_ref().and_then(|c| c.cost.as_ref()), &c.cost)
                {
                    c.cost = Some(dist_override(g, b, 1_000, 2_000_000));
                }
                s.crypt = Some(c);
            }
            4 => s.memory = Some(memory(g, base.memory.is_none(), 0.4)),
            5 if g.chance(0.5) => s.policies = Some(modern_policies(g)),
            5 => s.policies = Some(policies(g)),
            6 => s.workloads = Some(workloads(g, base.duration_ns())),
            7 => s.replications = Some(g.int(1, 3) as u32),
            8 => {
                let (d, w) = horizon(g);
                s.duration = Some(d);
                s.warmup = w;
            }
            9 => s.cpus = Some(g.edge(1, 64, 1024) as u32),
            _ => s.max_events = Some(1),
        }
    }
    s
}
