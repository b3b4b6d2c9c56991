//! kernlens facade (under construction).
pub use kernlens_trace as trace;
