//! Entry points for the fuzzers under `fuzz/` (cargo-fuzz, libFuzzer): each takes the raw
//! bytes a fuzzer made up and drives one reader of untrusted input the way the command line
//! does, so a panic, a hang or a runaway allocation in any of them shows up as a crash.
//! They return normally for every input that is merely invalid: an error is the right
//! answer to bad input.
//!
//! | target | reader |
//! |---|---|
//! | [`scenario()`] | the scenario loader ([`crate::scenario::load_str`]), then `qsim check`'s description |
//! | [`set`] | `--set` ([`crate::scenario::set_document`], [`crate::scenario::load_str_with_overrides`]) |
//! | [`plot_json`] | `qsim plot`'s reader ([`crate::plot::data::from_results_json`]) and, when it accepts the data, every plot drawn in memory |
//! | [`plot_data`] | the drawing code alone, on plot data built from the bytes (see there) |
//! | [`http`] | `qsim serve`'s HTTP reader and every endpoint of its page ([`crate::serve::answer_raw`]) |
//! | [`fio()`] | the fio job-file reader ([`crate::scenario::fio::load_str`]) on the default machine, then `qsim check`'s description; a refusal must name a line of the file |
//! | [`shard`] | `qsim merge`'s shard-file reader ([`crate::experiment::shard::ShardSet`]) and, when it accepts the set, the merge into a text report in memory |
//!
//! The same functions replay the seed corpus and every kept finding in `cargo test` (this
//! module's tests read `fuzz/seeds/<target>/` and `fuzz/regressions/<target>/`), so a crash
//! once found stays a test. docs/development.md ("Fuzzing") says how to run the fuzzers.

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

/// Builds [`PlotData`](crate::plot::data::PlotData) straight from `data` (a small
/// interpreter: each byte picks a length, a name from the ones the plots look for, or a
/// number from a table of awkward values) and, when [`check`](crate::plot::data::PlotData::check)
/// accepts it, draws every plot in memory. A byte-level fuzzer rarely mutates JSON into
/// another well-formed timeline; this reaches the drawing code with odd but valid data at
/// once: empty and one-bucket grids, grids far from 0, huge and tiny numbers, many series.
pub fn plot_data(data: &[u8]) {
    let d = Bytes(data).plot_data();
    if d.check().is_ok()
        && let Err(e) = crate::plot::draw_in_memory(&d)
    {
        panic!("accepted plot data failed to draw: {e}");
    }
}

/// Reads `data` as one HTTP request to `qsim serve`'s page, as its server reads a connection
/// (the head and body limits, the request line, headers and `Content-Length`), and answers it
/// through every endpoint ([`crate::serve::answer_raw`]; runs are submitted but never
/// simulated). Whatever the bytes, the answer must be a status line or nothing.
pub fn http(data: &[u8]) {
    let answer = crate::serve::answer_raw(data);
    assert!(
        answer.is_empty() || answer.starts_with(b"HTTP/1.1 "),
        "an answer that is no HTTP response"
    );
}

/// Reads `data` as a fio job file onto the default machine the way `qsim run job.fio` does
/// ([`scenario::fio::load_str`]): a file read is described and its warnings formatted, and a
/// refusal must be located (a line of the file), which [`scenario::fio::read_checked`]
/// checks; an unlocated refusal panics, so the fuzzer reports it.
pub fn fio(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = scenario::fio::read_checked("fuzz.fio", text) {
        panic!("{e}");
    }
}

