//! `--csv`: one table per invocation as RFC 4180 CSV (the `csv` crate: CRLF line ends,
//! fields with commas, quotes or line breaks quoted), through the one stdout writer. The
//! values are the JSON's: times in µs and shares in 0..=1 at full precision, full names, so a
//! column sums to the JSON's total (docs/design/cli.md, "CSV").

use std::process::ExitCode;

use kernlens::TriageReport;
use kernlens_ident::Identification;
use kernlens_locate::LocateResult;
use kernlens_trace::{Analysis, RankReport};

use super::summary::CategoryRow;
use super::{Failure, write_stdout};

/// The tables `summary --csv` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SummaryTable {
    /// One row per hot kernel (as `--top` cuts them).
    Kernels,
    /// One row per hot op bucket.
    Ops,
    /// One row per kernel category, over all kernels.
    Categories,
    /// One row per rank (`--all-ranks` only).
    Ranks,
}

/// Collects rows, then writes them.
struct Sheet {
    writer: csv::Writer<Vec<u8>>,
}

impl Sheet {
    fn new(header: &[&str]) -> Result<Sheet, Failure> {
        let mut writer = csv::WriterBuilder::new()
            .terminator(csv::Terminator::CRLF)
            .from_writer(Vec::new());
        writer.write_record(header).map_err(encode_failure)?;
        Ok(Sheet { writer })
    }

    fn row<I, T>(&mut self, cells: I) -> Result<(), Failure>
    where
        I: IntoIterator<Item = T>,
        T: AsRef<[u8]>,
    {
        self.writer.write_record(cells).map_err(encode_failure)
    }

    fn finish(self) -> Result<ExitCode, Failure> {
        let bytes = self
            .writer
            .into_inner()
            .map_err(|e| Failure::new("cannot encode the CSV table", e.error()))?;
        write_stdout(&String::from_utf8_lossy(&bytes))
    }
}

fn encode_failure(e: csv::Error) -> Failure {
    Failure::new("cannot encode the CSV table", e)
}

fn num(x: f64) -> String {
    x.to_string()
}

fn opt<T: ToString>(x: Option<T>) -> String {
    x.map_or_else(String::new, |v| v.to_string())
}

fn wall_pct(a: &Analysis, us: f64) -> f64 {
    if a.timeline.total_us > 0.0 {
        us / a.timeline.total_us * 100.0
    } else {
        0.0
    }
}

/// `summary --csv kernels|ops|categories`.
pub fn summary(
    table: SummaryTable,
    a: &Analysis,
    categories: &[CategoryRow],
) -> Result<ExitCode, Failure> {
    let mut sheet;
    match table {
        SummaryTable::Kernels => {
            sheet = Sheet::new(&[
                "name",
                "short_name",
                "category",
                "calls",
                "total_us",
                "avg_us",
                "min_us",
                "max_us",
                "share",
                "wall_pct",
                "op_name",
                "op_count",
            ])?;
            let short = super::table::short_names(a.kernels.iter().map(|k| k.name.as_str()), 60);
            for (k, short) in a.kernels.iter().zip(short) {
                sheet.row([
                    k.name.clone(),
                    short,
                    kernlens_ident::classify(&k.name).as_str().to_owned(),
                    k.calls.to_string(),
                    num(k.total_us),
                    num(super::table::per_call(k.total_us, k.calls)),
                    num(k.min_us),
                    num(k.max_us),
                    num(k.share),
                    num(wall_pct(a, k.total_us)),
                    k.op_name.clone(),
                    k.op_count.to_string(),
                ])?;
            }
        }
        SummaryTable::Ops => {
            sheet = Sheet::new(&["name", "calls", "total_us", "avg_us", "share", "wall_pct"])?;
            for r in &a.ops {
                sheet.row([
                    r.name.clone(),
                    r.calls.to_string(),
                    num(r.total_us),
                    num(super::table::per_call(r.total_us, r.calls)),
                    num(r.share),
                    num(wall_pct(a, r.total_us)),
                ])?;
            }
        }
        SummaryTable::Ranks => {
            return Err(Failure::new(
                "cannot write --csv ranks",
                "the ranks table needs --all-ranks on a directory of traces",
            ));
        }
        SummaryTable::Categories => {
            sheet = Sheet::new(&[
                "category", "kernels", "calls", "total_us", "share", "wall_pct",
            ])?;
            for c in categories {
                sheet.row([
                    c.category.as_str().to_owned(),
                    c.kernels.to_string(),
                    c.calls.to_string(),
                    num(c.total_us),
                    num(c.share),
                    num(wall_pct(a, c.total_us)),
                ])?;
            }
        }
    }
    sheet.finish()
}

