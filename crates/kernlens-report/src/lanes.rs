//! The timeline's lanes: GPU intervals seen during the one read, binned per stream.
//!
//! [`LaneRecorder`] rides along the trace read as an [`EventObserver`] and keeps one
//! 32-byte interval per GPU event; [`LaneRecorder::finish`] sorts each stream's
//! intervals once and bins every union the page draws (busy, compute, communication,
//! memcpy, graph replays) into at most [`MAX_BINS`] columns, so what is drawn does not
//! grow with the trace. The same intervals give each lane's figures for the analysis'
//! scope, by the trace crate's rules (trace.md "Timeline"): an event counts when its start lies
//! in the window, clipped to it.

use std::sync::Arc;
use std::thread::JoinHandle;

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use kernlens_trace::{
    Analysis, COMM_PATTERNS, DeviceKind, EventObserver, NumberedEvent, ObservedEvent, StreamId,
    TimeWindow, TraceId,
};

use crate::bins::{Coverage, Edges, UnionBins};
use crate::packed::{Merge, Ordered, Packed};

/// Track numbers of one read the recorder keeps a lane slot for (a trace has a few
/// dozen `(pid, tid)` pairs with device events; past this, an event is recorded whole).
const MAX_TRACK_NUMBERS: usize = 1 << 16;

/// A reader's number (`ObservedEvent::name_id`, `track_id`) as (read serial, number in
/// that read): the serial is its high half.
fn split_id(id: u64) -> (u64, usize) {
    (id >> 32, (id & u64::from(u32::MAX)) as usize)
}

/// The most bins a lane is drawn with.
pub const MAX_BINS: usize = 2000;

/// The bins a lane gets by default (one per pixel of the drawn timeline).
pub const DEFAULT_BINS: usize = 1000;

/// The most lane × bin cells a timeline has: with many streams each lane gets fewer
/// bins, so that even columns that all differ (about 125 bytes of markup per cell,
/// every layer and strip drawn) keep the page under 2 MB.
pub const MAX_CELLS: usize = 12_000;

/// The fewest bins a lane is cut into when [`MAX_CELLS`] is shared by many lanes.
const MIN_BINS: usize = 100;

/// How the lanes are binned.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LaneOptions {
    /// Bins per lane (clamped to `1..=MAX_BINS`, and to `MAX_CELLS` shared by the lanes).
    pub bins: usize,
    /// Extra kernel-name substrings counted as communication, as in the analysis'
    /// `extra_comm_patterns`.
    pub extra_comm_patterns: Vec<String>,
}

impl Default for LaneOptions {
    fn default() -> Self {
        LaneOptions {
            bins: DEFAULT_BINS,
            extra_comm_patterns: Vec::new(),
        }
    }
}

impl LaneOptions {
    /// The same options with `bins` per lane.
    pub fn with_bins(mut self, bins: usize) -> Self {
        self.bins = bins;
        self
    }

    /// The same options with extra communication patterns.
    pub fn with_extra_comm_patterns(mut self, patterns: Vec<String>) -> Self {
        self.extra_comm_patterns = patterns;
        self
    }
}

/// What kind of device work an interval is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Compute,
    Comm,
    Memcpy,
}

/// One GPU event: `[s, e)` in ns, unpacked (packed.rs keeps them packed during the
/// read). The correlation is a value and a flag, not an `Option<i64>`, so that an
/// interval is 32 bytes, not 40.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Iv {
    pub(crate) s: i64,
    pub(crate) e: i64,
    corr_value: i64,
    has_corr: bool,
    pub(crate) kind: Kind,
}

const _: () = assert!(std::mem::size_of::<Iv>() == 32);

impl Iv {
    #[inline(always)]
    pub(crate) fn new(s: i64, e: i64, corr: Option<i64>, kind: Kind) -> Self {
        Iv {
            s,
            e,
            corr_value: corr.unwrap_or(0),
            has_corr: corr.is_some(),
            kind,
        }
    }

