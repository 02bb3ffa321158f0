//! Fuzz target `fio`: see `qsim::fuzzing::fio`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| qsim::fuzzing::fio(data));
