//! Exact conversion of JSON number text in microseconds to integer nanoseconds (trace.md "Numbers").
//!
//! Trace times are decimal microseconds with nanosecond fractions; going through `f64`
//! would drift (0.1 + 0.2 µs is not 0.3 µs), so the digits are scaled as integers.

/// Converts the text of a JSON number (decimal µs) to integer ns.
///
/// Digits past the nanosecond are rounded half away from zero. Returns `None` when the
/// text is not a JSON number or the result does not fit in `i64`.
pub fn micros_text_to_ns(text: &[u8]) -> Option<i64> {
    if let Some(ns) = plain_micros(text) {
        return Some(ns);
    }
    exact_micros(text)
}

/// The common shape, `[-]digits[.d{1,3}]` with at most 15 integer digits, in u64 without
/// rounding: every trace timestamp the profiler writes takes this path.
#[inline]
fn plain_micros(text: &[u8]) -> Option<i64> {
    let (negative, rest) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let mut v: u64 = 0;
    let mut i = 0;
    while let Some(d) = rest.get(i).filter(|d| d.is_ascii_digit()) {
        v = v * 10 + u64::from(d - b'0');
        i += 1;
        if i > 15 {
            return None;
        }
    }
    if i == 0 {
        return None;
    }
    let mut scale = 1000;
    if rest.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while let Some(d) = rest.get(i).filter(|d| d.is_ascii_digit()) {
            if i - start == 3 {
                return None;
            }
            v = v * 10 + u64::from(d - b'0');
            scale /= 10;
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    if i != rest.len() {
        return None;
    }
    let ns = i64::try_from(v * scale).ok()?;
    Some(if negative { -ns } else { ns })
}

/// [`micros_text_to_ns`] of the number text `w[..len]`, for the form every profiler
/// timestamp and duration has, `digits{1,15}[.d{1,3}]`, read from the 32 bytes `w`
/// that start with it (what follows the text is never part of the value); None for any
/// other form, which the byte-wise paths take.
///
/// Why: the digits are located with one digit mask and converted eight at a time,
/// instead of one multiply and two checks per digit.
#[inline(always)]
pub(crate) fn micros_window(w: &[u8], len: usize) -> Option<i64> {
    let w: &[u8; 32] = w.get(..32)?.try_into().ok()?;
    match kineto_micros(w, len) {
        Some(ns) => Some(ns),
        None => other_micros_window(w, len),
    }
}

/// [`micros_window`] for the form Kineto writes every time and duration in,
/// `digits{1,13}.ddd`; None for any other.
///
/// Why: with exactly three fraction digits the ns are the text's digits with the `.`
/// left out, at most 16 of them: the integer digits are shifted into place beside the
/// fraction's and all sixteen converted at once, with no per-length fraction loop.
#[inline(always)]
fn kineto_micros(w: &[u8; 32], len: usize) -> Option<i64> {
    let (a, _) = w.split_first_chunk::<16>()?;
    let int = (!crate::json::digit_mask(a)).trailing_zeros() as usize;
    if int == 0 || int > 13 || len != int + 4 {
        return None;
    }
    // The `.` and the three bytes after it (inside the window: int + 4 <= 17). Each byte
    // of a digit has high nibble 3, and adding 6 leaves it 3 (no carry: 0x39 + 6 = 0x3F).
    let (dot, _) = w.get(int..)?.split_first_chunk::<4>()?;
    let t = u32::from_le_bytes(*dot);
    if t & 0xF0F0_F0FF != 0x3030_302E || t.wrapping_add(0x0606_0600) & 0xF0F0_F000 != 0x3030_3000 {
        return None;
    }
    // The integer digits right-aligned in the first 13 bytes (zero bytes before them, read
    // as the digit 0), the three fraction digits in the last 3: the low 8 bytes are the
    // high 8 digits of the ns.
    let x = u128::from_le_bytes(*a);
    let digits = ((x << ((16 - int) * 8)) >> 24) | (u128::from(t >> 8) << 104);
    // At most 16 digits, so the ns fit in i64.
    i64::try_from(sixteen_digits(digits)).ok()
}

/// The value of sixteen ASCII digits (or zero bytes, read as 0), the first in the lowest
/// byte.
#[inline(always)]
fn sixteen_digits(digits: u128) -> u64 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is enabled at compile time (cfg above); registers only.
        unsafe {
            // Digit values as sixteen u16, then combined pairwise by multiply-and-add:
            // 2 digits, 4, 8 (lane 2i is the higher place, weighted; lane 2i + 1 added).
            let v = _mm_set_epi64x((digits >> 64) as i64, digits as i64);
            let v = _mm_and_si128(v, _mm_set1_epi8(0x0F));
            let zero = _mm_setzero_si128();
            let by = |w: i16| _mm_set_epi16(1, w, 1, w, 1, w, 1, w);
            let twos = _mm_packs_epi32(
                _mm_madd_epi16(_mm_unpacklo_epi8(v, zero), by(10)),
                _mm_madd_epi16(_mm_unpackhi_epi8(v, zero), by(10)),
            );
            // At most 9999 each: they fit the i16 lanes the last step multiplies.
            let fours = _mm_madd_epi16(twos, by(100));
            let eights = _mm_madd_epi16(_mm_packs_epi32(fours, fours), by(10_000));
            let high = _mm_cvtsi128_si32(eights) as u32;
            let low = _mm_cvtsi128_si32(_mm_srli_si128::<4>(eights)) as u32;
            u64::from(high) * 100_000_000 + u64::from(low)
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        eight_digits(digits as u64) * 100_000_000 + eight_digits((digits >> 64) as u64)
    }
}

