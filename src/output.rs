//! Output files: where `--json`, `--csv`, `--markdown` and `--plots` write, checked before a
//! run starts and written so that no user file is ever destroyed or left half-written.
//!
//! This module owns every byte qsim writes outside stdout, and the clean-up when qsim is
//! interrupted. The rules:
//!
//! | the path names | what happens |
//! |---|---|
//! | `-` | the bytes go to standard output, after the report |
//! | nothing yet, or a regular file | written whole to a hidden temporary file beside it, synced, then renamed over it (an existing file keeps its permission bits) |
//! | a symlink | followed: the rules apply to its final target, so the link stays a link |
//! | a device, a pipe, a socket, `/dev/stdout` | opened for writing and written through, never replaced |
//! | a directory | refused (for `--plots`, a directory is what is wanted) |
//!
//! [`check_file`] and [`check_dir`] apply these rules before anything is simulated, so a
//! mistyped path costs no simulation time, and [`write_file`] applies them again when writing.
//! Every temporary file is registered before it is created and forgotten once renamed; the
//! handler that [`install_interrupt_handler`] sets up removes the registered ones on SIGINT,
//! SIGTERM or SIGHUP, says which files were written completely, and exits with 130.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Most symlinks followed from one path (Linux's own limit is 40).
const MAX_LINKS: usize = 40;

/// Why an output path cannot be used; it names the path and says what to do instead.
#[derive(Debug, thiserror::Error)]
#[error("{flag} {}: {message}\n  hint: {hint}", path.display())]
pub struct OutputError {
    /// The option that named the path (`--json`, `--plots`, …).
    pub flag: String,
    /// The path as given.
    pub path: PathBuf,
    /// What is wrong with it.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

/// Refuses an output file that is one of the command's input files (`inputs`: what each is,
/// and its path), so that `qsim run x.yaml --json x.yaml` or `qsim merge a.json --json a.json`
/// cannot replace what it reads: the same file after following links (canonical paths), or
/// the same inode under another name (a hard link). An output that does not exist yet, or
/// is standard output, is never an input.
pub fn check_not_input(
    flag: &str,
    path: &Path,
    inputs: &[(&str, &Path)],
) -> Result<(), OutputError> {
    let Ok(out) = fs::metadata(path) else {
        return Ok(());
    };
    if !out.is_file() {
        return Ok(());
    }
    let canonical = fs::canonicalize(path).ok();
    for (what, input) in inputs {
        let Ok(m) = fs::metadata(input) else { continue };
        let same_inode = {
            use std::os::unix::fs::MetadataExt;
            m.dev() == out.dev() && m.ino() == out.ino()
        };
        if same_inode || (canonical.is_some() && fs::canonicalize(input).ok() == canonical) {
            return Err(OutputError {
                flag: flag.to_string(),
                path: path.to_path_buf(),
                message: format!(
                    "is the {what} this command reads ({}): writing there would replace it",
                    input.display()
                ),
                hint: format!("give {flag} another file name"),
            });
        }
    }
    Ok(())
}

/// Where one output file goes, as resolved by [`check_file`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Standard output (`-`).
    Stdout,
    /// A regular file (existing or not), written to a temporary file and renamed over `path`,
    /// which is the final target after following symlinks.
    Replace {
        /// The final path renamed over.
        path: PathBuf,
    },
    /// A device, pipe or socket: opened and written through.
    Through {
        /// The path opened (as given, so the kernel resolves `/dev/stdout` and `/dev/fd/N`).
        path: PathBuf,
    },
}

/// What a path names once every symlink is followed.
enum Resolved {
    /// Nothing: the final target is this path.
    Missing(PathBuf),
    /// A regular file at this (final) path.
    Regular(PathBuf),
    /// A directory.
    Dir,
    /// A device, pipe or socket.
    Special,
}

/// Follows `path` to what it finally names. The kernel resolves it first (which also handles
/// `/proc/self/fd` links that are not paths); only a dangling symlink is followed by hand, to
/// find the missing file it points to.
fn resolve(path: &Path) -> io::Result<Resolved> {
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => return Ok(Resolved::Dir),
        Ok(m) if m.is_file() => return Ok(Resolved::Regular(fs::canonicalize(path)?)),
        Ok(_) => return Ok(Resolved::Special),
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        Err(_) => {}
    }
    // Missing, or a symlink whose target is missing: find the file it would create.
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            Ok(_) => return Ok(Resolved::Missing(canonical_dir(p))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(Resolved::Missing(canonical_dir(p)));
            }
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links in a chain"
    )))
}

