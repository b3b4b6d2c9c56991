//! Lists remembered byte for byte: a CPU op's `Input Dims`, `Input type`, `Input
//! Strides` and `Concrete Inputs` repeat from call to call.
//!
//! Why: an eager step calls the same ops with the same inputs, so its lists are a few
//! hundred distinct texts (e10: 98.6 k lists, 143 distinct, 33 bytes on average). Finding
//! a list's end with [`raw_end`] validates its grammar, ~290 instructions a list with the
//! call; comparing it with a remembered list is two 16-byte compares against the slot's
//! window (a list of at most 32 bytes) or a `memcmp`.
//!
//! Soundness: [`raw_end`]'s answer depends only on the bytes from the list's `[` to its
//! matching `]` (it equals the element walk's, which stops there; the block reader may
//! look further only to give up to the walk). So bytes equal to a list it accepted give
//! the same end. A list matching no entry goes to [`raw_end`] and is then remembered.
//!
//! An entry is looked for by the member (the first 16 bytes of the slot's run), the
//! event's name and the list's first 8 bytes, four ways per set: e10 reads 7.4 k of its
//! 98.6 k lists with [`raw_end`] (each region's reader starts empty); keyed by name and
//! member alone, four ways would miss 18.7 k (`aten::view` has seven input shapes). The
//! lists are kept for all the shapes of a reader, so an op's shape learned again (an
//! eager trace has more shapes than a reader keeps) finds its lists remembered.

use super::hit_rate::HitRate;
use super::list::raw_end;
use super::tail::name_hash;
use super::{Found, eq16};

/// Longest list remembered, in bytes.
const LIST_MAX: usize = 128;
/// Sets (a power of two) and ways per set.
const SETS: usize = 256;
const WAYS: usize = 4;
/// Tries before the hit rate is judged, and the share of hits (1 in 4) below which the
/// reader stops remembering lists.
const RATE: HitRate = HitRate::new(256, 4);

#[derive(Clone)]
struct Entry {
    /// The list (bytes past it are not compared).
    bytes: [u8; LIST_MAX],
    /// 0 when empty.
    len: u8,
}

const EMPTY: Entry = Entry {
    bytes: [0; LIST_MAX],
    len: 0,
};

impl Entry {
    /// Whether the input's list at `from`, whose first 32 bytes `v` holds, is this one.
    #[inline(always)]
    fn matches(&self, buf: &[u8], from: usize, v: &[u8; 32]) -> bool {
        let n = usize::from(self.len);
        if n <= 32 {
            // Most lists (`[[8, 512, 1024], [], []]`): two 16-byte compares against the
            // window already loaded, bytes past the list masked.
            let (a, b) = self.bytes.split_at(16);
            let same = eq16(&v[..16], a) | eq16(&v[16..], b) << 16;
            let past = u32::MAX.checked_shl(n as u32).unwrap_or(0);
            return n != 0 && same | past == u32::MAX;
        }
        buf.get(from..from + n) == self.bytes.get(..n)
    }
}

/// A reader's remembered lists.
pub(super) struct Lists {
    entries: Vec<Entry>,
    /// Per set, the way the next list remembered there takes (round robin).
    next: Vec<u8>,
    rate: HitRate,
}

impl std::fmt::Debug for Lists {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lists")
            .field("rate", &self.rate)
            .finish_non_exhaustive()
    }
}

impl Default for Lists {
    fn default() -> Self {
        Lists {
            // Allocated when the first list is remembered.
            entries: Vec::new(),
            next: Vec::new(),
            rate: RATE,
        }
    }
}

impl Lists {
    /// The end of the list at `from`, read by a slot whose run's first bytes fold to
    /// `slot` (` "Input Dims": `), in an event whose name `found` holds; `v` holds the
    /// 32 bytes from `from`.
    #[inline(always)]
    pub(super) fn end(
        &mut self,
        buf: &[u8],
        from: usize,
        v: &[u8; 32],
        found: &Found,
        slot: u64,
    ) -> Option<usize> {
        if !self.rate.live() {
            return raw_end(buf, from);
        }
        // The list's first 8 bytes part an op's calls with different inputs (a view of
        // seven shapes); a list under 8 bytes brings its member's separator, never a
        // value.
        let head = u64::from_le_bytes([v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]]);
        let set = (name_hash(buf, found, slot ^ head.rotate_left(17))
            >> (64 - SETS.trailing_zeros())) as usize;
        self.rate.tried();
        let ways = self
            .entries
            .get(set * WAYS..set * WAYS + WAYS)
            .unwrap_or_default();
        for e in ways {
            if e.matches(buf, from, v) {
                self.rate.hit();
                return Some(from + usize::from(e.len));
            }
        }
        let end = raw_end(buf, from)?;
        self.remember(buf.get(from..end)?, set);
        Some(end)
    }

    /// Remembers the list `text` in set `set`; judges the hit rate now and then.
    #[inline(never)]
    fn remember(&mut self, text: &[u8], set: usize) {
        if !self.rate.keep_remembering() {
            return;
        }
        if text.len() > LIST_MAX {
            return;
        }
        if self.entries.is_empty() {
            self.entries = vec![EMPTY; SETS * WAYS];
            self.next = vec![0; SETS];
        }
        let Some(next) = self.next.get_mut(set) else {
            return;
        };
        let way = usize::from(*next);
        *next = ((way + 1) % WAYS) as u8;
        if let Some(e) = self.entries.get_mut(set * WAYS + way)
            && let Some(to) = e.bytes.get_mut(..text.len())
        {
            to.copy_from_slice(text);
            e.len = text.len() as u8;
        }
    }

    /// Lists read by a remembered one since the hit rate was last judged.
    #[cfg(test)]
    pub(super) fn hits(&self) -> u32 {
        self.rate.hits()
    }
}
