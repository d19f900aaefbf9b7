//! One Service port's part of the `kube-proxy` table, as kube-proxy's
//! nftables proxier writes it in `syncProxyRules`: its service, local,
//! external and firewall chains, one chain per endpoint (and an affinity
//! set per endpoint with ClientIP affinity), and its elements of the
//! node-wide sets and verdict maps. Renders the endpoint categorisation
//! already decided; writes no text.

use super::super::model::*;
use super::{
    hash_and_truncate, push_endpoint_chain_name, push_service_port_text, Builder, EndpointChain,
    Gathered, MARK_MASQ, REJECT_CHAIN,
};
use crate::model::packet::IpFamily;
use crate::net::proxy::naming::{concat, service_port_name_text};
use crate::net::proxy::{
    categorize_endpoints, Categorized, EndpointInfo, LocalDetector, ProxyInput, ServicePortInfo,
    ServicePortName,
};
use std::net::{IpAddr, SocketAddr};

/// Buffers reused from one Service port to the next (names are built in
/// them), and the one jump every endpoint chain has.
pub(super) struct Buffers {
    prefix: String,
    chain_name: String,
    scratch: String,
    mark_masq: Expr,
}

impl Buffers {
    pub(super) fn new(mark_masq: Expr) -> Buffers {
        Buffers {
            prefix: String::new(),
            chain_name: String::new(),
            scratch: String::new(),
            mark_masq,
        }
    }
}

/// One Service port's names and what its categorised endpoints call for,
/// decided once before anything is written.
struct Port<'a> {
    svc: &'a ServicePortInfo,
    eps: &'a [EndpointInfo],
    cat: Categorized,
    cluster_ip: IpAddr,
    proto: crate::model::packet::Protocol,
    cluster_chain: String,
    local_chain: String,
    external_chain: String,
    fw_chain: String,
    /// `ns/svc:port`, the no-endpoint elements' comment.
    comment: String,
    affinity: Option<u32>,
    /// Per reachable endpoint (by index in `eps`, sorted): its chain's
    /// name, its affinity set's name, and the chain's position.
    ep_names: Vec<(usize, Name, String)>,
    ep_index: Vec<usize>,
    /// kube-proxy's `hasAnyEndpoints`.
    has_endpoints: bool,
    uses_cluster_chain: bool,
    uses_local_chain: bool,
    uses_external_chain: bool,
    /// The ClusterIP's chain (local or service) and whether it has one.
    internal_local: bool,
    has_internal: bool,
    external_local: bool,
    has_external: bool,
    /// This family's load-balancer addresses, and whether source ranges
    /// put them behind a firewall chain.
    lb_ips: Vec<IpAddr>,
    uses_fw: bool,
}

impl Port<'_> {
    fn names_of(&self, i: usize) -> Option<&(usize, Name, String)> {
        let k = self
            .ep_names
            .binary_search_by_key(&i, |(j, _, _)| *j)
            .ok()?;
        self.ep_names.get(k)
    }

    fn ep_chain_of(&self, i: usize) -> Option<(&str, SocketAddr)> {
        let ep = self.eps.get(i)?;
        Some((&*self.names_of(i)?.1, ep.addr))
    }

    fn affinity_set_of(&self, i: usize) -> String {
        self.names_of(i).map(|n| n.2.clone()).unwrap_or_default()
    }

    fn index_of(&self, i: usize) -> Option<usize> {
        let k = self
            .ep_names
            .binary_search_by_key(&i, |(j, _, _)| *j)
            .ok()?;
        self.ep_index.get(k).copied()
    }

    fn cluster_eps(&self) -> &[usize] {
        self.cat.cluster.as_deref().unwrap_or(&[])
    }

    fn local_eps(&self) -> &[usize] {
        self.cat.local.as_deref().unwrap_or(&[])
    }

    fn internal_chain(&self) -> &str {
        if self.internal_local {
            &self.local_chain
        } else {
            &self.cluster_chain
        }
    }

    fn external_policy_chain(&self) -> &str {
        if self.external_local {
            &self.local_chain
        } else {
            &self.cluster_chain
        }
    }
}

/// One Service port (of the node's family, with a ClusterIP): its chains
/// into `b`, its elements into `g`.
pub(super) fn service_port(
    b: &mut Builder,
    input: &ProxyInput,
    port: (&ServicePortName, &ServicePortInfo, &[EndpointInfo]),
    g: &mut Gathered,
    bufs: &mut Buffers,
) {
    let Some(p) = plan(b, input, port, bufs) else {
        return;
    };
    map_elements(b, input.family, &p, g);
    policy_rules(b, input, &p);
    endpoint_rules(b, &p, g, &bufs.mark_masq);
}

