//! The `Locator`: roots fixed at build time, one walk, one scan per file for
//! all keywords, caches held in the value (no global state), and the pass
//! driver of §8.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use memchr::memmem;
use rayon::prelude::*;
use serde::Serialize;

use crate::definition::{Classified, FileAnalysis, HitKind, classify_hits};
use crate::discover::DiscoveryEnv;
use crate::error::LocateError;
use crate::keywords::{KeywordPlan, keywords_for};
use crate::kind::{KindContext, source_kind_for};
use crate::launcher::{LauncherIndex, resolve_frame_path};
use crate::result::{Candidate, LauncherReport, LocateResult, Method, Score};
use crate::roots::{self, RootConfig, RootWarning, SearchRoot};
use crate::scan::{
    DEFAULT_SKIP_DIRS, FileEntry, FileState, Patterns, ScanCounters, Scratch, WalkPlan, scan_file,
    stamp, walk_and_scan,
};

/// Default size cap: larger files are skipped and counted.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// Bytes of hit files kept in memory for ranking; beyond it they are re-read.
const RETAIN_BUDGET: usize = 256 * 1024 * 1024;
/// Candidates reported per result.
const MAX_CANDIDATES: usize = 5;
/// A prefix match must spell out at least this many characters.
const MIN_PREFIX_CHARS: usize = 6;

/// Options of one locate call.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct LocateOptions {
    /// Launcher evidence from a trace (§10).
    pub launchers: Option<LauncherIndex>,
    /// Cache directories for source kinds (§9.2).
    pub kind: KindContext,
}

impl LocateOptions {
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

/// Builds a [`Locator`].
#[derive(Debug, Clone)]
pub struct LocatorBuilder {
    config: RootConfig,
    skip_dirs: Vec<String>,
    exclude: Vec<PathBuf>,
    max_file_bytes: u64,
    threads: usize,
    rust_kernels: bool,
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

#[derive(Debug, Clone)]
struct FileHit {
    file: u32,
    offsets: Vec<u32>,
}

#[derive(Default)]
struct Cache {
    files: Option<Vec<FileEntry>>,
    kw_ids: HashMap<String, u32>,
    keywords: Vec<String>,
    hits: Vec<Vec<FileHit>>,
    bytes: HashMap<u32, Arc<[u8]>>,
    retained: usize,
    analyses: HashMap<u32, Arc<FileAnalysis>>,
    facts: HashMap<(u32, String, Option<String>), Facts>,
}

impl Cache {
    /// Every cached keyword with its id, for building an automaton.
    fn keyword_pairs(&self) -> Vec<(u32, &str)> {
        self.keywords
            .iter()
            .enumerate()
            .map(|(i, k)| (i as u32, k.as_str()))
            .collect()
    }

    /// Adds one file's scan hits to the per-keyword hit table.
    fn record(&mut self, file: u32, hits: Vec<crate::scan::KwHit>) {
        for h in hits {
            if let Some(list) = self.hits.get_mut(h.kw as usize) {
                list.push(FileHit {
                    file,
                    offsets: h.offsets,
                });
            }
        }
    }
}

/// Finds the files that define kernels. Holds its roots and caches; a second
/// call is served from memory where files are unchanged.
pub struct Locator {
    builder: LocatorBuilder,
    roots: Vec<SearchRoot>,
    warnings: Vec<RootWarning>,
    extensions: Vec<String>,
    pool: rayon::ThreadPool,
    cache: Cache,
    stats: LocateStats,
}

impl std::fmt::Debug for Locator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Locator")
            .field("roots", &self.roots)
            .field("stats", &self.stats)
            .finish()
    }
}

/// One ranked candidate, before rendering.
struct Ranked {
    file: u32,
    class: Classified,
    score: Score,
    canonical: Option<PathBuf>,
    composing_line: Option<usize>,
    prefix_line: Option<usize>,
    prefix_function: Option<String>,
}

