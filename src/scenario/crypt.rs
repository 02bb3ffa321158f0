//! `crypt:`: the cipher and its costs, the crypto engine and the unplug switch; and its
//! `qsim check` rows. The presets' rates are [`Cipher::rates`] in the model's physics.
//!
//! | cipher | rates |
//! |---|---|
//! | `aes-2009` | 60 MB/s both ways |
//! | `aes-ni` | 1432 MiB/s encrypt, 1387 MiB/s decrypt |
//! | `vaes` | 9588 MB/s both ways (Zen 4's `xts-aes-vaes-avx2`) |
//! | `vaes-zen4` | 10868 MB/s both ways (Zen 4's `xts-aes-vaes-avx10_512`, the 6.10+ kernel's pick) |
//! | `vaes-spr` | 12176 MB/s both ways (Sapphire Rapids' `xts-aes-vaes-avx10_512`) |
//! | `null` | infinite |
//!
//! A cipher with overridden rates is reported as `<cipher> (custom rates)`.

use super::Error;
use super::check::{Checker, Zero, at, loc, val};
use super::describe::{Rows, on_off, row};
use super::distribution::{RawDistribution, distribution};
use super::kernel::patch_conflict;
use super::schema::{Field, names, raw_section};
use super::types::*;
use super::units::{Duration, Rate, Size, format_bandwidth, format_bytes};
use super::workload::MAX_REQUEST_BYTES;
use crate::engine::SimDuration;
use crate::model::base::physics::{
    Cipher, G9_2020_HOP_COST, G9_2020_SUBMIT_COST, HOP_COST, SUBMIT_COST, VM2020_HOP_COST,
    VM2020_SUBMIT_COST, crypto_cost, moments,
};
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use serde_saphyr::{Location, Spanned};
use std::fmt;

/// `crypt.cipher`, read by hand because the preset `null` is also YAML's null: a derived
/// `Option` would silently turn `cipher: null` into "use the default".
impl<'de> Deserialize<'de> for Cipher {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Cipher;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a cipher name ({})", Cipher::NAMES.join(", "))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Cipher, E> {
                Ok(Cipher::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<Cipher, E> {
                Ok(Cipher::Null)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Cipher, E> {
                Cipher::from_name(v).ok_or_else(|| E::unknown_variant(v, Cipher::NAMES))
            }
        }
        d.deserialize_any(V)
    }
}

/// Reads a present `cipher:` (even `null`) as `Some`; an absent one stays `None` via `default`.
fn present_cipher<'de, D: Deserializer<'de>>(d: D) -> Result<Field<Cipher>, D::Error> {
    Spanned::<Cipher>::deserialize(d).map(Some)
}

names! {
    /// `crypt.engine`.
    pub enum EngineName {
        /// CPU cipher in the calling thread.
        Sync = "sync",
        /// Asynchronous engine with its own queue.
        Async = "async",
    }
}

raw_section! {
    /// `crypt:`.
    pub struct RawCrypt {
        /// Cipher preset.
        #[serde(default, deserialize_with = "present_cipher")]
        [value] cipher: Cipher,
        /// Encryption rate override.
        [value] encrypt_rate: Rate,
        /// Decryption rate override.
        [value] decrypt_rate: Rate,
        /// Cost per 512-byte crypto request.
        [value] per_sector_cost: Duration,
        /// Cost per workqueue hop.
        [value] hop_cost: Duration,
        /// Crypto work per request from a distribution, replacing bytes / rate (textbook checks).
        [map] cost: RawDistribution,
        /// sync | async.
        [value] engine: EngineName,
        /// Async engine queue limit.
        [value] async_queue_limit: u32,
        /// Async engine rate.
        [value] async_rate: Rate,
        /// Unplug after kcryptd submits.
        [value] unplug_after_submit: bool,
        /// one | mason-v3.
        [value] io_queues: IoQueuesName,
        /// The machine whose workqueue hop `hop_cost` (and `submit_cost`) defaults to.
        [value] host: HostName,
        /// CPU time a fio job's process spends per I/O before submitting it.
        [value] submit_cost: Duration,
        /// CPU time a thread spends submitting one dm-crypt clone to the disk.
        [value] clone_submit_cost: Duration,
        /// dm-crypt's `max_read_size` module parameter (6.11+).
        [value] max_read_size: Size,
        /// dm-crypt's `max_write_size` module parameter (6.11+).
        [value] max_write_size: Size,
    }
}

