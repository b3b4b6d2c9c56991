//! Busy time binned to pixel columns: exact integer nanoseconds per bin.
//!
//! A lane's span `[start, end)` is cut into `n` bins whose edges are
//! `start + span·i/n` (integer division), so the bins tile the span with no gap or
//! overlap and their widths differ by at most 1 ns. Union segments are added whole:
//! a segment spanning several bins gives each bin exactly its share, sub-pixel
//! segments accumulate, and the bins' sum equals the union's length. A bin that a
//! union covers entirely holds its full width, so a saturated lane shows idle 0.

/// Bin edges over a span: `n` bins of (nearly) equal width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edges {
    start: i64,
    end: i64,
    n: usize,
}

impl Edges {
    /// `n` bins over `[start, end)`; at least one bin, and an empty span is widened to
    /// 1 ns so every edge is defined.
    pub fn new(start: i64, end: i64, n: usize) -> Self {
        Edges {
            start,
            end: end.max(start.saturating_add(1)),
            n: n.max(1),
        }
    }

    /// How many bins.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Never true: there is at least one bin.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Start of the span, ns.
    pub fn start(&self) -> i64 {
        self.start
    }

    /// End of the span (exclusive), ns.
    pub fn end(&self) -> i64 {
        self.end
    }

    fn span(&self) -> i128 {
        self.end as i128 - self.start as i128
    }

    /// The start of bin `i` (`edge(n)` is the end of the span).
    pub fn edge(&self, i: usize) -> i64 {
        let off = self.span() * i.min(self.n) as i128 / self.n as i128;
        (self.start as i128 + off) as i64
    }

    /// Width of bin `i`, ns.
    pub fn width(&self, i: usize) -> i64 {
        self.edge(i + 1) - self.edge(i)
    }

    /// The bin holding time `t` (clamped to the span).
    pub fn bin_of(&self, t: i64) -> usize {
        if t <= self.start {
            return 0;
        }
        if t >= self.end {
            return self.n - 1;
        }
        let guess = ((t as i128 - self.start as i128) * self.n as i128 / self.span()) as usize;
        let mut i = guess.min(self.n - 1);
        // Integer edges can put the guess one off either way.
        while i > 0 && self.edge(i) > t {
            i -= 1;
        }
        while i + 1 < self.n && self.edge(i + 1) <= t {
            i += 1;
        }
        i
    }

    /// Adds the segment `[s, e)`, clipped to the span, to `bins` (one value per bin):
    /// each bin gets the length of its overlap with the segment.
    pub fn add(&self, bins: &mut [i64], s: i64, e: i64) {
        let (s, e) = (s.max(self.start), e.min(self.end));
        if e <= s {
            return;
        }
        let mut i = self.bin_of(s);
        let mut at = s;
        while at < e && i < self.n {
            let stop = self.edge(i + 1).min(e);
            if let Some(b) = bins.get_mut(i) {
                *b += stop - at;
            }
            at = stop;
            i += 1;
        }
    }
}

/// Where the last segment added in time order ended: its bin and that bin's end edge,
/// so segments fed in order find their bin by stepping forward (at most `n` steps over
/// all of them) instead of a 128-bit division each.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cursor {
    bin: usize,
    end: Option<i64>,
}

impl Edges {
    /// [`Edges::add`] for segments fed in order of start, with `cursor` kept between
    /// calls (start it as `Cursor::default()`). Gives the same bins as `add`.
    #[inline]
    pub fn add_in_order(&self, bins: &mut [i64], cursor: &mut Cursor, s: i64, e: i64) {
        let (s, e) = (s.max(self.start), e.min(self.end));
        if e <= s {
            return;
        }
        let mut end = match cursor.end {
            Some(end) => end,
            None => self.edge(cursor.bin + 1),
        };
        while end <= s && cursor.bin + 1 < self.n {
            cursor.bin += 1;
            end = self.edge(cursor.bin + 1);
        }
        let mut at = s;
        loop {
            let stop = end.min(e);
            if let Some(b) = bins.get_mut(cursor.bin) {
                *b += stop - at;
            }
            at = stop;
            if at >= e || cursor.bin + 1 >= self.n {
                break;
            }
            cursor.bin += 1;
            end = self.edge(cursor.bin + 1);
        }
        cursor.end = Some(end);
    }
}

/// The union of intervals fed in order of start, measured as it grows: each interval
/// adds only its part past the union so far. Those parts are disjoint and tile the
/// union, so nothing waits for a segment to close and the total is the union's length.
#[derive(Debug, Clone, Copy)]
pub struct Coverage {
    /// The end of the union so far (every later start is at or after every earlier one,
    /// so nothing before it can still be added).
    covered: i64,
    total: i64,
}

