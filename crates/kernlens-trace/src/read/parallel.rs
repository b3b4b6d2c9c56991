//! Reading an uncompressed trace: a file through positioned reads into reused buffers,
//! or bytes in memory, cut into regions scanned in parallel and folded in file order.
//!
//! A file is not memory-mapped: a map faults (SIGBUS) when another process truncates the
//! file while it is read, which killed the process. A positioned read that comes back
//! short says the same thing as an error value, so the read stops there with a stream
//! error and keeps every event before it. PERFORMANCE.md has the measurement.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use super::Feed;
use crate::options::Limits;
use crate::scan::{self, ErrorLog, Problem};

use super::region::{self, Ask, Tail};

/// The bytes of an uncompressed trace.
#[derive(Clone, Copy)]
pub(crate) enum Plain<'a> {
    Mem(&'a [u8]),
    File { file: &'a File, len: u64 },
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
            Plain::File { len, .. } => *len,
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
            Plain::File { file, len } => {
                let want = (to - from) as usize;
                // Grown, never shrunk: the zero fill is paid once per buffer, not per read.
                if slot.len() < want {
                    slot.resize(want, 0);
                }
                let mut got = 0;
                let mut broken = None;
                while got < want {
                    match file.read_at(&mut slot[got..want], from + got as u64) {
                        Ok(0) => {
                            broken = Some(Problem::Input {
                                kind: "IoError",
                                detail: format!(
                                    "the file shrank while being read: it ends before byte {} \
                                     (it had {len} bytes when opened); events after that point \
                                     are not read",
                                    from + got as u64
                                ),
                            });
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
                    bytes: &slot[..got],
                    tail: if broken.is_some() {
                        Tail::Broken
                    } else {
                        at_end
                    },
                    broken,
                }
            }
        }
    }
}

/// How the array is cut: region size, how far a region reads past its end to finish its
/// last element, and how far back a region start guess may look.
#[derive(Clone, Copy)]
pub(crate) struct Cut {
    pub(crate) region: usize,
    pub(crate) look: usize,
}

impl Cut {
    /// 4 MiB regions; events longer than the 256 KiB look-ahead that straddle a region end
    /// are finished by the folding thread.
    pub(crate) const DEFAULT: Cut = Cut {
        region: 4 << 20,
        look: 256 << 10,
    };
}

/// How far a region-start guess looks back for the `}` `,` before its `{`.
const BACK: usize = 64;

/// Everything a read of the array needs, shared by the workers.
pub(crate) struct Job<'p> {
    pub(crate) plain: Plain<'p>,
    pub(crate) limits: &'p Limits,
    pub(crate) ask: Ask,
    pub(crate) cut: Cut,
    /// Where the array's body starts.
    pub(crate) body: u64,
    /// Worker threads (1: this thread alone).
    pub(crate) threads: usize,
}

/// What a worker hands back for one region.
struct Work<'s> {
    /// Where it started (`None`: no start guess in its bytes), and where it stopped or
    /// would have stopped.
    start: Option<u64>,
    stop: u64,
    /// The offset of its bytes in the input.
    base: u64,
    region: Option<region::Region<'s>>,
}

