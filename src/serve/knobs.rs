//! The knobs `qsim serve`'s page shows for a scenario, and their values in a resolved one.
//!
//! A knob is a control on the page bound to one or more scenario field paths; moving it sends
//! `PATH=VALUE` for each path, applied through the same `--set` machinery as the command line
//! (so a bad value meets the same checks and the same located error). The page knows nothing
//! of the schema beyond this list: which knobs a scenario gets (memory size only with
//! `memory:`, write rate only with a buffered writer), their choices (cipher presets, kernel
//! versions and patches from the scenario layer's own tables) and, after every run, the value
//! each field has in the resolved scenario ([`values`]), so a knob the user did not touch
//! shows what a preset it depends on made of it (a cipher's rates).
//!
//! The slider ranges are the page's, not the model's: they bound where a slider can go, while
//! the text box beside it takes any value the scenario language takes.

use crate::model::base::config::{KernelVersion, WorkloadKind};
use crate::model::base::physics::Cipher;
use crate::scenario::{Scenario, kernel_patches, units};
use serde_json::{Value, json};

/// Most replications a page run may ask for: with two-queue's three policies at ~0.3 s a
/// replication on two cores, 50 of them keep a run under a minute (assumed: a page is for
/// turning knobs; `qsim run -r N` is for long runs).
pub const MAX_SERVE_REPLICATIONS: u32 = 50;

/// The index of the first buffered writer, whose rate the write-rate knob sets.
fn writer(sc: &Scenario) -> Option<(usize, f64)> {
    sc.workloads
        .iter()
        .enumerate()
        .find_map(|(i, w)| match &w.kind {
            WorkloadKind::BufferedWriter(b) => Some((i, b.rate)),
            _ => None,
        })
}

/// A menu entry or a box's value as the page sends it: quoted YAML text (a kernel "6.12" is not
/// the number 6.12), one entry alone for a `checks` knob (page.js `asYaml`).
pub fn option_yaml(kind: &str, value: &str) -> String {
    let quoted = Value::String(value.to_string()).to_string();
    if kind == "checks" {
        format!("[{quoted}]")
    } else {
        quoted
    }
}

/// Marks each `select` and `checks` option that the scenario refuses when it is chosen alone:
/// `accepts` resolves the base with a knob's `--set`s; a refused option gets `why` (the first
/// line of the located error), which the page shows on a disabled entry, so every entry a user
/// can pick runs (two-queue sets `block.mode: legacy`, which no kernel from 5.0 has).
pub fn mark_refused(knobs: &mut [Value], accepts: &dyn Fn(&[String]) -> Result<(), String>) {
    for k in knobs {
        let kind = k["kind"].as_str().unwrap_or_default().to_string();
        if kind != "select" && kind != "checks" {
            continue;
        }
        let paths: Vec<String> = (k["paths"].as_array().into_iter().flatten())
            .filter_map(|p| p.as_str().map(str::to_string))
            .collect();
        let Some(options) = k["options"].as_array_mut() else {
            continue;
        };
        for o in options {
            let value = o["value"].as_str().unwrap_or_default().to_string();
            let text = option_yaml(&kind, &value);
            let sets: Vec<String> = paths.iter().map(|p| format!("{p}={text}")).collect();
            if let Err(e) = accepts(&sets) {
                // The error's first line, past its location and the `--set` that caused it.
                let first = e.lines().next().unwrap_or_default();
                let marker = format!("{}: ", sets.last().map_or("", String::as_str));
                let why = first
                    .find(&marker)
                    .map_or(first, |i| &first[i + marker.len()..]);
                o["why"] = Value::String(why.to_string());
            }
        }
    }
}

