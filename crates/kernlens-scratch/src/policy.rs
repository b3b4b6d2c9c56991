//! Every default the crate relies on, in one place: the copy filter, the git exclude list, the
//! protected branches, the network filesystem types, the baseline identity and the size limit.
//!
//! No other module spells any of these globs or names; they read them from a [`ScratchPolicy`].

use serde::Serialize;

use crate::pattern::PathFilter;

/// What the copy leaves out (gitignore syntax).
///
/// The copy shadows the installed package, so everything the package is imported through must be
/// present: `jit/`, `dist/`, `build/` and `*.so` are deliberately *not* here, because a compiled
/// module left out has nothing to fall back to.
pub const COPY_IGNORE: &[&str] = &[".git/", "__pycache__/", "*.pyc", "*.pyo"];

/// What the baseline index leaves out (gitignore syntax), written to `.git/info/exclude` before
/// the baseline add.
///
/// JIT output can be gigabytes: hashing it is slow, and binary hunks of it make patches that
/// `git apply` rejects. Bytecode is excluded so that a run's imports never show up as changes.
pub const GIT_EXCLUDE: &[&str] = &[
    "__pycache__/",
    "flydsl_cache/",
    "jit/",
    "dist/",
    "*.so",
    "*.pyc",
    "*.pyo",
];

/// Branches a scratch baseline may never be committed to.
pub const PROTECTED_BRANCHES: &[&str] = &["main", "master"];

/// Filesystem types (as the mount table spells them) that count as network filesystems.
pub const NETWORK_FS_TYPES: &[&str] = &[
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "lustre",
    "glusterfs",
    "ceph",
    "fuse.weka",
    "wekafs",
    "wekafsgw",
    "fuse.juicefs",
    "fuse.s3fs",
    "fuse.sshfs",
    "9p",
    "gpfs",
    "beegfs",
    "afs",
    "fuse.gcsfuse",
    "fuse.rclone",
];

/// The message of the baseline commit.
pub const BASELINE_MESSAGE: &str = "kernlens: scratch baseline";

/// Author and committer name of the baseline commit.
pub const IDENTITY_NAME: &str = "kernlens-scratch";

/// Author and committer email of the baseline commit.
pub const IDENTITY_EMAIL: &str = "kernlens-scratch@localhost";

/// The ref that keeps the baseline findable after a run moves or resets its branch.
pub const BASELINE_REF: &str = "refs/kernlens/baseline";

/// Largest copy `prepare` will make, in bytes (64 GiB).
pub const MAX_COPY_BYTES: u64 = 64 << 30;

/// Extensions (with their dot) of files whose edits under excluded directories are reported as
/// drift: the ident stage's source extensions, so both stages agree on what a kernel source is.
pub use kernlens_ident::SOURCE_EXTENSIONS as DRIFT_SOURCE_EXTENSIONS;

/// True when the file name `name` ends in one of [`DRIFT_SOURCE_EXTENSIONS`].
pub fn is_drift_source(name: &[u8]) -> bool {
    name.iter().rposition(|b| *b == b'.').is_some_and(|dot| {
        DRIFT_SOURCE_EXTENSIONS
            .iter()
            .any(|e| e.as_bytes() == &name[dot..])
    })
}

/// Which implementation does the git work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum GitBackend {
    /// gix, in process; needs no `git` executable.
    #[default]
    Native,
    /// The `git` executable for the baseline (init, add, commit, refs), isolated from system and
    /// user configuration and hooks. Only when asked for; never a fallback.
    Cli,
}

/// The policy a workspace is prepared and read under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ScratchPolicy {
    /// Gitignore patterns the copy leaves out.
    pub copy_ignore: Vec<String>,
    /// Gitignore patterns written to `.git/info/exclude` before the baseline add.
    pub git_exclude: Vec<String>,
    /// Branch names a baseline may never use.
    pub protected_branches: Vec<String>,
    /// Mount-table filesystem types treated as network filesystems.
    pub network_fs_types: Vec<String>,
    /// Largest copy in bytes.
    pub max_copy_bytes: u64,
    /// Which implementation does the git work.
    pub git_backend: GitBackend,
}

