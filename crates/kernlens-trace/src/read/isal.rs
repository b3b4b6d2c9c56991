//! One gzip member decoded by ISA-L (the `isal` feature), for [`super::gzip::Members`].
//!
//! ISA-L decodes the member's header, data and trailer (checking the CRC and length) and
//! stops at its end, leaving what follows in the input buffer, so the member loop can look
//! at it exactly as with the pure-Rust decoder.

use std::io::{self, BufRead, BufReader, Read};
use std::mem::MaybeUninit;

use isal::isal_sys::igzip_lib as ffi;

/// A gzip member being decoded from `input`.
pub(crate) struct IsalMember<R: Read> {
    input: BufReader<R>,
    state: State,
    done: bool,
    /// An error found in the call that also wrote data: returned by the next read, after
    /// that data (a checksum is checked in the call that writes the member's last bytes).
    pending: Option<io::Error>,
}

/// ISA-L's state (about 70 KB: boxed), owned by one decoder. Its input and output pointers
/// are set for the length of one `isal_inflate` call and null otherwise.
struct State(Box<ffi::inflate_state>);

// SAFETY: the state's only pointers are its input and output pointers, which are null
// between calls (a call borrows both buffers for its length only), so moving the state to
// another thread moves no borrow; the rest is plain data owned by this value.
unsafe impl Send for State {}

impl<R: Read> IsalMember<R> {
    pub(crate) fn new(input: BufReader<R>) -> Self {
        let mut state: Box<MaybeUninit<ffi::inflate_state>> = Box::new_uninit();
        // SAFETY: `isal_inflate_init` writes every field of the state it is given.
        unsafe { ffi::isal_inflate_init(state.as_mut_ptr()) };
        // SAFETY: initialised just above.
        let mut state = unsafe { state.assume_init() };
        state.crc_flag = ffi::ISAL_GZIP;
        state.next_in = std::ptr::null_mut();
        state.next_out = std::ptr::null_mut();
        IsalMember {
            input,
            state: State(state),
            done: false,
            pending: None,
        }
    }

    /// The input after the member (valid once a read returned 0).
    pub(crate) fn into_inner(self) -> BufReader<R> {
        self.input
    }
}

impl<R: Read> Read for IsalMember<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        loop {
            let input = self.input.fill_buf()?;
            let given = input.len();
            let s = &mut *self.state.0;
            s.next_in = input.as_ptr().cast_mut();
            s.avail_in = given as u32;
            s.next_out = buf.as_mut_ptr();
            s.avail_out = buf.len().min(u32::MAX as usize) as u32;
            let before_out = s.avail_out;
            // SAFETY: `next_in`/`avail_in` describe `input` and `next_out`/`avail_out` describe
            // `buf`, both live for the call; ISA-L reads only the former and writes only the
            // latter (and its own state).
            let ret = unsafe { ffi::isal_inflate(s) };
            let used = given - s.avail_in as usize;
            let wrote = (before_out - s.avail_out) as usize;
            let finished = s.block_state == ffi::isal_block_state_ISAL_BLOCK_FINISH;
            // The pointers into `input` and `buf` are not used after this point.
            s.next_in = std::ptr::null_mut();
            s.next_out = std::ptr::null_mut();
            s.avail_in = 0;
            self.input.consume(used);
            if ret < 0 {
                self.done = true;
                let e = io::Error::new(
                    io::ErrorKind::InvalidData,
                    match ret {
                        ffi::ISAL_INCORRECT_CHECKSUM => {
                            "gzip member checksum (CRC-32 or length) does not match its data"
                                .to_string()
                        }
                        ffi::ISAL_INVALID_WRAPPER | ffi::ISAL_UNSUPPORTED_METHOD => {
                            "invalid gzip header".to_string()
                        }
                        code => format!("invalid deflate data (ISA-L error {code})"),
                    },
                );
                if wrote > 0 {
                    self.pending = Some(e);
                    return Ok(wrote);
                }
                return Err(e);
            }
            if finished {
                self.done = true;
            }
            if wrote > 0 || finished {
                return Ok(wrote);
            }
            if given == 0 {
                self.done = true;
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "gzip member ended early",
                ));
            }
            if used == 0 {
                // Input offered and none taken, nothing written: never spin on it.
                self.done = true;
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "invalid deflate data (ISA-L made no progress)",
                ));
            }
        }
    }
}
