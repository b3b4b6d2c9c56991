//! The explainable result record (locate.md "Result record").

use std::path::PathBuf;

use serde::Serialize;

use crate::keywords::Refusal;
use crate::kind::SourceKind;

/// How the answer was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Method {
    /// A primary keyword's best file defines it.
    Definition,
    /// The best file only mentions the name: not found (`mention_only`).
    Mention,
    /// Found through a sub-window keyword.
    Subwindow,
    /// Found through a leading-prefix keyword (f-string-built names).
    Prefix,
    /// The winning file is also the trace's launcher file.
    TracePythonStack,
    /// Not found.
    NotFound,
}

/// Why a name has no answer ([`LocateResult::reason`]). Serialises as its
/// [`as_str`](NotFound::as_str) code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NotFound {
    /// The name is not searched at all (a launch API, a memcpy row, no keyword).
    Refused(Refusal),
    /// Files mention the name but none defines it; the best is kept as a candidate.
    MentionOnly,
    /// The trace names a launcher frame, but no definition confirms it.
    LauncherUnconfirmed,
    /// The only definition is a generic trampoline whose bound class is not in the tree.
    TrampolineUnbound,
    /// A kernel shipped in a vendor library (kind `vendor_binary`): its source is in no tree,
    /// whatever mentions or launched it. Set by [`NotFound::settle`], never by a pass.
    VendorBinary,
}

impl NotFound {
    /// The stable reason code (`runtime_api_name`, `mention_only`, …).
    pub const fn as_str(self) -> &'static str {
        match self {
            NotFound::Refused(refusal) => refusal.as_str(),
            NotFound::MentionOnly => "mention_only",
            NotFound::LauncherUnconfirmed => "launcher_unconfirmed",
            NotFound::TrampolineUnbound => "trampoline_unbound",
            NotFound::VendorBinary => "vendor_binary",
        }
    }

    /// The one rule for a not-found name's reason, shared by locate's document and triage
    /// (locate.md "Result record"): a refusal stays; a vendor-library kernel says
    /// [`VendorBinary`](NotFound::VendorBinary) over whatever the passes met (a mention, a
    /// launcher frame, a trampoline); otherwise the passes' reason (`None`: nothing hit).
    pub fn settle(reason: Option<NotFound>, kind: SourceKind) -> Option<NotFound> {
        match (reason, kind) {
            (Some(reason), _) if reason.is_refusal() => Some(reason),
            (_, SourceKind::VendorBinary) => Some(NotFound::VendorBinary),
            (reason, _) => reason,
        }
    }

    /// True when locate refused to search the name at all.
    pub fn is_refusal(self) -> bool {
        matches!(self, NotFound::Refused(_))
    }
}

impl std::fmt::Display for NotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for NotFound {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// The `reason` code of a result whose best file only mentions the name.
pub const MENTION_ONLY: &str = NotFound::MentionOnly.as_str();

/// What the answer rests on (locate.md "Result record"). Only the first three make a
/// result `found`: a file that merely mentions a name does not prove it
/// holds the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Confidence {
    /// A definition of the spelling (kernel-strength or ordinary).
    Definition,
    /// A composing site whose template matches the whole launched name.
    Composed,
    /// The trace's launcher file, confirmed by a definition in that file.
    Launcher,
    /// Only mentions: the best file is kept as a candidate, not an answer.
    Mention,
    /// No evidence at all (refused, or no hit).
    None,
}

impl Confidence {
    /// True for the confidences that make a result `found`.
    pub fn proves(self) -> bool {
        matches!(
            self,
            Confidence::Definition | Confidence::Composed | Confidence::Launcher
        )
    }

    /// The stable label.
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Definition => "definition",
            Confidence::Composed => "composed",
            Confidence::Launcher => "launcher",
            Confidence::Mention => "mention",
            Confidence::None => "none",
        }
    }
}

