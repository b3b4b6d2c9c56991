//! Where a list value ends: the lists a shape reads whole as one slot.
//!
//! Why it is worth a module: an eager CPU op carries four lists (`Input Dims`, `Input
//! type`, `Input Strides`, `Concrete Inputs`, about 130 bytes together), and finding their
//! ends was a fifth of an eager trace's read when it was done element by element.
//!
//! Two readers, one answer. [`raw_end`] first tries the block reader, which takes 32
//! bytes at a time as bit masks (one bit per byte and byte class) and settles the lists
//! profilers write, `[[8, 512, 1024], [], []]` and `["c10::BFloat16", "", "[1024]"]`,
//! without a branch per element. Anything else it gives up on (a byte it does not know,
//! a list nested three deep, the buffer's last 32 bytes), and the exact walk reads the
//! list from its start, one element at a time, as it always did. Both accept exactly
//! what the cursor (`json.rs`) accepts there; the walk also refuses what the shapes leave
//! to the parser (objects, escapes, control bytes).

use crate::json::{find_string_stop, number_end};

/// The end of the JSON list at `p`, or None when the bytes there are not one the shapes
/// read whole: a list of strings without escapes, numbers, literals and such lists,
/// nested to any depth without recursion. Objects, escapes and anything that is not
/// JSON give None (the event then goes to the parser, which owns every error).
#[inline]
pub(crate) fn raw_end(b: &[u8], p: usize) -> Option<usize> {
    if b.get(p) != Some(&b'[') {
        return None;
    }
    match block_end(b, p) {
        Some(end) => Some(end),
        None => walk_end(b, p),
    }
}

/// What the block reader knows of the bytes it reads, bit `i` for byte `i` of 32.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Classes {
    quote: u32,
    open: u32,
    close: u32,
    comma: u32,
    space: u32,
    digit: u32,
    zero: u32,
    /// A backslash, a control byte or a byte from 0x80 on: the walk's to read (in a
    /// string) or to refuse (anywhere else).
    odd: u32,
}

/// What a block hands the next: string and inner-list parity (all ones or zero), and
/// its last byte's classes as bit 0, for the rules that look one byte back.
struct Carry {
    string: u32,
    inner: u32,
    wants_value: u32,
    number: u32,
    closes: u32,
    ended: u32,
    comma: u32,
    digit: u32,
    leading_zero: u32,
}

