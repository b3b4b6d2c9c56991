//! The third-party traces (TraceLens's and HTA's test data, not redistributed here):
//! the independent oracle's figures for them (fixtures/traces/expected/public) and
//! TraceLens's own outputs compared with ours. They run when `KERNLENS_PUBLIC_TRACES`
//! names the directory holding them (`.ci/run` sets it); otherwise each test prints
//! why it skipped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use kernlens_trace::Options;

/// The oracle (made by fixtures/traces/expected/reference.py) agrees exactly on every
/// public trace: seven TraceLens traces and one HTA trace.
#[test]
fn every_public_trace_matches_the_independent_oracle() {
    let Some(public) = PublicTraces::get("every_public_trace_matches_the_independent_oracle")
    else {
        return;
    };
    let checked = check_oracle_dir(&fixture("expected/public"), public.dir());
    assert!(checked >= 8, "only {checked} oracle files were checked");
}

fn tracelens_timeline(public: &PublicTraces, name: &str) -> std::collections::HashMap<String, f64> {
    let text = std::fs::read_to_string(public.path(&format!("{name}__gpu_timeline.csv"))).unwrap();
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let mut f = l.split(',');
            Some((f.next()?.to_string(), f.next()?.parse().ok()?))
        })
        .collect()
}

/// Where TraceLens's definitions agree with ours (every kernel linked, memsets absent),
/// the timelines agree to TraceLens's float precision.
#[test]
fn busy_and_idle_agree_with_tracelens_where_definitions_agree() {
    let Some(public) =
        PublicTraces::get("busy_and_idle_agree_with_tracelens_where_definitions_agree")
    else {
        return;
    };
    for (trace, csv) in [
        (
            "tracelens_mi300__gaunernst_bert-small-uncased__1016001",
            "tracelens_mi300__gaunernst_bert-small-uncased__1016001",
        ),
        (
            "tracelens_inference__sglang_decode__sglang_Qwen3-8B_decode",
            "tracelens_inference__sglang_decode",
        ),
        (
            "tracelens_inference__vllm_prefilldecode_piecewise__graph_execution",
            "tracelens_inference__vllm_prefilldecode_piecewise",
        ),
    ] {
        let a = analyze_path(&public.path(&format!("{trace}.json.gz")), &all_rows());
        let tl = tracelens_timeline(public, csv);
        let t = &a.timeline;
        let ms = |us: f64| us / 1000.0;
        for (mine, key) in [
            (ms(t.total_us), "total_time"),
            (ms(t.busy_us), "busy_time"),
            (ms(t.idle_us), "idle_time"),
            (ms(t.categories.computation_us), "computation_time"),
            (
                ms(t.categories.exposed_communication_us),
                "exposed_comm_time",
            ),
            (ms(t.categories.memcpy_us), "exposed_memcpy_time"),
        ] {
            assert!(
                (mine - tl[key]).abs() < 1e-4,
                "{trace} {key}: ours {mine} ms, TraceLens {} ms",
                tl[key]
            );
        }
    }
}

/// The Qwen traces hold kernels no CPU op launched (436 on H100, 463 on MI300X).
/// TraceLens leaves them out of its timeline (SOURCES.md), so its busy and total are
/// smaller; ours count them, which is what the GPU actually did.
#[test]
fn tracelens_drops_unlinked_kernels_and_we_do_not() {
    let Some(public) = PublicTraces::get("tracelens_drops_unlinked_kernels_and_we_do_not") else {
        return;
    };
    for (name, unlinked) in [
        ("tracelens_h100__Qwen_Qwen1.5-0.5B-Chat__1016005", 436),
        ("tracelens_mi300__Qwen_Qwen1.5-0.5B-Chat__1016005", 463),
    ] {
        let a = analyze_path(&public.path(&format!("{name}.json.gz")), &all_rows());
        let tl = tracelens_timeline(public, name);
        assert_eq!(a.attribution.unlinked_kernels, unlinked);
        assert!(a.timeline.busy_us / 1000.0 > tl["busy_time"]);
        assert!(a.timeline.total_us / 1000.0 > tl["total_time"]);
    }
}

/// The 8-GPU DDP ResNet rank on MI300X (RCCL kernels): communication dominates, the
/// categories add up to the wall span exactly, and the one device of this rank is listed.
#[test]
fn rccl_training_rank_categories_and_device() {
    let Some(public) = PublicTraces::get("rccl_training_rank_categories_and_device") else {
        return;
    };
    let a = analyze_path(
        &public.path("tracelens_mi300__resnet_act_checkpoint.json.gz"),
        &all_rows(),
    );
    let t = &a.timeline;
    let c = &t.categories;
    assert_eq!(
        categories_tuple(c),
        (25739.303, 71516.523, 55625.224, 2637.529, 2565.652)
    );
    let ns = |us: f64| (us * 1000.0).round() as i64;
    assert_eq!(
        ns(c.computation_us) + ns(c.exposed_communication_us) + ns(c.memcpy_us) + ns(c.idle_us),
        t.total_ns
    );
    assert_eq!(t.per_device.len(), 1);
    assert_eq!(
        (t.per_device[0].device, t.per_device[0].kernel_count),
        (Some(2), 2995)
    );
    assert_eq!(t.per_device[0].busy_us, t.busy_us);
}

/// All-ranks over a directory built from real public traces (one rank each).
#[test]
fn all_ranks_over_real_public_traces() {
    let Some(public) = PublicTraces::get("all_ranks_over_real_public_traces") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (rank, name) in [
        (0, "tracelens_mi300__resnet_act_checkpoint.json.gz"),
        (1, "tracelens_h100__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"),
        (2, "hta__a100_graph__rank0.json.gz"),
    ] {
        std::fs::copy(
            public.path(name),
            dir.path().join(format!("trace_rank{rank}.json.gz")),
        )
        .unwrap();
    }
    let r = kernlens_trace::analyze_all_ranks(dir.path(), &Options::default()).unwrap();
    assert_eq!(r.ranks.len(), 3);
    let busy: Vec<f64> = r
        .ranks
        .iter()
        .map(|e| e.result.as_ref().unwrap().timeline.busy_pct)
        .collect();
    let s = r.spread.unwrap();
    let max = busy.iter().cloned().fold(f64::MIN, f64::max);
    let min = busy.iter().cloned().fold(f64::MAX, f64::min);
    assert_eq!((s.min, s.max), (min, max));
    let mut sorted = busy.clone();
    sorted.sort_by(f64::total_cmp);
    assert_eq!(s.median, sorted[1]);
}
