//! `qsim calibrate`: a machine file from what a user measured on their own box
//! (docs/calibrate.md).
//!
//! ```text
//! fio JSON (raw device) ──fiojson──▶ jobs ──fit::assign──▶ roles ──fit──▶ first estimate
//! cryptsetup benchmark, lscpu, uname ──host──▶ cipher rates, cpus, kernel        │
//!                                                                               ▼
//!            machine file ◀── refine: simulate the fitted machine on the same jobs (predict),
//!                                     correct, three times; then the residual table
//! ```
//!
//! The device kind follows from the measurements: a QD1 4 KiB read slower than 1 ms is a
//! spinning disk (the HDD model), anything faster a flash drive (the NVMe model, as the
//! `sata-ssd`, `nvme-gen4` and `nvme-gen5` presets are). Every figure the model is given comes
//! from the inputs; what they cannot tell (the number of flash channels, the queue depth) is
//! the chosen kind's, and the report says so.

mod fiojson;
pub mod fit;
mod host;
mod predict;
#[cfg(test)]
mod tests;

pub use fiojson::{MAX_INPUT_BYTES, MAX_JOBS};
use fit::{Flash, Jobs, Role, Spinning};
pub use host::CIPHER;
use predict::Run;
use std::fmt;

/// An input calibration cannot use: the file, where in it, the field, what is wrong and how
/// to fix it.
#[derive(Debug, Clone, PartialEq)]
pub struct InputError {
    /// The file as named on the command line.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<u64>,
    /// The field or job, when known.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": {field}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for InputError {}

/// A named input: `(name as given, text)`.
pub type Named = (String, String);

/// What `qsim calibrate` was given.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// fio JSON of the calibration jobs on the raw device.
    pub fio: Vec<Named>,
    /// fio JSON of the same jobs on the dm-crypt device (optional: the honest test).
    pub crypt_fio: Vec<Named>,
    /// `cryptsetup benchmark` output.
    pub cryptsetup: Option<Named>,
    /// `lscpu` output or `/proc/cpuinfo`.
    pub lscpu: Option<Named>,
    /// `uname -r` output.
    pub uname: Option<Named>,
    /// The device's size in bytes (`blockdev --getsize64`), for a spinning disk.
    pub capacity: Option<u64>,
    /// The key size of the `aes-xts` line to read (512 or 256).
    pub key_bits: u32,
}

/// The result: the machine file's text and the report to print.
#[derive(Debug, Clone)]
pub struct Calibration {
    /// The machine file.
    pub machine: String,
    /// The fit, its residuals and (with `crypt_fio`) the predicted-vs-measured table.
    pub report: String,
}

/// The host's fitted parts.
#[derive(Debug, Clone, Default)]
struct Host {
    cpus: Option<u32>,
    kernel: Option<(String, crate::model::base::config::KernelVersion)>,
    cipher: Option<host::CipherRates>,
    key_bits: u32,
    sources: Vec<String>,
}

/// The fitted device.
#[derive(Debug, Clone, Copy)]
enum Fitted {
    /// The NVMe model (`sata-ssd`, `nvme-gen4`, `nvme-gen5`).
    Flash {
        kind: &'static str,
        f: Flash,
        queue_depth: u32,
        saturated: bool,
    },
    /// The HDD model (`hdd5400`, `hdd7200`).
    Disk {
        kind: &'static str,
        s: Spinning,
        capacity: u64,
        region: u64,
        queue_depth: u32,
    },
}

/// Correction rounds against the simulated model.
const ROUNDS: usize = 3;

/// A QD1 4 KiB read slower than this is a spinning disk's: seek and rotation take
/// milliseconds, flash reads take tens of microseconds.
const SPINNING_NS: f64 = 1e6;

