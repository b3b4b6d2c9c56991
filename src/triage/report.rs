//! What a triage found, and its `kernlens.triage/1` JSON document (cli.md).

use std::path::PathBuf;

use kernlens_gate::{GateReport, RewriteVerdict};
use kernlens_ident::Category;
use kernlens_locate::{
    Confidence, LocateResult, MENTION_ONLY, Method, RootWarning, SearchRoot, SourceKind,
    TRAMPOLINE_UNBOUND,
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
    /// The rewrite-route verdict, eligible or declined (gate.md §9).
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
    /// The source kind (locate.md §9.1).
    pub kind: SourceKind,
    /// How it was found (`not_found` when it was not).
    pub method: Method,
    /// Why it was not found (`None` when found): locate's refusal
    /// (`runtime_api_name`, `not_a_kernel`, `no_searchable_keyword`), else
    /// `vendor_binary` for a kernel shipped in a vendor library, else
    /// `mention_only` (files mention the name but none defines it: the
    /// best is kept in the locate answer's candidates, never an answer),
    /// `launcher_unconfirmed` (a launcher frame but no definition),
    /// `no_search_roots` when nothing was searched, or `no_match`.
    pub reason: Option<String>,
    /// What the answer rests on (locate.md §11); `found` only for
    /// `definition`, `composed` and `launcher`.
    pub confidence: Confidence,
}

/// The reason a not-found locate result gives in a triage row.
///
/// A name locate refused keeps locate's reason; a vendor-library kernel
/// says `vendor_binary` (its source is not in any tree, whatever mentions
/// or launched it); otherwise locate's reason (`mention_only`,
/// `launcher_unconfirmed`), or `no_match`.
pub fn not_found_reason(result: &LocateResult) -> String {
    let unproven =
        |r: &str| r == "launcher_unconfirmed" || r == MENTION_ONLY || r == TRAMPOLINE_UNBOUND;
    match (&result.reason, result.kind) {
        (Some(reason), _) if !unproven(reason) => reason.clone(),
        (_, SourceKind::VendorBinary) => "vendor_binary".to_owned(),
        (Some(reason), _) => reason.clone(),
        (None, _) => "no_match".to_owned(),
    }
}

impl TriageReport {
    /// The total share of kernel time the hot rows cover (Σ of their shares).
    pub fn covered_share(&self) -> f64 {
        self.analysis.kernels.iter().map(|k| k.share).sum()
    }

    /// The `kernlens.triage/1` document as a JSON value.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
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
