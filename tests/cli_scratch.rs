//! `kernlens scratch create|diff|sweep` run as the built binary on real trees in temp dirs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
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
    cmd.args(args)
        .arg("--json")
        .env_remove("KERNLENS_LOCAL_SCRATCH_ROOT");
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
    let before = digest(&tmp.path().join("site-packages"));
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
    assert_eq!(digest(&tmp.path().join("site-packages")), before);
}

#[test]
fn a_protected_branch_is_refused_with_exit_1_and_no_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path());
    let before = digest(&tmp.path().join("site-packages"));
    let output = tmp.path().join("runs/sess/att");
    let out = create(&src, &output, &["--branch", "refs/heads/master"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["refused"]["reason"], "protected_branch");
    assert_eq!(v["refused"]["name"], "master");
    assert!(!tmp.path().join("runs").exists());
    assert_eq!(digest(&tmp.path().join("site-packages")), before);
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
    let before = digest(&tmp.path().join("site-packages"));
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
    assert_eq!(digest(&tmp.path().join("site-packages")), before);
}

#[test]
fn create_edit_diff_without_any_git_on_path() {
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path());
    let output = tmp.path().join("runs/sess/att");
    let no_git = [("PATH", "/nonexistent-kernlens-path")];
    let before = digest(&tmp.path().join("site-packages"));
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
    assert_eq!(digest(&tmp.path().join("site-packages")), before);
}

#[test]
fn diff_of_a_directory_that_is_not_a_workspace_fails_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    write(&tmp.path().join("notes/a.txt"), "mine");
    let before = digest(tmp.path());
    let out = kernlens(&["scratch", "diff", tmp.path().to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("kernlens: scratch diff: "), "{err}");
    assert!(err.contains("not a kernlens scratch workspace"), "{err}");
    assert_eq!(digest(tmp.path()), before);
}

#[test]
fn sweep_prints_its_report() {
    let tmp = tempfile::tempdir().unwrap();
    let local = tmp.path().join("local");
    write(&local.join("dead/a/worktree/x.py"), "x");
    write(&local.join("dead/.owner"), "4194303:0\n");
    write(&local.join("stranger/notes.txt"), "x");
    write(&tmp.path().join("beside/keep.txt"), "mine");
    let before = (
        digest(&local.join("stranger")),
        digest(&tmp.path().join("beside")),
    );
    let out = kernlens(
        &[
            "scratch",
            "sweep",
            "--local-root",
            local.to_str().unwrap(),
            "--grace-secs",
            "0",
        ],
        &[],
    );
    assert!(out.status.success());
    let v = json(&out);
    assert_eq!(v["action"], "sweep");
    assert_eq!(v["removed"].as_array().unwrap().len(), 1);
    assert_eq!(v["kept_stranger"].as_array().unwrap().len(), 1);
    assert!(!local.join("dead").exists());
    assert_eq!(
        (
            digest(&local.join("stranger")),
            digest(&tmp.path().join("beside"))
        ),
        before
    );
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

/// Run `kernlens <args>` with `envs` and SIGKILL it once a partial build shows up under
/// `scan`, up to five tries; a try that finished first has its worktree (`worktree`'s
/// attempt directory) removed and starts over. True once a kill left a partial behind.
fn kill_mid_copy(args: &[&str], envs: &[(&str, &str)], scan: &Path, worktree: &Path) -> bool {
    for _ in 0..5 {
        let mut child = Command::new(BIN)
            .args(args)
            .envs(envs.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) && partials_under(scan).is_empty() {
            std::thread::sleep(Duration::from_micros(200));
        }
        std::thread::sleep(Duration::from_millis(5));
        // Child::kill is SIGKILL: no destructor, no cleanup runs in the child.
        child.kill().unwrap();
        child.wait().unwrap();
        if worktree.exists() {
            // Too late: the build finished. Start over.
            std::fs::remove_dir_all(worktree.parent().unwrap()).unwrap();
            continue;
        }
        if !partials_under(scan).is_empty() {
            return true;
        }
    }
    false
}

#[test]
fn a_create_killed_mid_copy_leaves_a_partial_that_the_next_create_removes() {
    let tmp = tempfile::tempdir().unwrap();
    let src = big_package(tmp.path(), 6000);
    let before = digest(&tmp.path().join("site-packages"));
    let output = tmp.path().join("runs/sess/att");
    let args = [
        "scratch",
        "create",
        "--source",
        src.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
    ];
    assert!(
        kill_mid_copy(&args, &[], tmp.path(), &output.join("worktree")),
        "could not catch a create in the middle of its copy"
    );
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
    assert_eq!(digest(&tmp.path().join("site-packages")), before);
}

#[test]
fn a_relocated_create_killed_mid_copy_is_recovered_and_nothing_foreign_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let src = big_package(tmp.path(), 6000);
    let net = Network::new(tmp.path());
    // A neighbour session of a live owner, and files beside the root, must come through as they were.
    let neighbour = ok_json(&net.create(&src, "neighbour", "a", &["--grace-secs", "0"]));
    let neighbour = PathBuf::from(neighbour["worktree"].as_str().unwrap());
    std::fs::write(neighbour.join("aiter/ops/k.py"), "EDITED = 1\n").unwrap();
    let before = (
        digest(&tmp.path().join("site-packages")),
        digest(&neighbour),
    );
    let output = net.sessions.join("forge/s1/matmul");
    let args = [
        "scratch",
        "create",
        "--source",
        src.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
        "--mount-table",
        net.table.to_str().unwrap(),
    ];
    let env = [("KERNLENS_LOCAL_SCRATCH_ROOT", net.local.to_str().unwrap())];
    let worktree = net.local.join("s1/matmul/worktree");
    assert!(
        kill_mid_copy(&args, &env, &net.local, &worktree),
        "could not catch a relocated create in the middle of its copy"
    );
    // The killed create named this process as owner: the session is kept, partial and all.
    let swept = net.sweep(&["--grace-secs", "0"]);
    assert!(
        paths(&swept["kept_alive"]).contains(&net.local.join("s1")),
        "{swept}"
    );
    let out = ok_json(&net.create(&src, "s1", "matmul", &[]));
    assert_eq!(PathBuf::from(out["worktree"].as_str().unwrap()), worktree);
    assert!(
        partials_under(&net.local).is_empty(),
        "the dead partial was not removed"
    );
    assert_eq!(
        (
            digest(&tmp.path().join("site-packages")),
            digest(&neighbour)
        ),
        before
    );
}