fn owned(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

impl Default for ScratchPolicy {
    fn default() -> Self {
        ScratchPolicy {
            copy_ignore: owned(COPY_IGNORE),
            git_exclude: owned(GIT_EXCLUDE),
            protected_branches: owned(PROTECTED_BRANCHES),
            network_fs_types: owned(NETWORK_FS_TYPES),
            max_copy_bytes: MAX_COPY_BYTES,
            git_backend: GitBackend::Native,
        }
    }
}

/// A non-fatal concern about a custom policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum PolicyWarning {
    /// The copy filter would drop something the shadowing copy needs to import.
    CopyDropsImportable {
        /// The probe path that the filter drops (`jit/`, `dist/` or `*.so`).
        what: String,
    },
    /// The git exclude list lacks `__pycache__/`, so bytecode would enter the baseline.
    ExcludeLacksPycache,
}

impl ScratchPolicy {
    /// The same policy leaving these gitignore patterns out of the copy.
    pub fn with_copy_ignore<I, S>(mut self, patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.copy_ignore = patterns.into_iter().map(Into::into).collect();
        self
    }

    /// The same policy writing these patterns to `.git/info/exclude` before the baseline add.
    pub fn with_git_exclude<I, S>(mut self, patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.git_exclude = patterns.into_iter().map(Into::into).collect();
        self
    }

    /// The same policy protecting these branch names.
    pub fn with_protected_branches<I, S>(mut self, branches: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.protected_branches = branches.into_iter().map(Into::into).collect();
        self
    }

    /// The same policy treating these mount-table filesystem types as network filesystems.
    pub fn with_network_fs_types<I, S>(mut self, types: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.network_fs_types = types.into_iter().map(Into::into).collect();
        self
    }

    /// The same policy refusing copies larger than `bytes`.
    pub fn with_max_copy_bytes(mut self, bytes: u64) -> Self {
        self.max_copy_bytes = bytes;
        self
    }

    /// The same policy doing the git work with `backend`.
    pub fn with_git_backend(mut self, backend: GitBackend) -> Self {
        self.git_backend = backend;
        self
    }

    /// Warn (never fail) about a custom policy that breaks the copy's import surface or lets
    /// bytecode into the baseline.
    pub fn validate(&self) -> Vec<PolicyWarning> {
        let mut warnings = Vec::new();
        let copy = PathFilter::new(&self.copy_ignore);
        // Probes: the importable things the default copy filter deliberately keeps.
        for (probe, is_dir, shown) in [
            ("pkg/jit", true, "jit/"),
            ("pkg/dist", true, "dist/"),
            ("pkg/ext.so", false, "*.so"),
        ] {
            if copy.is_excluded(probe.as_bytes(), is_dir) {
                warnings.push(PolicyWarning::CopyDropsImportable {
                    what: shown.to_owned(),
                });
            }
        }
        if !self.git_exclude.iter().any(|p| p == "__pycache__/") {
            warnings.push(PolicyWarning::ExcludeLacksPycache);
        }
        warnings
    }

    /// True when `fs_type` (as the mount table spells it) is a network filesystem.
    pub fn is_network_fs(&self, fs_type: &str) -> bool {
        let lower = fs_type.to_ascii_lowercase();
        self.network_fs_types
            .iter()
            .any(|t| t.eq_ignore_ascii_case(&lower))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_policy_has_no_warnings() {
        assert!(ScratchPolicy::default().validate().is_empty());
    }

    #[test]
    fn custom_copy_filter_dropping_jit_and_so_is_warned_not_refused() {
        let mut policy = ScratchPolicy::default();
        policy.copy_ignore.push("jit/".into());
        policy.copy_ignore.push("*.so".into());
        policy.git_exclude.retain(|p| p != "__pycache__/");
        let warnings = policy.validate();
        assert_eq!(
            warnings,
            vec![
                PolicyWarning::CopyDropsImportable {
                    what: "jit/".into()
                },
                PolicyWarning::CopyDropsImportable {
                    what: "*.so".into()
                },
                PolicyWarning::ExcludeLacksPycache,
            ]
        );
    }

    #[test]
    fn drift_sources_are_idents_source_extensions() {
        assert!(is_drift_source(b"core.py"));
        assert!(is_drift_source(b"gemm.cu"));
        assert!(!is_drift_source(b"ext.so"));
        assert!(!is_drift_source(b"py"));
        assert!(!is_drift_source(b"notes.txt"));
    }

    #[test]
    fn network_types_match_case_insensitively() {
        let policy = ScratchPolicy::default();
        assert!(policy.is_network_fs("NFS4"));
        assert!(policy.is_network_fs("fuse.sshfs"));
        assert!(!policy.is_network_fs("ext4"));
        assert!(!policy.is_network_fs("fuse"));
    }
}
