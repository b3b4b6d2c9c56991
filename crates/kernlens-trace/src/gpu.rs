//! The store of GPU records. A multi-GB trace holds millions of kernels, memcpys and
//! memsets, and they are most of what a read keeps (1.34 M of them on the 827 MB graph
//! trace), so each is stored in 32 bytes instead of the 48 of its decoded form
//! ([`GpuRec`]) and handed out decoded, by value.
//!
//! Nothing is rounded: a record whose duration, correlation or device does not fit the
//! packed fields (a duration of 2^32 ns or more, a negative or 64-bit correlation, a
//! device past 2^28) keeps all three exactly in a side table, which real traces leave
//! empty or nearly so.

use crate::collect::{GpuKind, GpuRec};

/// A record as stored: the ids as they are, the three wide values narrowed.
#[derive(Debug, Clone, Copy)]
struct Packed {
    ts: i64,
    /// The duration; for a [`WIDE`] record the low half of its index in the side table.
    dur: u32,
    /// The correlation (0 when absent); for a [`WIDE`] record the high half of that index.
    corr: u32,
    name: u32,
    stream: u32,
    geometry: u32,
    /// The flags below in the top four bits, the device (0 when absent) in the rest.
    bits: u32,
}

/// The record is a memcpy or memset (else a kernel).
const MEMCPY: u32 = 1 << 31;
/// The record has a correlation.
const HAS_CORR: u32 = 1 << 30;
/// The record has a device.
const HAS_DEVICE: u32 = 1 << 29;
/// The duration, correlation and device are in the side table.
const WIDE: u32 = 1 << 28;
/// The bits that hold the device of a record that is not [`WIDE`].
const DEVICE: u32 = WIDE - 1;

/// The exact values of a record that did not fit its packed fields.
#[derive(Debug, Clone, Copy)]
struct Wide {
    dur: i64,
    corr: i64,
    device: i64,
}

/// The GPU records of a read, in file order.
#[derive(Debug, Default)]
pub(crate) struct GpuRecs {
    packed: Vec<Packed>,
    wide: Vec<Wide>,
}

impl GpuRecs {
    /// Appends `r`.
    pub(crate) fn push(&mut self, r: GpuRec) {
        let (corr, device) = (r.corr(), r.device());
        let mut bits = 0;
        if r.kind == GpuKind::Memcpy {
            bits |= MEMCPY;
        }
        if corr.is_some() {
            bits |= HAS_CORR;
        }
        if device.is_some() {
            bits |= HAS_DEVICE;
        }
        let (corr, device) = (corr.unwrap_or(0), device.unwrap_or(0));
        let narrow = (
            u32::try_from(r.dur),
            u32::try_from(corr),
            u32::try_from(device).ok().filter(|&d| d <= DEVICE),
        );
        let (dur, corr) = match narrow {
            (Ok(dur), Ok(corr), Some(device)) => {
                bits |= device;
                (dur, corr)
            }
            _ => {
                let at = self.wide.len() as u64;
                self.wide.push(Wide {
                    dur: r.dur,
                    corr,
                    device,
                });
                bits |= WIDE;
                (at as u32, (at >> 32) as u32)
            }
        };
        self.packed.push(Packed {
            ts: r.ts,
            dur,
            corr,
            name: r.name,
            stream: r.stream,
            geometry: r.geometry,
            bits,
        });
    }

    /// Room for `n` records in all, asking the system to back it with huge pages.
    ///
    /// Why: the fold writes every GPU record once, 32 bytes each (44 MB on graph_many
    /// ×12), and in 4 KiB pages the first touches were ~11 k page faults, most of a
    /// summary's beyond the file's own. Transparent huge pages given on request
    /// (`MADV_HUGEPAGE`; the common `madvise` setting) cut a gm12 summary's faults from
    /// 13.8 k to 5.3-6.4 k and its wall to 0.94-0.96x (PERFORMANCE.md, "Session 14"), for
    /// at most one huge page more of resident memory. Where the system gives none, this
    /// is a reservation and nothing else.
    pub(crate) fn reserve_total(&mut self, n: usize) {
        self.packed.reserve(n.saturating_sub(self.packed.len()));
        advise_huge_pages(self.packed.spare_capacity_mut());
    }

    /// How many records there are.
    pub(crate) fn len(&self) -> usize {
        self.packed.len()
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.packed.is_empty()
    }

    /// Record `i` (file order).
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> Option<GpuRec> {
        self.packed.get(i).map(|p| decode(p, &self.wide))
    }

