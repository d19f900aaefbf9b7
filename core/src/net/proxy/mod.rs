//! kube-proxy's mode-independent view of the cluster, for one node and family.
//!
//! As in kube-proxy's `pkg/proxy` (`serviceport.go`, `endpoint.go`,
//! `endpointslicecache.go`), Services and EndpointSlices are lowered once into
//! maps keyed by [`ServicePortName`] (`ns/name:port`), and [`topology`] decides
//! once which endpoints each kind of traffic may use. The modes only render
//! this [`ProxyInput`]; none of them looks at the raw model again.

pub mod naming;
pub mod topology;

use crate::model::cilium::{CiliumConfig, CiliumPort};
use crate::model::packet::{IpFamily, Protocol};
use crate::model::{
    Cluster, DetectLocalMode, EndpointSlice, Hints, NamespacedName, NodePortAddress, ProxyConfig,
    ServiceType, TrafficDistribution, TrafficPolicy,
};
use ipnet::IpNet;
use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::net::{IpAddr, SocketAddr};

pub use topology::{categorize_endpoints, cluster_endpoints, Categorized, Topology};

/// `namespace/name:portname` plus protocol: the key of every kube-proxy map.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ServicePortName {
    pub service: NamespacedName,
    /// Empty for an unnamed port.
    pub port: String,
    pub protocol: Protocol,
}

impl fmt::Display for ServicePortName {
    /// kube-proxy's `ServicePortName.String()`: `ns/name` or `ns/name:port`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.port.is_empty() {
            write!(f, "{}", self.service)
        } else {
            write!(f, "{}:{}", self.service, self.port)
        }
    }
}

/// One port of one Service, for one IP family (kube-proxy's `ServicePort`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ServicePortInfo {
    pub name: ServicePortName,
    pub service_type: ServiceType,
    /// The ClusterIP of this family (None for headless: kube-proxy skips those).
    pub cluster_ip: Option<IpAddr>,
    pub port: u16,
    /// 0 when the Service has no NodePort.
    pub node_port: u16,
    pub external_ips: Vec<IpAddr>,
    pub load_balancer_ips: Vec<IpAddr>,
    pub load_balancer_source_ranges: Vec<IpNet>,
    pub external_policy_local: bool,
    pub internal_policy_local: bool,
    pub health_check_node_port: u16,
    /// ClientIP affinity timeout in seconds.
    pub session_affinity_seconds: Option<u32>,
    /// `spec.trafficDistribution` (Cilium reads it itself; kube-proxy reads
    /// the hints the controller wrote from it).
    pub traffic_distribution: Option<TrafficDistribution>,
    /// `spec.loadBalancerClass`.
    pub load_balancer_class: Option<String>,
    /// The Service's `service.cilium.io/*` annotations, as this node's
    /// Cilium agent applies them.
    pub cilium: CiliumPort,
}

impl ServicePortInfo {
    /// kube-proxy's `ExternallyAccessible()`: NodePort, LB or externalIPs.
    pub fn externally_accessible(&self) -> bool {
        self.node_port != 0 || !self.load_balancer_ips.is_empty() || !self.external_ips.is_empty()
    }

    /// kube-proxy's `UsesClusterEndpoints()`: internal policy Cluster, or any
    /// external access at all (even with external policy Local, cluster
    /// endpoints are needed to short-circuit traffic from Pods and the node).
    pub fn uses_cluster_endpoints(&self) -> bool {
        !self.internal_policy_local || self.externally_accessible()
    }

    /// kube-proxy's `UsesLocalEndpoints()`.
    pub fn uses_local_endpoints(&self) -> bool {
        self.internal_policy_local || (self.externally_accessible() && self.external_policy_local)
    }
}

/// One endpoint of a Service port, as kube-proxy sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EndpointInfo {
    pub addr: SocketAddr,
    pub is_local: bool,
    pub ready: bool,
    pub serving: bool,
    pub terminating: bool,
    pub node_name: Option<String>,
    pub zone: Option<String>,
    pub pod: Option<NamespacedName>,
    pub hints: Hints,
    /// Cilium's weight of the endpoint (its slice's `service.cilium.io/weight`,
    /// else 100; 0 = in maintenance).
    pub weight: u16,
    /// The endpoint's other addresses of this family: kube-proxy uses the
    /// first only, Cilium every one.
    pub more_addresses: Vec<IpAddr>,
}

