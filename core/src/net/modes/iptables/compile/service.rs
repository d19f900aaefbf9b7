//! One Service port's share of a node's iptables rules, in kube-proxy's
//! code order (`syncProxyRules`' loop over Service ports): the jumps from
//! KUBE-SERVICES and KUBE-NODEPORTS, the health-check ACCEPT and the filter
//! REJECT/DROP rules, then its own chains KUBE-EXT-, KUBE-FW-,
//! KUBE-SVC-/KUBE-SVL- and one KUBE-SEP- per endpoint.
//!
//! It appends to the tables the caller owns and never writes the node-wide
//! rules (those, and the final order of everything, are [`super`]'s). It
//! must never pick endpoints itself: eligibility comes from
//! [`crate::net::proxy::topology`] (with the two corrections noted in
//! `Endpoints::of`).

use super::{comment, dst_ip, loopback_net, Emit, Fixed, Id, LazyChain};
use crate::model::packet::IpFamily;
use crate::net::modes::iptables::rules::{names, Addr, Match, Matches, Side, Target};
use crate::net::modes::DropReason;
use crate::net::proxy::naming::{concat, push_hash_prefix, service_port_name_text};
use crate::net::proxy::{EndpointInfo, ServicePortInfo, Topology};
use ipnet::IpNet;
use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};

/// What every Service port's rules read from the node and its settings.
pub(super) struct Node {
    pub family: IpFamily,
    /// `localhostNodePorts` as it applies (off for IPv6).
    pub localhost_nodeports: bool,
    /// The local-traffic detector's CIDR, if any.
    pub detector: Option<IpNet>,
    pub masquerade_all: bool,
    /// Over `largeClusterEndpointsThreshold`: SVC→SEP and SEP rules lose
    /// their comments.
    pub large_cluster: bool,
    pub primary_ip: IpAddr,
}

/// Buffers reused for every chain name.
#[derive(Default)]
pub(super) struct Scratch {
    hash_input: String,
    chain_name: String,
}

/// Emit one Service port's rules (nothing for one without a cluster IP):
/// the plan first, then each part in kube-proxy's order (the letters are
/// the parts of `syncProxyRules`' loop).
#[allow(clippy::too_many_arguments)]
pub(super) fn service_port(
    node: &Node,
    fx: &Fixed,
    filter: &mut Emit,
    nat: &mut Emit,
    scratch: &mut Scratch,
    svc: &ServicePortInfo,
    svc_eps: &[EndpointInfo],
    topo: Option<Topology<'_>>,
) {
    let Some(cluster_ip) = svc.cluster_ip else {
        return;
    };
    let name = service_port_name_text(&svc.name);
    let proto = svc.name.protocol;
    // `service_port_hash_input`, from the name already written.
    scratch.hash_input.clear();
    scratch.hash_input.push_str(&name);
    scratch.hash_input.push_str(proto.as_lower());
    let mut hash = String::with_capacity(16);
    push_hash_prefix(&mut hash, &scratch.hash_input, 16);
    let eps = Endpoints::of(svc, svc_eps, topo);
    // KUBE-SVC-/KUBE-SVL-: a masquerade rule, then per endpoint an
    // affinity check and a jump. The others grow as needed.
    let per_ep = if svc.session_affinity_seconds.is_some() {
        2
    } else {
        1
    };
    let mut ch = Chains {
        svc: LazyChain::new(names::SVC, &hash, 1 + per_ep * eps.cluster.len()),
        svl: LazyChain::new(names::SVL, &hash, 1 + per_ep * eps.local.len()),
        ext: LazyChain::new(names::EXT, &hash, 0),
        fw: LazyChain::new(names::FW, &hash, 0),
    };
    // KUBE-SEP- chains, one per reachable endpoint, declared one after
    // the other: the k-th endpoint's chain is `first_sep + k`.
    let first_sep = nat.chains.len();
    for (text, _) in &eps.all {
        scratch.hash_input.clear();
        scratch.hash_input.push_str(&name);
        scratch.hash_input.push_str(proto.as_lower());
        scratch.hash_input.push_str(text.as_str());
        scratch.chain_name.clear();
        scratch.chain_name.push_str(names::SEP);
        push_hash_prefix(&mut scratch.chain_name, &scratch.hash_input, 16);
        nat.chain(scratch.chain_name.as_str());
    }
    let p = Port::new(node, fx, svc, eps, (name, cluster_ip), first_sep);
    address_rules(&p, &mut ch, filter, nat);
    node_port_rules(&p, &mut ch, filter, nat);
    ext_chain_rules(&p, &mut ch, nat);
    fw_chain_rules(&p, &mut ch, nat);
    lb_chain_rules(&p, &mut ch, nat);
    sep_chain_rules(&p, nat);
}

