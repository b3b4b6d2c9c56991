//! The walk and the scan (locate.md "Which files are searched" and "Scan architecture"): one parallel walk over all roots, and one
//! search per file for every keyword of every requested name: a packed
//! (Teddy) search for the keywords that contain no other, confirmed in place
//! for the longer ones.

use std::fs::{File, Metadata};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind, packed};
use ignore::{WalkBuilder, WalkState};

use crate::evidence::may_be_evidence;

/// Offsets kept per (file, keyword).
pub(crate) const MAX_OFFSETS: usize = 16;
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

/// Anchors searched by one packed (Teddy) searcher, at least (the last
/// chunk may hold fewer). Teddy's cost grows with the anchors per bucket (8
/// buckets up to 32 patterns): over the 57 anchors of the 50 bench names,
/// in memory, four passes of 15 took 0.72–0.92× the time of two passes of
/// 29 on sglang, vllm and flash-attention (best of 9, loaded host), and
/// eight passes of 8 or one of 57 more than either.
const TEDDY_CHUNK: usize = 16;
/// Packed passes at most; a larger anchor set takes fewer, larger chunks up
/// to `MAX_PACKED_ANCHORS`, then one automaton pass (a DFA costs about as
/// much as four passes).
const MAX_TEDDY_CHUNKS: usize = 4;
/// Anchors searched by packed searchers at most.
const MAX_PACKED_ANCHORS: usize = 160;
/// Anchor bytes up to which the automaton fallback is a DFA: DFA
/// construction grows faster than linearly on long periodic keywords.
const MAX_DFA_ANCHOR_BYTES: usize = 64 * 1024;

/// The compiled keyword set, pattern index → keyword id.
///
/// Only the **anchors** are searched: the keywords that contain no other
/// keyword. Every keyword contains at least one anchor, and is confirmed
/// (compared in place) only where its *designated* anchor occurs, the one
/// that starts leftmost inside it, at that anchor's offset. No anchor
/// contains another, so no two start at the same byte: restarting the
/// leftmost search one byte after each anchor hit reports every anchor
/// occurrence, and each keyword occurrence is counted exactly once, from its
/// designated anchor's occurrence.
pub(crate) struct Patterns {
    search: AnchorSearch,
    /// Per anchor: the distinct keywords it confirms, with its offset in each.
    confirms: Vec<Vec<(u32, usize)>>,
    /// Distinct keyword texts.
    texts: Vec<Box<[u8]>>,
    /// Per distinct keyword: the pattern indices that spell it.
    patterns_of: Vec<Vec<u32>>,
    ids: Vec<u32>,
}

/// How the anchors are found.
enum AnchorSearch {
    /// Packed searchers over chunks of the anchors; (searcher, anchor index
    /// of its first pattern).
    Packed(Vec<(packed::Searcher, usize)>),
    /// One automaton over every anchor (overlapping: anchors never nest).
    Automaton(AhoCorasick),
}

impl Patterns {
    pub(crate) fn new(keywords: &[(u32, &str)]) -> Option<Patterns> {
        Patterns::build(keywords, true)
    }

