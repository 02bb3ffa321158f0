//! Binary blktrace files: one file per CPU (`NAME.blktrace.0`, `.1`, …), each a run of
//! `struct blk_io_trace` records (`include/uapi/linux/blktrace_api.h`) with their payloads,
//! merged by time as they are read (a k-way merge holding one record per file).
//!
//! A record is 48 bytes: magic (`0x65617400 | version`), sequence, time (ns), sector, bytes,
//! action (low 16 bits the action, high 16 bits the category mask), pid, device
//! (`major << 20 | minor`), cpu, error, `pdu_len`, then `pdu_len` bytes of payload. The byte
//! order is the writer's: each file's first magic tells it. Queue records (`__BLK_TA_QUEUE`)
//! are replayed; `BLK_TN_PROCESS` notes name their pid. The payload is skipped through a
//! fixed buffer: `pdu_len` (at most 65,535) never sizes an allocation.

use super::{Event, Op, Reader, TraceError};
use std::collections::{BTreeMap, BinaryHeap};
use std::io::Read;

/// blktrace's magic, less its version byte.
const MAGIC: u32 = 0x6561_7400;
/// `BLK_TC_SHIFT`: the category mask's place in `action`.
const TC_SHIFT: u32 = 16;
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_SYNC: u32 = 1 << 3;
const TC_NOTIFY: u32 = 1 << 10;
const TC_AHEAD: u32 = 1 << 11;
const TC_META: u32 = 1 << 12;
const TC_DISCARD: u32 = 1 << 13;
const TC_FUA: u32 = 1 << 15;
/// `__BLK_TA_QUEUE`.
const TA_QUEUE: u32 = 1;
/// The last action blktrace defines (`__BLK_TA_DRV_DATA`).
const TA_LAST: u32 = 17;
/// `__BLK_TA_CGROUP`: the record's payload starts with a cgroup id.
const TA_CGROUP: u32 = 1 << 8;
/// `__BLK_TN_PROCESS`, `__BLK_TN_MESSAGE` and the last notify kind.
const TN_PROCESS: u32 = 0;
const TN_LAST: u32 = 2;
/// A process name's longest length (`TASK_COMM_LEN`).
const COMM_LEN: usize = 16;
/// Most pids whose names are kept; later names are not (bounded memory on hostile input).
const MAX_NAMES: usize = 1 << 16;

/// One record as read.
#[derive(Debug, Clone, Copy)]
struct Record {
    time: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    pid: u32,
    device: u32,
}

/// One CPU's file, read record by record.
#[derive(Debug)]
struct CpuFile {
    name: String,
    input: std::io::BufReader<std::fs::File>,
    /// Byte offset of the next record.
    offset: u64,
    big_endian: Option<bool>,
    last_time: u64,
}

impl CpuFile {
    fn err(&self, at: u64, field: &str, message: String, hint: &str) -> TraceError {
        TraceError::at_byte(&self.name, at, field, message, hint)
    }

