//! Compile a [`ProxyInput`] into the typed `kube-proxy` table, as kube-proxy's
//! nftables proxier (`syncProxyRules` + `setupNFTables`) would write it.
//!
//! It only renders decisions already made by [`crate::net::proxy::topology`]; it
//! never re-decides which endpoints are usable, and never produces text.

use super::model::*;
use crate::model::packet::IpFamily;
use crate::model::NodePortAddress;
use crate::net::proxy::naming::{push_decimal, push_hash_prefix, push_ip};
use crate::net::proxy::{loopback, ProxyInput, ServicePortName};
use ipnet::IpNet;
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

mod service;

// Base chains (Gen C names: "${type}-${hook}" plus "-pre-dnat").
pub const FILTER_PREROUTING_PRE_DNAT: &str = "filter-prerouting-pre-dnat";
pub const FILTER_OUTPUT_PRE_DNAT: &str = "filter-output-pre-dnat";
pub const FILTER_INPUT: &str = "filter-input";
pub const FILTER_FORWARD: &str = "filter-forward";
pub const FILTER_OUTPUT: &str = "filter-output";
pub const NAT_PREROUTING: &str = "nat-prerouting";
pub const NAT_OUTPUT: &str = "nat-output";
pub const NAT_POSTROUTING: &str = "nat-postrouting";
// Fixed chains.
pub const SERVICES: &str = "services";
pub const SERVICE_ENDPOINTS_CHECK: &str = "service-endpoints-check";
pub const NODEPORT_ENDPOINTS_CHECK: &str = "nodeport-endpoints-check";
pub const REJECT_CHAIN: &str = "reject-chain";
pub const CLUSTER_IPS_CHECK: &str = "cluster-ips-check";
pub const FIREWALL_CHECK: &str = "firewall-check";
pub const MARK_MASQ: &str = "mark-for-masquerade";
pub const MASQUERADING: &str = "masquerading";
// Sets and maps.
pub const CLUSTER_IPS: &str = "cluster-ips";
pub const NODEPORT_IPS: &str = "nodeport-ips";
pub const SERVICE_IPS: &str = "service-ips";
pub const SERVICE_NODEPORTS: &str = "service-nodeports";
pub const NO_ENDPOINT_SERVICES: &str = "no-endpoint-services";
pub const NO_ENDPOINT_NODEPORTS: &str = "no-endpoint-nodeports";
pub const FIREWALL_IPS: &str = "firewall-ips";

/// knftables `NameLengthMax` (256) minus the longest prefix (16).
const CHAIN_NAME_BASE_LENGTH_MAX: usize = 256 - 16;

/// kube-proxy's `hashAndTruncate`: `HASH8-name`, cut to 240 characters.
pub fn hash_and_truncate(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 9);
    push_hash_and_truncate(&mut out, name);
    out
}

/// [`hash_and_truncate`], appended to `out` (no allocation of its own).
fn push_hash_and_truncate(out: &mut String, name: &str) {
    let start = out.len();
    push_hash_prefix(out, name, 8);
    out.push('-');
    out.push_str(name);
    if out.len() - start > CHAIN_NAME_BASE_LENGTH_MAX {
        let mut cut = CHAIN_NAME_BASE_LENGTH_MAX - 3;
        while !out.is_char_boundary(start + cut) {
            cut -= 1;
        }
        out.truncate(start + cut);
        out.push_str("...");
    }
}

/// `endpoint-` + [`endpoint_chain_base`], built in `out` with `text` as
/// scratch space: `prefix` is the Service port's `ns/svc/proto/port`.
fn push_endpoint_chain_name(out: &mut String, text: &mut String, prefix: &str, ep: &SocketAddr) {
    text.clear();
    text.push_str(prefix);
    text.push_str("__");
    let at = text.len();
    push_ip(text, ep.ip());
    if ep.is_ipv6() {
        let dotted = text[at..].replace(':', ".");
        text.truncate(at);
        text.push_str(&dotted);
    }
    text.push('/');
    push_decimal(text, u32::from(ep.port()));
    out.clear();
    out.push_str("endpoint-");
    push_hash_and_truncate(out, text);
}

/// `ns/svc/proto/port`, the text a Service port's chain names hash,
/// appended to `out`.
fn push_service_port_text(out: &mut String, name: &ServicePortName) {
    let parts = [
        &*name.service.namespace,
        &*name.service.name,
        name.protocol.as_lower(),
        &*name.port,
    ];
    for (i, part) in parts.into_iter().enumerate() {
        if i > 0 {
            out.push('/');
        }
        out.push_str(part);
    }
}

