//! The typed report blocks of an [`crate::Analysis`]: plain data, serialised as the
//! `kernlens.summary/1` JSON (trace.md "JSON output"). Times are µs floats converted from exact ns
//! at the end; the ns values stay available (not serialised) for callers that compute.

use serde::{Deserialize, Serialize};

/// Converts integer ns to the µs float of the JSON (trace.md "Numbers").
pub(crate) fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

/// `part / total`, 0.0 when the denominator is 0.
pub(crate) fn ratio(part: i64, total: i64) -> f64 {
    if total == 0 {
        0.0
    } else {
        part as f64 / total as f64
    }
}

/// `part / total × 100`, 0.0 when the denominator is 0.
pub(crate) fn pct(part: i64, total: i64) -> f64 {
    if total == 0 {
        0.0
    } else {
        part as f64 / total as f64 * 100.0
    }
}

/// Which part of the trace the aggregates cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Scope {
    /// The whole trace.
    FullTrace,
    /// A steady-state window found in the trace.
    SteadyState,
    /// A window the caller gave.
    ExplicitWindow,
}

/// Whether a window was asked for and found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WindowStatus {
    /// The whole trace was requested.
    NotRequested,
    /// A window was applied.
    Selected,
    /// A steady window was requested and none found; the whole trace was used.
    NoRepeatingWindowFellBackToFullTrace,
}

/// The window the aggregates cover (trace.md "Steady-state window").
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SteadyWindow {
    /// Start, µs.
    pub start_us: f64,
    /// End (exclusive), µs.
    pub end_us: f64,
    /// Normalised step name; null for an explicit window.
    pub step_name: Option<String>,
    /// Spans in the chosen group, warm-up included; null for an explicit window.
    pub step_count: Option<usize>,
    /// `annotation_step`, `annotation_step_launch_span`, `cpu_profiler_step` or `explicit`.
    pub method: String,
    /// GPU annotation duration over the mapped CPU-step GPU span, when known.
    pub annotation_coverage: Option<f64>,
    /// Start, ns.
    #[serde(skip)]
    pub start_ns: i64,
    /// End, ns.
    #[serde(skip)]
    pub end_ns: i64,
}

/// Busy/idle figures for one device; `total` is the pooled wall span.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct DeviceTimeline {
    /// `args.device`, else an integer `pid`, else null.
    pub device: Option<i64>,
    /// Pooled wall span, µs.
    pub total_us: f64,
    /// Union of this device's kernel and memcpy intervals, µs.
    pub busy_us: f64,
    /// `total − busy`, µs.
    pub idle_us: f64,
    /// Union of this device's kernel intervals, µs.
    pub kernel_union_us: f64,
    /// Sum of this device's memcpy/memset durations, µs.
    pub memcpy_us: f64,
    /// Idle percentage.
    pub idle_pct: f64,
    /// Busy percentage.
    pub busy_pct: f64,
    /// Kernels on this device.
    pub kernel_count: u64,
}

/// TraceLens-style time categories; they sum exactly to `total` (trace.md "Categories").
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Categories {
    /// Union of non-communication kernels, µs.
    pub computation_us: f64,
    /// Union of communication kernels, µs.
    pub communication_us: f64,
    /// Communication not overlapped by computation, µs.
    pub exposed_communication_us: f64,
    /// Memcpy not overlapped by any kernel, µs.
    pub memcpy_us: f64,
    /// Timeline idle, µs.
    pub idle_us: f64,
}

/// The GPU timeline (trace.md "Timeline").
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Timeline {
    /// Window length, or the span of kept GPU events, µs.
    pub total_us: f64,
    /// Union of kernel and memcpy intervals, µs.
    pub busy_us: f64,
    /// `total − busy`, µs.
    pub idle_us: f64,
    /// Union of kernel intervals, µs.
    pub kernel_union_us: f64,
    /// Sum of memcpy/memset durations (unclipped), µs.
    pub memcpy_us: f64,
    /// Sum of kernel durations (unclipped), µs.
    pub kernel_sum_us: f64,
    /// Idle percentage of total.
    pub idle_pct: f64,
    /// Busy percentage of total.
    pub busy_pct: f64,
    /// `busy / total`.
    pub busy_fraction: f64,
    /// One entry per device, ascending, null last.
    pub per_device: Vec<DeviceTimeline>,
    /// Computation / communication / memcpy / idle split.
    pub categories: Categories,
    /// `total`, exact ns.
    #[serde(skip)]
    pub total_ns: i64,
    /// `busy`, exact ns.
    #[serde(skip)]
    pub busy_ns: i64,
}

/// Which launch API the graph-launch set came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LaunchApi {
    /// `cuda_runtime` events (`cudaGraphLaunch`, `hipGraphLaunch`).
    Runtime,
    /// `cuda_driver` events (`cuGraphLaunch`), used only when no runtime launch exists.
    Driver,
}

