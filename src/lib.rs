//! # kernlens
//!
//! GPU-kernel triage over PyTorch-profiler (Kineto) traces: where GPU time went, whether
//! the GPU is busy (and whether that figure can be trusted), which kernels are hot,
//! which of them are the same operator, and which source file defines each one.
//!
//! This facade re-exports each stage crate under a short name; each stage also stands
//! alone, so a tool can depend on just the one it needs. The `kernlens` binary (feature
//! `cli`, on by default) composes them; library users can turn default features off.
//!
//! # Features
//!
//! - `trace`, `ident`, `locate`, `gate`, `scratch`: re-export that stage crate (as
//!   `kernlens::trace`, …) and pull only its dependencies;
//! - `report`: the HTML page of an analysis (`kernlens::report`, over trace and gate);
//! - `triage`: every stage plus [`Triage`] (the pipeline over one trace), [`diff`], the
//!   summary's kernel [`categories`] and the process environment read at the edge ([`env`]);
//!   `trace` alone gives the `--window` spec parser ([`window`]);
//! - `output`: atomic output files ([`output`]);
//! - `cli` (default): `triage`, `report`, `output` and the `kernlens` binary.
//!
//! The Python package (`python/`, crate `kernlens-py`) is built on `triage` and `output`.
//!
//! ```
//! # #[cfg(feature = "trace")] {
//! use kernlens::trace::{analyze, Options, TraceSource};
//!
//! let source = TraceSource::from_bytes(
//!     "t.json",
//!     br#"{"traceEvents":[{"ph":"X","cat":"kernel","name":"gemm","ts":0,"dur":5}]}"#.to_vec(),
//! );
//! let analysis = analyze(&source, &Options::default())?;
//! assert_eq!(analysis.kernels[0].name, "gemm");
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

/// Reading traces: timeline, busy/idle, hot kernels, graph-replay coverage, windows, split.
#[cfg(feature = "trace")]
pub use kernlens_trace as trace;

/// Kernel identity: keys, operator identities, task groups, categories.
#[cfg(feature = "ident")]
pub use kernlens_ident as ident;

/// Locating kernel sources: the file that defines each kernel, its kind and the evidence.
#[cfg(feature = "locate")]
pub use kernlens_locate as locate;

/// Gates between a trace summary and kernel work: idle/compute gates, lane guard, rewrite route.
#[cfg(feature = "gate")]
pub use kernlens_gate as gate;

/// Scratch workspaces: a git-tracked copy of a package for kernel rewrites, and the patch back.
#[cfg(feature = "scratch")]
pub use kernlens_scratch as scratch;

/// The HTML page of an analysis: a binned busy/idle timeline, tables and the gate verdict.
#[cfg(feature = "report")]
pub use kernlens_report as report;

// Files the CLI writes outside scratch: temp file, fsync, rename; never the input, never
// through a link. (Documented by its own `//!` page: an outer doc comment here would make
// rustdoc resolve that page's links from the crate root.)
#[cfg(feature = "output")]
pub mod output;

// Two traces compared by operator identity: did the change help (`kernlens diff`).
// (Documented by its own `//!` page: an outer doc comment here would make rustdoc resolve
// that page's links from the crate root.)
#[cfg(feature = "triage")]
pub mod diff;

#[cfg(feature = "triage")]
pub mod triage;

#[cfg(feature = "triage")]
pub mod categories;

#[cfg(feature = "triage")]
pub mod env;

#[cfg(feature = "trace")]
pub mod window;

/// The triage pipeline: [`Triage`] composes every stage over one trace.
#[cfg(feature = "triage")]
pub use triage::Triage;
/// Why a triage could not run.
#[cfg(feature = "triage")]
pub use triage::TriageError;
/// One listed task group of a [`TriageReport`].
#[cfg(feature = "triage")]
pub use triage::TriageGroup;
/// What [`Triage`] reads, gates and groups with.
#[cfg(feature = "triage")]
pub use triage::TriageOptions;
/// What one triage found; serialises as the `kernlens.triage/1` document.
#[cfg(feature = "triage")]
pub use triage::TriageReport;
