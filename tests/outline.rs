//! How `tests/golden/` pins a JSON output too heavy to commit (issue 31): by an outline that
//! stands in for it, and a comparison that names the part of the JSON value that moved.
//!
//! An outline is plain text. Its `whole` line gives the output's size, line count and digest;
//! then comes one line per part of the JSON value, in document order, each `PATH  DESCRIPTION`:
//!
//! - a scalar shows its value (cut to [`SCALAR_CHARS`] characters; the digest of the container
//!   above it still covers the rest): `$.jobs[0].jobname  = "two-queue-fifo"`;
//! - an object or array shows its size in members, its exact bytes in the output and their
//!   digest: `$.jobs[0].read  {23 keys}  8676 B  fnv ca4d793d4b35863d`, with, when its members
//!   are not listed, the first two short strings among them as a label;
//! - an array of more than [`GROUPS`] items is listed as at most [`GROUPS`] runs of consecutive
//!   items, each with its own size and digest: `$.qsim.summary[0..3]  4 items  2770 B  fnv …`.
//!
//! Which members are listed: those of every container less than [`OPEN_DEPTH`] levels deep,
//! and those of any container over [`OPEN_BYTES`] bytes, so that a change in the plot series
//! (most of the weight) is located to one run and one series. Arrays of scalars (the values of
//! a series) are never opened: a line per number would be the file again. So a `--json` export
//! of 5.2 MB outlines in 66 KB, one of 600 KB in 12 KB, and a `--format json` report of 100 KB
//! in 8 to 10 KB.
//!
//! The digest is 64-bit FNV-1a (Fowler, Noll and Vo), written out here in three lines rather
//! than taken from a crate: it is fixed by its published constants, so it is the same on every
//! platform and Rust version (std's `DefaultHasher` promises neither); no collision resistance
//! against an adversary is needed to notice an accidental change; and as every step of it is a
//! bijection of the state, one byte changed in place always changes the digest. A cryptographic
//! hash (`sha2`) would bring several crates to build on CI's two cores for no gain here.

use std::collections::HashSet;

/// Containers this many levels below the root or fewer than that are listed member by member.
pub const OPEN_DEPTH: usize = 3;

/// Containers of more than this many bytes are listed member by member at any depth.
pub const OPEN_BYTES: usize = 64 * 1024;

/// Arrays of more items than this are listed as this many runs of consecutive items at most.
pub const GROUPS: usize = 16;

/// Characters of a scalar's value shown in its line.
pub const SCALAR_CHARS: usize = 60;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// 64-bit FNV-1a of `bytes`.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(FNV_OFFSET, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(FNV_PRIME)
    })
}

/// A JSON value located in the output: `start..end` are its bytes.
struct Node {
    start: usize,
    end: usize,
    kind: Kind,
}

enum Kind {
    Scalar,
    /// Members with their keys as written (escapes kept, quotes removed).
    Object(Vec<(String, Node)>),
    Array(Vec<Node>),
}

/// A recursive-descent reader of one JSON value that keeps where each part lies; it checks
/// only what it needs to find the parts (qsim writes its JSON with serde_json).
struct Reader<'a> {
    s: &'a [u8],
    i: usize,
}

