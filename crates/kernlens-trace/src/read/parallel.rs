//! Reading an uncompressed trace: a file through positioned reads into reused buffers,
//! or bytes in memory, cut into regions scanned in parallel and folded in file order.
//!
//! The region workers of a file read its pages through a guarded map where they can
//! (map.rs: no copy out of the page cache), and the reading thread's own reads use
//! positioned reads into its buffer. A file that shrinks while it is read stops the read
//! there with a stream error, whichever way its bytes came: a positioned read comes back
//! short; a worker takes mapped bytes cut at the file's length, and the reading thread asks
//! the map (its recorded faults, the file's length) before and after folding each region,
//! reading a region that is no longer wholly the file's again with positioned reads. Every
//! event before the cut is kept. PERFORMANCE.md has the measurements.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::scan::{self, ErrorLog, Form, Problem};

use super::map::Map;
use super::region::{Folder, Scanned, Scanner, Span, Tail};
use super::slots::{Gate, Slots};

/// The bytes of an uncompressed trace.
#[derive(Clone, Copy)]
pub(crate) enum Plain<'a> {
    Mem(&'a [u8]),
    File {
        file: &'a File,
        len: u64,
    },
    /// A file whose workers read its pages through `map` (map.rs).
    Mapped {
        map: &'a Map,
        file: &'a File,
        len: u64,
    },
}

/// Some bytes of the input, and how they end.
pub(crate) struct Fetched<'s> {
    pub(crate) bytes: &'s [u8],
    pub(crate) tail: Tail,
    /// Why the bytes end early (`Tail::Broken`).
    pub(crate) broken: Option<Problem>,
}

impl<'a> Plain<'a> {
    pub(crate) fn len(&self) -> u64 {
        match self {
            Plain::Mem(b) => b.len() as u64,
            Plain::File { len, .. } | Plain::Mapped { len, .. } => *len,
        }
    }

    /// The bytes `from..to` (clamped to the length), copied into `slot` for a file.
    pub(crate) fn fetch<'s>(&'s self, slot: &'s mut Vec<u8>, from: u64, to: u64) -> Fetched<'s>
    where
        'a: 's,
    {
        let len = self.len();
        let (from, to) = (from.min(len), to.min(len));
        let at_end = if to == len { Tail::Eof } else { Tail::More };
        match *self {
            Plain::Mem(b) => Fetched {
                bytes: &b[from as usize..to as usize],
                tail: at_end,
                broken: None,
            },
            Plain::File { file, len } | Plain::Mapped { file, len, .. } => {
                read_file(file, len, slot, from, to, at_end)
            }
        }
    }

    /// The bytes `from..to` for a region worker: straight from the map where the file is
    /// mapped (cut at the file's length now, as a short positioned read would be), copied
    /// into `slot` otherwise.
    fn view<'s>(&'s self, slot: &'s mut Vec<u8>, from: u64, to: u64) -> Fetched<'s>
    where
        'a: 's,
    {
        let Plain::Mapped { map, file, len } = *self else {
            return self.fetch(slot, from, to);
        };
        let (from, to) = (from.min(len), to.min(len));
        match map.sound_below(file, to) {
            None => Fetched {
                bytes: &map.bytes()[from as usize..to as usize],
                tail: if to == len { Tail::Eof } else { Tail::More },
                broken: None,
            },
            Some(cut) => shrunk(map, len, from, cut),
        }
    }
}

/// The mapped bytes from `from` to `cut`, where the file stopped being readable: broken
/// there as a short positioned read is.
fn shrunk(map: &Map, len: u64, from: u64, cut: u64) -> Fetched<'_> {
    let cut = cut.max(from);
    Fetched {
        bytes: &map.bytes()[from as usize..cut as usize],
        tail: Tail::Broken,
        broken: Some(shrank(cut, len)),
    }
}

