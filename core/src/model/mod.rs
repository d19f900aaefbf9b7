//! Kubernetes objects as typed values, and the cluster they make up.
//!
//! [`parse`] turns YAML text into a [`Cluster`] plus diagnostics, filling in
//! what the API server would (Cluster IPs, NodePorts, Pod IPs) so that every
//! value here is complete and valid. Nothing in this module knows about
//! kube-proxy's modes.

pub mod cilium;
mod ip;
pub(crate) mod lower;
pub use lower::ASSUMED_POOLS;
pub mod packet;
pub mod routing;

pub use ip::{parse_cidr_sloppy, parse_ip_sloppy};
pub(crate) use lower::name_suffix;
pub use lower::{locate_diagnostics, parse, parse_files, Input, RoutingLowerer};

use crate::model::packet::{IpFamily, Protocol};
use ipnet::IpNet;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::IpAddr;

/// An object's labels (or annotations, or a selector): few, and read by
/// every view, so a [`crate::util::vecmap::VecMap`].
pub type Labels = crate::util::vecmap::VecMap<String, String>;

/// `namespace/name` of a namespaced object.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct NamespacedName {
    pub namespace: String,
    pub name: String,
}

impl NamespacedName {
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        NamespacedName {
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

impl std::fmt::Display for NamespacedName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// Kind of a node address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum NodeAddressKind {
    InternalIP,
    ExternalIP,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Node {
    pub name: String,
    pub labels: Labels,
    /// `status.addresses` that are IPs, in document order (the first InternalIP
    /// is the node's primary address).
    pub addresses: Vec<(NodeAddressKind, IpAddr)>,
    pub pod_cidrs: Vec<IpNet>,
    pub zone: Option<String>,
    /// `spec.taints`: which Pods the scheduler (and the DaemonSet controller)
    /// keep off this node.
    pub taints: Vec<Taint>,
    /// `spec.unschedulable` (cordoned): no new Pods, except DaemonSets'.
    pub unschedulable: bool,
    /// How many Pods fit: `status.allocatable.pods`, else
    /// `status.capacity.pods`, else the kubelet's default `maxPods` of 110.
    pub max_pods: u32,
    /// The Node object was given without `status.addresses`: the address
    /// kpv made up for it stands in for kube-proxy's modes, while Cilium,
    /// which takes NodePort addresses from the node's own, has none (as in
    /// Cilium's tests). False for nodes kpv assumed entirely: their made-up
    /// addresses stand for real ones.
    pub addresses_unstated: bool,
}

/// The kubelet's default `maxPods`.
pub const DEFAULT_MAX_PODS: u32 = 110;

/// A node taint: `key[=value]:effect`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Taint {
    pub key: String,
    pub value: String,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}

/// A Pod's toleration of taints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Toleration {
    /// Empty with `exists` = tolerate every taint.
    pub key: String,
    /// `operator: Exists` (any value), else `Equal`.
    pub exists: bool,
    pub value: String,
    /// Empty = every effect.
    pub effect: String,
}

impl Toleration {
    /// `ToleratesTaint` from k8s.io/api's helpers.
    pub fn tolerates(&self, t: &Taint) -> bool {
        (self.effect.is_empty() || self.effect == t.effect)
            && (self.key.is_empty() && self.exists || self.key == t.key)
            && (self.exists || self.value == t.value)
    }
}

impl Taint {
    /// Does this taint keep new Pods off the node (unless tolerated)?
    pub fn blocks_scheduling(&self) -> bool {
        self.effect == "NoSchedule" || self.effect == "NoExecute"
    }
}

impl Node {
    /// The node's primary IP of a family: its first InternalIP, else first address.
    pub fn primary_ip(&self, family: IpFamily) -> Option<IpAddr> {
        let of_family = |(_, ip): &&(NodeAddressKind, IpAddr)| IpFamily::of(ip) == family;
        self.addresses
            .iter()
            .filter(of_family)
            .find(|(k, _)| *k == NodeAddressKind::InternalIP)
            .or_else(|| self.addresses.iter().find(of_family))
            .map(|(_, ip)| *ip)
    }

