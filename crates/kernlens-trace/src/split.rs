//! Split: one window of a trace written as a new, valid Kineto trace (trace.md "Split").
//!
//! Two passes by design: the first finds the window's GPU events and the correlations
//! and External ids that tie CPU events to them; the second copies the kept events
//! byte for byte. Graph launches are kept through their correlation only, never by
//! their CPU time (which runs ahead of the GPU and belongs to the next replay).
//!
//! The first pass also surveys each scan it makes: the ranges of the values that decide
//! whether an event is kept. The second pass makes the same scans (same regions, same
//! bytes), and one whose survey proves that no event in it can be kept is not parsed
//! (trace.md "Split" 5).

use std::io::{self, Write};

use serde::Serialize;

use crate::collect::Launches;
use crate::error::TraceError;
use crate::event::{Cat, Event, Wanted, keeps_cat};
use crate::gpu::GpuRecs;
use crate::graph;
use crate::intern::{Map, Set};
use crate::json::{Cursor, RawStr};
use crate::observe::ProgressSink;
use crate::options::{Limits, TimeWindow, WindowMode};
use crate::problem::ErrorLog;
use crate::read::{
    self, Analyse, Elements, Feed, Folder, Region, Scanned, Scanner, Span, Tail, Walked,
};
use crate::report::{ChunkWindow, GraphCoverage, us};
use crate::scan::Put;
use crate::shape::Shaped;
use crate::source::{Input, TraceSource};
use crate::window;

/// Options of [`split`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SplitOptions {
    /// Gzip the output.
    pub gzip: bool,
    /// Input bounds (as for analysis).
    pub limits: Limits,
    /// The first pass reads a plain file through a memory map, as
    /// [`crate::Options::map_files`] says (default true). The second pass always copies:
    /// it writes the bytes it reads, which a file shrinking under a map would turn to zeros.
    pub map_files: bool,
}

impl Default for SplitOptions {
    fn default() -> Self {
        SplitOptions {
            gzip: false,
            limits: Limits::default(),
            map_files: true,
        }
    }
}

impl SplitOptions {
    /// The first pass reads a plain file through a memory map ([`SplitOptions::map_files`]).
    pub fn with_map_files(mut self, map: bool) -> Self {
        self.map_files = map;
        self
    }

    /// Gzip the output.
    pub fn with_gzip(mut self, gzip: bool) -> Self {
        self.gzip = gzip;
        self
    }

    /// Input bounds.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
}

/// What a split read and wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SplitReport {
    /// The window written.
    pub window: ChunkWindow,
    /// Events in the source.
    pub events_read: u64,
    /// Events in the chunk.
    pub events_written: u64,
    /// Kernels, copies, memsets and GPU annotations kept.
    pub gpu_events: u64,
    /// Runtime and driver launch events kept.
    pub launch_events: u64,
    /// Of those, graph launches.
    pub graph_launch_events: u64,
    /// `cpu_op` and `user_annotation` events kept.
    pub cpu_events: u64,
    /// `ac2g` flow events kept.
    pub flow_events: u64,
    /// Metadata (`ph: M`) events kept.
    pub metadata_events: u64,
    /// Problems met reading the source (the chunk holds its recovered events).
    pub stream_errors: Vec<String>,
}

/// Schema tag of [`SplitDocument`].
pub const SPLIT_SCHEMA: &str = "kernlens.split/1";

/// The `kernlens.split/1` document: the schema tag, then the [`SplitReport`] fields.
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct SplitDocument<'a> {
    /// Always [`SPLIT_SCHEMA`].
    pub schema: &'static str,
    /// The report.
    #[serde(flatten)]
    pub report: &'a SplitReport,
}

impl SplitReport {
    /// The `kernlens.split/1` document of this report.
    pub fn document(&self) -> SplitDocument<'_> {
        SplitDocument {
            schema: SPLIT_SCHEMA,
            report: self,
        }
    }
}

/// The `kernlens` member written into a chunk.
#[derive(Serialize)]
struct ChunkMember<'a> {
    schema: &'static str,
    source_file: &'a str,
    window: ChunkWindow,
    source_graph: &'a GraphCoverage,
}

/// Writes the events of `window` from `source` to `out` as a new trace.
pub fn split(
    source: &TraceSource,
    window: TimeWindow,
    out: impl Write,
    opts: &SplitOptions,
) -> Result<SplitReport, TraceError> {
    split_window(source, &WindowMode::Explicit(window), out, opts)
}

/// Like [`split`], reporting progress to `progress` ([`split_window_with_progress`]).
pub fn split_with_progress(
    source: &TraceSource,
    window: TimeWindow,
    out: impl Write,
    opts: &SplitOptions,
    progress: &mut dyn ProgressSink,
) -> Result<SplitReport, TraceError> {
    split_window_with_progress(source, &WindowMode::Explicit(window), out, opts, progress)
}

/// Like [`split`], with the window chosen by `mode` in the first pass (a steady window
/// that is not found is [`TraceError::NoWindow`]; `Full` takes the whole GPU span).
pub fn split_window(
    source: &TraceSource,
    mode: &WindowMode,
    out: impl Write,
    opts: &SplitOptions,
) -> Result<SplitReport, TraceError> {
    split_inner(source, mode, out, opts, None)
}

/// Like [`split_window`], reporting progress to `progress` as the read does, in stored
/// bytes: both passes as one measure, the first's bytes then the second's, out of twice
/// the stored size (so the fraction is of the whole split, and a decoded-size bar scaled
/// by that fraction ends at 100%).
pub fn split_window_with_progress(
    source: &TraceSource,
    mode: &WindowMode,
    out: impl Write,
    opts: &SplitOptions,
    progress: &mut dyn ProgressSink,
) -> Result<SplitReport, TraceError> {
    split_inner(source, mode, out, opts, Some(progress))
}

/// Both passes' progress as one measure over `2 * stored` bytes.
struct TwoPass<'p> {
    inner: &'p mut dyn ProgressSink,
    stored: u64,
}

impl TwoPass<'_> {
    fn second(&mut self, done: u64) {
        let total = self.stored.saturating_mul(2);
        self.inner.progress(
            self.stored.saturating_add(done.min(self.stored)),
            Some(total),
        );
    }
}

impl ProgressSink for TwoPass<'_> {
    /// The first pass: its fraction of its own total, as a fraction of the first half.
    fn progress(&mut self, done: u64, total: Option<u64>) {
        let done = match total {
            Some(t) if t > 0 && t != self.stored => {
                (u128::from(done.min(t)) * u128::from(self.stored) / u128::from(t)) as u64
            }
            _ => done.min(self.stored),
        };
        self.inner
            .progress(done, Some(self.stored.saturating_mul(2)));
    }
}

fn split_inner(
    source: &TraceSource,
    mode: &WindowMode,
    out: impl Write,
    opts: &SplitOptions,
    progress: Option<&mut dyn ProgressSink>,
) -> Result<SplitReport, TraceError> {
    split_planned(
        source,
        mode,
        out,
        opts,
        progress,
        &read::ReadPlan::new(&opts.limits, None).mapped(opts.map_files),
        Second::Regions {
            skip: true,
            block: BLOCK_EVENTS,
        },
    )
    .map(|(report, ..)| report)
}

/// How the second pass reads.
#[derive(Clone, Copy)]
enum Second {
    /// On the region workers, as the first pass does; `skip`: scans the first pass proved
    /// keep nothing are not parsed again, nor the blocks of `block` events of the others
    /// that it proved keep nothing.
    Regions { skip: bool, block: usize },
    /// Element by element on one thread: the reference the tests hold the workers to.
    #[cfg(test)]
    Sequential,
}

