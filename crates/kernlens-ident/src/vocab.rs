//! The word lists of the crate. Each list lives here once; other modules and
//! other crates (locate) import it instead of copying it.

/// File extensions (lower case, with the dot) whose sources hold native
/// (C/C++/CUDA/HIP) kernels; a source path with one of them puts an identity
/// on the native track (spec §5).
pub const NATIVE_EXTENSIONS: &[&str] = &[
    ".cu", ".cuh", ".hip", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh",
];

/// Every extension a kernel source can have: [`NATIVE_EXTENSIONS`] plus `.py`.
/// Locate searches this set.
pub const SOURCE_EXTENSIONS: &[&str] = &[
    ".cu", ".cuh", ".hip", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh", ".py",
];

/// [`SOURCE_EXTENSIONS`] grouped by how locate ranks a file when everything
/// else ties (locate.md §8.1 component 6): device sources, host sources,
/// headers, then Python. The group's index is the rank.
pub const SOURCE_EXTENSION_RANKS: &[&[&str]] = &[
    &[".cu", ".cuh", ".hip"],
    &[".cpp", ".cc", ".cxx", ".c"],
    &[".h", ".hpp", ".hh"],
    &[".py"],
];

/// Extensions a source reference may end with besides [`SOURCE_EXTENSIONS`]
/// (type stubs name the Python function a kernel is launched from).
pub(crate) const EXTRA_REFERENCE_EXTENSIONS: &[&str] = &[".pyi"];

/// Leading words removed as a return type (spec §4.4). Other return types are
/// recognised by shape after signature stripping.
pub const RETURN_TYPE_WORDS: &[&str] = &[
    "void", "bool", "int", "unsigned", "signed", "long", "short", "char", "float", "double",
    "size_t", "auto",
];

/// Lower-cased names of the runtime and driver launch APIs. A trace row with
/// one of these names is a launch event, never a kernel (spec §4.7).
pub const RUNTIME_API_NAMES: &[&str] = &[
    "cudagraphlaunch",
    "cudalaunchcooperativekernel",
    "cudalaunchkernel",
    "cudalaunchkernelexc",
    "cudamodulelaunchkernel",
    "culaunchkernel",
    "culaunchkernelex",
    "culaunchcooperativekernel",
    "cugraphlaunch",
    "hipextlaunchkernel",
    "hipextmodulelaunchkernel",
    "hipgraphlaunch",
    "hiplaunchcooperativekernel",
    "hiplaunchkernel",
    "hipmodulelaunchkernel",
];

/// Values that stand for "no source" in a source column (spec §7), compared
/// lower-cased with inner whitespace collapsed.
pub const SOURCE_PLACEHOLDERS: &[&str] = &[
    "-",
    "\u{2014}",
    "\u{2013}",
    "n/a",
    "none",
    "not found",
    "not_found",
    "notfound",
    "null",
    "tbd",
    "unknown",
];

/// Clone-suffix words a compiler appends after a dot (`.cold`, `.isra.0`);
/// for unmangled names only these are removed (spec §4.3).
pub(crate) const CLONE_SUFFIX_WORDS: &[&str] = &[
    "cold",
    "isra",
    "constprop",
    "part",
    "lto_priv",
    "localalias",
    "llvm",
    "intern",
];

/// Qualifiers that may follow a parameter list or end a signature (spec §4.6).
pub(crate) const SIGNATURE_QUALIFIERS: &[&str] = &["const", "volatile", "noexcept", "&&", "&"];

/// C++ operator symbols, longest first so the longest match wins (spec §4.6).
pub(crate) const OPERATOR_SYMBOLS: &[&str] = &[
    "<=>", "<<=", ">>=", "->*", "()", "[]", "<<", ">>", "<=", ">=", "->", "==", "!=", "&&", "||",
    "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<", ">", "+", "-", "*", "/", "%",
    "&", "|", "^", "~", "!", "=", ",",
];
