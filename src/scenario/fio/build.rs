//! The jobs written as a scenario's `duration`, `warmup` and `workloads:`, validated by the
//! scenario loader, and put on the machine; an error the loader finds is moved to the job
//! file's line that set the value.

use super::{Job, Pattern, Reader};
use crate::engine::SimDuration;
use crate::model::base::config::KernelVersion;
use crate::scenario::units::format_bytes;
use crate::scenario::workload::{MAX_BIO_BYTES, MAX_REQUEST_BYTES};
use crate::scenario::{DeviceConfig, Error, ErrorKind, Scenario, WorkloadKind, load_str};
use std::path::Path;

/// The generated document: its lines, each with the job-file line and option it came from.
#[derive(Default)]
pub(super) struct Doc {
    text: String,
    origin: Vec<Option<(u64, String)>>,
}

impl Doc {
    pub(super) fn line(&mut self, text: String, origin: Option<(u64, String)>) {
        self.text.push_str(&text);
        self.text.push('\n');
        self.origin.push(origin);
    }
}

/// A YAML double-quoted string (job names are free text in fio).
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl Reader<'_> {
    /// The scenario: `base` with the jobs as its workloads and fio's run length.
    pub(super) fn scenario(
        &mut self,
        jobs: &[Job],
        base: Scenario,
        machine: &str,
    ) -> Result<Scenario, Error> {
        let mut doc = Doc::default();
        doc.line("device: { kind: nvme }".to_string(), None);
        // The jobs are checked against the machine's kernel (its largest bio: 512 KiB on 2.6.x,
        // 1 MiB after), the oldest of its variants' when they differ, since every variant runs
        // them.
        let oldest = base
            .variants
            .iter()
            .map(|v| v.scenario.kernel.version)
            .fold(base.kernel.version, Ord::min);
        doc.line(
            format!("kernel: {{ version: \"{}\" }}", oldest.name()),
            None,
        );
        self.within_the_kernel(jobs, oldest)?;
        self.run_length(jobs, &base, &mut doc)?;
        doc.line("workloads:".to_string(), None);
        let mut names: Vec<String> = Vec::new();
        for job in jobs {
            let mut name = job.name.clone();
            // fio allows two jobs of one name; qsim's report needs them apart.
            let mut k = 2;
            while names.contains(&name) {
                name = format!("{}.{k}", job.name);
                k += 1;
            }
            names.push(name.clone());
            self.workload(job, &name, &mut doc)?;
        }
        let parsed = load_str(self.name, &doc.text).map_err(|e| self.relocate(e, &doc))?;
        self.inside_the_disk(jobs, &parsed, &base)?;
        let mut sc = base;
        let file = Path::new(self.name)
            .file_name()
            .and_then(|f| f.to_str())
            .unwrap_or(self.name);
        sc.name = parsed.name.clone();
        sc.description = format!("fio job file {file} on the {machine} machine");
        put_jobs(&mut sc, &parsed);
        for v in &mut sc.variants {
            put_jobs(&mut v.scenario, &parsed);
        }
        Ok(sc)
    }

    /// `duration` and `warmup`: the longest startdelay + ramp_time + runtime, and the longest
    /// ramp_time; the machine's duration (a cap) when no job has a runtime.
    fn run_length(&mut self, jobs: &[Job], base: &Scenario, doc: &mut Doc) -> Result<(), Error> {
        let mut longest: Option<(SimDuration, u64)> = None;
        let mut ramp: (SimDuration, Option<&Job>) = (SimDuration::ZERO, None);
        for job in jobs {
            if job.ramp > ramp.0 {
                ramp = (job.ramp, Some(job));
            }
            if job.time_based && job.runtime.is_none() {
                self.warn(
                    job.line,
                    format!("[{}] time_based", job.name),
                    format!(
                        "time_based without runtime: the job runs until the machine's \
                         duration ({})",
                        base.duration
                    ),
                );
            }
            let Some(rt) = job.runtime else { continue };
            let end = SimDuration::from_ns(
                job.startdelay
                    .as_ns()
                    .saturating_add(job.ramp.as_ns())
                    .saturating_add(rt.as_ns()),
            );
            if let Some((other, _)) = longest
                && other != end
            {
                self.warn(
                    job.line,
                    format!("[{}] runtime", job.name),
                    "jobs end at different times: qsim has one run length, the longest \
                     startdelay + ramp_time + runtime, and every job runs until it (or its \
                     size is done)"
                        .to_string(),
                );
            }
            if longest.is_none_or(|(d, _)| end > d) {
                longest = Some((end, job.line));
            }
        }
        let (duration, line) = longest.map_or((base.duration, None), |(d, l)| (d, Some(l)));
        if let (Some(job), true) = (ramp.1, ramp.0 >= duration) {
            return Err(self.ramp_too_long(job, duration, line.is_some()));
        }
        doc.line(
            format!("duration: {}ns", duration.as_ns()),
            line.map(|l| (l, "runtime".to_string())),
        );
        doc.line(
            format!("warmup: {}ns", ramp.0.as_ns()),
            ramp.1.and_then(|j| Self::origin(j, "ramp_time")),
        );
        Ok(())
    }

    /// The error for a `ramp_time` as long as the run (`duration`: from the jobs' runtimes if
    /// `timed`, else the machine's), at the option's line.
    fn ramp_too_long(&self, job: &Job, duration: SimDuration, timed: bool) -> Error {
        let (line, path) = Self::origin(job, "ramp_time").unwrap_or((job.line, String::new()));
        let run = if timed {
            format!(
                "the run, which lasts {duration} (the longest startdelay + ramp_time + runtime)"
            )
        } else {
            format!(
                "the run: no job has a runtime, so it lasts the {} machine's duration, {duration}",
                self.machine
            )
        };
        self.error(
            ErrorKind::Conflict,
            line,
            None,
            Some(path),
            format!("ramp_time ({}) is not shorter than {run}", job.ramp),
            if timed {
                "shorten ramp_time, or lengthen the runtime: ramp_time is part of the run"
            } else {
                "give the job a runtime (the run is then startdelay + ramp_time + runtime), or \
                 shorten ramp_time"
            },
        )
    }

    /// Refuses a job whose block size is larger than the largest bio of `version`, the oldest
    /// kernel of the machine, naming the machine.
    fn within_the_kernel(&self, jobs: &[Job], version: KernelVersion) -> Result<(), Error> {
        let max = if version.is_modern() {
            MAX_BIO_BYTES
        } else {
            MAX_REQUEST_BYTES
        };
        for job in jobs.iter().filter(|j| j.engine != "cpuio") {
            let bs = if job.rw.reads() {
                job.bs.read
            } else {
                job.bs.write
            }
            .unwrap_or(4096);
            if bs <= max {
                continue;
            }
            let (line, path) = Self::origin(job, "bs").unwrap_or((job.line, String::new()));
            return Err(self.error(
                ErrorKind::BadValue,
                line,
                None,
                Some(path),
                format!(
                    "{} is larger than the largest request of the {} machine's kernel ({}): \
                     {}",
                    format_bytes(bs),
                    self.machine,
                    version.name(),
                    format_bytes(max)
                ),
                &format!(
                    "write bs={}k or less, or pick a machine whose kernel is after 2.6.x \
                     (1MiB bios), e.g. --machine nvme-desktop",
                    max / 1024
                ),
            ));
        }
        Ok(())
    }

    /// Where a workload field came from: the option that set it, else the job's header.
    pub(super) fn origin(job: &Job, field: &str) -> Option<(u64, String)> {
        Some(match job.at.get(field) {
            Some((line, key)) => (*line, format!("[{}] {key}", job.name)),
            None => (job.line, format!("[{}]", job.name)),
        })
    }

    /// One job as one entry of `workloads:`.
    fn workload(&mut self, job: &Job, name: &str, doc: &mut Doc) -> Result<(), Error> {
        let head = Self::origin(job, "");
        doc.line(format!("  - name: {}", quoted(name)), head.clone());
        if job.engine == "cpuio" {
            doc.line("    kind: cpuio".to_string(), head);
            self.cpuio_workload(job, doc);
            return Ok(());
        }
        if let Some(log) = &job.read_iolog {
            // fio replays the log instead of generating I/O: a closed-loop replay (fio's
            // iolog_delay() at the job's iodepth).
            doc.line("    kind: replay".to_string(), head);
            let origin = Self::origin(job, "read_iolog");
            doc.line(format!("    file: {}", quoted(log)), origin.clone());
            doc.line("    mode: closed".to_string(), origin);
            let depth = self.depth(job);
            doc.line(
                format!("    iodepth: {depth}"),
                Self::origin(job, "iodepth"),
            );
            return Ok(());
        }
        doc.line("    kind: fio".to_string(), head);
        let (rw, mixed) = self.pattern(job);
        doc.line(format!("    rw: {rw}"), Self::origin(job, "rw"));
        if mixed {
            doc.line(
                format!("    rwmixread: {}", job.rwmixread.unwrap_or(50)),
                Self::origin(job, "rwmixread"),
            );
        } else if let Some((line, key)) = job.at.get("rwmixread") {
            self.warn(
                *line,
                format!("[{}] {key}", job.name),
                "no effect unless rw is a mix (rw, randrw): ignored, as fio does".to_string(),
            );
        }
        let bs = self.block_size(job, mixed);
        doc.line(format!("    bs: {bs}"), Self::origin(job, "bs"));
        let size = self.region(job)?;
        doc.line(format!("    size: {size}"), Self::origin(job, "size"));
        self.amount(job, size, doc);
        if let Some(off) = job.offset {
            doc.line(format!("    offset: {off}"), Self::origin(job, "offset"));
        }
        let depth = self.depth(job);
        doc.line(
            format!("    iodepth: {depth}"),
            Self::origin(job, "iodepth"),
        );
        doc.line(
            format!("    numjobs: {}", job.numjobs),
            Self::origin(job, "numjobs"),
        );
        doc.line(
            format!("    direct: {}", job.direct),
            Self::origin(job, "direct"),
        );
        if job.sync {
            doc.line("    sync: true".to_string(), Self::origin(job, "sync"));
        }
        self.pace(job, bs, mixed, doc)?;
        self.startdelay_line(job, doc);
        Ok(())
    }

    /// qsim's pattern for fio's `rw`, and whether it mixes reads and writes.
    fn pattern(&mut self, job: &Job) -> (&'static str, bool) {
        match job.rw {
            Pattern::Read => ("read", false),
            Pattern::Write => ("write", false),
            Pattern::RandRead => ("randread", false),
            Pattern::RandWrite => ("randwrite", false),
            Pattern::RandRw => ("randrw", true),
            Pattern::SeqMix => {
                let line = job.at.get("rw").map_or(job.line, |a| a.0);
                self.warn(
                    line,
                    format!("[{}] rw", job.name),
                    "a sequential read/write mix is not modelled: runs as randrw (random \
                     offsets, same mix)"
                        .to_string(),
                );
                ("randrw", true)
            }
        }
    }

    /// The job's one block size: the read size for jobs that read, else the write size.
    fn block_size(&mut self, job: &Job, mixed: bool) -> u64 {
        let read = job.bs.read.unwrap_or(4096);
        let write = job.bs.write.unwrap_or(4096);
        if mixed && read != write {
            let line = job.at.get("bs").map_or(job.line, |a| a.0);
            self.warn(
                line,
                format!("[{}] bs", job.name),
                format!(
                    "separate read and write block sizes are not modelled: both use the read \
                     size, {read} bytes"
                ),
            );
        }
        if job.rw.reads() { read } else { write }
    }

    /// `size`, or 1 GiB when fio would use a named file's or device's size.
    fn region(&mut self, job: &Job) -> Result<u64, Error> {
        if let Some(s) = job.size {
            return Ok(s);
        }
        if !job.filename {
            return Err(self.error(
                ErrorKind::Missing,
                job.line,
                None,
                Some(format!("[{}]", job.name)),
                format!("job `{}` has no size", job.name),
                "add size=, e.g. size=1g (fio: \"you need to specify size=\")",
            ));
        }
        self.warn(
            job.line,
            format!("[{}] filename", job.name),
            "no size: fio would use the whole file or device; qsim uses 1GiB".to_string(),
        );
        Ok(1 << 30)
    }

    /// `io_size`: the job's bytes (fio's `size` once over unless told), none when
    /// `time_based`; and `number_ios`.
    fn amount(&mut self, job: &Job, size: u64, doc: &mut Doc) {
        if job.time_based {
            if let Some((line, key)) = job.at.get("io_size") {
                self.warn(
                    *line,
                    format!("[{}] {key}", job.name),
                    "time_based: the job runs until runtime, its io_size is not a limit"
                        .to_string(),
                );
            }
        } else {
            let io = job.io_size.unwrap_or(size);
            let from = if job.io_size.is_some() {
                "io_size"
            } else {
                "size"
            };
            doc.line(format!("    io_size: {io}"), Self::origin(job, from));
        }
        if let Some(n) = job.number_ios {
            doc.line(
                format!("    number_ios: {n}"),
                Self::origin(job, "number_ios"),
            );
        }
    }

    /// I/Os in flight: `iodepth` for an asynchronous engine, 1 for a synchronous one.
    fn depth(&mut self, job: &Job) -> u32 {
        // Linux completes a buffered io_submit before it returns (fio's HOWTO: buffered I/O is
        // not async with libaio; set direct=1): libaio without direct=1 is one at a time.
        let buffered_aio = job.engine == "libaio" && !job.direct;
        if !job.sync_engine() && !buffered_aio {
            return job.iodepth;
        }
        if buffered_aio && job.iodepth > 1 {
            let line = job.at.get("iodepth").map_or(job.line, |a| a.0);
            self.warn(
                line,
                format!("[{}] iodepth", job.name),
                format!(
                    "iodepth={} has no effect with ioengine=libaio and buffered I/O (Linux \
                     completes a buffered io_submit before it returns; fio asks for direct=1): \
                     depth 1",
                    job.iodepth
                ),
            );
            return 1;
        }
        if job.iodepth > 1
            && let Some((line, key)) = job.at.get("iodepth")
        {
            self.warn(
                *line,
                format!("[{}] {key}", job.name),
                format!(
                    "iodepth={} has no effect with ioengine={} (synchronous: one I/O at a \
                     time, as in fio)",
                    job.iodepth, job.engine
                ),
            );
        }
        1
    }

    /// `rate` (open loop, fio's even gaps unless `rate_process=poisson`) or `think`.
    fn pace(&mut self, job: &Job, bs: u64, mixed: bool, doc: &mut Doc) -> Result<(), Error> {
        let pick = |d: &super::PerDir<u64>| {
            if job.rw.reads() {
                d.read.or(if mixed { d.write } else { None })
            } else {
                d.write
            }
        };
        let iops = pick(&job.rate_iops).filter(|&v| v > 0);
        let bw = pick(&job.rate_bw).filter(|&v| v > 0);
        let ops = match (iops, bw) {
            (Some(i), _) => Some(i as f64),
            (None, Some(b)) => Some(b as f64 / bs as f64),
            (None, None) => None,
        };
        let Some(ops) = ops else {
            Self::thinktime_lines(job, doc);
            return Ok(());
        };
        if let Some((line, key)) = job.at.get("thinktime").filter(|_| job.think.is_some()) {
            return Err(self.error(
                ErrorKind::Conflict,
                *line,
                None,
                Some(format!("[{}] {key}", job.name)),
                "thinktime with a rate limit is not modelled: a rate makes the job open-loop, \
                 where no I/O waits for another"
                    .to_string(),
                "keep rate/rate_iops (paced arrivals) or thinktime (a pause after each I/O), \
                 not both",
            ));
        }
        if mixed || (iops.is_some() && bw.is_some()) {
            let line = job.at.get("rate").map_or(job.line, |a| a.0);
            self.warn(
                line,
                format!("[{}] rate", job.name),
                format!(
                    "qsim paces the job's I/Os as one stream at {} IOPS (fio paces reads and \
                     writes separately, and rate_iops over rate)",
                    crate::scenario::units::trim_float(ops, 3)
                ),
            );
        }
        doc.line(format!("    rate: {ops}/s"), Self::origin(job, "rate"));
        let arrivals = if job.poisson { "poisson" } else { "constant" };
        doc.line(
            format!("    arrivals: {arrivals}"),
            Self::origin(job, "rate"),
        );
        Ok(())
    }

    /// Refuses a job whose region runs past the end of the machine's disk (an HDD has a
    /// capacity; the generated document's device has none).
    fn inside_the_disk(
        &self,
        jobs: &[Job],
        parsed: &Scenario,
        base: &Scenario,
    ) -> Result<(), Error> {
        let DeviceConfig::Hdd(h) = &base.device else {
            return Ok(());
        };
        for (job, w) in jobs.iter().zip(&parsed.workloads) {
            let WorkloadKind::Fio(f) = &w.kind else {
                continue;
            };
            let end = f.offset.saturating_add(f.size);
            if end > h.capacity {
                let (line, path) = Self::origin(job, "size").unwrap_or((job.line, String::new()));
                return Err(self.error(
                    ErrorKind::Conflict,
                    line,
                    None,
                    Some(path),
                    format!(
                        "the job's region ends at {} bytes, past the end of the machine's disk \
                         ({} bytes)",
                        end, h.capacity
                    ),
                    "shrink size (or offset), or pick a machine with a larger disk",
                ));
            }
        }
        Ok(())
    }

    /// An error of the generated document, moved to the job file's line that set the value.
    fn relocate(&self, mut e: Error, doc: &Doc) -> Error {
        let Some(line) = e.line() else {
            return e;
        };
        if e.file() != self.name {
            // An error in another file (a `read_iolog` trace) keeps its own place.
            return e;
        }
        let Some(Some((at, path))) = doc.origin.get(line as usize - 1) else {
            return e;
        };
        let src = self.source_line(*at).map(str::to_string);
        e.0.file = self.name.to_string();
        e.0.line = Some(*at);
        e.0.column = None;
        e.0.caret = None;
        e.0.path = Some(path.clone());
        e.0.source_line = src.map(|s| crate::scenario::shorten_to(&s, 160));
        e
    }
}

/// A scenario's (or variant's) workloads and run length from the validated jobs.
fn put_jobs(sc: &mut Scenario, parsed: &Scenario) {
    sc.workloads = parsed.workloads.clone();
    sc.duration = parsed.duration;
    sc.warmup = parsed.warmup;
}
