//! One region of a trace's array: scanned by a worker into what its reader wants (events
//! or digested GPU records for analysis, the kept events' text for split), then folded in
//! file order by the reading thread.
//!
//! The element loop over a region is written once ([`walk`]); what a worker keeps of each
//! element is a [`Scanner`], and what the reading thread does with a region's result is a
//! [`Folder`].

use std::cell::RefCell;

use crate::collect::{Brief, Digest, MetaText, NO_NAME, Numbers, Resolve};

use super::{Feed, Sight};
use crate::event::{Cat, Event, IdRaw, Wanted};
use crate::intern::Interner;
use crate::options::Limits;
use crate::scan::{self, ErrorLog, Form, Problem, Put, Step};

/// How the bytes given to a scan end.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Tail {
    /// More of the input follows: an element cut by the end is left for the next read.
    More,
    /// The input ends here.
    Eof,
    /// The input ends here because reading failed or the file shrank: `problem` is
    /// recorded if the scan reaches this end.
    Broken,
}

/// The bytes one scan reads: elements of `buf` from `start` until the next element would
/// start at or after `stop`, or the bytes end (see [`Tail`]).
pub(crate) struct Span<'a, 'p> {
    pub(crate) buf: &'a [u8],
    /// Where `buf` starts in the input (split's second pass keys what the first learned
    /// of a scan on it).
    pub(crate) at: u64,
    pub(crate) start: usize,
    pub(crate) stop: usize,
    pub(crate) tail: Tail,
    /// Why the bytes end early (`Tail::Broken`).
    pub(crate) broken: Option<&'p Problem>,
    pub(crate) form: Form,
}

/// Where a scan stopped, beside what it kept.
pub(crate) struct Scanned<T> {
    pub(crate) out: T,
    /// Where the next scan must start to continue this one (an offset in the scanned
    /// bytes). Short of the stop when the bytes ended inside an element.
    pub(crate) next: usize,
    /// The array ended in this scan.
    pub(crate) ended: bool,
    /// It ended on its closing `]` (not on a problem).
    pub(crate) clean: bool,
    /// The reason broken bytes ended was recorded (the scan reached that end).
    pub(crate) broke: bool,
}

/// What a region worker keeps of the elements it reads; shared by the workers.
pub(crate) trait Scanner: Sync {
    /// One region's result.
    type Out<'a>: Send;
    /// Scans `span` into this scanner's result.
    fn scan<'a>(&self, span: Span<'a, '_>) -> Scanned<Self::Out<'a>>;
    /// The scan of a plain input's region whose bytes would be the `len` at `at` (the end
    /// of the input when `eof`), when the scanner knows it without them: the span's start
    /// and stop, and the result. A region it knows is not read at all (split's second pass
    /// knows the regions its first pass proved keep nothing).
    fn known<'a>(
        &self,
        _at: u64,
        _len: usize,
        _eof: bool,
    ) -> Option<(usize, usize, Scanned<Self::Out<'a>>)> {
        None
    }
    /// Whether [`Scanner::known`] knows that region, asked by a gzip decoder deciding
    /// which pieces it need not decode (split's second pass, pieces.rs).
    fn knows(&self, _at: u64, _len: usize, _eof: bool) -> bool {
        false
    }
}

