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

use super::crypt::RawCrypt;
use super::device::{DeviceKind, RawDevice};
use super::memory::{MemoryPresetName, RawMemory};
use super::schema::{Merge, names};
use super::top::RawScenario;
use crate::model::base::physics::Cipher;
use serde_saphyr::{Location, Spanned};

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

/// The scenario `raw` with its `machine:` (if any) expanded under it: the machine's values, at
/// the `machine:` line's location, then `raw` merged over them.
pub(crate) fn expand(raw: &RawScenario) -> Option<RawScenario> {
    let name = raw.machine.as_ref()?;
    let m = name.value.machine();
    let l = name.referenced;
    let mut base = RawScenario {
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
    };
    base.merge(raw.clone());
    Some(base)
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
}