/// What ranking needs from one hit file for one keyword (and, in the prefix
/// pass, one base name); cached so a repeated call reads no file.
#[derive(Debug, Clone)]
struct Facts {
    class: Classified,
    composing_line: Option<usize>,
    prefix_chars: Option<usize>,
    prefix_line: Option<usize>,
    prefix_function: Option<String>,
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
            .map(|plan| self.run_passes(plan, opts, &kind_ctx))
            .collect();
        self.stats.scan_ms += t.elapsed().as_millis() as u64;
        results
    }

    fn root_paths(&self) -> Vec<PathBuf> {
        self.roots.iter().map(|r| r.path.clone()).collect()
    }

    /// Makes sure every keyword in `wanted` has an up-to-date hit table.
    fn ensure_scanned(&mut self, wanted: &[String]) {
        let counters = ScanCounters::default();
        let new_kws: Vec<String> = wanted
            .iter()
            .filter(|k| !self.cache.kw_ids.contains_key(*k))
            .cloned()
            .collect();
        self.stats.cache_hits = (wanted.len() - new_kws.len()) as u64;
        for k in &new_kws {
            let id = self.cache.keywords.len() as u32;
            self.cache.keywords.push(k.clone());
            self.cache.kw_ids.insert(k.clone(), id);
            self.cache.hits.push(Vec::new());
        }
        let t = Instant::now();
        if self.cache.files.is_none() {
            let pairs = self.cache.keyword_pairs();
            let patterns = Patterns::new(&pairs);
            let roots = self.root_paths();
            let plan = WalkPlan {
                roots: &roots,
                skip_dirs: &self.builder.skip_dirs,
                exclude: &self.builder.exclude,
                extensions: &self.extensions,
                max_file_bytes: self.builder.max_file_bytes,
                threads: self.pool.current_num_threads(),
                retain_budget: RETAIN_BUDGET,
            };
            let walked = walk_and_scan(&plan, patterns.as_ref(), &counters);
            self.stats.files_walked = walked.len() as u64;
            let mut files = Vec::with_capacity(walked.len());
            for (id, w) in walked.into_iter().enumerate() {
                let id = id as u32;
                self.cache.record(id, w.hits);
                if let Some(b) = w.bytes {
                    self.cache.retained += b.len();
                    self.cache.bytes.insert(id, b);
                }
                files.push(w.entry);
            }
            self.cache.files = Some(files);
            self.stats.walk_ms = t.elapsed().as_millis() as u64;
        } else {
            let changed = self.restat();
            self.stats.walk_ms = t.elapsed().as_millis() as u64;
            let t = Instant::now();
            if !new_kws.is_empty() || !changed.is_empty() {
                self.rescan(&new_kws, &changed, &counters);
            }
            self.stats.scan_ms = t.elapsed().as_millis() as u64;
        }
        self.stats.files_scanned = counters.files_scanned.load(Ordering::Relaxed);
        self.stats.bytes_read = counters.bytes_read.load(Ordering::Relaxed);
        self.stats.skipped_binary = counters.skipped_binary.load(Ordering::Relaxed);
        self.stats.skipped_size = counters.skipped_size.load(Ordering::Relaxed);
    }

    /// Re-stats the cached files in parallel; returns the ids whose content
    /// may have changed (and forgets everything cached about them).
    fn restat(&mut self) -> Vec<u32> {
        let Some(files) = self.cache.files.as_mut() else {
            return Vec::new();
        };
        let max = self.builder.max_file_bytes;
        let changed: Vec<u32> = self.pool.install(|| {
            files
                .par_iter_mut()
                .enumerate()
                .filter_map(|(i, f)| {
                    let now = std::fs::metadata(&f.path).ok().filter(|m| m.is_file());
                    let Some(meta) = now else {
                        if f.state == FileState::Unreadable {
                            return None;
                        }
                        f.state = FileState::Unreadable;
                        return Some(i as u32);
                    };
                    let (size, mtime, dev, ino) = stamp(&meta);
                    if (size, mtime, dev, ino) == (f.size, f.mtime, f.dev, f.ino)
                        && f.state != FileState::Unreadable
                    {
                        return None;
                    }
                    f.size = size;
                    f.mtime = mtime;
                    f.dev = dev;
                    f.ino = ino;
                    f.state = if size > max {
                        FileState::TooBig
                    } else {
                        FileState::Scannable
                    };
                    Some(i as u32)
                })
                .collect()
        });
        if !changed.is_empty() {
            let set: foldhash::HashSet<u32> = changed.iter().copied().collect();
            for list in &mut self.cache.hits {
                list.retain(|h| !set.contains(&h.file));
            }
            for id in &changed {
                if let Some(b) = self.cache.bytes.remove(id) {
                    self.cache.retained -= b.len();
                }
                self.cache.analyses.remove(id);
            }
            self.cache.facts.retain(|k, _| !set.contains(&k.0));
        }
        changed
    }

    /// One scan over the cached file list: new keywords in every file, and
    /// every keyword in changed files.
    fn rescan(&mut self, new_kws: &[String], changed: &[u32], counters: &ScanCounters) {
        let Some(files) = self.cache.files.as_ref() else {
            return;
        };
        let new_pairs: Vec<(u32, &str)> = new_kws
            .iter()
            .filter_map(|k| self.cache.kw_ids.get(k).map(|&i| (i, k.as_str())))
            .collect();
        let all_pairs = self.cache.keyword_pairs();
        let new_p = Patterns::new(&new_pairs);
        let all_p = if changed.is_empty() {
            None
        } else {
            Patterns::new(&all_pairs)
        };
        let changed_set: foldhash::HashSet<u32> = changed.iter().copied().collect();
        let budget = RETAIN_BUDGET.saturating_sub(self.cache.retained);
        counters.retained.store(0, Ordering::Relaxed);
        let results: Vec<(u32, crate::scan::Scanned)> = self.pool.install(|| {
            files
                .par_iter()
                .enumerate()
                .map_init(Scratch::default, |scratch, (i, f)| {
                    let id = i as u32;
                    let is_changed = changed_set.contains(&id);
                    let p = if is_changed {
                        all_p.as_ref()
                    } else {
                        new_p.as_ref()
                    };
                    if f.state == FileState::TooBig {
                        if is_changed {
                            counters.skipped_size.fetch_add(1, Ordering::Relaxed);
                        }
                        return None;
                    }
                    if f.state != FileState::Scannable {
                        return None;
                    }
                    let p = p?;
                    let s = scan_file(&f.path, f.size, Some(p), scratch, counters, budget);
                    Some((id, s))
                })
                .flatten()
                .collect()
        });
        let mut states = Vec::new();
        for (id, scanned) in results {
            let crate::scan::Scanned { state, hits, bytes } = scanned;
            self.cache.record(id, hits);
            if let Some(b) = bytes {
                // A file already retained for older keywords keeps one copy.
                if let std::collections::hash_map::Entry::Vacant(e) = self.cache.bytes.entry(id) {
                    self.cache.retained += b.len();
                    e.insert(b);
                }
            }
            if state != FileState::Scannable {
                states.push((id, state));
            }
        }
        if let Some(files) = self.cache.files.as_mut() {
            for (id, state) in states {
                if let Some(f) = files.get_mut(id as usize) {
                    f.state = state;
                }
            }
        }
        for list in &mut self.cache.hits {
            list.sort_by_key(|h| h.file);
        }
    }

    fn file(&self, id: u32) -> Option<&FileEntry> {
        self.cache.files.as_ref().and_then(|f| f.get(id as usize))
    }

    /// The bytes of a hit file: retained, or read again.
    fn bytes_of(&mut self, id: u32) -> Option<Arc<[u8]>> {
        if let Some(b) = self.cache.bytes.get(&id) {
            return Some(Arc::clone(b));
        }
        let path = self.file(id)?.path.clone();
        let data = std::fs::read(&path).ok()?;
        self.stats.bytes_read += data.len() as u64;
        Some(Arc::from(data))
    }

    fn analysis_of(&mut self, id: u32, bytes: &[u8]) -> Option<Arc<FileAnalysis>> {
        if let Some(a) = self.cache.analyses.get(&id) {
            return Some(Arc::clone(a));
        }
        let path = self.file(id)?.path.clone();
        let a = Arc::new(FileAnalysis::new(&path, bytes));
        self.cache.analyses.insert(id, Arc::clone(&a));
        Some(a)
    }

    /// The cached facts of one hit file for `kw` (and the prefix pass's base).
    fn facts(
        &mut self,
        id: u32,
        kw: &str,
        first_offset: Option<usize>,
        prefix_base: Option<&str>,
    ) -> Option<Facts> {
        let key = (id, kw.to_owned(), prefix_base.map(str::to_owned));
        if let Some(f) = self.cache.facts.get(&key) {
            return Some(f.clone());
        }
        let bytes = self.bytes_of(id)?;
        let analysis = self.analysis_of(id, &bytes)?;
        let class = classify_hits(&analysis, &bytes, kw, first_offset);
        let mut facts = Facts {
            class,
            composing_line: None,
            prefix_chars: None,
            prefix_line: None,
            prefix_function: None,
        };
        if let Some(base) = prefix_base {
            facts.composing_line = composing_literal(&analysis, &bytes, kw);
            let k = prefix_chars(&bytes, base);
            facts.prefix_chars = Some(k);
            facts.prefix_line = facts.composing_line.or_else(|| {
                memmem::find(&bytes, &base.as_bytes()[..k.min(base.len())])
                    .map(|o| analysis.line_of(o))
            });
            facts.prefix_function = facts.prefix_line.and_then(|l| analysis.function_at(l));
        }
        self.cache.facts.insert(key, facts.clone());
        Some(facts)
    }

    fn hits_of(&self, kw: &str) -> Vec<FileHit> {
        self.cache
            .kw_ids
            .get(kw)
            .and_then(|&i| self.cache.hits.get(i as usize))
            .cloned()
            .unwrap_or_default()
    }

    fn run_passes(
        &mut self,
        plan: &KeywordPlan,
        opts: &LocateOptions,
        kind_ctx: &KindContext,
    ) -> LocateResult {
        if let Some(refusal) = plan.refusal {
            let mut r = not_found(
                &plan.name,
                &[],
                Some(refusal.as_str().to_owned()),
                None,
                source_kind_for(&plan.name, None, kind_ctx),
            );
            r.reason = Some(refusal.as_str().to_owned());
            return r;
        }
        let launcher = opts
            .launchers
            .as_ref()
            .and_then(|l| l.get(&plan.name))
            .cloned();
        let resolved = launcher.as_ref().and_then(|l| {
            resolve_frame_path(&l.path, &self.root_paths())
                .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
        });
        let mut tried: Vec<String> = Vec::new();
        let passes: [(&[String], Method); 3] = [
            (&plan.primary, Method::Definition),
            (&plan.subwindows, Method::Subwindow),
            (&plan.prefixes, Method::Prefix),
        ];
        for (keywords, method) in passes {
            for kw in keywords {
                if tried.contains(kw) {
                    continue;
                }
                tried.push(kw.clone());
                let hits = self.hits_of(kw);
                if hits.is_empty() {
                    continue;
                }
                let prefix_base =
                    (method == Method::Prefix).then(|| plan.base.trim_start_matches('_'));
                let ranked = self.rank(kw, &hits, resolved.as_deref(), prefix_base);
                let Some(best) = ranked.first() else { continue };
                if method == Method::Prefix
                    && best.score.prefix_chars.unwrap_or(0) < MIN_PREFIX_CHARS
                {
                    continue;
                }
                let method = match method {
                    Method::Definition if best.class.kind == HitKind::Mention => Method::Mention,
                    m => m,
                };
                return self.render(
                    plan,
                    kw,
                    method,
                    &ranked,
                    tried,
                    launcher.as_ref(),
                    resolved.as_deref(),
                    kind_ctx,
                );
            }
        }
        let kind = source_kind_for(&plan.name, None, kind_ctx);
        let report = launcher.map(|l| LauncherReport {
            path: l.path.clone(),
            resolved_path: resolved.clone(),
            line: l.line,
            function: l.function.clone(),
            launches: l.launches,
            distinct_frames: l.distinct_frames,
            corroborated: false,
            candidate_rank: None,
        });
        let reason = report.as_ref().map(|_| "launcher_unconfirmed".to_owned());
        not_found(&plan.name, &tried, reason, report, kind)
    }

    /// Ranks the hit files of one keyword (§8.1; the prefix pass first by
    /// composing literal and spelled-out characters).
    fn rank(
        &mut self,
        kw: &str,
        hits: &[FileHit],
        launcher_file: Option<&Path>,
        prefix_base: Option<&str>,
    ) -> Vec<Ranked> {
        let mut out = Vec::new();
        for h in hits {
            let Some(entry) = self.file(h.file).cloned() else {
                continue;
            };
            if entry.state != FileState::Scannable {
                continue;
            }
            let first = h.offsets.first().map(|&o| o as usize);
            let Some(facts) = self.facts(h.file, kw, first, prefix_base) else {
                continue;
            };
            let root_path = self
                .roots
                .get(entry.root)
                .map(|r| r.path.clone())
                .unwrap_or_default();
            let canonical = launcher_file.and_then(|_| std::fs::canonicalize(&entry.path).ok());
            let is_launcher = launcher_file.is_some_and(|l| canonical.as_deref() == Some(l));
            let mut score = base_score(
                &entry.path,
                &root_path,
                entry.root,
                kw,
                &facts.class,
                is_launcher,
            );
            if prefix_base.is_some() {
                score.composing = Some(facts.composing_line.is_some());
                score.prefix_chars = facts.prefix_chars;
            }
            let Facts {
                class,
                composing_line,
                prefix_line,
                prefix_function,
                ..
            } = facts;
            out.push(Ranked {
                file: h.file,
                class,
                score,
                canonical,
                composing_line,
                prefix_line,
                prefix_function,
            });
        }
        let paths: HashMap<u32, PathBuf> = out
            .iter()
            .filter_map(|r| self.file(r.file).map(|f| (r.file, f.path.clone())))
            .collect();
        out.sort_by(|a, b| {
            let pa = paths.get(&a.file);
            let pb = paths.get(&b.file);
            b.score
                .composing
                .cmp(&a.score.composing)
                .then(b.score.prefix_chars.cmp(&a.score.prefix_chars))
                .then(sort_key(&a.score).cmp(&sort_key(&b.score)))
                .then(
                    pa.map(|p| p.as_os_str().as_encoded_bytes())
                        .cmp(&pb.map(|p| p.as_os_str().as_encoded_bytes())),
                )
        });
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn render(
        &mut self,
        plan: &KeywordPlan,
        kw: &str,
        method: Method,
        ranked: &[Ranked],
        tried: Vec<String>,
        launcher: Option<&crate::launcher::Launcher>,
        resolved: Option<&Path>,
        kind_ctx: &KindContext,
    ) -> LocateResult {
        let candidates: Vec<Candidate> = ranked
            .iter()
            .take(MAX_CANDIDATES)
            .filter_map(|r| {
                let f = self.file(r.file)?;
                Some(Candidate {
                    path: f.path.clone(),
                    line: Some(r.composing_line.unwrap_or(r.class.line)),
                    score: r.score.clone(),
                    why: why_codes(r, &f.path, kw),
                })
            })
            .collect();
        let best = &ranked[0];
        let path = self.file(best.file).map(|f| f.path.clone());
        let mut line = Some(best.class.line);
        let mut function = best.class.function.clone();
        if method == Method::Prefix {
            line = best.prefix_line;
            function = best.prefix_function.clone();
        }
        let mut final_method = method;
        let report = launcher.map(|l| {
            let rank = ranked
                .iter()
                .position(|r| resolved.is_some() && r.canonical.as_deref() == resolved)
                .map(|p| p + 1);
            let corroborated = rank == Some(1);
            LauncherReport {
                path: l.path.clone(),
                resolved_path: resolved.map(Path::to_path_buf),
                line: l.line,
                function: l.function.clone(),
                launches: l.launches,
                distinct_frames: l.distinct_frames,
                corroborated,
                candidate_rank: rank,
            }
        });
        if let Some(r) = &report
            && r.corroborated
        {
            final_method = Method::TracePythonStack;
            if best.class.kind == HitKind::Mention && method != Method::Prefix {
                line = Some(r.line);
                function = Some(r.function.clone());
            }
        }
        let kind = source_kind_for(&plan.name, path.as_deref(), kind_ctx);
        let repo_root = path.as_deref().and_then(repo_root_of);
        LocateResult {
            name: plan.name.clone(),
            found: true,
            path,
            line,
            function,
            kind,
            method: final_method,
            grep_method: method,
            keyword: Some(kw.to_owned()),
            keywords_tried: tried,
            reason: None,
            repo_root,
            candidates,
            launcher: report,
        }
    }
}

