//! kube-proxy's legacy **userspace** mode (`pkg/proxy/userspace`, removed in
//! Kubernetes 1.26): iptables only *redirects* Service traffic to a port the
//! kube-proxy process listens on; the process accepts the connection, picks a
//! backend round-robin and opens its own connection to it.
//!
//! ```text
//!  packet from a Pod / another host          packet from a host process
//!               |                                       |
//!        nat PREROUTING                            nat OUTPUT
//!   1. -j KUBE-PORTALS-CONTAINER              1. -j KUBE-PORTALS-HOST
//!      ClusterIP / LB IP:port  -> REDIRECT        ClusterIP / LB IP:port -> DNAT hostIP:proxyPort
//!      externalIP:port (not from a bridge         externalIP:port (dst-type LOCAL)
//!        port, or dst-type LOCAL) -> REDIRECT        -> DNAT hostIP:proxyPort
//!   2. dst-type LOCAL                         2. dst-type LOCAL
//!      -j KUBE-NODEPORT-CONTAINER                 -j KUBE-NODEPORT-HOST
//!      --dport nodePort -> REDIRECT               --dport nodePort -> DNAT hostIP:proxyPort
//!               |                                       |
//!               +------------------+--------------------+
//!                                  v
//!                 filter INPUT -j KUBE-NODEPORT-NON-LOCAL
//!                 (--dport proxyPort, state NEW -> ACCEPT)
//!                                  v
//!      kube-proxy process: listener 0.0.0.0:proxyPort (one per Service port)
//!        NextEndpoint: ClientIP affinity, else round robin
//!        dial backend (250ms, 500ms, 1s, 2s: up to 4 tries, each to the
//!        next endpoint) -> new connection from the node's address
//! ```
//!
//! Fidelity decisions (where real behaviour cannot be reproduced exactly):
//! * **Proxy ports.** The kernel picks them (`bind` to port 0); kpv derives
//!   each from a hash of the Service port name, see [`ports`].
//! * **Rotation order.** kube-proxy shuffles the endpoints (`ShuffleStrings`)
//!   whenever the set changes; kpv shuffles with a [`Chooser`] seeded from a
//!   hash of the Service port name and the endpoint set, so the order is
//!   fixed for a given input and re-drawn when the set changes.
//! * **Which endpoints.** The userspace proxier read `v1.Endpoints` and used
//!   only ready addresses: no terminating fallback, and it predates traffic
//!   policies, so `externalTrafficPolicy`/`internalTrafficPolicy: Local` are
//!   ignored (every ready endpoint serves every kind of traffic), as are
//!   `loadBalancerSourceRanges`, `healthCheckNodePort` and
//!   `nodePortAddresses` (NodePorts match every local address). SCTP ports
//!   are not proxied ("SCTP is not supported for user space proxy").
//! * **Where REDIRECT sends to**: "the primary address of the incoming
//!   interface"; kpv uses the node's primary IP (for a Pod behind a bridge it
//!   would be the bridge's address). From-host traffic is DNATed to
//!   `hostIP` = the node's primary IP (`--bind-address` 0.0.0.0 assumed).
//! * **Failure verdict.** When every dial fails, or there are no endpoints,
//!   a TCP client's connection has already been accepted and is then closed
//!   (FIN, no ICMP). kpv reports `Reject` (the client fails promptly instead
//!   of timing out) and says so in the step; for UDP the datagram is
//!   discarded: `Drop`.
//! * **UDP dials never fail**: a UDP "dial" sends nothing, so the first pick
//!   is used whether or not it answers.
//! * **Source address** of the new connection: the node's primary IP and a
//!   hashed ephemeral port (the kernel routes and picks both for real).
//!
//! This module never reads a clock and never draws unseeded randomness; it
//! never masquerades (the backend sees the node because the proxy opened a
//! new connection, not because of SNAT).

mod balancer;
mod ports;
mod render;
mod rules;

pub use balancer::DIAL_TIMEOUTS_MS;
pub use ports::{EPHEMERAL_HIGH, EPHEMERAL_LOW};
pub use rules::{Chain, Portal, Table};

use super::*;
use crate::model::packet::{IpFamily, Protocol};
use crate::net::proxy::{categorize_endpoints, ServicePortInfo, ServicePortName};
use balancer::{Balanced, Connected, Pick};
use ipnet::IpNet;
use ports::PortSpace;
use rules::{MatchContext, PortalSpec, Rule, Target};
use std::fmt::Write as _;

