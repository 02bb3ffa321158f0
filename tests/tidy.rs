//! Style as a test, after the idea of TigerBeetle's `src/tidy.zig`: the rules a reviewer would
//! otherwise have to remember are checked on every `cargo test`, by reading `src/**/*.rs` with a
//! small scanner (no parser crate).
//!
//! # Rules
//!
//! - **Layering.** Every reference a top-level module makes to another one (`crate::<top>` in a
//!   `use` line or in a path, `$crate::<top>` in a macro, and `super::` that climbs out of the
//!   top-level module) must be allowed by [`LAYERS`]: `engine`, `stats` → `model` → `scenario`
//!   → `report` → `plot` → `experiment` → `calibrate` → `validate` → `serve` → `cli`, each
//!   importing only modules before it, plus the support modules `output`, `error`, `theory`, `torture` and `fuzzing`
//!   with their own rows. Test code is not checked: an item under `#[cfg(test)]`, a module file
//!   declared by `#[cfg(test)] mod x;`, and any file named `tests.rs`. The crate roots
//!   (`lib.rs`, `main.rs`) may name every module.
//! - **Sizes.** No file in `src/` over [`MAX_FILE_LINES`] lines; no function over
//!   [`MAX_FN_LINES`] lines (from its `fn` line to its closing brace) outside test code.
//! - **Tables.** A data table may be exempt from both size rules by a line `// tidy: table`
//!   right before the item (attributes and doc comments may sit between). The exemption is
//!   narrow: it only applies to a `const`, `static` or `fn` whose body is a single expression
//!   with no `let`, `for`, `while` or `loop` in it (a literal list, perhaps of closures); a
//!   marker on anything else is itself a failure. Exempt lines do not count toward the file.
//!
//! # Known offenders
//!
//! [`KNOWN_LONG`] and [`KNOWN_EDGES`] list what broke the rules when this test was written,
//! while other branches were fixing it. A listed offender passes; one that is no longer an
//! offender fails the test until it is taken off the list, so the lists can only shrink.
//!
//! The scanner blanks comments, string literals and character literals before it looks at
//! braces and paths (see [`mask`]), so a `{` in a string or a `crate::x` in a doc comment does
//! not count. It does not expand macros and does not resolve `use` re-exports: a reference is
//! what the source spells.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Longest file in `src/`, lines.
const MAX_FILE_LINES: usize = 1000;
/// Longest function outside test code, lines.
const MAX_FN_LINES: usize = 80;
/// The marker line that exempts the next item as a data table.
const TABLE_MARKER: &str = "// tidy: table";

/// Every layer but the command line: what `cli` and the test-support modules `torture` and
/// `fuzzing` (which feed the page server hostile requests) may import.
const BELOW_CLI_AND_SERVE: &[&str] = &[
    "textfit",
    "engine",
    "stats",
    "model",
    "theory",
    "scenario",
    "output",
    "error",
    "report",
    "plot",
    "experiment",
    "calibrate",
    "validate",
    "serve",
];

/// `layers` without its last entry.
const fn all_but_last(layers: &'static [&'static str]) -> &'static [&'static str] {
    match layers.split_last() {
        Some((_, below)) => below,
        None => &[],
    }
}

/// Every layer below the page server: what `serve` may import.
const BELOW_SERVE: &[&str] = all_but_last(BELOW_CLI_AND_SERVE);

/// Every layer below `validate`: what `validate` may import.
const BELOW_VALIDATE: &[&str] = all_but_last(BELOW_SERVE);

/// Each top-level module and the top-level modules it may import, each only modules listed
/// before it (so the allowed imports form no circle).
const LAYERS: &[(&str, &[&str])] = &[
    ("textfit", &[]),
    ("engine", &["textfit"]),
    ("stats", &["textfit", "engine"]),
    ("model", &["textfit", "engine", "stats"]),
    ("theory", &["textfit", "engine", "stats", "model"]),
    ("scenario", &["textfit", "engine", "stats", "model"]),
    (
        "output",
        &["textfit", "engine", "stats", "model", "scenario"],
    ),
    (
        "error",
        &["textfit", "engine", "stats", "model", "scenario", "output"],
    ),
    (
        "report",
        &[
            "textfit", "engine", "stats", "model", "scenario", "output", "error",
        ],
    ),
    (
        "plot",
        &[
            "textfit", "engine", "stats", "model", "scenario", "output", "error", "report",
        ],
    ),
    (
        "experiment",
        &[
            "textfit", "engine", "stats", "model", "scenario", "output", "error", "report", "plot",
        ],
    ),
    (
        "calibrate",
        &[
            "textfit",
            "engine",
            "stats",
            "model",
            "scenario",
            "output",
            "error",
            "report",
            "plot",
            "experiment",
        ],
    ),
    ("validate", BELOW_VALIDATE),
    ("serve", BELOW_SERVE),
    ("cli", BELOW_CLI_AND_SERVE),
    // Test support: may use anything but the command line.
    ("torture", BELOW_CLI_AND_SERVE),
    ("fuzzing", BELOW_CLI_AND_SERVE),
];

/// Files and functions over the size limits when this test was written: (file, function or
/// `""` for the whole file, lines then). Each must still be over its limit.
const KNOWN_LONG: &[(&str, &str, usize)] = &[];

