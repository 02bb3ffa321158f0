//! The files a run writes beside its report: the exports (`--csv`, `--markdown`, `--json`),
//! the plots, and `--fio-dir`'s folders, with fio's per-I/O logs that replication 0 of each
//! run streams into them while it is simulated.

use super::{Error, MakeSink, RunOptions, Slot, plan};
use crate::model;
use crate::report::Report;
use crate::report::export;
use crate::scenario::Scenario;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

/// With `--fio-dir` and `log_avg_msec=0`, for each run the maker of its per-I/O logs
/// ([`crate::report::fiolog::PerIoLogs`]), which start as temporary files in its folder
/// (created here) when the run starts; none otherwise.
pub(super) fn per_io_sinks(sc: &Scenario, opts: &RunOptions) -> Result<Vec<Slot>, Error> {
    let (Some(dir), true) = (&opts.fio_dir, opts.fio_logs.per_io()) else {
        return Ok(Vec::new());
    };
    let runs = plan(sc);
    let prefix = crate::report::fiodir::log_prefix(&crate::report::JobOptions::of(sc));
    let dirs = crate::report::fiodir::run_dirs(runs.iter().map(|r| r.label.as_str()));
    let mut sinks = Vec::new();
    for name in dirs {
        let run_dir = dir.join(name);
        std::fs::create_dir_all(&run_dir).map_err(|source| Error::Export {
            path: run_dir.clone(),
            source,
        })?;
        let (prefix, logs) = (prefix.clone(), opts.fio_logs);
        let make: MakeSink = Box::new(move || {
            use crate::report::fiolog::PerIoLogs;
            // A file that cannot be started fails the commit, after the report.
            let sink =
                PerIoLogs::create(&run_dir, &prefix, &logs).unwrap_or_else(PerIoLogs::failed);
            Box::new(sink) as Box<dyn model::observe::recorder::IoSink>
        });
        sinks.push(Mutex::new(Some(make)));
    }
    Ok(sinks)
}

/// Writes the export files `opts` asks for, each whole or not at all ([`crate::output`]); `-`
/// goes to `out`. Every export is tried, so one bad path costs no other file; the first
/// failure is returned.
pub(super) fn write_exports(
    opts: &RunOptions,
    report: &Report,
    per_io: Vec<crate::report::fiolog::PerIoLogs>,
    out: &mut dyn Write,
) -> Result<(), Error> {
    let mut files: Vec<(&PathBuf, Vec<u8>)> = Vec::new();
    if let Some(path) = &opts.csv_file {
        files.push((path, export::report_csv(report).into_bytes()));
    }
    if let Some(path) = &opts.markdown_file {
        files.push((
            path,
            export::markdown(&report.metrics, &report.pairing()).into_bytes(),
        ));
    }
    if let Some(path) = &opts.json_file {
        let mut buf = Vec::new();
        crate::report::json::render_results(report, &mut buf)?;
        files.push((path, buf));
    }
    let mut failed: Option<Error> = None;
    for (path, bytes) in files {
        if let Err(source) = crate::output::write_file(path, &bytes, out) {
            failed.get_or_insert(Error::Export {
                path: path.clone(),
                source,
            });
        }
    }
    if let (Some(dir), Some(plots)) = (&opts.plots_dir, &report.plots) {
        match crate::plot::render_all(plots, dir) {
            // Listed on stderr, one path a line as `qsim plot` lists them on stdout: stdout
            // holds the report (or one JSON document).
            Ok(written) => {
                let mut err = std::io::stderr().lock();
                for path in written {
                    let _ = writeln!(err, "{}", path.display());
                }
            }
            Err(e) => {
                failed.get_or_insert(e.into());
            }
        }
    }
    if let Some(dir) = &opts.fio_dir
        && let Err(e) = write_fio_dir(dir, report, out)
    {
        failed.get_or_insert(e);
    }
    // The per-I/O logs were streamed during the run: renamed into place now that it ended.
    for logs in per_io {
        let path = logs
            .paths()
            .first()
            .map(|p| p.to_path_buf())
            .unwrap_or_default();
        if let Err(source) = logs.commit() {
            failed.get_or_insert(Error::Export { path, source });
        }
    }
    failed.map_or(Ok(()), Err)
}

/// Writes `qsim run --fio-dir DIR`'s files ([`crate::report::fiodir`]), each whole or not at
/// all, creating the run folders; the first failure is returned after trying every file.
fn write_fio_dir(dir: &std::path::Path, report: &Report, out: &mut dyn Write) -> Result<(), Error> {
    let files = crate::report::fiodir::files(report)?;
    let mut failed = None;
    for (rel, bytes) in files {
        let path = dir.join(rel);
        let made = match path.parent() {
            Some(parent) => std::fs::create_dir_all(parent),
            None => Ok(()),
        };
        if let Err(source) = made.and_then(|()| crate::output::write_file(&path, &bytes, out)) {
            failed.get_or_insert(Error::Export { path, source });
        }
    }
    failed.map_or(Ok(()), Err)
}
