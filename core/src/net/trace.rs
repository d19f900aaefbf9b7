//! A packet's whole journey: DNS, the cloud load balancer, a node's
//! conntrack and kube-proxy rules, masquerade, the pod network, delivery (or
//! the drop or reject, and why), and the reply translated back.
//!
//! The per-node rules are the mode's business ([`crate::net::modes::Dataplane`]);
//! this module strings nodes together the same way for every mode. Random
//! choices (the load balancer's node, the rules' endpoint pick) come from the
//! [`Chooser`] the caller seeds; time is passed in. State that outlives one
//! connection (conntrack, round-robin positions, affinity) is in [`WorldState`],
//! owned by the caller, so replaying the same requests gives the same paths.

use crate::model::packet::{IpFamily, Packet, Protocol};
use crate::model::{
    Cluster, EndpointSlice, Mode, NamespacedName, Scheduler, ServiceType, TrafficPolicy,
};
use crate::net::controller::{app_state_at_or_default, AppChange};
use crate::net::modes::{
    CompileOptions, Compilers, Dataplane, DropReason, Hook, Step, StepAction, Verdict, World,
};
use crate::net::proxy::{self, ProxyInput};
use crate::util::choose::Chooser;
use crate::util::vecmap::VecMap;
pub use render::{describe_hop, describe_outcome, reason_text, render_text};
#[cfg(feature = "json")]
pub use render::{hop_json, to_json};
use std::net::{IpAddr, SocketAddr};

mod render;
mod socket;
mod stages;
mod types;

pub use stages::{stages, Stage};

pub use types::{
    ConntrackEntry, Dest, Hop, HopKind, Origin, OriginKey, Outcome, Place, ReplyVia, Request,
    Trace, WorldState,
};

/// The data planes of every node, compiled on first use: a trace meets one
/// or two nodes, so a 100-node cluster compiles those, not a hundred.
pub struct Sim<'a> {
    pub cluster: &'a Cluster,
    pub mode: Mode,
    /// The slices as this mode's proxy reads them.
    slices: Vec<EndpointSlice>,
    opts: CompileOptions,
    /// The compilers the caller handed in (the mode's may be absent: then
    /// the nodes have [`crate::net::modes::Unloaded`] planes).
    compilers: Compilers,
    /// By node and family, in that order (one entry per node and family).
    inputs: VecMap<(String, IpFamily), std::cell::OnceCell<Option<ProxyInput>>>,
    planes: VecMap<(String, IpFamily), std::cell::OnceCell<Box<dyn Dataplane>>>,
    /// App states (who answers) and the time they are read at.
    changes: Vec<AppChange>,
    /// The slices cluster DNS answers from (every Service's).
    dns_slices: Vec<EndpointSlice>,
}

impl<'a> Sim<'a> {
    /// Every node's rules from the slices kube-proxy has synced (each
    /// compiled when a packet first needs it, by `mode`'s compiler among
    /// `compilers`).
    pub fn new(
        cluster: &'a Cluster,
        slices: &[EndpointSlice],
        mode: Mode,
        scheduler: Option<Scheduler>,
        compilers: Compilers,
    ) -> Sim<'a> {
        let mut inputs = VecMap::new();
        let mut planes = VecMap::new();
        let dns_slices = crate::net::dns::slices_for_dns(cluster, slices);
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
            compilers,
            inputs,
            planes,
            changes: Vec::new(),
            dns_slices,
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
            cell.get_or_init(|| self.compilers.compile(self.mode, input, self.opts))
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

