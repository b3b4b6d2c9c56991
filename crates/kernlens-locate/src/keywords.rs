//! Keyword plans (locate.md "Keywords"): which literal strings each pass searches for a name.

use kernlens_ident::{DemangledBy, RETURN_TYPE_WORDS, clean_name, is_runtime_api_name, keys};
use serde::Serialize;

use crate::shape::{NameShape, cute_symbol, qualifiers_of, shape_of, template_args};

/// Namespaces and framework words that occur everywhere in kernel trees, so
/// searching for them alone finds nothing useful (`aiter` matches every
/// aiter file).
pub const NAMESPACE_BLOCKLIST: &[&str] = &[
    "aiter",
    "sglang",
    "vllm",
    "torch",
    "ck_tile",
    "ck",
    "pybind",
    "RankData",
    "RankSignals",
    "Signal",
    "module",
    "namespace",
    "at",
    "native",
    "std",
    "c10",
    "cuda",
    "hip",
    "detail",
    "impl",
];

/// Type words besides ident's return-type words that are never a kernel's name.
const EXTRA_TYPE_WORDS: &[&str] = &["string"];

const MAX_PRIMARY: usize = 3;
const MAX_SUBWINDOWS: usize = 6;
const MAX_PREFIXES: usize = 8;
const MIN_PRIMARY_CHARS: usize = 5;
const MIN_WINDOW_CHARS: usize = 6;

/// Why a name is not searched at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Refusal {
    /// A launch API (`hipGraphLaunch`, `cudaLaunchKernel`), not a kernel.
    RuntimeApiName,
    /// A memory copy or set row.
    NotAKernel,
    /// No keyword survived the filters.
    NoSearchableKeyword,
}

impl Refusal {
    /// The stable reason code.
    pub const fn as_str(self) -> &'static str {
        match self {
            Refusal::RuntimeApiName => "runtime_api_name",
            Refusal::NotAKernel => "not_a_kernel",
            Refusal::NoSearchableKeyword => "no_searchable_keyword",
        }
    }
}

/// The keywords of the three passes for one name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct KeywordPlan {
    /// The name as given.
    pub name: String,
    /// The base name (locate.md "Keywords: Base name, shape and scope"), the symbol the passes are built from.
    pub base: String,
    /// Primary keywords, at most 3, in the order tried.
    pub primary: Vec<String>,
    /// Sub-window keywords (leading segments dropped), at most 6, longest first.
    pub subwindows: Vec<String>,
    /// Leading-prefix keywords (trailing segments dropped), at most 8,
    /// the shortest kept and tried longest first.
    pub prefixes: Vec<String>,
    /// Set when the name is not searched.
    pub refusal: Option<Refusal>,
    /// What the spelling says about the defining language (rules 2b, 2d).
    pub shape: NameShape,
    /// The C++ namespace/class qualifiers of the native key, outermost first,
    /// `(anonymous namespace)` included; `None` for other shapes and when a
    /// scope cannot be compared (a lambda or function scope).
    pub qualifiers: Option<Vec<String>>,
    /// A C++ name's top-level template arguments, as written: a generic
    /// trampoline's bound class is read from them (rule 2h) and scanned for
    /// only when a trampoline is met.
    pub template_args: Vec<String>,
    /// A CuTe-DSL symbol's method-and-module text (rule 2f): a file whose
    /// module path, dots dropped, ends it is preferred.
    pub module_text: Option<String>,
    /// For a demangled C++ name: whether it is a template instance (it
    /// prints template arguments). Only a `template` definition can be one,
    /// and only a non-template definition can be a name without them.
    pub template_instance: Option<bool>,
}

impl KeywordPlan {
    /// Every keyword of every pass, in the order the passes try them
    /// (duplicates kept; the driver skips repeats).
    pub fn all(&self) -> impl Iterator<Item = &str> {
        self.primary
            .iter()
            .chain(&self.subwindows)
            .chain(&self.prefixes)
            .map(String::as_str)
    }
}

