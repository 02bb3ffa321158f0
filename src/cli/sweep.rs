//! `qsim run --sweep`, `--sensitivity` and `--flags`: the command-line forms of a scenario's
//! `sweep:` and `sensitivity:` sections ([`crate::scenario::sweep`]) and of a `policies:` flag
//! pattern, in the spirit of hyperfine's
//! `--parameter-list` and `--parameter-scan`. Each is turned into the section it stands for,
//! written as one more `--set` (so it is parsed, merged and validated exactly as the file's
//! section would be, after the user's `--set`s), and errors in it name the flags as given.
//!
//! - `--sweep 'PATH=v1,v2,v3'`: the values listed; `--sweep 'PATH=FROM..TO[:POINTS[:log]]'`:
//!   a range (10 points and linear by default). `PATH` may join several paths with `+`.
//!   Repeated (at most twice), the flags make a grid; they replace the file's `sweep:`.
//! - `--sensitivity KNOB` (repeatable): `PATH` (moved by the default step), `PATH:30%` (its
//!   own step) or `PATH=LOW..HIGH`; they replace the file's knobs. `--sensitivity-metric KEY`
//!   picks the metric (a registry key such as `read_p999_ms`, or `p99`, `p99.9`, `mean`,
//!   `failures`).
//! - `--flags all` or `--flags FLAG,FLAG`: the scenario's `policies:` replaced by the pattern
//!   `dm-crypt+*` or `dm-crypt+{FLAG,FLAG}` (every combination of dm-crypt's flags, the
//!   kernel's or those), so a flag the kernel lacks is refused as in the file.

use super::RunArgs;
use crate::error::UsageError;
use crate::scenario::{self, Scenario};

/// How the flags are written, for hints.
pub const SWEEP_SYNTAX: &str = "--sweep 'PATH=v1,v2,v3' or --sweep 'PATH=FROM..TO[:POINTS[:log]]', \
     e.g. --sweep 'crypt.encrypt_rate+crypt.decrypt_rate=60MB/s..1432MiB/s:10:log'";

/// `text` as a double-quoted YAML scalar.
fn quoted(text: &str) -> String {
    format!(
        "\"{}\"",
        text.trim().replace('\\', "\\\\").replace('"', "\\\"")
    )
}

/// A usage error about `flag ARG`.
fn bad(flag: &str, arg: &str, message: &str, hint: &str) -> UsageError {
    UsageError {
        message: format!("{flag} {arg}: {message}"),
        hint: hint.to_string(),
    }
}

/// One `--sweep` argument as a YAML flow mapping (one parameter of `sweep:`).
fn sweep_param(arg: &str) -> Result<String, UsageError> {
    let Some((path, spec)) = arg.split_once('=') else {
        return Err(bad("--sweep", arg, "no `=` after the path", SWEEP_SYNTAX));
    };
    let (path, spec) = (path.trim(), spec.trim());
    if path.is_empty() || spec.is_empty() {
        return Err(bad(
            "--sweep",
            arg,
            "a path and values are needed",
            SWEEP_SYNTAX,
        ));
    }
    if let Some((from, rest)) = spec.split_once("..") {
        let mut parts = rest.split(':');
        let to = parts.next().unwrap_or("");
        let points = parts.next().map(str::trim);
        let scale = parts.next().map(str::trim);
        if parts.next().is_some() || to.trim().is_empty() || from.trim().is_empty() {
            return Err(bad(
                "--sweep",
                arg,
                "a range is FROM..TO[:POINTS[:log]]",
                SWEEP_SYNTAX,
            ));
        }
        let mut range = format!("from: {}, to: {}", quoted(from), quoted(to));
        if let Some(p) = points {
            let n: u32 = p.parse().map_err(|_| {
                bad(
                    "--sweep",
                    arg,
                    &format!("`{p}` is not a number of points"),
                    SWEEP_SYNTAX,
                )
            })?;
            range.push_str(&format!(", points: {n}"));
        }
        if let Some(s) = scale {
            if !matches!(s, "log" | "linear") {
                return Err(bad(
                    "--sweep",
                    arg,
                    &format!("`{s}` is not log or linear"),
                    SWEEP_SYNTAX,
                ));
            }
            range.push_str(&format!(", scale: {s}"));
        }
        return Ok(format!("{{path: {}, range: {{{range}}}}}", quoted(path)));
    }
    let values: Vec<String> = spec.split(',').map(quoted).collect();
    Ok(format!(
        "{{path: {}, values: [{}]}}",
        quoted(path),
        values.join(", ")
    ))
}

