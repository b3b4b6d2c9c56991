//! One gitignore matcher (gix-ignore) for both lists, so a pattern means the same thing in the
//! copy filter and in the git exclude.

use gix::bstr::ByteSlice;
use gix_ignore::glob::pattern::Case;

/// A compiled list of gitignore patterns, matched against `/`-separated relative paths.
#[non_exhaustive]
pub struct PathFilter {
    search: gix_ignore::Search,
}

impl PathFilter {
    /// Compile `patterns` (gitignore syntax, one per entry).
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Self {
        let joined: Vec<u8> = patterns
            .iter()
            .flat_map(|p| p.as_ref().bytes().chain(std::iter::once(b'\n')))
            .collect();
        let mut search = gix_ignore::Search::default();
        // Reading from a buffer cannot fail; an empty filter is the safe fallback regardless.
        let _ = search.add_patterns_buffer(
            &joined,
            "<policy>",
            None,
            gix_ignore::search::Ignore::default(),
        );
        PathFilter { search }
    }

    /// True when `rel` (relative, `/`-separated, no leading `/`) is excluded by the last matching
    /// pattern. The caller prunes directories, so a file under an excluded directory is never asked.
    pub fn is_excluded(&self, rel: &[u8], is_dir: bool) -> bool {
        self.search
            .pattern_matching_relative_path(rel.as_bstr(), Some(is_dir), Case::Sensitive)
            .is_some_and(|m| !m.pattern.is_negative())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_patterns_match_directories_at_any_depth_only() {
        let f = PathFilter::new(&["jit/", "*.so"]);
        assert!(f.is_excluded(b"jit", true));
        assert!(f.is_excluded(b"aiter/jit", true));
        assert!(!f.is_excluded(b"aiter/jit", false));
        assert!(f.is_excluded(b"aiter/ops/x.so", false));
        assert!(!f.is_excluded(b"aiter/ops/x.so.py", false));
    }

    #[test]
    fn negation_reincludes() {
        let f = PathFilter::new(&["*.so", "!keep.so"]);
        assert!(f.is_excluded(b"a.so", false));
        assert!(!f.is_excluded(b"d/keep.so", false));
    }
}
