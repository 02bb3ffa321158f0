//! Scenarios shipped inside the binary: every file of `scenarios/`, embedded at build time, so
//! `qsim run two-queue` works from any directory.
//!
//! A name resolves to a shipped scenario only when no file of that path exists, and only in the
//! forms a user types for one: `two-queue`, `two-queue.yaml` or `scenarios/two-queue.yaml`. Any
//! other path that does not exist is a missing file, never silently a shipped scenario. The
//! teaching set lives in `scenarios/teach/` and is named by its path below `scenarios/`:
//! `teach/hol`, `teach/hol.yaml` or `scenarios/teach/hol.yaml`.

use super::{Error, Scenario, load_str, load_str_with_overrides, load_with_overrides};
use std::path::Path;

/// The embedded files: (path below `scenarios/`, text), sorted by path. Adding a scenario means
/// adding a line here (`tests/teach.rs` checks that every file of `scenarios/teach/` is listed).
const FILES: &[(&str, &str)] = &[
    (
        "burst-node.yaml",
        include_str!("../../scenarios/burst-node.yaml"),
    ),
    (
        "cipher-sweep.yaml",
        include_str!("../../scenarios/cipher-sweep.yaml"),
    ),
    (
        "cloudflare-2020.yaml",
        include_str!("../../scenarios/cloudflare-2020.yaml"),
    ),
    (
        "cloudflare-blog-2020.yaml",
        include_str!("../../scenarios/cloudflare-blog-2020.yaml"),
    ),
    (
        "gfp-atomic-storm.yaml",
        include_str!("../../scenarios/gfp-atomic-storm.yaml"),
    ),
    (
        "hdd-array.yaml",
        include_str!("../../scenarios/hdd-array.yaml"),
    ),
    (
        "hubbard-2019.yaml",
        include_str!("../../scenarios/hubbard-2019.yaml"),
    ),
    (
        "mel-2009.yaml",
        include_str!("../../scenarios/mel-2009.yaml"),
    ),
    (
        "mel-2009-nocrypt.yaml",
        include_str!("../../scenarios/mel-2009-nocrypt.yaml"),
    ),
    (
        "mel-2009-swap.yaml",
        include_str!("../../scenarios/mel-2009-swap.yaml"),
    ),
    (
        "nvme-desktop.yaml",
        include_str!("../../scenarios/nvme-desktop.yaml"),
    ),
    (
        "nvme-fio.yaml",
        include_str!("../../scenarios/nvme-fio.yaml"),
    ),
    (
        "split-6.11.yaml",
        include_str!("../../scenarios/split-6.11.yaml"),
    ),
    (
        "storage-daemon.yaml",
        include_str!("../../scenarios/storage-daemon.yaml"),
    ),
    (
        "storage-server.yaml",
        include_str!("../../scenarios/storage-server.yaml"),
    ),
    (
        "teach/cwait.yaml",
        include_str!("../../scenarios/teach/cwait.yaml"),
    ),
    (
        "teach/hol.yaml",
        include_str!("../../scenarios/teach/hol.yaml"),
    ),
    (
        "teach/little.yaml",
        include_str!("../../scenarios/teach/little.yaml"),
    ),
    (
        "teach/prio.yaml",
        include_str!("../../scenarios/teach/prio.yaml"),
    ),
    (
        "teach/watermarks.yaml",
        include_str!("../../scenarios/teach/watermarks.yaml"),
    ),
    (
        "two-queue.yaml",
        include_str!("../../scenarios/two-queue.yaml"),
    ),
];

/// One embedded scenario.
#[derive(Debug, Clone)]
pub struct ShippedScenario {
    /// Name to pass to `qsim run` (the path below `scenarios/` without `.yaml`: `two-queue`,
    /// `teach/hol`).
    pub name: &'static str,
    /// Path below `scenarios/` (`two-queue.yaml`, `teach/hol.yaml`).
    pub file: &'static str,
    /// One-line purpose: the scenario's `description:` (or why it does not load).
    pub purpose: String,
    /// The YAML text.
    pub yaml: &'static str,
}

impl ShippedScenario {
    /// The name used in error messages: `<shipped>/two-queue.yaml`.
    pub fn source_name(&self) -> String {
        format!("<shipped>/{}", self.file)
    }

    /// Loads and validates the embedded text.
    pub fn load(&self) -> Result<Scenario, Error> {
        load_str(&self.source_name(), self.yaml)
    }
}

