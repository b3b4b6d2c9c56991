//! # kernlens-trace
//!
//! Reads PyTorch-profiler (Kineto) Chrome traces of any size in one streaming pass and
//! answers: where did GPU time go, is the GPU busy, which kernels and ops are hot, and
//! can the idle figure be trusted (CUDA/HIP-graph replay coverage).
//!
//! It is for tools that embed trace analysis (optimisation agents, CI perf gates, trace
//! viewers). It is not a general JSON library or a trace editor, and it does no kernel
//! identity or source lookup (see the `kernlens-ident` and `kernlens-locate` crates).
//!
//! ```
//! use kernlens_trace::{analyze, Options, TraceSource};
//!
//! let trace = br#"{"traceEvents":[
//!   {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":1000.0,"dur":200.0,
//!    "args":{"correlation":5,"device":0}},
//!   {"ph":"X","cat":"kernel","name":"softmax","pid":0,"tid":7,"ts":1300.0,"dur":100.0,
//!    "args":{"correlation":6,"device":0}}
//! ]}"#;
//! let source = TraceSource::from_bytes("example.json", trace.to_vec());
//! let analysis = analyze(&source, &Options::default())?;
//! assert_eq!(analysis.timeline.busy_us, 300.0);
//! assert_eq!(analysis.kernels[0].name, "gemm");
//! assert!(analysis.stream_errors.is_empty());
//! # Ok::<(), kernlens_trace::TraceError>(())
//! ```
//!
//! ## How it reads
//!
//! Data flows one way: bytes → borrowed events → compact records → aggregates → report.
//! An uncompressed file is cut into regions parsed in parallel, whose bytes the workers read
//! through a memory map; names borrow from the mapped bytes. The first mapped read installs
//! a SIGBUS handler that turns a file shrinking under the map into a stream error instead
//! of a dead process (it passes other SIGBUS signals on; [`Options::map_files`] turns the
//! map off, and the read then copies with `pread`). Gzip (detected by magic bytes) is
//! decompressed by one thread into reused, overlapping pieces that the same region workers
//! parse; plain stdin streams through a bounded two-thread pipeline. Either way every
//! event is folded in file order, so results are identical for any thread count.
//!
//! Each event is read by the first of two paths that takes it:
//!
//! 1. **Shapes** (`shape` module): a profiler writes a handful of event layouts over
//!    and over. Once an event has been parsed, its layout (the fixed bytes between
//!    values, `ph` and `cat` among them, and which member each value is) is kept; a later
//!    event with the same fixed bytes is read by comparing them 16 at a time and scanning
//!    only the values (strings, numbers, and lists such as `Input Dims` taken whole).
//!    What repeats is remembered: a kernel's bytes after its last varying value, list
//!    texts, and, for events the caller does not keep (a summary's flows), the last two
//!    of each shape, which a later one matches when only number digits differ.
//! 2. **The cursor** (`json` module): a small validating byte-by-byte reader. It is the
//!    reference: shapes give up on anything unusual (escapes, control bytes, an object
//!    in a list, an event cut short, any error), and the cursor then decides, with every
//!    error message and recovery. It also reads the first event of each shape, which
//!    teaches it. Tests and a fuzz target hold the shapes to reading every event exactly
//!    as the cursor does.
//!
//! Workers also number each region's names, streams, launch geometries and op meta texts
//! and turn GPU events into 48-byte records, so the in-order fold only maps numbers to ids. The
//! report's time-ordered sweeps and its file-ordered rows run on three threads. Why not a
//! general JSON crate: simd-json needs the whole document mutable in memory and stops at
//! 4 GiB; serde_json builds or visits every value (~0.3 GB/s/core here). PERFORMANCE.md
//! has the measurements.
//!
//! Bad content is never an error: it is recovered and reported in
//! [`Analysis::stream_errors`] with the documented messages, keeping every complete event.
//! The one error content can give is [`TraceError::NotATrace`], for input that is neither
//! a Kineto object nor Chrome's JSON Array Format.
//!
//! ## Where the read path lives
//!
//! - `read/mod.rs`: one read of a source, planned once (`ReadPlan`): source dispatch and
//!   gzip sniffing, the head (`scan::locate_array`), and `Feed`, which holds the fold
//!   together with the observer and progress sink the reader serves;
//! - `read/parallel.rs`: a plain input in regions, scanned in parallel from a guarded map
//!   (`read/map.rs`: the map and its SIGBUS handler) or read with `pread` into reused
//!   buffers, and the in-order check of each region's start guess (and, for a map, of
//!   whether the region is still the file's);
//!   `read/region.rs`: the element loop over one region, what a worker keeps of it
//!   (`Scanner`: analysis events, or split's kept text) and its in-order fold (`Folder`);
//! - `read/pieces.rs`: a gzip input decoded into overlapping pieces for the region workers;
//!   `read/gzip.rs`: gzip members and what follows the last one (`read/isal.rs`: one
//!   member through ISA-L, the `isal` feature); `read/sequential.rs`: plain stdin through
//!   the two-thread pipeline; `read/stream.rs`: progress in stored bytes;
//! - `scan.rs`: locating the array and the element loop; `problem.rs`: the stream-error
//!   texts; `json.rs`: the cursor and JSON helpers; `member.rs`: the Kineto members the
//!   parser (`event.rs`) and the shapes (`shape.rs`) read; `collect.rs`: the fold
//!   (`Collector`, whose pid and meta lookups stay inside it) and the read-only value it
//!   finishes into (`Collected`): names, and three groups with private fields, `Gpu`
//!   (records, streams, geometries, annotations), `Launches` (links, launch sites,
//!   graph-launch sets) and `Cpu` (ops, metas, steps, spans). Each later stage takes the
//!   groups it reads: `graph.rs` launches and GPU records, `rows.rs` launches, CPU ops
//!   and names, `overlap.rs` GPU streams and names, `window.rs` all of them.

