//! Closed-form device and cipher arithmetic shared by the simulation and by `qsim check`:
//! mean service times, crypto costs and distribution moments, in one place so that the
//! description of a scenario and the model that runs it cannot disagree.

use crate::engine::SimDuration;
use crate::model::base::config::{CryptConfig, DeviceConfig, Distribution, HddConfig};

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

/// A spinning-disk preset (`device: { kind: hdd5400 }`): the numbers a real drive of the class
/// shows, from which the [`HddConfig`] follows ([`HddPreset::seek_full`], [`revolution`]).
#[derive(Debug, Clone, Copy)]
pub struct HddPreset {
    /// Track-to-track seek.
    pub seek_min: SimDuration,
    /// Mean seek over uniform random positions (the data-sheet figure).
    pub seek_mean: SimDuration,
    /// Spindle speed, revolutions per minute.
    pub rpm: u64,
    /// Media transfer rate, bytes per second.
    pub transfer_rate: f64,
    /// Capacity, bytes.
    pub capacity: u64,
    /// NCQ depth.
    pub queue_depth: u32,
}

/// A 5400 rpm laptop disk of 2009: 2 ms track-to-track, 12 ms mean seek, 60 MB/s, 320 GB, no
/// NCQ.
pub const HDD5400: HddPreset = HddPreset {
    seek_min: SimDuration::from_ms(2),
    seek_mean: SimDuration::from_ms(12),
    rpm: 5400,
    transfer_rate: 60e6,
    capacity: 320_000_000_000,
    queue_depth: 1,
};

/// A 7200 rpm desktop disk: the track-to-track seek of [`HDD5400`], 8.5 ms mean, 105 MB/s,
/// 1 TB, NCQ depth 31.
pub const HDD7200: HddPreset = HddPreset {
    seek_min: SimDuration::from_ms(2),
    seek_mean: SimDuration::from_us(8500),
    rpm: 7200,
    transfer_rate: 105e6,
    capacity: 1_000_000_000_000,
    queue_depth: 31,
};

impl HddPreset {
    /// Full-stroke seek that gives `mean` over uniform random distances when the track-to-track
    /// seek is `min`: `min + (mean − min)·15/8` (the inverse of [`mean_random_seek`]).
    pub fn seek_full(min: SimDuration, mean: SimDuration) -> SimDuration {
        let span = mean.saturating_sub(min).as_ns();
        SimDuration::from_ns(min.as_ns() + span * 15 / 8)
    }
}

/// One revolution at `rpm`, rounded to the nanosecond.
pub fn revolution(rpm: u64) -> SimDuration {
    SimDuration::from_ns((60_000_000_000 + rpm / 2) / rpm)
}

/// The NVMe preset: the bottleneck cost of one 4 KiB request (≈ 193k IOPS on one channel).
pub const NVME_COST_4K: SimDuration = SimDuration::from_ns(5_180);
/// The NVMe preset's fixed latency.
pub const NVME_LATENCY: SimDuration = SimDuration::from_us(45);
/// The NVMe preset's transfer rate, bytes per second.
pub const NVME_RATE: f64 = 3.5e9;
/// The NVMe preset's queue depth.
pub const NVME_QUEUE_DEPTH: u32 = 1023;
/// The NVMe preset's mean time between controller pauses: the 2019 fio run saw one ~12 ms stall
/// in each of its two runs of 1381 ms and 1359 ms (docs/model/device.md §3).
pub const NVME_STALL_INTERVAL: SimDuration = SimDuration::from_ms(1370);
/// The NVMe preset's pause length: the same run's "~12 ms" stall (p99.99 12.1–12.3 ms, less
/// the up to ~0.33 ms a caught I/O had already waited).
pub const NVME_STALL_LENGTH: SimDuration = SimDuration::from_ms(12);

/// NVMe overhead that makes a 4 KiB request cost [`NVME_COST_4K`] in the bottleneck at `rate`
/// (never negative).
pub fn nvme_overhead(rate: f64) -> SimDuration {
    let transfer_4k = 4096.0 / rate;
    SimDuration::from_secs_f64(NVME_COST_4K.as_secs_f64() - transfer_4k)
}

