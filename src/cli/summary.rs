//! `kernlens summary TRACE`: timeline, graph coverage, attribution and top kernels.

use std::process::ExitCode;

use kernlens_trace::{Analysis, Limits, Options, StepSource, WindowMode, WindowStatus};

pub use kernlens::categories::{CategoryRow, categories};

use super::csv_tables::{self, SummaryTable};
use super::progress::{self, Progress};
use super::table::{self, Table};
use super::{EXIT_STRICT, Env, Failure, Format};

/// Arguments of `kernlens summary`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace file (.json or .json.gz, gzip detected by content), a directory of traces, or `-` for stdin.
    trace: String,
    /// Kernel and op rows to show (0 shows all).
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Window to aggregate: auto, none, annotation, cpu-steps, START_US:END_US (trace
    /// timestamps) or +START:+END (from the trace's first event; µs, or an ms/s suffix).
    #[arg(long, default_value = "none", value_parser = super::window::window_mode, allow_hyphen_values = true)]
    window: WindowMode,
    /// Analyse every rank of a directory in parallel and report the busy% spread.
    #[arg(long)]
    all_ranks: bool,
    /// With --all-ranks, for a rank with several capture cycles (files): the latest, or all.
    #[arg(long, value_name = "latest|all", requires = "all_ranks", value_parser = cycle_choice)]
    cycle: Option<kernlens_trace::Cycles>,
    /// Full kernel and op names in the tables (default: short, distinct names).
    #[arg(long)]
    wide: bool,
    /// JSON: the kernlens.summary/1 document (kernlens.ranks/1 with --all-ranks).
    #[command(flatten)]
    format: Format,
    /// Print one table as RFC 4180 CSV (µs, full names): kernels, ops, categories, or ranks
    /// (with --all-ranks).
    #[arg(long, value_name = "TABLE", value_enum, conflicts_with_all = ["json", "pretty"])]
    csv: Option<SummaryTable>,
    /// Exit with status 3 when the trace had structural problems.
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

/// Input bounds shared by the commands that read traces (trace.md "Streaming reader and error semantics"; docs/hardening.md).
#[derive(clap::Args)]
pub struct LimitArgs {
    /// Stop after this many bytes of trace text (after decompression), reporting it:
    /// a guard against gzip bombs. Default: no limit.
    #[arg(long, value_name = "BYTES")]
    max_input_bytes: Option<u64>,
    /// Longest single event object in bytes (default 67108864).
    #[arg(long, value_name = "BYTES")]
    max_event_bytes: Option<usize>,
}

impl LimitArgs {
    /// The library limits these flags describe.
    pub fn limits(&self) -> Limits {
        let mut limits = Limits::default();
        if let Some(max) = self.max_event_bytes {
            limits.max_event_bytes = max;
        }
        limits.max_input_bytes = self.max_input_bytes;
        limits
    }
}

/// Maps a `--cycle` value onto the library's choice (a bad value is a usage error).
fn cycle_choice(spec: &str) -> Result<kernlens_trace::Cycles, String> {
    match spec {
        "latest" => Ok(kernlens_trace::Cycles::Latest),
        "all" => Ok(kernlens_trace::Cycles::All),
        _ => Err("expected latest or all".to_string()),
    }
}

pub fn run(args: Args, env: &Env) -> Result<ExitCode, Failure> {
    let mut opts = Options::default();
    opts.top_k = args.top;
    opts.window = args.window;
    opts.limits = args.limits.limits();
    opts.cycles = args.cycle.unwrap_or_default();
    let machine = args.format.is_json() || args.csv.is_some();
    match (args.all_ranks, args.csv) {
        (true, Some(table)) if table != SummaryTable::Ranks => {
            return usage("with --all-ranks, --csv writes the ranks table: --csv ranks");
        }
        (false, Some(SummaryTable::Ranks)) => {
            return usage("--csv ranks needs --all-ranks on a directory of traces");
        }
        _ => {}
    }
    if args.all_ranks {
        return all_ranks(&args, &opts, Progress::new(env, machine));
    }
    let source = super::open_trace(&args.trace)?;
    let progress = Progress::new(env, machine);
    // Every row is kept for the category breakdown, then cut to --top: the rows are ranked
    // before the cut, so the JSON is the one `top_k` gives.
    opts.top_k = 0;
    let mut analysis = progress::analyze(progress, &source, &opts, None)
        .map_err(|e| Failure::new(format!("cannot read trace '{}'", args.trace), e))?;
    let categories = categories(&analysis.kernels);
    if args.top > 0 {
        analysis.kernels.truncate(args.top);
        analysis.ops.truncate(args.top);
    }
    let view = View {
        requested: &args.window,
        categories: &categories,
        wide: args.wide,
    };
    match args.csv {
        Some(table) => csv_tables::summary(table, &analysis, &categories)?,
        None => args
            .format
            .write(&analysis.to_json(), || render(&analysis, &view))?,
    };
    if args.strict && !analysis.stream_errors.is_empty() {
        return Ok(ExitCode::from(EXIT_STRICT));
    }
    Ok(ExitCode::SUCCESS)
}

fn all_ranks(args: &Args, opts: &Options, progress: Progress) -> Result<ExitCode, Failure> {
    let spinner = progress.spinner(format!("reading every rank under {}", args.trace));
    let report = kernlens_trace::analyze_all_ranks(&args.trace, opts);
    drop(spinner);
    let report =
        report.map_err(|e| Failure::new(format!("cannot read ranks of '{}'", args.trace), e))?;
    if args.csv.is_some() {
        csv_tables::ranks(&report)?;
        return Ok(strict_ranks(args, &report));
    }
    args.format.write(&report.to_json(), || {
        use std::fmt::Write;
        let mut o = format!("{} rank(s) under {}\n", report.ranks.len(), report.input);
        if report
            .ranks
            .iter()
            .any(|r| r.result.as_ref().is_ok_and(|a| a.cycles > 1))
        {
            let which = match report.cycles {
                kernlens_trace::Cycles::All => "every capture file of a rank is read, one line each",
                _ => "ranks have several capture files; the latest of each is read (--cycle all reads every one)",
            };
            let _ = writeln!(o, "cycles: {which}");
        }
        let _ = writeln!(
            o,
            "{:>6} {:>8} {:>8} {:>9}  trace",
            "rank", "busy%", "idle%", "kernels"
        );
        for r in &report.ranks {
            let rank = r.rank.map_or("-".to_string(), |n| n.to_string());
            match &r.result {
                Ok(a) => {
                    let flag = if a.graph.under_recorded {
                        "  (graph replays under-recorded)"
                    } else {
                        ""
                    };
                    let _ = writeln!(
                        o,
                        "{rank:>6} {:>8.2} {:>8.2} {:>9}  {}{flag}",
                        a.timeline.busy_pct,
                        a.timeline.idle_pct,
                        a.attribution.kernel_count,
                        r.trace_file
                    );
                }
                Err(e) => {
                    let _ = writeln!(o, "{rank:>6} failed: {e}");
                }
            }
        }
        if let Some(s) = &report.spread {
            let r = |x: Option<u64>| x.map_or("-".to_string(), |n| n.to_string());
            let _ = writeln!(
                o,
                "busy% spread: min {:.2} (rank {}), median {:.2}, max {:.2} (rank {})",
                s.min,
                r(s.min_rank),
                s.median,
                s.max,
                r(s.max_rank)
            );
        }
        o
    })?;
    Ok(strict_ranks(args, &report))
}

/// `--strict` on all ranks: a failed rank is at least as damaged as one with recovered
/// problems (a rank without a trace array used to be an analysis carrying that stream error).
fn strict_ranks(args: &Args, report: &kernlens_trace::RankReport) -> ExitCode {
    let damaged = report
        .ranks
        .iter()
        .any(|r| r.result.is_err() || r.result.as_ref().is_ok_and(|a| !a.stream_errors.is_empty()));
    if args.strict && damaged {
        return ExitCode::from(EXIT_STRICT);
    }
    ExitCode::SUCCESS
}

/// A flag combination clap cannot check: one line on standard error, exit 2 as for clap's
/// own usage errors.
fn usage(why: &str) -> Result<ExitCode, Failure> {
    eprintln!("kernlens: usage: {why}");
    Ok(ExitCode::from(2))
}

/// What the human summary shows beside the analysis.
pub struct View<'a> {
    /// The window asked for.
    pub requested: &'a WindowMode,
    /// Kernel time per category, over all kernels.
    pub categories: &'a [CategoryRow],
    /// No truncation: full kernel and op names.
    pub wide: bool,
}

