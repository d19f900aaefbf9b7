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

use crate::packet::Protocol;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;

/// Default `net.ipv4.ip_local_port_range`.
pub const EPHEMERAL_LOW: u16 = 32768;
pub const EPHEMERAL_HIGH: u16 = 60999;

/// The first 8 bytes of sha256(text), as an integer.
pub fn hash64(text: &str) -> u64 {
    let d = Sha256::digest(text.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    u64::from_be_bytes(b)
}

/// Ports already bound, per protocol (the kernel's port space is per
/// protocol: a TCP and a UDP socket may share a number).
#[derive(Clone, Debug, Default)]
pub struct PortSpace {
    used: BTreeSet<(Protocol, u16)>,
}

impl PortSpace {
    pub fn reserve(&mut self, protocol: Protocol, port: u16) {
        self.used.insert((protocol, port));
    }

    fn is_free(&self, protocol: Protocol, port: u32) -> bool {
        u16::try_from(port).is_ok_and(|p| !self.used.contains(&(protocol, p)))
    }

    /// A listener port for `key` (the Service port name text), as the kernel
    /// would pick for `bind(0)`, and mark it used. `None` when the range is
    /// exhausted.
    pub fn allocate_listener(&mut self, protocol: Protocol, key: &str) -> Option<u16> {
        let h = hash64(key);
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
                let size = high - low;
                let start = (h % size as u64) as u32;
                (0..size)
                    .map(|i| low + (start + i) % size)
                    .find(|&p| self.is_free(protocol, p))
            }
        }?;
        let port = u16::try_from(port).ok()?;
        self.reserve(protocol, port);
        Some(port)
    }

    fn scan_parity(&self, protocol: Protocol, lo: u32, hi: u32, h: u64) -> Option<u32> {
        let remaining = (hi - lo) & !1;
        if remaining == 0 {
            return None;
        }
        let offset = (h % remaining as u64) as u32 | 1;
        for start in [offset, offset - 1] {
            let found = (0..remaining / 2)
                .map(|i| lo + (start + 2 * i) % remaining)
                .find(|&p| self.is_free(protocol, p));
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
    let h = hash64(key);
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

    #[test]
    fn dial_ports_are_even_for_tcp() {
        for i in 0..100 {
            let p = dial_source_port(Protocol::Tcp, &format!("{i}"));
            assert_eq!(p % 2, 0);
            assert!((EPHEMERAL_LOW..=EPHEMERAL_HIGH).contains(&p));
        }
    }
}