/// [`split_inner`] with both reads done as `plan` says (tests vary the threads and cuts),
/// how many of the second pass's scans were not parsed, how many gzip pieces it did not
/// decode, and how many blocks of the scans it parsed it did not.
fn split_planned(
    source: &TraceSource,
    mode: &WindowMode,
    out: impl Write,
    opts: &SplitOptions,
    progress: Option<&mut dyn ProgressSink>,
    plan: &read::ReadPlan<'_>,
    second: Second,
) -> Result<(SplitReport, u64, u64, u64), TraceError> {
    if matches!(source.input, Input::Reader(_)) {
        return Err(TraceError::NotSeekable {
            label: source.file().to_string(),
        });
    }
    let stored = match &source.input {
        Input::File(path) => std::fs::metadata(path).map_or(0, |m| m.len()),
        Input::Bytes(bytes) => bytes.len() as u64,
        Input::Reader(_) => 0,
    };
    let mut progress = progress.map(|inner| TwoPass { inner, stored });
    let mut collector =
        Feed::new(None).with_progress(progress.as_mut().map(|p| p as &mut dyn ProgressSink));
    let before = Stamp::of(source);
    // A shrink while the first pass reads through a map changes the file's stamp, so the
    // second pass then parses every scan (below) and reports it.
    let block = match second {
        Second::Regions { block, .. } => block,
        #[cfg(test)]
        Second::Sequential => BLOCK_EVENTS,
    };
    let (provenance, mut surveys, trail) = first_pass(source, plan, block, &mut collector)?;
    let c = collector.fold.finish();
    let window = match *mode {
        WindowMode::Explicit(w) => w,
        WindowMode::Relative(w) => window::absolute(w, window::trace_start(&c)),
        WindowMode::Steady {
            min_repeats,
            source: steps,
        } => window::choose(&c, min_repeats, steps)
            .map(|ch| ch.window)
            .ok_or_else(|| TraceError::NoWindow {
                label: source.file().to_string(),
            })?,
        WindowMode::Full => full_span(c.gpu.recs()),
    };
    let graph = graph::coverage(&c.launches, &c.gpu);
    let file_name = std::path::Path::new(source.file()).file_name().map_or_else(
        || source.file().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    // A chunk of a chunk keeps the original trace's name and coverage.
    let (source_file, source_graph) = match provenance
        .as_ref()
        .and_then(|p| p.source_graph.clone().map(|g| (p, g)))
    {
        Some((p, g)) => (p.source_file.clone(), g),
        None => (file_name, graph),
    };
    let member = serde_json::to_string(&ChunkMember {
        schema: "kernlens.chunk/1",
        source_file: &source_file,
        window: ChunkWindow {
            start_us: us(window.start_ns()),
            end_us: us(window.end_ns()),
        },
        source_graph: &source_graph,
    })
    .map_err(|e| TraceError::Write {
        what: "chunk provenance".into(),
        source: io::Error::other(e),
    })?;
    let (corrs, exts) = kept_links(c.gpu.recs(), &c.launches, window);
    drop(c);

    // A file rewritten since the first pass: what it learned may not describe the bytes
    // there now, so every scan is parsed (the chunk is what a read of the new bytes keeps).
    if matches!(second, Second::Regions { skip: false, .. }) || Stamp::of(source) != before {
        surveys.clear();
    }
    // A gzip source's access points skip what the surveys let the second pass skip: with
    // none, the whole stream is decoded again.
    let access = match &trail {
        Some(trail) if !surveys.is_empty() => read::Access::Resume(trail),
        _ => read::Access::Whole,
    };
    // The second pass: region workers pick the kept events' text, this thread writes it in
    // file order.
    let keep = Keep::new(window, corrs, exts, surveys);
    let mut sink = SplitSink::new(Output::new(out, opts.gzip), window, member, progress);
    let mut log = ErrorLog::default();
    let chunker = Chunker {
        keep: &keep,
        limits: &opts.limits,
    };
    match second {
        Second::Regions { .. } => {
            // Copied, never mapped: the bytes read are written to the chunk.
            let plan = plan.mapped(false);
            read::read_access(source, &plan, &chunker, &mut sink, &mut log, access)?;
        }
        #[cfg(test)]
        Second::Sequential => tests::sequential(source, &chunker, &mut sink, &mut log),
    }
    let mut report = sink.finish()?;
    report.stream_errors = log.finish();
    let skipped = keep.skipped.load(std::sync::atomic::Ordering::Relaxed);
    let hollow = keep.hollow.load(std::sync::atomic::Ordering::Relaxed);
    let blocks = keep
        .blocks_skipped
        .load(std::sync::atomic::Ordering::Relaxed);
    Ok((report, skipped, hollow, blocks))
}

/// What the first pass hands the second: the provenance, the surveys, and a gzip
/// source's access points.
type FirstPass = (
    Option<crate::report::ChunkProvenance>,
    Surveys,
    Option<read::Trail>,
);

/// The first pass: the analysis read (window, links, provenance), surveying each scan and
/// recording a gzip source's access points; each scan's survey holds blocks of `block`
/// events.
fn first_pass(
    source: &TraceSource,
    plan: &read::ReadPlan<'_>,
    block: usize,
    feed: &mut Feed<'_>,
) -> Result<FirstPass, TraceError> {
    let scanner = Surveyor {
        analyse: Analyse {
            limits: plan.limits,
            wanted: feed.wanted(),
            observed: false,
        },
        block,
    };
    let mut folder = Surveyed {
        feed,
        surveys: Surveys::default(),
    };
    // Its stream errors are the second pass's to report (it reads the same bytes).
    let mut log = ErrorLog::default();
    let mut trail = None;
    let access = read::Access::Record(&mut trail);
    let head = read::read_access(source, plan, &scanner, &mut folder, &mut log, access)?;
    if head.not_a_trace {
        return Err(TraceError::NotATrace {
            path: source.file().to_string(),
        });
    }
    Ok((head.provenance, folder.surveys, trail))
}

/// A file's length and modification time, to tell that it changed between the passes
/// (`None` for bytes in memory, which cannot).
#[derive(PartialEq, Eq)]
struct Stamp(Option<(u64, Option<std::time::SystemTime>)>);

impl Stamp {
    fn of(source: &TraceSource) -> Stamp {
        Stamp(match &source.input {
            Input::File(path) => std::fs::metadata(path)
                .ok()
                .map(|m| (m.len(), m.modified().ok())),
            _ => None,
        })
    }
}

/// The GPU span of the whole trace, for a `Full` split (end exclusive, so it reaches one
/// past the last start and keeps every event).
fn full_span(gpu: &GpuRecs) -> TimeWindow {
    let start = gpu.iter().map(|r| r.ts).min().unwrap_or(0);
    let end = gpu
        .iter()
        .map(|r| r.ts.saturating_add(r.dur))
        .max()
        .unwrap_or(0);
    let last_start = gpu.iter().map(|r| r.ts).max().unwrap_or(0);
    TimeWindow::clamped(start, end.max(last_start.saturating_add(1)))
}

/// Correlations of the window's GPU events, and the External ids their launches carry.
fn kept_links(gpu: &GpuRecs, launches: &Launches, window: TimeWindow) -> (Set<i64>, Set<i64>) {
    let corrs: Set<i64> = gpu
        .iter()
        .filter(|r| window.contains(r.ts))
        .filter_map(|r| r.corr())
        .collect();
    let exts: Set<i64> = corrs.iter().filter_map(|&k| launches.external(k)).collect();
    (corrs, exts)
}

enum Output<W: Write> {
    Plain(W),
    Gzip(Box<flate2::write::GzEncoder<W>>),
}

impl<W: Write> Output<W> {
    fn new(w: W, gzip: bool) -> Self {
        if gzip {
            Output::Gzip(Box::new(flate2::write::GzEncoder::new(
                w,
                flate2::Compression::default(),
            )))
        } else {
            Output::Plain(w)
        }
    }

    fn write_all(&mut self, b: &[u8]) -> io::Result<()> {
        match self {
            Output::Plain(w) => w.write_all(b),
            Output::Gzip(w) => w.write_all(b),
        }
    }

    fn finish(self) -> io::Result<()> {
        match self {
            Output::Plain(mut w) => w.flush(),
            Output::Gzip(w) => (*w).finish()?.flush(),
        }
    }
}

/// Which events a chunk keeps (trace.md "Split" 1); shared by the region workers.
struct Keep {
    window: TimeWindow,
    corrs: Set<i64>,
    exts: Set<i64>,
    /// The same ids sorted, to ask whether any lies in a survey's range.
    corrs_sorted: Vec<i64>,
    exts_sorted: Vec<i64>,
    /// What the first pass learned of its scans (empty: parse every scan).
    surveys: Surveys,
    /// The same by where their bytes are (`None`: two scans there), for a region
    /// that need not even be read.
    places: Map<(u64, usize, bool), Option<ScanKey>>,
    /// Scans not parsed again, gzip pieces not decoded, and blocks of parsed scans not
    /// parsed (the tests read them).
    skipped: std::sync::atomic::AtomicU64,
    hollow: std::sync::atomic::AtomicU64,
    blocks_skipped: std::sync::atomic::AtomicU64,
}

/// What a split read and kept, by kind.
#[derive(Default, Clone, Copy)]
struct Counts {
    events_read: u64,
    events_written: u64,
    gpu_events: u64,
    launch_events: u64,
    graph_launch_events: u64,
    cpu_events: u64,
    flow_events: u64,
    metadata_events: u64,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.events_read += o.events_read;
        self.events_written += o.events_written;
        self.gpu_events += o.gpu_events;
        self.launch_events += o.launch_events;
        self.graph_launch_events += o.graph_launch_events;
        self.cpu_events += o.cpu_events;
        self.flow_events += o.flow_events;
        self.metadata_events += o.metadata_events;
    }
}

/// The value that decides whether split keeps an event (trace.md "Split" 1): the keep
/// rule and the first pass's survey both read it from here, so they cannot disagree.
#[cfg_attr(test, derive(Debug, PartialEq, Eq))]
enum Link {
    /// A `ph: M` event: always kept.
    Meta,
    /// A GPU event's `ts`: kept inside the window.
    Gpu(i64),
    /// A launch's correlation: kept when a kept GPU event has it.
    Launch(i64),
    /// A CPU op's External id: kept when a kept launch has it.
    Cpu(i64),
    /// A flow's id: kept when it is a kept correlation.
    Flow(i64),
    /// Never kept.
    Dropped,
}