/// One Service port's socket in the kube-proxy process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listener {
    pub name: ServicePortName,
    /// `ns/name:port`: the balancer's key.
    pub key: String,
    pub protocol: Protocol,
    /// `None` when the port is not proxied (see `skipped`).
    pub proxy_port: Option<u16>,
    /// Ready endpoints in round-robin order (the shuffled copy).
    pub backends: Vec<SocketAddr>,
    /// The same endpoints in kube-proxy's sorted order.
    pub candidates: Vec<SocketAddr>,
    pub affinity_seconds: Option<u32>,
    /// Every address:port redirected to this listener (NodePorts as
    /// `0.0.0.0:nodePort`).
    pub portals: Vec<(Portal, SocketAddr)>,
    /// Ports `claimNodePort` holds open so nothing else can take them.
    pub held: Vec<String>,
    /// Input the userspace proxier ignores for this port.
    pub ignored: Vec<String>,
    /// Why there is no listener.
    pub skipped: Option<String>,
}

impl Listener {
    /// `0.0.0.0:33001` / `[::]:33001`.
    pub fn listen_addr(&self, family: IpFamily) -> Option<SocketAddr> {
        let any = match family {
            IpFamily::V4 => IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
            IpFamily::V6 => IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED),
        };
        self.proxy_port.map(|p| SocketAddr::new(any, p))
    }
}

pub struct UserspaceDataplane {
    node_name: String,
    family: IpFamily,
    /// `proxier.hostIP`.
    host_ip: IpAddr,
    local_ips: Vec<IpAddr>,
    pod_cidr: Option<IpNet>,
    node_port_addresses_ignored: bool,
    /// In `iptables-save` order: by table, then chain, then insertion.
    rules: Vec<Rule>,
    listeners: Vec<Listener>,
    /// The text, written on first use.
    text: std::sync::OnceLock<String>,
    /// Per chain: its rules' positions in `rules` (in order), with an index
    /// by destination for long chains (a walk of KUBE-PORTALS-CONTAINER
    /// scanned every rule of every chain).
    chains: BTreeMap<Chain, ChainRules>,
    /// (protocol, proxy port) → the first listener there.
    by_port: BTreeMap<(Protocol, u16), usize>,
    /// 0-based line of `rules[i]` in `text`.
    rule_lines: Vec<usize>,
    /// 0-based line of `listeners[i]` in `text`.
    listener_lines: Vec<usize>,
}

/// The endpoints the userspace proxier would use: every ready one. The
/// shared categorisation is asked with traffic policies cleared (the
/// proxier predates them), then only ready endpoints are kept (it read
/// `v1.Endpoints` addresses: no serving-terminating fallback).
fn ready_backends(input: &ProxyInput, svc: &crate::net::proxy::ServicePortInfo) -> Vec<SocketAddr> {
    let eps = input.endpoints_of(&svc.name);
    let mut no_policies = svc.clone();
    no_policies.internal_policy_local = false;
    no_policies.external_policy_local = false;
    // The userspace proxy predates topology hints.
    let cat = categorize_endpoints(&no_policies, eps, None);
    cat.cluster
        .unwrap_or_default()
        .into_iter()
        .filter_map(|i| eps.get(i))
        .filter(|e| e.ready)
        .map(|e| e.addr)
        .collect()
}

/// `util.ShuffleStrings`, deterministically.
fn shuffled(key: &str, sorted: &[SocketAddr]) -> Vec<SocketAddr> {
    // `key|ep1,ep2,...`, written once.
    let mut text = String::with_capacity(key.len() + 1 + sorted.len() * 22);
    text.push_str(key);
    text.push('|');
    for (i, e) in sorted.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        let _ = write!(text, "{e}");
    }
    let mut chooser = Chooser::new(crate::util::sha256::prefix64(&text));
    let mut v = sorted.to_vec();
    for i in (1..v.len()).rev() {
        let j = chooser.below(i + 1);
        v.swap(i, j);
    }
    v
}