/// `servicePortChainNameBase`: `HASH-ns/svc/proto/port`.
pub fn service_chain_base(name: &ServicePortName) -> String {
    let mut text = String::new();
    push_service_port_text(&mut text, name);
    hash_and_truncate(&text)
}

/// `servicePortEndpointChainNameBase`: `HASH-ns/svc/proto/port__ip/port`,
/// with an IPv6 address's colons turned into dots.
pub fn endpoint_chain_base(name: &ServicePortName, ep: &SocketAddr) -> String {
    let ip = ep.ip().to_string().replace(':', ".");
    hash_and_truncate(&format!(
        "{}/{}/{}/{}__{}/{}",
        name.service.namespace,
        name.service.name,
        name.protocol.as_lower(),
        name.port,
        ip,
        ep.port()
    ))
}

/// How NodePorts are accepted (`nodePortAddresses`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodePortMode {
    /// `ip daddr @nodeport-ips` with these addresses (never loopback).
    Ips(Vec<IpAddr>),
    /// `0.0.0.0/0`: `fib daddr type local ip daddr != 127.0.0.0/8`.
    MatchAll,
}

/// kube-proxy's nftables default is `primary` (the node's primary IP only);
/// a list with no CIDR of this family, or a `/0`, means "every local IP".
pub fn node_port_mode(input: &ProxyInput) -> NodePortMode {
    let cfg = &input.config.node_port_addresses;
    let fam: Vec<&NodePortAddress> = cfg
        .iter()
        .filter(|a| match a {
            NodePortAddress::Primary => true,
            NodePortAddress::Cidr(c) => IpFamily::of(&c.addr()) == input.family,
        })
        .collect();
    if !cfg.is_empty() && fam.is_empty() {
        return NodePortMode::MatchAll;
    }
    if fam
        .iter()
        .any(|a| matches!(a, NodePortAddress::Cidr(c) if c.prefix_len() == 0))
    {
        return NodePortMode::MatchAll;
    }
    let mut ips: Vec<IpAddr> = match &input.node_port_ips {
        None => vec![input.node.primary_ip],
        Some(v) => v.clone(),
    };
    // "--nodeport-addresses includes localhost but localhost NodePorts are
    // not supported": loopback addresses are skipped.
    ips.retain(|ip| !ip.is_loopback() && IpFamily::of(ip) == input.family);
    crate::util::order::sort(&mut ips);
    ips.dedup();
    NodePortMode::Ips(ips)
}

/// Per-Service-port facts the tracer wants without re-parsing names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceChains {
    pub name: ServicePortName,
    pub cluster_chain: String,
    pub local_chain: String,
    pub external_chain: String,
    pub firewall_chain: String,
}

/// Which endpoint a chain DNATs to, and its affinity set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointChain {
    pub chain: Name,
    /// Its position in the table's chains.
    pub index: usize,
    pub endpoint: SocketAddr,
    pub affinity_set: Option<String>,
}

pub struct Compiled {
    pub table: Table,
    pub endpoint_chains: Vec<EndpointChain>,
    pub node_port_mode: NodePortMode,
}

struct Builder {
    chains: Vec<Chain>,
    /// Base and fixed chains by name (a handful).
    fixed: BTreeMap<Name, usize>,
    /// The current Service port's chains by name, while compiling one
    /// (`None` before the Services): chains are never looked up among all
    /// 100,000s (a scan per rule made 10,000 Services take over a minute).
    service: Option<BTreeMap<Name, usize>>,
}

impl Builder {
    fn find(&self, name: &str) -> Option<usize> {
        self.service
            .as_ref()
            .and_then(|m| m.get(name))
            .or_else(|| self.fixed.get(name))
            .copied()
    }
    fn chain(&mut self, name: &str) -> &mut Chain {
        let idx = match self.find(name) {
            Some(i) => i,
            None => self.create(name.into()),
        };
        &mut self.chains[idx]
    }
    fn create(&mut self, name: Name) -> usize {
        let i = self.chains.len();
        match &mut self.service {
            Some(m) => m.insert(name.clone(), i),
            None => self.fixed.insert(name.clone(), i),
        };
        self.create_unlisted(name)
    }
    /// A new chain that [`Builder::find`] will not find (referred to only
    /// by its position, which this returns).
    fn create_unlisted(&mut self, name: Name) -> usize {
        let i = self.chains.len();
        self.chains.push(Chain {
            name,
            base: None,
            comment: None,
            rules: Default::default(),
        });
        i
    }
    fn rule(&mut self, chain: &str, rule: Rule) {
        self.chain(chain).rules.push(rule);
    }
    /// A verdict's reference to a chain (which should exist by then; a
    /// missing one is a reference the walk ignores, as before).
    fn refer(&self, name: &str) -> ChainRef {
        match self.find(name) {
            Some(i) => ChainRef {
                name: self.chains[i].name.clone(),
                index: Some(i),
            },
            None => ChainRef {
                name: name.into(),
                index: None,
            },
        }
    }
    /// [`Builder::refer`] to the chain at `i` (known without a lookup).
    fn refer_at(&self, i: usize) -> ChainRef {
        ChainRef {
            name: self.chains[i].name.clone(),
            index: Some(i),
        }
    }
    fn jump(&self, c: &str) -> Expr {
        Expr::Verdict(Verdict::Jump(self.refer(c)))
    }
    fn goto(&self, c: &str) -> Expr {
        Expr::Verdict(Verdict::Goto(self.refer(c)))
    }
}