/// The problem of a file that ends before byte `at` (it had `len` when opened).
fn shrank(at: u64, len: u64) -> Problem {
    Problem::Input {
        kind: "IoError",
        detail: format!(
            "the file shrank while being read: it ends before byte {at} (it had {len} bytes \
             when opened); events after that point are not read"
        ),
    }
}

/// The problem of a file that shrank while the events of bytes from `base` were folded
/// from its map: those events' texts may have been read as zeros.
fn shrank_while_folded(at: u64, len: u64, base: u64) -> Problem {
    Problem::Input {
        kind: "IoError",
        detail: format!(
            "the file shrank while being read: it ends before byte {at} (it had {len} bytes \
             when opened); the events from byte {base} on were being counted when it did and \
             may be misread, and events after them are not read"
        ),
    }
}

/// `file`'s bytes `from..to` copied into `slot` by positioned reads, broken where the file
/// ends early or a read fails.
fn read_file<'s>(
    file: &File,
    len: u64,
    slot: &'s mut Vec<u8>,
    from: u64,
    to: u64,
    at_end: Tail,
) -> Fetched<'s> {
    let want = (to - from) as usize;
    // Grown, never shrunk. A buffer too short is replaced, not resized: its bytes are
    // about to be overwritten, and a fresh zeroed allocation (`calloc`) gets pages the
    // kernel already zeroed, where `resize` would write zeros over the whole buffer first
    // (6% of a plain read's instructions, PERFORMANCE.md).
    if slot.len() < want + PAGE {
        *slot = vec![0; want + PAGE];
    }
    let at = page_phase(slot.as_ptr() as u64, from);
    let dest = &mut slot[at..at + want];
    let mut got = 0;
    let mut broken = None;
    while got < want {
        match file.read_at(&mut dest[got..], from + got as u64) {
            Ok(0) => {
                broken = Some(shrank(from + got as u64, len));
                break;
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                broken = Some(Problem::Input {
                    kind: "IoError",
                    detail: format!("reading byte {}: {e}", from + got as u64),
                });
                break;
            }
        }
    }
    Fetched {
        bytes: &slot[at..at + got],
        tail: if broken.is_some() {
            Tail::Broken
        } else {
            at_end
        },
        broken,
    }
}

/// The page size the copies are aligned to.
const PAGE: usize = 4096;

/// Where in a buffer at address `addr` to read the input's bytes from offset `from`: the
/// first place whose address has the offset's place in its page. The kernel copies a
/// read out of page-aligned page-cache pages, and on this x86-64 host that copy ran at
/// half speed or worse when the destination was not aligned like the source (a buffer
/// from `calloc` starts 16 bytes into its page; `_copy_to_iter` was the read's largest
/// kernel cost, PERFORMANCE.md).
fn page_phase(addr: u64, from: u64) -> usize {
    (from.wrapping_sub(addr) % PAGE as u64) as usize
}

/// How the array is cut: region size, how far a region reads past its end to finish its
/// last element, and how far back a region start guess may look.
#[derive(Clone, Copy)]
pub(crate) struct Cut {
    pub(crate) region: usize,
    pub(crate) look: usize,
}

impl Cut {
    /// 2 MiB regions; events longer than the 64 KiB look-ahead that straddle a region end
    /// are finished by the folding thread. With [`PER_THREAD`] this keeps the buffers in
    /// flight (about 16 MiB on two threads) inside the last-level cache, where the kernel's
    /// copy into them and the workers' reads of them are cheapest: 4 MiB regions read
    /// 256 KiB ahead (34 MiB in flight) cost more CPU per plain read and 30 MB more peak
    /// RSS (PERFORMANCE.md); regions of 1 MiB and less cost more user time per byte than
    /// they save in the copy.
    pub(crate) const DEFAULT: Cut = Cut {
        region: 2 << 20,
        look: 64 << 10,
    };
}

/// Region buffers per worker thread in a plain read's window (slots.rs): a worker waits
/// when the fold is this many regions per thread behind. Four per thread (with the
/// batches the window replaced) kept `triage`, whose fold is heavier, at 1.18x a summary
/// against 1.25x with two, on an idle host (PERFORMANCE.md, session 8).
const PER_THREAD: usize = 4;

