//! Gzip access points (after zlib's `examples/zran.c`): places in a gzip member's deflate
//! data where decoding can start again, so that split's second pass decodes only the
//! stretches it reads (trace.md §15.5).
//!
//! A point is taken at a deflate block boundary: the decoded offset, the compressed byte
//! where the rest of the data starts, the bits of the byte before it that belong to the
//! rest, and the last 32 KiB decoded before it (what later blocks may copy from). The first
//! pass records them as it decodes ([`Recording`]: the first member's decoder, giving the
//! bytes and errors flate2's decoder gives, so the first pass reads what it read before);
//! the second pass starts again at the last point before the bytes it must read
//! ([`Resumed`]).
//!
//! flate2 has no call that stops at a block boundary or starts in the middle of a byte, so
//! both call the zlib-rs inflate that flate2 decodes with directly.

use std::io::{self, BufRead, Read, Seek};

use zlib_rs::c_api::z_stream;
use zlib_rs::inflate::{self as zinflate, InflateConfig, InflateStream};
use zlib_rs::{InflateFlush, ReturnCode};

use super::stream::Counted;

/// Largest deflate window: what a block may copy from.
const WINDOW: usize = 1 << 15;

/// `data_type` bits zlib sets after a call: the bits held (low six), the last block
/// read, and "stopped at a block boundary".
const HELD_BITS: i32 = 63;
const LAST_BLOCK: i32 = 64;
const AT_BOUNDARY: i32 = 128;

/// How far apart points are: the first spacing in decoded bytes, doubled (and every other
/// point dropped) whenever there would be more than `most`, so memory stays at `most`
/// windows of 32 KiB whatever the file's size.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spacing {
    pub(crate) first: u64,
    pub(crate) most: usize,
}

impl Spacing {
    /// 1 MiB apart at first, at most 64 points (2 MiB of windows): 16 MiB apart on an
    /// 827 MB trace, so a resumed read decodes at most 16 MiB it does not use.
    pub(crate) const DEFAULT: Spacing = Spacing {
        first: 1 << 20,
        most: 64,
    };
}

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

    /// How many points there are.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.points.len()
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
    data_type: i32,
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
            data_type: s.data_type,
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

    /// The last (up to) 32 KiB decoded.
    fn window(&mut self) -> Box<[u8]> {
        let mut w = vec![0u8; WINDOW];
        let n = match self.stream() {
            // SAFETY: `w` has room for the whole window (the stream's window is 32 KiB).
            Some(st) => unsafe { zinflate::get_dictionary(st, w.as_mut_ptr()) },
            None => 0,
        };
        w.truncate(n.min(WINDOW));
        w.into_boxed_slice()
    }
}

impl Drop for Inflater {
    fn drop(&mut self) {
        if let Some(st) = self.stream() {
            zinflate::end(st);
        }
    }
}

/// The points being recorded as a member is decoded.
struct Points {
    list: Vec<Point>,
    spacing: Spacing,
    /// Decoded offset from which the next point is looked for.
    next: u64,
}

impl Points {
    fn add(&mut self, point: Point) {
        self.list.push(point);
        if self.list.len() > self.spacing.most {
            // Every other point, twice as far apart (the first stays).
            let mut i = 0;
            self.list.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.spacing.first = self.spacing.first.saturating_mul(2);
        }
        let last = self.list.last().map_or(0, |p| p.out);
        self.next = last.saturating_add(self.spacing.first);
    }
}

/// Where a member's data stands.
enum Stage {
    Body,
    Trailer,
    Done,
}

/// A gzip member decoded from `R` (just after its header) while its access points are
/// recorded. Its reads give what flate2's `bufread::GzDecoder` gives over the same reader
/// with the same buffers: the same bytes per read (one inflate "run" per input buffer),
/// the same error after the same bytes (a failed run's bytes are dropped, as flate2
/// drops them), then the trailer checked. So the first pass's pieces, and hence the
/// analysis split takes its window and links from, are those flate2 gives.
pub(crate) struct Recording<R> {
    input: R,
    decoding: Decoding,
    stage: Stage,
    crc: u32,
    amount: u32,
    /// The trailer matched: the points describe the member.
    checked: bool,
}

/// A member's deflate data being decoded, its points recorded.
struct Decoding {
    inflate: Inflater,
    /// Decoded bytes so far.
    out: u64,
    /// Compressed bytes inflate took so far, and the file offset where they start.
    used: u64,
    start: u64,
    points: Points,
}

