//! A consistent-hash lookup table as a learner reads it: how many of one
//! frontend's M slots each backend holds. Cilium's Maglev and IPVS's `mh`
//! scheduler both pick a backend by hashing the connection into such a
//! table; what their tables hold is the answer to "how evenly, and what
//! moves when a backend goes".

use crate::model::packet::Protocol;
use std::net::SocketAddr;

/// One frontend's lookup table, counted per backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HashTable {
    pub frontend: SocketAddr,
    pub protocol: Protocol,
    /// M: the table's number of slots.
    pub size: usize,
    /// Each backend with the slots it holds, by backend address.
    pub shares: Vec<Share>,
}

/// One backend's part of a [`HashTable`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    pub backend: SocketAddr,
    pub slots: usize,
}

impl HashTable {
    /// Count `slots` (the backend of each slot, `None` for an empty one).
    pub fn count(
        frontend: SocketAddr,
        protocol: Protocol,
        slots: impl IntoIterator<Item = Option<SocketAddr>>,
    ) -> HashTable {
        let mut counts: std::collections::BTreeMap<SocketAddr, usize> = Default::default();
        let mut size = 0usize;
        for slot in slots {
            size = size.saturating_add(1);
            if let Some(b) = slot {
                let c = counts.entry(b).or_default();
                *c = c.saturating_add(1);
            }
        }
        HashTable {
            frontend,
            protocol,
            size,
            shares: counts
                .into_iter()
                .map(|(backend, slots)| Share { backend, slots })
                .collect(),
        }
    }

    /// The slots that name a backend (M when the table is full).
    pub fn filled(&self) -> usize {
        self.shares.iter().map(|s| s.slots).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_counted_per_backend_in_address_order() {
        let a: SocketAddr = "10.0.0.9:80".parse().unwrap();
        let b: SocketAddr = "10.0.0.10:80".parse().unwrap();
        let t = HashTable::count(a, Protocol::Tcp, [Some(a), Some(b), None, Some(a)]);
        assert_eq!(t.size, 4);
        assert_eq!(t.filled(), 3);
        assert_eq!(
            t.shares,
            vec![
                Share {
                    backend: a,
                    slots: 2
                },
                Share {
                    backend: b,
                    slots: 1
                }
            ]
        );
    }
}
