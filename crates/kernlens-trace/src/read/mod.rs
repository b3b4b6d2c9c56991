//! Driving one read of a source: plain (regions in parallel, plain.rs) or streamed (gzip,
//! stdin), with the array located by `scan::locate_array` for both.
//!
//! Both paths feed the same sequential fold in file order, so results do not depend
//! on the path taken or on the thread count.

use std::fs::File;
use std::io::{self, Read};

use crate::collect::{Collector, GpuRec, RegionNames, Resolve};
use crate::error::TraceError;
use crate::event::Event;
use crate::event::{Cat, Wanted};
use crate::observe::{EventObserver, ObservedEvent, ProgressSink, TraceId};
use crate::options::Limits;
use crate::provenance;
use crate::report::ChunkProvenance;
use crate::scan::{self, ErrorLog, Located, Problem};
use crate::source::{Input, TraceSource};

mod gzip;
mod parallel;
mod region;
mod stream;

pub(crate) use gzip::Members;
pub(crate) use parallel::Cut;
use parallel::Plain;
use region::{Ask, Tail};
use stream::Meter;
pub(crate) use stream::{StreamSink, read_stream};

/// What one read feeds: the fold, and the observer and progress sink the reader serves
/// beside it (the fold itself knows neither).
pub(crate) struct Feed<'o> {
    pub(crate) fold: Collector,
    observer: Option<&'o mut dyn EventObserver>,
    progress: Option<&'o mut dyn ProgressSink>,
}

impl<'o> Feed<'o> {
    pub(crate) fn new(observer: Option<&'o mut dyn EventObserver>) -> Self {
        Feed {
            fold: Collector::default(),
            observer,
            progress: None,
        }
    }

    /// The same feed, reporting read progress to `progress`.
    pub(crate) fn with_progress(mut self, progress: Option<&'o mut dyn ProgressSink>) -> Self {
        self.progress = progress;
        self
    }

    pub(crate) fn progress(&mut self, done: u64, total: Option<u64>) {
        if let Some(p) = self.progress.as_deref_mut() {
            p.progress(done, total);
        }
    }

    /// What the parser must hand over: `python_function` events only for an observer.
    pub(crate) fn wanted(&self) -> Wanted {
        Wanted {
            python_functions: self.observer.is_some(),
            everything: false,
        }
    }

    /// Whether region workers may digest GPU events into records themselves: not when an
    /// observer must see every event.
    pub(crate) fn digests(&self) -> bool {
        self.observer.is_none()
    }

    /// Counts an event analysis does not use.
    pub(crate) fn skip(&mut self) {
        self.fold.skip();
    }

    /// Hands `ev` to the observer (when it is of a kind observed), then to the fold.
    pub(crate) fn fold(&mut self, ev: Event<'_>) {
        self.observe(&ev);
        self.fold.fold(ev);
    }

    /// [`Feed::fold`] for an event whose name a region worker numbered.
    pub(crate) fn fold_named(
        &mut self,
        ev: Event<'_>,
        name_id: u32,
        names: &mut RegionNames<'_, '_>,
    ) {
        self.observe(&ev);
        self.fold.fold_named(ev, name_id, names);
    }

    /// Folds a GPU record a worker digested (only done without an observer).
    pub(crate) fn fold_gpu(&mut self, rec: GpuRec, d: &mut Resolve<'_, '_>) {
        self.fold.fold_gpu(rec, d);
    }

    fn observe(&mut self, ev: &Event<'_>) {
        if let Some(obs) = self.observer.as_deref_mut() {
            let name = ev.name.decode();
            let cat = match ev.cat {
                Cat::Kernel => Some("kernel"),
                Cat::Memcpy => Some("gpu_memcpy"),
                Cat::Memset => Some("gpu_memset"),
                Cat::Runtime => Some("cuda_runtime"),
                Cat::Driver => Some("cuda_driver"),
                Cat::PythonFunction => Some("python_function"),
                _ => None,
            };
            if let Some(cat) = cat {
                let (pid, tid) = (ev.pid.decode(), ev.tid.decode());
                obs.observe(&ObservedEvent {
                    cat,
                    name: &name,
                    pid: TraceId::from(&pid),
                    tid: TraceId::from(&tid),
                    ts_ns: ev.ts,
                    dur_ns: ev.dur,
                    correlation: ev.args.correlation,
                });
            }
        }
    }
}

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

/// Size of one read from a stream, and of the first read of a plain input.
pub(crate) const CHUNK: usize = 1 << 20;

