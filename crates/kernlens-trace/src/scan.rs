//! Finding the `traceEvents` array and cutting it into events (trace.md "Locating the array"–trace.md "Element loop").
//!
//! The scanner works on a byte buffer that may be only a prefix of the input
//! (streaming) and says when it needs more. Problems are recorded as
//! [`Problem`]s with the event count at which they happened; they become the
//! documented `stream_errors` text in [`ErrorLog`].

use crate::event::{Event, Wanted, parse_event};
use crate::json::{Cursor, JsonError, match_braces, skip_element, string_end};
use crate::options::Limits;
pub(crate) use crate::problem::{ErrorLog, Problem};
use crate::shape::{Shaped, Shapes};

const KEY: &[u8] = b"\"traceEvents\"";

/// Which of the two accepted layouts a trace has (trace.md "Locating the array").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Form {
    /// `{ …, "traceEvents": [ … ], … }`: the Kineto (JSON Object) layout.
    #[default]
    Object,
    /// `[ {event}, … ]`: Chrome's JSON Array Format, whose closing `]` is optional.
    Array,
}

/// Where the array starts, or why it cannot be read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Located {
    /// The first byte after `[`; `key_at` is where `"traceEvents"` starts (0 in the array
    /// form, which has no prefix).
    Array {
        key_at: usize,
        body: usize,
        form: Form,
    },
    NeedMore,
    Failed(Problem),
    /// The input is neither form: not an object or array, or an object that closes
    /// without a top-level `traceEvents` member.
    NotATrace,
}

/// Finds the array (trace.md "Locating the array"). `eof` says whether `buf` is the whole input.
///
/// Only a member of the top-level object counts: the prefix is walked as JSON text
/// (strings and nesting, not validated), so a `traceEvents` key nested in an earlier
/// member, or the text `\"traceEvents\":` inside a string, never matches. The key is
/// compared as written (an escaped spelling is a different key to this reader).
pub(crate) fn locate_array(buf: &[u8], eof: bool, limits: &Limits) -> Located {
    let mut i = 0;
    if buf.starts_with(b"\xEF\xBB\xBF") {
        i = 3;
    }
    while i < buf.len() && buf[i].is_ascii_whitespace() {
        i += 1;
    }
    match buf.get(i) {
        None if eof => return Located::NotATrace,
        None => return Located::NeedMore,
        Some(b'[') => {
            return Located::Array {
                key_at: 0,
                body: i + 1,
                form: Form::Array,
            };
        }
        Some(b'{') => {}
        Some(_) => return Located::NotATrace,
    }
    // Past the limit, any key found later would be too: stop looking.
    let limit = limits.max_prefix_bytes.saturating_add(KEY.len());
    let mut depth = 0usize;
    loop {
        if i > limit {
            return Located::Failed(Problem::PrefixExceeds(limits.max_prefix_bytes));
        }
        // The next structural byte; the prefix is small (a few KiB in real captures).
        let Some(off) = buf[i..]
            .iter()
            .position(|&b| matches!(b, b'"' | b'{' | b'[' | b'}' | b']'))
        else {
            return prefix_end(buf, eof, limit, limits);
        };
        i += off;
        match buf[i] {
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    // The top-level object closed without the member.
                    return Located::NotATrace;
                }
                i += 1;
            }
            _ => {
                let Some(close) = string_end(buf, i) else {
                    return prefix_end(buf, eof, limit, limits);
                };
                let key_at = i;
                let is_key = depth == 1 && &buf[i..=close] == KEY;
                i = close + 1;
                if !is_key {
                    continue;
                }
                if key_at > limits.max_prefix_bytes {
                    return Located::Failed(Problem::PrefixExceeds(limits.max_prefix_bytes));
                }
                let mut j = i;
                while j < buf.len() && buf[j].is_ascii_whitespace() {
                    j += 1;
                }
                match buf.get(j) {
                    None if !eof => return Located::NeedMore,
                    // A string value "traceEvents" at the very end: no key follows.
                    None => return Located::Failed(Problem::ArrayNotFound),
                    // A string value, not a member name: keep walking.
                    Some(&b) if b != b':' => continue,
                    Some(_) => {}
                }
                j += 1;
                while j < buf.len() && buf[j].is_ascii_whitespace() {
                    j += 1;
                }
                return match buf.get(j) {
                    None if !eof => Located::NeedMore,
                    None => Located::Failed(Problem::OpenerNotFound),
                    Some(b'[') => Located::Array {
                        key_at,
                        body: j + 1,
                        form: Form::Object,
                    },
                    Some(_) => Located::Failed(Problem::NotAnArray),
                };
            }
        }
    }
}