/// What the reading thread does with each region's result, in file order.
pub(crate) trait Folder<S: Scanner> {
    /// Folds one region's result; `log` takes its problems.
    fn apply(&mut self, out: S::Out<'_>, log: &mut ErrorLog);
    /// Read progress in stored bytes (see [`crate::ProgressSink`]).
    fn progress(&mut self, _done: u64, _total: Option<u64>) {}
    /// The bytes before the array's first element is known: the members before the
    /// `"traceEvents"` key (an array-format trace has none: `{`).
    fn prefix(&mut self, _prefix: &[u8]) {}
    /// Whether [`Folder::suffix`] is wanted (it means reading on after the array).
    fn wants_suffix(&self) -> bool {
        false
    }
    /// The text after the array's closing `]` (at most `max_prefix_bytes` of it), when the
    /// array ended cleanly.
    fn suffix(&mut self, _rest: &[u8]) {}
}

/// What [`walk`] hands each element to.
pub(crate) trait Elements<'a> {
    /// Where a step writes the event it keeps.
    type Put: Put<'a>;
    fn put(&mut self) -> &mut Self::Put;
    /// An event was read (`raw` is its text); `kept` as [`Step::Event`].
    fn event(&mut self, kept: bool, raw: &'a [u8]);
}

/// The element loop's record of one scan: events read, and problems with the number of
/// events read before each.
#[derive(Default)]
pub(crate) struct Walked {
    pub(crate) count: u64,
    pub(crate) problems: Vec<(u64, Problem)>,
}

impl Walked {
    /// Writes the problems to `log`, numbered after `base` earlier events.
    pub(crate) fn log(&self, base: u64, log: &mut ErrorLog) {
        for (n, p) in &self.problems {
            log.push(p, base + n);
        }
    }
}

thread_local! {
    /// The element loop's fast paths as this thread's last walk left them: its learned
    /// shapes, remembered tails and lists carry over to the thread's next region. Learned
    /// afresh for every 2 MiB region, they cost e10 ~5% of its instructions (the first
    /// events of each shape read by the parser, every list's first sight walked). They
    /// hold no bytes of any buffer (shapes keep copies), and every read by them is the
    /// parser's, so what a region yields does not depend on which regions came before.
    static FAST: RefCell<Option<scan::Fast>> = const { RefCell::new(None) };
}

/// The element loop over one span (trace.md "Element loop"), handing events to `e`.
pub(crate) fn walk<'a, E: Elements<'a>>(
    span: Span<'a, '_>,
    limits: &Limits,
    wanted: Wanted,
    e: &mut E,
) -> Scanned<Walked> {
    // Taken out for the walk and put back after it: no borrow is held while it runs.
    let kept = FAST.with(|f| f.borrow_mut().take());
    let mut fast = kept
        .filter(|f| f.fits(limits, wanted))
        .unwrap_or_else(|| scan::Fast::new(limits, wanted));
    let scanned = walk_with(span, e, &mut fast);
    FAST.with(|f| *f.borrow_mut() = Some(fast));
    scanned
}

/// [`walk`] with the fast paths `fast` (which hold the limits and what is wanted).
fn walk_with<'a, E: Elements<'a>>(
    span: Span<'a, '_>,
    e: &mut E,
    fast: &mut scan::Fast,
) -> Scanned<Walked> {
    let Span {
        buf,
        at: _,
        start,
        stop,
        tail,
        broken,
        form,
    } = span;
    let eof = tail != Tail::More;
    let mut w = Walked::default();
    let mut broke = false;
    let mut pos = start;
    let done = |w, next, ended, clean, broke| Scanned {
        out: w,
        next,
        ended,
        clean,
        broke,
    };
    loop {
        // Kineto writes `,\n  ` between events: one compare instead of four turns of the
        // byte loop below, which takes whatever else separates them.
        if buf.get(pos..pos + 4) == Some(b",\n  ") {
            pos += 4;
        }
        while pos < buf.len() && matches!(buf[pos], b' ' | b'\n' | b'\r' | b'\t' | b',') {
            pos += 1;
        }
        if pos >= stop && pos < buf.len() {
            return done(w, pos, false, false, broke);
        }
        let n = w.count;
        let before = pos;
        // Most events are read by a shape: tried here, in line, so that an event costs no
        // calls through the step (in a graph capture or an eager one, every event but the
        // first few of each shape in a region).
        if let Some(kept) = scan::shaped(buf, &mut pos, fast, e.put()) {
            w.count += 1;
            // Taken without a panicking index (a shape's read ends inside `buf`), so that
            // a region, which does not read the text, costs nothing here.
            e.event(kept, buf.get(before..pos).unwrap_or_default());
            continue;
        }
        match scan::step_unshaped(buf, &mut pos, eof, fast, e.put()) {
            Step::Event(kept) => {
                w.count += 1;
                e.event(kept, &buf[before..pos]);
            }
            Step::Problem(p) => {
                if pos >= buf.len()
                    && let (Tail::Broken, Some(b)) = (tail, broken)
                {
                    w.problems.push((n, b.clone()));
                    broke = true;
                }
                w.problems.push((n, p));
            }
            Step::End(p) => {
                // A problem at the end of broken bytes follows the reason they ended.
                if let (Some(_), Tail::Broken, Some(b)) = (&p, tail, broken) {
                    w.problems.push((n, b.clone()));
                    broke = true;
                }
                let clean = p.is_none();
                match p {
                    // Chrome's array format may leave the closing `]` out.
                    Some(Problem::Unterminated)
                        if form == Form::Array && pos == buf.len() && tail != Tail::Broken => {}
                    Some(p) => w.problems.push((n, p)),
                    None => {}
                }
                return done(w, pos, true, clean, broke);
            }
            Step::NeedMore => return done(w, before, false, false, broke),
        }
    }
}

/// The analysis scanner: the events analysis uses, GPU events digested into records.
pub(crate) struct Analyse<'l> {
    pub(crate) limits: &'l Limits,
    pub(crate) wanted: Wanted,
    /// An observer will see the digested records (keep what it needs beside them).
    pub(crate) observed: bool,
}

