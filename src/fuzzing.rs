//! Entry points for the fuzzers under `fuzz/` (cargo-fuzz, libFuzzer): each takes the raw
//! bytes a fuzzer made up and drives one reader of untrusted input the way the command line
//! does, so a panic, a hang or a runaway allocation in any of them shows up as a crash.
//! They return normally for every input that is merely invalid: an error is the right
//! answer to bad input.
//!
//! | target | reader |
//! |---|---|
//! | [`scenario`] | the scenario loader ([`crate::scenario::load_str`]), then `qsim check`'s description |
//! | [`set`] | `--set` ([`crate::scenario::set_document`], [`crate::scenario::load_str_with_overrides`]) |
//! | [`plot_json`] | `qsim plot`'s reader ([`crate::plot::data::from_results_json`]) and, when it accepts the data, every plot drawn in memory |
//!
//! The same functions replay the seed corpus and every kept finding in `cargo test` (this
//! module's tests read `fuzz/seeds/<target>/` and `fuzz/regressions/<target>/`), so a crash
//! once found stays a test. README.md ("Fuzzing") says how to run the fuzzers.

use crate::scenario;

/// The source name the fuzzed scenario text is loaded under.
const SOURCE: &str = "fuzz.yaml";

/// At most this many `--set` arguments are taken from one [`set`] input.
pub const MAX_SETS: usize = 8;

/// Loads `data` as scenario text (inputs that are not UTF-8 are skipped: the file reader
/// refuses them before the loader sees them). A scenario that loads is described as
/// `qsim check` does; an error is formatted as the command line prints it.
pub fn scenario(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    outcome(scenario::load_str(SOURCE, text));
}

/// Splits `data` into `--set` arguments and a scenario: the arguments are the lines before
/// the first NUL byte (at most [`MAX_SETS`]), the scenario is the text after it; without a NUL
/// the whole input is arguments over the shipped `nvme-fio` scenario. Each argument goes
/// through [`scenario::set_document`] alone, then all of them through
/// [`scenario::load_str_with_overrides`].
pub fn set(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let shipped;
    let (args, base) = match text.split_once('\0') {
        Some((args, base)) => (args, base),
        None => {
            shipped = scenario::shipped()
                .into_iter()
                .find(|s| s.name == "nvme-fio")
                .map_or("", |s| s.yaml);
            (text, shipped)
        }
    };
    let sets: Vec<String> = args.lines().take(MAX_SETS).map(str::to_string).collect();
    for arg in &sets {
        if let Err(e) = scenario::set_document(arg) {
            let _ = e.to_string();
        }
    }
    outcome(scenario::load_str_with_overrides(SOURCE, base, &sets));
}

/// Reads `data` as a results file the way `qsim plot` does and, when it is accepted, draws
/// every plot into memory ([`crate::plot::draw_in_memory`]). Drawing accepted data must
/// succeed: a drawing error there panics, so the fuzzer reports it.
pub fn plot_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match crate::plot::data::from_results_json(text) {
        Ok(d) => {
            if let Err(e) = crate::plot::draw_in_memory(&d) {
                panic!("accepted plot data failed to draw: {e}");
            }
        }
        Err(e) => {
            let _ = e.in_file("fuzz.json");
        }
    }
}

/// What the command line does with a load's result: describe the scenario, or format the
/// error and its exit code.
fn outcome(r: Result<scenario::Scenario, scenario::Error>) {
    match r {
        Ok(sc) => {
            let _ = scenario::describe(&sc);
        }
        Err(e) => {
            let _ = (e.to_string(), e.exit_code());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    /// Every file in `fuzz/<kind>/<target>/` (none if the directory is missing).
    fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fuzz")
            .join(kind)
            .join(target);
        let Ok(rd) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut v: Vec<PathBuf> = rd
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect();
        v.sort();
        v
    }

    /// Replays the seeds and the kept findings of `target` through `f`; the seeds must exist.
    fn replay(target: &str, f: fn(&[u8])) {
        let seeds = inputs("seeds", target);
        assert!(!seeds.is_empty(), "no seeds for {target}");
        for p in seeds.iter().chain(&inputs("regressions", target)) {
            let bytes = std::fs::read(p).unwrap();
            let r = std::panic::catch_unwind(|| f(&bytes));
            assert!(r.is_ok(), "{target}: {} panics", p.display());
        }
    }

    #[test]
    fn scenario_seeds_and_findings_replay() {
        replay("scenario", scenario);
    }

    #[test]
    fn set_seeds_and_findings_replay() {
        replay("set", set);
    }

    #[test]
    fn plot_json_seeds_and_findings_replay() {
        replay("plot_json", plot_json);
    }

    #[test]
    fn the_plot_json_seeds_are_accepted_plot_data() {
        // So the fuzzer starts from data that is drawn, and mutates outward.
        for p in inputs("seeds", "plot_json") {
            let text = std::fs::read_to_string(&p).unwrap();
            let data = crate::plot::data::from_results_json(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert!(data.runs.iter().any(|r| r.timeline.is_some()));
        }
    }

    #[test]
    fn the_shipped_scenarios_load_through_the_scenario_entry_point() {
        // The seeds are the shipped files: each must load, so the fuzzer starts from valid
        // scenarios and mutates outward.
        for s in scenario::shipped() {
            assert!(
                scenario::load_str(SOURCE, s.yaml).is_ok(),
                "{} does not load",
                s.name
            );
        }
    }
}
