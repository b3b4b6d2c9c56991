//! Triton `repr=` names (issue rule 2e): a `@triton.jit(repr=R)` kernel is
//! launched as `R(specialization)`, typically the def's name followed by
//! `_KEY_value` pairs. `R` is usually a module-level variable assigned from a
//! helper call whose first string argument is the base name and whose list
//! of strings is the key list; nothing here depends on the helper's name.

use crate::python::{PyDef, PySymbols, line_start};

/// What a repr variable's assignment says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ReprSpec {
    /// The base name, the call's first string argument.
    pub base: Option<String>,
    /// The key list: the strings of the call's first list argument.
    pub keys: Vec<String>,
    /// A `name_key=` argument: the launch site may rename the kernel.
    pub renamable: bool,
}

/// The spec of repr expression `var`: its column-0 assignment in this file,
/// or an empty spec (unknown keys) when it is assigned elsewhere or is a lambda.
pub(crate) fn spec_of(symbols: &PySymbols, bytes: &[u8], var: &str) -> ReprSpec {
    let Some(a) = symbols.assignments.iter().rev().find(|a| a.name == var) else {
        return ReprSpec::default();
    };
    let start = line_start(bytes, a.line);
    let Some(open) = bytes[start..]
        .iter()
        .position(|&b| b == b'(')
        .map(|p| start + p)
    else {
        return ReprSpec::default();
    };
    // The call's extent, skipping string literals.
    let in_string = |i: usize| symbols.string_at(i).is_some();
    let mut depth = 0usize;
    let mut close = bytes.len();
    let mut list: Option<(usize, usize)> = None;
    let mut list_open = None;
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        if in_string(i) {
            continue;
        }
        match b {
            b'(' | b'{' => depth += 1,
            b'[' => {
                depth += 1;
                if depth == 2 && list.is_none() {
                    list_open = Some(i);
                }
            }
            b']' => {
                if depth == 2
                    && list.is_none()
                    && let Some(o) = list_open
                {
                    list = Some((o, i));
                }
                depth = depth.saturating_sub(1);
            }
            b')' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    close = i;
                    break;
                }
            }
            _ => {}
        }
    }
    let text =
        |s: &crate::python::PyString| String::from_utf8_lossy(&bytes[s.start..s.end]).into_owned();
    let strings: Vec<_> = symbols
        .strings
        .iter()
        .filter(|s| s.start > open && s.end <= close)
        .collect();
    let base = strings
        .iter()
        .find(|s| list.is_none_or(|(o, _)| s.start < o))
        .map(|s| text(s));
    let keys = list
        .map(|(o, c)| {
            strings
                .iter()
                .filter(|s| s.start > o && s.end <= c)
                .map(|s| text(s))
                .collect()
        })
        .unwrap_or_default();
    let call = &bytes[open..close.min(bytes.len())];
    let renamable = memchr::memmem::find(call, b"name_key").is_some();
    ReprSpec {
        base,
        keys,
        renamable,
    }
}

/// The literal characters with which `def`'s repr composes `name` (its base
/// plus each key of the list found as `_KEY_` in order), or `None` when it
/// cannot produce it. Key lists drift, so only the first key must follow
/// the base; an unknown key list accepts any suffix.
pub(crate) fn repr_match(
    symbols: &PySymbols,
    bytes: &[u8],
    def: &PyDef,
    name: &str,
    alias: Option<&str>,
) -> Option<usize> {
    let var = def.repr.as_deref()?;
    let spec = spec_of(symbols, bytes, var);
    let mut bases: Vec<&str> = Vec::new();
    match alias {
        // A launch-site alias replaces the base only where the repr allows it.
        Some(a) if spec.renamable => bases.push(a),
        Some(_) => return None,
        None => {
            if let Some(b) = spec.base.as_deref() {
                bases.push(b);
            }
            if spec.base.is_none() || spec.renamable {
                bases.push(&def.name);
            }
        }
    }
    bases
        .iter()
        .filter_map(|b| {
            let suffix = name.strip_prefix(b)?;
            if !suffix.starts_with('_') || suffix.len() < 2 {
                return None;
            }
            let Some(first) = spec.keys.first() else {
                return Some(b.len());
            };
            if !suffix.starts_with(&format!("_{first}_")) {
                return None;
            }
            let mut chars = b.len();
            let mut at = 0;
            for k in &spec.keys {
                let pat = format!("_{k}_");
                if let Some(p) = suffix[at..].find(&pat) {
                    chars += pat.len();
                    at += p + pat.len();
                }
            }
            Some(chars)
        })
        .max()
}

