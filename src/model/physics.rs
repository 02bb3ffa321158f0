//! Closed-form device and cipher arithmetic shared by the simulation and by `qsim check`:
//! mean service times, crypto costs and distribution moments, in one place so that the
//! description of a scenario and the model that runs it cannot disagree.

use super::config::{CryptConfig, DeviceConfig, Distribution, HddConfig};
use crate::engine::SimDuration;

/// Bytes per sector, the unit dm-crypt encrypts and per-sector costs count.
pub const SECTOR: u64 = 512;

/// Mean and standard deviation of a distribution, in seconds.
pub fn moments(d: &Distribution) -> (f64, f64) {
    (d.mean_secs(), d.variance_secs2().sqrt())
}

/// Mean device service time for one request of `bytes`, random (`random`) or sequential.
///
/// - HDD: random = mean seek (`min + (full − min)·8/15`) + half a revolution + bytes / rate;
///   sequential = bytes / rate (the head is already on the track and, streaming, on the sector).
/// - NVMe: latency + overhead + bytes / rate (the bottleneck alone is overhead + bytes / rate).
/// - Generic: the service distribution's mean, whatever the size.
pub fn mean_service(dev: &DeviceConfig, bytes: u64, random: bool) -> SimDuration {
    match dev {
        DeviceConfig::Hdd(h) => {
            let transfer = bytes as f64 / h.transfer_rate;
            let positioning = if random {
                mean_random_seek(h).as_secs_f64() + h.revolution.as_secs_f64() / 2.0
            } else {
                0.0
            };
            SimDuration::from_secs_f64(positioning + transfer)
        }
        DeviceConfig::Nvme(n) => SimDuration::from_secs_f64(
            n.latency.as_secs_f64() + n.overhead.as_secs_f64() + bytes as f64 / n.transfer_rate,
        ),
        DeviceConfig::Generic(g) => SimDuration::from_secs_f64(moments(&g.service).0),
    }
}

/// CPU cost of encrypting or decrypting one request of `bytes`: `bytes / rate + sectors ×
/// per_sector_cost` (zero transfer term for the null cipher).
pub fn crypto_cost(crypt: &CryptConfig, bytes: u64, encrypt: bool) -> SimDuration {
    let rate = if encrypt {
        crypt.encrypt_rate
    } else {
        crypt.decrypt_rate
    };
    let transfer = if rate.is_infinite() {
        0.0
    } else {
        bytes as f64 / rate
    };
    SimDuration::from_secs_f64(transfer) + crypt.per_sector_cost * bytes.div_ceil(SECTOR)
}

/// Mean seek over uniform random distances: `min + (full − min)·8/15`.
pub fn mean_random_seek(hdd: &HddConfig) -> SimDuration {
    // In 128 bits: `span · 8` overflows 64 for a full stroke past 73 years.
    let span = u128::from(hdd.seek_full.saturating_sub(hdd.seek_min).as_ns());
    let mean = u128::from(hdd.seek_min.as_ns()) + span * 8 / 15;
    SimDuration::from_ns(u64::try_from(mean).unwrap_or(u64::MAX))
}
