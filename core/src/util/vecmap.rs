//! A map kept as a `Vec` of pairs sorted by key: what a `BTreeMap` gives
//! the code that reads it (lookups by binary search, iteration in key
//! order, the same `Debug` and serialised form), with far less code per key
//! and value kind. The web app's download carries one copy of the B-tree
//! code for every kind it uses, so small maps that every view reads (an
//! object's labels, readiness by Pod) use this instead.
//!
//! Inserting a key smaller than the largest shifts the pairs after it: use
//! it for maps that are small or built in key order, never for one that
//! grows out of order with a session or with the cluster.

use std::borrow::Borrow;
use std::fmt;

/// See the module's comment.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VecMap<K, V> {
    pairs: Vec<(K, V)>,
}

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        VecMap { pairs: Vec::new() }
    }
}

impl<K, V> VecMap<K, V> {
    pub const fn new() -> Self {
        VecMap { pairs: Vec::new() }
    }

    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The pairs in key order.
    pub fn iter(&self) -> Iter<'_, K, V> {
        Iter(self.pairs.iter())
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator {
        self.pairs.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator {
        self.pairs.iter().map(|(_, v)| v)
    }

    /// The pairs in key order, as a slice.
    pub fn as_slice(&self) -> &[(K, V)] {
        &self.pairs
    }
}

impl<K: Ord, V> VecMap<K, V> {
    fn find<Q>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.pairs.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| &self.pairs[i].1)
    }

    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| &mut self.pairs[i].1)
    }

    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).is_ok()
    }

    /// Set `key` to `value`; the value it had, if any (as `BTreeMap`).
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        // Built in key order: append without a search.
        if self.pairs.last().is_none_or(|(k, _)| *k < key) {
            self.pairs.push((key, value));
            return None;
        }
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.pairs[i].1, value)),
            Err(i) => {
                self.pairs.insert(i, (key, value));
                None
            }
        }
    }

    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| self.pairs.remove(i).1)
    }

    /// Keep the pairs `keep` says yes to (as `BTreeMap::retain`).
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.pairs.retain_mut(|(k, v)| keep(k, v));
    }

    /// The value of `key`, inserted with `make` first if there is none.
    pub fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(&key) {
            Ok(i) => i,
            Err(i) => {
                self.pairs.insert(i, (key, make()));
                i
            }
        };
        &mut self.pairs[i].1
    }
}

/// The pairs of a [`VecMap`] in key order, as `BTreeMap::iter` gives them.
#[derive(Clone)]
pub struct Iter<'a, K, V>(std::slice::Iter<'a, (K, V)>);

impl<'a, K, V> Iterator for Iter<'a, K, V> {
    type Item = (&'a K, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<K, V> DoubleEndedIterator for Iter<'_, K, V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (k, v))
    }
}

impl<K, V> ExactSizeIterator for Iter<'_, K, V> {}

impl<'a, K, V> IntoIterator for &'a VecMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Iter<'a, K, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<K, V> IntoIterator for VecMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.pairs.into_iter()
    }
}

/// As `BTreeMap`: a later value of a key replaces an earlier one.
impl<K: Ord, V> FromIterator<(K, V)> for VecMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut m = VecMap::new();
        m.extend(iter);
        m
    }
}

impl<K: Ord, V> Extend<(K, V)> for VecMap<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl<K: Ord, V, const N: usize> From<[(K, V); N]> for VecMap<K, V> {
    fn from(pairs: [(K, V); N]) -> Self {
        pairs.into_iter().collect()
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for VecMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: serde::Serialize, V: serde::Serialize> serde::Serialize for VecMap<K, V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::VecMap;
    use std::collections::BTreeMap;

    /// Every operation gives what a `BTreeMap` gives, for inserts in any
    /// order, replaced keys and removals.
    #[test]
    fn behaves_as_a_btreemap() {
        let ops: &[(&str, Option<u32>)] = &[
            ("m", Some(1)),
            ("c", Some(2)),
            ("x", Some(3)),
            ("c", Some(4)),
            ("a", Some(5)),
            ("x", None),
            ("q", Some(6)),
            ("zz", Some(7)),
            ("nope", None),
            ("a", Some(8)),
        ];
        let mut v = VecMap::new();
        let mut b = BTreeMap::new();
        for &(k, op) in ops {
            match op {
                Some(x) => assert_eq!(v.insert(k.to_string(), x), b.insert(k.to_string(), x)),
                None => assert_eq!(v.remove(k), b.remove(k)),
            }
            assert!(v.iter().eq(b.iter()));
            assert_eq!(v.len(), b.len());
            assert_eq!(format!("{v:?}"), format!("{b:?}"));
            for probe in ["a", "c", "m", "x", "q", "zz", "b", ""] {
                assert_eq!(v.get(probe), b.get(probe), "{probe}");
                assert_eq!(v.contains_key(probe), b.contains_key(probe));
            }
        }
        assert!(v.keys().eq(b.keys()));
        assert!(v.values().rev().eq(b.values().rev()));
        let pairs = [("b", 1), ("a", 2), ("b", 3)];
        let from_v: VecMap<_, _> = pairs.into_iter().collect();
        let from_b: BTreeMap<_, _> = pairs.into_iter().collect();
        assert!(from_v.clone().into_iter().eq(from_b.clone()));
        assert_eq!(VecMap::from(pairs), from_v);
        let mut v = from_v;
        *v.get_or_insert_with("c", || 0) += 10;
        *v.get_or_insert_with("a", || 0) += 10;
        assert_eq!(v.as_slice(), &[("a", 12), ("b", 3), ("c", 10)]);
        if let Some(x) = v.get_mut("b") {
            *x = 30;
        }
        assert_eq!(v.get("b"), Some(&30));
        v.retain(|k, x| {
            *x += 1;
            *k != "a"
        });
        assert_eq!(v.as_slice(), &[("b", 31), ("c", 11)]);
    }
}
