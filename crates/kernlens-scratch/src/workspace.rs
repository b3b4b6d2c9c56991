//! Workspace metadata (`.git/kernlens-scratch.json`) and the handle that reads it back.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// Schema tag of the metadata file.
pub const META_SCHEMA: &str = "kernlens.scratch-meta/1";
/// File name of the metadata inside `.git`.
pub const META_FILE: &str = "kernlens-scratch.json";

/// Everything `Workspace::open` (and `kernlens scratch diff`) needs, recorded at prepare time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WorkspaceMeta {
    /// Always [`META_SCHEMA`].
    pub schema: String,
    /// Sanitised session name.
    pub session: String,
    /// Sanitised attempt name.
    pub attempt: String,
    /// The durable attempt directory.
    pub output_dir: PathBuf,
    /// The kernel source as given.
    pub source_file: PathBuf,
    /// The directory the worktree mirrors.
    pub layout_root: PathBuf,
    /// Kernel path relative to the worktree.
    pub kernel_rel: String,
    /// The baseline branch (short name).
    pub branch: String,
    /// The baseline commit, 40 hex.
    pub base_commit: String,
    /// `pid:starttime` of the preparing process.
    pub owner: String,
    /// Seconds since the epoch when prepared.
    pub created_unix: u64,
    /// The copy filter in force.
    pub copy_ignore: Vec<String>,
    /// The git exclude list in force.
    pub git_exclude: Vec<String>,
    /// True when the worktree lives under the local scratch root.
    pub relocated: bool,
}

/// A prepared (or reopened) scratch workspace.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Workspace {
    /// The recorded metadata.
    #[serde(flatten)]
    pub meta: WorkspaceMeta,
    /// The worktree directory.
    pub worktree: PathBuf,
    /// `worktree` joined with `kernel_rel`.
    pub kernel_path: PathBuf,
    /// Warnings of the location, layout and copy steps (empty after `open`).
    pub warnings: Vec<String>,
    /// What the claim's sweep did (empty after `open` and for local workspaces).
    #[serde(skip)]
    pub sweep: crate::sweep::SweepReport,
    /// Figures of the baseline build (`None` after `open`).
    #[serde(skip)]
    pub baseline_stats: Option<crate::baseline::BaselineStats>,
}

impl Workspace {
    /// Read the workspace at `dir` (its worktree) from its metadata alone.
    pub fn open(dir: &Path) -> Result<Workspace, Error> {
        let path = dir.join(".git").join(META_FILE);
        let bytes = std::fs::read(&path).map_err(|e| Error::NotAWorkspace {
            path: dir.to_path_buf(),
            why: format!("cannot read '{}': {e}", path.display()),
        })?;
        let meta: WorkspaceMeta =
            serde_json::from_slice(&bytes).map_err(|e| Error::NotAWorkspace {
                path: dir.to_path_buf(),
                why: format!("'{}' is not valid metadata: {e}", path.display()),
            })?;
        if meta.schema != META_SCHEMA {
            return Err(Error::NotAWorkspace {
                path: dir.to_path_buf(),
                why: format!("unknown metadata schema '{}'", meta.schema),
            });
        }
        let worktree = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        Ok(Workspace::from_meta(meta, worktree, Vec::new()))
    }

    pub(crate) fn from_meta(
        meta: WorkspaceMeta,
        worktree: PathBuf,
        warnings: Vec<String>,
    ) -> Workspace {
        let kernel_path = worktree.join(&meta.kernel_rel);
        Workspace {
            meta,
            worktree,
            kernel_path,
            warnings,
            sweep: crate::sweep::SweepReport::default(),
            baseline_stats: None,
        }
    }

    /// The repository directory.
    pub fn git_dir(&self) -> PathBuf {
        self.worktree.join(".git")
    }
}
