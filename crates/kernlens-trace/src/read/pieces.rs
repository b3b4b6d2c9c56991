//! A stream (a gzip input) read on the region workers: one thread decompresses into
//! reused buffers ("pieces") that overlap by the start-guess window, the workers scan the
//! pieces as they scan a plain input's regions, and the reading thread folds them in file
//! order, checking each start guess (parallel.rs) exactly as for a plain input.
//!
//! Piece `i` holds the decoded bytes `i * R - BACK .. (i + 1) * R + look` (`R` the region
//! size): its region starts at the guess at `i * R` and stops at the guess at
//! `(i + 1) * R`, and the next piece holds the whole window of that guess too, so both
//! pieces guess the same position. The reading thread keeps the pieces of one batch and
//! the one before it, and reads from them (receiving more when it must) whenever a guess
//! was wrong or an element did not fit its piece.
//!
//! Split's second pass over a gzip file with access points (zran.rs) sends a piece its
//! scanner knows without the bytes, and that no read of the reading thread touched in the
//! first pass, hollow: not decoded. The decompressing thread then starts again at the last
//! access point before the next piece it must decode.

use std::collections::VecDeque;
use std::io;
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};

use crate::options::Limits;
use crate::scan::{ErrorLog, Form, Problem};

use super::parallel::{BACK, Cut, Fetch, Fetched, Order, Work, guess, in_order, worker_pool};
use super::region::{Folder, Scanner, Span, Tail};
use super::stream::Meter;
use super::zran::Decoded;
use super::{InputLimit, fill, input_problem};

/// How a stream is cut: 512 KiB regions, each read 64 KiB past its end to finish its last
/// element (longer ones are finished by the reading thread). Small regions keep the
/// pieces in flight, and so peak memory, small; PERFORMANCE.md has the measurement.
pub(crate) const STREAM_CUT: Cut = Cut {
    region: 512 << 10,
    look: 64 << 10,
};

/// Regions per worker thread in one batch.
const PER_THREAD: usize = 4;

/// Pieces per worker thread the decompressing thread may have decoded ahead of the batch.
const AHEAD: usize = 4;

/// Decoded bytes of the stream, from `base`.
pub(crate) struct Piece {
    index: u64,
    base: u64,
    /// The bytes, valid to `len` (the buffer is reused, so it is longer).
    buf: Vec<u8>,
    len: usize,
    tail: Tail,
    /// Why the stream ended here (`Tail::Broken`).
    broken: Option<Problem>,
    /// Not decoded: the scanner knows its scan, and the reading thread reads none of it.
    hollow: bool,
}

impl Piece {
    fn bytes(&self) -> &[u8] {
        if self.hollow {
            &[]
        } else {
            &self.buf[..self.len]
        }
    }

    fn end(&self) -> u64 {
        self.base + self.len as u64
    }
}

/// Where piece `index` lies in the decoded stream: its base and end (it stops short
/// when the stream does).
fn place(index: u64, cut: Cut) -> (u64, u64) {
    let region = cut.region as u64;
    let base = if index == 0 {
        0
    } else {
        (index * region).saturating_sub(BACK as u64)
    };
    (base, (index + 1) * region + cut.look as u64)
}

