//! One command-line `--set` argument: its parse ([`parse`]: the partial-scenario document it
//! writes and the kind of edit it makes) and its application to the file's raw tree
//! ([`apply`]). Three edits:
//!
//! - `path.to.field=value` merges a partial scenario over the file, like a variant's `set:`;
//! - `workloads[i].field=value`, `memory.atomic[i].field=value` and `variants[i].field=value`
//!   merge into item `i` of that list only (`workloads[i]=value` replaces the item); an index
//!   past the end is refused with the list's length, so a list item cannot be added this way.
//!   A `variants[i]` edit applies to the file's list; the others also reach every variant;
//! - `!section` removes a top-level section (`!memory`: no memory pressure). Removal is
//!   written as a `--set` rather than a flag of its own so that it keeps its place among the
//!   other overrides, which apply in command-line order. Removing a required section leaves
//!   the scenario without it, and validation refuses it as it would refuse the file.

use super::top::RawScenario;
use super::{Error, ErrorKind, SET_HINT, set_label};

/// A list `--set` can index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum List {
    /// `workloads[i]`.
    Workloads,
    /// `memory.atomic[i]`.
    Atomic,
    /// `variants[i]` (`variants[0].set.memory.ram=1GiB`).
    Variants,
}

impl List {
    /// The list's path in the scenario.
    pub(crate) fn path(self) -> &'static str {
        match self {
            List::Workloads => "workloads",
            List::Atomic => "memory.atomic",
            List::Variants => "variants",
        }
    }
}

/// What one `--set` does to the file's raw tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Edit {
    /// Deep-merge the document over the scenario.
    Merge,
    /// Merge the document's single item of `list` into item `index` (replace it if `whole`).
    Index {
        /// The list.
        list: List,
        /// The item.
        index: usize,
        /// The value is the whole item (`workloads[0]={kind: fio}`).
        whole: bool,
    },
    /// Remove this top-level section.
    Remove(String),
}

/// A parsed `--set` argument.
#[derive(Debug, Clone)]
pub(crate) struct SetArg {
    /// The YAML document it writes (empty for a removal).
    pub doc: String,
    /// What it does with it.
    pub edit: Edit,
}

/// The top-level sections `!section` may name.
const REMOVABLE: &[&str] = &[
    "description",
    "seed",
    "duration",
    "warmup",
    "max_events",
    "replications",
    "cpus",
    "kernel",
    "device",
    "block",
    "crypt",
    "policies",
    "workloads",
    "memory",
    "variants",
    "published",
    "machine",
    "sweep",
    "sensitivity",
];

/// Parses one `--set` argument.
pub(crate) fn parse(arg: &str) -> Result<SetArg, Error> {
    let label = set_label(arg);
    let bad = |message: String, hint: &str| {
        Error::whole_file(ErrorKind::Syntax, &label, message, Some(hint.to_string()))
    };
    if let Some(section) = arg.trim().strip_prefix('!') {
        let section = section.trim();
        if !REMOVABLE.contains(&section) {
            return Err(bad(
                format!("`!{section}` names no top-level section"),
                &format!(
                    "`!` removes a whole top-level section: one of {}",
                    REMOVABLE.join(", ")
                ),
            ));
        }
        let edit = Edit::Remove(section.to_string());
        return Ok(SetArg {
            doc: String::new(),
            edit,
        });
    }
    let Some((path, value)) = arg.split_once('=') else {
        return Err(bad(
            "expected path.to.field=value, found no `=`".to_string(),
            SET_HINT,
        ));
    };
    let (path, value) = (path.trim(), value.trim());
    if path.is_empty() {
        return Err(bad("no field path before `=`".to_string(), SET_HINT));
    }
    let mut keys = Vec::new();
    for key in path.split('.') {
        keys.push(key_index(key, path).map_err(|(m, h)| bad(m, h))?);
    }
    let edit = index_edit(&keys, path).map_err(|(m, h)| bad(m, &h))?;
    if value.contains(['\n', '\r']) {
        return Err(bad(
            "the value spans several lines".to_string(),
            "give a one-line value; lists and mappings can be written inline: [a, b], \
             {kind: nvme}",
        ));
    }
    let cipher = keys.last().map(|k| k.0) == Some("cipher");
    let null = matches!(value, "~" | "null" | "Null" | "NULL") && !cipher;
    if value.is_empty() || value.starts_with('#') || null {
        return Err(bad(
            format!("no value after `{path}=`"),
            "give the new value, e.g. --set memory.ram=1GiB; to remove a whole section write \
             --set '!memory'",
        ));
    }
    Ok(SetArg {
        doc: document(&keys, value),
        edit,
    })
}

