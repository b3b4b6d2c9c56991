//! A small validating JSON cursor over borrowed bytes.
//!
//! Why not a general JSON crate: the reader needs a handful of fields from each event,
//! strings borrowed from the input, exact number text (for integer-ns times), and
//! validation of everything else without building values. Nesting is walked with an
//! explicit stack, so 200k levels of `[[[[` cannot overflow the thread stack.

use std::borrow::Cow;

/// Why a value could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonError {
    /// The bytes ended inside the value.
    Eof,
    /// The bytes are not JSON; the text says what was expected.
    Invalid(&'static str),
}

/// A JSON string as it appears in the input, quotes removed, escapes not yet decoded.
/// Equal when spelled the same (two spellings may still decode to one string).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct RawStr<'a> {
    pub(crate) raw: &'a [u8],
    pub(crate) escaped: bool,
}

impl<'a> RawStr<'a> {
    /// Decodes the string. Borrows unless it holds escapes or invalid UTF-8, which is
    /// replaced (U+FFFD) rather than rejected: a damaged name still names a kernel.
    pub(crate) fn decode(&self) -> Cow<'a, str> {
        if !self.escaped {
            // `from_utf8` checks ASCII a word at a time; `from_utf8_lossy` walks the bytes
            // (`Utf8Chunks`, 6.8% of an observed eager read's instructions): try it first.
            return match std::str::from_utf8(self.raw) {
                Ok(text) => Cow::Borrowed(text),
                Err(_) => String::from_utf8_lossy(self.raw),
            };
        }
        let mut out: Vec<u8> = Vec::with_capacity(self.raw.len());
        let b = self.raw;
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c != b'\\' {
                out.push(c);
                i += 1;
                continue;
            }
            let Some(&e) = b.get(i + 1) else { break };
            i += 2;
            let simple = match e {
                b'"' => Some(b'"'),
                b'\\' => Some(b'\\'),
                b'/' => Some(b'/'),
                b'b' => Some(8),
                b'f' => Some(12),
                b'n' => Some(b'\n'),
                b'r' => Some(b'\r'),
                b't' => Some(b'\t'),
                _ => None,
            };
            if let Some(s) = simple {
                out.push(s);
                continue;
            }
            // \uXXXX, possibly a surrogate pair; a lone surrogate becomes U+FFFD.
            let Some(hi) = hex4(b, i) else { break };
            i += 4;
            let ch = if (0xD800..0xDC00).contains(&hi)
                && b.get(i) == Some(&b'\\')
                && b.get(i + 1) == Some(&b'u')
            {
                match hex4(b, i + 2) {
                    Some(lo) if (0xDC00..0xE000).contains(&lo) => {
                        i += 6;
                        char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                    }
                    _ => None,
                }
            } else {
                char::from_u32(hi)
            };
            let mut buf = [0u8; 4];
            out.extend_from_slice(ch.unwrap_or('\u{FFFD}').encode_utf8(&mut buf).as_bytes());
        }
        match String::from_utf8(out) {
            Ok(s) => Cow::Owned(s),
            Err(e) => Cow::Owned(String::from_utf8_lossy(e.as_bytes()).into_owned()),
        }
    }

    /// Whether the decoded string equals `s` (fast path without decoding).
    pub(crate) fn eq_str(&self, s: &str) -> bool {
        if self.escaped {
            self.decode() == s
        } else {
            self.raw == s.as_bytes()
        }
    }
}

fn hex4(b: &[u8], at: usize) -> Option<u32> {
    let digits = b.get(at..at + 4)?;
    let mut v = 0u32;
    for &d in digits {
        v = v * 16 + (d as char).to_digit(16)?;
    }
    Some(v)
}

/// Bytes that end the fast part of a string scan: quote, backslash, control characters.
const STRING_STOP: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// Offset of the first quote, backslash or control character: the end of a string's
/// plain run. Strings are most of a trace's bytes, so this is scanned 16 bytes at a time.
#[inline]
pub(crate) fn find_string_stop(b: &[u8]) -> Option<usize> {
    let mut i = 0;
    while let Some(w) = b.get(i..i + 16) {
        let mask = stop_mask(w.try_into().ok()?);
        if mask != 0 {
            return Some(i + mask.trailing_zeros() as usize);
        }
        i += 16;
    }
    b[i..]
        .iter()
        .position(|&c| STRING_STOP[c as usize])
        .map(|p| i + p)
}

