//! Changes and export scenarios (W14, X3, X4, X6-less, Z10): the patch must apply with the real
//! `git apply` on a pristine copy and reproduce every non-excluded file byte for byte.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::*;
use kernlens_scratch::Error;
use kernlens_scratch::changes::{ChangeStatus, changes};
use kernlens_scratch::export::{DriftState, ExportRequest, export};
use kernlens_scratch::prepare::prepare;
use kernlens_scratch::workspace::Workspace;

fn chmod_x(path: &Path) {
    let mut p = std::fs::metadata(path).unwrap().permissions();
    p.set_mode(p.mode() | 0o111);
    std::fs::set_permissions(path, p).unwrap();
}

fn cp_a(from: &Path, to: &Path) {
    let ok = std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

/// Non-excluded, non-copy-ignored view of a tree for byte comparison.
fn comparable(root: &Path) -> Vec<(String, Vec<u8>, u32)> {
    snapshot(root)
        .into_iter()
        .filter(|(p, _, _)| {
            !p.split('/')
                .any(|c| ["__pycache__", ".git", "jit", "dist"].contains(&c))
                && ![".pyc", ".pyo", ".so"].iter().any(|e| p.ends_with(e))
        })
        .collect()
}

#[test]
fn export_of_a_best_commit_and_nothing_to_export_at_the_baseline() {
    if !git_available() {
        eprintln!("git CLI not installed: the run's commit is made with git; skipping W14");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let ws = prepare(&site_packages_request(tmp.path(), "s", "k")).unwrap();
    let wt = &ws.worktree;
    std::fs::write(wt.join("aiter/ops/k.py"), "def k(x):\n    return x + 2\n").unwrap();
    std::fs::write(wt.join("aiter/ops/foo_config.py"), "BLOCK = 128\n").unwrap();
    git(wt, &["add", "-A"]);
    git(wt, &["commit", "-q", "-m", "best"]);
    let best = git(wt, &["rev-parse", "HEAD"]).trim().to_owned();
    let report = export(&ws, &ExportRequest::new(Some(best.clone()), None)).unwrap();
    let out = output_dir(tmp.path(), "s", "k").join("optimized_versions");
    assert_eq!(report.out_dir, out);
    assert_eq!(
        std::fs::read_to_string(out.join("v1_scratch.py")).unwrap(),
        "def k(x):\n    return x + 2\n"
    );
    assert!(out.join("files/aiter/ops/k.py").is_file());
    assert!(out.join("files/aiter/ops/foo_config.py").is_file());
    assert!(std::fs::metadata(out.join("scratch.patch")).unwrap().len() > 0);
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("export.json")).unwrap()).unwrap();
    assert_eq!(manifest["schema"], "kernlens.scratch-export/1");
    assert_eq!(manifest["changes"].as_array().unwrap().len(), 2);
    assert_eq!(manifest["best"], best.as_str());
    let err = export(
        &ws,
        &ExportRequest::new(Some(ws.meta.base_commit.clone()), None),
    )
    .unwrap_err();
    assert!(matches!(err, Error::NothingToExport { .. }), "{err}");
    let err = export(&ws, &ExportRequest::new(Some("f".repeat(40)), None)).unwrap_err();
    assert!(matches!(err, Error::UnknownCommit { .. }), "{err}");
}

#[test]
fn no_changes_without_best_is_an_empty_manifest_without_patch() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = prepare(&site_packages_request(tmp.path(), "s", "k")).unwrap();
    assert!(changes(&ws, None).unwrap().is_empty());
    let out = tmp.path().join("export");
    let report = export(&ws, &ExportRequest::new(None, Some(out.clone()))).unwrap();
    assert!(report.changes.is_empty());
    assert_eq!(report.patch_bytes, 0);
    assert!(!out.join("scratch.patch").exists());
    assert!(out.join("export.json").is_file());
    assert!(out.join("v1_scratch.py").is_file());
}

