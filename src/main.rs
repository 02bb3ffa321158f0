//! The `qsim` binary: parse the command line, run it, print any error chain, exit 0 / 1 / 2.
//!
//! Output goes through one locked stdout; a reader that goes away (`qsim list | head -1`) ends
//! the program quietly with 0. The exit codes are tabled in `qsim::error`.

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    // clap prints its own usage errors and exits 2 (0 for --help and --version).
    let cli = qsim::cli::Cli::parse_lenient(std::env::args_os()).unwrap_or_else(|e| e.exit());
    // Interrupted, qsim removes its unfinished temporary files and exits 130.
    if let Err(e) = qsim::output::install_interrupt_handler() {
        let _ = writeln!(std::io::stderr(), "warning: no interrupt handler: {e}");
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = qsim::cli::run(cli, &mut out).and_then(|()| out.flush().map_err(Into::into));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let code = qsim::error::exit_code(&err);
            if code != 0 {
                // stderr may be closed too; nothing is left to report that to.
                let _ = writeln!(std::io::stderr(), "error: {}", qsim::error::render(&err));
            }
            ExitCode::from(code as u8)
        }
    }
}
