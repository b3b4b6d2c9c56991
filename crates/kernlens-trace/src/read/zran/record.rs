//! Recording gzip access points while the first member is decoded (zran.rs): the first
//! pass's decoder of that member, which gives what flate2's gives.

use std::io::{self, BufRead, Read};

use zlib_rs::inflate as zinflate;
use zlib_rs::{InflateFlush, ReturnCode};

use super::{Index, Inflater, Point};

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

impl Inflater {
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

    /// zlib's `data_type` after the last call.
    fn data_type(&self) -> i32 {
        self.strm.data_type
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
            let data_type = inflate.data_type();
            taken += c.used;
            read += c.wrote;
            *used += c.used as u64;
            *out += c.wrote as u64;
            match c.code {
                ReturnCode::StreamEnd => return (read, taken, Ok(true)),
                ReturnCode::Ok | ReturnCode::BufError => {}
                _ => return (read, taken, Err(())),
            }
            if !(hunting && data_type & AT_BOUNDARY != 0) {
                return (read, taken, Ok(false));
            }
            if data_type & LAST_BLOCK == 0 {
                let held = (data_type & HELD_BITS) as u64;
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
    use super::super::super::gzip::Members;
    use super::super::super::stream::{Counted, Meter};
    use super::super::{Decoded, Resumed};
    use super::*;

    use crate::test_files::{gunzip, gzip_at as gzip};

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(crate::test_files::fixture(name)).unwrap()
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
        Members::recording_spaced(counted, &meter, spacing)
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
            assert!(
                index.points.len() >= most,
                "{name}: {} points",
                index.points.len()
            );
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
        assert!(
            index.points.len() <= 8 && index.points.len() >= 4,
            "{}",
            index.points.len()
        );
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
