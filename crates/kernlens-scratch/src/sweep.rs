//! The orphan sweep: reclaim session directories under the local scratch root whose owner is
//! provably dead, and nothing else.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::owner::{Liveness, LivenessProbe, OWNER_FILE, OWNER_NS_FILE, liveness};
use crate::remove::{open_dir_nofollow, remove_dir_at};

/// Prefix of a deletion in progress: `.trash-<name>-<pid>-<nanos>`.
pub const TRASH_PREFIX: &str = ".trash-";

/// What a sweep did and left, by path.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SweepReport {
    /// Dead sessions deleted.
    pub removed: Vec<PathBuf>,
    /// Earlier, interrupted deletions finished now.
    pub resumed: Vec<PathBuf>,
    /// Sessions whose owner runs.
    pub kept_alive: Vec<PathBuf>,
    /// Sessions whose owner could not be judged.
    pub kept_unknown: Vec<PathBuf>,
    /// Sessions without a (parsable) marker: not provably ours.
    pub kept_unowned: Vec<PathBuf>,
    /// Entries that do not look like sessions (files, symlinks, directories without `*/worktree`).
    pub kept_stranger: Vec<PathBuf>,
    /// The session the caller asked to spare.
    pub spared: Vec<PathBuf>,
    /// Problems met; none aborts the sweep.
    pub errors: Vec<String>,
}

/// Sweep the direct entries of `local_root`, sparing the session named `spare`.
///
/// Never recurses except to delete, never follows a symlink, and only deletes a session whose
/// marker says `Dead` twice (before and after deciding). A missing root is an empty report.
pub fn sweep(local_root: &Path, spare: Option<&str>, probe: &dyn LivenessProbe) -> SweepReport {
    let mut report = SweepReport::default();
    let root = match local_root.canonicalize() {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return report,
        Err(e) => {
            report.errors.push(format!(
                "cannot resolve local root '{}': {e}",
                local_root.display()
            ));
            return report;
        }
    };
    let root_fd = match open_dir_nofollow(&root) {
        Ok(fd) => fd,
        Err(e) => {
            report
                .errors
                .push(format!("cannot open local root '{}': {e}", root.display()));
            return report;
        }
    };
    let spare_canon = spare.and_then(|s| root.join(s).canonicalize().ok());
    let entries = match std::fs::read_dir(&root) {
        Ok(it) => it,
        Err(e) => {
            report
                .errors
                .push(format!("cannot list local root '{}': {e}", root.display()));
            return report;
        }
    };
    let mut names: Vec<OsString> = Vec::new();
    for entry in entries {
        match entry {
            Ok(e) => names.push(e.file_name()),
            Err(e) => report
                .errors
                .push(format!("cannot list local root '{}': {e}", root.display())),
        }
    }
    names.sort();
    for name in names {
        let path = root.join(&name);
        let is_dir = match std::fs::symlink_metadata(&path) {
            Ok(m) => m.file_type().is_dir(),
            Err(e) => {
                report
                    .errors
                    .push(format!("cannot stat '{}': {e}", path.display()));
                continue;
            }
        };
        if !is_dir {
            report.kept_stranger.push(path);
            continue;
        }
        let by_name = spare.is_some_and(|s| s.as_bytes() == name.as_bytes());
        let by_path = spare_canon
            .as_ref()
            .is_some_and(|c| path.canonicalize().ok().as_ref() == Some(c));
        if by_name || by_path {
            report.spared.push(path);
            continue;
        }
        if name.as_bytes().starts_with(TRASH_PREFIX.as_bytes()) {
            let resumable = path
                .join(OWNER_FILE)
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_file())
                || std::fs::read_dir(&path).is_ok_and(|mut it| it.next().is_none());
            if resumable {
                match remove_dir_at(&root_fd, &name, &[OWNER_NS_FILE, OWNER_FILE]) {
                    Ok(()) => report.resumed.push(path),
                    Err(e) => report
                        .errors
                        .push(format!("cannot finish deleting '{}': {e}", path.display())),
                }
            } else {
                report.kept_stranger.push(path);
            }
            continue;
        }
        if !looks_like_session(&path) {
            report.kept_stranger.push(path);
            continue;
        }
        match liveness(&path, probe) {
            Liveness::Alive => report.kept_alive.push(path),
            Liveness::Unknown => report.kept_unknown.push(path),
            Liveness::Unowned => report.kept_unowned.push(path),
            Liveness::Dead => delete_session(&root, &root_fd, &name, probe, &mut report),
        }
    }
    report
}

/// A session holds at least one attempt with a `worktree` (or a partial one) directory.
fn looks_like_session(path: &Path) -> bool {
    let Ok(children) = std::fs::read_dir(path) else {
        return false;
    };
    children.flatten().any(|child| {
        child.file_type().is_ok_and(|t| t.is_dir())
            && std::fs::read_dir(child.path()).is_ok_and(|inner| {
                inner.flatten().any(|e| {
                    let n = e.file_name();
                    let n = n.as_bytes();
                    (n == b"worktree" || n.starts_with(b".worktree.partial-"))
                        && e.file_type().is_ok_and(|t| t.is_dir())
                })
            })
    })
}

fn delete_session(
    root: &Path,
    root_fd: &std::os::fd::OwnedFd,
    name: &std::ffi::OsStr,
    probe: &dyn LivenessProbe,
    report: &mut SweepReport,
) {
    let path = root.join(name);
    // The owner may have been replaced between listing and now; decide again.
    if liveness(&path, probe) != Liveness::Dead {
        report.kept_alive.push(path);
        return;
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut trash = OsString::from(TRASH_PREFIX);
    trash.push(name);
    trash.push(format!("-{}-{nanos}", std::process::id()));
    // Both names are single components of the already-open root: containment by construction.
    if let Err(e) = rustix::fs::renameat(root_fd, name, root_fd, trash.as_os_str()) {
        report.errors.push(format!(
            "cannot move '{}' aside for deletion: {e}",
            path.display()
        ));
        return;
    }
    match remove_dir_at(root_fd, &trash, &[OWNER_NS_FILE, OWNER_FILE]) {
        Ok(()) => report.removed.push(path),
        Err(e) => report.errors.push(format!(
            "cannot delete '{}' (left as '{}' for the next sweep): {e}",
            path.display(),
            root.join(&trash).display()
        )),
    }
}