    pub(crate) fn corr(&self) -> Option<i64> {
        self.has_corr.then_some(self.corr_value)
    }
}

#[derive(Debug)]
struct RawLane {
    pid: StreamId,
    tid: StreamId,
    ivs: Packed,
}

fn owned(id: TraceId<'_>) -> StreamId {
    match id {
        TraceId::Int(i) => StreamId::Int(i),
        TraceId::Str(s) => StreamId::Str(s.to_owned()),
        _ => StreamId::Null,
    }
}

fn same(a: &StreamId, b: TraceId<'_>) -> bool {
    match (a, b) {
        (StreamId::Int(x), TraceId::Int(y)) => *x == y,
        (StreamId::Str(x), TraceId::Str(y)) => x == y,
        (StreamId::Null, TraceId::Null) => true,
        _ => false,
    }
}

/// Collects the GPU intervals of one read, per stream, for the timeline.
///
/// ```
/// use kernlens_report::{LaneOptions, LaneRecorder};
/// use kernlens_trace::{Options, TraceSource, analyze_observed};
///
/// let trace = br#"{"traceEvents":[
///   {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":0,"dur":600},
///   {"ph":"X","cat":"kernel","name":"ncclAllReduce","pid":0,"tid":9,"ts":400,"dur":600}
/// ]}"#;
/// let source = TraceSource::from_bytes("t.json", trace.to_vec());
/// let mut recorder = LaneRecorder::new(LaneOptions::default().with_bins(10));
/// let analysis = analyze_observed(&source, &Options::default(), &mut recorder)?;
/// let lanes = recorder.finish(&analysis);
/// assert_eq!(lanes.streams.len(), 2);
/// assert_eq!(lanes.pooled.bins.len(), 10);
/// assert_eq!(lanes.pooled.scope.busy_ns, 1_000_000);
/// // 200 µs where the all-reduce runs under the GEMM.
/// assert_eq!(lanes.pooled.bins.iter().map(|b| b.overlap_ns).sum::<i64>(), 200_000);
/// # Ok::<(), kernlens_trace::TraceError>(())
/// ```
#[derive(Debug)]
pub struct LaneRecorder {
    options: LaneOptions,
    lanes: Vec<RawLane>,
    by_stream: HashMap<(StreamId, StreamId), usize>,
    last: Option<usize>,
    /// The last lane when its ids are integers, to compare without matching.
    last_int: Option<(i64, i64, usize)>,
    /// The recorded extent: the first start and the last end.
    lo: i64,
    hi: i64,
    /// Whether each kernel name is communication, decided once per name.
    comm: CommNames,
    /// The lane of each `(pid, tid)` number the reader gave (`ObservedEvent::track_id`),
    /// for the read whose serial is the first: an event whose track and name are known
    /// is recorded from its numbers alone.
    by_track: (Option<u64>, Vec<Option<u32>>),
    runtime_graph: HashSet<i64>,
    driver_graph: HashSet<i64>,
    /// The binning started when the read was done.
    background: Option<Background>,
}

impl LaneRecorder {
    /// A recorder binning with `options`.
    pub fn new(options: LaneOptions) -> Self {
        let mut options = options;
        for p in &mut options.extra_comm_patterns {
            *p = p.to_ascii_lowercase();
        }
        LaneRecorder {
            options,
            lanes: Vec::new(),
            by_stream: HashMap::new(),
            last: None,
            last_int: None,
            lo: i64::MAX,
            hi: i64::MIN,
            comm: CommNames::default(),
            by_track: (None, Vec::new()),
            runtime_graph: HashSet::new(),
            driver_graph: HashSet::new(),
            background: None,
        }
    }

    #[inline]
    fn lane(&mut self, pid: TraceId<'_>, tid: TraceId<'_>) -> usize {
        // Events come in long runs from one stream: most need no hash, and most ids
        // are integers.
        if let (TraceId::Int(p), TraceId::Int(t), Some((lp, lt, i))) = (pid, tid, self.last_int)
            && p == lp
            && t == lt
        {
            return i;
        }
        self.lane_of(pid, tid)
    }

