//! blkparse's text output in its default format (`blkparse -i NAME`): one event a line,
//! `%D %2c %8s %5T.%9t %5p %2a %3d ` then what the action carries, and a summary block at the
//! end ("CPU0 (…):", "Total (…):") that ends the events.
//!
//! Every event line's header is checked (device `major,minor`, CPU, sequence, `seconds.ns`,
//! pid, action, RWBS); a queue event (`Q`) also gives `sector + blocks [process]`. Other
//! events are read and checked, not replayed. A `Q` without data (a flush, `FN`, or any `N`)
//! is counted as skipped.

use super::{Event, Op, Reader, TraceError, rwbs};
use std::io::BufRead;

/// blkparse's action letters (`blkparse_fmt.c`): remap, bounce, complete, issue, front merge,
/// get request, insert, back merge, plug, queue, requeue, sleep, unplug, unplug by timer,
/// split, message, and the cgroup-tagged forms blkparse prints the same way.
const ACTIONS: &[&str] = &[
    "A", "B", "C", "D", "F", "G", "I", "M", "P", "Q", "R", "S", "T", "U", "UT", "X", "m",
];

/// A blkparse text file read line by line.
#[derive(Debug)]
pub struct Blkparse<R> {
    input: R,
    file: String,
    line: u64,
    buf: Vec<u8>,
    /// The summary block has begun: no more events.
    ended: bool,
    /// The process name of the last queue event.
    name: String,
}

impl<R: BufRead> Blkparse<R> {
    /// A reader of `input`, named `file` in errors.
    pub fn new(input: R, file: &str) -> Self {
        Blkparse {
            input,
            file: file.to_string(),
            line: 0,
            buf: Vec::new(),
            ended: false,
            name: String::new(),
        }
    }

    fn err(&self, field: &str, message: String, hint: &str) -> TraceError {
        TraceError::at_line(&self.file, self.line, field, message, hint)
    }

    /// The next line, without its end; `None` at the end of the file.
    fn read_line(&mut self) -> Result<Option<String>, TraceError> {
        let hint = "blkparse's default format writes short lines: is this blkparse text?";
        let (file, line) = (&self.file, &mut self.line);
        if !super::read_capped_line(&mut self.input, &mut self.buf, file, line, hint)? {
            return Ok(None);
        }
        while matches!(self.buf.last(), Some(b'\n' | b'\r')) {
            self.buf.pop();
        }
        match String::from_utf8(std::mem::take(&mut self.buf)) {
            Ok(s) => Ok(Some(s)),
            Err(_) => Err(self.err(
                "line",
                "the line is not UTF-8 text".into(),
                "give blkparse's text output, or the binary .blktrace.N files as a blktrace trace",
            )),
        }
    }

    /// One event line parsed; `Ok(None)` for a line that is not an event to replay.
    fn parse(&mut self, text: &str) -> Result<Option<Event>, TraceError> {
        let mut f = text.split_ascii_whitespace();
        let mut take = |what: &str| f.next().map(str::to_string).ok_or(what.to_string());
        let missing = |w: String| {
            self.err(
                &w,
                format!("the line ends before its `{w}` field"),
                "blkparse's default format: `dev cpu seq sec.ns pid action rwbs sector + blocks [process]`",
            )
        };
        let dev = take("device").map_err(missing)?;
        let dev = self.device(&dev)?;
        let _cpu: u32 = self.num(&take("cpu").map_err(missing)?, "cpu")?;
        let _seq: u64 = self.num(&take("sequence").map_err(missing)?, "sequence")?;
        let time_ns = self.time(&take("time").map_err(missing)?)?;
        let pid: u32 = self.num(&take("pid").map_err(missing)?, "pid")?;
        let action = take("action").map_err(missing)?;
        if !ACTIONS.contains(&action.as_str()) {
            return Err(self.err(
                "action",
                format!("unknown action `{action}`"),
                &format!("blkparse's actions are {}", ACTIONS.join(" ")),
            ));
        }
        if action == "m" {
            return Ok(None); // a message: free text after it
        }
        let rwbs_text = take("rwbs").map_err(missing)?;
        let flags = rwbs(&rwbs_text).map_err(|m| {
            self.err(
                "rwbs",
                m,
                "RWBS is F (flush), then R/W/D/N, then F (FUA), A, S, M",
            )
        })?;
        if action != "Q" {
            return Ok(None);
        }
        let rest: Vec<String> = f.map(str::to_string).collect();
        self.queue(dev, time_ns, pid, flags, &rest).map(Some)
    }

