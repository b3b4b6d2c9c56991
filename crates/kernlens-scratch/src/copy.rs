//! Copying a layout into a partial directory: the copy filter applied while walking, symlinks
//! recreated as links and never followed, permissions and mtimes kept.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;
use serde::Serialize;

use crate::error::PrepareError;
use crate::layout::{Layout, LayoutMode};
use crate::pattern::PathFilter;
use crate::policy::{ScratchPolicy, is_drift_source};

/// One source file under a git-excluded directory, recorded so later edits to it are reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DriftEntry {
    /// Path relative to the worktree, `/`-separated.
    pub rel: String,
    /// Size in bytes at copy time.
    pub size: u64,
    /// Modification time at copy time, in nanoseconds since the epoch.
    pub mtime_ns: i128,
}

/// What the copy did.
#[derive(Debug, Clone, Default)]
pub(crate) struct CopyOutcome {
    pub bytes: u64,
    pub files: u64,
    pub links: u64,
    pub warnings: Vec<String>,
    pub drift: Vec<DriftEntry>,
}

enum Item {
    File { src: PathBuf, dst: PathBuf },
    Link { src: PathBuf, dst: PathBuf },
}

struct Walk<'a> {
    copy: PathFilter,
    exclude: PathFilter,
    max: u64,
    root: &'a Path,
    dirs: Vec<PathBuf>,
    items: Vec<Item>,
    bytes: u64,
    outcome: CopyOutcome,
}

/// Modification time in nanoseconds since the epoch, as the drift manifest records it.
pub(crate) fn mtime_ns(meta: &std::fs::Metadata) -> i128 {
    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec())
}

impl Walk<'_> {
    /// Visit `src` (already known to pass the copy filter) whose worktree-relative path is `rel`.
    fn visit(
        &mut self,
        src: &Path,
        dst: &Path,
        rel: &[u8],
        meta: &std::fs::Metadata,
        under_excluded: bool,
    ) -> Result<(), PrepareError> {
        let ft = meta.file_type();
        if ft.is_symlink() {
            self.items.push(Item::Link {
                src: src.to_path_buf(),
                dst: dst.to_path_buf(),
            });
        } else if ft.is_dir() {
            self.dirs.push(dst.to_path_buf());
            let excluded_here =
                under_excluded || (!rel.is_empty() && self.exclude.is_excluded(rel, true));
            let entries = std::fs::read_dir(src).map_err(|e| PrepareError::io("list", src, e))?;
            let mut children: Vec<(OsString, std::fs::Metadata)> = Vec::new();
            for entry in entries {
                let entry = entry.map_err(|e| PrepareError::io("list", src, e))?;
                let meta = entry
                    .metadata()
                    .map_err(|e| PrepareError::io("stat", entry.path(), e))?;
                children.push((entry.file_name(), meta));
            }
            children.sort_by(|a, b| a.0.cmp(&b.0));
            for (name, child_meta) in children {
                let mut child_rel = rel.to_vec();
                if !child_rel.is_empty() {
                    child_rel.push(b'/');
                }
                child_rel.extend_from_slice(name.as_bytes());
                if self.copy.is_excluded(&child_rel, child_meta.is_dir()) {
                    continue;
                }
                self.visit(
                    &src.join(&name),
                    &dst.join(&name),
                    &child_rel,
                    &child_meta,
                    excluded_here,
                )?;
            }
        } else if ft.is_file() {
            self.bytes += meta.len();
            if self.bytes > self.max {
                return Err(PrepareError::CopyTooLarge {
                    root: self.root.to_path_buf(),
                    limit: self.max,
                });
            }
            let name_start = rel.iter().rposition(|b| *b == b'/').map_or(0, |p| p + 1);
            if under_excluded && is_drift_source(&rel[name_start..]) {
                self.outcome.drift.push(DriftEntry {
                    rel: String::from_utf8_lossy(rel).into_owned(),
                    size: meta.len(),
                    mtime_ns: mtime_ns(meta),
                });
            }
            self.items.push(Item::File {
                src: src.to_path_buf(),
                dst: dst.to_path_buf(),
            });
        } else {
            self.outcome.warnings.push(format!(
                "skipped_special_file: '{}' is a socket, FIFO or device",
                src.display()
            ));
        }
        Ok(())
    }
}

