//! What changed against the baseline: the worktree (using the index's stat data as a cache) or
//! a `best` commit's tree.

use std::collections::BTreeMap;
use std::path::PathBuf;

use gix::bstr::ByteSlice;
use serde::Serialize;

use crate::baseline::open_isolated;
use crate::error::Error;
use crate::pattern::PathFilter;
use crate::tracked::{TrackedKind, tracked_content, walk_tracked};
use crate::workspace::Workspace;

/// A commit named by full hex id or by reference name (`refs/heads/x`, `HEAD`, a branch).
pub type CommitId = str;

/// How a path changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ChangeStatus {
    /// New path.
    Added,
    /// Content changed (the mode may have too).
    Modified,
    /// Path gone.
    Deleted,
    /// Only the executable bit changed.
    ModeChanged,
    /// File became link or link became file.
    TypeChanged,
}

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Change {
    /// Path relative to the worktree, `/`-separated (lossy UTF-8 for display).
    pub path: String,
    /// How it changed.
    pub status: ChangeStatus,
    /// Baseline blob id, absent for additions.
    pub old_id: Option<String>,
    /// New blob id, absent for deletions.
    pub new_id: Option<String>,
    /// True when either side has a NUL byte in its first 8000 bytes.
    pub binary: bool,
    /// Baseline mode (`100644`, `100755`, `120000`).
    pub old_mode: Option<String>,
    /// New mode.
    pub new_mode: Option<String>,
    #[serde(skip)]
    pub(crate) path_bytes: Vec<u8>,
}

impl Change {
    /// The path as raw bytes (exact, even when not UTF-8).
    pub fn path_bytes(&self) -> &[u8] {
        &self.path_bytes
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Side {
    pub kind: TrackedKind,
    pub id: gix::ObjectId,
}

/// Where the new side's bytes live.
pub(crate) enum NewSource {
    Worktree(PathBuf),
    Repo,
}

pub(crate) struct Comparison {
    pub repo: gix::Repository,
    pub base: BTreeMap<Vec<u8>, Side>,
    pub new: BTreeMap<Vec<u8>, Side>,
    pub source: NewSource,
}

impl Comparison {
    pub(crate) fn old_bytes(&self, id: gix::ObjectId) -> Result<Vec<u8>, Error> {
        let repo_path = self.repo.git_dir().to_path_buf();
        Ok(self
            .repo
            .find_blob(id)
            .map_err(|e| Error::git("read blob", &repo_path, e))?
            .data
            .clone())
    }

    pub(crate) fn new_bytes(&self, rel: &[u8], side: Side) -> Result<Vec<u8>, Error> {
        match &self.source {
            NewSource::Repo => self.old_bytes(side.id),
            NewSource::Worktree(root) => {
                let path = root.join(rel_path(rel));
                tracked_content(&path, side.kind).map_err(|e| Error::io("read", &path, e))
            }
        }
    }
}

pub(crate) fn rel_path(rel: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(rel))
}

pub(crate) fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8000)].contains(&0)
}

fn flatten_tree(
    repo: &gix::Repository,
    tree: gix::ObjectId,
    prefix: &mut Vec<u8>,
    out: &mut BTreeMap<Vec<u8>, Side>,
) -> Result<(), Error> {
    let git_dir = repo.git_dir().to_path_buf();
    let tree = repo
        .find_tree(tree)
        .map_err(|e| Error::git("read tree", &git_dir, e))?;
    let decoded = tree
        .decode()
        .map_err(|e| Error::git("decode tree", &git_dir, e))?;
    let entries: Vec<(Vec<u8>, gix::objs::tree::EntryKind, gix::ObjectId)> = decoded
        .entries
        .iter()
        .map(|e| (e.filename.to_vec(), e.mode.kind(), e.oid.to_owned()))
        .collect();
    for (name, kind, oid) in entries {
        let base = prefix.len();
        if !prefix.is_empty() {
            prefix.push(b'/');
        }
        prefix.extend_from_slice(&name);
        if kind == gix::objs::tree::EntryKind::Tree {
            flatten_tree(repo, oid, prefix, out)?;
        } else if let Some(k) = TrackedKind::from_entry_kind(kind) {
            out.insert(prefix.clone(), Side { kind: k, id: oid });
        }
        prefix.truncate(base);
    }
    Ok(())
}

fn resolve_commit(
    repo: &gix::Repository,
    spec: &str,
    ws: &Workspace,
) -> Result<gix::ObjectId, Error> {
    let unknown = || Error::UnknownCommit {
        commit: spec.to_owned(),
        repo: ws.worktree.clone(),
    };
    let id = if let Ok(id) = gix::ObjectId::from_hex(spec.as_bytes()) {
        id
    } else {
        let mut r = repo.find_reference(spec).map_err(|_| unknown())?;
        r.peel_to_id().map_err(|_| unknown())?.detach()
    };
    let commit = repo.find_commit(id).map_err(|_| unknown())?;
    Ok(commit.id)
}

fn commit_tree(
    repo: &gix::Repository,
    commit: gix::ObjectId,
    ws: &Workspace,
) -> Result<gix::ObjectId, Error> {
    let c = repo
        .find_commit(commit)
        .map_err(|e| Error::git("read commit", ws.git_dir(), e))?;
    Ok(c.tree_id()
        .map_err(|e| Error::git("read commit", ws.git_dir(), e))?
        .detach())
}

