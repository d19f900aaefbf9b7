//! Deterministic stand-ins for the ports the kernel hands out.
//!
//! Real kube-proxy (userspace, default `--proxy-port-range` empty) opens each
//! Service port's listener on port 0, so **the kernel** picks the proxy port;
//! every dial to a backend also gets a kernel-chosen ephemeral source port.
//! kpv must be deterministic, so both are derived here from a sha256 hash,
//! inside the kernel's default `ip_local_port_range` (32768–60999) and
//! following the kernel's own preferences (Linux ≥ 4.6):
//!
//! * a TCP listener (`bind(0)` with `SO_REUSEADDR`, which Go sets) gets an
//!   **odd** port, first from the lower half of the range
//!   (`inet_csk_find_open_port`: "do the opposite [of connect] to not pollute
//!   connect() users"); a port already taken is skipped by probing onwards;
//! * a TCP `connect()` gets an **even** port (`__inet_hash_connect` favours
//!   ports with the parity of the range's low end);
//! * UDP sockets get any port of the range.
//!
//! The hash only stands in for the kernel's random choice; which port a real
//! node would show can never be predicted. This module must never read a
//! clock or draw unseeded randomness.

use crate::model::packet::Protocol;
use crate::util::sha256::prefix64;

/// Default `net.ipv4.ip_local_port_range`.
pub const EPHEMERAL_LOW: u16 = crate::model::EPHEMERAL_PORT_RANGE.0;
pub const EPHEMERAL_HIGH: u16 = crate::model::EPHEMERAL_PORT_RANGE.1;

/// Ports already bound, per protocol (the kernel's port space is per
/// protocol: a TCP and a UDP socket may share a number). One bit per port,
/// so finding the next free port scans 64 ports at a time: with 10,000
/// Services the preferred half of the range fills up and every further
/// listener probes thousands of taken ports.
#[derive(Clone, Debug, Default)]
pub struct PortSpace {
    /// Per protocol (TCP, UDP, SCTP): bit `p` set = port `p` taken.
    used: [Vec<u64>; 3],
}

fn slot(protocol: Protocol) -> usize {
    match protocol {
        Protocol::Tcp => 0,
        Protocol::Udp => 1,
        Protocol::Sctp => 2,
    }
}

impl PortSpace {
    pub fn reserve(&mut self, protocol: Protocol, port: u16) {
        let bits = &mut self.used[slot(protocol)];
        if bits.is_empty() {
            bits.resize(1 << 10, 0);
        }
        bits[usize::from(port / 64)] |= 1 << (port % 64);
    }

    /// The first free port in `from..to`, every port (`step` 1) or every
    /// other one from `from` on (`step` 2).
    fn first_free(&self, protocol: Protocol, from: u32, to: u32, step: u32) -> Option<u32> {
        let to = to.min(1 << 16);
        let bits = &self.used[slot(protocol)];
        let parity = match (step, from % 2) {
            (2, 0) => 0x5555_5555_5555_5555u64,
            (2, _) => 0xAAAA_AAAA_AAAA_AAAAu64,
            _ => !0,
        };
        let mut p = from;
        while p < to {
            let w = p / 64;
            let word = bits.get(w as usize).copied().unwrap_or(0);
            let mut free = !word & parity & (!0u64 << (p % 64));
            let word_end = (w + 1) * 64;
            if to < word_end {
                free &= (1u64 << (to % 64)) - 1;
            }
            if free != 0 {
                return Some(w * 64 + free.trailing_zeros());
            }
            p = word_end;
        }
        None
    }

    /// A listener port for `key` (the Service port name text), as the kernel
    /// would pick for `bind(0)`, and mark it used. `None` when the range is
    /// exhausted.
    pub fn allocate_listener(&mut self, protocol: Protocol, key: &str) -> Option<u16> {
        let h = prefix64(key);
        let low = EPHEMERAL_LOW as u32;
        let high = EPHEMERAL_HIGH as u32 + 1; // exclusive
        let port = match protocol {
            Protocol::Tcp | Protocol::Sctp => {
                // Lower half first, then the upper half; in each half odd
                // ports first, then even ones.
                let half = low + (((high - low) >> 2) << 1);
                [(low, half), (half, high)]
                    .into_iter()
                    .find_map(|(lo, hi)| self.scan_parity(protocol, lo, hi, h))
            }
            Protocol::Udp => {
                // From a hashed start to the end of the range, then from its
                // beginning.
                let size = high - low;
                let start = low + (h % size as u64) as u32;
                self.first_free(protocol, start, high, 1)
                    .or_else(|| self.first_free(protocol, low, start, 1))
            }
        }?;
        let port = u16::try_from(port).ok()?;
        self.reserve(protocol, port);
        Some(port)
    }

    /// A listener port for `key` from a configured `portRange` (kube-proxy's
    /// own range allocator instead of the kernel's `bind(0)`): from a
    /// hashed start onwards, wrapping. `None` when every port is taken.
    pub fn allocate_in_range(
        &mut self,
        protocol: Protocol,
        key: &str,
        range: (u16, u16),
    ) -> Option<u16> {
        let (lo, hi) = (u32::from(range.0), u32::from(range.1) + 1);
        if lo >= hi {
            return None;
        }
        let start = lo + (prefix64(key) % u64::from(hi - lo)) as u32;
        let port = self
            .first_free(protocol, start, hi, 1)
            .or_else(|| self.first_free(protocol, lo, start, 1))?;
        let port = u16::try_from(port).ok()?;
        self.reserve(protocol, port);
        Some(port)
    }

