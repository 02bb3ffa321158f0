//! `kernel:`: HZ, the version whose reclaim rules run, the 2009 patches and the explicit
//! switches, resolved in that order; and its `qsim check` rows.
//!
//! Each switch is one row of [`SWITCHES`] (its name, the patch that turns it on, where it sits
//! in [`VmBehaviour`]) beside its field in [`RawKernel`]: resolution, the patch conflicts and
//! the `qsim check` rows all read that table.
//!
//! | field | default | why |
//! |---|---|---|
//! | `kernel.version` | 2.6.32 | the kernel of the 2009 reports (S2009) |
//! | `kernel.patches` | none | the 2009 patches are hypotheses to sweep, not facts (docs/model/kernels.md §3) |
//! | `kernel.<switch>` | the version's (`KernelVersion::defaults`), then the patches | an explicit switch wins over both |
//!
//! A patch and an explicit setting that undoes it (`skip_below_min: false` with
//! `kswapd-stay-awake-when-min`, `crypt.io_queues: one` with `dm-crypt-unplug`) are a
//! conflict, reported at the patch: otherwise a variant adding the patch over such a base would
//! silently change nothing.

use super::Error;
use super::check::{Checker, val};
use super::describe::{Rows, on_off, row};
use super::schema::{Capped, Field, MAX_LISTED_NAMES, names, raw_section};
use super::suggestion;
use super::types::*;
use super::units::UnitError;
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use serde_saphyr::{Location, Spanned};
use std::fmt;

/// Allowed `kernel.hz` values.
pub const HZ_VALUES: &[u32] = &[100, 250, 300, 1000];
/// One entry of `kernel.patches`: one of Mel Gorman's 2009 patches, numbered as in his tables,
/// or the `force-highorder` test hack every kernel of those tables carried.
pub struct Patch {
    /// The canonical name: Mel's number (`"1"`..`"6"`), or `force-highorder`.
    pub label: &'static str,
    /// Other names accepted for it (today's names of patches 5 and 6).
    pub aliases: &'static [&'static str],
    /// What it was, for `qsim check`.
    pub what: &'static str,
    /// A few words beside its number where a menu lists it (`qsim serve`).
    pub short: &'static str,
}

/// Every entry `kernel.patches` accepts (docs/model/kernels.md §4). Patch 1 sets
/// `restart_wakes_kswapd`, 3 `congestion_both`, 4 `kswapd_nap`, 5 `skip_below_min`,
/// `force-highorder` `force_highorder` ([`SWITCHES`]); 6 sets the crypt switch named by
/// [`CRYPT_PATCH`]; 2 has nothing to act on in this model ([`NO_EFFECT`]).
pub const PATCHES: &[Patch] = &[
    Patch {
        label: "1",
        aliases: &[],
        what: "a slow-path restart after failed direct reclaim wakes kswapd again (in 2.6.32)",
        short: "restart wakes kswapd",
    },
    Patch {
        label: "2",
        aliases: &[],
        what: "no ALLOC_HARDER for an rt task's allocations in interrupt context (in 2.6.32)",
        short: "no ALLOC_HARDER in irq",
    },
    Patch {
        label: "3",
        aliases: &[],
        what: "congestion-both: direct reclaim waits on ASYNC, then SYNC (never merged)",
        short: "congestion-both",
    },
    Patch {
        label: "4",
        aliases: &[],
        what: "kswapd naps HZ/10 and checks for a premature sleep (2.6.33, f50de2d3)",
        short: "kswapd naps",
    },
    Patch {
        label: "5",
        aliases: &["kswapd-stay-awake-when-min"],
        what: "kswapd skips its congestion wait below min (2.6.33, bb3ab596)",
        short: "kswapd awake below min",
    },
    Patch {
        label: "6",
        aliases: &["dm-crypt-unplug"],
        what: "Chris Mason's dm-crypt unplug fix (never merged)",
        short: "dm-crypt unplug",
    },
    Patch {
        label: "force-highorder",
        aliases: &[],
        what: "Mel's test hack, on every kernel of his tables; not a fix",
        short: "Mel's test hack",
    },
];

/// The patch whose switch lives in `crypt:` (`crypt.io_queues: mason-v3`, Chris Mason's sync
/// and async io threads as posted): patch 6, dm-crypt-unplug. The one place that maps it; `scenario::crypt` reads it.
pub(crate) const CRYPT_PATCH: &str = "6";