/// The knobs of `sc` (the base scenario as loaded), with their values there, as the page's
/// JSON: `{id, label, kind, paths, value, ...}` per knob. Kinds: `select` and `checks`
/// (`options`, each `{value, label}`, `title` for a box; `checks` writes one YAML list),
/// `rate` and `size` (a text box with a log slider over `min`..`max`), `number` (`min`,
/// `max`), `text`. [`mark_refused`] adds why an option cannot be picked.
pub fn knobs(sc: &Scenario) -> Vec<Value> {
    let v = values(sc);
    let entries = |names: &[&str]| -> Vec<Value> {
        (names.iter())
            .map(|n| json!({"value": n, "label": n}))
            .collect()
    };
    let mut out = vec![
        json!({"id": "cipher", "label": "cipher", "kind": "select",
            "paths": ["crypt.cipher"], "options": entries(Cipher::NAMES), "value": v["cipher"],
            "help": "crypt.cipher: a preset sets both rates"}),
        json!({"id": "cipher_rate", "label": "cipher speed", "kind": "rate",
            "paths": ["crypt.encrypt_rate", "crypt.decrypt_rate"], "value": v["cipher_rate"],
            "min": 10e6, "max": 20e9,
            "help": "crypt.encrypt_rate and crypt.decrypt_rate, e.g. 60MB/s or 1432MiB/s"}),
    ];
    if let Some((i, _)) = writer(sc) {
        out.push(
            json!({"id": "write_rate", "label": "write rate", "kind": "rate",
            "paths": [format!("workloads[{i}].rate")], "value": v["write_rate"],
            "min": 1e6, "max": 1e9,
            "help": format!("workloads[{i}].rate: the buffered writer's rate")}),
        );
    }
    if sc.memory.is_some() {
        out.push(json!({"id": "ram", "label": "memory size", "kind": "size",
            "paths": ["memory.ram"], "value": v["ram"],
            "min": f64::from(1u32 << 28), "max": (1u64 << 36) as f64,
            "help": "memory.ram: whole 4 KiB pages, e.g. 2GiB"}));
    }
    let versions: Vec<&str> = KernelVersion::ALL.iter().map(|k| k.name()).collect();
    let patches: Vec<Value> = kernel_patches()
        .into_iter()
        .map(|(label, alias, what, short)| {
            // Mel's number and a few words; the whole story and any other name on hover.
            let name = if label.parse::<u32>().is_ok() {
                format!("{label}: {short}")
            } else {
                label.to_string()
            };
            let title = alias.map_or(what.to_string(), |a| format!("{what} (also `{a}`)"));
            json!({"value": label, "label": name, "title": title})
        })
        .collect();
    out.extend([
        json!({"id": "kernel", "label": "kernel version", "kind": "select",
            "paths": ["kernel.version"], "options": entries(&versions), "value": v["kernel"],
            "help": "kernel.version: reclaim and congestion_wait behaviour"}),
        json!({"id": "patches", "label": "kernel patches", "kind": "checks",
            "paths": ["kernel.patches"], "options": patches, "value": v["patches"],
            "help": "kernel.patches"}),
        json!({"id": "replications", "label": "replications", "kind": "number",
            "paths": ["replications"], "value": v["replications"], "min": 1,
            "max": MAX_SERVE_REPLICATIONS, "help": "replications per policy"}),
        json!({"id": "duration", "label": "duration", "kind": "text",
            "paths": ["duration"], "value": v["duration"],
            "help": "duration, warm-up included, e.g. 20s"}),
    ]);
    out
}

