//! The first steps of the key pipeline (ident.md "The key pipeline", from "Trim" to "Return-type words"): trimming, launch decorations,
//! truncation markers, suffixes and leading return-type words.
//!
//! Every step only removes text from the start or the end, so a cleaned name
//! is a sub-slice of its input and cleaning never allocates.

use crate::vocab::{CLONE_SUFFIX_WORDS, RETURN_TYPE_WORDS};

/// The result of cleaning one name.
pub(crate) struct Cleaned<'a> {
    pub(crate) text: &'a str,
    pub(crate) truncated: bool,
}

/// The pipeline up to ident.md "The key pipeline: Return-type words": the **cleaned name** (a sub-slice of `raw`).
///
/// Launch decorations (`hipGraphLaunch->`), truncation markers, the
/// `(Synthetic Op)` tag, `.kd`, clone suffixes and leading return-type words
/// are removed; template arguments and parameters are kept. Locate searches
/// source files for this text.
///
/// ```
/// assert_eq!(
///     kernlens_ident::clean_name("hipGraphLaunch->void foo<int>(int) (Synthetic Op)"),
///     "foo<int>(int)"
/// );
/// ```
pub fn clean_name(raw: &str) -> &str {
    clean(raw).text
}

/// Whether the cleaned form of `name` is a mangled symbol: one token of
/// printable ASCII that starts with `_Z` or `__Z`.
///
/// ```
/// assert!(kernlens_ident::is_mangled("hipGraphLaunch->_Z3fooPf.kd"));
/// assert!(!kernlens_ident::is_mangled("foo(float*)"));
/// ```
pub fn is_mangled(name: &str) -> bool {
    is_mangled_shape(clean(name).text)
}

/// The mangled-shape test on text that is already cleaned.
pub(crate) fn is_mangled_shape(text: &str) -> bool {
    starts_like_mangled(text) && text.bytes().all(|b| b.is_ascii_graphic())
}

fn starts_like_mangled(text: &str) -> bool {
    text.starts_with("_Z") || text.starts_with("__Z")
}

/// Runs the steps from "Trim" to "Return-type words" (ident.md "The key pipeline") until none of them changes the text.
///
/// The spec orders the steps once per pipeline round; looping them here means
/// a decoration uncovered by a return-type word (`void a->b`) or a marker
/// uncovered by a suffix (`a… (Synthetic Op)`) goes in the same round, which
/// keeps the number of fixpoint rounds small.
pub(crate) fn clean(raw: &str) -> Cleaned<'_> {
    let mut text = raw.trim();
    let mut truncated = false;
    // End offset at which the end-anchored steps last found nothing to remove
    // on an unmangled text. Shrinking the start cannot enable them again, so
    // they are skipped until the end moves: this keeps long alternations of
    // prefixes linear.
    let mut settled_end: Option<usize> = None;
    loop {
        let before = text.len();
        text = strip_decorations(text);
        let end = end_offset(raw, text);
        if settled_end != Some(end) || starts_like_mangled(text) {
            let mut changed = false;
            while let Some(shorter) = strip_truncation_marker(text) {
                text = shorter;
                truncated = true;
                changed = true;
            }
            let suffixed = strip_suffixes(text);
            changed |= suffixed.len() != text.len();
            text = suffixed;
            settled_end = if changed {
                None
            } else {
                Some(end_offset(raw, text))
            };
        }
        text = strip_return_words(text);
        if text.len() == before {
            return Cleaned { text, truncated };
        }
    }
}