/// The walk reached the end of what is buffered, inside the top-level object.
fn prefix_end(buf: &[u8], eof: bool, limit: usize, limits: &Limits) -> Located {
    if eof {
        // An object cut short before its array (a capture killed early): still a trace's
        // start, so a stream error rather than "not a trace".
        Located::Failed(Problem::ArrayNotFound)
    } else if buf.len() > limit {
        Located::Failed(Problem::PrefixExceeds(limits.max_prefix_bytes))
    } else {
        Located::NeedMore
    }
}

/// What one step of the element loop found.
#[derive(Debug)]
pub(crate) enum Step {
    /// A complete, valid event; true when it was one analysis uses, pushed onto the
    /// caller's list (written there in place: an event is a few hundred bytes, and
    /// moving it through return values cost more than reading some of them).
    Event(bool),
    /// A recoverable problem; the loop continues after it.
    Problem(Problem),
    /// The buffer ends inside an element; `pos` was not moved.
    NeedMore,
    /// The array ended; `Some` when it ended on a problem.
    End(Option<Problem>),
}

/// What the element loop reads with (the event size limit, which events are wanted) and
/// keeps between events of one reader: the learned shapes and the cursor's container
/// stack. Call `moved` when the bytes move.
pub(crate) struct Fast {
    max_event_bytes: usize,
    wanted: Wanted,
    shapes: Shapes,
    /// The open containers of a value being skipped (kept to reuse its allocation).
    stack: Vec<u8>,
    /// Off: every event goes to the cursor (the reference the fast paths are tested against).
    on: bool,
}

impl Fast {
    /// An element loop reading events of at most `limits.max_event_bytes`, handing over
    /// the `wanted` ones.
    pub(crate) fn new(limits: &Limits, wanted: Wanted) -> Fast {
        Fast {
            max_event_bytes: limits.max_event_bytes,
            wanted,
            shapes: Shapes::default(),
            stack: Vec::new(),
            on: true,
        }
    }

    /// Whether this loop reads as one made by `Fast::new(limits, wanted)` would.
    pub(crate) fn fits(&self, limits: &Limits, wanted: Wanted) -> bool {
        self.on && self.max_event_bytes == limits.max_event_bytes && self.wanted == wanted
    }

    /// No fast paths: the cursor reads every event.
    #[cfg(test)]
    pub(crate) fn cursor_only(limits: &Limits, wanted: Wanted) -> Fast {
        Fast {
            on: false,
            ..Fast::new(limits, wanted)
        }
    }

    /// The bytes moved (shapes hold no positions, so nothing is forgotten today; the
    /// streaming path calls this where a position-keeping fast path must reset).
    pub(crate) fn moved(&mut self) {}
}

/// Runs one step of the element loop (trace.md "Element loop") at `*pos`. `n` is the events yielded so far.
pub(crate) fn step<'a>(
    buf: &'a [u8],
    pos: &mut usize,
    eof: bool,
    fast: &mut Fast,
    out: &mut impl Put<'a>,
) -> Step {
    step_with(buf, pos, eof, fast, out, true)
}

