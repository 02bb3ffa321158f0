//! dm-crypt (`drivers/md/dm-crypt.c`): the table and its flags, the crypt threads' state, the
//! async crypto engine, and the queue policies. `docs/model/crypt.md` describes it.

pub mod engine;
pub mod policy;
pub mod table;
pub mod threads;
