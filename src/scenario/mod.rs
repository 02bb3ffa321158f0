//! Scenario files: the one way in from YAML to a validated [`Scenario`].
//!
//! ```text
//! file ──read──▶ text ──serde-saphyr──▶ schema::Raw* ──validate──▶ types::Scenario
//!                  │                        │                         │
//!                  └── empty? ──────────────┴──── Error (file:line:col, field path, hint)
//! ```
//!
//! - [`load`] and [`load_str`] are the entry points; [`load_with_overrides`] and
//!   [`load_str_with_overrides`] also take command-line `--set path.to.field=value` overrides
//!   ([`set_document`] turns one into YAML), merged over the file before validation.
//!   [`resolve`] and [`resolve_with_overrides`] add the scenarios shipped inside the binary
//!   ([`shipped`]), and [`describe`] prints a resolved scenario with its derived values (what
//!   `qsim check` shows).
//! - [`units`] parses `4k`, `1.5ms`, `60MB/s`; [`schema`] mirrors the file; `validate` fills every
//!   default and is the only producer of value errors; [`types`] is the result the model reads.
//! - [`read_capped`] reads a file by bytes read, never trusting its reported size (a device
//!   reports 0 and never ends); [`MAX_FILE_BYTES`] for scenarios.
//! - Bounds on what a scenario may ask for (variants, runs, replications in all, workloads, I/Os
//!   in flight, names, the smallest cost of a request, rates, durations, offsets) are `pub`
//!   constants here, each with its reason; [`check_work`] rechecks runs × replications after
//!   the command line's `-r`.
//! - [`Error`] is the single error type: file, line and column, field path, message and hint.
//!   An error in a value that a `--set` gave names the argument instead of a file and line:
//!   `--set memory.ram=1GB: memory.ram: must be a whole number of 4 KiB pages, …`.
//!
//! serde-saphyr is pinned at 2.2 and used only in this module.

mod describe;
pub mod schema;
mod shipped;
pub mod units;
mod validate;

pub use crate::model::config as types;
pub use crate::model::config::*;
pub use crate::model::physics::{crypto_cost, mean_service, moments};
pub use describe::describe;
pub use shipped::{ShippedScenario, resolve, resolve_with_overrides, shipped};
pub use validate::{
    DEFAULT_REPLICATIONS, MAX_ARRIVAL_RATE, MAX_ATOMIC_STREAMS, MAX_DISK_BYTES,
    MAX_EMPIRICAL_VALUES, MAX_IN_FLIGHT, MAX_NAME_CHARS, MAX_REPLICATIONS, MAX_RUNS,
    MAX_TOTAL_REPLICATIONS, MAX_VARIANTS, MAX_WORKLOADS, MAX_WRITER_RATE, MIN_ARRIVAL_RATE,
    MIN_BANDWIDTH, MIN_SERVICE, check_work, mean_random_seek, name_problem, run_count,
    total_replications,
};

use serde_saphyr::{Location, MessageFormatter};
use std::fmt;
use std::path::Path;

/// Largest scenario file, in bytes, that [`load`] reads.
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// A minimal valid scenario, shown when a file is empty.
pub const MINIMAL_SCENARIO: &str = "device: { kind: nvme }\nworkloads:\n  - kind: fio";

/// What went wrong, broadly; the message says precisely.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file could not be read (missing, unreadable, not UTF-8).
    Read,
    /// The file holds no scenario at all.
    Empty,
    /// The text is not valid YAML, or not a mapping where one is needed.
    Syntax,
    /// A key that the schema does not know (a typo, or a field of another level).
    UnknownField,
    /// A name outside a closed list: device kind, cipher, workload kind, policy, …
    UnknownName,
    /// A value of the wrong type, unit or range.
    BadValue,
    /// A required field is absent.
    Missing,
    /// Fields that cannot go together (a field of another kind, warmup ≥ duration, …).
    Conflict,
}

/// A scenario that cannot be loaded. Always the user's to fix, never fatal to anything else:
/// [`Error::exit_code`] is 2 (bad input).
///
/// Displays as one screen, without the leading `error: ` (the caller adds it):
/// ```text
/// scenarios/x.yaml:9:5: workloads[1].rate: rate must be positive, got "-5/s"
///   hint: a rate is a number and a unit: 2000/s or 2000 iops (operations), 60MB/s, …
///    9 |     rate: -5/s
///      |           ^
/// ```
#[derive(Debug)]
pub struct Error(Box<Inner>);

/// The fields of an [`Error`], boxed so that `Result<_, Error>` stays one pointer wide.
#[derive(Debug)]
struct Inner {
    kind: ErrorKind,
    file: String,
    line: Option<u64>,
    column: Option<u64>,
    path: Option<String>,
    message: String,
    hint: Option<String>,
    source_line: Option<String>,
    /// Column of the caret under `source_line` (which may be a window of a long line).
    caret: Option<u64>,
    io: Option<std::io::Error>,
}

impl Error {
    /// The broad class of the problem.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }
    /// The file as the user named it (`<shipped>/name.yaml` for an embedded scenario), or
    /// `--set ARG` when the value at fault came from that command-line override (then
    /// [`line`](Self::line) and [`column`](Self::column) are `None`).
    pub fn file(&self) -> &str {
        &self.0.file
    }
    /// 1-based line, when the problem has a place in the file.
    pub fn line(&self) -> Option<u64> {
        self.0.line
    }
    /// 1-based column, when the problem has a place in the file.
    pub fn column(&self) -> Option<u64> {
        self.0.column
    }
    /// Field path such as `workloads[1].rate`, when known.
    pub fn path(&self) -> Option<&str> {
        self.0.path.as_deref()
    }
    /// What is wrong.
    pub fn message(&self) -> &str {
        &self.0.message
    }
    /// How to fix it.
    pub fn hint(&self) -> Option<&str> {
        self.0.hint.as_deref()
    }
    /// Process exit code for this error: 2, bad input.
    pub fn exit_code(&self) -> i32 {
        2
    }