fn not_found(
    name: &str,
    tried: &[String],
    reason: Option<String>,
    launcher: Option<LauncherReport>,
    kind: crate::kind::SourceKind,
) -> LocateResult {
    LocateResult {
        name: name.to_owned(),
        found: false,
        path: None,
        line: None,
        function: None,
        kind,
        method: Method::NotFound,
        grep_method: Method::NotFound,
        keyword: None,
        keywords_tried: tried.to_vec(),
        reason,
        repo_root: None,
        candidates: Vec::new(),
        launcher,
    }
}

fn sort_key(s: &Score) -> (u8, u8, u8, i32, u8, u8, usize, usize) {
    (
        s.definition,
        s.launcher,
        s.stem,
        s.path_kind,
        s.reexport,
        s.extension,
        s.depth,
        s.root,
    )
}

/// Path penalties and bonuses of §8.1 component 4.
const PATH_KINDS: &[(&str, i32, &str)] = &[
    ("/csrc/", -3, "path:csrc(-3)"),
    ("/optimized_versions/", 5, "path:optimized_versions(+5)"),
    ("/site-packages/", 2, "path:site_packages(+2)"),
    ("/dist-packages/", 2, "path:site_packages(+2)"),
    ("/include/", 1, "path:include(+1)"),
    ("/pybind/", 2, "path:pybind(+2)"),
    ("/tests/", 3, "path:tests(+3)"),
    ("/test/", 3, "path:tests(+3)"),
];

