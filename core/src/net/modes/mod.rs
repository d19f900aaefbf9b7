//! kube-proxy's data-plane modes behind one trait.
//!
//! Each mode compiles a [`ProxyInput`] (already categorised endpoints, see
//! [`crate::net::proxy::topology`]) into its own typed ruleset, renders it as the
//! text a node would show, and walks a packet through it. A mode decides
//! nothing about which endpoints are eligible; it only renders that decision.
//!
//! What happens *outside* one node's kube-proxy rules (DNS, the cloud load
//! balancer, conntrack of established flows, routing between nodes, delivery)
//! is [`crate::net::trace`]'s job, shared by every mode.

pub mod cilium;
pub mod compilers;
pub mod hash_table;
pub mod iptables;
pub mod ipvs;
pub(crate) mod lines;
pub mod nftables;
pub mod small;
pub mod userspace;

pub use compilers::{Compilers, Unloaded};

use crate::model::packet::Packet;
use crate::model::{Mode, Scheduler};
use crate::net::proxy::ProxyInput;
use crate::util::choose::Chooser;
use crate::util::vecmap::VecMap;
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

/// Where a packet meets the node's netfilter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Hook {
    /// Arrived on an interface (from outside the node, or from a local Pod):
    /// `PREROUTING`.
    Prerouting,
    /// Sent by a process on the node itself (host network): `OUTPUT`.
    Output,
}

/// What the node's kube-proxy rules did with a new connection's first packet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Verdict {
    /// DNATed to this endpoint.
    Dnat { endpoint: SocketAddr },
    /// No kube-proxy rule touched it.
    None,
    /// Explicitly accepted (health-check NodePort and the like).
    Accept,
    /// Silently dropped.
    Drop { reason: DropReason },
    /// Rejected with an ICMP error (the client sees "connection refused").
    Reject { reason: DropReason },
    /// Userspace mode: the kube-proxy process accepted the connection and
    /// opened its own to `endpoint`, from `source`.
    Proxied {
        endpoint: SocketAddr,
        source: SocketAddr,
    },
}

impl Verdict {
    /// The `verdict` word of `kpv trace --format json`.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Dnat { .. } | Verdict::Proxied { .. } => "dnat",
            Verdict::None => "none",
            Verdict::Accept => "accept",
            Verdict::Drop { .. } => "drop",
            Verdict::Reject { .. } => "reject",
        }
    }

    pub fn endpoint(&self) -> Option<SocketAddr> {
        match self {
            Verdict::Dnat { endpoint } | Verdict::Proxied { endpoint, .. } => Some(*endpoint),
            _ => None,
        }
    }
}

/// Why a packet was dropped or rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DropReason {
    /// The Service has no usable endpoints.
    NoEndpoints,
    /// externalTrafficPolicy Local and no endpoint on this node.
    NoLocalEndpoints,
    /// Source not in loadBalancerSourceRanges.
    SourceRange,
    /// Destination in the Service CIDR but no Service there (nftables).
    UnallocatedClusterIp,
    /// Right IP, wrong port: no Service port there (nftables rejects these).
    UnknownPort,
    /// Userspace: every backend failed to answer.
    AllBackendsFailed,
    /// Invalid conntrack state and similar (KUBE-FORWARD / KUBE-FIREWALL).
    Invalid,
}

