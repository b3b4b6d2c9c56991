//! Driving one read of a source: memory-mapped (parallel) or streamed (gzip, stdin).
//!
//! Both paths feed the same sequential fold in file order, so results do not depend
//! on the path taken or on the thread count.

use std::fs::File;
use std::io::{self, Read};
use std::sync::mpsc::{Receiver, sync_channel};

use flate2::read::MultiGzDecoder;

use crate::collect::{Collector, Digest, Lazy, NO_NAME, Resolve, names_interned};
use crate::error::TraceError;
use crate::event::{Event, Wanted};
use crate::intern::Interner;
use crate::options::Limits;
use crate::provenance;
use crate::report::ChunkProvenance;
use crate::scan::{self, ErrorLog, Located, Problem, Step};
use crate::source::{Input, TraceSource};

/// What one read produced, before aggregation.
pub(crate) struct ReadOutput {
    pub(crate) stream_errors: Vec<String>,
    /// The `traceEvents` array was found (the input may still hold no events).
    pub(crate) array_found: bool,
    /// The well-formed `kernlens` member that precedes `traceEvents` (provenance.rs).
    pub(crate) provenance: Option<ChunkProvenance>,
}

/// What a read learned before the first event: whether the array was found, and the
/// chunk provenance in the prefix. The default is "no array".
#[derive(Default)]
pub(crate) struct Head {
    pub(crate) array_found: bool,
    pub(crate) provenance: Option<ChunkProvenance>,
}

pub(crate) const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Receives what a streamed read finds, in file order.
pub(crate) trait StreamSink {
    /// Which events the parser must hand over.
    fn wanted(&self) -> Wanted;
    /// Events read so far (problem messages count them).
    fn count(&self) -> u64;
    /// One complete event; `raw` is its exact text.
    fn event(&mut self, ev: Option<Event<'_>>, raw: &[u8]);
    /// The bytes before the `"traceEvents"` key.
    fn prefix(&mut self, _prefix: &[u8]) {}
    /// Whether [`StreamSink::suffix`] is wanted (it means reading to the end).
    fn wants_suffix(&self) -> bool {
        false
    }
    /// Everything after the array's closing `]`, when the array ended cleanly.
    fn suffix(&mut self, _rest: &[u8]) {}
    /// Read progress in stored bytes (see [`crate::ProgressSink`]).
    fn progress(&mut self, _done: u64, _total: Option<u64>) {}
}

impl StreamSink for Collector<'_> {
    fn wanted(&self) -> Wanted {
        Collector::wanted(self)
    }

    fn count(&self) -> u64 {
        self.out.event_total
    }

    fn event(&mut self, ev: Option<Event<'_>>, _raw: &[u8]) {
        deliver(self, ev);
    }

    fn progress(&mut self, done: u64, total: Option<u64>) {
        Collector::progress(self, done, total);
    }
}

/// Counts the bytes a reader hands out, for progress on a compressed file.
pub(crate) struct Counted<R> {
    inner: R,
    count: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// Where progress of a stream is measured: the stored bytes consumed, out of `total`.
#[derive(Clone)]
pub(crate) struct Meter {
    count: std::sync::Arc<std::sync::atomic::AtomicU64>,
    total: Option<u64>,
}

impl Meter {
    pub(crate) fn wrap<R: Read>(inner: R, total: Option<u64>) -> (Counted<R>, Meter) {
        let count = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        (
            Counted {
                inner,
                count: count.clone(),
            },
            Meter { count, total },
        )
    }

