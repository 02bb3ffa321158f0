//! The command line's conventions: shell completions and man pages generated from the clap
//! definition (`qsim completions`, `qsim man`), `-` as standard input for a scenario, and the
//! exit statuses listed after the top-level `--help`.

use super::Cli;
use crate::scenario::{self, Scenario, units};
use anyhow::Context;
use clap::Args;
use std::io::{self, Write};
use std::path::PathBuf;

/// The exit statuses, shown after the top-level `--help` and in qsim(1) (lines short enough
/// for man's 80 columns). `qsim::error` decides them; `tests/conventions.rs` checks each
/// against the binary.
pub const EXIT_STATUS_HELP: &str = "\
Exit status:
  0    success; also when stdout's reader goes away (qsim list | head)
  1    a run or a write failed: an invariant broke
       (--check-invariants), the model disagreed with theory
       (validate), --time-limit stopped a run, or a report or file
       could not be written
  2    bad input, found before anything runs: a scenario error, a bad
       command-line value or output path, a usage error
  130  interrupted (SIGINT, SIGTERM, SIGHUP); unfinished temporary
       files are removed";

/// How errors name a scenario read from standard input (`qsim run -`), where they name a
/// file's path; it is also the scenario's name when the text has no `name:`.
pub const STDIN_NAME: &str = "<stdin>";

/// Loads the scenario a command-line argument names, with `--set` overrides: `-` reads it from
/// standard input, anything else is a file or a shipped scenario
/// ([`scenario::resolve_with_overrides`]).
pub(super) fn resolve_scenario(arg: &str, sets: &[String]) -> Result<Scenario, scenario::Error> {
    if arg != "-" {
        return scenario::resolve_with_overrides(arg, sets);
    }
    let text = read_scenario_text(io::stdin().lock())?;
    scenario::load_str_with_overrides(STDIN_NAME, &text, sets)
}

/// Reads a scenario's text from `input` (standard input) with the rules of a file: at most
/// [`scenario::MAX_FILE_BYTES`] bytes, counted as read, and UTF-8.
fn read_scenario_text(input: impl io::Read) -> Result<String, scenario::Error> {
    use io::Read;
    let fail = |message: String, hint: &str| {
        scenario::Error::whole_file(
            scenario::ErrorKind::Read,
            STDIN_NAME,
            message,
            Some(hint.to_string()),
        )
    };
    let max = scenario::MAX_FILE_BYTES;
    let mut bytes = Vec::new();
    input.take(max + 1).read_to_end(&mut bytes).map_err(|e| {
        fail(
            format!("cannot read standard input: {e}"),
            "pipe a scenario in",
        )
    })?;
    if bytes.len() as u64 > max {
        return Err(fail(
            format!(
                "standard input holds more than {} ({max} bytes), the most a scenario may \
                 hold; reading stopped there",
                units::format_bytes(max)
            ),
            "is this the right input? scenarios are short YAML files",
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        fail(
            format!(
                "standard input is not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
            "pipe the scenario in as UTF-8",
        )
    })
}

/// Arguments of `qsim completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell the script is for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Arguments of `qsim man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write qsim.1 and one page per subcommand (qsim-run.1, …) into DIR, created if missing,
    /// and print their paths, instead of printing qsim.1 to stdout.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

pub(super) fn completions_cmd(args: &CompletionsArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    // Into a buffer first: clap_complete panics on a write error, and a closed pipe is not one.
    let mut script = Vec::new();
    clap_complete::generate(
        args.shell,
        &mut <Cli as clap::CommandFactory>::command(),
        "qsim",
        &mut script,
    );
    out.write_all(&script)?;
    out.flush()?;
    Ok(())
}

/// The man pages of qsim, generated from the same clap definition as the parser: `qsim.1`
/// first, then one per subcommand (`qsim-run.1`, …), as (file name, roff text).
pub fn man_pages() -> io::Result<Vec<(String, Vec<u8>)>> {
    fn add(cmd: &clap::Command, pages: &mut Vec<(String, Vec<u8>)>) -> io::Result<()> {
        let title = cmd.get_display_name().unwrap_or(cmd.get_name());
        let man = clap_mangen::Man::new(cmd.clone())
            .title(title.to_uppercase())
            .source(concat!("qsim ", env!("CARGO_PKG_VERSION")));
        let mut roff = Vec::new();
        man.render(&mut roff)?;
        pages.push((man.get_filename(), roff));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            add(sub, pages)?;
        }
        Ok(())
    }
    // As clap_mangen::generate_to: no page for clap's `help` subcommand, and built, so that
    // each subcommand knows its display name (`qsim-run`).
    let mut cmd = <Cli as clap::CommandFactory>::command().disable_help_subcommand(true);
    cmd.build();
    let mut pages = Vec::new();
    add(&cmd, &mut pages)?;
    Ok(pages)
}

pub(super) fn man_cmd(args: &ManArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let pages = man_pages().context("rendering the man pages")?;
    let Some(dir) = &args.out else {
        out.write_all(&pages[0].1)?;
        out.flush()?;
        return Ok(());
    };
    crate::output::check_dir("--out", dir)?;
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the directory {}", dir.display()))?;
    for (name, roff) in &pages {
        let path = dir.join(name);
        crate::output::write_file(&path, roff, out)
            .with_context(|| format!("writing {}", path.display()))?;
        writeln!(out, "{}", path.display())?;
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn stdin_is_read_with_the_rules_of_a_file() {
        use std::io::Read;
        let text = read_scenario_text(&b"device: { kind: nvme }\n"[..]).unwrap();
        assert_eq!(text, "device: { kind: nvme }\n");
        let e = read_scenario_text(&b"a: \xff"[..]).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("<stdin>: standard input is not UTF-8"),
            "{e}"
        );
        let huge = io::repeat(b'#').take(scenario::MAX_FILE_BYTES + 10);
        let e = read_scenario_text(huge).unwrap_err();
        assert!(e.to_string().contains("more than 16MiB"), "{e}");
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn man_pages_cover_every_subcommand_with_one_source() {
        let pages = man_pages().unwrap();
        let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names[0], "qsim.1");
        for sub in Cli::command().get_subcommands().map(|c| c.get_name()) {
            if sub != "help" {
                assert!(names.contains(&format!("qsim-{sub}.1").as_str()), "{sub}");
            }
        }
        for (name, roff) in &pages {
            let roff = String::from_utf8(roff.clone()).unwrap();
            let source = concat!(" \"qsim ", env!("CARGO_PKG_VERSION"), "\"");
            assert!(roff.contains(source), "{name}: {roff}");
        }
    }
}
