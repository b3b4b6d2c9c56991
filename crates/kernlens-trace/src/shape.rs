//! The fastest path: events read against the shape of an earlier one.
//!
//! Why: a profiler writes a few shapes of event over and over. A Kineto kernel event is
//! always the same bytes (braces, member names, separators, even the indentation) with
//! different values in between. Once one event of a shape has been read and validated,
//! the next one of that shape can be read by comparing the fixed bytes and scanning only
//! the values, without walking its grammar token by token.
//!
//! Soundness: a shape is learned only from an event the parser accepted. An event whose
//! fixed bytes equal the shape's, and whose values are a string (no escape, no control
//! byte) or a number (JSON's grammar) exactly where the shape has them, is the same JSON
//! document with other scalars: valid, and read as the parser would read it. Shapes are
//! learned only when reading by role is unambiguous: no escaped or duplicated member
//! names, `args` an object, and none of the members kept as raw JSON text (`Input Dims`,
//! `Input type`). Anything else is left to the parser.

use crate::event::{Args, Cat, Event, Top, Wanted, assemble, keeps};
use crate::json::{Cursor, RawStr, Scalar, Value, find_string_stop, number_end, parse_int};
use crate::member::Member;

/// Shapes kept per reader; a trace has a handful of hot ones.
const CAPACITY: usize = 16;
/// Longest event learned, in bytes.
const MAX_EVENT: usize = 8 << 10;
/// Most values in a learned shape.
const MAX_VALUES: usize = 256;

/// What a value is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A string; the shape's bytes hold its opening quote, the next bytes its closing one.
    Str,
    Num,
}

/// Which member a value is; the discriminant indexes [`Found::vals`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Role {
    None = 0,
    Ph,
    Cat,
    Name,
    Pid,
    Tid,
    Ts,
    Dur,
    Id,
    Correlation,
    ExternalId,
    Device,
    Grid0,
    Grid1,
    Grid2,
    Block0,
    Block1,
    Block2,
    KernelFile,
    KernelBackend,
}

/// How many roles there are.
const ROLES: usize = Role::KernelBackend as usize + 1;

impl Role {
    /// The role of element `i` of a `grid` (or `block`) list, if it can be one.
    fn dim(block: bool, i: usize) -> Role {
        match (block, i) {
            (false, 0) => Role::Grid0,
            (false, 1) => Role::Grid1,
            (false, 2) => Role::Grid2,
            (true, 0) => Role::Block0,
            (true, 1) => Role::Block1,
            (true, 2) => Role::Block2,
            _ => Role::None,
        }
    }

    fn is_dim(self) -> bool {
        (Role::Grid0 as u8..=Role::Block2 as u8).contains(&(self as u8))
    }
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    /// Fixed bytes before the value.
    fixed: u32,
    kind: Kind,
    role: Role,
}

/// One learned shape: fixed bytes and value slots in order, then the closing bytes.
#[derive(Debug)]
struct Shape {
    fixed: Vec<u8>,
    slots: Vec<Slot>,
    /// The category of the event learned from: a shape reads only events of its own
    /// category, so an event of another one fails at its second member, not its last.
    cat: Option<Vec<u8>>,
    /// That category, decoded once: every event the shape reads has it. (Without a
    /// `cat` string, the events it reads have none either: no member, or a literal.)
    cat_kind: Cat,
}

/// Learned shapes, and which one followed which.
pub(crate) struct Shapes {
    /// Finds `"Input ` (the members kept as raw JSON): such events are not learned.
    input: memchr::memmem::Finder<'static>,
    shapes: Vec<Shape>,
    /// `next[k]`: the shape read after shape `k` last time (`next[MISS]`: after an event
    /// no shape read). Profilers write events in a repeating order (launch, kernel,
    /// flow, ...), so this is usually the one.
    next: [usize; CAPACITY + 1],
    /// The shape of the event read last, or `MISS`.
    last: usize,
    /// The context of the event no shape read, for the shape learned from it.
    before_miss: usize,
    /// The last miss skipped the tries (predicted), so a shape may read it after all.
    skipped: bool,
    /// Shapes by last use, most recent first: the few tried after the prediction.
    recent: Vec<usize>,
    hits: u64,
    misses: u64,
}