    /// `packed`: whether the packed searchers may be used (tests turn them off
    /// to check the automaton fallback on the same inputs).
    fn build(keywords: &[(u32, &str)], packed: bool) -> Option<Patterns> {
        // Distinct texts: the same keyword twice is one search, two counts.
        let mut index: foldhash::HashMap<&[u8], u32> = foldhash::HashMap::default();
        let mut texts: Vec<&[u8]> = Vec::new();
        let mut patterns_of: Vec<Vec<u32>> = Vec::new();
        for (pi, (_, k)) in keywords.iter().enumerate() {
            if k.is_empty() {
                continue;
            }
            let u = *index.entry(k.as_bytes()).or_insert_with(|| {
                texts.push(k.as_bytes());
                patterns_of.push(Vec::new());
                (texts.len() - 1) as u32
            });
            patterns_of[u as usize].push(pi as u32);
        }
        if texts.is_empty() {
            return None;
        }
        let (anchors, designated) = anchors_of(&texts)?;
        let mut anchor_no = vec![u32::MAX; texts.len()];
        for (a, &u) in anchors.iter().enumerate() {
            anchor_no[u as usize] = a as u32;
        }
        let mut confirms: Vec<Vec<(u32, usize)>> = vec![Vec::new(); anchors.len()];
        for (u, &(anchor, offset)) in designated.iter().enumerate() {
            confirms[anchor_no[anchor as usize] as usize].push((u as u32, offset));
        }
        let anchor_texts: Vec<&[u8]> = anchors.iter().map(|&u| texts[u as usize]).collect();
        Some(Patterns {
            search: AnchorSearch::new(&anchor_texts, packed)?,
            confirms,
            texts: texts.iter().map(|t| Box::<[u8]>::from(*t)).collect(),
            patterns_of,
            ids: keywords.iter().map(|(id, _)| *id).collect(),
        })
    }
}

/// The anchors (distinct keywords containing no other, by index) and, for
/// every distinct keyword, its designated anchor and that anchor's offset in
/// it (an anchor designates itself at 0).
///
/// One overlapping automaton pass over the keyword texts themselves finds
/// what each contains; a contiguous NFA, because it builds in time linear in
/// the keyword bytes however long and repetitive a keyword is.
#[allow(clippy::type_complexity)]
fn anchors_of(texts: &[&[u8]]) -> Option<(Vec<u32>, Vec<(u32, usize)>)> {
    let inner = AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .kind(Some(AhoCorasickKind::ContiguousNFA))
        .build(texts)
        .or_else(|_| AhoCorasick::builder().build(texts))
        .ok()?;
    let contained = |u: usize| inner.find_overlapping_iter(texts[u]);
    let is_anchor: Vec<bool> = (0..texts.len())
        .map(|u| contained(u).all(|m| m.pattern().as_usize() == u))
        .collect();
    let anchors: Vec<u32> = (0..texts.len() as u32)
        .filter(|&u| is_anchor[u as usize])
        .collect();
    let designated = (0..texts.len())
        .map(|u| {
            if is_anchor[u] {
                return (u as u32, 0);
            }
            contained(u)
                .filter(|m| is_anchor[m.pattern().as_usize()])
                .map(|m| (m.pattern().as_u32(), m.start()))
                .min_by_key(|&(_, start)| start)
                // Containment orders distinct texts, so a minimal one, an
                // anchor, lies inside every keyword; the fallback is unused.
                .unwrap_or((u as u32, 0))
        })
        .collect::<Vec<_>>();
    // Were it ever used, the keyword would be searched as its own anchor.
    let mut anchors = anchors;
    for (u, &(a, _)) in designated.iter().enumerate() {
        if a as usize == u && !is_anchor[u] {
            anchors.push(u as u32);
        }
    }
    Some((anchors, designated))
}

impl AnchorSearch {
    fn new(anchors: &[&[u8]], packed: bool) -> Option<AnchorSearch> {
        if packed && anchors.len() <= MAX_PACKED_ANCHORS {
            // Balanced chunks: 57 anchors are four of 15, not three of 16 and one of 9.
            let chunk = TEDDY_CHUNK.max(anchors.len().div_ceil(MAX_TEDDY_CHUNKS));
            let size = anchors.len().div_ceil(anchors.len().div_ceil(chunk));
            let packed: Option<Vec<(packed::Searcher, usize)>> = anchors
                .chunks(size)
                .enumerate()
                .map(|(i, chunk)| {
                    packed::Config::new()
                        .match_kind(packed::MatchKind::LeftmostFirst)
                        .builder()
                        .extend(chunk)
                        .build()
                        .map(|s| (s, i * size))
                })
                .collect();
            // None where the CPU has no vector unit Teddy can use.
            if let Some(p) = packed {
                return Some(AnchorSearch::Packed(p));
            }
        }
        let bytes: usize = anchors.iter().map(|a| a.len()).sum();
        let kind = if bytes <= MAX_DFA_ANCHOR_BYTES {
            AhoCorasickKind::DFA
        } else {
            AhoCorasickKind::ContiguousNFA
        };
        AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .kind(Some(kind))
            .build(anchors)
            .or_else(|_| AhoCorasick::builder().build(anchors))
            .ok()
            .map(AnchorSearch::Automaton)
    }

