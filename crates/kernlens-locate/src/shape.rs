//! The shape of a launched name (issue rules 2b, 2d): it decides which
//! language may define it and whether sub-window and prefix guessing is
//! allowed at all.

use serde::Serialize;

use crate::cxx::ANONYMOUS_NAMESPACE;
use crate::keywords::is_identifier;

/// What a kernel name's spelling says about its source language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum NameShape {
    /// An Itanium-mangled symbol or a demangled C++ signature
    /// (`ns::k<…>(…)`): defined only in native files.
    Cxx,
    /// A compiler-generated inductor kernel (`triton_poi_fused_…_N`): defined
    /// only in Python, and its trailing index is part of its identity.
    Inductor,
    /// A bare identifier (Triton, FlyDSL, CuTe-DSL): defined only in Python.
    Bare,
    /// A `::`-qualified name with no parameter list or template arguments
    /// (a profiler wrapper, a class-scoped method): either language.
    Qualified,
    /// A CuTe-DSL symbol (`kernel_cutlass_<method>_<module><Class>_object_at_…`):
    /// defined only by a Python `class` statement (rule 2f).
    CuteDsl,
}

impl NameShape {
    /// Whether a definition in a Python file can be this name's.
    pub fn python_may_define(self) -> bool {
        self != NameShape::Cxx
    }

    /// Whether only `class` statements can define this name.
    pub fn class_defined(self) -> bool {
        self == NameShape::CuteDsl
    }

    /// Whether a definition in a native file can be this name's.
    pub fn native_may_define(self) -> bool {
        matches!(self, NameShape::Cxx | NameShape::Qualified)
    }

    /// Whether sub-window and leading-prefix keywords may be guessed: never
    /// for C++ names (their segments belong to other functions) nor for
    /// inductor names (the index tells siblings apart).
    pub fn allows_guessing(self) -> bool {
        matches!(self, NameShape::Bare | NameShape::Qualified)
    }
}

/// Inductor's kernel-kind tags: `triton_<tag>_…`.
const INDUCTOR_TAGS: &[&str] = &[
    "poi", "per", "red", "tem", "mm", "bmm", "for", "spl", "sca", "fla",
];

/// The shape of a name, from its cleaned text, whether it was mangled and its
/// base name (locate.md "Keywords: Base name, shape and scope").
pub(crate) fn shape_of(cleaned: &str, mangled: bool, base: &str) -> NameShape {
    let bytes = cleaned.as_bytes();
    let cxx_bracket = bytes.iter().enumerate().any(|(i, &b)| {
        (b == b'(' || b == b'<')
            && i > 0
            && (bytes[i - 1].is_ascii_alphanumeric()
                || bytes[i - 1] == b'_'
                || bytes[i - 1] == b'>')
    });
    if mangled || cxx_bracket {
        return NameShape::Cxx;
    }
    if is_inductor_name(base) {
        return NameShape::Inductor;
    }
    if cleaned.contains("::") {
        NameShape::Qualified
    } else {
        NameShape::Bare
    }
}

/// `triton_<tag>_<words>_<digits>`.
pub(crate) fn is_inductor_name(base: &str) -> bool {
    let mut segs = base.split('_');
    let (Some("triton"), Some(tag)) = (segs.next(), segs.next()) else {
        return false;
    };
    INDUCTOR_TAGS.contains(&tag)
        && base
            .rsplit('_')
            .next()
            .is_some_and(|last| !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit()))
        && base.split('_').count() >= 4
}

/// The namespace and class qualifiers of a C++ name's native key, outermost
/// first, anonymous namespaces included (`at::native::(anonymous
/// namespace)::k` gives `[at, native, (anonymous namespace)]`). Anything
/// else (a lambda, a function scope) makes the scope unknowable: `None`.
pub(crate) fn qualifiers_of(components: &[&str]) -> Option<Vec<String>> {
    let Some((_, scopes)) = components.split_last() else {
        return Some(Vec::new());
    };
    scopes
        .iter()
        .map(|c| (is_identifier(c) || *c == ANONYMOUS_NAMESPACE).then(|| (*c).to_owned()))
        .collect()
}

/// The top-level template arguments of `base` in a C++ name's full text
/// (`void ns::k<1, ns::T<int>, float>(…)` gives `1`, `ns::T<int>`, `float`).
pub(crate) fn template_args(full: &str, base: &str) -> Vec<String> {
    let b = full.as_bytes();
    let pat = format!("{base}<");
    let mut from = 0;
    let start = loop {
        let Some(p) = full[from..].find(&pat) else {
            return Vec::new();
        };
        let at = from + p;
        if at == 0 || !(b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_') {
            break at + pat.len();
        }
        from = at + 1;
    };
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut arg_start = start;
    for (i, &c) in b.iter().enumerate().skip(start) {
        match c {
            b'<' | b'(' | b'[' | b'{' => depth += 1,
            b'>' | b')' | b']' | b'}' if depth == 0 => {
                out.push(full[arg_start..i].trim().to_owned());
                return out;
            }
            b'>' | b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                out.push(full[arg_start..i].trim().to_owned());
                arg_start = i + 1;
            }
            _ => {}
        }
    }
    Vec::new()
}

/// The class a template argument names: its last `::` component before any
/// `<`, when that is an identifier (`ck::T<int>` gives `T`; `1` gives none).
pub(crate) fn type_head(arg: &str) -> Option<String> {
    let arg = arg
        .trim()
        .trim_start_matches("const ")
        .trim_start_matches("struct ")
        .trim_start_matches("class ");
    let head = arg.split('<').next()?.trim();
    let last = head.rsplit("::").next()?.trim();
    (is_identifier(last) && !last.bytes().all(|c| c.is_ascii_digit())).then(|| last.to_owned())
}

/// CuTe-DSL's symbol marker and the separator before the argument layout.
const CUTE_PREFIX: &str = "kernel_cutlass_";
const CUTE_OBJECT: &str = "_object_at_";

/// Rule 2f: a CuTe-DSL symbol's class name and the text before it (the
/// kernel method, `_`, and the module path without dots).
/// `kernel_cutlass_kernel_pkgmodK_object_at_…` with class `K` gives
/// (`K`, `kernel_pkgmod`). The class is the trailing run of the part before
/// `_object_at_` that starts with an upper-case letter after the last `_`.
pub(crate) fn cute_symbol(base: &str) -> Option<(String, String)> {
    let rest = base.strip_prefix(CUTE_PREFIX)?;
    let head = &rest[..rest.find(CUTE_OBJECT)?];
    let last = head.rfind('_').map_or(0, |p| p + 1);
    let class_at = last + head[last..].find(|c: char| c.is_ascii_uppercase())?;
    let class = &head[class_at..];
    is_identifier(class).then(|| (class.to_owned(), head[..class_at].to_owned()))
}
