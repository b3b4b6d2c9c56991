//! The low-compute gate (gate.md "Low-compute gate").

use crate::verdict::{Decision, Verdict};
use crate::warning::Warning;

/// The low-compute gate: suppresses with `low_gpu_compute_pct` when
/// `compute_pct < threshold_pct`. An unknown compute figure passes, and an
/// unknown exposed-communication figure is simply left out of the warning.
pub fn compute_gate(
    compute_pct: Option<f64>,
    exposed_comm_pct: Option<f64>,
    threshold_pct: f64,
) -> Verdict {
    compute_gate_for(compute_pct, exposed_comm_pct, threshold_pct, None)
}

pub(crate) fn compute_gate_for(
    compute_pct: Option<f64>,
    exposed_comm_pct: Option<f64>,
    threshold_pct: f64,
    source: Option<&str>,
) -> Verdict {
    let Some(compute) = compute_pct.filter(|compute| !compute.is_nan()) else {
        return Verdict::pass();
    };
    if compute < threshold_pct {
        let exposed = exposed_comm_pct.filter(|exposed| exposed.is_finite());
        Verdict::new(
            Decision::Suppress,
            vec![Warning::low_compute(
                compute,
                exposed,
                threshold_pct,
                source,
            )],
        )
    } else {
        Verdict::pass()
    }
}
