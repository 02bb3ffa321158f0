//! The CPUs (`kernel/sched/`): a processor-sharing pool for the 2.6 layouts and a per-CPU
//! machine with softirq, CFS weights and placement. `docs/model/cpu.md` describes them.

mod pool;
pub mod sched;
