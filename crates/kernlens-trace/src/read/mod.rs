//! Driving one read of a source: plain (regions in parallel, plain.rs) or streamed (gzip,
//! stdin), with the array located by `scan::locate_array` for both.
//!
//! Both paths feed the same sequential fold in file order, so results do not depend
//! on the path taken or on the thread count.

use std::fs::File;
use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};

use std::borrow::Cow;

use crate::collect::{Brief, Collector, Digest, GpuKind, GpuRec, Numbers, Resolve};
use crate::error::TraceError;
use crate::event::{Cat, Event, IdVal, Wanted};
use crate::observe::{
    DeviceKind, EventObserver, NumberedEvent, ObservedEvent, ProgressSink, TraceId,
};
use crate::options::Limits;
use crate::provenance;
use crate::report::ChunkProvenance;
use crate::scan::{self, ErrorLog, Form, Located, Problem};
use crate::source::{Input, TraceSource};

mod gzip;
#[cfg(feature = "isal")]
mod isal;
mod map;
mod parallel;
mod pieces;
mod region;
mod sequential;
mod slots;
mod stream;
mod zran;

pub(crate) use gzip::Members;
pub(crate) use parallel::Cut;
use parallel::{Fetch, Plain};
use pieces::{STREAM_CUT, StreamJob, read_pieces};
pub(crate) use region::{
    Analyse, Elements, Folder, Region, Scanned, Scanner, Span, Tail, Walked, walk,
};
#[cfg(test)]
pub(crate) use sequential::StreamSink;
pub(crate) use sequential::read_stream;
use stream::Meter;
use zran::{Index, Resumed};

/// What a read of a gzip source does about access points (zran.rs): split's first read
/// records them, its second skips with them; every other read decodes the whole stream.
pub(crate) enum Access<'a> {
    Whole,
    /// Record points into the slot (left empty when the source is not one gzip member
    /// read cleanly to its end, or with the `isal` feature).
    Record(&'a mut Option<Trail>),
    /// Decode only the pieces the scanner does not know, from the nearest point.
    Resume(&'a Trail),
}

/// What split's first read learned of a single-member gzip source: its access points, and
/// the decoded bytes its reading thread fetched itself (the pieces that hold them are
/// always decoded).
pub(crate) struct Trail {
    index: Index,
    fetched: Vec<(u64, u64)>,
}

/// What one read feeds: the fold, and the observer and progress sink the reader serves
/// beside it (the fold itself knows neither).
pub(crate) struct Feed<'o> {
    pub(crate) fold: Collector,
    observer: Option<&'o mut dyn EventObserver>,
    progress: Option<&'o mut dyn ProgressSink>,
    /// This read's serial, the high half of the `name_id`s it hands the observer.
    serial: u64,
    /// The observer takes copies and memsets (`EventObserver::observes_copies`).
    copies: bool,
}

/// Reads started in this process: the next read's serial.
static READS: AtomicU64 = AtomicU64::new(0);