/// How far a region-start guess looks back for the `}` `,` before its `{`.
pub(crate) const BACK: usize = 64;

/// The start guess for the anchor at `anchor` in `bytes` (which begin at `base`): the
/// same answer from any buffer holding `anchor - BACK .. anchor + look`.
pub(crate) fn guess(bytes: &[u8], base: u64, anchor: u64, look: usize) -> Option<u64> {
    let lo = anchor.saturating_sub(BACK as u64).max(base);
    let window_end = (anchor + look as u64).min(base + bytes.len() as u64);
    if window_end <= anchor {
        return None;
    }
    let slice = &bytes[(lo - base) as usize..(window_end - base) as usize];
    scan::boundary_after(slice, (anchor - lo) as usize).map(|b| lo + b as u64)
}

/// Bytes of the input by offset, for the reading thread's sequential reads.
pub(crate) trait Fetch {
    /// The bytes `from..to` (clamped to the input), copied into `slot` where they are not
    /// already in memory.
    fn fetch<'s>(&'s mut self, slot: &'s mut Vec<u8>, from: u64, to: u64) -> Fetched<'s>;
    /// The whole input is in memory: read it in one piece.
    fn in_memory(&self) -> bool {
        false
    }
}

impl Fetch for Plain<'_> {
    fn fetch<'s>(&'s mut self, slot: &'s mut Vec<u8>, from: u64, to: u64) -> Fetched<'s> {
        Plain::fetch(self, slot, from, to)
    }

    fn in_memory(&self) -> bool {
        matches!(self, Plain::Mem(_))
    }
}

/// What a worker hands back for one region.
pub(crate) struct Work<T> {
    /// Where it started (`None`: no start in its bytes), and where it stopped or would
    /// have stopped.
    pub(crate) start: Option<u64>,
    pub(crate) stop: u64,
    /// The offset of its bytes in the input.
    pub(crate) base: u64,
    pub(crate) region: Option<Scanned<T>>,
}

/// What the reading thread passes from region to region: what a region is applied with,
/// and how far the array has been read.
pub(crate) struct Order<'r, S, F> {
    pub(crate) scanner: &'r S,
    pub(crate) folder: &'r mut F,
    pub(crate) log: &'r mut ErrorLog,
    pub(crate) form: Form,
    pub(crate) cut: Cut,
    /// Where the next element starts.
    pub(crate) expected: u64,
    /// The array ended (`clean`: on its `]`).
    pub(crate) ended: bool,
    pub(crate) clean: bool,
    /// Why broken bytes ended was recorded.
    pub(crate) broke: bool,
    /// The reading thread's buffer for its own reads.
    pub(crate) slot: Vec<u8>,
}

