//! The `Triage` pipeline from Rust, without the CLI, on the real H200 traces
//! (`../shared/traces`), the bundled fixtures (`fixtures/traces`,
//! `fixtures/src`) and copies of `graph.json.gz` derived by the gate crate's
//! test support (idle, under-recorded), with real source trees in temp dirs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../crates/kernlens-gate/tests/support/traces.rs"]
mod traces;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use kernlens::gate::{BudgetSource, Decision, DeclineReason, WarningCode};
use kernlens::locate::{DiscoveryEnv, Locator, LocatorBuilder, Method, SourceKind};
use kernlens::trace::TraceSource;
use kernlens::{Triage, TriageOptions, TriageReport};

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn shared(name: &str) -> PathBuf {
    repo_root().join("fixtures/traces").join(name)
}

fn eager() -> PathBuf {
    repo_root().join("fixtures/traces/eager.json.gz")
}

fn fixture_src() -> PathBuf {
    repo_root().join("fixtures/src")
}

/// Roots given explicitly only: discovery sees an empty environment, so
/// whatever is installed on the machine cannot leak in.
fn roots(dirs: &[&Path]) -> LocatorBuilder {
    let mut builder = Locator::builder().discovery(DiscoveryEnv::empty());
    for dir in dirs {
        builder = builder.root(*dir);
    }
    builder
}

fn triage(trace: &Path, dirs: &[&Path], options: TriageOptions) -> TriageReport {
    let mut pipeline = Triage::new(roots(dirs), options).unwrap();
    pipeline.run(&TraceSource::open(trace).unwrap()).unwrap()
}

fn all_rows() -> TriageOptions {
    let mut options = TriageOptions::default();
    options.top_k = 0;
    options
}

/// Every hot row appears in exactly one listed group, and the listed groups
/// add up to what the hot rows cover, in time, calls and share.
fn assert_rows_accounted_for(report: &TriageReport) {
    let rows: Vec<&str> = report
        .analysis
        .kernels
        .iter()
        .map(|k| k.name.as_str())
        .collect();
    let mut listed: Vec<&str> = report
        .task_groups
        .iter()
        .flat_map(|g| g.kernels.iter().map(String::as_str))
        .collect();
    assert_eq!(listed.len(), rows.len(), "a row is listed twice or dropped");
    listed.sort_unstable();
    let mut sorted_rows = rows.clone();
    sorted_rows.sort_unstable();
    assert_eq!(listed, sorted_rows);

    let share: f64 = report.task_groups.iter().map(|g| g.share).sum();
    assert!(
        (share - report.covered_share()).abs() < 1e-9,
        "{share} vs {}",
        report.covered_share()
    );
    let total: f64 = report.task_groups.iter().map(|g| g.total_us).sum();
    let row_total: f64 = report.analysis.kernels.iter().map(|k| k.total_us).sum();
    assert!((total - row_total).abs() < 1e-6 * row_total.max(1.0));
    let calls: u64 = report.task_groups.iter().map(|g| g.calls).sum();
    assert_eq!(
        calls,
        report.analysis.kernels.iter().map(|k| k.calls).sum::<u64>()
    );
    for (n, group) in report.task_groups.iter().enumerate() {
        assert_eq!(group.id, format!("tg{:03}", n + 1));
    }
    for pair in report.task_groups.windows(2) {
        assert!(pair[0].total_us >= pair[1].total_us);
    }
}

#[test]
fn eager_triton_kernel_resolves_to_gen_traces_with_launcher_evidence() {
    let report = triage(&eager(), &[&fixture_src()], TriageOptions::default());
    assert_eq!(report.gate.decision, Decision::Pass);
    let group = report
        .task_groups
        .iter()
        .find(|g| g.operation == "_fused_scale_bias_kernel")
        .expect("the Triton kernel is listed");
    let source = &group.source;
    assert!(source.found);
    assert_eq!(
        source.path.as_deref(),
        Some(
            fixture_src()
                .canonicalize()
                .unwrap()
                .join("gen_traces.py")
                .as_path()
        )
    );
    assert_eq!(source.line, Some(39));
    assert_eq!(source.kind, SourceKind::Triton);
    // The trace's `gen_traces.py(47): fused_scale` frame corroborates the file.
    assert_eq!(source.method, Method::TracePythonStack);
    let launcher = group.locate.as_ref().unwrap().launcher.as_ref().unwrap();
    assert!(launcher.corroborated);
    assert_eq!(
        (launcher.line, launcher.function.as_str()),
        (47, "fused_scale")
    );
    assert!(
        group
            .identity_key
            .as_deref()
            .unwrap()
            .contains("gen_traces.py")
    );
    assert!(group.rewrite_route.eligible());
    assert_eq!(group.rewrite_route.candidate, "_fused_scale_bias_kernel");
    assert_rows_accounted_for(&report);
}