    /// A queue event's `sector + blocks [process]`.
    fn queue(
        &mut self,
        dev: (u32, u32),
        time_ns: u64,
        pid: u32,
        flags: super::Rwbs,
        rest: &[String],
    ) -> Result<Event, TraceError> {
        let name_at = rest.iter().position(|w| w.starts_with('['));
        self.name = match name_at {
            Some(i) => rest[i..].join(" ").trim_matches(['[', ']']).to_string(),
            None => String::new(),
        };
        let data = &rest[..name_at.unwrap_or(rest.len())];
        let mut ev = Event {
            time_ns,
            dev: Some(dev),
            pid,
            op: flags.op,
            offset: 0,
            bytes: 0,
            sync: flags.sync,
            flagged: flags.flagged,
        };
        if data.is_empty() && flags.op == Op::Skip {
            return Ok(ev);
        }
        if data.len() != 3 || data[1] != "+" {
            return Err(self.err(
                "sector",
                format!(
                    "a queue event carries `sector + blocks`, got `{}`",
                    data.join(" ")
                ),
                "blkparse's default format: `… Q RWBS sector + blocks [process]`",
            ));
        }
        let sector: u64 = self.num(&data[0], "sector")?;
        let blocks: u64 = self.num(&data[2], "blocks")?;
        if blocks == 0 && flags.op != Op::Skip {
            return Err(self.err(
                "blocks",
                "a read or write of 0 sectors".into(),
                "every queued read or write moves at least one 512-byte sector",
            ));
        }
        ev.offset = sector.checked_mul(512).ok_or_else(|| {
            self.err(
                "sector",
                format!("sector {sector} is past any disk"),
                "sectors are 512 bytes",
            )
        })?;
        ev.bytes = blocks.saturating_mul(512);
        Ok(ev)
    }

    fn device(&self, s: &str) -> Result<(u32, u32), TraceError> {
        let parsed = s
            .split_once(',')
            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
        parsed.ok_or_else(|| {
            self.err(
                "device",
                format!("`{s}` is not a device `major,minor`"),
                "the first field of blkparse's default format is the device, e.g. `7,0`",
            )
        })
    }

    fn num<T: std::str::FromStr>(&self, s: &str, field: &str) -> Result<T, TraceError> {
        s.parse().map_err(|_| {
            self.err(
                field,
                format!("`{s}` is not a whole number"),
                "blkparse writes this field as a non-negative whole number",
            )
        })
    }

    /// `seconds.nanoseconds` as ns.
    fn time(&self, s: &str) -> Result<u64, TraceError> {
        let bad = || {
            self.err(
                "time",
                format!("`{s}` is not a time `seconds.nanoseconds`"),
                "blkparse's default format writes the time as %5T.%9t, e.g. 0.000123456",
            )
        };
        let (sec, ns) = s.split_once('.').ok_or_else(bad)?;
        if ns.len() != 9 || !ns.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let sec: u64 = sec.parse().map_err(|_| bad())?;
        let ns: u64 = ns.parse().map_err(|_| bad())?;
        sec.checked_mul(1_000_000_000)
            .and_then(|t| t.checked_add(ns))
            .ok_or_else(bad)
    }
}

/// Whether `line` opens blkparse's summary block: `CPU0 (loop0):` or `Total (loop0):`.
fn summary_starts(line: &str) -> bool {
    let t = line.trim_start();
    let cpu = t
        .strip_prefix("CPU")
        .map(|r| r.trim_start_matches(|c: char| c.is_ascii_digit()))
        .is_some_and(|r| r.starts_with(" ("));
    cpu || t.starts_with("Total (")
}