/// How one read is done, decided once before it starts: the input bounds, the worker
/// threads and how a plain input is cut into regions. Which events are wanted comes from
/// the fold it feeds.
#[derive(Clone, Copy)]
pub(crate) struct ReadPlan<'a> {
    pub(crate) limits: &'a Limits,
    /// None: rayon's default.
    pub(crate) threads: Option<usize>,
    pub(crate) cut: Cut,
}

impl<'a> ReadPlan<'a> {
    pub(crate) fn new(limits: &'a Limits, threads: Option<usize>) -> Self {
        ReadPlan {
            limits,
            threads,
            cut: Cut::DEFAULT,
        }
    }
}

/// Reads the whole source once, folding every event into `feed`.
pub(crate) fn read(
    source: &TraceSource,
    plan: &ReadPlan<'_>,
    feed: &mut Feed<'_>,
) -> Result<ReadOutput, TraceError> {
    let (limits, threads, cut) = (plan.limits, plan.threads, plan.cut);
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
                read_gzip(file, Some(len), limits, feed, &mut log)
            } else {
                let len = input_limit(len, limits, &mut log);
                let head = read_plain(
                    Plain::File { file: &file, len },
                    limits,
                    threads,
                    cut,
                    feed,
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
                        feed.fold.out.event_total,
                    );
                }
                head
            }
        }
        Input::Bytes(bytes) => {
            if bytes.starts_with(&GZIP_MAGIC) {
                read_gzip(&bytes[..], Some(bytes.len() as u64), limits, feed, &mut log)
            } else {
                let len = input_limit(bytes.len() as u64, limits, &mut log) as usize;
                read_plain(
                    Plain::Mem(&bytes[..len]),
                    limits,
                    threads,
                    cut,
                    feed,
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
                read_gzip(chained, None, limits, feed, &mut log)
            } else {
                let (counted, meter) = Meter::wrap(chained, None);
                read_stream(counted, false, limits, feed, &mut log, Some(meter))
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
    feed: &mut Feed<'_>,
    log: &mut ErrorLog,
) -> Head {
    let (counted, meter) = Meter::wrap(compressed, total);
    read_stream(Members::new(counted), true, limits, feed, log, Some(meter))
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
pub(super) struct InputLimit(pub(super) u64);

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

pub(super) fn input_problem(e: &io::Error, gzip: bool) -> Problem {
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
pub(super) fn found_array(prefix: &[u8], log: &mut ErrorLog) -> Head {
    let member = provenance::prefix_member(prefix, "kernlens").and_then(|raw| {
        match provenance::parse(raw) {
            Ok(p) => Some(p),
            Err(why) => {
                log.push(&Problem::Provenance(why), 0);
                None
            }
        }
    });
    Head {
        array_found: true,
        provenance: member,
        not_a_trace: false,
    }
}

/// Hands an event (or its absence) to the fold.
pub(super) fn deliver(feed: &mut Feed<'_>, ev: Option<Event<'_>>) {
    match ev {
        Some(ev) => feed.fold(ev),
        None => feed.skip(),
    }
}

/// Reads an uncompressed input: finds the array in its first bytes, then reads the array
/// in regions (parallel.rs).
fn read_plain(
    plain: Plain<'_>,
    limits: &Limits,
    threads: Option<usize>,
    cut: Cut,
    feed: &mut Feed<'_>,
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
        wanted: feed.wanted(),
        digest: feed.digests(),
        form,
    };
    let threads = threads.unwrap_or_else(rayon::current_num_threads).max(1);
    let job = parallel::Job {
        plain,
        limits,
        ask,
        cut,
        body: body as u64,
        threads,
    };
    parallel::read_array(job, feed, log);
    head
}

/// The head of a read that found no array: a stream error, or "not a trace" when the input
/// was read cleanly and is neither layout (after an input error it may be a damaged trace,
/// so the error stands and the array is reported missing).
pub(super) fn failed_head(located: Located, input_failed: bool, log: &mut ErrorLog) -> Head {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn analyse(source: &TraceSource, threads: usize, cut: Cut) -> (u64, Vec<String>, Vec<u32>) {
        let mut c = Feed::new(None);
        let out = read(
            source,
            &ReadPlan {
                limits: &Limits::default(),
                threads: Some(threads),
                cut,
            },
            &mut c,
        )
        .unwrap();
        let names = c.fold.out.gpu.iter().map(|g| g.name).collect();
        (c.fold.out.event_total, out.stream_errors, names)
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
