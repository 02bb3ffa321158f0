//! Which measured job is which, and the device model's parameters fitted to them.
//!
//! The jobs ([`Role`]): a 4 KiB random read at queue depth 1 (the service time of one request
//! alone), the same at a deep queue (the bottleneck's rate for small requests), and a large
//! sequential read (its rate for large ones); a large sequential write is optional and only
//! checked (the model serves reads and writes alike).
//!
//! The closed forms here give the first estimate; the calibration (`fit_flash` and
//! `fit_disk` in `calibrate`) then corrects it against the model itself, simulating the
//! fitted machine on the same jobs.

use super::InputError;
use super::fiojson::{DirStats, FioJob, fio_size};

/// What a measured job tells the fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `rw=randread`, `bs=4k`, one I/O in flight.
    RandQd1,
    /// `rw=randread`, `bs=4k`, more than one I/O in flight.
    RandDeep,
    /// `rw=read` (sequential), `bs` 64 KiB or more.
    SeqRead,
    /// `rw=write` (sequential), `bs` 64 KiB or more.
    SeqWrite,
}

impl Role {
    /// Every role, in the order reports list them.
    pub const ALL: [Role; 4] = [Role::RandQd1, Role::RandDeep, Role::SeqRead, Role::SeqWrite];

    /// What the job is, in words.
    pub fn what(self) -> &'static str {
        match self {
            Role::RandQd1 => "4KiB random read at queue depth 1 (calibrate/randread-qd1.fio)",
            Role::RandDeep => "4KiB random read at a deep queue (calibrate/randread-deep.fio)",
            Role::SeqRead => "1MiB sequential read (calibrate/seqread.fio)",
            Role::SeqWrite => "1MiB sequential write (calibrate/seqwrite.fio)",
        }
    }

    /// Whether the job writes.
    pub fn writes(self) -> bool {
        self == Role::SeqWrite
    }
}

/// The hint listing the jobs calibration reads.
pub const JOBS_HINT: &str = "calibration reads the jobs of calibrate/*.fio: rw=randread bs=4k \
                             at iodepth=1 and at a deep iodepth, rw=read bs=1m, and optionally \
                             rw=write bs=1m; run them with `fio --filename=DEV \
                             --output-format=json --output=FILE calibrate/JOB.fio`";

/// A job's role, from its options, or why it has none.
fn role(job: &FioJob) -> Result<Role, String> {
    let rw = job
        .option("rw")
        .or(job.option("readwrite"))
        .unwrap_or("read");
    let bs_text = job.option("bs").or(job.option("blocksize")).unwrap_or("4k");
    let bs = fio_size(bs_text.split(',').next().unwrap_or("")).unwrap_or(0);
    let depth = depth(job);
    match (rw, bs) {
        ("randread", 4096) if depth == 1 => Ok(Role::RandQd1),
        ("randread", 4096) => Ok(Role::RandDeep),
        ("read", b) if b >= 65536 => Ok(Role::SeqRead),
        ("write", b) if b >= 65536 => Ok(Role::SeqWrite),
        _ => Err(format!(
            "rw={rw}, bs={bs_text}, {depth} I/O(s) in flight is not a calibration job"
        )),
    }
}

/// I/Os the job keeps in flight: `iodepth` for an asynchronous engine (1 for a synchronous
/// one, fio's default `psync` included), times `numjobs`.
pub fn depth(job: &FioJob) -> u64 {
    let num = |k: &str| job.option(k).and_then(|v| v.trim().parse::<u64>().ok());
    let engine = job.option("ioengine").unwrap_or("psync");
    let asynchronous = matches!(engine, "libaio" | "io_uring" | "posixaio");
    let iodepth = if asynchronous {
        num("iodepth").unwrap_or(1)
    } else {
        1
    };
    iodepth.max(1) * num("numjobs").unwrap_or(1).max(1)
}

/// The measured jobs by role.
#[derive(Debug, Clone)]
pub struct Jobs {
    /// One per role at most, in [`Role::ALL`] order.
    pub by_role: Vec<(Role, FioJob)>,
}