    /// Cluster DNS (see [`crate::net::dns`]): the address and the name that
    /// answered, or the outcome when no address comes back.
    fn resolve(
        &self,
        name: &str,
        origin: &Origin,
        families: &[IpFamily],
    ) -> Result<(IpAddr, String), Outcome> {
        // A Pod asks as its resolv.conf says; a node or an outside client
        // is taken to ask cluster DNS as a Pod of `default` would.
        let asker = match origin {
            Origin::Pod { pod } => Some(pod),
            _ => None,
        };
        let conf = crate::net::dns::resolver::conf_for(self.cluster, asker);
        match crate::net::dns::resolve(self.cluster, &self.dns_slices, name, &conf, families) {
            crate::net::dns::Answer::Address { fqdn, ip, .. } => Ok((ip, fqdn)),
            crate::net::dns::Answer::Cname { fqdn, target } => {
                Err(Outcome::ExternalName { name: fqdn, target })
            }
            crate::net::dns::Answer::NoSuchName => Err(Outcome::NoSuchName {
                name: name.to_string(),
            }),
        }
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

/// Trace one connection: the client stage (origin, DNS, the first packet),
/// the entry stage (the load balancer, the first node), the node stage
/// (conntrack and the mode's rules, crossing to another node once), then
/// delivery and the reply.
pub fn trace(
    sim: &Sim<'_>,
    req: &Request,
    state: &mut WorldState,
    chooser: &mut Chooser,
    now_ms: u64,
) -> Trace {
    let mut t = Trace::new(req.clone(), sim.mode);
    let Some(mut pkt) = client(sim, req, &mut t) else {
        return t;
    };
    let asked = pkt;
    let Ok(at_socket) = socket::socket(sim, req, &mut pkt, state, chooser, now_ms, &mut t) else {
        return t;
    };
    let socket_endpoints = t.endpoints.clone();
    let Some((node, hook, pkt)) = entry(sim, req, pkt, chooser, &mut t) else {
        return t;
    };
    let world = Answering { sim, now_ms };
    let Some((node, verdict, masquerade)) = node_rules(
        sim,
        req,
        NodeVisit { node, hook, pkt },
        state,
        chooser,
        &world,
        now_ms,
        &mut t,
    ) else {
        return t;
    };
    // A connection the socket already sent to a backend passes the node's
    // programs untouched; its verdict is the socket's.
    let socketed = at_socket.is_some();
    if socketed {
        // What the socket could have connected to, not the node's view of
        // an already translated packet.
        t.endpoints = socket_endpoints;
    }
    let verdict = match (at_socket, verdict) {
        (Some(v), Verdict::None) => v,
        (_, v) => v,
    };
    t.verdict = verdict.clone();
    t.masquerade = masquerade;
    // The reply is translated back to what the client asked for: by
    // conntrack, or at the socket's recvmsg().
    let sent = if socketed {
        asked
    } else {
        t.hops
            .iter()
            .find(|h| matches!(h.what, HopKind::Send))
            .map_or(pkt, |h| h.before)
    };
    outcome(sim, &mut t, &node, pkt, verdict, masquerade, &world, sent);
    t
}

/// The client stage: where the packet starts, the DNS answer for a name,
/// and the first packet sent (`None`, with the outcome set, when it never
/// leaves).
pub fn client(sim: &Sim<'_>, req: &Request, t: &mut Trace) -> Option<Packet> {
    // Where the packet starts, from which address.
    // A Pod has one address per family; the kernel sends from the one of
    // the destination's family (its first, if it has none of that family).
    let (start_place, pod_ips, src_ip) = match &req.origin {
        Origin::External { client } => (Place::Client, &[][..], *client),
        Origin::Pod { pod } => {
            let p = sim.cluster.pod(pod)?;
            let Some(ip) = p.ips.first() else {
                t.outcome = Outcome::Unrouted;
                return None;
            };
            (Place::Pod(pod.clone()), &p.ips[..], *ip)
        }
        Origin::Node { node, src } => (Place::NodeProxy(node.clone()), &[][..], *src),
    };
    // The families the client has addresses of: a name's records of
    // another family are of no use to it.
    let client_families: Vec<IpFamily> = if pod_ips.is_empty() {
        vec![IpFamily::of(&src_ip)]
    } else {
        pod_ips.iter().map(IpFamily::of).collect()
    };
    let source_for = |dst: IpAddr| {
        pod_ips
            .iter()
            .copied()
            .find(|ip| ip.is_ipv4() == dst.is_ipv4())
            .unwrap_or(src_ip)
    };
    // DNS.
    // An HTTP request traced as a plain connection goes to its URL's host.
    let by_name;
    let dst = match &req.dst {
        Dest::Http(h) => {
            by_name = match h.request.authority.parse::<IpAddr>() {
                Ok(ip) => Dest::Ip(ip),
                Err(_) => Dest::Name(h.request.authority.clone()),
            };
            &by_name
        }
        d => d,
    };
    let dst_ip = match dst {
        Dest::Ip(ip) => *ip,
        Dest::Name(name) => match sim.resolve(name, &req.origin, &client_families) {
            Ok((ip, fqdn)) => {
                let p = Packet::new(
                    sock(source_for(ip), req.src_port),
                    sock(ip, req.port),
                    req.protocol,
                );
                t.hops.push(Hop {
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
            Err(outcome) => {
                t.outcome = outcome;
                return None;
            }
        },
        Dest::Http(_) => {
            t.outcome = Outcome::Unrouted;
            return None;
        }
    };
    let pkt = Packet::new(
        sock(source_for(dst_ip), req.src_port),
        sock(dst_ip, req.port),
        req.protocol,
    );
    t.hops.push(Hop {
        place: start_place,
        what: HopKind::Send,
        before: pkt,
        after: pkt,
        step: None,
        node: None,
    });
    Some(pkt)
}

/// The entry stage: which node's rules see the packet first, at which hook,
/// and the packet as it arrives there (an external client's goes through
/// the cloud load balancer, which may refuse it).
pub fn entry(
    sim: &Sim<'_>,
    req: &Request,
    mut pkt: Packet,
    chooser: &mut Chooser,
    t: &mut Trace,
) -> Option<(String, Hook, Packet)> {
    let family = IpFamily::of(&pkt.dst.ip());
    match &req.origin {
        Origin::Pod { pod } => {
            let n = sim.cluster.pod(pod).and_then(|p| p.node_name.clone())?;
            Some((n, Hook::Prerouting, pkt))
        }
        Origin::Node { node, src } => {
            let own = sim
                .cluster
                .node(node)
                .is_some_and(|n| n.addresses.iter().any(|(_, a)| a == src))
                || src.is_loopback();
            let hook = if own { Hook::Output } else { Hook::Prerouting };
            Some((node.clone(), hook, pkt))
        }
        Origin::External { .. } => match external_entry(sim, pkt.dst.ip(), req, family, chooser) {
            Some(Entry::Refused) => {
                // The cloud load balancer's firewall: on the NodePort path
                // kube-proxy's own source-range rules never see the packet
                // ("the firewall rules will not apply", syncProxyRules), so
                // the provider enforces loadBalancerSourceRanges itself.
                t.hops.push(Hop {
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
                None
            }
            Some(Entry::Node { node, lb }) => {
                if let Some((to, healthy, total)) = lb {
                    let before = pkt;
                    pkt.dst = to;
                    t.hops.push(Hop {
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
                t.hops.push(arrival(&node, pkt));
                Some((node, Hook::Prerouting, pkt))
            }
            None => {
                t.outcome = Outcome::Unrouted;
                None
            }
        },
    }
}

/// A packet about to meet a node's rules.
pub struct NodeVisit {
    pub node: String,
    pub hook: Hook,
    pub pkt: Packet,
}

/// The node stage: conntrack, else the mode's rules. A packet no rule of
/// this node takes, addressed to another node (a Pod or node calling some
/// node's NodePort), crosses the network once and meets that node's rules.
/// Returns the node that decided, its verdict and whether it masquerades
/// (`None` when the node has no rules for the packet's family).
#[allow(clippy::too_many_arguments)]
fn node_rules(
    sim: &Sim<'_>,
    req: &Request,
    visit: NodeVisit,
    state: &mut WorldState,
    chooser: &mut Chooser,
    world: &Answering<'_>,
    now_ms: u64,
    t: &mut Trace,
) -> Option<(String, Verdict, bool)> {
    let NodeVisit {
        mut node,
        mut hook,
        pkt,
    } = visit;
    let family = IpFamily::of(&pkt.dst.ip());
    let mut crossed = false;
    loop {
        t.node = Some(node.clone());
        let key = (pkt.protocol, pkt.src, pkt.dst);
        let (verdict, masquerade) = match state.conntrack.get(&key).filter(|e| e.node == node) {
            Some(entry) => {
                t.established = true;
                if let Some(ep) = entry.verdict.endpoint() {
                    t.hops.push(Hop {
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
                let dp = sim.dataplane(&node, family)?;
                let ns = state
                    .nodes
                    .get_or_insert_with(node.clone(), crate::net::modes::NodeState::default);
                let out = dp.process(&pkt, hook, ns, chooser, world, now_ms);
                t.endpoints = out.candidates.clone();
                t.rules_compared += out.rules_compared;
                rule_hops(t, &Place::NodeProxy(node.clone()), &node, pkt, &out.steps);
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
            return Some((node, verdict, masquerade));
        };
        crossed = true;
        node = next.name.clone();
        hook = Hook::Prerouting;
        t.hops.push(arrival(&node, pkt));
    }
}

/// A mode's steps as hops at `place`, each with the packet as that step
/// leaves it.
fn rule_hops(t: &mut Trace, place: &Place, node: &str, mut cur: Packet, steps: &[Step]) {
    for step in steps {
        let before = cur;
        match &step.action {
            StepAction::Dnat { to } | StepAction::Redirect { to } => cur.dst = *to,
            StepAction::Connect { to, answered: true } => {
                cur = Packet::new(cur.src, *to, cur.protocol)
            }
            _ => {}
        }
        t.hops.push(Hop {
            place: place.clone(),
            what: HopKind::Rule,
            before,
            after: cur,
            step: Some(step.clone()),
            node: Some(node.to_string()),
        });
    }
}

/// The delivery stage: what the verdict does with the packet (drop,
/// reject, the node itself, or a Pod over the pod network) and the reply.
#[allow(clippy::too_many_arguments)]
fn outcome(
    sim: &Sim<'_>,
    t: &mut Trace,
    node: &str,
    pkt: Packet,
    verdict: Verdict,
    masquerade: bool,
    world: &Answering<'_>,
    sent: Packet,
) {
    let mut hops = std::mem::take(&mut t.hops);
    match verdict {
        Verdict::Drop { reason } => {
            hops.push(Hop {
                place: Place::NodeProxy(node.to_string()),
                what: HopKind::Drop { reason },
                before: pkt,
                after: pkt,
                step: None,
                node: Some(node.to_string()),
            });
            t.outcome = Outcome::Dropped { reason };
        }
        Verdict::Reject { reason } => {
            hops.push(Hop {
                place: Place::NodeProxy(node.to_string()),
                what: HopKind::Reject { reason },
                before: pkt,
                after: pkt,
                step: None,
                node: Some(node.to_string()),
            });
            t.outcome = Outcome::Rejected { reason };
        }
        Verdict::Accept => {
            t.outcome = Outcome::AcceptedByNode {
                node: node.to_string(),
            }
        }
        Verdict::Dnat { endpoint } => {
            let mut out = pkt;
            out.dst = endpoint;
            deliver(sim, t, &mut hops, node, out, masquerade, world, sent);
        }
        Verdict::Proxied { endpoint, source } => {
            let out = Packet::new(source, endpoint, pkt.protocol);
            deliver(sim, t, &mut hops, node, out, false, world, sent);
        }
        Verdict::None => {
            // Not Service traffic: route to whoever owns the address.
            if sim.pod_by_ip(pkt.dst.ip()).is_some() {
                deliver(sim, t, &mut hops, node, pkt, false, world, sent);
            } else if let Some(n) = sim.node_by_ip(pkt.dst.ip()) {
                t.outcome = Outcome::AcceptedByNode {
                    node: n.name.clone(),
                };
            } else if pkt.dst.ip().is_loopback() {
                // A loopback address never leaves the node that sent to it.
                t.outcome = Outcome::AcceptedByNode {
                    node: node.to_string(),
                };
            }
        }
    }
    t.hops = hops;
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

/// Does the cloud load balancer's health check pass on `node` for `svc`?
/// Always under `externalTrafficPolicy: Cluster`; under Local, kube-proxy's
/// health-check NodePort answers 200 only with a ready endpoint on that node
/// (terminating ones do not count), so the load balancer skips the others.
pub fn lb_health_check_passes(
    sim: &Sim<'_>,
    svc: &crate::model::Service,
    node: &str,
    family: IpFamily,
) -> bool {
    svc.external_traffic_policy != TrafficPolicy::Local
        || sim
            .input(node, family)
            .is_some_and(|inp| inp.local_ready_endpoints(&svc.id) > 0)
}

/// The nodes the cloud load balancer skips, each with the Service whose
/// health check fails there (the first such Service in input order): only
/// `type: LoadBalancer` Services with `externalTrafficPolicy: Local` can
/// fail it, on a node without a ready local endpoint in kube-proxy's view
/// (`synced`, as `mode`'s proxy reads it). Needs no compiled rules. In node
/// order.
pub fn lb_skipped_nodes(
    cluster: &Cluster,
    synced: &[EndpointSlice],
    mode: Mode,
) -> VecMap<String, NamespacedName> {
    let local: Vec<&crate::model::Service> = cluster
        .services
        .iter()
        .filter(|s| {
            s.service_type == ServiceType::LoadBalancer
                && s.external_traffic_policy == TrafficPolicy::Local
        })
        .collect();
    let mut out = VecMap::new();
    if local.is_empty() {
        return out;
    }
    let sim = Sim::new(cluster, synced, mode, None, Compilers::NONE);
    for n in &cluster.nodes {
        let family = if n.primary_ip(IpFamily::V4).is_some() {
            IpFamily::V4
        } else {
            IpFamily::V6
        };
        if let Some(svc) = local
            .iter()
            .find(|s| !lb_health_check_passes(&sim, s, &n.name, family))
        {
            out.insert(n.name.clone(), svc.id.clone());
        }
    }
    out
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
            .filter(|n| lb_health_check_passes(sim, svc, &n.name, family))
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
        // Local: a Pod of this node or, for an endpoint with no Pod object
        // (an EndpointSlice written by hand), one whose slice names this
        // node, as kube-proxy counts it local.
        let local = match pod {
            Some(_) => target_node.as_deref() == Some(node),
            None => sim.input(node, fam).is_some_and(|i| {
                i.endpoints
                    .values()
                    .flatten()
                    .any(|e| e.is_local && e.addr.ip() == endpoint.ip())
            }),
        };
        let n = sim.cluster.node(node);
        // SNAT to the address of the interface the packet leaves by: the
        // node's address, or its bridge (first address of the podCIDR) for a
        // local endpoint (the Linux kernel's MASQUERADE takes the outgoing
        // interface's address; checked by kpv-kernelcheck).
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
        // The reply, un-NATed by conntrack back to what the client sent to;
        // after direct server return the backend's node sends it straight
        // to the client, past the node the request came in by.
        let reply_before = pkt.reversed();
        let reply_after = original.reversed();
        let dsr = hops.iter().any(|h| {
            h.step
                .as_ref()
                .is_some_and(|s| matches!(s.action, StepAction::Dsr { .. }))
        });
        let via = match (&target_node, dsr) {
            (Some(tn), true) => tn.clone(),
            _ => node.to_string(),
        };
        // Translated at the client's socket: a rule met at a Pod.
        let at_socket = hops.iter().any(|h| {
            matches!(h.what, HopKind::Rule)
                && h.after.dst != h.before.dst
                && matches!(h.place, Place::Pod(_))
        });
        let how = if dsr {
            ReplyVia::Dsr
        } else if at_socket {
            ReplyVia::Socket
        } else {
            ReplyVia::Conntrack
        };
        hops.push(Hop {
            place,
            what: HopKind::Reply { via: how },
            before: reply_before,
            after: reply_after,
            step: None,
            node: Some(via),
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
