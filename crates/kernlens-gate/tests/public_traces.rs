//! The gate over third-party traces (TraceLens's test data, not redistributed here).
//! They run when `KERNLENS_PUBLIC_TRACES` names the directory holding them (`.ci/run`
//! sets it); otherwise each test prints why it skipped.
#![cfg(feature = "trace")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kernlens_gate::{Decision, Thresholds, WarningCode, raw_trace_probe};
use support::run::{assert_probes_agree, gate_file};
use support::trace_files::PublicTraces;

#[test]
fn analysis_probe_agrees_with_the_raw_probe_on_public_traces() {
    let Some(public) =
        PublicTraces::get("analysis_probe_agrees_with_the_raw_probe_on_public_traces")
    else {
        return;
    };
    for name in [
        "tracelens_inference__sglang_decode__sglang_Qwen3-8B_decode.json.gz",
        "tracelens_inference__vllm_prefilldecode_piecewise__graph_execution.json.gz",
        "hta__a100_graph__rank0.json.gz",
    ] {
        assert_probes_agree(&public.path(name));
    }
}

/// SGLang decode on MI300X: one `hipGraphLaunch` replaying 544 kernels, with
/// the GPU idle ≈ 97.94% of a 474 ms span. A single launch cannot show
/// under-recording (the rule needs at least two launches, and this one's
/// kernels were recorded: coverage 1.0), so the graph guard does not fire and
/// the idle figure stands: the decode loop is host-bound. Compute is then far
/// below 10% as well, so both gates suppress.
#[test]
fn sglang_decode_with_one_recorded_graph_launch_is_gated_as_host_bound() {
    let Some(public) =
        PublicTraces::get("sglang_decode_with_one_recorded_graph_launch_is_gated_as_host_bound")
    else {
        return;
    };
    let path = public.path("tracelens_inference__sglang_decode__sglang_Qwen3-8B_decode.json.gz");
    let (verdict, inputs, calls) = gate_file(&path, &Thresholds::default());
    let idle = inputs.idle_pct.unwrap();
    assert!((idle - 97.937).abs() < 0.01, "idle {idle}");
    assert_eq!(calls, 1);
    let facts = raw_trace_probe(&path)().unwrap();
    assert_eq!((facts.launches, facts.launches_with_kernels), (1, 1));
    assert!(!facts.under_recorded);
    assert_eq!(verdict.decision, Decision::Suppress);
    assert_eq!(
        verdict.codes(),
        [WarningCode::HighGpuIdlePct, WarningCode::LowGpuComputePct]
    );
}
