//! Calibration round trips on qsim's own fio JSON, the host parsers, and refusals.

use super::*;
use crate::experiment::{self, RunOptions};
use crate::model::base::config::DeviceConfig;
use crate::scenario;

/// A temporary file of `text` that lives as long as the value.
struct Temp(std::path::PathBuf);

impl Temp {
    fn new(name: &str, text: &str) -> Temp {
        // Unique per call: tests run in parallel threads and two may measure the same job.
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("qsim-cal-{}-{n}-{name}", std::process::id()));
        std::fs::write(&p, text).unwrap();
        Temp(p)
    }
    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// fio JSON of shipped job `job` (calibrate/JOB.fio) run by qsim on `machine` (a machine
/// file's text) for `runtime`, with `extra` job options: the "measurement" of a known device.
fn measured(machine: &str, job: &str, runtime: &str, extra: &str) -> Named {
    let m = Temp::new(&format!("{job}-machine.yaml"), machine);
    let file = std::fs::read_to_string(format!("calibrate/{job}.fio")).unwrap();
    let text = format!(
        "[global]\nfilename=/dev/sdb\n{extra}{}",
        file.replace("runtime=30", &format!("runtime={runtime}"))
    );
    let base = scenario::fio::resolve_machine(m.path(), &["replications=1".into()]).unwrap();
    let sc = scenario::fio::load_str(job, &text, base, "preset")
        .unwrap()
        .scenario;
    let opts = RunOptions {
        format: "json".into(),
        jobs: 1,
        ..RunOptions::default()
    };
    let mut out = Vec::new();
    experiment::run_and_report(&sc, &opts, &mut out, &|_, _| {}).unwrap();
    (format!("{job}.json"), String::from_utf8(out).unwrap())
}

/// The device a machine file's text resolves to.
fn device_of(machine: &str) -> DeviceConfig {
    let m = Temp::new("fitted.yaml", machine);
    let text = format!("machine: {}\nworkloads: [{{ kind: fio }}]\n", m.path());
    scenario::load_str("s.yaml", &text).unwrap().device
}

/// `fitted` within 5% of `preset`.
fn close(what: &str, fitted: f64, preset: f64) {
    let err = (fitted - preset) / preset;
    assert!(
        err.abs() < 0.05,
        "{what}: fitted {fitted} vs preset {preset} ({:+.2}%)",
        err * 100.0
    );
}

fn calibrate_preset(
    kind: &str,
    runtimes: [&str; 3],
    extra: &str,
) -> (DeviceConfig, DeviceConfig, Calibration) {
    let machine = format!("kernel: {{ version: \"6.12\" }}\ndevice: {{ kind: {kind} }}\n");
    let jobs = ["randread-qd1", "randread-deep", "seqread"];
    let fio = jobs
        .iter()
        .zip(runtimes)
        .map(|(j, rt)| measured(&machine, j, rt, extra))
        .collect();
    let cal = calibrate(&Inputs {
        fio,
        key_bits: 512,
        ..Inputs::default()
    })
    .unwrap();
    assert!(cal.report.contains("Residuals"), "{}", cal.report);
    (device_of(&cal.machine), device_of(&machine), cal)
}

#[test]
fn an_hdd7200_calibrates_back_to_its_preset() {
    let (fit, preset, cal) =
        calibrate_preset("hdd7200", ["600", "60", "60"], "size=1000000000000\n");
    let (DeviceConfig::Hdd(f), DeviceConfig::Hdd(p)) = (fit, preset) else {
        panic!("{}", cal.machine)
    };
    close(
        "seek_min",
        f.seek_min.as_secs_f64(),
        p.seek_min.as_secs_f64(),
    );
    close(
        "seek_full",
        f.seek_full.as_secs_f64(),
        p.seek_full.as_secs_f64(),
    );
    close(
        "revolution",
        f.revolution.as_secs_f64(),
        p.revolution.as_secs_f64(),
    );
    close("transfer_rate", f.transfer_rate, p.transfer_rate);
    assert_eq!((f.capacity, f.queue_depth), (p.capacity, p.queue_depth));
    assert!(cal.machine.contains("kind: hdd7200"), "{}", cal.machine);
}

