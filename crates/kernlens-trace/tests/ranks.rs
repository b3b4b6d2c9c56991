//! All-ranks mode (trace.md "All-ranks mode", trace.md "Acceptance scenarios" scenario 61).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use kernlens_trace::{Cycles, Options, TraceSource, analyze, analyze_all_ranks};
use serde_json::Value;

#[test]
fn two_real_ranks_and_their_spread() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("eager.json.gz"), dir.path().join("rank_0.json.gz")).unwrap();
    std::fs::copy(fixture("graph.json.gz"), dir.path().join("rank_1.json.gz")).unwrap();
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

/// The failed entries of a report as (rank, file name, error text).
fn failed(r: &kernlens_trace::RankReport) -> Vec<(Option<u64>, String, String)> {
    r.ranks
        .iter()
        .filter_map(|e| {
            let name = std::path::Path::new(&e.trace_file)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            e.result
                .as_ref()
                .err()
                .map(|err| (e.rank, name, err.to_string()))
        })
        .collect()
}

#[test]
fn a_rank_file_without_a_trace_array_is_failed_not_a_zero_busy_rank() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rank_0.json"), busy_trace(49.0)).unwrap();
    std::fs::write(dir.path().join("rank_1.json"), busy_trace(79.0)).unwrap();
    // Valid JSON, but no trace: before the fix this was a 0%-busy rank 2, the spread's min.
    std::fs::write(dir.path().join("rank_2.json"), br#"{"schemaVersion": 1}"#).unwrap();
    std::fs::write(dir.path().join("rank_3.json"), br#"{"traceEvents": 5}"#).unwrap();
    let r = analyze_all_ranks(dir.path(), &Options::default()).unwrap();
    assert_eq!(r.ranks.len(), 4);
    let f = failed(&r);
    assert_eq!(f.len(), 2);
    assert_eq!((f[0].0, f[0].1.as_str()), (Some(2), "rank_2.json"));
    assert_eq!(f[0].2, "not a Kineto trace (no traceEvents array)");
    assert!(
        f[1].2.contains("traceEvents value is not an array"),
        "{}",
        f[1].2
    );
    let s = r.spread.clone().unwrap();
    assert_eq!(
        (s.min, s.min_rank, s.max, s.max_rank),
        (50.0, Some(0), 80.0, Some(1))
    );
    assert_eq!(s.median, 65.0);
    let doc = r.to_json();
    assert_eq!(doc["ranks"].as_array().unwrap().len(), 2);
    assert_eq!(doc["failed"][0]["rank"], 2);
    assert_eq!(doc["failed"][1]["rank"], 3);
}

#[test]
fn a_rank_whose_array_holds_no_gpu_event_is_failed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rank_0.json"), busy_trace(49.0)).unwrap();
    std::fs::write(
        dir.path().join("rank_1.json"),
        trace(&[cpu_op("aten::mm", 1)]),
    )
    .unwrap();
    std::fs::write(dir.path().join("rank_2.json"), trace(&[])).unwrap();
    let r = analyze_all_ranks(dir.path(), &Options::default()).unwrap();
    let f = failed(&r);
    assert_eq!(
        f.iter().map(|x| x.0).collect::<Vec<_>>(),
        [Some(1), Some(2)]
    );
    assert!(f.iter().all(|x| x.2.contains("no GPU events")), "{f:?}");
    let s = r.spread.unwrap();
    assert_eq!((s.min, s.max, s.median), (50.0, 50.0, 50.0));
}

#[test]
fn a_rank_tag_too_large_for_a_number_is_failed_with_its_tag() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rank_0.json"), busy_trace(49.0)).unwrap();
    // One past u64::MAX: before the fix this file vanished from the report.
    let big = "trace_rank18446744073709551616.json";
    std::fs::write(dir.path().join(big), busy_trace(9.0)).unwrap();
    let r = analyze_all_ranks(dir.path(), &Options::default()).unwrap();
    assert_eq!(r.ranks.len(), 2);
    let f = failed(&r);
    assert_eq!(f.len(), 1);
    assert_eq!((f[0].0, f[0].1.as_str()), (None, big));
    assert!(
        f[0].2.contains("rank tag 'rank18446744073709551616'"),
        "{}",
        f[0].2
    );
    // The bad file is not analysed, so its 10% busy is nowhere in the spread.
    assert_eq!(r.spread.clone().unwrap().min, 50.0);
    let doc = r.to_json();
    assert_eq!(doc["failed"][0]["rank"], Value::Null);
    assert_eq!(doc["rank_count"], 2);
}

#[test]
fn only_unparseable_rank_tags_give_failed_entries_and_no_spread() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a_rank99999999999999999999.json"),
        busy_trace(49.0),
    )
    .unwrap();
    // An untagged file is not analysed in its place: the directory is a rank directory.
    std::fs::write(dir.path().join("other.json"), busy_trace(19.0)).unwrap();
    let r = analyze_all_ranks(dir.path(), &Options::default()).unwrap();
    assert_eq!(r.ranks.len(), 1);
    assert!(r.ranks[0].result.is_err());
    assert!(r.spread.is_none());
}