    /// Calls `hit(anchor, start)` for every occurrence of every anchor, in
    /// increasing start order per packed chunk (and overall for the automaton).
    fn each(&self, hay: &[u8], mut hit: impl FnMut(usize, usize)) {
        match self {
            AnchorSearch::Packed(chunks) => {
                for (searcher, first) in chunks {
                    let mut at = 0;
                    while at < hay.len() {
                        let Some(m) =
                            searcher.find_in(hay, aho_corasick::Span::from(at..hay.len()))
                        else {
                            break;
                        };
                        hit(first + m.pattern().as_usize(), m.start());
                        at = m.start() + 1;
                    }
                }
            }
            AnchorSearch::Automaton(ac) => {
                for m in ac.find_overlapping_iter(hay) {
                    hit(m.pattern().as_usize(), m.start());
                }
            }
        }
    }
}

/// Hits of one keyword in one file.
#[derive(Debug, Clone)]
pub(crate) struct KwHit {
    pub kw: u32,
    pub count: u32,
    pub offsets: Vec<u32>,
    /// The file may be evidence for the keyword
    /// ([`crate::evidence::may_be_evidence`]).
    pub evidence: bool,
}

/// Per-thread scratch space for counting hits without allocating per file.
#[derive(Default)]
pub(crate) struct Scratch {
    /// Per distinct keyword: its index in `hits`, or `u32::MAX`.
    slot: Vec<u32>,
    hits: Vec<KwHit>,
    buf: Vec<u8>,
}

