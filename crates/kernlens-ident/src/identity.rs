//! Operator identities (ident.md "Choosing the track", ident.md "Operator identity"): which track a kernel's key uses, the
//! canonical source path, and the stable JSON key that task groups share.

use std::fmt::Write as _;
use std::io;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::clean::{clean, is_mangled_shape};
use crate::key::{native_key, python_key};
use crate::source_ref::is_placeholder;
use crate::vocab::NATIVE_EXTENSIONS;

/// Version of the identity record; a change to the key bumps it.
pub const OPERATOR_IDENTITY_VERSION: u32 = 1;

/// Which of the two keys an identity uses.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyTrack {
    /// C/C++/CUDA/HIP sources: the native (demangled) key.
    Native,
    /// Python, Triton and everything else: the python key.
    Py,
}

impl KeyTrack {
    /// The label used in identity keys: `native` or `py`.
    pub fn as_str(self) -> &'static str {
        match self {
            KeyTrack::Native => "native",
            KeyTrack::Py => "py",
        }
    }
}

/// The track of a kernel: by the source file's extension when there is a
/// usable source path, else by the name's shape (mangled or `::` → native).
///
/// ```
/// use kernlens_ident::{KeyTrack, track_for};
/// assert_eq!(track_for(Some("csrc/k.CU"), "k"), KeyTrack::Native);
/// assert_eq!(track_for(Some("model.py"), "aiter::x"), KeyTrack::Py);
/// assert_eq!(track_for(None, "_Z3fooPf"), KeyTrack::Native);
/// assert_eq!(track_for(None, "_fused_scale_bias_kernel"), KeyTrack::Py);
/// ```
pub fn track_for(source_path: Option<&str>, name: &str) -> KeyTrack {
    match source_path.map(str::trim) {
        Some(path) if !path.is_empty() && !is_placeholder(path) => {
            let last = path.rsplit(['/', '\\']).next().unwrap_or(path);
            let native = last.rfind('.').is_some_and(|dot| {
                let ext = &last[dot..];
                NATIVE_EXTENSIONS
                    .iter()
                    .any(|native| native.eq_ignore_ascii_case(ext))
            });
            if native {
                KeyTrack::Native
            } else {
                KeyTrack::Py
            }
        }
        _ => {
            let cleaned = clean(name).text;
            if is_mangled_shape(cleaned) || cleaned.contains("::") {
                KeyTrack::Native
            } else {
                KeyTrack::Py
            }
        }
    }
}

/// Where relative paths and `~` resolve. The crate reads no environment: the
/// caller passes the home directory (the CLI passes `$HOME`).
#[non_exhaustive]
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathContext {
    /// Directory relative paths are joined to; the process working directory
    /// when absent.
    pub base_dir: Option<PathBuf>,
    /// What a leading `~` expands to; `~` stays literal when absent.
    pub home_dir: Option<PathBuf>,
}

impl PathContext {
    /// Relative paths against the working directory, `~` unexpanded.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same context with `base_dir`.
    pub fn with_base_dir(mut self, base_dir: impl Into<PathBuf>) -> Self {
        self.base_dir = Some(base_dir.into());
        self
    }

    /// The same context with `home_dir`.
    pub fn with_home_dir(mut self, home_dir: impl Into<PathBuf>) -> Self {
        self.home_dir = Some(home_dir.into());
        self
    }
}

/// The canonical form of a source path (ident.md "Operator identity: Canonical path"): absolute, the longest existing
/// prefix resolved through symlinks, the rest normalised lexically. Any I/O
/// error falls back to the lexical absolute path. Empty stays empty.
///
/// ```
/// use kernlens_ident::{PathContext, canonical_source_path};
/// let ctx = PathContext::new().with_base_dir("/nonexistent-kernlens/repo");
/// assert_eq!(canonical_source_path("csrc/sub/../k.cu", &ctx), "/nonexistent-kernlens/repo/csrc/k.cu");
/// ```
pub fn canonical_source_path(raw: &str, context: &PathContext) -> String {
    let raw = raw.trim();
    if raw.is_empty() {
        return String::new();
    }
    let expanded: PathBuf = match (raw.strip_prefix('~'), &context.home_dir) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(raw),
    };
    let absolute = if expanded.is_absolute() {
        expanded
    } else {
        match &context.base_dir {
            Some(base) => base.join(expanded),
            None => match std::env::current_dir() {
                Ok(cwd) => cwd.join(expanded),
                Err(_) => expanded,
            },
        }
    };
    let resolved = resolve_existing_prefix(&absolute).unwrap_or_else(|_| lexical(&absolute));
    resolved.to_string_lossy().into_owned()
}