/// How the output's scope reads: the whole trace, the window (absolute and from the
/// trace's start), or why `auto` fell back.
pub fn scope_line(a: &Analysis, requested: &WindowMode) -> String {
    let from_start = |us: f64| a.trace_start_us.map_or(us, |start| us - start);
    match (&a.window, a.window_status) {
        (Some(w), _) => {
            let how = match (&w.step_name, w.step_count) {
                (Some(step), Some(count)) => {
                    format!("steady window: step {step} x{count}, method {}", w.method)
                }
                _ => "explicit window".to_owned(),
            };
            format!(
                "{how}, [{:.3}, {:.3}) us = +{}:+{} ms from the start ({} ms)",
                w.start_us,
                w.end_us,
                table::ms(from_start(w.start_us)),
                table::ms(from_start(w.end_us)),
                table::ms(w.end_us - w.start_us)
            )
        }
        (None, WindowStatus::NoRepeatingWindowFellBackToFullTrace) => {
            let source = match requested {
                WindowMode::Steady {
                    source: StepSource::Annotation,
                    min_repeats,
                } => format!("no GPU-annotation step repeats {min_repeats} times"),
                WindowMode::Steady {
                    source: StepSource::CpuSteps,
                    min_repeats,
                } => format!("no CPU ProfilerStep repeats {min_repeats} times"),
                WindowMode::Steady { min_repeats, .. } => format!(
                    "no GPU-annotation or CPU ProfilerStep step repeats {min_repeats} times"
                ),
                _ => "no steady window was found".to_owned(),
            };
            format!("whole trace: {source}, so the steady window fell back to the full trace")
        }
        (None, _) => "whole trace".to_owned(),
    }
}

