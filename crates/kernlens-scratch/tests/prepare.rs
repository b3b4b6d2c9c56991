//! Prepare scenarios (W8-W11, Z2, Z4, Z5, Z8) on real trees in temp dirs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use kernlens_scratch::PrepareError;
use kernlens_scratch::prepare::prepare;

#[test]
fn w8_package_layout_keeps_import_surface_and_drops_bytecode_and_git() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = prepare(&w8_request(tmp.path(), "s", "k")).unwrap();
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
}
