//! Gate inputs and coverage probes built from `kernlens-trace` (feature `trace`).

use std::path::Path;

use kernlens_trace::{Analysis, GraphCoverage, Limits, TraceSource};

use crate::coverage::CoverageFacts;
use crate::error::GateError;
use crate::evaluate::GateInputs;

impl From<GraphCoverage> for CoverageFacts {
    fn from(graph: GraphCoverage) -> Self {
        CoverageFacts::from(&graph)
    }
}

impl From<&GraphCoverage> for CoverageFacts {
    fn from(graph: &GraphCoverage) -> Self {
        CoverageFacts {
            launches: graph.launches,
            launches_with_kernels: graph.launches_with_kernels,
            coverage: graph.coverage,
            graph_kernels: graph.graph_kernels,
            under_recorded: graph.under_recorded,
        }
    }
}

impl GateInputs {
    /// The gate's figures from a trace analysis (gate.md "Low-compute gate"): idle% from the
    /// timeline; compute% and exposed-communication% from its categories over
    /// the timeline total. A trace with no GPU events gives all three `None`,
    /// and one with no communication kernels gives `exposed_comm_pct` `None`.
    pub fn from_analysis(analysis: &Analysis) -> Self {
        let timeline = &analysis.timeline;
        let total = timeline.total_us;
        let source = Some(analysis.trace_file.clone());
        if !(total.is_finite() && total > 0.0) {
            return GateInputs {
                source,
                ..GateInputs::default()
            };
        }
        let categories = &timeline.categories;
        let share = |part: f64| part / total * 100.0;
        GateInputs {
            idle_pct: Some(timeline.idle_pct),
            compute_pct: Some(share(categories.computation_us)),
            exposed_comm_pct: (categories.communication_us > 0.0)
                .then(|| share(categories.exposed_communication_us)),
            source,
        }
    }
}

/// A probe answering from an analysis already in hand, so a caller that has
/// read the trace does not read it again: `analysis.graph` is counted over the
/// whole file before any window (trace.md "Graph launches and coverage"). A split chunk is refused.
pub fn analysis_probe(
    analysis: &Analysis,
) -> impl FnOnce() -> Result<CoverageFacts, GateError> + '_ {
    move || {
        if analysis.provenance.is_some() {
            return Err(GateError::SplitChunk {
                path: analysis.trace_file.clone(),
            });
        }
        Ok(CoverageFacts::from(&analysis.graph))
    }
}

/// A probe that reads graph coverage from the raw, un-split trace at `path`
/// with default [`Limits`]. Give it the file the analysis resolved
/// (`TraceSource::file()`), never a chunk: a chunk's coverage is about 1.0 by
/// construction, and foreign splitters drop the launch events altogether. A
/// kernlens chunk is refused with [`GateError::SplitChunk`].
pub fn raw_trace_probe(
    path: impl AsRef<Path>,
) -> impl FnOnce() -> Result<CoverageFacts, GateError> {
    raw_trace_probe_with_limits(path, Limits::default())
}

/// [`raw_trace_probe`] with explicit reader limits.
pub fn raw_trace_probe_with_limits(
    path: impl AsRef<Path>,
    limits: Limits,
) -> impl FnOnce() -> Result<CoverageFacts, GateError> {
    let path = path.as_ref().to_path_buf();
    move || {
        let source = TraceSource::open(&path)?;
        let report = kernlens_trace::graph_coverage(&source, &limits)?;
        if report.provenance.is_some() {
            return Err(GateError::SplitChunk {
                path: source.file().to_owned(),
            });
        }
        Ok(CoverageFacts::from(&report.graph))
    }
}
