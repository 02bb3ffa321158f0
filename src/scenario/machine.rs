//! `machine:`: a named test machine whose CPUs, memory preset, disk kind and cipher fill the
//! fields a scenario leaves out (docs/model/device.md §5a).
//!
//! | machine | cpus | `memory.preset` | `device.kind` | `crypt.cipher` |
//! |---|---|---|---|---|
//! | `mel-phenom` | 2 | `mel-512mb` | `hdd7200` | `aes-2009` |
//! | `mel-p4` | 1 | `mel-512mb` | `hdd7200` | `aes-2009` |
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
    }
}

/// What a machine preset sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Machine {
    /// `cpus`.
    pub(crate) cpus: u32,
    /// `memory.preset`.
    pub(crate) memory: MemoryPresetName,
    /// `device.kind`.
    pub(crate) device: DeviceKind,
    /// `crypt.cipher`.
    pub(crate) cipher: Cipher,
}

impl MachineName {
    /// The preset's values. Both of Mel's boxes booted with `mem=512MB` and wrote to a disk
    /// reporting NCQ depth 31 through plain dm-crypt; the x86-64 one has twice the cores.
    pub(crate) fn machine(self) -> Machine {
        let mel = |cpus| Machine {
            cpus,
            memory: MemoryPresetName::Mel512,
            device: DeviceKind::Hdd7200,
            cipher: Cipher::Aes2009,
        };
        match self {
            MachineName::MelPhenom => mel(2),
            MachineName::MelP4 => mel(1),
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
        memory: Some(here(
            RawMemory {
                preset: Some(here(m.memory, l)),
                ..RawMemory::default()
            },
            l,
        )),
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
        assert!(e.hint().unwrap().contains("mel-phenom, mel-p4"), "{e}");
    }
}
