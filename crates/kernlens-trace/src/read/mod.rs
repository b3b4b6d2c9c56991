//! Driving one read of a source: plain (regions in parallel, plain.rs) or streamed (gzip,
//! stdin), with the array located by `scan::locate_array` for both.
//!
//! Both paths feed the same sequential fold in file order, so results do not depend
//! on the path taken or on the thread count.

use std::fs::File;
use std::io::{self, Read};
use std::sync::mpsc::{Receiver, sync_channel};

use crate::collect::Collector;
use crate::error::TraceError;
use crate::event::{Event, Wanted};
use crate::options::Limits;
use crate::provenance;
use crate::report::ChunkProvenance;
use crate::scan::{self, ErrorLog, Form, Located, Problem, Step};
use crate::source::{Input, TraceSource};

mod gzip;
mod plain;
mod region;

pub(crate) use gzip::Members;
pub(crate) use plain::Cut;
use plain::Plain;
use region::{Ask, Tail};

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
    /// The input is neither layout (`TraceError::NotATrace`).
    pub(crate) not_a_trace: bool,
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

/// Reads the whole source once, folding every event into `collector`.
pub(crate) fn read(
    source: &TraceSource,
    limits: &Limits,
    threads: Option<usize>,
    collector: &mut Collector<'_>,
) -> Result<ReadOutput, TraceError> {
    read_cut(source, limits, threads, Cut::DEFAULT, collector)
}

/// [`read`] with the plain path's region size (tests cut tiny regions).
pub(crate) fn read_cut(
    source: &TraceSource,
    limits: &Limits,
    threads: Option<usize>,
    cut: Cut,
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
            let file = File::open(path).map_err(|e| io_err("open trace", e))?;
            let mut magic = [0u8; 2];
            let got = read_up_to(&mut &file, &mut magic).map_err(|e| io_err("read trace", e))?;
            let len = file.metadata().map_err(|e| io_err("read trace", e))?.len();
            if got == 2 && magic == GZIP_MAGIC {
                let file = File::open(path).map_err(|e| io_err("open trace", e))?;
                read_gzip(file, Some(len), limits, collector, &mut log)
            } else {
                let len = input_limit(len, limits, &mut log);
                let head = read_plain(
                    Plain::File { file: &file, len },
                    limits,
                    threads,
                    cut,
                    collector,
                    &mut log,
                );
                // A file that grew or shrank after its array was read (a capture still being
                // written, or replaced): the figures may not describe what is there now.
                if let Ok(now) = file.metadata().map(|m| m.len())
                    && now != len
                    && !log.has_input_problem()
                    && limits.max_input_bytes.is_none_or(|max| now <= max)
                {
                    log.push(
                        &Problem::Input {
                            kind: "IoError",
                            detail: format!(
                                "the file changed size while being read ({len} bytes when \
                                 opened, {now} after)"
                            ),
                        },
                        collector.out.event_total,
                    );
                }
                head
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
                let len = input_limit(bytes.len() as u64, limits, &mut log) as usize;
                read_plain(
                    Plain::Mem(&bytes[..len]),
                    limits,
                    threads,
                    cut,
                    collector,
                    &mut log,
                )
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
    if head.not_a_trace {
        return Err(TraceError::NotATrace {
            path: source.file().to_string(),
        });
    }
    Ok(ReadOutput {
        stream_errors: log.finish(),
        array_found: head.array_found,
        provenance: head.provenance,
    })
}

/// The length to read of an input of `len` bytes under `Limits::max_input_bytes`; going
/// over it is recorded first.
fn input_limit(len: u64, limits: &Limits, log: &mut ErrorLog) -> u64 {
    match limits.max_input_bytes.filter(|&max| len > max) {
        Some(max) => {
            log.push(&input_problem(&io::Error::other(InputLimit(max)), false), 0);
            max
        }
        None => len,
    }
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
        Members::new(counted),
        true,
        limits,
        collector,
        log,
        Some(meter),
    )
}

/// Fills `buf` as far as the reader allows: how many bytes were read, and the error that
/// stopped it short, if any.
fn fill(r: &mut impl Read, buf: &mut [u8]) -> (usize, Option<io::Error>) {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (n, Some(e)),
        }
    }
    (n, None)
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
        not_a_trace: false,
    }
}

/// Hands an event (or its absence) to the fold.
fn deliver(collector: &mut Collector<'_>, ev: Option<Event<'_>>) {
    match ev {
        Some(ev) => collector.fold(ev),
        None => collector.skip(),
    }
}