#[test]
fn vendor_library_kernels_are_listed_not_found_with_the_reason() {
    let report = triage(&eager(), &[&fixture_src()], all_rows());
    let vendor: Vec<_> = report
        .task_groups
        .iter()
        .filter(|g| g.operation.starts_with("nvjet_") || g.operation.starts_with("cudnn_"))
        .collect();
    assert_eq!(vendor.len(), 2, "the cuBLAS GEMM and the cuDNN attention");
    for group in vendor {
        assert!(!group.source.found);
        assert_eq!(group.source.path, None);
        assert_eq!(group.source.kind, SourceKind::VendorBinary);
        assert_eq!(
            group.source.reason.map(|r| r.as_str()),
            Some("vendor_binary")
        );
        assert_eq!(group.identity_key, None);
        assert_eq!(
            group.rewrite_route.reason(),
            Some(DeclineReason::NonPortableLanguage)
        );
    }
    // The GEMM is the largest group: nothing hot is dropped for lack of a source.
    assert!(report.task_groups[0].operation.starts_with("nvjet_"));
    assert_rows_accounted_for(&report);
}

#[test]
fn shares_of_listed_groups_add_up_to_the_covered_kernel_time() {
    for name in [
        "eager.json.gz",
        "compiled.json.gz",
        "compiled_ro.json.gz",
        "graph.json.gz",
    ] {
        for top_k in [0, 3] {
            let mut options = TriageOptions::default();
            options.top_k = top_k;
            let report = triage(&shared(name), &[&fixture_src()], options);
            if top_k == 3 {
                assert_eq!(report.analysis.kernels.len(), 3, "{name}");
                assert!(report.covered_share() < 1.0, "{name}");
            } else {
                assert!((report.covered_share() - 1.0).abs() < 1e-9, "{name}");
            }
            assert_rows_accounted_for(&report);
        }
    }
}

/// A template kernel's instantiations are one operator: both
/// `vectorized_elementwise_kernel<8, …Gelu…>` and `<8, …add…>` of the eager
/// trace are defined by the same `__global__` in a real `.cuh` file, so they
/// form one task group whose numbers are the sums of the two rows.
#[test]
fn rows_defined_by_one_template_kernel_form_one_task_group() {
    let tree = tempfile::tempdir().unwrap();
    let dir = tree.path().join("aten/src/ATen/native/cuda");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("CUDALoops.cuh"),
        "#pragma once\n#include <cuda_runtime.h>\n\nnamespace at::native {\n\n\
         template <int vec_size, typename func_t, typename array_t>\n\
         __global__ void vectorized_elementwise_kernel(int N, func_t f, array_t data) {\n\
         }\n\n} // namespace at::native\n",
    )
    .unwrap();
    let report = triage(&eager(), &[&fixture_src(), tree.path()], all_rows());
    let group = report
        .task_groups
        .iter()
        .find(|g| g.kernels.len() > 1)
        .expect("one group holds two rows");
    assert_eq!(group.kernels.len(), 2);
    assert!(
        group
            .kernels
            .iter()
            .all(|k| k.contains("vectorized_elementwise_kernel<8"))
    );
    let rows: Vec<_> = report
        .analysis
        .kernels
        .iter()
        .filter(|k| group.kernels.contains(&k.name))
        .collect();
    assert_eq!(group.calls, rows.iter().map(|k| k.calls).sum::<u64>());
    assert!((group.share - rows.iter().map(|k| k.share).sum::<f64>()).abs() < 1e-12);
    // The primary row is the larger one, and names the operation.
    let largest = rows
        .iter()
        .max_by(|a, b| a.total_us.total_cmp(&b.total_us))
        .unwrap();
    assert_eq!(group.operation, largest.name);
    assert_eq!(group.kernels[0], largest.name);
    assert_eq!(group.source.kind, SourceKind::Cuda);
    assert_eq!(group.source.line, Some(7));
    let key = group.identity_key.as_deref().unwrap();
    assert!(key.contains("\"source_kind\":\"native\""), "{key}");
    assert!(group.rewrite_route.eligible());
    assert_eq!(report.task_groups.len(), report.analysis.kernels.len() - 1);
    assert_rows_accounted_for(&report);
}