/// The decompressing thread: pieces in order until the stream ends (or the reading thread
/// hangs up); a piece `hollow` names is sent without its bytes. Buffers come back through
/// `free` to be reused. Gives the reader back.
fn decode<D: Decoded>(
    mut reader: D,
    gzip: bool,
    cut: Cut,
    max_input: Option<u64>,
    hollow: &(dyn Fn(u64) -> bool + Sync),
    tx: SyncSender<Piece>,
    free: Receiver<Vec<u8>>,
) -> D {
    let overlap = BACK + cut.look;
    // Every piece fits one size: the first reads `look` past its region, the others start
    // with the `overlap` bytes the piece before ended with.
    let size = cut.region + overlap;
    // A returned buffer, or a fresh zeroed one (`calloc`: pages the kernel already
    // zeroed, where `resize` would write zeros over them first).
    let buffer = || match free.try_recv() {
        Ok(b) if b.len() >= size => b,
        _ => vec![0; size],
    };
    let mut buf = buffer();
    // How many bytes at `buf`'s start are the previous piece's last.
    let mut kept = 0;
    // Decoded bytes read from `reader` (past the bytes an access point skipped).
    let mut total: u64 = 0;
    for index in 0u64.. {
        let (base, end) = place(index, cut);
        if index > 0 && hollow(index) {
            let piece = Piece {
                index,
                base,
                buf: Vec::new(),
                len: (end - base) as usize,
                tail: Tail::More,
                broken: None,
                hollow: true,
            };
            if tx.send(piece).is_err() {
                return reader;
            }
            continue;
        }
        let piece_len = (end - base) as usize;
        // The bytes from `base` on: those the piece before ended with, or (after hollow
        // pieces) decoded from the last access point before them.
        let mut failed = None;
        if total != base + kept as u64 {
            kept = 0;
            failed = skip_to(&mut reader, &mut total, base, &mut buf).err();
        }
        let want = piece_len - kept;
        let (mut n, read_failed) = match failed {
            Some(e) => (0, Some(e)),
            None => fill(&mut reader, &mut buf[kept..piece_len]),
        };
        let mut failed = read_failed;
        if let Some(max) = max_input.filter(|&max| total + n as u64 > max) {
            n = max.saturating_sub(total) as usize;
            failed = Some(io::Error::other(InputLimit(max)));
        }
        let len = kept + n;
        total += n as u64;
        // The bytes read before an error are data (a damaged gzip trailer comes after the
        // last member's bytes): the piece holds them, and says why the stream ends.
        let (tail, broken) = match failed {
            Some(e) => (Tail::Broken, Some(input_problem(&e, gzip))),
            None if n < want => (Tail::Eof, None),
            None => (Tail::More, None),
        };
        // The next piece's buffer starts with this one's last bytes, copied once, straight
        // from buffer to buffer.
        let mut next = if tail == Tail::More {
            buffer()
        } else {
            Vec::new()
        };
        kept = len.min(overlap);
        if let Some(head) = next.get_mut(..kept) {
            head.copy_from_slice(&buf[len - kept..len]);
        }
        let piece = Piece {
            index,
            base,
            buf: std::mem::replace(&mut buf, next),
            len,
            tail,
            broken,
            hollow: false,
        };
        if tx.send(piece).is_err() || tail != Tail::More {
            return reader;
        }
    }
    reader
}

/// Moves `reader`, `total` bytes into the decoded stream, to `to`: from an access point
/// when one lies between, decoding (into `scratch`) and dropping the bytes before `to`.
fn skip_to<D: Decoded>(
    reader: &mut D,
    total: &mut u64,
    to: u64,
    scratch: &mut [u8],
) -> io::Result<()> {
    *total = reader.skip_toward(*total, to)?;
    while *total < to {
        let room = scratch.len().min((to - *total) as usize);
        let (n, failed) = fill(reader, &mut scratch[..room]);
        *total += n as u64;
        if let Some(e) = failed {
            return Err(e);
        }
        if n < room {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the decoded stream ended before a piece it was known to hold",
            ));
        }
    }
    Ok(())
}

/// The pieces the reading thread has received and not yet handed to a batch.
struct Incoming {
    rx: Receiver<Piece>,
    ahead: VecDeque<Piece>,
    /// The last piece was received.
    done: bool,
    /// The decoded bytes the reading thread asked for itself, in order.
    fetched: Vec<(u64, u64)>,
}

impl Incoming {
    /// Receives the next piece into `ahead`; false at the end.
    fn pull(&mut self) -> bool {
        if self.done {
            return false;
        }
        match self.rx.recv() {
            Ok(p) => {
                self.done = p.tail != Tail::More;
                self.ahead.push_back(p);
                true
            }
            Err(_) => {
                self.done = true;
                false
            }
        }
    }

    /// The next piece in order.
    fn next(&mut self) -> Option<Piece> {
        if self.ahead.is_empty() {
            self.pull();
        }
        self.ahead.pop_front()
    }
}

/// The decoded bytes the reading thread can see: the piece before the batch, the batch,
/// and the pieces received after it.
struct View<'v> {
    prev: Option<&'v Piece>,
    batch: &'v [Piece],
    incoming: &'v mut Incoming,
}

impl View<'_> {
    /// The pieces in stream order.
    fn pieces(&self) -> impl Iterator<Item = &Piece> {
        self.prev
            .into_iter()
            .chain(self.batch.iter())
            .chain(self.incoming.ahead.iter())
    }
}