/// Patches accepted with no switch, each with why it changes nothing in this model.
pub(crate) const NO_EFFECT: &[(&str, &str)] = &[(
    "2",
    "no effect in this model: 2.6.31 gave ALLOC_HARDER to a __GFP_WAIT allocation in \
     interrupt context when the interrupted task was real-time; qsim has no real-time tasks, \
     and GFP_ATOMIC (no __GFP_WAIT) gets ALLOC_HARDER on both kernels",
)];

/// The canonical label of a `kernel.patches` entry as written (`5`, `"5"` or
/// `kswapd-stay-awake-when-min` → `"5"`), if it names one.
pub(crate) fn canonical(written: &str) -> Option<&'static str> {
    let w = written.trim();
    PATCHES
        .iter()
        .find(|p| p.label == w || p.aliases.contains(&w))
        .map(|p| p.label)
}

/// A canonical label as messages show it: `5 (kswapd-stay-awake-when-min)`.
pub(crate) fn shown(label: &str) -> String {
    match PATCHES.iter().find(|p| p.label == label) {
        Some(p) if !p.aliases.is_empty() => format!("{label} ({})", p.aliases[0]),
        _ => label.to_string(),
    }
}

/// Every name `kernel.patches` accepts, for a hint.
fn patch_names() -> Vec<&'static str> {
    PATCHES
        .iter()
        .flat_map(|p| std::iter::once(p.label).chain(p.aliases.iter().copied()))
        .collect()
}

/// [`HZ_VALUES`] for a message: `100, 250, 300 or 1000`.
fn hz_values() -> String {
    let shown: Vec<String> = HZ_VALUES.iter().map(u32::to_string).collect();
    match shown.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => shown.join(""),
    }
}

raw_section! {
    /// `kernel:`.
    pub struct RawKernel {
        /// Timer frequency.
        [value] hz: u32,
        /// Kernel version whose reclaim behaviour is simulated.
        [value] version: VersionName,
        /// 2009 test patches switched on.
        [value] patches: Capped<Spanned<PatchName>, MAX_LISTED_NAMES>,
        /// Explicit switch: congestion-wait queue.
        [value] cwait_class: CwaitClassName,
        /// Explicit switch: kswapd naps before sleeping.
        [value] kswapd_nap: bool,
        /// Explicit switch: kswapd skips its congestion wait below min.
        [value] skip_below_min: bool,
        /// Explicit switch: `wait_iff_congested` in the allocator and direct reclaim.
        [value] wait_iff_congested: bool,
        /// Explicit switch: kswapd keeps the requested order.
        [value] force_highorder: bool,
        /// Explicit switch: a slow-path restart wakes kswapd again.
        [value] restart_wakes_kswapd: bool,
        /// Explicit switch: direct reclaim waits on ASYNC then SYNC (patch 3).
        [value] congestion_both: bool,
    }
}

/// One `kernel.patches` entry as written: Mel's number as a YAML integer or string, or a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchName(pub String);