impl EndpointInfo {
    /// kube-proxy's `Endpoint.String()`: `ip:port`, `[ip6]:port`.
    pub fn key(&self) -> String {
        self.addr.to_string()
    }
}

/// The node kube-proxy runs on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeInfo {
    pub name: String,
    /// The node's primary address of this family.
    pub primary_ip: IpAddr,
    /// All addresses of this family (`status.addresses`), primary first.
    pub ips: Vec<IpAddr>,
    pub pod_cidr: Option<IpNet>,
    /// The node's `topology.kubernetes.io/zone` label.
    pub zone: Option<String>,
    /// See [`crate::model::Node::addresses_unstated`].
    pub addresses_unstated: bool,
}

/// How kube-proxy detects traffic from local Pods (`LocalTrafficDetector`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum LocalDetector {
    /// No detection (empty clusterCIDR): nothing is "local".
    None,
    /// Source in this CIDR (the cluster CIDR, or the node's podCIDR).
    Cidr(IpNet),
}

impl LocalDetector {
    pub fn is_local(&self, ip: &IpAddr) -> bool {
        match self {
            LocalDetector::None => false,
            LocalDetector::Cidr(c) => c.contains(ip),
        }
    }
}

/// Everything one node's kube-proxy knows, for one IP family: the input to
/// every mode's compiler.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProxyInput {
    pub family: IpFamily,
    pub node: NodeInfo,
    pub config: ProxyConfig,
    pub local_detector: LocalDetector,
    /// Addresses NodePorts are accepted on, or `None` for "every local address".
    pub node_port_ips: Option<Vec<IpAddr>>,
    pub service_cidrs: Vec<IpNet>,
    pub services: BTreeMap<ServicePortName, ServicePortInfo>,
    /// Endpoints per Service port, sorted by `ip:port` text as kube-proxy does.
    pub endpoints: BTreeMap<ServicePortName, Vec<EndpointInfo>>,
    /// Cilium's agent settings (read only by the Cilium mode).
    pub cilium: CiliumConfig,
}

impl ProxyInput {
    pub fn endpoints_of(&self, name: &ServicePortName) -> &[EndpointInfo] {
        self.endpoints.get(name).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Every Service port with its endpoints, in name order: one walk along
    /// both maps rather than a lookup by name per Service port (names are
    /// three strings; 10,000s of lookups showed at scale).
    pub fn services_with_endpoints(
        &self,
    ) -> impl Iterator<Item = (&ServicePortName, &ServicePortInfo, &[EndpointInfo])> + '_ {
        let mut eps = self.endpoints.iter().peekable();
        self.services.iter().map(move |(name, svc)| {
            while eps.next_if(|(k, _)| *k < name).is_some() {}
            let list = eps
                .next_if(|(k, _)| *k == name)
                .map_or(&[][..], |(_, v)| v.as_slice());
            (name, svc, list)
        })
    }

    /// What the Service's health check NodePort counts
    /// (`LocalReadyEndpoints`): this node's *ready* endpoint addresses over
    /// all its ports. Serving-terminating ones still take traffic that
    /// arrives, but do not keep the node in the load balancer.
    pub fn local_ready_endpoints(&self, service: &NamespacedName) -> usize {
        let ips: std::collections::BTreeSet<IpAddr> = self
            .endpoints
            .iter()
            .filter(|(k, _)| k.service == *service)
            .flat_map(|(_, eps)| eps.iter().filter(|e| e.is_local && e.ready))
            .map(|e| e.addr.ip())
            .collect();
        ips.len()
    }

    /// Endpoint selection for a Service port, decided once for all modes.
    pub fn categorize(&self, name: &ServicePortName) -> Option<Categorized> {
        let svc = self.services.get(name)?;
        Some(categorize_endpoints(
            svc,
            self.endpoints_of(name),
            self.topology(),
        ))
    }

    /// This node as topology hints see it.
    pub fn topology(&self) -> Option<Topology<'_>> {
        Some(Topology {
            node: &self.node.name,
            zone: self.node.zone.as_deref(),
        })
    }

    /// The masquerade mark as kube-proxy writes it in iptables and IPVS
    /// modes (`0x4000` for bit 14).
    pub fn masquerade_mark(&self) -> u32 {
        1u32 << self.config.iptables_masquerade_bit
    }

    /// The masquerade mark in nftables mode, from `nftables.masqueradeBit`.
    pub fn nftables_masquerade_mark(&self) -> u32 {
        1u32 << self.config.nftables_masquerade_bit
    }
}

