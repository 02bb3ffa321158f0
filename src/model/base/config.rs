//! The model's parameters: a validated, fully resolved scenario, every default filled in and
//! every unit converted.
//!
//! The model owns these types; `scenario::load()` is their only producer from YAML, and the model
//! never sees YAML or imports the scenario layer. Sizes are bytes (`u64`), rates are bytes or operations per second (`f64`), times are
//! [`SimDuration`] nanoseconds.

use crate::engine::SimDuration;
use serde::{Deserialize, Serialize};

mod app;
mod blkmq;
mod cfq;
pub use app::*;
pub use blkmq::*;
pub use cfq::*;

/// A scenario ready to run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Scenario {
    /// Scenario name (defaults to the file stem).
    pub name: String,
    /// One-line purpose shown by `qsim list` and at the head of reports.
    pub description: String,
    /// Master seed of every random stream.
    pub seed: u64,
    /// Simulated run length, warm-up included.
    pub duration: SimDuration,
    /// Initial period excluded from every statistic.
    pub warmup: SimDuration,
    /// Event budget: a run that would need more events stops and is reported saturated.
    pub max_events: u64,
    /// Replications per policy and variant, each with its own random streams.
    pub replications: u32,
    /// Number of CPUs that crypt threads, kcryptd_io and inline contexts share.
    pub cpus: u32,
    /// Kernel timing constants.
    pub kernel: KernelConfig,
    /// The disk beneath dm-crypt.
    pub device: DeviceConfig,
    /// The request queue of that disk.
    pub block: BlockConfig,
    /// dm-crypt settings shared by every policy.
    pub crypt: CryptConfig,
    /// Queue policies to compare, in report order (names from the policy registry, or `none`).
    pub policies: Vec<String>,
    /// Workloads, all running at once.
    pub workloads: Vec<WorkloadConfig>,
    /// Memory pressure: `None` (no `memory:` section) means unlimited memory, where every
    /// allocation succeeds and nothing reclaims.
    pub memory: Option<MemoryConfig>,
    /// Named variants of the scenario; empty when the file lists none. Each one is the whole
    /// scenario with the variant's overrides applied (its own `variants` is empty).
    pub variants: Vec<Variant>,
    /// The sweep or sensitivity study the variants were expanded from (`sweep:` or
    /// `sensitivity:`), which the report lays out as tables and knee or tornado charts; `None`
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepPlan>,
    /// The options a fio job file gave, as written (empty for a scenario file), which fio's
    /// JSON lists as `global options` and `job options`.
    #[serde(default, skip_serializing_if = "FioGiven::is_empty")]
    pub fio_given: FioGiven,
    /// The machine file `machine:` names, as written (`None`: a preset or none), for `qsim check`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_file: Option<String>,
}

/// The options a fio job file gave explicitly, each `(name, value)` as written (a bare flag
/// such as `time_based` with the value `""`), the last of each name kept, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FioGiven {
    /// The `[global]` sections' options before the first job.
    pub global: Vec<(String, String)>,
    /// The first job section's own options (the job the report's `job options` describe).
    pub job: Vec<(String, String)>,
}

impl FioGiven {
    /// Whether no option was given (a scenario file).
    pub fn is_empty(&self) -> bool {
        self.global.is_empty() && self.job.is_empty()
    }

    /// The value option `name` was given, as written (empty for a bare option): the job's
    /// own, else its `[global]` one.
    pub fn get(&self, name: &str) -> Option<&str> {
        let mut all = self.job.iter().chain(&self.global);
        all.find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// One named variant: the scenario with some fields overridden (a kernel version, a patch).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Variant {
    /// The variant's name, as the report labels it.
    pub name: String,
    /// The resolved scenario of this variant (`variants` empty).
    pub scenario: Box<Scenario>,
}

/// Kernel constants that set timeouts, and the memory-management behaviour of a version.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KernelConfig {
    /// Timer frequency; kernel timeouts `HZ/x` truncate to whole jiffies.
    pub hz: u32,
    /// The kernel version whose reclaim behaviour is simulated (default 2.6.32).
    pub version: KernelVersion,
    /// Names of the 2009 test patches switched on, as written (for reports).
    pub patches: Vec<String>,
    /// The resolved switches: the version's defaults, then the patches, then explicit knobs.
    pub vm: VmBehaviour,
}