fn not_localhost(family: IpFamily) -> IpNet {
    match family {
        IpFamily::V4 => IpNet::new(loopback(family), 8)
            .map(|n| n.trunc())
            .unwrap_or_else(|_| host_net(loopback(family))),
        IpFamily::V6 => host_net(loopback(family)),
    }
}

fn host_net(ip: IpAddr) -> IpNet {
    IpNet::from(ip)
}

/// Compile one node's view into the `kube-proxy` table: the node-wide
/// chains, then each Service port's chains and map elements
/// (`compile/service.rs`), then the sets and maps in kube-proxy's
/// order.
pub fn compile_table(input: &ProxyInput) -> Compiled {
    let mut b = Builder {
        chains: Vec::new(),
        fixed: BTreeMap::new(),
        service: None,
    };
    let np_mode = node_port_mode(input);
    node_chains(&mut b, input, &np_mode);
    let total_endpoints: usize = input.endpoints.values().map(Vec::len).sum();
    let mut g = Gathered {
        endpoint_chains: Vec::with_capacity(total_endpoints),
        ..Gathered::default()
    };
    b.chains.reserve(total_endpoints + 3 * input.services.len());
    let mut bufs = service::Buffers::new(b.jump(MARK_MASQ));
    for (name, svc, eps) in input.services_with_endpoints() {
        b.service = Some(BTreeMap::new());
        service::service_port(&mut b, input, (name, svc, eps), &mut g, &mut bufs);
    }
    b.service = None;
    table(b, input.family, np_mode, g)
}

/// The sets' and maps' elements and the endpoint chains, gathered while
/// each Service port is compiled.
#[derive(Default)]
struct Gathered {
    cluster_ips: Vec<IpAddr>,
    service_ips: Vec<MapElem>,
    service_nodeports: Vec<MapElem>,
    no_ep_services: Vec<MapElem>,
    no_ep_nodeports: Vec<MapElem>,
    firewall_ips: Vec<MapElem>,
    affinity_sets: Vec<Set>,
    endpoint_chains: Vec<EndpointChain>,
}