/// One key of a path: its name and its `[index]`, if any.
type Key<'a> = (&'a str, Option<usize>);

/// Splits `name[index]`; refuses an empty name, a bad index or a name with other characters.
fn key_index<'a>(key: &'a str, path: &str) -> Result<Key<'a>, (String, &'static str)> {
    if key.is_empty() {
        return Err((
            format!("empty field name in `{path}`"),
            "separate field names with single dots: --set kernel.version=2.6.30",
        ));
    }
    let (name, index) = match key.split_once('[') {
        Some((name, rest)) => {
            let digits = rest.strip_suffix(']').filter(|d| !d.is_empty());
            let Some(index) = digits.and_then(|d| d.parse::<usize>().ok()) else {
                return Err((
                    format!("`{key}` is not a list index"),
                    "an index is a whole number in brackets, counted from 0: workloads[0]",
                ));
            };
            (name, Some(index))
        }
        None => (key, None),
    };
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if name.is_empty() || !name.chars().all(plain) {
        return Err((
            format!("`{key}` is not a field name"),
            "field names are letters, digits, `_` and `-`, joined by dots: memory.ram",
        ));
    }
    Ok((name, index))
}

/// The edit a path's indexes make: only `workloads[i]` and `memory.atomic[i]`, once.
fn index_edit(keys: &[Key<'_>], path: &str) -> Result<Edit, (String, String)> {
    let indexed: Vec<usize> = (0..keys.len()).filter(|&i| keys[i].1.is_some()).collect();
    let Some(&at) = indexed.first() else {
        return Ok(Edit::Merge);
    };
    let names: Vec<&str> = keys[..=at].iter().map(|k| k.0).collect();
    let list = match names.as_slice() {
        ["workloads"] => List::Workloads,
        ["memory", "atomic"] => List::Atomic,
        ["variants"] => List::Variants,
        _ => {
            return Err((
                format!(
                    "`{path}` indexes `{}`, which is not a list --set can index",
                    { names.join(".") }
                ),
                "only workloads[i], memory.atomic[i] and variants[i] take an index; other lists (policies, \
                 kernel.patches, variants) are replaced whole: --set 'policies=[fifo, split]'"
                    .to_string(),
            ));
        }
    };
    if indexed.len() > 1 {
        return Err((
            format!("`{path}` has more than one index"),
            "index one list item per --set: workloads[0].io_size=16MiB".to_string(),
        ));
    }
    Ok(Edit::Index {
        list,
        index: keys[at].1.unwrap_or(0),
        whole: at + 1 == keys.len(),
    })
}

/// The block-style YAML document `keys = value` stands for; an indexed key's children are its
/// one list item.
fn document(keys: &[Key<'_>], value: &str) -> String {
    let mut doc = String::new();
    let mut col = 0;
    let mut item = false;
    for (depth, (name, index)) in keys.iter().enumerate() {
        doc.push_str(&" ".repeat(col));
        if item {
            doc.push_str("- ");
            col += 2;
        }
        doc.push_str(name);
        doc.push(':');
        let last = depth + 1 == keys.len();
        col += 2;
        if last && index.is_some() {
            doc.push('\n');
            doc.push_str(&" ".repeat(col));
            doc.push_str("- ");
            doc.push_str(value);
        } else if last {
            doc.push(' ');
            doc.push_str(value);
        }
        doc.push('\n');
        item = index.is_some();
    }
    doc
}

/// One `--set` ready to apply: its label, edit and the scenario its document holds.
#[derive(Debug, Clone)]
pub(crate) struct Override {
    /// `--set ARG`.
    pub label: String,
    /// What it does.
    pub edit: Edit,
    /// Its document, parsed.
    pub raw: RawScenario,
}

impl Override {
    /// Whether it edits the `variants:` list itself (applied to the file, not to each variant).
    pub(crate) fn edits_variants(&self) -> bool {
        matches!(
            self.edit,
            Edit::Index {
                list: List::Variants,
                ..
            }
        )
    }

    /// Applies it to `raw` ([`apply`]).
    pub(crate) fn apply(&self, raw: &mut RawScenario) -> Result<(), Error> {
        apply(raw, &self.edit, &self.raw, &self.label)
    }
}

/// Applies one parsed override (`over`, the document's scenario) to `raw`; `label` names the
/// argument in an index-out-of-range error.
pub(crate) fn apply(
    raw: &mut RawScenario,
    edit: &Edit,
    over: &RawScenario,
    label: &str,
) -> Result<(), Error> {
    use super::schema::Merge;
    match edit {
        Edit::Merge => raw.merge(over.clone()),
        Edit::Remove(section) => remove(raw, section),
        &Edit::Index { list, index, whole } => {
            let (len, fits) = match list {
                List::Workloads => {
                    let item = over.workloads.as_ref().and_then(|l| l.value.items.first());
                    let items = raw.workloads.as_mut().map(|l| &mut l.value.items);
                    put(items, item, index, whole)
                }
                List::Atomic => {
                    let over = over.memory.as_ref().and_then(|m| m.value.atomic.as_ref());
                    let item = over.and_then(|l| l.value.items.first());
                    let items = raw.memory.as_mut().and_then(|m| m.value.atomic.as_mut());
                    put(items.map(|l| &mut l.value.items), item, index, whole)
                }
                List::Variants => {
                    let item = over.variants.as_ref().and_then(|l| l.value.items.first());
                    let items = raw.variants.as_mut().map(|l| &mut l.value.items);
                    put(items, item, index, whole)
                }
            };
            if !fits {
                let path = list.path();
                let hint = match len {
                    0 => format!(
                        "the scenario has no {path}; give the whole list: --set '{path}=[…]'"
                    ),
                    n => format!(
                        "indexes count from 0: {path}[0] … {path}[{}]; to add an item, give the \
                         whole list: --set '{path}=[…]'",
                        n - 1
                    ),
                };
                return Err(Error::whole_file(
                    ErrorKind::BadValue,
                    label,
                    format!(
                        "`{path}[{index}]` is past the end: the list has {len} item{}",
                        if len == 1 { "" } else { "s" }
                    ),
                    Some(hint),
                ));
            }
        }
    }
    Ok(())
}

/// Merges (or, if `whole`, replaces) item `index` of `items` with `item`; returns the list's
/// length and whether the index was in it.
fn put<T: super::schema::Merge + Clone>(
    items: Option<&mut Vec<serde_saphyr::Spanned<T>>>,
    item: Option<&serde_saphyr::Spanned<T>>,
    index: usize,
    whole: bool,
) -> (usize, bool) {
    let Some(items) = items else {
        return (0, false);
    };
    let len = items.len();
    let (Some(base), Some(item)) = (items.get_mut(index), item) else {
        return (len, index < len);
    };
    if whole {
        *base = item.clone();
    } else {
        base.value.merge(item.value.clone());
    }
    (len, true)
}

/// Removes one top-level section ([`REMOVABLE`]).
fn remove(raw: &mut RawScenario, section: &str) {
    match section {
        "description" => raw.description = None,
        "seed" => raw.seed = None,
        "duration" => raw.duration = None,
        "warmup" => raw.warmup = None,
        "max_events" => raw.max_events = None,
        "replications" => raw.replications = None,
        "cpus" => raw.cpus = None,
        "kernel" => raw.kernel = None,
        "device" => raw.device = None,
        "block" => raw.block = None,
        "crypt" => raw.crypt = None,
        "policies" => raw.policies = None,
        "workloads" => raw.workloads = None,
        "memory" => raw.memory = None,
        "variants" => raw.variants = None,
        "published" => raw.published = None,
        _ => raw.machine = None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ErrorKind, WorkloadKind, load_str, load_str_with_overrides, set_document};

    /// Two fio workloads and two atomic streams.
    const TWO: &str = "device: { kind: nvme }\nworkloads:\n  - { kind: fio }\n  - { kind: fio, \
                       name: b }\nmemory:\n  ram: 1GiB\n  atomic:\n    - { rate: 20 }\n    - { \
                       name: b, rate: 30 }\n";

    fn load(args: &[&str]) -> Result<super::super::Scenario, super::super::Error> {
        let sets: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        load_str_with_overrides("x.yaml", TWO, &sets)
    }

    fn io_size(s: &super::super::Scenario, i: usize) -> Option<u64> {
        match &s.workloads[i].kind {
            WorkloadKind::Fio(f) => f.io_size,
            _ => panic!("not fio"),
        }
    }

    #[test]
    fn an_index_writes_one_list_item() {
        assert_eq!(
            set_document("workloads[1].io_size=16MiB").unwrap(),
            "workloads:\n  - io_size: 16MiB\n"
        );
        assert_eq!(
            set_document("memory.atomic[0].hold.mean=1ms").unwrap(),
            "memory:\n  atomic:\n    - hold:\n        mean: 1ms\n"
        );
        assert_eq!(
            set_document("workloads[0]={kind: gitk}").unwrap(),
            "workloads:\n  - {kind: gitk}\n"
        );
    }

    #[test]
    fn an_index_edits_that_item_only() {
        let s = load(&["workloads[1].io_size=16MiB", "memory.atomic[1].rate=500"]).unwrap();
        assert_eq!((io_size(&s, 0), io_size(&s, 1)), (None, Some(16 << 20)));
        assert_eq!(s.workloads[1].name, "b", "the rest of the item is kept");
        let m = s.memory.unwrap();
        assert_eq!((m.atomic[0].rate, m.atomic[1].rate), (20.0, 500.0));
        assert_eq!(m.atomic[1].name, "b");
        // A whole item replaces it.
        let s = load(&["workloads[1]={kind: fio, io_size: 1MiB}"]).unwrap();
        assert_eq!(
            (io_size(&s, 1), s.workloads[1].name.as_str()),
            (Some(1 << 20), "fio1")
        );
    }

    #[test]
    fn a_variant_item_is_indexed_too() {
        let file = format!(
            "{TWO}variants:\n  - {{ name: small, set: {{ memory: {{ ram: 512MiB }} }} }}\n"
        );
        let sets = vec!["variants[0].set.memory.ram=768MiB".to_string()];
        let s = load_str_with_overrides("x.yaml", &file, &sets).unwrap();
        assert_eq!(
            s.memory.as_ref().map(|m| m.ram),
            Some(1 << 30),
            "the base is kept"
        );
        let v = &s.variants[0];
        assert_eq!(
            (v.name.as_str(), v.scenario.memory.as_ref().map(|m| m.ram)),
            ("small", Some(768 << 20))
        );
        let sets = vec!["variants[1].set.seed=3".to_string()];
        let e = load_str_with_overrides("x.yaml", &file, &sets).unwrap_err();
        assert_eq!(
            e.message(),
            "`variants[1]` is past the end: the list has 1 item"
        );
    }

    #[test]
    fn an_index_past_the_end_names_the_length() {
        let e = load(&["workloads[2].io_size=16MiB"]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadValue);
        assert_eq!(e.file(), "--set workloads[2].io_size=16MiB");
        assert_eq!(
            e.message(),
            "`workloads[2]` is past the end: the list has 2 items"
        );
        assert!(e.hint().unwrap().contains("workloads[0] … workloads[1]"));
        let e = load(&["memory.atomic[5].rate=1"]).unwrap_err();
        assert_eq!(
            e.message(),
            "`memory.atomic[5]` is past the end: the list has 2 items"
        );
        let e = load(&["!memory", "memory.atomic[0].rate=1"]).unwrap_err();
        assert_eq!(
            e.message(),
            "`memory.atomic[0]` is past the end: the list has 0 items"
        );
    }

    #[test]
    fn an_index_on_a_map_or_a_bad_index_is_refused() {
        for (arg, message) in [
            (
                "device[0].kind=nvme",
                "`device[0].kind` indexes `device`, which is not a list --set can index",
            ),
            (
                "memory[0].ram=1GiB",
                "`memory[0].ram` indexes `memory`, which is not a list --set can index",
            ),
            (
                "policies[0]=fifo",
                "`policies[0]` indexes `policies`, which is not a list --set can index",
            ),
            ("workloads[x].rate=1", "`workloads[x]` is not a list index"),
            (
                "workloads[-1].rate=1",
                "`workloads[-1]` is not a list index",
            ),
            ("workloads[].rate=1", "`workloads[]` is not a list index"),
            (
                "workloads[0].think[1].mean=1ms",
                "`workloads[0].think[1].mean` has more than one index",
            ),
        ] {
            let e = load(&[arg]).expect_err(arg);
            assert_eq!(
                (e.kind(), e.message()),
                (ErrorKind::Syntax, message),
                "{arg}"
            );
            assert_eq!(e.file(), format!("--set {arg}"));
            assert!(e.hint().is_some());
        }
    }

    #[test]
    fn a_value_an_index_wrote_is_validated_and_names_the_argument() {
        let e = load(&["workloads[0].io_size=lots"]).unwrap_err();
        assert_eq!(e.file(), "--set workloads[0].io_size=lots");
        assert_eq!(e.path(), Some("workloads[0].io_size"));
        // The document holds the one item as item 0; the error names the item the argument did.
        let e = load(&["workloads[1].rate=abc"]).unwrap_err();
        assert_eq!(e.path(), Some("workloads[1].rate"), "{e}");
        assert!(e.to_string().contains("workloads[1].rate: "), "{e}");
        assert!(!e.to_string().contains("workloads[0]"), "{e}");
    }

    #[test]
    fn removing_memory_leaves_no_memory_pressure() {
        assert!(load(&[]).unwrap().memory.is_some());
        let s = load(&["!memory"]).unwrap();
        assert!(s.memory.is_none());
        // Later overrides apply after the removal.
        let s = load(&["!memory", "memory.ram=2GiB"]).unwrap();
        assert_eq!(
            s.memory.map(|m| (m.ram, m.atomic.len())),
            Some((2 << 30, 0))
        );
        assert_eq!(set_document("!memory").unwrap(), "");
    }

    #[test]
    fn removing_a_required_section_fails_as_the_file_without_it_would() {
        let without = "workloads:\n  - { kind: fio }\n  - { kind: fio, name: b }\n";
        let file = load_str("x.yaml", without).unwrap_err();
        let set = load(&["!device"]).unwrap_err();
        assert_eq!(set.kind(), file.kind());
        assert_eq!(
            set.message(),
            format!("with --set !device: {}", file.message())
        );
        assert_eq!(set.kind(), ErrorKind::Missing);
        let e = load(&["!memry"]).unwrap_err();
        assert_eq!(e.message(), "`!memry` names no top-level section");
    }
}
