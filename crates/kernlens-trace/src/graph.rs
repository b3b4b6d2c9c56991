//! Graph-replay coverage over the whole trace (trace.md "Graph launches and coverage").

use crate::collect::{Gpu, GpuKind, Launches};
use crate::intern::Set;
use crate::report::{GraphCoverage, LaunchApi};

/// Whether a runtime or driver call's name makes it a graph launch: it holds `GraphLaunch`
/// (`cudaGraphLaunch`, `cudaGraphLaunch_v10000`, `cuGraphLaunch`, `hipGraphLaunch`; trace.md
/// "Graph launches and coverage"). The one definition the reader, split and the report's
/// lanes use. Looked for from each `G`: launch names are short and most (`cudaLaunchKernel`)
/// have none, where a substring search's set-up cost more than the scan.
pub fn is_graph_launch(name: &[u8]) -> bool {
    memchr::memchr_iter(b'G', name).any(|i| name[i..].starts_with(b"GraphLaunch"))
}

/// The effective graph-launch set: runtime launches, or driver ones in a driver-only trace.
///
/// A runtime `cudaGraphLaunch` calls the driver beneath it with its own correlation,
/// while replayed kernels carry only the runtime one; counting both would halve coverage.
pub(crate) fn effective_set(launches: &Launches) -> (&Set<i64>, Option<LaunchApi>) {
    let (runtime, driver) = (launches.runtime_graph(), launches.driver_graph());
    if !runtime.is_empty() {
        (runtime, Some(LaunchApi::Runtime))
    } else if !driver.is_empty() {
        (driver, Some(LaunchApi::Driver))
    } else {
        (runtime, None)
    }
}

/// Coverage, counted before any window.
pub(crate) fn coverage(launches: &Launches, gpu: &Gpu) -> GraphCoverage {
    let (set, launch_api) = effective_set(launches);
    let mut with_kernels: Set<i64> = Set::default();
    let mut graph_kernels = 0u64;
    if !set.is_empty() {
        // A replay's kernels all carry its launch's correlation, one after another:
        // remember the last answer instead of hashing each kernel twice.
        let mut last: Option<(Option<i64>, bool)> = None;
        for r in gpu.recs().iter().filter(|r| r.kind == GpuKind::Kernel) {
            let corr = r.corr();
            let in_graph = match last {
                Some((k, hit)) if k == corr => hit,
                _ => {
                    let hit = corr.is_some_and(|k| set.contains(&k));
                    if let (true, Some(k)) = (hit, corr) {
                        with_kernels.insert(k);
                    }
                    last = Some((corr, hit));
                    hit
                }
            };
            if in_graph {
                graph_kernels += 1;
            }
        }
    }
    let launches = set.len() as u64;
    let launches_with_kernels = with_kernels.len() as u64;
    let coverage = (launches > 0).then(|| launches_with_kernels as f64 / launches as f64);
    // Never looks at busy%: a fully recorded but idle workload must still be gated.
    let under_recorded =
        launches >= 2 && graph_kernels >= 1 && launches_with_kernels * 2 < launches;
    GraphCoverage {
        launches,
        launches_with_kernels,
        coverage,
        graph_kernels,
        under_recorded,
        launch_api,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The scan from each `G` says what a substring search says.
        #[test]
        fn graph_launch_scan_is_a_substring_search(
            pre in "[GaLrphuncx]{0,12}", post in "[GaLrphuncx]{0,12}", mid in any::<bool>(),
        ) {
            let name = format!("{pre}{}{post}", if mid { "GraphLaunch" } else { "" });
            prop_assert_eq!(is_graph_launch(name.as_bytes()), name.contains("GraphLaunch"));
        }
    }
}