    fn lane_of(&mut self, pid: TraceId<'_>, tid: TraceId<'_>) -> usize {
        if let Some(i) = self.last
            && let Some(l) = self.lanes.get(i)
            && same(&l.pid, pid)
            && same(&l.tid, tid)
        {
            return i;
        }
        let key = (owned(pid), owned(tid));
        let next = self.lanes.len();
        let i = *self.by_stream.entry(key.clone()).or_insert(next);
        if i == next {
            self.lanes.push(RawLane {
                pid: key.0,
                tid: key.1,
                ivs: Packed::default(),
            });
        }
        self.last = Some(i);
        self.last_int = match (pid, tid) {
            (TraceId::Int(p), TraceId::Int(t)) => Some((p, t, i)),
            _ => None,
        };
        i
    }

    /// [`LaneRecorder::is_comm`], by the reader's number for the name when it gave one
    /// (equal numbers are equal names): an index, where a name is compared whole.
    /// Notes that the reader's number `track` stands for lane `lane`.
    fn note_track(&mut self, track: u64, lane: usize) {
        let (serial, n) = split_id(track);
        let (Ok(lane), true) = (u32::try_from(lane), n < MAX_TRACK_NUMBERS) else {
            return;
        };
        if self.by_track.0 != Some(serial) {
            self.by_track = (Some(serial), Vec::new());
        }
        let lanes = &mut self.by_track.1;
        if lanes.len() <= n {
            lanes.resize(n + 1, None);
        }
        lanes[n] = Some(lane);
    }

    /// The lane of the reader's number `track`, when an event of it was recorded whole.
    fn known_track(&self, track: u64) -> Option<usize> {
        let (serial, n) = split_id(track);
        if self.by_track.0 != Some(serial) {
            return None;
        }
        self.by_track
            .1
            .get(n)
            .copied()
            .flatten()
            .map(|l| l as usize)
    }

    /// Whether the kernel name the reader numbered `name_id` is communication, when a
    /// kernel of that number was recorded whole.
    fn known_comm(&self, name_id: u64) -> Option<bool> {
        let (serial, n) = split_id(name_id);
        if self.comm.serial != Some(serial) {
            return None;
        }
        match self.comm.by_number.get(n) {
            Some(&known) if known != UNKNOWN => Some(known == COMM),
            _ => None,
        }
    }

    /// Adds `[ts, ts + dur)` of `kind` to lane `i`.
    fn record(&mut self, i: usize, ts: i64, dur: i64, correlation: Option<i64>, kind: Kind) {
        let (s, e) = (ts, ts.saturating_add(dur.max(0)));
        self.lo = self.lo.min(s);
        self.hi = self.hi.max(e);
        if let Some(lane) = self.lanes.get_mut(i) {
            lane.ivs.push(Iv::new(s, e, correlation, kind));
        }
    }

    fn is_comm_numbered(&mut self, name: &str, name_id: Option<u64>) -> bool {
        let Some(id) = name_id else {
            return self.is_comm(name);
        };
        if let Some(c) = self.known_comm(id) {
            return c;
        }
        let (serial, n) = split_id(id);
        if self.comm.serial != Some(serial) {
            self.comm.serial = Some(serial);
            self.comm.by_number.clear();
        }
        let c = self.is_comm(name);
        if self.comm.by_number.len() <= n {
            self.comm.by_number.resize(n + 1, UNKNOWN);
        }
        if let Some(slot) = self.comm.by_number.get_mut(n) {
            *slot = if c { COMM } else { NOT_COMM };
        }
        c
    }

