//! `kernlens split` and `kernlens summary --all-ranks` through the built binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kernlens"))
        .args(args)
        .output()
        .unwrap()
}

fn shared(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/traces")
        .join(name)
}

#[test]
fn split_writes_a_chunk_that_summary_reads() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("steady.json.gz");
    let o = run(&[
        "split",
        shared("compiled_ro.json.gz").to_str().unwrap(),
        "--window",
        "auto",
        "-o",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["schema"], "kernlens.split/1");
    assert_eq!(report["events_written"], 157);
    let s = run(&["summary", out.to_str().unwrap(), "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&s.stdout).unwrap();
    assert_eq!(doc["attribution"]["kernel_count"], 34);
    assert_eq!(doc["provenance"]["source_graph"]["launches"], 8);
}

#[test]
fn split_without_a_steady_window_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("none.json");
    let o = run(&[
        "split",
        shared("eager.json.gz").to_str().unwrap(),
        "--window",
        "annotation",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("kernlens: cannot split") && err.contains("no repeating step window"),
        "{err}"
    );
    assert!(!out.exists(), "no half-written output");
    assert_eq!(
        run(&["split", "x.json", "--window", "none", "-o", "y.json"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn all_ranks_reports_the_spread() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(shared("eager.json.gz"), dir.path().join("rank_0.json.gz")).unwrap();
    std::fs::copy(shared("graph.json.gz"), dir.path().join("rank_1.json.gz")).unwrap();
    let o = run(&["summary", dir.path().to_str().unwrap(), "--all-ranks"]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("busy% spread: min 25.78 (rank 0), median 59.67, max 93.56 (rank 1)"),
        "{text}"
    );
    let j = run(&[
        "summary",
        dir.path().to_str().unwrap(),
        "--all-ranks",
        "--json",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(doc["schema"], "kernlens.ranks/1");
    assert_eq!(doc["rank_count"], 2);
}