names! {
    /// `crypt.io_queues`.
    pub enum IoQueuesName {
        /// 2.6.32: kcryptd_io alone.
        One = "one",
        /// Chris Mason's sync and async io queues (patch 6 as posted).
        MasonV3 = "mason-v3",
    }
}

names! {
    /// `crypt.host`: a machine preset for the cost of a workqueue hop and of a process's
    /// submission path.
    pub enum HostName {
        /// The default: 10 µs a hop (assumed), no submission cost.
        BareMetal = "bare-metal",
        /// Cloudflare's 2020 4-vCPU VirtualBox VM (calibrated, docs/model/crypt.md).
        Vm2020 = "vm-2020",
        /// Cloudflare's 2020 bare-metal server of the blog post (calibrated, docs/model/crypt.md).
        G92020 = "g9-2020",
    }
}

/// The accepted range of each whole-number field of `crypt:` ([`super::check::int_range`]).
pub(crate) const INT_RANGES: &[(&str, u64, u64)] = &[("crypt.async_queue_limit", 1, 1_000_000)];

/// `crypt:` (all defaults when absent); `patches` are the kernel's, for `dm-crypt-unplug`
/// (patch 6), which sets `io_queues: mason-v3`.
pub(crate) fn crypt(
    c: &Checker,
    r: Option<&RawCrypt>,
    patches: &[(String, Location)],
    kernel: &KernelConfig,
) -> Result<CryptConfig, Error> {
    let empty = RawCrypt::default();
    let r = r.unwrap_or(&empty);
    let cipher = val(&r.cipher).unwrap_or(Cipher::Aes2009);
    let (mut encrypt_rate, mut decrypt_rate) = cipher.rates();
    if let Some(s) = &r.encrypt_rate {
        encrypt_rate = c.bandwidth(s, "crypt.encrypt_rate")?;
    }
    if let Some(s) = &r.decrypt_rate {
        decrypt_rate = c.bandwidth(s, "crypt.decrypt_rate")?;
    }
    let custom = r.encrypt_rate.is_some() || r.decrypt_rate.is_some();
    let unplug_patch = patches
        .iter()
        .find(|(p, _)| p == super::kernel::CRYPT_PATCH)
        .map(|(_, l)| *l);
    let io_queues = match (&r.io_queues, unplug_patch) {
        (Some(s), Some(pl)) if s.value == IoQueuesName::One => {
            return Err(patch_conflict(
                c,
                patches,
                super::kernel::CRYPT_PATCH,
                pl,
                "crypt.io_queues",
                s.referenced,
            ));
        }
        (_, Some(_)) => IoQueues::MasonV3,
        (s, None) => match val(s).unwrap_or(IoQueuesName::One) {
            IoQueuesName::One => IoQueues::One,
            IoQueuesName::MasonV3 => IoQueues::MasonV3,
        },
    };
    let unplug_after_submit = val(&r.unplug_after_submit).unwrap_or(false);
    let engine = engine(c, r, encrypt_rate)?;
    Ok(CryptConfig {
        cipher: if custom {
            format!("{} (custom rates)", cipher.name())
        } else {
            cipher.name().to_string()
        },
        encrypt_rate,
        decrypt_rate,
        per_sector_cost: free_cost(c, &r.per_sector_cost, "per_sector_cost")?,
        hop_cost: host_cost(
            c,
            r,
            "hop_cost",
            &r.hop_cost,
            [HOP_COST, VM2020_HOP_COST, G9_2020_HOP_COST],
        )?,
        submit_cost: host_cost(
            c,
            r,
            "submit_cost",
            &r.submit_cost,
            [SUBMIT_COST, VM2020_SUBMIT_COST, G9_2020_SUBMIT_COST],
        )?,
        clone_submit_cost: free_cost(c, &r.clone_submit_cost, "clone_submit_cost")?,
        cost: match &r.cost {
            Some(d) => Some(distribution(c, d, "crypt.cost")?),
            None => None,
        },
        engine,
        unplug_after_submit,
        io_queues,
        max_read_size: max_size(c, &r.max_read_size, "max_read_size", kernel)?,
        max_write_size: max_size(c, &r.max_write_size, "max_write_size", kernel)?,
    })
}