    fn is_comm(&mut self, name: &str) -> bool {
        if let Some(c) = self.comm.recent(name) {
            return c;
        }
        let c = match self.comm.all.get(name) {
            Some(&c) => c,
            None => {
                let lower = name.to_ascii_lowercase();
                let c = COMM_PATTERNS.iter().any(|p| lower.contains(p))
                    || self
                        .options
                        .extra_comm_patterns
                        .iter()
                        .any(|p| lower.contains(p.as_str()));
                self.comm.all.insert(name.into(), c);
                c
            }
        };
        self.comm.remember(name, c);
        c
    }
}

/// How many recently seen kernel names [`CommNames`] answers without hashing.
const RECENT: usize = 64;

/// Whether kernel names are communication. A trace runs few distinct kernels over and
/// over, and its names are long (templates): hashing each whole name per event cost
/// more than the rest of the recorder's work. A small table indexed by a few of the
/// name's bytes (length, middle, end) answers a name seen recently with one
/// comparison; the map answers the others and keeps every decision.
#[derive(Debug)]
struct CommNames {
    recent: Vec<Option<(Box<str>, bool)>>,
    all: HashMap<Box<str>, bool>,
    /// The decisions by the reader's name number ([`UNKNOWN`], [`COMM`], [`NOT_COMM`]),
    /// for the read whose serial (the number's high half) is `serial`.
    by_number: Vec<u8>,
    serial: Option<u64>,
}

const UNKNOWN: u8 = 0;
const COMM: u8 = 1;
const NOT_COMM: u8 = 2;

impl Default for CommNames {
    fn default() -> Self {
        CommNames {
            recent: vec![None; RECENT],
            all: HashMap::new(),
            by_number: Vec::new(),
            serial: None,
        }
    }
}

impl CommNames {
    /// The table slot of `name`: names that share it only cost a hash.
    fn slot(name: &str) -> usize {
        let b = name.as_bytes();
        let word = |at: usize| {
            b.get(at..at + 8)
                .and_then(|w| <[u8; 8]>::try_from(w).ok())
                .map_or(0, u64::from_le_bytes)
        };
        let n = b.len();
        let mixed = (n as u64) ^ word(n.saturating_sub(8)) ^ word(n / 2).rotate_left(29);
        (mixed.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - RECENT.trailing_zeros())) as usize
    }

    fn recent(&self, name: &str) -> Option<bool> {
        match self.recent.get(Self::slot(name)) {
            Some(Some((seen, c))) if **seen == *name => Some(*c),
            _ => None,
        }
    }

    fn remember(&mut self, name: &str, c: bool) {
        if let Some(slot) = self.recent.get_mut(Self::slot(name)) {
            *slot = Some((name.into(), c));
        }
    }
}

impl EventObserver for LaneRecorder {
    /// Starts binning what was recorded on a thread of its own, while the trace crate
    /// builds the analysis on this one; [`LaneRecorder::finish`] takes the result.
    /// Events observed after this are not recorded.
    fn read_done(&mut self) {
        if self.background.is_some() {
            return;
        }
        let recorded = Arc::new(self.take_recorded());
        if recorded.lo > recorded.hi {
            // Nothing recorded: the span is the window's, known only to `finish`.
            self.background = Some(Background {
                recorded,
                drawing: None,
            });
            return;
        }
        let mine = Arc::clone(&recorded);
        let drawing = std::thread::Builder::new()
            .name("kernlens-lanes".to_owned())
            .spawn(move || draw(&mine, None))
            .ok();
        self.background = Some(Background { recorded, drawing });
    }

    fn observe(&mut self, ev: &ObservedEvent<'_>) {
        if self.background.is_some() {
            return;
        }
        let kind = match ev.cat {
            "kernel" => {
                if self.is_comm_numbered(ev.name, ev.name_id) {
                    Kind::Comm
                } else {
                    Kind::Compute
                }
            }
            // Counted as the trace crate counts them (memsets are memcpy, trace.md "Event classification (one pass)").
            "gpu_memcpy" | "gpu_memset" => Kind::Memcpy,
            "cuda_runtime" | "cuda_driver" => {
                if let Some(corr) = ev.correlation
                    && kernlens_trace::is_graph_launch(ev.name.as_bytes())
                {
                    if ev.cat == "cuda_runtime" {
                        self.runtime_graph.insert(corr);
                    } else {
                        self.driver_graph.insert(corr);
                    }
                }
                return;
            }
            _ => return,
        };
        let i = self.lane(ev.pid, ev.tid);
        if let Some(track) = ev.track_id {
            self.note_track(track, i);
        }
        self.record(i, ev.ts_ns, ev.dur_ns, ev.correlation, kind);
    }

