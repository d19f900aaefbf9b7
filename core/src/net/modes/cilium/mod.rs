//! Cilium's kube-proxy replacement: eBPF programs and maps where kube-proxy
//! writes netfilter rules (cilium/cilium `pkg/loadbalancer`, `bpf/`).
//!
//! [`frontends`] is the agent's control plane for one node (each Service
//! port's frontends and their backends, by Cilium's own rules); [`maps`]
//! numbers them into the BPF maps; [`maglev`] builds a frontend's lookup
//! table; [`render`] prints the maps as Cilium's `lb/maps-dump` and the
//! agent's tables; [`process`] walks a new connection through the programs.
//!
//! ```text
//!  a Pod's connect() / sendmsg()        a packet from outside
//!           │                                   │
//!   bpf sock (socket LB): the socket    bpf host: tc ingress on eth0
//!   is connected to the backend itself    (XDP when enabled)
//!           │                                   │
//!           └──────── the same lookups ─────────┘
//!   cilium_lb4_services_v2   frontend (address, port, protocol, scope)
//!   cilium_lb4_source_range  loadBalancerSourceRanges (allow or deny)
//!   cilium_lb4_affinity      sessionAffinity: the client's backend
//!   cilium_lb4_maglev        or the Maglev table (else a random slot)
//!   cilium_lb4_backends_v3   the backend's address: DNAT
//!           │                                   │
//!   the packet leaves the Pod already   backend on another node:
//!   addressed to the backend; replies    SNAT to this node (replies come
//!   are rewritten at recvmsg()           back through it), or DSR (the
//!                                        backend answers the client)
//! ```
//!
//! Fidelity notes:
//! * Cilium does not use kube-proxy's endpoint categorisation: a Local
//!   policy with no local backend leaves a frontend without backends, and
//!   terminating backends serve only when none is active.
//! * A Node object given without `status.addresses` has no node-address
//!   NodePort entries, only the `0.0.0.0:port` surrogate (as in Cilium's
//!   tests); kpv's other modes make an address up for such a node.
//! * Each IP family is compiled on its own, so both families' IDs start at
//!   1 (one agent numbers them together).
//! * The maps are those of a fresh node that learnt the Services in name
//!   order; IDs on a live node follow the order it learnt them in.
//!
//! Never: decide which endpoints a frontend gets anywhere but in
//! [`frontends`], write text outside [`render`], or panic on input.

pub mod frontends;
pub mod maglev;
pub mod maps;
mod process;
pub mod render;

use super::{Dataplane, Hook, NodeOutcome, NodeState, World};
use crate::model::cilium::DsrDispatch;
use crate::model::packet::{IpFamily, Packet};
use crate::model::Mode;
use crate::net::proxy::ProxyInput;
use crate::util::choose::Chooser;
use maps::{Maps, ServiceEntry};
use process::At;
use std::cell::OnceCell;
use std::net::IpAddr;

/// One node's compiled Cilium data plane, for one IP family.
pub struct CiliumDataplane {
    pub maps: Maps,
    family: IpFamily,
    node: String,
    node_ip: IpAddr,
    /// The node's addresses NodePorts answer on.
    node_ips: Vec<IpAddr>,
    pod_cidr: Option<ipnet::IpNet>,
    socket_lb: bool,
    socket_lb_hostns_only: bool,
    external_clusterip: bool,
    dsr_dispatch: DsrDispatch,
    maglev_seed: u32,
    /// The maps dump, written on first use.
    text: OnceCell<Vec<String>>,
}

/// Compile one node's view into its BPF maps.
pub fn compile(input: &ProxyInput) -> CiliumDataplane {
    let fes = frontends::frontends(input);
    let node_ips: Vec<IpAddr> = if input.node.addresses_unstated {
        Vec::new()
    } else {
        input.node.ips.clone()
    };
    let cfg = &input.cilium;
    CiliumDataplane {
        maps: Maps::build(fes, cfg, &node_ips),
        family: input.family,
        node: input.node.name.clone(),
        node_ip: input.node.primary_ip,
        node_ips,
        pod_cidr: input.node.pod_cidr,
        socket_lb: cfg.socket_lb,
        socket_lb_hostns_only: cfg.socket_lb_hostns_only,
        external_clusterip: cfg.external_clusterip,
        dsr_dispatch: cfg.dsr_dispatch,
        maglev_seed: cfg.maglev_seed,
        text: OnceCell::new(),
    }
}

