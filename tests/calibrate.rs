//! `qsim calibrate` end to end: qsim's own fio JSON of the shipped calibration jobs on the
//! `sata-ssd` preset is calibrated back to the preset's parameters, the machine file runs a
//! job file, and what calibration cannot use is refused without writing a file.

use crate::util::{Run, TempDir};

/// Runs shipped job `job` with qsim on `machine` and writes its fio JSON into `dir`.
fn measure(dir: &TempDir, machine: &str, job: &str) -> String {
    let shipped = std::fs::read_to_string(format!("calibrate/{job}.fio")).unwrap();
    let text = format!(
        "[global]\nfilename=/dev/sdb\n{}",
        shipped.replace("runtime=30", "runtime=1")
    );
    let fio = dir.file(&format!("{job}.fio"), &text);
    let r = Run::of(&[
        "run",
        &fio,
        "--machine",
        machine,
        "-r",
        "1",
        "--format",
        "json",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    dir.file(&format!("{job}.json"), &r.stdout)
}

/// The value of `key:` in a machine file, without its unit.
fn field(text: &str, key: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{key}:")))
        .unwrap_or_else(|| panic!("no {key} in\n{text}"));
    let v = line.split(':').nth(1).unwrap().trim();
    v.trim_end_matches("B/s")
        .trim_end_matches("ns")
        .parse()
        .unwrap()
}

#[test]
fn a_sata_ssd_calibrates_back_to_its_preset_through_the_binary() {
    let dir = TempDir::new();
    let machine = dir.file(
        "ssd.yaml",
        "# the sata-ssd preset\nkernel: { version: \"6.12\" }\ndevice: { kind: sata-ssd }\n",
    );
    let jobs = ["randread-qd1", "randread-deep", "seqread", "seqwrite"];
    let json: Vec<String> = jobs.iter().map(|j| measure(&dir, &machine, j)).collect();
    let out = dir.path().join("mybox.yaml");
    let out = out.to_str().unwrap();
    let bench = dir.file(
        "bench.txt",
        "#     Algorithm |       Key |      Encryption |      Decryption\n\
         \x20       aes-xts        512b      2000.0 MiB/s      2100.0 MiB/s\n",
    );
    let mut args = vec!["calibrate", "-o", out, "--cryptsetup", &bench];
    for j in &json {
        args.extend(["--fio", j]);
    }
    let r = Run::of(&args);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout.contains("Residuals") && r.stdout.contains("predicted"),
        "{}",
        r.stdout
    );
    // Mailable, as every text qsim prints: the fit's explanations wrap under themselves.
    r.stdout_fits_80();
    let text = std::fs::read_to_string(out).unwrap();
    assert!(text.starts_with("# qsim machine file"), "{text}");
    // sata-ssd: latency 66.72us, 560MB/s, a 4KiB read 10.204us in the bottleneck.
    let within = |got: f64, want: f64| (got - want).abs() / want < 0.05;
    assert!(within(field(&text, "latency"), 66_720.0), "{text}");
    assert!(within(field(&text, "transfer_rate"), 560e6), "{text}");
    assert!(
        within(field(&text, "overhead"), 10_204.0 - 4096.0 / 560e6 * 1e9),
        "{text}"
    );
    assert!(
        within(field(&text, "encrypt_rate"), 2000.0 * 1048576.0),
        "{text}"
    );
    // The machine file runs a job file, and `qsim check` reads it in a scenario.
    let job = dir.path().join("randread-qd1.fio");
    let r = Run::of(&["run", job.to_str().unwrap(), "--machine", out, "-r", "1"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let scenario = dir.file(
        "s.yaml",
        "machine: mybox.yaml\nworkloads: [{ kind: fio }]\n",
    );
    let r = Run::of(&["check", &scenario]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("sata-ssd"), "{}", r.stdout);
}

#[test]
fn unusable_inputs_are_refused_and_nothing_is_written() {
    let dir = TempDir::new();
    let out = dir.path().join("never.yaml");
    let out = out.to_str().unwrap();
    let cut = dir.file(
        "cut.json",
        "{\n  \"fio version\" : \"fio-3.33\",\n  \"jobs\" : [\n",
    );
    let not_fio = dir.file("x.json", "{\"hello\": 1}\n");
    let bench = dir.file("bench.txt", "#     Algorithm |       Key |      Encryption |      Decryption\n        aes-cbc   128b  1.0 MiB/s  1.0 MiB/s\n");
    for (args, needle) in [
        (vec!["--fio", &cut], "the JSON ends early"),
        (vec!["--fio", &not_fio], "x.json: no \"fio version\""),
        (
            vec!["--fio", &cut, "--cryptsetup", &bench],
            "bench.txt: aes-xts 512b: no `aes-xts 512b` line",
        ),
        (
            vec!["--fio", "/nonexistent.json"],
            "--fio /nonexistent.json: cannot read it",
        ),
    ] {
        let mut all = vec!["calibrate", "-o", out];
        all.extend(args);
        Run::of(&all).assert_bad_input().stderr_has(&[needle]);
        assert!(!std::path::Path::new(out).exists());
    }
}
