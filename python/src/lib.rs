//! # kernlens-py
//!
//! The native half of the Python package `kernlens` (module `kernlens._native`): each function
//! calls the library entry point the matching CLI command calls (`src/cli/*.rs`) and hands back
//! the command's versioned JSON document as Python objects (dicts, lists, floats; converted
//! from the library's serde types by `pythonize`, so every float is the f64 the CLI prints).
//! The pure-Python layer (`python/kernlens/`) wraps those documents in attribute objects and
//! DataFrames. No analysis happens here: this crate parses arguments, releases the GIL around
//! reads, and maps errors onto the package's exception classes with the CLI's one-line messages.
//!
//! It is a member of the kernlens workspace (one `Cargo.lock`), built as a cdylib that does not
//! link libpython, so `cargo test --workspace` needs no Python toolchain; see python/README.md.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kernlens::env::Env;
use kernlens_gate::lane::{self, LaneHint, LaneIdleConfig, LaneIdleState, ManualClock};
use kernlens_trace::{Cycles, Options, ProgressSink, TraceSource, WindowMode};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pythonize::{depythonize, pythonize};

create_exception!(
    kernlens,
    KernlensError,
    PyException,
    "Base class of every kernlens error."
);
create_exception!(
    kernlens,
    TraceError,
    KernlensError,
    "A trace could not be opened or read (missing file, not a trace, unreadable gzip)."
);
create_exception!(
    kernlens,
    LocateError,
    KernlensError,
    "The source search could not be set up."
);
create_exception!(
    kernlens,
    ScratchError,
    KernlensError,
    "A scratch workspace could not be created, exported, released or swept."
);
create_exception!(
    kernlens,
    UsageError,
    KernlensError,
    "An argument the CLI would refuse as a usage error (a bad window, a threshold outside 0..=100)."
);

/// `what: why`, the CLI's one-line failure (without its `kernlens: ` prefix).
fn failure<E: pyo3::PyTypeInfo>(
    what: impl std::fmt::Display,
    why: impl std::fmt::Display,
) -> PyErr {
    PyErr::new::<E, _>(format!("{what}: {why}"))
}

/// A library value as Python objects, shaped as its JSON document: through a
/// `serde_json::Value` first, so tuples (a kernel's grid) become lists as in `json.loads` of the
/// CLI's output. Numbers cross as the same f64/i64/u64, never as text.
fn to_py<'py, T: serde::Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    let value = serde_json::to_value(value)
        .map_err(|e| failure::<KernlensError>("cannot encode the document", e))?;
    pythonize(py, &value).map_err(PyErr::from)
}

/// The window a `window=` argument names (the CLI's `--window` values); `None` is the whole trace.
fn window_of(spec: Option<&str>) -> PyResult<WindowMode> {
    match spec {
        None => Ok(WindowMode::Full),
        Some(spec) => kernlens::window::window_mode(spec)
            .map_err(|why| failure::<UsageError>(format_args!("invalid window '{spec}'"), why)),
    }
}

fn cycles_of(cycle: &str) -> PyResult<Cycles> {
    match cycle {
        "latest" => Ok(Cycles::Latest),
        "all" => Ok(Cycles::All),
        other => Err(failure::<UsageError>(
            format_args!("invalid cycle '{other}'"),
            "expected latest or all",
        )),
    }
}

/// A percentage argument: the CLI's rule (0..=100) for its threshold flags.
fn pct_of(name: &str, value: Option<f64>) -> PyResult<Option<f64>> {
    value
        .map(|v| {
            kernlens_gate::parse_pct(&v.to_string()).map_err(|problem| {
                failure::<UsageError>(
                    format_args!("invalid {name} {v}"),
                    format_args!("{problem}; a threshold is a percentage in 0..=100"),
                )
            })
        })
        .transpose()
}

/// Opens a trace argument as the CLI's `open_trace` does: a path that cannot be reached keeps
/// the OS reason, naming the path once.
fn open_trace(input: &Path) -> PyResult<TraceSource> {
    let what = || format!("cannot open trace '{}'", input.display());
    std::fs::metadata(input).map_err(|e| failure::<TraceError>(what(), e))?;
    TraceSource::open(input).map_err(|e| failure::<TraceError>(what(), e))
}

