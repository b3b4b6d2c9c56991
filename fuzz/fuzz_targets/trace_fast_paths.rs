#![no_main]
//! Fuzz target `trace_fast_paths`: see `kernlens_fuzz::checks::trace_fast_paths` for what it asserts.

libfuzzer_sys::fuzz_target!(|data: &[u8]| kernlens_fuzz::checks::trace_fast_paths(data));
