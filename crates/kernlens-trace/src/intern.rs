//! Interning: each distinct name or signature is stored once and referred to by a `u32`.

use std::collections::HashMap;
use std::hash::Hash;

/// Hasher for maps keyed by trace-controlled values: fast, and seeded per map so crafted
/// ids cannot force collisions.
pub(crate) type Hasher = foldhash::fast::RandomState;
pub(crate) type Map<K, V> = HashMap<K, V, Hasher>;
pub(crate) type Set<K> = std::collections::HashSet<K, Hasher>;

/// Strings by id, ids assigned in order of first sight.
#[derive(Debug, Default)]
pub(crate) struct StrInterner {
    ids: Map<Box<str>, u32>,
    strings: Vec<Box<str>>,
}

impl StrInterner {
    pub(crate) fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.strings.len() as u32;
        self.strings.push(s.into());
        self.ids.insert(s.into(), id);
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
}

impl<T> Default for Interner<T> {
    fn default() -> Self {
        Interner {
            ids: Map::default(),
            values: Vec::new(),
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

    pub(crate) fn get(&self, id: u32) -> Option<&T> {
        self.values.get(id as usize)
    }
}
