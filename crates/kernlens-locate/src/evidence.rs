//! What a hit proves (§7, §8.2 pass 3): the cached facts of one hit file for
//! one keyword, composing literals and spelled-out characters.

use memchr::memmem;

use crate::definition::{Classified, FileAnalysis, classify_hits};
use crate::locator::Locator;
use crate::rank::Ranked;
use crate::result::{Confidence, Method};

/// A prefix match must spell out at least this many characters.
pub(crate) const MIN_PREFIX_CHARS: usize = 6;

/// What ranking needs from one hit file for one keyword (and, in the prefix
/// pass, one base name); cached so a repeated call reads no file.
#[derive(Debug, Clone)]
pub(crate) struct Facts {
    pub(crate) class: Classified,
    pub(crate) composing_line: Option<usize>,
    pub(crate) prefix_chars: Option<usize>,
    pub(crate) prefix_line: Option<usize>,
    pub(crate) prefix_function: Option<String>,
}

impl Locator {
    /// The cached facts of one hit file for `kw` (and the prefix pass's base).
    pub(crate) fn facts(
        &mut self,
        id: u32,
        kw: &str,
        first_offset: Option<usize>,
        prefix_base: Option<&str>,
    ) -> Option<Facts> {
        let key = (id, kw.to_owned(), prefix_base.map(str::to_owned));
        if let Some(f) = self.cache.facts.get(&key) {
            return Some(f.clone());
        }
        let bytes = self.bytes_of(id)?;
        let analysis = self.analysis_of(id, &bytes)?;
        let class = classify_hits(&analysis, &bytes, kw, first_offset);
        let mut facts = Facts {
            class,
            composing_line: None,
            prefix_chars: None,
            prefix_line: None,
            prefix_function: None,
        };
        if let Some(base) = prefix_base {
            facts.composing_line = composing_literal(&analysis, &bytes, kw);
            let k = prefix_chars(&bytes, base);
            facts.prefix_chars = Some(k);
            facts.prefix_line = facts.composing_line.or_else(|| {
                memmem::find(&bytes, &base.as_bytes()[..k.min(base.len())])
                    .map(|o| analysis.line_of(o))
            });
            facts.prefix_function = facts.prefix_line.and_then(|l| analysis.function_at(l));
        }
        self.cache.facts.insert(key, facts.clone());
        Some(facts)
    }
}

/// The first string literal that starts with `kw` and composes a name: an
/// f-string, a template with `{` or `%`, or one followed by `.format(`, `%` or `+`.
pub(crate) fn composing_literal(analysis: &FileAnalysis, bytes: &[u8], kw: &str) -> Option<usize> {
    let symbols = analysis.python()?;
    symbols
        .strings
        .iter()
        .find(|s| {
            let text = bytes.get(s.start..s.end).unwrap_or_default();
            text.starts_with(kw.as_bytes())
                && (s.fstring || s.filled_after || memchr::memchr2(b'{', b'%', text).is_some())
        })
        .map(|s| s.line)
}

/// The largest `k ≥ 6` such that the first `k` bytes of `base` occur in the
/// file (0 when not even 6 do). Occurrence is monotonic in `k`.
pub(crate) fn prefix_chars(bytes: &[u8], base: &str) -> usize {
    let b = base.as_bytes();
    let occurs = |k: usize| memmem::find(bytes, &b[..k]).is_some();
    if b.len() < MIN_PREFIX_CHARS || !occurs(MIN_PREFIX_CHARS) {
        return 0;
    }
    let (mut lo, mut hi) = (MIN_PREFIX_CHARS, b.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if occurs(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// What the best file of a pass proves, or `None` when it only mentions the
/// name. A prefix keyword proves nothing by itself: only a composing site does.
pub(crate) fn proof_of(best: &Ranked, method: Method) -> Option<Confidence> {
    match method {
        Method::Prefix => (best.score.composing == Some(true)
            && best.score.prefix_chars.unwrap_or(0) >= MIN_PREFIX_CHARS)
            .then_some(Confidence::Composed),
        _ => (best.class.kind.strength() > 0).then_some(Confidence::Definition),
    }
}
