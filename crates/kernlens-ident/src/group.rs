//! Task groups (ident.md "Task groups"): trace rows that share an operator identity.

use std::path::PathBuf;

use crate::memo::FxHashMap;
use serde::Serialize;

use crate::category::{Category, classify};
use crate::identity::{KeyTrack, OperatorIdentity, PathContext, canonical_source_path, track_for};
use crate::memo::KeyMemo;
use crate::source_ref::{
    RefRejection, SourceRef, is_path_shaped, is_placeholder, parse_source_ref,
};

/// Where a row's kernel comes from, as the caller has it.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RowSource {
    /// No source known.
    Absent,
    /// A raw reference (`aiter/rmsnorm.py(42): rms_norm`), parsed by
    /// [`parse_source_ref`](crate::parse_source_ref).
    Text(String),
    /// A reference already parsed.
    Parsed(SourceRef),
}

/// One hot-kernel row of a trace.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceRow {
    /// The row's id; the name when empty.
    pub kernel_id: String,
    /// The raw kernel name.
    pub name: String,
    /// Where the kernel is defined or launched from.
    pub source: RowSource,
    /// Number of launches.
    pub calls: u64,
    /// Total GPU time in microseconds.
    pub total_us: f64,
    /// Share of the trace's GPU time (0..=1); computed when absent.
    pub share: Option<f64>,
}

impl TraceRow {
    /// A row with no source, no calls and no time.
    pub fn new(kernel_id: impl Into<String>, name: impl Into<String>) -> Self {
        TraceRow {
            kernel_id: kernel_id.into(),
            name: name.into(),
            source: RowSource::Absent,
            calls: 0,
            total_us: 0.0,
            share: None,
        }
    }

    /// The same row with a raw source reference.
    pub fn with_source(mut self, reference: impl Into<String>) -> Self {
        self.source = RowSource::Text(reference.into());
        self
    }

    /// The same row with a parsed source reference.
    pub fn with_source_ref(mut self, reference: SourceRef) -> Self {
        self.source = RowSource::Parsed(reference);
        self
    }

    /// The same row with `calls` launches.
    pub fn with_calls(mut self, calls: u64) -> Self {
        self.calls = calls;
        self
    }

    /// The same row with `total_us` of GPU time.
    pub fn with_total_us(mut self, total_us: f64) -> Self {
        self.total_us = total_us;
        self
    }

    /// The same row with a share of the trace.
    pub fn with_share(mut self, share: f64) -> Self {
        self.share = Some(share);
        self
    }
}

/// How [`group_rows`] resolves paths and shares.
#[non_exhaustive]
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GroupOptions {
    /// Where relative source paths resolve and what `~` expands to (passed in by the
    /// caller: the crate reads no environment).
    pub paths: PathContext,
    /// The trace's total GPU time, the denominator of computed shares; the
    /// sum over all input rows when absent.
    pub trace_total_us: Option<f64>,
    /// List each row without a usable source as a group of its own (no
    /// identity key), ordered and numbered with the others; it is still
    /// reported in [`Grouping::ungrouped`] with its reason.
    pub lone_rows: bool,
}

impl GroupOptions {
    /// Defaults: working directory, no `~` expansion, shares over the rows.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same options with `base_dir`.
    pub fn with_base_dir(mut self, base_dir: impl Into<PathBuf>) -> Self {
        self.paths = self.paths.with_base_dir(base_dir);
        self
    }

    /// The same options with `home_dir`.
    pub fn with_home_dir(mut self, home_dir: impl Into<PathBuf>) -> Self {
        self.paths = self.paths.with_home_dir(home_dir);
        self
    }

    /// The same options with the trace's total GPU time.
    pub fn with_trace_total_us(mut self, total_us: f64) -> Self {
        self.trace_total_us = Some(total_us);
        self
    }

    /// The same options with where relative paths resolve and what `~` expands to.
    pub fn with_paths(mut self, paths: PathContext) -> Self {
        self.paths = paths;
        self
    }

    /// The same options listing (or not) each row without a usable source
    /// as a group of its own ([`GroupOptions::lone_rows`]).
    pub fn with_lone_rows(mut self, lone_rows: bool) -> Self {
        self.lone_rows = lone_rows;
        self
    }
}

