//! The injected, seeded source of random choices.
//!
//! kube-proxy's data planes pick endpoints at random (iptables `statistic`,
//! nftables `numgen`, IPVS `mh` tables...). Every such pick in kpv goes through a
//! [`Chooser`] the caller seeds, so the same seed always gives the same path.
//! The generator is SplitMix64: tiny, fast and with well-mixed output.

/// A seeded pseudo-random generator passed to everything that picks at random.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chooser {
    state: u64,
}

impl Chooser {
    pub fn new(seed: u64) -> Chooser {
        Chooser { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// A uniform index below `n` (`n` > 0), without modulo bias worth noticing
    /// (Lemire's multiply-shift).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        ((self.next_u32() as u64 * n as u64) >> 32) as usize
    }

    /// What the kernel's `xt_statistic` random mode does: match when a random
    /// 31-bit value is below `threshold`, the `probability × 2³¹` iptables
    /// stores.
    pub fn statistic_match(&mut self, threshold: u64) -> bool {
        ((self.next_u32() & 0x7FFF_FFFF) as u64) < threshold
    }

    /// A generator for a sub-task that does not disturb this one's sequence.
    pub fn fork(&self, salt: u64) -> Chooser {
        let mut c = Chooser::new(self.state ^ salt.wrapping_mul(0xA24B_AED4_963E_E407));
        c.next_u64();
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence() {
        let mut a = Chooser::new(7);
        let mut b = Chooser::new(7);
        let xs: Vec<usize> = (0..20).map(|_| a.below(5)).collect();
        let ys: Vec<usize> = (0..20).map(|_| b.below(5)).collect();
        assert_eq!(xs, ys);
        assert!(xs.iter().all(|&x| x < 5));
        assert_ne!(Chooser::new(8).next_u64(), Chooser::new(7).next_u64());
    }

    #[test]
    fn below_is_roughly_uniform() {
        let mut c = Chooser::new(1);
        let mut counts = [0u32; 4];
        for _ in 0..40_000 {
            counts[c.below(4)] += 1;
        }
        for n in counts {
            assert!((9_500..10_500).contains(&n), "{counts:?}");
        }
    }
}
