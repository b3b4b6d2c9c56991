//! A stream's intervals as the recorder keeps them during the read: packed into bytes.
//!
//! An interval is two header bytes (its kind; whether its correlation is absent, the
//! previous one's, or new; and the byte lengths of the fields that follow) and the
//! fields' low bytes: the start's change since the previous interval's (zigzag), the
//! duration, and a new correlation's change (zigzag). A stream's events mostly come in
//! order, a few µs apart, and a graph replay's kernels share one correlation, so an
//! event takes about 7 bytes instead of the 32 of an unpacked interval: on a trace of
//! millions of events the recorder no longer grows the process by tens of MB, whose
//! page faults were a visible share of the report's cost over a summary
//! (PERFORMANCE.md, the report page). A field is written and read as one 8-byte
//! word (no loop over its bytes). Every value round-trips exactly (wrapping
//! differences), whatever the input.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::lanes::{Iv, Kind};

/// One stream's intervals, in the order recorded.
#[derive(Debug, Default)]
pub(crate) struct Packed {
    bytes: Vec<u8>,
    prev_s: i64,
    prev_e: i64,
    prev_corr: Option<i64>,
    /// Some interval came before the previous one in (start, end) order.
    unsorted: bool,
}

#[inline(always)]
fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline(always)]
fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

/// How many low bytes hold `v` (0 for 0).
#[inline(always)]
fn byte_len(v: u64) -> u8 {
    (64 - v.leading_zeros()).div_ceil(8) as u8
}

/// Appends the low `len` bytes of `v`: one 8-byte write, then the length cut back.
#[inline(always)]
fn put(bytes: &mut Vec<u8>, v: u64, len: u8) {
    let at = bytes.len();
    bytes.extend_from_slice(&v.to_le_bytes());
    bytes.truncate(at + usize::from(len));
}

/// Reads `len` low bytes at `at`, moving past them.
#[inline(always)]
fn get(bytes: &[u8], at: &mut usize, len: u8) -> u64 {
    let len = usize::from(len);
    let word = match bytes.get(*at..*at + 8) {
        Some(w) => <[u8; 8]>::try_from(w).map_or(0, u64::from_le_bytes),
        // The last fields of the buffer: fewer than 8 bytes follow.
        None => {
            let mut w = [0u8; 8];
            let tail = bytes.get(*at..).unwrap_or(&[]);
            let n = tail.len().min(8);
            w[..n].copy_from_slice(&tail[..n]);
            u64::from_le_bytes(w)
        }
    };
    *at += len;
    if len >= 8 {
        word
    } else {
        word & ((1u64 << (8 * len)) - 1)
    }
}

const CORR_NONE: u8 = 0;
const CORR_SAME: u8 = 1 << 2;
const CORR_NEW: u8 = 2 << 2;

impl Packed {
    /// Appends `iv` (`iv.e >= iv.s`). A copy's correlation is not kept: only kernels
    /// are looked up among graph launches.
    #[inline]
    pub(crate) fn push(&mut self, iv: Iv) {
        if (iv.s, iv.e) < (self.prev_s, self.prev_e) && !self.bytes.is_empty() {
            self.unsorted = true;
        }
        let ds = zigzag(iv.s.wrapping_sub(self.prev_s));
        let dur = iv.e.wrapping_sub(iv.s) as u64;
        let kind = match iv.kind {
            Kind::Compute => 0,
            Kind::Comm => 1,
            Kind::Memcpy => 2,
        };
        let (corr, dc) = match (iv.kind, iv.corr()) {
            (Kind::Memcpy, _) | (_, None) => (CORR_NONE, 0),
            (_, c) if c == self.prev_corr => (CORR_SAME, 0),
            (_, Some(c)) => {
                let dc = zigzag(c.wrapping_sub(self.prev_corr.unwrap_or(0)));
                self.prev_corr = Some(c);
                (CORR_NEW, dc)
            }
        };
        let (ls, ld, lc) = (byte_len(ds), byte_len(dur), byte_len(dc));
        self.bytes
            .extend_from_slice(&[kind | corr | (lc << 4), ls | (ld << 4)]);
        put(&mut self.bytes, ds, ls);
        put(&mut self.bytes, dur, ld);
        if corr == CORR_NEW {
            put(&mut self.bytes, dc, lc);
        }
        (self.prev_s, self.prev_e) = (iv.s, iv.e);
    }

    /// Whether the intervals came in (start, end) order.
    pub(crate) fn is_sorted(&self) -> bool {
        !self.unsorted
    }

    /// The intervals, in the order recorded.
    pub(crate) fn iter(&self) -> Unpack<'_> {
        Unpack {
            bytes: &self.bytes,
            at: 0,
            prev_s: 0,
            prev_corr: None,
        }
    }
}

/// The intervals of a [`Packed`], in the order recorded.
pub(crate) struct Unpack<'a> {
    bytes: &'a [u8],
    at: usize,
    prev_s: i64,
    prev_corr: Option<i64>,
}