impl Fetch for View<'_> {
    fn fetch<'s>(&'s mut self, slot: &'s mut Vec<u8>, from: u64, to: u64) -> Fetched<'s> {
        self.incoming.fetched.push((from, to));
        // Receive until the bytes asked for are here or the stream has ended.
        while self.pieces().last().is_none_or(|p| p.end() < to) && self.incoming.pull() {}
        let last = self.pieces().last();
        let (end, last_tail, last_broken) = match last {
            Some(p) => (p.end(), p.tail, p.broken.clone()),
            None => (from, Tail::Eof, None),
        };
        let to = to.min(end);
        let from = from.min(to);
        let (tail, broken) = if to == end && last_tail != Tail::More {
            (last_tail, last_broken)
        } else {
            (Tail::More, None)
        };
        // In one piece: read in place.
        let pieces: Vec<&Piece> = self.pieces().collect();
        if let Some(p) = pieces
            .iter()
            .find(|p| !p.hollow && p.base <= from && to <= p.end())
        {
            return Fetched {
                bytes: &p.bytes()[(from - p.base) as usize..(to - p.base) as usize],
                tail,
                broken,
            };
        }
        slot.clear();
        let mut at = from;
        for p in pieces {
            if at >= to {
                break;
            }
            if !p.hollow && p.base <= at && at < p.end() {
                let upto = to.min(p.end());
                slot.extend_from_slice(
                    &p.bytes()[(at - p.base) as usize..(upto - p.base) as usize],
                );
                at = upto;
            }
        }
        // Pieces overlap and are consecutive, and the reading thread never asks for bytes
        // before the piece it keeps: `at` reaches `to`. Were it not so, the bytes end here.
        let (tail, broken) = if at < to {
            (
                Tail::Broken,
                Some(Problem::Input {
                    kind: "IoError",
                    detail: format!("decoded bytes {at}..{to} were no longer held"),
                }),
            )
        } else {
            (tail, broken)
        };
        Fetched {
            bytes: &slot[..],
            tail,
            broken,
        }
    }
}

/// A worker's scan of one piece.
fn work<'p, S: Scanner>(
    p: &'p Piece,
    scanner: &S,
    cut: Cut,
    body: u64,
    form: Form,
) -> Work<S::Out<'p>> {
    let region = cut.region as u64;
    let (anchor, next) = (p.index * region, (p.index + 1) * region);
    let last = p.tail != Tail::More;
    if p.hollow {
        // Known to the scanner (or the decoder would have decoded it).
        return match scanner.known(p.base, p.len, false) {
            Some((start, stop, region)) => Work {
                start: Some(p.base + start as u64),
                stop: p.base.saturating_add(stop as u64),
                base: p.base,
                region: Some(region),
            },
            None => Work {
                start: None,
                stop: p.end(),
                base: p.base,
                region: None,
            },
        };
    }
    if !last && next <= body {
        // All before the array: nothing to scan.
        return Work {
            start: None,
            stop: 0,
            base: p.base,
            region: None,
        };
    }
    let bytes = p.bytes();
    let start = if anchor <= body {
        Some(body)
    } else {
        guess(bytes, p.base, anchor, cut.look)
    };
    let stop = if last {
        u64::MAX
    } else {
        guess(bytes, p.base, next, cut.look).unwrap_or(next + cut.look as u64)
    };
    let region = start.map(|s| {
        scanner.scan(Span {
            buf: bytes,
            at: p.base,
            start: (s - p.base) as usize,
            stop: stop.saturating_sub(p.base).min(usize::MAX as u64) as usize,
            tail: p.tail,
            broken: p.broken.as_ref(),
            form,
        })
    });
    Work {
        start,
        stop,
        base: p.base,
        region,
    }
}

/// What a streamed read is asked to do beside its input.
pub(crate) struct StreamJob<'j, S> {
    pub(crate) limits: &'j Limits,
    pub(crate) scanner: &'j S,
    pub(crate) threads: usize,
    pub(crate) cut: Cut,
    pub(crate) gzip: bool,
    /// The decoded bytes the first of split's two reads fetched on its reading thread:
    /// pieces the scanner knows and none of these touches are not decoded (`None`: every
    /// piece is).
    pub(crate) hollow: Option<&'j [(u64, u64)]>,
}

/// What a streamed read gives back beside its head: the reader, once its decoder is done
/// with it (to ask what it learned), and the decoded bytes the reading thread fetched.
pub(crate) struct Streamed<R> {
    pub(crate) head: super::Head,
    pub(crate) reader: Option<R>,
    pub(crate) fetched: Vec<(u64, u64)>,
}

