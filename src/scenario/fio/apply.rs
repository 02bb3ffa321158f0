//! One option of a job applied to the job as fio would: the options qsim maps, the harmless
//! ones, the ones fio knows and qsim does not model (a warning), and the ones fio refuses.

use super::options::FIO_OPTIONS;
use super::{HARMLESS, Job, KNOWN_ENGINES, Opt, Pattern, PerDir, Reader};
use crate::scenario::{Error, ErrorKind, suggestion};

/// What a bare number counts in fio's time options, in nanoseconds.
const SECOND: u64 = 1_000_000_000;
const MICROSECOND: u64 = 1_000;

impl Reader<'_> {
    /// Applies `o` to `job` (`kb`: the job's kb_base); later options override earlier ones.
    pub(super) fn apply(&mut self, job: &mut Job, o: &Opt, kb: u64) -> Result<(), Error> {
        let name = job.name.clone();
        let n = name.as_str();
        let set = |field: &'static str, job: &mut Job| {
            job.at.insert(field, (o.line, o.key.clone()));
        };
        match o.key.as_str() {
            "rw" | "readwrite" => {
                job.rw = self.rw(n, o)?;
                set("rw", job);
            }
            "rwmixread" | "rwmixwrite" => {
                let v = self.int(n, o, kb, 0, 100)? as u32;
                job.rwmixread = Some(if o.key == "rwmixread" { v } else { 100 - v });
                set("rwmixread", job);
            }
            "bs" | "blocksize" => {
                job.bs = self.per_dir(n, o, kb)?;
                self.whole_sectors(n, o, job.bs, kb)?;
                set("bs", job);
            }
            "size" => {
                job.size = Some(self.size_opt(n, o, kb)?);
                set("size", job);
            }
            "io_size" | "io_limit" => {
                job.io_size = Some(self.size_opt(n, o, kb)?);
                set("io_size", job);
            }
            "number_ios" => {
                job.number_ios = Some(self.int(n, o, kb, 0, u64::MAX)?).filter(|&v| v > 0);
                set("number_ios", job);
            }
            "offset" => {
                job.offset = Some(self.size_opt(n, o, kb)?);
                set("offset", job);
            }
            _ => self.apply_flow(job, o, kb)?,
        }
        Ok(())
    }

    /// The options of time, depth, submission and pacing (and the rest: [`Self::other`]).
    fn apply_flow(&mut self, job: &mut Job, o: &Opt, kb: u64) -> Result<(), Error> {
        let name = job.name.clone();
        let n = name.as_str();
        let set = |field: &'static str, job: &mut Job| {
            job.at.insert(field, (o.line, o.key.clone()));
        };
        match o.key.as_str() {
            // fio reads runtime=0 as no limit: the job runs until its size is done (or, with
            // time_based, until the run ends).
            "runtime" | "timeout" => {
                job.runtime = Some(self.time(n, o, SECOND)?).filter(|t| t.as_ns() > 0);
                set("runtime", job);
            }
            "ramp_time" => {
                job.ramp = self.time(n, o, SECOND)?;
                set("ramp_time", job);
            }
            "time_based" => job.time_based = o.value.as_deref() != Some("0"),
            "iodepth" => {
                job.iodepth = self.int(n, o, kb, 1, 65_536)? as u32;
                set("iodepth", job);
            }
            "numjobs" => {
                job.numjobs = self.int(n, o, kb, 1, 1024)? as u32;
                set("numjobs", job);
            }
            "direct" => {
                job.direct = self.flag(n, o)?;
                set("direct", job);
            }
            "buffered" => {
                job.direct = !self.flag(n, o)?;
                set("direct", job);
            }
            "sync" => {
                job.sync = self.sync(n, o)?;
                set("sync", job);
            }
            "ioengine" => {
                job.engine = self.engine(n, o)?;
            }
            "rate_iops" => {
                job.rate_iops = self.per_dir(n, o, kb)?;
                set("rate", job);
            }
            "rate" => {
                job.rate_bw = self.per_dir(n, o, kb)?;
                set("rate", job);
            }
            "rate_process" => job.poisson = self.rate_process(n, o)?,
            "thinktime" => {
                job.think = Some(self.time(n, o, MICROSECOND)?).filter(|t| t.as_ns() > 0);
                set("thinktime", job);
            }
            "name" => job.name = self.text_value(n, o)?,
            "filename" => job.filename = true,
            "log_hist_msec"
            | "log_hist_coarseness"
            | "write_hist_log"
            | "log_avg_msec"
            | "log_offset"
            | "write_bw_log"
            | "write_iops_log"
            | "write_lat_log" => {
                self.log_option(n, o, kb)?;
            }
            key if HARMLESS.contains(&key) => {}
            _ => self.apply_app(job, o, kb)?,
        }
        Ok(())
    }

    /// fio's log options, written with `qsim run --fio-dir` (the scenario keeps each value as
    /// written; checked here so a bad one is refused at its line). The `write_*_log` values,
    /// fio's file-name prefixes, are not used: the files take fio-plot's names.
    fn log_option(&self, job: &str, o: &Opt, kb: u64) -> Result<(), Error> {
        match o.key.as_str() {
            "log_hist_msec" | "log_avg_msec" => {
                self.int(job, o, kb, 0, 86_400_000)?;
            }
            "log_hist_coarseness" => {
                self.int(job, o, kb, 0, 6)?;
            }
            // fio reads a bare boolean option as 1.
            "log_offset" if o.value.is_some() => {
                self.flag(job, o)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// An option outside the mapped ones: a warning if fio knows it, an error if not.
    pub(super) fn other(&mut self, job: &str, o: &Opt) -> Result<(), Error> {
        if FIO_OPTIONS.binary_search(&o.key.as_str()).is_ok() {
            self.warn(
                o.line,
                super::label(job, o),
                "fio option not modelled by qsim: ignored".to_string(),
            );
            return Ok(());
        }
        let hint = match suggestion(&o.key, FIO_OPTIONS) {
            Some(s) => format!("did you mean `{s}`? (fio: \"Bad option\")"),
            None => "check the option's name in fio's HOWTO (fio: \"Bad option\")".to_string(),
        };
        Err(self.bad(
            job,
            o,
            ErrorKind::UnknownField,
            format!("fio has no option `{}`", o.key),
            &hint,
        ))
    }

    /// Refuses a block size that is not whole 512-byte sectors, saying what fio read it as.
    fn whole_sectors(&self, job: &str, o: &Opt, bs: PerDir<u64>, kb: u64) -> Result<(), Error> {
        for v in [bs.read, bs.write].into_iter().flatten() {
            if v == 0 || v % 512 != 0 {
                return Err(self.bad(
                    job,
                    o,
                    ErrorKind::BadValue,
                    format!(
                        "{:?} is {v} bytes under kb_base={kb}: not a whole number of 512-byte \
                         sectors",
                        super::value_of(o)
                    ),
                    if kb == 1000 {
                        "under kb_base=1000, k means 1000: write 4KiB (4096), or drop kb_base"
                    } else {
                        "under fio's default kb_base=1024, KiB means 1000: write 4k (4096)"
                    },
                ));
            }
        }
        Ok(())
    }

    /// A non-empty text value.
    fn text_value(&self, job: &str, o: &Opt) -> Result<String, Error> {
        match o.value.as_deref() {
            Some(v) if !v.is_empty() => Ok(v.to_string()),
            _ => Err(self.bad(
                job,
                o,
                ErrorKind::BadValue,
                format!("`{}` needs a value", o.key),
                "e.g. name=reader",
            )),
        }
    }

    /// `rw=`: a pattern, with an optional `:N` offset modifier (warned, not modelled).
    fn rw(&mut self, job: &str, o: &Opt) -> Result<Pattern, Error> {
        let v = o.value.as_deref().unwrap_or("");
        let (pattern, modifier) = match v.split_once(':') {
            Some((p, m)) => (p.trim(), Some(m)),
            None => (v, None),
        };
        let rw = match pattern {
            "read" => Pattern::Read,
            "write" => Pattern::Write,
            "randread" => Pattern::RandRead,
            "randwrite" => Pattern::RandWrite,
            "rw" | "readwrite" => Pattern::SeqMix,
            "randrw" => Pattern::RandRw,
            "trim" | "randtrim" | "trimwrite" | "randtrimwrite" => {
                return Err(self.bad(
                    job,
                    o,
                    ErrorKind::BadValue,
                    format!("rw={pattern}: qsim does not model trims (discards)"),
                    "use read, write, randread, randwrite, rw or randrw",
                ));
            }
            _ => {
                return Err(self.bad(
                    job,
                    o,
                    ErrorKind::UnknownName,
                    format!("unknown rw pattern {v:?}"),
                    "fio's patterns: read, write, randread, randwrite, rw (readwrite), randrw \
                     (and trims, which qsim does not model)",
                ));
            }
        };
        if modifier.is_some() {
            self.warn(
                o.line,
                super::label(job, o),
                format!(
                    "the offset modifier `:{}` is not modelled: ignored",
                    modifier.unwrap_or("")
                ),
            );
        }
        Ok(rw)
    }

    /// `sync=`: 0/1, or fio's names `none`, `sync`, `dsync`.
    fn sync(&self, job: &str, o: &Opt) -> Result<bool, Error> {
        match o.value.as_deref() {
            Some("0" | "none") => Ok(false),
            Some("1" | "sync" | "dsync") => Ok(true),
            _ => Err(self.bad(
                job,
                o,
                ErrorKind::BadValue,
                format!(
                    "expected 0, 1, none, sync or dsync, got {:?}",
                    super::value_of(o)
                ),
                "sync=1 opens the file O_SYNC: writes carry REQ_SYNC",
            )),
        }
    }

    /// `ioengine=`: a known engine, or another fio engine taken as synchronous (warned).
    fn engine(&mut self, job: &str, o: &Opt) -> Result<String, Error> {
        let v = self.text_value(job, o)?;
        if !KNOWN_ENGINES.contains(&v.as_str()) {
            self.warn(
                o.line,
                super::label(job, o),
                format!(
                    "engine `{v}` is not modelled: qsim submits as a synchronous engine does \
                     (one I/O at a time)"
                ),
            );
        }
        Ok(v)
    }

    /// `rate_process=`: fio's `linear` (even gaps, the default) or `poisson`.
    fn rate_process(&self, job: &str, o: &Opt) -> Result<bool, Error> {
        match o.value.as_deref() {
            Some("linear") => Ok(false),
            Some("poisson") => Ok(true),
            _ => Err(self.bad(
                job,
                o,
                ErrorKind::BadValue,
                format!("expected linear or poisson, got {:?}", super::value_of(o)),
                "linear: even gaps (fio's default); poisson: exponential gaps",
            )),
        }
    }
}
