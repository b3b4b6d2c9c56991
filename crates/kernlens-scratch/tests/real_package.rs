//! A real installed package with compiled extensions: numpy, unpacked from its PyPI wheel at
//! test time. The scratch copy must still import (its `.so` files came along), the baseline must
//! hold source only, and an edit must round-trip through `git apply`. Skips with a message when
//! pip, python3 or the network is unavailable.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use kernlens_scratch::export::{ExportRequest, export};
use kernlens_scratch::location::LocationRequest;
use kernlens_scratch::prepare::{PrepareRequest, prepare};

/// Download and unpack the numpy wheel for this interpreter into `<tmp>/site-packages`.
fn numpy_site_packages(tmp: &Path) -> Option<PathBuf> {
    let wheels = tmp.join("wheels");
    let dl = Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "numpy",
            "-d",
        ])
        .arg(&wheels)
        .output()
        .ok()?;
    if !dl.status.success() {
        eprintln!(
            "skipping: cannot download the numpy wheel (offline?): {}",
            String::from_utf8_lossy(&dl.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
        return None;
    }
    let wheel = std::fs::read_dir(&wheels)
        .ok()?
        .flatten()
        .find(|e| e.file_name().to_string_lossy().ends_with(".whl"))?;
    let sp = tmp.join("site-packages");
    let ok = Command::new("python3")
        .args(["-m", "zipfile", "-e"])
        .arg(wheel.path())
        .arg(&sp)
        .status()
        .ok()?
        .success();
    ok.then_some(sp)
}

fn imports_numpy_from(dir: &Path) -> bool {
    Command::new("python3")
        .args(["-c", "import numpy, sys; assert numpy.__file__.startswith(sys.argv[1]), numpy.__file__; numpy.linalg.inv(numpy.eye(2))"])
        .arg(dir)
        .env("PYTHONPATH", dir)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .current_dir(dir)
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_real_numpy_install_keeps_its_import_surface_and_round_trips_a_patch() {
    if !git_available() {
        eprintln!("skipping: git CLI not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let Some(sp) = numpy_site_packages(tmp.path()) else {
        return;
    };
    if !imports_numpy_from(&sp) {
        eprintln!("skipping: the downloaded wheel does not import with this python3");
        return;
    }
    let linalg = sp.join("numpy/linalg");
    let source = ["_linalg.py", "linalg.py"]
        .iter()
        .map(|n| linalg.join(n))
        .find(|p| p.is_file())
        .expect("numpy/linalg has a python source");
    let mut req = PrepareRequest::new(
        &source,
        LocationRequest::new(tmp.path().join("runs/np/linalg")),
    );
    req.branch = Some(BRANCH.into());
    let ws = prepare(&req).unwrap();
    assert_eq!(ws.meta.layout_root, sp.canonicalize().unwrap());
    assert!(ws.meta.kernel_rel.starts_with("numpy/linalg/"));
    // The shadowing copy imports on its own: every compiled module came along.
    assert!(
        imports_numpy_from(&ws.worktree),
        "the scratch copy of numpy does not import"
    );
    // The baseline holds no shared objects.
    let tracked = git(&ws.worktree, &["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(tracked.lines().any(|l| l.ends_with(".py")));
    assert!(
        !tracked.lines().any(|l| l.ends_with(".so")),
        "a shared object entered the baseline"
    );
    assert_eq!(git(&ws.worktree, &["status", "--porcelain"]), "");

    let mut text = std::fs::read_to_string(&ws.kernel_path).unwrap();
    text.push_str("\n# scratch edit\n");
    std::fs::write(&ws.kernel_path, text).unwrap();
    let out = tmp.path().join("export");
    let report = export(&ws, &ExportRequest::new(None, Some(out.clone()))).unwrap();
    assert_eq!(report.changes.len(), 1);
    let pristine = tmp.path().join("pristine");
    assert!(
        Command::new("cp")
            .arg("-a")
            .arg(&sp)
            .arg(&pristine)
            .status()
            .unwrap()
            .success()
    );
    let patch = out.join("scratch.patch");
    git(&pristine, &["apply", "--check", patch.to_str().unwrap()]);
    git(&pristine, &["apply", patch.to_str().unwrap()]);
    assert_eq!(
        std::fs::read(pristine.join(&ws.meta.kernel_rel)).unwrap(),
        std::fs::read(&ws.kernel_path).unwrap()
    );
    assert!(
        imports_numpy_from(&ws.worktree),
        "the edited copy no longer imports"
    );
}