impl<'o> Feed<'o> {
    pub(crate) fn new(observer: Option<&'o mut dyn EventObserver>) -> Self {
        Feed {
            fold: Collector::default(),
            copies: observer.as_deref().is_some_and(|o| o.observes_copies()),
            observer,
            progress: None,
            serial: READS.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The same feed, reporting read progress to `progress`.
    pub(crate) fn with_progress(mut self, progress: Option<&'o mut dyn ProgressSink>) -> Self {
        self.progress = progress;
        self
    }

    pub(crate) fn progress(&mut self, done: u64, total: Option<u64>) {
        self.fold.presize(done, total);
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

    /// Whether an observer is served (region workers then keep, beside the GPU records
    /// they digest, what it needs to see them).
    pub(crate) fn observes(&self) -> bool {
        self.observer.is_some()
    }

    /// Tells the observer the read is done (`EventObserver::read_done`).
    pub(crate) fn read_done(&mut self) {
        if let Some(obs) = self.observer.as_deref_mut() {
            obs.read_done();
        }
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

    /// [`Feed::fold`] for an event whose name and meta text a region worker numbered.
    pub(crate) fn fold_named(&mut self, ev: &Event<'_>, n: Numbers, keys: &mut Resolve<'_, '_>) {
        self.observe(ev);
        self.fold.fold_named(ev, n, keys);
    }

    /// Folds a kept event a worker briefed: never of a kind the observer is shown
    /// ([`Brief::fits`]), so only the fold sees it.
    pub(crate) fn fold_brief(&mut self, b: &Brief, keys: &mut Resolve<'_, '_>) {
        self.fold.fold_brief(b, None, keys);
    }

    /// Hands the observer record `i` of a region a worker digested, as the event it was;
    /// `(name, track)` are the read's numbers for its name and its `(pid, tid)`.
    pub(crate) fn observe_digested(
        &mut self,
        rec: &GpuRec,
        i: usize,
        sight: &mut Sight<'_, '_>,
        (name, track): (u32, u32),
    ) {
        let Some(obs) = self.observer.as_deref_mut() else {
            return;
        };
        let kind = match rec.kind {
            GpuKind::Kernel => DeviceKind::Kernel,
            GpuKind::Memcpy if !self.copies => return,
            GpuKind::Memcpy if sight.memsets.get(i) == Some(&true) => DeviceKind::Memset,
            GpuKind::Memcpy => DeviceKind::Memcpy,
        };
        let name_id = self.serial << 32 | u64::from(name);
        let track_id =
            (track != crate::collect::NONE).then(|| self.serial << 32 | u64::from(track));
        let numbered = NumberedEvent {
            kind,
            name_id,
            track_id,
            ts_ns: rec.ts,
            dur_ns: rec.dur,
            correlation: rec.corr(),
        };
        if obs.observe_numbered(&numbered) {
            return;
        }
        sight.decode(rec);
        let (name, pid, tid) = sight.get(rec);
        obs.observe(&ObservedEvent {
            cat: kind.cat(),
            name,
            pid,
            tid,
            ts_ns: rec.ts,
            dur_ns: rec.dur,
            correlation: numbered.correlation,
            name_id: Some(name_id),
            track_id,
        });
    }

    /// Folds a GPU record a worker digested; gives the read's numbers for its name and its
    /// `(pid, tid)`.
    pub(crate) fn fold_gpu(&mut self, rec: GpuRec, d: &mut Resolve<'_, '_>) -> (u32, u32) {
        self.fold.fold_gpu(rec, d)
    }

    fn observe(&mut self, ev: &Event<'_>) {
        if let Some(obs) = self.observer.as_deref_mut() {
            let cat = match ev.cat {
                Cat::Kernel => Some("kernel"),
                Cat::Memcpy | Cat::Memset if !self.copies => None,
                Cat::Memcpy => Some("gpu_memcpy"),
                Cat::Memset => Some("gpu_memset"),
                Cat::Runtime => Some("cuda_runtime"),
                Cat::Driver => Some("cuda_driver"),
                Cat::PythonFunction => Some("python_function"),
                _ => None,
            };
            if let Some(cat) = cat {
                // Decoded only for the kinds observed (not for every CPU op).
                let name = ev.name.decode();
                let (pid, tid) = (ev.pid.decode(), ev.tid.decode());
                obs.observe(&ObservedEvent {
                    cat,
                    name: &name,
                    pid: TraceId::from(&pid),
                    tid: TraceId::from(&tid),
                    ts_ns: ev.ts,
                    dur_ns: ev.dur,
                    correlation: ev.args.correlation,
                    name_id: None,
                    track_id: None,
                });
            }
        }
    }
}

/// A region's digested records as an observer sees them: each name and `(pid, tid)` the
/// region numbered is decoded the first time a record uses it, not once per record.
pub(crate) struct Sight<'r, 'a> {
    names: &'r [&'a [u8]],
    digest: &'r Digest<'a>,
    memsets: &'r [bool],
    name_text: Vec<Option<Cow<'a, str>>>,
    stream_ids: Vec<Option<(IdVal<'a>, IdVal<'a>)>>,
}

impl<'r, 'a> Sight<'r, 'a> {
    pub(crate) fn new(names: &'r [&'a [u8]], digest: &'r Digest<'a>, memsets: &'r [bool]) -> Self {
        Sight {
            names,
            digest,
            memsets,
            name_text: Vec::new(),
            stream_ids: Vec::new(),
        }
    }

    /// Decodes `rec`'s name and stream ids unless an earlier record did.
    fn decode(&mut self, rec: &GpuRec) {
        let (n, s) = (rec.name as usize, rec.stream as usize);
        if self.name_text.len() <= n {
            self.name_text.resize(n + 1, None);
        }
        if let (Some(slot @ None), Some(raw)) = (self.name_text.get_mut(n), self.names.get(n)) {
            *slot = Some(String::from_utf8_lossy(raw));
        }
        if self.stream_ids.len() <= s {
            self.stream_ids.resize(s + 1, None);
        }
        if let (Some(slot @ None), Some((pid, tid))) =
            (self.stream_ids.get_mut(s), self.digest.stream(rec.stream))
        {
            *slot = Some((pid.decode(), tid.decode()));
        }
    }

    /// `rec`'s name and stream ids, as [`Sight::decode`] left them.
    fn get(&self, rec: &GpuRec) -> (&str, TraceId<'_>, TraceId<'_>) {
        let name = match self.name_text.get(rec.name as usize) {
            Some(Some(text)) => text,
            _ => "",
        };
        match self.stream_ids.get(rec.stream as usize) {
            Some(Some((pid, tid))) => (name, TraceId::from(pid), TraceId::from(tid)),
            _ => (name, TraceId::Null, TraceId::Null),
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
    /// How a decoded stream (gzip, stdin) is cut.
    pub(crate) stream_cut: Cut,
    /// The region workers of a plain file read its pages through a guarded map
    /// (read/map.rs) rather than copies. Only for a fold that keeps no input bytes past
    /// its read: a shrink while a region is folded is then only reported, where split's
    /// copy of those bytes would be written out.
    pub(crate) map: bool,
}

impl<'a> ReadPlan<'a> {
    pub(crate) fn new(limits: &'a Limits, threads: Option<usize>) -> Self {
        ReadPlan {
            limits,
            threads,
            cut: Cut::DEFAULT,
            stream_cut: STREAM_CUT,
            map: false,
        }
    }

    /// Whether a plain file's workers read it through a map ([`ReadPlan::map`]).
    pub(crate) fn mapped(mut self, map: bool) -> Self {
        self.map = map;
        self
    }

    /// Worker threads (rayon's default unless set).
    fn threads(&self) -> usize {
        self.threads
            .unwrap_or_else(rayon::current_num_threads)
            .max(1)
    }
}

/// Reads the whole source once, folding every event into `feed`.
pub(crate) fn read(
    source: &TraceSource,
    plan: &ReadPlan<'_>,
    feed: &mut Feed<'_>,
) -> Result<ReadOutput, TraceError> {
    let scanner = Analyse {
        limits: plan.limits,
        wanted: feed.wanted(),
        observed: feed.observes(),
    };
    let mut log = ErrorLog::default();
    let head = match &source.input {
        Input::Reader(_) => read_reader(source, plan, &scanner, feed, &mut log)?,
        _ => read_with(source, plan, &scanner, feed, &mut log)?,
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

/// Reads a reader source (stdin): gzip on the region workers (pieces.rs), plain text
/// through the sequential stream (sequential.rs), whose reads follow the producer.
fn read_reader(
    source: &TraceSource,
    plan: &ReadPlan<'_>,
    scanner: &Analyse<'_>,
    feed: &mut Feed<'_>,
    log: &mut ErrorLog,
) -> Result<Head, TraceError> {
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
    let (counted, meter) = Meter::wrap(chained, None);
    Ok(if got == 2 && magic == GZIP_MAGIC {
        let job = StreamJob {
            limits: plan.limits,
            scanner,
            threads: plan.threads(),
            cut: plan.stream_cut,
            gzip: true,
            hollow: None,
        };
        read_pieces(Members::new(counted), &job, feed, log, Some(meter)).head
    } else {
        read_stream(counted, false, plan.limits, feed, log, Some(meter))
    })
}

/// Reads a stored source (a file or bytes; a reader is `NotSeekable` here) once on the
/// region workers: `scanner` keeps what it wants of each region's elements, `folder` folds
/// the regions in file order. Plain input is cut into regions where it is (parallel.rs);
/// gzip is decoded into pieces that are cut the same way (pieces.rs).
pub(crate) fn read_with<S: Scanner, F: Folder<S>>(
    source: &TraceSource,
    plan: &ReadPlan<'_>,
    scanner: &S,
    folder: &mut F,
    log: &mut ErrorLog,
) -> Result<Head, TraceError> {
    read_access(source, plan, scanner, folder, log, Access::Whole)
}

/// [`read_with`], a gzip source read as `access` says.
pub(crate) fn read_access<S: Scanner, F: Folder<S>>(
    source: &TraceSource,
    plan: &ReadPlan<'_>,
    scanner: &S,
    folder: &mut F,
    log: &mut ErrorLog,
    access: Access<'_>,
) -> Result<Head, TraceError> {
    let limits = plan.limits;
    let threads = plan.threads();
    let stream = StreamJob {
        limits,
        scanner,
        threads,
        cut: plan.stream_cut,
        gzip: true,
        hollow: None,
    };
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
                read_gzip(file, len, stream, access, folder, log)
            } else {
                let len = input_limit(len, limits, log);
                let head = read_plain(Plain::File { file: &file, len }, plan, scanner, folder, log);
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
                        0,
                    );
                }
                head
            }
        }
        Input::Bytes(bytes) => {
            if bytes.starts_with(&GZIP_MAGIC) {
                let len = bytes.len() as u64;
                read_gzip(
                    io::Cursor::new(&bytes[..]),
                    len,
                    stream,
                    access,
                    folder,
                    log,
                )
            } else {
                let len = input_limit(bytes.len() as u64, limits, log) as usize;
                read_plain(Plain::Mem(&bytes[..len]), plan, scanner, folder, log)
            }
        }
        // Analysis reads stdin itself (`read`); split refuses it before reading.
        Input::Reader(_) => {
            return Err(TraceError::NotSeekable {
                label: source.file().to_string(),
            });
        }
    };
    Ok(head)
}

/// Reads a stored gzip source of `len` bytes on the region workers (pieces.rs), as
/// `access` says.
fn read_gzip<R: Read + io::Seek + Send, S: Scanner, F: Folder<S>>(
    input: R,
    len: u64,
    job: StreamJob<'_, S>,
    access: Access<'_>,
    folder: &mut F,
    log: &mut ErrorLog,
) -> Head {
    let (counted, meter) = Meter::wrap(input, Some(len));
    match access {
        Access::Whole => read_pieces(Members::new(counted), &job, folder, log, Some(meter)).head,
        Access::Record(slot) => {
            let members = Members::recording(counted, &meter);
            let read = read_pieces(members, &job, folder, log, Some(meter));
            *slot = read
                .reader
                .and_then(Members::into_index)
                .map(|index| Trail {
                    index,
                    fetched: read.fetched,
                });
            read.head
        }
        Access::Resume(trail) => {
            let job = StreamJob {
                hollow: Some(&trail.fetched),
                ..job
            };
            let resumed = Resumed::new(counted, &trail.index);
            read_pieces(resumed, &job, folder, log, Some(meter)).head
        }
    }
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

/// Fills `buf` as far as the reader allows; returns how many bytes were read.
fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    match fill(r, buf) {
        (_, Some(e)) => Err(e),
        (n, None) => Ok(n),
    }
}

/// Fills `buf` as far as the reader allows: how many bytes were read, and the error that
/// stopped it short, if any (the gzip pieces and the sequential stream keep what came
/// before the error).
pub(super) fn fill(r: &mut impl Read, buf: &mut [u8]) -> (usize, Option<io::Error>) {
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

/// Where the array was found.
pub(crate) struct Found {
    /// Where its first element may start.
    pub(crate) body: u64,
    pub(crate) form: Form,
    pub(crate) head: Head,
}

/// Finds the array in the first bytes of `x` (reading more while the prefix goes on),
/// handing the text before it to `prefix`; the head of a read that found none otherwise.
pub(crate) fn locate<X: Fetch>(
    x: &mut X,
    limits: &Limits,
    log: &mut ErrorLog,
    prefix: impl FnOnce(&[u8]),
) -> Result<Found, Box<Head>> {
    let mut slot = Vec::new();
    let mut span = CHUNK as u64;
    loop {
        let f = x.fetch(&mut slot, 0, span);
        let eof = f.tail != Tail::More;
        match scan::locate_array(f.bytes, eof, limits) {
            Located::NeedMore => span = span.saturating_mul(2),
            Located::Array { key_at, body, form } => {
                // The array layout has no members: a folder copying them starts an object.
                prefix(match form {
                    Form::Object => &f.bytes[..key_at],
                    Form::Array => b"{",
                });
                return Ok(Found {
                    body: body as u64,
                    form,
                    head: found_array(&f.bytes[..key_at], log),
                });
            }
            other => {
                if let Some(p) = &f.broken {
                    log.push(p, 0);
                }
                return Err(Box::new(failed_head(other, f.broken.is_some(), log)));
            }
        }
    }
}

/// Reads an uncompressed input: finds the array in its first bytes, then reads the array
/// in regions (parallel.rs).
fn read_plain<S: Scanner, F: Folder<S>>(
    mut plain: Plain<'_>,
    plan: &ReadPlan<'_>,
    scanner: &S,
    folder: &mut F,
    log: &mut ErrorLog,
) -> Head {
    let found = locate(&mut plain, plan.limits, log, |prefix| folder.prefix(prefix));
    let Found { body, form, head } = match found {
        Ok(found) => found,
        Err(head) => return *head,
    };
    let threads = plan.threads();
    let job = parallel::Job {
        plain,
        scanner,
        form,
        cut: plan.cut,
        body,
        threads,
        max_suffix: plan.limits.max_prefix_bytes,
        map: plan.map,
    };
    parallel::read_array(job, folder, log);
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

    /// A mapped read on `threads` threads that cuts plain and decoded input alike at `cut`.
    fn plan(limits: &Limits, threads: usize, cut: Cut) -> ReadPlan<'_> {
        ReadPlan {
            limits,
            threads: Some(threads),
            cut,
            stream_cut: cut,
            map: true,
        }
    }

    fn analyse(
        source: &TraceSource,
        threads: usize,
        cut: Cut,
        map: bool,
    ) -> (u64, Vec<String>, Vec<u32>) {
        let mut c = Feed::new(None);
        let limits = Limits::default();
        let out = read(source, &plan(&limits, threads, cut).mapped(map), &mut c).unwrap();
        let names = c
            .fold
            .collected()
            .gpu
            .recs()
            .iter()
            .map(|g| g.name)
            .collect();
        (c.fold.event_total(), out.stream_errors, names)
    }

    /// What an observer saw, owned: `(cat, name, pid, tid, ts_ns, dur_ns, correlation)`.
    type Seen = Vec<(String, String, String, String, i64, i64, Option<i64>)>;

    /// What an observer saw, and whether it takes copies and memsets.
    struct Record(Seen, bool);

    impl EventObserver for Record {
        fn observes_copies(&self) -> bool {
            self.1
        }

        fn observe(&mut self, e: &ObservedEvent<'_>) {
            let id = |t: TraceId<'_>| format!("{t:?}");
            self.0.push((
                e.cat.to_owned(),
                e.name.to_owned(),
                id(e.pid),
                id(e.tid),
                e.ts_ns,
                e.dur_ns,
                e.correlation,
            ));
        }
    }

    /// Observed reads take the parallel path, whose workers digest GPU events into
    /// records: the observer still sees every observed event once, with its fields, in
    /// file order, whatever the regions and threads (digested kernels, copies and memsets
    /// interleaved with launches, Python frames and escaped names, which are not digested).
    /// An observer that does not take copies sees the same events less every copy and
    /// memset, digested or not.
    #[test]
    fn observed_events_keep_file_order_and_fields_whatever_the_regions() {
        let mut t = String::from("{\"traceEvents\":[");
        let mut expected: Seen = Vec::new();
        for i in 0..120i64 {
            let (cat, name) = match i % 6 {
                0 => ("kernel", format!("gemm_{}", i % 4)),
                1 if i % 12 == 1 => ("gpu_memcpy", "Memcpy DtoH".to_owned()),
                1 => ("gpu_memcpy", "Memcpy \\u0044toH".to_owned()),
                2 => ("gpu_memset", "Memset (Device)".to_owned()),
                3 => ("cuda_runtime", "cudaLaunchKernel".to_owned()),
                4 => ("python_function", format!("train.py({i}): step")),
                _ => ("kernel", "esc\\u0041pe".to_owned()),
            };
            let tid = if i % 4 == 0 {
                "\"stream 7\"".to_owned()
            } else {
                (i % 3).to_string()
            };
            t.push_str(&format!(
                r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":{pid},"tid":{tid},"ts":{i}.5,"dur":2,"args":{{"correlation":{i}}}}},{{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":{i},"dur":1}},"#,
                pid = i % 2
            ));
            let tid = if i % 4 == 0 {
                "Str(\"stream 7\")".to_owned()
            } else {
                format!("Int({})", i % 3)
            };
            let name = name.replace("\\u0041", "A").replace("\\u0044", "D");
            let pid = format!("Int({})", i % 2);
            expected.push((
                cat.to_owned(),
                name,
                pid,
                tid,
                i * 1000 + 500,
                2000,
                Some(i),
            ));
        }
        t.push_str(r#"{"ph":"X","cat":"cpu_op","name":"last","ts":1,"dur":1}]}"#);
        let copyless: Seen = expected
            .iter()
            .filter(|e| !e.0.starts_with("gpu_mem"))
            .cloned()
            .collect();
        let limits = Limits::default();
        let observe = |threads: usize, cut: Cut, copies: bool| {
            let mut seen = Record(Vec::new(), copies);
            let mut feed = Feed::new(Some(&mut seen));
            let source = TraceSource::from_bytes("t.json", t.clone().into_bytes());
            let out = read(&source, &plan(&limits, threads, cut), &mut feed).unwrap();
            assert!(out.stream_errors.is_empty(), "{:?}", out.stream_errors);
            drop(feed);
            seen.0
        };
        assert_eq!(observe(1, Cut::DEFAULT, true), expected);
        assert_eq!(observe(1, Cut::DEFAULT, false), copyless);
        for region in [64, 300, 1000] {
            for threads in [1, 3] {
                let cut = Cut { region, look: 256 };
                assert_eq!(
                    observe(threads, cut, true),
                    expected,
                    "region {region} x{threads}"
                );
                assert_eq!(
                    observe(threads, cut, false),
                    copyless,
                    "region {region} x{threads}, no copies"
                );
            }
        }
    }