/// The base chains, the jumps into kube-proxy's chains and the fixed
/// chains, in kube-proxy's order.
fn node_chains(b: &mut Builder, input: &ProxyInput, np_mode: &NodePortMode) {
    let family = input.family;
    let mark = input.nftables_masquerade_mark();
    // Base chains, in kube-proxy's nftablesBaseChains order.
    let bases: [(&str, ChainType, NfHook, i32); 8] = [
        (
            FILTER_PREROUTING_PRE_DNAT,
            ChainType::Filter,
            NfHook::Prerouting,
            -110,
        ),
        (
            FILTER_OUTPUT_PRE_DNAT,
            ChainType::Filter,
            NfHook::Output,
            -110,
        ),
        (FILTER_INPUT, ChainType::Filter, NfHook::Input, 0),
        (FILTER_FORWARD, ChainType::Filter, NfHook::Forward, 0),
        (FILTER_OUTPUT, ChainType::Filter, NfHook::Output, 0),
        (NAT_PREROUTING, ChainType::Nat, NfHook::Prerouting, -100),
        (NAT_OUTPUT, ChainType::Nat, NfHook::Output, -100),
        (NAT_POSTROUTING, ChainType::Nat, NfHook::Postrouting, 100),
    ];
    for (name, kind, hook, priority) in bases {
        b.chain(name).base = Some(BaseHook {
            kind,
            hook,
            priority,
        });
    }
    // Jump rules, in kube-proxy's nftablesJumpChains order (Gen C).
    let jumps: [(&str, &str, bool); 11] = [
        (NODEPORT_ENDPOINTS_CHECK, FILTER_INPUT, true),
        (SERVICE_ENDPOINTS_CHECK, FILTER_INPUT, true),
        (SERVICE_ENDPOINTS_CHECK, FILTER_FORWARD, true),
        (SERVICE_ENDPOINTS_CHECK, FILTER_OUTPUT, true),
        (FIREWALL_CHECK, FILTER_PREROUTING_PRE_DNAT, true),
        (FIREWALL_CHECK, FILTER_OUTPUT_PRE_DNAT, true),
        (SERVICES, NAT_OUTPUT, false),
        (SERVICES, NAT_PREROUTING, false),
        (MASQUERADING, NAT_POSTROUTING, false),
        (CLUSTER_IPS_CHECK, FILTER_FORWARD, true),
        (CLUSTER_IPS_CHECK, FILTER_OUTPUT, true),
    ];
    for (to, from, ct_new) in jumps {
        b.chain(to);
        let mut exprs = Vec::new();
        if ct_new {
            exprs.push(Expr::CtStateNew);
        }
        exprs.push(b.jump(to));
        b.rule(from, Rule::new(exprs));
    }
    // Fixed chains.
    b.rule(MARK_MASQ, Rule::new(vec![Expr::MarkSetOr(mark)]));
    b.rule(
        MASQUERADING,
        Rule::new(vec![
            Expr::MarkAndIsZero(mark),
            Expr::Verdict(Verdict::Return),
        ]),
    );
    b.rule(MASQUERADING, Rule::new(vec![Expr::MarkSetXor(mark)]));
    b.rule(MASQUERADING, Rule::new(vec![Expr::MasqueradeFullyRandom]));

    b.rule(
        CLUSTER_IPS_CHECK,
        Rule::commented(
            vec![
                Expr::DaddrInSet(CLUSTER_IPS.into()),
                Expr::Verdict(Verdict::Reject),
            ],
            "Reject traffic to invalid ports of ClusterIPs",
        ),
    );
    if !input.service_cidrs.is_empty() {
        let mut cidrs = input.service_cidrs.clone();
        crate::util::order::sort(&mut cidrs);
        cidrs.dedup();
        b.rule(
            CLUSTER_IPS_CHECK,
            Rule::commented(
                vec![Expr::DaddrInAnon(cidrs), Expr::Verdict(Verdict::Drop)],
                "Drop traffic to unallocated ClusterIPs",
            ),
        );
    }
    b.chain(REJECT_CHAIN).comment =
        Some("helper for @no-endpoint-services / @no-endpoint-nodeports".into());
    b.rule(
        REJECT_CHAIN,
        Rule::new(vec![Expr::Verdict(Verdict::Reject)]),
    );
    b.rule(
        SERVICE_ENDPOINTS_CHECK,
        Rule::new(vec![Expr::Vmap {
            key: LookupKey::DaddrProtoPort,
            map: NO_ENDPOINT_SERVICES.into(),
        }]),
    );
    let np_match: Vec<Expr> = match &np_mode {
        NodePortMode::Ips(_) => vec![Expr::DaddrInSet(NODEPORT_IPS.into())],
        NodePortMode::MatchAll => vec![Expr::DaddrNot(not_localhost(family))],
    };
    let mut r = np_match.clone();
    r.push(Expr::Vmap {
        key: LookupKey::ProtoPort,
        map: NO_ENDPOINT_NODEPORTS.into(),
    });
    b.rule(NODEPORT_ENDPOINTS_CHECK, Rule::new(r));
    b.rule(
        FIREWALL_CHECK,
        Rule::new(vec![Expr::Vmap {
            key: LookupKey::DaddrProtoPort,
            map: FIREWALL_IPS.into(),
        }]),
    );
    b.rule(
        SERVICES,
        Rule::new(vec![Expr::Vmap {
            key: LookupKey::DaddrProtoPort,
            map: SERVICE_IPS.into(),
        }]),
    );
    let mut r = match &np_mode {
        NodePortMode::Ips(_) => vec![Expr::DaddrInSet(NODEPORT_IPS.into())],
        NodePortMode::MatchAll => vec![Expr::FibDaddrLocal, Expr::DaddrNot(not_localhost(family))],
    };
    r.push(Expr::Vmap {
        key: LookupKey::ProtoPort,
        map: SERVICE_NODEPORTS.into(),
    });
    b.rule(SERVICES, Rule::new(r));
}