    /// Record `i`'s start and end (`ts + dur`, saturating), the time order's key.
    #[inline(always)]
    pub(crate) fn start_end(&self, i: usize) -> Option<(i64, i64)> {
        let p = self.packed.get(i)?;
        let dur = if p.bits & WIDE == 0 {
            i64::from(p.dur)
        } else {
            wide_values(p, &self.wide).0
        };
        Some((p.ts, p.ts.saturating_add(dur)))
    }

    /// The records in file order.
    pub(crate) fn iter(&self) -> Iter<'_> {
        Iter {
            packed: self.packed.iter(),
            wide: &self.wide,
        }
    }
}

/// The records of a [`GpuRecs`] in file order, decoded.
#[derive(Clone)]
pub(crate) struct Iter<'a> {
    packed: std::slice::Iter<'a, Packed>,
    wide: &'a [Wide],
}

impl Iterator for Iter<'_> {
    type Item = GpuRec;

    #[inline(always)]
    fn next(&mut self) -> Option<GpuRec> {
        self.packed.next().map(|p| decode(p, self.wide))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.packed.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    #[inline(always)]
    fn next_back(&mut self) -> Option<GpuRec> {
        self.packed.next_back().map(|p| decode(p, self.wide))
    }
}

impl ExactSizeIterator for Iter<'_> {}

// Every sweep of the analysis decodes every record: inlined, the fields a sweep does not
// read cost nothing.
#[inline(always)]
fn decode(p: &Packed, wide: &[Wide]) -> GpuRec {
    let (dur, corr, device) = if p.bits & WIDE == 0 {
        (
            i64::from(p.dur),
            i64::from(p.corr),
            i64::from(p.bits & DEVICE),
        )
    } else {
        wide_values(p, wide)
    };
    GpuRec::new(
        p.ts,
        dur,
        (p.bits & HAS_CORR != 0).then_some(corr),
        (p.bits & HAS_DEVICE != 0).then_some(device),
        p.name,
        p.stream,
        p.geometry,
        if p.bits & MEMCPY == 0 {
            GpuKind::Kernel
        } else {
            GpuKind::Memcpy
        },
    )
}

/// The side table's values for a [`WIDE`] record (out of line: real traces seldom take
/// this path).
#[cold]
#[inline(never)]
fn wide_values(p: &Packed, wide: &[Wide]) -> (i64, i64, i64) {
    let at = (u64::from(p.corr) << 32) | u64::from(p.dur);
    // Every WIDE record's index was taken from the table it points into.
    usize::try_from(at)
        .ok()
        .and_then(|at| wide.get(at))
        .map_or((0, 0, 0), |w| (w.dur, w.corr, w.device))
}

/// Size of a huge page on the systems that give them on request (x86-64 and aarch64 with
/// 4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

/// The whole huge pages inside `[start, start + len)`: `(first, length)`, or `None` when
/// the range holds none.
fn huge_interior(start: usize, len: usize) -> Option<(usize, usize)> {
    let first = start.checked_next_multiple_of(HUGE_PAGE)?;
    let end = start.checked_add(len)? / HUGE_PAGE * HUGE_PAGE;
    (end > first).then(|| (first, end - first))
}

