//! Gzip access points (after zlib's `examples/zran.c`): places in a gzip member's deflate
//! data where decoding can start again, so that split's second pass decodes only the
//! stretches it reads (trace.md §15.5).
//!
//! A point is taken at a deflate block boundary: the decoded offset, the compressed byte
//! where the rest of the data starts, the bits of the byte before it that belong to the
//! rest, and the last 32 KiB decoded before it (what later blocks may copy from). The first
//! pass records them as it decodes (record.rs: the first member's decoder, giving the bytes
//! and errors flate2's decoder gives, so the first pass reads what it read before; not with
//! the `isal` feature); the second pass starts again at the last point before the bytes it
//! must read ([`Resumed`]).
//!
//! flate2 has no call that stops at a block boundary or starts in the middle of a byte, so
//! both call the zlib-rs inflate that flate2 decodes with directly.

use std::io::{self, Read, Seek};

use zlib_rs::c_api::z_stream;
use zlib_rs::inflate::{self as zinflate, InflateConfig, InflateStream};
use zlib_rs::{InflateFlush, ReturnCode};

use super::stream::Counted;

/// Recording the points (the pure-Rust build only: ISA-L decodes the first pass there).
#[cfg(not(feature = "isal"))]
pub(crate) mod record;

/// One place to start decoding again.
pub(crate) struct Point {
    /// Decoded bytes before it.
    out: u64,
    /// Offset in the file of the first whole compressed byte after it.
    input: u64,
    /// How many of the top bits of the byte before `input` come after it (0 to 7).
    bits: u8,
    /// The decoded bytes just before it (up to 32 KiB).
    window: Box<[u8]>,
}

/// The access points of a single-member gzip file, in decoded order (the first at the
/// start of its deflate data).
pub(crate) struct Index {
    points: Vec<Point>,
}

impl Index {
    /// The last point at or before decoded offset `to`.
    fn before(&self, to: u64) -> Option<&Point> {
        let i = self.points.partition_point(|p| p.out <= to);
        i.checked_sub(1).and_then(|i| self.points.get(i))
    }
}

/// A raw-deflate inflate state of zlib-rs.
struct Inflater {
    /// Boxed so the stream never moves once its state is set up.
    strm: Box<z_stream>,
}

// SAFETY: the stream's input and output pointers are set for the length of one call and
// null between calls, so no borrow moves with it; its state is allocated for it alone.
unsafe impl Send for Inflater {}

/// What one inflate call did.
struct Call {
    used: usize,
    wrote: usize,
    code: ReturnCode,
}

fn zlib_error(what: &str, code: ReturnCode) -> io::Error {
    io::Error::other(format!("zlib-rs {what} failed ({code:?})"))
}

impl Inflater {
    fn raw() -> io::Result<Inflater> {
        let mut strm = Box::new(z_stream::default());
        let code = zinflate::init(&mut strm, InflateConfig { window_bits: -15 });
        if code != ReturnCode::Ok {
            return Err(zlib_error("inflate init", code));
        }
        Ok(Inflater { strm })
    }

    /// The stream as zlib-rs's inflate functions take it (none if it was not set up).
    fn stream(&mut self) -> Option<&mut InflateStream<'static>> {
        let p: *mut z_stream = &mut *self.strm;
        // SAFETY: `p` is a live `z_stream` set up by `init` in `raw` (and ended only in
        // `drop`); the result borrows `self` for its use.
        unsafe { InflateStream::from_stream_mut(p) }
    }

    fn call(&mut self, input: &[u8], output: &mut [u8], flush: InflateFlush) -> Call {
        let (avail_in, avail_out) = (
            input.len().min(u32::MAX as usize) as u32,
            output.len().min(u32::MAX as usize) as u32,
        );
        let s = &mut *self.strm;
        s.next_in = input.as_ptr();
        s.avail_in = avail_in;
        s.next_out = output.as_mut_ptr();
        s.avail_out = avail_out;
        let code = match self.stream() {
            // SAFETY: the input and output pointers describe `input` and `output`, both
            // live for the call; inflate reads only the former and writes only the latter.
            Some(st) => unsafe { zinflate::inflate(st, flush) },
            None => ReturnCode::StreamError,
        };
        let s = &mut *self.strm;
        let call = Call {
            used: (avail_in - s.avail_in) as usize,
            wrote: (avail_out - s.avail_out) as usize,
            code,
        };
        // The pointers into `input` and `output` are not kept past the call.
        s.next_in = std::ptr::null();
        s.avail_in = 0;
        s.next_out = std::ptr::null_mut();
        s.avail_out = 0;
        call
    }

    /// Feeds the low `bits` bits of `value` before the next input byte.
    fn prime(&mut self, bits: u8, value: u8) -> io::Result<()> {
        let code = match self.stream() {
            Some(st) => zinflate::prime(st, i32::from(bits), i32::from(value)),
            None => ReturnCode::StreamError,
        };
        match code {
            ReturnCode::Ok => Ok(()),
            code => Err(zlib_error("inflate prime", code)),
        }
    }

    fn set_dictionary(&mut self, window: &[u8]) -> io::Result<()> {
        let code = match self.stream() {
            Some(st) => zinflate::set_dictionary(st, window),
            None => ReturnCode::StreamError,
        };
        match code {
            ReturnCode::Ok => Ok(()),
            code => Err(zlib_error("inflate set dictionary", code)),
        }
    }
}

