//! Prepare scenarios (W8-W11, X2, X5, X7-less oracle checks, Z2, Z4, Z5, Z8) on real trees in
//! temp dirs, with the git CLI as an oracle where installed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::*;
use kernlens_scratch::Error;
use kernlens_scratch::location::LocationRequest;
use kernlens_scratch::prepare::{PrepareRequest, prepare};

fn no_partials_under(dir: &Path) -> bool {
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
                return false;
            }
            if e.file_type().unwrap().is_dir() && e.file_name() != "worktree" {
                stack.push(e.path());
            }
        }
    }
    true
}

#[test]
fn package_layout_keeps_import_surface_and_drops_bytecode_and_git() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = prepare(&site_packages_request(tmp.path(), "s", "k")).unwrap();
    let wt = &ws.worktree;
    assert_eq!(wt, &tmp.path().join("local/s/k/worktree"));
    for kept in [
        "aiter/__init__.py",
        "aiter/ops/__init__.py",
        "aiter/ops/k.py",
        "aiter/jit/core.py",
        "aiter/jit/extension.so",
        "aiter/dist/shard.py",
    ] {
        assert!(wt.join(kept).is_file(), "{kept} missing");
    }
    for dropped in [
        "aiter/__pycache__",
        "aiter/stale.pyc",
        "aiter/legacy.pyo",
        "aiter/.git",
        "torch",
    ] {
        assert!(!wt.join(dropped).exists(), "{dropped} copied");
    }
    assert_eq!(ws.kernel_path, wt.join("aiter/ops/k.py"));
    assert!(ws.meta.relocated);
    assert_eq!(ws.meta.kernel_rel, "aiter/ops/k.py");
    assert!(no_partials_under(tmp.path()));
}

#[test]
fn exclude_written_in_policy_order_and_baseline_holds_source_only() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = prepare(&site_packages_request(tmp.path(), "s", "k")).unwrap();
    let exclude = std::fs::read_to_string(ws.worktree.join(".git/info/exclude")).unwrap();
    let lines: Vec<&str> = exclude
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    assert_eq!(
        lines,
        [
            "__pycache__/",
            "flydsl_cache/",
            "jit/",
            "dist/",
            "*.so",
            "*.pyc",
            "*.pyo"
        ]
    );
    if !git_available() {
        eprintln!("git CLI not installed: skipping the tree listing oracle");
        return;
    }
    let listing = git(
        &ws.worktree,
        &["ls-tree", "-r", "--name-only", "refs/kernlens/baseline"],
    );
    let files: Vec<&str> = listing.lines().collect();
    assert_eq!(
        files,
        [
            "aiter/__init__.py",
            "aiter/ops/__init__.py",
            "aiter/ops/k.py"
        ]
    );
}

