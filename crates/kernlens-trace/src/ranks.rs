//! All-ranks mode: every rank of a directory analysed in parallel, with the busy% spread
//! (trace.md "All-ranks mode").

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

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
    /// A report from entries read elsewhere (one [`RankFile::analyze`] per file, in
    /// [`plan_ranks`]'s order), with the spread computed as [`analyze_all_ranks`] does.
    pub fn from_entries(input: impl Into<String>, ranks: Vec<RankEntry>, cycles: Cycles) -> Self {
        let spread = spread(ranks.iter().filter_map(|r| {
            r.result
                .as_ref()
                .ok()
                .map(|a| (r.rank, a.timeline.busy_pct))
        }));
        RankReport {
            input: input.into(),
            ranks,
            spread,
            cycles,
        }
    }

    /// The `kernlens.ranks/1` document.
    pub fn to_json(&self) -> serde_json::Value {
        let ok: Vec<serde_json::Value> = self
            .ranks
            .iter()
            .filter_map(|r| r.result.as_ref().ok())
            .map(Analysis::to_json)
            .collect();
        let failed = self.ranks.iter().filter_map(|r| {
            r.result.as_ref().err().map(|e| FailedRank {
                rank: r.rank,
                trace_file: r.trace_file.clone(),
                error: e.to_string(),
            })
        });
        document(
            &self.input,
            self.cycles,
            self.ranks.len(),
            ok,
            failed.collect(),
            self.spread.as_ref(),
        )
    }
}

/// One rank's outcome as the `kernlens.ranks/1` document holds it: its summary document or
/// its error text. Plain data (serde both ways), so ranks read in other processes or on other
/// machines are reduced by [`ranks_document`] to the document [`RankReport::to_json`] gives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RankOutcome {
    /// The rank (None when no file carries a rank tag).
    pub rank: Option<u64>,
    /// The file analysed.
    pub trace_file: String,
    /// The `kernlens.summary/1` document and its busy%, or the error text.
    pub result: Result<RankSummary, String>,
}

/// What the ranks document takes from one analysed rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RankSummary {
    /// Its busy%, for the spread.
    pub busy_pct: f64,
    /// Its `kernlens.summary/1` document.
    pub summary: serde_json::Value,
}

impl RankEntry {
    /// This entry as the ranks document holds it.
    pub fn outcome(&self) -> RankOutcome {
        RankOutcome {
            rank: self.rank,
            trace_file: self.trace_file.clone(),
            result: match &self.result {
                Ok(a) => Ok(RankSummary {
                    busy_pct: a.timeline.busy_pct,
                    summary: a.to_json(),
                }),
                Err(e) => Err(e.to_string()),
            },
        }
    }
}

/// The `kernlens.ranks/1` document of `input` from outcomes in [`plan_ranks`]'s order: the
/// same document [`RankReport::to_json`] gives when the ranks were read in this process.
pub fn ranks_document(input: &str, cycles: Cycles, outcomes: &[RankOutcome]) -> serde_json::Value {
    let spread = spread(
        outcomes
            .iter()
            .filter_map(|o| o.result.as_ref().ok().map(|s| (o.rank, s.busy_pct))),
    );
    let ok = outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().ok().map(|s| s.summary.clone()))
        .collect();
    let failed = outcomes
        .iter()
        .filter_map(|o| {
            o.result.as_ref().err().map(|e| FailedRank {
                rank: o.rank,
                trace_file: o.trace_file.clone(),
                error: e.clone(),
            })
        })
        .collect();
    document(input, cycles, outcomes.len(), ok, failed, spread.as_ref())
}

/// The one writer of the `kernlens.ranks/1` layout.
fn document(
    input: &str,
    cycles: Cycles,
    rank_count: usize,
    ok: Vec<serde_json::Value>,
    failed: Vec<FailedRank>,
    spread: Option<&BusySpread>,
) -> serde_json::Value {
    let cycle = match cycles {
        Cycles::Latest => "latest",
        Cycles::All => "all",
    };
    serde_json::json!({
        "schema": RANKS_SCHEMA,
        "input": input,
        "cycle": cycle,
        "rank_count": rank_count,
        "ranks": ok,
        "failed": failed,
        "spread": spread.map(|s| serde_json::json!({ "busy_pct": s })),
    })
}

