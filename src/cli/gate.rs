//! `kernlens gate TRACE`: the idle gate with its graph guard, then the
//! low-compute gate (gate.md "Combined evaluation"), on the whole, un-split trace.

use std::process::ExitCode;

use kernlens_gate::{Decision, GateInputs, GateReport, Severity, analysis_probe, evaluate};
use kernlens_trace::Options;

use super::progress::{self, Progress};
use super::{EXIT_STRICT, Env, Failure, Format, threshold_arg};

/// Arguments of `kernlens gate`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace file (.json or .json.gz), a directory of traces, or `-` for stdin.
    trace: String,
    /// High-idle threshold in percent (0..=100); overrides KERNLENS_IDLE_THRESHOLD_PCT (default 80).
    #[arg(long, value_name = "PCT", value_parser = threshold_arg, allow_negative_numbers = true)]
    idle_threshold: Option<f64>,
    /// Low-compute threshold in percent (0..=100); overrides KERNLENS_MIN_COMPUTE_PCT (default 10).
    #[arg(long, value_name = "PCT", value_parser = threshold_arg, allow_negative_numbers = true)]
    min_compute: Option<f64>,
    /// JSON: one `kernlens.gate/1` document.
    #[command(flatten)]
    format: Format,
    /// Exit 3 when the trace had recovered structural problems.
    #[arg(long)]
    strict: bool,
    /// Exit 4 when the verdict is `suppress`, so a CI step fails on it (the report is printed
    /// first, as always).
    #[arg(long)]
    fail_on_suppress: bool,
}

/// Exit status of `gate --fail-on-suppress` on a suppressing verdict.
pub const EXIT_SUPPRESS: u8 = 4;

pub fn run(args: Args, env: &Env) -> Result<ExitCode, Failure> {
    let thresholds = env.thresholds(args.idle_threshold, args.min_compute);

    let source = super::open_trace(&args.trace)?;
    let progress = Progress::new(env, args.format.is_json());
    let analysis = progress::analyze(progress, &source, &Options::default(), None)
        .map_err(|err| Failure::new(format!("cannot read trace '{}'", source.file()), err))?;

    // The analysis already holds the whole-trace graph block of the same
    // file, so the guard answers from it instead of reading the trace again.
    let inputs = GateInputs::from_analysis(&analysis);
    let verdict = evaluate(&inputs, &thresholds, analysis_probe(&analysis));
    let report = GateReport::new(&inputs, &thresholds, verdict);

    args.format.write(&report.document(), || {
        render_text(&report, &analysis.trace_file, &analysis.stream_errors)
    })?;
    // A damaged trace (3) outranks the verdict (4): the verdict was read from damaged input.
    if args.strict && !analysis.stream_errors.is_empty() {
        return Ok(ExitCode::from(EXIT_STRICT));
    }
    if args.fail_on_suppress && report.decision == Decision::Suppress {
        return Ok(ExitCode::from(EXIT_SUPPRESS));
    }
    Ok(ExitCode::SUCCESS)
}

fn pct(value: Option<f64>) -> String {
    value.map_or_else(|| "unknown".to_owned(), super::table::pct)
}

fn render_text(report: &GateReport, trace_file: &str, stream_errors: &[String]) -> String {
    let mut out = String::new();
    out.push_str(&format!("trace      {trace_file}\n"));
    out.push_str(&format!("decision   {}\n", report.decision.as_str()));
    out.push_str(&format!(
        "idle       {} (threshold {})\n",
        pct(report.idle_pct),
        pct(Some(report.threshold_pct))
    ));
    out.push_str(&format!(
        "compute    {} (minimum {})\n",
        pct(report.compute_pct),
        pct(Some(report.min_compute_pct))
    ));
    let exposed = match (report.exposed_comm_pct, report.compute_pct) {
        (Some(exposed), _) => format!(
            "{} (communication not hidden by compute)",
            pct(Some(exposed))
        ),
        (None, Some(_)) => "none (no communication kernels)".to_owned(),
        (None, None) => "unknown".to_owned(),
    };
    out.push_str(&format!("exposed    {exposed}\n"));
    if !stream_errors.is_empty() {
        out.push_str(&format!(
            "recovered  {} stream error(s); see `kernlens summary`\n",
            stream_errors.len()
        ));
    }
    if report.warnings.is_empty() {
        out.push_str("warnings   none\n");
    }
    for warning in &report.warnings {
        let level = match warning.severity {
            Severity::Info => "info",
            _ => "warning",
        };
        out.push_str(&format!(
            "{level}: {}: {}\n",
            warning.code.as_str(),
            warning.message
        ));
    }
    out
}
