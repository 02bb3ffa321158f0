//! `qsim run --plots SCENARIO`: the optional directory must not swallow the scenario.

use super::Cli;
use clap::Parser;

impl Cli {
    /// Parses a command line as clap does, except that in `qsim run --plots SCENARIO` (the
    /// directory left out, the scenario right after the flag) SCENARIO is the scenario: clap
    /// alone gives the optional directory the word and then misses the scenario. Only when the
    /// line fails that way, and reads whole once the word after `--plots` is moved after `--`,
    /// is the moved reading taken; every other line parses, or fails, exactly as clap has it.
    pub fn parse_lenient<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString>,
    {
        let argv: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
        let first = Cli::try_parse_from(&argv);
        match &first {
            Err(e) if e.kind() == clap::error::ErrorKind::MissingRequiredArgument => {}
            _ => return first,
        }
        let is_run = argv.get(1).is_some_and(|a| a == "run");
        let at = argv.iter().position(|a| a == "--plots");
        let (true, Some(at)) = (is_run, at) else {
            return first;
        };
        if argv
            .get(at + 1)
            .is_none_or(|w| w.to_string_lossy().starts_with('-'))
        {
            return first;
        }
        let mut moved = argv;
        let word = moved.remove(at + 1);
        moved.extend(["--".into(), word]);
        Cli::try_parse_from(&moved).or(first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Command;
    use std::path::PathBuf;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::parse_lenient(std::iter::once("qsim").chain(args.iter().copied()))
    }

    /// The run's scenario and `--plots` value as parsed.
    fn scenario_and_plots(args: &[&str]) -> (String, Option<Option<PathBuf>>) {
        match parse(args).expect("parses").command {
            Command::Run(r) => (r.scenario, r.output.plots),
            other => panic!("not a run: {other:?}"),
        }
    }

    #[test]
    fn plots_without_a_directory_never_swallows_the_scenario() {
        let sc = |s: &str| s.to_string();
        assert_eq!(
            scenario_and_plots(&["run", "--plots", "two-queue"]),
            (sc("two-queue"), Some(None))
        );
        assert_eq!(
            scenario_and_plots(&["run", "--plots", "two-queue", "-r", "2"]),
            (sc("two-queue"), Some(None))
        );
        assert_eq!(
            scenario_and_plots(&["run", "-r", "2", "--plots", "two-queue"]),
            (sc("two-queue"), Some(None))
        );
        // A directory and a scenario: as before.
        assert_eq!(
            scenario_and_plots(&["run", "--plots", "out", "x.yaml"]),
            (sc("x.yaml"), Some(Some(PathBuf::from("out"))))
        );
        assert_eq!(
            scenario_and_plots(&["run", "x.yaml", "--plots", "out"]),
            (sc("x.yaml"), Some(Some(PathBuf::from("out"))))
        );
        assert_eq!(
            scenario_and_plots(&["run", "x.yaml", "--plots"]),
            (sc("x.yaml"), Some(None))
        );
        // No scenario at all is still clap's error.
        let e = parse(&["run", "--plots"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::MissingRequiredArgument);
    }
}