/// Seconds an NVMe device's bottleneck stage holds one request of `bytes`: overhead plus
/// transfer, the part that sets its IOPS capacity per channel.
pub fn nvme_bottleneck_secs(overhead: SimDuration, transfer_rate: f64, bytes: u64) -> f64 {
    overhead.as_secs_f64() + bytes as f64 / transfer_rate
}

/// The default cost of one workqueue hop (a worker's wake-up and context switch): assumed,
/// the figure qsim has always used for bare metal.
pub const HOP_COST: SimDuration = SimDuration::from_us(10);

/// `crypt.host: vm-2020`: one workqueue hop in Cloudflare's 4-vCPU VirtualBox VM, calibrated
/// once from their null-cipher `dd` runs (RFC "dm-crypt excessive overhead", LKML 2020-06-19,
/// Message-ID 20200619164132.1648-1-ignat@cloudflare.com): 4 GiB of 4 KiB direct reads took
/// 21.23 s on the ramdisk and 53.22 s through stock 5.8 dm-crypt, whose reads take one hop
/// (the completion queued to kcryptd): (53.22 − 21.23) s / 1,048,576 reads = 30.51 µs.
pub const VM2020_HOP_COST: SimDuration = SimDuration::from_ns(30_508);

/// `crypt.host: vm-2020`: what Cloudflare's VM spent per read outside the block layer and
/// dm-crypt: `dd`'s `read()` system call, the direct-I/O path down to `submit_bio()`
/// (`blkdev_direct_IO()`), and the wake-up of `dd` when its read completes, charged as CPU
/// time of the submitting process before its bio enters the block layer
/// (docs/model/crypt.md §2). Calibrated once from the same RFC's ramdisk run: 21.23 s over
/// 1,048,576 reads is 20.2465 µs a read, of which the [`RAMDISK`] preset already spends
/// 1.4096 µs (its 1 µs overhead plus 4096 B at 10 GB/s); 20.2465 − 1.4096 = 18.837 µs.
pub const VM2020_SUBMIT_COST: SimDuration = SimDuration::from_ns(18_837);

/// `crypt.host: g9-2020`: one workqueue hop on Cloudflare's bare-metal server of the 2020 blog
/// post ("Speeding up Linux disk encryption", 2020-03-25: a ramdisk, aes-xts-plain64, fio 4 KiB
/// direct read-write at QD1), calibrated once from two of its rows together with
/// [`G9_2020_SUBMIT_COST`] and the cipher's per-sector cost (docs/model/crypt.md §2): the
/// default table took 4096 / (294 MiB/s) = 13.287 µs an I/O and the inline path 4096 /
/// (640 MiB/s) = 6.104 µs; the default's reads take one hop (kcryptd) and its writes two
/// (kcryptd, then `dmcrypt_write`), 1.5 a mixed I/O on average, so a hop is (13.287 − 6.104) /
/// 1.5 = 4.789 µs.
pub const G9_2020_HOP_COST: SimDuration = SimDuration::from_ns(4_789);

/// `crypt.host: g9-2020`: the fio process's own CPU time per I/O on that server (the
/// `pread`/`pwrite` system call and the direct-I/O path), calibrated once from the post's
/// plain ramdisk row: 1126 MiB/s read plus 1126 MiB/s write is 4096 / (2252 MiB/s) = 1.7346 µs
/// an I/O, of which the [`RAMDISK`] preset spends 1.4096 µs; 1.7346 − 1.4096 = 0.325 µs.
pub const G9_2020_SUBMIT_COST: SimDuration = SimDuration::from_ns(325);

/// The default submission cost: none (bare metal; every scenario before the `vm-2020` preset
/// ran without one, and fio's slat on bare metal is a few µs at most).
pub const SUBMIT_COST: SimDuration = SimDuration::ZERO;