/// Name the port's chains, decide which it uses, and create them in
/// kube-proxy's order: endpoint chains, policy chains, external chain,
/// firewall chain. `None` for a port without a ClusterIP of this family.
fn plan<'a>(
    b: &mut Builder,
    input: &ProxyInput,
    (name, svc, eps): (&ServicePortName, &'a ServicePortInfo, &'a [EndpointInfo]),
    bufs: &mut Buffers,
) -> Option<Port<'a>> {
    let family = input.family;
    let cluster_ip = svc.cluster_ip?;
    if IpFamily::of(&cluster_ip) != family {
        return None;
    }
    // What `ProxyInput::categorize` returns for this Service port.
    let cat = categorize_endpoints(svc, eps, input.topology());
    // `ns/svc/proto/port`: the text of every chain name's hash.
    bufs.prefix.clear();
    push_service_port_text(&mut bufs.prefix, name);
    // (Each name in one allocation of its exact size: this runs for
    // every Service port.)
    let base = hash_and_truncate(&bufs.prefix);
    let affinity = svc.session_affinity_seconds;
    // Endpoint chain (and affinity set) names, one sha256 per endpoint,
    // built in reused buffers.
    let mut ep_names: Vec<(usize, Name, String)> = Vec::with_capacity(cat.all_reachable.len());
    ep_names.extend(cat.all_reachable.iter().filter_map(|&i| {
        let addr = eps.get(i)?.addr;
        push_endpoint_chain_name(&mut bufs.chain_name, &mut bufs.scratch, &bufs.prefix, &addr);
        let set = if affinity.is_some() {
            format!("affinity-{}", &bufs.chain_name["endpoint-".len()..])
        } else {
            String::new()
        };
        Some((i, Name::from(bufs.chain_name.as_str()), set))
    }));
    let has_cluster_eps = cat.cluster.as_ref().is_some_and(|c| !c.is_empty());
    let has_local_eps = cat.local.as_ref().is_some_and(|c| !c.is_empty());
    // kube-proxy's `hasAnyEndpoints`: usable endpoints on ANY node. With a
    // Local policy, CategorizeEndpoints also counts remote ready (or
    // serving-terminating) endpoints, which `Categorized::has_any` does not.
    let has_endpoints = cat.has_any
        || (svc.uses_local_endpoints()
            && eps.iter().any(|e| e.ready || (e.serving && e.terminating)));
    let lb_ips: Vec<IpAddr> = svc
        .load_balancer_ips
        .iter()
        .filter(|ip| IpFamily::of(ip) == family)
        .copied()
        .collect();
    let mut p = Port {
        svc,
        eps,
        cluster_ip,
        proto: name.protocol,
        cluster_chain: concat("service-", &base),
        local_chain: concat("local-", &base),
        external_chain: concat("external-", &base),
        fw_chain: concat("firewall-", &base),
        comment: service_port_name_text(name),
        affinity,
        ep_names,
        ep_index: Vec::new(),
        has_endpoints,
        uses_cluster_chain: has_cluster_eps && svc.uses_cluster_endpoints(),
        uses_local_chain: has_local_eps && svc.uses_local_endpoints(),
        uses_external_chain: has_endpoints && svc.externally_accessible(),
        internal_local: svc.internal_policy_local,
        has_internal: has_endpoints && (!svc.internal_policy_local || has_local_eps),
        external_local: svc.external_policy_local,
        has_external: has_endpoints && (!svc.external_policy_local || has_local_eps),
        uses_fw: !lb_ips.is_empty() && !svc.load_balancer_source_ranges.is_empty(),
        lb_ips,
        cat,
    };
    // Their positions, so their rules and references need no lookup by
    // name (five per endpoint were most of a 10,000-Service compile's
    // string comparisons). Endpoint chains are distinct (one per address,
    // named by a hash of it) and only ever referred to by position: not
    // entered in the by-name map.
    p.ep_index = p
        .ep_names
        .iter()
        .map(|(_, c, _)| b.create_unlisted(c.clone()))
        .collect();
    if p.uses_cluster_chain {
        b.chain(&p.cluster_chain);
    }
    if p.uses_local_chain {
        b.chain(&p.local_chain);
    }
    if p.uses_external_chain {
        b.chain(&p.external_chain);
    }
    if p.uses_fw {
        b.chain(&p.fw_chain);
    }
    Some(p)
}