/// The human-readable summary.
pub fn render(a: &Analysis, view: &View<'_>) -> String {
    use std::fmt::Write;
    let name_max = (!view.wide).then_some(60);
    let op_max = (!view.wide).then_some(40);
    let mut o = String::new();
    let t = &a.timeline;
    let _ = writeln!(
        o,
        "trace        {} ({} events)",
        a.trace_file, a.event_total
    );
    if a.cycles > 1 {
        let latest = if a.cycle == a.cycles {
            " (the latest)"
        } else {
            ""
        };
        let _ = writeln!(
            o,
            "cycles       cycle {} of {} capture files of this rank{latest}; --all-ranks --cycle all reads each",
            a.cycle, a.cycles
        );
    }
    if let Some(start) = a.trace_start_us {
        let _ = writeln!(
            o,
            "start        {start:.3} us (the first event; +START:+END windows count from here)"
        );
    }
    let _ = writeln!(o, "scope        {}", scope_line(a, view.requested));
    let _ = writeln!(
        o,
        "timeline     total {} ms  busy {} ms ({})  idle {}  kernels {}  memcpy/memset {} ms",
        table::ms(t.total_us),
        table::ms(t.busy_us),
        table::pct(t.busy_pct),
        table::pct(t.idle_pct),
        a.attribution.kernel_count,
        table::ms(t.memcpy_us)
    );
    let g = &a.graph;
    match g.coverage {
        None => {
            let _ = writeln!(o, "graph        no graph launches");
        }
        Some(c) => {
            let api = match g.launch_api {
                Some(kernlens_trace::LaunchApi::Driver) => "driver",
                _ => "runtime",
            };
            let _ = writeln!(
                o,
                "graph        {} launches ({api}), {} with kernels, coverage {}, {} graph kernels",
                g.launches,
                g.launches_with_kernels,
                table::share(c),
                g.graph_kernels
            );
        }
    }
    if g.under_recorded {
        let _ = writeln!(
            o,
            "WARNING      graph replays are under-recorded: only {} of {} launches carry kernels, so idle% \
             is computed from a fraction of the real GPU work",
            g.launches_with_kernels, g.launches
        );
    }
    let at = &a.attribution;
    let _ = writeln!(
        o,
        "attribution  {}/{} kernels linked to an op ({} of kernel time), {} graph, {} unlinked",
        at.attributed_kernels,
        at.kernel_count,
        table::pct(at.attributed_pct),
        at.graph_attributed_kernels,
        at.unlinked_kernels
    );
    if let Some(s) = &a.stream_overlap {
        let _ = writeln!(
            o,
            "{:<12} stream {:?}/{:?}: {} overlapping durations, {} ms excess ({} of its time), worst {}",
            s.severity.to_uppercase(),
            s.pid,
            s.tid,
            s.overlapping_events,
            table::ms(s.excess_us),
            table::share(s.excess_share),
            table::cut(&s.worst_event, Some(60))
        );
    }
    if !a.stream_errors.is_empty() {
        let _ = writeln!(
            o,
            "stream errors {} (the trace is damaged; complete events were kept):",
            a.stream_errors.len()
        );
        for e in a.stream_errors.iter().take(5) {
            let _ = writeln!(o, "  {e}");
        }
    }
    let wall = |us: f64| {
        if t.total_us > 0.0 {
            table::pct(us / t.total_us * 100.0)
        } else {
            "-".to_owned()
        }
    };
    if !a.kernels.is_empty() {
        let mut k_table = Table::new(
            &[
                "SHARE", "WALL", "CALLS", "TOTAL_MS", "AVG_MS", "MIN_MS", "MAX_MS", "OP", "KERNEL",
            ],
            &[true, true, true, true, true, true, true, false, false],
        );
        let names: Vec<String> = if view.wide {
            a.kernels.iter().map(|k| k.name.clone()).collect()
        } else {
            table::short_names(a.kernels.iter().map(|k| k.name.as_str()), 60)
        };
        for (k, name) in a.kernels.iter().zip(names) {
            let avg = table::per_call(k.total_us, k.calls);
            k_table.row(vec![
                table::share(k.share),
                wall(k.total_us),
                k.calls.to_string(),
                table::ms(k.total_us),
                table::ms(avg),
                table::ms(k.min_us),
                table::ms(k.max_us),
                table::cut(&table::op_cell(&k.op_name, k.op_count), op_max),
                name,
            ]);
        }
        o.push('\n');
        o.push_str(&k_table.render());
    }
    if !a.ops.is_empty() {
        let mut op_table = Table::new(
            &["SHARE", "WALL", "CALLS", "TOTAL_MS", "AVG_MS", "OP"],
            &[true, true, true, true, true, false],
        );
        for r in &a.ops {
            let avg = table::per_call(r.total_us, r.calls);
            op_table.row(vec![
                table::share(r.share),
                wall(r.total_us),
                r.calls.to_string(),
                table::ms(r.total_us),
                table::ms(avg),
                table::cut(&r.name, name_max),
            ]);
        }
        o.push('\n');
        o.push_str(&op_table.render());
    }
    if !view.categories.is_empty() {
        let mut c_table = Table::new(
            &["SHARE", "WALL", "CALLS", "KERNELS", "TOTAL_MS", "CATEGORY"],
            &[true, true, true, true, true, false],
        );
        for c in view.categories {
            c_table.row(vec![
                table::share(c.share),
                wall(c.total_us),
                c.calls.to_string(),
                c.kernels.to_string(),
                table::ms(c.total_us),
                c.category.as_str().to_owned(),
            ]);
        }
        o.push('\n');
        o.push_str(&c_table.render());
    }
    let cat = &t.categories;
    let mut time = Table::new(&["WALL", "TOTAL_MS", "GPU TIME"], &[true, true, false]);
    for (label, us) in [
        (
            "computation (kernels other than communication)",
            cat.computation_us,
        ),
        ("communication", cat.communication_us),
        (
            "exposed communication (not hidden by computation)",
            cat.exposed_communication_us,
        ),
        ("memcpy/memset not under a kernel", cat.memcpy_us),
        ("idle", cat.idle_us),
    ] {
        time.row(vec![wall(us), table::ms(us), label.to_owned()]);
    }
    o.push('\n');
    o.push_str(&time.render());
    o
}
