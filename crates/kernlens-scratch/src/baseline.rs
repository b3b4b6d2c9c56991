//! The source-only git baseline, made in process with gix: init (isolated from user
//! configuration), exclude, add-all from a directory walk, trees, index, commit and refs.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use gix::bstr::{BString, ByteSlice};
use rayon::prelude::*;
use serde::Serialize;

use crate::copy::DriftEntry;
use crate::error::Error;
use crate::pack::{PackedObject, pack_object, write_pack};
use crate::pattern::PathFilter;
use crate::policy::{BASELINE_MESSAGE, BASELINE_REF, IDENTITY_EMAIL, IDENTITY_NAME, ScratchPolicy};
use crate::tracked::{TrackedPath, WalkStats, tracked_content, walk_tracked};

/// Name of the drift manifest inside `.git`.
pub const DRIFT_MANIFEST: &str = "kernlens-excluded.tsv";

/// Figures of one baseline build.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct BaselineStats {
    /// Files (and links) hashed into the baseline.
    pub files_hashed: u64,
    /// Bytes hashed.
    pub bytes_hashed: u64,
    /// What the tracked walk skipped, and proof it did not enter excluded directories.
    pub walk: WalkStats,
    /// Bytes hashed from paths that the exclude rules match (must be 0).
    pub excluded_bytes_read: u64,
    /// Seconds from "exclude written" to "commit, refs and index written".
    pub index_step_seconds: f64,
}

/// The result of a baseline build.
#[derive(Debug, Clone)]
pub(crate) struct Baseline {
    pub commit: gix::ObjectId,
    pub stats: BaselineStats,
}

fn git_err<'a, E: Into<crate::error::GitCause>>(
    step: &'static str,
    path: &'a Path,
) -> impl Fn(E) -> Error + 'a {
    move |e| Error::git(step, path, e)
}

/// Open a workspace repository ignoring system, global and user configuration.
pub(crate) fn open_isolated(worktree: &Path) -> Result<gix::Repository, gix::Error> {
    Ok(
        gix::ThreadSafeRepository::open_opts(worktree, gix::open::Options::isolated())?
            .to_thread_local(),
    )
}

/// Append each missing pattern to `.git/info/exclude` in order, adding a newline first when the
/// file does not end with one. Idempotent.
pub fn write_exclude(git_dir: &Path, patterns: &[String]) -> std::io::Result<()> {
    let info = git_dir.join("info");
    std::fs::create_dir_all(&info)?;
    let path = info.join("exclude");
    let mut text = match std::fs::read(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    let present: Vec<Vec<u8>> = text.lines().map(|l| l.trim().to_vec()).collect();
    let missing: Vec<&String> = patterns
        .iter()
        .filter(|p| !present.iter().any(|q| q == p.as_bytes()))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    if !text.is_empty() && !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    let mut seen: Vec<&String> = Vec::new();
    for p in missing {
        if seen.contains(&p) {
            continue;
        }
        seen.push(p);
        text.extend_from_slice(p.as_bytes());
        text.push(b'\n');
    }
    std::fs::write(&path, text)
}

/// True when `rel` or any of its ancestor directories is excluded.
fn excluded_anywhere(filter: &PathFilter, rel: &[u8]) -> bool {
    rel.iter()
        .enumerate()
        .filter(|(_, b)| **b == b'/')
        .any(|(i, _)| filter.is_excluded(&rel[..i], true))
        || filter.is_excluded(rel, false)
}

enum Node {
    Leaf(gix::objs::tree::EntryKind, gix::ObjectId),
    Dir(BTreeMap<BString, Node>),
}

fn insert(
    root: &mut BTreeMap<BString, Node>,
    rel: &[u8],
    kind: gix::objs::tree::EntryKind,
    id: gix::ObjectId,
) {
    let mut cur = root;
    let mut parts = rel.split(|b| *b == b'/').peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            cur.insert(part.into(), Node::Leaf(kind, id));
            return;
        }
        let next = cur
            .entry(part.into())
            .or_insert_with(|| Node::Dir(BTreeMap::new()));
        cur = match next {
            Node::Dir(map) => map,
            Node::Leaf(..) => return,
        };
    }
}

fn write_tree(
    dir: &BTreeMap<BString, Node>,
    out: &mut Vec<PackedObject>,
) -> Result<gix::ObjectId, gix::Error> {
    let mut entries = Vec::with_capacity(dir.len());
    for (name, node) in dir {
        let (mode, oid) = match node {
            Node::Leaf(kind, id) => ((*kind).into(), *id),
            Node::Dir(sub) => (
                gix::objs::tree::EntryKind::Tree.into(),
                write_tree(sub, out)?,
            ),
        };
        entries.push(gix::objs::tree::Entry {
            mode,
            filename: name.clone(),
            oid,
        });
    }
    // Git's order compares directories as if their names ended in '/'.
    entries.sort();
    let mut buf = Vec::new();
    gix::objs::WriteTo::write_to(&gix::objs::Tree { entries }, &mut buf)
        .map_err(gix::Error::from_error)?;
    let packed = pack_object(gix::objs::Kind::Tree, &buf)?;
    let id = packed.id;
    out.push(packed);
    Ok(id)
}

