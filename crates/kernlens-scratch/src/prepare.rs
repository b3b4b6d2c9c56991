//! Preparing a workspace: checks, layout, placement and collision, claim, then an atomic build
//! through a partial directory that is published with a no-replace rename.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::baseline::build_baseline;
use crate::branch::{branch_name, check_branch};
use crate::copy::copy_layout;
use crate::error::{PrepareError, ScratchError};
use crate::layout::{check_copy_root, find_layout};
use crate::location::{LocationRequest, ScratchEnv, claim_location, plan_location};
use crate::mounts::MountTable;
use crate::owner::{Liveness, LivenessProbe, OwnerMarker, SystemProbe, marker_liveness};
use crate::policy::ScratchPolicy;
use crate::remove::remove_tree;
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
    /// Test hook: fail right after the copy, to prove a failed build leaves nothing behind.
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
            fail_after_copy: false,
        }
    }
}

/// Prepare a workspace, judging liveness with the real system probe.
pub fn prepare(request: &PrepareRequest) -> Result<Workspace, PrepareError> {
    prepare_with(request, &SystemProbe::new())
}

/// Prepare a workspace with an explicit liveness probe (for the claim's sweep and for stale
/// partials).
pub fn prepare_with(
    request: &PrepareRequest,
    probe: &dyn LivenessProbe,
) -> Result<Workspace, PrepareError> {
    // 1. Checks, before anything touches the disk.
    if !std::fs::metadata(&request.source_file).is_ok_and(|m| m.is_file()) {
        return Err(PrepareError::SourceMissing {
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
    check_copy_root(&layout, request.env.home.as_deref(), &location.worktree)?;
    if std::fs::symlink_metadata(&location.worktree).is_ok() {
        return Err(PrepareError::Collision {
            path: location.worktree.clone(),
        });
    }

    // Only now touch the disk.
    let sweep = claim_location(&location, probe)?;
    let parent = location
        .worktree
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| PrepareError::RefuseCopyRoot {
            root: location.worktree.clone(),
            why: "the worktree has no parent".into(),
        })?;
    std::fs::create_dir_all(&parent)
        .map_err(|e| PrepareError::io("create directory", &parent, e))?;
    remove_stale_partials(&parent, probe);

    // 4. Atomic build.
    let me = OwnerMarker::current();
    let partial = parent.join(format!(
        "{PARTIAL_PREFIX}{}-{}-{:016x}",
        me.pid,
        me.starttime,
        fastrand::u64(..)
    ));
    std::fs::create_dir(&partial)
        .map_err(|e| PrepareError::io("create partial directory", &partial, e))?;
    let built = build_into(&partial, request, &layout, &location, &branch, me);
    let (meta, stats, mut warnings) = match built {
        Ok(ok) => ok,
        Err(e) => {
            let _ = remove_tree(&partial);
            return Err(e);
        }
    };
    if let Err(e) = publish(&partial, &location.worktree) {
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
) -> Result<Built, PrepareError> {
    let copied = copy_layout(layout, partial, &request.policy)?;
    if request.fail_after_copy {
        return Err(PrepareError::io(
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
    let json = serde_json::to_vec_pretty(&meta)
        .map_err(|e| PrepareError::git("write metadata", partial, e))?;
    let meta_path = partial.join(".git").join(META_FILE);
    std::fs::write(&meta_path, json)
        .map_err(|e| PrepareError::io("write metadata", &meta_path, e))?;
    Ok((meta, baseline.stats, copied.warnings))
}

/// Rename `partial` to `worktree` without ever replacing an existing worktree.
fn publish(partial: &Path, worktree: &Path) -> Result<(), PrepareError> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    match renameat_with(CWD, partial, CWD, worktree, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::EXIST) | Err(rustix::io::Errno::NOTEMPTY) => {
            Err(PrepareError::Collision {
                path: worktree.to_path_buf(),
            })
        }
        Err(rustix::io::Errno::INVAL)
        | Err(rustix::io::Errno::NOSYS)
        | Err(rustix::io::Errno::OPNOTSUPP) => {
            // The filesystem lacks RENAME_NOREPLACE: check again, then rename.
            if std::fs::symlink_metadata(worktree).is_ok() {
                return Err(PrepareError::Collision {
                    path: worktree.to_path_buf(),
                });
            }
            std::fs::rename(partial, worktree).map_err(|e| PrepareError::io("publish", worktree, e))
        }
        Err(e) => Err(PrepareError::io("publish", worktree, e.into())),
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
pub fn discard(ws: &Workspace) -> Result<(), ScratchError> {
    let me = OwnerMarker::current();
    if ws.meta.owner != me.to_string() {
        return Err(ScratchError::NotOwner {
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
    remove_tree(&target).map_err(|e| ScratchError::io("remove", &target, e))
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
