//! The line-and-indent Python scanner (locate.md "Source kind: The Python scanner"). It finds `def`s with their
//! decorators, column-0 assignments and string literals without a parser:
//! it survives syntax it does not know, and a misread string costs one line.

use serde::Serialize;

/// One `def` or `async def`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PyDef {
    /// The function name.
    pub name: String,
    /// 1-based line of the `def` keyword.
    pub line: usize,
    /// Columns of indentation.
    pub indent: usize,
    /// 1-based last line of the body (the last logical line indented deeper).
    pub end_line: usize,
    /// The decorators' dotted names, in source order.
    pub decorators: Vec<String>,
    /// Decorated with `@triton.jit`, `@triton.autotune`, `@triton.heuristics`
    /// or an equivalent (`@jit` after `from triton import jit`).
    pub triton: bool,
    /// Decorated with `@flyc.kernel` or `@flyc.jit`.
    pub flydsl: bool,
    /// The expression of a decorator's `repr=` argument (`_k_repr`, or
    /// `lambda` for a lambda): Triton names the compiled kernel with it.
    pub repr: Option<String>,
}

/// One `class` statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PyClass {
    /// The class name.
    pub name: String,
    /// 1-based line of the `class` keyword.
    pub line: usize,
    /// The base-class expressions, as written (strings blanked).
    pub bases: Vec<String>,
}

/// A module-level (column 0) assignment `name = …` or `name: T = …`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PyAssign {
    /// The assigned name.
    pub name: String,
    /// 1-based line.
    pub line: usize,
}

/// A string literal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PyString {
    /// 1-based line where the literal starts.
    pub line: usize,
    /// Byte range of the literal's text (between the quotes).
    pub start: usize,
    /// End of the text (exclusive).
    pub end: usize,
    /// Has an `f`/`F` prefix (alone or with `r`).
    pub fstring: bool,
    /// Followed by `.format(`, `%` or `+`: its text is a template that code fills in.
    pub filled_after: bool,
    /// The whole statement is string literals (a docstring or a bare string
    /// statement): its text is documentation, never evidence.
    pub docstring: bool,
}

/// What the scanner found in one file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PySymbols {
    /// Every def, in source order.
    pub defs: Vec<PyDef>,
    /// Column-0 assignments, in source order.
    pub assignments: Vec<PyAssign>,
    /// String literals, in source order.
    pub strings: Vec<PyString>,
    /// Byte ranges of `#` comments, in source order.
    pub comments: Vec<(usize, usize)>,
    /// Every class statement, in source order.
    pub classes: Vec<PyClass>,
}

impl PySymbols {
    /// True when byte `offset` lies in a comment or a docstring: text there
    /// is not evidence of anything.
    pub fn is_documentation(&self, offset: usize) -> bool {
        let in_comment = self
            .comments
            .partition_point(|&(start, _)| start <= offset)
            .checked_sub(1)
            .is_some_and(|i| offset < self.comments[i].1);
        in_comment || self.string_at(offset).is_some_and(|s| s.docstring)
    }

    /// The string literal whose text holds byte `offset` (literals are in
    /// source order and do not overlap).
    pub fn string_at(&self, offset: usize) -> Option<&PyString> {
        let i = self.strings.partition_point(|s| s.start <= offset);
        self.strings
            .get(i.checked_sub(1)?)
            .filter(|s| offset < s.end)
    }
}

impl PySymbols {
    /// The innermost def whose body holds `line`.
    pub fn enclosing_def(&self, line: usize) -> Option<&PyDef> {
        self.defs
            .iter()
            .filter(|d| d.line <= line && line <= d.end_line)
            .max_by_key(|d| d.line)
    }
}

/// Byte offset where 1-based `line` starts (the text's length past the end).
pub(crate) fn line_start(bytes: &[u8], line: usize) -> usize {
    if line <= 1 {
        return 0;
    }
    memchr::memchr_iter(b'\n', bytes)
        .nth(line - 2)
        .map_or(bytes.len(), |p| p + 1)
}

/// True for a Triton decorator's dotted name (locate.md "Source kind: The Python scanner").
pub fn is_triton_decorator(dotted: &str) -> bool {
    let (head, last) = match dotted.rsplit_once('.') {
        Some((h, l)) => (Some(h), l),
        None => (None, dotted),
    };
    matches!(last, "jit" | "autotune" | "heuristics") && head.is_none_or(|h| h.ends_with("triton"))
}

