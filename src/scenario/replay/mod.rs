//! `kind: replay`: trace files read, checked and streamed (docs/replay.md).
//!
//! This module owns everything about trace files: finding the files a path names and their
//! format ([`resolve`]: binary blktrace by magic or `NAME.blktrace.N` name, fio iolog by its
//! version line, blkparse text by its first event line), the readers of each format
//! (`blkparse`, `blktrace`, `iolog`), the load-time check that reads a whole trace once,
//! streaming, so that a bad record is refused with its file, line (or byte offset) and field
//! before anything is simulated ([`check`]), and the [`TraceOpen`] handle the model pulls its
//! I/Os from ([`FileTrace`]). The model sees only [`TraceIo`]s.
//!
//! The workload's fields and its `qsim check` rows are in the submodule `workload`.

pub mod blkparse;
pub mod blktrace;
pub mod iolog;
pub mod workload;

use crate::model::base::replay::{TraceIo, TraceOpen, TraceStream, TraceSummary};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Most devices a trace may hold queue events of.
pub const MAX_DEVICES: usize = 256;
/// Most processes a trace's device may have (each is a copy of the job in closed mode, and a
/// row of the check).
pub const MAX_PROCESSES: usize = 1024;
/// Most per-CPU files of one blktrace capture.
pub const MAX_CPU_FILES: usize = 1024;

/// What an event does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// A read.
    Read,
    /// A write.
    Write,
    /// Counted, not replayed: a discard, a flush without data, a sync.
    Skip,
}

/// One queue event as a reader gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// The trace's own time, ns.
    pub time_ns: u64,
    /// `(major, minor)`, for formats that name devices.
    pub dev: Option<(u32, u32)>,
    /// The submitting process.
    pub pid: u32,
    /// Read, write or skipped.
    pub op: Op,
    /// Byte offset on the device.
    pub offset: u64,
    /// Bytes.
    pub bytes: u64,
    /// Marked synchronous.
    pub sync: bool,
    /// Marked meta, FUA or readahead.
    pub flagged: bool,
}

/// A located problem in a trace file (boxed: one pointer in every `Result`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError(pub Box<TraceFault>);

impl std::ops::Deref for TraceError {
    type Target = TraceFault;
    fn deref(&self) -> &TraceFault {
        &self.0
    }
}

/// What a [`TraceError`] says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceFault {
    /// The file.
    pub file: String,
    /// 1-based line (text formats).
    pub line: Option<u64>,
    /// Byte offset of the record (binary format).
    pub byte: Option<u64>,
    /// The field at fault.
    pub field: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

impl TraceError {
    fn new(f: TraceFault) -> Self {
        TraceError(Box::new(f))
    }

    /// A problem at line `line` of a text file.
    pub fn at_line(file: &str, line: u64, field: &str, message: String, hint: &str) -> Self {
        Self::new(TraceFault {
            file: file.to_string(),
            line: Some(line),
            byte: None,
            field: field.to_string(),
            message,
            hint: hint.to_string(),
        })
    }

    /// A problem in the record at byte `byte` of a binary file.
    pub fn at_byte(file: &str, byte: u64, field: &str, message: String, hint: &str) -> Self {
        Self::new(TraceFault {
            file: file.to_string(),
            line: None,
            byte: Some(byte),
            field: field.to_string(),
            message: format!("{message} (record at byte {byte})"),
            hint: hint.to_string(),
        })
    }

    /// A problem with the whole file.
    pub fn whole(file: &str, message: String, hint: &str) -> Self {
        Self::new(TraceFault {
            file: file.to_string(),
            line: None,
            byte: None,
            field: String::new(),
            message,
            hint: hint.to_string(),
        })
    }

    /// A read error.
    pub fn io(file: &str, e: &std::io::Error) -> Self {
        TraceError::whole(
            file,
            format!("cannot read the trace: {e}"),
            "check the path and the file's permissions",
        )
    }

    /// As the scenario loader's error: file, line, field, message, hint.
    pub fn into_error(self) -> super::Error {
        let f = *self.0;
        let mut e = super::Error::whole_file(
            super::ErrorKind::BadValue,
            &f.file,
            f.message,
            Some(f.hint).filter(|h| !h.is_empty()),
        );
        e.0.line = f.line;
        e.0.path = Some(f.field).filter(|f| !f.is_empty());
        e
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        write!(f, ": {}: {}", self.field, self.message)
    }
}