#[test]
fn git_cli_agrees_with_the_gix_baseline() {
    if !git_available() {
        eprintln!("git CLI not installed: skipping X2");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let ws = prepare(&site_packages_request(tmp.path(), "s", "k")).unwrap();
    let wt = &ws.worktree;
    git(wt, &["fsck", "--strict", "--no-dangling"]);
    let tree = git(wt, &["rev-parse", "HEAD^{tree}"]);
    let base_tree = git(
        wt,
        &["rev-parse", &format!("{}^{{tree}}", ws.meta.base_commit)],
    );
    assert_eq!(tree, base_tree);
    assert_eq!(
        git(wt, &["status", "--porcelain"]),
        "",
        "index disagrees with tree or stat data"
    );
    assert_eq!(
        git(wt, &["symbolic-ref", "HEAD"]).trim(),
        format!("refs/heads/{BRANCH}")
    );
    assert_eq!(
        git(wt, &["log", "--format=%an%n%s"]),
        "kernlens-scratch\nkernlens: scratch baseline\n"
    );
    assert_eq!(
        git(wt, &["rev-parse", "refs/kernlens/baseline"]),
        git(wt, &["rev-parse", "HEAD"])
    );
    assert_eq!(git(wt, &["rev-parse", "HEAD"]).trim(), ws.meta.base_commit);
    let refs = git(wt, &["for-each-ref", "--format=%(refname)"]);
    assert!(
        !refs.contains("refs/heads/main") && !refs.contains("refs/heads/master"),
        "{refs}"
    );
}

#[test]
fn baseline_tree_id_equals_what_git_add_all_computes_on_a_copy() {
    if !git_available() {
        eprintln!("git CLI not installed: skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let ws = prepare(&site_packages_request(tmp.path(), "s", "k")).unwrap();
    // The oracle: a fresh git repo over a copy of the worktree, with the same exclude file.
    let copy = tmp.path().join("oracle");
    std::fs::create_dir(&copy).unwrap();
    let status = std::process::Command::new("cp")
        .args([
            "-a",
            &format!(
                "{}/.",
                ws.worktree.join("aiter").parent().unwrap().display()
            ),
        ])
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::remove_dir_all(copy.join(".git")).unwrap();
    git(&copy, &["init", "-q"]);
    std::fs::copy(
        ws.worktree.join(".git/info/exclude"),
        copy.join(".git/info/exclude"),
    )
    .unwrap();
    git(&copy, &["add", "-A"]);
    let theirs = git(&copy, &["write-tree"]);
    let ours = git(&ws.worktree, &["rev-parse", "HEAD^{tree}"]);
    assert_eq!(ours, theirs);
}

#[test]
fn hostile_user_config_is_ignored() {
    if !git_available() {
        eprintln!("git CLI not installed: skipping X5 oracle");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    write(
        &home.join("hooks/pre-commit"),
        "#!/bin/sh\ntouch \"$HOME/hook-ran\"\nexit 1\n",
    );
    write(
        &home.join("hooks/post-commit"),
        "#!/bin/sh\ntouch \"$HOME/hook-ran\"\nexit 1\n",
    );
    write(
        &home.join(".gitconfig"),
        format!(
            "[core]\n\thooksPath = {}\n[commit]\n\tgpgsign = true\n[init]\n\tdefaultBranch = master\n",
            home.join("hooks").display()
        ),
    );
    let mut req = site_packages_request(tmp.path(), "s", "k");
    req.env = kernlens_scratch::location::ScratchEnv::new(
        Some(tmp.path().join("local").display().to_string()),
        None,
        Some(home.clone()),
    );
    let ws = prepare(&req).unwrap();
    assert!(!home.join("hook-ran").exists());
    let raw = git(&ws.worktree, &["cat-file", "commit", "HEAD"]);
    assert!(!raw.contains("gpgsig"), "{raw}");
    let refs = git(&ws.worktree, &["for-each-ref", "--format=%(refname)"]);
    assert!(!refs.contains("master"), "{refs}");
}

#[test]
fn second_prepare_of_an_attempt_is_a_collision_and_touches_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let req = site_packages_request(tmp.path(), "s", "k");
    let ws = prepare(&req).unwrap();
    std::fs::write(ws.kernel_path.clone(), "edited by the run\n").unwrap();
    let before = snapshot(&tmp.path().join("local"));
    let err = prepare(&req).unwrap_err();
    assert!(err.is_refusal());
    match err {
        Error::Collision { path } => assert_eq!(path, ws.worktree),
        other => panic!("expected a collision, got {other}"),
    }
    assert_eq!(snapshot(&tmp.path().join("local")), before);
}

#[test]
fn a_dangling_symlink_at_the_worktree_path_is_a_collision() {
    let tmp = tempfile::tempdir().unwrap();
    let req = site_packages_request(tmp.path(), "s", "k");
    let wt = tmp.path().join("local/s/k/worktree");
    std::fs::create_dir_all(wt.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(tmp.path().join("nowhere"), &wt).unwrap();
    assert!(matches!(prepare(&req), Err(Error::Collision { .. })));
    assert!(
        std::fs::symlink_metadata(&wt)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn protected_branches_leave_no_trace() {
    for branch in ["main", "master", "refs/heads/main", ""] {
        let tmp = tempfile::tempdir().unwrap();
        let mut req = site_packages_request(tmp.path(), "s", "k");
        req.branch = Some(branch.into());
        let err = prepare(&req).unwrap_err();
        assert!(
            matches!(err, Error::ProtectedBranch { .. }),
            "{branch:?}: {err}"
        );
        assert!(
            !tmp.path().join("local").exists(),
            "{branch:?} created the local root"
        );
        assert!(
            !tmp.path().join("sessions").exists(),
            "{branch:?} created output"
        );
    }
}

#[test]
fn local_output_keeps_the_worktree_beside_it_without_marker() {
    let tmp = tempfile::tempdir().unwrap();
    let mut req = site_packages_request(tmp.path(), "s", "k");
    req.mounts = kernlens_scratch::mounts::MountTable::parse("rootfs / ext4 rw 0 0\n");
    let ws = prepare(&req).unwrap();
    assert_eq!(
        ws.worktree,
        output_dir(tmp.path(), "s", "k").join("worktree")
    );
    assert!(!ws.meta.relocated);
    assert!(!tmp.path().join("local").exists());
}

#[test]
fn failure_after_copy_leaves_no_worktree_and_no_partial() {
    let tmp = tempfile::tempdir().unwrap();
    let mut req = site_packages_request(tmp.path(), "s", "k");
    req.fail_after_copy = true;
    assert!(prepare(&req).is_err());
    let attempt = tmp.path().join("local/s/k");
    assert!(!attempt.join("worktree").exists());
    assert!(no_partials_under(tmp.path()));
    req.fail_after_copy = false;
    prepare(&req).unwrap();
}

#[test]
fn a_dead_owners_partial_is_removed_by_the_next_prepare() {
    let tmp = tempfile::tempdir().unwrap();
    let req = site_packages_request(tmp.path(), "s", "k");
    let stale = tmp
        .path()
        .join("local/s/k/.worktree.partial-4194303-77-00ff00ff00ff00ff");
    write(&stale.join("aiter/ops/k.py"), "half copied");
    let alive = tmp.path().join(format!(
        "local/s/k/.worktree.partial-{}-0-0123",
        std::process::id()
    ));
    std::fs::create_dir_all(&alive).unwrap();
    prepare(&req).unwrap();
    assert!(!stale.exists());
    assert!(alive.exists(), "a live owner's partial must stay");
}

#[test]
fn symlinks_are_copied_as_links_and_never_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let req = site_packages_request(tmp.path(), "s", "k");
    let outside = tmp.path().join("outside");
    write(&outside.join("secret"), "TOP-SECRET-BYTES-4711");
    let ops = tmp.path().join("site-packages/aiter/ops");
    std::os::unix::fs::symlink("k.py", ops.join("rel_link.py")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret"), ops.join("abs_link")).unwrap();
    std::os::unix::fs::symlink("does/not/exist", ops.join("dangling")).unwrap();
    std::os::unix::fs::symlink(&outside, ops.join("dir_link")).unwrap();
    let ws = prepare(&req).unwrap();
    let wops = ws.worktree.join("aiter/ops");
    for name in ["rel_link.py", "abs_link", "dangling", "dir_link"] {
        let meta = std::fs::symlink_metadata(wops.join(name)).unwrap();
        assert!(meta.file_type().is_symlink(), "{name} is not a link");
        assert_eq!(
            std::fs::read_link(wops.join(name)).unwrap(),
            std::fs::read_link(ops.join(name)).unwrap()
        );
    }
    // The secret's bytes appear nowhere: not in the worktree files, not in any object.
    let needle = b"TOP-SECRET-BYTES-4711";
    let mut stack = vec![ws.worktree.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                stack.push(e.path());
            } else if ft.is_file() {
                let bytes = std::fs::read(e.path()).unwrap();
                assert!(
                    !bytes.windows(needle.len()).any(|w| w == needle),
                    "{}",
                    e.path().display()
                );
            }
        }
    }
    if git_available() {
        // Every object in the store, decompressed, by git itself.
        let all = std::process::Command::new("git")
            .args(["cat-file", "--batch-all-objects", "--batch"])
            .current_dir(&ws.worktree)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(all.status.success());
        assert!(all.stdout.len() > 100);
        assert!(!all.stdout.windows(needle.len()).any(|w| w == needle));
    }
}

#[test]
fn two_concurrent_prepares_of_one_attempt_one_wins_one_collides() {
    let tmp = tempfile::tempdir().unwrap();
    let req = site_packages_request(tmp.path(), "s", "k");
    let (a, b) = std::thread::scope(|s| {
        let ha = s.spawn(|| prepare(&req));
        let hb = s.spawn(|| prepare(&req));
        (ha.join().unwrap(), hb.join().unwrap())
    });
    let ok = [a.is_ok(), b.is_ok()].iter().filter(|x| **x).count();
    assert_eq!(ok, 1, "exactly one must win: {a:?} / {b:?}");
    let err = a.err().or(b.err()).unwrap();
    assert!(matches!(err, Error::Collision { .. }), "{err}");
    assert!(no_partials_under(tmp.path()));
}

#[test]
fn single_module_install_copies_only_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let sp = site_packages_fixture(tmp.path());
    write(&sp.join("six.py"), "PY3 = True\n");
    let mut req = PrepareRequest::new(
        sp.join("six.py"),
        LocationRequest::new(output_dir(tmp.path(), "s", "six")),
    );
    req.branch = Some(BRANCH.into());
    let ws = prepare(&req).unwrap();
    let names: Vec<String> = std::fs::read_dir(&ws.worktree)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".git")
        .collect();
    assert_eq!(names, ["six.py"]);
    assert_eq!(ws.kernel_path, ws.worktree.join("six.py"));
}

#[test]
fn a_source_directly_in_home_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    write(&home.join("kernel.py"), "x = 1\n");
    let mut req = PrepareRequest::new(
        home.join("kernel.py"),
        LocationRequest::new(output_dir(tmp.path(), "s", "k")),
    );
    req.env = env(tmp.path());
    req.branch = Some(BRANCH.into());
    let err = prepare(&req).unwrap_err();
    assert!(matches!(err, Error::RefuseCopyRoot { .. }), "{err}");
    assert!(!tmp.path().join("sessions").exists());
}

#[test]
fn a_copy_root_containing_the_worktree_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("proj");
    write(&dir.join("kernel.py"), "x = 1\n");
    let mut req = PrepareRequest::new(
        dir.join("kernel.py"),
        LocationRequest::new(dir.join("runs/a")),
    );
    req.branch = Some(BRANCH.into());
    let err = prepare(&req).unwrap_err();
    assert!(matches!(err, Error::RefuseCopyRoot { .. }), "{err}");
}

