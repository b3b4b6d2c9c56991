//! `kernlens gate` end to end: the real binary over real and derived traces,
//! with thresholds from flags and from the environment (cli.md, gate.md "Thresholds",
//! gate.md "Combined evaluation", gate.md "JSON shapes").
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/trace_files.rs"]
mod trace_files;
#[path = "../crates/kernlens-gate/tests/support/traces.rs"]
mod traces;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use trace_files::fixture;

const IDLE_ENV: &str = "KERNLENS_IDLE_THRESHOLD_PCT";
const MIN_COMPUTE_ENV: &str = "KERNLENS_MIN_COMPUTE_PCT";

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `kernlens gate ARGS...` with the two threshold variables set as given and
/// otherwise removed, so the caller's environment cannot leak in.
fn gate(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kernlens"));
    command
        .arg("gate")
        .args(args)
        .env_remove(IDLE_ENV)
        .env_remove(MIN_COMPUTE_ENV);
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

fn gate_json(trace: &Path, extra: &[&str], env: &[(&str, &str)]) -> Value {
    let mut args = vec![trace.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    let output = gate(&args, env);
    assert!(
        output.status.success(),
        "exit {:?}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn codes(doc: &Value) -> Vec<&str> {
    doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect()
}

#[test]
fn json_document_has_the_gate_schema_keys_in_order() {
    let output = gate(&[fixture("eager.json.gz").to_str().unwrap(), "--json"], &[]);
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let keys = [
        "\"schema\":\"kernlens.gate/1\"",
        "\"decision\":\"pass\"",
        "\"idle_pct\":74.2",
        "\"threshold_pct\":80.0",
        "\"compute_pct\":",
        "\"min_compute_pct\":10.0",
        "\"exposed_comm_pct\":null",
        "\"warnings\":[]",
    ];
    let mut at = 0;
    for key in keys {
        let found = text[at..]
            .find(key)
            .unwrap_or_else(|| panic!("{key} after {at} in {text}"));
        at += found + key.len();
    }
    assert_eq!(text.lines().count(), 1, "one JSON document");
}

#[test]
fn idle_threshold_flag_gates_eager_and_overrides_the_environment() {
    let eager = fixture("eager.json.gz");
    let doc = gate_json(&eager, &["--idle-threshold", "70"], &[]);
    assert_eq!(doc["decision"], "suppress");
    assert_eq!(doc["threshold_pct"], 70.0);
    assert_eq!(codes(&doc), ["high_gpu_idle_pct"]);
    let message = doc["warnings"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("74.22%") && message.contains("70.00%"),
        "{message}"
    );
    assert_eq!(doc["warnings"][0]["source"], eager.to_str().unwrap());

    let doc = gate_json(&eager, &[], &[(IDLE_ENV, "70")]);
    assert_eq!(doc["decision"], "suppress");
    let doc = gate_json(&eager, &["--idle-threshold", "80"], &[(IDLE_ENV, "70")]);
    assert_eq!(doc["decision"], "pass");
    assert_eq!(doc["threshold_pct"], 80.0);
    let doc = gate_json(&eager, &[], &[(IDLE_ENV, "not-a-number")]);
    assert_eq!(doc["threshold_pct"], 80.0);
}

#[test]
fn min_compute_flag_gates_compiled_without_an_exposed_comm_field() {
    let doc = gate_json(&fixture("compiled.json.gz"), &["--min-compute", "40"], &[]);
    assert_eq!(doc["decision"], "suppress");
    assert_eq!(doc["min_compute_pct"], 40.0);
    assert_eq!(codes(&doc), ["low_gpu_compute_pct"]);
    assert!(doc["warnings"][0].get("exposed_comm_pct").is_none());
    let compute = doc["compute_pct"].as_f64().unwrap();
    assert!((compute - 35.91).abs() < 0.01, "{compute}");
}

#[test]
fn under_recorded_copy_of_graph_passes_with_the_graph_warning() {
    let dir = tempfile::tempdir().unwrap();
    let source = traces::read_trace(&fixture("graph.json.gz"));
    let path = dir.path().join("graph_dropped.json.gz");
    traces::write_trace(&traces::drop_replays(&source, 8), &path);
    let doc = gate_json(&path, &[], &[]);
    assert_eq!(doc["decision"], "pass");
    assert_eq!(codes(&doc), ["graph_under_recorded"]);
    let warning = &doc["warnings"][0];
    assert_eq!(
        (
            &warning["launches"],
            &warning["launches_with_kernels"],
            &warning["coverage"]
        ),
        (&Value::from(40), &Value::from(5), &Value::from(0.125))
    );
    assert!(doc["idle_pct"].as_f64().unwrap() > 80.0);
}

#[test]
fn spread_copy_of_graph_is_gated_until_both_thresholds_are_relaxed_by_env() {
    let dir = tempfile::tempdir().unwrap();
    let source = traces::read_trace(&fixture("graph.json.gz"));
    let path = dir.path().join("graph_spread.json.gz");
    traces::write_trace(&traces::spread_replays(&source, 30_000.0), &path);

    let doc = gate_json(&path, &[], &[]);
    assert_eq!(doc["decision"], "suppress");
    assert_eq!(codes(&doc), ["high_gpu_idle_pct", "low_gpu_compute_pct"]);

    let doc = gate_json(&path, &[], &[(IDLE_ENV, "99.99")]);
    assert_eq!(doc["decision"], "suppress");
    assert_eq!(doc["threshold_pct"], 99.99);
    assert_eq!(codes(&doc), ["low_gpu_compute_pct"]);

    let doc = gate_json(&path, &[], &[(IDLE_ENV, "99.99"), (MIN_COMPUTE_ENV, "0")]);
    assert_eq!(doc["decision"], "pass");
    assert_eq!(doc["min_compute_pct"], 0.0);
    assert_eq!(codes(&doc), Vec::<&str>::new());
}

#[test]
fn stdin_trace_gives_the_same_verdict_as_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("under_recorded.json");
    traces::write_trace(&traces::under_recorded_synthetic(), &path);
    let from_file = gate_json(&path, &[], &[]);

    let mut child = Command::new(env!("CARGO_BIN_EXE_kernlens"))
        .args(["gate", "-", "--json"])
        .env_remove(IDLE_ENV)
        .env_remove(MIN_COMPUTE_ENV)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&std::fs::read(&path).unwrap())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let from_stdin: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(from_stdin["decision"], "pass");
    assert_eq!(codes(&from_stdin), ["graph_under_recorded"]);
    assert_eq!(from_stdin["warnings"], from_file["warnings"]);
}

#[test]
fn text_output_shows_decision_thresholds_and_warnings() {
    let output = gate(
        &[
            fixture("eager.json.gz").to_str().unwrap(),
            "--idle-threshold",
            "70",
        ],
        &[],
    );
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("decision   suppress"), "{text}");
    assert!(
        text.contains("idle       74.22% (threshold 70.00%)"),
        "{text}"
    );
    assert!(
        text.contains("warning: high_gpu_idle_pct: GPU was idle 74.22%"),
        "{text}"
    );
}