/// Reads every input, fits the machine, checks it against the measurements by simulation,
/// and returns the machine file and the report.
pub fn calibrate(inputs: &Inputs) -> Result<Calibration, InputError> {
    let names = |list: &[Named]| -> String {
        let n: Vec<&str> = list.iter().map(|(n, _)| n.as_str()).collect();
        n.join(", ")
    };
    let host = read_host(inputs)?;
    let required = [Role::RandQd1, Role::RandDeep, Role::SeqRead];
    let jobs = fit::assign(read_all(&inputs.fio)?, &names(&inputs.fio), &required)?;
    let crypt_jobs = match inputs.crypt_fio.is_empty() {
        true => None,
        false => Some(fit::assign(
            read_all(&inputs.crypt_fio)?,
            &names(&inputs.crypt_fio),
            &[],
        )?),
    };
    let qd1 = jobs.stats(Role::RandQd1).map_or(0.0, |s| s.lat_mean);
    let fitted = if qd1 > SPINNING_NS {
        fit_disk(&jobs, &host, inputs)?
    } else {
        fit_flash(&jobs, &host)?
    };
    let machine = machine_text(&host, &fitted, &inputs.fio);
    let mut report = describe(&fitted, &host);
    report.push_str(
        "\nResiduals: each job measured, and simulated on the fitted machine (policy none):\n",
    );
    residuals(&fitted, &host, &jobs, false, &mut report)?;
    if let Some(cj) = &crypt_jobs {
        report.push_str(
            "\nThe honest test: the dm-crypt device measured, and predicted by the fitted \
             machine with dm-crypt on (the kernel's own layout):\n",
        );
        residuals(&fitted, &host, cj, true, &mut report)?;
    }
    Ok(Calibration { machine, report })
}

/// Every job of every fio JSON file, at most [`MAX_JOBS`] in all.
fn read_all(files: &[Named]) -> Result<Vec<fiojson::FioJob>, InputError> {
    let mut all = Vec::new();
    for (name, text) in files {
        let jobs = fiojson::parse(name, text)?;
        if all.len() + jobs.len() > MAX_JOBS {
            return Err(InputError {
                file: name.clone(),
                line: None,
                field: None,
                message: format!("more than {MAX_JOBS} jobs in all"),
                hint: fit::JOBS_HINT.to_string(),
            });
        }
        all.extend(jobs);
    }
    Ok(all)
}

/// The host's inputs, each optional.
fn read_host(inputs: &Inputs) -> Result<Host, InputError> {
    let mut h = Host {
        key_bits: inputs.key_bits,
        ..Host::default()
    };
    if let Some((n, t)) = &inputs.cryptsetup {
        let c = host::cryptsetup(n, t, inputs.key_bits)?;
        h.sources.push(format!(
            "cryptsetup benchmark: {n} line {} ({CIPHER} {}b)",
            c.line, inputs.key_bits
        ));
        h.cipher = Some(c);
    }
    if let Some((n, t)) = &inputs.lscpu {
        let cpus = host::cpus(n, t)?;
        h.sources.push(format!("CPUs: {n} ({cpus})"));
        h.cpus = Some(cpus);
    }
    if let Some((n, t)) = &inputs.uname {
        let (release, v) = host::kernel(n, t)?;
        h.sources.push(format!(
            "uname -r: {n} ({release}, modelled as {})",
            v.name()
        ));
        h.kernel = Some((release, v));
    } else {
        // The jobs' 1 MiB requests need a kernel after 2.6.x; without `uname -r` the newest
        // modelled one is assumed, and the file says so.
        let newest = crate::model::base::config::KernelVersion::ALL[13];
        h.sources.push(format!(
            "kernel: no uname -r given; {} (the newest qsim models) assumed",
            newest.name()
        ));
        h.kernel = Some(("not given".to_string(), newest));
    }
    Ok(h)
}

/// How each job is simulated: flash drives for half a second (hundreds of thousands of
/// requests at their rate), spinning disks for as long as the job ran, at most ten minutes.
fn run_of(fitted: &Fitted, host: &Host, job: &fiojson::FioJob, crypt: bool) -> Run {
    let runtime_ms = job
        .option("runtime")
        .and_then(|r| r.trim().trim_end_matches('s').parse::<f64>().ok())
        .map(|s| (s * 1000.0) as u64);
    let (ms, region) = match fitted {
        Fitted::Flash { .. } => (500, None),
        Fitted::Disk { region, .. } => (
            runtime_ms.unwrap_or(60_000).clamp(1000, 600_000),
            Some(*region),
        ),
    };
    Run {
        ms,
        region,
        crypt,
        modern: host.kernel.as_ref().is_none_or(|(_, v)| v.is_modern()),
    }
}

/// The model's figures for `role`'s job on the fitted machine.
fn simulate(
    fitted: &Fitted,
    host: &Host,
    jobs: &Jobs,
    role: Role,
    crypt: bool,
) -> Result<Option<fiojson::DirStats>, InputError> {
    let Some(job) = jobs.get(role) else {
        return Ok(None);
    };
    let machine = machine_text(host, fitted, &[]);
    let run = run_of(fitted, host, job, crypt);
    predict::predict(&machine, job, &run, role.writes()).map(Some)
}

