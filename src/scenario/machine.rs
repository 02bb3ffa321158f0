//! `machine:`: a named test machine whose CPUs, memory preset, disk kind and cipher fill the
//! fields a scenario leaves out (docs/model/device.md §5a).
//!
//! | machine | cpus | `memory.preset` | `device.kind` | `crypt.cipher` |
//! |---|---|---|---|---|
//! | `mel-phenom` | 2 | `mel-512mb` | `hdd7200` | `aes-2009` |
//! | `mel-p4` | 1 | `mel-512mb` | `hdd7200` | `aes-2009` |
//! | `desktop-2024` | 8 | none | `nvme-gen4` | `vaes-zen4` |
//! | `server-2024` | 8 | none | `nvme-gen4` | `vaes-spr` |
//!
//! A machine without a memory preset leaves `memory:` out: memory is unlimited unless the file
//! gives the section.
//!
//! The machine is expanded on the raw file, before validation: each value it supplies carries
//! the location of the `machine:` line, so an error in it points there, and every field the
//! file (or a variant's `set:`, or a `--set`) gives wins, field by field, as in a variant's
//! merge: a `device:` naming another `kind` replaces the machine's disk whole, one that only
//! overrides `queue_depth` keeps its `hdd7200`.

use super::check::Checker;
use super::crypt::RawCrypt;
use super::device::{DeviceKind, RawDevice};
use super::memory::{MemoryPresetName, RawMemory};
use super::schema::{Capped, Merge, Relocate, names};
use super::top::RawScenario;
use super::workload::{MAX_WORKLOADS, RawWorkload};
use super::{Error, ErrorKind, Source};
use crate::model::base::physics::Cipher;
use serde_saphyr::{Location, Spanned};
use std::path::{Path, PathBuf};

names! {
    /// `machine`: a test machine preset.
    pub enum MachineName {
        /// Mel Gorman's 2009 x86-64 box: an AMD Phenom with twice the P4's cores (2 assumed).
        MelPhenom = "mel-phenom",
        /// Mel Gorman's 2009 x86 box: a Pentium 4 (1 core assumed).
        MelP4 = "mel-p4",
        /// A 2024 desktop: an 8-core AMD Zen 4 (Ryzen 7 7700X class) and a PCIe 4.0 NVMe drive.
        Desktop2024 = "desktop-2024",
        /// A 2024 storage node: Intel Sapphire Rapids cores and a PCIe 4.0 NVMe drive.
        Server2024 = "server-2024",
    }
}

/// What a machine preset sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Machine {
    /// `cpus`.
    pub(crate) cpus: u32,
    /// `memory.preset` (none: the machine leaves `memory:` to the file).
    pub(crate) memory: Option<MemoryPresetName>,
    /// `device.kind`.
    pub(crate) device: DeviceKind,
    /// `crypt.cipher`.
    pub(crate) cipher: Cipher,
}

impl MachineName {
    /// The preset's values (docs/model/device.md §5a gives the sources).
    /// - Both of Mel's boxes booted with `mem=512MB` and wrote to a disk reporting NCQ depth 31
    ///   through plain dm-crypt; the x86-64 one has twice the cores.
    /// - `desktop-2024`: 8 CPUs, the cores of a Ryzen 7 7700X (Zen 4, 2022; SMT siblings not
    ///   counted, assumed), its kernel AES-XTS rate on 6.10+ (`vaes-zen4`) and the 990 PRO
    ///   (`nvme-gen4`).
    /// - `server-2024`: Sapphire Rapids' AES-XTS rate (`vaes-spr`) and a PCIe 4.0 drive, as the
    ///   PostgreSQL node of blog.nyman.re (2025-08-18: two 48-core Sapphire Rapids, twelve PCIe
    ///   4.0 Intel P5520; the drive modelled is the `nvme-gen4` preset, assumed of that class);
    ///   8 CPUs is assumed, the cores a scenario gives the storage path, not the node's 96.
    pub(crate) fn machine(self) -> Machine {
        let mel = |cpus| Machine {
            cpus,
            memory: Some(MemoryPresetName::Mel512),
            device: DeviceKind::Hdd7200,
            cipher: Cipher::Aes2009,
        };
        let today = |cipher| Machine {
            cpus: 8,
            memory: None,
            device: DeviceKind::NvmeGen4,
            cipher,
        };
        match self {
            MachineName::MelPhenom => mel(2),
            MachineName::MelP4 => mel(1),
            MachineName::Desktop2024 => today(Cipher::VaesZen4),
            MachineName::Server2024 => today(Cipher::VaesSpr),
        }
    }
}