/// Kernel versions whose memory-management behaviour qsim distinguishes (docs/model/kernels.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum KernelVersion {
    /// 2.6.30: every mm `congestion_wait` passes WRITE (= 1), i.e. waits on the SYNC queue.
    #[serde(rename = "2.6.30")]
    V2_6_30,
    /// 2.6.31: waits moved to the ASYNC queue.
    #[serde(rename = "2.6.31")]
    V2_6_31,
    /// 2.6.32: a slow-path restart wakes kswapd again.
    #[serde(rename = "2.6.32")]
    V2_6_32,
    /// 2.6.33: kswapd naps HZ/10 and checks for premature sleep, and skips its congestion wait
    /// below min; CFQ ramps async depth from the last delayed sync request and scales slices
    /// into a target latency.
    #[serde(rename = "2.6.33")]
    V2_6_33,
    /// 2.6.37: `wait_iff_congested` in the allocator and direct reclaim.
    #[serde(rename = "2.6.37")]
    V2_6_37,
    /// 4.19 (as its stable series has it): dm-crypt's unbound kcryptd, the sorting
    /// `dmcrypt_write` thread, `same_cpu_crypt` and `submit_from_crypt_cpus`; both workqueues
    /// `WQ_HIGHPRI`.
    #[serde(rename = "4.19")]
    V4_19,
    /// 5.4 (stable): 4.19's layout with `WQ_HIGHPRI` reverted.
    #[serde(rename = "5.4")]
    V5_4,
    /// 5.8: the layout Cloudflare measured in 2020.
    #[serde(rename = "5.8")]
    V5_8,
    /// 5.9: `no_read_workqueue` and `no_write_workqueue`; a read completed in hard IRQ is
    /// decrypted in a tasklet.
    #[serde(rename = "5.9")]
    V5_9,
    /// 6.6 (stable, with "dm-crypt, dm-verity: disable tasklets"): a hard-IRQ completion falls
    /// back to the kcryptd workqueue.
    #[serde(rename = "6.6")]
    V6_6,
    /// 6.9: the hard-IRQ fallback is the BH workqueue (softirq, same CPU).
    #[serde(rename = "6.9")]
    V6_9,
    /// 6.10: the `high_priority` flag.
    #[serde(rename = "6.10")]
    V6_10,
    /// 6.11: bios over `max_read_size` / `max_write_size` (128 KiB) are split.
    #[serde(rename = "6.11")]
    V6_11,
    /// 6.12 (LTS): 6.11's dm-crypt.
    #[serde(rename = "6.12")]
    V6_12,
}

impl KernelVersion {
    /// Every version, oldest first.
    pub const ALL: [KernelVersion; 14] = [
        KernelVersion::V2_6_30,
        KernelVersion::V2_6_31,
        KernelVersion::V2_6_32,
        KernelVersion::V2_6_33,
        KernelVersion::V2_6_37,
        KernelVersion::V4_19,
        KernelVersion::V5_4,
        KernelVersion::V5_8,
        KernelVersion::V5_9,
        KernelVersion::V6_6,
        KernelVersion::V6_9,
        KernelVersion::V6_10,
        KernelVersion::V6_11,
        KernelVersion::V6_12,
    ];

    /// Whether this is a kernel after 2.6.x: blk-mq only, dm-crypt's unbound workqueue layout,
    /// and no memory model (qsim's reclaim rules stop at 2.6.37).
    pub fn is_modern(self) -> bool {
        self >= KernelVersion::V4_19
    }

    /// dm-crypt's rules in this version (docs/model/crypt.md §1); `None` before 4.x, where
    /// the queue policies are the layouts.
    pub fn dmcrypt(self) -> Option<DmCryptRules> {
        use KernelVersion::*;
        if !self.is_modern() {
            return None;
        }
        Some(DmCryptRules {
            highpri_default: self == V4_19,
            bypass_flags: self >= V5_9,
            hardirq_fallback: match self {
                V6_6 => HardirqFallback::Workqueue,
                v if v >= V6_9 => HardirqFallback::BhWorkqueue,
                _ => HardirqFallback::Tasklet,
            },
            high_priority_flag: self >= V6_10,
            split_bios: self >= V6_11,
        })
    }

    /// The version as written (`2.6.32`).
    pub fn name(self) -> &'static str {
        match self {
            KernelVersion::V2_6_30 => "2.6.30",
            KernelVersion::V2_6_31 => "2.6.31",
            KernelVersion::V2_6_32 => "2.6.32",
            KernelVersion::V2_6_33 => "2.6.33",
            KernelVersion::V2_6_37 => "2.6.37",
            KernelVersion::V4_19 => "4.19",
            KernelVersion::V5_4 => "5.4",
            KernelVersion::V5_8 => "5.8",
            KernelVersion::V5_9 => "5.9",
            KernelVersion::V6_6 => "6.6",
            KernelVersion::V6_9 => "6.9",
            KernelVersion::V6_10 => "6.10",
            KernelVersion::V6_11 => "6.11",
            KernelVersion::V6_12 => "6.12",
        }
    }

    /// The version's own switches, before patches and knobs (the feature table of
    /// docs/model/kernels.md).
    pub fn defaults(self) -> VmBehaviour {
        use KernelVersion::*;
        VmBehaviour {
            cwait_class: if self == V2_6_30 {
                CwaitClass::Sync
            } else {
                CwaitClass::Async
            },
            kswapd_nap: self >= V2_6_33,
            skip_below_min: self >= V2_6_33,
            wait_iff_congested: self >= V2_6_37,
            force_highorder: false,
            restart_wakes_kswapd: self >= V2_6_32,
            congestion_both: false,
        }
    }

    /// The CFQ rules of the version's `block/cfq-iosched.c` (docs/model/block.md §5).
    pub fn cfq(self) -> CfqRules {
        use KernelVersion::*;
        CfqRules {
            has_low_latency: self >= V2_6_32,
            drain_async_before_sync: self >= V2_6_32,
            seeky_idle_with_latency: self >= V2_6_32,
            ramp_from_delayed_sync: self >= V2_6_33,
            target_latency: self >= V2_6_33,
            lone_sync_queue_idles: self >= V2_6_33,
            next_after_each_dispatch: self >= V2_6_32,
            idle_within_slice_only: self >= V2_6_32,
            seek_per_context: self < V2_6_33,
            sole_queue_unlimited: self >= V2_6_33,
            close_cooperator: self < V2_6_33,
            coop_preempt_marks: self == V2_6_32,
        }
    }
}

