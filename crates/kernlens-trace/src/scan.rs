//! Finding the `traceEvents` array and cutting it into events (trace.md §5.2–§5.3).
//!
//! The scanner works on a byte buffer that may be only a prefix of the input
//! (streaming) and says when it needs more. Problems are recorded as
//! [`Problem`]s with the event count at which they happened; they become the
//! documented `stream_errors` text in [`ErrorLog`].

use memchr::memmem;

use crate::event::{Event, Wanted, parse_event};
use crate::json::{Cursor, JsonError};
use crate::options::Limits;
use crate::shape::Shapes;
use crate::structural::{Carry, Tokens};

const KEY: &[u8] = b"\"traceEvents\"";

/// A structural problem met while reading the array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Problem {
    ArrayNotFound,
    PrefixExceeds(usize),
    OpenerNotFound,
    NotAnArray,
    Unterminated,
    NotAnObject,
    Truncated,
    Exceeds(usize),
    Malformed(String),
    Input { kind: &'static str, detail: String },
}

impl Problem {
    /// The `stream_errors` text; `n` is the number of events yielded before it.
    pub(crate) fn message(&self, n: u64) -> String {
        match self {
            Problem::ArrayNotFound => "traceEvents array not found".into(),
            Problem::PrefixExceeds(max) => format!("traceEvents prefix exceeds {max} characters"),
            Problem::OpenerNotFound => "traceEvents array opener not found".into(),
            Problem::NotAnArray => "traceEvents value is not an array".into(),
            Problem::Unterminated => format!("traceEvents array unterminated after {n} event(s)"),
            Problem::NotAnObject => {
                format!("traceEvents element malformed after {n} event(s): expected an object")
            }
            Problem::Truncated => {
                format!("traceEvents object truncated after {n} event(s): unterminated object")
            }
            Problem::Exceeds(max) => {
                format!("traceEvents object exceeds {max} characters after {n} event(s)")
            }
            Problem::Malformed(detail) => {
                format!("traceEvents object malformed after {n} event(s): {detail}")
            }
            Problem::Input { kind, detail } => format!("trace input error: {kind}: {detail}"),
        }
    }
}

/// The kept `stream_errors`: at most [`ErrorLog::CAP`] entries, the last one summarising the rest.
#[derive(Debug, Default)]
pub(crate) struct ErrorLog {
    messages: Vec<String>,
    total: u64,
}

impl ErrorLog {
    pub(crate) const CAP: usize = 1000;

    pub(crate) fn push(&mut self, problem: &Problem, n: u64) {
        self.total += 1;
        if self.messages.len() < Self::CAP {
            self.messages.push(problem.message(n));
        }
    }

    pub(crate) fn finish(mut self) -> Vec<String> {
        if self.total > Self::CAP as u64 {
            self.messages.truncate(Self::CAP - 1);
            let omitted = self.total - (Self::CAP as u64 - 1);
            self.messages
                .push(format!("{omitted} further stream errors omitted"));
        }
        self.messages
    }
}

/// Where the array starts, or why it cannot be read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Located {
    /// The first byte after `[`; `key_at` is where `"traceEvents"` starts.
    Array {
        key_at: usize,
        body: usize,
    },
    NeedMore,
    Failed(Problem),
}

