//! The user guide, run (issue 31): every command block in `README.md` and `docs/*.md` runs
//! against the real binary and must print what the text shows, and every committed picture
//! under `plots/` must equal a fresh drawing of the command that the guide says made it.
//!
//! # The convention for fenced blocks
//!
//! - ```` ```console ````: a transcript. A line `$ COMMAND` is a command (a trailing ` \`
//!   continues it on the next line); the lines after it, up to the next `$ `, are what it
//!   prints, stdout and stderr together as a terminal shows them. `qsim` and
//!   `cargo run --` (with or without `--release`) run the binary under test. A line `...` alone stands for any
//!   number of lines (long output is shown in part); `[..]` inside a line stands for a field
//!   that genuinely differs between two runs (a port the system picks, a wall-clock time).
//!   Numbers the simulator prints are deterministic from the seed, so they are compared
//!   exactly: no `[..]` over them. A command must exit 0, unless the output shown has a line
//!   starting `error:`; then it must fail. A command shown with no output must print nothing.
//! - ```` ```yaml ````: scenario text, not a command.
//! - Any other block in the user guide (`sh`, `text`, none) must begin with a visible marker
//!   line `# untested: REASON` (a Slurm script, `cargo install`, an edit to a shell's rc file,
//!   a server that runs until interrupted). The test fails on an unmarked one, so a command
//!   cannot be added where it is not run.
//! - A console block may begin with `# requires: TOOL...`: it runs where every TOOL is on
//!   `PATH`, and is skipped (with a note on stderr) elsewhere, unless the variable that CI sets
//!   after installing that tool (`QSIM_REQUIRE_FIO_TOOLS`, `QSIM_REQUIRE_PARALLEL`) is `1`,
//!   which makes a missing tool a failure.
//! - `docs/model/` is the model's reference, with formulas and pseudocode in its blocks: there
//!   only `console` blocks run, and a block of another kind may not hold a command line.
//!
//! Each block runs in a fresh temporary directory holding copies of `scenarios/`,
//! `tests/fio/`, `traces/` and `calibrate/`, with `HOME` inside it, so a command that writes a
//! file (an export, a plot, `~/.zfunc`) writes there and never into the repository. A file it
//! writes under `plots/` that is also committed under `plots/` must be equal byte for byte
//! (plotters draws with the bundled DejaVu font, so a drawing is a function of its data); at the
//! end every committed picture must have been compared, except:
//!
//! - `plots/serve.png`, a screenshot of `qsim serve` in Chromium: no command of the guide draws
//!   it. `tests/serve.rs` takes a fresh screenshot of the same page and compares it with this
//!   one, pixel for pixel outside the wall-clock line where the installed Chromium is the one
//!   that drew it, and by size elsewhere (another Chromium antialiases text its own way).
//! - `plots/fio-plot/`, drawn by fio-plot with matplotlib, whose version pip resolves freely:
//!   the guide's fio-plot commands run (under `# requires:`) and must draw a PNG of the same
//!   size, but its pixels are matplotlib's, not qsim's.
//!
//! `QSIM_BLESS=1` copies the fresh drawings over the committed ones (as it rewrites
//! `tests/golden/`); `QSIM_DOCS_ONLY=docs/flags.md` runs one file's blocks (and skips the
//! check that every picture was compared). A failure lists every block that differs, and the
//! whole actual output of each is left in `target/docs-actual/`.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::TempDir;

