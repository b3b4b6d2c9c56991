//! `kernlens triage TRACE [--root DIR...] [--top N] [--idle-threshold PCT]
//! [--min-compute PCT] [--no-gate] [--rewrite-opt-in] [--rewrite-budget-min N]
//! [--baseline OLD_TRACE] [--json] [--strict]`: the main job (cli.md). Environment values
//! (`KERNLENS_SOURCE_ROOTS`, the two gate thresholds, the discovery
//! environment, cache directories, the scratch root to exclude) are read
//! here, at the edge, and handed to the library.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use kernlens::triage::{Phase, TriageGroup};
use kernlens::{Triage, TriageOptions, TriageReport};
use kernlens_gate::{Decision, Severity};
use kernlens_locate::{DiscoveryEnv, KindContext, Locator, RootOrigin};
use kernlens_scratch::location::ScratchEnv;
use kernlens_trace::TraceSource;

use super::progress::{ReadProgress, Spinner};
use super::{EXIT_STRICT, Failure, threshold_arg, write_stdout};

/// Arguments of `kernlens triage`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace file (.json or .json.gz), a directory of traces, or `-` for stdin.
    trace: String,
    /// A directory to search for kernel sources (repeatable); searched before
    /// `KERNLENS_SOURCE_ROOTS` and package discovery.
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// Hot kernel rows taken from the trace (0 takes all).
    #[arg(long, value_name = "N", default_value_t = 10)]
    top: usize,
    /// High-idle threshold in percent (0..=100); overrides KERNLENS_IDLE_THRESHOLD_PCT (default 80).
    #[arg(long, value_name = "PCT", value_parser = threshold_arg, allow_negative_numbers = true)]
    idle_threshold: Option<f64>,
    /// Low-compute threshold in percent (0..=100); overrides KERNLENS_MIN_COMPUTE_PCT (default 10).
    #[arg(long, value_name = "PCT", value_parser = threshold_arg, allow_negative_numbers = true)]
    min_compute: Option<f64>,
    /// List the task groups even when the gate suppresses them.
    #[arg(long)]
    no_gate: bool,
    /// The operator opts in to the FlyDSL rewrite route (budget floored at 75 min).
    #[arg(long)]
    rewrite_opt_in: bool,
    /// Explicit per-attempt rewrite budget in minutes (default: the policy's 90).
    #[arg(long, value_name = "N")]
    rewrite_budget_min: Option<u32>,
    /// Do not discover installed framework packages as search roots.
    #[arg(long)]
    no_discover: bool,
    /// A trace from before the change: each group's time then and now (diff.md).
    #[arg(long, value_name = "OLD_TRACE")]
    baseline: Option<String>,
    /// Print one `kernlens.triage/1` JSON document instead of the table.
    #[arg(long)]
    json: bool,
    /// Exit 3 when the trace had recovered structural problems.
    #[arg(long)]
    strict: bool,
    /// Also write the report page (`kernlens report`'s) of this triage to FILE.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