/// `tensorboard_trace_handler(repeat=2)` writes two files per rank: both are capture cycles
/// of that rank (fixtures/traces/memprof is a real two-cycle directory).
fn two_cycle_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(fixture("memprof")).unwrap().flatten() {
        std::fs::copy(f.path(), dir.path().join(f.file_name())).unwrap();
    }
    std::fs::copy(
        fixture("eager.json.gz"),
        dir.path()
            .join("rank1.1796150823700000000.pt.trace.json.gz"),
    )
    .unwrap();
    dir
}

const CYCLE_1: &str = "rank0.1796150823617749366.pt.trace.json.gz";
const CYCLE_2: &str = "rank0.1796150823868619307.pt.trace.json.gz";

#[test]
fn a_directory_of_several_capture_cycles_reads_the_latest_and_says_how_many() {
    let dir = two_cycle_dir();
    let source = TraceSource::open(dir.path()).unwrap();
    // The latest cycle of the lowest rank (it is the smaller file: size does not decide).
    assert!(source.file().ends_with(CYCLE_2), "{}", source.file());
    assert_eq!((source.cycles(), source.cycle()), (2, 2));
    let a = analyze(&source, &Options::default()).unwrap();
    let doc = a.to_json();
    assert_eq!(
        (doc["cycles"].as_u64(), doc["cycle"].as_u64()),
        (Some(2), Some(2))
    );

    let r = analyze_all_ranks(dir.path(), &Options::default()).unwrap();
    let files: Vec<(Option<u64>, String)> = r
        .ranks
        .iter()
        .map(|e| (e.rank, e.trace_file.rsplit('/').next().unwrap().to_string()))
        .collect();
    assert_eq!(
        files,
        [
            (Some(0), CYCLE_2.to_string()),
            (
                Some(1),
                "rank1.1796150823700000000.pt.trace.json.gz".to_string()
            )
        ]
    );
    let doc = r.to_json();
    assert_eq!(doc["cycle"], "latest");
    assert_eq!(doc["ranks"][0]["cycles"], 2);
    assert_eq!(doc["ranks"][1]["cycles"], 1);

    let all = analyze_all_ranks(dir.path(), &Options::default().with_cycles(Cycles::All)).unwrap();
    let cycles: Vec<(Option<u64>, usize, usize)> = all
        .ranks
        .iter()
        .map(|e| {
            let a = e.result.as_ref().unwrap();
            (e.rank, a.cycle, a.cycles)
        })
        .collect();
    assert_eq!(cycles, [(Some(0), 1, 2), (Some(0), 2, 2), (Some(1), 1, 1)]);
    assert!(all.ranks[0].trace_file.ends_with(CYCLE_1));
    assert_eq!(all.to_json()["cycle"], "all");
    // The two cycles are different captures.
    let busy = |i: usize| all.ranks[i].result.as_ref().unwrap().timeline.busy_us;
    assert_ne!(busy(0), busy(1));
}

#[test]
fn files_of_one_rank_without_capture_stamps_keep_the_old_choice() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rank_0_a.json"), busy_trace(49.0)).unwrap();
    std::fs::write(dir.path().join("rank_0_b.json"), busy_trace(79.0)).unwrap();
    let s = TraceSource::open(dir.path()).unwrap();
    // The smaller name, the first in capture (name) order.
    assert!(s.file().ends_with("rank_0_a.json"));
    assert_eq!((s.cycles(), s.cycle()), (2, 1));
    // All-ranks: the largest file, ties to the greater name.
    let r = analyze_all_ranks(dir.path(), &Options::default()).unwrap();
    assert_eq!(r.ranks.len(), 1);
    let a = std::fs::metadata(dir.path().join("rank_0_a.json"))
        .unwrap()
        .len();
    let b = std::fs::metadata(dir.path().join("rank_0_b.json"))
        .unwrap()
        .len();
    let want = if a > b {
        "rank_0_a.json"
    } else {
        "rank_0_b.json"
    };
    assert!(r.ranks[0].trace_file.ends_with(want));
}

/// The pieces a scheduler in other processes uses (plan, one read per file, outcomes through
/// serde, reduction) give the document `analyze_all_ranks` gives, failed ranks included.
#[test]
fn ranks_read_elsewhere_reduce_to_the_same_document() {
    use kernlens_trace::{RankFile, RankOutcome, plan_ranks, ranks_document};
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("eager.json.gz"), dir.path().join("rank_0.json.gz")).unwrap();
    std::fs::copy(fixture("graph.json.gz"), dir.path().join("rank_1.json.gz")).unwrap();
    std::fs::copy(
        fixture("compiled.json.gz"),
        dir.path().join("rank_2.json.gz"),
    )
    .unwrap();
    std::fs::write(dir.path().join("rank_3.json"), b"not a trace").unwrap();
    let opts = Options::default();
    let whole = analyze_all_ranks(dir.path(), &opts).unwrap().to_json();
    let plan = plan_ranks(dir.path(), opts.cycles).unwrap();
    let outcomes: Vec<RankOutcome> = plan
        .iter()
        .rev()
        .map(|file| {
            // Each file and outcome crosses a process boundary as JSON.
            let file: RankFile =
                serde_json::from_str(&serde_json::to_string(file).unwrap()).unwrap();
            file.analyze(&opts).outcome()
        })
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let input = dir.path().display().to_string();
    let reduced = ranks_document(&input, opts.cycles, &outcomes);
    assert_eq!(reduced["failed"].as_array().unwrap().len(), 1);
    assert_eq!(reduced, whole);
}
