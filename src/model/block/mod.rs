//! The block layer and the disk (`block/`, `drivers/nvme`): the request queue with its pools,
//! congestion flags and plugging, the CFQ and deadline elevators, blk-mq's completion sites, and
//! the device. `docs/model/block.md` and `docs/model/device.md` describe them.

pub mod blkmq;
mod cfq;
mod deadline;
pub mod device;
pub mod queue;