impl Link {
    #[inline(always)]
    fn of<'a>(ev: &impl Linked<'a>) -> Link {
        if ev.ph_m() {
            return Link::Meta;
        }
        let id = match ev.cat() {
            Cat::Kernel | Cat::Memcpy | Cat::Memset | Cat::GpuUserAnnotation if ev.ph_x() => {
                return Link::Gpu(ev.ts());
            }
            Cat::Runtime | Cat::Driver => ev.correlation().map(Link::Launch),
            Cat::CpuOp | Cat::UserAnnotation => ev.external_id().map(Link::Cpu),
            Cat::Flow => ev.id().map(Link::Flow),
            _ => None,
        };
        id.unwrap_or(Link::Dropped)
    }
}

/// The members of an event that [`Link::of`] and [`Keep::keep`] read: of an event built,
/// or of one a learned shape read, which decodes only the members asked for (most events
/// of a trace are never built by split: flows, and every event the second pass reads).
trait Linked<'a> {
    fn ph_m(&self) -> bool;
    fn ph_x(&self) -> bool;
    fn cat(&self) -> Cat;
    fn ts(&self) -> i64;
    fn correlation(&self) -> Option<i64>;
    fn external_id(&self) -> Option<i64>;
    fn id(&self) -> Option<i64>;
    fn name(&self) -> RawStr<'a>;
}

impl<'a> Linked<'a> for Event<'a> {
    fn ph_m(&self) -> bool {
        self.ph_m
    }
    fn ph_x(&self) -> bool {
        self.ph_x
    }
    fn cat(&self) -> Cat {
        self.cat
    }
    fn ts(&self) -> i64 {
        self.ts
    }
    fn correlation(&self) -> Option<i64> {
        self.args.correlation
    }
    fn external_id(&self) -> Option<i64> {
        self.args.external_id
    }
    fn id(&self) -> Option<i64> {
        self.id
    }
    fn name(&self) -> RawStr<'a> {
        self.name
    }
}

/// Each member decoded from the shape's byte ranges as [`Shaped::event`] decodes it.
impl<'a> Linked<'a> for Shaped<'_, 'a> {
    #[inline(always)]
    fn ph_m(&self) -> bool {
        Shaped::ph_m(self)
    }
    #[inline(always)]
    fn ph_x(&self) -> bool {
        Shaped::ph_x(self)
    }
    #[inline(always)]
    fn cat(&self) -> Cat {
        Shaped::cat(self)
    }
    #[inline(always)]
    fn ts(&self) -> i64 {
        Shaped::ts(self)
    }
    #[inline(always)]
    fn correlation(&self) -> Option<i64> {
        Shaped::correlation(self)
    }
    #[inline(always)]
    fn external_id(&self) -> Option<i64> {
        Shaped::external_id(self)
    }
    #[inline(always)]
    fn id(&self) -> Option<i64> {
        Shaped::id(self)
    }
    #[inline(always)]
    fn name(&self) -> RawStr<'a> {
        Shaped::name(self)
    }
}

impl Keep {
    fn new(window: TimeWindow, corrs: Set<i64>, exts: Set<i64>, surveys: Surveys) -> Keep {
        let sorted = |s: &Set<i64>| {
            let mut v: Vec<i64> = s.iter().copied().collect();
            v.sort_unstable();
            v
        };
        let mut places: Map<(u64, usize, bool), Option<ScanKey>> = Map::default();
        for k in surveys.keys() {
            places
                .entry((k.at, k.len, k.eof))
                .and_modify(|seen| *seen = None)
                .or_insert(Some(*k));
        }
        Keep {
            window,
            places,
            corrs_sorted: sorted(&corrs),
            exts_sorted: sorted(&exts),
            corrs,
            exts,
            surveys,
            skipped: std::sync::atomic::AtomicU64::new(0),
            hollow: std::sync::atomic::AtomicU64::new(0),
            blocks_skipped: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Whether `ev` goes into the chunk, counted in `r` when it does.
    #[inline(always)]
    fn keep<'a>(&self, ev: &impl Linked<'a>, r: &mut Counts) -> bool {
        match Link::of(ev) {
            Link::Meta => {
                r.metadata_events += 1;
                true
            }
            Link::Gpu(ts) => {
                let keep = self.window.contains(ts);
                r.gpu_events += u64::from(keep);
                keep
            }
            Link::Launch(k) => {
                let keep = self.corrs.contains(&k);
                if keep {
                    r.launch_events += 1;
                    let graph = crate::graph::is_graph_launch(ev.name().decode().as_bytes());
                    r.graph_launch_events += u64::from(graph);
                }
                keep
            }
            Link::Cpu(x) => {
                let keep = self.exts.contains(&x);
                r.cpu_events += u64::from(keep);
                keep
            }
            Link::Flow(k) => {
                let keep = self.corrs.contains(&k);
                r.flow_events += u64::from(keep);
                keep
            }
            Link::Dropped => false,
        }
    }

    /// The first pass's survey of the scan `span`, when it made the same scan and the
    /// survey proves that no event there is kept: the scan need not be parsed again.
    fn skips(&self, span: &Span<'_, '_>) -> Option<&Survey> {
        self.skips_key(&ScanKey::of(span)?)
    }

    /// [`Keep::skips`] for a region whose bytes would be the `len` at `at`: the key of the
    /// one scan the first pass made there, and its survey.
    fn skips_place(&self, at: u64, len: usize, eof: bool) -> Option<(ScanKey, &Survey)> {
        let key = (*self.places.get(&(at, len, eof))?)?;
        self.skips_key(&key).map(|s| (key, s))
    }

    fn skips_key(&self, key: &ScanKey) -> Option<&Survey> {
        let survey = self.proves_nothing(key)?;
        self.skipped
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some(survey)
    }

    /// The survey of the scan `key` when it proves that no event there is kept.
    fn proves_nothing(&self, key: &ScanKey) -> Option<&Survey> {
        let survey = self.surveys.get(key)?;
        self.keeps_none(&survey.bounds).then_some(survey)
    }

    /// Whether no event within `b` can be kept.
    fn keeps_none(&self, b: &Bounds) -> bool {
        let none_in = |sorted: &[i64], r: Range| {
            r.is_empty() || {
                let i = sorted.partition_point(|&v| v < r.lo);
                sorted.get(i).is_none_or(|&v| v > r.hi)
            }
        };
        let (start, end) = (self.window.start_ns(), self.window.end_ns());
        !b.meta
            && (b.gpu.is_empty() || b.gpu.hi < start || b.gpu.lo >= end)
            && none_in(&self.corrs_sorted, b.launch)
            && none_in(&self.corrs_sorted, b.flow)
            && none_in(&self.exts_sorted, b.cpu)
    }

    /// Counts event `raw` read, and takes it into `kept` when [`Keep::keep`] said `take`.
    fn take(take: bool, raw: &[u8], kept: &mut Kept) {
        kept.counts.events_read += 1;
        if take {
            kept.text.extend_from_slice(SEPARATOR);
            kept.text.extend_from_slice(raw);
            kept.counts.events_written += 1;
        }
    }
}

/// Written before every kept event but the first (which has the separator less its comma).
const SEPARATOR: &[u8] = b",\n  ";

/// What is parsed of each event: all of them, whatever the category (flows and metadata
/// are kept too).
const EVERY_EVENT: Wanted = Wanted {
    python_functions: false,
    everything: true,
};

/// The second pass's region scanner.
struct Chunker<'k> {
    keep: &'k Keep,
    limits: &'k Limits,
}

/// One region's kept events: their text, each after [`SEPARATOR`], and the counts.
#[derive(Default)]
struct Kept {
    text: Vec<u8>,
    counts: Counts,
    walked: Walked,
}

/// A region being read by the second pass's element loop. The step hands it each event
/// (as [`Put`]), which it decides on at once: an event a shape read is never built, only
/// the members [`Keep::keep`] reads are decoded.
struct Picking<'k> {
    keep: &'k Keep,
    /// The chunk keeps the event being read.
    take: bool,
    kept: Kept,
}

impl<'a> Put<'a> for Picking<'_> {
    const READS_UNKEPT: bool = true;

    fn put(&mut self, ev: Event<'a>) {
        self.take = self.keep.keep(&ev, &mut self.kept.counts);
    }

    #[inline(always)]
    fn put_shaped(&mut self, read: &Shaped<'_, 'a>, _wanted: Wanted) -> bool {
        self.take = self.keep.keep(read, &mut self.kept.counts);
        true
    }
}

impl<'a> Elements<'a> for Picking<'_> {
    type Put = Self;

    fn put(&mut self) -> &mut Self {
        self
    }

    fn event(&mut self, _kept: bool, raw: &'a [u8]) {
        Keep::take(std::mem::take(&mut self.take), raw, &mut self.kept);
    }
}