    /// An observer that takes a device event by its numbers once it has seen its name
    /// whole under that number: `(cat, name, ts_ns, dur_ns, correlation)` of each event,
    /// and how many came by number.
    #[derive(Default)]
    struct ByNumber {
        seen: Vec<(String, String, i64, i64, Option<i64>)>,
        names: std::collections::HashMap<u64, String>,
        taken: usize,
    }

    impl EventObserver for ByNumber {
        fn observe_numbered(&mut self, e: &NumberedEvent) -> bool {
            let Some(name) = self.names.get(&e.name_id) else {
                return false;
            };
            let name = name.clone();
            let kind = e.kind.cat().to_owned();
            self.seen
                .push((kind, name, e.ts_ns, e.dur_ns, e.correlation));
            self.taken += 1;
            true
        }

        fn observe(&mut self, e: &ObservedEvent<'_>) {
            if let Some(id) = e.name_id {
                self.names.insert(id, e.name.to_owned());
            }
            let (cat, name) = (e.cat.to_owned(), e.name.to_owned());
            self.seen
                .push((cat, name, e.ts_ns, e.dur_ns, e.correlation));
        }
    }

    /// Device events taken by their numbers keep their place, kind and fields: whatever
    /// the regions and threads, an observer taking every event it can by number sees each
    /// event once, in file order, as one taking none sees it.
    #[test]
    fn events_taken_by_number_keep_their_place_and_fields() {
        let gz = std::fs::read(crate::test_files::fixture("eager.json.gz")).unwrap();
        let t = crate::test_files::gunzip(&gz);
        let limits = Limits::default();
        let read = |threads: usize, cut: Cut, numbered: bool| {
            let mut by_number = ByNumber::default();
            let mut whole = Record(Vec::new(), true);
            let observer: &mut dyn EventObserver =
                if numbered { &mut by_number } else { &mut whole };
            let mut feed = Feed::new(Some(observer));
            let source = TraceSource::from_bytes("t.json", t.clone());
            let out = read(&source, &plan(&limits, threads, cut), &mut feed).unwrap();
            assert!(out.stream_errors.is_empty(), "{:?}", out.stream_errors);
            drop(feed);
            let seen: Vec<_> = if numbered {
                by_number.seen
            } else {
                whole
                    .0
                    .into_iter()
                    .map(|(c, n, _, _, ts, d, corr)| (c, n, ts, d, corr))
                    .collect()
            };
            (seen, by_number.taken)
        };
        let (expected, _) = read(1, Cut::DEFAULT, false);
        for (region, threads) in [(1 << 20, 1), (1 << 20, 2), (20_000, 3), (5_000, 2)] {
            let cut = Cut { region, look: 4096 };
            let (seen, taken) = read(threads, cut, true);
            assert_eq!(seen, expected, "region {region} x{threads}");
            let device = expected
                .iter()
                .filter(|e| e.0 == "kernel" || e.0.starts_with("gpu_mem"))
                .count();
            assert!(
                taken > device / 2,
                "{taken} of {device} device events taken by number"
            );
        }
    }

