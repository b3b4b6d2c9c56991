//! `kernlens locate` on the built binary: JSON schema, table, roots from the
//! flag and the environment, refusals, launcher evidence, exit codes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/locate")
}

/// The project's own captures and the script that made them (their Triton source).
fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(path)
}

fn kernlens(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kernlens"));
    cmd.arg("locate")
        .args(args)
        .env_remove("KERNLENS_SOURCE_ROOTS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn json_document_has_the_locate_schema_and_every_record_field() {
    let root = fixtures().join("vllm_like");
    let out = kernlens(
        &[
            "--root",
            root.to_str().unwrap(),
            "--no-discover",
            "--json",
            "_mxfp8_linear_kernel",
            "hipGraphLaunch",
        ],
        &[],
    );
    let doc = json(&out);
    assert_eq!(doc["schema"], "kernlens.locate/1");
    assert_eq!(doc["roots"].as_array().unwrap().len(), 1);
    assert_eq!(doc["roots"][0]["origin"], "explicit");
    let r = &doc["results"][0];
    for key in [
        "name",
        "found",
        "confidence",
        "path",
        "line",
        "function",
        "kind",
        "method",
        "grep_method",
        "keyword",
        "keywords_tried",
        "reason",
        "repo_root",
        "candidates",
        "launcher",
    ] {
        assert!(r.get(key).is_some(), "missing {key}");
    }
    assert_eq!(r["found"], true);
    assert!(
        r["path"]
            .as_str()
            .unwrap()
            .ends_with("mxfp8/rocm_native.py")
    );
    assert_eq!(r["kind"], "triton");
    assert_eq!(r["method"], "definition");
    assert_eq!(r["candidates"].as_array().unwrap().len(), 3);
    assert_eq!(r["candidates"][0]["score"]["definition"], 0);
    let refused = &doc["results"][1];
    assert_eq!(refused["found"], false);
    assert_eq!(refused["method"], "not_found");
    assert_eq!(refused["reason"], "runtime_api_name");
    assert!(refused["path"].is_null());
}

#[test]
fn no_root_at_all_exits_1_naming_every_source() {
    let out = kernlens(&["--no-discover", "some_kernel"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("kernlens: "), "{err}");
    assert!(err.contains("no --root given"), "{err}");
    assert!(err.contains("KERNLENS_SOURCE_ROOTS unset"), "{err}");
    assert!(err.contains("discovery off"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn environment_roots_are_used_and_relative_entries_warned_about() {
    let root = fixtures().join("aiter_like");
    let value = format!("{}:relative/dir::", root.display());
    let out = kernlens(
        &[
            "--no-discover",
            "--json",
            "_ZN5aiter26cross_device_reduce_2stageIDF16bLi8ELb0EEEv",
        ],
        &[("KERNLENS_SOURCE_ROOTS", &value)],
    );
    let doc = json(&out);
    assert_eq!(doc["roots"][0]["origin"], "env");
    assert!(
        doc["results"][0]["path"]
            .as_str()
            .unwrap()
            .ends_with("custom_all_reduce.cuh")
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("relative/dir"), "{err}");
}

#[test]
fn table_lists_kind_method_and_location() {
    let root = fixtures().join("aiter_like");
    let out = kernlens(
        &[
            "--root",
            root.to_str().unwrap(),
            "--no-discover",
            "foo_kernel(float*, int)",
            "Memset (Device)",
        ],
        &[],
    );
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("KIND"));
    assert!(
        lines[1].starts_with("cpp") && lines[1].contains("foo_kernel.cc:2"),
        "{text}"
    );
    assert!(lines[2].contains("not found (not_a_kernel)"), "{text}");
}

#[test]
fn table_shows_confidence_and_mention_only_rows_as_not_found() {
    let root = fixtures().join("mention_only");
    let out = kernlens(
        &[
            "--root",
            root.to_str().unwrap(),
            "--no-discover",
            "_mxfp8_linear_kernel",
        ],
        &[],
    );
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].contains("CONFIDENCE"), "{text}");
    assert!(lines[1].contains("mention"), "{text}");
    assert!(lines[1].contains("not found (mention only)"), "{text}");
    let doc = json(&kernlens(
        &[
            "--root",
            root.to_str().unwrap(),
            "--no-discover",
            "--json",
            "_mxfp8_linear_kernel",
        ],
        &[],
    ));
    let r = &doc["results"][0];
    assert_eq!(r["found"], false);
    assert_eq!(r["confidence"], "mention");
    assert_eq!(r["reason"], "mention_only");
    assert_eq!(r["path"], serde_json::Value::Null);
    assert!(
        r["candidates"][0]["path"]
            .as_str()
            .unwrap()
            .ends_with("pkg/dispatch.py")
    );
}

#[test]
fn dump_keywords_prints_the_pattern_set_without_searching() {
    // No root is needed: nothing is searched.
    let out = kernlens(
        &[
            "--no-discover",
            "--dump-keywords",
            "hipModuleLaunchKernel->_mxfp8_grouped_gemm_kernel (Synthetic Op)",
            "hipGraphLaunch",
        ],
        &[],
    );
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "_mxfp8_grouped_gemm_kernel",
            "mxfp8_grouped_gemm_kernel",
            "grouped_gemm_kernel",
            "gemm_kernel",
            "mxfp8_grouped_gemm",
            "mxfp8_grouped",
        ]
    );
    let out = kernlens(&["--dump-keywords", "--json", "hipGraphLaunch"], &[]);
    let doc = json(&out);
    assert_eq!(doc["plans"][0]["refusal"], "runtime_api_name");
}

