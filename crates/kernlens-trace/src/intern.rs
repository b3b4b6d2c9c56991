//! Interning: each distinct name or signature is stored once and referred to by a `u32`.

use std::collections::HashMap;
use std::hash::Hash;

use crate::json::RawStr;

/// Hasher for maps keyed by trace-controlled values: fast, and seeded per map so crafted
/// ids cannot force collisions.
pub(crate) type Hasher = foldhash::fast::RandomState;
pub(crate) type Map<K, V> = HashMap<K, V, Hasher>;
pub(crate) type Set<K> = std::collections::HashSet<K, Hasher>;

/// Strings by id, ids assigned in order of first sight.
///
/// Looked up by the bytes as they appear in the trace, so the common case (a name seen
/// before, no escapes) costs one hash probe and no UTF-8 decoding.
#[derive(Debug, Default)]
pub(crate) struct StrInterner {
    ids: Map<Box<[u8]>, u32>,
    strings: Vec<Box<str>>,
}

impl StrInterner {
    pub(crate) fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s.as_bytes()) {
            return id;
        }
        let id = self.strings.len() as u32;
        self.strings.push(s.into());
        self.ids.insert(s.as_bytes().into(), id);
        id
    }

    /// Interns a string as read from the trace (escapes and invalid UTF-8 decoded).
    pub(crate) fn intern_raw(&mut self, raw: &RawStr<'_>) -> u32 {
        if !raw.escaped
            && let Some(&id) = self.ids.get(raw.raw)
        {
            return id;
        }
        let decoded = raw.decode();
        let id = self.intern(&decoded);
        if !raw.escaped && decoded.as_bytes() != raw.raw {
            // Invalid UTF-8: remember the raw spelling too, so it is decoded only once.
            self.ids.insert(raw.raw.into(), id);
        }
        id
    }

    pub(crate) fn get(&self, id: u32) -> &str {
        self.strings.get(id as usize).map_or("", |s| s)
    }

    pub(crate) fn len(&self) -> usize {
        self.strings.len()
    }
}

/// Sets in an interner's table of recent ids (a power of two), and ids kept per set.
///
/// Why sets of four: a region's eager ops cycle through a few dozen names and meta texts,
/// and with one id per slot any two hot values whose keys met in a slot evicted each
/// other on every turn of the cycle (e10: 16.9 k of 59 k look-ups fell through to a hash
/// of every byte). Four ways per set hold every hot value of a region, so only first
/// sights miss.
const RECENT_BITS: u32 = 6;
const WAYS: usize = 4;

/// One set of the recent-id table: per way, a tag of its value's key and its id (`u32::MAX`
/// where none yet), most recently given first.
#[derive(Debug, Clone, Copy)]
struct Recent {
    tags: [u32; WAYS],
    ids: [u32; WAYS],
}

impl Recent {
    const EMPTY: Recent = Recent {
        tags: [0; WAYS],
        ids: [u32::MAX; WAYS],
    };
}

/// Values by id, ids assigned in order of first sight.
#[derive(Debug)]
pub(crate) struct Interner<T> {
    ids: Map<T, u32>,
    values: Vec<T>,
    /// Ids given lately, by a cheap key of their value ([`Interner::intern_keyed`]). Set 0
    /// holds the ids [`Interner::intern_repeat`] gave last.
    recent: Box<[Recent; 1 << RECENT_BITS]>,
}

impl<T> Default for Interner<T> {
    fn default() -> Self {
        Interner {
            ids: Map::default(),
            values: Vec::new(),
            recent: Box::new([Recent::EMPTY; 1 << RECENT_BITS]),
        }
    }
}

impl<T: Hash + Eq + Clone> Interner<T> {
    pub(crate) fn intern(&mut self, v: T) -> u32 {
        if let Some(&id) = self.ids.get(&v) {
            return id;
        }
        let id = self.values.len() as u32;
        self.values.push(v.clone());
        self.ids.insert(v, id);
        id
    }

    /// [`Interner::intern`], comparing with the values this gave last before hashing:
    /// consecutive events mostly share a stream, and an equality test is a fraction of a
    /// hash probe.
    #[inline]
    pub(crate) fn intern_repeat(&mut self, v: T) -> u32 {
        self.intern_keyed(v, 0)
    }