    /// Everything a fold keeps of the events that are not GPU ones, ids included, in a
    /// form that compares.
    type Kept = (
        (u64, Option<i64>, Vec<String>),
        (Vec<(i64, i64)>, Vec<(i64, i64, u32)>, Vec<i64>, Vec<i64>),
        (
            Vec<(i64, u32, Option<crate::collect::Meta>)>,
            Vec<[i64; 4]>,
            Vec<[i64; 4]>,
        ),
        Vec<[i64; 3]>,
    );

    fn kept(c: &Collector) -> Kept {
        let c = c.collected();
        let names = (0..c.names.len() as u32)
            .map(|i| c.names.get(i).to_owned())
            .collect();
        let l = &c.launches;
        let mut links: Vec<(i64, i64)> = l.links().collect();
        links.sort_unstable();
        let at: Vec<(i64, i64, u32)> = (0..400)
            .filter_map(|k| l.at(k).map(|a| (k, a.ts, a.pid)))
            .collect();
        let sorted = |s: &crate::intern::Set<i64>| {
            let mut v: Vec<i64> = s.iter().copied().collect();
            v.sort_unstable();
            v
        };
        let ops = (0..400)
            .filter_map(|x| {
                c.cpu
                    .op(x)
                    .map(|o| (x, o.name, c.cpu.meta(o.meta).cloned()))
            })
            .collect();
        let span = |s: &crate::collect::Span| [i64::from(s.name), s.ts, s.dur, i64::from(s.pid)];
        let gpu = |s: &crate::collect::Span| [i64::from(s.name), s.ts, s.dur];
        (
            (c.event_total, c.first_complete_ts, names),
            (
                links,
                at,
                sorted(l.runtime_graph()),
                sorted(l.driver_graph()),
            ),
            (
                ops,
                c.cpu.steps().iter().map(span).collect(),
                c.cpu.spans().iter().map(span).collect(),
            ),
            c.gpu.annotations().iter().map(gpu).collect(),
        )
    }