/// The baseline's tree, and the new side: `best`'s tree, or the worktree.
pub(crate) fn compare(ws: &Workspace, best: Option<&CommitId>) -> Result<Comparison, Error> {
    let repo = open_isolated(&ws.worktree).map_err(|e| Error::git("open", &ws.worktree, e))?;
    let base_id = gix::ObjectId::from_hex(ws.meta.base_commit.as_bytes())
        .map_err(|e| Error::git("read base commit", ws.git_dir(), e))?;
    let base_tree = commit_tree(&repo, base_id, ws)?;
    let mut base = BTreeMap::new();
    flatten_tree(&repo, base_tree, &mut Vec::new(), &mut base)?;
    if let Some(best) = best {
        let id = resolve_commit(&repo, best, ws)?;
        let tree = commit_tree(&repo, id, ws)?;
        let mut new = BTreeMap::new();
        flatten_tree(&repo, tree, &mut Vec::new(), &mut new)?;
        return Ok(Comparison {
            repo,
            base,
            new,
            source: NewSource::Repo,
        });
    }
    let new = worktree_sides(ws)?;
    Ok(Comparison {
        repo,
        base,
        new,
        source: NewSource::Worktree(ws.worktree.clone()),
    })
}

/// Hash the worktree the way git would, skipping files whose size, mtime and inode match the
/// index (their id is taken from the index without reading them).
fn worktree_sides(ws: &Workspace) -> Result<BTreeMap<Vec<u8>, Side>, Error> {
    let exclude = PathFilter::new(&ws.meta.git_exclude);
    let (paths, _) =
        walk_tracked(&ws.worktree, &exclude).map_err(|e| Error::io("walk", &ws.worktree, e))?;
    let index_path = ws.git_dir().join("index");
    let mut cache: BTreeMap<
        Vec<u8>,
        (
            gix::index::entry::Stat,
            gix::ObjectId,
            gix::index::entry::Mode,
        ),
    > = BTreeMap::new();
    if let Ok(index) = gix::index::File::at(
        &index_path,
        gix::hash::Kind::Sha1,
        false,
        Default::default(),
    ) {
        for e in index.entries() {
            cache.insert(e.path(&index).to_vec(), (e.stat, e.id, e.mode));
        }
    }
    let mut out = BTreeMap::new();
    for p in paths {
        let mode =
            gix::index::entry::Mode::from(gix::objs::tree::EntryMode::from(p.kind.entry_kind()));
        let cached = cache.get(&p.rel).and_then(|(stat, id, m)| {
            let fs = gix::index::fs::Metadata::from_path_no_follow(&p.abs).ok()?;
            let now = gix::index::entry::Stat::from_fs(&fs).ok()?;
            (now.size == stat.size && now.mtime == stat.mtime && now.ino == stat.ino && *m == mode)
                .then_some(*id)
        });
        let id = match cached {
            Some(id) => id,
            None => {
                let bytes =
                    tracked_content(&p.abs, p.kind).map_err(|e| Error::io("read", &p.abs, e))?;
                gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, &bytes)
                    .map_err(|e| Error::git("hash", &p.abs, e))?
            }
        };
        out.insert(p.rel, Side { kind: p.kind, id });
    }
    Ok(out)
}

fn kind_class(k: TrackedKind) -> u8 {
    match k {
        TrackedKind::Link => 1,
        TrackedKind::File | TrackedKind::Executable => 0,
    }
}

/// A change with both sides' bytes, read once for the binary check, the patch and the exports.
/// A missing side is empty; a mode-only change carries the (unchanged) content as its new side.
pub(crate) struct LoadedChange {
    pub change: Change,
    pub old: Vec<u8>,
    pub new: Vec<u8>,
}

/// Classify the differences of a comparison, sorted byte-wise by path.
pub(crate) fn classify(cmp: &Comparison) -> Result<Vec<LoadedChange>, Error> {
    let mut keys: Vec<&Vec<u8>> = cmp.base.keys().chain(cmp.new.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut out = Vec::new();
    for key in keys {
        let old = cmp.base.get(key).copied();
        let new = cmp.new.get(key).copied();
        let status = match (old, new) {
            (None, Some(_)) => ChangeStatus::Added,
            (Some(_), None) => ChangeStatus::Deleted,
            (Some(o), Some(n)) if kind_class(o.kind) != kind_class(n.kind) => {
                ChangeStatus::TypeChanged
            }
            (Some(o), Some(n)) if o.id != n.id => ChangeStatus::Modified,
            (Some(o), Some(n)) if o.kind != n.kind => ChangeStatus::ModeChanged,
            _ => continue,
        };
        let old_bytes = match old {
            Some(o) if status != ChangeStatus::ModeChanged => cmp.old_bytes(o.id)?,
            _ => Vec::new(),
        };
        let new_bytes = match new {
            Some(n) => cmp.new_bytes(key, n)?,
            None => Vec::new(),
        };
        out.push(LoadedChange {
            change: Change {
                path: key.to_str_lossy().into_owned(),
                status,
                old_id: old.map(|o| o.id.to_string()),
                new_id: new.map(|n| n.id.to_string()),
                binary: is_binary(&old_bytes) || is_binary(&new_bytes),
                old_mode: old.map(|o| o.kind.octal().to_owned()),
                new_mode: new.map(|n| n.kind.octal().to_owned()),
                path_bytes: key.clone(),
            },
            old: old_bytes,
            new: new_bytes,
        });
    }
    Ok(out)
}

/// Changes against the baseline: of the worktree without `best`, of `best`'s tree with it.
/// Excluded paths and `.git` never appear.
pub fn changes(ws: &Workspace, best: Option<&CommitId>) -> Result<Vec<Change>, Error> {
    Ok(classify(&compare(ws, best)?)?
        .into_iter()
        .map(|loaded| loaded.change)
        .collect())
}
