//! The blk-mq machine's parameters: hardware queues, interrupt CPUs, the I/O scheduler, and
//! where a request's completion runs (the contract with dm-crypt's routing).

use super::KernelConfig;
use crate::engine::SimDuration;
use serde::{Deserialize, Serialize};

/// The context in which the block layer ends a request and so runs dm-crypt's `crypt_endio`:
/// what decides whether `no_read_workqueue` can decrypt there or must fall back
/// (docs/model/crypt.md, docs/model/block.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IrqContext {
    /// In the device's hard interrupt handler (blk-mq with several hardware queues completing
    /// on the submitting CPU: NVMe).
    Hardirq,
    /// In BLOCK_SOFTIRQ, raised by the interrupt (blk-mq with one hardware queue: SCSI, ATA).
    Softirq,
    /// Synchronously inside `submit_bio`, in the submitting task (brd, the RAM disk).
    Submitter,
}

/// Where one request's completion runs: on which CPU and in which context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompletionSite {
    /// The CPU that takes the interrupt (or the submitter's CPU for [`IrqContext::Submitter`]).
    pub cpu: u32,
    /// The context `crypt_endio` runs in.
    pub context: IrqContext,
}

/// blk-mq's I/O scheduler (`block.scheduler`); a legacy queue's is its [`Elevator`](super::Elevator).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MqScheduler {
    /// `none`: requests go to the device in the order they were inserted.
    None,
    /// `mq-deadline`: sector-sorted batches with read and write expiry (block/mq-deadline.c).
    MqDeadline,
}

/// mq-deadline's tunables (its sysfs `iosched/` files; block/mq-deadline.c).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadlineTunables {
    /// How long a read may wait before it is served ahead of sort order (`read_expire`, HZ/2).
    pub read_expire: SimDuration,
    /// The same for writes (`write_expire`, 5·HZ).
    pub write_expire: SimDuration,
    /// Requests dispatched in sort order before the direction and expiry are looked at again
    /// (`fifo_batch`, 16).
    pub fifo_batch: u32,
    /// Times reads may be chosen over waiting writes before writes get a batch
    /// (`writes_starved`, 2).
    pub writes_starved: u32,
}

impl DeadlineTunables {
    /// The kernel's defaults at `hz` (block/mq-deadline.c: `read_expire = HZ / 2`,
    /// `write_expire = 5 * HZ`, `writes_starved = 2`, `fifo_batch = 16`).
    pub fn kernel(kernel: &KernelConfig) -> DeadlineTunables {
        DeadlineTunables {
            read_expire: kernel.hz_div(2),
            write_expire: SimDuration::from_secs(5),
            fifo_batch: 16,
            writes_starved: 2,
        }
    }
}

/// blk-mq's hardware side of the disk: its hardware queues, which CPU maps to which
/// (`blk_mq_map_queues`), the CPU that takes each queue's interrupt, `rq_affinity`, and the
/// scheduler (docs/model/block.md §7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlkMqConfig {
    /// Hardware queues (`nr_hw_queues`).
    pub hw_queues: u32,
    /// The CPU that takes each hardware queue's completion interrupt (one per queue).
    pub irq_cpus: Vec<u32>,
    /// The hardware queue each CPU submits to (one per CPU; `blk_mq_map_queues`).
    pub queue_map: Vec<u32>,
    /// `/sys/block/*/queue/rq_affinity`: 0 completes where the interrupt lands, 1 (the
    /// default) moves the completion to the submitting CPU when the two share no cache, 2
    /// always moves it there.
    pub rq_affinity: u32,
    /// A bio-based driver (brd, the RAM disk): no request, no tag, no interrupt; `submit_bio`
    /// ends the bio itself in the submitting task.
    pub bio_based: bool,
    /// The I/O scheduler.
    pub scheduler: MqScheduler,
    /// mq-deadline's tunables (used when [`BlkMqConfig::scheduler`] is `mq-deadline`).
    pub deadline: DeadlineTunables,
}

impl Default for BlkMqConfig {
    /// One hardware queue mapped from one CPU, its interrupt on CPU 0, `rq_affinity` 1, no
    /// scheduler: what qsim's blk-mq was before hardware queues existed.
    fn default() -> Self {
        BlkMqConfig {
            hw_queues: 1,
            irq_cpus: vec![0],
            queue_map: vec![0],
            rq_affinity: 1,
            bio_based: false,
            scheduler: MqScheduler::None,
            deadline: DeadlineTunables {
                read_expire: SimDuration::from_ms(500),
                write_expire: SimDuration::from_secs(5),
                fifo_batch: 16,
                writes_starved: 2,
            },
        }
    }
}
