//! Split (trace.md "Split", trace.md "Acceptance scenarios" scenarios 59–60): chunks are valid traces that keep their
//! graph launches and record the source's whole-trace coverage.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Read;

use common::*;
use kernlens_trace::{
    Options, SplitOptions, StepSource, TimeWindow, TraceError, TraceSource, WindowMode, analyze,
    split, split_window,
};
use serde_json::{Value, json};

fn analyze_chunk(chunk: &[u8]) -> kernlens_trace::Analysis {
    let mut o = Options::default();
    o.top_k = 0;
    analyze(&TraceSource::from_bytes("chunk.json", chunk.to_vec()), &o).unwrap()
}

#[test]
fn compiled_reduce_overhead_steady_chunk() {
    let src = TraceSource::open(fixture("compiled_ro.json.gz")).unwrap();
    let mut chunk = Vec::new();
    let report = split_window(
        &src,
        &WindowMode::steady(StepSource::Auto),
        &mut chunk,
        &SplitOptions::default(),
    )
    .unwrap();
    assert_eq!(report.events_written, 157);
    assert_eq!(
        (
            report.metadata_events,
            report.gpu_events,
            report.launch_events,
            report.graph_launch_events,
            report.cpu_events,
            report.flow_events
        ),
        (58, 34 + 12 + 1, 2, 1, 2, 48)
    );
    assert!(report.stream_errors.is_empty());
    // A standard JSON parser reads the chunk.
    let doc: Value = serde_json::from_slice(&chunk).unwrap();
    assert_eq!(doc["traceEvents"].as_array().unwrap().len(), 157);
    assert_eq!(doc["kernlens"]["schema"], "kernlens.chunk/1");
    assert_eq!(doc["kernlens"]["source_file"], "compiled_ro.json.gz");
    assert!(
        doc.get("deviceProperties").is_some(),
        "top-level members are copied"
    );
    let a = analyze_chunk(&chunk);
    assert_eq!(a.attribution.kernel_count, 34);
    assert_eq!(a.timeline.kernel_sum_us, 870.527);
    assert_eq!(graph_tuple(&a), (1, 1, Some(1.0), 33, false));
    let p = a.provenance.unwrap().source_graph.unwrap();
    assert_eq!(coverage_tuple(&p), (8, 8, Some(1.0), 264, false));
}

#[test]
fn a_chunk_remembers_that_its_source_was_under_recorded() {
    let src = TraceSource::from_bytes("ur.json", trace(&under_recorded_events()));
    let mut chunk = Vec::new();
    let w = TimeWindow::new(0, 2_000_000).unwrap();
    split(&src, w, &mut chunk, &SplitOptions::default()).unwrap();
    let a = analyze_chunk(&chunk);
    assert!(!a.graph.under_recorded);
    assert!(
        a.provenance
            .as_ref()
            .unwrap()
            .source_graph
            .as_ref()
            .unwrap()
            .under_recorded
    );
    assert_eq!(a.attribution.kernel_count, 2);
    assert_eq!(
        a.ops.iter().find(|o| o.name == "aten::mm").map(|o| o.calls),
        Some(1),
        "the cpu_op came along"
    );

    // A chunk of the chunk carries the original provenance unchanged.
    let mut second = Vec::new();
    split(
        &TraceSource::from_bytes("chunk.json", chunk.clone()),
        TimeWindow::new(0, 1_050_000).unwrap(),
        &mut second,
        &SplitOptions::default(),
    )
    .unwrap();
    let b = analyze_chunk(&second);
    let p = b.provenance.unwrap();
    assert_eq!(p.source_file, "ur.json");
    assert!(p.source_graph.unwrap().under_recorded);
    assert_eq!(b.attribution.kernel_count, 1);
    let doc: Value = serde_json::from_slice(&second).unwrap();
    assert_eq!(
        doc.as_object()
            .unwrap()
            .keys()
            .filter(|k| *k == "kernlens")
            .count(),
        1
    );
}

#[test]
fn stdin_cannot_be_split() {
    let src = TraceSource::from_reader("-", std::io::Cursor::new(t1()));
    let err = split(
        &src,
        TimeWindow::new(0, 1).unwrap(),
        Vec::new(),
        &SplitOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, TraceError::NotSeekable { .. }));
}

