//! The walk and the scan (§4–§5): one parallel walk over all roots, and one
//! Aho–Corasick pass per file over every keyword of every requested name.

use std::fs::{File, Metadata};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use ignore::{WalkBuilder, WalkState};

/// Offsets kept per (file, keyword).
pub(crate) const MAX_OFFSETS: usize = 16;
/// Files this large or larger are memory-mapped instead of read.
const MMAP_FROM: u64 = 64 * 1024;
/// The binary check looks for a NUL byte in this many leading bytes.
const BINARY_PEEK: usize = 8 * 1024;

/// Directory names never searched: VCS data, caches and build output
/// (`build/` holds generated copies such as `aiter/jit/build/*/…cu`).
pub const DEFAULT_SKIP_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "__pycache__",
    "build",
    "_build",
    ".eggs",
    "node_modules",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "flydsl_cache",
    ".triton",
    "CMakeFiles",
];

/// The compiled keyword set, pattern index → keyword id.
///
/// One logical scan, two automata over the same patterns: a leftmost-first
/// search runs over the whole file (the fast path, as fast as a grep), and
/// the overlapping search that the nested prefix keywords need runs only
/// inside the regions it reported. Every occurrence of any keyword starts
/// inside some leftmost-first match (the leftmost search can only skip
/// positions covered by a match it reported), so the counts are exact.
pub(crate) struct Patterns {
    lead: AhoCorasick,
    all: AhoCorasick,
    max_len: usize,
    ids: Vec<u32>,
}

impl Patterns {
    pub(crate) fn new(keywords: &[(u32, &str)]) -> Option<Patterns> {
        if keywords.is_empty() {
            return None;
        }
        let build = |kind: MatchKind| {
            AhoCorasick::builder()
                .match_kind(kind)
                .kind(Some(AhoCorasickKind::DFA))
                .build(keywords.iter().map(|(_, k)| k.as_bytes()))
                .or_else(|_| {
                    AhoCorasick::builder()
                        .match_kind(kind)
                        .build(keywords.iter().map(|(_, k)| k.as_bytes()))
                })
                .ok()
        };
        Some(Patterns {
            lead: build(MatchKind::LeftmostFirst)?,
            all: build(MatchKind::Standard)?,
            max_len: keywords.iter().map(|(_, k)| k.len()).max().unwrap_or(0),
            ids: keywords.iter().map(|(id, _)| *id).collect(),
        })
    }
}

/// Hits of one keyword in one file.
#[derive(Debug, Clone)]
pub(crate) struct KwHit {
    pub kw: u32,
    pub count: u32,
    pub offsets: Vec<u32>,
}

/// Per-thread scratch space for counting hits without allocating per file.
#[derive(Default)]
pub(crate) struct Scratch {
    slot: Vec<u32>,
    hits: Vec<KwHit>,
    spans: Vec<(usize, usize)>,
    buf: Vec<u8>,
}

/// Every (keyword, count, first offsets) of `hay`, counting overlapping
/// matches because prefix keywords nest inside one another.
pub(crate) fn scan_bytes(p: &Patterns, hay: &[u8], scratch: &mut Scratch) -> Vec<KwHit> {
    if scratch.slot.len() < p.ids.len() {
        scratch.slot.resize(p.ids.len(), u32::MAX);
    }
    scratch.hits.clear();
    scratch.spans.clear();
    // Regions: runs of leftmost-first matches closer than the longest keyword.
    for m in p.lead.find_iter(hay) {
        match scratch.spans.last_mut() {
            Some(last) if m.start() < last.1 + p.max_len => last.1 = m.end(),
            _ => scratch.spans.push((m.start(), m.end())),
        }
    }
    for i in 0..scratch.spans.len() {
        let (start, last_end) = scratch.spans[i];
        let end = (last_end + p.max_len).min(hay.len());
        let input = aho_corasick::Input::new(hay).span(start..end);
        for m in p.all.find_overlapping_iter(input) {
            // Starts past the region belong to no reported match: none exist,
            // but the bound keeps regions from counting a match twice.
            if m.start() >= last_end {
                continue;
            }
            let pi = m.pattern().as_usize();
            let slot = scratch.slot[pi];
            let hit = if slot == u32::MAX {
                scratch.slot[pi] = scratch.hits.len() as u32;
                scratch.hits.push(KwHit {
                    kw: pi as u32,
                    count: 0,
                    offsets: Vec::new(),
                });
                scratch.hits.last_mut()
            } else {
                scratch.hits.get_mut(slot as usize)
            };
            if let Some(h) = hit {
                h.count += 1;
                if h.offsets.len() < MAX_OFFSETS {
                    h.offsets.push(m.start() as u32);
                }
            }
        }
    }
    let mut out = std::mem::take(&mut scratch.hits);
    for h in &mut out {
        scratch.slot[h.kw as usize] = u32::MAX;
        h.kw = p.ids[h.kw as usize];
    }
    out
}

