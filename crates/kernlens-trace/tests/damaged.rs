//! Damaged inputs built from the real eager trace: each has a documented outcome, never
//! a panic, and keeps every complete event (trace.md "Streaming reader and error semantics").
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Read;

use common::*;
use kernlens_trace::{Analysis, Limits, Options, TraceSource, analyze};

fn eager_plain() -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(fixture("eager.json.gz")).unwrap())
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// Offsets just past the closing brace of each event (Kineto writes `\n  }` per event).
fn event_ends(t: &[u8]) -> Vec<usize> {
    let pat = b"\n  }";
    t.windows(pat.len())
        .enumerate()
        .filter(|(_, w)| *w == pat)
        .map(|(i, _)| i + pat.len())
        .collect()
}

/// Runs the bytes through both paths (in place and streamed) and checks they agree.
fn both(bytes: &[u8], opts: &Options) -> Analysis {
    let a = analyze(&TraceSource::from_bytes("t.json", bytes.to_vec()), opts).unwrap();
    let b = analyze(
        &TraceSource::from_reader("t.json", std::io::Cursor::new(bytes.to_vec())),
        opts,
    )
    .unwrap();
    assert_eq!(a.to_json().to_string(), b.to_json().to_string());
    a
}

#[test]
fn trace_cut_mid_object_keeps_every_complete_event() {
    let t = eager_plain();
    let ends = event_ends(&t);
    assert_eq!(ends.len(), 9089);
    for k in [1usize, 777, 5000, 9000] {
        let cut = &t[..ends[k - 1] + 40];
        let a = both(cut, &Options::default());
        assert_eq!(a.event_total, k as u64);
        assert_eq!(
            a.stream_errors,
            vec![format!(
                "traceEvents object truncated after {k} event(s): unterminated object"
            )]
        );
    }
    let a = both(&t[..ends[4999] + 1], &Options::default());
    assert_eq!(
        a.stream_errors,
        vec!["traceEvents array unterminated after 5000 event(s)".to_string()]
    );
}

#[test]
fn a_malformed_object_mid_array_is_skipped() {
    let t = eager_plain();
    let text = String::from_utf8(t).unwrap();
    let at = text.match_indices("\"ph\": \"X\"").nth(4000).unwrap().0;
    let mut broken = text.clone();
    broken.replace_range(at..at + 9, "\"ph\": X  ");
    let a = both(broken.as_bytes(), &Options::default());
    assert_eq!(a.event_total, 9088);
    assert_eq!(a.stream_errors.len(), 1);
    assert!(
        a.stream_errors[0].starts_with("traceEvents object malformed after 4000 event(s)"),
        "{:?}",
        a.stream_errors
    );
}

#[test]
fn invalid_utf8_in_a_kernel_name_is_replaced_and_counted() {
    let mut t = eager_plain();
    let name = b"_fused_scale_bias_kernel";
    let at = t.windows(name.len()).position(|w| w == name).unwrap();
    t[at + 1] = 0xff;
    let a = both(&t, &Options::default());
    assert!(a.stream_errors.is_empty());
    assert_eq!(a.attribution.kernel_count, 352);
    let mut o = Options::default();
    o.top_k = 0;
    let a = both(&t, &o);
    assert!(
        a.kernels
            .iter()
            .any(|k| k.name.starts_with("_\u{FFFD}used_scale_bias_kernel"))
    );
}

/// Both paths refuse the bytes as not a trace, with the same error.
fn not_a_trace(bytes: &[u8]) {
    for source in [
        TraceSource::from_bytes("t.json", bytes.to_vec()),
        TraceSource::from_reader("t.json", std::io::Cursor::new(bytes.to_vec())),
    ] {
        let err = analyze(&source, &Options::default()).unwrap_err();
        assert!(
            matches!(err, kernlens_trace::TraceError::NotATrace { .. }),
            "{err}"
        );
        assert_eq!(err.to_string(), "not a Kineto trace (no traceEvents array)");
    }
}

#[test]
fn empty_input_and_random_bytes() {
    not_a_trace(b"");
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, b"").unwrap();
    assert!(matches!(
        analyze(&TraceSource::open(&empty).unwrap(), &Options::default()),
        Err(kernlens_trace::TraceError::NotATrace { .. })
    ));
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let random: Vec<u8> = (0..1 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    if random.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        not_a_trace(&random);
    }
    // Random bytes after a valid opener: every element problem is reported, never a panic.
    let mut opened = b"{\"traceEvents\":[".to_vec();
    opened.extend_from_slice(&random);
    let b = both(&opened, &Options::default());
    assert!(!b.stream_errors.is_empty());
}

