#![no_main]
//! Fuzz target `locate_cxx`: see `kernlens_fuzz::checks::locate_cxx` for what it asserts.

libfuzzer_sys::fuzz_target!(|data: &[u8]| kernlens_fuzz::checks::locate_cxx(data));