impl<S: Scanner, F: Folder<S>> Order<'_, S, F> {
    fn applied<T>(&mut self, base: u64, r: &Scanned<T>) {
        self.expected = base + r.next as u64;
        self.ended = r.ended;
        self.clean = r.clean;
        self.broke |= r.broke;
    }

    /// Folds a region a worker scanned when it started where the array is, then reads on
    /// from the true position to the region's stop on this thread when it did not (a
    /// wrong start guess inside a string, or an element past the region's bytes).
    pub(crate) fn settle<X: Fetch>(&mut self, work: Work<S::Out<'_>>, fetch: &mut X) {
        let stop = work.stop;
        if let (Some(start), Some(r)) = (work.start, work.region)
            && start == self.expected
        {
            self.applied(work.base, &r);
            self.folder.apply(r.out, self.log);
        }
        if !self.ended && self.expected < stop {
            self.run_from(fetch, stop);
        }
    }

    /// Reads on this thread from `expected` until the next element would start at or after
    /// `stop`, in pieces of one region (doubled while one element does not fit).
    pub(crate) fn run_from<X: Fetch>(&mut self, fetch: &mut X, stop: u64) {
        let mut span = (self.cut.region + self.cut.look) as u64;
        if fetch.in_memory() {
            // Nothing to copy: one piece.
            span = u64::MAX / 2;
        }
        let mut slot = std::mem::take(&mut self.slot);
        while !self.ended && self.expected < stop {
            let from = self.expected;
            let f = fetch.fetch(&mut slot, from, from.saturating_add(span));
            let piece_stop = stop.min(from.saturating_add(self.cut.region as u64)) - from;
            let r = self.scanner.scan(Span {
                buf: f.bytes,
                at: from,
                start: 0,
                stop: piece_stop.min(usize::MAX as u64) as usize,
                tail: f.tail,
                broken: f.broken.as_ref(),
                form: self.form,
            });
            self.applied(from, &r);
            self.folder.apply(r.out, self.log);
            if !self.ended && self.expected == from {
                // One element is longer than the piece: read a longer one (bounded, since
                // an element past `max_event_bytes` ends the array).
                span = span.saturating_mul(2);
            }
        }
        self.slot = slot;
    }

    /// After the array: the text after it to a folder that wants it (when the array
    /// ended cleanly), and for a stream (`stream`), the reason it ended early when no scan
    /// reached that end (a damaged gzip trailer after the `]`), recorded after every event
    /// before it. A plain file that shrinks after its array was read is reported by the
    /// size check after the read instead.
    pub(crate) fn finish<X: Fetch>(&mut self, fetch: &mut X, max: usize, stream: bool) {
        if !(stream || self.clean && self.folder.wants_suffix()) {
            return;
        }
        let mut slot = std::mem::take(&mut self.slot);
        let from = self.expected;
        let f = fetch.fetch(&mut slot, from, from.saturating_add(max as u64));
        if self.clean && self.folder.wants_suffix() {
            self.folder.suffix(f.bytes);
        }
        if let (true, false, Some(p)) = (stream, self.broke, &f.broken) {
            self.log.push(p, 0);
            self.broke = true;
        }
        self.slot = slot;
    }
}

/// Everything a read of a plain input's array needs, shared by the workers.
pub(crate) struct Job<'p, S> {
    pub(crate) plain: Plain<'p>,
    pub(crate) scanner: &'p S,
    pub(crate) form: Form,
    pub(crate) cut: Cut,
    /// Where the array's body starts.
    pub(crate) body: u64,
    /// Worker threads (1: this thread alone).
    pub(crate) threads: usize,
    /// Bytes of text after the array a folder may ask for.
    pub(crate) max_suffix: usize,
    /// The workers may read a file through a map ([`super::ReadPlan::map`]).
    pub(crate) map: bool,
}

impl<S: Scanner> Job<'_, S> {
    /// Region `i`'s anchor: where its start is looked for.
    fn anchor(&self, i: usize) -> u64 {
        self.body + (i as u64) * self.cut.region as u64
    }

    fn anchors(&self) -> usize {
        let span = self.plain.len().saturating_sub(self.body);
        span.div_ceil(self.cut.region as u64).max(1) as usize
    }

    /// Region `i`'s bytes: from a little before its anchor (where a start guess may look)
    /// to a little past the next anchor (to finish its last element), or to the end.
    fn bytes_of(&self, i: usize, last: bool) -> (u64, u64) {
        let base = if i == 0 {
            self.body
        } else {
            self.anchor(i).saturating_sub(BACK as u64).max(self.body)
        };
        let end = if last {
            u64::MAX
        } else {
            self.anchor(i + 1) + self.cut.look as u64
        };
        (base, end)
    }

    /// Scans region `i` into `slot` (a worker's job).
    fn work<'s>(&'s self, slot: &'s mut Vec<u8>, i: usize, last: bool) -> Work<S::Out<'s>> {
        let (base, end) = self.bytes_of(i, last);
        let len = self.plain.len();
        let (from, to) = (base.min(len), end.min(len));
        if let Some((start, stop, region)) =
            self.scanner.known(base, (to - from) as usize, to == len)
        {
            return Work {
                start: Some(base + start as u64),
                stop: base.saturating_add(stop as u64),
                base,
                region: Some(region),
            };
        }
        // Mapped bytes that turn to zeros while they are scanned (the file shrank) are
        // caught by the reading thread's check before it folds the region.
        let f = self.plain.view(slot, base, end);
        let look = self.cut.look;
        let start = if i == 0 {
            Some(self.body)
        } else {
            guess(f.bytes, base, self.anchor(i), look)
        };
        let next_anchor = self.anchor(i + 1);
        let stop = if last {
            u64::MAX
        } else {
            guess(f.bytes, base, next_anchor, look).unwrap_or(next_anchor + look as u64)
        };
        let region = start.map(|s| {
            self.scanner.scan(Span {
                buf: f.bytes,
                at: base,
                start: (s - base) as usize,
                stop: stop.saturating_sub(base).min(usize::MAX as u64) as usize,
                tail: f.tail,
                broken: f.broken.as_ref(),
                form: self.form,
            })
        });
        Work {
            start,
            stop,
            base,
            region,
        }
    }
}

