//! The optional `Cli` backend: the baseline made by the `git` executable, isolated from system and
//! user configuration and hooks, each step under a timeout. Chosen only explicitly, never as a
//! fallback, so behaviour never depends on `PATH`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::policy::{BASELINE_MESSAGE, BASELINE_REF, IDENTITY_EMAIL, IDENTITY_NAME};

/// Timeout of one baseline step.
pub const BASELINE_STEP_TIMEOUT: Duration = Duration::from_secs(120);

/// Run `git <args>` in `dir`, isolated, and return its stdout; a timeout or a non-zero exit is a
/// `Git` error naming the command.
fn git(dir: &Path, args: &[&str], timeout: Duration) -> Result<String, Error> {
    let shown = format!("git {}", args.join(" "));
    let safe = format!("safe.directory={}", dir.display());
    let mut child = Command::new("git")
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            &safe,
            "-c",
            "commit.gpgSign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", IDENTITY_NAME)
        .env("GIT_AUTHOR_EMAIL", IDENTITY_EMAIL)
        .env("GIT_COMMITTER_NAME", IDENTITY_NAME)
        .env("GIT_COMMITTER_EMAIL", IDENTITY_EMAIL)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_OBJECT_DIRECTORY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::git("run git", dir, format!("cannot start '{shown}': {e}")))?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Error::git(
                    "run git",
                    dir,
                    format!("'{shown}' timed out after {} s", timeout.as_secs()),
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(Error::git("run git", dir, format!("'{shown}': {e}"))),
        }
    }
    let out = child
        .wait_with_output()
        .map_err(|e| Error::git("run git", dir, format!("'{shown}': {e}")))?;
    if !out.status.success() {
        return Err(Error::git(
            "run git",
            dir,
            format!(
                "'{shown}' failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `git init`, point HEAD at the branch before any commit.
pub(crate) fn init(dir: &Path, branch: &str) -> Result<(), Error> {
    git(dir, &["init", "-q"], BASELINE_STEP_TIMEOUT)?;
    git(
        dir,
        &["symbolic-ref", "HEAD", &format!("refs/heads/{branch}")],
        BASELINE_STEP_TIMEOUT,
    )?;
    Ok(())
}

/// `git add -A`, commit, baseline ref; returns the commit id.
pub(crate) fn add_commit(dir: &Path) -> Result<gix::ObjectId, Error> {
    git(dir, &["add", "-A"], BASELINE_STEP_TIMEOUT)?;
    git(
        dir,
        &[
            "commit",
            "-q",
            "--no-verify",
            "--no-gpg-sign",
            "-m",
            BASELINE_MESSAGE,
        ],
        BASELINE_STEP_TIMEOUT,
    )?;
    git(
        dir,
        &["update-ref", BASELINE_REF, "HEAD"],
        BASELINE_STEP_TIMEOUT,
    )?;
    let head = git(dir, &["rev-parse", "HEAD"], BASELINE_STEP_TIMEOUT)?;
    gix::ObjectId::from_hex(head.trim().as_bytes())
        .map_err(|e| Error::git("rev-parse HEAD", dir, e))
}
