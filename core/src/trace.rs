//! A packet's whole journey: DNS, the cloud load balancer, a node's
//! conntrack and kube-proxy rules, masquerade, the pod network, delivery (or
//! the drop or reject, and why), and the reply translated back.
//!
//! The per-node rules are the mode's business ([`crate::modes::Dataplane`]);
//! this module strings nodes together the same way for every mode. Random
//! choices (the load balancer's node, the rules' endpoint pick) come from the
//! [`Chooser`] the caller seeds; time is passed in. State that outlives one
//! connection (conntrack, round-robin positions, affinity) is in [`WorldState`],
//! owned by the caller, so replaying the same requests gives the same paths.

use crate::choose::Chooser;
use crate::cli::{From, TraceArgs};
use crate::controller::{app_state_at_or_default, AppChange};
use crate::model::{
    Cluster, EndpointSlice, Mode, NamespacedName, Scheduler, ServiceType, TrafficPolicy,
};
use crate::modes::{
    self, AllAnswer, CompileOptions, Dataplane, DropReason, Hook, NodeState, Step, StepAction,
    Verdict, World,
};
use crate::packet::{IpFamily, Packet, Protocol};
use crate::proxy::{self, ProxyInput};
use crate::scene::Place;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};

/// Where a packet starts.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Origin {
    /// A client outside the cluster at this address.
    External { client: IpAddr },
    /// A Pod (traffic enters its node's netfilter at PREROUTING).
    Pod { pod: NamespacedName },
    /// A process on a node; from the node's own address traffic meets OUTPUT,
    /// from any other source address PREROUTING (as kube-proxy's tests trace).
    Node { node: String, src: IpAddr },
}

/// Where it is going: an address or a DNS name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "lowercase")]
pub enum Dest {
    Ip(IpAddr),
    Name(String),
}

/// One connection to trace.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Request {
    pub origin: Origin,
    pub dst: Dest,
    pub port: u16,
    pub protocol: Protocol,
    /// The client's source port; reusing one of an open connection follows
    /// conntrack instead of the rules.
    pub src_port: u16,
    /// Keep the connection open after the trace (IPVS counts it active).
    pub keep_open: bool,
}

impl Request {
    /// The destination as written: `10.96.0.10:80`, `[fd00::a]:80`, `name:80`.
    pub fn dst_text(&self) -> String {
        match &self.dst {
            Dest::Ip(ip) => SocketAddr::new(*ip, self.port).to_string(),
            Dest::Name(n) => format!("{n}:{}", self.port),
        }
    }
}

/// What happened in the end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Outcome {
    /// A Pod received it; `source` is the address the Pod saw.
    Delivered {
        pod: Option<NamespacedName>,
        endpoint: SocketAddr,
        source: SocketAddr,
    },
    /// Sent to a Pod whose app does not answer: the client times out.
    TimedOut {
        pod: Option<NamespacedName>,
        endpoint: SocketAddr,
    },
    Dropped {
        reason: DropReason,
    },
    Rejected {
        reason: DropReason,
    },
    /// Accepted by the node itself (e.g. the health-check NodePort).
    AcceptedByNode {
        node: String,
    },
    /// No Service matched and the address is nobody's: it leaves the cluster
    /// or goes unanswered.
    Unrouted,
    /// DNS could not resolve the name.
    NoSuchName {
        name: String,
    },
}

/// One hop of a trace, where it happened and the packet before and after.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Hop {
    pub place: Place,
    pub what: HopKind,
    pub before: Packet,
    pub after: Packet,
    /// The rule step, when the hop is a rule or lookup of a node's data plane.
    pub step: Option<Step>,
    /// The node whose rules this is (for highlighting the right ruleset).
    pub node: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum HopKind {
    /// DNS answered `name` with `answer`.
    Dns {
        name: String,
        answer: IpAddr,
    },
    /// The client (or Pod, or node) sends the first packet.
    Send,
    /// The cloud load balancer forwarded to a node's NodePort.
    LoadBalancer {
        node: String,
        healthy_nodes: usize,
        total_nodes: usize,
    },
    /// The packet reaches a node's interface.
    Arrive {
        node: String,
    },
    /// conntrack found an established flow: the rules are not consulted.
    Established {
        endpoint: SocketAddr,
    },
    /// A rule or lookup of the node's data plane.
    Rule,
    /// POSTROUTING masquerade: source rewritten to the node's address.
    Masquerade {
        to: SocketAddr,
    },
    /// Routed over the pod network to another node.
    PodNetwork {
        from: String,
        to: String,
    },
    /// Delivered to the Pod.
    Deliver,
    /// The Pod does not answer.
    NoAnswer,
    Drop {
        reason: DropReason,
    },
    Reject {
        reason: DropReason,
    },
    /// The reply, translated back by conntrack.
    Reply,
}

