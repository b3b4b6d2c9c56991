//! Directories and files the crate creates, made relative to an open parent directory so that a
//! symlink planted where one of them goes is refused instead of followed.
//!
//! The roots a caller names (the local scratch root, the durable output directory) are the
//! caller's: links on the way to them are followed, as the caller set them up. Everything the
//! crate creates below a root (session and attempt directories, partials, export directories,
//! markers and export files) goes through this module: `mkdirat` plus `openat(O_NOFOLLOW)` for
//! directories, and a temp file created with `O_EXCL | O_NOFOLLOW` then `renameat` for files, so
//! a link already at the target is replaced, never written through.

use std::ffi::{CStr, CString, OsStr};
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{AtFlags, Mode, OFlags};

/// Mode of every directory the crate creates: only the owner may enter.
pub const PRIVATE_DIR_MODE: u32 = 0o700;

pub(crate) fn cstring(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "name holds a NUL byte"))
}

/// Open `name` inside `parent` as a directory, refusing a symlink (`ELOOP`) or a non-directory.
pub(crate) fn open_dir_at<Fd: AsFd>(parent: Fd, name: &CStr) -> io::Result<OwnedFd> {
    Ok(rustix::fs::openat(
        parent,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Open `path` as a directory, refusing if its last component is a symlink.
pub(crate) fn open_dir_nofollow(path: &Path) -> io::Result<OwnedFd> {
    open_dir_at(rustix::fs::CWD, &cstring(path.as_os_str())?)
}

/// Read a file, refusing a symlink at its last component: a marker planted as a link to someone
/// else's file is not ours, and a worktree file swapped for a link must not carry the link
/// target's bytes into an export.
pub(crate) fn read_nofollow(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut bytes = Vec::new();
    std::fs::File::from(fd).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Create `root` and its missing ancestors (new ones get mode 0700) and open it, following links
/// on the way: a root is the caller's choice.
pub(crate) fn open_root(root: &Path) -> io::Result<OwnedFd> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(PRIVATE_DIR_MODE)
        .create(root)?;
    Ok(rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

fn refused_link(name: &OsStr) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "'{}' is a symlink or not a directory; refusing to follow it",
            name.to_string_lossy()
        ),
    )
}

/// Create (mode 0700) or open the directory `name` inside `parent`, never following a symlink:
/// a link (or a file) already there is an error.
pub(crate) fn own_dir_at<Fd: AsFd>(parent: Fd, name: &OsStr) -> io::Result<OwnedFd> {
    let c = cstring(name)?;
    match rustix::fs::mkdirat(&parent, &c, Mode::from_raw_mode(PRIVATE_DIR_MODE)) {
        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
        Err(e) => return Err(e.into()),
    }
    match open_dir_at(&parent, &c) {
        Ok(fd) => Ok(fd),
        Err(e)
            if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error())
                || e.raw_os_error() == Some(rustix::io::Errno::NOTDIR.raw_os_error()) =>
        {
            Err(refused_link(name))
        }
        Err(e) => Err(e),
    }
}

/// Walk (creating as needed) the relative `/`-free components of `rel` below `parent` with
/// [`own_dir_at`], returning the innermost directory.
pub(crate) fn own_dirs_at<Fd: AsFd>(parent: Fd, rel: &Path) -> io::Result<OwnedFd> {
    let mut current = rustix::io::dup(&parent)?;
    for component in rel.components() {
        match component {
            std::path::Component::Normal(name) => current = own_dir_at(&current, name)?,
            std::path::Component::CurDir => {}
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("'{}' leaves its directory", rel.display()),
                ));
            }
        }
    }
    Ok(current)
}

/// Make a directory the crate owns private: mode 0700. One owned by another user is refused
/// rather than changed, since it is not ours to change.
pub(crate) fn make_private(dir: &OwnedFd, path: &Path) -> io::Result<()> {
    let st = rustix::fs::fstat(dir)?;
    if st.st_uid != rustix::process::geteuid().as_raw() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "'{}' belongs to uid {}, not to this user; refusing to use it",
                path.display(),
                st.st_uid
            ),
        ));
    }
    if st.st_mode & 0o7777 != PRIVATE_DIR_MODE {
        rustix::fs::fchmod(dir, Mode::from_raw_mode(PRIVATE_DIR_MODE))?;
    }
    Ok(())
}

