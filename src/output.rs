//! Files written outside scratch workspaces (`kernlens split -o`, the `report -o` and
//! `triage --html` pages): whole or not at all.
//!
//! An output is written to a temporary file beside the target (same directory, so the final
//! `rename` stays on one filesystem), flushed and fsynced, then renamed over the target only
//! when the writer reports success. A failure, an early return or a panic leaves the target
//! exactly as it was: the temporary file is removed when the [`AtomicFile`] is dropped
//! uncommitted. The rename replaces the directory entry, so a symlink at the target is
//! replaced by the new file and whatever it pointed to is never opened or truncated.
//!
//! A target that is not a regular file (a character device such as `/dev/null`, a FIFO, a
//! socket, or a symlink to one, such as `/dev/stdout`) is a stream, not a file to replace: it
//! is opened and written in place, never renamed over, so `-o /dev/null` cannot turn the
//! device into a regular file. A stream cannot be written whole or not at all; what was
//! written before a failure stays written.
//!
//! [`ensure_not_input`] refuses an output that is the input itself (same device and inode
//! after resolving symlinks: the same path, a symlink to it, or a hard link to it), so a
//! mistyped `-o` cannot replace the trace being read.
//!
//! ```
//! use std::io::Write;
//! use kernlens::output::{AtomicFile, ensure_not_input};
//!
//! let dir = tempfile::tempdir()?;
//! let input = dir.path().join("trace.json");
//! std::fs::write(&input, "{}")?;
//! let target = dir.path().join("chunk.json");
//! ensure_not_input(&target, &input)?;
//! let mut out = AtomicFile::create(&target)?;
//! out.write_all(b"{\"traceEvents\": []}")?;
//! out.commit()?;
//! assert_eq!(std::fs::read(&target)?, b"{\"traceEvents\": []}");
//! assert!(ensure_not_input(&input, &input).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

/// Why an output could not be written, or was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The output path names the input file (directly, through a symlink or a hard link).
    #[error(
        "output '{}' is the input '{}' (the same file); choose another output path",
        output.display(),
        input.display()
    )]
    SameAsInput {
        /// The output path as given.
        output: PathBuf,
        /// The input path as given.
        input: PathBuf,
    },
    /// The output path is a directory (not a symlink to one: that link would be replaced).
    #[error("output '{}' is a directory", path.display())]
    IsDirectory {
        /// The output path as given.
        path: PathBuf,
    },
    /// A file-system call failed.
    #[error("cannot {action} '{}': {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The operating-system error.
        #[source]
        source: io::Error,
    },
}

/// Refuses `output` when it is the same file as `input` once symlinks are resolved (same
/// device and inode): writing it would replace the data being read. An output that does not
/// exist yet, or a dangling symlink, is never the input.
pub fn ensure_not_input(output: &Path, input: &Path) -> Result<(), OutputError> {
    let Ok(out_meta) = fs::metadata(output) else {
        return Ok(());
    };
    let Ok(in_meta) = fs::metadata(input) else {
        return Ok(());
    };
    if same_file(&out_meta, &in_meta) {
        return Err(OutputError::SameAsInput {
            output: output.to_path_buf(),
            input: input.to_path_buf(),
        });
    }
    Ok(())
}

#[cfg(unix)]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    // Without inode numbers, equal size and modification time is the best available
    // guess; refusing a distinct file is the safe side of that guess.
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

/// A file being written beside its target, renamed over it by [`AtomicFile::commit`].
///
/// Dropped without a commit, it removes its temporary file (tempfile's `NamedTempFile`
/// does that) and the target is untouched.
#[derive(Debug)]
pub struct AtomicFile {
    target: PathBuf,
    file: Sink,
}

/// Where an [`AtomicFile`]'s bytes go.
#[derive(Debug)]
enum Sink {
    /// A temporary file beside a target that is (or will be) a regular file.
    Temp(BufWriter<Trickle>),
    /// A target that is a stream (device, FIFO, socket), written in place.
    Stream(BufWriter<File>),
}

