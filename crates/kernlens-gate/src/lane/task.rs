//! What the guard sees of the lane's tasks and inline steps.

use serde::Serialize;

/// Lifecycle state of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// Waiting for a resource: work the lane has committed to.
    Queued,
    /// Running now.
    Running,
    /// Finished well.
    Succeeded,
    /// Finished badly.
    Failed,
    /// Withdrawn.
    Cancelled,
}

impl TaskStatus {
    fn in_flight(self) -> bool {
        matches!(self, TaskStatus::Queued | TaskStatus::Running)
    }
}

/// One task as the coordinator reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TaskView {
    /// Task id.
    pub id: String,
    /// Task kind, compared with [`LaneIdleConfig::lane_kinds`](super::LaneIdleConfig).
    pub kind: String,
    /// Lifecycle state.
    pub status: TaskStatus,
}

impl TaskView {
    /// A task view from its parts.
    pub fn new(id: impl Into<String>, kind: impl Into<String>, status: TaskStatus) -> Self {
        TaskView {
            id: id.into(),
            kind: kind.into(),
            status,
        }
    }
}

/// Ids of the queued or running tasks whose kind is in `kinds`, sorted and
/// deduplicated.
pub fn in_flight_ids<S: AsRef<str>>(tasks: &[TaskView], kinds: &[S]) -> Vec<String> {
    let mut ids: Vec<String> = tasks
        .iter()
        .filter(|task| task.status.in_flight())
        .filter(|task| kinds.iter().any(|kind| kind.as_ref() == task.kind))
        .map(|task| task.id.clone())
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// Whether an inline step is running: its heartbeat `stamp` is set (> 0,
/// finite) and at most `stale_seconds` old. A stamp from the future or one
/// left behind by a dead process does not count, so it cannot mute the guard.
pub fn inline_step_running(stamp: f64, now: f64, stale_seconds: f64) -> bool {
    if !stamp.is_finite() || stamp <= 0.0 {
        return false;
    }
    let age = now - stamp;
    (0.0..=stale_seconds).contains(&age)
}
