//! The one error type of this crate. Bad trace *content* is never an error: it is
//! recovered and reported in `stream_errors`.

use std::path::PathBuf;

/// Why a trace could not be read at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The input is neither a file nor a directory holding a trace.
    #[error("no usable trace file at {input}")]
    NoUsableTrace {
        /// The path as given.
        input: String,
    },
    /// Opening, mapping or reading the input failed.
    #[error("cannot {action} '{}': {source}", path.display())]
    Io {
        /// What was being done (`open trace`, `map trace`, `list directory`).
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The operating-system error.
        #[source]
        source: std::io::Error,
    },
    /// A source backed by a reader was used a second time.
    #[error("trace source '{label}' was already read (a stream can be read only once)")]
    SourceConsumed {
        /// The source's label.
        label: String,
    },
    /// An operation needs to read the input twice, which stdin cannot do.
    #[error("trace source '{label}' cannot be read twice (split needs a file, not a stream)")]
    NotSeekable {
        /// The source's label.
        label: String,
    },
    /// The input is neither a Kineto trace (an object with a top-level `traceEvents`
    /// array) nor Chrome's JSON Array Format (`[ {event}, … ]`): a Markdown file, an
    /// unrelated JSON document, an empty file.
    #[error("not a Kineto trace (no traceEvents array)")]
    NotATrace {
        /// The file or source label.
        path: String,
    },
    /// A steady-state window was asked for and the trace has none.
    #[error("no repeating step window found in '{label}'")]
    NoWindow {
        /// The source's label.
        label: String,
    },
    /// A window whose end is before its start.
    #[error("invalid window: end {end_ns} ns is before start {start_ns} ns")]
    InvalidWindow {
        /// Start in ns.
        start_ns: i64,
        /// End in ns.
        end_ns: i64,
    },
    /// A window spec that is not `START_US:END_US`.
    #[error("invalid window '{spec}': expected START_US:END_US")]
    InvalidWindowSpec {
        /// The text given.
        spec: String,
    },
    /// A file that holds nothing to analyse: no `traceEvents` array, or no GPU event in it
    /// (all-ranks mode, where counting it as a 0%-busy rank would skew the spread).
    #[error("'{path}' is not a usable trace: {reason}")]
    Unusable {
        /// The file.
        path: String,
        /// Why: the reader's stream errors, or the missing GPU events.
        reason: String,
    },
    /// A file whose rank tag does not hold a rank number (it overflows a `u64`).
    #[error("rank tag '{tag}' in '{path}' is not a rank number (too large)")]
    BadRankTag {
        /// The file.
        path: String,
        /// The matched tag text, e.g. `rank_99999999999999999999`.
        tag: String,
    },
    /// Writing output failed.
    #[error("cannot write {what}: {source}")]
    Write {
        /// What was being written.
        what: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}
