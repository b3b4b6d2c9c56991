//! `gate --fail-on-suppress` (issue 15 item 4): exit 4 on a suppressing verdict, after the
//! report is printed; exit 0 on a pass and without the flag. Built binary, bundled fixture.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

fn gate(extra: &[&str]) -> Output {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/traces/eager.json.gz");
    Command::new(env!("CARGO_BIN_EXE_kernlens"))
        .arg("gate")
        .arg(&trace)
        .args(extra)
        .env_remove("KERNLENS_IDLE_THRESHOLD_PCT")
        .env_remove("KERNLENS_MIN_COMPUTE_PCT")
        .output()
        .unwrap()
}

fn decision(out: &Output) -> String {
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["decision"].as_str().unwrap().to_owned()
}

#[test]
fn fail_on_suppress_exits_4_on_a_suppressing_verdict_and_still_prints_it() {
    let out = gate(&["--idle-threshold", "0", "--fail-on-suppress", "--json"]);
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(decision(&out), "suppress");
    let table = gate(&["--idle-threshold", "0", "--fail-on-suppress"]);
    assert_eq!(table.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&table.stdout).contains("decision   suppress"));
}

#[test]
fn a_suppressing_verdict_exits_0_without_the_flag() {
    let out = gate(&["--idle-threshold", "0", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(decision(&out), "suppress");
}

#[test]
fn fail_on_suppress_exits_0_on_a_pass() {
    let out = gate(&[
        "--idle-threshold",
        "100",
        "--min-compute",
        "0",
        "--fail-on-suppress",
        "--json",
    ]);
    assert_eq!(decision(&out), "pass");
    assert_eq!(out.status.code(), Some(0));
}