impl AtomicFile {
    /// Creates the temporary file in `target`'s directory. Nothing at `target` is opened,
    /// followed or changed. A target that is a directory is refused up front.
    ///
    /// The new file gets the permission bits of an existing regular file at `target`, else
    /// the usual `0666` less the umask.
    pub fn create(target: impl AsRef<Path>) -> Result<Self, OutputError> {
        let target = target.as_ref().to_path_buf();
        let existing = fs::symlink_metadata(&target).ok();
        if existing.as_ref().is_some_and(fs::Metadata::is_dir) {
            return Err(OutputError::IsDirectory { path: target });
        }
        // Followed through symlinks: `/dev/stdout` is a link to the process's stream.
        if fs::metadata(&target).is_ok_and(|m| is_stream(&m)) {
            let file = fs::OpenOptions::new()
                .write(true)
                .open(&target)
                .map_err(|source| OutputError::Io {
                    action: "open",
                    path: target.clone(),
                    source,
                })?;
            return Ok(AtomicFile {
                target,
                file: Sink::Stream(BufWriter::new(file)),
            });
        }
        let dir = parent_dir(&target);
        let name = target
            .file_name()
            .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
        // `.<name>.kernlens-XXXXXX.tmp`, created exclusively (O_EXCL never follows or
        // reuses an existing entry, a symlink included).
        let prefix = format!(".{name}.kernlens-");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(fs::Permissions::from_mode(0o666));
        }
        let temp = builder
            .tempfile_in(&dir)
            .map_err(|source| OutputError::Io {
                action: "create a file in",
                path: dir.clone(),
                source,
            })?;
        if let Some(meta) = existing.filter(fs::Metadata::is_file) {
            temp.as_file()
                .set_permissions(meta.permissions())
                .map_err(|source| OutputError::Io {
                    action: "set permissions of",
                    path: temp.path().to_path_buf(),
                    source,
                })?;
        }
        Ok(AtomicFile {
            target,
            file: Sink::Temp(BufWriter::new(Trickle::new(temp))),
        })
    }

    /// The path the output will have once committed.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Flushes, fsyncs and renames the temporary file over the target (replacing a symlink
    /// there, never writing through it), then fsyncs the directory so the rename survives a
    /// crash. On error the target is unchanged and the temporary file is removed.
    pub fn commit(self) -> Result<(), OutputError> {
        let io_err = |action, path: &Path| {
            let path = path.to_path_buf();
            move |source| OutputError::Io {
                action,
                path,
                source,
            }
        };
        let temp = match self.file {
            Sink::Temp(temp) => temp,
            Sink::Stream(mut stream) => {
                return stream.flush().map_err(io_err("write", &self.target));
            }
        };
        let temp = temp
            .into_inner()
            .map_err(|e| {
                let (error, writer) = e.into_parts();
                io_err("write", writer.get_ref().file.path())(error)
            })?
            .file;
        temp.as_file()
            .sync_all()
            .map_err(io_err("sync", temp.path()))?;
        temp.persist(&self.target)
            .map_err(|e| io_err("replace", &self.target)(e.error))?;
        // Some file systems refuse fsync on a directory; the data itself is already synced.
        if let Ok(dir) = File::open(parent_dir(&self.target)) {
            let _ = dir.sync_all();
        }
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.file {
            Sink::Temp(f) => f.write(buf),
            Sink::Stream(f) => f.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Sink::Temp(f) => f.flush(),
            Sink::Stream(f) => f.flush(),
        }
    }
}

/// Bytes written between two starts of the kernel's writeback of a temporary file.
const TRICKLE_STEP: u64 = 4 << 20;

/// A temporary file whose written bytes are handed to the kernel's writeback every
/// [`TRICKLE_STEP`] bytes, so the disk writes them while the rest is produced.
///
/// Why: `commit`'s fsync otherwise waits for the whole output at once. A 78 MB split chunk
/// waited 27-30 ms in that fsync here, a tenth of the whole split. Starting writeback is a
/// hint that waits for nothing (Linux `sync_file_range` with `SYNC_FILE_RANGE_WRITE`;
/// elsewhere nothing): a failure to start it is ignored, since the fsync that follows
/// reports every write error anyway.
#[derive(Debug)]
struct Trickle {
    file: NamedTempFile,
    /// Bytes written so far, and the offset up to which writeback was started.
    written: u64,
    started: u64,
}

impl Trickle {
    fn new(file: NamedTempFile) -> Self {
        Trickle {
            file,
            written: 0,
            started: 0,
        }
    }
}

impl Write for Trickle {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written += n as u64;
        if self.written - self.started >= TRICKLE_STEP {
            start_writeback(
                self.file.as_file(),
                self.started,
                self.written - self.started,
            );
            self.started = self.written;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

#[cfg(target_os = "linux")]
fn start_writeback(file: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
        return;
    };
    // SAFETY: the descriptor is open for as long as `file` is borrowed; the call reads no
    // memory of ours.
    let _ = unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
    };
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &File, _offset: u64, _len: u64) {}

/// Whether a target (its metadata, symlinks followed) is a stream to write in place rather
/// than a file to replace: anything that is neither a regular file nor a directory.
fn is_stream(meta: &fs::Metadata) -> bool {
    !meta.is_file() && !meta.is_dir()
}