/// Build the baseline inside `dir` (the partial worktree): init, HEAD, exclude, add-all, index,
/// commit, refs and the drift manifest.
pub(crate) fn build_baseline(
    dir: &Path,
    branch: &str,
    policy: &ScratchPolicy,
    drift: &[DriftEntry],
) -> Result<Baseline, Error> {
    if policy.git_backend == crate::policy::GitBackend::Cli {
        return build_baseline_cli(dir, branch, policy, drift);
    }
    let create = gix::create::Options {
        destination_must_be_empty: Some(false),
        ..Default::default()
    };
    let ts = gix::ThreadSafeRepository::init_opts(
        dir,
        gix::create::Kind::WithWorktree,
        create,
        gix::open::Options::isolated(),
    )
    .map_err(git_err("init", dir))?;
    let mut repo = ts.to_thread_local();
    let git_dir = repo.git_dir().to_path_buf();

    // HEAD names the branch before any commit, so no `main` or `master` ref ever exists.
    let head_target: gix::refs::FullName = format!("refs/heads/{branch}")
        .try_into()
        .map_err(|e: gix::validate::reference::name::Error| Error::git("set HEAD", &git_dir, e))?;
    let reflog = repo.refs.write_reflog;
    repo.refs.write_reflog = gix::refs::store::WriteReflog::Disable;
    repo.edit_reference(gix::refs::transaction::RefEdit {
        change: gix::refs::transaction::Change::Update {
            log: Default::default(),
            expected: gix::refs::transaction::PreviousValue::Any,
            new: gix::refs::Target::Symbolic(head_target),
        },
        name: "HEAD"
            .try_into()
            .map_err(|e: gix::validate::reference::name::Error| {
                Error::git("set HEAD", &git_dir, e)
            })?,
        deref: false,
    })
    .map_err(git_err("set HEAD", &git_dir))?;
    repo.refs.write_reflog = reflog;

    write_exclude(&git_dir, &policy.git_exclude)
        .map_err(|e| Error::io("write exclude in", &git_dir, e))?;
    let started = Instant::now();

    let exclude = PathFilter::new(&policy.git_exclude);
    let (paths, walk) = walk_tracked(dir, &exclude).map_err(|e| Error::io("walk", dir, e))?;

    let mut packed: Vec<PackedObject> = Vec::with_capacity(paths.len());
    let hashed: Vec<(gix::ObjectId, u64, u64)> = paths
        .par_iter()
        .map(|p: &TrackedPath| {
            let bytes =
                tracked_content(&p.abs, p.kind).map_err(|e| Error::io("read", &p.abs, e))?;
            let object =
                pack_object(gix::objs::Kind::Blob, &bytes).map_err(git_err("hash blob", &p.abs))?;
            let excluded_bytes = if excluded_anywhere(&exclude, &p.rel) {
                bytes.len() as u64
            } else {
                0
            };
            Ok((object, bytes.len() as u64, excluded_bytes))
        })
        .collect::<Result<Vec<_>, Error>>()?
        .into_iter()
        .map(|(object, len, excluded)| {
            let id = object.id;
            packed.push(object);
            (id, len, excluded)
        })
        .collect();

    let mut root = BTreeMap::new();
    let mut state = gix::index::State::new(gix::hash::Kind::Sha1);
    let mut stats = BaselineStats {
        walk,
        ..Default::default()
    };
    for (p, (id, len, excluded)) in paths.iter().zip(&hashed) {
        insert(&mut root, &p.rel, p.kind.entry_kind(), *id);
        let fs_meta = gix::index::fs::Metadata::from_path_no_follow(&p.abs)
            .map_err(|e| Error::io("stat", &p.abs, e))?;
        let stat = gix::index::entry::Stat::from_fs(&fs_meta)
            .map_err(|e| Error::git("index stat", &p.abs, e))?;
        let mode =
            gix::index::entry::Mode::from(gix::objs::tree::EntryMode::from(p.kind.entry_kind()));
        state.dangerously_push_entry(
            stat,
            *id,
            gix::index::entry::Flags::empty(),
            mode,
            p.rel.as_bstr(),
        );
        stats.files_hashed += 1;
        stats.bytes_hashed += len;
        stats.excluded_bytes_read += excluded;
    }
    state.sort_entries();
    let tree = write_tree(&root, &mut packed).map_err(git_err("write tree", &git_dir))?;
    write_pack(&git_dir.join("objects"), packed).map_err(git_err("write pack", &git_dir))?;
    let mut index = gix::index::File::from_state(state, git_dir.join("index"));
    index
        .write(gix::index::write::Options::default())
        .map_err(git_err("write index", &git_dir))?;

    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let time = format!("{now} +0000");
    let sig = gix::actor::SignatureRef {
        name: IDENTITY_NAME.into(),
        email: IDENTITY_EMAIL.into(),
        time: &time,
    };
    let commit = repo
        .commit_as(
            sig,
            sig,
            "HEAD",
            format!("{BASELINE_MESSAGE}\n"),
            tree,
            None::<gix::ObjectId>,
        )
        .map_err(git_err("commit", &git_dir))?
        .detach();
    let baseline_ref: gix::refs::FullName =
        BASELINE_REF
            .try_into()
            .map_err(|e: gix::validate::reference::name::Error| {
                Error::git("baseline ref", &git_dir, e)
            })?;
    repo.edit_references_as(
        Some(gix::refs::transaction::RefEdit {
            change: gix::refs::transaction::Change::Update {
                log: Default::default(),
                expected: gix::refs::transaction::PreviousValue::MustNotExist,
                new: gix::refs::Target::Object(commit),
            },
            name: baseline_ref,
            deref: false,
        }),
        Some(sig),
    )
    .map_err(git_err("baseline ref", &git_dir))?;
    stats.index_step_seconds = started.elapsed().as_secs_f64();

    write_drift_manifest(&git_dir, drift)
        .map_err(|e| Error::io("write drift manifest in", &git_dir, e))?;
    Ok(Baseline { commit, stats })
}