/// Reads the event at `*pos` against the learned shapes, the fastest path of a step:
/// whether it was wanted (then written to `out`) and its end in `*pos`, or None (`*pos`
/// unmoved) when it is not an object a shape reads. A loop that tries this first steps
/// on with [`step_unshaped`]: a second try would read the shapes' prediction as missed
/// twice.
#[inline(always)]
pub(crate) fn shaped<'a>(
    buf: &'a [u8],
    pos: &mut usize,
    fast: &mut Fast,
    out: &mut impl Put<'a>,
) -> Option<bool> {
    let start = *pos;
    if !fast.on || buf.get(start) != Some(&b'{') {
        return None;
    }
    // The window an event may take, as [`object`] gives the cursor.
    let window = &buf[..buf.len().min(start.saturating_add(fast.max_event_bytes))];
    let (kept, end) = fast.shapes.read_into(window, start, fast.wanted, out)?;
    *pos = end;
    Some(kept)
}

/// [`step`] after [`shaped`] found no shape for the event at `*pos`.
pub(crate) fn step_unshaped<'a>(
    buf: &'a [u8],
    pos: &mut usize,
    eof: bool,
    fast: &mut Fast,
    out: &mut impl Put<'a>,
) -> Step {
    step_with(buf, pos, eof, fast, out, false)
}

/// A step; `shapes`: the learned shapes may read its event (they were not tried yet).
#[inline(always)]
fn step_with<'a>(
    buf: &'a [u8],
    pos: &mut usize,
    eof: bool,
    fast: &mut Fast,
    out: &mut impl Put<'a>,
    shapes: bool,
) -> Step {
    let mut i = *pos;
    while i < buf.len() && matches!(buf[i], b' ' | b'\n' | b'\r' | b'\t' | b',') {
        i += 1;
    }
    *pos = i;
    let Some(&first) = buf.get(i) else {
        return if eof {
            Step::End(Some(Problem::Unterminated))
        } else {
            Step::NeedMore
        };
    };
    match first {
        b']' => {
            *pos = i + 1;
            Step::End(None)
        }
        b'{' => object(buf, pos, eof, fast, out, shapes),
        _ => match skip_element(buf, i) {
            Some(end) => {
                *pos = end;
                Step::Problem(Problem::NotAnObject)
            }
            None if eof => {
                *pos = buf.len();
                Step::Problem(Problem::NotAnObject)
            }
            None => Step::NeedMore,
        },
    }
}

fn object<'a>(
    buf: &'a [u8],
    pos: &mut usize,
    eof: bool,
    fast: &mut Fast,
    out: &mut impl Put<'a>,
    shapes: bool,
) -> Step {
    let (max_event_bytes, wanted) = (fast.max_event_bytes, fast.wanted);
    let start = *pos;
    let stack = &mut fast.stack;
    let cap = start.saturating_add(max_event_bytes);
    let window_end = buf.len().min(cap);
    let limited = cap <= buf.len();
    let window = &buf[..window_end];
    // Fastest first: an event of a shape seen before; then the cursor, which owns every
    // error and recovery. (A structural index between the two was deleted in issue 20:
    // once shapes read `Input …` lists, about one event in a thousand reaches the cursor,
    // the first of each shape in a region; PERFORMANCE.md has the measurement.)
    if shapes
        && fast.on
        && let Some((kept, end)) = fast.shapes.read_into(window, start, wanted, out)
    {
        *pos = end;
        return Step::Event(kept);
    }
    let mut c = Cursor::new(&buf[..window_end], start);
    match parse_event(&mut c, stack, wanted) {
        Ok(ev) => {
            *pos = c.i;
            if fast.on {
                fast.shapes.learn(window, start, c.i);
            }
            keep(out, ev)
        }
        Err(JsonError::Eof) => {
            if limited {
                Step::End(Some(Problem::Exceeds(max_event_bytes)))
            } else if eof {
                Step::End(Some(Problem::Truncated))
            } else {
                Step::NeedMore
            }
        }
        Err(JsonError::Invalid(what)) => {
            let at = c.i - start;
            match match_braces(&buf[..window_end], start) {
                Some(end) => {
                    *pos = end;
                    Step::Problem(Problem::Malformed(format!(
                        "{what} at byte {at} of the object"
                    )))
                }
                None if limited => Step::End(Some(Problem::Exceeds(max_event_bytes))),
                None if eof => Step::End(Some(Problem::Truncated)),
                None => Step::NeedMore,
            }
        }
    }
}

