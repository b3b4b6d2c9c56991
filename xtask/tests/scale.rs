//! The scaler's guarantees (trace.md "Synthetic-trace scaler", trace.md "Acceptance scenarios" scenario 62), checked by analysing its
//! output with the real reader.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../tests/support/trace_files.rs"]
mod trace_files;

use std::io::Read;

use kernlens_trace::{Analysis, Options, TraceSource, analyze};
use trace_files::fixture;

/// A bundled real capture, decompressed.
fn real(name: &str) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(fixture(name)).unwrap())
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn scaled(src: &[u8], copies: u64, gap_ns: i64) -> Analysis {
    let mut out = Vec::new();
    kernlens_xtask::scale(src, &mut out, copies, gap_ns).unwrap();
    let mut o = Options::default();
    o.top_k = 0;
    analyze(&TraceSource::from_bytes("scaled.json", out), &o).unwrap()
}

#[test]
fn graph_times_three_scales_every_figure_exactly() {
    let a = scaled(&real("graph.json.gz"), 3, 0);
    assert!(a.stream_errors.is_empty());
    assert_eq!(
        (
            a.attribution.kernel_count,
            a.graph.launches,
            a.graph.launches_with_kernels
        ),
        (5280, 120, 120)
    );
    assert_eq!(
        (
            a.timeline.kernel_sum_us,
            a.timeline.busy_us,
            a.graph.coverage
        ),
        (110160.936, 111316.983, Some(1.0))
    );
}

#[test]
fn copies_of_a_cpu_heavy_trace_stay_linked() {
    let src = real("eager.json.gz");
    let mut o = Options::default();
    o.top_k = 0;
    let one = analyze(&TraceSource::from_bytes("eager.json", src.clone()), &o).unwrap();
    let four = scaled(&src, 4, 0);
    // Fresh ids per copy: attribution and per-op figures scale exactly, nothing unlinks.
    assert_eq!(
        four.attribution.attributed_kernels,
        4 * one.attribution.attributed_kernels
    );
    assert_eq!(
        four.attribution.unlinked_kernels,
        4 * one.attribution.unlinked_kernels
    );
    let busy_ns = |a: &Analysis| a.timeline.busy_ns;
    assert_eq!(busy_ns(&four), 4 * busy_ns(&one));
    assert!(
        four.event_total < 4 * one.event_total,
        "metadata events are written once"
    );
}

#[test]
fn a_gap_separates_copies_without_changing_sums() {
    let src = real("graph.json.gz");
    let a = scaled(&src, 2, 1_000_000);
    let b = scaled(&src, 2, 0);
    assert_eq!(a.timeline.kernel_sum_us, b.timeline.kernel_sum_us);
    assert_eq!(a.timeline.busy_ns, b.timeline.busy_ns);
    assert_eq!(a.timeline.total_ns, b.timeline.total_ns + 1_000_000);
}