/// The table: every chain, then the sets and maps with their elements
/// sorted as kube-proxy writes them.
fn table(b: Builder, family: IpFamily, np_mode: NodePortMode, g: Gathered) -> Compiled {
    let mut cluster_ips = g.cluster_ips;
    crate::util::order::sort(&mut cluster_ips);
    cluster_ips.dedup();
    let sort_elems = |mut v: Vec<MapElem>| {
        crate::util::order::sort_by_key(&mut v, |a| a.key);
        v.dedup_by(|a, b| a.key == b.key);
        v
    };
    let mut sets = vec![Set {
        name: CLUSTER_IPS.into(),
        comment: Some("Active ClusterIPs".into()),
        timeout_seconds: None,
        elements: cluster_ips,
    }];
    if let NodePortMode::Ips(ips) = &np_mode {
        sets.push(Set {
            name: NODEPORT_IPS.into(),
            comment: Some("IPs that accept NodePort traffic".into()),
            timeout_seconds: None,
            elements: ips.clone(),
        });
    }
    sets.extend(g.affinity_sets);
    let map = |name: &str, key: KeyType, comment: &str, elements: Vec<MapElem>| Map {
        name: name.into(),
        key,
        comment: Some(comment.into()),
        elements: sort_elems(elements),
    };
    let maps = vec![
        map(
            SERVICE_IPS,
            KeyType::AddrProtoPort,
            "ClusterIP, ExternalIP and LoadBalancer IP traffic",
            g.service_ips,
        ),
        map(
            SERVICE_NODEPORTS,
            KeyType::ProtoPort,
            "NodePort traffic",
            g.service_nodeports,
        ),
        map(
            NO_ENDPOINT_SERVICES,
            KeyType::AddrProtoPort,
            "vmap to drop or reject packets to services with no endpoints",
            g.no_ep_services,
        ),
        map(
            NO_ENDPOINT_NODEPORTS,
            KeyType::ProtoPort,
            "vmap to drop or reject packets to service nodeports with no endpoints",
            g.no_ep_nodeports,
        ),
        map(
            FIREWALL_IPS,
            KeyType::AddrProtoPort,
            "destinations that are subject to LoadBalancerSourceRanges",
            g.firewall_ips,
        ),
    ];
    let mut table = Table {
        family,
        comment: "rules for kube-proxy".into(),
        sets,
        maps,
        chains: b.chains,
        set_order: Vec::new(),
    };
    table.index_sets();
    Compiled {
        table,
        endpoint_chains: g.endpoint_chains,
        node_port_mode: np_mode,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::packet::Protocol;
    use crate::model::NamespacedName;

    /// The buffered endpoint chain names are `endpoint-` + the public
    /// `endpoint_chain_base`, including IPv6 and names cut at 240 bytes.
    #[test]
    fn buffered_endpoint_chain_names_match_endpoint_chain_base() {
        let long = "a".repeat(250);
        for (ns, svc, port) in [
            ("ns", "svc", "http"),
            ("ns", long.as_str(), ""),
            ("é", "ü", "p"),
        ] {
            let name = ServicePortName {
                service: NamespacedName::new(ns, svc),
                port: port.into(),
                protocol: Protocol::Tcp,
            };
            let prefix = format!("{ns}/{svc}/tcp/{port}");
            for ep in ["10.1.2.3:8080", "[fd00::a:1]:53", "0.0.0.0:0"] {
                let ep: SocketAddr = ep.parse().expect("endpoint");
                let (mut out, mut scratch) = (String::new(), String::new());
                push_endpoint_chain_name(&mut out, &mut scratch, &prefix, &ep);
                assert_eq!(out, format!("endpoint-{}", endpoint_chain_base(&name, &ep)));
            }
        }
    }

    /// `Table::set` finds every set (affinity sets included) by binary search
    /// exactly as a scan would, and nothing for an unknown name.
    #[test]
    fn indexed_set_lookup_equals_a_scan() {
        let text = include_str!("../../../../../tests/scenarios/session-affinity.yaml");
        let (cluster, _) = crate::Code::ALL.parse(text);
        let slices = crate::net::controller::steady_slices(&cluster);
        let mut checked = 0;
        for node in &cluster.nodes {
            let Some(input) =
                crate::net::proxy::build_input(&cluster, &slices, &node.name, IpFamily::V4)
            else {
                continue;
            };
            let table = compile_table(&input).table;
            assert_eq!(table.set_order.len(), table.sets.len());
            assert!(table.sets.iter().any(|s| s.name.starts_with("affinity-")));
            for s in &table.sets {
                let scanned = table.sets.iter().find(|x| x.name == s.name);
                assert_eq!(table.set(&s.name), scanned);
                checked += 1;
            }
            assert!(table.set("no-such-set").is_none());
        }
        assert!(checked > 0);
    }
}