/// A reader of fuzz bytes that yields 0 once they run out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        let Some((&b, rest)) = self.0.split_first() else {
            return 0;
        };
        self.0 = rest;
        b
    }

    fn u64(&mut self) -> u64 {
        (0..8).fold(0, |a, _| a << 8 | u64::from(self.u8()))
    }

    /// A length up to `max`.
    fn len(&mut self, max: usize) -> usize {
        usize::from(self.u8()) % (max + 1)
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[usize::from(self.u8()) % from.len()]
    }

    /// An awkward number (finite unless `nan` and the byte says so).
    fn f64(&mut self, nan: bool) -> f64 {
        const V: [f64; 16] = [
            0.0,
            -0.0,
            1.0,
            0.5,
            7.0,
            1e-320,
            1e-300,
            1e300,
            f64::MAX,
            -1.0,
            2.5e6,
            1e9,
            123_456.789,
            4e18,
            f64::MIN_POSITIVE,
            -1e300,
        ];
        match self.u8() {
            b @ 0..=199 => {
                // Scaled, but never past the largest finite number (check() refuses those).
                let v = V[usize::from(b) % V.len()] * f64::from(1 + b / 16);
                if v.is_finite() { v } else { f64::MAX }
            }
            200..=219 if nan => f64::NAN,
            _ => {
                let v = f64::from_bits(self.u64());
                if v.is_finite() { v } else { 3.0 }
            }
        }
    }

    fn name(&mut self) -> String {
        const N: [&str; 14] = [
            "",
            "a",
            "free pages",
            "crypt queue io",
            "crypt queue kcryptd",
            "dirty pages",
            "writeback pages",
            "kswapd",
            "GFP_ATOMIC failures",
            "high",
            "low",
            "min",
            "GFP_ATOMIC floor",
            "ü +/ x",
        ];
        match self.u8() {
            255 => "w".repeat(300),
            b => N[usize::from(b) % N.len()].to_string(),
        }
    }

    fn spread(&mut self) -> crate::plot::data::Spread {
        crate::plot::data::Spread {
            mean: self.f64(false),
            stddev: self.f64(false).abs(),
            ci95_half: self.f64(false).abs(),
            values: (0..self.u8() % 6).map(|_| self.f64(false)).collect(),
        }
    }

    fn plot_data(&mut self) -> crate::plot::data::PlotData {
        use crate::plot::data::*;
        let runs = (0..self.len(6))
            .map(|_| {
                let label = self.name();
                let read_percentiles = (0..self.len(12))
                    .map(|_| PercentileBand {
                        p: self.pick(&[50.0, 90.0, 99.0, 99.99, 0.0, 99.999_999_9, 1e-9]),
                        ns: self.spread(),
                    })
                    .collect();
                let mut ns = 0u64;
                let read_clat_bins = (0..self.len(20))
                    .map(|_| {
                        ns =
                            ns.saturating_add(1 + self.u64() % self.pick(&[10, 1 << 40, u64::MAX]));
                        (ns, self.pick(&[0, 1, 5, 1 << 40, u64::MAX]))
                    })
                    .collect();
                let read_stages = (0..self.len(8))
                    .map(|_| (self.name(), self.f64(false)))
                    .collect();
                let memory = self.u8().is_multiple_of(2).then(|| MemoryPlot {
                    failures_by_order: (0..self.len(6))
                        .map(|_| (self.pick(&[0, 1, 3, u32::MAX]), self.spread()))
                        .collect(),
                    failures: self.spread(),
                    kswapd_cwait_s: [self.spread(), self.spread()],
                });
                let timeline = (!self.u8().is_multiple_of(4)).then(|| self.timeline());
                RunPlot {
                    label,
                    read_percentiles,
                    read_clat_bins,
                    read_stages,
                    memory,
                    timeline,
                    metrics: Vec::new(),
                }
            })
            .collect();
        PlotData {
            sweep: None,
            flags: Vec::new(),
            scenario: "fuzz".to_string(),
            seed: self.u64(),
            replications: self.pick(&[0, 1, 2, u32::MAX]),
            runs,
        }
    }

    fn timeline(&mut self) -> crate::stats::series::Timeline {
        use crate::stats::series::{Count, Gauge, Grid, Level, States, Timeline};
        let grid = Grid {
            start_ns: self.pick(&[0, 1_000_000_000, 1 << 60]),
            bucket_ns: self.pick(&[1, 1000, 40_000_000, 1 << 40]),
            buckets: 1 + self.len(63),
        };
        let mut t = Timeline::new(grid);
        for _ in 0..self.len(8) {
            let mut g = Gauge::new(&self.name(), "", &grid);
            for b in 0..grid.buckets {
                let (x, y) = (self.f64(true), self.f64(true));
                if !x.is_nan() && !y.is_nan() {
                    (g.min[b], g.max[b]) = (x.min(y), x.max(y));
                }
            }
            t.gauges.push(g);
        }
        for _ in 0..self.len(3) {
            let mut c = Count::new(&self.name(), &grid);
            for n in &mut c.counts {
                *n = self.pick(&[0, 0, 1, 5, u64::MAX]);
            }
            t.counts.push(c);
        }
        for _ in 0..self.len(2) {
            let names: Vec<String> = (0..self.len(4)).map(|_| self.name()).collect();
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let mut s = States::new(&self.name(), &refs, &grid);
            let k = names.len().max(1) as u64;
            for row in &mut s.time_ns {
                for x in row.iter_mut() {
                    *x = grid.bucket_ns / k * u64::from(self.u8()) / 255;
                }
            }
            t.states.push(s);
        }
        for _ in 0..self.len(6) {
            t.levels.push(Level {
                name: self.name(),
                value: self.f64(false),
            });
        }
        t
    }
}

/// At most this many shard files are taken from one [`shard`] input.
pub const MAX_SHARD_FILES: usize = 8;

/// Splits `data` at NUL bytes into shard files (at most [`MAX_SHARD_FILES`]), recomputes each
/// header's fingerprint ([`crate::experiment::shard::reseal`], so that a mutated count or
/// scenario reaches the checks behind it), reads them as `qsim merge` does and, when the set
/// is accepted, merges it into a text report in memory. Every refusal must be an error.
pub fn shard(data: &[u8]) {
    use crate::experiment::shard::{self, ShardSet};
    let files: Vec<(std::path::PathBuf, Box<dyn std::io::BufRead>)> = data
        .split(|&b| b == 0)
        .take(MAX_SHARD_FILES)
        .enumerate()
        .map(|(i, bytes)| {
            let reader: Box<dyn std::io::BufRead> =
                Box::new(std::io::Cursor::new(shard::reseal(bytes)));
            (std::path::PathBuf::from(format!("fuzz{i}.jsonl")), reader)
        })
        .collect();
    match ShardSet::from_readers(files) {
        Ok(set) => {
            let opts = crate::experiment::RunOptions {
                format: "normal".to_string(),
                jobs: 1,
                ..Default::default()
            };
            if let Err(e) = shard::merge(set, &opts, &mut std::io::sink()) {
                let _ = e.to_string();
            }
        }
        Err(e) => {
            let _ = e.to_string();
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
    fn http_seeds_and_findings_replay() {
        replay("http", http);
    }

    #[test]
    fn plot_data_seeds_and_findings_replay() {
        replay("plot_data", plot_data);
    }

    #[test]
    fn fio_seeds_and_findings_replay() {
        replay("fio", fio);
    }

    #[test]
    fn shard_seeds_and_findings_replay() {
        replay("shard", shard);
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
