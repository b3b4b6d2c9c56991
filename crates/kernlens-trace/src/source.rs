//! Trace sources: a file, a directory of traces, stdin, a reader or bytes (trace.md "Input resolution").

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::TraceError;
use crate::select::{self, Selection};

pub(crate) enum Input {
    File(PathBuf),
    Bytes(Vec<u8>),
    Reader(Mutex<Option<Box<dyn Read + Send>>>),
}

/// Something to read a trace from. Build it with [`TraceSource::open`],
/// [`TraceSource::from_reader`] or [`TraceSource::from_bytes`].
pub struct TraceSource {
    label: String,
    pub(crate) input: Input,
    analyzed_rank: Option<u64>,
    rank_count: usize,
    selected_capture_fragment: bool,
    cycles: usize,
    cycle: usize,
}

impl std::fmt::Debug for TraceSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceSource")
            .field("file", &self.label)
            .field("analyzed_rank", &self.analyzed_rank)
            .field("rank_count", &self.rank_count)
            .field("selected_capture_fragment", &self.selected_capture_fragment)
            .field("cycles", &self.cycles)
            .field("cycle", &self.cycle)
            .finish()
    }
}

impl TraceSource {
    /// Resolves `input`: `-` is stdin, a file is used whatever its name, a directory
    /// selects one trace by the rules of trace.md "Directory selection (deterministic)".
    pub fn open(input: impl AsRef<Path>) -> Result<Self, TraceError> {
        let input = input.as_ref();
        if input.as_os_str() == "-" {
            return Ok(TraceSource::from_reader("-", std::io::stdin()));
        }
        let meta = fs::metadata(input).map_err(|_| TraceError::NoUsableTrace {
            input: input.display().to_string(),
        })?;
        if meta.is_dir() {
            let sel = select::select(input)?;
            return Ok(TraceSource::from_selection(sel));
        }
        if !meta.is_file() {
            return Err(TraceError::NoUsableTrace {
                input: input.display().to_string(),
            });
        }
        Ok(TraceSource {
            label: input.display().to_string(),
            input: Input::File(input.to_path_buf()),
            analyzed_rank: None,
            rank_count: 1,
            selected_capture_fragment: select::is_sidecar_single(input),
            cycles: 1,
            cycle: 1,
        })
    }

    pub(crate) fn from_selection(sel: Selection) -> Self {
        TraceSource {
            label: sel.path.display().to_string(),
            input: Input::File(sel.path),
            analyzed_rank: sel.rank,
            rank_count: sel.rank_count,
            selected_capture_fragment: sel.capture_fragment,
            cycles: sel.cycles,
            cycle: sel.cycle,
        }
    }

    /// A source that streams from `reader` (plain or gzip); it can be read once.
    pub fn from_reader(label: impl Into<String>, reader: impl Read + Send + 'static) -> Self {
        TraceSource {
            label: label.into(),
            input: Input::Reader(Mutex::new(Some(Box::new(reader)))),
            analyzed_rank: None,
            rank_count: 1,
            selected_capture_fragment: false,
            cycles: 1,
            cycle: 1,
        }
    }

    /// A source over bytes in memory (plain or gzip).
    pub fn from_bytes(label: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        TraceSource {
            label: label.into(),
            input: Input::Bytes(bytes.into()),
            analyzed_rank: None,
            rank_count: 1,
            selected_capture_fragment: false,
            cycles: 1,
            cycle: 1,
        }
    }

    /// The resolved file on disk, for a file or directory source (`None` for a reader or
    /// bytes). A caller writing an output compares against it, so it never overwrites
    /// the trace it reads.
    pub fn path(&self) -> Option<&Path> {
        match &self.input {
            Input::File(path) => Some(path),
            _ => None,
        }
    }

    /// The resolved path, or the label of a reader or bytes source (`-` for stdin).
    pub fn file(&self) -> &str {
        &self.label
    }

    /// The rank parsed from the chosen file's name, when a directory was resolved.
    pub fn analyzed_rank(&self) -> Option<u64> {
        self.analyzed_rank
    }

    /// Distinct ranks among the directory's non-sidecar traces (1 for a single input).
    pub fn rank_count(&self) -> usize {
        self.rank_count
    }

    /// Capture cycles (files) of the analysed rank in a directory input, as
    /// `tensorboard_trace_handler` with `repeat` writes them (1 for a single input).
    pub fn cycles(&self) -> usize {
        self.cycles
    }

    /// Which of [`TraceSource::cycles`] this source reads: 1-based, in capture order.
    pub fn cycle(&self) -> usize {
        self.cycle
    }

    /// Whether the chosen file is a capture sidecar (a fragment, not the main trace).
    pub fn selected_capture_fragment(&self) -> bool {
        self.selected_capture_fragment
    }

    /// Takes the reader of a stream source; a second call fails with `SourceConsumed`.
    pub(crate) fn take_reader(&self) -> Result<Option<Box<dyn Read + Send>>, TraceError> {
        let Input::Reader(cell) = &self.input else {
            return Ok(None);
        };
        let mut guard = cell.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match guard.take() {
            Some(r) => Ok(Some(r)),
            None => Err(TraceError::SourceConsumed {
                label: self.label.clone(),
            }),
        }
    }
}
