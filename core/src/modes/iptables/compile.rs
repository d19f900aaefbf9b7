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
    chain_key, name, name_of, names, Addr, Chain, ChainIndex, CtState, HookChain, Match, Matches,
    Name, Rule, Side, Table, TableRules, Target, INDEX_MIN_RULES,
};
use crate::modes::DropReason;
use crate::packet::IpFamily;
use crate::proxy::naming::{concat, push_hash_prefix, service_port_name_text};
use crate::proxy::{EndpointInfo, LocalDetector, ProxyInput, ServicePortInfo};
use ipnet::IpNet;
use std::fmt::Write as _;
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
    /// The node's own addresses (what `-m addrtype LOCAL` matches, with loopback).
    pub local_ips: Vec<IpAddr>,
    pub masquerade_mark: u32,
    /// Lines of the rendered text.
    pub line_count: usize,
}

impl Compiled {
    pub fn table(&self, t: Table) -> Option<&TableRules> {
        self.tables.iter().find(|x| x.table == t)
    }
}

/// A chain's position in [`Emit::chains`] (creation order).
type Id = usize;

/// Chains of one table in emission order, with their rules. Chains are
/// referred to by [`Id`], never looked up by name while compiling (a lookup
/// per rule made compiling 10,000 Services take seconds). [`arrange`] puts
/// them in rendering order in place.
#[derive(Default)]
struct Emit {
    chains: Vec<Chain>,
    /// Each chain's sort key: [`chain_key`]'s class and the first 16 bytes of
    /// its text as a big-endian number (which orders like the text). Made
    /// here, while the name is at hand: computing it in [`arrange`] meant a
    /// second pass over 100,000s of chains and was measurably slower.
    keys: Vec<(u8, u128)>,
}

impl Emit {
    /// Declare a chain (`:NAME - [0:0]`). Chain names are unique by
    /// construction (fixed names, or a hash of the Service port and
    /// endpoint); [`arrange`] still merges equal names.
    fn chain(&mut self, text: &str) -> Id {
        self.chain_with(name(text), 2)
    }
    /// Room for `n` more chains.
    fn reserve(&mut self, n: usize) {
        self.chains.reserve(n);
        self.keys.reserve(n);
    }
    /// [`Emit::chain`] with room for `rules` rules.
    fn chain_with(&mut self, name: Name, rules: usize) -> Id {
        let (class, text) = chain_key(&name);
        let mut head = [0u8; 16];
        let n = text.len().min(16);
        head[..n].copy_from_slice(&text.as_bytes()[..n]);
        self.keys.push((class, u128::from_be_bytes(head)));
        self.chains.push(Chain {
            name,
            rules: Vec::with_capacity(rules),
            decl_line: 0,
            first_line: 0,
            index: None,
            endpoints: None,
        });
        self.chains.len() - 1
    }
    fn name(&self, id: Id) -> Name {
        self.chains[id].name
    }
    fn rule(&mut self, chain: Id, matches: impl Into<Matches>, target: Target) {
        self.chains[chain].rules.push(Rule::new(matches, target));
    }
    fn jump(&mut self, chain: Id, matches: impl Into<Matches>, to: Id) {
        let target = Target::Jump(self.name(to));
        self.chains[chain].rules.push(Rule::new(matches, target));
    }
}

/// A per-Service-port chain, declared the first time a rule needs it.
/// Its name is written only then: most Service ports never use three of
/// their four (KUBE-SVL-, KUBE-EXT-, KUBE-FW-).
struct LazyChain<'h> {
    prefix: &'static str,
    hash: &'h str,
    /// How many rules it will hold, when known (else it grows).
    room: usize,
    id: Option<Id>,
}