/// `path` with its directory made canonical when that directory exists, so two spellings of
/// one new file (`x.csv`, `./x.csv`) resolve alike.
fn canonical_dir(path: PathBuf) -> PathBuf {
    match (fs::canonicalize(parent_of(&path)), path.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => path,
    }
}

/// The directory a new file at `path` would be created in.
fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Checks that `path` (given to `flag`) can take an output file, without changing anything
/// that is there: `-` is stdout, a directory is refused, a missing file's directory must exist
/// and accept a new file (probed by creating and removing a temporary file), a special file
/// must open for writing.
pub fn check_file(flag: &str, path: &Path) -> Result<Target, OutputError> {
    let fail = |message: String, hint: &str| OutputError {
        flag: flag.to_string(),
        path: path.to_path_buf(),
        message,
        hint: hint.to_string(),
    };
    if path.as_os_str() == "-" {
        return Ok(Target::Stdout);
    }
    if path.as_os_str().is_empty() {
        return Err(fail(
            "an empty path".into(),
            "give a file name, or - for standard output",
        ));
    }
    let resolved = resolve(path).map_err(|e| {
        fail(
            format!("cannot look the path up: {e}"),
            "check each directory on the path",
        )
    })?;
    match resolved {
        Resolved::Dir => Err(fail(
            "is a directory".into(),
            "give a file name inside it, e.g. DIR/results.json",
        )),
        Resolved::Special => {
            // Opening a FIFO with no reader would block; its writability is left to write time.
            let is_fifo = {
                use std::os::unix::fs::FileTypeExt;
                fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
            };
            if !is_fifo {
                fs::OpenOptions::new().write(true).open(path).map_err(|e| {
                    fail(
                        format!("cannot open it for writing: {e}"),
                        "check the device's permissions",
                    )
                })?;
            }
            Ok(Target::Through {
                path: path.to_path_buf(),
            })
        }
        Resolved::Regular(real) | Resolved::Missing(real) => {
            let dir = parent_of(&real);
            match fs::metadata(dir) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    return Err(fail(
                        format!("{} is not a directory", dir.display()),
                        "give a path whose directories exist",
                    ));
                }
                Err(e) => {
                    return Err(fail(
                        format!("its directory {} cannot be used: {e}", dir.display()),
                        "create the directory first, or give a path in an existing one",
                    ));
                }
            }
            let probe = Temp::create(&real).map_err(|e| {
                fail(
                    format!("cannot create a file in {}: {e}", dir.display()),
                    "check the directory's permissions, or write elsewhere",
                )
            })?;
            drop(probe);
            Ok(Target::Replace { path: real })
        }
    }
}

/// Checks a directory the user named (`--plots DIR`) as [`check_file`] checks a file: it
/// exists, or it is missing and its parent is an existing directory (only `dir` itself is
/// created, as `--json` creates only its file), then [`check_dir`]'s rules.
pub fn check_named_dir(flag: &str, dir: &Path) -> Result<(), OutputError> {
    if !dir.exists() {
        let parent = parent_of(dir);
        if !parent.is_dir() {
            return Err(OutputError {
                flag: flag.to_string(),
                path: dir.to_path_buf(),
                message: format!(
                    "its parent {} is not an existing directory",
                    parent.display()
                ),
                hint: format!(
                    "create {} first, or name a directory in an existing one ({flag} alone \
                     writes to plots/SCENARIO/, created as needed)",
                    parent.display()
                ),
            });
        }
    }
    check_dir(flag, dir)
}

/// Checks that `dir` (given to `flag`) can take plot files: an existing directory, or a
/// missing one whose nearest existing ancestor is a directory (it is created when the plots
/// are written). Anything else that exists at `dir` is refused.
pub fn check_dir(flag: &str, dir: &Path) -> Result<(), OutputError> {
    let fail = |message: String, hint: &str| OutputError {
        flag: flag.to_string(),
        path: dir.to_path_buf(),
        message,
        hint: hint.to_string(),
    };
    let mut p = dir;
    loop {
        match fs::metadata(p) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(_) if p == dir => {
                return Err(fail(
                    "exists and is not a directory".into(),
                    &format!(
                        "{flag} writes several files: give a directory (it is created if missing)"
                    ),
                ));
            }
            Ok(_) => {
                return Err(fail(
                    format!("{} is not a directory", p.display()),
                    "give a path whose existing parts are directories",
                ));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => match p.parent() {
                Some(up) if !up.as_os_str().is_empty() => p = up,
                _ => return Ok(()),
            },
            Err(e) => {
                return Err(fail(
                    format!("cannot look the path up: {e}"),
                    "check each directory on the path",
                ));
            }
        }
    }
}

