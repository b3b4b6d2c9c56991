//! Preparing a workspace: checks, layout, placement and collision, claim, then an atomic build
//! through a partial directory that is published with a no-replace rename.

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::baseline::build_baseline;
use crate::branch::{branch_name, check_branch};
use crate::copy::copy_layout;
use crate::error::Error;
use crate::layout::{check_copy_root, find_layout};
use crate::location::{Claim, LocationRequest, ScratchEnv, claim_location_open, plan_location};
use crate::mounts::MountTable;
use crate::nofollow::{PRIVATE_DIR_MODE, make_private, open_root, own_dir_at};
use crate::owner::{Liveness, LivenessProbe, OwnerMarker, SystemProbe, marker_liveness};
use crate::policy::ScratchPolicy;
use crate::remove::remove_tree;
use crate::sweep::SweepOptions;
use crate::workspace::{META_FILE, META_SCHEMA, Workspace, WorkspaceMeta};

/// Prefix of an in-progress build: `.worktree.partial-<pid>-<starttime>-<rand>`.
pub const PARTIAL_PREFIX: &str = ".worktree.partial-";

/// Everything `prepare` needs. Environment and mount table are values, read at the edge.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PrepareRequest {
    /// The kernel source file.
    pub source_file: PathBuf,
    /// A repository directory to copy whole instead of the package.
    pub repo_hint: Option<PathBuf>,
    /// Which attempt of which session.
    pub location: LocationRequest,
    /// Baseline branch; `None` generates one with [`branch_name`].
    pub branch: Option<String>,
    /// Lists and limits.
    pub policy: ScratchPolicy,
    /// Environment values for the local scratch root.
    pub env: ScratchEnv,
    /// The mount table used to detect network output.
    pub mounts: MountTable,
    /// The process that will use the worktree, recorded as the session's owner and in the
    /// metadata; `None` is this process. A short-lived CLI passes its caller (see
    /// [`OwnerMarker::parent`]), since a marker naming the CLI itself is dead at once.
    pub owner: Option<OwnerMarker>,
    /// Grace period and clock for the sweep a relocated claim runs.
    pub sweep: SweepOptions,
    /// Test hook: fail right after the copy, to prove a failed build leaves nothing behind.
    /// Only with the hidden `test-hooks` feature; not public API.
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fail_after_copy: bool,
}

impl PrepareRequest {
    /// A request with the default policy, no branch, an empty environment and an empty mount
    /// table (everything local).
    pub fn new(source_file: impl Into<PathBuf>, location: LocationRequest) -> PrepareRequest {
        PrepareRequest {
            source_file: source_file.into(),
            repo_hint: None,
            location,
            branch: None,
            policy: ScratchPolicy::default(),
            env: ScratchEnv::default(),
            mounts: MountTable::default(),
            owner: None,
            sweep: SweepOptions::default(),
            #[cfg(feature = "test-hooks")]
            fail_after_copy: false,
        }
    }

    /// Copy this repository directory whole instead of the package.
    pub fn with_repo_hint(mut self, repo: Option<PathBuf>) -> Self {
        self.repo_hint = repo;
        self
    }

    /// Use this baseline branch (`None` generates one).
    pub fn with_branch(mut self, branch: Option<String>) -> Self {
        self.branch = branch;
        self
    }