/// The first line of a block that is not run, followed by the reason.
const UNTESTED: &str = "# untested: ";
/// The first line of a block that runs only where its tools are installed.
const REQUIRES: &str = "# requires: ";
/// A line of shown output that stands for any number of lines.
const ANY_LINES: &str = "...";
/// Inside a line of shown output: any text (a volatile field).
const ANY_TEXT: &str = "[..]";
/// Committed pictures not compared with a fresh drawing (the module documentation says why).
const NOT_REDRAWN: &[&str] = &["serve.png"];
/// Committed pictures drawn by another program: a fresh drawing must have the same size.
const SIZE_ONLY: &str = "fio-plot/";
/// The README is the front door: what qsim is, two commands, one example, a map.
const README_MAX_LINES: usize = 300;
/// No shown command may take longer than this.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(300);

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// One fenced block of a Markdown file.
struct Block {
    /// `file:line` of the opening fence.
    at: String,
    /// The info string (`console`, `yaml`, …), empty for none.
    lang: String,
    /// The lines between the fences.
    lines: Vec<String>,
}

/// The fenced blocks of `text` (fences of three or more backticks at the start of a line, or
/// indented inside a list item: the fence's indent is taken off every line of the block).
fn blocks(file: &str, text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(Block, usize)> = None;
    for (n, line) in text.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match open.take() {
            None if fence => {
                let indent = line.len() - line.trim_start().len();
                let lang = line.trim_start().trim_start_matches('`').trim().to_string();
                let at = format!("{file}:{}", n + 1);
                let lines = Vec::new();
                open = Some((Block { at, lang, lines }, indent));
            }
            None => {}
            Some((b, _)) if fence => out.push(b),
            Some((mut b, indent)) => {
                let cut = line.len() - line.trim_start().len();
                b.lines.push(line[cut.min(indent)..].to_string());
                open = Some((b, indent));
            }
        }
    }
    assert!(open.is_none(), "{file}: a fenced block is never closed");
    out
}

/// The user guide: the README and every file directly in `docs/`.
fn guide_files() -> Vec<String> {
    let mut files = vec!["README.md".to_string()];
    files.extend(md_files("docs"));
    files
}

/// The Markdown files directly in `dir` (relative to the crate root), sorted.
fn md_files(dir: &str) -> Vec<String> {
    let mut files: Vec<String> = fs::read_dir(root().join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("{dir}/{n}"))
        .collect();
    files.sort();
    files
}

/// One `$ ` command of a console block and the output shown after it.
struct Step {
    command: String,
    shown: Vec<String>,
}

/// Splits a console block's lines into commands and their shown output.
fn steps(b: &Block) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    let mut continued = false;
    for line in &b.lines {
        if continued {
            let step = out.last_mut().unwrap();
            step.command.push('\n');
            step.command.push_str(line);
            continued = line.ends_with('\\');
        } else if let Some(cmd) = line.strip_prefix("$ ") {
            out.push(Step {
                command: cmd.to_string(),
                shown: Vec::new(),
            });
            continued = cmd.ends_with('\\');
        } else {
            let Some(step) = out.last_mut() else {
                panic!("{}: output before the first `$ ` command", b.at)
            };
            step.shown.push(line.to_string());
        }
    }
    assert!(!continued, "{}: the last command ends with `\\`", b.at);
    assert!(
        !out.is_empty(),
        "{}: a console block with no `$ ` command",
        b.at
    );
    out
}

/// `cargo run --` and `cargo run --release --` become `qsim`; any other cargo command cannot
/// run here.
fn shell_command(b: &Block, cmd: &str) -> String {
    let cmd = cmd
        .replace("cargo run --release --", "qsim")
        .replace("cargo run --", "qsim");
    let words = cmd.split(|c: char| c.is_whitespace() || c == ';' || c == '(');
    assert!(
        !words.into_iter().any(|w| w == "cargo"),
        "{}: `{cmd}` runs cargo, which this test cannot: mark the block `{UNTESTED}REASON`",
        b.at
    );
    cmd
}