/// How dm-crypt's `no_read_workqueue` handles a read completed in hard-IRQ context (or with
/// interrupts off), where it may not decrypt inline (`kcryptd_queue_crypt()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HardirqFallback {
    /// 5.9–5.10: a tasklet, i.e. softirq on the same CPU.
    Tasklet,
    /// Kernels with "dm-crypt, dm-verity: disable tasklets" (2024, stable 6.6): the normal
    /// kcryptd workqueue, as if the flag were off.
    Workqueue,
    /// 6.9 and later: `system_bh_wq`, softirq on the same CPU.
    BhWorkqueue,
}

/// What a kernel's dm-crypt does, for the versions after 2.6.x ([`KernelVersion::dmcrypt`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DmCryptRules {
    /// kcryptd and kcryptd_io are `WQ_HIGHPRI` whatever the table says (4.x until 5.5).
    pub highpri_default: bool,
    /// `no_read_workqueue` and `no_write_workqueue` exist (5.9+).
    pub bypass_flags: bool,
    /// Where `no_read_workqueue` sends a hard-IRQ completion.
    pub hardirq_fallback: HardirqFallback,
    /// The `high_priority` flag exists (6.10+).
    pub high_priority_flag: bool,
    /// Bios larger than `max_read_size` / `max_write_size` are split (6.11+).
    pub split_bios: bool,
}

impl DmCryptRules {
    /// The cryptsetup `--perf-*` flags this kernel's dm-crypt accepts: `same_cpu_crypt` and
    /// `submit_from_crypt_cpus` always, the two no-workqueue flags from 5.9, `high_priority`
    /// from 6.10.
    pub fn flags(&self) -> crate::model::base::flags::DmFlags {
        use crate::model::base::flags::DmFlags;
        let mut f = DmFlags::SAME_CPU_CRYPT.union(DmFlags::SUBMIT_FROM_CRYPT_CPUS);
        if self.bypass_flags {
            f = f
                .union(DmFlags::NO_READ_WORKQUEUE)
                .union(DmFlags::NO_WRITE_WORKQUEUE);
        }
        if self.high_priority_flag {
            f = f.union(DmFlags::HIGH_PRIORITY);
        }
        f
    }
}

/// Which global `congestion_wait` queue the mm and writeback call sites sleep on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CwaitClass {
    /// The SYNC queue (2.6.30 passes WRITE = 1 = `BLK_RW_SYNC`).
    Sync,
    /// The ASYNC queue (2.6.31 and later).
    Async,
}

impl CwaitClass {
    /// Index of the queue (0 = SYNC, 1 = ASYNC, as the block layer's classes).
    pub fn index(self) -> usize {
        match self {
            CwaitClass::Sync => 0,
            CwaitClass::Async => 1,
        }
    }
}

/// The memory-management switches one run uses (docs/model/kernels.md). Mel Gorman's 2009
/// patches map onto them by number (`scenario::kernel::PATCHES`): 1 `restart_wakes_kswapd`,
/// 3 `congestion_both`, 4 `kswapd_nap`, 5 `skip_below_min`, 6 `crypt.io_queues: mason-v3`;
/// 2 has no switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct VmBehaviour {
    /// Queue that kswapd, direct reclaim, the allocator's retry, balance_dirty_pages and
    /// dm-crypt's out-of-pages nap sleep on.
    pub cwait_class: CwaitClass,
    /// After balancing, kswapd naps HZ/10 and rechecks before sleeping (2.6.33+, f50de2d3;
    /// patch 4).
    pub kswapd_nap: bool,
    /// kswapd skips its congestion wait while a zone is below min (2.6.33, bb3ab596; patch 5).
    pub skip_below_min: bool,
    /// The allocator's and direct reclaim's waits are `wait_iff_congested` (2.6.37).
    pub wait_iff_congested: bool,
    /// kswapd keeps the requested order after an unproductive sweep instead of dropping to 0
    /// (a what-if; Mel's `force-highorder` test hack was a driver change, not this).
    pub force_highorder: bool,
    /// A slow-path restart wakes kswapd again (2.6.32+, patch 1).
    pub restart_wakes_kswapd: bool,
    /// Patch 3, "congestion-both" (never merged): direct reclaim's and the allocator's waits
    /// sleep on ASYNC, then on SYNC for what is left of the timeout; kswapd's are unchanged.
    pub congestion_both: bool,
}

