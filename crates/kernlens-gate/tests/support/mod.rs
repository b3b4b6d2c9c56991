//! Helpers shared by the gate tests.

#[cfg(feature = "trace")]
pub mod run;
#[path = "../../../../tests/support/trace_files.rs"]
pub mod trace_files;
pub mod traces;
