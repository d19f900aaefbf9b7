//! Cilium's agent settings and the per-Service annotations it honours, as
//! typed values: what the `cilium-config` ConfigMap in `kube-system` and a
//! Service's `service.cilium.io/*` annotations say, read by
//! `model::lower::cilium`. The Cilium mode (`net::modes::cilium`) only
//! reads these; nothing here decides anything about packets.
//!
//! Defaults are the agent's own (cilium/cilium `pkg/loadbalancer/config.go`,
//! `pkg/maglev`, `pkg/kpr`), except one: without a `cilium-config`, kpv
//! assumes `kube-proxy-replacement: "true"`, since choosing this mode means
//! a cluster whose kube-proxy Cilium replaces.

use serde::Serialize;

/// How a frontend picks a backend (`bpf-lb-algorithm`, or the Service's
/// `service.cilium.io/lb-algorithm`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LbAlgorithm {
    #[default]
    Random,
    Maglev,
}

impl LbAlgorithm {
    pub fn parse(s: &str) -> Option<LbAlgorithm> {
        match s {
            "random" => Some(LbAlgorithm::Random),
            "maglev" => Some(LbAlgorithm::Maglev),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            LbAlgorithm::Random => "random",
            LbAlgorithm::Maglev => "maglev",
        }
    }
}

/// How traffic from outside reaches a backend on another node
/// (`bpf-lb-mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LbMode {
    /// The entry node SNATs the packet to itself: replies come back through it.
    #[default]
    Snat,
    /// Direct server return: the backend answers the client itself.
    Dsr,
    /// DSR for TCP, SNAT for everything else.
    Hybrid,
}

impl LbMode {
    pub fn parse(s: &str) -> Option<LbMode> {
        match s {
            "snat" => Some(LbMode::Snat),
            "dsr" => Some(LbMode::Dsr),
            "hybrid" => Some(LbMode::Hybrid),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            LbMode::Snat => "snat",
            LbMode::Dsr => "dsr",
            LbMode::Hybrid => "hybrid",
        }
    }
}

/// How a DSR packet carries the Service's address to the backend's node
/// (`bpf-lb-dsr-dispatch`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DsrDispatch {
    /// An IPv4 option / IPv6 extension header on the original packet.
    #[default]
    Opt,
    /// IP-in-IP encapsulation.
    Ipip,
    /// A Geneve tunnel option.
    Geneve,
}

impl DsrDispatch {
    pub fn parse(s: &str) -> Option<DsrDispatch> {
        match s {
            "opt" => Some(DsrDispatch::Opt),
            "ipip" => Some(DsrDispatch::Ipip),
            "geneve" => Some(DsrDispatch::Geneve),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            DsrDispatch::Opt => "opt",
            DsrDispatch::Ipip => "ipip",
            DsrDispatch::Geneve => "geneve",
        }
    }
}

/// The Maglev table sizes the agent accepts (`bpf-lb-maglev-table-size`).
pub const MAGLEV_TABLE_SIZES: [u32; 10] = [
    251, 509, 1021, 2039, 4093, 8191, 16381, 32749, 65521, 131071,
];

/// A backend's weight when its EndpointSlice names none.
pub const DEFAULT_WEIGHT: u16 = 100;

/// The agent's default `bpf-lb-maglev-hash-seed`.
pub const DEFAULT_MAGLEV_SEED: &str = "JLfvgnHc2kaSUFaI";

/// The agent's load-balancer settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CiliumConfig {
    /// A `cilium-config` ConfigMap was read (else these are the defaults).
    pub given: bool,
    /// `kube-proxy-replacement`: NodePort, LoadBalancer and the socket
    /// load balancer are Cilium's (else only ClusterIPs and externalIPs).
    pub kube_proxy_replacement: bool,
    pub algorithm: LbAlgorithm,
    /// `bpf-lb-algorithm-annotation`: honour `service.cilium.io/lb-algorithm`.
    pub algorithm_annotation: bool,
    pub mode: LbMode,
    /// `bpf-lb-mode-annotation`: honour `service.cilium.io/forwarding-mode`.
    pub mode_annotation: bool,
    pub dsr_dispatch: DsrDispatch,
    pub maglev_table_size: u32,
    /// The Murmur3 seed of the Maglev permutations: the first four bytes of
    /// the decoded `bpf-lb-maglev-hash-seed`, big-endian.
    pub maglev_seed: u32,
    /// `bpf-lb-sock`: translate at the socket (`connect()`, `sendmsg()`);
    /// always on with kube-proxy replacement.
    pub socket_lb: bool,
    /// `bpf-lb-sock-hostns-only`: the socket load balancer serves only the
    /// host's own processes; Pods' packets are translated per packet.
    pub socket_lb_hostns_only: bool,
    /// `enable-health-check-nodeport`.
    pub health_check_node_port: bool,
    /// `bpf-lb-external-clusterip`: a ClusterIP answers from outside too.
    pub external_clusterip: bool,
    /// `bpf-lb-source-range-all-types`: source ranges apply to every
    /// frontend, not only LoadBalancer ones.
    pub source_range_all_types: bool,
    /// `enable-service-topology`: topology hints and trafficDistribution
    /// narrow the backends.
    pub service_topology: bool,
    /// `bpf-lb-enable-wildcard-entries`: a ClusterIP or load-balancer
    /// address with no Service on a port drops the packet.
    pub wildcard_entries: bool,
    /// `node-port-range`.
    pub node_port_range: (u16, u16),
    /// `enable-external-ips`: a Service's externalIPs are frontends.
    pub external_ips: bool,
}