#[test]
fn a_missing_source_is_source_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let req = PrepareRequest::new(
        tmp.path().join("nope.py"),
        LocationRequest::new(tmp.path().join("o/a")),
    );
    assert!(matches!(prepare(&req), Err(Error::SourceMissing { .. })));
}

#[test]
fn copy_too_large_is_refused_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let mut req = site_packages_request(tmp.path(), "s", "k");
    req.policy.max_copy_bytes = 10;
    assert!(matches!(prepare(&req), Err(Error::CopyTooLarge { .. })));
    assert!(no_partials_under(tmp.path()));
    assert!(!tmp.path().join("local/s/k/worktree").exists());
}

#[test]
fn a_repaired_wheels_libs_directory_travels_with_the_top_package() {
    let tmp = tempfile::tempdir().unwrap();
    let sp = site_packages_fixture(tmp.path());
    write(&sp.join("aiter.libs/libvendored-1234.so"), b"\x7fELF");
    write(&sp.join("torch.libs/libtorch_vendored.so"), b"\x7fELF");
    let ws = prepare(&site_packages_request(tmp.path(), "s", "k")).unwrap();
    assert!(ws.worktree.join("aiter.libs/libvendored-1234.so").is_file());
    assert!(!ws.worktree.join("torch.libs").exists());
}