impl<'h> LazyChain<'h> {
    fn new(prefix: &'static str, hash: &'h str, room: usize) -> LazyChain<'h> {
        LazyChain {
            prefix,
            hash,
            room,
            id: None,
        }
    }
    fn name(&self) -> Name {
        name_of(&[self.prefix, self.hash])
    }
    fn id(&mut self, e: &mut Emit) -> Id {
        match self.id {
            Some(id) => id,
            None => {
                let id = e.chain_with(self.name(), self.room);
                self.id = Some(id);
                id
            }
        }
    }
}

/// The fixed chains of each table.
struct Fixed {
    f_services: Id,
    f_external: Id,
    f_forward: Id,
    f_nodeports: Id,
    f_proxy_firewall: Id,
    n_services: Id,
    n_nodeports: Id,
    n_postrouting: Id,
    n_mark_masq: Id,
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
        topo: Option<crate::proxy::Topology<'_>>,
    ) -> Endpoints<'a> {
        // What `ProxyInput::categorize` returns for this Service port.
        let cat = crate::proxy::categorize_endpoints(svc, eps, topo);
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
            pick(&crate::proxy::cluster_endpoints(eps, topo))
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
    Target::Jump(name(c))
}

/// The comment of nat KUBE-SERVICES' last rules (the jumps to KUBE-NODEPORTS).
const NODEPORTS_LAST: &str =
    "kubernetes service nodeports; NOTE: this must be the last rule in this chain";