/// A full trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Trace {
    pub request: Request,
    pub mode: Mode,
    /// The node whose kube-proxy rules handled the connection.
    pub node: Option<String>,
    pub verdict: Verdict,
    /// Every endpoint the packet could have been sent to.
    pub endpoints: Vec<SocketAddr>,
    pub masquerade: bool,
    pub rules_compared: usize,
    pub outcome: Outcome,
    pub hops: Vec<Hop>,
    /// Did conntrack carry an established flow?
    pub established: bool,
}

/// A conntrack entry: the translation of an open connection.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ConntrackEntry {
    pub node: String,
    pub verdict: Verdict,
    pub masquerade: bool,
    pub created_ms: u64,
}

/// State that outlives one connection.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WorldState {
    pub nodes: BTreeMap<String, NodeState>,
    /// Keyed by the packet as it arrived at the node (protocol, src, dst).
    pub conntrack: BTreeMap<(Protocol, SocketAddr, SocketAddr), ConntrackEntry>,
}

/// The data planes of every node, compiled on first use: a trace meets one
/// or two nodes, so a 100-node cluster compiles those, not a hundred.
pub struct Sim<'a> {
    pub cluster: &'a Cluster,
    pub mode: Mode,
    /// The slices as this mode's proxy reads them.
    slices: Vec<EndpointSlice>,
    opts: CompileOptions,
    inputs: BTreeMap<(String, IpFamily), std::cell::OnceCell<Option<ProxyInput>>>,
    planes: BTreeMap<(String, IpFamily), std::cell::OnceCell<Box<dyn Dataplane>>>,
    /// App states (who answers) and the time they are read at.
    changes: Vec<AppChange>,
}

impl<'a> Sim<'a> {
    /// Every node's rules from the slices kube-proxy has synced (each
    /// compiled when a packet first needs it).
    pub fn new(
        cluster: &'a Cluster,
        slices: &[EndpointSlice],
        mode: Mode,
        scheduler: Option<Scheduler>,
    ) -> Sim<'a> {
        let mut inputs = BTreeMap::new();
        let mut planes = BTreeMap::new();
        for node in &cluster.nodes {
            for family in [IpFamily::V4, IpFamily::V6] {
                inputs.insert((node.name.clone(), family), std::cell::OnceCell::new());
                planes.insert((node.name.clone(), family), std::cell::OnceCell::new());
            }
        }
        Sim {
            cluster,
            mode,
            slices: proxy::slices_seen_by(mode, slices).into_owned(),
            opts: CompileOptions { scheduler },
            inputs,
            planes,
            changes: Vec::new(),
        }
    }

    /// Tell the simulation which apps are down (they do not answer).
    pub fn with_app_changes(mut self, changes: &[AppChange]) -> Self {
        self.changes = changes.to_vec();
        self
    }

    pub fn dataplane(&self, node: &str, family: IpFamily) -> Option<&dyn Dataplane> {
        let input = self.input(node, family)?;
        let cell = self.planes.get(&(node.to_string(), family))?;
        Some(
            cell.get_or_init(|| modes::compile(self.mode, input, self.opts))
                .as_ref(),
        )
    }

    pub fn input(&self, node: &str, family: IpFamily) -> Option<&ProxyInput> {
        self.inputs
            .get(&(node.to_string(), family))?
            .get_or_init(|| proxy::build_input(self.cluster, &self.slices, node, family))
            .as_ref()
    }

    fn pod_by_ip(&self, ip: IpAddr) -> Option<&crate::model::Pod> {
        self.cluster.pods.iter().find(|p| p.ips.contains(&ip))
    }

    fn node_by_ip(&self, ip: IpAddr) -> Option<&crate::model::Node> {
        self.cluster
            .nodes
            .iter()
            .find(|n| n.addresses.iter().any(|(_, a)| *a == ip))
    }

    fn resolve(&self, name: &str, from_ns: &str) -> Option<(IpAddr, String)> {
        let name = name.trim_end_matches('.');
        let parts: Vec<&str> = name.split('.').collect();
        let (svc, ns) = match parts.as_slice() {
            [svc] => (*svc, from_ns),
            [svc, ns] | [svc, ns, "svc"] | [svc, ns, "svc", "cluster", "local"] => (*svc, *ns),
            _ => return None,
        };
        let s = self.cluster.service(&NamespacedName::new(ns, svc))?;
        let fqdn = format!("{svc}.{ns}.svc.cluster.local");
        if s.headless {
            // A headless Service's name answers with its ready Pods' IPs.
            let ip = self
                .cluster
                .pods
                .iter()
                .filter(|p| {
                    p.id.namespace == ns
                        && s.selector
                            .as_ref()
                            .is_some_and(|sel| crate::model::selects(sel, &p.labels))
                })
                .find_map(|p| p.ips.first().copied())?;
            return Some((ip, fqdn));
        }
        s.cluster_ips.first().map(|ip| (*ip, fqdn))
    }
}

struct Answering<'s> {
    sim: &'s Sim<'s>,
    now_ms: u64,
}

