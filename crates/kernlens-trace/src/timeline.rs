//! Busy/idle: interval unions over the kept GPU events (trace.md "Timeline").
//!
//! The events arrive sorted by start, so every union (pooled, per device, per category)
//! is one running segment per tracker in a single sweep: no interval lists are built,
//! which keeps a multi-GB trace's analysis inside the memory of its compact records.

use crate::collect::{GpuKind, GpuRec};
use crate::intern::Map;
use crate::options::TimeWindow;
use crate::report::{Categories, DeviceTimeline, Timeline, pct, ratio, us};

/// The length of a union of intervals added in order of start.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Union {
    /// The open segment; before the first interval, the empty `[i64::MIN, i64::MIN)`,
    /// which a first interval starting at `i64::MIN` extends into itself and any other
    /// closes for nothing, so no flag asks whether a segment is open.
    start: i64,
    end: i64,
    /// The lengths of the closed segments, summed wide: each is positive (a segment
    /// opens only with `e > s` and its end only grows), so the sum clamped once in
    /// [`Union::len`] equals the saturating sum of saturating lengths the report defines,
    /// for a few instructions per segment less (the timeline closes one per kernel of a
    /// graph replay). A length is below 2^64, so 2^63 of them cannot overflow.
    closed_total: i128,
}

impl Default for Union {
    fn default() -> Self {
        Union {
            start: i64::MIN,
            end: i64::MIN,
            closed_total: 0,
        }
    }
}

impl Union {
    /// Adds `[s, e)`; `s` must not be below any earlier start. Empty intervals add nothing,
    /// touching ones merge (a new segment starts only when `s > end`).
    #[inline]
    pub(crate) fn add(&mut self, s: i64, e: i64) {
        if e <= s {
            return;
        }
        if s <= self.end {
            self.end = self.end.max(e);
        } else {
            self.closed_total += i128::from(self.end) - i128::from(self.start);
            self.start = s;
            self.end = e;
        }
    }

    pub(crate) fn len(&self) -> i64 {
        // Clamped: adversarial times near i64's ends must not overflow.
        let open = i128::from(self.end) - i128::from(self.start);
        i64::try_from(self.closed_total + open).unwrap_or(i64::MAX)
    }
}

#[derive(Default)]
struct DeviceAcc {
    busy: Union,
    kernels: Union,
    memcpy_sum: i64,
    kernel_sum: i64,
    kernel_count: u64,
}

