//! What a trace is made of: the request (where it starts, where it goes),
//! each hop with the packet before and after, the outcome, and the state
//! that outlives one connection (conntrack, per-node mode state).
//!
//! Plain values only: nothing here decides a packet's path (that is
//! [`super`]'s stages) or words it (that is `render`).

use crate::model::packet::{Packet, Protocol};
use crate::model::{Mode, NamespacedName};
use crate::net::modes::{DropReason, NodeState, Step, Verdict};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
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

/// Where a packet starts, by name: `external`, `pod:NAMESPACE/NAME`,
/// `node:NAME`, or `node` alone (the node whose rules are shown, as the
/// CLI's `--from node`). The one reader and writer of these keys: the CLI's
/// `--from`, the app's origin list and its lessons use it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum OriginKey {
    External,
    Pod(NamespacedName),
    /// A node by name, or (`None`) the node in question.
    Node(Option<String>),
}

impl OriginKey {
    /// Read a key; `None` when it is none of the forms above.
    pub fn parse(s: &str) -> Option<OriginKey> {
        match s {
            "external" => Some(OriginKey::External),
            "node" => Some(OriginKey::Node(None)),
            _ => {
                if let Some(rest) = s.strip_prefix("pod:") {
                    let (ns, name) = rest.split_once('/')?;
                    (!ns.is_empty() && !name.is_empty() && !name.contains('/'))
                        .then(|| OriginKey::Pod(NamespacedName::new(ns, name)))
                } else {
                    let node = s.strip_prefix("node:").filter(|n| !n.is_empty())?;
                    Some(OriginKey::Node(Some(node.to_string())))
                }
            }
        }
    }

    /// The key of an origin.
    pub fn of(origin: &Origin) -> OriginKey {
        match origin {
            Origin::External { .. } => OriginKey::External,
            Origin::Pod { pod } => OriginKey::Pod(pod.clone()),
            Origin::Node { node, .. } => OriginKey::Node(Some(node.clone())),
        }
    }
}

impl std::fmt::Display for OriginKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OriginKey::External => f.write_str("external"),
            OriginKey::Pod(id) => write!(f, "pod:{id}"),
            OriginKey::Node(None) => f.write_str("node"),
            OriginKey::Node(Some(n)) => write!(f, "node:{n}"),
        }
    }
}