/// Writes `bytes` to the file `path` by [the rules](self): `-` to `stdout`, a special file
/// through, anything else atomically (a symlink's target replaced, the link kept).
pub fn write_file(path: &Path, bytes: &[u8], stdout: &mut dyn Write) -> io::Result<()> {
    let target = if path.as_os_str() == "-" {
        Target::Stdout
    } else {
        match resolve(path)? {
            Resolved::Dir => {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    "is a directory",
                ));
            }
            Resolved::Special => Target::Through {
                path: path.to_path_buf(),
            },
            Resolved::Regular(p) | Resolved::Missing(p) => Target::Replace { path: p },
        }
    };
    write_target(&target, bytes, stdout)?;
    if target != Target::Stdout {
        registry().written.push(path.to_path_buf());
    }
    Ok(())
}

fn write_target(target: &Target, bytes: &[u8], stdout: &mut dyn Write) -> io::Result<()> {
    match target {
        Target::Stdout => {
            stdout.write_all(bytes)?;
            stdout.flush()
        }
        Target::Through { path } => {
            let mut f = fs::OpenOptions::new().write(true).open(path)?;
            f.write_all(bytes)?;
            f.flush()
        }
        Target::Replace { path } => {
            let old_mode = fs::metadata(path).ok().map(|m| m.permissions());
            let mut temp = Temp::create(path)?;
            let file = temp.file.as_mut().expect("a fresh temporary file is open");
            file.write_all(bytes)?;
            if let Some(mode) = old_mode {
                file.set_permissions(mode)?;
            }
            file.sync_all()?;
            temp.commit(path)
        }
    }
}

/// A file written as it goes, through a bounded buffer, into a hidden temporary file beside
/// `path` (registered for removal on interrupt, as [`write_file`]'s are); [`StreamFile::commit`]
/// syncs it and renames it over `path`, and dropping it uncommitted removes it, so `path` is
/// never left half-written. For output too big to build in memory (fio's per-I/O logs).
#[derive(Debug)]
pub struct StreamFile {
    path: PathBuf,
    temp: Temp,
    /// `None` once [`StreamFile::close`]d.
    buf: Option<io::BufWriter<fs::File>>,
}

impl StreamFile {
    /// Starts the file that will become `path` (its folder must exist).
    pub fn create(path: &Path) -> io::Result<StreamFile> {
        let mut temp = Temp::create(path)?;
        let file = temp.file.take().expect("a fresh temporary file is open");
        Ok(StreamFile {
            path: path.to_path_buf(),
            temp,
            buf: Some(io::BufWriter::with_capacity(64 * 1024, file)),
        })
    }

    /// Flushes and syncs what was written and closes the temporary file (its buffer freed);
    /// later writes fail, and [`StreamFile::commit`] still renames it into place.
    pub fn close(&mut self) -> io::Result<()> {
        let Some(buf) = self.buf.take() else {
            return Ok(());
        };
        let file = buf.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.sync_all()
    }

    /// The path the file becomes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes and syncs what was written and renames it over the final path.
    pub fn commit(mut self) -> io::Result<()> {
        self.close()?;
        let StreamFile { path, temp, .. } = self;
        temp.commit(&path)?;
        registry().written.push(path);
        Ok(())
    }
}

impl Write for StreamFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match &mut self.buf {
            Some(buf) => buf.write(bytes),
            None => Err(io::Error::other("written after close")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.buf.as_mut().map_or(Ok(()), Write::flush)
    }
}

/// A hidden temporary file beside its final path, registered for removal on interrupt; it is
/// removed on drop unless [`Temp::commit`] renamed it into place.
#[derive(Debug)]
struct Temp {
    tmp: PathBuf,
    file: Option<fs::File>,
}

impl Temp {
    /// Creates `.<name>.qsim-<pid>-<n>.tmp` beside `path` (never an existing file).
    fn create(path: &Path) -> io::Result<Temp> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let name = path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "out".into());
        // Keep the name within NAME_MAX whatever the final name's length.
        let short: String = name.chars().take(100).collect();
        let tmp = parent_of(path).join(format!(".{short}.qsim-{}-{n}.tmp", std::process::id()));
        // Registered before it exists, so an interrupt between the two still removes it.
        registry().temps.push(tmp.clone());
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(file) => Ok(Temp {
                tmp,
                file: Some(file),
            }),
            Err(e) => {
                registry().temps.retain(|t| t != &tmp);
                Err(e)
            }
        }
    }

    /// Renames the temporary file over `path`, under the registry's lock so an interrupt sees
    /// either the temporary file or the finished one, never neither.
    fn commit(mut self, path: &Path) -> io::Result<()> {
        self.file = None;
        let mut reg = registry();
        fs::rename(&self.tmp, path)?;
        reg.temps.retain(|t| t != &self.tmp);
        self.tmp = PathBuf::new();
        Ok(())
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if self.tmp.as_os_str().is_empty() {
            return;
        }
        self.file = None;
        let mut reg = registry();
        let _ = fs::remove_file(&self.tmp);
        reg.temps.retain(|t| t != &self.tmp);
    }
}