fn env_path(key: &str) -> Option<PathBuf> {
    std::env::var_os(key)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

pub fn run(args: Args) -> Result<ExitCode, Failure> {
    let mut options = TriageOptions::default();
    options.top_k = args.top;
    options.thresholds = super::thresholds(args.idle_threshold, args.min_compute);
    options.apply_gate = !args.no_gate;
    options.rewrite_opt_in = args.rewrite_opt_in;
    options.rewrite_budget_minutes = args.rewrite_budget_min;
    options.kind = KindContext::with_cache_dirs(
        env_path("TORCHINDUCTOR_CACHE_DIR"),
        env_path("TRITON_CACHE_DIR"),
    );

    let mut roots = Locator::builder();
    for root in &args.roots {
        roots = roots.root(root);
    }
    if let Some(value) = std::env::var_os("KERNLENS_SOURCE_ROOTS") {
        roots = roots.env_roots(value.to_string_lossy().into_owned());
    }
    if !args.no_discover {
        roots = roots.discovery(DiscoveryEnv::from_process());
    }
    // Scratch copies of a package must never be mistaken for its source.
    let scratch = ScratchEnv::new(
        std::env::var("KERNLENS_LOCAL_SCRATCH_ROOT").ok(),
        std::env::var("XDG_CACHE_HOME").ok(),
        env_path("HOME"),
    );
    if let (Some(root), _) = scratch.local_root() {
        roots = roots.exclude_paths([root]);
    }
    let mut triage =
        Triage::new(roots, options).map_err(|e| Failure::new("cannot triage kernels", e))?;

    let source = TraceSource::open(&args.trace)
        .map_err(|e| Failure::new(format!("cannot open trace '{}'", args.trace), e))?;
    let show_progress = !args.json && std::io::stderr().is_terminal();
    let mut spinner: Option<Spinner> = None;
    let mut reading: Option<ReadProgress> = None;
    let mut on_phase = |phase: Phase<'_>| {
        if let Phase::ReadBytes { done, total } = phase {
            if let Some(line) = reading.as_mut() {
                kernlens_trace::ProgressSink::progress(line, done, total);
            }
            return;
        }
        // A new phase clears the previous line before it starts.
        spinner = None;
        reading = None;
        if !show_progress {
            return;
        }
        match phase {
            Phase::ReadTrace { file } => reading = ReadProgress::for_trace(file, false),
            Phase::Locate { kernels, roots } => {
                spinner = Some(Spinner::start(format!(
                    "searching {} root(s) for {kernels} kernel(s)",
                    roots.len()
                )));
            }
            _ => {}
        }
    };
    let mut lanes = match &args.html {
        Some(page) => {
            super::report::refuse_input(page, source.path())?;
            Some(super::report::recorder())
        }
        None => None,
    };
    let observer = lanes
        .as_mut()
        .map(|r| r as &mut dyn kernlens_trace::EventObserver);
    // The baseline is read beside the triage's own read (diff.md, "Triage baseline").
    let old = args
        .baseline
        .as_deref()
        .map(super::open_trace)
        .transpose()?;
    let (report, old) = std::thread::scope(|scope| {
        let old = old.as_ref().map(|old| {
            scope.spawn(move || {
                kernlens::diff::Capture::read(old, Default::default(), &Default::default(), None)
            })
        });
        let report = triage.run_observed(&source, &mut on_phase, observer);
        (report, old.map(|read| read.join()))
    });
    drop(spinner);
    drop(reading);
    let mut report = report.map_err(|e| Failure::new("cannot triage kernels", e))?;
    if let (Some(read), Some(path)) = (old, &args.baseline) {
        let read =
            read.map_err(|_| Failure::new("cannot read the baseline", "its reader panicked"))?;
        let old =
            read.map_err(|e| Failure::new(format!("cannot read baseline trace '{path}'"), e))?;
        report.baseline = Some(kernlens::diff::triage_baseline(&old, &report));
    }

    if let (Some(page), Some(recorder)) = (&args.html, lanes) {
        let lanes = recorder.finish(&report.analysis);
        let doc = super::report::triage_page(&report, &lanes);
        super::report::write_page(page, source.path(), &doc)?;
    }
    for warning in &report.root_warnings {
        eprintln!("kernlens: warning: {}", warning.message);
    }
    if let Some(why) = &report.sources_unavailable {
        eprintln!(
            "kernlens: sources not located: {why} (give --root DIR or set KERNLENS_SOURCE_ROOTS)"
        );
    }
    let text = if args.json {
        let mut json = serde_json::to_string(&report)
            .map_err(|e| Failure::new("cannot render the triage report as JSON", e))?;
        json.push('\n');
        json
    } else {
        render(&report)
    };
    write_stdout(&text)?;
    if args.strict && !report.analysis.stream_errors.is_empty() {
        return Ok(ExitCode::from(EXIT_STRICT));
    }
    Ok(ExitCode::SUCCESS)
}

