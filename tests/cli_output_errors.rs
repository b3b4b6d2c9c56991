//! Errors and input notes (issue 15 item 3): a missing trace keeps the OS reason and names the
//! path once under one prefix on every trace-reading subcommand; a directory of rank files says
//! on standard error which file was chosen. Built binary, bundled fixtures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

fn kernlens(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kernlens"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_missing_trace_keeps_the_os_reason_and_names_the_path_once_on_every_subcommand() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("x.json");
    let missing = missing.to_str().unwrap();
    let chunk = tmp.path().join("chunk.json");
    let cases: [&[&str]; 3] = [
        &["summary", missing],
        &["gate", missing],
        &[
            "split",
            missing,
            "--window",
            "auto",
            "-o",
            chunk.to_str().unwrap(),
        ],
    ];
    for args in cases {
        let out = kernlens(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr.trim_end(),
            format!(
                "kernlens: cannot open trace '{missing}': No such file or directory (os error 2)"
            ),
            "{args:?}"
        );
        assert_eq!(stderr.matches(missing).count(), 1, "{stderr}");
    }
    assert!(!chunk.exists());
}

#[test]
fn a_directory_of_rank_files_says_which_rank_it_chose() {
    let tmp = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/traces");
    for (rank, name) in [
        (0, "eager.json.gz"),
        (1, "train.json.gz"),
        (2, "train.json.gz"),
    ] {
        std::fs::copy(
            fixtures.join(name),
            tmp.path().join(format!("host_rank{rank}.json.gz")),
        )
        .unwrap();
    }
    let dir = tmp.path().to_str().unwrap();
    let out = kernlens(&["summary", dir, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("kernlens: chose rank 0 of 3 files")
            && stderr.contains("host_rank0.json.gz")
            && stderr.contains("use --all-ranks"),
        "{stderr}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        doc["trace_file"]
            .as_str()
            .unwrap()
            .ends_with("host_rank0.json.gz")
    );

    let one = kernlens(&["gate", fixtures.join("eager.json.gz").to_str().unwrap()]);
    assert!(one.stderr.is_empty(), "a file input has no note");
}

#[test]
fn an_overflowing_window_is_a_usage_error_on_summary_and_split() {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/traces/eager.json.gz");
    let trace = trace.to_str().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let chunk = tmp.path().join("chunk.json");
    let window = "--window=-5000000000000000:5000000000000000";
    for args in [
        vec!["summary", trace, window, "--json"],
        vec!["split", trace, window, "-o", chunk.to_str().unwrap()],
    ] {
        let out = kernlens(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("is longer than"), "{stderr}");
    }
    assert!(!chunk.exists());
    let fine = kernlens(&[
        "summary",
        trace,
        "--window=-5000000000:5000000000",
        "--json",
    ]);
    assert_eq!(fine.status.code(), Some(0));
}
