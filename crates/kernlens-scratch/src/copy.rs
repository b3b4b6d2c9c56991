//! Copying a layout into a partial directory: the copy filter applied while walking, symlinks
//! recreated as links and never followed, permissions and mtimes kept.

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{Mode, OFlags};

use rayon::prelude::*;
use serde::Serialize;

use crate::error::Error;
use crate::layout::{Layout, LayoutMode};
use crate::pattern::PathFilter;
use crate::policy::{ScratchPolicy, is_drift_source};

/// One source file under a git-excluded directory, recorded so later edits to it are reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
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
    ) -> Result<(), Error> {
        let ft = meta.file_type();
        if ft.is_symlink() {
            if let Ok(target) = std::fs::read_link(src)
                && link_leaves_tree(rel, &target)
            {
                self.outcome.warnings.push(format!(
                    "link_outside_copy: '{}' is a link to '{}', outside the copied tree; it stays a link, so writes through it would land outside the scratch copy",
                    String::from_utf8_lossy(rel),
                    target.display()
                ));
            }
            self.items.push(Item::Link {
                src: src.to_path_buf(),
                dst: dst.to_path_buf(),
            });
        } else if ft.is_dir() {
            self.dirs.push(dst.to_path_buf());
            let excluded_here =
                under_excluded || (!rel.is_empty() && self.exclude.is_excluded(rel, true));
            let entries = std::fs::read_dir(src).map_err(|e| Error::io("list", src, e))?;
            let mut children: Vec<(OsString, std::fs::Metadata)> = Vec::new();
            for entry in entries {
                let entry = entry.map_err(|e| Error::io("list", src, e))?;
                let meta = entry
                    .metadata()
                    .map_err(|e| Error::io("stat", entry.path(), e))?;
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
            // Allocated size: a sparse file costs what its data takes, and is copied sparsely.
            self.bytes = self.bytes.saturating_add(meta.blocks().saturating_mul(512));
            if self.bytes > self.max {
                return Err(Error::CopyTooLarge {
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

/// Whether a link at worktree-relative `rel` whose target text is `target` can resolve outside
/// the copied tree: an absolute target, or a relative one whose `..` climbs above the top.
fn link_leaves_tree(rel: &[u8], target: &Path) -> bool {
    if target.is_absolute() {
        return true;
    }
    // The link's directory depth below the worktree top.
    let mut depth = rel.iter().filter(|b| **b == b'/').count();
    for component in target.components() {
        match component {
            Component::ParentDir => {
                if depth == 0 {
                    return true;
                }
                depth -= 1;
            }
            Component::Normal(_) => depth += 1,
            _ => {}
        }
    }
    false
}

/// Copy the regular file `src` to the new file `dst`: opened without following a link (one
/// swapped in since the walk is an error, never a read of its target), data ranges only, so
/// holes stay holes (`SEEK_DATA`/`SEEK_HOLE`), through `copy_file_range` (a reflink where the
/// filesystem offers one) with a read/write fallback. Keeps permission bits and times. Returns
/// the data bytes copied.
fn copy_file(src: &Path, dst: &Path) -> Result<u64, Error> {
    let from = rustix::fs::open(
        src,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| Error::io("open", src, e.into()))?;
    let st = rustix::fs::fstat(&from).map_err(|e| Error::io("stat", src, e.into()))?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(Error::io(
            "copy",
            src,
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "it is no longer a regular file",
            ),
        ));
    }
    let to = rustix::fs::open(
        dst,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .map_err(|e| Error::io("create", dst, e.into()))?;
    let size = u64::try_from(st.st_size).unwrap_or(0);
    let copied = copy_data(&from, &to, size).map_err(|e| Error::io("copy", src, e))?;
    // Holes at the end leave the length short: setting it allocates nothing.
    rustix::fs::ftruncate(&to, size).map_err(|e| Error::io("size", dst, e.into()))?;
    rustix::fs::fchmod(&to, Mode::from_raw_mode(st.st_mode & 0o7777))
        .map_err(|e| Error::io("set mode of", dst, e.into()))?;
    let ts = |s: i64, ns: i64| rustix::fs::Timespec {
        tv_sec: s,
        tv_nsec: ns as _,
    };
    let times = rustix::fs::Timestamps {
        last_access: ts(st.st_atime as i64, st.st_atime_nsec as i64),
        last_modification: ts(st.st_mtime as i64, st.st_mtime_nsec as i64),
    };
    rustix::fs::futimens(&to, &times).map_err(|e| Error::io("set times of", dst, e.into()))?;
    Ok(copied)
}

/// The data ranges of `from` (`size` bytes long) as `(start, end)` pairs, by `SEEK_DATA` and
/// `SEEK_HOLE`; the whole file where the filesystem cannot say.
fn data_ranges(from: &OwnedFd, size: u64) -> Vec<(u64, u64)> {
    use rustix::fs::SeekFrom;
    let mut ranges = Vec::new();
    let mut pos = 0u64;
    while pos < size {
        let start = match rustix::fs::seek(from, SeekFrom::Data(pos)) {
            Ok(s) => s,
            // ENXIO: no data after `pos`, only a hole to the end.
            Err(rustix::io::Errno::NXIO) => break,
            Err(_) => return vec![(0, size)],
        };
        let end = rustix::fs::seek(from, SeekFrom::Hole(start)).map_or(size, |e| e.min(size));
        if end <= start {
            break;
        }
        ranges.push((start, end));
        pos = end;
    }
    ranges
}

/// Copy `from`'s data ranges to the same offsets of `to`.
fn copy_data(from: &OwnedFd, to: &OwnedFd, size: u64) -> std::io::Result<u64> {
    let mut copied = 0u64;
    let mut kernel_copy = true;
    let mut buf = Vec::new();
    for (start, end) in data_ranges(from, size) {
        let mut off_in = start;
        let mut off_out = start;
        while off_in < end {
            let want = usize::try_from(end - off_in)
                .unwrap_or(usize::MAX)
                .min(1 << 30);
            if kernel_copy {
                match rustix::fs::copy_file_range(
                    from,
                    Some(&mut off_in),
                    to,
                    Some(&mut off_out),
                    want,
                ) {
                    // The file shrank under us: stop at what is there.
                    Ok(0) => break,
                    Ok(n) => {
                        copied += n as u64;
                        continue;
                    }
                    // Not offered between these files: fall back to plain reads and writes.
                    Err(
                        rustix::io::Errno::XDEV
                        | rustix::io::Errno::NOSYS
                        | rustix::io::Errno::INVAL
                        | rustix::io::Errno::OPNOTSUPP
                        | rustix::io::Errno::PERM,
                    ) => kernel_copy = false,
                    Err(e) => return Err(e.into()),
                }
            }
            buf.resize(want.min(1 << 20), 0);
            let n = rustix::io::pread(from, &mut buf[..], off_in)?;
            if n == 0 {
                break;
            }
            let mut written = 0;
            while written < n {
                written += rustix::io::pwrite(to, &buf[written..n], off_out + written as u64)?;
            }
            off_in += n as u64;
            off_out += n as u64;
            copied += n as u64;
        }
    }
    Ok(copied)
}

fn copy_item(item: &Item, copied: &AtomicU64) -> Result<(), Error> {
    match item {
        Item::Link { src, dst } => {
            // Byte-identical target text; the target itself is never read.
            let target = std::fs::read_link(src).map_err(|e| Error::io("read link", src, e))?;
            std::os::unix::fs::symlink(&target, dst)
                .map_err(|e| Error::io("create link", dst, e))?;
        }
        Item::File { src, dst } => {
            let n = copy_file(src, dst)?;
            copied.fetch_add(n, Ordering::Relaxed);
        }
    }
    Ok(())
}

/// Copy `layout` into the (existing, empty) directory `dest`.
pub(crate) fn copy_layout(
    layout: &Layout,
    dest: &Path,
    policy: &ScratchPolicy,
) -> Result<CopyOutcome, Error> {
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
    let root_meta = std::fs::symlink_metadata(root).map_err(|e| Error::io("stat", root, e))?;
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
                    .map_err(|e| Error::io("stat", companion, e))?;
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
        std::fs::create_dir(dir).map_err(|e| Error::io("create directory", dir, e))?;
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
