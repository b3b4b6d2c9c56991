//! The lane idle guard (gate.md "Lane idle guard"; scenarios 21–35), driven by a ManualClock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use kernlens_gate::lane::{
    Clock, LaneHint, LaneIdleConfig, LaneIdleState, ManualClock, ProgressSnapshot, ScanInput,
    ScanOutcome, TaskStatus, TaskView, WindDown, WindDownEvidence, fingerprint, in_flight_ids,
    inline_step_running, scan, wind_down,
};
use serde_json::json;

const T0: f64 = 1_750_000_000.0;

/// One ledger attempt record in the recommended kernel-lane layout.
fn attempt(ledger_id: &str, last_decision: &str) -> Vec<String> {
    [
        ledger_id,
        "k_gemm",
        "0",
        "pending",
        last_decision,
        "src/gemm.py",
        "running",
        "",
        "tg001",
    ]
    .iter()
    .map(|field| (*field).to_owned())
    .collect()
}

/// The fixture lane: three ledger attempts that never change, whose work is
/// always "pending".
fn fixture_lane() -> ProgressSnapshot {
    let fields: BTreeMap<String, String> = [
        ("best_artifact_path", "out/best.py"),
        ("decision", "KEEP"),
        ("kernel_id", "k_gemm"),
        ("task_group_key", "tg001"),
        ("ts", "1749999000"),
        ("pending_integration_keys", "tg001,tg002"),
    ]
    .iter()
    .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
    .collect();
    ProgressSnapshot::new(
        vec![
            attempt("a1", "KEEP"),
            attempt("a2", "RETRY"),
            attempt("a3", "KEEP"),
        ],
        fields,
    )
}

/// A coordinator's view of the lane: the progress it snapshots plus a
/// measurement that must not count as progress.
#[derive(Debug, PartialEq)]
struct LaneHost {
    last_decisions: [&'static str; 3],
    last_speedup: f64,
}

impl Default for LaneHost {
    fn default() -> Self {
        LaneHost {
            last_decisions: ["KEEP", "RETRY", "KEEP"],
            last_speedup: 1.02,
        }
    }
}

impl LaneHost {
    fn snapshot(&self) -> ProgressSnapshot {
        let mut lane = fixture_lane();
        for (record, decision) in lane.records.iter_mut().zip(self.last_decisions) {
            record[4] = decision.to_owned();
        }
        lane
    }
}

fn config() -> LaneIdleConfig {
    LaneIdleConfig::default()
}

fn lookup<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |name| {
        pairs
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| (*value).to_owned())
    }
}

fn scan_lane(
    state: &mut LaneIdleState,
    tasks: &[TaskView],
    stamp: f64,
    progress: &ProgressSnapshot,
    clock: &ManualClock,
) -> ScanOutcome {
    let input = ScanInput::new(true, tasks, stamp, progress);
    scan(state, &input, &config(), clock)
}

fn idle_wind_down(state: &LaneIdleState, now: f64, pending: bool) -> Option<WindDown> {
    wind_down(state, &config(), now, None, pending)
}

// --- gate.md "Lane idle guard: `wind_down(&state, &config, now, hint, work_pending) -> Option<WindDown>`" wind_down (scenarios 21–24) ---

#[test]
fn three_idle_ticks_over_600_seconds_wind_down_with_the_numbers() {
    let state = LaneIdleState::from_parts(3, "fp", T0 - 600.0);
    let down = idle_wind_down(&state, T0, true).unwrap();
    assert_eq!(down.evidence, WindDownEvidence::KernelIdleNoProgress);
    assert_eq!(
        serde_json::to_value(down).unwrap(),
        json!({"reason":"kernel_no_more_leverage","evidence":"kernel_idle_no_progress",
               "idle_ticks":3,"idle_max_ticks":3,"idle_seconds":600.0,"idle_min_seconds":600.0})
    );
}

#[test]
fn wind_down_needs_both_ticks_and_seconds_and_a_set_since() {
    for (ticks, since) in [(2, T0 - 600.0), (300, T0 - 599.0), (3, 0.0), (3, f64::NAN)] {
        let state = LaneIdleState::from_parts(ticks, "fp", since);
        assert_eq!(
            idle_wind_down(&state, T0, false),
            None,
            "ticks {ticks} since {since}"
        );
    }
}

#[test]
fn pending_work_does_not_keep_an_idle_lane_alive() {
    let state = LaneIdleState::from_parts(8, "fp", T0 - 600.0);
    let down = idle_wind_down(&state, T0, true).unwrap();
    assert_eq!(down.evidence, WindDownEvidence::KernelIdleNoProgress);
}

