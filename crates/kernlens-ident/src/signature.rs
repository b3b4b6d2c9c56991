//! Step ident.md "The key pipeline: Signature stripping" (signature stripping) and the shape rules that follow it:
//! return types other than the listed words (ident.md "The key pipeline: Return-type words"), whitespace (ident.md "The key pipeline: Whitespace, non-empty rule and fixpoint").
//!
//! Everything here is linear in the text length: bracket partners come from
//! one stack pass, and the scan visits every byte a bounded number of times.

use crate::vocab::{OPERATOR_SYMBOLS, SIGNATURE_QUALIFIERS};

const ANONYMOUS_NAMESPACE: &str = "(anonymous namespace)";
const NO_PARTNER: usize = usize::MAX;

/// Removes template argument lists, parameter lists and trailing
/// qualifiers from a (demangled or profiler-printed) C++ name (ident.md "The key pipeline: Signature stripping").
///
/// `(anonymous namespace)`, `{lambda()#2}`-style groups and operator names
/// are kept whole; parenthesised tags that do not follow a name, such as
/// ` (prefill)`, are kept verbatim.
///
/// ```
/// use kernlens_ident::strip_signature;
/// assert_eq!(strip_signature("at::foo<int, 4>(float*) const"), "at::foo");
/// assert_eq!(strip_signature("foo::operator< <int>(int const&)"), "foo::operator<");
/// assert_eq!(strip_signature("aiter::fmoe (prefill)"), "aiter::fmoe (prefill)");
/// ```
pub fn strip_signature(text: &str) -> String {
    strip_signature_of(text, false)
}

/// [`strip_signature`]; on a `truncated` name an unterminated template or
/// parameter list after a name was cut by the profiler, so it goes too.
pub(crate) fn strip_signature_of(text: &str, truncated: bool) -> String {
    let partners = bracket_partners(text.as_bytes());
    let mut out = scan(text, &partners, truncated);
    trim_trailing_qualifiers(&mut out);
    out
}

/// Identifier bytes. Bytes of multi-byte characters count as identifier
/// bytes, so no step ever splits a character.
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

fn word_end(bytes: &[u8], start: usize) -> usize {
    bytes[start..]
        .iter()
        .position(|&b| !is_word_byte(b))
        .map_or(bytes.len(), |offset| start + offset)
}

/// After the word `operator` ending at `after`: the end of the operator token
/// (an optional single space, then the longest operator symbol).
fn operator_token_end(bytes: &[u8], after: usize) -> Option<usize> {
    let start = if bytes.get(after) == Some(&b' ') {
        after + 1
    } else {
        after
    };
    let rest = bytes.get(start..)?;
    OPERATOR_SYMBOLS
        .iter()
        .find(|symbol| rest.starts_with(symbol.as_bytes()))
        .map(|symbol| start + symbol.len())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Bracket {
    Paren,
    Brace,
    Angle,
}

impl Bracket {
    fn index(self) -> usize {
        match self {
            Bracket::Paren => 0,
            Bracket::Brace => 1,
            Bracket::Angle => 2,
        }
    }
}

/// For every `(`, `{` and `<`, the index of its partner (and back), or
/// `NO_PARTNER` when it is unterminated.
///
/// Inside a `<…>` list, `(…)` and `{…}` groups are opaque: a `>` whose
/// innermost open bracket is a parenthesis or brace is an ordinary character.
/// A closer with no opener of its kind anywhere on the stack is stray; one
/// with an opener further down closes it and marks everything above as
/// unterminated. Each opener is pushed and popped once, so the pass is linear.
fn bracket_partners(bytes: &[u8]) -> Vec<usize> {
    let mut partners = vec![NO_PARTNER; bytes.len()];
    let mut stack: Vec<(usize, Bracket)> = Vec::new();
    let mut open_counts = [0usize; 3];
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if is_word_byte(b) {
            let end = word_end(bytes, i);
            i = if &bytes[i..end] == b"operator" {
                operator_token_end(bytes, end).unwrap_or(end)
            } else {
                end
            };
            continue;
        }
        match b {
            b'(' | b'{' | b'<' => {
                let kind = match b {
                    b'(' => Bracket::Paren,
                    b'{' => Bracket::Brace,
                    _ => Bracket::Angle,
                };
                stack.push((i, kind));
                open_counts[kind.index()] += 1;
            }
            b')' | b'}' => {
                let kind = if b == b')' {
                    Bracket::Paren
                } else {
                    Bracket::Brace
                };
                if open_counts[kind.index()] > 0 {
                    while let Some((open, open_kind)) = stack.pop() {
                        open_counts[open_kind.index()] -= 1;
                        if open_kind == kind {
                            partners[open] = i;
                            partners[i] = open;
                            break;
                        }
                    }
                }
            }
            b'>' if !(i > 0 && bytes[i - 1] == b'-') => {
                if let Some(&(open, Bracket::Angle)) = stack.last() {
                    stack.pop();
                    open_counts[Bracket::Angle.index()] -= 1;
                    partners[open] = i;
                    partners[i] = open;
                }
            }
            _ => {}
        }
        i += 1;
    }
    partners
}

