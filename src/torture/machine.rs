//! The machine files of the torture run: one small random machine file per seed, in the form
//! `qsim calibrate` writes (cpus, a kernel version, a disk of one of three kinds with fitted
//! fields, sometimes the cipher's two rates), valid or damaged (a field another kind owns, a
//! number without its unit, a negative count, a section that belongs to the experiment, no
//! disk at all, text that is not YAML). A valid file must load under a scenario's `machine:`
//! with every value it gives arriving in the resolved scenario, and the scenario must run with
//! its invariants holding; a damaged one must be refused with an error that names the machine
//! file and the line, never a panic.

use crate::model::base::config::DeviceConfig;
use rand::RngExt;

/// One drawn machine file: its text, whether it is valid, and the values it sets.
#[derive(Debug, Clone)]
pub struct MachineCase {
    /// The file's text.
    pub text: String,
    /// No damage was drawn.
    pub valid: bool,
    /// `cpus`.
    pub cpus: u32,
    /// `kernel.version`.
    pub version: &'static str,
    /// `device.transfer_rate` in bytes/s.
    pub transfer_rate: f64,
    /// `crypt.encrypt_rate` in bytes/s, when the file gives the cipher.
    pub encrypt_rate: Option<f64>,
}

/// The damage a case may carry, drawn in this order.
const DAMAGE: [&str; 6] = [
    "  seek_min: 2ms\n",
    "  latency: 70\n",
    "cpus: -3\n",
    "workloads: []\n",
    "kernel: { patches: [dm-crypt-unplug] }\n",
    "device: [\n",
];

/// The machine file of `seed`.
pub fn machine_file(seed: u64) -> MachineCase {
    let mut rng = crate::engine::RngStreams::new(seed, 0).stream("torture/machine");
    let cpus = rng.random_range(1..=16u32);
    let version = ["2.6.32", "5.9", "6.12"][rng.random_range(0..3usize)];
    let kind = rng.random_range(0..3u32);
    // Spinning disks stream 50 to 300 MB/s; flash up to a PCIe 4.0 drive's 7 GB/s.
    let mb_s = if kind == 2 {
        rng.random_range(50..=300u32)
    } else {
        rng.random_range(50..=7000u32)
    };
    let mut text = format!(
        "# qsim machine file (torture seed {seed})\ncpus: {cpus}\nkernel: {{ version: \"{version}\" }}\n"
    );
    let device = match kind {
        0 => format!(
            "device:\n  kind: nvme-gen4\n  latency: {}ns\n  overhead: {}ns\n  transfer_rate: {mb_s}MB/s\n",
            rng.random_range(5_000..200_000u32),
            rng.random_range(100..10_000u32)
        ),
        1 => format!(
            "device:\n  kind: sata-ssd\n  latency: {}us\n  transfer_rate: {mb_s}MB/s\n",
            rng.random_range(20..200u32)
        ),
        _ => format!(
            "device:\n  kind: hdd7200\n  seek_min: {}us\n  seek_full: {}ms\n  transfer_rate: {mb_s}MB/s\n",
            rng.random_range(500..3000u32),
            rng.random_range(10..25u32)
        ),
    };
    let damage = rng
        .random_bool(0.3)
        .then(|| DAMAGE[rng.random_range(0..DAMAGE.len())]);
    let encrypt = rng
        .random_bool(0.5)
        .then(|| rng.random_range(50..=10_000u32));
    match damage {
        // A field of another kind, or a number without its unit: inside the device section.
        Some(d) if d.starts_with("  ") => {
            let field = if kind == 2 && d.contains("seek_min") {
                "  latency: 70us\n"
            } else {
                d
            };
            text.push_str(&device);
            text.push_str(field);
        }
        Some("device: [\n") => text.push_str("device: [\n  kind: nvme\n"),
        Some(d) => {
            text.push_str(&device);
            text.push_str(d);
        }
        None => text.push_str(&device),
    }
    if let Some(e) = encrypt {
        text.push_str(&format!(
            "crypt: {{ encrypt_rate: {e}MB/s, decrypt_rate: {}MB/s }}\n",
            e + 1
        ));
    }
    MachineCase {
        text,
        valid: damage.is_none(),
        cpus,
        version,
        transfer_rate: f64::from(mb_s) * 1e6,
        encrypt_rate: encrypt.map(|e| f64::from(e) * 1e6),
    }
}

/// Checks the machine file of `seed` in the folder `dir` (see the module docs).
pub(super) fn check_case(seed: u64, dir: &std::path::Path) -> Result<(), String> {
    let case = machine_file(seed);
    std::fs::write(dir.join("box.yaml"), &case.text).map_err(|e| e.to_string())?;
    let scenario = dir.join("uses-box.yaml");
    // 2.6.x runs its single kcryptd; later kernels their own dm-crypt.
    let crypt = if case.version.starts_with("2.6") {
        "fifo"
    } else {
        "dm-crypt"
    };
    let yaml = format!(
        "machine: box.yaml\npolicies: [none, {crypt}]\nduration: 30ms\nwarmup: 0s\n\
         replications: 1\nworkloads:\n  - {{ kind: fio, rw: randrw, bs: 4k, iodepth: 4 }}\n"
    );
    std::fs::write(&scenario, yaml).map_err(|e| e.to_string())?;
    let at = |e: &dyn std::fmt::Display| format!("machine file:\n{}\n{e}", case.text);
    match (case.valid, crate::scenario::load(&scenario)) {
        (true, Ok(s)) => {
            if s.cpus != case.cpus {
                return Err(at(&format!("cpus {} arrived as {}", case.cpus, s.cpus)));
            }
            let rate = match &s.device {
                DeviceConfig::Hdd(h) => h.transfer_rate,
                DeviceConfig::Nvme(n) => n.transfer_rate,
                DeviceConfig::Generic(_) => f64::NAN,
            };
            if (rate - case.transfer_rate).abs() > 1.0 {
                return Err(at(&format!("transfer_rate arrived as {rate}")));
            }
            if let Some(e) = case.encrypt_rate
                && (s.crypt.encrypt_rate - e).abs() > 1.0
            {
                return Err(at(&format!(
                    "encrypt_rate arrived as {}",
                    s.crypt.encrypt_rate
                )));
            }
            let results = crate::experiment::run_all(&s, 1).map_err(|e| at(&e))?;
            if results.is_empty() {
                return Err(at(&"no run"));
            }
            Ok(())
        }
        (true, Err(e)) => Err(at(&format!("a valid machine file was refused: {e}"))),
        (false, Ok(_)) => Err(at(&"a damaged machine file was accepted")),
        (false, Err(e)) => {
            let shown = e.to_string();
            if shown.contains("box.yaml:") && e.line().is_some() && e.hint().is_some() {
                Ok(())
            } else {
                Err(at(&format!(
                    "a refusal that does not locate the damage: {e}"
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drawn_files_are_valid_and_damaged_and_each_is_judged() {
        let dir = std::env::temp_dir().join(format!("qsim-torture-machine-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (mut valid, mut damaged) = (0, 0);
        for seed in 0..40 {
            let case = machine_file(seed);
            if case.valid {
                valid += 1;
            } else {
                damaged += 1;
            }
            check_case(seed, &dir).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        }
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            valid > 10 && damaged > 3,
            "{valid} valid, {damaged} damaged"
        );
    }
}
