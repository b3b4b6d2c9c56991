//! What a hit proves (locate.md "What a hit proves", locate.md "Ranking and the pass driver: Passes and confidence"; issue rules 2a–2c): the cached facts of one
//! hit file for one keyword of one name, and the confidence they give.

use memchr::memmem;

use crate::cache::FileHit;
use crate::compose::{Composed, best_site};
use crate::cxx::{is_ident_byte, whole_word_at};
use crate::definition::{Classified, HitKind, Query, classify_hits};
use crate::locator::Locator;
use crate::python::PySymbols;
use crate::rank::Ranked;
use crate::result::{Confidence, Method};
use crate::triton_repr::repr_match;

/// A composed template must spell out at least this many characters.
pub(crate) const MIN_PREFIX_CHARS: usize = 6;

/// What ranking needs from one hit file for one keyword (and, in the prefix
/// pass, one launched name); cached so a repeated call reads no file.
#[derive(Debug, Clone)]
pub(crate) struct Facts {
    pub(crate) class: Classified,
    /// Prefix pass: the composing site whose template matches the whole name.
    pub(crate) composed: Option<Composed>,
    pub(crate) function_at_site: Option<String>,
}

/// The part of a name that decides what its facts are, as a cache key.
pub(crate) fn query_key(query: Query<'_>, composed: Option<&str>) -> String {
    format!(
        "{:?}|{}|{:?}|{}",
        query.shape,
        query.qualifiers.map_or("?".to_owned(), |q| q.join("::")),
        query.template_instance,
        composed.unwrap_or("")
    )
}

impl Locator {
    /// The cached facts of one hit file for `kw`; `None` when the file is no
    /// evidence (the keyword only occurs inside other identifiers, comments
    /// or docstrings). `composed_name` is the launched name in the prefix pass.
    pub(crate) fn facts(
        &mut self,
        hit: &FileHit,
        kw: &str,
        query: Query<'_>,
        composed_name: Option<&str>,
    ) -> Option<Facts> {
        let id = hit.file;
        let key = (id, kw.to_owned(), query_key(query, composed_name));
        if let Some(f) = self.cache.facts.get(&key) {
            return f.clone();
        }
        if !hit.evidence {
            // The keyword only inside longer identifiers: answered without
            // reading the file.
            self.cache.facts.insert(key, None);
            return None;
        }
        let bytes = self.bytes_of(id)?;
        let analysis = self.analysis_of(id, &bytes)?;
        let class = classify_hits(&analysis, &bytes, kw, query);
        let composed = composed_name.and_then(|name| {
            let symbols = analysis.python()?;
            let site = best_site(symbols, &bytes, kw, name);
            let repr = repr_site(symbols, &bytes, kw, name);
            match (site, repr) {
                (Some(s), Some(r)) => Some(if r.literal_chars >= s.literal_chars {
                    r
                } else {
                    s
                }),
                (s, r) => s.or(r),
            }
        });
        let facts = match (class, composed) {
            (_, Some(c)) => Some(Facts {
                class: Classified {
                    kind: if c.by_repr {
                        HitKind::TritonJit
                    } else {
                        HitKind::Mention
                    },
                    line: c.line,
                    function: analysis.function_at(c.line),
                    exact: true,
                    trampoline: None,
                    deferred: None,
                },
                composed: Some(c),
                function_at_site: analysis.function_at(c.line),
            }),
            (Some(class), None) => Some(Facts {
                class,
                composed: None,
                function_at_site: None,
            }),
            (None, None) => None,
        };
        self.cache.facts.insert(key, facts.clone());
        facts
    }
}

