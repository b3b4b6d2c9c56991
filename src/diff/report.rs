//! What a diff found: plain data that serialises as the `kernlens.diff/1` document
//! (diff.md, "JSON document").

use kernlens_ident::Category;
use kernlens_trace::{Scope, SteadyWindow, WindowStatus};
use serde::Serialize;

/// Schema tag of the diff document.
pub const DIFF_SCHEMA: &str = "kernlens.diff/1";

/// One figure on both sides: `after − before`, and that change as a percentage of
/// `before` (`None` when `before` is 0 and `after` is not; 0 when both are 0).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Delta {
    /// The before side's value.
    pub before: f64,
    /// The after side's value.
    pub after: f64,
    /// `after − before`.
    pub delta: f64,
    /// `delta / before × 100`.
    pub delta_pct: Option<f64>,
}

impl Delta {
    /// The change from `before` to `after`.
    pub fn new(before: f64, after: f64) -> Delta {
        let delta = after - before;
        Delta {
            before,
            after,
            delta,
            delta_pct: pct_change(before, delta),
        }
    }
}

/// A count on both sides (launches, kernels); counts are never normalised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CountDelta {
    /// The before side's count.
    pub before: u64,
    /// The after side's count.
    pub after: u64,
    /// `after − before` (saturating at the i64 range).
    pub delta: i64,
}

impl CountDelta {
    /// The change from `before` to `after`.
    pub fn new(before: u64, after: u64) -> CountDelta {
        let signed = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        CountDelta {
            before,
            after,
            delta: signed(after).saturating_sub(signed(before)),
        }
    }

    /// The change as a percentage of `before` (`None` when `before` is 0 and `after` is not).
    pub fn delta_pct(&self) -> Option<f64> {
        pct_change(self.before as f64, self.delta as f64)
    }
}

impl Serialize for CountDeltaDoc<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut doc = serializer.serialize_struct("CountDelta", 4)?;
        doc.serialize_field("before", &self.0.before)?;
        doc.serialize_field("after", &self.0.after)?;
        doc.serialize_field("delta", &self.0.delta)?;
        doc.serialize_field("delta_pct", &self.0.delta_pct())?;
        doc.end()
    }
}

/// A [`CountDelta`] with its percentage, as the document writes it.
struct CountDeltaDoc<'a>(&'a CountDelta);

pub(crate) fn count_doc<S: serde::Serializer>(
    count: &CountDelta,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    CountDeltaDoc(count).serialize(serializer)
}

fn pct_change(before: f64, delta: f64) -> Option<f64> {
    if before != 0.0 {
        Some(delta / before * 100.0)
    } else if delta == 0.0 {
        Some(0.0)
    } else {
        None
    }
}

/// Which side of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Side {
    /// The first trace (the baseline).
    Before,
    /// The second trace (the change).
    After,
}

impl Side {
    /// `before` or `after`.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Before => "before",
            Side::After => "after",
        }
    }
}

/// How the time figures of the two sides are made comparable (diff.md, "Normalisation").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Normalize {
    /// Per step when both sides have a steady window, else per trace.
    #[default]
    Auto,
    /// Raw totals of each side's scope (per trace, or per window).
    None,
    /// Per step: both sides' steady windows, each one representative step.
    Step,
    /// Per second of wall time: each side's figures over its own span.
    Wall,
}

impl Normalize {
    /// `auto`, `none`, `step` or `wall`.
    pub fn as_str(self) -> &'static str {
        match self {
            Normalize::Auto => "auto",
            Normalize::None => "none",
            Normalize::Step => "step",
            Normalize::Wall => "wall",
        }
    }

    /// The unit suffix of a normalised time figure in the human table: `""`, `/step`, `/s`.
    pub fn unit_suffix(self) -> &'static str {
        match self {
            Normalize::Step => "/step",
            Normalize::Wall => "/s",
            Normalize::Auto | Normalize::None => "",
        }
    }
}

