//! The one error type of this crate. A name that cannot be found is an
//! answer (`found: false`), never an error; errors are for a search that
//! cannot start at all.

use std::path::PathBuf;

/// Why locating could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LocateError {
    /// No search root survived: nothing explicit, nothing from the
    /// environment value, and discovery found no framework package (or was off).
    #[error("no search root: {}", considered.join(", "))]
    NoSearchRoots {
        /// What was tried, one phrase per source, in order.
        considered: Vec<String>,
    },
    /// A file or directory could not be read.
    #[error("cannot {action} '{}': {source}", path.display())]
    Io {
        /// What was being done (`read`, `list directory`).
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The operating-system error.
        #[source]
        source: std::io::Error,
    },
    /// A trace could not be read for launcher evidence.
    #[error("cannot read launcher evidence from trace '{trace}': {message}")]
    Trace {
        /// The trace as given.
        trace: String,
        /// Why the trace reader failed.
        message: String,
    },
    /// The worker thread pool could not be started.
    #[error("cannot start {threads} search threads: {message}")]
    Threads {
        /// Threads asked for (0: one per core).
        threads: usize,
        /// Why the pool failed.
        message: String,
    },
}
