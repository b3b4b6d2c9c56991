//! The sequential streamed read of plain text from stdin: one thread reads into bounded
//! chunks while the calling thread parses them in file order, element by element (plain
//! stdin was left out of the move to the region workers, and is not measured there).
//! Gzip inputs and split's second pass were read this way before they moved to the region
//! workers (pieces.rs); the tests keep it as their reference.

use std::io::{self, Read};
use std::sync::mpsc::{Receiver, sync_channel};

use super::Feed;
use crate::event::{Event, Wanted};
use crate::options::Limits;
use crate::scan::{self, ErrorLog, Form, Located, Problem, Step};

use super::stream::Meter;
use super::{CHUNK, Head, InputLimit, deliver, failed_head, fill, found_array, input_problem};

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

impl StreamSink for Feed<'_> {
    fn wanted(&self) -> Wanted {
        Feed::wanted(self)
    }

    fn count(&self) -> u64 {
        self.fold.event_total()
    }

    fn event(&mut self, ev: Option<Event<'_>>, _raw: &[u8]) {
        deliver(self, ev);
    }

    fn progress(&mut self, done: u64, total: Option<u64>) {
        Feed::progress(self, done, total);
    }
}

/// Streams a reader through a bounded pipeline: one thread reads (and decompresses)
/// while this one parses. At most a few chunks plus one event are buffered.
pub(crate) fn read_stream<R: Read + Send>(
    reader: R,
    gzip: bool,
    limits: &Limits,
    feed: &mut dyn StreamSink,
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
        let out = parse_stream(rx, gzip, limits, feed, log, meter);
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
    let mut fast = scan::Fast::new(limits, wanted);
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
        match scan::step(&buf, &mut pos, eof, &mut fast, &mut one) {
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
