//! Helpers for driving the `qsim` binary: a command builder, captured output, and temporary
//! directories that clean up after themselves.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A `qsim` command run from the crate root, with no input.
pub fn qsim(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_qsim"));
    cmd.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null());
    cmd
}

/// What a finished `qsim` printed and how it exited.
pub struct Run {
    /// Exit code (`None` if killed by a signal).
    pub code: Option<i32>,
    /// Standard output, lossily decoded.
    pub stdout: String,
    /// Standard error, lossily decoded.
    pub stderr: String,
}

impl Run {
    /// Runs `qsim` with `args` to completion.
    pub fn of(args: &[&str]) -> Run {
        let out: Output = qsim(args).output().expect("the qsim binary runs");
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Asserts success with something on stdout and nothing on stderr.
    pub fn assert_ok(&self) -> &Run {
        assert_eq!(self.code, Some(0), "stderr:\n{}", self.stderr);
        assert!(!self.stdout.is_empty(), "no output");
        assert!(self.stderr.is_empty(), "stderr:\n{}", self.stderr);
        self
    }

    /// Asserts success with something on stdout and, on stderr, only the list of the plot
    /// files written (one path a line, each a file that now exists), which `--plots` prints.
    pub fn assert_ok_with_plots(&self) -> &Run {
        assert_eq!(self.code, Some(0), "stderr:\n{}", self.stderr);
        assert!(!self.stdout.is_empty(), "no output");
        assert!(!self.stderr.is_empty(), "no plot files listed");
        for line in self.stderr.lines() {
            assert!(
                (line.ends_with(".png") || line.ends_with(".svg"))
                    && std::path::Path::new(line).is_file(),
                "not a plot file written: {line:?}\nstderr:\n{}",
                self.stderr
            );
        }
        self
    }

    /// Asserts a bad-input failure: exit 2, an `error:` with a hint on stderr, no stdout, no panic.
    pub fn assert_bad_input(&self) -> &Run {
        assert_eq!(
            self.code,
            Some(2),
            "stdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        assert!(self.stdout.is_empty(), "partial output:\n{}", self.stdout);
        assert!(
            self.stderr.starts_with("error: "),
            "stderr:\n{}",
            self.stderr
        );
        assert!(self.stderr.contains("hint:"), "no hint:\n{}", self.stderr);
        assert!(!self.stderr.contains("panicked"), "panic:\n{}", self.stderr);
        self
    }

    /// Asserts that stderr contains each of `needles`.
    pub fn stderr_has(&self, needles: &[&str]) -> &Run {
        for n in needles {
            assert!(
                self.stderr.contains(n),
                "missing {n:?} in stderr:\n{}",
                self.stderr
            );
        }
        self
    }

    /// Asserts every stdout line fits 80 columns (in characters) and no table cell was broken
    /// after its `±` to get there (issue 28).
    pub fn stdout_fits_80(&self) -> &Run {
        for (i, line) in self.stdout.lines().enumerate() {
            let n = line.chars().count();
            assert!(n <= 80, "stdout line {}: {n} columns: {line}", i + 1);
            assert!(
                !line.ends_with(" ±"),
                "stdout line {}: a broken cell: {line}",
                i + 1
            );
        }
        self
    }

    /// Asserts that stdout contains each of `needles`, reading every run of blanks and line
    /// breaks in both as one space: for values that wrap at 80 columns (`qsim check`, prose).
    pub fn stdout_has_words(&self, needles: &[&str]) -> &Run {
        let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        let out = flat(&self.stdout);
        for n in needles {
            assert!(
                out.contains(&flat(n)),
                "missing {n:?} in stdout:\n{}",
                self.stdout
            );
        }
        self
    }

    /// Asserts that stdout contains each of `needles`.
    pub fn stdout_has(&self, needles: &[&str]) -> &Run {
        for n in needles {
            assert!(
                self.stdout.contains(n),
                "missing {n:?} in stdout:\n{}",
                self.stdout
            );
        }
        self
    }
}

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl Default for TempDir {
    fn default() -> Self {
        Self::new()
    }
}

impl TempDir {
    /// Creates a new, empty directory unique to this process and call.
    pub fn new() -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("qsim-test-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `text` to `name` inside the directory and returns its path as a string.
    pub fn file(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).expect("write fixture");
        p.to_str().expect("UTF-8 temp path").to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `qsim` with `args` like [`Run::of`], but kills it and fails the test if it has not
/// finished within `limit`: for inputs that once hung or ran away (a generous limit, not a
/// timing test). Its peak memory must stay under [`HOSTILE_RSS_KB`] (see [`run_bounded`]).
pub fn run_within(args: &[&str], limit: std::time::Duration) -> Run {
    run_bounded(args, &[], limit)
}

/// How long a hostile input may run before [`run_within`] kills it: generous, for a busy
/// machine; a guard against a hang, not a timing test.
pub const HOSTILE: std::time::Duration = std::time::Duration::from_secs(120);

/// Peak resident memory a hostile input may cost, kB (issue 32: 500 MB).
pub const HOSTILE_RSS_KB: u64 = 500_000;

/// Peak resident set of a live process, kB (`VmHWM`), or `None` once it has exited (a
/// zombie has no memory to report).
fn peak_rss_kb(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// [`run_within`] with extra environment variables; fails the test if the peak resident set
/// (`VmHWM`, read every millisecond for the first 200 ms, then every 20 ms: a peak within the
/// last poll may be missed, where the inputs this guards against grew for seconds) passed
/// [`HOSTILE_RSS_KB`]. The wall time and peak are printed (on the test's stdout), not
/// asserted: timing belongs in benchmarks.
pub fn run_bounded(args: &[&str], env: &[(&str, &str)], limit: std::time::Duration) -> Run {
    use std::io::Read;
    let mut cmd = qsim(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the qsim binary runs");
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped")));
    let err = drain(Box::new(child.stderr.take().expect("piped")));
    let start = std::time::Instant::now();
    let mut peak_kb = 0;
    let status = loop {
        peak_kb = peak_kb.max(peak_rss_kb(child.id()).unwrap_or(0));
        if let Some(status) = child.try_wait().expect("wait for qsim") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("qsim {args:?} still running after {limit:?}");
        }
        let fast = start.elapsed() < std::time::Duration::from_millis(200);
        std::thread::sleep(std::time::Duration::from_millis(if fast { 1 } else { 20 }));
    };
    let wall = start.elapsed();
    let text = |h: std::thread::JoinHandle<Vec<u8>>| {
        String::from_utf8_lossy(&h.join().expect("reader thread")).into_owned()
    };
    println!(
        "qsim {}: {:.2} s, peak RSS {} kB",
        args.first().unwrap_or(&""),
        wall.as_secs_f64(),
        peak_kb
    );
    assert!(
        peak_kb < HOSTILE_RSS_KB,
        "qsim {args:?} peaked at {peak_kb} kB, over {HOSTILE_RSS_KB} kB"
    );
    Run {
        code: status.code(),
        stdout: text(out),
        stderr: text(err),
    }
}
