#![no_main]
//! Fuzz target `trace_event`: see `kernlens_fuzz::checks::trace_event` for what it asserts.

libfuzzer_sys::fuzz_target!(|data: &[u8]| kernlens_fuzz::checks::trace_event(data));