/// The `memory:` section: one lowmem zone and what presses on it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryConfig {
    /// Size of the zone (the machine's low memory), bytes.
    pub ram: u64,
    /// `min_free_kbytes`: from the kernel's formula for `ram` unless given.
    pub min_free_kbytes: u64,
    /// Memory that never becomes free (kernel, anonymous memory without swap, pages in use),
    /// bytes.
    pub unreclaimable: u64,
    /// The part of `unreclaimable` that sits on the file LRU (mapped and referenced pages:
    /// reclaim scans them and rotates them, never frees them), bytes.
    pub mapped: u64,
    /// Clean page cache at the start, bytes; the rest of `ram` starts free.
    pub page_cache: u64,
    /// Probability that a freed block merges with a free block of its order (fragmentation).
    pub coalesce: f64,
    /// CPU time reclaim spends per page scanned.
    pub scan_cost: SimDuration,
    /// dm-crypt's `page_pool` reserve in pages (`MIN_POOL_PAGES`, 32).
    pub page_pool: u32,
    /// Bounce pages a write clone may wait for before it goes partial (`MIN_BIO_PAGES`, 8).
    pub min_bio_pages: u32,
    /// GFP_ATOMIC allocation streams (drivers' receive buffers).
    pub atomic: Vec<AtomicStream>,
    /// Swap space, bytes (0: no swap; anonymous memory is then never reclaimed).
    pub swap: u64,
    /// Byte offset of the swap volume on the device (inside dm-crypt, beside the files).
    pub swap_offset: u64,
    /// `vm.swappiness` (0..=100): the anon side's weight in `get_scan_ratio`.
    pub swappiness: u32,
}

/// A stream of GFP_ATOMIC allocations, each freed after a holding time.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AtomicStream {
    /// Name (for the random streams and the report).
    pub name: String,
    /// Preset it came from (`iwlagn`, or `custom`).
    pub preset: String,
    /// Allocations per second (a bandwidth is divided by the buffer size).
    pub rate: f64,
    /// Poisson arrivals (`true`) or evenly spaced.
    pub poisson: bool,
    /// Probability of each order, indexed by order (sums to 1; at most order 10).
    pub orders: Vec<f64>,
    /// How long the driver holds a buffer before freeing it.
    pub hold: Distribution,
    /// Buffers allocated at each arrival (a driver refilling its receive ring in one go).
    pub burst: u32,
    /// The TCP receive path these buffers feed, when a process reads them (`from:` on a
    /// buffered writer); the stream's `rate`, `hold` and `burst` are then unused.
    #[serde(default)]
    pub rx: Option<RxConfig>,
}

/// A NIC's receive ring and the TCP socket behind it (`docs/model/memory.md` §7a).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RxConfig {
    /// The buffered writer that reads the socket (its index among the buffered writers).
    pub reader: u32,
    /// Receive descriptors in the NIC's ring.
    pub ring: u32,
    /// Payload bytes per segment.
    pub mss: u32,
    /// Buddy order of one receive buffer.
    pub order: u32,
    /// Bytes each buffer charges against the socket's receive buffer (`skb->truesize`).
    pub truesize: u32,
    /// `tcp_rmem`: minimum, initial and largest receive buffer, bytes.
    pub rmem: [u64; 3],
    /// Round-trip time: autotuning's measuring period.
    pub rtt: SimDuration,
    /// The sender's paced throughput, bytes per second.
    pub bandwidth: f64,
}

impl KernelConfig {
    /// `hz` with 2.6.32's behaviour and no patches.
    pub fn new(hz: u32) -> Self {
        KernelConfig {
            hz,
            version: KernelVersion::V2_6_32,
            patches: Vec::new(),
            vm: KernelVersion::V2_6_32.defaults(),
        }
    }
    /// One jiffy.
    pub fn jiffy(&self) -> SimDuration {
        SimDuration::from_ns(1_000_000_000 / u64::from(self.hz))
    }
    /// The kernel expression `HZ / div` (integer jiffies, truncated) as a duration.
    pub fn hz_div(&self, div: u32) -> SimDuration {
        SimDuration::from_ns(u64::from(self.hz / div) * self.jiffy().as_ns())
    }
    /// Unplug delay: `3 * HZ / 1000` jiffies with a floor of one jiffy (4 ms at HZ=250).
    pub fn unplug_delay(&self) -> SimDuration {
        let j = (3 * self.hz / 1000).max(1);
        SimDuration::from_ns(u64::from(j) * self.jiffy().as_ns())
    }
}