/// A reader of one trace format: events in the trace's order.
pub trait Reader: Send + fmt::Debug {
    /// The next event, or `None` at the end.
    fn next_event(&mut self) -> Result<Option<Event>, TraceError>;
    /// The name of process `pid` as far as the trace has told (empty when it has not).
    fn name_of(&self, pid: u32) -> String;
    /// Where the last event was (`file:line`, `file byte N`), for errors found above the
    /// reader.
    fn place(&self) -> String;
}

/// RWBS as blktrace writes it (`blk_fill_rwbs`): an optional `F` (preflush), one of `R`, `W`,
/// `D` (with `E`: secure erase) or `N`, then any of `F` (FUA), `A` (readahead), `S` (sync), `M`
/// (meta).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rwbs {
    /// What the event does.
    pub op: Op,
    /// `S`.
    pub sync: bool,
    /// `F` after the direction, `A` or `M`.
    pub flagged: bool,
}

/// Parses RWBS text.
pub fn rwbs(s: &str) -> Result<Rwbs, String> {
    let b = s.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'F'));
    let op = match b.get(i) {
        Some(b'R') => Op::Read,
        Some(b'W') => Op::Write,
        Some(b'D') => Op::Skip,
        Some(b'N') => Op::Skip,
        _ => return Err(format!("`{}` has no direction (R, W, D or N)", shorten(s))),
    };
    i += 1;
    if op == Op::Skip && b.get(i) == Some(&b'E') {
        i += 1;
    }
    let (mut sync, mut flagged) = (false, false);
    for &c in &b[i..] {
        match c {
            b'S' => sync = true,
            b'F' | b'A' | b'M' => flagged = true,
            _ => {
                return Err(format!(
                    "`{}` holds the unknown flag `{}`",
                    shorten(s),
                    c as char
                ));
            }
        }
    }
    Ok(Rwbs { op, sync, flagged })
}

/// `s` cut to 40 characters for a message.
pub(crate) fn shorten(s: &str) -> String {
    super::shorten_to(s, 40)
}

/// The longest line a text trace may have, in bytes: blkparse's default format writes short
/// lines, and fio reads iolog lines of up to 4096 bytes.
pub(crate) const MAX_LINE: u64 = 4096;

/// One line of text trace `file` read into `buf` (cleared first, its end kept) and counted in
/// `line`, reading at most [`MAX_LINE`] + 1 bytes: `Ok(false)` at the end of the file; a longer
/// line is refused at its line number with `hint`.
pub(crate) fn read_capped_line<R: std::io::BufRead>(
    input: &mut R,
    buf: &mut Vec<u8>,
    file: &str,
    line: &mut u64,
    hint: &str,
) -> Result<bool, TraceError> {
    buf.clear();
    let n = std::io::BufRead::read_until(&mut std::io::Read::take(input, MAX_LINE + 1), b'\n', buf)
        .map_err(|e| TraceError::io(file, &e))?;
    if n == 0 {
        return Ok(false);
    }
    *line += 1;
    if buf.len() as u64 > MAX_LINE {
        let message = format!("the line is longer than {MAX_LINE} bytes");
        return Err(TraceError::at_line(file, *line, "line", message, hint));
    }
    Ok(true)
}

/// Opens a trace file for reading.
pub(crate) fn open_file(p: &Path) -> Result<std::fs::File, TraceError> {
    super::open_with_deadline(p).map_err(|e| TraceError::io(&p.display().to_string(), &e))
}

/// A trace's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// blkparse's default text output.
    Blkparse,
    /// Binary blktrace, one file per CPU.
    Blktrace,
    /// fio's iolog v2 or v3.
    Iolog,
}

/// The files a trace path names and their format: `NAME.blktrace.N`, or a `NAME` with
/// `NAME.0` or `NAME.blktrace.0` beside it, is a blktrace capture (every `NAME.<number>`), else the content decides
/// (blktrace's magic, an iolog's version line, a blkparse event line).
pub fn resolve(path: &Path) -> Result<(Format, Vec<PathBuf>), TraceError> {
    let shown = path.display().to_string();
    let base = match numbered_base(path) {
        Some(b) if path.is_file() => Some(b),
        _ if !path.exists() && Path::new(&format!("{shown}.0")).is_file() => Some(path.into()),
        // `blkparse -i NAME` reads NAME.blktrace.N.
        _ if !path.exists() && Path::new(&format!("{shown}.blktrace.0")).is_file() => {
            Some(format!("{shown}.blktrace").into())
        }
        _ => None,
    };
    if let Some(base) = base {
        return Ok((Format::Blktrace, cpu_files(&base)?));
    }
    if path.is_dir() {
        return Err(TraceError::whole(
            &shown,
            "the trace path is a folder".into(),
            "give a trace file, or a capture's NAME (for NAME.blktrace.N files)",
        ));
    }
    let mut head = [0u8; 256];
    let n = read_head(path, &mut head)?;
    let head = &head[..n];
    if blktrace::looks_like(head) {
        return Ok((Format::Blktrace, vec![path.into()]));
    }
    let text = String::from_utf8_lossy(head);
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if iolog::looks_like(first) {
        return Ok((Format::Iolog, vec![path.into()]));
    }
    if blkparse::looks_like(first) {
        return Ok((Format::Blkparse, vec![path.into()]));
    }
    Err(TraceError::at_line(
        &shown,
        1,
        "format",
        "the file is not a trace qsim reads".into(),
        "give blkparse's text output (its default format), blktrace's binary NAME.blktrace.N \
         files, or a fio iolog (version 2 or 3)",
    ))
}

