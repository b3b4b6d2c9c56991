//! Criterion benches of the trace reader (issue 3, trace.md "Performance goals").
//!
//! Inputs are generated at bench time by the trace scaler from the real
//! `graph_many.json.gz` (GPU-heavy) and `eager.json.gz` (CPU-heavy) captures and cached
//! under `target/bench-data/`; nothing multi-GB is committed. The size is
//! `KERNLENS_BENCH_BYTES` (default 1 GB). Throughput is reported in bytes/s of
//! uncompressed trace. Issue 20's anchors (`rg`, `libdeflate-gunzip`, from `PATH` or
//! `KERNLENS_BENCH_RG` / `KERNLENS_BENCH_LIBDEFLATE_GUNZIP`) are timed in the same groups.
//! Run: `cargo bench --bench summary`.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kernlens_trace::{
    Options, SplitOptions, TimeWindow, TraceSource, WindowMode, analyze, split_window,
};

/// A bundled real capture (fixtures/traces).
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/traces")
        .join(name)
}

fn gunzip(path: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    let file = File::open(path).unwrap_or_else(|e| panic!("bench input {}: {e}", path.display()));
    flate2::read::MultiGzDecoder::new(file)
        .read_to_end(&mut out)
        .unwrap_or_else(|e| panic!("bench input {}: {e}", path.display()));
    out
}

/// The scaled plain trace and its gzip twin, made once and cached.
fn inputs(source: &str, target_bytes: u64) -> (PathBuf, PathBuf, u64) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let src = gunzip(&fixture(source));
    let copies = target_bytes.div_ceil(src.len() as u64).max(1);
    let stem = source.trim_end_matches(".json.gz");
    let plain = dir.join(format!("{stem}_x{copies}.json"));
    let gz = dir.join(format!("{stem}_x{copies}.json.gz"));
    if !plain.exists() {
        let tmp = plain.with_extension("partial");
        let mut w =
            BufWriter::new(File::create(&tmp).unwrap_or_else(|e| panic!("{}: {e}", tmp.display())));
        kernlens_xtask::scale(&src, &mut w, copies, 0).unwrap_or_else(|e| panic!("scale: {e}"));
        w.flush().unwrap_or_else(|e| panic!("{e}"));
        std::fs::rename(&tmp, &plain).unwrap_or_else(|e| panic!("{e}"));
    }
    if !gz.exists() {
        let tmp = gz.with_extension("partial");
        let mut enc = flate2::write::GzEncoder::new(
            BufWriter::new(File::create(&tmp).unwrap_or_else(|e| panic!("{}: {e}", tmp.display()))),
            flate2::Compression::new(6),
        );
        let mut r = File::open(&plain).unwrap_or_else(|e| panic!("{e}"));
        std::io::copy(&mut r, &mut enc).unwrap_or_else(|e| panic!("{e}"));
        enc.finish()
            .and_then(|mut w| w.flush())
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::rename(&tmp, &gz).unwrap_or_else(|e| panic!("{e}"));
    }
    let size = std::fs::metadata(&plain).map(|m| m.len()).unwrap_or(0);
    (plain, gz, size)
}

/// Times `program args.. input` (stdout discarded) in `g` as `name`, when it runs here.
fn anchor(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    program: &str,
    args: &[&str],
    input: &Path,
) {
    let run = || {
        Command::new(program)
            .args(args)
            .arg(input)
            .stdout(Stdio::null())
            .status()
    };
    if !run().is_ok_and(|s| s.success()) {
        eprintln!("{name}: skipped, `{program}` did not run here (set its path in the env)");
        return;
    }
    g.bench_function(name, |b| {
        b.iter(|| run().unwrap_or_else(|e| panic!("{program}: {e}")))
    });
}

fn bench(c: &mut Criterion) {
    let target: u64 = std::env::var("KERNLENS_BENCH_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000_000);
    let rg = std::env::var("KERNLENS_BENCH_RG").unwrap_or_else(|_| "rg".into());
    let gunzip_tool = std::env::var("KERNLENS_BENCH_LIBDEFLATE_GUNZIP")
        .unwrap_or_else(|_| "libdeflate-gunzip".into());
    for source in ["graph_many.json.gz", "eager.json.gz"] {
        let (plain, gz, size) = inputs(source, target);
        let mut g = c.benchmark_group(format!("summary/{}", source.trim_end_matches(".json.gz")));
        g.sample_size(10)
            .measurement_time(Duration::from_secs(20))
            .warm_up_time(Duration::from_secs(2));
        g.throughput(Throughput::Bytes(size));
        g.bench_function("plain_file", |b| {
            b.iter(|| {
                let s = TraceSource::open(&plain).unwrap_or_else(|e| panic!("{e}"));
                analyze(&s, &Options::default()).unwrap_or_else(|e| panic!("{e}"))
            })
        });
        // Issue 20's anchors, timed in the same group so each goal reads as a ratio of one
        // run: `rg -c '"kernel"'` on the plain file, `libdeflate-gunzip -c` on the gzip one
        // (output discarded). Skipped, with a line saying so, where the tool is missing.
        anchor(
            &mut g,
            "anchor_rg_count",
            &rg,
            &["-c", "\"kernel\""],
            &plain,
        );
        anchor(
            &mut g,
            "anchor_libdeflate_gunzip",
            &gunzip_tool,
            &["-c"],
            &gz,
        );
        g.bench_function("gzip_stream", |b| {
            b.iter(|| {
                let s = TraceSource::open(&gz).unwrap_or_else(|e| panic!("{e}"));
                analyze(&s, &Options::default()).unwrap_or_else(|e| panic!("{e}"))
            })
        });
        // Split of the middle tenth of the GPU span (both passes; issue 20 asks for at most
        // 1.5x the summary of the same file), from the plain file and from its gzip twin.
        let s = TraceSource::open(&plain).unwrap_or_else(|e| panic!("{e}"));
        let span = analyze(&s, &Options::default())
            .unwrap_or_else(|e| panic!("{e}"))
            .timeline
            .total_ns;
        let tenth = TimeWindow::new(span / 100 * 45, span / 100 * 55)
            .map(WindowMode::Relative)
            .unwrap_or_else(|e| panic!("{e}"));
        for (name, path) in [("split_tenth_plain", &plain), ("split_tenth_gzip", &gz)] {
            g.bench_function(name, |b| {
                b.iter(|| {
                    let s = TraceSource::open(path).unwrap_or_else(|e| panic!("{e}"));
                    split_window(&s, &tenth, std::io::sink(), &SplitOptions::default())
                        .unwrap_or_else(|e| panic!("{e}"))
                })
            });
        }
        g.finish();
    }
    // The parsing core alone: the real 78 MB graph_many trace already in memory.
    let buf = gunzip(&fixture("graph_many.json.gz"));
    let mut g = c.benchmark_group("parse_core");
    g.sample_size(10)
        .throughput(Throughput::Bytes(buf.len() as u64));
    for threads in [1usize, 2] {
        g.bench_function(format!("in_memory_threads_{threads}"), |b| {
            b.iter(|| {
                let mut o = Options::default();
                o.threads = Some(threads);
                analyze(&TraceSource::from_bytes("graph_many.json", buf.clone()), &o)
                    .unwrap_or_else(|e| panic!("{e}"))
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