impl Reader<'_> {
    fn skip_space(&mut self) {
        while self.s.get(self.i).is_some_and(|b| b.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn expect(&mut self, b: u8) -> Result<(), String> {
        self.skip_space();
        match self.s.get(self.i) {
            Some(&c) if c == b => {
                self.i += 1;
                Ok(())
            }
            Some(&c) => Err(format!(
                "expected '{}' at byte {}, found '{}'",
                b as char, self.i, c as char
            )),
            None => Err(format!("expected '{}' at the end", b as char)),
        }
    }

    /// Reads a string at the cursor and returns its contents as written.
    fn string(&mut self) -> Result<String, String> {
        let open = self.i;
        self.expect(b'"')?;
        let start = self.i;
        while let Some(&c) = self.s.get(self.i) {
            match c {
                b'"' => {
                    self.i += 1;
                    return Ok(String::from_utf8_lossy(&self.s[start..self.i - 1]).into_owned());
                }
                b'\\' => self.i += 2,
                _ => self.i += 1,
            }
        }
        Err(format!("the string at byte {open} does not end"))
    }

    /// Reads `item` repeatedly, separated by commas, up to the byte `close`.
    fn items<T>(
        &mut self,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Result<T, String>,
    ) -> Result<Vec<T>, String> {
        let mut out = Vec::new();
        self.skip_space();
        if self.s.get(self.i) == Some(&close) {
            self.i += 1;
            return Ok(out);
        }
        loop {
            out.push(item(self)?);
            self.skip_space();
            if self.s.get(self.i) == Some(&b',') {
                self.i += 1;
            } else {
                self.expect(close)?;
                return Ok(out);
            }
        }
    }

    fn value(&mut self) -> Result<Node, String> {
        self.skip_space();
        let start = self.i;
        let kind = match self.s.get(self.i) {
            None => return Err("a value is missing at the end".into()),
            Some(b'{') => {
                self.i += 1;
                Kind::Object(self.items(b'}', |r| {
                    r.skip_space();
                    let key = r.string()?;
                    r.expect(b':')?;
                    Ok((key, r.value()?))
                })?)
            }
            Some(b'[') => {
                self.i += 1;
                Kind::Array(self.items(b']', Self::value)?)
            }
            Some(b'"') => {
                self.string()?;
                Kind::Scalar
            }
            Some(_) => {
                let token = |b: &u8| !b",]}:".contains(b) && !b.is_ascii_whitespace();
                while self.s.get(self.i).is_some_and(token) {
                    self.i += 1;
                }
                if self.i == start {
                    return Err(format!("no value at byte {start}"));
                }
                Kind::Scalar
            }
        };
        Ok(Node {
            start,
            end: self.i,
            kind,
        })
    }
}

/// Reads the one JSON value `s` holds, with nothing but whitespace after it.
fn parse(s: &[u8]) -> Result<Node, String> {
    let mut r = Reader { s, i: 0 };
    let node = r.value()?;
    r.skip_space();
    match r.i < s.len() {
        true => Err(format!("bytes after the value, from byte {}", r.i)),
        false => Ok(node),
    }
}

/// One line of an outline: a part's path, what it shows, and where the part starts.
pub struct Part {
    /// `$`, then `.key`, `["key"]` or `[index]` per level, or `[first..last]` for a run of items.
    pub path: String,
    /// The rest of the line: a scalar's value, or a container's size and digest.
    pub shows: String,
    /// The byte offset where the part starts in the output.
    pub start: usize,
}

impl Part {
    /// The part's line in the outline.
    pub fn line(&self) -> String {
        format!("{}  {}", self.path, self.shows)
    }
}

fn member_path(parent: &str, key: &str) -> String {
    let plain = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match plain {
        true => format!("{parent}.{key}"),
        false => format!("{parent}[\"{key}\"]"),
    }
}

/// The first two strings of at most 40 bytes among an object's members, to tell it apart.
fn label(s: &[u8], members: &[(String, Node)]) -> String {
    let short = members.iter().map(|(_, n)| &s[n.start..n.end]);
    let strings = short.filter(|b| b.first() == Some(&b'"') && b.len() <= 40);
    let words: Vec<_> = strings.take(2).map(String::from_utf8_lossy).collect();
    words.join(" ")
}

/// `n` and `noun`, plural unless `n` is 1.
fn count(n: usize, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        _ => format!("{n} {noun}s"),
    }
}

fn shows_container(s: &[u8], node: &Node, listed: bool) -> String {
    let bytes = &s[node.start..node.end];
    let (size, tag) = match &node.kind {
        Kind::Object(m) => (format!("{{{}}}", count(m.len(), "key")), label(s, m)),
        Kind::Array(items) => (format!("[{}]", count(items.len(), "item")), String::new()),
        Kind::Scalar => unreachable!("scalars show their value"),
    };
    let line = format!("{size}  {} B  fnv {:016x}", bytes.len(), fnv1a64(bytes));
    match listed || tag.is_empty() {
        true => line,
        false => format!("{line}  {tag}"),
    }
}

fn shows_scalar(s: &[u8], node: &Node) -> String {
    let text = String::from_utf8_lossy(&s[node.start..node.end]);
    match text.chars().count() > SCALAR_CHARS {
        true => format!(
            "= {}...",
            text.chars().take(SCALAR_CHARS - 3).collect::<String>()
        ),
        false => format!("= {text}"),
    }
}

