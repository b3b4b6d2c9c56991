//! Issue 20, "never die, never lose": damaged gzip trailers keep every event, only the
//! top-level `traceEvents` member counts, Chrome's array format is read, a file that is
//! no trace is `NotATrace`, and the extreme `ts` is a value (trace.md "Input resolution", trace.md "Streaming reader and error semantics", trace.md "Numbers").
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Read;

use common::*;
use kernlens_trace::{Options, SplitOptions, TimeWindow, TraceError, TraceSource, analyze, split};

fn eager_gz() -> Vec<u8> {
    std::fs::read(fixture("eager.json.gz")).unwrap()
}

fn eager_plain() -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(&eager_gz()[..])
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// The analysis of `bytes` from memory, from a stream and from a file, checked equal.
fn every_way(bytes: &[u8]) -> kernlens_trace::Analysis {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json");
    std::fs::write(&path, bytes).unwrap();
    let opts = all_rows();
    let mem = analyze(&TraceSource::from_bytes("t.json", bytes.to_vec()), &opts).unwrap();
    let stream = analyze(
        &TraceSource::from_reader("t.json", std::io::Cursor::new(bytes.to_vec())),
        &opts,
    )
    .unwrap();
    let file = analyze(&TraceSource::open(&path).unwrap(), &opts).unwrap();
    let json = |a: &kernlens_trace::Analysis| {
        let mut v = a.to_json();
        v.as_object_mut().unwrap().remove("trace_file");
        v.to_string()
    };
    assert_eq!(json(&mem), json(&stream));
    assert_eq!(json(&mem), json(&file));
    mem
}

#[test]
fn a_damaged_gzip_trailer_keeps_every_event_and_says_what_was_wrong() {
    let full = every_way(&eager_plain());
    assert_eq!(full.event_total, 9089);
    let gz = eager_gz();
    let mut padded = gz.clone();
    padded.extend([0u8; 512]);
    let mut garbage = gz.clone();
    garbage.extend(b"trailing text\n");
    let mut bad_crc = gz.clone();
    let crc_at = bad_crc.len() - 8;
    bad_crc[crc_at] ^= 0x01;
    for (what, bytes, says) in [
        (
            "zero padding",
            padded,
            "512 zero byte(s) of padding after gzip member 1",
        ),
        ("trailing text", garbage, "not a gzip header"),
        ("flipped CRC byte", bad_crc, "checksum"),
    ] {
        let a = every_way(&bytes);
        assert_eq!(a.event_total, full.event_total, "{what}");
        assert_eq!(a.kernels, full.kernels, "{what}");
        assert_eq!(a.stream_errors.len(), 1, "{what}: {:?}", a.stream_errors);
        let e = &a.stream_errors[0];
        assert!(
            e.starts_with("trace input error: BadGzipFile: ") && e.contains(says),
            "{what}: {e}"
        );
    }
}

