//! trace.md "Acceptance scenarios" scenarios 1–20: reading, input resolution and stream errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Read;

use common::*;
use kernlens_trace::{Limits, Options, TraceError, TraceSource, analyze};
use serde_json::json;

fn without_file(mut v: serde_json::Value) -> serde_json::Value {
    v.as_object_mut().unwrap().remove("trace_file");
    v
}

#[test]
fn a_small_trace_gives_exactly_the_documented_json() {
    let a = run(&t1());
    let got = without_file(a.to_json());
    let empty_meta = json!({"op_shapes":[],"op_dtypes":[],"op_kernel_file":"","op_kernel_backend":"",
        "backfill_shapes":[],"backfill_dtypes":[],"backfill_ambiguous":false});
    let mut k1 = json!({"name":"paged_attention_v1","calls":1,"total_us":300.0,"min_us":300.0,"max_us":300.0,
        "share":0.6,"op_name":"","op_count":1,"grid":null,"block":null});
    let mut k2 = json!({"name":"Cijk_Alik_Bljk_HHS","calls":1,"total_us":200.0,"min_us":200.0,"max_us":200.0,
        "share":0.4,"op_name":"aten::mm","op_count":1,"grid":null,"block":null});
    for k in [&mut k1, &mut k2] {
        for (key, v) in empty_meta.as_object().unwrap() {
            k[key] = v.clone();
        }
    }
    let expected = json!({"schema":"kernlens.summary/1","event_total":6,"stream_errors":[],
     "aggregation_scope":"full_trace","trace_start_us":0.0,"window":null,"window_status":"not_requested",
     "analyzed_rank":null,"rank_count":1,"selected_capture_fragment":false,"cycles":1,"cycle":1,
     "timeline":{"total_us":750.0,"busy_us":550.0,"idle_us":200.0,"kernel_union_us":500.0,
       "memcpy_us":50.0,"kernel_sum_us":500.0,"idle_pct":26.666666666666668,
       "busy_pct":73.33333333333333,"busy_fraction":0.7333333333333333,
       "per_device":[{"device":0,"total_us":750.0,"busy_us":550.0,"idle_us":200.0,
         "kernel_union_us":500.0,"memcpy_us":50.0,"idle_pct":26.666666666666668,
         "busy_pct":73.33333333333333,"kernel_count":2}],
       "categories":{"computation_us":500.0,"communication_us":0.0,
         "exposed_communication_us":0.0,"memcpy_us":50.0,"idle_us":200.0}},
     "graph":{"launches":0,"launches_with_kernels":0,"coverage":null,"graph_kernels":0,
       "under_recorded":false,"launch_api":null},
     "attribution":{"kernel_count":2,"attributed_kernels":1,"unlinked_kernels":1,
       "graph_attributed_kernels":0,"attributed_pct":40.0,"attributed_us":200.0,
       "unlinked_us":300.0,"graph_attributed_us":0.0},
     "kernels":[k1,k2],
     "ops":[{"name":"(unlinked)","calls":1,"total_us":300.0,"share":0.6},
            {"name":"aten::mm","calls":1,"total_us":200.0,"share":0.4}],
     "stream_overlap":null,"provenance":null});
    assert_eq!(got, expected);
    // Key order is part of the contract.
    let doc = a.to_json();
    let keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
    assert_eq!(keys[0], "schema");
    assert_eq!(keys[keys.len() - 1], "provenance");
}

#[test]
fn gzip_is_detected_by_content_not_name() {
    let plain = without_file(run(&t1()).to_json());
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("t1.json.gz");
    std::fs::write(&gz, gzip(&t1())).unwrap();
    let plain_named_gz = dir.path().join("plain.json.gz");
    std::fs::write(&plain_named_gz, t1()).unwrap();
    let gz_named_json = dir.path().join("gz.json");
    std::fs::write(&gz_named_json, gzip(&t1())).unwrap();
    let mut o = Options::default();
    o.top_k = 0;
    for p in [&gz, &plain_named_gz, &gz_named_json] {
        let a = analyze(&TraceSource::open(p).unwrap(), &o).unwrap();
        assert_eq!(without_file(a.to_json()), plain, "{}", p.display());
    }
}

#[test]
fn concatenated_gzip_members_are_one_stream() {
    let t = t1();
    let (a, b) = t.split_at(t.len() / 2);
    let mut two = gzip(a);
    two.extend(gzip(b));
    assert_eq!(
        without_file(run(&two).to_json()),
        without_file(run(&t).to_json())
    );
}