mod analysis;
mod collect;
mod dense;
mod error;
mod event;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod gpu;
mod graph;
mod intern;
mod json;
mod launch;
mod member;
mod number;
mod observe;
mod options;
mod overlap;
mod problem;
mod provenance;
mod ranks;
mod read;
mod report;
mod rows;
mod scan;
mod select;
mod shape;
mod source;
mod split;
#[cfg(test)]
mod test_files;
mod timeline;
mod window;

pub use analysis::{Analysis, COMM_PATTERNS, SUMMARY_SCHEMA};
pub use error::TraceError;
pub use graph::is_graph_launch;
pub use launch::LaunchRecord;
pub use number::micros_text_to_ns;
pub use observe::{DeviceKind, EventObserver, NumberedEvent, ObservedEvent, ProgressSink, TraceId};
pub use options::{Cycles, Limits, Options, StepSource, TimeWindow, WindowMode};
pub use ranks::{
    BusySpread, FailedRank, RANKS_SCHEMA, RankEntry, RankFile, RankOutcome, RankReport,
    RankSummary, analyze_all_ranks, plan_files, plan_ranks, ranks_document,
};
pub use report::{
    Attribution, Categories, ChunkProvenance, ChunkWindow, DeviceTimeline, GraphCoverage,
    KernelRow, LaunchApi, OpRow, Scope, SteadyWindow, StreamId, StreamOverlap, Timeline,
    WindowStatus,
};
pub use source::TraceSource;
pub use split::{
    SPLIT_SCHEMA, SplitDocument, SplitOptions, SplitReport, split, split_window,
    split_window_with_progress, split_with_progress,
};

/// Worker threads a read uses when [`Options::threads`] is `None`: the size of rayon's global
/// pool (`RAYON_NUM_THREADS` when set, else the cores this process may run on), read by rayon
/// once. Callers that split the cores between reads (the facade's diff) start from it.
pub fn default_threads() -> usize {
    rayon::current_num_threads()
}

/// Analyses a trace in one pass: the common case. [`TraceReader`] adds an observer or a
/// progress sink.
pub fn analyze(source: &TraceSource, opts: &Options) -> Result<Analysis, TraceError> {
    run(source, opts, None)
}

/// One analysis with what [`analyze`] leaves out: an [`EventObserver`] that sees the
/// device (kernel, copy, memset), launch and `python_function` events in the same pass,
/// and a [`ProgressSink`].
///
/// ```
/// use kernlens_trace::{Options, TraceReader, TraceSource};
///
/// let trace = br#"{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2}]}"#;
/// struct Names(Vec<String>);
/// impl kernlens_trace::EventObserver for Names {
///     fn observe(&mut self, ev: &kernlens_trace::ObservedEvent<'_>) {
///         self.0.push(ev.name.to_string());
///     }
/// }
/// let mut names = Names(Vec::new());
/// let analysis = TraceReader::new(TraceSource::from_bytes("t.json", trace.to_vec()))
///     .with_options(Options::default().with_top_k(0))
///     .with_observer(&mut names)
///     .analyze()?;
/// assert_eq!(analysis.kernels.len(), 1);
/// assert_eq!(names.0, ["k"]);
/// # Ok::<(), kernlens_trace::TraceError>(())
/// ```
pub struct TraceReader<'a> {
    source: TraceSource,
    options: Options,
    observer: Option<&'a mut dyn EventObserver>,
    progress: Option<&'a mut dyn ProgressSink>,
}

