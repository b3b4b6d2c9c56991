//! Progress on standard error for long work: a byte-accurate line while a large trace is
//! read, a spinner with elapsed time for work without a measure (a tree walk). Shown only
//! when standard error is a terminal and never with `--json` (cli.md conventions).

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Traces at least this large (stored bytes) get a progress line.
pub const PROGRESS_TRACE_BYTES: u64 = 64 * 1024 * 1024;

const REDRAW: Duration = Duration::from_millis(100);

/// Whether progress may be drawn at all.
pub fn wanted(json: bool) -> bool {
    !json && std::io::stderr().is_terminal()
}

/// A `reading <trace>: 45% (340 of 758 MB) 1.2s` line fed by the reader.
pub struct ReadProgress {
    label: String,
    started: Instant,
    last: Option<Instant>,
}

impl ReadProgress {
    /// A progress line for reading `path`, when it is large enough to need one.
    pub fn for_trace(path: &str, json: bool) -> Option<ReadProgress> {
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        (wanted(json) && size >= PROGRESS_TRACE_BYTES).then(|| ReadProgress {
            label: path.to_string(),
            started: Instant::now(),
            last: None,
        })
    }
}

impl kernlens_trace::ProgressSink for ReadProgress {
    fn progress(&mut self, done: u64, total: Option<u64>) {
        let now = Instant::now();
        if self.last.is_some_and(|t| now.duration_since(t) < REDRAW) {
            return;
        }
        self.last = Some(now);
        let mb = |b: u64| b as f64 / 1e6;
        let amount = match total {
            Some(t) if t > 0 => format!(
                "{:.0}% ({:.0} of {:.0} MB)",
                done as f64 / t as f64 * 100.0,
                mb(done),
                mb(t)
            ),
            _ => format!("{:.0} MB", mb(done)),
        };
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[2Kreading {}: {amount} {:.1}s",
            self.label,
            self.started.elapsed().as_secs_f64()
        );
        let _ = err.flush();
    }
}

impl Drop for ReadProgress {
    fn drop(&mut self) {
        if self.last.is_some() {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}

/// A phase line with a spinner and the elapsed time, redrawn on standard error until
/// dropped, for work the stages report no finer progress for.
pub struct Spinner {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Spinner {
    /// Starts drawing `message` on standard error.
    pub fn start(message: String) -> Spinner {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let frames = ['|', '/', '-', '\\'];
            let started = Instant::now();
            let mut n = 0usize;
            while !flag.load(Ordering::Relaxed) {
                let mut err = std::io::stderr().lock();
                let _ = write!(
                    err,
                    "\r\x1b[2K{} {message} {:.1}s",
                    frames[n % frames.len()],
                    started.elapsed().as_secs_f64()
                );
                let _ = err.flush();
                drop(err);
                n += 1;
                std::thread::sleep(REDRAW);
            }
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        });
        Spinner {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
