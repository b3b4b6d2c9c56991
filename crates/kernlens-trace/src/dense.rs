//! A map keyed by integer ids that mostly come in one dense run: a profiler numbers CPU
//! ops' `External id`s 1, 2, 3, … in file order, so the ops of a read are a vector indexed
//! by id, and only ids out of that run take a hash map. The fold keeps an entry per op
//! (a quarter of a million in an eager capture of 250 MB): hashing each id and growing
//! the table by rehashing were most of what the folding thread did per op.

use crate::intern::Map;

/// Slots a run may be extended by past twice its entries: memory stays within a few
/// times the entries' whatever the ids, while a run that starts sparse can still fill.
const SLACK: usize = 1024;

/// Values by `i64` id.
#[derive(Debug)]
pub(crate) struct DenseMap<V> {
    /// The first id given: `run[i]` is id `base + i`.
    base: Option<i64>,
    run: Vec<Option<V>>,
    /// Entries in `run`.
    filled: usize,
    /// Ids the run did not cover when they were given.
    rest: Map<i64, V>,
}

impl<V> Default for DenseMap<V> {
    fn default() -> Self {
        DenseMap {
            base: None,
            run: Vec::new(),
            filled: 0,
            rest: Map::default(),
        }
    }
}

impl<V> DenseMap<V> {
    /// Where id `id` is (or would be) in the run.
    #[inline]
    fn index(&self, id: i64) -> Option<usize> {
        usize::try_from(id.checked_sub(self.base?)?).ok()
    }

    /// The value of `id`.
    #[inline]
    pub(crate) fn get(&self, id: i64) -> Option<&V> {
        let slot = self.index(id).and_then(|i| self.run.get(i)?.as_ref());
        slot.or_else(|| self.rest.get(&id))
    }

    /// Updates the value of `id` with `update`, or gives it `make()` when it has none.
    #[inline]
    pub(crate) fn upsert(
        &mut self,
        id: i64,
        update: impl FnOnce(&mut V),
        make: impl FnOnce() -> V,
    ) {
        if self.base.is_none() {
            self.base = Some(id);
        }
        let at = self.index(id);
        if let Some(v) = at.and_then(|i| self.run.get_mut(i)?.as_mut()) {
            update(v);
            return;
        }
        if let Some(v) = self.rest.get_mut(&id) {
            update(v);
            return;
        }
        match at {
            // The next id of the run: the common case.
            Some(i) if i == self.run.len() => self.run.push(Some(make())),
            Some(i) if i < self.run.len() || i <= 2 * self.filled + SLACK => {
                if i >= self.run.len() {
                    self.run.resize_with(i + 1, || None);
                }
                self.run[i] = Some(make());
            }
            _ => {
                self.rest.insert(id, make());
                return;
            }
        }
        self.filled += 1;
    }

    /// How many ids have a value.
    pub(crate) fn len(&self) -> usize {
        self.filled + self.rest.len()
    }

    /// Room for `additional` more ids, where the ids so far went.
    pub(crate) fn reserve(&mut self, additional: usize) {
        if self.rest.len() > self.filled {
            self.rest.reserve(additional);
        } else {
            self.run.reserve(additional);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Ids in a run, before it, far past it and back inside it all keep their values,
    /// updated in place, and far ids do not grow the run.
    #[test]
    fn every_id_keeps_its_value_wherever_it_is_stored() {
        let mut m = DenseMap::default();
        let ids = [
            5i64,
            6,
            7,
            3,
            -9,
            1 << 40,
            9,
            6,
            5000,
            2000,
            7,
            i64::MIN,
            i64::MAX,
        ];
        let mut expected = std::collections::HashMap::new();
        for (n, &id) in ids.iter().enumerate() {
            m.upsert(id, |v: &mut (i64, usize)| v.1 += 1, || (id, n));
            expected
                .entry(id)
                .and_modify(|v: &mut (i64, usize)| v.1 += 1)
                .or_insert((id, n));
        }
        assert_eq!(m.len(), expected.len());
        for (id, v) in &expected {
            assert_eq!(m.get(*id), Some(v), "{id}");
        }
        assert_eq!(m.get(8), None);
        assert_eq!(m.get(4), None);
        assert!(m.run.len() <= 2 * m.filled + SLACK + 1);
        assert!(m.rest.contains_key(&(1 << 40)) && m.rest.contains_key(&-9));
        // 2000 was beyond the run's reach when it came (2 * 4 + SLACK past 5), so it
        // sits in the map; filling the run up to it must still find it there.
        for id in 10..3000 {
            m.upsert(id, |v| v.1 += 100, || (id, 0));
        }
        assert_eq!(m.get(2000), Some(&(2000, 109)));
        assert_eq!(m.get(7), Some(&(7, 3)));
    }
}
