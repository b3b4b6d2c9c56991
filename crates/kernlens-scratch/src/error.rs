//! The crate's one error enum: every step of setting a workspace up, reading
//! it back, exporting and sweeping reports through it, naming the step and the
//! path.

use std::path::PathBuf;

/// The cause of a failed git step: gix's own error (kept for its cause chain)
/// or, for the `git` executable, what it printed.
pub type GitCause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a scratch operation failed: [`prepare`](crate::prepare::prepare()) (or
/// one of its steps) did not produce a workspace, or reading changes from,
/// exporting, discarding or sweeping a workspace did not complete.
///
/// [`Collision`](Error::Collision) and [`ProtectedBranch`](Error::ProtectedBranch) are
/// refusals: they are decisions, not faults, and they leave the disk untouched.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The worktree path already exists; a retained attempt is never reused or deleted.
    #[error("refusing to prepare '{}': the worktree already exists", path.display())]
    Collision {
        /// The existing worktree path.
        path: PathBuf,
    },
    /// The branch is empty or one the policy protects.
    #[error("refusing branch '{name}': it is protected (or empty)")]
    ProtectedBranch {
        /// The branch as given, less any `refs/heads/` prefix.
        name: String,
    },
    /// The branch is not a valid git reference name.
    #[error("invalid branch name '{name}': {why}")]
    InvalidBranch {
        /// The branch as given.
        name: String,
        /// What the validator objected to.
        why: String,
    },
    /// A session or attempt name that sanitises to nothing usable.
    #[error("invalid {what} name '{name}': it is empty, '.' or '..' after sanitising")]
    InvalidName {
        /// `session` or `attempt`.
        what: &'static str,
        /// The name as given.
        name: String,
    },
    /// The output is on a network filesystem and no local scratch root can be chosen.
    #[error("no local scratch root for '{}': set KERNLENS_LOCAL_SCRATCH_ROOT, XDG_CACHE_HOME or HOME", output_dir.display())]
    NoScratchRoot {
        /// The durable output directory that needed relocating.
        output_dir: PathBuf,
    },
    /// The kernel source is not an existing regular file.
    #[error("cannot use source '{}': it is not an existing regular file", path.display())]
    SourceMissing {
        /// The source path as given.
        path: PathBuf,
    },
    /// The directory that would be copied is too broad or would contain the worktree.
    #[error("refusing to copy '{}': {why}", root.display())]
    RefuseCopyRoot {
        /// The copy root.
        root: PathBuf,
        /// Why it is refused.
        why: String,
    },
    /// The copy would exceed the policy's `max_copy_bytes`.
    #[error("refusing to copy '{}': it holds more than {limit} bytes", root.display())]
    CopyTooLarge {
        /// The copy root.
        root: PathBuf,
        /// The policy limit in bytes.
        limit: u64,
    },
    /// The `best` commit is not in the workspace repository.
    #[error("unknown commit '{commit}' in '{}'", repo.display())]
    UnknownCommit {
        /// The commit as given.
        commit: String,
        /// The repository searched.
        repo: PathBuf,
    },
    /// The kernel file does not exist at the `best` commit.
    #[error("'{kernel_rel}' does not exist at commit {commit}")]
    PrimaryMissingAtBest {
        /// The kernel path relative to the worktree.
        kernel_rel: String,
        /// The `best` commit.
        commit: String,
    },
    /// `best` was given but does not differ from the baseline.
    #[error("nothing to export: commit {commit} has no changes against the baseline")]
    NothingToExport {
        /// The `best` commit.
        commit: String,
    },
    /// The directory carries no kernlens workspace metadata.
    #[error("'{}' is not a kernlens scratch workspace: {why}", path.display())]
    NotAWorkspace {
        /// The directory examined.
        path: PathBuf,
        /// What was missing or unreadable.
        why: String,
    },
    /// Discarding was asked by a process that does not own the workspace.
    #[error("refusing to discard '{}': it is owned by {owner}, not this process", path.display())]
    NotOwner {
        /// The worktree.
        path: PathBuf,
        /// The owner recorded in the metadata.
        owner: String,
    },
    /// A filesystem operation failed.
    #[error("cannot {action} '{}': {source}", path.display())]
    Io {
        /// What was being done (`create directory`, `copy`, ...).
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A git step failed.
    #[error("git {step} failed in '{}': {source}", path.display())]
    Git {
        /// The step (`init`, `commit`, `write index`, ...).
        step: &'static str,
        /// The repository or file involved.
        path: PathBuf,
        /// The cause, with its own chain.
        source: GitCause,
    },
}

impl Error {
    /// True for decisions that left the disk untouched: [`Collision`](Self::Collision) and
    /// [`ProtectedBranch`](Self::ProtectedBranch).
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            Error::Collision { .. } | Error::ProtectedBranch { .. }
        )
    }

    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }

    pub(crate) fn git(
        step: &'static str,
        path: impl Into<PathBuf>,
        source: impl Into<GitCause>,
    ) -> Self {
        Error::Git {
            step,
            path: path.into(),
            source: source.into(),
        }
    }
}
