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

/// Values by id, ids assigned in order of first sight.
#[derive(Debug)]
pub(crate) struct Interner<T> {
    ids: Map<T, u32>,
    values: Vec<T>,
    /// The id [`Interner::intern_repeat`] gave last (`u32::MAX` before the first).
    last: u32,
}

impl<T> Default for Interner<T> {
    fn default() -> Self {
        Interner {
            ids: Map::default(),
            values: Vec::new(),
            last: u32::MAX,
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

    /// [`Interner::intern`], comparing with the value this gave last before hashing:
    /// consecutive events mostly share a stream and often a geometry or name, and an
    /// equality test is a fraction of a hash probe.
    #[inline]
    pub(crate) fn intern_repeat(&mut self, v: T) -> u32 {
        if self.values.get(self.last as usize) == Some(&v) {
            return self.last;
        }
        self.last = self.intern(v);
        self.last
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
    }
}