impl Job<'_> {
    /// Region `i`'s anchor: where its start is looked for.
    fn anchor(&self, i: usize) -> u64 {
        self.body + (i as u64) * self.cut.region as u64
    }

    fn anchors(&self) -> usize {
        let span = self.plain.len().saturating_sub(self.body);
        span.div_ceil(self.cut.region as u64).max(1) as usize
    }

    /// The start guess for the anchor at `anchor` in `bytes` (which begin at `base`): the
    /// same answer from any buffer holding `anchor - BACK .. anchor + look`.
    fn guess(&self, bytes: &[u8], base: u64, anchor: u64) -> Option<u64> {
        let lo = anchor.saturating_sub(BACK as u64).max(base);
        let window_end = (anchor + self.cut.look as u64).min(base + bytes.len() as u64);
        if window_end <= anchor {
            return None;
        }
        let slice = &bytes[(lo - base) as usize..(window_end - base) as usize];
        scan::boundary_after(slice, (anchor - lo) as usize).map(|b| lo + b as u64)
    }

    /// Scans region `i` into `slot` (a worker's job).
    fn work<'s>(&'s self, slot: &'s mut Vec<u8>, i: usize, last: bool) -> Work<'s> {
        let anchor = self.anchor(i);
        let base = if i == 0 {
            self.body
        } else {
            anchor.saturating_sub(BACK as u64).max(self.body)
        };
        let next_anchor = self.anchor(i + 1);
        let end = if last {
            u64::MAX
        } else {
            next_anchor + self.cut.look as u64
        };
        let f = self.plain.fetch(slot, base, end);
        let start = if i == 0 {
            Some(self.body)
        } else {
            self.guess(f.bytes, base, anchor)
        };
        let stop = if last {
            u64::MAX
        } else {
            self.guess(f.bytes, base, next_anchor)
                .unwrap_or(next_anchor + self.cut.look as u64)
        };
        let region = start.map(|s| {
            region::scan(
                f.bytes,
                (s - base) as usize,
                stop.saturating_sub(base).min(usize::MAX as u64) as usize,
                f.tail,
                f.broken.as_ref(),
                self.limits,
                self.ask,
            )
        });
        Work {
            start,
            stop,
            base,
            region,
        }
    }

    /// Reads on this thread from `from` until the next element would start at or after
    /// `stop`, in pieces of one region (doubled while one element does not fit).
    /// Returns where it stopped and whether the array ended.
    fn run_from(
        &self,
        slot: &mut Vec<u8>,
        mut from: u64,
        stop: u64,
        feed: &mut Feed<'_>,
        log: &mut ErrorLog,
    ) -> (u64, bool) {
        let mut span = (self.cut.region + self.cut.look) as u64;
        if let Plain::Mem(_) = self.plain {
            // Nothing to copy: one piece.
            span = u64::MAX / 2;
        }
        loop {
            if from >= stop {
                return (from, false);
            }
            let f = self.plain.fetch(slot, from, from.saturating_add(span));
            let piece_stop = stop.min(from.saturating_add(self.cut.region as u64)) - from;
            let r = region::scan(
                f.bytes,
                0,
                piece_stop.min(usize::MAX as u64) as usize,
                f.tail,
                f.broken.as_ref(),
                self.limits,
                self.ask,
            );
            let (next, ended) = (from + r.next as u64, r.ended);
            region::apply(r, feed, log);
            if ended {
                return (next, true);
            }
            if next == from {
                // One element is longer than the piece: read a longer one (bounded, since
                // an element past `max_event_bytes` ends the array).
                span = span.saturating_mul(2);
            }
            from = next;
        }
    }
}

/// Reads the array the job describes into `feed`.
pub(crate) fn read_array(job: Job<'_>, feed: &mut Feed<'_>, log: &mut ErrorLog) {
    let (plain, body, threads) = (job.plain, job.body, job.threads);
    let len = plain.len();
    let mut main_slot = Vec::new();
    let anchors = job.anchors();
    let pool = if threads > 1 && anchors > 2 {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .ok()
    } else {
        None
    };
    let Some(pool) = pool else {
        // Small input or one thread: the same regions, in order, on this thread.
        job.run_from(&mut main_slot, body, u64::MAX, feed, log);
        feed.progress(len, Some(len));
        return;
    };
    // Regions are read and scanned on the pool in batches while this thread folds the
    // finished ones in file order; a batch's buffers are reused by the next batch, which
    // bounds memory to `batch` regions.
    let batch = threads * 4;
    let mut slots: Vec<Vec<u8>> = (0..batch).map(|_| Vec::new()).collect();
    let mut expected = body;
    let mut ended = false;
    let mut first = 0;
    while first < anchors && !ended {
        let count = batch.min(anchors - first);
        let job = &job;
        let main_slot = &mut main_slot;
        let slots = &mut slots[..count];
        let expected_ref = &mut expected;
        let ended_ref = &mut ended;
        let feed = &mut *feed;
        let log = &mut *log;
        pool.in_place_scope(move |scope| {
            let (tx, rx) = std::sync::mpsc::channel::<(usize, Work<'_>)>();
            for (j, slot) in slots.iter_mut().enumerate() {
                let tx = tx.clone();
                let i = first + j;
                let last = i + 1 == anchors;
                scope.spawn(move |_| {
                    let _ = tx.send((j, job.work(slot, i, last)));
                });
            }
            drop(tx);
            let mut done: Vec<Option<Work<'_>>> = (0..count).map(|_| None).collect();
            for j in 0..count {
                let work = loop {
                    if let Some(w) = done[j].take() {
                        break w;
                    }
                    match rx.recv() {
                        Ok((k, w)) => done[k] = Some(w),
                        // Every sender is gone without region j: cannot happen, but never hang.
                        Err(_) => {
                            *ended_ref = true;
                            return;
                        }
                    }
                };
                let stop = work.stop;
                if let (Some(start), Some(r)) = (work.start, work.region)
                    && start == *expected_ref
                {
                    let (next, end) = (work.base + r.next as u64, r.ended);
                    region::apply(r, feed, log);
                    *expected_ref = next;
                    *ended_ref = end;
                }
                if !*ended_ref && *expected_ref < stop {
                    // A wrong start guess (inside a string) or an element past the region's
                    // bytes: this thread reads on from the true position.
                    let (next, end) = job.run_from(main_slot, *expected_ref, stop, feed, log);
                    *expected_ref = next;
                    *ended_ref = end;
                }
                feed.progress((*expected_ref).min(len), Some(len));
                if *ended_ref {
                    // Later regions lie past the array; their results are dropped unread.
                    return;
                }
            }
        });
        first += count;
    }
}