/// A service-time (or think-time, or inter-arrival) distribution, in nanoseconds.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Distribution {
    /// Always `value`.
    Deterministic {
        /// The constant value.
        value: SimDuration,
    },
    /// Exponential with the given mean.
    Exponential {
        /// Mean.
        mean: SimDuration,
    },
    /// Uniform on `[low, high]`.
    Uniform {
        /// Lower bound.
        low: SimDuration,
        /// Upper bound.
        high: SimDuration,
    },
    /// Lognormal with the given mean and standard deviation (of the value, not of its log).
    Lognormal {
        /// Mean of the value.
        mean: SimDuration,
        /// Standard deviation of the value.
        stddev: SimDuration,
    },
    /// Draw uniformly among the listed values (an empirical distribution).
    Empirical {
        /// Observed values (1 to 100,000, the loader's `MAX_EMPIRICAL_VALUES`); each is equally likely.
        values: Vec<SimDuration>,
    },
}

/// The disk's service model.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum DeviceConfig {
    /// A spinning disk: seek (by distance) + rotation + transfer, one head.
    Hdd(HddConfig),
    /// A fixed delay (infinite server) in series with `channels` servers of given service time.
    Nvme(NvmeConfig),
    /// Any service-time distribution on `channels` parallel servers.
    Generic(GenericDeviceConfig),
}

/// Spinning-disk parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HddConfig {
    /// Preset it came from (`hdd5400`, `hdd7200`, or `custom`).
    pub preset: String,
    /// Track-to-track seek (distance > 0 but tiny).
    pub seek_min: SimDuration,
    /// Full-stroke seek; seek(d) = min + (full - min) * sqrt(d / capacity).
    pub seek_full: SimDuration,
    /// Time of one revolution; rotational delay is uniform on [0, revolution).
    pub revolution: SimDuration,
    /// Media transfer rate in bytes per second.
    pub transfer_rate: f64,
    /// Capacity in bytes (sets seek distances).
    pub capacity: u64,
    /// Requests the drive accepts at once (NCQ depth); served one at a time in arrival order.
    pub queue_depth: u32,
    /// Drives striped as one md RAID0 array behind one HBA (1: a single disk); each has its own
    /// head and its own queue (docs/model/device.md §3d).
    pub disks: u32,
    /// The array's chunk (md's `chunk_size`), bytes; unused for a single disk.
    pub chunk: u64,
}

/// NVMe-like parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NvmeConfig {
    /// Fixed latency every request pays in parallel (an infinite server).
    pub latency: SimDuration,
    /// Parallel channels of the bottleneck stage.
    pub channels: u32,
    /// Mean per-request controller cost in the bottleneck stage (exponentially distributed).
    pub overhead: SimDuration,
    /// Transfer rate of one channel, bytes per second.
    pub transfer_rate: f64,
    /// Requests the device accepts at once.
    pub queue_depth: u32,
    /// Controller pauses during which no command completes ([`NvmeStall::NONE`]: never).
    pub stall: NvmeStall,
    /// Drives striped as one md RAID0 array (1: a single drive); each is a whole controller
    /// with the parameters above, pausing on its own (docs/model/device.md §3e).
    pub disks: u32,
    /// The array's chunk (md's `chunk_size`), bytes; unused for a single drive.
    pub chunk: u64,
    /// Preset it came from (`nvme` or `ramdisk`; `custom` in tests), for `qsim check`.
    pub preset: String,
}

/// An NVMe controller's occasional pause (firmware housekeeping): pauses start at Poisson times
/// with mean gap `interval` (counted outside pauses) and last `length`; the bottleneck stage does
/// no work during one, so no command completes (docs/model/device.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NvmeStall {
    /// Mean time between the end of one pause and the start of the next.
    pub interval: SimDuration,
    /// Length of one pause; zero means the device never pauses.
    pub length: SimDuration,
}

impl NvmeStall {
    /// A device that never pauses.
    pub const NONE: NvmeStall = NvmeStall {
        interval: SimDuration::ZERO,
        length: SimDuration::ZERO,
    };

    /// Whether the device ever pauses.
    pub fn is_on(&self) -> bool {
        !self.length.is_zero() && !self.interval.is_zero()
    }
}

/// A device whose service time is any distribution; used by textbook validation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GenericDeviceConfig {
    /// Service time per request, independent of size.
    pub service: Distribution,
    /// Parallel servers.
    pub channels: u32,
    /// Requests the device accepts at once.
    pub queue_depth: u32,
}

/// Request queue mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QueueMode {
    /// Legacy request queue: per-class pools, congestion flags, plugging, an elevator.
    Legacy,
    /// blk-mq: a tag pool, no congestion reporting, no unplug timer, no elevator.
    BlkMq,
}

/// Elevator (I/O scheduler) for legacy queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Elevator {
    /// noop: one FIFO.
    Fifo,
    /// CFQ-like: sync and async slices, sync preempts async, idling, `low_latency`.
    Cfq,
}

