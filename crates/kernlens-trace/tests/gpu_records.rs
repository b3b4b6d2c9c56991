//! GPU records are stored packed (32 bytes, `src/gpu.rs`): durations, correlations and
//! devices that do not fit the packed fields (2^32 ns and past, negative, 64-bit) must
//! still reach every figure exactly, on every read path.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use kernlens_trace::{Analysis, Options, TraceSource, analyze};
use serde_json::{Value, json};

/// 2^32 ns, the first duration past the packed field.
const TWO_32: i64 = 1 << 32;

/// One event of each kind of value past the packed fields, and the narrow ones at their
/// edge.
fn wide_events() -> Vec<Value> {
    // Each value past its field on its own, so that no other one makes the record wide.
    vec![
        cpu_op("aten::long", 7),
        runtime("cudaLaunchKernel", 5, Some(7)),
        cpu_op("aten::corr", 8),
        runtime("cudaLaunchKernel", 1 << 40, Some(8)),
        cpu_op("aten::neg", 9),
        runtime("cudaLaunchKernel", -3, Some(9)),
        // 5e9 ns.
        kernel("k_long", 0.0, 5_000_000.0, Some(5)),
        kernel("k_corr", 5.0, 1.0, Some(1 << 40)),
        kernel("k_neg", 10.0, 1.0, Some(-3)),
        // 2^32 - 1 ns and correlation u32::MAX (both fit), then 2^32 ns (does not).
        kernel("k_edge", 30.0, 4_294_967.295, Some(i64::from(u32::MAX))),
        kernel("k_edge", 40.0, 4_294_967.296, Some(12)),
        kernel_on("k_dev", 50.0, 2.0, Some(11), 1 << 35, 3),
        kernel_on("k_dev_neg", 60.0, 3.0, None, -1, 4),
        memcpy("Memcpy HtoD", 20.0, 6_000_000.0),
    ]
}

fn launches_on() -> Options {
    let mut o = all_rows();
    o.emit_launches = true;
    o
}

fn row<'a>(a: &'a Analysis, name: &str) -> &'a kernlens_trace::KernelRow {
    a.kernels.iter().find(|k| k.name == name).unwrap()
}

#[test]
fn values_past_32_bits_reach_rows_timeline_and_launches_exactly() {
    let a = analyze_bytes(&trace(&wide_events()), &launches_on());
    let long = row(&a, "k_long");
    assert_eq!(
        (long.total_ns, long.op_name.as_str()),
        (5_000_000_000, "aten::long")
    );
    assert_eq!(row(&a, "k_corr").op_name, "aten::corr");
    assert_eq!(row(&a, "k_neg").op_name, "aten::neg");
    let edge = row(&a, "k_edge");
    assert_eq!(
        (edge.calls, edge.total_ns, edge.min_us, edge.max_us),
        (2, 2 * TWO_32 - 1, 4_294_967.295, 4_294_967.296)
    );
    assert_eq!(a.timeline.memcpy_us, 6_000_000.0);
    let devices: Vec<(Option<i64>, u64)> = a
        .timeline
        .per_device
        .iter()
        .map(|d| (d.device, d.kernel_count))
        .collect();
    assert_eq!(devices, [(Some(-1), 1), (Some(0), 5), (Some(1 << 35), 1)]);
    let launches: Vec<(&str, i64, Option<i64>)> = a
        .launches()
        .map(|l| (l.name, l.dur, l.correlation))
        .collect();
    assert_eq!(
        launches,
        [
            ("k_long", 5_000_000_000, Some(5)),
            ("k_corr", 1_000, Some(1 << 40)),
            ("k_neg", 1_000, Some(-3)),
            ("k_edge", TWO_32 - 1, Some(i64::from(u32::MAX))),
            ("k_edge", TWO_32, Some(12)),
            ("k_dev", 2_000, Some(11)),
            ("k_dev_neg", 3_000, None),
        ]
    );
}

/// The same records through the gzip pieces and the region workers, on one thread and
/// on several, give the same summary as the sequential read of the plain bytes.
#[test]
fn wide_values_read_the_same_on_every_path() {
    // Enough copies that a plain read is split into regions.
    let mut events = Vec::new();
    for i in 0..6000 {
        let shift = f64::from(i) * 10_000_000.0;
        for mut e in wide_events() {
            if let Some(ts) = e["ts"].as_f64() {
                e["ts"] = json!(ts + shift);
            }
            events.push(e);
        }
    }
    let bytes = trace(&events);
    let summary = |label: &str, bytes: Vec<u8>, threads: usize| {
        let mut o = launches_on();
        o.threads = Some(threads);
        let a = analyze(&TraceSource::from_bytes(label, bytes), &o).unwrap();
        let launches: Vec<(i64, i64, Option<i64>)> =
            a.launches().map(|l| (l.ts, l.dur, l.correlation)).collect();
        let edge = row(&a, "k_edge").total_ns;
        let mut doc = a.to_json();
        doc["trace_file"] = Value::Null;
        (doc, launches, edge)
    };
    let one = summary("t.json", bytes.clone(), 1);
    assert_eq!(one.1.len(), 6000 * 7);
    assert_eq!(one.2, 6000 * (2 * TWO_32 - 1));
    for threads in [2, 3] {
        assert!(
            summary("t.json", bytes.clone(), threads) == one,
            "{threads} threads"
        );
        assert!(
            summary("t.json.gz", gzip(&bytes), threads) == one,
            "gzip, {threads} threads"
        );
    }
}