#[test]
fn trace_launcher_corroborates_the_definition_e1() {
    let (src, trace) = (fixture("src"), fixture("traces/eager.json.gz"));
    let out = kernlens(
        &[
            "--root",
            src.to_str().unwrap(),
            "--no-discover",
            "--trace",
            trace.to_str().unwrap(),
            "--json",
            "_fused_scale_bias_kernel",
        ],
        &[],
    );
    let doc = json(&out);
    let r = &doc["results"][0];
    assert!(r["path"].as_str().unwrap().ends_with("gen_traces.py"));
    assert_eq!(r["line"], 39);
    assert_eq!(r["method"], "trace_python_stack");
    assert_eq!(r["grep_method"], "definition");
    assert_eq!(r["launcher"]["line"], 47);
    assert_eq!(r["launcher"]["function"], "fused_scale");
    assert_eq!(r["launcher"]["corroborated"], true);
}

#[test]
fn missing_trace_exits_1_naming_it() {
    let root = fixtures().join("vllm_like");
    let out = kernlens(
        &[
            "--root",
            root.to_str().unwrap(),
            "--no-discover",
            "--trace",
            "/nonexistent/t.json",
            "x_kernel",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/t.json"));
}

#[test]
fn missing_name_is_a_usage_error() {
    let out = kernlens(&["--no-discover"], &[]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_vendor_kernel_has_triage_reason_vendor_binary_in_the_locate_json() {
    // The GEMM of the eager capture: a cuBLAS (nvjet) kernel that no tree defines.
    let name = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT";
    let src = fixture("src");
    let src = src.to_str().unwrap();
    let doc = json(&kernlens(
        &[name, "--root", src, "--no-discover", "--json"],
        &[],
    ));
    let result = &doc["results"][0];
    assert_eq!(result["found"], false);
    assert_eq!(result["kind"], "vendor_binary");
    assert_eq!(result["reason"], "vendor_binary");

    let trace = fixture("traces/eager.json.gz");
    let out = Command::new(env!("CARGO_BIN_EXE_kernlens"))
        .args(["triage", trace.to_str().unwrap(), "--root", src])
        .args(["--no-discover", "--json"])
        .env_remove("KERNLENS_SOURCE_ROOTS")
        .output()
        .unwrap();
    let triage = json(&out);
    let group = triage["task_groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["kernels"].as_array().unwrap().iter().any(|k| k == name))
        .expect("the GEMM's task group");
    assert_eq!(group["source"]["reason"], result["reason"]);
}