impl CiliumDataplane {
    fn lines(&self) -> &[String] {
        self.text.get_or_init(|| render::maps_dump(&self.maps))
    }

    /// A frontend's master entry as dumped, and its line.
    fn line_of(&self, entry: &ServiceEntry) -> (String, Option<usize>) {
        let addr = format!("ADDR={} SLOT=0 ", render::frontend_addr(&entry.frontend));
        let id = format!("SVC: ID={} ", entry.id.0);
        let lines = self.lines();
        match lines
            .iter()
            .position(|l| l.starts_with(&id) && l.contains(&addr))
        {
            Some(i) => (lines[i].clone(), Some(i)),
            None => (format!("{id}{addr}"), None),
        }
    }

    /// Is `ip` one of this node's Pods?
    fn is_local_pod(&self, ip: IpAddr) -> bool {
        self.pod_cidr.is_some_and(|c| c.contains(&ip))
    }
}

impl Dataplane for CiliumDataplane {
    fn mode(&self) -> Mode {
        Mode::Cilium
    }

    fn render_text(&self) -> String {
        let mut s = self.lines().join("\n");
        if !s.is_empty() {
            s.push('\n');
        }
        s
    }

    #[cfg(feature = "json")]
    fn render_json(&self) -> serde_json::Value {
        serde_json::json!({
            "maps": self.lines(),
            "services": self.maps.services,
            "backends": self.maps.backends,
            "wildcards": self.maps.wildcards,
        })
    }

    #[cfg(feature = "json")]
    fn render_view(&self, view: &str) -> Option<String> {
        match view {
            "maps" => Some(self.render_text()),
            "frontends" => Some(render::frontends_table(&self.maps)),
            "backends" => Some(render::backends_table(&self.maps)),
            "services" => Some(render::services_table(&self.maps)),
            _ => None,
        }
    }

    fn process(
        &self,
        packet: &Packet,
        hook: Hook,
        state: &mut NodeState,
        chooser: &mut Chooser,
        _world: &dyn World,
        now_ms: u64,
    ) -> NodeOutcome {
        let at = match hook {
            Hook::Output => At::Host,
            Hook::Prerouting if self.is_local_pod(packet.src.ip()) => At::PodVeth,
            Hook::Prerouting => At::Device,
        };
        self.walk(packet, at, state, chooser, now_ms)
    }

    fn balances_at_socket(&self, from_pod: bool) -> bool {
        self.socket_lb && !(from_pod && self.socket_lb_hostns_only)
    }

    fn at_socket(
        &self,
        packet: &Packet,
        from_pod: bool,
        state: &mut NodeState,
        chooser: &mut Chooser,
        now_ms: u64,
    ) -> Option<NodeOutcome> {
        if !self.balances_at_socket(from_pod) {
            return None;
        }
        let out = self.walk(packet, At::Socket, state, chooser, now_ms);
        (out.verdict != super::Verdict::None).then_some(out)
    }

    fn rule_count(&self) -> usize {
        let m = &self.maps;
        m.backends.len()
            + m.wildcards.len()
            + m.services
                .iter()
                .map(|s| {
                    let fe = &s.frontend;
                    let aff = if fe.flags.session_affinity {
                        s.slots
                            .iter()
                            .filter(|(_, st)| *st == frontends::BackendState::Active)
                            .count()
                    } else {
                        0
                    };
                    2 + s.slots.len()
                        + aff
                        + fe.source_ranges.len()
                        + usize::from(!s.maglev.is_empty())
                })
                .sum::<usize>()
    }

    /// Each Maglev frontend's table, in the services map's order.
    #[cfg(feature = "hash-tables")]
    fn hash_tables(&self) -> Vec<super::hash_table::HashTable> {
        self.maps
            .services
            .iter()
            .filter(|s| !s.maglev.is_empty())
            .map(|s| {
                let slots = s
                    .maglev
                    .iter()
                    .map(|id| self.maps.backend(maps::BackendId(*id)).map(|b| b.addr));
                super::hash_table::HashTable::count(s.frontend.addr, s.frontend.protocol, slots)
            })
            .collect()
    }
}