/// `crypt.<name>`: a CPU cost that defaults to none whatever the host.
fn free_cost(c: &Checker, f: &Field<Duration>, name: &str) -> Result<SimDuration, Error> {
    c.dur(f, &at("crypt", name), SimDuration::ZERO, Zero::Allowed)
}

/// `crypt.max_read_size` / `max_write_size`: dm-crypt's module parameters, which exist from
/// 6.11; 0 (or absent) means the kernel's 128 KiB; otherwise a multiple of 512 bytes.
fn max_size(c: &Checker, f: &Field<Size>, name: &str, kernel: &KernelConfig) -> Result<u32, Error> {
    let Some(s) = f else {
        return Ok(0);
    };
    let path = at("crypt", name);
    if !kernel.version.dmcrypt().is_some_and(|r| r.split_bios) {
        return Err(c.at(&path, s).conflict(
            format!(
                "dm-crypt's `{name}` parameter appeared in 6.11; kernel.version is {}",
                kernel.version.name()
            ),
            "remove it, or set kernel.version to 6.11 or later",
        ));
    }
    let v = s.value.0;
    if v % 512 != 0 || v > u64::from(u32::MAX / 2) {
        return Err(c.at(&path, s).bad_value(
            format!("{name} must be a multiple of 512 bytes up to 1 GiB, got {v} B"),
            "write e.g. 128KiB (the default), 256KiB or 1MiB; 0 means the default",
        ));
    }
    Ok(v as u32)
}

/// `crypt.<name>` (`hop_cost` or `submit_cost`), defaulting to the `host`'s: `presets` holds
/// bare metal's, `vm-2020`'s and `g9-2020`'s ([`HOP_COST`], [`VM2020_HOP_COST`],
/// [`G9_2020_HOP_COST`]; [`SUBMIT_COST`], [`VM2020_SUBMIT_COST`], [`G9_2020_SUBMIT_COST`]);
/// giving both the field and `host` is refused.
fn host_cost(
    c: &Checker,
    r: &RawCrypt,
    name: &str,
    field: &Field<Duration>,
    presets: [SimDuration; 3],
) -> Result<SimDuration, Error> {
    let host = val(&r.host).unwrap_or(HostName::BareMetal);
    let path = at("crypt", name);
    if let (Some(h), Some(_)) = (&r.host, field) {
        return Err(c.at(&path, loc(field)).conflict(
            format!(
                "`{name}` overrides the {} that `host: {}` (line {}) sets",
                name.replace('_', " "),
                host.name(),
                h.referenced.line()
            ),
            format!("give either `host` or `{name}`"),
        ));
    }
    let preset = match host {
        HostName::BareMetal => presets[0],
        HostName::Vm2020 => presets[1],
        HostName::G92020 => presets[2],
    };
    c.dur(field, &path, preset, Zero::Allowed)
}

/// `crypt.engine` and the fields only the async engine takes (its rate defaults to the
/// cipher's encryption rate).
fn engine(c: &Checker, r: &RawCrypt, encrypt_rate: f64) -> Result<CryptoEngine, Error> {
    Ok(match val(&r.engine).unwrap_or(EngineName::Sync) {
        EngineName::Sync => {
            let stray = [
                ("async_queue_limit", loc(&r.async_queue_limit)),
                ("async_rate", loc(&r.async_rate)),
            ];
            if let Some((name, l)) = stray.iter().find(|(_, l)| l.is_some()) {
                return Err(c.at(&at("crypt", name), *l).conflict(
                    format!("`{name}` applies only to engine: async"),
                    "add `engine: async`, or remove it",
                ));
            }
            CryptoEngine::Sync
        }
        EngineName::Async => CryptoEngine::Async {
            queue_limit: c.int(&r.async_queue_limit, "crypt.async_queue_limit", 100)?,
            rate: match &r.async_rate {
                Some(s) => c.bandwidth(s, "crypt.async_rate")?,
                None => encrypt_rate,
            },
        },
    })
}

