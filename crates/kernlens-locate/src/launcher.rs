//! Launcher evidence (locate.md "Launcher evidence from traces"): the Python frame that launched each kernel,
//! from a `with_stack` trace's kernel, launch and `python_function` events.
//! This module never parses JSON; events come from the trace crate's
//! observer (feature `trace`) or any other source through [`LauncherIndex::from_events`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// Frame paths under these prefixes are runtime machinery, not the code that
/// chose the kernel. All of `triton/` (not only `triton/runtime/`): in the
/// eager fixture the frame below user code is `triton/backends/nvidia/driver.py`.
pub const DEFAULT_SKIP_PREFIXES: &[&str] = &["triton/", "torch/", "aiter/jit/", "flydsl/compiler/"];

/// Launches examined per kernel name.
pub const DEFAULT_MAX_LAUNCHES: usize = 256;

/// Kernel correlations remembered per name before graph launches are
/// filtered out (bounds memory on huge traces).
const MAX_REMEMBERED: usize = 4096;

/// How the index is built.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LauncherOptions {
    /// Path prefixes whose frames are skipped.
    pub skip_prefixes: Vec<String>,
    /// Launches examined per kernel name.
    pub max_launches: usize,
}

impl Default for LauncherOptions {
    fn default() -> Self {
        LauncherOptions {
            skip_prefixes: DEFAULT_SKIP_PREFIXES
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            max_launches: DEFAULT_MAX_LAUNCHES,
        }
    }
}

impl LauncherOptions {
    /// The defaults: [`DEFAULT_SKIP_PREFIXES`] and [`DEFAULT_MAX_LAUNCHES`].
    pub fn new() -> Self {
        Self::default()
    }

    /// The same options skipping frames under these path prefixes instead.
    pub fn with_skip_prefixes<I, S>(mut self, prefixes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.skip_prefixes = prefixes.into_iter().map(Into::into).collect();
        self
    }

    /// The same options examining at most `max_launches` launches per kernel name.
    pub fn with_max_launches(mut self, max_launches: usize) -> Self {
        self.max_launches = max_launches;
        self
    }
}

/// A `pid` or `tid` of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EventId<'a> {
    /// An integer id.
    Int(i64),
    /// A string id.
    Str(&'a str),
    /// Absent.
    Null,
}

/// One trace event the index needs: a kernel, a launch (`cuda_runtime`,
/// `cuda_driver`) or a `python_function` frame.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct LauncherEvent<'a> {
    /// The event category.
    pub cat: &'a str,
    /// The event name.
    pub name: &'a str,
    /// Process id.
    pub pid: EventId<'a>,
    /// Thread id.
    pub tid: EventId<'a>,
    /// Start, ns.
    pub ts_ns: i64,
    /// Duration, ns.
    pub dur_ns: i64,
    /// `args.correlation`.
    pub correlation: Option<i64>,
}

impl<'a> LauncherEvent<'a> {
    /// An event from its fields.
    pub fn new(
        cat: &'a str,
        name: &'a str,
        pid: EventId<'a>,
        tid: EventId<'a>,
        ts_ns: i64,
        dur_ns: i64,
        correlation: Option<i64>,
    ) -> Self {
        LauncherEvent {
            cat,
            name,
            pid,
            tid,
            ts_ns,
            dur_ns,
            correlation,
        }
    }
}

/// The launcher of one kernel name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Launcher {
    /// The frame's path as the trace records it.
    pub path: String,
    /// The frame's line.
    pub line: usize,
    /// The frame's function.
    pub function: String,
    /// Launches examined.
    pub launches: usize,
    /// Distinct frames chosen across those launches.
    pub distinct_frames: usize,
}

/// Launchers by kernel name.
#[derive(Debug, Clone, Default)]
pub struct LauncherIndex {
    by_name: HashMap<String, Launcher>,
    by_key: HashMap<String, String>,
}