impl<R: BufRead> Recording<R> {
    /// Decodes the deflate data at file offset `start` from `input`, with `inflate` fresh.
    fn new(input: R, inflate: Inflater, start: u64, spacing: Spacing) -> Self {
        let first = Point {
            out: 0,
            input: start,
            bits: 0,
            window: Box::new([]),
        };
        Recording {
            input,
            decoding: Decoding {
                inflate,
                out: 0,
                used: 0,
                start,
                points: Points {
                    list: vec![first],
                    spacing,
                    next: spacing.first,
                },
            },
            stage: Stage::Body,
            crc: 0,
            amount: 0,
            checked: false,
        }
    }

    /// The input after the member (once a read returned 0).
    pub(crate) fn into_inner(self) -> R {
        self.input
    }

    /// The points, when the member ended with a matching trailer.
    pub(crate) fn take_index(&mut self) -> Option<Index> {
        self.checked.then(|| Index {
            points: std::mem::take(&mut self.decoding.points.list),
        })
    }

    /// flate2's `zio::read`: one run over the buffered input per pass of its loop.
    fn body(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        loop {
            let input = self.input.fill_buf()?;
            let eof = input.is_empty();
            let (read, consumed, status) = self.decoding.run(input, dst, eof);
            self.input.consume(consumed);
            match status {
                Err(()) => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "corrupt deflate stream",
                    ));
                }
                Ok(true) => return Ok(read),
                Ok(false) if read == 0 && !eof => {}
                Ok(false) if read == 0 => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "incomplete deflate stream",
                    ));
                }
                Ok(false) => return Ok(read),
            }
        }
    }
}

impl Decoding {
    /// One flate2 `run` of `input` into `dst`: what one inflate call with no flush (finish at
    /// the end of the input) would decode, made of several calls when a point is looked for
    /// (each stopping at a block boundary, where the point is taken). Returns the bytes
    /// written and taken, and whether the data ended (`Err` for bad data).
    fn run(&mut self, input: &[u8], dst: &mut [u8], eof: bool) -> (usize, usize, Result<bool, ()>) {
        let Decoding {
            inflate,
            out,
            used,
            start,
            points,
        } = self;
        let (mut read, mut taken) = (0usize, 0usize);
        // A boundary after the last block takes no point: no further stop there.
        let mut stops = true;
        loop {
            let hunting = !eof && stops && *out >= points.next;
            let flush = match (eof, hunting) {
                (true, _) => InflateFlush::Finish,
                (false, true) => InflateFlush::Block,
                (false, false) => InflateFlush::NoFlush,
            };
            let c = inflate.call(&input[taken..], &mut dst[read..], flush);
            taken += c.used;
            read += c.wrote;
            *used += c.used as u64;
            *out += c.wrote as u64;
            match c.code {
                ReturnCode::StreamEnd => return (read, taken, Ok(true)),
                ReturnCode::Ok | ReturnCode::BufError => {}
                _ => return (read, taken, Err(())),
            }
            if !(hunting && c.data_type & AT_BOUNDARY != 0) {
                return (read, taken, Ok(false));
            }
            if c.data_type & LAST_BLOCK == 0 {
                let held = (c.data_type & HELD_BITS) as u64;
                points.add(Point {
                    out: *out,
                    input: *start + *used - held / 8,
                    bits: (held % 8) as u8,
                    window: inflate.window(),
                });
            } else {
                stops = false;
            }
            if taken == input.len() || read == dst.len() {
                return (read, taken, Ok(false));
            }
        }
    }
}

impl<R: BufRead> Read for Recording<R> {
    fn read(&mut self, into: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.stage {
                Stage::Body => {
                    if into.is_empty() {
                        return Ok(0);
                    }
                    match self.body(into)? {
                        0 => self.stage = Stage::Trailer,
                        n => {
                            self.crc = zlib_rs::crc32::crc32(self.crc, &into[..n]);
                            self.amount = self.amount.wrapping_add(n as u32);
                            return Ok(n);
                        }
                    }
                }
                Stage::Trailer => {
                    let mut t = [0u8; 8];
                    self.input.read_exact(&mut t)?;
                    self.stage = Stage::Done;
                    let crc = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
                    let amount = u32::from_le_bytes([t[4], t[5], t[6], t[7]]);
                    if crc != self.crc || amount != self.amount {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidInput,
                            "corrupt gzip stream does not have a matching checksum",
                        ));
                    }
                    self.checked = true;
                }
                Stage::Done => return Ok(0),
            }
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