/// The human report: what the trace is, whether the gate passed, then one
/// row per task group.
fn render(report: &TriageReport) -> String {
    let analysis = &report.analysis;
    let timeline = &analysis.timeline;
    let gate = &report.gate;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "trace     {} ({} events)",
        analysis.trace_file, analysis.event_total
    );
    if !analysis.stream_errors.is_empty() {
        let _ = writeln!(
            out,
            "recovered {} structural problem(s) in the trace; see `kernlens summary`",
            analysis.stream_errors.len()
        );
    }
    let compute = gate
        .compute_pct
        .map_or_else(|| "unknown".to_owned(), |c| format!("{c:.2}%"));
    let _ = writeln!(
        out,
        "timeline  {:.3} ms: GPU busy {:.2}%, idle {:.2}%, compute {compute}; kernel time {:.3} ms",
        timeline.total_us / 1000.0,
        timeline.busy_pct,
        timeline.idle_pct,
        timeline.kernel_sum_us / 1000.0
    );
    let graph = &analysis.graph;
    if graph.launches > 0 {
        let coverage = graph
            .coverage
            .map_or_else(|| "unknown".to_owned(), |c| format!("{c:.3}"));
        let _ = writeln!(
            out,
            "graphs    {} launches, {} with recorded kernels (coverage {coverage}){}",
            graph.launches,
            graph.launches_with_kernels,
            if graph.under_recorded {
                ", under-recorded"
            } else {
                ""
            }
        );
    }
    let idle = gate
        .idle_pct
        .map_or_else(|| "unknown".to_owned(), |i| format!("{i:.2}%"));
    let _ = writeln!(
        out,
        "gate      {} (idle {idle}, threshold {:.2}%; compute {compute}, minimum {:.2}%)",
        gate.decision.as_str(),
        gate.threshold_pct,
        gate.min_compute_pct
    );
    for warning in &gate.warnings {
        let level = match warning.severity {
            Severity::Info => "info",
            _ => "warning",
        };
        let _ = writeln!(
            out,
            "          {level}: {}: {}",
            warning.code.as_str(),
            warning.message
        );
    }
    let roots = if report.roots.is_empty() {
        "none (sources not searched)".to_owned()
    } else {
        report
            .roots
            .iter()
            .map(|r| format!("{} ({})", shown_path(&r.path), origin(&r.origin)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(out, "roots     {roots}");

    if report.suppressed > 0 {
        let _ = writeln!(
            out,
            "\nThe gate held back all {} hot kernel row(s): this workload is limited by the host \
             or by waiting, not by its kernels, so no kernel is a rewrite candidate. \
             Rerun with --no-gate to list them anyway.",
            report.suppressed
        );
        return out;
    }
    if report.task_groups.is_empty() {
        let _ = writeln!(out, "\nNo GPU kernels in this trace.");
        return out;
    }
    if gate.decision == Decision::Suppress {
        let _ = writeln!(
            out,
            "\nThe gate would hold these rows back; they are listed because of --no-gate."
        );
    }
    let listed: f64 = report.task_groups.iter().map(|g| g.share).sum();
    let _ = writeln!(
        out,
        "\n{} hot kernel row(s) in {} task group(s), {:.1}% of kernel time:\n",
        analysis.kernels.len(),
        report.task_groups.len(),
        listed * 100.0
    );
    if let Some(baseline) = &report.baseline {
        let _ = writeln!(
            out,
            "baseline  {}: {}",
            baseline.trace_file, baseline.headline
        );
        for warning in &baseline.warnings {
            let _ = writeln!(
                out,
                "          warning: {}: {}",
                warning.code.as_str(),
                warning.message
            );
        }
        out.push('\n');
    }
    out.push_str(&table(&report.task_groups, report.baseline.as_ref()));
    out
}

fn origin(origin: &RootOrigin) -> &'static str {
    match origin {
        RootOrigin::Explicit => "--root",
        RootOrigin::Env => "KERNLENS_SOURCE_ROOTS",
        RootOrigin::Discovered(_) => "discovered",
        _ => "other",
    }
}

/// A path relative to the working directory when it lies below it (shorter
/// to read), else as it is.
pub(super) fn shown_path(path: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| {
            let cwd = cwd.canonicalize().unwrap_or(cwd);
            path.strip_prefix(&cwd).ok().map(Path::to_path_buf)
        })
        .unwrap_or_else(|| path.to_path_buf())
        .display()
        .to_string()
}