/// [`micros_window`] for the forms [`kineto_micros`] leaves: up to 15 integer digits,
/// and 0 to 3 fraction digits.
#[inline(never)]
fn other_micros_window(w: &[u8; 32], len: usize) -> Option<i64> {
    // Read once: `w` may lie in a map of a file that shrinks under the read (its bytes
    // turn to zeros), and the digits checked below must be the digits converted after
    // (the read that saw the change is discarded, but may not panic meanwhile).
    let w: [u8; 32] = *w;
    let w = &w;
    let (a, b) = w.split_at(16);
    let (a, b): (&[u8; 16], &[u8; 16]) = (a.try_into().ok()?, b.try_into().ok()?);
    if len > 19 {
        return None;
    }
    // Which of the text's bytes are digits (none of what follows it).
    let d = (crate::json::digit_mask(a) | (crate::json::digit_mask(b) << 16)) & ((1 << len) - 1);
    let int = (!d).trailing_zeros() as usize;
    if int == 0 || int > 15 {
        return None;
    }
    let frac_len = if int == len {
        0
    } else {
        // A `.`, then 1 to 3 digits that reach exactly to the end of the text.
        let frac_len = len - int - 1;
        let all = (1u64 << frac_len.min(3)) - 1;
        if w.get(int) != Some(&b'.')
            || !(1..=3).contains(&frac_len)
            || (d >> (int + 1)) & all != all
        {
            return None;
        }
        frac_len
    };
    // The integer digits right-aligned in 16 bytes, zero bytes before them (a zero byte
    // converts as the digit 0): the low 8 bytes are the high 8 digits.
    let x = u128::from_le_bytes(*a) << ((16 - int) * 8);
    let whole = eight_digits(x as u64) * 100_000_000 + eight_digits((x >> 64) as u64);
    let mut frac = 0;
    for i in 0..3 {
        let digit = if i < frac_len {
            u64::from(w.get(int + 1 + i)? - b'0')
        } else {
            0
        };
        frac = frac * 10 + digit;
    }
    // Below 10^15 µs, so the ns fit in i64.
    i64::try_from(whole * 1000 + frac).ok()
}

/// The value of eight ASCII digits (or zero bytes, read as 0), the first in the lowest
/// byte: pairs, then fours, then all eight combined by multiply-and-add in one word.
#[inline(always)]
fn eight_digits(v: u64) -> u64 {
    let v = v & 0x0F0F_0F0F_0F0F_0F0F;
    let v = (v * 10 + (v >> 8)) & 0x00FF_00FF_00FF_00FF;
    let v = (v * 100 + (v >> 16)) & 0x0000_FFFF_0000_FFFF;
    (v * 10_000 + (v >> 32)) & 0xFFFF_FFFF
}