/// A position in a byte slice with JSON reading primitives.
pub(crate) struct Cursor<'a> {
    pub(crate) b: &'a [u8],
    pub(crate) i: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(b: &'a [u8], i: usize) -> Self {
        Cursor { b, i }
    }

    #[inline]
    pub(crate) fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    #[inline]
    pub(crate) fn skip_ws(&mut self) {
        let rest = self.b.get(self.i..).unwrap_or_default();
        // Most gaps are empty or one space: test the first byte before looping.
        match rest.first() {
            Some(b' ' | b'\n' | b'\r' | b'\t') => {}
            _ => return,
        }
        self.i += rest
            .iter()
            .position(|&c| !matches!(c, b' ' | b'\n' | b'\r' | b'\t'))
            .unwrap_or(rest.len());
    }

    #[inline(always)]
    fn expect(&mut self, c: u8, what: &'static str) -> Result<(), JsonError> {
        match self.peek() {
            Some(x) if x == c => {
                self.i += 1;
                Ok(())
            }
            Some(_) => Err(JsonError::Invalid(what)),
            None => Err(JsonError::Eof),
        }
    }

    /// Reads a string; the cursor must be on its opening quote.
    #[inline(always)]
    pub(crate) fn string(&mut self) -> Result<RawStr<'a>, JsonError> {
        self.expect(b'"', "expected a string")?;
        let start = self.i;
        let mut escaped = false;
        loop {
            let Some(off) = find_string_stop(&self.b[self.i..]) else {
                self.i = self.b.len();
                return Err(JsonError::Eof);
            };
            self.i += off;
            match self.b[self.i] {
                b'"' => {
                    let raw = &self.b[start..self.i];
                    self.i += 1;
                    return Ok(RawStr { raw, escaped });
                }
                b'\\' => {
                    escaped = true;
                    match self.b.get(self.i + 1) {
                        None => return Err(JsonError::Eof),
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.i += 2,
                        Some(b'u') => {
                            if self.b.len() < self.i + 6 {
                                return Err(JsonError::Eof);
                            }
                            if hex4(self.b, self.i + 2).is_none() {
                                return Err(JsonError::Invalid("invalid \\u escape in string"));
                            }
                            self.i += 6;
                        }
                        Some(_) => return Err(JsonError::Invalid("invalid escape in string")),
                    }
                }
                _ => return Err(JsonError::Invalid("control character in string")),
            }
        }
    }

    /// Reads a number and returns its text.
    #[inline(always)]
    pub(crate) fn number(&mut self) -> Result<&'a [u8], JsonError> {
        let b = self.b;
        let start = self.i;
        match number_span(b, start) {
            // A number can only be known complete once a following byte is seen.
            Ok(end) if end < b.len() => {
                self.i = end;
                Ok(&b[start..end])
            }
            Ok(_) => Err(JsonError::Eof),
            Err(at) if at >= b.len() => Err(JsonError::Eof),
            Err(_) => Err(JsonError::Invalid("invalid number")),
        }
    }

    #[inline(always)]
    fn literal(&mut self, word: &'static [u8]) -> Result<(), JsonError> {
        let end = self.i + word.len();
        let have = &self.b[self.i..self.b.len().min(end)];
        if have.len() < word.len() {
            return if word.starts_with(have) {
                Err(JsonError::Eof)
            } else {
                Err(JsonError::Invalid("invalid literal"))
            };
        }
        if have != word {
            return Err(JsonError::Invalid("invalid literal"));
        }
        self.i = end;
        Ok(())
    }

    /// Reads one scalar (string, number, literal) and reports what it was.
    #[inline(always)]
    pub(crate) fn scalar(&mut self) -> Result<Scalar<'a>, JsonError> {
        match self.peek() {
            None => Err(JsonError::Eof),
            Some(b'"') => Ok(Scalar::Str(self.string()?)),
            Some(b'-' | b'0'..=b'9') => Ok(Scalar::Num(self.number()?)),
            Some(b't') => self.literal(b"true").map(|_| Scalar::Other),
            Some(b'f') => self.literal(b"false").map(|_| Scalar::Other),
            Some(b'n') => self.literal(b"null").map(|_| Scalar::Null),
            Some(_) => Err(JsonError::Invalid("expected a value")),
        }
    }

    /// Reads any value and returns what kind it was; containers are validated and skipped.
    #[inline(always)]
    pub(crate) fn value(&mut self, stack: &mut Vec<u8>) -> Result<Value<'a>, JsonError> {
        value(self, stack)
    }

    /// Skips any value (validating it).
    #[inline(always)]
    pub(crate) fn skip_value(&mut self, stack: &mut Vec<u8>) -> Result<(), JsonError> {
        value(self, stack).map(|_| ())
    }

    /// Reads `"key" :` with whitespace around the colon; the cursor must be on the quote.
    #[inline(always)]
    pub(crate) fn key(&mut self) -> Result<RawStr<'a>, JsonError> {
        if self.peek() != Some(b'"') {
            return match self.peek() {
                None => Err(JsonError::Eof),
                Some(_) => Err(JsonError::Invalid("expected a member name")),
            };
        }
        let k = self.string()?;
        self.skip_ws();
        self.expect(b':', "expected ':' after member name")?;
        self.skip_ws();
        Ok(k)
    }

    /// After a member or element: consumes `,` (returns true) or the closer (returns false).
    #[inline(always)]
    pub(crate) fn next_or_close(&mut self, close: u8) -> Result<bool, JsonError> {
        self.skip_ws();
        match self.peek() {
            None => Err(JsonError::Eof),
            Some(b',') => {
                self.i += 1;
                self.skip_ws();
                Ok(true)
            }
            Some(c) if c == close => {
                self.i += 1;
                Ok(false)
            }
            Some(_) => Err(JsonError::Invalid(if close == b'}' {
                "expected ',' or '}' in object"
            } else {
                "expected ',' or ']' in array"
            })),
        }
    }

    /// Opens a container; returns false if it is empty (and consumes the closer).
    #[inline(always)]
    pub(crate) fn open(&mut self, open: u8, close: u8) -> Result<bool, JsonError> {
        self.expect(
            open,
            if open == b'{' {
                "expected an object"
            } else {
                "expected an array"
            },
        )?;
        self.skip_ws();
        match self.peek() {
            None => Err(JsonError::Eof),
            Some(c) if c == close => {
                self.i += 1;
                Ok(false)
            }
            Some(_) => Ok(true),
        }
    }
}