/// A reader that returns one byte per call, to exercise every buffer boundary.
struct OneByte(Vec<u8>, usize);
impl Read for OneByte {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.1 >= self.0.len() || buf.is_empty() {
            return Ok(0);
        }
        buf[0] = self.0[self.1];
        self.1 += 1;
        Ok(1)
    }
}

#[test]
fn reader_source_matches_bytes_and_is_read_once() {
    let mut o = Options::default();
    o.top_k = 0;
    let src = TraceSource::from_reader("-", std::io::Cursor::new(t1()));
    let a = analyze(&src, &o).unwrap();
    assert_eq!(a.trace_file, "-");
    assert_eq!(
        without_file(a.to_json()),
        without_file(run(&t1()).to_json())
    );
    assert!(matches!(
        analyze(&src, &o),
        Err(TraceError::SourceConsumed { .. })
    ));
}

#[test]
fn one_byte_reads_keep_multibyte_names_and_spaced_keys() {
    let text = r#"{"traceEvents"   :  [{"ph":"X","cat":"kernel","name":"gemm_€_kernel","pid":0,"tid":1,"ts":1.0,"dur":2.0,"args":{}}]}"#;
    let src = TraceSource::from_reader("-", OneByte(text.as_bytes().to_vec(), 0));
    let a = analyze(&src, &Options::default()).unwrap();
    assert!(a.stream_errors.is_empty(), "{:?}", a.stream_errors);
    assert_eq!(a.kernels[0].name, "gemm_€_kernel");
    let gz = TraceSource::from_reader("-", OneByte(gzip(text.as_bytes()), 0));
    let b = analyze(&gz, &Options::default()).unwrap();
    assert_eq!(b.kernels[0].name, "gemm_€_kernel");
}

#[test]
fn top_k_one_keeps_the_hottest_row() {
    let mut o = Options::default();
    o.top_k = 1;
    let a = analyze_bytes(&t1(), &o);
    assert_eq!(a.kernels.len(), 1);
    assert_eq!(a.kernels[0].name, "paged_attention_v1");
}

#[test]
fn times_are_exact_integer_nanoseconds() {
    let t = br#"{"traceEvents":[
      {"ph":"X","cat":"kernel","name":"a","ts":1.5e3,"dur":0.1,"args":{}},
      {"ph":"X","cat":"kernel","name":"b","ts":1000.0005,"dur":0.2,"args":{}},
      {"ph":"X","cat":"kernel","name":"c","ts":1000.0004,"dur":0,"args":{}}]}"#;
    let a = run(t);
    assert_eq!(a.timeline.kernel_sum_us, 0.3);
    let mut o = Options::default();
    o.emit_launches = true;
    let a = analyze_bytes(t, &o);
    let ts: Vec<(String, i64)> = a.launches().map(|l| (l.name.to_string(), l.ts)).collect();
    assert_eq!(
        ts,
        vec![
            ("c".into(), 1_000_000),
            ("b".into(), 1_000_001),
            ("a".into(), 1_500_000)
        ]
    );
}

#[test]
fn events_missing_fields_do_not_panic() {
    let t = br#"{"traceEvents":[
      {"ph":"X","cat":"kernel","ts":1,"dur":1,"args":{}},
      {"ph":"X","cat":"kernel","name":"k","args":{"correlation":1}},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel"}]}"#;
    let a = run(t);
    assert_eq!(a.attribution.kernel_count, 2);
    assert!(a.stream_errors.is_empty());
}

#[test]
fn a_directory_with_one_trace_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t1.json"), t1()).unwrap();
    let src = TraceSource::open(dir.path()).unwrap();
    assert!(src.file().ends_with("t1.json"));
    let a = analyze(&src, &Options::default()).unwrap();
    assert_eq!(a.event_total, 6);
}

#[test]
fn a_missing_path_is_no_usable_trace() {
    let err = TraceSource::open("/nonexistent/trace.json").unwrap_err();
    assert!(matches!(err, TraceError::NoUsableTrace { .. }));
    assert!(err.to_string().starts_with("no usable trace file at"));
    let empty = tempfile::tempdir().unwrap();
    assert!(matches!(
        TraceSource::open(empty.path()),
        Err(TraceError::NoUsableTrace { .. })
    ));
}

