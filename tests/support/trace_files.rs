//! Where the tests' real traces come from, defined once and included by `#[path]` into
//! each test crate that reads them:
//!
//! - the project's own captures, bundled under `fixtures/traces/` (see its README), so
//!   `cargo test --workspace` needs nothing beside the clone;
//! - third-party traces and their peers' outputs (TraceLens, HTA), which are not
//!   redistributed here: the directory `KERNLENS_PUBLIC_TRACES` names. Unset, a test
//!   needing them prints `skipped: <test>: KERNLENS_PUBLIC_TRACES is not set` and
//!   returns; set, a missing file fails the test. `.ci/run` sets it and fails on any skip.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The variable naming the directory of third-party traces.
pub const PUBLIC_TRACES_ENV: &str = "KERNLENS_PUBLIC_TRACES";

/// The repository root: the nearest ancestor of the including crate that holds
/// `fixtures/traces` (the root package itself, or two levels above a stage crate).
pub fn repo_root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        manifest
            .ancestors()
            .find(|dir| dir.join("fixtures/traces").is_dir())
            .unwrap_or_else(|| panic!("no fixtures/traces above {}", manifest.display()))
            .to_path_buf()
    })
}

/// A file of the project's own captures, `fixtures/traces/<name>`; fails when the
/// repository lacks it (a fixture is part of the checkout, never optional).
pub fn fixture(name: &str) -> PathBuf {
    let path = repo_root().join("fixtures/traces").join(name);
    assert!(
        path.exists(),
        "{} is missing from the repository's fixtures",
        path.display()
    );
    path
}

/// The third-party traces `KERNLENS_PUBLIC_TRACES` points at.
pub struct PublicTraces {
    dir: PathBuf,
}

impl PublicTraces {
    /// The directory when the variable is set (read once per test binary; a relative
    /// path is taken from the repository root). Unset or empty: prints
    /// `skipped: <test>: KERNLENS_PUBLIC_TRACES is not set` to stderr, past the test
    /// harness's capture so the reason shows, and gives `None`. Set to something that
    /// is not a directory: fails.
    pub fn get(test: &str) -> Option<&'static PublicTraces> {
        static DIR: OnceLock<Option<PublicTraces>> = OnceLock::new();
        let found = DIR.get_or_init(|| {
            let value = std::env::var_os(PUBLIC_TRACES_ENV).filter(|v| !v.is_empty())?;
            let dir = repo_root().join(value);
            assert!(
                dir.is_dir(),
                "{PUBLIC_TRACES_ENV}={} is not a directory",
                dir.display()
            );
            Some(PublicTraces { dir })
        });
        if found.is_none() {
            // Not eprintln!: libtest captures that for passing tests and the skip
            // would go unseen.
            let _ = writeln!(
                std::io::stderr().lock(),
                "skipped: {test}: {PUBLIC_TRACES_ENV} is not set"
            );
        }
        found.as_ref()
    }

    /// The directory itself.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `<dir>/<name>`; fails when it is missing, since the variable promised it.
    pub fn path(&self, name: &str) -> PathBuf {
        let path = self.dir.join(name);
        assert!(
            path.is_file(),
            "{PUBLIC_TRACES_ENV}: {} is missing",
            path.display()
        );
        path
    }
}
