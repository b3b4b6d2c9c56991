//! Gate warnings: their codes, severities, fields and message texts (gate.md "Warnings").

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use crate::coverage::CoverageFacts;

/// What a warning is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WarningCode {
    /// The GPU idled above the threshold; the workload looks host-bound.
    HighGpuIdlePct,
    /// Most graph replays were not recorded, so the idle figure is unreliable.
    GraphUnderRecorded,
    /// Compute is below the threshold share of wall time.
    LowGpuComputePct,
    /// The coverage probe failed and the plain idle gate was applied.
    GraphProbeFailed,
}

impl WarningCode {
    /// The snake_case code used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            WarningCode::HighGpuIdlePct => "high_gpu_idle_pct",
            WarningCode::GraphUnderRecorded => "graph_under_recorded",
            WarningCode::LowGpuComputePct => "low_gpu_compute_pct",
            WarningCode::GraphProbeFailed => "graph_probe_failed",
        }
    }
}

/// How loud a warning is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Severity {
    /// Something the reader should act on.
    Warning,
    /// A diagnostic that explains how a decision was reached.
    Info,
}

/// One warning. Serialises as one flat JSON object: `code`, `severity`,
/// `message`, then each entry of `fields` in order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Warning {
    /// What the warning is about.
    pub code: WarningCode,
    /// How loud it is.
    pub severity: Severity,
    /// Readable text; numbers carry two decimals.
    pub message: String,
    /// Extra values in output order; numbers are the unrounded inputs.
    pub fields: Vec<(String, Value)>,
}

impl Warning {
    /// The value of the field `name`, if the warning has one.
    pub fn field(&self, name: &str) -> Option<&Value> {
        self.fields
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value)
    }

    fn push(&mut self, name: &str, value: impl Into<Value>) {
        self.fields.push((name.to_owned(), value.into()));
    }

    fn push_source(&mut self, source: Option<&str>) {
        if let Some(source) = source {
            self.push("source", source);
        }
    }

    pub(crate) fn high_idle(idle_pct: f64, threshold_pct: f64, source: Option<&str>) -> Self {
        let mut warning = Warning {
            code: WarningCode::HighGpuIdlePct,
            severity: Severity::Warning,
            message: format!(
                "GPU was idle {idle_pct:.2}% of trace wall time (threshold {threshold_pct:.2}%). \
                 The workload looks host-bound: parameter optimization (batching, CUDA graphs, \
                 overlap) comes before kernel rewrites, so no hot kernel is routed to rewriting."
            ),
            fields: Vec::new(),
        };
        warning.push("idle_pct", number(idle_pct));
        warning.push("threshold_pct", number(threshold_pct));
        warning.push_source(source);
        warning
    }

    pub(crate) fn under_recorded(cov: &CoverageFacts, idle_pct: f64, threshold_pct: f64) -> Self {
        let coverage_text = match cov.coverage {
            Some(coverage) => format!("{coverage:.2}"),
            None => "unknown".to_owned(),
        };
        let mut warning = Warning {
            code: WarningCode::GraphUnderRecorded,
            severity: Severity::Warning,
            message: format!(
                "{} of {} graph launches have recorded kernels (coverage {coverage_text}): the \
                 profiler dropped most graph replays, so the computed idle {idle_pct:.2}% \
                 (threshold {threshold_pct:.2}%) is unreliable. The idle gate is skipped and hot \
                 kernels are kept.",
                cov.launches_with_kernels, cov.launches
            ),
            fields: Vec::new(),
        };
        warning.push("launches", cov.launches);
        warning.push("launches_with_kernels", cov.launches_with_kernels);
        warning.push("coverage", cov.coverage.map_or(Value::Null, number));
        warning.push("idle_pct", number(idle_pct));
        warning.push("threshold_pct", number(threshold_pct));
        warning
    }

    pub(crate) fn low_compute(
        compute_pct: f64,
        exposed_comm_pct: Option<f64>,
        threshold_pct: f64,
        source: Option<&str>,
    ) -> Self {
        let mut message = format!(
            "Only {compute_pct:.2}% of trace wall time is compute (threshold {threshold_pct:.2}%)."
        );
        if let Some(exposed) = exposed_comm_pct {
            message.push_str(&format!(
                " Exposed communication accounts for {exposed:.2}% of wall time."
            ));
        }
        message.push_str(
            " The likely cause is a host stall or a spin-waiting collective rather than slow \
             kernels, so kernel rewrites are skipped.",
        );
        let mut warning = Warning {
            code: WarningCode::LowGpuComputePct,
            severity: Severity::Warning,
            message,
            fields: Vec::new(),
        };
        warning.push("compute_pct", number(compute_pct));
        warning.push("threshold_pct", number(threshold_pct));
        if let Some(exposed) = exposed_comm_pct {
            warning.push("exposed_comm_pct", number(exposed));
        }
        warning.push_source(source);
        warning
    }

    pub(crate) fn probe_failed(reason: String) -> Self {
        let mut warning = Warning {
            code: WarningCode::GraphProbeFailed,
            severity: Severity::Info,
            message: format!(
                "graph coverage probe failed ({reason}); the plain idle gate was applied"
            ),
            fields: Vec::new(),
        };
        warning.push("reason", reason);
        warning
    }
}

/// A JSON number, or null for a value JSON cannot hold (NaN, ±inf).
fn number(value: f64) -> Value {
    serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number)
}

impl Serialize for Warning {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3 + self.fields.len()))?;
        map.serialize_entry("code", &self.code)?;
        map.serialize_entry("severity", &self.severity)?;
        map.serialize_entry("message", &self.message)?;
        for (key, value) in &self.fields {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}