/// How a region keeps one of the events analysis uses.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kept {
    /// Digested into a GPU record.
    Gpu,
    /// Folded to a [`Brief`].
    Brief,
    /// Kept whole.
    Event,
}

/// The events of one region of the array, in file order.
pub(crate) struct Region<'a> {
    /// The events analysis uses that are kept whole (an observer's kinds, escaped names);
    /// the others are digested, briefed, or only counted.
    events: Vec<Event<'a>>,
    /// The GPU events the worker digested itself.
    digest: Digest<'a>,
    /// The other events the fold reads, briefed by the worker.
    briefs: Vec<Brief>,
    /// Per kept event, in file order: which list holds it.
    kinds: Vec<Kept>,
    /// Per whole event: its numbers in `names` and `metas`.
    numbers: Vec<Numbers>,
    /// The distinct pids of the region's briefs, numbered by the worker.
    pids: Interner<IdRaw<'a>>,
    /// Per name number: the tests on that name ([`Brief::name_flags`]), made the first
    /// time a brief or a whole launch needs them ([`Brief::UNTESTED`] until then).
    name_flags: Vec<u8>,
    /// An observer is served: the kinds it sees are kept whole.
    observed: bool,
    /// The distinct names of the region's events, numbered by the worker (in parallel,
    /// while the bytes are in its cache) so the fold interns each once per region.
    names: Interner<&'a [u8]>,
    /// The distinct meta texts of the region's ops, numbered likewise: the fold looks
    /// each up once per region, not once per op.
    metas: Interner<MetaText<'a>>,
    walked: Walked,
}

impl<'a> Elements<'a> for Region<'a> {
    /// A kept event comes to the region itself ([`Region::push`]), as the step reads it.
    type Put = Region<'a>;

    fn put(&mut self) -> &mut Region<'a> {
        self
    }

    /// Nothing left to do: the step handed a kept event to [`Region::push`].
    #[inline(always)]
    fn event(&mut self, _kept: bool, _raw: &'a [u8]) {}
}

impl<'a> Put<'a> for Region<'a> {
    #[inline(always)]
    fn put(&mut self, ev: Event<'a>) {
        self.push(ev);
    }
}

impl<'a> Region<'a> {
    /// Takes an event analysis uses: numbers it, and digests it when it is a GPU event,
    /// briefs it when the fold can read it so, or keeps it whole.
    ///
    /// Why straight from the step: the event is ~320 bytes, and pushing each onto the
    /// whole-event list to read it back and drop it there cost a copy and the list's
    /// bookkeeping per kept event; only those kept whole are stored.
    #[inline(never)]
    pub(crate) fn push(&mut self, ev: Event<'a>) {
        let n = Numbers::give(&ev, &mut self.names, &mut self.metas);
        let kept = if self.digest.take(&ev, n.name) {
            Kept::Gpu
        } else if Brief::fits(&ev, self.observed) {
            let pid = self.pids.intern_repeat(ev.pid);
            let flags = name_flags(&mut self.name_flags, &ev, n.name);
            self.briefs.push(Brief::of(&ev, n, pid, flags));
            Kept::Brief
        } else {
            // An observed launch's name is tested here too, once per name.
            if matches!(ev.cat, Cat::Runtime | Cat::Driver) {
                name_flags(&mut self.name_flags, &ev, n.name);
            }
            self.numbers.push(n);
            self.events.push(ev);
            Kept::Event
        };
        self.kinds.push(kept);
    }
}

/// The tests on the name of `ev`, numbered `n` in its region: made once per number (an
/// eager step's ops repeat a few hundred names), or every time for a name not numbered
/// (escaped).
#[inline]
fn name_flags(flags: &mut Vec<u8>, ev: &Event<'_>, n: u32) -> u8 {
    if n == NO_NAME {
        return Brief::text_flags(ev);
    }
    let i = n as usize;
    if flags.len() <= i {
        // Names of other events (GPU ones) took the numbers between.
        flags.resize(i + 1, Brief::UNTESTED);
    }
    if flags[i] == Brief::UNTESTED {
        flags[i] = Brief::text_flags(ev);
    }
    flags[i]
}

