//! Definition checks for C, C++, CUDA and HIP text (locate.md "What a hit proves"): a `__global__`
//! kernel definition (strength 2), a plain function definition (strength
//! 1), or a mention (declarations, calls, macros, launches).

use memchr::memmem;

/// Words that make the text before a name a statement, not a declarator.
const NOT_A_DECLARATOR: &[&[u8]] = &[
    b"return",
    b"else",
    b"new",
    b"delete",
    b"case",
    b"throw",
    b"goto",
    b"co_return",
    b"co_yield",
];

/// Qualifiers that may follow a definition's parameter list.
const TRAILING_QUALIFIERS: &[&[u8]] = &[b"const", b"noexcept", b"override", b"final", b"volatile"];

/// How far after `__global__` the kernel's name may come (template heads and
/// launch bounds included).
const GLOBAL_WINDOW: usize = 4096;

/// The text with `//` and `/* */` comments replaced by spaces (newlines
/// kept, so offsets and lines are unchanged). String and character literals
/// are skipped so `"//"` is not a comment.
pub(crate) fn blank_comments(src: &[u8]) -> Vec<u8> {
    let mut out = src.to_vec();
    let mut i = 0;
    while i < src.len() {
        // Only a slash or a quote can start what this blanks or skips.
        i = memchr::memchr3(b'/', b'"', b'\'', &src[i..]).map_or(src.len(), |p| i + p);
        if i >= src.len() {
            break;
        }
        match src[i] {
            b'/' if src.get(i + 1) == Some(&b'/') => {
                while i < src.len() && src[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            b'/' if src.get(i + 1) == Some(&b'*') => {
                out[i] = b' ';
                out[i + 1] = b' ';
                i += 2;
                while i < src.len() && !(src[i] == b'*' && src.get(i + 1) == Some(&b'/')) {
                    if src[i] != b'\n' {
                        out[i] = b' ';
                    }
                    i += 1;
                }
                if i < src.len() {
                    out[i] = b' ';
                    if i + 1 < src.len() {
                        out[i + 1] = b' ';
                    }
                    i += 2;
                }
            }
            b'"' => {
                i += 1;
                while i < src.len() && src[i] != b'"' && src[i] != b'\n' {
                    i += if src[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            // A quote after a digit is a C++14 digit separator, not a char literal.
            b'\'' if i == 0 || !src[i - 1].is_ascii_alphanumeric() => {
                i += 1;
                while i < src.len() && src[i] != b'\'' && src[i] != b'\n' {
                    i += if src[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

pub(crate) fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Offsets where `word` occurs as a whole word.
pub(crate) fn whole_word_offsets(text: &[u8], word: &[u8]) -> Vec<usize> {
    if word.is_empty() {
        return Vec::new();
    }
    memmem::find_iter(text, word)
        .filter(|&o| whole_word_at(text, word, o))
        .collect()
}

/// Whether `word`, which occurs at `o` in `text`, is a whole word there: no
/// identifier byte joins it on a side where the word itself ends in one.
pub(crate) fn whole_word_at(text: &[u8], word: &[u8], o: usize) -> bool {
    let before_ok =
        o == 0 || !is_ident_byte(text[o - 1]) || !word.first().is_some_and(|&b| is_ident_byte(b));
    let end = o + word.len();
    let after_ok = end >= text.len()
        || !is_ident_byte(text[end])
        || !word.last().is_some_and(|&b| is_ident_byte(b));
    before_ok && after_ok
}

fn skip_ws(text: &[u8], mut i: usize) -> usize {
    while i < text.len() && text[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// Index after the bracket group opened at `i` (`open` at `text[i]`).
/// Parentheses inside angle brackets are opaque; `->` never closes `<`.
fn match_group(text: &[u8], i: usize, open: u8, close: u8) -> Option<usize> {
    let mut depth = 0usize;
    let mut j = i;
    while j < text.len() {
        let c = text[j];
        if c == open {
            depth += 1;
        } else if c == close && !(close == b'>' && j > 0 && text[j - 1] == b'-') {
            // A close before any open (a caller past its bracket) matches nothing.
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(j + 1);
            }
        } else if open == b'<' && c == b'(' {
            j = match_group(text, j, b'(', b')')?;
            continue;
        } else if open == b'<' && (c == b';' || c == b'{') {
            return None;
        }
        j += 1;
    }
    None
}

/// After the name: optional `<…>`, then `(`; returns the index after the
/// matching `)`.
fn params_after_name(text: &[u8], end: usize) -> Option<usize> {
    let mut i = skip_ws(text, end);
    if text.get(i) == Some(&b'<') {
        i = skip_ws(text, match_group(text, i, b'<', b'>')?);
    }
    if text.get(i) != Some(&b'(') {
        return None;
    }
    match_group(text, i, b'(', b')')
}

/// What follows a parameter list: `Some(true)` for a body `{`, `Some(false)`
/// for a `;` (declaration), `None` otherwise.
fn body_follows(text: &[u8], after_params: usize) -> Option<bool> {
    let mut i = skip_ws(text, after_params);
    loop {
        match text.get(i) {
            Some(b'{') => return Some(true),
            Some(b';') => return Some(false),
            Some(b'&') => i = skip_ws(text, i + 1),
            Some(b'-') if text.get(i + 1) == Some(&b'>') => {
                // Trailing return type: up to the body or the `;`.
                let mut j = i + 2;
                while j < text.len() && text[j] != b'{' && text[j] != b';' {
                    j += 1;
                }
                i = j;
            }
            Some(b':') if text.get(i + 1) != Some(&b':') => {
                // Constructor initialiser list: the body is the first `{` at depth 0
                // that is not a member's brace initialiser (best effort).
                let mut j = i + 1;
                while j < text.len() && text[j] != b'{' && text[j] != b';' {
                    j += 1;
                }
                return match text.get(j) {
                    Some(b'{') => Some(true),
                    _ => Some(false),
                };
            }
            Some(c) if is_ident_byte(*c) => {
                let start = i;
                while i < text.len() && is_ident_byte(text[i]) {
                    i += 1;
                }
                let word = &text[start..i];
                if !TRAILING_QUALIFIERS.contains(&word) && word != b"__attribute__" {
                    return None;
                }
                i = skip_ws(text, i);
                if text.get(i) == Some(&b'(') {
                    i = skip_ws(text, match_group(text, i, b'(', b')')?);
                }
            }
            _ => return None,
        }
    }
}

/// The text before a name is a declarator head: identifiers, `::`, `<…>`,
/// `*`, `&`, whitespace, `__attribute__((…))`, `[[…]]`, and no statement word.
fn is_declarator_head(head: &[u8]) -> bool {
    let mut i = 0;
    let mut saw_token = false;
    while i < head.len() {
        let c = head[i];
        if c.is_ascii_whitespace() || c == b'*' || c == b'&' {
            i += 1;
        } else if c == b':' && head.get(i + 1) == Some(&b':') {
            i += 2;
        } else if c == b'<' {
            match match_group(head, i, b'<', b'>') {
                Some(j) => i = j,
                None => return false,
            }
        } else if c == b'[' && head.get(i + 1) == Some(&b'[') {
            match memmem::find(&head[i..], b"]]") {
                Some(j) => i += j + 2,
                None => return false,
            }
        } else if is_ident_byte(c) {
            let start = i;
            while i < head.len() && is_ident_byte(head[i]) {
                i += 1;
            }
            let word = &head[start..i];
            if NOT_A_DECLARATOR.contains(&word) {
                return false;
            }
            saw_token = true;
            if word == b"__attribute__" {
                let j = skip_ws(head, i);
                if head.get(j) == Some(&b'(') {
                    match match_group(head, j, b'(', b')') {
                        Some(k) => i = k,
                        None => return false,
                    }
                }
            }
        } else {
            return false;
        }
    }
    saw_token
}

/// One definition or mention of a spelling in native text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NativeHit {
    /// 2 for a `__global__` definition, 1 for a plain definition, 0 for a mention.
    pub strength: u8,
    /// Byte offset of the name.
    pub offset: usize,
    /// The definition has a `template <…>` head.
    pub template_head: bool,
}

/// Every whole-word occurrence of `spelling` in comment-blanked text, each
/// with its strength, in text order. An argument of a kernel macro's
/// invocation in the macro's name position is a kernel definition (rule 2g).
pub(crate) fn native_hits(
    blanked: &[u8],
    globals: &[usize],
    macros: &[KernelMacro],
    spelling: &str,
) -> Vec<NativeHit> {
    let word = spelling.as_bytes();
    whole_word_offsets(blanked, word)
        .into_iter()
        .map(|o| {
            let strength = strength_at(blanked, globals, o, word.len());
            if strength == 0
                && let Some(m) = macro_invocation(blanked, macros, o, word.len())
            {
                return NativeHit {
                    strength: 2,
                    offset: o,
                    template_head: m.templated,
                };
            }
            NativeHit {
                strength,
                offset: o,
                template_head: has_template_head(blanked, o),
            }
        })
        .collect()
}

/// A function-like `#define` whose body defines a `__global__` function
/// named by one of its parameters (rule 2g).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KernelMacro {
    pub name: String,
    /// Index of the parameter that names the kernel.
    pub param: usize,
    /// The body puts a `template <…>` head before `__global__`.
    pub templated: bool,
}

/// Every kernel macro of comment-blanked text.
pub(crate) fn kernel_macros(blanked: &[u8]) -> Vec<KernelMacro> {
    let mut out = Vec::new();
    for d in whole_word_offsets(blanked, b"define") {
        let line_start = blanked[..d]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        let head = blanked[line_start..d].trim_ascii();
        if head != b"#" {
            continue;
        }
        let n0 = skip_ws(blanked, d + b"define".len());
        let mut n1 = n0;
        while n1 < blanked.len() && is_ident_byte(blanked[n1]) {
            n1 += 1;
        }
        // Function-like: `(` right after the name.
        if n1 == n0 || blanked.get(n1) != Some(&b'(') {
            continue;
        }
        let Some(close) = blanked[n1..]
            .iter()
            .position(|&b| b == b')')
            .map(|p| n1 + p)
        else {
            continue;
        };
        let params: Vec<&[u8]> = blanked[n1 + 1..close]
            .split(|&b| b == b',')
            .map(<[u8]>::trim_ascii)
            .collect();
        // The body runs to the first newline not escaped by `\`.
        let mut end = close;
        while end < blanked.len() {
            if blanked[end] == b'\n' && (end == 0 || blanked[end - 1] != b'\\') {
                break;
            }
            end += 1;
        }
        let body = &blanked[close + 1..end];
        let Some(g) = whole_word_offsets(body, b"__global__").first().copied() else {
            continue;
        };
        let after = &body[g..];
        let param = params.iter().position(|p| {
            !p.is_empty()
                && whole_word_offsets(after, p)
                    .into_iter()
                    .any(|o| matches!(after.get(skip_ws(after, o + p.len())), Some(b'(' | b'<')))
        });
        if let Some(param) = param {
            out.push(KernelMacro {
                name: String::from_utf8_lossy(&blanked[n0..n1]).into_owned(),
                param,
                templated: !whole_word_offsets(&body[..g], b"template").is_empty(),
            });
        }
    }
    out
}

/// The kernel macro whose invocation has the word at `o` as its whole
/// kernel-name argument.
fn macro_invocation<'m>(
    text: &[u8],
    macros: &'m [KernelMacro],
    o: usize,
    len: usize,
) -> Option<&'m KernelMacro> {
    if macros.is_empty() {
        return None;
    }
    // Back to the unmatched `(`, counting top-level commas.
    let mut depth = 0usize;
    let mut commas = 0usize;
    let mut i = o;
    let open = loop {
        if i == 0 {
            return None;
        }
        i -= 1;
        match text[i] {
            b')' | b']' | b'>' => depth += 1,
            b'(' if depth == 0 => break i,
            b'(' | b'[' | b'<' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => commas += 1,
            b';' | b'{' | b'}' => return None,
            _ => {}
        }
    };
    let arg_start = text[open + 1..o]
        .iter()
        .rposition(|&b| b == b',')
        .map_or(open + 1, |p| open + 2 + p);
    let after = skip_ws(text, o + len);
    if !text[arg_start..o].iter().all(u8::is_ascii_whitespace)
        || !matches!(text.get(after), Some(b',' | b')'))
    {
        return None;
    }
    let mut s = open;
    while s > 0 && text[s - 1].is_ascii_whitespace() {
        s -= 1;
    }
    let e = s;
    while s > 0 && is_ident_byte(text[s - 1]) {
        s -= 1;
    }
    let name = &text[s..e];
    macros
        .iter()
        .find(|m| m.name.as_bytes() == name && m.param == commas)
}

fn strength_at(text: &[u8], globals: &[usize], o: usize, len: usize) -> u8 {
    let end = o + len;
    let Some(after_params) = params_after_name(text, end) else {
        return 0;
    };
    let body = body_follows(text, after_params);
    if body != Some(true) {
        return 0;
    }
    // Kernel: a `__global__` before the name with no `;` or `{` in between.
    let kernel =
        globals.iter().rev().filter(|&&g| g < o).take(1).any(|&g| {
            o - g <= GLOBAL_WINDOW && !text[g..o].iter().any(|&b| b == b';' || b == b'{')
        });
    if kernel {
        return 2;
    }
    // Plain definition: the text before the name on its line, or the previous
    // non-blank line when its own has none, is a declarator head.
    let line_start = text[..o]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let own = &text[line_start..o];
    if text[line_start..].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'#') {
        return 0;
    }
    let head: &[u8] = if own.iter().all(u8::is_ascii_whitespace) {
        let mut e = line_start;
        loop {
            if e == 0 {
                break &[];
            }
            let s = text[..e - 1]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            let line = &text[s..e - 1];
            if !line.iter().all(u8::is_ascii_whitespace) {
                if line.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'#') {
                    break &[];
                }
                break line;
            }
            e = s;
        }
    } else {
        own
    };
    u8::from(is_declarator_head(head))
}

/// Offsets of every `__global__` token.
pub(crate) fn global_offsets(blanked: &[u8]) -> Vec<usize> {
    whole_word_offsets(blanked, b"__global__")
}

/// One `namespace … { … }` body: its byte range and its names (`a::b` gives
/// two; an anonymous namespace gives none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NamespaceScope {
    pub start: usize,
    pub end: usize,
    pub names: Vec<String>,
    /// An `extern "C" { … }` block: no namespace, but C linkage inside.
    pub c_linkage: bool,
}

/// Every namespace body of comment-blanked text, in order of their `{`.
/// Braces are matched naively (string literals holding braces can shift a
/// scope; the check that uses this only narrows, never invents, a match).
pub(crate) fn namespace_scopes(blanked: &[u8]) -> Vec<NamespaceScope> {
    let mut out: Vec<NamespaceScope> = Vec::new();
    // Open braces: Some(index into `out`) for a namespace body.
    let mut stack: Vec<Option<usize>> = Vec::new();
    for i in memchr::memchr2_iter(b'{', b'}', blanked) {
        match blanked[i] {
            b'{' => {
                let c_linkage = ends_with_extern_c(&blanked[..i]);
                let names = namespace_head(&blanked[..i]).or(c_linkage.then(Vec::new));
                stack.push(names.map(|names| {
                    out.push(NamespaceScope {
                        start: i,
                        end: blanked.len(),
                        names,
                        c_linkage,
                    });
                    out.len() - 1
                }));
            }
            b'}' => {
                if let Some(Some(idx)) = stack.pop() {
                    out[idx].end = i;
                }
            }
            _ => {}
        }
    }
    out
}

/// The names of `namespace a::b` (or `inline namespace a`, `namespace a::
/// b`, or an anonymous `namespace`) right before a `{`; `None` when the brace
/// opens anything else.
fn namespace_head(before: &[u8]) -> Option<Vec<String>> {
    // The run of identifiers, `:` and whitespace that ends at the brace.
    let mut k = before.len();
    while k > 0
        && (is_ident_byte(before[k - 1])
            || before[k - 1] == b':'
            || before[k - 1].is_ascii_whitespace())
    {
        k -= 1;
    }
    let run = &before[k..];
    let at = whole_word_offsets(run, b"namespace").pop()?;
    let names: Vec<String> = String::from_utf8_lossy(&run[at + b"namespace".len()..])
        .split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    names
        .iter()
        .all(|n| n.bytes().all(is_ident_byte))
        .then_some(names)
}

/// The namespaces enclosing `offset`, outermost first (an anonymous one as
/// [`ANONYMOUS_NAMESPACE`], as a demangler prints it), followed by the
/// qualifiers written before the name itself (`void a::b::k(`).
pub(crate) fn scope_at(scopes: &[NamespaceScope], text: &[u8], offset: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in scopes
        .iter()
        .filter(|s| !s.c_linkage && s.start < offset && offset < s.end)
    {
        if s.names.is_empty() {
            out.push(ANONYMOUS_NAMESPACE.to_owned());
        } else {
            out.extend(s.names.iter().cloned());
        }
    }
    let mut k = offset;
    let mut written = Vec::new();
    while k >= 2 && &text[k - 2..k] == b"::" {
        let end = k - 2;
        let mut s = end;
        while s > 0 && is_ident_byte(text[s - 1]) {
            s -= 1;
        }
        if s == end {
            break;
        }
        written.push(String::from_utf8_lossy(&text[s..end]).into_owned());
        k = s;
    }
    out.extend(written.into_iter().rev());
    out
}

/// The text ends with `extern "C"` (before a brace or a declaration).
fn ends_with_extern_c(before: &[u8]) -> bool {
    let t = before.trim_ascii_end();
    t.strip_suffix(b"\"C\"")
        .map(<[u8]>::trim_ascii_end)
        .is_some_and(|h| h.ends_with(b"extern") && (h.len() == 6 || !is_ident_byte(h[h.len() - 7])))
}

/// Whether the definition at `o` has C linkage: inside an `extern "C" {`
/// block, or with `extern "C"` in its own declaration (since the previous
/// `;`, `{` or `}`). A C-linkage kernel's symbol is its bare name.
pub(crate) fn c_linkage_at(scopes: &[NamespaceScope], text: &[u8], o: usize) -> bool {
    if scopes
        .iter()
        .any(|s| s.c_linkage && s.start < o && o < s.end)
    {
        return true;
    }
    let from = text[..o]
        .iter()
        .rposition(|&b| matches!(b, b';' | b'{' | b'}'))
        .map_or(0, |p| p + 1);
    memmem::find(&text[from..o], b"extern \"C\"").is_some()
}

/// An identifier spelled like an object-like macro (`FLASH_NAMESPACE`):
/// upper-case letters, digits and `_`, with at least one letter.
pub(crate) fn macro_like(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_uppercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// The value of `#define name value` in comment-blanked text, when the value
/// is a (possibly `::`-qualified) identifier.
pub(crate) fn object_macro_value(blanked: &[u8], name: &str) -> Option<String> {
    whole_word_offsets(blanked, name.as_bytes())
        .into_iter()
        .find_map(|o| {
            let line_start = blanked[..o]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            let head: Vec<u8> = blanked[line_start..o]
                .iter()
                .copied()
                .filter(|b| !b.is_ascii_whitespace())
                .collect();
            if head != b"#define" {
                return None;
            }
            let end = blanked[o..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(blanked.len(), |p| o + p);
            let value =
                String::from_utf8_lossy(blanked[o + name.len()..end].trim_ascii()).into_owned();
            let ok = !value.is_empty()
                && value
                    .split("::")
                    .all(|p| !p.is_empty() && p.bytes().all(is_ident_byte));
            ok.then_some(value)
        })
}

/// How a demangler spells an anonymous namespace.
pub(crate) const ANONYMOUS_NAMESPACE: &str = "(anonymous namespace)";

/// Rule 2b: a definition's enclosing scope must equal a C++ name's
/// qualifiers, anonymous namespaces included: a name printed at global scope
/// is not a kernel defined inside `namespace {`, and `at::native::k` is not a
/// global `k`.
pub(crate) fn scope_matches(def_scope: &[String], qualifiers: &[String]) -> bool {
    def_scope == qualifiers
}

/// Statements a generic trampoline's body may hold.
const MAX_TRAMPOLINE_STATEMENTS: usize = 8;

/// The template parameters of the `template <…>` head right before the
/// definition at `o` (not crossing a `;` or `}`): each as (is a type, name).
fn template_params(text: &[u8], o: usize) -> Vec<(bool, String)> {
    let from = o.saturating_sub(GLOBAL_WINDOW);
    let window = &text[from..o];
    let Some(t) = whole_word_offsets(window, b"template").pop() else {
        return Vec::new();
    };
    if window[t..].iter().any(|&b| b == b';' || b == b'}') {
        return Vec::new();
    }
    let open = skip_ws(text, from + t + b"template".len());
    if text.get(open) != Some(&b'<') {
        return Vec::new();
    }
    let Some(close) = match_group(text, open, b'<', b'>') else {
        return Vec::new();
    };
    let inner = String::from_utf8_lossy(&text[open + 1..close - 1]).into_owned();
    let mut params = Vec::new();
    let mut depth = 0usize;
    let mut cur = String::new();
    for c in inner.chars().chain(std::iter::once(',')) {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                let p = cur.split('=').next().unwrap_or("").trim().to_owned();
                let is_type = p.starts_with("typename") || p.starts_with("class");
                let name: String = p
                    .rsplit(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                    .next()
                    .unwrap_or("")
                    .to_owned();
                params.push((is_type, name));
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    params
}

/// Whether the definition at `o` has a `template <…>` head (an explicit
/// specialisation's `template <>` included).
pub(crate) fn has_template_head(text: &[u8], o: usize) -> bool {
    let from = o.saturating_sub(GLOBAL_WINDOW);
    let window = &text[from..o];
    whole_word_offsets(window, b"template")
        .pop()
        .is_some_and(|t| {
            !window[t..]
                .iter()
                .any(|&b| b == b';' || b == b'}' || b == b'{')
                && text.get(skip_ws(text, from + t + b"template".len())) == Some(&b'<')
        })
}

/// Rule 2h: when the definition at `o` is a generic trampoline (a short body
/// that only constructs or invokes one of its template *type* parameters:
/// `K{}(a…)`, `K op; op(…)`, `K::invoke(…)`), the index of that parameter in
/// the template head. Calling a *value* functor parameter (`f(x)` for
/// `func_t f`) is an ordinary kernel.
pub(crate) fn trampoline_param(text: &[u8], o: usize, len: usize) -> Option<usize> {
    let after_params = params_after_name(text, o + len)?;
    let mut i = skip_ws(text, after_params);
    while i < text.len() && text[i] != b'{' && text[i] != b';' {
        i += 1;
    }
    if text.get(i) != Some(&b'{') {
        return None;
    }
    let close = match_group(text, i, b'{', b'}')?;
    let body = &text[i + 1..close - 1];
    if body.iter().filter(|&&b| b == b';').count() > MAX_TRAMPOLINE_STATEMENTS {
        return None;
    }
    let params = template_params(text, o);
    params
        .iter()
        .position(|(is_type, p)| *is_type && !p.is_empty() && invokes_type(body, p.as_bytes()))
}

/// `P{}(`, `P()(`, `P::name(`, or `P var;` then `var(` in `body`.
fn invokes_type(body: &[u8], p: &[u8]) -> bool {
    whole_word_offsets(body, p).into_iter().any(|at| {
        let j = skip_ws(body, at + p.len());
        let rest = &body[j.min(body.len())..];
        if rest.starts_with(b"{}") || rest.starts_with(b"()") {
            return body.get(skip_ws(body, j + 2)) == Some(&b'(');
        }
        if rest.starts_with(b"::") {
            let k = j + 2;
            let mut e = k;
            while e < body.len() && is_ident_byte(body[e]) {
                e += 1;
            }
            return e > k && body.get(skip_ws(body, e)) == Some(&b'(');
        }
        // `P var;` (or `P var{…};`) then `var(`.
        let mut e = j;
        while e < body.len() && is_ident_byte(body[e]) {
            e += 1;
        }
        if e == j {
            return false;
        }
        let var = &body[j..e];
        whole_word_offsets(&body[e..], var)
            .into_iter()
            .any(|v| body.get(skip_ws(body, e + v + var.len())) == Some(&b'('))
    })
}

/// Whether `name` is defined as a class at some whole-word occurrence in
/// `text`: `struct name` / `class name` followed by `{`, `:`, `<` or `final`.
pub(crate) fn class_definition(text: &[u8], name: &str) -> Option<usize> {
    whole_word_offsets(text, name.as_bytes())
        .into_iter()
        .find(|&o| {
            let head = &text[..o];
            let trimmed = head.trim_ascii_end();
            let keyword = trimmed.ends_with(b"struct") || trimmed.ends_with(b"class");
            let j = skip_ws(text, o + name.len());
            let follows = matches!(text.get(j), Some(b'{' | b':' | b'<'))
                || text[j.min(text.len())..].starts_with(b"final");
            keyword && follows && text.get(j..j + 2) != Some(b"::")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope_of(src: &str, word: &str) -> Vec<String> {
        let b = blank_comments(src.as_bytes());
        let o = whole_word_offsets(&b, word.as_bytes())[0];
        scope_at(&namespace_scopes(&b), &b, o)
    }

    #[test]
    fn namespace_scopes_read_nested_spaced_anonymous_and_written_qualifiers() {
        let src = "namespace at:: native {\nnamespace { // helpers\nvoid k() {}\n}\n}\nvoid x::y::w() {}\nstruct S { void m() {} };\n";
        assert_eq!(scope_of(src, "k"), ["at", "native", ANONYMOUS_NAMESPACE]);
        assert_eq!(scope_of(src, "w"), ["x", "y"]);
        assert!(scope_of(src, "m").is_empty());
    }

    fn trampoline(src: &str, word: &str) -> Option<usize> {
        let b = blank_comments(src.as_bytes());
        let o = whole_word_offsets(&b, word.as_bytes())[0];
        trampoline_param(&b, o, word.len())
    }

    #[test]
    fn a_body_that_only_invokes_a_type_parameter_is_a_trampoline() {
        let entry = "template <int N, typename Kernel, typename... A>\n__global__ void entry(A... a) {\n  Kernel{}(a...);\n}\n";
        assert_eq!(trampoline(entry, "entry"), Some(1));
        let stat = "template <typename Op>\n__global__ void k2(typename Op::Params p) { Op::invoke(p); }\n";
        assert_eq!(trampoline(stat, "k2"), Some(0));
        let var = "template <typename Op>\nvoid k3(int p) {\n  Op op;\n  op(p);\n}\n";
        assert_eq!(trampoline(var, "k3"), Some(0));
        // A value functor parameter is called: an ordinary kernel.
        let value = "template <typename func_t>\n__global__ void k4(int n, func_t f) { f(n); }\n";
        assert_eq!(trampoline(value, "k4"), None);
    }

    #[test]
    fn class_definitions_are_struct_or_class_heads() {
        let src = b"struct Fwd;\nstruct Fwd : Base {};\nclass Other final {};\n";
        assert_eq!(class_definition(src, "Fwd"), Some(19));
        assert!(class_definition(src, "Other").is_some());
        assert!(class_definition(b"struct Fwd;\nFwd x;", "Fwd").is_none());
    }
}
