//! Properties that hold for every input (proptest).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Read;

use common::*;
use kernlens_trace::{Options, TraceSource, analyze, micros_text_to_ns};
use proptest::prelude::*;

/// A reader that returns the input in the given chunk sizes, cycling.
struct Chunked {
    data: Vec<u8>,
    at: usize,
    sizes: Vec<usize>,
    turn: usize,
}

impl Read for Chunked {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let want = self.sizes[self.turn % self.sizes.len()]
            .max(1)
            .min(buf.len());
        self.turn += 1;
        let n = want.min(self.data.len() - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

fn sample_trace(n: usize) -> Vec<u8> {
    let mut ev = vec![
        cpu_op("aten::mm", 1),
        runtime("cudaLaunchKernel", 1, Some(1)),
        runtime("cudaGraphLaunch", 2, None),
    ];
    for i in 0..n {
        ev.push(kernel(
            &format!("k{}", i % 3),
            10.0 * i as f64,
            7.5,
            Some(1 + (i % 2) as i64),
        ));
        if i % 4 == 0 {
            ev.push(memcpy("Memcpy HtoD", 10.0 * i as f64 + 3.0, 2.0));
        }
    }
    trace(&ev)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Exact conversion: µs text with up to 3 fraction digits is ns exactly; more digits round half away from zero.
    #[test]
    fn micros_convert_exactly(int in 0i64..10_000_000_000_000, frac in 0u32..1_000_000, digits in 0usize..7, neg in any::<bool>()) {
        let frac_text = format!("{:06}", frac);
        let frac_text = &frac_text[..digits];
        let text = if digits == 0 { format!("{}{}", if neg {"-"} else {""}, int) } else { format!("{}{}.{}", if neg {"-"} else {""}, int, frac_text) };
        // Reference: scale the fraction to 6 digits, then round to 3 half away from zero.
        let micro_frac: i64 = if digits == 0 { 0 } else { format!("{:0<6}", frac_text).parse().unwrap() };
        let pico = int as i128 * 1_000_000 + micro_frac as i128; // units of 1e-6 µs = 1e-3 ns
        let ns = (pico + 500) / 1000;
        let expect = if neg { -ns } else { ns } as i64;
        prop_assert_eq!(micros_text_to_ns(text.as_bytes()), Some(expect));
    }

    /// However the input is cut into reads, the streamed result equals the in-place one.
    #[test]
    fn chunking_never_changes_the_result(n in 1usize..40, sizes in prop::collection::vec(1usize..300, 1..8), gz in any::<bool>()) {
        let t = sample_trace(n);
        let whole = analyze(&TraceSource::from_bytes("t", t.clone()), &Options::default()).unwrap().to_json().to_string();
        let data = if gz { gzip(&t) } else { t };
        let streamed = analyze(&TraceSource::from_reader("t", Chunked { data, at: 0, sizes, turn: 0 }), &Options::default()).unwrap();
        prop_assert_eq!(streamed.to_json().to_string(), whole);
    }

    /// Cutting a valid trace anywhere never panics and keeps exactly the events completed before the cut.
    #[test]
    fn any_prefix_keeps_the_complete_events(n in 1usize..30, cut_frac in 0.0f64..1.0) {
        let t = sample_trace(n);
        let cut = (t.len() as f64 * cut_frac) as usize;
        let prefix = &t[..cut];
        let read = analyze(&TraceSource::from_bytes("t", prefix.to_vec()), &Options::default());
        // Nothing at all is no trace; any non-empty prefix starts the object.
        if cut == 0 {
            let not_a_trace = matches!(read, Err(kernlens_trace::TraceError::NotATrace { .. }));
            prop_assert!(not_a_trace);
            return Ok(());
        }
        let a = read.unwrap();
        // Count complete events independently: objects at depth 2 closed before the cut.
        let mut depth = 0i32;
        let mut in_str = false;
        let mut esc = false;
        let mut complete = 0u64;
        for &b in prefix {
            if in_str {
                if esc { esc = false } else if b == b'\\' { esc = true } else if b == b'"' { in_str = false }
                continue;
            }
            match b {
                b'"' => in_str = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => { depth -= 1; if depth == 2 && b == b'}' { complete += 1 } }
                _ => {}
            }
        }
        prop_assert_eq!(a.event_total, complete);
        prop_assert!(a.attribution.kernel_count <= n as u64);
        // Only the closing `}` of the top-level object may be lost without a problem.
        if cut + 1 < t.len() { prop_assert!(!a.stream_errors.is_empty()); }
    }

    /// Arbitrary bytes never panic, and recover no more events than there are `{`.
    #[test]
    fn arbitrary_bytes_never_panic(body in prop::collection::vec(any::<u8>(), 0..2000), gz in any::<bool>()) {
        let mut t = b"{\"traceEvents\":[".to_vec();
        t.extend(body);
        let opens = t.iter().filter(|&&b| b == b'{').count() as u64;
        let data = if gz { gzip(&t) } else { t };
        let a = analyze(&TraceSource::from_bytes("t", data), &Options::default()).unwrap();
        prop_assert!(a.event_total < opens);
    }
}
