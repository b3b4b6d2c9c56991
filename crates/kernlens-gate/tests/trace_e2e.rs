//! The gate end to end over real and derived traces (gate.md "High-idle gate with graph guard: The probe must read the raw, un-split trace", gate.md "Low-compute gate", gate.md "Acceptance scenarios"
//! scenarios 10 and 15–20), through the `trace` feature's adapters.
#![cfg(feature = "trace")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};

use kernlens_gate::{
    Decision, GateError, GateInputs, Thresholds, WarningCode, analysis_probe, idle_gate,
    raw_trace_probe,
};
use kernlens_trace::TraceSource;
use serde_json::{Value, json};
use support::run::{analyze, assert_probes_agree, gate_file};
use support::trace_files::fixture;
use support::traces;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn thresholds(idle: f64, min_compute: f64) -> Thresholds {
    Thresholds::new(idle, min_compute)
}

fn write(dir: &tempfile::TempDir, name: &str, trace: &Value) -> PathBuf {
    let path = dir.path().join(name);
    traces::write_trace(trace, &path);
    path
}

// --- scenario 10: the raw-trace probe's own errors ---

#[test]
fn raw_probe_on_a_missing_path_fails_with_the_reader_message() {
    let missing = repo_root().join("no/such/trace.json");
    let err = raw_trace_probe(&missing)().unwrap_err();
    let GateError::ProbeFailed { reason } = err else {
        panic!("expected ProbeFailed, got {err:?}");
    };
    assert!(reason.contains("no usable trace file at"), "{reason}");
}

#[test]
fn raw_probe_refuses_a_kernlens_split_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let chunk = write(
        &dir,
        "chunk.json",
        &traces::handmade_chunk_of_under_recorded(),
    );
    let err = raw_trace_probe(&chunk)().unwrap_err();
    assert!(matches!(err, GateError::SplitChunk { .. }), "{err:?}");
    // The analysis-backed probe refuses the same chunk.
    let analysis = analyze(&chunk);
    assert!(matches!(
        analysis_probe(&analysis)(),
        Err(GateError::SplitChunk { .. })
    ));
}

// --- scenario 15 ---

#[test]
fn trace_without_gpu_events_gives_unknown_inputs_and_passes() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write(&dir, "empty.json", &json!({"traceEvents": []}));
    let (verdict, inputs, calls) = gate_file(&empty, &Thresholds::default());
    assert_eq!(
        (inputs.idle_pct, inputs.compute_pct, inputs.exposed_comm_pct),
        (None, None, None)
    );
    assert_eq!(inputs.source.as_deref(), Some(empty.to_str().unwrap()));
    assert_eq!(verdict.decision, Decision::Pass);
    assert!(verdict.warnings.is_empty());
    assert_eq!(calls, 0);
}

// --- scenario 16 ---

#[test]
fn under_recorded_synthetic_passes_through_the_raw_probe_but_not_through_its_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        "under_recorded.json",
        &traces::under_recorded_synthetic(),
    );
    let (verdict, inputs, calls) = gate_file(&path, &Thresholds::default());
    let idle = inputs.idle_pct.unwrap();
    assert!((idle - 99.997).abs() < 0.001, "idle {idle}");
    assert_eq!(calls, 1);
    assert_eq!(verdict.decision, Decision::Pass);
    assert_eq!(verdict.codes(), [WarningCode::GraphUnderRecorded]);
    let warning = &verdict.warnings[0];
    assert_eq!(warning.field("launches"), Some(&json!(4)));
    assert_eq!(warning.field("launches_with_kernels"), Some(&json!(1)));
    assert_eq!(warning.field("coverage"), Some(&json!(0.25)));

    // The same idle gate with its probe pointed at a split chunk fails open.
    let chunk = write(
        &dir,
        "chunk.json",
        &traces::handmade_chunk_of_under_recorded(),
    );
    let verdict = idle_gate(inputs.idle_pct, 80.0, raw_trace_probe(&chunk));
    assert_eq!(verdict.decision, Decision::Suppress);
    assert_eq!(
        verdict.codes(),
        [WarningCode::HighGpuIdlePct, WarningCode::GraphProbeFailed]
    );
}

