//! Reading the files a user names (scenarios, fio job files, results files, shard files)
//! without trusting them to end or even to open: a size cap counted in bytes read, and a
//! deadline for a special file (a FIFO, a device, a socket) that never delivers.
//!
//! A regular file is opened and read on the calling thread. Anything else is opened (and, by
//! [`read_capped`], read) on a helper thread that the caller waits for at most
//! [`read_timeout`]: a FIFO that no process opens for writing blocks `open(2)` forever, and
//! one whose writer never writes blocks `read(2)`. On the deadline the caller gets an error of
//! kind [`std::io::ErrorKind::TimedOut`] that says nothing was written within the deadline;
//! the helper thread stays blocked until the process exits, which it then soon does.

use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// How long qsim waits for a special file (a FIFO, a device) to deliver a scenario, job file or
/// results file whole, or to open as a shard file, before it gives up.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// The environment variable that overrides [`READ_TIMEOUT`], in milliseconds (for tests).
pub const READ_TIMEOUT_ENV: &str = "QSIM_READ_TIMEOUT_MS";

/// [`READ_TIMEOUT`], or the milliseconds [`READ_TIMEOUT_ENV`] gives.
pub fn read_timeout() -> Duration {
    std::env::var(READ_TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(READ_TIMEOUT, Duration::from_millis)
}

/// Whether `path` is read on the calling thread: a regular file, or a path whose metadata
/// cannot be had (opening it then gives the error).
fn is_plain(path: &Path) -> bool {
    std::fs::metadata(path).map_or(true, |m| m.is_file() || m.is_dir())
}

/// How far a helper thread got: opened the file, and how many bytes it has read.
#[derive(Default)]
struct Progress {
    opened: AtomicBool,
    read: AtomicU64,
}

/// The error for a special file that did not deliver within `limit`.
fn timed_out(path: &Path, limit: Duration, got: &Progress) -> io::Error {
    let secs = limit.as_secs_f64();
    let what = if !got.opened.load(Ordering::Relaxed) {
        format!(
            "nothing was written to {} within {secs} s: it is a FIFO or device that no process \
             opened for writing",
            path.display()
        )
    } else {
        match got.read.load(Ordering::Relaxed) {
            0 => format!(
                "nothing was written to {} within {secs} s (its writer holds it open but \
                 writes nothing)",
                path.display()
            ),
            n => format!(
                "{} delivered {n} bytes but did not end within {secs} s (its writer holds it \
                 open)",
                path.display()
            ),
        }
    };
    io::Error::new(io::ErrorKind::TimedOut, what)
}

/// Opens `path` for reading. A regular file opens at once; a special file opens on a helper
/// thread, waited for at most [`read_timeout`] (a FIFO opens only when a writer opens it).
/// Reading what it returns is not timed: a shard run that writes into a pipe may take hours.
pub fn open_with_deadline(path: &Path) -> io::Result<std::fs::File> {
    if is_plain(path) {
        return std::fs::File::open(path);
    }
    let (tx, rx) = mpsc::channel();
    let owned = path.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(std::fs::File::open(owned));
    });
    let limit = read_timeout();
    rx.recv_timeout(limit)
        .map_err(|_| timed_out(path, limit, &Progress::default()))?
}

/// Reads at most `max` bytes of the file at `path` and returns them, or an error of kind
/// [`std::io::ErrorKind::FileTooLarge`] if the file holds more. The limit counts the bytes
/// actually read (through [`std::io::Read::take`], one byte past `max`), never the size the
/// file reports, so a device that reports 0 and never ends (`/dev/zero`, `/dev/urandom`) is
/// refused after `max + 1` bytes, and a pipe or FIFO is read to its end like a file. A special
/// file must open and end within [`read_timeout`], or the error is of kind
/// [`std::io::ErrorKind::TimedOut`] and says nothing was written to it. Any other error is the
/// one opening or reading gave (a directory fails with `IsADirectory`).
///
/// qsim reads every file a user names through it: scenario files
/// ([`MAX_FILE_BYTES`](super::MAX_FILE_BYTES)), fio job files and results files for
/// `qsim plot`.
pub fn read_capped(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    if is_plain(path) {
        return read_all(std::fs::File::open(path)?, max, &Progress::default());
    }
    let got = Arc::new(Progress::default());
    let (tx, rx) = mpsc::channel();
    let (owned, progress) = (path.to_path_buf(), Arc::clone(&got));
    std::thread::spawn(move || {
        let read = std::fs::File::open(owned).and_then(|file| {
            progress.opened.store(true, Ordering::Relaxed);
            read_all(file, max, &progress)
        });
        let _ = tx.send(read);
    });
    let limit = read_timeout();
    rx.recv_timeout(limit)
        .map_err(|_| timed_out(path, limit, &got))?
}

/// Reads `file` to its end, at most `max` bytes, counting them into `got`.
fn read_all(file: std::fs::File, max: u64, got: &Progress) -> io::Result<Vec<u8>> {
    let mut capped = file.take(max.saturating_add(1));
    let (mut bytes, mut chunk) = (Vec::new(), vec![0u8; 64 << 10]);
    loop {
        let n = match capped.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        bytes.extend_from_slice(&chunk[..n]);
        got.read.fetch_add(n as u64, Ordering::Relaxed);
    }
    if bytes.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("more than {max} bytes"),
        ));
    }
    Ok(bytes)
}