/// Any JSON number, rounded half away from zero to the ns.
fn exact_micros(text: &[u8]) -> Option<i64> {
    let (negative, rest) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let mut i = 0;
    let int_start = i;
    while i < rest.len() && rest[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = &rest[int_start..i];
    if int_digits.is_empty() {
        return None;
    }
    let mut frac_digits: &[u8] = &[];
    if i < rest.len() && rest[i] == b'.' {
        let start = i + 1;
        i = start;
        while i < rest.len() && rest[i].is_ascii_digit() {
            i += 1;
        }
        frac_digits = &rest[start..i];
        if frac_digits.is_empty() {
            return None;
        }
    }
    let mut exponent: i64 = 0;
    if i < rest.len() && (rest[i] == b'e' || rest[i] == b'E') {
        i += 1;
        let mut exp_negative = false;
        if i < rest.len() && (rest[i] == b'+' || rest[i] == b'-') {
            exp_negative = rest[i] == b'-';
            i += 1;
        }
        let start = i;
        while i < rest.len() && rest[i].is_ascii_digit() {
            // Saturate: any exponent this large over- or underflows i64 ns anyway.
            exponent = (exponent * 10 + i64::from(rest[i] - b'0')).min(1_000_000);
            i += 1;
        }
        if i == start {
            return None;
        }
        if exp_negative {
            exponent = -exponent;
        }
    }
    if i != rest.len() {
        return None;
    }
    // value = digits × 10^(exponent + 3 − frac_len) ns, digits = int ++ frac. The
    // magnitude may reach 2^63, which is i64::MIN when negative; `try_from` below refuses
    // it when positive.
    let limit = i128::from(i64::MAX) + 1;
    let shift = exponent + 3 - frac_digits.len() as i64;
    let digits = int_digits.iter().chain(frac_digits.iter()).copied();
    let total = int_digits.len() + frac_digits.len();
    let magnitude = if shift >= 0 {
        let mut acc: i128 = 0;
        for d in digits {
            acc = acc * 10 + i128::from(d - b'0');
            if acc > limit {
                return None;
            }
        }
        if acc == 0 {
            0
        } else {
            for _ in 0..shift {
                acc *= 10;
                if acc > limit {
                    return None;
                }
            }
            acc
        }
    } else {
        let dropped = (-shift) as usize;
        if dropped > total {
            // Every digit lies below the half-ns place: the value rounds to 0.
            0
        } else {
            let kept = total - dropped;
            let mut acc: i128 = 0;
            let mut round_up = false;
            for (pos, d) in digits.enumerate() {
                if pos == kept {
                    // The first dropped digit decides: >= 5 means at least one half.
                    round_up = d >= b'5';
                    break;
                }
                acc = acc * 10 + i128::from(d - b'0');
                if acc > limit {
                    return None;
                }
            }
            acc + i128::from(round_up)
        }
    };
    let value = if negative { -magnitude } else { magnitude };
    i64::try_from(value).ok()
}

#[cfg(test)]
mod tests {
    use super::micros_text_to_ns as ns;

    #[test]
    fn fixture_precision_is_exact() {
        assert_eq!(ns(b"5161092366507.330"), Some(5_161_092_366_507_330));
        assert_eq!(ns(b"0.1"), Some(100));
        assert_eq!(ns(b"0.2"), Some(200));
    }

    #[test]
    fn exponents_and_rounding() {
        assert_eq!(ns(b"1.5e3"), Some(1_500_000));
        assert_eq!(ns(b"1000.0005"), Some(1_000_001));
        assert_eq!(ns(b"1000.0004"), Some(1_000_000));
        assert_eq!(ns(b"-1000.0005"), Some(-1_000_001));
        assert_eq!(ns(b"1E-3"), Some(1));
        assert_eq!(ns(b"5E-4"), Some(1));
        assert_eq!(ns(b"4E-4"), Some(0));
        assert_eq!(ns(b"5E-5"), Some(0));
        assert_eq!(ns(b"0"), Some(0));
        assert_eq!(ns(b"0e999999999"), Some(0));
        assert_eq!(ns(b"12"), Some(12_000));
    }

    #[test]
    fn the_extremes_of_i64_are_values() {
        assert_eq!(ns(b"-9223372036854775.808"), Some(i64::MIN));
        assert_eq!(ns(b"-9223372036854775808e-3"), Some(i64::MIN));
        assert_eq!(ns(b"9223372036854775.807"), Some(i64::MAX));
        assert_eq!(ns(b"9223372036854775.808"), None);
        assert_eq!(ns(b"-9223372036854775.809"), None);
    }

    #[test]
    fn the_plain_path_agrees_with_the_exact_one() {
        // A small LCG: xtask compiles this file too, without the test crates.
        let mut x: u64 = 3;
        let mut below = |n: usize| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            ((x >> 33) as usize) % n
        };
        let digits = b"0123456789";
        for _ in 0..50_000 {
            let mut t = Vec::new();
            if below(2) == 0 {
                t.push(b'-');
            }
            for _ in 0..below(18) {
                t.push(digits[below(10)]);
            }
            if below(2) == 0 {
                t.push(b'.');
                for _ in 0..below(5) {
                    t.push(digits[below(10)]);
                }
            }
            if below(10) == 0 {
                t.push(b".e-x"[below(4)]);
            }
            if let Some(fast) = super::plain_micros(&t) {
                assert_eq!(
                    Some(fast),
                    super::exact_micros(&t),
                    "{}",
                    String::from_utf8_lossy(&t)
                );
            }
        }
        assert_eq!(
            super::plain_micros(b"5161092366507.330"),
            Some(5_161_092_366_507_330)
        );
        assert_eq!(super::plain_micros(b"1.2.3"), None);
        assert_eq!(super::plain_micros(b"1234567890123456"), None);
        assert_eq!(super::plain_micros(b"."), None);
    }

    #[test]
    fn the_window_path_agrees_with_the_exact_one() {
        // Same LCG as above: number-like text, then arbitrary bytes to fill the window.
        let mut x: u64 = 11;
        let mut below = |n: usize| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            ((x >> 33) as usize) % n
        };
        let noise = b"0123456789.eE-+, ]}\x00";
        let mut agreed = 0;
        for _ in 0..200_000 {
            let mut t = Vec::new();
            for _ in 0..below(18) {
                t.push(b'0' + below(10) as u8);
            }
            if below(3) != 0 {
                t.push(b'.');
                for _ in 0..below(5) {
                    t.push(b'0' + below(10) as u8);
                }
            }
            if below(8) == 0 {
                t.insert(below(t.len() + 1), noise[below(noise.len())]);
            }
            let mut w = t.clone();
            while w.len() < 32 {
                w.push(noise[below(noise.len())]);
            }
            if let Some(fast) = super::micros_window(&w, t.len()) {
                agreed += 1;
                assert_eq!(Some(fast), ns(&t), "{}", String::from_utf8_lossy(&t));
            } else if t.first() != Some(&b'-') {
                // Unsigned, the window path reads all the plain path reads.
                assert_eq!(
                    super::plain_micros(&t),
                    None,
                    "{}",
                    String::from_utf8_lossy(&t)
                );
            }
        }
        assert!(agreed > 50_000, "{agreed}");
        let w = |t: &[u8]| {
            let mut w = t.to_vec();
            w.resize(32, b',');
            super::micros_window(&w, t.len())
        };
        assert_eq!(w(b"5161116323755.867"), Some(5_161_116_323_755_867));
        assert_eq!(w(b"0.736"), Some(736));
        assert_eq!(w(b"24.2"), Some(24_200));
        assert_eq!(w(b"999999999999999.999"), Some(999_999_999_999_999_999));
        assert_eq!(w(b"7"), Some(7_000));
        assert_eq!(w(b"1.2345"), None);
        assert_eq!(w(b"1e3"), None);
        assert_eq!(w(b"1."), None);
        assert_eq!(w(b"-1"), None);
        assert_eq!(w(b"1234567890123456"), None);
    }

    /// Kineto's form (`digits.ddd`) and its near misses (other lengths, a byte next to
    /// the digits' (`/`, `:`) or a second `.` among them), followed by any bytes: where
    /// the window reads a value it is the exact path's, and Kineto's form with up to 13
    /// integer digits always reads.
    #[test]
    fn the_window_reads_kineto_times_as_the_exact_path_does() {
        // A small LCG: xtask compiles this file too, without the test crates.
        let mut x: u64 = 29;
        let mut below = |n: usize| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            ((x >> 33) as usize) % n
        };
        let (mut kineto, mut read) = (0, 0);
        for _ in 0..200_000 {
            let int = below(17);
            let frac = if below(4) == 0 { below(5) } else { 3 };
            let mut t: Vec<u8> = (0..int).map(|_| b'0' + below(10) as u8).collect();
            t.push(b'.');
            t.extend((0..frac).map(|_| b'0' + below(10) as u8));
            if below(6) == 0 {
                let at = below(t.len());
                t[at] = b"./:0"[below(4)];
            }
            let mut w = t.clone();
            w.extend((0..32).map(|_| below(256) as u8));
            let fast = super::micros_window(&w, t.len());
            if let Some(fast) = fast {
                read += 1;
                assert_eq!(Some(fast), ns(&t), "{}", String::from_utf8_lossy(&t));
            }
            let is_kineto = (1..=13).contains(&int)
                && frac == 3
                && t.iter().enumerate().all(|(i, c)| {
                    if i == int {
                        *c == b'.'
                    } else {
                        c.is_ascii_digit()
                    }
                });
            if is_kineto {
                kineto += 1;
                assert!(fast.is_some(), "{}", String::from_utf8_lossy(&t));
            }
        }
        assert!(kineto > 80_000 && read > kineto, "{kineto} {read}");
    }

    #[test]
    fn out_of_range_or_not_a_number() {
        assert_eq!(ns(b"1e400"), None);
        assert_eq!(ns(b"99999999999999999999"), None);
        assert_eq!(ns(b"abc"), None);
        assert_eq!(ns(b"1."), None);
        assert_eq!(ns(b"-"), None);
        assert_eq!(ns(b""), None);
        assert_eq!(ns(b"1e"), None);
    }
}