#[test]
fn a_truncated_source_still_gives_a_valid_chunk() {
    let mut t = br#"{"schemaVersion":1,"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2,"args":{"correlation":3}},"#.to_vec();
    t.extend_from_slice(br#"{"ph":"X","cat":"ker"#);
    let mut chunk = Vec::new();
    let r = split(
        &TraceSource::from_bytes("cut.json", t),
        TimeWindow::new(0, 10_000).unwrap(),
        &mut chunk,
        &SplitOptions::default(),
    )
    .unwrap();
    assert_eq!(r.events_written, 1);
    assert_eq!(r.stream_errors.len(), 1);
    let doc: Value = serde_json::from_slice(&chunk).unwrap();
    assert_eq!(doc["schemaVersion"], 1);
    assert_eq!(doc["traceEvents"].as_array().unwrap().len(), 1);
}

#[test]
fn members_after_the_array_and_gzip_output() {
    let t = serde_json::to_vec(&json!({"traceEvents":[kernel("k", 1.0, 1.0, Some(1))], "traceName": "after", "n": [1, {"x": 2}]})).unwrap();
    let mut opts = SplitOptions::default();
    opts.gzip = true;
    let mut gz = Vec::new();
    split(
        &TraceSource::from_bytes("t.json", gzip(&t)),
        TimeWindow::new(0, 5_000).unwrap(),
        &mut gz,
        &opts,
    )
    .unwrap();
    let mut plain = Vec::new();
    flate2::read::MultiGzDecoder::new(&gz[..])
        .read_to_end(&mut plain)
        .unwrap();
    let doc: Value = serde_json::from_slice(&plain).unwrap();
    assert_eq!(doc["traceName"], "after");
    assert_eq!(doc["n"], json!([1, {"x": 2}]));
    assert_eq!(doc["traceEvents"].as_array().unwrap().len(), 1);
}

#[test]
fn split_of_the_real_graph_capture_keeps_full_coverage() {
    let src = TraceSource::open(fixture("graph.json.gz")).unwrap();
    let full = analyze_chunk(&{
        let mut v = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::MultiGzDecoder::new(
                std::fs::File::open(fixture("graph.json.gz")).unwrap(),
            ),
            &mut v,
        )
        .unwrap();
        v
    });
    // A window over the middle replays: launches kept by correlation, so every kept launch has its kernels.
    let ts: Vec<i64> = {
        let mut o = Options::default();
        o.emit_launches = true;
        let a = analyze(&TraceSource::open(fixture("graph.json.gz")).unwrap(), &o).unwrap();
        a.launches().map(|l| l.ts).collect()
    };
    let w = TimeWindow::new(ts[ts.len() / 4], ts[ts.len() / 2]).unwrap();
    let mut chunk = Vec::new();
    let r = split(&src, w, &mut chunk, &SplitOptions::default()).unwrap();
    assert!(r.graph_launch_events > 0);
    let a = analyze_chunk(&chunk);
    assert_eq!(a.graph.coverage, Some(1.0));
    assert!(!a.graph.under_recorded);
    let p = a.provenance.unwrap();
    assert_eq!(p.source_file, "graph.json.gz");
    assert_eq!(p.source_graph.unwrap(), full.graph);
}

#[test]
fn split_of_the_under_recorded_fixture_keeps_the_flag_in_provenance() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/traces/graph_under_recorded.json.gz");
    let src = TraceSource::open(&path).unwrap();
    let mut chunk = Vec::new();
    let r = split_window(
        &src,
        &WindowMode::Full,
        &mut chunk,
        &SplitOptions::default(),
    )
    .unwrap();
    assert!(r.gpu_events > 0);
    // Cut to the first recorded replay only: the chunk itself looks fully recorded.
    let first = analyze_chunk(&chunk);
    let mut one = Vec::new();
    let o = {
        let mut o = Options::default();
        o.emit_launches = true;
        o
    };
    let starts: Vec<i64> = analyze(&TraceSource::open(&path).unwrap(), &o)
        .unwrap()
        .launches()
        .map(|l| l.ts)
        .collect();
    split(
        &src,
        TimeWindow::new(starts[0], starts[43] + 1).unwrap(),
        &mut one,
        &SplitOptions::default(),
    )
    .unwrap();
    let a = analyze_chunk(&one);
    assert_eq!(
        (a.graph.launches, a.graph.coverage, a.graph.under_recorded),
        (1, Some(1.0), false)
    );
    let p = a.provenance.unwrap().source_graph.unwrap();
    assert_eq!(
        (
            p.launches,
            p.launches_with_kernels,
            p.coverage,
            p.under_recorded
        ),
        (40, 10, Some(0.25), true)
    );
    assert!(
        first
            .provenance
            .unwrap()
            .source_graph
            .unwrap()
            .under_recorded
    );
}