/// Temporary files that exist now and finished files written by this process.
#[derive(Debug, Default)]
struct Registry {
    temps: Vec<PathBuf>,
    written: Vec<PathBuf>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    temps: Vec::new(),
    written: Vec::new(),
});

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Removes every registered temporary file and returns the line to print: which files were
/// written completely before the interrupt.
pub fn clean_up_after_interrupt() -> String {
    let mut reg = registry();
    let mut removed = 0;
    for t in reg.temps.drain(..) {
        if fs::remove_file(&t).is_ok() {
            removed += 1;
        }
    }
    let written = if reg.written.is_empty() {
        "no output file was written".to_string()
    } else {
        let names: Vec<String> = reg
            .written
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        match names.as_slice() {
            [a] => format!("written completely: {a}"),
            [a, b] => format!("written completely: {a}, {b}"),
            [first, .., last] => format!(
                "written completely: {} files, {first} to {last}",
                names.len()
            ),
            [] => unreachable!("checked above"),
        }
    };
    // Keep the lock: the process exits next, and no rename may slip in.
    std::mem::forget(reg);
    format!(
        "qsim: interrupted; {written}; {removed} unfinished temporary file{} removed",
        if removed == 1 { "" } else { "s" }
    )
}

/// Installs the handler for SIGINT, SIGTERM and SIGHUP: it removes unfinished temporary files,
/// prints what was written to stderr, and exits with 130. Call once, from `main`.
pub fn install_interrupt_handler() -> Result<(), ctrlc::Error> {
    ctrlc::set_handler(|| {
        let line = clean_up_after_interrupt();
        let _ = writeln!(io::stderr(), "{line}");
        std::process::exit(130);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{FileTypeExt, PermissionsExt, symlink};

    /// A fresh directory under the system temp dir, removed on drop.
    struct TmpDir(PathBuf);
    impl TmpDir {
        fn new(tag: &str) -> TmpDir {
            static N: AtomicU64 = AtomicU64::new(0);
            let p = std::env::temp_dir().join(format!(
                "qsim-output-{tag}-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            fs::create_dir_all(&p).unwrap();
            TmpDir(p)
        }
    }
    impl Drop for TmpDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".qsim-"))
            .collect()
    }

    #[test]
    fn a_regular_file_is_replaced_whole_and_keeps_its_mode() {
        let d = TmpDir::new("reg");
        let f = d.0.join("x.csv");
        assert_eq!(
            check_file("--csv", &f).unwrap(),
            Target::Replace {
                path: d.0.join("x.csv")
            }
        );
        write_file(&f, b"one", &mut io::sink()).unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o640)).unwrap();
        write_file(&f, b"two", &mut io::sink()).unwrap();
        assert_eq!(fs::read(&f).unwrap(), b"two");
        assert_eq!(
            fs::metadata(&f).unwrap().permissions().mode() & 0o777,
            0o640
        );
        assert!(leftovers(&d.0).is_empty());
    }

    #[test]
    fn a_symlink_is_written_through_to_its_target() {
        let d = TmpDir::new("link");
        let real = d.0.join("real.csv");
        fs::write(&real, b"old").unwrap();
        let link = d.0.join("link.csv");
        symlink("real.csv", &link).unwrap();
        write_file(&link, b"new", &mut io::sink()).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(&real).unwrap(), b"new");
        // A dangling link creates its target and stays a link.
        let dangling = d.0.join("dangling.json");
        symlink("made.json", &dangling).unwrap();
        assert_eq!(
            check_file("--json", &dangling).unwrap(),
            Target::Replace {
                path: d.0.join("made.json")
            }
        );
        write_file(&dangling, b"{}", &mut io::sink()).unwrap();
        assert!(
            fs::symlink_metadata(&dangling)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(d.0.join("made.json")).unwrap(), b"{}");
        // A loop is an error, not a hang.
        symlink("b", d.0.join("a")).unwrap();
        symlink("a", d.0.join("b")).unwrap();
        assert!(check_file("--csv", &d.0.join("a")).is_err());
        assert!(leftovers(&d.0).is_empty());
    }

    #[test]
    fn a_device_node_and_a_pipe_are_written_through_never_replaced() {
        let d = TmpDir::new("dev");
        // A private character device like /dev/null (1,3); mknod needs root, which CI has.
        let node = d.0.join("null");
        let made = std::process::Command::new("mknod")
            .arg(&node)
            .args(["c", "1", "3"])
            .status()
            .is_ok_and(|s| s.success());
        if made {
            assert_eq!(
                check_file("--json", &node).unwrap(),
                Target::Through { path: node.clone() }
            );
            write_file(&node, b"{}", &mut io::sink()).unwrap();
            let m = fs::symlink_metadata(&node).unwrap();
            assert!(m.file_type().is_char_device(), "the node was replaced");
            // Through a symlink to it, too.
            let link = d.0.join("to-null");
            symlink(&node, &link).unwrap();
            write_file(&link, b"{}", &mut io::sink()).unwrap();
            assert!(
                fs::symlink_metadata(&node)
                    .unwrap()
                    .file_type()
                    .is_char_device()
            );
            assert!(
                fs::symlink_metadata(&link)
                    .unwrap()
                    .file_type()
                    .is_symlink()
            );
        } else {
            eprintln!("mknod is not permitted here: the device half of this test was skipped");
        }
        // A named pipe, read by a thread.
        let fifo = d.0.join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        assert_eq!(
            check_file("--csv", &fifo).unwrap(),
            Target::Through { path: fifo.clone() }
        );
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read(fifo).unwrap())
        };
        write_file(&fifo, b"a,b\n", &mut io::sink()).unwrap();
        assert_eq!(reader.join().unwrap(), b"a,b\n");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert!(leftovers(&d.0).is_empty());
    }

    #[test]
    fn dash_is_stdout_and_directories_are_refused() {
        assert_eq!(
            check_file("--json", Path::new("-")).unwrap(),
            Target::Stdout
        );
        let mut out = Vec::new();
        write_file(Path::new("-"), b"hello", &mut out).unwrap();
        assert_eq!(out, b"hello");
        let d = TmpDir::new("dir");
        let e = check_file("--json", &d.0).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        assert!(write_file(&d.0, b"x", &mut io::sink()).is_err());
        let e = check_file("--json", &d.0.join("missing/x.json")).unwrap_err();
        assert!(e.to_string().contains("create the directory first"), "{e}");
        assert!(e.to_string().starts_with("--json "), "{e}");
    }

    #[test]
    fn a_named_directory_needs_an_existing_parent() {
        let d = TmpDir::new("named");
        check_named_dir("--plots", &d.0).unwrap();
        check_named_dir("--plots", &d.0.join("new")).unwrap();
        let e = check_named_dir("--plots", &d.0.join("a/b")).unwrap_err();
        assert!(
            e.to_string().contains("is not an existing directory"),
            "{e}"
        );
        assert!(e.to_string().starts_with("--plots "), "{e}");
        assert!(!d.0.join("a").exists());
        check_named_dir("--plots", Path::new("relative-and-missing")).unwrap();
    }

    #[test]
    fn plot_directories_are_checked_without_being_created() {
        let d = TmpDir::new("plots");
        check_dir("--plots", &d.0).unwrap();
        check_dir("--plots", &d.0.join("a/b/c")).unwrap();
        assert!(!d.0.join("a").exists());
        let f = d.0.join("file");
        fs::write(&f, b"x").unwrap();
        let e = check_dir("--plots", &f).unwrap_err();
        assert!(e.to_string().contains("not a directory"), "{e}");
        assert!(check_dir("--plots", &f.join("sub")).is_err());
    }

    #[test]
    fn temporary_files_are_registered_while_they_exist() {
        let d = TmpDir::new("int");
        let t = Temp::create(&d.0.join("p.png")).unwrap();
        let tmp = t.tmp.clone();
        assert!(tmp.exists());
        assert!(registry().temps.contains(&tmp));
        drop(t);
        assert!(!tmp.exists());
        assert!(!registry().temps.contains(&tmp));
        let t = Temp::create(&d.0.join("q.png")).unwrap();
        let tmp = t.tmp.clone();
        t.commit(&d.0.join("q.png")).unwrap();
        assert!(!registry().temps.contains(&tmp));
        assert!(d.0.join("q.png").exists() && !tmp.exists());
    }
}