/// One file of all-ranks mode, chosen before any read by [`plan_ranks`]. Plain data (serde
/// both ways), so a scheduler can hand each file to a worker in another process, which reads
/// it with [`RankFile::analyze`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RankFile {
    /// The file.
    pub path: PathBuf,
    /// Its rank (None when no file carries a rank tag, or its tag holds no rank number).
    pub rank: Option<u64>,
    /// Entries in the plan (the analysis's `rank_count`).
    pub rank_count: usize,
    /// The file is a capture sidecar.
    pub capture_fragment: bool,
    /// Capture cycles of its rank, and which one it is (1-based).
    pub cycles: usize,
    /// Which cycle it is (1-based, in capture order).
    pub cycle: usize,
    /// The rank tag that holds no rank number: the entry fails without a read.
    pub bad_tag: Option<String>,
}

impl RankFile {
    /// Reads this file as all-ranks mode does: an entry with its analysis, or with why the
    /// rank failed (unreadable, not a trace, no `traceEvents` array or no GPU event, bad tag).
    pub fn analyze(&self, opts: &Options) -> RankEntry {
        let trace_file = self.path.display().to_string();
        if let Some(tag) = &self.bad_tag {
            return RankEntry {
                rank: None,
                result: Err(TraceError::BadRankTag {
                    path: trace_file.clone(),
                    tag: tag.clone(),
                }),
                trace_file,
            };
        }
        let source = TraceSource::from_selection(Selection {
            path: self.path.clone(),
            rank: self.rank,
            rank_count: self.rank_count,
            capture_fragment: self.capture_fragment,
            cycles: self.cycles,
            cycle: self.cycle,
        });
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
            rank: self.rank,
            trace_file,
            result,
        }
    }
}

impl From<Planned> for RankFile {
    fn from(plan: Planned) -> Self {
        match plan {
            Planned::Analyse(sel) => RankFile {
                path: sel.path,
                rank: sel.rank,
                rank_count: sel.rank_count,
                capture_fragment: sel.capture_fragment,
                cycles: sel.cycles,
                cycle: sel.cycle,
                bad_tag: None,
            },
            Planned::BadTag { path, tag } => RankFile {
                path,
                rank: None,
                rank_count: 0,
                capture_fragment: false,
                cycles: 1,
                cycle: 1,
                bad_tag: Some(tag),
            },
        }
    }
}

/// Explicit files as an all-ranks plan, for a job whose ranks are not one directory: each file
/// is one entry whose rank is its name's rank tag (trace.md "Directory selection"), in report
/// order (numbered ranks ascending, then the files without a usable tag, by path). Each file is
/// read as it is; nothing is deduplicated or excluded.
pub fn plan_files<P: AsRef<Path>>(paths: &[P]) -> Vec<RankFile> {
    let count = paths.len();
    let mut plan: Vec<RankFile> = paths
        .iter()
        .map(|p| {
            let path = p.as_ref().to_path_buf();
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let tag = select::rank_tag(&name);
            RankFile {
                rank: tag.clone().and_then(Result::ok),
                bad_tag: tag.and_then(Result::err),
                path,
                rank_count: count,
                capture_fragment: false,
                cycles: 1,
                cycle: 1,
            }
        })
        .collect();
    plan.sort_by(|a, b| {
        (a.rank.is_none(), a.rank, &a.path).cmp(&(b.rank.is_none(), b.rank, &b.path))
    });
    plan
}

/// The files all-ranks mode reads under `dir`, in report order (trace.md "All-ranks mode"):
/// [`analyze_all_ranks`] is this plan, [`RankFile::analyze`] on each file in parallel, and
/// [`RankReport::from_entries`].
pub fn plan_ranks(dir: impl AsRef<Path>, cycles: Cycles) -> Result<Vec<RankFile>, TraceError> {
    let dir = dir.as_ref();
    if !dir.is_dir() {
        return Err(TraceError::NoUsableTrace {
            input: dir.display().to_string(),
        });
    }
    Ok(rank_files(dir, cycles)?
        .into_iter()
        .map(RankFile::from)
        .collect())
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
    let files = plan_ranks(dir, opts.cycles)?;
    let ranks: Vec<RankEntry> = files.par_iter().map(|file| file.analyze(opts)).collect();
    Ok(RankReport::from_entries(
        dir.display().to_string(),
        ranks,
        opts.cycles,
    ))
}

/// Min, median and max over `(rank, busy%)` in ascending rank order.
fn spread(busy: impl Iterator<Item = (Option<u64>, f64)>) -> Option<BusySpread> {
    let mut ok: Vec<(Option<u64>, f64)> = busy.collect();
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
