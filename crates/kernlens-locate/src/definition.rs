//! Definition or mention (§7): for a hit file and a keyword, the strongest
//! hit, its line, the enclosing function and the reason code.

use std::path::Path;

use memchr::memmem;
use serde::Serialize;

use crate::cxx::{blank_comments, global_offsets, native_hit};
use crate::python::{PySymbols, scan_python};

/// How a hit was classified; the `why` codes of the result record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum HitKind {
    /// A `def` decorated with a Triton decorator.
    TritonJit,
    /// A `def` decorated with a FlyDSL decorator.
    Flyc,
    /// A `__global__` kernel definition.
    CudaGlobal,
    /// A Rust GPU kernel (`#[cube(launch)]`, `#[kernel]`, rust-gpu entry point).
    RustKernel,
    /// A plain Python `def`.
    Def,
    /// A column-0 Python assignment.
    Assign,
    /// A plain C/C++ (or Rust) function definition.
    Cxx,
    /// Any other occurrence.
    Mention,
}

impl HitKind {
    /// The reason-code stem (`definition:triton_jit`, `mention`).
    pub fn code(self) -> &'static str {
        match self {
            HitKind::TritonJit => "definition:triton_jit",
            HitKind::Flyc => "definition:flyc",
            HitKind::CudaGlobal => "definition:cuda_global",
            HitKind::RustKernel => "definition:rust_kernel",
            HitKind::Def => "definition:def",
            HitKind::Assign => "definition:assign",
            HitKind::Cxx => "definition:cxx",
            HitKind::Mention => "mention",
        }
    }

    /// 2 for a kernel definition, 1 for an ordinary one, 0 for a mention.
    pub fn strength(self) -> u8 {
        match self {
            HitKind::TritonJit | HitKind::Flyc | HitKind::CudaGlobal | HitKind::RustKernel => 2,
            HitKind::Def | HitKind::Assign | HitKind::Cxx => 1,
            HitKind::Mention => 0,
        }
    }
}

/// The analysis of one hit file, made once and cached.
pub(crate) struct FileAnalysis {
    pub lang: Lang,
    line_starts: Vec<usize>,
}

pub(crate) enum Lang {
    Python(PySymbols),
    Native {
        blanked: Vec<u8>,
        globals: Vec<usize>,
    },
    #[cfg(feature = "rust-gpu")]
    Rust(Vec<crate::rust_gpu::RustFn>),
    Other,
}

impl FileAnalysis {
    pub(crate) fn new(path: &Path, bytes: &[u8]) -> FileAnalysis {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        let lang = match ext.as_str() {
            "py" => Lang::Python(scan_python(&String::from_utf8_lossy(bytes))),
            #[cfg(feature = "rust-gpu")]
            "rs" => Lang::Rust(crate::rust_gpu::functions(bytes)),
            e if kernlens_ident::NATIVE_EXTENSIONS
                .iter()
                .any(|n| n.trim_start_matches('.') == e) =>
            {
                let blanked = blank_comments(bytes);
                let globals = global_offsets(&blanked);
                Lang::Native { blanked, globals }
            }
            _ => Lang::Other,
        };
        let mut line_starts = vec![0];
        line_starts.extend(memchr::memchr_iter(b'\n', bytes).map(|i| i + 1));
        FileAnalysis { lang, line_starts }
    }

    /// 1-based line of a byte offset.
    pub(crate) fn line_of(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }

    pub(crate) fn python(&self) -> Option<&PySymbols> {
        match &self.lang {
            Lang::Python(s) => Some(s),
            _ => None,
        }
    }

    /// The innermost enclosing Python def of a line.
    pub(crate) fn function_at(&self, line: usize) -> Option<String> {
        self.python()
            .and_then(|s| s.enclosing_def(line))
            .map(|d| d.name.clone())
    }
}

/// The classification of one keyword in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Classified {
    pub kind: HitKind,
    pub line: usize,
    pub function: Option<String>,
}

/// The spellings a keyword is tried as: `kw`, and `_kw` when `kw` does not
/// start with `_` (a keyword whose leading `_` was lost must still match `def _kw`).
fn spellings(kw: &str) -> Vec<String> {
    if kw.starts_with('_') {
        vec![kw.to_owned()]
    } else {
        vec![kw.to_owned(), format!("_{kw}")]
    }
}

/// Classifies the hits of `kw` in a file: the strongest hit, the first line at
/// that strength.
pub(crate) fn classify_hits(
    analysis: &FileAnalysis,
    bytes: &[u8],
    kw: &str,
    first_offset: Option<usize>,
) -> Classified {
    let mut best: Option<(HitKind, usize, Option<String>)> = None;
    let mut consider = |kind: HitKind, line: usize, function: Option<String>| {
        let better = match &best {
            None => true,
            Some((k, l, _)) => {
                kind.strength() > k.strength() || (kind.strength() == k.strength() && line < *l)
            }
        };
        if better {
            best = Some((kind, line, function));
        }
    };
    for spelling in spellings(kw) {
        match &analysis.lang {
            Lang::Python(s) => {
                for d in s.defs.iter().filter(|d| d.name == spelling) {
                    let kind = if d.triton {
                        HitKind::TritonJit
                    } else if d.flydsl {
                        HitKind::Flyc
                    } else {
                        HitKind::Def
                    };
                    consider(kind, d.line, Some(d.name.clone()));
                }
                for a in s.assignments.iter().filter(|a| a.name == spelling) {
                    consider(HitKind::Assign, a.line, Some(a.name.clone()));
                }
            }
            Lang::Native { blanked, globals } => {
                if let Some(h) = native_hit(blanked, globals, &spelling)
                    && h.strength > 0
                {
                    let kind = if h.strength == 2 {
                        HitKind::CudaGlobal
                    } else {
                        HitKind::Cxx
                    };
                    let name = spelling.rsplit("::").next().unwrap_or(&spelling).to_owned();
                    consider(kind, analysis.line_of(h.offset), Some(name));
                }
            }
            #[cfg(feature = "rust-gpu")]
            Lang::Rust(fns) => {
                for f in fns.iter().filter(|f| f.name == spelling) {
                    let kind = if f.kernel {
                        HitKind::RustKernel
                    } else {
                        HitKind::Cxx
                    };
                    if let Some(o) = crate::rust_gpu::fn_offset(bytes, &f.name) {
                        consider(kind, analysis.line_of(o), Some(f.name.clone()));
                    }
                }
            }
            Lang::Other => {}
        }
    }
    if let Some((kind, line, function)) = best {
        return Classified {
            kind,
            line,
            function,
        };
    }
    let offset = first_offset
        .or_else(|| memmem::find(bytes, kw.as_bytes()))
        .unwrap_or(0);
    let line = analysis.line_of(offset);
    Classified {
        kind: HitKind::Mention,
        line,
        function: analysis.function_at(line),
    }
}