/// The keyword plan for a kernel name as a trace spells it.
pub fn keywords_for(name: &str) -> KeywordPlan {
    let mut plan = KeywordPlan {
        name: name.to_owned(),
        base: String::new(),
        primary: Vec::new(),
        subwindows: Vec::new(),
        prefixes: Vec::new(),
        refusal: None,
        shape: NameShape::Bare,
        qualifiers: None,
        template_args: Vec::new(),
        module_text: None,
        template_instance: None,
    };
    if is_runtime_api_name(name) {
        plan.refusal = Some(Refusal::RuntimeApiName);
        return plan;
    }
    let cleaned = clean_name(name);
    if cleaned.starts_with("Memcpy ") || cleaned.starts_with("Memset ") {
        plan.refusal = Some(Refusal::NotAKernel);
        return plan;
    }
    let k = keys(name);
    let raw_candidates: Vec<String>;
    if k.mangled && k.demangled_by == DemangledBy::None {
        // Neither demangler read it: every length-prefixed identifier is a
        // candidate, most `_` first, then longest.
        let mut tokens = filter_tokens(lenient_identifiers(&k.native), None);
        // Stable, so equal tokens keep their order of appearance.
        tokens.sort_by_cached_key(|t| std::cmp::Reverse((underscores(t), t.len())));
        tokens.truncate(MAX_PRIMARY);
        plan.base = tokens.first().cloned().unwrap_or_default();
        raw_candidates = tokens;
    } else {
        let (base, qualifier) = base_and_qualifier(&k.native);
        plan.base = base.to_owned();
        plan.shape = shape_of(cleaned, k.mangled, base);
        let mut tokens = Vec::new();
        if let Some(q) = qualifier.filter(|q| q.starts_with(|c: char| c.is_ascii_uppercase())) {
            tokens.push(format!("{q}::{base}"));
        }
        // A C++ identifier's trailing `_` is part of it (`k_sml_`): that
        // spelling is tried first, the stripped one after (rule 2i).
        let whole = (plan.shape == NameShape::Cxx && base.ends_with('_') && is_identifier(base))
            .then_some(base);
        if whole.is_some() {
            tokens.push(base.to_owned());
        }
        tokens.push(base.to_owned());
        let mut tokens = filter_tokens(tokens, whole);
        tokens.truncate(MAX_PRIMARY);
        raw_candidates = tokens;
    }
    if k.mangled {
        plan.shape = NameShape::Cxx;
    }
    // A mangled text no demangler read has no scope to compare.
    if plan.shape == NameShape::Cxx && !(k.mangled && k.demangled_by == DemangledBy::None) {
        plan.qualifiers = qualifiers_of(&top_level_components(&k.native));
    }
    if plan.shape == NameShape::Cxx {
        let full = kernlens_ident::demangle_full(name).unwrap_or_else(|| cleaned.to_owned());
        plan.template_args = template_args(&full, &plan.base);
        if !(k.mangled && k.demangled_by == DemangledBy::None) {
            plan.template_instance = Some(!plan.template_args.is_empty());
        }
    }
    plan.primary = raw_candidates;
    if let Some((class, module)) = cute_symbol(&plan.base) {
        plan.shape = NameShape::CuteDsl;
        plan.primary = filter_tokens(vec![class], None);
        plan.module_text = Some(module);
    }
    // Rule 2d: no guessing for C++ or inductor names.
    if plan.shape.allows_guessing() {
        plan.subwindows = subwindows(&plan.base);
        plan.prefixes = prefixes(&plan.base);
    }
    if plan.primary.is_empty() && plan.subwindows.is_empty() && plan.prefixes.is_empty() {
        plan.refusal = Some(Refusal::NoSearchableKeyword);
    }
    plan
}

fn underscores(s: &str) -> usize {
    s.bytes().filter(|&b| b == b'_').count()
}

