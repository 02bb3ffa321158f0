//! The scenario file as written: `Raw*` structs that mirror the YAML one to one.
//!
//! Every struct denies unknown fields, so a typo fails at its own line with serde's list of valid
//! names. Values that `validate` checks are wrapped in [`Spanned`] so its errors can point at them.
//!
//! No internally tagged or untagged enums: serde-saphyr buffers those through a generic content
//! deserializer, and then every error raised inside them (a bad unit, an unknown field) reports
//! the line of the enclosing mapping instead of its own, and `Spanned` values come back with
//! line 0. So `device`, `workloads[*]` and distributions are plain structs with a `kind:` field
//! and every per-kind field optional; `validate` checks that each field belongs to its kind.
//!
//! `Merge` deep-merges a variant's `set:` over the base file on these structs, so every value
//! keeps the span of the line it came from: mappings merge field by field, scalars and lists
//! replace, and a mapping whose `kind:` changes is replaced whole.
//!
//! The second half of the file walks the YAML event stream to turn a line and column back into a
//! field path (`workloads[1].rate`), which serde-saphyr's own errors do not carry.

use super::types::KernelVersion;
use super::units::{CountRate, Duration, Rate, Size, UnitError};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle};
use serde_saphyr::{Location, Spanned};
use std::fmt;

/// A field that may be absent.
pub type Field<T> = Option<Spanned<T>>;

/// The whole scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    /// Scenario name; defaults to the file stem.
    pub name: Field<String>,
    /// One-line purpose.
    pub description: Field<String>,
    /// Master seed.
    pub seed: Field<u64>,
    /// Run length, warm-up included.
    pub duration: Field<Duration>,
    /// Period excluded from statistics.
    pub warmup: Field<Duration>,
    /// Event budget.
    pub max_events: Field<u64>,
    /// Replications per policy and variant.
    pub replications: Field<u32>,
    /// CPUs.
    pub cpus: Field<u32>,
    /// Kernel constants.
    pub kernel: Field<RawKernel>,
    /// The disk (required).
    pub device: Field<RawDevice>,
    /// The disk's request queue.
    pub block: Field<RawBlock>,
    /// dm-crypt settings.
    pub crypt: Field<RawCrypt>,
    /// Policy names.
    pub policies: Field<Capped<Spanned<String>, MAX_LISTED_NAMES>>,
    /// Workloads (at least one).
    pub workloads: Field<Capped<Spanned<RawWorkload>, { super::validate::MAX_WORKLOADS }>>,
    /// Memory pressure: one lowmem zone and GFP_ATOMIC streams.
    pub memory: Field<RawMemory>,
    /// Named variants: partial scenarios merged over this file.
    pub variants: Field<Capped<Spanned<RawVariant>, { super::validate::MAX_VARIANTS }>>,
}

/// Most names a `policies:` or `kernel.patches` list keeps while parsing (each name may be
/// listed once, and there are six policies and three patches).
pub const MAX_LISTED_NAMES: usize = 64;

/// A YAML list that keeps its first `MAX` items and only counts the rest ([`Capped::total`]),
/// so that a list far longer than any valid one (20,000 variants of 4.6 KB each as parsed)
/// costs its count, not its memory, before validation refuses it. Derefs to the kept items.
#[derive(Debug, Clone)]
pub struct Capped<T, const MAX: usize> {
    /// The first `MAX` items, in order.
    pub items: Vec<T>,
    /// How many items the list held in all.
    pub total: usize,
}

impl<T, const MAX: usize> std::ops::Deref for Capped<T, MAX> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.items
    }
}

impl<T, const MAX: usize> Capped<T, MAX> {
    /// Whether items were dropped: the list held more than `MAX`.
    pub fn over(&self) -> bool {
        self.total > MAX
    }
}

impl<'de, T: Deserialize<'de>, const MAX: usize> Deserialize<'de> for Capped<T, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T, const MAX: usize>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>, const MAX: usize> Visitor<'de> for V<T, MAX> {
            type Value = Capped<T, MAX>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                let mut total = 0usize;
                loop {
                    if items.len() < MAX {
                        match seq.next_element::<T>()? {
                            Some(x) => items.push(x),
                            None => break,
                        }
                    } else if seq.next_element::<de::IgnoredAny>()?.is_none() {
                        break;
                    }
                    total += 1;
                }
                Ok(Capped { items, total })
            }
        }
        d.deserialize_seq(V::<T, MAX>(std::marker::PhantomData))
    }
}

/// One entry of `variants:`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawVariant {
    /// The variant's name (required, unique).
    pub name: Field<String>,
    /// The fields it changes: a partial scenario, deep-merged over the base file.
    pub set: Field<RawScenario>,
}

