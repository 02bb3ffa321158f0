//! Fuzz target `set`: see `qsim::fuzzing::set`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| qsim::fuzzing::set(data));
