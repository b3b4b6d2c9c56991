//! Steady-state window selection (trace.md "Steady-state window").

use crate::collect::{Collected, Gpu, Launches, Span};
use crate::intern::Map;
use crate::options::{StepSource, TimeWindow};

/// A chosen window and how it was found.
#[derive(Debug, Clone)]
pub(crate) struct Chosen {
    pub(crate) window: TimeWindow,
    pub(crate) step_name: String,
    pub(crate) step_count: usize,
    pub(crate) method: &'static str,
    pub(crate) annotation_coverage: Option<f64>,
}

/// The trace's first event: the earliest timestamp among the GPU activity and the complete
/// events of the categories analysis reads (CPU ops, runtime and driver calls, annotations;
/// not Python frames, which only an observer asks for). The origin of
/// relative windows and the `trace_start_us` of the summary; `None` for a trace with none.
pub(crate) fn trace_start(c: &Collected) -> Option<i64> {
    start_of(c.gpu.recs().iter().map(|r| r.ts).min(), c)
}

/// [`trace_start`] when the earliest GPU start is known (the first record in time order).
pub(crate) fn start_of(first_gpu_ts: Option<i64>, c: &Collected) -> Option<i64> {
    first_gpu_ts.into_iter().chain(c.first_complete_ts).min()
}

/// The absolute window a relative one names, `origin` being [`trace_start`] (0 when the
/// trace has no event); the sum saturates rather than wraps.
pub(crate) fn absolute(offsets: TimeWindow, origin: Option<i64>) -> TimeWindow {
    let origin = origin.unwrap_or(0);
    TimeWindow::clamped(
        origin.saturating_add(offsets.start_ns()),
        origin.saturating_add(offsets.end_ns()),
    )
}

/// `ProfilerStep#12` → `ProfilerStep`, `denoise_step_0` → `denoise_step`.
pub(crate) fn normalize(name: &str) -> &str {
    let no_digits = name.trim_end_matches(|c: char| c.is_ascii_digit());
    no_digits.trim_end_matches(['#', '_', '-', ' '])
}

/// How strongly a normalised name reads like the loop's step: 2 for the names a loop
/// itself is given (`ProfilerStep`, `iteration`, `denoise`), 1 for other step-like names
/// (`optimizer_step`, `Optimizer.step#AdamW.step`, which name work inside a step), else 0.
pub(crate) fn step_rank(name: &str) -> u8 {
    let lower = name.to_ascii_lowercase();
    if lower.contains("profilerstep") || lower.contains("denoise") || lower.contains("iteration") {
        return 2;
    }
    let b = lower.as_bytes();
    let step_like = lower.match_indices("step").any(|(i, _)| {
        let before = i.checked_sub(1).map(|j| b[j]);
        let after = b.get(i + 4).copied();
        !before.is_some_and(|c| c.is_ascii_lowercase())
            || !after.is_some_and(|c| c.is_ascii_lowercase())
    });
    u8::from(step_like)
}

/// Whether every span of `inner` lies inside some span of `outer` (both `(ts, dur)`).
fn nests_in(inner: &[(i64, i64)], outer: &[(i64, i64)]) -> bool {
    let end = |(ts, dur): (i64, i64)| ts.saturating_add(dur);
    let mut sorted: Vec<(i64, i64)> = outer.iter().map(|&s| (s.0, end(s))).collect();
    sorted.sort_unstable();
    // The latest end among the outer spans that start at or before each start.
    let mut reach = Vec::with_capacity(sorted.len());
    let mut most = i64::MIN;
    for &(_, e) in &sorted {
        most = most.max(e);
        reach.push(most);
    }
    !inner.is_empty()
        && inner.iter().all(|&s| {
            let starts_before = sorted.partition_point(|&(ts, _)| ts <= s.0);
            starts_before > 0 && reach[starts_before - 1] >= end(s)
        })
}