/// Does `line` match the shown `pattern`, where `[..]` matches any text?
fn line_matches(pattern: &str, line: &str) -> bool {
    let (pattern, line) = (pattern.trim_end(), line.trim_end());
    let mut parts = pattern.split(ANY_TEXT);
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = line.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// Does the actual output match the shown lines, where a `...` line matches any lines?
/// Returns the first shown line (index) that could not be matched, or `None` on a match.
fn output_matches(shown: &[String], actual: &[&str]) -> Option<usize> {
    // Runs of literal lines between `...` markers, each matched at its earliest place.
    let mut at = 0;
    let mut i = 0;
    while i < shown.len() {
        let elided = shown[i] == ANY_LINES;
        let start = i + usize::from(elided);
        let end = (start..shown.len())
            .find(|&j| shown[j] == ANY_LINES)
            .unwrap_or(shown.len());
        let run = &shown[start..end];
        // The first line of the run that does not match with the run placed at `k`.
        let bad = |k: usize| {
            (0..run.len()).find(|&j| actual.get(k + j).is_none_or(|l| !line_matches(&run[j], l)))
        };
        let place = if !elided {
            Ok(at)
        } else if end == shown.len() {
            Ok(actual.len().saturating_sub(run.len()).max(at))
        } else {
            (at..=actual.len()).find(|&k| bad(k).is_none()).ok_or(0)
        };
        match place.map(|k| (k, bad(k))) {
            Ok((k, None)) => at = k + run.len(),
            Ok((_, Some(j))) | Err(j) => return Some(start + j),
        }
        i = end;
    }
    (at != actual.len() && shown.last().map(String::as_str) != Some(ANY_LINES))
        .then_some(shown.len())
}

/// The tools a `# requires:` block names, or why the block cannot run here (`Err`, a skip).
fn tools_present(b: &Block, tools: &str) -> Result<(), String> {
    for tool in tools.split_whitespace() {
        let found = std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()));
        if found {
            continue;
        }
        let var = match tool {
            "parallel" => "QSIM_REQUIRE_PARALLEL",
            _ => "QSIM_REQUIRE_FIO_TOOLS",
        };
        assert!(
            std::env::var(var).as_deref() != Ok("1"),
            "{}: {var}=1 but `{tool}` is not on PATH",
            b.at
        );
        return Err(format!("{}: skipped, `{tool}` is not installed", b.at));
    }
    Ok(())
}