/// Each knob's value in the resolved scenario `sc`, by knob id, as the scenario language
/// writes it.
pub fn values(sc: &Scenario) -> Value {
    let cipher = sc
        .crypt
        .cipher
        .split_whitespace()
        .next()
        .unwrap_or_default();
    let all = kernel_patches();
    let patches: Vec<&str> = sc
        .kernel
        .patches
        .iter()
        .filter_map(|w| {
            let w = w.trim();
            all.iter()
                .find(|(label, alias, ..)| *label == w || *alias == Some(w))
                .map(|p| p.0)
        })
        .collect();
    json!({
        "cipher": cipher,
        "cipher_rate": units::format_bandwidth(sc.crypt.encrypt_rate),
        "write_rate": writer(sc).map(|(_, r)| units::format_bandwidth(r)),
        "ram": sc.memory.as_ref().map(|m| units::format_bytes(m.ram)),
        "kernel": sc.kernel.version.name(),
        "patches": patches,
        "replications": sc.replications,
        "duration": sc.duration.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_queue_gets_every_knob_with_its_file_values() {
        let sc = crate::scenario::resolve("two-queue").unwrap();
        let ks = knobs(&sc);
        let ids: Vec<&str> = ks.iter().map(|k| k["id"].as_str().unwrap()).collect();
        assert_eq!(
            ids,
            [
                "cipher",
                "cipher_rate",
                "write_rate",
                "ram",
                "kernel",
                "patches",
                "replications",
                "duration"
            ]
        );
        let v = values(&sc);
        assert_eq!(v["cipher"], "aes-2009");
        assert_eq!(v["cipher_rate"], "60MB/s");
        assert_eq!(v["write_rate"], "20MB/s");
        assert_eq!(v["ram"], "2GiB");
        assert_eq!(v["kernel"], "2.6.32");
        assert_eq!(v["duration"], "60s");
        assert_eq!(ks[2]["paths"][0], "workloads[1].rate");
    }

    #[test]
    fn every_value_a_knob_shows_is_one_its_paths_take_back() {
        let sc = crate::scenario::resolve("two-queue").unwrap();
        let v = values(&sc);
        for k in knobs(&sc) {
            let value = &v[k["id"].as_str().unwrap()];
            let text = match value {
                Value::String(s) => s.clone(),
                Value::Array(xs) => format!(
                    "[{}]",
                    xs.iter()
                        .map(|x| x.as_str().unwrap().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                other => other.to_string(),
            };
            let sets: Vec<String> = k["paths"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| format!("{}={text}", p.as_str().unwrap()))
                .collect();
            let again = crate::scenario::resolve_with_overrides("two-queue", &sets)
                .unwrap_or_else(|e| panic!("{sets:?}: {e}"));
            assert_eq!(values(&again), v, "{sets:?}");
        }
    }

    /// Every menu entry and every box of every knob, written as the page writes it (quoted
    /// text, [`option_yaml`]), either goes through or is marked refused with the reason: a
    /// kernel "6.12" once went out as the number 6.12 and failed for a reason no one saw.
    #[test]
    fn every_menu_entry_goes_through_as_the_page_sends_it_or_says_why_not() {
        let accepts = |sets: &[String]| {
            crate::scenario::resolve_with_overrides("two-queue", sets)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        let sc = crate::scenario::resolve("two-queue").unwrap();
        let mut ks = knobs(&sc);
        mark_refused(&mut ks, &accepts);
        let mut refused = Vec::new();
        for k in &ks {
            let kind = k["kind"].as_str().unwrap();
            for o in k["options"].as_array().into_iter().flatten() {
                let value = o["value"].as_str().unwrap();
                let sets: Vec<String> = (k["paths"].as_array().unwrap().iter())
                    .map(|p| format!("{}={}", p.as_str().unwrap(), option_yaml(kind, value)))
                    .collect();
                match (&o["why"], accepts(&sets)) {
                    (Value::Null, Ok(())) => {}
                    (Value::String(why), Err(e)) => {
                        assert!(e.contains(why.as_str()), "{why} vs {e}");
                        refused.push(value.to_string());
                    }
                    (why, got) => panic!("{sets:?}: marked {why}, resolves {got:?}"),
                }
            }
        }
        // two-queue is a 2.6.32 scenario with the legacy queue and low_latency set: the
        // kernels before it lack low_latency, those from 5.0 the legacy queue.
        assert!(refused.contains(&"6.12".to_string()), "{refused:?}");
        assert!(refused.contains(&"2.6.30".to_string()), "{refused:?}");
        assert!(!refused.contains(&"2.6.32".to_string()), "{refused:?}");
        assert!(!refused.contains(&"aes-ni".to_string()), "{refused:?}");
        let why = &ks.iter().find(|k| k["id"] == "kernel").unwrap()["options"];
        let last = why.as_array().unwrap().last().unwrap()["why"]
            .as_str()
            .unwrap();
        assert!(last.contains("legacy request queue went in 5.0"), "{last}");
    }

    #[test]
    fn a_scenario_without_memory_or_writer_has_no_such_knob() {
        let sc = crate::scenario::resolve("nvme-fio").unwrap();
        let ids: Vec<String> = knobs(&sc)
            .iter()
            .map(|k| k["id"].as_str().unwrap().to_string())
            .collect();
        assert!(!ids.contains(&"ram".to_string()), "{ids:?}");
        assert!(!ids.contains(&"write_rate".to_string()), "{ids:?}");
    }
}
