//! Developer tools for kernlens. Not public API and not published.
//!
//! [`scale()`] writes an N× larger copy of a real trace for benchmarks (docs/design/trace.md,
//! "Synthetic-trace scaler"):
//! every replica is a distinct, valid, fully linked copy, so the analysis figures
//! scale exactly by N.

// The trace crate's own JSON cursor and exact number conversion, compiled in here
// rather than made public API or copied.
#[allow(dead_code, unreachable_pub, missing_docs)]
#[path = "../../crates/kernlens-trace/src/json.rs"]
mod json;
#[allow(dead_code, unreachable_pub, missing_docs)]
#[path = "../../crates/kernlens-trace/src/number.rs"]
mod number;

pub mod scale;

pub use scale::{ScaleError, ScaleStats, scale};