/// Where it is going: an address or a DNS name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "lowercase")]
pub enum Dest {
    Ip(IpAddr),
    Name(String),
    /// An HTTP request through an Ingress or Gateway entry point (replayed
    /// as a [`crate::http::journey`], not by [`super::trace`]). Share links carry
    /// it through their own codec; serde only writes it (a derived reader
    /// would cost the .wasm for nothing).
    #[serde(skip_deserializing)]
    Http(Box<crate::http::values::HttpSend>),
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
            Dest::Http(h) => format!("{} {}", h.request.method, h.request.url()),
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
    /// DNS answered with a CNAME to `target`, a name outside the cluster
    /// (an ExternalName Service): kube-proxy has no rules for it, and the
    /// connection goes wherever that name resolves.
    ExternalName {
        name: String,
        target: String,
    },
    /// An HTTP proxy Pod (an Ingress controller's or a Gateway's) answered
    /// the request itself — a redirect, a CORS preflight, its own 4xx or
    /// 5xx — and no backend was asked. `status` is `None` when there was
    /// no HTTP answer at all: the TLS handshake failed, or no listener
    /// took the connection.
    Answered {
        pod: NamespacedName,
        status: Option<u16>,
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

/// Where a reply gets the Service's address back as its source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplyVia {
    /// Conntrack on the node the request came in by reverses its NAT.
    Conntrack,
    /// After direct server return the backend's node restores it and sends
    /// the reply straight to the client, past the entry node.
    Dsr,
    /// The client's own socket restores it (`recvmsg()`): the connection
    /// was translated there, so no packet ever carried the Service address.
    Socket,
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
    /// The reply, on its way back to the client.
    Reply {
        via: ReplyVia,
    },
    /// A step inside an HTTP proxy Pod (TLS, the routing decision, the
    /// new connection to the backend or the proxy's own answer).
    Http(Box<crate::http::values::ProxyHop>),
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

impl Trace {
    /// The last hop up to `hop` (all of them past the end) that met a rule:
    /// the rule the packet is at now, or last passed.
    pub fn rule_hop_until(&self, hop: usize) -> Option<&Hop> {
        self.hops
            .get(..=hop)
            .unwrap_or(&self.hops)
            .iter()
            .rev()
            .find(|h| h.step.is_some())
    }

    /// The hop where the destination first became an endpoint's: a rule
    /// that rewrote it, at the client's socket or in a node's rules.
    pub fn translated_at(&self) -> Option<usize> {
        self.hops
            .iter()
            .position(|h| matches!(h.what, HopKind::Rule) && h.after.dst != h.before.dst)
    }

    /// The hop a still picture of this packet shows (an embed at rest):
    /// where it was dropped or refused; failing that, where its destination
    /// became an endpoint's; failing that, its last hop before any reply.
    pub fn poster_hop(&self) -> usize {
        self.hops
            .iter()
            .position(|h| matches!(h.what, HopKind::Drop { .. } | HopKind::Reject { .. }))
            .or_else(|| self.translated_at())
            .or_else(|| {
                self.hops
                    .iter()
                    .rposition(|h| !matches!(h.what, HopKind::Reply { .. }))
            })
            .unwrap_or(0)
    }

    /// The trace of `request` before anything has happened: no node, no
    /// verdict, no hops, and `Unrouted` until a stage says otherwise.
    pub fn new(request: Request, mode: Mode) -> Trace {
        Trace {
            request,
            mode,
            node: None,
            verdict: Verdict::None,
            endpoints: Vec::new(),
            masquerade: false,
            rules_compared: 0,
            outcome: Outcome::Unrouted,
            hops: Vec::new(),
            established: false,
        }
    }
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
    /// By node name: one entry per node a packet has reached.
    pub nodes: crate::util::vecmap::VecMap<String, NodeState>,
    /// Keyed by the packet as it arrived at the node (protocol, src, dst).
    pub conntrack: BTreeMap<(Protocol, SocketAddr, SocketAddr), ConntrackEntry>,
}

/// A place a packet can be at: where a hop happens (the diagram's scene
/// draws one vertex per place; the tracer knows no layout).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "kebab-case")]
pub enum Place {
    Client,
    LoadBalancer,
    /// A node's eth0 (where NodePorts listen).
    NodeEth(String),
    /// A node's netfilter / kube-proxy rules box.
    NodeProxy(String),
    Service(NamespacedName),
    Pod(NamespacedName),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_keys_read_back_what_they_write_and_refuse_the_rest() {
        for (text, key) in [
            ("external", OriginKey::External),
            ("node", OriginKey::Node(None)),
            ("node:worker-1", OriginKey::Node(Some("worker-1".into()))),
            (
                "pod:default/alpaca-1",
                OriginKey::Pod(NamespacedName::new("default", "alpaca-1")),
            ),
        ] {
            assert_eq!(OriginKey::parse(text), Some(key.clone()), "{text}");
            assert_eq!(key.to_string(), text);
        }
        for bad in [
            "",
            "pod:",
            "pod:default",
            "pod:/x",
            "pod:a/",
            "pod:a/b/c",
            "node:",
            "auto",
            "Pod:a/b",
        ] {
            assert_eq!(OriginKey::parse(bad), None, "{bad}");
        }
        let pod = Origin::Pod {
            pod: NamespacedName::new("ns", "p"),
        };
        assert_eq!(OriginKey::of(&pod).to_string(), "pod:ns/p");
    }
}
