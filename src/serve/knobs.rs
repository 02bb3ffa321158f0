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

/// The knobs of `sc` (the base scenario as loaded), with their values there, as the page's
/// JSON: `{id, label, kind, paths, value, ...}` per knob. Kinds: `select` (`options`),
/// `rate` and `size` (a text box with a log slider over `min`..`max`), `number` (`min`,
/// `max`), `text`, `checks` (a list of `options` written as one YAML list).
pub fn knobs(sc: &Scenario) -> Vec<Value> {
    let v = values(sc);
    let mut out = vec![
        json!({"id": "cipher", "label": "cipher", "kind": "select",
            "paths": ["crypt.cipher"], "options": Cipher::NAMES, "value": v["cipher"],
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
        .map(|(label, alias, what)| {
            let name = alias.map_or(label.to_string(), |a| format!("{label} ({a})"));
            json!({"value": label, "label": name, "title": what})
        })
        .collect();
    out.extend([
        json!({"id": "kernel", "label": "kernel version", "kind": "select",
            "paths": ["kernel.version"], "options": versions, "value": v["kernel"],
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
                .find(|(label, alias, _)| *label == w || *alias == Some(w))
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