/// A flash SSD preset served as the NVMe model with one channel and no controller pauses
/// (`sata-ssd`, `nvme-gen4`, `nvme-gen5`): a fixed latency every request pays in parallel, then
/// a bottleneck that holds a 4 KiB request [`SsdPreset::cost_4k`]. The bottleneck cost comes from
/// the drive's 4 KiB random-read IOPS at a deep queue (one over it); the latency from its QD1
/// IOPS (one over it, less the bottleneck cost). Writes are served like reads (assumed: the
/// data sheets' write IOPS are not modelled apart).
#[derive(Debug, Clone, Copy)]
pub struct SsdPreset {
    /// Fixed latency every request pays in parallel.
    pub latency: SimDuration,
    /// Bottleneck cost of one 4 KiB request.
    pub cost_4k: SimDuration,
    /// Interface and media rate, bytes per second.
    pub transfer_rate: f64,
    /// Commands the device accepts at once.
    pub queue_depth: u32,
}

/// The `sata-ssd` preset, a Samsung 870 EVO on AHCI (KitGuru's review of the 1 TB drive,
/// quoting Samsung's data sheet: 560 MB/s sequential read, 13,000 IOPS 4 KiB random read at
/// QD1, 98,000 at QD32;
/// <https://www.kitguru.net/components/ssd-drives/simon-crisp/samsung-ssd-870-evo-1tb-review/all/1/>).
/// At QD32 one channel holds a 4 KiB read 1/98,000 s = 10.2 µs (the bottleneck), at QD1 a read
/// takes 1/13,000 s = 76.9 µs, so the fixed latency is the difference, 66.7 µs. The sheet's
/// 36,000 QD1 and 88,000 QD32 write IOPS are not modelled apart (assumed). NCQ depth 32 (AHCI's
/// command slots).
pub const SATA_SSD: SsdPreset = SsdPreset {
    latency: SimDuration::from_ns(66_720),
    cost_4k: SimDuration::from_ns(10_204),
    transfer_rate: 560e6,
    queue_depth: 32,
};

/// The `nvme-gen4` preset, a PCIe 4.0 x4 drive of 2022: the Samsung 990 PRO 2 TB.
/// - Sequential read 7,450 MB/s and 4 KiB random read 1,400,000 IOPS at a deep queue (Samsung's
///   launch figures, 2022-08; e.g.
///   <https://www.slashcam.com/news/single/Samsung-990-PRO--New-NVMe-SSD-top-model-reaches-th-17407.html>;
///   c't measured "knapp 1,4 Millionen" IOPS on the 4 TB model, heise c't 2024/4): the
///   bottleneck holds a 4 KiB read 1/1.4 M s = 714 ns.
/// - QD1: Samsung publishes none. A 990 PRO (the "7450 MB/s on the box") behind dm-crypt with
///   both no-workqueue flags read 4 KiB at random at 19,654 IOPS at Q1T1 (kdiskmark; blog post
///   <https://long-cat.net/blog/2024/05/09/optimizing-nvme-performance-with-dmcrypt>): 50.88 µs
///   a read, so the latency is 50.88 − 0.714 = 50.17 µs. That time includes the inline 4 KiB
///   decryption (about 1 µs with AES-NI), so it is an upper bound by some 2 %; KitGuru's raw
///   Q1T1 of another Gen4 TLC drive (Lexar NM790 4 TB, 20,176 IOPS, 49.6 µs) agrees.
/// - Queue depth 1023 as [`NVME_QUEUE_DEPTH`]; no controller pauses (none is published for it).
pub const NVME_GEN4: SsdPreset = SsdPreset {
    latency: SimDuration::from_ns(50_166),
    cost_4k: SimDuration::from_ns(714),
    transfer_rate: 7.45e9,
    queue_depth: NVME_QUEUE_DEPTH,
};

