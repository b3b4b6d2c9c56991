//! Definition or mention (locate.md "What a hit proves"): for a hit file and a keyword, the strongest
//! hit, its line, the enclosing function and the reason code.

use std::path::Path;

use serde::Serialize;

use crate::cxx::{
    KernelMacro, NamespaceScope, NativeHit, blank_comments, c_linkage_at, global_offsets,
    kernel_macros, macro_like, namespace_scopes, native_hits, scope_at, scope_matches,
    trampoline_param, whole_word_offsets,
};
use crate::python::{PySymbols, scan_python_bytes};
use crate::shape::NameShape;
use crate::triton_repr::always_suffixed;

/// How a hit was classified; the `why` codes of the result record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub(crate) enum HitKind {
    /// A `def` decorated with a Triton decorator.
    TritonJit,
    /// A `def` decorated with a FlyDSL decorator.
    Flyc,
    /// A Python `class` statement (a CuTe-DSL kernel class, rule 2f).
    Class,
    /// A `__global__` kernel definition.
    CudaGlobal,
    /// A Rust GPU kernel (`#[cube(launch)]`, `#[kernel]`, rust-gpu entry point).
    #[cfg_attr(not(feature = "rust-gpu"), allow(dead_code))]
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
            HitKind::Class => "definition:class",
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
            HitKind::Def | HitKind::Assign | HitKind::Cxx | HitKind::Class => 1,
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
        namespaces: Vec<NamespaceScope>,
        macros: Vec<KernelMacro>,
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
            "py" => Lang::Python(scan_python_bytes(bytes)),
            #[cfg(feature = "rust-gpu")]
            "rs" => Lang::Rust(crate::rust_gpu::functions(bytes)),
            e if kernlens_ident::NATIVE_EXTENSIONS
                .iter()
                .any(|n| n.trim_start_matches('.') == e) =>
            {
                let blanked = blank_comments(bytes);
                let globals = global_offsets(&blanked);
                let namespaces = namespace_scopes(&blanked);
                let macros = kernel_macros(&blanked);
                Lang::Native {
                    blanked,
                    globals,
                    namespaces,
                    macros,
                }
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

    /// The comment-blanked text of a native file.
    pub(crate) fn native_text(&self) -> Option<&[u8]> {
        match &self.lang {
            Lang::Native { blanked, .. } => Some(blanked),
            _ => None,
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
    /// The hit spells the keyword exactly (not its `_`-prefixed form).
    pub exact: bool,
    /// A native generic trampoline: the index of the template type parameter
    /// its body only constructs or invokes (rule 2h).
    pub trampoline: Option<usize>,
    /// A stronger native definition held back because its enclosing scope
    /// names an object-like macro (`namespace FLASH_NAMESPACE {`); ranking
    /// resolves the macro and promotes it when the scope then matches.
    pub deferred: Option<Box<Deferred>>,
}

impl Classified {
    /// A definition of `name` at `line` with no further evidence attached.
    pub(crate) fn definition(kind: HitKind, line: usize, name: &str) -> Classified {
        Classified {
            kind,
            line,
            function: Some(name.to_owned()),
            exact: true,
            trampoline: None,
            deferred: None,
        }
    }
}

/// A definition whose scope is known once its macro components are resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Deferred {
    pub scope: Vec<String>,
    pub class: Classified,
}

/// What the launched name allows a definition to be (rules 2b): which
/// language, and for a C++ name which enclosing scopes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Query<'a> {
    pub shape: NameShape,
    pub qualifiers: Option<&'a [String]>,
    pub template_instance: Option<bool>,
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

/// Classifies the hits of `kw` in a file: the strongest definition the name
/// allows (the first line at that strength, the exact spelling before the
/// `_`-prefixed one), else the first whole-identifier mention outside
/// comments and docstrings, else `None`: the file is no evidence at all
/// (rule 2a).
pub(crate) fn classify_hits(
    analysis: &FileAnalysis,
    bytes: &[u8],
    kw: &str,
    query: Query<'_>,
) -> Option<Classified> {
    let mut best: Option<Classified> = None;
    let mut consider = |kind: HitKind,
                        line: usize,
                        function: Option<String>,
                        exact: bool,
                        trampoline: Option<usize>| {
        let better = match &best {
            None => true,
            Some(b) => {
                (kind.strength(), exact, std::cmp::Reverse(line))
                    > (b.kind.strength(), b.exact, std::cmp::Reverse(b.line))
            }
        };
        if better {
            best = Some(Classified {
                kind,
                line,
                function,
                exact,
                trampoline,
                deferred: None,
            });
        }
    };
    let mut first_mention: Option<usize> = None;
    let mut deferred: Option<Box<Deferred>> = None;
    let mut mention_at = |o: usize| {
        if first_mention.is_none_or(|m| o < m) {
            first_mention = Some(o);
        }
    };
    for spelling in spellings(kw) {
        let exact = spelling == kw;
        match &analysis.lang {
            Lang::Python(s) => {
                if query.shape.class_defined() {
                    for c in s.classes.iter().filter(|c| c.name == spelling) {
                        consider(HitKind::Class, c.line, Some(c.name.clone()), exact, None);
                    }
                } else if query.shape.python_may_define() {
                    // A def whose repr always appends `_KEY_value` pairs is
                    // never launched under its bare name (rule 2e).
                    for d in s
                        .defs
                        .iter()
                        .filter(|d| d.name == spelling && !always_suffixed(s, bytes, d))
                    {
                        let kind = if d.triton {
                            HitKind::TritonJit
                        } else if d.flydsl {
                            HitKind::Flyc
                        } else {
                            HitKind::Def
                        };
                        consider(kind, d.line, Some(d.name.clone()), exact, None);
                    }
                    for a in s.assignments.iter().filter(|a| a.name == spelling) {
                        consider(HitKind::Assign, a.line, Some(a.name.clone()), exact, None);
                    }
                }
                if let Some(o) = whole_word_offsets(bytes, spelling.as_bytes())
                    .into_iter()
                    .find(|&o| !s.is_documentation(o))
                {
                    mention_at(o);
                }
            }
            Lang::Native {
                blanked,
                globals,
                namespaces,
                macros,
            } => {
                let hits = native_hits(blanked, globals, macros, &spelling);
                if let Some(h) = hits.first() {
                    mention_at(h.offset);
                }
                // A bare name is native only through C linkage (rule 2b).
                let c_only = !query.shape.native_may_define();
                if c_only && query.shape != NameShape::Bare {
                    continue;
                }
                let templated =
                    |h: &NativeHit| query.template_instance.is_none_or(|t| t == h.template_head);
                let in_scope = |o: usize| {
                    query
                        .qualifiers
                        .is_none_or(|q| scope_matches(&scope_at(namespaces, blanked, o), q))
                };
                let best_hit = hits
                    .iter()
                    .filter(|h| h.strength > 0 && in_scope(h.offset) && templated(h))
                    .filter(|h| !c_only || c_linkage_at(namespaces, blanked, h.offset))
                    .max_by_key(|h| (h.strength, std::cmp::Reverse(h.offset)));
                if best_hit.is_none() && !c_only && deferred.is_none() && query.qualifiers.is_some()
                {
                    deferred = hits
                        .iter()
                        .filter(|h| h.strength > 0 && templated(h))
                        .map(|h| (h, scope_at(namespaces, blanked, h.offset)))
                        .find(|(_, scope)| scope.iter().any(|c| macro_like(c)))
                        .map(|(h, scope)| {
                            Box::new(Deferred {
                                scope,
                                class: Classified {
                                    kind: if h.strength == 2 {
                                        HitKind::CudaGlobal
                                    } else {
                                        HitKind::Cxx
                                    },
                                    line: analysis.line_of(h.offset),
                                    function: Some(
                                        spelling
                                            .rsplit("::")
                                            .next()
                                            .unwrap_or(&spelling)
                                            .to_owned(),
                                    ),
                                    exact,
                                    trampoline: trampoline_param(blanked, h.offset, spelling.len()),
                                    deferred: None,
                                },
                            })
                        });
                }
                if let Some(h) = best_hit {
                    let kind = if h.strength == 2 {
                        HitKind::CudaGlobal
                    } else {
                        HitKind::Cxx
                    };
                    let name = spelling.rsplit("::").next().unwrap_or(&spelling).to_owned();
                    let trampoline = trampoline_param(blanked, h.offset, spelling.len());
                    consider(
                        kind,
                        analysis.line_of(h.offset),
                        Some(name),
                        exact,
                        trampoline,
                    );
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
                        consider(kind, analysis.line_of(o), Some(f.name.clone()), exact, None);
                    }
                }
                if let Some(&o) = whole_word_offsets(bytes, spelling.as_bytes()).first() {
                    mention_at(o);
                }
            }
            Lang::Other => {
                if let Some(&o) = whole_word_offsets(bytes, spelling.as_bytes()).first() {
                    mention_at(o);
                }
            }
        }
    }
    if best.is_some() {
        return best;
    }
    let line = analysis.line_of(first_mention?);
    Some(Classified {
        kind: HitKind::Mention,
        line,
        function: analysis.function_at(line),
        exact: true,
        trampoline: None,
        deferred,
    })
}

/// Rule 2h: the first class definition of `name` in a native hit file.
pub(crate) fn class_definition_line(analysis: &FileAnalysis, name: &str) -> Option<usize> {
    match &analysis.lang {
        Lang::Native { blanked, .. } => {
            crate::cxx::class_definition(blanked, name).map(|o| analysis.line_of(o))
        }
        _ => None,
    }
}
