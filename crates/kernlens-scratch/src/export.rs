//! Export: the kernel file, per-file copies, the patch, a manifest, and a drift report for edits
//! under excluded paths that the patch cannot carry.

use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::baseline::read_drift_manifest;
use crate::changes::{Change, ChangeStatus, classify, compare, rel_path};
use crate::copy::{DriftEntry, mtime_ns};
use crate::error::Error;
use crate::nofollow::{open_root, own_dir_at, read_nofollow, write_atomic_below};
use crate::patch::write_patch;
use crate::pattern::PathFilter;
use crate::policy::is_drift_source;
use crate::workspace::Workspace;

/// Schema tag of `export.json`.
pub const EXPORT_SCHEMA: &str = "kernlens.scratch-export/1";

/// What to export.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExportRequest {
    /// Export this commit instead of the worktree.
    pub best: Option<String>,
    /// Where to write; defaults to `<output_dir>/optimized_versions/`.
    pub out_dir: Option<PathBuf>,
}

impl ExportRequest {
    /// Export `best` (or the worktree) into `out_dir` (or the default).
    pub fn new(best: Option<String>, out_dir: Option<PathBuf>) -> ExportRequest {
        ExportRequest { best, out_dir }
    }

    /// The same request exporting commit `best` (or the worktree, for `None`).
    pub fn with_best(mut self, best: Option<String>) -> Self {
        self.best = best;
        self
    }

    /// The same request writing into `out_dir` (or the default, for `None`).
    pub fn with_out_dir(mut self, out_dir: Option<PathBuf>) -> Self {
        self.out_dir = out_dir;
        self
    }
}

/// How an excluded source file drifted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DriftState {
    /// Size or mtime differ from prepare time.
    Changed,
    /// New since prepare time.
    Appeared,
    /// Gone since prepare time.
    Vanished,
}

/// One edit under an excluded path: reported, copied, never in the patch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DriftItem {
    /// Path relative to the worktree.
    pub path: String,
    /// How it drifted.
    pub state: DriftState,
}

/// The export manifest (`export.json`) plus where it was written.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ExportReport {
    /// Always [`EXPORT_SCHEMA`].
    pub schema: &'static str,
    /// The baseline commit.
    pub base_commit: String,
    /// The exported commit, if any.
    pub best: Option<String>,
    /// What changed.
    pub changes: Vec<Change>,
    /// Size of `scratch.patch` (0 when none was written).
    pub patch_bytes: u64,
    /// Warnings.
    pub warnings: Vec<String>,
    /// Edits under excluded paths.
    pub excluded_drift: Vec<DriftItem>,
    /// The directory written.
    pub out_dir: PathBuf,
}

/// The export directory, open: its parent is the caller's (created if missing, links followed),
/// the directory itself is created 0700 and must not be a symlink.
struct OutDir {
    path: PathBuf,
    fd: OwnedFd,
}

impl OutDir {
    fn open(path: &Path) -> Result<OutDir, Error> {
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let create = |e| Error::io("create directory", &path, e);
        let fd = match (path.parent(), path.file_name()) {
            (Some(up), Some(name)) => own_dir_at(&open_root(up).map_err(create)?, name),
            _ => open_root(&path),
        }
        .map_err(create)?;
        Ok(OutDir { path, fd })
    }

    /// Write `rel` below the directory atomically (temp file, fsync, rename); a symlink at the
    /// target is replaced, a symlinked directory on the way is refused.
    fn write(&self, rel: &Path, bytes: &[u8]) -> Result<(), Error> {
        write_atomic_below(&self.fd, rel, bytes, 0o644)
            .map_err(|e| Error::io("write", self.path.join(rel), e))
    }
}

/// Source files under excluded directories now, with size and mtime.
fn excluded_sources(root: &Path, exclude: &PathFilter) -> Vec<DriftEntry> {
    let mut out = Vec::new();
    let mut stack: Vec<(PathBuf, Vec<u8>, bool)> = vec![(root.to_path_buf(), Vec::new(), false)];
    while let Some((dir, rel, under)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if rel.is_empty() && name.as_bytes() == b".git" {
                continue;
            }
            let Ok(meta) = entry.metadata() else { continue };
            let mut child = rel.clone();
            if !child.is_empty() {
                child.push(b'/');
            }
            child.extend_from_slice(name.as_bytes());
            if meta.is_dir() {
                let excluded = under || exclude.is_excluded(&child, true);
                stack.push((entry.path(), child, excluded));
            } else if meta.is_file() && under && is_drift_source(name.as_bytes()) {
                out.push(DriftEntry {
                    rel: String::from_utf8_lossy(&child).into_owned(),
                    size: meta.len(),
                    mtime_ns: mtime_ns(&meta),
                });
            }
        }
    }
    out
}