    /// An error about the whole file (no place in it).
    fn whole_file(kind: ErrorKind, file: &str, message: String, hint: Option<String>) -> Self {
        Error(Box::new(Inner {
            kind,
            file: file.to_string(),
            line: None,
            column: None,
            path: None,
            message: shorten_to(&message, MAX_MESSAGE_CHARS),
            hint,
            source_line: None,
            caret: None,
            io: None,
        }))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.file)?;
        if let Some(line) = self.0.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.0.column {
                write!(f, ":{col}")?;
            }
        }
        write!(f, ": ")?;
        if let Some(path) = self.0.path.as_deref().filter(|p| !p.is_empty()) {
            write!(f, "{path}: ")?;
        }
        write!(f, "{}", self.0.message)?;
        if let Some(hint) = &self.0.hint {
            for (i, l) in hint.lines().enumerate() {
                if i == 0 {
                    write!(f, "\n  hint: {l}")?;
                } else {
                    write!(f, "\n        {l}")?;
                }
            }
        }
        if let (Some(src), Some(line)) = (&self.0.source_line, self.0.line) {
            let number = line.to_string();
            let pad = " ".repeat(number.len());
            write!(f, "\n  {number} | {src}")?;
            if let Some(col) = self.0.caret {
                // Keep tabs so the caret lines up under the same tab stops.
                let lead: String = src
                    .chars()
                    .take(col.saturating_sub(1) as usize)
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect();
                write!(f, "\n  {pad} | {lead}^")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0
            .io
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// The text being loaded and the name to show for it; builds located errors.
pub(crate) struct Source<'a> {
    /// Display name of the file.
    pub name: &'a str,
    /// Its text.
    pub text: &'a str,
    /// Field paths by location, for serde-saphyr errors (which carry no path).
    pub outline: schema::Outline,
    /// The `--set` documents merged over this text, by the lines they were parsed at.
    pub overrides: Vec<OverrideLines>,
}

/// Where one `--set` document sits: it is parsed as if it followed the file, from line `first`
/// to `last`, so that a location in those lines identifies the argument that wrote the value.
#[derive(Debug, Clone)]
pub(crate) struct OverrideLines {
    /// `--set ARG`, as errors name it.
    pub label: String,
    /// First line of the document.
    pub first: u64,
    /// Last line of the document.
    pub last: u64,
}

impl<'a> Source<'a> {
    pub(crate) fn new(name: &'a str, text: &'a str) -> Self {
        Source {
            name,
            text,
            outline: schema::outline(text),
            overrides: Vec::new(),
        }
    }

    /// An error at `loc` (ignored if unknown) about the field at `path`.
    pub(crate) fn error(
        &self,
        kind: ErrorKind,
        loc: Option<Location>,
        path: &str,
        message: impl Into<String>,
        hint: Option<String>,
    ) -> Error {
        let loc = loc.filter(|l| l.line() > 0);
        if let Some(o) = loc.and_then(|l| {
            self.overrides
                .iter()
                .find(|o| (o.first..=o.last).contains(&l.line()))
        }) {
            return Error(Box::new(Inner {
                kind,
                file: o.label.clone(),
                line: None,
                column: None,
                path: (!path.is_empty()).then(|| path.to_string()),
                message: shorten_to(&message.into(), MAX_MESSAGE_CHARS),
                hint,
                source_line: None,
                caret: None,
                io: None,
            }));
        }
        let window = loc.and_then(|l| {
            self.text
                .lines()
                .nth(l.line() as usize - 1)
                .map(|s| line_window(s.trim_end(), l.column()))
        });
        Error(Box::new(Inner {
            kind,
            file: self.name.to_string(),
            line: loc.map(|l| l.line()),
            column: loc.map(|l| l.column()),
            path: (!path.is_empty()).then(|| path.to_string()),
            message: shorten_to(&message.into(), MAX_MESSAGE_CHARS),
            hint,
            caret: window.as_ref().map(|w| w.1),
            source_line: window.map(|w| w.0),
            io: None,
        }))
    }

    /// Moves an error located in this file to the key that holds the list at `path`: the line
    /// of `variants:` rather than of its first item, or of `workloads:` inside the variant's
    /// `set:` when the list is there. An error without a line (from a `--set`) is left alone.
    pub(crate) fn at_key(&self, mut e: Error, path: &str) -> Error {
        let (Some(line), Some(column)) = (e.0.line, e.0.column) else {
            return e;
        };
        if e.0.file != self.name {
            return e;
        }
        // The key is the part of the error's own path that ends with `path`: `workloads`, or
        // `variants[0].set.workloads` when a variant's `set:` holds the list.
        let Some(located) = self.outline.path_at(line, column, false) else {
            return e;
        };
        let key = located.match_indices(path).map(|(i, _)| i).find_map(|i| {
            let end = i + path.len();
            let before = i == 0 || located[..i].ends_with('.');
            let after = located[end..].is_empty() || located[end..].starts_with(['[', '.']);
            (before && after).then(|| &located[..end])
        });
        let Some(key) = key else {
            return e;
        };
        if let Some(n) = self.outline.nodes.iter().find(|n| n.path == key)
            && let Some(text) = self.text.lines().nth(n.line.saturating_sub(1) as usize)
        {
            let (shown, caret) = line_window(text.trim_end(), n.column);
            e.0.line = Some(n.line);
            e.0.column = Some(n.column);
            e.0.source_line = Some(shown);
            e.0.caret = Some(caret);
        }
        e
    }

    /// Converts a serde-saphyr error into a located, hinted [`Error`].
    fn yaml_error(&self, err: &serde_saphyr::Error) -> Error {
        use serde_saphyr::Error as Y;
        let mut inner = err.without_snippet();
        while let Y::AliasError { error, .. } = inner {
            inner = error.without_snippet();
        }
        let loc = err.location().or_else(|| inner.location());
        let at = |outermost: bool| {
            loc.and_then(|l| self.outline.path_at(l.line(), l.column(), outermost))
                .unwrap_or("")
                .to_string()
        };
        let text_at = || loc.map(|l| self.token_at(l)).unwrap_or_default();
        match inner {
            Y::SerdeUnknownField {
                field, expected, ..
            } => {
                let path = at(false);
                let hint = suggestion(field, expected)
                    .map(|s| {
                        format!(
                            "did you mean `{s}`? valid fields here: {}",
                            expected.join(", ")
                        )
                    })
                    .unwrap_or_else(|| format!("valid fields here: {}", expected.join(", ")));
                self.error(
                    ErrorKind::UnknownField,
                    loc,
                    &path,
                    format!("unknown field `{}`", shorten(field)),
                    Some(hint),
                )
            }
            Y::SerdeUnknownVariant {
                variant, expected, ..
            } => {
                let path = at(false);
                let what = name_class(&path);
                let list = expected.join(", ");
                let mut hint = suggestion(variant, expected)
                    .map(|s| format!("did you mean `{s}`? valid {what}s: {list}"))
                    .unwrap_or_else(|| format!("valid {what}s: {list}"));
                if variant.contains(char::is_whitespace) {
                    hint.push_str(
                        "\nthe value runs on into the next line: is a `{` or `[` left unclosed?",
                    );
                }
                self.error(
                    ErrorKind::UnknownName,
                    loc,
                    &path,
                    format!("unknown {what} `{}`", shorten(variant)),
                    Some(hint),
                )
            }
            Y::SerdeMissingField { field, .. } => {
                let path = at(true);
                self.error(
                    ErrorKind::Missing,
                    loc,
                    &path,
                    format!("missing field `{field}`"),
                    Some(format!("add `{field}:` to this mapping")),
                )
            }
            Y::Message { msg, .. } => {
                let (message, hint) = units::split_hint(msg);
                self.error(
                    ErrorKind::BadValue,
                    loc,
                    &at(false),
                    message,
                    hint.map(str::to_string),
                )
            }
            Y::InvalidScalar { ty, .. } => {
                let path = at(false);
                let (what, hint) = scalar_hint(ty, &path);
                self.error(
                    ErrorKind::BadValue,
                    loc,
                    &path,
                    format!("expected {what}, got {:?}", shorten(&text_at())),
                    Some(hint),
                )
            }
            Y::SerdeInvalidType {
                unexpected,
                expected,
                ..
            }
            | Y::SerdeInvalidValue {
                unexpected,
                expected,
                ..
            } => self.error(
                ErrorKind::BadValue,
                loc,
                &at(false),
                format!(
                    "expected {expected}, got {}",
                    shorten(&unexpected.to_string())
                ),
                Some(type_hint(expected).to_string()),
            ),
            Y::Unexpected { expected, .. } => {
                let path = at(false);
                let (noun, hint) = match *expected {
                    "mapping start" if path.is_empty() => (
                        "a mapping of keys to values",
                        format!("a scenario looks like this:\n{MINIMAL_SCENARIO}"),
                    ),
                    "mapping start" => (
                        "a mapping",
                        format!(
                            "write `key: value` pairs indented under `{path}:`, or inline: \
                             {{ key: value }}"
                        ),
                    ),
                    "sequence start" => (
                        "a list",
                        "write a list: [a, b], or one `- item` per line".to_string(),
                    ),
                    "string scalar" | "scalar" => (
                        "a single value",
                        "write one plain value here; quote it if it contains `: ` or ` #`"
                            .to_string(),
                    ),
                    other => (other, SYNTAX_HINT.to_string()),
                };
                self.error(
                    ErrorKind::BadValue,
                    loc,
                    &path,
                    format!("expected {noun}, got {:?}", shorten(&text_at())),
                    Some(hint),
                )
            }
            Y::DuplicateMappingKey { key, .. } => self.error(
                ErrorKind::Syntax,
                loc,
                &at(false),
                match key {
                    Some(k) => format!("duplicate key `{}`", shorten(k)),
                    None => "duplicate key".to_string(),
                },
                Some("each key may appear once in a mapping; remove or merge the repeats".into()),
            ),
            Y::Budget { breach, .. } => {
                let (message, hint) = budget_message(breach);
                self.error(ErrorKind::Syntax, loc, "", message, Some(hint))
            }
            Y::MultipleDocuments { .. } => self.error(
                ErrorKind::Syntax,
                loc,
                "",
                "a second YAML document starts here; a scenario file holds one document",
                Some(
                    "remove the `---` line (and everything after it that belongs to another \
                     scenario); for several versions of one scenario use `variants:`"
                        .to_string(),
                ),
            ),
            other => {
                let message = serde_saphyr::DefaultMessageFormatter.format_message(other);
                let message = shorten(&message.escape_debug().to_string());
                self.error(
                    ErrorKind::Syntax,
                    loc,
                    &at(false),
                    message,
                    Some(SYNTAX_HINT.to_string()),
                )
            }
        }
    }

    /// The scalar text at a location, up to the end of the line or a comment, for echoing
    /// (the caller shortens it).
    fn token_at(&self, loc: Location) -> String {
        let Some(line) = self.text.lines().nth(loc.line().saturating_sub(1) as usize) else {
            return String::new();
        };
        let rest: String = line
            .chars()
            .skip(loc.column().saturating_sub(1) as usize)
            .collect();
        let rest = rest.split(" #").next().unwrap_or("").trim();
        if rest.starts_with(['[', '{']) {
            rest.to_string()
        } else {
            // Inside a flow collection the scalar ends at the next separator.
            rest.split([',', '}', ']'])
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        }
    }
}

/// Hint for YAML that does not parse.
const SYNTAX_HINT: &str = "check the indentation (spaces, not tabs), quotes and brackets on this \
                           line and the one above";

/// Most characters of an error message (a backstop: values echoed inside are shortened to
/// [`MAX_ECHO_CHARS`] where they are quoted).
const MAX_MESSAGE_CHARS: usize = 600;

/// The part of a source line an error shows, and the caret's column in it: the whole line
/// when it is at most [`MAX_ECHO_CHARS`] characters, else a window of that many around
/// `column`, each cut end marked `…`.
fn line_window(line: &str, column: u64) -> (String, u64) {
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= MAX_ECHO_CHARS {
        return (line.to_string(), column);
    }
    let width = MAX_ECHO_CHARS - 2;
    let col = (column.saturating_sub(1) as usize).min(chars.len());
    let start = col.saturating_sub(width / 2).min(chars.len() - width);
    let end = start + width;
    let mut shown = String::new();
    if start > 0 {
        shown.push('…');
    }
    shown.extend(&chars[start..end]);
    if end < chars.len() {
        shown.push('…');
    }
    let caret = (col - start) as u64 + 1 + u64::from(start > 0);
    (shown, caret)
}

/// The most YAML nodes (scalars, lists and mappings, keys included) a scenario file may hold:
/// serde-saphyr's default budget, named here so that messages can cite it. It bounds the
/// memory and time a file can cost; an empirical distribution's
/// [`validate::MAX_EMPIRICAL_VALUES`] fits well inside it.
pub const MAX_YAML_NODES: usize = 250_000;

/// The parser options of every scenario document: serde-saphyr's defaults, with the node
/// budget spelt out as [`MAX_YAML_NODES`].
fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! { max_nodes: MAX_YAML_NODES },
    }
}

