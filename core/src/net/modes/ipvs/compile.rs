//! ProxyInput → typed IPVS state: the `kube-ipvs0` addresses, virtual and
//! real servers, ipsets and iptables glue, as one `syncProxyRules` of
//! kube-proxy's IPVS proxier would leave them on a fresh node.
//!
//! Endpoint choice is [`ProxyInput::categorize`]'s; this module only applies
//! kube-proxy's IPVS-specific use of it (`syncEndpoint`): a Local policy with
//! no local endpoint falls back to the cluster endpoints (kubernetes#97081).
//!
//! Never: look at the raw cluster model, emit text, or depend on HashMap order.

use super::glue::{CtState, Match, Rule, Table, Target};
use super::ipset::{Dir, Entry, IpSet, SetId};
use crate::model::packet::{IpFamily, Protocol};
use crate::model::{Scheduler, ServiceType};
use crate::net::proxy::{
    categorize_endpoints, EndpointInfo, LocalDetector, ProxyInput, ServicePortInfo, ServicePortName,
};
use ipnet::IpNet;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, SocketAddr};

/// `kube-ipvs0`.
pub const DUMMY_DEVICE: &str = "kube-ipvs0";
/// `IP_VS_SVC_F_PERSISTENT`.
pub const FLAG_PERSISTENT: u32 = 0x1;
/// `IP_VS_SVC_F_HASHED`: set by the kernel on every service it holds.
pub const FLAG_HASHED: u32 = 0x2;
/// kube-proxy's `FlagSourceHash` = `IP_VS_SVC_F_SCHED2` (`mh-port` for mh).
pub const FLAG_SCHED2: u32 = 0x10;
/// The API server's default `sessionAffinityConfig.clientIP.timeoutSeconds`.
pub const DEFAULT_AFFINITY_SECONDS: u32 = 10800;

/// Why a virtual server exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum VsKind {
    ClusterIp,
    ExternalIp,
    LoadBalancer,
    NodePort,
}

/// A real server (IPVS destination), always masquerade-forwarded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RealServer {
    pub addr: SocketAddr,
    pub weight: i32,
}

/// An IPVS virtual server as kube-proxy creates it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VirtualServer {
    pub kind: VsKind,
    pub service: ServicePortName,
    pub address: IpAddr,
    pub port: u16,
    pub protocol: Protocol,
    pub scheduler: Scheduler,
    /// kube-proxy's flags (`FLAG_PERSISTENT`, `FLAG_SCHED2`), without the
    /// kernel's `FLAG_HASHED`.
    pub flags: u32,
    /// Persistence timeout in seconds (0 when not persistent).
    pub timeout: u32,
    /// In the kernel's list order: most recently added first. kube-proxy
    /// adds endpoints in its (sorted) endpoint order, so this is that order
    /// reversed.
    pub real_servers: Vec<RealServer>,
    /// A Local traffic policy applies to this VS.
    pub local_policy: bool,
    /// Local policy, no local endpoint: the cluster endpoints were used.
    pub local_fallback: bool,
}

impl VirtualServer {
    /// `TCP 10.96.0.10:8080`, `TCP [fd00::a]:8080`: the key of NodeState.
    pub fn key(&self) -> String {
        format!(
            "{} {}",
            self.protocol.as_upper(),
            SocketAddr::new(self.address, self.port)
        )
    }

    pub fn persistent(&self) -> bool {
        self.flags & FLAG_PERSISTENT != 0
    }
}

/// The dummy interface holding every address IPVS must accept traffic for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Interface {
    pub name: String,
    /// Bound as /32 (/128); sorted.
    pub addresses: Vec<IpAddr>,
}

/// One node's IPVS-mode state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ruleset {
    pub family: IpFamily,
    pub interface: Interface,
    /// Sorted as `ipvsadm -Ln` lists them (protocol number, address, port).
    pub virtual_servers: Vec<VirtualServer>,
    pub sets: BTreeMap<SetId, IpSet>,
    /// In kube-proxy's generation order (built-in chain jumps first).
    pub rules: Vec<Rule>,
    /// The node's addresses of this family (`GetAllLocalAddressesExcept`).
    pub node_addresses: BTreeSet<IpAddr>,
    pub masquerade_mark: u32,
}

