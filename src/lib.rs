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
//! ```
//! use kernlens::trace::{analyze, Options, TraceSource};
//!
//! let source = TraceSource::from_bytes(
//!     "t.json",
//!     br#"{"traceEvents":[{"ph":"X","cat":"kernel","name":"gemm","ts":0,"dur":5}]}"#.to_vec(),
//! );
//! let analysis = analyze(&source, &Options::default())?;
//! assert_eq!(analysis.kernels[0].name, "gemm");
//! # Ok::<(), kernlens::trace::TraceError>(())
//! ```

/// Reading traces: timeline, busy/idle, hot kernels, graph-replay coverage, windows, split.
pub use kernlens_trace as trace;

/// Kernel identity: keys, operator identities, task groups, categories.
pub use kernlens_ident as ident;

/// Locating kernel sources: the file that defines each kernel, its kind and the evidence.
pub use kernlens_locate as locate;

/// Gates between a trace summary and kernel work: idle/compute gates, lane guard, rewrite route.
pub use kernlens_gate as gate;

/// Scratch workspaces: a git-tracked copy of a package for kernel rewrites, and the patch back.
pub use kernlens_scratch as scratch;

/// Files the CLI writes outside scratch: temp file, fsync, rename; never the input, never through a link.
pub mod output;

/// Two traces compared by operator identity: did the change help (`kernlens diff`).
pub mod diff;

pub mod triage;

/// The triage pipeline: [`Triage`] composes every stage over one trace.
pub use triage::Triage;
/// Why a triage could not run.
pub use triage::TriageError;
/// One listed task group of a [`TriageReport`].
pub use triage::TriageGroup;
/// What [`Triage`] reads, gates and groups with.
pub use triage::TriageOptions;
/// What one triage found; serialises as the `kernlens.triage/1` document.
pub use triage::TriageReport;
