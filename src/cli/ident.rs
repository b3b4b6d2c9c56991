//! `kernlens ident NAME... [--json]`: the identity keys, category and vendor
//! of kernel names (ident.md; JSON schema `kernlens.ident/1`, cli.md).

use std::io::Read;
use std::process::ExitCode;

use kernlens_ident::{IdentDocument, Identification, VendorLib};

use super::table::Table;
use super::{Failure, Format};

/// Arguments of `kernlens ident`.
#[derive(clap::Args)]
pub struct Args {
    /// Kernel names as a trace spells them; `-` reads one name per line from
    /// standard input.
    #[arg(required = true, value_name = "NAME")]
    names: Vec<String>,
    /// JSON: one `kernlens.ident/1` document instead of a table.
    #[command(flatten)]
    format: Format,
    /// Print the table as RFC 4180 CSV instead (full names, times in µs).
    #[arg(long, conflicts_with_all = ["json", "pretty"])]
    csv: bool,
}

pub fn run(args: Args) -> Result<ExitCode, Failure> {
    let mut names = Vec::with_capacity(args.names.len());
    for name in args.names {
        if name == "-" {
            names.extend(read_stdin_names()?);
        } else {
            names.push(name);
        }
    }
    let results: Vec<Identification> = names.into_iter().map(Identification::of).collect();
    if args.csv {
        return super::csv_tables::ident(&results);
    }
    args.format
        .write(&IdentDocument::new(&results), || table(&results))
}

/// Names from standard input, one a line; blank lines are skipped and
/// invalid UTF-8 is replaced rather than refused.
fn read_stdin_names() -> Result<Vec<String>, Failure> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::new("cannot read names from standard input", e))?;
    Ok(String::from_utf8_lossy(&bytes)
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(str::to_owned)
        .collect())
}

fn table(results: &[Identification]) -> String {
    let mut out = Table::new(
        &["NATIVE KEY", "PYTHON KEY", "CATEGORY", "VENDOR", "INPUT"],
        &[false; 5],
    );
    for r in results {
        out.row(vec![
            r.native_key.clone(),
            r.python_key.clone(),
            r.category.as_str().to_owned(),
            r.vendor.map_or("-", VendorLib::as_str).to_owned(),
            r.input.clone(),
        ]);
    }
    out.render()
}
