//! Stream duration sanity: a stream whose recorded durations overlap is a profiler
//! artefact (one corrupt duration can swallow a trace's idle time) (trace.md "Stream duration sanity").

use crate::collect::{Gpu, GpuRec, NONE};
use crate::event::IdVal;
use crate::gpu::GpuRecs;
use crate::intern::StrInterner;
use crate::report::{StreamId, StreamOverlap, ratio, us};

const MIN_OVERLAP_NS: i64 = 1_000;
const MIN_WORST_NS: i64 = 1_000_000;
const MIN_SHARE: f64 = 0.05;
const WARNING_SHARE: f64 = 0.25;

fn stream_id(v: &IdVal<'_>) -> StreamId {
    match v {
        IdVal::Int(i) => StreamId::Int(*i),
        IdVal::Str(s) => StreamId::Str(s.to_string()),
        IdVal::Null => StreamId::Null,
    }
}

/// One stream's running figures, fed in order of `(ts, end)`.
#[derive(Default)]
struct StreamAcc {
    events: u64,
    first_ts: i64,
    last_end: i64,
    device: i64,
    /// The previous event, `(ts, end, name)`, once there is one (`events > 0`).
    prev: (i64, i64, u32),
    excess: i64,
    count: u64,
    worst: i64,
    worst_name: u32,
}

/// The worst overlapping stream over the whole trace, if any qualifies. `sorted` is every
/// GPU event ordered by `(ts, end)`.
pub(crate) fn stream_overlap(
    gpu: &Gpu,
    names: &StrInterner,
    sorted: impl Iterator<Item = GpuRec>,
) -> Option<StreamOverlap> {
    // Stream ids are dense (interned in order), so the accumulators are a vector; an id
    // past the interned ones (none in practice) shares the last slot rather than growing
    // it without bound.
    let n = gpu.stream_count();
    let mut streams: Vec<StreamAcc> = Vec::new();
    streams.resize_with(n + 1, StreamAcc::default);
    for r in sorted {
        let end = r.ts.saturating_add(r.dur);
        let Some(s) = streams.get_mut((r.stream as usize).min(n)) else {
            continue;
        };
        s.device = s.device.saturating_add(r.dur);
        if s.events == 0 {
            s.events = 1;
            s.first_ts = r.ts;
            s.last_end = end;
            s.prev = (r.ts, end, r.name);
            continue;
        }
        s.events += 1;
        s.last_end = s.last_end.max(end);
        let (pts, pend, pname) = s.prev;
        if pts == r.ts {
            // Equal (ts, end): the spec orders such events by name, so the later one of
            // the tie is the greater name. The pair itself is skipped (same ts).
            if pend == end {
                if names.get(r.name) > names.get(pname) {
                    s.prev.2 = r.name;
                }
                continue;
            }
        } else {
            let over = pend.saturating_sub(r.ts);
            if over > MIN_OVERLAP_NS {
                s.excess = s.excess.saturating_add(over);
                s.count += 1;
                if over > s.worst {
                    s.worst = over;
                    s.worst_name = pname;
                }
            }
        }
        s.prev = (r.ts, end, r.name);
    }
    // Deterministic choice among equal excesses: the lowest stream id.
    let mut best: Option<(u32, &StreamAcc)> = None;
    for (id, s) in streams.iter().enumerate() {
        let id = if id == n { NONE } else { id as u32 };
        let qualifies = s.events >= 2
            && s.device > 0
            && s.count > 0
            && s.worst >= MIN_WORST_NS
            && ratio(s.excess, s.device) >= MIN_SHARE;
        if qualifies && best.is_none_or(|(_, b)| s.excess > b.excess) {
            best = Some((id, s));
        }
    }
    let (id, f) = best?;
    let (pid, tid) = gpu
        .stream(id)
        .map_or((StreamId::Null, StreamId::Null), |(p, t)| {
            (stream_id(p), stream_id(t))
        });
    let share = ratio(f.excess, f.device);
    Some(StreamOverlap {
        pid,
        tid,
        overlapping_events: f.count,
        excess_us: us(f.excess),
        device_us: us(f.device),
        excess_share: share,
        span_us: us(f.last_end.saturating_sub(f.first_ts)),
        worst_event: names.get(f.worst_name).to_string(),
        worst_event_excess_us: us(f.worst),
        severity: if share >= WARNING_SHARE {
            "warning"
        } else {
            "info"
        }
        .to_string(),
    })
}

