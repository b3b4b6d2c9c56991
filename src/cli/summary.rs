//! `kernlens summary TRACE`.

use std::process::ExitCode;

use super::Failure;

/// Arguments of `kernlens summary`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace file (.json or .json.gz), a directory of traces, or `-` for stdin.
    trace: String,
}

pub fn run(args: Args) -> Result<ExitCode, Failure> {
    Err(Failure::new(
        format!("cannot summarise '{}'", args.trace),
        "not implemented yet",
    ))
}
