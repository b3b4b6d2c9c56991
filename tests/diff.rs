//! `kernlens::diff` from Rust on the bundled real captures (fixtures/traces), the trace
//! scaler's copies of them, and the renamed-kernel pair of fixtures/diff (its NOTE.md).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/trace_files.rs"]
mod trace_files;

use std::io::Read;
use std::path::{Path, PathBuf};

use kernlens::diff::{
    DiffOptions, DiffReport, GroupStatus, Normalize, Side, WarningCode, diff_traces,
};
use kernlens::trace::{StepSource, TraceSource, WindowMode};
use trace_files::{fixture, repo_root};

fn gunzip(path: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn open(path: &Path) -> TraceSource {
    TraceSource::open(path).unwrap()
}

fn diff(before: &Path, after: &Path, options: &DiffOptions) -> DiffReport {
    diff_traces(&open(before), &open(after), options).unwrap()
}

fn whole() -> DiffOptions {
    DiffOptions::default()
        .with_window(WindowMode::Full)
        .with_normalize(Normalize::None)
}

fn codes(report: &DiffReport) -> Vec<WarningCode> {
    report.warnings.iter().map(|w| w.code).collect()
}

/// The trace scaler's ×`copies` copy of a bundled capture, in `dir` (trace.md,
/// "Synthetic-trace scaler"; no gap, so every figure scales exactly).
fn scaled(name: &str, copies: u64, dir: &Path) -> PathBuf {
    let out = dir.join(format!("{name}_x{copies}.json"));
    let mut file = std::fs::File::create(&out).unwrap();
    kernlens_xtask::scale(&gunzip(&fixture(name)), &mut file, copies, 0).unwrap();
    out
}

#[test]
fn a_trace_against_itself_has_zero_deltas_and_no_added_or_removed_groups() {
    for name in [
        "eager.json.gz",
        "compiled.json.gz",
        "graph.json.gz",
        "multistream.json.gz",
    ] {
        let path = fixture(name);
        for options in [
            whole(),
            whole().with_window(WindowMode::steady(StepSource::Auto)),
        ] {
            let report = diff(&path, &path, &options);
            assert!(!report.groups.is_empty(), "{name}");
            assert_eq!(report.added().count(), 0, "{name}");
            assert_eq!(report.removed().count(), 0, "{name}");
            for g in &report.groups {
                assert_eq!(g.status, GroupStatus::Matched, "{name} {}", g.operation);
                assert_eq!(g.total_us.delta, 0.0, "{name} {}", g.operation);
                assert_eq!(g.total_us.delta_pct, Some(0.0));
                assert_eq!(g.calls.delta, 0);
                assert_eq!(g.share.delta, 0.0);
                assert_eq!(g.kernels_before, g.kernels_after);
            }
            let t = &report.totals;
            for d in [
                t.span_us,
                t.busy_us,
                t.idle_us,
                t.kernel_sum_us,
                t.categories.exposed_communication_us,
            ] {
                assert_eq!(d.delta, 0.0, "{name}");
            }
            assert!(t.per_device.iter().all(|d| d.busy_us.delta == 0.0));
            assert!(report.warnings.is_empty(), "{name}: {:?}", report.warnings);
            assert!(report.headline().starts_with("kernel time 0.0% (0.000 ms"));
        }
    }
}

#[test]
fn eager_against_compiled_matches_the_gemms_and_swaps_eager_kernels_for_fused_ones() {
    let report = diff(
        &fixture("eager.json.gz"),
        &fixture("compiled.json.gz"),
        &whole(),
    );
    let with = |status: GroupStatus| -> Vec<&str> {
        let mut ops: Vec<&str> = report
            .groups
            .iter()
            .filter(|g| g.status == status)
            .map(|g| g.operation.as_str())
            .collect();
        ops.sort_unstable();
        ops
    };
    // The cuBLAS GEMM and the cuDNN attention kernel have the same identity in both.
    assert_eq!(
        with(GroupStatus::Matched),
        [
            "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0",
            "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT",
        ]
    );
    let gemm = report
        .groups
        .iter()
        .find(|g| g.operation.starts_with("nvjet"))
        .unwrap();
    assert_eq!((gemm.calls.before, gemm.calls.after), (128, 128));
    // Eager's elementwise (GELU and add fold into one template), layer norm and the
    // hand-written Triton kernel are gone ...
    assert_eq!(
        with(GroupStatus::Removed),
        [
            "_fused_scale_bias_kernel",
            "at::native::(anonymous namespace)::vectorized_layer_norm_kernel",
            "at::native::vectorized_elementwise_kernel",
        ]
    );
    let elementwise = report
        .groups
        .iter()
        .find(|g| g.operation == "at::native::vectorized_elementwise_kernel")
        .unwrap();
    assert_eq!(elementwise.kernels_before.len(), 2);
    assert_eq!(elementwise.total_us.delta_pct, Some(-100.0));
    // ... and inductor's fused kernels replace them.
    let added = with(GroupStatus::Added);
    assert_eq!(added.len(), 7, "{added:?}");
    assert!(
        added.iter().all(|op| op.starts_with("triton_")),
        "{added:?}"
    );
    assert!(added.contains(&"triton_poi_fused_gelu_view_2"));
    for g in report.added() {
        assert_eq!(g.total_us.before, 0.0);
        assert_eq!(g.total_us.delta_pct, None);
        assert!(g.kernels_before.is_empty());
    }
    // Sorted by |Δ time|.
    let deltas: Vec<f64> = report
        .groups
        .iter()
        .map(|g| g.total_us.delta.abs())
        .collect();
    assert!(deltas.windows(2).all(|w| w[0] >= w[1]), "{deltas:?}");
    assert_eq!(report.groups[0].id, "tg001");
}

#[test]
fn the_scalers_double_copy_shows_twice_the_calls_and_time_on_every_group() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["eager.json.gz", "graph.json.gz", "compiled.json.gz"] {
        let doubled = scaled(name, 2, dir.path());
        let report = diff(&fixture(name), &doubled, &whole());
        assert_eq!(report.added().count() + report.removed().count(), 0);
        for g in &report.groups {
            assert_eq!(g.calls.after, 2 * g.calls.before, "{name} {}", g.operation);
            assert_eq!(g.calls.delta_pct(), Some(100.0));
            assert_eq!(g.total_us.after, 2.0 * g.total_us.before);
            assert_eq!(g.total_us.delta_pct, Some(100.0), "{name} {}", g.operation);
            assert_eq!(g.avg_us.delta, 0.0);
        }
        assert_eq!(report.totals.kernel_sum_us.delta_pct, Some(100.0));
        assert_eq!(report.totals.busy_us.delta_pct, Some(100.0));
        assert_eq!(
            report.totals.kernel_count.after,
            2 * report.totals.kernel_count.before
        );

        // Per wall second: the copies follow each other (the scaler shifts each by the
        // whole trace's span, CPU included), so on a GPU-bound trace twice the work in
        // about twice the time is about no change.
        if name == "graph.json.gz" {
            let wall = diff(
                &fixture(name),
                &doubled,
                &whole().with_normalize(Normalize::Wall),
            );
            assert_eq!(wall.normalization.applied, Normalize::Wall);
            let kernel = wall.totals.kernel_sum_us.delta_pct.unwrap();
            assert!(kernel.abs() < 5.0, "{name}: {kernel}");
            assert!((wall.before.divisor - wall.before.span_us / 1e6).abs() < 1e-12);
        }
    }
}

