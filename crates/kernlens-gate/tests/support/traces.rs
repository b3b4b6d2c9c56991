//! Traces the gate tests read: the synthetic traces of trace.md "Acceptance scenarios", and copies
//! of `graph.json.gz` derived by script below, so anyone can see and regenerate
//! how each was made. The real ones come from fixtures/traces (trace_files.rs).
//!
//! Shared with the root package's `tests/cli_gate.rs` through `#[path]`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::Path;

use serde_json::{Value, json};

/// A trace file read as JSON, gzip detected by its magic bytes.
pub fn read_trace(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap();
    let mut text = Vec::new();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_end(&mut text)
            .unwrap();
    } else {
        text = bytes;
    }
    serde_json::from_slice(&text).unwrap()
}

/// Write `trace` to `path`, gzipped when the name ends in `.gz`.
pub fn write_trace(trace: &Value, path: &Path) {
    let text = serde_json::to_vec(trace).unwrap();
    if path.extension().is_some_and(|ext| ext == "gz") {
        let file = std::fs::File::create(path).unwrap();
        let mut encoder = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
        encoder.write_all(&text).unwrap();
        encoder.finish().unwrap();
    } else {
        std::fs::write(path, text).unwrap();
    }
}

fn events(trace: &Value) -> &Vec<Value> {
    trace["traceEvents"].as_array().unwrap()
}

fn correlation(event: &Value) -> Option<i64> {
    event["args"]["correlation"].as_i64()
}

fn is_gpu(event: &Value) -> bool {
    matches!(
        event["cat"].as_str(),
        Some("kernel" | "gpu_memcpy" | "gpu_memset")
    )
}

/// Runtime graph-launch correlations in launch (CPU `ts`) order: replay `i`
/// is the `i`-th launch.
fn replay_order(trace: &Value) -> HashMap<i64, usize> {
    let mut launches: Vec<(f64, i64)> = events(trace)
        .iter()
        .filter(|e| e["cat"] == "cuda_runtime")
        .filter(|e| {
            e["name"]
                .as_str()
                .is_some_and(|n| n.contains("GraphLaunch"))
        })
        .filter_map(|e| Some((e["ts"].as_f64()?, correlation(e)?)))
        .collect();
    launches.sort_by(|a, b| a.0.total_cmp(&b.0));
    launches
        .into_iter()
        .enumerate()
        .map(|(index, (_, corr))| (corr, index))
        .collect()
}

/// What a dropped activity buffer leaves: the GPU events of every replay
/// except each `keep_every`-th are removed, while all launch events stay.
/// On `graph.json.gz` with 8: 5 of 40 launches keep kernels (coverage 0.125).
pub fn drop_replays(trace: &Value, keep_every: usize) -> Value {
    let order = replay_order(trace);
    let kept: Vec<Value> = events(trace)
        .iter()
        .filter(|e| {
            !is_gpu(e)
                || correlation(e)
                    .and_then(|corr| order.get(&corr))
                    .is_none_or(|index| index % keep_every == 0)
        })
        .cloned()
        .collect();
    let mut out = trace.clone();
    out["traceEvents"] = Value::Array(kept);
    out
}

/// A fully recorded but genuinely idle workload: replay `i`'s GPU events move
/// `i × gap_us` later, so every launch keeps its kernels while the GPU waits
/// between replays.
pub fn spread_replays(trace: &Value, gap_us: f64) -> Value {
    let order = replay_order(trace);
    let moved: Vec<Value> = events(trace)
        .iter()
        .map(|e| {
            let shift = correlation(e)
                .filter(|_| is_gpu(e))
                .and_then(|corr| order.get(&corr));
            let mut e = e.clone();
            if let (Some(index), Some(ts)) = (shift, e["ts"].as_f64()) {
                e["ts"] = json!(ts + *index as f64 * gap_us);
            }
            e
        })
        .collect();
    let mut out = trace.clone();
    out["traceEvents"] = Value::Array(moved);
    out
}