/// Block-layer settings of the disk beneath dm-crypt.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BlockConfig {
    /// Legacy or blk-mq.
    pub mode: QueueMode,
    /// Requests per class (legacy) or tags (blk-mq).
    pub nr_requests: u32,
    /// Elevator (legacy only).
    pub elevator: Elevator,
    /// Plugging on (legacy only).
    pub plug: bool,
    /// Queued requests that unplug a plugged queue.
    pub unplug_threshold: u32,
    /// CFQ low_latency (2.6.32+; always off before).
    pub low_latency: bool,
    /// CFQ sync slice (HZ/10).
    pub cfq_slice_sync: SimDuration,
    /// CFQ async slice (HZ/25).
    pub cfq_slice_async: SimDuration,
    /// CFQ idle wait for more sync I/O (HZ/125).
    pub cfq_slice_idle: SimDuration,
    /// CFQ requests in flight per queue (quantum).
    pub cfq_quantum: u32,
    /// The version's CFQ rules (`KernelVersion::cfq`).
    pub cfq: CfqRules,
    /// The disk can take `CFQ_HW_QUEUE_MIN` = 5 commands at once, so CFQ's estimate of
    /// `hw_tag` (set at start, re-estimated under load from the driver's peak depth) can stay
    /// set; a shallower disk has it cleared at the first estimate.
    pub ncq_capable: bool,
    /// blk-mq's hardware queues, interrupt CPUs and scheduler (ignored by a legacy queue except
    /// for the interrupt CPU of [`crate::model::block::queue::RequestQueue::completion_site`]).
    pub mq: BlkMqConfig,
}

impl BlockConfig {
    /// Congestion turns on when a class holds this many requests: `nr - nr/8 + 1`, at most nr.
    pub fn congestion_on(&self) -> u32 {
        let nr = self.nr_requests;
        (nr - nr / 8 + 1).min(nr)
    }
    /// Congestion clears on a free that leaves fewer than this: `nr - nr/8 - nr/16 - 1`, at least 1.
    pub fn congestion_off(&self) -> u32 {
        let nr = self.nr_requests;
        (nr.saturating_sub(nr / 8 + nr / 16 + 1)).max(1)
    }
}

/// How the cipher answers.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum CryptoEngine {
    /// Synchronous CPU cipher: the calling thread pays the cost.
    Sync,
    /// Asynchronous engine with its own servers and a queue bounded in 512-byte crypto requests;
    /// overflow parks the request on the backlog and blocks the submitting thread.
    Async {
        /// Queue limit in 512-byte crypto requests (cryptd: 100 in 2.6.32).
        queue_limit: u32,
        /// Engine throughput, bytes per second (`f64::INFINITY` for the `null` cipher).
        #[serde(deserialize_with = "null_is_infinite")]
        rate: f64,
    },
}

/// A rate read back from JSON, which writes the `null` cipher's infinite rate as `null`.
fn null_is_infinite<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
}

/// dm-crypt settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CryptConfig {
    /// Cipher preset name (`aes-2009`, `aes-ni`, `vaes`, `null`, or `custom`).
    pub cipher: String,
    /// Encryption throughput of one CPU, bytes per second (`f64::INFINITY` for null).
    #[serde(deserialize_with = "null_is_infinite")]
    pub encrypt_rate: f64,
    /// Decryption throughput of one CPU, bytes per second.
    #[serde(deserialize_with = "null_is_infinite")]
    pub decrypt_rate: f64,
    /// Fixed cost per 512-byte crypto request.
    pub per_sector_cost: SimDuration,
    /// CPU cost of each workqueue hop (wake-up and context switch).
    pub hop_cost: SimDuration,
    /// Crypto work per request drawn from this distribution instead of bytes / rate (for
    /// textbook validation: the crypt thread becomes an M/G/1 server).
    pub cost: Option<Distribution>,
    /// Sync CPU cipher or an async engine.
    pub engine: CryptoEngine,
    /// Unplug the disk right after kcryptd / kcryptd_io submit: an idealised unplug hypothesis,
    /// independent of patch 6 (which sets [`CryptConfig::io_queues`]).
    pub unplug_after_submit: bool,
    /// The io threads of 2.6.32's queued layout: kcryptd_io alone, or Chris Mason's sync and
    /// async io queues (docs/model/crypt.md).
    pub io_queues: IoQueues,
    /// CPU time a submitting process (a fio job) spends per I/O before its bio enters
    /// dm-crypt or the block layer: the system call and direct-I/O path, and its completion
    /// wake-up (the host's, zero on bare metal; docs/model/crypt.md §2).
    pub submit_cost: SimDuration,
    /// CPU time a dm-crypt thread (or the submitting process, where dm-crypt submits from its
    /// context) spends submitting one clone to the disk's block layer: `dmcrypt_write`'s
    /// rb-tree erase and `submit_bio_noacct()` down to the driver, or the same call from
    /// kcryptd, kcryptd_io or the caller. Zero (the default) folds it into the other costs;
    /// nonzero, it is a CPU step of the thread that submits (docs/model/crypt.md §2).
    #[serde(default)]
    pub clone_submit_cost: SimDuration,
    /// dm-crypt's `max_read_size` module parameter (6.11+), bytes; 0 means 128 KiB.
    #[serde(default)]
    pub max_read_size: u32,
    /// dm-crypt's `max_write_size` module parameter (6.11+), bytes; 0 means 128 KiB.
    #[serde(default)]
    pub max_write_size: u32,
}