/// The port's chains that exist only when a rule jumps to them.
struct Chains<'h> {
    svc: LazyChain<'h>,
    svl: LazyChain<'h>,
    ext: LazyChain<'h>,
    fw: LazyChain<'h>,
}

/// One Service port, with what its categorised endpoints call for,
/// decided once.
struct Port<'a> {
    node: &'a Node,
    fx: &'a Fixed,
    svc: &'a ServicePortInfo,
    eps: Endpoints<'a>,
    /// `ns/svc:port`.
    name: String,
    proto: crate::model::packet::Protocol,
    cluster_ip: IpAddr,
    /// The first KUBE-SEP- chain; the k-th endpoint's is `first_sep + k`.
    first_sep: Id,
    /// (address, chain), sorted: for finding an endpoint's chain.
    by_addr: Vec<(SocketAddr, Id)>,
    has_any: bool,
    uses_cluster_chain: bool,
    uses_local_chain: bool,
    internal_is_local: bool,
    has_internal: bool,
    external_is_local: bool,
    has_external: bool,
    uses_ext: bool,
    uses_fw: bool,
}

impl<'a> Port<'a> {
    fn new(
        node: &'a Node,
        fx: &'a Fixed,
        svc: &'a ServicePortInfo,
        eps: Endpoints<'a>,
        (name, cluster_ip): (String, IpAddr),
        first_sep: Id,
    ) -> Port<'a> {
        let mut by_addr: Vec<(SocketAddr, Id)> = Vec::with_capacity(eps.all.len());
        by_addr.extend(
            eps.all
                .iter()
                .enumerate()
                .map(|(k, (_, ep))| (ep.addr, first_sep + k)),
        );
        by_addr.sort_unstable_by_key(|(a, _)| *a);
        let has_any = eps.has_any;
        let has_local = !eps.local.is_empty();
        Port {
            node,
            fx,
            svc,
            name,
            proto: svc.name.protocol,
            cluster_ip,
            first_sep,
            by_addr,
            has_any,
            uses_cluster_chain: !eps.cluster.is_empty() && uses_cluster_endpoints(svc),
            uses_local_chain: has_local && svc.uses_local_endpoints(),
            internal_is_local: svc.internal_policy_local,
            has_internal: has_any && (!svc.internal_policy_local || has_local),
            external_is_local: svc.external_policy_local,
            has_external: has_any && (!svc.external_policy_local || has_local),
            uses_ext: has_any && svc.externally_accessible(),
            uses_fw: has_any
                && !svc.load_balancer_ips.is_empty()
                && !svc.load_balancer_source_ranges.is_empty(),
            eps,
        }
    }

    fn sep_of(&self, ep: &EndpointInfo) -> Option<Id> {
        self.by_addr
            .binary_search_by_key(&ep.addr, |(a, _)| *a)
            .ok()
            .map(|i| self.by_addr[i].1)
    }

    /// The filter rules' target when there is nowhere to go.
    fn filter_target(&self) -> Target {
        if !self.has_any {
            Target::Reject(DropReason::NoEndpoints)
        } else {
            Target::Drop(DropReason::NoLocalEndpoints)
        }
    }

    /// Their comment (written only for the rules that need it).
    fn no_endpoints_comment(&self) -> String {
        if !self.has_any {
            format!("{} has no endpoints", self.name)
        } else {
            format!("{} has no local endpoints", self.name)
        }
    }

    fn port_matches(&self, c: String, ip: IpAddr, port: u16) -> Vec<Match> {
        vec![
            comment(c),
            Match::Proto(self.proto),
            dst_ip(ip),
            Match::DPort(port),
        ]
    }

    /// A comment on a KUBE-SVC-/KUBE-SVL- rule, unless the cluster is
    /// large.
    fn svc_comment(&self, m: &mut Matches, text: &dyn Fn() -> String) {
        if !self.node.large_cluster {
            m.push(Match::Comment(text()));
        }
    }
}

