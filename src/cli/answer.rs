//! `qsim run --flags … --robust`: after the flag comparison has named its recommendation
//! ([`crate::report::answer`]), a second, smaller study reruns only the recommended table and
//! the default, with each of the machine's inputs moved down and up by a step (the device's
//! service parameters, the cipher's rates, the CPU count), and prints whether the
//! recommendation still beats the default at each point and which input moves its gain most.
//!
//! A calibrated machine's inputs are measurements with errors; this is the check of how much
//! such an error could change the answer. The study is a `sensitivity:` section with explicit
//! `low`/`high` values (so it is built, validated and paired exactly as a user's would be), run
//! with the first study's replications and seed.

use super::{RunArgs, apply_overrides, load_input};
use crate::engine::SimDuration;
use crate::model::base::config::DeviceConfig;
use crate::model::base::obs::RunEnd;
use crate::report::Report;
use crate::report::answer::{Input, Recommendation, holds, render_holds};
use crate::scenario::{Scenario, units};
use std::io::Write;

/// The step `--robust` moves each input by when given without a value.
pub const DEFAULT_STEP: &str = "20%";

/// `--robust`'s value as a fraction in (0, 1), or 0 for off (`0`, `0%`, `off`).
pub fn parse_step(s: &str) -> Result<f64, String> {
    let t = s.trim();
    if t == "off" {
        return Ok(0.0);
    }
    match t.strip_suffix('%').unwrap_or(t).trim().parse::<f64>() {
        Ok(p) if (0.0..90.0).contains(&p) => Ok(p / 100.0),
        _ => Err(format!(
            "`{t}` is not a step: give a percentage from 0% (off) to under 90%, e.g. 20%"
        )),
    }
}

/// A rate in bytes/s as a scenario writes one, in MB/s with four significant digits (whole
/// MB/s above 1000).
fn rate_text(bytes_per_sec: f64) -> String {
    let mb = bytes_per_sec / 1e6;
    let decimals = (3 - mb.abs().log10().floor() as i32).max(0) as usize;
    format!("{}MB/s", units::trim_float(mb, decimals))
}

/// A duration as a scenario writes one, to the nanosecond.
fn duration_text(ns: f64) -> String {
    SimDuration::from_ns(ns.round().max(1.0) as u64).to_string()
}

/// One input: the path(s) it sets, its value as run, and the value moved by `-step`/`+step`,
/// written by `text`. `None` for a value that cannot move (zero, infinite).
fn input(paths: &str, base: f64, step: f64, text: fn(f64) -> String) -> Option<Input> {
    if !(base.is_finite() && base > 0.0) {
        return None;
    }
    let name = match paths {
        "crypt.encrypt_rate+crypt.decrypt_rate" => "crypt rates",
        p => p,
    };
    Some(Input {
        name: name.to_string(),
        path: paths.to_string(),
        value: text(base),
        low: text(base * (1.0 - step)),
        high: text(base * (1.0 + step)),
    })
}

/// The machine inputs of `sc` a calibration measures, each moved by `step`: the device's
/// service parameters by kind, the cipher's rates (one input when they are equal) and the CPU
/// count (moved by at least one CPU).
pub fn inputs(sc: &Scenario, step: f64) -> Vec<Input> {
    let mut out: Vec<Option<Input>> = match &sc.device {
        DeviceConfig::Hdd(h) => vec![
            input(
                "device.seek_full",
                h.seek_full.as_ns() as f64,
                step,
                duration_text,
            ),
            input(
                "device.revolution",
                h.revolution.as_ns() as f64,
                step,
                duration_text,
            ),
            input("device.transfer_rate", h.transfer_rate, step, rate_text),
        ],
        DeviceConfig::Nvme(n) => vec![
            input(
                "device.latency",
                n.latency.as_ns() as f64,
                step,
                duration_text,
            ),
            input(
                "device.overhead",
                n.overhead.as_ns() as f64,
                step,
                duration_text,
            ),
            input("device.transfer_rate", n.transfer_rate, step, rate_text),
        ],
        DeviceConfig::Generic(_) => Vec::new(),
    };
    let (e, d) = (sc.crypt.encrypt_rate, sc.crypt.decrypt_rate);
    if e == d {
        out.push(input(
            "crypt.encrypt_rate+crypt.decrypt_rate",
            e,
            step,
            rate_text,
        ));
    } else {
        out.push(input("crypt.encrypt_rate", e, step, rate_text));
        out.push(input("crypt.decrypt_rate", d, step, rate_text));
    }
    let c = sc.cpus;
    if c >= 2 {
        let moved = ((f64::from(c) * step).round() as u32).max(1);
        out.push(Some(Input {
            name: "cpus".into(),
            path: "cpus".into(),
            value: c.to_string(),
            low: c.saturating_sub(moved).max(1).to_string(),
            high: (c + moved).to_string(),
        }));
    }
    out.into_iter().flatten().collect()
}