#[test]
fn two_processes_creating_one_attempt_one_wins_the_other_collides() {
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
                "--json",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let before = digest(&tmp.path().join("site-packages"));
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert_eq!(digest(&tmp.path().join("site-packages")), before);
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
fn a_sweep_killed_mid_deletion_is_resumed_by_the_next_sweep() {
    let tmp = tempfile::tempdir().unwrap();
    let local = tmp.path().join("local");
    write(&tmp.path().join("beside/keep.txt"), "mine");
    let beside = digest(&tmp.path().join("beside"));
    let mut caught = false;
    for round in 0..5 {
        let dead = local.join(format!("dead{round}"));
        for i in 0..8000 {
            write(&dead.join(format!("a/worktree/{:02}/f{i}", i % 50)), "x");
        }
        write(&dead.join(".owner"), "4194303:0\n");
        let mut child = Command::new(BIN)
            .args([
                "scratch",
                "sweep",
                "--local-root",
                local.to_str().unwrap(),
                "--grace-secs",
                "0",
            ])
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
    assert_eq!(digest(&tmp.path().join("beside")), beside);
}

// ---- Issue 14: ownership, release, grace, links, home guard, sparse copy, branch names. ----

/// Everything under `dir`, never following a link: relative path -> kind, permission bits and a
/// hash of the bytes (files) or of the target text (links). Equal digests before and after a
/// command mean it changed nothing there. A file over 64 MiB (the sparse 65 GiB file of
/// `a_sparse_file_is_copied_sparse_and_counts_allocated_bytes`, which would take minutes to read
/// whole) is hashed by its length, allocated blocks, modification time and its first and last
/// 64 KiB instead.
fn digest(dir: &Path) -> BTreeMap<PathBuf, (&'static str, u32, u64)> {
    use std::hash::{DefaultHasher, Hash, Hasher};
    use std::io::{Read, Seek, SeekFrom};
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    const WHOLE: u64 = 64 << 20;
    const END: u64 = 64 << 10;
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let path = e.path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mut h = DefaultHasher::new();
            let kind = if meta.is_symlink() {
                std::fs::read_link(&path).unwrap().hash(&mut h);
                "link"
            } else if meta.is_dir() {
                stack.push(path.clone());
                "dir"
            } else if meta.len() <= WHOLE {
                std::fs::read(&path).unwrap().hash(&mut h);
                "file"
            } else {
                (meta.len(), meta.blocks(), meta.mtime(), meta.mtime_nsec()).hash(&mut h);
                let mut f = std::fs::File::open(&path).unwrap();
                let mut ends = vec![0u8; END as usize];
                f.read_exact(&mut ends).unwrap();
                ends.hash(&mut h);
                f.seek(SeekFrom::End(-(END as i64))).unwrap();
                f.read_exact(&mut ends).unwrap();
                ends.hash(&mut h);
                "file"
            };
            let rel = path.strip_prefix(dir).unwrap().to_path_buf();
            out.insert(rel, (kind, meta.permissions().mode() & 0o7777, h.finish()));
        }
    }
    out
}

