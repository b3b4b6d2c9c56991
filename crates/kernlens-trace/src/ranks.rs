//! All-ranks mode: every rank of a directory analysed in parallel, with the busy% spread
//! (trace.md "All-ranks mode").

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use crate::analysis::Analysis;
use crate::error::TraceError;
use crate::options::{Cycles, Options};
use crate::read;
use crate::select::{self, Candidate, Selection};
use crate::source::TraceSource;

/// One rank's outcome.
#[derive(Debug)]
#[non_exhaustive]
pub struct RankEntry {
    /// The rank (None when no file carries a rank tag).
    pub rank: Option<u64>,
    /// The file analysed.
    pub trace_file: String,
    /// The analysis, or why it failed.
    pub result: Result<Analysis, TraceError>,
}

/// A failed rank in the JSON report.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct FailedRank {
    /// The rank.
    pub rank: Option<u64>,
    /// The file.
    pub trace_file: String,
    /// The error text.
    pub error: String,
}

/// Min, median and max of busy% over the ranks that succeeded.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct BusySpread {
    /// Lowest busy%.
    pub min: f64,
    /// Its rank (lower rank on ties).
    pub min_rank: Option<u64>,
    /// Middle value, or the mean of the two middle values.
    pub median: f64,
    /// Highest busy%.
    pub max: f64,
    /// Its rank (lower rank on ties).
    pub max_rank: Option<u64>,
}

/// Every rank of a directory, in ascending rank order.
#[derive(Debug)]
#[non_exhaustive]
pub struct RankReport {
    /// The directory given.
    pub input: String,
    /// One entry per rank.
    pub ranks: Vec<RankEntry>,
    /// The busy% spread; None when no rank succeeded.
    pub spread: Option<BusySpread>,
    /// Which capture cycles of each rank were read.
    pub cycles: Cycles,
}

/// The schema of [`RankReport::to_json`].
pub const RANKS_SCHEMA: &str = "kernlens.ranks/1";

impl RankReport {
    /// The `kernlens.ranks/1` document.
    pub fn to_json(&self) -> serde_json::Value {
        let ok: Vec<serde_json::Value> = self
            .ranks
            .iter()
            .filter_map(|r| r.result.as_ref().ok())
            .map(Analysis::to_json)
            .collect();
        let failed: Vec<FailedRank> = self
            .ranks
            .iter()
            .filter_map(|r| {
                r.result.as_ref().err().map(|e| FailedRank {
                    rank: r.rank,
                    trace_file: r.trace_file.clone(),
                    error: e.to_string(),
                })
            })
            .collect();
        let cycle = match self.cycles {
            Cycles::Latest => "latest",
            Cycles::All => "all",
        };
        serde_json::json!({
            "schema": RANKS_SCHEMA,
            "input": self.input,
            "cycle": cycle,
            "rank_count": self.ranks.len(),
            "ranks": ok,
            "failed": failed,
            "spread": self.spread.as_ref().map(|s| serde_json::json!({ "busy_pct": s })),
        })
    }
}

/// What all-ranks mode does with one file.
enum Planned {
    /// Analyse it as this rank (or as the only entry, rank `None`).
    Analyse(Selection),
    /// Report it as failed: its rank tag holds no rank number.
    BadTag { path: PathBuf, tag: String },
}