/// The same baseline through the `git` executable.
fn build_baseline_cli(
    dir: &Path,
    branch: &str,
    policy: &ScratchPolicy,
    drift: &[DriftEntry],
) -> Result<Baseline, Error> {
    crate::gitcli::init(dir, branch)?;
    let git_dir = dir.join(".git");
    write_exclude(&git_dir, &policy.git_exclude)
        .map_err(|e| Error::io("write exclude in", &git_dir, e))?;
    let started = Instant::now();
    let commit = crate::gitcli::add_commit(dir)?;
    let stats = BaselineStats {
        index_step_seconds: started.elapsed().as_secs_f64(),
        ..Default::default()
    };
    write_drift_manifest(&git_dir, drift)
        .map_err(|e| Error::io("write drift manifest in", &git_dir, e))?;
    Ok(Baseline { commit, stats })
}

fn write_drift_manifest(git_dir: &Path, drift: &[DriftEntry]) -> std::io::Result<()> {
    let mut text = String::from("# path\tsize\tmtime_ns\n");
    for d in drift {
        // Tabs and newlines cannot be represented; such names are left out of drift tracking.
        if d.rel.contains(['\t', '\n']) {
            continue;
        }
        text.push_str(&format!("{}\t{}\t{}\n", d.rel, d.size, d.mtime_ns));
    }
    std::fs::write(git_dir.join(DRIFT_MANIFEST), text)
}

/// Read the drift manifest written at prepare time.
pub(crate) fn read_drift_manifest(git_dir: &Path) -> std::io::Result<Vec<DriftEntry>> {
    let text = match std::fs::read_to_string(git_dir.join(DRIFT_MANIFEST)) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    Ok(text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some(DriftEntry {
                rel: f.next()?.to_owned(),
                size: f.next()?.parse().ok()?,
                mtime_ns: f.next()?.parse().ok()?,
            })
        })
        .collect())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn exclude_appends_missing_once_and_is_idempotent() {
        let tmp = tempfile::tempdir().unwrap();
        let git = tmp.path();
        std::fs::create_dir_all(git.join("info")).unwrap();
        std::fs::write(git.join("info/exclude"), "# mine\njit/").unwrap();
        let mut policy = ScratchPolicy::default();
        policy.git_exclude.push("*.npz".into());
        write_exclude(git, &policy.git_exclude).unwrap();
        let first = std::fs::read_to_string(git.join("info/exclude")).unwrap();
        assert_eq!(
            first,
            "# mine\njit/\n__pycache__/\nflydsl_cache/\ndist/\n*.so\n*.pyc\n*.pyo\n*.npz\n"
        );
        write_exclude(git, &policy.git_exclude).unwrap();
        assert_eq!(
            std::fs::read_to_string(git.join("info/exclude")).unwrap(),
            first
        );
        assert_eq!(first.matches("*.npz").count(), 1);
    }
}