/// Byte offset of the end of `part` inside `whole` (`part` is a sub-slice).
fn end_offset(whole: &str, part: &str) -> usize {
    (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize) + part.len()
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// ident.md "The key pipeline: Launch decorations": removes every leading `word->` launch decoration.
fn strip_decorations(mut text: &str) -> &str {
    loop {
        let bytes = text.as_bytes();
        // A decoration word starts with an ASCII letter; a leading `_` marks a
        // kernel symbol, which launch APIs never are.
        if !bytes.first().is_some_and(|b| b.is_ascii_alphabetic()) {
            return text;
        }
        let word_end = bytes
            .iter()
            .position(|&b| !is_word_byte(b))
            .unwrap_or(bytes.len());
        if !text[word_end..].starts_with("->") || &text[..word_end] == "operator" {
            return text;
        }
        let rest = text[word_end + 2..].trim_start();
        if rest.is_empty() {
            return text;
        }
        text = rest;
    }
}

/// ident.md "The key pipeline: Truncation markers": one trailing `…` or `...` that directly follows a non-space character.
fn strip_truncation_marker(text: &str) -> Option<&str> {
    let base = text
        .strip_suffix('\u{2026}')
        .or_else(|| text.strip_suffix("..."))?;
    let last = base.chars().next_back()?;
    (!last.is_whitespace()).then_some(base)
}

/// ident.md "The key pipeline: Suffixes": synthetic-op tags, `.kd` and clone suffixes, until none is left.
fn strip_suffixes(mut text: &str) -> &str {
    // Mangled status can change only when the end moves past the first byte
    // that breaks it, so the scan for that byte is done once.
    let first_unmangled = if starts_like_mangled(text) {
        text.bytes().position(|b| !b.is_ascii_graphic())
    } else {
        Some(0)
    };
    loop {
        let before = text.len();
        if let Some(shorter) = strip_synthetic_tag(text) {
            text = shorter;
        }
        if let Some(base) = text.strip_suffix(".kd") {
            let base = base.trim_end();
            if !base.is_empty() {
                text = base;
            }
        }
        let mangled = match first_unmangled {
            None => true,
            Some(pos) => pos >= text.len(),
        };
        if mangled {
            // Itanium symbols never contain a dot: everything after the first
            // one is a clone or code-object suffix.
            if let Some(dot) = text.find('.') {
                text = &text[..dot];
            }
        } else {
            while let Some(shorter) = strip_clone_group(text) {
                text = shorter;
            }
            if let Some(start) = clone_run_start(text) {
                let base = text[..start].trim_end();
                if !base.is_empty() {
                    text = base;
                }
            }
        }
        if text.len() == before {
            return text;
        }
    }
}

/// A trailing ` (… Op)` group without nested parentheses.
fn strip_synthetic_tag(text: &str) -> Option<&str> {
    let inner_end = text.len().checked_sub(1)?;
    if !text.ends_with(')') {
        return None;
    }
    let open = text.rfind('(')?;
    let inner = &text[open + 1..inner_end];
    if inner.contains(')') {
        return None;
    }
    let head = &text[..open];
    if !head.chars().next_back().is_some_and(char::is_whitespace) {
        return None;
    }
    if inner.split_whitespace().next_back() != Some("Op") {
        return None;
    }
    let head = head.trim_end();
    (!head.is_empty()).then_some(head)
}

/// A trailing ` [clone …]` group.
fn strip_clone_group(text: &str) -> Option<&str> {
    if !text.ends_with(']') {
        return None;
    }
    let open = text.rfind('[')?;
    let group = &text[open..];
    if !group.starts_with("[clone") || group[1..group.len() - 1].contains(']') {
        return None;
    }
    let head = &text[..open];
    if !head.chars().next_back().is_some_and(char::is_whitespace) {
        return None;
    }
    let head = head.trim_end();
    (!head.is_empty()).then_some(head)
}

/// Start of the trailing run of dot-suffixes such as `.isra.0` or
/// `.lto_priv.0.cold`: parts after a clone word may be any `.<alnum>`.
fn clone_run_start(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut end = bytes.len();
    let mut start = None;
    loop {
        let mut i = end;
        while i > 0 && is_word_byte(bytes[i - 1]) {
            i -= 1;
        }
        if i == end || i == 0 || bytes[i - 1] != b'.' {
            return start;
        }
        let part = &text[i..end];
        let is_clone_word = CLONE_SUFFIX_WORDS.contains(&part);
        if !is_clone_word && !part.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return start;
        }
        if is_clone_word {
            start = Some(i - 1);
        }
        end = i - 1;
    }
}

/// ident.md "The key pipeline: Return-type words" (first half): leading words from `RETURN_TYPE_WORDS`.
fn strip_return_words(mut text: &str) -> &str {
    loop {
        let bytes = text.as_bytes();
        let word_end = bytes
            .iter()
            .position(|&b| !is_word_byte(b))
            .unwrap_or(bytes.len());
        if word_end == 0 || !RETURN_TYPE_WORDS.contains(&&text[..word_end]) {
            return text;
        }
        let after = &text[word_end..];
        if !after.chars().next().is_some_and(char::is_whitespace) {
            return text;
        }
        let rest = after.trim_start();
        if rest.is_empty() {
            return text;
        }
        text = rest;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `clean` without the settled-end shortcut: every step on every pass.
    fn clean_reference(raw: &str) -> &str {
        let mut text = raw.trim();
        loop {
            let before = text.len();
            text = strip_decorations(text);
            while let Some(shorter) = strip_truncation_marker(text) {
                text = shorter;
            }
            text = strip_suffixes(text);
            text = strip_return_words(text);
            if text.len() == before {
                return text;
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn settled_end_shortcut_changes_nothing(
            parts in prop::collection::vec(prop::sample::select(&[
                "a", "void ", "int ", "x->", "_Z3foo", "_Z", " ", ".", ".kd", ".cold", "...", "\u{2026}",
                " (Synthetic Op)", " (a Op)", "(", ")", " [clone .cold]", "[", "]", "Op", "->", "b.isra.0",
            ][..]), 0..16)
        ) {
            let raw = parts.concat();
            prop_assert_eq!(clean(&raw).text, clean_reference(&raw));
        }
    }

    #[test]
    fn decorations_stop_at_operator_and_underscore_words() {
        assert_eq!(clean_name("operator->"), "operator->");
        assert_eq!(clean_name("_k->x"), "_k->x");
        assert_eq!(clean_name("a->b->c"), "c");
    }

    #[test]
    fn clone_run_keeps_non_clone_dots() {
        assert_eq!(clean_name("foo.bar"), "foo.bar");
        assert_eq!(clean_name("foo.lto_priv.0"), "foo");
        assert_eq!(clean_name("foo.x.cold.1"), "foo.x");
        assert_eq!(clean_name(".cold"), ".cold");
    }

    #[test]
    fn truncation_marker_needs_a_preceding_character() {
        assert_eq!(clean_name("..."), "...");
        assert_eq!(clean_name("a ..."), "a ...");
        assert_eq!(clean_name("a\u{2026}"), "a");
        assert!(clean("abc...").truncated);
    }
}