/// Step 3 of trace.md "Annotation rule" over the qualifying groups (in first-seen order): the greatest
/// `(step rank, count)`, first seen on ties; then, while the choice nests inside another
/// qualifying group with at least as many spans, that enclosing group (the greatest one
/// if several). A group with fewer spans that holds the choice is an outer loop (an epoch
/// around steps), not the step.
fn rank_groups(groups: &[(&str, &Vec<(i64, i64)>)]) -> Option<usize> {
    let key = |i: usize| (step_rank(groups[i].0), groups[i].1.len());
    let mut best = (0..groups.len()).rev().max_by_key(|&i| key(i))?;
    for _ in 0..groups.len() {
        let (inner, count) = (groups[best].1, groups[best].1.len());
        let encloser = (0..groups.len())
            .rev()
            .filter(|&i| i != best && groups[i].1.len() >= count)
            // Identical span sets nest both ways: neither encloses the other.
            .filter(|&i| nests_in(inner, groups[i].1) && !nests_in(groups[i].1, inner))
            .max_by_key(|&i| key(i));
        match encloser {
            Some(i) => best = i,
            None => break,
        }
    }
    Some(best)
}

/// Steps 4–6 of trace.md "Annotation rule" on one group's `(ts, dur)` spans: drop the warm-up, take the upper
/// median by `(dur, ts)`.
fn representative(mut spans: Vec<(i64, i64)>) -> Option<(i64, i64)> {
    spans.sort_by_key(|&(ts, _)| ts);
    if spans.len() > 1 {
        spans.remove(0);
    }
    spans.sort_by_key(|&(ts, dur)| (dur, ts));
    spans.get(spans.len() / 2).copied()
}

fn to_window(ts: i64, dur: i64) -> Option<TimeWindow> {
    TimeWindow::new(ts, ts.saturating_add(dur)).ok()
}

/// trace.md "Annotation rule": the repeating GPU annotation group.
fn by_annotation(c: &Collected, min_repeats: usize, check_coverage: bool) -> Option<Chosen> {
    let mut order: Vec<&str> = Vec::new();
    let mut groups: Map<&str, Vec<(i64, i64)>> = Map::default();
    for a in c.gpu.annotations() {
        let norm = normalize(c.names.get(a.name));
        if norm.is_empty() {
            continue;
        }
        groups
            .entry(norm)
            .or_insert_with(|| {
                order.push(norm);
                Vec::new()
            })
            .push((a.ts, a.dur));
    }
    // The repeat threshold applies before ranking; ties go to the group seen first.
    let qualifying: Vec<(&str, &Vec<(i64, i64)>)> = order
        .iter()
        .filter_map(|n| groups.get(n).map(|g| (*n, g)))
        .filter(|(_, g)| g.len() >= min_repeats)
        .collect();
    let best = *qualifying.get(rank_groups(&qualifying)?)?;
    let (ts, dur) = representative(best.1.clone())?;
    let mut chosen = Chosen {
        window: to_window(ts, dur)?,
        step_name: best.0.to_string(),
        step_count: best.1.len(),
        method: "annotation_step",
        annotation_coverage: None,
    };
    if check_coverage {
        launch_span_check(c, best.0, (ts, dur), min_repeats, &mut chosen);
    }
    Some(chosen)
}

/// trace.md "Annotation coverage check": a GPU annotation can cover a sliver of the work its step launched (measured on
/// H200 captures: ~25% for a training step, under 2% under DDP). Compare the chosen
/// annotation with the GPU span launched inside its CPU twin, and use the launched spans
/// when the annotation covers less than half.
fn launch_span_check(
    c: &Collected,
    group: &str,
    chosen: (i64, i64),
    min_repeats: usize,
    out: &mut Chosen,
) {
    // The chosen annotation pairs with the CPU span of the same full name and the same
    // occurrence index among equal names (compiled graphs repeat one name).
    let mut annotations: Vec<&Span> = c
        .gpu
        .annotations()
        .iter()
        .filter(|a| normalize(c.names.get(a.name)) == group)
        .collect();
    annotations.sort_by_key(|a| a.ts);
    let Some(picked) = annotations
        .iter()
        .copied()
        .find(|a| (a.ts, a.dur) == chosen)
    else {
        return;
    };
    let index = annotations
        .iter()
        .filter(|a| a.name == picked.name)
        .position(|a| std::ptr::eq(*a, picked));
    let mut cpu: Vec<&Span> = c
        .cpu
        .spans()
        .iter()
        .filter(|s| normalize(c.names.get(s.name)) == group)
        .collect();
    if cpu.is_empty() {
        return;
    }
    cpu.sort_by_key(|s| s.ts);
    let mapped = launched_spans(&c.gpu, &c.launches, &cpu);
    let twin = index.and_then(|i| {
        cpu.iter()
            .zip(&mapped)
            .filter(|(s, _)| s.name == picked.name)
            .nth(i)
            .and_then(|(_, m)| *m)
    });
    let Some((gs, ge)) = twin else { return };
    let launched = ge.saturating_sub(gs);
    if launched <= 0 {
        return;
    }
    out.annotation_coverage = Some(chosen.1 as f64 / launched as f64);
    if chosen.1 * 2 < launched {
        let spans: Vec<(i64, i64)> = mapped
            .into_iter()
            .flatten()
            .map(|(s, e)| (s, e.saturating_sub(s)))
            .collect();
        if spans.len() >= min_repeats
            && let Some((ts, dur)) = representative(spans.clone())
            && let Some(w) = to_window(ts, dur)
        {
            out.window = w;
            out.step_count = spans.len();
            out.method = "annotation_step_launch_span";
        }
    }
}

