//! `qsim check`: the resolved scenario printed with every default filled in and every derived
//! value shown (congestion thresholds, unplug delay, CFQ slices, mean service and crypto times,
//! watermarks and allocation floors), then each variant as the rows where it differs from the
//! base.
//!
//! The text is built as rows (indent, key, value) and rendered at the end, so that a variant can
//! be described by comparing its rows with the base's, keyed by their path of headings.

use super::block::describe_block;
use super::crypt::describe_crypt;
use super::device::describe_device;
use super::kernel::{describe_hz, describe_kernel};
use super::memory::describe_memory;
use super::types::*;
use super::workload::describe_workload;
use crate::engine::SimDuration;

/// Seconds as a duration, rounded to the nanosecond.
pub(crate) fn fmt_secs(s: f64) -> String {
    SimDuration::from_secs_f64(s).to_string()
}

/// `on` or `off`.
pub(crate) fn on_off(b: bool) -> &'static str {
    if b { "on" } else { "off" }
}

/// One line of the description.
pub(crate) enum Line {
    /// `key` padded to the value column, then `value`.
    Row(usize, String, String),
    /// A row whose value is a comma-separated list, continued under its first item past
    /// [`CHECK_WIDTH`].
    List(usize, String, String),
    /// An empty line between sections.
    Blank,
}

/// The description being built.
#[derive(Default)]
pub(crate) struct Rows(Vec<Line>);

/// Column where values start.
const VALUE_COLUMN: usize = 24;

impl Rows {
    fn blank(&mut self) {
        self.0.push(Line::Blank);
    }

    fn render(&self) -> String {
        let mut out = String::new();
        for line in &self.0 {
            match line {
                Line::Blank => out.push('\n'),
                Line::Row(indent, key, value) | Line::List(indent, key, value) => {
                    let width = VALUE_COLUMN.saturating_sub(*indent);
                    let mut key = key.clone();
                    if key.chars().count() >= width && !value.is_empty() {
                        key.push(' ');
                    }
                    let lead = format!("{:indent$}{key:<width$}", "");
                    let row_text = format!("{lead}{value}");
                    // A list continues under its first item, other values two columns further
                    // in, so a continuation never reads as the next row.
                    let list = matches!(line, Line::List(..));
                    let hang = lead.chars().count() + if list { 0 } else { 2 };
                    for l in wrap(&row_text, CHECK_WIDTH, hang) {
                        out.push_str(l.trim_end());
                        out.push('\n');
                    }
                }
            }
        }
        out
    }

    /// Every row keyed by its path of headings (`kernel.version`), in order; repeats of a path
    /// get `#2`, `#3`, ….
    fn keyed(&self) -> Vec<(String, String)> {
        let mut stack: Vec<(usize, String)> = Vec::new();
        let mut out: Vec<(String, String)> = Vec::new();
        for line in &self.0 {
            let (Line::Row(indent, key, value) | Line::List(indent, key, value)) = line else {
                continue;
            };
            while stack.last().is_some_and(|(i, _)| i >= indent) {
                stack.pop();
            }
            stack.push((*indent, key.clone()));
            let mut path = stack
                .iter()
                .map(|(_, k)| k.as_str())
                .collect::<Vec<_>>()
                .join(".");
            let repeats = out
                .iter()
                .filter(|(p, _)| p.split('#').next() == Some(&path))
                .count();
            if repeats > 0 {
                path = format!("{path}#{}", repeats + 1);
            }
            out.push((path, value.clone()));
        }
        out
    }
}

/// How wide a `qsim check` line may grow before its value continues on the next line: the
/// text report's width, so the resolved scenario fits a plain-text mail too.
const CHECK_WIDTH: usize = crate::textfit::WIDTH;

/// `line` broken into lines of at most [`CHECK_WIDTH`] characters, after a `, ` where it can,
/// else at a space; continuations start `hang` spaces in. A word longer than a line stays whole.
fn wrap(line: &str, width: usize, hang: usize) -> Vec<String> {
    crate::textfit::wrap(line, width, hang)
}

/// Appends a row: `key` at `indent`, its value in the value column.
pub(crate) fn row(o: &mut Rows, indent: usize, key: &str, value: &str) {
    o.0.push(Line::Row(indent, key.to_string(), value.to_string()));
}

