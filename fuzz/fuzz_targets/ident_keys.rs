#![no_main]
//! Fuzz target `ident_keys`: see `kernlens_fuzz::checks::ident_keys` for what it asserts.

libfuzzer_sys::fuzz_target!(|data: &[u8]| kernlens_fuzz::checks::ident_keys(data));