/// True for a FlyDSL decorator's dotted name.
pub fn is_flydsl_decorator(dotted: &str) -> bool {
    dotted.ends_with("flyc.kernel") || dotted.ends_with("flyc.jit")
}

struct Logical {
    line: usize,
    indent: usize,
}

struct Scanner<'a> {
    src: &'a [u8],
    out: PySymbols,
    pending: Vec<String>,
    pending_repr: Option<String>,
    open_defs: Vec<usize>,
    last_logical_end: usize,
    /// Index of the first string literal of the current logical line.
    logical_strings: usize,
}

/// Scans Python source text.
#[cfg(any(test, feature = "fuzzing"))]
pub fn scan_python(text: &str) -> PySymbols {
    scan_python_bytes(text.as_bytes())
}

/// Bytes that end a run the scanner copies into the logical line unread:
/// comments, quotes, line ends, continuations and brackets.
const SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut k = 0;
    let special = b"#'\"\\\n\r()[]{}";
    while k < special.len() {
        t[special[k] as usize] = true;
        k += 1;
    }
    t
};

/// Scans Python source bytes. Offsets are the file's own, so a file that is
/// not valid UTF-8 is read as it is (identifiers are decoded lossily), never
/// through a decoded copy whose offsets would differ from the file's.
pub(crate) fn scan_python_bytes(bytes: &[u8]) -> PySymbols {
    // Python ends a line at a lone CR too (old Mac line endings). Turning each lone CR
    // into LF keeps every byte offset and lets one line rule serve all three endings.
    let normalized: Vec<u8>;
    let src = if memchr::memchr(b'\r', bytes).is_some() {
        let b = bytes;
        normalized = b
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                if c == b'\r' && b.get(i + 1) != Some(&b'\n') {
                    b'\n'
                } else {
                    c
                }
            })
            .collect();
        &normalized[..]
    } else {
        bytes
    };
    let mut s = Scanner {
        src,
        out: PySymbols::default(),
        pending: Vec::new(),
        pending_repr: None,
        open_defs: Vec::new(),
        last_logical_end: 0,
        logical_strings: 0,
    };
    let mut i = 0;
    let mut line = 1usize;
    let mut logical: Option<Logical> = None;
    // The current logical line's code (strings as `""`), one buffer reused.
    let mut code: Vec<u8> = Vec::new();
    let mut depth = 0usize;
    let mut continued = false;
    while i < src.len() {
        if logical.is_none() {
            // Start of a physical line outside any logical line.
            let mut j = i;
            let mut indent = 0;
            while j < src.len() && (src[j] == b' ' || src[j] == b'\t' || src[j] == b'\x0c') {
                indent += if src[j] == b'\t' { 8 - indent % 8 } else { 1 };
                j += 1;
            }
            if j >= src.len() {
                break;
            }
            if src[j] == b'#' || src[j] == b'\n' || src[j] == b'\r' {
                // Blank or comment line: not a logical line.
                let start = j;
                j = memchr::memchr(b'\n', &src[j..]).map_or(src.len(), |p| j + p);
                if src[start] == b'#' {
                    s.out.comments.push((start, j));
                }
                i = j + 1;
                line += 1;
                continue;
            }
            s.logical_strings = s.out.strings.len();
            logical = Some(Logical { line, indent });
            code.clear();
            i = j;
            continue;
        }
        let c = src[i];
        match c {
            b'#' => {
                let start = i;
                i = memchr::memchr(b'\n', &src[i..]).map_or(src.len(), |p| i + p);
                s.out.comments.push((start, i));
            }
            b'\'' | b'"' => {
                let (next, lines) = s.string(i, line, &mut code);
                line += lines;
                i = next;
            }
            b'\\' if src.get(i + 1) == Some(&b'\n') => {
                continued = true;
                code.push(b' ');
                i += 2;
                line += 1;
            }
            b'\n' => {
                line += 1;
                i += 1;
                if depth == 0 && !continued {
                    if let Some(done) = logical.take() {
                        s.finish(done, &code, line - 1);
                    }
                } else {
                    code.push(b' ');
                }
                continued = false;
            }
            _ if !SPECIAL[c as usize] => {
                // A run of ordinary bytes, copied at once.
                let end = src[i..]
                    .iter()
                    .position(|&b| SPECIAL[b as usize])
                    .map_or(src.len(), |p| i + p);
                code.extend_from_slice(&src[i..end]);
                continued = false;
                i = end;
            }
            _ => {
                match c {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                    _ => {}
                }
                if c != b'\r' {
                    code.push(c);
                }
                continued = false;
                i += 1;
            }
        }
    }
    if let Some(done) = logical.take() {
        s.finish(done, &code, line);
    }
    let end = s.last_logical_end.max(line.saturating_sub(1)).max(1);
    for idx in s.open_defs.drain(..) {
        s.out.defs[idx].end_line = end.max(s.out.defs[idx].line);
    }
    s.out
}