/// `machine:` as written: a preset's name, or the path of a machine file (a name ending in
/// `.yaml` or `.yml`), relative to the scenario file. Read as text, so that an unknown name
/// is refused at its own line with the presets listed ([`expand`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(transparent)]
pub struct MachineRef(pub String);

/// Whether `machine:` names a file rather than a preset: it ends in `.yaml` or `.yml`.
pub fn is_machine_file_name(text: &str) -> bool {
    let lower = text.trim().to_ascii_lowercase();
    lower.ends_with(".yaml") || lower.ends_with(".yml")
}

/// The top-level fields a machine file may hold: the hardware and the kernel, never the
/// experiment (workloads, policies, run length, variants).
pub const MACHINE_FILE_FIELDS: &[&str] = &["cpus", "kernel", "device", "crypt", "memory"];

/// The scenario `raw` with its `machine:` (if any) expanded under it: the machine's values, at
/// the `machine:` line's location, then `raw` merged over them. A machine file is read and
/// validated on its own first ([`machine_file`]), so an error inside it names its own line.
pub(crate) fn expand(c: &Checker, raw: &RawScenario) -> Result<Option<RawScenario>, Error> {
    let Some(name) = raw.machine.as_ref() else {
        return Ok(None);
    };
    let l = name.referenced;
    let text = name.value.0.as_str();
    let mut base = if is_machine_file_name(text) {
        let mut m = machine_file(c, text, l)?;
        m.relocate(l);
        m
    } else {
        match MachineName::NAMES.iter().position(|n| *n == text) {
            Some(i) => preset(MachineName::ALL[i].machine(), l),
            None => {
                let list = MachineName::NAMES.join(", ");
                let hint = match super::suggestion(text, MachineName::NAMES) {
                    Some(s) => format!("did you mean `{s}`? valid machines: {list}"),
                    None => format!("valid machines: {list}"),
                };
                return Err(c.at("machine", l).unknown(
                    format!("unknown machine `{}`", super::shorten(text)),
                    format!("{hint}; or a machine file (a path ending in .yaml)"),
                ));
            }
        }
    };
    base.merge(raw.clone());
    Ok(Some(base))
}

/// A preset's fields as a partial scenario written at `l`.
fn preset(m: Machine, l: Location) -> RawScenario {
    RawScenario {
        cpus: Some(here(m.cpus, l)),
        device: Some(here(
            RawDevice {
                kind: Some(here(m.device, l)),
                ..RawDevice::default()
            },
            l,
        )),
        crypt: Some(here(
            RawCrypt {
                cipher: Some(here(m.cipher, l)),
                ..RawCrypt::default()
            },
            l,
        )),
        memory: m.memory.map(|preset| {
            here(
                RawMemory {
                    preset: Some(here(preset, l)),
                    ..RawMemory::default()
                },
                l,
            )
        }),
        ..RawScenario::default()
    }
}

/// The machine file `path` names (relative to the scenario file `c` reads), read and checked
/// on its own. A file that cannot be read is an error at the `machine:` line `l`.
fn machine_file(c: &Checker, path: &str, l: Location) -> Result<RawScenario, Error> {
    let full = beside(c.src.name, path);
    let shown = full.display().to_string();
    let text = super::read(&full, &shown).map_err(|e| {
        c.at("machine", l).bad_value(
            format!("cannot read the machine file {shown}: {}", e.message()),
            "give the path of a machine file written by `qsim calibrate` (relative to this \
             scenario file), or a preset: "
                .to_string()
                + &MachineName::NAMES.join(", "),
        )
    })?;
    load_machine_file(&shown, &text)
}