/// Extracts the inductor sources the compiled runs wrote into
/// `<tmp>/inductor_cache/`, as the capture machine had them.
fn inductor_cache() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("inductor_cache");
    std::fs::create_dir(&dir).unwrap();
    let status = std::process::Command::new("tar")
        .arg("xzf")
        .arg(shared("inductor_src.tar.gz"))
        .arg("-C")
        .arg(&dir)
        .status()
        .unwrap();
    assert!(status.success());
    let dir = dir.canonicalize().unwrap();
    (tmp, dir)
}

#[test]
fn compiled_inductor_kernels_resolve_to_runtime_generated_sources() {
    let (_tmp, cache) = inductor_cache();
    let report = triage(&shared("compiled.json.gz"), &[&cache], all_rows());
    let inductor: Vec<_> = report
        .task_groups
        .iter()
        .filter(|g| g.operation.starts_with("triton_"))
        .collect();
    assert_eq!(inductor.len(), 7);
    for group in inductor {
        assert!(group.source.found, "{}", group.operation);
        assert!(group.source.path.as_ref().unwrap().starts_with(&cache));
        assert_eq!(group.source.kind, SourceKind::RuntimeGenerated);
        // An edit to a generated file does not last: never a rewrite target.
        assert_eq!(
            group.rewrite_route.reason(),
            Some(DeclineReason::NonPortableLanguage)
        );
    }
    assert_rows_accounted_for(&report);
}

#[test]
fn graph_trace_passes_the_gate_and_lists_its_groups() {
    let report = triage(&shared("graph.json.gz"), &[&fixture_src()], all_rows());
    assert_eq!(report.gate.decision, Decision::Pass);
    assert!(report.gate.warnings.is_empty());
    assert_eq!(report.suppressed, 0);
    assert_eq!(report.task_groups.len(), report.analysis.kernels.len());
    let triton = report
        .task_groups
        .iter()
        .find(|g| g.operation == "_fused_scale_bias_kernel")
        .unwrap();
    // No Python frames in a graph replay; the name search alone finds it.
    assert_eq!(triton.source.method, Method::Definition);
    assert_eq!(triton.source.kind, SourceKind::Triton);
}

/// A fully recorded but genuinely idle copy of `graph.json.gz` (every replay
/// kept, the GPU waiting 30 ms between them).
fn idle_copy(dir: &Path) -> PathBuf {
    let path = dir.join("graph_spread.json.gz");
    let source = traces::read_trace(&shared("graph.json.gz"));
    traces::write_trace(&traces::spread_replays(&source, 30_000.0), &path);
    path
}

#[test]
fn genuinely_idle_trace_is_suppressed_without_walking_any_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = idle_copy(tmp.path());
    let mut pipeline = Triage::new(roots(&[&fixture_src()]), TriageOptions::default()).unwrap();
    let report = pipeline.run(&TraceSource::open(&trace).unwrap()).unwrap();
    assert_eq!(report.gate.decision, Decision::Suppress);
    assert_eq!(report.gate.warnings[0].code, WarningCode::HighGpuIdlePct);
    assert!(report.gate.warnings[0].message.contains("host-bound"));
    assert!(report.task_groups.is_empty());
    assert_eq!(report.suppressed, report.analysis.kernels.len());
    assert!(report.suppressed > 0);
    assert_eq!(pipeline.locator().unwrap().stats().files_walked, 0);
}

#[test]
fn gate_not_applied_lists_the_groups_of_an_idle_trace_with_the_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = idle_copy(tmp.path());
    let mut options = TriageOptions::default();
    options.apply_gate = false;
    let report = triage(&trace, &[&fixture_src()], options);
    assert_eq!(report.gate.decision, Decision::Suppress);
    assert_eq!(report.suppressed, 0);
    assert!(!report.task_groups.is_empty());
    assert_rows_accounted_for(&report);
}

#[test]
fn under_recorded_copy_passes_with_the_graph_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("graph_dropped.json.gz");
    let source = traces::read_trace(&shared("graph.json.gz"));
    traces::write_trace(&traces::drop_replays(&source, 8), &path);
    let report = triage(&path, &[&fixture_src()], TriageOptions::default());
    assert!(report.gate.idle_pct.unwrap() > 80.0);
    assert_eq!(report.gate.decision, Decision::Pass);
    let codes: Vec<_> = report.gate.warnings.iter().map(|w| w.code).collect();
    assert_eq!(codes, [WarningCode::GraphUnderRecorded]);
    assert!(!report.task_groups.is_empty());
    assert_rows_accounted_for(&report);
}