/// Reads the array the job describes into `folder`.
pub(crate) fn read_array<S: Scanner, F: Folder<S>>(
    job: Job<'_, S>,
    folder: &mut F,
    log: &mut ErrorLog,
) {
    let (mut plain, body, threads) = (job.plain, job.body, job.threads);
    let len = plain.len();
    let anchors = job.anchors();
    let mut order = Order {
        scanner: job.scanner,
        folder,
        log,
        form: job.form,
        cut: job.cut,
        expected: body,
        ended: false,
        clean: false,
        broke: false,
        slot: Vec::new(),
    };
    if anchors <= 2 || threads < 2 {
        // Small input or one thread: the same regions, in order, on this thread.
        order.run_from(&mut plain, u64::MAX);
        order.folder.progress(len, Some(len));
        order.finish(&mut plain, job.max_suffix, false);
        return;
    }
    // The workers read a file through a map where the plan allows it and the guard can be
    // had (map.rs); the reading thread's own reads still copy.
    let map = match plain {
        Plain::File { file, len } if job.map => Map::new(file, len),
        _ => None,
    };
    if let (Some(map), Plain::File { file, len }) = (&map, plain) {
        plain = Plain::Mapped { map, file, len };
    }
    let job = Job { plain, ..job };
    // Workers read and scan regions into a sliding window of buffers while this thread
    // folds the finished ones in file order (slots.rs says why a window and not batches).
    let slots = Slots::new(threads * PER_THREAD);
    let gate = Gate::new();
    let next = AtomicUsize::new(0);
    let (job, slots, gate, next) = (&job, &slots, &gate, &next);
    let spawned = std::thread::scope(|scope| {
        // A panic while folding must not leave the workers waiting for the fold (the scope
        // joins them before passing the panic on).
        let _guard = gate.stop_on_panic();
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Work<S::Out<'_>>)>();
        let mut spawned = 0;
        for _ in 0..threads {
            let tx = tx.clone();
            let worker = move || {
                let _guard = gate.stop_on_panic();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= anchors || !gate.wait_turn(i, slots.len()) {
                        return;
                    }
                    // SAFETY: `wait_turn` said region `i - len`, this buffer's last user,
                    // is folded; this thread alone took `i`; the reading thread drops each
                    // region's result before `folded_one` counts it (below).
                    let slot = unsafe { &mut *slots.lend(i) };
                    if tx.send((i, job.work(slot, i, i + 1 == anchors))).is_err() {
                        return;
                    }
                }
            };
            // A thread the system refuses leaves the others to do its share.
            if std::thread::Builder::new()
                .spawn_scoped(scope, worker)
                .is_ok()
            {
                spawned += 1;
            }
        }
        drop(tx);
        if spawned > 0 {
            let mut i = 0;
            in_order(anchors, &rx, |mut work| {
                let (base, end) = job.bytes_of(i, i + 1 == anchors);
                i += 1;
                let mapped = match plain {
                    Plain::Mapped { map, file, .. } => Some((map, file)),
                    _ => None,
                };
                // A region whose mapped bytes are no longer all the file's is read again
                // on this thread with positioned reads, which see where the file ends now.
                let end = end.min(len);
                if let Some((map, file)) = mapped
                    && map.sound_below(file, end).is_some()
                {
                    work.region = None;
                }
                // The worker's result from the map is folded (not read again here).
                let folds_map =
                    mapped.is_some() && work.region.is_some() && work.start == Some(order.expected);
                order.settle(work, &mut plain);
                // Folding read the region's bytes (names, texts) from the map: a shrink
                // meanwhile may have turned some to zeros, so nothing after it is read
                // (unless the fold already ended the read on the shrink).
                if let Some((map, file)) = mapped.filter(|_| folds_map && !order.broke)
                    && let Some(cut) = map.sound_below(file, end)
                {
                    order.log.push(&shrank_while_folded(cut, len, base), 0);
                    order.ended = true;
                    order.broke = true;
                }
                gate.folded_one();
                if let Some((map, _)) = mapped {
                    map.release_below(base);
                }
                order.folder.progress(order.expected.min(len), Some(len));
                !order.ended
            });
        }
        // The array ended (or every worker is gone): no worker takes another region, and
        // results still queued are dropped with `rx`.
        gate.stop();
        spawned
    });
    if spawned == 0 {
        order.run_from(&mut plain, u64::MAX);
        order.folder.progress(len, Some(len));
    }
    order.finish(&mut plain, job.max_suffix, false);
}