    /// Reads exactly `buf.len()` bytes of the record at byte `at`; `Ok(false)` at a clean end
    /// before a record's first byte.
    fn fill(&mut self, buf: &mut [u8], what: &str, at: u64) -> Result<bool, TraceError> {
        let mut got = 0;
        while got < buf.len() {
            match self.input.read(&mut buf[got..]) {
                Ok(0) if got == 0 && what == "record" => return Ok(false),
                Ok(0) => {
                    return Err(self.err(
                        at,
                        what,
                        format!(
                            "the file ends inside a {what} ({got} of {} bytes)",
                            buf.len()
                        ),
                        "the trace is truncated: capture again, or cut it at a whole record",
                    ));
                }
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TraceError::io(&self.name, &e)),
            }
        }
        Ok(true)
    }

    /// The next record, with the process name a notify record carries.
    fn next(&mut self) -> Result<Option<(Record, Option<String>)>, TraceError> {
        let mut h = [0u8; 48];
        if !self.fill(&mut h, "record", self.offset)? {
            return Ok(None);
        }
        let at = self.offset;
        let be = match self.big_endian {
            Some(be) => be,
            None => {
                let be = self.endianness(&h, at)?;
                self.big_endian = Some(be);
                be
            }
        };
        let u32_at = |i: usize| {
            let b = [h[i], h[i + 1], h[i + 2], h[i + 3]];
            if be {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            }
        };
        let u64_at = |i: usize| {
            let (a, b) = (u64::from(u32_at(i)), u64::from(u32_at(i + 4)));
            if be { a << 32 | b } else { b << 32 | a }
        };
        let magic = u32_at(0);
        if magic & 0xffff_ff00 != MAGIC {
            return Err(self.err(
                at,
                "magic",
                format!("bad magic {magic:#010x}: not a blk_io_trace record"),
                "the file is not blktrace's binary output, or a record before this one is cut short",
            ));
        }
        let pdu_len = usize::from(if be {
            u16::from_be_bytes([h[46], h[47]])
        } else {
            u16::from_le_bytes([h[46], h[47]])
        });
        let rec = Record {
            time: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            pid: u32_at(32),
            device: u32_at(36),
        };
        self.offset += 48;
        let name = self.payload(&rec, pdu_len, at)?;
        if rec.time < self.last_time && rec.action >> TC_SHIFT & TC_NOTIFY == 0 {
            return Err(self.err(
                at,
                "time",
                format!(
                    "time goes back from {} ns to {} ns",
                    self.last_time, rec.time
                ),
                "each CPU's file is written in time order: is it from one capture?",
            ));
        }
        self.last_time = self.last_time.max(rec.time);
        Ok(Some((rec, name)))
    }

    /// The byte order `h`'s magic is written in.
    fn endianness(&self, h: &[u8; 48], at: u64) -> Result<bool, TraceError> {
        let b = [h[0], h[1], h[2], h[3]];
        if u32::from_le_bytes(b) & 0xffff_ff00 == MAGIC {
            Ok(false)
        } else if u32::from_be_bytes(b) & 0xffff_ff00 == MAGIC {
            Ok(true)
        } else {
            Err(self.err(
                at,
                "magic",
                format!("the file does not start with blktrace's magic (bytes {b:02x?})"),
                "give the per-CPU files blktrace writes (NAME.blktrace.N), or blkparse's text",
            ))
        }
    }

    /// Skips the record's payload, keeping a notify record's process name.
    fn payload(&mut self, rec: &Record, len: usize, at: u64) -> Result<Option<String>, TraceError> {
        let mut buf = [0u8; 4096];
        let mut left = len;
        let mut first: Vec<u8> = Vec::new();
        while left > 0 {
            let n = left.min(buf.len());
            self.fill(&mut buf[..n], "payload", at)?;
            if first.is_empty() {
                first.extend_from_slice(&buf[..n.min(COMM_LEN + 8)]);
            }
            self.offset += n as u64;
            left -= n;
        }
        let notify = rec.action >> TC_SHIFT & TC_NOTIFY != 0;
        if !notify || rec.action & 0xff != TN_PROCESS {
            return Ok(None);
        }
        let skip = if rec.action & TA_CGROUP != 0 { 8 } else { 0 };
        let bytes = first.get(skip..).unwrap_or_default();
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        Ok(Some(
            String::from_utf8_lossy(&bytes[..end.min(COMM_LEN)]).into_owned(),
        ))
    }
}

/// The per-CPU files of one capture, merged by time.
#[derive(Debug)]
pub struct Blktrace {
    files: Vec<CpuFile>,
    /// The next record of each file not yet handed out, smallest time first (ties: lower file).
    heads: BinaryHeap<std::cmp::Reverse<(u64, usize, u64)>>,
    pending: Vec<Option<Record>>,
    names: BTreeMap<u32, String>,
    place: String,
}

impl Blktrace {
    /// Opens every file of `paths` (one capture's per-CPU files).
    pub fn open(paths: &[std::path::PathBuf]) -> Result<Blktrace, TraceError> {
        let mut files = Vec::with_capacity(paths.len());
        for p in paths {
            let name = p.display().to_string();
            let f = super::open_file(p)?;
            files.push(CpuFile {
                name,
                input: std::io::BufReader::with_capacity(1 << 16, f),
                offset: 0,
                big_endian: None,
                last_time: 0,
            });
        }
        let mut t = Blktrace {
            pending: vec![None; files.len()],
            files,
            heads: BinaryHeap::new(),
            names: BTreeMap::new(),
            place: String::new(),
        };
        for i in 0..t.files.len() {
            t.refill(i)?;
        }
        Ok(t)
    }

    /// Reads file `i`'s next record that is not a notify (noting process names) into the heap.
    fn refill(&mut self, i: usize) -> Result<(), TraceError> {
        loop {
            let at = self.files[i].offset;
            let Some((rec, name)) = self.files[i].next()? else {
                return Ok(());
            };
            if let Some(n) = name {
                if self.names.len() < MAX_NAMES || self.names.contains_key(&rec.pid) {
                    self.names.insert(rec.pid, n);
                }
                continue;
            }
            if rec.action >> TC_SHIFT & TC_NOTIFY != 0 {
                if rec.action & 0xff > TN_LAST {
                    return Err(self.files[i].err(
                        at,
                        "action",
                        format!("unknown notify kind {}", rec.action & 0xff),
                        "blktrace's notes are process, timestamp and message",
                    ));
                }
                continue;
            }
            self.pending[i] = Some(rec);
            self.heads.push(std::cmp::Reverse((rec.time, i, at)));
            return Ok(());
        }
    }