    pub fn pod_cidr(&self, family: IpFamily) -> Option<IpNet> {
        self.pod_cidrs
            .iter()
            .find(|c| IpFamily::of(&c.addr()) == family)
            .copied()
    }
}

/// A port a named or numbered target port resolves against.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ContainerPort {
    pub name: Option<String>,
    pub port: u16,
    pub protocol: Protocol,
}

/// What a probe checks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum ProbeAction {
    HttpGet { path: String, port: PortRef },
    TcpSocket { port: PortRef },
    Exec { command: Vec<String> },
    Grpc { port: u16 },
}

/// A probe as written in a container spec, with Kubernetes' defaults filled in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Probe {
    pub action: ProbeAction,
    pub initial_delay_seconds: u32,
    pub period_seconds: u32,
    pub timeout_seconds: u32,
    pub success_threshold: u32,
    pub failure_threshold: u32,
}

impl Probe {
    /// The port name this probe gives that no port of `container` has: the
    /// kubelet cannot resolve it, so the probe fails on every run.
    pub fn unresolved_port<'a>(&'a self, container: &Container) -> Option<&'a str> {
        let name = match &self.action {
            ProbeAction::HttpGet {
                port: PortRef::Name(n),
                ..
            }
            | ProbeAction::TcpSocket {
                port: PortRef::Name(n),
            } => n,
            _ => return None,
        };
        (!container
            .ports
            .iter()
            .any(|cp| cp.name.as_deref() == Some(name.as_str())))
        .then_some(name.as_str())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Container {
    pub name: String,
    pub image: String,
    pub ports: Vec<ContainerPort>,
    pub readiness_probe: Option<Probe>,
    pub liveness_probe: Option<Probe>,
    /// `startupProbe`: until it succeeds, readiness and liveness are not
    /// probed (the container is not Started, so not Ready).
    pub startup_probe: Option<Probe>,
}

/// Readiness a Pod's status reported in the input, if it had a status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ReportedReady {
    /// No status given: readiness comes from the simulation.
    Unknown,
    Ready,
    NotReady,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Pod {
    pub id: NamespacedName,
    pub labels: Labels,
    pub node_name: Option<String>,
    pub ips: Vec<IpAddr>,
    pub containers: Vec<Container>,
    /// `metadata.deletionTimestamp` is set.
    pub terminating: bool,
    /// Phase Succeeded or Failed: never an endpoint.
    pub finished: bool,
    /// Phase Pending with no address in its status: not scheduled or not
    /// started yet, so kpv neither places it nor gives it an address, and it
    /// is no endpoint (a Pod written without status is placed and addressed).
    pub pending: bool,
    pub reported_ready: ReportedReady,
    /// The workload that made it (its name), when it was expanded from one
    /// or its `ownerReferences` name one.
    pub owner: Option<String>,
    /// `spec.tolerations` (for a workload's Pods, the template's).
    pub tolerations: Vec<Toleration>,
    /// `spec.hostname` and `spec.subdomain`: with a headless Service named
    /// like the subdomain, DNS answers `HOSTNAME.SUBDOMAIN.NS.svc…` with
    /// this Pod (a StatefulSet's Pods get their name and `serviceName`).
    pub hostname: Option<String>,
    pub subdomain: Option<String>,
    /// `spec.hostNetwork: true`: the Pod uses its node's network, so its
    /// address is its node's.
    pub host_network: bool,
    /// `spec.dnsPolicy` and `spec.dnsConfig`.
    pub dns: PodDns,
}

/// `spec.dnsPolicy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum DnsPolicy {
    #[default]
    ClusterFirst,
    ClusterFirstWithHostNet,
    /// The node's resolver settings.
    Default,
    /// Only what `dnsConfig` gives.
    None,
}

