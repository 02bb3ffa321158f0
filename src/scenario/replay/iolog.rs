//! fio's iolog, versions 2 and 3, read as fio's `iolog.c` reads them.
//!
//! The first line is `fio version 2 iolog` or `fio version 3 iolog`. Then each line is a file
//! action (`FILE add|open|close`) or an I/O (`FILE read|write|trim|sync|datasync|wait OFFSET
//! LENGTH`); version 3 puts a time in microseconds before each (`TIME FILE ACTION …`). The
//! times replay as fio's `delay_since_ttime()` makes them: each line waits its time less the
//! previous line's, none for the first line or when the time goes back (so an unsorted v3 log
//! is bounded, not refused). Version 2 has no times: its I/Os go back to back, and a `wait`
//! line (`FILE wait MS 0`) holds the next I/O until that many ms after the start, as fio's
//! `DDIR_WAIT` does. `trim`, `sync` and `datasync` are counted and skipped (the model has no
//! path for them); a skipped line's delay carries to the next I/O. Every file of the log is
//! the one device: offsets are used as given. An I/O not on whole sectors is widened to them.

use super::{Event, MAX_LINE, Op, Reader, TraceError};
use std::io::BufRead;

/// An iolog file read line by line.
#[derive(Debug)]
pub struct Iolog<R> {
    input: R,
    file: String,
    line: u64,
    /// 2 or 3.
    pub version: u32,
    /// The previous line's v3 time, µs (0: none yet, as fio's `io_log_last_ttime`).
    last_ttime: u64,
    /// The replay clock, ns: the sum of the delays so far.
    clock: u64,
    buf: Vec<u8>,
}

impl<R: BufRead> Iolog<R> {
    /// A reader of `input`, named `file` in errors; reads and checks the version line.
    pub fn new(mut input: R, file: &str) -> Result<Self, TraceError> {
        let mut first = Vec::new();
        <&mut R as std::io::Read>::take(&mut input, MAX_LINE)
            .read_until(b'\n', &mut first)
            .map_err(|e| TraceError::io(file, &e))?;
        let head = String::from_utf8_lossy(&first);
        let version = match head.trim_end() {
            "fio version 2 iolog" => 2,
            "fio version 3 iolog" => 3,
            other => {
                return Err(TraceError::at_line(
                    file,
                    1,
                    "version",
                    format!("`{}` is not an iolog version line", super::shorten(other)),
                    "an iolog starts with `fio version 2 iolog` or `fio version 3 iolog` \
                     (version 1 is no longer read by fio either)",
                ));
            }
        };
        Ok(Iolog {
            input,
            file: file.to_string(),
            line: 1,
            version,
            last_ttime: 0,
            clock: 0,
            buf: Vec::new(),
        })
    }

    fn err(&self, field: &str, message: String, hint: &str) -> TraceError {
        TraceError::at_line(&self.file, self.line, field, message, hint)
    }

    fn num(&self, s: Option<&str>, field: &str) -> Result<u64, TraceError> {
        let s = s.ok_or_else(|| {
            self.err(
                field,
                format!("the line ends before its `{field}`"),
                "an I/O line is `[TIME] FILE ACTION OFFSET LENGTH`",
            )
        })?;
        s.parse().map_err(|_| {
            self.err(
                field,
                format!("`{}` is not a whole number", super::shorten(s)),
                "fio writes offsets, lengths and times as non-negative whole numbers",
            )
        })
    }

    /// One line (not the version line) as an event; `Ok(None)` for a file action.
    fn parse(&mut self, text: &str) -> Result<Option<Event>, TraceError> {
        let mut f = text.split_ascii_whitespace();
        if self.version == 3 {
            let t = self.num(f.next(), "time")?;
            // fio's delay_since_ttime(): none for the first line or a time that goes back.
            if self.last_ttime != 0 && t >= self.last_ttime {
                self.clock = self.clock.saturating_add((t - self.last_ttime) * 1000);
            }
            self.last_ttime = t;
        }
        let _file = f.next();
        let act = f.next().ok_or_else(|| {
            self.err(
                "action",
                "the line has no action".into(),
                "an iolog line is `[TIME] FILE ACTION [OFFSET LENGTH]`",
            )
        })?;
        let op = match act {
            "add" | "open" | "close" => return Ok(None),
            "read" => Op::Read,
            "write" => Op::Write,
            "trim" | "sync" | "datasync" => Op::Skip,
            "wait" if self.version == 2 => {
                let ms = self.num(f.next(), "offset")?;
                self.clock = self.clock.max(ms.saturating_mul(1_000_000));
                return Ok(None);
            }
            other => {
                return Err(self.err(
                    "action",
                    format!("unknown action `{}`", super::shorten(other)),
                    "fio's iolog actions are add, open, close, read, write, trim, sync, \
                     datasync (and wait in version 2)",
                ));
            }
        };
        let offset = self.num(f.next(), "offset")?;
        let length = self.num(f.next(), "length")?;
        if length == 0 && op != Op::Skip {
            return Err(self.err(
                "length",
                "a read or write of 0 bytes".into(),
                "every I/O moves at least one byte",
            ));
        }
        let start = offset / 512 * 512;
        let end = offset.saturating_add(length).div_ceil(512) * 512;
        Ok(Some(Event {
            time_ns: self.clock,
            dev: None,
            pid: 0,
            op,
            offset: start,
            bytes: end - start,
            sync: false,
            flagged: false,
        }))
    }
}