/// `summary --all-ranks --csv ranks`: one row per rank, failed ones with their error.
pub fn ranks(report: &RankReport) -> Result<ExitCode, Failure> {
    let mut sheet = Sheet::new(&[
        "rank",
        "trace_file",
        "status",
        "total_us",
        "busy_us",
        "busy_pct",
        "idle_pct",
        "kernels",
        "graph_under_recorded",
        "error",
    ])?;
    for r in &report.ranks {
        let rank = opt(r.rank);
        match &r.result {
            Ok(a) => sheet.row([
                rank,
                r.trace_file.clone(),
                "ok".to_owned(),
                num(a.timeline.total_us),
                num(a.timeline.busy_us),
                num(a.timeline.busy_pct),
                num(a.timeline.idle_pct),
                a.attribution.kernel_count.to_string(),
                a.graph.under_recorded.to_string(),
                String::new(),
            ])?,
            Err(e) => sheet.row([
                rank,
                r.trace_file.clone(),
                "failed".to_owned(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                e.to_string(),
            ])?,
        }
    }
    sheet.finish()
}

/// `triage --csv`: one row per task group.
pub fn triage(report: &TriageReport) -> Result<ExitCode, Failure> {
    let mut sheet = Sheet::new(&[
        "id",
        "operation",
        "identity_key",
        "category",
        "calls",
        "total_us",
        "share",
        "kernels",
        "found",
        "path",
        "line",
        "function",
        "kind",
        "method",
        "confidence",
        "reason",
        "route",
        "route_reason",
    ])?;
    for g in &report.task_groups {
        let method = serde_json::to_value(g.source.method)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        sheet.row([
            g.id.clone(),
            g.operation.clone(),
            g.identity_key.clone().unwrap_or_default(),
            g.category.as_str().to_owned(),
            g.calls.to_string(),
            num(g.total_us),
            num(g.share),
            g.kernels.len().to_string(),
            g.source.found.to_string(),
            g.source
                .path
                .as_ref()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default(),
            opt(g.source.line),
            g.source.function.clone().unwrap_or_default(),
            g.source.kind.as_str().to_owned(),
            method,
            g.source.confidence.as_str().to_owned(),
            g.source
                .reason
                .map(|r| r.as_str().to_owned())
                .unwrap_or_default(),
            if g.rewrite_route.eligible() {
                "eligible"
            } else {
                "declined"
            }
            .to_owned(),
            g.rewrite_route
                .reason()
                .map(|r| r.as_str().to_owned())
                .unwrap_or_default(),
        ])?;
    }
    sheet.finish()
}

/// `locate --csv`: one row per name.
pub fn locate(results: &[LocateResult]) -> Result<ExitCode, Failure> {
    let mut sheet = Sheet::new(&[
        "name",
        "found",
        "path",
        "line",
        "function",
        "kind",
        "method",
        "confidence",
        "keyword",
        "reason",
    ])?;
    for r in results {
        let method = serde_json::to_value(r.method)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        sheet.row([
            r.name.clone(),
            r.found.to_string(),
            r.path
                .as_ref()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default(),
            opt(r.line),
            r.function.clone().unwrap_or_default(),
            r.kind.as_str().to_owned(),
            method,
            r.confidence.as_str().to_owned(),
            r.keyword.clone().unwrap_or_default(),
            if r.found {
                String::new()
            } else {
                kernlens::triage::not_found_reason(r).as_str().to_owned()
            },
        ])?;
    }
    sheet.finish()
}

/// `ident --csv`: one row per name.
pub fn ident(results: &[Identification]) -> Result<ExitCode, Failure> {
    let mut sheet = Sheet::new(&[
        "input",
        "native_key",
        "python_key",
        "demangled",
        "category",
        "vendor",
    ])?;
    for r in results {
        sheet.row([
            r.input.clone(),
            r.native_key.clone(),
            r.python_key.clone(),
            r.demangled.clone().unwrap_or_default(),
            r.category.as_str().to_owned(),
            r.vendor.map(|v| v.as_str().to_owned()).unwrap_or_default(),
        ])?;
    }
    sheet.finish()
}