impl LauncherIndex {
    /// Builds the index from events in file order.
    pub fn from_events<'a>(
        events: impl IntoIterator<Item = LauncherEvent<'a>>,
        opts: &LauncherOptions,
    ) -> LauncherIndex {
        let mut b = LauncherIndexBuilder::new(opts.clone());
        for e in events {
            b.observe(&e);
        }
        b.finish()
    }

    /// Reads a trace once for its launcher evidence.
    #[cfg(feature = "trace")]
    pub fn from_trace(
        source: &kernlens_trace::TraceSource,
        opts: &LauncherOptions,
    ) -> Result<LauncherIndex, crate::LocateError> {
        let mut b = LauncherIndexBuilder::new(opts.clone());
        kernlens_trace::analyze_observed(source, &kernlens_trace::Options::default(), &mut b)
            .map_err(|e| crate::LocateError::Trace {
                trace: source.file().to_owned(),
                message: e.to_string(),
            })?;
        Ok(b.finish())
    }

    /// The launcher of a kernel name: by the exact trace name, else by its
    /// identity key (so a decorated spelling finds the plain one).
    pub fn get(&self, name: &str) -> Option<&Launcher> {
        self.by_name.get(name).or_else(|| {
            self.by_key
                .get(&kernlens_ident::python_key(name))
                .and_then(|n| self.by_name.get(n))
        })
    }

    /// Number of kernel names with a launcher.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// True when no kernel has a launcher (a trace without stacks).
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// Every (kernel name, launcher), sorted by name.
    pub fn entries(&self) -> Vec<(&str, &Launcher)> {
        let mut v: Vec<(&str, &Launcher)> =
            self.by_name.iter().map(|(k, l)| (k.as_str(), l)).collect();
        v.sort_by(|a, b| a.0.cmp(b.0));
        v
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum OwnedId {
    Int(i64),
    Str(Box<str>),
    Null,
}

impl From<EventId<'_>> for OwnedId {
    fn from(id: EventId<'_>) -> Self {
        match id {
            EventId::Int(i) => OwnedId::Int(i),
            EventId::Str(s) => OwnedId::Str(s.into()),
            EventId::Null => OwnedId::Null,
        }
    }
}

type ThreadKey = (OwnedId, OwnedId);

struct Frame {
    ts: i64,
    end: i64,
    frame: u32,
    parent: u32,
}

struct Launch {
    thread: ThreadKey,
    ts: i64,
    end: i64,
    graph: bool,
}

/// Collects events one at a time (e.g. from the trace reader's observer)
/// and builds a [`LauncherIndex`].
///
/// Its maps are looked up once per observed event (every kernel's name, every launch's
/// correlation), so they hash with foldhash rather than std's SipHash, which was 5% of a
/// `triage` read's samples on the 827 MB trace (PERFORMANCE.md, session 8).
pub struct LauncherIndexBuilder {
    opts: LauncherOptions,
    /// Per skip prefix `p`: `p`, `/site-packages/p`, `/dist-packages/p`, spelled once here
    /// rather than formatted for every `python_function` event.
    skip: Vec<[String; 3]>,
    frames: foldhash::HashMap<ThreadKey, Vec<Frame>>,
    frame_names: Vec<(String, usize, String)>,
    frame_ids: foldhash::HashMap<String, u32>,
    launches: foldhash::HashMap<i64, Launch>,
    kernels: Vec<(String, Vec<i64>)>,
    kernel_ids: foldhash::HashMap<String, usize>,
    /// Kernels by the trace reader's name numbers (`ObservedEvent::name_id`) of one read:
    /// the read's serial (the ids' high half) and, per number (the low half), the index in
    /// `kernels`. A kernel's name can be hundreds of bytes: found by its number, it is not
    /// hashed again for every launch of it.
    numbered: (u64, Vec<Option<u32>>),
}

impl std::fmt::Debug for LauncherIndexBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LauncherIndexBuilder")
            .field("frames", &self.frame_names.len())
            .field("launches", &self.launches.len())
            .field("kernels", &self.kernels.len())
            .finish()
    }
}

/// A reader's name number as (read serial, number in that read): `ObservedEvent::name_id`
/// carries the serial in its high half.
fn split_name_id(id: u64) -> (u64, usize) {
    (id >> 32, (id & u64::from(u32::MAX)) as usize)
}

