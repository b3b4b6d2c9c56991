//! Escaping for text and attribute values of HTML and SVG (both parsed as XML too).

/// `s` with `&`, `<`, `>`, `"` and `'` replaced by entities, and control characters
/// other than tab and newline dropped (XML 1.0 cannot carry them).
pub(crate) fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_characters_become_entities() {
        assert_eq!(
            text("a<b>&\"c\"'\u{1}"),
            "a&lt;b&gt;&amp;&quot;c&quot;&#39;"
        );
    }
}
