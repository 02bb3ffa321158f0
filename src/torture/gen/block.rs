//! The `block:` section: legacy or blk-mq queue, elevator, plugging and CFQ's knobs, with
//! the rules on which knobs go with which mode; blk-mq's hardware queues, interrupt CPUs,
//! `rq_affinity` and scheduler with mq-deadline's tunables.

use super::*;

#[derive(Debug, Clone, Default)]
pub(super) struct Block {
    pub(super) mode: Option<&'static str>,
    pub(super) nr_requests: Option<u32>,
    pub(super) elevator: Option<&'static str>,
    pub(super) plug: Option<bool>,
    pub(super) unplug_threshold: Option<u32>,
    pub(super) low_latency: Option<bool>,
    pub(super) slice_sync: Option<Q<u64>>,
    pub(super) slice_async: Option<Q<u64>>,
    pub(super) slice_idle: Option<Q<u64>>,
    pub(super) quantum: Option<u32>,
    pub(super) hw_queues: Option<u32>,
    pub(super) irq_cpus: Option<Q<Vec<u32>>>,
    pub(super) rq_affinity: Option<u32>,
    pub(super) scheduler: Option<&'static str>,
    pub(super) read_expire: Option<Q<u64>>,
    pub(super) write_expire: Option<Q<u64>>,
    pub(super) fifo_batch: Option<u32>,
    pub(super) writes_starved: Option<u32>,
}

/// A list of CPUs as YAML.
fn cpu_list(cpus: Vec<u32>) -> Q<Vec<u32>> {
    let text: Vec<String> = cpus.iter().map(u32::to_string).collect();
    q(cpus, format!("[{}]", text.join(", ")))
}

/// blk-mq's hardware fields and scheduler, each with probability `p`.
fn mq_fields(g: &mut G, b: &mut Block, p: f64) {
    b.hw_queues = g.maybe(p * 0.5, |g| g.log(1, 8) as u32);
    let n = b.hw_queues.unwrap_or(1);
    // Mostly low CPUs, so that a machine of a few CPUs has them.
    b.irq_cpus = g.maybe(p * 0.4, |g| {
        cpu_list((0..n).map(|_| g.int(0, 3) as u32).collect())
    });
    b.rq_affinity = g.maybe(p * 0.5, |g| g.int(0, 2) as u32);
    b.scheduler = g.maybe(p, |g| if g.chance(0.6) { "mq-deadline" } else { "none" });
    if b.scheduler == Some("mq-deadline") {
        b.read_expire = g.maybe(p, |g| dur_in(g, 0, 1_000_000_000));
        b.write_expire = g.maybe(p, |g| dur_in(g, 0, 10_000_000_000));
        b.fifo_batch = g.maybe(p, |g| g.edge(1, 64, 1_000_000) as u32);
        b.writes_starved = g.maybe(p, |g| g.int(0, 8) as u32);
    }
}

pub(super) fn block(g: &mut G, p: f64) -> Block {
    let mq = g.chance(0.3);
    let mut b = Block {
        mode: g.maybe(p, |_| if mq { "blk-mq" } else { "legacy" }),
        nr_requests: g.maybe(p, |g| g.edge(4, 512, 100_000) as u32),
        ..Block::default()
    };
    if mq {
        b.elevator = g.maybe(p * 0.5, |_| "fifo");
        b.plug = g.maybe(p * 0.5, |_| false);
        mq_fields(g, &mut b, p);
        return b;
    }
    b.rq_affinity = g.maybe(p * 0.3, |g| g.int(0, 2) as u32);
    let cfq = g.chance(0.7);
    b.elevator = if cfq {
        g.maybe(p, |_| "cfq")
    } else {
        Some("fifo")
    };
    let plug = g.chance(0.8);
    b.plug = if plug {
        g.maybe(p, |_| true)
    } else {
        Some(false)
    };
    if plug {
        b.unplug_threshold = g.maybe(p, |g| g.log(1, 32) as u32);
    }
    if cfq {
        b.low_latency = g.maybe(p, |g| g.chance(0.5));
        b.slice_sync = g.maybe(p, |g| dur_in(g, 1_000_000, 200_000_000));
        b.slice_async = g.maybe(p, |g| dur_in(g, 1_000_000, 100_000_000));
        b.slice_idle = g.maybe(p, |g| dur_in(g, 0, 20_000_000));
        b.quantum = g.maybe(p, |g| g.log(1, 32) as u32);
    }
    b
}