pub fn compile(input: &ProxyInput) -> UserspaceDataplane {
    let host_ip = input.node.primary_ip;
    let mut local_ips = input.node.ips.clone();
    if !local_ips.contains(&host_ip) {
        local_ips.push(host_ip);
    }
    let is_local = |ip: &IpAddr| local_ips.contains(ip) || ip.is_loopback();
    let mut space = claimed_ports(input, &is_local);

    let mut rules = rules::jump_rules();
    let mut listeners = Vec::new();
    for (name, svc) in &input.services {
        let protocol = name.protocol;
        let mut l = listener(input, name, svc);
        let Some(cluster_ip) = svc.cluster_ip else {
            l.skipped = Some("no ClusterIP (ShouldSkipService)".into());
            listeners.push(l);
            continue;
        };
        if protocol == Protocol::Sctp {
            l.skipped = Some("SCTP is not supported for user space proxy".into());
            listeners.push(l);
            continue;
        }
        let allocated = match input.config.port_range {
            Some(range) => space.allocate_in_range(protocol, &l.key, range),
            None => space.allocate_listener(protocol, &l.key),
        };
        let Some(proxy_port) = allocated else {
            l.skipped = Some(match input.config.port_range {
                Some((a, b)) => {
                    format!("port allocation failed: no free port left in portRange {a}-{b}")
                }
                None => "port allocation failed: no free port left in the ephemeral range".into(),
            });
            listeners.push(l);
            continue;
        };
        l.proxy_port = Some(proxy_port);
        add_portals(&mut l, svc, cluster_ip, input.family, &is_local);
        rules.extend(rules::service_rules(&PortalSpec {
            name,
            protocol,
            cluster_ip,
            port: svc.port,
            external_ips: &svc.external_ips,
            load_balancer_ips: &svc.load_balancer_ips,
            node_port: svc.node_port,
            proxy_port,
            host_ip,
        }));
        listeners.push(l);
    }
    // iptables-save prints chain by chain; within a chain, insertion order.
    // (A stable sort into one bucket per chain: moving 10,000s of rules
    // around in a merge sort cost more than the rest of compiling.)
    let mut buckets: BTreeMap<(rules::Table, Chain), Vec<Rule>> = BTreeMap::new();
    for r in rules {
        buckets
            .entry((r.chain.table(), r.chain))
            .or_default()
            .push(r);
    }
    let rules: Vec<Rule> = buckets.into_values().flatten().collect();

    let mut dp = UserspaceDataplane {
        node_name: input.node.name.clone(),
        family: input.family,
        host_ip,
        local_ips,
        pod_cidr: input.node.pod_cidr,
        node_port_addresses_ignored: input.node_port_ips.is_some(),
        chains: chain_rules(&rules),
        by_port: BTreeMap::new(),
        rules,
        listeners,
        text: std::sync::OnceLock::new(),
        rule_lines: Vec::new(),
        listener_lines: Vec::new(),
    };
    for (i, l) in dp.listeners.iter().enumerate() {
        if let Some(p) = l.proxy_port {
            dp.by_port.entry((l.protocol, p)).or_insert(i);
        }
    }
    let (rule_lines, listener_lines) = render::layout(&dp);
    dp.rule_lines = rule_lines;
    dp.listener_lines = listener_lines;
    dp
}

/// The ports kube-proxy holds before any proxy port is allocated: each
/// NodePort (`claimNodePort`), and each Service port on a portal address
/// that is the node's own.
fn claimed_ports(input: &ProxyInput, is_local: &dyn Fn(&IpAddr) -> bool) -> PortSpace {
    let mut space = PortSpace::default();
    for svc in input.services.values() {
        if svc.node_port != 0 {
            space.reserve(svc.name.protocol, svc.node_port);
        }
        let portal_ips = svc
            .cluster_ip
            .iter()
            .chain(&svc.external_ips)
            .chain(&svc.load_balancer_ips);
        for ip in portal_ips {
            if is_local(ip) {
                space.reserve(svc.name.protocol, svc.port);
            }
        }
    }
    space
}

