//! The main job: one trace in, the hot kernels out as task groups with their
//! sources, kinds and rewrite-route verdicts (cli.md, `kernlens triage`).
//!
//! [`Triage`] only composes the stages, in the order their data flows:
//!
//! 1. **trace** reads the trace once; the same pass feeds locate's launcher
//!    index through the trace observer (locate.md "Launcher evidence from traces: Building the index");
//! 2. **gate** decides on that analysis, its graph guard answering from the
//!    analysis' whole-trace coverage block, so the trace is not read again
//!    (gate.md "High-idle gate with graph guard: The probe must read the raw, un-split trace");
//! 3. **locate** finds every hot kernel's source in one `locate_many` batch
//!    (skipped when the gate suppresses: no tree is walked for rows that are
//!    held back);
//! 4. **ident** groups the rows by operator identity, which includes the
//!    located file, so locating comes first (ident.md "Task groups");
//! 5. **gate** states each group's rewrite-route verdict (gate.md "Rewrite-route eligibility policy").
//!
//! Rows whose source was not found (vendor-library kernels such as
//! `nvjet_*`, or no search root at all) are still listed, each as a group of
//! its own, so the shares of the listed groups add up to the share of kernel
//! time the hot rows cover.

mod report;

use std::collections::HashMap;

use kernlens_gate::{
    GateInputs, GateReport, RewriteRequest, Thresholds, analysis_probe, evaluate,
    evaluate_rewrite_route,
};
use kernlens_ident::{GroupOptions, SourceRef, TraceRow, group_rows};
use kernlens_locate::{
    Confidence, KindContext, LauncherIndexBuilder, LauncherOptions, LocateError, LocateOptions,
    LocateResult, Locator, LocatorBuilder, Method, SearchRoot, source_kind_for,
};
use kernlens_trace::{Analysis, EventObserver, Options, TraceError, TraceSource};

pub use report::{
    GroupSource, TRIAGE_SCHEMA, TriageGroup, TriageReport, Unlocated, not_found_reason,
};

/// How [`Triage`] reads, gates and groups.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TriageOptions {
    /// Hot kernel rows taken from the trace (trace.md `top_k`; 0 keeps all).
    pub top_k: usize,
    /// Idle and low-compute thresholds of the gate.
    pub thresholds: Thresholds,
    /// Apply the gate's verdict. When false the verdict is still computed
    /// and reported, but a suppressing verdict holds nothing back.
    pub apply_gate: bool,
    /// The operator opted in to the rewrite route (gate.md "Rewrite-route eligibility policy").
    pub rewrite_opt_in: bool,
    /// An explicit per-attempt budget in minutes; the policy default when `None`.
    pub rewrite_budget_minutes: Option<u32>,
    /// Trace-reader threads (`None`: the rayon default).
    pub threads: Option<usize>,
    /// The part of the trace read, gated and grouped (trace.md windows; default the whole
    /// trace).
    pub window: kernlens_trace::WindowMode,
    /// How launcher evidence is taken from the trace's Python frames.
    pub launcher: LauncherOptions,
    /// Cache directories that mark runtime-generated sources.
    pub kind: KindContext,
    /// Where relative source paths resolve when identities are built.
    pub group: GroupOptions,
}

impl Default for TriageOptions {
    fn default() -> Self {
        TriageOptions {
            top_k: 10,
            thresholds: Thresholds::default(),
            apply_gate: true,
            rewrite_opt_in: false,
            rewrite_budget_minutes: None,
            threads: None,
            window: kernlens_trace::WindowMode::Full,
            launcher: LauncherOptions::default(),
            kind: KindContext::default(),
            group: GroupOptions::default(),
        }
    }
}

impl TriageOptions {
    /// The defaults: 10 hot rows, default thresholds, the gate applied, no rewrite opt-in.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same options taking `top_k` hot rows (0 keeps all).
    pub fn with_top_k(mut self, top_k: usize) -> Self {
        self.top_k = top_k;
        self
    }

    /// The same options with the gate's thresholds.
    pub fn with_thresholds(mut self, thresholds: Thresholds) -> Self {
        self.thresholds = thresholds;
        self
    }

    /// The same options applying (or only reporting) the gate's verdict.
    pub fn with_apply_gate(mut self, apply_gate: bool) -> Self {
        self.apply_gate = apply_gate;
        self
    }

    /// The same options with the operator's rewrite-route opt-in set or cleared.
    pub fn with_rewrite_opt_in(mut self, opted_in: bool) -> Self {
        self.rewrite_opt_in = opted_in;
        self
    }