/// The file of each distinct rank: the largest per rank (ties: greater name), `merged-*`
/// and sidecars excluded, then the files whose rank tag is not a number (by path); without
/// any rank tag, the one file trace.md "Directory selection (deterministic)" would choose.
fn rank_files(dir: &Path, which: Cycles) -> Result<Vec<Planned>, TraceError> {
    let all = select::candidates(dir)?;
    let eligible = |c: &&Candidate| !c.sidecar && !c.name.starts_with("merged-");
    let mut ranked: Vec<&Candidate> = all
        .iter()
        .filter(eligible)
        .filter(|c| c.rank.is_some())
        .collect();
    let bad: Vec<&Candidate> = all
        .iter()
        .filter(eligible)
        .filter(|c| c.bad_tag.is_some())
        .collect();
    if ranked.is_empty() && bad.is_empty() {
        return Ok(vec![Planned::Analyse(select::select(dir)?)]);
    }
    // Each file's capture cycles: the files of its rank, in capture order.
    let all_ranked = ranked.clone();
    let cycles = |c: &Candidate| select::cycles_of(c, &all_ranked);
    match which {
        // Per rank, the latest capture (greatest stamp); without stamps, the largest file
        // (ties: greater name).
        Cycles::Latest => {
            ranked.sort_by(|a, b| {
                a.rank
                    .cmp(&b.rank)
                    .then_with(|| b.stamp.cmp(&a.stamp))
                    .then_with(|| b.size.cmp(&a.size))
                    .then_with(|| b.name.as_bytes().cmp(a.name.as_bytes()))
            });
            ranked.dedup_by(|later, first| later.rank == first.rank);
        }
        Cycles::All => ranked.sort_by(|a, b| a.rank.cmp(&b.rank).then_with(|| a.capture_order(b))),
    }
    let count = ranked.len();
    let analysed = ranked.into_iter().map(|c| {
        let (cycles, cycle) = cycles(c);
        Planned::Analyse(Selection {
            path: c.path.clone(),
            rank: c.rank,
            rank_count: count,
            capture_fragment: false,
            cycles,
            cycle,
        })
    });
    // Candidates are sorted by path, so these are too.
    let failed = bad.into_iter().map(|c| Planned::BadTag {
        path: c.path.clone(),
        tag: c.bad_tag.clone().unwrap_or_default(),
    });
    Ok(analysed.chain(failed).collect())
}

/// Analyses every rank of `dir` in parallel.
///
/// A rank whose file cannot be used, because it cannot be read, holds no `traceEvents`
/// array or no GPU event, or carries a rank tag that is not a number, is an entry with an
/// error: it is listed under `failed` and never enters the spread.
pub fn analyze_all_ranks(dir: impl AsRef<Path>, opts: &Options) -> Result<RankReport, TraceError> {
    let dir = dir.as_ref();
    if !dir.is_dir() {
        return Err(TraceError::NoUsableTrace {
            input: dir.display().to_string(),
        });
    }
    let files = rank_files(dir, opts.cycles)?;
    let ranks: Vec<RankEntry> = files
        .into_par_iter()
        .map(|plan| analyse_rank(plan, opts))
        .collect();
    let spread = spread(&ranks);
    Ok(RankReport {
        input: dir.display().to_string(),
        ranks,
        spread,
        cycles: opts.cycles,
    })
}

fn analyse_rank(plan: Planned, opts: &Options) -> RankEntry {
    match plan {
        Planned::BadTag { path, tag } => {
            let trace_file = path.display().to_string();
            RankEntry {
                rank: None,
                result: Err(TraceError::BadRankTag {
                    path: trace_file.clone(),
                    tag,
                }),
                trace_file,
            }
        }
        Planned::Analyse(sel) => {
            let rank = sel.rank;
            let trace_file = sel.path.display().to_string();
            let source = TraceSource::from_selection(sel);
            let result = crate::read_analysis(&source, opts, read::Feed::new(None)).and_then(
                |(analysis, unusable)| match unusable {
                    None => Ok(analysis),
                    Some(reason) => Err(TraceError::Unusable {
                        path: trace_file.clone(),
                        reason,
                    }),
                },
            );
            RankEntry {
                rank,
                trace_file,
                result,
            }
        }
    }
}

fn spread(ranks: &[RankEntry]) -> Option<BusySpread> {
    let mut ok: Vec<(Option<u64>, f64)> = ranks
        .iter()
        .filter_map(|r| {
            r.result
                .as_ref()
                .ok()
                .map(|a| (r.rank, a.timeline.busy_pct))
        })
        .collect();
    if ok.is_empty() {
        return None;
    }
    // Entries are in ascending rank order, so the first extreme found is the lower rank.
    let min = ok.iter().fold(ok[0], |m, x| if x.1 < m.1 { *x } else { m });
    let max = ok.iter().fold(ok[0], |m, x| if x.1 > m.1 { *x } else { m });
    ok.sort_by(|a, b| a.1.total_cmp(&b.1));
    let n = ok.len();
    let median = if n % 2 == 1 {
        ok[n / 2].1
    } else {
        (ok[n / 2 - 1].1 + ok[n / 2].1) / 2.0
    };
    Some(BusySpread {
        min: min.1,
        min_rank: min.0,
        median,
        max: max.1,
        max_rank: max.0,
    })
}
