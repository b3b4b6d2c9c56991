//! `kernlens split TRACE --window SPEC -o OUT`: one window written as a new valid trace.

use std::path::Path;
use std::process::ExitCode;

use kernlens::output::{AtomicFile, ensure_not_input};
use kernlens_trace::{
    SplitOptions, SplitReport, WindowMode, split_window, split_window_with_progress,
};

use super::progress::Progress;
use super::window::window_mode;
use super::{EXIT_STRICT, Env, Failure, Format};

/// Arguments of `kernlens split`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace file (.json or .json.gz) or a directory of traces; not stdin (split reads twice).
    trace: String,
    /// The window: auto, annotation, cpu-steps or START_US:END_US.
    #[arg(long, value_parser = split_window_mode)]
    window: WindowMode,
    /// Output file; a name ending in .gz is gzip-compressed.
    #[arg(short = 'o', long = "output")]
    output: String,
    /// JSON: the kernlens.split/1 report.
    #[command(flatten)]
    format: Format,
    /// Exit with status 3 when the source had structural problems.
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    limits: super::summary::LimitArgs,
}

fn split_window_mode(spec: &str) -> Result<WindowMode, String> {
    match window_mode(spec)? {
        WindowMode::Full => {
            Err("a split needs a window: auto, annotation, cpu-steps or START_US:END_US".into())
        }
        mode => Ok(mode),
    }
}

pub fn run(args: Args, env: &Env) -> Result<ExitCode, Failure> {
    let what = || format!("cannot split '{}'", args.trace);
    let source = super::open_trace(&args.trace)?;
    // The chunk goes to a temporary file renamed over `-o` only once it is complete, so a
    // failed split (no window, a write error) leaves whatever was at `-o` as it was, and a
    // symlink there is replaced rather than written through (docs/design/cli.md).
    let output = Path::new(&args.output);
    if let Some(input) = source.path() {
        ensure_not_input(output, input).map_err(|e| Failure::new(what(), e))?;
    }
    let mut file = AtomicFile::create(output).map_err(|e| Failure::new(what(), e))?;
    let mut opts = SplitOptions::default();
    opts.gzip = args.output.ends_with(".gz");
    opts.limits = args.limits.limits();
    // Both passes draw one bar (only on a terminal, never with --json): the split reads the
    // trace twice, so the bar's halves are the two reads.
    let report = match Progress::new(env, args.format.is_json()).trace(&source) {
        Some(mut bar) => {
            split_window_with_progress(&source, &args.window, &mut file, &opts, &mut bar)
        }
        None => split_window(&source, &args.window, &mut file, &opts),
    }
    .map_err(|e| Failure::new(what(), e))?;
    file.commit().map_err(|e| Failure::new(what(), e))?;
    args.format
        .write(&report.document(), || render(&report, &args.output))?;
    if args.strict && !report.stream_errors.is_empty() {
        return Ok(ExitCode::from(EXIT_STRICT));
    }
    Ok(ExitCode::SUCCESS)
}

fn render(r: &SplitReport, out: &str) -> String {
    let mut o = format!(
        "wrote {out}: window [{:.3}, {:.3}) us, {} of {} events\n  gpu {}  launches {} (graph {})  cpu {}  flows {}  metadata {}\n",
        r.window.start_us,
        r.window.end_us,
        r.events_written,
        r.events_read,
        r.gpu_events,
        r.launch_events,
        r.graph_launch_events,
        r.cpu_events,
        r.flow_events,
        r.metadata_events
    );
    for e in r.stream_errors.iter().take(5) {
        o.push_str(&format!("  stream error: {e}\n"));
    }
    o
}