/// The start of a file (up to `buf`'s size).
fn read_head(path: &Path, buf: &mut [u8]) -> Result<usize, TraceError> {
    use std::io::Read;
    let mut f = open_file(path)?;
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) => return Err(TraceError::io(&path.display().to_string(), &e)),
        }
    }
    Ok(n)
}

/// `NAME` of a path `NAME.blktrace.N`.
fn numbered_base(path: &Path) -> Option<PathBuf> {
    let s = path.to_str()?;
    let (base, n) = s.rsplit_once('.')?;
    (base.ends_with(".blktrace") && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .then(|| base.into())
}

/// Every `BASE.<number>` file, in CPU order.
fn cpu_files(base: &Path) -> Result<Vec<PathBuf>, TraceError> {
    let shown = base.display().to_string();
    let dir = base
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let stem = base.file_name().and_then(|s| s.to_str()).unwrap_or("");
    let mut found: Vec<(u64, PathBuf)> = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| TraceError::io(&shown, &e))?;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(n) = name
            .to_str()
            .and_then(|n| n.strip_prefix(stem)?.strip_prefix('.')?.parse::<u64>().ok())
        else {
            continue;
        };
        if found.len() == MAX_CPU_FILES {
            return Err(TraceError::whole(
                &shown,
                format!("the capture has more than {MAX_CPU_FILES} per-CPU files"),
                "give one capture's files",
            ));
        }
        found.push((n, e.path()));
    }
    found.sort();
    Ok(found.into_iter().map(|(_, p)| p).collect())
}

/// A reader of the trace at `files`, in `format`.
pub fn reader(format: Format, files: &[PathBuf]) -> Result<Box<dyn Reader>, TraceError> {
    let one = || {
        let f = open_file(&files[0])?;
        Ok::<_, TraceError>(std::io::BufReader::with_capacity(1 << 16, f))
    };
    let shown = files[0].display().to_string();
    Ok(match format {
        Format::Blktrace => Box::new(blktrace::Blktrace::open(files)?),
        Format::Blkparse => Box::new(blkparse::Blkparse::new(one()?, &shown)),
        Format::Iolog => Box::new(iolog::Iolog::new(one()?, &shown)?),
    })
}

/// What the load-time check found, and how to stream the trace again.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The figures.
    pub summary: TraceSummary,
    format: Format,
    files: Vec<PathBuf>,
    /// The device replayed.
    dev: Option<(u32, u32)>,
    /// The trace time of the device's first I/O, ns.
    t0: u64,
}

/// One device's figures while checking.
#[derive(Debug, Default)]
struct DevBook {
    summary: TraceSummary,
    first: Option<u64>,
    last: u64,
    pids: BTreeMap<u32, usize>,
}

impl DevBook {
    /// Counts one event of the device.
    fn add(&mut self, ev: &Event, r: &dyn Reader) -> Result<(), TraceError> {
        let s = &mut self.summary;
        if ev.time_ns < self.last {
            return Err(place_error(
                r,
                "time",
                format!("time goes back from {} ns to {} ns", self.last, ev.time_ns),
                "replay needs the events in time order: blkparse prints them sorted (do not \
                 use -D or per-CPU output), or sort the lines by their time field",
            ));
        }
        self.last = ev.time_ns;
        if ev.op == Op::Skip {
            s.skipped += 1;
            return Ok(());
        }
        let first = *self.first.get_or_insert(ev.time_ns);
        s.span_ns = ev.time_ns - first;
        s.ios += 1;
        s.reads += u64::from(ev.op == Op::Read);
        s.bytes = s.bytes.saturating_add(ev.bytes);
        s.sync += u64::from(ev.sync);
        s.flagged += u64::from(ev.flagged);
        s.extent = s.extent.max(ev.offset.saturating_add(ev.bytes));
        if !self.pids.contains_key(&ev.pid) {
            if self.pids.len() == MAX_PROCESSES {
                return Err(place_error(
                    r,
                    "pid",
                    format!("the device has I/O from more than {MAX_PROCESSES} processes"),
                    "replay a capture of fewer processes",
                ));
            }
            self.pids.insert(ev.pid, s.processes.len());
            s.processes.push((ev.pid, r.name_of(ev.pid)));
        } else if let Some(&i) = self.pids.get(&ev.pid)
            && s.processes[i].1.is_empty()
        {
            s.processes[i].1 = r.name_of(ev.pid);
        }
        Ok(())
    }
}