impl DnsPolicy {
    pub const ALL: [DnsPolicy; 4] = [
        DnsPolicy::ClusterFirstWithHostNet,
        DnsPolicy::ClusterFirst,
        DnsPolicy::Default,
        DnsPolicy::None,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DnsPolicy::ClusterFirst => "ClusterFirst",
            DnsPolicy::ClusterFirstWithHostNet => "ClusterFirstWithHostNet",
            DnsPolicy::Default => "Default",
            DnsPolicy::None => "None",
        }
    }
}

/// A Pod's DNS settings as written: the policy and `dnsConfig`'s additions
/// (options as `name` or `name:value`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PodDns {
    pub policy: DnsPolicy,
    pub nameservers: Vec<IpAddr>,
    pub searches: Vec<String>,
    pub options: Vec<(String, Option<String>)>,
}

impl Pod {
    pub fn readiness_probe(&self) -> Option<&Probe> {
        self.containers
            .iter()
            .find_map(|c| c.readiness_probe.as_ref())
    }

    /// Resolve a Service's target port against this Pod's containers.
    pub fn resolve_port(&self, target: &PortRef, protocol: Protocol) -> Option<u16> {
        match target {
            PortRef::Number(n) => Some(*n),
            PortRef::Name(name) => self
                .containers
                .iter()
                .flat_map(|c| c.ports.iter())
                .find(|p| p.name.as_deref() == Some(name.as_str()) && p.protocol == protocol)
                .map(|p| p.port),
        }
    }
}

/// The controllers that create Pods from a template.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum WorkloadKind {
    Deployment,
    ReplicaSet,
    StatefulSet,
    DaemonSet,
    Job,
}

impl WorkloadKind {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadKind::Deployment => "Deployment",
            WorkloadKind::ReplicaSet => "ReplicaSet",
            WorkloadKind::StatefulSet => "StatefulSet",
            WorkloadKind::DaemonSet => "DaemonSet",
            WorkloadKind::Job => "Job",
        }
    }
}

/// A Deployment, ReplicaSet, StatefulSet, DaemonSet or Job, and the Pods
/// its controller asks for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Workload {
    pub kind: WorkloadKind,
    pub id: NamespacedName,
    /// `spec.replicas` (Deployment, ReplicaSet, StatefulSet), a Job's
    /// running Pods (`parallelism`, at most `completions`); for a DaemonSet
    /// the number of nodes it runs on, known once Nodes are complete.
    pub replicas: u32,
    pub selector: Labels,
    pub template_labels: Labels,
    pub containers: Vec<Container>,
    /// `spec.template.spec.tolerations`.
    pub tolerations: Vec<Toleration>,
    /// A StatefulSet's `spec.serviceName` (its Pods' DNS subdomain).
    pub service_name: Option<String>,
    /// `metadata.ownerReferences[0]` as `Kind/name` (a Deployment's
    /// ReplicaSet names its Deployment).
    pub owned_by: Option<String>,
    /// `spec.template.spec.hostNetwork`.
    pub host_network: bool,
    /// `spec.template.spec.dnsPolicy` and `dnsConfig`.
    pub dns: PodDns,
}

/// A port given by number or by container-port name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum PortRef {
    Number(u16),
    Name(String),
}

