//! The fast path over one event: a structural index built 64 bytes at a time, walked
//! token by token.
//!
//! Why: the byte-at-a-time [`Cursor`](crate::json::Cursor) spends most of its time
//! finding where strings end and where whitespace stops. Classifying a block of 64 bytes
//! at once (quotes, structural characters, whitespace, control bytes) and taking the
//! string state from a prefix XOR of the quote bits leaves only the tokens to visit:
//! `{ } [ ] : ,`, quotes, and the first byte of each number or literal.
//!
//! The index is built fresh at each event's `{` (which is outside any string), so no
//! state crosses events and a bad event cannot poison the next one.
//!
//! The fast path gives up, rather than deciding, on anything unusual: a backslash
//! anywhere in the event, a control byte, an event that runs past the end of the bytes,
//! any JSON error. The caller then reads the event again with the `Cursor`, which owns
//! every error message and every recovery. So this path only has to be right when it
//! succeeds: it accepts exactly valid JSON and reads it as the `Cursor` does (pinned by
//! the agreement tests below and in `tests/props.rs`).

use crate::json::{JsonError, JsonRead, RawStr, Scalar, number_end, skip_container};

/// The error for "let the cursor decide".
const GIVE_UP: JsonError = JsonError::Invalid("left to the cursor");

/// Bytes that may follow a number or literal: whitespace and the structural characters.
const DELIMITER: [bool; 256] = {
    let mut t = [false; 256];
    let ds = b" \t\n\r,:{}[]";
    let mut i = 0;
    while i < ds.len() {
        t[ds[i] as usize] = true;
        i += 1;
    }
    t
};

/// One block's classes, bit `i` for byte `i` of the block.
#[derive(Clone, Copy, Default)]
struct Masks {
    quote: u64,
    backslash: u64,
    space: u64,
    structural: u64,
    control: u64,
}

/// What one event's walk leaves for the next, so that consecutive events share blocks
/// instead of classifying the bytes after each event's end twice.
#[derive(Clone, Copy)]
pub(crate) struct Carry {
    index: Index,
    /// The index is valid up to `closed` (the last event ended there, read by the fast
    /// path); otherwise the next event starts a fresh one.
    live: bool,
    avx2: bool,
    /// The length of the bytes the index was built over: its last block may be padded
    /// past that end, and those pad bytes must not stand for real ones in a longer window.
    len: usize,
}

impl Carry {
    /// A fresh carry; detects the vector instructions once.
    pub(crate) fn new() -> Carry {
        Carry {
            index: Index::default(),
            live: false,
            avx2: has_avx2(),
            len: 0,
        }
    }

    /// Forgets the index: the bytes moved or the last event was not read by the fast path.
    pub(crate) fn reset(&mut self) {
        self.live = false;
    }
}

/// The index state: the current block and what carries into the next.
#[derive(Clone, Copy, Default)]
struct Index {
    /// Start of the current block.
    base: usize,
    /// Tokens of the current block not yet taken.
    bits: u64,
    /// All ones when the current block ends inside a string.
    in_string: u64,
    /// 1 when the current block ends on a number or literal byte.
    prev_scalar: u64,
    /// One past the last closer taken.
    closed: usize,
    /// The index could not be built (backslash, control byte, end of input).
    dead: bool,
}

/// Walks the tokens of one event from its `{`.
pub(crate) struct Tokens<'a> {
    b: &'a [u8],
    x: Index,
    avx2: bool,
}

