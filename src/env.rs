//! The process environment, read once at the edge (the CLI's `main`, a Python call) and handed
//! to the stage crates as values (style guide: stage crates read no environment). Everything a
//! command takes from the environment is here: the search roots, the gate thresholds, the cache
//! directories that mark generated sources, the scratch root, package discovery, and whether
//! standard error is a terminal (progress).

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;

use kernlens_gate::Thresholds;
use kernlens_locate::{DiscoveryEnv, KindContext, Locator, LocatorBuilder};
use kernlens_scratch::location::{ScratchEnv, passwd_homes};

/// The variable listing extra source roots (locate.md, search roots).
pub const SOURCE_ROOTS_ENV: &str = "KERNLENS_SOURCE_ROOTS";

/// What the environment said when the process started.
#[derive(Debug, Clone)]
pub struct Env {
    source_roots: Option<OsString>,
    idle_threshold: Option<String>,
    min_compute: Option<String>,
    inductor_cache: Option<PathBuf>,
    triton_cache: Option<PathBuf>,
    scratch_root: Option<String>,
    xdg_cache_home: Option<String>,
    home: Option<PathBuf>,
    discovery: DiscoveryEnv,
    stderr_terminal: bool,
}

fn nonempty_path(key: &str) -> Option<PathBuf> {
    std::env::var_os(key)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

impl Env {
    /// Reads every variable the CLI consults, once.
    pub fn from_process() -> Env {
        Env {
            source_roots: std::env::var_os(SOURCE_ROOTS_ENV),
            idle_threshold: std::env::var(kernlens_gate::IDLE_THRESHOLD_ENV).ok(),
            min_compute: std::env::var(kernlens_gate::MIN_COMPUTE_ENV).ok(),
            inductor_cache: nonempty_path("TORCHINDUCTOR_CACHE_DIR"),
            triton_cache: nonempty_path("TRITON_CACHE_DIR"),
            scratch_root: std::env::var("KERNLENS_LOCAL_SCRATCH_ROOT").ok(),
            xdg_cache_home: std::env::var("XDG_CACHE_HOME").ok(),
            home: std::env::var_os("HOME").map(PathBuf::from),
            discovery: DiscoveryEnv::from_process(),
            stderr_terminal: std::io::stderr().is_terminal(),
        }
    }

    /// Whether standard error is a terminal (progress is drawn only then).
    pub fn stderr_is_terminal(&self) -> bool {
        self.stderr_terminal
    }

    /// The gate thresholds of one invocation: the flags, else the environment, else the
    /// defaults. A variable that is set but unusable gets one warning line on standard
    /// error naming it and the default used; one a flag overrides is not consulted.
    pub fn thresholds(&self, idle_flag: Option<f64>, min_compute_flag: Option<f64>) -> Thresholds {
        let (mut thresholds, fallbacks) = Thresholds::from_lookup_checked(|name| match name {
            kernlens_gate::IDLE_THRESHOLD_ENV if idle_flag.is_none() => self.idle_threshold.clone(),
            kernlens_gate::MIN_COMPUTE_ENV if min_compute_flag.is_none() => {
                self.min_compute.clone()
            }
            _ => None,
        });
        for fallback in &fallbacks {
            eprintln!("kernlens: warning: {fallback}");
        }
        if let Some(idle) = idle_flag {
            thresholds.idle_pct = idle;
        }
        if let Some(min_compute) = min_compute_flag {
            thresholds.min_compute_pct = min_compute;
        }
        thresholds
    }

    /// The cache directories that mark runtime-generated sources.
    pub fn kind_context(&self) -> KindContext {
        KindContext::with_cache_dirs(self.inductor_cache.clone(), self.triton_cache.clone())
    }

    /// Where scratch workspaces live, with the home directories of `/etc/passwd` (a
    /// session's owner may be another user).
    pub fn scratch(&self) -> ScratchEnv {
        self.scratch_base().with_home_dirs(
            std::fs::read_to_string("/etc/passwd")
                .map(|text| passwd_homes(&text))
                .unwrap_or_default(),
        )
    }

    fn scratch_base(&self) -> ScratchEnv {
        ScratchEnv::new(
            self.scratch_root.clone(),
            self.xdg_cache_home.clone(),
            self.home.clone(),
        )
    }

    /// The source search of `locate` and `triage`, set up in one place: the `--root`
    /// directories, then `KERNLENS_SOURCE_ROOTS`, then package discovery unless `discover`
    /// is false; the local scratch root is excluded, since scratch copies of a package must
    /// never be mistaken for its source.
    pub fn locator(&self, roots: &[PathBuf], discover: bool) -> LocatorBuilder {
        let mut builder = Locator::builder();
        for root in roots {
            builder = builder.root(root);
        }
        if let Some(value) = &self.source_roots {
            builder = builder.env_roots(value.to_string_lossy().into_owned());
        }
        if discover {
            builder = builder.discovery(self.discovery.clone());
        }
        if let (Some(root), _) = self.scratch_base().local_root() {
            builder = builder.exclude_paths([root]);
        }
        builder
    }
}
