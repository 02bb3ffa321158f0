//! fio's JSON output (`fio --output-format=json`, fio 3.x; also what `qsim run --format json`
//! writes for a job file): the jobs it holds, each with its options and the figures calibration
//! reads. Everything is checked before use: a file that is not fio's JSON, a truncated one, a
//! job that failed or did no I/O is refused with the file, the line and the field.

use super::InputError;
use serde_json::Value;

/// Most jobs one fio JSON file may hold here: the calibration jobs are four, and a file of a
/// whole benchmark suite is not what `qsim calibrate` reads. Checked before anything is kept.
pub const MAX_JOBS: usize = 64;

/// Most bytes of one input file: fio's JSON for a few jobs is tens of KiB (json+ with its
/// histogram bins a few hundred).
pub const MAX_INPUT_BYTES: usize = 16 << 20;

/// One direction's figures of a job (`read` or `write`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DirStats {
    /// I/Os completed.
    pub ios: u64,
    /// I/Os per second.
    pub iops: f64,
    /// Bytes per second.
    pub bw: f64,
    /// Mean total latency (submission + completion), ns.
    pub lat_mean: f64,
    /// Standard deviation of the completion latency, ns.
    pub clat_sd: f64,
    /// Mean submission latency, ns (0 when fio reports none).
    pub slat_mean: f64,
    /// Completion-latency percentiles `(percent, ns)`, in fio's order.
    pub clat_pct: Vec<(f64, f64)>,
}

/// One job of a fio JSON file.
#[derive(Debug, Clone, PartialEq)]
pub struct FioJob {
    /// The file as named on the command line.
    pub file: String,
    /// Line of the job's `"jobname"` in the file.
    pub line: u64,
    /// Index in the file's `jobs` list.
    pub index: usize,
    /// fio's job name.
    pub name: String,
    /// The options: the file's `global options`, then the job's own, as fio wrote them.
    pub options: Vec<(String, String)>,
    /// Reads.
    pub read: DirStats,
    /// Writes.
    pub write: DirStats,
}

impl FioJob {
    /// The value of option `key` (the job's own over the global one).
    pub fn option(&self, key: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// An error about this job's field `field`, at the job's line.
    pub fn error(&self, field: &str, message: String, hint: &str) -> InputError {
        InputError {
            file: self.file.clone(),
            line: Some(self.line),
            field: Some(format!("jobs[{}] ({}) {field}", self.index, self.name)),
            message,
            hint: hint.to_string(),
        }
    }
}

/// The hint for a file that is not fio's JSON.
const NOT_FIO: &str = "give the output of `fio --output-format=json --output=FILE JOB.fio` \
                       (fio 3.x; qsim run --format json writes the same)";

/// Reads fio's JSON output `text` (named `file` in errors).
pub fn parse(file: &str, text: &str) -> Result<Vec<FioJob>, InputError> {
    let whole = |message: String, hint: &str| InputError {
        file: file.to_string(),
        line: None,
        field: None,
        message,
        hint: hint.to_string(),
    };
    // fio prints notes before the JSON when --output is not used ("note: both iodepth >= 1
    // and synchronous I/O engine..."): the document starts at the first `{`.
    let start = text.find('{').ok_or_else(|| {
        whole(
            "no JSON object in the file: this is not fio's JSON output".into(),
            NOT_FIO,
        )
    })?;
    let skipped = text[..start].matches('\n').count() as u64;
    let v: Value = serde_json::from_str(&text[start..]).map_err(|e| {
        let truncated = e.is_eof();
        InputError {
            file: file.to_string(),
            line: Some(e.line() as u64 + skipped),
            field: None,
            message: if truncated {
                "the JSON ends early: the file is truncated (did fio finish?)".into()
            } else {
                format!("not valid JSON: {e}")
            },
            hint: NOT_FIO.to_string(),
        }
    })?;
    if v.get("fio version").and_then(Value::as_str).is_none() {
        return Err(whole(
            "no \"fio version\" at the top level: this JSON is not fio's output".into(),
            NOT_FIO,
        ));
    }
    let Some(jobs) = v.get("jobs").and_then(Value::as_array) else {
        return Err(whole("no \"jobs\" list: not fio's output".into(), NOT_FIO));
    };
    if jobs.is_empty() || jobs.len() > MAX_JOBS {
        return Err(whole(
            format!(
                "{} jobs; a calibration file holds 1 to {MAX_JOBS}",
                jobs.len()
            ),
            "run the jobs of calibrate/*.fio, one or several per file",
        ));
    }
    let global = options(v.get("global options"));
    let lines = JobLines::new(text);
    let mut out = Vec::with_capacity(jobs.len());
    for (index, j) in jobs.iter().enumerate() {
        out.push(job(file, index, j, &global, lines.line(index))?);
    }
    Ok(out)
}

/// The `"jobname"` lines of a file, to locate each job.
struct JobLines(Vec<u64>);

impl JobLines {
    fn new(text: &str) -> JobLines {
        let lines = text.lines().enumerate();
        let found = lines.filter(|(_, l)| l.contains("\"jobname\""));
        JobLines(found.map(|(i, _)| i as u64 + 1).take(MAX_JOBS).collect())
    }