/// The locate.md "Keywords: Primary keywords" filters, in order. The first occurrence of `whole` (a C++
/// spelling whose trailing `_` is part of it) keeps its `_`.
fn filter_tokens(tokens: Vec<String>, whole: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // A set beside the list: a mangled name can hold tens of thousands of
    // identifiers, and a list lookup per token would be quadratic.
    let mut seen: foldhash::HashSet<String> = foldhash::HashSet::default();
    for t in tokens {
        let t = match whole {
            Some(w) if t == w && !seen.contains(w) => t.as_str(),
            _ => t.trim_end_matches('_'),
        };
        if t.is_empty() || seen.contains(t) {
            continue;
        }
        if !keep_primary(t) {
            continue;
        }
        seen.insert(t.to_owned());
        out.push(t.to_owned());
    }
    out
}

/// The word filters of locate.md "Keywords: Primary keywords" (3)–(5).
fn keep_primary(t: &str) -> bool {
    let t = t.trim_end_matches('_');
    !(RETURN_TYPE_WORDS.contains(&t)
        || EXTRA_TYPE_WORDS.contains(&t)
        || t.chars().count() < MIN_PRIMARY_CHARS
        || NAMESPACE_BLOCKLIST.contains(&t))
}

/// Splits a native key at top-level `::` and returns the base name and the
/// plain-identifier qualifier before it (locate.md "Keywords: Base name, shape and scope").
pub(crate) fn base_and_qualifier(key: &str) -> (&str, Option<&str>) {
    let comps = top_level_components(key);
    let Some(idx) = comps
        .iter()
        .rposition(|c| !(c.starts_with("operator") || c.starts_with('{') || c.starts_with('(')))
    else {
        return (key.split_whitespace().next().unwrap_or(key), None);
    };
    let comp = comps[idx];
    let base = comp.split(char::is_whitespace).next().unwrap_or(comp);
    let qualifier = idx
        .checked_sub(1)
        .map(|i| comps[i])
        .filter(|q| is_identifier(q));
    (base, qualifier)
}

