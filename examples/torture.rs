//! The long torture run: random valid scenarios through every check of
//! [`qsim::torture::run_case`], until `--cases` have passed or one fails.
//!
//! ```text
//! cargo run --release --example torture -- --cases 10000 [--seed S] [-j N] [--timeout SECS]
//! ```
//!
//! Case `i` uses seed `S + i` (`S` defaults to 0). Progress goes to stderr every few seconds;
//! the last line gives the count and the wall time. The first failure is printed (its seed
//! first, then what failed and the generated file) and the exit code is 1. A case still running
//! after `--timeout` seconds (default 120) counts as a hang: its seed and file are printed and
//! the process exits 1 at once. `--print` only prints the scenario of `--seed`.

use qsim::torture::{Failure, Totals};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

struct Args {
    cases: u64,
    seed: u64,
    jobs: usize,
    timeout: u64,
    print: bool,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        cases: 1000,
        seed: 0,
        jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
        timeout: 120,
        print: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| -> Result<u64, String> {
            let v = it.next().ok_or(format!("{name} needs a value"))?;
            v.parse()
                .map_err(|_| format!("{name}: expected a whole number, got `{v}`"))
        };
        match flag.as_str() {
            "--cases" | "-n" => a.cases = value("--cases")?,
            "--seed" | "-s" => a.seed = value("--seed")?,
            "-j" | "--jobs" => a.jobs = value("-j")?.max(1) as usize,
            "--timeout" => a.timeout = value("--timeout")?.max(1),
            "--print" => a.print = true,
            "-h" | "--help" => {
                return Err(
                    "usage: torture [--cases N] [--seed S] [-j N] [--timeout SECS] [--print]"
                        .into(),
                );
            }
            other => return Err(format!("unknown argument `{other}` (try --help)")),
        }
    }
    Ok(a)
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if args.print {
        print!("{}", qsim::torture::scenario_yaml(args.seed));
        return ExitCode::SUCCESS;
    }
    let started = Instant::now();
    eprintln!(
        "torture: {} cases from seed {} on {} threads",
        args.cases, args.seed, args.jobs
    );
    match run(&args, started) {
        Ok(t) => {
            println!(
                "torture: {} cases passed (seeds {}..{}) in {:.1} s: {} runs, {} events, {} units \
                 of work, {} runs stopped by their budget, {} ended early with their finite jobs \
                 done; most work in one event {} (seed {})",
                t.cases,
                args.seed,
                args.seed.wrapping_add(args.cases),
                started.elapsed().as_secs_f64(),
                t.runs,
                t.events,
                t.work,
                t.saturated,
                t.finished,
                t.max_step.0,
                t.max_step.1
            );
            ExitCode::SUCCESS
        }
        Err(f) => {
            println!("{f}");
            println!(
                "torture: FAILED after {:.1} s",
                started.elapsed().as_secs_f64()
            );
            ExitCode::FAILURE
        }
    }
}

/// Where the run is: the cases in progress (for the hang watchdog), and how many are done
/// with the time progress was last printed.
struct Progress {
    running: Mutex<BTreeMap<u64, Instant>>,
    done: Mutex<(u64, Instant)>,
}

/// Runs the cases with a hang watchdog beside them, printing progress every few seconds.
fn run(args: &Args, started: Instant) -> Result<Totals, Failure> {
    let progress = Progress {
        running: Mutex::new(BTreeMap::new()),
        done: Mutex::new((0, Instant::now())),
    };
    std::thread::scope(|s| {
        let watchdog = s.spawn(|| watch(args, &progress));
        let result = qsim::torture::run_parallel(
            args.seed,
            args.cases,
            args.jobs,
            &|seed| {
                let mut running = progress.running.lock().expect("watchdog lock");
                running.insert(seed, Instant::now());
            },
            &|seed, _| {
                progress
                    .running
                    .lock()
                    .expect("watchdog lock")
                    .remove(&seed);
                let mut d = progress.done.lock().expect("progress lock");
                d.0 += 1;
                if d.1.elapsed() >= Duration::from_secs(5) {
                    d.1 = Instant::now();
                    eprintln!(
                        "torture: {} / {} cases, {:.0} s",
                        d.0,
                        args.cases,
                        started.elapsed().as_secs_f64()
                    );
                }
            },
        );
        // Stop the watchdog however the run ended.
        progress.done.lock().expect("progress lock").0 = args.cases;
        watchdog.join().expect("the watchdog does not panic");
        result
    })
}

/// The hang watchdog: until every case is done, exits the process with the seed and file of
/// a case that has run longer than `--timeout`.
fn watch(args: &Args, progress: &Progress) {
    let timeout = Duration::from_secs(args.timeout);
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let finished = progress.done.lock().expect("progress lock").0;
        if finished >= args.cases {
            return;
        }
        let hung = progress
            .running
            .lock()
            .expect("watchdog lock")
            .iter()
            .find(|(_, t)| t.elapsed() > timeout)
            .map(|(&seed, _)| seed);
        if let Some(seed) = hung {
            eprintln!(
                "SEED={seed}\nhang: the case is still running after {} s\n\
                 --- generated scenario torture-{seed}.yaml ---\n{}",
                args.timeout,
                qsim::torture::scenario_yaml(seed)
            );
            std::process::exit(1);
        }
    }
}
