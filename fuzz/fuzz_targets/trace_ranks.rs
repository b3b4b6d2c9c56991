#![no_main]
//! Fuzz target `trace_ranks`: see `kernlens_fuzz::checks::trace_ranks` for what it asserts.

libfuzzer_sys::fuzz_target!(|data: &[u8]| kernlens_fuzz::checks::trace_ranks(data));