/// Reads an uncompressed input: finds the array in its first bytes, then reads the array
/// in regions (plain.rs).
fn read_plain(
    plain: Plain<'_>,
    limits: &Limits,
    threads: Option<usize>,
    cut: Cut,
    collector: &mut Collector<'_>,
    log: &mut ErrorLog,
) -> Head {
    let mut head_slot = Vec::new();
    let mut span = CHUNK as u64;
    let (body, head, form) = loop {
        let f = plain.fetch(&mut head_slot, 0, span);
        let eof = f.tail != Tail::More;
        let located = scan::locate_array(f.bytes, eof, limits);
        let broken = f.broken.clone();
        match located {
            Located::NeedMore => span = span.saturating_mul(2),
            Located::Array { key_at, body, form } => {
                break (body, found_array(&f.bytes[..key_at], log), form);
            }
            other => {
                if let Some(p) = &broken {
                    log.push(p, 0);
                }
                return failed_head(other, broken.is_some(), log);
            }
        }
    };
    let ask = Ask {
        wanted: collector.wanted(),
        digest: collector.digests(),
        form,
    };
    let threads = threads.unwrap_or_else(rayon::current_num_threads).max(1);
    let job = plain::Job {
        plain,
        limits,
        ask,
        cut,
        body: body as u64,
        threads,
    };
    plain::read_array(job, collector, log);
    head
}

/// The head of a read that found no array: a stream error, or "not a trace" when the input
/// was read cleanly and is neither layout (after an input error it may be a damaged trace,
/// so the error stands and the array is reported missing).
fn failed_head(located: Located, input_failed: bool, log: &mut ErrorLog) -> Head {
    match located {
        Located::Failed(p) => log.push(&p, 0),
        Located::NotATrace if input_failed => log.push(&Problem::ArrayNotFound, 0),
        Located::NotATrace => {
            return Head {
                not_a_trace: true,
                ..Head::default()
            };
        }
        Located::NeedMore | Located::Array { .. } => {}
    }
    Head::default()
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
                let (n, failed) = fill(&mut reader, &mut chunk);
                // The bytes read before an error are data (a damaged gzip trailer comes
                // after the last member's bytes): they go first, then the error.
                let failed = match (n, failed) {
                    (0, Some(e)) => Err(e),
                    (0, None) => return,
                    (n, e) => {
                        chunk.truncate(n);
                        Ok((chunk, e))
                    }
                };
                match failed {
                    Ok((mut chunk, later)) => {
                        let n = chunk.len();
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
                        if let Some(e) = later {
                            let _ = tx.send(Err(e));
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
    let (mut pos, head, form) = loop {
        match scan::locate_array(&buf, eof, limits) {
            Located::Array { key_at, body, form } => {
                // The array layout has no members: a sink copying them starts an object.
                sink.prefix(match form {
                    Form::Object => &buf[..key_at],
                    Form::Array => b"{",
                });
                break (body, found_array(&buf[..key_at], log), form);
            }
            Located::NeedMore => pull(&mut buf, &mut eof, log, 0, CHUNK),
            other => return failed_head(other, log.has_input_problem(), log),
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
                    // Chrome's array format may leave the closing `]` out.
                    Some(Problem::Unterminated)
                        if form == Form::Array && !log.has_input_problem() => {}
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
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn analyse(source: &TraceSource, threads: usize, cut: Cut) -> (u64, Vec<String>, Vec<u32>) {
        let mut c = Collector::new(None);
        let out = read_cut(source, &Limits::default(), Some(threads), cut, &mut c).unwrap();
        let names = c.out.gpu.iter().map(|g| g.name).collect();
        (c.out.event_total, out.stream_errors, names)
    }

    /// Region starts are guessed from the bytes `}, {`; strings holding that pattern must
    /// not change the result, nor must problems or elements that straddle a region or its
    /// look-ahead, in memory or read from a file.
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
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        std::fs::write(&path, &t).unwrap();
        let mem = || TraceSource::from_bytes("t.json", t.clone().into_bytes());
        let sequential = analyse(&mem(), 1, Cut::DEFAULT);
        assert_eq!(sequential.0, 201);
        assert!(!sequential.1.is_empty());
        for region in [16, 50, 97, 256, 1000] {
            for look in [8, 40, 300] {
                let cut = Cut { region, look };
                for threads in [1, 4] {
                    assert_eq!(
                        analyse(&mem(), threads, cut),
                        sequential,
                        "region {region} look {look}"
                    );
                    let file = TraceSource::open(&path).unwrap();
                    assert_eq!(
                        analyse(&file, threads, cut),
                        sequential,
                        "file, region {region} look {look}"
                    );
                }
            }
        }
    }
}