/// `path` as written in the scenario `scenario` (a file name as shown): relative paths start
/// from the scenario file's directory.
fn beside(scenario: &str, path: &str) -> PathBuf {
    let p = Path::new(path.trim());
    if p.is_absolute() {
        return p.to_path_buf();
    }
    match Path::new(scenario).parent() {
        Some(dir) if !scenario.starts_with('<') => dir.join(p),
        _ => p.to_path_buf(),
    }
}

/// A machine file's text (`shown` names it in errors), parsed and validated standalone: only
/// [`MACHINE_FILE_FIELDS`], a `device:`, no `kernel.patches` or `memory.atomic` (choices of
/// the experiment, not the machine), and every value valid as a scenario's would be (checked
/// with a placeholder workload), each error at the machine file's own line.
pub fn load_machine_file(shown: &str, text: &str) -> Result<RawScenario, Error> {
    if let Some(e) = super::nul_error(shown, text) {
        return Err(e);
    }
    let src = Source::new(shown, text);
    if src.outline.empty {
        return Err(Error::whole_file(
            ErrorKind::Empty,
            shown,
            "the machine file is empty".to_string(),
            Some(MACHINE_FILE_HINT.to_string()),
        ));
    }
    let raw: Spanned<RawScenario> =
        serde_saphyr::from_str_with_options(text, super::yaml_options())
            .map_err(|e| src.yaml_error(&e))?;
    let raw = raw.value;
    let c = Checker { src: &src };
    only_machine_fields(&c, &raw)?;
    let mut probe = raw.clone();
    probe.workloads = Some(placeholder_workload());
    let stem = Path::new(shown)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("machine");
    super::top::scenario(&c, &probe, stem)?;
    Ok(raw)
}

/// How a machine file looks.
const MACHINE_FILE_HINT: &str = "a machine file holds only cpus, kernel, device, crypt and \
                                 memory, e.g. `cpus: 4`, `device: { kind: sata-ssd }`; \
                                 `qsim calibrate` writes one from measurements";

/// Refuses what a machine file may not hold, at its own line.
fn only_machine_fields(c: &Checker, raw: &RawScenario) -> Result<(), Error> {
    let mut given = raw.present();
    if let Some(n) = &raw.name {
        given.push(("name", n.referenced));
    }
    if let Some((field, at)) = given.iter().find(|(f, _)| !MACHINE_FILE_FIELDS.contains(f)) {
        return Err(c.at(field, *at).bad_value(
            format!("`{field}` does not belong in a machine file"),
            format!(
                "a machine file holds only {}; put `{field}` in the scenario that names this \
                 machine file",
                MACHINE_FILE_FIELDS.join(", ")
            ),
        ));
    }
    if raw.device.is_none() {
        return Err(c.at("device", None::<Location>).missing(
            "the machine file has no device",
            format!(
                "add `device:` with a kind ({}) and its fields",
                DeviceKind::NAMES.join(", ")
            ),
        ));
    }
    let patches = raw.kernel.as_ref().and_then(|k| k.value.patches.as_ref());
    if let Some(p) = patches {
        return Err(c.at("kernel.patches", p).bad_value(
            "kernel patches are a choice of the experiment, not of the machine",
            "give `kernel.patches` in the scenario (or a variant) instead",
        ));
    }
    let atomic = raw.memory.as_ref().and_then(|m| m.value.atomic.as_ref());
    if let Some(a) = atomic {
        return Err(c.at("memory.atomic", a).bad_value(
            "GFP_ATOMIC streams are part of the load, not of the machine",
            "give `memory.atomic` in the scenario instead",
        ));
    }
    Ok(())
}

/// The one small workload a machine file is checked with.
fn placeholder_workload() -> Spanned<Capped<Spanned<RawWorkload>, MAX_WORKLOADS>> {
    let raw: RawScenario =
        serde_saphyr::from_str("workloads: [{ kind: fio, bs: 4KiB, size: 4KiB }]")
            .expect("the placeholder workload parses");
    raw.workloads.expect("it has workloads")
}

