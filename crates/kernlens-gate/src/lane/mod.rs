//! The lane idle guard (gate.md "Lane idle guard"): winds down a work lane that keeps
//! "working" without making progress.
//!
//! A pure state machine. The coordinator owns a [`LaneIdleState`], calls
//! [`scan`] with what it sees and a [`Clock`], and asks [`wind_down`] whether
//! to leave the phase. Nothing here sleeps, reads the environment or keeps
//! global state.

mod clock;
mod config;
mod fingerprint;
mod guard;
mod task;

pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{
    DEFAULT_HEARTBEAT_STALE_SECONDS, DEFAULT_LANE_KINDS, DEFAULT_MAX_TICKS, DEFAULT_MIN_SECONDS,
    HEARTBEAT_SECONDS, IDLE_MAX_TICKS_ENV, IDLE_MIN_SECONDS_ENV, LaneIdleConfig,
};
pub use fingerprint::{ProgressSnapshot, fingerprint};
pub use guard::{
    IdleEvidence, LaneHint, LaneIdleState, ScanInput, ScanOutcome, WindDown, WindDownEvidence,
    WindDownReason, scan, wind_down,
};
pub use task::{TaskStatus, TaskView, in_flight_ids, inline_step_running};