    /// Prepare under this policy.
    pub fn with_policy(mut self, policy: ScratchPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Place the local scratch root by these environment values.
    pub fn with_env(mut self, env: ScratchEnv) -> Self {
        self.env = env;
        self
    }

    /// Detect network output with this mount table.
    pub fn with_mounts(mut self, mounts: MountTable) -> Self {
        self.mounts = mounts;
        self
    }

    /// Record `owner` as the session's owner instead of this process.
    pub fn with_owner(mut self, owner: OwnerMarker) -> Self {
        self.owner = Some(owner);
        self
    }

    /// Sweep the local root with these options when claiming a relocated location.
    pub fn with_sweep(mut self, sweep: SweepOptions) -> Self {
        self.sweep = sweep;
        self
    }
}

/// Prepare a workspace, judging liveness with the real system probe.
pub fn prepare(request: &PrepareRequest) -> Result<Workspace, Error> {
    prepare_with(request, &SystemProbe::new())
}

/// Prepare a workspace with an explicit liveness probe (for the claim's sweep and for stale
/// partials).
pub fn prepare_with(
    request: &PrepareRequest,
    probe: &dyn LivenessProbe,
) -> Result<Workspace, Error> {
    // 1. Checks, before anything touches the disk.
    if !std::fs::metadata(&request.source_file).is_ok_and(|m| m.is_file()) {
        return Err(Error::SourceMissing {
            path: request.source_file.clone(),
        });
    }
    let branch = match &request.branch {
        Some(b) => check_branch(b, &request.policy)?,
        None => {
            let (session, _) = request.location.names()?;
            let stem = request
                .source_file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let mut rng = fastrand::Rng::new();
            check_branch(&branch_name(&session, &stem, &mut rng), &request.policy)?
        }
    };

    // 2. Layout, 3. location and collision: all pure.
    let layout = find_layout(&request.source_file, request.repo_hint.as_deref())?;
    let location = plan_location(
        &request.location,
        &request.env,
        &request.mounts,
        &request.policy,
    )?;
    check_copy_root(&layout, &request.env, &location.worktree)?;
    if std::fs::symlink_metadata(&location.worktree).is_ok() {
        return Err(Error::Collision {
            path: location.worktree.clone(),
        });
    }

    // Only now touch the disk.
    let me = OwnerMarker::current();
    let owner = request.owner.unwrap_or(me);
    let claim = Claim::new(owner).with_sweep(request.sweep.clone());
    let (session_fd, sweep) = claim_location_open(&location, &claim, probe)?;
    let parent = location
        .worktree
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| Error::RefuseCopyRoot {
            root: location.worktree.clone(),
            why: "the worktree has no parent".into(),
        })?;
    let attempt_fd = open_attempt_dir(&location, session_fd.as_ref(), &parent)?;
    remove_stale_partials(&parent, probe);

    // 4. Atomic build.
    let partial_name = format!(
        "{PARTIAL_PREFIX}{}-{}-{:016x}",
        me.pid,
        me.starttime,
        fastrand::u64(..)
    );
    let partial = parent.join(&partial_name);
    rustix::fs::mkdirat(
        &attempt_fd,
        partial_name.as_str(),
        rustix::fs::Mode::from_raw_mode(PRIVATE_DIR_MODE),
    )
    .map_err(|e| Error::io("create partial directory", &partial, e.into()))?;
    let built = build_into(&partial, request, &layout, &location, &branch, owner);
    let (meta, stats, mut warnings) = match built {
        Ok(ok) => ok,
        Err(e) => {
            let _ = remove_tree(&partial);
            return Err(e);
        }
    };
    if let Err(e) = publish(&attempt_fd, &partial_name, &location.worktree) {
        let _ = remove_tree(&partial);
        return Err(e);
    }
    let mut all_warnings: Vec<String> = request
        .policy
        .validate()
        .into_iter()
        .map(|w| match w {
            crate::policy::PolicyWarning::CopyDropsImportable { what } => {
                format!("policy_copy_drops_importable: the copy filter drops {what}")
            }
            crate::policy::PolicyWarning::ExcludeLacksPycache => {
                "policy_exclude_lacks_pycache: bytecode may enter the baseline".to_owned()
            }
        })
        .collect();
    all_warnings.extend(location.warnings.iter().cloned());
    all_warnings.extend(layout.warnings.iter().cloned());
    all_warnings.append(&mut warnings);
    let mut ws = Workspace::from_meta(meta, location.worktree.clone(), all_warnings);
    ws.sweep = sweep;
    ws.baseline_stats = Some(stats);
    Ok(ws)
}