#[inline(always)]
fn keep<'a>(out: &mut impl Put<'a>, ev: Option<Event<'a>>) -> Step {
    match ev {
        Some(ev) => {
            out.put(ev);
            Step::Event(true)
        }
        None => Step::Event(false),
    }
}

/// Where a step writes the event it read.
pub(crate) trait Put<'a> {
    /// Whether [`Put::put_shaped`] reads values of events `wanted` does not keep (split's
    /// survey reads a flow's id): then a shape that read such an event without its slots
    /// (`shape::repeat`) must still write their ranges.
    const READS_UNKEPT: bool = false;

    fn put(&mut self, ev: Event<'a>);

    /// An event a learned shape read: built and [`Put::put`] when `wanted` keeps it
    /// (whether it was). A writer that needs only some of its values takes them from
    /// `read` without building the event.
    #[inline(always)]
    fn put_shaped(&mut self, read: &Shaped<'_, 'a>, wanted: Wanted) -> bool {
        match read.event(wanted) {
            Some(ev) => {
                self.put(ev);
                true
            }
            None => false,
        }
    }
}

impl<'a> Put<'a> for Vec<Event<'a>> {
    #[inline(always)]
    fn put(&mut self, ev: Event<'a>) {
        self.push(ev);
    }
}

impl<'a> Put<'a> for Option<Event<'a>> {
    #[inline(always)]
    fn put(&mut self, ev: Event<'a>) {
        *self = Some(ev);
    }
}