/// How [`write_atomic_at`] finishes a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Durability {
    /// fsync the file before the rename: exports must survive a crash whole or not at all.
    Sync,
    /// No fsync: owner markers are judged dead after a reboot anyway.
    NoSync,
}

/// Write `dir/name` atomically: a uniquely named temp file in `dir` (created with
/// `O_EXCL | O_NOFOLLOW`), then `renameat` over `name`. A symlink at `name` is replaced, not
/// written through; on failure nothing at `name` changes and the temp file is removed.
pub(crate) fn write_atomic_at(
    dir: &OwnedFd,
    name: &OsStr,
    bytes: &[u8],
    mode: u32,
    durability: Durability,
) -> io::Result<()> {
    let target = cstring(name)?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(
        ".tmp-{}-{:016x}",
        std::process::id(),
        fastrand::u64(..)
    ));
    let tmp = cstring(&tmp_name)?;
    let fd = rustix::fs::openat(
        dir,
        &tmp,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode),
    )?;
    let result = (|| {
        let mut file = std::fs::File::from(fd);
        file.write_all(bytes)?;
        if durability == Durability::Sync {
            file.sync_all()?;
        }
        drop(file);
        rustix::fs::renameat(dir, &tmp, dir, &target)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(dir, &tmp, AtFlags::empty());
    }
    result
}

/// Write `root/rel` atomically, creating the directories of `rel` with [`own_dirs_at`].
pub(crate) fn write_atomic_below(
    root: &OwnedFd,
    rel: &Path,
    bytes: &[u8],
    mode: u32,
) -> io::Result<()> {
    let (Some(name), parent) = (rel.file_name(), rel.parent()) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("'{}' names no file", rel.display()),
        ));
    };
    let dir = own_dirs_at(root, parent.unwrap_or(Path::new("")))?;
    write_atomic_at(&dir, name, bytes, mode, Durability::Sync)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_owned_dir_refuses_a_planted_symlink_and_leaves_its_target_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, tmp.path().join("session")).unwrap();
        let root = open_dir_nofollow(tmp.path()).unwrap();
        let err = own_dir_at(&root, OsStr::new("session")).unwrap_err();
        assert!(err.to_string().contains("symlink"), "{err}");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }

    #[test]
    fn an_atomic_write_replaces_a_symlink_instead_of_its_target() {
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let out = tmp.path().join("out");
        std::fs::create_dir(&out).unwrap();
        std::os::unix::fs::symlink(&victim, out.join("f")).unwrap();
        let fd = open_dir_nofollow(&out).unwrap();
        write_atomic_at(&fd, OsStr::new("f"), b"new", 0o644, Durability::Sync).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert!(!out.join("f").symlink_metadata().unwrap().is_symlink());
        assert_eq!(std::fs::read(out.join("f")).unwrap(), b"new");
        assert_eq!(
            std::fs::read_dir(&out).unwrap().count(),
            1,
            "no temp file left"
        );
    }

    #[test]
    fn nested_writes_refuse_a_symlinked_directory_on_the_way() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        let out = tmp.path().join("out");
        std::fs::create_dir(&out).unwrap();
        std::os::unix::fs::symlink(&outside, out.join("files")).unwrap();
        let fd = open_dir_nofollow(&out).unwrap();
        assert!(write_atomic_below(&fd, Path::new("files/a/b.py"), b"x", 0o644).is_err());
        assert!(write_atomic_below(&fd, Path::new("../b.py"), b"x", 0o644).is_err());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }

    #[test]
    fn making_a_dir_private_fixes_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("d");
        std::fs::create_dir(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
        make_private(&open_dir_nofollow(&d).unwrap(), &d).unwrap();
        let mode = std::fs::metadata(&d).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o700);
    }
}
