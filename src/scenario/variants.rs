//! `variants:`: named partial scenarios merged over the base file and resolved in full; and
//! how `qsim check` shows each one (the rows where it differs from the base).

use super::Error;
use super::check::{Checker, at, loc};
use super::schema::{Merge, raw_section};
use super::top::{RawScenario, scenario};
use super::types::*;
use serde_saphyr::Spanned;

/// Most variants a scenario may list. A comparison of kernels and patches needs a handful (the
/// shipped scenarios list five); past 100 the report, one block per variant and policy, is no
/// longer read, and every variant is a whole scenario to resolve and hold. A larger sweep is a
/// script writing one scenario per point.
pub const MAX_VARIANTS: usize = 100;

raw_section! {
    /// One entry of `variants:`.
    pub struct RawVariant {
        /// The variant's name (required, unique).
        [name] name: String,
        /// The fields it changes: a partial scenario, deep-merged over the base file.
        [map] set: RawScenario,
    }
}

/// How a variant is named, for the hints.
const NAME_HINT: &str = "name it as the report should label it, e.g. `name: \"2.6.30\"`";

/// The `variants:` list (of `raw`, the file with the overrides): each variant's `set:` merged
/// over the `file`, then the command line's `overrides` over that, and resolved in full.
pub(crate) fn variants(
    c: &Checker,
    file: &RawScenario,
    raw: &RawScenario,
    stem: &str,
    overrides: &[super::setarg::Override],
) -> Result<Vec<Variant>, Error> {
    let Some(list) = &raw.variants else {
        return Ok(Vec::new());
    };
    if list.value.is_empty() {
        return Err(c.at("variants", list).missing(
            "the variant list is empty",
            "list at least one, e.g. `- { name: \"2.6.30\", set: { kernel: { version: \"2.6.30\" } } }`, \
             or remove `variants:`",
        ));
    }
    let mut base = file.clone();
    base.variants = None;
    let mut out: Vec<Variant> = Vec::new();
    for (i, v) in list.value.iter().enumerate() {
        let path = format!("variants[{i}]");
        let name = match &v.value.name {
            None => {
                return Err(c
                    .at(&at(&path, "name"), v)
                    .missing("the variant has no `name`", NAME_HINT));
            }
            Some(s) => c.name(
                s,
                &at(&path, "name"),
                "the variant name is empty",
                NAME_HINT,
            )?,
        };
        if out.iter().any(|o| o.name == name) {
            return Err(c.at(&at(&path, "name"), &v.value.name).conflict(
                format!("variant name `{name}` is used twice"),
                "give each variant its own name: the report labels its results with it",
            ));
        }
        let Some(set) = &v.value.set else {
            return Err(c.at(&at(&path, "set"), v).missing(
                format!("variant `{name}` has no `set`"),
                "add the fields it changes, e.g. `set: { kernel: { version: \"2.6.30\" } }`",
            ));
        };
        let set_path = at(&path, "set");
        fixed_fields(c, set, &set_path)?;
        let mut merged = base.clone();
        merged.merge(set.value.clone());
        for o in overrides.iter().filter(|o| !o.edits_variants()) {
            o.apply(&mut merged)?;
        }
        let resolved =
            scenario(c, &merged, stem).map_err(|e| in_variant(c, e, &set_path, &name))?;
        out.push(Variant {
            name,
            scenario: Box::new(resolved),
        });
    }
    Ok(out)
}

/// Refuses the fields a variant shares with the base: `name`, `description`, `seed`,
/// `variants`, `published`.
fn fixed_fields(c: &Checker, set: &Spanned<RawScenario>, set_path: &str) -> Result<(), Error> {
    let fixed = [
        ("name", loc(&set.value.name)),
        ("description", loc(&set.value.description)),
        ("seed", loc(&set.value.seed)),
        ("variants", loc(&set.value.variants)),
        ("published", loc(&set.value.published)),
        ("sweep", loc(&set.value.sweep)),
        ("sensitivity", loc(&set.value.sensitivity)),
    ];
    let Some(&(field, l)) = fixed.iter().find(|(_, l)| l.is_some()) else {
        return Ok(());
    };
    let hint = match field {
        "seed" => {
            "variants share the base's seed so that they compare on the same random \
             numbers; change `seed` at the top level"
        }
        "variants" => "variants do not nest: list every variant at the top level",
        "sweep" | "sensitivity" => {
            "a sweep or sensitivity study makes its own variants and cannot be combined with \
             `variants:`"
        }
        "published" => {
            "the published figures belong to the whole scenario: name the variant in each \
             row (`variant:`) at the top level"
        }
        _ => {
            "a variant is labelled by the `name:` beside its `set:`; the scenario's name \
             and description are shared"
        }
    };
    Err(c
        .at(&at(set_path, field), l)
        .conflict(format!("a variant cannot set `{field}`"), hint))
}

