//! Search roots (locate.md "Acceptance scenarios: Roots", N1–N11) on real temp directories.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use kernlens_locate::{DiscoveryEnv, LocateError, LocateOptions, Locator, RootOrigin};

fn tmp() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().canonicalize().unwrap();
    (t, p)
}

fn paths(l: &Locator) -> Vec<PathBuf> {
    l.roots().iter().map(|r| r.path.clone()).collect()
}

fn mkdir(p: &Path) -> PathBuf {
    std::fs::create_dir_all(p).unwrap();
    p.to_path_buf()
}

#[test]
fn missing_root_is_dropped_with_a_warning_naming_it() {
    let (_t, d) = tmp();
    let present = mkdir(&d.join("present"));
    let l = Locator::builder()
        .root(format!("{}/", present.display()))
        .root(d.join("gone/aiter"))
        .build()
        .unwrap();
    assert_eq!(paths(&l), [present]);
    assert_eq!(l.warnings().len(), 1);
    assert!(l.warnings()[0].message.contains("gone"));
}

#[test]
fn trailing_slashes_are_stripped() {
    let (_t, d) = tmp();
    let present = mkdir(&d.join("present"));
    let l = Locator::builder()
        .root(format!("{}///", present.display()))
        .build()
        .unwrap();
    assert_eq!(paths(&l), [present]);
}

#[test]
fn duplicates_keep_their_first_position() {
    let (_t, d) = tmp();
    let first = mkdir(&d.join("first"));
    let second = mkdir(&d.join("second"));
    let l = Locator::builder()
        .root(format!("{}/", first.display()))
        .root(format!("{}/", second.display()))
        .root(&first)
        .root(format!("{}//", first.display()))
        .build()
        .unwrap();
    assert_eq!(paths(&l), [first, second]);
}

#[test]
fn env_value_drops_empty_and_relative_entries() {
    let (_t, d) = tmp();
    let a = mkdir(&d.join("a"));
    let c = mkdir(&d.join("c"));
    let value = format!("{}:rel/b::{}", a.display(), c.display());
    let l = Locator::builder().env_roots(value).build().unwrap();
    assert_eq!(paths(&l), [a, c]);
    assert!(l.roots().iter().all(|r| r.origin == RootOrigin::Env));
    assert_eq!(l.warnings().len(), 1);
    assert!(l.warnings()[0].message.contains("rel/b"));
}

fn site_copy() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let (t, d) = tmp();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/locate/site/venv");
    let venv = d.join("site/venv");
    let sp = venv.join("lib/python3.11/site-packages");
    for pkg in ["aiter", "vllm", "torch"] {
        mkdir(&sp.join(pkg));
        std::fs::copy(
            src.join("lib/python3.11/site-packages")
                .join(pkg)
                .join("__init__.py"),
            sp.join(pkg).join("__init__.py"),
        )
        .unwrap();
    }
    std::fs::copy(
        src.join("lib/python3.11/site-packages/six.py"),
        sp.join("six.py"),
    )
    .unwrap();
    (t, venv, sp)
}

#[test]
fn virtual_env_discovers_framework_packages_only() {
    let (_t, venv, sp) = site_copy();
    let env = DiscoveryEnv::empty().var("VIRTUAL_ENV", venv.display().to_string());
    let l = Locator::builder().discovery(env).build().unwrap();
    assert_eq!(paths(&l), [sp.join("aiter"), sp.join("vllm")]);
    assert_eq!(
        l.roots()[0].origin,
        RootOrigin::Discovered("aiter".to_owned())
    );
    assert!(!paths(&l).contains(&sp));
}

#[test]
fn pth_files_add_editable_installs_and_import_lines_never_run() {
    let (_t, venv, sp) = site_copy();
    let d = venv.parent().unwrap().parent().unwrap().to_path_buf();
    let sglang = mkdir(&d.join("src/sglang/python/sglang"));
    let ran = d.join("ran");
    std::fs::write(
        sp.join("__editable__.sglang.pth"),
        format!(
            "{}\nimport os; open(\"{}\",\"w\")\n",
            d.join("src/sglang/python").display(),
            ran.display()
        ),
    )
    .unwrap();
    let env = DiscoveryEnv::empty().var("VIRTUAL_ENV", venv.display().to_string());
    let l = Locator::builder().discovery(env).build().unwrap();
    assert!(paths(&l).contains(&sglang));
    assert!(!ran.exists());
}