    fn done(&self) -> u64 {
        self.count.load(std::sync::atomic::Ordering::Relaxed)
    }
}
/// Size of one read from a stream.
const CHUNK: usize = 1 << 20;
/// Size of one parallel region of a mapped file.
const REGION: usize = 4 << 20;

/// Reads the whole source once, folding every event into `collector`.
pub(crate) fn read(
    source: &TraceSource,
    limits: &Limits,
    threads: Option<usize>,
    collector: &mut Collector<'_>,
) -> Result<ReadOutput, TraceError> {
    let mut log = ErrorLog::default();
    let head = match &source.input {
        Input::File(path) => {
            let io_err = |action, source| TraceError::Io {
                action,
                path: path.clone(),
                source,
            };
            let mut file = File::open(path).map_err(|e| io_err("open trace", e))?;
            let mut magic = [0u8; 2];
            let got = read_up_to(&mut file, &mut magic).map_err(|e| io_err("read trace", e))?;
            if got == 2 && magic == GZIP_MAGIC {
                let file = File::open(path).map_err(|e| io_err("open trace", e))?;
                let total = file.metadata().ok().map(|m| m.len());
                read_gzip(file, total, limits, collector, &mut log)
            } else {
                let len = file.metadata().map_err(|e| io_err("read trace", e))?.len();
                if len == 0 {
                    read_bytes(&[], limits, threads, REGION, None, collector, &mut log)
                } else {
                    // SAFETY: the map is read-only and private to this call. A file
                    // truncated by another process while mapped can fault; that is the
                    // documented cost of zero-copy reading, as for any mmap reader.
                    let map = unsafe { memmap2::MmapOptions::new().map(&file) }
                        .map_err(|e| io_err("map trace", e))?;
                    // Each worker pre-faults its own region in one call (faulting 4 KiB
                    // at a time during the scan is several times slower, and one
                    // whole-file populate would run on a single thread before any parsing).
                    // Kernels without MADV_POPULATE_READ refuse it; the scan then faults.
                    let prefault = |offset: usize, len: usize| {
                        let _ = map.advise_range(memmap2::Advice::PopulateRead, offset, len);
                    };
                    read_bytes(
                        &map,
                        limits,
                        threads,
                        REGION,
                        Some(&prefault),
                        collector,
                        &mut log,
                    )
                }
            }
        }
        Input::Bytes(bytes) => {
            if bytes.starts_with(&GZIP_MAGIC) {
                read_gzip(
                    &bytes[..],
                    Some(bytes.len() as u64),
                    limits,
                    collector,
                    &mut log,
                )
            } else {
                read_bytes(bytes, limits, threads, REGION, None, collector, &mut log)
            }
        }
        Input::Reader(_) => {
            let Some(mut reader) = source.take_reader()? else {
                return Err(TraceError::SourceConsumed {
                    label: source.file().to_string(),
                });
            };
            let mut magic = [0u8; 2];
            let got = match read_up_to(&mut reader, &mut magic) {
                Ok(n) => n,
                Err(e) => {
                    log.push(&input_problem(&e, false), 0);
                    0
                }
            };
            let head = io::Cursor::new(magic[..got].to_vec());
            let chained = head.chain(reader);
            if got == 2 && magic == GZIP_MAGIC {
                read_gzip(chained, None, limits, collector, &mut log)
            } else {
                let (counted, meter) = Meter::wrap(chained, None);
                read_stream(counted, false, limits, collector, &mut log, Some(meter))
            }
        }
    };
    Ok(ReadOutput {
        stream_errors: log.finish(),
        array_found: head.array_found,
        provenance: head.provenance,
    })
}

/// Streams a gzip input, measuring progress in compressed bytes out of `total`.
fn read_gzip<R: Read + Send>(
    compressed: R,
    total: Option<u64>,
    limits: &Limits,
    collector: &mut Collector<'_>,
    log: &mut ErrorLog,
) -> Head {
    let (counted, meter) = Meter::wrap(compressed, total);
    read_stream(
        MultiGzDecoder::new(counted),
        true,
        limits,
        collector,
        log,
        Some(meter),
    )
}

/// Fills `buf` as far as the reader allows; returns how many bytes were read.
fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The input-size limit was reached (carried inside an `io::Error`).
#[derive(Debug)]
struct InputLimit(u64);

impl std::fmt::Display for InputLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "trace text exceeds {} bytes (Limits::max_input_bytes)",
            self.0
        )
    }
}