/// The normalisation asked for and the one applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Normalization {
    /// What the caller asked for.
    pub requested: Normalize,
    /// What was applied: `none`, `step` or `wall` (never `auto`).
    pub applied: Normalize,
}

/// Which kind of scope one side's figures cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WindowKind {
    /// The whole trace (asked for, or a steady window was asked for and none found).
    Full,
    /// A steady-state step found in the trace.
    Steady,
    /// A window the caller gave.
    Explicit,
}

impl WindowKind {
    /// The kind of an analysis' scope.
    pub fn of(scope: Scope) -> WindowKind {
        match scope {
            Scope::SteadyState => WindowKind::Steady,
            Scope::ExplicitWindow => WindowKind::Explicit,
            _ => WindowKind::Full,
        }
    }

    /// `full`, `steady` or `explicit`.
    pub fn as_str(self) -> &'static str {
        match self {
            WindowKind::Full => "full",
            WindowKind::Steady => "steady",
            WindowKind::Explicit => "explicit",
        }
    }
}

/// What one side is: its trace, scope and the facts the warnings rest on.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct SideInfo {
    /// The trace as resolved (or its label).
    pub trace_file: String,
    /// What the figures cover.
    pub scope: Scope,
    /// Its kind, as the warnings compare it.
    pub window_kind: WindowKind,
    /// The window, when one applies.
    pub window: Option<SteadyWindow>,
    /// Whether a window was asked for and found.
    pub window_status: WindowStatus,
    /// The wall span of the scope, µs (the step duration for a steady window).
    pub span_us: f64,
    /// What each time figure of this side was divided by (1, or the span in seconds).
    pub divisor: f64,
    /// Devices with GPU work in the scope.
    pub device_count: usize,
    /// GPU models from the trace's `deviceProperties`, in id order; `None` when the trace
    /// has none or is not a file (stdin, bytes).
    pub gpu_models: Option<Vec<String>>,
    /// The side's graph replays are under-recorded (its idle figure is not comparable).
    pub graph_under_recorded: bool,
    /// Structural problems recovered while reading it.
    pub stream_errors: usize,
    /// Distinct kernel names in the scope.
    pub kernel_names: usize,
}

/// Whether a group is on both sides or only one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum GroupStatus {
    /// On both sides.
    Matched,
    /// Only in the after trace.
    Added,
    /// Only in the before trace.
    Removed,
}

impl GroupStatus {
    /// `matched`, `added` or `removed`.
    pub fn as_str(self) -> &'static str {
        match self {
            GroupStatus::Matched => "matched",
            GroupStatus::Added => "added",
            GroupStatus::Removed => "removed",
        }
    }
}

/// One operator identity's kernels on both sides.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct GroupDelta {
    /// `tg001`, `tg002`, … in listed order (largest |Δ time| first).
    pub id: String,
    /// On both sides, or only one.
    pub status: GroupStatus,
    /// The operator identity key both sides share (ident.md, "Key text").
    pub identity_key: String,
    /// The identity's operation: the kernel key the names fold to.
    pub operation: String,
    /// Category of the largest kernel.
    pub category: Category,
    /// GPU time, µs, normalised (diff.md, "Normalisation").
    pub total_us: Delta,
    /// Launches in each side's scope.
    #[serde(serialize_with = "count_doc")]
    pub calls: CountDelta,
    /// GPU time per launch, µs (never normalised).
    pub avg_us: Delta,
    /// Share of the side's kernel time, 0–1.
    pub share: Delta,
    /// The before side's kernel names in the group, largest first.
    pub kernels_before: Vec<String>,
    /// The after side's kernel names in the group, largest first.
    pub kernels_after: Vec<String>,
}

/// The change on one device, matched by device id.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct DeviceDelta {
    /// `args.device` (or the integer pid), `None` for events without one.
    pub device: Option<i64>,
    /// On both sides, or only one.
    pub status: GroupStatus,
    /// Union of the device's kernel and memcpy intervals, µs, normalised.
    pub busy_us: Delta,
    /// Span minus busy, µs, normalised.
    pub idle_us: Delta,
    /// Union of its kernel intervals, µs, normalised.
    pub kernel_union_us: Delta,
    /// Busy percentage of the span.
    pub busy_pct: Delta,
    /// Kernels on the device.
    #[serde(serialize_with = "count_doc")]
    pub kernel_count: CountDelta,
}