/// A Service port's listener before its port is allocated: its backends
/// (sorted, and in the proxy's shuffled order), affinity, and the fields
/// the userspace proxy ignores.
fn listener(input: &ProxyInput, name: &ServicePortName, svc: &ServicePortInfo) -> Listener {
    let key = name.to_string();
    let sorted = ready_backends(input, svc);
    let mut l = Listener {
        name: name.clone(),
        key: key.clone(),
        protocol: name.protocol,
        proxy_port: None,
        backends: shuffled(&key, &sorted),
        candidates: sorted,
        affinity_seconds: svc
            .session_affinity_seconds
            .map(|s| if s == 0 { 10_800 } else { s }),
        portals: Vec::new(),
        held: Vec::new(),
        ignored: Vec::new(),
        skipped: None,
    };
    if svc.external_policy_local {
        l.ignored.push("externalTrafficPolicy: Local".into());
    }
    if svc.internal_policy_local {
        l.ignored.push("internalTrafficPolicy: Local".into());
    }
    if !svc.load_balancer_source_ranges.is_empty() {
        l.ignored.push("loadBalancerSourceRanges".into());
    }
    if svc.health_check_node_port != 0 {
        l.ignored.push("healthCheckNodePort".into());
    }
    l
}

/// The listener's portals (ClusterIP, external IPs, LoadBalancer IPs,
/// NodePort on every address) and the sockets it holds on the node.
fn add_portals(
    l: &mut Listener,
    svc: &ServicePortInfo,
    cluster_ip: IpAddr,
    family: IpFamily,
    is_local: &dyn Fn(&IpAddr) -> bool,
) {
    let proto = l.protocol.as_upper();
    let mut portal = |kind, ip: IpAddr, port: u16| {
        l.portals.push((kind, SocketAddr::new(ip, port)));
        if is_local(&ip) {
            l.held
                .push(format!("{}/{proto}", SocketAddr::new(ip, port)));
        }
    };
    portal(Portal::ClusterIp, cluster_ip, svc.port);
    for ip in &svc.external_ips {
        portal(Portal::ExternalIp, *ip, svc.port);
    }
    for ip in &svc.load_balancer_ips {
        portal(Portal::LoadBalancerIp, *ip, svc.port);
    }
    if svc.node_port != 0 {
        let any = match family {
            IpFamily::V4 => IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
            IpFamily::V6 => IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED),
        };
        l.portals
            .push((Portal::NodePort, SocketAddr::new(any, svc.node_port)));
        l.held.push(format!("*:{}/{proto}", svc.node_port));
    }
}

/// Chains longer than this get an index by destination.
const INDEX_MIN_RULES: usize = 16;

/// One chain's rules: positions in [`UserspaceDataplane::rules`], in order,
/// and for long chains which of them can match a destination at all (a rule
/// with `-d IP` only matches that IP, one with `--dport N` only that port).
#[derive(Clone, Debug, Default)]
struct ChainRules {
    all: Vec<usize>,
    /// Positions in `all`, when indexed.
    by_dst: BTreeMap<IpAddr, Vec<usize>>,
    by_dport: BTreeMap<u16, Vec<usize>>,
    rest: Vec<usize>,
    indexed: bool,
}

impl ChainRules {
    /// Positions in `all` of the rules that may match a packet to `dst`.
    fn candidates(&self, dst: SocketAddr) -> Vec<usize> {
        if !self.indexed {
            return (0..self.all.len()).collect();
        }
        let mut v = self.rest.clone();
        v.extend(self.by_dst.get(&dst.ip()).into_iter().flatten());
        v.extend(self.by_dport.get(&dst.port()).into_iter().flatten());
        v.sort_unstable();
        v
    }
}

fn chain_rules(rules: &[Rule]) -> BTreeMap<Chain, ChainRules> {
    let mut out: BTreeMap<Chain, ChainRules> = BTreeMap::new();
    for (i, r) in rules.iter().enumerate() {
        out.entry(r.chain).or_default().all.push(i);
    }
    for cr in out.values_mut() {
        if cr.all.len() < INDEX_MIN_RULES {
            continue;
        }
        cr.indexed = true;
        for (k, &i) in cr.all.iter().enumerate() {
            let Some(r) = rules.get(i) else { continue };
            let dport = r.matches.iter().find_map(|m| match m {
                rules::Match::Dport(_, p) => Some(*p),
                _ => None,
            });
            match (r.dst, dport) {
                (Some(ip), _) => cr.by_dst.entry(ip).or_default().push(k),
                (None, Some(p)) => cr.by_dport.entry(p).or_default().push(k),
                (None, None) => cr.rest.push(k),
            }
        }
    }
    out
}

/// How a walk through a chain ended.
enum Terminal {
    Nat(SocketAddr),
    Accept,
}

const PROCESS: &str = "kube-proxy process";

impl UserspaceDataplane {
    pub fn listeners(&self) -> &[Listener] {
        &self.listeners
    }