/// A Python progress callback `(done, total)` fed by the reader, called at most every
/// `interval` (and at the end), so a GB-sized read costs a handful of GIL acquisitions.
/// An exception from the callback stops further calls and is raised after the read.
struct Callback {
    callback: Py<PyAny>,
    interval: Duration,
    last: Option<Instant>,
    error: Option<PyErr>,
}

impl Callback {
    fn new(callback: Py<PyAny>) -> Self {
        Callback {
            callback,
            interval: Duration::from_millis(100),
            last: None,
            error: None,
        }
    }

    /// The callback's exception, if it raised one.
    fn finish(self) -> PyResult<()> {
        self.error.map_or(Ok(()), Err)
    }
}

impl ProgressSink for Callback {
    fn progress(&mut self, done: u64, total: Option<u64>) {
        if self.error.is_some() {
            return;
        }
        let now = Instant::now();
        let last = total.is_some_and(|t| done >= t);
        if !last
            && self
                .last
                .is_some_and(|at| now.duration_since(at) < self.interval)
        {
            return;
        }
        self.last = Some(now);
        Python::attach(|py| {
            if let Err(e) = self.callback.call1(py, (done, total)) {
                self.error = Some(e);
            }
        });
    }
}

/// Reads `source` with the GIL released, feeding `progress` when given.
fn read(
    py: Python<'_>,
    source: &TraceSource,
    opts: &Options,
    progress: Option<Py<PyAny>>,
) -> PyResult<Result<kernlens_trace::Analysis, kernlens_trace::TraceError>> {
    match progress {
        None => Ok(py.detach(|| kernlens_trace::analyze(source, opts))),
        Some(callback) => {
            let mut sink = Callback::new(callback);
            let result =
                py.detach(|| kernlens_trace::analyze_with_progress(source, opts, None, &mut sink));
            sink.finish()?;
            Ok(result)
        }
    }
}

/// `kernlens summary PATH --json` (with every kernel row kept for the categories): the
/// `kernlens.summary/1` document and the categories table.
#[pyfunction]
#[pyo3(signature = (path, *, window=None, top=10, threads=None, progress=None, max_input_bytes=None))]
fn summary<'py>(
    py: Python<'py>,
    path: PathBuf,
    window: Option<&str>,
    top: usize,
    threads: Option<usize>,
    progress: Option<Py<PyAny>>,
    max_input_bytes: Option<u64>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let mut opts = Options::default()
        .with_window(window_of(window)?)
        .with_threads(threads)
        // Every row is kept for the category breakdown, then cut to `top`, as the CLI does.
        .with_top_k(0);
    opts.limits.max_input_bytes = max_input_bytes;
    let source = open_trace(&path)?;
    let mut analysis = read(py, &source, &opts, progress)?.map_err(|e| {
        failure::<TraceError>(format_args!("cannot read trace '{}'", path.display()), e)
    })?;
    let categories = kernlens::categories::categories(&analysis.kernels);
    if top > 0 {
        analysis.kernels.truncate(top);
        analysis.ops.truncate(top);
    }
    Ok((to_py(py, &analysis.to_json())?, to_py(py, &categories)?))
}

/// `kernlens summary DIR --all-ranks --json`: the `kernlens.ranks/1` document.
#[pyfunction]
#[pyo3(signature = (dir, *, window=None, top=10, cycle="latest"))]
fn all_ranks<'py>(
    py: Python<'py>,
    dir: PathBuf,
    window: Option<&str>,
    top: usize,
    cycle: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let opts = rank_options(window, top, cycle)?;
    let report = py
        .detach(|| kernlens_trace::analyze_all_ranks(&dir, &opts))
        .map_err(|e| {
            failure::<TraceError>(format_args!("cannot read ranks of '{}'", dir.display()), e)
        })?;
    to_py(py, &report.to_json())
}

fn rank_options(window: Option<&str>, top: usize, cycle: &str) -> PyResult<Options> {
    Ok(Options::default()
        .with_window(window_of(window)?)
        .with_top_k(top)
        .with_cycles(cycles_of(cycle)?))
}