impl Block {
    pub(super) fn merge(&mut self, o: Block) {
        merge_struct!(self, o; mode, nr_requests, elevator, plug, unplug_threshold, low_latency,
            slice_sync, slice_async, slice_idle, quantum, hw_queues, irq_cpus, rq_affinity,
            scheduler, read_expire, write_expire, fifo_batch, writes_starved);
    }
    /// What the loader refuses in blk-mq's fields on `cpus` CPUs and a device of `kind`.
    pub(super) fn mq_problem(&self, cpus: u32, kind: Option<DevKind>) -> Option<String> {
        let mq = self.mode == Some("blk-mq");
        let deadline = self.read_expire.is_some()
            || self.write_expire.is_some()
            || self.fifo_batch.is_some()
            || self.writes_starved.is_some();
        let mq_only = self.hw_queues.is_some() || self.scheduler.is_some() || deadline;
        if !mq && mq_only {
            return Some("blk-mq fields on a legacy queue".into());
        }
        if deadline && self.scheduler != Some("mq-deadline") {
            return Some("mq-deadline tunables without mq-deadline".into());
        }
        if kind == Some(DevKind::Ramdisk) && (mq_only || self.irq_cpus.is_some()) {
            return Some("hardware-queue fields on brd".into());
        }
        let queues = self.hw_queues.unwrap_or(match kind {
            // Every `nvme*` preset gets a hardware queue per CPU (`default_hw_queues`).
            Some(DevKind::Nvme | DevKind::NvmeGen4 | DevKind::NvmeGen5) => cpus.min(32),
            _ => 1,
        });
        if queues > cpus {
            return Some("more hardware queues than CPUs".into());
        }
        match &self.irq_cpus {
            Some(l) if l.v.len() != queues as usize => Some("irq_cpus not one per queue".into()),
            Some(l) if l.v.iter().any(|&c| c >= cpus) => Some("irq_cpus past the CPUs".into()),
            _ => None,
        }
    }
    pub(super) fn problem(&self) -> Option<String> {
        let mq = self.mode == Some("blk-mq");
        let cfq_fields = self.low_latency.is_some()
            || self.slice_sync.is_some()
            || self.slice_async.is_some()
            || self.slice_idle.is_some()
            || self.quantum.is_some();
        if mq && self.elevator == Some("cfq") {
            return Some("blk-mq with cfq".into());
        }
        if mq && self.plug == Some(true) {
            return Some("blk-mq plugged".into());
        }
        let plug = !mq && self.plug != Some(false);
        if !plug && self.unplug_threshold.is_some() {
            return Some("unplug_threshold without plugging".into());
        }
        let cfq = !mq && self.elevator != Some("fifo");
        if !cfq && cfq_fields {
            return Some("cfq fields without cfq".into());
        }
        None
    }
    pub(super) fn yaml(&self) -> Y {
        let mut e = Vec::new();
        put(&mut e, "mode", &self.mode);
        put(&mut e, "nr_requests", &self.nr_requests);
        put(&mut e, "elevator", &self.elevator);
        put(&mut e, "plug", &self.plug);
        put(&mut e, "unplug_threshold", &self.unplug_threshold);
        put(&mut e, "low_latency", &self.low_latency);
        put(&mut e, "slice_sync", &self.slice_sync);
        put(&mut e, "slice_async", &self.slice_async);
        put(&mut e, "slice_idle", &self.slice_idle);
        put(&mut e, "quantum", &self.quantum);
        put(&mut e, "hw_queues", &self.hw_queues);
        put(&mut e, "irq_cpus", &self.irq_cpus);
        put(&mut e, "rq_affinity", &self.rq_affinity);
        put(&mut e, "scheduler", &self.scheduler);
        put(&mut e, "read_expire", &self.read_expire);
        put(&mut e, "write_expire", &self.write_expire);
        put(&mut e, "fifo_batch", &self.fifo_batch);
        put(&mut e, "writes_starved", &self.writes_starved);
        Y::map(e)
    }
}
