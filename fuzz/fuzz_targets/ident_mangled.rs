#![no_main]
//! Fuzz target `ident_mangled`: see `kernlens_fuzz::checks::ident_mangled` for what it asserts.

libfuzzer_sys::fuzz_target!(|data: &[u8]| kernlens_fuzz::checks::ident_mangled(data));