/// Name numbers of one read the builder keeps a slot for (a trace has a few thousand
/// names; past this, a name takes the hash path).
const MAX_NAME_NUMBERS: usize = 1 << 20;

/// `frame_ids`' value for a `python_function` name that is no frame the index keeps
/// (not `<path>(<line>): <function>`, or under a skipped prefix).
const NOT_A_FRAME: u32 = u32::MAX;

const NO_PARENT: u32 = u32::MAX;

impl LauncherIndexBuilder {
    /// An empty builder.
    pub fn new(opts: LauncherOptions) -> Self {
        let skip = opts
            .skip_prefixes
            .iter()
            .map(|p| {
                [
                    p.clone(),
                    format!("/site-packages/{p}"),
                    format!("/dist-packages/{p}"),
                ]
            })
            .collect();
        LauncherIndexBuilder {
            opts,
            skip,
            frames: foldhash::HashMap::default(),
            frame_names: Vec::new(),
            frame_ids: foldhash::HashMap::default(),
            launches: foldhash::HashMap::default(),
            kernels: Vec::new(),
            kernel_ids: foldhash::HashMap::default(),
            numbered: (0, Vec::new()),
        }
    }

    /// Takes one event; events of other categories are ignored.
    pub fn observe(&mut self, e: &LauncherEvent<'_>) {
        self.observe_numbered(e, None);
    }

    /// [`LauncherIndexBuilder::observe`] with the trace reader's number for the name
    /// (equal numbers are equal names: `kernlens_trace::ObservedEvent::name_id`).
    fn observe_numbered(&mut self, e: &LauncherEvent<'_>, name_id: Option<u64>) {
        let end = e.ts_ns.saturating_add(e.dur_ns.max(0));
        match e.cat {
            "python_function" => {
                // A step repeats the same frames: each name is parsed and tested against
                // the skip prefixes once, and remembered either way.
                let id = match self.frame_ids.get(e.name) {
                    Some(&NOT_A_FRAME) => return,
                    Some(&id) => id,
                    None => {
                        let id = match parse_frame(e.name) {
                            Some((path, line, function)) if !self.skipped(path) => {
                                self.frame_names
                                    .push((path.to_owned(), line, function.to_owned()));
                                (self.frame_names.len() - 1) as u32
                            }
                            _ => NOT_A_FRAME,
                        };
                        self.frame_ids.insert(e.name.to_owned(), id);
                        if id == NOT_A_FRAME {
                            return;
                        }
                        id
                    }
                };
                self.frames
                    .entry((e.pid.into(), e.tid.into()))
                    .or_default()
                    .push(Frame {
                        ts: e.ts_ns,
                        end,
                        frame: id,
                        parent: NO_PARENT,
                    });
            }
            "cuda_runtime" | "cuda_driver" => {
                if let Some(c) = e.correlation {
                    self.launches.insert(
                        c,
                        Launch {
                            thread: (e.pid.into(), e.tid.into()),
                            ts: e.ts_ns,
                            end,
                            graph: mentions_graph_launch(e.name),
                        },
                    );
                }
            }
            "kernel" => self.kernel(e.name, e.correlation, name_id),
            _ => {}
        }
    }

    /// Takes a kernel launch: its correlation, among the first [`MAX_REMEMBERED`] of its name.
    fn kernel(&mut self, name: &str, correlation: Option<i64>, name_id: Option<u64>) {
        if let Some(c) = correlation {
            let idx = self.kernel_index(name, name_id);
            self.remember(idx, c);
        }
    }

    /// Adds a launch of kernel `idx` to its list, while the list is short enough.
    fn remember(&mut self, idx: usize, correlation: i64) {
        let list = &mut self.kernels[idx].1;
        if list.len() < MAX_REMEMBERED {
            list.push(correlation);
        }
    }