/// The `nvme-gen5` preset, a PCIe 5.0 x4 drive of 2025: the Samsung 9100 PRO 2 TB.
/// - Sequential read 14,700 MB/s and 4 KiB random read 1,850,000 IOPS (Samsung's figures for
///   the 1 and 2 TB models, e.g. <https://news.warptechlab.com/news/215686385>; the 2 TB drive's
///   parts: <https://www.techpowerup.com/review/samsung-9100-pro-2-tb/single-page.html>): the
///   bottleneck holds a 4 KiB read 1/1.85 M s = 541 ns.
/// - QD1: not published, and no measurement was found; the latency is **assumed** equal to
///   [`NVME_GEN4`]'s, 50.17 µs: a QD1 random read is mostly the TLC NAND's page read, and both
///   drives read Samsung TLC V-NAND (the 9100 PRO's V8 is also in 990 PRO 4 TB models).
/// - Queue depth 1023; no controller pauses.
pub const NVME_GEN5: SsdPreset = SsdPreset {
    latency: SimDuration::from_ns(50_166),
    cost_4k: SimDuration::from_ns(541),
    transfer_rate: 14.7e9,
    queue_depth: NVME_QUEUE_DEPTH,
};

impl SsdPreset {
    /// The controller overhead that makes a 4 KiB request cost [`SsdPreset::cost_4k`] in
    /// the bottleneck at `rate` (zero when the transfer alone costs more).
    pub fn overhead(&self, rate: f64) -> SimDuration {
        let transfer_4k = SimDuration::from_secs_f64(4096.0 / rate);
        self.cost_4k.saturating_sub(transfer_4k)
    }
}

/// md's default RAID0 chunk (`mdadm --create` without `--chunk`: 512 KiB since mdadm 3.1.1,
/// its `Create.c` and `CHANGELOG.md`; 64 KiB before).
pub const MD_CHUNK: u64 = 512 * 1024;

/// A RAM disk preset (`device: { kind: ramdisk }`, Linux's brd): served as an NVMe device
/// with no fixed latency.
#[derive(Debug, Clone, Copy)]
pub struct RamdiskPreset {
    /// Per-request cost besides the copy (bio walk, page lookup, completion).
    pub overhead: SimDuration,
    /// Copy rate of one request, bytes per second.
    pub transfer_rate: f64,
    /// Requests copied at once (brd copies in each submitter's context).
    pub channels: u32,
    /// Requests accepted at once (brd has no queue).
    pub queue_depth: u32,
}

/// The `ramdisk` preset, all assumed: a 1 µs overhead and a 10 GB/s single-core memcpy (1.41 µs
/// for 4 KiB), below the 1.8 µs a whole 4 KiB psync I/O took on Cloudflare's bare-metal ramdisk
/// (1126 MB/s read plus 1126 MB/s write, "Speeding up Linux disk encryption", 2020); 64 channels
/// and a depth of a million so that only the CPUs queue.
pub const RAMDISK: RamdiskPreset = RamdiskPreset {
    overhead: SimDuration::from_us(1),
    transfer_rate: 10e9,
    channels: 64,
    queue_depth: 1_000_000,
};

/// Cipher presets (`crypt.cipher`): CPU throughput of the cipher, encrypting and decrypting, on
/// one CPU.
///
/// The three VAES presets are Eric Biggers's AES-256-XTS figures on 4096-byte messages, from the
/// cover letter of "[PATCH v2 0/6] Faster AES-XTS on modern x86_64 CPUs" (linux-crypto,
/// 2024-03-29, Message-ID 20240329080355.2871-1-ebiggers@kernel.org; merged for Linux 6.10).
/// He measured decryption "using a custom kernel module that invokes the crypto_skcipher API",
/// which is how dm-crypt calls the cipher, and found encryption "almost identical"; he advises
/// against `cryptsetup benchmark` for such fast ciphers, whose AF_ALG system calls it times as
/// well. So these are kernel crypto rates, not `cryptsetup benchmark` lines (as `aes-ni` is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cipher {
    /// Generic C AES of 2009: 60 MB/s.
    Aes2009,
    /// AES-NI (i7-3770, xts-256, `cryptsetup benchmark`): 1432 / 1387 MiB/s.
    AesNi,
    /// `xts-aes-vaes-avx2` on AMD Zen 4: 9588 MB/s (the kernel prefers the AVX-512 code there,
    /// [`Cipher::VaesZen4`]).
    Vaes,
    /// `xts-aes-vaes-avx10_512` on AMD Zen 4, the 6.10+ kernel's choice there: 10868 MB/s.
    VaesZen4,
    /// `xts-aes-vaes-avx10_512` on Intel Sapphire Rapids (4th-generation Xeon Scalable, 2023),
    /// the 6.10+ kernel's choice there: 12176 MB/s.
    VaesSpr,
    /// No encryption: infinite rate.
    Null,
}

