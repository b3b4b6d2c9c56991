//! What a triage found, and its `kernlens.triage/1` JSON document (cli.md).

use std::path::PathBuf;

use kernlens_gate::{GateReport, RewriteVerdict};
use kernlens_ident::Category;
use kernlens_locate::{
    Confidence, LocateResult, Method, NotFound, RootWarning, SearchRoot, SourceKind,
};
use kernlens_trace::{Analysis, SUMMARY_SCHEMA};
use serde::ser::{Serialize, SerializeStruct, Serializer};

/// Schema tag of the triage document.
pub const TRIAGE_SCHEMA: &str = "kernlens.triage/1";

/// The outcome of one triage.
#[derive(Debug)]
#[non_exhaustive]
pub struct TriageReport {
    /// The trace's summary, read once (whole trace, hot rows cut to `top_k`).
    pub analysis: Analysis,
    /// The gate's verdict with its inputs and thresholds.
    pub gate: GateReport,
    /// Hot kernel rows held back by a suppressing gate (0 when it passed or
    /// was not applied).
    pub suppressed: usize,
    /// Every hot kernel row, in task groups, largest first; empty when the
    /// gate suppressed.
    pub task_groups: Vec<TriageGroup>,
    /// The search roots, in order (empty without any).
    pub roots: Vec<SearchRoot>,
    /// Root entries dropped while resolving them.
    pub root_warnings: Vec<RootWarning>,
    /// Why no source was searched, when there was no search root at all
    /// (locate's `NoSearchRoots` message).
    pub sources_unavailable: Option<String>,
    /// Bad row numbers ident replaced while grouping.
    pub group_warnings: Vec<String>,
    /// Each group's change since a baseline trace (`triage --baseline`; diff.md,
    /// "Triage baseline"), set by [`crate::diff::triage_baseline`]'s caller.
    pub baseline: Option<crate::diff::TriageBaseline>,
}

/// One task group: the hot rows of one operator identity, or one row whose
/// source was not found.
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct TriageGroup {
    /// `tg001`, `tg002`, … in listed order.
    pub id: String,
    /// The primary (largest) row's kernel name.
    pub operation: String,
    /// The operator identity key; `None` for a row without a source.
    pub identity_key: Option<String>,
    /// Category of the primary kernel.
    pub category: Category,
    /// Σ GPU time of the rows, µs.
    pub total_us: f64,
    /// Σ launches.
    pub calls: u64,
    /// Σ of the rows' shares of all kernel time (0–1).
    pub share: f64,
    /// The rows' kernel names, largest first.
    pub kernels: Vec<String>,
    /// Where the primary kernel is defined, or why it was not found.
    pub source: GroupSource,
    /// The rewrite-route verdict, eligible or declined (gate.md "Rewrite-route eligibility policy").
    pub rewrite_route: RewriteVerdict,
    /// The primary kernel's whole locate answer (candidates, launcher
    /// evidence); not part of the JSON document.
    #[serde(skip)]
    pub locate: Option<LocateResult>,
}

/// The source fields of the primary kernel's locate result.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct GroupSource {
    /// Whether a file was found.
    pub found: bool,
    /// The defining file. JSON: `path` (lossy text or null) and, when the
    /// path is not valid UTF-8, `path_bytes` (its bytes in hex).
    #[serde(
        flatten,
        serialize_with = "kernlens_locate::path_json::path_with_bytes"
    )]
    pub path: Option<PathBuf>,
    /// Its line.
    pub line: Option<usize>,
    /// The function defined or enclosing.
    pub function: Option<String>,
    /// The source kind (locate.md "Source kind: Labels").
    pub kind: SourceKind,
    /// How it was found (`not_found` when it was not).
    pub method: Method,
    /// Why it was not found (`None` when found); see [`Unlocated`].
    pub reason: Option<Unlocated>,
    /// What the answer rests on (locate.md "Result record"); `found` only for
    /// `definition`, `composed` and `launcher`.
    pub confidence: Confidence,
}

/// Why a triage row has no source. Serialises as its
/// [`as_str`](Unlocated::as_str) code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Unlocated {
    /// Locate's answer: a refusal (`runtime_api_name`, `not_a_kernel`,
    /// `no_searchable_keyword`), `mention_only` (files mention the name but
    /// none defines it: the best is kept in the locate answer's candidates,
    /// never an answer), `launcher_unconfirmed` (a launcher frame but no
    /// definition) or `trampoline_unbound`.
    Locate(NotFound),
    /// A kernel shipped in a vendor library (`vendor_binary`).
    VendorBinary,
    /// Nothing was searched: there is no search root (`no_search_roots`).
    NoSearchRoots,
    /// The search ran and no file hit (`no_match`).
    NoMatch,
}

impl Unlocated {
    /// The stable reason code.
    pub fn as_str(self) -> &'static str {
        match self {
            Unlocated::Locate(reason) => reason.as_str(),
            Unlocated::VendorBinary => "vendor_binary",
            Unlocated::NoSearchRoots => "no_search_roots",
            Unlocated::NoMatch => "no_match",
        }
    }
}

impl std::fmt::Display for Unlocated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Unlocated {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// The reason a not-found locate result gives in a triage row.
///
/// Locate's own reason, settled by the one rule `NotFound::settle` (a
/// refusal stays, a vendor-library kernel says `vendor_binary`, else the
/// passes' reason), so the locate document and a triage row say the same
/// word; `no_match` where locate found no hit at all.
pub fn not_found_reason(result: &LocateResult) -> Unlocated {
    match NotFound::settle(result.reason, result.kind) {
        Some(NotFound::VendorBinary) => Unlocated::VendorBinary,
        Some(reason) => Unlocated::Locate(reason),
        None => Unlocated::NoMatch,
    }
}

impl TriageReport {
    /// The total share of kernel time the hot rows cover (Σ of their shares).
    pub fn covered_share(&self) -> f64 {
        self.analysis.kernels.iter().map(|k| k.share).sum()
    }

    /// The `kernlens.triage/1` document as a JSON value; an error only if
    /// a part of the report cannot be written as JSON.
    pub fn to_json(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::to_value(self)
    }
}

/// The summary embedded with its own schema tag first.
struct Summary<'a>(&'a Analysis);

impl Serialize for Summary<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(serde::Serialize)]
        struct Tagged<'a> {
            schema: &'static str,
            #[serde(flatten)]
            analysis: &'a Analysis,
        }
        Tagged {
            schema: SUMMARY_SCHEMA,
            analysis: self.0,
        }
        .serialize(serializer)
    }
}

impl Serialize for TriageReport {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut doc = serializer.serialize_struct("TriageReport", 5)?;
        doc.serialize_field("schema", TRIAGE_SCHEMA)?;
        doc.serialize_field("summary", &Summary(&self.analysis))?;
        doc.serialize_field("gate", &self.gate)?;
        doc.serialize_field("suppressed", &self.suppressed)?;
        doc.serialize_field("task_groups", &self.task_groups)?;
        if let Some(baseline) = &self.baseline {
            doc.serialize_field("baseline", baseline)?;
        }
        doc.end()
    }
}
