//! Choosing one trace from a directory, deterministically (trace.md "Directory selection (deterministic)"–trace.md "All-ranks mode").

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::TraceError;
use crate::options::Limits;
use crate::read::{GZIP_MAGIC, Members};
use crate::scan::{self, Located};

/// A candidate trace file below the input directory.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub(crate) path: PathBuf,
    pub(crate) name: String,
    pub(crate) size: u64,
    pub(crate) sidecar: bool,
    pub(crate) rank: Option<u64>,
    /// A rank tag whose number does not fit a `u64` (the matched text, e.g. `rank_99…9`):
    /// all-ranks mode reports the file as failed rather than dropping it.
    pub(crate) bad_tag: Option<String>,
    /// The capture stamp `tensorboard_trace_handler` writes into the name
    /// (`<worker>.<ns>.pt.trace.json[.gz]`): orders the capture cycles of one rank.
    pub(crate) stamp: Option<u64>,
}

impl Candidate {
    /// Capture order among files of one rank: unstamped files first, then by stamp, then
    /// by name.
    pub(crate) fn capture_order(&self, other: &Candidate) -> std::cmp::Ordering {
        self.stamp
            .cmp(&other.stamp)
            .then_with(|| self.name.as_bytes().cmp(other.name.as_bytes()))
    }
}

/// The capture stamp of a `tensorboard_trace_handler` file name: the digits between the
/// last two dots before `.pt.trace.json` (or `.pt.trace.json.gz`), case-insensitive.
pub(crate) fn capture_stamp(name: &str) -> Option<u64> {
    let lower = name.to_ascii_lowercase();
    let stem = lower
        .strip_suffix(".pt.trace.json.gz")
        .or_else(|| lower.strip_suffix(".pt.trace.json"))?;
    let (_, digits) = stem.rsplit_once('.')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The capture cycles of `chosen`'s rank among `files`: how many, and `chosen`'s 1-based
/// place in capture order. A file without a rank is one cycle of one.
pub(crate) fn cycles_of(chosen: &Candidate, files: &[&Candidate]) -> (usize, usize) {
    if chosen.rank.is_none() {
        return (1, 1);
    }
    let same: Vec<&&Candidate> = files.iter().filter(|c| c.rank == chosen.rank).collect();
    let before = same
        .iter()
        .filter(|c| c.capture_order(chosen).is_lt())
        .count();
    (same.len().max(1), before + 1)
}

/// The chosen file and what the directory said about ranks.
#[derive(Debug, Clone)]
pub(crate) struct Selection {
    pub(crate) path: PathBuf,
    pub(crate) rank: Option<u64>,
    pub(crate) rank_count: usize,
    pub(crate) capture_fragment: bool,
    /// Capture cycles (files) of the chosen file's rank, and which one it is (1-based, in
    /// capture order).
    pub(crate) cycles: usize,
    pub(crate) cycle: usize,
}

/// The rank tag `rank[_-]?(\d+)` (case-insensitive) in a file name: the first match, its
/// number, or the matched text when the number does not fit a `u64`.
pub(crate) fn rank_tag(name: &str) -> Option<Result<u64, String>> {
    let b = name.as_bytes();
    let mut i = 0;
    while i + 4 <= b.len() {
        if b[i..i + 4].eq_ignore_ascii_case(b"rank") {
            let mut j = i + 4;
            if matches!(b.get(j), Some(b'_' | b'-')) && b.get(j + 1).is_some_and(u8::is_ascii_digit)
            {
                j += 1;
            }
            let start = j;
            while b.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
            if j > start {
                // Only ASCII digits were matched, so parsing fails only on overflow.
                return Some(name[start..j].parse().map_err(|_| name[i..j].to_string()));
            }
        }
        i += 1;
    }
    None
}

fn sidecar_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let bs = lower
        .strip_prefix("bs_")
        .is_some_and(|rest| rest.as_bytes().first().is_some_and(u8::is_ascii_digit));
    bs || lower.contains("graph_capture")
}

fn sidecar_dir(component: &str) -> bool {
    let lower = component.to_ascii_lowercase();
    lower == "capture_traces" || lower.starts_with("graph_capture")
}

/// The sidecar test for a single file: its name and its parent directory's name only.
pub(crate) fn is_sidecar_single(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = path
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    sidecar_name(&name) || sidecar_dir(&parent)
}

/// All `.json` / `.json.gz` regular files below `dir`, with their sidecar and rank facts.
pub(crate) fn candidates(dir: &Path) -> Result<Vec<Candidate>, TraceError> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let entries = fs::read_dir(&d).map_err(|source| TraceError::Io {
            action: "list directory",
            path: d.clone(),
            source,
        })?;
        for entry in entries.flatten() {
            let path = entry.path();
            // Directory symlinks are not followed: they can loop.
            let Ok(ft) = entry.file_type() else { continue };
            if ft.is_dir() {
                pending.push(path);
                continue;
            }
            let Ok(meta) = fs::metadata(&path) else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let lower = name.to_ascii_lowercase();
            if !(lower.ends_with(".json") || lower.ends_with(".json.gz")) {
                continue;
            }
            let below = path.strip_prefix(dir).unwrap_or(&path);
            let in_sidecar_dir = below
                .parent()
                .into_iter()
                .flat_map(Path::components)
                .any(|c| sidecar_dir(&c.as_os_str().to_string_lossy()));
            let tag = rank_tag(&name);
            out.push(Candidate {
                stamp: capture_stamp(&name),
                sidecar: sidecar_name(&name) || in_sidecar_dir,
                rank: tag.clone().and_then(Result::ok),
                bad_tag: tag.and_then(Result::err),
                size: meta.len(),
                name,
                path,
            });
        }
    }
    // Directory order is not stable across filesystems; the rules below only use
    // names and sizes, but sorting keeps every tie-break independent of it.
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// How much of a candidate's (decompressed) text is read to tell whether it is a trace.
const SNIFF_BYTES: usize = 1 << 20;