fn scan(text: &str, partners: &[usize], truncated: bool) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    // Whether the output so far ends with a name part, after which `<` opens
    // a template list and `(` a parameter list.
    let mut after_name = false;
    while i < bytes.len() {
        let b = bytes[i];
        if is_word_byte(b) {
            let end = word_end(bytes, i);
            if &bytes[i..end] == b"operator"
                && let Some(op_end) = operator_token_end(bytes, end)
            {
                out.push_str(&text[i..op_end]);
                i = op_end;
                after_name = true;
                // `operator< <int>`: the space before the list goes with it.
                if bytes.get(i) == Some(&b' ')
                    && matches!(bytes.get(i + 1), Some(b'<' | b'('))
                    && partners[i + 1] != NO_PARTNER
                {
                    i += 1;
                }
                continue;
            }
            out.push_str(&text[i..end]);
            i = end;
            after_name = true;
            continue;
        }
        let partner = partners[i];
        match b {
            b'(' if text[i..].starts_with(ANONYMOUS_NAMESPACE) => {
                out.push_str(ANONYMOUS_NAMESPACE);
                i += ANONYMOUS_NAMESPACE.len();
                after_name = false;
            }
            b'(' if after_name && partner != NO_PARTNER => {
                i = after_parameter_list(bytes, partner);
                // The output still ends with the name, so a group right after the list
                // (`f(a)(b)`) follows a name too: stripping it now, not in a later round,
                // keeps the key a fixpoint however many groups there are (P1).
                after_name = true;
            }
            b'(' | b'{' if partner != NO_PARTNER => {
                // A tag such as ` (prefill)`, or a `{lambda()#1}` group.
                out.push_str(&text[i..=partner]);
                i = partner + 1;
                after_name = b == b'{';
            }
            b'<' if after_name && partner != NO_PARTNER => {
                i = partner + 1;
                after_name = true;
            }
            b'<' | b'(' if after_name && truncated => break,
            _ => {
                // ASCII here: every byte >= 0x80 is a word byte.
                out.push(char::from(b));
                i += 1;
                after_name = false;
            }
        }
    }
    out
}

/// Where scanning resumes after the parameter list closing at `close`: past
/// the qualifiers that follow it, or at the `::` of a local entity.
fn after_parameter_list(bytes: &[u8], close: usize) -> usize {
    let mut pos = close + 1;
    while let Some(end) = qualifier_end(bytes, skip_spaces(bytes, pos)) {
        pos = end;
    }
    let next = skip_spaces(bytes, pos);
    if bytes[next..].starts_with(b"::") {
        next
    } else {
        pos
    }
}

fn skip_spaces(bytes: &[u8], mut pos: usize) -> usize {
    while bytes.get(pos).is_some_and(u8::is_ascii_whitespace) {
        pos += 1;
    }
    pos
}

fn qualifier_end(bytes: &[u8], pos: usize) -> Option<usize> {
    let rest = bytes.get(pos..)?;
    SIGNATURE_QUALIFIERS.iter().find_map(|qualifier| {
        let q = qualifier.as_bytes();
        let end = pos + q.len();
        let is_word = q[0].is_ascii_alphabetic();
        let at_boundary = !is_word || !bytes.get(end).is_some_and(|&b| is_word_byte(b));
        (rest.starts_with(q) && at_boundary).then_some(end)
    })
}

/// Removes trailing ` const`, ` volatile`, ` noexcept`, ` &` and ` &&`.
fn trim_trailing_qualifiers(out: &mut String) {
    loop {
        let trimmed = out.trim_end();
        let cut = SIGNATURE_QUALIFIERS.iter().find_map(|qualifier| {
            let head = trimmed.strip_suffix(qualifier)?;
            head.chars()
                .next_back()
                .is_some_and(char::is_whitespace)
                .then_some(head.len())
        });
        match cut {
            Some(len) => out.truncate(len),
            None => return,
        }
    }
}

/// ident.md "The key pipeline: Return-type words", second half: when the stripped text has a top-level space and what
/// follows the last one is a qualified name, everything before it was a
/// return type (`std::enable_if<…>::type vllm::kernel`).
pub(crate) fn split_return_type(text: &str) -> &str {
    let Some(space) = last_top_level_space(text) else {
        return text;
    };
    let name = &text[space + 1..];
    if is_qualified_name(name) { name } else { text }
}

/// Position of the last whitespace byte outside `()`, `{}`, `[]` and `<>` groups
/// and not the one inside `operator bool`.
fn last_top_level_space(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut last = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if is_word_byte(b) {
            let end = word_end(bytes, i);
            // `operator<`, `operator bool` and `operator <` are one name.
            i = if &bytes[i..end] != b"operator" {
                end
            } else if let Some(op_end) = operator_token_end(bytes, end) {
                op_end
            } else if bytes.get(end) == Some(&b' ') {
                end + 1
            } else {
                end
            };
            continue;
        }
        match b {
            // An unterminated `<` (a terminated one was stripped) still
            // encloses what follows it.
            b'(' | b'{' | b'[' | b'<' => depth += 1,
            b')' | b'}' | b']' | b'>' => depth = depth.saturating_sub(1),
            b if b.is_ascii_whitespace() && depth == 0 => last = Some(i),
            _ => {}
        }
        i += 1;
    }
    last
}