#[test]
fn only_the_top_level_trace_events_member_counts() {
    let k = r#"{"ph":"X","cat":"kernel","name":"real","ts":1,"dur":2,"args":{}}"#;
    let decoy = r#"{"ph":"X","cat":"kernel","name":"decoy","ts":1,"dur":2}"#;
    for doc in [
        // Nested in an earlier member, empty or not.
        format!(r#"{{"deviceProperties":[{{"traceEvents":[]}}],"traceEvents":[{k}]}}"#),
        format!(r#"{{"meta":{{"traceEvents":[{decoy}]}},"traceEvents":[{k}]}}"#),
        // The key's text inside a string (escaped quotes), and as a string value.
        format!(r#"{{"note":"x\"traceEvents\":[{{}}]","traceEvents":[{k}]}}"#),
        format!(r#"{{"label":"traceEvents","traceEvents" : [{k}]}}"#),
        // An escaped spelling is a different key to this reader.
        format!(r#"{{"trace\u0045vents":[{decoy}],"traceEvents":[{k}]}}"#),
    ] {
        let a = every_way(doc.as_bytes());
        assert!(a.stream_errors.is_empty(), "{doc}: {:?}", a.stream_errors);
        let names: Vec<&str> = a.kernels.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["real"], "{doc}");
    }
}

#[test]
fn chrome_json_array_format_is_read_with_or_without_its_closing_bracket() {
    let k = |n: &str, ts: u32| {
        format!(
            r#"{{"ph":"X","cat":"kernel","name":"{n}","pid":0,"tid":7,"ts":{ts},"dur":10,"args":{{"device":0}}}}"#
        )
    };
    let body = format!("{},\n{}", k("a", 0), k("b", 20));
    for doc in [
        format!("[{body}]"),
        format!("\u{feff}  [\n{body}\n]\n"),
        format!("[{body},\n"),
        format!("[{body}"),
    ] {
        let a = every_way(doc.as_bytes());
        assert!(a.stream_errors.is_empty(), "{doc}: {:?}", a.stream_errors);
        assert_eq!(a.event_total, 2);
        assert_eq!(a.timeline.busy_us, 20.0);
        let gz = analyze_bytes(&gzip(doc.as_bytes()), &all_rows());
        assert_eq!(gz.event_total, 2);
    }
    // An event cut short is still reported.
    let cut = format!("[{body},{{\"ph\":\"X\",\"cat\":");
    let a = every_way(cut.as_bytes());
    assert_eq!(a.event_total, 2);
    assert_eq!(
        a.stream_errors,
        ["traceEvents object truncated after 2 event(s): unterminated object"]
    );
    // Split writes a Kineto object, whichever layout it read.
    let mut out = Vec::new();
    let source = TraceSource::from_bytes("t.json", format!("[{body}").into_bytes());
    let report = split(
        &source,
        TimeWindow::new(0, 100_000).unwrap(),
        &mut out,
        &SplitOptions::default(),
    )
    .unwrap();
    assert_eq!(report.events_written, 2);
    let chunk: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(chunk["traceEvents"].as_array().unwrap().len(), 2);
    assert_eq!(chunk["kernlens"]["schema"], "kernlens.chunk/1");
}

#[test]
fn a_file_that_is_no_trace_is_not_a_trace_error() {
    let oracle = std::fs::read_dir(fixture("expected"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .unwrap();
    let docs: Vec<Vec<u8>> = vec![
        br#"{"hello":1}"#.to_vec(),
        b"# kernlens\n\nA Markdown file.\n".to_vec(),
        std::fs::read(oracle).unwrap(),
        b"".to_vec(),
        b"  \n".to_vec(),
        br#"{"trace\u0045vents":[]}"#.to_vec(),
        b"42".to_vec(),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (i, doc) in docs.iter().enumerate() {
        let path = dir.path().join(format!("x{i}.json"));
        std::fs::write(&path, doc).unwrap();
        let gz_path = dir.path().join(format!("x{i}.json.gz"));
        std::fs::write(&gz_path, gzip(doc)).unwrap();
        for source in [
            TraceSource::from_bytes("x.json", doc.clone()),
            TraceSource::from_reader("x.json", std::io::Cursor::new(doc.clone())),
            TraceSource::open(&path).unwrap(),
            TraceSource::open(&gz_path).unwrap(),
        ] {
            let text = String::from_utf8_lossy(doc).into_owned();
            match analyze(&source, &Options::default()) {
                Err(TraceError::NotATrace { path }) => assert_eq!(path, source.file()),
                other => panic!("{text}: {other:?}"),
            }
        }
    }
    // Damage that leaves a trace's start is still a trace with stream errors.
    let a = analyze_bytes(br#"{"schemaVersion":1,"deviceProp"#, &Options::default());
    assert_eq!(a.stream_errors, ["traceEvents array not found"]);
    let a = analyze_bytes(br#"{"traceEvents": null}"#, &Options::default());
    assert_eq!(a.stream_errors, ["traceEvents value is not an array"]);
}

#[test]
fn directory_selection_skips_candidates_that_are_not_traces() {
    let dir = tempfile::tempdir().unwrap();
    // Rank 0 would win by the rank rule; it is an oracle-like JSON, not a trace.
    std::fs::write(dir.path().join("rank0.json"), br#"{"schema":"x","busy":1}"#).unwrap();
    std::fs::write(dir.path().join("notes.json"), b"# not json at all").unwrap();
    std::fs::copy(fixture("eager.json.gz"), dir.path().join("rank1.json.gz")).unwrap();
    let source = TraceSource::open(dir.path()).unwrap();
    assert!(
        source.file().ends_with("rank1.json.gz"),
        "{}",
        source.file()
    );
    assert_eq!(source.analyzed_rank(), Some(1));
    assert_eq!(source.rank_count(), 1);
    // Nothing left: no usable trace.
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join("rank0.json"), br#"{"hello":1}"#).unwrap();
    assert!(matches!(
        TraceSource::open(empty.path()),
        Err(TraceError::NoUsableTrace { .. })
    ));
}

#[test]
fn a_ts_of_exactly_i64_min_is_a_value() {
    let doc = br#"{"traceEvents":[
      {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":-9223372036854775.808,"dur":0.002,"args":{"device":0}}
    ]}"#;
    let a = every_way(doc);
    assert!(a.stream_errors.is_empty());
    assert_eq!(a.timeline.busy_us, 0.002);
    assert_eq!(a.timeline.total_us, 0.002);
}
