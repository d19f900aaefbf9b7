//! ProxyInput → typed filter and nat tables, following kube-proxy's
//! `syncProxyRules` (pkg/proxy/iptables/proxier.go) step by step.
//!
//! Rules are first emitted in kube-proxy's own code order (per Service port:
//! ClusterIP, externalIPs, LB IPs, NodePorts, health check, then the SVC/SVL,
//! EXT, FW and SEP chains), then arranged in the order kube-proxy's unit tests
//! compare (`sortIPTablesRules`): tables by name, KUBE-NODEPORTS and
//! KUBE-SERVICES first, other chains alphabetically, and the rules of those
//! two chains stably sorted by the Service name in their comment. This module
//! must never pick endpoints itself: eligibility comes from
//! [`crate::proxy::topology`] (with the two corrections noted in
//! [`Endpoints::of`]).

use super::rules::{
    chain_key, names, Addr, Chain, CtState, HookChain, Match, Rule, Side, Table, TableRules, Target,
};
use crate::modes::DropReason;
use crate::packet::IpFamily;
use crate::proxy::naming::{hash_prefix, service_port_hash_input};
use crate::proxy::{EndpointInfo, LocalDetector, ProxyInput, ServicePortInfo};
use ipnet::IpNet;
use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// `largeClusterEndpointsThreshold`: above this many endpoints kube-proxy
/// drops the comments of SVC→SEP and SEP rules.
const LARGE_CLUSTER_ENDPOINTS: usize = 1000;

/// The compiled rules of one node and family.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub family: IpFamily,
    /// filter, then nat, in rendering order.
    pub tables: Vec<TableRules>,
    /// Built-in chains' jumps into kube-proxy's chains (not rendered).
    pub hooks: Vec<HookChain>,
    /// For each KUBE-SVC-/KUBE-SVL- chain: the endpoints its SEP chains DNAT to.
    pub chain_endpoints: BTreeMap<String, Vec<SocketAddr>>,
    /// The node's own addresses (what `-m addrtype LOCAL` matches, with loopback).
    pub local_ips: Vec<IpAddr>,
    pub masquerade_mark: u32,
    /// The rendered text, one entry per line.
    pub lines: Vec<String>,
}

impl Compiled {
    pub fn table(&self, t: Table) -> Option<&TableRules> {
        self.tables.iter().find(|x| x.table == t)
    }
}

/// Rules of one table in emission order.
#[derive(Default)]
struct Emit {
    declared: Vec<String>,
    /// The names in `declared`, for constant-time duplicate checks (a linear
    /// scan made compiling 1,000 Services take seconds).
    declared_set: BTreeSet<String>,
    rules: Vec<(String, Rule)>,
}

impl Emit {
    fn chain(&mut self, name: &str) {
        if !self.declared_set.contains(name) {
            self.declared_set.insert(name.to_string());
            self.declared.push(name.to_string());
        }
    }
    fn rule(&mut self, chain: &str, matches: Vec<Match>, target: Target) {
        self.rules
            .push((chain.to_string(), Rule::new(matches, target)));
    }
}

/// Endpoint lists of one Service port, as kube-proxy's `CategorizeEndpoints`
/// returns them.
struct Endpoints<'a> {
    cluster: Vec<&'a EndpointInfo>,
    local: Vec<&'a EndpointInfo>,
    all_reachable: Vec<&'a EndpointInfo>,
    has_any: bool,
}

