//! The crate's one error type.

use thiserror::Error;

/// Why a gate input could not be produced.
///
/// Every variant is recoverable: the idle gate turns a probe error into the
/// plain gate plus a `graph_probe_failed` diagnostic (gate.md "High-idle gate with graph guard: Rule").
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum GateError {
    /// The graph-coverage probe could not read the trace. `reason` is the
    /// underlying error's text, which already names the path involved.
    #[error("{reason}")]
    ProbeFailed {
        /// What went wrong, for example `no usable trace file at run/x.json`.
        reason: String,
    },
    /// The probe was pointed at a kernlens split chunk, whose coverage is
    /// about 1.0 by construction and so says nothing about under-recording.
    #[error(
        "'{path}' is a kernlens split chunk; graph coverage must be read from the un-split trace"
    )]
    SplitChunk {
        /// The chunk's path or label.
        path: String,
    },
}

#[cfg(feature = "trace")]
impl From<kernlens_trace::TraceError> for GateError {
    fn from(err: kernlens_trace::TraceError) -> Self {
        GateError::ProbeFailed {
            reason: err.to_string(),
        }
    }
}
