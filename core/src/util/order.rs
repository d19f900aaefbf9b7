//! Stable sorting and ordered maps with one copy of the sort algorithm.
//!
//! The standard library's sorts are generic: every element type and
//! comparator gets its own copy of driftsort (3–4 KB of WebAssembly each), and
//! `BTreeMap: FromIterator` sorts its input too. The web app shipped about
//! 140 KB of such copies (issue 6, download size). Here a list of indices is
//! sorted through one non-generic comparator (`&mut dyn FnMut`) and the slice is
//! then permuted in place, so a call site costs a few hundred bytes.
//!
//! The results are exactly those of `slice::sort_by` (stable); only speed
//! differs slightly (one indirect call per comparison). This module must stay
//! free of anything but ordering: no IO, no randomness.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// `v.sort()`, stable.
pub fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, T::cmp);
}

/// `v.sort_by(cmp)`, stable.
pub fn sort_by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    let mut idx = sorted_indices(v.len(), &mut |a, b| cmp(&v[a], &v[b]));
    permute(v, &mut idx);
}

/// `v.sort_by_cached_key(key)`: each key is computed once, stable.
pub fn sort_by_key<T, K: Ord>(v: &mut [T], key: impl FnMut(&T) -> K) {
    let keys: Vec<K> = v.iter().map(key).collect();
    let mut idx = sorted_indices(v.len(), &mut |a, b| keys[a].cmp(&keys[b]));
    permute(v, &mut idx);
}

/// `iter.collect::<BTreeMap<_, _>>()` without the sort `FromIterator` does:
/// inserted in order, so a later value replaces an earlier one, as there.
pub fn map<K: Ord, V>(iter: impl IntoIterator<Item = (K, V)>) -> BTreeMap<K, V> {
    let mut m = BTreeMap::new();
    for (k, v) in iter {
        m.insert(k, v);
    }
    m
}

/// `iter.collect::<BTreeSet<_>>()` without the sort `FromIterator` does.
pub fn set<T: Ord>(iter: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    let mut s = BTreeSet::new();
    for x in iter {
        s.insert(x);
    }
    s
}

/// The one instance of the standard sort: indices `0..n`, stably ordered by
/// `cmp`.
fn sorted_indices(n: usize, cmp: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&a, &b| cmp(a, b));
    idx
}

/// Rearrange `v` so that position `k` holds what was at `idx[k]`, following
/// each cycle of the permutation once (O(n) swaps, no second array: the
/// iptables compiler moves 100,000s of chains with it). `idx` must be a
/// permutation of `0..v.len()`, or empty to leave `v` as it is; it is used up
/// as the record of what is done.
pub(crate) fn permute<T>(v: &mut [T], idx: &mut [usize]) {
    let n = v.len().min(idx.len());
    for start in 0..n {
        if idx[start] == start {
            continue;
        }
        // Invariant: position `cur` holds the element that was at `start`.
        let mut cur = start;
        loop {
            let next = idx[cur];
            idx[cur] = cur;
            if next == start || next >= n {
                break;
            }
            v.swap(cur, next);
            cur = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_the_standard_library_and_stays_stable() {
        // Pseudo-random pairs with many equal keys, so stability shows.
        let mut x = 7u64;
        let items: Vec<(u8, u32)> = (0..500)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 59) as u8, i)
            })
            .collect();
        for n in [0, 1, 2, 3, 17, 500] {
            let mut want = items[..n].to_vec();
            want.sort_by_key(|p| p.0);
            let mut got = items[..n].to_vec();
            sort_by_key(&mut got, |p| p.0);
            assert_eq!(got, want);
            let mut got = items[..n].to_vec();
            sort_by(&mut got, |a, b| b.0.cmp(&a.0));
            let mut want = items[..n].to_vec();
            want.sort_by_key(|p| std::cmp::Reverse(p.0));
            assert_eq!(got, want);
            let mut got = items[..n].to_vec();
            sort(&mut got);
            let mut want = items[..n].to_vec();
            want.sort();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn permute_puts_each_value_where_idx_says() {
        // Every permutation of 5 (cycles of every length, fixed points).
        let mut perms = vec![vec![]];
        for n in 0..5usize {
            perms = perms
                .into_iter()
                .flat_map(|p: Vec<usize>| {
                    (0..=n).map(move |k| {
                        let mut q = p.clone();
                        q.insert(k, n);
                        q
                    })
                })
                .collect();
        }
        assert_eq!(perms.len(), 120);
        for idx in perms {
            let mut v: Vec<String> = (0..5).map(|i| format!("v{i}")).collect();
            let want: Vec<String> = idx.iter().map(|&i| format!("v{i}")).collect();
            permute(&mut v, &mut idx.clone());
            assert_eq!(v, want, "idx {idx:?}");
        }
        let mut v = vec![1, 2, 3];
        permute(&mut v, &mut []);
        assert_eq!(
            v,
            [1, 2, 3],
            "an empty permutation leaves the slice as it is"
        );
    }

    #[test]
    fn maps_keep_the_last_value_of_a_key_like_collect() {
        let pairs = [(2, "a"), (1, "b"), (2, "c")];
        assert_eq!(map(pairs), pairs.into_iter().collect::<BTreeMap<_, _>>());
    }
}