/// A trace whose prefix holds `"kernlens": <member>` before its events.
fn with_member(member: &str) -> Vec<u8> {
    let events = serde_json::to_string(&[kernel("k", 0.0, 10.0, Some(1))]).unwrap();
    format!("{{\"kernlens\": {member}, \"traceEvents\": {events}}}").into_bytes()
}

#[test]
fn a_malformed_kernlens_member_is_ignored_with_a_stream_error_saying_why() {
    for (member, why) in [
        ("{}", "no schema"),
        (r#"{"schema":"kernlens.chunk/1"}"#, "no source_file"),
        (
            r#"{"schema":"kernlens.chunk/1","source_file":"t.json","window":{"start_us":0,"end_us":1}}"#,
            "no source_graph",
        ),
        (r#""kernlens""#, "not a JSON object"),
    ] {
        let bytes = with_member(member);
        let a = analyze_chunk(&bytes);
        assert!(a.provenance.is_none(), "{member}");
        assert_eq!(a.stream_errors.len(), 1, "{member}: {:?}", a.stream_errors);
        assert!(
            a.stream_errors[0].starts_with("kernlens member ignored")
                && a.stream_errors[0].contains(why),
            "{member}: {:?}",
            a.stream_errors
        );
        // The events are read as usual.
        assert_eq!(a.attribution.kernel_count, 1);
        // The graph-only read agrees, so the gate's raw probe does not see a chunk either.
        let cov = kernlens_trace::graph_coverage(
            &TraceSource::from_bytes("t.json", bytes.clone()),
            &Default::default(),
        )
        .unwrap();
        assert!(cov.provenance.is_none());
        assert_eq!(cov.stream_errors, a.stream_errors);
    }
}

#[test]
fn a_split_of_a_trace_with_malformed_provenance_takes_its_own_name_and_coverage() {
    let src = TraceSource::from_bytes("foreign.json", with_member(r#"{"source_file":"x"}"#));
    let mut chunk = Vec::new();
    let report = split(
        &src,
        TimeWindow::new(0, 100_000).unwrap(),
        &mut chunk,
        &SplitOptions::default(),
    )
    .unwrap();
    assert!(
        report
            .stream_errors
            .iter()
            .any(|e| e.contains("kernlens member ignored")),
        "{:?}",
        report.stream_errors
    );
    let p = analyze_chunk(&chunk).provenance.unwrap();
    assert_eq!(p.source_file, "foreign.json");
}

#[test]
fn a_kernlens_member_after_the_array_is_dropped_so_the_chunk_has_one_provenance() {
    let t = br#"{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1.0,"dur":1.0,"args":{"correlation":1}}], "a": 1, "kernlens": {"schema":"forged"}, "b": [2]}"#;
    let mut chunk = Vec::new();
    split(
        &TraceSource::from_bytes("t.json", t.to_vec()),
        TimeWindow::new(0, 5_000).unwrap(),
        &mut chunk,
        &SplitOptions::default(),
    )
    .unwrap();
    let text = String::from_utf8(chunk.clone()).unwrap();
    assert_eq!(text.matches("\"kernlens\"").count(), 1, "{text}");
    let doc: Value = serde_json::from_slice(&chunk).unwrap();
    assert_eq!(doc["kernlens"]["schema"], "kernlens.chunk/1");
    assert_eq!((doc["a"].clone(), doc["b"].clone()), (json!(1), json!([2])));
}