impl Jobs {
    /// The job of `role`, if given.
    pub fn get(&self, role: Role) -> Option<&FioJob> {
        self.by_role
            .iter()
            .find(|(r, _)| *r == role)
            .map(|(_, j)| j)
    }

    /// The figures of `role`'s job in the direction it measures.
    pub fn stats(&self, role: Role) -> Option<&DirStats> {
        self.get(role)
            .map(|j| if role.writes() { &j.write } else { &j.read })
    }
}

/// Sorts `all` into roles; `files` names the inputs (for an error about a missing job) and
/// `required` the roles that must be there. A job of no role, a role given twice, or a
/// job that did no I/O in its direction is refused at the job's line.
pub fn assign(all: Vec<FioJob>, files: &str, required: &[Role]) -> Result<Jobs, InputError> {
    let mut by_role: Vec<(Role, FioJob)> = Vec::new();
    for job in all {
        let r = role(&job).map_err(|m| job.error("job options", m, JOBS_HINT))?;
        if let Some((_, first)) = by_role.iter().find(|(x, _)| *x == r) {
            return Err(job.error(
                "job options",
                format!(
                    "a second {}; the first is job `{}` of {} line {}",
                    r.what(),
                    first.name,
                    first.file,
                    first.line
                ),
                "give each calibration job once",
            ));
        }
        let stats = if r.writes() { &job.write } else { &job.read };
        if stats.ios == 0 || stats.lat_mean <= 0.0 || stats.iops <= 0.0 {
            let dir = if r.writes() { "write" } else { "read" };
            return Err(job.error(
                &format!("{dir}.total_ios"),
                format!("the job completed no {dir}s"),
                "run the job again on the device and give its output",
            ));
        }
        by_role.push((r, job));
    }
    for r in required {
        if !by_role.iter().any(|(x, _)| x == r) {
            return Err(InputError {
                file: files.to_string(),
                line: None,
                field: None,
                message: format!("no {} among the jobs given", r.what()),
                hint: JOBS_HINT.to_string(),
            });
        }
    }
    by_role.sort_by_key(|(r, _)| Role::ALL.iter().position(|x| x == r));
    Ok(Jobs { by_role })
}

/// A flash device's fitted parameters (the NVMe model: `device.md` §3), in the form the fit
/// iterates on: the bottleneck's time for a 4 KiB request and for the sequential job's size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Flash {
    /// Fixed latency every request pays in parallel, ns.
    pub latency: f64,
    /// Bottleneck time of one 4 KiB request, ns.
    pub s4k: f64,
    /// Bottleneck time of one sequential request of `big` bytes, ns.
    pub s_big: f64,
    /// The sequential job's block size.
    pub big: f64,
}

impl Flash {
    /// The transfer rate, bytes per second: the slope of the bottleneck time in the size.
    pub fn rate(&self) -> f64 {
        let slope = (self.s_big - self.s4k) / (self.big - 4096.0);
        if slope > 0.0 {
            1e9 / slope
        } else {
            self.big * 1e9 / self.s_big
        }
    }

    /// The mean controller overhead, ns: the 4 KiB time less its transfer (never negative).
    pub fn overhead(&self) -> f64 {
        (self.s4k - 4096.0 * 1e9 / self.rate()).max(0.0)
    }
}

/// Whether the deep random job kept the device's bottleneck busy: its mean latency at least
/// 1.5 times the QD1 one (requests queued). If not, its IOPS only bound the bottleneck from
/// below, and the overhead fitted from it is an upper bound.
pub fn saturated(jobs: &Jobs) -> bool {
    match (jobs.stats(Role::RandDeep), jobs.stats(Role::RandQd1)) {
        (Some(d), Some(q)) => d.lat_mean >= 1.5 * q.lat_mean,
        _ => false,
    }
}