impl<'a> Endpoints<'a> {
    /// Uses [`ProxyInput::categorize`], correcting two points where it differs
    /// from kube-proxy's `CategorizeEndpoints`:
    /// * `UsesClusterEndpoints()` is `!internalPolicyLocal ||
    ///   ExternallyAccessible()` (the eTP=Local short-circuit for Pods and the
    ///   node needs the cluster chain even with iTP=Local);
    /// * when a Local policy is used, `hasAnyEndpoints` is true as soon as any
    ///   endpoint anywhere is ready or serving-terminating (so iTP=Local with
    ///   only remote endpoints DROPs "has no local endpoints" instead of
    ///   REJECTing "has no endpoints").
    fn of(input: &'a ProxyInput, svc: &ServicePortInfo) -> Endpoints<'a> {
        let eps = input.endpoints_of(&svc.name);
        let cat = input.categorize(&svc.name).unwrap_or_default();
        let uses_cluster = uses_cluster_endpoints(svc);
        let uses_local = svc.uses_local_endpoints();
        let usable = |e: &&EndpointInfo| e.ready || (e.serving && e.terminating);
        let pick = |idx: &[usize]| -> Vec<&'a EndpointInfo> {
            idx.iter().filter_map(|&i| eps.get(i)).collect()
        };
        let cluster: Vec<&EndpointInfo> = if !uses_cluster {
            Vec::new()
        } else if let Some(c) = &cat.cluster {
            pick(c)
        } else {
            let ready: Vec<&EndpointInfo> = eps.iter().filter(|e| e.ready).collect();
            if ready.is_empty() {
                eps.iter().filter(|e| e.serving && e.terminating).collect()
            } else {
                ready
            }
        };
        let local = if uses_local {
            pick(cat.local.as_deref().unwrap_or(&[]))
        } else {
            Vec::new()
        };
        let mut has_any = !cluster.is_empty();
        if uses_local {
            has_any |= eps.iter().any(|e| usable(&e));
        }
        let mut all: Vec<&EndpointInfo> = cluster.iter().chain(local.iter()).copied().collect();
        crate::order::sort_by_key(&mut all, |e| e.key());
        all.dedup_by_key(|e| e.key());
        Endpoints {
            cluster,
            local,
            all_reachable: all,
            has_any,
        }
    }
}

fn ip_net_of(ip: IpAddr) -> IpNet {
    IpNet::from(ip)
}

fn loopback_net(family: IpFamily) -> IpNet {
    match family {
        IpFamily::V4 => IpNet::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 0)), 8)
            .unwrap_or_else(|_| ip_net_of(IpAddr::V4(Ipv4Addr::LOCALHOST))),
        IpFamily::V6 => ip_net_of(IpAddr::V6(Ipv6Addr::LOCALHOST)),
    }
}

fn comment(s: impl Into<String>) -> Match {
    Match::Comment(s.into())
}

fn dst_ip(ip: IpAddr) -> Match {
    Match::Dst {
        addr: Addr::Ip(ip),
        negate: false,
    }
}

fn jump(c: &str) -> Target {
    Target::Jump(c.to_string())
}