    /// Region workers hand the fold ops, launches and annotations as briefs (their name
    /// tests made, their pids numbered): the fold keeps exactly what it keeps of the whole
    /// events the streamed read hands it, ids in the same order, whatever the regions,
    /// with escaped names, string pids, steps, namespaced ops and graph launches among
    /// them.
    #[test]
    fn briefed_events_fold_as_whole_ones() {
        let mut t = String::from("{\"traceEvents\":[");
        for i in 0..300i64 {
            let pid = match i % 7 {
                0 => "\"host\"".to_owned(),
                1 => "null".to_owned(),
                _ => (i % 3).to_string(),
            };
            let ext = if i % 5 == 0 {
                String::new()
            } else {
                format!(r#","External id":{}"#, i % 40)
            };
            let ev = match i % 9 {
                0 => format!(
                    r#""cat":"cpu_op","name":"ProfilerStep#{i}","args":{{"Input Dims":[]{ext}}}"#
                ),
                1 => format!(
                    r#""cat":"cpu_op","name":"aten::mm","args":{{"Input Dims":[[{i},2]],"Input type":["float"]{ext}}}"#
                ),
                2 => format!(
                    r#""cat":"cpu_op","name":"esc\u0041pe::{}","args":{{"Kernel file":"k.py","Kernel backend":"triton"{ext}}}"#,
                    i % 3
                ),
                3 => format!(
                    r#""cat":"cuda_runtime","name":"cudaGraphLaunch","args":{{"correlation":{i}{ext}}}"#
                ),
                4 => format!(
                    r#""cat":"cuda_driver","name":"cuGraphLaunch","args":{{"correlation":{i}}}"#
                ),
                5 => format!(
                    r#""cat":"cuda_runtime","name":"cudaLaunchKernel","args":{{"correlation":{i}{ext}}}"#
                ),
                6 => format!(
                    r#""cat":"user_annotation","name":"ProfilerStep#{}","args":{{}}"#,
                    i % 4
                ),
                7 => format!(
                    r#""cat":"gpu_user_annotation","name":"region {}","args":{{}}"#,
                    i % 4
                ),
                _ => format!(
                    r#""cat":"cpu_op","name":"my_op","args":{{{}}}"#,
                    ext.trim_start_matches(',')
                ),
            };
            let ph = if i % 11 == 0 { "i" } else { "X" };
            t.push_str(&format!(
                r#"{{"ph":"{ph}",{ev},"pid":{pid},"tid":1,"ts":{},"dur":{}}},"#,
                1000 - i,
                i % 13
            ));
        }
        t.push_str(r#"{"ph":"X","cat":"cpu_op","name":"last","pid":1,"tid":1,"ts":1,"dur":1}]}"#);
        let limits = Limits::default();
        let mut whole = Feed::new(None);
        let mut log = ErrorLog::default();
        read_stream(t.as_bytes(), false, &limits, &mut whole, &mut log, None);
        let expected = kept(&whole.fold);
        assert_eq!(expected.0.0, 301);
        assert!(!expected.1.2.is_empty() && !expected.1.3.is_empty());
        assert!(!expected.2.1.is_empty() && !expected.3.is_empty());
        for (region, threads) in [(1 << 20, 1), (300, 1), (700, 3)] {
            let mut feed = Feed::new(None);
            let cut = Cut { region, look: 256 };
            let source = TraceSource::from_bytes("t.json", t.clone().into_bytes());
            let out = read(&source, &plan(&limits, threads, cut), &mut feed).unwrap();
            assert!(out.stream_errors.is_empty(), "{:?}", out.stream_errors);
            assert_eq!(kept(&feed.fold), expected, "region {region} x{threads}");
        }
    }

    /// Region starts are guessed from the bytes `}, {`; strings holding that pattern must
    /// not change the result, nor must problems or elements that straddle a region or its
    /// look-ahead (or several of them), in memory, read from a file or decoded from gzip.
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
            if i % 61 == 0 {
                // Longer than a region and its look-ahead: finished by the reading thread.
                let long = "x".repeat(5000);
                t.push_str(&format!(
                    r#"{{"ph":"X","cat":"kernel","name":"long{i}","ts":{i},"dur":1,"args":{{"pad":"{long}"}}}},"#
                ));
            }
        }
        t.push_str("{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"last\",\"ts\":1,\"dur\":1}]}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        std::fs::write(&path, &t).unwrap();
        let mem = || TraceSource::from_bytes("t.json", t.clone().into_bytes());
        let gz = {
            use std::io::Write;
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(t.as_bytes()).unwrap();
            e.finish().unwrap()
        };
        let sequential = analyse(&mem(), 1, Cut::DEFAULT, false);
        assert_eq!(sequential.0, 205);
        assert!(!sequential.1.is_empty());
        for region in [16, 50, 97, 256, 1000] {
            for look in [8, 40, 300] {
                let cut = Cut { region, look };
                for threads in [1, 4] {
                    assert_eq!(
                        analyse(&mem(), threads, cut, false),
                        sequential,
                        "region {region} look {look}"
                    );
                    // A file, mapped and copied.
                    for map in [true, false] {
                        let file = TraceSource::open(&path).unwrap();
                        assert_eq!(
                            analyse(&file, threads, cut, map),
                            sequential,
                            "file, map {map}, region {region} look {look}"
                        );
                    }
                    // Gzip: decoded pieces cut the same way.
                    let gzip = TraceSource::from_bytes("t.json.gz", gz.clone());
                    assert_eq!(
                        analyse(&gzip, threads, cut, false),
                        sequential,
                        "gzip, region {region} look {look}"
                    );
                }
            }
        }
    }

    /// A scanner (and fold) that truncates the trace file to `to` bytes at its first sight
    /// of the region whose bytes hold byte `trigger`: before scanning it (`in_fold` false)
    /// or before folding it (true).
    struct Shrink<'l> {
        inner: Analyse<'l>,
        file: File,
        to: u64,
        trigger: u64,
        in_fold: bool,
        done: std::sync::atomic::AtomicBool,
    }