    /// A device event whose lane (by `track_id`) and, for a kernel, kind (by `name_id`)
    /// an event recorded whole already gave is recorded from its numbers.
    fn observe_numbered(&mut self, ev: &NumberedEvent) -> bool {
        if self.background.is_some() {
            // `observe` would record nothing either.
            return true;
        }
        let Some(i) = ev.track_id.and_then(|t| self.known_track(t)) else {
            return false;
        };
        let kind = match ev.kind {
            DeviceKind::Kernel => match self.known_comm(ev.name_id) {
                Some(true) => Kind::Comm,
                Some(false) => Kind::Compute,
                None => return false,
            },
            DeviceKind::Memcpy | DeviceKind::Memset => Kind::Memcpy,
            _ => return false,
        };
        self.record(i, ev.ts_ns, ev.dur_ns, ev.correlation, kind);
        true
    }
}

/// One bin of a lane: nanoseconds of each union inside the bin.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Bin {
    /// Union of all device work.
    pub busy_ns: i64,
    /// Union of non-communication kernels.
    pub compute_ns: i64,
    /// Union of communication kernels.
    pub comm_ns: i64,
    /// Union of memcpy/memset work.
    pub memcpy_ns: i64,
    /// Communication running while computation runs (`compute + comm − kernel union`).
    pub overlap_ns: i64,
    /// Union of kernels launched by a graph replay.
    pub graph_ns: i64,
}

/// A lane's figures over the analysis' scope (window rule of trace.md "Timeline").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScopeFigures {
    /// Union of all device work in scope, ns.
    pub busy_ns: i64,
    /// Union of kernels in scope, ns.
    pub kernel_union_ns: i64,
    /// Kernels in scope.
    pub kernel_count: u64,
}

/// One drawn lane: a stream, a device, or all of them pooled.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Lane {
    /// `all GPUs`, `GPU 0`, `GPU 0 · stream 7`.
    pub label: String,
    /// The device (an integer `pid`), None for the pooled lane or a non-integer pid.
    pub device: Option<i64>,
    /// The stream's `pid`/`tid`, None for pooled and device lanes.
    pub stream: Option<(StreamId, StreamId)>,
    /// The bins, `Lanes::edges` wide.
    pub bins: Vec<Bin>,
    /// Figures over the scope.
    pub scope: ScopeFigures,
    /// Whether any kernel of the lane belongs to a graph replay.
    pub has_graph: bool,
}

impl Lane {
    /// Busy share of the scope's total, percent.
    pub fn busy_pct(&self, total_ns: i64) -> f64 {
        pct(self.scope.busy_ns, total_ns)
    }
}

fn pct(part: i64, total: i64) -> f64 {
    if total <= 0 {
        0.0
    } else {
        part as f64 / total as f64 * 100.0
    }
}

/// The window a page shades, with its label.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ShadedWindow {
    /// Start, ns.
    pub start_ns: i64,
    /// End (exclusive), ns.
    pub end_ns: i64,
    /// `steady window: ProfilerStep ×8 (annotation_step)` or `explicit window`.
    pub label: String,
}

/// Every lane of a trace, binned over one span.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Lanes {
    /// The bins' edges: the whole span of the recorded GPU events.
    pub edges: Edges,
    /// All devices pooled.
    pub pooled: Lane,
    /// One lane per device (the union of its streams).
    pub devices: Vec<Lane>,
    /// One lane per stream, by device (ascending, non-integer last), then first sight.
    pub streams: Vec<Lane>,
    /// The scope's total (the analysis' `total_ns`), the denominator of every busy%.
    pub scope_total_ns: i64,
    /// The analysis' window, when one was applied.
    pub window: Option<ShadedWindow>,
    /// Graph launches seen (the effective set: runtime, else driver launches).
    pub graph_launches: usize,
}

