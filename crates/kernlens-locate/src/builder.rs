//! [`LocatorBuilder`]: roots, walk settings and threads, as values with setters.

use std::path::PathBuf;

use crate::cache::Cache;
use crate::discover::DiscoveryEnv;
use crate::error::LocateError;
use crate::locator::{DEFAULT_MAX_FILE_BYTES, LocateStats, Locator};
use crate::roots::{self, RootConfig};
use crate::scan::DEFAULT_SKIP_DIRS;

/// Builds a [`Locator`].
#[derive(Debug, Clone)]
pub struct LocatorBuilder {
    pub(crate) config: RootConfig,
    pub(crate) skip_dirs: Vec<String>,
    pub(crate) exclude: Vec<PathBuf>,
    pub(crate) max_file_bytes: u64,
    pub(crate) threads: usize,
    pub(crate) rust_kernels: bool,
}

impl Default for LocatorBuilder {
    fn default() -> Self {
        LocatorBuilder {
            config: RootConfig::default(),
            skip_dirs: DEFAULT_SKIP_DIRS.iter().map(|s| (*s).to_owned()).collect(),
            exclude: Vec::new(),
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            threads: 0,
            rust_kernels: false,
        }
    }
}

impl LocatorBuilder {
    /// A builder with no roots and discovery off.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an explicit root (repeatable).
    pub fn root(mut self, path: impl Into<PathBuf>) -> Self {
        self.config.explicit.push(path.into());
        self
    }

    /// The raw `KERNLENS_SOURCE_ROOTS` value (colon-separated), read by the caller.
    pub fn env_roots(mut self, value: impl Into<String>) -> Self {
        self.config.env_value = Some(value.into());
        self
    }

    /// Turns package discovery on, over this environment.
    pub fn discovery(mut self, env: DiscoveryEnv) -> Self {
        self.config.discovery = Some(env);
        self
    }

    /// Replaces the skipped directory names.
    pub fn skip_dirs<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.skip_dirs = names.into_iter().map(Into::into).collect();
        self
    }

    /// Directories never searched (the CLI adds the scratch root).
    pub fn exclude_paths<I: IntoIterator<Item = P>, P: Into<PathBuf>>(mut self, paths: I) -> Self {
        self.exclude = paths
            .into_iter()
            .map(|p| {
                let p = p.into();
                std::fs::canonicalize(&p).unwrap_or(p)
            })
            .collect();
        self
    }

    /// Size cap per file.
    pub fn max_file_bytes(mut self, n: u64) -> Self {
        self.max_file_bytes = n;
        self
    }

    /// Worker threads (0: one per core).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n;
        self
    }

    /// Also searches `.rs` files for Rust GPU kernels (feature `rust-gpu`).
    #[cfg(feature = "rust-gpu")]
    pub fn rust_kernels(mut self, on: bool) -> Self {
        self.rust_kernels = on;
        self
    }

    /// Resolves the roots; an empty set is [`LocateError::NoSearchRoots`].
    pub fn build(self) -> Result<Locator, LocateError> {
        let (roots, warnings) = roots::resolve(&self.config)?;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(self.threads)
            .build()
            .map_err(|e| LocateError::Threads {
                threads: self.threads,
                message: e.to_string(),
            })?;
        let mut extensions: Vec<String> = kernlens_ident::SOURCE_EXTENSIONS
            .iter()
            .map(|e| (*e).to_owned())
            .collect();
        if self.rust_kernels {
            extensions.push(".rs".to_owned());
        }
        Ok(Locator {
            builder: self,
            roots,
            warnings,
            extensions,
            pool,
            cache: Cache::default(),
            stats: LocateStats::default(),
        })
    }
}