/// Rows that share one operator identity, or (with
/// [`GroupOptions::lone_rows`]) one row without a usable source.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskGroup {
    /// `tg001`, `tg002`, … in order of total time.
    pub id: String,
    /// The id of the row with the most time.
    pub primary_kernel_id: String,
    /// Row ids by total time, descending, without duplicates.
    pub kernel_ids: Vec<String>,
    /// The primary row's raw name.
    pub operation: String,
    /// The identity's key ([`OperatorIdentity::key`]); `None` for a lone row
    /// without a usable source.
    pub identity_key: Option<String>,
    /// The category of the primary row's name.
    pub category: Category,
    /// Sum of the rows' calls.
    pub calls: u64,
    /// Sum of the rows' time, microseconds.
    pub total_us: f64,
    /// Sum of the rows' shares.
    pub share: f64,
}

/// Why a row is in no group.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UngroupedReason {
    /// The source is absent or empty.
    NoSource,
    /// The source is a placeholder such as `n/a` or `—`.
    Placeholder,
    /// The source does not name a source file.
    NotPathShaped,
}

/// A row left out of every group, and why.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ungrouped {
    /// Index of the row in the input.
    pub row: usize,
    /// The row's id.
    pub kernel_id: String,
    /// Why it has no group.
    pub reason: UngroupedReason,
}

/// A recovered problem with one row's numbers.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupWarning {
    /// Index of the row in the input, `None` for the options.
    pub row: Option<usize>,
    /// What was wrong and what was used instead.
    pub message: String,
}

/// The outcome of [`group_rows`].
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Grouping {
    /// Groups by total time, descending (lone rows among them when
    /// [`GroupOptions::lone_rows`] is set).
    pub groups: Vec<TaskGroup>,
    /// Rows without a usable source, in input order (also listed in
    /// `groups` when [`GroupOptions::lone_rows`] is set).
    pub ungrouped: Vec<Ungrouped>,
    /// Bad numbers that were replaced.
    pub warnings: Vec<GroupWarning>,
}

/// One row with its numbers made valid.
struct CleanRow {
    total_us: f64,
    share: Option<f64>,
}

/// Groups rows by operator identity (ident.md "Task groups: Rules").
///
/// ```
/// use kernlens_ident::{GroupOptions, TraceRow, group_rows};
/// let rows = [
///     TraceRow::new("k001", "aiter::rms_norm").with_source("rmsnorm.py(2): rms_norm").with_total_us(100.0),
///     TraceRow::new("k002", "aiter::rms_norm").with_source("rmsnorm.py(9): rms_norm").with_total_us(50.0),
///     TraceRow::new("k003", "other").with_source("n/a").with_total_us(10.0),
/// ];
/// let grouping = group_rows(&rows, &GroupOptions::new().with_base_dir("/repo"));
/// assert_eq!(grouping.groups.len(), 1);
/// assert_eq!(grouping.groups[0].kernel_ids, ["k001", "k002"]);
/// assert_eq!(grouping.ungrouped.len(), 1);
/// ```
pub fn group_rows(rows: &[TraceRow], options: &GroupOptions) -> Grouping {
    let mut warnings = Vec::new();
    let clean_rows: Vec<CleanRow> = rows
        .iter()
        .enumerate()
        .map(|(index, row)| clean_numbers(index, row, &mut warnings))
        .collect();
    let denominator = match options.trace_total_us {
        Some(total) if total.is_finite() && total >= 0.0 => total,
        other => {
            if let Some(bad) = other {
                warnings.push(GroupWarning {
                    row: None,
                    message: format!(
                        "trace_total_us {bad} is not a finite non-negative number; shares use the sum over the rows"
                    ),
                });
            }
            clean_rows.iter().map(|r| r.total_us).sum()
        }
    };

    let paths = &options.paths;
    let mut memo = KeyMemo::new();
    let mut canonical: FxHashMap<String, String> = FxHashMap::default();
    let mut index_of_key: FxHashMap<String, usize> = FxHashMap::default();
    // One slot per identity (or lone row), in order of first appearance.
    let mut members: Vec<(Option<String>, Vec<usize>)> = Vec::new();
    let mut ungrouped = Vec::new();

    for (index, row) in rows.iter().enumerate() {
        let reference = match resolve_source(&row.source) {
            Ok(reference) => reference,
            Err(reason) => {
                if options.lone_rows {
                    members.push((None, vec![index]));
                }
                ungrouped.push(Ungrouped {
                    row: index,
                    kernel_id: kernel_id(row).to_owned(),
                    reason,
                });
                continue;
            }
        };
        let path = reference.path.as_str();
        let track = track_for(Some(path), &row.name);
        let source_path = canonical
            .entry(path.to_owned())
            .or_insert_with(|| canonical_source_path(path, paths))
            .clone();
        let function = reference.function.as_deref().unwrap_or("");
        let (operation, function) = match track {
            KeyTrack::Native => (
                memo.get(&row.name).native.clone(),
                memo.get(function).native.clone(),
            ),
            KeyTrack::Py => (
                memo.get(&row.name).python.clone(),
                function.trim().to_owned(),
            ),
        };
        let key = OperatorIdentity::from_keys(track, source_path, operation, function).key();
        let slot = *index_of_key.entry(key.clone()).or_insert_with(|| {
            members.push((Some(key), Vec::new()));
            members.len() - 1
        });
        members[slot].1.push(index);
    }

    let mut groups: Vec<TaskGroup> = members
        .into_iter()
        .map(|(identity_key, mut row_indices)| {
            // Stable: ties keep input order.
            row_indices.sort_by(|&a, &b| clean_rows[b].total_us.total_cmp(&clean_rows[a].total_us));
            let mut kernel_ids: Vec<String> = Vec::with_capacity(row_indices.len());
            for &i in &row_indices {
                let id = kernel_id(&rows[i]);
                if !kernel_ids.iter().any(|known| known == id) {
                    kernel_ids.push(id.to_owned());
                }
            }
            let primary = &rows[row_indices[0]];
            TaskGroup {
                id: String::new(),
                primary_kernel_id: kernel_id(primary).to_owned(),
                kernel_ids,
                operation: primary.name.clone(),
                identity_key,
                category: classify(&primary.name),
                calls: row_indices.iter().map(|&i| rows[i].calls).sum(),
                total_us: row_indices.iter().map(|&i| clean_rows[i].total_us).sum(),
                share: row_indices
                    .iter()
                    .map(|&i| {
                        clean_rows[i].share.unwrap_or(if denominator > 0.0 {
                            clean_rows[i].total_us / denominator
                        } else {
                            0.0
                        })
                    })
                    .sum(),
            }
        })
        .collect();
    // Groups were created in order of their first row, so a stable sort
    // breaks ties by first appearance.
    groups.sort_by(|a, b| b.total_us.total_cmp(&a.total_us));
    for (n, group) in groups.iter_mut().enumerate() {
        group.id = format!("tg{:03}", n + 1);
    }
    Grouping {
        groups,
        ungrouped,
        warnings,
    }
}

