//! The inputs of both gates and their combination (gate.md "Low-compute gate", gate.md "Combined evaluation").

use serde::Serialize;

use crate::compute::compute_gate_for;
use crate::coverage::CoverageFacts;
use crate::error::GateError;
use crate::idle::idle_gate_for;
use crate::thresholds::Thresholds;
use crate::verdict::{Decision, Verdict};
use crate::warning::WarningCode;

/// What the gates read from a trace summary. An unreadable value is `None`,
/// never 0: a 0 would read as "fully idle" or "no compute" and gate wrongly.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[non_exhaustive]
pub struct GateInputs {
    /// GPU idle share of trace wall time, 0..=100.
    pub idle_pct: Option<f64>,
    /// Computation-kernel share of trace wall time, 0..=100.
    pub compute_pct: Option<f64>,
    /// Communication not hidden under computation, 0..=100; `None` when the
    /// trace has no communication kernels.
    pub exposed_comm_pct: Option<f64>,
    /// The trace the figures came from, echoed in warnings.
    pub source: Option<String>,
}

impl GateInputs {
    /// Inputs from the three figures, with no source.
    pub fn new(
        idle_pct: Option<f64>,
        compute_pct: Option<f64>,
        exposed_comm_pct: Option<f64>,
    ) -> Self {
        GateInputs {
            idle_pct,
            compute_pct,
            exposed_comm_pct,
            source: None,
        }
    }

    /// The same inputs naming their source trace.
    pub fn with_source(mut self, source: impl Into<String>) -> Self {
        self.source = Some(source.into());
        self
    }
}

/// A percentage from a cell of another report (CSV, markdown table): one
/// trailing `%` is stripped; a missing, blank, non-numeric or non-finite cell
/// is `None`, never 0.
pub fn pct_from_cell(cell: Option<&str>) -> Option<f64> {
    let text = cell?.trim();
    let text = text.strip_suffix('%').unwrap_or(text).trim();
    text.parse::<f64>().ok().filter(|value| value.is_finite())
}

/// Both gates: the idle gate (which alone may call `probe`), then, unless the
/// idle figure was found unreliable, the low-compute gate.
///
/// An under-recorded graph trace passes with `graph_under_recorded` alone,
/// since under-recording deflates every share, compute included. Otherwise
/// either gate may suppress, and the warnings come in the order
/// `high_gpu_idle_pct`, `graph_probe_failed`, `low_gpu_compute_pct`.
pub fn evaluate<P>(inputs: &GateInputs, thresholds: &Thresholds, probe: P) -> Verdict
where
    P: FnOnce() -> Result<CoverageFacts, GateError>,
{
    let source = inputs.source.as_deref();
    let idle = idle_gate_for(inputs.idle_pct, thresholds.idle_pct, source, probe);
    if idle.warning(WarningCode::GraphUnderRecorded).is_some() {
        return idle;
    }
    let compute = compute_gate_for(
        inputs.compute_pct,
        inputs.exposed_comm_pct,
        thresholds.min_compute_pct,
        source,
    );
    let decision = if idle.suppressed() || compute.suppressed() {
        Decision::Suppress
    } else {
        Decision::Pass
    };
    let mut warnings = idle.warnings;
    warnings.extend(compute.warnings);
    Verdict::new(decision, warnings)
}