type Built = (WorkspaceMeta, crate::baseline::BaselineStats, Vec<String>);

fn build_into(
    partial: &Path,
    request: &PrepareRequest,
    layout: &crate::layout::Layout,
    location: &crate::location::ScratchLocation,
    branch: &str,
    me: OwnerMarker,
) -> Result<Built, Error> {
    let copied = copy_layout(layout, partial, &request.policy)?;
    #[cfg(feature = "test-hooks")]
    if request.fail_after_copy {
        return Err(Error::io(
            "continue after copying into",
            partial,
            std::io::Error::other("failure injected by the test hook"),
        ));
    }
    let baseline = build_baseline(partial, branch, &request.policy, &copied.drift)?;
    let meta = WorkspaceMeta {
        schema: META_SCHEMA.to_owned(),
        session: location.session.clone(),
        attempt: location.attempt.clone(),
        output_dir: location.output_dir.clone(),
        source_file: std::path::absolute(&request.source_file)
            .unwrap_or_else(|_| request.source_file.clone()),
        layout_root: layout.layout_root.clone(),
        kernel_rel: layout.kernel_rel.clone(),
        branch: branch.to_owned(),
        base_commit: baseline.commit.to_string(),
        owner: me.to_string(),
        created_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        copy_ignore: request.policy.copy_ignore.clone(),
        git_exclude: request.policy.git_exclude.clone(),
        relocated: location.relocated,
    };
    let json =
        serde_json::to_vec_pretty(&meta).map_err(|e| Error::git("write metadata", partial, e))?;
    let meta_path = partial.join(".git").join(META_FILE);
    std::fs::write(&meta_path, json).map_err(|e| Error::io("write metadata", &meta_path, e))?;
    Ok((meta, baseline.stats, copied.warnings))
}

/// Open (creating as needed) the directory that holds the worktree. Relocated: the attempt
/// directory inside the claimed session directory, made 0700 and never a followed link.
/// Beside the output: the output directory, whose missing ancestors are created 0700 and whose
/// last component must not be a symlink (an existing directory keeps its mode: it is the
/// caller's).
fn open_attempt_dir(
    location: &crate::location::ScratchLocation,
    session_fd: Option<&OwnedFd>,
    parent: &Path,
) -> Result<OwnedFd, Error> {
    let create = |e| Error::io("create directory", parent, e);
    if let Some(session_fd) = session_fd {
        let fd = own_dir_at(session_fd, OsStr::new(&location.attempt)).map_err(create)?;
        make_private(&fd, parent).map_err(|e| Error::io("claim directory", parent, e))?;
        return Ok(fd);
    }
    match (parent.parent(), parent.file_name()) {
        (Some(up), Some(name)) => {
            let up_fd = open_root(up).map_err(create)?;
            own_dir_at(&up_fd, name).map_err(create)
        }
        _ => open_root(parent).map_err(create),
    }
}

/// Rename `partial_name` to `worktree` inside the open directory without ever replacing an
/// existing worktree.
fn publish(dir: &OwnedFd, partial_name: &str, worktree: &Path) -> Result<(), Error> {
    use rustix::fs::{RenameFlags, renameat_with};
    const WORKTREE: &str = "worktree";
    match renameat_with(dir, partial_name, dir, WORKTREE, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::EXIST) | Err(rustix::io::Errno::NOTEMPTY) => Err(Error::Collision {
            path: worktree.to_path_buf(),
        }),
        Err(rustix::io::Errno::INVAL)
        | Err(rustix::io::Errno::NOSYS)
        | Err(rustix::io::Errno::OPNOTSUPP) => {
            // The filesystem lacks RENAME_NOREPLACE: check again, then rename.
            if rustix::fs::statat(dir, WORKTREE, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok() {
                return Err(Error::Collision {
                    path: worktree.to_path_buf(),
                });
            }
            rustix::fs::renameat(dir, partial_name, dir, WORKTREE)
                .map_err(|e| Error::io("publish", worktree, e.into()))
        }
        Err(e) => Err(Error::io("publish", worktree, e.into())),
    }
}