/// An error at the reader's current place (its line or record).
fn place_error(r: &dyn Reader, field: &str, message: String, hint: &str) -> TraceError {
    let place = r.place();
    match place
        .rsplit_once(':')
        .and_then(|(f, l)| Some((f, l.parse().ok()?)))
    {
        Some((file, line)) => TraceError::at_line(file, line, field, message, hint),
        None => TraceError::whole(&place, format!("{field}: {message}"), hint),
    }
}

/// Reads the whole trace at `path` once, streaming: every record checked, the device chosen
/// (`device`, or the only one), its figures counted. Results are kept per file, size and
/// modification time, so the variants of a sweep check a trace once.
pub fn check(path: &Path, device: Option<&str>) -> Result<Arc<Checked>, TraceError> {
    type Key = (PathBuf, Option<String>, u64, Option<std::time::SystemTime>);
    static CACHE: Mutex<Vec<(Key, Arc<Checked>)>> = Mutex::new(Vec::new());
    let meta = std::fs::metadata(path).ok();
    let key: Key = (
        path.into(),
        device.map(str::to_string),
        meta.as_ref().map_or(0, |m| m.len()),
        meta.and_then(|m| m.modified().ok()),
    );
    if let Some((_, c)) = CACHE
        .lock()
        .ok()
        .and_then(|c| c.iter().find(|(k, _)| *k == key).cloned())
    {
        return Ok(c);
    }
    let checked = Arc::new(check_uncached(path, device)?);
    if let Ok(mut c) = CACHE.lock() {
        if c.len() >= 16 {
            c.remove(0);
        }
        c.push((key, checked.clone()));
    }
    Ok(checked)
}

fn check_uncached(path: &Path, device: Option<&str>) -> Result<Checked, TraceError> {
    let shown = path.display().to_string();
    let (format, files) = resolve(path)?;
    let wanted = match device {
        Some(d) => Some(parse_device(d).ok_or_else(|| {
            TraceError::whole(
                &shown,
                format!("`{d}` is not a device"),
                "name it `major,minor`, e.g. `7,0`",
            )
        })?),
        None => None,
    };
    let mut r = reader(format, &files)?;
    let mut books: BTreeMap<Option<(u32, u32)>, DevBook> = BTreeMap::new();
    while let Some(ev) = r.next_event()? {
        if wanted.is_some() && ev.dev != wanted {
            books.entry(ev.dev).or_default();
            continue;
        }
        if !books.contains_key(&ev.dev) && books.len() == MAX_DEVICES {
            return Err(place_error(
                r.as_ref(),
                "device",
                format!("the trace holds more than {MAX_DEVICES} devices"),
                "trace one device",
            ));
        }
        books.entry(ev.dev).or_default().add(&ev, r.as_ref())?;
    }
    let dev = choose_device(&books, wanted, &shown)?;
    let book = books.remove(&dev).unwrap_or_default();
    if book.summary.ios == 0 {
        return Err(TraceError::whole(
            &shown,
            "the trace has no reads or writes to replay".into(),
            "capture while the workload runs; qsim replays queue (Q) events of reads and writes",
        ));
    }
    let mut summary = book.summary;
    summary.format = match format {
        Format::Blkparse => "blkparse".into(),
        Format::Blktrace => "blktrace".into(),
        Format::Iolog => iolog_version(&files[0]),
    };
    summary.device = dev.map(|d| dev_name(Some(d)));
    Ok(Checked {
        summary,
        format,
        files,
        dev,
        t0: book.first.unwrap_or(0),
    })
}