impl Scanner for Chunker<'_> {
    type Out<'a> = Kept;

    fn known<'a>(
        &self,
        at: u64,
        len: usize,
        eof: bool,
    ) -> Option<(usize, usize, Scanned<Self::Out<'a>>)> {
        let (key, s) = self.keep.skips_place(at, len, eof)?;
        Some((key.start, key.stop, s.skipped()))
    }

    fn knows(&self, at: u64, len: usize, eof: bool) -> bool {
        let knows = self
            .keep
            .places
            .get(&(at, len, eof))
            .copied()
            .flatten()
            .is_some_and(|key| self.keep.proves_nothing(&key).is_some());
        if knows {
            self.keep
                .hollow
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        knows
    }

    fn scan<'a>(&self, span: Span<'a, '_>) -> Scanned<Kept> {
        if let Some(s) = self.keep.skips(&span) {
            return s.skipped();
        }
        let mut p = Picking {
            keep: self.keep,
            take: false,
            kept: Kept::default(),
        };
        let blocks = ScanKey::of(&span)
            .and_then(|key| self.keep.surveys.get(&key))
            .filter(|s| !s.blocks.is_empty());
        if let Some(survey) = blocks {
            return self.scan_blocks(span, survey, p);
        }
        // Sized for all of it: a scan parsed whole is one the window may keep most of, and
        // its text grown by doubling was copied once more on the way.
        p.kept
            .text
            .reserve(span.stop.min(span.buf.len()).saturating_sub(span.start));
        let s = read::walk(span, self.limits, EVERY_EVENT, &mut p);
        p.kept.walked = s.out;
        Scanned {
            out: p.kept,
            next: s.next,
            ended: s.ended,
            clean: s.clean,
            broke: s.broke,
        }
    }
}

impl Chunker<'_> {
    /// A scan the first pass surveyed by blocks: the blocks whose bounds prove that none of
    /// their events is kept are counted, not parsed; each other one is walked from its
    /// first event to the next block's (the last to the scan's stop, so the scan ends as a
    /// walk of it all ends). The survey was made of a clean walk of these same bytes, so
    /// the blocks' walks read the events it read, without problems.
    fn scan_blocks<'a>(
        &self,
        span: Span<'a, '_>,
        survey: &Survey,
        mut p: Picking<'_>,
    ) -> Scanned<Kept> {
        let mut end = (survey.next, survey.ended, survey.clean);
        let mut skipped = 0;
        let stop = |i: usize| {
            survey
                .blocks
                .get(i + 1)
                .map_or(span.stop.min(span.buf.len()), |n| n.at)
        };
        // The text sized for every block parsed, as a scan parsed whole is.
        let parsed: usize = (survey.blocks.iter().enumerate())
            .filter(|(_, b)| !self.keep.keeps_none(&b.bounds))
            .map(|(i, b)| stop(i).saturating_sub(b.at))
            .sum();
        p.kept.text.reserve(parsed);
        for (i, b) in survey.blocks.iter().enumerate() {
            if self.keep.keeps_none(&b.bounds) {
                p.kept.counts.events_read += b.count;
                p.kept.walked.count += b.count;
                skipped += 1;
                continue;
            }
            let last = i + 1 == survey.blocks.len();
            let part = Span {
                buf: span.buf,
                at: span.at,
                start: b.at,
                stop: survey.blocks.get(i + 1).map_or(span.stop, |n| n.at),
                tail: span.tail,
                broken: span.broken,
                form: span.form,
            };
            let s = read::walk(part, self.limits, EVERY_EVENT, &mut p);
            debug_assert!(s.out.problems.is_empty() && s.out.count == b.count);
            p.kept.walked.count += s.out.count;
            if last {
                end = (s.next, s.ended, s.clean);
            }
        }
        self.keep
            .blocks_skipped
            .fetch_add(skipped, std::sync::atomic::Ordering::Relaxed);
        let (next, ended, clean) = end;
        Scanned {
            out: p.kept,
            next,
            ended,
            clean,
            broke: false,
        }
    }
}

/// What identifies one scan: the same key in both passes means the same bytes scanned
/// from the same start to the same stop, hence the same walk (both passes parse every
/// event, so even which events validate is the same).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct ScanKey {
    at: u64,
    start: usize,
    stop: usize,
    len: usize,
    eof: bool,
}

impl ScanKey {
    /// The key of `span`; none for bytes that end because reading failed (a file that
    /// shrank may hold other bytes by the second pass).
    fn of(span: &Span<'_, '_>) -> Option<ScanKey> {
        (span.tail != Tail::Broken).then_some(ScanKey {
            at: span.at,
            start: span.start,
            stop: span.stop,
            len: span.buf.len(),
            eof: span.tail == Tail::Eof,
        })
    }
}

/// The scans of the first pass that read cleanly, by key.
type Surveys = Map<ScanKey, Survey>;

/// An inclusive range of values seen (empty: `lo > hi`).
#[derive(Clone, Copy)]
struct Range {
    lo: i64,
    hi: i64,
}

impl Default for Range {
    fn default() -> Self {
        Range {
            lo: i64::MAX,
            hi: i64::MIN,
        }
    }
}

impl Range {
    fn add(&mut self, v: i64) {
        self.lo = self.lo.min(v);
        self.hi = self.hi.max(v);
    }

    fn is_empty(&self) -> bool {
        self.lo > self.hi
    }
}

/// Bounds on what could make the second pass keep one of a run of events ([`Link`]).
#[derive(Default, Clone, Copy)]
struct Bounds {
    /// A metadata event, or an element the survey could not read: the run is parsed.
    meta: bool,
    gpu: Range,
    launch: Range,
    cpu: Range,
    flow: Range,
}

impl Bounds {
    /// Notes an event's link (None: an element that could not be read).
    #[inline(always)]
    fn note(&mut self, link: Option<Link>) {
        match link {
            Some(Link::Meta) | None => self.meta = true,
            Some(Link::Gpu(ts)) => self.gpu.add(ts),
            Some(Link::Launch(k)) => self.launch.add(k),
            Some(Link::Cpu(x)) => self.cpu.add(x),
            Some(Link::Flow(k)) => self.flow.add(k),
            Some(Link::Dropped) => {}
        }
    }

    /// Widens these bounds to hold `o`'s too.
    fn join(&mut self, o: &Bounds) {
        self.meta |= o.meta;
        for (r, o) in [
            (&mut self.gpu, o.gpu),
            (&mut self.launch, o.launch),
            (&mut self.cpu, o.cpu),
            (&mut self.flow, o.flow),
        ] {
            r.lo = r.lo.min(o.lo);
            r.hi = r.hi.max(o.hi);
        }
    }
}

/// Events a surveyed block holds ([`Block`]): a 2 MiB scan of a graph capture holds
/// ~8,000, so a scan the window's edge cuts is parsed again ~1/30 at a time.
const BLOCK_EVENTS: usize = 256;

/// A run of consecutive events of a clean scan, which the second pass skips on its own
/// when its bounds prove that none of them is kept: where its first event starts in the
/// scan's bytes, and how many it holds.
#[derive(Default, Clone)]
struct Block {
    at: usize,
    count: u64,
    bounds: Bounds,
}

/// One clean scan of the first pass: how it ended, how many events it read, and bounds
/// on what could make the second pass keep one of them ([`Link`]), for the whole scan
/// and by [`Block`] (none when it holds one block or less).
#[derive(Default, Clone)]
struct Survey {
    count: u64,
    next: usize,
    ended: bool,
    clean: bool,
    bounds: Bounds,
    blocks: Vec<Block>,
}

impl Survey {
    /// What the walk of a scan this survey proves keeps nothing gives: the same events
    /// read, none kept, no problem, the same end.
    fn skipped(&self) -> Scanned<Kept> {
        Scanned {
            out: Kept {
                text: Vec::new(),
                counts: Counts {
                    events_read: self.count,
                    ..Counts::default()
                },
                walked: Walked {
                    count: self.count,
                    problems: Vec::new(),
                },
            },
            next: self.next,
            ended: self.ended,
            clean: self.clean,
            broke: false,
        }
    }
}

/// The first pass's scanner: analysis's, parsing every event (as the second pass does)
/// so that each scan can be surveyed, and handing analysis only the events it wants.
struct Surveyor<'l> {
    analyse: Analyse<'l>,
    /// Events per [`Block`].
    block: usize,
}

/// A region being read by the first pass's element loop. The step writes each event to
/// it (as [`Put`]), which surveys it and hands it to the region when analysis wants it:
/// no copy of the ~320-byte event through an `Option` first. An event a shape read is
/// built only when analysis wants it (a summary builds no more): the survey decodes the
/// one member it needs of the others (flows, `Cat::Other`).
struct Surveying<'r, 'a> {
    region: &'r mut Region<'a>,
    analysis: Wanted,
    /// The scan's bytes, where its blocks' offsets are taken.
    buf: &'a [u8],
    /// The block being read (the event being read is noted in its bounds), and those read.
    open: Block,
    blocks: Vec<Block>,
    block: usize,
    /// A block's start was not found in the scan's bytes.
    lost: bool,
    /// The step wrote the event being read, and the region took it.
    got: bool,
    kept: bool,
}

impl Surveying<'_, '_> {
    /// The scan's survey (its walk's counts and end to be filled in).
    fn survey(mut self) -> Survey {
        if self.open.count > 0 {
            self.blocks.push(self.open);
        }
        let mut bounds = Bounds::default();
        for b in &self.blocks {
            bounds.join(&b.bounds);
        }
        if self.blocks.len() < 2 || self.lost {
            self.blocks = Vec::new();
        }
        Survey {
            bounds,
            blocks: self.blocks,
            ..Survey::default()
        }
    }
}

impl<'a> Put<'a> for Surveying<'_, 'a> {
    const READS_UNKEPT: bool = true;

    #[inline(always)]
    fn put(&mut self, ev: Event<'a>) {
        self.got = true;
        self.open.bounds.note(Some(Link::of(&ev)));
        if keeps_cat(ev.cat, ev.ph_x, self.analysis) {
            self.region.push(ev);
            self.kept = true;
        }
    }

