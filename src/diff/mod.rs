//! Did the change help? Two traces compared by operator identity (diff.md).
//!
//! [`diff_traces`] reads a before and an after trace in parallel, each in its own scope
//! (whole trace, steady window or an explicit window), and [`compare`] turns the two
//! [`Capture`]s into a [`DiffReport`]: every operator identity's time, launches, time
//! per launch and share on both sides with the change, the groups only one side has
//! (`added`, `removed`), the whole-scope figures (busy/idle, kernel time, categories,
//! exposed communication, per device) and warnings where a figure may mislead.
//!
//! Rows are matched by ident's operator identity with no source path (see `groups`),
//! so a kernel renamed by its launch API or a template argument is still the same
//! group, where a literal name comparison would report one removed and one added.
//! Times are summed in exact ns and converted once.
//!
//! This is a facade module rather than a stage crate: it composes two stages (trace's
//! analysis, ident's keys) the way [`crate::triage`] does, and adds no stage of its own;
//! `triage --baseline` reuses it.
//!
//! ```
//! use kernlens::diff::{Capture, Normalize, compare};
//! use kernlens::trace::{Options, TraceSource, analyze};
//!
//! let read = |text: &str| {
//!     let mut options = Options::default();
//!     options.top_k = 0;
//!     analyze(&TraceSource::from_bytes("t.json", text.as_bytes().to_vec()), &options)
//! };
//! let before = read(r#"{"traceEvents":[
//!     {"ph":"X","cat":"kernel","name":"void k::scale<float>(float*)","ts":0,"dur":40}]}"#)?;
//! let after = read(r#"{"traceEvents":[
//!     {"ph":"X","cat":"kernel","name":"void k::scale<c10::Half>(c10::Half*)","ts":0,"dur":30}]}"#)?;
//! let report = compare(&Capture::new(before), &Capture::new(after), Normalize::None);
//!
//! // The template argument changed; the operator did not.
//! assert_eq!(report.groups.len(), 1);
//! assert_eq!(report.groups[0].operation, "k::scale");
//! assert_eq!(report.groups[0].total_us.delta, -10.0);
//! assert_eq!(report.groups[0].total_us.delta_pct, Some(-25.0));
//! assert!(report.headline().starts_with("kernel time \u{2212}25.0%"));
//! # Ok::<(), kernlens::trace::TraceError>(())
//! ```

mod baseline;
mod devices;
mod groups;
mod report;
mod totals;

use kernlens_ident::KeyMemo;
use kernlens_trace::{Analysis, Limits, Options, TraceError, TraceSource, WindowMode};

pub use baseline::{GroupBaseline, TriageBaseline, triage_baseline};
pub use report::{
    CategoryDeltas, CountDelta, DIFF_SCHEMA, Delta, DeviceDelta, DiffReport, DiffWarning,
    GroupDelta, GroupStatus, Normalization, Normalize, Side, SideInfo, TotalsDelta, WarningCode,
    WindowKind, short_operation, signed, signed_pct,
};

/// How [`diff_traces`] reads the two sides and normalises them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DiffOptions {
    /// The before side's scope.
    pub before_window: WindowMode,
    /// The after side's scope.
    pub after_window: WindowMode,
    /// How time figures are made comparable.
    pub normalize: Normalize,
    /// Input bounds for both reads.
    pub limits: Limits,
    /// Trace-reader threads per side. `None`: the diff's choice (diff.md, "Reading"): half
    /// the reader's default each when the two inputs are files of about the same size,
    /// else the reader's default (every core) each.
    pub threads: Option<usize>,
}

impl Default for DiffOptions {
    /// Both sides' whole traces (as `kernlens summary` reads them), normalised per step
    /// when windows that are steady steps are asked for.
    fn default() -> Self {
        DiffOptions {
            before_window: WindowMode::Full,
            after_window: WindowMode::Full,
            normalize: Normalize::Auto,
            limits: Limits::default(),
            threads: None,
        }
    }
}

impl DiffOptions {
    /// The same scope on both sides.
    pub fn with_window(mut self, window: WindowMode) -> Self {
        self.before_window = window;
        self.after_window = window;
        self
    }

    /// The before side's scope.
    pub fn with_before_window(mut self, window: WindowMode) -> Self {
        self.before_window = window;
        self
    }

    /// The after side's scope.
    pub fn with_after_window(mut self, window: WindowMode) -> Self {
        self.after_window = window;
        self
    }