/// A directory for one block: copies of the inputs the guide names, and a `HOME`.
fn workdir() -> TempDir {
    let dir = TempDir::new();
    copy_dir(&root().join("scenarios"), &dir.path().join("scenarios"));
    copy_dir(&root().join("tests/fio"), &dir.path().join("tests/fio"));
    copy_dir(&root().join("traces"), &dir.path().join("traces"));
    copy_dir(&root().join("calibrate"), &dir.path().join("calibrate"));
    fs::create_dir_all(dir.path().join("home")).unwrap();
    fs::create_dir_all(dir.path().join("bin")).unwrap();
    // The repository's plots/, where the guide's `--plots plots/NAME` commands write (a named
    // directory's parent must exist).
    fs::create_dir_all(dir.path().join("plots")).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_qsim"), dir.path().join("bin/qsim")).unwrap();
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Runs `cmd` under `sh` in `dir`, stderr merged into stdout; returns (exit code, output).
fn run_shell(dir: &Path, cmd: &str) -> (Option<i32>, String) {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![dir.join("bin")];
    paths.extend(std::env::split_paths(&path));
    let out = dir.join(".output");
    let file = fs::File::create(&out).unwrap();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("exec 2>&1\n{cmd}"))
        .current_dir(dir)
        .env("PATH", std::env::join_paths(paths).unwrap())
        .env("HOME", dir.join("home"))
        .stdin(Stdio::null())
        .stdout(file)
        .spawn()
        .expect("sh runs");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > COMMAND_TIMEOUT {
            let _ = child.kill();
            panic!("`{cmd}` ran longer than {COMMAND_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = String::from_utf8_lossy(&fs::read(&out).unwrap()).into_owned();
    fs::remove_file(&out).unwrap();
    (status.code(), text)
}

/// What running the guide found: differences, skips, and the pictures compared.
#[derive(Default)]
struct Findings {
    failures: Vec<String>,
    skipped: Vec<String>,
    pictures: BTreeSet<String>,
}

/// Runs one console block and records what differs.
fn run_console(b: &Block, found: &mut Findings) {
    let mut lines = &b.lines[..];
    if let Some(tools) = lines.first().and_then(|l| l.strip_prefix(REQUIRES)) {
        if let Err(skip) = tools_present(b, tools) {
            found.skipped.push(skip);
            return;
        }
        lines = &lines[1..];
    }
    let body = Block {
        at: b.at.clone(),
        lang: b.lang.clone(),
        lines: lines.to_vec(),
    };
    let dir = workdir();
    for (n, step) in steps(&body).iter().enumerate() {
        let cmd = shell_command(b, &step.command);
        let (code, text) = run_shell(dir.path(), &cmd);
        let actual: Vec<&str> = text.lines().collect();
        let fails = step.shown.iter().any(|l| l.starts_with("error:"));
        let status_ok = if fails {
            code != Some(0)
        } else {
            code == Some(0)
        };
        let mismatch = output_matches(&step.shown, &actual);
        if status_ok && mismatch.is_none() {
            continue;
        }
        let keep = root().join("target/docs-actual");
        fs::create_dir_all(&keep).unwrap();
        let name = format!("{}-{}.txt", b.at.replace(['/', ':'], "_"), n + 1);
        fs::write(keep.join(&name), &text).unwrap();
        let why = match mismatch {
            _ if !status_ok => format!("exit status {code:?}"),
            Some(i) if i < step.shown.len() => format!("shown line {:?} not found", step.shown[i]),
            _ => "more output than shown (end the shown lines with `...`)".to_string(),
        };
        found.failures.push(format!(
            "{}: `{cmd}`: {why}; the whole output is in target/docs-actual/{name}",
            b.at
        ));
    }
    compare_pictures(&b.at, &dir.path().join("plots"), "", found);
}

/// Compares each file written under a block's `plots/` with the committed one of that name.
fn compare_pictures(at: &str, fresh: &Path, rel: &str, found: &mut Findings) {
    let Ok(entries) = fs::read_dir(fresh) else {
        return;
    };
    for e in entries {
        let e = e.unwrap();
        let name = format!("{rel}{}", e.file_name().to_string_lossy());
        if e.file_type().unwrap().is_dir() {
            compare_pictures(at, &e.path(), &format!("{name}/"), found);
            continue;
        }
        let committed = root().join("plots").join(&name);
        if !committed.exists() || NOT_REDRAWN.contains(&name.as_str()) {
            continue;
        }
        let bytes = fs::read(e.path()).unwrap();
        if name.starts_with(SIZE_ONLY) {
            let (fresh, kept) = (png_size(&bytes), png_size(&fs::read(&committed).unwrap()));
            if fresh != kept {
                found.failures.push(format!(
                    "{at}: plots/{name} is {kept:?} pixels, a fresh drawing {fresh:?}"
                ));
            }
        } else if std::env::var_os("QSIM_BLESS").is_some() {
            fs::write(&committed, &bytes).unwrap();
        } else if fs::read(&committed).unwrap() != bytes {
            let keep = root().join("target/docs-actual/plots").join(&name);
            fs::create_dir_all(keep.parent().unwrap()).unwrap();
            fs::write(&keep, &bytes).unwrap();
            found.failures.push(format!(
                "{at}: plots/{name} differs from a fresh drawing (left in \
                 target/docs-actual/plots/{name}; QSIM_BLESS=1 rewrites it)"
            ));
        }
        found.pictures.insert(name);
    }
}

/// Width and height from a PNG's header.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 24,
        "not a PNG"
    );
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

/// Does a line of a non-console block look like a command someone would paste?
fn looks_like_command(line: &str) -> bool {
    let line = line.trim_start();
    ["$ ", "qsim ", "cargo "]
        .iter()
        .any(|p| line.starts_with(p))
}

/// Checks and runs the blocks of one Markdown file.
fn check_file(file: &str, found: &mut Findings) {
    let text = fs::read_to_string(root().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    let guide = !file.starts_with("docs/model/");
    for b in blocks(file, &text) {
        let first = b.lines.first().map(String::as_str).unwrap_or("");
        if let Some(reason) = first.strip_prefix(UNTESTED) {
            if reason.trim().len() < 10 {
                found
                    .failures
                    .push(format!("{}: `{UNTESTED}` needs its reason", b.at));
            }
            continue;
        }
        match b.lang.as_str() {
            "console" => run_console(&b, found),
            "yaml" => {}
            _ if guide => found.failures.push(format!(
                "{}: a ```{} block that is neither run (```console) nor marked `{UNTESTED}REASON`",
                b.at, b.lang
            )),
            _ => {
                if let Some(l) = b.lines.iter().find(|l| looks_like_command(l)) {
                    found.failures.push(format!(
                        "{}: `{l}` looks like a command in a block that is not run: make it \
                         a ```console block",
                        b.at
                    ));
                }
            }
        }
    }
}

/// Every committed file under `plots/`, relative to it.
fn committed_pictures(dir: &Path, rel: &str, out: &mut BTreeSet<String>) {
    for e in fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = format!("{rel}{}", e.file_name().to_string_lossy());
        if e.file_type().unwrap().is_dir() {
            committed_pictures(&e.path(), &format!("{name}/"), out);
        } else {
            out.insert(name);
        }
    }
}

#[test]
fn every_command_in_the_guide_prints_what_the_guide_shows() {
    let only = std::env::var("QSIM_DOCS_ONLY").ok();
    let mut files = guide_files();
    files.extend(md_files("docs/model"));
    let mut found = Findings::default();
    let start = Instant::now();
    for file in files
        .iter()
        .filter(|f| only.as_ref().is_none_or(|o| o == *f))
    {
        let t = Instant::now();
        check_file(file, &mut found);
        eprintln!("docs: {file} in {:.1} s", t.elapsed().as_secs_f64());
    }
    eprintln!("docs: all blocks in {:.1} s", start.elapsed().as_secs_f64());
    for skip in &found.skipped {
        eprintln!("docs: {skip}");
    }
    if only.is_none() {
        let mut committed = BTreeSet::new();
        committed_pictures(&root().join("plots"), "", &mut committed);
        let fio_plot_skipped = found.skipped.iter().any(|s| s.contains("fio-plot"));
        for name in committed.difference(&found.pictures) {
            let exempt = NOT_REDRAWN.contains(&name.as_str())
                || (fio_plot_skipped && name.starts_with(SIZE_ONLY));
            if !exempt {
                found.failures.push(format!(
                    "plots/{name} is committed but no command in the guide draws it"
                ));
            }
        }
    }
    assert!(
        found.failures.is_empty(),
        "{} difference(s) between the guide and the program:\n{}",
        found.failures.len(),
        found.failures.join("\n")
    );
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file's headings (outside fenced blocks).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.insert(slug(line.trim_start_matches('#')));
        }
    }
    out
}