struct Binned {
    bins: Vec<Bin>,
    scope: ScopeFigures,
    has_graph: bool,
}

/// Bins sorted intervals in one pass: one union per category, each into its own column
/// as it grows, and the two unions of the scope (window rule of [`ScopeFigures`]).
fn bin_lane(
    ivs: impl IntoIterator<Item = Iv>,
    edges: &Edges,
    window: Option<TimeWindow>,
    graphs: &Graphs,
) -> Binned {
    let n = edges.len();
    let [
        mut busy,
        mut kernel,
        mut compute,
        mut comm,
        mut memcpy,
        mut graph,
    ] = std::array::from_fn(|_| UnionBins::new(edges));
    // The scope with a window: kept when the start lies in the window, clipped to it
    // (the clipped starts stay in order, as the trace crate's sweep relies on too).
    // Without one, the scope is everything: the busy and kernel columns' own totals.
    let (mut scope_busy, mut scope_kernel) = (Coverage::default(), Coverage::default());
    let mut kernel_count = 0u64;
    // A replay's kernels share one correlation: look each run up once.
    let mut last: Option<(Option<i64>, bool)> = None;
    for iv in ivs {
        let (s, e) = (iv.s, iv.e);
        busy.push(edges, s, e);
        let is_kernel = match iv.kind {
            Kind::Compute => {
                compute.push(edges, s, e);
                true
            }
            Kind::Comm => {
                comm.push(edges, s, e);
                true
            }
            Kind::Memcpy => {
                memcpy.push(edges, s, e);
                false
            }
        };
        if is_kernel {
            kernel.push(edges, s, e);
            if !graphs.is_empty() {
                let in_graph = match last {
                    Some((c, g)) if c == iv.corr() => g,
                    _ => {
                        let g = graphs.contains(iv.corr());
                        last = Some((iv.corr(), g));
                        g
                    }
                };
                if in_graph {
                    graph.push(edges, s, e);
                }
            }
        }
        match window {
            None => kernel_count += u64::from(is_kernel),
            Some(w) if w.contains(s) => {
                let (s, e) = (s.max(w.start_ns()), e.min(w.end_ns()));
                scope_busy.push(s, e);
                if is_kernel {
                    kernel_count += 1;
                    scope_kernel.push(s, e);
                }
            }
            Some(_) => {}
        }
    }
    let [busy, kernel, compute, comm, memcpy, graph] =
        [busy, kernel, compute, comm, memcpy, graph].map(UnionBins::into_bins);
    // The span holds every interval, so a union's bins add up to its length.
    let total = |bins: &[i64]| bins.iter().fold(0i64, |t, &b| t.saturating_add(b));
    let (busy_ns, kernel_union_ns) = match window {
        Some(_) => (scope_busy.total(), scope_kernel.total()),
        None => (total(&busy), total(&kernel)),
    };
    let has_graph = graph.iter().any(|&g| g > 0);
    let bins = (0..n)
        .map(|i| Bin {
            busy_ns: busy[i],
            compute_ns: compute[i],
            comm_ns: comm[i],
            memcpy_ns: memcpy[i],
            overlap_ns: (compute[i] + comm[i] - kernel[i]).max(0),
            graph_ns: graph[i],
        })
        .collect();
    Binned {
        bins,
        scope: ScopeFigures {
            busy_ns,
            kernel_union_ns,
            kernel_count,
        },
        has_graph,
    }
}

/// The effective graph launch set (trace.md "Graph launches and coverage").
#[derive(Debug)]
struct Graphs(HashSet<i64>);

impl Graphs {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn contains(&self, corr: Option<i64>) -> bool {
        corr.is_some_and(|c| self.0.contains(&c))
    }
}