impl<'a> Tokens<'a> {
    /// Starts at `start`, which must be the event's `{` (outside any string), carrying
    /// on the previous event's index when it reaches here.
    #[inline(always)]
    pub(crate) fn new(b: &'a [u8], start: usize, carry: &Carry) -> Tokens<'a> {
        // The window grows from one event to the next (`max_event_bytes` past each start):
        // a carried block that was padded at the old end is built again over the real
        // bytes, as is one built over more bytes than this window holds.
        let fits = carry.len <= b.len()
            && (carry.len == b.len() || carry.index.base.saturating_add(64) <= carry.len);
        if carry.live && fits && carry.index.closed <= start {
            let mut t = Tokens {
                b,
                x: carry.index,
                avx2: carry.avx2,
            };
            // Between two events there are only commas (and whitespace, which has no
            // tokens); the next token must then be this event's `{`.
            loop {
                match t.next_token() {
                    Some(p) if p < start && b[p] == b',' => t.x.bits &= t.x.bits - 1,
                    Some(p) if p == start => return t,
                    _ => break,
                }
            }
        }
        let mut t = Tokens {
            b,
            x: Index {
                base: start,
                closed: start,
                dead: start >= b.len(),
                ..Index::default()
            },
            avx2: carry.avx2,
        };
        if !t.x.dead {
            t.x = index_block(b, t.x, t.avx2);
        }
        t
    }

    /// One past the last closer taken: after a whole event, the event's end.
    pub(crate) fn end(&self) -> usize {
        self.x.closed
    }

    /// The carry for the next event, after this one was read whole.
    pub(crate) fn carry(&self) -> Carry {
        Carry {
            index: self.x,
            live: !self.x.dead,
            avx2: self.avx2,
            len: self.b.len(),
        }
    }

    /// The next token's position (not taken), building the next block's index when needed.
    #[inline(always)]
    fn next_token(&mut self) -> Option<usize> {
        while self.x.bits == 0 {
            if !self.next_block() {
                return None;
            }
        }
        Some(self.x.base + self.x.bits.trailing_zeros() as usize)
    }

    #[cold]
    fn next_block(&mut self) -> bool {
        if self.x.dead {
            return false;
        }
        self.x.base += 64;
        if self.x.base >= self.b.len() {
            self.x.dead = true;
            return false;
        }
        self.x = index_block(self.b, self.x, self.avx2);
        !self.x.dead
    }

    /// Takes the next token.
    #[inline(always)]
    fn take(&mut self) -> Result<usize, JsonError> {
        let p = self.next_token().ok_or(GIVE_UP)?;
        self.x.bits &= self.x.bits - 1;
        Ok(p)
    }

    /// Takes the next token, which must be `byte`.
    #[inline(always)]
    fn take_byte(&mut self, byte: u8) -> Result<usize, JsonError> {
        let p = self.take()?;
        if self.b[p] == byte {
            Ok(p)
        } else {
            Err(GIVE_UP)
        }
    }

    /// A string whose opening quote (at `open`) was just taken.
    #[inline(always)]
    fn string_from(&mut self, open: usize) -> Result<RawStr<'a>, JsonError> {
        // Everything inside a string is masked out, so the next token is its closing quote.
        let close = self.take()?;
        Ok(RawStr {
            raw: &self.b[open + 1..close],
            escaped: false,
        })
    }

    /// Checks that a number or literal ending at `end` is followed by a delimiter, so
    /// that the index's scalar run and the grammar's agree.
    #[inline(always)]
    fn delimited(&self, end: usize) -> Result<(), JsonError> {
        match self.b.get(end) {
            Some(&c) if DELIMITER[c as usize] => Ok(()),
            _ => Err(GIVE_UP),
        }
    }
}

impl<'a> JsonRead<'a> for Tokens<'a> {
    #[inline(always)]
    fn peek(&mut self) -> Option<u8> {
        self.next_token().map(|p| self.b[p])
    }

    #[inline(always)]
    fn here(&mut self) -> usize {
        self.next_token().unwrap_or(self.b.len())
    }

    #[inline(always)]
    fn closed_at(&self) -> usize {
        self.x.closed
    }

    #[inline(always)]
    fn bytes(&self) -> &'a [u8] {
        self.b
    }

    #[inline(always)]
    fn open(&mut self, open: u8, close: u8) -> Result<bool, JsonError> {
        self.take_byte(open)?;
        if self.peek() == Some(close) {
            let p = self.take()?;
            self.x.closed = p + 1;
            return Ok(false);
        }
        Ok(true)
    }

    #[inline(always)]
    fn key(&mut self) -> Result<RawStr<'a>, JsonError> {
        let open = self.take_byte(b'"')?;
        let k = self.string_from(open)?;
        self.take_byte(b':')?;
        Ok(k)
    }

    #[inline(always)]
    fn scalar(&mut self) -> Result<Scalar<'a>, JsonError> {
        let p = self.take()?;
        let b = self.b;
        match b[p] {
            b'"' => self.string_from(p).map(Scalar::Str),
            b'-' | b'0'..=b'9' => {
                let end = number_end(b, p).ok_or(GIVE_UP)?;
                self.delimited(end)?;
                Ok(Scalar::Num(&b[p..end]))
            }
            b't' => self.literal(p, b"true").map(|_| Scalar::Other),
            b'f' => self.literal(p, b"false").map(|_| Scalar::Other),
            b'n' => self.literal(p, b"null").map(|_| Scalar::Null),
            _ => Err(GIVE_UP),
        }
    }

    fn skip_container(&mut self, stack: &mut Vec<u8>) -> Result<(), JsonError> {
        // On a copy: the walk is out of line, and lending it `self` would keep this
        // reader's state in memory for the whole event.
        let mut t = Tokens {
            b: self.b,
            x: self.x,
            avx2: self.avx2,
        };
        let r = skip_container(&mut t, stack);
        self.x = t.x;
        r
    }

    #[inline(always)]
    fn next_or_close(&mut self, close: u8) -> Result<bool, JsonError> {
        let p = self.take()?;
        match self.b[p] {
            b',' => Ok(true),
            c if c == close => {
                self.x.closed = p + 1;
                Ok(false)
            }
            _ => Err(GIVE_UP),
        }
    }
}

