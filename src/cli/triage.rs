//! `kernlens triage TRACE [--root DIR...] [--top N] [--idle-threshold PCT]
//! [--min-compute PCT] [--no-gate] [--rewrite-opt-in] [--rewrite-budget-min N]
//! [--baseline OLD_TRACE] [--json] [--strict]`: the main job (cli.md). Environment values
//! (`KERNLENS_SOURCE_ROOTS`, the two gate thresholds, the discovery
//! environment, cache directories, the scratch root to exclude) are read
//! here, at the edge, and handed to the library.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use kernlens::triage::{Phase, TriageGroup};
use kernlens::{Triage, TriageOptions, TriageReport};
use kernlens_gate::{Decision, Severity};
use kernlens_locate::RootOrigin;

use super::progress::{Progress, Spinner, TraceBar};
use super::table::{self, Table};
use super::{EXIT_STRICT, Env, Failure, Format, threshold_arg};

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
    /// The part of the trace to triage, as for `summary --window`: auto, none, annotation,
    /// cpu-steps, START_US:END_US or +START:+END.
    #[arg(long, default_value = "none", value_parser = super::window::window_mode, allow_hyphen_values = true)]
    window: kernlens_trace::WindowMode,
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
    /// Full kernel names in the table (default: short, distinct names).
    #[arg(long)]
    wide: bool,
    /// A trace from before the change: each group's time then and now (diff.md).
    #[arg(long, value_name = "OLD_TRACE")]
    baseline: Option<String>,
    /// Also write the report page (`kernlens report`'s) of this triage to FILE.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Do not discover installed framework packages as search roots.
    #[arg(long)]
    no_discover: bool,
    /// JSON: one `kernlens.triage/1` document instead of the table.
    #[command(flatten)]
    format: Format,
    /// Print the table as RFC 4180 CSV instead (full names, times in µs).
    #[arg(long, conflicts_with_all = ["json", "pretty"])]
    csv: bool,
    /// Exit 3 when the trace had recovered structural problems.
    #[arg(long)]
    strict: bool,
}

pub fn run(args: Args, env: &Env) -> Result<ExitCode, Failure> {
    let mut options = TriageOptions::default();
    options.top_k = args.top;
    options.window = args.window;
    options.thresholds = env.thresholds(args.idle_threshold, args.min_compute);
    options.apply_gate = !args.no_gate;
    options.rewrite_opt_in = args.rewrite_opt_in;
    options.rewrite_budget_minutes = args.rewrite_budget_min;
    options.kind = env.kind_context();
    let roots = env.locator(&args.roots, !args.no_discover);
    let mut triage =
        Triage::new(roots, options).map_err(|e| Failure::new("cannot triage kernels", e))?;

    let source = super::open_trace(&args.trace)?;
    let progress = Progress::new(env, args.format.is_json() || args.csv);
    let mut spinner: Option<Spinner> = None;
    let mut reading: Option<TraceBar> = None;
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
        match phase {
            Phase::ReadTrace { .. } => reading = progress.trace(&source),
            Phase::Locate { kernels, roots } => {
                spinner = progress.spinner(format!(
                    "searching {} source root(s) for {kernels} kernel(s)",
                    roots.len()
                ));
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
    if args.csv {
        super::csv_tables::triage(&report)?;
    } else {
        args.format
            .write(&report, || render(&report, &args.window, args.wide))?;
    }
    if args.strict && !report.analysis.stream_errors.is_empty() {
        return Ok(ExitCode::from(EXIT_STRICT));
    }
    Ok(ExitCode::SUCCESS)
}

/// The human report: what the trace is, whether the gate passed, then one
/// row per task group.
fn render(report: &TriageReport, requested: &kernlens_trace::WindowMode, wide: bool) -> String {
    let analysis = &report.analysis;
    let timeline = &analysis.timeline;
    let gate = &report.gate;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "trace     {} ({} events)",
        analysis.trace_file, analysis.event_total
    );
    if let Some(start) = analysis.trace_start_us {
        let _ = writeln!(out, "start     {start:.3} us (the first event)");
    }
    let _ = writeln!(
        out,
        "scope     {}",
        super::summary::scope_line(analysis, requested)
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
        .map_or_else(|| "unknown".to_owned(), table::pct);
    let _ = writeln!(
        out,
        "timeline  {} ms: GPU busy {}, idle {}, compute {compute}; kernel time {} ms",
        table::ms(timeline.total_us),
        table::pct(timeline.busy_pct),
        table::pct(timeline.idle_pct),
        table::ms(timeline.kernel_sum_us)
    );
    let graph = &analysis.graph;
    if graph.launches > 0 {
        let coverage = graph
            .coverage
            .map_or_else(|| "unknown".to_owned(), table::share);
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
        .map_or_else(|| "unknown".to_owned(), table::pct);
    let _ = writeln!(
        out,
        "gate      {} (idle {idle}, threshold {}; compute {compute}, minimum {})",
        gate.decision.as_str(),
        table::pct(gate.threshold_pct),
        table::pct(gate.min_compute_pct)
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
        "\n{} hot kernel row(s) in {} task group(s), {} of kernel time:\n",
        analysis.kernels.len(),
        report.task_groups.len(),
        table::share(listed)
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
    out.push_str(&groups_table(
        &report.task_groups,
        report.baseline.as_ref(),
        wide,
    ));
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

/// One row per task group. The operation is its short name (ident's key, numbered where
/// two groups share one) unless `wide`; the JSON keeps it whole. With a baseline, its
/// columns (`BASE ms`, `NOW ms`, `Δ %`, diff.md) come before OPERATION.
fn groups_table(
    groups: &[TriageGroup],
    baseline: Option<&kernlens::diff::TriageBaseline>,
    wide: bool,
) -> String {
    let mut header = vec![
        "ID", "SHARE", "CALLS", "TOTAL_MS", "CATEGORY", "KIND", "SOURCE", "ROUTE",
    ];
    let mut right = vec![false, true, true, true, false, false, false, false];
    if baseline.is_some() {
        header.extend(["BASE ms", "NOW ms", "Δ %"]);
        right.extend([true, true, true]);
    }
    header.push("OPERATION");
    right.push(false);
    let mut out = Table::new(&header, &right);
    let names: Vec<String> = if wide {
        groups.iter().map(|g| g.operation.clone()).collect()
    } else {
        table::short_names(groups.iter().map(|g| g.operation.as_str()), 60)
    };
    for (g, name) in groups.iter().zip(names) {
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
        let mut operation = name;
        if g.kernels.len() > 1 {
            let _ = write!(operation, " (+{} more)", g.kernels.len() - 1);
        }
        let mut cells = vec![
            g.id.clone(),
            table::share(g.share),
            g.calls.to_string(),
            table::ms(g.total_us),
            g.category.as_str().to_owned(),
            g.source.kind.as_str().to_owned(),
            source,
            route,
        ];
        if let Some(baseline) = baseline {
            match baseline.group(&g.id) {
                Some(b) => cells.extend([
                    table::ms(b.total_us.before),
                    table::ms(b.total_us.after),
                    match b.status {
                        kernlens::diff::GroupStatus::Matched => {
                            kernlens::diff::signed_pct(b.total_us.delta_pct)
                        }
                        _ => "new".to_owned(),
                    },
                ]),
                None => cells.extend(["-".to_owned(), "-".to_owned(), "-".to_owned()]),
            }
        }
        cells.push(operation);
        out.row(cells);
    }
    out.render()
}