impl<R: BufRead + Send + std::fmt::Debug> Reader for Iolog<R> {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        loop {
            let hint = "fio reads iolog lines of up to 4096 bytes";
            let (file, line) = (&self.file, &mut self.line);
            if !super::read_capped_line(&mut self.input, &mut self.buf, file, line, hint)? {
                return Ok(None);
            }
            let text = String::from_utf8_lossy(&self.buf).into_owned();
            if text.trim().is_empty() {
                continue;
            }
            if let Some(ev) = self.parse(&text)? {
                return Ok(Some(ev));
            }
        }
    }

    fn name_of(&self, _pid: u32) -> String {
        "fio".to_string()
    }

    fn place(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

/// Whether `first_line` is an iolog's version line (content sniffing).
pub fn looks_like(first_line: &str) -> bool {
    matches!(
        first_line.trim_end(),
        "fio version 2 iolog" | "fio version 3 iolog"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Result<Vec<Event>, TraceError> {
        let mut r = Iolog::new(std::io::Cursor::new(text.as_bytes().to_vec()), "t.log")?;
        let mut out = Vec::new();
        while let Some(e) = r.next_event()? {
            out.push(e);
        }
        Ok(out)
    }

    /// A line of MAX_LINE bytes is read; one byte more is refused at its own line number.
    #[test]
    fn a_line_longer_than_the_cap_is_refused_at_its_line() {
        let read = "/dev/x read 0 4096";
        let pad = |n: usize| format!("{read}{}\n", " ".repeat(n - read.len() - 1));
        let head = "fio version 2 iolog\n/dev/x add\n";
        let ok = all(&format!("{head}{}", pad(MAX_LINE as usize))).unwrap();
        assert_eq!(ok.len(), 1);
        let e = all(&format!("{head}{}", pad(MAX_LINE as usize + 1))).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("t.log:3: line: the line is longer"),
            "{e}"
        );
    }

    #[test]
    fn version_3_times_replay_as_fio_delays() {
        let ev = all("fio version 3 iolog\n100 /dev/x add\n150 /dev/x open\n\
                      200 /dev/x read 4096 4096\n250 /dev/x write 0 512\n\
                      240 /dev/x read 8192 4096\n300 /dev/x trim 0 4096\n310 /dev/x close\n")
        .unwrap();
        let times: Vec<u64> = ev.iter().map(|e| e.time_ns).collect();
        // 100→150→200: 100 µs; then +50; 240 goes back: no delay; 300: +60.
        assert_eq!(times, [100_000, 150_000, 150_000, 210_000]);
        assert_eq!(ev[0].op, Op::Read);
        assert_eq!(ev[1].op, Op::Write);
        assert_eq!(ev[3].op, Op::Skip);
    }

    #[test]
    fn version_2_has_no_times_but_its_waits() {
        let ev = all(
            "fio version 2 iolog\n/dev/x add\n/dev/x open\n/dev/x read 0 4096\n\
                      /dev/x wait 5 0\n/dev/x write 100 10\n",
        )
        .unwrap();
        assert_eq!(ev[0].time_ns, 0);
        assert_eq!(ev[1].time_ns, 5_000_000);
        // 100..110 widened to the sector 0..512.
        assert_eq!((ev[1].offset, ev[1].bytes), (0, 512));
    }

    #[test]
    fn a_bad_line_is_located() {
        for (text, line, field) in [
            ("fio version 1 iolog\n", 1, "version"),
            ("fio version 3 iolog\nx /dev/x read 0 1\n", 2, "time"),
            ("fio version 2 iolog\n/dev/x read -1 4096\n", 2, "offset"),
            ("fio version 2 iolog\n/dev/x read 0 0\n", 2, "length"),
            ("fio version 2 iolog\n/dev/x frob 0 1\n", 2, "action"),
            ("fio version 2 iolog\n/dev/x read 0\n", 2, "length"),
            ("fio version 3 iolog\n1 /dev/x wait 0 1\n", 2, "action"),
        ] {
            let e = all(text).unwrap_err();
            assert_eq!(
                (e.line, e.field.as_str()),
                (Some(line), field),
                "{text}: {e}"
            );
        }
    }
}
