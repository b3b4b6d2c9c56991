//! Deleting a directory tree without ever following a symlink.
//!
//! Every call is relative to an already-open directory descriptor opened with `O_NOFOLLOW`, so a
//! symlink swapped in mid-deletion is unlinked, never traversed.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{AtFlags, Dir, FileType};

use crate::nofollow::{open_dir_at, open_dir_nofollow};

fn entry_names(dir_fd: &OwnedFd) -> io::Result<Vec<(CString, FileType)>> {
    let mut out = Vec::new();
    let dir = Dir::read_from(dir_fd)?;
    for entry in dir {
        let entry = entry?;
        let name = entry.file_name();
        if name.to_bytes() == b"." || name.to_bytes() == b".." {
            continue;
        }
        out.push((name.to_owned(), entry.file_type()));
    }
    Ok(out)
}

/// Remove everything inside `dir_fd` depth-first, except the names in `last`, which are removed
/// after everything else in the order given.
pub(crate) fn remove_contents(dir_fd: &OwnedFd, last: &[&str]) -> io::Result<()> {
    let names = entry_names(dir_fd)?;
    let mut first_error: Option<io::Error> = None;
    for (name, ft) in names {
        if last.iter().any(|l| l.as_bytes() == name.to_bytes()) {
            continue;
        }
        if let Err(e) = remove_entry(dir_fd, &name, ft) {
            first_error.get_or_insert(e);
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    for l in last {
        let Ok(c) = CString::new(*l) else { continue };
        match rustix::fs::unlinkat(dir_fd, &c, AtFlags::empty()) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

fn remove_entry(dir_fd: &OwnedFd, name: &CStr, ft: FileType) -> io::Result<()> {
    let ft = if ft == FileType::Unknown {
        rustix::fs::statat(dir_fd, name, AtFlags::SYMLINK_NOFOLLOW)
            .map(|st| FileType::from_raw_mode(st.st_mode))?
    } else {
        ft
    };
    if ft == FileType::Directory {
        match open_dir_at(dir_fd, name) {
            Ok(child) => {
                remove_contents(&child, &[])?;
                drop(child);
                rustix::fs::unlinkat(dir_fd, name, AtFlags::REMOVEDIR)?;
            }
            // Replaced by a symlink since the listing: unlink it, never follow.
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
                rustix::fs::unlinkat(dir_fd, name, AtFlags::empty())?;
            }
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::NOTDIR.raw_os_error()) => {
                rustix::fs::unlinkat(dir_fd, name, AtFlags::empty())?;
            }
            Err(e) => return Err(e),
        }
    } else {
        rustix::fs::unlinkat(dir_fd, name, AtFlags::empty())?;
    }
    Ok(())
}

/// Remove the directory `name` inside the open directory `parent_fd`, contents first, the names
/// in `last` after the rest, the directory itself at the end.
pub(crate) fn remove_dir_at(
    parent_fd: &OwnedFd,
    name: &std::ffi::OsStr,
    last: &[&str],
) -> io::Result<()> {
    let c = CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "name holds a NUL byte"))?;
    let child = open_dir_at(parent_fd, &c)?;
    remove_contents(&child, last)?;
    drop(child);
    rustix::fs::unlinkat(parent_fd, &c, AtFlags::REMOVEDIR)?;
    Ok(())
}

/// Remove the directory at `path` (never following a symlink at any level). Used for partials
/// and for a workspace the caller owns.
pub(crate) fn remove_tree(path: &Path) -> io::Result<()> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "path has no parent",
        ));
    };
    let parent_fd = open_dir_nofollow(if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    })?;
    remove_dir_at(&parent_fd, name, &[])
}
