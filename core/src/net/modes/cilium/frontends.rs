//! Cilium's control plane for one node: each Service port expands into
//! frontends (ClusterIP; NodePort as the `0.0.0.0:port` surrogate plus one
//! entry per node address; load-balancer addresses; externalIPs; the
//! internal `/i` scope when the traffic policies differ), and each
//! frontend gets its backends by Cilium's own rules (cilium/cilium
//! `pkg/loadbalancer/reflectors/conversions.go`, `writer/writer.go`).
//!
//! Cilium does not share kube-proxy's endpoint categorisation: a Local
//! policy with no local backend leaves the frontend with none (no fallback
//! to the cluster's), an endpoint with no node name counts as local, and
//! terminating backends are kept and ordered after the active ones. Those
//! rules are decided here, once; the maps and the packet walk only use
//! them.

use crate::model::cilium::{CiliumConfig, Exposure, LbAlgorithm, LbMode};
use crate::model::packet::{IpFamily, Protocol};
use crate::model::{ServiceType, TrafficDistribution};
use crate::net::proxy::{EndpointInfo, ProxyInput, ServicePortInfo, ServicePortName};
use ipnet::IpNet;
use serde::Serialize;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// What kind of address a frontend is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum FrontendType {
    ClusterIp,
    NodePort,
    LoadBalancer,
    ExternalIps,
}

/// Which clients a frontend serves when the two traffic policies differ:
/// those from outside (`External`) or the cluster's own (`Internal`, `/i`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Scope {
    External,
    Internal,
}

/// A backend's state in Cilium's tables, in the order its slots are laid
/// out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum BackendState {
    Active,
    Terminating,
    TerminatingNotServing,
    Quarantined,
    Maintenance,
}

impl BackendState {
    /// The `STATE=` word of the maps dump (the BPF map keeps four states).
    pub fn word(self) -> &'static str {
        match self {
            BackendState::Active => "active",
            BackendState::Terminating | BackendState::TerminatingNotServing => "terminating",
            BackendState::Quarantined => "quarantined",
            BackendState::Maintenance => "maintenance",
        }
    }
}

/// One backend of a frontend.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Backend {
    pub addr: SocketAddr,
    pub protocol: Protocol,
    pub state: BackendState,
    pub weight: u16,
    pub node: Option<String>,
}

/// One frontend: an address, port, protocol and scope the node's BPF
/// programs look up, with everything its map entries say.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Frontend {
    pub addr: SocketAddr,
    pub protocol: Protocol,
    pub scope: Scope,
    pub kind: FrontendType,
    pub service: ServicePortName,
    /// The Service's port (a NodePort frontend listens on another).
    pub service_port: u16,
    /// A copy of a NodePort surrogate for one of the node's addresses.
    pub expanded: bool,
    pub flags: Flags,
    /// `LBALG=`: the algorithm the Service's annotation chose, if honoured.
    pub algorithm: Option<LbAlgorithm>,
    /// Looked up through a Maglev table.
    pub maglev: bool,
    /// Its address gets a wildcard entry (any other port dropped): the
    /// Service's addresses come from Cilium's own load-balancer IPAM, BGP
    /// or L2 announcements.
    pub wildcard: bool,
    pub affinity_seconds: u32,
    /// The source ranges of this frontend's family (checked only with
    /// [`Flags::check_source_range`]).
    pub source_ranges: Vec<IpNet>,
    /// Slot order: active, then terminating, then the rest; maintenance
    /// backends are listed (they have a backend entry) but take no slot.
    pub backends: Vec<Backend>,
}

impl Frontend {
    /// Is this the `0.0.0.0`/`[::]` NodePort surrogate?
    pub fn surrogate(&self) -> bool {
        self.addr.ip().is_unspecified()
    }

    /// The backends that take slots, in slot order.
    pub fn slots(&self) -> impl Iterator<Item = &Backend> {
        self.backends
            .iter()
            .filter(|b| b.state != BackendState::Maintenance)
    }

    /// `COUNT` and `QCOUNT` of the master entry: the backends new
    /// connections go to, and the others that keep slots. Terminating
    /// backends are used only when no backend is active.
    pub fn counts(&self) -> (usize, usize) {
        let (mut active, mut terminating, mut inactive) = (0, 0, 0);
        for b in self.slots() {
            match b.state {
                BackendState::Active => active += 1,
                BackendState::Terminating => terminating += 1,
                _ => inactive += 1,
            }
        }
        if active == 0 {
            (terminating, inactive)
        } else {
            (active, inactive + terminating)
        }
    }
}