/// A position to start a parallel region at or after `from`: a `{` that follows `}` and
/// `,` (whitespace between). It may be wrong (inside a string); the merge checks it.
pub(crate) fn boundary_after(buf: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(off) = memchr::memchr(b'{', &buf[at..]) {
        let p = at + off;
        let mut j = p;
        let mut prev = || {
            while j > 0 && buf[j - 1].is_ascii_whitespace() {
                j -= 1;
            }
            if j == 0 {
                None
            } else {
                j -= 1;
                Some(buf[j])
            }
        };
        if prev() == Some(b',') && prev() == Some(b'}') {
            return Some(p);
        }
        at = p + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits::default()
    }

    #[test]
    fn key_as_string_value_is_skipped() {
        let t = br#"{"label":"traceEvents","traceEvents" : [ ]}"#;
        assert!(matches!(
            locate_array(t, true, &limits()),
            Located::Array { key_at: 23, .. }
        ));
    }

    #[test]
    fn non_array_value_is_not_followed_to_a_later_array() {
        let t = br#"{"traceEvents": null, "other":[{}]}"#;
        assert_eq!(
            locate_array(t, true, &limits()),
            Located::Failed(Problem::NotAnArray)
        );
    }

    #[test]
    fn boundary_is_found_between_events() {
        let t = b"[{\"a\":1},\n  {\"b\":2}]";
        assert_eq!(boundary_after(t, 2), Some(12));
    }

    const ALL: Wanted = Wanted::EVERYTHING;
    const ANALYSIS: Wanted = Wanted::ANALYSIS;

    /// Every step over a whole document (`eof`), rendered.
    fn steps(doc: &[u8], mut fast: Fast) -> Vec<String> {
        let (mut pos, mut out) = (0, Vec::new());
        let mut events = Vec::new();
        for _ in 0..10_000 {
            let s = step(doc, &mut pos, true, &mut fast, &mut events);
            let end = matches!(s, Step::End(_));
            out.push(format!("{s:?} {:?} @{pos}", events.pop()));
            if end {
                break;
            }
        }
        out
    }

    /// The same, stepped as the region walk steps: separators skipped, the shapes tried
    /// in line ([`shaped`]), and [`step_unshaped`] only for an element none of them read.
    fn steps_shaped_first(doc: &[u8], mut fast: Fast) -> Vec<String> {
        let (mut pos, mut out) = (0, Vec::new());
        let mut events = Vec::new();
        for _ in 0..10_000 {
            while pos < doc.len() && matches!(doc[pos], b' ' | b'\n' | b'\r' | b'\t' | b',') {
                pos += 1;
            }
            let s = match shaped(doc, &mut pos, &mut fast, &mut events) {
                Some(kept) => Step::Event(kept),
                None => step_unshaped(doc, &mut pos, true, &mut fast, &mut events),
            };
            let end = matches!(s, Step::End(_));
            out.push(format!("{s:?} {:?} @{pos}", events.pop()));
            if end {
                break;
            }
        }
        out
    }

    /// The same, fed in random pieces as the gzip path feeds it (draining what was read).
    fn steps_streamed(
        doc: &[u8],
        limits: &Limits,
        wanted: Wanted,
        rng: &mut fastrand::Rng,
    ) -> Vec<String> {
        let (mut buf, mut fed, mut base, mut pos) = (Vec::new(), 0, 0, 0);
        let (mut fast, mut out) = (Fast::new(limits, wanted), Vec::new());
        for _ in 0..100_000 {
            let eof = fed == doc.len();
            let mut events = None;
            match step(&buf, &mut pos, eof, &mut fast, &mut events) {
                Step::NeedMore => {
                    buf.drain(..pos);
                    base += pos;
                    pos = 0;
                    fast.moved();
                    let n = rng.usize(1..80).min(doc.len() - fed);
                    buf.extend_from_slice(&doc[fed..fed + n]);
                    fed += n;
                }
                s => {
                    let end = matches!(s, Step::End(_));
                    out.push(format!("{s:?} {events:?} @{}", base + pos));
                    if end {
                        break;
                    }
                }
            }
        }
        out
    }

    /// Two events where the first's window (`max_event_bytes` 100) ends inside the block
    /// the second starts in: the carried index padded that block past the old end, and
    /// the bytes there must still be read (found in review: a member was dropped and
    /// garbage accepted).
    #[test]
    fn a_carried_index_never_hides_bytes_past_the_last_window() {
        for hidden in [
            &b"\"ts\":12345,                 "[..],
            b"garbage garbage garbage!!!!!",
        ] {
            // The array's body: the first event is bytes 0..70, its window 0..100.
            let mut doc = b"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"".to_vec();
            doc.resize(68, b'a');
            doc.extend_from_slice(b"\"},{\"ph\":\"X\",\"name\":\"kkkkkkkkk\",");
            assert_eq!(doc.len(), 100);
            doc.extend_from_slice(hidden);
            doc.extend_from_slice(b"\"cat\":\"kernel\"}]");
            let limits = Limits::new(1 << 20, 100);
            let want = steps(&doc, Fast::cursor_only(&limits, ALL));
            assert!(want[0].starts_with("Event(true) Some"), "{want:?}");
            assert_eq!(steps(&doc, Fast::new(&limits, ALL)), want);
        }
    }

    /// Sequences of real-looking events, some mutated, under small and default event
    /// limits, whole and streamed, and stepped as the region walk steps (shapes first):
    /// every step (events, problems, positions) is the one the cursor alone takes.
    #[test]
    fn fast_paths_step_as_the_cursor_does() {
        let templates: &[&[u8]] = &[
            br#"{"ph": "X", "cat": "kernel", "name": "k<1, 2>", "pid": 0, "tid": "stream 7", "ts": 12.5, "dur": 3, "id": 4, "args": {"correlation": 7, "External id": 9, "device": 0, "grid": [1, 2, 3], "block": [4, 5, 6], "z": [{"q": "r"}, true]}}"#,
            br#"{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":5161116323696.891,"dur":4.1,"args":{"correlation":7,"External id":3}}"#,
            br#"{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":2,"ts":100,"dur":4,"args":{"External id":3,"kernel_file":"f","kernel_backend":"b"}}"#,
            br#"{"args":{"grid":[1,2,3],"block":[1,1,1],"device":1},"ph":"X","name":"late","ts":1,"cat":"kernel"}"#,
            br#"{"ph":"f","cat":"ac2g","id":7,"pid":0,"tid":0,"ts":1,"bp":"e"}"#,
            br#"{"name":"process_name","ph":"M","pid":0,"args":{"name":"x"}}"#,
            br#"{"ph":"X","cat":"kernel","name":"a\u0041","pid":"p","tid":null,"ts":-1e3,"dur":0.5,"args":{"grid":[1,2],"block":[1,2,3,4],"device":true,"correlation":-0}}"#,
            br#"{"ph":"X","args":{"grid":[1,"2",3],"block":[[1],2,3]},"cat":"kernel","name":"n","ts":01,"dur":1}"#,
            br#"{"cat":"cpu_op","ph":"X","name":"op","args":{"Input Dims":[[1,2],[]],"Input type":["float",""],"External id":5},"ts":3,"dur":2}"#,
            br#"{"cat":"kernel","ph":"X","name":"d","args":{"device":1,"device":2},"name":"e","ts":1}"#,
            br#"{"cat":"kernel","ph":"X","name":"c","args":{"grid":[1,2,3]},"cat":"cpu_op","ts":1}"#,
            br#"{"cat":"kernel","ph":"X","n\u0061me":"c","args":[1,2],"ts":12345678901234567890}"#,
        ];
        let alphabet = b" \t\n\"\\{}[]:,0123456789.-+eEtrufalsn\x00\x1f\x80\xffxyzX";
        let mut rng = fastrand::Rng::with_seed(42);
        for _ in 0..1500 {
            let mut doc = Vec::new();
            for _ in 0..rng.usize(1..30) {
                let mut e = rng.choice(templates).map_or(Vec::new(), |t| t.to_vec());
                if rng.u8(0..3) == 0 {
                    for _ in 0..rng.usize(1..4) {
                        let at = rng.usize(1..e.len().max(2));
                        let c = *rng.choice(alphabet).unwrap_or(&b' ');
                        match rng.u8(0..4) {
                            0 if at < e.len() => e[at] = c,
                            1 if at < e.len() => {
                                e.remove(at);
                            }
                            2 => e
                                .splice(at..at, vec![b'a'; rng.usize(0..40)])
                                .for_each(drop),
                            _ => e.insert(at.min(e.len()), c),
                        }
                    }
                }
                if rng.u8(0..20) == 0 {
                    doc.extend_from_slice(b"1,");
                }
                doc.extend_from_slice(&e);
                let sep: &[u8] = rng
                    .choice([&b","[..], b", ", b",\n  ", b" ,"])
                    .unwrap_or(b",");
                doc.extend_from_slice(sep);
            }
            doc.push(b']');
            let max_event = if rng.bool() {
                rng.usize(40..400)
            } else {
                64 << 20
            };
            let limits = Limits::new(1 << 20, max_event);
            for wanted in [ALL, ANALYSIS] {
                let want = steps(&doc, Fast::cursor_only(&limits, wanted));
                let text = String::from_utf8_lossy(&doc);
                assert_eq!(steps(&doc, Fast::new(&limits, wanted)), want, "{text}");
                assert_eq!(
                    steps_shaped_first(&doc, Fast::new(&limits, wanted)),
                    want,
                    "{text}"
                );
                assert_eq!(
                    steps_streamed(&doc, &limits, wanted, &mut rng),
                    want,
                    "{text}"
                );
            }
        }
    }
}