impl World for Answering<'_> {
    fn answers(&self, endpoint: SocketAddr) -> bool {
        match self.sim.pod_by_ip(endpoint.ip()) {
            Some(pod) => {
                app_state_at_or_default(&pod.id, &self.sim.changes, self.now_ms).answers_traffic()
            }
            None => true, // outside the model (an external database): assume it answers
        }
    }
}

fn sock(ip: IpAddr, port: u16) -> SocketAddr {
    SocketAddr::new(ip, port)
}

/// Trace one connection.
pub fn trace(
    sim: &Sim<'_>,
    req: &Request,
    state: &mut WorldState,
    chooser: &mut Chooser,
    now_ms: u64,
) -> Trace {
    let mut hops = Vec::new();
    let mut t = Trace {
        request: req.clone(),
        mode: sim.mode,
        node: None,
        verdict: Verdict::None,
        endpoints: Vec::new(),
        masquerade: false,
        rules_compared: 0,
        outcome: Outcome::Unrouted,
        hops: Vec::new(),
        established: false,
    };
    // Where the packet starts, from which address.
    let (start_place, src_ip, ns) = match &req.origin {
        Origin::External { client } => (Place::Client, *client, "default".to_string()),
        Origin::Pod { pod } => match sim.cluster.pod(pod) {
            Some(p) => match p.ips.first() {
                Some(ip) => (Place::Pod(pod.clone()), *ip, pod.namespace.clone()),
                None => {
                    t.outcome = Outcome::Unrouted;
                    return t;
                }
            },
            None => return t,
        },
        Origin::Node { node, src } => (Place::NodeProxy(node.clone()), *src, "default".to_string()),
    };
    // DNS.
    let dst_ip = match &req.dst {
        Dest::Ip(ip) => *ip,
        Dest::Name(name) => match sim.resolve(name, &ns) {
            Some((ip, fqdn)) => {
                let p = Packet::new(sock(src_ip, req.src_port), sock(ip, req.port), req.protocol);
                hops.push(Hop {
                    place: start_place.clone(),
                    what: HopKind::Dns {
                        name: fqdn,
                        answer: ip,
                    },
                    before: p,
                    after: p,
                    step: None,
                    node: None,
                });
                ip
            }
            None => {
                t.outcome = Outcome::NoSuchName { name: name.clone() };
                t.hops = hops;
                return t;
            }
        },
    };
    let mut pkt = Packet::new(
        sock(src_ip, req.src_port),
        sock(dst_ip, req.port),
        req.protocol,
    );
    // What the client sent: the reply it gets must come from that address
    // (the load balancer's, not the NodePort it forwarded to).
    let sent = pkt;
    hops.push(Hop {
        place: start_place.clone(),
        what: HopKind::Send,
        before: pkt,
        after: pkt,
        step: None,
        node: None,
    });
    let family = IpFamily::of(&dst_ip);

    // Which node's rules see it first.
    let (node, hook) = match &req.origin {
        Origin::Pod { pod } => match sim.cluster.pod(pod).and_then(|p| p.node_name.clone()) {
            Some(n) => (n, Hook::Prerouting),
            None => return finish(t, hops),
        },
        Origin::Node { node, src } => {
            let own = sim
                .cluster
                .node(node)
                .is_some_and(|n| n.addresses.iter().any(|(_, a)| a == src))
                || src.is_loopback();
            (
                node.clone(),
                if own { Hook::Output } else { Hook::Prerouting },
            )
        }
        Origin::External { .. } => match external_entry(sim, dst_ip, req, family, chooser) {
            Some(Entry::Refused) => {
                // The cloud load balancer's firewall: on the NodePort path
                // kube-proxy's own source-range rules never see the packet
                // ("the firewall rules will not apply", syncProxyRules), so
                // the provider enforces loadBalancerSourceRanges itself.
                hops.push(Hop {
                    place: Place::LoadBalancer,
                    what: HopKind::Drop {
                        reason: DropReason::SourceRange,
                    },
                    before: pkt,
                    after: pkt,
                    step: None,
                    node: None,
                });
                t.verdict = Verdict::Drop {
                    reason: DropReason::SourceRange,
                };
                t.outcome = Outcome::Dropped {
                    reason: DropReason::SourceRange,
                };
                return finish(t, hops);
            }
            Some(Entry::Node { node, lb }) => {
                if let Some((to, healthy, total)) = lb {
                    let before = pkt;
                    pkt.dst = to;
                    hops.push(Hop {
                        place: Place::LoadBalancer,
                        what: HopKind::LoadBalancer {
                            node: node.clone(),
                            healthy_nodes: healthy,
                            total_nodes: total,
                        },
                        before,
                        after: pkt,
                        step: None,
                        node: Some(node.clone()),
                    });
                }
                hops.push(arrival(&node, pkt));
                (node, Hook::Prerouting)
            }
            None => {
                t.outcome = Outcome::Unrouted;
                return finish(t, hops);
            }
        },
    };
    let world = Answering { sim, now_ms };
    // A packet no rule of this node takes, addressed to another node (a Pod
    // or node calling some node's NodePort), crosses the network once and
    // meets that node's rules.
    let (mut node, mut hook) = (node, hook);
    let mut crossed = false;
    let (verdict, masquerade) = loop {
        t.node = Some(node.clone());
        let key = (pkt.protocol, pkt.src, pkt.dst);
        let (verdict, masquerade) = match state.conntrack.get(&key).filter(|e| e.node == node) {
            Some(entry) => {
                t.established = true;
                if let Some(ep) = entry.verdict.endpoint() {
                    hops.push(Hop {
                        place: Place::NodeProxy(node.clone()),
                        what: HopKind::Established { endpoint: ep },
                        before: pkt,
                        after: pkt,
                        step: None,
                        node: Some(node.clone()),
                    });
                }
                (entry.verdict.clone(), entry.masquerade)
            }
            None => {
                let Some(dp) = sim.dataplane(&node, family) else {
                    return finish(t, hops);
                };
                let ns = state.nodes.entry(node.clone()).or_default();
                let out = dp.process(&pkt, hook, ns, chooser, &world, now_ms);
                t.endpoints = out.candidates.clone();
                t.rules_compared += out.rules_compared;
                let mut cur = pkt;
                for step in &out.steps {
                    let before = cur;
                    match &step.action {
                        StepAction::Dnat { to } | StepAction::Redirect { to } => cur.dst = *to,
                        StepAction::Connect { to, answered: true } => {
                            cur = Packet::new(cur.src, *to, cur.protocol)
                        }
                        _ => {}
                    }
                    hops.push(Hop {
                        place: Place::NodeProxy(node.clone()),
                        what: HopKind::Rule,
                        before,
                        after: cur,
                        step: Some(step.clone()),
                        node: Some(node.clone()),
                    });
                }
                if matches!(out.verdict, Verdict::Dnat { .. } | Verdict::Proxied { .. })
                    && req.protocol != Protocol::Udp
                    || req.keep_open
                {
                    state.conntrack.insert(
                        key,
                        ConntrackEntry {
                            node: node.clone(),
                            verdict: out.verdict.clone(),
                            masquerade: out.masquerade,
                            created_ms: now_ms,
                        },
                    );
                }
                if !req.keep_open {
                    close_ipvs_connection(state, &node, &out.steps, &out.verdict);
                }
                (out.verdict, out.masquerade)
            }
        };
        let next = match verdict {
            Verdict::None if !crossed => sim.node_by_ip(pkt.dst.ip()).filter(|n| n.name != node),
            _ => None,
        };
        let Some(next) = next else {
            break (verdict, masquerade);
        };
        crossed = true;
        node = next.name.clone();
        hook = Hook::Prerouting;
        hops.push(arrival(&node, pkt));
    };
    t.verdict = verdict.clone();
    t.masquerade = masquerade;
    match verdict {
        Verdict::Drop { reason } => {
            hops.push(Hop {
                place: Place::NodeProxy(node.clone()),
                what: HopKind::Drop { reason },
                before: pkt,
                after: pkt,
                step: None,
                node: Some(node.clone()),
            });
            t.outcome = Outcome::Dropped { reason };
        }
        Verdict::Reject { reason } => {
            hops.push(Hop {
                place: Place::NodeProxy(node.clone()),
                what: HopKind::Reject { reason },
                before: pkt,
                after: pkt,
                step: None,
                node: Some(node.clone()),
            });
            t.outcome = Outcome::Rejected { reason };
        }
        Verdict::Accept => t.outcome = Outcome::AcceptedByNode { node: node.clone() },
        Verdict::Dnat { endpoint } => {
            let mut out = pkt;
            out.dst = endpoint;
            deliver(sim, &mut t, &mut hops, &node, out, masquerade, &world, sent);
        }
        Verdict::Proxied { endpoint, source } => {
            let out = Packet::new(source, endpoint, pkt.protocol);
            deliver(sim, &mut t, &mut hops, &node, out, false, &world, sent);
        }
        Verdict::None => {
            // Not Service traffic: route to whoever owns the address.
            if sim.pod_by_ip(pkt.dst.ip()).is_some() {
                deliver(sim, &mut t, &mut hops, &node, pkt, false, &world, sent);
            } else if let Some(n) = sim.node_by_ip(pkt.dst.ip()) {
                t.outcome = Outcome::AcceptedByNode {
                    node: n.name.clone(),
                };
            }
        }
    }
    finish(t, hops)
}