#[test]
fn skip_hint_winds_down_only_without_pending_work() {
    let state = LaneIdleState::from_parts(0, "fp", T0);
    let hint = Some(LaneHint::SkipToSweep);
    let down = wind_down(&state, &config(), T0, hint, false).unwrap();
    assert_eq!(down.evidence, WindDownEvidence::KernelNoMoreLeverage);
    assert_eq!(
        serde_json::to_value(down).unwrap(),
        json!({"reason":"kernel_no_more_leverage","evidence":"kernel_no_more_leverage",
               "hint":"skip_to_sweep"})
    );
    assert_eq!(wind_down(&state, &config(), T0, hint, true), None);
}

// --- gate.md "Lane idle guard: Configuration" configuration (scenario 25) ---

#[test]
fn config_from_lookup_validates_ticks_and_seconds() {
    let max_ticks = |raw: &str| {
        LaneIdleConfig::from_lookup(lookup(&[("KERNLENS_IDLE_MAX_TICKS", raw)])).max_ticks
    };
    let min_seconds = |raw: &str| {
        LaneIdleConfig::from_lookup(lookup(&[("KERNLENS_IDLE_MIN_SECONDS", raw)])).min_seconds
    };
    let unset = LaneIdleConfig::from_lookup(|_| None);
    assert_eq!((unset.max_ticks, unset.min_seconds), (3, 600.0));
    assert_eq!(max_ticks("5"), 5);
    assert_eq!(max_ticks("0"), 3);
    assert_eq!(max_ticks("xx"), 3);
    assert_eq!(max_ticks("-2"), 3);
    assert_eq!(min_seconds("90"), 90.0);
    assert_eq!(min_seconds("0"), 600.0);
    assert_eq!(min_seconds("xx"), 600.0);
    assert_eq!(min_seconds("inf"), 600.0);
    assert_eq!(unset.heartbeat_stale_seconds, 450.0);
}

// --- gate.md "Lane idle guard: `scan(&mut state, &input, &config, &clock) -> ScanOutcome`" scan, end to end (scenarios 26–33) ---

#[test]
fn idle_lane_winds_down_only_after_ticks_and_seconds() {
    let clock = ManualClock::new(T0);
    let lane = fixture_lane();
    let mut state = LaneIdleState::default();

    assert_eq!(
        scan_lane(&mut state, &[], 0.0, &lane, &clock),
        ScanOutcome::Progress
    );
    assert_eq!((state.ticks(), state.since_unix()), (0, T0));
    for expected in 1..=3 {
        assert_eq!(
            scan_lane(&mut state, &[], 0.0, &lane, &clock),
            ScanOutcome::Idle { ticks: expected }
        );
    }
    assert_eq!(state.ticks(), 3);
    assert_eq!(
        idle_wind_down(&state, clock.now_unix(), true),
        None,
        "0 s have passed"
    );

    clock.advance(601.0);
    assert_eq!(
        scan_lane(&mut state, &[], 0.0, &lane, &clock),
        ScanOutcome::Idle { ticks: 4 }
    );
    let down = idle_wind_down(&state, clock.now_unix(), true).unwrap();
    assert_eq!(down.evidence, WindDownEvidence::KernelIdleNoProgress);
    assert_eq!(down.idle.unwrap().idle_seconds, 601.0);
}

/// 60 scans with the clock jumping 6000 s after each: the guard must stay frozen.
fn assert_never_winds_down(tasks: &[TaskView], stamp_age: Option<f64>) -> LaneIdleState {
    let clock = ManualClock::new(T0);
    let lane = fixture_lane();
    let mut state = LaneIdleState::default();
    for round in 0..60 {
        let stamp = stamp_age.map_or(0.0, |age| clock.now_unix() - age);
        let outcome = scan_lane(&mut state, tasks, stamp, &lane, &clock);
        if round > 0 {
            assert_eq!(outcome, ScanOutcome::Frozen, "round {round}");
        }
        assert_eq!(
            idle_wind_down(&state, clock.now_unix(), true),
            None,
            "round {round}"
        );
        assert_eq!(state.ticks(), 0);
        clock.advance(6000.0);
        assert_eq!(
            idle_wind_down(&state, clock.now_unix(), true),
            None,
            "round {round}"
        );
    }
    state
}

