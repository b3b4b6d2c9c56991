//! JSON for paths that are not valid UTF-8 (locate.md "Planning, scan and JSON paths: Paths that are not UTF-8"): such a path is
//! written lossily (`U+FFFD` for each bad sequence), so a document never fails
//! to serialise, and the answer's own paths carry their exact bytes beside it.
//!
//! Public so that documents embedding a locate answer's path (triage's task
//! groups) write it the same way: `#[serde(flatten, serialize_with =
//! "kernlens_locate::path_json::path_with_bytes")]` on an `Option<PathBuf>`.

use std::path::{Path, PathBuf};

use serde::Serializer;
use serde::ser::SerializeMap;

/// The key that carries a non-UTF-8 path's bytes, lowercase hex.
const BYTES_KEY: &str = "path_bytes";

/// The path's OS bytes in lowercase hex, or `None` when it is valid UTF-8
/// (the lossy text is then exact and nothing else is written).
fn hex_if_not_utf8(path: &Path) -> Option<String> {
    if path.to_str().is_some() {
        return None;
    }
    Some(
        path.as_os_str()
            .as_encoded_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    )
}

/// A flattened `path` field: `"path": <lossy text or null>`, then
/// `"path_bytes": "<hex>"` only when the path is not valid UTF-8.
pub fn path_with_bytes<S: Serializer>(path: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(None)?;
    map.serialize_entry("path", &path.as_deref().map(Path::to_string_lossy))?;
    if let Some(hex) = path.as_deref().and_then(hex_if_not_utf8) {
        map.serialize_entry(BYTES_KEY, &hex)?;
    }
    map.end()
}

/// [`path_with_bytes`] for a path that is always present.
pub(crate) fn required_path_with_bytes<S: Serializer>(
    path: &Path,
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(None)?;
    map.serialize_entry("path", &path.to_string_lossy())?;
    if let Some(hex) = hex_if_not_utf8(path) {
        map.serialize_entry(BYTES_KEY, &hex)?;
    }
    map.end()
}

/// An optional path written lossily (ancestors and resolved frames: the
/// answer's own `path_bytes` already holds the exact bytes).
pub(crate) fn lossy<S: Serializer>(path: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
    match path {
        Some(p) => s.serialize_str(&p.to_string_lossy()),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn only_non_utf8_paths_get_hex_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let bad = Path::new(std::ffi::OsStr::from_bytes(b"a/k\xff.py"));
        assert_eq!(hex_if_not_utf8(bad).as_deref(), Some("612f6bff2e7079"));
        assert_eq!(hex_if_not_utf8(Path::new("a/k\u{e9}.py")), None);
    }
}