/// The reading primitives the event parser is written against. [`Cursor`] walks the bytes
/// one by one and is the one reader today (a structural index also implemented this
/// until issue 20 measured it no faster); a reader must accept exactly JSON, so an event
/// parsed by any is the same event.
pub(crate) trait JsonRead<'a> {
    /// The first byte of the next token, `None` at the end of the input.
    fn peek(&mut self) -> Option<u8>;
    /// Where the next token starts.
    fn here(&mut self) -> usize;
    /// Where the last closer consumed ends (one past its byte).
    fn closed_at(&self) -> usize;
    /// The input.
    fn bytes(&self) -> &'a [u8];
    /// Opens a container; returns false if it is empty (and consumes the closer).
    fn open(&mut self, open: u8, close: u8) -> Result<bool, JsonError>;
    /// Reads `"key" :`; the next token must be the key's quote.
    fn key(&mut self) -> Result<RawStr<'a>, JsonError>;
    /// Reads one scalar (string, number, literal) and reports what it was.
    fn scalar(&mut self) -> Result<Scalar<'a>, JsonError>;
    /// After a member or element: consumes `,` (returns true) or the closer (returns false).
    fn next_or_close(&mut self, close: u8) -> Result<bool, JsonError>;
    /// Validates and skips the object or array the next token opens.
    fn skip_container(&mut self, stack: &mut Vec<u8>) -> Result<(), JsonError> {
        skip_container(self, stack)
    }
}

