//! Argument parsing and dispatch. Each subcommand lives in its own module
//! exposing `Args` (clap) and `run(Args) -> Result<ExitCode, Failure>`.

use std::fmt;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use env::Env;

mod csv_tables;
mod diff;
mod env;
mod gate;
mod ident;
mod locate;
mod progress;
mod report;
mod scratch;
mod split;
mod summary;
mod table;
mod triage;
mod window;

#[derive(Parser)]
#[command(
    name = "kernlens",
    version,
    about = "GPU-kernel triage over PyTorch-profiler (Kineto) traces"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Timeline, graph coverage, attribution and top kernels of one trace.
    Summary(summary::Args),
    /// Write one window of a trace as a new, valid trace (graph launches kept).
    Split(split::Args),
    /// Identity keys, category and vendor of kernel names (`-` reads stdin).
    Ident(ident::Args),
    /// The idle gate with its graph guard, then the low-compute gate.
    Gate(gate::Args),
    /// The file that defines each kernel, its source kind and the evidence.
    Locate(locate::Args),
    /// Scratch workspaces for kernel rewrites: create, diff (export), sweep.
    Scratch(scratch::Args),
    /// The main job: gate a trace, then list its hot kernels as task groups with their sources.
    Triage(triage::Args),
    /// One self-contained HTML page of a trace: timeline, breakdown, hot kernels, gate.
    Report(report::Args),
    /// Did the change help? Two traces compared by operator identity.
    Diff(diff::Args),
}

/// A failure reported to the user as one line: `kernlens: <what failed>: <why>`.
#[derive(Debug)]
pub struct Failure {
    message: String,
}

impl Failure {
    /// `what` names the step and the path or value involved; `why` is the cause.
    pub fn new(what: impl fmt::Display, why: impl fmt::Display) -> Self {
        Failure {
            message: format!("{what}: {why}"),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A percentage flag must be a number in 0..=100; anything else is a usage error (exit 2)
/// rather than a silent fallback to the default, since the user typed it.
pub fn threshold_arg(text: &str) -> Result<f64, String> {
    kernlens_gate::parse_pct(text)
        .map_err(|problem| format!("{problem}; a threshold is a percentage in 0..=100"))
}

/// Writes a whole document to standard output: the one writer every subcommand's result goes
/// through. A closed pipe (`| head`) is the reader's choice, not a failure, so it ends the
/// command quietly with status 0 instead of the panic `println!` gives.
pub fn write_stdout(text: &str) -> Result<ExitCode, Failure> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(Failure::new("cannot write to standard output", e)),
    }
}

/// How a subcommand prints its result: a table for people by default, its versioned JSON
/// document with `--json` (one line), indented with `--pretty`. The same two flags on every
/// subcommand that has a table.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct Format {
    /// Print the subcommand's versioned JSON document (one line) instead of the table.
    // Global so `scratch --json diff DIR` and `scratch diff DIR --json` both work.
    #[arg(long, global = true)]
    pub json: bool,
    /// Indent the JSON document (implies --json).
    #[arg(long, global = true)]
    pub pretty: bool,
}

impl Format {
    /// Whether the result is JSON rather than a table.
    pub fn is_json(self) -> bool {
        self.json || self.pretty
    }

    /// Writes `doc` as JSON when asked for, else the table `human` renders (only then built).
    pub fn write<T: serde::Serialize>(
        self,
        doc: &T,
        human: impl FnOnce() -> String,
    ) -> Result<ExitCode, Failure> {
        if self.is_json() {
            write_json(doc, self.pretty)
        } else {
            write_stdout(&human())
        }
    }
}

/// Writes one JSON document and a newline through [`write_stdout`]; compact unless `pretty`.
pub fn write_json<T: serde::Serialize>(doc: &T, pretty: bool) -> Result<ExitCode, Failure> {
    let encoded = if pretty {
        serde_json::to_string_pretty(doc)
    } else {
        serde_json::to_string(doc)
    };
    let mut text = encoded.map_err(|e| Failure::new("cannot encode the JSON document", e))?;
    text.push('\n');
    write_stdout(&text)
}

/// Opens a trace argument (file, directory or `-`) for the commands that read one. A path that
/// cannot be reached keeps the OS reason (`kernlens: cannot open trace 'x.json': No such file
/// or directory (os error 2)`), naming the path once. A directory of several rank files says on
/// standard error which file was chosen, since the output describes that one file only.
pub fn open_trace(input: &str) -> Result<kernlens_trace::TraceSource, Failure> {
    let what = || format!("cannot open trace '{input}'");
    if input != "-" {
        std::fs::metadata(input).map_err(|e| Failure::new(what(), e))?;
    }
    let source = kernlens_trace::TraceSource::open(input).map_err(|e| Failure::new(what(), e))?;
    if source.rank_count() > 1 {
        let rank = source
            .analyzed_rank()
            .map_or_else(|| "one".to_owned(), |r| format!("rank {r}"));
        eprintln!(
            "kernlens: chose {rank} of {} files under '{input}': {}; use --all-ranks for every rank",
            source.rank_count(),
            source.file()
        );
    }
    Ok(source)
}

/// Exit status for a trace whose recovered problems `--strict` turns into a failure.
pub const EXIT_STRICT: u8 = 3;

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() { 2 } else { 0 });
        }
    };
    let env = Env::from_process();
    let outcome = match cli.command {
        Command::Summary(args) => summary::run(args, &env),
        Command::Split(args) => split::run(args, &env),
        Command::Ident(args) => ident::run(args),
        Command::Gate(args) => gate::run(args, &env),
        Command::Locate(args) => locate::run(args, &env),
        Command::Scratch(args) => scratch::run(args, &env),
        Command::Triage(args) => triage::run(args, &env),
        Command::Report(args) => report::run(args, &env),
        Command::Diff(args) => diff::run(args),
    };
    match outcome {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("kernlens: {failure}");
            ExitCode::from(1)
        }
    }
}
