//! All-ranks mode (trace.md §4.3, §18 scenario 61).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use kernlens_trace::{Options, analyze_all_ranks};

#[test]
fn two_real_ranks_and_their_spread() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(shared("eager.json.gz"), dir.path().join("rank_0.json.gz")).unwrap();
    std::fs::copy(shared("graph.json.gz"), dir.path().join("rank_1.json.gz")).unwrap();
    let r = analyze_all_ranks(dir.path(), &Options::default()).unwrap();
    assert_eq!(r.ranks.len(), 2);
    assert_eq!(
        r.ranks.iter().map(|e| e.rank).collect::<Vec<_>>(),
        vec![Some(0), Some(1)]
    );
    let s = r.spread.clone().unwrap();
    assert!((s.min - 25.783).abs() < 1e-3 && s.min_rank == Some(0));
    assert!((s.max - 93.557).abs() < 1e-3 && s.max_rank == Some(1));
    assert!((s.median - 59.670).abs() < 1e-3);
    let doc = r.to_json();
    assert_eq!(doc["schema"], "kernlens.ranks/1");
    assert_eq!(doc["ranks"][1]["analyzed_rank"], 1);
    assert_eq!(doc["failed"].as_array().unwrap().len(), 0);
}

fn busy_trace(busy: f64) -> Vec<u8> {
    trace(&[kernel("k", 0.0, busy, None), kernel("end", 99.0, 1.0, None)])
}

#[test]
fn median_and_extremes_of_three_ranks() {
    let dir = tempfile::tempdir().unwrap();
    for (rank, busy) in [(0, 49.0), (1, 19.0), (2, 79.0)] {
        std::fs::write(
            dir.path().join(format!("trace_rank{rank}.json")),
            busy_trace(busy),
        )
        .unwrap();
    }
    // A merged file and a capture sidecar are not ranks.
    std::fs::write(dir.path().join("merged-all_rank9.json"), busy_trace(1.0)).unwrap();
    std::fs::create_dir(dir.path().join("capture_traces")).unwrap();
    std::fs::write(
        dir.path().join("capture_traces/bs_1_rank5.json"),
        busy_trace(1.0),
    )
    .unwrap();
    let r = analyze_all_ranks(dir.path(), &Options::default()).unwrap();
    assert_eq!(r.ranks.len(), 3);
    let s = r.spread.unwrap();
    assert_eq!((s.median, s.min_rank, s.max_rank), (50.0, Some(1), Some(2)));
}

#[test]
fn a_dangling_rank_link_is_not_a_rank() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rank_0.json"), busy_trace(49.0)).unwrap();
    let bad = dir.path().join("rank_1.json");
    std::fs::write(&bad, busy_trace(9.0)).unwrap();
    std::fs::remove_file(&bad).unwrap();
    std::os::unix::fs::symlink(dir.path().join("missing.json"), &bad).unwrap();
    let r = analyze_all_ranks(dir.path(), &Options::default()).unwrap();
    // The dangling link is not a regular file, so only rank 0 remains.
    assert_eq!(r.ranks.len(), 1);
    assert_eq!(r.spread.unwrap().median, 50.0);
}
