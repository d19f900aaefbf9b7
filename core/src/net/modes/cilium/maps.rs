//! The node's BPF load-balancer maps as typed entries: the services map
//! (a master entry per frontend and one slot per backend), the backends,
//! reverse-NAT, affinity-match, source-range and Maglev maps (cilium/cilium
//! `pkg/loadbalancer/reconciler/bpf_reconciler.go`).
//!
//! IDs are handed out as Cilium's reconciler would on a fresh node that
//! learnt the Services in name order: service (reverse-NAT) IDs from 1 in
//! frontend order, backend IDs from 1 as frontends first name them. A
//! cluster that grew differently numbers them otherwise; what each ID
//! stands for is the same.

use super::frontends::{BackendState, Frontend, FrontendType};
use super::maglev;
use crate::model::cilium::CiliumConfig;
use crate::model::packet::Protocol;
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

/// A frontend's service (and reverse-NAT) ID; 0 for a wildcard entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ServiceId(pub u32);

/// A backend's ID in the backends map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct BackendId(pub u32);

/// One backend entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BackendEntry {
    pub id: BackendId,
    pub addr: SocketAddr,
    pub protocol: Protocol,
    pub state: BackendState,
}

/// One frontend with its ID, its slots' backend IDs and its Maglev table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ServiceEntry {
    pub id: ServiceId,
    pub frontend: Frontend,
    /// Backend IDs in slot order (slot 1 first).
    pub slots: Vec<(BackendId, BackendState)>,
    pub count: usize,
    pub qcount: usize,
    /// The Maglev table (backend ID per slot), when the frontend uses one
    /// and has a backend to use.
    #[serde(skip)]
    pub maglev: Vec<u32>,
}

/// A wildcard entry: any port of a ClusterIP or load-balancer address that
/// has no frontend of its own is dropped rather than passed on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Wildcard {
    pub ip: IpAddr,
    pub kind: FrontendType,
}

/// Every map of one node and family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Maps {
    pub services: Vec<ServiceEntry>,
    pub backends: Vec<BackendEntry>,
    pub wildcards: Vec<Wildcard>,
}

impl Maps {
    /// The maps for `frontends` (in the order Cilium numbers them).
    pub fn build(frontends: Vec<Frontend>, cfg: &CiliumConfig, node_ips: &[IpAddr]) -> Maps {
        let mut maps = Maps::default();
        let mut ids: BTreeMap<(SocketAddr, Protocol), BackendId> = BTreeMap::new();
        for (i, fe) in frontends.into_iter().enumerate() {
            let id = ServiceId(u32::try_from(i + 1).unwrap_or(u32::MAX));
            let mut slots = Vec::new();
            for b in &fe.backends {
                let next = BackendId(u32::try_from(ids.len() + 1).unwrap_or(u32::MAX));
                let bid = *ids.entry((b.addr, b.protocol)).or_insert_with(|| {
                    maps.backends.push(BackendEntry {
                        id: next,
                        addr: b.addr,
                        protocol: b.protocol,
                        state: b.state,
                    });
                    next
                });
                if b.state != BackendState::Maintenance {
                    slots.push((bid, b.state));
                }
            }
            let (count, qcount) = fe.counts();
            let maglev = if fe.maglev && count > 0 {
                let entries: Vec<maglev::Entry> = fe
                    .slots()
                    .zip(&slots)
                    .take(count)
                    .map(|(b, (bid, _))| maglev::Entry {
                        id: bid.0,
                        text: format!("[{}/{},State:active]", b.addr, b.protocol.as_upper()),
                        weight: b.weight,
                    })
                    .collect();
                maglev::table(&entries, cfg.maglev_table_size, cfg.maglev_seed)
            } else {
                Vec::new()
            };
            let wildcard = cfg.wildcard_entries
                && fe.wildcard
                && !node_ips.contains(&fe.addr.ip())
                && !maps.wildcards.iter().any(|w| w.ip == fe.addr.ip());
            if wildcard {
                maps.wildcards.push(Wildcard {
                    ip: fe.addr.ip(),
                    kind: fe.kind,
                });
            }
            maps.services.push(ServiceEntry {
                id,
                frontend: fe,
                slots,
                count,
                qcount,
                maglev,
            });
        }
        maps
    }

    /// The backend entry of `id`.
    pub fn backend(&self, id: BackendId) -> Option<&BackendEntry> {
        self.backends.iter().find(|b| b.id == id)
    }
}
