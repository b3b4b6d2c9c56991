//! Reading kernel rows from real traces, for tests and benches: the project's H200
//! captures (fixtures/traces) and the third-party traces `KERNLENS_PUBLIC_TRACES`
//! names (see tests/support/trace_files.rs at the repository root).

#![allow(dead_code)]

#[path = "../../../../tests/support/trace_files.rs"]
mod trace_files;

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use serde::Deserialize;

#[allow(unused_imports)]
pub use trace_files::{PublicTraces, fixture};

/// The five H200 captures bundled in fixtures/traces.
pub const H200_TRACES: &[&str] = &[
    "eager.json.gz",
    "graph.json.gz",
    "compiled.json.gz",
    "compiled_ro.json.gz",
    "graph_many.json.gz",
];

#[derive(Deserialize)]
struct Trace {
    #[serde(rename = "traceEvents")]
    trace_events: Vec<Event>,
}

/// The fields of a trace event these tests read.
#[derive(Deserialize)]
pub struct Event {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub cat: Option<String>,
}

/// Every event of a gzip-compressed trace, in file order.
pub fn read_events(path: &std::path::Path) -> Result<Vec<Event>, Box<dyn std::error::Error>> {
    let file =
        File::open(path).map_err(|e| format!("cannot open trace '{}': {e}", path.display()))?;
    let mut json = Vec::new();
    flate2::read::GzDecoder::new(BufReader::new(file)).read_to_end(&mut json)?;
    let trace: Trace = serde_json::from_slice(&json)?;
    Ok(trace.trace_events)
}

/// Names of the `cat == "kernel"` events of the trace at `path`, in file order.
pub fn kernel_names(path: &Path) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    Ok(read_events(path)?
        .into_iter()
        .filter(|e| e.cat.as_deref() == Some("kernel"))
        .filter_map(|e| e.name)
        .collect())
}

/// The third-party traces (`*.json.gz` of the public directory), sorted.
pub fn public_traces(public: &PublicTraces) -> Result<Vec<PathBuf>, Box<dyn std::error::Error>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(public.dir())?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    files.sort();
    Ok(files)
}

/// One reviewed row: native key, python key, raw name.
pub type Row = (String, String, String);

/// The rows of the reviewed table.
pub fn table() -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/kernel_keys.tsv"
    );
    let text = std::fs::read_to_string(path)?;
    let mut rows = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let mut fields = line.splitn(3, '\t');
        match (fields.next(), fields.next(), fields.next()) {
            (Some(native), Some(python), Some(name)) => {
                rows.push((native.to_owned(), python.to_owned(), name.to_owned()));
            }
            _ => return Err(format!("malformed row in kernel_keys.tsv: {line:?}").into()),
        }
    }
    Ok(rows)
}

/// Fails on the first kernel name of `files` the reviewed table does not list.
pub fn assert_table_lists_kernel_names_of(
    files: &[PathBuf],
) -> Result<(), Box<dyn std::error::Error>> {
    let listed: std::collections::BTreeSet<String> =
        table()?.into_iter().map(|(_, _, name)| name).collect();
    for file in files {
        for name in kernel_names(file)? {
            assert!(
                listed.contains(&name),
                "{}: {name:?} is missing from kernel_keys.tsv (rerun make_kernel_keys.py)",
                file.display()
            );
        }
    }
    Ok(())
}
