//! The word lists of the crate. Each list lives here once; other modules and
//! other crates (locate) import it instead of copying it.

// The source extensions are spelled once, in the rank groups below; the flat
// lists are concatenated from them at compile time.
const DEVICE_EXTENSIONS: &[&str] = &[".cu", ".cuh", ".hip"];
const HOST_EXTENSIONS: &[&str] = &[".cpp", ".cc", ".cxx", ".c"];
const HEADER_EXTENSIONS: &[&str] = &[".h", ".hpp", ".hh"];
const PYTHON_EXTENSIONS: &[&str] = &[".py"];

/// Every extension a kernel source can have (lower case, with the dot),
/// grouped by how locate ranks a file when everything else ties (the
/// "Ranking" section of docs/design/locate.md, component 6): device sources,
/// host sources, headers, then Python. The group's index is the rank.
pub const SOURCE_EXTENSION_RANKS: &[&[&str]] = &[
    DEVICE_EXTENSIONS,
    HOST_EXTENSIONS,
    HEADER_EXTENSIONS,
    PYTHON_EXTENSIONS,
];

const NATIVE_GROUPS: &[&[&str]] = &[DEVICE_EXTENSIONS, HOST_EXTENSIONS, HEADER_EXTENSIONS];
const NATIVE_ARRAY: [&str; total_len(NATIVE_GROUPS)] = concat(NATIVE_GROUPS);
const SOURCE_ARRAY: [&str; total_len(SOURCE_EXTENSION_RANKS)] = concat(SOURCE_EXTENSION_RANKS);

/// File extensions whose sources hold native (C/C++/CUDA/HIP) kernels: every
/// rank group of [`SOURCE_EXTENSION_RANKS`] but Python. A source path with one
/// of them puts an identity on the native track (docs/design/ident.md,
/// "Operator identity").
pub const NATIVE_EXTENSIONS: &[&str] = &NATIVE_ARRAY;

/// Every extension a kernel source can have: [`NATIVE_EXTENSIONS`] plus `.py`,
/// in rank order. Locate searches this set.
pub const SOURCE_EXTENSIONS: &[&str] = &SOURCE_ARRAY;

const fn total_len(groups: &[&[&str]]) -> usize {
    let mut n = 0;
    let mut g = 0;
    while g < groups.len() {
        n += groups[g].len();
        g += 1;
    }
    n
}

const fn concat<const N: usize>(groups: &[&[&'static str]]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    let mut g = 0;
    while g < groups.len() {
        let mut e = 0;
        while e < groups[g].len() {
            out[i] = groups[g][e];
            i += 1;
            e += 1;
        }
        g += 1;
    }
    out
}

/// Extensions a source reference may end with besides [`SOURCE_EXTENSIONS`]
/// (type stubs name the Python function a kernel is launched from).
pub(crate) const EXTRA_REFERENCE_EXTENSIONS: &[&str] = &[".pyi"];

/// Leading words removed as a return type (ident.md "The key pipeline: Return-type words"). Other return types are
/// recognised by shape after signature stripping.
pub const RETURN_TYPE_WORDS: &[&str] = &[
    "void", "bool", "int", "unsigned", "signed", "long", "short", "char", "float", "double",
    "size_t", "auto",
];

/// Lower-cased names of the runtime and driver launch APIs. A trace row with
/// one of these names is a launch event, never a kernel (ident.md "The key pipeline: Whitespace, non-empty rule and fixpoint").
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

/// Values that stand for "no source" in a source column (ident.md "Source references"), compared
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
/// for unmangled names only these are removed (ident.md "The key pipeline: Suffixes").
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

/// Qualifiers that may follow a parameter list or end a signature (ident.md "The key pipeline: Signature stripping").
pub(crate) const SIGNATURE_QUALIFIERS: &[&str] = &["const", "volatile", "noexcept", "&&", "&"];

/// C++ operator symbols, longest first so the longest match wins (ident.md "The key pipeline: Signature stripping").
pub(crate) const OPERATOR_SYMBOLS: &[&str] = &[
    "<=>", "<<=", ">>=", "->*", "()", "[]", "<<", ">>", "<=", ">=", "->", "==", "!=", "&&", "||",
    "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<", ">", "+", "-", "*", "/", "%",
    "&", "|", "^", "~", "!", "=", ",",
];