/// One rule, lookup or action the packet went through, in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Step {
    /// Where: `nat PREROUTING`, `KUBE-SVC-…`, `chain services`, `IPVS`,
    /// `kube-proxy process`.
    pub table_chain: String,
    /// The rule (or virtual server) as rendered, for display.
    pub rule: String,
    /// 0-based line of the rule in [`Dataplane::render_text`], for highlighting.
    pub line: Option<usize>,
    /// Rules compared in this chain before (and including) the match.
    pub compared: usize,
    pub action: StepAction,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum StepAction {
    /// Jump/goto to a chain.
    Jump {
        to: String,
    },
    /// Marked for masquerade.
    MarkMasq,
    /// Destination rewritten.
    Dnat {
        to: SocketAddr,
    },
    /// Redirected to a local port (userspace).
    Redirect {
        to: SocketAddr,
    },
    /// An IPVS virtual server (or nft map) matched in one hash lookup.
    Lookup {
        matched: String,
    },
    /// A scheduler or random pick chose among candidates.
    Choose {
        chosen: SocketAddr,
        among: usize,
        how: String,
    },
    /// The userspace proxy tried a backend.
    Connect {
        to: SocketAddr,
        answered: bool,
    },
    Accept,
    Drop,
    Reject,
    /// Fell off the end of a chain / no match: continue.
    Return,
    /// Source rewritten to the node's address (Cilium's SNAT for a backend
    /// on another node; replies come back through this node).
    Snat {
        to: IpAddr,
    },
    /// Sent on to a backend on another node with the Service's address
    /// carried along (Cilium's direct server return): the backend answers
    /// the client itself.
    Dsr {
        service: SocketAddr,
    },
}

/// Result of one node's kube-proxy rules for one new connection.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeOutcome {
    pub verdict: Verdict,
    /// Every endpoint this packet could have been sent to.
    pub candidates: Vec<SocketAddr>,
    /// Marked for SNAT (masquerade) on the way out.
    pub masquerade: bool,
    pub steps: Vec<Step>,
    /// Rules the packet was compared against in total (iptables: linear walk;
    /// IPVS and nftables maps: 1 per lookup).
    pub rules_compared: usize,
}

/// Mutable state a node's data plane keeps between connections: round-robin
/// positions, connection counts per real server, `-m recent` affinity lists,
/// IPVS persistence templates. Time is given in milliseconds by the caller.
/// Each map holds an entry per Service (or per Service and client or
/// endpoint) the node has handled: a [`VecMap`], as they are few.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NodeState {
    /// Round-robin position per virtual service (IPVS rr/wrr, userspace).
    pub rr: VecMap<String, i64>,
    /// Extra per-scheduler integers (wrr current weight, ...).
    pub counters: VecMap<String, i64>,
    /// Active and inactive connection counts per (virtual service, real server).
    pub conns: VecMap<(String, SocketAddr), ConnCount>,
    /// Affinity: (list or template name, client IP) → (endpoint, last seen ms).
    pub affinity: VecMap<(String, IpAddr), (SocketAddr, u64)>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ConnCount {
    pub active: u32,
    pub inactive: u32,
}

/// What the world outside the rules can tell a mode (only the userspace proxy
/// needs it: it opens real connections and sees whether a backend answers).
pub trait World {
    fn answers(&self, endpoint: SocketAddr) -> bool;
}

/// Everything answers.
pub struct AllAnswer;

impl World for AllAnswer {
    fn answers(&self, _: SocketAddr) -> bool {
        true
    }
}

/// Options of a compile that are not in the KubeProxyConfiguration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompileOptions {
    /// Overrides `ipvs.scheduler`.
    pub scheduler: Option<Scheduler>,
}

/// One node's compiled data plane.
pub trait Dataplane {
    fn mode(&self) -> Mode;

    /// The rules as the node would print them (`iptables-save`, `ipvsadm -Ln`
    /// + `ipset list` + glue, `nft list table`, or userspace REDIRECTs).
    fn render_text(&self) -> String;

    /// Machine-readable form of the ruleset (`kpv rules --format json`).
    /// Behind the `json` feature: a trait method is kept in every vtable, so
    /// the web app (which never calls it) would ship it and serde_json.
    #[cfg(feature = "json")]
    fn render_json(&self) -> serde_json::Value;

    /// Another view of the node's state than its rules (`kpv rules --view`):
    /// `None` when the mode has no such view.
    #[cfg(feature = "json")]
    fn render_view(&self, _view: &str) -> Option<String> {
        None
    }

    /// Walk the first packet of a new connection through the rules.
    fn process(
        &self,
        packet: &Packet,
        hook: Hook,
        state: &mut NodeState,
        chooser: &mut Chooser,
        world: &dyn World,
        now_ms: u64,
    ) -> NodeOutcome;

    /// The number of rules (lines) of the ruleset, for the scaling lab.
    fn rule_count(&self) -> usize;