/// The TraceLens-style categories on both sides, µs, normalised.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct CategoryDeltas {
    /// Union of non-communication kernels.
    pub computation_us: Delta,
    /// Union of communication kernels.
    pub communication_us: Delta,
    /// Communication not overlapped by computation.
    pub exposed_communication_us: Delta,
    /// Memcpy not overlapped by any kernel.
    pub memcpy_us: Delta,
    /// Timeline idle.
    pub idle_us: Delta,
}

/// Whole-scope figures on both sides.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct TotalsDelta {
    /// Wall span of the scope, µs (per step: the step duration), normalised.
    pub span_us: Delta,
    /// Union of kernel and memcpy intervals, µs, normalised.
    pub busy_us: Delta,
    /// Span minus busy, µs, normalised.
    pub idle_us: Delta,
    /// Busy percentage of the span.
    pub busy_pct: Delta,
    /// Idle percentage of the span.
    pub idle_pct: Delta,
    /// Sum of kernel durations, µs, normalised: the headline's kernel time.
    pub kernel_sum_us: Delta,
    /// Union of kernel intervals, µs, normalised.
    pub kernel_union_us: Delta,
    /// Sum of memcpy/memset durations, µs, normalised.
    pub memcpy_us: Delta,
    /// Kernels in the scope.
    #[serde(serialize_with = "count_doc")]
    pub kernel_count: CountDelta,
    /// Computation / communication / exposed communication / memcpy / idle.
    pub categories: CategoryDeltas,
    /// One entry per device id seen on either side, ascending, `None` last.
    pub per_device: Vec<DeviceDelta>,
}

/// Why a figure of the diff may mislead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WarningCode {
    /// A side's graph replays are under-recorded: its idle figure is not comparable.
    GraphUnderRecorded,
    /// The two sides cover scopes of different kinds (full, steady, explicit).
    WindowKindsDiffer,
    /// The two sides ran on different numbers of devices.
    DeviceCountsDiffer,
    /// The two sides ran on different GPU models.
    GpuModelsDiffer,
    /// A side's trace had structural problems (recovered; figures may be short).
    StreamErrors,
    /// Per-step normalisation was asked for but a side has no steady window.
    StepUnavailable,
}

impl WarningCode {
    /// The snake_case code of the JSON document.
    pub fn as_str(self) -> &'static str {
        match self {
            WarningCode::GraphUnderRecorded => "graph_under_recorded",
            WarningCode::WindowKindsDiffer => "window_kinds_differ",
            WarningCode::DeviceCountsDiffer => "device_counts_differ",
            WarningCode::GpuModelsDiffer => "gpu_models_differ",
            WarningCode::StreamErrors => "stream_errors",
            WarningCode::StepUnavailable => "step_unavailable",
        }
    }
}

/// One warning: its code, the side it is about (`None` for both), and a sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DiffWarning {
    /// What kind of problem.
    pub code: WarningCode,
    /// The side it is about, when one.
    pub side: Option<Side>,
    /// What was found and what it means for the figures.
    pub message: String,
}

/// The outcome of one diff; serialises as the `kernlens.diff/1` document.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DiffReport {
    /// The before side.
    pub before: SideInfo,
    /// The after side.
    pub after: SideInfo,
    /// The normalisation asked for and applied.
    pub normalization: Normalization,
    /// Whole-scope figures.
    pub totals: TotalsDelta,
    /// Every group on either side, largest |Δ time| first.
    pub groups: Vec<GroupDelta>,
    /// What may make the comparison misleading.
    pub warnings: Vec<DiffWarning>,
}