/// A–D: the jumps from KUBE-SERVICES for the ClusterIP, external IPs and
/// load-balancer IPs, and their filter rules without endpoints.
fn address_rules(p: &Port<'_>, ch: &mut Chains<'_>, filter: &mut Emit, nat: &mut Emit) {
    let Port {
        fx,
        svc,
        ref name,
        cluster_ip,
        has_any,
        has_internal,
        has_external,
        internal_is_local,
        uses_fw,
        ..
    } = *p;
    // A. ClusterIP.
    if has_internal {
        let to = if internal_is_local {
            ch.svl.id(nat)
        } else {
            ch.svc.id(nat)
        };
        nat.jump(
            fx.n_services,
            p.port_matches(concat(name, " cluster IP"), cluster_ip, svc.port),
            to,
        );
    } else {
        filter.rule(
            fx.f_services,
            p.port_matches(p.no_endpoints_comment(), cluster_ip, svc.port),
            p.filter_target(),
        );
    }
    // B. externalIPs.
    for ip in &svc.external_ips {
        if has_any {
            let to = ch.ext.id(nat);
            nat.jump(
                fx.n_services,
                p.port_matches(format!("{name} external IP"), *ip, svc.port),
                to,
            );
        }
        if !has_external {
            filter.rule(
                fx.f_external,
                p.port_matches(p.no_endpoints_comment(), *ip, svc.port),
                p.filter_target(),
            );
        }
    }
    // C. LoadBalancer IPs (and their firewall DROPs).
    for ip in &svc.load_balancer_ips {
        if has_any {
            let to = if uses_fw {
                ch.fw.id(nat)
            } else {
                ch.ext.id(nat)
            };
            nat.jump(
                fx.n_services,
                p.port_matches(format!("{name} loadbalancer IP"), *ip, svc.port),
                to,
            );
        }
        if uses_fw {
            filter.rule(
                fx.f_proxy_firewall,
                p.port_matches(
                    format!("{name} traffic not accepted by {}", ch.fw.name()),
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
                fx.f_external,
                p.port_matches(p.no_endpoints_comment(), *ip, svc.port),
                p.filter_target(),
            );
        }
    }
}

/// E–H: the jumps from KUBE-NODEPORTS, their filter rules without
/// endpoints, and the health-check NodePort's ACCEPT.
fn node_port_rules(p: &Port<'_>, ch: &mut Chains<'_>, filter: &mut Emit, nat: &mut Emit) {
    let Port {
        node,
        fx,
        svc,
        ref name,
        proto,
        has_any,
        has_external,
        ..
    } = *p;
    // E/F. NodePort.
    if svc.node_port != 0 {
        if has_any {
            let to = ch.ext.id(nat);
            if node.localhost_nodeports {
                nat.jump(
                    fx.n_nodeports,
                    vec![
                        comment(name.clone()),
                        Match::Proto(proto),
                        Match::Dst {
                            addr: Addr::Net(loopback_net(node.family)),
                            negate: false,
                        },
                        Match::DPort(svc.node_port),
                        Match::Nfacct(names::NFACCT_LOCALHOST_NPS),
                    ],
                    to,
                );
            }
            nat.jump(
                fx.n_nodeports,
                vec![
                    comment(name.clone()),
                    Match::Proto(proto),
                    Match::DPort(svc.node_port),
                ],
                to,
            );
        }
        if !has_external {
            filter.rule(
                fx.f_external,
                vec![
                    comment(p.no_endpoints_comment()),
                    Match::AddrTypeLocal(Side::Dst),
                    Match::Proto(proto),
                    Match::DPort(svc.node_port),
                ],
                p.filter_target(),
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
            fx.f_nodeports,
            vec![
                comment(format!("{name} health check node port")),
                Match::Proto(crate::model::packet::Protocol::Tcp),
                Match::DPort(hc_port),
            ],
            Target::Accept,
        );
    }
}

/// I–J: masquerading off-cluster traffic to the ClusterIP, and KUBE-EXT-.
fn ext_chain_rules(p: &Port<'_>, ch: &mut Chains<'_>, nat: &mut Emit) {
    let Port {
        node,
        fx,
        svc,
        ref name,
        cluster_ip,
        has_internal,
        has_external,
        internal_is_local,
        external_is_local,
        uses_ext,
        ..
    } = *p;
    // I. Masquerade off-cluster traffic to the ClusterIP.
    if has_internal && (node.masquerade_all || node.detector.is_some()) {
        let internal = if internal_is_local {
            ch.svl.id(nat)
        } else {
            ch.svc.id(nat)
        };
        let mut m = p.port_matches(concat(name, " cluster IP"), cluster_ip, svc.port);
        if !node.masquerade_all {
            if let Some(cidr) = node.detector {
                m.push(Match::Src {
                    addr: Addr::Net(cidr),
                    negate: true,
                });
            }
        }
        nat.jump(internal, m, fx.n_mark_masq);
    }
    // J. KUBE-EXT-.
    if uses_ext {
        let ext = ch.ext.id(nat);
        if !svc.external_policy_local {
            nat.jump(
                ext,
                vec![comment(format!(
                    "masquerade traffic for {name} external destinations"
                ))],
                fx.n_mark_masq,
            );
        } else {
            if let Some(cidr) = node.detector {
                let to = ch.svc.id(nat);
                nat.jump(
                    ext,
                    vec![
                        comment(format!("pod traffic for {name} external destinations")),
                        Match::Src {
                            addr: Addr::Net(cidr),
                            negate: false,
                        },
                    ],
                    to,
                );
            }
            nat.jump(
                ext,
                vec![
                    comment(format!(
                        "masquerade LOCAL traffic for {name} external destinations"
                    )),
                    Match::AddrTypeLocal(Side::Src),
                ],
                fx.n_mark_masq,
            );
            let to = ch.svc.id(nat);
            nat.jump(
                ext,
                vec![
                    comment(format!(
                        "route LOCAL traffic for {name} external destinations"
                    )),
                    Match::AddrTypeLocal(Side::Src),
                ],
                to,
            );
        }
        if has_external {
            let to = if external_is_local {
                ch.svl.id(nat)
            } else {
                ch.svc.id(nat)
            };
            nat.jump(ext, vec![], to);
        }
    }
}

/// K: KUBE-FW- (loadBalancerSourceRanges).
fn fw_chain_rules(p: &Port<'_>, ch: &mut Chains<'_>, nat: &mut Emit) {
    let Port {
        node,
        svc,
        ref name,
        uses_fw,
        ..
    } = *p;
    // K. KUBE-FW- (loadBalancerSourceRanges).
    if uses_fw {
        let fw = ch.fw.id(nat);
        let ext = ch.ext.id(nat);
        let c = format!("{name} loadbalancer IP");
        let mut allow_from_node = false;
        for cidr in &svc.load_balancer_source_ranges {
            nat.jump(
                fw,
                vec![
                    comment(c.clone()),
                    Match::Src {
                        addr: Addr::Net(*cidr),
                        negate: false,
                    },
                ],
                ext,
            );
            if cidr.contains(&node.primary_ip) {
                allow_from_node = true;
            }
        }
        if allow_from_node {
            for ip in &svc.load_balancer_ips {
                nat.jump(
                    fw,
                    vec![
                        comment(c.clone()),
                        Match::Src {
                            addr: Addr::Ip(*ip),
                            negate: false,
                        },
                    ],
                    ext,
                );
            }
        }
        nat.rule(
            fw,
            vec![comment(format!(
                "other traffic to {name} will be dropped by KUBE-PROXY-FIREWALL"
            ))],
            Target::Nothing,
        );
    }
}

/// L–M: KUBE-SVC- and KUBE-SVL-: affinity checks, then the cascade.
fn lb_chain_rules(p: &Port<'_>, ch: &mut Chains<'_>, nat: &mut Emit) {
    let Port {
        node,
        svc,
        ref name,
        uses_cluster_chain,
        uses_local_chain,
        ..
    } = *p;
    // The endpoints of the list, once each, in list order (the SVC/SVL
    // chain's SEP jumps: affinity checks, then the cascade, same order).
    let list_endpoints = |list: &[&EndpointInfo]| {
        let mut v: Vec<SocketAddr> = Vec::with_capacity(list.len());
        for ep in list {
            if p.sep_of(ep).is_some() && !v.contains(&ep.addr) {
                v.push(ep.addr);
            }
        }
        v
    };
    let write_lb = |nat: &mut Emit, chain: Id, list: &[&EndpointInfo]| {
        let affinity_rules = if svc.session_affinity_seconds.is_some() {
            list.len()
        } else {
            0
        };
        nat.chains[chain].rules.reserve(affinity_rules + list.len());
        if let Some(seconds) = svc.session_affinity_seconds {
            for ep in list {
                let Some(sep) = p.sep_of(ep) else { continue };
                let mut m = Matches::Empty;
                p.svc_comment(&mut m, &|| format!("{name} -> {}", ep.key()));
                m.push(Match::RecentCheck {
                    list: Box::new(nat.name(sep)),
                    seconds,
                });
                nat.jump(chain, m, sep);
            }
        }
        let n = list.len();
        for (i, ep) in list.iter().enumerate() {
            let Some(sep) = p.sep_of(ep) else { continue };
            let m: Matches = match (node.large_cluster, i + 1 < n) {
                (true, false) => Matches::Empty,
                (true, true) => [Match::Statistic { n: n - i }].into(),
                (false, more) => {
                    let c = Match::Comment(format!("{name} -> {}", ep.key()));
                    if more {
                        [c, Match::Statistic { n: n - i }].into()
                    } else {
                        [c].into()
                    }
                }
            };
            nat.jump(chain, m, sep);
        }
    };
    let mut svc_eps = Vec::new();
    let mut svl_eps = Vec::new();
    if uses_cluster_chain {
        let chain = ch.svc.id(nat);
        write_lb(nat, chain, &p.eps.cluster);
        svc_eps = list_endpoints(&p.eps.cluster);
    }
    if uses_local_chain {
        let chain = ch.svl.id(nat);
        write_lb(nat, chain, &p.eps.local);
        svl_eps = list_endpoints(&p.eps.local);
    }
    // The endpoints of every KUBE-SVC-/KUBE-SVL- chain, in rule order.
    if let Some(id) = ch.svc.id {
        nat.chains[id].endpoints = Some(svc_eps.into_boxed_slice());
    }
    if let Some(id) = ch.svl.id {
        nat.chains[id].endpoints = Some(svl_eps.into_boxed_slice());
    }
}

/// N: KUBE-SEP-, one per reachable endpoint.
fn sep_chain_rules(p: &Port<'_>, nat: &mut Emit) {
    let Port {
        node,
        fx,
        svc,
        ref name,
        proto,
        ..
    } = *p;
    // N. KUBE-SEP-. (Built whole rather than pushed match by match:
    // this runs for every endpoint.)
    for (k, (_, ep)) in p.eps.all.iter().enumerate() {
        let sep = p.first_sep + k;
        let src = Match::Src {
            addr: Addr::Ip(ep.addr.ip()),
            negate: false,
        };
        let recent = svc.session_affinity_seconds.map(|_| Match::RecentSet {
            list: Box::new(nat.name(sep)),
        });
        let proto = Match::Proto(proto);
        let (masq, dnat): (Matches, Matches) = if node.large_cluster {
            (
                [src].into(),
                match recent {
                    Some(r) => [r, proto].into(),
                    None => [proto].into(),
                },
            )
        } else {
            let c = Match::Comment(name.clone());
            (
                [c.clone(), src].into(),
                match recent {
                    Some(r) => vec![c, r, proto].into(),
                    None => [c, proto].into(),
                },
            )
        };
        nat.jump(sep, masq, fx.n_mark_masq);
        nat.rule(sep, dnat, Target::Dnat(ep.addr));
    }
}

/// kube-proxy's `UsesClusterEndpoints()`: `!internalPolicyLocal ||
/// ExternallyAccessible()`.
fn uses_cluster_endpoints(svc: &ServicePortInfo) -> bool {
    !svc.internal_policy_local || svc.externally_accessible()
}

/// Endpoint lists of one Service port, as kube-proxy's `CategorizeEndpoints`
/// returns them.
struct Endpoints<'a> {
    cluster: Vec<&'a EndpointInfo>,
    local: Vec<&'a EndpointInfo>,
    /// Every reachable endpoint with its `ip:port` text, sorted by that text
    /// (kube-proxy's order of endpoint chains).
    all: Vec<(AddrText, &'a EndpointInfo)>,
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
    fn of(
        svc: &ServicePortInfo,
        eps: &'a [EndpointInfo],
        topo: Option<crate::net::proxy::Topology<'_>>,
    ) -> Endpoints<'a> {
        // What `ProxyInput::categorize` returns for this Service port.
        let cat = crate::net::proxy::categorize_endpoints(svc, eps, topo);
        let uses_cluster = uses_cluster_endpoints(svc);
        let uses_local = svc.uses_local_endpoints();
        let usable = |e: &&EndpointInfo| e.ready || (e.serving && e.terminating);
        let pick = |idx: &[usize]| -> Vec<&'a EndpointInfo> {
            let mut v = Vec::with_capacity(idx.len());
            v.extend(idx.iter().filter_map(|&i| eps.get(i)));
            v
        };
        let cluster: Vec<&EndpointInfo> = if !uses_cluster {
            Vec::new()
        } else if let Some(c) = &cat.cluster {
            pick(c)
        } else {
            pick(&crate::net::proxy::cluster_endpoints(eps, topo))
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
        let mut all: Vec<(AddrText, &EndpointInfo)> =
            Vec::with_capacity(cluster.len() + local.len());
        all.extend(
            cluster
                .iter()
                .chain(local.iter())
                .map(|e| (AddrText::of(e.addr), *e)),
        );
        // By `ip:port` text; equal texts are equal addresses.
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all.dedup_by(|a, b| a.1.addr == b.1.addr);
        Endpoints {
            cluster,
            local,
            all,
            has_any,
        }
    }
}

/// An endpoint's `ip:port` text (what kube-proxy sorts endpoints by),
/// written on the stack rather than allocated once per endpoint. Ordered
/// as the text.
struct AddrText {
    len: u8,
    buf: [u8; 64],
}

impl AddrText {
    fn of(addr: SocketAddr) -> AddrText {
        struct W<'a>(&'a mut [u8; 64], &'a mut usize);
        impl std::fmt::Write for W<'_> {
            fn write_str(&mut self, s: &str) -> std::fmt::Result {
                let end = *self.1 + s.len();
                let dst = self.0.get_mut(*self.1..end).ok_or(std::fmt::Error)?;
                dst.copy_from_slice(s.as_bytes());
                *self.1 = end;
                Ok(())
            }
        }
        let mut buf = [0u8; 64];
        let mut len = 0;
        match addr {
            // What `Display` writes, without the formatting machinery (this
            // runs for every endpoint).
            SocketAddr::V4(a) => {
                for (i, o) in a.ip().octets().into_iter().enumerate() {
                    if i > 0 {
                        put_byte(&mut buf, &mut len, b'.');
                    }
                    put_decimal(&mut buf, &mut len, u32::from(o));
                }
                put_byte(&mut buf, &mut len, b':');
                put_decimal(&mut buf, &mut len, u32::from(a.port()));
            }
            SocketAddr::V6(_) => {
                let _ = write!(W(&mut buf, &mut len), "{addr}");
            }
        }
        AddrText {
            len: len as u8,
            buf,
        }
    }
    fn text(&self) -> &[u8] {
        &self.buf[..usize::from(self.len)]
    }
    fn as_str(&self) -> &str {
        std::str::from_utf8(self.text()).unwrap_or_default()
    }
}