/// The files `all_ranks` would read under `dir`, in report order, as plain dicts (one task
/// each for a scheduler).
#[pyfunction]
#[pyo3(signature = (dir, *, cycle="latest"))]
fn plan_ranks<'py>(py: Python<'py>, dir: PathBuf, cycle: &str) -> PyResult<Bound<'py, PyAny>> {
    let plan = kernlens_trace::plan_ranks(&dir, cycles_of(cycle)?).map_err(|e| {
        failure::<TraceError>(format_args!("cannot read ranks of '{}'", dir.display()), e)
    })?;
    to_py(py, &plan)
}

/// Explicit files as an all-ranks plan: one entry each, ranked by its name's rank tag.
#[pyfunction]
fn plan_files<'py>(py: Python<'py>, paths: Vec<PathBuf>) -> PyResult<Bound<'py, PyAny>> {
    to_py(py, &kernlens_trace::plan_files(&paths))
}

/// Reads one planned file (a dict from `plan_ranks`) into its outcome: the summary document
/// and busy%, or the error text. A failed rank is an outcome, not an exception, as in
/// all-ranks mode.
#[pyfunction]
#[pyo3(signature = (file, *, window=None, top=10))]
fn analyze_rank<'py>(
    py: Python<'py>,
    file: &Bound<'py, PyAny>,
    window: Option<&str>,
    top: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let file: kernlens_trace::RankFile =
        depythonize(file).map_err(|e| failure::<UsageError>("not a planned rank file", e))?;
    let opts = Options::default()
        .with_window(window_of(window)?)
        .with_top_k(top);
    let outcome = py.detach(|| file.analyze(&opts).outcome());
    to_py(py, &outcome)
}

/// The `kernlens.ranks/1` document of `input` from `analyze_rank` outcomes in plan order.
#[pyfunction]
#[pyo3(signature = (input, outcomes, *, cycle="latest"))]
fn ranks_document<'py>(
    py: Python<'py>,
    input: &str,
    outcomes: &Bound<'py, PyAny>,
    cycle: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let outcomes: Vec<kernlens_trace::RankOutcome> = depythonize(outcomes)
        .map_err(|e| failure::<UsageError>("not a list of rank outcomes", e))?;
    to_py(
        py,
        &kernlens_trace::ranks_document(input, cycles_of(cycle)?, &outcomes),
    )
}

/// `kernlens split PATH --window SPEC -o OUT --json`: the `kernlens.split/1` report. The chunk
/// is written to a temporary file renamed over `out` once complete.
#[pyfunction]
#[pyo3(signature = (path, window, out, *, progress=None))]
fn split<'py>(
    py: Python<'py>,
    path: PathBuf,
    window: &str,
    out: PathBuf,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let window = match window_of(Some(window))? {
        WindowMode::Full => {
            return Err(failure::<UsageError>(
                "invalid window 'none'",
                "a split needs a window: auto, annotation, cpu-steps or START_US:END_US",
            ));
        }
        mode => mode,
    };
    let what = || format!("cannot split '{}'", path.display());
    let source = open_trace(&path)?;
    if let Some(input) = source.path() {
        kernlens::output::ensure_not_input(&out, input)
            .map_err(|e| failure::<TraceError>(what(), e))?;
    }
    let mut file =
        kernlens::output::AtomicFile::create(&out).map_err(|e| failure::<TraceError>(what(), e))?;
    let opts = kernlens_trace::SplitOptions::default()
        .with_gzip(out.extension().is_some_and(|e| e == "gz"));
    let mut sink = progress.map(Callback::new);
    let report = py.detach(|| match sink.as_mut() {
        Some(sink) => {
            kernlens_trace::split_window_with_progress(&source, &window, &mut file, &opts, sink)
        }
        None => kernlens_trace::split_window(&source, &window, &mut file, &opts),
    });
    if let Some(sink) = sink {
        sink.finish()?;
    }
    let report = report.map_err(|e| failure::<TraceError>(what(), e))?;
    file.commit()
        .map_err(|e| failure::<TraceError>(what(), e))?;
    to_py(py, &report.document())
}

