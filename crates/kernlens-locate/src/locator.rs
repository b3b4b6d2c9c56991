//! The `Locator`: roots fixed at build time, the public calls, and the
//! options and counters of one call. The walk and caches live in `cache`,
//! the pass driver in `passes`, what a hit proves in `evidence`, and the sort
//! key in `rank`.

use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use crate::builder::LocatorBuilder;
use crate::cache::Cache;
use crate::error::LocateError;
use crate::keywords::{KeywordPlan, keywords_for};
use crate::kind::{KindContext, source_kind_for};
use crate::launcher::LauncherIndex;
use crate::passes::not_found;
use crate::result::LocateResult;
use crate::roots::{self, RootWarning, SearchRoot};

/// Default size cap: larger files are skipped and counted.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// Options of one locate call.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct LocateOptions {
    /// Launcher evidence from a trace (locate.md "Launcher evidence from traces").
    pub launchers: Option<LauncherIndex>,
    /// Cache directories for source kinds (locate.md "Source kind: Rules").
    pub kind: KindContext,
}

impl LocateOptions {
    /// No launcher evidence and an empty kind context.
    pub fn new() -> Self {
        Self::default()
    }

    /// Options with launcher evidence.
    pub fn with_launchers(mut self, index: LauncherIndex) -> Self {
        self.launchers = Some(index);
        self
    }

    /// Options with a kind context.
    pub fn with_kind_context(mut self, kind: KindContext) -> Self {
        self.kind = kind;
        self
    }
}

/// Counters of the last call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LocateStats {
    /// Admitted files found by a walk in this call (0 when the file list was cached).
    pub files_walked: u64,
    /// Files read and scanned in this call.
    pub files_scanned: u64,
    /// Bytes read from disk in this call (scans and re-reads).
    pub bytes_read: u64,
    /// Files skipped as binary in this call.
    pub skipped_binary: u64,
    /// Files skipped for size in this call.
    pub skipped_size: u64,
    /// Distinct keywords requested in this call.
    pub patterns: u64,
    /// Requested keywords served from the hit-table cache.
    pub cache_hits: u64,
    /// Walk (with its pipelined scan) or re-stat time, ms.
    pub walk_ms: u64,
    /// Scan over the cached file list plus ranking time, ms.
    pub scan_ms: u64,
}

/// Finds the files that define kernels. Holds its roots and caches; a second
/// call is served from memory where files are unchanged.
pub struct Locator {
    pub(crate) builder: LocatorBuilder,
    pub(crate) roots: Vec<SearchRoot>,
    pub(crate) warnings: Vec<RootWarning>,
    pub(crate) extensions: Vec<String>,
    pub(crate) pool: rayon::ThreadPool,
    pub(crate) cache: Cache,
    pub(crate) stats: LocateStats,
}

impl std::fmt::Debug for Locator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Locator")
            .field("roots", &self.roots)
            .field("stats", &self.stats)
            .finish()
    }
}
impl Locator {
    /// A builder.
    pub fn builder() -> LocatorBuilder {
        LocatorBuilder::new()
    }

    /// The search roots, in order.
    pub fn roots(&self) -> &[SearchRoot] {
        &self.roots
    }

    /// Entries dropped while resolving the roots.
    pub fn warnings(&self) -> &[RootWarning] {
        &self.warnings
    }

    /// Counters of the last call.
    pub fn stats(&self) -> &LocateStats {
        &self.stats
    }

    /// Drops every cache and resolves the roots again.
    pub fn refresh(&mut self) -> Result<(), LocateError> {
        let (roots, warnings) = roots::resolve(&self.builder.config)?;
        self.roots = roots;
        self.warnings = warnings;
        self.cache = Cache::default();
        Ok(())
    }

    /// Locates one name.
    pub fn locate(&mut self, name: &str, opts: &LocateOptions) -> LocateResult {
        let mut v = self.locate_many(&[name], opts);
        v.pop().unwrap_or_else(|| {
            not_found(
                name,
                &[],
                None,
                None,
                source_kind_for(name, None, &opts.kind),
            )
        })
    }

    /// Locates many names in one pass over the roots; results in input order.
    pub fn locate_many(&mut self, names: &[&str], opts: &LocateOptions) -> Vec<LocateResult> {
        self.stats = LocateStats::default();
        let plans: Vec<KeywordPlan> = names.iter().map(|n| keywords_for(n)).collect();
        let mut wanted: Vec<&str> = Vec::new();
        for p in plans.iter().filter(|p| p.refusal.is_none()) {
            for k in p.all() {
                if !wanted.contains(&k) {
                    wanted.push(k);
                }
            }
        }
        self.stats.patterns = wanted.len() as u64;
        let wanted_owned: Vec<String> = wanted.iter().map(|s| (*s).to_owned()).collect();
        if !wanted_owned.is_empty() {
            self.ensure_scanned(&wanted_owned);
        }
        let mut kind_ctx = opts.kind.clone();
        kind_ctx.reusable_roots.extend(
            self.roots
                .iter()
                .filter(|r| r.reusable)
                .map(|r| r.path.clone()),
        );
        let t = Instant::now();
        let results = plans
            .iter()
            .map(|plan| self.run_passes(plan, opts, &kind_ctx).settled())
            .collect();
        self.stats.scan_ms += t.elapsed().as_millis() as u64;
        results
    }

    pub(crate) fn root_paths(&self) -> Vec<PathBuf> {
        self.roots.iter().map(|r| r.path.clone()).collect()
    }
}