/// A scratch layout where `<tmp>/sessions` is on nfs4 (by the injected mount table), so every
/// create under it is relocated to `<tmp>/local`.
struct Network {
    table: PathBuf,
    sessions: PathBuf,
    local: PathBuf,
}

impl Network {
    fn new(tmp: &Path) -> Network {
        let base = tmp.canonicalize().unwrap();
        let sessions = base.join("sessions");
        let table = base.join("mounts");
        write(
            &table,
            format!(
                "rootfs / ext4 rw 0 0\nsrv:/x {} nfs4 rw 0 0\n",
                sessions.display()
            ),
        );
        Network {
            table,
            sessions,
            local: base.join("local"),
        }
    }

    fn create(&self, src: &Path, session: &str, attempt: &str, extra: &[&str]) -> Output {
        let mut args = vec!["--mount-table", self.table.to_str().unwrap()];
        args.extend_from_slice(extra);
        create(
            src,
            &self.sessions.join("forge").join(session).join(attempt),
            &args,
            &[("KERNLENS_LOCAL_SCRATCH_ROOT", self.local.to_str().unwrap())],
        )
    }

    fn sweep(&self, extra: &[&str]) -> serde_json::Value {
        let mut args = vec![
            "scratch",
            "sweep",
            "--local-root",
            self.local.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let out = kernlens(&args, &[]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        json(&out)
    }
}

/// `package` created beside the output `<tmp>/runs/s/a`: the output and the worktree path.
fn local_workspace(tmp: &Path) -> (PathBuf, String) {
    let src = package(tmp);
    let output = tmp.join("runs/s/a");
    let v = ok_json(&create(&src, &output, &[], &[]));
    (output, v["worktree"].as_str().unwrap().to_owned())
}

fn ok_json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    json(out)
}

fn paths(v: &serde_json::Value) -> Vec<PathBuf> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| PathBuf::from(p.as_str().unwrap()))
        .collect()
}

/// Exit 1 with exactly one line on stderr starting `kernlens: <what>:` and holding `needle`.
fn assert_one_line_failure(out: &Output, what: &str, needle: &str) {
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with(&format!("kernlens: {what}: ")), "{err}");
    assert!(err.contains(needle), "{err}");
}

#[test]
fn a_relocated_session_of_a_live_owner_survives_later_creates_and_sweeps_with_its_edits() {
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path());
    let before = digest(&tmp.path().join("site-packages"));
    let net = Network::new(tmp.path());
    let v = ok_json(&net.create(&src, "s1", "matmul", &[]));
    assert_eq!(v["relocated"], true);
    // The owner is the caller of the short-lived CLI: this test process.
    let marker = std::fs::read_to_string(net.local.join("s1/.owner")).unwrap();
    assert!(
        marker.starts_with(&format!("{}:", std::process::id())),
        "{marker}"
    );
    let kernel = PathBuf::from(v["kernel_path"].as_str().unwrap());
    std::fs::write(&kernel, "def k(x):\n    return x + 99\n").unwrap();

    let second = ok_json(&net.create(&src, "s2", "softmax", &["--grace-secs", "0"]));
    assert_eq!(
        paths(&second["sweep"]["kept_alive"]),
        vec![net.local.join("s1")]
    );
    let swept = net.sweep(&["--grace-secs", "0"]);
    assert!(paths(&swept["kept_alive"]).contains(&net.local.join("s1")));
    assert!(swept["removed"].as_array().unwrap().is_empty(), "{swept}");
    assert_eq!(
        std::fs::read_to_string(&kernel).unwrap(),
        "def k(x):\n    return x + 99\n"
    );
    assert_eq!(digest(&tmp.path().join("site-packages")), before);
}