impl std::fmt::Display for PortRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PortRef::Number(n) => write!(f, "{n}"),
            PortRef::Name(s) => f.write_str(s),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ServiceType {
    ClusterIP,
    NodePort,
    LoadBalancer,
    ExternalName,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum TrafficPolicy {
    #[default]
    Cluster,
    Local,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ServicePort {
    /// Empty when the Service has a single unnamed port.
    pub name: String,
    pub protocol: Protocol,
    pub port: u16,
    pub target_port: PortRef,
    pub node_port: Option<u16>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Service {
    pub id: NamespacedName,
    pub service_type: ServiceType,
    /// Empty for headless (`clusterIP: None`) and ExternalName Services.
    pub cluster_ips: Vec<IpAddr>,
    pub headless: bool,
    /// `None` for a Service without selector (its endpoints come from
    /// Endpoints or EndpointSlices written by hand).
    pub selector: Option<Labels>,
    pub ports: Vec<ServicePort>,
    pub external_ips: Vec<IpAddr>,
    /// `status.loadBalancer.ingress` addresses with `ipMode: VIP` (the
    /// default): traffic can arrive addressed to them, and kube-proxy
    /// captures it.
    pub load_balancer_ips: Vec<IpAddr>,
    /// Addresses with `ipMode: Proxy`: the load balancer's own, which it
    /// proxies to the nodes; kube-proxy writes no rule for them.
    pub load_balancer_proxy_ips: Vec<IpAddr>,
    /// The load-balancer address was not written in the status but given
    /// by kpv's assumed cloud controller (`model::lower::cloud`).
    pub load_balancer_assumed: bool,
    pub load_balancer_source_ranges: Vec<IpNet>,
    pub external_traffic_policy: TrafficPolicy,
    pub internal_traffic_policy: TrafficPolicy,
    pub health_check_node_port: Option<u16>,
    /// `sessionAffinity: ClientIP` with its timeout in seconds.
    pub session_affinity_seconds: Option<u32>,
    pub publish_not_ready_addresses: bool,
    pub external_name: Option<String>,
    pub traffic_distribution: Option<TrafficDistribution>,
    /// `spec.loadBalancerClass`: which load-balancer implementation serves it.
    pub load_balancer_class: Option<String>,
    /// Its `service.cilium.io/*` annotations (shared: a cluster is cloned
    /// often and they never change after lowering).
    pub cilium: std::sync::Arc<cilium::CiliumService>,
}

impl Service {
    /// Every address of the Service's load balancer, whatever its ipMode.
    pub fn load_balancer_addresses(&self) -> impl Iterator<Item = &IpAddr> {
        self.load_balancer_ips
            .iter()
            .chain(&self.load_balancer_proxy_ips)
    }

    /// Does the Service have externally reachable addresses (NodePort, LB, externalIPs)?
    pub fn externally_accessible(&self) -> bool {
        matches!(
            self.service_type,
            ServiceType::NodePort | ServiceType::LoadBalancer
        ) || !self.external_ips.is_empty()
    }
}

/// One endpoint of an EndpointSlice, with its conditions resolved
/// (`ready` nil = true, `serving` nil = true, `terminating` nil = false).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Endpoint {
    pub addresses: Vec<IpAddr>,
    pub ready: bool,
    pub serving: bool,
    pub terminating: bool,
    pub node_name: Option<String>,
    pub zone: Option<String>,
    /// The Pod behind it, when known.
    pub target_pod: Option<NamespacedName>,
    /// Where kube-proxy should prefer it (`hints`), empty when not hinted.
    pub hints: Hints,
    /// `hostname`: the name cluster DNS gives this endpoint under its
    /// Service (the EndpointSlice controller sets a Pod's `spec.hostname`
    /// when its `spec.subdomain` names the Service).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
}

/// An endpoint's topology hints: the zones (`hints.forZones`) and nodes
/// (`hints.forNodes`) whose kube-proxy should use it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Hints {
    pub for_zones: Vec<String>,
    pub for_nodes: Vec<String>,
}

/// `spec.trafficDistribution`: the EndpointSlice controller hints every
/// ready endpoint for its own zone (and, for `PreferSameNode`, its node).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum TrafficDistribution {
    PreferClose,
    PreferSameZone,
    PreferSameNode,
}