    #[inline(always)]
    fn put_shaped(&mut self, read: &Shaped<'_, 'a>, _wanted: Wanted) -> bool {
        self.got = true;
        match read.event(self.analysis) {
            Some(ev) => {
                self.open.bounds.note(Some(Link::of(&ev)));
                self.region.push(ev);
                self.kept = true;
            }
            None => self.open.bounds.note(Some(Link::of(read))),
        }
        self.kept
    }
}

impl<'a> Elements<'a> for Surveying<'_, 'a> {
    type Put = Self;

    fn put(&mut self) -> &mut Self {
        self
    }

    fn event(&mut self, _kept: bool, raw: &'a [u8]) {
        if !self.got {
            self.open.bounds.note(None);
        }
        if self.open.count == 0 {
            // The walk takes `raw` from the scan's bytes; a block start that cannot be
            // placed there drops the scan's blocks (it is then parsed whole).
            let at = (raw.as_ptr() as usize).wrapping_sub(self.buf.as_ptr() as usize);
            self.lost |= raw.is_empty() || at >= self.buf.len();
            self.open.at = at;
        }
        self.open.count += 1;
        if self.open.count == self.block as u64 {
            self.blocks.push(std::mem::take(&mut self.open));
        }
        self.region.event(self.kept, raw);
        self.got = false;
        self.kept = false;
    }
}

impl Scanner for Surveyor<'_> {
    type Out<'a> = (Region<'a>, Option<(ScanKey, Survey)>);

    fn scan<'a>(&self, span: Span<'a, '_>) -> Scanned<Self::Out<'a>> {
        let key = ScanKey::of(&span);
        let mut region = self.analyse.region(&span);
        let mut e = Surveying {
            region: &mut region,
            analysis: self.analyse.wanted,
            buf: span.buf,
            open: Block::default(),
            blocks: Vec::new(),
            block: self.block,
            lost: false,
            got: false,
            kept: false,
        };
        let s = read::walk(span, self.analyse.limits, EVERY_EVENT, &mut e);
        let survey = e.survey();
        // A scan that met any problem is always parsed again, so its errors are reported
        // by the second pass exactly as they would be.
        let survey = key
            .filter(|_| s.out.problems.is_empty() && !s.broke)
            .map(|key| {
                (
                    key,
                    Survey {
                        count: s.out.count,
                        next: s.next,
                        ended: s.ended,
                        clean: s.clean,
                        ..survey
                    },
                )
            });
        region.set_walked(s.out);
        Scanned {
            out: (region, survey),
            next: s.next,
            ended: s.ended,
            clean: s.clean,
            broke: s.broke,
        }
    }
}

/// The first pass's folder: analysis's fold, and the surveys kept.
struct Surveyed<'f, 'o> {
    feed: &'f mut Feed<'o>,
    surveys: Surveys,
}

impl<'l> Folder<Surveyor<'l>> for Surveyed<'_, '_> {
    fn apply(
        &mut self,
        (region, survey): (Region<'_>, Option<(ScanKey, Survey)>),
        log: &mut ErrorLog,
    ) {
        <Feed<'_> as Folder<Analyse<'l>>>::apply(self.feed, region, log);
        if let Some((key, survey)) = survey {
            self.surveys.insert(key, survey);
        }
    }

    fn progress(&mut self, done: u64, total: Option<u64>) {
        self.feed.progress(done, total);
    }
}

struct SplitSink<'p, W: Write> {
    out: Output<W>,
    member: String,
    report: SplitReport,
    counts: Counts,
    started: bool,
    closed: bool,
    error: Option<io::Error>,
    /// Where the second pass reports.
    progress: Option<TwoPass<'p>>,
}

impl<'p, W: Write> SplitSink<'p, W> {
    fn new(
        out: Output<W>,
        window: TimeWindow,
        member: String,
        progress: Option<TwoPass<'p>>,
    ) -> Self {
        SplitSink {
            out,
            member,
            report: SplitReport {
                window: ChunkWindow {
                    start_us: us(window.start_ns()),
                    end_us: us(window.end_ns()),
                },
                events_read: 0,
                events_written: 0,
                gpu_events: 0,
                launch_events: 0,
                graph_launch_events: 0,
                cpu_events: 0,
                flow_events: 0,
                metadata_events: 0,
                stream_errors: Vec::new(),
            },
            counts: Counts::default(),
            started: false,
            closed: false,
            error: None,
            progress,
        }
    }

    fn write(&mut self, b: &[u8]) {
        if self.error.is_none()
            && let Err(e) = self.out.write_all(b)
        {
            self.error = Some(e);
        }
    }

    /// Writes kept events' text (each after [`SEPARATOR`]) and adds their counts.
    fn kept(&mut self, text: &[u8], counts: &Counts) {
        let text = match (self.counts.events_written, text) {
            // The first event follows the array's `[`: no comma.
            (0, [_, rest @ ..]) => rest,
            _ => text,
        };
        self.write(text);
        self.counts.add(counts);
    }

    fn finish(mut self) -> Result<SplitReport, TraceError> {
        if !self.started {
            // No array was found: still write a valid, empty chunk.
            let member = self.member.clone();
            self.write(format!("{{\"kernlens\": {member}, \"traceEvents\": [").as_bytes());
            self.started = true;
        }
        if !self.closed {
            // A truncated source: close the chunk so it is still valid JSON.
            self.write(b"\n]}\n");
        }
        let wrap = |source| TraceError::Write {
            what: "split chunk".into(),
            source,
        };
        if let Some(e) = self.error.take() {
            return Err(wrap(e));
        }
        self.out.finish().map_err(wrap)?;
        let c = self.counts;
        let r = &mut self.report;
        r.events_read = c.events_read;
        r.events_written = c.events_written;
        r.gpu_events = c.gpu_events;
        r.launch_events = c.launch_events;
        r.graph_launch_events = c.graph_launch_events;
        r.cpu_events = c.cpu_events;
        r.flow_events = c.flow_events;
        r.metadata_events = c.metadata_events;
        Ok(self.report)
    }
}

impl<W: Write> Folder<Chunker<'_>> for SplitSink<'_, W> {
    fn apply(&mut self, kept: Kept, log: &mut ErrorLog) {
        kept.walked.log(self.counts.events_read, log);
        self.kept(&kept.text, &kept.counts);
    }

    fn progress(&mut self, done: u64, _total: Option<u64>) {
        if let Some(p) = self.progress.as_mut() {
            p.second(done);
        }
    }

    fn prefix(&mut self, prefix: &[u8]) {
        // Copy the members before traceEvents, dropping an old `kernlens` member, and
        // write ours immediately before the array.
        let (head, tail) = match prefix_member_span(prefix, "kernlens") {
            Some((a, b)) => (&prefix[..a], &prefix[b..]),
            None => (prefix, &prefix[prefix.len()..]),
        };
        let member = self.member.clone();
        self.write(head);
        self.write(tail);
        self.write(format!("\"kernlens\": {member},\n  \"traceEvents\": [").as_bytes());
        self.started = true;
    }

    fn wants_suffix(&self) -> bool {
        true
    }

    fn suffix(&mut self, rest: &[u8]) {
        // The members after the array, copied verbatim when they are complete JSON, less
        // any `kernlens` member: the chunk's own provenance is the one before the array, and
        // a second one would be what parsers that keep the last duplicate read.
        self.write(b"\n]");
        match suffix_members(rest) {
            Some(members) => {
                for (is_provenance, span) in members {
                    if !is_provenance {
                        self.write(&rest[span]);
                    }
                }
                self.write(b"\n}");
            }
            None => self.write(b"}"),
        }
        self.write(b"\n");
        self.closed = true;
    }
}