/// What a YAML budget breach means, in words, and what to do about it.
fn budget_message(breach: &serde_saphyr::budget::BudgetBreach) -> (String, String) {
    use serde_saphyr::budget::BudgetBreach as B;
    let big = "a scenario is a page of YAML: is this the right file?";
    match breach {
        B::Nodes { .. } | B::Events { .. } => (
            format!(
                "the file holds more than {MAX_YAML_NODES} YAML values (scalars, lists and \
                 mappings), the most a scenario may hold"
            ),
            format!(
                "{big} An empirical distribution may list at most {} values",
                validate::MAX_EMPIRICAL_VALUES
            ),
        ),
        B::Depth { .. } => (
            "the YAML nests lists and mappings more than 64 levels deep".to_string(),
            "a scenario nests a few levels; is a `[` or `{` left unclosed?".to_string(),
        ),
        B::Aliases { .. }
        | B::Anchors { .. }
        | B::AliasAnchorRatio { .. }
        | B::RecordedAnchorEvents { .. }
        | B::RecordedAnchorBytes { .. }
        | B::MergeKeys { .. } => (
            "the file uses too many anchors, aliases or merge keys (`&a`, `*a`, `<<`)".to_string(),
            "write the values out: the limit stops a small file from expanding into an \
             enormous one"
                .to_string(),
        ),
        B::Documents { .. } => (
            "the file holds many YAML documents; a scenario file holds one".to_string(),
            "remove the `---` separators".to_string(),
        ),
        B::ScalarBytes { .. } | B::InputBytes { .. } => (
            "the values in the file add up to more text than a scenario may hold".to_string(),
            big.to_string(),
        ),
        _ => (
            "the file exceeds a limit of the YAML reader".to_string(),
            big.to_string(),
        ),
    }
}

/// What kind of name a field path holds, for "unknown device kind `x`".
fn name_class(path: &str) -> &'static str {
    let key = field_key(path);
    let last = key.rsplit('.').next().unwrap_or("");
    if key == "device.kind" {
        "device kind"
    } else if key == "workloads[].kind" {
        "workload kind"
    } else if last == "kind" {
        "distribution kind"
    } else if key == "memory.atomic[].preset" {
        "atomic preset"
    } else {
        match last {
            "version" => "kernel version",
            "cwait_class" => "congestion-wait queue",
            "cipher" => "cipher",
            "engine" => "crypto engine",
            "mode" => "queue mode",
            "elevator" => "elevator",
            "rw" => "rw pattern",
            "arrivals" => "arrival process",
            _ => "value",
        }
    }
}