/// Names of the shipped scenarios, sorted.
pub(crate) fn shipped_names() -> Vec<&'static str> {
    FILES
        .iter()
        .map(|(file, _)| file.trim_end_matches(".yaml"))
        .collect()
}

/// Every shipped scenario, sorted by name, with its purpose read from its `description:`.
pub fn shipped() -> Vec<ShippedScenario> {
    FILES
        .iter()
        .map(|&(file, yaml)| {
            let mut s = ShippedScenario {
                name: file.trim_end_matches(".yaml"),
                file,
                purpose: String::new(),
                yaml,
            };
            s.purpose = match s.load() {
                Ok(sc) => sc.description,
                Err(e) => format!("(does not load: {})", e.message()),
            };
            s
        })
        .collect()
}

/// The shipped scenario that `arg` names, if it is written as one: `name`, `name.yaml`, or
/// `scenarios/name.yaml` (also with a leading `./`), where `name` is the path below
/// `scenarios/` (`teach/hol`).
fn find(arg: &str) -> Option<(&'static str, &'static str)> {
    let rest = ["./scenarios/", "scenarios/"]
        .iter()
        .find_map(|dir| arg.strip_prefix(dir))
        .unwrap_or(arg);
    let stem = rest.strip_suffix(".yaml").unwrap_or(rest);
    FILES
        .iter()
        .find(|(f, _)| f.trim_end_matches(".yaml") == stem)
        .copied()
}

/// The shipped scenario `arg` names, as [`find`] reads it: (file name, text).
pub(crate) fn find_text(arg: &str) -> Option<(&'static str, &'static str)> {
    find(arg)
}

/// Loads the scenario that a command-line argument names: an existing file first, else a shipped
/// scenario by name, else the missing-file error (which lists the shipped names).
pub fn resolve(arg: &str) -> Result<Scenario, Error> {
    resolve_with_overrides(arg, &[])
}

/// [`resolve`] with command-line `--set path.to.field=value` overrides (see
/// [`load_str_with_overrides`](super::load_str_with_overrides)).
pub fn resolve_with_overrides(arg: &str, sets: &[String]) -> Result<Scenario, Error> {
    let path = Path::new(arg);
    if path.exists() {
        return load_with_overrides(path, sets);
    }
    match find(arg) {
        Some((file, yaml)) => load_str_with_overrides(&format!("<shipped>/{file}"), yaml, sets),
        None => load_with_overrides(path, sets),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_scenario_loads_and_has_a_purpose() {
        let all = shipped();
        assert_eq!(all.len(), FILES.len());
        for s in &all {
            let sc = s.load().unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(sc.name, s.name, "name matches the file");
            assert!(
                !s.purpose.is_empty() && !s.purpose.contains('\n'),
                "{}",
                s.name
            );
        }
        let names: Vec<_> = all.iter().map(|s| s.name).collect();
        assert_eq!(names, shipped_names());
        assert!(names.windows(2).all(|w| w[0] < w[1]), "sorted");
    }

    #[test]
    fn names_resolve_in_the_forms_users_type() {
        for arg in [
            "two-queue",
            "two-queue.yaml",
            "scenarios/two-queue.yaml",
            "./scenarios/two-queue.yaml",
        ] {
            assert_eq!(find(arg).map(|f| f.0), Some("two-queue.yaml"), "{arg}");
        }
        assert_eq!(find("elsewhere/two-queue.yaml"), None);
        for arg in [
            "teach/hol",
            "teach/hol.yaml",
            "scenarios/teach/hol.yaml",
            "./scenarios/teach/hol.yaml",
        ] {
            assert_eq!(find(arg).map(|f| f.0), Some("teach/hol.yaml"), "{arg}");
        }
        for arg in [
            "hol",
            "elsewhere/teach/hol.yaml",
            "scenarios/hol",
            "teach/two-queue",
            "./two-queue.yaml",
        ] {
            assert_eq!(find(arg), None, "{arg}");
        }
        assert_eq!(find("three-queue"), None);
        let e = resolve("no-such-scenario").unwrap_err();
        assert_eq!(e.kind(), super::super::ErrorKind::Read);
        assert!(e.hint().unwrap().contains("two-queue"));
        assert_eq!(resolve("nvme-fio").unwrap().name, "nvme-fio");
    }
}