impl std::error::Error for InputLimit {}

fn input_problem(e: &io::Error, gzip: bool) -> Problem {
    if let Some(limit) = e.get_ref().and_then(|x| x.downcast_ref::<InputLimit>()) {
        return Problem::Input {
            kind: "LimitExceeded",
            detail: limit.to_string(),
        };
    }
    let kind = match e.kind() {
        io::ErrorKind::UnexpectedEof if gzip => "EOFError",
        io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData if gzip => "BadGzipFile",
        _ => "IoError",
    };
    let detail = match kind {
        "EOFError" => {
            "compressed file ended before the end-of-stream marker was reached".to_string()
        }
        _ => e.to_string(),
    };
    Problem::Input { kind, detail }
}

/// The array was found after `prefix`: the head of the read, with the prefix's `kernlens`
/// member when it is a well-formed provenance; a malformed one is reported and ignored.
fn found_array(prefix: &[u8], log: &mut ErrorLog) -> Head {
    let member =
        scan::prefix_member(prefix, "kernlens").and_then(|raw| match provenance::parse(raw) {
            Ok(p) => Some(p),
            Err(why) => {
                log.push(&Problem::Provenance(why), 0);
                None
            }
        });
    Head {
        array_found: true,
        provenance: member,
    }
}

/// Hands an event (or its absence) to the fold.
fn deliver(collector: &mut Collector<'_>, ev: Option<Event<'_>>) {
    match ev {
        Some(ev) => collector.fold(ev),
        None => collector.skip(),
    }
}

/// Reads a complete in-memory trace (a mapped file or bytes).
/// Pre-faults a byte range of the input (a mapped file), from the worker about to scan it.
type Prefault<'m> = Option<&'m (dyn Fn(usize, usize) + Sync)>;

#[allow(clippy::too_many_arguments)]
fn read_bytes(
    buf: &[u8],
    limits: &Limits,
    threads: Option<usize>,
    region: usize,
    prefault: Prefault<'_>,
    collector: &mut Collector<'_>,
    log: &mut ErrorLog,
) -> Head {
    let over = limits.max_input_bytes.filter(|&max| buf.len() as u64 > max);
    if let Some(max) = over {
        log.push(&input_problem(&io::Error::other(InputLimit(max)), false), 0);
    }
    let buf = &buf[..over.map_or(buf.len(), |max| max as usize)];
    let body = match scan::locate_array(buf, true, limits) {
        Located::Array { key_at, body } => (body, found_array(&buf[..key_at], log)),
        Located::Failed(p) => {
            log.push(&p, 0);
            return Head::default();
        }
        Located::NeedMore => return Head::default(),
    };
    let (start, head) = body;
    let wanted = Ask {
        wanted: collector.wanted(),
        digest: collector.digests(),
    };
    let threads = threads.unwrap_or_else(rayon::current_num_threads).max(1);
    if threads == 1 || buf.len() - start < 2 * region {
        let r = scan_region(buf, start, usize::MAX, limits, wanted);
        apply_region(r, collector, log);
        return head;
    }
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => read_parallel(
            buf, start, region, limits, wanted, threads, &pool, prefault, collector, log,
        ),
        // No threads to be had: the sequential read gives the same answer.
        Err(_) => {
            let r = scan_region(buf, start, usize::MAX, limits, wanted);
            apply_region(r, collector, log);
        }
    }
    head
}

/// The events of one region of a mapped array, in file order.
struct Region<'a> {
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
    count: u64,
    /// Problems with the number of events this region had yielded before each.
    problems: Vec<(u64, Problem)>,
    /// Where the next region must start to continue this one.
    next: usize,
    /// The array ended in this region.
    ended: bool,
}

/// What a region's worker is asked for: which events, and whether it may digest GPU
/// events into records itself (not when an observer must see them).
#[derive(Clone, Copy)]
struct Ask {
    wanted: Wanted,
    digest: bool,
}

