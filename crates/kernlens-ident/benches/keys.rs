//! Key throughput (ident.md "Performance goals").
//!
//! - `memoised_mix`: all 90,648 `cat == "kernel"` row names of the five H200
//!   fixtures, in file order, through a fresh `KeyMemo` (both keys; the 14
//!   cold computations included). Goal: ≥ 2,000,000 names/s on one core.
//! - `cold_non_mangled`: profiler-demangled aten names (R3–R6), no memo.
//!   Goal: ≥ 300,000 names/s.
//! - `cold_mangled`: real mangled names from the third-party traces
//!   (`KERNLENS_PUBLIC_TRACES`), no memo.
//!   Goal: ≥ 30,000 names/s.
//! - `adversarial_64k`: 64 KiB inputs of unbalanced brackets, long decoration
//!   chains and deep mangled nests; the spec bounds each at 50 ms (P6).
//!
//! Run: `cargo bench -p kernlens-ident --bench keys` (criterion reports
//! names/s as `elem/s`).

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use kernlens_ident::{KeyMemo, is_mangled, keys};

#[path = "../tests/support/mod.rs"]
mod support;

fn h200_rows() -> Vec<String> {
    let mut rows = Vec::new();
    for file in support::H200_TRACES {
        match support::kernel_names(&support::fixture(file)) {
            Ok(names) => rows.extend(names),
            Err(e) => eprintln!("skipping {file}: {e}"),
        }
    }
    rows
}

fn distinct(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    names
        .into_iter()
        .filter(|n| seen.insert(n.clone()))
        .collect()
}

fn public_names() -> Vec<String> {
    let mut names = Vec::new();
    let Some(public) = support::PublicTraces::get("keys/cold_mangled (third-party names)") else {
        return Vec::new();
    };
    for file in support::public_traces(public).unwrap_or_default() {
        if let Ok(found) = support::kernel_names(&file) {
            names.extend(found);
        }
    }
    distinct(names)
}

fn bench_keys(c: &mut Criterion) {
    let rows = h200_rows();
    let mut group = c.benchmark_group("keys");

    group.throughput(Throughput::Elements(rows.len() as u64));
    group.bench_function(BenchmarkId::new("memoised_mix", rows.len()), |b| {
        b.iter(|| {
            let mut memo = KeyMemo::with_capacity(16);
            let mut bytes = 0usize;
            for name in &rows {
                let k = memo.get(name);
                bytes += k.native.len() + k.python.len();
            }
            black_box(bytes)
        })
    });

    let aten: Vec<String> = distinct(rows.iter().cloned())
        .into_iter()
        .filter(|n| n.starts_with("void at::native::"))
        .collect();
    group.throughput(Throughput::Elements(aten.len() as u64));
    group.bench_function(BenchmarkId::new("cold_non_mangled", aten.len()), |b| {
        b.iter(|| {
            for name in &aten {
                black_box(keys(name));
            }
        })
    });

    let mut mangled: Vec<String> = public_names()
        .into_iter()
        .filter(|n| is_mangled(n))
        .collect();
    mangled.extend(
        [
            "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb0ELb0EEEvPKT_",
            "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENSt5arrayIPcLm1EEEEEviT0_T1_",
            "_ZN2at6native12_GLOBAL__N_128vectorized_layer_norm_kernelIN3c108BFloat16EfLb0EEEvifPKT_S7_S7_PT0_SA_PS4_",
            "_ZZN2at6native18GeluCUDAKernelImplERNS_18TensorIteratorBaseENS0_8GeluTypeEENKUlvE0_clEv",
            "_Z14rmsnorm_kernelPf",
        ]
        .map(str::to_owned),
    );
    // Composable Kernel symbols run to several KiB each and dominate any mix
    // they are in, so they are measured on their own.
    let (giants, typical): (Vec<String>, Vec<String>) =
        mangled.into_iter().partition(|n| n.len() > 1024);
    for (label, set) in [
        ("cold_mangled", &typical),
        ("cold_mangled_over_1k", &giants),
    ] {
        group.throughput(Throughput::Elements(set.len() as u64));
        group.bench_function(BenchmarkId::new(label, set.len()), |b| {
            b.iter(|| {
                for name in set {
                    black_box(keys(name));
                }
            })
        });
    }
    group.finish();

    let mut adversarial = c.benchmark_group("adversarial_64k");
    adversarial.sample_size(10);
    let cases = [
        ("unterminated_templates", "a<".repeat(32768)),
        ("open_parens", "(".repeat(65536)),
        (
            "nested_templates",
            format!("k{}{}", "<a".repeat(16384), ">".repeat(16384)),
        ),
        ("decoration_chain", "a->void ".repeat(8192)),
        ("suffix_chain", format!("x{}", " (y Op)".repeat(9362))),
        ("mangled_nest", format!("_Z{}", "N1a".repeat(5460))),
        (
            "mangled_templates_16k",
            format!("_ZN1a{}E", "IN1b".repeat(4000)),
        ),
    ];
    for (label, input) in &cases {
        adversarial.throughput(Throughput::Bytes(input.len() as u64));
        adversarial.bench_function(*label, |b| b.iter(|| black_box(keys(input))));
    }
    adversarial.finish();
}

criterion_group!(benches, bench_keys);
criterion_main!(benches);