/// `kernel:`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawKernel {
    /// Timer frequency.
    pub hz: Field<u32>,
    /// Kernel version whose reclaim behaviour is simulated.
    pub version: Field<VersionName>,
    /// 2009 test patches switched on.
    pub patches: Field<Capped<Spanned<String>, MAX_LISTED_NAMES>>,
    /// Explicit switch: congestion-wait queue.
    pub cwait_class: Field<CwaitClassName>,
    /// Explicit switch: kswapd naps before sleeping.
    pub kswapd_nap: Field<bool>,
    /// Explicit switch: kswapd skips its congestion wait below min.
    pub skip_below_min: Field<bool>,
    /// Explicit switch: `wait_iff_congested` in the allocator and direct reclaim.
    pub wait_iff_congested: Field<bool>,
    /// Explicit switch: kswapd keeps the requested order.
    pub force_highorder: Field<bool>,
    /// Explicit switch: a slow-path restart wakes kswapd again.
    pub restart_wakes_kswapd: Field<bool>,
}

/// `kernel.version` as written, read by hand so that `2.6` or `32` (YAML numbers) get a clear
/// message here; `validate` checks the string against [`VERSION_NAMES`], at the value's own
/// location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionName(pub String);

/// Every `kernel.version` as written in YAML, oldest first (the names of [`KernelVersion::ALL`]).
pub const VERSION_NAMES: &[&str] = &["2.6.30", "2.6.31", "2.6.32", "2.6.33", "2.6.37"];

impl VersionName {
    /// The version this names, if qsim models it.
    pub fn version(&self) -> Option<KernelVersion> {
        KernelVersion::ALL
            .iter()
            .copied()
            .find(|k| k.name() == self.0.trim())
    }
}