/// Marks an error raised while resolving a variant: the message names the variant, and when
/// the value at fault was written inside its `set:` the path says so (`variants[0].set.kernel.
/// version`); a value of the base file keeps its own path.
fn in_variant(c: &Checker, mut e: Error, set_path: &str, name: &str) -> Error {
    let inside = match (e.line(), e.column()) {
        (Some(l), Some(col)) => c
            .src
            .outline
            .path_at(l, col, false)
            .is_some_and(|p| p == set_path || p.starts_with(&format!("{set_path}."))),
        _ => false,
    };
    if inside {
        e.0.path = Some(match e.0.path.take() {
            Some(p) if !p.is_empty() => format!("{set_path}.{p}"),
            _ => set_path.to_string(),
        });
    }
    e.0.message = format!("in variant `{name}`: {}", e.0.message);
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::testutil::*;

    #[test]
    fn variants_merge_over_the_base() {
        let s = ok(&format!(
            "{VBASE}  - name: \"2.6.30\"\n    set: {{ kernel: {{ version: \"2.6.30\" }} }}\n  - name: small\n    set:\n      memory: {{ ram: 1GiB }}\n      kernel: {{ patches: [] }}\n      workloads:\n        - kind: fio\n  - name: nvme\n    set: {{ device: {{ kind: nvme }}, duration: 10s }}\n  - name: same\n    set: {{}}\n"
        ));
        assert_eq!(s.kernel.version, KernelVersion::V2_6_32);
        assert_eq!(s.variants.len(), 4);
        let old = variant(&s, "2.6.30");
        assert_eq!(old.name, "base");
        assert_eq!(old.seed, 7);
        assert!(old.variants.is_empty());
        assert_eq!(old.kernel.hz, 1000, "hz kept");
        assert_eq!(old.kernel.version, KernelVersion::V2_6_30);
        assert_eq!(old.kernel.patches, vec!["force-highorder"], "patches kept");
        assert_eq!(old.kernel.vm.cwait_class, CwaitClass::Sync);
        assert!(old.kernel.vm.force_highorder);
        assert_eq!(old.workloads.len(), 2);
        let small = variant(&s, "small");
        let m = small.memory.as_ref().unwrap();
        assert_eq!(
            (m.ram, m.coalesce),
            (1 << 30, 0.25),
            "memory merged field by field"
        );
        assert_eq!(m.min_free_kbytes, 4096, "defaults follow the merged ram");
        assert!(small.kernel.patches.is_empty() && !small.kernel.vm.force_highorder);
        assert_eq!(small.workloads.len(), 1, "lists replace");
        assert_eq!(small.workloads[0].name, "fio0");
        let nvme = variant(&s, "nvme");
        assert!(
            matches!(nvme.device, DeviceConfig::Nvme(_)),
            "a new kind replaces the device whole (seek_min does not follow)"
        );
        assert_eq!(nvme.duration, SimDuration::from_secs(10));
        let same = variant(&s, "same");
        assert_eq!(
            serde_json::to_string(&same).unwrap(),
            serde_json::to_string(&Scenario {
                variants: Vec::new(),
                ..s.clone()
            })
            .unwrap()
        );
    }

    #[test]
    fn errors_inside_set_point_at_the_set() {
        let e = err(&format!(
            "{VBASE}  - name: a\n    set:\n      kernel:\n        version: \"2.6.35\"\n"
        ));
        assert_eq!(
            place(&e),
            (Some(18), Some(18), Some("variants[0].set.kernel.version"))
        );
        assert!(
            e.message()
                .starts_with("in variant `a`: unknown kernel version"),
            "{e}"
        );
        let e = err(&format!(
            "{VBASE}  - name: a\n    set: {{}}\n  - name: b\n    set:\n      memory:\n        atomic:\n          - {{ rate: 5, orders: {{12: 1}} }}\n"
        ));
        assert_eq!(
            place(&e),
            (
                Some(21),
                Some(33),
                Some("variants[1].set.memory.atomic[0].orders")
            )
        );
        assert!(e.message().contains("variant `b`"), "{e}");
        // A typo inside set is a parse error, located by the outline.
        let e = err(&format!(
            "{VBASE}  - name: a\n    set:\n      kernle: {{}}\n"
        ));
        assert_eq!(e.kind(), ErrorKind::UnknownField);
        assert_eq!(
            place(&e),
            (Some(17), Some(7), Some("variants[0].set.kernle"))
        );
        assert!(e.hint().unwrap().contains("did you mean `kernel`?"), "{e}");
        // A base value that the variant makes wrong keeps its own path, and names the variant.
        let e = err(&format!(
            "warmup: 5s\n{VBASE}  - name: long\n    set: {{ duration: 10s }}\n  - name: b\n    set: {{ duration: 1s }}\n"
        ));
        assert!(e.message().starts_with("in variant `b`:"), "{e}");
        assert_eq!(place(&e), (Some(1), Some(9), Some("warmup")));
        // A patch in the set against a knob of the base: located at the patch in the set.
        let e = err(&format!(
            "{VBASE}  - name: p\n    set: {{ kernel: {{ patches: [dm-crypt-unplug] }} }}\n"
        )
        .replace("memory:", "crypt: { io_queues: one }\nmemory:"));
        assert_eq!(
            place(&e),
            (
                Some(17),
                Some(32),
                Some("variants[0].set.kernel.patches[0]")
            )
        );
    }

    #[test]
    fn variant_names_and_fixed_fields_are_checked() {
        let e = err(&format!("{VBASE}  - name: a\n    set: {{ seed: 3 }}\n"));
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert_eq!(
            place(&e),
            (Some(16), Some(18), Some("variants[0].set.seed"))
        );
        assert!(e.hint().unwrap().contains("same random numbers"), "{e}");
        for field in ["name: x", "description: x", "variants: []"] {
            let e = err(&format!("{VBASE}  - name: a\n    set: {{ {field} }}\n"));
            let key = field.split(':').next().unwrap();
            assert_eq!(e.path(), Some(format!("variants[0].set.{key}").as_str()));
        }
        let e = err(&format!(
            "{VBASE}  - name: a\n    set: {{}}\n  - name: a\n    set: {{}}\n"
        ));
        assert_eq!(place(&e), (Some(17), Some(11), Some("variants[1].name")));
        assert!(e.message().contains("used twice"), "{e}");
        let e = err(&format!("{VBASE}  - name: \"\"\n    set: {{}}\n"));
        assert_eq!(e.path(), Some("variants[0].name"));
        let e = err(&format!("{VBASE}  - set: {{}}\n"));
        assert_eq!(e.kind(), ErrorKind::Missing);
        assert_eq!(e.path(), Some("variants[0].name"));
        let e = err(&format!("{VBASE}  - name: a\n"));
        assert_eq!(e.path(), Some("variants[0].set"));
        let e = err(&VBASE.replace("variants:\n", "variants: []\n"));
        assert_eq!(e.path(), Some("variants"));
    }

    #[test]
    fn variants_are_capped_before_any_is_resolved() {
        // Issue 11 case 5: 20k variants passed 8 GiB; the cap stops them at the list.
        let base = "device: { kind: nvme }\nworkloads: [{ kind: fio }]\n";
        let s = ok(&with_variants(base, MAX_VARIANTS));
        assert_eq!(s.variants.len(), MAX_VARIANTS);
        let e = err(&with_variants(base, 20_000));
        assert_eq!(place(&e), (Some(3), Some(1), Some("variants")));
        assert_eq!(
            e.message(),
            "20000 variants; a scenario may list at most 100"
        );
        assert!(e.hint().unwrap().contains("several scenario files"), "{e}");
        let e = err(&with_variants(base, MAX_VARIANTS + 1));
        assert_eq!(e.path(), Some("variants"));
    }
}
