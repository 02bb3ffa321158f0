//! Fuzz target `shard`: see `qsim::fuzzing::shard`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| qsim::fuzzing::shard(data));
