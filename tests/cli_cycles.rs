//! A directory holding several capture cycles of one rank (tensorboard_trace_handler with
//! repeat): the summary says so, and `--all-ranks --cycle latest|all` chooses (issue 20).
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

#[path = "support/trace_files.rs"]
mod trace_files;

use std::process::Command;

fn kernlens(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kernlens"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_two_cycle_directory_is_reported_and_cycle_picks_latest_or_all() {
    let dir = trace_files::fixture("memprof");
    let dir = dir.to_str().unwrap();
    let (code, human, _) = kernlens(&["summary", dir]);
    assert_eq!(code, Some(0));
    assert!(
        human.contains("cycles       cycle 2 of 2 capture files of this rank (the latest)"),
        "{human}"
    );
    let (_, json, _) = kernlens(&["summary", dir, "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        (doc["cycles"].as_u64(), doc["cycle"].as_u64()),
        (Some(2), Some(2))
    );
    assert!(
        doc["trace_file"]
            .as_str()
            .unwrap()
            .ends_with("rank0.1796150823868619307.pt.trace.json.gz")
    );

    let (_, latest, _) = kernlens(&["summary", dir, "--all-ranks", "--json"]);
    let latest: serde_json::Value = serde_json::from_str(&latest).unwrap();
    assert_eq!(latest["cycle"], "latest");
    assert_eq!(latest["ranks"].as_array().unwrap().len(), 1);
    let (_, all, _) = kernlens(&["summary", dir, "--all-ranks", "--cycle", "all", "--json"]);
    let all: serde_json::Value = serde_json::from_str(&all).unwrap();
    assert_eq!(all["cycle"], "all");
    let busy: Vec<f64> = all["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["timeline"]["busy_pct"].as_f64().unwrap())
        .collect();
    assert_eq!(busy.len(), 2);
    assert_eq!(
        busy[1],
        latest["ranks"][0]["timeline"]["busy_pct"].as_f64().unwrap()
    );
    let (_, table, _) = kernlens(&["summary", dir, "--all-ranks", "--cycle", "all"]);
    assert!(
        table.contains("cycles: every capture file of a rank is read"),
        "{table}"
    );

    // --cycle belongs to --all-ranks; a bad value is a usage error.
    assert_eq!(kernlens(&["summary", dir, "--cycle", "all"]).0, Some(2));
    assert_eq!(
        kernlens(&["summary", dir, "--all-ranks", "--cycle", "first"]).0,
        Some(2)
    );
}