#[test]
fn the_baseline_walk_never_enters_excluded_directories_nor_reads_excluded_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let sp = site_packages_fixture(tmp.path());
    for i in 0..20 {
        write(&sp.join(format!("aiter/jit/build/obj{i}.o")), b"\x00obj");
        write(
            &sp.join(format!("aiter/sub{i}/__pycache__/m.cpython-311.pyc")),
            b"\x00",
        );
        write(&sp.join(format!("aiter/sub{i}/__init__.py")), "");
        write(&sp.join(format!("aiter/sub{i}/ext{i}.so")), b"\x7fELF");
    }
    let ws = prepare(&site_packages_request(tmp.path(), "s", "k")).unwrap();
    let stats = ws.baseline_stats.clone().unwrap();
    assert_eq!(stats.excluded_bytes_read, 0);
    assert_eq!(stats.walk.excluded_dirs_entered, 0);
    // jit/ and dist/ are pruned at the top; the copy already dropped __pycache__.
    assert_eq!(stats.walk.excluded_dirs_pruned, 2);
    assert_eq!(stats.walk.excluded_files_skipped, 20);
    assert_eq!(stats.files_hashed, 3 + 20);
}

#[test]
fn native_and_cli_backends_give_the_same_baseline_tree() {
    if !git_available() {
        eprintln!("git CLI not installed: skipping X7");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let native = prepare(&site_packages_request(tmp.path(), "native", "k")).unwrap();
    let mut req = site_packages_request(tmp.path(), "cli", "k");
    req.policy.git_backend = kernlens_scratch::policy::GitBackend::Cli;
    let cli = prepare(&req).unwrap();
    let tree = |ws: &kernlens_scratch::workspace::Workspace| {
        git(&ws.worktree, &["rev-parse", "HEAD^{tree}"])
    };
    assert_eq!(tree(&native), tree(&cli));
    assert_eq!(
        git(&cli.worktree, &["symbolic-ref", "HEAD"]).trim(),
        format!("refs/heads/{BRANCH}")
    );
    assert_eq!(
        git(&cli.worktree, &["rev-parse", "refs/kernlens/baseline"]).trim(),
        cli.meta.base_commit
    );
    assert_eq!(
        git(&cli.worktree, &["log", "--format=%an%n%s"]),
        "kernlens-scratch\nkernlens: scratch baseline\n"
    );
    assert_eq!(git(&cli.worktree, &["status", "--porcelain"]), "");
}

#[test]
fn directory_mode_copies_a_plain_directory_flat() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("kernels");
    write(&dir.join("gemm.py"), "g = 1\n");
    write(&dir.join("helpers/util.py"), "u = 1\n");
    let mut req = PrepareRequest::new(
        dir.join("gemm.py"),
        LocationRequest::new(output_dir(tmp.path(), "s", "g")),
    );
    req.branch = Some(BRANCH.into());
    let ws = prepare(&req).unwrap();
    assert_eq!(ws.meta.kernel_rel, "gemm.py");
    assert!(ws.worktree.join("helpers/util.py").is_file());
    assert_eq!(ws.meta.layout_root, dir.canonicalize().unwrap());
}