/// `kernlens gate PATH --json`: the `kernlens.gate/1` document. Thresholds: the arguments,
/// else `KERNLENS_IDLE_THRESHOLD_PCT` / `KERNLENS_MIN_COMPUTE_PCT`, else the defaults.
#[pyfunction]
#[pyo3(signature = (path, *, idle_threshold=None, min_compute=None, progress=None))]
fn gate<'py>(
    py: Python<'py>,
    path: PathBuf,
    idle_threshold: Option<f64>,
    min_compute: Option<f64>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Bound<'py, PyAny>, Vec<String>)> {
    let thresholds = Env::from_process().thresholds(
        pct_of("idle_threshold", idle_threshold)?,
        pct_of("min_compute", min_compute)?,
    );
    let source = open_trace(&path)?;
    let analysis = read(py, &source, &Options::default(), progress)?.map_err(|e| {
        failure::<TraceError>(format_args!("cannot read trace '{}'", source.file()), e)
    })?;
    let inputs = kernlens_gate::GateInputs::from_analysis(&analysis);
    let verdict = kernlens_gate::evaluate(
        &inputs,
        &thresholds,
        kernlens_gate::analysis_probe(&analysis),
    );
    let report = kernlens_gate::GateReport::new(&inputs, &thresholds, verdict);
    // The document has no trace block; the stream errors come beside it for `.stream_errors`.
    Ok((to_py(py, &report.document())?, analysis.stream_errors))
}

/// `kernlens ident NAME... --json`: the `kernlens.ident/1` document.
#[pyfunction]
fn ident<'py>(py: Python<'py>, names: Vec<String>) -> PyResult<Bound<'py, PyAny>> {
    let results: Vec<kernlens_ident::Identification> = names
        .into_iter()
        .map(kernlens_ident::Identification::of)
        .collect();
    to_py(py, &kernlens_ident::IdentDocument::new(&results))
}

/// `kernlens locate NAME... [--root DIR...] [--trace TRACE] [--no-discover] --json`: the
/// `kernlens.locate/1` document and the root warnings.
#[pyfunction]
#[pyo3(signature = (names, *, roots=Vec::new(), trace=None, discover=true))]
fn locate<'py>(
    py: Python<'py>,
    names: Vec<String>,
    roots: Vec<PathBuf>,
    trace: Option<PathBuf>,
    discover: bool,
) -> PyResult<(Bound<'py, PyAny>, Vec<String>)> {
    let env = Env::from_process();
    let mut locator = py
        .detach(|| env.locator(&roots, discover).build())
        .map_err(|e| failure::<LocateError>("cannot locate kernel sources", e))?;
    let warnings = locator
        .warnings()
        .iter()
        .map(|w| w.message.clone())
        .collect();
    let mut opts = kernlens_locate::LocateOptions::default().with_kind_context(env.kind_context());
    if let Some(trace) = &trace {
        let source = open_trace(trace)?;
        let mut launchers =
            kernlens_locate::LauncherIndexBuilder::new(kernlens_locate::LauncherOptions::default());
        py.detach(|| {
            kernlens_trace::analyze_observed(&source, &Options::default(), &mut launchers)
        })
        .map_err(|e| {
            failure::<TraceError>(
                format_args!("cannot read launcher evidence from '{}'", trace.display()),
                e,
            )
        })?;
        opts = opts.with_launchers(launchers.finish());
    }
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let results = py.detach(|| locator.locate_many(&names, &opts));
    let doc = kernlens_locate::LocateDocument::new(locator.roots(), &results);
    Ok((to_py(py, &doc)?, warnings))
}

/// The triage document, the root warnings, and why sources were not located (if so).
type TriageOut<'py> = (Bound<'py, PyAny>, Vec<String>, Option<String>);

