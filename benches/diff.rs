//! Criterion bench of `kernlens diff` (issue 16, diff.md "Performance"): the diff of two
//! large traces against reading the larger one alone. The two reads run in parallel, so
//! on two cores the goal is a diff within 1.1× of the single read.
//!
//! Inputs are made at bench time by the trace scaler from the real `graph_many.json.gz`
//! capture and cached under `target/bench-data/`: the before trace is ×N copies, the
//! after trace ×N copies with a 5 µs gap between copies (a distinct file of the same
//! size, so the page cache does not serve one read from the other's pages). N is chosen
//! so each file is `KERNLENS_BENCH_BYTES` (default 800 MB, the 782 MB class of the
//! issue). Run: `cargo bench --bench diff` (`taskset -c 0,1` for the two-core figure).
//!
//! Beside the two functions the goal compares, `diff_two_one_thread_each` is the diff with
//! each side read on one thread (no worker pool), and `compare_only` the compare step
//! alone, over the two sides read once: what the diff adds to its two reads.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use kernlens::diff::{Capture, DiffOptions, Normalize, compare, diff_traces};
use kernlens_trace::{Limits, TraceSource, WindowMode};

/// The repository root: where it was built, or the working directory when the bench
/// binary runs from a copy of the checkout elsewhere.
fn root() -> PathBuf {
    let built = Path::new(env!("CARGO_MANIFEST_DIR"));
    if built.join("fixtures/traces").is_dir() {
        built.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_else(|e| panic!("working directory: {e}"))
    }
}

fn fixture(name: &str) -> PathBuf {
    root().join("fixtures/traces").join(name)
}

/// The scaled copy of `graph_many` with `gap_ns` between copies, made once and cached.
fn scaled(src: &[u8], copies: u64, gap_ns: i64) -> PathBuf {
    let dir = root().join("target/bench-data");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let out = dir.join(format!("graph_many_x{copies}_gap{gap_ns}ns.json"));
    if !out.exists() {
        let tmp = out.with_extension("partial");
        let mut w =
            BufWriter::new(File::create(&tmp).unwrap_or_else(|e| panic!("{}: {e}", tmp.display())));
        kernlens_xtask::scale(src, &mut w, copies, gap_ns).unwrap_or_else(|e| panic!("scale: {e}"));
        w.flush().unwrap_or_else(|e| panic!("{e}"));
        std::fs::rename(&tmp, &out).unwrap_or_else(|e| panic!("{e}"));
    }
    out
}

fn bench(c: &mut Criterion) {
    let target: u64 = std::env::var("KERNLENS_BENCH_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(800_000_000);
    let mut src = Vec::new();
    File::open(fixture("graph_many.json.gz"))
        .map(flate2::read::MultiGzDecoder::new)
        .and_then(|mut gz| gz.read_to_end(&mut src))
        .unwrap_or_else(|e| panic!("graph_many.json.gz: {e}"));
    let copies = target.div_ceil(src.len() as u64).max(1);
    let before = scaled(&src, copies, 0);
    let after = scaled(&src, copies, 5_000);
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let larger = if size(&after) >= size(&before) {
        &after
    } else {
        &before
    };

    let mut g = c.benchmark_group("diff/graph_many");
    // Each iteration reads 0.8-1.6 GB: flat sampling, one read per sample.
    g.sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .warm_up_time(Duration::from_secs(2));
    g.throughput(Throughput::Bytes(size(larger)));
    g.bench_function("read_larger_alone", |b| {
        b.iter(|| {
            let s = TraceSource::open(larger).unwrap_or_else(|e| panic!("{e}"));
            Capture::read(&s, WindowMode::Full, &Limits::default(), None)
                .unwrap_or_else(|e| panic!("{e}"))
        })
    });
    g.bench_function("diff_two", |b| {
        b.iter(|| {
            let b_src = TraceSource::open(&before).unwrap_or_else(|e| panic!("{e}"));
            let a_src = TraceSource::open(&after).unwrap_or_else(|e| panic!("{e}"));
            diff_traces(&b_src, &a_src, &DiffOptions::default()).unwrap_or_else(|e| panic!("{e}"))
        })
    });
    g.bench_function("diff_two_one_thread_each", |b| {
        b.iter(|| {
            let b_src = TraceSource::open(&before).unwrap_or_else(|e| panic!("{e}"));
            let a_src = TraceSource::open(&after).unwrap_or_else(|e| panic!("{e}"));
            let options = DiffOptions::default().with_threads(Some(1));
            diff_traces(&b_src, &a_src, &options).unwrap_or_else(|e| panic!("{e}"))
        })
    });
    g.finish();

    let side = |path: &Path| {
        let s = TraceSource::open(path).unwrap_or_else(|e| panic!("{e}"));
        Capture::read(&s, WindowMode::Full, &Limits::default(), None)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let (before_side, after_side) = (side(&before), side(&after));
    let mut g = c.benchmark_group("diff/compare");
    g.bench_function("compare_only", |b| {
        b.iter(|| compare(&before_side, &after_side, Normalize::Auto))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