    /// Ports `lo + (start + 2i) % remaining` for `start` odd then even: from
    /// `lo + start` to the end of the half, then from the half's first port
    /// of that parity.
    fn scan_parity(&self, protocol: Protocol, lo: u32, hi: u32, h: u64) -> Option<u32> {
        let remaining = (hi - lo) & !1;
        if remaining == 0 {
            return None;
        }
        let offset = (h % remaining as u64) as u32 | 1;
        for start in [offset, offset - 1] {
            let found = self
                .first_free(protocol, lo + start, lo + remaining, 2)
                .or_else(|| self.first_free(protocol, lo + (start & 1), lo + start, 2));
            if found.is_some() {
                return found;
            }
        }
        None
    }
}

/// The source port of kube-proxy's own connection to a backend, for `key`
/// (client, backend, attempt): even for TCP (`connect()`), anywhere for UDP.
pub fn dial_source_port(protocol: Protocol, key: &str) -> u16 {
    let h = prefix64(key);
    let low = EPHEMERAL_LOW as u64;
    let size = (EPHEMERAL_HIGH as u64 + 1) - low;
    let port = match protocol {
        Protocol::Udp => low + h % size,
        _ => low + 2 * (h % (size / 2)),
    };
    u16::try_from(port).unwrap_or(EPHEMERAL_LOW)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_listener_ports_are_odd_and_in_the_lower_half() {
        let mut s = PortSpace::default();
        for i in 0..200 {
            let p = s
                .allocate_listener(Protocol::Tcp, &format!("ns/svc{i}:http"))
                .unwrap();
            assert_eq!(p % 2, 1, "{p}");
            assert!((32768..46884).contains(&p), "{p}");
        }
    }

    #[test]
    fn collisions_probe_to_the_next_free_port() {
        let mut s = PortSpace::default();
        let a = s.allocate_listener(Protocol::Tcp, "same").unwrap();
        let b = s.allocate_listener(Protocol::Tcp, "same").unwrap();
        assert_ne!(a, b);
        assert_eq!(b, if a + 2 < 46884 { a + 2 } else { 32769 });
        // UDP has its own port space.
        let mut u = PortSpace::default();
        u.reserve(Protocol::Tcp, 40000);
        let x = u.allocate_listener(Protocol::Udp, "k").unwrap();
        assert!((EPHEMERAL_LOW..=EPHEMERAL_HIGH).contains(&x));
    }

    #[test]
    fn exhausting_the_range_gives_none_not_a_panic() {
        let mut s = PortSpace::default();
        for p in EPHEMERAL_LOW..=EPHEMERAL_HIGH {
            s.reserve(Protocol::Udp, p);
        }
        assert_eq!(s.allocate_listener(Protocol::Udp, "x"), None);
        assert!(s.allocate_listener(Protocol::Tcp, "x").is_some());
    }

    /// The port-by-port probing the bitset replaced, as the reference.
    fn probe(
        used: &std::collections::BTreeSet<(Protocol, u16)>,
        protocol: Protocol,
        key: &str,
    ) -> Option<u16> {
        let free = |p: u32| u16::try_from(p).is_ok_and(|p| !used.contains(&(protocol, p)));
        let h = prefix64(key);
        let low = EPHEMERAL_LOW as u32;
        let high = EPHEMERAL_HIGH as u32 + 1;
        let port = match protocol {
            Protocol::Tcp | Protocol::Sctp => {
                let half = low + (((high - low) >> 2) << 1);
                [(low, half), (half, high)]
                    .into_iter()
                    .find_map(|(lo, hi)| {
                        let remaining = (hi - lo) & !1;
                        let offset = (h % remaining as u64) as u32 | 1;
                        [offset, offset - 1].into_iter().find_map(|start| {
                            (0..remaining / 2)
                                .map(|i| lo + (start + 2 * i) % remaining)
                                .find(|&p| free(p))
                        })
                    })
            }
            Protocol::Udp => {
                let size = high - low;
                let start = (h % size as u64) as u32;
                (0..size)
                    .map(|i| low + (start + i) % size)
                    .find(|&p| free(p))
            }
        }?;
        u16::try_from(port).ok()
    }

    #[test]
    fn bitset_allocation_equals_probing_port_by_port() {
        // Most of the range taken (so scans cross many words and wrap), then
        // nearly all of it (so allocation runs out).
        for keep in [10u32, 2_000] {
            for protocol in [Protocol::Tcp, Protocol::Udp, Protocol::Sctp] {
                let mut s = PortSpace::default();
                let mut used = std::collections::BTreeSet::new();
                for p in EPHEMERAL_LOW..=EPHEMERAL_HIGH {
                    if u32::from(p).wrapping_mul(2_654_435_761) % keep != 0 {
                        s.reserve(protocol, p);
                        used.insert((protocol, p));
                    }
                }
                let n = if keep == 10 { 400 } else { 40 };
                let mut none = 0;
                for i in 0..n {
                    let key = format!("ns/svc{i}:http");
                    let want = probe(&used, protocol, &key);
                    assert_eq!(
                        s.allocate_listener(protocol, &key),
                        want,
                        "{protocol:?} {i}"
                    );
                    match want {
                        Some(p) => {
                            used.insert((protocol, p));
                        }
                        None => none += 1,
                    }
                }
                assert_eq!(none > 0, keep == 2_000, "{protocol:?} keep {keep}");
            }
        }
    }

    #[test]
    fn dial_ports_are_even_for_tcp() {
        for i in 0..100 {
            let p = dial_source_port(Protocol::Tcp, &format!("{i}"));
            assert_eq!(p % 2, 0);
            assert!((EPHEMERAL_LOW..=EPHEMERAL_HIGH).contains(&p));
        }
    }
}
