//! `kernlens scratch create|diff|sweep` run as the built binary on real trees in temp dirs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_kernlens");

fn write(path: &Path, bytes: impl AsRef<[u8]>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A small installed package `site-packages/aiter` with a kernel, JIT output and bytecode.
fn package(tmp: &Path) -> PathBuf {
    let a = tmp.join("site-packages/aiter");
    write(&a.join("__init__.py"), "");
    write(&a.join("ops/__init__.py"), "");
    write(&a.join("ops/k.py"), "def k(x):\n    return x + 1\n");
    write(&a.join("jit/core.py"), "JIT = 1\n");
    write(&a.join("jit/ext.so"), b"\x7fELF\x00");
    write(&a.join("__pycache__/k.cpython-311.pyc"), b"\x00");
    a.join("ops/k.py")
}

fn kernlens(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args).env_remove("KERNLENS_LOCAL_SCRATCH_ROOT");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn create(source: &Path, output: &Path, extra: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut args = vec![
        "scratch",
        "create",
        "--source",
        source.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    kernlens(&args, envs)
}

fn partials_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            if e.file_name()
                .to_string_lossy()
                .starts_with(".worktree.partial-")
            {
                found.push(e.path());
            } else if e.file_type().is_ok_and(|t| t.is_dir()) && e.file_name() != "worktree" {
                stack.push(e.path());
            }
        }
    }
    found
}

#[test]
fn create_prints_metadata_and_a_second_create_is_refused_with_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path());
    let output = tmp.path().join("runs/sess/att");
    let out = create(
        &src,
        &output,
        &["--branch", "kernlens/sess/k-0123456789ab"],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    assert_eq!(v["schema"], "kernlens.scratch/1");
    assert_eq!(v["action"], "create");
    assert_eq!(v["session"], "sess");
    assert_eq!(v["attempt"], "att");
    assert_eq!(v["kernel_rel"], "aiter/ops/k.py");
    assert_eq!(v["branch"], "kernlens/sess/k-0123456789ab");
    assert_eq!(v["relocated"], false);
    assert_eq!(v["base_commit"].as_str().unwrap().len(), 40);
    let worktree = PathBuf::from(v["worktree"].as_str().unwrap());
    assert!(worktree.join("aiter/jit/ext.so").is_file());
    assert_eq!(
        PathBuf::from(v["kernel_path"].as_str().unwrap()),
        worktree.join("aiter/ops/k.py")
    );

    let again = create(
        &src,
        &output,
        &["--branch", "kernlens/sess/k-0123456789ab"],
        &[],
    );
    assert_eq!(again.status.code(), Some(1));
    let v = json(&again);
    assert_eq!(v["refused"]["reason"], "collision");
    assert_eq!(
        PathBuf::from(v["refused"]["path"].as_str().unwrap()),
        worktree
    );
}

#[test]
fn a_protected_branch_is_refused_with_exit_1_and_no_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path());
    let output = tmp.path().join("runs/sess/att");
    let out = create(&src, &output, &["--branch", "refs/heads/master"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["refused"]["reason"], "protected_branch");
    assert_eq!(v["refused"]["name"], "master");
    assert!(!tmp.path().join("runs").exists());
}