/// Scans elements from `start` until the next element would start at or after `stop_at`.
fn scan_region<'a>(
    buf: &'a [u8],
    start: usize,
    stop_at: usize,
    limits: &Limits,
    ask: Ask,
) -> Region<'a> {
    let (wanted, digest) = (ask.wanted, ask.digest);
    let mut r = Region {
        events: Vec::new(),
        digest: Digest::default(),
        digested: Vec::new(),
        name_ids: Vec::new(),
        names: Interner::default(),
        count: 0,
        problems: Vec::new(),
        next: start,
        ended: false,
    };
    let mut pos = start;
    let mut fast = scan::Fast::new();
    loop {
        while pos < buf.len() && matches!(buf[pos], b' ' | b'\n' | b'\r' | b'\t' | b',') {
            pos += 1;
        }
        if pos >= stop_at && pos < buf.len() {
            r.next = pos;
            return r;
        }
        let n = r.count;
        match scan::step(
            buf,
            &mut pos,
            true,
            limits,
            wanted,
            &mut fast,
            &mut r.events,
        ) {
            Step::Event(kept) => {
                r.count += 1;
                if let (true, Some(ev)) = (kept, r.events.last()) {
                    let id = if ev.name.escaped || !names_interned(ev.cat) {
                        NO_NAME
                    } else {
                        r.names.intern(ev.name.raw)
                    };
                    let digested = digest && r.digest.take(ev, id);
                    r.digested.push(digested);
                    if digested {
                        // Dropped in place: nothing to free, nothing to move.
                        r.events.truncate(r.events.len() - 1);
                    } else {
                        r.name_ids.push(id);
                    }
                }
            }
            Step::Problem(p) => r.problems.push((n, p)),
            Step::End(p) => {
                if let Some(p) = p {
                    r.problems.push((n, p));
                }
                r.ended = true;
                r.next = pos;
                return r;
            }
            // Unreachable with eof = true; treat as the end rather than loop.
            Step::NeedMore => {
                r.ended = true;
                return r;
            }
        }
    }
}

fn apply_region(r: Region<'_>, collector: &mut Collector<'_>, log: &mut ErrorLog) {
    let base = collector.out.event_total;
    // Problem positions are event counts, so the log can be written before the fold.
    for (n, p) in &r.problems {
        log.push(p, base + n);
    }
    let mut names = Lazy::new(r.names.values());
    let mut resolve = Resolve::new(&mut names, &r.digest);
    let mut events = r.events.into_iter().zip(r.name_ids);
    let mut recs = r.digest.recs.iter();
    for digested in r.digested {
        if digested {
            if let Some(&rec) = recs.next() {
                collector.fold_gpu(rec, &mut resolve);
            }
        } else if let Some((ev, id)) = events.next() {
            collector.fold_named(ev, id, resolve.names);
        }
    }
    collector.out.event_total = base + r.count;
}