/// One `--sensitivity` argument as a YAML flow mapping (one knob).
fn knob(arg: &str) -> Result<String, UsageError> {
    let hint = "--sensitivity PATH, PATH:30% or PATH=LOW..HIGH, e.g. --sensitivity memory.ram";
    if let Some((path, range)) = arg.split_once('=') {
        let Some((low, high)) = range.split_once("..") else {
            return Err(bad("--sensitivity", arg, "give LOW..HIGH after `=`", hint));
        };
        return Ok(format!(
            "{{path: {}, low: {}, high: {}}}",
            quoted(path),
            quoted(low),
            quoted(high)
        ));
    }
    match arg.split_once(':') {
        Some((path, step)) => Ok(format!(
            "{{path: {}, step: {}}}",
            quoted(path),
            quoted(step)
        )),
        None if !arg.trim().is_empty() => Ok(format!("{{path: {}}}", quoted(arg))),
        None => Err(bad("--sensitivity", arg, "no path", hint)),
    }
}

/// The `policies:` pattern a `--flags` argument stands for: `all` is `dm-crypt+*`, a
/// comma-separated list of flags `dm-crypt+{a,b}`; an unknown or repeated flag is refused here,
/// named as given (a flag the kernel lacks is refused by the scenario, at `--flags`).
fn flag_pattern(arg: &str) -> Result<String, UsageError> {
    use crate::model::crypt::policy::DmFlags;
    let names: Vec<&str> = DmFlags::ALL.iter().map(|(n, _)| *n).collect();
    let hint = format!(
        "--flags all, or flags separated by commas among: {}",
        names.join(", ")
    );
    let arg_t = arg.trim();
    if arg_t == "all" {
        return Ok("dm-crypt+*".into());
    }
    let mut seen: Vec<&str> = Vec::new();
    for f in arg_t.split(',').map(str::trim) {
        if f.is_empty() {
            return Err(bad("--flags", arg, "an empty flag", &hint));
        }
        if !names.contains(&f) {
            let msg = match crate::scenario::suggestion(f, &names) {
                Some(s) => format!("unknown flag `{f}` (did you mean `{s}`?)"),
                None => format!("unknown flag `{f}`"),
            };
            return Err(bad("--flags", arg, &msg, &hint));
        }
        if seen.contains(&f) {
            return Err(bad("--flags", arg, &format!("`{f}` is given twice"), &hint));
        }
        seen.push(f);
    }
    Ok(format!("dm-crypt+{{{}}}", seen.join(",")))
}

/// Generated `--set` labels and the flags to name instead.
pub(super) type Labels = Vec<(String, String)>;

