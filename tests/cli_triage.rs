//! `kernlens triage` end to end: the built binary over the bundled fixtures,
//! the shared real traces and copies derived from them (cli.md).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../crates/kernlens-gate/tests/support/traces.rs"]
mod traces;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const ENV_CLEARED: [&str; 3] = [
    "KERNLENS_SOURCE_ROOTS",
    "KERNLENS_IDLE_THRESHOLD_PCT",
    "KERNLENS_MIN_COMPUTE_PCT",
];

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn shared(name: &str) -> PathBuf {
    repo_root().join("fixtures/traces").join(name)
}

/// `kernlens triage ARGS...` run from the repository root, with the
/// variables it reads set as given and otherwise removed.
fn triage(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kernlens"));
    command.current_dir(repo_root()).arg("triage").args(args);
    for name in ENV_CLEARED {
        command.env_remove(name);
    }
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

fn json(args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let output = triage(&all, env);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

fn group<'a>(doc: &'a Value, operation: &str) -> &'a Value {
    doc["task_groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["operation"] == operation)
        .unwrap_or_else(|| panic!("no group {operation}"))
}

#[test]
fn readme_first_command_finds_the_triton_kernel_in_the_bundled_root() {
    // Exactly the README's command (package discovery on, as a user runs it).
    let output = triage(
        &["fixtures/traces/eager.json.gz", "--root", "fixtures/src"],
        &[],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("gate      pass"), "{text}");
    let row = text
        .lines()
        .find(|l| l.ends_with("_fused_scale_bias_kernel"))
        .unwrap_or_else(|| panic!("{text}"));
    for cell in ["triton", "fixtures/src/gen_traces.py:39", "eligible"] {
        assert!(row.contains(cell), "{row}");
    }
    let gemm = text.lines().find(|l| l.contains("nvjet_")).unwrap();
    assert!(gemm.contains("not found (vendor_binary)"), "{gemm}");
    assert!(gemm.starts_with("tg001"), "{gemm}");
}

#[test]
fn json_document_follows_the_contract_key_order() {
    let doc = json(
        &[
            "fixtures/traces/eager.json.gz",
            "--root",
            "fixtures/src",
            "--no-discover",
        ],
        &[],
    );
    assert_eq!(
        keys(&doc),
        ["schema", "summary", "gate", "suppressed", "task_groups"]
    );
    assert_eq!(doc["schema"], "kernlens.triage/1");
    assert_eq!(doc["summary"]["schema"], "kernlens.summary/1");
    assert_eq!(
        keys(&doc["gate"]),
        [
            "decision",
            "idle_pct",
            "threshold_pct",
            "compute_pct",
            "min_compute_pct",
            "exposed_comm_pct",
            "warnings"
        ]
    );
    assert_eq!(doc["suppressed"], 0);
    let triton = group(&doc, "_fused_scale_bias_kernel");
    assert_eq!(
        keys(triton),
        [
            "id",
            "operation",
            "identity_key",
            "category",
            "total_us",
            "calls",
            "share",
            "kernels",
            "source",
            "rewrite_route"
        ]
    );
    assert_eq!(
        keys(&triton["source"]),
        [
            "found",
            "path",
            "line",
            "function",
            "kind",
            "method",
            "reason",
            "confidence"
        ]
    );
    assert_eq!(triton["source"]["kind"], "triton");
    assert_eq!(triton["source"]["method"], "trace_python_stack");
    assert_eq!(triton["source"]["line"], 39);
    assert!(
        triton["source"]["path"]
            .as_str()
            .unwrap()
            .ends_with("fixtures/src/gen_traces.py")
    );
    let route = &triton["rewrite_route"];
    assert_eq!(route["route"], "flydsl_rewrite");
    assert_eq!(route["candidate"], "_fused_scale_bias_kernel");
    assert_eq!(route["source"], "triton");
    assert_eq!(route["eligible"], true);

    let groups = doc["task_groups"].as_array().unwrap();
    let share: f64 = groups.iter().map(|g| g["share"].as_f64().unwrap()).sum();
    let covered: f64 = doc["summary"]["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["share"].as_f64().unwrap())
        .sum();
    assert!((share - covered).abs() < 1e-9);
    let gemm = &groups[0];
    assert_eq!(gemm["identity_key"], Value::Null);
    assert_eq!(gemm["source"]["found"], false);
    assert_eq!(gemm["source"]["reason"], "vendor_binary");
    assert_eq!(gemm["rewrite_route"]["reason"], "non_portable_language");
}

#[test]
fn top_limits_the_hot_rows_taken() {
    let doc = json(
        &[
            "fixtures/traces/eager.json.gz",
            "--root",
            "fixtures/src",
            "--no-discover",
            "--top",
            "2",
        ],
        &[],
    );
    assert_eq!(doc["summary"]["kernels"].as_array().unwrap().len(), 2);
    assert_eq!(doc["task_groups"].as_array().unwrap().len(), 2);
}

#[test]
fn source_roots_come_from_the_environment_too() {
    let root = repo_root().join("fixtures/src");
    let doc = json(
        &["fixtures/traces/eager.json.gz", "--no-discover"],
        &[("KERNLENS_SOURCE_ROOTS", root.to_str().unwrap())],
    );
    assert_eq!(
        group(&doc, "_fused_scale_bias_kernel")["source"]["found"],
        true
    );
}

#[test]
fn no_root_at_all_reports_everything_but_sources_and_says_why_once() {
    let output = triage(
        &["fixtures/traces/eager.json.gz", "--no-discover", "--json"],
        &[],
    );
    assert_eq!(output.status.code(), Some(0));
    let err = stderr(&output);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("kernlens: "), "{err}");
    assert!(err.contains("no search root"), "{err}");
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    let groups = doc["task_groups"].as_array().unwrap();
    assert_eq!(groups.len(), 6);
    assert!(groups.iter().all(|g| g["source"]["found"] == false));
    assert_eq!(
        group(&doc, "_fused_scale_bias_kernel")["source"]["reason"],
        "no_search_roots"
    );
}

#[test]
fn compiled_trace_resolves_inductor_kernels_to_runtime_generated_sources() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("inductor_cache");
    std::fs::create_dir(&cache).unwrap();
    let status = Command::new("tar")
        .arg("xzf")
        .arg(shared("inductor_src.tar.gz"))
        .arg("-C")
        .arg(&cache)
        .status()
        .unwrap();
    assert!(status.success());
    let trace = shared("compiled.json.gz");
    let doc = json(
        &[
            trace.to_str().unwrap(),
            "--root",
            cache.to_str().unwrap(),
            "--no-discover",
        ],
        &[],
    );
    let inductor: Vec<&Value> = doc["task_groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["operation"].as_str().unwrap().starts_with("triton_"))
        .collect();
    assert!(!inductor.is_empty());
    for g in inductor {
        assert_eq!(g["source"]["found"], true, "{g}");
        assert_eq!(g["source"]["kind"], "runtime_generated", "{g}");
        assert_eq!(g["rewrite_route"]["eligible"], false);
    }
}

#[test]
fn graph_trace_passes_the_gate() {
    let trace = shared("graph.json.gz");
    let doc = json(&[trace.to_str().unwrap(), "--no-discover"], &[]);
    assert_eq!(doc["gate"]["decision"], "pass");
    assert_eq!(doc["gate"]["warnings"], Value::Array(Vec::new()));
    assert!(!doc["task_groups"].as_array().unwrap().is_empty());
}

fn idle_copy(dir: &Path) -> PathBuf {
    let path = dir.join("graph_spread.json.gz");
    let source = traces::read_trace(&shared("graph.json.gz"));
    traces::write_trace(&traces::spread_replays(&source, 30_000.0), &path);
    path
}

#[test]
fn idle_copy_is_suppressed_and_no_gate_lists_it_anyway() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = idle_copy(tmp.path());
    let trace = trace.to_str().unwrap();
    let args = [trace, "--root", "fixtures/src", "--no-discover"];

    let doc = json(&args, &[]);
    assert_eq!(doc["gate"]["decision"], "suppress");
    assert_eq!(doc["task_groups"], Value::Array(Vec::new()));
    assert_eq!(doc["suppressed"], 6);
    assert_eq!(doc["gate"]["warnings"][0]["code"], "high_gpu_idle_pct");

    let output = triage(&args, &[]);
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    assert!(text.contains("gate      suppress"), "{text}");
    assert!(text.contains("held back all 6 hot kernel row(s)"), "{text}");
    assert!(text.contains("--no-gate"), "{text}");

    let mut no_gate = args.to_vec();
    no_gate.push("--no-gate");
    let doc = json(&no_gate, &[]);
    assert_eq!(doc["gate"]["decision"], "suppress");
    assert_eq!(doc["suppressed"], 0);
    assert_eq!(doc["task_groups"].as_array().unwrap().len(), 6);
}

