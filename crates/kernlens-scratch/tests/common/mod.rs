//! Shared builders for the scenario tests: real directory trees in temp dirs.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use kernlens_scratch::location::{LocationRequest, ScratchEnv};
use kernlens_scratch::mounts::MountTable;
use kernlens_scratch::prepare::PrepareRequest;

pub const BRANCH: &str = "kernlens/s/k-0123456789ab";

pub fn write(path: &Path, bytes: impl AsRef<[u8]>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// The W8 installed package: `<tmp>/site-packages/aiter/...` plus `torch/`.
pub fn site_packages_fixture(tmp: &Path) -> PathBuf {
    let sp = tmp.join("site-packages");
    let a = sp.join("aiter");
    write(&a.join("__init__.py"), "from . import ops\n");
    write(&a.join("ops/__init__.py"), "");
    write(&a.join("ops/k.py"), "def k(x):\n    return x + 1\n");
    write(&a.join("jit/core.py"), "JIT = True\n");
    write(&a.join("jit/extension.so"), b"\x7fELF\x00\x01binary");
    write(&a.join("dist/shard.py"), "SHARD = 1\n");
    write(&a.join("__pycache__/x.cpython-311.pyc"), b"\x00pyc");
    write(&a.join("stale.pyc"), b"\x00pyc");
    write(&a.join("legacy.pyo"), b"\x00pyo");
    write(&a.join(".git/HEAD"), "ref: refs/heads/main\n");
    write(&sp.join("torch/__init__.py"), "");
    sp
}

/// The scenario mount table: `<tmp>/sessions` is nfs4, everything else ext4.
pub fn mounts(tmp: &Path) -> MountTable {
    let sessions = tmp.canonicalize().unwrap().join("sessions");
    MountTable::parse(&format!(
        "rootfs / ext4 rw 0 0\nsrv:/forge {} nfs4 rw 0 0\n",
        sessions.display()
    ))
}

pub fn env(tmp: &Path) -> ScratchEnv {
    ScratchEnv::new(
        Some(tmp.join("local").display().to_string()),
        None,
        Some(tmp.join("home")),
    )
}

pub fn output_dir(tmp: &Path, session: &str, attempt: &str) -> PathBuf {
    tmp.join("sessions/forge").join(session).join(attempt)
}

/// A W8 prepare request for `session/attempt` (network output, relocated).
pub fn site_packages_request(tmp: &Path, session: &str, attempt: &str) -> PrepareRequest {
    let sp = tmp.join("site-packages");
    if !sp.exists() {
        site_packages_fixture(tmp);
    }
    let mut req = PrepareRequest::new(
        sp.join("aiter/ops/k.py"),
        LocationRequest::new(output_dir(tmp, session, attempt)),
    );
    req.branch = Some(BRANCH.into());
    req.env = env(tmp);
    req.mounts = mounts(tmp);
    req
}

pub fn git_available() -> bool {
    Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Run git in `dir` isolated from the user's configuration; returns stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("HOME", dir)
        .env("GIT_AUTHOR_NAME", "oracle")
        .env("GIT_AUTHOR_EMAIL", "oracle@localhost")
        .env("GIT_COMMITTER_NAME", "oracle")
        .env("GIT_COMMITTER_EMAIL", "oracle@localhost")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every regular file and link under `root` (skipping `.git`), relative, sorted, with contents
/// (link targets for links).
pub fn snapshot(root: &Path) -> Vec<(String, Vec<u8>, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            if e.file_name() == ".git" {
                continue;
            }
            let ft = e.file_type().unwrap();
            let rel = e.path().strip_prefix(root).unwrap().display().to_string();
            if ft.is_dir() {
                stack.push(e.path());
            } else if ft.is_symlink() {
                let t = std::fs::read_link(e.path()).unwrap();
                out.push((rel, t.as_os_str().as_encoded_bytes().to_vec(), 0o120000));
            } else {
                let mode = e.metadata().unwrap().permissions().mode() & 0o111;
                out.push((rel, std::fs::read(e.path()).unwrap(), mode));
            }
        }
    }
    out.sort();
    out
}