/// `kernlens triage PATH --json`: the `kernlens.triage/1` document, the root warnings and why
/// sources were not located (if so).
#[pyfunction]
#[pyo3(signature = (
    path, *, roots=Vec::new(), window=None, top=10, idle_threshold=None, min_compute=None,
    gate=true, rewrite_opt_in=false, rewrite_budget_minutes=None, discover=true, progress=None
))]
#[allow(clippy::too_many_arguments)] // Python keyword arguments, one per CLI flag.
fn triage<'py>(
    py: Python<'py>,
    path: PathBuf,
    roots: Vec<PathBuf>,
    window: Option<&str>,
    top: usize,
    idle_threshold: Option<f64>,
    min_compute: Option<f64>,
    gate: bool,
    rewrite_opt_in: bool,
    rewrite_budget_minutes: Option<u32>,
    discover: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<TriageOut<'py>> {
    let env = Env::from_process();
    let mut options = kernlens::TriageOptions::default()
        .with_top_k(top)
        .with_thresholds(env.thresholds(
            pct_of("idle_threshold", idle_threshold)?,
            pct_of("min_compute", min_compute)?,
        ))
        .with_apply_gate(gate)
        .with_rewrite_opt_in(rewrite_opt_in)
        .with_rewrite_budget_minutes(rewrite_budget_minutes)
        .with_kind_context(env.kind_context());
    options.window = window_of(window)?;
    let locator = env.locator(&roots, discover);
    let mut triage = py
        .detach(|| kernlens::Triage::new(locator, options))
        .map_err(|e| failure::<LocateError>("cannot triage kernels", e))?;
    let source = open_trace(&path)?;
    let mut sink = progress.map(Callback::new);
    let report = py.detach(|| {
        let mut on_phase = |phase: kernlens::triage::Phase<'_>| {
            if let (kernlens::triage::Phase::ReadBytes { done, total }, Some(sink)) =
                (phase, sink.as_mut())
            {
                sink.progress(done, total);
            }
        };
        triage.run_observed(&source, &mut on_phase, None)
    });
    if let Some(sink) = sink {
        sink.finish()?;
    }
    let report = report.map_err(|e| failure::<TraceError>("cannot triage kernels", e))?;
    let warnings = report
        .root_warnings
        .iter()
        .map(|w| w.message.clone())
        .collect();
    Ok((
        to_py(py, &report)?,
        warnings,
        report.sources_unavailable.clone(),
    ))
}

/// `kernlens diff BEFORE AFTER --json`: the `kernlens.diff/1` document.
#[pyfunction]
#[pyo3(signature = (before, after, *, window=None, before_window=None, after_window=None, normalize="auto"))]
fn diff<'py>(
    py: Python<'py>,
    before: PathBuf,
    after: PathBuf,
    window: Option<&str>,
    before_window: Option<&str>,
    after_window: Option<&str>,
    normalize: &str,
) -> PyResult<Bound<'py, PyAny>> {
    use kernlens::diff::{DiffOptions, Normalize};
    let normalize = match normalize {
        "auto" => Normalize::Auto,
        "none" => Normalize::None,
        "step" => Normalize::Step,
        "wall" => Normalize::Wall,
        other => {
            return Err(failure::<UsageError>(
                format_args!("invalid normalize '{other}'"),
                "use auto, none, step or wall",
            ));
        }
    };
    let window = window_of(window)?;
    let options = DiffOptions::default()
        .with_before_window(before_window.map_or(Ok(window), |w| window_of(Some(w)))?)
        .with_after_window(after_window.map_or(Ok(window), |w| window_of(Some(w)))?)
        .with_normalize(normalize);
    let (before, after) = (open_trace(&before)?, open_trace(&after)?);
    let report = py
        .detach(|| kernlens::diff::diff_traces(&before, &after, &options))
        .map_err(|e| failure::<TraceError>("cannot diff traces", e))?;
    to_py(py, &report)
}

/// The mount table the CLI reads (`/proc/self/mountinfo`, else `/proc/mounts`).
fn mount_table() -> kernlens_scratch::MountTable {
    let info = kernlens_scratch::MountTable::read(Path::new("/proc/self/mountinfo"));
    if info.mounts.is_empty() {
        kernlens_scratch::MountTable::read(Path::new("/proc/mounts"))
    } else {
        info
    }
}

fn sweep_options(grace_secs: Option<u64>) -> kernlens_scratch::SweepOptions {
    kernlens_scratch::SweepOptions::default()
        .with_grace(grace_secs.map_or(kernlens_scratch::sweep::DEFAULT_GRACE, Duration::from_secs))
}