/// The locate.md "Ranking and the pass driver: Sort key" sort components of one candidate (lower is better), plus the
/// prefix-pass scores.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Score {
    /// 0 kernel definition, 1 ordinary definition, 2 mention.
    pub definition: u8,
    /// 0 when the hit spells the keyword exactly, 1 for its `_`-prefixed form.
    pub spelling: u8,
    /// 1 for an inductor kernel module whose text differs from the source a
    /// compiled graph's wrapper embeds while another candidate's matches it
    /// (an autotune benchmark copy); 0 otherwise.
    pub embedded: u8,
    /// Characters of a CuTe-DSL symbol's module text that the file's module
    /// path (dots dropped) ends with (rule 2f; more is better, 0 for other
    /// names).
    pub module: usize,
    /// 0 when the file is the resolved launcher file.
    pub launcher: u8,
    /// 0 when the keyword occurs in the file stem.
    pub stem: u8,
    /// Sum of the path penalties and bonuses.
    pub path_kind: i32,
    /// 1 for `__init__.py`.
    pub reexport: u8,
    /// 0 `.cuh .cu .hip`, 1 `.cpp .cc .cxx .c`, 2 headers, 3 `.py`.
    pub extension: u8,
    /// `/` count of the path below its root.
    pub depth: usize,
    /// Index of the file's root.
    pub root: usize,
    /// Prefix pass: the file holds a composing site whose template matches
    /// the whole launched name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub composing: Option<bool>,
    /// Prefix pass: literal characters of the launched name that the
    /// matching template spells out (0 without one); the first sort key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix_chars: Option<usize>,
}

/// One competing file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Candidate {
    /// The file, as walked. JSON: `path` (lossy text) and, when the path is
    /// not valid UTF-8, `path_bytes` (its bytes in hex).
    #[serde(flatten, serialize_with = "crate::path_json::required_path_with_bytes")]
    pub path: PathBuf,
    /// The line of its best hit.
    pub line: Option<usize>,
    /// Its sort components.
    pub score: Score,
    /// Stable reason codes.
    pub why: Vec<String>,
}

/// Launcher evidence beside a result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LauncherReport {
    /// The frame path as the trace records it.
    pub path: String,
    /// The frame path resolved on this machine (locate.md "Launcher evidence from traces: Resolving the frame path"), or null.
    #[serde(serialize_with = "crate::path_json::lossy")]
    pub resolved_path: Option<PathBuf>,
    /// The frame's line.
    pub line: usize,
    /// The frame's function.
    pub function: String,
    /// Launches examined.
    pub launches: usize,
    /// Distinct frames across them.
    pub distinct_frames: usize,
    /// The winning file is the launcher file.
    pub corroborated: bool,
    /// 1-based rank of the launcher file among the candidates, or null.
    pub candidate_rank: Option<usize>,
}

/// The answer for one name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LocateResult {
    /// The name as given.
    pub name: String,
    /// Whether a file was found: true only when `confidence` proves it.
    pub found: bool,
    /// What the answer rests on.
    pub confidence: Confidence,
    /// The winning file. JSON: `path` (lossy text or null) and, when the
    /// path is not valid UTF-8, `path_bytes` (its bytes in hex).
    #[serde(flatten, serialize_with = "crate::path_json::path_with_bytes")]
    pub path: Option<PathBuf>,
    /// Its line.
    pub line: Option<usize>,
    /// The enclosing or defined function.
    pub function: Option<String>,
    /// The source kind.
    pub kind: SourceKind,
    /// How it was found.
    pub method: Method,
    /// The search method under `trace_python_stack`; else equal to `method`.
    pub grep_method: Method,
    /// The keyword that decided.
    pub keyword: Option<String>,
    /// Every keyword tried, in order.
    pub keywords_tried: Vec<String>,
    /// Why there is no answer (`None` when found, and when nothing hit): a refusal,
    /// `vendor_binary`, `mention_only`, `launcher_unconfirmed` or `trampoline_unbound`
    /// ([`NotFound::settle`]).
    pub reason: Option<NotFound>,
    /// The nearest ancestor of the path holding `.git`.
    #[serde(serialize_with = "crate::path_json::lossy")]
    pub repo_root: Option<PathBuf>,
    /// Up to 5 candidates, best first.
    pub candidates: Vec<Candidate>,
    /// Launcher evidence, when a trace gave one.
    pub launcher: Option<LauncherReport>,
}

impl LocateResult {
    /// This result with its not-found reason settled by [`NotFound::settle`]; a found result
    /// is unchanged (its reason is `None`).
    pub(crate) fn settled(mut self) -> LocateResult {
        if !self.found {
            self.reason = NotFound::settle(self.reason, self.kind);
        }
        self
    }
}