/// Whether `text` is `::`-separated name components: identifiers,
/// `(anonymous namespace)`, `{…}` groups, `~destructor`s and operator names.
fn is_qualified_name(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut pos = if text.starts_with("::") { 2 } else { 0 };
    loop {
        match component_end(text, pos) {
            Some(end) => pos = end,
            None => return false,
        }
        if pos == bytes.len() {
            return true;
        }
        if !bytes[pos..].starts_with(b"::") {
            return false;
        }
        pos += 2;
    }
}

fn component_end(text: &str, pos: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let first = *bytes.get(pos)?;
    if text[pos..].starts_with(ANONYMOUS_NAMESPACE) {
        return Some(pos + ANONYMOUS_NAMESPACE.len());
    }
    if first == b'{' {
        let mut depth = 0usize;
        for (offset, &b) in bytes[pos..].iter().enumerate() {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(pos + offset + 1);
                    }
                }
                _ => {}
            }
        }
        return None;
    }
    let start = if first == b'~' { pos + 1 } else { pos };
    let lead = *bytes.get(start)?;
    if !is_word_byte(lead) || lead.is_ascii_digit() {
        return None;
    }
    let end = word_end(bytes, start);
    if &bytes[start..end] == b"operator" {
        if let Some(op_end) = operator_token_end(bytes, end) {
            return Some(op_end);
        }
        if bytes.get(end) == Some(&b' ') {
            let word_start = end + 1;
            if bytes.get(word_start).is_some_and(|&b| is_word_byte(b)) {
                return Some(word_end(bytes, word_start));
            }
        }
    }
    Some(end)
}

/// ident.md "The key pipeline: Whitespace, non-empty rule and fixpoint": collapses whitespace runs to one space, removes spaces around
/// `::`, and trims.
pub(crate) fn collapse_whitespace(text: &str) -> String {
    // One pass can bring colons together (`a : :b` → `a ::b`), after which the space
    // beside `::` should go too; passes only remove characters, so this ends.
    let mut current = collapse_once(text);
    loop {
        let next = collapse_once(&current);
        if next == current {
            return current;
        }
        current = next;
    }
}

fn collapse_once(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    let mut rest = text.trim();
    while let Some(c) = rest.chars().next() {
        let len = c.len_utf8();
        if c.is_whitespace() {
            pending_space = true;
        } else {
            if pending_space && !out.ends_with("::") && !rest.starts_with("::") {
                out.push(' ');
            }
            pending_space = false;
            out.push(c);
        }
        rest = &rest[len..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unterminated_template_is_copied() {
        assert_eq!(strip_signature("a<b<c>"), "a<b");
        assert_eq!(strip_signature("<all>"), "<all>");
    }

    #[test]
    fn whitespace_collapse_is_a_fixpoint_next_to_lone_colons() {
        // Found by fuzzing (fuzz/regressions/ident_keys/crash-p1-space-before-colons-*).
        assert_eq!(
            collapse_whitespace("a : :b"),
            collapse_whitespace(&collapse_whitespace("a : :b"))
        );
        assert_eq!(collapse_whitespace("x  y"), "x y");
        assert_eq!(collapse_whitespace("ns :: f"), "ns::f");
    }

    #[test]
    fn groups_right_after_a_parameter_list_go_in_the_same_pass() {
        // Found by fuzzing (fuzz/regressions/ident_keys/crash-p1-groups-*): one group per
        // pass left `native_key` short of a fixpoint after its four rounds.
        assert_eq!(strip_signature("foo(a)(b)(c)(d)(e)(f)x"), "foox");
        assert_eq!(strip_signature("foo(int) (prefill)"), "foo (prefill)");
        assert_eq!(crate::native_key("u_Z_(A)(B)(C)(D)(E)(F)u"), "u_Z_u");
    }

    #[test]
    fn arrow_inside_template_list_does_not_close_it() {
        assert_eq!(strip_signature("f<decltype(a->b), x->y>(int)"), "f");
    }

    #[test]
    fn local_entity_keeps_the_enclosing_scope() {
        assert_eq!(
            strip_signature("f(int)::{lambda()#1}::operator()() const"),
            "f::{lambda()#1}::operator()"
        );
    }

    #[test]
    fn return_type_split_ignores_tags_and_conversion_operators() {
        assert_eq!(split_return_type("std::enable_if::type vllm::k"), "vllm::k");
        assert_eq!(
            split_return_type("Memcpy DtoD (Device -> Device)"),
            "Memcpy DtoD (Device -> Device)"
        );
        assert_eq!(
            split_return_type("foo::operator bool"),
            "foo::operator bool"
        );
    }

    #[test]
    fn whitespace_collapses_and_hugs_scope_operator() {
        assert_eq!(collapse_whitespace("  a \t ::  b   c "), "a::b c");
    }
}
