//! The CLI's `kernlens.scratch/1` documents, one per action (`create`, `diff`, `release`,
//! `sweep`), built here so the command line never assembles a schema itself (docs/design/cli.md).
//!
//! Each borrows the report it describes; the field order is the wire order: `schema`, `action`,
//! then the action's fields.

use std::path::Path;

use serde::Serialize;

use crate::{Change, DriftItem, Error, ExportReport, SweepReport, Workspace};

/// Schema tag of every document here.
pub const SCRATCH_SCHEMA: &str = "kernlens.scratch/1";

/// What `release` says when the worktree sits beside its output (nothing to release).
pub const NOT_RELEASED_WHY: &str =
    "the worktree sits beside its output and is never swept; remove it yourself when done";

/// `scratch create`: the workspace made, or why it was refused.
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct CreateDocument<'a> {
    /// Always [`SCRATCH_SCHEMA`].
    pub schema: &'static str,
    /// Always `"create"`.
    pub action: &'static str,
    /// The workspace's fields, or the `refused` object.
    #[serde(flatten)]
    pub outcome: CreateOutcome<'a>,
}

/// What `create` did.
#[derive(Debug, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum CreateOutcome<'a> {
    /// The workspace was made.
    Created(Box<Created<'a>>),
    /// It was refused (exit 1).
    Refused {
        /// Why, as `{"reason":…, …}`.
        refused: Refusal,
    },
}

/// The workspace metadata (scratch.md, Metadata; less its `schema`) plus the worktree, the
/// kernel path, the warnings and the claim's sweep.
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct Created<'a> {
    /// Sanitised session name.
    pub session: &'a str,
    /// Sanitised attempt name.
    pub attempt: &'a str,
    /// The durable attempt directory.
    pub output_dir: &'a Path,
    /// The kernel source as given.
    pub source_file: &'a Path,
    /// The directory the worktree mirrors.
    pub layout_root: &'a Path,
    /// Kernel path relative to the worktree.
    pub kernel_rel: &'a str,
    /// The baseline branch.
    pub branch: &'a str,
    /// The baseline commit.
    pub base_commit: &'a str,
    /// `pid:starttime` of the session owner.
    pub owner: &'a str,
    /// Seconds since the epoch when prepared.
    pub created_unix: u64,
    /// The copy filter in force.
    pub copy_ignore: &'a [String],
    /// The git exclude list in force.
    pub git_exclude: &'a [String],
    /// True when the worktree lives under the local scratch root.
    pub relocated: bool,
    /// The worktree directory.
    pub worktree: &'a Path,
    /// The kernel file inside the worktree.
    pub kernel_path: &'a Path,
    /// Warnings of the location, layout and copy steps, then the caller's.
    pub warnings: &'a [String],
    /// What the claim's sweep did.
    pub sweep: &'a SweepReport,
}

/// Why `create` refused, tagged by `reason`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Refusal {
    /// The attempt directory exists.
    Collision {
        /// The existing path.
        path: std::path::PathBuf,
    },
    /// The branch is protected.
    ProtectedBranch {
        /// The branch asked for.
        name: String,
    },
    /// Any other refusal, as its message.
    Refused {
        /// The error's text.
        message: String,
    },
}

impl Refusal {
    /// The refusal `err` stands for (meant for errors whose `is_refusal()` is true).
    pub fn of(err: &Error) -> Refusal {
        match err {
            Error::Collision { path } => Refusal::Collision { path: path.clone() },
            Error::ProtectedBranch { name } => Refusal::ProtectedBranch { name: name.clone() },
            other => Refusal::Refused {
                message: other.to_string(),
            },
        }
    }
}

impl<'a> CreateDocument<'a> {
    /// The document of a made workspace.
    pub fn created(ws: &'a Workspace) -> Self {
        let m = &ws.meta;
        CreateDocument {
            schema: SCRATCH_SCHEMA,
            action: "create",
            outcome: CreateOutcome::Created(Box::new(Created {
                session: &m.session,
                attempt: &m.attempt,
                output_dir: &m.output_dir,
                source_file: &m.source_file,
                layout_root: &m.layout_root,
                kernel_rel: &m.kernel_rel,
                branch: &m.branch,
                base_commit: &m.base_commit,
                owner: &m.owner,
                created_unix: m.created_unix,
                copy_ignore: &m.copy_ignore,
                git_exclude: &m.git_exclude,
                relocated: m.relocated,
                worktree: &ws.worktree,
                kernel_path: &ws.kernel_path,
                warnings: &ws.warnings,
                sweep: &ws.sweep,
            })),
        }
    }

