//! The opt-in observer: hands selected events to a caller during the one pass.

use crate::event::IdVal;

/// A `pid` or `tid` as it appeared in the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TraceId<'a> {
    /// An integer id.
    Int(i64),
    /// A string id (e.g. `"Spans"`).
    Str(&'a str),
    /// Absent or of another type.
    Null,
}

impl<'a> From<&'a IdVal<'_>> for TraceId<'a> {
    fn from(v: &'a IdVal<'_>) -> Self {
        match v {
            IdVal::Int(i) => TraceId::Int(*i),
            IdVal::Str(s) => TraceId::Str(s),
            IdVal::Null => TraceId::Null,
        }
    }
}

impl serde::Serialize for TraceId<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            TraceId::Int(i) => s.serialize_i64(*i),
            TraceId::Str(t) => s.serialize_str(t),
            TraceId::Null => s.serialize_none(),
        }
    }
}

/// An event handed to an [`EventObserver`]: borrowed, valid only during the call.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ObservedEvent<'a> {
    /// `kernel`, `gpu_memcpy`, `gpu_memset`, `cuda_runtime`, `cuda_driver` or
    /// `python_function`; an observer ignores the categories it does not use.
    pub cat: &'a str,
    /// The event name.
    pub name: &'a str,
    /// Process id.
    pub pid: TraceId<'a>,
    /// Thread id.
    pub tid: TraceId<'a>,
    /// Start, ns.
    pub ts_ns: i64,
    /// Duration, ns (never negative).
    pub dur_ns: i64,
    /// `args.correlation` when it is an integer.
    pub correlation: Option<i64>,
    /// An opaque number for `name`, when the reader numbered it: events with the same
    /// `name_id` have the same name, in this read and in any other read of this process
    /// (each read's numbers carry the read's own serial), so an observer may key on it
    /// instead of hashing the name (a kernel's can be hundreds of bytes). `None` for the
    /// names the reader did not number; two names may still be equal with different ids.
    pub name_id: Option<u64>,
    /// An opaque number for `(pid, tid)`, as `name_id` is for the name: events with the same
    /// `track_id` have equal `pid` and `tid` (a device event's GPU and stream), in any read
    /// of this process. `None` where the reader did not number them.
    pub track_id: Option<u64>,
}

/// Which device event a [`NumberedEvent`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeviceKind {
    /// `kernel`.
    Kernel,
    /// `gpu_memcpy`.
    Memcpy,
    /// `gpu_memset`.
    Memset,
}

impl DeviceKind {
    /// The event's `cat`, as [`ObservedEvent::cat`] gives it.
    pub fn cat(self) -> &'static str {
        match self {
            DeviceKind::Kernel => "kernel",
            DeviceKind::Memcpy => "gpu_memcpy",
            DeviceKind::Memset => "gpu_memset",
        }
    }
}

/// A device event offered by its numbers, before its name and ids are decoded
/// ([`EventObserver::observe_numbered`]).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct NumberedEvent {
    /// Kernel, copy or memset.
    pub kind: DeviceKind,
    /// The number of the event's name, as [`ObservedEvent::name_id`] gives it.
    pub name_id: u64,
    /// The number of the event's `(pid, tid)`, as [`ObservedEvent::track_id`] gives it.
    pub track_id: Option<u64>,
    /// Start, ns.
    pub ts_ns: i64,
    /// Duration, ns (never negative).
    pub dur_ns: i64,
    /// `args.correlation` when it is an integer.
    pub correlation: Option<i64>,
}

/// Receives every device event (kernel, `gpu_memcpy`, `gpu_memset`; copies and memsets
/// only when [`EventObserver::observes_copies`]), launch (runtime/driver) and
/// `python_function` event, in file order.
pub trait EventObserver {
    /// Called once per event, during the read, on the thread that called the analysis.
    /// Observing does not take the read off its parallel path (trace.md, Reading model).
    fn observe(&mut self, event: &ObservedEvent<'_>);

    /// Called once when the read has handed over its last event, before the analysis
    /// is built from what it read (on the same thread), so that an observer may start
    /// its own work on what it saw meanwhile. Not called when the read fails. Does
    /// nothing by default.
    fn read_done(&mut self) {}

    /// Whether the observer is handed `gpu_memcpy` and `gpu_memset` events: true by
    /// default. An observer that ignores them says false, and the reader does not build
    /// those events for it (a graph capture holds a memset for every few kernels, and
    /// handing one over costs as much as handing over a kernel). Asked once, before the
    /// read starts.
    fn observes_copies(&self) -> bool {
        true
    }

    /// Offered first, for each device event whose name the reader numbered (the ones its
    /// region workers digest), with only the fields that need no decoding. An observer
    /// that needs nothing more of this event (it has seen the name under this `name_id`
    /// already, and the ids under this `track_id` or does not use them) takes it and
    /// returns true, and
    /// [`EventObserver::observe`] is not called for it. One that returns false is handed
    /// the same event through `observe` next, before any other. False by default, so every
    /// event comes through `observe`.
    ///
    /// Why: building an [`ObservedEvent`] (the name and ids decoded, the struct filled, the
    /// call) is most of what an observed read costs beyond a plain one, and an index keyed
    /// on `name_id` needs none of it for a name it knows (the launcher index: a trace runs
    /// a few dozen kernels a million times).
    fn observe_numbered(&mut self, event: &NumberedEvent) -> bool {
        let _ = event;
        false
    }
}

/// Receives read progress during the pass, on the thread that called the analysis.
///
/// `done` and `total` are bytes of the input as stored: the file for plain
/// traces, the compressed file for gzip ones; `total` is None for a stream of unknown
/// length (stdin). Calls are a few per megabyte at most, so a sink may redraw a bar.
pub trait ProgressSink {
    /// `done` of `total` bytes read so far.
    fn progress(&mut self, done: u64, total: Option<u64>);
}