/// The end of the list at `p` (which holds `[`) when it is made of unsigned integers,
/// strings of printable ASCII without escapes, and lists of those; elements separated by
/// `,` or `, `; nested at most two deep. None for anything else, and where the bytes
/// from a block's start run out before 32: the caller walks those lists instead.
///
/// How: per block, strings are found by the parity of the quotes up to each byte
/// (prefix XOR), as simdjson does. An inner list (depth two) opens and closes in turn, so
/// the same parity over the brackets after the first says which bracket should open and
/// which close; the first one that does not is the list's end (a `]`) or a third level
/// (a `[`, given up on). Up to the end, each byte outside strings and each opening quote
/// is checked against the byte before it: a value (`[`, a quote, a digit) after `[`,
/// `,` or `, `; `]` after `[` or a value's end; `,` after a value's end; a space after a
/// comma; no digit after a leading zero. With balanced brackets those rules are the
/// grammar of such lists, so whatever passes them, the cursor reads to the same end.
///
/// The rules read the classes of the raw bytes, strings included: the byte before one
/// that is checked is outside strings or a closing quote, never inside a string.
#[inline]
fn block_end(b: &[u8], p: usize) -> Option<usize> {
    let mut at = p;
    // The list's own `[` is preceded as a value is; it is not one of the inner brackets.
    let mut carry = Carry {
        string: 0,
        inner: 0,
        wants_value: 1,
        number: 1,
        closes: 0,
        ended: 0,
        comma: 0,
        digit: 0,
        leading_zero: 0,
    };
    let mut own = 1u32;
    loop {
        let w: &[u8; 32] = b.get(at..at + 32)?.try_into().ok()?;
        let c = classify(w);
        // Inside a string: its opening quote and the bytes up to its closing one.
        let inside = prefix_xor(c.quote) ^ carry.string;
        // Bytes outside strings, and opening quotes.
        let checked = !(inside ^ c.quote);
        let open = c.open & checked & !own;
        let brackets = open | (c.close & checked);
        // Inner brackets alternate: an odd count up to and including a bracket means an
        // inner list is open after it.
        let inner = prefix_xor(brackets) ^ carry.inner;
        let wrong = brackets & (inner ^ open);
        let first = wrong & wrong.wrapping_neg();
        if first & open != 0 {
            // A third level.
            return None;
        }
        // The bytes up to and including the end, or the whole block.
        let upto = first | first.wrapping_sub(1);
        let back = |x: u32, c: u32| (x << 1) | c;
        let wants_value = c.open | c.comma | c.space;
        let number = wants_value | c.digit;
        let ended = c.close | c.quote | c.digit;
        let closes = c.open | ended;
        let leading_zero = c.zero & !back(c.digit, carry.digit);
        let broken = ((c.open | c.quote) & !back(wants_value, carry.wants_value))
            | (c.digit & !back(number, carry.number))
            | (c.close & !back(closes, carry.closes))
            | (c.comma & !back(ended, carry.ended))
            | (c.space & !back(c.comma, carry.comma))
            | (c.digit & back(leading_zero, carry.leading_zero))
            | !(closes | c.comma | c.space);
        if ((broken & checked) | c.odd) & upto != 0 {
            return None;
        }
        if first != 0 {
            return Some(at + first.trailing_zeros() as usize + 1);
        }
        let last = |x: u32| x >> 31;
        carry = Carry {
            string: last(inside).wrapping_neg(),
            inner: last(inner).wrapping_neg(),
            wants_value: last(wants_value),
            number: last(number),
            closes: last(closes),
            ended: last(ended),
            comma: last(c.comma),
            digit: last(c.digit),
            leading_zero: last(leading_zero),
        };
        own = 0;
        at += 32;
    }
}

/// Bit `i` set when an odd number of bits `0..=i` of `x` are set.
#[inline(always)]
fn prefix_xor(mut x: u32) -> u32 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x
}

/// The classes of the 32 bytes of `w`.
#[inline(always)]
fn classify(w: &[u8; 32]) -> Classes {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        let (a, b) = w.split_at(16);
        let (lo, hi) = (classify16(a), classify16(b));
        let join = |l: u32, h: u32| l | (h << 16);
        Classes {
            quote: join(lo.quote, hi.quote),
            open: join(lo.open, hi.open),
            close: join(lo.close, hi.close),
            comma: join(lo.comma, hi.comma),
            space: join(lo.space, hi.space),
            digit: join(lo.digit, hi.digit),
            zero: join(lo.zero, hi.zero),
            odd: join(lo.odd, hi.odd),
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        classify_bytes(w)
    }
}

/// The classes of the 16 bytes of `w`, in bits 0 to 15.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn classify16(w: &[u8]) -> Classes {
    use std::arch::x86_64::*;
    assert!(w.len() >= 16);
    // SAFETY: SSE2 is enabled at compile time (cfg above) and the unaligned load reads
    // 16 bytes inside `w` (asserted above, which the caller's split proves).
    unsafe {
        let v = _mm_loadu_si128(w.as_ptr() as *const __m128i);
        let is = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
        let bits = |m: __m128i| _mm_movemask_epi8(m) as u32;
        // v - '0' <= 9 (unsigned) exactly when min(v - '0', 9) equals it.
        let d = _mm_sub_epi8(v, _mm_set1_epi8(b'0' as i8));
        let digit = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d);
        // Signed, bytes below 0x20 and from 0x80 on are less than 0x20.
        let low = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
        Classes {
            quote: bits(is(b'"')),
            open: bits(is(b'[')),
            close: bits(is(b']')),
            comma: bits(is(b',')),
            space: bits(is(b' ')),
            digit: bits(digit),
            zero: bits(is(b'0')),
            odd: bits(_mm_or_si128(low, is(b'\\'))),
        }
    }
}