    pub fn rules(&self) -> impl Iterator<Item = (Chain, String)> + '_ {
        self.rules.iter().map(|r| (r.chain, r.render()))
    }

    /// The proxy port of a Service port, by its name text (`ns/name:port`).
    pub fn proxy_port(&self, key: &str) -> Option<u16> {
        self.listeners
            .iter()
            .find(|l| l.key == key)
            .and_then(|l| l.proxy_port)
    }

    fn is_local(&self, ip: &IpAddr) -> bool {
        self.local_ips.contains(ip) || ip.is_loopback()
    }

    /// Walk one chain as the kernel does; jumps recurse (user chains never
    /// jump, so the depth is at most one).
    fn walk(
        &self,
        chain: Chain,
        pkt: &Packet,
        ctx: MatchContext,
        steps: &mut Vec<Step>,
        total: &mut usize,
    ) -> Option<Terminal> {
        let empty = ChainRules::default();
        let cr = self.chains.get(&chain).unwrap_or(&empty);
        // Only the rules that can match this destination are tried, but
        // every rule before them counts as compared (the kernel's linear
        // walk); no rule rewrites the packet and goes on.
        let candidates = cr.candidates(pkt.dst);
        let mut compared = 0;
        for k in candidates {
            let Some(&i) = cr.all.get(k) else { break };
            let Some(r) = self.rules.get(i) else { break };
            *total += k + 1 - compared;
            compared = k + 1;
            if !r.matches(pkt, ctx) {
                continue;
            }
            let step = |action| Step {
                table_chain: chain.label(),
                rule: r.render(),
                line: self.rule_lines.get(i).copied(),
                compared,
                action,
            };
            match &r.target {
                Target::Jump(to) => {
                    steps.push(step(StepAction::Jump {
                        to: to.name().to_string(),
                    }));
                    if let Some(t) = self.walk(*to, pkt, ctx, steps, total) {
                        return Some(t);
                    }
                }
                Target::Redirect(port) => {
                    let to = SocketAddr::new(self.host_ip, *port);
                    steps.push(step(StepAction::Redirect { to }));
                    return Some(Terminal::Nat(to));
                }
                Target::Dnat(to) => {
                    steps.push(step(StepAction::Dnat { to: *to }));
                    return Some(Terminal::Nat(*to));
                }
                Target::Accept => {
                    steps.push(step(StepAction::Accept));
                    return Some(Terminal::Accept);
                }
            }
        }
        *total += cr.all.len().saturating_sub(compared);
        let compared = cr.all.len();
        if !chain.is_builtin() {
            steps.push(Step {
                table_chain: chain.label(),
                rule: "(end of chain: return to the calling chain)".into(),
                line: None,
                compared,
                action: StepAction::Return,
            });
        }
        None
    }

    fn process_step(&self, rule: String, line: Option<usize>, action: StepAction) -> Step {
        Step {
            table_chain: PROCESS.into(),
            rule,
            line,
            compared: 0,
            action,
        }
    }

    /// Step 3: the kube-proxy process's socket takes the connection (TCP)
    /// or the datagram (UDP) from `client`.
    fn accept_step(&self, l: &Listener, client: SocketAddr, line: Option<usize>) -> Step {
        let listen = l
            .listen_addr(self.family)
            .map(|a| a.to_string())
            .unwrap_or_default();
        let text = if l.protocol != Protocol::Udp {
            format!(
                "{} listener {listen}: accept() the connection from {client} \
                 (REDIRECT/DNAT keep the client's address)",
                l.key
            )
        } else {
            format!(
                "{} UDP socket {listen}: ReadFrom() a datagram of new client {client}",
                l.key
            )
        };
        self.process_step(
            text,
            line,
            StepAction::Lookup {
                matched: l.key.clone(),
            },
        )
    }

    /// Step 4, TryConnectEndpoints: pick an endpoint (affinity, else round
    /// robin) and dial it, the next one after a failed dial, until one
    /// answers or the attempts run out.
    fn try_connect(
        &self,
        (l, line): (&Listener, Option<usize>),
        client: SocketAddr,
        state: &mut NodeState,
        world: &dyn World,
        now_ms: u64,
    ) -> (Verdict, Vec<Step>) {
        let tcp = l.protocol != Protocol::Udp;
        let mut steps = Vec::new();
        let b = Balanced {
            key: &l.key,
            protocol: l.protocol,
            backends: &l.backends,
            affinity_seconds: l.affinity_seconds,
        };
        let fail = |reason| {
            if tcp {
                Verdict::Reject { reason }
            } else {
                Verdict::Drop { reason }
            }
        };
        let close_text = if tcp {
            "kube-proxy closes the accepted client connection (the client sees it \
             open, then closed: a FIN, not an ICMP refusal)"
        } else {
            "kube-proxy discards the datagram"
        };
        let attempts = match balancer::try_connect(&b, client.ip(), state, world, now_ms) {
            Connected::NoEndpoints => {
                steps.push(self.process_step(
                    format!(
                        "NextEndpoint({}): missing endpoints; \"Failed to connect to balancer\": {close_text}",
                        l.key
                    ),
                    line,
                    if tcp { StepAction::Reject } else { StepAction::Drop },
                ));
                return (fail(DropReason::NoEndpoints), steps);
            }
            Connected::Ok(a) | Connected::Failed(a) => a,
        };
        let n = l.backends.len();
        let mut proxied = None;
        for (k, a) in attempts.iter().enumerate() {
            let how = match a.pick {
                Pick::Affinity { idle_ms } => format!(
                    "session affinity: ClientIP {} used it {}s ago (< {}s)",
                    client.ip(),
                    idle_ms / 1000,
                    l.affinity_seconds.unwrap_or(0)
                ),
                Pick::RoundRobin { index } => {
                    format!("round robin: position {} of {n}", index + 1)
                }
            };
            steps.push(self.process_step(
                format!(
                    "NextEndpoint({}, {}, sessionAffinityReset={})",
                    l.key,
                    client.ip(),
                    k > 0
                ),
                line,
                StepAction::Choose {
                    chosen: a.endpoint,
                    among: n,
                    how,
                },
            ));
            let source = SocketAddr::new(
                self.host_ip,
                ports::dial_source_port(l.protocol, &format!("{client}>{}#{k}", a.endpoint)),
            );
            let text = dial_text(l.protocol, a, source);
            steps.push(self.process_step(
                text,
                line,
                StepAction::Connect {
                    to: a.endpoint,
                    answered: a.answered,
                },
            ));
            if a.answered {
                proxied = Some(Verdict::Proxied {
                    endpoint: a.endpoint,
                    source,
                });
            }
        }
        let verdict = match proxied {
            Some(v) => v,
            None => {
                steps.push(self.process_step(
                    format!(
                        "failed to connect to an endpoint. ({} attempts, {} of dial \
                         timeouts): {close_text}",
                        attempts.len(),
                        fmt_ms(attempts.iter().map(|a| a.timeout_ms).sum())
                    ),
                    line,
                    if tcp {
                        StepAction::Reject
                    } else {
                        StepAction::Drop
                    },
                ));
                fail(DropReason::AllBackendsFailed)
            }
        };
        (verdict, steps)
    }
}