/// Resolves the longest existing prefix of `path` and appends the rest
/// lexically; an error other than "does not exist" is returned.
fn resolve_existing_prefix(path: &Path) -> io::Result<PathBuf> {
    let components: Vec<Component<'_>> = path.components().collect();
    for split in (1..=components.len()).rev() {
        let prefix: PathBuf = components[..split].iter().collect();
        match std::fs::canonicalize(&prefix) {
            Ok(resolved) => {
                let mut joined = resolved;
                joined.extend(&components[split..]);
                return Ok(lexical(&joined));
            }
            Err(err) if missing(&err) => continue,
            Err(err) => return Err(err),
        }
    }
    Ok(lexical(path))
}

fn missing(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// Removes `.` and applies `..` without touching the file system.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(component);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// The identity of one operator: the unit task groups are keyed by.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct OperatorIdentity {
    /// [`OPERATOR_IDENTITY_VERSION`].
    pub version: u32,
    /// The track (not locate's source kind).
    pub source_kind: KeyTrack,
    /// The canonical source path.
    pub source_path: String,
    /// The operation's key on the track.
    pub operation: String,
    /// The launching function; `None` when empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
}

impl OperatorIdentity {
    /// Builds the identity of `raw_operation` (a kernel name) defined in or
    /// launched from `raw_path` by `raw_function`. The definition line is
    /// never part of it, so moving a `def` keeps the key.
    ///
    /// ```
    /// use kernlens_ident::{KeyTrack, OperatorIdentity, PathContext};
    /// let id = OperatorIdentity::build(KeyTrack::Native, "/repo/operator.cu",
    ///     "aiter::fused_operator<float>", "fused_operator", &PathContext::new());
    /// assert_eq!(id.key(), r#"{"function":"fused_operator","operation":"aiter::fused_operator","source_kind":"native","source_path":"/repo/operator.cu","version":1}"#);
    /// ```
    pub fn build(
        track: KeyTrack,
        raw_path: &str,
        raw_operation: &str,
        raw_function: &str,
        paths: &PathContext,
    ) -> Self {
        let (operation, function) = match track {
            KeyTrack::Native => (native_key(raw_operation), native_key(raw_function)),
            KeyTrack::Py => (python_key(raw_operation), raw_function.trim().to_owned()),
        };
        Self::from_keys(
            track,
            canonical_source_path(raw_path, paths),
            operation,
            function,
        )
    }

    /// The identity from parts that are already keyed and canonical.
    pub(crate) fn from_keys(
        track: KeyTrack,
        source_path: String,
        operation: String,
        function: String,
    ) -> Self {
        OperatorIdentity {
            version: OPERATOR_IDENTITY_VERSION,
            source_kind: track,
            source_path,
            operation,
            function: Some(function).filter(|f| !f.is_empty()),
        }
    }

    /// The stable key: compact JSON with members in byte-wise sorted order,
    /// byte-identical to `serde_json` output of a sorted map.
    pub fn key(&self) -> String {
        let mut out = String::with_capacity(96 + self.source_path.len() + self.operation.len());
        out.push('{');
        if let Some(function) = &self.function {
            out.push_str("\"function\":");
            push_json_string(&mut out, function);
            out.push(',');
        }
        out.push_str("\"operation\":");
        push_json_string(&mut out, &self.operation);
        out.push_str(",\"source_kind\":");
        push_json_string(&mut out, self.source_kind.as_str());
        out.push_str(",\"source_path\":");
        push_json_string(&mut out, &self.source_path);
        let _ = write!(out, ",\"version\":{}}}", self.version);
        out
    }
}

fn push_json_string(out: &mut String, value: &str) {
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}