#[test]
fn a_kernel_renamed_by_launch_api_or_template_argument_still_matches() {
    let dir = repo_root().join("fixtures/diff");
    let report = diff(
        &dir.join("renamed_before.json"),
        &dir.join("renamed_after.json"),
        &whole(),
    );
    assert_eq!(report.groups.len(), 4, "{:#?}", report.groups);
    assert!(
        report
            .groups
            .iter()
            .all(|g| g.status == GroupStatus::Matched)
    );
    let by_op = |op: &str| report.groups.iter().find(|g| g.operation == op).unwrap();
    let scale = by_op("mylib::scale_kernel");
    assert_eq!((scale.total_us.before, scale.total_us.after), (40.0, 24.0));
    assert_eq!(scale.total_us.delta_pct, Some(-40.0));
    assert_eq!(
        scale.kernels_after,
        ["void mylib::scale_kernel<c10::BFloat16, 8>(c10::BFloat16*, int)"]
    );
    let norm = by_op("mylib::rms_norm_kernel");
    assert_eq!(norm.total_us.delta_pct, Some(-25.0));
    assert_eq!(
        norm.kernels_after,
        ["hipGraphLaunch->_ZN5mylib15rms_norm_kernelIfEEvPfPKfi.kd"]
    );
    assert_eq!(by_op("triton_poi_fused_add_0").total_us.delta, 0.0);
    // The biggest fall is the top gain.
    assert_eq!(report.top_gain().unwrap().operation, "mylib::scale_kernel");
    assert!(
        report
            .headline()
            .contains("top gain: tg001 scale_kernel \u{2212}40.0%")
    );
    assert_eq!(
        report.before.gpu_models.as_deref(),
        Some(&["NVIDIA H200".to_owned()][..])
    );
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
}

#[test]
fn steady_windows_on_both_sides_are_compared_per_step() {
    let compiled = fixture("compiled.json.gz");
    let steady = whole()
        .with_window(WindowMode::steady(StepSource::Auto))
        .with_normalize(Normalize::Auto);
    let report = diff(&compiled, &compiled, &steady);
    assert_eq!(report.normalization.applied, Normalize::Step);
    assert!(
        report.headline().contains(" ms/step)"),
        "{}",
        report.headline()
    );
    // One step of compiled (trace.md's real-fixture figures: 1957.959 µs).
    assert!((report.totals.span_us.before - 1957.959).abs() < 1e-6);

    // Step asked for with one side whole: per trace, and said so.
    let mixed = diff(
        &compiled,
        &compiled,
        &steady
            .clone()
            .with_before_window(WindowMode::Full)
            .with_normalize(Normalize::Step),
    );
    assert_eq!(mixed.normalization.applied, Normalize::None);
    let warning = mixed
        .warnings
        .iter()
        .find(|w| w.code == WarningCode::StepUnavailable)
        .unwrap();
    assert_eq!(warning.side, Some(Side::Before));
    assert!(codes(&mixed).contains(&WarningCode::WindowKindsDiffer));
}

