//! # kernlens-report
//!
//! Renders a trace [`Analysis`] into one self-contained HTML page: a busy/idle timeline
//! as inline SVG (a lane per device stream and a pooled lane, coloured by category,
//! graph replays and communication/computation overlap marked, the analysis' window
//! shaded), the category breakdown, busy per device, hot kernels and ops with their
//! shares as bars, and, when given, the gate's verdict, a triage's task groups and the
//! change since a baseline trace.
//!
//! It is for people who would rather look than read a table, and for CI artefacts: the
//! page fetches nothing (no CDN, no fonts), reads the same with scripts off (the small
//! script only adds a pointer read-out and a zoom button), follows the browser's light
//! or dark preference, and its size is bounded whatever the trace's size, because the
//! timeline is binned to at most [`MAX_BINS`] columns per lane. It is not a trace
//! viewer: single events are not drawn (Perfetto is for that).
//!
//! ```
//! use kernlens_report::{LaneOptions, LaneRecorder, Page};
//! use kernlens_trace::{Options, TraceSource, analyze_observed};
//!
//! let trace = br#"{"traceEvents":[
//!   {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":1000,"dur":200},
//!   {"ph":"X","cat":"kernel","name":"softmax","pid":0,"tid":7,"ts":1300,"dur":100}
//! ]}"#;
//! let source = TraceSource::from_bytes("t.json", trace.to_vec());
//! // One read: the recorder sees every GPU event while the analysis is built.
//! let mut recorder = LaneRecorder::new(LaneOptions::default());
//! let analysis = analyze_observed(&source, &Options::default(), &mut recorder)?;
//! let lanes = recorder.finish(&analysis);
//! let html = Page::new(&analysis, &lanes).render();
//! assert!(html.starts_with("<!DOCTYPE html>"));
//! assert!(html.contains("GPU 0 · stream 7"));
//! // Nothing to fetch: no URL anywhere in the page.
//! assert!(!html.contains("http"));
//! # Ok::<(), kernlens_trace::TraceError>(())
//! ```
//!
//! ## How a page is made
//!
//! 1. [`LaneRecorder`] is the trace read's observer: it keeps one interval per GPU event
//!    (`[ts, ts + dur)`, its stream, its kind, its correlation) and the graph-launch
//!    correlations, nothing else (`lanes`).
//! 2. [`LaneRecorder::finish`] sorts each stream's intervals once and bins each union
//!    (busy, compute, communication, memcpy, graph-replay kernels) in exact integer
//!    nanoseconds ([`bins`]); it also measures each lane over the analysis' scope by the
//!    trace crate's window rule, so a lane's busy% is the summary's figure.
//! 3. [`Page`] writes the document around the SVG ([`render_svg`] alone gives the
//!    timeline as an SVG file).
//!
//! Bad input never panics: an empty trace gives a page with empty lanes and tables.

mod baseline;
pub mod bins;
mod escape;
mod html;
mod lanes;
mod packed;
mod svg;

pub use baseline::{Baseline, BaselineRow, BaselineStatus};
pub use html::{Page, TaskGroupRow, render_svg};
pub use kernlens_trace::Analysis;
pub use lanes::{
    Bin, DEFAULT_BINS, Lane, LaneOptions, LaneRecorder, Lanes, MAX_BINS, MAX_CELLS, ScopeFigures,
    ShadedWindow,
};

use kernlens_trace::{Options, TraceError, TraceSource};

/// Reads `source` once with `options`, recording the lanes: the analysis and its lanes.
pub fn analyze_with_lanes(
    source: &TraceSource,
    options: &Options,
    lanes: LaneOptions,
) -> Result<(Analysis, Lanes), TraceError> {
    let mut recorder =
        LaneRecorder::new(lanes.with_extra_comm_patterns(options.extra_comm_patterns.clone()));
    let analysis = kernlens_trace::analyze_observed(source, options, &mut recorder)?;
    let lanes = recorder.finish(&analysis);
    Ok((analysis, lanes))
}