    /// Does the node translate new connections of a local Pod (`from_pod`)
    /// or host process at their socket? Then [`Dataplane::at_socket`] says
    /// how, and a connected socket keeps its backend.
    fn balances_at_socket(&self, _from_pod: bool) -> bool {
        false
    }

    /// Socket-level load balancing: what the node's `connect()` /
    /// `sendmsg()` hook does to a new connection of a local Pod
    /// (`from_pod`) or host process, before any packet exists. `None`
    /// when nothing there touches it: kube-proxy's modes translate packets
    /// only.
    fn at_socket(
        &self,
        _packet: &Packet,
        _from_pod: bool,
        _state: &mut NodeState,
        _chooser: &mut Chooser,
        _now_ms: u64,
    ) -> Option<NodeOutcome> {
        None
    }

    /// The consistent-hash lookup tables the node picks backends from
    /// (Cilium's Maglev, IPVS's `mh`), in the order the rules list their
    /// frontends; none for a mode or scheduler without one.
    #[cfg(feature = "hash-tables")]
    fn hash_tables(&self) -> Vec<hash_table::HashTable> {
        Vec::new()
    }
}

/// A mode's compiler: one node's view in, its data plane out.
pub type CompileFn = fn(&ProxyInput, CompileOptions) -> Box<dyn Dataplane>;

/// The userspace compiler as a [`CompileFn`].
pub fn compile_userspace(input: &ProxyInput, _opts: CompileOptions) -> Box<dyn Dataplane> {
    Box::new(userspace::compile(input))
}

/// The iptables compiler as a [`CompileFn`].
pub fn compile_iptables(input: &ProxyInput, _opts: CompileOptions) -> Box<dyn Dataplane> {
    Box::new(iptables::compile(input))
}

/// The IPVS compiler as a [`CompileFn`] (the scheduler of `opts` overrides
/// the configuration's).
pub fn compile_ipvs(input: &ProxyInput, opts: CompileOptions) -> Box<dyn Dataplane> {
    Box::new(ipvs::compile(
        input,
        opts.scheduler.unwrap_or(input.config.ipvs_scheduler),
    ))
}

/// The Cilium compiler as a [`CompileFn`].
pub fn compile_cilium(input: &ProxyInput, _opts: CompileOptions) -> Box<dyn Dataplane> {
    Box::new(cilium::compile(input))
}

/// The nftables compiler as a [`CompileFn`].
pub fn compile_nftables(input: &ProxyInput, _opts: CompileOptions) -> Box<dyn Dataplane> {
    Box::new(nftables::compile(input))
}

/// One IP family's compiled data plane.
pub type FamilyPlane = (crate::model::packet::IpFamily, Box<dyn Dataplane>);

/// A node's data planes in `mode` from the slices its kube-proxy has
/// synced: one per IP family the node has an address of (IPv6 only when
/// some Service has an IPv6 ClusterIP), in family order. `kpv rules`, the
/// app's rules panel and the kernel check all show these; empty when the
/// node has no address.
pub fn node_planes(
    cluster: &crate::model::Cluster,
    synced: &[crate::model::EndpointSlice],
    node: &str,
    mode: Mode,
    opts: CompileOptions,
    compilers: Compilers,
) -> Vec<FamilyPlane> {
    use crate::model::packet::IpFamily;
    let slices = crate::net::proxy::slices_seen_by(mode, synced);
    let mut planes = Vec::new();
    for family in [IpFamily::V4, IpFamily::V6] {
        let has_family = cluster
            .services
            .iter()
            .any(|s| s.cluster_ips.iter().any(|ip| IpFamily::of(ip) == family));
        if family == IpFamily::V6 && !has_family {
            continue;
        }
        let Some(input) = crate::net::proxy::build_input(cluster, &slices, node, family) else {
            continue;
        };
        planes.push((family, compilers.compile(mode, &input, opts)));
    }
    planes
}

