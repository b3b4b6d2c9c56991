#![no_main]
//! Fuzz target `scratch_export`: see `kernlens_fuzz::checks::scratch_export` for what it asserts.

libfuzzer_sys::fuzz_target!(|data: &[u8]| kernlens_fuzz::checks::scratch_export(data));