impl Default for Shapes {
    fn default() -> Self {
        Shapes {
            input: memchr::memmem::Finder::new(b"\"Input "),
            shapes: Vec::new(),
            next: [0; CAPACITY + 1],
            last: 0,
            before_miss: 0,
            skipped: false,
            recent: Vec::new(),
            hits: 0,
            misses: 0,
        }
    }
}

/// `Shapes::last` after an event no shape read.
const MISS: usize = CAPACITY;
/// Shapes tried per event after the predicted one, most recently used first. A try of
/// a shape of another category ends at the event's second member (`cat`), so trying
/// them all costs little.
const TRIES: usize = CAPACITY;

/// The values read from an event, by role (slot 0 takes the values no one reads), before
/// the category's filter. An array rather than named fields: storing a value is then one
/// indexed write, not a branch per role.
struct Found<'a> {
    vals: [Option<Scalar<'a>>; ROLES],
}

impl Default for Found<'_> {
    fn default() -> Self {
        Found {
            vals: [None; ROLES],
        }
    }
}

impl Shapes {
    /// Reads the event at `start` against a learned shape: the event (None when the
    /// caller does not want it) and its end, or None when no shape fits.
    #[inline]
    pub(crate) fn read<'a>(
        &mut self,
        buf: &'a [u8],
        start: usize,
        wanted: Wanted,
    ) -> Option<(Option<Event<'a>>, usize)> {
        let guess = self.next.get(self.last).copied().unwrap_or(MISS);
        if guess == MISS {
            // Last time, no shape read the event that came after this one (an op with
            // `Input Dims`, say): leave it to the parser at once. `learn` puts right a
            // prediction that was wrong.
            self.before_miss = self.last;
            self.last = MISS;
            self.skipped = true;
            return None;
        }
        self.skipped = false;
        let mut found = Found::default();
        let candidates = std::iter::once(guess).chain(
            self.recent
                .iter()
                .copied()
                .filter(|&k| k != guess)
                .take(TRIES),
        );
        let mut hit = None;
        for k in candidates {
            let Some(shape) = self.shapes.get(k) else {
                continue;
            };
            match shape.read(buf, start, &mut found) {
                Some(end) => {
                    hit = Some((k, end));
                    break;
                }
                None => found = Found::default(),
            }
        }
        let Some((k, end)) = hit else {
            if let Some(slot) = self.next.get_mut(self.last) {
                *slot = MISS;
            }
            self.before_miss = self.last;
            self.last = MISS;
            return None;
        };
        self.hits += 1;
        // The recency order serves the tries after a wrong prediction: a correct one
        // leaves it as it is (re-ordering on every event cost more than it saved).
        let predicted = k == guess;
        self.now_reading(k, !predicted);
        let cat = self.shapes.get(k).map_or(Cat::Other, |s| s.cat_kind);
        Some((found.event(wanted, cat), end))
    }

    /// Forgets which shape follows which (tests read unrelated events one after another).
    #[cfg(test)]
    fn unpredict(&mut self) {
        self.next = [0; CAPACITY + 1];
        self.last = 0;
    }

    /// Records that the event just read has shape `k`.
    fn now_reading(&mut self, k: usize, reorder: bool) {
        if let Some(slot) = self.next.get_mut(self.last) {
            *slot = k;
        }
        self.last = k;
        if reorder && self.recent.first() != Some(&k) {
            self.recent.retain(|&r| r != k);
            self.recent.insert(0, k);
        }
    }

    /// Learns the shape of the event `buf[start..end]`, which the parser accepted.
    pub(crate) fn learn(&mut self, buf: &[u8], start: usize, end: usize) {
        self.misses += 1;
        // Where shapes do not repeat, learning would only cost: back off to one try in
        // 64 misses once they outnumber the hits.
        if self.misses > 64 && self.misses > self.hits && !self.misses.is_multiple_of(64) {
            return;
        }
        let Some(text) = buf.get(start..end) else {
            return;
        };
        // Events no shape can read are common in some traces (ops with `Input Dims`, names
        // with escapes): a byte search turns them away before a walk would.
        if text.len() > MAX_EVENT
            || memchr::memchr(b'\\', text).is_some()
            || self.input.find(text).is_some()
        {
            return;
        }
        // A shape may read it after all, when only the prediction said no (after tries,
        // none did).
        let mut found = Found::default();
        if self.skipped
            && let Some(k) = self.recent.iter().copied().find(|&k| {
                self.shapes
                    .get(k)
                    .is_some_and(|shape| shape.read(text, 0, &mut found).is_some())
            })
        {
            self.last = self.before_miss;
            self.now_reading(k, true);
            return;
        }
        if let Some(shape) = Shape::learn(text) {
            let k = if self.shapes.len() < CAPACITY {
                self.shapes.push(shape);
                self.shapes.len() - 1
            } else {
                // The least recently used goes: a one-off layout, not a hot one.
                let k = self.recent.last().copied().unwrap_or(0);
                if let Some(slot) = self.shapes.get_mut(k) {
                    *slot = shape;
                }
                k
            };
            // The learned event was the one no shape read: it followed `before_miss`.
            self.last = self.before_miss;
            self.now_reading(k, true);
        }
    }
}