impl Cipher {
    /// Every preset, in the order the scenario language lists them.
    pub const ALL: [Cipher; 6] = [
        Cipher::Aes2009,
        Cipher::AesNi,
        Cipher::Vaes,
        Cipher::VaesZen4,
        Cipher::VaesSpr,
        Cipher::Null,
    ];
    /// Every preset name, as written in a scenario, in [`Cipher::ALL`] order.
    pub const NAMES: &'static [&'static str] = &[
        "aes-2009",
        "aes-ni",
        "vaes",
        "vaes-zen4",
        "vaes-spr",
        "null",
    ];

    /// The name as written in a scenario.
    pub fn name(self) -> &'static str {
        let i = Cipher::ALL.iter().position(|c| *c == self).unwrap_or(0);
        Cipher::NAMES[i]
    }

    /// The preset named `name`, if any.
    pub fn from_name(name: &str) -> Option<Cipher> {
        Cipher::NAMES
            .iter()
            .position(|n| *n == name)
            .map(|i| Cipher::ALL[i])
    }

    /// Encryption and decryption throughput of one CPU, bytes per second.
    pub fn rates(self) -> (f64, f64) {
        const MIB: f64 = 1_048_576.0;
        match self {
            Cipher::Aes2009 => (60e6, 60e6),
            Cipher::AesNi => (1432.0 * MIB, 1387.0 * MIB),
            Cipher::Vaes => (9588e6, 9588e6),
            Cipher::VaesZen4 => (10868e6, 10868e6),
            Cipher::VaesSpr => (12176e6, 12176e6),
            Cipher::Null => (f64::INFINITY, f64::INFINITY),
        }
    }
}

/// Mean seconds the device alone spends on one 512-byte request, as the request floor counts it
/// (`scenario` refuses a scenario below the floor): an HDD's transfer (a sequential request pays
/// nothing else), an NVMe's bottleneck (overhead + transfer), a generic device's service mean.
pub fn sector_device_secs(dev: &DeviceConfig) -> f64 {
    let bytes = SECTOR as f64;
    match dev {
        DeviceConfig::Hdd(h) => bytes / h.transfer_rate,
        DeviceConfig::Nvme(n) => nvme_bottleneck_secs(n.overhead, n.transfer_rate, SECTOR),
        DeviceConfig::Generic(g) => g.service.mean_secs(),
    }
}

/// Mean seconds dm-crypt spends on one 512-byte request, as the request floor counts it: the
/// `cost` distribution's mean, or the cheaper of encrypting and decrypting a sector.
pub fn sector_crypto_secs(crypt: &CryptConfig) -> f64 {
    match &crypt.cost {
        Some(d) => d.mean_secs(),
        None => crypto_cost(crypt, SECTOR, true)
            .min(crypto_cost(crypt, SECTOR, false))
            .as_secs_f64(),
    }
}

/// GFP_ATOMIC's order-0 floor in pages below which it fails: the min watermark with
/// `ALLOC_HIGH` (halve) then `ALLOC_HARDER` (take a quarter off).
pub fn atomic_floor(min: u64) -> u64 {
    let need = min - min / 2;
    need - need / 4
}

/// A mempool's first try at order 0: the min watermark with `ALLOC_HARDER` only (0.75·min).
pub fn mempool_floor(min: u64) -> u64 {
    min - min / 4
}
