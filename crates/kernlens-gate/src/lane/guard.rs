//! The guard's state machine: `scan` records what happened, `wind_down`
//! decides whether to leave the phase.

use serde::Serialize;

use super::clock::Clock;
use super::config::LaneIdleConfig;
use super::fingerprint::{ProgressSnapshot, fingerprint};
use super::task::{TaskView, in_flight_ids, inline_step_running};

/// The guard's memory between scans. It belongs to the coordinator; hosts
/// must not expose it to agent-writable state, or an agent could reset its
/// own idle count.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct LaneIdleState {
    ticks: u32,
    fingerprint: String,
    since_unix: f64,
}

impl LaneIdleState {
    /// Restore persisted state. `since_unix` 0.0 means unset.
    pub fn from_parts(ticks: u32, fingerprint: impl Into<String>, since_unix: f64) -> Self {
        LaneIdleState {
            ticks,
            fingerprint: fingerprint.into(),
            since_unix,
        }
    }

    /// Idle scans since the last progress.
    pub fn ticks(&self) -> u32 {
        self.ticks
    }

    /// Fingerprint of the last progress seen ("" before the first scan).
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// When idle time started counting (0.0 = unset).
    pub fn since_unix(&self) -> f64 {
        self.since_unix
    }
}

/// What one scan sees.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ScanInput<'a> {
    /// Whether the coordinator is in the lane's phase.
    pub in_lane_phase: bool,
    /// All tasks the coordinator knows of; the guard filters by lane kind.
    pub tasks: &'a [TaskView],
    /// Heartbeat stamp of a running inline step; 0 when none runs.
    pub inline_step_stamp_unix: f64,
    /// The lane's progress as of now.
    pub progress: &'a ProgressSnapshot,
}

impl<'a> ScanInput<'a> {
    /// A scan input from its parts.
    pub fn new(
        in_lane_phase: bool,
        tasks: &'a [TaskView],
        inline_step_stamp_unix: f64,
        progress: &'a ProgressSnapshot,
    ) -> Self {
        ScanInput {
            in_lane_phase,
            tasks,
            inline_step_stamp_unix,
            progress,
        }
    }
}

/// What a scan concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
#[non_exhaustive]
pub enum ScanOutcome {
    /// Not in the lane phase; the state was reset.
    OutsidePhase,
    /// The fingerprint changed; idle counting restarted.
    Progress,
    /// Lane work is queued or running, or an inline step is alive; the idle
    /// clock was rebased and the tick count left alone.
    Frozen,
    /// Nothing moved; `ticks` is the new idle count.
    Idle {
        /// Idle scans since the last progress.
        ticks: u32,
    },
}

/// A hint from the lane's own planner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LaneHint {
    /// The planner sees no more leverage in the lane.
    SkipToSweep,
}

/// Why the lane is left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WindDownReason {
    /// The lane can no longer move the workload.
    KernelNoMoreLeverage,
}

/// Which rule fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WindDownEvidence {
    /// The planner's skip hint, with no work pending.
    KernelNoMoreLeverage,
    /// Enough idle scans over enough seconds without progress.
    KernelIdleNoProgress,
}

/// The numbers behind an idle wind-down.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[non_exhaustive]
pub struct IdleEvidence {
    /// Idle scans counted.
    pub idle_ticks: u32,
    /// The configured tick floor.
    pub idle_max_ticks: u32,
    /// Seconds since idle time started counting, unrounded.
    pub idle_seconds: f64,
    /// The configured seconds floor.
    pub idle_min_seconds: f64,
}

/// A decision to leave the lane phase; the caller records `reason` and
/// `evidence` in its phase history.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[non_exhaustive]
pub struct WindDown {
    /// Why the lane is left.
    pub reason: WindDownReason,
    /// Which rule fired.
    pub evidence: WindDownEvidence,
    /// The hint that fired the rule, for the hint form.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<LaneHint>,
    /// The idle numbers, for the idle form.
    #[serde(flatten)]
    pub idle: Option<IdleEvidence>,
}

/// Record one look at the lane (gate.md "Lane idle guard: `scan(&mut state, &input, &config, &clock) -> ScanOutcome`").
///
/// Outside the phase the state resets. A changed fingerprint is progress and
/// restarts the count. Queued or running lane work, or a fresh inline-step
/// heartbeat, freezes the count and rebases the idle clock, so waiting on
/// real work never builds idle time. Otherwise the idle count goes up by one.
pub fn scan(
    state: &mut LaneIdleState,
    input: &ScanInput<'_>,
    config: &LaneIdleConfig,
    clock: &dyn Clock,
) -> ScanOutcome {
    if !input.in_lane_phase {
        *state = LaneIdleState::default();
        return ScanOutcome::OutsidePhase;
    }
    let now = clock.now_unix();
    let in_flight = in_flight_ids(input.tasks, &config.lane_kinds);
    let digest = fingerprint(input.progress, &in_flight);
    if digest != state.fingerprint {
        state.fingerprint = digest;
        state.ticks = 0;
        state.since_unix = now;
        return ScanOutcome::Progress;
    }
    if !in_flight.is_empty()
        || inline_step_running(
            input.inline_step_stamp_unix,
            now,
            config.heartbeat_stale_seconds,
        )
    {
        state.since_unix = now;
        return ScanOutcome::Frozen;
    }
    state.ticks = state.ticks.saturating_add(1);
    ScanOutcome::Idle { ticks: state.ticks }
}

/// Whether to leave the lane phase now (gate.md "Lane idle guard: `wind_down(&state, &config, now, hint, work_pending) -> Option<WindDown>`").
///
/// The planner's `SkipToSweep` hint winds down when no work is pending.
/// Otherwise the guard winds down after at least `max_ticks` idle scans over
/// at least `min_seconds`. `work_pending` plays no part in that second rule on
/// purpose: pending work that never progresses is the failure it exists for.
pub fn wind_down(
    state: &LaneIdleState,
    config: &LaneIdleConfig,
    now: f64,
    hint: Option<LaneHint>,
    work_pending: bool,
) -> Option<WindDown> {
    if hint == Some(LaneHint::SkipToSweep) && !work_pending {
        return Some(WindDown {
            reason: WindDownReason::KernelNoMoreLeverage,
            evidence: WindDownEvidence::KernelNoMoreLeverage,
            hint: Some(LaneHint::SkipToSweep),
            idle: None,
        });
    }
    let since = if state.since_unix.is_finite() && state.since_unix > 0.0 {
        state.since_unix
    } else {
        0.0
    };
    let idle_seconds = now - since;
    if state.ticks >= config.max_ticks && since > 0.0 && idle_seconds >= config.min_seconds {
        return Some(WindDown {
            reason: WindDownReason::KernelNoMoreLeverage,
            evidence: WindDownEvidence::KernelIdleNoProgress,
            hint: None,
            idle: Some(IdleEvidence {
                idle_ticks: state.ticks,
                idle_max_ticks: config.max_ticks,
                idle_seconds,
                idle_min_seconds: config.min_seconds,
            }),
        });
    }
    None
}
