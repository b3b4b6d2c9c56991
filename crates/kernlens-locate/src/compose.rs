//! Composed names (issue rule 2c): a template built from each Python site
//! that composes a kernel name, matched against the whole launched name.
//!
//! A site is a string literal that starts with a prefix keyword. Its
//! template is the literal (each `{…}` or `%…` placeholder a wildcard), then
//! what the code joins to it: adjacent literals, `+ literal` or `+ expr`,
//! and the `v += …` statements on the same variable later in the enclosing
//! function (optional when nested deeper than the function body). A
//! wildcard matches `[A-Za-z0-9_.x-]*`, and a trailing `_<digits>` runtime
//! id is allowed. The score is the number of literal characters matched.

use crate::python::{PyDef, PyString, PySymbols, line_start};

/// Names longer than this are not matched against templates (the match is
/// quadratic in the name's length).
const MAX_NAME: usize = 1024;
/// Optional pieces expanded per template (2^n variants).
const MAX_OPTIONAL: usize = 6;
/// Pieces per template.
const MAX_PIECES: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Lit(Vec<u8>),
    Wild,
    Opt(Vec<Piece>),
}

/// The best composing site of one file for a launched name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Composed {
    /// 1-based line of the site's first literal (or of the repr'd def).
    pub line: usize,
    /// Literal characters of the name the template spells out.
    pub literal_chars: usize,
    /// A `repr=` def composes the name (rule 2e), not a string template.
    pub by_repr: bool,
}

/// The site whose template matches all of `name` with the most literal
/// characters, among the string literals that start with `kw`.
pub(crate) fn best_site(
    symbols: &PySymbols,
    bytes: &[u8],
    kw: &str,
    name: &str,
) -> Option<Composed> {
    if name.len() > MAX_NAME {
        return None;
    }
    let mut best: Option<Composed> = None;
    for (i, s) in symbols.strings.iter().enumerate() {
        if s.docstring || !bytes[s.start..s.end].starts_with(kw.as_bytes()) {
            continue;
        }
        let pieces = template(symbols, bytes, i);
        let Some(chars) = match_name(&pieces, name.as_bytes()) else {
            continue;
        };
        if best.is_none_or(|b| chars > b.literal_chars) {
            best = Some(Composed {
                line: s.line,
                literal_chars: chars,
                by_repr: false,
            });
        }
    }
    best
}

/// The pieces of one literal's text.
fn literal_pieces(s: &PyString, bytes: &[u8]) -> Vec<Piece> {
    let text = &bytes[s.start..s.end];
    let braces = s.fstring || (s.filled_after && text.contains(&b'{'));
    let percent = !s.fstring && s.filled_after && text.contains(&b'%');
    let mut out = Vec::new();
    let mut lit = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        if braces && (c == b'{' || c == b'}') && text.get(i + 1) == Some(&c) {
            lit.push(c);
            i += 2;
        } else if braces && c == b'{' {
            let mut depth = 0usize;
            while i < text.len() {
                match text[i] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            i += 1;
            push_lit(&mut out, &mut lit);
            out.push(Piece::Wild);
        } else if percent && c == b'%' && text.get(i + 1) == Some(&b'%') {
            lit.push(b'%');
            i += 2;
        } else if percent && c == b'%' {
            i += 1;
            if text.get(i) == Some(&b'(') {
                while i < text.len() && text[i] != b')' {
                    i += 1;
                }
                i += 1;
            }
            while i < text.len() && !text[i].is_ascii_alphabetic() {
                i += 1;
            }
            i += 1;
            push_lit(&mut out, &mut lit);
            out.push(Piece::Wild);
        } else {
            lit.push(c);
            i += 1;
        }
    }
    push_lit(&mut out, &mut lit);
    out
}

fn push_lit(out: &mut Vec<Piece>, lit: &mut Vec<u8>) {
    if !lit.is_empty() {
        out.push(Piece::Lit(std::mem::take(lit)));
    }
}

fn skip_space(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() {
        match bytes[i] {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'\\' if bytes.get(i + 1) == Some(&b'\n') => i += 2,
            _ => break,
        }
    }
    i
}

/// Index after a string literal's closing quote(s).
fn after_literal(s: &PyString, bytes: &[u8]) -> usize {
    let mut i = s.end;
    let q = bytes.get(i).copied();
    while i < bytes.len() && Some(bytes[i]) == q && i < s.end + 3 {
        i += 1;
    }
    i
}

/// The string literal (index, from `from` on) that starts at `at`: its
/// opening quote there, or after at most two prefix letters (`f`, `rb`).
fn literal_at(symbols: &PySymbols, bytes: &[u8], at: usize, from: usize) -> Option<usize> {
    let mut q = at;
    while q < bytes.len()
        && q < at + 2
        && matches!(bytes[q].to_ascii_lowercase(), b'r' | b'b' | b'f' | b'u')
    {
        q += 1;
    }
    if !matches!(bytes.get(q), Some(b'"' | b'\'')) {
        return None;
    }
    symbols.strings[from.min(symbols.strings.len())..]
        .iter()
        .position(|s| {
            let triple = s.start >= 3 && s.start - 3 == q;
            s.start == q + 1 || triple
        })
        .map(|p| p + from)
}