/// The expectation and hint for a scalar that failed to parse as `ty`.
/// The expectation and hint for a scalar at `path` that failed to parse as `ty`: a whole
/// number names the field's own range (`cpus`: 1 to 1024), not its type's.
fn scalar_hint(ty: &str, path: &str) -> (String, String) {
    let key = field_key(path);
    if key.starts_with("memory.atomic[].orders") {
        return (
            "a buddy order and a weight".to_string(),
            "map each buddy order (0 to 10) to a weight: {0: 0.5, 1: 0.3, 2: 0.2}".to_string(),
        );
    }
    let whole = |range: &str| {
        (
            format!("a whole number {range}"),
            format!("write a whole number {range}, without a unit"),
        )
    };
    match ty {
        "u32" | "u64" | "i64" => {
            if key == "kernel.hz" {
                let values: Vec<String> = validate::HZ_VALUES.iter().map(u32::to_string).collect();
                return (
                    "a whole number".to_string(),
                    format!("write one of {} (CONFIG_HZ)", values.join(", ")),
                );
            }
            if key == "memory.min_free_kbytes" {
                return whole("from 128 to ram/32 (in kB)");
            }
            let (lo, hi) = validate::int_range_of(path).unwrap_or(match ty {
                "u32" => (0, u64::from(u32::MAX)),
                _ => (0, u64::MAX),
            });
            whole(&format!("from {lo} to {hi}"))
        }
        "floating point" => (
            "a number".to_string(),
            "write a decimal number such as 0.5".to_string(),
        ),
        "boolean" => (
            "true or false".to_string(),
            "write true or false".to_string(),
        ),
        _ => (
            "a different kind of value".to_string(),
            "see the scenario reference in scenarios/two-queue.yaml".to_string(),
        ),
    }
}

/// A field path without list indices or the `variants[i].set.` prefix, as the tables of
/// field facts are keyed: `variants[1].set.workloads[0].iodepth` → `workloads[].iodepth`.
pub(crate) fn field_key(path: &str) -> String {
    let mut p = path;
    if let Some(rest) = p.strip_prefix("variants[")
        && let Some((index, tail)) = rest.split_once(']')
        && index.bytes().all(|b| b.is_ascii_digit())
    {
        p = tail.strip_prefix(".set").unwrap_or(tail);
        p = p.strip_prefix('.').unwrap_or(p);
    }
    let mut out = String::with_capacity(p.len());
    let mut chars = p.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '[' {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
        }
    }
    out
}

/// Most characters of a value or a source line that an error echoes.
pub const MAX_ECHO_CHARS: usize = 200;

/// `text` cut to at most [`MAX_ECHO_CHARS`] characters (with `…` when cut), so that no error
/// repeats a multi-megabyte value or line.
pub(crate) fn shorten(text: &str) -> String {
    shorten_to(text, MAX_ECHO_CHARS)
}

/// `text` cut to at most `max` characters, `…` included when cut.
pub(crate) fn shorten_to(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A hint for a type mismatch, from serde's description of what was expected.
fn type_hint(expected: &str) -> &'static str {
    if expected.contains("size") {
        units::SIZE_HINT
    } else if expected.contains("duration") {
        units::DURATION_HINT
    } else if expected.contains("rate") {
        units::RATE_HINT
    } else if expected.contains("sequence") {
        "write a list: [a, b] or one `- item` per line"
    } else if expected.contains("struct") || expected.contains("map") {
        "write a mapping: `key: value` pairs indented under this key"
    } else {
        "see the scenario reference in scenarios/two-queue.yaml"
    }
}

/// Edit distance between two short strings, counting insertions, deletions, substitutions and
/// swaps of two adjacent characters as one edit each (optimal string alignment).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // d[i][j]: distance between the first i chars of a and the first j chars of b.
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// The closest candidate to a misspelt `word`, if one is close enough to be a likely typo:
/// within a third of the word's length (at least 1, at most 3 edits).
pub(crate) fn suggestion<'c>(word: &str, candidates: &[&'c str]) -> Option<&'c str> {
    let len = word.chars().count();
    let limit = (len / 3).clamp(1, 3);
    candidates
        .iter()
        // Lengths further apart than the limit are further apart in edits too: skip them before
        // the quadratic table (a megabyte-long word would need one the size of the word).
        .filter(|c| len.abs_diff(c.chars().count()) <= limit)
        .map(|c| (edit_distance(word, c), *c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Reads and validates a scenario file. The file stem is the default `name`.
pub fn load(path: &Path) -> Result<Scenario, Error> {
    load_with_overrides(path, &[])
}

/// Reads a scenario file, merges each `--set path.to.field=value` of `sets` over it (in order,
/// after every variant's own `set:`), and validates the result.
pub fn load_with_overrides(path: &Path, sets: &[String]) -> Result<Scenario, Error> {
    let shown = path.display().to_string();
    let text = read(path, &shown)?;
    load_str_with_overrides(&shown, &text, sets)
}

/// The text of a scenario file, or the error that says why it cannot be had.
fn read(path: &Path, shown: &str) -> Result<String, Error> {
    use std::io::ErrorKind as Io;
    let read_error = |e: std::io::Error| {
        let hint = match e.kind() {
            Io::NotFound => format!(
                "check the path, or use a shipped scenario by name: {} (`qsim list` describes them)",
                shipped::shipped_names().join(", ")
            ),
            Io::IsADirectory => "give a scenario file, e.g. scenarios/two-queue.yaml".to_string(),
            Io::PermissionDenied => "check the file's permissions".to_string(),
            _ => "check that the path names a readable scenario file".to_string(),
        };
        let mut err = Error::whole_file(
            ErrorKind::Read,
            shown,
            format!("cannot read the scenario file: {e}"),
            Some(hint),
        );
        err.0.io = Some(e);
        err
    };
    // A scenario is a page of YAML. The cap counts the bytes actually read, not the size the
    // file reports: a device (`/dev/zero`) or a pipe reports 0 and never ends.
    let bytes = read_capped(path, MAX_FILE_BYTES).map_err(|e| {
        if e.kind() == Io::FileTooLarge {
            Error::whole_file(
                ErrorKind::Read,
                shown,
                format!(
                    "the file holds more than {} ({MAX_FILE_BYTES} bytes), the most a scenario may \
                     hold; reading stopped there",
                    units::format_bytes(MAX_FILE_BYTES)
                ),
                Some(
                    "is this the right file? scenarios are short YAML files (a device such as \
                     /dev/zero never ends)"
                        .to_string(),
                ),
            )
        } else {
            read_error(e)
        }
    })?;
    String::from_utf8(bytes).map_err(|e| {
        Error::whole_file(
            ErrorKind::Read,
            shown,
            format!(
                "the file is not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
            Some("save the scenario as UTF-8".to_string()),
        )
    })
}

/// Reads at most `max` bytes of the file at `path` and returns them, or an error of kind
/// [`std::io::ErrorKind::FileTooLarge`] if the file holds more. The limit counts the bytes
/// actually read (through [`std::io::Read::take`], one byte past `max`), never the size the
/// file reports, so a device that reports 0 and never ends (`/dev/zero`, `/dev/urandom`) is
/// refused after `max + 1` bytes, and a pipe or FIFO is read to its end like a file. Any other
/// error is the one opening or reading gave (a directory fails with `IsADirectory`).
///
/// qsim reads every file a user names through it: scenario files ([`MAX_FILE_BYTES`]) and
/// results files for `qsim plot`.
pub fn read_capped(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!("more than {max} bytes"),
        ));
    }
    Ok(bytes)
}

/// Parses and validates scenario text; `source_name` names it in errors and its file stem is the
/// default `name`.
pub fn load_str(source_name: &str, text: &str) -> Result<Scenario, Error> {
    load_str_with_overrides(source_name, text, &[])
}