impl Scanner<'_> {
    /// Reads one string literal starting at the quote `at`; returns the index
    /// after it and the number of newlines it spans. Appends a placeholder to `code`.
    fn string(&mut self, at: usize, line: usize, code: &mut Vec<u8>) -> (usize, usize) {
        let src = self.src;
        let q = src[at];
        // The prefix letters were already copied into `code`: read and drop them.
        let mut k = code.len();
        while k > 0
            && code.len() - k < 2
            && matches!(code[k - 1].to_ascii_lowercase(), b'r' | b'b' | b'f' | b'u')
        {
            k -= 1;
        }
        let ident_before = k > 0 && (code[k - 1].is_ascii_alphanumeric() || code[k - 1] == b'_');
        let prefix: Vec<u8> = if ident_before {
            Vec::new()
        } else {
            code[k..].to_ascii_lowercase()
        };
        if !ident_before {
            code.truncate(k);
        }
        let fstring = prefix.contains(&b'f');
        let triple = src.get(at + 1) == Some(&q) && src.get(at + 2) == Some(&q);
        let start = if triple { at + 3 } else { at + 1 };
        let mut i = start;
        let mut lines = 0;
        let end;
        loop {
            // Only a quote, a backslash or a line end can end the literal.
            i = memchr::memchr3(q, b'\\', b'\n', &src[i.min(src.len())..])
                .map_or(src.len(), |p| i + p);
            if i >= src.len() {
                end = src.len();
                break;
            }
            let c = src[i];
            if c == b'\\' && i + 1 < src.len() {
                if src[i + 1] == b'\n' {
                    lines += 1;
                }
                i += 2;
                continue;
            }
            if c == b'\n' {
                if triple {
                    lines += 1;
                    i += 1;
                    continue;
                }
                // A single-quoted string ends at the line's end: a misread
                // nested f-string damages one line only.
                end = i;
                break;
            }
            if c == q && (!triple || (src.get(i + 1) == Some(&q) && src.get(i + 2) == Some(&q))) {
                end = i;
                i += if triple { 3 } else { 1 };
                break;
            }
            i += 1;
        }
        let end_exclusive = end.min(src.len());
        let after = i.min(src.len());
        let mut j = after;
        while j < src.len() && (src[j] == b' ' || src[j] == b'\t') {
            j += 1;
        }
        let rest = &src[j..];
        let filled_after =
            rest.starts_with(b".format(") || rest.starts_with(b"%") || rest.starts_with(b"+");
        self.out.strings.push(PyString {
            line,
            start,
            end: end_exclusive.max(start),
            fstring,
            filled_after,
            docstring: false,
        });
        code.extend_from_slice(b"\"\"");
        (after, lines)
    }

    fn finish(&mut self, logical: Logical, code: &[u8], end_line: usize) {
        while let Some(&top) = self.open_defs.last() {
            if self.out.defs[top].indent >= logical.indent {
                self.out.defs[top].end_line = self.last_logical_end.max(self.out.defs[top].line);
                self.open_defs.pop();
            } else {
                break;
            }
        }
        self.last_logical_end = end_line;
        // Valid UTF-8 (nearly every line) is read in place.
        let decoded = match std::str::from_utf8(code) {
            Ok(t) => std::borrow::Cow::Borrowed(t),
            Err(_) => String::from_utf8_lossy(code),
        };
        let text = decoded.trim();
        // A statement of string literals only (each left `""` in `code`).
        if !text.is_empty() && text.bytes().all(|b| b == b'"' || b.is_ascii_whitespace()) {
            for s in &mut self.out.strings[self.logical_strings..] {
                s.docstring = true;
            }
        }
        if let Some(rest) = text.strip_prefix('@') {
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.' || *c == ' ')
                .filter(|c| *c != ' ')
                .collect();
            self.pending.push(name);
            if let Some(r) = repr_argument(rest) {
                self.pending_repr = Some(r);
            }
            return;
        }
        if let Some(rest) = text
            .strip_prefix("class")
            .filter(|r| r.starts_with(char::is_whitespace))
        {
            let rest = rest.trim_start();
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let after = rest[name.len()..].trim_start();
            let bases = after
                .strip_prefix('(')
                .and_then(|b| b.rfind(')').map(|e| &b[..e]))
                .map(|b| {
                    b.split(',')
                        .map(|x| x.trim().to_owned())
                        .filter(|x| !x.is_empty())
                        .collect()
                })
                .unwrap_or_default();
            if !name.is_empty() {
                self.out.classes.push(PyClass {
                    name,
                    line: logical.line,
                    bases,
                });
            }
            self.pending.clear();
            self.pending_repr = None;
            return;
        }
        let def_rest = text
            .strip_prefix("def")
            .or_else(|| {
                text.strip_prefix("async")
                    .filter(|r| r.starts_with(char::is_whitespace))
                    .and_then(|r| r.trim_start().strip_prefix("def"))
            })
            .filter(|r| r.starts_with(char::is_whitespace));
        if let Some(rest) = def_rest {
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let decorators = std::mem::take(&mut self.pending);
            let repr = self.pending_repr.take();
            if !name.is_empty() {
                let triton = decorators.iter().any(|d| is_triton_decorator(d));
                let flydsl = decorators.iter().any(|d| is_flydsl_decorator(d));
                self.out.defs.push(PyDef {
                    name,
                    line: logical.line,
                    indent: logical.indent,
                    end_line,
                    decorators,
                    triton,
                    flydsl,
                    repr,
                });
                self.open_defs.push(self.out.defs.len() - 1);
            }
            return;
        }
        self.pending.clear();
        self.pending_repr = None;
        if logical.indent == 0
            && let Some(name) = assignment_target(code)
        {
            self.out.assignments.push(PyAssign {
                name,
                line: logical.line,
            });
        }
    }
}