    /// The same options with an explicit per-attempt budget in minutes (or the policy default).
    pub fn with_rewrite_budget_minutes(mut self, minutes: Option<u32>) -> Self {
        self.rewrite_budget_minutes = minutes;
        self
    }

    /// The same options with this many trace-reader threads (`None`: the rayon default).
    pub fn with_threads(mut self, threads: Option<usize>) -> Self {
        self.threads = threads;
        self
    }

    /// The same options taking launcher evidence this way.
    pub fn with_launcher(mut self, launcher: LauncherOptions) -> Self {
        self.launcher = launcher;
        self
    }

    /// The same options with these cache directories marking runtime-generated sources.
    pub fn with_kind_context(mut self, kind: KindContext) -> Self {
        self.kind = kind;
        self
    }

    /// The same options resolving relative source paths this way when grouping.
    pub fn with_group(mut self, group: GroupOptions) -> Self {
        self.group = group;
        self
    }
}

/// Why a triage could not run. A trace with recovered structural problems,
/// a kernel without a source and a missing search root are not errors: they
/// are reported in the [`TriageReport`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TriageError {
    /// The trace could not be read.
    #[error("cannot read trace '{file}': {source}")]
    Trace {
        /// The trace as resolved (or its label).
        file: String,
        /// Why the reader failed.
        #[source]
        source: TraceError,
    },
    /// The source search could not be set up (other than having no root).
    #[error("cannot set up the source search: {0}")]
    Locate(#[source] LocateError),
}

/// A step of [`Triage::run_with_progress`], announced before it starts, so a
/// front end can show what long work is under way.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Phase<'a> {
    /// Reading the trace (one pass).
    ReadTrace {
        /// The trace as resolved.
        file: &'a str,
    },
    /// Walking the roots and scanning their files for the hot kernels.
    Locate {
        /// Kernel names searched in one batch.
        kernels: usize,
        /// The search roots.
        roots: &'a [SearchRoot],
    },
    /// Bytes of the trace read so far, as stored (compressed bytes for gzip); `total` is
    /// None for a stream of unknown length. Sent a few times per megabyte at most.
    ReadBytes {
        /// Bytes read.
        done: u64,
        /// Bytes in all, when known.
        total: Option<u64>,
    },
    /// All work is done.
    Finished,
}

/// Forwards the trace reader's byte progress as [`Phase::ReadBytes`].
struct PhaseBytes<'p, 'a> {
    to: &'p mut dyn FnMut(Phase<'a>),
}

impl kernlens_trace::ProgressSink for PhaseBytes<'_, '_> {
    fn progress(&mut self, done: u64, total: Option<u64>) {
        (self.to)(Phase::ReadBytes { done, total });
    }
}

/// Two observers of one read: the launcher index and a caller's, and which of them took
/// the event last offered by its numbers (the whole event then goes to the other only).
struct Tee<'a, 'b>(
    &'a mut dyn EventObserver,
    &'b mut dyn EventObserver,
    (bool, bool),
);

impl EventObserver for Tee<'_, '_> {
    fn observe(&mut self, event: &kernlens_trace::ObservedEvent<'_>) {
        // An event refused by its numbers comes here next (EventObserver::observe_numbered);
        // any other was offered to neither.
        let (first, second) = std::mem::take(&mut self.2);
        if !first {
            self.0.observe(event);
        }
        if !second {
            self.1.observe(event);
        }
    }

    fn observe_numbered(&mut self, event: &kernlens_trace::NumberedEvent) -> bool {
        let taken = (
            self.0.observe_numbered(event),
            self.1.observe_numbered(event),
        );
        // Taken by both: no `observe` follows, so nothing is left pending.
        let both = taken == (true, true);
        self.2 = if both { (false, false) } else { taken };
        both
    }

    fn read_done(&mut self) {
        self.0.read_done();
        self.1.read_done();
    }

    fn observes_copies(&self) -> bool {
        self.0.observes_copies() || self.1.observes_copies()
    }
}

/// Where sources are searched, or why they are not.
#[derive(Debug)]
enum Sources {
    Roots(Box<Locator>),
    Unavailable(String),
}