fn top_level_components(key: &str) -> Vec<&str> {
    let bytes = key.as_bytes();
    let mut depth = 0usize;
    let mut start = 0;
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' | b'(' | b'[' => depth += 1,
            b'}' | b')' | b']' => depth = depth.saturating_sub(1),
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => {
                out.push(&key[start..i]);
                start = i + 2;
                i += 2;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(&key[start..]);
    out
}

pub(crate) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Every `<length><identifier>` that can be read from a mangled text.
fn lenient_identifiers(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit()
            && bytes[i] != b'0'
            && (i == 0 || !bytes[i - 1].is_ascii_digit())
        {
            let mut j = i;
            let mut n = 0usize;
            while j < bytes.len() && bytes[j].is_ascii_digit() && n < 100_000 {
                n = n * 10 + usize::from(bytes[j] - b'0');
                j += 1;
            }
            let end = j.saturating_add(n);
            if end <= bytes.len()
                && bytes[j..end]
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || *b == b'_')
                && bytes.get(j).is_some_and(|b| !b.is_ascii_digit())
            {
                out.push(text[j..end].to_owned());
                i = end;
                continue;
            }
            i = j;
            continue;
        }
        i += 1;
    }
    out
}

/// A name's `_`-separated segments joined back with single `_`s, and the end
/// offset of each segment in that text: every window and prefix of locate.md "Keywords: Sub-window keywords" and "Keywords: Leading-prefix keywords"
/// is a slice of it, so planning never joins segments more than once.
struct Joined {
    text: String,
    ends: Vec<usize>,
}

impl Joined {
    fn new(s: &str) -> Joined {
        let mut text = String::with_capacity(s.len());
        let mut ends = Vec::new();
        for seg in s.split('_').filter(|p| !p.is_empty()) {
            if !text.is_empty() {
                text.push('_');
            }
            text.push_str(seg);
            ends.push(text.len());
        }
        Joined { text, ends }
    }

    /// Segments `from..` joined (`from` < segment count).
    fn suffix(&self, from: usize) -> &str {
        let start = if from == 0 {
            0
        } else {
            self.ends[from - 1] + 1
        };
        &self.text[start..]
    }

    /// Segments `..n` joined (`n` ≥ 1).
    fn prefix(&self, n: usize) -> &str {
        &self.text[..self.ends[n - 1]]
    }
}

/// Whether a window of at least two segments is kept: windows of two or more
/// segments contain a `_`, so they are never all digits and the length test
/// is the whole of the rule.
fn keep_window(w: &str) -> bool {
    w.chars().nth(MIN_WINDOW_CHARS - 1).is_some()
}

/// locate.md "Keywords: Sub-window keywords": windows that drop leading segments, longest first.
///
/// Dropping a non-empty segment shortens the window, so the windows come out
/// distinct and longest first, and once one is too short every later one is:
/// the first `MAX_SUBWINDOWS` kept are the answer, and the work is
/// `MAX_SUBWINDOWS` copies however many segments the name has.
fn subwindows(base: &str) -> Vec<String> {
    let trimmed = match base.rfind('_') {
        Some(i) if i + 1 < base.len() && base[i + 1..].bytes().all(|b| b.is_ascii_digit()) => {
            &base[..i]
        }
        _ => base,
    };
    let joined = Joined::new(trimmed);
    let segs = joined.ends.len();
    if segs < 3 {
        return Vec::new();
    }
    (0..segs - 1)
        .map(|start| joined.suffix(start))
        .take_while(|w| keep_window(w))
        .take(MAX_SUBWINDOWS)
        .map(str::to_owned)
        .collect()
}

/// locate.md "Keywords: Leading-prefix keywords": prefixes that drop trailing segments; the 8 shortest, longest first.
///
/// Prefixes grow with their segment count, so the kept ones are the
/// `MAX_PREFIXES` shortest from the first long enough, reversed.
fn prefixes(base: &str) -> Vec<String> {
    let joined = Joined::new(base);
    let segs = joined.ends.len();
    if segs < 3 {
        return Vec::new();
    }
    let mut out: Vec<String> = (2..segs)
        .map(|n| joined.prefix(n))
        .skip_while(|p| !keep_window(p))
        .take(MAX_PREFIXES)
        .map(str::to_owned)
        .collect();
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// locate.md "Keywords: Sub-window keywords" and locate.md "Keywords: Leading-prefix keywords" as written: every window joined, filtered, deduplicated,
    /// sorted and cut (quadratic in the segment count).
    fn reference(base: &str) -> (Vec<String>, Vec<String>) {
        let keep = |w: &str| {
            w.chars().count() >= MIN_WINDOW_CHARS && !w.bytes().all(|b| b.is_ascii_digit())
        };
        let trimmed = match base.rfind('_') {
            Some(i) if i + 1 < base.len() && base[i + 1..].bytes().all(|b| b.is_ascii_digit()) => {
                &base[..i]
            }
            _ => base,
        };
        let segs: Vec<&str> = trimmed.split('_').filter(|p| !p.is_empty()).collect();
        let mut windows: Vec<String> = Vec::new();
        if segs.len() >= 3 {
            for start in 0..segs.len() - 1 {
                let w = segs[start..].join("_");
                if keep(&w) && !windows.contains(&w) {
                    windows.push(w);
                }
            }
        }
        windows.sort_by_key(|w| std::cmp::Reverse(w.len()));
        windows.truncate(MAX_SUBWINDOWS);
        let segs: Vec<&str> = base.split('_').filter(|p| !p.is_empty()).collect();
        let mut prefixes: Vec<String> = Vec::new();
        if segs.len() >= 3 {
            prefixes = (2..segs.len())
                .rev()
                .map(|n| segs[..n].join("_"))
                .filter(|p| keep(p))
                .collect();
            prefixes.dedup();
            if prefixes.len() > MAX_PREFIXES {
                prefixes.drain(..prefixes.len() - MAX_PREFIXES);
            }
        }
        (windows, prefixes)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        // The linear planner is the quadratic rule, on names of every shape:
        // empty and repeated `_`, digit runs, multi-byte characters.
        #[test]
        fn linear_windows_and_prefixes_equal_the_joined_rule(
            parts in prop::collection::vec(prop::sample::select(&[
                "a", "ab", "abc", "kernel", "7", "42", "_", "__", "\u{e9}", "\u{1f600}", "x1",
            ][..]), 0..24)
        ) {
            let base = parts.concat();
            prop_assert_eq!((subwindows(&base), prefixes(&base)), reference(&base));
        }
    }
}