/// Builds the timeline from GPU events sorted by `ts`. Only events the window keeps
/// count; `is_comm[id]` says whether kernel name `id` is communication (a name past its end
/// is not). A slice, not a callback: the sweep asks once per kernel.
// Out of line: inlined into its caller's closure its loop kept fewer values in registers
// (10.76 M instructions on gm1 against 10.07 M).
#[inline(never)]
pub(crate) fn timeline(
    sorted: impl Iterator<Item = GpuRec>,
    window: Option<TimeWindow>,
    is_comm: &[bool],
) -> Timeline {
    let (mut comp, mut comm, mut kernels, mut all) = (
        Union::default(),
        Union::default(),
        Union::default(),
        Union::default(),
    );
    // The records come by start, so the first kept one starts the span.
    let (mut first_ts, mut max_end) = (None, i64::MIN);
    // Devices by first sight, with the last one looked up remembered: records come in
    // long runs from one device, so most need no hash.
    let mut slots: Map<Option<i64>, usize> = Map::default();
    let mut accs: Vec<(Option<i64>, DeviceAcc)> = Vec::new();
    let mut last: Option<(Option<i64>, usize)> = None;
    // Two pooled unions equal others until something sets them apart, and are fed only
    // from then on (most traces have one device and no communication kernel): `all` and
    // `kernels` equal the first device's `busy` and `kernels` until a second device shows,
    // and `comp` equals `kernels` until a communication kernel shows.
    let mut comm_seen = false;
    let mut recs = sorted.filter(|r| window.is_none_or(|w| w.contains(r.ts)));
    // A record the one-device loop below handed back.
    let mut pending = None;
    while let Some(r) = pending.take().or_else(|| recs.next()) {
        let (end, s, e) = clip(&r, window);
        first_ts.get_or_insert(r.ts);
        max_end = max_end.max(end);
        let device = r.device();
        let k = match last {
            Some((d, k)) if d == device => k,
            _ => {
                let k = *slots.entry(device).or_insert_with(|| {
                    if let [(_, first)] = accs.as_slice() {
                        (all, kernels) = (first.busy, first.kernels);
                    }
                    accs.push((device, DeviceAcc::default()));
                    accs.len() - 1
                });
                last = Some((device, k));
                k
            }
        };
        let several = accs.len() > 1;
        let Some((_, dev)) = accs.get_mut(k) else {
            continue;
        };
        if several {
            all.add(s, e);
        }
        dev.busy.add(s, e);
        match r.kind {
            GpuKind::Kernel => {
                dev.kernel_sum = dev.kernel_sum.saturating_add(r.dur);
                if is_comm.get(r.name as usize).copied().unwrap_or(false) {
                    if !comm_seen {
                        comm_seen = true;
                        comp = if several { kernels } else { dev.kernels };
                    }
                    comm.add(s, e);
                } else if comm_seen {
                    comp.add(s, e);
                }
                if several {
                    kernels.add(s, e);
                }
                dev.kernels.add(s, e);
                dev.kernel_count += 1;
            }
            GpuKind::Memcpy => {
                dev.memcpy_sum = dev.memcpy_sum.saturating_add(r.dur);
            }
        }
        // While one device has shown and no communication kernel, the pooled unions are
        // that device's and only its own are fed: the same steps as above without the
        // look-ups and flags, until a record of another device or a communication kernel
        // goes back to them (most traces never leave this loop).
        if let ([(device, dev)], false) = (accs.as_mut_slice(), comm_seen) {
            for r in recs.by_ref() {
                let kernel = r.kind == GpuKind::Kernel;
                if r.device() != *device
                    || (kernel && is_comm.get(r.name as usize).copied().unwrap_or(false))
                {
                    pending = Some(r);
                    break;
                }
                let (end, s, e) = clip(&r, window);
                max_end = max_end.max(end);
                dev.busy.add(s, e);
                if kernel {
                    dev.kernel_sum = dev.kernel_sum.saturating_add(r.dur);
                    dev.kernels.add(s, e);
                    dev.kernel_count += 1;
                } else {
                    dev.memcpy_sum = dev.memcpy_sum.saturating_add(r.dur);
                }
            }
        }
    }
    if let [(_, only)] = accs.as_slice() {
        (all, kernels) = (only.busy, only.kernels);
    }
    if !comm_seen {
        comp = kernels;
    }
    // Summed per device, then over the devices: durations are never negative (trace.md
    // "Times"), so that equals the saturating sum over the records.
    let (memcpy_sum, kernel_sum) = accs.iter().fold((0i64, 0i64), |(m, k), (_, a)| {
        (
            m.saturating_add(a.memcpy_sum),
            k.saturating_add(a.kernel_sum),
        )
    });
    let total = match (window, first_ts) {
        (Some(w), _) => w.len_ns(),
        (None, Some(min_ts)) if min_ts <= max_end => max_end.saturating_sub(min_ts).max(0),
        (None, _) => 0,
    };
    let busy = all.len();
    let kernel_union = kernels.len();
    let idle = total.saturating_sub(busy).max(0);
    let comp_len = comp.len();
    let categories = Categories {
        computation_us: us(comp_len),
        communication_us: us(comm.len()),
        exposed_communication_us: us(kernel_union.saturating_sub(comp_len)),
        memcpy_us: us(busy.saturating_sub(kernel_union)),
        idle_us: us(idle),
    };
    let mut devices = accs;
    // Ascending device ids, null last.
    devices.sort_by_key(|(d, _)| (d.is_none(), *d));
    let per_device = devices
        .into_iter()
        .map(|(device, acc)| {
            let dbusy = acc.busy.len();
            DeviceTimeline {
                device,
                total_us: us(total),
                busy_us: us(dbusy),
                idle_us: us(total.saturating_sub(dbusy).max(0)),
                kernel_union_us: us(acc.kernels.len()),
                memcpy_us: us(acc.memcpy_sum),
                idle_pct: pct(total.saturating_sub(dbusy).max(0), total),
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

/// A record's end, and its interval clipped to the window. Clipping keeps the order by
/// start: the clipped start is monotone in `ts`.
#[inline(always)]
fn clip(r: &GpuRec, window: Option<TimeWindow>) -> (i64, i64, i64) {
    let end = r.ts.saturating_add(r.dur);
    match window {
        Some(w) => (end, r.ts.max(w.start_ns()), end.min(w.end_ns())),
        None => (end, r.ts, end),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn union_of(mut iv: Vec<(i64, i64)>) -> i64 {
        iv.sort();
        let mut u = Union::default();
        for (s, e) in iv {
            u.add(s, e);
        }
        u.len()
    }

    /// Lengths past i64 saturate, whether one segment or the sum is too long.
    #[test]
    fn union_saturates_at_i64_max() {
        assert_eq!(union_of(vec![(i64::MIN, 0), (1, 2)]), i64::MAX);
        assert_eq!(
            union_of(vec![(-(1 << 62), 0), (1, 1 << 62)]),
            (1 << 62) - 1 + (1 << 62)
        );
        assert_eq!(union_of(vec![(-(1 << 62) - 1, 0), (1, 1 << 62)]), i64::MAX);
        assert_eq!(union_of(vec![(i64::MIN, i64::MAX)]), i64::MAX);
    }

    #[test]
    fn touching_intervals_merge_and_empty_ones_vanish() {
        assert_eq!(
            union_of(vec![(0, 10), (10, 20), (30, 30), (25, 40), (35, 36)]),
            35
        );
    }

    /// A GPU record for the timeline: device `d` (None for -1), name 1 is communication.
    fn rec(ts: i64, dur: i64, d: i64, kernel: bool, name: u32) -> GpuRec {
        let kind = if kernel {
            GpuKind::Kernel
        } else {
            GpuKind::Memcpy
        };
        GpuRec::new(ts, dur, None, (d >= 0).then_some(d), name, 0, 0, kind)
    }

    proptest! {
        /// The pooled unions the sweep feeds only once a second device or a communication
        /// kernel sets them apart equal unions taken over every interval directly.
        #[test]
        fn pooled_unions_equal_direct_unions(
            raw in prop::collection::vec((0i64..300, 0i64..40, -1i64..3, any::<bool>(), 0u32..3), 0..50),
            // One device and no communication kernel up to a late record that brings
            // either: the one-device loop runs long, then hands over mid-sweep.
            quiet_until in prop::option::of((0usize..50, any::<bool>())),
        ) {
            let mut recs: Vec<GpuRec> = raw
                .iter()
                .enumerate()
                .map(|(i, &(ts, dur, d, kernel, name))| match quiet_until {
                    Some((at, _)) if i < at => rec(ts, dur, 0, kernel, name & 2),
                    Some((at, other_device)) if i == at && other_device => rec(ts, dur, 2, kernel, name),
                    Some((at, _)) if i == at => rec(ts, dur, 0, true, 1),
                    _ => rec(ts, dur, d, kernel, name),
                })
                .collect();
            recs.sort_by_key(|r| r.ts);
            let t = timeline(recs.iter().copied(), None, &[false, true]);
            let of = |keep: &dyn Fn(&GpuRec) -> bool| {
                union_of(recs.iter().filter(|r| keep(r)).map(|r| (r.ts, r.ts + r.dur)).collect())
            };
            let kernel = |r: &GpuRec| r.kind == GpuKind::Kernel;
            prop_assert_eq!(t.busy_ns, of(&|_| true));
            // The sums and the span, now summed per device and taken from the first record.
            let sum = |keep: &dyn Fn(&GpuRec) -> bool| recs.iter().filter(|r| keep(r)).map(|r| r.dur).sum::<i64>();
            prop_assert_eq!(t.kernel_sum_us, us(sum(&kernel)));
            prop_assert_eq!(t.memcpy_us, us(sum(&|r| !kernel(r))));
            let span = recs.iter().map(|r| r.ts + r.dur).max().zip(recs.iter().map(|r| r.ts).min());
            prop_assert_eq!(t.total_ns, span.map_or(0, |(end, start)| end - start));
            prop_assert_eq!(t.kernel_union_us, us(of(&kernel)));
            prop_assert_eq!(t.categories.computation_us, us(of(&|r| kernel(r) && r.name != 1)));
            prop_assert_eq!(t.categories.communication_us, us(of(&|r| kernel(r) && r.name == 1)));
            for d in &t.per_device {
                let on = |r: &GpuRec| r.device() == d.device;
                prop_assert_eq!(d.busy_us, us(of(&on)));
                prop_assert_eq!(d.kernel_union_us, us(of(&|r| on(r) && kernel(r))));
            }
        }

        /// The sweep equals counting covered unit cells.
        #[test]
        fn union_equals_covered_cells(iv in prop::collection::vec((0i64..200, 0i64..50), 0..40)) {
            let iv: Vec<(i64, i64)> = iv.into_iter().map(|(s, d)| (s, s + d)).collect();
            let mut cells = std::collections::HashSet::new();
            for &(s, e) in &iv {
                cells.extend(s..e);
            }
            prop_assert_eq!(union_of(iv), cells.len() as i64);
        }

        /// Over any i64 times the union is the saturating sum of the saturating lengths
        /// of its merged segments (what the report defined before the wide sum).
        #[test]
        fn union_equals_saturating_segment_sum(
            iv in prop::collection::vec((any::<i64>(), any::<i64>()), 0..12),
        ) {
            let mut iv: Vec<(i64, i64)> = iv.into_iter().filter(|(s, e)| e > s).collect();
            iv.sort();
            let mut segs: Vec<(i64, i64)> = Vec::new();
            for (s, e) in iv.iter().copied() {
                match segs.last_mut() {
                    Some(last) if s <= last.1 => last.1 = last.1.max(e),
                    _ => segs.push((s, e)),
                }
            }
            let want = segs.iter().fold(0i64, |t, (s, e)| t.saturating_add(e.saturating_sub(*s)));
            prop_assert_eq!(union_of(iv), want);
        }

        /// Union is bounded by the sum and by the span, and never negative.
        #[test]
        fn union_bounds(iv in prop::collection::vec((-100i64..100, 0i64..30), 1..30)) {
            let iv: Vec<(i64, i64)> = iv.into_iter().map(|(s, d)| (s, s + d)).collect();
            let sum: i64 = iv.iter().map(|(s, e)| e - s).sum();
            let span = iv.iter().map(|x| x.1).max().unwrap_or(0) - iv.iter().map(|x| x.0).min().unwrap_or(0);
            let u = union_of(iv);
            prop_assert!(u >= 0 && u <= sum && u <= span);
        }
    }
}
