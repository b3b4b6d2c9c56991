//! Split: one window of a trace written as a new, valid Kineto trace (trace.md "Split").
//!
//! Two passes by design: the first finds the window's GPU events and the correlations
//! and External ids that tie CPU events to them; the second copies the kept events
//! byte for byte. Graph launches are kept through their correlation only, never by
//! their CPU time (which runs ahead of the GPU and belongs to the next replay).

use std::io::{self, Write};

use serde::Serialize;

use crate::collect::Collected;
use crate::error::TraceError;
use crate::event::{Cat, Event, Wanted};
use crate::graph;
use crate::intern::Set;
use crate::json::Cursor;
use crate::observe::ProgressSink;
use crate::options::{Limits, TimeWindow, WindowMode};
use crate::problem::ErrorLog;
use crate::read::{self, Elements, Folder, Scanned, Scanner, Span, Walked};
use crate::report::{ChunkWindow, GraphCoverage, us};
use crate::source::{Input, TraceSource};
use crate::window;

/// Options of [`split`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SplitOptions {
    /// Gzip the output.
    pub gzip: bool,
    /// Input bounds (as for analysis).
    pub limits: Limits,
}

impl SplitOptions {
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
        &read::ReadPlan::new(&opts.limits, None),
        Second::Regions,
    )
}

/// How the second pass reads.
#[derive(Clone, Copy)]
enum Second {
    /// On the region workers, as the first pass does.
    Regions,
    /// Element by element on one thread: the reference the tests hold the workers to.
    #[cfg(test)]
    Sequential,
}

/// [`split_inner`] with both reads done as `plan` says (tests vary the threads and cuts).
fn split_planned(
    source: &TraceSource,
    mode: &WindowMode,
    out: impl Write,
    opts: &SplitOptions,
    progress: Option<&mut dyn ProgressSink>,
    plan: &read::ReadPlan<'_>,
    second: Second,
) -> Result<SplitReport, TraceError> {
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
        read::Feed::new(None).with_progress(progress.as_mut().map(|p| p as &mut dyn ProgressSink));
    let first = read::read(source, plan, &mut collector)?;
    let c = collector.fold.out;
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
        WindowMode::Full => full_span(&c),
    };
    let graph = graph::coverage(&c);
    let provenance = first.provenance;
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
    let (corrs, exts) = kept_links(&c, window);
    drop(c);

    // The second pass: region workers pick the kept events' text, this thread writes it in
    // file order.
    let keep = Keep {
        window,
        corrs,
        exts,
    };
    let mut sink = SplitSink::new(Output::new(out, opts.gzip), window, member, progress);
    let mut log = ErrorLog::default();
    let chunker = Chunker {
        keep: &keep,
        limits: &opts.limits,
    };
    match second {
        Second::Regions => {
            read::read_with(source, plan, &chunker, &mut sink, &mut log)?;
        }
        #[cfg(test)]
        Second::Sequential => tests::sequential(source, &chunker, &mut sink, &mut log),
    }
    let mut report = sink.finish()?;
    report.stream_errors = log.finish();
    Ok(report)
}

/// The GPU span of the whole trace, for a `Full` split (end exclusive, so it reaches one
/// past the last start and keeps every event).
fn full_span(c: &Collected) -> TimeWindow {
    let start = c.gpu.iter().map(|r| r.ts).min().unwrap_or(0);
    let end = c
        .gpu
        .iter()
        .map(|r| r.ts.saturating_add(r.dur))
        .max()
        .unwrap_or(0);
    let last_start = c.gpu.iter().map(|r| r.ts).max().unwrap_or(0);
    TimeWindow::clamped(start, end.max(last_start.saturating_add(1)))
}

