#![no_main]
//! Fuzz target `locate_python`: see `kernlens_fuzz::checks::locate_python` for what it asserts.

libfuzzer_sys::fuzz_target!(|data: &[u8]| kernlens_fuzz::checks::locate_python(data));
