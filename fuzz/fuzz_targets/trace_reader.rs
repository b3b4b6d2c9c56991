#![no_main]
//! Fuzz target `trace_reader`: see `kernlens_fuzz::checks::trace_reader` for what it asserts.

libfuzzer_sys::fuzz_target!(|data: &[u8]| kernlens_fuzz::checks::trace_reader(data));