/// Forbidden imports found when this test was written: (file, from module, to module). Each
/// must still be there.
const KNOWN_EDGES: &[(&str, &str, &str)] = &[];

// ---------------------------------------------------------------------------------------------
// The scanner

/// `src` with every comment, string literal and character literal replaced by spaces (line
/// breaks kept, one output char per input char), so that braces, `;` and paths in what is left
/// are code. Lifetimes and loop labels (`'a`) are kept.
fn mask(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < c.len() {
        let end = literal_end(&c, i).min(c.len());
        if end > i {
            out.extend(
                c[i..end]
                    .iter()
                    .map(|&x| if x == '\n' { '\n' } else { ' ' }),
            );
            i = end;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// Where the comment or literal starting at `c[i]` ends (exclusive), or `i` if none starts
/// there.
fn literal_end(c: &[char], i: usize) -> usize {
    let at = |k: usize| c.get(k).copied().unwrap_or('\0');
    let after_ident = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
    match (c[i], at(i + 1)) {
        // Line comment (doc comments too).
        ('/', '/') => (i..c.len()).find(|&k| c[k] == '\n').unwrap_or(c.len()),
        ('/', '*') => block_comment_end(c, i),
        // A string (b"..", c"..": the prefix letter is kept, it is harmless).
        ('"', _) => string_end(c, i + 1),
        ('\'', _) => char_end(c, i),
        ('r' | 'b' | 'c', _) if !after_ident => raw_string_end(c, i),
        _ => i,
    }
}

/// The end of the block comment opening at `i`, nested as Rust nests them.
fn block_comment_end(c: &[char], mut i: usize) -> usize {
    let mut depth = 0;
    while i < c.len() {
        match (c[i], c.get(i + 1)) {
            ('/', Some('*')) => {
                depth += 1;
                i += 2;
            }
            ('*', Some('/')) => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    i
}

/// The end of the string whose contents start at `i` (just after its opening quote).
fn string_end(c: &[char], mut i: usize) -> usize {
    while i < c.len() {
        match c[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// The end of the character literal at `i` (`'x'`, `'\n'`, `'\''`, `'\u{1F600}'`), or `i` for
/// a lifetime or a label.
fn char_end(c: &[char], i: usize) -> usize {
    let at = |k: usize| c.get(k).copied().unwrap_or('\0');
    if at(i + 1) == '\\' {
        let close = (i + 3..c.len()).find(|&k| c[k] == '\'' || c[k] == '\n');
        return close.map_or(c.len(), |k| k + 1);
    }
    if at(i + 2) == '\'' && at(i + 1) != '\n' {
        return i + 3;
    }
    i
}

/// The end of the raw string (`r".."`, `r#".."#`, `br".."`, `cr".."`) at `i`, or `i` if none
/// starts there (`r#gen` is a raw identifier).
fn raw_string_end(c: &[char], i: usize) -> usize {
    let at = |k: usize| c.get(k).copied().unwrap_or('\0');
    let start = match (c[i], at(i + 1)) {
        ('r', _) => i + 1,
        (_, 'r') => i + 2,
        _ => return i,
    };
    let hashes = (start..c.len()).take_while(|&k| c[k] == '#').count();
    if at(start + hashes) != '"' {
        return i;
    }
    let closes = |k: usize| c[k] == '"' && (1..=hashes).all(|h| at(k + h) == '#');
    (start + hashes + 1..c.len())
        .find(|&k| closes(k))
        .map_or(c.len(), |k| k + 1 + hashes)
}

/// Byte offsets → 1-based line numbers.
struct Lines(Vec<usize>);

impl Lines {
    fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines(starts)
    }
    fn of(&self, offset: usize) -> usize {
        self.0.partition_point(|&s| s <= offset)
    }
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// The identifier starting at `i` (after white space), and the offset after it.
fn ident_at(s: &[u8], mut i: usize) -> Option<(String, usize)> {
    while i < s.len() && s[i].is_ascii_whitespace() {
        i += 1;
    }
    let start = i;
    while i < s.len() && is_ident(s[i]) {
        i += 1;
    }
    (i > start).then(|| (String::from_utf8_lossy(&s[start..i]).into_owned(), i))
}

/// Whether the word `w` stands alone at byte `i` of `s`.
fn word_at(s: &[u8], i: usize, w: &str) -> bool {
    let end = i + w.len();
    s[i..].starts_with(w.as_bytes())
        && (i == 0 || !is_ident(s[i - 1]))
        && (end >= s.len() || !is_ident(s[end]))
}

/// The end (offset of the `;` or of the closing `}`) of the item or statement starting at
/// `start` of masked text `s`: the first `;` outside brackets, or the `}` closing the first `{`
/// met outside parentheses and square brackets.
fn item_end(s: &[u8], start: usize) -> usize {
    let (mut round, mut square, mut curly) = (0i32, 0i32, 0i32);
    for (i, &b) in s.iter().enumerate().skip(start) {
        match b {
            b'(' => round += 1,
            b')' => round -= 1,
            b'[' => square += 1,
            b']' => square -= 1,
            b'{' => curly += 1,
            b'}' => {
                curly -= 1;
                if curly == 0 && round == 0 && square == 0 {
                    return i;
                }
            }
            b';' if round == 0 && square == 0 && curly == 0 => return i,
            _ => {}
        }
    }
    s.len().saturating_sub(1)
}

/// A span of lines, both ends included (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    first: usize,
    last: usize,
}

impl Span {
    fn lines(self) -> usize {
        self.last + 1 - self.first
    }
    fn holds(self, line: usize) -> bool {
        (self.first..=self.last).contains(&line)
    }
}

/// What the scanner finds in one file.
#[derive(Debug, Default)]
struct Scan {
    /// Items under `#[cfg(test)]`, attribute line to end.
    test_spans: Vec<Span>,
    /// Modules declared `#[cfg(test)] mod x;` (their code is in other files).
    test_mods: Vec<String>,
    /// Functions with a body: name and span.
    functions: Vec<(String, Span)>,
    /// Items exempted by a table marker.
    tables: Vec<Span>,
    /// Misplaced or misused table markers: line and why.
    bad_markers: Vec<(usize, String)>,
    /// Top-level modules named in paths: line and module (`super::` resolved against
    /// `module`, the file's module path).
    references: Vec<(usize, String)>,
    /// The same paths in full from the crate root (`crate::model::mm::zone::Zone` →
    /// `[model, mm, zone, Zone]`), one per element of a `{…}` group.
    paths: Vec<(usize, Vec<String>)>,
}

impl Scan {
    fn in_test(&self, line: usize) -> bool {
        self.test_spans.iter().any(|s| s.holds(line))
    }
    fn in_table(&self, line: usize) -> bool {
        self.tables.iter().any(|s| s.holds(line))
    }
}

/// Scans `src`, a file whose module path is `module` (`["plot", "bars"]`; empty for a crate
/// root).
fn scan(src: &str, module: &[String]) -> Scan {
    let masked = mask(src);
    let s = masked.as_bytes();
    let lines = Lines::new(&masked);
    let mut out = Scan::default();
    test_items(s, &lines, &mut out);
    out.functions = functions(s, &lines);
    table_items(src, s, &lines, &mut out);
    out.paths = references(s, &lines, module);
    out.references = out
        .paths
        .iter()
        .filter_map(|(line, p)| p.first().map(|m| (*line, m.clone())))
        .collect();
    out
}

/// Fills `test_spans` and `test_mods`.
fn test_items(s: &[u8], lines: &Lines, out: &mut Scan) {
    let attr = b"#[cfg(test)]";
    let mut i = 0;
    while let Some(k) = find(s, attr, i) {
        let mut j = k + attr.len();
        // Further attributes belong to the same item.
        loop {
            while j < s.len() && s[j].is_ascii_whitespace() {
                j += 1;
            }
            if s[j..].starts_with(b"#[") {
                j = item_end_bracket(s, j + 1) + 1;
            } else {
                break;
            }
        }
        let end = item_end(s, j);
        let head = String::from_utf8_lossy(&s[j..=end]);
        let words: Vec<&str> = head
            .split(|ch: char| !(ch.is_alphanumeric() || ch == '_' || ch == ';'))
            .filter(|w| !w.is_empty())
            .collect();
        if let Some(p) = words.iter().position(|w| *w == "mod")
            && let Some(name) = words.get(p + 1)
            && head.trim_end().ends_with(';')
        {
            out.test_mods.push(name.trim_end_matches(';').to_string());
        }
        out.test_spans.push(Span {
            first: lines.of(k),
            last: lines.of(end),
        });
        i = end + 1;
    }
}

/// The offset of the `]` matching the `[` at `open`.
fn item_end_bracket(s: &[u8], open: usize) -> usize {
    let mut depth = 0;
    for (i, &b) in s.iter().enumerate().skip(open) {
        match b {
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    s.len() - 1
}

fn find(s: &[u8], pat: &[u8], from: usize) -> Option<usize> {
    (from..s.len().saturating_sub(pat.len() - 1)).find(|&i| s[i..].starts_with(pat))
}

/// Every `fn name` with a body, and its span from the `fn` line to the closing brace.
fn functions(s: &[u8], lines: &Lines) -> Vec<(String, Span)> {
    let mut out = Vec::new();
    for i in 0..s.len() {
        if !word_at(s, i, "fn") {
            continue;
        }
        // `fn(u64) -> u64` is a type, not an item: an item has a name.
        let Some((name, after)) = ident_at(s, i + 2) else {
            continue;
        };
        let end = item_end(s, after);
        if s.get(end) == Some(&b'}') {
            out.push((
                name,
                Span {
                    first: lines.of(i),
                    last: lines.of(end),
                },
            ));
        }
    }
    out
}

/// Fills `tables` and `bad_markers`: each marker line must precede (across attributes and doc
/// comments) a `const`, `static` or `fn` whose body is one expression without `let`, `for`,
/// `while` or `loop`.
fn table_items(src: &str, s: &[u8], lines: &Lines, out: &mut Scan) {
    let text: Vec<&str> = src.lines().collect();
    let starts = &lines.0;
    for (k, line) in text.iter().enumerate() {
        if line.trim() != TABLE_MARKER {
            continue;
        }
        let mut j = k + 1;
        while j < text.len() {
            let t = text[j].trim_start();
            if t.starts_with("#[") || t.starts_with("///") {
                j += 1;
            } else {
                break;
            }
        }
        let Some(&start) = starts.get(j) else {
            out.bad_markers
                .push((k + 1, "nothing follows the marker".into()));
            continue;
        };
        match table_item(s, start) {
            Ok(end) => out.tables.push(Span {
                first: k + 1,
                last: lines.of(end),
            }),
            Err(why) => out.bad_markers.push((k + 1, why)),
        }
    }
}

/// The end of the table item starting at `start`, or why it is not one.
fn table_item(s: &[u8], start: usize) -> Result<usize, String> {
    let end = item_end(s, start);
    let item = &s[start..=end];
    let head_end = item
        .iter()
        .position(|&b| b == b'{' || b == b'=')
        .unwrap_or(item.len());
    let head = String::from_utf8_lossy(&item[..head_end]);
    let words: Vec<&str> = head
        .split(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
        .collect();
    let is_fn = words.contains(&"fn");
    if !is_fn && !words.contains(&"const") && !words.contains(&"static") {
        return Err(format!("not a const, static or fn: `{}`", head.trim()));
    }
    for w in ["let", "for", "while", "loop"] {
        if (0..item.len()).any(|i| word_at(item, i, w)) {
            return Err(format!("a table holds no `{w}`"));
        }
    }
    if is_fn {
        // The body between the fn's braces may not hold a statement.
        let open = item.iter().position(|&b| b == b'{').unwrap_or(item.len());
        let mut depth = 0;
        for &b in &item[open..] {
            match b {
                b'{' | b'(' | b'[' => depth += 1,
                b'}' | b')' | b']' => depth -= 1,
                b';' if depth == 1 => return Err("a table fn is one expression".into()),
                _ => {}
            }
        }
    }
    Ok(end)
}

/// Top-level modules named by `crate::`, `$crate::` and `super::` paths that leave `module`.
fn references(s: &[u8], lines: &Lines, module: &[String]) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    // Inline (non-test) modules open at a brace depth, for `super::`.
    let mut inline: Vec<(String, i32)> = Vec::new();
    let mut depth = 0i32;
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                while inline.last().is_some_and(|(_, d)| *d > depth) {
                    inline.pop();
                }
            }
            _ => {}
        }
        if word_at(s, i, "mod")
            && let Some((name, after)) = ident_at(s, i + 3)
            && s[after..].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
        {
            inline.push((name, depth + 1));
        }
        if word_at(s, i, "crate") && s[i + 5..].starts_with(b"::") {
            targets(s, i + 7, &[], lines, &mut out);
            i += 7;
            continue;
        }
        if word_at(s, i, "super") && (i < 2 || &s[i - 2..i] != b"::") {
            // A chain of `super::`, climbing from the file's module and any inline ones.
            let mut k = i;
            let mut ups = 0;
            while word_at(s, k, "super") && s[k + 5..].starts_with(b"::") {
                ups += 1;
                k += 7;
                while k < s.len() && s[k].is_ascii_whitespace() {
                    k += 1;
                }
            }
            let mut here: Vec<String> = module.to_vec();
            here.extend(inline.iter().map(|(m, _)| m.clone()));
            if ups > 0 && ups <= here.len() {
                here.truncate(here.len() - ups);
                targets(s, k, &here, lines, &mut out);
            }
            i = k.max(i + 1);
            continue;
        }
        i += 1;
    }
    out
}

/// Adds the paths that start at `i` (`a::b::C`, or a `{…}` group of them, nested), each
/// prefixed with `prefix`. A path stops at its first segment that is not a module-like word
/// (`self` ends it; `*` and an item in lower case are kept as written).
fn targets(
    s: &[u8],
    mut i: usize,
    prefix: &[String],
    lines: &Lines,
    out: &mut Vec<(usize, Vec<String>)>,
) {
    let mut path = prefix.to_vec();
    let line = lines.of(i.min(s.len().saturating_sub(1)));
    loop {
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
        if s.get(i) == Some(&b'{') {
            group(s, i, &path, lines, out);
            return;
        }
        let Some((name, after)) = ident_at(s, i) else {
            break;
        };
        if name == "self" {
            break;
        }
        path.push(name);
        i = after;
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
        if !s[i..].starts_with(b"::") {
            break;
        }
        i += 2;
    }
    if path.len() > prefix.len() {
        out.push((line, path));
    }
}

/// The elements of the group that opens at `open`, each a path under `prefix`.
fn group(
    s: &[u8],
    open: usize,
    prefix: &[String],
    lines: &Lines,
    out: &mut Vec<(usize, Vec<String>)>,
) {
    let mut depth = 0;
    let mut element_start = true;
    let mut i = open;
    while i < s.len() {
        match s[i] {
            b'{' => {
                depth += 1;
                element_start = depth == 1;
            }
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return;
                }
            }
            b',' if depth == 1 => element_start = true,
            b if b.is_ascii_whitespace() => {}
            _ if element_start && depth == 1 => {
                targets(s, i, prefix, lines, out);
                element_start = false;
            }
            _ => {}
        }
        i += 1;
    }
}

// ---------------------------------------------------------------------------------------------
// The crate

/// A source file: path from the crate root (`src/plot/bars.rs`), module path, text.
struct File {
    path: String,
    module: Vec<String>,
    text: String,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `src/`, sorted by path.
fn sources() -> Vec<File> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in fs::read_dir(dir).expect("src/ is readable") {
            let p = e.expect("a directory entry").path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut paths = Vec::new();
    walk(&root().join("src"), &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(root()).expect("under the root");
            let path = rel.to_string_lossy().replace('\\', "/");
            File {
                module: module_of(&path),
                text: fs::read_to_string(&p).expect("source is UTF-8"),
                path,
            }
        })
        .collect()
}

/// The module path of a file: `src/plot/bars.rs` → `[plot, bars]`, `src/plot/mod.rs` →
/// `[plot]`, `src/lib.rs` → `[]`.
fn module_of(path: &str) -> Vec<String> {
    let rest = path.trim_start_matches("src/").trim_end_matches(".rs");
    let mut parts: Vec<String> = rest.split('/').map(str::to_string).collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// Whether a file is test code as a whole: named `tests.rs`, or declared by a
/// `#[cfg(test)] mod x;` (then it and everything under `x/` is).
fn test_files(files: &[(File, Scan)]) -> BTreeSet<String> {
    let mut test_dirs: Vec<String> = Vec::new();
    for (f, sc) in files {
        for m in &sc.test_mods {
            let mut dir = f.module.join("/");
            if !dir.is_empty() {
                dir.push('/');
            }
            test_dirs.push(format!("src/{dir}{m}"));
        }
    }
    files
        .iter()
        .map(|(f, _)| &f.path)
        .filter(|p| {
            p.ends_with("/tests.rs")
                || test_dirs
                    .iter()
                    .any(|d| p.as_str() == format!("{d}.rs") || p.starts_with(&format!("{d}/")))
        })
        .cloned()
        .collect()
}

fn scanned() -> Vec<(File, Scan)> {
    sources()
        .into_iter()
        .map(|f| {
            let sc = scan(&f.text, &f.module);
            (f, sc)
        })
        .collect()
}

/// Forbidden edges: (file, line, from, to), in file order.
fn forbidden_edges(files: &[(File, Scan)]) -> Vec<(String, usize, String, String)> {
    let layers: BTreeMap<&str, &[&str]> = LAYERS.iter().copied().collect();
    let tests = test_files(files);
    let mut out = Vec::new();
    for (f, sc) in files {
        let Some(from) = f.module.first() else {
            continue; // a crate root
        };
        if tests.contains(&f.path) {
            continue;
        }
        for (line, to) in &sc.references {
            if to == from || sc.in_test(*line) {
                continue;
            }
            let ok = layers
                .get(from.as_str())
                .is_some_and(|allowed| allowed.contains(&to.as_str()));
            if !ok {
                out.push((f.path.clone(), *line, from.clone(), to.clone()));
            }
        }
    }
    out
}

/// Size offenders: (file, function or "", lines, line where it starts).
fn long_items(files: &[(File, Scan)]) -> Vec<(String, String, usize, usize)> {
    let tests = test_files(files);
    let mut out = Vec::new();
    for (f, sc) in files {
        let total = f.text.lines().count();
        let exempt: usize = sc.tables.iter().map(|s| s.lines()).sum();
        if total - exempt.min(total) > MAX_FILE_LINES {
            out.push((f.path.clone(), String::new(), total - exempt, 1));
        }
        if tests.contains(&f.path) {
            continue;
        }
        for (name, span) in &sc.functions {
            if span.lines() > MAX_FN_LINES && !sc.in_test(span.first) && !sc.in_table(span.first) {
                out.push((f.path.clone(), name.clone(), span.lines(), span.first));
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The rules

#[test]
fn every_top_level_module_has_a_layer() {
    let lib = fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let masked = mask(&lib);
    let declared: BTreeSet<String> = masked
        .lines()
        .filter_map(|l| {
            let t = l.trim();
            let t = t.strip_prefix("pub ").unwrap_or(t);
            t.strip_prefix("mod ")
                .map(|m| m.trim_end_matches(';').trim().to_string())
        })
        .collect();
    let layered: BTreeSet<String> = LAYERS.iter().map(|(m, _)| m.to_string()).collect();
    assert_eq!(
        declared, layered,
        "src/lib.rs's modules and tests/tidy.rs's LAYERS must name the same modules"
    );
    for (m, allowed) in LAYERS {
        for a in *allowed {
            assert!(layered.contains(*a), "LAYERS: {m} may import unknown {a}");
        }
    }
    // The allowed imports form no circle: every module may only import modules listed before
    // it, so the order of LAYERS is a topological order.
    for (k, (m, allowed)) in LAYERS.iter().enumerate() {
        for a in *allowed {
            let at = LAYERS.iter().position(|(x, _)| x == a).unwrap();
            assert!(
                at < k,
                "LAYERS: {m} may import {a}, which is listed after it"
            );
        }
    }
}

#[test]
fn modules_import_only_lower_layers() {
    let files = scanned();
    let known: BTreeSet<(&str, &str, &str)> = KNOWN_EDGES.iter().copied().collect();
    let mut found: BTreeSet<(String, String, String)> = BTreeSet::new();
    let mut errors = Vec::new();
    for (file, line, from, to) in forbidden_edges(&files) {
        found.insert((file.clone(), from.clone(), to.clone()));
        if !known.contains(&(file.as_str(), from.as_str(), to.as_str())) {
            errors.push(format!("{file}:{line}: {from} imports {to}"));
        }
    }
    for (file, from, to) in &known {
        if !found.contains(&(file.to_string(), from.to_string(), to.to_string())) {
            errors.push(format!(
                "{file}: {from} no longer imports {to}: take it off KNOWN_EDGES in tests/tidy.rs"
            ));
        }
    }
    assert!(
        errors.is_empty(),
        "layering (each module imports only those before it in LAYERS):\n{}",
        errors.join("\n")
    );
}

#[test]
fn files_and_functions_stay_short() {
    let files = scanned();
    let known: BTreeMap<(&str, &str), usize> = KNOWN_LONG
        .iter()
        .map(|&(f, name, n)| ((f, name), n))
        .collect();
    let mut found: BTreeSet<(String, String)> = BTreeSet::new();
    let mut errors = Vec::new();
    for (f, sc) in &files {
        for (line, why) in &sc.bad_markers {
            errors.push(format!(
                "{}:{line}: `{TABLE_MARKER}` misused: {why}",
                f.path
            ));
        }
    }
    for (file, name, n, line) in long_items(&files) {
        found.insert((file.clone(), name.clone()));
        if known.contains_key(&(file.as_str(), name.as_str())) {
            continue;
        }
        if name.is_empty() {
            errors.push(format!("{file}: {n} lines (limit {MAX_FILE_LINES})"));
        } else {
            errors.push(format!(
                "{file}:{line}: fn {name} has {n} lines (limit {MAX_FN_LINES})"
            ));
        }
    }
    for ((file, name), n) in &known {
        if !found.contains(&(file.to_string(), name.to_string())) {
            let what = if name.is_empty() {
                String::new()
            } else {
                format!(" fn {name}")
            };
            errors.push(format!(
                "{file}{what} (was {n} lines) is within the limit now: take it off KNOWN_LONG \
                 in tests/tidy.rs"
            ));
        }
    }
    assert!(errors.is_empty(), "sizes:\n{}", errors.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// The scanner, tested on small inputs

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn mask_blanks_comments_strings_and_chars_but_keeps_lines_and_lifetimes() {
    let src = "let a = \"{ crate::x }\"; // crate::y {\nlet b = '{'; let c = '\\''; /* { /* } */ } */ x\nfn f<'a>(s: &'a str) {}\nlet r = r#\"a \" {\"#; let e = '\\u{7b}';";
    let m = mask(src);
    assert_eq!(m.lines().count(), src.lines().count());
    assert_eq!(m.chars().count(), src.chars().count());
    assert!(!m.contains("crate"), "{m}");
    assert_eq!(m.matches('{').count(), 1, "only fn f's body brace: {m}");
    assert!(m.contains("<'a>") && m.contains("&'a str"), "{m}");
    assert!(m.lines().nth(1).unwrap().trim_end().ends_with('x'), "{m}");
    // An escaped quote does not end a string; a raw identifier is not a raw string.
    let m = mask("\"a\\\"{\" r#gen {");
    assert_eq!(m.trim(), "r#gen {");
    // Byte chars and byte strings; an unfinished literal at the end of the text.
    assert_eq!(mask("b'{' b\"}\" x").trim(), "b    b    x");
    assert_eq!(mask("x /* {").trim(), "x");
    assert_eq!(mask("x \"{").trim(), "x");
    assert_eq!(
        mask("x br##\"{\"#}\"## y").trim(),
        format!("x{}y", " ".repeat(14))
    );
}

#[test]
fn functions_are_measured_from_fn_to_closing_brace() {
    let src = "pub fn a(x: [u8; 3]) -> u8 {\n    let s = \"}\";\n    x[0]\n}\n\
               trait T { fn decl(&self); }\nfn b() { let f: fn(u8) -> u8 = |x| x; }\n";
    let sc = scan(src, &strings(&["m"]));
    let got: Vec<(&str, usize)> = sc
        .functions
        .iter()
        .map(|(n, s)| (n.as_str(), s.lines()))
        .collect();
    assert_eq!(got, [("a", 4), ("b", 1)]);
}

#[test]
fn test_items_and_test_module_files_are_found() {
    let src = "fn keep() {}\n#[cfg(test)]\n#[allow(dead_code)]\nmod tests {\n    fn t() {}\n}\n\
               #[cfg(test)]\nmod fixture;\nfn after() {}\n";
    let sc = scan(src, &strings(&["plot"]));
    assert_eq!(
        sc.test_spans,
        [Span { first: 2, last: 6 }, Span { first: 7, last: 8 }]
    );
    assert_eq!(sc.test_mods, ["fixture"]);
    assert!(!sc.in_test(1) && sc.in_test(5) && !sc.in_test(9));
}

#[test]
fn references_resolve_crate_paths_groups_and_super() {
    let src = "use crate::{engine::SimTime, model::{a, b::{C, d}}, self};\nuse super::plot::x;\n\
               fn f() { crate::stats::mean(); let s = \"crate::cli\"; }\n\
               mod inner { use super::super::report::Y; }\n";
    let sc = scan(src, &strings(&["experiment"]));
    let got: Vec<(usize, String)> = sc.paths.iter().map(|(l, p)| (*l, p.join("::"))).collect();
    let want = [
        (1, "engine::SimTime"),
        (1, "model::a"),
        (1, "model::b::C"),
        (1, "model::b::d"),
        (2, "plot::x"),
        (3, "stats::mean"),
        (4, "report::Y"),
    ];
    assert_eq!(got, want.map(|(l, p)| (l, p.to_string())));
    let firsts: Vec<&str> = sc.references.iter().map(|(_, m)| m.as_str()).collect();
    assert_eq!(
        firsts,
        [
            "engine", "model", "model", "model", "plot", "stats", "report"
        ]
    );
    // From a nested file, one `super::` stays inside the top-level module.
    let sc = scan("use super::data::X;\n", &strings(&["plot", "bars"]));
    assert_eq!(sc.paths, [(1, strings(&["plot", "data", "X"]))]);
    assert_eq!(module_of("src/plot/mod.rs"), ["plot"]);
    assert_eq!(module_of("src/plot/bars.rs"), ["plot", "bars"]);
    assert!(module_of("src/lib.rs").is_empty());
}

#[test]
fn the_table_marker_exempts_only_literal_tables() {
    let src = "// tidy: table\n/// Rows.\nconst ROWS: &[(u8, u8)] = &[\n    (1, 2),\n];\n\
               // tidy: table\nfn rows() -> Vec<u8> {\n    vec![1, 2]\n}\n\
               // tidy: table\nfn not_a_table() {\n    let x = 1;\n}\n\
               // tidy: table\nstruct S;\n";
    let sc = scan(src, &strings(&["m"]));
    assert_eq!(
        sc.tables,
        [Span { first: 1, last: 5 }, Span { first: 6, last: 9 }]
    );
    let lines: Vec<usize> = sc.bad_markers.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines, [10, 14], "{:?}", sc.bad_markers);
}

// ---------------------------------------------------------------------------------------------
// The model's subsystem folders

/// The model's folders (`src/model/<folder>/`), from its `mod.rs`: every `mod x;` there.
fn model_folders() -> Vec<String> {
    let text = fs::read_to_string(root().join("src/model/mod.rs")).expect("src/model/mod.rs");
    declared_mods(&text).into_iter().map(|(m, _)| m).collect()
}

/// The modules a file declares with `mod x;` (not inline ones), each with whether it is
/// plainly `pub` (part of the folder's interface) or not (`mod x;`, `pub(crate) mod x;`, …).
fn declared_mods(text: &str) -> Vec<(String, bool)> {
    let masked = mask(text);
    masked
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let (public, rest) = match l.strip_prefix("pub ") {
                Some(r) => (true, r),
                None if l.starts_with("pub(") => (false, &l[l.find(')')? + 1..]),
                None => (false, l),
            };
            let name = rest.trim().strip_prefix("mod ")?.strip_suffix(';')?;
            Some((name.trim().to_string(), public))
        })
        .collect()
}

/// The folder a file of the model belongs to (`src/model/mm/zone.rs` → `mm`).
fn folder_of(path: &str) -> Option<&str> {
    let rest = path.strip_prefix("src/model/")?;
    rest.split_once('/').map(|(f, _)| f)
}

/// Cross-folder imports inside the model, outside test code: (from, to) → the first file and
/// line that makes it.
fn folder_edges(files: &[(File, Scan)]) -> BTreeMap<(String, String), (String, usize)> {
    let folders = model_folders();
    let tests = test_files(files);
    let mut edges = BTreeMap::new();
    for (f, sc) in files {
        let Some(from) = folder_of(&f.path) else {
            continue;
        };
        if tests.contains(&f.path) {
            continue;
        }
        for (line, p) in &sc.paths {
            if sc.in_test(*line) || p.len() < 2 || p[0] != "model" {
                continue;
            }
            let to = &p[1];
            if to != from && folders.contains(to) {
                edges
                    .entry((from.to_string(), to.clone()))
                    .or_insert((f.path.clone(), *line));
            }
        }
    }
    edges
}

/// A circle in `edges`, as the folders along it (empty when there is none).
fn circle(edges: &BTreeMap<(String, String), (String, usize)>) -> Vec<String> {
    fn visit(
        n: &str,
        edges: &BTreeMap<(String, String), (String, usize)>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for (from, to) in edges.keys() {
            if from != n {
                continue;
            }
            match state.get(to).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|s| s == to).expect("on the stack");
                    let mut c = stack[at..].to_vec();
                    c.push(to.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(to, edges, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    let nodes: BTreeSet<&String> = edges.keys().map(|(f, _)| f).collect();
    for n in nodes {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            let mut stack = Vec::new();
            if let Some(c) = visit(n, edges, &mut state, &mut stack) {
                return c;
            }
        }
    }
    Vec::new()
}

/// Issue 31: `src/model/` holds only its `mod.rs` and subsystem folders, each opening with a
/// module doc that says what it models.
#[test]
fn the_model_is_subsystem_folders() {
    let mut errors = Vec::new();
    for e in fs::read_dir(root().join("src/model")).expect("src/model/") {
        let p = e.expect("an entry").path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if p.is_dir() {
            let m = p.join("mod.rs");
            let doc = fs::read_to_string(&m).unwrap_or_default();
            if !doc.starts_with("//! ") {
                errors.push(format!(
                    "src/model/{name}/mod.rs: no module doc on its first line"
                ));
            }
        } else if name != "mod.rs" {
            errors.push(format!(
                "src/model/{name}: a file directly under src/model/; put it in its subsystem's folder"
            ));
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// Issue 31: the world's own folder alone implements `World`; a subsystem owns its state and
/// the world's side of it (scheduling, routing) lives in `src/model/world/`. Test code too.
#[test]
fn only_the_world_folder_implements_world() {
    let mut errors = Vec::new();
    for f in sources() {
        if f.path.starts_with("src/model/world/") {
            continue;
        }
        let masked = mask(&f.text);
        for (n, line) in masked.lines().enumerate() {
            if implements_world(line) {
                errors.push(format!("{}:{}: {}", f.path, n + 1, line.trim()));
            }
        }
    }
    assert!(
        errors.is_empty(),
        "impl World outside src/model/world/ (move it to the world's adapter for that file):\n{}",
        errors.join("\n")
    );
}

/// Whether `line` opens an `impl` block whose type is `World` (`impl World`, `impl<'a> World`,
/// `impl crate::model::world::World`, `impl Model for World`), not one that only mentions it.
fn implements_world(line: &str) -> bool {
    let Some(rest) = line.trim_start().strip_prefix("impl") else {
        return false;
    };
    let mut head = rest.split('{').next().unwrap_or("").trim();
    if !(rest.starts_with(' ') || rest.starts_with('<')) {
        return false; // `implements`, `impl_x!`
    }
    if head.starts_with('<') {
        // Skip the impl's own generics, nested brackets included.
        let mut depth = 0;
        let end = head
            .char_indices()
            .find(|&(_, c)| {
                depth += i32::from(c == '<') - i32::from(c == '>');
                depth == 0
            })
            .map_or(head.len(), |(i, _)| i + 1);
        head = head[end..].trim();
    }
    let ty = head.rsplit_once(" for ").map_or(head, |(_, t)| t).trim();
    let ty = ty.split('<').next().unwrap_or(ty);
    ty.rsplit("::").next() == Some("World")
}

/// Issue 31: the model's folders import each other without a circle (outside test code), so
/// each can be read, and replaced, from the bottom up.
#[test]
fn model_folders_import_each_other_without_a_circle() {
    let edges = folder_edges(&scanned());
    let c = circle(&edges);
    let listing: Vec<String> = edges
        .iter()
        .map(|((a, b), (file, line))| format!("  {a} -> {b}  (first at {file}:{line})"))
        .collect();
    assert!(
        c.is_empty(),
        "the model's folders import in a circle: {}\nevery edge:\n{}",
        c.join(" -> "),
        listing.join("\n")
    );
}

/// Issue 31: a folder's interface is what its `mod.rs` declares plainly `pub`; a file it
/// declares `mod x;` (or `pub(crate) mod x;`) is its own business, and no code outside the
/// folder names it, test code included.
#[test]
fn no_code_reaches_into_a_folders_private_files() {
    let folders = model_folders();
    let private: BTreeSet<(String, String)> = folders
        .iter()
        .flat_map(|f| {
            let text = fs::read_to_string(root().join(format!("src/model/{f}/mod.rs")))
                .unwrap_or_default();
            declared_mods(&text)
                .into_iter()
                .filter(|(_, public)| !public)
                .map(move |(m, _)| (f.clone(), m))
        })
        .collect();
    let mut errors = Vec::new();
    for (f, sc) in scanned() {
        let own = folder_of(&f.path);
        for (line, p) in &sc.paths {
            if p.len() < 3 || p[0] != "model" || own == Some(p[1].as_str()) {
                continue;
            }
            if private.contains(&(p[1].clone(), p[2].clone())) {
                errors.push(format!("{}:{line}: {}", f.path, p.join("::")));
            }
        }
    }
    assert!(
        !private.is_empty() && errors.is_empty(),
        "paths into another folder's private files:\n{}",
        errors.join("\n")
    );
}

#[test]
fn folder_rules_see_circles_and_private_modules() {
    let e = |a: &str, b: &str| ((a.to_string(), b.to_string()), (String::new(), 1));
    let dag: BTreeMap<_, _> = [e("world", "mm"), e("mm", "base"), e("world", "base")].into();
    assert!(circle(&dag).is_empty());
    let loop3: BTreeMap<_, _> = [e("a", "b"), e("b", "c"), e("c", "a"), e("c", "d")].into();
    assert_eq!(circle(&loop3), ["a", "b", "c", "a"]);
    let mods = declared_mods("//! doc\npub mod a;\nmod b;\npub(crate) mod c;\n// mod d;\n");
    assert_eq!(
        mods,
        [
            ("a".to_string(), true),
            ("b".to_string(), false),
            ("c".to_string(), false)
        ]
    );
    assert_eq!(folder_of("src/model/mm/zone.rs"), Some("mm"));
    for yes in [
        "impl World {",
        "    impl<'a> World {",
        "impl crate::model::world::World {",
        "impl Model for World {",
        "impl<E: From<X>> Sink<E> for World {",
    ] {
        assert!(implements_world(yes), "{yes}");
    }
    for no in [
        "impl Gitk {",
        "impl From<World> for Event {",
        "impl WorldView {",
        "fn implements(w: World) {",
        "impl_world!();",
    ] {
        assert!(!implements_world(no), "{no}");
    }
    assert_eq!(folder_of("src/model/mod.rs"), None);
}