    /// The document of a refused create.
    pub fn refused(refusal: Refusal) -> Self {
        CreateDocument {
            schema: SCRATCH_SCHEMA,
            action: "create",
            outcome: CreateOutcome::Refused { refused: refusal },
        }
    }
}

/// `scratch diff`: the `export.json` manifest (less its `schema`) plus `out_dir`.
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct DiffDocument<'a> {
    /// Always [`SCRATCH_SCHEMA`].
    pub schema: &'static str,
    /// Always `"diff"`.
    pub action: &'static str,
    /// The baseline commit.
    pub base_commit: &'a str,
    /// The exported commit, if any.
    pub best: Option<&'a str>,
    /// What changed.
    pub changes: &'a [Change],
    /// Size of `scratch.patch`.
    pub patch_bytes: u64,
    /// Warnings.
    pub warnings: &'a [String],
    /// Edits under excluded paths.
    pub excluded_drift: &'a [DriftItem],
    /// The directory written.
    pub out_dir: &'a Path,
}

impl<'a> DiffDocument<'a> {
    /// The document over one export.
    pub fn new(report: &'a ExportReport) -> Self {
        DiffDocument {
            schema: SCRATCH_SCHEMA,
            action: "diff",
            base_commit: &report.base_commit,
            best: report.best.as_deref(),
            changes: &report.changes,
            patch_bytes: report.patch_bytes,
            warnings: &report.warnings,
            excluded_drift: &report.excluded_drift,
            out_dir: &report.out_dir,
        }
    }
}

/// `scratch release`: `released` with the session directory, or why nothing was released.
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct ReleaseDocument<'a> {
    /// Always [`SCRATCH_SCHEMA`].
    pub schema: &'static str,
    /// Always `"release"`.
    pub action: &'static str,
    /// True when the session was marked done.
    pub released: bool,
    /// The released session directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_dir: Option<&'a Path>,
    /// Why nothing was released ([`NOT_RELEASED_WHY`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<&'static str>,
}

impl<'a> ReleaseDocument<'a> {
    /// The document of [`release`](crate::release)'s answer: the session directory, or none
    /// for a worktree beside its output.
    pub fn new(session_dir: Option<&'a Path>) -> Self {
        ReleaseDocument {
            schema: SCRATCH_SCHEMA,
            action: "release",
            released: session_dir.is_some(),
            session_dir,
            why: session_dir.is_none().then_some(NOT_RELEASED_WHY),
        }
    }
}

/// `scratch sweep`: the [`SweepReport`] fields plus the root swept.
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct SweepDocument<'a> {
    /// Always [`SCRATCH_SCHEMA`].
    pub schema: &'static str,
    /// Always `"sweep"`.
    pub action: &'static str,
    /// What the sweep did and left.
    #[serde(flatten)]
    pub report: &'a SweepReport,
    /// The local scratch root swept.
    pub local_root: &'a Path,
}

impl<'a> SweepDocument<'a> {
    /// The document over one sweep of `local_root`.
    pub fn new(report: &'a SweepReport, local_root: &'a Path) -> Self {
        SweepDocument {
            schema: SCRATCH_SCHEMA,
            action: "sweep",
            report,
            local_root,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_beside_output_says_why_and_no_session_dir() {
        let json = serde_json::to_string(&ReleaseDocument::new(None)).unwrap_or_default();
        assert_eq!(
            json,
            format!(
                r#"{{"schema":"kernlens.scratch/1","action":"release","released":false,"why":"{NOT_RELEASED_WHY}"}}"#
            )
        );
    }

    #[test]
    fn refusal_is_tagged_by_reason_first() {
        let doc = CreateDocument::refused(Refusal::ProtectedBranch {
            name: "main".into(),
        });
        let json = serde_json::to_string(&doc).unwrap_or_default();
        assert_eq!(
            json,
            r#"{"schema":"kernlens.scratch/1","action":"create","refused":{"reason":"protected_branch","name":"main"}}"#
        );
    }
}