/// The path kinds that apply, each reason code once (`/site-packages/` and
/// `/dist-packages/` share one, as do `/tests/` and `/test/`).
fn path_kinds(text: &str) -> Vec<(&'static str, i32)> {
    let mut out: Vec<(&'static str, i32)> = Vec::new();
    for (marker, value, code) in PATH_KINDS {
        if text.contains(marker) && !out.iter().any(|(c, _)| c == code) {
            out.push((code, *value));
        }
    }
    out
}

fn path_text(p: &Path) -> String {
    p.to_string_lossy().replace('\\', "/")
}

fn extension_rank(path: &Path) -> (u8, String) {
    let ext = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy().to_ascii_lowercase()))
        .unwrap_or_default();
    let rank = match ext.as_str() {
        ".cuh" | ".cu" | ".hip" => 0,
        ".cpp" | ".cc" | ".cxx" | ".c" => 1,
        ".h" | ".hpp" | ".hh" => 2,
        _ => 3,
    };
    (rank, ext)
}

fn base_score(
    path: &Path,
    root: &Path,
    root_index: usize,
    kw: &str,
    class: &Classified,
    is_launcher: bool,
) -> Score {
    let text = path_text(path);
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let kw_base = kw.rsplit("::").next().unwrap_or(kw).to_lowercase();
    let path_kind: i32 = path_kinds(&text).iter().map(|(_, v)| v).sum();
    let depth = path
        .strip_prefix(root)
        .map(|rel| path_text(rel).matches('/').count())
        .unwrap_or(0);
    Score {
        definition: 2 - class.kind.strength(),
        launcher: u8::from(!is_launcher),
        stem: u8::from(!stem.contains(&kw_base)),
        path_kind,
        reexport: u8::from(path.file_name().is_some_and(|n| n == "__init__.py")),
        extension: extension_rank(path).0,
        depth,
        root: root_index,
        composing: None,
        prefix_chars: None,
    }
}

