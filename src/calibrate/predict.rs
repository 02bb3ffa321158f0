//! The model's own prediction for a measured job: the fitted machine file under the default
//! machine scenario (as `qsim run job.fio --machine FILE` runs it), the job rebuilt from the
//! options fio recorded, simulated once, and read back through the same fio JSON reader.

use super::InputError;
use super::fiojson::{self, DirStats, FioJob};
use crate::experiment::{self, RunOptions};
use crate::scenario;
use std::sync::atomic::{AtomicU64, Ordering};

/// Options of a measured job that the prediction sets itself (the run's length, the region,
/// the file) or that only shape fio's own output.
const SET_HERE: &[&str] = &[
    "runtime",
    "time_based",
    "ramp_time",
    "filename",
    "size",
    "name",
    "io_size",
    "number_ios",
    "loops",
    "startdelay",
    "output",
    "output-format",
    "group_reporting",
    "stonewall",
    "wait_for",
    "new_group",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
    "log_avg_msec",
    "log_hist_msec",
    "per_job_logs",
    "log_offset",
];

/// How one job is simulated.
#[derive(Debug, Clone, Copy)]
pub struct Run {
    /// Simulated length, ms.
    pub ms: u64,
    /// The region the job covers, bytes (none: qsim's 1 GiB for a device without `size`).
    pub region: Option<u64>,
    /// Whether dm-crypt is on the path (the kernel's own layout, or `fifo` before 4.19).
    pub crypt: bool,
    /// Whether the machine's kernel has dm-crypt's modern layout.
    pub modern: bool,
}

/// The job text qsim reads for `job`: its recorded options, then the run's own.
pub fn job_text(job: &FioJob, run: &Run) -> String {
    let mut text = String::from("[global]\nfilename=/dev/calibrated\n");
    text.push_str(&format!("[{}]\n", safe_name(&job.name)));
    for (k, v) in &job.options {
        if SET_HERE.contains(&k.as_str()) || k.contains(['\n', '[', '=']) || v.contains('\n') {
            continue;
        }
        if v.is_empty() {
            text.push_str(&format!("{k}\n"));
        } else {
            text.push_str(&format!("{k}={v}\n"));
        }
    }
    if let Some(r) = run.region {
        text.push_str(&format!("size={r}\n"));
    }
    text.push_str(&format!("runtime={}ms\ntime_based\n", run.ms));
    text
}

/// A job name fit for a section header.
fn safe_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    if s.is_empty() { "job".into() } else { s }
}

/// The figures the fitted machine (`machine`, a machine file's text) gives for `job` in
/// direction `write` or read.
pub fn predict(
    machine: &str,
    job: &FioJob,
    run: &Run,
    write: bool,
) -> Result<DirStats, InputError> {
    static N: AtomicU64 = AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "qsim-calibrate-{}-{}.yaml",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let fail = |what: &str, e: String| InputError {
        file: "<the fitted machine>".into(),
        line: None,
        field: Some(format!("job `{}` of {}", job.name, job.file)),
        message: format!("{what}: {e}"),
        hint: "this is qsim's own failure to simulate the fit: please report it with the \
               inputs"
            .into(),
    };
    std::fs::write(&path, machine)
        .map_err(|e| fail("cannot write a temporary file", e.to_string()))?;
    let shown = path.display().to_string();
    let policy = match (run.crypt, run.modern) {
        (false, _) => "none",
        (true, true) => "dm-crypt",
        (true, false) => "fifo",
    };
    let sets = vec!["replications=1".to_string(), format!("policies=[{policy}]")];
    let base = scenario::fio::resolve_machine(&shown, &sets);
    let _ = std::fs::remove_file(&path);
    let base = base.map_err(|e| fail("the fitted machine does not load", e.to_string()))?;
    let text = job_text(job, run);
    let sc = scenario::fio::load_str(&job.name, &text, base, "calibrated")
        .map_err(|e| fail("qsim cannot read the job", e.to_string()))?
        .scenario;
    let opts = RunOptions {
        format: "json".to_string(),
        jobs: 1,
        ..RunOptions::default()
    };
    let mut out = Vec::new();
    experiment::run_and_report(&sc, &opts, &mut out, &|_, _| {})
        .map_err(|e| fail("the simulation failed", e.to_string()))?;
    let out = String::from_utf8_lossy(&out);
    let jobs = fiojson::parse("<simulated>", &out).map_err(|e| fail("its JSON", e.to_string()))?;
    let first = jobs
        .into_iter()
        .next()
        .ok_or_else(|| fail("no job", String::new()))?;
    Ok(if write { first.write } else { first.read })
}
