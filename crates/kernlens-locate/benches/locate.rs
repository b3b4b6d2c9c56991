//! Criterion benches of locate.md "Performance goals": the first `locate_many` of 50 names
//! over a source tree, the same call again on the warmed `Locator`, and 10
//! new names after 40 cached ones (no walk, one scan).
//!
//! The tree is `KERNLENS_LOCATE_BENCH_TREE` when set (made by
//! `cargo run --release -p kernlens-locate --example gen_source_tree -- DIR 1G 1`),
//! else a 64 MiB tree generated into a temp dir so the bench runs on its own
//! (4 MiB when `cargo test --benches` runs it once as a test).
//! `benches/compare_rg.sh` measures the same tree against the ripgrep anchor.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod source_tree;

use std::path::PathBuf;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use kernlens_locate::{LocateOptions, Locator};

fn tree() -> (Option<tempfile::TempDir>, PathBuf) {
    // The bench is a program edge: reading its configuration here is fine.
    if let Some(dir) = std::env::var_os("KERNLENS_LOCATE_BENCH_TREE") {
        return (None, PathBuf::from(dir));
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tree");
    // `cargo test --benches` runs each bench once without `--bench`: a small tree will do.
    let measuring = std::env::args().any(|a| a == "--bench");
    let bytes = if measuring { 64 << 20 } else { 4 << 20 };
    source_tree::generate(&dir, bytes, 1).unwrap();
    (Some(tmp), dir)
}

fn bench(c: &mut Criterion) {
    let (_keep, dir) = tree();
    let names = source_tree::bench_names();
    let all: Vec<&str> = names.iter().map(String::as_str).collect();
    let opts = LocateOptions::default();
    let mut g = c.benchmark_group("locate");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function("first_call_50_names", |b| {
        b.iter(|| {
            let mut l = Locator::builder().root(&dir).build().unwrap();
            l.locate_many(&all, &opts)
        })
    });
    let mut warm = Locator::builder().root(&dir).build().unwrap();
    warm.locate_many(&all, &opts);
    g.bench_function("second_call_50_names", |b| {
        b.iter(|| warm.locate_many(&all, &opts))
    });
    assert_eq!(warm.stats().bytes_read, 0, "a second call reads no file");
    g.bench_function("10_new_names_after_40_cached", |b| {
        b.iter_batched(
            || {
                let mut l = Locator::builder().root(&dir).build().unwrap();
                l.locate_many(&all[..40], &opts);
                l
            },
            |mut l| {
                let r = l.locate_many(&all[40..], &opts);
                assert_eq!(l.stats().files_walked, 0);
                r
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