impl<'a> JsonRead<'a> for Cursor<'a> {
    #[inline(always)]
    fn peek(&mut self) -> Option<u8> {
        Cursor::peek(self)
    }
    #[inline(always)]
    fn here(&mut self) -> usize {
        self.i
    }
    #[inline(always)]
    fn closed_at(&self) -> usize {
        self.i
    }
    #[inline(always)]
    fn bytes(&self) -> &'a [u8] {
        self.b
    }
    #[inline(always)]
    fn open(&mut self, open: u8, close: u8) -> Result<bool, JsonError> {
        Cursor::open(self, open, close)
    }
    #[inline(always)]
    fn key(&mut self) -> Result<RawStr<'a>, JsonError> {
        Cursor::key(self)
    }
    #[inline(always)]
    fn scalar(&mut self) -> Result<Scalar<'a>, JsonError> {
        Cursor::scalar(self)
    }
    #[inline(always)]
    fn next_or_close(&mut self, close: u8) -> Result<bool, JsonError> {
        Cursor::next_or_close(self, close)
    }
}

/// Reads any value and returns what kind it was; containers are validated and skipped.
#[inline(always)]
pub(crate) fn value<'a, R: JsonRead<'a>>(
    r: &mut R,
    stack: &mut Vec<u8>,
) -> Result<Value<'a>, JsonError> {
    match r.peek() {
        Some(b'{') | Some(b'[') => {
            let start = r.here();
            r.skip_container(stack)?;
            Ok(Value::Container(&r.bytes()[start..r.closed_at()]))
        }
        _ => r.scalar().map(Value::Scalar),
    }
}

/// Validates and skips an object or array without recursion.
pub(crate) fn skip_container<'a, R: JsonRead<'a> + ?Sized>(
    r: &mut R,
    stack: &mut Vec<u8>,
) -> Result<(), JsonError> {
    let base = stack.len();
    let result = skip_container_inner(r, stack, base);
    stack.truncate(base);
    result
}

fn skip_container_inner<'a, R: JsonRead<'a> + ?Sized>(
    r: &mut R,
    stack: &mut Vec<u8>,
    base: usize,
) -> Result<(), JsonError> {
    'value: loop {
        // Expecting a value.
        match r.peek() {
            Some(b'{') => {
                if r.open(b'{', b'}')? {
                    stack.push(b'}');
                    r.key()?;
                    continue 'value;
                }
            }
            Some(b'[') => {
                if r.open(b'[', b']')? {
                    stack.push(b']');
                    continue 'value;
                }
            }
            _ => {
                r.scalar()?;
            }
        }
        // After a value: close containers until one continues.
        loop {
            if stack.len() <= base {
                return Ok(());
            }
            let Some(&close) = stack.last() else {
                return Ok(());
            };
            if r.next_or_close(close)? {
                if close == b'}' {
                    r.key()?;
                }
                continue 'value;
            }
            stack.pop();
        }
    }
}

