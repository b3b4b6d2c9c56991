//! `kernlens report TRACE -o report.html [--window SPEC] [--root DIR...] [--baseline OLD]
//! [--svg]`: one self-contained HTML page of a trace (docs/design/report.md), or its
//! timeline alone as SVG. With `--root` the page is a triage's (task groups with source,
//! kind and route); with `--baseline` it also shows the change since that trace (the
//! baseline is read beside the main read); `triage --html FILE` writes the same page
//! beside its table through [`write_page`].

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use kernlens::diff::{Capture, DiffReport, GroupStatus, Normalize, TriageBaseline, compare};
use kernlens::output::{AtomicFile, ensure_not_input};
use kernlens::triage::TriageGroup;
use kernlens::{Triage, TriageOptions, TriageReport};
use kernlens_gate::{GateInputs, GateReport, analysis_probe, evaluate};
use kernlens_report::{
    Baseline, BaselineRow, BaselineStatus, DEFAULT_BINS, LaneOptions, LaneRecorder, Lanes,
    MAX_BINS, Page, TaskGroupRow, render_svg,
};
use kernlens_trace::{Limits, Options, TraceSource, WindowMode};

use super::progress::{self, Progress};
use super::summary::LimitArgs;
use super::triage::shown_path;
use super::window::window_mode;
use super::{Env, Failure, write_stdout};

/// Arguments of `kernlens report`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace file (.json or .json.gz), a directory of traces, or `-` for stdin.
    trace: String,
    /// The page to write (replaced atomically; never the trace itself).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: PathBuf,
    /// Scope of the figures, shaded on the timeline: none, auto, annotation, cpu-steps or
    /// START_US:END_US. A triage (--root) reads the whole trace, so not with --root.
    #[arg(long, default_value = "none", value_parser = window_mode, conflicts_with = "roots")]
    window: WindowMode,
    /// A directory to search for kernel sources (repeatable; with KERNLENS_SOURCE_ROOTS):
    /// the page then lists triage's task groups with their sources and routes.
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// A trace from before the change: the page also shows each group's change since it
    /// (as `kernlens diff OLD_TRACE TRACE`, in the same --window).
    #[arg(long, value_name = "OLD_TRACE", conflicts_with = "svg")]
    baseline: Option<String>,
    /// Write the timeline alone, as an SVG document.
    #[arg(long)]
    svg: bool,
    /// Kernel and op rows shown (0 shows all).
    #[arg(long, value_name = "N", default_value_t = 10)]
    top: usize,
    /// Columns per timeline lane (1..=2000).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BINS, value_parser = bins_arg)]
    bins: usize,
    #[command(flatten)]
    limits: LimitArgs,
}

fn bins_arg(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=MAX_BINS).contains(&n) => Ok(n),
        _ => Err(format!("a lane has 1 to {MAX_BINS} columns")),
    }
}

