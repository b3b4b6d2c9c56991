//! Source kinds (locate.md "Source kind"): what sort of source a kernel comes from, decided from
//! its name, its path and the first bytes of the file.

use std::io::Read;
use std::path::{Path, PathBuf};

pub use kernlens_ident::SourceKind;
use kernlens_ident::{NATIVE_EXTENSIONS, vendor_of};

use crate::keywords::{base_and_qualifier, keywords_for};
use crate::python::scan_python_bytes;

/// Path fragments of runtime-generated caches (compared lower-cased, `\` as `/`).
pub const RUNTIME_GENERATED_MARKERS: &[&str] = &[
    "/tmp/torchinductor",
    "/torchinductor_",
    "/.cache/torch/inductor",
    "/inductor_cache/",
    "/.triton/cache",
    "/triton/cache",
    "/triton_cache/",
];

/// Name fragments of compiler-generated kernels.
const GENERATED_NAME_MARKERS: &[&str] = &[
    "triton_poi_",
    "triton_red_",
    "triton_per_",
    "triton_tem_",
    "triton_for_",
    "triton_spl_",
    "torchinductor",
    "inductor",
];

const FLYDSL_NAME_MARKERS: &[&str] = &["pseudo_op::moe_flydsl_", "pseudo_op::flydsl_"];
const HIP_TEXT_MARKERS: &[&str] = &[
    "hip/hip_runtime",
    "hipLaunchKernelGGL",
    "hipStream_t",
    "__HIP_PLATFORM",
];
const CUDA_TEXT_MARKERS: &[&str] = &["cuda_runtime", "cudaStream_t", "<<<"];
const FLYDSL_TEXT_MARKERS: &[&str] = &[
    "import flydsl",
    "from flydsl",
    "@flyc.kernel",
    "@flyc.jit",
    "flydsl.compiler",
    "flydsl.expr",
];
const NATIVE_PEEK_BYTES: usize = 64 * 1024;
const PYTHON_PEEK_BYTES: usize = 4 * 1024;

/// What kind classification needs besides the name and path.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct KindContext {
    /// The `TORCHINDUCTOR_CACHE_DIR` value, when set (read at the edge).
    pub inductor_cache_dir: Option<PathBuf>,
    /// The `TRITON_CACHE_DIR` value, when set.
    pub triton_cache_dir: Option<PathBuf>,
    /// Roots whose sources are maintained (not runtime caches). A locator
    /// adds its reusable roots here.
    pub reusable_roots: Vec<PathBuf>,
}

impl KindContext {
    /// No cache directories and no reusable roots.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same context with the `TORCHINDUCTOR_CACHE_DIR` value.
    pub fn with_inductor_cache_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.inductor_cache_dir = dir;
        self
    }

    /// The same context with the `TRITON_CACHE_DIR` value.
    pub fn with_triton_cache_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.triton_cache_dir = dir;
        self
    }

    /// The same context with these maintained roots.
    pub fn with_reusable_roots(mut self, roots: Vec<PathBuf>) -> Self {
        self.reusable_roots = roots;
        self
    }

    /// A context with the cache directories handed in from the environment.
    pub fn with_cache_dirs(inductor: Option<PathBuf>, triton: Option<PathBuf>) -> Self {
        KindContext {
            inductor_cache_dir: inductor,
            triton_cache_dir: triton,
            reusable_roots: Vec::new(),
        }
    }
}

/// True when a path (any spelling) contains a runtime-generated marker.
pub(crate) fn has_runtime_marker(path: &str) -> bool {
    let p = path.replace('\\', "/").to_lowercase();
    RUNTIME_GENERATED_MARKERS.iter().any(|m| p.contains(m))
}

fn extension_of(path: &Path) -> Option<String> {
    path.extension()
        .map(|e| format!(".{}", e.to_string_lossy().to_lowercase()))
}

fn peek(path: &Path, limit: usize) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.take(limit as u64).read_to_end(&mut buf);
    }
    buf
}

fn contains_any(hay: &[u8], needles: &[&str]) -> bool {
    needles
        .iter()
        .any(|n| memchr::memmem::find(hay, n.as_bytes()).is_some())
}