impl TrafficDistribution {
    pub fn parse(s: &str) -> Option<TrafficDistribution> {
        match s {
            "PreferClose" => Some(TrafficDistribution::PreferClose),
            "PreferSameZone" => Some(TrafficDistribution::PreferSameZone),
            "PreferSameNode" => Some(TrafficDistribution::PreferSameNode),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct EndpointPort {
    pub name: String,
    pub port: u16,
    pub protocol: Protocol,
}

/// Who wrote an EndpointSlice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SliceSource {
    /// The EndpointSlice controller, from the Service's selector.
    Controller,
    /// The mirroring controller, from a legacy Endpoints object.
    Mirrored,
    /// Given as-is in the input.
    Input,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EndpointSlice {
    pub id: NamespacedName,
    pub service_name: String,
    pub family: IpFamily,
    pub endpoints: Vec<Endpoint>,
    pub ports: Vec<EndpointPort>,
    pub source: SliceSource,
    /// `service.cilium.io/weight`: the weight Cilium gives its endpoints
    /// (0: in maintenance, no traffic); `None` when not annotated.
    pub cilium_weight: Option<u16>,
}

/// kube-proxy's data-plane mode.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Userspace,
    #[default]
    Iptables,
    Ipvs,
    Nftables,
    /// Cilium's kube-proxy replacement: eBPF programs and maps instead of
    /// kube-proxy.
    Cilium,
}

impl Mode {
    pub const ALL: [Mode; 5] = [
        Mode::Userspace,
        Mode::Iptables,
        Mode::Ipvs,
        Mode::Nftables,
        Mode::Cilium,
    ];

    /// How many modes there are: the length of tables kept per mode.
    pub const COUNT: usize = Mode::ALL.len();

    /// The mode's place in [`Mode::ALL`], for tables kept per mode.
    pub const fn index(self) -> usize {
        match self {
            Mode::Userspace => 0,
            Mode::Iptables => 1,
            Mode::Ipvs => 2,
            Mode::Nftables => 3,
            Mode::Cilium => 4,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Userspace => "userspace",
            Mode::Iptables => "iptables",
            Mode::Ipvs => "ipvs",
            Mode::Nftables => "nftables",
            Mode::Cilium => "cilium",
        }
    }

    pub fn parse(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

/// IPVS schedulers kube-proxy can ask the kernel for.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Scheduler {
    #[default]
    Rr,
    Wrr,
    Lc,
    Wlc,
    Sh,
    Dh,
    Sed,
    Nq,
    Mh,
}

impl Scheduler {
    pub const ALL: [Scheduler; 9] = [
        Scheduler::Rr,
        Scheduler::Wrr,
        Scheduler::Lc,
        Scheduler::Wlc,
        Scheduler::Sh,
        Scheduler::Dh,
        Scheduler::Sed,
        Scheduler::Nq,
        Scheduler::Mh,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scheduler::Rr => "rr",
            Scheduler::Wrr => "wrr",
            Scheduler::Lc => "lc",
            Scheduler::Wlc => "wlc",
            Scheduler::Sh => "sh",
            Scheduler::Dh => "dh",
            Scheduler::Sed => "sed",
            Scheduler::Nq => "nq",
            Scheduler::Mh => "mh",
        }
    }

    pub fn parse(s: &str) -> Option<Scheduler> {
        Scheduler::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

/// How kube-proxy tells traffic from this cluster's Pods apart.
/// (`BridgeInterface` and `InterfaceNamePrefix` match the interface a
/// packet came in on, which for kpv's packets is "from a Pod of this
/// node": they are read as `NodeCidr`, with a warning.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum DetectLocalMode {
    #[default]
    ClusterCidr,
    NodeCidr,
}

/// The fields of `KubeProxyConfiguration` that change the rules.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProxyConfig {
    pub mode: Mode,
    pub hostname_override: Option<String>,
    pub cluster_cidrs: Vec<IpNet>,
    pub detect_local_mode: DetectLocalMode,
    /// CIDRs, or `primary` (`None` in this list = "primary").
    pub node_port_addresses: Vec<NodePortAddress>,
    pub iptables_masquerade_all: bool,
    pub iptables_localhost_nodeports: bool,
    pub iptables_masquerade_bit: u8,
    pub ipvs_scheduler: Scheduler,
    pub nftables_masquerade_all: bool,
    /// nftables mode's own mark bit (`nftables.masqueradeBit`): kube-proxy
    /// hands this one, not the iptables one, to the nftables proxier.
    pub nftables_masquerade_bit: u8,
    /// The mode's `minSyncPeriod` in milliseconds, when given: how long
    /// after a change kube-proxy writes the rules (1 s by default).
    pub min_sync_period_ms: Option<u64>,
    /// `portRange` (userspace mode's proxy ports), when given; else the
    /// kernel picks from its ephemeral range.
    pub port_range: Option<(u16, u16)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum NodePortAddress {
    Primary,
    Cidr(IpNet),
}

impl Default for ProxyConfig {
    fn default() -> Self {
        ProxyConfig {
            mode: Mode::Iptables,
            hostname_override: None,
            cluster_cidrs: Vec::new(),
            detect_local_mode: DetectLocalMode::ClusterCidr,
            node_port_addresses: Vec::new(),
            iptables_masquerade_all: false,
            iptables_localhost_nodeports: true,
            iptables_masquerade_bit: 14,
            ipvs_scheduler: Scheduler::Rr,
            nftables_masquerade_all: false,
            nftables_masquerade_bit: 14,
            min_sync_period_ms: None,
            port_range: None,
        }
    }
}

/// Everything the input describes, complete and validated, in stable order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Cluster {
    pub nodes: Vec<Node>,
    pub pods: Vec<Pod>,
    /// Deployments, ReplicaSets, StatefulSets, DaemonSets and Jobs.
    pub workloads: Vec<Workload>,
    pub services: Vec<Service>,
    /// Slices given in the input or mirrored from Endpoints. Slices of
    /// selector Services are computed by [`crate::net::controller`].
    pub endpoint_slices: Vec<EndpointSlice>,
    pub service_cidrs: Vec<IpNet>,
    pub proxy: ProxyConfig,
    /// Was a KubeProxyConfiguration given?
    pub proxy_config_given: bool,
    /// The API server's `--service-node-port-range` when a kubeadm
    /// ClusterConfiguration sets it; `None` = the default 30000–32767.
    pub node_port_range: Option<(u16, u16)>,
    /// Cilium's agent settings (`kube-system/cilium-config`).
    pub cilium: cilium::CiliumConfig,
    /// Ingresses, Gateways, routes and what they refer to ([`crate::http`]).
    /// Shared: a cluster is cloned often (each HTTP preparation, each
    /// replay) and its routing objects never change after lowering.
    pub routing: std::sync::Arc<routing::RoutingObjects>,
}

/// The API server's default `--service-node-port-range`.
pub const DEFAULT_NODE_PORT_RANGE: (u16, u16) = (30000, 32767);

/// The kernel's default `net.ipv4.ip_local_port_range`: where a socket
/// bound to port 0 gets its port (the userspace proxier's listeners).
pub const EPHEMERAL_PORT_RANGE: (u16, u16) = (32768, 60999);

impl Cluster {
    /// The NodePort range Services' nodePorts must be in.
    pub fn node_port_range(&self) -> (u16, u16) {
        self.node_port_range.unwrap_or(DEFAULT_NODE_PORT_RANGE)
    }

    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.name == name)
    }

    pub fn service(&self, id: &NamespacedName) -> Option<&Service> {
        self.services.iter().find(|s| &s.id == id)
    }

    pub fn pod(&self, id: &NamespacedName) -> Option<&Pod> {
        self.pods.iter().find(|p| &p.id == id)
    }

    /// The node whose kube-proxy we model: `hostnameOverride`, else the first.
    pub fn proxy_node(&self) -> Option<&Node> {
        match &self.proxy.hostname_override {
            Some(h) => self.node(h),
            None => self.nodes.first(),
        }
    }
}

/// Does `selector` select objects with `labels`? (An empty selector selects nothing
/// for a Service, as in Kubernetes.)
pub fn selects(selector: &Labels, labels: &Labels) -> bool {
    !selector.is_empty() && selector.iter().all(|(k, v)| labels.get(k) == Some(v))
}