/// Correlations of the window's GPU events, and the External ids their launches carry.
fn kept_links(c: &Collected, window: TimeWindow) -> (Set<i64>, Set<i64>) {
    let corrs: Set<i64> = c
        .gpu
        .iter()
        .filter(|r| window.contains(r.ts))
        .filter_map(|r| r.corr())
        .collect();
    let exts: Set<i64> = corrs
        .iter()
        .filter_map(|k| c.links.get(k).copied())
        .collect();
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

impl Keep {
    /// Whether `ev` goes into the chunk, counted in `r` when it does.
    fn keep(&self, ev: &Event<'_>, r: &mut Counts) -> bool {
        if ev.ph_m {
            r.metadata_events += 1;
            return true;
        }
        match ev.cat {
            Cat::Kernel | Cat::Memcpy | Cat::Memset | Cat::GpuUserAnnotation => {
                let keep = ev.ph_x && self.window.contains(ev.ts);
                r.gpu_events += u64::from(keep);
                keep
            }
            Cat::Runtime | Cat::Driver => {
                let keep = ev.args.correlation.is_some_and(|k| self.corrs.contains(&k));
                if keep {
                    r.launch_events += 1;
                    let graph =
                        memchr::memmem::find(ev.name.decode().as_bytes(), b"GraphLaunch").is_some();
                    r.graph_launch_events += u64::from(graph);
                }
                keep
            }
            Cat::CpuOp | Cat::UserAnnotation => {
                let keep = ev.args.external_id.is_some_and(|x| self.exts.contains(&x));
                r.cpu_events += u64::from(keep);
                keep
            }
            Cat::Flow => {
                let keep = ev.id.is_some_and(|k| self.corrs.contains(&k));
                r.flow_events += u64::from(keep);
                keep
            }
            Cat::PythonFunction | Cat::Other => false,
        }
    }

    /// Takes event `raw` into `kept` when the chunk keeps it.
    fn take(&self, ev: Option<Event<'_>>, raw: &[u8], kept: &mut Kept) {
        kept.counts.events_read += 1;
        if let Some(ev) = ev
            && self.keep(&ev, &mut kept.counts)
        {
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

/// A region being read by the second pass's element loop.
struct Picking<'k, 'a> {
    keep: &'k Keep,
    one: Option<Event<'a>>,
    kept: Kept,
}

impl<'a> Elements<'a> for Picking<'_, 'a> {
    type Put = Option<Event<'a>>;

    fn put(&mut self) -> &mut Option<Event<'a>> {
        &mut self.one
    }

    fn event(&mut self, _kept: bool, raw: &'a [u8]) {
        self.keep.take(self.one.take(), raw, &mut self.kept);
    }
}

impl Scanner for Chunker<'_> {
    type Out<'a> = Kept;

    fn scan<'a>(&self, span: Span<'a, '_>) -> Scanned<Kept> {
        let mut p = Picking {
            keep: self.keep,
            one: None,
            kept: Kept::default(),
        };
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
    use std::io::Read;

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
            self.keep.take(ev, raw, &mut kept);
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

    fn fixture(name: &str) -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/traces")
            .join(name)
    }

    /// A chunk and its report, or the error's text.
    fn chunk(
        source: &TraceSource,
        mode: &WindowMode,
        plan: &ReadPlan<'_>,
        second: Second,
    ) -> Result<(Vec<u8>, SplitReport), String> {
        let mut out = Vec::new();
        let opts = SplitOptions::default();
        split_planned(source, mode, &mut out, &opts, None, plan, second)
            .map(|r| (out, r))
            .map_err(|e| e.to_string())
    }

    /// The second pass on the region workers writes the same chunk and report as the
    /// sequential one, on real captures (plain, in memory and gzip), for a full and a 10%
    /// window, whatever the thread count and however small the regions (small regions put
    /// region starts inside strings and elements across regions, which the reading thread
    /// repairs).
    #[test]
    fn parallel_second_pass_writes_what_the_sequential_one_writes() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["eager", "compiled_ro", "graph"] {
            let gz_path = fixture(&format!("{name}.json.gz"));
            let gz = std::fs::read(&gz_path).unwrap();
            let mut plain = Vec::new();
            flate2::read::MultiGzDecoder::new(&gz[..])
                .read_to_end(&mut plain)
                .unwrap();
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
            let (start, end) = (full.1.window.start_us, full.1.window.end_us);
            let tenth = TimeWindow::new(
                ((start + (end - start) * 0.45) * 1000.0) as i64,
                ((start + (end - start) * 0.55) * 1000.0) as i64,
            )
            .unwrap();
            for mode in [WindowMode::Full, WindowMode::Explicit(tenth)] {
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
                            };
                            let got = chunk(&source, &mode, &plan, Second::Regions).unwrap();
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
}
