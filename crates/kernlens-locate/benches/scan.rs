//! Criterion benches of the scan and the keyword planning (issue 21 items 3
//! and 4): the first `locate_many` of the 50 real-tree names (175 keywords,
//! `real_tree_names.txt`) over a generated tree, where most files hit no
//! keyword and the walk and the scan are the cost; and planning a
//! 100k-character name of 50k segments.
//!
//! The tree is `KERNLENS_LOCATE_BENCH_TREE` when set, else a 64 MiB tree
//! generated into a temp dir (4 MiB when `cargo test --benches` runs each
//! bench once). `benches/compare_rg_cpu.sh` compares the same names against
//! `rg -F -c` on real trees.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod source_tree;

use std::path::PathBuf;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kernlens_locate::{LocateOptions, Locator, keywords_for};

/// Real kernel names from vLLM, SGLang, torch, flashinfer, flash-attention,
/// composable_kernel and Liger-Kernel traces, one a line.
const REAL_TREE_NAMES: &str = include_str!("real_tree_names.txt");

fn tree() -> (Option<tempfile::TempDir>, PathBuf, u64) {
    // The bench is a program edge: reading its configuration here is fine.
    if let Some(dir) = std::env::var_os("KERNLENS_LOCATE_BENCH_TREE") {
        let dir = PathBuf::from(dir);
        let bytes = walk_bytes(&dir);
        return (None, dir, bytes);
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tree");
    let measuring = std::env::args().any(|a| a == "--bench");
    let bytes = if measuring { 64 << 20 } else { 4 << 20 };
    let summary = source_tree::generate(&dir, bytes, 1).unwrap();
    (Some(tmp), dir, summary.bytes)
}

/// Bytes of the files under `dir` (a given tree's throughput unit).
fn walk_bytes(dir: &std::path::Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(_) => total += e.metadata().map_or(0, |m| m.len()),
                Err(_) => {}
            }
        }
    }
    total
}

fn bench(c: &mut Criterion) {
    let (_keep, dir, bytes) = tree();
    let names: Vec<&str> = REAL_TREE_NAMES.lines().filter(|l| !l.is_empty()).collect();
    let opts = LocateOptions::default();
    let mut g = c.benchmark_group("scan");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .throughput(Throughput::Bytes(bytes));
    g.bench_function("first_call_50_real_tree_names", |b| {
        b.iter(|| {
            let mut l = Locator::builder().root(&dir).build().unwrap();
            l.locate_many(&names, &opts)
        })
    });
    g.finish();

    let long: String = (0..50_000)
        .map(|i| char::from(b'a' + (i % 26) as u8).to_string())
        .collect::<Vec<_>>()
        .join("_");
    let mut g = c.benchmark_group("plan");
    g.throughput(Throughput::Bytes(long.len() as u64));
    g.bench_function("name_of_100k_chars_50k_segments", |b| {
        b.iter(|| keywords_for(&long))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