fn why_codes(r: &Ranked, path: &Path, _kw: &str) -> Vec<String> {
    let mut why = vec![format!("{}@{}", r.class.kind.code(), r.class.line)];
    if r.score.launcher == 0 {
        why.push("launcher_file".to_owned());
    }
    if r.score.stem == 0 {
        why.push("stem_match".to_owned());
    }
    for (code, _) in path_kinds(&path_text(path)) {
        why.push(code.to_owned());
    }
    if r.score.reexport == 1 {
        why.push("reexport_init(+1)".to_owned());
    }
    let (rank, ext) = extension_rank(path);
    why.push(format!("ext:{ext}({rank})"));
    why.push(format!("depth:{}", r.score.depth));
    if let Some(l) = r.composing_line {
        why.push(format!("composing_literal@{l}"));
    }
    if let Some(n) = r.score.prefix_chars {
        why.push(format!("prefix_chars:{n}"));
    }
    why
}

/// The first string literal that starts with `kw` and composes a name: an
/// f-string, a template with `{` or `%`, or one followed by `.format(`, `%` or `+`.
fn composing_literal(analysis: &FileAnalysis, bytes: &[u8], kw: &str) -> Option<usize> {
    let symbols = analysis.python()?;
    symbols
        .strings
        .iter()
        .find(|s| {
            let text = bytes.get(s.start..s.end).unwrap_or_default();
            text.starts_with(kw.as_bytes())
                && (s.fstring || s.filled_after || memchr::memchr2(b'{', b'%', text).is_some())
        })
        .map(|s| s.line)
}

/// The largest `k ≥ 6` such that the first `k` bytes of `base` occur in the
/// file (0 when not even 6 do). Occurrence is monotonic in `k`.
fn prefix_chars(bytes: &[u8], base: &str) -> usize {
    let b = base.as_bytes();
    let occurs = |k: usize| memmem::find(bytes, &b[..k]).is_some();
    if b.len() < MIN_PREFIX_CHARS || !occurs(MIN_PREFIX_CHARS) {
        return 0;
    }
    let (mut lo, mut hi) = (MIN_PREFIX_CHARS, b.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if occurs(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

fn repo_root_of(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|a| a.join(".git").exists())
        .map(Path::to_path_buf)
}