/// A frontend's flags, in the words and order of the maps dump.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Flags {
    pub ext_local: bool,
    pub int_local: bool,
    pub two_scopes: bool,
    pub session_affinity: bool,
    pub routable: bool,
    pub check_source_range: bool,
    pub deny: bool,
    pub dsr: bool,
}

/// Every frontend of the node, Service by Service in name order, each
/// Service's frontends in Cilium's key order with a surrogate's node-address
/// copies right after it (the order Cilium numbers them in).
pub fn frontends(input: &ProxyInput) -> Vec<Frontend> {
    let cfg = &input.cilium;
    let mut out = Vec::new();
    let mut i = 0;
    let ports: Vec<(&ServicePortName, &ServicePortInfo, &[EndpointInfo])> =
        input.services_with_endpoints().collect();
    while i < ports.len() {
        let service = &ports[i].0.service;
        let mut own: Vec<Frontend> = Vec::new();
        while let Some((name, info, eps)) = ports.get(i).filter(|p| &p.0.service == service) {
            // An unnamed Service port takes the backends of any port name
            // (Cilium matches names only when both sides have one).
            let any_name: Vec<EndpointInfo>;
            let eps = if name.port.is_empty() {
                any_name = input
                    .endpoints
                    .iter()
                    .filter(|(k, _)| k.service == name.service && k.protocol == name.protocol)
                    .flat_map(|(_, v)| v.iter().cloned())
                    .collect();
                &any_name[..]
            } else {
                eps
            };
            own.extend(port_frontends(input, cfg, name, info, eps));
            i += 1;
        }
        crate::util::order::sort_by(&mut own, |a, b| key(a).cmp(&key(b)));
        for fe in own {
            let copies = if fe.kind == FrontendType::NodePort && fe.surrogate() {
                node_copies(input, &fe)
            } else {
                Vec::new()
            };
            out.push(fe);
            out.extend(copies);
        }
    }
    out
}

/// Cilium's binary frontend key order: the address as 16 bytes (IPv4
/// mapped, so `[::]` < `0.0.0.0` < IPv4 < IPv6), port, protocol, scope.
fn key(fe: &Frontend) -> (Ipv6Addr, u16, &'static str, Scope) {
    let ip = match fe.addr.ip() {
        IpAddr::V4(v4) => v4.to_ipv6_mapped(),
        IpAddr::V6(v6) => v6,
    };
    (ip, fe.addr.port(), fe.protocol.as_upper(), fe.scope)
}

/// The node's addresses a NodePort answers on: its own, unless the Node
/// object stated none.
fn node_addresses(input: &ProxyInput) -> &[IpAddr] {
    if input.node.addresses_unstated {
        &[]
    } else {
        &input.node.ips
    }
}

/// A surrogate's copies for the node's addresses: routable, otherwise the
/// same.
fn node_copies(input: &ProxyInput, fe: &Frontend) -> Vec<Frontend> {
    node_addresses(input)
        .iter()
        .map(|ip| {
            let mut copy = fe.clone();
            copy.addr = SocketAddr::new(*ip, fe.addr.port());
            copy.expanded = true;
            copy.flags.routable = true;
            copy.maglev = maglev_for(&input.cilium, &copy);
            copy
        })
        .collect()
}

fn unspecified(family: IpFamily) -> IpAddr {
    match family {
        IpFamily::V4 => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        IpFamily::V6 => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
    }
}