/// Why a walked file is not scanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileState {
    Scannable,
    TooBig,
    Binary,
    Unreadable,
}

/// One admitted file.
#[derive(Debug, Clone)]
pub(crate) struct FileEntry {
    pub path: PathBuf,
    pub root: usize,
    pub size: u64,
    pub mtime: Option<SystemTime>,
    pub dev: u64,
    pub ino: u64,
    pub state: FileState,
}

/// The identity of a file's contents for cache checks.
pub(crate) fn stamp(meta: &Metadata) -> (u64, Option<SystemTime>, u64, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (meta.len(), meta.modified().ok(), meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        (meta.len(), meta.modified().ok(), 0, 0)
    }
}

/// What walking needs to know.
pub(crate) struct WalkPlan<'a> {
    /// Every root, in order (index = root order).
    pub roots: &'a [PathBuf],
    pub skip_dirs: &'a [String],
    pub exclude: &'a [PathBuf],
    pub extensions: &'a [String],
    pub max_file_bytes: u64,
    pub threads: usize,
    pub retain_budget: usize,
}

/// Counters of one walk or scan.
#[derive(Debug, Default)]
pub(crate) struct ScanCounters {
    pub bytes_read: AtomicU64,
    pub files_scanned: AtomicU64,
    pub skipped_binary: AtomicU64,
    pub skipped_size: AtomicU64,
    pub retained: AtomicUsize,
}

/// A scanned file's outcome.
pub(crate) struct Scanned {
    pub state: FileState,
    pub hits: Vec<KwHit>,
    pub bytes: Option<Arc<[u8]>>,
}

/// Reads one file once and scans it; keeps its bytes when it has hits and
/// the retention budget allows.
pub(crate) fn scan_file(
    path: &Path,
    size: u64,
    patterns: Option<&Patterns>,
    scratch: &mut Scratch,
    counters: &ScanCounters,
    budget: usize,
) -> Scanned {
    let none = |state| Scanned {
        state,
        hits: Vec::new(),
        bytes: None,
    };
    let Ok(file) = File::open(path) else {
        return none(FileState::Unreadable);
    };
    let map;
    let data: &[u8] = if size >= MMAP_FROM {
        // SAFETY: the map is read-only and dropped before this function
        // returns; a file truncated meanwhile can fault, the accepted risk of
        // every mmap-based searcher (ripgrep makes the same choice).
        map = match unsafe { memmap2::Mmap::map(&file) } {
            Ok(m) => m,
            Err(_) => return none(FileState::Unreadable),
        };
        &map[..]
    } else {
        scratch.buf.clear();
        let mut f = file;
        if f.read_to_end(&mut scratch.buf).is_err() {
            return none(FileState::Unreadable);
        }
        &scratch.buf
    };
    counters
        .bytes_read
        .fetch_add(data.len() as u64, Ordering::Relaxed);
    if memchr::memchr(0, &data[..data.len().min(BINARY_PEEK)]).is_some() {
        counters.skipped_binary.fetch_add(1, Ordering::Relaxed);
        return none(FileState::Binary);
    }
    counters.files_scanned.fetch_add(1, Ordering::Relaxed);
    let hits = match patterns {
        Some(p) => {
            let mut s = Scratch {
                slot: std::mem::take(&mut scratch.slot),
                hits: std::mem::take(&mut scratch.hits),
                spans: std::mem::take(&mut scratch.spans),
                buf: Vec::new(),
            };
            let h = scan_bytes(p, data, &mut s);
            scratch.slot = s.slot;
            scratch.hits = s.hits;
            scratch.spans = s.spans;
            h
        }
        None => Vec::new(),
    };
    let mut bytes = None;
    if !hits.is_empty() {
        let prev = counters.retained.fetch_add(data.len(), Ordering::Relaxed);
        if prev + data.len() <= budget {
            bytes = Some(Arc::from(data));
        } else {
            counters.retained.fetch_sub(data.len(), Ordering::Relaxed);
        }
    }
    Scanned {
        state: FileState::Scannable,
        hits,
        bytes,
    }
}