/// Demangled C++ names run to hundreds of characters; the table shows
/// their head (the JSON keeps them whole).
fn shortened(name: &str) -> String {
    const MAX_CHARS: usize = 100;
    if name.chars().count() <= MAX_CHARS {
        return name.to_owned();
    }
    let mut head: String = name.chars().take(MAX_CHARS - 1).collect();
    head.push('…');
    head
}

fn table(groups: &[TriageGroup], baseline: Option<&kernlens::diff::TriageBaseline>) -> String {
    let header = [
        "ID",
        "SHARE",
        "CALLS",
        "CATEGORY",
        "KIND",
        "SOURCE",
        "ROUTE",
        "OPERATION",
    ]
    .map(str::to_owned);
    let rows: Vec<[String; 8]> = groups
        .iter()
        .map(|g| {
            let source = match (&g.source.path, g.source.line) {
                (Some(p), Some(l)) if g.source.found => format!("{}:{l}", shown_path(p)),
                (Some(p), None) if g.source.found => shown_path(p),
                _ => format!(
                    "not found ({})",
                    super::locate::reason_shown(Some(
                        g.source.reason.map_or("no_match", |r| r.as_str())
                    ))
                ),
            };
            let route = match g.rewrite_route.reason() {
                None => "eligible".to_owned(),
                Some(reason) => format!("declined: {}", reason.as_str()),
            };
            let mut operation = shortened(&g.operation);
            if g.kernels.len() > 1 {
                let _ = write!(operation, " (+{} more)", g.kernels.len() - 1);
            }
            [
                g.id.clone(),
                format!("{:.1}%", g.share * 100.0),
                g.calls.to_string(),
                g.category.as_str().to_owned(),
                g.source.kind.as_str().to_owned(),
                source,
                route,
                operation,
            ]
        })
        .collect();
    let (header, rows, right) = with_baseline_columns(header, rows, groups, baseline);
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            let pad = widths[i] - cell.chars().count();
            if right[i] {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                if i + 1 < row.len() {
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            if i + 1 < row.len() {
                line.push_str("  ");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The table's columns with the baseline's (`BASE ms`, `NOW ms`, `Δ %`) inserted before
/// OPERATION when there is a baseline; numbers right-aligned, text left-aligned.
fn with_baseline_columns(
    header: [String; 8],
    rows: Vec<[String; 8]>,
    groups: &[TriageGroup],
    baseline: Option<&kernlens::diff::TriageBaseline>,
) -> (Vec<String>, Vec<Vec<String>>, Vec<bool>) {
    let mut right = vec![false, true, true, false, false, false, false, false];
    let mut header = header.to_vec();
    let mut out: Vec<Vec<String>> = rows.into_iter().map(|r| r.to_vec()).collect();
    if let Some(baseline) = baseline {
        let at = header.len() - 1;
        for (i, name) in ["BASE ms", "NOW ms", "Δ %"].into_iter().enumerate() {
            header.insert(at + i, name.to_owned());
            right.insert(at + i, true);
        }
        for (row, group) in out.iter_mut().zip(groups) {
            let cells = match baseline.group(&group.id) {
                Some(b) => [
                    format!("{:.3}", b.total_us.before / 1000.0),
                    format!("{:.3}", b.total_us.after / 1000.0),
                    match b.status {
                        kernlens::diff::GroupStatus::Matched => {
                            kernlens::diff::signed_pct(b.total_us.delta_pct)
                        }
                        _ => "new".to_owned(),
                    },
                ],
                None => ["-".to_owned(), "-".to_owned(), "-".to_owned()],
            };
            for (i, cell) in cells.into_iter().enumerate() {
                row.insert(at + i, cell);
            }
        }
    }
    (header, out, right)
}
