//! `triage --baseline OLD_TRACE`: each triage group's change since a baseline trace
//! (diff.md, "Triage baseline").
//!
//! A triage group is keyed by an identity that includes the located source file (or is a
//! single row when no source was found); the baseline trace is read without locating
//! anything. So a triage group is matched through its kernels' names, and each baseline
//! row is counted for one triage group at most:
//!
//! 1. a baseline row with exactly the name of one of the group's kernels belongs to it;
//! 2. the baseline rows left over are folded by identity (ident's key with no source
//!    path, as [`super::compare`] matches), and a group kernel without an exact twin takes
//!    the fold of its identity, the first group in triage order first.
//!
//! Step 1 keeps two kernels that ident folds into one identity (the GELU and add
//! instances of one elementwise template) apart when both sides have them; step 2 still
//! matches a kernel renamed by its launch API or a template argument.

use std::collections::HashMap;

use kernlens_ident::KeyMemo;
use serde::Serialize;

use super::groups::identity_of;
use super::report::{
    CountDelta, Delta, DiffWarning, GroupStatus, Normalize, TotalsDelta, count_doc, headline,
};
use super::{Capture, SideRef, compare_sides};
use crate::triage::TriageReport;

/// One triage group's figures in the baseline and now (whole traces, not normalised).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct GroupBaseline {
    /// The triage group's id (`tg001`, …).
    pub id: String,
    /// `matched` when the baseline has any of its kernels, else `added`.
    pub status: GroupStatus,
    /// GPU time, µs: baseline → now.
    pub total_us: Delta,
    /// Launches: baseline → now.
    #[serde(serialize_with = "count_doc")]
    pub calls: CountDelta,
    /// GPU time per launch, µs: baseline → now.
    pub avg_us: Delta,
}

/// The baseline block of a triage report.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct TriageBaseline {
    /// The baseline trace as resolved.
    pub trace_file: String,
    /// Kernel time's change and the triage group that fell the most.
    pub headline: String,
    /// Whole-trace figures, baseline → now.
    pub totals: TotalsDelta,
    /// What may make the comparison misleading (diff.md, "Warnings").
    pub warnings: Vec<DiffWarning>,
    /// One entry per triage group, in the triage's order.
    pub groups: Vec<GroupBaseline>,
}

impl TriageBaseline {
    /// The entry of the triage group `id`.
    pub fn group(&self, id: &str) -> Option<&GroupBaseline> {
        self.groups.iter().find(|g| g.id == id)
    }
}

/// Each of `report`'s task groups against `baseline` (read whole, every kernel row kept;
/// see [`Capture::read`]), with the whole-trace deltas and warnings of the two traces.
pub fn triage_baseline(baseline: &Capture, report: &TriageReport) -> TriageBaseline {
    let now = SideRef {
        analysis: &report.analysis,
        gpu_models: None,
    };
    let diff = compare_sides(SideRef::of(baseline), now, Normalize::None);
    let mut memo = KeyMemo::new();
    let (groups, operations) = match_groups(baseline, report, &mut memo);
    let gain = groups
        .iter()
        .zip(&operations)
        .filter(|(b, _)| b.status == GroupStatus::Matched && b.total_us.delta < 0.0)
        .min_by(|(a, _), (b, _)| a.total_us.delta.total_cmp(&b.total_us.delta))
        .map(|(b, op)| (b.id.as_str(), op.as_str(), b.status, &b.total_us));
    TriageBaseline {
        trace_file: baseline.analysis.trace_file.clone(),
        headline: headline(&diff.totals.kernel_sum_us, Normalize::None, gain),
        totals: diff.totals,
        warnings: diff.warnings,
        groups,
    }
}

/// Each triage group's baseline entry, and its operation as the headline names it.
fn match_groups(
    baseline: &Capture,
    report: &TriageReport,
    memo: &mut KeyMemo,
) -> (Vec<GroupBaseline>, Vec<String>) {
    let rows = &baseline.analysis.kernels;
    let by_name: HashMap<&str, usize> = rows
        .iter()
        .enumerate()
        .map(|(i, row)| (row.name.as_str(), i))
        .collect();
    let mut claimed = vec![false; rows.len()];
    for group in &report.task_groups {
        for name in &group.kernels {
            if let Some(&i) = by_name.get(name.as_str()) {
                claimed[i] = true;
            }
        }
    }
    // The rows no kernel name claimed, folded by identity.
    let mut folds: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, row) in rows.iter().enumerate() {
        if !claimed[i] {
            folds
                .entry(identity_of(&row.name, memo).0)
                .or_default()
                .push(i);
        }
    }
    let mut groups = Vec::with_capacity(report.task_groups.len());
    let mut operations = Vec::with_capacity(report.task_groups.len());
    for group in &report.task_groups {
        let mut taken: Vec<usize> = Vec::new();
        for name in &group.kernels {
            match by_name.get(name.as_str()) {
                Some(&i) => taken.push(i),
                None => {
                    if let Some(fold) = folds.remove(&identity_of(name, memo).0) {
                        taken.extend(fold);
                    }
                }
            }
        }
        taken.sort_unstable();
        taken.dedup();
        let ns = taken
            .iter()
            .fold(0i64, |sum, &i| sum.saturating_add(rows[i].total_ns));
        let calls = taken
            .iter()
            .fold(0u64, |sum, &i| sum.saturating_add(rows[i].calls));
        let before_us = ns as f64 / 1000.0;
        let avg = |us: f64, calls: u64| if calls > 0 { us / calls as f64 } else { 0.0 };
        groups.push(GroupBaseline {
            id: group.id.clone(),
            status: if taken.is_empty() {
                GroupStatus::Added
            } else {
                GroupStatus::Matched
            },
            total_us: Delta::new(before_us, group.total_us),
            calls: CountDelta::new(calls, group.calls),
            avg_us: Delta::new(avg(before_us, calls), avg(group.total_us, group.calls)),
        });
        operations.push(identity_of(&group.operation, memo).1);
    }
    (groups, operations)
}
