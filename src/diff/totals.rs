//! Whole-scope figures of the two sides: timeline, categories, per device.

use kernlens_trace::{Analysis, DeviceTimeline};

use super::report::{CategoryDeltas, CountDelta, Delta, DeviceDelta, GroupStatus, TotalsDelta};

/// The two timelines' figures, each time divided by its side's divisor; percentages
/// and counts are not divided.
pub(crate) fn totals(before: &Analysis, after: &Analysis, divisors: (f64, f64)) -> TotalsDelta {
    let counts = CountDelta::new(
        before.attribution.kernel_count,
        after.attribution.kernel_count,
    );
    let (before, after) = (&before.timeline, &after.timeline);
    let (bd, ad) = divisors;
    let time = |b: f64, a: f64| Delta::new(b / bd, a / ad);
    let (bc, ac) = (&before.categories, &after.categories);
    TotalsDelta {
        span_us: time(before.total_us, after.total_us),
        busy_us: time(before.busy_us, after.busy_us),
        idle_us: time(before.idle_us, after.idle_us),
        busy_pct: Delta::new(before.busy_pct, after.busy_pct),
        idle_pct: Delta::new(before.idle_pct, after.idle_pct),
        kernel_sum_us: time(before.kernel_sum_us, after.kernel_sum_us),
        kernel_union_us: time(before.kernel_union_us, after.kernel_union_us),
        memcpy_us: time(before.memcpy_us, after.memcpy_us),
        kernel_count: counts,
        categories: CategoryDeltas {
            computation_us: time(bc.computation_us, ac.computation_us),
            communication_us: time(bc.communication_us, ac.communication_us),
            exposed_communication_us: time(
                bc.exposed_communication_us,
                ac.exposed_communication_us,
            ),
            memcpy_us: time(bc.memcpy_us, ac.memcpy_us),
            idle_us: time(bc.idle_us, ac.idle_us),
        },
        per_device: per_device(&before.per_device, &after.per_device, divisors),
    }
}

/// Devices matched by id, ascending with `None` last (the timeline's own order).
fn per_device(
    before: &[DeviceTimeline],
    after: &[DeviceTimeline],
    (bd, ad): (f64, f64),
) -> Vec<DeviceDelta> {
    let mut ids: Vec<Option<i64>> = before.iter().chain(after).map(|d| d.device).collect();
    ids.sort_by_key(|id| (id.is_none(), *id));
    ids.dedup();
    ids.into_iter()
        .map(|id| {
            let b = before.iter().find(|d| d.device == id);
            let a = after.iter().find(|d| d.device == id);
            let status = match (b, a) {
                (Some(_), Some(_)) => GroupStatus::Matched,
                (None, _) => GroupStatus::Added,
                (_, None) => GroupStatus::Removed,
            };
            let f =
                |d: Option<&DeviceTimeline>, pick: fn(&DeviceTimeline) -> f64| d.map_or(0.0, pick);
            DeviceDelta {
                device: id,
                status,
                busy_us: Delta::new(f(b, |d| d.busy_us) / bd, f(a, |d| d.busy_us) / ad),
                idle_us: Delta::new(f(b, |d| d.idle_us) / bd, f(a, |d| d.idle_us) / ad),
                kernel_union_us: Delta::new(
                    f(b, |d| d.kernel_union_us) / bd,
                    f(a, |d| d.kernel_union_us) / ad,
                ),
                busy_pct: Delta::new(f(b, |d| d.busy_pct), f(a, |d| d.busy_pct)),
                kernel_count: CountDelta::new(
                    b.map_or(0, |d| d.kernel_count),
                    a.map_or(0, |d| d.kernel_count),
                ),
            }
        })
        .collect()
}
