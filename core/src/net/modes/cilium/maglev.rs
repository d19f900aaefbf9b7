//! Maglev consistent hashing as Cilium builds its lookup table
//! (cilium/cilium `pkg/maglev`): each backend gets a permutation of the M
//! slots from a Murmur3 hash of its address text, and the backends take
//! turns claiming their next free slot, a heavier backend more often.
//!
//! Backends are named by their ID in the backends map (a plain `u32`).
//!
//! Never: depend on backend IDs for the order (Cilium orders backends by
//! their hash text), or on anything but its arguments.

/// One backend as the table sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub id: u32,
    /// `[10.244.1.1:80/TCP,State:active]`: Cilium's hash text of the
    /// backend (an IPv6 address keeps its brackets inside).
    pub text: String,
    pub weight: u16,
}

/// The lookup table: the backend ID of each of the `m` slots. Empty when
/// there are no backends.
pub fn table(entries: &[Entry], m: u32, seed: u32) -> Vec<u32> {
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    crate::util::order::sort_by(&mut sorted, |a, b| a.text.cmp(&b.text));
    let n = sorted.len();
    if n == 0 || m < 2 {
        return Vec::new();
    }
    let m64 = u64::from(m);
    // (offset, skip) of each backend's permutation.
    let perms: Vec<(u64, u64)> = sorted
        .iter()
        .map(|e| {
            let (h1, h2) = murmur3_x64_128(e.text.as_bytes(), seed);
            (h1 % m64, h2 % (m64 - 1) + 1)
        })
        .collect();
    let total: u64 = sorted.iter().map(|e| u64::from(e.weight)).sum();
    let weighted = total / n as u64 > 1;
    let mut turns: Vec<f64> = sorted
        .iter()
        .map(|e| f64::from(e.weight) / n as f64)
        .collect();
    let mut next = vec![0u64; n];
    let mut slots: Vec<Option<u32>> = vec![None; m as usize];
    for k in 0..m64 {
        let mut i = (k % n as u64) as usize;
        if weighted {
            // Skip backends whose share is used up for now; each claim
            // pushes a backend's next turn back by the total weight.
            let mut tries = 0;
            while ((k + 1) * u64::from(sorted[i].weight)) < turns[i] as u64 && tries < n {
                i = (i + 1) % n;
                tries += 1;
            }
            turns[i] += total as f64;
        }
        let (offset, skip) = perms[i];
        loop {
            let c = ((offset + next[i] % m64 * skip) % m64) as usize;
            next[i] += 1;
            if slots[c].is_none() {
                slots[c] = Some(sorted[i].id);
                break;
            }
        }
    }
    slots.into_iter().flatten().collect()
}

/// How many slots each backend holds, most first (ties by ID): the
/// `INNER=[1(256), 2(255)]` of Cilium's maps dump.
pub fn histogram(table: &[u32]) -> Vec<(u32, usize)> {
    let mut counts: std::collections::BTreeMap<u32, usize> = Default::default();
    for id in table {
        *counts.entry(*id).or_default() += 1;
    }
    let mut out: Vec<(u32, usize)> = counts.into_iter().collect();
    crate::util::order::sort_by(&mut out, |a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

/// MurmurHash3, x64 128-bit variant, of `data` with `seed`.
pub fn murmur3_x64_128(data: &[u8], seed: u32) -> (u64, u64) {
    const C1: u64 = 0x87c3_7b91_1142_53d5;
    const C2: u64 = 0x4cf5_ad43_2745_937f;
    let mix_k1 = |k: u64| k.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
    let mix_k2 = |k: u64| k.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
    let mut h1 = u64::from(seed);
    let mut h2 = u64::from(seed);
    let mut blocks = data.chunks_exact(16);
    for b in &mut blocks {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[..8]);
        let k1 = u64::from_le_bytes(w);
        w.copy_from_slice(&b[8..]);
        let k2 = u64::from_le_bytes(w);
        h1 ^= mix_k1(k1);
        h1 = h1
            .rotate_left(27)
            .wrapping_add(h2)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
        h2 ^= mix_k2(k2);
        h2 = h2
            .rotate_left(31)
            .wrapping_add(h1)
            .wrapping_mul(5)
            .wrapping_add(0x3849_5ab5);
    }
    let tail = blocks.remainder();
    let word = |bytes: &[u8]| {
        bytes
            .iter()
            .enumerate()
            .fold(0u64, |acc, (i, b)| acc | (u64::from(*b) << (8 * i)))
    };
    if tail.len() > 8 {
        h2 ^= mix_k2(word(&tail[8..]));
    }
    if !tail.is_empty() {
        h1 ^= mix_k1(word(&tail[..tail.len().min(8)]));
    }
    let len = data.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (h1, h2)
}

fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cilium's default seed, `JLfvgnHc2kaSUFaI`, as the permutations use it.
    const SEED: u32 = 0x24b7_ef82;

    #[test]
    fn murmur3_matches_the_reference_vectors() {
        assert_eq!(
            murmur3_x64_128(b"hello", 0),
            (0xcbd8_a7b3_41bd_9b02, 0x5b1e_906a_48ae_1d19)
        );
        assert_eq!(
            murmur3_x64_128(b"The quick brown fox jumps over the lazy dog", 0),
            (0xe34b_bc7b_bc07_1b6c, 0x7a43_3ca9_c49a_9347)
        );
        assert_eq!(murmur3_x64_128(b"", 0), (0, 0));
    }

    fn entries(addrs: &[&str], weights: &[u16]) -> Vec<Entry> {
        addrs
            .iter()
            .zip(weights)
            .enumerate()
            .map(|(i, (a, w))| Entry {
                id: i as u32 + 1,
                text: format!("[{a}/TCP,State:active]"),
                weight: *w,
            })
            .collect()
    }

    #[test]
    fn equal_backends_share_the_slots_as_in_cilium_s_tests() {
        let e = entries(
            &[
                "10.244.1.1:80",
                "10.244.1.2:80",
                "10.244.1.3:80",
                "10.244.1.4:80",
            ],
            &[100; 4],
        );
        let t = table(&e, 1021, SEED);
        assert_eq!(t.len(), 1021);
        let h = histogram(&t);
        let ids: Vec<(u32, usize)> = h.clone();
        assert_eq!(ids, vec![(1, 256), (2, 255), (3, 255), (4, 255)]);
        // The first slots as the permutations of these hash texts give them.
        let first: Vec<u32> = t.iter().take(16).copied().collect();
        assert_eq!(first, vec![4, 1, 2, 4, 2, 1, 2, 1, 1, 1, 4, 1, 1, 1, 1, 2]);
    }

    #[test]
    fn weights_share_the_slots_in_proportion() {
        let e = entries(
            &[
                "10.244.0.112:8081",
                "10.244.0.113:8081",
                "10.244.0.122:8081",
                "10.244.0.123:8081",
            ],
            &[70, 70, 30, 30],
        );
        let h = histogram(&table(&e, 1021, SEED));
        let ids: Vec<(u32, usize)> = h.clone();
        assert_eq!(ids, vec![(1, 358), (2, 357), (3, 153), (4, 153)]);
    }

    #[test]
    fn no_backends_no_table() {
        assert!(table(&[], 1021, SEED).is_empty());
    }
}
