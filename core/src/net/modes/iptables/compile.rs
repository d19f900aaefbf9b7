//! ProxyInput → typed filter and nat tables, following kube-proxy's
//! `syncProxyRules` (pkg/proxy/iptables/proxier.go) step by step.
//!
//! Rules are first emitted in kube-proxy's own code order (per Service port:
//! ClusterIP, externalIPs, LB IPs, NodePorts, health check, then the SVC/SVL,
//! EXT, FW and SEP chains), then arranged in the order kube-proxy's unit tests
//! compare (`sortIPTablesRules`): tables by name, KUBE-NODEPORTS and
//! KUBE-SERVICES first, other chains alphabetically, and the rules of those
//! two chains stably sorted by the Service name in their comment.
//!
//! This file holds the node-wide part: the fixed chains, KUBE-POSTROUTING,
//! KUBE-MARK-MASQ, KUBE-FIREWALL, KUBE-FORWARD, the last rule of
//! KUBE-SERVICES, the built-in chains' jumps, and the arranging;
//! `compile/service.rs` writes each Service port's rules and chains. Neither
//! must ever pick endpoints itself: eligibility comes from
//! [`crate::net::proxy::topology`].

use super::rules::{
    chain_key, name, name_of, names, Addr, Chain, ChainIndex, CtState, HookChain, Match, Matches,
    Name, Rule, Side, Table, TableRules, Target, INDEX_MIN_RULES,
};
use crate::model::packet::IpFamily;
use crate::net::modes::DropReason;
use crate::net::proxy::{LocalDetector, ProxyInput};
use ipnet::IpNet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

mod service;

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
    fixed_rules(
        &mut filter,
        &mut nat,
        &fx,
        mark,
        (family, localhost_nodeports),
    );
    let node = service::Node {
        family,
        localhost_nodeports,
        detector,
        masquerade_all,
        large_cluster,
        primary_ip: input.node.primary_ip,
    };
    let topo = input.topology();
    let mut scratch = service::Scratch::default();
    nat.reserve(total_endpoints + 2 * input.services.len());

    for (_, svc, svc_eps) in input.services_with_endpoints() {
        service::service_port(
            &node,
            &fx,
            &mut filter,
            &mut nat,
            &mut scratch,
            svc,
            svc_eps,
            topo,
        );
    }

    nodeports_last(&mut nat, &fx, input, localhost_nodeports);
    forward_rules(&mut filter, &fx, mark);

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

/// The rules every node has whatever its Services: nat KUBE-POSTROUTING
/// and KUBE-MARK-MASQ, and with localhost NodePorts the filter
/// KUBE-FIREWALL rule that blocks incoming localnet connections.
fn fixed_rules(
    filter: &mut Emit,
    nat: &mut Emit,
    fx: &Fixed,
    mark: u32,
    (family, localhost_nodeports): (IpFamily, bool),
) {
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
}

/// The last rule of nat KUBE-SERVICES: hand local destinations to
/// KUBE-NODEPORTS (all local addresses, or each `nodePortAddresses` one).
fn nodeports_last(nat: &mut Emit, fx: &Fixed, input: &ProxyInput, localhost_nodeports: bool) {
    let family = input.family;
    let is_v6 = family == IpFamily::V6;
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
}

/// filter KUBE-FORWARD (conntrack liberal off, nfacct counters present:
/// the fake proxier's and a usual node's setting).
fn forward_rules(filter: &mut Emit, fx: &Fixed, mark: u32) {
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
    crate::util::order::permute(&mut chains, &mut from);
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
            crate::util::order::permute(&mut ch.rules, &mut from);
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
    use super::{names, IpFamily};

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
        let (cluster, diags) = crate::Code::ALL.parse(&yaml);
        assert!(!crate::util::diag::has_errors(&diags), "{diags:?}");
        let slices = crate::net::controller::steady_slices(&cluster);
        let input =
            crate::net::proxy::build_input(&cluster, &slices, "n1", IpFamily::V4).expect("node n1");
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
}
