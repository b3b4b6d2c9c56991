//! The walk that decides what git tracks: the exclude rules applied while walking, so an excluded
//! directory is never entered and an excluded file is never opened.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::pattern::PathFilter;

/// The kind of a tracked path, as git records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum TrackedKind {
    /// 100644
    File,
    /// 100755
    Executable,
    /// 120000
    Link,
}

impl TrackedKind {
    pub(crate) fn entry_kind(self) -> gix::objs::tree::EntryKind {
        match self {
            TrackedKind::File => gix::objs::tree::EntryKind::Blob,
            TrackedKind::Executable => gix::objs::tree::EntryKind::BlobExecutable,
            TrackedKind::Link => gix::objs::tree::EntryKind::Link,
        }
    }

    pub(crate) fn from_entry_kind(kind: gix::objs::tree::EntryKind) -> Option<TrackedKind> {
        match kind {
            gix::objs::tree::EntryKind::Blob => Some(TrackedKind::File),
            gix::objs::tree::EntryKind::BlobExecutable => Some(TrackedKind::Executable),
            gix::objs::tree::EntryKind::Link => Some(TrackedKind::Link),
            _ => None,
        }
    }

    pub(crate) fn octal(self) -> &'static str {
        match self {
            TrackedKind::File => "100644",
            TrackedKind::Executable => "100755",
            TrackedKind::Link => "120000",
        }
    }
}

/// One path git would track.
#[derive(Debug, Clone)]
pub(crate) struct TrackedPath {
    pub rel: Vec<u8>,
    pub abs: PathBuf,
    pub kind: TrackedKind,
}

/// Counters that show the walk kept its promise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct WalkStats {
    /// Directories pruned by the exclude rules without being listed.
    pub excluded_dirs_pruned: u64,
    /// Files skipped by the exclude rules without being opened.
    pub excluded_files_skipped: u64,
    /// Excluded directories that were listed anyway (always 0; counted where listing happens).
    pub excluded_dirs_entered: u64,
    /// Bytes read from excluded files (always 0; counted where reading happens).
    pub excluded_bytes_read: u64,
}

/// Walk `root`, skipping `.git` and anything `exclude` matches. Paths are sorted byte-wise.
pub(crate) fn walk_tracked(
    root: &Path,
    exclude: &PathFilter,
) -> std::io::Result<(Vec<TrackedPath>, WalkStats)> {
    let mut out = Vec::new();
    let mut stats = WalkStats::default();
    walk_dir(root, &mut Vec::new(), exclude, false, &mut out, &mut stats)?;
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok((out, stats))
}

fn walk_dir(
    dir: &Path,
    rel: &mut Vec<u8>,
    exclude: &PathFilter,
    dir_is_excluded: bool,
    out: &mut Vec<TrackedPath>,
    stats: &mut WalkStats,
) -> std::io::Result<()> {
    if dir_is_excluded {
        stats.excluded_dirs_entered += 1;
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if name.as_bytes() == b".git" {
            continue;
        }
        let meta = entry.metadata()?;
        let base = rel.len();
        if !rel.is_empty() {
            rel.push(b'/');
        }
        rel.extend_from_slice(name.as_bytes());
        let ft = meta.file_type();
        if ft.is_dir() {
            if exclude.is_excluded(rel, true) {
                stats.excluded_dirs_pruned += 1;
            } else {
                walk_dir(&entry.path(), rel, exclude, false, out, stats)?;
            }
        } else if ft.is_file() || ft.is_symlink() {
            if exclude.is_excluded(rel, false) {
                stats.excluded_files_skipped += 1;
            } else {
                let kind = if ft.is_symlink() {
                    TrackedKind::Link
                } else if meta.permissions().mode() & 0o100 != 0 {
                    TrackedKind::Executable
                } else {
                    TrackedKind::File
                };
                out.push(TrackedPath {
                    rel: rel.clone(),
                    abs: entry.path(),
                    kind,
                });
            }
        }
        rel.truncate(base);
    }
    Ok(())
}

/// The bytes git stores for a tracked path: file contents, or a link's target text.
pub(crate) fn tracked_content(path: &Path, kind: TrackedKind) -> std::io::Result<Vec<u8>> {
    match kind {
        TrackedKind::Link => Ok(std::fs::read_link(path)?.as_os_str().as_bytes().to_vec()),
        TrackedKind::File | TrackedKind::Executable => std::fs::read(path),
    }
}