impl Default for Coverage {
    fn default() -> Self {
        Coverage {
            covered: i64::MIN,
            total: 0,
        }
    }
}

impl Coverage {
    /// Adds `[s, e)` (starts never decrease); returns the part `[from, e)` it adds to
    /// the union, if any. Empty intervals add nothing, touching ones join.
    #[inline(always)]
    pub fn push(&mut self, s: i64, e: i64) -> Option<(i64, i64)> {
        if e <= self.covered || e <= s {
            return None;
        }
        let from = s.max(self.covered);
        self.covered = e;
        self.total = self.total.saturating_add(e.saturating_sub(from));
        Some((from, e))
    }

    /// The union's length so far, unclipped (saturating).
    pub fn total(&self) -> i64 {
        self.total
    }
}

/// A union of intervals fed in order of start, binned as it grows: each interval adds
/// only its part past the union so far (as [`Coverage`]), in order, with a cursor. The
/// bins are [`bin_union`]'s; the usual interval, inside the bin the last one ended in,
/// costs one addition.
#[derive(Debug, Clone)]
pub struct UnionBins {
    /// The end of the union so far, never before the span's start (a part before it
    /// is outside every bin).
    covered: i64,
    /// The bin the last part ended in, and that bin's end.
    bin: usize,
    bin_end: i64,
    bins: Vec<i64>,
}

impl UnionBins {
    /// Empty bins over `edges`.
    pub fn new(edges: &Edges) -> Self {
        UnionBins {
            covered: edges.start,
            bin: 0,
            bin_end: edges.edge(1),
            bins: vec![0; edges.len()],
        }
    }

    /// Adds `[s, e)` (starts never decrease, `edges` those of [`UnionBins::new`]).
    #[inline(always)]
    pub fn push(&mut self, edges: &Edges, s: i64, e: i64) {
        let from = s.max(self.covered);
        // Already covered, or empty.
        if e <= from {
            return;
        }
        self.covered = e;
        // `from` is at or past the end of the last part, which lies after the start of
        // the cursor's bin: a part ending by that bin's end lies in it.
        if e <= self.bin_end
            && let Some(b) = self.bins.get_mut(self.bin)
        {
            *b += e - from;
            return;
        }
        self.add_across(edges, from, e);
    }

    #[cold]
    fn add_across(&mut self, edges: &Edges, from: i64, e: i64) {
        let mut cursor = Cursor {
            bin: self.bin,
            end: Some(self.bin_end),
        };
        edges.add_in_order(&mut self.bins, &mut cursor, from, e);
        self.bin = cursor.bin;
        if let Some(end) = cursor.end {
            self.bin_end = end;
        }
    }

    /// The bins.
    pub fn into_bins(self) -> Vec<i64> {
        self.bins
    }
}

/// The union of intervals fed in order of start, emitted as disjoint segments.
#[derive(Debug, Default)]
pub struct Merger {
    open: Option<(i64, i64)>,
}

impl Merger {
    /// Adds `[s, e)` (starts never decrease); returns the segment it closed, if any.
    /// Empty intervals add nothing, touching ones merge (as the trace crate's union does).
    pub fn push(&mut self, s: i64, e: i64) -> Option<(i64, i64)> {
        if e <= s {
            return None;
        }
        match &mut self.open {
            Some((_, end)) if s <= *end => {
                *end = (*end).max(e);
                None
            }
            open => open.replace((s, e)),
        }
    }

    /// The last segment.
    pub fn finish(self) -> Option<(i64, i64)> {
        self.open
    }
}

/// Bins the union of `intervals` (sorted by start) into `bins`; returns the union's
/// length inside the span.
pub fn bin_union(
    edges: &Edges,
    bins: &mut [i64],
    intervals: impl IntoIterator<Item = (i64, i64)>,
) -> i64 {
    let mut merger = Merger::default();
    let mut total = 0i64;
    let mut emit = |(s, e): (i64, i64)| {
        let (cs, ce) = (s.max(edges.start()), e.min(edges.end()));
        if ce > cs {
            total += ce - cs;
        }
        edges.add(bins, s, e);
    };
    for (s, e) in intervals {
        if let Some(seg) = merger.push(s, e) {
            emit(seg);
        }
    }
    if let Some(seg) = merger.finish() {
        emit(seg);
    }
    total
}