fn write_sized(path: &std::path::Path, size: usize) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut t = t1();
    t.extend(std::iter::repeat_n(b' ', size));
    std::fs::write(path, t).unwrap();
}

#[test]
fn rank_files_pick_the_lowest_rank_unless_merged() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_sized(&d.join("trace_rank_0.json.gz"), 10);
    write_sized(&d.join("trace_rank_1.json.gz"), 20);
    write_sized(&d.join("trace_rank_2.json.gz"), 30);
    let s = TraceSource::open(d).unwrap();
    assert!(s.file().ends_with("trace_rank_0.json.gz"));
    assert_eq!((s.analyzed_rank(), s.rank_count()), (Some(0), 3));
    write_sized(&d.join("merged-all.trace.json.gz"), 5);
    let s = TraceSource::open(d).unwrap();
    assert!(s.file().ends_with("merged-all.trace.json.gz"));
}

#[test]
fn capture_sidecars_lose_to_the_main_trace() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_sized(&d.join("x-TP-0.trace.json.gz"), 10);
    for bs in [512, 496, 480] {
        write_sized(
            &d.join(format!("capture_traces/bs_{bs}_rank0.json.gz")),
            1000,
        );
    }
    write_sized(&d.join("bs_256_rank0.json.gz"), 1000);
    write_sized(
        &d.join("graph_capture_profile/cuda_graph_capture-DecodeCudaGraphRunner-TP-3.json.gz"),
        1000,
    );
    write_sized(&d.join("Capture_Traces/shard.trace.json.gz"), 5000);
    let s = TraceSource::open(d).unwrap();
    assert!(s.file().ends_with("x-TP-0.trace.json.gz"), "{}", s.file());
    assert_eq!(
        (
            s.analyzed_rank(),
            s.rank_count(),
            s.selected_capture_fragment()
        ),
        (None, 1, false)
    );

    let only = tempfile::tempdir().unwrap();
    write_sized(&only.path().join("capture_traces/bs_512_rank0.json.gz"), 10);
    let s = TraceSource::open(only.path()).unwrap();
    assert!(s.selected_capture_fragment());
}

#[test]
fn sidecar_test_ignores_ancestors_above_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("capture_traces/run");
    write_sized(&input.join("rank_0.trace.json.gz"), 10);
    let s = TraceSource::open(&input).unwrap();
    assert!(s.file().ends_with("rank_0.trace.json.gz"));
    assert!(!s.selected_capture_fragment());

    let d = tempfile::tempdir().unwrap();
    for r in 0..3 {
        write_sized(&d.path().join(format!("rank_{r}.json.gz")), 10);
        write_sized(
            &d.path()
                .join(format!("capture_traces/bs_{}_rank0.json.gz", 100 + r)),
            10,
        );
    }
    assert_eq!(TraceSource::open(d.path()).unwrap().rank_count(), 3);
}

// --- stream errors (trace.md "Acceptance scenarios" 11–20) ---