/// For each CPU span, the GPU span (start, end) of the kernels and copies launched inside
/// it (same pid, launch time within the span); None when it launched nothing.
fn launched_spans(gpu: &Gpu, launches: &Launches, steps: &[&Span]) -> Vec<Option<(i64, i64)>> {
    let mut by_pid: Map<u32, Vec<(i64, i64, usize)>> = Map::default();
    for (i, s) in steps.iter().enumerate() {
        by_pid
            .entry(s.pid)
            .or_default()
            .push((s.ts, s.ts.saturating_add(s.dur), i));
    }
    for v in by_pid.values_mut() {
        v.sort_unstable();
    }
    let mut gpu_span: Vec<Option<(i64, i64)>> = vec![None; steps.len()];
    for r in gpu.recs().iter() {
        let Some(launch) = r.corr().and_then(|k| launches.at(k)) else {
            continue;
        };
        let Some(list) = by_pid.get(&launch.pid) else {
            continue;
        };
        let idx = list.partition_point(|&(s, _, _)| s <= launch.ts);
        // Spans may nest or overlap; look back for one that contains the launch.
        let Some(&(_, _, i)) = list[..idx]
            .iter()
            .rev()
            .find(|&&(s, e, _)| s <= launch.ts && launch.ts < e)
        else {
            continue;
        };
        let end = r.ts.saturating_add(r.dur);
        let span = gpu_span[i].get_or_insert((r.ts, end));
        span.0 = span.0.min(r.ts);
        span.1 = span.1.max(end);
    }
    gpu_span
}

/// trace.md "CPU-step fallback": CPU `ProfilerStep#N` spans mapped to the GPU work launched inside them.
fn by_cpu_steps(c: &Collected, min_repeats: usize) -> Option<Chosen> {
    // First span per step number.
    let mut seen: Map<&str, ()> = Map::default();
    let mut steps: Vec<&Span> = Vec::new();
    for s in c.cpu.steps() {
        if seen.insert(c.names.get(s.name), ()).is_none() {
            steps.push(s);
        }
    }
    let spans: Vec<(i64, i64)> = launched_spans(&c.gpu, &c.launches, &steps)
        .into_iter()
        .flatten()
        .map(|(s, e)| (s, e.saturating_sub(s)))
        .collect();
    if spans.len() < min_repeats || spans.is_empty() {
        return None;
    }
    let count = spans.len();
    let (ts, dur) = representative(spans)?;
    Some(Chosen {
        window: to_window(ts, dur)?,
        step_name: "ProfilerStep".to_string(),
        step_count: count,
        method: "cpu_profiler_step",
        annotation_coverage: None,
    })
}

/// Chooses the steady window, or None when nothing repeats often enough.
pub(crate) fn choose(c: &Collected, min_repeats: usize, source: StepSource) -> Option<Chosen> {
    match source {
        StepSource::Annotation => by_annotation(c, min_repeats, false),
        StepSource::CpuSteps => by_cpu_steps(c, min_repeats),
        StepSource::Auto => {
            by_annotation(c, min_repeats, true).or_else(|| by_cpu_steps(c, min_repeats))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_normalise() {
        assert_eq!(normalize("ProfilerStep#12"), "ProfilerStep");
        assert_eq!(normalize("denoise_step_0"), "denoise_step");
        assert_eq!(normalize("123"), "");
    }

    #[test]
    fn step_words() {
        assert!(step_rank("ProfilerStep") > 0);
        assert!(step_rank("optimizer_step") > 0);
        assert!(step_rank("step") > 0);
        assert_eq!(step_rank("graph_call"), 0);
        assert!(step_rank("steps") > 0);
        assert_eq!(step_rank("misstepped"), 0);
    }
}