impl Dataplane for UserspaceDataplane {
    fn mode(&self) -> Mode {
        Mode::Userspace
    }

    fn render_text(&self) -> String {
        self.text.get_or_init(|| render::text(self).0).clone()
    }

    #[cfg(feature = "json")]
    fn render_json(&self) -> serde_json::Value {
        render::json(self)
    }

    fn process(
        &self,
        packet: &Packet,
        hook: Hook,
        state: &mut NodeState,
        _chooser: &mut Chooser,
        world: &dyn World,
        now_ms: u64,
    ) -> NodeOutcome {
        let mut steps = Vec::new();
        let mut total = 0;
        let outcome = |verdict, candidates, steps, total| NodeOutcome {
            verdict,
            candidates,
            masquerade: false,
            steps,
            rules_compared: total,
        };

        // 1. nat PREROUTING or OUTPUT.
        let ctx = MatchContext {
            // A Pod of this node sits behind the CNI bridge.
            physdev_is_in: hook == Hook::Prerouting
                && self.pod_cidr.is_some_and(|c| c.contains(&packet.src.ip())),
            dst_local: self.is_local(&packet.dst.ip()),
        };
        let builtin = match hook {
            Hook::Prerouting => Chain::Prerouting,
            Hook::Output => Chain::Output,
        };
        let Some(Terminal::Nat(to)) = self.walk(builtin, packet, ctx, &mut steps, &mut total)
        else {
            return outcome(Verdict::None, Vec::new(), steps, total);
        };

        // 2. Local delivery: filter INPUT sees the rewritten packet.
        let delivered = Packet { dst: to, ..*packet };
        let ctx = MatchContext {
            dst_local: true,
            ..ctx
        };
        self.walk(Chain::Input, &delivered, ctx, &mut steps, &mut total);

        // 3. The kube-proxy process's socket.
        let found = self
            .by_port
            .get(&(packet.protocol, to.port()))
            .and_then(|&i| Some((i, self.listeners.get(i)?)));
        let Some((li, l)) = found else {
            // Nothing listens there (cannot happen for rules built here).
            steps.push(self.process_step(
                format!("no socket listens on {to}"),
                None,
                StepAction::Reject,
            ));
            return outcome(
                Verdict::Reject {
                    reason: DropReason::NoEndpoints,
                },
                Vec::new(),
                steps,
                total,
            );
        };
        let line = self.listener_lines.get(li).copied();
        steps.push(self.accept_step(l, packet.src, line));
        let (verdict, tried) = self.try_connect((l, line), packet.src, state, world, now_ms);
        steps.extend(tried);
        outcome(verdict, l.candidates.clone(), steps, total)
    }