/// The closed-form first estimate of a flash device: the bottleneck's 4 KiB time is one over
/// the deep job's IOPS, its time for the sequential size that size over the sequential read's
/// bandwidth; the fixed latency is the QD1 mean latency less the 4 KiB bottleneck time.
pub fn flash(jobs: &Jobs) -> Flash {
    let q = jobs.stats(Role::RandQd1).cloned().unwrap_or_default();
    let d = jobs.stats(Role::RandDeep).cloned().unwrap_or_default();
    let s = jobs.stats(Role::SeqRead).cloned().unwrap_or_default();
    let big = jobs
        .get(Role::SeqRead)
        .and_then(|j| j.option("bs"))
        .and_then(fio_size)
        .unwrap_or(1 << 20) as f64;
    let s4k = 1e9 / d.iops.max(1e-9);
    let s_big = (big * 1e9 / s.bw.max(1e-9)).max(s4k * 1.000_001);
    Flash {
        latency: (q.lat_mean - s4k).max(0.0),
        s4k,
        s_big,
        big,
    }
}

/// A spinning disk's fitted parameters (the HDD model: seek `min + (full − min)·√(d/C)`, a
/// uniform rotation of one revolution, and the transfer), ns and bytes per second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spinning {
    /// Track-to-track seek (with any fixed per-request cost), ns.
    pub seek_min: f64,
    /// Full-stroke seek less `seek_min` over the random job's region, ns: `(full − min)·√(S/C)`.
    pub seek_span: f64,
    /// One revolution, ns.
    pub revolution: f64,
    /// Media rate, bytes per second.
    pub rate: f64,
}

/// P(√V ≤ z) for V = |U₁ − U₂| (two uniform positions): V has density 2(1 − v), so
/// P(V ≤ z²) = 1 − (1 − z²)².
fn sqrt_dist_cdf(z: f64) -> f64 {
    if z <= 0.0 {
        0.0
    } else if z >= 1.0 {
        1.0
    } else {
        let w = 1.0 - z * z;
        1.0 - w * w
    }
}

/// P(b·√V + r·U ≤ y), U uniform on [0, 1): the seek-and-rotation part of a random read
/// beyond `seek_min`, integrated over U by the midpoint rule on 256 points.
fn seek_rot_cdf(y: f64, b: f64, r: f64) -> f64 {
    const N: usize = 256;
    let sum: f64 = (0..N)
        .map(|k| {
            let u = (k as f64 + 0.5) / N as f64;
            if b <= 0.0 {
                f64::from(u8::from(r * u <= y))
            } else {
                sqrt_dist_cdf((y - r * u) / b)
            }
        })
        .sum();
    sum / N as f64
}