/// Parse `<pid>-<starttime>-<rand>` after the partial prefix.
fn partial_owner(name: &[u8]) -> Option<OwnerMarker> {
    let rest = std::str::from_utf8(name.strip_prefix(PARTIAL_PREFIX.as_bytes())?).ok()?;
    let mut parts = rest.splitn(3, '-');
    let pid = parts.next()?;
    let start = parts.next()?;
    parts.next()?;
    OwnerMarker::parse(&format!("{pid}:{start}"))
}

/// Remove partial builds in `parent` whose encoded owner is dead. The name is the marker.
fn remove_stale_partials(parent: &Path, probe: &dyn LivenessProbe) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(parent) else {
        return removed;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = partial_owner(name.as_bytes()) else {
            continue;
        };
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        if marker_liveness(owner, probe) == Liveness::Dead && remove_tree(&entry.path()).is_ok() {
            removed.push(entry.path());
        }
    }
    removed
}

/// Remove a workspace, only when its metadata names this process as owner. For a relocated
/// workspace the attempt directory goes and the session marker stays.
pub fn discard(ws: &Workspace) -> Result<(), Error> {
    let me = OwnerMarker::current();
    if ws.meta.owner != me.to_string() {
        return Err(Error::NotOwner {
            path: ws.worktree.clone(),
            owner: ws.meta.owner.clone(),
        });
    }
    let target = if ws.meta.relocated {
        ws.worktree
            .parent()
            .map_or_else(|| ws.worktree.clone(), Path::to_path_buf)
    } else {
        ws.worktree.clone()
    };
    remove_tree(&target).map_err(|e| Error::io("remove", &target, e))
}

/// Mark a relocated workspace's session done: write `<session_dir>/.released`, so the next sweep
/// removes the session whatever its owner's liveness and the grace period (a later claim of the
/// same session clears it). Returns the session directory, or `None` for a workspace beside
/// its output, which the crate never deletes and so has nothing to release. A session without
/// an owner marker is not ours to release.
pub fn release(ws: &Workspace) -> Result<Option<PathBuf>, Error> {
    if !ws.meta.relocated {
        return Ok(None);
    }
    let Some(session_dir) = ws.worktree.parent().and_then(Path::parent) else {
        return Err(Error::NotAWorkspace {
            path: ws.worktree.clone(),
            why: "a relocated worktree must sit at <local_root>/<session>/<attempt>/worktree"
                .into(),
        });
    };
    let fd = crate::nofollow::open_dir_nofollow(session_dir)
        .map_err(|e| Error::io("open session directory", session_dir, e))?;
    match OwnerMarker::read_from(session_dir) {
        Ok(Some(_)) => {}
        Ok(None) => {
            return Err(Error::NotAWorkspace {
                path: session_dir.to_path_buf(),
                why: "the session has no owner marker, so it is not ours to release".into(),
            });
        }
        Err(e) => return Err(Error::io("read owner marker in", session_dir, e)),
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    crate::nofollow::write_atomic_at(
        &fd,
        OsStr::new(crate::owner::RELEASED_FILE),
        format!("released_unix={now}\n").as_bytes(),
        0o600,
        crate::nofollow::Durability::Sync,
    )
    .map_err(|e| Error::io("write release record in", session_dir, e))?;
    Ok(Some(session_dir.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_names_encode_their_owner() {
        assert_eq!(
            partial_owner(b".worktree.partial-12-34-00ff"),
            Some(OwnerMarker {
                pid: 12,
                starttime: 34
            })
        );
        assert_eq!(partial_owner(b".worktree.partial-12-34"), None);
        assert_eq!(partial_owner(b"worktree"), None);
    }
}