/// The port's elements of the ClusterIP set and the verdict maps: where
/// its ClusterIP, external IPs, load-balancer IPs and NodePort go, or
/// their drop or reject without endpoints.
fn map_elements(b: &Builder, family: IpFamily, p: &Port<'_>, g: &mut Gathered) {
    let (svc, cluster_ip, proto) = (p.svc, p.cluster_ip, p.proto);
    let (has_endpoints, has_internal, has_external) =
        (p.has_endpoints, p.has_internal, p.has_external);
    let (comment, external_chain, lb_ips, uses_fw) =
        (&p.comment, &p.external_chain, &p.lb_ips, p.uses_fw);
    let fw_chain = &p.fw_chain;
    let internal_chain = p.internal_chain();
    let reject = Verdict::Goto(b.refer(REJECT_CHAIN));
    let internal_filter = if has_endpoints {
        Verdict::Drop
    } else {
        reject.clone()
    };
    let external_filter = internal_filter.clone();
    g.cluster_ips.push(cluster_ip);
    let key = |ip: IpAddr, port: u16| ElemKey {
        addr: Some(ip),
        protocol: proto,
        port,
    };
    if has_internal {
        g.service_ips.push(MapElem {
            key: key(cluster_ip, svc.port),
            comment: None,
            verdict: Verdict::Goto(b.refer(internal_chain)),
        });
    } else {
        g.no_ep_services.push(MapElem {
            key: key(cluster_ip, svc.port),
            comment: Some(comment.clone()),
            verdict: internal_filter.clone(),
        });
    }
    for ip in svc
        .external_ips
        .iter()
        .filter(|ip| IpFamily::of(ip) == family)
    {
        if has_endpoints {
            g.service_ips.push(MapElem {
                key: key(*ip, svc.port),
                comment: None,
                verdict: Verdict::Goto(b.refer(external_chain)),
            });
        }
        if !has_external {
            g.no_ep_services.push(MapElem {
                key: key(*ip, svc.port),
                comment: Some(comment.clone()),
                verdict: external_filter.clone(),
            });
        }
    }
    for ip in lb_ips {
        if has_endpoints {
            g.service_ips.push(MapElem {
                key: key(*ip, svc.port),
                comment: None,
                verdict: Verdict::Goto(b.refer(external_chain)),
            });
        }
        if uses_fw {
            g.firewall_ips.push(MapElem {
                key: key(*ip, svc.port),
                comment: None,
                verdict: Verdict::Goto(b.refer(fw_chain)),
            });
        }
    }
    if !has_external {
        for ip in lb_ips {
            g.no_ep_services.push(MapElem {
                key: key(*ip, svc.port),
                comment: Some(comment.clone()),
                verdict: external_filter.clone(),
            });
        }
    }
    if svc.node_port != 0 {
        let np_key = ElemKey {
            addr: None,
            protocol: proto,
            port: svc.node_port,
        };
        if has_endpoints {
            g.service_nodeports.push(MapElem {
                key: np_key,
                comment: None,
                verdict: Verdict::Goto(b.refer(external_chain)),
            });
        }
        if !has_external {
            g.no_ep_nodeports.push(MapElem {
                key: np_key,
                comment: Some(comment.clone()),
                verdict: external_filter.clone(),
            });
        }
    }
}