/// The packet reaching `node`'s network interface.
fn arrival(node: &str, pkt: Packet) -> Hop {
    Hop {
        place: Place::NodeEth(node.to_string()),
        what: HopKind::Arrive {
            node: node.to_string(),
        },
        before: pkt,
        after: pkt,
        step: None,
        node: Some(node.to_string()),
    }
}

fn finish(mut t: Trace, hops: Vec<Hop>) -> Trace {
    t.hops = hops;
    t
}

/// Where external traffic enters the cluster.
enum Entry {
    /// This node, with the load balancer's forwarding (target NodePort,
    /// healthy nodes, total nodes) when it went through one.
    Node {
        node: String,
        lb: Option<(SocketAddr, usize, usize)>,
    },
    /// The load balancer refused the client (loadBalancerSourceRanges).
    Refused,
}

fn external_entry(
    sim: &Sim<'_>,
    dst: IpAddr,
    req: &Request,
    family: IpFamily,
    chooser: &mut Chooser,
) -> Option<Entry> {
    let at = |n: &crate::model::Node| Entry::Node {
        node: n.name.clone(),
        lb: None,
    };
    if let Some(n) = sim.node_by_ip(dst) {
        return Some(at(n));
    }
    // A LoadBalancer Service's address: the cloud load balancer picks a node
    // and forwards to its NodePort, keeping the client's source address.
    let lb = sim.cluster.services.iter().find_map(|s| {
        if s.service_type != ServiceType::LoadBalancer
            || !s.load_balancer_addresses().any(|ip| *ip == dst)
        {
            return None;
        }
        let port = s
            .ports
            .iter()
            .find(|p| p.port == req.port && p.protocol == req.protocol)?;
        Some((s, port.node_port?))
    });
    if let Some((svc, node_port)) = lb {
        let client = match req.origin {
            Origin::External { client } => client,
            _ => dst,
        };
        let ranges = &svc.load_balancer_source_ranges;
        if !ranges.is_empty() && !ranges.iter().any(|r| r.contains(&client)) {
            return Some(Entry::Refused);
        }
        let total = sim.cluster.nodes.len();
        let healthy: Vec<&crate::model::Node> = sim
            .cluster
            .nodes
            .iter()
            .filter(|n| {
                if svc.external_traffic_policy != TrafficPolicy::Local {
                    return true;
                }
                // The health check NodePort answers 200 only with a local
                // ready endpoint (terminating ones do not count).
                sim.input(&n.name, family)
                    .is_some_and(|inp| inp.local_ready_endpoints(&svc.id) > 0)
            })
            .collect();
        let pool: Vec<&crate::model::Node> = if healthy.is_empty() {
            sim.cluster.nodes.iter().collect()
        } else {
            healthy.clone()
        };
        if pool.is_empty() {
            return None;
        }
        let n = pool[chooser.below(pool.len())];
        let ip = n.primary_ip(family)?;
        return Some(Entry::Node {
            node: n.name.clone(),
            lb: Some((sock(ip, node_port), healthy.len(), total)),
        });
    }
    // externalIPs, a load balancer without NodePorts (it sends the packet
    // on addressed to its IP) and anything else: the network routes it to
    // the proxy's node.
    sim.cluster.proxy_node().map(at)
}

