//! The trace scaler (trace.md "Synthetic-trace scaler"): `N` shifted, re-identified copies of a trace.

use std::io::Write;

use crate::json::{Cursor, Scalar, Value, parse_int};
use crate::number::micros_text_to_ns;

/// Why a trace could not be scaled.
#[derive(Debug, thiserror::Error)]
pub enum ScaleError {
    /// The source is not a well-formed Kineto trace (the scaler needs a clean input).
    #[error("source is not a well-formed trace: {0}")]
    Source(String),
    /// Shifted times or ids would not fit in 64 bits.
    #[error("{0} copies would overflow 64-bit times or ids")]
    Overflow(u64),
    /// Writing the output failed.
    #[error("cannot write output: {0}")]
    Write(#[from] std::io::Error),
}

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleStats {
    /// Copies written.
    pub copies: u64,
    /// Events in one copy of the source (metadata included).
    pub source_events: u64,
    /// Events written.
    pub events_written: u64,
    /// The source span S in ns (max end − min ts over non-metadata events).
    pub span_ns: i64,
}

/// One event's member spans, as offsets into the source.
struct Member {
    key: (usize, usize),
    value: (usize, usize),
}

struct Event {
    start: usize,
    members: Vec<Member>,
    metadata: bool,
}

/// The per-copy offsets of the three id kinds.
#[derive(Default, Clone, Copy)]
struct Ids {
    correlation: i64,
    external: i64,
    flow: i64,
}

fn bad(what: &str, at: usize) -> ScaleError {
    ScaleError::Source(format!("{what} at byte {at}"))
}

fn members(src: &[u8], at: usize, stack: &mut Vec<u8>) -> Result<(Vec<Member>, usize), ScaleError> {
    let mut c = Cursor::new(src, at);
    let mut out = Vec::new();
    let nonempty = c
        .open(b'{', b'}')
        .map_err(|_| bad("expected an event object", at))?;
    if nonempty {
        loop {
            let kstart = c.i;
            c.key().map_err(|_| bad("bad member name", kstart))?;
            let kend = src[kstart..c.i]
                .iter()
                .rposition(|&b| b == b':')
                .map_or(c.i, |p| kstart + p);
            let vstart = c.i;
            c.skip_value(stack)
                .map_err(|_| bad("bad member value", vstart))?;
            out.push(Member {
                key: (kstart, kend),
                value: (vstart, c.i),
            });
            if !c.next_or_close(b'}').map_err(|_| bad("bad object", c.i))? {
                break;
            }
        }
    }
    Ok((out, c.i))
}

fn key_is(src: &[u8], m: &Member, name: &str) -> bool {
    let k = &src[m.key.0..m.key.1];
    let k = k.trim_ascii_end();
    k.len() == name.len() + 2 && &k[1..k.len() - 1] == name.as_bytes()
}

fn int_value(src: &[u8], m: &Member) -> Option<i64> {
    parse_int(&src[m.value.0..m.value.1])
}

fn time_value(src: &[u8], m: &Member) -> Option<i64> {
    micros_text_to_ns(&src[m.value.0..m.value.1])
}

/// Formats integer ns as decimal µs with three fraction digits.
fn format_us(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

fn args_members(src: &[u8], m: &Member, stack: &mut Vec<u8>) -> Option<Vec<Member>> {
    if src.get(m.value.0) != Some(&b'{') {
        return None;
    }
    members(src, m.value.0, stack).ok().map(|(v, _)| v)
}

/// Writes `copies` copies of the trace `src` (plain JSON bytes) to `out`.
///
/// Copy `k` of every non-metadata event is shifted by `k × (S + gap_ns)`; correlations,
/// flow ids and External ids are offset by `k × (max of that kind + 1)`. Metadata events
/// and top-level members are written once.
pub fn scale(
    src: &[u8],
    out: &mut impl Write,
    copies: u64,
    gap_ns: i64,
) -> Result<ScaleStats, ScaleError> {
    let key = b"\"traceEvents\"";
    let key_at = src
        .windows(key.len())
        .position(|w| w == key)
        .ok_or_else(|| bad("no traceEvents key", 0))?;
    let mut c = Cursor::new(src, key_at + key.len());
    c.skip_ws();
    if c.peek() != Some(b':') {
        return Err(bad("traceEvents is not a member", c.i));
    }
    c.i += 1;
    c.skip_ws();
    if c.peek() != Some(b'[') {
        return Err(bad("traceEvents is not an array", c.i));
    }
    let open = c.i;
    let mut stack = Vec::new();
    let mut events = Vec::new();
    let (mut min_ts, mut max_end) = (i64::MAX, i64::MIN);
    let mut max = Ids::default();
    let mut at = open + 1;
    let close = loop {
        let mut c = Cursor::new(src, at);
        c.skip_ws();
        match c.peek() {
            Some(b']') => break c.i,
            Some(b'{') => {}
            _ => return Err(bad("expected an event or ']'", c.i)),
        }
        let start = c.i;
        let (ms, end) = members(src, start, &mut stack)?;
        let metadata = ms
            .iter()
            .any(|m| key_is(src, m, "ph") && &src[m.value.0..m.value.1] == b"\"M\"");
        if !metadata {
            let ts = ms
                .iter()
                .find(|m| key_is(src, m, "ts"))
                .and_then(|m| time_value(src, m))
                .unwrap_or(0);
            let dur = ms
                .iter()
                .find(|m| key_is(src, m, "dur"))
                .and_then(|m| time_value(src, m))
                .unwrap_or(0)
                .max(0);
            min_ts = min_ts.min(ts);
            max_end = max_end.max(ts.saturating_add(dur));
            for m in &ms {
                if key_is(src, m, "id") {
                    max.flow = max.flow.max(int_value(src, m).unwrap_or(0));
                }
                if key_is(src, m, "args") {
                    for a in args_members(src, m, &mut stack).unwrap_or_default() {
                        if key_is(src, &a, "correlation") {
                            max.correlation = max.correlation.max(int_value(src, &a).unwrap_or(0));
                        } else if key_is(src, &a, "External id") {
                            max.external = max.external.max(int_value(src, &a).unwrap_or(0));
                        }
                    }
                }
            }
        }
        events.push(Event {
            start,
            members: ms,
            metadata,
        });
        let mut c = Cursor::new(src, end);
        c.skip_ws();
        if c.peek() == Some(b',') {
            c.i += 1;
        }
        at = c.i;
    };
    let span = if min_ts <= max_end {
        max_end - min_ts
    } else {
        0
    };
    let step = span
        .checked_add(gap_ns)
        .ok_or(ScaleError::Overflow(copies))?;
    let last = copies.saturating_sub(1) as i64;
    let shift_max = step.checked_mul(last).ok_or(ScaleError::Overflow(copies))?;
    max_end
        .checked_add(shift_max)
        .ok_or(ScaleError::Overflow(copies))?;
    for m in [max.correlation, max.external, max.flow] {
        (m + 1)
            .checked_mul(last + 1)
            .ok_or(ScaleError::Overflow(copies))?;
    }
    out.write_all(&src[..=open])?;
    let mut written = 0u64;
    let mut line = Vec::with_capacity(4096);
    for k in 0..copies as i64 {
        let shift = step * k;
        let ids = Ids {
            correlation: k * (max.correlation + 1),
            external: k * (max.external + 1),
            flow: k * (max.flow + 1),
        };
        for ev in &events {
            if ev.metadata && k > 0 {
                continue;
            }
            line.clear();
            line.extend_from_slice(if written == 0 { b"\n  {" } else { b",\n  {" });
            write_event(src, ev, shift, ids, &mut line, &mut stack);
            line.push(b'}');
            out.write_all(&line)?;
            written += 1;
        }
    }
    out.write_all(b"\n")?;
    out.write_all(&src[close..])?;
    out.flush()?;
    Ok(ScaleStats {
        copies,
        source_events: events.len() as u64,
        events_written: written,
        span_ns: span,
    })
}

fn write_event(
    src: &[u8],
    ev: &Event,
    shift: i64,
    ids: Ids,
    out: &mut Vec<u8>,
    stack: &mut Vec<u8>,
) {
    let _ = ev.start;
    for (i, m) in ev.members.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        out.extend_from_slice(&src[m.key.0..m.key.1]);
        out.extend_from_slice(b": ");
        let raw = &src[m.value.0..m.value.1];
        if ev.metadata {
            out.extend_from_slice(raw);
        } else if key_is(src, m, "ts") {
            match time_value(src, m) {
                Some(ts) => out.extend_from_slice(format_us(ts + shift).as_bytes()),
                None => out.extend_from_slice(raw),
            }
        } else if key_is(src, m, "id") {
            match int_value(src, m) {
                Some(id) => out.extend_from_slice((id + ids.flow).to_string().as_bytes()),
                None => out.extend_from_slice(raw),
            }
        } else if key_is(src, m, "args") {
            match args_members(src, m, stack) {
                Some(args) => {
                    out.push(b'{');
                    for (j, a) in args.iter().enumerate() {
                        if j > 0 {
                            out.extend_from_slice(b", ");
                        }
                        out.extend_from_slice(&src[a.key.0..a.key.1]);
                        out.extend_from_slice(b": ");
                        let offset = if key_is(src, a, "correlation") {
                            Some(ids.correlation)
                        } else if key_is(src, a, "External id") {
                            Some(ids.external)
                        } else {
                            None
                        };
                        match (offset, int_value(src, a)) {
                            (Some(off), Some(v)) => {
                                out.extend_from_slice((v + off).to_string().as_bytes())
                            }
                            _ => out.extend_from_slice(&src[a.value.0..a.value.1]),
                        }
                    }
                    out.push(b'}');
                }
                None => out.extend_from_slice(raw),
            }
        } else {
            out.extend_from_slice(raw);
        }
    }
}

// Scalar and Value are part of the cursor's API; referenced so the include stays whole.
#[allow(dead_code)]
fn _kinds(v: Value<'_>) -> bool {
    matches!(v, Value::Scalar(Scalar::Null))
}
