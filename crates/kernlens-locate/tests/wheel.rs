//! A real installed package fetched at test time: the Liger-Kernel 0.5.10
//! wheel from PyPI (pure Python, real Triton kernels). Skipped, with a
//! message, when pip or the network is unavailable.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

use kernlens_locate::{DiscoveryEnv, LocateOptions, Locator, Method, SourceKind};

/// Downloads and unpacks the wheel into a site-packages-like directory.
fn liger_site() -> Option<(tempfile::TempDir, PathBuf)> {
    let tmp = tempfile::tempdir().unwrap();
    let dl = Command::new("python3")
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"])
        .args(["--timeout", "20", "--retries", "1", "-q"])
        .arg("liger-kernel==0.5.10")
        .arg("-d")
        .arg(tmp.path())
        .output();
    let ok = dl.as_ref().is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!(
            "skipped: cannot download the liger-kernel wheel (offline or no pip): {}",
            dl.map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
                .unwrap_or_else(|e| e.to_string())
        );
        return None;
    }
    let wheel = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))?;
    let site = tmp.path().join("venv/lib/python3.11/site-packages");
    std::fs::create_dir_all(&site).unwrap();
    // A wheel is a zip archive; the standard library's zipfile CLI unpacks it.
    let unzip = Command::new("python3")
        .args(["-m", "zipfile", "-e"])
        .arg(&wheel)
        .arg(&site)
        .status()
        .unwrap();
    assert!(unzip.success());
    Some((tmp, site.canonicalize().unwrap()))
}

#[test]
fn real_wheel_triton_kernels_are_found_at_their_definitions() {
    let Some((_tmp, site)) = liger_site() else {
        return;
    };
    let root = site.join("liger_kernel");
    let mut l = Locator::builder().root(&root).build().unwrap();
    let rs = l.locate_many(
        &[
            "_rms_norm_forward_kernel",
            "liger_cross_entropy_kernel",
            "hipModuleLaunchKernel->_swiglu_forward_kernel (Synthetic Op)",
        ],
        &LocateOptions::default(),
    );
    let expect = [
        ("ops/rms_norm.py", 42),
        ("ops/cross_entropy.py", 26),
        ("ops/swiglu.py", 15),
    ];
    for (r, (file, line)) in rs.iter().zip(expect) {
        let path = r.path.as_ref().unwrap();
        assert_eq!(
            path.strip_prefix(&root).unwrap(),
            std::path::Path::new(file),
            "{}",
            r.name
        );
        assert_eq!(r.line, Some(line), "{}", r.name);
        assert_eq!(r.method, Method::Definition, "{}", r.name);
        assert_eq!(r.kind, SourceKind::Triton, "{}", r.name);
        assert!(r.candidates[0].why[0].starts_with("definition:triton_jit@"));
        // site-packages applies to every candidate alike.
        assert!(
            r.candidates[0]
                .why
                .contains(&"path:site_packages(+2)".to_owned())
        );
    }
}

#[test]
fn packages_outside_the_framework_list_are_never_discovered() {
    let Some((_tmp, site)) = liger_site() else {
        return;
    };
    let venv = site.parent().unwrap().parent().unwrap().parent().unwrap();
    let env = DiscoveryEnv::empty().var("VIRTUAL_ENV", venv.display().to_string());
    // liger_kernel is not a framework package: discovery finds nothing.
    let err = Locator::builder().discovery(env).build().unwrap_err();
    assert!(err.to_string().contains("discovery found none"));
}
