//! Turning the collected records into the [`Analysis`] report.

use serde::Serialize;

use crate::collect::{Collected, NONE};
use crate::graph;
use crate::launch::{LaunchRec, LaunchRecord, LaunchStore};
use crate::options::{Options, TimeWindow, WindowMode};
use crate::overlap::{self, TimeOrder};
use crate::report::*;
use crate::rows::{self, Bucket};
use crate::source::TraceSource;
use crate::timeline;
use crate::window;

/// Kernel-name fragments counted as communication (TraceLens's list, on purpose, so the
/// categories compare with its `gpu_timeline`).
pub const COMM_PATTERNS: [&str; 3] = ["nccl", "rccl", "cross_device_reduce"];

/// The summary of one trace (trace.md "Public API sketch (names only)", trace.md "JSON output").
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct Analysis {
    /// The resolved path, or the source label (`-` for stdin).
    pub trace_file: String,
    /// Every event object read.
    pub event_total: u64,
    /// Structural problems met and recovered from.
    pub stream_errors: Vec<String>,
    /// What the aggregates cover.
    #[serde(rename = "aggregation_scope")]
    pub scope: Scope,
    /// The trace's first event (the earliest kept GPU, CPU-span, step or annotation
    /// timestamp), µs: the origin of relative windows; null for a trace without events.
    pub trace_start_us: Option<f64>,
    /// The window, when one applies.
    pub window: Option<SteadyWindow>,
    /// Whether a window was requested and found.
    pub window_status: WindowStatus,
    /// Rank of the chosen file in a directory input.
    pub analyzed_rank: Option<u64>,
    /// Distinct ranks in a directory input (1 otherwise).
    pub rank_count: usize,
    /// The chosen file is a capture sidecar.
    pub selected_capture_fragment: bool,
    /// Capture cycles (files) of the analysed rank in a directory input (1 otherwise).
    pub cycles: usize,
    /// Which cycle was analysed: 1-based, in capture order.
    pub cycle: usize,
    /// Busy/idle.
    pub timeline: Timeline,
    /// Graph-replay coverage (whole trace).
    pub graph: GraphCoverage,
    /// Kernel-to-op attribution.
    pub attribution: Attribution,
    /// Hot kernels.
    pub kernels: Vec<KernelRow>,
    /// Hot ops.
    pub ops: Vec<OpRow>,
    /// The worst stream with overlapping durations, if any.
    pub stream_overlap: Option<StreamOverlap>,
    /// The `kernlens` member of a split chunk.
    pub provenance: Option<ChunkProvenance>,
    #[serde(skip)]
    launches: Option<LaunchStore>,
}

#[derive(Serialize)]
struct SummaryDoc<'a> {
    schema: &'static str,
    #[serde(flatten)]
    analysis: &'a Analysis,
}

/// The schema name of [`Analysis::to_json`].
pub const SUMMARY_SCHEMA: &str = "kernlens.summary/1";

impl Analysis {
    /// The `kernlens.summary/1` document.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(SummaryDoc {
            schema: SUMMARY_SCHEMA,
            analysis: self,
        })
        .unwrap_or(serde_json::Value::Null)
    }

    /// One record per kept kernel, by start time, when `emit_launches` was set.
    pub fn launches(&self) -> impl Iterator<Item = LaunchRecord<'_>> + '_ {
        self.launches
            .iter()
            .flat_map(|s| s.recs.iter().map(move |r| s.record(r)))
    }
}

