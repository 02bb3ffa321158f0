//! `qsim calibrate`: reads the user's measurements, prints the fit and its residuals, and
//! writes the machine file atomically (docs/calibrate.md).

use crate::calibrate::{self, Inputs, MAX_INPUT_BYTES, Named};
use crate::error::UsageError;
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `qsim calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// fio JSON output (`fio --output-format=json`) of the calibrate/*.fio jobs on the raw
    /// device (repeatable: one file per job, or several jobs in one file). Needed: the 4KiB
    /// random read at iodepth 1 and at a deep iodepth, and the 1MiB sequential read; the 1MiB
    /// sequential write is optional and only checked.
    #[arg(long = "fio", value_name = "FILE", required = true)]
    pub fio: Vec<PathBuf>,
    /// fio JSON of the same jobs on the dm-crypt device (repeatable): calibrate then prints the
    /// fitted machine's prediction with dm-crypt on beside them.
    #[arg(long = "crypt-fio", value_name = "FILE")]
    pub crypt_fio: Vec<PathBuf>,
    /// `cryptsetup benchmark` output, as it prints it: the cipher's per-core rates.
    #[arg(long, value_name = "FILE")]
    pub cryptsetup: Option<PathBuf>,
    /// The key size of the aes-xts line to read: 512 (AES-256, cryptsetup's aes-xts-plain64
    /// with a 512-bit key) or 256 (AES-128).
    #[arg(long, value_name = "BITS", default_value_t = 512,
        value_parser = clap::value_parser!(u32).range(256..=512))]
    pub key_bits: u32,
    /// `lscpu` output or a copy of /proc/cpuinfo: the CPU count.
    #[arg(long, value_name = "FILE")]
    pub lscpu: Option<PathBuf>,
    /// `uname -r` output: the kernel version, mapped to the newest version qsim models that is
    /// not newer.
    #[arg(long, value_name = "FILE")]
    pub uname: Option<PathBuf>,
    /// The device's size in bytes (`blockdev --getsize64 DEV`); needed for a spinning disk when
    /// the random job gives no size.
    #[arg(long, value_name = "BYTES")]
    pub capacity: Option<u64>,
    /// Where to write the machine file (replaced whole, or not at all); `-` for standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
}

/// Reads one input file, capped at [`MAX_INPUT_BYTES`].
fn read(flag: &str, path: &Path) -> Result<Named, UsageError> {
    let shown = path.display().to_string();
    let bytes =
        crate::scenario::read_capped(path, MAX_INPUT_BYTES as u64).map_err(|e| UsageError {
            message: format!("{flag} {shown}: cannot read it: {e}"),
            hint: "check the path; calibration inputs are small text files".into(),
        })?;
    let text = String::from_utf8(bytes).map_err(|e| UsageError {
        message: format!(
            "{flag} {shown}: not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ),
        hint: "give the tool's text output as it printed it".into(),
    })?;
    Ok((shown, text))
}

/// `qsim calibrate`.
pub fn calibrate_cmd(args: &CalibrateArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    if args.key_bits != 256 && args.key_bits != 512 {
        return Err(UsageError {
            message: format!(
                "--key-bits {}: cryptsetup's aes-xts lines are 256b and 512b",
                args.key_bits
            ),
            hint: "give --key-bits 512 (AES-256, the usual LUKS2 key) or 256".into(),
        }
        .into());
    }
    let output = crate::output::check_file("--output", &args.output)?;
    let many = |flag: &str, list: &[PathBuf]| -> Result<Vec<Named>, UsageError> {
        list.iter().map(|p| read(flag, p)).collect()
    };
    let one = |flag: &str, p: &Option<PathBuf>| p.as_deref().map(|p| read(flag, p)).transpose();
    let mut inputs_seen: Vec<(&str, &Path)> = Vec::new();
    for p in args.fio.iter().chain(&args.crypt_fio) {
        inputs_seen.push(("input", p));
    }
    crate::output::check_not_input("--output", &args.output, &inputs_seen)?;
    let inputs = Inputs {
        fio: many("--fio", &args.fio)?,
        crypt_fio: many("--crypt-fio", &args.crypt_fio)?,
        cryptsetup: one("--cryptsetup", &args.cryptsetup)?,
        lscpu: one("--lscpu", &args.lscpu)?,
        uname: one("--uname", &args.uname)?,
        capacity: args.capacity,
        key_bits: args.key_bits,
    };
    let cal = calibrate::calibrate(&inputs).map_err(|e| UsageError {
        message: e.to_string(),
        hint: e.hint.clone(),
    })?;
    drop(output);
    let to_stdout = args.output.as_os_str() == "-";
    if to_stdout {
        eprint!("{}", cal.report);
    } else {
        out.write_all(cal.report.as_bytes())?;
    }
    crate::output::write_file(&args.output, cal.machine.as_bytes(), out)?;
    if !to_stdout {
        writeln!(out, "\nwrote {}", args.output.display())?;
    }
    out.flush()?;
    Ok(())
}
