//! One output writer for every subcommand (issue 15 item 1): a reader that closes the pipe at
//! once ends the command quietly with status 0, and JSON is one line by default, indented with
//! `--pretty`. Runs the built binary on the bundled fixtures/traces.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/traces")
        .join(name)
        .to_str()
        .unwrap()
        .to_owned()
}

/// Runs kernlens with its standard output a pipe whose reader is gone before the command
/// writes; returns the exit status and standard error.
fn run_with_closed_stdout(args: &[String]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kernlens"))
        .args(args)
        .env_remove("KERNLENS_LOCAL_SCRATCH_ROOT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_quiet_exit(args: &[String]) {
    let (code, stderr) = run_with_closed_stdout(args);
    assert_eq!(code, Some(0), "{args:?}: {stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
        "{args:?}: {stderr}"
    );
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| (*s).to_owned()).collect()
}

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "kernlens-cli-output-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn summary_table_and_json_exit_0_when_the_reader_closes_the_pipe() {
    let trace = fixture("eager.json.gz");
    assert_quiet_exit(&strings(&["summary", &trace, "--top", "0"]));
    assert_quiet_exit(&strings(&["summary", &trace, "--json"]));
    assert_quiet_exit(&strings(&["summary", &trace, "--pretty"]));
}

#[test]
fn csv_tables_exit_0_when_the_reader_closes_the_pipe() {
    let trace = fixture("eager.json.gz");
    for table in ["kernels", "ops", "categories"] {
        assert_quiet_exit(&strings(&["summary", &trace, "--csv", table]));
    }
    assert_quiet_exit(&strings(&[
        "ident",
        "triton_poi_fused_gelu_view_2",
        "--csv",
    ]));
    assert_quiet_exit(&strings(&["triage", &trace, "--no-discover", "--csv"]));
    assert_quiet_exit(&strings(&[
        "locate",
        "triton_poi_fused_gelu_view_2",
        "--no-discover",
        "--root",
        &format!("{}/fixtures/src", env!("CARGO_MANIFEST_DIR")),
        "--csv",
    ]));
}

#[test]
fn summary_all_ranks_exits_0_when_the_reader_closes_the_pipe() {
    let dir = temp_dir();
    for name in ["eager.json.gz", "train.json.gz"] {
        std::fs::copy(fixture(name), dir.join(name)).unwrap();
    }
    let dir_arg = dir.to_str().unwrap().to_owned();
    assert_quiet_exit(&strings(&["summary", &dir_arg, "--all-ranks"]));
    assert_quiet_exit(&strings(&["summary", &dir_arg, "--all-ranks", "--json"]));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn gate_exits_0_when_the_reader_closes_the_pipe() {
    let trace = fixture("train.json.gz");
    assert_quiet_exit(&strings(&["gate", &trace]));
    assert_quiet_exit(&strings(&["gate", &trace, "--json"]));
}

#[test]
fn split_exits_0_when_the_reader_closes_the_pipe_and_still_writes_its_chunk() {
    let dir = temp_dir();
    let out = dir.join("chunk.json");
    let out_arg = out.to_str().unwrap().to_owned();
    let trace = fixture("train.json.gz");
    assert_quiet_exit(&strings(&[
        "split", &trace, "--window", "auto", "-o", &out_arg,
    ]));
    assert!(out.is_file());
    assert_quiet_exit(&strings(&[
        "split", &trace, "--window", "auto", "-o", &out_arg, "--json",
    ]));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ident_and_triage_exit_0_when_the_reader_closes_the_pipe() {
    assert_quiet_exit(&strings(&["ident", "triton_poi_fused_gelu_view_2"]));
    assert_quiet_exit(&strings(&[
        "ident",
        "triton_poi_fused_gelu_view_2",
        "--json",
    ]));
    let trace = fixture("eager.json.gz");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .to_str()
        .unwrap()
        .to_owned();
    assert_quiet_exit(&strings(&[
        "triage",
        &trace,
        "--root",
        &root,
        "--no-discover",
    ]));
    assert_quiet_exit(&strings(&[
        "triage",
        &trace,
        "--root",
        &root,
        "--no-discover",
        "--pretty",
    ]));
    for format in ["--json", "--pretty"] {
        assert_quiet_exit(&strings(&[
            "locate",
            "triton_poi_fused_gelu_view_2",
            "--root",
            &root,
            "--no-discover",
            format,
        ]));
    }
}

#[test]
fn scratch_sweep_exits_0_when_the_reader_closes_the_pipe() {
    let dir = temp_dir();
    let root = dir.to_str().unwrap().to_owned();
    assert_quiet_exit(&strings(&["scratch", "sweep", "--local-root", &root]));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn stdout_of(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kernlens"))
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn json_is_one_line_by_default_and_indented_with_pretty_on_every_subcommand() {
    let trace = fixture("eager.json.gz");
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/src")
        .to_str()
        .unwrap()
        .to_owned();
    let cases: [&[&str]; 7] = [
        &["summary", &trace, "--top", "2"],
        &["gate", &trace],
        &["ident", "triton_poi_fused_gelu_view_2"],
        &[
            "locate",
            "triton_poi_fused_gelu_view_2",
            "--root",
            &src,
            "--no-discover",
        ],
        &["locate", "triton_poi_fused_gelu_view_2", "--dump-keywords"],
        &[
            "triage",
            &trace,
            "--root",
            &src,
            "--no-discover",
            "--top",
            "3",
        ],
        &["triage", &trace, "--no-discover", "--top", "3"],
    ];
    for args in cases {
        let compact = stdout_of(&[args, &["--json"]].concat());
        assert_eq!(compact.lines().count(), 1, "{args:?}: {compact}");
        let pretty = stdout_of(&[args, &["--pretty"]].concat());
        assert!(pretty.lines().count() > 3, "{args:?}: {pretty}");
        let a: serde_json::Value = serde_json::from_str(&compact).unwrap();
        let b: serde_json::Value = serde_json::from_str(&pretty).unwrap();
        assert_eq!(a, b, "{args:?}");
    }
    let dir = temp_dir();
    let root = dir.to_str().unwrap().to_owned();
    let compact = stdout_of(&["scratch", "sweep", "--local-root", &root, "--json"]);
    assert_eq!(compact.lines().count(), 1, "{compact}");
    let pretty = stdout_of(&["scratch", "sweep", "--local-root", &root, "--pretty"]);
    assert!(pretty.lines().count() > 3, "{pretty}");
    std::fs::remove_dir_all(&dir).unwrap();
}