/// Compile one node's rules.
pub fn compile(input: &ProxyInput) -> Compiled {
    let family = input.family;
    let is_v6 = family == IpFamily::V6;
    let mark = input.masquerade_mark();
    // localhostNodePorts: forced off for IPv6 (NewDualStackProxier) and when
    // nodePortAddresses does not contain an IPv4 loopback address.
    let localhost_nodeports = input.config.iptables_localhost_nodeports
        && !is_v6
        && input
            .node_port_ips
            .as_ref()
            .is_none_or(|ips| ips.iter().any(|ip| ip.is_ipv4() && ip.is_loopback()));
    let detector = match &input.local_detector {
        LocalDetector::None => None,
        LocalDetector::Cidr(c) => Some(*c),
    };
    let masquerade_all = input.config.iptables_masquerade_all;
    let total_endpoints: usize = input
        .services
        .keys()
        .map(|n| input.endpoints_of(n).len())
        .sum();
    let large_cluster = total_endpoints > LARGE_CLUSTER_ENDPOINTS;
    let svc_comment = |m: &mut Vec<Match>, text: String| {
        if !large_cluster {
            m.push(Match::Comment(text));
        }
    };

    let mut filter = Emit::default();
    let mut nat = Emit::default();
    for c in [
        names::SERVICES,
        names::EXTERNAL_SERVICES,
        names::FORWARD,
        names::NODEPORTS,
        names::PROXY_FIREWALL,
    ] {
        filter.chain(c);
    }
    for c in [
        names::SERVICES,
        names::NODEPORTS,
        names::POSTROUTING,
        names::MARK_MASQ,
    ] {
        nat.chain(c);
    }
    nat.rule(
        names::POSTROUTING,
        vec![Match::Mark { mark, negate: true }],
        Target::Return,
    );
    nat.rule(names::POSTROUTING, vec![], Target::XorMark(mark));
    nat.rule(
        names::POSTROUTING,
        vec![comment("kubernetes service traffic requiring SNAT")],
        Target::Masquerade,
    );
    nat.rule(names::MARK_MASQ, vec![], Target::OrMark(mark));
    if localhost_nodeports {
        filter.chain(names::FIREWALL);
        filter.rule(
            names::FIREWALL,
            vec![
                comment("block incoming localnet connections"),
                Match::Dst {
                    addr: Addr::Net(loopback_net(family)),
                    negate: false,
                },
                Match::Src {
                    addr: Addr::Net(loopback_net(family)),
                    negate: true,
                },
                Match::Conntrack {
                    state: CtState::RelatedEstablishedDnat,
                    negate: true,
                },
            ],
            Target::Drop(DropReason::Invalid),
        );
    }

    for svc in input.services.values() {
        let Some(cluster_ip) = svc.cluster_ip else {
            continue;
        };
        let name = svc.name.to_string();
        let proto = svc.name.protocol;
        let hash = hash_prefix(&service_port_hash_input(&svc.name, proto), 16);
        let svc_chain = format!("{}{hash}", names::SVC);
        let svl_chain = format!("{}{hash}", names::SVL);
        let ext_chain = format!("{}{hash}", names::EXT);
        let fw_chain = format!("{}{hash}", names::FW);
        let sep_chain = |ep: &EndpointInfo| {
            format!(
                "{}{}",
                names::SEP,
                hash_prefix(&format!("{}{}{}", name, proto.as_lower(), ep.key()), 16)
            )
        };
        let eps = Endpoints::of(input, svc);
        let has_any = eps.has_any;
        let uses_cluster_chain = !eps.cluster.is_empty() && uses_cluster_endpoints(svc);
        let uses_local_chain = !eps.local.is_empty() && svc.uses_local_endpoints();
        let (internal_chain, has_internal) = if svc.internal_policy_local {
            (&svl_chain, has_any && !eps.local.is_empty())
        } else {
            (&svc_chain, has_any)
        };
        let (external_policy_chain, has_external) = if svc.external_policy_local {
            (&svl_chain, has_any && !eps.local.is_empty())
        } else {
            (&svc_chain, has_any)
        };
        let uses_ext = has_any && svc.externally_accessible();
        let uses_fw = has_any
            && !svc.load_balancer_ips.is_empty()
            && !svc.load_balancer_source_ranges.is_empty();
        let lb_chain = if uses_fw { &fw_chain } else { &ext_chain };
        let (int_target, int_comment, ext_target, ext_comment) = if !has_any {
            let c = format!("{name} has no endpoints");
            (
                Target::Reject(DropReason::NoEndpoints),
                c.clone(),
                Target::Reject(DropReason::NoEndpoints),
                c,
            )
        } else {
            let c = format!("{name} has no local endpoints");
            (
                Target::Drop(DropReason::NoLocalEndpoints),
                c.clone(),
                Target::Drop(DropReason::NoLocalEndpoints),
                c,
            )
        };
        let port_matches = |c: String, ip: IpAddr, port: u16| {
            vec![
                comment(c),
                Match::Proto(proto),
                dst_ip(ip),
                Match::DPort(port),
            ]
        };

        // A. ClusterIP.
        if has_internal {
            nat.rule(
                names::SERVICES,
                port_matches(format!("{name} cluster IP"), cluster_ip, svc.port),
                jump(internal_chain),
            );
        } else {
            filter.rule(
                names::SERVICES,
                port_matches(int_comment.clone(), cluster_ip, svc.port),
                int_target.clone(),
            );
        }
        // B. externalIPs.
        for ip in &svc.external_ips {
            if has_any {
                nat.rule(
                    names::SERVICES,
                    port_matches(format!("{name} external IP"), *ip, svc.port),
                    jump(&ext_chain),
                );
            }
            if !has_external {
                filter.rule(
                    names::EXTERNAL_SERVICES,
                    port_matches(ext_comment.clone(), *ip, svc.port),
                    ext_target.clone(),
                );
            }
        }
        // C. LoadBalancer IPs (and their firewall DROPs).
        for ip in &svc.load_balancer_ips {
            if has_any {
                nat.rule(
                    names::SERVICES,
                    port_matches(format!("{name} loadbalancer IP"), *ip, svc.port),
                    jump(lb_chain),
                );
            }
            if uses_fw {
                filter.rule(
                    names::PROXY_FIREWALL,
                    port_matches(
                        format!("{name} traffic not accepted by {fw_chain}"),
                        *ip,
                        svc.port,
                    ),
                    Target::Drop(DropReason::SourceRange),
                );
            }
        }
        // D. LB IPs without external endpoints.
        if !has_external {
            for ip in &svc.load_balancer_ips {
                filter.rule(
                    names::EXTERNAL_SERVICES,
                    port_matches(ext_comment.clone(), *ip, svc.port),
                    ext_target.clone(),
                );
            }
        }
        // E/F. NodePort.
        if svc.node_port != 0 {
            if has_any {
                if localhost_nodeports {
                    nat.rule(
                        names::NODEPORTS,
                        vec![
                            comment(name.clone()),
                            Match::Proto(proto),
                            Match::Dst {
                                addr: Addr::Net(loopback_net(family)),
                                negate: false,
                            },
                            Match::DPort(svc.node_port),
                            Match::Nfacct(names::NFACCT_LOCALHOST_NPS),
                        ],
                        jump(&ext_chain),
                    );
                }
                nat.rule(
                    names::NODEPORTS,
                    vec![
                        comment(name.clone()),
                        Match::Proto(proto),
                        Match::DPort(svc.node_port),
                    ],
                    jump(&ext_chain),
                );
            }
            if !has_external {
                filter.rule(
                    names::EXTERNAL_SERVICES,
                    vec![
                        comment(ext_comment.clone()),
                        Match::AddrTypeLocal(Side::Dst),
                        Match::Proto(proto),
                        Match::DPort(svc.node_port),
                    ],
                    ext_target.clone(),
                );
            }
        }
        // G/H. Health check NodePort (only LoadBalancer + eTP Local:
        // `NeedsHealthCheck`).
        let hc_port = if svc.service_type == crate::model::ServiceType::LoadBalancer
            && svc.external_policy_local
        {
            svc.health_check_node_port
        } else {
            0
        };
        if hc_port != 0 {
            filter.rule(
                names::NODEPORTS,
                vec![
                    comment(format!("{name} health check node port")),
                    Match::Proto(crate::packet::Protocol::Tcp),
                    Match::DPort(hc_port),
                ],
                Target::Accept,
            );
        }
        // I. Masquerade off-cluster traffic to the ClusterIP.
        if has_internal {
            let mut m = port_matches(format!("{name} cluster IP"), cluster_ip, svc.port);
            if masquerade_all {
                nat.rule(internal_chain, m, jump(names::MARK_MASQ));
            } else if let Some(cidr) = detector {
                m.push(Match::Src {
                    addr: Addr::Net(cidr),
                    negate: true,
                });
                nat.rule(internal_chain, m, jump(names::MARK_MASQ));
            }
        }
        // J. KUBE-EXT-.
        if uses_ext {
            nat.chain(&ext_chain);
            if !svc.external_policy_local {
                nat.rule(
                    &ext_chain,
                    vec![comment(format!(
                        "masquerade traffic for {name} external destinations"
                    ))],
                    jump(names::MARK_MASQ),
                );
            } else {
                if let Some(cidr) = detector {
                    nat.rule(
                        &ext_chain,
                        vec![
                            comment(format!("pod traffic for {name} external destinations")),
                            Match::Src {
                                addr: Addr::Net(cidr),
                                negate: false,
                            },
                        ],
                        jump(&svc_chain),
                    );
                }
                nat.rule(
                    &ext_chain,
                    vec![
                        comment(format!(
                            "masquerade LOCAL traffic for {name} external destinations"
                        )),
                        Match::AddrTypeLocal(Side::Src),
                    ],
                    jump(names::MARK_MASQ),
                );
                nat.rule(
                    &ext_chain,
                    vec![
                        comment(format!(
                            "route LOCAL traffic for {name} external destinations"
                        )),
                        Match::AddrTypeLocal(Side::Src),
                    ],
                    jump(&svc_chain),
                );
            }
            if has_external {
                nat.rule(&ext_chain, vec![], jump(external_policy_chain));
            }
        }
        // K. KUBE-FW- (loadBalancerSourceRanges).
        if uses_fw {
            nat.chain(&fw_chain);
            let c = format!("{name} loadbalancer IP");
            let mut allow_from_node = false;
            for cidr in &svc.load_balancer_source_ranges {
                nat.rule(
                    &fw_chain,
                    vec![
                        comment(c.clone()),
                        Match::Src {
                            addr: Addr::Net(*cidr),
                            negate: false,
                        },
                    ],
                    jump(&ext_chain),
                );
                if cidr.contains(&input.node.primary_ip) {
                    allow_from_node = true;
                }
            }
            if allow_from_node {
                for ip in &svc.load_balancer_ips {
                    nat.rule(
                        &fw_chain,
                        vec![
                            comment(c.clone()),
                            Match::Src {
                                addr: Addr::Ip(*ip),
                                negate: false,
                            },
                        ],
                        jump(&ext_chain),
                    );
                }
            }
            nat.rule(
                &fw_chain,
                vec![comment(format!(
                    "other traffic to {name} will be dropped by KUBE-PROXY-FIREWALL"
                ))],
                Target::Nothing,
            );
        }
        // L/M. KUBE-SVC- and KUBE-SVL-: affinity checks, then the cascade.
        let write_lb = |nat: &mut Emit, chain: &str, list: &[&EndpointInfo]| {
            nat.chain(chain);
            if let Some(seconds) = svc.session_affinity_seconds {
                for ep in list {
                    let sep = sep_chain(ep);
                    let mut m = Vec::new();
                    svc_comment(&mut m, format!("{name} -> {}", ep.key()));
                    m.push(Match::RecentCheck {
                        list: sep.clone(),
                        seconds,
                    });
                    nat.rule(chain, m, jump(&sep));
                }
            }
            let n = list.len();
            for (i, ep) in list.iter().enumerate() {
                let mut m = Vec::new();
                svc_comment(&mut m, format!("{name} -> {}", ep.key()));
                if i + 1 < n {
                    m.push(Match::Statistic { n: n - i });
                }
                nat.rule(chain, m, jump(&sep_chain(ep)));
            }
        };
        // The masquerade rule (I) must come first in its chain: declare it
        // in emission order (the rules are grouped per chain afterwards).
        if uses_cluster_chain {
            write_lb(&mut nat, &svc_chain, &eps.cluster);
        }
        if uses_local_chain {
            write_lb(&mut nat, &svl_chain, &eps.local);
        }
        // N. KUBE-SEP-.
        for ep in &eps.all_reachable {
            let sep = sep_chain(ep);
            nat.chain(&sep);
            let mut m = Vec::new();
            svc_comment(&mut m, name.clone());
            let mut masq = m.clone();
            masq.push(Match::Src {
                addr: Addr::Ip(ep.addr.ip()),
                negate: false,
            });
            nat.rule(&sep, masq, jump(names::MARK_MASQ));
            if svc.session_affinity_seconds.is_some() {
                m.push(Match::RecentSet { list: sep.clone() });
            }
            m.push(Match::Proto(proto));
            nat.rule(&sep, m, Target::Dnat(ep.addr));
        }
    }

    // The last rule of nat KUBE-SERVICES: hand local destinations to
    // KUBE-NODEPORTS.
    let np_comment = "kubernetes service nodeports; NOTE: this must be the last rule in this chain";
    match &input.node_port_ips {
        None => {
            let mut m = vec![comment(np_comment), Match::AddrTypeLocal(Side::Dst)];
            if is_v6 || !localhost_nodeports {
                m.push(Match::Dst {
                    addr: Addr::Net(loopback_net(family)),
                    negate: true,
                });
            }
            nat.rule(names::SERVICES, m, jump(names::NODEPORTS));
        }
        Some(ips) => {
            for ip in ips.iter().filter(|ip| IpFamily::of(ip) == family) {
                if ip.is_loopback() && (is_v6 || !localhost_nodeports) {
                    continue;
                }
                nat.rule(
                    names::SERVICES,
                    vec![comment(np_comment), dst_ip(*ip)],
                    jump(names::NODEPORTS),
                );
            }
        }
    }
    // KUBE-FORWARD (conntrack liberal off, nfacct counters present: the fake
    // proxier's and a usual node's setting).
    filter.rule(
        names::FORWARD,
        vec![
            Match::Conntrack {
                state: CtState::Invalid,
                negate: false,
            },
            Match::Nfacct(names::NFACCT_CT_INVALID),
        ],
        Target::Drop(DropReason::Invalid),
    );
    filter.rule(
        names::FORWARD,
        vec![
            comment("kubernetes forwarding rules"),
            Match::Mark {
                mark,
                negate: false,
            },
        ],
        Target::Accept,
    );
    filter.rule(
        names::FORWARD,
        vec![
            comment("kubernetes forwarding conntrack rule"),
            Match::Conntrack {
                state: CtState::RelatedEstablished,
                negate: false,
            },
        ],
        Target::Accept,
    );

    let mut tables = vec![arrange(Table::Filter, filter), arrange(Table::Nat, nat)];
    let lines = super::render::layout(&mut tables);
    let chain_endpoints = chain_endpoints(&tables);
    let mut local_ips = input.node.ips.clone();
    if !local_ips.contains(&input.node.primary_ip) {
        local_ips.insert(0, input.node.primary_ip);
    }
    Compiled {
        family,
        hooks: hooks(localhost_nodeports),
        tables,
        chain_endpoints,
        local_ips,
        masquerade_mark: mark,
        lines,
    }
}