/// The `--set`s `args` ask for: the user's, then the sweep's and the study's sections, with the
/// label each generated one is known by in errors and what to call it instead.
pub(super) fn sets(args: &RunArgs) -> Result<(Vec<String>, Labels), UsageError> {
    let mut sets = args.set.clone();
    let mut labels = Vec::new();
    let mut add = |set: String, shown: String| {
        labels.push((format!("--set {}", scenario::shorten(&set)), shown));
        sets.push(set);
    };
    if !args.sweep.is_empty() {
        if args.sweep.len() > scenario::sweep::MAX_AXES {
            return Err(UsageError {
                message: format!(
                    "{} --sweep flags; a sweep takes one or two",
                    args.sweep.len()
                ),
                hint: "give one --sweep, or two for a grid".into(),
            });
        }
        let params = args
            .sweep
            .iter()
            .map(|a| sweep_param(a))
            .collect::<Result<Vec<_>, _>>()?;
        let shown = args
            .sweep
            .iter()
            .map(|a| format!("--sweep {a}"))
            .collect::<Vec<_>>();
        add(format!("sweep=[{}]", params.join(", ")), shown.join(" "));
    }
    if !args.sensitivity.is_empty() {
        let knobs = args
            .sensitivity
            .iter()
            .map(|a| knob(a))
            .collect::<Result<Vec<_>, _>>()?;
        let shown = args
            .sensitivity
            .iter()
            .map(|a| format!("--sensitivity {a}"))
            .collect::<Vec<_>>();
        add(
            format!("sensitivity.knobs=[{}]", knobs.join(", ")),
            shown.join(" "),
        );
    }
    if let Some(f) = &args.flags {
        add(
            format!("policies=[{}]", quoted(&flag_pattern(f)?)),
            format!("--flags {f}"),
        );
    }
    if let Some(m) = &args.sensitivity_metric {
        add(
            format!("sensitivity.metric={}", quoted(m)),
            format!("--sensitivity-metric {m}"),
        );
    }
    Ok((sets, labels))
}

/// `e` with a generated `--set`'s label replaced by the flags it came from.
pub(super) fn relabel(mut e: anyhow::Error, labels: &[(String, String)]) -> anyhow::Error {
    if let Some(se) = e.downcast_mut::<scenario::Error>() {
        for (label, shown) in labels {
            if se.0.file == *label {
                se.0.file = shown.clone();
            }
            se.0.message = se.0.message.replace(label.as_str(), shown);
        }
    }
    e
}

/// Refuses a study whose metric is not in the registry, before anything runs.
pub(super) fn check_metric(sc: &Scenario) -> Result<(), UsageError> {
    let Some(m) = sc.sweep.as_ref().and_then(|p| p.metric.as_deref()) else {
        return Ok(());
    };
    if crate::report::sweep::study_metric(m).is_some() {
        return Ok(());
    }
    let keys: Vec<&str> = crate::report::metrics::MetricId::all()
        .map(|(_, x)| x.key)
        .collect();
    Err(UsageError {
        message: format!("sensitivity.metric: unknown metric `{m}`"),
        hint: format!(
            "one of p99, p99.9, mean, failures or a key: {}",
            keys.join(", ")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_become_sections() {
        assert_eq!(
            sweep_param("crypt.cipher=aes-2009,aes-ni").unwrap(),
            r#"{path: "crypt.cipher", values: ["aes-2009", "aes-ni"]}"#
        );
        assert_eq!(
            sweep_param("a+b=60MB/s..1432MiB/s:10:log").unwrap(),
            r#"{path: "a+b", range: {from: "60MB/s", to: "1432MiB/s", points: 10, scale: log}}"#
        );
        assert!(sweep_param("x=1..2:ten").is_err());
        assert!(sweep_param("x=1..2:3:cubic").is_err());
        assert!(sweep_param("x").is_err());
        assert_eq!(flag_pattern("all").unwrap(), "dm-crypt+*");
        assert_eq!(
            flag_pattern("no_read_workqueue, same_cpu_crypt").unwrap(),
            "dm-crypt+{no_read_workqueue,same_cpu_crypt}"
        );
        let e = flag_pattern("no_read_workqueu").unwrap_err();
        assert!(e.message.contains("`no_read_workqueu`"), "{}", e.message);
        assert!(e.message.contains("did you mean `no_read_workqueue`"));
        assert!(flag_pattern("same_cpu_crypt,same_cpu_crypt").is_err());
        assert!(flag_pattern("").is_err());
        assert_eq!(knob("memory.ram").unwrap(), r#"{path: "memory.ram"}"#);
        assert_eq!(knob("cpus:50%").unwrap(), r#"{path: "cpus", step: "50%"}"#);
        assert_eq!(
            knob("a=1..3").unwrap(),
            r#"{path: "a", low: "1", high: "3"}"#
        );
    }
}
