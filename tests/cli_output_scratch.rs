//! `kernlens scratch` output (issue 15 item 2): a table by default, the kernlens.scratch/1
//! document with `--json`; `diff` and `release` accept the attempt directory given to
//! `create --output` as well as its `worktree`. Built binary, real git repositories in temp dirs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn kernlens(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kernlens"))
        .args(args)
        .env_remove("KERNLENS_LOCAL_SCRATCH_ROOT")
        .output()
        .unwrap()
}

fn ok_text(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// A two-file Python package; returns its kernel file.
fn package(root: &Path) -> PathBuf {
    let pkg = root.join("site-packages/pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("__init__.py"), "").unwrap();
    std::fs::write(pkg.join("k.py"), "def k(x):\n    return x + 1\n").unwrap();
    pkg.join("k.py")
}

fn create(tmp: &Path) -> (PathBuf, String) {
    let source = package(tmp);
    let attempt = tmp.join("runs/sess/att");
    let out = kernlens(&[
        "scratch",
        "create",
        "--source",
        source.to_str().unwrap(),
        "--output",
        attempt.to_str().unwrap(),
    ]);
    (attempt, ok_text(&out))
}

#[test]
fn scratch_create_prints_a_table_by_default_naming_the_worktree() {
    let tmp = tempfile::tempdir().unwrap();
    let (attempt, table) = create(tmp.path());
    assert!(
        serde_json::from_str::<serde_json::Value>(&table).is_err(),
        "{table}"
    );
    let worktree = attempt.join("worktree");
    let line = table.lines().find(|l| l.starts_with("worktree")).unwrap();
    assert!(
        line.ends_with(worktree.canonicalize().unwrap().to_str().unwrap())
            || line.ends_with(worktree.to_str().unwrap()),
        "{table}"
    );
    assert!(
        table.contains("session   sess") && table.contains("attempt   att"),
        "{table}"
    );
}

#[test]
fn scratch_diff_of_the_attempt_directory_equals_the_diff_of_its_worktree() {
    let tmp = tempfile::tempdir().unwrap();
    let (attempt, _) = create(tmp.path());
    let worktree = attempt.join("worktree");
    let kernel = worktree.join("pkg/k.py");
    std::fs::write(&kernel, "def k(x):\n    return x + 2\n").unwrap();

    let by_attempt = kernlens(&["scratch", "diff", attempt.to_str().unwrap(), "--json"]);
    let by_attempt: serde_json::Value = serde_json::from_str(&ok_text(&by_attempt)).unwrap();
    let by_worktree = kernlens(&["scratch", "--json", "diff", worktree.to_str().unwrap()]);
    let by_worktree: serde_json::Value = serde_json::from_str(&ok_text(&by_worktree)).unwrap();
    assert_eq!(by_attempt["schema"], "kernlens.scratch/1");
    assert_eq!(by_attempt["action"], "diff");
    assert_eq!(by_attempt["changes"], by_worktree["changes"]);
    let paths: Vec<&str> = by_attempt["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["pkg/k.py"]);

    let table = ok_text(&kernlens(&["scratch", "diff", attempt.to_str().unwrap()]));
    assert!(table.contains("changes   1"), "{table}");
    assert!(
        table.lines().any(|l| l.trim_end().ends_with("pkg/k.py")),
        "{table}"
    );
}

#[test]
fn scratch_release_and_sweep_print_tables_and_json_on_request() {
    let tmp = tempfile::tempdir().unwrap();
    let (attempt, _) = create(tmp.path());
    let table = ok_text(&kernlens(&[
        "scratch",
        "release",
        attempt.to_str().unwrap(),
    ]));
    assert!(table.starts_with("not released: "), "{table}");
    let doc: serde_json::Value = serde_json::from_str(&ok_text(&kernlens(&[
        "scratch",
        "release",
        attempt.to_str().unwrap(),
        "--json",
    ])))
    .unwrap();
    assert_eq!(doc["released"], false);

    let root = tmp.path().join("local");
    std::fs::create_dir_all(&root).unwrap();
    let table = ok_text(&kernlens(&[
        "scratch",
        "sweep",
        "--local-root",
        root.to_str().unwrap(),
    ]));
    assert!(table.contains("nothing to reclaim"), "{table}");
}

#[test]
fn scratch_diff_of_a_directory_that_is_neither_says_why_and_exits_1() {
    let tmp = tempfile::tempdir().unwrap();
    let out = kernlens(&["scratch", "diff", tmp.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("kernlens: scratch diff: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