/// The members of the well-formed `( , "key": value )* }` text at the start of `rest`: for
/// each, whether it is named `kernlens`, and the byte range from its comma to the end of its
/// value. `None` when the text is not of that form.
fn suffix_members(rest: &[u8]) -> Option<Vec<(bool, std::ops::Range<usize>)>> {
    let mut c = Cursor::new(rest, 0);
    let mut stack = Vec::new();
    let mut members = Vec::new();
    loop {
        c.skip_ws();
        match c.peek() {
            Some(b'}') => return Some(members),
            Some(b',') => {
                let start = c.i;
                c.i += 1;
                c.skip_ws();
                let key = c.key().ok()?;
                c.skip_value(&mut stack).ok()?;
                members.push((key.decode() == "kernlens", start..c.i));
            }
            _ => return None,
        }
    }
}
/// The byte range of a top-level member that precedes `traceEvents`, from its name to the
/// start of the next member (so cutting it out leaves valid JSON).
fn prefix_member_span(prefix: &[u8], member: &str) -> Option<(usize, usize)> {
    let m = crate::json::find_prefix_member(prefix, member)?;
    Some((m.name_at, m.next_at?))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::event::Wanted;
    use crate::read::{Cut, ReadPlan, StreamSink};
    use crate::test_files::{fixture, gunzip, gzip_at};

    /// The second pass skipping what the first proved keeps nothing, by scans and by blocks
    /// of 7 events (so that the small scans of the tests hold several).
    const SKIPPING: Second = Second::Regions {
        skip: true,
        block: 7,
    };
    /// The second pass parsing every scan.
    const PARSING: Second = Second::Regions {
        skip: false,
        block: BLOCK_EVENTS,
    };

    /// The second pass as it was before it moved to the region workers: one thread,
    /// element by element, through the sequential stream reader.
    struct OneByOne<'s, 'k, 'p, W: Write> {
        sink: &'s mut SplitSink<'p, W>,
        keep: &'k Keep,
    }

    impl<W: Write> StreamSink for OneByOne<'_, '_, '_, W> {
        fn wanted(&self) -> Wanted {
            EVERY_EVENT
        }

        fn count(&self) -> u64 {
            self.sink.counts.events_read
        }

        fn event(&mut self, ev: Option<Event<'_>>, raw: &[u8]) {
            let mut kept = Kept::default();
            let take = ev.is_some_and(|ev| self.keep.keep(&ev, &mut kept.counts));
            Keep::take(take, raw, &mut kept);
            self.sink.kept(&kept.text, &kept.counts);
        }

        fn prefix(&mut self, prefix: &[u8]) {
            Folder::prefix(self.sink, prefix);
        }

        fn wants_suffix(&self) -> bool {
            true
        }

        fn suffix(&mut self, rest: &[u8]) {
            Folder::suffix(self.sink, rest);
        }
    }

    pub(super) fn sequential<W: Write>(
        source: &TraceSource,
        chunker: &Chunker<'_>,
        sink: &mut SplitSink<'_, W>,
        log: &mut ErrorLog,
    ) {
        let bytes = match &source.input {
            Input::File(path) => std::fs::read(path).unwrap(),
            Input::Bytes(bytes) => bytes.to_vec(),
            Input::Reader(_) => unreachable!("split refuses a reader before reading"),
        };
        let mut one = OneByOne {
            sink,
            keep: chunker.keep,
        };
        let limits = chunker.limits;
        if bytes.starts_with(&read::GZIP_MAGIC) {
            let members = read::Members::new(&bytes[..]);
            read::read_stream(members, true, limits, &mut one, log, None);
        } else {
            read::read_stream(&bytes[..], false, limits, &mut one, log, None);
        }
    }

    /// A chunk and its report, or the error's text.
    fn chunk(
        source: &TraceSource,
        mode: &WindowMode,
        plan: &ReadPlan<'_>,
        second: Second,
    ) -> Result<(Vec<u8>, SplitReport), String> {
        chunk_skipped(source, mode, plan, second).map(|(c, _)| c)
    }

    /// [`chunk`], and how many scans the second pass did not parse.
    fn chunk_skipped(
        source: &TraceSource,
        mode: &WindowMode,
        plan: &ReadPlan<'_>,
        second: Second,
    ) -> Result<((Vec<u8>, SplitReport), u64), String> {
        chunk_hollow(source, mode, plan, second).map(|(c, skipped, _)| (c, skipped))
    }

    /// A chunk written and the report.
    type Written = (Vec<u8>, SplitReport);

    /// [`chunk_skipped`], and how many gzip pieces the second pass did not decode.
    fn chunk_hollow(
        source: &TraceSource,
        mode: &WindowMode,
        plan: &ReadPlan<'_>,
        second: Second,
    ) -> Result<(Written, u64, u64), String> {
        chunk_blocks(source, mode, plan, second).map(|(c, skipped, hollow, _)| (c, skipped, hollow))
    }

    /// [`chunk_hollow`], and how many blocks of the scans it parsed the second pass did not.
    fn chunk_blocks(
        source: &TraceSource,
        mode: &WindowMode,
        plan: &ReadPlan<'_>,
        second: Second,
    ) -> Result<(Written, u64, u64, u64), String> {
        let mut out = Vec::new();
        let opts = SplitOptions::default();
        split_planned(source, mode, &mut out, &opts, None, plan, second)
            .map(|(r, skipped, hollow, blocks)| ((out, r), skipped, hollow, blocks))
            .map_err(|e| e.to_string())
    }

    fn gzip(plain: &[u8]) -> Vec<u8> {
        gzip_at(plain, 1)
    }

    /// The window of `[from, to)` of the full span (fractions), as an explicit window.
    fn part(full: &SplitReport, from: f64, to: f64) -> WindowMode {
        let (start, end) = (full.window.start_us, full.window.end_us);
        let at = |f: f64| ((start + (end - start) * f) * 1000.0) as i64;
        WindowMode::Explicit(TimeWindow::new(at(from), at(to)).unwrap())
    }

    /// The trace `plain` with its events in a shuffled order (the same prefix and suffix):
    /// GPU times and ids no longer grow in file order, so few scans can be skipped.
    fn shuffled(plain: &[u8], seed: u64) -> Vec<u8> {
        let mut doc: serde_json::Value = serde_json::from_slice(plain).unwrap();
        let events = doc["traceEvents"].as_array_mut().unwrap();
        fastrand::Rng::with_seed(seed).shuffle(events);
        serde_json::to_vec_pretty(&doc).unwrap()
    }

    /// The second pass on the region workers writes the same chunk and report as the
    /// sequential one, on real captures (plain, in memory and gzip), for a full and a 10%
    /// window, whatever the thread count and however small the regions (small regions put
    /// region starts inside strings and elements across regions, which the reading thread
    /// repairs), with and without skipping the scans the first pass proved keep nothing.
    #[test]
    fn parallel_second_pass_writes_what_the_sequential_one_writes() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["eager", "compiled_ro", "graph"] {
            let gz_path = fixture(&format!("{name}.json.gz"));
            let plain = gunzip(&std::fs::read(&gz_path).unwrap());
            let plain_path = dir.path().join(format!("{name}.json"));
            std::fs::write(&plain_path, &plain).unwrap();
            let limits = Limits::default();
            let reference = ReadPlan::new(&limits, Some(1));
            let full = chunk(
                &TraceSource::open(&gz_path).unwrap(),
                &WindowMode::Full,
                &reference,
                Second::Sequential,
            )
            .unwrap();
            for mode in [WindowMode::Full, part(&full.1, 0.45, 0.55)] {
                let sources = || {
                    [
                        TraceSource::open(&gz_path).unwrap(),
                        TraceSource::open(&plain_path).unwrap(),
                        TraceSource::from_bytes("t.json", plain.clone()),
                    ]
                };
                for source in sources() {
                    let want = chunk(&source, &mode, &reference, Second::Sequential).unwrap();
                    assert!(want.1.events_written > 0, "{name}");
                    for threads in [1, 2, 4] {
                        for cut in [
                            Cut::DEFAULT,
                            Cut {
                                region: 3001,
                                look: 300,
                            },
                        ] {
                            let plan = ReadPlan {
                                limits: &limits,
                                threads: Some(threads),
                                cut,
                                stream_cut: cut,
                                map: true,
                            };
                            // Skipping as split does (the next test holds skipping to
                            // parsing every scan).
                            let second = SKIPPING;
                            let got = chunk(&source, &mode, &plan, second).unwrap();
                            assert!(
                                got == want,
                                "{name} {} x{threads} region {}: {:?} vs {:?}",
                                source.file(),
                                cut.region,
                                got.1,
                                want.1
                            );
                        }
                    }
                }
            }
        }
    }

    /// Skipping the scans the first pass proved keep nothing writes the chunk and report
    /// that parsing every scan writes, byte for byte: windows at the start, in the middle,
    /// at the end, empty and full, on time-ordered captures and on a shuffled one, from a
    /// file, from memory and from gzip, with 3,001-byte regions (so most scans of an
    /// ordered capture are skipped: the count is checked, so the test cannot pass by never
    /// skipping).
    #[test]
    fn skipped_scans_change_no_byte_of_the_chunk() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits::default();
        let cut = Cut {
            region: 3001,
            look: 300,
        };
        let inputs = [
            (
                "graph",
                gunzip(&std::fs::read(fixture("graph.json.gz")).unwrap()),
            ),
            (
                "eager",
                gunzip(&std::fs::read(fixture("eager.json.gz")).unwrap()),
            ),
            (
                "multistream",
                gunzip(&std::fs::read(fixture("multistream.json.gz")).unwrap()),
            ),
        ];
        let shuffled_graph = shuffled(&inputs[0].1, 7);
        let inputs = inputs
            .into_iter()
            .chain([("graph_shuffled", shuffled_graph)]);
        for (name, plain) in inputs {
            let plain_path = dir.path().join(format!("{name}.json"));
            std::fs::write(&plain_path, &plain).unwrap();
            let gz = gzip_at(&plain, 6);
            let full = chunk(
                &TraceSource::from_bytes("t.json", plain.clone()),
                &WindowMode::Full,
                &ReadPlan::new(&limits, Some(1)),
                PARSING,
            )
            .unwrap();
            let (start_us, end_us) = (full.1.window.start_us, full.1.window.end_us);
            let empty = TimeWindow::new(
                ((end_us + 1000.0) * 1000.0) as i64,
                ((end_us + 2000.0) * 1000.0) as i64,
            )
            .unwrap();
            assert!(start_us < end_us, "{name}");
            let modes = [
                ("full", WindowMode::Full),
                ("start", part(&full.1, 0.0, 0.1)),
                ("middle", part(&full.1, 0.45, 0.55)),
                ("end", part(&full.1, 0.9, 1.0)),
                ("empty", WindowMode::Explicit(empty)),
            ];
            // Gzip at levels 1, 6 and 9, and in two members (whose second pass decodes
            // every piece: access points describe one member only).
            let mut gzips = vec![("6", gz.clone())];
            if name == "graph" {
                let mut two = gzip_at(&plain[..plain.len() / 2], 6);
                two.extend(gzip_at(&plain[plain.len() / 2..], 6));
                gzips.extend([
                    ("1", gzip_at(&plain, 1)),
                    ("9", gzip_at(&plain, 9)),
                    ("two members", two),
                ]);
            }
            for (label, mode) in &modes {
                let mut sources = vec![
                    TraceSource::open(&plain_path).unwrap(),
                    TraceSource::from_bytes("t.json", plain.clone()),
                ];
                for (level, gz) in &gzips {
                    sources.push(TraceSource::from_bytes(
                        format!("t {level}.json.gz"),
                        gz.clone(),
                    ));
                }
                for source in &sources {
                    for threads in [1, 2] {
                        let plan = ReadPlan {
                            limits: &limits,
                            threads: Some(threads),
                            cut,
                            stream_cut: cut,
                            map: true,
                        };
                        let (want, none) = chunk_skipped(source, mode, &plan, PARSING).unwrap();
                        assert_eq!(none, 0);
                        let (got, skipped, hollow) =
                            chunk_hollow(source, mode, &plan, SKIPPING).unwrap();
                        let at = format!("{name} {label} {} x{threads}", source.file());
                        assert!(got == want, "{at}: {:?} vs {:?}", got.1, want.1);
                        // A one-member gzip source is decoded only where it is read (not
                        // with `isal`, whose first pass records no access points).
                        let one_gz = !cfg!(feature = "isal")
                            && source.file().ends_with(".gz")
                            && !source.file().contains("two");
                        if !one_gz {
                            assert_eq!(hollow, 0, "{at}");
                        } else if !name.ends_with("shuffled")
                            && *label != "full"
                            && plain.len() > 2 * read::CHUNK
                        {
                            // Tiny regions: most pieces hold bytes the reading thread reads
                            // itself (the next test has realistic ones); so do those of the
                            // first MiB, which it reads to find the array.
                            assert!(hollow > 0, "{at}: none of {skipped} hollow");
                        }
                        // Ordered captures skip most scans of a part window; an empty window
                        // keeps only metadata.
                        if !name.ends_with("shuffled") && *label != "full" {
                            let scans = plain.len() / cut.region;
                            assert!(skipped * 2 > scans as u64, "{at}: {skipped} of ~{scans}");
                        }
                    }
                }
            }
        }
    }

    /// With regions of a realistic size, a one-member gzip source's second pass decodes
    /// only the pieces it reads: most pieces it does not parse are not decoded either
    /// (resumed at access points), and the chunk is the one a full decode writes, for
    /// windows at the start, middle and end and an empty one, from a file and from memory.
    #[test]
    fn gzip_pieces_the_second_pass_skips_are_not_decoded() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits::default();
        let cut = Cut {
            region: 64 << 10,
            look: 8 << 10,
        };
        let plan = ReadPlan {
            limits: &limits,
            threads: Some(2),
            cut,
            stream_cut: cut,
            map: true,
        };
        let plain = gunzip(&std::fs::read(fixture("eager.json.gz")).unwrap());
        let gz = gzip_at(&plain, 6);
        let path = dir.path().join("eager.json.gz");
        std::fs::write(&path, &gz).unwrap();
        let full = chunk(
            &TraceSource::from_bytes("t.json", plain.clone()),
            &WindowMode::Full,
            &plan,
            PARSING,
        )
        .unwrap();
        let empty = TimeWindow::new(
            ((full.1.window.end_us + 1000.0) * 1000.0) as i64,
            ((full.1.window.end_us + 2000.0) * 1000.0) as i64,
        )
        .unwrap();
        let modes = [
            part(&full.1, 0.0, 0.1),
            part(&full.1, 0.45, 0.55),
            part(&full.1, 0.9, 1.0),
            WindowMode::Explicit(empty),
        ];
        let pieces = (plain.len() / cut.region) as u64;
        for mode in &modes {
            for source in [
                TraceSource::open(&path).unwrap(),
                TraceSource::from_bytes("t.json.gz", gz.clone()),
            ] {
                let (want, ..) = chunk_hollow(&source, mode, &plan, PARSING).unwrap();
                let (got, skipped, hollow) = chunk_hollow(&source, mode, &plan, SKIPPING).unwrap();
                let at = format!("{mode:?} {}", source.file());
                assert!(got == want, "{at}: {:?} vs {:?}", got.1, want.1);
                assert!(skipped * 2 > pieces, "{at}: {skipped} of {pieces} skipped");
                if cfg!(feature = "isal") {
                    // ISA-L decodes the first pass: no access points, every piece decoded.
                    assert_eq!(hollow, 0, "{at}");
                    continue;
                }
                // The pieces of the first MiB hold what the reading thread reads to find the
                // array: always decoded.
                let first = (read::CHUNK / cut.region) as u64 + 1;
                assert!(
                    hollow + first >= skipped,
                    "{at}: {hollow} of {skipped} hollow"
                );
                assert!(hollow * 3 > pieces, "{at}: {hollow} of {pieces} hollow");
            }
        }
    }

    /// In scans the window's edge cuts, the blocks the first pass proved keep nothing are
    /// not parsed, and the chunk and report are those of parsing every scan, byte for byte:
    /// real captures (time-ordered and shuffled) in 2 MiB regions (the scans split reads)
    /// with blocks of [`BLOCK_EVENTS`] and of 7 events, windows at the start, middle and end
    /// and an empty and a full one, from a file, memory and gzip, on one and two threads.
    /// The count of blocks skipped in a part window is checked, so the test cannot pass by
    /// skipping none.
    #[test]
    fn blocks_of_a_parsed_scan_are_skipped_alone_and_change_no_byte() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits::default();
        let graph = gunzip(&std::fs::read(fixture("graph.json.gz")).unwrap());
        let inputs = [
            (
                "eager",
                gunzip(&std::fs::read(fixture("eager.json.gz")).unwrap()),
            ),
            ("graph_shuffled", shuffled(&graph, 7)),
            ("graph", graph),
        ];
        for (name, plain) in inputs {
            let path = dir.path().join(format!("{name}.json"));
            std::fs::write(&path, &plain).unwrap();
            let sources = [
                TraceSource::open(&path).unwrap(),
                TraceSource::from_bytes("t.json", plain.clone()),
                TraceSource::from_bytes("t.json.gz", gzip_at(&plain, 6)),
            ];
            let one = ReadPlan::new(&limits, Some(1));
            let full = chunk(&sources[1], &WindowMode::Full, &one, PARSING).unwrap();
            let end_us = full.1.window.end_us;
            let empty = TimeWindow::new(
                ((end_us + 1000.0) * 1000.0) as i64,
                ((end_us + 2000.0) * 1000.0) as i64,
            )
            .unwrap();
            let modes = [
                ("start", part(&full.1, 0.0, 0.1)),
                ("middle", part(&full.1, 0.45, 0.55)),
                ("end", part(&full.1, 0.9, 1.0)),
                ("empty", WindowMode::Explicit(empty)),
                ("full", WindowMode::Full),
            ];
            for (label, mode) in &modes {
                for source in &sources {
                    let want = chunk(source, mode, &one, PARSING).unwrap();
                    for (threads, block) in [(1, BLOCK_EVENTS), (2, BLOCK_EVENTS), (2, 7)] {
                        let plan = ReadPlan::new(&limits, Some(threads));
                        let second = Second::Regions { skip: true, block };
                        let (got, _, _, blocks) =
                            chunk_blocks(source, mode, &plan, second).unwrap();
                        let at = format!("{name} {label} {} x{threads} /{block}", source.file());
                        assert!(got == want, "{at}: {:?} vs {:?}", got.1, want.1);
                        // A part window of an ordered capture cuts a scan of thousands of
                        // events.
                        if !name.ends_with("shuffled")
                            && matches!(*label, "start" | "middle" | "end")
                        {
                            assert!(blocks > 0, "{at}: no block skipped");
                        }
                    }
                }
            }
        }
    }

    /// 3,000 launches, kernels and flows in time order with malformed elements every 500
    /// (18 stream errors), and a metadata event at the end.
    fn with_errors() -> String {
        let mut t = String::from("{\"traceEvents\":[\n");
        for i in 0..3000i64 {
            t.push_str(&format!(
                r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":{i},"dur":1,"args":{{"correlation":{i}}}}},{{"ph":"X","cat":"kernel","name":"k","ts":{t},"dur":1,"args":{{"correlation":{i}}}}},{{"ph":"f","cat":"ac2g","id":{i},"ts":{t},"bp":"e"}},"#,
                t = i + 5
            ));
            t.push('\n');
            match i % 500 {
                // Far from the window: errors in scans that keep nothing.
                100 => t.push_str("42, {\"bad\": nope},\n"),
                // Inside it.
                250 => t.push_str("{\"ph\":\"X\",\"cat\":\"kernel\",\"ts\":\"x\"\n \"dur\":1},\n"),
                _ => {}
            }
        }
        t.push_str(r#"{"name":"process_name","ph":"M","pid":0,"args":{"name":"x"}}]}"#);
        t
    }

    /// What a fold holds that split's window, links and coverage come from.
    fn folded(c: &crate::collect::Collected) -> String {
        let mut links: Vec<_> = c.launches.links().collect();
        links.sort_unstable();
        format!(
            "{} {:?} {:?} {:?} {:?} {:?} {:?} {} {} {}",
            c.event_total,
            c.first_complete_ts,
            links,
            c.gpu.recs(),
            c.gpu.annotations(),
            c.cpu.steps(),
            c.cpu.spans(),
            c.launches.runtime_graph().len(),
            c.launches.driver_graph().len(),
            c.cpu.op_count()
        )
    }

    /// The first pass parses every event to survey it and hands analysis only the ones it
    /// reads: the fold and the stream errors are those of the analysis read, on real
    /// captures and on a trace with stream errors, in memory and gzip, whatever the regions.
    #[test]
    fn the_surveying_first_pass_folds_what_analysis_folds() {
        let limits = Limits::default();
        let inputs = [
            gunzip(&std::fs::read(fixture("graph.json.gz")).unwrap()),
            gunzip(&std::fs::read(fixture("eager.json.gz")).unwrap()),
            with_errors().into_bytes(),
        ];
        for plain in inputs {
            for source in [
                TraceSource::from_bytes("t.json", plain.clone()),
                TraceSource::from_bytes("t.json.gz", gzip(&plain)),
            ] {
                for (threads, region) in [(1, 4 << 20), (2, 3001)] {
                    let cut = Cut { region, look: 300 };
                    let plan = ReadPlan {
                        limits: &limits,
                        threads: Some(threads),
                        cut,
                        stream_cut: cut,
                        map: true,
                    };
                    let mut feed = Feed::new(None);
                    let out = read::read(&source, &plan, &mut feed).unwrap();
                    let want = (folded(feed.fold.collected()), out.stream_errors);
                    let mut feed = Feed::new(None);
                    let scanner = Surveyor {
                        analyse: Analyse {
                            limits: &limits,
                            wanted: feed.wanted(),
                            observed: false,
                        },
                        block: 7,
                    };
                    let mut folder = Surveyed {
                        feed: &mut feed,
                        surveys: Surveys::default(),
                    };
                    let mut log = ErrorLog::default();
                    read::read_with(&source, &plan, &scanner, &mut folder, &mut log).unwrap();
                    // Small regions: most scans read cleanly, even with stream errors.
                    assert!(region > 3001 || !folder.surveys.is_empty());
                    let got = (folded(feed.fold.collected()), log.finish());
                    assert!(got == want, "{} x{threads} {region}", source.file());
                }
            }
        }
    }

    /// A scan that met a stream error is parsed again by the second pass, so the errors
    /// are reported as without skipping (same texts, same event numbers) and the events
    /// recovered around them are kept alike; scans elsewhere are still skipped.
    #[test]
    fn scans_with_stream_errors_are_never_skipped() {
        let t = with_errors();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        std::fs::write(&path, &t).unwrap();
        let limits = Limits::default();
        let cut = Cut {
            region: 3001,
            look: 300,
        };
        let mode = WindowMode::Explicit(TimeWindow::new(1_200_000, 1_300_000).unwrap());
        let sources = [
            TraceSource::open(&path).unwrap(),
            TraceSource::from_bytes("t.json", t.clone().into_bytes()),
            TraceSource::from_bytes("t.json.gz", gzip(t.as_bytes())),
        ];
        for source in &sources {
            let reference = chunk(
                source,
                &mode,
                &ReadPlan::new(&limits, Some(1)),
                Second::Sequential,
            )
            .unwrap();
            assert_eq!(
                reference.1.stream_errors.len(),
                18,
                "{:?}",
                reference.1.stream_errors
            );
            assert_eq!(reference.1.gpu_events, 100);
            for threads in [1, 2] {
                let plan = ReadPlan {
                    limits: &limits,
                    threads: Some(threads),
                    cut,
                    stream_cut: cut,
                    map: true,
                };
                let (got, skipped) = chunk_skipped(source, &mode, &plan, SKIPPING).unwrap();
                assert!(
                    got == reference,
                    "{} x{threads}: {:?}",
                    source.file(),
                    got.1
                );
                assert!(skipped > 50, "{skipped}");
            }
        }
    }

    /// Every report, as given.
    #[derive(Default)]
    struct Recorded(Vec<(u64, Option<u64>)>);

    impl ProgressSink for Recorded {
        fn progress(&mut self, done: u64, total: Option<u64>) {
            self.0.push((done, total));
        }
    }

    #[test]
    fn split_progress_covers_both_reads_in_order_and_ends_at_twice_the_stored_size() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/traces/eager.json.gz"
        );
        let stored = std::fs::metadata(path).unwrap().len();
        let source = TraceSource::open(path).unwrap();
        let mut seen = Recorded::default();
        let mode = WindowMode::Full;
        let plain = split_window(&source, &mode, Vec::new(), &SplitOptions::default()).unwrap();
        let report = split_window_with_progress(
            &source,
            &mode,
            Vec::new(),
            &SplitOptions::default(),
            &mut seen,
        )
        .unwrap();
        assert_eq!(report, plain, "progress changes nothing in the split");
        let reports = seen.0;
        assert!(reports.iter().all(|&(_, t)| t == Some(2 * stored)));
        assert!(reports.windows(2).all(|w| w[0].0 <= w[1].0), "{reports:?}");
        // The first read reaches half way, the second the end.
        assert!(reports.iter().any(|&(d, _)| d == stored), "{reports:?}");
        assert_eq!(reports.last().map(|r| r.0), Some(2 * stored));
    }

    /// What the walk hands over for each event: the link (and name) taken from a shape's
    /// read or from the event the cursor built, and how many came from shapes.
    #[derive(Default)]
    struct Probe {
        seen: Option<Members>,
        shaped: u64,
        links: Vec<Members>,
    }

    /// What [`Keep::keep`] reads of an event: its link, and its name as text and escaped.
    type Members = (Link, Vec<u8>, bool);

    fn kept_members<'a>(ev: &impl Linked<'a>) -> Members {
        let name = ev.name();
        (Link::of(ev), name.raw.to_vec(), name.escaped)
    }

    impl<'a> Put<'a> for Probe {
        const READS_UNKEPT: bool = true;

        fn put(&mut self, ev: Event<'a>) {
            self.seen = Some(kept_members(&ev));
        }

        fn put_shaped(&mut self, read: &Shaped<'_, 'a>, _wanted: Wanted) -> bool {
            self.shaped += 1;
            self.seen = Some(kept_members(read));
            true
        }
    }

    impl<'a> Elements<'a> for Probe {
        type Put = Self;

        fn put(&mut self) -> &mut Self {
            self
        }

        fn event(&mut self, _kept: bool, _raw: &'a [u8]) {
            let seen = self.seen.take().expect("every event is handed over");
            self.links.push(seen);
        }
    }

    /// The link (and name) split decides on, taken from a shape's read without building
    /// the event, is [`Link::of`] of the event the parser builds, for every event of every
    /// fixture trace (most of them read by shapes: the count is checked, so the test
    /// cannot pass by never taking the fast path).
    #[test]
    fn links_read_by_shapes_are_the_parsers_links() {
        let limits = Limits::default();
        let mut traces: Vec<_> = std::fs::read_dir(fixture(""))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
            .collect();
        traces.sort();
        assert!(traces.len() >= 8, "{traces:?}");
        for path in traces {
            let doc = gunzip(&std::fs::read(&path).unwrap());
            let crate::scan::Located::Array { body, form, .. } =
                crate::scan::locate_array(&doc, true, &limits)
            else {
                panic!("{path:?}: no array");
            };
            let mut probe = Probe::default();
            let span = Span {
                buf: &doc,
                at: 0,
                start: body,
                stop: doc.len(),
                tail: Tail::Eof,
                broken: None,
                form,
            };
            let walked = read::walk(span, &limits, EVERY_EVENT, &mut probe);
            assert!(walked.out.problems.is_empty(), "{path:?}");
            // The parser's events, one by one from the array's start.
            let (mut pos, mut stack, mut n) = (body, Vec::new(), 0);
            loop {
                while matches!(doc.get(pos), Some(b' ' | b'\n' | b'\r' | b'\t' | b',')) {
                    pos += 1;
                }
                if doc.get(pos) != Some(&b'{') {
                    break;
                }
                let mut c = Cursor::new(&doc, pos);
                let ev = crate::event::parse_event(&mut c, &mut stack, EVERY_EVENT)
                    .unwrap()
                    .unwrap();
                pos = c.i;
                assert!(
                    probe.links.get(n) == Some(&kept_members(&ev)),
                    "{path:?} event {n}: {:?} vs {:?}",
                    probe.links.get(n),
                    kept_members(&ev)
                );
                n += 1;
            }
            assert_eq!(n, probe.links.len(), "{path:?}");
            assert!(
                probe.shaped * 10 > n as u64 * 9,
                "{path:?}: {} of {n}",
                probe.shaped
            );
        }
    }
}