/// kube-proxy's `UsesClusterEndpoints()`: `!internalPolicyLocal ||
/// ExternallyAccessible()`.
fn uses_cluster_endpoints(svc: &ServicePortInfo) -> bool {
    !svc.internal_policy_local || svc.externally_accessible()
}

/// The Service name of a rule's comment: up to the first space or colon.
fn comment_service(rule: &Rule) -> String {
    let c = rule.comment().unwrap_or("");
    let end = c.find([' ', ':']).unwrap_or(c.len());
    c[..end].to_string()
}

/// Group emitted rules by chain and order chains and rules as the upstream
/// tests do.
fn arrange(table: Table, emit: Emit) -> TableRules {
    let mut declared = emit.declared;
    let mut seen = emit.declared_set;
    for (c, _) in &emit.rules {
        if !seen.contains(c) {
            seen.insert(c.clone());
            declared.push(c.clone());
        }
    }
    crate::order::sort_by(&mut declared, |a, b| chain_key(a).cmp(&chain_key(b)));
    let index: BTreeMap<String, usize> = crate::order::map(
        declared
            .iter()
            .enumerate()
            .map(|(i, name)| (name.clone(), i)),
    );
    let mut chains: Vec<Chain> = declared
        .into_iter()
        .map(|name| Chain {
            name,
            rules: Vec::new(),
            decl_line: 0,
            lines: Vec::new(),
        })
        .collect();
    for (c, r) in emit.rules {
        if let Some(&i) = index.get(&c) {
            chains[i].rules.push(r);
        }
    }
    for ch in chains.iter_mut() {
        if ch.name == names::NODEPORTS || ch.name == names::SERVICES {
            let last_ok = table == Table::Nat && ch.name == names::SERVICES;
            crate::order::sort_by_key(&mut ch.rules, |r| {
                let last = last_ok
                    && r.comment()
                        .is_some_and(|c| c.contains("must be the last rule"));
                (last, comment_service(r))
            });
        }
    }
    TableRules { table, chains }
}