#[test]
fn running_lane_task_freezes_the_guard() {
    assert_never_winds_down(
        &[TaskView::new("t1", "kernel_opt", TaskStatus::Running)],
        None,
    );
}

#[test]
fn queued_lane_task_freezes_the_guard() {
    assert_never_winds_down(
        &[TaskView::new("t2", "integrate", TaskStatus::Queued)],
        None,
    );
}

#[test]
fn fresh_inline_step_heartbeat_freezes_the_guard() {
    assert_never_winds_down(&[], Some(0.0));
    assert!(in_flight_ids(&[], &config().lane_kinds).is_empty());
}

#[test]
fn stale_inline_step_heartbeat_does_not_mute_the_guard() {
    let clock = ManualClock::new(T0);
    let lane = fixture_lane();
    let mut state = LaneIdleState::default();
    let stale = |clock: &ManualClock| clock.now_unix() - 451.0;
    scan_lane(&mut state, &[], stale(&clock), &lane, &clock);
    for _ in 0..3 {
        scan_lane(&mut state, &[], stale(&clock), &lane, &clock);
    }
    clock.advance(601.0);
    let down = idle_wind_down(&state, clock.now_unix(), true).unwrap();
    assert_eq!(down.evidence, WindDownEvidence::KernelIdleNoProgress);
}

#[test]
fn tasks_of_other_kinds_or_finished_do_not_freeze_the_guard() {
    let clock = ManualClock::new(T0);
    let lane = fixture_lane();
    let tasks = [
        TaskView::new("t1", "sweep", TaskStatus::Running),
        TaskView::new("t2", "kernel_opt", TaskStatus::Succeeded),
        TaskView::new("t3", "kernel_opt", TaskStatus::Failed),
        TaskView::new("t4", "kernel_opt", TaskStatus::Cancelled),
    ];
    let mut state = LaneIdleState::default();
    scan_lane(&mut state, &tasks, 0.0, &lane, &clock);
    assert_eq!(
        scan_lane(&mut state, &tasks, 0.0, &lane, &clock),
        ScanOutcome::Idle { ticks: 1 }
    );
}

#[test]
fn inline_step_stamp_boundaries() {
    let now = T0;
    let stale = config().heartbeat_stale_seconds;
    for stamp in [
        0.0,
        -5.0,
        f64::NAN,
        f64::INFINITY,
        now + 10.0,
        now - 450.001,
    ] {
        assert!(!inline_step_running(stamp, now, stale), "stamp {stamp}");
    }
    assert!(inline_step_running(now - 450.0, now, stale));
    assert!(inline_step_running(now, now, stale));
}

#[test]
fn progress_after_idle_ticks_restarts_the_count() {
    let clock = ManualClock::new(T0);
    let mut lane = fixture_lane();
    let mut state = LaneIdleState::default();
    for _ in 0..4 {
        scan_lane(&mut state, &[], 0.0, &lane, &clock);
    }
    assert_eq!(state.ticks(), 3);
    lane.records[1][4] = "REVERT".to_owned();
    clock.advance(601.0);
    assert_eq!(
        scan_lane(&mut state, &[], 0.0, &lane, &clock),
        ScanOutcome::Progress
    );
    assert_eq!((state.ticks(), state.since_unix()), (0, T0 + 601.0));
    assert_eq!(idle_wind_down(&state, clock.now_unix(), true), None);
}

#[test]
fn leaving_the_phase_resets_the_state() {
    let clock = ManualClock::new(T0);
    let lane = fixture_lane();
    let mut state = LaneIdleState::from_parts(9, "stale", 1.0);
    let input = ScanInput::new(false, &[], 0.0, &lane);
    assert_eq!(
        scan(&mut state, &input, &config(), &clock),
        ScanOutcome::OutsidePhase
    );
    assert_eq!(state, LaneIdleState::from_parts(0, "", 0.0));
    assert_eq!(state, LaneIdleState::default());
}

#[test]
fn new_in_flight_task_counts_as_progress_then_freezes() {
    let clock = ManualClock::new(T0);
    let lane = fixture_lane();
    let mut state = LaneIdleState::default();
    scan_lane(&mut state, &[], 0.0, &lane, &clock);
    scan_lane(&mut state, &[], 0.0, &lane, &clock);
    let tasks = [TaskView::new("t9", "roofline", TaskStatus::Queued)];
    clock.advance(10.0);
    assert_eq!(
        scan_lane(&mut state, &tasks, 0.0, &lane, &clock),
        ScanOutcome::Progress
    );
    assert_eq!(
        scan_lane(&mut state, &tasks, 0.0, &lane, &clock),
        ScanOutcome::Frozen
    );
    assert_eq!(state.ticks(), 0);
}

