//! `kernlens summary TRACE`: timeline, graph coverage, attribution and top kernels.

use std::process::ExitCode;

use kernlens_trace::{Analysis, Limits, Options, StepSource, TimeWindow, WindowMode};

use super::progress::{self, Progress};
use super::{EXIT_STRICT, Env, Failure, Format};

/// Arguments of `kernlens summary`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace file (.json or .json.gz, gzip detected by content), a directory of traces, or `-` for stdin.
    trace: String,
    /// Kernel and op rows to show (0 shows all).
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Window to aggregate: auto, none, annotation, cpu-steps or START_US:END_US.
    #[arg(long, default_value = "none", value_parser = window_mode)]
    window: WindowMode,
    /// Analyse every rank of a directory in parallel and report the busy% spread.
    #[arg(long)]
    all_ranks: bool,
    /// JSON: the kernlens.summary/1 document (kernlens.ranks/1 with --all-ranks).
    #[command(flatten)]
    format: Format,
    /// Exit with status 3 when the trace had structural problems.
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

/// Input bounds shared by the commands that read traces (trace.md §5; docs/hardening.md).
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

/// Maps a `--window` value onto the library's window mode (a bad value is a usage error).
pub fn window_mode(spec: &str) -> Result<WindowMode, String> {
    Ok(match spec {
        "none" => WindowMode::Full,
        "auto" => WindowMode::steady(StepSource::Auto),
        "annotation" => WindowMode::steady(StepSource::Annotation),
        "cpu-steps" => WindowMode::steady(StepSource::CpuSteps),
        range => {
            let window = TimeWindow::parse_us(range)
                .map_err(|e| format!("{e}; or use auto, none, annotation, cpu-steps"))?;
            // A length past i64 ns (about 292 years) would wrap in the window arithmetic.
            if window.end_ns().checked_sub(window.start_ns()).is_none() {
                return Err(format!(
                    "the window '{range}' is longer than 9223372036854775807 ns; \
                     give START_US:END_US within the trace"
                ));
            }
            WindowMode::Explicit(window)
        }
    })
}

pub fn run(args: Args, env: &Env) -> Result<ExitCode, Failure> {
    let mut opts = Options::default();
    opts.top_k = args.top;
    opts.window = args.window;
    opts.limits = args.limits.limits();
    if args.all_ranks {
        return all_ranks(&args, &opts, Progress::new(env, args.format.is_json()));
    }
    let source = super::open_trace(&args.trace)?;
    let progress = Progress::new(env, args.format.is_json());
    let analysis = progress::analyze(progress, &source, &opts, None)
        .map_err(|e| Failure::new(format!("cannot read trace '{}'", args.trace), e))?;
    args.format
        .write(&analysis.to_json(), || render(&analysis))?;
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
    args.format.write(&report.to_json(), || {
        use std::fmt::Write;
        let mut o = format!("{} rank(s) under {}\n", report.ranks.len(), report.input);
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
    // A failed rank is at least as damaged as one with recovered problems (a rank without a
    // trace array used to be an analysis carrying that stream error).
    let damaged = report
        .ranks
        .iter()
        .any(|r| r.result.is_err() || r.result.as_ref().is_ok_and(|a| !a.stream_errors.is_empty()));
    if args.strict && damaged {
        return Ok(ExitCode::from(EXIT_STRICT));
    }
    Ok(ExitCode::SUCCESS)
}

/// Shortens a long kernel name for a table cell.
pub fn ellipsize(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max.saturating_sub(1)).collect();
    format!("{head}…")
}

/// The human-readable summary.
pub fn render(a: &Analysis) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let t = &a.timeline;
    let _ = writeln!(
        o,
        "trace        {} ({} events)",
        a.trace_file, a.event_total
    );
    if let Some(w) = &a.window {
        let _ = writeln!(
            o,
            "window       [{:.3}, {:.3}) us  method {}{}",
            w.start_us,
            w.end_us,
            w.method,
            w.step_name
                .as_ref()
                .map(|n| format!("  step {n} x{}", w.step_count.unwrap_or(0)))
                .unwrap_or_default()
        );
    }
    let _ = writeln!(
        o,
        "timeline     total {:.3} us  busy {:.3} us ({:.2}%)  idle {:.2}%  kernels {}  memcpy {:.3} us",
        t.total_us, t.busy_us, t.busy_pct, t.idle_pct, a.attribution.kernel_count, t.memcpy_us
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
                "graph        {} launches ({api}), {} with kernels, coverage {:.1}%, {} graph kernels",
                g.launches,
                g.launches_with_kernels,
                c * 100.0,
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
        "attribution  {}/{} kernels linked to an op ({:.2}% of kernel time), {} graph, {} unlinked",
        at.attributed_kernels,
        at.kernel_count,
        at.attributed_pct,
        at.graph_attributed_kernels,
        at.unlinked_kernels
    );
    if let Some(s) = &a.stream_overlap {
        let _ = writeln!(
            o,
            "{:<12} stream {:?}/{:?}: {} overlapping durations, {:.3} us excess ({:.1}% of its time), worst {}",
            s.severity.to_uppercase(),
            s.pid,
            s.tid,
            s.overlapping_events,
            s.excess_us,
            s.excess_share * 100.0,
            ellipsize(&s.worst_event, 60)
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
    if !a.kernels.is_empty() {
        let _ = writeln!(
            o,
            "\n{:>7} {:>7} {:>14}  {:<24} kernel",
            "share", "calls", "total_us", "op"
        );
        for k in &a.kernels {
            let op = if k.op_name.is_empty() {
                "-"
            } else {
                k.op_name.as_str()
            };
            let _ = writeln!(
                o,
                "{:>6.2}% {:>7} {:>14.3}  {:<24} {}",
                k.share * 100.0,
                k.calls,
                k.total_us,
                ellipsize(op, 24),
                ellipsize(&k.name, 100)
            );
        }
    }
    if !a.ops.is_empty() {
        let _ = writeln!(o, "\n{:>7} {:>7} {:>14}  op", "share", "calls", "total_us");
        for r in &a.ops {
            let _ = writeln!(
                o,
                "{:>6.2}% {:>7} {:>14.3}  {}",
                r.share * 100.0,
                r.calls,
                r.total_us,
                ellipsize(&r.name, 100)
            );
        }
    }
    o
}