/// `crypt:`'s rows in `qsim check`: rates, costs, the engine, and the cost of a 4 KiB and of
/// the largest request.
pub(crate) fn describe_crypt(o: &mut Rows, cr: &CryptConfig, k: &KernelConfig) {
    row(o, 0, "crypt", &cr.cipher);
    row(
        o,
        2,
        "rates",
        &format!(
            "encrypt {}, decrypt {}",
            format_bandwidth(cr.encrypt_rate),
            format_bandwidth(cr.decrypt_rate)
        ),
    );
    row(o, 2, "per_sector_cost", &cr.per_sector_cost.to_string());
    row(o, 2, "hop_cost", &cr.hop_cost.to_string());
    if k.version.dmcrypt().is_some_and(|r| r.split_bios) {
        let size = |v: u32| match v {
            0 => format!("{} (default)", format_bytes(128 * 1024)),
            v => format_bytes(u64::from(v)),
        };
        row(o, 2, "max_read_size", &size(cr.max_read_size));
        row(o, 2, "max_write_size", &size(cr.max_write_size));
    }
    if !cr.submit_cost.is_zero() {
        row(o, 2, "submit_cost", &cr.submit_cost.to_string());
    }
    if !cr.clone_submit_cost.is_zero() {
        row(o, 2, "clone_submit_cost", &cr.clone_submit_cost.to_string());
    }
    if let Some(d) = &cr.cost {
        let (m, sd) = moments(d);
        let (m, sd) = (
            SimDuration::from_secs_f64(m),
            SimDuration::from_secs_f64(sd),
        );
        row(
            o,
            2,
            "cost",
            &format!("per request from a distribution: mean {m}, sd {sd}"),
        );
    }
    match &cr.engine {
        CryptoEngine::Sync => row(o, 2, "engine", "sync"),
        CryptoEngine::Async { queue_limit, rate } => row(
            o,
            2,
            "engine",
            &format!(
                "async: {} at most {queue_limit} crypto requests queued",
                format_bandwidth(*rate)
            ),
        ),
    }
    row(o, 2, "unplug_after_submit", on_off(cr.unplug_after_submit));
    if cr.io_queues == IoQueues::MasonV3 {
        let patch = k
            .patches
            .iter()
            .find(|p| super::kernel::canonical(p) == Some(super::kernel::CRYPT_PATCH));
        let how = match patch {
            Some(p) => format!("mason-v3: sync and async io threads (patch {p})"),
            None => "mason-v3: sync and async io threads".to_string(),
        };
        row(o, 2, "io_queues", &how);
    }
    for bytes in [4096u64, MAX_REQUEST_BYTES] {
        row(
            o,
            2,
            &format!("cost {}", format_bytes(bytes)),
            &format!(
                "encrypt {}, decrypt {}",
                crypto_cost(cr, bytes, true),
                crypto_cost(cr, bytes, false)
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::testutil::*;

    #[test]
    fn cipher_presets_and_custom_rates() {
        let s = ok(&format!("{BASE}crypt: {{ cipher: null }}\n"));
        assert!(s.crypt.encrypt_rate.is_infinite());
        assert_eq!(crypto_cost(&s.crypt, 4096, true), SimDuration::ZERO);
        let s = ok(&format!(
            "{BASE}crypt: {{ cipher: aes-ni, decrypt_rate: 3002MiB/s, engine: async }}\n"
        ));
        assert_eq!(s.crypt.cipher, "aes-ni (custom rates)");
        assert_eq!(s.crypt.encrypt_rate, 1432.0 * 1_048_576.0);
        assert!(
            matches!(s.crypt.engine, CryptoEngine::Async { queue_limit: 100, rate } if rate == 1432.0 * 1_048_576.0)
        );
        // 4 KiB at 60 MB/s = 68.267 µs, plus 8 sectors × 1 µs.
        let s = ok(&format!("{BASE}crypt: {{ per_sector_cost: 1us }}\n"));
        assert_eq!(
            crypto_cost(&s.crypt, 4096, true),
            SimDuration::from_ns(68_267 + 8_000)
        );
    }

    #[test]
    fn null_is_a_cipher_name() {
        #[derive(Deserialize)]
        struct C {
            #[serde(default, deserialize_with = "present_cipher")]
            cipher: Field<Cipher>,
        }
        let c: C = serde_saphyr::from_str("cipher: null\n").unwrap();
        assert_eq!(c.cipher.map(|s| s.value), Some(Cipher::Null));
        let c: C = serde_saphyr::from_str("cipher: aes-ni\n").unwrap();
        assert_eq!(c.cipher.map(|s| s.value), Some(Cipher::AesNi));
        let c: C = serde_saphyr::from_str("{}\n").unwrap();
        assert!(c.cipher.is_none());
    }

    #[test]
    fn the_section_alone_takes_preset_rates_and_the_async_engine() {
        let cr = |yaml: &str| {
            section::<RawCrypt, _>(yaml, |c, r, _| {
                crypt(c, Some(r), &[], &KernelConfig::new(250))
            })
        };
        let x = cr("cipher: aes-ni\n").unwrap();
        assert_eq!((x.encrypt_rate, x.decrypt_rate), Cipher::AesNi.rates());
        assert_eq!(x.cipher, "aes-ni");
        let x = cr("cipher: vaes\nengine: async\n").unwrap();
        assert!(
            matches!(x.engine, CryptoEngine::Async { queue_limit: 100, rate } if rate == 9588e6)
        );
        // The VAES presets: Biggers's kernel figures for Zen 4 and Sapphire Rapids, both ways.
        for (name, rate) in [("vaes-zen4", 10868e6), ("vaes-spr", 12176e6)] {
            let x = cr(&format!("cipher: {name}\n")).unwrap();
            assert_eq!(
                (x.cipher.as_str(), x.encrypt_rate, x.decrypt_rate),
                (name, rate, rate)
            );
            assert_eq!(Cipher::from_name(name).map(Cipher::name), Some(name));
        }
        let e = cr("async_rate: 1GB/s\n").unwrap_err();
        assert_eq!((e.line(), e.path()), (Some(1), Some("crypt.async_rate")));
        let x = cr("io_queues: mason-v3\nhost: vm-2020\n").unwrap();
        assert_eq!(x.io_queues, IoQueues::MasonV3);
        assert_eq!(x.hop_cost, VM2020_HOP_COST);
        assert_eq!(cr("{}\n").unwrap().hop_cost, HOP_COST);
        assert_eq!(cr("{}\n").unwrap().io_queues, IoQueues::One);
        let e = cr("host: vm-2020\nhop_cost: 1us\n").unwrap_err();
        assert_eq!((e.line(), e.path()), (Some(2), Some("crypt.hop_cost")));
        assert!(e.message().contains("line 1"), "{e}");
        // The submission cost: none on bare metal, the VM's under vm-2020, or as given.
        assert_eq!(cr("{}\n").unwrap().submit_cost, SimDuration::ZERO);
        let x = cr("host: vm-2020\n").unwrap();
        assert_eq!(x.submit_cost, VM2020_SUBMIT_COST);
        assert_eq!(x.submit_cost, SimDuration::from_ns(18_837));
        // Cloudflare's bare-metal server: both of its calibrated costs, and the same refusal.
        let x = cr("host: g9-2020\n").unwrap();
        assert_eq!(
            (x.hop_cost, x.submit_cost),
            (SimDuration::from_ns(4_789), SimDuration::from_ns(325))
        );
        let e = cr("host: g9-2020\nhop_cost: 1us\n").unwrap_err();
        assert_eq!((e.line(), e.path()), (Some(2), Some("crypt.hop_cost")));
        let x = cr("submit_cost: 3us\n").unwrap();
        assert_eq!(x.submit_cost, SimDuration::from_us(3));
        let e = cr("host: vm-2020\nsubmit_cost: 1us\n").unwrap_err();
        assert_eq!((e.line(), e.path()), (Some(2), Some("crypt.submit_cost")));
        assert!(
            e.message()
                .contains("submit cost that `host: vm-2020` (line 1)"),
            "{e}"
        );
        let e = cr("cipher: null\nsubmit_cost: fast\n").unwrap_err();
        assert_eq!(e.line(), Some(2), "{e}");
        assert!(e.path().unwrap().ends_with("submit_cost"), "{e}");
        let e = cr("submit_cost: -1us\n").unwrap_err();
        assert_eq!(e.line(), Some(1), "{e}");
        assert!(e.path().unwrap().ends_with("submit_cost"), "{e}");
        let e = cr("io_queues: two\n").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnknownName);
        let e = cr("cipher: rot13\n").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnknownName);
        assert!(
            e.hint()
                .unwrap()
                .ends_with("aes-2009, aes-ni, vaes, vaes-zen4, vaes-spr, null"),
            "{e}"
        );
    }
}