#[test]
fn repo_mode_copies_the_hint_whole_and_an_outside_source_falls_back_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    write(&repo.join("src/pkg/__init__.py"), "");
    write(&repo.join("src/pkg/k.py"), "k = 1\n");
    write(&repo.join("setup.py"), "setup()\n");
    let mut req = PrepareRequest::new(
        repo.join("src/pkg/k.py"),
        LocationRequest::new(output_dir(tmp.path(), "s", "r")),
    );
    req.branch = Some(BRANCH.into());
    req.repo_hint = Some(repo.clone());
    let ws = prepare(&req).unwrap();
    assert_eq!(ws.meta.kernel_rel, "src/pkg/k.py");
    assert!(ws.worktree.join("setup.py").is_file());
    assert!(ws.warnings.is_empty(), "{:?}", ws.warnings);

    let elsewhere = tmp.path().join("elsewhere");
    write(&elsewhere.join("x.py"), "x = 1\n");
    let mut req = PrepareRequest::new(
        elsewhere.join("x.py"),
        LocationRequest::new(output_dir(tmp.path(), "s", "x")),
    );
    req.branch = Some(BRANCH.into());
    req.repo_hint = Some(repo);
    let ws = prepare(&req).unwrap();
    assert_eq!(ws.meta.kernel_rel, "x.py");
    assert!(
        ws.warnings
            .iter()
            .any(|w| w.starts_with("source_outside_repo_hint")),
        "{:?}",
        ws.warnings
    );
}