impl Iterator for Unpack<'_> {
    type Item = Iv;

    #[inline]
    fn next(&mut self) -> Option<Iv> {
        let (&h0, &h1) = (self.bytes.get(self.at)?, self.bytes.get(self.at + 1)?);
        self.at += 2;
        let s = self
            .prev_s
            .wrapping_add(unzigzag(get(self.bytes, &mut self.at, h1 & 15)));
        let e = s.wrapping_add(get(self.bytes, &mut self.at, h1 >> 4) as i64);
        self.prev_s = s;
        let kind = match h0 & 3 {
            0 => Kind::Compute,
            1 => Kind::Comm,
            _ => Kind::Memcpy,
        };
        let corr = match h0 & (3 << 2) {
            CORR_SAME => self.prev_corr,
            CORR_NEW => {
                let base = self.prev_corr.unwrap_or(0);
                let c = base.wrapping_add(unzigzag(get(self.bytes, &mut self.at, h0 >> 4)));
                self.prev_corr = Some(c);
                Some(c)
            }
            _ => None,
        };
        Some(Iv::new(s, e, corr, kind))
    }
}

/// A stream's intervals in (start, end) order: packed ones read in place, or those of a
/// stream that came out of order, sorted.
pub(crate) enum Ordered<'a> {
    Packed(Unpack<'a>),
    Sorted(std::slice::Iter<'a, Iv>),
}

impl Iterator for Ordered<'_> {
    type Item = Iv;

    #[inline]
    fn next(&mut self) -> Option<Iv> {
        match self {
            Ordered::Packed(u) => u.next(),
            Ordered::Sorted(i) => i.next().copied(),
        }
    }
}

/// Streams' ordered intervals merged into one (start, end) order. (The order of equal
/// intervals changes no union or count.)
pub(crate) struct Merge<'a> {
    sources: Vec<Ordered<'a>>,
    heads: Vec<Option<Iv>>,
    heap: BinaryHeap<Reverse<(i64, i64, usize)>>,
}

impl<'a> Merge<'a> {
    pub(crate) fn new(mut sources: Vec<Ordered<'a>>) -> Self {
        let mut heap = BinaryHeap::with_capacity(sources.len());
        let heads = sources
            .iter_mut()
            .enumerate()
            .map(|(i, s)| {
                let head = s.next();
                if let Some(iv) = &head {
                    heap.push(Reverse((iv.s, iv.e, i)));
                }
                head
            })
            .collect();
        Merge {
            sources,
            heads,
            heap,
        }
    }
}

impl Iterator for Merge<'_> {
    type Item = Iv;

    fn next(&mut self) -> Option<Iv> {
        let Reverse((_, _, i)) = self.heap.pop()?;
        let head = self.heads.get_mut(i)?;
        let iv = head.take()?;
        if let Some(next) = self.sources.get_mut(i).and_then(Iterator::next) {
            self.heap.push(Reverse((next.s, next.e, i)));
            *head = Some(next);
        }
        Some(iv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_round_trips() {
        let ivs = [
            Iv::new(5, 9, Some(3), Kind::Compute),
            Iv::new(5, 9, Some(3), Kind::Comm),
            Iv::new(i64::MIN, i64::MIN, None, Kind::Compute),
            Iv::new(i64::MAX - 1, i64::MAX, Some(i64::MIN), Kind::Comm),
            Iv::new(-7, 0, Some(i64::MAX), Kind::Compute),
            Iv::new(-7, 0, Some(i64::MAX), Kind::Compute),
            Iv::new(100, 100, None, Kind::Compute),
            Iv::new(0, i64::MAX, Some(-1), Kind::Comm),
        ];
        let mut p = Packed::default();
        for iv in ivs {
            p.push(iv);
        }
        assert!(!p.is_sorted());
        let back: Vec<(i64, i64, Option<i64>, Kind)> = p
            .iter()
            .map(|iv| (iv.s, iv.e, iv.corr(), iv.kind))
            .collect();
        let want: Vec<(i64, i64, Option<i64>, Kind)> = ivs
            .iter()
            .map(|iv| (iv.s, iv.e, iv.corr(), iv.kind))
            .collect();
        assert_eq!(back, want);
    }

    #[test]
    fn a_copy_keeps_no_correlation_and_breaks_no_run() {
        let mut p = Packed::default();
        p.push(Iv::new(0, 10, Some(7), Kind::Compute));
        p.push(Iv::new(10, 20, Some(9), Kind::Memcpy));
        p.push(Iv::new(20, 30, Some(7), Kind::Compute));
        let corrs: Vec<Option<i64>> = p.iter().map(|iv| iv.corr()).collect();
        assert_eq!(corrs, [Some(7), None, Some(7)]);
        assert!(p.is_sorted());
        // Headers, start (0), duration and a new correlation; a copy's headers, start and
        // duration; a repeated correlation.
        assert_eq!(p.bytes.len(), (2 + 1 + 1) + (2 + 1 + 1) + (2 + 1 + 1));
    }

    #[test]
    fn merged_streams_come_in_order() {
        let mut a = Packed::default();
        let mut b = Packed::default();
        for t in [0, 4, 8] {
            a.push(Iv::new(t, t + 1, None, Kind::Compute));
        }
        for t in [1, 4, 20] {
            b.push(Iv::new(t, t + 2, None, Kind::Memcpy));
        }
        let sorted = [Iv::new(3, 5, None, Kind::Comm)];
        let merged: Vec<(i64, i64)> = Merge::new(vec![
            Ordered::Packed(a.iter()),
            Ordered::Packed(b.iter()),
            Ordered::Sorted(sorted.iter()),
        ])
        .map(|iv| (iv.s, iv.e))
        .collect();
        assert_eq!(
            merged,
            [(0, 1), (1, 3), (3, 5), (4, 5), (4, 6), (8, 9), (20, 22)]
        );
    }
}
