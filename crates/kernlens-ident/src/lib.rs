//! Kernel identity for GPU-kernel triage.
//!
//! One GPU kernel reaches a profiler trace under many spellings: launched
//! through a CUDA/HIP graph or directly (`hipGraphLaunch->…`), tagged
//! `(Synthetic Op)`, as a `.kd` code object, mangled or demangled, and once
//! per template instance. This crate turns every spelling into a stable
//! **key** ([`native_key`] for C++/CUDA/HIP, [`python_key`] for Triton and
//! Python kernels), builds an [`OperatorIdentity`] from a key and the kernel's
//! source file, and groups trace rows that share an identity into
//! [`TaskGroup`]s. It also labels names with a coarse [`Category`] and, where
//! one applies, the [`VendorLib`] that ships the kernel.
//!
//! Mangled Itanium symbols are demangled with `cpp_demangle` (under a
//! recursion limit and `catch_unwind`), with a strict head parser as the
//! fallback. Everything apart from the demangler is linear in the name's
//! length, and nothing panics on any input.
//!
//! Not for: finding source files (the locate stage) or reading traces (the
//! trace stage). The only I/O is path canonicalisation, and the crate reads
//! no environment variables: callers pass the home directory in.
//!
//! # Example
//!
//! ```
//! use kernlens_ident::{Category, KeyMemo, classify, native_key, python_key};
//!
//! // A graph-replayed, mangled, code-object spelling and a profiler-demangled
//! // one of two instances of the same kernel share one native key.
//! let a = native_key("hipGraphLaunch->_ZN5aiter24add_rmsnorm_quant_kernelIDF16bEEv.kd");
//! let b = native_key("void aiter::add_rmsnorm_quant_kernel<float>(float const*)");
//! assert_eq!(a, "aiter::add_rmsnorm_quant_kernel");
//! assert_eq!(a, b);
//!
//! // Triton kernels keep their hash suffixes.
//! assert_eq!(python_key("cudaGraphLaunch->triton_poi_fused_gelu_view_2 (Synthetic Op)"),
//!            "triton_poi_fused_gelu_view_2");
//! assert_eq!(classify("triton_poi_fused_gelu_view_2"), Category::Elementwise);
//!
//! // Traces repeat names; a memo answers repeats without allocating.
//! let mut memo = KeyMemo::new();
//! assert_eq!(memo.get("_Z14rmsnorm_kernelPf").native, "rmsnorm_kernel");
//! ```

// Panic audit (issue 8): library code never unwraps or expects; tests opt out per module.
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod category;
mod clean;
mod demangle;
mod document;
mod group;
mod identity;
mod key;
mod memo;
mod signature;
mod source_kind;
mod source_ref;
mod vendor;
mod vocab;

pub use category::{Category, classify};
pub use clean::{clean_name, is_mangled};
pub use demangle::{DemangledBy, demangle_full};
pub use document::{IDENT_SCHEMA, IdentDocument, Identification};
pub use group::{
    GroupOptions, GroupWarning, Grouping, RowSource, TaskGroup, TraceRow, Ungrouped,
    UngroupedReason, group_rows,
};
pub use identity::{
    KeyTrack, OPERATOR_IDENTITY_VERSION, OperatorIdentity, PathContext, canonical_source_path,
    track_for,
};
pub use key::{Keys, is_runtime_api_name, keys, native_key, python_key};
pub use memo::{KeyMemo, MemoStats};
pub use signature::strip_signature;
pub use source_kind::SourceKind;
pub use source_ref::{RefRejection, SourceRef, is_path_shaped, is_placeholder, parse_source_ref};
pub use vendor::{VendorLib, vendor_of};
pub use vocab::{
    NATIVE_EXTENSIONS, RETURN_TYPE_WORDS, RUNTIME_API_NAMES, SOURCE_EXTENSION_RANKS,
    SOURCE_EXTENSIONS, SOURCE_PLACEHOLDERS,
};