impl<'de> Deserialize<'de> for VersionName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl V {
            fn number<E: de::Error>(shown: String) -> E {
                UnitError {
                    message: format!("a kernel version has three parts, got the number {shown}"),
                    hint: format!(
                        "write one of {} (2.6.32 is the default)",
                        VERSION_NAMES.join(", ")
                    ),
                }
                .into_serde()
            }
        }
        impl Visitor<'_> for V {
            type Value = VersionName;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a kernel version ({})", VERSION_NAMES.join(", "))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<VersionName, E> {
                Err(V::number(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<VersionName, E> {
                Err(V::number(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<VersionName, E> {
                Err(V::number(v.to_string()))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<VersionName, E> {
                Ok(VersionName(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// `kernel.cwait_class`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CwaitClassName {
    /// The SYNC queue.
    Sync,
    /// The ASYNC queue.
    Async,
}

/// `memory:`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMemory {
    /// Size of the zone (required).
    pub ram: Field<Size>,
    /// `min_free_kbytes`, in kB.
    pub min_free_kbytes: Field<u64>,
    /// Memory that never becomes free.
    pub unreclaimable: Field<Size>,
    /// The part of `unreclaimable` on the file LRU (scanned, never freed).
    pub mapped: Field<Size>,
    /// Clean page cache at the start.
    pub page_cache: Field<Size>,
    /// Probability that a freed block merges with a free buddy.
    pub coalesce: Field<f64>,
    /// Reclaim's CPU cost per page scanned.
    pub scan_cost: Field<Duration>,
    /// dm-crypt's page_pool reserve, pages.
    pub page_pool: Field<u32>,
    /// Bounce pages a write clone may wait for.
    pub min_bio_pages: Field<u32>,
    /// GFP_ATOMIC streams.
    pub atomic: Field<Capped<Spanned<RawAtomic>, { super::validate::MAX_ATOMIC_STREAMS }>>,
}

/// `memory.atomic[*].preset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AtomicPresetName {
    /// iwlagn RX refill: 8 KiB A-MSDU buffers in order-2 blocks.
    Iwlagn,
    /// Everything from the fields (and their defaults).
    Custom,
}

impl AtomicPresetName {
    /// The name as written in YAML.
    pub fn name(self) -> &'static str {
        match self {
            AtomicPresetName::Iwlagn => "iwlagn",
            AtomicPresetName::Custom => "custom",
        }
    }
}

/// One entry of `memory.atomic:`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAtomic {
    /// Name; defaults to `atomic<index>`.
    pub name: Field<String>,
    /// iwlagn | custom.
    pub preset: Field<AtomicPresetName>,
    /// Allocations per second (`500/s` or a plain number).
    pub rate: Field<CountRate>,
    /// Network throughput; divided by `buffer` into allocations per second.
    pub bandwidth: Field<Rate>,
    /// Bytes per allocation, for `bandwidth`.
    pub buffer: Field<Size>,
    /// Weight of each buddy order.
    pub orders: Field<OrderWeights>,
    /// Poisson or evenly spaced arrivals.
    pub poisson: Field<bool>,
    /// How long a buffer is held.
    pub hold: Field<RawDistribution>,
    /// Buffers allocated per arrival (a ring refill).
    pub burst: Field<u32>,
}

/// `orders: {0: 0.5, 1: 0.3, 2: 0.2}`: buddy order → weight, in the order written, each key and
/// value with its own location. Keys are read as signed so that `-1` gets a range message.
#[derive(Debug, Clone)]
pub struct OrderWeights(pub Vec<(Spanned<i64>, Spanned<f64>)>);

impl<'de> Deserialize<'de> for OrderWeights {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OrderWeights;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of buddy order to weight, such as {0: 0.5, 1: 0.3, 2: 0.2}")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OrderWeights, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = map.next_key::<Spanned<i64>>()? {
                    out.push((k, map.next_value::<Spanned<f64>>()?));
                }
                Ok(OrderWeights(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Device presets (`device.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum DeviceKind {
    /// 5400 rpm laptop disk.
    #[serde(rename = "hdd5400")]
    Hdd5400,
    /// 7200 rpm desktop disk.
    #[serde(rename = "hdd7200")]
    Hdd7200,
    /// NVMe SSD.
    #[serde(rename = "nvme")]
    Nvme,
    /// Any service distribution.
    #[serde(rename = "generic")]
    Generic,
}

impl DeviceKind {
    /// The name as written in YAML.
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Hdd5400 => "hdd5400",
            DeviceKind::Hdd7200 => "hdd7200",
            DeviceKind::Nvme => "nvme",
            DeviceKind::Generic => "generic",
        }
    }
}

/// `device:`: a kind and the overrides that kind accepts.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDevice {
    /// Preset.
    pub kind: Field<DeviceKind>,
    /// HDD: track-to-track seek.
    pub seek_min: Field<Duration>,
    /// HDD: full-stroke seek.
    pub seek_full: Field<Duration>,
    /// HDD: one revolution.
    pub revolution: Field<Duration>,
    /// HDD, NVMe: media transfer rate.
    pub transfer_rate: Field<Rate>,
    /// HDD: capacity.
    pub capacity: Field<Size>,
    /// All: requests accepted at once.
    pub queue_depth: Field<u32>,
    /// NVMe: fixed latency.
    pub latency: Field<Duration>,
    /// NVMe, generic: parallel servers.
    pub channels: Field<u32>,
    /// NVMe: per-request cost in the bottleneck stage.
    pub overhead: Field<Duration>,
    /// Generic: service-time distribution.
    pub service: Field<RawDistribution>,
}

impl RawDevice {
    /// Fields present in the file, with their locations, in declaration order (`kind` excluded).
    pub fn present(&self) -> Vec<(&'static str, Location)> {
        let mut v = Vec::new();
        push(&mut v, "seek_min", &self.seek_min);
        push(&mut v, "seek_full", &self.seek_full);
        push(&mut v, "revolution", &self.revolution);
        push(&mut v, "transfer_rate", &self.transfer_rate);
        push(&mut v, "capacity", &self.capacity);
        push(&mut v, "queue_depth", &self.queue_depth);
        push(&mut v, "latency", &self.latency);
        push(&mut v, "channels", &self.channels);
        push(&mut v, "overhead", &self.overhead);
        push(&mut v, "service", &self.service);
        v
    }
}

/// `block.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum QueueModeName {
    /// Legacy request queue.
    #[serde(rename = "legacy")]
    Legacy,
    /// blk-mq.
    #[serde(rename = "blk-mq")]
    BlkMq,
}

/// `block.elevator`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum ElevatorName {
    /// CFQ.
    #[serde(rename = "cfq")]
    Cfq,
    /// noop / one FIFO.
    #[serde(rename = "fifo")]
    Fifo,
}

/// `block:`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBlock {
    /// legacy | blk-mq.
    pub mode: Field<QueueModeName>,
    /// Requests per class, or tags.
    pub nr_requests: Field<u32>,
    /// cfq | fifo.
    pub elevator: Field<ElevatorName>,
    /// Plugging.
    pub plug: Field<bool>,
    /// Queued requests that unplug.
    pub unplug_threshold: Field<u32>,
    /// CFQ low_latency.
    pub low_latency: Field<bool>,
    /// CFQ sync slice.
    pub slice_sync: Field<Duration>,
    /// CFQ async slice.
    pub slice_async: Field<Duration>,
    /// CFQ idle.
    pub slice_idle: Field<Duration>,
    /// CFQ quantum.
    pub quantum: Field<u32>,
}

impl RawBlock {
    /// CFQ-only fields present in the file, with their locations.
    pub fn cfq_fields(&self) -> Vec<(&'static str, Location)> {
        let mut v = Vec::new();
        push(&mut v, "low_latency", &self.low_latency);
        push(&mut v, "slice_sync", &self.slice_sync);
        push(&mut v, "slice_async", &self.slice_async);
        push(&mut v, "slice_idle", &self.slice_idle);
        push(&mut v, "quantum", &self.quantum);
        v
    }
}

/// Cipher presets (`crypt.cipher`). Deserialized by hand because the preset `null` is also
/// YAML's null: a derived `Option` would silently turn `cipher: null` into "use the default".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CipherName {
    /// Generic C AES of 2009: 60 MB/s.
    Aes2009,
    /// AES-NI (i7-3770, xts-256): 1432 / 1387 MiB/s.
    AesNi,
    /// VAES (Zen 4): 9588 MB/s.
    Vaes,
    /// No encryption: infinite rate.
    Null,
}

impl CipherName {
    /// Every preset name, as written in YAML.
    pub const NAMES: &'static [&'static str] = &["aes-2009", "aes-ni", "vaes", "null"];

    /// The name as written in YAML.
    pub fn name(self) -> &'static str {
        match self {
            CipherName::Aes2009 => "aes-2009",
            CipherName::AesNi => "aes-ni",
            CipherName::Vaes => "vaes",
            CipherName::Null => "null",
        }
    }
}

impl<'de> Deserialize<'de> for CipherName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = CipherName;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a cipher name ({})", CipherName::NAMES.join(", "))
            }
            fn visit_unit<E: de::Error>(self) -> Result<CipherName, E> {
                Ok(CipherName::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<CipherName, E> {
                Ok(CipherName::Null)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<CipherName, E> {
                match v {
                    "aes-2009" => Ok(CipherName::Aes2009),
                    "aes-ni" => Ok(CipherName::AesNi),
                    "vaes" => Ok(CipherName::Vaes),
                    "null" => Ok(CipherName::Null),
                    _ => Err(E::unknown_variant(v, CipherName::NAMES)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// Reads a present `cipher:` (even `null`) as `Some`; an absent one stays `None` via `default`.
fn present_cipher<'de, D: Deserializer<'de>>(d: D) -> Result<Field<CipherName>, D::Error> {
    Spanned::<CipherName>::deserialize(d).map(Some)
}

/// `crypt.engine`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum EngineName {
    /// CPU cipher in the calling thread.
    #[serde(rename = "sync")]
    Sync,
    /// Asynchronous engine with its own queue.
    #[serde(rename = "async")]
    Async,
}

/// `crypt:`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCrypt {
    /// Cipher preset.
    #[serde(default, deserialize_with = "present_cipher")]
    pub cipher: Field<CipherName>,
    /// Encryption rate override.
    pub encrypt_rate: Field<Rate>,
    /// Decryption rate override.
    pub decrypt_rate: Field<Rate>,
    /// Cost per 512-byte crypto request.
    pub per_sector_cost: Field<Duration>,
    /// Cost per workqueue hop.
    pub hop_cost: Field<Duration>,
    /// Crypto work per request from a distribution, replacing bytes / rate (textbook checks).
    pub cost: Field<RawDistribution>,
    /// sync | async.
    pub engine: Field<EngineName>,
    /// Async engine queue limit.
    pub async_queue_limit: Field<u32>,
    /// Async engine rate.
    pub async_rate: Field<Rate>,
    /// Unplug after kcryptd submits.
    pub unplug_after_submit: Field<bool>,
}

/// `workloads[*].kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum WorkloadKindName {
    /// A fio job.
    #[serde(rename = "fio")]
    Fio,
    /// The gitk preset fio job.
    #[serde(rename = "gitk")]
    Gitk,
    /// A buffered writer.
    #[serde(rename = "buffered-writer")]
    BufferedWriter,
}

impl WorkloadKindName {
    /// The name as written in YAML.
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKindName::Fio => "fio",
            WorkloadKindName::Gitk => "gitk",
            WorkloadKindName::BufferedWriter => "buffered-writer",
        }
    }
}

/// `workloads[*].rw`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwName {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    RandRead,
    /// Random writes.
    RandWrite,
    /// Random mix.
    RandRw,
}

/// `workloads[*].arrivals`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArrivalsName {
    /// Exponential gaps.
    Poisson,
    /// Constant gaps.
    Constant,
}