/// Whether a file can be evidence for keyword `kw` at all, judged in the
/// scan from the keyword's occurrences alone: `count` of them, the first at
/// `offsets` (the rest are found again when there are more).
///
/// Everything [`Locator::facts`] and the rules after it look for needs one
/// of two: a definition, a mention, a class, a `#define` or a renaming
/// literal spells `kw` or `_kw` as a whole identifier (rule 2a), and a
/// composing site or an embedded kernel source is a string literal whose
/// text starts with `kw`, a quote right before it (rules 2c, 2i). A file
/// with neither is no evidence whatever its analysis would say, so it is
/// neither kept in memory nor analysed; in framework trees most hit files
/// hold a keyword only inside longer identifiers.
pub(crate) fn may_be_evidence(bytes: &[u8], kw: &[u8], count: u32, offsets: &[u32]) -> bool {
    let underscored = kw.first() != Some(&b'_');
    let counts = |o: usize| {
        if whole_word_at(bytes, kw, o) {
            return true;
        }
        match o.checked_sub(1).map(|b| bytes[b]) {
            Some(b'"' | b'\'') => true,
            // `_kw` as a whole identifier: what `whole_word_at` says of it.
            Some(b'_') if underscored => {
                let before_ok = o < 2 || !is_ident_byte(bytes[o - 2]);
                let end = o + kw.len();
                let after_ok = end >= bytes.len()
                    || !is_ident_byte(bytes[end])
                    || !kw.last().is_some_and(|&b| is_ident_byte(b));
                before_ok && after_ok
            }
            _ => false,
        }
    };
    if offsets.iter().any(|&o| counts(o as usize)) {
        return true;
    }
    let Some(&last) = offsets.last() else {
        return false;
    };
    count as usize > offsets.len()
        && memmem::find_iter(&bytes[last as usize + 1..], kw).any(|o| counts(last as usize + 1 + o))
}

/// What the best file of a pass proves, or `None` when it only mentions the
/// name. A prefix keyword proves nothing by itself: only a composing site
/// whose template matches the whole name does.
pub(crate) fn proof_of(best: &Ranked, method: Method) -> Option<Confidence> {
    match method {
        Method::Prefix => best
            .composed
            .filter(|c| c.literal_chars >= MIN_PREFIX_CHARS)
            .map(|c| {
                if c.by_repr {
                    Confidence::Definition
                } else {
                    Confidence::Composed
                }
            }),
        _ => (best.class.kind.strength() > 0).then_some(Confidence::Definition),
    }
}

/// Rule 2e: the Triton def (spelled `kw` or `_kw`) whose `repr=` composes
/// the whole launched name, as a composing site at the def's line.
fn repr_site(symbols: &PySymbols, bytes: &[u8], kw: &str, name: &str) -> Option<Composed> {
    let underscored = format!("_{kw}");
    symbols
        .defs
        .iter()
        .filter(|d| d.triton && (d.name == kw || d.name == underscored))
        .filter_map(|d| {
            repr_match(symbols, bytes, d, name, None).map(|chars| Composed {
                line: d.line,
                literal_chars: chars,
                by_repr: true,
            })
        })
        .max_by_key(|c| c.literal_chars)
}

#[cfg(test)]
mod tests {
    use super::may_be_evidence;

    /// Every occurrence of `kw` in `text`, the scan's way: the first 16 kept.
    fn judged(text: &str, kw: &str) -> bool {
        let all: Vec<u32> = memchr::memmem::find_iter(text.as_bytes(), kw.as_bytes())
            .map(|o| o as u32)
            .collect();
        let kept = &all[..all.len().min(crate::scan::MAX_OFFSETS)];
        may_be_evidence(text.as_bytes(), kw.as_bytes(), all.len() as u32, kept)
    }

    #[test]
    fn only_inside_longer_identifiers_is_no_evidence() {
        assert!(!judged("x = scaled_foo_fwd(1)\nfoo_fwd_2 = 3\n", "foo_fwd"));
        // `x_foo` is not `_foo`: the `_` belongs to a longer identifier.
        assert!(!judged("x_foo_fwd()\n", "foo_fwd"));
    }

    #[test]
    fn a_whole_identifier_an_underscored_one_or_a_literal_start_may_be() {
        assert!(judged("def foo_fwd(x):\n", "foo_fwd"));
        assert!(judged("def _foo_fwd(x):\n", "foo_fwd"));
        assert!(judged("name = f\"foo_fwd_{n}\"\n", "foo_fwd"));
        assert!(judged("k[grid](x, NAME='foo_fwd')\n", "foo_fwd"));
    }

    #[test]
    fn occurrences_past_the_kept_offsets_are_searched_again() {
        let mut text = "scaled_foo_fwd()\n".repeat(20);
        assert!(!judged(&text, "foo_fwd"));
        text.push_str("foo_fwd()\n");
        assert!(judged(&text, "foo_fwd"));
    }
}
