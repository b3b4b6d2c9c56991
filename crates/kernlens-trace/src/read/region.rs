//! One region of a plain trace's array: scanned by a worker into events (or digested GPU
//! records), then folded into the feed in file order by the reading thread.

use crate::collect::{Digest, Lazy, NO_NAME, Resolve, names_interned};

use super::{Feed, Sight};
use crate::event::{Event, Wanted};
use crate::intern::Interner;
use crate::options::Limits;
use crate::scan::{self, ErrorLog, Form, Problem, Step};

/// The events of one region of the array, in file order.
pub(crate) struct Region<'a> {
    /// The events analysis uses; the others are only counted.
    events: Vec<Event<'a>>,
    /// The GPU events the worker digested itself.
    digest: Digest<'a>,
    /// Per kept event, in file order: whether it is the next digested record (else the
    /// next of `events`).
    digested: Vec<bool>,
    /// Per event: its name's number in `names`, or `NO_NAME`.
    name_ids: Vec<u32>,
    /// The distinct names of the region's events, numbered by the worker (in parallel,
    /// while the bytes are in its cache) so the fold interns each once per region.
    names: Interner<&'a [u8]>,
    /// Every event read, used or not.
    pub(crate) count: u64,
    /// Problems with the number of events this region had yielded before each.
    problems: Vec<(u64, Problem)>,
    /// Where the next region must start to continue this one (an offset in the scanned
    /// bytes). Short of the stop when the bytes ended inside an element.
    pub(crate) next: usize,
    /// The array ended in this region.
    pub(crate) ended: bool,
}

/// What a region's worker is asked for: which events, whether an observer will see the
/// GPU events it digests into records (then it keeps what the observer needs beside
/// them), and the trace's layout.
#[derive(Clone, Copy)]
pub(crate) struct Ask {
    pub(crate) wanted: Wanted,
    pub(crate) observed: bool,
    pub(crate) form: Form,
}

/// How the bytes given to [`scan`] end.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tail {
    /// More of the input follows: an element cut by the end is left for the next read.
    More,
    /// The input ends here.
    Eof,
    /// The input ends here because reading failed or the file shrank: `problem` is
    /// recorded if the scan reaches this end.
    Broken,
}

/// Scans elements of `buf` from `start` until the next element would start at or after
/// `stop_at`, or the bytes end (see [`Tail`]).
pub(crate) fn scan<'a>(
    buf: &'a [u8],
    start: usize,
    stop_at: usize,
    tail: Tail,
    broken: Option<&Problem>,
    limits: &Limits,
    ask: Ask,
) -> Region<'a> {
    let wanted = ask.wanted;
    let eof = tail != Tail::More;
    let mut r = Region {
        events: Vec::new(),
        digest: if ask.observed {
            Digest::observed()
        } else {
            Digest::default()
        },
        digested: Vec::new(),
        name_ids: Vec::new(),
        names: Interner::default(),
        count: 0,
        problems: Vec::new(),
        next: start,
        ended: false,
    };
    let mut pos = start;
    let mut fast = scan::Fast::new(limits, wanted);
    loop {
        while pos < buf.len() && matches!(buf[pos], b' ' | b'\n' | b'\r' | b'\t' | b',') {
            pos += 1;
        }
        if pos >= stop_at && pos < buf.len() {
            r.next = pos;
            return r;
        }
        let n = r.count;
        let before = pos;
        match scan::step(buf, &mut pos, eof, &mut fast, &mut r.events) {
            Step::Event(kept) => {
                r.count += 1;
                if let (true, Some(ev)) = (kept, r.events.last()) {
                    let id = if ev.name.escaped || !names_interned(ev.cat) {
                        NO_NAME
                    } else {
                        r.names.intern(ev.name.raw)
                    };
                    let digested = r.digest.take(ev, id);
                    r.digested.push(digested);
                    if digested {
                        // Dropped in place: nothing to free, nothing to move.
                        r.events.truncate(r.events.len() - 1);
                    } else {
                        r.name_ids.push(id);
                    }
                }
            }
            Step::Problem(p) => {
                if pos >= buf.len()
                    && let (Tail::Broken, Some(b)) = (tail, broken)
                {
                    r.problems.push((n, b.clone()));
                }
                r.problems.push((n, p));
            }
            Step::End(p) => {
                // A problem at the end of broken bytes follows the reason they ended.
                if let (Some(_), Tail::Broken, Some(b)) = (&p, tail, broken) {
                    r.problems.push((n, b.clone()));
                }
                match p {
                    // Chrome's array format may leave the closing `]` out.
                    Some(Problem::Unterminated)
                        if ask.form == Form::Array && pos == buf.len() && tail != Tail::Broken => {}
                    Some(p) => r.problems.push((n, p)),
                    None => {}
                }
                r.ended = true;
                r.next = pos;
                return r;
            }
            Step::NeedMore => {
                r.next = before;
                return r;
            }
        }
    }
}

/// Folds a scanned region into `feed`, in file order.
pub(crate) fn apply(r: Region<'_>, feed: &mut Feed<'_>, log: &mut ErrorLog) {
    let base = feed.fold.out.event_total;
    // Problem positions are event counts, so the log can be written before the fold.
    for (n, p) in &r.problems {
        log.push(p, base + n);
    }
    let mut names = Lazy::new(r.names.values());
    let mut resolve = Resolve::new(&mut names, &r.digest);
    // An observer sees the digested records in their place in file order, with names
    // and stream ids decoded once per region.
    let mut sight = match &r.digest.memsets {
        Some(memsets) if feed.observes() => Some(Sight::new(r.names.values(), &r.digest, memsets)),
        _ => None,
    };
    let mut events = r.events.into_iter().zip(r.name_ids);
    let mut recs = r.digest.recs.iter().enumerate();
    for digested in r.digested {
        if digested {
            if let Some((i, &rec)) = recs.next() {
                if let Some(sight) = &mut sight {
                    feed.observe_digested(&rec, i, sight);
                }
                feed.fold_gpu(rec, &mut resolve);
            }
        } else if let Some((ev, id)) = events.next() {
            feed.fold_named(ev, id, resolve.names);
        }
    }
    feed.fold.out.event_total = base + r.count;
}
