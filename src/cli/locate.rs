//! `kernlens locate NAME... [--root DIR...] [--trace TRACE] [--no-discover]
//! [--dump-keywords] [--json]`: the file that defines each kernel
//! (locate.md; JSON schema `kernlens.locate/1`, cli.md). Environment values
//! (`KERNLENS_SOURCE_ROOTS`, the discovery environment, cache directories,
//! the scratch root to exclude) are read here, at the edge, and handed in.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use kernlens_locate::{
    DiscoveryEnv, KeywordPlan, KindContext, LauncherIndex, LauncherOptions, LocateOptions,
    LocateResult, Locator, MENTION_ONLY, SearchRoot, keywords_for,
};
use kernlens_scratch::location::ScratchEnv;
use kernlens_trace::TraceSource;
use serde::Serialize;

use super::{Failure, write_stdout};

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
    /// Print one `kernlens.locate/1` JSON document instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    roots: &'a [SearchRoot],
    results: &'a [LocateResult],
}

#[derive(Serialize)]
struct KeywordDocument<'a> {
    schema: &'static str,
    plans: &'a [KeywordPlan],
}

fn env_path(key: &str) -> Option<PathBuf> {
    std::env::var_os(key)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

pub fn run(args: Args) -> Result<ExitCode, Failure> {
    if args.dump_keywords {
        let plans: Vec<KeywordPlan> = args.names.iter().map(|n| keywords_for(n)).collect();
        let text = if args.json {
            let doc = KeywordDocument {
                schema: "kernlens.locate.keywords/1",
                plans: &plans,
            };
            to_json(&doc)?
        } else {
            let mut seen: Vec<&str> = Vec::new();
            for p in plans.iter().filter(|p| p.refusal.is_none()) {
                for k in p.all() {
                    if !seen.contains(&k) {
                        seen.push(k);
                    }
                }
            }
            seen.iter().map(|k| format!("{k}\n")).collect()
        };
        return write_stdout(&text);
    }
    let mut builder = Locator::builder();
    for r in &args.roots {
        builder = builder.root(r);
    }
    if let Some(v) = std::env::var_os("KERNLENS_SOURCE_ROOTS") {
        builder = builder.env_roots(v.to_string_lossy().into_owned());
    }
    if !args.no_discover {
        builder = builder.discovery(DiscoveryEnv::from_process());
    }
    let scratch = ScratchEnv::new(
        std::env::var("KERNLENS_LOCAL_SCRATCH_ROOT").ok(),
        std::env::var("XDG_CACHE_HOME").ok(),
        env_path("HOME"),
    );
    if let (Some(root), _) = scratch.local_root() {
        builder = builder.exclude_paths([root]);
    }
    let mut locator = builder
        .build()
        .map_err(|e| Failure::new("cannot locate kernel sources", e))?;
    for w in locator.warnings() {
        eprintln!("kernlens: warning: {}", w.message);
    }
    let mut opts = LocateOptions::default().with_kind_context(KindContext::with_cache_dirs(
        env_path("TORCHINDUCTOR_CACHE_DIR"),
        env_path("TRITON_CACHE_DIR"),
    ));
    if let Some(trace) = &args.trace {
        let source = TraceSource::open(trace)
            .map_err(|e| Failure::new(format!("cannot open trace '{trace}'"), e))?;
        let index = LauncherIndex::from_trace(&source, &LauncherOptions::default())
            .map_err(|e| Failure::new("cannot read launcher evidence", e))?;
        opts = opts.with_launchers(index);
    }
    let names: Vec<&str> = args.names.iter().map(String::as_str).collect();
    let show_progress = !args.json && std::io::stderr().is_terminal();
    let results = with_progress(show_progress, locator.roots().len(), || {
        locator.locate_many(&names, &opts)
    });
    let text = if args.json {
        to_json(&Document {
            schema: "kernlens.locate/1",
            roots: locator.roots(),
            results: &results,
        })?
    } else {
        table(&results)
    };
    write_stdout(&text)
}

/// Runs `work`, showing elapsed time on standard error while it walks and
/// scans, when standard error is a terminal (never in `--json` output).
fn with_progress<T>(show: bool, roots: usize, work: impl FnOnce() -> T) -> T {
    if !show {
        return work();
    }
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let start = Instant::now();
            // Quick searches finish before anything is drawn.
            std::thread::sleep(Duration::from_millis(300));
            let mut drawn = false;
            while !done.load(Ordering::Relaxed) {
                eprint!(
                    "\rkernlens: searching {roots} source root(s)... {:.1} s",
                    start.elapsed().as_secs_f64()
                );
                drawn = true;
                std::thread::sleep(Duration::from_millis(200));
            }
            if drawn {
                eprint!("\r\x1b[2K");
            }
        });
        let out = work();
        done.store(true, Ordering::Relaxed);
        out
    })
}

fn to_json<T: Serialize>(doc: &T) -> Result<String, Failure> {
    let mut json = serde_json::to_string_pretty(doc)
        .map_err(|e| Failure::new("cannot write the locate JSON", e))?;
    json.push('\n');
    Ok(json)
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
    let header = [
        "KIND".to_owned(),
        "METHOD".to_owned(),
        "CONFIDENCE".to_owned(),
        "SOURCE".to_owned(),
        "NAME".to_owned(),
    ];
    let rows: Vec<[String; 5]> = results
        .iter()
        .map(|r| {
            let method = serde_json::to_value(r.method)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let source = match (&r.path, r.line) {
                (Some(p), Some(l)) => format!("{}:{l}", p.display()),
                (Some(p), None) => p.display().to_string(),
                _ => format!("not found ({})", reason_shown(r.reason.map(|r| r.as_str()))),
            };
            [
                r.kind.as_str().to_owned(),
                method,
                r.confidence.as_str().to_owned(),
                source,
                r.name.clone(),
            ]
        })
        .collect();
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if i + 1 < row.len() {
                let pad = widths[i] - cell.chars().count() + 2;
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
