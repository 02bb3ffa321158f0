//! The `kernel:` section: HZ, version, patches and the reclaim switches, with the rules
//! that tie a patch to its switch.

use super::*;

pub(super) const PATCHES: [&str; 3] = [
    "kswapd-stay-awake-when-min",
    "force-highorder",
    "dm-crypt-unplug",
];

#[derive(Debug, Clone, Default)]
pub(super) struct Kernel {
    pub(super) hz: Option<u32>,
    pub(super) version: Option<&'static str>,
    pub(super) patches: Option<Vec<&'static str>>,
    pub(super) cwait_class: Option<&'static str>,
    pub(super) kswapd_nap: Option<bool>,
    pub(super) skip_below_min: Option<bool>,
    pub(super) wait_iff_congested: Option<bool>,
    pub(super) force_highorder: Option<bool>,
    pub(super) restart_wakes_kswapd: Option<bool>,
}

pub(super) fn kernel(g: &mut G, p: f64) -> Kernel {
    Kernel {
        hz: g.maybe(p, |g| g.pick(&[100, 250, 300, 1000])),
        version: g.maybe(p, |g| {
            g.pick(&["2.6.30", "2.6.31", "2.6.32", "2.6.33", "2.6.37"])
        }),
        patches: g.maybe(p * 0.8, |g| {
            let mut v: Vec<&'static str> =
                PATCHES.iter().copied().filter(|_| g.chance(0.5)).collect();
            if v.len() > 1 && g.chance(0.5) {
                v.reverse();
            }
            v
        }),
        cwait_class: g.maybe(p * 0.3, |g| g.pick(&["sync", "async"])),
        kswapd_nap: g.maybe(p * 0.3, |g| g.chance(0.5)),
        skip_below_min: g.maybe(p * 0.3, |g| g.chance(0.5)),
        wait_iff_congested: g.maybe(p * 0.3, |g| g.chance(0.5)),
        force_highorder: g.maybe(p * 0.3, |g| g.chance(0.5)),
        restart_wakes_kswapd: g.maybe(p * 0.3, |g| g.chance(0.5)),
    }
}

impl Kernel {
    pub(super) fn merge(&mut self, o: Kernel) {
        merge_struct!(self, o; hz, version, patches, cwait_class, kswapd_nap, skip_below_min,
            wait_iff_congested, force_highorder, restart_wakes_kswapd);
    }
    pub(super) fn patched(&self, p: &str) -> bool {
        self.patches.as_ref().is_some_and(|v| v.contains(&p))
    }
    pub(super) fn problem(&self) -> Option<String> {
        if self.skip_below_min == Some(false) && self.patched("kswapd-stay-awake-when-min") {
            return Some("skip_below_min: false with its patch".into());
        }
        if self.force_highorder == Some(false) && self.patched("force-highorder") {
            return Some("force_highorder: false with its patch".into());
        }
        None
    }
    pub(super) fn yaml(&self) -> Y {
        let mut e = Vec::new();
        put(&mut e, "hz", &self.hz);
        if let Some(v) = self.version {
            e.push(("version".into(), Y::S(quoted(v))));
        }
        if let Some(p) = &self.patches {
            e.push((
                "patches".into(),
                Y::L {
                    items: p.iter().map(|s| Y::S(s.to_string())).collect(),
                    flow: true,
                },
            ));
        }
        put(&mut e, "cwait_class", &self.cwait_class);
        put(&mut e, "kswapd_nap", &self.kswapd_nap);
        put(&mut e, "skip_below_min", &self.skip_below_min);
        put(&mut e, "wait_iff_congested", &self.wait_iff_congested);
        put(&mut e, "force_highorder", &self.force_highorder);
        put(&mut e, "restart_wakes_kswapd", &self.restart_wakes_kswapd);
        Y::map(e)
    }
}