/// CUDA/HIP-graph replay coverage over the whole trace (trace.md "Graph launches and coverage").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
#[non_exhaustive]
pub struct GraphCoverage {
    /// Distinct graph-launch correlations.
    pub launches: u64,
    /// Launches with at least one recorded kernel.
    pub launches_with_kernels: u64,
    /// `launches_with_kernels / launches`; null without launches.
    pub coverage: Option<f64>,
    /// Kernels carrying a graph-launch correlation.
    pub graph_kernels: u64,
    /// The profiler dropped most replays: idle% is not trustworthy.
    pub under_recorded: bool,
    /// Which API the launches came from.
    pub launch_api: Option<LaunchApi>,
}

/// How kernels link to ops (trace.md "Attribution chain"), over the kept kernels.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Attribution {
    /// Kept kernels.
    pub kernel_count: u64,
    /// Kernels resolved to a named op.
    pub attributed_kernels: u64,
    /// Kernels with no op and no graph launch.
    pub unlinked_kernels: u64,
    /// Kernels with no op, launched by a graph replay.
    pub graph_attributed_kernels: u64,
    /// Attributed kernel time over all kept kernel time, percent.
    pub attributed_pct: f64,
    /// Attributed kernel time, µs.
    pub attributed_us: f64,
    /// Unlinked kernel time, µs.
    pub unlinked_us: f64,
    /// Graph-attributed kernel time, µs.
    pub graph_attributed_us: f64,
}

/// One kernel name's row (trace.md "Rows").
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct KernelRow {
    /// Kernel name as in the trace.
    pub name: String,
    /// Kept launches.
    pub calls: u64,
    /// Sum of durations, µs.
    pub total_us: f64,
    /// Shortest launch, µs.
    pub min_us: f64,
    /// Longest launch, µs.
    pub max_us: f64,
    /// Share of all kept kernel time, 0–1.
    pub share: f64,
    /// The op with the most attributed time for this kernel, or `""`.
    pub op_name: String,
    /// Distinct buckets this kernel's launches were attributed to: each op, plus one when
    /// some launch was `(graph)` or `(unlinked)`. Above 1, `op_name` is only the majority.
    pub op_count: usize,
    /// Grid of the first launch that recorded geometry.
    pub grid: Option<[i64; 3]>,
    /// Block of the first launch that recorded geometry.
    pub block: Option<[i64; 3]>,
    /// `Input Dims` of the majority op's first launch of this kernel.
    pub op_shapes: Vec<Vec<i64>>,
    /// `Input type` of the same.
    pub op_dtypes: Vec<String>,
    /// `kernel_file` of the same.
    pub op_kernel_file: String,
    /// `kernel_backend` of the same.
    pub op_kernel_backend: String,
    /// The shapes signature with the most time for this kernel.
    pub backfill_shapes: Vec<Vec<i64>>,
    /// Its dtypes.
    pub backfill_dtypes: Vec<String>,
    /// More than one signature was seen.
    pub backfill_ambiguous: bool,
    /// Sum of durations, ns.
    #[serde(skip)]
    pub total_ns: i64,
}

/// One op bucket's row, including `(graph)` and `(unlinked)`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct OpRow {
    /// Op name or bucket.
    pub name: String,
    /// Kept kernels in the bucket.
    pub calls: u64,
    /// Sum of their durations, µs.
    pub total_us: f64,
    /// Share of all kept kernel time, 0–1.
    pub share: f64,
    /// Sum of durations, ns.
    #[serde(skip)]
    pub total_ns: i64,
}

/// A `pid`/`tid` owned, as it appeared (number, string or null).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum StreamId {
    /// An integer id.
    Int(i64),
    /// A string id.
    Str(String),
    /// Absent.
    Null,
}

/// The stream whose recorded durations overlap the most (trace.md "Stream duration sanity").
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct StreamOverlap {
    /// Process id of the stream.
    pub pid: StreamId,
    /// Thread (stream) id.
    pub tid: StreamId,
    /// Events overlapping their successor by more than 1 µs.
    pub overlapping_events: u64,
    /// Sum of overlaps, µs.
    pub excess_us: f64,
    /// Sum of durations on the stream, µs.
    pub device_us: f64,
    /// `excess / device`.
    pub excess_share: f64,
    /// Last end minus first start, µs.
    pub span_us: f64,
    /// Name of the event with the largest overlap.
    pub worst_event: String,
    /// Its overlap, µs.
    pub worst_event_excess_us: f64,
    /// `warning` when the share is at least 0.25, else `info`.
    pub severity: String,
}

/// The `kernlens` member of a split chunk (trace.md "Split").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
#[non_exhaustive]
pub struct ChunkProvenance {
    /// `kernlens.chunk/1`.
    pub schema: String,
    /// File name of the trace the chunk was cut from.
    pub source_file: String,
    /// The chunk's window.
    pub window: Option<ChunkWindow>,
    /// Graph coverage of the whole source trace.
    pub source_graph: Option<GraphCoverage>,
}

/// A chunk's window in µs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
#[non_exhaustive]
pub struct ChunkWindow {
    /// Start, µs.
    pub start_us: f64,
    /// End, µs.
    pub end_us: f64,
}
