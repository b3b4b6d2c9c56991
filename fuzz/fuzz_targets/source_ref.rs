#![no_main]
//! Fuzz target `source_ref`: see `kernlens_fuzz::checks::source_ref` for what it asserts.

libfuzzer_sys::fuzz_target!(|data: &[u8]| kernlens_fuzz::checks::source_ref(data));
