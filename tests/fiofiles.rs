//! fio's files as fio writes them, checked against the real tools when they are installed
//! (else skipped, unless `QSIM_REQUIRE_FIO_TOOLS=1`): fio 3.33's own JSON for the same job
//! file, fio's `fiologparser_hist.py` on qsim's histogram log, and the `hdrhistogram` crate
//! on qsim's HdrHistogram files.

use crate::fiotools::{run_tool, tool};
use crate::util::{Run, TempDir};
use serde_json::Value;
use std::collections::BTreeSet;
use std::process::Command;

/// The seed job: 16 MiB of 4 KiB random reads through psync, on a file in `dir`.
fn seed_job(dir: &TempDir) -> String {
    let file = dir.path().join("data");
    dir.file(
        "seed.fio",
        &format!(
            "[seed]\nfilename={}\nsize=16m\nrw=randread\nbs=4k\nioengine=psync\n",
            file.display()
        ),
    )
}

/// Every key path of `v` (`/jobs[]/read/clat_ns/N`); the entries of `percentile` and `bins`
/// maps and of qsim's own object are data, not keys, and are not descended into.
fn key_paths(v: &Value, path: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                let p = format!("{path}/{k}");
                out.insert(p.clone());
                if !matches!(k.as_str(), "percentile" | "bins" | "qsim") {
                    key_paths(x, &p, out);
                }
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|x| key_paths(x, &format!("{path}[]"), out)),
        _ => {}
    }
}

/// Keys qsim writes and fio does not for this job, each documented in docs/output.md §2:
/// the three job options fio-plot selects files by (and the job's name), and qsim's object.
const QSIM_ONLY: [&str; 4] = [
    "/jobs[]/job options/name",
    "/jobs[]/job options/iodepth",
    "/jobs[]/job options/numjobs",
    "/jobs[]/qsim",
];

/// Real fio 3.33 and qsim, given the same job file, write JSON with the same key set (less
/// the documented allow-list), the same percentile keys, and floats in fio's `%f` form.
#[test]
fn json_has_real_fios_keys() {
    let Some(fio) = tool("fio") else {
        return;
    };
    let dir = TempDir::new();
    let job = seed_job(&dir);
    let real = run_tool(Command::new(fio).current_dir(dir.path()).args([
        "--output-format=json",
        "--output=real.json",
        &job,
    ]));
    let real: Value = serde_json::from_slice(&std::fs::read(dir.path().join("real.json")).unwrap())
        .unwrap_or_else(|e| panic!("fio's JSON: {e}\n{real}"));
    let ours = Run::of(&["run", &job, "--format", "json", "-q"]);
    assert_eq!(ours.code, Some(0), "{}", ours.stderr);
    let ours_json: Value = serde_json::from_str(&ours.stdout).unwrap();
    let (mut want, mut got) = (BTreeSet::new(), BTreeSet::new());
    key_paths(&real, "", &mut want);
    key_paths(&ours_json, "", &mut got);
    let missing: Vec<&String> = want.difference(&got).collect();
    assert!(missing.is_empty(), "fio writes, qsim does not: {missing:?}");
    let extra: Vec<&String> = got
        .difference(&want)
        .filter(|k| !QSIM_ONLY.contains(&k.as_str()))
        .collect();
    assert!(extra.is_empty(), "qsim writes, fio does not: {extra:?}");
    let pct = |v: &Value| -> Vec<String> {
        let map = v["jobs"][0]["read"]["clat_ns"]["percentile"]
            .as_object()
            .unwrap();
        map.keys().cloned().collect()
    };
    assert_eq!(pct(&real), pct(&ours_json));
    // fio's floats: six decimals, also where the value is whole.
    assert!(ours.stdout.contains("\"latency_percentile\": 100.000000"));
    assert!(ours.stdout.contains("\"usr_cpu\": 0.000000"));
    // One job's runtime and I/Os, as fio counts them: 16 MiB is 4096 reads of 4 KiB.
    let read = &ours_json["jobs"][0]["read"];
    assert_eq!(read["total_ios"], real["jobs"][0]["read"]["total_ios"]);
    assert_eq!(read["io_bytes"], 16 << 20);
    let (bytes, ms) = (
        read["io_bytes"].as_f64().unwrap(),
        read["runtime"].as_f64().unwrap(),
    );
    let bw = read["bw_bytes"].as_f64().unwrap();
    assert!(
        (bytes * 1000.0 / ms - bw).abs() / bw < 0.01,
        "{bytes} B in {ms} ms vs {bw} B/s"
    );
}