fn put_byte(buf: &mut [u8; 64], len: &mut usize, b: u8) {
    if let Some(slot) = buf.get_mut(*len) {
        *slot = b;
        *len += 1;
    }
}

fn put_decimal(buf: &mut [u8; 64], len: &mut usize, n: u32) {
    let mut digits = [0u8; 10];
    let mut k = 0;
    let mut n = n;
    loop {
        digits[k % 10] = b'0' + (n % 10) as u8;
        k += 1;
        n /= 10;
        if n == 0 || k == 10 {
            break;
        }
    }
    for d in digits[..k].iter().rev() {
        put_byte(buf, len, *d);
    }
}

impl PartialEq for AddrText {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
    }
}

impl Eq for AddrText {}

impl PartialOrd for AddrText {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for AddrText {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.text().cmp(other.text())
    }
}

#[cfg(test)]
mod tests {
    use super::AddrText;
    use std::net::SocketAddr;

    #[test]
    fn addr_text_is_the_display_text() {
        for a in [
            "0.0.0.0:0",
            "255.255.255.255:65535",
            "10.1.2.3:8080",
            "192.168.0.10:80",
            "[fd00::a]:80",
            "[::ffff:1.2.3.4]:9",
        ] {
            let addr: SocketAddr = a.parse().expect("address");
            assert_eq!(AddrText::of(addr).as_str(), addr.to_string());
        }
    }
}
