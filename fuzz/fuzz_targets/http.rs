//! Fuzz target `http`: see `qsim::fuzzing::http`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| qsim::fuzzing::http(data));