/// One Service port's frontends (before node-address copies).
fn port_frontends(
    input: &ProxyInput,
    cfg: &CiliumConfig,
    name: &ServicePortName,
    info: &ServicePortInfo,
    eps: &[EndpointInfo],
) -> Vec<Frontend> {
    let ann = &info.cilium;
    if !ann.installed {
        return Vec::new();
    }
    let allows = |e: Exposure| ann.exposure.is_none_or(|x| x == e);
    let scopes: &[Scope] = if info.external_policy_local != info.internal_policy_local {
        &[Scope::External, Scope::Internal]
    } else {
        &[Scope::External]
    };
    let mut addrs: Vec<(FrontendType, IpAddr, u16, Scope)> = Vec::new();
    if let Some(ip) = info.cluster_ip.filter(|_| allows(Exposure::ClusterIp)) {
        addrs.push((FrontendType::ClusterIp, ip, info.port, Scope::External));
    }
    let kpr = cfg.kube_proxy_replacement;
    if kpr && info.node_port != 0 && allows(Exposure::NodePort) {
        for s in scopes {
            addrs.push((
                FrontendType::NodePort,
                unspecified(input.family),
                info.node_port,
                *s,
            ));
        }
    }
    if kpr && info.service_type == ServiceType::LoadBalancer && allows(Exposure::LoadBalancer) {
        for ip in &info.load_balancer_ips {
            for s in scopes {
                addrs.push((FrontendType::LoadBalancer, *ip, info.port, *s));
            }
        }
    }
    for ip in info.external_ips.iter().filter(|_| cfg.external_ips) {
        addrs.push((FrontendType::ExternalIps, *ip, info.port, Scope::External));
    }
    let family_ranges: Vec<IpNet> = info
        .load_balancer_source_ranges
        .iter()
        .filter(|n| IpFamily::of(&n.addr()) == input.family)
        .copied()
        .collect();
    addrs
        .into_iter()
        .map(|(kind, ip, port, scope)| {
            let dsr = forwarding_dsr(cfg, info, name.protocol);
            let mut fe = Frontend {
                addr: SocketAddr::new(ip, port),
                protocol: name.protocol,
                scope,
                kind,
                service: name.clone(),
                service_port: info.port,
                expanded: false,
                flags: Flags {
                    ext_local: info.external_policy_local,
                    int_local: info.internal_policy_local,
                    two_scopes: info.external_policy_local != info.internal_policy_local
                        && kind != FrontendType::ClusterIp,
                    session_affinity: info.session_affinity_seconds.is_some(),
                    routable: !ip.is_unspecified()
                        && (kind != FrontendType::ClusterIp || cfg.external_clusterip),
                    check_source_range: !info.load_balancer_source_ranges.is_empty()
                        && (matches!(kind, FrontendType::LoadBalancer | FrontendType::ExternalIps)
                            || cfg.source_range_all_types),
                    deny: false,
                    dsr,
                },
                algorithm: info.cilium.algorithm.filter(|_| cfg.algorithm_annotation),
                maglev: false,
                wildcard: matches!(kind, FrontendType::ClusterIp | FrontendType::LoadBalancer)
                    && wildcard_class(info.load_balancer_class.as_deref()),
                affinity_seconds: info.session_affinity_seconds.unwrap_or(0),
                source_ranges: family_ranges.clone(),
                backends: backends(input, info, kind, scope, eps),
            };
            fe.flags.deny = fe.flags.check_source_range && info.cilium.source_ranges_deny;
            fe.maglev = maglev_for(cfg, &fe);
            fe
        })
        .collect()
}

/// Is a Service of this `loadBalancerClass` one whose addresses Cilium
/// announces (none: its own LB-IPAM; BGP; L2)?
fn wildcard_class(class: Option<&str>) -> bool {
    matches!(
        class,
        None | Some("io.cilium/bgp-control-plane" | "io.cilium/l2-announcer")
    )
}

/// Does the frontend forward from outside by direct server return?
fn forwarding_dsr(cfg: &CiliumConfig, info: &ServicePortInfo, protocol: Protocol) -> bool {
    if cfg.mode_annotation {
        if let Some(dsr) = info.cilium.dsr {
            return dsr;
        }
    }
    match cfg.mode {
        LbMode::Snat => false,
        LbMode::Dsr => true,
        LbMode::Hybrid => protocol == Protocol::Tcp,
    }
}

/// Is the frontend looked up through a Maglev table? Never for a
/// surrogate; as the Service's honoured annotation says; else with the
/// global `maglev`, for all but ClusterIPs that only Pods reach.
fn maglev_for(cfg: &CiliumConfig, fe: &Frontend) -> bool {
    if fe.surrogate() {
        return false;
    }
    if let Some(a) = fe.algorithm {
        return a == LbAlgorithm::Maglev;
    }
    cfg.algorithm == LbAlgorithm::Maglev
        && (fe.kind != FrontendType::ClusterIp || cfg.external_clusterip)
}

