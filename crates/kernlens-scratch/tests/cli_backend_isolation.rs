//! X5 for the `Cli` backend: the `git` children must ignore a hostile `$HOME/.gitconfig`. This
//! binary holds a single test because it points this process's HOME at the hostile config.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use kernlens_scratch::policy::GitBackend;
use kernlens_scratch::prepare::prepare;

#[test]
fn cli_backend_children_ignore_hostile_user_config_and_hooks() {
    if !git_available() {
        eprintln!("git CLI not installed: skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let marker = tmp.path().join("hook-ran");
    for hook in ["pre-commit", "commit-msg", "post-commit"] {
        let path = home.join("hooks").join(hook);
        write(
            &path,
            format!("#!/bin/sh\ntouch {}\nexit 1\n", marker.display()),
        );
        let mut perms = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&path, perms).unwrap();
    }
    write(
        &home.join(".gitconfig"),
        format!(
            "[core]\n\thooksPath = {}\n[commit]\n\tgpgsign = true\n[init]\n\tdefaultBranch = master\n",
            home.join("hooks").display()
        ),
    );
    // SAFETY: this test binary runs this one test; no other thread reads the environment.
    unsafe {
        std::env::set_var("HOME", &home);
        std::env::remove_var("XDG_CONFIG_HOME");
    }
    let mut req = site_packages_request(tmp.path(), "s", "k");
    req.policy.git_backend = GitBackend::Cli;
    let ws = prepare(&req).unwrap();
    assert!(!marker.exists(), "a hook ran");
    let raw = git(&ws.worktree, &["cat-file", "commit", "HEAD"]);
    assert!(!raw.contains("gpgsig"));
    let refs = git(&ws.worktree, &["for-each-ref", "--format=%(refname)"]);
    assert!(!refs.contains("master"), "{refs}");
}