/// A scalar value.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Scalar<'a> {
    Str(RawStr<'a>),
    Num(&'a [u8]),
    Null,
    Other,
}

/// Any value: a scalar, or the raw text of an object or array.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Value<'a> {
    Scalar(Scalar<'a>),
    Container(&'a [u8]),
}

impl<'a> Value<'a> {
    /// The integer value of a plain JSON integer (no fraction, no exponent).
    pub(crate) fn as_int(&self) -> Option<i64> {
        match self {
            Value::Scalar(Scalar::Num(t)) => parse_int(t),
            _ => None,
        }
    }
}

/// The end of the JSON number starting at `p`, or None if the grammar fails there (the
/// fast paths' check; [`Cursor::number`] also tells a cut-short number from a bad one).
#[inline(always)]
pub(crate) fn number_end(b: &[u8], p: usize) -> Option<usize> {
    if let Some(w) = b.get(p..p + 32)
        && let Some(n) = plain_number_len(w)
    {
        return Some(p + n);
    }
    number_span(b, p).ok()
}

/// The length of the number at the start of the 32 bytes `w` when it has one of the
/// common forms, `0`, `[1-9]digits`, `0.digits` and `[1-9]digits.digits`, and ends
/// within them (every timestamp, id and count a profiler writes); None for any other
/// form (a sign, an exponent, a long run, not a number), which the grammar walk
/// ([`number_span`]) settles. Where it gives a length, the walk gives the same.
#[inline(always)]
pub(crate) fn plain_number_len(w: &[u8]) -> Option<usize> {
    let (a, b) = w.get(..32)?.split_at(16);
    let (a, b): (&[u8; 16], &[u8; 16]) = (a.try_into().ok()?, b.try_into().ok()?);
    // Bits set where a byte is not a digit, and past the 16 bytes looked at, so every
    // count stops at its width. (Counted on the non-digits, the ops a value's end waits
    // on are a compare, a mask and a count: no inversion between them.)
    let lo = non_digit_mask(a) | !0xFFFF;
    let int = match w[0] {
        b'1'..=b'9' => {
            let int = lo.trailing_zeros() as usize;
            // The first 16 bytes settle short integers.
            if int < 16 && !matches!(w[int], b'.' | b'e' | b'E') {
                return Some(int);
            }
            int
        }
        // A leading zero is the whole integer part (JSON has no `01`).
        b'0' => {
            if !matches!(w[1], b'.' | b'e' | b'E') {
                return Some(1);
            }
            1
        }
        _ => return None,
    };
    let nd = (lo & 0xFFFF) | (non_digit_mask(b) << 16) | !0xFFFF_FFFF;
    // An integer part of 16 digits or more runs on into the second 16 bytes.
    let int = if int == 16 {
        nd.trailing_zeros() as usize
    } else {
        int
    };
    if int >= 32 {
        return None;
    }
    let q = match w[int] {
        b'.' => {
            // The point is the first non-digit (at `int`); the next one ends the
            // fraction. Clearing the lowest bit finds it without a shift by `int`,
            // which would wait on `int`'s own count.
            let q = (nd & nd.wrapping_sub(1)).trailing_zeros() as usize;
            if q == int + 1 {
                return None;
            }
            q
        }
        _ => int,
    };
    (q < 32 && !matches!(w[q], b'e' | b'E')).then_some(q)
}

/// Bit `i` set when byte `i` of the 16 is an ASCII digit.
#[inline(always)]
pub(crate) fn digit_mask(w: &[u8; 16]) -> u64 {
    !non_digit_mask(w) & 0xFFFF
}

/// Bit `i` set when byte `i` of the 16 is not an ASCII digit (bits 16 and up clear).
#[inline(always)]
pub(crate) fn non_digit_mask(w: &[u8; 16]) -> u64 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is enabled at compile time (cfg above) and the unaligned load
        // reads the 16 bytes of `w`.
        unsafe {
            let v = _mm_loadu_si128(w.as_ptr() as *const __m128i);
            // v + 0x50 moves '0'..='9' to the ten lowest signed bytes (-128..=-119) and
            // every other byte above them: one signed compare tells them apart, where
            // a subtract, a minimum and an equality took three ops (a value's end waits
            // on this mask).
            let x = _mm_add_epi8(v, _mm_set1_epi8(0x50));
            let other = _mm_cmpgt_epi8(x, _mm_set1_epi8(-119));
            _mm_movemask_epi8(other) as u32 as u64
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        w.iter()
            .enumerate()
            .fold(0, |m, (i, c)| m | (u64::from(!c.is_ascii_digit()) << i))
    }
}

/// Bit `i` set when byte `i` of the 16 ends a string's plain run (quote, backslash or
/// control byte: see [`STRING_STOP`]).
#[inline(always)]
pub(crate) fn stop_mask(w: &[u8; 16]) -> u32 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is enabled at compile time (cfg above) and the unaligned load
        // reads the 16 bytes of `w`.
        unsafe {
            let v = _mm_loadu_si128(w.as_ptr() as *const __m128i);
            let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
            let slash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
            // v <= 0x1f (unsigned) exactly when min(v, 0x1f) == v.
            let ctrl = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
            _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, slash), ctrl)) as u32
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        w.iter().enumerate().fold(0, |m, (i, &c)| {
            m | (u32::from(STRING_STOP[c as usize]) << i)
        })
    }
}