/// [`load_str`] with command-line overrides: each `path.to.field=value` of `sets` becomes a
/// partial scenario ([`set_document`]) deep-merged over the text, in order, with the same
/// [`Merge`](schema) as a variant's `set:`, then everything is validated as usual. The overrides
/// apply to the base and to every variant, after the variant's own `set:`: the command line has
/// the last word. An error in a value an override wrote names the argument (`--set ARG`), not a
/// line of the file.
pub fn load_str_with_overrides(
    source_name: &str,
    text: &str,
    sets: &[String],
) -> Result<Scenario, Error> {
    let mut source = Source::new(source_name, text);
    if source.outline.empty {
        return Err(Error::whole_file(
            ErrorKind::Empty,
            source_name,
            "the scenario file is empty".to_string(),
            Some(format!(
                "a scenario needs at least a device and a workload, for example:\n{MINIMAL_SCENARIO}"
            )),
        ));
    }
    let raw: serde_saphyr::Spanned<schema::RawScenario> =
        serde_saphyr::from_str_with_options(text, yaml_options())
            .map_err(|e| source.yaml_error(&e))?;
    // Each override is parsed as if it followed the file (and the overrides before it), so the
    // line of any value it holds tells which argument wrote it. YAML counts `\r`, `\r\n` and
    // `\n` as line breaks; counting `\r` and `\n` separately only ever overestimates.
    let mut first = text.bytes().filter(|b| matches!(b, b'\n' | b'\r')).count() as u64 + 2;
    let mut overrides = Vec::with_capacity(sets.len());
    for arg in sets {
        let doc = set_document(arg)?;
        let last = first + doc.lines().count() as u64 - 1;
        let lines = OverrideLines {
            label: set_label(arg),
            first,
            last,
        };
        let padded = format!("{}{doc}", "\n".repeat(first as usize - 1));
        let mut over_src = Source::new(&lines.label, &padded);
        over_src.overrides.push(lines.clone());
        let over: serde_saphyr::Spanned<schema::RawScenario> =
            serde_saphyr::from_str_with_options(&padded, yaml_options()).map_err(|e| {
                let mut err = over_src.yaml_error(&e);
                if err.kind() == ErrorKind::Syntax {
                    err.0.hint = Some(SET_VALUE_HINT.to_string());
                }
                err
            })?;
        source.overrides.push(lines);
        overrides.push(over.value);
        first = last + 2;
    }
    let stem = Path::new(source_name)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("scenario");
    validate::validate(raw, &source, stem, &overrides)
}

/// How errors name a `--set` argument: `--set ARG`, the argument shortened to
/// [`MAX_ECHO_CHARS`] characters.
fn set_label(arg: &str) -> String {
    format!("--set {}", shorten(arg))
}

/// How to write a `--set`.
const SET_HINT: &str = "write --set path.to.field=value, e.g. --set memory.ram=1GiB or \
                        --set kernel.patches=[dm-crypt-unplug]";

/// Hint for a `--set` value that is not valid YAML.
const SET_VALUE_HINT: &str = "the value is YAML, as in the file: close every `[` and `{`, and \
                              quote it if it contains `: ` or ` #` (--set 'description=\"a: b\"')";