/// `crypt.io_queues`: which io threads submit the clones of the queued (2.6.32) layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IoQueues {
    /// 2.6.32: kcryptd_io takes every read; kcryptd submits the writes it encrypted.
    #[default]
    One,
    /// "dm-crypt: make crypto unplug fix V3" (Mason, Nov 2009, never merged): bios flagged
    /// `BIO_RW_SYNCIO` go to kcryptd_io, the rest to a second single thread, kcryptd_async_io;
    /// encrypted writes go through them too; the disk is unplugged when the sync queue
    /// empties, or when the async one empties with no sync bio queued.
    MasonV3,
}

/// Direction mix of a fio job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwKind {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    RandRead,
    /// Random writes.
    RandWrite,
    /// Random mix, `rwmixread` percent reads.
    RandRw,
}

/// When a fio job issues I/O.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Arrivals {
    /// Closed loop: keep `iodepth` I/Os in flight, each resubmitted after `think` time.
    Closed {
        /// I/Os in flight per job.
        iodepth: u32,
        /// Delay between a completion and the next submission.
        think: Option<Distribution>,
    },
    /// Open loop at `rate` I/Os per second; at most `iodepth` in flight, later arrivals dropped.
    Open {
        /// I/Os per second per job.
        rate: f64,
        /// Poisson (exponential gaps) or constant gaps.
        poisson: bool,
        /// In-flight cap; arrivals over it are dropped and counted.
        iodepth: u32,
    },
}

/// A fio-like job.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FioJob {
    /// Direction pattern.
    pub rw: RwKind,
    /// Percentage of reads for `randrw` (0..=100).
    pub rwmixread: u32,
    /// Block size, bytes (a multiple of 512).
    pub bs: u64,
    /// Size of the file region the job touches, bytes.
    pub size: u64,
    /// Byte offset of that region on the device.
    pub offset: u64,
    /// Closed or open loop.
    pub arrivals: Arrivals,
    /// Identical copies of the job.
    pub numjobs: u32,
    /// Writes carry REQ_SYNC (O_DIRECT/O_SYNC writers); reads always do.
    pub sync_writes: bool,
    /// fio's `direct`: reads bypass the page cache. When `false` (fio's default) and the
    /// scenario has a `memory:` section, every read first allocates page-cache pages for its
    /// bytes (and may enter direct reclaim); the pages stay as clean cache afterwards.
    pub direct: bool,
    /// fio's `io_size` (alias `io_limit`): bytes of I/O each copy issues, whole blocks, after
    /// which it issues no more (the last block may pass the limit when `bs` does not divide
    /// it). `None`: no limit.
    pub io_size: Option<u64>,
    /// fio's `number_ios`: I/Os each copy issues, after which it issues no more. `None`: no
    /// limit. With `io_size` too, whichever is reached first ends the job.
    pub number_ios: Option<u64>,
    /// fio's `startdelay`: each copy issues its first I/O at this simulated time (the low end
    /// of the range when [`FioJob::startdelay_high`] is set).
    pub startdelay: SimDuration,
    /// fio's `thinktime` with `thinktime_blocks`, `thinktime_blocks_type` and
    /// `thinktime_spin` (closed loop only); `None`: no think time of fio's kind (the per-slot
    /// `think` of [`Arrivals::Closed`] may still apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinktime: Option<ThinkTime>,
    /// fio's `startdelay=low-high`: each copy starts at a time drawn uniformly in
    /// `[startdelay, startdelay_high]` from its own stream. `None`: exactly `startdelay`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startdelay_high: Option<SimDuration>,
    /// qsim's `serve:` (not fio's): each copy is a storage daemon's thread whose every request
    /// is received, checksummed and replicated before its writes are issued
    /// (docs/model/workloads.md §2d). `None`: a plain fio job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serve: Option<Serve>,
    /// `kind: replay`: I/Os from a trace, not `rw`, `bs` and random streams (docs/replay.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<Box<super::replay::Replay>>,
}

impl FioJob {
    /// Whether the job has a fixed amount of work (`io_size`, `number_ios`, a trace's end): it
    /// stops issuing once that is done, and the run ends when every such job has completed it.
    pub fn is_finite(&self) -> bool {
        self.io_size.is_some() || self.number_ios.is_some() || self.replay.is_some()
    }
}

impl Scenario {
    /// Whether any fio workload is finite ([`FioJob::is_finite`]): then the run ends when all
    /// of them have completed their I/O, or at `duration`, whichever comes first.
    pub fn has_finite_jobs(&self) -> bool {
        self.workloads.iter().any(|w| match &w.kind {
            WorkloadKind::Fio(f) => f.is_finite(),
            WorkloadKind::FakeGitk(_) => true,
            WorkloadKind::BufferedWriter(_) | WorkloadKind::CpuIo(_) => false,
        })
    }
}