#[test]
fn no_trace_events_key() {
    // An object that closes without the member is no trace (issue 20); one cut short
    // before it may be a damaged capture, reported as a stream error.
    let err = analyze(
        &TraceSource::from_bytes("t.json", br#"{"foo":"bar","schemaVersion":1}"#.to_vec()),
        &Options::default(),
    )
    .unwrap_err();
    assert!(matches!(err, TraceError::NotATrace { .. }), "{err}");
    let a = run(br#"{"foo":"bar","schemaVersion":1"#);
    assert_eq!(a.event_total, 0);
    assert_eq!(a.stream_errors, vec!["traceEvents array not found"]);
}

#[test]
fn empty_array_is_clean() {
    let a = run(br#"{"traceEvents":[]}"#);
    assert!(a.stream_errors.is_empty());
    assert_eq!(a.timeline.total_us, 0.0);
}

#[test]
fn truncated_trace_keeps_complete_events() {
    let mut t =
        br#"{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2,"args":{}},"#
            .to_vec();
    t.extend_from_slice(br#"{"ph":"X","cat":"kern"#);
    let a = run(&t);
    assert_eq!(a.attribution.kernel_count, 1);
    assert_eq!(a.stream_errors.len(), 1);
    assert!(
        a.stream_errors[0].contains("truncated after 1 event(s)"),
        "{:?}",
        a.stream_errors
    );
}

#[test]
fn gzip_cut_short_reports_eof_error_and_keeps_events() {
    let gz = gzip(&t1());
    let cut = &gz[..gz.len() - 32];
    let a = run(cut);
    assert!(
        a.stream_errors.iter().any(|e| e.contains("EOFError")),
        "{:?}",
        a.stream_errors
    );
    let broken = [
        0x1f, 0x8b, 0x07, 0x00, 0, 0, 0, 0, 0, 0x03, 1, 2, 3, 4, 5, 6, 7, 8,
    ];
    let b = run(&broken);
    assert!(
        b.stream_errors.iter().any(|e| e.contains("BadGzipFile")),
        "{:?}",
        b.stream_errors
    );
    assert_eq!(b.event_total, 0);
}

#[test]
fn gzip_cut_mid_stream_keeps_every_complete_event() {
    let full = run(&fixture_plain("eager.json.gz"));
    let gz = std::fs::read(fixture("eager.json.gz")).unwrap();
    let cut = run(&gz[..gz.len() / 2]);
    assert!(cut.event_total > 0 && cut.event_total < full.event_total);
    assert!(cut.stream_errors.iter().any(|e| e.contains("EOFError")));
    assert!(
        cut.stream_errors
            .iter()
            .any(|e| e.contains("truncated after") || e.contains("unterminated after"))
    );
}

fn fixture_plain(name: &str) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(fixture(name)).unwrap())
        .read_to_end(&mut out)
        .unwrap();
    out
}

#[test]
fn trace_events_null_is_not_an_array() {
    let a = run(
        br#"{"traceEvents": null, "other":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1}]}"#,
    );
    assert_eq!(a.stream_errors, vec!["traceEvents value is not an array"]);
    assert_eq!(a.event_total, 0);
}

#[test]
fn a_string_value_named_trace_events_is_skipped() {
    let a = run(br#"{"label":"traceEvents","traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1}]}"#);
    assert!(a.stream_errors.is_empty());
    assert_eq!(a.attribution.kernel_count, 1);
}

#[test]
fn malformed_object_is_skipped_and_reading_continues() {
    let a = run(br#"{"traceEvents":[{"cat":"kernel","name": invalid},{"ph":"X","cat":"kernel","name":"ok","ts":1,"dur":1}]}"#);
    assert_eq!(a.event_total, 1);
    assert_eq!(a.kernels[0].name, "ok");
    assert_eq!(a.stream_errors.len(), 1);
    assert!(
        a.stream_errors[0].contains("malformed after 0 event(s)"),
        "{:?}",
        a.stream_errors
    );
    let b = run(br#"{"traceEvents":[42,{"ph":"X","cat":"kernel","name":"ok","ts":1,"dur":1}]}"#);
    assert_eq!(
        b.stream_errors,
        vec!["traceEvents element malformed after 0 event(s): expected an object"]
    );
    assert_eq!(b.attribution.kernel_count, 1);
}

#[test]
fn prefix_limit_is_enforced() {
    let mut t = br#"{"pad":""#.to_vec();
    t.extend(std::iter::repeat_n(b'x', 64));
    t.extend_from_slice(br#"","traceEvents":[]}"#);
    let mut o = Options::default();
    o.limits = Limits::new(32, 64 * 1024 * 1024);
    for bytes in [t.clone(), gzip(&t)] {
        let a = analyze_bytes(&bytes, &o);
        assert_eq!(a.event_total, 0);
        assert_eq!(a.stream_errors.len(), 1);
        assert!(
            a.stream_errors[0].contains("prefix exceeds"),
            "{:?}",
            a.stream_errors
        );
    }
}

#[test]
fn event_limit_and_error_cap() {
    let mut t = br#"{"traceEvents":[{"name":""#.to_vec();
    t.extend(std::iter::repeat_n(b'x', 128));
    let mut o = Options::default();
    o.limits = Limits::new(1024, 64);
    for bytes in [t.clone(), gzip(&t)] {
        let a = analyze_bytes(&bytes, &o);
        assert_eq!(a.stream_errors.len(), 1);
        assert!(
            a.stream_errors[0].contains("object exceeds"),
            "{:?}",
            a.stream_errors
        );
    }
    let mut many = br#"{"traceEvents":["#.to_vec();
    many.extend(vec!["42"; 1500].join(",").bytes());
    many.extend_from_slice(b"]}");
    let a = run(&many);
    assert_eq!(a.stream_errors.len(), 1000);
    assert_eq!(a.stream_errors[999], "501 further stream errors omitted");
}