/// Lists `items` as at most [`GROUPS`] runs of consecutive items.
fn groups(s: &[u8], path: &str, items: &[Node], out: &mut Vec<Part>) {
    let per = items.len().div_ceil(GROUPS);
    for (g, run) in items.chunks(per).enumerate() {
        let (first, last) = (g * per, g * per + run.len() - 1);
        let (start, end) = (run[0].start, run[run.len() - 1].end);
        let bytes = &s[start..end];
        out.push(Part {
            path: format!("{path}[{first}..{last}]"),
            shows: format!(
                "{}  {} B  fnv {:016x}",
                count(run.len(), "item"),
                bytes.len(),
                fnv1a64(bytes)
            ),
            start,
        });
    }
}

fn walk(s: &[u8], path: String, node: &Node, depth: usize, out: &mut Vec<Part>) {
    let start = node.start;
    let opened = depth < OPEN_DEPTH || node.end - node.start > OPEN_BYTES;
    let listed = opened
        && match &node.kind {
            Kind::Scalar => false,
            Kind::Object(_) => true,
            Kind::Array(items) => items.iter().any(|n| !matches!(n.kind, Kind::Scalar)),
        };
    let shows = match node.kind {
        Kind::Scalar => shows_scalar(s, node),
        _ => shows_container(s, node, listed),
    };
    out.push(Part {
        path: path.clone(),
        shows,
        start,
    });
    if !listed {
        return;
    }
    match &node.kind {
        Kind::Object(members) => {
            for (key, n) in members {
                walk(s, member_path(&path, key), n, depth + 1, out);
            }
        }
        Kind::Array(items) if items.len() > GROUPS => groups(s, &path, items, out),
        Kind::Array(items) => {
            for (i, n) in items.iter().enumerate() {
                walk(s, format!("{path}[{i}]"), n, depth + 1, out);
            }
        }
        Kind::Scalar => {}
    }
}

/// The parts of the JSON value in `s`, or why `s` is not one.
pub fn parts(s: &[u8]) -> Result<Vec<Part>, String> {
    let root = parse(s)?;
    let mut out = Vec::new();
    walk(s, "$".to_string(), &root, 0, &mut out);
    Ok(out)
}

/// The `whole` line: size, line count and digest of all of `s`.
fn whole(s: &[u8]) -> String {
    let lines = s.iter().filter(|&&b| b == b'\n').count();
    format!(
        "whole  {} B  {lines} lines  fnv {:016x}",
        s.len(),
        fnv1a64(s)
    )
}

/// The outline of the output `s` (for a file that is not JSON, its `whole` line and why).
pub fn render(s: &[u8]) -> String {
    let mut text = String::from(
        "# The golden output is pinned by this outline, not kept whole: see tests/outline.rs.\n\
         # QSIM_BLESS=1 rewrites it; a failing run leaves the whole output in target/golden-actual/.\n",
    );
    text.push_str(&whole(s));
    text.push('\n');
    match parts(s) {
        Ok(parts) => parts.iter().for_each(|p| {
            text.push_str(&p.line());
            text.push('\n');
        }),
        Err(e) => text.push_str(&format!("not JSON: {e}\n")),
    }
    text
}

fn is_inside(path: &str, outer: &str) -> bool {
    path.strip_prefix(outer)
        .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

/// The deepest part on the way to the first change: the first part whose line is not in
/// `golden`, then, while one of its own parts also changed, the first of those.
fn first_changed<'p>(golden: &HashSet<&str>, parts: &'p [Part]) -> Option<&'p Part> {
    let mut found: Option<&Part> = None;
    for p in parts.iter().filter(|p| !golden.contains(p.line().as_str())) {
        match found {
            Some(f) if !is_inside(&p.path, &f.path) => break,
            _ => found = Some(p),
        }
    }
    found
}

