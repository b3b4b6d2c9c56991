//! Builders for synthetic traces (trace.md "Acceptance scenarios"): each test states its events inline;
//! where the real ones live (`fixture`, `PublicTraces`); the independent oracle's check.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../../tests/support/trace_files.rs"]
mod trace_files;

use std::io::Write;
use std::path::Path;

#[allow(unused_imports)]
pub use trace_files::{PublicTraces, fixture};

use kernlens_trace::{Analysis, Options, TraceSource, analyze};
use serde_json::{Value, json};

pub fn kernel(name: &str, ts: f64, dur: f64, corr: Option<i64>) -> Value {
    let mut args = json!({"device": 0, "stream": 7});
    if let Some(c) = corr {
        args["correlation"] = json!(c);
    }
    json!({"ph":"X","cat":"kernel","name":name,"pid":0,"tid":7,"ts":ts,"dur":dur,"args":args})
}

pub fn kernel_on(name: &str, ts: f64, dur: f64, corr: Option<i64>, device: i64, tid: i64) -> Value {
    let mut k = kernel(name, ts, dur, corr);
    k["args"]["device"] = json!(device);
    k["pid"] = json!(device);
    k["tid"] = json!(tid);
    k
}

pub fn memcpy(name: &str, ts: f64, dur: f64) -> Value {
    json!({"ph":"X","cat":"gpu_memcpy","name":name,"pid":0,"tid":7,"ts":ts,"dur":dur,"args":{"device":0}})
}

pub fn runtime(name: &str, corr: i64, extid: Option<i64>) -> Value {
    launch("cuda_runtime", name, corr, extid, 0.0)
}

pub fn driver(name: &str, corr: i64, extid: Option<i64>) -> Value {
    launch("cuda_driver", name, corr, extid, 0.0)
}

pub fn launch(cat: &str, name: &str, corr: i64, extid: Option<i64>, ts: f64) -> Value {
    let mut args = json!({"correlation": corr});
    if let Some(x) = extid {
        args["External id"] = json!(x);
    }
    json!({"ph":"X","cat":cat,"name":name,"pid":1,"tid":1,"ts":ts,"dur":1.0,"args":args})
}

pub fn cpu_op(name: &str, extid: i64) -> Value {
    json!({"ph":"X","cat":"cpu_op","name":name,"pid":1,"tid":1,"ts":0.0,"dur":1.0,"args":{"External id":extid}})
}

pub fn annotation(name: &str, ts: f64, dur: f64) -> Value {
    json!({"ph":"X","cat":"gpu_user_annotation","name":name,"pid":0,"tid":7,"ts":ts,"dur":dur,"args":{}})
}

pub fn trace(events: &[Value]) -> Vec<u8> {
    serde_json::to_vec(&json!({ "traceEvents": events })).unwrap()
}

/// Fixture T1 of trace.md "Acceptance scenarios".
pub fn t1() -> Vec<u8> {
    trace(&[
        cpu_op("aten::mm", 100),
        runtime("hipLaunchKernel", 5, Some(100)),
        kernel("Cijk_Alik_Bljk_HHS", 1000.0, 200.0, Some(5)),
        kernel("paged_attention_v1", 1300.0, 300.0, Some(999)),
        memcpy("Memcpy DtoH", 1700.0, 50.0),
        annotation("ProfilerStep#1", 1000.0, 700.0),
    ])
}

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

pub fn analyze_bytes(bytes: &[u8], opts: &Options) -> Analysis {
    analyze(&TraceSource::from_bytes("t.json", bytes.to_vec()), opts).unwrap()
}

pub fn run(bytes: &[u8]) -> Analysis {
    analyze_bytes(bytes, &all_rows())
}

/// Every kernel and op row (`top_k = 0`).
pub fn all_rows() -> Options {
    let mut o = Options::default();
    o.top_k = 0;
    o
}

/// The analysis of the trace file at `path`.
pub fn analyze_path(path: &Path, opts: &Options) -> Analysis {
    analyze(&TraceSource::open(path).unwrap(), opts).unwrap()
}

pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// The trace.md "Graph launches and coverage" block as `(launches, launches_with_kernels, coverage, graph_kernels, under_recorded)`.
pub fn graph_tuple(a: &Analysis) -> (u64, u64, Option<f64>, u64, bool) {
    let g = &a.graph;
    (
        g.launches,
        g.launches_with_kernels,
        g.coverage,
        g.graph_kernels,
        g.under_recorded,
    )
}

/// The same tuple for a `GraphCoverage` (a chunk's provenance).
pub fn coverage_tuple(g: &kernlens_trace::GraphCoverage) -> (u64, u64, Option<f64>, u64, bool) {
    (
        g.launches,
        g.launches_with_kernels,
        g.coverage,
        g.graph_kernels,
        g.under_recorded,
    )
}

