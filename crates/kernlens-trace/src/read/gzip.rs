//! Gzip members, one after another, with what follows the last one checked.
//!
//! `flate2`'s multi-member decoder reads zero padding or trailing text after the last
//! member as a broken header, and a checksum error arrives after the member's data; both
//! are kept here as data first, then one error naming the trailer problem, so the reader
//! keeps every event decoded before it (trace.md "Element loop").

use std::io::{self, BufRead, BufReader, Read};

use super::stream::Meter;
#[cfg(not(feature = "isal"))]
use super::zran::record::{self, Recording, Spacing};
use super::zran::{Decoded, Index};

/// One member's decoder: flate2 (pure Rust), or ISA-L with the `isal` feature. Both stop at
/// the member's end and give back the input after it.
#[cfg(not(feature = "isal"))]
type GzDecoder<R> = flate2::bufread::GzDecoder<R>;
#[cfg(feature = "isal")]
type GzDecoder<R> = super::isal::IsalMember<R>;

/// Decodes concatenated gzip members from `R`.
pub(crate) struct Members<R: Read> {
    state: State<R>,
    /// Members finished so far (for the messages).
    done: u64,
    /// The first member's access points (split's first pass, zran.rs), kept while they
    /// may describe the whole stream.
    index: Option<Index>,
    /// The stream ended cleanly right after its first member.
    single: bool,
}

#[cfg(not(feature = "isal"))]
type Member<R> = GzDecoder<BufReader<R>>;
#[cfg(feature = "isal")]
type Member<R> = GzDecoder<R>;

enum State<R: Read> {
    Member(Box<Member<R>>),
    /// The first member, its access points recorded as it is decoded.
    #[cfg(not(feature = "isal"))]
    Recording(Box<Recording<BufReader<R>>>),
    Between(BufReader<R>),
    End,
}

impl<R: Read> Members<R> {
    pub(crate) fn new(inner: R) -> Self {
        Members::starting(State::Member(Box::new(GzDecoder::new(
            BufReader::with_capacity(1 << 16, inner),
        ))))
    }

    fn starting(state: State<R>) -> Self {
        Members {
            state,
            done: 0,
            index: None,
            single: false,
        }
    }

    /// [`Members::new`], recording the first member's access points (zran.rs; `at`
    /// measures how far into the file `inner` has read). With the `isal` feature none are
    /// recorded: ISA-L decodes the members, and is not started again in the middle of one.
    #[cfg(not(feature = "isal"))]
    pub(crate) fn recording(inner: R, at: &Meter) -> Self {
        Members::recording_spaced(inner, at, Spacing::DEFAULT)
    }

    #[cfg(feature = "isal")]
    pub(crate) fn recording(inner: R, _at: &Meter) -> Self {
        Members::new(inner)
    }

    /// [`Members::recording`] with points `spacing` apart.
    #[cfg(not(feature = "isal"))]
    pub(crate) fn recording_spaced(inner: R, at: &Meter, spacing: Spacing) -> Self {
        let input = BufReader::with_capacity(1 << 16, inner);
        let offset = |r: &BufReader<R>| at.done().saturating_sub(r.buffer().len() as u64);
        Members::starting(match record::first_member(input, offset, spacing) {
            Ok(rec) => State::Recording(Box::new(rec)),
            Err(dec) => State::Member(dec),
        })
    }

    /// The access points, when the stream was one gzip member, read to its end with a
    /// matching trailer and nothing after it.
    pub(crate) fn into_index(self) -> Option<Index> {
        self.index.filter(|_| self.single && self.done == 1)
    }