/// A stream's intervals sorted by start (then end), when they did not come in order.
fn sorted_copy(ivs: &Packed) -> Option<Vec<Iv>> {
    if ivs.is_sorted() {
        return None;
    }
    let mut all: Vec<Iv> = ivs.iter().collect();
    all.sort_unstable_by_key(|iv| (iv.s, iv.e));
    Some(all)
}

fn id_text(id: &StreamId) -> String {
    match id {
        StreamId::Int(i) => i.to_string(),
        StreamId::Str(s) => s.clone(),
        StreamId::Null => "null".to_owned(),
    }
}

/// What the read recorded, owned, for the binning (on a thread of its own once the read
/// is done, or in [`LaneRecorder::finish`]).
#[derive(Debug)]
struct Recorded {
    lanes: Vec<RawLane>,
    lo: i64,
    hi: i64,
    graphs: Graphs,
    /// The bins asked for.
    bins: usize,
}

/// Every lane binned, before the page's window label and totals are added.
#[derive(Debug)]
struct Drawn {
    edges: Edges,
    pooled: Lane,
    devices: Vec<Lane>,
    streams: Vec<Lane>,
}

/// The binning started when the read was done, and what it bins.
#[derive(Debug)]
struct Background {
    recorded: Arc<Recorded>,
    /// None when no thread could be started: [`LaneRecorder::finish`] bins then.
    drawing: Option<JoinHandle<Drawn>>,
}

impl LaneRecorder {
    /// Takes what was recorded out of the recorder.
    fn take_recorded(&mut self) -> Recorded {
        // The effective launch set, as the trace crate chooses it (trace.md "Graph launches and coverage").
        let graph_set = if self.runtime_graph.is_empty() {
            std::mem::take(&mut self.driver_graph)
        } else {
            std::mem::take(&mut self.runtime_graph)
        };
        Recorded {
            lanes: std::mem::take(&mut self.lanes),
            lo: self.lo,
            hi: self.hi,
            graphs: Graphs(graph_set),
            bins: self.options.bins,
        }
    }

    /// Bins what was recorded, with the scope (window, total) of `analysis`, which must
    /// come from the same read. When the read told the recorder it was done
    /// ([`EventObserver::read_done`]), the lanes were binned meanwhile (whole-trace
    /// scope), and a windowed analysis has them binned again for its scope here.
    pub fn finish(mut self, analysis: &Analysis) -> Lanes {
        let window = analysis
            .window
            .as_ref()
            .and_then(|w| TimeWindow::new(w.start_ns, w.end_ns).ok());
        let (drawn, graph_launches) = match self.background.take() {
            Some(Background { recorded, drawing }) => {
                let drawn = match drawing.map(JoinHandle::join) {
                    Some(Ok(drawn)) if window.is_none() => drawn,
                    Some(Err(panic)) => std::panic::resume_unwind(panic),
                    _ => draw(&recorded, window),
                };
                (drawn, recorded.graphs.0.len())
            }
            None => {
                let recorded = self.take_recorded();
                (draw(&recorded, window), recorded.graphs.0.len())
            }
        };
        let Drawn {
            edges,
            pooled,
            devices,
            streams,
        } = drawn;
        let shaded = analysis.window.as_ref().map(|w| ShadedWindow {
            start_ns: w.start_ns,
            end_ns: w.end_ns,
            label: match (&w.step_name, w.step_count) {
                (Some(name), Some(count)) => {
                    format!("steady window: {name} ×{count} ({})", w.method)
                }
                _ => "explicit window".to_owned(),
            },
        });
        Lanes {
            edges,
            pooled,
            devices,
            streams,
            scope_total_ns: analysis.timeline.total_ns,
            window: shaded,
            graph_launches,
        }
    }
}