    fn line(&self, index: usize) -> u64 {
        self.0.get(index).copied().unwrap_or(1)
    }
}

/// An options object as `(key, value)` pairs (values as written; numbers as text).
fn options(v: Option<&Value>) -> Vec<(String, String)> {
    let Some(map) = v.and_then(Value::as_object) else {
        return Vec::new();
    };
    map.iter()
        .map(|(k, v)| {
            let value = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), value)
        })
        .collect()
}

/// One job of the list.
fn job(
    file: &str,
    index: usize,
    j: &Value,
    global: &[(String, String)],
    line: u64,
) -> Result<FioJob, InputError> {
    let name = j
        .get("jobname")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_string();
    let mut options = global.to_vec();
    options.extend(options_of(j));
    let mut out = FioJob {
        file: file.to_string(),
        line,
        index,
        name,
        options,
        read: DirStats::default(),
        write: DirStats::default(),
    };
    if let Some(e) = j.get("error").and_then(Value::as_i64).filter(|e| *e != 0) {
        return Err(out.error(
            "error",
            format!("fio reports error {e} for this job: it did not run to the end"),
            "fix what fio complained about and run the job again",
        ));
    }
    out.read = dir(&out, j, "read")?;
    out.write = dir(&out, j, "write")?;
    Ok(out)
}

/// The job's own `job options`.
fn options_of(j: &Value) -> Vec<(String, String)> {
    options(j.get("job options"))
}

/// A number at `path` below `v` (`["lat_ns", "mean"]`), or the error naming it.
fn number(job: &FioJob, v: &Value, dir: &str, path: &[&str]) -> Result<f64, InputError> {
    let mut at = v;
    for p in path {
        at = at.get(p).unwrap_or(&Value::Null);
    }
    at.as_f64()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| {
            job.error(
                &format!("{dir}.{}", path.join(".")),
                "missing or not a non-negative number".into(),
                NOT_FIO,
            )
        })
}

/// The figures of one direction.
fn dir(job: &FioJob, j: &Value, name: &str) -> Result<DirStats, InputError> {
    let Some(d) = j.get(name) else {
        return Err(job.error(name, format!("no `{name}` section"), NOT_FIO));
    };
    let ios = number(job, d, name, &["total_ios"])?;
    if ios == 0.0 {
        return Ok(DirStats::default());
    }
    let pct = d
        .get("clat_ns")
        .and_then(|c| c.get("percentile"))
        .and_then(Value::as_object);
    let mut clat_pct: Vec<(f64, f64)> = pct
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, v.as_f64()?)))
                .take(64)
                .collect()
        })
        .unwrap_or_default();
    clat_pct.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(DirStats {
        ios: ios as u64,
        iops: number(job, d, name, &["iops"])?,
        bw: number(job, d, name, &["bw_bytes"])?,
        lat_mean: number(job, d, name, &["lat_ns", "mean"])?,
        clat_sd: number(job, d, name, &["clat_ns", "stddev"])?,
        slat_mean: number(job, d, name, &["slat_ns", "mean"]).unwrap_or(0.0),
        clat_pct,
    })
}

/// A size as fio writes it in a job option: `4k`, `4K`, `1m`, `4096`, `1MiB` (k, m, g, t as
/// powers of 1024, fio's default `kb_base`).
pub fn fio_size(text: &str) -> Option<u64> {
    let t = text.trim().to_ascii_lowercase();
    let t = t.trim_end_matches("ib").trim_end_matches('b');
    let (num, mult) = match t.chars().last()? {
        'k' => (&t[..t.len() - 1], 1u64 << 10),
        'm' => (&t[..t.len() - 1], 1 << 20),
        'g' => (&t[..t.len() - 1], 1 << 30),
        't' => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    let n: f64 = num.trim().parse().ok()?;
    let bytes = n * mult as f64;
    (1.0..1e19).contains(&bytes).then_some(bytes as u64)
}