#[cfg(unix)]
#[test]
fn python_on_path_is_never_run() {
    use std::os::unix::fs::PermissionsExt;
    let (_t, d) = tmp();
    let bin = mkdir(&d.join("bin"));
    let marker = d.join("marker");
    let py = bin.join("python3");
    std::fs::write(&py, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    mkdir(&d.join("lib/python3.12/site-packages/vllm"));
    let mut env = DiscoveryEnv::empty();
    env.path_dirs = vec![bin];
    let l = Locator::builder().discovery(env).build().unwrap();
    // The shim's sibling lib/ is examined as data; the script never runs.
    assert_eq!(paths(&l), [d.join("lib/python3.12/site-packages/vllm")]);
    assert!(!marker.exists());
}

#[test]
fn no_root_at_all_is_a_typed_error_naming_all_three_sources() {
    let err = Locator::builder()
        .discovery(DiscoveryEnv::empty())
        .build()
        .unwrap_err();
    assert!(matches!(err, LocateError::NoSearchRoots { .. }));
    let msg = err.to_string();
    assert!(msg.contains("no --root given"), "{msg}");
    assert!(msg.contains("KERNLENS_SOURCE_ROOTS unset"), "{msg}");
    assert!(msg.contains("discovery found none of aiter"), "{msg}");
}

#[test]
fn directory_created_later_is_invisible_until_refresh() {
    let (_t, d) = tmp();
    let opts = LocateOptions::default();
    mkdir(&d.join("a"));
    std::fs::write(d.join("a/old.py"), "x = 1\n").unwrap();
    let value = format!("{}:{}", d.join("a").display(), d.join("b").display());
    let mut l = Locator::builder().env_roots(value).build().unwrap();
    assert_eq!(l.roots().len(), 1);
    mkdir(&d.join("b"));
    std::fs::write(d.join("b/k.py"), "def later_kernel(x):\n    pass\n").unwrap();
    assert!(!l.locate("later_kernel", &opts).found);
    l.refresh().unwrap();
    assert_eq!(l.roots().len(), 2);
    assert!(l.locate("later_kernel", &opts).found);
}

#[test]
fn order_is_explicit_env_discovered_and_duplicates_keep_their_first_origin() {
    let (_t, venv, sp) = site_copy();
    let (_t2, d) = tmp();
    let e = mkdir(&d.join("explicit"));
    let value = format!(
        "{}:{}",
        sp.join("aiter").display(),
        d.join("explicit").display()
    );
    let env = DiscoveryEnv::empty().var("VIRTUAL_ENV", venv.display().to_string());
    let l = Locator::builder()
        .root(&e)
        .env_roots(value)
        .discovery(env)
        .build()
        .unwrap();
    let origins: Vec<RootOrigin> = l.roots().iter().map(|r| r.origin.clone()).collect();
    assert_eq!(paths(&l), [e, sp.join("aiter"), sp.join("vllm")]);
    assert_eq!(
        origins,
        [
            RootOrigin::Explicit,
            RootOrigin::Env,
            RootOrigin::Discovered("vllm".to_owned())
        ]
    );
}

#[test]
fn nested_root_files_are_scanned_once() {
    let (_t, d) = tmp();
    mkdir(&d.join("outer/inner"));
    std::fs::write(d.join("outer/a.py"), "nested_kernel_name = 1\n").unwrap();
    std::fs::write(d.join("outer/inner/b.py"), "nested_kernel_name = 2\n").unwrap();
    for order in [["outer", "outer/inner"], ["outer/inner", "outer"]] {
        let mut l = Locator::builder()
            .root(d.join(order[0]))
            .root(d.join(order[1]))
            .build()
            .unwrap();
        assert_eq!(l.roots().len(), 2);
        let r = l.locate("nested_kernel_name", &LocateOptions::default());
        assert_eq!(l.stats().files_scanned, 2, "{order:?}");
        assert_eq!(r.candidates.len(), 2, "{order:?}");
        // A file belongs to the first root, in order, that contains it.
        let b = r
            .candidates
            .iter()
            .find(|c| c.path.ends_with("b.py"))
            .unwrap();
        assert_eq!(b.score.root, 0, "{order:?}");
    }
}

#[test]
fn skipped_dirs_hidden_files_binaries_and_size_cap() {
    let (_t, d) = tmp();
    for dir in [
        "build",
        "__pycache__",
        "x.egg-info",
        ".hidden",
        "jit",
        "excluded",
    ] {
        mkdir(&d.join(dir));
        std::fs::write(d.join(dir).join("k.py"), "walk_probe_kernel = 1\n").unwrap();
    }
    std::fs::write(d.join(".gitignore"), "jit/\n.hidden/\n").unwrap();
    std::fs::write(d.join("bin.cu"), b"walk_probe_kernel\0binary").unwrap();
    std::fs::write(
        d.join("big.py"),
        format!("walk_probe_kernel = 1\n{}", "#".repeat(4096)),
    )
    .unwrap();
    let mut l = Locator::builder()
        .root(&d)
        .exclude_paths([d.join("excluded")])
        .max_file_bytes(1024)
        .build()
        .unwrap();
    let r = l.locate("walk_probe_kernel", &LocateOptions::default());
    let mut found: Vec<String> = r
        .candidates
        .iter()
        .map(|c| c.path.strip_prefix(&d).unwrap().display().to_string())
        .collect();
    found.sort();
    // Ignore files are not applied; hidden and jit/ directories are searched.
    assert_eq!(found, [".hidden/k.py", "jit/k.py"]);
    assert_eq!(l.stats().skipped_binary, 1);
    assert_eq!(l.stats().skipped_size, 1);
}

#[cfg(unix)]
#[test]
fn file_symlinks_are_read_under_their_link_path_and_directory_symlinks_not_followed() {
    let (_t, d) = tmp();
    let outside = mkdir(&d.join("outside"));
    std::fs::write(
        outside.join("real.py"),
        "def linked_kernel_name(x):\n    pass\n",
    )
    .unwrap();
    let root = mkdir(&d.join("root"));
    std::os::unix::fs::symlink(outside.join("real.py"), root.join("link.py")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("dirlink")).unwrap();
    let mut l = Locator::builder().root(&root).build().unwrap();
    let r = l.locate("linked_kernel_name", &LocateOptions::default());
    assert_eq!(r.path, Some(root.join("link.py")));
    assert_eq!(r.candidates.len(), 1, "dirlink/real.py is not reached");
}