/// The resolved scenario with every default filled in and every derived value shown: what
/// `qsim check` prints. Variants follow, each as the rows where it differs from the base.
pub fn describe(s: &Scenario) -> String {
    let mut rows = body(s);
    if !s.variants.is_empty() {
        let base = rows.keyed();
        let o = &mut rows;
        o.blank();
        row(o, 0, "variants", &s.variants.len().to_string());
        for v in &s.variants {
            let changes = diff(&base, &body(&v.scenario).keyed());
            if changes.is_empty() {
                row(o, 2, &v.name, "same as the base");
                continue;
            }
            row(o, 2, &v.name, "differs from the base in:");
            for change in changes {
                row(o, 4, "", &change);
            }
        }
    }
    rows.render()
}

/// `path: old → new` for every row that differs between `base` and `other`.
fn diff(base: &[(String, String)], other: &[(String, String)]) -> Vec<String> {
    let shown = |v: &str| {
        if v.is_empty() {
            "(heading)".to_string()
        } else {
            v.to_string()
        }
    };
    let mut out = Vec::new();
    for (path, value) in other {
        match base.iter().find(|(p, _)| p == path) {
            Some((_, old)) if old == value => {}
            Some((_, old)) => out.push(format!("{path}: {} → {}", shown(old), shown(value))),
            None => out.push(format!("{path}: (none) → {}", shown(value))),
        }
    }
    for (path, value) in base {
        if !other.iter().any(|(p, _)| p == path) {
            out.push(format!("{path}: {} → (none)", shown(value)));
        }
    }
    out
}

/// Everything but the variants: each section's rows, in the file's order.
fn body(s: &Scenario) -> Rows {
    let mut rows = Rows::default();
    let o = &mut rows;
    row(o, 0, "scenario", &s.name);
    if !s.description.is_empty() {
        row(o, 0, "description", &s.description);
    }
    row(o, 0, "seed", &s.seed.to_string());
    let early = if s.has_finite_jobs() {
        "; ends earlier once every finite job is done"
    } else {
        ""
    };
    row(
        o,
        0,
        "duration",
        &format!(
            "{} (warm-up {}, measured {}{early})",
            s.duration,
            s.warmup,
            s.duration.saturating_sub(s.warmup)
        ),
    );
    row(o, 0, "max_events", &s.max_events.to_string());
    row(o, 0, "replications", &s.replications.to_string());
    row(o, 0, "cpus", &s.cpus.to_string());
    if let Some(m) = &s.machine_file {
        row(
            o,
            0,
            "machine",
            &format!(
                "{m} (a machine file: the cpus, kernel, device, crypt and memory it gives sit \
                 under this file's own fields)"
            ),
        );
    }
    describe_hz(o, &s.kernel);
    describe_kernel(o, &s.kernel, &s.policies);
    o.blank();
    describe_device(o, &s.device);
    o.blank();
    describe_block(o, &s.block, &s.kernel);
    o.blank();
    describe_crypt(o, &s.crypt, &s.kernel);
    o.blank();
    o.0.push(Line::List(0, "policies".into(), s.policies.join(", ")));
    o.blank();
    row(o, 0, "workloads", &s.workloads.len().to_string());
    for w in &s.workloads {
        describe_workload(o, w);
    }
    if let Some(m) = &s.memory {
        o.blank();
        describe_memory(o, m);
    }
    rows
}

/// Whether `needle` is in `text` once both have their runs of blanks and line breaks read
/// as one space: `qsim check`'s values wrap at 80 columns, so tests look for them this way.
#[cfg(test)]
pub(crate) fn has(text: &str, needle: &str) -> bool {
    let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    flat(text).contains(&flat(needle))
}

#[cfg(test)]
mod tests {
    use super::super::load_str;
    use super::*;

    fn ok(text: &str) -> Scenario {
        load_str("t.yaml", text).unwrap_or_else(|e| panic!("{e}"))
    }

    const BASE: &str = "device: { kind: hdd5400 }\nworkloads:\n  - kind: fio\n";
    const MEM: &str =
        "device: { kind: hdd5400 }\nworkloads:\n  - kind: gitk\nmemory:\n  ram: 2GiB\n";