/// A trace whose graph launches (correlations 5..=8) mostly lost their replays: two
/// kernels of one replay were recorded, beside one eager `Cijk` launched by `aten::mm`.
pub fn under_recorded_events() -> Vec<Value> {
    let mut ev = vec![cpu_op("aten::mm", 200)];
    for c in 5..=8 {
        ev.push(runtime("hipGraphLaunch", c, None));
    }
    ev.push(runtime("hipLaunchKernel", 99, Some(200)));
    ev.push(kernel("Cijk", 1000.0, 100.0, Some(99)));
    ev.push(kernel("graph_fused_attn", 1100.0, 100.0, Some(5)));
    ev.push(kernel("graph_fused_mlp", 10_000_000.0, 100.0, Some(5)));
    ev
}

/// The TraceLens-style categories as one comparable tuple: computation, communication,
/// exposed communication, memcpy, idle (µs).
pub fn categories_tuple(c: &kernlens_trace::Categories) -> (f64, f64, f64, f64, f64) {
    (
        c.computation_us,
        c.communication_us,
        c.exposed_communication_us,
        c.memcpy_us,
        c.idle_us,
    )
}

/// Checks every oracle file `<expected>/<stem>.json` (made by
/// fixtures/traces/expected/reference.py) against the analysis of its trace under
/// `traces`, and returns how many were checked. The trace of `<stem>` is
/// `<stem>.json.gz`, or, for `<dir>__<file>`, `<dir>/<file>.pt.trace.json.gz`: a
/// directory of traces (as `tensorboard_trace_handler` writes) names its figures so.
/// Counts must agree exactly, times to float precision.
pub fn check_oracle_dir(expected: &Path, traces: &Path) -> usize {
    let mut checked = 0;
    let mut entries: Vec<_> = std::fs::read_dir(expected)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let nested = stem
            .split_once("__")
            .map(|(dir, file)| traces.join(format!("{dir}/{file}.pt.trace.json.gz")));
        let trace = [traces.join(format!("{stem}.json.gz"))]
            .into_iter()
            .chain(nested)
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("{stem}: no trace for it under {}", traces.display()));
        let e: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let a = analyze_path(&trace, &all_rows());
        let t = &a.timeline;
        assert_eq!(a.event_total, e["event_total"].as_u64().unwrap(), "{stem}");
        assert_eq!(
            a.attribution.kernel_count,
            e["kernel_count"].as_u64().unwrap(),
            "{stem}"
        );
        for (mine, key) in [
            (t.total_us, "total_us"),
            (t.busy_us, "busy_us"),
            (t.kernel_union_us, "kernel_union_us"),
            (t.kernel_sum_us, "kernel_sum_us"),
            (t.idle_pct, "idle_pct"),
        ] {
            assert!(
                close(mine, e[key].as_f64().unwrap()),
                "{stem} {key}: {mine} vs {}",
                e[key]
            );
        }
        let g = &e["graph"];
        assert_eq!(a.graph.launches, g["launches"].as_u64().unwrap(), "{stem}");
        assert_eq!(
            a.graph.launches_with_kernels,
            g["launches_with_kernels"].as_u64().unwrap(),
            "{stem}"
        );
        assert_eq!(
            a.graph.graph_kernels,
            g["graph_kernels"].as_u64().unwrap(),
            "{stem}"
        );
        assert_eq!(a.graph.coverage, g["coverage"].as_f64(), "{stem}");
        assert_eq!(
            a.graph.under_recorded,
            g["under_recorded"].as_bool().unwrap(),
            "{stem}"
        );
        let at = &e["attribution"];
        assert_eq!(
            a.attribution.attributed_kernels,
            at["attributed"].as_u64().unwrap(),
            "{stem}"
        );
        assert_eq!(
            a.attribution.graph_attributed_kernels,
            at["graph_attributed"].as_u64().unwrap(),
            "{stem}"
        );
        assert_eq!(
            a.attribution.unlinked_kernels,
            at["unlinked"].as_u64().unwrap(),
            "{stem}"
        );
        for (k, ek) in a.kernels.iter().zip(e["top_kernels"].as_array().unwrap()) {
            assert_eq!(k.name, ek["name"].as_str().unwrap(), "{stem}");
            assert_eq!(k.calls, ek["calls"].as_u64().unwrap(), "{stem}");
            assert!(
                close(k.total_us, ek["total_us"].as_f64().unwrap()),
                "{stem}"
            );
        }
        assert!(a.stream_errors.is_empty(), "{stem}: {:?}", a.stream_errors);
        checked += 1;
    }
    checked
}
