//! Reading kernel rows from the shared real traces (H200 captures and the
//! public third-party traces), for tests and benches.

#![allow(dead_code)]

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::PathBuf;

use serde::Deserialize;

/// The five developer fixtures of `shared/traces` (H200 captures).
pub const H200_TRACES: &[&str] = &[
    "eager.json.gz",
    "graph.json.gz",
    "compiled.json.gz",
    "compiled_ro.json.gz",
    "graph_many.json.gz",
];

/// `shared/traces`, beside the project checkout.
pub fn traces_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces")
}

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

/// Names of the `cat == "kernel"` events of `file` (relative to the traces
/// directory), in file order.
pub fn kernel_names(file: &str) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    Ok(read_events(&traces_dir().join(file))?
        .into_iter()
        .filter(|e| e.cat.as_deref() == Some("kernel"))
        .filter_map(|e| e.name)
        .collect())
}

/// The public third-party traces (`public/*.json.gz`), sorted.
pub fn public_traces() -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let mut files: Vec<String> = std::fs::read_dir(traces_dir().join("public"))?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json.gz"))
        .map(|n| format!("public/{n}"))
        .collect();
    files.sort();
    Ok(files)
}
