//! What the gate costs: one lane scan (a fingerprint over the lane's
//! progress), and the raw-trace coverage probe, which is a whole read of the
//! trace; that read is why the probe is lazy and why callers holding an
//! analysis answer from it instead.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kernlens_gate::lane::{
    LaneIdleConfig, LaneIdleState, ManualClock, ProgressSnapshot, ScanInput, TaskStatus, TaskView,
    scan,
};
use kernlens_gate::raw_trace_probe;

fn lane(records: usize) -> ProgressSnapshot {
    let records = (0..records)
        .map(|i| {
            vec![
                format!("attempt-{i}"),
                format!("kernel-{}", i % 40),
                (i % 3).to_string(),
                "pending".to_owned(),
                "KEEP".to_owned(),
                format!("src/kernels/k{i}.py"),
                "running".to_owned(),
                String::new(),
                format!("tg{:03}", i % 40),
            ]
        })
        .collect();
    let fields = BTreeMap::from([("decision".to_owned(), "KEEP".to_owned())]);
    ProgressSnapshot::new(records, fields)
}

fn lane_scan(c: &mut Criterion) {
    let config = LaneIdleConfig::default();
    let clock = ManualClock::new(1_750_000_000.0);
    let tasks: Vec<TaskView> = (0..50)
        .map(|i| TaskView::new(format!("t{i}"), "kernel_opt", TaskStatus::Succeeded))
        .collect();
    let mut group = c.benchmark_group("lane_scan");
    for records in [10, 1000] {
        let progress = lane(records);
        let input = ScanInput::new(true, &tasks, 0.0, &progress);
        group.bench_function(format!("{records}_records"), |b| {
            let mut state = LaneIdleState::default();
            b.iter(|| scan(&mut state, &input, &config, &clock));
        });
    }
    group.finish();
}

fn raw_probe(c: &mut Criterion) {
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/traces");
    let mut group = c.benchmark_group("raw_trace_probe");
    group.sample_size(10);
    for name in ["graph.json.gz", "graph_many.json.gz"] {
        let path = traces.join(name);
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        group.throughput(Throughput::Bytes(meta.len()));
        group.bench_function(name, |b| b.iter(|| raw_trace_probe(&path)().unwrap()));
    }
    group.finish();
}

criterion_group!(benches, lane_scan, raw_probe);
criterion_main!(benches);