/// Reads a stream's array on the region workers into `folder`.
pub(crate) fn read_pieces<R: Decoded + Send, S: Scanner, F: Folder<S>>(
    reader: R,
    job: &StreamJob<'_, S>,
    folder: &mut F,
    log: &mut ErrorLog,
    meter: Option<Meter>,
) -> Streamed<R> {
    let cut = job.cut;
    let threads = job.threads.max(1);
    let batch = threads * PER_THREAD;
    std::thread::scope(|scope| {
        // The decompressing thread runs ahead by a few pieces, which fills the pauses
        // between batches.
        let (tx, rx) = sync_channel::<Piece>(threads * AHEAD);
        let (free_tx, free_rx): (Sender<Vec<u8>>, _) = channel();
        let (gzip, max_input) = (job.gzip, job.limits.max_input_bytes);
        let scanner = job.scanner;
        // A piece after hollow ones starts at or after the last decoded piece's end only
        // when regions are longer than the overlap (always, but for the tests' tiny ones).
        let hollows = job
            .hollow
            .filter(|_| cut.region >= BACK + cut.look && job.limits.max_input_bytes.is_none());
        let hollow = move |index: u64| {
            let Some(fetched) = hollows else {
                return false;
            };
            let (base, end) = place(index, cut);
            !fetched.iter().any(|&(a, b)| a < end && base < b)
                && scanner.knows(base, (end - base) as usize, false)
        };
        let decoder =
            scope.spawn(move || decode(reader, gzip, cut, max_input, &hollow, tx, free_rx));
        let mut incoming = Incoming {
            rx,
            ahead: VecDeque::new(),
            done: false,
            fetched: Vec::new(),
        };
        let report = |folder: &mut F| {
            if let Some(m) = &meter {
                folder.progress(m.done(), m.total);
            }
        };
        // The array's place, from the first pieces (a long prefix spans several).
        let mut view = View {
            prev: None,
            batch: &[],
            incoming: &mut incoming,
        };
        let found = super::locate(&mut view, job.limits, log, |prefix| folder.prefix(prefix));
        let (body, head, form) = match found {
            Ok(f) => (f.body, f.head, f.form),
            Err(head) => {
                let fetched = std::mem::take(&mut incoming.fetched);
                drop(incoming);
                return Streamed {
                    head: *head,
                    reader: decoder.join().ok(),
                    fetched,
                };
            }
        };
        let pool = worker_pool(threads);
        let mut order = Order {
            scanner: job.scanner,
            folder,
            log,
            form,
            cut,
            expected: body,
            ended: false,
            clean: false,
            broke: false,
            slot: Vec::new(),
        };
        let mut prev: Option<Piece> = None;
        let mut pieces: Vec<Piece> = Vec::with_capacity(batch);
        while !order.ended {
            pieces.clear();
            while pieces.len() < batch
                && let Some(p) = incoming.next()
            {
                let last = p.tail != Tail::More;
                pieces.push(p);
                if last {
                    break;
                }
            }
            if pieces.is_empty() {
                break;
            }
            let count = pieces.len();
            let in_batch = &pieces[..];
            let mut view = View {
                prev: prev.as_ref(),
                batch: in_batch,
                incoming: &mut incoming,
            };
            let order = &mut order;
            let scanner = job.scanner;
            let each = |order: &mut Order<'_, S, F>, view: &mut View<'_>, w| {
                order.settle(w, view);
                report(order.folder);
                !order.ended
            };
            match &pool {
                Some(pool) => pool.in_place_scope(|s| {
                    let (wtx, wrx) = channel::<(usize, Work<S::Out<'_>>)>();
                    for (j, p) in in_batch.iter().enumerate() {
                        let wtx = wtx.clone();
                        s.spawn(move |_| {
                            let _ = wtx.send((j, work(p, scanner, cut, body, form)));
                        });
                    }
                    drop(wtx);
                    in_order(count, &wrx, |w| each(order, &mut view, w));
                }),
                None => {
                    for p in in_batch {
                        if !each(order, &mut view, work(p, scanner, cut, body, form)) {
                            break;
                        }
                    }
                }
            }
            // The batch's last piece stays for the next batch's reads; the others go back
            // to the decompressing thread (a hollow piece has none to give).
            let keep = pieces.pop();
            for p in pieces.drain(..).chain(std::mem::replace(&mut prev, keep)) {
                if !p.hollow {
                    let _ = free_tx.send(p.buf);
                }
            }
        }
        let mut view = View {
            prev: prev.as_ref(),
            batch: &[],
            incoming: &mut incoming,
        };
        // The text after the array, for a folder that wants it, and a damaged end of the
        // stream (a gzip trailer after the array's `]`), which is reported after every event
        // decoded before it.
        order.finish(&mut view, job.limits.max_prefix_bytes, true);
        report(order.folder);
        let fetched = std::mem::take(&mut incoming.fetched);
        drop(incoming);
        Streamed {
            head,
            reader: decoder.join().ok(),
            fetched,
        }
    })
}
