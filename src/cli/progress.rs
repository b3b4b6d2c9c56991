//! Progress on standard error for long work, drawn with indicatif: a byte bar while a large
//! trace is read, a spinner with the elapsed time for work without a measure (walking and
//! scanning source trees). The one place that decides whether progress is drawn: only when
//! standard error is a terminal and the output is for people (never with `--json` or
//! `--csv`), so a pipe, a CI log or a machine-read document never carries it (cli.md
//! conventions).

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kernlens_trace::TraceSource;

use super::Env;

/// Traces at least this large (decoded bytes; stored bytes when the decoded size is not
/// known) get a progress bar: smaller ones are read before a bar is worth drawing.
pub const PROGRESS_TRACE_BYTES: u64 = 64 * 1024 * 1024;

/// Whether one invocation draws progress.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    on: bool,
}

impl Progress {
    /// Progress for an invocation whose standard output is `machine` output (JSON, CSV) or
    /// not; drawn only when standard error is a terminal and the output is for people.
    pub fn new(env: &Env, machine: bool) -> Progress {
        Progress {
            on: env.stderr_is_terminal() && !machine,
        }
    }

    /// A bar for reading `source` when it is a file large enough to need one.
    pub fn trace(self, source: &TraceSource) -> Option<TraceBar> {
        if !self.on {
            return None;
        }
        let size = source.path().and_then(stored_and_decoded)?;
        if size.decoded.unwrap_or(size.stored) < PROGRESS_TRACE_BYTES {
            return None;
        }
        let length = size.decoded.unwrap_or(size.stored);
        let bar = ProgressBar::with_draw_target(Some(length), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "reading {msg} [{wide_bar}] {bytes}/{total_bytes} {percent}% {elapsed}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_message(source.file().to_owned());
        bar.tick();
        Some(TraceBar {
            bar,
            decoded: size.decoded,
        })
    }

    /// A spinner showing `message` and the elapsed time until dropped.
    pub fn spinner(self, message: String) -> Option<Spinner> {
        if !self.on {
            return None;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message(message);
        bar.tick();
        bar.enable_steady_tick(Duration::from_millis(100));
        Some(Spinner(bar))
    }
}

/// The sizes of a trace file: as stored, and decoded when it is gzip whose trailer gives
/// a usable size.
struct TraceSize {
    stored: u64,
    decoded: Option<u64>,
}

/// The stored size, and for gzip the decoded size from the trailer's ISIZE (the last
/// member's length mod 4 GiB). ISIZE is used only when it is at least the stored size:
/// below that it has wrapped (or the file is multi-member), and the bar falls back to
/// stored bytes. Either way its fraction is the reader's, so the percentage stays right.
fn stored_and_decoded(path: &Path) -> Option<TraceSize> {
    let mut file = std::fs::File::open(path).ok()?;
    let stored = file.metadata().ok()?.len();
    let mut magic = [0u8; 2];
    let gzip = file.read_exact(&mut magic).is_ok() && magic == [0x1f, 0x8b];
    let decoded = if gzip && stored >= 18 {
        let mut isize = [0u8; 4];
        file.seek(SeekFrom::End(-4))
            .and_then(|_| file.read_exact(&mut isize))
            .ok()
            .map(|()| u64::from(u32::from_le_bytes(isize)))
            .filter(|&n| n >= stored)
    } else {
        None
    };
    Some(TraceSize { stored, decoded })
}

/// A trace-read bar, fed by the reader (stored bytes) and cleared when dropped.
pub struct TraceBar {
    bar: ProgressBar,
    decoded: Option<u64>,
}

impl kernlens_trace::ProgressSink for TraceBar {
    fn progress(&mut self, done: u64, total: Option<u64>) {
        let position = match (self.decoded, total) {
            // The reader counts compressed bytes: scale its fraction to decoded bytes.
            (Some(decoded), Some(total)) if total > 0 => {
                (u128::from(done.min(total)) * u128::from(decoded) / u128::from(total)) as u64
            }
            _ => done,
        };
        self.bar.set_position(position);
    }
}

impl Drop for TraceBar {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// A spinner line, cleared when dropped.
pub struct Spinner(ProgressBar);

impl Drop for Spinner {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// Reads a trace with `progress`'s bar when it needs one: `analyze_with_progress` then, else
/// the plain read. `observer` rides along either way.
pub fn analyze(
    progress: Progress,
    source: &TraceSource,
    opts: &kernlens_trace::Options,
    observer: Option<&mut (dyn kernlens_trace::EventObserver + 'static)>,
) -> Result<kernlens_trace::Analysis, kernlens_trace::TraceError> {
    match progress.trace(source) {
        Some(mut bar) => {
            let observer = observer.map(|o| o as &mut dyn kernlens_trace::EventObserver);
            kernlens_trace::analyze_with_progress(source, opts, observer, &mut bar)
        }
        None => match observer {
            Some(observer) => kernlens_trace::analyze_observed(source, opts, observer),
            None => kernlens_trace::analyze(source, opts),
        },
    }
}
