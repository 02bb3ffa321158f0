//! Scenario files: the one way in from YAML to a validated [`Scenario`].
//!
//! ```text
//! file ──read──▶ text ──serde-saphyr──▶ Raw* sections ──check──▶ types::Scenario
//!                  │                        │                        │
//!                  └── empty? ──────────────┴──── Error (file:line:col, field path, hint)
//! ```
//!
//! One module per section of the file, each owning its raw form (the serde mirror), its
//! defaults, its checks and hints, its `qsim check` rows and its tests: `top` (the run, the
//! policies, the bounds on work), `variants`, `kernel`, `device`, `block`, `crypt`, `memory`,
//! `atomic` (GFP_ATOMIC streams), `workload`, `distribution` and `machine` (a test machine
//! preset expanded under the file's own fields). They share `schema` (the
//! `raw_section!` and `names!` declarations and the deep merge of a variant's `set:`), `check`
//! (the located-error builder and the shared rules) and `error` (the error type and the
//! translation of serde-saphyr's errors, located by `outline`, the field path of every node).
//! The numbers behind presets and the closed forms `qsim check` derives live in the model
//! ([`crate::model::base::physics`]), so the model and the description share one copy.
//!
//! - [`load`] and [`load_str`] are the entry points; [`load_with_overrides`] and
//!   [`load_str_with_overrides`] also take command-line `--set path.to.field=value` overrides
//!   ([`set_document`] turns one into YAML), merged over the file before validation.
//!   [`resolve`] and [`resolve_with_overrides`] add the scenarios shipped inside the binary
//!   ([`shipped`]), and [`describe`] prints a resolved scenario with its derived values (what
//!   `qsim check` shows).
//! - [`units`] parses `4k`, `1.5ms`, `60MB/s`; the sections mirror the file, fill every
//!   default and are the only producers of value errors; [`types`] is the result the model
//!   reads.
//! - [`read_capped`] reads a file by bytes read, never trusting its reported size (a device
//!   reports 0 and never ends), and gives a special file (a FIFO) [`read_timeout`] to deliver;
//!   [`MAX_FILE_BYTES`] for scenarios.
//! - Bounds on what a scenario may ask for (variants, runs, replications in all, workloads, I/Os
//!   in flight, names, the smallest cost of a request, rates, durations, offsets) are `pub`
//!   constants here, each with its reason; [`check_work`] rechecks runs × replications after
//!   the command line's `-r`.
//! - [`Error`] is the single error type: file, line and column, field path, message and hint.
//!   An error in a value that a `--set` gave names the argument instead of a file and line:
//!   `--set memory.ram=1GB: memory.ram: must be a whole number of 4 KiB pages, …`.
//!
//! serde-saphyr is pinned at 2.2 and used only in this module.

mod atomic;
mod block;
mod check;
mod crypt;
mod describe;
mod device;
mod distribution;
mod dmcrypt;
mod error;
pub mod fio;
mod kernel;
mod machine;
mod memory;
mod outline;
pub mod published;
mod reader;
mod receiver;
pub mod replay;
mod schema;
mod setarg;
mod shipped;
pub mod sweep;
#[cfg(test)]
mod testutil;
mod top;
pub mod units;
mod variants;
mod workload;
mod written;

pub use crate::model::base::config as types;
pub use crate::model::base::config::*;
pub use crate::model::base::physics::{crypto_cost, mean_random_seek, mean_service, moments};
pub use atomic::MAX_ATOMIC_STREAMS;
pub use check::{
    MAX_ARRIVAL_RATE, MAX_DISK_BYTES, MAX_NAME_CHARS, MIN_ARRIVAL_RATE, MIN_BANDWIDTH, name_problem,
};
pub use describe::describe;
pub use device::MIN_SERVICE;
pub use distribution::MAX_EMPIRICAL_VALUES;
pub use error::{Error, ErrorKind, MAX_ECHO_CHARS};
pub use memory::MAX_SWAP;
pub use reader::{READ_TIMEOUT, READ_TIMEOUT_ENV, open_with_deadline, read_capped, read_timeout};
pub use shipped::{ShippedScenario, resolve, resolve_with_overrides, shipped};
pub use top::{
    DEFAULT_REPLICATIONS, MAX_REPLICATIONS, MAX_RUNS, MAX_TOTAL_REPLICATIONS, check_work,
    run_count, total_replications,
};
pub use variants::MAX_VARIANTS;
pub use workload::{MAX_IN_FLIGHT, MAX_WORKLOADS, MAX_WRITER_RATE};
pub use written::written_yaml;

pub(crate) use error::{OverrideLines, Source, field_key, shorten, shorten_to, suggestion};
use std::path::Path;

/// Largest scenario file, in bytes, that [`load`] reads.
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// A minimal valid scenario, shown when a file is empty.
pub const MINIMAL_SCENARIO: &str = "device: { kind: nvme }\nworkloads:\n  - kind: fio";