    /// The index in `kernels` of the name the reader numbered `name_id` in this read,
    /// when a kernel of that number was taken before.
    fn known_kernel(&self, name_id: u64) -> Option<usize> {
        let (read, n) = split_name_id(name_id);
        if self.numbered.0 != read {
            return None;
        }
        match self.numbered.1.get(n) {
            Some(&Some(i)) => Some(i as usize),
            _ => None,
        }
    }

    /// The index of kernel `name` in `kernels`, added when new: by the reader's number
    /// for it when there is one and it was seen before, else by the name's hash.
    fn kernel_index(&mut self, name: &str, name_id: Option<u64>) -> usize {
        // (read serial, number) of a number the table can hold.
        let key = name_id
            .map(split_name_id)
            .filter(|&(_, n)| n < MAX_NAME_NUMBERS);
        if let Some(i) = name_id.and_then(|id| self.known_kernel(id)) {
            return i;
        }
        if let Some((read, _)) = key
            && self.numbered.0 != read
        {
            // Another read's numbers: this one's start afresh.
            self.numbered = (read, Vec::new());
        }
        let idx = match self.kernel_ids.get(name) {
            Some(&i) => i,
            None => {
                self.kernels.push((name.to_owned(), Vec::new()));
                self.kernel_ids
                    .insert(name.to_owned(), self.kernels.len() - 1);
                self.kernels.len() - 1
            }
        };
        if let (Some((_, n)), Ok(i)) = (key, u32::try_from(idx)) {
            if self.numbered.1.len() <= n {
                self.numbered.1.resize(n + 1, None);
            }
            self.numbered.1[n] = Some(i);
        }
        idx
    }

    fn skipped(&self, path: &str) -> bool {
        self.skip.iter().any(|[prefix, site, dist]| {
            path.starts_with(prefix.as_str())
                || path.contains(site.as_str())
                || path.contains(dist.as_str())
        })
    }

    /// Resolves every kernel's launcher.
    pub fn finish(mut self) -> LauncherIndex {
        for frames in self.frames.values_mut() {
            frames.sort_by(|a, b| a.ts.cmp(&b.ts).then(b.end.cmp(&a.end)));
            let mut stack: Vec<u32> = Vec::new();
            for i in 0..frames.len() {
                while let Some(&top) = stack.last() {
                    let t = &frames[top as usize];
                    if t.end >= frames[i].end && t.ts <= frames[i].ts {
                        break;
                    }
                    stack.pop();
                }
                frames[i].parent = stack.last().copied().unwrap_or(NO_PARENT);
                stack.push(i as u32);
            }
        }
        let mut index = LauncherIndex::default();
        for (name, correlations) in &self.kernels {
            let mut examined = 0usize;
            // frame id → (count, first position)
            let mut chosen: HashMap<u32, (usize, usize)> = HashMap::new();
            for c in correlations {
                if examined >= self.opts.max_launches {
                    break;
                }
                let Some(launch) = self.launches.get(c) else {
                    continue;
                };
                if launch.graph {
                    continue;
                }
                examined += 1;
                if let Some(frame) = self.enclosing(launch) {
                    let n = chosen.len();
                    chosen.entry(frame).or_insert((0, n)).0 += 1;
                }
            }
            let best = chosen
                .iter()
                .max_by(|a, b| a.1.0.cmp(&b.1.0).then(b.1.1.cmp(&a.1.1)));
            if let Some((&frame, _)) = best {
                let (path, line, function) = &self.frame_names[frame as usize];
                index.by_name.insert(
                    name.clone(),
                    Launcher {
                        path: path.clone(),
                        line: *line,
                        function: function.clone(),
                        launches: examined,
                        distinct_frames: chosen.len(),
                    },
                );
                index
                    .by_key
                    .entry(kernlens_ident::python_key(name))
                    .or_insert_with(|| name.clone());
            }
        }
        index
    }

    /// The innermost kept frame on the launch's thread that encloses it.
    fn enclosing(&self, launch: &Launch) -> Option<u32> {
        let frames = self.frames.get(&launch.thread)?;
        let pos = frames.partition_point(|f| f.ts <= launch.ts);
        let mut i = pos.checked_sub(1)? as u32;
        loop {
            let f = &frames[i as usize];
            if f.ts <= launch.ts && f.end >= launch.end {
                return Some(f.frame);
            }
            if f.parent == NO_PARENT {
                return None;
            }
            i = f.parent;
        }
    }
}