    #[test]
    fn a_long_policy_list_continues_under_its_first_item() {
        let text = describe(&ok(&format!(
            "{BASE}kernel: {{ version: \"6.12\" }}\npolicies: [\"dm-crypt+*\"]\n"
        )));
        let at = text.find("\npolicies ").expect("a policies row");
        let rows: Vec<&str> = text[at + 1..]
            .lines()
            .take_while(|l| !l.is_empty())
            .collect();
        assert!(rows.len() > 5, "32 tables on several lines: {rows:?}");
        for r in &rows {
            // Only a single item longer than the line may pass it.
            let one = !r[VALUE_COLUMN..].contains(", ");
            assert!(r.chars().count() <= CHECK_WIDTH || one, "{r}");
        }
        for r in &rows[1..] {
            assert!(r.starts_with(&" ".repeat(VALUE_COLUMN)), "{r}");
            assert!(!r[VALUE_COLUMN..].starts_with(' '), "{r}");
        }
        let items: Vec<&str> = rows
            .iter()
            .map(|r| r[VALUE_COLUMN..].trim_end_matches(','))
            .flat_map(|r| r.split(", "))
            .collect();
        assert_eq!(items.len(), 32);
        assert_eq!(items[0], "dm-crypt");
    }

    #[test]
    fn describe_shows_kernel_memory_and_variants() {
        let text = describe(&ok(&format!(
            "{MEM}  atomic:\n    - {{ name: rx, preset: iwlagn, rate: 500/s }}\nkernel: {{ patches: [dm-crypt-unplug, force-highorder] }}\nvariants:\n  - name: \"2.6.37\"\n    set: {{ kernel: {{ version: \"2.6.37\" }} }}\n"
        )));
        for needle in [
            "  version               2.6.32",
            "  patches               dm-crypt-unplug, force-highorder",
            "  force_highorder       on (patch force-highorder)",
            "  skip_below_min        off (default)",
            "  unplug_after_submit   off",
            "  io_queues             mason-v3: sync and async io threads (patch dm-crypt-unplug)",
            "min_free_kbytes       5792 (the kernel's value for this ram)",
            "watermarks            min 1448, low 1810, high 2172 pages",
            "GFP_ATOMIC order-0 543 pages, mempool first try 1086 pages",
            "23168 pages free (16·min)",
            "    rx                  iwlagn: 500/s, poisson",
            "      orders            2: 100%",
            "      held              ≈ 1 buffers, 4 pages",
            "variants                1",
            "  2.6.37                differs from the base in:",
            "kernel.version: 2.6.32 → 2.6.37",
            "kernel.skip_below_min: off (default) → on (default)",
            "direct              off",
        ] {
            assert!(has(&text, needle), "missing {needle:?} in:\n{text}");
        }
        use crate::model::base::physics::{atomic_floor, mempool_floor};
        assert_eq!(atomic_floor(1448), 543);
        assert_eq!(mempool_floor(1448), 1086);
        let text = describe(&ok(BASE));
        assert!(
            !text.contains("\nmemory ") && !text.contains("\nvariants "),
            "{text}"
        );
    }

    #[test]
    fn describe_shows_derived_values() {
        let text = describe(&ok(BASE));
        assert!(
            has(&text, "on at 113 requests per class, off below 103"),
            "{text}"
        );
        assert!(has(&text, "unplug delay 4ms"), "{text}");
        assert!(has(&text, "sync 100ms, async 40ms, idle 8ms"), "{text}");
        assert!(has(&text, "12ms mean over random distances"), "{text}");
        assert!(has(&text, "4KiB random read 17.624ms"), "{text}");
        assert!(has(&text, "encrypt 68.267us"), "{text}");
        assert!(has(&text, "offset 0B, size 1GiB"), "{text}");
        assert!(has(&text, "unlimited (runs until the run ends)"), "{text}");
        assert!(!has(&text, "ends earlier"), "{text}");
        let text = describe(&ok("device: { kind: nvme }\nworkloads:\n  \
             - { kind: gitk, io_size: 64MiB, number_ios: 100, numjobs: 2, startdelay: 5s }\n"));
        assert!(
            has(
                &text,
                "io_size 64MiB or number_ios 100 per copy, whichever comes first, then it stops"
            ),
            "{text}"
        );
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with("startdelay") && l.ends_with(" 5s")),
            "{text}"
        );
        assert!(
            has(
                &text,
                "measured 60s; ends earlier once every finite job is done)"
            ),
            "{text}"
        );
    }
}