/// Set `dst`'s mtime (and atime) to `meta`'s without following a symlink.
fn keep_times(dst: &Path, meta: &std::fs::Metadata) -> std::io::Result<()> {
    let ts = |s: i64, ns: i64| rustix::fs::Timespec {
        tv_sec: s,
        tv_nsec: ns as _,
    };
    let times = rustix::fs::Timestamps {
        last_access: ts(meta.atime(), meta.atime_nsec()),
        last_modification: ts(meta.mtime(), meta.mtime_nsec()),
    };
    rustix::fs::utimensat(
        rustix::fs::CWD,
        dst,
        &times,
        rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
    )?;
    Ok(())
}

fn copy_item(item: &Item, copied: &AtomicU64) -> Result<(), PrepareError> {
    match item {
        Item::Link { src, dst } => {
            // Byte-identical target text; the target itself is never read.
            let target =
                std::fs::read_link(src).map_err(|e| PrepareError::io("read link", src, e))?;
            std::os::unix::fs::symlink(&target, dst)
                .map_err(|e| PrepareError::io("create link", dst, e))?;
        }
        Item::File { src, dst } => {
            // std's copy uses copy_file_range (a reflink where the filesystem offers one) and keeps
            // the permission bits.
            let n = std::fs::copy(src, dst).map_err(|e| PrepareError::io("copy", src, e))?;
            copied.fetch_add(n, Ordering::Relaxed);
            let meta =
                std::fs::symlink_metadata(src).map_err(|e| PrepareError::io("stat", src, e))?;
            keep_times(dst, &meta).map_err(|e| PrepareError::io("set times of", dst, e))?;
        }
    }
    Ok(())
}

/// Copy `layout` into the (existing, empty) directory `dest`.
pub(crate) fn copy_layout(
    layout: &Layout,
    dest: &Path,
    policy: &ScratchPolicy,
) -> Result<CopyOutcome, PrepareError> {
    let mut walk = Walk {
        copy: PathFilter::new(&policy.copy_ignore),
        exclude: PathFilter::new(&policy.git_exclude),
        max: policy.max_copy_bytes,
        root: &layout.copy_root,
        dirs: Vec::new(),
        items: Vec::new(),
        bytes: 0,
        outcome: CopyOutcome::default(),
    };
    let root = &layout.copy_root;
    let root_meta =
        std::fs::symlink_metadata(root).map_err(|e| PrepareError::io("stat", root, e))?;
    match layout.mode {
        LayoutMode::Package | LayoutMode::SingleFile => {
            let name = root
                .file_name()
                .map(|n| n.as_bytes().to_vec())
                .unwrap_or_default();
            let target = dest.join(OsString::from_vec(name.clone()));
            if !walk.copy.is_excluded(&name, root_meta.is_dir()) {
                walk.visit(root, &target, &name, &root_meta, false)?;
            }
            for companion in &layout.companions {
                let name = companion
                    .file_name()
                    .map(|n| n.as_bytes().to_vec())
                    .unwrap_or_default();
                let meta = std::fs::symlink_metadata(companion)
                    .map_err(|e| PrepareError::io("stat", companion, e))?;
                if !name.is_empty() && !walk.copy.is_excluded(&name, meta.is_dir()) {
                    walk.visit(
                        companion,
                        &dest.join(OsString::from_vec(name.clone())),
                        &name,
                        &meta,
                        false,
                    )?;
                }
            }
        }
        LayoutMode::Directory | LayoutMode::Repo => {
            // The root's contents go flat into `dest`, which exists already.
            walk.visit(root, dest, b"", &root_meta, false)?;
            walk.dirs.retain(|d| d != dest);
        }
    }
    for dir in &walk.dirs {
        std::fs::create_dir(dir).map_err(|e| PrepareError::io("create directory", dir, e))?;
    }
    let copied = AtomicU64::new(0);
    walk.items
        .par_iter()
        .try_for_each(|item| copy_item(item, &copied))?;
    let mut outcome = walk.outcome;
    outcome.bytes = copied.into_inner();
    for item in &walk.items {
        match item {
            Item::File { .. } => outcome.files += 1,
            Item::Link { .. } => outcome.links += 1,
        }
    }
    Ok(outcome)
}
