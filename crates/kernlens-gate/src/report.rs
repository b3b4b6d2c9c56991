//! The `kernlens.gate/1` JSON document (gate.md "JSON shapes").

use serde::Serialize;

use crate::evaluate::GateInputs;
use crate::thresholds::Thresholds;
use crate::verdict::{Decision, Verdict};
use crate::warning::Warning;

/// Schema tag of the gate document.
pub const GATE_SCHEMA: &str = "kernlens.gate/1";

/// A verdict together with the inputs and thresholds it was reached with.
///
/// Serialises without `schema`, which is how triage embeds it;
/// [`GateReport::document`] adds the tag for `kernlens gate --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct GateReport {
    /// Pass or suppress.
    pub decision: Decision,
    /// Idle share echoed from the inputs (null when unknown).
    pub idle_pct: Option<f64>,
    /// The idle threshold actually applied.
    pub threshold_pct: f64,
    /// Compute share echoed from the inputs.
    pub compute_pct: Option<f64>,
    /// The low-compute threshold actually applied.
    pub min_compute_pct: f64,
    /// Exposed-communication share echoed from the inputs.
    pub exposed_comm_pct: Option<f64>,
    /// The verdict's warnings, in order.
    pub warnings: Vec<Warning>,
}

impl GateReport {
    /// The report of `verdict`, reached from `inputs` under `thresholds`.
    pub fn new(inputs: &GateInputs, thresholds: &Thresholds, verdict: Verdict) -> Self {
        GateReport {
            decision: verdict.decision,
            idle_pct: inputs.idle_pct,
            threshold_pct: thresholds.idle_pct,
            compute_pct: inputs.compute_pct,
            min_compute_pct: thresholds.min_compute_pct,
            exposed_comm_pct: inputs.exposed_comm_pct,
            warnings: verdict.warnings,
        }
    }

    /// The report with its `schema` tag first, ready to serialise.
    pub fn document(&self) -> GateDocument<'_> {
        GateDocument {
            schema: GATE_SCHEMA,
            report: self,
        }
    }
}

/// A [`GateReport`] tagged with [`GATE_SCHEMA`].
#[derive(Debug, Serialize)]
pub struct GateDocument<'a> {
    /// Always [`GATE_SCHEMA`].
    pub schema: &'static str,
    /// The report; its keys follow `schema` in the same object.
    #[serde(flatten)]
    pub report: &'a GateReport,
}
