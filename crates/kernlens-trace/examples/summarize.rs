//! Prints the `kernlens.summary/1` JSON of a trace: the reader alone, without the CLI.
//!
//! `cargo run --release -p kernlens-trace --example summarize -- TRACE [THREADS]`

use kernlens_trace::{Options, TraceSource, analyze};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: summarize TRACE [THREADS]")?;
    let mut opts = Options::default();
    opts.threads = args.next().map(|t| t.parse()).transpose()?;
    let analysis = analyze(&TraceSource::open(&path)?, &opts)?;
    println!("{}", analysis.to_json());
    Ok(())
}
