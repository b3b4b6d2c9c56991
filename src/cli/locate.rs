//! `kernlens locate NAME... [--root DIR...] [--trace TRACE] [--no-discover]
//! [--dump-keywords] [--json]`: the file that defines each kernel
//! (locate.md; JSON schema `kernlens.locate/1`, cli.md). Environment values
//! (`KERNLENS_SOURCE_ROOTS`, the discovery environment, cache directories,
//! the scratch root to exclude) are read here, at the edge, and handed in.

use std::path::PathBuf;
use std::process::ExitCode;

use kernlens_locate::{
    KeywordPlan, KeywordsDocument, LauncherIndexBuilder, LauncherOptions, LocateDocument,
    LocateOptions, LocateResult, MENTION_ONLY, keywords_for,
};
use kernlens_trace::Options;

use super::progress::{self, Progress};
use super::table::Table;
use super::{Env, Failure, Format};
use kernlens::triage::not_found_reason;

/// Arguments of `kernlens locate`.
#[derive(clap::Args)]
pub struct Args {
    /// Kernel names as a trace spells them.
    #[arg(required = true, value_name = "NAME")]
    names: Vec<String>,
    /// A directory to search (repeatable); searched before `KERNLENS_SOURCE_ROOTS` and discovery.
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// A with_stack trace whose Python frames give launcher evidence.
    #[arg(long, value_name = "TRACE")]
    trace: Option<String>,
    /// Do not discover installed framework packages.
    #[arg(long)]
    no_discover: bool,
    /// Print the keywords each pass would try, without searching (text: the
    /// pattern set, one per line).
    #[arg(long)]
    dump_keywords: bool,
    /// JSON: one `kernlens.locate/1` document instead of a table.
    #[command(flatten)]
    format: Format,
    /// Print the table as RFC 4180 CSV instead (full names, times in µs).
    #[arg(long, conflicts_with_all = ["json", "pretty"])]
    csv: bool,
}

pub fn run(args: Args, env: &Env) -> Result<ExitCode, Failure> {
    if args.dump_keywords {
        let plans: Vec<KeywordPlan> = args.names.iter().map(|n| keywords_for(n)).collect();
        return args.format.write(&KeywordsDocument::new(&plans), || {
            let mut seen: Vec<&str> = Vec::new();
            for p in plans.iter().filter(|p| p.refusal.is_none()) {
                for k in p.all() {
                    if !seen.contains(&k) {
                        seen.push(k);
                    }
                }
            }
            seen.iter().map(|k| format!("{k}\n")).collect()
        });
    }
    let mut locator = env
        .locator(&args.roots, !args.no_discover)
        .build()
        .map_err(|e| Failure::new("cannot locate kernel sources", e))?;
    for w in locator.warnings() {
        eprintln!("kernlens: warning: {}", w.message);
    }
    let progress = Progress::new(env, args.format.is_json() || args.csv);
    let mut opts = LocateOptions::default().with_kind_context(env.kind_context());
    if let Some(trace) = &args.trace {
        let source = super::open_trace(trace)?;
        let mut launchers = LauncherIndexBuilder::new(LauncherOptions::default());
        progress::analyze(progress, &source, &Options::default(), Some(&mut launchers)).map_err(
            |e| Failure::new(format!("cannot read launcher evidence from '{trace}'"), e),
        )?;
        opts = opts.with_launchers(launchers.finish());
    }
    let names: Vec<&str> = args.names.iter().map(String::as_str).collect();
    let spinner = progress.spinner(format!(
        "searching {} source root(s) for {} kernel(s)",
        locator.roots().len(),
        names.len()
    ));
    let results = locator.locate_many(&names, &opts);
    drop(spinner);
    if args.csv {
        return super::csv_tables::locate(&results);
    }
    args.format
        .write(&LocateDocument::new(locator.roots(), &results), || {
            table(&results)
        })
}

/// A not-found reason as the tables show it: `mention_only` reads
/// "mention only" (the best file was kept as a candidate, not an answer).
pub(crate) fn reason_shown(reason: Option<&str>) -> &str {
    match reason {
        Some(MENTION_ONLY) => "mention only",
        Some(reason) => reason,
        None => "no match",
    }
}

fn table(results: &[LocateResult]) -> String {
    let mut out = Table::new(
        &["KIND", "METHOD", "CONFIDENCE", "SOURCE", "NAME"],
        &[false; 5],
    );
    for r in results {
        let method = serde_json::to_value(r.method)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let source = match (&r.path, r.line) {
            (Some(p), Some(l)) => format!("{}:{l}", p.display()),
            (Some(p), None) => p.display().to_string(),
            _ => format!(
                "not found ({})",
                reason_shown(Some(not_found_reason(r).as_str()))
            ),
        };
        out.row(vec![
            r.kind.as_str().to_owned(),
            method,
            r.confidence.as_str().to_owned(),
            source,
            r.name.clone(),
        ]);
    }
    out.render()
}