/// Why the study cannot run on this comparison (`None`: it can).
fn unsuitable(sc: &Scenario, args: &RunArgs, recs: &[Recommendation]) -> Option<&'static str> {
    if matches!(args.output.format, super::Format::Json) {
        return Some("the JSON report is one document; rerun with the text format");
    }
    if !sc.variants.is_empty() || sc.sweep.is_some() || !args.sensitivity.is_empty() {
        return Some("the scenario already runs variants, a sweep or a sensitivity study");
    }
    match recs {
        [r] if r.replications < 2 => Some("one replication cannot tell a gain from noise"),
        [r] if r.policy == "dm-crypt" => Some("no combination beats the default to check"),
        [_] => None,
        _ => Some("the comparison has more than one group"),
    }
}

/// Runs the robustness study of `first`'s recommendation (a report of `sc`, loaded from
/// `args` with the `--set`s `sets`) and prints its table to `out`; a note on stderr instead
/// when the study does not apply.
pub(super) fn check(
    args: &RunArgs,
    sets: &[String],
    sc: &Scenario,
    first: &Report,
    step: f64,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let recs = crate::report::answer::recommend(first);
    if recs.is_empty() {
        return Ok(());
    }
    if let Some(why) = unsuitable(sc, args, &recs) {
        eprintln!("note: --robust: not checked: {why}");
        return Ok(());
    }
    let rec = &recs[0];
    let knobs = inputs(sc, step);
    if knobs.is_empty() {
        eprintln!("note: --robust: not checked: the machine gives no input to move");
        return Ok(());
    }
    let mut sets2 = sets.to_vec();
    sets2.push(format!("policies=[dm-crypt, \"{}\"]", rec.policy));
    sets2.push(format!("replications={}", rec.replications));
    let listed: Vec<String> = knobs
        .iter()
        .map(|k| {
            format!(
                "{{name: \"{}\", path: \"{}\", low: \"{}\", high: \"{}\"}}",
                k.name, k.path, k.low, k.high
            )
        })
        .collect();
    sets2.push(format!("sensitivity.knobs=[{}]", listed.join(", ")));
    let mut sc2 = load_input(&args.scenario, args.machine.as_deref(), &sets2)?;
    apply_overrides(&mut sc2, args)?;
    sc2.replications = rec.replications as u32;
    for v in &mut sc2.variants {
        v.scenario.replications = rec.replications as u32;
    }
    let bar = super::Progress::new(args.quiet);
    // The study gets its own `--time-limit` budget: bounded, like the comparison before it.
    let deadline =
        (!args.time_limit.is_zero()).then(|| std::time::Instant::now() + args.time_limit);
    let valve = crate::model::Valve::until(deadline);
    let rep = crate::experiment::run_replicated(&sc2, args.jobs, None, false, valve, &|d, t| {
        bar.tick(d, t)
    })?;
    bar.finish();
    let mut report = Report::new(&sc2, &rep.pooled);
    report.attach_replications(&rep.samples, None);
    let stopped = report.policies.iter().any(|p| p.end == RunEnd::TimeLimit);
    if stopped {
        eprintln!("note: --robust: not checked: --time-limit stopped the study's runs");
        return Ok(());
    }
    let Some(h) = holds(&report, rec.metric, &knobs) else {
        anyhow::bail!("the robustness study's report lacks a run (a qsim bug)");
    };
    let mut text = String::new();
    let step_text = format!("{}%", units::trim_float(step * 100.0, 1));
    render_holds(&h, &rec.policy, rec.metric, &step_text, &mut text);
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_a_percentage_or_off() {
        assert_eq!(parse_step("20%"), Ok(0.2));
        assert_eq!(parse_step("5"), Ok(0.05));
        assert_eq!(parse_step("0"), Ok(0.0));
        assert_eq!(parse_step("off"), Ok(0.0));
        assert!(parse_step("95%").is_err());
        assert!(parse_step("-5%").is_err());
        assert!(parse_step("lots").is_err());
    }

    #[test]
    fn an_nvme_desktops_inputs_are_its_drive_its_cipher_and_its_cpus() {
        let sc = crate::scenario::resolve("nvme-desktop").expect("shipped");
        let ins = inputs(&sc, 0.2);
        let names: Vec<&str> = ins.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "device.latency",
                "device.overhead",
                "device.transfer_rate",
                "crypt rates",
                "cpus"
            ]
        );
        let cpus = ins.last().unwrap();
        assert_eq!(
            (cpus.value.as_str(), cpus.low.as_str(), cpus.high.as_str()),
            ("8", "6", "10")
        );
        // Every moved value reads back as the scenario's own parsers read it.
        for i in &ins[..4] {
            for t in [&i.value, &i.low, &i.high] {
                let ok = units::parse_duration(t).is_ok() || units::parse_rate(t).is_ok();
                assert!(ok, "{}: `{t}` does not parse", i.name);
            }
        }
    }

    #[test]
    fn rates_keep_four_significant_digits() {
        assert_eq!(rate_text(10_868e6), "10868MB/s");
        assert_eq!(rate_text(10_868e6 * 0.8), "8694MB/s");
        assert_eq!(rate_text(60e6 * 0.8), "48MB/s");
        assert_eq!(rate_text(123.456e6), "123.5MB/s");
    }
}