/// Whether a comment contains "must be the last rule" (what
/// `str::contains` answers; looking only where an `m` is is much cheaper
/// for 10,000s of short comments than setting up its searcher each time).
fn says_last(c: &str) -> bool {
    const LAST: &str = "must be the last rule";
    c.bytes()
        .enumerate()
        .any(|(i, b)| b == b'm' && c.as_bytes()[i..].starts_with(LAST.as_bytes()))
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
        .services_with_endpoints()
        .map(|(_, _, eps)| eps.len())
        .sum();
    let large_cluster = total_endpoints > LARGE_CLUSTER_ENDPOINTS;
    let svc_comment = |m: &mut Matches, text: &dyn Fn() -> String| {
        if !large_cluster {
            m.push(Match::Comment(text()));
        }
    };

    let mut filter = Emit::default();
    let mut nat = Emit::default();
    let fx = Fixed {
        f_services: filter.chain(names::SERVICES),
        f_external: filter.chain(names::EXTERNAL_SERVICES),
        f_forward: filter.chain(names::FORWARD),
        f_nodeports: filter.chain(names::NODEPORTS),
        f_proxy_firewall: filter.chain(names::PROXY_FIREWALL),
        n_services: nat.chain(names::SERVICES),
        n_nodeports: nat.chain(names::NODEPORTS),
        n_postrouting: nat.chain(names::POSTROUTING),
        n_mark_masq: nat.chain(names::MARK_MASQ),
    };
    nat.rule(
        fx.n_postrouting,
        vec![Match::Mark { mark, negate: true }],
        Target::Return,
    );
    nat.rule(fx.n_postrouting, vec![], Target::XorMark(mark));
    nat.rule(
        fx.n_postrouting,
        vec![comment("kubernetes service traffic requiring SNAT")],
        Target::Masquerade,
    );
    nat.rule(fx.n_mark_masq, vec![], Target::OrMark(mark));
    if localhost_nodeports {
        let fw = filter.chain(names::FIREWALL);
        filter.rule(
            fw,
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
    // Reused for every chain name.
    let (mut hash_input, mut chain_name) = (String::new(), String::new());
    nat.reserve(total_endpoints + 2 * input.services.len());

    for (_, svc, svc_eps) in input.services_with_endpoints() {
        let Some(cluster_ip) = svc.cluster_ip else {
            continue;
        };
        let name = service_port_name_text(&svc.name);
        let proto = svc.name.protocol;
        // `service_port_hash_input`, from the name already written.
        hash_input.clear();
        hash_input.push_str(&name);
        hash_input.push_str(proto.as_lower());
        let mut hash = String::with_capacity(16);
        push_hash_prefix(&mut hash, &hash_input, 16);
        let eps = Endpoints::of(svc, svc_eps, input.topology());
        // KUBE-SVC-/KUBE-SVL-: a masquerade rule, then per endpoint an
        // affinity check and a jump. The others grow as needed.
        let per_ep = if svc.session_affinity_seconds.is_some() {
            2
        } else {
            1
        };
        let mut svc_chain = LazyChain::new(names::SVC, &hash, 1 + per_ep * eps.cluster.len());
        let mut svl_chain = LazyChain::new(names::SVL, &hash, 1 + per_ep * eps.local.len());
        let mut ext_chain = LazyChain::new(names::EXT, &hash, 0);
        let mut fw_chain = LazyChain::new(names::FW, &hash, 0);
        // KUBE-SEP- chains, one per reachable endpoint, declared one after
        // the other: the k-th endpoint's chain is `first_sep + k`.
        let first_sep = nat.chains.len();
        for (text, _) in &eps.all {
            hash_input.clear();
            hash_input.push_str(&name);
            hash_input.push_str(proto.as_lower());
            hash_input.push_str(text.as_str());
            chain_name.clear();
            chain_name.push_str(names::SEP);
            push_hash_prefix(&mut chain_name, &hash_input, 16);
            nat.chain(chain_name.as_str());
        }
        // (address, chain), sorted: for finding an endpoint's chain.
        let mut by_addr: Vec<(SocketAddr, Id)> = Vec::with_capacity(eps.all.len());
        by_addr.extend(
            eps.all
                .iter()
                .enumerate()
                .map(|(k, (_, ep))| (ep.addr, first_sep + k)),
        );
        by_addr.sort_unstable_by_key(|(a, _)| *a);
        let sep_of = |ep: &EndpointInfo| -> Option<Id> {
            by_addr
                .binary_search_by_key(&ep.addr, |(a, _)| *a)
                .ok()
                .map(|i| by_addr[i].1)
        };
        let has_any = eps.has_any;
        let uses_cluster_chain = !eps.cluster.is_empty() && uses_cluster_endpoints(svc);
        let uses_local_chain = !eps.local.is_empty() && svc.uses_local_endpoints();
        let internal_is_local = svc.internal_policy_local;
        let has_internal = if internal_is_local {
            has_any && !eps.local.is_empty()
        } else {
            has_any
        };
        let external_is_local = svc.external_policy_local;
        let has_external = if external_is_local {
            has_any && !eps.local.is_empty()
        } else {
            has_any
        };
        let uses_ext = has_any && svc.externally_accessible();
        let uses_fw = has_any
            && !svc.load_balancer_ips.is_empty()
            && !svc.load_balancer_source_ranges.is_empty();
        // The filter rules' target and comment when there is nowhere to go
        // (the comment is written only for the rules that need it).
        let (int_target, ext_target) = if !has_any {
            (
                Target::Reject(DropReason::NoEndpoints),
                Target::Reject(DropReason::NoEndpoints),
            )
        } else {
            (
                Target::Drop(DropReason::NoLocalEndpoints),
                Target::Drop(DropReason::NoLocalEndpoints),
            )
        };
        let no_endpoints_comment = || {
            if !has_any {
                format!("{name} has no endpoints")
            } else {
                format!("{name} has no local endpoints")
            }
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
            let to = if internal_is_local {
                svl_chain.id(&mut nat)
            } else {
                svc_chain.id(&mut nat)
            };
            nat.jump(
                fx.n_services,
                port_matches(concat(&name, " cluster IP"), cluster_ip, svc.port),
                to,
            );
        } else {
            filter.rule(
                fx.f_services,
                port_matches(no_endpoints_comment(), cluster_ip, svc.port),
                int_target.clone(),
            );
        }
        // B. externalIPs.
        for ip in &svc.external_ips {
            if has_any {
                let to = ext_chain.id(&mut nat);
                nat.jump(
                    fx.n_services,
                    port_matches(format!("{name} external IP"), *ip, svc.port),
                    to,
                );
            }
            if !has_external {
                filter.rule(
                    fx.f_external,
                    port_matches(no_endpoints_comment(), *ip, svc.port),
                    ext_target.clone(),
                );
            }
        }
        // C. LoadBalancer IPs (and their firewall DROPs).
        for ip in &svc.load_balancer_ips {
            if has_any {
                let to = if uses_fw {
                    fw_chain.id(&mut nat)
                } else {
                    ext_chain.id(&mut nat)
                };
                nat.jump(
                    fx.n_services,
                    port_matches(format!("{name} loadbalancer IP"), *ip, svc.port),
                    to,
                );
            }
            if uses_fw {
                filter.rule(
                    fx.f_proxy_firewall,
                    port_matches(
                        format!("{name} traffic not accepted by {}", fw_chain.name()),
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
                    port_matches(no_endpoints_comment(), *ip, svc.port),
                    ext_target.clone(),
                );
            }
        }
        // E/F. NodePort.
        if svc.node_port != 0 {
            if has_any {
                let to = ext_chain.id(&mut nat);
                if localhost_nodeports {
                    nat.jump(
                        fx.n_nodeports,
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
                        comment(no_endpoints_comment()),
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
                fx.f_nodeports,
                vec![
                    comment(format!("{name} health check node port")),
                    Match::Proto(crate::packet::Protocol::Tcp),
                    Match::DPort(hc_port),
                ],
                Target::Accept,
            );
        }
        // I. Masquerade off-cluster traffic to the ClusterIP.
        if has_internal && (masquerade_all || detector.is_some()) {
            let internal = if internal_is_local {
                svl_chain.id(&mut nat)
            } else {
                svc_chain.id(&mut nat)
            };
            let mut m = port_matches(concat(&name, " cluster IP"), cluster_ip, svc.port);
            if !masquerade_all {
                if let Some(cidr) = detector {
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
            let ext = ext_chain.id(&mut nat);
            if !svc.external_policy_local {
                nat.jump(
                    ext,
                    vec![comment(format!(
                        "masquerade traffic for {name} external destinations"
                    ))],
                    fx.n_mark_masq,
                );
            } else {
                if let Some(cidr) = detector {
                    let to = svc_chain.id(&mut nat);
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
                let to = svc_chain.id(&mut nat);
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
                    svl_chain.id(&mut nat)
                } else {
                    svc_chain.id(&mut nat)
                };
                nat.jump(ext, vec![], to);
            }
        }
        // K. KUBE-FW- (loadBalancerSourceRanges).
        if uses_fw {
            let fw = fw_chain.id(&mut nat);
            let ext = ext_chain.id(&mut nat);
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
                if cidr.contains(&input.node.primary_ip) {
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
        // L/M. KUBE-SVC- and KUBE-SVL-: affinity checks, then the cascade.
        // The endpoints of the list, once each, in list order (the SVC/SVL
        // chain's SEP jumps: affinity checks, then the cascade, same order).
        let list_endpoints = |list: &[&EndpointInfo]| {
            let mut v: Vec<SocketAddr> = Vec::with_capacity(list.len());
            for ep in list {
                if sep_of(ep).is_some() && !v.contains(&ep.addr) {
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
                    let Some(sep) = sep_of(ep) else { continue };
                    let mut m = Matches::Empty;
                    svc_comment(&mut m, &|| format!("{name} -> {}", ep.key()));
                    m.push(Match::RecentCheck {
                        list: Box::new(nat.name(sep)),
                        seconds,
                    });
                    nat.jump(chain, m, sep);
                }
            }
            let n = list.len();
            for (i, ep) in list.iter().enumerate() {
                let Some(sep) = sep_of(ep) else { continue };
                let m: Matches = match (large_cluster, i + 1 < n) {
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
            let chain = svc_chain.id(&mut nat);
            write_lb(&mut nat, chain, &eps.cluster);
            svc_eps = list_endpoints(&eps.cluster);
        }
        if uses_local_chain {
            let chain = svl_chain.id(&mut nat);
            write_lb(&mut nat, chain, &eps.local);
            svl_eps = list_endpoints(&eps.local);
        }
        // The endpoints of every KUBE-SVC-/KUBE-SVL- chain, in rule order.
        if let Some(id) = svc_chain.id {
            nat.chains[id].endpoints = Some(svc_eps.into_boxed_slice());
        }
        if let Some(id) = svl_chain.id {
            nat.chains[id].endpoints = Some(svl_eps.into_boxed_slice());
        }
        // N. KUBE-SEP-. (Built whole rather than pushed match by match:
        // this runs for every endpoint.)
        for (k, (_, ep)) in eps.all.iter().enumerate() {
            let sep = first_sep + k;
            let src = Match::Src {
                addr: Addr::Ip(ep.addr.ip()),
                negate: false,
            };
            let recent = svc.session_affinity_seconds.map(|_| Match::RecentSet {
                list: Box::new(nat.name(sep)),
            });
            let proto = Match::Proto(proto);
            let (masq, dnat): (Matches, Matches) = if large_cluster {
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

    // The last rule of nat KUBE-SERVICES: hand local destinations to
    // KUBE-NODEPORTS.
    let np_comment = NODEPORTS_LAST;
    match &input.node_port_ips {
        None => {
            let mut m = vec![comment(np_comment), Match::AddrTypeLocal(Side::Dst)];
            if is_v6 || !localhost_nodeports {
                m.push(Match::Dst {
                    addr: Addr::Net(loopback_net(family)),
                    negate: true,
                });
            }
            nat.jump(fx.n_services, m, fx.n_nodeports);
        }
        Some(ips) => {
            for ip in ips.iter().filter(|ip| IpFamily::of(ip) == family) {
                if ip.is_loopback() && (is_v6 || !localhost_nodeports) {
                    continue;
                }
                nat.jump(
                    fx.n_services,
                    vec![comment(np_comment), dst_ip(*ip)],
                    fx.n_nodeports,
                );
            }
        }
    }
    // KUBE-FORWARD (conntrack liberal off, nfacct counters present: the fake
    // proxier's and a usual node's setting).
    filter.rule(
        fx.f_forward,
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
        fx.f_forward,
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
        fx.f_forward,
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
    let line_count = super::render::layout(&mut tables);
    let mut local_ips = input.node.ips.clone();
    if !local_ips.contains(&input.node.primary_ip) {
        local_ips.insert(0, input.node.primary_ip);
    }
    Compiled {
        family,
        hooks: hooks(localhost_nodeports),
        tables,
        local_ips,
        masquerade_mark: mark,
        line_count,
    }
}

/// kube-proxy's `UsesClusterEndpoints()`: `!internalPolicyLocal ||
/// ExternallyAccessible()`.
fn uses_cluster_endpoints(svc: &ServicePortInfo) -> bool {
    !svc.internal_policy_local || svc.externally_accessible()
}

/// The Service name of a rule's comment: up to the first space or colon.
fn comment_service(rule: &Rule) -> &str {
    let c = rule.comment().unwrap_or("");
    let end = c.find([' ', ':']).unwrap_or(c.len());
    &c[..end]
}

/// Group emitted rules by chain and order chains and rules as the upstream
/// tests do.
fn arrange(table: Table, emit: Emit) -> TableRules {
    let Emit { mut chains, keys } = emit;
    // Sort positions, not chains; ties by position: a name declared twice
    // keeps its rules in declaration order. The keys (see [`Emit::keys`])
    // make most comparisons of 100,000s of names integer comparisons.
    let mut order: Vec<(u8, u128, usize)> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.0, k.1, i))
        .collect();
    drop(keys);
    {
        // By the integers first (position breaks ties), then each run of
        // equal keys (names longer than the key, equal in its 16 bytes:
        // rare) by name and position: the same order as comparing
        // (key, name, position) throughout, with plain integer comparisons
        // for the 100,000s.
        order.sort_unstable();
        let name = |i: usize| chains.get(i).map_or("", |c| &*c.name);
        let mut start = 0;
        while start < order.len() {
            let key = (order[start].0, order[start].1);
            let mut end = start + 1;
            while end < order.len() && (order[end].0, order[end].1) == key {
                end += 1;
            }
            if end - start > 1 {
                order[start..end].sort_unstable_by(|a, b| {
                    chain_key(name(a.2))
                        .cmp(&chain_key(name(b.2)))
                        .then(a.2.cmp(&b.2))
                });
            }
            start = end;
        }
    }
    // Move the chains into that order where they are (a 10,000-Service
    // node has 100,000s: no second array of them).
    let mut from: Vec<usize> = order.into_iter().map(|(_, _, i)| i).collect();
    crate::order::permute(&mut chains, &mut from);
    // A name declared twice: one chain, rules in declaration order.
    chains.dedup_by(|cur, prev| {
        let same = cur.name == prev.name;
        if same {
            prev.rules.append(&mut cur.rules);
        }
        same
    });
    for ch in chains.iter_mut() {
        if &*ch.name == names::NODEPORTS || &*ch.name == names::SERVICES {
            let last_ok = table == Table::Nat && &*ch.name == names::SERVICES;
            // Rules are emitted Service by Service, and Services come sorted
            // by name, so this is usually in order already. Otherwise sort a
            // permutation (the keys borrow the rules) and apply it in place.
            let mut from: Vec<usize> = Vec::new();
            {
                let keys: Vec<(bool, &str)> = ch
                    .rules
                    .iter()
                    .map(|r| {
                        let last = last_ok && r.comment().is_some_and(says_last);
                        (last, comment_service(r))
                    })
                    .collect();
                if !keys.is_sorted() {
                    from.extend(0..keys.len());
                    from.sort_by_key(|&i| keys[i]);
                }
            }
            crate::order::permute(&mut ch.rules, &mut from);
        }
        if ch.rules.len() >= INDEX_MIN_RULES {
            ch.index = Some(Box::new(ChainIndex::new(&ch.rules)));
        }
    }
    TableRules { table, chains }
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

#[cfg(test)]
mod tests {
    use super::{names, AddrText, IpFamily};
    use std::net::SocketAddr;

    /// Services arrive sorted by (namespace, name), but KUBE-SERVICES is
    /// sorted by the comment's text, where `a-b/s` comes before `a/s`: the
    /// rules are reordered, stably.
    #[test]
    fn kube_services_is_sorted_by_comment_text() {
        let mut yaml = String::from(
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n\
             status: {addresses: [{type: InternalIP, address: 10.0.0.1}]}\n",
        );
        for ns in ["a", "a-b", "b"] {
            yaml.push_str(&format!(
                "---\napiVersion: v1\nkind: Service\nmetadata: {{name: s, namespace: {ns}}}\n\
                 spec: {{selector: {{app: x}}, ports: [{{name: p, port: 80}}, {{name: q, port: 81}}]}}\n"
            ));
        }
        let (cluster, diags) = crate::model::parse(&yaml);
        assert!(!crate::diag::has_errors(&diags), "{diags:?}");
        let slices = crate::controller::steady_slices(&cluster);
        let input =
            crate::proxy::build_input(&cluster, &slices, "n1", IpFamily::V4).expect("node n1");
        let compiled = super::compile(&input);
        let chain = compiled
            .table(super::Table::Filter)
            .and_then(|t| t.chain(names::SERVICES))
            .expect("filter KUBE-SERVICES");
        let comments: Vec<&str> = chain.rules.iter().filter_map(|r| r.comment()).collect();
        assert_eq!(
            comments,
            [
                "a-b/s:p has no endpoints",
                "a-b/s:q has no endpoints",
                "a/s:p has no endpoints",
                "a/s:q has no endpoints",
                "b/s:p has no endpoints",
                "b/s:q has no endpoints",
            ]
        );
    }

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