fn kernel_id(row: &TraceRow) -> &str {
    if row.kernel_id.is_empty() {
        &row.name
    } else {
        &row.kernel_id
    }
}

fn clean_numbers(index: usize, row: &TraceRow, warnings: &mut Vec<GroupWarning>) -> CleanRow {
    let total_us = if row.total_us.is_finite() && row.total_us >= 0.0 {
        row.total_us
    } else {
        warnings.push(GroupWarning {
            row: Some(index),
            message: format!(
                "row '{}': total_us {} is not a finite non-negative number; counted as 0",
                kernel_id(row),
                row.total_us
            ),
        });
        0.0
    };
    let share = match row.share {
        Some(share) if (0.0..=1.0).contains(&share) => Some(share),
        Some(bad) => {
            warnings.push(GroupWarning {
                row: Some(index),
                message: format!(
                    "row '{}': share {bad} is outside 0..=1; computed from total_us instead",
                    kernel_id(row)
                ),
            });
            None
        }
        None => None,
    };
    CleanRow { total_us, share }
}

fn resolve_source(source: &RowSource) -> Result<SourceRef, UngroupedReason> {
    match source {
        RowSource::Absent => Err(UngroupedReason::NoSource),
        RowSource::Text(text) => parse_source_ref(text).map_err(|rejection| match rejection {
            RefRejection::Empty => UngroupedReason::NoSource,
            RefRejection::Placeholder(_) => UngroupedReason::Placeholder,
            RefRejection::NotPathShaped(_) => UngroupedReason::NotPathShaped,
        }),
        RowSource::Parsed(reference) => {
            let path = reference.path.trim();
            if path.is_empty() {
                Err(UngroupedReason::NoSource)
            } else if is_placeholder(path) {
                Err(UngroupedReason::Placeholder)
            } else if !is_path_shaped(path) {
                Err(UngroupedReason::NotPathShaped)
            } else {
                Ok(reference.clone())
            }
        }
    }
}