// --- gate.md "Lane idle guard: Progress fingerprint" fingerprint (scenario 34) ---

#[test]
fn fingerprint_ignores_data_outside_the_snapshot_and_order() {
    let lane = fixture_lane();
    let ids = ["t2".to_owned(), "t1".to_owned()];
    let base = fingerprint(&lane, &ids);
    assert_eq!(base.len(), 32);
    assert!(
        base.chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    );

    // A host's lane state carries a last speedup beside the snapshot fields;
    // the snapshot it builds leaves measurements out, so the digest holds.
    let faster = LaneHost {
        last_speedup: 1.37,
        ..LaneHost::default()
    };
    assert_ne!(faster, LaneHost::default());
    assert_eq!(fingerprint(&faster.snapshot(), &ids), base);
    assert_eq!(fingerprint(&LaneHost::default().snapshot(), &ids), base);

    let mut changed = fixture_lane();
    changed.records[0][4] = "REVERT".to_owned();
    assert_ne!(fingerprint(&changed, &ids), base);

    let more_ids = ["t1".to_owned(), "t2".to_owned(), "t3".to_owned()];
    assert_ne!(fingerprint(&lane, &more_ids), base);

    let mut reordered = fixture_lane();
    reordered.records.reverse();
    let swapped_ids = ["t1".to_owned(), "t2".to_owned()];
    assert_eq!(fingerprint(&reordered, &swapped_ids), base);
}

#[test]
fn fingerprint_is_sha256_of_the_canonical_json() {
    // Digest of `{"fields":{},"in_flight":[],"records":[]}`, computed independently
    // with `printf '%s' '{"fields":{},"in_flight":[],"records":[]}' | sha256sum`.
    let empty = fingerprint::<String>(&ProgressSnapshot::default(), &[]);
    assert_eq!(empty, EMPTY_DIGEST_PREFIX);
}

const EMPTY_DIGEST_PREFIX: &str = include_str!("fixtures/empty_fingerprint.txt");

// --- lane kinds (scenario 35) ---

#[test]
fn specialist_tasks_are_lane_work_while_in_flight() {
    let kinds = config().lane_kinds;
    assert!(kinds.iter().any(|kind| kind == "specialist"));
    let tasks = [
        TaskView::new("s2", "specialist", TaskStatus::Queued),
        TaskView::new("s1", "specialist", TaskStatus::Running),
        TaskView::new("s3", "specialist", TaskStatus::Succeeded),
        TaskView::new("s1", "specialist", TaskStatus::Running),
    ];
    assert_eq!(in_flight_ids(&tasks, &kinds), ["s1", "s2"]);
}

mod laws {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Record order and id order never change the digest.
        #[test]
        fn fingerprint_is_order_independent(
            records in proptest::collection::vec(proptest::collection::vec("[a-z]{0,3}", 0..4), 0..6),
            ids in proptest::collection::vec("[a-z0-9]{1,4}", 0..6),
            seed in any::<u64>(),
        ) {
            let snapshot = ProgressSnapshot::new(records.clone(), BTreeMap::new());
            let mut shuffled_records = records;
            let mut shuffled_ids = ids.clone();
            let len = shuffled_records.len();
            shuffled_records.rotate_left((seed as usize) % len.max(1) % (len + 1));
            shuffled_ids.reverse();
            let shuffled = ProgressSnapshot::new(shuffled_records, BTreeMap::new());
            prop_assert_eq!(fingerprint(&snapshot, &ids), fingerprint(&shuffled, &shuffled_ids));
        }

        /// However often the coordinator scans, an unchanged lane never winds
        /// down before `min_seconds` have passed since idle time began.
        #[test]
        fn scan_frequency_cannot_shorten_the_seconds_floor(scans in 1usize..50, step in 0.0f64..20.0) {
            let clock = ManualClock::new(T0);
            let lane = fixture_lane();
            let mut state = LaneIdleState::default();
            scan_lane(&mut state, &[], 0.0, &lane, &clock);
            for _ in 0..scans {
                clock.advance(step);
                scan_lane(&mut state, &[], 0.0, &lane, &clock);
                let down = idle_wind_down(&state, clock.now_unix(), true);
                prop_assert_eq!(down.is_some(), state.ticks() >= 3 && clock.now_unix() - T0 >= 600.0);
            }
        }
    }
}
