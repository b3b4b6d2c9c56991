//! Running the gate over a trace file as a caller without an analysis in hand would.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::cell::Cell;
use std::path::Path;

use kernlens_gate::{
    CoverageFacts, GateError, GateInputs, Thresholds, Verdict, analysis_probe, evaluate,
    raw_trace_probe,
};
use kernlens_trace::{Analysis, Options, TraceSource};

/// The default analysis of the trace at `path`.
pub fn analyze(path: &Path) -> Analysis {
    let source = TraceSource::open(path).unwrap();
    kernlens_trace::analyze(&source, &Options::default()).unwrap()
}

/// Wraps a probe so the test can count its calls.
pub fn counted<'a>(
    probe: impl FnOnce() -> Result<CoverageFacts, GateError> + 'a,
    calls: &'a Cell<u32>,
) -> impl FnOnce() -> Result<CoverageFacts, GateError> + 'a {
    move || {
        calls.set(calls.get() + 1);
        probe()
    }
}

/// The gate over a trace file with the raw-trace probe, as a caller without
/// an analysis in hand would run it; returns the verdict and the probe calls.
pub fn gate_file(path: &Path, thresholds: &Thresholds) -> (Verdict, GateInputs, u32) {
    let analysis = analyze(path);
    let inputs = GateInputs::from_analysis(&analysis);
    let calls = Cell::new(0);
    let verdict = evaluate(&inputs, thresholds, counted(raw_trace_probe(path), &calls));
    (verdict, inputs, calls.get())
}

/// The analysis-backed probe and the raw-trace probe give the same facts for `path`.
pub fn assert_probes_agree(path: &Path) {
    let analysis = analyze(path);
    let from_analysis = analysis_probe(&analysis)().unwrap();
    let from_raw = raw_trace_probe(path)().unwrap();
    assert_eq!(from_analysis, from_raw, "{}", path.display());
}
