//! The orphan sweep: reclaim session directories under the local scratch root whose owner is
//! provably dead, and nothing else.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::error::Error;
use crate::nofollow::open_dir_nofollow;
use crate::owner::{Liveness, LivenessProbe, OWNER_FILE, OWNER_NS_FILE, RELEASED_FILE, liveness};
use crate::remove::remove_dir_at;

/// Prefix of a deletion in progress: `.trash-<name>-<pid>-<nanos>`.
pub const TRASH_PREFIX: &str = ".trash-";

/// Default grace period: a session whose marker was written less than this long ago is kept
/// even when its owner is gone, so a caller that names the wrong owner loses nothing for a day.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(24 * 60 * 60);

/// How a sweep judges sessions: which one to spare, the grace period, and the clock.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SweepOptions {
    /// The session the caller is claiming; never removed.
    pub spare: Option<String>,
    /// Sessions whose marker is younger than this are kept (`kept_recent`) even when dead.
    pub grace: Duration,
    /// "Now" for the grace period; `None` reads the clock when the sweep starts.
    pub now: Option<SystemTime>,
}

impl Default for SweepOptions {
    fn default() -> Self {
        SweepOptions {
            spare: None,
            grace: DEFAULT_GRACE,
            now: None,
        }
    }
}

impl SweepOptions {
    /// Spare the session `name`.
    pub fn with_spare(mut self, name: impl Into<String>) -> Self {
        self.spare = Some(name.into());
        self
    }

    /// Set the grace period.
    pub fn with_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Judge the grace period against `now` instead of the clock.
    pub fn with_now(mut self, now: SystemTime) -> Self {
        self.now = Some(now);
        self
    }
}

/// What a sweep did and left, by path. Every entry of the root lands in exactly one list, so
/// the report says why each kept session was kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SweepReport {
    /// Sessions deleted: their owner is dead past the grace period, or they were released.
    pub removed: Vec<PathBuf>,
    /// Of `removed`, those removed because their owner released them.
    pub released: Vec<PathBuf>,
    /// Earlier, interrupted deletions finished now.
    pub resumed: Vec<PathBuf>,
    /// Sessions whose owner runs.
    pub kept_alive: Vec<PathBuf>,
    /// Sessions whose owner is gone but whose marker is younger than the grace period.
    pub kept_recent: Vec<PathBuf>,
    /// Sessions whose owner could not be judged.
    pub kept_unknown: Vec<PathBuf>,
    /// Sessions without a (parsable) marker: not provably ours.
    pub kept_unowned: Vec<PathBuf>,
    /// Entries that do not look like sessions (files, symlinks, directories without `*/worktree`).
    pub kept_stranger: Vec<PathBuf>,
    /// The session the caller asked to spare.
    pub spared: Vec<PathBuf>,
    /// Problems met inside the root; none aborts the sweep.
    pub errors: Vec<String>,
}

/// What to do with one session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Remove { released: bool },
    KeepAlive,
    KeepRecent,
    KeepUnknown,
    KeepUnowned,
}

/// Judge a session directory: released sessions go; dead ones go once the grace period has
/// passed since their marker was written; everything else stays.
fn verdict(path: &Path, probe: &dyn LivenessProbe, grace: Duration, now: SystemTime) -> Verdict {
    let state = liveness(path, probe);
    let is_file = |name: &str| {
        path.join(name)
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_file())
    };
    // A release counts only beside a marker of ours: a stray `.released` makes nothing ours.
    if is_file(RELEASED_FILE) && !matches!(state, Liveness::Unowned | Liveness::Unknown) {
        return Verdict::Remove { released: true };
    }
    match state {
        Liveness::Alive => Verdict::KeepAlive,
        Liveness::Unknown => Verdict::KeepUnknown,
        Liveness::Unowned => Verdict::KeepUnowned,
        Liveness::Dead => {
            let written = path
                .join(OWNER_FILE)
                .symlink_metadata()
                .and_then(|m| m.modified());
            match written {
                // A marker from the future (clock skew) is as young as can be.
                Ok(t) if now.duration_since(t).map_or(true, |age| age < grace) => {
                    Verdict::KeepRecent
                }
                Ok(_) => Verdict::Remove { released: false },
                Err(_) => Verdict::KeepUnknown,
            }
        }
    }
}

/// Sweep the direct entries of `local_root` by `options`.
///
/// Never recurses except to delete, never follows a symlink, and only deletes a session judged
/// removable twice (before and after deciding). A missing root is an empty report; a root that
/// is not a directory (or cannot be opened or listed) is an error.
pub fn sweep(
    local_root: &Path,
    options: &SweepOptions,
    probe: &dyn LivenessProbe,
) -> Result<SweepReport, Error> {
    let mut report = SweepReport::default();
    let now = options.now.unwrap_or_else(SystemTime::now);
    let root = match local_root.canonicalize() {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(report),
        Err(e) => return Err(Error::io("resolve local root", local_root, e)),
    };
    let root_fd = open_dir_nofollow(&root).map_err(|e| Error::io("open local root", &root, e))?;
    let spare = options.spare.as_deref();
    let spare_canon = spare.and_then(|s| root.join(s).canonicalize().ok());
    let entries = std::fs::read_dir(&root).map_err(|e| Error::io("list local root", &root, e))?;
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
                match remove_dir_at(&root_fd, &name, &MARKERS_LAST) {
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
        match verdict(&path, probe, options.grace, now) {
            Verdict::KeepAlive => report.kept_alive.push(path),
            Verdict::KeepRecent => report.kept_recent.push(path),
            Verdict::KeepUnknown => report.kept_unknown.push(path),
            Verdict::KeepUnowned => report.kept_unowned.push(path),
            Verdict::Remove { released } => {
                // The owner may have been replaced between listing and now; decide again.
                let again = verdict(&path, probe, options.grace, now);
                if again != (Verdict::Remove { released }) {
                    report.kept_alive.push(path);
                } else if delete_session(&root, &root_fd, &name, &mut report) && released {
                    report.released.push(path);
                }
            }
        }
    }
    Ok(report)
}

/// The marker files go last, so an interrupted deletion still proves whose it was.
const MARKERS_LAST: [&str; 3] = [RELEASED_FILE, OWNER_NS_FILE, OWNER_FILE];

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
    report: &mut SweepReport,
) -> bool {
    let path = root.join(name);
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
        return false;
    }
    match remove_dir_at(root_fd, &trash, &MARKERS_LAST) {
        Ok(()) => {
            report.removed.push(path);
            true
        }
        Err(e) => {
            report.errors.push(format!(
                "cannot delete '{}' (left as '{}' for the next sweep): {e}",
                path.display(),
                root.join(&trash).display()
            ));
            false
        }
    }
}