/// `value` as if written at `l`.
fn here<T>(value: T, l: Location) -> Spanned<T> {
    Spanned::new(value, l, l)
}

#[cfg(test)]
mod tests {
    use crate::scenario::testutil::ok;
    use crate::scenario::{DeviceConfig, ErrorKind, load_str};

    const JOB: &str = "workloads: [{ kind: fio }]\n";

    #[test]
    fn a_machine_fills_what_the_file_leaves_out() {
        let s = ok(&format!("machine: mel-phenom\n{JOB}"));
        assert_eq!(s.cpus, 2);
        assert_eq!(s.crypt.cipher, "aes-2009");
        assert!(
            matches!(&s.device, DeviceConfig::Hdd(h) if h.preset.starts_with("hdd7200") && h.queue_depth == 31)
        );
        assert_eq!(
            s.memory.as_ref().expect("the machine's memory").ram,
            512 << 20
        );
        assert_eq!(ok(&format!("machine: mel-p4\n{JOB}")).cpus, 1);
    }

    #[test]
    fn the_files_fields_override_the_machine_field_by_field() {
        let s = ok(&format!(
            "machine: mel-p4\ncpus: 4\ncrypt: {{ cipher: aes-ni }}\n\
             device: {{ queue_depth: 8 }}\nmemory: {{ ram: 1GiB }}\n{JOB}"
        ));
        assert_eq!(s.cpus, 4);
        assert_eq!(s.crypt.cipher, "aes-ni");
        assert!(
            matches!(&s.device, DeviceConfig::Hdd(h) if h.queue_depth == 8 && h.preset.starts_with("hdd7200"))
        );
        assert_eq!(s.memory.as_ref().unwrap().ram, 1 << 30);
        // Another kind of disk replaces the machine's whole.
        let s = ok(&format!("machine: mel-p4\ndevice: {{ kind: nvme }}\n{JOB}"));
        assert!(matches!(s.device, DeviceConfig::Nvme(_)));
        // A variant may pick the other machine; the file's explicit fields still win.
        let s = ok(&format!(
            "machine: mel-phenom\n{JOB}variants:\n  - {{ name: p4, set: {{ machine: mel-p4 }} }}\n"
        ));
        assert_eq!((s.cpus, s.variants[0].scenario.cpus), (2, 1));
    }

    #[test]
    fn an_unknown_machine_is_named_with_the_known_ones() {
        let e = load_str("t.yaml", &format!("{JOB}machine: mel-pc\n")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnknownName);
        assert_eq!((e.line(), e.path()), (Some(2), Some("machine")));
        assert!(e.hint().unwrap().contains("machine file"), "{e}");
        assert!(
            e.hint()
                .unwrap()
                .contains("mel-phenom, mel-p4, desktop-2024, server-2024"),
            "{e}"
        );
    }

    #[test]
    fn todays_machines_bring_their_cipher_and_nvme_and_no_memory() {
        for (name, cipher) in [("desktop-2024", "vaes-zen4"), ("server-2024", "vaes-spr")] {
            let s = ok(&format!("machine: {name}\n{JOB}"));
            assert_eq!((s.cpus, s.crypt.cipher.as_str()), (8, cipher), "{name}");
            assert!(
                matches!(&s.device, DeviceConfig::Nvme(n) if n.preset == "nvme-gen4"),
                "{name}"
            );
            assert!(s.memory.is_none(), "{name}: memory stays unlimited");
            // The file's own memory section and CPU count still apply.
            let s = ok(&format!(
                "machine: {name}\ncpus: 4\nmemory: {{ ram: 1GiB }}\n{JOB}"
            ));
            assert_eq!((s.cpus, s.memory.unwrap().ram), (4, 1 << 30), "{name}");
        }
    }

    /// A directory of its own for one test's files, removed when the test ends (pass or fail).
    struct Dir(std::path::PathBuf);