/// Builds the report from one read's records.
pub(crate) fn build(
    source: &TraceSource,
    opts: &Options,
    c: Collected,
    stream_errors: Vec<String>,
    provenance: Option<ChunkProvenance>,
) -> Analysis {
    // A relative window is the explicit one it names. Only it needs the trace's start
    // before the sweeps; otherwise the time order gives the start at no cost.
    let known_start =
        matches!(opts.window, WindowMode::Relative(_)).then(|| window::trace_start(&c));
    let explicit = match opts.window {
        WindowMode::Explicit(w) => Some(w),
        WindowMode::Relative(w) => Some(window::absolute(w, known_start.flatten())),
        _ => None,
    };
    let (scope, status, chosen) = match (opts.window, explicit) {
        (_, Some(w)) => (
            Scope::ExplicitWindow,
            WindowStatus::Selected,
            Some(window::Chosen {
                window: w,
                step_name: String::new(),
                step_count: 0,
                method: "explicit",
                annotation_coverage: None,
            }),
        ),
        (
            WindowMode::Steady {
                min_repeats,
                source,
            },
            None,
        ) => match window::choose(&c, min_repeats, source) {
            Some(ch) => (Scope::SteadyState, WindowStatus::Selected, Some(ch)),
            None => (
                Scope::FullTrace,
                WindowStatus::NoRepeatingWindowFellBackToFullTrace,
                None,
            ),
        },
        _ => (Scope::FullTrace, WindowStatus::NotRequested, None),
    };
    let win: Option<TimeWindow> = chosen.as_ref().map(|ch| ch.window);
    let (set, _) = graph::effective_set(&c.launches);
    let kept = rows::Kept::new(c.gpu.recs(), win, |corr| {
        rows::resolve(&c.launches, &c.cpu, &c.names, set, corr)
    });
    let extra: Vec<String> = opts
        .extra_comm_patterns
        .iter()
        .map(|p| p.to_ascii_lowercase())
        .collect();
    let comm_flags: Vec<bool> = (0..c.names.len() as u32)
        .map(|id| {
            let lower = c.names.get(id).to_ascii_lowercase();
            COMM_PATTERNS.iter().any(|p| lower.contains(p))
                || extra.iter().any(|p| lower.contains(p.as_str()))
        })
        .collect();
    // The rows read the records in file order, the sweeps in time order: on three threads
    // when the caller allows more than one, over the same records.
    let by_file_order = || {
        let rows = rows::rows(&c.names, &c.cpu, &c.gpu, &kept, opts.top_k);
        let launch_recs: Option<Vec<LaunchRec>> = opts.emit_launches.then(|| {
            let mut recs: Vec<LaunchRec> = kept
                .resolved()
                .map(|(r, res)| LaunchRec {
                    name: r.name,
                    op: match res.bucket {
                        Bucket::Op(id) => id,
                        _ => NONE,
                    },
                    meta: res.meta,
                    ts: r.ts,
                    dur: r.dur,
                    corr: r.corr(),
                })
                .collect();
            // Stable: ties keep file order.
            recs.sort_by_key(|r| r.ts);
            recs
        });
        (rows, launch_recs, graph::coverage(&c.launches, &c.gpu))
    };
    let parallel = opts.threads != Some(1);
    let by_time = || {
        let recs = c.gpu.recs();
        let order = overlap::time_order(recs);
        let trace_start = known_start.unwrap_or_else(|| {
            let first = order.first().and_then(|i| recs.get(i)).map(|r| r.ts);
            window::start_of(first, &c)
        });
        let sorted = || order.iter().filter_map(|i| recs.get(i));
        // Records already in time order (graph captures' are) are swept straight through,
        // without an index and a checked lookup per record.
        let timeline = || match order {
            TimeOrder::File(_) => timeline::timeline(recs.iter(), win, &comm_flags),
            _ => timeline::timeline(sorted(), win, &comm_flags),
        };
        let stream_overlap = || match order {
            TimeOrder::File(_) => overlap::stream_overlap(&c.gpu, &c.names, recs.iter()),
            _ => overlap::stream_overlap(&c.gpu, &c.names, sorted()),
        };
        // The two sweeps over the time order are the longest part of the report: the
        // overlap one gets a thread of its own.
        let (timeline, stream_overlap) = both(parallel, timeline, stream_overlap);
        (trace_start, timeline, stream_overlap)
    };
    let (
        ((attribution, kernels, ops), launch_recs, graph),
        (trace_start, timeline, stream_overlap),
    ) = both(parallel, by_file_order, by_time);
    let window = chosen.map(|ch| {
        let explicit = ch.method == "explicit";
        SteadyWindow {
            start_us: us(ch.window.start_ns()),
            end_us: us(ch.window.end_ns()),
            step_name: (!explicit).then_some(ch.step_name),
            step_count: (!explicit).then_some(ch.step_count),
            method: ch.method.to_string(),
            annotation_coverage: ch.annotation_coverage,
            start_ns: ch.window.start_ns(),
            end_ns: ch.window.end_ns(),
        }
    });
    let launches = launch_recs.map(|recs| LaunchStore {
        names: c.names,
        metas: c.cpu.into_metas(),
        recs,
    });
    Analysis {
        trace_file: source.file().to_string(),
        event_total: c.event_total,
        stream_errors,
        scope,
        trace_start_us: trace_start.map(us),
        window,
        window_status: status,
        analyzed_rank: source.analyzed_rank(),
        rank_count: source.rank_count(),
        selected_capture_fragment: source.selected_capture_fragment(),
        cycles: source.cycles(),
        cycle: source.cycle(),
        timeline,
        graph,
        attribution,
        kernels,
        ops,
        stream_overlap,
        provenance,
        launches,
    }
}

/// `(a(), b())`, with `b` offered to a thread of its own when `parallel` (in this order
/// otherwise); a panic in `b` is passed on. Whichever thread takes `b` first runs it: when
/// `a` is done before the new thread has started (a busy machine can leave it waiting for
/// a core for milliseconds, longer than the sweeps take), `b` runs here rather than
/// waiting for it.
fn both<A, B: Send>(parallel: bool, a: impl FnOnce() -> A, b: impl FnOnce() -> B + Send) -> (A, B) {
    if !parallel {
        return (a(), b());
    }
    let job = std::sync::Mutex::new(Some(b));
    // Taken under the lock, run after it is released.
    let take = || job.lock().ok().and_then(|mut j| j.take());
    std::thread::scope(|s| {
        let helper = s.spawn(|| take().map(|b| b()));
        let a = a();
        let here = take().map(|b| b());
        match (here, helper.join()) {
            (Some(b), _) | (None, Ok(Some(b))) => (a, b),
            (None, Err(panic)) => std::panic::resume_unwind(panic),
            // Not reached: the job is taken exactly once, and only a panic in it loses it.
            (None, Ok(None)) => panic!("both: the second job was never run"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::both;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Serial or not, and whichever thread takes the second job, each job runs once and
    /// the results come back in order.
    #[test]
    fn both_runs_each_job_once() {
        for parallel in [false, true] {
            for _ in 0..50 {
                let runs = AtomicUsize::new(0);
                let (a, b) = both(
                    parallel,
                    || {
                        runs.fetch_add(1, Ordering::SeqCst);
                        1
                    },
                    || {
                        runs.fetch_add(10, Ordering::SeqCst);
                        2
                    },
                );
                assert_eq!((a, b, runs.load(Ordering::SeqCst)), (1, 2, 11));
            }
        }
    }

    /// A second job that runs long keeps its helper thread busy while the first ends:
    /// the results still come back, and a panic in it still reaches the caller.
    #[test]
    fn a_panic_in_the_second_job_is_passed_on() {
        let slow = both(
            true,
            || 1,
            || {
                std::thread::sleep(std::time::Duration::from_millis(20));
                2
            },
        );
        assert_eq!(slow, (1, 2));
        let failed = std::panic::catch_unwind(|| both(true, || 1, || -> i32 { panic!("job") }));
        assert!(failed.is_err());
    }
}