/// Turns one command-line override `path.to.field=value` into the YAML document it stands for:
/// `memory.ram=1GiB` becomes `memory:\n  ram: 1GiB\n`. The value is kept verbatim as YAML
/// text, so it may be a unit (`1GiB`), a flow list (`[dm-crypt-unplug]`), a flow mapping
/// (`{kind: nvme}`) or a quoted string. Field names are plain (letters, digits, `_`, `-`);
/// a list cannot be indexed (lists are replaced whole, as in a variant's `set:`), and a value
/// cannot be empty, null or span lines (an override cannot unset a field).
pub fn set_document(arg: &str) -> Result<String, Error> {
    let label = set_label(arg);
    let bad = |message: String, hint: &str| {
        Error::whole_file(ErrorKind::Syntax, &label, message, Some(hint.to_string()))
    };
    let Some((path, value)) = arg.split_once('=') else {
        return Err(bad(
            "expected path.to.field=value, found no `=`".to_string(),
            SET_HINT,
        ));
    };
    let (path, value) = (path.trim(), value.trim());
    if path.is_empty() {
        return Err(bad("no field path before `=`".to_string(), SET_HINT));
    }
    let keys: Vec<&str> = path.split('.').collect();
    for key in &keys {
        if key.is_empty() {
            return Err(bad(
                format!("empty field name in `{path}`"),
                "separate field names with single dots: --set kernel.version=2.6.30",
            ));
        }
        if key.contains(['[', ']']) {
            return Err(bad(
                format!("`{path}` indexes a list"),
                "lists are replaced whole, as in a variant's `set:`: give the whole list, e.g. \
                 --set 'policies=[fifo, split]' or --set 'workloads=[{kind: fio, rate: 2000/s}]'",
            ));
        }
        if !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(bad(
                format!("`{key}` is not a field name"),
                "field names are letters, digits, `_` and `-`, joined by dots: memory.ram",
            ));
        }
    }
    if value.contains(['\n', '\r']) {
        return Err(bad(
            "the value spans several lines".to_string(),
            "give a one-line value; lists and mappings can be written inline: [a, b], \
             {kind: nvme}",
        ));
    }
    let cipher = keys.last() == Some(&"cipher");
    let null = matches!(value, "~" | "null" | "Null" | "NULL") && !cipher;
    if value.is_empty() || value.starts_with('#') || null {
        return Err(bad(
            format!("no value after `{path}=`"),
            "give the new value, e.g. --set memory.ram=1GiB; an override cannot unset a field \
             (edit the file for that)",
        ));
    }
    let mut doc = String::new();
    for (depth, key) in keys.iter().enumerate() {
        doc.push_str(&"  ".repeat(depth));
        doc.push_str(key);
        doc.push(':');
        if depth + 1 == keys.len() {
            doc.push(' ');
            doc.push_str(value);
        }
        doc.push('\n');
    }
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> Error {
        load_str("x.yaml", text).expect_err("should fail")
    }

    const BASE: &str = "device: { kind: nvme }\nworkloads:\n  - kind: fio\n";

    #[test]
    fn suggestions_catch_typos_only() {
        let fields = ["workers", "name", "workloads"];
        assert_eq!(suggestion("wrokers", &fields), Some("workers"));
        assert_eq!(suggestion("workload", &fields), Some("workloads"));
        assert_eq!(suggestion("zzz", &fields), None);
        assert_eq!(suggestion("splti", &["fifo", "split"]), Some("split"));
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("ab", "ba"), 1);
    }

    #[test]
    fn the_minimal_scenario_loads() {
        let s = load_str("dir/mini.yaml", MINIMAL_SCENARIO).unwrap();
        assert_eq!(s.name, "mini");
        load_str("x.yaml", BASE).unwrap();
    }

    #[test]
    fn typo_at_any_depth_is_located_with_a_suggestion() {
        let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    iodpeth: 4\n");
        assert_eq!(e.kind(), ErrorKind::UnknownField);
        assert_eq!((e.line(), e.column()), (Some(4), Some(5)));
        assert_eq!(e.path(), Some("workloads[0].iodpeth"));
        assert!(
            e.hint().unwrap().starts_with("did you mean `iodepth`?"),
            "{e}"
        );
        let e = err(&format!("{BASE}crypt:\n  hop_cots: 1us\n"));
        assert_eq!(e.path(), Some("crypt.hop_cots"));
        assert!(e.hint().unwrap().contains("`hop_cost`"));
        let e = err(&format!("{BASE}sed: 3\n"));
        assert!(e.hint().unwrap().contains("`seed`"), "{e}");
    }

    #[test]
    fn wrong_units_are_located_and_hinted() {
        let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    bs: 4kk\n");
        assert_eq!(e.kind(), ErrorKind::BadValue);
        assert_eq!((e.line(), e.column()), (Some(4), Some(9)));
        assert_eq!(e.path(), Some("workloads[0].bs"));
        assert!(e.message().contains("\"4kk\""));
        assert_eq!(e.hint(), Some(units::SIZE_HINT));
        let e = err(&format!("{BASE}duration: 10 parsecs\n"));
        assert_eq!(e.path(), Some("duration"));
        assert!(e.message().contains("parsecs"), "{e}");
        let e = err(&format!("{BASE}duration: 100\n"));
        assert!(e.message().contains("durations need a unit"), "{e}");
    }

    #[test]
    fn display_is_one_screen_with_hint_and_caret() {
        let e = err(
            "device: { kind: nvme }\nworkloads:\n  - kind: fio\n  - kind: fio\n    rate: -5/s\n",
        );
        let shown = e.to_string();
        let expected =
            "x.yaml:5:11: workloads[1].rate: rate must be positive, got \"-5/s\"\n  hint: ";
        assert!(shown.starts_with(expected), "{shown}");
        assert!(
            shown.ends_with("  5 |     rate: -5/s\n    |           ^"),
            "{shown}"
        );
    }

    #[test]
    fn empty_files_show_a_minimal_scenario() {
        for text in ["", "# nothing\n", "---\n"] {
            let e = err(text);
            assert_eq!(e.kind(), ErrorKind::Empty);
            assert_eq!(e.line(), None);
            assert_eq!(
                e.to_string().lines().next(),
                Some("x.yaml: the scenario file is empty")
            );
            assert!(e.hint().unwrap().contains("kind: nvme"));
        }
    }

    #[test]
    fn missing_files_name_the_path_reason_and_shipped_scenarios() {
        let e = load(Path::new("/nonexistent/dir/x.yaml")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Read);
        let shown = e.to_string();
        assert!(
            shown.starts_with(
                "/nonexistent/dir/x.yaml: cannot read the scenario file: No such file or directory"
            ),
            "{shown}"
        );
        assert!(shown.contains("two-queue"), "{shown}");
        assert!(std::error::Error::source(&e).is_some());
        assert_eq!(e.exit_code(), 2);
        let e = load(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Read);
        assert!(e.hint().unwrap().contains("scenario file"), "{e}");
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let e = err("device: { kind: hdd5401 }\nworkloads:\n  - kind: fio\n");
        assert_eq!(e.kind(), ErrorKind::UnknownName);
        assert_eq!(e.path(), Some("device.kind"));
        assert_eq!(e.message(), "unknown device kind `hdd5401`");
        assert!(
            e.hint().unwrap().starts_with("did you mean `hdd5400`?"),
            "{e}"
        );
        let e = err(&format!("{BASE}crypt: {{ cipher: aes }}\n"));
        assert!(
            e.hint().unwrap().contains("aes-2009, aes-ni, vaes, null"),
            "{e}"
        );
        let e = err("device: { kind: nvme }\nworkloads:\n  - kind: foo\n");
        assert_eq!(e.message(), "unknown workload kind `foo`");
        assert!(e.hint().unwrap().contains("fio, gitk, buffered-writer"));
    }

    #[test]
    fn syntax_errors_are_located() {
        let e = err("device: { kind: nvme\nworkloads: [\n");
        assert!(e.line().is_some(), "{e}");
        let e = err("name: a: b\n");
        assert_eq!(e.kind(), ErrorKind::Syntax);
        assert_eq!(e.line(), Some(1));
        let e = err("device:\n\tkind: nvme\n");
        assert_eq!(e.kind(), ErrorKind::Syntax);
        let e = err("just words\n");
        assert_eq!(
            e.message(),
            "expected a mapping of keys to values, got \"just words\""
        );
        let e = err(&format!("{BASE}kernel: 250\n"));
        assert_eq!(
            (e.path(), e.message()),
            (Some("kernel"), "expected a mapping, got \"250\"")
        );
        let e = err(&format!("{BASE}policies: fifo\n"));
        assert_eq!(e.message(), "expected a list, got \"fifo\"");
        let e = err("device: { kind: nvme\nworkloads: [\n");
        assert!(e.hint().unwrap().contains("left unclosed"), "{e}");
        let e = err(&format!("{BASE}seed: 1\nseed: 2\n"));
        assert!(e.message().contains("duplicate key `seed`"), "{e}");
    }

    fn sets(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_set_becomes_a_nested_yaml_document_with_the_value_verbatim() {
        assert_eq!(set_document("seed=5").unwrap(), "seed: 5\n");
        assert_eq!(
            set_document("memory.ram=1GiB").unwrap(),
            "memory:\n  ram: 1GiB\n"
        );
        assert_eq!(
            set_document("a.b.c=value").unwrap(),
            "a:\n  b:\n    c: value\n"
        );
        assert_eq!(
            set_document("kernel.patches=[dm-crypt-unplug, force-highorder]").unwrap(),
            "kernel:\n  patches: [dm-crypt-unplug, force-highorder]\n"
        );
        assert_eq!(
            set_document("description=\"a: b # c\"").unwrap(),
            "description: \"a: b # c\"\n"
        );
        // Split at the first `=`; spaces around the path and the value are dropped.
        assert_eq!(
            set_document(" description = x=y ").unwrap(),
            "description: x=y\n"
        );
        assert_eq!(
            set_document("crypt.cipher=null").unwrap(),
            "crypt:\n  cipher: null\n"
        );
    }

    #[test]
    fn a_malformed_set_is_a_syntax_error_naming_the_argument() {
        for (arg, message) in [
            ("=1", "no field path before `=`"),
            ("a..b=1", "empty field name in `a..b`"),
            (".a=1", "empty field name in `.a`"),
            ("a.=1", "empty field name in `a.`"),
            ("memory.ram", "expected path.to.field=value, found no `=`"),
            ("workloads[0].rate=1", "`workloads[0].rate` indexes a list"),
            ("a b=1", "`a b` is not a field name"),
            ("memory.ram=", "no value after `memory.ram=`"),
            ("seed=~", "no value after `seed=`"),
            ("seed=# five", "no value after `seed=`"),
            ("seed=1\nname: x", "the value spans several lines"),
        ] {
            let e = set_document(arg).expect_err(arg);
            assert_eq!(e.kind(), ErrorKind::Syntax, "{arg}");
            assert_eq!(e.file(), format!("--set {arg}"));
            assert_eq!((e.line(), e.message()), (None, message), "{arg}");
            assert!(e.hint().is_some());
            assert_eq!(e.exit_code(), 2);
            let e = load_str_with_overrides("x.yaml", BASE, &sets(&[arg])).unwrap_err();
            assert_eq!(e.message(), message, "{arg}");
        }
    }

    #[test]
    fn sets_merge_over_the_file_in_order() {
        let s = load_str_with_overrides(
            "x.yaml",
            &format!("{BASE}seed: 3\ncpus: 2\nkernel: {{ hz: 1000 }}\n"),
            &sets(&[
                "seed=7",
                "kernel.version=2.6.30",
                "kernel.patches=[dm-crypt-unplug]",
                "memory.ram=1GiB",
                "replications=4",
                "seed=8",
                "name='my run'",
            ]),
        )
        .unwrap();
        assert_eq!(
            (s.seed, s.cpus, s.kernel.hz),
            (8, 2, 1000),
            "last wins; rest kept"
        );
        assert_eq!(s.kernel.version, KernelVersion::V2_6_30);
        assert_eq!(s.kernel.patches, ["dm-crypt-unplug"]);
        assert!(s.crypt.unplug_after_submit);
        assert_eq!(s.memory.map(|m| m.ram), Some(1 << 30));
        assert_eq!((s.replications, s.name.as_str()), (4, "my run"));
        // A device of another kind replaces the file's whole.
        let s = load_str_with_overrides(
            "x.yaml",
            "device: { kind: hdd5400, seek_min: 3ms }\nworkloads: [{ kind: fio }]\n",
            &sets(&["device.kind=nvme"]),
        )
        .unwrap();
        assert!(matches!(s.device, DeviceConfig::Nvme(_)));
    }

    const VARIANTS: &str = "device: { kind: nvme }\nworkloads: [{ kind: fio }]\ncpus: 2\n\
                            kernel: { version: 2.6.31 }\nvariants:\n  - name: old\n    \
                            set: { kernel: { version: 2.6.30 }, cpus: 3, replications: 5 }\n  \
                            - name: plain\n    set: { cpus: 4 }\n";

    #[test]
    fn precedence_is_file_then_variant_set_then_the_command_line() {
        let s = load_str("x.yaml", VARIANTS).unwrap();
        let [old, plain] = &s.variants[..] else {
            panic!("two variants")
        };
        assert_eq!((s.cpus, s.replications), (2, 10));
        assert_eq!((old.scenario.cpus, old.scenario.replications), (3, 5));
        assert_eq!(old.scenario.kernel.version, KernelVersion::V2_6_30);
        assert_eq!(plain.scenario.kernel.version, KernelVersion::V2_6_31);
        let s = load_str_with_overrides(
            "x.yaml",
            VARIANTS,
            &sets(&["kernel.version=2.6.37", "replications=7"]),
        )
        .unwrap();
        for sc in std::iter::once(&s).chain(s.variants.iter().map(|v| &*v.scenario)) {
            assert_eq!(sc.kernel.version, KernelVersion::V2_6_37, "--set wins");
            assert_eq!(sc.replications, 7);
        }
        let cpus: Vec<u32> = s.variants.iter().map(|v| v.scenario.cpus).collect();
        assert_eq!((s.cpus, cpus), (2, vec![3, 4]), "what --set leaves alone");
    }

    #[test]
    fn an_error_in_a_set_value_names_the_argument_not_the_file() {
        let e = load_str_with_overrides(
            "x.yaml",
            BASE,
            &sets(&["seed=1", "memory.ram=1GB", "cpus=2"]),
        )
        .unwrap_err();
        assert_eq!(e.file(), "--set memory.ram=1GB");
        assert_eq!(
            (e.line(), e.column(), e.path()),
            (None, None, Some("memory.ram"))
        );
        assert!(e.hint().is_some());
        let shown = e.to_string();
        assert!(
            shown.starts_with("--set memory.ram=1GB: memory.ram: must be a whole number"),
            "{shown}"
        );
        assert!(!shown.contains(" | "), "no source line: {shown}");
        // A serde error (a unit, a field name) names it as well, with the same hints as a file.
        let e = load_str_with_overrides("x.yaml", BASE, &sets(&["memory.ram=banana"])).unwrap_err();
        assert_eq!(
            (e.file(), e.path()),
            ("--set memory.ram=banana", Some("memory.ram"))
        );
        assert_eq!(e.hint(), Some(units::SIZE_HINT));
        let e = load_str_with_overrides("x.yaml", BASE, &sets(&["memory.rm=1GiB"])).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnknownField);
        assert_eq!((e.file(), e.line()), ("--set memory.rm=1GiB", None));
        assert!(e.hint().unwrap().starts_with("did you mean `ram`?"), "{e}");
        let e = load_str_with_overrides("x.yaml", BASE, &sets(&["sede=1"])).unwrap_err();
        assert!(e.hint().unwrap().contains("`seed`"), "{e}");
        let e = load_str_with_overrides("x.yaml", BASE, &sets(&["policies=[fifo"])).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Syntax);
        assert_eq!(e.hint(), Some(SET_VALUE_HINT));
        // In a variant too, and whichever of several --sets wrote it.
        let e = load_str_with_overrides(
            "x.yaml",
            VARIANTS,
            &sets(&["cpus=2", "kernel.patches=[dm-crypt-unplug, nope]"]),
        )
        .unwrap_err();
        assert_eq!(e.file(), "--set kernel.patches=[dm-crypt-unplug, nope]");
        assert_eq!(e.path(), Some("kernel.patches[1]"));
    }

    #[test]
    fn a_file_value_that_a_set_makes_wrong_keeps_its_line_and_names_the_set() {
        let text = format!("{BASE}warmup: 2s\n");
        let e = load_str_with_overrides("x.yaml", &text, &sets(&["duration=1s"])).unwrap_err();
        assert_eq!(
            (e.file(), e.line(), e.path()),
            ("x.yaml", Some(4), Some("warmup"))
        );
        assert!(
            e.message()
                .starts_with("with --set duration=1s: the warm-up"),
            "{e}"
        );
        // Without overrides nothing changes.
        let e = load_str("x.yaml", &format!("{text}duration: 1s\n")).unwrap_err();
        assert!(e.message().starts_with("the warm-up"), "{e}");
    }

    #[test]
    fn replications_default_to_ten_and_are_checked() {
        assert_eq!(load_str("x.yaml", BASE).unwrap().replications, 10);
        let s = load_str("x.yaml", &format!("{BASE}replications: 1000\n")).unwrap();
        assert_eq!(s.replications, MAX_REPLICATIONS);
        for bad in ["0", "1001"] {
            let e = err(&format!("{BASE}replications: {bad}\n"));
            assert_eq!(
                (e.kind(), e.path(), e.line()),
                (ErrorKind::BadValue, Some("replications"), Some(4))
            );
            assert!(e.hint().unwrap().contains("1 to 1000"), "{e}");
        }
        let e = err(&format!("{BASE}replications: -1\n"));
        assert_eq!(e.path(), Some("replications"));
        let e = err(&VARIANTS.replace("replications: 5", "replications: 0"));
        assert_eq!(e.path(), Some("variants[0].set.replications"));
    }

    #[test]
    fn type_mismatches_echo_the_value() {
        let e = err(&format!("{BASE}cpus: -2\n"));
        assert_eq!(
            e.message(),
            "expected a whole number from 1 to 1024, got \"-2\""
        );
        assert_eq!(e.path(), Some("cpus"));
        let e = err(&format!("{BASE}crypt: {{ unplug_after_submit: maybe }}\n"));
        assert!(e.message().contains("true or false"), "{e}");
    }

    #[test]
    fn a_whole_number_of_the_wrong_type_is_hinted_with_the_fields_own_range() {
        // Issue 11 case 11: `cpus: -1` and `cpus: 4294967296` hinted 0 to 4294967295.
        for bad in ["-1", "4294967296"] {
            let e = err(&format!("{BASE}cpus: {bad}\n"));
            assert_eq!(
                e.message(),
                format!("expected a whole number from 1 to 1024, got \"{bad}\"")
            );
            assert_eq!(
                e.hint(),
                Some("write a whole number from 1 to 1024, without a unit")
            );
            let e = err(&format!("{BASE}cpus: 1025\n"));
            assert!(e.message().contains("between 1 and 1024"), "{e}");
        }
        for (field, range) in [
            ("workloads:\n  - kind: fio\n    iodepth", "from 1 to 65536"),
            ("workloads:\n  - kind: fio\n    rwmixread", "from 0 to 100"),
            (
                "workloads:\n  - kind: fio\n    number_ios",
                "from 1 to 18446744073709551615",
            ),
            ("block:\n  nr_requests", "from 4 to 100000"),
            (
                "memory:\n  ram: 1GiB\n  atomic:\n    - rate: 5/s\n      burst",
                "from 1 to 100000",
            ),
            (
                "memory:\n  ram: 1GiB\n  min_free_kbytes",
                "from 128 to ram/32 (in kB)",
            ),
            ("replications", "from 1 to 1000"),
            ("seed", "from 0 to 18446744073709551615"),
        ] {
            let e = err(&format!(
                "device: {{ kind: nvme }}\n{field}: -1\nworkloads: [{{kind: fio}}]\n"
            )
            .replace("workloads: [{kind: fio}]\nworkloads", "workloads"));
            assert!(e.hint().unwrap().contains(range), "{field}: {e}");
        }
        let e = err(&format!("{BASE}kernel: {{ hz: -1 }}\n"));
        assert_eq!(
            e.hint(),
            Some("write one of 100, 250, 300, 1000 (CONFIG_HZ)")
        );
        // Inside a variant's `set:` and in a --set, the same range.
        let e = err(&VARIANTS.replace("cpus: 4 }", "cpus: -1 }"));
        assert_eq!(e.path(), Some("variants[1].set.cpus"));
        assert!(e.message().contains("from 1 to 1024"), "{e}");
        let e = load_str_with_overrides("x.yaml", BASE, &sets(&["cpus=-1"])).unwrap_err();
        assert!(e.message().contains("from 1 to 1024"), "{e}");
        assert_eq!(
            field_key("variants[12].set.workloads[3].think.kind"),
            "workloads[].think.kind"
        );
        assert_eq!(field_key("memory.atomic[0].burst"), "memory.atomic[].burst");
        assert_eq!(field_key("cpus"), "cpus");
    }

    #[test]
    fn a_distribution_kind_is_not_called_a_workload_kind() {
        let e = err(
            "device: { kind: nvme }\nworkloads:\n  - kind: fio\n    think: { kind: normal, mean: 1ms }\n",
        );
        assert_eq!(e.message(), "unknown distribution kind `normal`");
        assert!(e.hint().unwrap().contains("exponential"), "{e}");
        let e = err(&format!(
            "{BASE}variants:\n  - name: a\n    set: {{ workloads: [{{ kind: fiio }}] }}\n"
        ));
        assert_eq!(e.message(), "unknown workload kind `fiio`");
    }

    #[test]
    fn a_breached_yaml_budget_is_said_in_words_with_no_long_line() {
        // Issue 11 case 11: `budget breached: Nodes { nodes: 250001 }`, an indentation hint and
        // the whole multi-megabyte line echoed.
        let values = "1ms, ".repeat(MAX_YAML_NODES);
        let text = format!("{BASE}crypt: {{ cost: {{ kind: empirical, values: [{values}] }} }}\n");
        let e = err(&text);
        assert_eq!(e.kind(), ErrorKind::Syntax);
        assert!(
            e.message()
                .starts_with("the file holds more than 250000 YAML values"),
            "{}",
            e.message()
        );
        assert!(!e.message().contains("Nodes"), "{e}");
        let hint = e.hint().unwrap();
        assert!(
            hint.contains("at most 100000 values") && !hint.contains("indentation"),
            "{hint}"
        );
        let shown = e.to_string();
        assert!(
            shown
                .lines()
                .all(|l| l.chars().count() <= MAX_ECHO_CHARS + 20),
            "{shown}"
        );
        assert!(shown.len() < 2000, "{} chars", shown.len());
    }

    #[test]
    fn an_empirical_list_longer_than_its_documented_limit_says_the_limit() {
        let values = "1ms, ".repeat(MAX_EMPIRICAL_VALUES + 1);
        let e = err(&format!(
            "{BASE}crypt: {{ cost: {{ kind: empirical, values: [{values}] }} }}\n"
        ));
        assert_eq!(e.path(), Some("crypt.cost.values"));
        assert_eq!(e.message(), "needs 1 to 100000 values, got 100001");
        let values = "1ms, ".repeat(MAX_EMPIRICAL_VALUES);
        load_str(
            "x.yaml",
            &format!("{BASE}crypt: {{ cost: {{ kind: empirical, values: [{values}] }} }}\n"),
        )
        .unwrap();
    }

    #[test]
    fn a_second_document_is_named_in_the_users_words() {
        let e = err(&format!("{BASE}---\nname: other\n"));
        assert_eq!(e.kind(), ErrorKind::Syntax);
        assert!(
            e.message().contains("a scenario file holds one document"),
            "{e}"
        );
        assert!(e.hint().unwrap().contains("remove the `---` line"), "{e}");
        assert!(!e.to_string().contains("from_str_multiple"), "{e}");
    }

    #[test]
    fn long_values_and_lines_are_echoed_shortened() {
        let long = "k".repeat(1 << 20);
        for text in [
            format!("device: {{ kind: nvme }}\nworkloads:\n  - kind: fio\n    bs: 4{long}\n"),
            format!("{BASE}{long}: 1\n"),
            format!("{BASE}cpus: {long}\n"),
            format!("{BASE}policies: [{long}]\n"),
            format!("{BASE}duration: 1{long}\n"),
            format!("{BASE}device: {{ kind: {long} }}\n"),
            format!("{BASE}name: [{long}\n"),
        ] {
            let shown = err(&text).to_string();
            assert!(
                shown.len() < 2500,
                "{} chars: {}",
                shown.len(),
                &shown[..300]
            );
            // At most MAX_ECHO_CHARS of the value, plus the place and our own words.
            for line in shown.lines() {
                assert!(line.chars().count() <= MAX_ECHO_CHARS + 150, "{line}");
            }
        }
    }

    #[test]
    fn a_long_line_is_shown_as_a_window_with_the_caret_under_the_column() {
        let line = format!("{}X{}", "a".repeat(1000), "b".repeat(1000));
        let (shown, caret) = line_window(&line, 1001);
        assert_eq!(shown.chars().count(), MAX_ECHO_CHARS);
        assert_eq!(shown.chars().nth(caret as usize - 1), Some('X'));
        let (shown, caret) = line_window(&line, 1);
        assert!(shown.starts_with('a') && shown.ends_with('…'));
        assert_eq!(caret, 1);
        let (shown, caret) = line_window(&line, 2001);
        assert!(shown.starts_with('…') && shown.ends_with('b'));
        assert_eq!(shown.chars().nth(caret as usize - 1), Some('b'));
        assert_eq!(line_window("short", 3), ("short".to_string(), 3));
    }

    /// A fresh path in the temporary directory for this test.
    fn temp_path(tag: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("qsim-scenario-{}-{tag}", std::process::id()))
    }

    #[test]
    fn reads_are_capped_by_bytes_read_not_by_reported_size() {
        let path = temp_path("cap");
        std::fs::write(&path, vec![b'#'; 1000]).unwrap();
        assert_eq!(read_capped(&path, 1000).unwrap().len(), 1000);
        let e = read_capped(&path, 999).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::FileTooLarge);
        std::fs::remove_file(&path).unwrap();
        // A device reports size 0 and never ends (issue 11 case 8: `qsim run /dev/zero`).
        let zero = Path::new("/dev/zero");
        if zero.exists() {
            let e = read_capped(zero, 4096).unwrap_err();
            assert_eq!(e.kind(), std::io::ErrorKind::FileTooLarge);
            let e = load(zero).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Read);
            assert!(
                e.message()
                    .starts_with("the file holds more than 16MiB (16777216 bytes)"),
                "{e}"
            );
        }
        let e = read_capped(Path::new(env!("CARGO_MANIFEST_DIR")), 10).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::IsADirectory);
    }
}
