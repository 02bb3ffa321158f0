//! The `crypt:` section: cipher and costs, sync or async engine, the unplug switch, the io
//! queues and the host preset.

use super::*;

#[derive(Debug, Clone, Default)]
pub(super) struct Crypt {
    pub(super) cipher: Option<&'static str>,
    pub(super) encrypt_rate: Option<Q<RateV>>,
    pub(super) decrypt_rate: Option<Q<RateV>>,
    pub(super) per_sector_cost: Option<Q<u64>>,
    pub(super) hop_cost: Option<Q<u64>>,
    pub(super) cost: Option<Dist>,
    pub(super) engine: Option<&'static str>,
    pub(super) async_queue_limit: Option<u32>,
    pub(super) async_rate: Option<Q<RateV>>,
    pub(super) unplug_after_submit: Option<bool>,
    pub(super) io_queues: Option<&'static str>,
    pub(super) host: Option<&'static str>,
    pub(super) submit_cost: Option<Q<u64>>,
    pub(super) clone_submit_cost: Option<Q<u64>>,
    pub(super) max_read_size: Option<Q<u64>>,
    pub(super) max_write_size: Option<Q<u64>>,
}

pub(super) fn crypt(g: &mut G, p: f64) -> Crypt {
    let mut c = crypt_main(g, p);
    // On the side stream, and never beside `host` (the loader refuses the pair).
    if c.host.is_none() {
        c.submit_cost = g.side(|g| {
            g.maybe(p * 0.3, |g| {
                if g.chance(0.05) {
                    dur_in(g, 0, 100_000_000)
                } else {
                    dur_in(g, 0, 50_000)
                }
            })
        });
    }
    c.clone_submit_cost = g.side(|g| g.maybe(p * 0.3, |g| dur_in(g, 0, 20_000)));
    // dm-crypt's module parameters (6.11+), also on the side stream.
    c.max_read_size = g.side(|g| g.maybe(p * 0.3, split_size));
    c.max_write_size = g.side(|g| g.maybe(p * 0.3, split_size));
    c
}

/// A value for `max_read_size` / `max_write_size`: usually a power of two, else any whole
/// number of sectors up to 2 MiB.
pub(super) fn split_size(g: &mut G) -> Q<u64> {
    let bytes = if g.chance(0.7) {
        g.pick(&[64u64, 128, 256, 512, 1024]) << 10
    } else {
        g.int(1, 4096) * 512
    };
    size(g, bytes)
}

fn crypt_main(g: &mut G, p: f64) -> Crypt {
    let asynch = g.chance(0.3);
    Crypt {
        cipher: g.maybe(p, |g| {
            // Every preset the loader knows, and YAML's quoted spelling of `null`.
            let mut names = crate::model::base::physics::Cipher::NAMES.to_vec();
            names.push("\"null\"");
            g.pick(&names)
        }),
        encrypt_rate: g.maybe(p * 0.3, |g| bandwidth(g, 20e6, 10e9)),
        decrypt_rate: g.maybe(p * 0.3, |g| bandwidth(g, 20e6, 10e9)),
        per_sector_cost: g.maybe(p * 0.5, |g| dur_in(g, 0, 2_000)),
        hop_cost: g.maybe(p, |g| dur_in(g, 0, 50_000)),
        cost: g.maybe(p * 0.2, |g| dist(g, 1_000, 2_000_000)),
        engine: if asynch {
            Some("async")
        } else {
            g.maybe(p * 0.5, |_| "sync")
        },
        async_queue_limit: if asynch {
            g.maybe(p, |g| g.log(1, 200) as u32)
        } else {
            None
        },
        async_rate: if asynch {
            g.maybe(p, |g| bandwidth(g, 20e6, 10e9))
        } else {
            None
        },
        unplug_after_submit: g.maybe(p * 0.5, |g| g.chance(0.5)),
        io_queues: g.maybe(p * 0.5, |g| g.pick(&["one", "mason-v3"])),
        host: g.maybe(p * 0.3, |g| g.pick(&["bare-metal", "vm-2020", "g9-2020"])),
        submit_cost: None,
        clone_submit_cost: None,
        max_read_size: None,
        max_write_size: None,
    }
}

impl Crypt {
    pub(super) fn merge(&mut self, o: Crypt) {
        let Crypt { cost, .. } = &o;
        match (&mut self.cost, cost.clone()) {
            (Some(a), Some(b)) => a.merge(b),
            (a, b) => set(a, b),
        }
        merge_struct!(self, o; cipher, encrypt_rate, decrypt_rate, per_sector_cost, hop_cost,
            engine, async_queue_limit, async_rate, unplug_after_submit, io_queues, host,
            submit_cost, clone_submit_cost, max_read_size, max_write_size);
    }
    pub(super) fn problem(&self, k: Option<&Kernel>) -> Option<String> {
        if self.io_queues == Some("one") && k.is_some_and(|k| k.patched("dm-crypt-unplug")) {
            return Some("io_queues: one with patch 6".into());
        }
        if self.engine != Some("async")
            && (self.async_queue_limit.is_some() || self.async_rate.is_some())
        {
            return Some("async fields without engine: async".into());
        }
        if self.host.is_some() && self.hop_cost.is_some() {
            return Some("host and hop_cost together".into());
        }
        if self.host.is_some() && self.submit_cost.is_some() {
            return Some("host and submit_cost together".into());
        }
        let split = k
            .and_then(Kernel::modern)
            .and_then(|v| v.dmcrypt())
            .is_some_and(|r| r.split_bios);
        if !split && (self.max_read_size.is_some() || self.max_write_size.is_some()) {
            return Some("max_read_size or max_write_size before 6.11".into());
        }
        self.cost.as_ref().and_then(|c| c.problem(false))
    }
    pub(super) fn yaml(&self) -> Y {
        let mut e = Vec::new();
        put(&mut e, "cipher", &self.cipher);
        put(&mut e, "encrypt_rate", &self.encrypt_rate);
        put(&mut e, "decrypt_rate", &self.decrypt_rate);
        put(&mut e, "per_sector_cost", &self.per_sector_cost);
        put(&mut e, "hop_cost", &self.hop_cost);
        if let Some(c) = &self.cost {
            e.push(("cost".into(), c.yaml()));
        }
        put(&mut e, "engine", &self.engine);
        put(&mut e, "async_queue_limit", &self.async_queue_limit);
        put(&mut e, "async_rate", &self.async_rate);
        put(&mut e, "unplug_after_submit", &self.unplug_after_submit);
        put(&mut e, "io_queues", &self.io_queues);
        put(&mut e, "host", &self.host);
        put(&mut e, "submit_cost", &self.submit_cost);
        put(&mut e, "clone_submit_cost", &self.clone_submit_cost);
        put(&mut e, "max_read_size", &self.max_read_size);
        put(&mut e, "max_write_size", &self.max_write_size);
        Y::map(e)
    }
}
