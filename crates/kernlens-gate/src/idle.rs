//! The high-idle gate with its graph-coverage guard (gate.md "High-idle gate with graph guard").

use crate::coverage::CoverageFacts;
use crate::error::GateError;
use crate::verdict::{Decision, Verdict};
use crate::warning::Warning;

/// The high-idle gate.
///
/// At or below `threshold_pct`, or with an unknown idle figure, it passes
/// without calling `probe`: reading a multi-GB trace for coverage takes
/// seconds and only matters above the threshold. Above it, `probe` runs once:
/// an under-recorded graph trace passes with `graph_under_recorded`; any other
/// answer suppresses with `high_gpu_idle_pct`; a probe error fails open to
/// the plain gate and adds a `graph_probe_failed` diagnostic.
pub fn idle_gate<P>(idle_pct: Option<f64>, threshold_pct: f64, probe: P) -> Verdict
where
    P: FnOnce() -> Result<CoverageFacts, GateError>,
{
    idle_gate_for(idle_pct, threshold_pct, None, probe)
}

pub(crate) fn idle_gate_for<P>(
    idle_pct: Option<f64>,
    threshold_pct: f64,
    source: Option<&str>,
    probe: P,
) -> Verdict
where
    P: FnOnce() -> Result<CoverageFacts, GateError>,
{
    let Some(idle) = idle_pct.filter(|idle| !idle.is_nan()) else {
        return Verdict::pass();
    };
    // A NaN threshold compares false, which also means "no gate".
    let above = idle > threshold_pct;
    if !above {
        return Verdict::pass();
    }
    match probe() {
        Ok(cov) if cov.under_recorded => Verdict::new(
            Decision::Pass,
            vec![Warning::under_recorded(&cov, idle, threshold_pct)],
        ),
        Ok(_) => Verdict::new(
            Decision::Suppress,
            vec![Warning::high_idle(idle, threshold_pct, source)],
        ),
        Err(err) => Verdict::new(
            Decision::Suppress,
            vec![
                Warning::high_idle(idle, threshold_pct, source),
                Warning::probe_failed(err.to_string()),
            ],
        ),
    }
}