/// A walked and scanned file, before ids are assigned.
pub(crate) struct Walked {
    pub entry: FileEntry,
    pub hits: Vec<KwHit>,
    pub bytes: Option<Arc<[u8]>>,
}

struct Sink {
    local: Vec<Walked>,
    shared: Arc<Mutex<Vec<Walked>>>,
}

impl Drop for Sink {
    fn drop(&mut self) {
        if let Ok(mut all) = self.shared.lock() {
            all.append(&mut self.local);
        }
    }
}

fn admitted(name: &str, extensions: &[String]) -> bool {
    let lower = name.to_ascii_lowercase();
    extensions
        .iter()
        .any(|e| lower.len() > e.len() && lower.ends_with(e.as_str()))
}

/// Walks every root once, in parallel, and scans each admitted file as it is
/// found. Returns the files sorted by (root, path).
pub(crate) fn walk_and_scan(
    plan: &WalkPlan<'_>,
    patterns: Option<&Patterns>,
    counters: &ScanCounters,
) -> Vec<Walked> {
    // A root nested inside an earlier root adds nothing; a root nested in a
    // later one is walked on its own and skipped by the outer walk.
    let walked: Vec<(usize, &PathBuf)> = plan
        .roots
        .iter()
        .enumerate()
        .filter(|(i, r)| !plan.roots[..*i].iter().any(|e| r.starts_with(e)))
        .collect();
    let Some((_, first)) = walked.first() else {
        return Vec::new();
    };
    let mut builder = WalkBuilder::new(first);
    for (_, r) in &walked[1..] {
        builder.add(r);
    }
    let walked_paths: Vec<PathBuf> = walked.iter().map(|(_, r)| (*r).clone()).collect();
    let skip: Vec<String> = plan.skip_dirs.to_vec();
    let exclude: Vec<PathBuf> = plan.exclude.to_vec();
    builder
        .standard_filters(false)
        .hidden(false)
        .follow_links(false)
        .threads(plan.threads)
        .filter_entry(move |e| {
            if e.depth() == 0 || !e.file_type().is_some_and(|t| t.is_dir()) {
                return true;
            }
            let name = e.file_name().to_string_lossy();
            if skip.iter().any(|s| *s == name) || name.ends_with(".egg-info") {
                return false;
            }
            let p = e.path();
            !(exclude.iter().any(|x| p == x) || walked_paths.iter().any(|r| p == r))
        });
    let shared = Arc::new(Mutex::new(Vec::new()));
    let owners: Vec<(usize, PathBuf)> = walked.iter().map(|(i, r)| (*i, (*r).clone())).collect();
    builder.build_parallel().run(|| {
        let mut sink = Sink {
            local: Vec::new(),
            shared: Arc::clone(&shared),
        };
        let mut scratch = Scratch::default();
        let owners = owners.clone();
        Box::new(move |result| {
            let Ok(entry) = result else {
                return WalkState::Continue;
            };
            let Some(ft) = entry.file_type() else {
                return WalkState::Continue;
            };
            if ft.is_dir() || !admitted(&entry.file_name().to_string_lossy(), plan.extensions) {
                return WalkState::Continue;
            }
            let path = entry.path();
            // A file symlink is read when its target is a regular file.
            let meta = if ft.is_symlink() {
                std::fs::metadata(path)
            } else {
                entry.metadata().map_err(std::io::Error::other)
            };
            let Ok(meta) = meta else {
                return WalkState::Continue;
            };
            if !meta.is_file() {
                return WalkState::Continue;
            }
            let (size, mtime, dev, ino) = stamp(&meta);
            let root = owners
                .iter()
                .filter(|(_, r)| path.starts_with(r))
                .max_by_key(|(_, r)| r.as_os_str().len())
                .map_or(0, |(i, _)| *i);
            let mut walked = Walked {
                entry: FileEntry {
                    path: path.to_path_buf(),
                    root,
                    size,
                    mtime,
                    dev,
                    ino,
                    state: FileState::Scannable,
                },
                hits: Vec::new(),
                bytes: None,
            };
            if size > plan.max_file_bytes {
                counters.skipped_size.fetch_add(1, Ordering::Relaxed);
                walked.entry.state = FileState::TooBig;
            } else if patterns.is_some() {
                let s = scan_file(
                    path,
                    size,
                    patterns,
                    &mut scratch,
                    counters,
                    plan.retain_budget,
                );
                walked.entry.state = s.state;
                walked.hits = s.hits;
                walked.bytes = s.bytes;
            }
            sink.local.push(walked);
            WalkState::Continue
        })
    });
    let mut all = match Arc::try_unwrap(shared) {
        Ok(m) => m.into_inner().unwrap_or_else(|e| e.into_inner()),
        Err(arc) => arc
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default(),
    };
    all.sort_by(|a, b| (a.entry.root, &a.entry.path).cmp(&(b.entry.root, &b.entry.path)));
    // Hard links and file symlinks: one entry per (device, inode), the first
    // in root order then path order.
    let mut seen = foldhash::HashSet::default();
    all.retain(|w| w.entry.ino == 0 || seen.insert((w.entry.dev, w.entry.ino)));
    all
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use proptest::prelude::*;

    /// Every overlapping occurrence of every keyword, counted naively.
    fn naive(keywords: &[String], hay: &[u8]) -> Vec<(u32, u32, Vec<u32>)> {
        let mut out = Vec::new();
        for (i, k) in keywords.iter().enumerate() {
            let k = k.as_bytes();
            let starts: Vec<u32> = (0..hay.len())
                .filter(|&s| hay[s..].starts_with(k))
                .map(|s| s as u32)
                .collect();
            if !starts.is_empty() {
                let first = starts.iter().copied().take(MAX_OFFSETS).collect();
                out.push((i as u32, starts.len() as u32, first));
            }
        }
        out
    }

    proptest! {
        // The two-automaton scan finds exactly the overlapping occurrences,
        // with nested, overlapping and repeated keywords.
        #[test]
        fn region_scan_counts_every_overlapping_occurrence(
            keywords in proptest::collection::btree_set("[ab_]{1,6}", 1..8),
            hay in "[ab_c]{0,300}",
        ) {
            let keywords: Vec<String> = keywords.into_iter().collect();
            let pairs: Vec<(u32, &str)> =
                keywords.iter().enumerate().map(|(i, k)| (i as u32, k.as_str())).collect();
            let p = Patterns::new(&pairs).unwrap();
            let mut got: Vec<(u32, u32, Vec<u32>)> = scan_bytes(&p, hay.as_bytes(), &mut Scratch::default())
                .into_iter()
                .map(|h| (h.kw, h.count, h.offsets))
                .collect();
            got.sort();
            prop_assert_eq!(got, naive(&keywords, hay.as_bytes()));
        }
    }
}
