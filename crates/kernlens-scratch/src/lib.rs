//! Scratch workspaces for kernel rewrites.
//!
//! An optimiser rewrites a kernel inside a **throwaway, git-tracked copy** of the package that
//! holds it, then hands back exactly what changed. This crate makes that copy and reads it back:
//!
//! - [`prepare()`](prepare::prepare) copies the package (keeping `jit/`, `dist/` and `*.so`, which
//!   the shadowing copy needs to import, and dropping `.git` and bytecode), commits a source-only
//!   baseline with gix (no `git` executable, no user configuration, no hooks), and publishes the
//!   worktree atomically. It refuses to reuse an existing attempt ([`Error::Collision`]) or
//!   a protected branch, and moves the worktree to a local disk when the output directory is on a
//!   network filesystem ([`mounts`], [`location`]).
//! - [`changes()`](changes::changes) and [`export()`](export::export) list what changed against
//!   the baseline and write per-file copies, a binary-safe `scratch.patch` that `git apply`
//!   accepts, and a drift report for edits under excluded paths.
//! - [`sweep()`](sweep::sweep) reclaims relocated sessions whose owner (the process that uses
//!   the worktree, not the short-lived CLI) provably died longer ago than a grace period, or
//!   that were [`release`]d, and never touches anything without our marker
//!   ([`owner`]).
//! - Nothing is written through a link the crate did not create: directories below a root are
//!   made with `mkdirat`/`openat(O_NOFOLLOW)` at mode 0700, files through a temp file and a
//!   rename, and the kernel file is resolved to its real path before it is copied.
//!
//! Not for: choosing what to edit, building, or benchmarking. All globs and defaults live in
//! [`policy`].
//!
//! ```
//! use kernlens_scratch::{LocationRequest, PrepareRequest, changes, prepare};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let tmp = tempfile::tempdir()?;
//! let pkg = tmp.path().join("site-packages/mypkg");
//! std::fs::create_dir_all(&pkg)?;
//! std::fs::write(pkg.join("__init__.py"), "")?;
//! std::fs::write(pkg.join("kernel.py"), "def k(x):\n    return x\n")?;
//!
//! let output = tmp.path().join("runs/session-1/attempt-1");
//! let ws = prepare(&PrepareRequest::new(pkg.join("kernel.py"), LocationRequest::new(&output)))?;
//! assert_eq!(ws.kernel_path, output.join("worktree/mypkg/kernel.py"));
//!
//! std::fs::write(&ws.kernel_path, "def k(x):\n    return 2 * x\n")?;
//! let changed = changes(&ws, None)?;
//! assert_eq!(changed[0].path, "mypkg/kernel.py");
//! # Ok(()) }
//! ```

// Panic audit (issue 8): library code never unwraps or expects; tests opt out per module.
#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod baseline;
pub mod branch;
pub mod changes;
pub mod copy;
pub mod document;
mod error;
pub mod export;
pub mod gitcli;
pub mod layout;
pub mod location;
pub mod mounts;
mod nofollow;
pub mod owner;
mod pack;
// The patch writer's parts (unified hunks, base85, path quoting) are public only with the
// hidden `fuzzing` feature, for the crate's property tests and fuzz/; export writes the patch.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod patch;
#[cfg(not(feature = "fuzzing"))]
mod patch;
mod pattern;
pub mod policy;
pub mod prepare;
mod remove;
pub mod sweep;
mod tracked;
pub mod workspace;

pub use error::{Error, GitCause};

// The common path at the root, so a caller needs one import line; the modules
// keep the rest (policy lists, owner markers, layout and patch parts).
pub use changes::{Change, ChangeStatus, CommitId, changes};
pub use document::{
    CreateDocument, DiffDocument, Refusal, ReleaseDocument, SCRATCH_SCHEMA, SweepDocument,
};
pub use export::{DriftItem, DriftState, ExportReport, ExportRequest, export};
pub use location::{LocationRequest, ScratchEnv};
pub use mounts::MountTable;
pub use owner::{LivenessProbe, OwnerMarker, SystemProbe};
pub use policy::{GitBackend, ScratchPolicy};
pub use prepare::{PrepareRequest, discard, prepare, prepare_with, release};
pub use sweep::{SweepOptions, SweepReport, sweep};
pub use workspace::Workspace;