/// The `repr=` keyword argument of a decorator call: its expression up to
/// the next top-level `,` or `)`; `lambda` for a lambda.
fn repr_argument(decorator: &str) -> Option<String> {
    let b = decorator.as_bytes();
    let mut from = 0;
    while let Some(p) = decorator[from..].find("repr") {
        let at = from + p;
        from = at + 4;
        if at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_') {
            continue;
        }
        let rest = decorator[at + 4..].trim_start();
        let Some(expr) = rest.strip_prefix('=').filter(|r| !r.starts_with('=')) else {
            continue;
        };
        let expr = expr.trim_start();
        if expr.starts_with("lambda") {
            return Some("lambda".to_owned());
        }
        let name: String = expr
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
            .collect();
        return (!name.is_empty()).then_some(name);
    }
    None
}

/// `name = …` or `name: T = …` at the start of a logical line; `==` is a
/// comparison, not an assignment.
fn assignment_target(code: &[u8]) -> Option<String> {
    let mut i = 0;
    while i < code.len() && (code[i].is_ascii_alphanumeric() || code[i] == b'_' || code[i] >= 0x80)
    {
        i += 1;
    }
    if i == 0 || code[0].is_ascii_digit() {
        return None;
    }
    let name = String::from_utf8_lossy(&code[..i]).into_owned();
    let mut j = i;
    while j < code.len() && code[j] == b' ' {
        j += 1;
    }
    match code.get(j) {
        Some(b'=') if code.get(j + 1) != Some(&b'=') => Some(name),
        Some(b':') => {
            // Annotation: find `=` at bracket depth 0.
            let mut depth = 0usize;
            let mut k = j + 1;
            while k < code.len() {
                match code[k] {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                    b'=' if depth == 0 => {
                        let prev = code[k - 1];
                        if code.get(k + 1) == Some(&b'=')
                            || matches!(prev, b'<' | b'>' | b'!' | b'=')
                        {
                            return None;
                        }
                        return Some(name);
                    }
                    _ => {}
                }
                k += 1;
            }
            None
        }
        _ => None,
    }
}