/// The triage pipeline. Holds the source search, so a second run over
/// another trace reuses what the first one scanned.
///
/// ```
/// use kernlens::locate::{DiscoveryEnv, Locator};
/// use kernlens::trace::TraceSource;
/// use kernlens::{Triage, TriageOptions};
///
/// let dir = tempfile::tempdir()?;
/// std::fs::write(
///     dir.path().join("ops.py"),
///     "import triton\n\n@triton.jit\ndef _scale_kernel(x):\n    pass\n",
/// )?;
/// let trace = TraceSource::from_bytes(
///     "t.json",
///     br#"{"traceEvents":[
///         {"ph":"X","cat":"kernel","name":"_scale_kernel","ts":0,"dur":60},
///         {"ph":"X","cat":"kernel","name":"nvjet_hsh_64x8_2cta","ts":70,"dur":30}]}"#
///         .to_vec(),
/// );
/// let roots = Locator::builder().root(dir.path()).discovery(DiscoveryEnv::empty());
/// let report = Triage::new(roots, TriageOptions::default())?.run(&trace)?;
///
/// let groups = &report.task_groups;
/// assert_eq!(groups[0].operation, "_scale_kernel");
/// assert!(groups[0].source.path.as_ref().is_some_and(|p| p.ends_with("ops.py")));
/// assert_eq!(groups[0].source.kind.as_str(), "triton");
/// assert!(groups[0].rewrite_route.eligible());
/// // The cuBLAS kernel is listed too, not found, with the reason.
/// assert!(!groups[1].source.found);
/// assert_eq!(groups[1].source.reason.map(|r| r.as_str()), Some("vendor_binary"));
/// let listed: f64 = groups.iter().map(|g| g.share).sum();
/// assert!((listed - 1.0).abs() < 1e-12);
/// println!("{}", report.to_json()?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Triage {
    options: TriageOptions,
    sources: Sources,
}

impl Triage {
    /// A pipeline searching the roots `locator` resolves. Having no root at
    /// all is not an error: the report then carries everything but the
    /// sources, and [`TriageReport::sources_unavailable`] says why.
    pub fn new(locator: LocatorBuilder, options: TriageOptions) -> Result<Triage, TriageError> {
        let sources = match locator.build() {
            Ok(locator) => Sources::Roots(Box::new(locator)),
            Err(err @ LocateError::NoSearchRoots { .. }) => Sources::Unavailable(err.to_string()),
            Err(err) => return Err(TriageError::Locate(err)),
        };
        Ok(Triage { options, sources })
    }

    /// A pipeline over a locator already built (its caches are kept).
    pub fn with_locator(locator: Locator, options: TriageOptions) -> Triage {
        Triage {
            options,
            sources: Sources::Roots(Box::new(locator)),
        }
    }

    /// The options.
    pub fn options(&self) -> &TriageOptions {
        &self.options
    }

    /// The source search, when there is at least one root.
    pub fn locator(&self) -> Option<&Locator> {
        match &self.sources {
            Sources::Roots(locator) => Some(locator),
            Sources::Unavailable(_) => None,
        }
    }

    /// Triage of one trace.
    pub fn run(&mut self, source: &TraceSource) -> Result<TriageReport, TriageError> {
        self.run_with_progress(source, &mut |_| {})
    }

