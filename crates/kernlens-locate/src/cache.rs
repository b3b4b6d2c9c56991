//! The per-`Locator` caches (locate.md "Scan architecture"): the file list, the hit table per keyword,
//! retained bytes and file analyses, with the walk, re-stat and incremental
//! rescan that keep them current.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use rayon::prelude::*;

use crate::definition::FileAnalysis;
use crate::evidence::Facts;
use crate::locator::Locator;
use crate::scan::{
    FileEntry, FileState, Patterns, ScanCounters, Scratch, WalkPlan, scan_file, stamp,
    walk_and_scan,
};

/// Bytes of hit files kept in memory for ranking; beyond it they are re-read.
const RETAIN_BUDGET: usize = 256 * 1024 * 1024;

/// One file's hits of one keyword, as the scan saw them.
#[derive(Debug, Clone)]
pub(crate) struct FileHit {
    pub(crate) file: u32,
    /// The file may be evidence for the keyword
    /// ([`crate::evidence::may_be_evidence`]); when false it holds the keyword
    /// only inside longer identifiers and is not read again.
    pub(crate) evidence: bool,
}

#[derive(Default)]
pub(crate) struct Cache {
    pub(crate) files: Option<Vec<FileEntry>>,
    pub(crate) kw_ids: HashMap<String, u32>,
    pub(crate) keywords: Vec<String>,
    pub(crate) hits: Vec<Vec<FileHit>>,
    pub(crate) bytes: HashMap<u32, Arc<[u8]>>,
    pub(crate) retained: usize,
    pub(crate) analyses: HashMap<u32, Arc<FileAnalysis>>,
    pub(crate) facts: HashMap<(u32, String, String), Option<Facts>>,
    /// `#define` values of macro-like namespace names (rule 2b).
    pub(crate) macro_values: HashMap<String, Option<String>>,
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
                    evidence: h.evidence,
                });
            }
        }
    }
}

impl Locator {
    /// Scans for one keyword found only while ranking (a launch-site alias's
    /// callee), adding its cost to this call's counters.
    pub(crate) fn scan_extra(&mut self, kw: &str) {
        if self.cache.kw_ids.contains_key(kw) {
            return;
        }
        let saved = self.stats.clone();
        self.ensure_scanned(&[kw.to_owned()]);
        let extra = std::mem::replace(&mut self.stats, saved);
        self.stats.patterns += 1;
        self.stats.files_scanned += extra.files_scanned;
        self.stats.bytes_read += extra.bytes_read;
        self.stats.scan_ms += extra.scan_ms;
    }

    /// Makes sure every keyword in `wanted` has an up-to-date hit table.
    pub(crate) fn ensure_scanned(&mut self, wanted: &[String]) {
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
            self.cache.macro_values.clear();
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

    pub(crate) fn file(&self, id: u32) -> Option<&FileEntry> {
        self.cache.files.as_ref().and_then(|f| f.get(id as usize))
    }

    /// The bytes of a hit file: retained, or read again.
    pub(crate) fn bytes_of(&mut self, id: u32) -> Option<Arc<[u8]>> {
        if let Some(b) = self.cache.bytes.get(&id) {
            return Some(Arc::clone(b));
        }
        let path = self.file(id)?.path.clone();
        let data = std::fs::read(&path).ok()?;
        self.stats.bytes_read += data.len() as u64;
        Some(Arc::from(data))
    }

    pub(crate) fn analysis_of(&mut self, id: u32, bytes: &[u8]) -> Option<Arc<FileAnalysis>> {
        if let Some(a) = self.cache.analyses.get(&id) {
            return Some(Arc::clone(a));
        }
        let path = self.file(id)?.path.clone();
        let a = Arc::new(FileAnalysis::new(&path, bytes));
        self.cache.analyses.insert(id, Arc::clone(&a));
        Some(a)
    }

    pub(crate) fn hits_of(&self, kw: &str) -> Vec<FileHit> {
        self.cache
            .kw_ids
            .get(kw)
            .and_then(|&i| self.cache.hits.get(i as usize))
            .cloned()
            .unwrap_or_default()
    }
}