/// A launch-site rename: `callee[grid](…, KEY="alias")` whose alias is a
/// prefix keyword's spelling (`kw` or `_kw`). Returns (callee, alias).
pub(crate) fn launch_aliases(symbols: &PySymbols, bytes: &[u8], kw: &str) -> Vec<(String, String)> {
    let underscored = format!("_{kw}");
    let mut out = Vec::new();
    for s in &symbols.strings {
        let text = &bytes[s.start..s.end];
        if s.docstring || !(text == kw.as_bytes() || text == underscored.as_bytes()) {
            continue;
        }
        // `KEY=` right before the literal (not `==`).
        let mut i = s.start.saturating_sub(1);
        while i > 0 && bytes[i - 1].is_ascii_whitespace() {
            i -= 1;
        }
        if i == 0
            || bytes[i - 1] != b'='
            || (i >= 2 && matches!(bytes[i - 2], b'=' | b'!' | b'<' | b'>'))
        {
            continue;
        }
        i -= 1;
        while i > 0 && bytes[i - 1].is_ascii_whitespace() {
            i -= 1;
        }
        let key_end = i;
        while i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_') {
            i -= 1;
        }
        if i == key_end {
            continue;
        }
        // Back to the call's unmatched `(`, then `callee[…]` before it.
        let in_string = |j: usize| symbols.string_at(j).is_some();
        let mut depth = 0usize;
        let open = loop {
            if i == 0 {
                break None;
            }
            i -= 1;
            if in_string(i) {
                continue;
            }
            match bytes[i] {
                b')' | b']' | b'}' => depth += 1,
                b'(' if depth == 0 => break Some(i),
                b'(' | b'[' | b'{' => depth = depth.saturating_sub(1),
                _ => {}
            }
        };
        let Some(open) = open else { continue };
        if open == 0 || bytes[open - 1] != b']' {
            continue;
        }
        let mut j = open - 1;
        let mut d = 0usize;
        let bracket = loop {
            match bytes[j] {
                b']' => d += 1,
                b'[' => {
                    d -= 1;
                    if d == 0 {
                        break Some(j);
                    }
                }
                _ => {}
            }
            if j == 0 {
                break None;
            }
            j -= 1;
        };
        let Some(bracket) = bracket else { continue };
        let mut c = bracket;
        while c > 0 && (bytes[c - 1].is_ascii_alphanumeric() || bytes[c - 1] == b'_') {
            c -= 1;
        }
        if c < bracket {
            out.push((
                String::from_utf8_lossy(&bytes[c..bracket]).into_owned(),
                String::from_utf8_lossy(text).into_owned(),
            ));
        }
    }
    out
}

/// True when `def`'s repr always appends a suffix (a known, non-empty key
/// list): such a def cannot be launched under its bare name.
pub(crate) fn always_suffixed(symbols: &PySymbols, bytes: &[u8], def: &PyDef) -> bool {
    def.repr
        .as_deref()
        .is_some_and(|var| !spec_of(symbols, bytes, var).keys.is_empty())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::python::scan_python;

    const SRC: &str = "_k_repr = make_repr(\n    \"_k\",\n    [\"M\", \"BLOCK\"],\n)\n\n@triton.jit(repr=_k_repr)\ndef _k(x):\n    pass\n";

    fn def_k(s: &PySymbols) -> &PyDef {
        s.defs.iter().find(|d| d.name == "_k").unwrap()
    }

    #[test]
    fn a_repr_spec_gives_base_and_keys() {
        let s = scan_python(SRC);
        let spec = spec_of(&s, SRC.as_bytes(), "_k_repr");
        assert_eq!(spec.base.as_deref(), Some("_k"));
        assert_eq!(spec.keys, ["M", "BLOCK"]);
        assert_eq!(def_k(&s).repr.as_deref(), Some("_k_repr"));
    }

    #[test]
    fn a_suffixed_name_matches_its_keys_and_a_bare_one_does_not() {
        let s = scan_python(SRC);
        let d = def_k(&s);
        assert_eq!(
            repr_match(&s, SRC.as_bytes(), d, "_k_M_64_BLOCK_128", None),
            Some(2 + 3 + 7)
        );
        // Drift: a key missing from the name still matches on the first.
        assert_eq!(repr_match(&s, SRC.as_bytes(), d, "_k_M_64", None), Some(5));
        assert_eq!(repr_match(&s, SRC.as_bytes(), d, "_k_N_64", None), None);
        assert_eq!(repr_match(&s, SRC.as_bytes(), d, "_k", None), None);
        assert!(always_suffixed(&s, SRC.as_bytes(), d));
    }
}