/// Starts the first member of a gzip stream from `input` with its points recorded, once
/// flate2 has read its header (so a header flate2 refuses is refused the same way);
/// `offset` tells the file offset the input is at after the header. `Err` gives back
/// flate2's decoder, to be read as before.
pub(crate) fn first_member<R: BufRead>(
    input: R,
    offset: impl FnOnce(&R) -> u64,
    spacing: Spacing,
) -> Result<Recording<R>, Box<flate2::bufread::GzDecoder<R>>> {
    let inflate = Inflater::raw();
    let dec = flate2::bufread::GzDecoder::new(input);
    let Ok(inflate) = inflate else {
        return Err(Box::new(dec));
    };
    if dec.header().is_none() {
        return Err(Box::new(dec));
    }
    let input = dec.into_inner();
    let start = offset(&input);
    Ok(Recording::new(input, inflate, start, spacing))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::gzip::Members;
    use super::super::stream::Meter;
    use super::*;
    use std::io::Write;

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/../../fixtures/traces/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    fn gunzip(gz: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(gz)
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    fn gzip(data: &[u8], level: u32) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// Reads `members` to its end in reads of the sizes in `sizes` (cycled): each read's
    /// bytes, and the error that ended it.
    fn reads(mut r: impl Read, sizes: &[usize]) -> (Vec<Vec<u8>>, Option<String>) {
        let mut got = Vec::new();
        for &n in sizes.iter().cycle() {
            let mut buf = vec![0u8; n];
            match r.read(&mut buf) {
                Ok(0) => return (got, None),
                Ok(k) => got.push(buf[..k].to_vec()),
                Err(e) => return (got, Some(format!("{:?}", e.kind()))),
            }
        }
        unreachable!()
    }

    fn recording(gz: &[u8], spacing: Spacing) -> Members<Counted<io::Cursor<Vec<u8>>>> {
        let (counted, meter) = Meter::wrap(io::Cursor::new(gz.to_vec()), None);
        Members::recording(counted, &meter, spacing)
    }

    fn index(gz: &[u8], spacing: Spacing) -> Option<Index> {
        let mut m = recording(gz, spacing);
        io::copy(&mut m, &mut io::sink()).unwrap();
        m.into_index()
    }

    const SMALL: Spacing = Spacing {
        first: 20_000,
        most: 100_000,
    };

    /// Trace-like text with random timestamps and ids, so that deflate blocks are short.
    fn noisy() -> Vec<u8> {
        let mut rng = fastrand::Rng::with_seed(20);
        let mut t = String::from("{\"traceEvents\":[\n");
        for i in 0..20_000u64 {
            t.push_str(&format!(
                "{{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k{}\",\"ts\":{},\"dur\":{},\"args\":{{\"correlation\":{i}}}}},\n",
                rng.u32(..50),
                rng.u64(..1 << 40),
                rng.u32(..100_000)
            ));
        }
        t.push_str("{}]}");
        t.into_bytes()
    }

    /// The inputs the access points are tried on: a real capture as written (by Python's
    /// gzip), and trace-like text written by flate2 at levels 0 (stored blocks), 1, 6 and 9.
    fn inputs() -> Vec<(String, Vec<u8>, Vec<u8>)> {
        let raw = fixture("eager.json.gz");
        let plain = gunzip(&raw);
        let mut v = vec![("eager.json.gz".to_string(), raw, plain)];
        let noisy = noisy();
        for level in [0, 1, 6, 9] {
            v.push((format!("level {level}"), gzip(&noisy, level), noisy.clone()));
        }
        v
    }

    /// Starting again at every access point gives the bytes a full decode gives from
    /// there to the end, on real data written at several levels (points at block
    /// boundaries that fall in the middle of a byte, and at byte boundaries).
    #[test]
    fn resuming_at_every_point_decodes_what_a_full_decode_does() {
        for (name, gz, plain) in inputs() {
            let index = index(&gz, SMALL).unwrap();
            // The capture's blocks are long (its text repeats), and zlib-rs's level 1 writes
            // few blocks: fewer points there.
            let most = match name.as_str() {
                "level 1" => 2,
                "eager.json.gz" => 5,
                _ => 10,
            };
            assert!(index.len() >= most, "{name}: {} points", index.len());
            let odd = index.points.iter().filter(|p| p.bits != 0).count();
            if !name.ends_with(" 0") {
                assert!(odd > 0, "{name}: every point on a byte boundary");
            }
            for (i, p) in index.points.iter().enumerate() {
                let (counted, _) = Meter::wrap(io::Cursor::new(gz.clone()), None);
                let mut r = Resumed::new(counted, &index);
                assert_eq!(r.skip_toward(0, p.out).unwrap(), p.out, "{name} point {i}");
                let mut got = Vec::new();
                r.read_to_end(&mut got).unwrap();
                assert!(
                    got == plain[p.out as usize..],
                    "{name}: point {i} at {} (bits {}) decodes other bytes",
                    p.out,
                    p.bits
                );
            }
            // From the start, and skipping toward a place between points.
            let (counted, _) = Meter::wrap(io::Cursor::new(gz.clone()), None);
            let mut r = Resumed::new(counted, &index);
            let mid = plain.len() as u64 / 2;
            let at = r.skip_toward(0, mid).unwrap();
            assert_eq!(at, index.before(mid).unwrap().out, "{name}");
            let mut got = Vec::new();
            r.read_to_end(&mut got).unwrap();
            assert!(got == plain[at as usize..], "{name}");
        }
    }

    /// A damaged point (its bit offset one off) decodes other bytes or fails: the test
    /// above can tell a wrong resume.
    #[test]
    fn a_wrong_point_is_caught() {
        let (_, gz, plain) = inputs().swap_remove(3);
        let mut index = index(&gz, SMALL).unwrap();
        let i = index.points.iter().rposition(|p| p.bits > 1).unwrap();
        index.points[i].bits -= 1;
        let out = index.points[i].out;
        let (counted, _) = Meter::wrap(io::Cursor::new(gz.clone()), None);
        let mut r = Resumed::new(counted, &index);
        assert_eq!(r.skip_toward(0, out).unwrap(), out);
        let mut got = Vec::new();
        let failed = r.read_to_end(&mut got).is_err();
        assert!(failed || got != plain[out as usize..]);
    }

    /// Points stay at most `most`, spread over the stream as the spacing doubles.
    #[test]
    fn points_stay_bounded() {
        let (_, gz, plain) = inputs().swap_remove(3);
        let index = index(
            &gz,
            Spacing {
                first: 1000,
                most: 8,
            },
        )
        .unwrap();
        assert!(index.len() <= 8 && index.len() >= 4, "{}", index.len());
        let last = index.points.last().unwrap().out;
        assert!(last > plain.len() as u64 / 3, "{last} of {}", plain.len());
    }

    /// Recording changes nothing in what the members decoder gives, read by read: clean,
    /// with a corrupt byte in the deflate data, cut short, with a bad checksum, and with a
    /// second member after a bad checksum (which is never read).
    #[test]
    fn recording_reads_what_flate2_reads() {
        let (_, gz, _) = inputs().swap_remove(3);
        let mut corrupt = gz.clone();
        let at = corrupt.len() / 2;
        corrupt[at] ^= 0x55;
        let short = gz[..gz.len() * 2 / 3].to_vec();
        let mut bad_crc = gz.clone();
        let crc_at = bad_crc.len() - 8;
        bad_crc[crc_at] ^= 1;
        let mut then_more = bad_crc.clone();
        then_more.extend(gzip(b"more", 6));
        for (name, bytes) in [
            ("clean", &gz),
            ("corrupt", &corrupt),
            ("short", &short),
            ("bad crc", &bad_crc),
            ("then more", &then_more),
        ] {
            for sizes in [&[1 << 19][..], &[7, 70_000, 1 << 20, 3]] {
                let want = reads(Members::new(io::Cursor::new(bytes.clone())), sizes);
                let got = reads(recording(bytes, SMALL), sizes);
                assert!(got == want, "{name} {sizes:?}: {:?} vs {:?}", got.1, want.1);
                if name != "clean" {
                    assert!(want.1.is_some(), "{name}");
                }
            }
        }
    }

    /// Points are kept only for one member read cleanly to its end.
    #[test]
    fn only_a_clean_single_member_keeps_its_points() {
        let data = gunzip(&fixture("graph.json.gz"));
        let gz = gzip(&data, 6);
        assert!(index(&gz, SMALL).is_some());
        let mut two = gz.clone();
        two.extend(gzip(b"x", 6));
        let mut padded = gz.clone();
        padded.extend([0u8; 16]);
        let mut junk = gz.clone();
        junk.extend(b"junk");
        let mut bad_crc = gz.clone();
        let at = bad_crc.len() - 8;
        bad_crc[at] ^= 1;
        for (name, bytes) in [
            ("two members", two),
            ("padded", padded),
            ("junk", junk),
            ("bad crc", bad_crc),
            ("short", gz[..gz.len() - 3].to_vec()),
        ] {
            let mut m = recording(&bytes, SMALL);
            let _ = io::copy(&mut m, &mut io::sink());
            assert!(m.into_index().is_none(), "{name}");
        }
    }
}
