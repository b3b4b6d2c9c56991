//! What part of the filesystem a workspace copies, given the kernel source file.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::Error;
use crate::location::ScratchEnv;

/// How the copy root was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LayoutMode {
    /// The top package of an unbroken `__init__.py` chain, copied as `<worktree>/<name>/…`.
    Package,
    /// The source's directory (no `__init__.py`), copied flat.
    Directory,
    /// A single-module install (`site-packages/six.py`): only the file.
    SingleFile,
    /// A caller-given repository directory, copied whole.
    Repo,
}

/// The copy plan for one source file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Layout {
    /// The directory (or, in `SingleFile` mode, the file) that is copied.
    pub copy_root: PathBuf,
    /// The directory the worktree mirrors: a patch made in the worktree applies here.
    pub layout_root: PathBuf,
    /// The source's path relative to the worktree, `/`-separated.
    pub kernel_rel: String,
    /// How the root was chosen.
    pub mode: LayoutMode,
    /// Sibling directories the top package loads from at import time, copied beside it: the
    /// `<name>.libs/` directory where repaired wheels (auditwheel) keep vendored shared libraries,
    /// reached through a relative RPATH. Without it a copy of, say, numpy cannot import.
    pub companions: Vec<PathBuf>,
    /// Warnings such as `source_outside_repo_hint`.
    pub warnings: Vec<String>,
}

fn is_packages_dir(dir: &Path) -> bool {
    dir.file_name()
        .is_some_and(|n| n == "site-packages" || n == "dist-packages")
}

fn rel_string(path: &Path, base: &Path) -> Option<String> {
    let rel = path.strip_prefix(base).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(parts.join("/"))
}

/// Choose the copy root for `source_file`, resolved to its real path first: a kernel file that
/// is a link (or sits under a linked directory) is laid out, and copied, where its bytes really
/// are, so the worktree holds a file and edits never land in the original through a link.
pub fn find_layout(source_file: &Path, repo_hint: Option<&Path>) -> Result<Layout, Error> {
    let missing = || Error::SourceMissing {
        path: source_file.to_path_buf(),
    };
    if !std::fs::metadata(source_file)
        .map(|m| m.is_file())
        .unwrap_or(false)
    {
        return Err(missing());
    }
    let absolute = std::path::absolute(source_file).map_err(|_| missing())?;
    let source = source_file
        .canonicalize()
        .map_err(|e| Error::io("resolve", source_file, e))?;
    let (Some(dir), Some(file_name)) = (source.parent().map(Path::to_path_buf), source.file_name())
    else {
        return Err(missing());
    };
    let mut warnings = Vec::new();
    if source != absolute {
        warnings.push(format!(
            "source_resolved: '{}' resolves to '{}'; the copy is made from the real path",
            absolute.display(),
            source.display()
        ));
    }

    if let Some(hint) = repo_hint {
        let hint = hint
            .canonicalize()
            .map_err(|e| Error::io("resolve repository hint", hint, e))?;
        if let Some(rel) = rel_string(&source, &hint) {
            return Ok(Layout {
                copy_root: hint.clone(),
                layout_root: hint,
                kernel_rel: rel,
                mode: LayoutMode::Repo,
                companions: Vec::new(),
                warnings,
            });
        }
        warnings.push(format!(
            "source_outside_repo_hint: '{}' is not under '{}'; copying its directory instead",
            source.display(),
            hint.display()
        ));
        return directory_layout(&dir, &source, warnings);
    }

    if dir.join("__init__.py").is_file() {
        let mut top = dir.clone();
        while let Some(up) = top.parent() {
            if up.join("__init__.py").is_file() {
                top = up.to_path_buf();
            } else {
                break;
            }
        }
        let Some(layout_root) = top.parent().map(Path::to_path_buf) else {
            return Err(Error::RefuseCopyRoot {
                root: top,
                why: "the top package has no parent directory".into(),
            });
        };
        let kernel_rel = rel_string(&source, &layout_root).ok_or_else(missing)?;
        let companions = top
            .file_name()
            .map(|name| {
                let mut libs = name.to_os_string();
                libs.push(".libs");
                layout_root.join(libs)
            })
            .filter(|libs| std::fs::symlink_metadata(libs).is_ok_and(|m| m.is_dir()))
            .into_iter()
            .collect();
        return Ok(Layout {
            copy_root: top,
            layout_root,
            kernel_rel,
            mode: LayoutMode::Package,
            companions,
            warnings,
        });
    }
    if is_packages_dir(&dir) {
        return Ok(Layout {
            copy_root: source.clone(),
            layout_root: dir,
            kernel_rel: file_name.to_string_lossy().into_owned(),
            mode: LayoutMode::SingleFile,
            companions: Vec::new(),
            warnings,
        });
    }
    directory_layout(&dir, &source, warnings)
}

fn directory_layout(dir: &Path, source: &Path, warnings: Vec<String>) -> Result<Layout, Error> {
    let kernel_rel = rel_string(source, dir).ok_or_else(|| Error::SourceMissing {
        path: source.to_path_buf(),
    })?;
    Ok(Layout {
        copy_root: dir.to_path_buf(),
        layout_root: dir.to_path_buf(),
        kernel_rel,
        mode: LayoutMode::Directory,
        companions: Vec::new(),
        warnings,
    })
}

/// Refuse copy roots that are too broad: `/`, `$HOME` or any ancestor of it, any directory
/// that is or holds a user's home directory (`env.home_dirs`, such as `/home`), a
/// `site-packages`/`dist-packages` directory (outside `SingleFile` mode), or an ancestor of (or
/// equal to) the planned worktree.
pub fn check_copy_root(layout: &Layout, env: &ScratchEnv, worktree: &Path) -> Result<(), Error> {
    let root = &layout.copy_root;
    let refuse = |why: String| {
        Err(Error::RefuseCopyRoot {
            root: root.clone(),
            why,
        })
    };
    if root.parent().is_none() {
        return refuse("it is the filesystem root".into());
    }
    // A single module is one file: it holds no home directory.
    let is_dir = layout.mode != LayoutMode::SingleFile;
    // Both spellings of each home, as given and resolved, so a linked /home is caught too.
    let spellings = |home: &Path| {
        let canon = home.canonicalize().ok();
        std::iter::once(home.to_path_buf()).chain(canon)
    };
    if let Some(home) = env.home.as_deref().filter(|h| h.is_absolute()) {
        for h in spellings(home) {
            if *root == h {
                return refuse("it is the home directory".into());
            }
            if is_dir && h.starts_with(root) {
                return refuse(format!("it holds the home directory '{}'", home.display()));
            }
        }
    }
    if is_dir {
        for home in &env.home_dirs {
            if spellings(home).any(|h| h.starts_with(root)) {
                return refuse(format!(
                    "it holds the home directory '{}' of a user",
                    home.display()
                ));
            }
        }
    }
    if layout.mode != LayoutMode::SingleFile && is_packages_dir(root) {
        return refuse("it is a whole site-packages directory".into());
    }
    let worktree_abs = crate::mounts::nearest_existing_canonical(worktree);
    if worktree_abs.starts_with(root) {
        return refuse("it would contain the scratch worktree".into());
    }
    Ok(())
}
