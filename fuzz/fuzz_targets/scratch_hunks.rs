#![no_main]
//! Fuzz target `scratch_hunks`: see `kernlens_fuzz::checks::scratch_hunks` for what it asserts.

libfuzzer_sys::fuzz_target!(|data: &[u8]| kernlens_fuzz::checks::scratch_hunks(data));
