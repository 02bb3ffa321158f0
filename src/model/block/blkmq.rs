//! blk-mq's hardware side: which hardware queue each CPU submits to, which CPU takes each
//! queue's interrupt, and so where and in which context a request's completion runs
//! (docs/model/block.md §7).
//!
//! - [`map_queues`] is `blk_mq_map_queues` (block/blk-mq-cpumap.c) over one NUMA node without
//!   SMT siblings: `group_cpus_evenly` cuts the CPUs into `queues` runs of consecutive CPUs, the
//!   first `cpus mod queues` runs one CPU longer.
//! - [`default_irq_cpus`]: a managed interrupt (NVMe's `pci_alloc_irq_vectors_affinity`) is
//!   spread over the same groups and lands on the first CPU of its queue's group, so queue `i`
//!   of a one-queue-per-CPU device interrupts CPU `i`; a single queue's interrupt is on CPU 0.
//! - [`completion_site`] follows `blk_mq_complete_request` → `blk_mq_complete_request_remote`
//!   of block/blk-mq.c (6.6).

use crate::model::base::config::{BlockConfig, CompletionSite, IrqContext, QueueMode};

/// The hardware queue of each of `cpus` CPUs for `queues` hardware queues (at most `cpus`):
/// consecutive runs, the first `cpus mod queues` one CPU longer (`group_cpus_evenly`).
pub fn map_queues(cpus: u32, queues: u32) -> Vec<u32> {
    let (cpus, queues) = (cpus.max(1), queues.clamp(1, cpus.max(1)));
    let (per, extra) = (cpus / queues, cpus % queues);
    let mut map = Vec::with_capacity(cpus as usize);
    for q in 0..queues {
        let len = per + u32::from(q < extra);
        map.extend(std::iter::repeat_n(q, len as usize));
    }
    map
}

/// The CPU that takes each queue's interrupt by default: the first CPU mapped to it.
pub fn default_irq_cpus(cpus: u32, queues: u32) -> Vec<u32> {
    let map = map_queues(cpus, queues);
    (0..queues.clamp(1, cpus.max(1)))
        .map(|q| map.iter().position(|&m| m == q).unwrap_or(0) as u32)
        .collect()
}