pub(crate) fn proto_number(p: Protocol) -> u8 {
    match p {
        Protocol::Tcp => 6,
        Protocol::Udp => 17,
        Protocol::Sctp => 132,
    }
}

fn usable_node_address(ip: &IpAddr, family: IpFamily) -> bool {
    IpFamily::of(ip) == family
        && !ip.is_loopback()
        && match ip {
            IpAddr::V6(v6) => (v6.segments()[0] & 0xffc0) != 0xfe80,
            IpAddr::V4(_) => true,
        }
}

/// kube-proxy's `clusterEndpoints` and `localEndpoints` for a Service port.
///
/// The shared [`crate::net::proxy::Categorized`] leaves `cluster` empty for
/// internal+external Local policies, while kube-proxy's
/// `UsesClusterEndpoints()` is `!internalLocal || ExternallyAccessible()`;
/// IPVS's Local fallback needs those cluster endpoints, so they are computed
/// with the same function for that one case.
fn selection(
    svc: &ServicePortInfo,
    eps: &[EndpointInfo],
    topo: Option<crate::net::proxy::Topology<'_>>,
) -> Selection {
    // What `ProxyInput::categorize` returns for this Service port.
    let cat = categorize_endpoints(svc, eps, topo);
    let to_addrs = |idx: &[usize]| -> Vec<SocketAddr> {
        idx.iter()
            .filter_map(|&i| eps.get(i))
            .map(|e| e.addr)
            .collect()
    };
    let cluster = match &cat.cluster {
        Some(c) => to_addrs(c),
        None if svc.externally_accessible() => {
            let mut as_cluster = svc.clone();
            as_cluster.internal_policy_local = false;
            as_cluster.external_policy_local = false;
            to_addrs(
                categorize_endpoints(&as_cluster, eps, topo)
                    .cluster
                    .as_deref()
                    .unwrap_or(&[]),
            )
        }
        None => Vec::new(),
    };
    let local = cat.local.as_deref().map(to_addrs).unwrap_or_default();
    Selection { cluster, local }
}

struct Selection {
    cluster: Vec<SocketAddr>,
    local: Vec<SocketAddr>,
}

impl Selection {
    /// `syncEndpoint`'s choice: (endpoints, fell back to cluster endpoints).
    fn for_vs(&self, only_local: bool) -> (Vec<SocketAddr>, bool) {
        if only_local {
            if !self.local.is_empty() {
                (self.local.clone(), false)
            } else {
                (self.cluster.clone(), true)
            }
        } else {
            (self.cluster.clone(), false)
        }
    }
}

struct Builder {
    scheduler: Scheduler,
    sets: BTreeMap<SetId, IpSet>,
    vss: BTreeMap<(u8, IpAddr, u16), VirtualServer>,
    bound: BTreeSet<IpAddr>,
    /// LB ip:port without node access (`lbNoNodeAccessIPPortProtocolEntries`).
    no_node_access: Vec<(IpAddr, Protocol, u16)>,
}

impl Builder {
    /// A LoadBalancer address `lb` of a Service port: its ipset entries
    /// (with the source ranges, and whether the node itself may connect)
    /// and its virtual server.
    fn load_balancer(
        &mut self,
        svc: &ServicePortInfo,
        lb: IpAddr,
        sel: &Selection,
        node_ip: IpAddr,
    ) {
        let proto = svc.name.protocol;
        let e = Entry::IpPort(lb, proto, svc.port);
        self.add(SetId::LoadBalancer, e);
        if svc.external_policy_local {
            self.add(SetId::LoadBalancerLocal, e);
        }
        if !svc.load_balancer_source_ranges.is_empty() {
            self.add(SetId::LoadBalancerFw, e);
            let mut allow_from_node = false;
            for cidr in &svc.load_balancer_source_ranges {
                self.add(
                    SetId::LoadBalancerSourceCidr,
                    Entry::IpPortNet(lb, proto, svc.port, *cidr),
                );
                if cidr.contains(&node_ip) {
                    allow_from_node = true;
                }
            }
            if allow_from_node {
                self.add(
                    SetId::LoadBalancerSourceIp,
                    Entry::IpPortIp(lb, proto, svc.port, lb),
                );
            } else {
                self.no_node_access.push((lb, proto, svc.port));
            }
        }
        self.vs(
            VsKind::LoadBalancer,
            svc,
            lb,
            svc.port,
            svc.external_policy_local,
            sel,
        );
    }