/// The `p`-quantile (0..1) of `b·√V + r·U`, by bisection.
fn seek_rot_quantile(p: f64, b: f64, r: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, b + r);
    for _ in 0..48 {
        let mid = 0.5 * (lo + hi);
        if seek_rot_cdf(mid, b, r) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The closed-form first estimate of a spinning disk. The rate is the sequential read's
/// bandwidth (a sequential request pays the transfer alone). Beyond `seek_min` and the
/// transfer, a random read costs `b·√V + r·U`, whose mean is `8b/15 + r/2` and whose variance
/// is `11b²/225 + r²/12` (E√V = 8/15, EV = 1/3). For each split ρ = b/(b + r) the variance
/// fixes the scale and the mean fixes `seek_min`; ρ is chosen by least squares on the QD1
/// job's completion-latency percentiles from 5 to 95 (relative errors), over a grid of 49
/// values refined by golden-section search. That revolution is then snapped to the nearest
/// standard spindle speed ([`SPINDLE_RPM`]), and with it fixed the variance gives `b` and the
/// mean `seek_min`.
pub fn spinning(jobs: &Jobs) -> Spinning {
    let q = jobs.stats(Role::RandQd1).cloned().unwrap_or_default();
    let s = jobs.stats(Role::SeqRead).cloned().unwrap_or_default();
    let rate = s.bw.max(1.0);
    let t4k = 4096.0 * 1e9 / rate;
    let mean = q.lat_mean - q.slat_mean - t4k;
    let var = q.clat_sd * q.clat_sd;
    let pct: Vec<(f64, f64)> = q
        .clat_pct
        .iter()
        .filter(|(p, _)| (5.0..=95.0).contains(p))
        .map(|&(p, v)| (p / 100.0, v - t4k))
        .collect();
    let split = |rho: f64| -> (f64, f64, f64) {
        let unit = (11.0 * rho * rho / 225.0 + (1.0 - rho) * (1.0 - rho) / 12.0).sqrt();
        let k = var.sqrt() / unit;
        let (b, r) = (rho * k, (1.0 - rho) * k);
        (mean - 8.0 * b / 15.0 - r / 2.0, b, r)
    };
    let cost = |rho: f64| -> f64 {
        let (a, b, r) = split(rho);
        pct.iter()
            .map(|&(p, v)| {
                let e = (a + seek_rot_quantile(p, b, r) - v) / v.abs().max(1.0);
                e * e
            })
            .sum()
    };
    let best = (1..50)
        .map(|i| i as f64 / 50.0)
        .min_by(|x, y| cost(*x).total_cmp(&cost(*y)))
        .unwrap_or(0.5);
    let rho = golden(
        &cost,
        (best - 0.02).max(1e-3),
        (best + 0.02).min(1.0 - 1e-3),
    );
    // The percentiles tell the split only loosely (fio's buckets are 1.6% wide), but drives
    // spin at a few standard speeds: the revolution is the nearest of them, and the variance
    // and the mean then give the seek span and seek_min in closed form.
    let r = spindle(split(rho).2);
    let b = ((var - r * r / 12.0).max(0.0) * 225.0 / 11.0).sqrt();
    let a = mean - 8.0 * b / 15.0 - r / 2.0;
    Spinning {
        seek_min: a.max(0.0),
        seek_span: b,
        revolution: r,
        rate,
    }
}

/// Spindle speeds of disk drives, rpm: 2.5" laptop drives (4200, 5400), "green" 3.5" drives
/// (5900), desktop (7200) and enterprise drives (10,000, 15,000).
pub const SPINDLE_RPM: [f64; 6] = [4200.0, 5400.0, 5900.0, 7200.0, 10000.0, 15000.0];

/// The revolution (ns) of the standard spindle speed nearest to a revolution of `rev` ns.
pub fn spindle(rev: f64) -> f64 {
    SPINDLE_RPM
        .iter()
        .map(|rpm| 60e9 / rpm)
        .min_by(|x, y| (x - rev).abs().total_cmp(&(y - rev).abs()))
        .unwrap_or(rev)
}

/// The minimum of `f` on `[lo, hi]` by golden-section search (40 steps).
fn golden(f: &dyn Fn(f64) -> f64, mut lo: f64, mut hi: f64) -> f64 {
    let g = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..40 {
        let (x1, x2) = (hi - g * (hi - lo), lo + g * (hi - lo));
        if f(x1) < f(x2) {
            hi = x2;
        } else {
            lo = x1;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seek_and_rotation_distribution_has_its_closed_form_moments() {
        // Mean 8b/15 + r/2 from the quantile function, integrated by the midpoint rule.
        let (b, r) = (12.0, 8.0);
        let n = 400;
        let mean: f64 = (0..n)
            .map(|i| seek_rot_quantile((i as f64 + 0.5) / n as f64, b, r))
            .sum::<f64>()
            / n as f64;
        let want = 8.0 * b / 15.0 + r / 2.0;
        assert!((mean - want).abs() / want < 0.01, "{mean} vs {want}");
        assert_eq!(seek_rot_cdf(-1.0, b, r), 0.0);
        assert!((seek_rot_cdf(b + r + 1.0, b, r) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn flash_rate_and_overhead_come_from_the_two_bottleneck_times() {
        // 4 KiB costs 10.204 us and 1 MiB 10.204 + (1 MiB − 4 KiB)/560 MB/s.
        let rate = 560e6;
        let s4k = 10_204.0;
        let big = 1048576.0;
        let f = Flash {
            latency: 66_720.0,
            s4k,
            s_big: s4k + (big - 4096.0) * 1e9 / rate,
            big,
        };
        assert!((f.rate() - rate).abs() / rate < 1e-9);
        assert!((f.overhead() - (s4k - 4096.0 * 1e9 / rate)).abs() < 1e-6);
    }
}