/// JSON's number grammar from `p`: the end of the number (which may be the end of `b`),
/// or where a digit was needed and not found (`b.len()` or past when the bytes ran out).
#[inline(always)]
fn number_span(b: &[u8], p: usize) -> Result<usize, usize> {
    let digits_from = |mut i: usize| {
        // Eight bytes at a time while they are all digits (timestamps have 13 or more).
        while let Some(w) = b.get(i..i + 8) {
            let n = leading_digits(u64::from_le_bytes([
                w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7],
            ]));
            i += n;
            if n < 8 {
                return i;
            }
        }
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    let mut i = p + usize::from(b.get(p) == Some(&b'-'));
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits_from(i + 1),
        _ => return Err(i),
    }
    if b.get(i) == Some(&b'.') {
        let e = digits_from(i + 1);
        if e == i + 1 {
            return Err(e);
        }
        i = e;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let e = digits_from(i);
        if e == i {
            return Err(e);
        }
        i = e;
    }
    Ok(i)
}

/// How many of the eight bytes of `w` (first byte lowest) are ASCII digits before the
/// first that is not.
#[inline(always)]
fn leading_digits(w: u64) -> usize {
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const THREES: u64 = 0x3030_3030_3030_3030;
    const SIXES: u64 = 0x0606_0606_0606_0606;
    // A byte is a digit when its high nibble is 3 and stays 3 after adding 6. A carry
    // out of a byte (only from 0xfa..=0xff, not digits) moves into a later byte: the
    // count up to the first non-digit is unaffected.
    let not_digit = ((w & HIGH) ^ THREES) | ((w.wrapping_add(SIXES) & HIGH) ^ THREES);
    (not_digit.trailing_zeros() / 8) as usize
}

/// Parses a JSON integer literal; fractions, exponents and overflow are not integers.
/// (Inlined: a shape's event converts ten of them, and the call cost as much as the
/// digits.)
#[inline(always)]
pub(crate) fn parse_int(t: &[u8]) -> Option<i64> {
    // Up to 18 digits cannot overflow: the common case (counts, ids, dims) without
    // checked arithmetic. The first byte's digit test also turns away a sign (for the
    // path below), and a one-digit number (a pid, a device, most grid and block sizes)
    // never enters the loop.
    if let Some((&first, rest)) = t.split_first()
        && rest.len() < 18
    {
        let x = first.wrapping_sub(b'0');
        if x <= 9 {
            let mut v = i64::from(x);
            for &d in rest {
                let x = d.wrapping_sub(b'0');
                if x > 9 {
                    return None;
                }
                v = v * 10 + i64::from(x);
            }
            return Some(v);
        }
    }
    let (negative, digits) = match t.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, t),
    };
    if digits.is_empty() {
        return None;
    }
    // Accumulate negatively so i64::MIN parses.
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_sub(i64::from(d - b'0'))?;
    }
    if negative { Some(v) } else { v.checked_neg() }
}