/// Masquerading of ClusterIP traffic, the external chain's rules and the
/// firewall chain (loadBalancerSourceRanges).
fn policy_rules(b: &mut Builder, input: &ProxyInput, p: &Port<'_>) {
    let (svc, cluster_ip) = (p.svc, p.cluster_ip);
    let (has_internal, has_external) = (p.has_internal, p.has_external);
    let (external_chain, cluster_chain, fw_chain) =
        (&p.external_chain, &p.cluster_chain, &p.fw_chain);
    let (internal_chain, external_policy_chain) = (p.internal_chain(), p.external_policy_chain());
    let (uses_external_chain, uses_fw, lb_ips) = (p.uses_external_chain, p.uses_fw, &p.lb_ips);
    // Internal traffic: masquerade off-cluster (or all) ClusterIP traffic.
    if has_internal {
        if input.config.nftables_masquerade_all {
            b.rule(
                internal_chain,
                Rule::new(vec![Expr::Daddr(cluster_ip), b.jump(MARK_MASQ)]),
            );
        } else if let LocalDetector::Cidr(c) = &input.local_detector {
            b.rule(
                internal_chain,
                Rule::new(vec![
                    Expr::Daddr(cluster_ip),
                    Expr::SaddrNot(AddrSpec::Net(*c)),
                    b.jump(MARK_MASQ),
                ]),
            );
        }
    }
    // External traffic.
    if uses_external_chain {
        if !svc.external_policy_local {
            b.rule(external_chain, Rule::new(vec![b.jump(MARK_MASQ)]));
        } else {
            if let LocalDetector::Cidr(c) = &input.local_detector {
                b.rule(
                    external_chain,
                    Rule::commented(
                        vec![Expr::Saddr(AddrSpec::Net(*c)), b.goto(cluster_chain)],
                        "short-circuit pod traffic",
                    ),
                );
            }
            b.rule(
                external_chain,
                Rule::commented(
                    vec![Expr::FibSaddrLocal, b.jump(MARK_MASQ)],
                    "masquerade local traffic",
                ),
            );
            b.rule(
                external_chain,
                Rule::commented(
                    vec![Expr::FibSaddrLocal, b.goto(cluster_chain)],
                    "short-circuit local traffic",
                ),
            );
        }
        if has_external {
            b.rule(
                external_chain,
                Rule::new(vec![b.goto(external_policy_chain)]),
            );
        }
    }
    // Firewall (loadBalancerSourceRanges).
    if uses_fw {
        let mut sources: Vec<AddrSpec> = Vec::new();
        let mut allow_from_node = false;
        for c in &svc.load_balancer_source_ranges {
            sources.push(AddrSpec::Net(*c));
            if c.contains(&input.node.primary_ip) {
                allow_from_node = true;
            }
        }
        if allow_from_node {
            sources.extend(lb_ips.iter().map(|ip| AddrSpec::Ip(*ip)));
        }
        b.rule(
            fw_chain,
            Rule::new(vec![
                Expr::SaddrNotInAnon(sources),
                Expr::Verdict(Verdict::Drop),
            ]),
        );
    }
}

/// Affinity sets, the service and local chains' picks of an endpoint, and
/// each endpoint chain's masquerade, affinity update and DNAT.
fn endpoint_rules(b: &mut Builder, p: &Port<'_>, g: &mut Gathered, mark_masq: &Expr) {
    let (affinity, proto, eps) = (p.affinity, p.proto, p.eps);
    let cat = &p.cat;
    // Affinity sets.
    if let Some(timeout) = affinity {
        for &i in &cat.all_reachable {
            if eps.get(i).is_some() {
                g.affinity_sets.push(Set {
                    name: p.affinity_set_of(i),
                    comment: None,
                    timeout_seconds: Some(timeout),
                    elements: Vec::new(),
                });
            }
        }
    }
    // Service → endpoint rules.
    let write_lb = |b: &mut Builder, chain: &str, idx: &[usize]| {
        let targets: Vec<(usize, usize)> = idx
            .iter()
            .filter_map(|&i| Some((i, p.index_of(i)?)))
            .collect();
        if affinity.is_some() {
            for &(i, at) in &targets {
                let goto = Expr::Verdict(Verdict::Goto(b.refer_at(at)));
                b.rule(
                    chain,
                    Rule::new(vec![Expr::SaddrInSet(p.affinity_set_of(i)), goto]),
                );
            }
        }
        b.rule(
            chain,
            Rule::new([Expr::NumgenVmap(
                targets.iter().map(|&(_, at)| b.refer_at(at)).collect(),
            )]),
        );
    };
    if p.uses_cluster_chain {
        write_lb(b, &p.cluster_chain, p.cluster_eps());
    }
    if p.uses_local_chain {
        write_lb(b, &p.local_chain, p.local_eps());
    }
    // Endpoint chains.
    for &i in &cat.all_reachable {
        let (Some((_, addr)), Some(at)) = (p.ep_chain_of(i), p.index_of(i)) else {
            continue;
        };
        let rules = &mut b.chains[at].rules;
        rules.push(Rule::new([
            Expr::Saddr(AddrSpec::Ip(addr.ip())),
            mark_masq.clone(),
        ]));
        let set = affinity.map(|_| p.affinity_set_of(i));
        if let Some(s) = &set {
            rules.push(Rule::new([Expr::UpdateSaddr(s.clone())]));
        }
        rules.push(Rule::new([Expr::L4Proto(proto), Expr::DnatTo(addr)]));
        let r = b.refer_at(at);
        if let Some(index) = r.index {
            g.endpoint_chains.push(EndpointChain {
                chain: r.name,
                index,
                endpoint: addr,
                affinity_set: set,
            });
        }
    }
}
