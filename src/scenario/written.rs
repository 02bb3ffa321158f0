//! A scenario file with its `--set` overrides written into it ([`written_yaml`]): one YAML
//! file that `qsim run FILE` resolves to the same scenario as the original file with the
//! overrides, so a what-if found with `--set` (or on `qsim serve`'s page) can be kept and
//! shared as a file.
//!
//! The file's YAML is read as a plain tree, each override edits the tree as the loader edits
//! its raw scenario (a deep merge where mappings merge key by key, scalars and lists replace,
//! and a mapping whose `kind:` changes is replaced whole; an indexed item; a removed section),
//! and the tree is written back. The result is then loaded and compared with the scenario the
//! overrides resolve to: only an exact match is returned, so the file can never claim to be a
//! run it is not. Comments and key order are not kept (keys come out sorted).

use super::setarg::{self, Edit, List};
use super::{Error, Scenario, load_str, load_str_with_overrides, yaml_options};
use serde_json::{Map, Value};

/// The text of `source_name` (`text`) with `sets` applied, as one YAML document that loads
/// to the same resolved scenario; `Ok(None)` when the tree edit cannot reproduce it exactly
/// (a tag or anchor the plain tree loses). Errors are the loader's for a bad override.
pub fn written_yaml(
    source_name: &str,
    text: &str,
    sets: &[String],
) -> Result<Option<String>, Error> {
    let want = load_str_with_overrides(source_name, text, sets)?;
    let Some(tree) = edited_tree(text, sets, &want)? else {
        return Ok(None);
    };
    let Ok(yaml) = serde_saphyr::to_string(&tree) else {
        return Ok(None);
    };
    let same = load_str(source_name, &yaml)
        .ok()
        .is_some_and(|got| canonical(&got) == canonical(&want));
    Ok(same.then_some(yaml))
}

/// A resolved scenario as canonical JSON (what two equal scenarios share).
fn canonical(sc: &Scenario) -> Option<String> {
    serde_json::to_string(sc).ok()
}

/// The file's tree with every override applied, and `name:` written out (the file stem named
/// it before).
fn edited_tree(text: &str, sets: &[String], want: &Scenario) -> Result<Option<Value>, Error> {
    let Ok(Value::Object(mut tree)) = serde_saphyr::from_str_with_options(text, yaml_options())
    else {
        return Ok(None);
    };
    for arg in sets {
        let set = setarg::parse(arg)?;
        let doc = if set.doc.is_empty() {
            Value::Null
        } else {
            match serde_saphyr::from_str_with_options::<Value>(&set.doc, yaml_options()) {
                Ok(v) => v,
                Err(_) => return Ok(None),
            }
        };
        if !apply(&mut tree, &set.edit, doc) {
            return Ok(None);
        }
    }
    tree.insert("name".into(), Value::String(want.name.clone()));
    Ok(Some(Value::Object(tree)))
}

/// Applies one override's document to the tree; `false` if the tree has no such item.
fn apply(tree: &mut Map<String, Value>, edit: &Edit, doc: Value) -> bool {
    match edit {
        Edit::Remove(section) => {
            tree.remove(section);
            true
        }
        Edit::Merge => match doc {
            Value::Object(over) => {
                merge_map(tree, over);
                true
            }
            _ => false,
        },
        &Edit::Index { list, index, whole } => {
            let path: &[&str] = match list {
                List::Workloads => &["workloads"],
                List::Atomic => &["memory", "atomic"],
                List::Variants => &["variants"],
            };
            let item = path
                .iter()
                .try_fold(&doc, |v, k| v.get(k))
                .and_then(|l| l.get(0))
                .cloned();
            let mut target = Some(&mut *tree);
            for k in &path[..path.len() - 1] {
                target = target
                    .and_then(|t| t.get_mut(*k))
                    .and_then(Value::as_object_mut);
            }
            let slot = target
                .and_then(|t| t.get_mut(path[path.len() - 1]))
                .and_then(Value::as_array_mut)
                .and_then(|a| a.get_mut(index));
            match (slot, item) {
                (Some(slot), Some(item)) if whole => *slot = item,
                (Some(slot), Some(item)) => merge(slot, item),
                _ => return false,
            }
            true
        }
    }
}

/// The loader's deep merge on plain trees: mappings merge key by key (unless their `kind:`
/// differs, then the new one replaces the old), anything else replaces.
fn merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o))
            if o.get("kind").is_none_or(|k| b.get("kind") == Some(k)) =>
        {
            merge_map(b, o);
        }
        (b, o) => *b = o,
    }
}

fn merge_map(base: &mut Map<String, Value>, over: Map<String, Value>) {
    for (k, v) in over {
        match base.get_mut(&k) {
            Some(b) => merge(b, v),
            None => {
                base.insert(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped(name: &str) -> (String, &'static str) {
        let s = crate::scenario::shipped()
            .into_iter()
            .find(|s| s.name == name)
            .unwrap();
        (s.source_name(), s.yaml)
    }

    fn check(name: &str, sets: &[&str]) -> String {
        let (source, text) = shipped(name);
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let yaml = written_yaml(&source, text, &sets)
            .unwrap()
            .unwrap_or_else(|| panic!("{name} {sets:?}: not reproduced"));
        let got = load_str("elsewhere.yaml", &yaml).unwrap();
        let want = load_str_with_overrides(&source, text, &sets).unwrap();
        assert_eq!(canonical(&got), canonical(&want), "{yaml}");
        yaml
    }

    #[test]
    fn every_shipped_scenario_is_written_back_as_itself() {
        for s in crate::scenario::shipped() {
            check(s.name, &[]);
        }
    }

    #[test]
    fn merges_indexes_and_removals_are_written_into_the_file() {
        let yaml = check(
            "two-queue",
            &[
                "crypt.cipher=aes-ni",
                "crypt.encrypt_rate=100MB/s",
                "workloads[1].rate=5MB/s",
                "memory.ram=4GiB",
                "kernel.patches=[5, dm-crypt-unplug]",
                "memory.atomic[0].burst=8",
                "replications=3",
            ],
        );
        assert!(yaml.contains("100MB/s") && yaml.contains("5MB/s"), "{yaml}");
        check("two-queue", &["!memory", "device={kind: nvme}"]);
        check("gfp-atomic-storm", &["!variants", "kernel.version=2.6.30"]);
    }

    #[test]
    fn a_bad_override_is_the_loaders_error() {
        let (source, text) = shipped("two-queue");
        let e = written_yaml(&source, text, &["crypt.encrypt_rate=-5MB/s".into()]).unwrap_err();
        assert!(
            e.to_string().contains("--set crypt.encrypt_rate=-5MB/s"),
            "{e}"
        );
    }
}