impl Drop for Inflater {
    fn drop(&mut self) {
        if let Some(st) = self.stream() {
            zinflate::end(st);
        }
    }
}

/// A decoded stream that can move ahead without decoding all it passes over.
pub(crate) trait Decoded: Read {
    /// Moves from decoded offset `at` (where the stream is) towards `to` without decoding
    /// what an access point lets it pass over; returns where it is now (`at..=to`).
    fn skip_toward(&mut self, at: u64, _to: u64) -> io::Result<u64> {
        Ok(at)
    }
}

/// A single-member gzip file decoded from one of its access points on: the bytes from the
/// point's offset to the end of the member's data (whose trailer the first pass checked).
pub(crate) struct Resumed<'i, R> {
    index: &'i Index,
    input: Counted<R>,
    buf: Vec<u8>,
    at: usize,
    len: usize,
    /// Set up at the first point by the first read (so that a failure is a read error).
    inflate: Option<Inflater>,
    /// Decoded offset of the next byte read.
    out: u64,
    ended: bool,
}

impl<'i, R: Read + Seek> Resumed<'i, R> {
    /// Decodes the file `input` from its start, with the points of `index`.
    pub(crate) fn new(input: Counted<R>, index: &'i Index) -> Self {
        Resumed {
            index,
            input,
            buf: vec![0u8; 1 << 16],
            at: 0,
            len: 0,
            inflate: None,
            out: 0,
            ended: false,
        }
    }

    /// Decodes on from `p`.
    fn resume(&mut self, p: &Point) -> io::Result<Inflater> {
        let mut inflate = Inflater::raw()?;
        self.at = 0;
        self.len = 0;
        if p.bits > 0 {
            self.input.jump(p.input - 1)?;
            let mut b = [0u8; 1];
            self.input.read_exact(&mut b)?;
            inflate.prime(p.bits, b[0] >> (8 - p.bits))?;
        } else {
            self.input.jump(p.input)?;
        }
        if !p.window.is_empty() {
            inflate.set_dictionary(&p.window)?;
        }
        self.out = p.out;
        self.ended = false;
        Ok(inflate)
    }
}

impl<R: Read + Seek> Read for Resumed<'_, R> {
    fn read(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        if dst.is_empty() || self.ended {
            return Ok(0);
        }
        let mut inflate = match self.inflate.take() {
            Some(i) => i,
            None => match self.index.points.first() {
                Some(first) => self.resume(first)?,
                None => return Err(io::Error::other("gzip index without points")),
            },
        };
        let got = self.decode(&mut inflate, dst);
        self.inflate = Some(inflate);
        got
    }
}

impl<R: Read + Seek> Resumed<'_, R> {
    fn decode(&mut self, inflate: &mut Inflater, dst: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.at == self.len {
                self.len = self.input.read(&mut self.buf)?;
                self.at = 0;
            }
            let eof = self.len == 0;
            let flush = if eof {
                InflateFlush::Finish
            } else {
                InflateFlush::NoFlush
            };
            let c = inflate.call(&self.buf[self.at..self.len], dst, flush);
            self.at += c.used;
            self.out += c.wrote as u64;
            match c.code {
                ReturnCode::StreamEnd => {
                    self.ended = true;
                    return Ok(c.wrote);
                }
                ReturnCode::Ok | ReturnCode::BufError => {}
                _ => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "corrupt deflate stream",
                    ));
                }
            }
            if c.wrote > 0 {
                return Ok(c.wrote);
            }
            if eof {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "incomplete deflate stream",
                ));
            }
            if c.used == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "corrupt deflate stream (no progress)",
                ));
            }
        }
    }
}

impl<R: Read + Seek> Decoded for Resumed<'_, R> {
    fn skip_toward(&mut self, at: u64, to: u64) -> io::Result<u64> {
        match self.index.before(to) {
            Some(p) if p.out > at && at == self.out => {
                self.inflate = Some(self.resume(p)?);
                Ok(p.out)
            }
            _ => Ok(at),
        }
    }
}
