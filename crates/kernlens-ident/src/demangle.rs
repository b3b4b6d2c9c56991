//! Step ident.md "The key pipeline: Demangling": turning a mangled symbol into a qualified name, with
//! `cpp_demangle` first and a strict head parser as the fallback.

use std::panic::{AssertUnwindSafe, catch_unwind};

use cpp_demangle::{DemangleOptions, ParseOptions, Symbol};
use serde::Serialize;

use crate::clean::{clean, is_mangled_shape};

/// Names longer than this skip the demangler: its cost grows with the length
/// and no real kernel symbol comes near it.
const MAX_DEMANGLE_BYTES: usize = 16 * 1024;

/// Parse recursion limit; deep enough for real template nests, shallow enough
/// that adversarial symbols cannot exhaust a test thread's stack.
const PARSE_RECURSION_LIMIT: u32 = 96;

/// Display recursion limit (the crate's own default, made explicit).
const DEMANGLE_RECURSION_LIMIT: u32 = 128;

/// How a native key's mangled name was turned into a qualified name.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DemangledBy {
    /// The Itanium demangler (`cpp_demangle`) parsed the whole symbol.
    Demangler,
    /// The demangler failed; the strict head parser read the qualified name.
    HeadParser,
    /// The name was not mangled, or neither method could read it (the key is
    /// then the mangled text itself).
    None,
}

/// The full human-readable demangling of `name` (parameters and return type
/// included), for display; `None` when the cleaned name is not mangled or the
/// demangler cannot read it.
///
/// ```
/// assert_eq!(
///     kernlens_ident::demangle_full("_Z14rmsnorm_kernelPf.kd").as_deref(),
///     Some("rmsnorm_kernel(float*)")
/// );
/// assert_eq!(kernlens_ident::demangle_full("rmsnorm_kernel"), None);
/// ```
pub fn demangle_full(name: &str) -> Option<String> {
    let cleaned = clean(name).text;
    if !is_mangled_shape(cleaned) {
        return None;
    }
    run_demangler(cleaned, DemangleOptions::new())
}

/// The qualified name (template arguments may remain) of a mangled symbol,
/// or `None` when neither the demangler nor the head parser can read it.
pub(crate) fn demangle_for_key(mangled: &str) -> Option<(String, DemangledBy)> {
    let options = DemangleOptions::new().no_params().no_return_type();
    if let Some(text) = run_demangler(mangled, options) {
        return Some((text, DemangledBy::Demangler));
    }
    head_parse(mangled).map(|text| (text, DemangledBy::HeadParser))
}

fn run_demangler(mangled: &str, options: DemangleOptions) -> Option<String> {
    if mangled.len() > MAX_DEMANGLE_BYTES {
        return None;
    }
    let options = options.recursion_limit(DEMANGLE_RECURSION_LIMIT);
    // A panic inside the third-party demangler is a failed demangling, not a
    // crash of the caller; the closure shares no state that a panic could
    // leave half-updated.
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let parse = ParseOptions::default().recursion_limit(PARSE_RECURSION_LIMIT);
        let symbol = Symbol::new_with_options(mangled.as_bytes(), &parse).ok()?;
        symbol.demangle_with_options(&options).ok()
    }));
    outcome
        .ok()
        .flatten()
        .filter(|text| !text.trim().is_empty())
}

/// The strict head parser of ident.md "The key pipeline: Demangling" step 3: `_Z`/`__Z`, optional `L`, then a
/// nested name (`N…` followed by `I` or `E`) or one unscoped source name.
fn head_parse(mangled: &str) -> Option<String> {
    let bytes = mangled.as_bytes();
    let mut pos = if mangled.starts_with("__Z") {
        3
    } else if mangled.starts_with("_Z") {
        2
    } else {
        return None;
    };
    if bytes.get(pos) == Some(&b'L') {
        pos += 1;
    }
    if bytes.get(pos) != Some(&b'N') {
        let (name, _) = source_name(mangled, pos)?;
        return Some(component_text(name).to_owned());
    }
    pos += 1;
    for qualifier in [b'r', b'V', b'K'] {
        if bytes.get(pos) == Some(&qualifier) {
            pos += 1;
        }
    }
    if matches!(bytes.get(pos), Some(b'R' | b'O')) {
        pos += 1;
    }
    let mut out = String::new();
    if mangled[pos..].starts_with("St") {
        out.push_str("std");
        pos += 2;
    }
    let mut components = 0usize;
    while let Some((name, next)) = source_name(mangled, pos) {
        if !out.is_empty() {
            out.push_str("::");
        }
        out.push_str(component_text(name));
        pos = next;
        components += 1;
    }
    let terminated = matches!(bytes.get(pos), Some(b'I' | b'E'));
    (components > 0 && terminated).then_some(out)
}

/// One `<length><identifier>` at `pos`: the identifier and the position after it.
fn source_name(mangled: &str, pos: usize) -> Option<(&str, usize)> {
    let bytes = mangled.as_bytes();
    let first = *bytes.get(pos)?;
    if !(b'1'..=b'9').contains(&first) {
        return None;
    }
    let mut len = 0usize;
    let mut at = pos;
    while let Some(&digit) = bytes.get(at).filter(|b| b.is_ascii_digit()) {
        len = len
            .checked_mul(10)?
            .checked_add(usize::from(digit - b'0'))?;
        at += 1;
    }
    let end = at.checked_add(len)?;
    let ident = bytes.get(at..end)?;
    let valid = ident
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || *b == b'_')
        && !ident.first().is_some_and(u8::is_ascii_digit);
    // All bytes are ASCII, so the slice is on character boundaries.
    valid.then(|| (&mangled[at..end], end))
}

fn component_text(ident: &str) -> &str {
    if ident.starts_with("_GLOBAL__N") {
        "(anonymous namespace)"
    } else {
        ident
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_parser_rejects_a_wrong_length_prefix() {
        assert_eq!(
            head_parse("_ZN5aiter18all_reduce_kernelIDF16bLi8EEEvv"),
            None
        );
    }

    #[test]
    fn head_parser_reads_nested_and_unscoped_names() {
        assert_eq!(
            head_parse("_ZN2at6native12_GLOBAL__N_128vectorized_layer_norm_kernelIN3c10E")
                .as_deref(),
            Some("at::native::(anonymous namespace)::vectorized_layer_norm_kernel")
        );
        assert_eq!(head_parse("__Z3fooPf").as_deref(), Some("foo"));
        assert_eq!(
            head_parse("_ZNSt6vectorIiE").as_deref(),
            Some("std::vector")
        );
        assert_eq!(head_parse("_ZN3fooPf"), None);
        assert_eq!(head_parse("_Z03foo"), None);
    }
}