/// The relative link targets of a Markdown file (`](target)`, outside fenced blocks).
fn links(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            let target = &rest[..end];
            if !target.contains("://") && !target.starts_with("mailto:") {
                out.push(target.to_string());
            }
        }
    }
    out
}

#[test]
fn the_readme_is_a_front_door_and_every_link_of_the_guide_resolves() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let n = readme.lines().count();
    assert!(
        n <= README_MAX_LINES,
        "README.md has {n} lines; the reference belongs in docs/ (at most {README_MAX_LINES})"
    );
    let mut files = guide_files();
    files.extend(md_files("docs/model"));
    let mut broken = Vec::new();
    for file in &files {
        let text = fs::read_to_string(root().join(file)).unwrap();
        let dir = root().join(file).parent().unwrap().to_path_buf();
        for link in links(&text) {
            let (path, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let target: PathBuf = if path.is_empty() {
                root().join(file)
            } else {
                dir.join(path)
            };
            if !target.exists() {
                broken.push(format!("{file}: ({link}): no such file"));
            } else if !anchor.is_empty() && target.extension().is_some_and(|e| e == "md") {
                let heads = anchors(&fs::read_to_string(&target).unwrap());
                if !heads.contains(anchor) {
                    broken.push(format!("{file}: ({link}): no heading with that anchor"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_output_matcher_compares_every_shown_line_and_elides_only_where_marked() {
    let shown = |s: &str| s.lines().map(String::from).collect::<Vec<_>>();
    let out = ["report", "  fifo 12.9 ms", "  split 9.6 ms", "end"];
    assert_eq!(
        output_matches(&shown("report\n  fifo 12.9 ms\n  split 9.6 ms\nend"), &out),
        None
    );
    assert_eq!(
        output_matches(&shown("...\n  split 9.6 ms\n..."), &out),
        None
    );
    assert_eq!(output_matches(&shown("report\n...\nend"), &out), None);
    assert_eq!(output_matches(&shown("...\nend"), &out), None);
    assert_eq!(output_matches(&shown("..."), &out), None);
    // A changed number, a line out of place, and output the text does not admit to.
    assert_eq!(
        output_matches(&shown("...\n  split 9.7 ms\n..."), &out),
        Some(1)
    );
    assert_eq!(
        output_matches(&shown("report\n  split 9.6 ms\n..."), &out),
        Some(1)
    );
    assert_eq!(
        output_matches(&shown("report\n  fifo 12.9 ms"), &out),
        Some(2)
    );
    assert_eq!(output_matches(&shown("...\nreport"), &out), Some(1));
    assert_eq!(output_matches(&[], &out), Some(0));
    assert_eq!(output_matches(&[], &[]), None);
    // `[..]` stands for text within one line only.
    assert!(line_matches(
        "qsim serve: http://127.0.0.1:[..]/",
        "qsim serve: http://127.0.0.1:40495/"
    ));
    assert!(!line_matches(
        "qsim serve: http://127.0.0.1:[..]/",
        "qsim serve: http://[::1]:1/x"
    ));
    assert!(line_matches("a [..] c", "a b c   "));
    assert!(!line_matches("a [..] c", "a b d"));
}

#[test]
fn blocks_and_commands_are_read_as_the_convention_says() {
    let text =
        "x\n```console\n$ qsim run a \\\n  --seed 1\nout\n$ qsim list\n```\n```yaml\nk: v\n```\n";
    let found = blocks("f.md", text);
    assert_eq!(found.len(), 2);
    assert_eq!(
        (found[0].at.as_str(), found[0].lang.as_str()),
        ("f.md:2", "console")
    );
    let s = steps(&found[0]);
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].command, "qsim run a \\\n  --seed 1");
    assert_eq!(s[0].shown, ["out"]);
    assert!(s[1].shown.is_empty());
    let cargo = Block {
        at: "f.md:1".into(),
        lang: "console".into(),
        lines: vec![],
    };
    assert_eq!(
        shell_command(&cargo, "cargo run --release -- run x"),
        "qsim run x"
    );
    assert_eq!(shell_command(&cargo, "cargo run -- run x"), "qsim run x");
    let refused = std::panic::catch_unwind(|| shell_command(&cargo, "cargo test"));
    assert!(refused.is_err(), "cargo test cannot run inside cargo test");
    assert_eq!(
        slug(" 2a. fio's files for fio-plot: `--fio-dir DIR`"),
        "2a-fios-files-for-fio-plot---fio-dir-dir"
    );
}