/// The most YAML nodes (scalars, lists and mappings, keys included) a scenario file may hold:
/// serde-saphyr's default budget, named here so that messages can cite it. It bounds the
/// memory and time a file can cost; an empirical distribution's
/// [`MAX_EMPIRICAL_VALUES`] fits well inside it.
pub const MAX_YAML_NODES: usize = 250_000;

/// The parser options of every scenario document: serde-saphyr's defaults, with the node
/// budget spelt out as [`MAX_YAML_NODES`].
fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! { max_nodes: MAX_YAML_NODES },
    }
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

/// The text of the scenario file at `path` (read once: a pipe or FIFO delivers only once),
/// or the located error [`load`] gives when it cannot be had.
pub fn read_text(path: &Path) -> Result<String, Error> {
    read(path, &path.display().to_string())
}

/// The text of a scenario file, or the error that says why it cannot be had.
fn read(path: &Path, shown: &str) -> Result<String, Error> {
    use std::io::ErrorKind as Io;
    let what = if path.extension().is_some_and(|x| x == "fio") {
        "fio job file"
    } else {
        "scenario file"
    };
    let read_error = |e: std::io::Error| {
        let hint = match e.kind() {
            Io::NotFound => format!(
                "check the path, or use a shipped scenario by name: {} (`qsim list` describes them)",
                shipped::shipped_names().join(", ")
            ),
            Io::IsADirectory => "give a scenario file, e.g. scenarios/two-queue.yaml".to_string(),
            Io::PermissionDenied => "check the file's permissions".to_string(),
            Io::TimedOut => "start the writer first (`cat FILE > FIFO &`), or give a \
                             regular file"
                .to_string(),
            _ => "check that the path names a readable scenario file".to_string(),
        };
        let mut err = Error::whole_file(
            ErrorKind::Read,
            shown,
            format!("cannot read the {what}: {e}"),
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
    let text = String::from_utf8(bytes).map_err(|e| {
        Error::whole_file(
            ErrorKind::Read,
            shown,
            format!(
                "the file is not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
            Some("save the scenario as UTF-8".to_string()),
        )
    })?;
    // Also for a fio job file, which is read here too.
    match nul_error(shown, &text) {
        Some(e) => Err(e),
        None => Ok(text),
    }
}

/// Parses and validates scenario text; `source_name` names it in errors and its file stem is the
/// default `name`.
pub fn load_str(source_name: &str, text: &str) -> Result<Scenario, Error> {
    load_str_with_overrides(source_name, text, &[])
}

/// [`load_str`] with command-line overrides: each `path.to.field=value` of `sets` becomes a
/// partial scenario ([`set_document`]) deep-merged over the text, in order, with the same
/// deep merge as a variant's `set:`, then everything is validated as usual. The overrides
/// apply to the base and to every variant, after the variant's own `set:`: the command line has
/// the last word. An error in a value an override wrote names the argument (`--set ARG`), not a
/// line of the file.
pub fn load_str_with_overrides(
    source_name: &str,
    text: &str,
    sets: &[String],
) -> Result<Scenario, Error> {
    load_parts(source_name, text, sets, None).map(|(sc, _)| sc)
}

/// [`load_str_with_overrides`], and with `metrics` the `published:` section resolved too.
fn load_parts(
    source_name: &str,
    text: &str,
    sets: &[String],
    metrics: Option<&[&str]>,
) -> Result<(Scenario, Option<published::Published>), Error> {
    if let Some(e) = nul_error(source_name, text) {
        return Err(e);
    }
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
    let raw: serde_saphyr::Spanned<top::RawScenario> =
        serde_saphyr::from_str_with_options(text, yaml_options())
            .map_err(|e| source.yaml_error(&e))?;
    // Each override is parsed as if it followed the file (and the overrides before it), so the
    // line of any value it holds tells which argument wrote it. YAML counts `\r`, `\r\n` and
    // `\n` as line breaks; counting `\r` and `\n` separately only ever overestimates.
    let mut first = text.bytes().filter(|b| matches!(b, b'\n' | b'\r')).count() as u64 + 2;
    let mut overrides = Vec::with_capacity(sets.len());
    for arg in sets {
        let (over, lines) = parse_override(arg, first)?;
        if lines.first != 0 {
            first = lines.last + 2;
        }
        source.overrides.push(lines);
        overrides.push(over);
    }
    let stem = Path::new(source_name)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("scenario");
    let published = raw.value.published.clone();
    let sc = top::validate(raw, &source, stem, &overrides)?;
    let Some(keys) = metrics else {
        return Ok((sc, None));
    };
    let c = check::Checker { src: &source };
    let published = match &published {
        Some(p) => Some(published::published(&c, p, &sc, Some(keys))?),
        None => None,
    };
    Ok((sc, published))
}

/// The error for text that holds a NUL byte, located at the first one: YAML has no NUL
/// character, and a file with one is binary or UTF-16 (whose ASCII is NUL-padded), not a
/// scenario. Without this check the YAML reader calls such a file empty or names a field.
fn nul_error(source_name: &str, text: &str) -> Option<Error> {
    let at = text.find('\0')?;
    let before = &text[..at];
    let line = before.matches('\n').count() as u64 + 1;
    let column = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count() as u64
        + 1;
    let mut e = Error::whole_file(
        ErrorKind::Read,
        source_name,
        format!(
            "the file holds a NUL byte at line {line}, column {column}: it is not text (a \
             binary file, or text saved as UTF-16)"
        ),
        Some("save the file as plain UTF-8 text, or give the right file".to_string()),
    );
    e.0.line = Some(line);
    e.0.column = Some(column);
    Some(e)
}

/// One `--set` parsed as if its document started at line `first` after the file, with the
/// lines it spans. A removal has no document and no line of its own (0 is no line): its label
/// is listed only in errors it led to.
fn parse_override(arg: &str, first: u64) -> Result<(setarg::Override, OverrideLines), Error> {
    let set = setarg::parse(arg)?;
    let label = set_label(arg);
    if let setarg::Edit::Remove(_) = set.edit {
        let lines = OverrideLines {
            label: label.clone(),
            first: 0,
            last: 0,
        };
        let raw = top::RawScenario::default();
        let edit = set.edit;
        return Ok((setarg::Override { label, edit, raw }, lines));
    }
    let doc = set.doc;
    let last = first + doc.lines().count() as u64 - 1;
    let lines = OverrideLines {
        label: label.clone(),
        first,
        last,
    };
    let padded = format!("{}{doc}", "\n".repeat(first as usize - 1));
    let mut over_src = Source::new(&lines.label, &padded);
    over_src.overrides.push(lines.clone());
    let over: serde_saphyr::Spanned<top::RawScenario> =
        serde_saphyr::from_str_with_options(&padded, yaml_options()).map_err(|e| {
            let mut err = over_src.yaml_error(&e);
            if err.kind() == ErrorKind::Syntax {
                err.0.hint = Some(SET_VALUE_HINT.to_string());
            }
            if let setarg::Edit::Index { list, index, .. } = set.edit {
                reindex(&mut err, list.path(), index);
            }
            err
        })?;
    let raw = over.value;
    Ok((
        setarg::Override {
            label,
            edit: set.edit,
            raw,
        },
        lines,
    ))
}

/// An indexed `--set`'s document holds its one item as item 0 of the list: an error found
/// while reading it names `list[0]`, which becomes the item the argument named, `list[index]`.
fn reindex(err: &mut Error, list: &str, index: usize) {
    let (from, to) = (format!("{list}[0]"), format!("{list}[{index}]"));
    if let Some(path) = err.0.path.as_mut()
        && let Some(rest) = path.strip_prefix(&from)
    {
        *path = format!("{to}{rest}");
    }
    if err.0.message.starts_with(&from) {
        err.0.message = format!("{to}{}", &err.0.message[from.len()..]);
    }
}

/// Loads the scenario a command-line argument names ([`resolve`]: a file, else a shipped
/// scenario) with its `published:` section resolved, every metric key checked against
/// `metrics` (the report's registry, which lives above this layer).
pub fn resolve_published(
    arg: &str,
    metrics: &[&str],
) -> Result<(Scenario, Option<published::Published>), Error> {
    let path = Path::new(arg);
    let (name, text) = match shipped::find_text(arg) {
        Some((file, yaml)) if !path.exists() => (format!("<shipped>/{file}"), yaml.to_string()),
        _ => {
            let shown = path.display().to_string();
            let text = read(path, &shown)?;
            (shown, text)
        }
    };
    load_parts(&name, &text, &[], Some(metrics))
}

/// One entry of [`kernel_patches`].
pub type PatchEntry = (
    &'static str,
    Option<&'static str>,
    &'static str,
    &'static str,
);

/// Every entry `kernel.patches` accepts, in order: its canonical label (`"5"`), its other name
/// if it has one (`kswapd-stay-awake-when-min`), what it was, and a few words for a menu, for
/// pickers such as `qsim serve`'s page.
pub fn kernel_patches() -> Vec<PatchEntry> {
    kernel::PATCHES
        .iter()
        .map(|p| (p.label, p.aliases.first().copied(), p.what, p.short))
        .collect()
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
/// (`{kind: nvme}`) or a quoted string. Field names are plain (letters, digits, `_`, `-`); an
/// item of `workloads` or `memory.atomic` is named by its index (`workloads[0].io_size=16MiB`
/// becomes `workloads:\n  - io_size: 16MiB\n`, merged into that item only), and `!section`
/// (`!memory`) removes a top-level section, whose document is empty. A value
/// cannot be empty, null or span lines.
pub fn set_document(arg: &str) -> Result<String, Error> {
    setarg::parse(arg).map(|s| s.doc)
}

#[cfg(test)]
mod tests;