/// The text of a node's data planes ([`node_planes`]), as `kpv rules`
/// prints it: each family's text, joined by an empty line.
pub fn render_planes(planes: &[FamilyPlane]) -> String {
    planes
        .iter()
        .map(|(_, dp)| dp.render_text())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
pub(crate) mod testdata {
    //! A cluster with long chains, and packets to every address of it, for
    //! checking that indexed walks equal linear ones.
    use super::Hook;
    use std::fmt::Write as _;
    use std::net::SocketAddr;

    /// 40 Services of every kind (ClusterIP, NodePort, LoadBalancer with
    /// source ranges, externalIPs, without endpoints, with affinity).
    pub fn cluster_yaml() -> String {
        let mut y = String::from(
            "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n\
             hostnameOverride: node-a\nclusterCIDR: 10.244.0.0/16\n---\n\
             apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nspec: {podCIDR: 10.244.1.0/24}\n\
             status: {addresses: [{type: InternalIP, address: 192.168.0.2}]}\n",
        );
        for i in 0..40 {
            let ty = ["ClusterIP", "NodePort", "LoadBalancer"][i % 3];
            let _ = write!(
                y,
                "---\napiVersion: v1\nkind: Service\nmetadata: {{name: s{i:02}, namespace: default}}\n\
                 spec:\n  type: {ty}\n  clusterIP: 10.96.0.{}\n  sessionAffinity: {}\n",
                10 + i,
                if i % 7 == 0 { "ClientIP" } else { "None" },
            );
            if i % 5 == 0 {
                let _ = writeln!(y, "  externalIPs: [203.0.113.{i}]");
            }
            if i % 3 == 2 && i % 2 == 0 {
                y.push_str("  loadBalancerSourceRanges: [198.51.100.0/24]\n");
            }
            let _ = writeln!(
                y,
                "  ports: [{{name: p, port: 80, targetPort: 8080{}}}]",
                if i % 3 > 0 {
                    format!(", nodePort: {}", 30000 + i)
                } else {
                    String::new()
                }
            );
            if i % 3 == 2 {
                let _ = writeln!(
                    y,
                    "status: {{loadBalancer: {{ingress: [{{ip: 192.0.2.{i}}}]}}}}"
                );
            }
            if i % 4 == 3 {
                continue; // no endpoints
            }
            let _ = write!(
                y,
                "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  \
                 name: s{i:02}-x\n  namespace: default\n  labels: {{kubernetes.io/service-name: s{i:02}}}\n\
                 addressType: IPv4\nports: [{{name: p, port: 8080, protocol: TCP}}]\nendpoints:\n\
                 - {{addresses: [\"10.244.1.{i}\"], nodeName: node-a, conditions: {{ready: true}}}}\n\
                 - {{addresses: [\"10.244.2.{i}\"], nodeName: node-b, conditions: {{ready: true}}}}\n"
            );
        }
        y
    }

    /// Destinations (every ClusterIP, externalIP, LB IP and NodePort, and
    /// wrong ports) and sources (a local Pod, outside, an allowed LB source
    /// range, the node itself).
    pub fn packets() -> (Vec<SocketAddr>, Vec<(SocketAddr, Hook)>) {
        let mut dests: Vec<SocketAddr> = Vec::new();
        for i in 0..40u16 {
            let i8 = i as u8;
            dests.push(SocketAddr::from(([10, 96, 0, 10 + i8], 80)));
            dests.push(SocketAddr::from(([10, 96, 0, 10 + i8], 81)));
            dests.push(SocketAddr::from(([203, 0, 113, i8], 80)));
            dests.push(SocketAddr::from(([192, 0, 2, i8], 80)));
            dests.push(SocketAddr::from(([192, 168, 0, 2], 30000 + i)));
            dests.push(SocketAddr::from(([127, 0, 0, 1], 30000 + i)));
        }
        let sources = vec![
            (
                SocketAddr::from(([10, 244, 1, 200], 40000)),
                Hook::Prerouting,
            ),
            (
                SocketAddr::from(([198, 51, 100, 7], 40000)),
                Hook::Prerouting,
            ),
            (
                SocketAddr::from(([203, 0, 113, 9], 40000)),
                Hook::Prerouting,
            ),
            (SocketAddr::from(([192, 168, 0, 2], 40000)), Hook::Output),
        ];
        (dests, sources)
    }
}