#[test]
fn an_under_recorded_side_is_flagged_as_not_comparable() {
    let report = diff(
        &fixture("graph.json.gz"),
        &fixture("graph_under_recorded.json.gz"),
        &whole(),
    );
    let warning = report
        .warnings
        .iter()
        .find(|w| w.code == WarningCode::GraphUnderRecorded)
        .unwrap();
    assert_eq!(warning.side, Some(Side::After));
    assert!(report.after.graph_under_recorded && !report.before.graph_under_recorded);
}

#[test]
fn different_gpu_models_and_a_damaged_side_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let text = String::from_utf8(gunzip(&fixture("eager.json.gz"))).unwrap();
    let other_gpu = dir.path().join("eager_h100.json");
    std::fs::write(
        &other_gpu,
        text.replacen("\"NVIDIA H200\"", "\"NVIDIA H100 80GB HBM3\"", 1),
    )
    .unwrap();
    let report = diff(&fixture("eager.json.gz"), &other_gpu, &whole());
    assert_eq!(codes(&report), [WarningCode::GpuModelsDiffer]);
    assert_eq!(
        report.after.gpu_models.as_deref(),
        Some(&["NVIDIA H100 80GB HBM3".to_owned()][..])
    );

    // Cut mid-way: the reader recovers and reports stream errors.
    let cut = dir.path().join("eager_cut.json");
    std::fs::write(&cut, &text.as_bytes()[..text.len() / 2]).unwrap();
    let damaged = diff(&fixture("eager.json.gz"), &cut, &whole());
    let warning = damaged
        .warnings
        .iter()
        .find(|w| w.code == WarningCode::StreamErrors)
        .unwrap();
    assert_eq!(warning.side, Some(Side::After));
    assert!(damaged.after.stream_errors > 0);
}

#[test]
fn different_device_counts_are_warned_about() {
    let kernel = |device: u32, ts: u32| {
        format!(
            r#"{{"ph":"X","cat":"kernel","name":"gemm","pid":{device},"tid":7,"ts":{ts},"dur":10,"args":{{"device":{device}}}}}"#
        )
    };
    let one = format!(r#"{{"traceEvents":[{}]}}"#, kernel(0, 0));
    let two = format!(r#"{{"traceEvents":[{},{}]}}"#, kernel(0, 0), kernel(1, 5));
    let report = diff_traces(
        &TraceSource::from_bytes("one.json", one),
        &TraceSource::from_bytes("two.json", two),
        &whole(),
    )
    .unwrap();
    assert_eq!(codes(&report), [WarningCode::DeviceCountsDiffer]);
    assert_eq!(report.totals.per_device.len(), 2);
    assert_eq!(report.totals.per_device[1].status, GroupStatus::Added);
    assert_eq!(report.groups[0].calls.delta, 1);
}

#[test]
fn an_unreadable_side_names_itself_in_the_error() {
    // A stream source reads once; a second read fails, and the error says which side.
    let bytes = gunzip(&fixture("eager.json.gz"));
    let stream = TraceSource::from_reader("stream.json", std::io::Cursor::new(bytes));
    kernlens::trace::analyze(&stream, &Default::default()).unwrap();
    let err = diff_traces(&open(&fixture("eager.json.gz")), &stream, &whole()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("cannot read the after trace 'stream.json': "),
        "{text}"
    );
}

#[test]
fn the_document_carries_its_schema_headline_and_counts() {
    let report = diff(
        &fixture("eager.json.gz"),
        &fixture("compiled.json.gz"),
        &whole(),
    );
    let doc = report.to_json().unwrap();
    assert_eq!(doc["schema"], "kernlens.diff/1");
    assert_eq!(doc["headline"], report.headline());
    assert_eq!(doc["added"], 7);
    assert_eq!(doc["removed"], 3);
    assert_eq!(doc["normalization"]["applied"], "none");
    assert_eq!(doc["before"]["window_kind"], "full");
    assert_eq!(doc["before"]["gpu_models"][0], "NVIDIA H200");
    let first = &doc["groups"][0];
    for member in ["before", "after", "delta", "delta_pct"] {
        assert!(first["total_us"].get(member).is_some(), "{member}");
        assert!(first["calls"].get(member).is_some(), "{member}");
    }
    assert!(
        first["identity_key"]
            .as_str()
            .unwrap()
            .contains("\"operation\":")
    );
    assert!(doc["totals"]["categories"]["exposed_communication_us"]["delta"].is_number());
}
