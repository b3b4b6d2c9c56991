//! The decisions that sit between a trace summary and kernel work.
//!
//! - **High-idle gate with graph guard** ([`idle_gate`]): a trace whose GPU
//!   idles above the threshold is host-bound, so its hot kernels are held
//!   back from kernel rewriting, unless the idle figure is an artefact of a
//!   profiler that recorded only a few CUDA/HIP-graph replays. A lazy
//!   coverage probe, called only above the threshold, tells the two apart.
//! - **Low-compute gate** ([`compute_gate`]) and their combination
//!   ([`evaluate`]), with typed, serialisable warnings ([`Verdict`],
//!   [`GateReport`]).
//! - **Lane idle guard** ([`lane`]): a pure state machine that winds down a
//!   work lane that keeps "working" without progress.
//! - **Rewrite-route policy** ([`rewrite`]): whether a kernel attempt may
//!   take the FlyDSL rewrite route, as a `#[must_use]` verdict.
//!
//! Every decision is a deterministic function: clocks, environment values and
//! trace reading are handed in. The core depends on no other stage crate; the
//! `trace` feature adds adapters over `kernlens-trace`. This crate does not
//! read traces itself, pick hot kernels, or run any rewrite.
//!
//! ```
//! use kernlens_gate::{evaluate, CoverageFacts, Decision, GateInputs, Thresholds, WarningCode};
//!
//! // 95% idle, but only 1 of 8 graph replays was recorded: keep the hot kernels.
//! let inputs = GateInputs::new(Some(95.0), Some(3.99), None).with_source("run/trace.json.gz");
//! let probe = || Ok(CoverageFacts::new(8, 1, Some(0.125), 40, true));
//! let verdict = evaluate(&inputs, &Thresholds::default(), probe);
//! assert_eq!(verdict.decision, Decision::Pass);
//! assert_eq!(verdict.codes(), [WarningCode::GraphUnderRecorded]);
//! ```

// Panic audit (issue 8): library code never unwraps or expects; tests opt out per module.
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod compute;
mod coverage;
mod error;
mod evaluate;
#[cfg(feature = "trace")]
mod from_trace;
mod idle;
pub mod lane;
mod report;
pub mod rewrite;
mod thresholds;
mod verdict;
mod warning;

pub use compute::compute_gate;
pub use coverage::CoverageFacts;
pub use error::GateError;
pub use evaluate::{GateInputs, evaluate, pct_from_cell};
#[cfg(feature = "trace")]
pub use from_trace::{analysis_probe, raw_trace_probe, raw_trace_probe_with_limits};
pub use idle::idle_gate;
pub use report::{GATE_SCHEMA, GateDocument, GateReport};
pub use rewrite::{
    BudgetSource, DeclineReason, Eligibility, RewriteRequest, RewriteVerdict, SourceKind,
    evaluate_rewrite_route,
};
pub use thresholds::{
    DEFAULT_IDLE_THRESHOLD_PCT, DEFAULT_MIN_COMPUTE_PCT, EnvFallback, IDLE_THRESHOLD_ENV,
    MIN_COMPUTE_ENV, ThresholdProblem, Thresholds, parse_pct, parse_threshold,
};
pub use verdict::{Decision, Verdict};
pub use warning::{Severity, Warning, WarningCode};