/// Where a request submitted from `submit_cpu` completes, as block/blk-mq.c (6.6) decides:
///
/// 1. A bio-based driver (brd) ends the bio inside `submit_bio`: the submitter, on its CPU.
/// 2. The interrupt arrives on the CPU bound to the request's hardware queue.
/// 3. `blk_mq_complete_request_remote`: if that queue has only this one CPU mapped and the
///    interrupt is on it, the driver completes it right there, in **hard IRQ**.
/// 4. `blk_mq_complete_need_ipi`: with `rq_affinity` ≥ 1 (`QUEUE_FLAG_SAME_COMP`, on by default
///    for blk-mq) and the interrupt on another CPU, the completion moves by IPI to the
///    submitting CPU unless the two share a cache (`cpus_share_cache`); with `rq_affinity` 2
///    (`QUEUE_FLAG_SAME_FORCE`) it always moves. The IPI handler raises BLOCK_SOFTIRQ there:
///    **softirq on the submitter's CPU**. qsim's machines have one last-level cache shared by
///    every CPU (assumed: one socket), so only `rq_affinity: 2` moves completions.
/// 5. `blk_mq_raise_softirq`: a device with one hardware queue completes in **BLOCK_SOFTIRQ on
///    the interrupt CPU** (SCSI and ATA disks, through `scsi_done`).
/// 6. Otherwise (several hardware queues: NVMe) the driver completes in **hard IRQ** on the
///    interrupt CPU.
///
/// A legacy queue (2.6.32's `__blk_complete_request`) always raises BLOCK_SOFTIRQ: on the
/// interrupt CPU, or on the submitter's when `rq_affinity` moves it as in 4.
pub fn completion_site(cfg: &BlockConfig, submit_cpu: u32) -> CompletionSite {
    let mq = &cfg.mq;
    if mq.bio_based {
        return CompletionSite {
            cpu: submit_cpu,
            context: IrqContext::Submitter,
        };
    }
    let cpus = mq.queue_map.len().max(1) as u32;
    let cpu = submit_cpu % cpus;
    let hctx = mq.queue_map.get(cpu as usize).copied().unwrap_or(0);
    let irq = mq.irq_cpus.get(hctx as usize).copied().unwrap_or(0);
    let need_ipi = irq != cpu && mq.rq_affinity >= 2;
    let softirq = |cpu| CompletionSite {
        cpu,
        context: IrqContext::Softirq,
    };
    if cfg.mode == QueueMode::Legacy {
        return softirq(if need_ipi { cpu } else { irq });
    }
    let nr_ctx = mq.queue_map.iter().filter(|&&q| q == hctx).count();
    let hardirq = CompletionSite {
        cpu: irq,
        context: IrqContext::Hardirq,
    };
    if nr_ctx == 1 && irq == cpu {
        hardirq
    } else if need_ipi {
        softirq(cpu)
    } else if mq.hw_queues == 1 {
        softirq(irq)
    } else {
        hardirq
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::base::config::{BlkMqConfig, KernelConfig};

    fn cfg(cpus: u32, queues: u32, rq_affinity: u32) -> BlockConfig {
        let k = KernelConfig::new(250);
        BlockConfig {
            mode: QueueMode::BlkMq,
            nr_requests: 128,
            elevator: crate::model::base::config::Elevator::Fifo,
            plug: false,
            unplug_threshold: 4,
            low_latency: true,
            cfq_slice_sync: k.hz_div(10),
            cfq_slice_async: k.hz_div(25),
            cfq_slice_idle: k.hz_div(125),
            cfq_quantum: 4,
            cfq: k.version.cfq(),
            ncq_capable: true,
            mq: BlkMqConfig {
                hw_queues: queues,
                irq_cpus: default_irq_cpus(cpus, queues),
                queue_map: map_queues(cpus, queues),
                rq_affinity,
                ..BlkMqConfig::default()
            },
        }
    }

    fn site(cpu: u32, context: IrqContext) -> CompletionSite {
        CompletionSite { cpu, context }
    }

    #[test]
    fn cpus_map_to_queues_in_even_consecutive_runs() {
        assert_eq!(map_queues(4, 4), [0, 1, 2, 3]);
        assert_eq!(map_queues(8, 3), [0, 0, 0, 1, 1, 1, 2, 2]);
        assert_eq!(map_queues(4, 1), [0, 0, 0, 0]);
        assert_eq!(map_queues(2, 8), [0, 1], "no more queues than CPUs");
        assert_eq!(default_irq_cpus(8, 3), [0, 3, 6]);
        assert_eq!(default_irq_cpus(4, 4), [0, 1, 2, 3]);
        assert_eq!(default_irq_cpus(16, 1), [0]);
    }

    #[test]
    fn a_queue_per_cpu_completes_in_hardirq_on_the_submitter() {
        let c = cfg(4, 4, 1);
        for cpu in 0..4 {
            assert_eq!(completion_site(&c, cpu), site(cpu, IrqContext::Hardirq));
        }
    }

    #[test]
    fn shared_queues_complete_in_hardirq_on_the_irq_cpu_unless_rq_affinity_2() {
        // 8 CPUs on 2 queues: CPUs 4-7 submit to queue 1, whose interrupt is on CPU 4.
        let c = cfg(8, 2, 1);
        assert_eq!(completion_site(&c, 6), site(4, IrqContext::Hardirq));
        assert_eq!(completion_site(&c, 4), site(4, IrqContext::Hardirq));
        let c = cfg(8, 2, 2);
        assert_eq!(completion_site(&c, 6), site(6, IrqContext::Softirq));
        assert_eq!(completion_site(&c, 4), site(4, IrqContext::Hardirq));
    }

    #[test]
    fn one_queue_completes_in_block_softirq_on_its_irq_cpu() {
        let c = cfg(4, 1, 1);
        for cpu in 0..4 {
            assert_eq!(completion_site(&c, cpu), site(0, IrqContext::Softirq));
        }
        let c = cfg(4, 1, 2);
        assert_eq!(completion_site(&c, 3), site(3, IrqContext::Softirq));
        assert_eq!(completion_site(&c, 0), site(0, IrqContext::Softirq));
        // One CPU, one queue: that queue's only context is the interrupt's CPU, so the
        // driver completes in its handler (blk_mq_complete_request_remote's first test).
        assert_eq!(
            completion_site(&cfg(1, 1, 1), 0),
            site(0, IrqContext::Hardirq)
        );
    }

    #[test]
    fn brd_completes_in_the_submitter_and_legacy_in_softirq() {
        let mut c = cfg(4, 1, 1);
        c.mq.bio_based = true;
        assert_eq!(completion_site(&c, 2), site(2, IrqContext::Submitter));
        let mut c = cfg(4, 1, 1);
        c.mode = QueueMode::Legacy;
        assert_eq!(completion_site(&c, 2), site(0, IrqContext::Softirq));
        c.mq.irq_cpus = vec![3];
        assert_eq!(completion_site(&c, 2), site(3, IrqContext::Softirq));
    }
}