/// A backend's state from its conditions: one neither ready nor
/// terminating (starting) is in maintenance, listed but given no slot.
fn state(ep: &EndpointInfo) -> BackendState {
    if ep.weight == 0 {
        BackendState::Maintenance
    } else if ep.ready {
        BackendState::Active
    } else if ep.terminating && !ep.serving {
        BackendState::TerminatingNotServing
    } else if ep.terminating {
        BackendState::Terminating
    } else {
        BackendState::Maintenance
    }
}

/// The backends a frontend gets, in slot order.
fn backends(
    input: &ProxyInput,
    info: &ServicePortInfo,
    kind: FrontendType,
    scope: Scope,
    eps: &[EndpointInfo],
) -> Vec<Backend> {
    let only_local = match scope {
        Scope::Internal => info.internal_policy_local,
        Scope::External if kind == FrontendType::ClusterIp => info.internal_policy_local,
        Scope::External => info.external_policy_local,
    };
    let local = |ep: &EndpointInfo| {
        ep.node_name
            .as_deref()
            .is_none_or(|n| n.is_empty() || n == input.node.name)
    };
    let mut candidates: Vec<(&EndpointInfo, BackendState)> = eps
        .iter()
        .filter(|ep| IpFamily::of(&ep.addr.ip()) == input.family)
        .filter(|ep| !only_local || local(ep))
        .map(|ep| (ep, state(ep)))
        .collect();
    if input.cilium.service_topology {
        narrow_by_topology(input, info, &mut candidates);
    }
    // Every address of an endpoint is a backend of its own.
    let mut out: Vec<Backend> = candidates
        .into_iter()
        .flat_map(|(ep, state)| {
            std::iter::once(ep.addr.ip())
                .chain(ep.more_addresses.iter().copied())
                .map(move |ip| Backend {
                    addr: SocketAddr::new(ip, ep.addr.port()),
                    protocol: info.name.protocol,
                    state,
                    weight: if ep.weight == 0 {
                        crate::model::cilium::DEFAULT_WEIGHT
                    } else {
                        ep.weight
                    },
                    node: ep.node_name.clone(),
                })
        })
        .collect();
    crate::util::order::sort_by(&mut out, |a, b| {
        (a.state, a.addr.ip(), a.addr.port()).cmp(&(b.state, b.addr.ip(), b.addr.port()))
    });
    // The same address in two slices is one backend.
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|b| seen.insert(b.addr));
    out
}

/// `trafficDistribution` and topology hints, with Cilium's fallbacks:
/// PreferSameNode keeps this node's backends if one of them is active;
/// PreferClose / PreferSameZone keep the backends hinted for this node's
/// zone, unless some backend has no hints or no active one is hinted for
/// the zone (a starting or terminating local backend does not count).
fn narrow_by_topology(
    input: &ProxyInput,
    info: &ServicePortInfo,
    candidates: &mut Vec<(&EndpointInfo, BackendState)>,
) {
    if info.internal_policy_local {
        return;
    }
    let distribution = info.traffic_distribution.or(info
        .cilium
        .topology_annotation
        .then_some(TrafficDistribution::PreferSameZone));
    match distribution {
        Some(TrafficDistribution::PreferSameNode) => {
            let mine = |ep: &EndpointInfo| ep.node_name.as_deref() == Some(&input.node.name);
            if candidates
                .iter()
                .any(|(ep, s)| mine(ep) && *s == BackendState::Active)
            {
                candidates.retain(|(ep, _)| mine(ep));
            }
        }
        Some(TrafficDistribution::PreferClose | TrafficDistribution::PreferSameZone) => {
            let Some(zone) = input.node.zone.as_deref() else {
                return;
            };
            let all_hinted = candidates
                .iter()
                .all(|(ep, _)| !ep.hints.for_zones.is_empty());
            let hinted = |ep: &EndpointInfo| ep.hints.for_zones.iter().any(|z| z == zone);
            if all_hinted
                && candidates
                    .iter()
                    .any(|(ep, s)| hinted(ep) && *s == BackendState::Active)
            {
                candidates.retain(|(ep, _)| hinted(ep));
            }
        }
        None => {}
    }
}
