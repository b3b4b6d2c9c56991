//! Stream duration sanity: a stream whose recorded durations overlap is a profiler
//! artefact (one corrupt duration can swallow a trace's idle time) (trace.md §14).

use crate::collect::{Collected, GpuRec};
use crate::event::IdVal;
use crate::intern::Map;
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

struct Found {
    stream: u32,
    count: u64,
    excess: i64,
    device: i64,
    span: i64,
    worst_name: u32,
    worst: i64,
}

/// The worst overlapping stream over the whole trace, if any qualifies.
pub(crate) fn stream_overlap(c: &Collected) -> Option<StreamOverlap> {
    let mut by_stream: Map<u32, Vec<&GpuRec>> = Map::default();
    for r in &c.gpu {
        by_stream.entry(r.stream).or_default().push(r);
    }
    let mut best: Option<Found> = None;
    let mut streams: Vec<_> = by_stream.into_iter().collect();
    // Deterministic choice among equal excesses: lowest stream id (first seen).
    streams.sort_by_key(|(s, _)| *s);
    for (stream, mut evs) in streams {
        if evs.len() < 2 {
            continue;
        }
        evs.sort_by(|a, b| {
            (a.ts, a.ts.saturating_add(a.dur))
                .cmp(&(b.ts, b.ts.saturating_add(b.dur)))
                .then_with(|| c.names.get(a.name).cmp(c.names.get(b.name)))
        });
        let device: i64 = evs.iter().map(|r| r.dur).sum();
        if device == 0 {
            continue;
        }
        let first = evs[0].ts;
        let last_end = evs
            .iter()
            .map(|r| r.ts.saturating_add(r.dur))
            .max()
            .unwrap_or(first);
        let (mut excess, mut count, mut worst, mut worst_name) = (0i64, 0u64, 0i64, 0u32);
        for pair in evs.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if b.ts == a.ts {
                continue;
            }
            let over = a.ts.saturating_add(a.dur) - b.ts;
            if over <= MIN_OVERLAP_NS {
                continue;
            }
            excess += over;
            count += 1;
            if over > worst {
                worst = over;
                worst_name = a.name;
            }
        }
        let qualifies = count > 0 && worst >= MIN_WORST_NS && ratio(excess, device) >= MIN_SHARE;
        if qualifies && best.as_ref().is_none_or(|b| excess > b.excess) {
            best = Some(Found {
                stream,
                count,
                excess,
                device,
                span: last_end - first,
                worst_name,
                worst,
            });
        }
    }
    let f = best?;
    let (pid, tid) = c
        .streams
        .get(f.stream)
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
        span_us: us(f.span),
        worst_event: c.names.get(f.worst_name).to_string(),
        worst_event_excess_us: us(f.worst),
        severity: if share >= WARNING_SHARE {
            "warning"
        } else {
            "info"
        }
        .to_string(),
    })
}
