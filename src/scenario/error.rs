//! The loader's one error type: [`Error`] (file, line and column, field path, message, hint)
//! and [`ErrorKind`]; [`Source`], the text being loaded, which builds located errors and turns
//! serde-saphyr's errors into them; and the helpers their messages share (shortening echoed
//! values, suggesting the closest valid name).

use super::outline::{Outline, outline};
use super::{MAX_YAML_NODES, MINIMAL_SCENARIO, units};
use serde_saphyr::{Location, MessageFormatter};
use std::fmt;

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
pub struct Error(pub(crate) Box<Inner>);

/// The fields of an [`Error`], boxed so that `Result<_, Error>` stays one pointer wide.
#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) kind: ErrorKind,
    pub(crate) file: String,
    pub(crate) line: Option<u64>,
    pub(crate) column: Option<u64>,
    pub(crate) path: Option<String>,
    pub(crate) message: String,
    pub(crate) hint: Option<String>,
    pub(crate) source_line: Option<String>,
    /// Column of the caret under `source_line` (which may be a window of a long line).
    pub(crate) caret: Option<u64>,
    pub(crate) io: Option<std::io::Error>,
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
    pub(crate) fn whole_file(
        kind: ErrorKind,
        file: &str,
        message: String,
        hint: Option<String>,
    ) -> Self {
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
    pub outline: Outline,
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
            outline: outline(text),
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
    pub(crate) fn yaml_error(&self, err: &serde_saphyr::Error) -> Error {
        use serde_saphyr::Error as Y;
        let mut inner = err.without_snippet();
        while let Y::AliasError { error, .. } = inner {
            inner = error.without_snippet();
        }
        let loc = err.location().or_else(|| inner.location());
        let at = |outermost: bool| self.path_at(loc, outermost);
        match inner {
            Y::SerdeUnknownField {
                field, expected, ..
            } => self.unknown_field(loc, field, expected),
            Y::SerdeUnknownVariant {
                variant, expected, ..
            } => self.unknown_variant(loc, variant, expected),
            Y::SerdeMissingField { field, .. } => self.error(
                ErrorKind::Missing,
                loc,
                &at(true),
                format!("missing field `{field}`"),
                Some(format!("add `{field}:` to this mapping")),
            ),
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
                let shown = shorten(&self.text_at(loc));
                let message = format!("expected {what}, got {shown:?}");
                self.error(ErrorKind::BadValue, loc, &path, message, Some(hint))
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
            Y::Unexpected { expected, .. } => self.unexpected(loc, expected),
            other => self.document_error(loc, other),
        }
    }

    /// The field path at `loc` ([`super::outline::Outline::path_at`]), or `""`.
    fn path_at(&self, loc: Option<Location>, outermost: bool) -> String {
        loc.and_then(|l| self.outline.path_at(l.line(), l.column(), outermost))
            .unwrap_or("")
            .to_string()
    }

    /// The scalar text at `loc`, or `""`.
    fn text_at(&self, loc: Option<Location>) -> String {
        loc.map(|l| self.token_at(l)).unwrap_or_default()
    }

    /// A field the mapping does not take, with the closest valid one.
    fn unknown_field(&self, loc: Option<Location>, field: &str, expected: &[&str]) -> Error {
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
            &self.path_at(loc, false),
            format!("unknown field `{}`", shorten(field)),
            Some(hint),
        )
    }

    /// A name outside its closed set (a device kind, a cipher, …), with the valid ones.
    fn unknown_variant(&self, loc: Option<Location>, variant: &str, expected: &[&str]) -> Error {
        let path = self.path_at(loc, false);
        let what = name_class(&path);
        let list = expected.join(", ");
        let mut hint = suggestion(variant, expected)
            .map(|s| format!("did you mean `{s}`? valid {what}s: {list}"))
            .unwrap_or_else(|| format!("valid {what}s: {list}"));
        if variant.contains(char::is_whitespace) {
            hint.push_str("\nthe value runs on into the next line: is a `{` or `[` left unclosed?");
        }
        self.error(
            ErrorKind::UnknownName,
            loc,
            &path,
            format!("unknown {what} `{}`", shorten(variant)),
            Some(hint),
        )
    }

    /// A node of the wrong shape: a scalar where a mapping or a list belongs, or the reverse.
    fn unexpected(&self, loc: Option<Location>, expected: &str) -> Error {
        let path = self.path_at(loc, false);
        let (noun, hint) = match expected {
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
                "write one plain value here; quote it if it contains `: ` or ` #`".to_string(),
            ),
            other => (other, SYNTAX_HINT.to_string()),
        };
        self.error(
            ErrorKind::BadValue,
            loc,
            &path,
            format!("expected {noun}, got {:?}", shorten(&self.text_at(loc))),
            Some(hint),
        )
    }

    /// An error of the document as a whole: a repeated key, a breached budget, a second
    /// document, or YAML that does not parse.
    fn document_error(&self, loc: Option<Location>, err: &serde_saphyr::Error) -> Error {
        use serde_saphyr::Error as Y;
        match err {
            Y::DuplicateMappingKey { key, .. } => self.error(
                ErrorKind::Syntax,
                loc,
                &self.path_at(loc, false),
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
            Y::NonFiniteFloat { value, .. } => {
                let path = self.path_at(loc, false);
                let key = field_key(&path);
                let field = key.rsplit('.').next().unwrap_or("");
                let hint = if matches!(field, "duration" | "warmup") {
                    format!("the {field} must be a finite time like `60s`")
                } else {
                    "write a finite value in the field's unit, e.g. 60s, 4k or 2000/s".to_string()
                };
                self.error(
                    ErrorKind::BadValue,
                    loc,
                    &path,
                    format!(
                        "`{}` is not a finite number: qsim takes no NaN or infinity",
                        shorten(value)
                    ),
                    Some(hint),
                )
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
                    &self.path_at(loc, false),
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
pub(crate) fn line_window(line: &str, column: u64) -> (String, u64) {
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
                super::distribution::MAX_EMPIRICAL_VALUES
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
                let values: Vec<String> = super::kernel::HZ_VALUES
                    .iter()
                    .map(u32::to_string)
                    .collect();
                return (
                    "a whole number".to_string(),
                    format!("write one of {} (CONFIG_HZ)", values.join(", ")),
                );
            }
            if key == "memory.min_free_kbytes" {
                return whole("from 128 to ram/32 (in kB)");
            }
            let (lo, hi) = super::check::int_range_of(path).unwrap_or(match ty {
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
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
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