/// A flash drive: the closed form, then [`ROUNDS`] corrections against the simulated model:
/// the latency moves by the QD1 mean's error, the bottleneck times scale by the deep job's
/// IOPS and the sequential read's bandwidth ratios (the 4 KiB time only when the deep job
/// saturated the device).
fn fit_flash(jobs: &Jobs, host: &Host) -> Result<Fitted, InputError> {
    let mut f = fit::flash(jobs);
    let saturated = fit::saturated(jobs);
    let measured = |r| jobs.stats(r).cloned().unwrap_or_default();
    let (q, d, s) = (
        measured(Role::RandQd1),
        measured(Role::RandDeep),
        measured(Role::SeqRead),
    );
    let make = |f: Flash| {
        let (kind, queue_depth) = flash_kind(f.rate());
        Fitted::Flash {
            kind,
            f,
            queue_depth,
            saturated,
        }
    };
    for _ in 0..ROUNDS {
        let fitted = make(f);
        let sim = |r| simulate(&fitted, host, jobs, r, false);
        let (pq, pd, ps) = (
            sim(Role::RandQd1)?,
            sim(Role::RandDeep)?,
            sim(Role::SeqRead)?,
        );
        let (Some(pq), Some(pd), Some(ps)) = (pq, pd, ps) else {
            break;
        };
        f.latency = (f.latency + q.lat_mean - pq.lat_mean).max(0.0);
        if saturated && pd.iops > 0.0 {
            f.s4k *= pd.iops / d.iops;
        }
        if ps.bw > 0.0 {
            f.s_big = (f.s_big * ps.bw / s.bw).max(f.s4k * 1.000_001);
        }
    }
    Ok(make(f))
}

/// The flash preset whose interface the sequential rate fits: SATA's 6 Gbit/s carries at most
/// about 600 MB/s, PCIe 4.0 x4 about 8 GB/s.
fn flash_kind(rate: f64) -> (&'static str, u32) {
    if rate < 700e6 {
        ("sata-ssd", 32)
    } else if rate < 9e9 {
        ("nvme-gen4", 1023)
    } else {
        ("nvme-gen5", 1023)
    }
}

/// A spinning disk: the closed form, then [`ROUNDS`] corrections against the simulated
/// model (`seek_min` by the QD1 mean's error, the rate by the sequential read's ratio).
fn fit_disk(jobs: &Jobs, host: &Host, inputs: &Inputs) -> Result<Fitted, InputError> {
    let qd1 = jobs.get(Role::RandQd1).expect("assigned");
    let region_given = qd1.option("size").and_then(fiojson::fio_size);
    let Some(capacity) = inputs.capacity.or(region_given) else {
        return Err(qd1.error(
            "job options.size",
            "a spinning disk's seek depends on how far apart requests are, and neither \
             --capacity nor the job's size says how large the disk is"
                .into(),
            "give --capacity with the device's size in bytes (`blockdev --getsize64 DEV`)",
        ));
    };
    let region = region_given.unwrap_or(capacity).min(capacity);
    let mut s = fit::spinning(jobs);
    let q = jobs.stats(Role::RandQd1).cloned().unwrap_or_default();
    let sq = jobs.stats(Role::SeqRead).cloned().unwrap_or_default();
    let make = |s: Spinning| {
        let rpm = 60e9 / s.revolution.max(1.0);
        let (kind, queue_depth) = if (rpm - 5400.0).abs() < (rpm - 7200.0).abs() {
            ("hdd5400", 1)
        } else {
            ("hdd7200", 31)
        };
        Fitted::Disk {
            kind,
            s,
            capacity,
            region,
            queue_depth,
        }
    };
    for _ in 0..ROUNDS {
        let fitted = make(s);
        let pq = simulate(&fitted, host, jobs, Role::RandQd1, false)?;
        let ps = simulate(&fitted, host, jobs, Role::SeqRead, false)?;
        let (Some(pq), Some(ps)) = (pq, ps) else {
            break;
        };
        s.seek_min = (s.seek_min + q.lat_mean - pq.lat_mean).max(0.0);
        if ps.bw > 0.0 {
            s.rate *= sq.bw / ps.bw;
        }
    }
    Ok(make(s))
}

mod text;
use text::{describe, machine_text, residuals};