/// The GPU events' indices ordered by `(ts, end)`, the order both sweeps need (ties in
/// file order). Indices rather than the records: the records stay in file order for the
/// rows, which are built at the same time on another thread.
pub(crate) fn time_order(gpu: &GpuRecs) -> TimeOrder {
    // Records often arrive in that order already (graph_many's do): then the order is
    // the file's, and no index is kept or sorted. Compared as `(ts, dur)`: at equal starts a
    // longer duration never ends sooner, so this order is `(ts, end)`'s; the one case it
    // calls unordered where `(ts, end)` is not (two ends that both saturate) only costs
    // the sort, whose ties keep file order.
    let mut prev = (i64::MIN, i64::MIN);
    if gpu.iter().all(|r| {
        let key = (r.ts, r.dur);
        let ordered = key >= prev;
        prev = key;
        ordered
    }) {
        return TimeOrder::File(gpu.len());
    }
    // Four bytes an index while they fit: the order lives beside every record at the
    // read's peak of memory.
    match u32::try_from(gpu.len()) {
        Ok(n) => TimeOrder::Narrow(sorted_indices(gpu, 0..n)),
        Err(_) => TimeOrder::Wide(sorted_indices(gpu, 0..gpu.len())),
    }
}

fn sorted_indices<I: Copy + Ord + TryInto<usize>>(
    gpu: &GpuRecs,
    indices: impl Iterator<Item = I>,
) -> Vec<I> {
    let mut order: Vec<I> = indices.collect();
    order.sort_unstable_by_key(|&i| {
        let (ts, end) = i
            .try_into()
            .ok()
            .and_then(|i| gpu.start_end(i))
            .unwrap_or((0, 0));
        (ts, end, i)
    });
    order
}

/// GPU record indices in time order ([`time_order`]).
pub(crate) enum TimeOrder {
    /// File order is time order: the indices `0..n`.
    File(usize),
    Narrow(Vec<u32>),
    Wide(Vec<usize>),
}

impl TimeOrder {
    /// The index of the earliest record (the least `ts`), if there are any.
    pub(crate) fn first(&self) -> Option<usize> {
        self.iter().next()
    }

    /// The indices, in time order.
    pub(crate) fn iter(&self) -> OrderIter<'_> {
        match self {
            TimeOrder::File(n) => OrderIter::File(0..*n),
            TimeOrder::Narrow(v) => OrderIter::Narrow(v.iter()),
            TimeOrder::Wide(v) => OrderIter::Wide(v.iter()),
        }
    }
}

/// The indices of a [`TimeOrder`].
pub(crate) enum OrderIter<'a> {
    File(std::ops::Range<usize>),
    Narrow(std::slice::Iter<'a, u32>),
    Wide(std::slice::Iter<'a, usize>),
}

impl Iterator for OrderIter<'_> {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        match self {
            OrderIter::File(it) => it.next(),
            OrderIter::Narrow(it) => it.next().map(|&i| i as usize),
            OrderIter::Wide(it) => it.next().copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::{GpuKind, NONE};
    use proptest::prelude::*;

    proptest! {
        /// Whether the records are taken in file order or sorted, the order is `(ts, end)`
        /// with ties in file order, ends that saturate included.
        #[test]
        fn time_order_is_by_start_then_end_then_file_order(
            raw in prop::collection::vec(
                (prop_oneof![0i64..20, Just(i64::MAX - 5)], prop_oneof![0i64..8, Just(i64::MAX - 1), Just(i64::MAX)]),
                0..30,
            ),
            presorted in any::<bool>(),
        ) {
            let mut raw = raw;
            if presorted {
                raw.sort_by_key(|&(ts, dur)| (ts, ts.saturating_add(dur)));
            }
            let mut gpu = GpuRecs::default();
            for &(ts, dur) in &raw {
                gpu.push(GpuRec::new(ts, dur, None, None, 0, 0, NONE, GpuKind::Kernel));
            }
            let mut want: Vec<usize> = (0..raw.len()).collect();
            want.sort_by_key(|&i| (raw[i].0, raw[i].0.saturating_add(raw[i].1), i));
            let order = time_order(&gpu);
            prop_assert_eq!(order.iter().collect::<Vec<_>>(), want.clone());
            prop_assert_eq!(order.first(), want.first().copied());
        }
    }
}