/// Parallel regions, merged in file order. A region start is a guess (the byte pattern
/// `}, {`); it is trusted only when the previous region's scan ends exactly there,
/// otherwise the region is scanned again from the true position.
#[allow(clippy::too_many_arguments)]
fn read_parallel(
    buf: &[u8],
    start: usize,
    region: usize,
    limits: &Limits,
    wanted: Ask,
    threads: usize,
    pool: &rayon::ThreadPool,
    prefault: Prefault<'_>,
    collector: &mut Collector<'_>,
    log: &mut ErrorLog,
) {
    let mut starts = vec![start];
    let mut at = start + region;
    while at < buf.len() {
        match scan::boundary_after(buf, at) {
            Some(b) => {
                starts.push(b);
                at = b + region;
            }
            None => break,
        }
    }
    let bounds: Vec<(usize, usize)> = starts
        .iter()
        .enumerate()
        .map(|(i, &s)| (s, starts.get(i + 1).copied().unwrap_or(usize::MAX)))
        .collect();
    // Regions are parsed on the pool while this thread folds finished ones in file
    // order; at most `in_flight` regions' events exist at once, which bounds memory.
    let in_flight = threads * 2 + 1;
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Region<'_>)>();
    pool.in_place_scope(|scope| {
        let mut next_spawn = 0;
        let spawn = |i: usize| {
            let (s, stop) = bounds[i];
            let tx = tx.clone();
            scope.spawn(move |_| {
                if let Some(fault) = prefault {
                    fault(s, stop.min(buf.len()) - s);
                }
                let _ = tx.send((i, scan_region(buf, s, stop, limits, wanted)));
            });
        };
        while next_spawn < bounds.len().min(in_flight) {
            spawn(next_spawn);
            next_spawn += 1;
        }
        let mut done: std::collections::BTreeMap<usize, Region<'_>> =
            std::collections::BTreeMap::new();
        let mut expected = start;
        for i in 0..bounds.len() {
            let region = loop {
                if let Some(r) = done.remove(&i) {
                    break r;
                }
                match rx.recv() {
                    Ok((k, r)) => {
                        done.insert(k, r);
                    }
                    // Every sender is gone without region i: cannot happen, but never hang.
                    Err(_) => return,
                }
            };
            if next_spawn < bounds.len() {
                spawn(next_spawn);
                next_spawn += 1;
            }
            let (s, stop) = bounds[i];
            let region = if s == expected {
                region
            } else {
                // The guessed start was wrong (inside a string): redo from the true one.
                scan_region(buf, expected, stop, limits, wanted)
            };
            let ended = region.ended;
            expected = region.next;
            apply_region(region, collector, log);
            collector.progress(expected as u64, Some(buf.len() as u64));
            if ended {
                // Later regions lie past the array; their results are dropped unread.
                return;
            }
        }
    });
}