    /// [`Interner::intern`], comparing first with the values last interned under a key like
    /// `key` (any cheap function of the value, such as [`bytes_key`]; equal values must
    /// give equal keys). A region's kernels and ops cycle through a few dozen names,
    /// geometries and meta texts, so most are found by a tag compare and one equality test
    /// instead of a hash of every byte, and a key that collides only costs that test. The
    /// ids are `intern`'s.
    #[inline]
    pub(crate) fn intern_keyed(&mut self, v: T, key: u64) -> u32 {
        // Fibonacci hashing: the multiply spreads every bit of the key into the top bits,
        // which pick the set; the low half tags the way.
        let h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let set = (h >> (64 - RECENT_BITS)) as usize;
        let tag = h as u32;
        let r = &mut self.recent[set];
        for w in 0..WAYS {
            let seen = r.ids[w];
            if r.tags[w] == tag && self.values.get(seen as usize) == Some(&v) {
                return seen;
            }
        }
        let id = self.intern(v);
        // A miss is a first sight or a value the set forgot: it goes first, the oldest out.
        let r = &mut self.recent[set];
        r.tags.copy_within(..WAYS - 1, 1);
        r.ids.copy_within(..WAYS - 1, 1);
        r.tags[0] = tag;
        r.ids[0] = id;
        id
    }

    pub(crate) fn get(&self, id: u32) -> Option<&T> {
        self.values.get(id as usize)
    }

    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    /// The values in id order.
    pub(crate) fn values(&self) -> &[T] {
        &self.values
    }
}

/// A cheap key of a byte string for [`Interner::intern_keyed`]: its length and its
/// first, middle and last eight bytes (all of it when shorter), a few loads where a hash
/// reads every byte.
#[inline]
pub(crate) fn bytes_key(b: &[u8]) -> u64 {
    let n = b.len();
    let word = |at: usize| {
        b.get(at..at + 8)
            .map_or(0, |w| u64::from_le_bytes(w.try_into().unwrap_or_default()))
    };
    if n < 8 {
        let mut w = [0u8; 8];
        w[..n].copy_from_slice(b);
        return u64::from_le_bytes(w) ^ n as u64;
    }
    word(0) ^ word(n / 2 - 4).rotate_left(21) ^ word(n - 8).rotate_left(42) ^ n as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Four values whose keys meet in one set (here: all under key 0) are all found by
    /// the recent table once seen: looked up again in any order, none reaches the hash
    /// map (emptied here, so a look-up that did would number the value anew).
    #[test]
    fn a_set_holds_four_values_whose_keys_collide() {
        let mut i = Interner::default();
        let values = [b"aa".as_slice(), b"bb", b"cc", b"dd"];
        let ids = values.map(|v| i.intern_keyed(v, 7));
        i.ids.clear();
        for round in 0..3 {
            for k in [3, 0, 2, 1, 1, 3] {
                assert_eq!(i.intern_keyed(values[k], 7), ids[k], "round {round}");
            }
        }
        assert_eq!(i.len(), 4);
        // A fifth value pushes the oldest out; the other three stay.
        let e = i.intern_keyed(b"ee".as_slice(), 7);
        assert_eq!(e, 4);
        i.ids.clear();
        for k in 1..4 {
            assert_eq!(i.intern_keyed(values[k], 7), ids[k]);
        }
    }

    proptest! {
        /// The last-value shortcut never changes an id: runs, repeats after other values
        /// and first sights all get what a plain `intern` gives.
        #[test]
        fn intern_repeat_gives_the_ids_intern_gives(values in prop::collection::vec(0u8..6, 0..60)) {
            let (mut plain, mut repeat) = (Interner::default(), Interner::default());
            for v in values {
                prop_assert_eq!(plain.intern(v), repeat.intern_repeat(v));
            }
            prop_assert_eq!(plain.values(), repeat.values());
        }

        /// The recent-id table never changes an id, whatever the keys: keys that collide
        /// (a value's length), keys that differ for equal values, and the byte key.
        #[test]
        fn intern_keyed_gives_the_ids_intern_gives(
            values in prop::collection::vec(prop::collection::vec(0u8..3, 0..20), 0..80),
            noise in prop::collection::vec(any::<u64>(), 80),
        ) {
            let mut plain = Interner::default();
            let mut keyed = [Interner::default(), Interner::default(), Interner::default()];
            for (v, &n) in values.iter().zip(&noise) {
                let id = plain.intern(v.as_slice());
                prop_assert_eq!(keyed[0].intern_keyed(v.as_slice(), v.len() as u64), id);
                prop_assert_eq!(keyed[1].intern_keyed(v.as_slice(), n), id);
                prop_assert_eq!(keyed[2].intern_keyed(v.as_slice(), bytes_key(v)), id);
            }
            for k in &keyed {
                prop_assert_eq!(plain.values(), k.values());
            }
        }
    }
}