#[test]
fn usage_errors_exit_2() {
    let out = kernlens(&["scratch", "create", "--source"], &[]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn network_output_is_relocated_under_the_override_root() {
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path());
    let sessions = tmp.path().canonicalize().unwrap().join("sessions");
    let table = tmp.path().join("mounts");
    write(
        &table,
        format!(
            "rootfs / ext4 rw 0 0\nsrv:/x {} nfs4 rw 0 0\n",
            sessions.display()
        ),
    );
    let local = tmp.path().join("local");
    let out = create(
        &src,
        &sessions.join("forge/s1/matmul"),
        &["--mount-table", table.to_str().unwrap()],
        &[("KERNLENS_LOCAL_SCRATCH_ROOT", local.to_str().unwrap())],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    assert_eq!(v["relocated"], true);
    assert_eq!(
        PathBuf::from(v["worktree"].as_str().unwrap()),
        local.join("s1/matmul/worktree")
    );
    assert!(v["branch"].as_str().unwrap().starts_with("kernlens/s1/k-"));
    assert!(local.join("s1/.owner").is_file());
}

#[test]
fn x1_x8_create_edit_diff_without_any_git_on_path() {
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path());
    let output = tmp.path().join("runs/sess/att");
    let no_git = [("PATH", "/nonexistent-kernlens-path")];
    let out = create(&src, &output, &[], &no_git);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let worktree = PathBuf::from(json(&out)["worktree"].as_str().unwrap());
    std::fs::write(
        worktree.join("aiter/ops/k.py"),
        "def k(x):\n    return x + 2\n",
    )
    .unwrap();
    let diff = kernlens(&["scratch", "diff", worktree.to_str().unwrap()], &no_git);
    assert!(
        diff.status.success(),
        "{}",
        String::from_utf8_lossy(&diff.stderr)
    );
    let v = json(&diff);
    assert_eq!(v["action"], "diff");
    assert_eq!(v["changes"].as_array().unwrap().len(), 1);
    assert_eq!(v["changes"][0]["path"], "aiter/ops/k.py");
    assert_eq!(v["changes"][0]["status"], "modified");
    let exported = output.join("optimized_versions");
    assert_eq!(PathBuf::from(v["out_dir"].as_str().unwrap()), exported);
    let patch = std::fs::read_to_string(exported.join("scratch.patch")).unwrap();
    assert!(patch.contains("+    return x + 2"));
    assert!(exported.join("export.json").is_file());
    assert!(exported.join("v1_scratch.py").is_file());
}

#[test]
fn diff_of_a_directory_that_is_not_a_workspace_fails_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let out = kernlens(&["scratch", "diff", tmp.path().to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("kernlens: scratch diff: "), "{err}");
    assert!(err.contains("not a kernlens scratch workspace"), "{err}");
}

#[test]
fn sweep_prints_its_report() {
    let tmp = tempfile::tempdir().unwrap();
    let local = tmp.path().join("local");
    write(&local.join("dead/a/worktree/x.py"), "x");
    write(&local.join("dead/.owner"), "4194303:0\n");
    write(&local.join("stranger/notes.txt"), "x");
    let out = kernlens(
        &["scratch", "sweep", "--local-root", local.to_str().unwrap()],
        &[],
    );
    assert!(out.status.success());
    let v = json(&out);
    assert_eq!(v["action"], "sweep");
    assert_eq!(v["removed"].as_array().unwrap().len(), 1);
    assert_eq!(v["kept_stranger"].as_array().unwrap().len(), 1);
    assert!(!local.join("dead").exists());
}

/// A package large enough that copying it takes a while.
fn big_package(tmp: &Path, files: usize) -> PathBuf {
    let src = package(tmp);
    let blob = vec![b'x'; 32 * 1024];
    for i in 0..files {
        write(
            &tmp.join(format!(
                "site-packages/aiter/jit/gen/{:03}/f{i}.bin",
                i % 100
            )),
            &blob,
        );
    }
    src
}

#[test]
fn z2_a_create_killed_mid_copy_leaves_a_partial_that_the_next_create_removes() {
    let tmp = tempfile::tempdir().unwrap();
    let src = big_package(tmp.path(), 6000);
    let output = tmp.path().join("runs/sess/att");
    let mut caught = false;
    for _ in 0..5 {
        let mut child = Command::new(BIN)
            .args([
                "scratch",
                "create",
                "--source",
                src.to_str().unwrap(),
                "--output",
                output.to_str().unwrap(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) && partials_under(tmp.path()).is_empty() {
            std::thread::sleep(Duration::from_micros(200));
        }
        std::thread::sleep(Duration::from_millis(5));
        child.kill().unwrap();
        child.wait().unwrap();
        if output.join("worktree").exists() {
            // Too late: the build finished. Start over.
            std::fs::remove_dir_all(&output).unwrap();
            continue;
        }
        if !partials_under(tmp.path()).is_empty() {
            caught = true;
            break;
        }
    }
    assert!(caught, "could not catch a create in the middle of its copy");
    let out = create(&src, &output, &[], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        partials_under(tmp.path()).is_empty(),
        "the dead partial was not removed"
    );
}

#[test]
fn z5_two_processes_creating_one_attempt_one_wins_the_other_collides() {
    let tmp = tempfile::tempdir().unwrap();
    let src = big_package(tmp.path(), 300);
    let output = tmp.path().join("runs/sess/att");
    let spawn = || {
        Command::new(BIN)
            .args([
                "scratch",
                "create",
                "--source",
                src.to_str().unwrap(),
                "--output",
                output.to_str().unwrap(),
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let codes = [a.status.code(), b.status.code()];
    assert!(
        codes.contains(&Some(0)) && codes.contains(&Some(1)),
        "{codes:?}"
    );
    let loser = if a.status.success() { &b } else { &a };
    assert_eq!(json(loser)["refused"]["reason"], "collision");
    assert!(partials_under(tmp.path()).is_empty());
}

#[test]
fn z3_a_sweep_killed_mid_deletion_is_resumed_by_the_next_sweep() {
    let tmp = tempfile::tempdir().unwrap();
    let local = tmp.path().join("local");
    let mut caught = false;
    for round in 0..5 {
        let dead = local.join(format!("dead{round}"));
        for i in 0..8000 {
            write(&dead.join(format!("a/worktree/{:02}/f{i}", i % 50)), "x");
        }
        write(&dead.join(".owner"), "4194303:0\n");
        let mut child = Command::new(BIN)
            .args(["scratch", "sweep", "--local-root", local.to_str().unwrap()])
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let trash = || {
            std::fs::read_dir(&local)
                .unwrap()
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with(".trash-"))
        };
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) && !trash() && dead.exists() {
            std::thread::sleep(Duration::from_micros(100));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        if trash() {
            caught = true;
            break;
        }
    }
    assert!(
        caught,
        "could not catch a sweep in the middle of a deletion"
    );
    let trash_entry = std::fs::read_dir(&local)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with(".trash-"))
        .unwrap();
    assert!(
        trash_entry.path().join(".owner").exists(),
        "the marker must go last"
    );
    let out = kernlens(
        &["scratch", "sweep", "--local-root", local.to_str().unwrap()],
        &[],
    );
    let v = json(&out);
    assert_eq!(v["resumed"].as_array().unwrap().len(), 1, "{v}");
    assert!(!trash_entry.path().exists());
}