impl Default for CiliumConfig {
    fn default() -> Self {
        CiliumConfig {
            given: false,
            kube_proxy_replacement: true,
            algorithm: LbAlgorithm::Random,
            algorithm_annotation: false,
            mode: LbMode::Snat,
            mode_annotation: false,
            dsr_dispatch: DsrDispatch::Opt,
            maglev_table_size: 16381,
            maglev_seed: 0x24b7_ef82,
            socket_lb: true,
            socket_lb_hostns_only: false,
            health_check_node_port: true,
            external_clusterip: false,
            source_range_all_types: false,
            service_topology: false,
            wildcard_entries: true,
            node_port_range: super::DEFAULT_NODE_PORT_RANGE,
            external_ips: true,
        }
    }
}

/// A Service's frontends Cilium creates (`service.cilium.io/type`): only
/// this kind (externalIPs are not affected).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Exposure {
    ClusterIp,
    NodePort,
    LoadBalancer,
}

/// Where a Service is installed (`service.cilium.io/node` or
/// `service.cilium.io/node-selector`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum NodeExposure {
    /// Only on nodes whose label `service.cilium.io/node` has this value.
    Label(String),
    /// Only on nodes these requirements match (`key=value`, `key!=value`,
    /// `key`, `!key`, joined by commas).
    Selector(Vec<Requirement>),
}

/// One requirement of a node selector.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    Absent(String),
}

impl NodeExposure {
    /// Is the Service installed on a node with these labels?
    pub fn admits(&self, labels: &super::Labels) -> bool {
        match self {
            NodeExposure::Label(v) => labels.get(NODE_LABEL) == Some(v),
            NodeExposure::Selector(reqs) => reqs.iter().all(|r| match r {
                Requirement::Equals(k, v) => labels.get(k) == Some(v),
                Requirement::NotEquals(k, v) => labels.get(k) != Some(v),
                Requirement::Exists(k) => labels.contains_key(k),
                Requirement::Absent(k) => !labels.contains_key(k),
            }),
        }
    }
}

/// The node label `service.cilium.io/node` is compared with.
pub const NODE_LABEL: &str = "service.cilium.io/node";

/// The `service.cilium.io/*` annotations of one Service, valid values only
/// (an invalid one is warned about and, as in Cilium, has no effect).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CiliumService {
    /// `service.cilium.io/lb-algorithm` (honoured with
    /// `bpf-lb-algorithm-annotation`).
    pub algorithm: Option<LbAlgorithm>,
    /// `service.cilium.io/forwarding-mode`: DSR when true, SNAT when false
    /// (honoured with `bpf-lb-mode-annotation`).
    pub dsr: Option<bool>,
    pub exposure: Option<Exposure>,
    pub node: Option<NodeExposure>,
    /// `service.cilium.io/src-ranges-policy: deny`: the source ranges say
    /// who may not connect.
    pub source_ranges_deny: bool,
    /// `service.kubernetes.io/topology-mode` (or the older
    /// `topology-aware-hints`) set to anything but `disabled`: Cilium
    /// prefers the same zone, as for `trafficDistribution: PreferSameZone`.
    pub topology_annotation: bool,
}

impl CiliumService {
    /// What one node's agent takes from these annotations.
    pub fn on_node(&self, labels: &super::Labels) -> CiliumPort {
        CiliumPort {
            installed: self.node.as_ref().is_none_or(|n| n.admits(labels)),
            algorithm: self.algorithm,
            dsr: self.dsr,
            exposure: self.exposure,
            source_ranges_deny: self.source_ranges_deny,
            topology_annotation: self.topology_annotation,
        }
    }
}

/// A Service's annotations as one node's agent applies them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CiliumPort {
    /// The node is one the Service is exposed on (`service.cilium.io/node`,
    /// `node-selector`).
    pub installed: bool,
    pub algorithm: Option<LbAlgorithm>,
    pub dsr: Option<bool>,
    pub exposure: Option<Exposure>,
    pub source_ranges_deny: bool,
    pub topology_annotation: bool,
}
