//! A per-run memo of [`Keys`] by raw name (ident.md "Memo and throughput"): traces repeat a handful of
//! names tens of thousands of times.

use std::collections::HashMap;

use foldhash::fast::FixedState;
use serde::Serialize;

/// A hash map with a fast, fixed-seed, non-cryptographic hasher.
pub(crate) type FxHashMap<K, V> = HashMap<K, V, FixedState>;

use crate::key::{Keys, keys};

/// Counters of a [`KeyMemo`].
#[non_exhaustive]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MemoStats {
    /// Lookups answered from the memo.
    pub hits: u64,
    /// Lookups that computed the keys.
    pub misses: u64,
    /// Distinct names held.
    pub distinct: usize,
}

/// Keys by raw name, with a fast non-cryptographic hasher.
///
/// A hit allocates nothing and returns a reference. The memo belongs to one
/// run and one thread; parallel callers keep one memo per thread.
///
/// ```
/// let mut memo = kernlens_ident::KeyMemo::new();
/// for _ in 0..3 {
///     assert_eq!(memo.get("cudaGraphLaunch->_Z3fooPf").native, "foo");
/// }
/// assert_eq!(memo.stats().hits, 2);
/// ```
#[derive(Debug, Default)]
pub struct KeyMemo {
    index: FxHashMap<Box<str>, usize>,
    keys: Vec<Keys>,
    hits: u64,
    misses: u64,
}

impl KeyMemo {
    /// An empty memo.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty memo with room for `distinct` names.
    pub fn with_capacity(distinct: usize) -> Self {
        KeyMemo {
            index: FxHashMap::with_capacity_and_hasher(distinct, FixedState::default()),
            keys: Vec::with_capacity(distinct),
            hits: 0,
            misses: 0,
        }
    }

    /// The keys of `name`, computed on first sight.
    pub fn get(&mut self, name: &str) -> &Keys {
        let slot = match self.index.get(name) {
            Some(&slot) => {
                self.hits += 1;
                slot
            }
            None => {
                self.misses += 1;
                let slot = self.keys.len();
                self.keys.push(keys(name));
                self.index.insert(name.into(), slot);
                slot
            }
        };
        &self.keys[slot]
    }

    /// Hits, misses and distinct names so far.
    pub fn stats(&self) -> MemoStats {
        MemoStats {
            hits: self.hits,
            misses: self.misses,
            distinct: self.keys.len(),
        }
    }
}