impl Tokens<'_> {
    #[inline(always)]
    fn literal(&self, p: usize, word: &[u8]) -> Result<(), JsonError> {
        if self.b.get(p..p + word.len()) == Some(word) {
            self.delimited(p + word.len())
        } else {
            Err(GIVE_UP)
        }
    }
}

/// Classifies the block at `x.base` and keeps its tokens.
#[inline(always)]
fn index_block(b: &[u8], mut x: Index, avx2: bool) -> Index {
    let rest = &b[x.base..];
    let m = match rest.first_chunk::<64>() {
        Some(block) => classify(block, avx2),
        None => {
            // The last partial block, padded with spaces (which hold no tokens).
            let mut block = [b' '; 64];
            block[..rest.len()].copy_from_slice(rest);
            classify(&block, avx2)
        }
    };
    if m.backslash != 0 {
        x.dead = true;
        x.bits = 0;
        return x;
    }
    let inside = prefix_xor(m.quote) ^ x.in_string;
    x.in_string = ((inside as i64) >> 63) as u64;
    // Inside a string no control byte is allowed; outside, only whitespace ones.
    if m.control & (inside | !m.space) != 0 {
        x.dead = true;
        x.bits = 0;
        return x;
    }
    let scalar = !(m.space | m.structural | m.quote | inside);
    let starts = scalar & !((scalar << 1) | x.prev_scalar);
    x.prev_scalar = scalar >> 63;
    x.bits = (m.structural & !inside) | m.quote | starts;
    x
}

/// Bit `i` set when an odd number of the bits `0..=i` of `x` are set: with `x` the quote
/// bits, the bytes from an opening quote up to (not including) its closing quote.
#[inline(always)]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[inline(always)]
fn classify(block: &[u8; 64], avx2: bool) -> Masks {
    #[cfg(target_arch = "x86_64")]
    if avx2 {
        // SAFETY: `avx2` is true only when the CPU reported AVX2 (`has_avx2`).
        return unsafe { classify_avx2(block) };
    }
    let _ = avx2;
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        classify_sse2(block)
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        classify_bytes(block)
    }
}

/// AVX2: 32 bytes at a time, whitespace and structural bytes found by one table lookup
/// each (their low nibbles are distinct once `[`/`{` and `]`/`}` are folded together).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn classify_avx2(block: &[u8; 64]) -> Masks {
    use std::arch::x86_64::*;
    // Entry `n` is the one byte with low nibble `n` in the class; other entries hold a
    // byte whose low nibble is not `n`, so they never match.
    const SPACE: [u8; 16] = [
        b' ', 0, 0, 0, 0, 0, 0, 0, 0, b'\t', b'\n', 0, 0, b'\r', 0, 0,
    ];
    // Folded (| 0x20): `{` 0x7b, `}` 0x7d, `:` 0x3a, `,` 0x2c. The control bytes that
    // fold onto `:` and `,` (0x1a, 0x0c) are taken out again below.
    const STRUCTURAL: [u8; 16] = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, b':', b'{', b',', b'}', 0, 0];
    let mut m = Masks::default();
    // SAFETY: AVX2 is enabled for this function; the loads read bytes 32h..32h+32 of a
    // 64-byte array and the tables are 16 bytes each.
    unsafe {
        let space_t =
            _mm256_broadcastsi128_si256(_mm_loadu_si128(SPACE.as_ptr() as *const __m128i));
        let struct_t =
            _mm256_broadcastsi128_si256(_mm_loadu_si128(STRUCTURAL.as_ptr() as *const __m128i));
        for h in 0..2 {
            let v = _mm256_loadu_si256(block.as_ptr().add(32 * h) as *const __m256i);
            let eq = |c: u8| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(c as i8));
            let folded = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
            // A byte with its high bit set looks up 0, which never equals it.
            let space = _mm256_cmpeq_epi8(_mm256_shuffle_epi8(space_t, v), v);
            let control = _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(0x1f)), v);
            let structural = _mm256_andnot_si256(
                control,
                _mm256_cmpeq_epi8(_mm256_shuffle_epi8(struct_t, folded), folded),
            );
            let at = |mask: __m256i| u64::from(_mm256_movemask_epi8(mask) as u32) << (32 * h);
            m.quote |= at(eq(b'"'));
            m.backslash |= at(eq(b'\\'));
            m.space |= at(space);
            m.structural |= at(structural);
            m.control |= at(control);
        }
    }
    m
}