fn parent_dir(target: &Path) -> PathBuf {
    match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_committed_file_replaces_the_target_whole() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.json");
        fs::write(&target, "old contents").unwrap();
        let mut out = AtomicFile::create(&target).unwrap();
        out.write_all(b"new").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"old contents");
        out.commit().unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new");
        assert_eq!(entries(dir.path()), ["out.json"]);
    }

    /// Writeback is started behind the writer every step, and the bytes read back whole.
    #[test]
    fn a_long_output_starts_writeback_as_it_goes() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("chunk.json");
        let piece: Vec<u8> = (0..65_536u32).map(|i| (i % 251) as u8).collect();
        let pieces = (3 * TRICKLE_STEP as usize + 1000) / piece.len();
        let mut out = AtomicFile::create(&target).unwrap();
        for _ in 0..pieces {
            out.write_all(&piece).unwrap();
        }
        out.flush().unwrap();
        let Sink::Temp(temp) = &out.file else {
            panic!("a new file is written beside its target")
        };
        let (written, started) = (temp.get_ref().written, temp.get_ref().started);
        assert_eq!(written, (pieces * piece.len()) as u64);
        assert!(started >= 3 * TRICKLE_STEP && written - started < TRICKLE_STEP);
        out.commit().unwrap();
        let back = fs::read(&target).unwrap();
        assert_eq!(back.len(), pieces * piece.len());
        assert!(back.chunks(piece.len()).all(|c| c == piece.as_slice()));
    }

    #[test]
    fn an_uncommitted_file_leaves_the_target_and_no_temporary_behind() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.json");
        fs::write(&target, "keep me").unwrap();
        {
            let mut out = AtomicFile::create(&target).unwrap();
            out.write_all(b"half a chunk").unwrap();
            assert_eq!(entries(dir.path()).len(), 2);
        }
        assert_eq!(fs::read(&target).unwrap(), b"keep me");
        assert_eq!(entries(dir.path()), ["out.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_target_and_a_link_to_it_are_written_through_and_kept() {
        // `-o /dev/null` once renamed a regular file over the device (as root). A FIFO is a
        // stream of the same kind that a test can make, and break, without harm.
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let status = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !status.is_ok_and(|s| s.success()) {
            return;
        }
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        for target in [&fifo, &link] {
            let reader = {
                let fifo = fifo.clone();
                std::thread::spawn(move || fs::read(fifo).unwrap())
            };
            let mut out = AtomicFile::create(target).unwrap();
            out.write_all(b"through the pipe").unwrap();
            out.commit().unwrap();
            assert_eq!(reader.join().unwrap(), b"through the pipe");
        }
        assert!(!fs::symlink_metadata(&fifo).unwrap().is_file());
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(entries(dir.path()), ["link", "pipe"]);
    }

    #[test]
    fn an_uncommitted_new_output_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        drop(AtomicFile::create(dir.path().join("new.json")).unwrap());
        assert!(entries(dir.path()).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_at_the_target_is_replaced_and_its_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim.txt");
        fs::write(&victim, "not yours").unwrap();
        let link = dir.path().join("out.json");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let mut out = AtomicFile::create(&link).unwrap();
        out.write_all(b"chunk").unwrap();
        out.commit().unwrap();
        assert_eq!(fs::read(&victim).unwrap(), b"not yours");
        assert!(!fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(fs::read(&link).unwrap(), b"chunk");
    }

    #[cfg(unix)]
    #[test]
    fn an_existing_targets_permission_bits_carry_over() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.json");
        fs::write(&target, "x").unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o640)).unwrap();
        let out = AtomicFile::create(&target).unwrap();
        out.commit().unwrap();
        let mode = fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
    }

    #[test]
    fn a_directory_target_is_refused_before_anything_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        fs::create_dir(&sub).unwrap();
        let err = AtomicFile::create(&sub).unwrap_err();
        assert!(matches!(err, OutputError::IsDirectory { .. }), "{err}");
        assert_eq!(entries(dir.path()), ["sub"]);
    }

    #[test]
    fn a_missing_directory_is_an_io_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let err = AtomicFile::create(dir.path().join("no/such/out.json")).unwrap_err();
        assert!(err.to_string().contains("no/such"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn the_input_itself_a_symlink_to_it_and_a_hard_link_to_it_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("trace.json");
        fs::write(&input, "{}").unwrap();
        let soft = dir.path().join("soft.json");
        std::os::unix::fs::symlink(&input, &soft).unwrap();
        let hard = dir.path().join("hard.json");
        fs::hard_link(&input, &hard).unwrap();
        for output in [&input, &soft, &hard] {
            let err = ensure_not_input(output, &input).unwrap_err();
            assert!(matches!(err, OutputError::SameAsInput { .. }), "{err}");
        }
        // The input reached through a symlink is still the input.
        assert!(ensure_not_input(&input, &soft).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn other_files_missing_outputs_and_dangling_links_are_not_the_input() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("trace.json");
        fs::write(&input, "{}").unwrap();
        let other = dir.path().join("other.json");
        fs::write(&other, "{}").unwrap();
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink(dir.path().join("gone"), &dangling).unwrap();
        ensure_not_input(&other, &input).unwrap();
        ensure_not_input(&dir.path().join("new.json"), &input).unwrap();
        ensure_not_input(&dangling, &input).unwrap();
    }
}