    /// The normalisation.
    pub fn with_normalize(mut self, normalize: Normalize) -> Self {
        self.normalize = normalize;
        self
    }

    /// Input bounds for both reads.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Trace-reader threads per side.
    pub fn with_threads(mut self, threads: Option<usize>) -> Self {
        self.threads = threads;
        self
    }
}

/// Why a diff could not run: one side could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DiffError {
    /// A trace could not be read.
    #[error("cannot read the {} trace '{file}': {source}", side.as_str())]
    Trace {
        /// Which side.
        side: Side,
        /// The trace as resolved (or its label).
        file: String,
        /// Why the reader failed.
        #[source]
        source: TraceError,
    },
}

/// One side of a diff: its analysis (every kernel row, not only the hot ones) and the GPU
/// models of its `deviceProperties`.
#[derive(Debug)]
#[non_exhaustive]
pub struct Capture {
    /// The trace's analysis over the side's scope.
    pub analysis: Analysis,
    /// GPU models in device-id order, when the trace names them.
    pub gpu_models: Option<Vec<String>>,
}

impl Capture {
    /// A side from an analysis already made, without GPU models. Its groups are built
    /// from `analysis.kernels`, so the analysis should keep every row (`top_k` 0); with
    /// fewer rows the groups cover only those.
    pub fn new(analysis: Analysis) -> Capture {
        Capture {
            analysis,
            gpu_models: None,
        }
    }

    /// The same side with GPU models (device-id order).
    pub fn with_gpu_models(mut self, models: Vec<String>) -> Capture {
        self.gpu_models = Some(models);
        self
    }

    /// Reads one side in `window`, keeping every kernel row, and the GPU models from the
    /// head of the file when the source is a file.
    pub fn read(
        source: &TraceSource,
        window: WindowMode,
        limits: &Limits,
        threads: Option<usize>,
    ) -> Result<Capture, TraceError> {
        let mut options = Options::default();
        options.top_k = 0;
        options.window = window;
        options.limits = limits.clone();
        options.threads = threads;
        let analysis = kernlens_trace::analyze(source, &options)?;
        let gpu_models = source.path().and_then(devices::gpu_models);
        Ok(Capture {
            analysis,
            gpu_models,
        })
    }
}

/// Reads both traces in parallel, each in its own scope, and compares them.
pub fn diff_traces(
    before: &TraceSource,
    after: &TraceSource,
    options: &DiffOptions,
) -> Result<DiffReport, DiffError> {
    let (before_capture, after_capture) = read_both(before, after, options);
    let before_capture = before_capture.map_err(|err| trace_error(Side::Before, before, err))?;
    let after_capture = after_capture.map_err(|err| trace_error(Side::After, after, err))?;
    Ok(compare(&before_capture, &after_capture, options.normalize))
}

fn trace_error(side: Side, source: &TraceSource, err: TraceError) -> DiffError {
    DiffError::Trace {
        side,
        file: source.file().to_owned(),
        source: err,
    }
}