/// Hands `count` works received from `rx` (each numbered by its place) to `each` in
/// order, until it says stop. Later works are dropped unread.
pub(crate) fn in_order<W>(
    count: usize,
    rx: &std::sync::mpsc::Receiver<(usize, W)>,
    mut each: impl FnMut(W) -> bool,
) {
    let mut done: Vec<Option<W>> = (0..count).map(|_| None).collect();
    for j in 0..count {
        let work = loop {
            if let Some(w) = done[j].take() {
                break w;
            }
            match rx.recv() {
                Ok((k, w)) => done[k] = Some(w),
                // Every sender is gone without work j: cannot happen, but never hang.
                Err(_) => return,
            }
        };
        if !each(work) {
            return;
        }
    }
}

/// The region workers' pool, for more than one thread; `None` (read on the calling thread) when
/// one is asked for or the pool cannot be built.
pub(super) fn worker_pool(threads: usize) -> Option<rayon::ThreadPool> {
    if threads < 2 {
        return None;
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file's bytes land in the region buffer at an address with the file offset's place
    /// in its page (the kernel's copy out of the page cache runs at full speed only then),
    /// and they are the file's bytes, for offsets at every phase and a reused buffer.
    #[test]
    fn file_bytes_land_aligned_like_their_offset() -> io::Result<()> {
        let text: Vec<u8> = (0..40_000u32).map(|i| (i % 251) as u8).collect();
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("t.json");
        std::fs::write(&path, &text)?;
        let file = File::open(&path)?;
        let plain = Plain::File {
            file: &file,
            len: text.len() as u64,
        };
        let mut slot = Vec::new();
        for from in [0u64, 1, 6, 16, 63, 64, 710, 4095, 4096, 4097, 12_345] {
            for to in [from + 1, from + 3000, from + 20_000, u64::MAX] {
                let f = plain.fetch(&mut slot, from, to);
                let end = to.min(text.len() as u64) as usize;
                assert_eq!(f.bytes, &text[from as usize..end], "{from}..{to}");
                assert_eq!(
                    f.bytes.as_ptr() as u64 % PAGE as u64,
                    from % PAGE as u64,
                    "{from}..{to}"
                );
                assert!(f.broken.is_none());
            }
        }
        Ok(())
    }
}