#[allow(clippy::too_many_arguments)]
fn deliver(
    sim: &Sim<'_>,
    t: &mut Trace,
    hops: &mut Vec<Hop>,
    node: &str,
    mut pkt: Packet,
    masquerade: bool,
    world: &Answering<'_>,
    original: Packet,
) {
    let endpoint = pkt.dst;
    let pod = sim.pod_by_ip(endpoint.ip());
    let target_node = pod.and_then(|p| p.node_name.clone());
    if masquerade {
        let before = pkt;
        let fam = IpFamily::of(&endpoint.ip());
        let local = target_node.as_deref() == Some(node);
        let n = sim.cluster.node(node);
        // SNAT to the address of the interface the packet leaves by: the
        // node's address, or its bridge (first address of the podCIDR) for a
        // local Pod.
        let ip = if local {
            n.and_then(|n| n.pod_cidr(fam))
                .and_then(|c| bridge_ip(&c))
                .or_else(|| n.and_then(|n| n.primary_ip(fam)))
        } else {
            n.and_then(|n| n.primary_ip(fam))
        };
        if let Some(ip) = ip {
            pkt.src = sock(ip, pkt.src.port());
            hops.push(Hop {
                place: Place::NodeProxy(node.to_string()),
                what: HopKind::Masquerade { to: pkt.src },
                before,
                after: pkt,
                step: None,
                node: Some(node.to_string()),
            });
        }
    }
    if let Some(tn) = &target_node {
        if tn != node {
            hops.push(Hop {
                place: Place::NodeProxy(tn.clone()),
                what: HopKind::PodNetwork {
                    from: node.to_string(),
                    to: tn.clone(),
                },
                before: pkt,
                after: pkt,
                step: None,
                node: Some(tn.clone()),
            });
        }
    }
    let pod_id = pod.map(|p| p.id.clone());
    let place = match &pod_id {
        Some(id) => Place::Pod(id.clone()),
        None => Place::NodeProxy(node.to_string()),
    };
    if world.answers(endpoint) {
        hops.push(Hop {
            place: place.clone(),
            what: HopKind::Deliver,
            before: pkt,
            after: pkt,
            step: None,
            node: target_node.clone(),
        });
        // The reply, un-NATed by conntrack back to what the client sent to.
        let reply_before = pkt.reversed();
        let reply_after = original.reversed();
        hops.push(Hop {
            place,
            what: HopKind::Reply,
            before: reply_before,
            after: reply_after,
            step: None,
            node: Some(node.to_string()),
        });
        t.outcome = Outcome::Delivered {
            pod: pod_id,
            endpoint,
            source: pkt.src,
        };
    } else {
        hops.push(Hop {
            place,
            what: HopKind::NoAnswer,
            before: pkt,
            after: pkt,
            step: None,
            node: target_node,
        });
        t.outcome = Outcome::TimedOut {
            pod: pod_id,
            endpoint,
        };
    }
}