#[test]
fn a_foreign_chunk_without_launch_events_cannot_raise_the_guard() {
    // Why the probe must read the raw trace: a foreign splitter keeps the
    // kernels and drops the CPU-side launches, so the chunk shows no graphs.
    let dir = tempfile::tempdir().unwrap();
    let mut foreign = traces::under_recorded_synthetic();
    let kept: Vec<Value> = foreign["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] != "hipGraphLaunch")
        .cloned()
        .collect();
    foreign["traceEvents"] = Value::Array(kept);
    let path = write(&dir, "foreign_chunk.json", &foreign);
    let (verdict, _, _) = gate_file(&path, &Thresholds::default());
    assert_eq!(verdict.decision, Decision::Suppress);
    assert!(verdict.warning(WarningCode::GraphUnderRecorded).is_none());
}

// --- scenario 17 ---

#[test]
fn fully_recorded_idle_synthetic_is_gated() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        "idle_graphs.json",
        &traces::fully_recorded_idle_synthetic(),
    );
    let (verdict, inputs, calls) = gate_file(&path, &Thresholds::default());
    assert!(inputs.idle_pct.unwrap() > 80.0);
    assert_eq!(calls, 1);
    assert_eq!(verdict.decision, Decision::Suppress);
    assert_eq!(verdict.codes()[0], WarningCode::HighGpuIdlePct);
    assert!(verdict.warning(WarningCode::GraphUnderRecorded).is_none());
    assert!(verdict.warning(WarningCode::GraphProbeFailed).is_none());
}

// --- scenarios 18–20: the bundled real traces ---

#[test]
fn eager_passes_at_80_without_probing_and_is_gated_at_70() {
    let path = fixture("eager.json.gz");
    let (verdict, inputs, calls) = gate_file(&path, &Thresholds::default());
    let idle = inputs.idle_pct.unwrap();
    assert!((idle - 74.217).abs() < 0.01, "idle {idle}");
    assert_eq!(verdict.decision, Decision::Pass);
    assert_eq!(calls, 0);

    let (verdict, _, calls) = gate_file(&path, &thresholds(70.0, 10.0));
    assert_eq!(calls, 1);
    assert_eq!(verdict.decision, Decision::Suppress);
    assert_eq!(verdict.codes(), [WarningCode::HighGpuIdlePct]);
    let message = &verdict.warnings[0].message;
    assert!(
        message.contains("74.22%") && message.contains("70.00%"),
        "{message}"
    );
}

#[test]
fn graph_trace_passes_without_probing() {
    let (verdict, inputs, calls) = gate_file(&fixture("graph.json.gz"), &Thresholds::default());
    let idle = inputs.idle_pct.unwrap();
    assert!((idle - 6.44).abs() < 0.01, "idle {idle}");
    assert_eq!(verdict.decision, Decision::Pass);
    assert!(verdict.warnings.is_empty());
    assert_eq!(calls, 0);
}

#[test]
fn compiled_trace_is_gated_only_when_min_compute_exceeds_its_compute_share() {
    let path = fixture("compiled.json.gz");
    let (verdict, inputs, _) = gate_file(&path, &Thresholds::default());
    let compute = inputs.compute_pct.unwrap();
    assert!((compute - 35.91).abs() < 0.01, "compute {compute}");
    assert_eq!(inputs.exposed_comm_pct, None, "no communication kernels");
    assert_eq!(verdict.decision, Decision::Pass);

    let (verdict, _, _) = gate_file(&path, &thresholds(80.0, 40.0));
    assert_eq!(verdict.decision, Decision::Suppress);
    assert_eq!(verdict.codes(), [WarningCode::LowGpuComputePct]);
    assert!(verdict.warnings[0].field("exposed_comm_pct").is_none());
}

#[test]
fn analysis_probe_agrees_with_the_raw_probe_on_every_own_capture() {
    for name in [
        "eager.json.gz",
        "graph.json.gz",
        "compiled.json.gz",
        "compiled_ro.json.gz",
    ] {
        assert_probes_agree(&fixture(name));
    }
}

// --- derived copies of graph.json.gz ---

#[test]
fn graph_copy_missing_seven_of_eight_replays_passes_as_under_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let source = traces::read_trace(&fixture("graph.json.gz"));
    let path = write(
        &dir,
        "graph_dropped.json.gz",
        &traces::drop_replays(&source, 8),
    );
    let (verdict, inputs, calls) = gate_file(&path, &Thresholds::default());
    assert!(inputs.idle_pct.unwrap() > 80.0, "{inputs:?}");
    assert_eq!(calls, 1);
    assert_eq!(verdict.decision, Decision::Pass);
    assert_eq!(verdict.codes(), [WarningCode::GraphUnderRecorded]);
    let warning = &verdict.warnings[0];
    assert_eq!(warning.field("launches"), Some(&json!(40)));
    assert_eq!(warning.field("launches_with_kernels"), Some(&json!(5)));
    assert_eq!(warning.field("coverage"), Some(&json!(0.125)));
}