/// Both reads at once: each read is a pipeline of its own, so the two overlap (and on
/// gzip inputs the decompressing threads of both run side by side).
fn read_both(
    before: &TraceSource,
    after: &TraceSource,
    options: &DiffOptions,
) -> (Result<Capture, TraceError>, Result<Capture, TraceError>) {
    let threads = side_threads(
        options.threads,
        input_of(before),
        input_of(after),
        kernlens_trace::default_threads(),
    );
    let read = |source: &TraceSource, window: WindowMode, threads: Option<usize>| {
        Capture::read(source, window, &options.limits, threads)
    };
    std::thread::scope(|scope| {
        let after_read = scope.spawn(|| read(after, options.after_window, threads.1));
        let before_result = read(before, options.before_window, threads.0);
        match after_read.join() {
            Ok(after_result) => (before_result, after_result),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// A side's input as the thread split sees it: its size on disk and whether it is gzip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct InputSize {
    bytes: u64,
    gzip: bool,
}

/// The size of a file source (`None` for a stream or bytes, or a file that cannot be read).
fn input_of(source: &TraceSource) -> Option<InputSize> {
    let mut file = std::fs::File::open(source.path()?).ok()?;
    let bytes = file.metadata().ok()?.len();
    let mut magic = [0u8; 2];
    let gzip = std::io::Read::read_exact(&mut file, &mut magic).is_ok() && magic == [0x1f, 0x8b];
    Some(InputSize { bytes, gzip })
}

/// Worker threads of the before and after reads. A caller's count applies to both. Left
/// to the diff, two files of the same kind (both plain or both gzip) within 2× of each
/// other's size get half of `cores` each: two pools of every core would run twice as many
/// workers as cores, each with its region buffers, and starve the two folding threads.
/// Otherwise each read keeps the reader's default, so the larger side has every core for
/// the part of its read after the smaller one is done.
fn side_threads(
    threads: Option<usize>,
    before: Option<InputSize>,
    after: Option<InputSize>,
    cores: usize,
) -> (Option<usize>, Option<usize>) {
    if threads.is_some() {
        return (threads, threads);
    }
    match (before, after) {
        (Some(b), Some(a))
            if b.gzip == a.gzip
                && b.bytes.max(a.bytes) <= b.bytes.min(a.bytes).saturating_mul(2) =>
        {
            let half = Some((cores / 2).max(1));
            (half, half)
        }
        _ => (None, None),
    }
}

/// Compares two sides: groups matched by identity, whole-scope figures and warnings.
pub fn compare(before: &Capture, after: &Capture, normalize: Normalize) -> DiffReport {
    compare_sides(SideRef::of(before), SideRef::of(after), normalize)
}

/// One side as [`compare_sides`] reads it (a triage's analysis is borrowed, not moved).
#[derive(Clone, Copy)]
pub(crate) struct SideRef<'a> {
    pub analysis: &'a Analysis,
    pub gpu_models: Option<&'a [String]>,
}

impl<'a> SideRef<'a> {
    pub(crate) fn of(capture: &'a Capture) -> SideRef<'a> {
        SideRef {
            analysis: &capture.analysis,
            gpu_models: capture.gpu_models.as_deref(),
        }
    }
}

pub(crate) fn compare_sides(
    before: SideRef<'_>,
    after: SideRef<'_>,
    normalize: Normalize,
) -> DiffReport {
    let mut warnings = Vec::new();
    let applied = applied_normalization(before.analysis, after.analysis, normalize, &mut warnings);
    let divisor = |analysis: &Analysis| match applied {
        Normalize::Wall => {
            let seconds = analysis.timeline.total_us / 1e6;
            if seconds > 0.0 { seconds } else { 1.0 }
        }
        _ => 1.0,
    };
    let divisors = (divisor(before.analysis), divisor(after.analysis));
    let mut memo = KeyMemo::new();
    let before_groups = groups::side_groups(before.analysis, &mut memo);
    let after_groups = groups::side_groups(after.analysis, &mut memo);
    let before_info = side_info(before, divisors.0);
    let after_info = side_info(after, divisors.1);
    side_warnings(&before_info, &after_info, &mut warnings);
    DiffReport {
        totals: totals::totals(before.analysis, after.analysis, divisors),
        groups: groups::match_groups(before_groups, after_groups, divisors),
        before: before_info,
        after: after_info,
        normalization: Normalization {
            requested: normalize,
            applied,
        },
        warnings,
    }
}

/// Per step only when both sides are steady windows (each one representative step);
/// `auto` falls back to per trace quietly, an explicit `step` with a warning.
fn applied_normalization(
    before: &Analysis,
    after: &Analysis,
    requested: Normalize,
    warnings: &mut Vec<DiffWarning>,
) -> Normalize {
    let steady = |a: &Analysis| WindowKind::of(a.scope) == WindowKind::Steady;
    match requested {
        Normalize::Auto if steady(before) && steady(after) => Normalize::Step,
        Normalize::Auto | Normalize::None => Normalize::None,
        Normalize::Step if steady(before) && steady(after) => Normalize::Step,
        Normalize::Step => {
            let missing: Vec<&str> = [(Side::Before, before), (Side::After, after)]
                .iter()
                .filter(|(_, c)| !steady(c))
                .map(|(side, _)| side.as_str())
                .collect();
            warnings.push(DiffWarning {
                code: WarningCode::StepUnavailable,
                side: match (steady(before), steady(after)) {
                    (false, true) => Some(Side::Before),
                    (true, false) => Some(Side::After),
                    _ => None,
                },
                message: format!(
                    "per-step normalisation needs a steady window on both sides, and the {} \
                     side has none; figures are per trace",
                    missing.join(" and ")
                ),
            });
            Normalize::None
        }
        Normalize::Wall => Normalize::Wall,
    }
}

fn side_info(side: SideRef<'_>, divisor: f64) -> SideInfo {
    let a = side.analysis;
    SideInfo {
        trace_file: a.trace_file.clone(),
        scope: a.scope,
        window_kind: WindowKind::of(a.scope),
        window: a.window.clone(),
        window_status: a.window_status,
        span_us: a.timeline.total_us,
        divisor,
        device_count: a
            .timeline
            .per_device
            .iter()
            .filter(|d| d.device.is_some())
            .count(),
        gpu_models: side.gpu_models.map(<[String]>::to_vec),
        graph_under_recorded: a.graph.under_recorded,
        stream_errors: a.stream_errors.len(),
        kernel_names: a.kernels.len(),
    }
}

fn side_warnings(before: &SideInfo, after: &SideInfo, warnings: &mut Vec<DiffWarning>) {
    for (side, info) in [(Side::Before, before), (Side::After, after)] {
        if info.graph_under_recorded {
            warnings.push(DiffWarning {
                code: WarningCode::GraphUnderRecorded,
                side: Some(side),
                message: format!(
                    "the {} trace's graph replays are under-recorded: its idle and busy \
                     figures count a fraction of the GPU work and are not comparable",
                    side.as_str()
                ),
            });
        }
        if info.stream_errors > 0 {
            warnings.push(DiffWarning {
                code: WarningCode::StreamErrors,
                side: Some(side),
                message: format!(
                    "the {} trace had {} structural problem(s); complete events were kept, \
                     so its figures may be short (see `kernlens summary`)",
                    side.as_str(),
                    info.stream_errors
                ),
            });
        }
    }
    if before.window_kind != after.window_kind {
        warnings.push(DiffWarning {
            code: WarningCode::WindowKindsDiffer,
            side: None,
            message: format!(
                "the sides cover different kinds of scope (before {}, after {}): \
                 time figures compare a {} with a {}; give both the same --window",
                before.window_kind.as_str(),
                after.window_kind.as_str(),
                scope_noun(before.window_kind),
                scope_noun(after.window_kind)
            ),
        });
    }
    if before.device_count != after.device_count {
        warnings.push(DiffWarning {
            code: WarningCode::DeviceCountsDiffer,
            side: None,
            message: format!(
                "the sides ran on different numbers of devices (before {}, after {})",
                before.device_count, after.device_count
            ),
        });
    }
    if let (Some(b), Some(a)) = (&before.gpu_models, &after.gpu_models)
        && b != a
    {
        warnings.push(DiffWarning {
            code: WarningCode::GpuModelsDiffer,
            side: None,
            message: format!(
                "the sides ran on different GPUs (before {}, after {})",
                models_text(b),
                models_text(a)
            ),
        });
    }
}

fn scope_noun(kind: WindowKind) -> &'static str {
    match kind {
        WindowKind::Full => "whole trace",
        WindowKind::Steady => "single step",
        _ => "chosen window",
    }
}

fn models_text(models: &[String]) -> String {
    if models.is_empty() {
        "none listed".to_owned()
    } else {
        models.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::{InputSize, side_threads};

    const fn plain(bytes: u64) -> Option<InputSize> {
        Some(InputSize { bytes, gzip: false })
    }

    #[test]
    fn sides_of_a_size_share_the_cores_and_others_keep_every_core() {
        // Two 827 MB copies on 16 cores: 8 each; on 2 cores: 1 each.
        assert_eq!(
            side_threads(None, plain(827), plain(827), 16),
            (Some(8), Some(8))
        );
        assert_eq!(
            side_threads(None, plain(827), plain(414), 2),
            (Some(1), Some(1))
        );
        assert_eq!(
            side_threads(None, plain(5), plain(5), 1),
            (Some(1), Some(1))
        );
        // More than 2x apart, a stream, or plain against gzip: the reader's default.
        assert_eq!(side_threads(None, plain(827), plain(413), 16), (None, None));
        assert_eq!(side_threads(None, plain(827), None, 16), (None, None));
        let gz = Some(InputSize {
            bytes: 827,
            gzip: true,
        });
        assert_eq!(side_threads(None, plain(827), gz, 16), (None, None));
        assert_eq!(side_threads(None, gz, gz, 16), (Some(8), Some(8)));
        // A caller's count is kept on both sides.
        assert_eq!(
            side_threads(Some(3), plain(1), plain(1), 16),
            (Some(3), Some(3))
        );
    }
}