/// Finds the array (§5.2). `eof` says whether `buf` is the whole input.
pub(crate) fn locate_array(buf: &[u8], eof: bool, limits: &Limits) -> Located {
    let finder = memmem::Finder::new(KEY);
    let mut from = 0;
    loop {
        let Some(off) = finder.find(&buf[from..]) else {
            // No key yet: stop looking once any later key would be past the prefix limit.
            if eof {
                return Located::Failed(Problem::ArrayNotFound);
            }
            if buf.len() > limits.max_prefix_bytes + KEY.len() {
                return Located::Failed(Problem::PrefixExceeds(limits.max_prefix_bytes));
            }
            return Located::NeedMore;
        };
        let key_at = from + off;
        if key_at > limits.max_prefix_bytes {
            return Located::Failed(Problem::PrefixExceeds(limits.max_prefix_bytes));
        }
        let mut i = key_at + KEY.len();
        while i < buf.len() && buf[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == buf.len() {
            if !eof {
                return Located::NeedMore;
            }
            // A string value "traceEvents" at the very end: no key follows.
            return Located::Failed(Problem::ArrayNotFound);
        }
        if buf[i] != b':' {
            // A string value, not a member name: keep searching.
            from = key_at + 1;
            continue;
        }
        i += 1;
        while i < buf.len() && buf[i].is_ascii_whitespace() {
            i += 1;
        }
        return match buf.get(i) {
            None if !eof => Located::NeedMore,
            None => Located::Failed(Problem::OpenerNotFound),
            Some(b'[') => Located::Array {
                key_at,
                body: i + 1,
            },
            Some(_) => Located::Failed(Problem::NotAnArray),
        };
    }
}

/// What one step of the element loop found.
// Boxing the event would cost an allocation per event on the hot path; a step is
// moved once, straight into the fold.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Step<'a> {
    /// A complete, valid event (None when analysis does not use its category).
    Event(Option<Event<'a>>),
    /// A recoverable problem; the loop continues after it.
    Problem(Problem),
    /// The buffer ends inside an element; `pos` was not moved.
    NeedMore,
    /// The array ended; `Some` when it ended on a problem.
    End(Option<Problem>),
}

/// What the fast paths keep between events of one reader: learned shapes and the
/// structural index. Reset it (or make a new one) when the bytes move.
pub(crate) struct Fast {
    shapes: Shapes,
    carry: Carry,
}

impl Fast {
    pub(crate) fn new() -> Fast {
        Fast {
            shapes: Shapes::default(),
            carry: Carry::new(),
        }
    }

    /// The bytes moved: positions in the index no longer hold (shapes still do).
    pub(crate) fn moved(&mut self) {
        self.carry.reset();
    }
}

/// Runs one step of the element loop (§5.3) at `*pos`. `n` is the events yielded so far.
pub(crate) fn step<'a>(
    buf: &'a [u8],
    pos: &mut usize,
    eof: bool,
    limits: &Limits,
    stack: &mut Vec<u8>,
    wanted: Wanted,
    fast: &mut Fast,
) -> Step<'a> {
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
        b'{' => object(buf, pos, eof, limits, stack, wanted, fast),
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
    limits: &Limits,
    stack: &mut Vec<u8>,
    wanted: Wanted,
    fast: &mut Fast,
) -> Step<'a> {
    let start = *pos;
    let cap = start.saturating_add(limits.max_event_bytes);
    let window_end = buf.len().min(cap);
    let limited = cap <= buf.len();
    let window = &buf[..window_end];
    // Fastest first: an event of a shape seen before; then the structural index; then the
    // cursor, which owns every error and recovery.
    if let Some((ev, end)) = fast.shapes.read(window, start, wanted) {
        *pos = end;
        fast.carry.reset();
        return Step::Event(ev);
    }
    let mut t = Tokens::new(window, start, &fast.carry);
    if let Ok(ev) = parse_event(&mut t, stack, wanted) {
        *pos = t.end();
        fast.carry = t.carry();
        fast.shapes.learn(window, start, *pos);
        return Step::Event(ev);
    }
    fast.carry.reset();
    let mut c = Cursor::new(&buf[..window_end], start);
    match parse_event(&mut c, stack, wanted) {
        Ok(ev) => {
            *pos = c.i;
            fast.shapes.learn(window, start, c.i);
            Step::Event(ev)
        }
        Err(JsonError::Eof) => {
            if limited {
                Step::End(Some(Problem::Exceeds(limits.max_event_bytes)))
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
                None if limited => Step::End(Some(Problem::Exceeds(limits.max_event_bytes))),
                None if eof => Step::End(Some(Problem::Truncated)),
                None => Step::NeedMore,
            }
        }
    }
}

/// The position after the `}` matching the `{` at `start`, respecting strings.
pub(crate) fn match_braces(buf: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    while i < buf.len() {
        match buf[i] {
            b'"' => i = string_end(buf, i)?,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Index of the closing quote of the string opened at `open`.
fn string_end(buf: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    loop {
        let off = memchr::memchr2(b'"', b'\\', &buf[i..])?;
        i += off;
        if buf[i] == b'\\' {
            i += 2;
            if i > buf.len() {
                return None;
            }
        } else {
            return Some(i);
        }
    }
}

/// Skips a non-object element to the next top-level `,` or `]` (which is not consumed).
fn skip_element(buf: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    while i < buf.len() {
        match buf[i] {
            b'"' => i = string_end(buf, i)?,
            b'{' | b'[' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            b']' if depth == 0 => return Some(i),
            b']' => depth -= 1,
            b',' if depth == 0 => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
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

/// Reads the `kernlens` member of the top-level object, if it precedes `traceEvents`.
pub(crate) fn prefix_member<'a>(prefix: &'a [u8], member: &str) -> Option<&'a [u8]> {
    let start = memchr::memchr(b'{', prefix)?;
    let mut c = Cursor::new(prefix, start);
    let mut stack = Vec::new();
    if !c.open(b'{', b'}').ok()? {
        return None;
    }
    loop {
        let key = c.key().ok()?;
        if key.eq_str("traceEvents") {
            return None;
        }
        let at = c.i;
        c.skip_value(&mut stack).ok()?;
        if key.eq_str(member) {
            return Some(&prefix[at..c.i]);
        }
        if !c.next_or_close(b'}').ok()? {
            return None;
        }
    }
}

/// The byte range of a top-level member that precedes `traceEvents`, from its name to the
/// start of the next member (so cutting it out leaves valid JSON).
pub(crate) fn prefix_member_span(prefix: &[u8], member: &str) -> Option<(usize, usize)> {
    let start = memchr::memchr(b'{', prefix)?;
    let mut c = Cursor::new(prefix, start);
    let mut stack = Vec::new();
    if !c.open(b'{', b'}').ok()? {
        return None;
    }
    loop {
        let at = c.i;
        let key = c.key().ok()?;
        if key.eq_str("traceEvents") {
            return None;
        }
        c.skip_value(&mut stack).ok()?;
        let more = c.next_or_close(b'}').ok()?;
        if key.eq_str(member) {
            return Some((at, c.i));
        }
        if !more {
            return None;
        }
    }
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

    #[test]
    fn error_log_caps_at_a_thousand() {
        let mut log = ErrorLog::default();
        for _ in 0..1500 {
            log.push(&Problem::NotAnObject, 0);
        }
        let m = log.finish();
        assert_eq!(m.len(), 1000);
        assert_eq!(m[999], "501 further stream errors omitted");
    }
}