/// The portable classifier (and the reference the SIMD one is tested against).
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
fn classify_bytes(block: &[u8; 64]) -> Masks {
    let mut m = Masks::default();
    for (i, &c) in block.iter().enumerate() {
        let bit = 1u64 << i;
        match c {
            b'"' => m.quote |= bit,
            b'\\' => m.backslash |= bit,
            b' ' => m.space |= bit,
            b'\t' | b'\n' | b'\r' => {
                m.space |= bit;
                m.control |= bit;
            }
            b'{' | b'}' | b'[' | b']' | b':' | b',' => m.structural |= bit,
            0..=0x1f => m.control |= bit,
            _ => {}
        }
    }
    m
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn classify_sse2(block: &[u8; 64]) -> Masks {
    use std::arch::x86_64::*;
    let mut m = Masks::default();
    for k in 0..4 {
        // SAFETY: SSE2 is enabled at compile time (cfg above); the unaligned load reads
        // bytes 16k..16k+16 of a 64-byte array.
        let (quote, backslash, space, structural, control) = unsafe {
            let v = _mm_loadu_si128(block.as_ptr().add(16 * k) as *const __m128i);
            let eq = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
            // `[`/`{` and `]`/`}` differ only in bit 0x20.
            let folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
            let brackets = _mm_or_si128(
                _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'{' as i8)),
                _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'}' as i8)),
            );
            let structural = _mm_or_si128(brackets, _mm_or_si128(eq(b':'), eq(b',')));
            let space = _mm_or_si128(
                _mm_or_si128(eq(b' '), eq(b'\n')),
                _mm_or_si128(eq(b'\t'), eq(b'\r')),
            );
            // v <= 0x1f (unsigned) exactly when min(v, 0x1f) == v.
            let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
            (
                _mm_movemask_epi8(eq(b'"')),
                _mm_movemask_epi8(eq(b'\\')),
                _mm_movemask_epi8(space),
                _mm_movemask_epi8(structural),
                _mm_movemask_epi8(control),
            )
        };
        let at = |mask: i32| u64::from(mask as u16) << (16 * k);
        m.quote |= at(quote);
        m.backslash |= at(backslash);
        m.space |= at(space);
        m.structural |= at(structural);
        m.control |= at(control);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Wanted, parse_event};
    use crate::json::Cursor;

    #[test]
    fn simd_classes_match_the_byte_classes() {
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..2000 {
            let mut block = [0u8; 64];
            for b in block.iter_mut() {
                *b = match rng.u8(0..4) {
                    0 => rng.u8(..),
                    _ => *rng
                        .choice(b" \t\n\r\"\\{}[]:,0a-.\x00\x1f\x7f\x80\xff")
                        .unwrap_or(&b' '),
                };
            }
            let b = classify_bytes(&block);
            for avx2 in [false, has_avx2()] {
                let a = classify(&block, avx2);
                assert_eq!(
                    (a.quote, a.backslash, a.space, a.structural, a.control),
                    (b.quote, b.backslash, b.space, b.structural, b.control),
                    "avx2 {avx2}"
                );
            }
        }
    }

    #[test]
    fn prefix_xor_marks_string_interiors() {
        // Quotes at 1 and 4: bytes 1..4 are inside.
        assert_eq!(prefix_xor(0b1_0010), 0b0_1110);
    }

    /// What each path makes of `text` (an event at offset 0): a debug rendering of the
    /// event and its end, or None when it fails.
    fn both(text: &[u8]) -> (Option<String>, Option<String>) {
        let wanted = Wanted::EVERYTHING;
        let mut stack = Vec::new();
        let mut t = Tokens::new(text, 0, &Carry::new());
        let fast = parse_event(&mut t, &mut stack, wanted)
            .ok()
            .map(|e| format!("{e:?} end {}", t.end()));
        let mut c = Cursor::new(text, 0);
        let slow = parse_event(&mut c, &mut stack, wanted)
            .ok()
            .map(|e| format!("{e:?} end {}", c.i));
        (fast, slow)
    }

    #[test]
    fn fast_path_reads_kineto_events_as_the_cursor_does() {
        let kernel = br#"{
    "ph": "X", "cat": "kernel", "name": "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT", "pid": 0, "tid": 7,
    "ts": 5161116323713.531, "dur": 37.376,
    "args": {
            "queued": 0, "device": 0, "context": 1,      "stream": 7, "correlation": 7,      "registers per thread": 168,      "shared memory": 213188,      "blocks per SM": 1.000000,      "warps per SM": 12.000000,      "grid": [2, 66, 1],      "block": [384, 1, 1],      "est. achieved occupancy %": 0, "x": [true, false, null, {"a": [[], {}]}], "y": -1.5e-3
    }
  },"#;
        let (fast, slow) = both(kernel);
        assert!(
            fast.is_some(),
            "the fast path must read a plain Kineto kernel"
        );
        assert_eq!(fast, slow);
    }

    #[test]
    fn fast_path_gives_up_on_escapes_and_never_accepts_what_the_cursor_rejects() {
        let cases: &[&[u8]] = &[
            br#"{"name": "a\"b", "ph": "X"} "#,
            br#"{"name": "a", "ph": "X"}"#,
            br#"{"name": "a", "ph": 1x} "#,
            br#"{"name": "a", "ph": 01} "#,
            br#"{"name": "a", "ph": tru} "#,
            br#"{"name": "a", "ph": "X",} "#,
            br#"{"name": "a" "ph": "X"} "#,
            br#"{"name": "a", "ph": [1 2]} "#,
            br#"{"name": "a", "ph": [1,]} "#,
            b"{\"name\": \"a\tb\"} ",
            b"{\"name\": 1\x01} ",
            b"{\"name\": \"\xff\"} ",
            br#"{"name": 1"x"} "#,
            br#"{"a": {"b": 1}, "c": [1, {"d": null}]} "#,
            br#"{"a": 1]"#,
            br#"{"a": 1.} "#,
            br#"{"a": -} "#,
            br#"{"a": 1e+} "#,
            br#"{"a": 1E+5} "#,
            br#"{} "#,
            br#"{ } "#,
            br#"{"a":[]} "#,
        ];
        for case in cases {
            let (fast, slow) = both(case);
            if fast.is_some() {
                assert_eq!(fast, slow, "{}", String::from_utf8_lossy(case));
            }
        }
        assert!(both(br#"{"name": "a\"b", "ph": "X"} "#).0.is_none());
    }

    #[test]
    fn fast_path_agrees_on_random_mutations_of_an_event() {
        let base: &[u8] = br#"{"ph": "X", "cat": "kernel", "name": "k<1, 2>", "pid": 0, "tid": "stream 7", "ts": 12.5, "dur": 3, "id": 4, "args": {"correlation": 7, "External id": 9, "device": 0, "grid": [1, 2, 3], "block": [4, 5, 6], "z": [{"q": "r"}, true]}} , "#;
        let alphabet = b" \t\n\"\\{}[]:,0123456789.-eEtrufalsn\x00\x1f\x80xyz";
        let mut rng = fastrand::Rng::with_seed(11);
        let mut accepted = 0;
        for _ in 0..20_000 {
            let mut text = base.to_vec();
            for _ in 0..rng.usize(1..4) {
                let at = rng.usize(1..text.len());
                match rng.u8(0..3) {
                    0 => text[at] = *rng.choice(alphabet).unwrap_or(&b' '),
                    1 => {
                        text.remove(at);
                    }
                    _ => text.insert(at, *rng.choice(alphabet).unwrap_or(&b' ')),
                }
            }
            let (fast, slow) = both(&text);
            if fast.is_some() {
                accepted += 1;
                assert_eq!(fast, slow, "{}", String::from_utf8_lossy(&text));
            }
        }
        assert!(
            accepted > 1000,
            "mutations the fast path still read: {accepted}"
        );
    }
}
