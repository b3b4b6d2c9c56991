//! Find the source file that defines each GPU kernel of a trace.
//!
//! Given kernel names as a profiler records them (mangled, demangled,
//! decorated with launch APIs, built by f-strings), `kernlens-locate` walks
//! the search roots **once**, scans every source file **once** with one
//! Aho–Corasick automaton over the keywords of all names, and ranks the files
//! that hit. A file is named only when it proves the kernel: a definition
//! in the language the name's shape allows and in the scope its qualifiers
//! say, a composing site whose template covers the whole name, or a Triton
//! `repr=` def that composes it. A file that merely mentions a name is kept as
//! a candidate with `found: false` (`mention_only`). Every answer carries its
//! `confidence`, says which keyword matched, which files competed and why the
//! winner won; "not found" is a valid answer and no path is ever invented.
//! The rules are docs/design/locate.md.
//!
//! Not for: reading traces (kernlens-trace; this crate's `trace` feature
//! only adapts its observer for launcher evidence), computing kernel
//! identities (kernlens-ident, whose demangler, cleaned names, runtime-API
//! names and extension lists are used here), or editing sources. It reads
//! files but never writes them, never runs Python, and reads no environment
//! variables: callers hand in `KERNLENS_SOURCE_ROOTS` and a [`DiscoveryEnv`].
//!
//! # Example
//!
//! ```
//! use kernlens_locate::{
//!     Confidence, Locator, LocateOptions, Method, NotFound, Refusal, SourceKind,
//! };
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::create_dir_all(dir.path().join("pkg"))?;
//! std::fs::write(dir.path().join("pkg/__init__.py"), "from .k import _add_kernel\n")?;
//! std::fs::write(
//!     dir.path().join("pkg/k.py"),
//!     "import triton\n\n@triton.jit\ndef _add_kernel(x):\n    pass\n",
//! )?;
//! let mut locator = Locator::builder().root(dir.path()).build()?;
//! let results = locator.locate_many(
//!     &["hipModuleLaunchKernel->_add_kernel (Synthetic Op)", "hipGraphLaunch"],
//!     &LocateOptions::default(),
//! );
//! assert!(results[0].path.as_ref().is_some_and(|p| p.ends_with("pkg/k.py")));
//! assert_eq!(results[0].line, Some(4));
//! assert_eq!(results[0].method, Method::Definition);
//! assert_eq!(results[0].confidence, Confidence::Definition);
//! assert_eq!(results[0].kind, SourceKind::Triton);
//! assert_eq!(results[1].reason, Some(NotFound::Refused(Refusal::RuntimeApiName)));
//!
//! // A second call is served from the cache.
//! locator.locate_many(&["_add_kernel"], &LocateOptions::default());
//! assert_eq!(locator.stats().bytes_read, 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod builder;
mod cache;
mod compose;
mod cxx;
mod definition;
mod discover;
mod document;
mod error;
mod evidence;
mod keywords;
mod kind;
mod launcher;
mod locator;
mod passes;
pub mod path_json;
mod python;
mod rank;
mod result;
mod roots;
#[cfg(feature = "rust-gpu")]
mod rust_gpu;
mod scan;
mod shape;
mod triton_repr;

pub use builder::LocatorBuilder;
pub use discover::{DiscoveryEnv, FRAMEWORK_PACKAGES};
pub use document::{KEYWORDS_SCHEMA, KeywordsDocument, LOCATE_SCHEMA, LocateDocument};
pub use error::LocateError;
pub use keywords::{KeywordPlan, NAMESPACE_BLOCKLIST, Refusal, keywords_for};
pub use kind::{KindContext, RUNTIME_GENERATED_MARKERS, SourceKind, source_kind_for};
pub use launcher::{
    DEFAULT_MAX_LAUNCHES, DEFAULT_SKIP_PREFIXES, EventId, Launcher, LauncherEvent, LauncherIndex,
    LauncherIndexBuilder, LauncherOptions,
};
pub use locator::{DEFAULT_MAX_FILE_BYTES, LocateOptions, LocateStats, Locator};
pub use passes::TRAMPOLINE_UNBOUND;
// Internals reachable only with the hidden `fuzzing` feature, for the crate's
// own tests and the fuzz targets (fuzz/): the Python scanner and the Triton
// core matcher. Not public API; they change without notice.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub use kind::{core_of, cores_match};
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub use python::{
    PyAssign, PyClass, PyDef, PyString, PySymbols, is_flydsl_decorator, is_triton_decorator,
    scan_python,
};
pub use result::{
    Candidate, Confidence, LauncherReport, LocateResult, MENTION_ONLY, Method, NotFound, Score,
};
pub use roots::{RootOrigin, RootWarning, SearchRoot};
pub use scan::DEFAULT_SKIP_DIRS;
pub use shape::NameShape;