/// `scratch diff|release DIR`: the worktree itself, or the attempt directory holding it.
fn open_workspace(dir: &Path, what: &str) -> PyResult<kernlens_scratch::Workspace> {
    kernlens_scratch::Workspace::open(dir).or_else(|err| {
        let inner = dir.join("worktree");
        if inner.join(".git").exists() {
            kernlens_scratch::Workspace::open(&inner).map_err(|e| failure::<ScratchError>(what, e))
        } else {
            Err(failure::<ScratchError>(what, err))
        }
    })
}

/// `kernlens scratch create --json`: the `kernlens.scratch/1` create document. The session's
/// owner is this Python process unless `owner_pid` names another running one.
#[pyfunction]
#[pyo3(signature = (source, output, *, session=None, attempt=None, branch=None, repo=None, owner_pid=None, grace_secs=None))]
#[allow(clippy::too_many_arguments)] // Python keyword arguments, one per CLI flag.
fn scratch_create<'py>(
    py: Python<'py>,
    source: PathBuf,
    output: PathBuf,
    session: Option<String>,
    attempt: Option<String>,
    branch: Option<String>,
    repo: Option<PathBuf>,
    owner_pid: Option<u32>,
    grace_secs: Option<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    use kernlens_scratch::document::{CreateDocument, Refusal};
    use kernlens_scratch::{LocationRequest, OwnerMarker, PrepareRequest};
    let owner = match owner_pid {
        Some(pid) => OwnerMarker::of_pid(pid).ok_or_else(|| {
            failure::<ScratchError>(
                "scratch create",
                format_args!("owner_pid {pid}: no such running process"),
            )
        })?,
        None => OwnerMarker::current(),
    };
    let mut location = LocationRequest::new(output);
    location.session = session;
    location.attempt = attempt;
    let mut request = PrepareRequest::new(source, location);
    request.branch = branch;
    request.repo_hint = repo;
    request.env = Env::from_process().scratch();
    request.mounts = mount_table();
    let request = request
        .with_owner(owner)
        .with_sweep(sweep_options(grace_secs));
    match py.detach(|| kernlens_scratch::prepare(&request)) {
        Ok(ws) => to_py(py, &CreateDocument::created(&ws)),
        Err(err) if err.is_refusal() => {
            let exc = failure::<ScratchError>("scratch create", &err);
            // The refusal document rides on the exception, as the CLI prints it before failing.
            exc.value(py).setattr(
                "document",
                to_py(py, &CreateDocument::refused(Refusal::of(&err)))?,
            )?;
            Err(exc)
        }
        Err(err) => Err(failure::<ScratchError>("scratch create", err)),
    }
}

/// `kernlens scratch diff DIR --json`: per-file copies, a patch and export.json.
#[pyfunction]
#[pyo3(signature = (scratch_dir, *, out=None, best=None))]
fn scratch_diff<'py>(
    py: Python<'py>,
    scratch_dir: PathBuf,
    out: Option<PathBuf>,
    best: Option<String>,
) -> PyResult<Bound<'py, PyAny>> {
    let ws = open_workspace(&scratch_dir, "scratch diff")?;
    let report = py
        .detach(|| kernlens_scratch::export(&ws, &kernlens_scratch::ExportRequest::new(best, out)))
        .map_err(|e| failure::<ScratchError>("scratch diff", e))?;
    to_py(py, &kernlens_scratch::document::DiffDocument::new(&report))
}

/// `kernlens scratch release DIR --json`.
#[pyfunction]
fn scratch_release<'py>(py: Python<'py>, scratch_dir: PathBuf) -> PyResult<Bound<'py, PyAny>> {
    let ws = open_workspace(&scratch_dir, "scratch release")?;
    let session = kernlens_scratch::release(&ws)
        .map_err(|e| failure::<ScratchError>("scratch release", e))?;
    to_py(
        py,
        &kernlens_scratch::document::ReleaseDocument::new(session.as_deref()),
    )
}

