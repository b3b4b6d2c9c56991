//! The graph-coverage facts the idle gate's probe returns.

use serde::Serialize;

/// Graph-launch coverage of a whole, un-split trace (trace.md "Graph launches and coverage"), as plain
/// data so the gate does not depend on the trace reader.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
#[non_exhaustive]
pub struct CoverageFacts {
    /// Distinct graph-launch correlations.
    pub launches: u64,
    /// Launches with at least one recorded kernel.
    pub launches_with_kernels: u64,
    /// `launches_with_kernels / launches`, or `None` with no launches.
    pub coverage: Option<f64>,
    /// Kernels that belong to a graph launch.
    pub graph_kernels: u64,
    /// The profiler dropped most replays, so idle% is not trustworthy.
    pub under_recorded: bool,
}

impl CoverageFacts {
    /// Facts from their parts; `under_recorded` is taken as given, since the
    /// trace reader owns that rule.
    pub fn new(
        launches: u64,
        launches_with_kernels: u64,
        coverage: Option<f64>,
        graph_kernels: u64,
        under_recorded: bool,
    ) -> Self {
        CoverageFacts {
            launches,
            launches_with_kernels,
            coverage,
            graph_kernels,
            under_recorded,
        }
    }
}
