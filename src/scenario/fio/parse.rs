//! The job file's lines read into sections and options, counted as they are read: a file with
//! more job sections than a scenario has workloads, or more option lines than
//! [`MAX_OPTION_LINES`], is refused at the first line past the limit, before anything is
//! built for it. fio's `include` lines and `${VAR}` substitutions, which qsim does not expand,
//! are refused at their line with what to write instead.

use super::{Opt, Reader, Section, uncommented};
use crate::scenario::{Error, ErrorKind, MAX_WORKLOADS};

/// Most option lines one job file may hold (in all its sections). Real job files hold tens;
/// each option read is kept until the jobs are built (about 120 bytes apiece), so this bounds
/// the reader to about 120 MB whatever the file.
pub const MAX_OPTION_LINES: usize = 1_000_000;

impl Reader<'_> {
    /// The file's sections in order, each with its options.
    pub(super) fn sections(&self) -> Result<Vec<Section>, Error> {
        let mut out: Vec<Section> = Vec::new();
        let (mut job_sections, mut options) = (0usize, 0usize);
        for (i, raw) in self.text.lines().enumerate() {
            let line = i as u64 + 1;
            let t = uncommented(raw);
            if t.is_empty() {
                continue;
            }
            let lead = (raw.len() - raw.trim_start().len()) as u64 + 1;
            self.not_expanded(raw, t, line, lead)?;
            if let Some(rest) = t.strip_prefix('[') {
                let s = self.header(rest, line, lead)?;
                if s.name != "global" {
                    job_sections += 1;
                    self.job_count(&s, job_sections, lead)?;
                }
                out.push(s);
                continue;
            }
            let Some(cur) = out.last_mut() else {
                return Err(self.error(
                    ErrorKind::Syntax,
                    line,
                    Some(lead),
                    None,
                    format!("option `{t}` comes before any [section]"),
                    "put options under a [global] or [job] header, as fio requires (fio: \
                     \"option outside of [] job section\")",
                ));
            };
            options += 1;
            if options > MAX_OPTION_LINES {
                return Err(self.error(
                    ErrorKind::BadValue,
                    line,
                    Some(lead),
                    Some(format!("[{}]", cur.name)),
                    format!(
                        "more than {MAX_OPTION_LINES} option lines: a job file may hold at most \
                         {MAX_OPTION_LINES}"
                    ),
                    "a job needs a few options; remove the repeats (the last one of an option \
                     is the one that counts)",
                ));
            }
            let global = cur.name == "global";
            cur.opts.push(self.option(raw, t, line, lead, global)?);
        }
        Ok(out)
    }

    /// One `key[=value]` line (`t`: uncommented and trimmed, `lead`: its column).
    fn option(&self, raw: &str, t: &str, line: u64, lead: u64, global: bool) -> Result<Opt, Error> {
        let (key, value, col) = match t.split_once('=') {
            Some((k, v)) => {
                let vcol = raw.find('=').map_or(lead, |e| {
                    e as u64 + 2 + (raw[e + 1..].len() - raw[e + 1..].trim_start().len()) as u64
                });
                (k.trim(), Some(v.trim().to_string()), vcol)
            }
            None => (t, None, lead),
        };
        if key.is_empty() {
            return Err(self.error(
                ErrorKind::Syntax,
                line,
                Some(lead),
                None,
                "no option name before `=`".to_string(),
                "write option=value, e.g. bs=4k",
            ));
        }
        Ok(Opt {
            key: key.to_string(),
            value,
            line,
            col,
            global,
        })
    }

    /// Refuses the job section past the [`MAX_WORKLOADS`]th (`n` counts job sections so far).
    fn job_count(&self, s: &Section, n: usize, col: u64) -> Result<(), Error> {
        if n <= MAX_WORKLOADS {
            return Ok(());
        }
        Err(self.error(
            ErrorKind::BadValue,
            s.line,
            Some(col),
            Some(format!("[{}]", s.name)),
            format!(
                "job section {n}: a job file may hold at most {MAX_WORKLOADS} jobs (each job is \
                 one of a scenario's at most {MAX_WORKLOADS} workloads)"
            ),
            "give one job numjobs=N for N copies of it, or run the other jobs from a second \
             job file",
        ))
    }

    /// Refuses what fio expands before reading options and qsim does not: an `include FILE`
    /// line and a `${VAR}` environment variable (`t` is the line uncommented and trimmed).
    fn not_expanded(&self, raw: &str, t: &str, line: u64, lead: u64) -> Result<(), Error> {
        let word = t.split_whitespace().next().unwrap_or("");
        if word == "include" && !t.contains('=') {
            let file = t["include".len()..].trim();
            let file = if file.is_empty() { "FILE" } else { file };
            return Err(self.error(
                ErrorKind::Syntax,
                line,
                Some(lead),
                None,
                format!("`include {file}`: qsim does not expand fio's include directive"),
                &format!(
                    "paste the lines of {file} here in place of this line: qsim reads only the \
                     job file it is given"
                ),
            ));
        }
        let Some(at) = t.find("${") else {
            return Ok(());
        };
        let var = &t[at..];
        let var = &var[..var.find('}').map_or(var.len(), |e| e + 1)];
        let col = raw.find("${").map_or(lead, |c| c as u64 + 1);
        Err(self.error(
            ErrorKind::Syntax,
            line,
            Some(col),
            None,
            format!(
                "`{}`: qsim does not substitute environment variables (fio reads them from its \
                 environment)",
                crate::scenario::shorten_to(var, 40)
            ),
            "write the value itself in its place, e.g. bs=4k rather than bs=${BS}",
        ))
    }

    /// A `[name]` header; `rest` follows the `[`.
    fn header(&self, rest: &str, line: u64, col: u64) -> Result<Section, Error> {
        let Some(end) = rest.find(']') else {
            return Err(self.error(
                ErrorKind::Syntax,
                line,
                Some(col),
                None,
                "unterminated `[`: the section name has no closing `]`".to_string(),
                "write a section header as [name] on a line of its own, e.g. [reader] or \
                 [global]",
            ));
        };
        let name = rest[..end].trim();
        if name.is_empty() || !rest[end + 1..].trim().is_empty() {
            return Err(self.error(
                ErrorKind::Syntax,
                line,
                Some(col),
                None,
                format!("`[{rest}` is not a section header"),
                "a header is a non-empty name in brackets alone on its line: [reader]",
            ));
        }
        Ok(Section {
            name: name.to_string(),
            line,
            opts: Vec::new(),
        })
    }
}