fn chain_endpoints(tables: &[TableRules]) -> BTreeMap<String, Vec<SocketAddr>> {
    let mut out = BTreeMap::new();
    let Some(nat) = tables.iter().find(|t| t.table == Table::Nat) else {
        return out;
    };
    let dnat_of = |sep: &str| -> Option<SocketAddr> {
        nat.chain(sep)?.rules.iter().find_map(|r| match r.target {
            Target::Dnat(a) => Some(a),
            _ => None,
        })
    };
    for ch in &nat.chains {
        if !(ch.name.starts_with(names::SVC) || ch.name.starts_with(names::SVL)) {
            continue;
        }
        let mut eps: Vec<SocketAddr> = Vec::new();
        for r in &ch.rules {
            if let Target::Jump(to) = &r.target {
                if to.starts_with(names::SEP) {
                    if let Some(a) = dnat_of(to) {
                        if !eps.contains(&a) {
                            eps.push(a);
                        }
                    }
                }
            }
        }
        out.insert(ch.name.clone(), eps);
    }
    out
}

/// The jumps kube-proxy (and the kubelet, for KUBE-FIREWALL) put in the
/// built-in chains. Each is inserted at the top (`-I`), in the order of
/// `iptablesJumpChains`, so on a fresh node the last inserted comes first.
fn hooks(firewall: bool) -> Vec<HookChain> {
    let new = || Match::Conntrack {
        state: CtState::New,
        negate: false,
    };
    let services_jump = || {
        Rule::new(
            vec![comment("kubernetes service portals")],
            jump(names::SERVICES),
        )
    };
    let fw_jump = || Rule::new(vec![], jump(names::FIREWALL));
    let proxy_fw = || {
        Rule::new(
            vec![new(), comment("kubernetes load balancer firewall")],
            jump(names::PROXY_FIREWALL),
        )
    };
    let ext = || {
        Rule::new(
            vec![
                new(),
                comment("kubernetes externally-visible service portals"),
            ],
            jump(names::EXTERNAL_SERVICES),
        )
    };
    let mut input = Vec::new();
    let mut output = Vec::new();
    if firewall {
        input.push(fw_jump());
        output.push(fw_jump());
    }
    input.push(proxy_fw());
    input.push(Rule::new(
        vec![comment("kubernetes health check service ports")],
        jump(names::NODEPORTS),
    ));
    input.push(ext());
    output.push(proxy_fw());
    output.push(Rule::new(
        vec![new(), comment("kubernetes service portals")],
        jump(names::SERVICES),
    ));
    let forward = vec![
        proxy_fw(),
        Rule::new(
            vec![comment("kubernetes forwarding rules")],
            jump(names::FORWARD),
        ),
        Rule::new(
            vec![new(), comment("kubernetes service portals")],
            jump(names::SERVICES),
        ),
        ext(),
    ];
    vec![
        HookChain {
            table: Table::Nat,
            name: "PREROUTING",
            rules: vec![services_jump()],
        },
        HookChain {
            table: Table::Nat,
            name: "OUTPUT",
            rules: vec![services_jump()],
        },
        HookChain {
            table: Table::Nat,
            name: "POSTROUTING",
            rules: vec![Rule::new(
                vec![comment("kubernetes postrouting rules")],
                jump(names::POSTROUTING),
            )],
        },
        HookChain {
            table: Table::Filter,
            name: "INPUT",
            rules: input,
        },
        HookChain {
            table: Table::Filter,
            name: "FORWARD",
            rules: forward,
        },
        HookChain {
            table: Table::Filter,
            name: "OUTPUT",
            rules: output,
        },
    ]
}
