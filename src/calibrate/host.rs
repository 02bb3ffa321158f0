//! The host's text: `cryptsetup benchmark`'s table, `lscpu` (or `/proc/cpuinfo`) and
//! `uname -r`, each read as the tool prints it.

use super::InputError;
use crate::model::base::config::KernelVersion;

/// The cipher line calibration reads from `cryptsetup benchmark`, and its key size.
pub const CIPHER: &str = "aes-xts";

/// The cipher's per-core rates from `cryptsetup benchmark`, bytes per second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CipherRates {
    /// Encryption.
    pub encrypt: f64,
    /// Decryption.
    pub decrypt: f64,
    /// Line of the table it came from.
    pub line: u64,
}

fn err(file: &str, line: Option<u64>, field: &str, message: String, hint: &str) -> InputError {
    InputError {
        file: file.to_string(),
        line,
        field: Some(field.to_string()),
        message,
        hint: hint.to_string(),
    }
}

const BENCH_HINT: &str = "give the output of `cryptsetup benchmark` as it prints it, with its \
                          `#     Algorithm |       Key |      Encryption |      Decryption` \
                          table and the aes-xts lines";

/// Reads `cryptsetup benchmark`'s cipher table and returns the `aes-xts` line of `key_bits`
/// (512: AES-256 in XTS mode, `aes-xts-plain64` with a 512-bit key). cryptsetup measures one
/// thread through the kernel's crypto API (AF_ALG), on memory only, so its figures are one
/// core's rate.
pub fn cryptsetup(file: &str, text: &str, key_bits: u32) -> Result<CipherRates, InputError> {
    let header = text
        .lines()
        .position(|l| l.trim_start().starts_with('#') && l.contains("Algorithm"));
    let Some(header) = header else {
        return Err(err(
            file,
            None,
            "Algorithm table",
            "no `#  Algorithm | Key | Encryption | Decryption` header: this is not \
             `cryptsetup benchmark` output, or it was cut before the cipher table"
                .into(),
            BENCH_HINT,
        ));
    };
    let key = format!("{key_bits}b");
    for (i, l) in text.lines().enumerate().skip(header + 1) {
        let words: Vec<&str> = l.split_whitespace().collect();
        if words.first() != Some(&CIPHER) || words.get(1) != Some(&key.as_str()) {
            continue;
        }
        let line = i as u64 + 1;
        let field = format!("{CIPHER} {key}");
        let rate = |at: usize, what: &str| -> Result<f64, InputError> {
            let (Some(n), Some(unit)) = (words.get(at), words.get(at + 1)) else {
                return Err(err(
                    file,
                    Some(line),
                    &field,
                    format!("the line ends before its {what} rate: the output is truncated"),
                    BENCH_HINT,
                ));
            };
            rate_of(n, unit).ok_or_else(|| {
                err(
                    file,
                    Some(line),
                    &field,
                    format!("{what} rate `{n} {unit}` is not a rate in MiB/s"),
                    "cryptsetup prints e.g. `2000.0 MiB/s`; N/A means the kernel lacks \
                     the cipher: benchmark on a kernel that has it",
                )
            })
        };
        return Ok(CipherRates {
            encrypt: rate(2, "encryption")?,
            decrypt: rate(4, "decryption")?,
            line,
        });
    }
    Err(err(
        file,
        None,
        &format!("{CIPHER} {key}"),
        format!(
            "no `{CIPHER} {key}` line in the cipher table: the output is truncated or the cipher is missing"
        ),
        BENCH_HINT,
    ))
}

/// `2000.0` `MiB/s` in bytes per second.
fn rate_of(n: &str, unit: &str) -> Option<f64> {
    let x: f64 = n.parse().ok()?;
    let mult = match unit {
        "MiB/s" => 1048576.0,
        "GiB/s" => 1073741824.0,
        "KiB/s" => 1024.0,
        _ => return None,
    };
    (x.is_finite() && x > 0.0).then_some(x * mult)
}

/// The CPU count from `lscpu` (`CPU(s):  8`) or `/proc/cpuinfo` (one `processor : N` line per
/// CPU).
pub fn cpus(file: &str, text: &str) -> Result<u32, InputError> {
    for (i, l) in text.lines().enumerate() {
        if let Some(rest) = l.strip_prefix("CPU(s):") {
            return match rest.trim().parse::<u32>() {
                Ok(n) if (1..=1024).contains(&n) => Ok(n),
                _ => Err(err(
                    file,
                    Some(i as u64 + 1),
                    "CPU(s)",
                    format!("`{}` is not a CPU count from 1 to 1024", rest.trim()),
                    "give lscpu's output as it prints it",
                )),
            };
        }
    }
    let processors = text
        .lines()
        .filter(|l| {
            let mut kv = l.splitn(2, ':');
            kv.next().map(str::trim) == Some("processor")
        })
        .count();
    match processors {
        1..=1024 => Ok(processors as u32),
        _ => Err(err(
            file,
            None,
            "CPU(s)",
            format!("no `CPU(s):` line and {processors} `processor` lines"),
            "give `lscpu` output (its `CPU(s):` line) or /proc/cpuinfo",
        )),
    }
}

/// The kernel `uname -r` names (`6.1.0-27-amd64`), and the version qsim models it as: the
/// newest modelled version not newer than it (dm-crypt and reclaim change at those versions
/// and stay until the next), or the oldest for an older kernel.
pub fn kernel(file: &str, text: &str) -> Result<(String, KernelVersion), InputError> {
    let release = text.split_whitespace().next().unwrap_or("");
    let mut parts = release.split(['.', '-', '+', '_']);
    let mut num = |what| -> Result<u32, InputError> {
        parts.next().and_then(|p| p.parse().ok()).ok_or_else(|| {
            err(
                file,
                Some(1),
                "release",
                format!("`{release}` has no {what} version number"),
                "give the output of `uname -r`, e.g. 6.1.0-27-amd64",
            )
        })
    };
    let (major, minor) = (num("major")?, num("minor")?);
    let patch = if major == 2 {
        num("patch").unwrap_or(0)
    } else {
        0
    };
    let mine = (major, minor, patch);
    let of = |v: KernelVersion| -> (u32, u32, u32) {
        let mut p = v.name().split('.').map(|x| x.parse::<u32>().unwrap_or(0));
        (
            p.next().unwrap_or(0),
            p.next().unwrap_or(0),
            p.next().unwrap_or(0),
        )
    };
    let at_or_before = KernelVersion::ALL.iter().rev().find(|v| of(**v) <= mine);
    let v = at_or_before.copied().unwrap_or(KernelVersion::ALL[0]);
    Ok((release.to_string(), v))
}