/// [`classify`] a byte at a time: the build without SSE2, and the SIMD one's reference.
#[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse2"))))]
fn classify_bytes(w: &[u8; 32]) -> Classes {
    let mut c = Classes {
        quote: 0,
        open: 0,
        close: 0,
        comma: 0,
        space: 0,
        digit: 0,
        zero: 0,
        odd: 0,
    };
    for (i, &x) in w.iter().enumerate() {
        let bit = 1u32 << i;
        match x {
            b'"' => c.quote |= bit,
            b'[' => c.open |= bit,
            b']' => c.close |= bit,
            b',' => c.comma |= bit,
            b' ' => c.space |= bit,
            b'0'..=b'9' => c.digit |= bit,
            b'\\' | 0..0x20 | 0x80.. => c.odd |= bit,
            _ => {}
        }
        if x == b'0' {
            c.zero |= bit;
        }
    }
    c
}

/// The exact reader behind [`raw_end`]: one element at a time, any nesting, any JSON
/// whitespace, numbers of every form, literals.
fn walk_end(b: &[u8], p: usize) -> Option<usize> {
    if b.get(p) != Some(&b'[') {
        return None;
    }
    let ws = |b: &[u8], mut i: usize| {
        while matches!(b.get(i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            i += 1;
        }
        i
    };
    let mut depth = 0usize;
    let mut i = p;
    loop {
        // A value is expected at `i`. Whitespace is one of the match's arms rather than
        // a skip before it: most values follow `, ` or `[` straight away.
        match *b.get(i)? {
            b' ' | b'\n' | b'\r' | b'\t' => {
                i = ws(b, i + 1);
                continue;
            }
            b'[' => {
                depth += 1;
                i = ws(b, i + 1);
                if b.get(i) != Some(&b']') {
                    continue;
                }
                // An empty list is a whole value.
                depth -= 1;
                i += 1;
            }
            b'"' => {
                i += 1;
                i += find_string_stop(b.get(i..)?)?;
                if b.get(i) != Some(&b'"') {
                    return None;
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => i = number_end(b, i)?,
            b't' if b.get(i..i + 4) == Some(b"true") => i += 4,
            b'f' if b.get(i..i + 5) == Some(b"false") => i += 5,
            b'n' if b.get(i..i + 4) == Some(b"null") => i += 4,
            _ => return None,
        }
        // After a value: `,` (another follows) or `]` (closing lists until a `,`).
        loop {
            if depth == 0 {
                return Some(i);
            }
            match *b.get(i)? {
                b',' => {
                    // The usual `, `: its space skipped here, any other by the arm above.
                    i += 1 + usize::from(b.get(i + 1) == Some(&b' '));
                    break;
                }
                b']' => {
                    depth -= 1;
                    i += 1;
                }
                b' ' | b'\n' | b'\r' | b'\t' => i = ws(b, i + 1),
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::json::Cursor;

    /// The cursor's end of the value at 0, when it is valid JSON.
    fn cursor_end(text: &[u8]) -> Option<usize> {
        let mut c = Cursor::new(text, 0);
        c.skip_value(&mut Vec::new()).ok().map(|_| c.i)
    }

    #[test]
    fn raw_end_reads_lists_as_the_cursor_does() {
        for (text, end) in [
            ("[] ", Some(2)),
            ("[[8, 512, 1024], [], [1024], [1024], []],", Some(40)),
            (r#"["[1024]", "]]", "[", ""]}"#, Some(25)),
            (
                r#"["c10::BFloat16", "ScalarList", null, true, false, -1.5e3]}"#,
                Some(58),
            ),
            ("[ [ [ ] ] , 0 ]", Some(15)),
            ("[[[[[[[[[[[[1]]]]]]]]]]]]", Some(25)),
            ("[\n\t1\r\n]", Some(7)),
        ] {
            assert_eq!(raw_end(text.as_bytes(), 0), end, "{text}");
            assert_eq!(cursor_end(text.as_bytes()), end, "{text}");
        }
        // What the shapes leave to the parser: objects, escapes, control bytes, bad JSON,
        // lists the bytes cut short, and values that are not lists.
        for text in [
            r#"[{"a":1}]"#,
            r#"["a\"b"]"#,
            "[\"a\u{1}b\"]",
            "[1,]",
            "[,1]",
            "[1 2]",
            "[01]",
            "[1.]",
            "[tru]",
            "[nul, 1]",
            "[[1]",
            "[\"abc",
            "1",
            "\"[1]\"",
        ] {
            assert_eq!(raw_end(text.as_bytes(), 0), None, "{text}");
        }
        // A list ends at its own bracket; what follows is the fixed bytes' to check.
        assert_eq!(raw_end(b"[1]]", 0), Some(3));
    }

    #[test]
    fn raw_end_agrees_with_the_cursor_on_random_lists() {
        let mut rng = fastrand::Rng::with_seed(21);
        let atoms = [
            "1", "-0", "12.5", "1e3", "0.25E-2", "\"\"", "\"a]b\"", "\"[,\"", "null", "true",
            "false", "[]", "[1]",
        ];
        let seps = [",", ", ", " ,", ",\n  ", "\t,\r\n"];
        let noise = b"[],\\\" 0-9.e{";
        let (mut read, mut tried) = (0, 0);
        for _ in 0..20_000 {
            let mut t = String::from("[");
            let mut depth = 1;
            let mut first = true;
            for _ in 0..rng.usize(0..12) {
                match rng.u8(0..6) {
                    0 => {
                        if !first {
                            t.push_str(seps[rng.usize(0..seps.len())]);
                        }
                        t.push('[');
                        depth += 1;
                        first = true;
                        continue;
                    }
                    1 if depth > 1 => {
                        t.push(']');
                        depth -= 1;
                    }
                    _ => {
                        if !first {
                            t.push_str(seps[rng.usize(0..seps.len())]);
                        }
                        t.push_str(atoms[rng.usize(0..atoms.len())]);
                    }
                }
                first = false;
            }
            for _ in 0..depth {
                t.push(']');
            }
            // Often damaged: a byte removed, replaced or added.
            let mut b = t.into_bytes();
            if rng.bool() {
                let c = noise[rng.usize(0..noise.len())];
                crate::test_files::damage(&mut rng, &mut b, c);
            }
            b.extend_from_slice(b"}, ");
            tried += 1;
            if let Some(end) = raw_end(&b, 0) {
                read += 1;
                assert_eq!(Some(end), cursor_end(&b), "{}", String::from_utf8_lossy(&b));
            }
        }
        assert!(read > 5_000 && read < tried, "read {read} of {tried}");
    }

    /// `text` followed by 40 bytes that are not part of it (the rest of an event), so
    /// the block reader has its 32 bytes from every block's start.
    fn padded(text: &str) -> Vec<u8> {
        let mut b = text.as_bytes().to_vec();
        b.extend_from_slice(br#"], "Input Dims": [[1, 2]], "Ev\\Idx": 1}}"#);
        b
    }

    #[test]
    fn blocks_read_the_lists_profilers_write() {
        for text in [
            "[]",
            "[[], [], [], [], [], []]",
            "[[8, 512, 1024], [], [1024], [1024], []]",
            "[[1572864, 64, 3072, 1], [1572864, 64, 3072, 1], [1572864, 64, 3072, 1], [], [], [], [], [], [], [], [], [], []]",
            r#"["c10::BFloat16", "ScalarList", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]"#,
            r#"["", "[1024]", "", "", "1.0000000000000001e-05", "True"]"#,
            r#"["[8, 16, 512, 64]", "[524288, 64, 1024, 1]", "15", "0", "", ""]"#,
            "[0, 10, [0], [], 7]",
            "[1,2,[3,4],[]]",
            // Ends on a block's last byte, and one byte into the next block.
            "[1111111111, 2222222222, 33333]",
            "[1111111111, 2222222222, 333333]",
            // A string and an inner list across a block's end.
            r#"[12345678901234567890123, "a[b]c,d", [4]]"#,
            "[123456789012345678901234567, [4, 5], []]",
        ] {
            let b = padded(text);
            assert_eq!(block_end(&b, 0), Some(text.len()), "{text}");
            assert_eq!(cursor_end(&b), Some(text.len()), "{text}");
            assert_eq!(raw_end(&b, 0), Some(text.len()), "{text}");
        }
    }

    #[test]
    fn blocks_give_up_on_what_they_do_not_read() {
        for text in [
            // Other forms of JSON, which the walk reads.
            "[-1, 2]",
            "[1.5]",
            "[1e3]",
            "[null, true, false]",
            "[ 1]",
            "[1 ]",
            "[1 , 2]",
            "[1,  2]",
            "[1,\n2]",
            "[[[1]]]",
            "[[], [[]]]",
            r#"["é"]"#,
            // What neither reads.
            r#"["a\"b"]"#,
            "[\"a\u{1}b\"]",
            "[01]",
            "[1,]",
            "[,1]",
            "[1 2]",
            r#"["a""b"]"#,
            r#"[1"a"]"#,
            r#"["a"1]"#,
            "[[1]2]",
            "[[1][2]]",
            "[1[2]]",
            "[{}]",
            "[1, ]",
            "[1, , 2]",
        ] {
            let b = padded(text);
            assert_eq!(block_end(&b, 0), None, "{text}");
            assert_eq!(raw_end(&b, 0), walk_end(&b, 0), "{text}");
            if let Some(end) = raw_end(&b, 0) {
                assert_eq!(Some(end), cursor_end(&b), "{text}");
            }
        }
        // Fewer than 32 bytes from a block's start: the walk's.
        assert_eq!(block_end(b"[1, 2]}", 0), None);
        assert_eq!(raw_end(b"[1, 2]}", 0), Some(6));
    }

    #[test]
    fn classes_by_simd_are_the_bytes_classes() {
        let mut rng = fastrand::Rng::with_seed(20);
        let alphabet = b"\"[], 0123456789\\\x00\x1f\x20\x7f\x80\xffa-.:{}";
        for _ in 0..20_000 {
            let mut w = [0u8; 32];
            for x in &mut w {
                *x = if rng.bool() {
                    alphabet[rng.usize(0..alphabet.len())]
                } else {
                    rng.u8(..)
                };
            }
            assert_eq!(classify(&w), classify_bytes(&w), "{w:?}");
        }
    }

    /// A list element, for the generated lists below.
    #[derive(Debug, Clone)]
    enum Element {
        /// Written as is: integers, other numbers, literals.
        Atom(String),
        /// Written between quotes, unescaped: pieces may hold escapes or control bytes.
        Str(String),
        List(Vec<Element>),
    }

    fn element() -> impl Strategy<Value = Element> {
        let atom = prop_oneof![
            4 => (0u64..5000).prop_map(|n| Element::Atom(n.to_string())),
            1 => any::<u64>().prop_map(|n| Element::Atom(n.to_string())),
            1 => prop::sample::select(vec!["0", "-1", "1.5", "0.", "2e3", "00", "07", "-", "true", "null", "fals"])
                .prop_map(|s| Element::Atom(s.to_string())),
        ];
        let piece = prop::sample::select(vec![
            "a",
            "c10::BFloat16",
            "[",
            "]",
            ",",
            ", ",
            " ",
            "0",
            "[1024]",
            "\\\"",
            "\\n",
            "é",
            "\u{1}",
            "\t",
            "\\",
        ]);
        let string = prop::collection::vec(piece, 0..4).prop_map(|p| Element::Str(p.concat()));
        let leaf = prop_oneof![3 => atom, 2 => string];
        leaf.prop_recursive(4, 64, 12, |inner| {
            prop::collection::vec(inner, 0..12).prop_map(Element::List)
        })
    }

    /// Separators: mostly `, ` and `,`, at times any JSON whitespace around the comma.
    fn write(e: &Element, seps: &[&str], n: &mut usize, out: &mut String) {
        match e {
            Element::Atom(a) => out.push_str(a),
            Element::Str(s) => {
                out.push('"');
                out.push_str(s);
                out.push('"');
            }
            Element::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(seps[*n % seps.len()]);
                        *n += 1;
                    }
                    write(item, seps, n, out);
                }
                out.push(']');
            }
        }
    }

    fn separators() -> impl Strategy<Value = Vec<&'static str>> {
        prop::collection::vec(
            prop_oneof![
                8 => Just(", "),
                4 => Just(","),
                1 => prop::sample::select(vec![" ,", ",  ", ",\n  ", "\t,\r\n", " , "]),
            ],
            1..6,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// Whatever the block reader settles, the cursor reads to the same end, and
        /// `raw_end` is always the walk's answer: lists of every element kind, strings
        /// holding brackets, commas, escapes and control bytes, damaged bytes, and the
        /// rest of an event after them.
        #[test]
        fn blocks_end_lists_where_the_cursor_does(
            list in prop::collection::vec(element(), 0..12),
            seps in separators(),
            damage in prop::option::of((any::<prop::sample::Index>(), 0u8..3, prop::sample::select(b"[]\",\\ 0-9e.{\x01".to_vec()))),
            tail in prop::collection::vec(prop::sample::select(b"[]\", 0}x".to_vec()), 0..48),
        ) {
            let mut text = String::new();
            write(&Element::List(list), &seps, &mut 0, &mut text);
            let mut b = text.into_bytes();
            if let Some((at, how, c)) = damage {
                let at = at.index(b.len());
                match how {
                    0 => b[at] = c,
                    1 => {
                        b.remove(at);
                    }
                    _ => b.insert(at, c),
                }
            }
            b.extend_from_slice(&tail);
            let walk = walk_end(&b, 0);
            prop_assert_eq!(raw_end(&b, 0), walk);
            if let Some(end) = walk {
                prop_assert_eq!(Some(end), cursor_end(&b));
            }
            // The block reader's caller has seen the `[`.
            if b[0] == b'['
                && let Some(end) = block_end(&b, 0)
            {
                prop_assert_eq!(Some(end), cursor_end(&b));
            }
        }

        /// The lists profilers write (unsigned integers, plain strings, two levels, `, `
        /// or `,`) are settled by the block reader, whatever their length and wherever
        /// their bytes fall across blocks.
        #[test]
        fn blocks_settle_plain_lists(
            list in prop::collection::vec(prop_oneof![
                2 => (0u64..100_000).prop_map(|n| Element::Atom(n.to_string())),
                1 => any::<u64>().prop_map(|n| Element::Atom(n.to_string())),
                2 => prop::collection::vec(prop::sample::select(vec!["", "c10::Half", "[1, 2]", "]", ",", "Scalar", "0.5", "[", " "]), 0..3)
                    .prop_map(|p| Element::Str(p.concat())),
                2 => prop::collection::vec((0u64..9000).prop_map(|n| Element::Atom(n.to_string())), 0..6)
                    .prop_map(Element::List),
            ], 0..16),
            spaced in any::<bool>(),
        ) {
            let mut text = String::new();
            let sep = if spaced { ", " } else { "," };
            write(&Element::List(list), &[sep], &mut 0, &mut text);
            let b = padded(&text);
            prop_assert_eq!(block_end(&b, 0), Some(text.len()), "{}", text);
            prop_assert_eq!(cursor_end(&b), Some(text.len()));
        }
    }
}