impl<R: BufRead + Send + std::fmt::Debug> Reader for Blkparse<R> {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        while !self.ended {
            let Some(line) = self.read_line()? else {
                return Ok(None);
            };
            if line.trim().is_empty() {
                continue;
            }
            if summary_starts(&line) {
                self.ended = true;
                break;
            }
            if let Some(ev) = self.parse(&line)? {
                return Ok(Some(ev));
            }
        }
        Ok(None)
    }

    fn name_of(&self, _pid: u32) -> String {
        self.name.clone()
    }

    fn place(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

/// Whether `first_line` reads as a blkparse event line (content sniffing).
pub fn looks_like(first_line: &str) -> bool {
    let mut r = Blkparse::new(std::io::Cursor::new(Vec::new()), "");
    r.parse(first_line).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::replay::MAX_LINE;

    fn all(text: &str) -> Result<Vec<Event>, TraceError> {
        let mut r = Blkparse::new(std::io::Cursor::new(text.as_bytes().to_vec()), "t.txt");
        let mut out = Vec::new();
        while let Some(e) = r.next_event()? {
            out.push(e);
        }
        Ok(out)
    }

    const TEXT: &str = "  7,0    1        1     0.000000000  4242  Q   R 2048 + 8 [fio]
  7,0    1        2     0.000001000  4242  G   R 2048 + 8 [fio]
  7,0    0        3     0.000500000  4243  Q  WS 4096 + 16 [kworker/u8:2]
  7,0    0        4     0.000600000  4243  Q  FN [kworker/u8:2]
  7,0    0        0     0.000700000     0  m   N cfq schedule dispatch
  7,0    1        5     0.001000000  4242  C   R 2048 + 8 [0]

CPU0 (loop0):
 Reads Queued:           1,        4KiB\t Writes Queued:           1,        8KiB
Total (loop0):
";

    /// A line of MAX_LINE bytes is read; one byte more is refused at its own line number.
    #[test]
    fn a_line_longer_than_the_cap_is_refused_at_its_line() {
        let first = TEXT.lines().next().unwrap();
        let pad = |n: usize| format!("{first}{}\n", " ".repeat(n - first.len() - 1));
        let at_cap = pad(MAX_LINE as usize);
        assert_eq!(all(&format!("{first}\n{at_cap}")).unwrap().len(), 2);
        let e = all(&format!("{first}\n{}", pad(MAX_LINE as usize + 1))).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("t.txt:2: line: the line is longer"),
            "{e}"
        );
    }

    #[test]
    fn queue_events_are_read_and_the_summary_ends_them() {
        let ev = all(TEXT).unwrap();
        assert_eq!(ev.len(), 3);
        assert_eq!(
            (
                ev[0].time_ns,
                ev[0].offset,
                ev[0].bytes,
                ev[0].op,
                ev[0].pid
            ),
            (0, 2048 * 512, 4096, Op::Read, 4242)
        );
        assert_eq!((ev[1].op, ev[1].sync, ev[1].bytes), (Op::Write, true, 8192));
        assert_eq!((ev[2].op, ev[2].time_ns), (Op::Skip, 600_000));
        assert_eq!(ev[0].dev, Some((7, 0)));
    }

    #[test]
    fn a_bad_field_is_located() {
        let cases = [
            ("  7,0 1 1 0.00000000x 1 Q R 8 + 8 [a]\n", "time"),
            ("  7,0 1 1 0.000000000 x Q R 8 + 8 [a]\n", "pid"),
            ("  7,0 1 1 0.000000000 1 Q R 8 + -8 [a]\n", "blocks"),
            ("  7,0 1 1 0.000000000 1 Q R 8 + 0 [a]\n", "blocks"),
            ("  7,0 1 1 0.000000000 1 Z R 8 + 8 [a]\n", "action"),
            ("  7,0 1 1 0.000000000 1 Q Q 8 + 8 [a]\n", "rwbs"),
            ("  7;0 1 1 0.000000000 1 Q R 8 + 8 [a]\n", "device"),
            ("  7,0 1 1 0.000000000 1 Q R 8 8 [a]\n", "sector"),
            ("  7,0 1 1\n", "time"),
        ];
        for (text, field) in cases {
            let e = all(&format!("  7,0 0 1 0.000000000 1 Q R 0 + 8 [a]\n{text}")).unwrap_err();
            assert_eq!((e.line, e.field.as_str()), (Some(2), field), "{text}: {e}");
        }
    }

    #[test]
    fn sniffing_knows_an_event_line() {
        assert!(looks_like(
            "  7,0    1        1     0.000000000  4242  Q   R 2048 + 8 [fio]"
        ));
        assert!(!looks_like("device: { kind: nvme }"));
        assert!(!looks_like("fio version 3 iolog"));
    }
}