#[test]
fn graph_copy_with_replays_spread_apart_is_gated_by_idle_and_compute() {
    let dir = tempfile::tempdir().unwrap();
    let source = traces::read_trace(&fixture("graph.json.gz"));
    let path = write(
        &dir,
        "graph_spread.json.gz",
        &traces::spread_replays(&source, 30_000.0),
    );

    let (verdict, inputs, calls) = gate_file(&path, &Thresholds::default());
    let idle = inputs.idle_pct.unwrap();
    assert!(idle > 80.0 && idle < 99.99, "idle {idle}");
    assert!(inputs.compute_pct.unwrap() < 10.0, "{inputs:?}");
    assert_eq!(calls, 1);
    assert_eq!(verdict.decision, Decision::Suppress);
    assert_eq!(
        verdict.codes(),
        [WarningCode::HighGpuIdlePct, WarningCode::LowGpuComputePct]
    );

    let env = |idle: &'static str, min: Option<&'static str>| {
        Thresholds::from_lookup(move |name| match name {
            "KERNLENS_IDLE_THRESHOLD_PCT" => Some(idle.to_owned()),
            "KERNLENS_MIN_COMPUTE_PCT" => min.map(str::to_owned),
            _ => None,
        })
    };
    let (verdict, _, calls) = gate_file(&path, &env("99.99", None));
    assert_eq!(calls, 0);
    assert_eq!(verdict.decision, Decision::Suppress);
    assert_eq!(verdict.codes(), [WarningCode::LowGpuComputePct]);

    let (verdict, _, _) = gate_file(&path, &env("99.99", Some("0")));
    assert_eq!(verdict.decision, Decision::Pass);
    assert!(verdict.warnings.is_empty());
}

// --- chunks written by kernlens-trace's own split ---

fn split_to(source: &Path, window: kernlens_trace::TimeWindow, out: &Path) {
    let source = TraceSource::open(source).unwrap();
    let file = std::fs::File::create(out).unwrap();
    kernlens_trace::split(
        &source,
        window,
        file,
        &kernlens_trace::SplitOptions::default(),
    )
    .unwrap();
}

#[test]
fn real_split_chunk_of_the_under_recorded_trace_is_refused_and_the_plain_gate_applies() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        "under_recorded.json",
        &traces::under_recorded_synthetic(),
    );
    let chunk = dir.path().join("chunk.json");
    split_to(
        &path,
        kernlens_trace::TimeWindow::new(0, 2_000_000).unwrap(),
        &chunk,
    );

    // The chunk on its own looks fully recorded: what the probe must not trust.
    let chunk_analysis = analyze(&chunk);
    assert!(!chunk_analysis.graph.under_recorded);
    let source_graph = chunk_analysis
        .provenance
        .as_ref()
        .and_then(|p| p.source_graph.as_ref())
        .unwrap();
    assert!(source_graph.under_recorded);

    assert!(matches!(
        raw_trace_probe(&chunk)(),
        Err(GateError::SplitChunk { .. })
    ));
    assert!(matches!(
        analysis_probe(&chunk_analysis)(),
        Err(GateError::SplitChunk { .. })
    ));
    let idle = GateInputs::from_analysis(&analyze(&path)).idle_pct;
    let verdict = idle_gate(idle, 80.0, raw_trace_probe(&chunk));
    assert_eq!(verdict.decision, Decision::Suppress);
    assert_eq!(
        verdict.codes(),
        [WarningCode::HighGpuIdlePct, WarningCode::GraphProbeFailed]
    );
}

#[test]
fn steady_chunk_of_compiled_ro_is_refused_while_its_source_reads_eight_of_eight() {
    let dir = tempfile::tempdir().unwrap();
    let source_path = fixture("compiled_ro.json.gz");
    let chunk = dir.path().join("steady.json");
    let source = TraceSource::open(&source_path).unwrap();
    let file = std::fs::File::create(&chunk).unwrap();
    kernlens_trace::split_window(
        &source,
        &kernlens_trace::WindowMode::steady(kernlens_trace::StepSource::Auto),
        file,
        &kernlens_trace::SplitOptions::default(),
    )
    .unwrap();

    let raw = raw_trace_probe(&source_path)().unwrap();
    assert_eq!((raw.launches, raw.launches_with_kernels), (8, 8));
    let err = raw_trace_probe(&chunk)().unwrap_err();
    let GateError::SplitChunk { path } = err else {
        panic!("expected SplitChunk, got {err:?}");
    };
    assert!(path.ends_with("steady.json"), "{path}");
}