/// One entry of `workloads:`; fio fields and buffered-writer fields side by side.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWorkload {
    /// Name; defaults to `<kind><index>`.
    pub name: Field<String>,
    /// fio | gitk | buffered-writer.
    pub kind: Field<WorkloadKindName>,
    /// fio: direction pattern.
    pub rw: Field<RwName>,
    /// fio: read percentage for randrw.
    pub rwmixread: Field<u32>,
    /// fio: block size.
    pub bs: Field<Size>,
    /// Both: region size.
    pub size: Field<Size>,
    /// Both: region offset.
    pub offset: Field<Size>,
    /// fio: I/Os in flight.
    pub iodepth: Field<u32>,
    /// fio: open-loop rate; buffered-writer: dirtying rate.
    pub rate: Field<Rate>,
    /// fio: poisson | constant (open loop only).
    pub arrivals: Field<ArrivalsName>,
    /// fio: think time (closed loop only).
    pub think: Field<RawDistribution>,
    /// fio: copies of the job.
    pub numjobs: Field<u32>,
    /// fio: writes carry REQ_SYNC.
    pub sync: Field<bool>,
    /// fio: reads bypass the page cache (O_DIRECT).
    pub direct: Field<bool>,
    /// fio: bytes of I/O per copy, then it stops issuing (`io_limit` is fio's alias).
    #[serde(alias = "io_limit")]
    pub io_size: Field<Size>,
    /// fio: I/Os per copy, then it stops issuing.
    pub number_ios: Field<u64>,
    /// fio: when each copy starts.
    pub startdelay: Field<Duration>,
    /// buffered-writer: writeback request size.
    pub chunk: Field<Size>,
    /// buffered-writer: background threshold.
    pub background: Field<Size>,
    /// buffered-writer: dirty limit.
    pub dirty_limit: Field<Size>,
}

