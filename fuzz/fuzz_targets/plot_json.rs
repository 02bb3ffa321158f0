//! Fuzz target `plot_json`: see `qsim::fuzzing::plot_json`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| qsim::fuzzing::plot_json(data));