/// The source kind of kernel `name` found at `path` (`None` or an empty
/// path when nothing was found). Reads at most 64 KiB of the file.
pub fn source_kind_for(name: &str, path: Option<&Path>, ctx: &KindContext) -> SourceKind {
    let lower = name.to_lowercase();
    if FLYDSL_NAME_MARKERS.iter().any(|m| lower.contains(m)) {
        return SourceKind::FlyDsl;
    }
    let path = path.filter(|p| !p.as_os_str().is_empty());
    if let Some(p) = path {
        let text = p.to_string_lossy();
        let under = |d: &Option<PathBuf>| d.as_ref().is_some_and(|d| p.starts_with(d));
        if has_runtime_marker(&text)
            || under(&ctx.inductor_cache_dir)
            || under(&ctx.triton_cache_dir)
        {
            return SourceKind::RuntimeGenerated;
        }
    }
    let generated_name = GENERATED_NAME_MARKERS.iter().any(|m| lower.contains(m));
    let reusable = path.is_some_and(|p| ctx.reusable_roots.iter().any(|r| p.starts_with(r)));
    if generated_name && !reusable {
        return SourceKind::RuntimeGenerated;
    }
    if let Some(p) = path {
        let ext = extension_of(p).unwrap_or_default();
        if NATIVE_EXTENSIONS.contains(&ext.as_str()) {
            let head = peek(p, NATIVE_PEEK_BYTES);
            return if contains_any(&head, HIP_TEXT_MARKERS) || ext == ".hip" {
                SourceKind::Hip
            } else if ext == ".cu" || ext == ".cuh" || contains_any(&head, CUDA_TEXT_MARKERS) {
                SourceKind::Cuda
            } else {
                SourceKind::Cpp
            };
        }
        if ext == ".py" {
            if lower.contains("triton") {
                return SourceKind::Triton;
            }
            let head = peek(p, PYTHON_PEEK_BYTES);
            if contains_any(&head, FLYDSL_TEXT_MARKERS) {
                return SourceKind::FlyDsl;
            }
            if let Ok(text) = std::fs::read(p) {
                let symbols = scan_python_bytes(&text);
                let symbol = traced_symbol(name);
                if symbols
                    .defs
                    .iter()
                    .any(|d| d.triton && cores_match(&core_of(&d.name), &core_of(&symbol)))
                {
                    return SourceKind::Triton;
                }
            }
            return SourceKind::Python;
        }
    }
    if vendor_of(name).is_some() {
        return SourceKind::VendorBinary;
    }
    SourceKind::Unknown
}

/// The base name (locate.md "Keywords: Base name, shape and scope") of a traced name, or the name itself when it has none.
fn traced_symbol(name: &str) -> String {
    let plan = keywords_for(name);
    if !plan.base.is_empty() {
        return plan.base;
    }
    let key = kernlens_ident::native_key(name);
    base_and_qualifier(&key).0.to_owned()
}

/// The core of a symbol for Triton def matching (locate.md "Source kind: The Python scanner").
pub fn core_of(name: &str) -> String {
    let cut = name
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(name.len());
    let mut s = &name[..cut];
    while let Some(i) = s.rfind('_') {
        let seg = &s[i + 1..];
        let generated = seg.starts_with(|c: char| c.is_ascii_digit())
            && seg
                .chars()
                .all(|c| c.is_ascii_digit() || c == 'd' || c == 'e');
        if generated {
            s = &s[..i];
        } else {
            break;
        }
    }
    s.trim_matches('_').to_lowercase()
}

/// Two cores match when equal, or when the shorter (of at least 2 segments)
/// is a contiguous run of the longer's `_` segments.
pub fn cores_match(a: &str, b: &str) -> bool {
    if a.is_empty() || b.is_empty() {
        return false;
    }
    if a == b {
        return true;
    }
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let s: Vec<&str> = short.split('_').filter(|x| !x.is_empty()).collect();
    let l: Vec<&str> = long.split('_').filter(|x| !x.is_empty()).collect();
    s.len() >= 2 && l.windows(s.len()).any(|w| w == s.as_slice())
}