#[test]
fn without_any_root_everything_but_the_sources_is_reported() {
    let mut pipeline = Triage::new(roots(&[]), all_rows()).unwrap();
    assert!(pipeline.locator().is_none());
    let report = pipeline.run(&TraceSource::open(eager()).unwrap()).unwrap();
    let why = report.sources_unavailable.as_deref().unwrap();
    assert!(why.starts_with("no search root"), "{why}");
    assert!(report.roots.is_empty());
    assert_eq!(report.gate.decision, Decision::Pass);
    assert_eq!(report.task_groups.len(), report.analysis.kernels.len());
    for group in &report.task_groups {
        assert!(!group.source.found);
        let expected = if group.source.kind == SourceKind::VendorBinary {
            "vendor_binary"
        } else {
            "no_search_roots"
        };
        assert_eq!(group.source.reason.map(|r| r.as_str()), Some(expected));
    }
    assert_rows_accounted_for(&report);
}

#[test]
fn the_trace_is_read_once_even_from_a_one_shot_reader() {
    // A reader-backed source fails a second read with SourceConsumed, so a
    // report from it proves the gate and locate did not read the trace again.
    let bytes = std::fs::read(eager()).unwrap();
    let source = TraceSource::from_reader("eager.json.gz", std::io::Cursor::new(bytes));
    let mut pipeline = Triage::new(roots(&[&fixture_src()]), TriageOptions::default()).unwrap();
    let report = pipeline.run(&source).unwrap();
    let triton = report
        .task_groups
        .iter()
        .find(|g| g.operation == "_fused_scale_bias_kernel")
        .unwrap();
    assert_eq!(triton.source.method, Method::TracePythonStack);
    assert!(pipeline.run(&source).is_err());
}

#[test]
fn triage_is_deterministic_across_runs_and_pipelines() {
    let (_tmp, cache) = inductor_cache();
    let dirs: [&Path; 2] = [&fixture_src(), &cache];
    let first = triage(&shared("compiled_ro.json.gz"), &dirs, all_rows())
        .to_json()
        .unwrap();
    let second = triage(&shared("compiled_ro.json.gz"), &dirs, all_rows())
        .to_json()
        .unwrap();
    assert_eq!(first, second);
    // The same pipeline again, served from the locator's cache.
    let mut pipeline = Triage::new(roots(&dirs), all_rows()).unwrap();
    let source = || TraceSource::open(shared("compiled_ro.json.gz")).unwrap();
    let a = pipeline.run(&source()).unwrap().to_json().unwrap();
    let b = pipeline.run(&source()).unwrap().to_json().unwrap();
    assert_eq!(a, first);
    assert_eq!(b, first);
}

#[test]
fn rewrite_budget_and_opt_in_reach_every_verdict() {
    let mut options = TriageOptions::default();
    options.rewrite_budget_minutes = Some(60);
    let report = triage(&eager(), &[&fixture_src()], options);
    let triton = report
        .task_groups
        .iter()
        .find(|g| g.operation == "_fused_scale_bias_kernel")
        .unwrap();
    assert_eq!(
        triton.rewrite_route.reason(),
        Some(DeclineReason::BudgetInsufficient)
    );
    assert_eq!(triton.rewrite_route.budget_source, BudgetSource::Explicit);
    assert_eq!(triton.rewrite_route.effective_budget_minutes, 60);

    let mut options = TriageOptions::default();
    options.rewrite_opt_in = true;
    let report = triage(&eager(), &[&fixture_src()], options);
    let verdicts: HashSet<u32> = report
        .task_groups
        .iter()
        .map(|g| g.rewrite_route.effective_budget_minutes)
        .collect();
    assert_eq!(verdicts, HashSet::from([90]));
}

#[test]
fn json_document_embeds_the_summary_and_the_gate_in_contract_order() {
    let report = triage(&eager(), &[&fixture_src()], TriageOptions::default());
    let doc = report.to_json().unwrap();
    let keys: Vec<&str> = doc
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["schema", "summary", "gate", "suppressed", "task_groups"]
    );
    assert_eq!(doc["schema"], "kernlens.triage/1");
    // The summary is the whole kernlens.summary/1 document.
    assert_eq!(doc["summary"], report.analysis.to_json());
    assert!(doc["gate"].get("schema").is_none());
    assert_eq!(doc["gate"]["decision"], "pass");
}
