//! What a caller can ask of an analysis: window, row count, limits, threads.

use crate::error::TraceError;

/// Bounds that keep hostile or broken input from using unbounded memory (trace.md "Public API sketch (names only)", trace.md "Streaming reader and error semantics").
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Most bytes allowed before the `"traceEvents"` key (default 16 MiB).
    pub max_prefix_bytes: usize,
    /// Longest single event object in bytes (default 64 MiB).
    pub max_event_bytes: usize,
    /// Most bytes of trace text read, after decompression (default: no limit). A
    /// decompression bomb then stops at this size with a `LimitExceeded` input error,
    /// keeping the events read so far.
    pub max_input_bytes: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_prefix_bytes: 16 * 1024 * 1024,
            max_event_bytes: 64 * 1024 * 1024,
            max_input_bytes: None,
        }
    }
}

impl Limits {
    /// Limits with the given prefix and event sizes.
    pub fn new(max_prefix_bytes: usize, max_event_bytes: usize) -> Self {
        Limits {
            max_prefix_bytes,
            max_event_bytes,
            max_input_bytes: None,
        }
    }

    /// The same limits with a cap on the bytes of trace text read.
    pub fn with_max_input_bytes(mut self, max: u64) -> Self {
        self.max_input_bytes = Some(max);
        self
    }
}

/// A half-open GPU time window `[start_ns, end_ns)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeWindow {
    start_ns: i64,
    end_ns: i64,
}

impl TimeWindow {
    /// A window; `end_ns < start_ns` is [`TraceError::InvalidWindow`].
    pub fn new(start_ns: i64, end_ns: i64) -> Result<Self, TraceError> {
        if end_ns < start_ns {
            return Err(TraceError::InvalidWindow { start_ns, end_ns });
        }
        Ok(TimeWindow { start_ns, end_ns })
    }

    /// A window from `start_ns` to at least `start_ns`.
    pub(crate) fn clamped(start_ns: i64, end_ns: i64) -> Self {
        TimeWindow {
            start_ns,
            end_ns: end_ns.max(start_ns),
        }
    }

    /// Parses `START_US:END_US` (decimal µs, converted exactly as `ts` is).
    pub fn parse_us(spec: &str) -> Result<Self, TraceError> {
        let bad = || TraceError::InvalidWindowSpec {
            spec: spec.to_string(),
        };
        let (a, b) = spec.split_once(':').ok_or_else(bad)?;
        let a = crate::number::micros_text_to_ns(a.trim().as_bytes()).ok_or_else(bad)?;
        let b = crate::number::micros_text_to_ns(b.trim().as_bytes()).ok_or_else(bad)?;
        TimeWindow::new(a, b)
    }

    /// Start, inclusive, in ns.
    pub fn start_ns(&self) -> i64 {
        self.start_ns
    }

    /// End, exclusive, in ns.
    pub fn end_ns(&self) -> i64 {
        self.end_ns
    }

    /// Whether an event starting at `ts` is kept (`start <= ts < end`).
    pub fn contains(&self, ts: i64) -> bool {
        self.start_ns <= ts && ts < self.end_ns
    }

    /// Length in ns.
    pub fn len_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }
}

/// Where steady-state step spans come from (trace.md "Steady-state window").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum StepSource {
    /// GPU annotations, then CPU `ProfilerStep#N` spans.
    #[default]
    Auto,
    /// GPU annotations only (trace.md "Annotation rule").
    Annotation,
    /// CPU `ProfilerStep#N` spans only (trace.md "CPU-step fallback").
    CpuSteps,
}

/// Which part of the trace the aggregates cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum WindowMode {
    /// The whole trace.
    #[default]
    Full,
    /// One representative repeating step (trace.md "Steady-state window").
    Steady {
        /// Fewest repeats a step group needs (default 3).
        min_repeats: usize,
        /// Where step spans come from.
        source: StepSource,
    },
    /// A window the caller chose.
    Explicit(TimeWindow),
    /// A window the caller chose as offsets from the trace's first event (its ns are
    /// offsets, not timestamps); it becomes the [`WindowMode::Explicit`] window it names
    /// once the trace is read (trace.md, relative windows).
    Relative(TimeWindow),
}

impl WindowMode {
    /// `Steady` with the default repeat count and the given source.
    pub fn steady(source: StepSource) -> Self {
        WindowMode::Steady {
            min_repeats: 3,
            source,
        }
    }
}

/// Which capture cycles all-ranks mode reads when a rank has several files (several
/// capture cycles, as `tensorboard_trace_handler` with `repeat` writes them; trace.md "All-ranks mode").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Cycles {
    /// One entry per rank: its latest capture.
    #[default]
    Latest,
    /// One entry per file, in capture order within each rank.
    All,
}

/// Options of [`crate::analyze`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// Rows kept per table (default 10; 0 keeps all).
    pub top_k: usize,
    /// Keep per-kernel launch records for [`crate::Analysis::launches`].
    pub emit_launches: bool,
    /// Worker threads: None = rayon's default, 1 = sequential. Results never depend on it.
    pub threads: Option<usize>,
    /// Which part of the trace to aggregate.
    pub window: WindowMode,
    /// Input bounds.
    pub limits: Limits,
    /// Extra kernel-name substrings counted as communication (trace.md "Categories").
    pub extra_comm_patterns: Vec<String>,
    /// All-ranks mode: which capture cycles of a rank are read (default the latest).
    pub cycles: Cycles,
    /// Read a plain trace file's pages through a memory map instead of copying them
    /// (default true; results do not depend on it for a file that does not change while
    /// it is read). The first mapped read installs a process-wide SIGBUS handler, so that
    /// a file truncated while it is read is reported as a stream error instead of killing
    /// the process; it passes every other SIGBUS to the action that was there before. A
    /// read maps only while that handler is in place and the calling thread does not block
    /// SIGBUS. Turn it off in a host that must not have a handler installed: the read then
    /// copies with `pread` (0.84-0.86x the time mapped on two cores, PERFORMANCE.md
    /// "Session 12").
    pub map_files: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            top_k: 10,
            emit_launches: false,
            threads: None,
            window: WindowMode::Full,
            limits: Limits::default(),
            extra_comm_patterns: Vec::new(),
            cycles: Cycles::Latest,
            map_files: true,
        }
    }
}

impl Options {
    /// Rows kept per table (0 keeps all).
    pub fn with_top_k(mut self, top_k: usize) -> Self {
        self.top_k = top_k;
        self
    }

    /// Keep per-kernel launch records.
    pub fn with_launches(mut self, emit: bool) -> Self {
        self.emit_launches = emit;
        self
    }

    /// Read plain files through a memory map ([`Options::map_files`]).
    pub fn with_map_files(mut self, map: bool) -> Self {
        self.map_files = map;
        self
    }

    /// Worker threads (None: rayon's default).
    pub fn with_threads(mut self, threads: Option<usize>) -> Self {
        self.threads = threads;
        self
    }

    /// Which part of the trace to aggregate.
    pub fn with_window(mut self, window: WindowMode) -> Self {
        self.window = window;
        self
    }

    /// Input bounds.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Extra kernel-name substrings counted as communication.
    pub fn with_comm_patterns(mut self, patterns: Vec<String>) -> Self {
        self.extra_comm_patterns = patterns;
        self
    }

    /// All-ranks mode: which capture cycles of a rank are read.
    pub fn with_cycles(mut self, cycles: Cycles) -> Self {
        self.cycles = cycles;
        self
    }
}