#[test]
fn a_session_whose_owner_exited_is_kept_for_the_grace_period_then_swept() {
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path());
    let before = digest(&tmp.path().join("site-packages"));
    let net = Network::new(tmp.path());
    let mut owner = Command::new("sleep").arg("60").spawn().unwrap();
    let pid = owner.id().to_string();
    let v = ok_json(&net.create(&src, "s1", "matmul", &["--owner-pid", &pid]));
    let marker = std::fs::read_to_string(net.local.join("s1/.owner")).unwrap();
    assert!(marker.starts_with(&format!("{pid}:")), "{marker}");
    assert_eq!(
        paths(&net.sweep(&["--grace-secs", "0"])["kept_alive"]),
        vec![net.local.join("s1")]
    );
    owner.kill().unwrap();
    owner.wait().unwrap();

    let kept = net.sweep(&[]);
    assert_eq!(
        paths(&kept["kept_recent"]),
        vec![net.local.join("s1")],
        "{kept}"
    );
    assert!(PathBuf::from(v["kernel_path"].as_str().unwrap()).is_file());
    let swept = net.sweep(&["--grace-secs", "0"]);
    assert_eq!(
        paths(&swept["removed"]),
        vec![net.local.join("s1")],
        "{swept}"
    );
    assert!(!net.local.join("s1").exists());
    assert_eq!(digest(&tmp.path().join("site-packages")), before);
}

#[test]
fn a_reused_pid_with_another_start_time_does_not_keep_a_session_alive() {
    let tmp = tempfile::tempdir().unwrap();
    let local = tmp.path().join("local");
    let me = std::process::id();
    let stat = std::fs::read_to_string(format!("/proc/{me}/stat")).unwrap();
    let start: u64 = stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .nth(19)
        .unwrap()
        .parse()
        .unwrap();
    write(&local.join("reused/a/worktree/x.py"), "x");
    write(
        &local.join("reused/.owner"),
        format!("{me}:{}\n", start + 1),
    );
    write(&local.join("mine/a/worktree/x.py"), "x");
    write(&local.join("mine/.owner"), format!("{me}:{start}\n"));
    write(&tmp.path().join("beside/keep.txt"), "mine");
    let before = (
        digest(&local.join("mine")),
        digest(&tmp.path().join("beside")),
    );
    let v = kernlens(
        &[
            "scratch",
            "sweep",
            "--local-root",
            local.to_str().unwrap(),
            "--grace-secs",
            "0",
        ],
        &[],
    );
    let v = ok_json(&v);
    let local = local.canonicalize().unwrap();
    assert_eq!(paths(&v["removed"]), vec![local.join("reused")]);
    assert_eq!(paths(&v["kept_alive"]), vec![local.join("mine")]);
    assert_eq!(
        (
            digest(&local.join("mine")),
            digest(&tmp.path().join("beside"))
        ),
        before
    );
}

#[test]
fn release_lets_the_next_sweep_remove_a_session_whose_owner_still_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path());
    let before = digest(&tmp.path().join("site-packages"));
    let net = Network::new(tmp.path());
    let v = ok_json(&net.create(&src, "s1", "matmul", &[]));
    let worktree = v["worktree"].as_str().unwrap().to_owned();
    let released = ok_json(&kernlens(&["scratch", "release", &worktree], &[]));
    assert_eq!(released["action"], "release");
    assert_eq!(released["released"], true);
    assert_eq!(
        PathBuf::from(released["session_dir"].as_str().unwrap()),
        net.local.join("s1")
    );
    // Default grace, live owner (this process): the release alone lets it go.
    let swept = net.sweep(&[]);
    assert_eq!(
        paths(&swept["removed"]),
        vec![net.local.join("s1")],
        "{swept}"
    );
    assert_eq!(paths(&swept["released"]), vec![net.local.join("s1")]);
    assert!(!net.local.join("s1").exists());
    assert_eq!(digest(&tmp.path().join("site-packages")), before);
}