#[test]
fn changes_match_git_name_status_on_a_copy() {
    if !git_available() {
        eprintln!("git CLI not installed: skipping X3");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let ws = prepare(&site_packages_request(tmp.path(), "s", "k")).unwrap();
    let wt = &ws.worktree;
    std::fs::write(wt.join("aiter/ops/k.py"), "def k(x):\n    return x * 3\n").unwrap();
    std::fs::write(wt.join("aiter/ops/new.py"), "NEW = 1\n").unwrap();
    std::fs::remove_file(wt.join("aiter/ops/__init__.py")).unwrap();
    chmod_x(&wt.join("aiter/__init__.py"));
    std::os::unix::fs::symlink("ops/k.py", wt.join("aiter/k_link.py")).unwrap();
    std::fs::write(wt.join("aiter/jit/new_build.so"), b"\x00bin").unwrap();
    let ours: Vec<(String, ChangeStatus)> = changes(&ws, None)
        .unwrap()
        .into_iter()
        .map(|c| (c.path, c.status))
        .collect();
    let copy = tmp.path().join("copy");
    cp_a(wt, &copy);
    git(&copy, &["add", "-A"]);
    let theirs = git(
        &copy,
        &["diff", "--cached", "--name-status", &ws.meta.base_commit],
    );
    let theirs: Vec<(String, String)> = theirs
        .lines()
        .map(|l| {
            let (s, p) = l.split_once('\t').unwrap();
            (p.to_owned(), s.to_owned())
        })
        .collect();
    let ours_letters: Vec<(String, String)> = ours
        .iter()
        .map(|(p, s)| {
            let letter = match s {
                ChangeStatus::Added => "A",
                ChangeStatus::Deleted => "D",
                ChangeStatus::Modified | ChangeStatus::ModeChanged => "M",
                ChangeStatus::TypeChanged => "T",
                _ => "?",
            };
            (p.clone(), letter.to_owned())
        })
        .collect();
    assert_eq!(ours_letters, theirs);
    assert!(ours.contains(&("aiter/__init__.py".into(), ChangeStatus::ModeChanged)));
}

/// Build the X4 change corpus on top of the W8 package, prepare, apply every kind of edit.
fn patch_workspace(tmp: &Path) -> Workspace {
    let sp = site_packages_fixture(tmp);
    let a = sp.join("aiter");
    write(&a.join("ops/delete_me.py"), "gone = 1\n");
    write(&a.join("ops/lose_newline.py"), "a = 1\nb = 2\n");
    write(&a.join("ops/gain_newline.py"), "a = 1\nb = 2");
    write(&a.join("ops/crlf.py"), "x = 1\r\ny = 2\r\n");
    let npy: Vec<u8> = (0..3000u32).flat_map(|i| (i * 7).to_le_bytes()).collect();
    write(
        &a.join("ops/data.npy"),
        [b"\x93NUMPY\x01\x00".as_slice(), &npy].concat(),
    );
    write(&a.join("ops/run.sh"), "#!/bin/sh\necho run\n");
    write(&a.join("ops/with space.py"), "s = 1\n");
    write(&a.join("ops/caf\u{e9}.py"), "c = 1\n");
    write(&a.join("ops/q\"uote.py"), "q = 1\n");
    let many: String = (0..60).map(|i| format!("line {i}\n")).collect();
    write(&a.join("ops/long.py"), &many);
    let ws = prepare(&site_packages_request(tmp, "s", "k")).unwrap();
    let o = ws.worktree.join("aiter/ops");
    std::fs::write(
        o.join("k.py"),
        "def k(x):\n    # faster\n    return x + 1\n",
    )
    .unwrap();
    std::fs::write(o.join("added.py"), "ADDED = True\n").unwrap();
    std::fs::remove_file(o.join("delete_me.py")).unwrap();
    std::fs::write(o.join("lose_newline.py"), "a = 1\nb = 2").unwrap();
    std::fs::write(o.join("gain_newline.py"), "a = 1\nb = 2\n").unwrap();
    std::fs::write(o.join("crlf.py"), "x = 10\r\ny = 2\r\n").unwrap();
    let mut npy2 = std::fs::read(o.join("data.npy")).unwrap();
    npy2[100] ^= 0xff;
    npy2.extend_from_slice(&[0, 1, 2, 3]);
    std::fs::write(o.join("data.npy"), npy2).unwrap();
    std::fs::write(o.join("new_blob.bin"), [0u8, 159, 146, 150, 0, 7]).unwrap();
    chmod_x(&o.join("run.sh"));
    std::os::unix::fs::symlink("k.py", o.join("k_alias.py")).unwrap();
    std::fs::write(o.join("with space.py"), "s = 2\n").unwrap();
    std::fs::write(o.join("caf\u{e9}.py"), "c = 2\n").unwrap();
    std::fs::write(o.join("q\"uote.py"), "q = 2\n").unwrap();
    std::fs::write(o.join("empty_added.py"), "").unwrap();
    let edited = many
        .replace("line 3\n", "LINE 3\n")
        .replace("line 50\n", "");
    std::fs::write(o.join("long.py"), edited).unwrap();
    ws
}

fn apply_round_trip(ws: &Workspace, tmp: &Path, best: Option<String>) {
    let out = tmp.join("export-out");
    let report = export(ws, &ExportRequest::new(best, Some(out.clone()))).unwrap();
    assert!(report.patch_bytes > 0);
    let pristine = tmp.join("pristine");
    cp_a(&tmp.join("site-packages"), &pristine);
    let patch = out.join("scratch.patch");
    git(&pristine, &["apply", "--check", patch.to_str().unwrap()]);
    git(&pristine, &["apply", patch.to_str().unwrap()]);
    assert_eq!(
        comparable(&pristine.join("aiter")),
        comparable(&ws.worktree.join("aiter"))
    );
}

#[test]
fn patch_round_trips_through_git_apply_on_a_pristine_copy() {
    if !git_available() {
        eprintln!("git CLI not installed: skipping X4");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let ws = patch_workspace(tmp.path());
    let listed = changes(&ws, None).unwrap();
    let binary: Vec<&str> = listed
        .iter()
        .filter(|c| c.binary)
        .map(|c| c.path.as_str())
        .collect();
    assert_eq!(binary, ["aiter/ops/data.npy", "aiter/ops/new_blob.bin"]);
    apply_round_trip(&ws, tmp.path(), None);
}

#[test]
fn patch_of_a_best_commit_round_trips_too() {
    if !git_available() {
        eprintln!("git CLI not installed: skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let ws = patch_workspace(tmp.path());
    git(&ws.worktree, &["add", "-A"]);
    git(&ws.worktree, &["commit", "-q", "-m", "best"]);
    let best = git(&ws.worktree, &["rev-parse", "HEAD"]).trim().to_owned();
    apply_round_trip(&ws, tmp.path(), Some(best));
}

#[test]
fn our_patch_equals_git_diff_binary_full_index_for_text_changes() {
    if !git_available() {
        eprintln!("git CLI not installed: skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let ws = prepare(&site_packages_request(tmp.path(), "s", "k")).unwrap();
    let many: String = (0..40).map(|i| format!("v{i}\n")).collect();
    std::fs::write(ws.worktree.join("aiter/ops/k.py"), &many).unwrap();
    std::fs::write(ws.worktree.join("aiter/ops/n.py"), "n\n").unwrap();
    let out = tmp.path().join("o");
    export(&ws, &ExportRequest::new(None, Some(out.clone()))).unwrap();
    let ours = std::fs::read_to_string(out.join("scratch.patch")).unwrap();
    let copy = tmp.path().join("copy");
    cp_a(&ws.worktree, &copy);
    git(&copy, &["add", "-A"]);
    let theirs = git(
        &copy,
        &[
            "diff",
            "--cached",
            "--binary",
            "--full-index",
            "--diff-algorithm=histogram",
            &ws.meta.base_commit,
        ],
    );
    assert_eq!(ours, theirs);
}

#[test]
fn edits_under_excluded_paths_are_reported_as_drift_not_patched() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = prepare(&site_packages_request(tmp.path(), "s", "k")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(
        ws.worktree.join("aiter/jit/core.py"),
        "JIT = False  # edited\n",
    )
    .unwrap();
    std::fs::write(ws.worktree.join("aiter/jit/new_helper.py"), "H = 1\n").unwrap();
    std::fs::remove_file(ws.worktree.join("aiter/dist/shard.py")).unwrap();
    std::fs::write(
        ws.worktree.join("aiter/ops/k.py"),
        "def k(x):\n    return x\n",
    )
    .unwrap();
    let out = tmp.path().join("o");
    let report = export(&ws, &ExportRequest::new(None, Some(out.clone()))).unwrap();
    let drift: Vec<(&str, DriftState)> = report
        .excluded_drift
        .iter()
        .map(|d| (d.path.as_str(), d.state))
        .collect();
    assert_eq!(
        drift,
        [
            ("aiter/dist/shard.py", DriftState::Vanished),
            ("aiter/jit/core.py", DriftState::Changed),
            ("aiter/jit/new_helper.py", DriftState::Appeared),
        ]
    );
    assert_eq!(
        std::fs::read_to_string(out.join("files_excluded/aiter/jit/core.py")).unwrap(),
        "JIT = False  # edited\n"
    );
    let patch = std::fs::read_to_string(out.join("scratch.patch")).unwrap();
    assert!(!patch.contains("jit/core.py"));
    assert!(patch.contains("aiter/ops/k.py"));
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.contains("edited under an excluded path; not in the patch"))
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("export.json")).unwrap()).unwrap();
    assert_eq!(manifest["excluded_drift"].as_array().unwrap().len(), 3);
}

#[test]
fn workspace_open_reads_everything_back_from_metadata() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = prepare(&site_packages_request(tmp.path(), "s", "k")).unwrap();
    let again = Workspace::open(&ws.worktree).unwrap();
    assert_eq!(again.meta, ws.meta);
    assert_eq!(again.kernel_path, ws.kernel_path);
    assert!(again.warnings.is_empty());
    assert!(matches!(
        Workspace::open(tmp.path()),
        Err(Error::NotAWorkspace { .. })
    ));
}

#[test]
fn discard_removes_only_an_owned_workspace_and_keeps_the_session_marker() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = prepare(&site_packages_request(tmp.path(), "s", "k")).unwrap();
    let mut foreign = Workspace::open(&ws.worktree).unwrap();
    foreign.meta.owner = "1:1".into();
    assert!(matches!(
        kernlens_scratch::prepare::discard(&foreign),
        Err(Error::NotOwner { .. })
    ));
    assert!(ws.worktree.exists());
    kernlens_scratch::prepare::discard(&ws).unwrap();
    assert!(!tmp.path().join("local/s/k").exists());
    assert!(tmp.path().join("local/s/.owner").exists());
}

#[test]
fn names_that_are_not_utf8_survive_copy_baseline_and_patch() {
    use std::os::unix::ffi::OsStrExt;
    if !git_available() {
        eprintln!("git CLI not installed: skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let sp = site_packages_fixture(tmp.path());
    let odd = std::ffi::OsStr::from_bytes(b"odd\xffname.py");
    write(&sp.join("aiter/ops").join(odd), "o = 1\n");
    let ws = prepare(&site_packages_request(tmp.path(), "s", "k")).unwrap();
    assert_eq!(git(&ws.worktree, &["status", "--porcelain"]), "");
    std::fs::write(ws.worktree.join("aiter/ops").join(odd), "o = 2\n").unwrap();
    let listed = changes(&ws, None).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].path_bytes(), b"aiter/ops/odd\xffname.py");
    apply_round_trip(&ws, tmp.path(), None);
}

#[test]
fn patch_round_trips_with_the_cli_backend_too() {
    if !git_available() {
        eprintln!("git CLI not installed: skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let sp = site_packages_fixture(tmp.path());
    write(&sp.join("aiter/ops/data.npy"), [0u8, 1, 2, 3, 0, 5]);
    let mut req = site_packages_request(tmp.path(), "s", "k");
    req.policy.git_backend = kernlens_scratch::policy::GitBackend::Cli;
    let ws = prepare(&req).unwrap();
    let o = ws.worktree.join("aiter/ops");
    std::fs::write(o.join("k.py"), "def k(x):\n    return x - 1\n").unwrap();
    std::fs::write(o.join("data.npy"), [0u8, 9, 9, 3, 0, 5, 7]).unwrap();
    std::fs::write(o.join("with space.py"), "s = 1\n").unwrap();
    std::os::unix::fs::symlink("k.py", o.join("alias.py")).unwrap();
    apply_round_trip(&ws, tmp.path(), None);
}

#[test]
fn a_missing_kernel_is_a_warning_without_best_and_an_error_at_best() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = prepare(&site_packages_request(tmp.path(), "s", "k")).unwrap();
    std::fs::remove_file(&ws.kernel_path).unwrap();
    let report = export(&ws, &ExportRequest::new(None, Some(tmp.path().join("o")))).unwrap();
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.contains("missing from the worktree")),
        "{:?}",
        report.warnings
    );
    assert!(!tmp.path().join("o/v1_scratch.py").exists());
    if !git_available() {
        return;
    }
    git(&ws.worktree, &["add", "-A"]);
    git(&ws.worktree, &["commit", "-q", "-m", "drop kernel"]);
    let best = git(&ws.worktree, &["rev-parse", "HEAD"]).trim().to_owned();
    let err = export(
        &ws,
        &ExportRequest::new(Some(best), Some(tmp.path().join("o2"))),
    )
    .unwrap_err();
    assert!(matches!(err, Error::PrimaryMissingAtBest { .. }), "{err}");
}
