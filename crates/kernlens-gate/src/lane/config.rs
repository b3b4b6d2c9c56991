//! Configuration of the lane idle guard.

use serde::Serialize;

/// Environment variable overriding [`LaneIdleConfig::max_ticks`].
pub const IDLE_MAX_TICKS_ENV: &str = "KERNLENS_IDLE_MAX_TICKS";
/// Environment variable overriding [`LaneIdleConfig::min_seconds`].
pub const IDLE_MIN_SECONDS_ENV: &str = "KERNLENS_IDLE_MIN_SECONDS";
/// Default number of idle scans before the guard may wind down.
pub const DEFAULT_MAX_TICKS: u32 = 3;
/// Default idle seconds before the guard may wind down.
pub const DEFAULT_MIN_SECONDS: f64 = 600.0;
/// How often callers refresh the inline-step stamp while a step runs.
pub const HEARTBEAT_SECONDS: f64 = 150.0;
/// Default age past which an inline-step stamp is stale: three missed beats.
pub const DEFAULT_HEARTBEAT_STALE_SECONDS: f64 = 3.0 * HEARTBEAT_SECONDS;
/// Task kinds that count as lane work by default. Orchestrators should filter
/// their allowed actions with this same list.
pub const DEFAULT_LANE_KINDS: &[&str] = &[
    "kernel_opt",
    "integrate",
    "gemm_tuning",
    "specialist",
    "roofline",
    "profile",
    "recover",
];

/// How patient the guard is, and which tasks count as lane work.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct LaneIdleConfig {
    /// Idle scans needed before winding down; at least 1.
    pub max_ticks: u32,
    /// Idle seconds needed before winding down; finite and > 0.
    pub min_seconds: f64,
    /// Age past which an inline-step stamp no longer freezes the guard.
    pub heartbeat_stale_seconds: f64,
    /// Task kinds whose queued or running tasks freeze the guard.
    pub lane_kinds: Vec<String>,
}

impl Default for LaneIdleConfig {
    fn default() -> Self {
        LaneIdleConfig {
            max_ticks: DEFAULT_MAX_TICKS,
            min_seconds: DEFAULT_MIN_SECONDS,
            heartbeat_stale_seconds: DEFAULT_HEARTBEAT_STALE_SECONDS,
            lane_kinds: DEFAULT_LANE_KINDS
                .iter()
                .map(|kind| (*kind).to_owned())
                .collect(),
        }
    }
}

impl LaneIdleConfig {
    /// The same config needing `max_ticks` idle scans; 0 keeps the current value
    /// (the guard needs at least one).
    pub fn with_max_ticks(mut self, max_ticks: u32) -> Self {
        if max_ticks >= 1 {
            self.max_ticks = max_ticks;
        }
        self
    }

    /// The same config needing `min_seconds` idle seconds; a value that is not finite
    /// and > 0 keeps the current one.
    pub fn with_min_seconds(mut self, min_seconds: f64) -> Self {
        if min_seconds.is_finite() && min_seconds > 0.0 {
            self.min_seconds = min_seconds;
        }
        self
    }

    /// The same config with the age past which an inline-step stamp no longer freezes the guard.
    pub fn with_heartbeat_stale_seconds(mut self, seconds: f64) -> Self {
        self.heartbeat_stale_seconds = seconds;
        self
    }

    /// The same config counting these task kinds as lane work.
    pub fn with_lane_kinds<I, S>(mut self, kinds: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.lane_kinds = kinds.into_iter().map(Into::into).collect();
        self
    }

    /// The defaults with [`IDLE_MAX_TICKS_ENV`] and [`IDLE_MIN_SECONDS_ENV`]
    /// taken from `lookup` at call time; an invalid or zero value keeps the
    /// default. The caller reads the environment (`|name| std::env::var(name).ok()`).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        LaneIdleConfig {
            max_ticks: parse_max_ticks(lookup(IDLE_MAX_TICKS_ENV).as_deref())
                .unwrap_or(DEFAULT_MAX_TICKS),
            min_seconds: parse_min_seconds(lookup(IDLE_MIN_SECONDS_ENV).as_deref())
                .unwrap_or(DEFAULT_MIN_SECONDS),
            ..LaneIdleConfig::default()
        }
    }
}

fn parse_max_ticks(raw: Option<&str>) -> Option<u32> {
    raw?.trim().parse::<u32>().ok().filter(|ticks| *ticks >= 1)
}

fn parse_min_seconds(raw: Option<&str>) -> Option<f64> {
    raw?.trim()
        .parse::<f64>()
        .ok()
        .filter(|seconds| seconds.is_finite() && *seconds > 0.0)
}
