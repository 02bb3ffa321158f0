//! The vocabulary every subsystem shares: bios and their slab, typed identities, the scenario as
//! the model reads it, closed-form physics, inverse-transform sampling, and the records a run
//! fills in. Nothing here depends on another folder of the model.

pub mod bio;
pub mod config;
pub mod flags;
pub mod ids;
pub mod obs;
pub mod physics;
pub mod sampler;