impl DiffReport {
    /// Groups only in the after trace.
    pub fn added(&self) -> impl Iterator<Item = &GroupDelta> {
        self.groups
            .iter()
            .filter(|g| g.status == GroupStatus::Added)
    }

    /// Groups only in the before trace.
    pub fn removed(&self) -> impl Iterator<Item = &GroupDelta> {
        self.groups
            .iter()
            .filter(|g| g.status == GroupStatus::Removed)
    }

    /// The matched group whose time fell the most, when any fell. A removed group is not
    /// a gain of its own: other groups (the added ones) took its work.
    pub fn top_gain(&self) -> Option<&GroupDelta> {
        self.groups
            .iter()
            .filter(|g| g.status == GroupStatus::Matched && g.total_us.delta < 0.0)
            .min_by(|a, b| a.total_us.delta.total_cmp(&b.total_us.delta))
    }

    /// The one-line answer: kernel time's change and the top gain, e.g.
    /// `kernel time −12.4% (−3.1 ms/step); top gain: tg003 layer_norm −41.0%`.
    pub fn headline(&self) -> String {
        headline(
            &self.totals.kernel_sum_us,
            self.normalization.applied,
            self.top_gain()
                .map(|g| (g.id.as_str(), g.operation.as_str(), g.status, &g.total_us)),
        )
    }

    /// The `kernlens.diff/1` document as a JSON value (the report serialises itself; an
    /// error only if serde_json refuses a value, never a silent `null`).
    pub fn to_json(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::to_value(self)
    }
}

/// `kernel time −12.4% (−3.100 ms/step); top gain: tg003 layer_norm −41.0%` from the kernel
/// time's change and the top gain (id, operation, status, time), when any group fell.
pub(crate) fn headline(
    kernel: &Delta,
    applied: Normalize,
    gain: Option<(&str, &str, GroupStatus, &Delta)>,
) -> String {
    let unit = applied.unit_suffix();
    let mut line = format!(
        "kernel time {} ({} ms{unit})",
        signed_pct(kernel.delta_pct),
        signed(kernel.delta / 1000.0, 3)
    );
    match gain {
        Some((id, operation, _, time)) => {
            line.push_str(&format!(
                "; top gain: {id} {} {}",
                short_operation(operation),
                signed_pct(time.delta_pct)
            ));
        }
        None => line.push_str("; no group got faster"),
    }
    line
}

/// The last `::` segment of a native key (`at::native::vectorized_layer_norm_kernel` →
/// `vectorized_layer_norm_kernel`), so the headline stays one line.
pub fn short_operation(operation: &str) -> &str {
    operation.rsplit("::").next().unwrap_or(operation)
}

/// `+1.234` / `−1.234` (a real minus sign), `decimals` places; `0.000` without a sign.
pub fn signed(value: f64, decimals: usize) -> String {
    let text = format!("{:.*}", decimals, value.abs());
    let zero = text.chars().all(|c| c == '0' || c == '.');
    if zero {
        text
    } else if value < 0.0 {
        format!("\u{2212}{text}")
    } else {
        format!("+{text}")
    }
}

/// A percentage change with one decimal and its sign, `new` when there was nothing before.
pub fn signed_pct(pct: Option<f64>) -> String {
    match pct {
        Some(p) => format!("{}%", signed(p, 1)),
        None => "new".to_owned(),
    }
}

impl Serialize for DiffReport {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut doc = serializer.serialize_struct("DiffReport", 10)?;
        doc.serialize_field("schema", DIFF_SCHEMA)?;
        doc.serialize_field("headline", &self.headline())?;
        doc.serialize_field("before", &self.before)?;
        doc.serialize_field("after", &self.after)?;
        doc.serialize_field("normalization", &self.normalization)?;
        doc.serialize_field("totals", &self.totals)?;
        doc.serialize_field("added", &self.added().count())?;
        doc.serialize_field("removed", &self.removed().count())?;
        doc.serialize_field("groups", &self.groups)?;
        doc.serialize_field("warnings", &self.warnings)?;
        doc.end()
    }
}