/// What differs between the outline `golden` and the output `actual`, in words (`None` when
/// `actual` outlines to exactly `golden`); `actual_file` is where the whole output was left.
pub fn describe(golden: &str, actual: &[u8], actual_file: &str) -> Option<String> {
    let fresh = render(actual);
    if fresh == golden {
        return None;
    }
    let was = golden
        .lines()
        .find(|l| l.starts_with("whole"))
        .unwrap_or("<no whole line>");
    let mut msg = format!(
        "digest differs:\n  golden {was}\n  actual {}",
        whole(actual)
    );
    let Ok(parts) = parts(actual) else {
        let why = fresh.lines().last().unwrap_or_default();
        return Some(format!("{msg}\n  the actual output is {why}"));
    };
    let lines: HashSet<&str> = golden.lines().collect();
    let Some(p) = first_changed(&lines, &parts) else {
        return Some(format!(
            "{msg}\n  every part matches: the bytes differ outside the JSON value \
             (or the outline's rules changed)"
        ));
    };
    let prefix = format!("{}  ", p.path);
    let before = golden.lines().find(|l| l.starts_with(&prefix));
    let line = 1 + actual[..p.start].iter().filter(|&&b| b == b'\n').count();
    let changed = parts
        .iter()
        .filter(|p| !lines.contains(p.line().as_str()))
        .count();
    msg.push_str(&format!(
        "\n  first part that differs: {}\n    golden: {}\n    actual: {}\n    \
         it starts at line {line} of {actual_file}\n  {changed} of {} outline lines changed",
        p.path,
        before.map_or("<no such part>", |l| &l[prefix.len()..]),
        p.shows,
        parts.len()
    ));
    Some(msg)
}

#[test]
fn fnv1a64_gives_the_published_test_vectors() {
    assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
}

#[cfg(test)]
const SAMPLE: &str = r#"{
  "fio version": "x",
  "jobs": [
    {"jobname": "a-fifo", "read": {"iops": 1.5, "clat": {"mean": 2}}, "bins": [1, 2, 3]},
    {"jobname": "a-prio", "read": {"iops": 2.5, "clat": {"mean": 3}}, "bins": [4, 5, 6]}
  ],
  "many": [[1], [2], [3], [4], [5], [6], [7], [8], [9], [10], [11], [12], [13], [14], [15], [16], [17]]
}
"#;

#[test]
fn an_outline_lists_shallow_parts_and_labels_the_unopened_ones() {
    let text = render(SAMPLE.as_bytes());
    let lines: Vec<&str> = text.lines().skip(2).collect();
    assert!(lines[0].starts_with(&format!("whole  {} B  8 lines  fnv ", SAMPLE.len())));
    assert!(lines[1].starts_with("$  {3 keys}  "), "{text}");
    assert_eq!(lines[2], r#"$["fio version"]  = "x""#);
    assert!(lines[3].starts_with("$.jobs  [2 items]  "), "{text}");
    assert!(lines[4].starts_with("$.jobs[0]  {3 keys}  "), "{text}");
    assert_eq!(lines[5], r#"$.jobs[0].jobname  = "a-fifo""#);
    // Three levels down: shown with its digest, not opened.
    assert!(lines[6].starts_with("$.jobs[0].read  {2 keys}  "), "{text}");
    assert!(
        lines[7].starts_with("$.jobs[0].bins  [3 items]  "),
        "{text}"
    );
    // 17 items in runs of 2: 9 runs, the last of one item.
    assert!(text.contains("$.many[0..1]  2 items  8 B  fnv "), "{text}");
    assert!(text.contains("$.many[16..16]  1 item  4 B  fnv "), "{text}");
    assert!(!text.contains("$.many[17"), "{text}");
}

#[test]
fn a_changed_value_is_found_at_its_deepest_listed_part() {
    let golden = render(SAMPLE.as_bytes());
    assert_eq!(describe(&golden, SAMPLE.as_bytes(), "x.json"), None);
    let moved = SAMPLE.replace("\"iops\": 2.5", "\"iops\": 2.6");
    let msg = describe(&golden, moved.as_bytes(), "x.json").expect("a change is seen");
    assert!(
        msg.contains("first part that differs: $.jobs[1].read\n"),
        "{msg}"
    );
    assert!(msg.contains("line 5 of x.json"), "{msg}");
    let moved = SAMPLE.replace("[13]", "[31]");
    let msg = describe(&golden, moved.as_bytes(), "x.json").expect("a change is seen");
    assert!(
        msg.contains("first part that differs: $.many[12..13]\n"),
        "{msg}"
    );
    let msg = describe(&golden, SAMPLE.trim_end().as_bytes(), "x.json").expect("seen");
    assert!(msg.contains("outside the JSON value"), "{msg}");
    let msg = describe(&golden, b"{\"jobs\": [", "x.json").expect("seen");
    assert!(msg.contains("not JSON: "), "{msg}");
}