/// Whether the file may be a trace: its start is an array, or an object whose top-level
/// `traceEvents` member comes within [`SNIFF_BYTES`] (undecided, unreadable or damaged
/// files are kept: reading them reports why).
pub(crate) fn may_be_trace(path: &Path) -> bool {
    let Ok(file) = fs::File::open(path) else {
        return true;
    };
    let mut magic = [0u8; 2];
    let gz = (&file).read_exact(&mut magic).is_ok() && magic == GZIP_MAGIC;
    let Ok(file) = fs::File::open(path) else {
        return true;
    };
    let reader: Box<dyn Read> = if gz {
        Box::new(Members::new(file))
    } else {
        Box::new(file)
    };
    let mut head = Vec::new();
    let read = reader.take(SNIFF_BYTES as u64).read_to_end(&mut head);
    let eof = read.is_ok() && head.len() < SNIFF_BYTES;
    !matches!(
        scan::locate_array(&head, eof, &Limits::default()),
        Located::NotATrace
    ) || read.is_err()
}

/// Picks one trace from `dir` (trace.md "Directory selection (deterministic)"), skipping candidates that are not traces.
pub(crate) fn select(dir: &Path) -> Result<Selection, TraceError> {
    let mut all = candidates(dir)?;
    all.retain(|c| may_be_trace(&c.path));
    if all.is_empty() {
        return Err(TraceError::NoUsableTrace {
            input: dir.display().to_string(),
        });
    }
    let main: Vec<&Candidate> = all.iter().filter(|c| !c.sidecar).collect();
    let mut ranks: Vec<u64> = main.iter().filter_map(|c| c.rank).collect();
    ranks.sort_unstable();
    ranks.dedup();
    let rank_count = ranks.len().max(1);
    let pool: Vec<&Candidate> = if main.is_empty() {
        all.iter().collect()
    } else {
        main
    };
    let merged: Vec<&Candidate> = pool
        .iter()
        .copied()
        .filter(|c| c.name.starts_with("merged-"))
        .collect();
    let largest = |set: &[&Candidate]| -> Option<Candidate> {
        set.iter()
            .max_by(|a, b| {
                a.size
                    .cmp(&b.size)
                    .then_with(|| a.name.as_bytes().cmp(b.name.as_bytes()))
            })
            .map(|c| (*c).clone())
    };
    let chosen = if !merged.is_empty() {
        largest(&merged)
    } else if pool.iter().any(|c| c.rank.is_some()) {
        // Of the lowest rank's files, the latest capture cycle (greatest stamp); without
        // stamps, the smaller name.
        pool.iter()
            .filter(|c| c.rank.is_some())
            .min_by(|a, b| {
                a.rank
                    .cmp(&b.rank)
                    .then_with(|| b.stamp.cmp(&a.stamp))
                    .then_with(|| a.name.as_bytes().cmp(b.name.as_bytes()))
            })
            .map(|c| (*c).clone())
    } else {
        largest(&pool)
    };
    let Some(chosen) = chosen else {
        return Err(TraceError::NoUsableTrace {
            input: dir.display().to_string(),
        });
    };
    let (cycles, cycle) = if chosen.name.starts_with("merged-") {
        (1, 1)
    } else {
        cycles_of(&chosen, &pool)
    };
    Ok(Selection {
        rank: chosen.rank,
        rank_count,
        capture_fragment: chosen.sidecar,
        path: chosen.path,
        cycles,
        cycle,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_tags() {
        assert_eq!(rank_tag("rank_3.json"), Some(Ok(3)));
        assert_eq!(rank_tag("x-RANK-12.trace.json.gz"), Some(Ok(12)));
        assert_eq!(rank_tag("rank7"), Some(Ok(7)));
        assert_eq!(rank_tag("x-TP-0.trace.json.gz"), None);
        assert_eq!(rank_tag("rank_x_rank2"), Some(Ok(2)));
        assert_eq!(rank_tag("bs_512_rank0.json.gz"), Some(Ok(0)));
        assert_eq!(
            rank_tag("rank_18446744073709551615.json"),
            Some(Ok(u64::MAX))
        );
    }

    #[test]
    fn a_rank_number_too_large_for_u64_is_the_tag_not_a_miss() {
        assert_eq!(
            rank_tag("w-RANK-18446744073709551616.json"),
            Some(Err("RANK-18446744073709551616".to_string()))
        );
        // The first match is the tag: a later, parseable one does not replace it.
        assert_eq!(
            rank_tag("rank99999999999999999999_rank2.json"),
            Some(Err("rank99999999999999999999".to_string()))
        );
    }

    #[test]
    fn capture_stamps() {
        assert_eq!(
            capture_stamp("rank0.1796150823617749366.pt.trace.json.gz"),
            Some(1_796_150_823_617_749_366)
        );
        assert_eq!(capture_stamp("host_12.7.PT.TRACE.JSON"), Some(7));
        assert_eq!(capture_stamp("rank0.pt.trace.json"), None);
        assert_eq!(capture_stamp("rank0.12x.pt.trace.json"), None);
        assert_eq!(capture_stamp("rank_0.json"), None);
        assert_eq!(capture_stamp("a.99999999999999999999.pt.trace.json"), None);
    }

    #[test]
    fn sidecar_names() {
        assert!(sidecar_name("bs_512_rank0.json.gz"));
        assert!(sidecar_name("cuda_graph_capture-Decode-TP-3.json.gz"));
        assert!(!sidecar_name("bs_x.json"));
        assert!(!sidecar_name("x-TP-0.trace.json.gz"));
    }
}