/// Asks that the whole huge pages inside `spare` be backed by huge pages when first
/// touched. Advice only: no content changes, and a refusal is ignored.
#[cfg(target_os = "linux")]
fn advise_huge_pages<T>(spare: &mut [std::mem::MaybeUninit<T>]) {
    let Some((first, len)) = huge_interior(spare.as_ptr() as usize, std::mem::size_of_val(spare))
    else {
        return;
    };
    // SAFETY: `[first, first + len)` lies inside `spare`, memory this vector owns and
    // nothing reads until it is written; the advice changes no byte of it.
    unsafe {
        libc::madvise(first as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages<T>(_spare: &mut [std::mem::MaybeUninit<T>]) {}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Only whole huge pages inside the range are advised: never a byte outside it.
    #[test]
    fn huge_interior_is_the_whole_pages_inside() {
        const H: usize = HUGE_PAGE;
        assert_eq!(huge_interior(H, 3 * H), Some((H, 3 * H)));
        assert_eq!(huge_interior(H + 1, 3 * H), Some((2 * H, 2 * H)));
        assert_eq!(huge_interior(H - 1, H), None);
        assert_eq!(huge_interior(H - 1, H + 1), Some((H, H)));
        assert_eq!(huge_interior(5, 0), None);
        assert_eq!(huge_interior(usize::MAX - 10, 100), None);
    }

    proptest! {
        #[test]
        fn huge_interior_stays_inside(start in 0usize..1 << 40, len in 0usize..1 << 26) {
            if let Some((first, n)) = huge_interior(start, len) {
                prop_assert!(first >= start && first + n <= start + len);
                prop_assert!(first % HUGE_PAGE == 0 && n % HUGE_PAGE == 0 && n > 0);
            } else {
                prop_assert!(start.next_multiple_of(HUGE_PAGE) + HUGE_PAGE > start + len);
            }
        }
    }

    /// Records pushed after room was reserved read back as pushed.
    #[test]
    fn reserved_records_read_back() {
        let mut recs = GpuRecs::default();
        recs.push(rec(3, Some(1), Some(0), GpuKind::Kernel));
        recs.reserve_total(200_000);
        for i in 0..200_000 {
            recs.push(rec(i, Some(i), Some(0), GpuKind::Kernel));
        }
        assert_eq!(recs.len(), 200_001);
        let want = rec(150_000, Some(150_000), Some(0), GpuKind::Kernel);
        assert!(recs.get(150_001).is_some_and(|r| same(&r, &want)));
    }

    fn rec(dur: i64, corr: Option<i64>, device: Option<i64>, kind: GpuKind) -> GpuRec {
        GpuRec::new(-5, dur, corr, device, 7, 3, crate::collect::NONE, kind)
    }

    fn same(a: &GpuRec, b: &GpuRec) -> bool {
        (
            a.ts,
            a.dur,
            a.corr(),
            a.device(),
            a.name,
            a.stream,
            a.geometry,
            a.kind,
        ) == (
            b.ts,
            b.dur,
            b.corr(),
            b.device(),
            b.name,
            b.stream,
            b.geometry,
            b.kind,
        )
    }

    #[test]
    fn a_packed_record_is_32_bytes() {
        assert_eq!(std::mem::size_of::<Packed>(), 32);
    }

    /// Values at and past every packed field's edge read back exactly, and the narrow
    /// ones around them stay out of the side table.
    #[test]
    fn values_past_the_packed_fields_read_back_exactly() {
        let edges = [
            (0, Some(0), Some(0), false),
            (
                i64::from(u32::MAX),
                Some(i64::from(u32::MAX)),
                Some(i64::from(DEVICE)),
                false,
            ),
            (1 << 32, Some(1), Some(0), true),
            (4_294_967_296_123, None, None, true),
            (-1, Some(1), Some(0), true),
            (i64::MIN, Some(i64::MIN), Some(i64::MIN), true),
            (i64::MAX, Some(i64::MAX), Some(i64::MAX), true),
            (10, Some(1 << 32), Some(0), true),
            (10, Some(-7), None, true),
            (10, None, Some(i64::from(DEVICE) + 1), true),
            (10, Some(3), Some(-1), true),
            (10, Some(3), Some(1 << 40), true),
        ];
        let mut store = GpuRecs::default();
        let mut wide = 0;
        for (i, &(dur, corr, device, is_wide)) in edges.iter().enumerate() {
            let kind = if i % 2 == 0 {
                GpuKind::Kernel
            } else {
                GpuKind::Memcpy
            };
            let r = rec(dur, corr, device, kind);
            store.push(r);
            wide += usize::from(is_wide);
            assert_eq!(store.wide.len(), wide, "record {i} wide: {is_wide}");
            assert!(store.get(i).is_some_and(|g| same(&g, &r)), "record {i}");
        }
        assert_eq!(store.len(), edges.len());
        assert!(store.get(edges.len()).is_none());
    }

    proptest! {
        /// Any record reads back exactly as pushed, in order, among any others.
        #[test]
        fn records_read_back_exactly(recs in prop::collection::vec((
            any::<i64>(),
            prop_oneof![any::<i64>(), 0i64..100_000, Just(i64::from(u32::MAX)), Just(1i64 << 32)],
            prop::option::of(prop_oneof![any::<i64>(), 0i64..1000]),
            prop::option::of(prop_oneof![any::<i64>(), 0i64..8, Just(i64::from(DEVICE))]),
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<bool>(),
        ), 0..64)) {
            let recs: Vec<GpuRec> = recs
                .into_iter()
                .map(|(ts, dur, corr, device, name, stream, geometry, memcpy)| {
                    let kind = if memcpy { GpuKind::Memcpy } else { GpuKind::Kernel };
                    GpuRec::new(ts, dur, corr, device, name, stream, geometry, kind)
                })
                .collect();
            let mut store = GpuRecs::default();
            for r in &recs {
                store.push(*r);
            }
            prop_assert_eq!(store.len(), recs.len());
            prop_assert_eq!(store.is_empty(), recs.is_empty());
            for (i, (a, b)) in store.iter().zip(&recs).enumerate() {
                prop_assert!(same(&a, b), "record {}", i);
                prop_assert!(store.get(i).is_some_and(|g| same(&g, b)), "record {}", i);
            }
        }
    }
}