#[cfg(feature = "trace")]
impl kernlens_trace::EventObserver for LauncherIndexBuilder {
    fn observe(&mut self, e: &kernlens_trace::ObservedEvent<'_>) {
        // Most observed events are kernels, copies and memsets: a kernel goes straight to
        // its list, a copy is not wanted, and neither needs the event rebuilt.
        match e.cat {
            "kernel" => return self.kernel(e.name, e.correlation, e.name_id),
            "gpu_memcpy" | "gpu_memset" => return,
            _ => {}
        }
        fn id(t: kernlens_trace::TraceId<'_>) -> EventId<'_> {
            match t {
                kernlens_trace::TraceId::Int(i) => EventId::Int(i),
                kernlens_trace::TraceId::Str(s) => EventId::Str(s),
                _ => EventId::Null,
            }
        }
        let ev = LauncherEvent::new(
            e.cat,
            e.name,
            id(e.pid),
            id(e.tid),
            e.ts_ns,
            e.dur_ns,
            e.correlation,
        );
        self.observe_numbered(&ev, e.name_id);
    }

    /// Copies and memsets launch nothing the index keeps.
    fn observes_copies(&self) -> bool {
        false
    }

    /// A kernel whose name number this read already gave is taken by its number: the
    /// same as `kernel` does with the whole event, without the reader decoding it.
    fn observe_numbered(&mut self, e: &kernlens_trace::NumberedEvent) -> bool {
        if e.kind != kernlens_trace::DeviceKind::Kernel {
            return false;
        }
        let Some(c) = e.correlation else {
            // `kernel` takes nothing without a correlation.
            return true;
        };
        match self.known_kernel(e.name_id) {
            Some(idx) => {
                self.remember(idx, c);
                true
            }
            None => false,
        }
    }
}

/// Whether a launch's name contains `GraphLaunch` (`cudaGraphLaunch`, `hipGraphLaunch`):
/// `kernlens_trace::is_graph_launch`'s test, written here because this crate builds
/// without kernlens-trace (its `trace` feature is optional). Looked for from each `G`,
/// since most launches (`cudaLaunchKernel`) have none and a substring search's set-up
/// cost more than the scan.
fn mentions_graph_launch(name: &str) -> bool {
    let b = name.as_bytes();
    memchr::memchr_iter(b'G', b).any(|i| b[i..].starts_with(b"GraphLaunch"))
}

/// `<path>(<line>): <function>`, not starting with `<` and not an
/// `nn.Module: …` frame.
pub(crate) fn parse_frame(name: &str) -> Option<(&str, usize, &str)> {
    if name.starts_with('<') || name.starts_with("nn.Module:") {
        return None;
    }
    let bytes = name.as_bytes();
    let mut from = 0;
    while let Some(rel) = name[from..].find('(') {
        let open = from + rel;
        let digits_end = bytes[open + 1..]
            .iter()
            .position(|b| !b.is_ascii_digit())
            .map(|p| open + 1 + p)?;
        if digits_end > open + 1 && name[digits_end..].starts_with("): ") && open > 0 {
            let line = name[open + 1..digits_end].parse().ok()?;
            return Some((&name[..open], line, &name[digits_end + 3..]));
        }
        from = open + 1;
    }
    None
}

/// Resolves a frame path against the roots (locate.md "Launcher evidence from traces: Resolving the frame path").
pub(crate) fn resolve_frame_path(frame: &str, roots: &[PathBuf]) -> Option<PathBuf> {
    let p = Path::new(frame);
    if p.is_relative() {
        let first = p.components().next()?.as_os_str().to_owned();
        for r in roots {
            if r.file_name() == Some(first.as_os_str())
                && let Some(parent) = r.parent()
            {
                let c = parent.join(p);
                if c.is_file() {
                    return Some(c);
                }
            }
            let c = r.join(p);
            if c.is_file() {
                return Some(c);
            }
        }
        return None;
    }
    if p.is_file() {
        return Some(p.to_path_buf());
    }
    for r in roots {
        let Some(base) = r.file_name() else { continue };
        let marker = format!("/{}/", base.to_string_lossy());
        if let Some(i) = frame.find(&marker) {
            let c = r.join(&frame[i + marker.len()..]);
            if c.is_file() {
                return Some(c);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn graph_launches_are_told_from_other_launches() {
        for (name, graph) in [
            ("cudaGraphLaunch", true),
            ("hipGraphLaunch", true),
            ("cudaGraphLaunch_v10000", true),
            ("cudaLaunchKernel", false),
            ("cudaGraphInstantiate", false),
            ("Graph", false),
            ("GGraphLaunch", true),
            ("", false),
        ] {
            assert_eq!(mentions_graph_launch(name), graph, "{name}");
        }
    }

    proptest! {
        /// The scan from each `G` says what a substring search says.
        #[test]
        fn graph_launch_scan_is_a_substring_search(
            pre in "[GaLrphuncx]{0,12}", post in "[GaLrphuncx]{0,12}", mid in any::<bool>(),
        ) {
            let name = format!("{pre}{}{post}", if mid { "GraphLaunch" } else { "" });
            prop_assert_eq!(mentions_graph_launch(&name), name.contains("GraphLaunch"));
        }
    }

    /// A Python frame name is parsed and tested against the skip prefixes once: a name
    /// that is no frame (or a skipped one) stays out on every later event, and a kept
    /// one keeps its frame.
    #[test]
    fn frame_names_are_judged_once_and_the_same_every_time() {
        let mut b = LauncherIndexBuilder::new(LauncherOptions::default());
        let ev = |name: &'static str, ts: i64| {
            LauncherEvent::new(
                "python_function",
                name,
                EventId::Int(1),
                EventId::Int(1),
                ts,
                5,
                None,
            )
        };
        for round in 0..3 {
            for name in [
                "train.py(12): step",
                "nn.Module: Linear_0",
                "<built-in method mm>",
                "/usr/lib/python3/site-packages/torch/nn/functional.py(10): linear",
            ] {
                b.observe(&ev(name, round * 10));
            }
        }
        assert_eq!(
            b.frame_names,
            [("train.py".to_owned(), 12, "step".to_owned())]
        );
        let frames = b
            .frames
            .get(&(EventId::Int(1).into(), EventId::Int(1).into()));
        assert_eq!(frames.map(Vec::len), Some(3));
        assert_eq!(b.frame_ids.len(), 4);
        assert_eq!(
            b.frame_ids
                .values()
                .filter(|&&id| id == NOT_A_FRAME)
                .count(),
            3
        );
    }

    /// Kernels found by a reader's numbers: a number of another read naming another
    /// kernel finds that kernel, not the one the number named before.
    #[test]
    fn a_name_number_is_trusted_only_within_its_read() {
        let mut b = LauncherIndexBuilder::new(LauncherOptions::default());
        let kernel = |name: &'static str, corr: i64| {
            LauncherEvent::new(
                "kernel",
                name,
                EventId::Int(0),
                EventId::Int(7),
                corr,
                1,
                Some(corr),
            )
        };
        let read = |serial: u64, n: u64| Some(serial << 32 | n);
        b.observe_numbered(&kernel("gemm", 1), read(4, 0));
        b.observe_numbered(&kernel("gemm", 2), read(4, 0));
        b.observe_numbered(&kernel("softmax", 3), read(5, 0));
        b.observe_numbered(&kernel("gemm", 4), read(5, 1));
        b.observe_numbered(&kernel("softmax", 5), None);
        let kernels: Vec<(&str, &[i64])> = b
            .kernels
            .iter()
            .map(|(n, c)| (n.as_str(), c.as_slice()))
            .collect();
        assert_eq!(
            kernels,
            [("gemm", &[1, 2, 4][..]), ("softmax", &[3, 5][..])]
        );
    }
}