#[test]
fn split_chunk_is_refused_by_the_guard_and_the_plain_gate_applies() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chunk.json");
    traces::write_trace(&traces::handmade_chunk_of_idle_graphs(), &path);
    let doc = gate_json(&path, &[], &[]);
    assert_eq!(doc["decision"], "suppress");
    assert_eq!(
        codes(&doc),
        [
            "high_gpu_idle_pct",
            "graph_probe_failed",
            "low_gpu_compute_pct"
        ]
    );
    assert_eq!(doc["warnings"][1]["severity"], "info");
    let reason = doc["warnings"][1]["reason"].as_str().unwrap();
    assert!(reason.contains("split chunk"), "{reason}");
}

#[test]
fn missing_trace_fails_with_one_line_and_exit_1() {
    let output = gate(&["no/such/trace.json"], &[]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("kernlens: cannot open trace 'no/such/trace.json':"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"));
}

#[test]
fn invalid_threshold_flag_is_a_usage_error() {
    for value in ["-3", "abc", "inf"] {
        let output = gate(
            &[
                repo_root()
                    .join("fixtures/traces/eager.json.gz")
                    .to_str()
                    .unwrap(),
                "--idle-threshold",
                value,
            ],
            &[],
        );
        assert_eq!(output.status.code(), Some(2), "value {value}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(stderr.contains("a percentage in 0..=100"), "{stderr}");
    }
}

#[test]
fn strict_turns_recovered_stream_errors_into_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("truncated.json");
    let text = serde_json::to_string(&traces::fully_recorded_idle_synthetic()).unwrap();
    // Cut inside the last event: the reader recovers the complete ones.
    std::fs::write(&path, &text[..text.len() - 40]).unwrap();
    let relaxed = gate(&[path.to_str().unwrap(), "--json"], &[]);
    assert_eq!(relaxed.status.code(), Some(0));
    let strict = gate(&[path.to_str().unwrap(), "--json", "--strict"], &[]);
    assert_eq!(strict.status.code(), Some(3));
    let doc: Value = serde_json::from_slice(&strict.stdout).unwrap();
    assert_eq!(doc["schema"], "kernlens.gate/1");
}