impl RawWorkload {
    /// Fields present in the file, with their locations (`name` and `kind` excluded).
    pub fn present(&self) -> Vec<(&'static str, Location)> {
        let mut v = Vec::new();
        push(&mut v, "rw", &self.rw);
        push(&mut v, "rwmixread", &self.rwmixread);
        push(&mut v, "bs", &self.bs);
        push(&mut v, "size", &self.size);
        push(&mut v, "offset", &self.offset);
        push(&mut v, "iodepth", &self.iodepth);
        push(&mut v, "rate", &self.rate);
        push(&mut v, "arrivals", &self.arrivals);
        push(&mut v, "think", &self.think);
        push(&mut v, "numjobs", &self.numjobs);
        push(&mut v, "sync", &self.sync);
        push(&mut v, "direct", &self.direct);
        push(&mut v, "io_size", &self.io_size);
        push(&mut v, "number_ios", &self.number_ios);
        push(&mut v, "startdelay", &self.startdelay);
        push(&mut v, "chunk", &self.chunk);
        push(&mut v, "background", &self.background);
        push(&mut v, "dirty_limit", &self.dirty_limit);
        v
    }
}

/// Distribution kinds (`kind:` inside a distribution map).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DistKind {
    /// Constant.
    Deterministic,
    /// Exponential.
    Exponential,
    /// Uniform.
    Uniform,
    /// Lognormal.
    Lognormal,
    /// Empirical.
    Empirical,
}

impl DistKind {
    /// The name as written in YAML.
    pub fn name(self) -> &'static str {
        match self {
            DistKind::Deterministic => "deterministic",
            DistKind::Exponential => "exponential",
            DistKind::Uniform => "uniform",
            DistKind::Lognormal => "lognormal",
            DistKind::Empirical => "empirical",
        }
    }
}

/// The map form of a distribution: a kind and the parameters that kind takes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDistMap {
    /// Which distribution.
    pub kind: Field<DistKind>,
    /// Exponential, lognormal: mean.
    pub mean: Field<Duration>,
    /// Deterministic: the value.
    pub value: Field<Duration>,
    /// Uniform: lower bound.
    pub low: Field<Duration>,
    /// Uniform: upper bound.
    pub high: Field<Duration>,
    /// Lognormal: standard deviation.
    pub stddev: Field<Duration>,
    /// Empirical: the observed values.
    pub values: Field<Vec<Spanned<Duration>>>,
}

impl RawDistMap {
    /// Parameter fields present in the file, with their locations (`kind` excluded).
    pub fn present(&self) -> Vec<(&'static str, Location)> {
        let mut v = Vec::new();
        push(&mut v, "mean", &self.mean);
        push(&mut v, "value", &self.value);
        push(&mut v, "low", &self.low);
        push(&mut v, "high", &self.high);
        push(&mut v, "stddev", &self.stddev);
        push(&mut v, "values", &self.values);
        v
    }
}

/// A distribution as written: a bare duration (deterministic) or a map with `kind:`.
///
/// Read with a visitor (`visit_str` / `visit_map`) rather than an untagged enum, so a bad
/// duration says what is wrong with it instead of "did not match any variant".
#[derive(Debug, Clone)]
pub enum RawDistribution {
    /// `think: 1ms`.
    Fixed(Duration),
    /// `think: {kind: exponential, mean: 2ms}`.
    Map(Box<RawDistMap>),
}