/// Streams a reader through a bounded pipeline: one thread reads (and decompresses)
/// while this one parses. At most a few chunks plus one event are buffered.
pub(crate) fn read_stream<R: Read + Send>(
    reader: R,
    gzip: bool,
    limits: &Limits,
    collector: &mut dyn StreamSink,
    log: &mut ErrorLog,
    meter: Option<Meter>,
) -> Head {
    std::thread::scope(|scope| {
        let (tx, rx) = sync_channel::<io::Result<Vec<u8>>>(4);
        let max_input = limits.max_input_bytes;
        scope.spawn(move || {
            let mut reader = reader;
            let mut total: u64 = 0;
            loop {
                let mut chunk = vec![0u8; CHUNK];
                match read_up_to(&mut reader, &mut chunk) {
                    Ok(0) => return,
                    Ok(n) => {
                        chunk.truncate(n);
                        let over = max_input.filter(|&max| total + n as u64 > max);
                        if let Some(max) = over {
                            chunk.truncate(max.saturating_sub(total) as usize);
                        }
                        total += chunk.len() as u64;
                        if tx.send(Ok(chunk)).is_err() {
                            return;
                        }
                        if let Some(max) = over {
                            let _ = tx.send(Err(io::Error::other(InputLimit(max))));
                            return;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        let out = parse_stream(rx, gzip, limits, collector, log, meter);
        // Dropping the receiver (inside parse_stream) stops the reader thread.
        out
    })
}

fn parse_stream(
    rx: Receiver<io::Result<Vec<u8>>>,
    gzip: bool,
    limits: &Limits,
    sink: &mut dyn StreamSink,
    log: &mut ErrorLog,
    meter: Option<Meter>,
) -> Head {
    let report = |sink: &mut dyn StreamSink| {
        if let Some(m) = &meter {
            sink.progress(m.done(), m.total);
        }
    };
    let wanted = sink.wanted();
    let mut buf: Vec<u8> = Vec::new();
    let mut eof = false;
    let mut fast = scan::Fast::new();
    // Pulls at least `want` more bytes (or reaches the end).
    let pull = |buf: &mut Vec<u8>, eof: &mut bool, log: &mut ErrorLog, n: u64, want: usize| {
        let target = buf.len().saturating_add(want.max(1));
        while buf.len() < target && !*eof {
            match rx.recv() {
                Ok(Ok(chunk)) => buf.extend_from_slice(&chunk),
                Ok(Err(e)) => {
                    log.push(&input_problem(&e, gzip), n);
                    *eof = true;
                }
                Err(_) => *eof = true,
            }
        }
    };
    // Prefix: the whole prefix stays buffered (bounded by max_prefix_bytes).
    let (mut pos, head) = loop {
        match scan::locate_array(&buf, eof, limits) {
            Located::Array { key_at, body } => {
                sink.prefix(&buf[..key_at]);
                break (body, found_array(&buf[..key_at], log));
            }
            Located::Failed(p) => {
                log.push(&p, 0);
                return Head::default();
            }
            Located::NeedMore => pull(&mut buf, &mut eof, log, 0, CHUNK),
        }
    };
    loop {
        let n = sink.count();
        let start = pos;
        let mut one = None;
        match scan::step(&buf, &mut pos, eof, limits, wanted, &mut fast, &mut one) {
            Step::Event(_) => {
                // `step` skipped separators before the object; its text starts at `{`.
                let from = buf[start..pos]
                    .iter()
                    .position(|&b| b == b'{')
                    .map_or(start, |o| start + o);
                sink.event(one, &buf[from..pos]);
            }
            Step::Problem(p) => log.push(&p, n),
            Step::End(p) => {
                match p {
                    Some(p) => log.push(&p, n),
                    None if sink.wants_suffix() => {
                        // The rest of the document: bounded like the prefix.
                        while !eof && buf.len() - pos <= limits.max_prefix_bytes {
                            pull(&mut buf, &mut eof, log, n, CHUNK);
                        }
                        let end = buf.len().min(pos.saturating_add(limits.max_prefix_bytes));
                        sink.suffix(&buf[pos..end]);
                    }
                    None => {}
                }
                return head;
            }
            Step::NeedMore => {
                // Keep only the pending element, then read at least as much again as it
                // already spans, so a huge event is scanned a logarithmic number of times.
                buf.drain(..pos);
                pos = 0;
                fast.moved();
                let pending = buf.len();
                pull(&mut buf, &mut eof, log, n, pending.max(CHUNK));
                report(sink);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analyse(buf: &[u8], threads: usize, region: usize) -> (u64, Vec<String>, Vec<u32>) {
        let mut c = Collector::new(None);
        let mut log = ErrorLog::default();
        read_bytes(
            buf,
            &Limits::default(),
            Some(threads),
            region,
            None,
            &mut c,
            &mut log,
        );
        let names = c.out.gpu.iter().map(|g| g.name).collect();
        (c.out.event_total, log.finish(), names)
    }

    /// Region starts are guessed from the bytes `}, {`; strings holding that pattern must
    /// not change the result, nor must problems that straddle a region.
    #[test]
    fn wrong_region_guesses_are_repaired() {
        let mut t = String::from("{\"traceEvents\":[");
        for i in 0..200 {
            let tricky = if i % 3 == 0 {
                r#"a}, {\"x\":1}, {b"#
            } else {
                "plain"
            };
            t.push_str(&format!(
                r#"{{"ph":"X","cat":"kernel","name":"k{i}","ts":{i},"dur":1,"args":{{"note":"{tricky}"}}}},"#
            ));
            if i % 17 == 0 {
                t.push_str("42, {\"bad\": nope}, ");
            }
        }
        t.push_str("{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"last\",\"ts\":1,\"dur\":1}]}");
        let sequential = analyse(t.as_bytes(), 1, 1 << 20);
        assert_eq!(sequential.0, 201);
        assert!(!sequential.1.is_empty());
        for region in [16, 50, 97, 256, 1000] {
            assert_eq!(
                analyse(t.as_bytes(), 4, region),
                sequential,
                "region {region}"
            );
        }
    }
}