/// Build one node's kube-proxy view from the cluster and the current slices.
///
/// `slices` is every EndpointSlice in effect (computed by the controller plus
/// those given or mirrored). Returns `None` when the node does not exist or has
/// no address of that family.
pub fn build_input(
    cluster: &Cluster,
    slices: &[EndpointSlice],
    node_name: &str,
    family: IpFamily,
) -> Option<ProxyInput> {
    let node = cluster.node(node_name)?;
    let primary_ip = node.primary_ip(family)?;
    let mut ips: Vec<IpAddr> = vec![primary_ip];
    for (_, ip) in &node.addresses {
        if IpFamily::of(ip) == family && !ips.contains(ip) {
            ips.push(*ip);
        }
    }
    let pod_cidr = node.pod_cidr(family);
    let config = cluster.proxy.clone();
    let local_detector = match config.detect_local_mode {
        DetectLocalMode::ClusterCidr => config
            .cluster_cidrs
            .iter()
            .find(|c| IpFamily::of(&c.addr()) == family)
            .map(|c| LocalDetector::Cidr(*c))
            .unwrap_or(LocalDetector::None),
        DetectLocalMode::NodeCidr => pod_cidr
            .map(LocalDetector::Cidr)
            .unwrap_or(LocalDetector::None),
    };
    let node_port_ips = node_port_ips(&config, primary_ip, &ips, family);
    let services = service_ports(cluster, &node.labels, family);
    let endpoints = endpoints_seen(slices, node_name, family);
    let service_cidrs = cluster
        .service_cidrs
        .iter()
        .filter(|c| IpFamily::of(&c.addr()) == family)
        .copied()
        .collect();
    Some(ProxyInput {
        family,
        node: NodeInfo {
            name: node_name.to_string(),
            primary_ip,
            ips,
            pod_cidr,
            zone: node.zone.clone(),
            addresses_unstated: node.addresses_unstated,
        },
        config,
        local_detector,
        node_port_ips,
        service_cidrs,
        services,
        endpoints,
        cilium: cluster.cilium,
    })
}

/// The addresses NodePorts accept on, from `nodePortAddresses` (`None`:
/// every node address).
fn node_port_ips(
    config: &ProxyConfig,
    primary_ip: IpAddr,
    ips: &[IpAddr],
    family: IpFamily,
) -> Option<Vec<IpAddr>> {
    if config.node_port_addresses.is_empty() {
        return None;
    }
    let mut v = Vec::new();
    for a in &config.node_port_addresses {
        match a {
            NodePortAddress::Primary => v.push(primary_ip),
            NodePortAddress::Cidr(c) => {
                v.extend(ips.iter().filter(|ip| c.contains(*ip)));
                if c.contains(&loopback(family)) {
                    v.push(loopback(family));
                }
            }
        }
    }
    crate::util::order::sort(&mut v);
    v.dedup();
    Some(v)
}

/// Every Service port kube-proxy programs in one family (not
/// ExternalName, not headless, with a ClusterIP of that family), as its
/// `ServicePortInfo` on a node with these labels.
fn service_ports(
    cluster: &Cluster,
    node_labels: &crate::model::Labels,
    family: IpFamily,
) -> BTreeMap<ServicePortName, ServicePortInfo> {
    let mut services = BTreeMap::new();
    for svc in &cluster.services {
        if svc.service_type == ServiceType::ExternalName {
            continue;
        }
        let cluster_ip = svc
            .cluster_ips
            .iter()
            .find(|ip| IpFamily::of(ip) == family)
            .copied();
        if cluster_ip.is_none() && !svc.headless {
            continue; // not of this family
        }
        if svc.headless {
            continue; // kube-proxy ignores headless Services
        }
        for p in &svc.ports {
            let name = ServicePortName {
                service: svc.id.clone(),
                port: p.name.clone(),
                protocol: p.protocol,
            };
            let info = ServicePortInfo {
                name: name.clone(),
                service_type: svc.service_type,
                cluster_ip,
                port: p.port,
                node_port: if matches!(
                    svc.service_type,
                    ServiceType::NodePort | ServiceType::LoadBalancer
                ) {
                    p.node_port.unwrap_or(0)
                } else {
                    0
                },
                external_ips: svc
                    .external_ips
                    .iter()
                    .filter(|ip| IpFamily::of(ip) == family)
                    .copied()
                    .collect(),
                load_balancer_ips: svc
                    .load_balancer_ips
                    .iter()
                    .filter(|ip| IpFamily::of(ip) == family)
                    .copied()
                    .collect(),
                load_balancer_source_ranges: source_ranges(svc, family),
                external_policy_local: svc.external_traffic_policy == TrafficPolicy::Local,
                internal_policy_local: svc.internal_traffic_policy == TrafficPolicy::Local,
                health_check_node_port: svc.health_check_node_port.unwrap_or(0),
                session_affinity_seconds: svc.session_affinity_seconds,
                traffic_distribution: svc.traffic_distribution,
                load_balancer_class: svc.load_balancer_class.clone(),
                cilium: svc.cilium.on_node(node_labels),
            };
            services.insert(name, info);
        }
    }
    services
}