#[test]
fn an_nvme_gen4_calibrates_back_to_its_preset() {
    let (fit, preset, cal) = calibrate_preset("nvme-gen4", ["1", "1", "1"], "");
    let (DeviceConfig::Nvme(f), DeviceConfig::Nvme(p)) = (fit, preset) else {
        panic!("{}", cal.machine)
    };
    close("latency", f.latency.as_secs_f64(), p.latency.as_secs_f64());
    close(
        "overhead",
        f.overhead.as_secs_f64(),
        p.overhead.as_secs_f64(),
    );
    close("transfer_rate", f.transfer_rate, p.transfer_rate);
    assert_eq!((f.channels, f.queue_depth), (p.channels, p.queue_depth));
    assert!(cal.machine.contains("kind: nvme-gen4"), "{}", cal.machine);
}

/// `cryptsetup benchmark` as cryptsetup 2.x prints it (the layout of its `benchmark` action;
/// the figures are made up for the test).
const BENCH: &str = "# Tests are approximate using memory only (no storage IO).
PBKDF2-sha1      1872457 iterations per second for 256-bit key
PBKDF2-sha256    2418717 iterations per second for 256-bit key
argon2id     10 iterations, 1048576 memory, 4 parallel threads (CPUs) for 256-bit key (requested 2000 ms time)
#     Algorithm |       Key |      Encryption |      Decryption
        aes-cbc        128b      1234.5 MiB/s      4321.0 MiB/s
        aes-xts        256b      4100.2 MiB/s      4090.8 MiB/s
        aes-xts        512b      3300.6 MiB/s      3290.1 MiB/s
";

#[test]
fn cryptsetup_lscpu_and_uname_are_read_as_printed() {
    let c = host::cryptsetup("b.txt", BENCH, 512).unwrap();
    assert_eq!(c.line, 8);
    assert!((c.encrypt - 3300.6 * 1048576.0).abs() < 1.0);
    assert!((c.decrypt - 3290.1 * 1048576.0).abs() < 1.0);
    let c = host::cryptsetup("b.txt", BENCH, 256).unwrap();
    assert_eq!(c.line, 7);
    // Cut inside the aes-xts 512b line, and before it.
    let cut = &BENCH[..BENCH.len() - 14];
    let e = host::cryptsetup("b.txt", cut, 512).unwrap_err();
    assert_eq!(e.line, Some(8), "{e}");
    assert!(e.message.contains("truncated"), "{e}");
    let e = host::cryptsetup("b.txt", &BENCH[..BENCH.len() - 60], 512).unwrap_err();
    assert!(e.message.contains("no `aes-xts 512b` line"), "{e}");
    let e = host::cryptsetup("b.txt", "hello\n", 512).unwrap_err();
    assert!(e.message.contains("not `cryptsetup benchmark`"), "{e}");
    assert_eq!(
        host::cpus("l", "Architecture: x86_64\nCPU(s):   8\n").unwrap(),
        8
    );
    let cpuinfo = "processor\t: 0\nmodel name\t: x\n\nprocessor\t: 1\n";
    assert_eq!(host::cpus("c", cpuinfo).unwrap(), 2);
    assert_eq!(host::cpus("l", "CPU(s): lots\n").unwrap_err().line, Some(1));
    for (release, modelled) in [
        ("6.1.0-27-amd64\n", "5.9"),
        ("6.8.0-45-generic", "6.6"),
        ("6.18.44-fc-v1252", "6.12"),
        ("4.19.0-26-amd64", "4.19"),
        ("3.10.0-1160.el7.x86_64", "2.6.37"),
        ("2.6.32-754.el6.x86_64", "2.6.32"),
        ("2.6.18", "2.6.30"),
    ] {
        let (_, v) = host::kernel("u", release).unwrap();
        assert_eq!(v.name(), modelled, "{release}");
    }
    assert!(host::kernel("u", "Linux\n").is_err());
}