/// Every (keyword, count, first offsets) of `hay`, counting overlapping
/// occurrences because prefix keywords nest inside one another.
pub(crate) fn scan_bytes(p: &Patterns, hay: &[u8], scratch: &mut Scratch) -> Vec<KwHit> {
    if scratch.slot.len() < p.texts.len() {
        scratch.slot.resize(p.texts.len(), u32::MAX);
    }
    scratch.hits.clear();
    let (slot, hits) = (&mut scratch.slot, &mut scratch.hits);
    p.search.each(hay, |anchor, at| {
        for &(u, offset) in &p.confirms[anchor] {
            let Some(start) = at.checked_sub(offset) else {
                continue;
            };
            let text = &p.texts[u as usize];
            if !hay[start..].starts_with(text) {
                continue;
            }
            let s = &mut slot[u as usize];
            if *s == u32::MAX {
                *s = hits.len() as u32;
                hits.push(KwHit {
                    kw: u,
                    count: 0,
                    offsets: Vec::new(),
                    evidence: false,
                });
            }
            let h = &mut hits[*s as usize];
            h.count += 1;
            if h.offsets.len() < MAX_OFFSETS {
                h.offsets.push(start as u32);
            }
        }
    });
    let mut out = Vec::with_capacity(hits.len());
    for mut h in hits.drain(..) {
        slot[h.kw as usize] = u32::MAX;
        h.evidence = may_be_evidence(hay, &p.texts[h.kw as usize], h.count, &h.offsets);
        let pats = &p.patterns_of[h.kw as usize];
        for (i, &pi) in pats.iter().enumerate() {
            let kw = p.ids[pi as usize];
            if i + 1 == pats.len() {
                out.push(KwHit { kw, ..h });
                break;
            }
            out.push(KwHit {
                kw,
                count: h.count,
                offsets: h.offsets.clone(),
                evidence: h.evidence,
            });
        }
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
    let Ok(file) = File::open(path) else {
        return Scanned {
            state: FileState::Unreadable,
            hits: Vec::new(),
            bytes: None,
        };
    };
    scan_open_file(&file, size, patterns, scratch, counters, budget)
}

/// [`scan_file`] of a file already open.
fn scan_open_file(
    file: &File,
    size: u64,
    patterns: Option<&Patterns>,
    scratch: &mut Scratch,
    counters: &ScanCounters,
    budget: usize,
) -> Scanned {
    // The read buffer is lent out of the scratch so the scan can use the rest.
    let mut buf = std::mem::take(&mut scratch.buf);
    let scanned = read_and_scan(file, size, &mut buf, patterns, scratch, counters, budget);
    scratch.buf = buf;
    scanned
}

fn read_and_scan(
    file: &File,
    size: u64,
    buf: &mut Vec<u8>,
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
    // Read, never mapped: each file is searched once, right after the read
    // while it is in cache, and mapping costs more in page faults than the
    // copy. The size is known: reserve it (and one byte to see the end) and
    // read through `take`, which skips the `fstat` of `File::read_to_end`.
    buf.clear();
    buf.reserve(usize::try_from(size).unwrap_or(0).saturating_add(1));
    if file.take(u64::MAX).read_to_end(buf).is_err() {
        return none(FileState::Unreadable);
    }
    let data: &[u8] = buf;
    counters
        .bytes_read
        .fetch_add(data.len() as u64, Ordering::Relaxed);
    if memchr::memchr(0, &data[..data.len().min(BINARY_PEEK)]).is_some() {
        counters.skipped_binary.fetch_add(1, Ordering::Relaxed);
        return none(FileState::Binary);
    }
    counters.files_scanned.fetch_add(1, Ordering::Relaxed);
    let hits = match patterns {
        Some(p) => scan_bytes(p, data, scratch),
        None => Vec::new(),
    };
    let mut bytes = None;
    // Only a file that may prove something is read again while ranking.
    if hits.iter().any(|h| h.evidence) {
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

/// Whether a file name ends with one of `extensions` (ASCII case ignored),
/// with something before it. Compared on the name's bytes: this runs for
/// every walked file, so it neither decodes nor allocates.
fn admitted(name: &std::ffi::OsStr, extensions: &[String]) -> bool {
    let name = name.as_encoded_bytes();
    extensions.iter().any(|e| {
        let e = e.as_bytes();
        name.len() > e.len() && name[name.len() - e.len()..].eq_ignore_ascii_case(e)
    })
}

/// The order of `Path`'s `Ord` (component by component) for the walked
/// paths of one root, compared on their bytes: with no empty, `.` or `..`
/// components, comparing components is comparing the bytes with `/` below
/// every other byte. `Path`'s own comparison parses components and cost ~10%
/// of a small tree's ranking thread.
fn path_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    let (a, b) = (
        a.as_os_str().as_encoded_bytes(),
        b.as_os_str().as_encoded_bytes(),
    );
    let same = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    // `/` sorts first; every other byte keeps its order above it.
    let rank = |c: Option<&u8>| c.map(|&c| if c == b'/' { 0 } else { u16::from(c) + 1 });
    rank(a.get(same)).cmp(&rank(b.get(same)))
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
            if ft.is_dir() || !admitted(entry.file_name(), plan.extensions) {
                return WalkState::Continue;
            }
            let path = entry.path();
            // A regular file is opened first and its metadata read from the
            // open file: no second lookup of the path. Anything else (a file
            // symlink is read when its target is a regular file; a FIFO is
            // never opened) and a file that does not open are looked up by path.
            let opened = (ft.is_file() && patterns.is_some())
                .then(|| File::open(path).ok())
                .flatten()
                .and_then(|f| f.metadata().ok().map(|m| (f, m)));
            let (file, meta) = match opened {
                Some((f, m)) => (Some(f), Ok(m)),
                None if ft.is_symlink() => (None, std::fs::metadata(path)),
                None => (None, entry.metadata().map_err(std::io::Error::other)),
            };
            let Ok(meta) = meta else {
                return WalkState::Continue;
            };
            if !meta.is_file() {
                return WalkState::Continue;
            }
            let (size, mtime, dev, ino) = stamp(&meta);
            // One walked root owns everything; several need the deepest
            // one that holds the path.
            let root = match owners.as_slice() {
                [(only, _)] => *only,
                _ => owners
                    .iter()
                    .filter(|(_, r)| path.starts_with(r))
                    .max_by_key(|(_, r)| r.as_os_str().len())
                    .map_or(0, |(i, _)| *i),
            };
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
                let s = match &file {
                    Some(f) => scan_open_file(
                        f,
                        size,
                        patterns,
                        &mut scratch,
                        counters,
                        plan.retain_budget,
                    ),
                    None => scan_file(
                        path,
                        size,
                        patterns,
                        &mut scratch,
                        counters,
                        plan.retain_budget,
                    ),
                };
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
    all.sort_by(|a, b| {
        a.entry
            .root
            .cmp(&b.entry.root)
            .then_with(|| path_order(&a.entry.path, &b.entry.path))
    });
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

    fn scanned(p: &Patterns, hay: &[u8]) -> Vec<(u32, u32, Vec<u32>)> {
        let mut got: Vec<(u32, u32, Vec<u32>)> = scan_bytes(p, hay, &mut Scratch::default())
            .into_iter()
            .map(|h| (h.kw, h.count, h.offsets))
            .collect();
        got.sort();
        got
    }

    /// Every keyword's naive hits, under its id; both scan paths must agree.
    fn check(keywords: &[String], hay: &[u8]) -> Result<(), TestCaseError> {
        // Ids unlike indices, in reverse, so a mix-up cannot pass.
        let pairs: Vec<(u32, &str)> = keywords
            .iter()
            .enumerate()
            .map(|(i, k)| ((keywords.len() - i) as u32 * 7, k.as_str()))
            .collect();
        let mut want: Vec<(u32, u32, Vec<u32>)> = naive(keywords, hay)
            .into_iter()
            .map(|(i, n, o)| (pairs[i as usize].0, n, o))
            .collect();
        want.sort();
        for packed in [true, false] {
            let p = Patterns::build(&pairs, packed).unwrap();
            prop_assert_eq!(scanned(&p, hay), want.clone(), "packed: {}", packed);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        // The anchored scan finds exactly the overlapping occurrences, with
        // nested, overlapping and repeated keywords.
        #[test]
        fn anchored_scan_counts_every_overlapping_occurrence(
            keywords in proptest::collection::btree_set("[ab_]{1,6}", 1..8),
            hay in "[ab_c]{0,300}",
        ) {
            let keywords: Vec<String> = keywords.into_iter().collect();
            check(&keywords, hay.as_bytes())?;
        }

        // Longer and duplicated keywords over a larger alphabet, in haystacks
        // long enough for the vector searcher (short ones take its fallback),
        // and keyword sets past one packed chunk.
        #[test]
        fn anchored_scan_equals_naive_search_on_keyword_like_sets(
            keywords in proptest::collection::vec("[a-c_]{1,4}(_[a-d]{1,3}){0,4}", 1..90),
            hay in "([a-d_ ]{0,12}|fused|a_b_c|\\n){0,200}",
        ) {
            check(&keywords, hay.as_bytes())?;
        }
    }

    #[test]
    fn a_keyword_inside_another_counts_in_both_and_a_duplicate_counts_twice() {
        let keywords: Vec<String> = ["fused_moe", "fused_moe_kernel", "moe_kernel", "fused_moe"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let hay = b"x fused_moe_kernel(fused_moe) moe_kernel fused_moe_kernel";
        check(&keywords, hay).unwrap();
        let pairs: Vec<(u32, &str)> = keywords
            .iter()
            .enumerate()
            .map(|(i, k)| (i as u32, k.as_str()))
            .collect();
        let p = Patterns::new(&pairs).unwrap();
        let got = scanned(&p, hay);
        assert_eq!(
            got,
            vec![
                (0, 3, vec![2, 19, 41]),
                (1, 2, vec![2, 41]),
                (2, 3, vec![8, 30, 47]),
                (3, 3, vec![2, 19, 41]),
            ]
        );
    }
}