    /// A Service port's NodePort: its ipset entries (a port, or with SCTP
    /// each node address and the port) and a virtual server per node
    /// address.
    fn node_port(&mut self, svc: &ServicePortInfo, node_ips: &[IpAddr], sel: &Selection) {
        let proto = svc.name.protocol;
        let (set, local_set) = match proto {
            Protocol::Tcp => (SetId::NodePortTcp, SetId::NodePortLocalTcp),
            Protocol::Udp => (SetId::NodePortUdp, SetId::NodePortLocalUdp),
            Protocol::Sctp => (SetId::NodePortSctp, SetId::NodePortLocalSctp),
        };
        let entries: Vec<Entry> = match proto {
            Protocol::Sctp => node_ips
                .iter()
                .map(|ip| Entry::IpPort(*ip, proto, svc.node_port))
                .collect(),
            _ => vec![Entry::Port(svc.node_port)],
        };
        for e in &entries {
            self.add(set, *e);
            if svc.external_policy_local {
                self.add(local_set, *e);
            }
        }
        for &ip in node_ips {
            self.vs(
                VsKind::NodePort,
                svc,
                ip,
                svc.node_port,
                svc.external_policy_local,
                sel,
            );
        }
    }

    fn add(&mut self, set: SetId, e: Entry) {
        if let Some(s) = self.sets.get_mut(&set) {
            s.members.insert(e);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn vs(
        &mut self,
        kind: VsKind,
        svc: &ServicePortInfo,
        address: IpAddr,
        port: u16,
        only_local: bool,
        sel: &Selection,
    ) {
        let mut flags = 0;
        let mut timeout = 0;
        if let Some(secs) = svc.session_affinity_seconds {
            flags |= FLAG_PERSISTENT;
            timeout = if secs == 0 {
                DEFAULT_AFFINITY_SECONDS
            } else {
                secs
            };
        }
        if self.scheduler == Scheduler::Mh {
            flags |= FLAG_SCHED2;
        }
        let (eps, fallback) = sel.for_vs(only_local);
        // Added one by one in kube-proxy's order, each prepended by the kernel.
        let real_servers = eps
            .iter()
            .rev()
            .map(|a| RealServer {
                addr: *a,
                weight: 1,
            })
            .collect();
        let protocol = svc.name.protocol;
        // The same VS twice (an externalIP equal to a node IP with the same
        // port...): the later sync of it wins, as in kube-proxy.
        self.vss.insert(
            (proto_number(protocol), address, port),
            VirtualServer {
                kind,
                service: svc.name.clone(),
                address,
                port,
                protocol,
                scheduler: self.scheduler,
                flags,
                timeout,
                real_servers,
                local_policy: only_local,
                local_fallback: only_local && fallback,
            },
        );
    }
}

/// Compile one node's IPVS state.
pub fn build(input: &ProxyInput, scheduler: Scheduler) -> Ruleset {
    let family = input.family;
    let node_addresses: BTreeSet<IpAddr> = crate::util::order::set(
        input
            .node
            .ips
            .iter()
            .filter(|ip| usable_node_address(ip, family))
            .copied(),
    );
    let node_ips = node_port_addresses(input, &node_addresses);
    let mut b = Builder {
        scheduler,
        sets: crate::util::order::map(SetId::ALL.iter().map(|&id| (id, IpSet::new(id, family)))),
        vss: BTreeMap::new(),
        bound: BTreeSet::new(),
        no_node_access: Vec::new(),
    };

    for (name, svc, svc_eps) in input.services_with_endpoints() {
        let Some(cluster_ip) = svc.cluster_ip else {
            continue;
        };
        if IpFamily::of(&cluster_ip) != family {
            continue;
        }
        let proto = name.protocol;
        // KUBE-LOOP-BACK: every local endpoint, whatever its conditions.
        for ep in svc_eps {
            if ep.is_local && IpFamily::of(&ep.addr.ip()) == family {
                b.add(
                    SetId::LoopBack,
                    Entry::IpPortIp(ep.addr.ip(), proto, ep.addr.port(), ep.addr.ip()),
                );
            }
        }
        b.add(SetId::ClusterIp, Entry::IpPort(cluster_ip, proto, svc.port));
        let sel = selection(svc, svc_eps, input.topology());

        b.vs(
            VsKind::ClusterIp,
            svc,
            cluster_ip,
            svc.port,
            svc.internal_policy_local,
            &sel,
        );
        b.bound.insert(cluster_ip);

        for &eip in &svc.external_ips {
            let e = Entry::IpPort(eip, proto, svc.port);
            if svc.external_policy_local {
                b.add(SetId::ExternalIpLocal, e);
            } else {
                b.add(SetId::ExternalIp, e);
            }
            b.vs(
                VsKind::ExternalIp,
                svc,
                eip,
                svc.port,
                svc.external_policy_local,
                &sel,
            );
            if !node_addresses.contains(&eip) {
                b.bound.insert(eip);
            }
        }

        for &lb in &svc.load_balancer_ips {
            b.load_balancer(svc, lb, &sel, input.node.primary_ip);
            if !node_addresses.contains(&lb) {
                b.bound.insert(lb);
            }
        }

        if svc.node_port != 0 {
            if node_ips.is_empty() {
                continue; // kube-proxy skips the rest of this service port
            }
            b.node_port(svc, &node_ips, &sel);
        }

        // HealthCheckNodePort() is only set when NeedsHealthCheck():
        // type LoadBalancer with externalTrafficPolicy Local.
        if svc.health_check_node_port != 0
            && svc.service_type == ServiceType::LoadBalancer
            && svc.external_policy_local
        {
            b.add(
                SetId::HealthCheckNodePort,
                Entry::Port(svc.health_check_node_port),
            );
        }
    }

    let bound: Vec<IpAddr> = b.bound.iter().copied().collect();
    for ip in &bound {
        b.add(SetId::IpvsIps, Entry::Ip(*ip));
    }
    let rules = glue_rules(input, &b.sets, &b.no_node_access);
    Ruleset {
        family,
        interface: Interface {
            name: DUMMY_DEVICE.to_string(),
            addresses: bound,
        },
        virtual_servers: b.vss.into_values().collect(),
        sets: b.sets,
        rules,
        node_addresses,
        masquerade_mark: input.masquerade_mark(),
    }
}

/// The node addresses NodePort virtual servers are made for: the
/// `nodePortAddresses` of the family (loopback excepted), else every
/// usable node address.
fn node_port_addresses(input: &ProxyInput, node_addresses: &BTreeSet<IpAddr>) -> Vec<IpAddr> {
    match &input.node_port_ips {
        None => node_addresses.iter().copied().collect(),
        Some(list) => {
            let s: BTreeSet<IpAddr> = crate::util::order::set(
                list.iter()
                    .filter(|ip| IpFamily::of(ip) == input.family && !ip.is_loopback())
                    .copied(),
            );
            s.into_iter().collect()
        }
    }
}

fn comment(s: &str) -> Match {
    Match::Comment(s.to_string())
}

fn set(id: SetId, dirs: &[Dir]) -> Match {
    Match::Set {
        set: id,
        dirs: dirs.to_vec(),
    }
}

/// `ipsetWithIptablesChain`: set, table, chain, target, directions, `-p`.
type SetChainRule = (
    SetId,
    Table,
    &'static str,
    Target,
    &'static [Dir],
    Option<Protocol>,
);

const DD: &[Dir] = &[Dir::Dst, Dir::Dst];
const DDS: &[Dir] = &[Dir::Dst, Dir::Dst, Dir::Src];
const D: &[Dir] = &[Dir::Dst];

/// `createAndLinkKubeChain` jumps + `writeIptablesRules`, in order.
fn glue_rules(
    input: &ProxyInput,
    sets: &BTreeMap<SetId, IpSet>,
    no_node_access: &[(IpAddr, Protocol, u16)],
) -> Vec<Rule> {
    let mut r: Vec<Rule> = Vec::new();
    builtin_jumps(&mut r);
    loopback_return(input, &mut r);
    set_chain_rules(sets, &mut r);
    service_rules(input, sets, &mut r);
    filter_rules(input, sets, no_node_access, &mut r);
    postrouting_rules(input, &mut r);
    r
}

/// Does the set `id` have members (kube-proxy writes a set's rules only
/// then)?
fn nonempty(sets: &BTreeMap<SetId, IpSet>, id: SetId) -> bool {
    sets.get(&id).is_some_and(|s| !s.members.is_empty())
}

fn jump(c: &str) -> Target {
    Target::Jump(c.to_string())
}

/// The jumps from the built-in chains into kube-proxy's.
fn builtin_jumps(r: &mut Vec<Rule>) {
    use Table::{Filter, Nat};
    // Jumps from the built-in chains, each prepended (EnsureRule Prepend) in
    // iptablesJumpChain order, so the last one listed for a chain is first.
    let jumps: [(Table, &str, &str, &str); 9] = [
        (Nat, "OUTPUT", "KUBE-SERVICES", "kubernetes service portals"),
        (
            Nat,
            "PREROUTING",
            "KUBE-SERVICES",
            "kubernetes service portals",
        ),
        (
            Nat,
            "POSTROUTING",
            "KUBE-POSTROUTING",
            "kubernetes postrouting rules",
        ),
        (
            Filter,
            "FORWARD",
            "KUBE-FORWARD",
            "kubernetes forwarding rules",
        ),
        (
            Filter,
            "INPUT",
            "KUBE-NODE-PORT",
            "kubernetes health check rules",
        ),
        (
            Filter,
            "INPUT",
            "KUBE-PROXY-FIREWALL",
            "kube-proxy firewall rules",
        ),
        (
            Filter,
            "FORWARD",
            "KUBE-PROXY-FIREWALL",
            "kube-proxy firewall rules",
        ),
        (
            Filter,
            "INPUT",
            "KUBE-IPVS-FILTER",
            "kubernetes ipvs access filter",
        ),
        (
            Filter,
            "OUTPUT",
            "KUBE-IPVS-OUT-FILTER",
            "kubernetes ipvs access filter",
        ),
    ];
    for (t, from, to, c) in jumps.iter().rev() {
        r.push(Rule::new(*t, from, vec![comment(c)], jump(to)));
    }
}

/// Traffic from the loopback net is not a Service's.
fn loopback_return(input: &ProxyInput, r: &mut Vec<Rule>) {
    let loopback: IpNet = match input.family {
        IpFamily::V4 => "127.0.0.0/8",
        IpFamily::V6 => "::1/128",
    }
    .parse()
    .unwrap_or_else(|_| IpNet::from(crate::net::proxy::loopback(input.family)));
    r.push(Rule::new(
        Table::Nat,
        "KUBE-SERVICES",
        vec![Match::Source {
            net: loopback,
            negate: false,
        }],
        Target::Return,
    ));
}

/// `ipsetWithIptablesChain`: one rule per non-empty set.
fn set_chain_rules(sets: &BTreeMap<SetId, IpSet>, r: &mut Vec<Rule>) {
    use Table::{Filter, Nat};
    let with_chain: [SetChainRule; 12] = [
        (
            SetId::LoopBack,
            Nat,
            "KUBE-POSTROUTING",
            Target::Masquerade {
                random_fully: false,
            },
            DDS,
            None,
        ),
        (
            SetId::LoadBalancer,
            Nat,
            "KUBE-SERVICES",
            jump("KUBE-LOAD-BALANCER"),
            DD,
            None,
        ),
        (
            SetId::LoadBalancerLocal,
            Nat,
            "KUBE-LOAD-BALANCER",
            Target::Return,
            DD,
            None,
        ),
        (
            SetId::NodePortLocalTcp,
            Nat,
            "KUBE-NODE-PORT",
            Target::Return,
            D,
            Some(Protocol::Tcp),
        ),
        (
            SetId::NodePortTcp,
            Nat,
            "KUBE-NODE-PORT",
            jump("KUBE-MARK-MASQ"),
            D,
            Some(Protocol::Tcp),
        ),
        (
            SetId::NodePortLocalUdp,
            Nat,
            "KUBE-NODE-PORT",
            Target::Return,
            D,
            Some(Protocol::Udp),
        ),
        (
            SetId::NodePortUdp,
            Nat,
            "KUBE-NODE-PORT",
            jump("KUBE-MARK-MASQ"),
            D,
            Some(Protocol::Udp),
        ),
        (
            SetId::NodePortLocalSctp,
            Nat,
            "KUBE-NODE-PORT",
            Target::Return,
            DD,
            Some(Protocol::Sctp),
        ),
        (
            SetId::NodePortSctp,
            Nat,
            "KUBE-NODE-PORT",
            jump("KUBE-MARK-MASQ"),
            DD,
            Some(Protocol::Sctp),
        ),
        (
            SetId::LoadBalancerFw,
            Filter,
            "KUBE-PROXY-FIREWALL",
            jump("KUBE-SOURCE-RANGES-FIREWALL"),
            DD,
            None,
        ),
        (
            SetId::LoadBalancerSourceCidr,
            Filter,
            "KUBE-SOURCE-RANGES-FIREWALL",
            Target::Return,
            DDS,
            None,
        ),
        (
            SetId::LoadBalancerSourceIp,
            Filter,
            "KUBE-SOURCE-RANGES-FIREWALL",
            Target::Return,
            DDS,
            None,
        ),
    ];
    for (id, t, chain, target, dirs, proto) in with_chain {
        if !nonempty(sets, id) {
            continue;
        }
        let mut m = Vec::new();
        if let Some(p) = proto {
            m.push(Match::Protocol(p));
        }
        m.push(comment(id.comment()));
        m.push(set(id, dirs));
        r.push(Rule::new(t, chain, m, target));
    }
}

/// The Services' own rules in `KUBE-SERVICES` and what they jump to:
/// masquerade for ClusterIPs, external IPs, node ports, load balancers.
fn service_rules(input: &ProxyInput, sets: &BTreeMap<SetId, IpSet>, r: &mut Vec<Rule>) {
    use Table::{Filter, Nat};
    if nonempty(sets, SetId::ClusterIp) {
        let mut m = vec![comment(SetId::ClusterIp.comment())];
        if input.config.iptables_masquerade_all {
            m.push(set(SetId::ClusterIp, DD));
        } else if let LocalDetector::Cidr(c) = &input.local_detector {
            m.push(set(SetId::ClusterIp, DD));
            m.push(Match::Source {
                net: *c,
                negate: true,
            });
        } else {
            m.push(set(SetId::ClusterIp, &[Dir::Src, Dir::Dst]));
        }
        r.push(Rule::new(Nat, "KUBE-SERVICES", m, jump("KUBE-MARK-MASQ")));
    }
    // External IPs: accepted (left to IPVS) when they arrive from outside
    // through a physical device or are addressed to this node; all of them
    // marked for masquerade first unless the Service is Local.
    for id in [SetId::ExternalIp, SetId::ExternalIpLocal] {
        if !nonempty(sets, id) {
            continue;
        }
        let base = || vec![comment(id.comment()), set(id, DD)];
        if id == SetId::ExternalIp {
            r.push(Rule::new(
                Nat,
                "KUBE-SERVICES",
                base(),
                jump("KUBE-MARK-MASQ"),
            ));
        }
        let mut m = base();
        m.push(Match::PhysdevNotIn);
        m.push(Match::AddrTypeLocal {
            source: true,
            negate: true,
        });
        r.push(Rule::new(Nat, "KUBE-SERVICES", m, Target::Accept));
        let mut m = base();
        m.push(Match::AddrTypeLocal {
            source: false,
            negate: false,
        });
        r.push(Rule::new(Nat, "KUBE-SERVICES", m, Target::Accept));
    }
    r.push(Rule::new(
        Nat,
        "KUBE-SERVICES",
        vec![Match::AddrTypeLocal {
            source: false,
            negate: false,
        }],
        jump("KUBE-NODE-PORT"),
    ));
    r.push(Rule::new(
        Nat,
        "KUBE-LOAD-BALANCER",
        vec![],
        jump("KUBE-MARK-MASQ"),
    ));
    r.push(Rule::new(
        Filter,
        "KUBE-SOURCE-RANGES-FIREWALL",
        vec![],
        Target::Drop,
    ));
}

/// The filter table's rules, and `acceptIPVSTraffic`.
fn filter_rules(
    input: &ProxyInput,
    sets: &BTreeMap<SetId, IpSet>,
    no_node_access: &[(IpAddr, Protocol, u16)],
    r: &mut Vec<Rule>,
) {
    use Table::{Filter, Nat};
    let mark = input.masquerade_mark();
    for (ip, proto, port) in no_node_access {
        r.push(Rule::new(
            Filter,
            "KUBE-IPVS-OUT-FILTER",
            vec![
                Match::Source {
                    net: IpNet::from(*ip),
                    negate: false,
                },
                Match::Ipvs {
                    vaddr: *ip,
                    vproto: *proto,
                    vport: *port,
                },
            ],
            Target::Drop,
        ));
    }
    // acceptIPVSTraffic.
    for id in [SetId::ClusterIp, SetId::LoadBalancer] {
        if nonempty(sets, id) {
            r.push(Rule::new(
                Nat,
                "KUBE-SERVICES",
                vec![set(id, DD)],
                Target::Accept,
            ));
        }
    }
    r.push(Rule::new(
        Filter,
        "KUBE-FORWARD",
        vec![
            comment("kubernetes forwarding rules"),
            Match::Mark {
                value: mark,
                negate: false,
            },
        ],
        Target::Accept,
    ));
    r.push(Rule::new(
        Filter,
        "KUBE-FORWARD",
        vec![
            comment("kubernetes forwarding conntrack rule"),
            Match::CtState(CtState::RelatedEstablished),
        ],
        Target::Accept,
    ));
    r.push(Rule::new(
        Filter,
        "KUBE-NODE-PORT",
        vec![
            comment(SetId::HealthCheckNodePort.comment()),
            set(SetId::HealthCheckNodePort, D),
        ],
        Target::Accept,
    ));
    for (id, dirs) in [
        (SetId::LoadBalancer, DD),
        (SetId::ClusterIp, DD),
        (SetId::ExternalIp, DD),
        (SetId::ExternalIpLocal, DD),
        (SetId::HealthCheckNodePort, D),
    ] {
        r.push(Rule::new(
            Filter,
            "KUBE-IPVS-FILTER",
            vec![set(id, dirs)],
            Target::Return,
        ));
    }
    r.push(Rule::new(
        Filter,
        "KUBE-IPVS-FILTER",
        vec![Match::CtState(CtState::New), set(SetId::IpvsIps, D)],
        Target::Reject,
    ));
}

/// `KUBE-POSTROUTING` and `KUBE-MARK-MASQ`: masquerade what was marked.
fn postrouting_rules(input: &ProxyInput, r: &mut Vec<Rule>) {
    use Table::Nat;
    let mark = input.masquerade_mark();
    r.push(Rule::new(
        Nat,
        "KUBE-POSTROUTING",
        vec![Match::Mark {
            value: mark,
            negate: true,
        }],
        Target::Return,
    ));
    r.push(Rule::new(
        Nat,
        "KUBE-POSTROUTING",
        vec![],
        Target::MarkXor(mark),
    ));
    r.push(Rule::new(
        Nat,
        "KUBE-POSTROUTING",
        vec![comment("kubernetes service traffic requiring SNAT")],
        Target::Masquerade { random_fully: true },
    ));
    r.push(Rule::new(
        Nat,
        "KUBE-MARK-MASQ",
        vec![],
        Target::MarkOr(mark),
    ));
}