/// Bins every lane of `rec` over its extent (the window's when nothing was recorded),
/// with the scope figures of `window`.
fn draw(rec: &Recorded, window: Option<TimeWindow>) -> Drawn {
    let Recorded {
        lanes,
        lo,
        hi,
        graphs,
        bins: asked,
    } = rec;
    let (mut lo, mut hi) = (*lo, *hi);
    // Streams recorded out of order, sorted (each stream's own order otherwise).
    let sorted: Vec<Option<Vec<Iv>>> = lanes.iter().map(|l| sorted_copy(&l.ivs)).collect();
    let ordered = |i: usize| match (sorted.get(i), lanes.get(i)) {
        (Some(Some(ivs)), _) => Ordered::Sorted(ivs.iter()),
        (_, Some(l)) => Ordered::Packed(l.ivs.iter()),
        _ => Ordered::Sorted([].iter()),
    };
    if lo > hi {
        (lo, hi) = match window {
            Some(w) => (w.start_ns(), w.end_ns()),
            None => (0, 0),
        };
    }
    // Drawn lanes: one per stream and the pooled one.
    let cells_per_lane = (MAX_CELLS / (lanes.len() + 1)).max(MIN_BINS);
    let bins = (*asked).clamp(1, MAX_BINS).min(cells_per_lane);
    let edges = Edges::new(lo, hi, bins);
    let device_of = |l: &RawLane| match l.pid {
        StreamId::Int(d) => Some(d),
        _ => None,
    };
    // Ascending devices, non-integer last; streams in order of first sight within one.
    let mut order: Vec<usize> = (0..lanes.len()).collect();
    order.sort_by_key(|&i| {
        let d = lanes.get(i).and_then(device_of);
        (d.is_none(), d, i)
    });
    // Streams grouped by device, in that order.
    let mut groups: Vec<(Option<i64>, Vec<usize>)> = Vec::new();
    for &i in &order {
        let Some(l) = lanes.get(i) else { continue };
        let device = device_of(l);
        match groups.last_mut() {
            Some((d, members)) if *d == device => members.push(i),
            _ => groups.push((device, vec![i])),
        }
    }
    let bin = |ivs: Merge<'_>| bin_lane(ivs, &edges, window, graphs);
    let mut streams = Vec::with_capacity(lanes.len());
    let mut devices: Vec<Lane> = Vec::with_capacity(groups.len());
    for (device, members) in &groups {
        let first = streams.len();
        for (&i, l) in members.iter().filter_map(|i| Some((i, lanes.get(*i)?))) {
            let b = bin_lane(ordered(i), &edges, window, graphs);
            let label = match device {
                Some(d) => format!("GPU {d} · stream {}", id_text(&l.tid)),
                None => format!("pid {} · stream {}", id_text(&l.pid), id_text(&l.tid)),
            };
            streams.push(Lane {
                label,
                device: *device,
                stream: Some((l.pid.clone(), l.tid.clone())),
                bins: b.bins,
                scope: b.scope,
                has_graph: b.has_graph,
            });
        }
        // A device of one stream is that stream: its bins are not computed twice.
        let (bins, scope, has_graph) = match streams.get(first..) {
            Some([only]) => (only.bins.clone(), only.scope, only.has_graph),
            _ => {
                let b = bin(Merge::new(members.iter().map(|&i| ordered(i)).collect()));
                (b.bins, b.scope, b.has_graph)
            }
        };
        devices.push(Lane {
            label: device.map_or_else(|| "other pid".to_owned(), |d| format!("GPU {d}")),
            device: *device,
            stream: None,
            bins,
            scope,
            has_graph,
        });
    }
    let (bins, scope, has_graph) = match devices.as_slice() {
        [only] => (only.bins.clone(), only.scope, only.has_graph),
        _ => {
            let b = bin(Merge::new((0..lanes.len()).map(ordered).collect()));
            (b.bins, b.scope, b.has_graph)
        }
    };
    let pooled = Lane {
        label: "all GPUs".to_owned(),
        device: None,
        stream: None,
        bins,
        scope,
        has_graph,
    };
    Drawn {
        edges,
        pooled,
        devices,
        streams,
    }
}
