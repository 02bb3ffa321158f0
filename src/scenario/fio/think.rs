//! fio's think-time options (`thinktime_blocks`, `thinktime_blocks_type`, `thinktime_spin`),
//! `startdelay` ranges, and the `cpuio` engine's options (`cpuload`, `cpuchunks`, `cpumode`,
//! `exit_on_io_done`, from `fio --enghelp=cpuio`), applied to a job; and a `cpuio` job written
//! as a `kind: cpuio` workload.

use super::{Job, Opt, Reader};
use crate::engine::SimDuration;
use crate::scenario::{Error, ErrorKind};

/// What a bare number counts in fio's `thinktime` and `thinktime_spin`, in nanoseconds.
const MICROSECOND: u64 = 1_000;
/// What a bare number counts in fio's `startdelay`, in nanoseconds.
const SECOND: u64 = 1_000_000_000;

impl Reader<'_> {
    /// Applies a think-time, start or `cpuio` option; any other option goes on to
    /// [`Reader::other`] (a warning, or fio's "Bad option").
    pub(super) fn apply_app(&mut self, job: &mut Job, o: &Opt, kb: u64) -> Result<(), Error> {
        let name = job.name.clone();
        let n = name.as_str();
        let set = |field: &'static str, job: &mut Job| {
            job.at.insert(field, (o.line, o.key.clone()));
        };
        match o.key.as_str() {
            "thinktime_blocks" => {
                job.think_blocks = Some(self.int(n, o, kb, 0, u64::from(u32::MAX))?);
                set("thinktime_blocks", job);
            }
            "thinktime_blocks_type" => {
                job.think_on_issue = Some(self.blocks_type(n, o)?);
                set("thinktime_blocks_type", job);
            }
            "thinktime_spin" => {
                job.think_spin = Some(self.time(n, o, MICROSECOND)?);
                set("thinktime_spin", job);
            }
            "startdelay" => {
                (job.startdelay, job.startdelay_high) = self.delay_range(n, o)?;
                set("startdelay", job);
            }
            "cpuload" => {
                job.cpuload = Some(self.int(n, o, kb, 0, u64::MAX)?);
                set("cpuload", job);
            }
            "cpuchunks" => {
                job.cpuchunks = Some(self.int(n, o, kb, 0, u64::MAX)?);
                set("cpuchunks", job);
            }
            "cpumode" => self.cpumode(n, o)?,
            "read_iolog" => {
                job.read_iolog = Some(super::value_of(o).to_string());
                set("read_iolog", job);
            }
            // qsim's run ends with the I/O jobs (or at runtime): the cpuio jobs stop with it.
            "exit_on_io_done" => {
                self.flag(n, o)?;
            }
            _ => self.other(n, o)?,
        }
        Ok(())
    }

    /// `thinktime_blocks_type=`: `complete` (fio's default) or `issue`.
    fn blocks_type(&self, job: &str, o: &Opt) -> Result<bool, Error> {
        match o.value.as_deref() {
            Some("complete") => Ok(false),
            Some("issue") => Ok(true),
            _ => Err(self.bad(
                job,
                o,
                ErrorKind::BadValue,
                format!("expected complete or issue, got {:?}", super::value_of(o)),
                "complete (fio's default): pause after thinktime_blocks I/Os completed; issue: \
                 after that many issued",
            )),
        }
    }

    /// `startdelay=`: a time (seconds without a unit), or a range `low-high` (`low:high`).
    fn delay_range(&self, job: &str, o: &Opt) -> Result<(SimDuration, Option<SimDuration>), Error> {
        let v = super::value_of(o);
        let Some(i) = v.find(['-', ':']) else {
            return Ok((self.time(job, o, SECOND)?, None));
        };
        let part = |s: &str| Opt {
            value: Some(s.trim().to_string()),
            ..o.clone()
        };
        let low = self.time(job, &part(&v[..i]), SECOND)?;
        let high = self.time(job, &part(&v[i + 1..]), SECOND)?;
        if high < low {
            return Err(self.bad(
                job,
                o,
                ErrorKind::BadValue,
                format!("the range {v:?} ends before it starts"),
                "write startdelay=low-high with low ≤ high, e.g. startdelay=0-2",
            ));
        }
        Ok((low, (high > low).then_some(high)))
    }

    /// `cpumode=`: `noop` (fio's default) as modelled; `qsort` warned (run as noop).
    fn cpumode(&mut self, job: &str, o: &Opt) -> Result<(), Error> {
        match o.value.as_deref() {
            Some("noop") => Ok(()),
            Some("qsort") => {
                self.warn(
                    o.line,
                    super::label(job, o),
                    "qsort's self-timed chunks are not modelled: runs as noop (cpuchunks of \
                     CPU per cycle)"
                        .to_string(),
                );
                Ok(())
            }
            _ => Err(self.bad(
                job,
                o,
                ErrorKind::BadValue,
                format!("expected noop or qsort, got {:?}", super::value_of(o)),
                "cpumode=noop (fio's default) burns the CPU in a loop",
            )),
        }
    }

    /// Warns about think-time options without `thinktime` (fio ignores them) and about
    /// `cpuio` options on another engine (fio refuses them); clamps `cpuload` above 100 as
    /// fio does.
    pub(super) fn check_app_options(&mut self, job: &mut Job) -> Result<(), Error> {
        if job.think.is_none() {
            for key in [
                "thinktime_blocks",
                "thinktime_blocks_type",
                "thinktime_spin",
            ] {
                if let Some((line, k)) = job.at.get(key) {
                    self.warn(
                        *line,
                        format!("[{}] {k}", job.name),
                        "no effect without thinktime: ignored, as fio does".to_string(),
                    );
                }
            }
        }
        let cpuio = job.engine == "cpuio";
        for key in ["cpuload", "cpuchunks"] {
            if let Some((line, k)) = job.at.get(key).filter(|_| !cpuio) {
                return Err(self.error(
                    ErrorKind::UnknownField,
                    *line,
                    None,
                    Some(format!("[{}] {k}", job.name)),
                    format!(
                        "`{k}` is an option of ioengine=cpuio, and this job's engine is {}",
                        job.engine
                    ),
                    "add ioengine=cpuio (a job that only burns CPU), or remove it (fio: \"Bad \
                     option\")",
                ));
            }
        }
        if let Some(load) = job.cpuload.filter(|&l| l > 100)
            && let Some((line, k)) = job.at.get("cpuload")
        {
            self.warn(
                *line,
                format!("[{}] {k}", job.name),
                format!("cpuload={load} is over 100: 100, as fio clamps it"),
            );
            job.cpuload = Some(100);
        }
        Ok(())
    }

    /// A `cpuio` job as a `kind: cpuio` workload.
    pub(super) fn cpuio_workload(&mut self, job: &Job, doc: &mut super::build::Doc) {
        let origin = |f: &str| Self::origin(job, f);
        if let Some(load) = job.cpuload {
            doc.line(format!("    cpuload: {load}"), origin("cpuload"));
        }
        if let Some(us) = job.cpuchunks {
            doc.line(format!("    cpuchunks: {us}"), origin("cpuchunks"));
        }
        doc.line(format!("    numjobs: {}", job.numjobs), origin("numjobs"));
        self.startdelay_line(job, doc);
    }

    /// The job's `startdelay` line (none for 0).
    pub(super) fn startdelay_line(&self, job: &Job, doc: &mut super::build::Doc) {
        let origin = Self::origin(job, "startdelay");
        match job.startdelay_high {
            Some(h) => doc.line(
                format!(
                    "    startdelay: {}ns-{}ns",
                    job.startdelay.as_ns(),
                    h.as_ns()
                ),
                origin,
            ),
            None if job.startdelay.as_ns() > 0 => doc.line(
                format!("    startdelay: {}ns", job.startdelay.as_ns()),
                origin,
            ),
            None => {}
        }
    }

    /// The thinktime lines of an I/O job (nothing without `thinktime`).
    pub(super) fn thinktime_lines(job: &Job, doc: &mut super::build::Doc) {
        let Some(t) = job.think else { return };
        let origin = |f: &str| Self::origin(job, f);
        doc.line(
            format!("    thinktime: {}ns", t.as_ns()),
            origin("thinktime"),
        );
        if let Some(b) = job.think_blocks {
            doc.line(
                format!("    thinktime_blocks: {b}"),
                origin("thinktime_blocks"),
            );
        }
        if let Some(issue) = job.think_on_issue {
            let t = if issue { "issue" } else { "complete" };
            doc.line(
                format!("    thinktime_blocks_type: {t}"),
                origin("thinktime_blocks_type"),
            );
        }
        if let Some(s) = job.think_spin {
            doc.line(
                format!("    thinktime_spin: {}ns", s.as_ns()),
                origin("thinktime_spin"),
            );
        }
    }
}