impl<'a> Found<'a> {
    /// The event, of category `cat` (the shape's: its `cat` string was checked).
    fn event(self, wanted: Wanted, cat: Cat) -> Option<Event<'a>> {
        let v = &self.vals;
        let value = |r: Role| v[r as usize].map(Value::Scalar);
        let top = Top {
            ph: value(Role::Ph),
            cat_raw: value(Role::Cat),
            name: value(Role::Name),
            pid: value(Role::Pid),
            tid: value(Role::Tid),
            ts: value(Role::Ts),
            dur: value(Role::Dur),
            id: value(Role::Id),
        };
        if !keeps(cat, &top, wanted) {
            return None;
        }
        let int = |r: Role| match v[r as usize] {
            Some(Scalar::Num(t)) => parse_int(t),
            _ => None,
        };
        let string = |r: Role| match v[r as usize] {
            Some(Scalar::Str(s)) => Some(s),
            _ => None,
        };
        let dim3 =
            |r: [Role; 3]| -> Option<[i64; 3]> { Some([int(r[0])?, int(r[1])?, int(r[2])?]) };
        // The category's filter, the parser's (member.rs), applied to `args`.
        let args = if matches!(cat, Cat::Other | Cat::Flow) {
            Args::default()
        } else {
            let kept = |m: Member| m.kept_for(cat);
            Args {
                correlation: int(Role::Correlation),
                external_id: int(Role::ExternalId),
                device: kept(Member::Device).then(|| int(Role::Device)).flatten(),
                grid: kept(Member::Grid)
                    .then(|| dim3([Role::Grid0, Role::Grid1, Role::Grid2]))
                    .flatten(),
                block: kept(Member::Block)
                    .then(|| dim3([Role::Block0, Role::Block1, Role::Block2]))
                    .flatten(),
                input_dims: None,
                input_type: None,
                kernel_file: kept(Member::KernelFile)
                    .then(|| string(Role::KernelFile))
                    .flatten(),
                kernel_backend: kept(Member::KernelBackend)
                    .then(|| string(Role::KernelBackend))
                    .flatten(),
            }
        };
        Some(assemble(&top, cat, args))
    }
}

