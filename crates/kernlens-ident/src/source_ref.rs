//! Source references as traces and reports write them (ident.md "Source references"):
//! `path(line): function`, `path#Lline`, `path:line` or a bare path.

use serde::Serialize;

use crate::vocab::{EXTRA_REFERENCE_EXTENSIONS, SOURCE_EXTENSIONS, SOURCE_PLACEHOLDERS};

/// A parsed source reference.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceRef {
    /// The path as written (trimmed).
    pub path: String,
    /// The line, when the reference names one.
    pub line: Option<u32>,
    /// The function, when the reference names one.
    pub function: Option<String>,
}

impl SourceRef {
    /// A reference to `path` with no line or function.
    pub fn new(path: impl Into<String>) -> Self {
        SourceRef {
            path: path.into(),
            line: None,
            function: None,
        }
    }

    /// The same reference with `line`.
    pub fn with_line(mut self, line: u32) -> Self {
        self.line = Some(line);
        self
    }

    /// The same reference with `function`.
    pub fn with_function(mut self, function: impl Into<String>) -> Self {
        self.function = Some(function.into());
        self
    }
}

/// Why a value is not a usable source reference. This is the crate's error
/// type: nothing else in it can fail.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefRejection {
    /// Nothing but whitespace.
    #[error("no source reference: the value is empty")]
    Empty,
    /// A placeholder such as `n/a`, `—` or `not found`.
    #[error("no source reference: '{0}' is a placeholder")]
    Placeholder(String),
    /// The last path component has no source extension (`AITER (vendor)`).
    #[error(
        "no source reference: '{0}' does not name a source file (no .cu/.cpp/.py/... extension)"
    )]
    NotPathShaped(String),
}

/// Whether `value` is one of the placeholders that stand for "no source"
/// (`-`, `—`, `n/a`, `not found`, `unknown`, …), in any case and with any
/// inner spacing.
///
/// ```
/// assert!(kernlens_ident::is_placeholder("  Not   Found "));
/// assert!(!kernlens_ident::is_placeholder("kernel.py"));
/// ```
pub fn is_placeholder(value: &str) -> bool {
    let normalised = value
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    SOURCE_PLACEHOLDERS.contains(&normalised.as_str())
}

/// Whether the last component of `path` (with `\` read as `/`) carries a
/// source extension that ends at a word boundary.
///
/// ```
/// assert!(kernlens_ident::is_path_shaped(r"C:\src\k.cu"));
/// assert!(!kernlens_ident::is_path_shaped("Triton (vendor)"));
/// ```
pub fn is_path_shaped(path: &str) -> bool {
    let last = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let lower = last.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    SOURCE_EXTENSIONS
        .iter()
        .chain(EXTRA_REFERENCE_EXTENSIONS)
        .any(|ext| {
            lower.match_indices(ext).any(|(at, _)| {
                let end = at + ext.len();
                !bytes
                    .get(end)
                    .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_')
            })
        })
}

/// Parses a source reference.
///
/// ```
/// let r = kernlens_ident::parse_source_ref("aiter/rmsnorm.py(42): rms_norm").unwrap();
/// assert_eq!((r.path.as_str(), r.line, r.function.as_deref()),
///            ("aiter/rmsnorm.py", Some(42), Some("rms_norm")));
/// ```
pub fn parse_source_ref(value: &str) -> Result<SourceRef, RefRejection> {
    let value = value.trim();
    if value.is_empty() {
        return Err(RefRejection::Empty);
    }
    if is_placeholder(value) {
        return Err(RefRejection::Placeholder(value.to_owned()));
    }
    let parsed = split_call_form(value)
        .or_else(|| split_line_suffix(value, "#L"))
        .or_else(|| split_line_suffix(value, ":"))
        .unwrap_or_else(|| SourceRef::new(value));
    if !is_path_shaped(&parsed.path) {
        return Err(RefRejection::NotPathShaped(value.to_owned()));
    }
    Ok(parsed)
}

/// `path(line)` optionally followed by `: function`.
fn split_call_form(value: &str) -> Option<SourceRef> {
    for (open, _) in value.match_indices('(') {
        let after = &value[open + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || !after[digits..].starts_with(')') {
            continue;
        }
        let tail = after[digits + 1..].trim_start();
        let function = if tail.is_empty() {
            None
        } else if let Some(function) = tail.strip_prefix(':') {
            Some(function.trim()).filter(|f| !f.is_empty())
        } else {
            continue;
        };
        let path = value[..open].trim_end();
        if path.is_empty() {
            continue;
        }
        return Some(SourceRef {
            path: path.to_owned(),
            line: after[..digits].parse().ok(),
            function: function.map(str::to_owned),
        });
    }
    None
}

/// `path<marker><digits>` at the end of the value.
fn split_line_suffix(value: &str, marker: &str) -> Option<SourceRef> {
    let (path, digits) = value.rsplit_once(marker)?;
    if path.trim().is_empty() || digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(SourceRef {
        path: path.trim_end().to_owned(),
        line: digits.parse().ok(),
        function: None,
    })
}