/// `kernlens scratch sweep --json`.
#[pyfunction]
#[pyo3(signature = (*, local_root=None, grace_secs=None))]
fn scratch_sweep<'py>(
    py: Python<'py>,
    local_root: Option<PathBuf>,
    grace_secs: Option<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let root = match local_root {
        Some(root) => root,
        None => Env::from_process().scratch().local_root().0.ok_or_else(|| {
            failure::<ScratchError>(
                "scratch sweep",
                "no local scratch root: pass local_root or set KERNLENS_LOCAL_SCRATCH_ROOT, XDG_CACHE_HOME or HOME",
            )
        })?,
    };
    let report = py
        .detach(|| {
            kernlens_scratch::sweep(
                &root,
                &sweep_options(grace_secs),
                &kernlens_scratch::SystemProbe::new(),
            )
        })
        .map_err(|e| failure::<ScratchError>("scratch sweep", e))?;
    to_py(
        py,
        &kernlens_scratch::document::SweepDocument::new(&report, &root),
    )
}

/// The rewrite-route verdict (gate.md "Rewrite-route eligibility policy") for a kernel whose
/// source is `kind` (`triton`, `cuda`, `hip`, `cpp`, `flydsl`, `python`, …).
#[pyfunction]
#[pyo3(signature = (kind, *, candidate="", budget_minutes=None, default_budget_minutes=None, opted_in=false))]
fn rewrite_route<'py>(
    py: Python<'py>,
    kind: &str,
    candidate: &str,
    budget_minutes: Option<u32>,
    default_budget_minutes: Option<u32>,
    opted_in: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let source = kernlens_ident::SourceKind::resolve(kind, "");
    let mut request = kernlens_gate::RewriteRequest::new(candidate, source)
        .with_explicit_budget(budget_minutes)
        .with_opted_in(opted_in);
    if let Some(minutes) = default_budget_minutes {
        request = request.with_default_budget(minutes);
    }
    to_py(py, &kernlens_gate::evaluate_rewrite_route(&request))
}

/// The lane idle guard (gate.md "Lane idle guard") as an object an orchestrator keeps: it
/// owns the guard's state and config; `observe` and `heartbeat` record what the coordinator
/// sees, and `tick(now)` scans and asks whether to wind down. The clock is the caller's:
/// every `tick` takes `now` (seconds since the epoch), so tests drive time by hand.
#[pyclass(module = "kernlens._native")]
struct LaneGuard {
    config: LaneIdleConfig,
    state: LaneIdleState,
    in_lane_phase: bool,
    tasks: Vec<lane::TaskView>,
    progress: lane::ProgressSnapshot,
    inline_step_stamp: f64,
}

fn task_status(text: &str) -> PyResult<lane::TaskStatus> {
    Ok(match text {
        "queued" => lane::TaskStatus::Queued,
        "running" => lane::TaskStatus::Running,
        "succeeded" => lane::TaskStatus::Succeeded,
        "failed" => lane::TaskStatus::Failed,
        "cancelled" => lane::TaskStatus::Cancelled,
        other => {
            return Err(failure::<UsageError>(
                format_args!("invalid task status '{other}'"),
                "use queued, running, succeeded, failed or cancelled",
            ));
        }
    })
}

#[pymethods]
impl LaneGuard {
    #[new]
    #[pyo3(signature = (*, max_ticks=None, min_seconds=None, heartbeat_stale_seconds=None, lane_kinds=None))]
    fn new(
        max_ticks: Option<u32>,
        min_seconds: Option<f64>,
        heartbeat_stale_seconds: Option<f64>,
        lane_kinds: Option<Vec<String>>,
    ) -> Self {
        let mut config = LaneIdleConfig::default();
        if let Some(ticks) = max_ticks {
            config = config.with_max_ticks(ticks);
        }
        if let Some(seconds) = min_seconds {
            config = config.with_min_seconds(seconds);
        }
        if let Some(seconds) = heartbeat_stale_seconds {
            config = config.with_heartbeat_stale_seconds(seconds);
        }
        if let Some(kinds) = lane_kinds {
            config = config.with_lane_kinds(kinds);
        }
        LaneGuard {
            config,
            state: LaneIdleState::default(),
            in_lane_phase: true,
            tasks: Vec::new(),
            progress: lane::ProgressSnapshot::default(),
            inline_step_stamp: 0.0,
        }
    }