/// A buffered writer: dirties page cache at `rate`; the flusher writes it back through dm-crypt.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BufferedWriter {
    /// Dirtying rate, bytes per second.
    pub rate: f64,
    /// Writeback request size, bytes (512 KiB: the largest request).
    pub chunk: u64,
    /// Flusher starts when dirty data reaches this, bytes.
    pub background_bytes: u64,
    /// The writer is throttled while dirty + under-writeback data exceed this, bytes.
    pub dirty_limit_bytes: u64,
    /// Size of the file region written sequentially, bytes.
    pub size: u64,
    /// Byte offset of that region on the device.
    pub offset: u64,
    /// The receive path whose socket the writer reads (its index among the `memory.atomic`
    /// streams that have a reader): it then writes what arrives instead of dirtying at `rate`.
    #[serde(default)]
    pub source: Option<u32>,
}

/// What a workload is.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum WorkloadKind {
    /// A fio job (the `gitk` preset resolves to one).
    Fio(FioJob),
    /// Buffered writes written back by the flusher.
    BufferedWriter(BufferedWriter),
    /// Mel Gorman's fake-gitk: reads logs into a growing anonymous buffer, walks it, frees it.
    FakeGitk(FakeGitk),
    /// fio's `ioengine=cpuio`: application threads that only burn CPU.
    #[serde(rename = "cpuio")]
    CpuIo(CpuIo),
}

/// `kind: fake-gitk`: each copy reads `size` bytes of commit logs (sync buffered reads of `bs`,
/// sequential over its region), appending each read to an anonymous buffer; then walks the
/// buffer page by page building its hash map (CPU at `hash_cost` per MiB; a swapped page faults
/// back); then frees the buffer, `loops` times.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FakeGitk {
    /// Bytes of commit logs read per loop (and the buffer's size).
    pub size: u64,
    /// Byte offset of the logs on the device.
    pub offset: u64,
    /// Read size, bytes (whole pages).
    pub bs: u64,
    /// Loops (read, walk, free) before the copy is done.
    pub loops: u32,
    /// A progress line every this many bytes processed (read or walked).
    pub progress_every: u64,
    /// CPU time to hash one MiB of the buffer while walking it.
    pub hash_cost: SimDuration,
    /// Copies running at once.
    pub numjobs: u32,
    /// When each copy starts.
    pub startdelay: SimDuration,
    /// Bytes of the parent→child hash map each loop builds while walking the logs.
    #[serde(default)]
    pub map: u64,
    /// Commits in the logs: each one walked is inserted into the hash map, a touch of one
    /// random map page (0: the inserts touch nothing).
    #[serde(default)]
    pub commits: u64,
}

/// One workload.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkloadConfig {
    /// Name used in random-stream names and reports.
    pub name: String,
    /// Its behaviour.
    pub kind: WorkloadKind,
}

/// What a sweep or a sensitivity study made of the variants: the axes (or knobs) and the value
/// of each point, so that the report can lay the runs out by value. The variants themselves
/// are ordinary variants, in the order given by [`SweepPlan::kind`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPlan {
    /// A grid of one or two axes, or a one-at-a-time sensitivity study.
    pub kind: SweepKind,
    /// A grid's axes (one or two), or a study's knobs (each with its low and high values).
    pub params: Vec<SweepParam>,
    /// A study's metric: a key of the report's metrics registry (`None` for a grid).
    pub metric: Option<String>,
}

/// How a [`SweepPlan`]'s variants are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SweepKind {
    /// Every combination of the axes' values, the first axis outermost: variant `i` of a
    /// two-axis grid has value `i / n2` of the first axis and `i % n2` of the second (whose
    /// values number `n2`).
    Grid,
    /// Variant 0 is the base; knob `k`'s low and high values are variants `2k + 1` and
    /// `2k + 2`.
    Sensitivity,
}

/// One axis of a sweep, or one knob of a sensitivity study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepParam {
    /// Its label: the paths it sets, joined by `+` (or a knob's `name`).
    pub name: String,
    /// The scenario paths each value is written to.
    pub paths: Vec<String>,
    /// Whether its values are spaced on a log scale (a range with `scale: log`).
    pub log: bool,
    /// The unit the numeric values [`SweepValue::x`] are in (the first value's, e.g. `MB/s`;
    /// empty for plain numbers).
    pub unit: String,
    /// Its values in order (a knob's: low, then high; a study also keeps the base as a third
    /// value when it knows it).
    pub values: Vec<SweepValue>,
}

/// One value of a [`SweepParam`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepValue {
    /// As written into the scenario (`85.71MB/s`, `aes-ni`).
    pub text: String,
    /// Its number in [`SweepParam::unit`], when every value of the axis is a number of the same
    /// kind (a count, size, rate or duration); `None` for names.
    pub x: Option<f64>,
}