/// The length of the union of `intervals` (sorted by start), unclipped.
pub fn union_len(intervals: impl IntoIterator<Item = (i64, i64)>) -> i64 {
    let mut merger = Merger::default();
    let mut total = 0i64;
    for (s, e) in intervals {
        if let Some((a, b)) = merger.push(s, e) {
            total = total.saturating_add(b - a);
        }
    }
    if let Some((a, b)) = merger.finish() {
        total = total.saturating_add(b - a);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Binning each interval's new part as it comes gives the bins of the merged
        /// union, and measures its length: nested, touching, empty and out-of-span
        /// intervals included, at any bin count.
        #[test]
        fn growing_union_bins_equal_the_merged_unions_bins(
            mut ivs in proptest::collection::vec((-50i64..1_100, 0i64..400), 0..60),
            span in (0i64..200, 1i64..1_000),
            n in 1usize..40,
        ) {
            ivs.sort();
            let ivs: Vec<(i64, i64)> = ivs.into_iter().map(|(s, d)| (s, s + d)).collect();
            let edges = Edges::new(span.0, span.0 + span.1, n);
            let mut merged = vec![0; n];
            bin_union(&edges, &mut merged, ivs.iter().copied());
            let mut grown = UnionBins::new(&edges);
            let mut coverage = Coverage::default();
            for &(s, e) in &ivs {
                grown.push(&edges, s, e);
                coverage.push(s, e);
            }
            prop_assert_eq!(grown.into_bins(), merged);
            prop_assert_eq!(coverage.total(), union_len(ivs.iter().copied()));
        }
    }

    #[test]
    fn edges_tile_the_span_exactly() {
        let e = Edges::new(1000, 1000 + 1003, 10);
        assert_eq!(e.edge(0), 1000);
        assert_eq!(e.edge(10), 2003);
        let widths: i64 = (0..10).map(|i| e.width(i)).sum();
        assert_eq!(widths, 1003);
        assert!((0..10).all(|i| e.width(i) == 100 || e.width(i) == 101));
        for t in 1000..2003 {
            let i = e.bin_of(t);
            assert!(e.edge(i) <= t && t < e.edge(i + 1), "t={t} bin={i}");
        }
    }

    #[test]
    fn an_interval_spanning_bins_gives_each_its_share() {
        let e = Edges::new(0, 1000, 10);
        let mut bins = vec![0; 10];
        let total = bin_union(&e, &mut bins, [(150, 420)]);
        assert_eq!(total, 270);
        assert_eq!(bins, vec![0, 50, 100, 100, 20, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn sub_pixel_intervals_accumulate_in_their_bin() {
        let e = Edges::new(0, 1_000_000, 4);
        let mut bins = vec![0; 4];
        // 1000 kernels of 10 ns, 100 ns apart, all in the first bin.
        let ivs = (0..1000).map(|k| (k * 100, k * 100 + 10));
        assert_eq!(bin_union(&e, &mut bins, ivs), 10_000);
        assert_eq!(bins, vec![10_000, 0, 0, 0]);
    }

    #[test]
    fn a_saturated_lane_has_exactly_zero_idle() {
        let e = Edges::new(7, 7 + 999_983, 2000);
        let mut bins = vec![0; 2000];
        // Back-to-back and overlapping intervals covering the whole span.
        let ivs = [(7, 400_000), (400_000, 700_000), (650_000, 999_990)];
        assert_eq!(bin_union(&e, &mut bins, ivs), 999_983);
        assert!((0..2000).all(|i| bins[i] == e.width(i)));
    }

    #[test]
    fn adding_in_order_gives_the_same_bins_as_adding_each() {
        let e = Edges::new(-37, 10_007, 13);
        let segments = [
            (-100, -40),
            (-40, 5),
            (9, 10),
            (10, 900),
            (901, 902),
            (2000, 9000),
            (9999, 20_000),
        ];
        let (mut a, mut b) = (vec![0; 13], vec![0; 13]);
        let mut cursor = Cursor::default();
        for (s, t) in segments {
            e.add(&mut a, s, t);
            e.add_in_order(&mut b, &mut cursor, s, t);
        }
        assert_eq!(a, b);
        assert_eq!(a.iter().sum::<i64>(), 42 + 1 + 890 + 1 + 7000 + 8);
    }

    #[test]
    fn overlapping_intervals_count_once() {
        let e = Edges::new(0, 100, 1);
        let mut bins = vec![0];
        assert_eq!(bin_union(&e, &mut bins, [(0, 50), (10, 20), (40, 60)]), 60);
        assert_eq!(bins, vec![60]);
        assert_eq!(union_len([(0, 10), (10, 20), (30, 30), (25, 40)]), 35);
    }

    #[test]
    fn segments_outside_the_span_are_clipped() {
        let e = Edges::new(100, 200, 2);
        let mut bins = vec![0; 2];
        assert_eq!(bin_union(&e, &mut bins, [(0, 120), (190, 400)]), 30);
        assert_eq!(bins, vec![20, 10]);
    }
}