fn bridge_ip(c: &ipnet::IpNet) -> Option<IpAddr> {
    match c {
        ipnet::IpNet::V4(v4) => Some(IpAddr::V4(std::net::Ipv4Addr::from(
            u32::from(v4.network()).wrapping_add(1),
        ))),
        ipnet::IpNet::V6(v6) => Some(IpAddr::V6(std::net::Ipv6Addr::from(
            u128::from(v6.network()).wrapping_add(1),
        ))),
    }
}

/// A short-lived connection ends: IPVS moves it from active to inactive.
fn close_ipvs_connection(state: &mut WorldState, node: &str, steps: &[Step], verdict: &Verdict) {
    let Some(ep) = verdict.endpoint() else { return };
    let Some(vs) = steps.iter().find_map(|s| match &s.action {
        StepAction::Lookup { matched } => Some(matched.clone()),
        _ => None,
    }) else {
        return;
    };
    if let Some(ns) = state.nodes.get_mut(node) {
        if let Some(c) = ns.conns.get_mut(&(vs, ep)) {
            if c.active > 0 {
                c.active -= 1;
                c.inactive += 1;
            }
        }
    }
}

/// `kpv trace`: parse the flags' addresses and trace one connection in steady state.
pub fn cli_trace(
    cluster: &Cluster,
    node: &str,
    scheduler: Option<Scheduler>,
    args: &TraceArgs,
) -> Result<Trace, String> {
    let src: IpAddr = crate::model::parse_ip_sloppy(&args.src)
        .ok_or_else(|| format!("--src `{}` is not an IP address", args.src))?;
    let dst = match crate::model::parse_ip_sloppy(&args.dst) {
        Some(ip) => Dest::Ip(ip),
        None if args
            .dst
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
            && !args.dst.is_empty() =>
        {
            Dest::Name(args.dst.clone())
        }
        None => {
            return Err(format!(
                "--dst `{}` is neither an IP address nor a DNS name",
                args.dst
            ))
        }
    };
    let origin = match &args.from {
        From::Node => Origin::Node {
            node: node.to_string(),
            src,
        },
        From::External => Origin::External { client: src },
        From::Pod(id) => {
            if cluster.pod(id).is_none() {
                return Err(format!("no Pod {id} in the input"));
            }
            Origin::Pod { pod: id.clone() }
        }
    };
    let slices = crate::controller::steady_slices(cluster);
    let sim = Sim::new(cluster, &slices, cluster.proxy.mode, scheduler);
    let req = Request {
        origin,
        dst,
        port: args.port,
        protocol: args.protocol,
        src_port: 40000,
        keep_open: false,
    };
    let mut state = WorldState::default();
    let mut chooser = Chooser::new(args.seed);
    let _ = AllAnswer;
    Ok(trace(&sim, &req, &mut state, &mut chooser, 0))
}

/// The `kpv trace --format json` contract.
#[cfg(feature = "json")]
pub fn to_json(t: &Trace) -> serde_json::Value {
    serde_json::json!({
        "verdict": t.verdict.word(),
        "endpoints": t.endpoints.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
        "endpoint": t.verdict.endpoint().map(|e| e.to_string()),
        "masquerade": t.masquerade,
        "node": t.node,
        "mode": t.mode.as_str(),
        "rules_compared": t.rules_compared,
        "outcome": t.outcome,
        "hops": t.hops.iter().map(|h| serde_json::json!({
            "place": h.place,
            "what": h.what,
            "before": { "src": h.before.src.to_string(), "dst": h.before.dst.to_string() },
            "after": { "src": h.after.src.to_string(), "dst": h.after.dst.to_string() },
            "table_chain": h.step.as_ref().map(|s| s.table_chain.clone()),
            "rule": h.step.as_ref().map(|s| s.rule.clone()),
            "line": h.step.as_ref().and_then(|s| s.line),
        })).collect::<Vec<_>>(),
    })
}