    /// What the merged record means.
    fn event(&self, rec: &Record, file: usize, at: u64) -> Result<Option<Event>, TraceError> {
        let act = rec.action & 0xffff & !TA_CGROUP;
        if act == 0 || act > TA_LAST {
            return Err(self.files[file].err(
                at,
                "action",
                format!("unknown action {act} (action word {:#010x})", rec.action),
                "blktrace's actions are 1 (queue) to 17 (driver data)",
            ));
        }
        if act != TA_QUEUE {
            return Ok(None);
        }
        let tc = rec.action >> TC_SHIFT;
        let op = if tc & TC_DISCARD != 0 || rec.bytes == 0 {
            Op::Skip
        } else if tc & TC_WRITE != 0 {
            Op::Write
        } else {
            Op::Read
        };
        let offset = rec.sector.checked_mul(512).ok_or_else(|| {
            self.files[file].err(
                at,
                "sector",
                format!("sector {} is past any disk", rec.sector),
                "",
            )
        })?;
        let _ = TC_FLUSH;
        Ok(Some(Event {
            time_ns: rec.time,
            dev: Some((rec.device >> 20, rec.device & 0xf_ffff)),
            pid: rec.pid,
            op,
            offset,
            bytes: u64::from(rec.bytes),
            sync: tc & TC_SYNC != 0,
            flagged: tc & (TC_FUA | TC_META | TC_AHEAD) != 0,
        }))
    }
}

impl Reader for Blktrace {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        while let Some(std::cmp::Reverse((_, i, at))) = self.heads.pop() {
            let rec = self.pending[i].take().expect("a head has its record");
            self.place = format!("{} byte {at}", self.files[i].name);
            self.refill(i)?;
            if let Some(ev) = self.event(&rec, i, at)? {
                return Ok(Some(ev));
            }
        }
        Ok(None)
    }

    fn name_of(&self, pid: u32) -> String {
        self.names.get(&pid).cloned().unwrap_or_default()
    }

    fn place(&self) -> String {
        self.place.clone()
    }
}

/// Whether `head` (a file's first bytes) starts with blktrace's magic, in either byte order.
pub fn looks_like(head: &[u8]) -> bool {
    let Some(b) = head.get(..4) else {
        return false;
    };
    let b = [b[0], b[1], b[2], b[3]];
    u32::from_le_bytes(b) & 0xffff_ff00 == MAGIC || u32::from_be_bytes(b) & 0xffff_ff00 == MAGIC
}

/// A record's bytes, little-endian, for tests and the torture generator.
#[allow(clippy::too_many_arguments)]
pub fn record(
    time: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    pid: u32,
    dev: u32,
    pdu: &[u8],
) -> Vec<u8> {
    let mut v = Vec::with_capacity(48 + pdu.len());
    v.extend_from_slice(&(MAGIC | 7).to_le_bytes());
    v.extend_from_slice(&0u32.to_le_bytes());
    v.extend_from_slice(&time.to_le_bytes());
    v.extend_from_slice(&sector.to_le_bytes());
    v.extend_from_slice(&bytes.to_le_bytes());
    v.extend_from_slice(&action.to_le_bytes());
    v.extend_from_slice(&pid.to_le_bytes());
    v.extend_from_slice(&dev.to_le_bytes());
    v.extend_from_slice(&0u32.to_le_bytes());
    v.extend_from_slice(&0u16.to_le_bytes());
    v.extend_from_slice(&(pdu.len() as u16).to_le_bytes());
    v.extend_from_slice(pdu);
    v
}

/// The action word of a queue record: `__BLK_TA_QUEUE` with the queue category and the
/// direction's (write, sync).
pub fn queue_action(write: bool, sync: bool) -> u32 {
    let mut tc = 1 << 4; // BLK_TC_QUEUE
    tc |= if write { TC_WRITE } else { 1 }; // BLK_TC_WRITE / BLK_TC_READ
    if sync {
        tc |= TC_SYNC;
    }
    tc << TC_SHIFT | TA_QUEUE
}

/// The action word of a `BLK_TN_PROCESS` note.
pub fn process_action() -> u32 {
    TC_NOTIFY << TC_SHIFT | TN_PROCESS
}