impl Shape {
    /// Reads `buf` at `start` against this shape.
    #[inline(always)]
    fn read<'a>(&self, buf: &'a [u8], start: usize, found: &mut Found<'a>) -> Option<usize> {
        let mut p = start;
        let mut f = 0;
        for slot in &self.slots {
            let n = slot.fixed as usize;
            if !same(buf.get(p..p + n)?, self.fixed.get(f..f + n)?) {
                return None;
            }
            p += n;
            f += n;
            let v = match slot.kind {
                Kind::Str => {
                    // The closing quote is the first fixed byte after the value, so a
                    // stop at anything else (escape, control byte) fails the compare.
                    let len = find_string_stop(buf.get(p..)?)?;
                    let raw = &buf[p..p + len];
                    p += len;
                    Scalar::Str(RawStr {
                        raw,
                        escaped: false,
                    })
                }
                Kind::Num => {
                    let end = number_end(buf, p)?;
                    let t = &buf[p..end];
                    p = end;
                    Scalar::Num(t)
                }
            };
            if slot.role == Role::Cat
                && let Scalar::Str(s) = v
                && self.cat.as_deref() != Some(s.raw)
            {
                return None;
            }
            found.vals[slot.role as usize] = Some(v);
        }
        let n = self.fixed.len() - f;
        if !same(buf.get(p..p + n)?, self.fixed.get(f..)?) {
            return None;
        }
        Some(p + n)
    }

    /// The shape of a valid event, or None when it cannot be read by role.
    fn learn(text: &[u8]) -> Option<Shape> {
        let mut l = Learner {
            text,
            fixed: Vec::with_capacity(text.len()),
            slots: Vec::new(),
            from: 0,
            cat: None,
        };
        l.walk()?;
        l.fixed.extend_from_slice(text.get(l.from..)?);
        Some(Shape {
            fixed: l.fixed,
            slots: l.slots,
            cat: l.cat.map(<[u8]>::to_vec),
            cat_kind: Cat::from_raw(l.cat.map(|raw| RawStr {
                raw,
                escaped: false,
            })),
        })
    }
}

/// Where a container sits in the event, which decides its values' roles.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Top,
    Args,
    Grid,
    Block,
    Elsewhere,
}

struct Learner<'t> {
    text: &'t [u8],
    fixed: Vec<u8>,
    slots: Vec<Slot>,
    /// Start of the fixed bytes not yet taken.
    from: usize,
    /// The raw `cat` string, when it is one.
    cat: Option<&'t [u8]>,
}

impl Learner<'_> {
    /// Walks the event, recording a slot per string or number. None when the event is
    /// not one a shape can read by role.
    fn walk(&mut self) -> Option<()> {
        let text = self.text;
        let mut c = Cursor::new(text, 0);
        // Open containers: closer, place, element count, whether all elements were
        // numbers (for `grid`/`block`), first slot index inside it.
        let mut open: Vec<(u8, Place, usize, bool, usize)> = Vec::new();
        let mut seen: [Vec<&[u8]>; 2] = [Vec::new(), Vec::new()];
        if !c.open(b'{', b'}').ok()? {
            return Some(());
        }
        open.push((b'}', Place::Top, 0, true, 0));
        loop {
            let (close, place, count, _, _) = *open.last()?;
            // The member's role (objects) or the element's (arrays).
            let (role, child) = if close == b'}' {
                let key = c.key().ok()?;
                if key.escaped {
                    return None;
                }
                let depth = match place {
                    Place::Top => 0,
                    Place::Args => 1,
                    _ => 2,
                };
                if depth < 2 {
                    if seen[depth].contains(&key.raw) {
                        return None;
                    }
                    seen[depth].push(key.raw);
                }
                member_role(place, key.raw)?
            } else {
                let role = match place {
                    Place::Grid => Role::dim(false, count),
                    Place::Block => Role::dim(true, count),
                    _ => Role::None,
                };
                (role, Place::Elsewhere)
            };
            if let Some(top) = open.last_mut() {
                top.2 += 1;
            }
            match c.peek()? {
                b'{' | b'[' => {
                    let opener = c.peek()?;
                    if place == Place::Top && role == Role::None && child == Place::Args {
                        // `args` must be an object to be read by role.
                        if opener != b'{' {
                            return None;
                        }
                    }
                    if role.is_dim()
                        && let Some(top) = open.last_mut()
                    {
                        top.3 = false;
                    }
                    let closer = if opener == b'{' { b'}' } else { b']' };
                    let child = match (child, opener) {
                        (Place::Args, b'{') => Place::Args,
                        (Place::Grid | Place::Block, b'[') => child,
                        _ => Place::Elsewhere,
                    };
                    if open.len() >= 8 {
                        return None;
                    }
                    if c.open(opener, closer).ok()? {
                        open.push((closer, child, 0, true, self.slots.len()));
                        continue;
                    }
                }
                _ => {
                    if child == Place::Args {
                        // `args` that is not an object.
                        return None;
                    }
                    let at = c.i;
                    let v = c.scalar().ok()?;
                    match v {
                        Scalar::Str(s) => {
                            if s.escaped {
                                return None;
                            }
                            if role == Role::Cat {
                                self.cat = Some(s.raw);
                            }
                            self.slot(at + 1, Kind::Str, role);
                            self.from = c.i - 1;
                        }
                        Scalar::Num(_) => {
                            self.slot(at, Kind::Num, role);
                            self.from = c.i;
                        }
                        // Literals stay in the fixed bytes.
                        Scalar::Null | Scalar::Other => {
                            if role.is_dim()
                                && let Some(top) = open.last_mut()
                            {
                                top.3 = false;
                            }
                        }
                    }
                    if self.slots.len() > MAX_VALUES {
                        return None;
                    }
                }
            }
            // After a value: close containers until one continues.
            loop {
                let (close, place, count, all_num, first) = *open.last()?;
                if c.next_or_close(close).ok()? {
                    break;
                }
                open.pop();
                if matches!(place, Place::Grid | Place::Block) && (count != 3 || !all_num) {
                    // Not three numbers: the parser reads no dim3 here, nor may a shape.
                    for s in &mut self.slots[first..] {
                        s.role = Role::None;
                    }
                }
                if open.is_empty() {
                    return (c.i == text.len()).then_some(());
                }
            }
        }
    }

    fn slot(&mut self, value_at: usize, kind: Kind, role: Role) {
        let fixed = &self.text[self.from..value_at];
        self.fixed.extend_from_slice(fixed);
        self.slots.push(Slot {
            fixed: fixed.len() as u32,
            kind,
            role,
        });
    }
}