/// A one-line description of a hop (English; the web app has its own translations).
pub fn describe_hop(h: &Hop) -> String {
    match &h.what {
        HopKind::Dns { name, answer } => format!("DNS: {name} → {answer}"),
        HopKind::Send => format!("send {}", h.before),
        HopKind::LoadBalancer {
            node,
            healthy_nodes,
            total_nodes,
        } => format!(
            "load balancer → {node} ({} → {}; {healthy_nodes} of {total_nodes} nodes healthy)",
            h.before.dst, h.after.dst
        ),
        HopKind::Arrive { node } => format!("arrives at {node} eth0"),
        HopKind::Established { endpoint } => {
            format!("conntrack: established flow → {endpoint} (rules not consulted)")
        }
        HopKind::Rule => match &h.step {
            Some(s) => format!("{}: {}", s.table_chain, s.rule),
            None => "rule".into(),
        },
        HopKind::Masquerade { to } => format!("masquerade: source {} → {to}", h.before.src),
        HopKind::PodNetwork { from, to } => format!("pod network: {from} → {to}"),
        HopKind::Deliver => format!(
            "delivered: {} (the Pod sees source {})",
            h.after.dst, h.after.src
        ),
        HopKind::NoAnswer => format!("{} does not answer: connection times out", h.after.dst),
        HopKind::Drop { reason } if h.place == Place::LoadBalancer => format!(
            "load balancer: DROP ({}; on the NodePort path the cloud provider enforces them, not kube-proxy)",
            reason_text(*reason)
        ),
        HopKind::Drop { reason } => format!("DROP ({})", reason_text(*reason)),
        HopKind::Reject { reason } => format!("REJECT ({})", reason_text(*reason)),
        HopKind::Reply => format!(
            "reply {} → {} (conntrack reverses the NAT)",
            h.after.src, h.after.dst
        ),
    }
}

pub fn reason_text(r: DropReason) -> &'static str {
    match r {
        DropReason::NoEndpoints => "the Service has no endpoints",
        DropReason::NoLocalEndpoints => "externalTrafficPolicy Local and no endpoint on this node",
        DropReason::SourceRange => "source not in loadBalancerSourceRanges",
        DropReason::UnallocatedClusterIp => "no Service has this cluster IP",
        DropReason::UnknownPort => "no Service port there",
        DropReason::AllBackendsFailed => "no backend answered",
        DropReason::Invalid => "invalid packet",
    }
}

/// `kpv trace --format text`.
pub fn render_text(t: &Trace) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "mode: {}   node: {}",
        t.mode.as_str(),
        t.node.as_deref().unwrap_or("-")
    );
    for (i, h) in t.hops.iter().enumerate() {
        let _ = writeln!(s, "{:>3}. {}", i + 1, describe_hop(h));
    }
    let _ = writeln!(
        s,
        "verdict: {}{}",
        t.verdict.word(),
        t.verdict
            .endpoint()
            .map(|e| format!(" → {e}"))
            .unwrap_or_default()
    );
    let eps: Vec<String> = t.endpoints.iter().map(|e| e.to_string()).collect();
    let _ = writeln!(
        s,
        "could reach: {}",
        if eps.is_empty() {
            "-".into()
        } else {
            eps.join(", ")
        }
    );
    let _ = writeln!(
        s,
        "masquerade: {}   rules compared: {}",
        t.masquerade, t.rules_compared
    );
    s
}

/// The teaching stages of a Service's path: which part of kube-proxy's
/// machinery a hop belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// The cloud load balancer, or a Service's LoadBalancer IP rules.
    LoadBalancer,
    /// A node's NodePort (and the external-traffic chains behind it).
    NodePort,
    ExternalIp,
    /// The Service's ClusterIP and its load-balancing chain (KUBE-SVC-,
    /// nftables `service-` chains, the userspace proxy's round robin, an IPVS
    /// virtual server on the ClusterIP).
    ClusterIp,
    /// The chosen endpoint: its DNAT, delivery to the Pod.
    Pod,
}

impl Stage {
    pub fn word(self) -> &'static str {
        match self {
            Stage::LoadBalancer => "load-balancer",
            Stage::NodePort => "node-port",
            Stage::ExternalIp => "external-ip",
            Stage::ClusterIp => "cluster-ip",
            Stage::Pod => "pod",
        }
    }
}

/// What kind of Service address `dst` is in `cluster`, if any.
fn address_stage(cluster: &Cluster, dst: SocketAddr) -> Option<Stage> {
    for s in &cluster.services {
        for p in &s.ports {
            if s.cluster_ips.contains(&dst.ip()) && p.port == dst.port() {
                return Some(Stage::ClusterIp);
            }
            if s.load_balancer_addresses().any(|ip| *ip == dst.ip()) && p.port == dst.port() {
                return Some(Stage::LoadBalancer);
            }
            if s.external_ips.contains(&dst.ip()) && p.port == dst.port() {
                return Some(Stage::ExternalIp);
            }
            if p.node_port == Some(dst.port())
                && cluster.nodes.iter().any(|n| {
                    n.addresses.iter().any(|(_, a)| *a == dst.ip()) || dst.ip().is_loopback()
                })
            {
                return Some(Stage::NodePort);
            }
        }
    }
    None
}

