//! `kernlens summary` through the built binary: output, exit codes, one-line errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kernlens"))
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/traces")
        .join(name)
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn table_shows_timeline_and_hot_kernels() {
    let out = run(&["summary", fixture("eager.json.gz").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("timeline") && s.contains("busy 7.474 ms"), "{s}");
    assert!(s.contains("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT"));
    assert!(s.contains("62.31%"));
    assert!(!s.contains("WARNING"));
}

#[test]
fn json_is_the_summary_schema() {
    let out = run(&[
        "summary",
        fixture("eager.json.gz").to_str().unwrap(),
        "--json",
        "--top",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "kernlens.summary/1");
    assert_eq!(v["event_total"], 9089);
    assert_eq!(v["kernels"].as_array().unwrap().len(), 2);
    assert!(out.stderr.is_empty());
}

#[test]
fn under_recorded_trace_prints_a_warning_line() {
    let out = run(&[
        "summary",
        fixture("graph_under_recorded.json.gz").to_str().unwrap(),
    ]);
    let s = text(&out.stdout);
    assert!(
        s.lines()
            .any(|l| l.starts_with("WARNING") && l.contains("under-recorded")),
        "{s}"
    );
}

#[test]
fn stdin_is_read_with_a_dash() {
    let bytes = std::fs::read(fixture("eager.json.gz")).unwrap();
    let mut child = bin()
        .args(["summary", "-", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["trace_file"].as_str(), v["event_total"].as_u64()),
        (Some("-"), Some(9089))
    );
}

#[test]
fn missing_file_is_one_line_and_exit_1() {
    let out = run(&["summary", "/no/such/trace.json"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("kernlens: ")
            && err.contains("cannot open trace '/no/such/trace.json': No such file"),
        "{err}"
    );
    assert!(!err.contains("panicked"));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run(&["summary"]).status.code(), Some(2));
    assert_eq!(
        run(&["summary", "x.json", "--window", "10:5"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        run(&["summary", "x.json", "--window", "bogus"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn strict_turns_recovered_damage_into_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cut.json");
    std::fs::write(
        &p,
        br#"{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1},{"ph":"#,
    )
    .unwrap();
    let p = p.to_str().unwrap();
    let lenient = run(&["summary", p]);
    assert_eq!(lenient.status.code(), Some(0));
    assert!(text(&lenient.stdout).contains("truncated after 1 event(s)"));
    assert_eq!(run(&["summary", p, "--strict"]).status.code(), Some(3));
    assert_eq!(
        run(&[
            "summary",
            fixture("eager.json.gz").to_str().unwrap(),
            "--strict"
        ])
        .status
        .code(),
        Some(0)
    );
}

#[test]
fn explicit_window_is_reported() {
    let out = run(&[
        "summary",
        fixture("eager.json.gz").to_str().unwrap(),
        "--json",
        "--window",
        "5161092366507.330:5161092376507.330",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["aggregation_scope"], "explicit_window");
    assert_eq!(v["window"]["method"], "explicit");
    assert_eq!(v["timeline"]["total_us"], 10000.0);
}

#[test]
fn input_limit_flag_stops_the_read_and_strict_reports_it() {
    let f = fixture("eager.json.gz");
    let out = run(&[
        "summary",
        f.to_str().unwrap(),
        "--max-input-bytes",
        "100000",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["event_total"].as_u64().unwrap() < 9089);
    assert!(
        v["stream_errors"][0]
            .as_str()
            .unwrap()
            .contains("LimitExceeded")
    );
    let strict = run(&[
        "summary",
        f.to_str().unwrap(),
        "--max-input-bytes",
        "100000",
        "--strict",
    ]);
    assert_eq!(strict.status.code(), Some(3));
    assert_eq!(
        run(&["summary", f.to_str().unwrap(), "--max-input-bytes", "lots"])
            .status
            .code(),
        Some(2)
    );
}