    fn rule_count(&self) -> usize {
        self.rules.len()
    }
}

/// `250ms`, `1s`, `3.75s` (Go's `time.Duration` style).
fn fmt_ms(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        let s = format!("{}.{:03}", ms / 1000, ms % 1000);
        format!("{}s", s.trim_end_matches('0'))
    }
}

/// What dialling endpoint `a` from `source` did, as kube-proxy's process
/// would log it.
fn dial_text(protocol: Protocol, a: &balancer::Attempt, source: SocketAddr) -> String {
    if protocol == Protocol::Udp {
        format!(
            "dial udp {} from {source}: a connected UDP socket sends nothing, so it \
             cannot fail; kube-proxy forwards the datagram from its own socket (the \
             backend sees the node's address, not the client's; no masquerade)",
            a.endpoint
        )
    } else if a.answered {
        format!(
            "dial tcp {} (timeout {}) from {source}: connected; kube-proxy copies bytes \
             between the two connections (the backend sees the node's address, not \
             the client's; no masquerade)",
            a.endpoint,
            fmt_ms(a.timeout_ms)
        )
    } else {
        format!(
            "dial {} {} (timeout {}): failed, the endpoint did not answer; \
             \"Dial failed\", try the next endpoint",
            protocol.as_lower(),
            a.endpoint,
            fmt_ms(a.timeout_ms)
        )
    }
}

#[cfg(test)]
mod index_tests {
    //! The indexed walk must be the linear walk: same verdicts, steps, lines
    //! and "rules compared".
    use super::*;
    use crate::net::modes::testdata;

    #[test]
    fn indexed_walk_equals_linear_walk() {
        let (cluster, diags) = crate::Code::ALL.parse(&testdata::cluster_yaml());
        assert!(!crate::util::diag::has_errors(&diags), "{diags:#?}");
        let input = crate::net::proxy::build_input(
            &cluster,
            &cluster.endpoint_slices,
            "node-a",
            IpFamily::V4,
        )
        .expect("node-a");
        let indexed = compile(&input);
        assert!(
            indexed.chains.values().any(|c| c.indexed),
            "nothing indexed"
        );
        let mut linear = compile(&input);
        for c in linear.chains.values_mut() {
            c.indexed = false;
        }
        let (dests, sources) = testdata::packets();
        let (mut s1, mut s2) = (NodeState::default(), NodeState::default());
        let (mut hits, mut most) = (0, 0);
        for dst in &dests {
            for &(src, hook) in &sources {
                let pkt = Packet::new(src, *dst, Protocol::Tcp);
                let a = indexed.process(&pkt, hook, &mut s1, &mut Chooser::new(3), &AllAnswer, 0);
                let b = linear.process(&pkt, hook, &mut s2, &mut Chooser::new(3), &AllAnswer, 0);
                assert_eq!(a, b, "{src} -> {dst}");
                hits += usize::from(a.verdict.endpoint().is_some());
                most = most.max(a.rules_compared);
            }
        }
        assert!(hits > 100, "{hits} proxied");
        assert!(most > 40, "at most {most} rules compared");
    }
}
