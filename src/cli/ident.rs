//! `kernlens ident NAME... [--json]`: the identity keys, category and vendor
//! of kernel names (ident.md; JSON schema `kernlens.ident/1`, cli.md).

use std::io::Read;
use std::process::ExitCode;

use kernlens_ident::{IdentDocument, Identification, VendorLib};

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
    let header = ["NATIVE KEY", "PYTHON KEY", "CATEGORY", "VENDOR", "INPUT"];
    let rows: Vec<[&str; 5]> = results
        .iter()
        .map(|r| {
            [
                r.native_key.as_str(),
                r.python_key.as_str(),
                r.category.as_str(),
                r.vendor.map_or("-", VendorLib::as_str),
                r.input.as_str(),
            ]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (column, cell) in row.iter().enumerate() {
            if column + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(cell);
                let pad = widths[column] - cell.chars().count() + 2;
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