/// A member's role and the place of its value if it is a container; None when the
/// member makes the event unreadable by role.
fn member_role(place: Place, key: &[u8]) -> Option<(Role, Place)> {
    let member = match place {
        Place::Top => Member::from_key(key),
        Place::Args => Member::from_arg_key(key),
        _ => None,
    };
    Some(match member {
        Some(Member::Ph) => (Role::Ph, Place::Elsewhere),
        Some(Member::Cat) => (Role::Cat, Place::Elsewhere),
        Some(Member::Name) => (Role::Name, Place::Elsewhere),
        Some(Member::Pid) => (Role::Pid, Place::Elsewhere),
        Some(Member::Tid) => (Role::Tid, Place::Elsewhere),
        Some(Member::Ts) => (Role::Ts, Place::Elsewhere),
        Some(Member::Dur) => (Role::Dur, Place::Elsewhere),
        Some(Member::Id) => (Role::Id, Place::Elsewhere),
        Some(Member::Args) => (Role::None, Place::Args),
        Some(Member::Correlation) => (Role::Correlation, Place::Elsewhere),
        Some(Member::ExternalId) => (Role::ExternalId, Place::Elsewhere),
        Some(Member::Device) => (Role::Device, Place::Elsewhere),
        Some(Member::Grid) => (Role::None, Place::Grid),
        Some(Member::Block) => (Role::None, Place::Block),
        Some(Member::KernelFile) => (Role::KernelFile, Place::Elsewhere),
        Some(Member::KernelBackend) => (Role::KernelBackend, Place::Elsewhere),
        // Kept as raw JSON text by the parser: not readable by role.
        Some(Member::InputDims | Member::InputType) => return None,
        None => (Role::None, Place::Elsewhere),
    })
}