    impl std::ops::Deref for Dir {
        type Target = std::path::Path;
        fn deref(&self) -> &std::path::Path {
            &self.0
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn dir(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("qsim-machine-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    const BOX: &str = "# test machine\ncpus: 4\nkernel: { version: \"6.6\" }\n\
                       device:\n  kind: sata-ssd\n  latency: 70us\n  transfer_rate: 500MB/s\n\
                       crypt: { encrypt_rate: 2000MiB/s, decrypt_rate: 2100MiB/s }\n";

    #[test]
    fn a_machine_file_is_merged_as_a_preset_is() {
        let d = dir("merge");
        std::fs::write(d.join("box.yaml"), BOX).unwrap();
        let scenario = d.join("s.yaml");
        let text = format!("machine: box.yaml\ndevice: {{ queue_depth: 8 }}\n{JOB}");
        std::fs::write(&scenario, &text).unwrap();
        let s = crate::scenario::load(&scenario).unwrap();
        assert_eq!(s.cpus, 4);
        assert_eq!(s.kernel.version.name(), "6.6");
        let DeviceConfig::Nvme(n) = &s.device else {
            panic!("an SSD")
        };
        assert_eq!((n.preset.as_str(), n.queue_depth), ("sata-ssd", 8));
        assert_eq!(n.latency.as_ns(), 70_000);
        assert!((n.transfer_rate - 500e6).abs() < 1.0);
        assert!((s.crypt.encrypt_rate - 2000.0 * 1048576.0).abs() < 1.0);
        // `qsim check` names the machine file as the origin of what it supplied.
        let shown = crate::scenario::describe(&s);
        assert!(
            shown.contains("\nmachine                 box.yaml (a machine file"),
            "{shown}"
        );
        // The scenario's own field wins; another kind replaces the machine's disk whole.
        let text = format!("machine: box.yaml\ncpus: 2\ndevice: {{ kind: hdd7200 }}\n{JOB}");
        std::fs::write(&scenario, &text).unwrap();
        let s = crate::scenario::load(&scenario).unwrap();
        assert_eq!(s.cpus, 2);
        assert!(matches!(&s.device, DeviceConfig::Hdd(h) if h.preset == "hdd7200"));
    }

    #[test]
    fn errors_inside_a_machine_file_name_its_line() {
        let d = dir("errors");
        let scenario = d.join("s.yaml");
        std::fs::write(&scenario, format!("{JOB}machine: box.yaml\n")).unwrap();
        let cases = [
            (
                "cpus: 2\ndevice:\n  kind: sata-ssd\n  latency: 70\n",
                4,
                "device.latency",
            ),
            (
                "cpus: 2\ndevice: { kind: nvme }\nworkloads: []\n",
                3,
                "workloads",
            ),
            ("cpus: 0\ndevice: { kind: nvme }\n", 1, "cpus"),
            (
                "device: { kind: nvme }\nkernel: { patches: [5] }\n",
                2,
                "kernel.patches",
            ),
            (
                "device: { kind: nvme, seek_min: 2ms }\n",
                1,
                "device.seek_min",
            ),
        ];
        for (machine, line, path) in cases {
            std::fs::write(d.join("box.yaml"), machine).unwrap();
            let e = crate::scenario::load(&scenario).unwrap_err();
            assert!(e.to_string().contains("box.yaml:"), "{e}");
            assert!(!e.to_string().contains("s.yaml"), "{e}");
            assert_eq!((e.line(), e.path()), (Some(line), Some(path)), "{e}");
            assert!(e.hint().is_some(), "{e}");
        }
        std::fs::write(d.join("box.yaml"), "cpus: 2\n").unwrap();
        let e = crate::scenario::load(&scenario).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Missing, "{e}");
        // A missing machine file is an error at the scenario's `machine:` line.
        std::fs::remove_file(d.join("box.yaml")).unwrap();
        let e = crate::scenario::load(&scenario).unwrap_err();
        assert_eq!((e.line(), e.path()), (Some(2), Some("machine")), "{e}");
        assert!(e.to_string().contains("s.yaml"), "{e}");
    }
}