#[test]
fn a_new_claim_of_a_released_session_clears_the_release() {
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path());
    let before = digest(&tmp.path().join("site-packages"));
    let net = Network::new(tmp.path());
    let v = ok_json(&net.create(&src, "s1", "a1", &[]));
    ok_json(&kernlens(
        &["scratch", "release", v["worktree"].as_str().unwrap()],
        &[],
    ));
    ok_json(&net.create(&src, "s1", "a2", &[]));
    assert!(!net.local.join("s1/.released").exists());
    let swept = net.sweep(&[]);
    assert_eq!(
        paths(&swept["kept_alive"]),
        vec![net.local.join("s1")],
        "{swept}"
    );
    assert_eq!(digest(&tmp.path().join("site-packages")), before);
}

#[test]
fn release_of_a_worktree_beside_its_output_releases_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, worktree) = local_workspace(tmp.path());
    // Nothing to release: not a file changes, in the package or in the workspace.
    let before = digest(tmp.path());
    let released = ok_json(&kernlens(&["scratch", "release", &worktree], &[]));
    assert_eq!(released["released"], false);
    assert!(Path::new(&worktree).join("aiter/ops/k.py").is_file());
    assert_eq!(digest(tmp.path()), before);
}

#[test]
fn an_owner_pid_that_does_not_run_is_an_error_and_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path());
    let net = Network::new(tmp.path());
    let before = digest(tmp.path());
    let out = net.create(&src, "s1", "matmul", &["--owner-pid", "4194303"]);
    assert_one_line_failure(&out, "scratch create", "--owner-pid 4194303");
    assert!(!net.local.exists());
    assert_eq!(digest(tmp.path()), before);
}

#[test]
fn a_relocated_create_refuses_a_session_directory_that_is_a_symlink() {
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path());
    let net = Network::new(tmp.path());
    let elsewhere = tmp.path().join("elsewhere");
    write(&elsewhere.join("keep.txt"), "mine");
    std::fs::create_dir_all(&net.local).unwrap();
    std::os::unix::fs::symlink(&elsewhere, net.local.join("s1")).unwrap();
    let before = (
        digest(&elsewhere),
        digest(&tmp.path().join("site-packages")),
    );
    let out = net.create(&src, "s1", "matmul", &[]);
    assert_one_line_failure(&out, "scratch create", "refusing to follow");
    assert_eq!(
        (
            digest(&elsewhere),
            digest(&tmp.path().join("site-packages"))
        ),
        before
    );
    assert!(
        std::fs::symlink_metadata(net.local.join("s1"))
            .unwrap()
            .is_symlink()
    );
}

#[test]
fn session_and_attempt_directories_are_private_and_an_existing_session_is_made_private() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path());
    let net = Network::new(tmp.path());
    std::fs::create_dir_all(net.local.join("s1")).unwrap();
    std::fs::set_permissions(net.local.join("s1"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let before = digest(&tmp.path().join("site-packages"));
    ok_json(&net.create(&src, "s1", "matmul", &[]));
    ok_json(&net.create(&src, "s2", "matmul", &[]));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    for dir in ["s1", "s1/matmul", "s2", "s2/matmul"] {
        assert_eq!(mode(&net.local.join(dir)), 0o700, "{dir}");
    }
    assert_eq!(digest(&tmp.path().join("site-packages")), before);
}

#[test]
fn a_kernel_file_that_is_a_symlink_is_copied_as_a_file_and_edits_stay_in_the_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("site-packages/aiter");
    write(&a.join("__init__.py"), "");
    write(&a.join("impl/__init__.py"), "");
    write(&a.join("impl/k.py"), "def k(x):\n    return x\n");
    std::fs::create_dir_all(a.join("ops")).unwrap();
    write(&a.join("ops/__init__.py"), "");
    std::os::unix::fs::symlink("../impl/k.py", a.join("ops/k.py")).unwrap();
    let before = digest(&tmp.path().join("site-packages"));
    let output = tmp.path().join("runs/s/a");
    let v = ok_json(&create(&a.join("ops/k.py"), &output, &[], &[]));
    assert_eq!(v["kernel_rel"], "aiter/impl/k.py");
    let kernel = PathBuf::from(v["kernel_path"].as_str().unwrap());
    assert!(std::fs::symlink_metadata(&kernel).unwrap().is_file());
    let warnings = v["warnings"].to_string();
    assert!(warnings.contains("source_resolved"), "{warnings}");
    std::fs::write(&kernel, "def k(x):\n    return 2 * x\n").unwrap();
    let diff = ok_json(&kernlens(
        &["scratch", "diff", v["worktree"].as_str().unwrap()],
        &[],
    ));
    assert_eq!(diff["changes"][0]["path"], "aiter/impl/k.py");
    assert_eq!(digest(&tmp.path().join("site-packages")), before);
}