/// Whether two equally long byte strings are equal: eight bytes at a time, inline (the
/// fixed runs between values are short, where a call to `memcmp` costs more than the
/// compare).
#[inline(always)]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| -> u64 {
        match s.get(at..at + 8) {
            Some(w) => u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]),
            None => 0,
        }
    };
    let half = |s: &[u8], at: usize| -> u32 {
        match s.get(at..at + 4) {
            Some(w) => u32::from_le_bytes([w[0], w[1], w[2], w[3]]),
            None => 0,
        }
    };
    if n < 8 {
        // Two overlapping loads cover 4..=7 bytes; shorter runs go byte by byte.
        return if n >= 4 {
            half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4)
        } else {
            a.iter().zip(b).all(|(x, y)| x == y)
        };
    }
    let mut i = 0;
    while i + 8 <= n {
        if word(a, i) != word(b, i) {
            return false;
        }
        i += 8;
    }
    // The last, overlapping word covers the tail.
    i == n || word(a, n - 8) == word(b, n - 8)
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::path::PathBuf;

    use super::*;
    use crate::event::parse_event;
    use crate::options::Limits;
    use crate::scan::{Located, locate_array};

    const ALL: Wanted = Wanted::EVERYTHING;
    const ANALYSIS: Wanted = Wanted::ANALYSIS;

    fn gunzip(path: &PathBuf) -> Vec<u8> {
        let file = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&file[..])
            .read_to_end(&mut out)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        out
    }

    /// The real traces the repository carries (fixtures/traces): eager, CUDA-graph,
    /// inductor and reduce-overhead captures, and the two derived or training ones.
    fn traces() -> Vec<PathBuf> {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/traces");
        [
            "eager",
            "graph_under_recorded",
            "train",
            "graph",
            "compiled",
            "compiled_ro",
        ]
        .iter()
        .map(|n| root.join(format!("{n}.json.gz")))
        .collect()
    }

    /// Each event's span, found by the cursor.
    fn spans(doc: &[u8]) -> Vec<(usize, usize)> {
        let Located::Array { body, .. } = locate_array(doc, true, &Limits::default()) else {
            panic!("no traceEvents array");
        };
        let mut out = Vec::new();
        let mut pos = body;
        let mut stack = Vec::new();
        loop {
            while matches!(doc.get(pos), Some(b' ' | b'\n' | b'\r' | b'\t' | b',')) {
                pos += 1;
            }
            if doc.get(pos) != Some(&b'{') {
                return out;
            }
            let mut c = Cursor::new(doc, pos);
            if parse_event(&mut c, &mut stack, ALL).is_err() {
                return out;
            }
            out.push((pos, c.i));
            pos = c.i;
        }
    }

    fn by_parser(doc: &[u8], start: usize, wanted: Wanted) -> (String, usize) {
        let mut c = Cursor::new(doc, start);
        let ev = parse_event(&mut c, &mut Vec::new(), wanted);
        (format!("{ev:?}"), c.i)
    }

    #[test]
    fn real_events_read_by_shape_equal_the_parsers_reading() {
        for path in traces() {
            let doc = gunzip(&path);
            let spans = spans(&doc);
            assert!(
                spans.len() > 1000,
                "{}: {} events",
                path.display(),
                spans.len()
            );
            for wanted in [ALL, ANALYSIS] {
                let mut shapes = Shapes::default();
                let mut hits = 0;
                for &(s, e) in &spans {
                    match shapes.read(&doc, s, wanted) {
                        Some((ev, end)) => {
                            hits += 1;
                            let got = (format!("{:?}", Ok::<_, ()>(ev)), end);
                            let want = by_parser(&doc, s, wanted);
                            assert_eq!(
                                got,
                                want,
                                "{} at {s}: {}",
                                path.display(),
                                String::from_utf8_lossy(&doc[s..e])
                            );
                        }
                        None => shapes.learn(&doc, s, e),
                    }
                }
                let rate = hits as f64 / spans.len() as f64;
                eprintln!("{}: {hits} of {} by shape", path.display(), spans.len());
                // Every trace has repeated shapes (kernels, launches, flows); the graph
                // fixture is almost nothing else.
                assert!(
                    rate > 0.3,
                    "{}: only {rate:.2} read by shape",
                    path.display()
                );
                if path.ends_with("graph_under_recorded.json.gz") {
                    assert!(rate > 0.9, "graph fixture: {rate:.2}");
                }
            }
        }
    }

    #[test]
    fn a_shape_never_reads_what_the_parser_reads_differently() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let doc = gunzip(&root.join("../../fixtures/traces/train.json.gz"));
        let spans = spans(&doc);
        let mut rng = fastrand::Rng::with_seed(5);
        let alphabet = b" \t\n\"\\{}[]:,0123456789.-+eEtrufalsn\x00\x1f\x80xyzX";
        let (mut tried, mut read) = (0, 0);
        // One event of each shape, mutated many ways.
        for &(s, e) in spans.iter().step_by(97).take(60) {
            let text = &doc[s..e];
            let mut shapes = Shapes::default();
            shapes.learn(text, 0, text.len());
            if shapes.shapes.is_empty() {
                continue;
            }
            for _ in 0..300 {
                let mut m = text.to_vec();
                for _ in 0..rng.usize(1..3) {
                    let at = rng.usize(0..m.len());
                    let c = *rng.choice(alphabet).unwrap_or(&b' ');
                    match rng.u8(0..3) {
                        0 => m[at] = c,
                        1 => {
                            m.remove(at);
                        }
                        _ => m.insert(at, c),
                    }
                }
                m.extend_from_slice(b", ");
                tried += 1;
                shapes.unpredict();
                if let Some((ev, end)) = shapes.read(&m, 0, ALL) {
                    read += 1;
                    let got = (format!("{:?}", Ok::<_, ()>(ev)), end);
                    assert_eq!(
                        got,
                        by_parser(&m, 0, ALL),
                        "{}",
                        String::from_utf8_lossy(&m)
                    );
                }
            }
        }
        assert!(read > 1000 && read < tried, "read {read} of {tried}");
    }

    fn learns(text: &str) -> bool {
        Shape::learn(text.as_bytes()).is_some()
    }

    #[test]
    fn same_compares_every_byte_at_every_length() {
        let mut rng = fastrand::Rng::with_seed(9);
        for n in 0..40 {
            let a: Vec<u8> = (0..n).map(|_| rng.u8(..)).collect();
            assert!(same(&a, &a));
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 1 << rng.u8(0..8);
                assert!(!same(&a, &b), "length {n}, byte {at}");
            }
        }
        assert!(!same(b"ab", b"abc"));
    }

    #[test]
    fn shapes_are_not_learned_where_roles_are_ambiguous() {
        // The parser reads args with the category seen when it meets them.
        assert!(!learns(
            r#"{"cat":"kernel","args":{"grid":[1,2,3]},"cat":"cpu_op"}"#
        ));
        // The last duplicate wins, even a literal one.
        assert!(!learns(r#"{"name":"a","name":null}"#));
        assert!(!learns(r#"{"args":{"device":0,"device":1}}"#));
        assert!(!learns(r#"{"args":[1]}"#));
        assert!(!learns(r#"{"args":1}"#));
        assert!(!learns(r#"{"na\u006de":"a"}"#));
        assert!(!learns(r#"{"cat":"cpu_op","args":{"Input Dims":[[1]]}}"#));
        assert!(learns(r#"{"cat":"kernel","args":{"grid":[1,2,3]}}"#));
        assert!(learns(r#"{}"#));
    }

    #[test]
    fn a_list_that_is_not_three_integers_reads_as_no_dim3() {
        for (learned, read) in [
            (
                r#"{"cat":"kernel","args":{"grid":[1,2]}}"#,
                r#"{"cat":"kernel","args":{"grid":[7,8]}} "#,
            ),
            (
                r#"{"cat":"kernel","args":{"grid":[1,2,3,4]}}"#,
                r#"{"cat":"kernel","args":{"grid":[5,6,7,8]}} "#,
            ),
            (
                r#"{"cat":"kernel","args":{"grid":[[1],2,3]}}"#,
                r#"{"cat":"kernel","args":{"grid":[[4],5,6]}} "#,
            ),
            (
                r#"{"cat":"kernel","args":{"grid":[1,2,3]}}"#,
                r#"{"cat":"kernel","args":{"grid":[1,2.5,3]}} "#,
            ),
            (
                r#"{"cat":"kernel","args":{"grid":[1,"2",3]}}"#,
                r#"{"cat":"kernel","args":{"grid":[1,"x",3]}} "#,
            ),
        ] {
            let mut shapes = Shapes::default();
            shapes.learn(learned.as_bytes(), 0, learned.len());
            let Some((ev, end)) = shapes.read(read.as_bytes(), 0, ALL) else {
                panic!("{read} has the shape of {learned}");
            };
            let got = (format!("{:?}", Ok::<_, ()>(ev)), end);
            assert_eq!(got, by_parser(read.as_bytes(), 0, ALL), "{read}");
        }
    }
}