    /// [`Triage::run`], announcing each long step to `progress` before it starts.
    pub fn run_with_progress(
        &mut self,
        source: &TraceSource,
        progress: &mut dyn FnMut(Phase<'_>),
    ) -> Result<TriageReport, TriageError> {
        self.run_observed(source, progress, None)
    }

    /// [`Triage::run_with_progress`], also handing `observer` every event the one read
    /// observes (the HTML report's timeline lanes ride along this way).
    pub fn run_observed(
        &mut self,
        source: &TraceSource,
        progress: &mut dyn FnMut(Phase<'_>),
        mut observer: Option<&mut dyn EventObserver>,
    ) -> Result<TriageReport, TriageError> {
        let options = &self.options;
        let mut trace_options = Options::default();
        trace_options.top_k = options.top_k;
        trace_options.threads = options.threads;
        trace_options.window = options.window;

        progress(Phase::ReadTrace {
            file: source.file(),
        });
        // One pass: the launcher observer rides along only when there is a
        // tree to search, since its evidence serves locate alone.
        let mut bytes = PhaseBytes { to: progress };
        let (analysis, launchers) = match &self.sources {
            Sources::Roots(_) => {
                let mut builder = LauncherIndexBuilder::new(options.launcher.clone());
                let analysis = match observer.as_deref_mut() {
                    Some(extra) => kernlens_trace::analyze_with_progress(
                        source,
                        &trace_options,
                        Some(&mut Tee(&mut builder, extra, (false, false))),
                        &mut bytes,
                    ),
                    None => kernlens_trace::analyze_with_progress(
                        source,
                        &trace_options,
                        Some(&mut builder),
                        &mut bytes,
                    ),
                };
                (analysis, Some(builder.finish()))
            }
            Sources::Unavailable(_) => (
                kernlens_trace::analyze_with_progress(
                    source,
                    &trace_options,
                    observer.map(|o| o as &mut dyn EventObserver),
                    &mut bytes,
                ),
                None,
            ),
        };
        let analysis = analysis.map_err(|source_err| TriageError::Trace {
            file: source.file().to_owned(),
            source: source_err,
        })?;

        let inputs = GateInputs::from_analysis(&analysis);
        let verdict = evaluate(&inputs, &options.thresholds, analysis_probe(&analysis));
        let gate = GateReport::new(&inputs, &options.thresholds, verdict);
        let held_back = options.apply_gate && gate.decision == kernlens_gate::Decision::Suppress;

        let (roots, root_warnings, unavailable) = match &self.sources {
            Sources::Roots(locator) => {
                (locator.roots().to_vec(), locator.warnings().to_vec(), None)
            }
            Sources::Unavailable(why) => (Vec::new(), Vec::new(), Some(why.clone())),
        };

        if held_back {
            progress(Phase::Finished);
            return Ok(TriageReport {
                suppressed: analysis.kernels.len(),
                analysis,
                gate,
                task_groups: Vec::new(),
                roots,
                root_warnings,
                sources_unavailable: unavailable,
                group_warnings: Vec::new(),
                baseline: None,
            });
        }

        let names: Vec<&str> = analysis.kernels.iter().map(|k| k.name.as_str()).collect();
        let located: Option<Vec<LocateResult>> = match &mut self.sources {
            Sources::Roots(locator) => {
                progress(Phase::Locate {
                    kernels: names.len(),
                    roots: &roots,
                });
                let mut locate_options =
                    LocateOptions::default().with_kind_context(options.kind.clone());
                if let Some(index) = launchers {
                    locate_options = locate_options.with_launchers(index);
                }
                Some(locator.locate_many(&names, &locate_options))
            }
            Sources::Unavailable(_) => None,
        };
        let (task_groups, group_warnings) = build_groups(&analysis, located, options);
        progress(Phase::Finished);
        Ok(TriageReport {
            analysis,
            gate,
            suppressed: 0,
            task_groups,
            roots,
            root_warnings,
            sources_unavailable: unavailable,
            group_warnings,
            baseline: None,
        })
    }
}

/// Groups the hot rows by identity, every row without a source listed as a
/// group of its own; ident orders and numbers them all (total time
/// descending, ties by first appearance; `tg001`, `tg002`, …).
fn build_groups(
    analysis: &Analysis,
    located: Option<Vec<LocateResult>>,
    options: &TriageOptions,
) -> (Vec<TriageGroup>, Vec<String>) {
    let kernels = &analysis.kernels;
    let located: Vec<Option<LocateResult>> = match located {
        Some(results) => results.into_iter().map(Some).collect(),
        None => kernels.iter().map(|_| None).collect(),
    };
    let rows: Vec<TraceRow> = kernels
        .iter()
        .zip(&located)
        .map(|(kernel, result)| {
            let row = TraceRow::new(kernel.name.clone(), kernel.name.clone())
                .with_calls(kernel.calls)
                .with_total_us(kernel.total_us)
                .with_share(kernel.share);
            match result.as_ref().and_then(source_ref) {
                Some(reference) => row.with_source_ref(reference),
                None => row,
            }
        })
        .collect();
    let grouping = group_rows(&rows, &options.group.clone().with_lone_rows(true));
    let row_of: HashMap<&str, usize> = kernels
        .iter()
        .enumerate()
        .map(|(index, kernel)| (kernel.name.as_str(), index))
        .collect();

    let groups = grouping
        .groups
        .into_iter()
        .map(|group| {
            let primary = row_of.get(group.primary_kernel_id.as_str()).copied();
            let source = match primary {
                Some(row) => group_source(&kernels[row].name, located[row].as_ref(), options),
                None => GroupSource::unlocated(&group.operation, &options.kind, None),
            };
            TriageGroup {
                rewrite_route: rewrite_route(&group.operation, &source, options),
                id: group.id,
                operation: group.operation,
                identity_key: group.identity_key,
                category: group.category,
                total_us: group.total_us,
                calls: group.calls,
                share: group.share,
                kernels: group.kernel_ids,
                source,
                locate: primary.and_then(|row| located[row].clone()),
            }
        })
        .collect();
    let warnings = grouping.warnings.into_iter().map(|w| w.message).collect();
    (groups, warnings)
}

/// The located file as ident's source reference; `None` when not found.
fn source_ref(result: &LocateResult) -> Option<SourceRef> {
    if !result.found {
        return None;
    }
    let path = result.path.as_ref()?;
    let mut reference = SourceRef::new(path.to_string_lossy());
    if let Some(line) = result.line.and_then(|line| u32::try_from(line).ok()) {
        reference = reference.with_line(line);
    }
    if let Some(function) = &result.function {
        reference = reference.with_function(function.clone());
    }
    Some(reference)
}

fn group_source(name: &str, result: Option<&LocateResult>, options: &TriageOptions) -> GroupSource {
    match result {
        Some(result) => GroupSource::from_result(result),
        None => GroupSource::unlocated(name, &options.kind, Some(Unlocated::NoSearchRoots)),
    }
}

fn rewrite_route(
    operation: &str,
    source: &GroupSource,
    options: &TriageOptions,
) -> kernlens_gate::RewriteVerdict {
    let request = RewriteRequest::new(operation, source.kind)
        .with_explicit_budget(options.rewrite_budget_minutes)
        .with_opted_in(options.rewrite_opt_in);
    evaluate_rewrite_route(&request)
}

impl GroupSource {
    /// The source fields of a locate result (locate.md "Result record").
    fn from_result(result: &LocateResult) -> GroupSource {
        GroupSource {
            found: result.found,
            path: result.path.clone(),
            line: result.line,
            function: result.function.clone(),
            kind: result.kind,
            method: result.method,
            reason: if result.found {
                None
            } else {
                Some(not_found_reason(result))
            },
            confidence: result.confidence,
        }
    }

    /// No search ran for `name`: its kind is what the name alone tells.
    /// A vendor-library kernel says so whether or not a tree was searched.
    fn unlocated(name: &str, kind: &KindContext, reason: Option<Unlocated>) -> GroupSource {
        let kind = source_kind_for(name, None, kind);
        let reason = match kind {
            kernlens_ident::SourceKind::VendorBinary => Some(Unlocated::VendorBinary),
            _ => reason,
        };
        GroupSource {
            found: false,
            path: None,
            line: None,
            function: None,
            kind,
            method: Method::NotFound,
            reason,
            confidence: Confidence::None,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::Tee;
    use kernlens_trace::{EventObserver, NumberedEvent, ObservedEvent, Options, TraceSource};
    use std::collections::HashMap;

    /// `(cat, name, ts_ns, dur_ns, correlation)` of every event an observer was handed.
    type Seen = Vec<(String, String, i64, i64, Option<i64>)>;

    /// Takes a device event by its numbers when `numbered` and its name is known.
    #[derive(Default)]
    struct Recorder {
        numbered: bool,
        names: HashMap<u64, String>,
        seen: Seen,
    }

    impl EventObserver for Recorder {
        fn observe(&mut self, e: &ObservedEvent<'_>) {
            if let Some(id) = e.name_id {
                self.names.insert(id, e.name.to_owned());
            }
            let (cat, name) = (e.cat.to_owned(), e.name.to_owned());
            self.seen
                .push((cat, name, e.ts_ns, e.dur_ns, e.correlation));
        }

        fn observe_numbered(&mut self, e: &NumberedEvent) -> bool {
            let Some(name) = self.names.get(&e.name_id).filter(|_| self.numbered) else {
                return false;
            };
            let (cat, name) = (e.kind.cat().to_owned(), name.clone());
            self.seen
                .push((cat, name, e.ts_ns, e.dur_ns, e.correlation));
            true
        }
    }

    fn read(observer: &mut dyn EventObserver) {
        let trace = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/traces/eager.json.gz");
        let source = TraceSource::open(trace).unwrap();
        kernlens_trace::analyze_observed(&source, &Options::default(), observer).unwrap();
    }

    /// Whichever side takes an event by its numbers, each side of the tee sees every event
    /// once, in file order, as it would alone.
    #[test]
    fn each_side_of_a_tee_sees_every_event_once() {
        let mut alone = Recorder::default();
        read(&mut alone);
        for (first, second) in [(true, false), (false, true), (true, true), (false, false)] {
            let mut a = Recorder {
                numbered: first,
                ..Recorder::default()
            };
            let mut b = Recorder {
                numbered: second,
                ..Recorder::default()
            };
            read(&mut Tee(&mut a, &mut b, (false, false)));
            assert_eq!(a.seen, alone.seen, "{first} {second}");
            assert_eq!(b.seen, alone.seen, "{first} {second}");
        }
    }
}