#[test]
fn a_linked_directory_on_the_kernel_path_is_resolved_and_its_files_copied_as_files() {
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("src/ops");
    write(&real.join("__init__.py"), "");
    write(&real.join("k.py"), "def k(x):\n    return x\n");
    let sp = tmp.path().join("site-packages");
    std::fs::create_dir_all(&sp).unwrap();
    std::os::unix::fs::symlink(&real, sp.join("ops")).unwrap();
    let before = (digest(&tmp.path().join("src")), digest(&sp));
    let v = ok_json(&create(
        &sp.join("ops/k.py"),
        &tmp.path().join("runs/s/a"),
        &[],
        &[],
    ));
    assert_eq!(v["kernel_rel"], "ops/k.py");
    let kernel = PathBuf::from(v["kernel_path"].as_str().unwrap());
    let worktree = PathBuf::from(v["worktree"].as_str().unwrap());
    assert!(
        std::fs::symlink_metadata(worktree.join("ops"))
            .unwrap()
            .is_dir()
    );
    std::fs::write(&kernel, "EDITED = 1\n").unwrap();
    assert_eq!((digest(&tmp.path().join("src")), digest(&sp)), before);
}

#[test]
fn a_link_inside_the_package_pointing_outside_stays_a_link_and_is_warned_about() {
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path());
    let outside = tmp.path().join("outside");
    write(&outside.join("data.bin"), "not ours");
    let a = tmp.path().join("site-packages/aiter");
    std::os::unix::fs::symlink(&outside, a.join("data")).unwrap();
    std::os::unix::fs::symlink("ops/k.py", a.join("alias.py")).unwrap();
    let before = (digest(&outside), digest(&tmp.path().join("site-packages")));
    let v = ok_json(&create(&src, &tmp.path().join("runs/s/a"), &[], &[]));
    let worktree = PathBuf::from(v["worktree"].as_str().unwrap());
    assert_eq!(
        std::fs::read_link(worktree.join("aiter/data")).unwrap(),
        outside
    );
    let warnings: Vec<String> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_owned())
        .collect();
    let outside_warnings: Vec<&String> = warnings
        .iter()
        .filter(|w| w.starts_with("link_outside_copy"))
        .collect();
    assert_eq!(outside_warnings.len(), 1, "{warnings:?}");
    assert!(outside_warnings[0].contains("aiter/data"), "{warnings:?}");
    assert_eq!(
        (digest(&outside), digest(&tmp.path().join("site-packages"))),
        before
    );
}

#[test]
fn scratch_diff_replaces_links_in_its_output_directory_instead_of_writing_through_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (output, worktree) = local_workspace(tmp.path());
    std::fs::write(
        Path::new(&worktree).join("aiter/ops/k.py"),
        "def k(x):\n    return 3\n",
    )
    .unwrap();
    let victims = tmp.path().join("victims");
    write(&victims.join("patch"), "precious patch");
    write(&victims.join("json"), "precious json");
    let out_dir = output.join("optimized_versions");
    std::fs::create_dir_all(&out_dir).unwrap();
    std::os::unix::fs::symlink(victims.join("patch"), out_dir.join("scratch.patch")).unwrap();
    std::os::unix::fs::symlink(victims.join("json"), out_dir.join("export.json")).unwrap();
    let before = (digest(&victims), digest(&tmp.path().join("site-packages")));
    let diff = ok_json(&kernlens(&["scratch", "diff", &worktree], &[]));
    assert_eq!(diff["changes"].as_array().unwrap().len(), 1);
    assert_eq!(
        (digest(&victims), digest(&tmp.path().join("site-packages"))),
        before
    );
    for name in ["scratch.patch", "export.json"] {
        let meta = std::fs::symlink_metadata(out_dir.join(name)).unwrap();
        assert!(meta.is_file(), "{name} is still a link");
    }
    let patch = std::fs::read_to_string(out_dir.join("scratch.patch")).unwrap();
    assert!(patch.contains("+    return 3"));
    let leftovers: Vec<_> = std::fs::read_dir(&out_dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");
}