/// The template of the site at string `i`.
fn template(symbols: &PySymbols, bytes: &[u8], i: usize) -> Vec<Piece> {
    let mut pieces = literal_pieces(&symbols.strings[i], bytes);
    // Adjacent literals and `+` operands.
    let mut k = i;
    let mut pos = after_literal(&symbols.strings[k], bytes);
    loop {
        let at = skip_space(bytes, pos);
        let plus = bytes.get(at) == Some(&b'+') && bytes.get(at + 1) != Some(&b'=');
        let next = if plus { skip_space(bytes, at + 1) } else { at };
        match literal_at(symbols, bytes, next, k + 1) {
            Some(n) => {
                pieces.extend(literal_pieces(&symbols.strings[n], bytes));
                k = n;
                pos = after_literal(&symbols.strings[n], bytes);
            }
            _ if plus => {
                pieces.push(Piece::Wild);
                // The operand is an expression; later `+` terms are not followed.
                break;
            }
            _ => break,
        }
    }
    if let Some((var, def)) = assigned_variable(symbols, bytes, i) {
        pieces.extend(augmented(symbols, bytes, &var, def, pos));
    }
    pieces.truncate(MAX_PIECES);
    pieces
}

/// `v = <site>` or `v: T = <site>` on the site's line: the variable and the
/// enclosing def.
fn assigned_variable<'a>(
    symbols: &'a PySymbols,
    bytes: &[u8],
    i: usize,
) -> Option<(Vec<u8>, &'a PyDef)> {
    let s = &symbols.strings[i];
    let line_start = bytes[..s.start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let head = &bytes[line_start..s.start.saturating_sub(1)];
    let head: Vec<u8> = head
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    let head = head.strip_suffix(b"f").unwrap_or(&head);
    let head = head
        .strip_suffix(b"rf")
        .or_else(|| head.strip_suffix(b"fr"))
        .unwrap_or(head);
    let var = head.strip_suffix(b"=")?;
    let var = match var.iter().position(|&b| b == b':') {
        Some(p) => &var[..p],
        None => var,
    };
    if var.is_empty()
        || !var
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
    {
        return None;
    }
    let def = symbols.enclosing_def(s.line)?;
    Some((var.to_vec(), def))
}

/// The `var += …` statements after `from` inside `def`: a literal adds its
/// pieces, anything else a wildcard; optional when nested deeper than the
/// function body.
fn augmented(
    symbols: &PySymbols,
    bytes: &[u8],
    var: &[u8],
    def: &PyDef,
    from: usize,
) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut body_indent: Option<usize> = None;
    let mut optional = 0usize;
    let mut line_no = 1 + bytes[..from].iter().filter(|&&b| b == b'\n').count();
    let mut pos = bytes[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |p| from + p + 1);
    // The body indent is the least indent of the def's code lines.
    let def_start = line_start(bytes, def.line);
    for line in bytes[def_start..]
        .split(|&b| b == b'\n')
        .skip(1)
        .take(def.end_line.saturating_sub(def.line))
    {
        let indent = line
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        let rest = &line[indent..];
        if !rest.is_empty() && rest[0] != b'#' {
            body_indent = Some(body_indent.map_or(indent, |b: usize| b.min(indent)));
        }
    }
    while pos < bytes.len() && line_no < def.end_line {
        let end = bytes[pos..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |p| pos + p);
        let line = &bytes[pos..end];
        let indent = line
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        let rest = &line[indent..];
        if let Some(after) = rest.strip_prefix(var) {
            let after_trim = after
                .iter()
                .position(|&b| b != b' ')
                .map_or(&after[after.len()..], |p| &after[p..]);
            if let Some(rhs) = after_trim.strip_prefix(b"+=") {
                let rhs_at = pos + indent + var.len() + (after.len() - after_trim.len()) + 2;
                let rhs_at = skip_space(bytes, rhs_at);
                let mut pieces = match literal_at(symbols, bytes, rhs_at, 0) {
                    Some(n) if !is_conditional(rhs) => literal_pieces(&symbols.strings[n], bytes),
                    _ => vec![Piece::Wild],
                };
                let deeper = body_indent.is_some_and(|b| indent > b);
                if deeper && optional < MAX_OPTIONAL {
                    optional += 1;
                    out.push(Piece::Opt(std::mem::take(&mut pieces)));
                } else if deeper {
                    out.push(Piece::Opt(vec![Piece::Wild]));
                } else {
                    out.append(&mut pieces);
                }
            }
        }
        pos = end + 1;
        line_no += 1;
    }
    out
}

