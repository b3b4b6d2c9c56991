//! The key pipeline (ident.md "The key pipeline"): one round of cleaning, demangling and stripping,
//! repeated to a fixpoint, for the native and the python track.

use std::borrow::Cow;

use serde::Serialize;

use crate::clean::{clean, is_mangled_shape};
use crate::demangle::{DemangledBy, demangle_for_key};
use crate::signature::{collapse_whitespace, split_return_type, strip_signature_of};
use crate::vocab::RUNTIME_API_NAMES;

/// Rounds of the pipeline at most; a name whose demangled form is itself
/// mangled needs two.
const MAX_ROUNDS: usize = 4;

/// Both keys of one name and how they were made.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Keys {
    /// The native key: demangled, qualified, without template arguments or
    /// parameters (`at::native::vectorized_elementwise_kernel`).
    pub native: String,
    /// The python key: the same pipeline without demangling; a mangled name
    /// stays as its cleaned mangled text.
    pub python: String,
    /// Whether the cleaned name was a mangled symbol.
    pub mangled: bool,
    /// Whether a truncation marker (`…`, `...`) was removed.
    pub truncated: bool,
    /// How the native key's mangled name was read.
    pub demangled_by: DemangledBy,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Track {
    Native,
    Python,
}

struct Round {
    text: String,
    truncated: bool,
    /// Whether this round's cleaned text was mangled.
    mangled: bool,
    demangled_by: DemangledBy,
}

fn round(input: &str, track: Track) -> Round {
    let cleaned = clean(input);
    let text = cleaned.text;
    let mut result = Round {
        text: String::new(),
        truncated: cleaned.truncated,
        mangled: false,
        demangled_by: DemangledBy::None,
    };
    if text.is_empty() {
        return result;
    }
    let mut readable: Cow<'_, str> = Cow::Borrowed(text);
    if is_mangled_shape(text) {
        result.mangled = true;
        let demangled = match track {
            Track::Python => None,
            Track::Native => demangle_for_key(text),
        };
        match demangled {
            Some((demangled, by)) => {
                result.demangled_by = by;
                readable = Cow::Owned(demangled);
            }
            None => {
                // The raw fallback: deterministic and distinct per symbol.
                result.text = text.to_owned();
                return result;
            }
        }
    }
    if readable.contains('`') {
        readable = Cow::Owned(readable.replace("`anonymous namespace'", "(anonymous namespace)"));
    }
    let stripped = strip_signature_of(&readable, cleaned.truncated);
    let collapsed = collapse_whitespace(split_return_type(&stripped));
    result.text = if collapsed.is_empty() {
        text.to_owned()
    } else {
        collapsed
    };
    result
}

struct Fixpoint {
    key: String,
    truncated: bool,
    first_mangled: bool,
    any_mangled: bool,
    demangled_by: DemangledBy,
}

fn fixpoint(raw: &str, track: Track) -> Fixpoint {
    let first = round(raw, track);
    let mut state = Fixpoint {
        truncated: first.truncated,
        first_mangled: first.mangled,
        any_mangled: first.mangled,
        demangled_by: first.demangled_by,
        key: first.text,
    };
    for _ in 1..MAX_ROUNDS {
        let next = round(&state.key, track);
        state.truncated |= next.truncated;
        state.any_mangled |= next.mangled;
        if state.demangled_by == DemangledBy::None {
            state.demangled_by = next.demangled_by;
        }
        if next.text == state.key {
            break;
        }
        state.key = next.text;
    }
    state
}

/// The native key of a kernel name: the qualified C++/CUDA/HIP function name
/// without return type, parameters or template arguments. Mangled names are
/// demangled.
///
/// ```
/// use kernlens_ident::native_key;
/// assert_eq!(
///     native_key("hipGraphLaunch->_ZN5aiter24add_rmsnorm_quant_kernelIDF16bEEv.kd"),
///     "aiter::add_rmsnorm_quant_kernel"
/// );
/// assert_eq!(native_key("cudaGraphLaunch->void foo_kernel<int>(int)"), "foo_kernel");
/// ```
pub fn native_key(name: &str) -> String {
    fixpoint(name, Track::Native).key
}

/// The python key of a kernel name: the same pipeline as [`native_key`]
/// without demangling, for Triton and Python kernels whose autotune and hash
/// suffixes (`_0`, `_0d1d2d`) are part of the name.
///
/// ```
/// use kernlens_ident::python_key;
/// assert_eq!(python_key("cudaGraphLaunch->triton_poi_fused_gelu_view_2 (Synthetic Op)"),
///            "triton_poi_fused_gelu_view_2");
/// assert_eq!(python_key("_Z3fooi.cold"), "_Z3fooi");
/// ```
pub fn python_key(name: &str) -> String {
    fixpoint(name, Track::Python).key
}

/// Both keys of `name` in one call; cheaper than calling [`native_key`] and
/// [`python_key`] separately, because an unmangled name's keys are shared.
///
/// ```
/// let keys = kernlens_ident::keys("_Z14rmsnorm_kernelPf");
/// assert_eq!(keys.native, "rmsnorm_kernel");
/// assert_eq!(keys.python, "_Z14rmsnorm_kernelPf");
/// assert!(keys.mangled);
/// ```
pub fn keys(name: &str) -> Keys {
    let python = fixpoint(name, Track::Python);
    if !python.any_mangled {
        // No round met a mangled text, so the native rounds would have been
        // the very same computation.
        return Keys {
            native: python.key.clone(),
            python: python.key,
            mangled: false,
            truncated: python.truncated,
            demangled_by: DemangledBy::None,
        };
    }
    let native = fixpoint(name, Track::Native);
    Keys {
        native: native.key,
        python: python.key,
        mangled: python.first_mangled,
        truncated: python.truncated || native.truncated,
        demangled_by: native.demangled_by,
    }
}

/// Whether `name` is a runtime or driver launch API (`cudaLaunchKernel`,
/// `cuLaunchKernelEx`, `hipGraphLaunch`, …) rather than a kernel.
///
/// ```
/// assert!(kernlens_ident::is_runtime_api_name("cuLaunchKernelEx"));
/// assert!(!kernlens_ident::is_runtime_api_name("nvjet_sm90_tst"));
/// ```
pub fn is_runtime_api_name(name: &str) -> bool {
    let key = python_key(name);
    RUNTIME_API_NAMES
        .iter()
        .any(|api| api.eq_ignore_ascii_case(&key))
}