#[test]
fn scratch_diff_refuses_a_linked_directory_in_its_output_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let (output, worktree) = local_workspace(tmp.path());
    std::fs::write(Path::new(&worktree).join("aiter/ops/k.py"), "X = 1\n").unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    write(&elsewhere.join("keep"), "mine");
    let out_dir = output.join("optimized_versions");
    std::fs::create_dir_all(&out_dir).unwrap();
    std::os::unix::fs::symlink(&elsewhere, out_dir.join("files")).unwrap();
    let before = digest(&elsewhere);
    let out = kernlens(&["scratch", "diff", &worktree], &[]);
    assert_one_line_failure(&out, "scratch diff", "refusing to follow");
    assert_eq!(digest(&elsewhere), before);

    // An output directory that is itself a link is refused the same way.
    let linked = tmp.path().join("linked-out");
    std::os::unix::fs::symlink(&elsewhere, &linked).unwrap();
    let out = kernlens(
        &["scratch", "diff", &worktree, "-o", linked.to_str().unwrap()],
        &[],
    );
    assert_one_line_failure(&out, "scratch diff", "refusing to follow");
    assert_eq!(digest(&elsewhere), before);
}

#[test]
fn a_copy_root_that_holds_home_is_refused_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home/me");
    write(&home.join("secret.txt"), "mine");
    write(&tmp.path().join("home/k.py"), "def k(): pass\n");
    write(&home.join("k.py"), "def k(): pass\n");
    let before = digest(&tmp.path().join("home"));
    let home_env = [("HOME", home.to_str().unwrap())];
    for source in [tmp.path().join("home/k.py"), home.join("k.py")] {
        let output = tmp.path().join("runs/s/a");
        let out = create(&source, &output, &[], &home_env);
        assert_one_line_failure(&out, "scratch create", "refusing to copy");
        assert!(!tmp.path().join("runs").exists());
    }
    assert_eq!(digest(&tmp.path().join("home")), before);
}

#[test]
fn a_copy_root_that_holds_another_users_home_is_refused_by_the_password_database() {
    let tmp = tempfile::tempdir().unwrap();
    // A loose module in a directory holding bob's home (as /home does): its copy root would be
    // that directory, bob's files and all. This user's HOME is elsewhere.
    let users = tmp.path().join("users");
    write(&users.join("bob/private.txt"), "bob's");
    write(&users.join("kernel.py"), "def k(): pass\n");
    let passwd = tmp.path().join("passwd");
    write(
        &passwd,
        format!(
            "root:x:0:0:root:/root:/bin/sh\n# a comment\nbob:x:1001:1001::{}:/bin/sh\n",
            users.join("bob").display()
        ),
    );
    let me = tmp.path().join("me");
    let home = [("HOME", me.to_str().unwrap())];
    let before = digest(&users);
    let output = tmp.path().join("runs/s/a");
    let args = ["--passwd", passwd.to_str().unwrap()];
    let out = create(&users.join("kernel.py"), &output, &args, &home);
    assert_one_line_failure(&out, "scratch create", "of a user");
    assert!(!tmp.path().join("runs").exists());
    assert_eq!(digest(&users), before);

    // The password database is what refused it: without bob in it the same create copies.
    write(&passwd, "root:x:0:0:root:/root:/bin/sh\n");
    let v = ok_json(&create(&users.join("kernel.py"), &output, &args, &home));
    let worktree = PathBuf::from(v["worktree"].as_str().unwrap());
    assert!(worktree.join("bob/private.txt").is_file());
    assert_eq!(digest(&users), before);

    // A password file that cannot be read is an error, not an empty database.
    let missing = tmp.path().join("no-such-passwd");
    let out = create(
        &users.join("kernel.py"),
        &tmp.path().join("runs/s/b"),
        &["--passwd", missing.to_str().unwrap()],
        &home,
    );
    assert_one_line_failure(&out, "scratch create", "no-such-passwd");
    assert!(!tmp.path().join("runs/s/b").exists());
}

#[test]
fn the_filesystem_root_as_copy_root_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path());
    let before = digest(&tmp.path().join("site-packages"));
    // `--repo /` asks to copy everything under `/` as the "repository" holding the kernel.
    let out = create(&src, &tmp.path().join("runs/s/a"), &["--repo", "/"], &[]);
    assert_one_line_failure(&out, "scratch create", "it is the filesystem root");
    assert!(!tmp.path().join("runs").exists());
    assert_eq!(digest(&tmp.path().join("site-packages")), before);
}