fn is_conditional(rhs: &[u8]) -> bool {
    rhs.windows(4).any(|w| w == b" if ")
}

/// Every expansion of the optional pieces (each present or absent).
fn expansions(pieces: &[Piece]) -> Vec<Vec<&Piece>> {
    let mut out: Vec<Vec<&Piece>> = vec![Vec::new()];
    for p in pieces {
        match p {
            Piece::Opt(inner) => {
                let with: Vec<Vec<&Piece>> = out
                    .iter()
                    .map(|v| {
                        let mut v = v.clone();
                        v.extend(inner.iter());
                        v
                    })
                    .collect();
                out.extend(with);
            }
            other => {
                for v in &mut out {
                    v.push(other);
                }
            }
        }
    }
    out
}

fn wild_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

/// The most literal characters with which the template matches all of
/// `name` (or `name` without a trailing `_<digits>` runtime id).
fn match_name(pieces: &[Piece], name: &[u8]) -> Option<usize> {
    let mut best: Option<usize> = None;
    let mut targets = vec![name];
    if let Some(p) = name.iter().rposition(|&b| b == b'_')
        && p + 1 < name.len()
        && name[p + 1..].iter().all(u8::is_ascii_digit)
    {
        targets.push(&name[..p]);
    }
    for seq in expansions(pieces) {
        for t in &targets {
            if let Some(n) = match_seq(&seq, t) {
                best = Some(best.map_or(n, |b| b.max(n)));
            }
        }
    }
    best
}

/// Dynamic programming over (piece, position): the most literal characters.
fn match_seq(seq: &[&Piece], name: &[u8]) -> Option<usize> {
    let n = name.len();
    let mut dp: Vec<Option<usize>> = vec![None; n + 1];
    dp[0] = Some(0);
    for p in seq {
        let mut next: Vec<Option<usize>> = vec![None; n + 1];
        match p {
            Piece::Lit(lit) => {
                for j in 0..=n {
                    if let Some(v) = dp[j]
                        && name[j..].starts_with(lit)
                    {
                        let k = j + lit.len();
                        next[k] = Some(next[k].map_or(v + lit.len(), |x| x.max(v + lit.len())));
                    }
                }
            }
            Piece::Wild => {
                let mut run: Option<usize> = None;
                for j in 0..=n {
                    run = match (run, dp[j]) {
                        (Some(r), Some(v)) => Some(r.max(v)),
                        (r, v) => r.or(v),
                    };
                    next[j] = run;
                    if j < n && !wild_byte(name[j]) {
                        run = None;
                    }
                }
            }
            Piece::Opt(_) => return None,
        }
        dp = next;
    }
    dp[n]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::python::scan_python;

    fn site(src: &str, kw: &str, name: &str) -> Option<usize> {
        let s = scan_python(src);
        best_site(&s, src.as_bytes(), kw, name).map(|c| c.literal_chars)
    }

    #[test]
    fn an_fstring_template_must_match_the_whole_name() {
        let src = "def f(a):\n    n = f\"kern_fwd_{a}_x\"\n";
        assert_eq!(site(src, "kern_fwd", "kern_fwd_bf16_x"), Some(11));
        assert_eq!(site(src, "kern_fwd", "kern_fwd_bf16_y"), None);
        // A runtime id after the template is allowed.
        assert_eq!(site(src, "kern_fwd", "kern_fwd_bf16_x_12"), Some(11));
    }

    #[test]
    fn an_error_message_that_starts_with_the_keyword_is_no_site() {
        let src = "def f(a):\n    raise ValueError(f\"kern_fwd failed for {a}\")\n";
        assert_eq!(site(src, "kern_fwd", "kern_fwd_bf16"), None);
    }

    #[test]
    fn augmented_assignments_follow_and_nested_ones_are_optional() {
        let src = "def f(a, b, c):\n    n = f\"kern_{a}\"\n    n += \"_fwd\"\n    if b:\n        n += f\"_b{b}\"\n    n += \"_end\"\n    return n\n";
        assert_eq!(site(src, "kern_", "kern_bf16_fwd_end"), Some(13));
        assert_eq!(site(src, "kern_", "kern_bf16_fwd_b4_end"), Some(15));
        assert_eq!(site(src, "kern_", "kern_bf16_end"), None);
    }

    #[test]
    fn adjacent_and_added_literals_are_joined() {
        let src = "def f(a):\n    n = (\"kern_\" \"fwd_\"\n         + a + \"_x\")\n";
        assert_eq!(site(src, "kern_", "kern_fwd_anything"), Some(9));
    }

    #[test]
    fn percent_and_format_templates_have_wildcards() {
        let src = "N = \"kern_%s_%d\" % (a, b)\nM = \"kern2_{}_x\".format(a)\n";
        assert_eq!(site(src, "kern_", "kern_ab_3"), Some(6));
        assert_eq!(site(src, "kern2_", "kern2_q_x"), Some(8));
    }
}