impl<'a> TraceReader<'a> {
    /// A read of `source` with the default options, no observer and no progress.
    pub fn new(source: TraceSource) -> Self {
        TraceReader {
            source,
            options: Options::default(),
            observer: None,
            progress: None,
        }
    }

    /// The analysis options.
    pub fn with_options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }

    /// Hands `observer` every kernel, copy, memset, launch and `python_function` event, in
    /// file order, as [`EventObserver`] says: copies and memsets only when it takes them, and
    /// a device event the workers digested first by its numbers alone.
    pub fn with_observer(mut self, observer: &'a mut dyn EventObserver) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Reports read progress to `progress`.
    pub fn with_progress(mut self, progress: &'a mut dyn ProgressSink) -> Self {
        self.progress = Some(progress);
        self
    }

    /// Reads the source once and builds the analysis.
    pub fn analyze(self) -> Result<Analysis, TraceError> {
        run_with(
            &self.source,
            &self.options,
            read::Feed::new(self.observer).with_progress(self.progress),
        )
    }
}

/// Analyses a trace in one pass and hands `observer` every kernel, copy, memset, launch
/// (`cuda_runtime`/`cuda_driver`) and `python_function` event, in file order (what
/// [`TraceReader::with_observer`] does, for a borrowed source).
pub fn analyze_observed(
    source: &TraceSource,
    opts: &Options,
    observer: &mut dyn EventObserver,
) -> Result<Analysis, TraceError> {
    run(source, opts, Some(observer))
}

/// [`analyze_observed`] with an optional observer and an optional progress sink, for
/// front ends that show how far a long read has come ([`TraceReader`], for a borrowed
/// source).
pub fn analyze_with_progress<'a>(
    source: &TraceSource,
    opts: &Options,
    observer: Option<&'a mut dyn EventObserver>,
    progress: &'a mut dyn ProgressSink,
) -> Result<Analysis, TraceError> {
    run_with(
        source,
        opts,
        read::Feed::new(observer).with_progress(Some(progress)),
    )
}

fn run(
    source: &TraceSource,
    opts: &Options,
    observer: Option<&mut dyn EventObserver>,
) -> Result<Analysis, TraceError> {
    run_with(source, opts, read::Feed::new(observer))
}

fn run_with(
    source: &TraceSource,
    opts: &Options,
    collector: read::Feed<'_>,
) -> Result<Analysis, TraceError> {
    read_analysis(source, opts, collector).map(|(analysis, _)| analysis)
}

/// One read folded into an analysis, with why the input holds nothing to analyse: no
/// `traceEvents` array (the reason is its stream errors), or no GPU event in the array.
/// All-ranks mode lists such a rank under `failed` instead of counting it as 0% busy.
pub(crate) fn read_analysis(
    source: &TraceSource,
    opts: &Options,
    collector: read::Feed<'_>,
) -> Result<(Analysis, Option<String>), TraceError> {
    let mut collector = collector;
    let out = read::read(
        source,
        &read::ReadPlan::new(&opts.limits, opts.threads).mapped(opts.map_files),
        &mut collector,
    )?;
    collector.read_done();
    let c = collector.fold.finish();
    let unusable = if !out.array_found {
        Some(if out.stream_errors.is_empty() {
            "no traceEvents array".to_string()
        } else {
            out.stream_errors.join("; ")
        })
    } else if c.gpu.recs().is_empty() {
        Some("no GPU events in its traceEvents array, so busy% is undefined".to_string())
    } else {
        None
    };
    let analysis = analysis::build(source, opts, c, out.stream_errors, out.provenance);
    Ok((analysis, unusable))
}

/// Graph coverage of a whole trace, with its provenance and stream errors: what the
/// gate's probe needs (trace.md "Public API sketch (names only)", trace.md "Graph launches and coverage").
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct CoverageReport {
    /// The trace.md "Graph launches and coverage" block.
    pub graph: GraphCoverage,
    /// The `kernlens` member when the input is a split chunk.
    pub provenance: Option<ChunkProvenance>,
    /// Structural problems met and recovered from.
    pub stream_errors: Vec<String>,
}

/// Computes only the graph-coverage block of a trace (a plain file is mapped, as
/// [`Options::map_files`] describes; [`analyze`] with that option off reads without).
pub fn graph_coverage(source: &TraceSource, limits: &Limits) -> Result<CoverageReport, TraceError> {
    let mut collector = read::Feed::new(None);
    let plan = read::ReadPlan::new(limits, None).mapped(true);
    let out = read::read(source, &plan, &mut collector)?;
    Ok(CoverageReport {
        graph: {
            let c = collector.fold.finish();
            graph::coverage(&c.launches, &c.gpu)
        },
        provenance: out.provenance,
        stream_errors: out.stream_errors,
    })
}
