//! The `kernel:` section: HZ, version, patches and the reclaim switches, with the rules
//! that tie a patch to its switch.

use super::*;

/// Every name `kernel.patches` accepts: Mel's numbers, the two old names (aliases of 5 and 6)
/// and the force-highorder test hack.
pub(super) const PATCHES: [&str; 9] = [
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "kswapd-stay-awake-when-min",
    "dm-crypt-unplug",
    "force-highorder",
];

/// The patch a name means (a number and its old name are the same patch).
fn canonical(p: &str) -> &str {
    match p {
        "kswapd-stay-awake-when-min" => "5",
        "dm-crypt-unplug" => "6",
        other => other,
    }
}

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
    pub(super) congestion_both: Option<bool>,
}

pub(super) fn kernel(g: &mut G, p: f64) -> Kernel {
    Kernel {
        hz: g.maybe(p, |g| g.pick(&[100, 250, 300, 1000])),
        version: g.maybe(p, |g| {
            g.pick(&[
                "2.6.30", "2.6.31", "2.6.32", "2.6.33", "2.6.37", "4.19", "5.4", "5.8", "5.9",
                "6.6", "6.9", "6.10", "6.11", "6.12",
            ])
        }),
        patches: g.maybe(p * 0.8, |g| {
            // Each patch at most once, under its number or (for 5 and 6) its old name.
            let mut v: Vec<&'static str> = Vec::new();
            for &name in &PATCHES {
                if g.chance(0.35) && !v.iter().any(|q| canonical(q) == canonical(name)) {
                    v.push(name);
                }
            }
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
        congestion_both: g.maybe(p * 0.3, |g| g.chance(0.5)),
    }
}

impl Kernel {
    pub(super) fn merge(&mut self, o: Kernel) {
        merge_struct!(self, o; hz, version, patches, cwait_class, kswapd_nap, skip_below_min,
            wait_iff_congested, force_highorder, restart_wakes_kswapd, congestion_both);
    }
    /// Whether patch `p` (a number, old name or force-highorder) is listed under any name.
    pub(super) fn patched(&self, p: &str) -> bool {
        let p = canonical(p);
        self.patches
            .as_ref()
            .is_some_and(|v| v.iter().any(|q| canonical(q) == p))
    }
    /// Each switch a patch turns on, with the patch: `false` with it is refused.
    pub(super) fn switch_patches(&mut self) -> [(&'static str, &mut Option<bool>); 5] {
        [
            ("restart_wakes_kswapd", &mut self.restart_wakes_kswapd),
            ("congestion_both", &mut self.congestion_both),
            ("kswapd_nap", &mut self.kswapd_nap),
            ("skip_below_min", &mut self.skip_below_min),
            ("force_highorder", &mut self.force_highorder),
        ]
    }
    /// The patch that turns on each switch of [`Kernel::switch_patches`], in its order.
    pub(super) const SWITCH_PATCH: [&'static str; 5] = ["1", "3", "4", "5", "force-highorder"];
    pub(super) fn problem(&self) -> Option<String> {
        if self.modern().is_some() && self.patches.as_ref().is_some_and(|p| !p.is_empty()) {
            return Some("2009 patches on a kernel after 2.6.x".into());
        }
        let mut copy = self.clone();
        for ((name, switch), patch) in copy.switch_patches().into_iter().zip(Self::SWITCH_PATCH) {
            if *switch == Some(false) && self.patched(patch) {
                return Some(format!("{name}: false with its patch"));
            }
        }
        None
    }
    /// The version as resolved, if it is after 2.6.x (`None` for 2.6.x or absent).
    pub(super) fn modern(&self) -> Option<crate::model::base::config::KernelVersion> {
        let v = self.version?;
        crate::model::base::config::KernelVersion::ALL
            .into_iter()
            .find(|k| k.name() == v && k.is_modern())
    }
    /// The version as resolved (2.6.32 when absent).
    pub(super) fn before_2_6_32(&self) -> bool {
        matches!(self.version, Some("2.6.30" | "2.6.31"))
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
        put(&mut e, "congestion_both", &self.congestion_both);
        Y::map(e)
    }
}