/// The stage of every hop (`None` for hops outside kube-proxy's Service
/// machinery: generic netfilter hooks, the filter table's checks, DNS, the
/// reply). Chain names are each mode's own: iptables `KUBE-NODEPORTS`,
/// `KUBE-EXT-`, `KUBE-SVC-`/`KUBE-SVL-`, `KUBE-SEP-`, `KUBE-FW-`; nftables
/// `nodeports`/`service-nodeports`, `external-`, `service-`/`local-`,
/// `endpoint-`, `firewall-`; IPVS's lookup classified by the virtual
/// server's address; the userspace proxy process.
pub fn stages(cluster: &Cluster, trace: &Trace) -> Vec<Option<Stage>> {
    trace
        .hops
        .iter()
        .map(|h| match &h.what {
            HopKind::LoadBalancer { .. } => Some(Stage::LoadBalancer),
            HopKind::Deliver | HopKind::NoAnswer => Some(Stage::Pod),
            HopKind::Rule => {
                let step = h.step.as_ref()?;
                let chain = step.table_chain.as_str();
                let per_service = chain.contains('/');
                let has = |p: &str| chain.contains(p);
                if matches!(
                    step.action,
                    StepAction::Dnat { .. } | StepAction::Connect { answered: true, .. }
                ) || has("KUBE-SEP-")
                    || (has("chain endpoint-") && per_service)
                {
                    Some(Stage::Pod)
                } else if has("KUBE-SVC-")
                    || has("KUBE-SVL-")
                    || ((has("chain service-") || has("chain local-")) && per_service)
                    || chain == "kube-proxy process"
                {
                    Some(Stage::ClusterIp)
                } else if has("KUBE-FW-")
                    || has("KUBE-LOAD-BALANCER")
                    || (has("chain firewall-") && per_service)
                {
                    Some(Stage::LoadBalancer)
                } else if has("KUBE-NODEPORTS")
                    || has("KUBE-EXT-")
                    || has("KUBE-NODE-PORT")
                    || has("KUBE-NODEPORT-")
                    || has("service-nodeports")
                    || (has("chain external-") && per_service)
                {
                    Some(Stage::NodePort)
                } else if chain == "IPVS"
                    || has("KUBE-SERVICES")
                    || has("KUBE-PORTALS-")
                    || has("service-ips")
                {
                    // The first match on a Service address: classify by the address.
                    if matches!(step.action, StepAction::Return) {
                        None
                    } else {
                        address_stage(cluster, h.before.dst)
                            .filter(|_| !step.rule.starts_with("(end"))
                    }
                } else {
                    None
                }
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod stage_tests {
    use super::*;

    const NODEPORT: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {podCIDR: 10.244.1.0/24}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.11}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: web, labels: {app: web}}\nspec: {nodeName: n1, containers: [{name: c, ports: [{containerPort: 80}]}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  type: NodePort\n  selector: {app: web}\n  ports: [{port: 80, nodePort: 30080}]\n---\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nclusterCIDR: 10.244.0.0/16\n";

    fn order(mode: Mode) -> Vec<Stage> {
        let (cluster, _) = crate::model::parse(NODEPORT);
        let slices = crate::controller::steady_slices(&cluster);
        let sim = Sim::new(&cluster, &slices, mode, None);
        let req = Request {
            origin: Origin::External {
                client: "198.51.100.7"
                    .parse()
                    .unwrap_or(IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)),
            },
            dst: Dest::Ip(
                "192.168.0.11"
                    .parse()
                    .unwrap_or(IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)),
            ),
            port: 30080,
            protocol: Protocol::Tcp,
            src_port: 40000,
            keep_open: false,
        };
        let t = trace(
            &sim,
            &req,
            &mut WorldState::default(),
            &mut Chooser::new(1),
            0,
        );
        assert!(
            matches!(t.outcome, Outcome::Delivered { .. }),
            "{mode:?}: {:?}",
            t.outcome
        );
        let mut v: Vec<Stage> = stages(&cluster, &t).into_iter().flatten().collect();
        v.dedup();
        v
    }

    #[test]
    fn nodeport_traffic_passes_the_stages_each_mode_really_has() {
        use Stage::*;
        // iptables and nftables: NodePort chains jump to the Service's chain.
        assert_eq!(order(Mode::Iptables), vec![NodePort, ClusterIp, Pod]);
        assert_eq!(order(Mode::Nftables), vec![NodePort, ClusterIp, Pod]);
        // IPVS: one virtual server per node address and NodePort, straight to the real server.
        assert_eq!(order(Mode::Ipvs), vec![NodePort, Pod]);
        // userspace: the NodePort redirect, then the proxy process's round robin.
        assert_eq!(order(Mode::Userspace), vec![NodePort, ClusterIp, Pod]);
    }
}