impl<'de> Deserialize<'de> for RawDistribution {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawDistribution;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a duration (deterministic) or a map such as {kind: exponential, mean: 1ms}",
                )
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawDistribution, E> {
                Duration::deserialize(de::value::U64Deserializer::<E>::new(v))
                    .map(RawDistribution::Fixed)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawDistribution, E> {
                Duration::deserialize(de::value::I64Deserializer::<E>::new(v))
                    .map(RawDistribution::Fixed)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawDistribution, E> {
                Duration::deserialize(de::value::F64Deserializer::<E>::new(v))
                    .map(RawDistribution::Fixed)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawDistribution, E> {
                Duration::deserialize(de::value::StrDeserializer::<E>::new(v))
                    .map(RawDistribution::Fixed)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawDistribution, A::Error> {
                RawDistMap::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|m| RawDistribution::Map(Box::new(m)))
            }
        }
        d.deserialize_any(V)
    }
}

/// Deep merge of a variant's `set:` over the base file, on the parsed structs so that every
/// value keeps the location it was written at.
pub(crate) trait Merge {
    /// Applies `over` on top of `self`.
    fn merge(&mut self, over: Self);
}

/// A nested mapping: merged field by field when both sides have it.
fn merge_map<T: Merge>(base: &mut Field<T>, over: Field<T>) {
    match (base.as_mut(), over) {
        (Some(b), Some(o)) => b.value.merge(o.value),
        (None, Some(o)) => *base = Some(o),
        (_, None) => {}
    }
}

/// A scalar or a list: replaced when the override has it.
fn replace<T>(base: &mut Field<T>, over: Field<T>) {
    if over.is_some() {
        *base = over;
    }
}

/// Implements [`Merge`] for a struct whose every field is listed once, either under `maps`
/// (merged recursively) or `values` (replaced). The destructuring makes a forgotten field a
/// compile error. With `kind`, an override that names a different kind replaces the whole
/// mapping instead: a `seek_min` of an hdd base must not survive into an nvme variant.
macro_rules! merge_fields {
    ($ty:ty; $(kind: $kind:ident;)? maps: [$($m:ident),*]; values: [$($v:ident),*]) => {
        impl Merge for $ty {
            fn merge(&mut self, over: Self) {
                $(
                    let differs = match (&self.$kind, &over.$kind) {
                        (Some(a), Some(b)) => a.value != b.value,
                        _ => false,
                    };
                    if differs {
                        *self = over;
                        return;
                    }
                )?
                let Self { $($m,)* $($v,)* } = over;
                $(merge_map(&mut self.$m, $m);)*
                $(replace(&mut self.$v, $v);)*
            }
        }
    };
}

merge_fields!(RawScenario;
    maps: [kernel, device, block, crypt, memory];
    values: [name, description, seed, duration, warmup, max_events, replications, cpus, policies,
             workloads, variants]);
merge_fields!(RawKernel;
    maps: [];
    values: [hz, version, patches, cwait_class, kswapd_nap, skip_below_min, wait_iff_congested,
             force_highorder, restart_wakes_kswapd]);
merge_fields!(RawDevice;
    kind: kind;
    maps: [service];
    values: [kind, seek_min, seek_full, revolution, transfer_rate, capacity, queue_depth, latency,
             channels, overhead]);
merge_fields!(RawBlock;
    maps: [];
    values: [mode, nr_requests, elevator, plug, unplug_threshold, low_latency, slice_sync,
             slice_async, slice_idle, quantum]);
merge_fields!(RawCrypt;
    maps: [cost];
    values: [cipher, encrypt_rate, decrypt_rate, per_sector_cost, hop_cost, engine,
             async_queue_limit, async_rate, unplug_after_submit]);
merge_fields!(RawMemory;
    maps: [];
    values: [ram, min_free_kbytes, unreclaimable, mapped, page_cache, coalesce, scan_cost,
             page_pool, min_bio_pages, atomic]);
merge_fields!(RawDistMap;
    kind: kind;
    maps: [];
    values: [kind, mean, value, low, high, stddev, values]);

impl Merge for RawDistribution {
    fn merge(&mut self, over: Self) {
        match (self, over) {
            (RawDistribution::Map(a), RawDistribution::Map(b)) => a.merge(*b),
            (this, over) => *this = over,
        }
    }
}

fn push<T>(v: &mut Vec<(&'static str, Location)>, name: &'static str, field: &Field<T>) {
    if let Some(s) = field {
        v.push((name, s.referenced));
    }
}

/// Where a node of the YAML document starts and the field path that leads to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodePath {
    /// 1-based line.
    pub line: u64,
    /// 1-based column.
    pub column: u64,
    /// `workloads[1].rate`; empty for the document root.
    pub path: String,
}

