//! Command-line conventions: shell completions and man pages generated from the clap
//! definition, `-` as standard input for a scenario, and the exit statuses `--help` lists,
//! each checked against what the binary returns.

use crate::util::{Run, TempDir, qsim};
use std::io::Write;
use std::process::{Child, Stdio};

/// Every subcommand a user can type; the completions and man pages must know each one.
const SUBCOMMANDS: [&str; 12] = [
    "run",
    "check",
    "list",
    "plot",
    "validate",
    "reproduce",
    "completions",
    "man",
    "merge",
    "trace",
    "calibrate",
    "serve",
];

const TINY: &str = "name: tiny\nduration: 300ms\nwarmup: 50ms\nreplications: 2\n\
                    device: { kind: nvme }\nworkloads:\n  - kind: fio\n    iodepth: 4\n";

/// Whether `program` can be started (an optional checker such as `zsh` or `man`).
fn installed(program: &str) -> bool {
    std::process::Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Runs `qsim args` with `input` on its standard input.
fn with_stdin(args: &[&str], input: &[u8]) -> Run {
    let mut child = qsim(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the qsim binary runs");
    // qsim may stop reading early (an error); a closed pipe here is then expected.
    let _ = child.stdin.take().unwrap().write_all(input);
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn each_shell_gets_a_script_that_knows_the_subcommands() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let run = Run::of(&["completions", shell]);
        run.assert_ok();
        for sub in SUBCOMMANDS {
            assert!(run.stdout.contains(sub), "{shell}: no `{sub}`");
        }
        assert!(run.stdout.contains("check-invariants"), "{shell}");
    }
    // bash is everywhere qsim's tests run; zsh and fish are checked where installed.
    let dir = TempDir::new();
    for (shell, check) in [("bash", "-n"), ("zsh", "-n"), ("fish", "--no-execute")] {
        if shell != "bash" && !installed(shell) {
            continue;
        }
        let script = dir.file(
            &format!("qsim.{shell}"),
            &Run::of(&["completions", shell]).stdout,
        );
        let out = std::process::Command::new(shell)
            .args([check, &script])
            .output()
            .unwrap_or_else(|e| panic!("{shell}: {e}"));
        assert!(
            out.status.success(),
            "{shell} {check} refuses the script:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(Run::of(&["completions", "tcsh"]).code, Some(2));
}

#[test]
fn the_man_page_is_roff_with_every_subcommand_and_the_exit_statuses() {
    let run = Run::of(&["man"]);
    run.assert_ok();
    let page = &run.stdout;
    assert!(page.contains("\n.TH QSIM 1 "), "{page}");
    for section in ["NAME", "SYNOPSIS", "OPTIONS", "SUBCOMMANDS", "VERSION"] {
        assert!(page.contains(&format!("\n.SH {section}\n")), "{section}");
    }
    for sub in SUBCOMMANDS {
        assert!(page.contains(&format!("\nqsim\\-{sub}(1)\n")), "{sub}");
    }
    assert!(page.contains("Exit status:") && page.contains("130  interrupted"));
}

#[test]
fn man_out_writes_one_page_per_subcommand() {
    let dir = TempDir::new();
    let out = dir.path().join("man/man1");
    let out_arg = out.to_str().unwrap();
    let run = Run::of(&["man", "--out", out_arg]);
    run.assert_ok();
    let mut expected = vec![format!("{out_arg}/qsim.1")];
    expected.extend(SUBCOMMANDS.iter().map(|s| format!("{out_arg}/qsim-{s}.1")));
    let listed: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(listed, expected);
    assert_eq!(
        std::fs::read_to_string(out.join("qsim.1")).unwrap(),
        Run::of(&["man"]).stdout,
        "the page printed is the page written"
    );
    let run_page = std::fs::read_to_string(out.join("qsim-run.1")).unwrap();
    assert!(run_page.contains("\n.TH QSIM-RUN 1  \"qsim "), "{run_page}");
    assert!(run_page.contains("\\-\\-check\\-invariants"));
    // Where man is installed, it formats every page without a warning.
    if installed("man") {
        for file in &expected {
            let out = std::process::Command::new("man")
                .args(["-l", file])
                .env("MANPAGER", "cat")
                .env("MANWIDTH", "80")
                .env("MAN_KEEP_FORMATTING", "")
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success() && text.contains("qsim"), "{file}");
            assert!(
                out.stderr.is_empty(),
                "{file}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    // A file where the directory should be is bad input, found before writing.
    let file = dir.file("taken", "x");
    Run::of(&["man", "--out", &file])
        .assert_bad_input()
        .stderr_has(&["--out"]);
}

#[test]
fn a_scenario_on_stdin_runs_as_the_same_file_would() {
    let dir = TempDir::new();
    let file = dir.file("tiny.yaml", TINY);
    let from_file = Run::of(&["run", &file, "-j", "1"]);
    from_file.assert_ok();
    let from_stdin = with_stdin(&["run", "-", "-j", "1"], TINY.as_bytes());
    from_stdin.assert_ok();
    assert_eq!(from_stdin.stdout, from_file.stdout);
    let checked = with_stdin(&["check", "-", "--set", "cpus=3"], TINY.as_bytes());
    checked.assert_ok();
    assert_eq!(
        checked.stdout,
        Run::of(&["check", &file, "--set", "cpus=3"]).stdout
    );
}

#[test]
fn a_bad_scenario_on_stdin_is_located_in_stdin() {
    let bad = TINY.replace("iodepth: 4", "iodepth: -4");
    for cmd in ["run", "check"] {
        with_stdin(&[cmd, "-"], bad.as_bytes())
            .assert_bad_input()
            .stderr_has(&["error: <stdin>:8:14: workloads[0].iodepth:", "hint:"]);
        with_stdin(&[cmd, "-"], b"")
            .assert_bad_input()
            .stderr_has(&["<stdin>: the scenario file is empty"]);
    }
    let typo = TINY.replace("iodepth", "iodeptj");
    with_stdin(&["check", "-"], typo.as_bytes())
        .assert_bad_input()
        .stderr_has(&["<stdin>:8:", "iodepth"]);
    with_stdin(&["check", "-"], b"device: { kind: nvme }\n\xff")
        .assert_bad_input()
        .stderr_has(&["<stdin>: standard input is not UTF-8 text (invalid byte at offset 23)"]);
}

/// The exit statuses the top-level `--help` lists, in order.
fn documented_exit_statuses() -> Vec<i32> {
    let help = Run::of(&["--help"]);
    help.assert_ok();
    let (_, table) = help
        .stdout
        .split_once("\nExit status:\n")
        .expect("--help lists the exit statuses");
    table
        .lines()
        .filter_map(|l| {
            l.strip_prefix("  ")?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .collect()
}

/// Starts `qsim run -` and waits until its interrupt handler is installed: ctrlc spawns its
/// thread after installing the handler, so a second thread proves it. The run then blocks on
/// its standard input, which this test never writes.
fn waiting_run() -> Child {
    let mut child = qsim(&["run", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let tasks = format!("/proc/{}/task", child.id());
    for _ in 0..6000 {
        if std::fs::read_dir(&tasks).map_or(0, |d| d.count()) >= 2 {
            return child;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("qsim never started its interrupt handler thread");
}

/// How the binary exits in a case of `code`, run for real.
fn exit_status_of_a_case(code: i32) -> Option<i32> {
    match code {
        0 => Run::of(&["list"]).code,
        // A report that cannot be written: stdout is a full device.
        1 => {
            let full = std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .expect("/dev/full");
            let out = qsim(&["list"]).stdout(full).output().unwrap();
            assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: "));
            out.status.code()
        }
        2 => {
            let usage = Run::of(&["frobnicate"]).code;
            let scenario = Run::of(&["check", "/nonexistent/x.yaml"]).code;
            assert_eq!(
                usage, scenario,
                "usage errors and bad scenarios share a code"
            );
            scenario
        }
        130 => {
            let mut child = waiting_run();
            // Hold stdin open until the child is gone: `wait_with_output` would close it, and
            // the run, seeing end of input, could exit 2 before the signal's thread runs.
            let stdin = child.stdin.take();
            let pid = child.id().to_string();
            let kill = std::process::Command::new("kill")
                .args(["-INT", &pid])
                .status();
            assert!(kill.unwrap().success());
            let out = child.wait_with_output().unwrap();
            drop(stdin);
            assert!(String::from_utf8_lossy(&out.stderr).contains("qsim: interrupted;"));
            out.status.code()
        }
        other => panic!("--help documents exit status {other}, which this test has no case of"),
    }
}

#[test]
fn each_documented_exit_status_is_what_the_binary_returns() {
    let codes = documented_exit_statuses();
    assert_eq!(
        codes,
        [0, 1, 2, 130],
        "the table in --help changed: add its case here"
    );
    for code in codes {
        assert_eq!(
            exit_status_of_a_case(code),
            Some(code),
            "exit status {code}"
        );
    }
}
