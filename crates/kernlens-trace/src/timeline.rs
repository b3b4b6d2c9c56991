//! Busy/idle: interval unions over the kept GPU events (trace.md §11).

use crate::collect::{GpuKind, GpuRec};
use crate::intern::Map;
use crate::options::TimeWindow;
use crate::report::{Categories, DeviceTimeline, Timeline, pct, ratio, us};

/// Sorted, disjoint, non-touching segments covering a set of intervals.
pub(crate) fn segments(mut iv: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    iv.retain(|&(s, e)| e > s);
    iv.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(iv.len() / 4 + 1);
    for (s, e) in iv {
        match out.last_mut() {
            // Touching intervals merge: a new segment starts only when start > end.
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// The union of two segment lists, in one linear merge.
pub(crate) fn merge(a: &[(i64, i64)], b: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let next = if j >= b.len() || (i < a.len() && a[i] <= b[j]) {
            i += 1;
            a[i - 1]
        } else {
            j += 1;
            b[j - 1]
        };
        match out.last_mut() {
            Some(last) if next.0 <= last.1 => last.1 = last.1.max(next.1),
            _ => out.push(next),
        }
    }
    out
}

/// Total length of segments.
pub(crate) fn length(segs: &[(i64, i64)]) -> i64 {
    segs.iter().map(|&(s, e)| e - s).sum()
}

/// One device's intervals and sums.
#[derive(Default)]
struct DeviceAcc {
    kernels: Vec<(i64, i64)>,
    copies: Vec<(i64, i64)>,
    memcpy_sum: i64,
    kernel_count: u64,
}

/// The interval of an event, clipped to the window when there is one.
fn clipped(r: &GpuRec, window: Option<TimeWindow>) -> (i64, i64) {
    let end = r.ts.saturating_add(r.dur);
    match window {
        Some(w) => (r.ts.max(w.start_ns()), end.min(w.end_ns())),
        None => (r.ts, end),
    }
}

/// Builds the timeline. `is_comm` says whether a kernel name id is communication.
pub(crate) fn timeline(
    kept: &[&GpuRec],
    window: Option<TimeWindow>,
    is_comm: &dyn Fn(u32) -> bool,
) -> Timeline {
    let total = match window {
        Some(w) => w.len_ns(),
        None => {
            let min = kept.iter().map(|r| r.ts).min();
            let max = kept.iter().map(|r| r.ts.saturating_add(r.dur)).max();
            match (min, max) {
                (Some(a), Some(b)) => b.saturating_sub(a).max(0),
                _ => 0,
            }
        }
    };
    let (mut comp, mut comm, mut copy) = (Vec::new(), Vec::new(), Vec::new());
    let (mut memcpy_sum, mut kernel_sum) = (0i64, 0i64);
    let mut by_device: Map<Option<i64>, DeviceAcc> = Map::default();
    for r in kept {
        let iv = clipped(r, window);
        let dev = by_device.entry(r.device).or_default();
        match r.kind {
            GpuKind::Kernel => {
                kernel_sum = kernel_sum.saturating_add(r.dur);
                dev.kernels.push(iv);
                dev.kernel_count += 1;
                if is_comm(r.name) {
                    comm.push(iv)
                } else {
                    comp.push(iv)
                }
            }
            GpuKind::Memcpy => {
                memcpy_sum = memcpy_sum.saturating_add(r.dur);
                dev.copies.push(iv);
                dev.memcpy_sum = dev.memcpy_sum.saturating_add(r.dur);
                copy.push(iv);
            }
        }
    }
    let comp = segments(comp);
    let comm = segments(comm);
    let copy = segments(copy);
    let kernels = merge(&comp, &comm);
    let all = merge(&kernels, &copy);
    let busy = length(&all);
    let kernel_union = length(&kernels);
    let idle = (total - busy).max(0);
    let comp_len = length(&comp);
    let categories = Categories {
        computation_us: us(comp_len),
        communication_us: us(length(&comm)),
        exposed_communication_us: us(kernel_union - comp_len),
        memcpy_us: us(busy - kernel_union),
        idle_us: us(idle),
    };
    let mut devices: Vec<_> = by_device.into_iter().collect();
    // Ascending device ids, null last.
    devices.sort_by_key(|(d, _)| (d.is_none(), *d));
    let per_device = devices
        .into_iter()
        .map(|(device, acc)| {
            let k = segments(acc.kernels);
            let both = merge(&k, &segments(acc.copies));
            let dbusy = length(&both);
            DeviceTimeline {
                device,
                total_us: us(total),
                busy_us: us(dbusy),
                idle_us: us((total - dbusy).max(0)),
                kernel_union_us: us(length(&k)),
                memcpy_us: us(acc.memcpy_sum),
                idle_pct: pct((total - dbusy).max(0), total),
                busy_pct: pct(dbusy, total),
                kernel_count: acc.kernel_count,
            }
        })
        .collect();
    Timeline {
        total_us: us(total),
        busy_us: us(busy),
        idle_us: us(idle),
        kernel_union_us: us(kernel_union),
        memcpy_us: us(memcpy_sum),
        kernel_sum_us: us(kernel_sum),
        idle_pct: pct(idle, total),
        busy_pct: pct(busy, total),
        busy_fraction: ratio(busy, total),
        per_device,
        categories,
        total_ns: total,
        busy_ns: busy,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touching_intervals_merge_and_empty_ones_vanish() {
        let s = segments(vec![(0, 10), (10, 20), (30, 30), (25, 40), (35, 36)]);
        assert_eq!(s, vec![(0, 20), (25, 40)]);
        assert_eq!(length(&s), 35);
    }

    #[test]
    fn merge_equals_union_of_concatenation() {
        let a = segments(vec![(0, 5), (10, 15), (20, 30)]);
        let b = segments(vec![(4, 11), (15, 16), (40, 41)]);
        let mut both = a.clone();
        both.extend(&b);
        assert_eq!(merge(&a, &b), segments(both));
    }
}