/// What the event walk found in a document.
#[derive(Debug, Default)]
pub(crate) struct Outline {
    /// Every node (keys included) in document order.
    pub nodes: Vec<NodePath>,
    /// Whether the document holds no content at all (nothing, comments, `---`, `~`).
    pub empty: bool,
}

enum Frame {
    Map { path: String, key: Option<String> },
    Seq { path: String, next: usize },
}

fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// Walks the YAML events of `text` and records the field path of every node, stopping quietly at
/// the first syntax error (serde-saphyr reports that error itself), or after one node more than
/// the loader's budget ([`super::MAX_YAML_NODES`]): serde-saphyr refuses such a file, and the
/// walk must not cost more memory and time than the parse it serves.
pub(crate) fn outline(text: &str) -> Outline {
    let mut out = Outline {
        nodes: Vec::new(),
        empty: true,
    };
    let mut stack: Vec<Frame> = Vec::new();
    let mut parser = Parser::new_from_str(text);
    while let Some(Ok((event, span))) = parser.next_event() {
        if out.nodes.len() > super::MAX_YAML_NODES {
            break;
        }
        let (line, column) = (span.start.line() as u64, span.start.col() as u64 + 1);
        let (is_start, scalar) = match &event {
            Event::Scalar(value, style, _, _) => (false, Some((value.to_string(), *style))),
            Event::MappingStart(..) | Event::SequenceStart(..) => (true, None),
            Event::Alias(_) => (false, Some((String::from("*alias"), ScalarStyle::Plain))),
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
                continue;
            }
            _ => continue,
        };
        // The path of this node; a mapping key is recorded and then waits for its value.
        let mut key_of: Option<String> = None;
        let path = match stack.last_mut() {
            None => String::new(),
            Some(Frame::Seq { path, next }) => {
                let p = format!("{path}[{next}]");
                *next += 1;
                p
            }
            Some(Frame::Map { path, key }) => match key.take() {
                Some(k) => join(path, &k),
                None => {
                    let k = scalar
                        .as_ref()
                        .map(|(s, _)| s.clone())
                        .unwrap_or_else(|| String::from("?"));
                    *key = Some(k.clone());
                    key_of = Some(path.clone());
                    join(path, &k)
                }
            },
        };
        if let Some(map_path) = key_of {
            out.nodes.push(NodePath { line, column, path });
            if is_start {
                // A complex key: its inner nodes are attributed to `<map>.?`.
                stack.push(Frame::Seq {
                    path: join(&map_path, "?"),
                    next: 0,
                });
            }
            continue;
        }
        let root_null = stack.is_empty()
            && matches!(&scalar, Some((s, ScalarStyle::Plain)) if s.is_empty() || s == "~" || s == "null");
        if !root_null {
            out.empty = false;
        }
        out.nodes.push(NodePath {
            line,
            column,
            path: path.clone(),
        });
        if is_start {
            stack.push(match event {
                Event::MappingStart(..) => Frame::Map { path, key: None },
                _ => Frame::Seq { path, next: 0 },
            });
        }
    }
    out
}