    /// Records what the coordinator sees: whether it is in the lane phase, its tasks as
    /// `(id, kind, status)` tuples, and the lane's progress (`records`: rows of strings,
    /// `fields`: named values); the next `tick` fingerprints them.
    #[pyo3(signature = (*, in_lane_phase=true, tasks=Vec::new(), records=Vec::new(), fields=std::collections::BTreeMap::new()))]
    fn observe(
        &mut self,
        in_lane_phase: bool,
        tasks: Vec<(String, String, String)>,
        records: Vec<Vec<String>>,
        fields: std::collections::BTreeMap<String, String>,
    ) -> PyResult<()> {
        self.tasks = tasks
            .into_iter()
            .map(|(id, kind, status)| Ok(lane::TaskView::new(id, kind, task_status(&status)?)))
            .collect::<PyResult<_>>()?;
        self.in_lane_phase = in_lane_phase;
        self.progress = lane::ProgressSnapshot::new(records, fields);
        Ok(())
    }

    /// An inline step's heartbeat at `stamp` (seconds since the epoch); 0 says none runs.
    fn heartbeat(&mut self, stamp: f64) {
        self.inline_step_stamp = stamp;
    }

    /// One scan at `now`, then the wind-down question: a dict with `outcome` (`progress`,
    /// `frozen`, `idle` or `outside_phase`), `ticks`, `state` and `wind_down` (None, or the
    /// reason and evidence to record).
    #[pyo3(signature = (now, *, hint=None, work_pending=false))]
    fn tick<'py>(
        &mut self,
        py: Python<'py>,
        now: f64,
        hint: Option<&str>,
        work_pending: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let hint = match hint {
            None => None,
            Some("skip_to_sweep") => Some(LaneHint::SkipToSweep),
            Some(other) => {
                return Err(failure::<UsageError>(
                    format_args!("invalid hint '{other}'"),
                    "the only hint is skip_to_sweep",
                ));
            }
        };
        let clock = ManualClock::new(now);
        let input = lane::ScanInput::new(
            self.in_lane_phase,
            &self.tasks,
            self.inline_step_stamp,
            &self.progress,
        );
        let outcome = lane::scan(&mut self.state, &input, &self.config, &clock);
        let wind = lane::wind_down(&self.state, &self.config, now, hint, work_pending);
        let doc = to_py(py, &outcome)?;
        let dict = doc.cast::<PyDict>()?;
        dict.set_item("ticks", self.state.ticks())?;
        dict.set_item("state", self.state(py)?)?;
        dict.set_item("wind_down", to_py(py, &wind)?)?;
        Ok(doc)
    }

    /// The guard's memory: idle ticks, the last progress fingerprint, when idle time started.
    #[getter]
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.state)
    }

    /// The guard's configuration.
    #[getter]
    fn config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.config)
    }

    /// Restores persisted state (`since_unix` 0 means unset).
    fn restore(&mut self, ticks: u32, fingerprint: String, since_unix: f64) {
        self.state = LaneIdleState::from_parts(ticks, fingerprint, since_unix);
    }
}

/// The native module `kernlens._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("KernlensError", py.get_type::<KernlensError>())?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add("LocateError", py.get_type::<LocateError>())?;
    m.add("ScratchError", py.get_type::<ScratchError>())?;
    m.add("UsageError", py.get_type::<UsageError>())?;
    m.add_class::<LaneGuard>()?;
    m.add_function(wrap_pyfunction!(summary, m)?)?;
    m.add_function(wrap_pyfunction!(all_ranks, m)?)?;
    m.add_function(wrap_pyfunction!(plan_ranks, m)?)?;
    m.add_function(wrap_pyfunction!(plan_files, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_rank, m)?)?;
    m.add_function(wrap_pyfunction!(ranks_document, m)?)?;
    m.add_function(wrap_pyfunction!(split, m)?)?;
    m.add_function(wrap_pyfunction!(gate, m)?)?;
    m.add_function(wrap_pyfunction!(ident, m)?)?;
    m.add_function(wrap_pyfunction!(locate, m)?)?;
    m.add_function(wrap_pyfunction!(triage, m)?)?;
    m.add_function(wrap_pyfunction!(diff, m)?)?;
    m.add_function(wrap_pyfunction!(scratch_create, m)?)?;
    m.add_function(wrap_pyfunction!(scratch_diff, m)?)?;
    m.add_function(wrap_pyfunction!(scratch_release, m)?)?;
    m.add_function(wrap_pyfunction!(scratch_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(rewrite_route, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
