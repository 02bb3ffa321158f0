//! Fuzz target `scenario`: see `qsim::fuzzing::scenario`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| qsim::fuzzing::scenario(data));