impl Outline {
    /// The field path at a location: of the innermost node starting there (or, failing that,
    /// the last node before it); with `outermost`, of the outermost node at that position (the
    /// mapping itself rather than its first key, for "missing field" errors).
    pub fn path_at(&self, line: u64, column: u64, outermost: bool) -> Option<&str> {
        let before: Vec<&NodePath> = self
            .nodes
            .iter()
            .filter(|n| (n.line, n.column) <= (line, column))
            .collect();
        let last = before.last()?;
        let pick = if outermost {
            before
                .iter()
                .find(|n| (n.line, n.column) == (last.line, last.column))
                .unwrap_or(last)
        } else {
            last
        };
        Some(pick.path.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "\
name: x
device:
  kind: nvme
  latency: 45us
workloads:
  - kind: fio
    rate: 2000/s
  - kind: gitk
    think: {kind: exponential, mean: 2ms}
policies: [fifo, split]
";

    #[test]
    fn outline_maps_locations_to_paths() {
        let o = outline(DOC);
        assert!(!o.empty);
        assert_eq!(o.path_at(1, 1, false), Some("name"));
        assert_eq!(o.path_at(1, 7, false), Some("name"));
        assert_eq!(o.path_at(3, 3, false), Some("device.kind"));
        assert_eq!(o.path_at(3, 3, true), Some("device"));
        assert_eq!(o.path_at(4, 12, false), Some("device.latency"));
        assert_eq!(o.path_at(7, 11, false), Some("workloads[0].rate"));
        assert_eq!(o.path_at(8, 5, false), Some("workloads[1].kind"));
        assert_eq!(o.path_at(9, 39, false), Some("workloads[1].think.mean"));
        assert_eq!(o.path_at(10, 18, false), Some("policies[1]"));
    }

    #[test]
    fn outline_detects_empty_documents() {
        for text in ["", "\n\n", "# only a comment\n", "---\n", "~\n", "null\n"] {
            assert!(outline(text).empty, "{text:?}");
        }
        assert!(!outline("a: 1\n").empty);
        assert!(!outline("just a string\n").empty);
    }

    #[test]
    fn merge_is_deep_for_mappings_and_keeps_every_span() {
        let base: RawScenario = serde_saphyr::from_str(
            "kernel:\n  hz: 1000\n  patches: [force-highorder]\ndevice:\n  kind: hdd5400\n  seek_min: 3ms\ncrypt:\n  cost: {kind: uniform, low: 1ms, high: 2ms}\npolicies: [fifo, split]\n",
        )
        .unwrap();
        let over: RawScenario = serde_saphyr::from_str(
            "kernel:\n  version: 2.6.30\ndevice:\n  kind: hdd5400\n  capacity: 1TB\ncrypt:\n  cost: {high: 3ms}\npolicies: [fifo]\nmemory: {ram: 1GiB}\n",
        )
        .unwrap();
        let mut m = base.clone();
        m.merge(over);
        let k = m.kernel.as_ref().unwrap();
        assert_eq!(k.value.hz.as_ref().map(|h| h.value), Some(1000), "kept");
        assert_eq!(
            k.value.hz.as_ref().unwrap().referenced.line(),
            2,
            "base line"
        );
        let v = k.value.version.as_ref().unwrap();
        assert_eq!((v.value.0.as_str(), v.referenced.line()), ("2.6.30", 2));
        assert_eq!(k.value.patches.as_ref().unwrap().value.len(), 1);
        let d = &m.device.as_ref().unwrap().value;
        assert!(
            d.seek_min.is_some() && d.capacity.is_some(),
            "same kind: merged"
        );
        let Some(RawDistribution::Map(cost)) = m
            .crypt
            .as_ref()
            .unwrap()
            .value
            .cost
            .as_ref()
            .map(|c| &c.value)
        else {
            panic!("map")
        };
        assert!(cost.low.is_some());
        assert_eq!(
            cost.high.as_ref().unwrap().referenced.line(),
            7,
            "from the override"
        );
        assert_eq!(m.policies.as_ref().unwrap().value.len(), 1, "lists replace");
        assert!(m.memory.is_some(), "absent in the base: taken whole");
        // A different kind replaces the mapping whole.
        let mut m = base;
        m.merge(serde_saphyr::from_str("device: {kind: nvme}\n").unwrap());
        let d = &m.device.as_ref().unwrap().value;
        assert!(d.seek_min.is_none());
        assert_eq!(d.kind.as_ref().unwrap().value, DeviceKind::Nvme);
    }

    #[test]
    fn null_is_a_cipher_name() {
        #[derive(Deserialize)]
        struct C {
            #[serde(default, deserialize_with = "present_cipher")]
            cipher: Field<CipherName>,
        }
        let c: C = serde_saphyr::from_str("cipher: null\n").unwrap();
        assert_eq!(c.cipher.map(|s| s.value), Some(CipherName::Null));
        let c: C = serde_saphyr::from_str("cipher: aes-ni\n").unwrap();
        assert_eq!(c.cipher.map(|s| s.value), Some(CipherName::AesNi));
        let c: C = serde_saphyr::from_str("{}\n").unwrap();
        assert!(c.cipher.is_none());
    }

    #[test]
    fn distributions_take_a_bare_duration_or_a_map() {
        #[derive(Debug, Deserialize)]
        struct T {
            think: Spanned<RawDistribution>,
        }
        let t: T = serde_saphyr::from_str("think: 1ms\n").unwrap();
        assert!(matches!(t.think.value, RawDistribution::Fixed(d) if d.0.as_ns() == 1_000_000));
        let t: T =
            serde_saphyr::from_str("think:\n  kind: uniform\n  low: 1ms\n  high: 2ms\n").unwrap();
        let RawDistribution::Map(m) = t.think.value else {
            panic!("map form")
        };
        assert_eq!(m.kind.map(|k| k.value), Some(DistKind::Uniform));
        assert_eq!(m.high.map(|h| h.referenced.line()), Some(4));
        let e =
            serde_saphyr::from_str::<T>("think:\n  kind: uniform\n  low: 1 parsec\n").unwrap_err();
        assert_eq!(e.location().map(|l| l.line()), Some(3));
    }
}