#[test]
fn under_recorded_copy_passes_with_the_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("graph_dropped.json.gz");
    let source = traces::read_trace(&shared("graph.json.gz"));
    traces::write_trace(&traces::drop_replays(&source, 8), &path);
    let doc = json(&[path.to_str().unwrap(), "--no-discover"], &[]);
    assert_eq!(doc["gate"]["decision"], "pass");
    assert_eq!(doc["gate"]["warnings"][0]["code"], "graph_under_recorded");
    assert!(!doc["task_groups"].as_array().unwrap().is_empty());
}

#[test]
fn thresholds_come_from_flags_over_the_environment() {
    // Eager idles 74.22%: a 70% threshold from the environment suppresses it,
    // and the flag overrides the environment.
    let env = [("KERNLENS_IDLE_THRESHOLD_PCT", "70")];
    let args = ["fixtures/traces/eager.json.gz", "--no-discover"];
    let doc = json(&args, &env);
    assert_eq!(doc["gate"]["decision"], "suppress");
    assert_eq!(doc["gate"]["threshold_pct"], 70.0);
    let doc = json(&[args[0], args[1], "--idle-threshold", "80"], &env);
    assert_eq!(doc["gate"]["decision"], "pass");
    let doc = json(&[args[0], args[1], "--min-compute", "30"], &[]);
    assert_eq!(doc["gate"]["decision"], "suppress");
    assert_eq!(doc["gate"]["warnings"][0]["code"], "low_gpu_compute_pct");
}

