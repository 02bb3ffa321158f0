//! The application side of a fio job's parameters: a storage daemon's requests (`serve:`), fio's
//! think time, and fio's `cpuio` processes (docs/model/workloads.md §2a, §2b, §2d).

use crate::engine::SimDuration;
use serde::{Deserialize, Serialize};

/// A storage daemon's request in front of a job's writes (`serve:`): the thread receives
/// `bytes` over the node's inbound link, checksums them on a CPU, sends them to `replicas`
/// peers over the outbound link and waits `ack` for their answers, then writes them (as
/// `bytes / bs` I/Os issued together, the job's `thinktime_blocks`) and waits for every
/// write before it takes the next request. The node has one link each way, shared by every
/// serving thread (docs/model/workloads.md §2d).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Serve {
    /// Bytes of one request.
    pub bytes: u64,
    /// The node's link rate each way, bytes per second.
    pub link: f64,
    /// Checksum rate on one CPU, bytes per second.
    pub checksum_rate: f64,
    /// CPU time per request besides the checksum (parsing, bookkeeping).
    pub handling: SimDuration,
    /// Peers the data is sent to, one after the other on the outbound link.
    pub replicas: u32,
    /// Wait after the last replica's data leaves: the round trip and the replicas' own
    /// commits.
    pub ack: SimDuration,
}

impl Serve {
    /// CPU time of one request on its thread: handling plus the checksum of its bytes.
    pub fn cpu(&self) -> SimDuration {
        self.handling + SimDuration::from_secs_f64(self.bytes as f64 / self.checksum_rate)
    }
}

/// fio's think time (HOWTO `thinktime`, `thinktime_blocks`, `thinktime_blocks_type`,
/// `thinktime_spin`; `handle_thinktime()` in fio's `backend.c`): once `blocks` I/Os have
/// completed (or been issued) since the last pause, the job waits for every I/O in flight,
/// burns `spin` of CPU, then sleeps what is left of `time`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThinkTime {
    /// The whole pause, spin included (`thinktime`).
    pub time: SimDuration,
    /// CPU burnt at the start of the pause (`thinktime_spin`); may exceed `time`, as in fio.
    pub spin: SimDuration,
    /// I/Os between pauses (`thinktime_blocks`, at least 1).
    pub blocks: u32,
    /// `thinktime_blocks_type=issue`: count I/Os issued; `false` (fio's `complete`): count
    /// I/Os completed.
    pub on_issue: bool,
}

/// fio's `ioengine=cpuio`: a process that issues no I/O and burns `cpuchunks` of CPU, then
/// sleeps `cpuchunks × (100 − cpuload) / cpuload` (fio's `engines/cpu.c`), so that it uses
/// `cpuload` % of one CPU when it gets one at once.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CpuIo {
    /// Percentage of one CPU (`cpuload`, 1..=100).
    pub cpuload: u32,
    /// CPU burnt per cycle (`cpuchunks`, whole microseconds).
    pub cpuchunks: SimDuration,
    /// Copies running at once.
    pub numjobs: u32,
    /// When each copy starts (the low end of the range with `startdelay_high`).
    pub startdelay: SimDuration,
    /// fio's `startdelay=low-high`, as for [`super::FioJob::startdelay_high`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startdelay_high: Option<SimDuration>,
}

impl CpuIo {
    /// The sleep after each chunk: fio's `cpucycle * (100 - cpuload) / cpuload` in whole
    /// microseconds (integer arithmetic, as `fio_cpuio_init` computes its `thinktime`).
    pub fn sleep(&self) -> SimDuration {
        let us = self.cpuchunks.as_ns() / 1_000;
        let load = u64::from(self.cpuload.clamp(1, 100));
        SimDuration::from_us(us * (100 - load) / load)
    }
}