pub fn run(args: Args, env: &Env) -> Result<ExitCode, Failure> {
    let source = super::open_trace(&args.trace)?;
    // Refused before the read: a long read must not end in "that was your input".
    refuse_input(&args.output, source.path())?;
    let old = args
        .baseline
        .as_deref()
        .map(super::open_trace)
        .transpose()?;
    let mut recorder = LaneRecorder::new(LaneOptions::default().with_bins(args.bins));
    let thresholds = env.thresholds(None, None);
    let progress = Progress::new(env, false);
    let limits = args.limits.limits();
    let (doc, lanes_count) = if args.roots.is_empty() {
        let mut opts = Options::default();
        // The comparison needs every kernel row; the page's tables are cut to --top after.
        opts.top_k = if old.is_some() { 0 } else { args.top };
        opts.window = args.window;
        opts.limits = limits.clone();
        // A long read shows the same progress line as `summary` (on a terminal only).
        let (analysis, baseline) = beside_baseline(old.as_ref(), args.window, &limits, || {
            progress::analyze(progress, &source, &opts, Some(&mut recorder))
        });
        let mut analysis =
            analysis.map_err(|e| Failure::new(format!("cannot read trace '{}'", args.trace), e))?;
        let section = match baseline {
            Some(old) => {
                let now = Capture::new(analysis);
                let section = diff_section(&compare(&old?, &now, Normalize::Auto), args.top);
                analysis = now.analysis;
                if args.top > 0 {
                    analysis.kernels.truncate(args.top);
                    analysis.ops.truncate(args.top);
                }
                Some(section)
            }
            None => None,
        };
        let lanes = recorder.finish(&analysis);
        let inputs = GateInputs::from_analysis(&analysis);
        let verdict = evaluate(&inputs, &thresholds, analysis_probe(&analysis));
        let gate = GateReport::new(&inputs, &thresholds, verdict);
        let doc = if args.svg {
            render_svg(&lanes)
        } else {
            let page = Page::new(&analysis, &lanes).with_gate(&gate);
            match &section {
                Some(section) => page.with_baseline(section).render(),
                None => page.render(),
            }
        };
        (doc, lanes.streams.len())
    } else {
        // The roots given, then KERNLENS_SOURCE_ROOTS; no package discovery here.
        let roots = env.locator(&args.roots, false);
        let mut options = TriageOptions::default();
        options.top_k = args.top;
        options.thresholds = thresholds;
        let mut triage =
            Triage::new(roots, options).map_err(|e| Failure::new("cannot triage kernels", e))?;
        // A triage reads the whole trace, and so does its baseline (diff.md, "Triage baseline").
        let (report, baseline) = beside_baseline(old.as_ref(), WindowMode::Full, &limits, || {
            triage.run_observed(&source, &mut |_| {}, Some(&mut recorder))
        });
        let mut report = report.map_err(|e| Failure::new("cannot triage kernels", e))?;
        if let Some(old) = baseline {
            report.baseline = Some(kernlens::diff::triage_baseline(&old?, &report));
        }
        let lanes = recorder.finish(&report.analysis);
        let doc = if args.svg {
            render_svg(&lanes)
        } else {
            triage_page(&report, &lanes)
        };
        (doc, lanes.streams.len())
    };
    write_page(&args.output, source.path(), &doc)?;
    write_stdout(&format!(
        "wrote {} ({} bytes): {lanes_count} stream lane(s) and the pooled lane\n",
        args.output.display(),
        doc.len()
    ))
}

/// Runs `main` while the baseline `old` (when given) is read on a second thread, as
/// `triage --baseline` does, so the two reads overlap.
fn beside_baseline<T>(
    old: Option<&TraceSource>,
    window: WindowMode,
    limits: &Limits,
    main: impl FnOnce() -> T,
) -> (T, Option<Result<Capture, Failure>>) {
    std::thread::scope(|scope| {
        let read = old.map(|old| {
            scope.spawn(move || {
                Capture::read(old, window, limits, None).map_err(|e| {
                    Failure::new(format!("cannot read baseline trace '{}'", old.file()), e)
                })
            })
        });
        let main = main();
        let old = read.map(|read| {
            read.join().unwrap_or_else(|_| {
                Err(Failure::new(
                    "cannot read the baseline",
                    "its reader panicked",
                ))
            })
        });
        (main, old)
    })
}

/// The page's baseline section of a diff: its `top` groups of largest |Δ time| (0: all;
/// the report already orders them so), its headline and warnings.
pub fn diff_section(diff: &DiffReport, top: usize) -> Baseline {
    let shown = if top == 0 {
        diff.groups.len()
    } else {
        top.min(diff.groups.len())
    };
    let rows = diff.groups[..shown]
        .iter()
        .map(|g| {
            baseline_row(
                &g.id,
                &g.operation,
                g.status,
                g.total_us.before,
                g.total_us.after,
                g.total_us.delta_pct,
            )
        })
        .collect();
    Baseline::new(diff.before.trace_file.clone(), diff.headline())
        .with_warnings(diff.warnings.iter().map(|w| w.message.clone()).collect())
        .with_rows(rows, diff.groups.len() - shown)
}