/// The device to replay: the one asked for (it must have reads or writes), or the only one.
fn choose_device(
    books: &BTreeMap<Option<(u32, u32)>, DevBook>,
    wanted: Option<(u32, u32)>,
    shown: &str,
) -> Result<Option<(u32, u32)>, TraceError> {
    let seen = || {
        books
            .keys()
            .map(|d| dev_name(*d))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let dev = match wanted {
        Some(w) if books.get(&Some(w)).is_some_and(|b| b.summary.ios > 0) => Some(w),
        Some(w) => {
            return Err(TraceError::whole(
                shown,
                format!(
                    "the trace has no reads or writes of device {}",
                    dev_name(Some(w))
                ),
                &format!("devices with queue events: {}", seen()),
            ));
        }
        None if books.len() > 1 => {
            return Err(TraceError::whole(
                shown,
                format!("the trace holds queue events of {} devices", books.len()),
                &format!("name one with `device:` ({})", seen()),
            ));
        }
        None => books.keys().next().copied().flatten(),
    };
    Ok(dev)
}

/// `iolog2` or `iolog3`, from the file's version line.
fn iolog_version(p: &Path) -> String {
    let mut head = [0u8; 32];
    let n = read_head(p, &mut head).unwrap_or(0);
    if head[..n].starts_with(b"fio version 2") {
        "iolog2".into()
    } else {
        "iolog3".into()
    }
}

fn parse_device(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.trim().split_once(',')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

fn dev_name(d: Option<(u32, u32)>) -> String {
    match d {
        Some((a, b)) => format!("{a},{b}"),
        None => "(none)".into(),
    }
}

/// The [`TraceOpen`] of a checked trace: each stream reads the files afresh.
#[derive(Debug)]
pub struct FileTrace {
    checked: Arc<Checked>,
    /// The largest I/O the machine passes as one bio: a longer one is issued as several.
    max_bytes: u32,
}

impl FileTrace {
    /// The handle of `checked`, splitting I/Os longer than `max_bytes`.
    pub fn new(checked: Arc<Checked>, max_bytes: u64) -> FileTrace {
        FileTrace {
            checked,
            max_bytes: u32::try_from(max_bytes).unwrap_or(u32::MAX).max(512),
        }
    }
}

impl TraceOpen for FileTrace {
    fn open(&self, process: Option<u32>) -> Box<dyn TraceStream> {
        let c = &self.checked;
        let pid = process.and_then(|p| c.summary.processes.get(p as usize).map(|x| x.0));
        let reader = reader(c.format, &c.files);
        let problem = reader.as_ref().err().map(ToString::to_string);
        Box::new(FileStream {
            reader: reader.ok(),
            dev: c.dev,
            pid,
            t0: c.t0,
            max_bytes: self.max_bytes,
            rest: None,
            problem,
        })
    }
}

/// One stream of a trace: the device's reads and writes (of one process, or all), times
/// from the device's first I/O, long I/Os split.
#[derive(Debug)]
struct FileStream {
    reader: Option<Box<dyn Reader>>,
    dev: Option<(u32, u32)>,
    pid: Option<u32>,
    t0: u64,
    max_bytes: u32,
    /// What is left of a long I/O being split.
    rest: Option<(TraceIo, u64)>,
    problem: Option<String>,
}

impl TraceStream for FileStream {
    fn next_io(&mut self) -> Option<TraceIo> {
        if let Some((io, left)) = self.rest.take() {
            return Some(self.piece(io, left));
        }
        loop {
            let ev = match self.reader.as_mut()?.next_event() {
                Ok(Some(ev)) => ev,
                Ok(None) => return None,
                Err(e) => {
                    self.problem = Some(e.to_string());
                    self.reader = None;
                    return None;
                }
            };
            if ev.dev != self.dev || ev.op == Op::Skip || self.pid.is_some_and(|p| p != ev.pid) {
                continue;
            }
            let io = TraceIo {
                at_ns: ev.time_ns.saturating_sub(self.t0),
                offset: ev.offset,
                bytes: 0,
                write: ev.op == Op::Write,
                sync: ev.sync,
            };
            return Some(self.piece(io, ev.bytes));
        }
    }

    fn problem(&self) -> Option<String> {
        self.problem.clone()
    }
}

impl FileStream {
    /// The first `max_bytes` of `left` bytes at `io.offset`, keeping the rest for later.
    fn piece(&mut self, io: TraceIo, left: u64) -> TraceIo {
        let n = left.min(u64::from(self.max_bytes));
        if left > n {
            let next = TraceIo {
                offset: io.offset + n,
                ..io
            };
            self.rest = Some((next, left - n));
        }
        TraceIo {
            bytes: n as u32,
            ..io
        }
    }
}

#[cfg(test)]
mod tests;