/// Bytes of a region per event its lists are sized for before the walk: about what a
/// graph capture's events take (265 bytes each, half of them kept undigested), so the
/// lists of a region grow once or not at all instead of doubling a dozen times from
/// empty, copying what they hold each time (`realloc`'s copies were 1% of a read's
/// instructions).
const BYTES_PER_EVENT: usize = 512;

impl Analyse<'_> {
    /// A region before the walk of `span`, sized as [`Analyse::scan`] sizes it (split's
    /// first pass walks it with its own element hook).
    pub(crate) fn region<'a>(&self, span: &Span<'a, '_>) -> Region<'a> {
        self.region_for(span.stop.min(span.buf.len()).saturating_sub(span.start))
    }

    /// A region before the walk of `bytes` of the array, its lists sized for them.
    fn region_for<'a>(&self, bytes: usize) -> Region<'a> {
        let n = bytes / BYTES_PER_EVENT;
        let mut digest = if self.observed {
            Digest::observed()
        } else {
            Digest::default()
        };
        digest.recs.reserve(n);
        // Without an observer the whole-event list holds the rare escaped name; with one,
        // the kinds it is shown as well.
        let whole = if self.observed { n } else { 16 };
        Region {
            events: Vec::with_capacity(whole),
            digest,
            briefs: Vec::with_capacity(n),
            kinds: Vec::with_capacity(2 * n),
            numbers: Vec::with_capacity(whole),
            pids: Interner::default(),
            name_flags: Vec::new(),
            observed: self.observed,
            names: Interner::default(),
            metas: Interner::default(),
            walked: Walked::default(),
        }
    }
}

impl Region<'_> {
    /// Records the walk that filled the region.
    pub(crate) fn set_walked(&mut self, walked: Walked) {
        self.walked = walked;
    }
}

impl Scanner for Analyse<'_> {
    type Out<'a> = Region<'a>;

    fn scan<'a>(&self, span: Span<'a, '_>) -> Scanned<Region<'a>> {
        let mut r = self.region(&span);
        let s = walk(span, self.limits, self.wanted, &mut r);
        r.walked = s.out;
        Scanned {
            out: r,
            next: s.next,
            ended: s.ended,
            clean: s.clean,
            broke: s.broke,
        }
    }
}

impl<'l> Folder<Analyse<'l>> for Feed<'_> {
    /// Folds a scanned region, in file order.
    fn apply(&mut self, r: Region<'_>, log: &mut ErrorLog) {
        let base = self.fold.event_total();
        // Problem positions are event counts, so the log can be written before the fold.
        r.walked.log(base, log);
        let mut resolve = Resolve::new(
            r.names.values(),
            &r.name_flags,
            r.metas.values(),
            r.pids.values(),
            &r.digest,
        );
        // An observer sees the digested records in their place in file order, with names
        // and stream ids decoded once per region.
        let mut sight = match &r.digest.memsets {
            Some(memsets) if self.observes() => {
                Some(Sight::new(r.names.values(), &r.digest, memsets))
            }
            _ => None,
        };
        let mut events = r.events.iter().zip(r.numbers);
        let mut recs = r.digest.recs.iter().enumerate();
        let mut briefs = r.briefs.iter();
        for kept in r.kinds {
            match kept {
                Kept::Gpu => {
                    if let Some((i, &rec)) = recs.next() {
                        // Folded first: the fold numbers the name and the stream for the
                        // whole read, and the observer is handed those numbers.
                        let numbers = self.fold_gpu(rec, &mut resolve);
                        if let Some(sight) = &mut sight {
                            self.observe_digested(&rec, i, sight, numbers);
                        }
                    }
                }
                Kept::Brief => {
                    if let Some(b) = briefs.next() {
                        self.fold_brief(b, &mut resolve);
                    }
                }
                Kept::Event => {
                    if let Some((ev, n)) = events.next() {
                        self.fold_named(ev, n, &mut resolve);
                    }
                }
            }
        }
        self.fold.set_event_total(base + r.walked.count);
    }

    fn progress(&mut self, done: u64, total: Option<u64>) {
        Feed::progress(self, done, total);
    }
}
