//! Running the built `kernlens` binary from an integration test, defined once and included
//! by `#[path]` into each CLI test crate that wants it: the bundled fixture paths, a run that
//! returns (exit code, stdout, stderr), and the stdout or JSON document of a run that must
//! succeed. `KERNLENS_SOURCE_ROOTS` is removed so a developer's environment cannot change
//! what a test sees.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A bundled real trace under `fixtures/traces/`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/traces")
        .join(name)
}

/// Runs the binary: (exit code, stdout, stderr).
pub fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kernlens"))
        .args(args)
        .env_remove("KERNLENS_SOURCE_ROOTS")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The stdout of a run that must exit 0.
pub fn stdout_of(args: &[&str]) -> String {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, Some(0), "{args:?}: {stderr}");
    stdout
}

/// The JSON document of a run that must exit 0 (`--json` appended).
pub fn json_of(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&stdout_of(&[args, &["--json"]].concat())).unwrap()
}