#[test]
fn rewrite_flags_reach_the_route_verdicts() {
    let args = [
        "fixtures/traces/eager.json.gz",
        "--root",
        "fixtures/src",
        "--no-discover",
    ];
    let mut budget = args.to_vec();
    budget.extend(["--rewrite-budget-min", "60"]);
    let doc = json(&budget, &[]);
    let route = &group(&doc, "_fused_scale_bias_kernel")["rewrite_route"];
    assert_eq!(route["reason"], "budget_insufficient");
    assert_eq!(route["budget_source"], "explicit");
    assert_eq!(route["effective_budget_minutes"], 60);

    let mut opt_in = args.to_vec();
    opt_in.push("--rewrite-opt-in");
    let doc = json(&opt_in, &[]);
    let route = &group(&doc, "_fused_scale_bias_kernel")["rewrite_route"];
    assert_eq!(route["eligible"], true);
    assert_eq!(route["effective_budget_minutes"], 90);
}

#[test]
fn strict_fails_a_damaged_trace_that_plain_triage_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = traces::read_trace(&repo_root().join("fixtures/traces/eager.json.gz"));
    let text = serde_json::to_string(&whole).unwrap();
    // Cut inside the last events: the reader recovers what came before.
    let damaged = tmp.path().join("eager_cut.json");
    std::fs::write(&damaged, &text[..text.len() - 2000]).unwrap();
    let path = damaged.to_str().unwrap();

    let doc = json(&[path, "--no-discover"], &[]);
    assert_eq!(doc["summary"]["stream_errors"].as_array().unwrap().len(), 1);
    assert!(!doc["task_groups"].as_array().unwrap().is_empty());

    let output = triage(&[path, "--no-discover", "--strict", "--json"], &[]);
    assert_eq!(output.status.code(), Some(3));
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(doc["schema"], "kernlens.triage/1");

    let whole = triage(
        &["fixtures/traces/eager.json.gz", "--no-discover", "--strict"],
        &[],
    );
    assert_eq!(whole.status.code(), Some(0));
}