/// The endpoints of each Service port as kube-proxy on `node_name` sees
/// them in the slices of one family: one per address, a ready one kept
/// over a not-ready one.
fn endpoints_seen(
    slices: &[EndpointSlice],
    node_name: &str,
    family: IpFamily,
) -> BTreeMap<ServicePortName, Vec<EndpointInfo>> {
    let mut endpoints: BTreeMap<ServicePortName, BTreeMap<String, EndpointInfo>> = BTreeMap::new();
    for slice in slices.iter().filter(|s| s.family == family) {
        let svc_id = NamespacedName::new(slice.id.namespace.clone(), slice.service_name.clone());
        for port in &slice.ports {
            let name = ServicePortName {
                service: svc_id.clone(),
                port: port.name.clone(),
                protocol: port.protocol,
            };
            let entry = endpoints.entry(name).or_default();
            for ep in &slice.endpoints {
                let Some(ip) = ep.addresses.first() else {
                    continue;
                };
                let addr = SocketAddr::new(*ip, port.port);
                let info = EndpointInfo {
                    addr,
                    is_local: ep.node_name.as_deref() == Some(node_name),
                    ready: ep.ready,
                    serving: ep.serving,
                    terminating: ep.terminating,
                    node_name: ep.node_name.clone(),
                    zone: ep.zone.clone(),
                    pod: ep.target_pod.clone(),
                    hints: ep.hints.clone(),
                    weight: slice
                        .cilium_weight
                        .unwrap_or(crate::model::cilium::DEFAULT_WEIGHT),
                    more_addresses: ep.addresses.iter().skip(1).copied().collect(),
                };
                // The same endpoint in two slices (e.g. mid-update): kube-proxy
                // keeps one; prefer the one that is ready.
                let key = info.key();
                match entry.get(&key) {
                    Some(existing) if existing.ready || !info.ready => {}
                    _ => {
                        entry.insert(key, info);
                    }
                }
            }
        }
    }
    crate::util::order::map(
        endpoints
            .into_iter()
            .map(|(k, v)| (k, v.into_values().collect::<Vec<_>>())),
    )
}

pub fn loopback(family: IpFamily) -> IpAddr {
    match family {
        IpFamily::V4 => IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
        IpFamily::V6 => IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
    }
}

/// A Service's `loadBalancerSourceRanges` of one family. A zero-length
/// prefix (`0.0.0.0/0`) means "allow any", the same as no ranges, and ipset
/// could not hold it: kube-proxy drops the list (`newBaseServiceInfo`).
fn source_ranges(svc: &crate::model::Service, family: IpFamily) -> Vec<IpNet> {
    let ranges: Vec<IpNet> = svc
        .load_balancer_source_ranges
        .iter()
        .filter(|c| IpFamily::of(&c.addr()) == family)
        .copied()
        .collect();
    if ranges.iter().any(|r| r.prefix_len() == 0) {
        return Vec::new();
    }
    ranges
}

/// The slices a kube-proxy in `mode` reads. The userspace proxier read
/// v1.Endpoints only: what the Endpoints controller computes from selectors
/// and Endpoints written by hand (mirrored into slices here), never an
/// EndpointSlice written by hand.
pub fn slices_seen_by(
    mode: crate::model::Mode,
    slices: &[EndpointSlice],
) -> Cow<'_, [EndpointSlice]> {
    if mode != crate::model::Mode::Userspace {
        return Cow::Borrowed(slices);
    }
    Cow::Owned(
        slices
            .iter()
            .filter(|s| s.source != crate::model::SliceSource::Input)
            .cloned()
            .collect(),
    )
}