#[test]
fn deeply_nested_args_do_not_overflow_the_stack() {
    let depth = 200_000;
    let mut t =
        br#"{"traceEvents":[{"ph":"X","cat":"kernel","name":"deep","ts":1,"dur":2,"args":{"x":"#
            .to_vec();
    t.extend(std::iter::repeat_n(b'[', depth));
    t.extend(std::iter::repeat_n(b']', depth));
    t.extend_from_slice(br#"}},{"ph":"X","cat":"kernel","name":"after","ts":5,"dur":1}]}"#);
    let a = both(&t, &Options::default());
    assert!(a.stream_errors.is_empty(), "{:?}", a.stream_errors);
    assert_eq!(a.attribution.kernel_count, 2);
    let g = both(&gzip(&t), &Options::default());
    assert_eq!(g.attribution.kernel_count, 2);
}

#[test]
fn an_event_over_the_limit_stops_the_read_after_keeping_earlier_events() {
    let t = eager_plain();
    let ends = event_ends(&t);
    let mut big = t[..ends[99]].to_vec();
    big.extend_from_slice(b",\n  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"");
    big.extend(std::iter::repeat_n(b'x', 2 << 20));
    big.extend_from_slice(b"\", \"ts\": 1, \"dur\": 1}");
    big.extend_from_slice(&t[ends[99]..]);
    let mut o = Options::default();
    o.limits = Limits::new(16 << 20, 1 << 20);
    let a = both(&big, &o);
    assert_eq!(a.event_total, 100);
    assert_eq!(
        a.stream_errors,
        vec![format!(
            "traceEvents object exceeds {} characters after 100 event(s)",
            1 << 20
        )]
    );
    // With the default limit the same event is simply read.
    let a = both(&big, &Options::default());
    assert_eq!(a.event_total, 9090);
}

/// `Limits::max_input_bytes` stops a decompression bomb at the cap, keeping the events
/// read so far and saying why.
#[test]
fn input_limit_stops_a_decompression_bomb() {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, b"{\"traceEvents\":[").unwrap();
    let block = b"{},".repeat(1 << 16);
    for _ in 0..512 {
        // 100 MB of tiny events from a gzip of about 100 KB.
        std::io::Write::write_all(&mut enc, &block).unwrap();
    }
    let bomb = enc.finish().unwrap();
    assert!(bomb.len() < 1 << 20);
    let mut o = Options::default();
    o.limits = Limits::default().with_max_input_bytes(3 << 20);
    let a = analyze(&TraceSource::from_bytes("bomb.json.gz", bomb), &o).unwrap();
    assert!(a.event_total > 1_000_000 && a.event_total <= (3 << 20) / 3);
    assert!(
        a.stream_errors[0]
            .starts_with("trace input error: LimitExceeded: trace text exceeds 3145728 bytes"),
        "{:?}",
        a.stream_errors
    );
    // The same cap on a plain trace.
    let t = eager_plain();
    let b = both_capped(&t, 1 << 20);
    assert!(b.event_total > 0 && b.event_total < 9089);
    assert!(b.stream_errors.iter().any(|e| e.contains("LimitExceeded")));
}

fn both_capped(bytes: &[u8], cap: u64) -> Analysis {
    let mut o = Options::default();
    o.limits = Limits::default().with_max_input_bytes(cap);
    let a = analyze(&TraceSource::from_bytes("t.json", bytes.to_vec()), &o).unwrap();
    let b = analyze(
        &TraceSource::from_reader("t.json", std::io::Cursor::new(bytes.to_vec())),
        &o,
    )
    .unwrap();
    assert_eq!(a.event_total, b.event_total);
    a
}

/// Times at the ends of i64 (written as µs) never overflow the arithmetic (tests run
/// with overflow checks on).
#[test]
fn extreme_times_do_not_overflow() {
    let t = br#"{"traceEvents":[
      {"ph":"X","cat":"kernel","name":"a","pid":0,"tid":1,"ts":-9223372036854775.808,"dur":9223372036854775.807,"args":{"correlation":1}},
      {"ph":"X","cat":"kernel","name":"a","pid":0,"tid":1,"ts":9223372036854775.807,"dur":9223372036854775.807,"args":{"correlation":1}},
      {"ph":"X","cat":"gpu_memcpy","name":"m","pid":0,"tid":1,"ts":-9223372036854775.808,"dur":9223372036854775.807},
      {"ph":"X","cat":"kernel","name":"nccl_b","pid":0,"tid":1,"ts":0,"dur":9223372036854775.807},
      {"ph":"X","cat":"cuda_runtime","name":"cudaGraphLaunch","pid":1,"tid":1,"ts":-9223372036854775.808,"dur":1,"args":{"correlation":1}},
      {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":-9223372036854775.808,"dur":9223372036854775.807},
      {"ph":"X","cat":"gpu_user_annotation","name":"step_1","ts":-9223372036854775.808,"dur":9223372036854775.807},
      {"ph":"X","cat":"gpu_user_annotation","name":"step_2","ts":0,"dur":9223372036854775.807},
      {"ph":"X","cat":"gpu_user_annotation","name":"step_3","ts":9223372036854775.807,"dur":9223372036854775.807}
    ]}"#;
    for window in [
        kernlens_trace::WindowMode::Full,
        kernlens_trace::WindowMode::steady(kernlens_trace::StepSource::Auto),
        kernlens_trace::WindowMode::steady(kernlens_trace::StepSource::CpuSteps),
    ] {
        let mut o = Options::default();
        o.window = window;
        o.emit_launches = true;
        let a = analyze(&TraceSource::from_bytes("x.json", t.to_vec()), &o).unwrap();
        assert_eq!(a.event_total, 9);
        assert!(a.timeline.busy_ns >= 0 && a.timeline.total_ns >= 0);
        let _ = a.to_json();
        let _ = a.launches().count();
    }
}
