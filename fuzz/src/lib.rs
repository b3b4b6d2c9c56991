//! Property checks behind the kernlens fuzz targets.
//!
//! Each `fuzz_targets/<name>.rs` is one line handing libFuzzer's bytes to
//! [`checks`]`::<name>`; `tests/fuzz_replay.rs` in the main package includes the
//! same `checks.rs` and feeds it every committed input under `fuzz/regressions/`,
//! so what fuzzing found stays fixed on a stable toolchain.

pub mod checks;