/// The position after the `}` matching the `{` at `start`, respecting strings.
pub(crate) fn match_braces(buf: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    while i < buf.len() {
        match buf[i] {
            b'"' => i = string_end(buf, i)?,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Index of the closing quote of the string opened at `open`.
pub(crate) fn string_end(buf: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    loop {
        // Not memchr: xtask's scaler compiles this file without that crate, and this
        // only runs when recovering from a malformed event or walking the prefix.
        let off = buf[i..].iter().position(|&b| b == b'"' || b == b'\\')?;
        i += off;
        if buf[i] == b'\\' {
            i += 2;
            if i > buf.len() {
                return None;
            }
        } else {
            return Some(i);
        }
    }
}

/// Skips a non-object element to the next top-level `,` or `]` (which is not consumed).
pub(crate) fn skip_element(buf: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    while i < buf.len() {
        match buf[i] {
            b'"' => i = string_end(buf, i)?,
            b'{' | b'[' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            b']' if depth == 0 => return Some(i),
            b']' => depth -= 1,
            b',' if depth == 0 => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// A top-level member found before `traceEvents`: where its name starts, its value's
/// range, and where the next member starts (None when no valid separator follows).
pub(crate) struct PrefixMember {
    pub(crate) name_at: usize,
    pub(crate) value: (usize, usize),
    pub(crate) next_at: Option<usize>,
}

/// Walks the top-level members that precede `traceEvents` until `member`.
pub(crate) fn find_prefix_member(prefix: &[u8], member: &str) -> Option<PrefixMember> {
    let start = prefix.iter().position(|&b| b == b'{')?;
    let mut c = Cursor::new(prefix, start);
    let mut stack = Vec::new();
    if !c.open(b'{', b'}').ok()? {
        return None;
    }
    loop {
        let name_at = c.i;
        let key = c.key().ok()?;
        if key.eq_str("traceEvents") {
            return None;
        }
        let value_at = c.i;
        c.skip_value(&mut stack).ok()?;
        let value = (value_at, c.i);
        let more = c.next_or_close(b'}');
        if key.eq_str(member) {
            return Some(PrefixMember {
                name_at,
                value,
                next_at: more.is_ok().then_some(c.i),
            });
        }
        if !more.ok()? {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skip(s: &str) -> Result<usize, JsonError> {
        let mut c = Cursor::new(s.as_bytes(), 0);
        let mut st = Vec::new();
        c.skip_value(&mut st).map(|_| c.i)
    }

    #[test]
    fn skips_nested_values() {
        assert_eq!(skip(r#"{"a":[1,2,{"b":null}],"c":"x\"y"} "#), Ok(33));
        assert_eq!(skip("[] "), Ok(2));
        assert_eq!(skip("{} "), Ok(2));
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let depth = 200_000;
        let s = format!("{}{} ", "[".repeat(depth), "]".repeat(depth));
        assert_eq!(skip(&s), Ok(2 * depth));
    }

    #[test]
    fn rejects_bad_json() {
        assert!(matches!(skip("{\"a\" 1}"), Err(JsonError::Invalid(_))));
        assert!(matches!(skip("[1,]"), Err(JsonError::Invalid(_))));
        assert!(matches!(
            skip("{\"a\":invalid}"),
            Err(JsonError::Invalid(_))
        ));
        assert!(matches!(skip("[1 2]"), Err(JsonError::Invalid(_))));
        assert!(matches!(skip("[01]"), Err(JsonError::Invalid(_))));
        assert_eq!(skip("[1,2"), Err(JsonError::Eof));
        assert_eq!(skip("\"abc"), Err(JsonError::Eof));
    }

    #[test]
    fn decodes_escapes_and_pairs() {
        let mut c = Cursor::new(br#""a\u00e9\ud83d\ude00\n\ud800x" "#, 0);
        let s = c.string().map(|s| s.decode().into_owned());
        assert_eq!(s.as_deref(), Ok("a\u{e9}\u{1F600}\n\u{FFFD}x"));
    }

    #[test]
    fn leading_digits_counts_like_the_byte_test() {
        // Every split point, with the bytes either side of the digit range and those whose
        // +6 carries out of the byte after it; the rest filled by a small LCG.
        let edges = [
            0u8, b' ', b'/', b':', b'.', b'e', 0x7f, 0x80, 0xf9, 0xfa, 0xff,
        ];
        let mut x: u32 = 1;
        let mut next = || {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (x >> 16) as u8
        };
        for k in 0..=8 {
            for &stop in &edges {
                for _ in 0..64 {
                    let mut w = [0u8; 8];
                    for (i, b) in w.iter_mut().enumerate() {
                        *b = match i.cmp(&k) {
                            std::cmp::Ordering::Less => b'0' + next() % 10,
                            std::cmp::Ordering::Equal => stop,
                            std::cmp::Ordering::Greater => next(),
                        };
                    }
                    let want = w.iter().take_while(|c| c.is_ascii_digit()).count();
                    assert_eq!(leading_digits(u64::from_le_bytes(w)), want, "{w:?}");
                }
            }
        }
    }

    #[test]
    fn parse_int_reads_what_i64_parsing_reads() {
        // The short unchecked path and the checked one, against the standard library.
        // A small LCG: xtask compiles this file too, without the test crates.
        let mut x: u64 = 3;
        let mut below = |n: usize| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            ((x >> 33) as usize) % n
        };
        let alphabet = b"0123456789012345678901234567890123456789-.e ";
        for _ in 0..100_000 {
            let len = below(22);
            let t: Vec<u8> = (0..len).map(|_| alphabet[below(alphabet.len())]).collect();
            let want = std::str::from_utf8(&t)
                .ok()
                .and_then(|s| s.parse::<i64>().ok());
            assert_eq!(parse_int(&t), want, "{}", String::from_utf8_lossy(&t));
        }
        for t in [
            "9223372036854775807",
            "-9223372036854775808",
            "999999999999999999",
        ] {
            assert_eq!(parse_int(t.as_bytes()), t.parse().ok(), "{t}");
        }
        assert_eq!(parse_int(b"9223372036854775808"), None);
    }

    #[test]
    fn non_digit_mask_marks_every_byte_that_is_not_a_digit() {
        // Every byte value at every lane: the signed-compare trick against the plain
        // definition, and `digit_mask` as its complement.
        for v in 0..=255u8 {
            for lane in 0..16 {
                let mut w = [b'5'; 16];
                w[lane] = v;
                let want = if v.is_ascii_digit() { 0 } else { 1 << lane };
                assert_eq!(non_digit_mask(&w), want, "byte {v:#04x} in lane {lane}");
                assert_eq!(
                    digit_mask(&w),
                    0xFFFF & !want,
                    "byte {v:#04x} in lane {lane}"
                );
            }
        }
    }

    #[test]
    fn plain_number_lengths_are_the_grammars() {
        // Windows of number-like bytes: wherever the mask path gives a length, the
        // grammar walk gives the same; it must give one for the plain forms.
        // A small LCG: xtask compiles this file too, without the test crates.
        let mut x: u64 = 17;
        let mut below = |n: usize| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            ((x >> 33) as usize) % n
        };
        let alphabet = b"0123456789000111.eE-+ ,]}x";
        let mut plain = 0;
        for _ in 0..200_000 {
            let mut w = [b' '; 32];
            let digits = below(34);
            for (i, b) in w.iter_mut().enumerate() {
                *b = if i < digits && below(8) != 0 {
                    b'0' + below(10) as u8
                } else {
                    alphabet[below(alphabet.len())]
                };
            }
            if let Some(n) = plain_number_len(&w) {
                plain += 1;
                assert_eq!(number_span(&w, 0), Ok(n), "{}", String::from_utf8_lossy(&w));
            }
        }
        assert!(plain > 10_000, "{plain}");
        for (text, len) in [
            ("0,", 1),
            ("0.5,", 3),
            ("7]", 1),
            ("5161116323696.891,", 17),
            ("1234567890123456789012345,", 25),
            ("12.000000, ", 9),
            // At and across the 16-byte boundary the first mask sees.
            ("1234567890123456,", 16),
            ("123456789012345,", 15),
            ("12345678901234.5,", 16),
            ("1234567890123.45,", 16),
            ("123456789012345.5,", 17),
            ("0.12345678901234,", 16),
            ("0.123456789012345,", 17),
            ("1.5]", 3),
        ] {
            let mut w = [b' '; 32];
            w[..text.len()].copy_from_slice(text.as_bytes());
            assert_eq!(plain_number_len(&w), Some(len), "{text}");
        }
        for text in [
            "-1,",
            "1e3,",
            "0e1",
            "1.,",
            "1.5E2",
            "12345678901234.e",
            "1234567890123.5e1",
            "123456789012345.",
            "0.1234567890123e5",
            "12345678901234567890123456789012",
        ] {
            let mut w = [b' '; 32];
            w[..text.len()].copy_from_slice(text.as_bytes());
            assert_eq!(plain_number_len(&w), None, "{text}");
        }
    }

    #[test]
    fn number_end_follows_the_grammar() {
        let end = |s: &str| number_end(s.as_bytes(), 0);
        assert_eq!(end("5161116323696.891,"), Some(17));
        assert_eq!(end("12345678901234567890 "), Some(20));
        assert_eq!(end("-0.5e-3]"), Some(7));
        assert_eq!(end("0123"), Some(1));
        assert_eq!(end("1."), None);
        assert_eq!(end("1e"), None);
        assert_eq!(end("-"), None);
        assert_eq!(end(".5"), None);
    }

    #[test]
    fn invalid_utf8_is_replaced_not_rejected() {
        let bytes = b"\"ab\xffcd\" ";
        let mut c = Cursor::new(bytes, 0);
        let s = c.string().map(|s| s.decode().into_owned());
        assert_eq!(s.as_deref(), Ok("ab\u{FFFD}cd"));
    }
}
