//! The `kernlens` command line: one subcommand per stage plus `triage`.
//!
//! Environment variables are read here, at the edge, and handed to the
//! libraries as plain values.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