#[test]
fn a_whole_site_packages_hint_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let sp = site_packages_fixture(tmp.path());
    let mut req = site_packages_request(tmp.path(), "s", "k");
    req.repo_hint = Some(sp);
    let err = prepare(&req).unwrap_err();
    assert!(matches!(err, Error::RefuseCopyRoot { .. }), "{err}");
    assert!(!tmp.path().join("local").exists());
}

#[test]
fn sockets_and_fifos_are_skipped_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let sp = site_packages_fixture(tmp.path());
    let fifo = sp.join("aiter/ops/pipe");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let _listener = std::os::unix::net::UnixListener::bind(sp.join("aiter/ops/sock")).unwrap();
    let ws = prepare(&site_packages_request(tmp.path(), "s", "k")).unwrap();
    assert!(!ws.worktree.join("aiter/ops/pipe").exists());
    assert!(!ws.worktree.join("aiter/ops/sock").exists());
    assert_eq!(
        ws.warnings
            .iter()
            .filter(|w| w.starts_with("skipped_special_file"))
            .count(),
        2,
        "{:?}",
        ws.warnings
    );
}

#[test]
fn max_copy_bytes_counts_allocated_bytes_so_a_sparse_file_fits_and_a_dense_one_does_not() {
    use std::os::unix::fs::MetadataExt;
    let tmp = tempfile::tempdir().unwrap();
    let mut req = site_packages_request(tmp.path(), "s", "k");
    let big = tmp.path().join("site-packages/aiter/jit/sparse.bin");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(4 << 30).unwrap();
    drop(f);
    // 4 GiB apparent, nothing allocated: well within a 1 MiB budget.
    req.policy.max_copy_bytes = 1 << 20;
    let ws = prepare(&req).unwrap();
    let copy = std::fs::metadata(ws.worktree.join("aiter/jit/sparse.bin")).unwrap();
    assert_eq!(copy.len(), 4 << 30);
    assert!(
        copy.blocks() * 512 < 1 << 20,
        "{} allocated",
        copy.blocks() * 512
    );

    write(
        &tmp.path().join("site-packages/aiter/jit/dense.bin"),
        vec![7u8; 2 << 20],
    );
    let req = site_packages_request(tmp.path(), "s", "k2");
    let mut req = req;
    req.policy.max_copy_bytes = 1 << 20;
    assert!(matches!(prepare(&req), Err(Error::CopyTooLarge { .. })));
    assert!(no_partials_under(tmp.path()));
}

#[test]
fn a_copy_root_that_holds_another_users_home_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let users = tmp.path().join("users");
    write(&users.join("bob/private.txt"), "bob's");
    write(&users.join("kernel.py"), "x = 1\n");
    let mut req = PrepareRequest::new(
        users.join("kernel.py"),
        LocationRequest::new(output_dir(tmp.path(), "s", "k")),
    );
    // This user's HOME is elsewhere; the password database names bob's home under the root.
    req.env = env(tmp.path()).with_home_dirs(vec![users.join("bob")]);
    req.branch = Some(BRANCH.into());
    let err = prepare(&req).unwrap_err();
    match &err {
        Error::RefuseCopyRoot { why, .. } => assert!(why.contains("bob"), "{why}"),
        other => panic!("expected RefuseCopyRoot, got {other}"),
    }
    assert!(!tmp.path().join("sessions").exists());
    assert!(!tmp.path().join("local").exists());
}

#[test]
fn a_copy_root_that_is_an_ancestor_of_home_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    // env() puts HOME at <tmp>/home; a loose module at <tmp>/kernel.py would copy all of <tmp>.
    write(&tmp.path().join("home/notes.txt"), "mine");
    write(&tmp.path().join("kernel.py"), "x = 1\n");
    let mut req = PrepareRequest::new(
        tmp.path().join("kernel.py"),
        LocationRequest::new(tmp.path().join("elsewhere-out/s/k")),
    );
    req.env = env(tmp.path());
    req.branch = Some(BRANCH.into());
    let err = prepare(&req).unwrap_err();
    assert!(
        matches!(&err, Error::RefuseCopyRoot { why, .. } if why.contains("home")),
        "{err}"
    );
}