impl<'de> Deserialize<'de> for PatchName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = PatchName;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a patch number 1 to 6 or a patch name")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<PatchName, E> {
                Ok(PatchName(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<PatchName, E> {
                Ok(PatchName(v.to_string()))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<PatchName, E> {
                Ok(PatchName(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// `kernel.version` as written, read by hand so that `2.6` or `32` (YAML numbers) get a clear
/// message here; validation checks the string against [`KernelVersion::ALL`], at the value's
/// own location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionName(pub String);

/// Every `kernel.version` as written in YAML, oldest first (the names of [`KernelVersion::ALL`]),
/// joined for a hint.
fn version_names() -> String {
    KernelVersion::ALL.map(KernelVersion::name).join(", ")
}

impl VersionName {
    /// The version this names, if qsim models it.
    pub fn version(&self) -> Option<KernelVersion> {
        KernelVersion::ALL
            .iter()
            .copied()
            .find(|k| k.name() == self.0.trim())
    }
}

impl<'de> Deserialize<'de> for VersionName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl V {
            fn number<E: de::Error>(shown: String) -> E {
                UnitError {
                    message: format!("a kernel version is text, got the number {shown}"),
                    hint: format!(
                        "quote it (YAML reads 6.10 as 6.1): one of {} (2.6.32 is the default)",
                        version_names()
                    ),
                }
                .into_serde()
            }
        }
        impl Visitor<'_> for V {
            type Value = VersionName;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a kernel version ({})", version_names())
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<VersionName, E> {
                Err(V::number(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<VersionName, E> {
                Err(V::number(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<VersionName, E> {
                Err(V::number(v.to_string()))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<VersionName, E> {
                Ok(VersionName(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

names! {
    /// `kernel.cwait_class`.
    pub enum CwaitClassName {
        /// The SYNC queue.
        Sync = "sync",
        /// The ASYNC queue.
        Async = "async",
    }
}

/// One on/off switch of `kernel:`: how the file names it, the 2009 patch that turns it on (if
/// any), and where the model reads it.
pub(crate) struct Switch {
    /// The field name under `kernel:`.
    pub name: &'static str,
    /// The patch of [`PATCHES`] that turns the switch on.
    pub patch: Option<&'static str>,
    /// The field as the file gave it.
    raw: fn(&RawKernel) -> &Field<bool>,
    /// The resolved value.
    slot: fn(&mut VmBehaviour) -> &mut bool,
}

impl Switch {
    /// The resolved value in `vm`.
    fn get(&self, vm: &VmBehaviour) -> bool {
        let mut copy = *vm;
        *(self.slot)(&mut copy)
    }
}

/// Every on/off switch of `kernel:`, in the order `qsim check` shows them (after
/// `cwait_class`). A new switch is a field of [`RawKernel`], a row here and its field in
/// [`VmBehaviour`] with each version's default.
pub(crate) const SWITCHES: &[Switch] = &[
    Switch {
        name: "kswapd_nap",
        patch: Some("4"),
        raw: |k| &k.kswapd_nap,
        slot: |vm| &mut vm.kswapd_nap,
    },
    Switch {
        name: "skip_below_min",
        patch: Some("5"),
        raw: |k| &k.skip_below_min,
        slot: |vm| &mut vm.skip_below_min,
    },
    Switch {
        name: "wait_iff_congested",
        patch: None,
        raw: |k| &k.wait_iff_congested,
        slot: |vm| &mut vm.wait_iff_congested,
    },
    Switch {
        name: "force_highorder",
        patch: Some("force-highorder"),
        raw: |k| &k.force_highorder,
        slot: |vm| &mut vm.force_highorder,
    },
    Switch {
        name: "restart_wakes_kswapd",
        patch: Some("1"),
        raw: |k| &k.restart_wakes_kswapd,
        slot: |vm| &mut vm.restart_wakes_kswapd,
    },
    Switch {
        name: "congestion_both",
        patch: Some("3"),
        raw: |k| &k.congestion_both,
        slot: |vm| &mut vm.congestion_both,
    },
];

/// `kernel:`: HZ, then the version's switches, the patches, and the explicit knobs in that
/// order. Also returns each patch with its location, for the crypt section's check.
pub(crate) fn kernel(
    c: &Checker,
    k: Option<&RawKernel>,
) -> Result<(KernelConfig, Vec<(String, Location)>), Error> {
    let hz = match k.and_then(|k| k.hz.as_ref()) {
        None => 250,
        Some(s) if HZ_VALUES.contains(&s.value) => s.value,
        Some(s) => {
            return Err(c.at("kernel.hz", s).bad_value(
                format!("HZ must be {}, got {}", hz_values(), s.value),
                "these are the kernel's CONFIG_HZ choices; 250 is the default",
            ));
        }
    };
    let mut kernel = KernelConfig::new(hz);
    let Some(k) = k else {
        return Ok((kernel, Vec::new()));
    };
    if let Some(v) = &k.version {
        kernel.version = v.value.version().ok_or_else(|| {
            c.at("kernel.version", v).unknown(
                format!("unknown kernel version `{}`", super::shorten(&v.value.0)),
                format!(
                    "qsim models {} (docs/model/kernels.md); 2.6.32 is the default",
                    version_names()
                ),
            )
        })?;
    }
    let patches = patches(c, &k.patches)?;
    if let (true, Some(l)) = (kernel.version.is_modern(), &k.patches)
        && !l.value.is_empty()
    {
        return Err(c.at("kernel.patches", l).conflict(
            format!(
                "the 2009 patches apply to 2.6.3x; kernel {} has them or their successors",
                kernel.version.name()
            ),
            "remove `patches`, or use a 2.6.x kernel",
        ));
    }
    kernel.vm = switches(c, k, kernel.version.defaults(), &patches)?;
    kernel.patches = k
        .patches
        .as_ref()
        .map(|l| {
            l.value
                .iter()
                .map(|p| p.value.0.trim().to_string())
                .collect()
        })
        .unwrap_or_default();
    Ok((kernel, patches))
}

/// The version's switches `vm`, then the patches' (each turns its switch on), `cwait_class`, and
/// the explicit knobs; a knob set to false with the patch that turns it on is a conflict.
fn switches(
    c: &Checker,
    k: &RawKernel,
    mut vm: VmBehaviour,
    patches: &[(String, Location)],
) -> Result<VmBehaviour, Error> {
    let patched = |name: &str| patches.iter().find(|(p, _)| p == name).map(|(_, l)| *l);
    for s in SWITCHES {
        if s.patch.is_some_and(|p| patched(p).is_some()) {
            *(s.slot)(&mut vm) = true;
        }
    }
    if let Some(cw) = val(&k.cwait_class) {
        vm.cwait_class = match cw {
            CwaitClassName::Sync => CwaitClass::Sync,
            CwaitClassName::Async => CwaitClass::Async,
        };
    }
    for s in SWITCHES {
        let Some(f) = (s.raw)(k) else { continue };
        if !f.value
            && let Some(patch) = s.patch
            && let Some(pl) = patched(patch)
        {
            let field = format!("kernel.{}", s.name);
            return Err(patch_conflict(c, patches, patch, pl, &field, f.referenced));
        }
        *(s.slot)(&mut vm) = f.value;
    }
    Ok(vm)
}

/// A patch listed together with `<field>: false`, which undoes it: located at the patch.
pub(crate) fn patch_conflict(
    c: &Checker,
    patches: &[(String, Location)],
    patch: &str,
    patch_loc: Location,
    field: &str,
    field_loc: Location,
) -> Error {
    let index = patches.iter().position(|(p, _)| p == patch).unwrap_or(0);
    let short = field.rsplit('.').next().unwrap_or(field);
    c.at(&format!("kernel.patches[{index}]"), patch_loc)
        .conflict(
            format!(
                "the patch `{}` turns `{field}` on, but line {} sets it to false",
                shown(patch),
                field_loc.line()
            ),
            format!("the patch is that switch turned on: remove the patch or the `{short}: false`"),
        )
}

/// `kernel.patches`: known numbers or names, each patch once, returned by canonical label. An
/// empty list is allowed (a variant may clear the base's patches with `patches: []`).
fn patches(
    c: &Checker,
    f: &Field<Capped<Spanned<PatchName>, MAX_LISTED_NAMES>>,
) -> Result<Vec<(String, Location)>, Error> {
    let Some(list) = f else {
        return Ok(Vec::new());
    };
    c.too_long(
        list,
        "kernel.patches",
        "patches",
        "each patch may be listed once",
    )?;
    let mut out: Vec<(String, Location)> = Vec::new();
    let names = patch_names();
    let shown_all: Vec<String> = PATCHES.iter().map(|p| shown(p.label)).collect();
    let valid = format!(
        "valid patches: {}; numbered as in Mel Gorman's 2009 tables (docs/model/kernels.md §4)",
        shown_all.join(", ")
    );
    for (i, p) in list.value.iter().enumerate() {
        let path = format!("kernel.patches[{i}]");
        let written = &p.value.0;
        let Some(label) = canonical(written) else {
            // The model docs spell them with underscores; suggest the dashed name for those too.
            let normal = written.trim().to_ascii_lowercase().replace('_', "-");
            let hint = match suggestion(&normal, &names) {
                Some(s) => format!("did you mean `{s}`? {valid}"),
                None => valid.clone(),
            };
            return Err(c
                .at(&path, p)
                .unknown(format!("unknown patch `{}`", super::shorten(written)), hint));
        };
        if out.iter().any(|(q, _)| *q == label) {
            return Err(c.at(&path, p).conflict(
                format!("patch `{}` is listed twice", shown(label)),
                "list each patch once (a number and its name are the same patch)",
            ));
        }
        out.push((label.to_string(), p.referenced));
    }
    Ok(out)
}

/// The `kernel` heading of `qsim check`: HZ and what follows from it.
pub(crate) fn describe_hz(o: &mut Rows, k: &KernelConfig) {
    row(
        o,
        0,
        "kernel",
        &format!(
            "HZ={} (jiffy {}, unplug delay {})",
            k.hz,
            k.jiffy(),
            k.unplug_delay()
        ),
    );
}

/// Why patch 6 changes nothing when no policy of the run goes through dm-crypt.
pub(crate) const CRYPT_PATCH_WITHOUT_CRYPT: &str = "no effect in this run: no policy goes through dm-crypt (`none` is the plain disk), so \
     there are no io threads to split";

/// Whether every policy of `policies` is the plain disk (no dm-crypt, so no io threads for
/// patch 6 to split).
fn without_crypt(policies: &[String]) -> bool {
    use crate::model::crypt::policy::{Topology, find};
    !policies.is_empty()
        && policies
            .iter()
            .all(|p| find(p).is_some_and(|i| i.topology == Topology::Plain))
}

/// One row per listed patch: Mel's number, what it was, and what it sets here (hints generated
/// from [`PATCHES`], [`SWITCHES`] and [`NO_EFFECT`]); patch 6 says when the run has no
/// dm-crypt for it to act on.
fn describe_patches(o: &mut Rows, k: &KernelConfig, policies: &[String]) {
    for written in &k.patches {
        let Some(label) = canonical(written) else {
            continue;
        };
        let what = PATCHES
            .iter()
            .find(|p| p.label == label)
            .map_or("", |p| p.what);
        let sets = if let Some(s) = SWITCHES.iter().find(|s| s.patch == Some(label)) {
            format!("sets kernel.{}", s.name)
        } else if label == CRYPT_PATCH && without_crypt(policies) {
            format!("sets crypt.io_queues: mason-v3; {CRYPT_PATCH_WITHOUT_CRYPT}")
        } else if label == CRYPT_PATCH {
            "sets crypt.io_queues: mason-v3".to_string()
        } else if let Some((_, why)) = NO_EFFECT.iter().find(|(l, _)| *l == label) {
            why.to_string()
        } else {
            String::new()
        };
        let name = if label == "force-highorder" {
            label.to_string()
        } else {
            format!("patch {}", shown(label))
        };
        row(o, 4, &name, &format!("{what}: {sets}"));
    }
}

/// The kernel version, patches and each resolved switch with where its value came from; the
/// run's `policies` tell whether patch 6 has dm-crypt to act on.
pub(crate) fn describe_kernel(o: &mut Rows, k: &KernelConfig, policies: &[String]) {
    row(o, 2, "version", k.version.name());
    if let Some(r) = k.version.dmcrypt() {
        super::dmcrypt::describe_dmcrypt(o, &r);
        // No reclaim rules after 2.6.37, and no 2009 patches: their rows would say nothing.
        row(
            o,
            2,
            "reclaim",
            "not modelled after 2.6.37 (no memory: section)",
        );
        return;
    }
    row(
        o,
        2,
        "patches",
        &if k.patches.is_empty() {
            "none".to_string()
        } else {
            k.patches.join(", ")
        },
    );
    describe_patches(o, k, policies);
    let d = k.version.defaults();
    let vm = &k.vm;
    let class = |c: CwaitClass| match c {
        CwaitClass::Sync => "sync",
        CwaitClass::Async => "async",
    };
    let from = if vm.cwait_class == d.cwait_class {
        "default"
    } else {
        "set"
    };
    row(
        o,
        2,
        "cwait_class",
        &format!("{} ({from})", class(vm.cwait_class)),
    );
    for s in SWITCHES {
        let (value, default) = (s.get(vm), s.get(&d));
        let from = if value == default {
            "default".to_string()
        } else if value
            && let Some(p) = s.patch
            && let Some(q) = k.patches.iter().find(|q| canonical(q) == Some(p))
        {
            format!("patch {q}")
        } else {
            "set".to_string()
        };
        row(o, 2, s.name, &format!("{} ({from})", on_off(value)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::testutil::*;

    #[test]
    fn no_memory_section_resolves_as_before() {
        let s = ok(BASE);
        assert_eq!(s.kernel.version, KernelVersion::V2_6_32);
        assert!(s.kernel.patches.is_empty());
        assert_eq!(s.kernel.vm, KernelVersion::V2_6_32.defaults());
        assert!(s.memory.is_none());
        assert!(s.variants.is_empty());
        assert!(!s.crypt.unplug_after_submit);
        let WorkloadKind::Fio(f) = &s.workloads[0].kind else {
            panic!("fio")
        };
        assert!(!f.direct);
        // Shipped scenarios: of these two only two-queue asks for memory pressure, and neither
        // lists variants (gfp-atomic-storm and mel-2009 do).
        for (name, memory) in [("two-queue", true), ("nvme-fio", false)] {
            let s = super::super::resolve(name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(s.kernel.version, KernelVersion::V2_6_32, "{name}");
            assert!(s.kernel.patches.is_empty(), "{name}");
            assert_eq!(s.kernel.vm, KernelVersion::V2_6_32.defaults(), "{name}");
            assert_eq!(s.memory.is_some(), memory, "{name}");
            assert!(s.variants.is_empty(), "{name}");
            for w in &s.workloads {
                if let WorkloadKind::Fio(f) = &w.kind {
                    assert!(!f.direct, "{name}: {}", w.name);
                }
            }
        }
    }

    #[test]
    fn each_version_brings_its_own_switches() {
        for v in KernelVersion::ALL {
            let s = ok(&format!("{BASE}kernel: {{ version: \"{}\" }}\n", v.name()));
            assert_eq!((s.kernel.version, s.kernel.vm), (v, v.defaults()));
        }
        // Unquoted works too: 2.6.30 is not a YAML number.
        let s = ok(&format!("{BASE}kernel: {{ version: 2.6.30 }}\n"));
        assert_eq!(s.kernel.vm.cwait_class, CwaitClass::Sync);
        assert!(!s.kernel.vm.restart_wakes_kswapd);
        let d = |v: KernelVersion| v.defaults();
        assert_eq!(d(KernelVersion::V2_6_31).cwait_class, CwaitClass::Async);
        assert!(d(KernelVersion::V2_6_32).restart_wakes_kswapd);
        assert!(!d(KernelVersion::V2_6_32).kswapd_nap);
        assert!(d(KernelVersion::V2_6_33).kswapd_nap);
        // bb3ab596 (patch 5) is 2.6.33's, as is f50de2d3 (patch 4).
        assert!(d(KernelVersion::V2_6_33).skip_below_min);
        assert!(!d(KernelVersion::V2_6_32).skip_below_min);
        assert!(!d(KernelVersion::V2_6_33).wait_iff_congested);
        let v37 = d(KernelVersion::V2_6_37);
        assert!(v37.skip_below_min && v37.wait_iff_congested && !v37.force_highorder);
        assert_eq!(
            version_names(),
            "2.6.30, 2.6.31, 2.6.32, 2.6.33, 2.6.37, 4.19, 5.4, 5.8, 5.9, 6.6, 6.9, 6.10, 6.11, 6.12"
        );
    }

    #[test]
    fn version_errors_name_the_valid_versions() {
        let e = err(&format!("{BASE}kernel:\n  version: 2.6\n"));
        assert_eq!(e.kind(), ErrorKind::BadValue);
        assert_eq!(place(&e), (Some(5), Some(12), Some("kernel.version")));
        assert!(e.message().contains("is text"), "{e}");
        assert!(
            e.hint()
                .unwrap()
                .contains("2.6.30, 2.6.31, 2.6.32, 2.6.33, 2.6.37, 4.19")
        );
        let e = err(&format!("{BASE}kernel:\n  version: 32\n"));
        assert!(e.message().contains("the number 32"), "{e}");
        let e = err(&format!("{BASE}kernel:\n  version: \"2.6.35\"\n"));
        assert_eq!(e.kind(), ErrorKind::UnknownName);
        assert_eq!(place(&e), (Some(5), Some(12), Some("kernel.version")));
        assert_eq!(e.message(), "unknown kernel version `2.6.35`");
        assert!(e.hint().unwrap().contains("2.6.37"), "{e}");
    }

    #[test]
    fn patches_set_their_switch_and_knobs_override_the_version() {
        let s = ok(&format!(
            "{BASE}kernel: {{ patches: [force-highorder, kswapd-stay-awake-when-min, dm-crypt-unplug] }}\n"
        ));
        assert_eq!(
            s.kernel.patches,
            vec![
                "force-highorder",
                "kswapd-stay-awake-when-min",
                "dm-crypt-unplug"
            ]
        );
        assert!(s.kernel.vm.skip_below_min && s.kernel.vm.force_highorder);
        assert_eq!(s.crypt.io_queues, IoQueues::MasonV3);
        assert!(
            !s.crypt.unplug_after_submit,
            "patch 6 is Mason's io queues, not this"
        );
        // Everything else stays 2.6.32's.
        let d = KernelVersion::V2_6_32.defaults();
        assert_eq!(
            (s.kernel.vm.kswapd_nap, s.kernel.vm.cwait_class),
            (d.kswapd_nap, d.cwait_class)
        );
        // Knobs win over the version.
        let s = ok(&format!(
            "{BASE}kernel:\n  version: 2.6.37\n  skip_below_min: false\n  wait_iff_congested: false\n  cwait_class: sync\n  kswapd_nap: false\n  restart_wakes_kswapd: false\n  force_highorder: true\n"
        ));
        let vm = s.kernel.vm;
        assert!(!vm.skip_below_min && !vm.wait_iff_congested && !vm.kswapd_nap);
        assert!(!vm.restart_wakes_kswapd && vm.force_highorder);
        assert_eq!(vm.cwait_class, CwaitClass::Sync);
        // A knob agreeing with a patch is fine.
        let s = ok(&format!(
            "{BASE}kernel: {{ patches: [force-highorder], force_highorder: true }}\ncrypt: {{ unplug_after_submit: true }}\n"
        ));
        assert!(s.kernel.vm.force_highorder && s.crypt.unplug_after_submit);
        // An empty list is no patches.
        assert!(
            ok(&format!("{BASE}kernel: {{ patches: [] }}\n"))
                .kernel
                .patches
                .is_empty()
        );
    }

    #[test]
    fn a_patch_undone_by_its_own_switch_is_a_conflict() {
        let e = err(&format!(
            "{BASE}kernel:\n  patches: [kswapd-stay-awake-when-min]\n  skip_below_min: false\n"
        ));
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert_eq!(place(&e), (Some(5), Some(13), Some("kernel.patches[0]")));
        assert!(e.message().contains("line 6 sets it to false"), "{e}");
        assert!(e.hint().unwrap().contains("skip_below_min: false"), "{e}");
        let e = err(&format!(
            "{BASE}kernel:\n  patches: [force-highorder, dm-crypt-unplug]\ncrypt:\n  io_queues: one\n"
        ));
        assert_eq!(place(&e), (Some(5), Some(30), Some("kernel.patches[1]")));
        assert!(e.message().contains("crypt.io_queues"), "{e}");
        assert!(e.message().contains("line 7"), "{e}");
    }

    #[test]
    fn patch_errors_suggest_the_name() {
        let e = err(&format!(
            "{BASE}kernel:\n  patches: [kswapd_stay_awake_when_min]\n"
        ));
        assert_eq!(e.kind(), ErrorKind::UnknownName);
        assert_eq!(place(&e), (Some(5), Some(13), Some("kernel.patches[0]")));
        assert!(
            e.hint()
                .unwrap()
                .starts_with("did you mean `kswapd-stay-awake-when-min`?"),
            "{e}"
        );
        let e = err(&format!("{BASE}kernel:\n  patches: [dmcrypt-unplug]\n"));
        assert!(e.hint().unwrap().contains("`dm-crypt-unplug`"), "{e}");
        let e = err(&format!("{BASE}kernel:\n  patches: [swap-token]\n"));
        assert!(e.hint().unwrap().starts_with("valid patches: "), "{e}");
        let e = err(&format!(
            "{BASE}kernel:\n  patches: [force-highorder, force-highorder]\n"
        ));
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert_eq!(place(&e), (Some(5), Some(30), Some("kernel.patches[1]")));
        let e = err(&format!("{BASE}kernel:\n  cwait_class: both\n"));
        assert_eq!(e.path(), Some("kernel.cwait_class"));
        assert!(e.hint().unwrap().contains("sync, async"), "{e}");
    }

    #[test]
    fn the_section_alone_resolves_the_switch_table_in_order() {
        let k = |yaml: &str| section::<RawKernel, _>(yaml, |c, r, _| kernel(c, Some(r)));
        let (cfg, patches) = k("version: \"2.6.30\"\npatches: [force-highorder]\n").unwrap();
        assert_eq!(cfg.version, KernelVersion::V2_6_30);
        assert!(cfg.vm.force_highorder);
        assert_eq!(patches.len(), 1);
        let (cfg, _) = k("version: \"2.6.37\"\nwait_iff_congested: false\n").unwrap();
        assert!(!cfg.vm.wait_iff_congested && cfg.vm.skip_below_min);
        let e = k("hz: 200\n").unwrap_err();
        assert_eq!(
            e.to_string().lines().next(),
            Some("section.yaml:1:5: kernel.hz: HZ must be 100, 250, 300 or 1000, got 200")
        );
        let e = k("version: \"2.6.99\"\n").unwrap_err();
        assert!(e.hint().unwrap().contains("docs/model/kernels.md"), "{e}");
        // Every switch of the table is a field of the raw form, in the table's order.
        let names: Vec<&str> = SWITCHES.iter().map(|s| s.name).collect();
        let all = "kswapd_nap: true\nskip_below_min: true\nwait_iff_congested: true\n\
                   force_highorder: true\nrestart_wakes_kswapd: true\ncongestion_both: true\n";
        let raw: RawKernel = serde_saphyr::from_str(all).unwrap();
        let present: Vec<&str> = raw.present().iter().map(|(n, _)| *n).collect();
        assert_eq!(present, names);
    }

    #[test]
    fn patches_are_numbered_as_in_mel_gormans_tables() {
        let s = ok(&format!(
            "{BASE}kernel:\n  version: \"2.6.31\"\n  patches: [1, \"2\", 3, 4, 5, dm-crypt-unplug]\n"
        ));
        let vm = s.kernel.vm;
        assert!(vm.restart_wakes_kswapd && vm.congestion_both && vm.kswapd_nap);
        assert!(vm.skip_below_min && s.crypt.io_queues == IoQueues::MasonV3);
        assert!(!vm.force_highorder && vm.cwait_class == CwaitClass::Async);
        assert_eq!(
            s.kernel.patches,
            ["1", "2", "3", "4", "5", "dm-crypt-unplug"]
        );
        // A number and its old name are one patch.
        let e = err(&format!(
            "{BASE}kernel:\n  patches: [kswapd-stay-awake-when-min, 5]\n"
        ));
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert_eq!(e.path(), Some("kernel.patches[1]"));
        assert!(
            e.message().contains("5 (kswapd-stay-awake-when-min)"),
            "{e}"
        );
        let e = err(&format!("{BASE}kernel:\n  patches: [7]\n"));
        assert_eq!(e.kind(), ErrorKind::UnknownName);
        assert!(
            e.hint().unwrap().contains(
                "1, 2, 3, 4, 5 (kswapd-stay-awake-when-min), 6 (dm-crypt-unplug), force-highorder"
            ),
            "{e}"
        );
        // Patch 3 undone by its switch.
        let e = err(&format!(
            "{BASE}kernel:\n  patches: [3]\n  congestion_both: false\n"
        ));
        assert!(
            e.message()
                .contains("`3` turns `kernel.congestion_both` on"),
            "{e}"
        );
        // Patch 2 is accepted and sets nothing; `qsim check` says why.
        let s = ok(&format!("{BASE}kernel: {{ patches: [2] }}\n"));
        assert_eq!(s.kernel.vm, KernelVersion::V2_6_32.defaults());
        let text = super::super::describe(&s);
        assert!(
            crate::scenario::describe::has(&text, "no effect in this model"),
            "{text}"
        );
    }

    /// Patch 6 splits dm-crypt's io threads: a run whose every policy is the plain disk has
    /// none, and `qsim check` says so at the patch; with a crypt policy beside it, it does not.
    #[test]
    fn patch_6_without_dm_crypt_says_it_has_no_effect() {
        let s = ok(&format!(
            "{BASE}policies: [none]\nkernel: {{ patches: [6] }}\n"
        ));
        let text = super::super::describe(&s);
        assert!(
            crate::scenario::describe::has(&text, CRYPT_PATCH_WITHOUT_CRYPT),
            "{text}"
        );
        let s = ok(&format!(
            "{BASE}policies: [none, fifo]\nkernel: {{ patches: [6] }}\n"
        ));
        let text = super::super::describe(&s);
        assert!(
            !crate::scenario::describe::has(&text, CRYPT_PATCH_WITHOUT_CRYPT),
            "{text}"
        );
        assert!(
            crate::scenario::describe::has(&text, "sets crypt.io_queues: mason-v3"),
            "{text}"
        );
    }

    #[test]
    fn low_latency_exists_from_2_6_32() {
        for (v, on) in [
            ("2.6.30", false),
            ("2.6.31", false),
            ("2.6.32", true),
            ("2.6.33", true),
        ] {
            let s = ok(&format!("{BASE}kernel: {{ version: \"{v}\" }}\n"));
            assert_eq!(s.block.low_latency, on, "{v}");
        }
        let s = ok(&format!(
            "{BASE}kernel: {{ version: \"2.6.31\" }}\nblock: {{ low_latency: false }}\n"
        ));
        assert!(!s.block.low_latency);
        let s = ok(&format!("{BASE}block: {{ low_latency: false }}\n"));
        assert!(!s.block.low_latency);
        let e = err(&format!(
            "{BASE}kernel: {{ version: \"2.6.31\" }}\nblock:\n  low_latency: true\n"
        ));
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert_eq!((e.line(), e.path()), (Some(6), Some("block.low_latency")));
        assert!(e.message().contains("does not exist in 2.6.31"), "{e}");
        assert!(e.hint().unwrap().contains("2.6.32 or later"), "{e}");
    }
}
