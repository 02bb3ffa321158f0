//! Fuzz target `plot_data`: see `qsim::fuzzing::plot_data`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| qsim::fuzzing::plot_data(data));
