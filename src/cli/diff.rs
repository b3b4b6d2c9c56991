//! `kernlens diff BEFORE AFTER [--window SPEC] [--before-window SPEC] [--after-window SPEC]
//! [--normalize auto|none|step|wall] [--top N] [--json|--pretty|--csv] [--strict]`:
//! did the change help (cli.md; diff.md)?

use std::fmt::Write as _;
use std::process::ExitCode;

use kernlens::diff::{
    Delta, DiffOptions, DiffReport, GroupDelta, GroupStatus, Normalize, SideInfo, WindowKind,
    diff_traces, signed, signed_pct,
};
use kernlens_trace::WindowMode;

use super::summary::LimitArgs;
use super::table::cut;
use super::window::window_mode;
use super::{EXIT_STRICT, Failure, Format, write_stdout};

/// Arguments of `kernlens diff`.
#[derive(clap::Args)]
pub struct Args {
    /// The baseline trace (file, directory of traces, or `-` for stdin).
    before: String,
    /// The trace after the change (file, directory of traces, or `-` for stdin).
    after: String,
    /// Scope of both sides: none (the whole trace), auto (a steady step when found, else
    /// the whole trace), annotation, cpu-steps or START_US:END_US.
    #[arg(long, default_value = "none", value_parser = window_mode)]
    window: WindowMode,
    /// Scope of the before side (overrides --window).
    #[arg(long, value_name = "SPEC", value_parser = window_mode)]
    before_window: Option<WindowMode>,
    /// Scope of the after side (overrides --window).
    #[arg(long, value_name = "SPEC", value_parser = window_mode)]
    after_window: Option<WindowMode>,
    /// Time figures per step (both sides steady), per trace (none), per wall second, or
    /// auto: per step when both sides are steady, else per trace.
    #[arg(long, default_value = "auto", value_parser = normalize_arg)]
    normalize: Normalize,
    /// Groups shown in the table (0 shows all; JSON and CSV carry every group).
    #[arg(long, value_name = "N", default_value_t = 20)]
    top: usize,
    /// JSON: the kernlens.diff/1 document.
    #[command(flatten)]
    format: Format,
    /// Print the groups as CSV (RFC 4180), one row per group, instead of the table.
    #[arg(long, conflicts_with_all = ["json", "pretty"])]
    csv: bool,
    /// Exit with status 3 when either trace had structural problems.
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

/// Maps `--normalize` onto the library's value (a bad value is a usage error).
fn normalize_arg(text: &str) -> Result<Normalize, String> {
    match text {
        "auto" => Ok(Normalize::Auto),
        "none" => Ok(Normalize::None),
        "step" => Ok(Normalize::Step),
        "wall" => Ok(Normalize::Wall),
        other => Err(format!(
            "'{other}' is not a normalisation; use auto, none, step or wall"
        )),
    }
}

pub fn run(args: Args) -> Result<ExitCode, Failure> {
    if args.before == "-" && args.after == "-" {
        return Err(Failure::new(
            "cannot diff standard input against itself",
            "give at most one of BEFORE and AFTER as '-'",
        ));
    }
    let before = super::open_trace(&args.before)?;
    let after = super::open_trace(&args.after)?;
    let options = DiffOptions::default()
        .with_before_window(args.before_window.unwrap_or(args.window))
        .with_after_window(args.after_window.unwrap_or(args.window))
        .with_normalize(args.normalize)
        .with_limits(args.limits.limits());
    let report = diff_traces(&before, &after, &options)
        .map_err(|e| Failure::new("cannot diff traces", e))?;
    if args.csv {
        write_stdout(&csv(&report)?)?;
    } else {
        args.format.write(&report, || render(&report, args.top))?;
    }
    if args.strict && (report.before.stream_errors > 0 || report.after.stream_errors > 0) {
        return Ok(ExitCode::from(EXIT_STRICT));
    }
    Ok(ExitCode::SUCCESS)
}

/// Milliseconds with three decimals.
fn ms(us: f64) -> String {
    format!("{:.3}", us / 1000.0)
}

fn scope_text(side: &SideInfo) -> String {
    match (&side.window, side.window_kind) {
        (Some(w), WindowKind::Steady) => format!(
            "one steady step of '{}' x{} ({}), {:.3} ms",
            cut(w.step_name.as_deref().unwrap_or(""), Some(40)),
            w.step_count.unwrap_or(0),
            w.method,
            side.span_us / 1000.0
        ),
        (Some(w), _) => format!(
            "window [{:.3}, {:.3}) us, {:.3} ms",
            w.start_us,
            w.end_us,
            side.span_us / 1000.0
        ),
        (None, _) => format!("whole trace, {:.3} ms", side.span_us / 1000.0),
    }
}

fn change(delta: &Delta, unit: &str) -> String {
    format!(
        "{} → {} {unit} ({}, {})",
        ms(delta.before),
        ms(delta.after),
        signed(delta.delta / 1000.0, 3),
        signed_pct(delta.delta_pct)
    )
}

/// The human report: headline, both scopes, whole-scope figures, warnings, then groups.
fn render(report: &DiffReport, top: usize) -> String {
    let mut out = String::new();
    let applied = report.normalization.applied;
    let unit = format!("ms{}", applied.unit_suffix());
    let _ = writeln!(out, "{}", report.headline());
    let _ = writeln!(
        out,
        "before    {} ({})",
        report.before.trace_file,
        scope_text(&report.before)
    );
    let _ = writeln!(
        out,
        "after     {} ({})",
        report.after.trace_file,
        scope_text(&report.after)
    );
    let per = match applied {
        Normalize::Step => "per step",
        Normalize::Wall => "per second of wall time",
        _ => "per trace (each side's scope)",
    };
    let _ = writeln!(
        out,
        "figures   {per} (--normalize {})",
        report.normalization.requested.as_str()
    );
    let t = &report.totals;
    let _ = writeln!(out, "kernel    {}", change(&t.kernel_sum_us, &unit));
    let _ = writeln!(out, "span      {}", change(&t.span_us, &unit));
    let _ = writeln!(
        out,
        "busy      {}; busy {:.2}% → {:.2}%",
        change(&t.busy_us, &unit),
        t.busy_pct.before,
        t.busy_pct.after
    );
    let _ = writeln!(out, "idle      {}", change(&t.idle_us, &unit));
    let c = &t.categories;
    let _ = writeln!(
        out,
        "compute   {}; memcpy {} → {}",
        change(&c.computation_us, &unit),
        ms(c.memcpy_us.before),
        ms(c.memcpy_us.after)
    );
    if c.communication_us.before > 0.0 || c.communication_us.after > 0.0 {
        let _ = writeln!(
            out,
            "comm      {}; exposed {}",
            change(&c.communication_us, &unit),
            change(&c.exposed_communication_us, &unit)
        );
    }
    if t.per_device.len() > 1 {
        for d in &t.per_device {
            let id = d.device.map_or_else(|| "-".to_owned(), |n| n.to_string());
            let _ = writeln!(
                out,
                "device {id:<3}busy {}; {}",
                change(&d.busy_us, &unit),
                d.status.as_str()
            );
        }
    }
    for warning in &report.warnings {
        let _ = writeln!(
            out,
            "warning   {}: {}",
            warning.code.as_str(),
            warning.message
        );
    }
    let added = report.added().count();
    let removed = report.removed().count();
    let _ = writeln!(
        out,
        "\n{} group(s): {} matched, {added} added, {removed} removed; largest change first:\n",
        report.groups.len(),
        report.groups.len() - added - removed
    );
    let shown = if top == 0 {
        report.groups.len()
    } else {
        top.min(report.groups.len())
    };
    out.push_str(&table(&report.groups[..shown], &unit));
    if shown < report.groups.len() {
        let _ = writeln!(
            out,
            "… {} more group(s); --top 0 shows all",
            report.groups.len() - shown
        );
    }
    out
}

fn table(groups: &[GroupDelta], unit: &str) -> String {
    let header = [
        "ID".to_owned(),
        "STATUS".to_owned(),
        format!("BEFORE {unit}"),
        format!("AFTER {unit}"),
        format!("Δ {unit}"),
        "Δ %".to_owned(),
        "CALLS".to_owned(),
        "GROUP".to_owned(),
    ];
    let rows: Vec<[String; 8]> = groups
        .iter()
        .map(|g| {
            let mut group = cut(&g.operation, Some(80));
            let kernels = g.kernels_before.len().max(g.kernels_after.len());
            if kernels > 1 {
                let _ = write!(group, " ({kernels} kernels)");
            }
            [
                g.id.clone(),
                g.status.as_str().to_owned(),
                ms(g.total_us.before),
                ms(g.total_us.after),
                signed(g.total_us.delta / 1000.0, 3),
                match g.status {
                    GroupStatus::Added => "new".to_owned(),
                    _ => signed_pct(g.total_us.delta_pct),
                },
                format!("{} → {}", g.calls.before, g.calls.after),
                group,
            ]
        })
        .collect();
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let right = [false, false, true, true, true, true, true, false];
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
                line.extend(std::iter::repeat_n(' ', pad));
            }
            line.push_str("  ");
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Every group as one CSV row: exact figures (µs, normalised as the report says).
fn csv(report: &DiffReport) -> Result<String, Failure> {
    let fail = |e: csv::Error| Failure::new("cannot write the diff as CSV", e);
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer
        .write_record([
            "id",
            "status",
            "operation",
            "category",
            "before_us",
            "after_us",
            "delta_us",
            "delta_pct",
            "before_calls",
            "after_calls",
            "before_avg_us",
            "after_avg_us",
            "before_share",
            "after_share",
            "identity_key",
        ])
        .map_err(fail)?;
    let pct = |p: Option<f64>| p.map_or_else(String::new, |p| p.to_string());
    for g in &report.groups {
        writer
            .write_record([
                g.id.clone(),
                g.status.as_str().to_owned(),
                g.operation.clone(),
                g.category.as_str().to_owned(),
                g.total_us.before.to_string(),
                g.total_us.after.to_string(),
                g.total_us.delta.to_string(),
                pct(g.total_us.delta_pct),
                g.calls.before.to_string(),
                g.calls.after.to_string(),
                g.avg_us.before.to_string(),
                g.avg_us.after.to_string(),
                g.share.before.to_string(),
                g.share.after.to_string(),
                g.identity_key.clone(),
            ])
            .map_err(fail)?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| Failure::new("cannot write the diff as CSV", e.error()))?;
    String::from_utf8(bytes).map_err(|e| Failure::new("cannot write the diff as CSV", e))
}