#[test]
fn unreadable_input_and_bad_flags_exit_with_their_codes() {
    let output = triage(&["no/such/trace.json", "--no-discover"], &[]);
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(
        err.starts_with("kernlens: cannot open trace 'no/such/trace.json': "),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
    assert!(!err.contains("panicked"));

    let output = triage(
        &["fixtures/traces/eager.json.gz", "--idle-threshold", "lots"],
        &[],
    );
    assert_eq!(output.status.code(), Some(2));
    let output = triage(&["fixtures/traces/eager.json.gz", "--top", "-1"], &[]);
    assert_eq!(output.status.code(), Some(2));
    let output = triage(&[], &[]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn json_output_is_identical_across_runs() {
    let args = [
        "fixtures/traces/eager.json.gz",
        "--root",
        "fixtures/src",
        "--no-discover",
        "--json",
    ];
    let first = triage(&args, &[]);
    let second = triage(&args, &[]);
    assert_eq!(first.stdout, second.stdout);
    assert!(first.stderr.is_empty());
}

#[test]
fn kernels_the_root_only_mentions_are_all_not_found_and_never_eligible() {
    // A root that mentions every kernel of the eager trace without defining
    // any: an ATen-style dispatch header (a stub sharing the kernels' last
    // segments, a declaration), a comment naming the GEMM, and a Python
    // module that lists and passes the Triton kernel by name.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::write(
        root.join("dispatch.h"),
        "// nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT is cuBLAS's\n\
         DECLARE_DISPATCH(elementwise_fn, vectorized_elementwise_kernel);\n\
         void vectorized_layer_norm_kernel(int n);\n\
         using layer_norm_kernel = void (*)(int);\n",
    )
    .unwrap();
    std::fs::write(
        root.join("names.py"),
        "KERNELS = [\"_fused_scale_bias_kernel\", \"cudnn_generated_fort_native_sdpa\"]\n\
         launch(_fused_scale_bias_kernel, grid)\n",
    )
    .unwrap();
    let trace = "fixtures/traces/eager.json.gz";
    let root_arg = root.to_str().unwrap();
    let doc = json(&[trace, "--root", root_arg, "--no-discover"], &[]);
    let groups = doc["task_groups"].as_array().unwrap();
    assert_eq!(groups.len(), 6);
    for g in groups {
        assert_eq!(g["source"]["found"], false, "{g}");
        assert_eq!(g["source"]["path"], Value::Null, "{g}");
        assert_ne!(g["rewrite_route"]["eligible"], true, "{g}");
    }
    let fused = group(&doc, "_fused_scale_bias_kernel");
    assert_eq!(fused["source"]["reason"], "mention_only");
    assert_eq!(fused["source"]["confidence"], "mention");
    let output = triage(&[trace, "--root", root_arg, "--no-discover"], &[]);
    let text = stdout(&output);
    let row = text
        .lines()
        .find(|l| l.ends_with("_fused_scale_bias_kernel"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("not found (mention only)"), "{row}");
    assert!(!text.contains("eligible "), "{text}");
}