#[test]
fn what_calibration_cannot_use_is_refused_with_its_place() {
    let machine = "kernel: { version: \"6.12\" }\ndevice: { kind: sata-ssd }\n";
    let qd1 = measured(machine, "randread-qd1", "1", "");
    let seq = measured(machine, "seqread", "1", "");
    let deep = measured(machine, "randread-deep", "1", "");
    let run = |fio: Vec<Named>| {
        calibrate(&Inputs {
            fio,
            key_bits: 512,
            ..Inputs::default()
        })
        .unwrap_err()
    };
    // The sequential job twice (where the random QD1 one belongs): the second is refused.
    let e = run(vec![seq.clone(), deep.clone(), seq.clone()]);
    assert!(e.message.contains("a second"), "{e}");
    assert!(e.line.is_some() && e.field.is_some(), "{e}");
    // A missing job is named.
    let e = run(vec![seq.clone(), deep.clone()]);
    assert!(e.message.contains("random read at queue depth 1"), "{e}");
    // A job that is no calibration job.
    let odd = (
        qd1.0.clone(),
        qd1.1.replace("\"randread\"", "\"randwrite\""),
    );
    let e = run(vec![odd, seq.clone(), deep.clone()]);
    assert!(e.message.contains("not a calibration job"), "{e}");
    assert_eq!(e.file, "randread-qd1.json");
    // Truncated, not JSON, JSON that is not fio's.
    let cut = (qd1.0.clone(), qd1.1[..qd1.1.len() / 2].to_string());
    let e = run(vec![cut, seq.clone(), deep.clone()]);
    assert!(e.message.contains("truncated") && e.line.is_some(), "{e}");
    let e = run(vec![
        ("x.json".into(), "{\"jobs\": []}".into()),
        seq.clone(),
    ]);
    assert!(e.message.contains("not fio's"), "{e}");
    let e = run(vec![("x.json".into(), "no json here".into())]);
    assert_eq!(e.file, "x.json");
    // More jobs than a file may hold are counted before anything is kept.
    let many = format!(
        "{{\"fio version\": \"fio-3.33\", \"jobs\": [{}]}}",
        vec!["{}"; MAX_JOBS + 1].join(",")
    );
    let e = run(vec![("many.json".into(), many)]);
    assert!(e.message.contains("jobs"), "{e}");
}

#[test]
fn the_loop_device_measured_here_calibrates_with_its_residuals() {
    let dir = "calibrate/examples";
    let read = |f: &str| -> Named {
        let p = format!("{dir}/{f}");
        (p.clone(), std::fs::read_to_string(&p).unwrap())
    };
    let fio = ["randread-qd1", "randread-deep", "seqread", "seqwrite"]
        .map(|j| read(&format!("loop0-{j}.json")))
        .to_vec();
    let cal = calibrate(&Inputs {
        fio,
        lscpu: Some(read("loop0-lscpu.txt")),
        uname: Some(read("loop0-uname.txt")),
        key_bits: 512,
        ..Inputs::default()
    })
    .unwrap();
    let r = &cal.report;
    assert!(r.contains("Residuals") && r.contains("measured") && r.contains("predicted"));
    // Every job has its rows; the figures the fit is made to match (the QD1 mean, the deep
    // IOPS, the sequential read's rate) come back within 5%: the simulation's own noise over
    // half a second is well under 1%, so more means the fit failed. The tails and the write
    // are not asserted: they are what the residuals are printed to show.
    for (job, metric) in [
        ("randread-qd1", "mean lat"),
        ("randread-deep", "IOPS"),
        ("seqread", "IOPS"),
    ] {
        let at = r
            .find(&format!("  {job} ("))
            .unwrap_or_else(|| panic!("{job}: {r}"));
        let row = r[at..]
            .lines()
            .find(|l| l.trim_start().starts_with(metric))
            .unwrap();
        let err: f64 = row
            .split_whitespace()
            .last()
            .unwrap()
            .trim_end_matches('%')
            .parse()
            .unwrap();
        assert!(err.abs() < 5.0, "{job} {metric}: {row}\n{r}");
    }
    assert!(r.contains("  seqwrite ("), "{r}");
    assert!(cal.machine.contains("cpus: 2"), "{}", cal.machine);
    let DeviceConfig::Nvme(n) = device_of(&cal.machine) else {
        panic!("a loop device's reads take microseconds: flash, not a disk")
    };
    assert!(
        n.latency.as_ns() > 1_000 && n.latency.as_ns() < 10_000_000,
        "{n:?}"
    );
    assert!(n.transfer_rate > 50e6, "{n:?}");
}