#[test]
fn a_local_create_refuses_an_output_directory_that_is_a_symlink_and_makes_new_ones_private() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path());
    let elsewhere = tmp.path().join("elsewhere");
    write(&elsewhere.join("keep.txt"), "mine");
    std::fs::create_dir_all(tmp.path().join("runs/s")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, tmp.path().join("runs/s/a")).unwrap();
    let before = (
        digest(&elsewhere),
        digest(&tmp.path().join("site-packages")),
    );
    let out = create(&src, &tmp.path().join("runs/s/a"), &[], &[]);
    assert_one_line_failure(&out, "scratch create", "refusing to follow");
    assert_eq!(
        (
            digest(&elsewhere),
            digest(&tmp.path().join("site-packages"))
        ),
        before
    );

    // Missing components of a fresh output are created private.
    ok_json(&create(&src, &tmp.path().join("fresh/s/a"), &[], &[]));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    for dir in ["fresh", "fresh/s", "fresh/s/a"] {
        assert_eq!(mode(&tmp.path().join(dir)), 0o700, "{dir}");
    }
    assert_eq!(digest(&tmp.path().join("site-packages")), before.1);
}

/// The default `max_copy_bytes` (64 GiB, `kernlens_scratch::policy::MAX_COPY_BYTES`).
const MAX_COPY_BYTES: u64 = 64 << 30;

#[test]
fn a_sparse_file_is_copied_sparse_and_counts_allocated_bytes() {
    use std::os::unix::fs::MetadataExt;
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path());
    // 65 GiB apparent, 8 bytes of data: over the 64 GiB budget if the copy counted apparent
    // size (it was refused as too large, and copied dense it would fill the disk).
    let big = tmp.path().join("site-packages/aiter/jit/big.bin");
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::File::create(&big).unwrap();
        f.write_all(b"head").unwrap();
        f.seek(SeekFrom::Start(MAX_COPY_BYTES + (1 << 30))).unwrap();
        f.write_all(b"tail").unwrap();
    }
    assert!(std::fs::metadata(&big).unwrap().len() > MAX_COPY_BYTES);
    let before = digest(&tmp.path().join("site-packages"));
    let v = ok_json(&create(&src, &tmp.path().join("runs/s/a"), &[], &[]));
    let copy = PathBuf::from(v["worktree"].as_str().unwrap()).join("aiter/jit/big.bin");
    let (orig, copied) = (
        std::fs::metadata(&big).unwrap(),
        std::fs::metadata(&copy).unwrap(),
    );
    assert_eq!(copied.len(), orig.len());
    assert!(
        copied.blocks() * 512 <= 1 << 20,
        "{} bytes allocated",
        copied.blocks() * 512
    );
    {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = std::fs::File::open(&copy).unwrap();
        let mut four = [0u8; 4];
        f.read_exact(&mut four).unwrap();
        assert_eq!(&four, b"head");
        f.seek(SeekFrom::End(-4)).unwrap();
        f.read_exact(&mut four).unwrap();
        assert_eq!(&four, b"tail");
    }
    assert_eq!(digest(&tmp.path().join("site-packages")), before);
}

#[test]
fn head_at_and_dash_branches_are_refused_with_one_line_and_nothing_created() {
    let tmp = tempfile::tempdir().unwrap();
    let src = package(tmp.path());
    let output = tmp.path().join("runs/s/a");
    let before = digest(&tmp.path().join("site-packages"));
    for branch in [
        "--branch=HEAD",
        "--branch=@",
        "--branch=-x",
        "--branch=refs/heads/HEAD",
        // git's ref-format rules, through gix-validate.
        "--branch=a..b",
        "--branch=x.lock",
        "--branch=has space",
    ] {
        let out = create(&src, &output, &[branch], &[]);
        assert_one_line_failure(&out, "scratch create", "invalid branch name");
        assert!(!tmp.path().join("runs").exists(), "{branch}");
    }
    assert_eq!(digest(&tmp.path().join("site-packages")), before);
}

#[test]
fn sweep_of_a_local_root_that_is_a_file_fails_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("not-a-dir");
    write(&file, "x");
    let out = kernlens(
        &["scratch", "sweep", "--local-root", file.to_str().unwrap()],
        &[],
    );
    assert_one_line_failure(&out, "scratch sweep", "local root");
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read(&file).unwrap(), b"x");
}