/// The page's baseline section of a triage's baseline block: each task group, largest
/// |Δ time| first.
fn triage_section(report: &TriageReport, baseline: &TriageBaseline) -> Baseline {
    let mut rows: Vec<BaselineRow> = report
        .task_groups
        .iter()
        .filter_map(|g| {
            let b = baseline.group(&g.id)?;
            Some(baseline_row(
                &g.id,
                &g.operation,
                b.status,
                b.total_us.before,
                b.total_us.after,
                b.total_us.delta_pct,
            ))
        })
        .collect();
    rows.sort_by(|a, b| {
        (b.after_us - b.before_us)
            .abs()
            .total_cmp(&(a.after_us - a.before_us).abs())
    });
    Baseline::new(baseline.trace_file.clone(), baseline.headline.clone())
        .with_warnings(
            baseline
                .warnings
                .iter()
                .map(|w| w.message.clone())
                .collect(),
        )
        .with_rows(rows, 0)
}

fn baseline_row(
    id: &str,
    operation: &str,
    status: GroupStatus,
    before_us: f64,
    after_us: f64,
    delta_pct: Option<f64>,
) -> BaselineRow {
    let mut row = BaselineRow::default();
    row.id = id.to_owned();
    row.operation = operation.to_owned();
    row.status = match status {
        GroupStatus::Added => BaselineStatus::Added,
        GroupStatus::Removed => BaselineStatus::Removed,
        _ => BaselineStatus::Matched,
    };
    row.before_us = before_us;
    row.after_us = after_us;
    row.delta_pct = delta_pct;
    row
}

/// Refuses a page path that names the trace being read.
pub fn refuse_input(output: &Path, input: Option<&Path>) -> Result<(), Failure> {
    match input {
        Some(input) => ensure_not_input(output, input)
            .map_err(|e| Failure::new(format!("cannot write report '{}'", output.display()), e)),
        None => Ok(()),
    }
}

/// Writes `doc` to `output` through a temporary file renamed over it, refusing the input.
pub fn write_page(output: &Path, input: Option<&Path>, doc: &str) -> Result<(), Failure> {
    use std::io::Write as _;
    let what = || format!("cannot write report '{}'", output.display());
    refuse_input(output, input)?;
    let mut file = AtomicFile::create(output).map_err(|e| Failure::new(what(), e))?;
    file.write_all(doc.as_bytes())
        .map_err(|e| Failure::new(what(), e))?;
    file.commit().map_err(|e| Failure::new(what(), e))
}

/// The page of a triage: its analysis, gate and task groups, and with a baseline
/// (`--baseline`) each group's change since it.
pub fn triage_page(report: &TriageReport, lanes: &Lanes) -> String {
    let groups: Vec<TaskGroupRow> = report.task_groups.iter().map(group_row).collect();
    let section = report.baseline.as_ref().map(|b| triage_section(report, b));
    let page = Page::new(&report.analysis, lanes)
        .with_gate(&report.gate)
        .with_task_groups(&groups, report.suppressed);
    match &section {
        Some(section) => page.with_baseline(section).render(),
        None => page.render(),
    }
}

/// The recorder `triage --html` hands to its read.
pub fn recorder() -> LaneRecorder {
    LaneRecorder::new(LaneOptions::default())
}

fn group_row(g: &TriageGroup) -> TaskGroupRow {
    let mut row = TaskGroupRow::default();
    row.id = g.id.clone();
    row.operation = g.operation.clone();
    row.kernel_count = g.kernels.len();
    row.share = g.share;
    row.calls = g.calls;
    row.total_us = g.total_us;
    row.category = g.category.as_str().to_owned();
    row.kind = g.source.kind.as_str().to_owned();
    row.source = match (&g.source.path, g.source.line) {
        (Some(p), Some(l)) if g.source.found => format!("{}:{l}", shown_path(p)),
        (Some(p), None) if g.source.found => shown_path(p),
        _ => format!(
            "not found ({})",
            super::locate::reason_shown(Some(g.source.reason.map_or("no_match", |r| r.as_str())))
        ),
    };
    row.route = match g.rewrite_route.reason() {
        None => "eligible".to_owned(),
        Some(reason) => format!("declined: {}", reason.as_str()),
    };
    row
}