fn drift(ws: &Workspace) -> Result<Vec<DriftItem>, Error> {
    let recorded = read_drift_manifest(&ws.git_dir())
        .map_err(|e| Error::io("read drift manifest in", ws.git_dir(), e))?;
    let now = excluded_sources(&ws.worktree, &PathFilter::new(&ws.meta.git_exclude));
    let mut items = Vec::new();
    for r in &recorded {
        match now.iter().find(|n| n.rel == r.rel) {
            None => items.push(DriftItem {
                path: r.rel.clone(),
                state: DriftState::Vanished,
            }),
            Some(n) if n.size != r.size || n.mtime_ns != r.mtime_ns => items.push(DriftItem {
                path: r.rel.clone(),
                state: DriftState::Changed,
            }),
            Some(_) => {}
        }
    }
    for n in &now {
        if !recorded.iter().any(|r| r.rel == n.rel) {
            items.push(DriftItem {
                path: n.rel.clone(),
                state: DriftState::Appeared,
            });
        }
    }
    items.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(items)
}

/// Export a workspace: `v1_scratch<ext>`, `files/<rel>`, `scratch.patch`, `export.json`, and
/// `files_excluded/<rel>` for drift.
pub fn export(ws: &Workspace, request: &ExportRequest) -> Result<ExportReport, Error> {
    let out_dir = request
        .out_dir
        .clone()
        .unwrap_or_else(|| ws.meta.output_dir.join("optimized_versions"));
    let cmp = compare(ws, request.best.as_deref())?;
    let loaded = classify(&cmp)?;
    let mut warnings = Vec::new();
    if let Some(best) = &request.best
        && loaded.is_empty()
    {
        return Err(Error::NothingToExport {
            commit: best.clone(),
        });
    }
    let out = OutDir::open(&out_dir)?;
    let out_dir = out.path.clone();

    let ext = Path::new(&ws.meta.kernel_rel)
        .extension()
        .map_or_else(|| "py".to_owned(), |e| e.to_string_lossy().into_owned());
    let primary = PathBuf::from(format!("v1_scratch.{ext}"));
    let kernel_key = ws.meta.kernel_rel.as_bytes();
    match (&cmp.source, cmp.new.get(kernel_key)) {
        (_, Some(side)) => out.write(&primary, &cmp.new_bytes(kernel_key, *side)?)?,
        (crate::changes::NewSource::Repo, None) => {
            return Err(Error::PrimaryMissingAtBest {
                kernel_rel: ws.meta.kernel_rel.clone(),
                commit: request.best.clone().unwrap_or_default(),
            });
        }
        (crate::changes::NewSource::Worktree(_), None) => {
            warnings.push(format!(
                "kernel file '{}' is missing from the worktree",
                ws.meta.kernel_rel
            ));
        }
    }

    for item in &loaded {
        if item.change.status != ChangeStatus::Deleted {
            out.write(
                &Path::new("files").join(rel_path(item.change.path_bytes())),
                &item.new,
            )?;
        }
    }

    let mut patch_bytes = 0;
    if !loaded.is_empty() {
        let patch = write_patch(&cmp, &loaded)?;
        patch_bytes = patch.len() as u64;
        out.write(Path::new("scratch.patch"), &patch)?;
    }
    let changes: Vec<Change> = loaded.into_iter().map(|l| l.change).collect();

    let excluded_drift = drift(ws)?;
    for item in &excluded_drift {
        warnings.push(format!(
            "{}: edited under an excluded path; not in the patch",
            item.path
        ));
        let src = ws.worktree.join(&item.path);
        if item.state != DriftState::Vanished
            && let Ok(bytes) = read_nofollow(&src)
        {
            out.write(&Path::new("files_excluded").join(&item.path), &bytes)?;
        }
    }

    let report = ExportReport {
        schema: EXPORT_SCHEMA,
        base_commit: ws.meta.base_commit.clone(),
        best: request.best.clone(),
        changes,
        patch_bytes,
        warnings,
        excluded_drift,
        out_dir: out_dir.clone(),
    };
    #[derive(Serialize)]
    struct Manifest<'a> {
        schema: &'a str,
        base_commit: &'a str,
        best: &'a Option<String>,
        changes: &'a [Change],
        patch_bytes: u64,
        warnings: &'a [String],
        excluded_drift: &'a [DriftItem],
    }
    let manifest = Manifest {
        schema: report.schema,
        base_commit: &report.base_commit,
        best: &report.best,
        changes: &report.changes,
        patch_bytes: report.patch_bytes,
        warnings: &report.warnings,
        excluded_drift: &report.excluded_drift,
    };
    let json = serde_json::to_vec_pretty(&manifest)
        .map_err(|e| Error::io("encode", &out_dir, std::io::Error::other(e)))?;
    out.write(Path::new("export.json"), &json)?;
    Ok(report)
}