    /// After a member: another member, the end, or the trailer problem.
    fn after_member(&mut self, mut rest: BufReader<R>) -> io::Result<()> {
        let first = match rest.fill_buf()? {
            [] => {
                self.state = State::End;
                self.single = self.done == 1;
                return Ok(());
            }
            buf => buf[0],
        };
        if first == 0x1f {
            self.state = State::Member(Box::new(GzDecoder::new(rest)));
            return Ok(());
        }
        self.state = State::End;
        if first != 0 {
            return Err(trailer(format!(
                "trailing data after gzip member {} is not a gzip header (ignored)",
                self.done
            )));
        }
        let mut zeros: u64 = 0;
        loop {
            let buf = rest.fill_buf()?;
            if buf.is_empty() {
                return Err(trailer(format!(
                    "{zeros} zero byte(s) of padding after gzip member {} (ignored)",
                    self.done
                )));
            }
            let run = buf.iter().take_while(|&&b| b == 0).count();
            let all = run == buf.len();
            rest.consume(run);
            zeros += run as u64;
            if !all {
                return Err(trailer(format!(
                    "trailing data after {zeros} zero byte(s) following gzip member {} is not a gzip header (ignored)",
                    self.done
                )));
            }
        }
    }
}

fn trailer(detail: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, detail)
}

impl<R: Read> Read for Members<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match &mut self.state {
                State::Member(dec) => match dec.read(buf) {
                    Ok(0) if !buf.is_empty() => {
                        self.done += 1;
                        let State::Member(dec) = std::mem::replace(&mut self.state, State::End)
                        else {
                            return Ok(0);
                        };
                        self.state = State::Between(dec.into_inner());
                    }
                    Ok(n) => return Ok(n),
                    Err(e) => {
                        self.state = State::End;
                        return Err(e);
                    }
                },
                #[cfg(not(feature = "isal"))]
                State::Recording(rec) => match rec.read(buf) {
                    Ok(0) if !buf.is_empty() => {
                        self.done += 1;
                        let State::Recording(mut rec) =
                            std::mem::replace(&mut self.state, State::End)
                        else {
                            return Ok(0);
                        };
                        self.index = rec.take_index();
                        self.state = State::Between(rec.into_inner());
                    }
                    Ok(n) => return Ok(n),
                    Err(e) => {
                        self.state = State::End;
                        return Err(e);
                    }
                },
                State::Between(_) => {
                    let State::Between(rest) = std::mem::replace(&mut self.state, State::End)
                    else {
                        return Ok(0);
                    };
                    self.after_member(rest)?;
                }
                State::End => return Ok(0),
            }
        }
    }
}

/// Members are read through: no access point to skip with.
impl<R: Read> Decoded for Members<R> {}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn decode(bytes: &[u8]) -> (Vec<u8>, Option<String>) {
        let mut out = Vec::new();
        let mut m = Members::new(bytes);
        let mut buf = [0u8; 7];
        loop {
            match m.read(&mut buf) {
                Ok(0) => return (out, None),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) => return (out, Some(e.to_string())),
            }
        }
    }

    #[test]
    fn concatenated_members_read_as_one_stream() {
        let mut two = gz(b"hello ");
        two.extend(gz(b"world"));
        assert_eq!(decode(&two), (b"hello world".to_vec(), None));
    }

    #[test]
    fn trailer_problems_keep_the_data_and_say_what_followed() {
        let mut padded = gz(b"abc");
        padded.extend([0u8; 512]);
        let (data, err) = decode(&padded);
        assert_eq!(data, b"abc");
        assert_eq!(
            err.as_deref(),
            Some("512 zero byte(s) of padding after gzip member 1 (ignored)")
        );
        let mut garbage = gz(b"abc");
        garbage.extend(b"junk\n");
        let (data, err) = decode(&garbage);
        assert_eq!(data, b"abc");
        assert!(err.unwrap().contains("not a gzip header"));
        let mut bad_crc = gz(b"abcdef");
        let at = bad_crc.len() - 8;
        bad_crc[at] ^= 0xff;
        let (data, err) = decode(&bad_crc);
        assert_eq!(data, b"abcdef");
        assert!(err.is_some());
    }
}
