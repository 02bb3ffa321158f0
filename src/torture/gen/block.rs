//! The `block:` section: legacy or blk-mq queue, elevator, plugging and CFQ's knobs, with
//! the rules on which knobs go with which mode.

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
        return b;
    }
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
            slice_sync, slice_async, slice_idle, quantum);
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
        Y::map(e)
    }
}