fn runtime(name: &str, ts: f64, corr: i64) -> Value {
    json!({"ph":"X","cat":"cuda_runtime","name":name,"pid":1,"tid":1,"ts":ts,"dur":5,
           "args":{"correlation":corr}})
}

fn kernel(name: &str, ts: f64, dur: f64, corr: i64) -> Value {
    json!({"ph":"X","cat":"kernel","name":name,"pid":0,"tid":7,"ts":ts,"dur":dur,
           "args":{"correlation":corr,"device":0,"stream":7}})
}

/// trace.md scenario 35: four `hipGraphLaunch` with kernels recorded for one.
pub fn under_recorded_synthetic() -> Value {
    let mut events = vec![
        json!({"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,
                                  "ts":990,"dur":50,"args":{"External id":200}}),
    ];
    for corr in 5..=8 {
        events.push(runtime("hipGraphLaunch", 900.0 + corr as f64, corr));
    }
    let mut launch = runtime("hipLaunchKernel", 995.0, 99);
    launch["args"]["External id"] = json!(200);
    events.push(launch);
    events.push(kernel("Cijk_Alik_Bljk_HHS", 1000.0, 100.0, 99));
    events.push(kernel("graph_fused_attn", 1100.0, 100.0, 5));
    events.push(kernel("graph_fused_mlp", 10_000_000.0, 100.0, 5));
    json!({ "traceEvents": events })
}

/// trace.md scenario 39: four launches, each with one 100 µs kernel, 3 s apart.
pub fn fully_recorded_idle_synthetic() -> Value {
    let mut events = Vec::new();
    for (index, corr) in (5..=8).enumerate() {
        let ts = 1000.0 + index as f64 * 3_000_000.0;
        events.push(runtime("hipGraphLaunch", ts - 10.0, corr));
        events.push(kernel("graph_gemm", ts, 100.0, corr));
    }
    json!({ "traceEvents": events })
}

/// A hand-made kernlens chunk of `source` over [0, `end_us`), in the shape
/// trace.md "Split" writes: the `kernlens` member (with the source's whole-trace
/// coverage `source_graph`) before `traceEvents`, the GPU events of the window,
/// the launch events of kept kernels only, and the CPU ops of the window.
pub fn handmade_chunk(source: &Value, end_us: f64, source_graph: Value) -> Value {
    let in_window = |e: &Value| e["ts"].as_f64().is_some_and(|ts| ts < end_us);
    let kept_correlations: Vec<i64> = events(source)
        .iter()
        .filter(|e| is_gpu(e) && in_window(e))
        .filter_map(correlation)
        .collect();
    let kept: Vec<Value> = events(source)
        .iter()
        .filter(|e| match e["cat"].as_str() {
            Some("cuda_runtime" | "cuda_driver") => {
                correlation(e).is_some_and(|corr| kept_correlations.contains(&corr))
            }
            _ => in_window(e),
        })
        .cloned()
        .collect();
    json!({
        "kernlens": {
            "schema": "kernlens.chunk/1",
            "source_file": "source.json",
            "window": {"start_us": 0.0, "end_us": end_us},
            "source_graph": source_graph
        },
        "traceEvents": kept
    })
}

/// Scenario 35's trace cut to [0, 2000) µs: the chunk alone looks fully
/// recorded (1 of 1 launch), while its source was 1 of 4.
pub fn handmade_chunk_of_under_recorded() -> Value {
    handmade_chunk(
        &under_recorded_synthetic(),
        2000.0,
        json!({"launches":4,"launches_with_kernels":1,"coverage":0.25,
               "graph_kernels":2,"under_recorded":true,"launch_api":"runtime"}),
    )
}

/// Scenario 39's trace cut to [0, 3.5 s): two replays 3 s apart, so the chunk
/// itself is almost entirely idle.
pub fn handmade_chunk_of_idle_graphs() -> Value {
    handmade_chunk(
        &fully_recorded_idle_synthetic(),
        3_500_000.0,
        json!({"launches":4,"launches_with_kernels":4,"coverage":1.0,
               "graph_kernels":4,"under_recorded":false,"launch_api":"runtime"}),
    )
}