    impl Shrink<'_> {
        fn maybe(&self, at: u64, len: usize, now: bool) {
            if now
                && (at..at + len as u64).contains(&self.trigger)
                && !self.done.swap(true, Ordering::SeqCst)
            {
                self.file.set_len(self.to).unwrap();
            }
        }
    }

    impl Scanner for Shrink<'_> {
        type Out<'a> = (u64, usize, Region<'a>);

        fn scan<'a>(&self, span: Span<'a, '_>) -> Scanned<Self::Out<'a>> {
            let (at, len) = (span.at, span.buf.len());
            self.maybe(at, len, !self.in_fold);
            let s = self.inner.scan(span);
            Scanned {
                out: (at, len, s.out),
                next: s.next,
                ended: s.ended,
                clean: s.clean,
                broke: s.broke,
            }
        }
    }

    struct ShrinkFeed<'f, 's, 'l>(&'f mut Feed<'s>, &'f Shrink<'l>);

    impl<'l> Folder<Shrink<'l>> for ShrinkFeed<'_, '_, 'l> {
        fn apply(&mut self, (at, len, r): (u64, usize, Region<'_>), log: &mut ErrorLog) {
            self.1.maybe(at, len, self.1.in_fold);
            self.0.apply(r, log);
        }
    }

    /// Kineto-like kernels, `n` of them, each about 150 bytes.
    fn kernels(n: usize) -> String {
        let mut t = String::from("{\"traceEvents\": [");
        for i in 0..n {
            t.push_str(&format!(
                r#"{{"ph": "X", "cat": "kernel", "name": "kernel_{}", "pid": 0, "tid": 7, "ts": {i}.5, "dur": 1.25, "args": {{"correlation": {i}, "grid": [64, 1, 1]}}}}, "#,
                i % 13
            ));
        }
        t.push_str("{\"ph\": \"i\", \"name\": \"end\", \"ts\": 1}]}");
        t
    }

    /// Reads `path` (whose length was `len` when opened) with a mapped or copied plain
    /// read through `scanner`/`folder`; the fold's kept state and the stream errors.
    fn read_shrinking(
        path: &std::path::Path,
        len: u64,
        map: bool,
        threads: usize,
        to: Option<(u64, u64, bool)>,
    ) -> (Kept, Vec<String>) {
        let file = File::open(path).unwrap();
        let limits = Limits::default();
        let plan = ReadPlan {
            limits: &limits,
            threads: Some(threads),
            cut: Cut {
                region: 4096,
                look: 512,
            },
            stream_cut: STREAM_CUT,
            map,
        };
        // The guard can be had here, so a mapped read does map.
        assert!(map::Map::new(&file, len).is_some());
        let plain = Plain::File { file: &file, len };
        let mut feed = Feed::new(None);
        let inner = Analyse {
            limits: &limits,
            wanted: feed.wanted(),
            observed: feed.observes(),
        };
        let mut log = ErrorLog::default();
        let (to, trigger, in_fold) = to.unwrap_or((u64::MAX, u64::MAX, false));
        let shrink = Shrink {
            inner,
            file: std::fs::OpenOptions::new().write(true).open(path).unwrap(),
            to,
            trigger,
            in_fold,
            done: Default::default(),
        };
        let mut folder = ShrinkFeed(&mut feed, &shrink);
        read_plain(plain, &plan, &shrink, &mut folder, &mut log);
        (kept(&feed.fold), log.finish())
    }

    /// Cuts in the middle of region k's own bytes (past the look of region k - 1, before
    /// the start of region k + 1), so that region k alone holds the cut.
    fn mid_region_cuts(len: u64) -> impl Iterator<Item = u64> {
        let body = "{\"traceEvents\": [".len() as u64;
        [30, 77, 120].into_iter().map(move |k| {
            let to = body + k * 4096 + 2048;
            assert!(to < len);
            to
        })
    }

    /// For each cut and 2 and 4 threads: a mapped read of `t` truncated to the cut at the
    /// region holding `trigger(cut)` (its scan, or its fold when `in_fold`) equals a copied
    /// read of the file already truncated: the events before the cut, and the shrink as a
    /// stream error.
    fn reads_as_a_short_copy(t: &str, trigger: impl Fn(u64) -> u64, in_fold: bool) {
        let len = t.len() as u64;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        std::fs::write(&path, t).unwrap();
        let whole = read_shrinking(&path, len, true, 2, None);
        assert!(whole.1.is_empty(), "{:?}", whole.1);
        for to in mid_region_cuts(len) {
            std::fs::write(&path, &t[..to as usize]).unwrap();
            let want = read_shrinking(&path, len, false, 2, None);
            assert!(want.1.iter().any(|e| e.contains("shrank")), "{:?}", want.1);
            assert!(want.0.0.0 > 500 && want.0.0.0 < whole.0.0.0);
            for threads in [2, 4] {
                std::fs::write(&path, t).unwrap();
                let got =
                    read_shrinking(&path, len, true, threads, Some((to, trigger(to), in_fold)));
                assert_eq!(std::fs::metadata(&path).unwrap().len(), to);
                assert_eq!(got, want, "to {to}, {threads} threads");
            }
        }
    }

    /// A mapped file truncated after its region's pages were found sound and before they
    /// were scanned (the scan meets zero pages, or SIGBUS turned into zero pages by the
    /// guard) reads exactly as a copied read of the file already truncated.
    #[test]
    fn a_mapped_file_that_shrinks_while_read_reads_as_a_short_copy() {
        reads_as_a_short_copy(&kernels(4000), |to| to, false);
    }

    /// A mapped file truncated while an earlier region is folded, when the workers may
    /// already have scanned the regions past the cut from sound bytes: the reading thread
    /// reads those again rather than fold what the file no longer holds (their names now
    /// read as zeros from the map), so the result is again a short copied read's.
    #[test]
    fn regions_scanned_before_a_shrink_are_read_again_not_folded() {
        // Truncated as region k - 6 is folded: the workers run up to eight regions ahead
        // of the fold.
        reads_as_a_short_copy(&kernels(4000), |to| to - 6 * 4096, true);
    }

    /// A mapped file truncated while a region is being folded: the fold may have read
    /// zeros for that region's texts, so the read stops after it and says so.
    #[test]
    fn a_mapped_file_that_shrinks_while_folded_is_reported() {
        let t = kernels(4000);
        let len = t.len() as u64;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        let to = len / 2 + 3000;
        std::fs::write(&path, &t).unwrap();
        let whole = read_shrinking(&path, len, true, 2, None);
        for threads in [2, 4] {
            std::fs::write(&path, &t).unwrap();
            let (got, errors) = read_shrinking(&path, len, true, threads, Some((to, to, true)));
            assert!(
                errors
                    .iter()
                    .any(|e| e.contains("were being counted when it did")),
                "{errors:?}"
            );
            assert_eq!(errors.len(), 1, "{errors:?}");
            // The events up to the region being folded, none after it.
            let events = got.0.0;
            assert!(events > 1000 && events < whole.0.0.0, "{events}");
        }
    }
}
