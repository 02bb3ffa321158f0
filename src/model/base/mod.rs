//! The vocabulary every subsystem shares: bios and their slab, typed identities, the scenario as
//! the model reads it, closed-form physics, inverse-transform sampling, and the records a run
//! fills in (`include/linux/blk_types.h` for the bio's fields). Nothing here depends on another
//! folder of the model; `docs/model/README.md` is the tour.

pub mod bio;
pub mod config;
pub mod flags;
pub mod ids;
pub mod obs;
pub mod physics;
pub mod replay;
pub mod sampler;
