//! Helpers shared by the section modules' tests.

#![allow(dead_code)]

pub(crate) use super::*;
pub(crate) use crate::engine::SimDuration;

pub(crate) fn ok(text: &str) -> Scenario {
    load_str("t.yaml", text).unwrap_or_else(|e| panic!("{e}"))
}

pub(crate) fn err(text: &str) -> Error {
    load_str("t.yaml", text).expect_err("should fail")
}

pub(crate) const BASE: &str = "device: { kind: hdd5400 }\nworkloads:\n  - kind: fio\n";

/// Line, column, path and hint of an error, for compact assertions.
pub(crate) fn place(e: &Error) -> (Option<u64>, Option<u64>, Option<&str>) {
    (e.line(), e.column(), e.path())
}

pub(crate) const MEM: &str =
    "device: { kind: hdd5400 }\nworkloads:\n  - kind: gitk\nmemory:\n  ram: 2GiB\n";

pub(crate) fn mem(extra: &str) -> MemoryConfig {
    ok(&format!("{MEM}{extra}")).memory.expect("memory")
}

pub(crate) const VBASE: &str = "\
name: base
seed: 7
kernel:
  hz: 1000
  patches: [force-highorder]
device: { kind: hdd5400, seek_min: 3ms }
workloads:
  - kind: gitk
  - kind: buffered-writer
    rate: 20MB/s
memory:
  ram: 2GiB
  coalesce: 0.25
variants:
";

pub(crate) fn variant(s: &Scenario, name: &str) -> Scenario {
    let v = s.variants.iter().find(|v| v.name == name).expect("variant");
    (*v.scenario).clone()
}

/// `n` variants over `base`, each changing `cpus`.
pub(crate) fn with_variants(base: &str, n: usize) -> String {
    let mut text = format!("{base}variants:\n");
    for i in 0..n {
        text.push_str(&format!(
            "  - {{ name: v{i}, set: {{ cpus: {} }} }}\n",
            i % 4 + 1
        ));
    }
    text
}

/// Parses `yaml` as one section's raw form alone and runs that section's check on it, as the
/// loader would at the section's own key: the component test of a section, without a whole
/// scenario around it.
pub(crate) fn section<T, R>(
    yaml: &str,
    check: impl FnOnce(&check::Checker, &T, serde_saphyr::Location) -> Result<R, Error>,
) -> Result<R, Error>
where
    T: serde::de::DeserializeOwned,
{
    let src = Source::new("section.yaml", yaml);
    let raw: serde_saphyr::Spanned<T> = match serde_saphyr::from_str(yaml) {
        Ok(raw) => raw,
        Err(e) => return Err(src.yaml_error(&e)),
    };
    check(&check::Checker { src: &src }, &raw.value, raw.referenced)
}
