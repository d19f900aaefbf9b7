//! Cilium's packet flows, kube-proxy style: rows of {who sends, to where,
//! under which agent settings} → every backend the connection could reach,
//! DROP or none, whether it is SNATed and whether it goes by DSR, over
//! `tests/scenarios/packet-flows.yaml` seen from node-a. Where Cilium and
//! kube-proxy differ (a ClusterIP from outside, Local with no local
//! backend, terminating backends, the socket) the row says so.

use kpv_core::model::packet::{IpFamily, Packet, Protocol};
use kpv_core::model::Mode;
use kpv_core::net::modes::{
    AllAnswer, Dataplane, Hook, NodeOutcome, NodeState, StepAction, Verdict,
};
use kpv_core::net::proxy::build_input;
use kpv_core::util::choose::Chooser;
use std::net::{IpAddr, SocketAddr};

const SCENARIO: &str = include_str!("../../tests/scenarios/packet-flows.yaml");

/// Where the connection meets Cilium.
#[derive(Clone, Copy, Debug)]
enum At {
    /// A Pod's or the node's own socket (`connect()`).
    Socket,
    /// A packet from this node's Pod at its veth, or from outside at eth0.
    Packet,
}

struct Row {
    name: &'static str,
    /// `cilium-config` data lines, `key: "value"`.
    config: &'static [&'static str],
    at: At,
    src: &'static str,
    dst: &'static str,
    port: u16,
    out: &'static str,
    snat: bool,
    dsr: bool,
}

const POD: &str = "10.244.1.100";
const NODE: &str = "192.168.0.2";
const CLIENT: &str = "198.51.100.7"; // inside the LB's source ranges
const OUTSIDER: &str = "203.0.113.7"; // outside them

const fn row(
    name: &'static str,
    at: At,
    src: &'static str,
    dst: &'static str,
    port: u16,
    out: &'static str,
) -> Row {
    Row {
        name,
        config: &[],
        at,
        src,
        dst,
        port,
        out,
        snat: false,
        dsr: false,
    }
}

const BOTH_CLUSTER_IP: &str = "10.244.1.2:8080, 10.244.2.2:8080";
const BOTH_NODE_PORT: &str = "10.244.1.3:8080, 10.244.2.3:8080";
const BOTH_LB: &str = "10.244.1.4:8080, 10.244.2.4:8080";

static ROWS: &[Row] = &[
    row(
        "a Pod's connect() to a ClusterIP is balanced at the socket",
        At::Socket,
        POD,
        "10.96.0.10",
        80,
        BOTH_CLUSTER_IP,
    ),
    row(
        "the same per packet at the Pod's veth",
        At::Packet,
        POD,
        "10.96.0.10",
        80,
        BOTH_CLUSTER_IP,
    ),
    row(
        "a ClusterIP is not reachable from outside",
        At::Packet,
        CLIENT,
        "10.96.0.10",
        80,
        "none",
    ),
    Row {
        config: &["bpf-lb-external-clusterip: \"true\""],
        ..row(
            "unless bpf-lb-external-clusterip",
            At::Packet,
            CLIENT,
            "10.96.0.10",
            80,
            BOTH_CLUSTER_IP,
        )
    },
    row(
        "a ClusterIP port with no Service is dropped by its wildcard entry",
        At::Socket,
        POD,
        "10.96.0.10",
        81,
        "DROP",
    ),
    row(
        "NodePort from outside",
        At::Packet,
        CLIENT,
        NODE,
        30011,
        BOTH_NODE_PORT,
    ),
    row(
        "NodePort on loopback from the node itself, through the socket",
        At::Socket,
        NODE,
        "127.0.0.1",
        30011,
        BOTH_NODE_PORT,
    ),
    Row {
        config: &["kube-proxy-replacement: \"false\""],
        ..row(
            "without kube-proxy replacement Cilium has no NodePort",
            At::Packet,
            CLIENT,
            NODE,
            30011,
            "none",
        )
    },
    row(
        "a load-balancer address from an allowed source",
        At::Packet,
        CLIENT,
        "192.0.2.12",
        80,
        BOTH_LB,
    ),
    row(
        "and from outside loadBalancerSourceRanges",
        At::Packet,
        OUTSIDER,
        "192.0.2.12",
        80,
        "DROP",
    ),
    row(
        "a load-balancer port with no Service",
        At::Packet,
        CLIENT,
        "192.0.2.12",
        81,
        "DROP",
    ),
    Row {
        snat: true,
        ..row(
            "an externalIP whose only backend is on node-b: SNAT to node-a",
            At::Packet,
            CLIENT,
            "192.0.2.13",
            80,
            "10.244.2.5:8080",
        )
    },
    Row {
        config: &["bpf-lb-mode: \"dsr\""],
        dsr: true,
        ..row(
            "the same by DSR: no SNAT, the backend answers the client",
            At::Packet,
            CLIENT,
            "192.0.2.13",
            80,
            "10.244.2.5:8080",
        )
    },
    Row {
        config: &["bpf-lb-mode: \"hybrid\""],
        dsr: true,
        ..row(
            "hybrid is DSR for TCP",
            At::Packet,
            CLIENT,
            "192.0.2.13",
            80,
            "10.244.2.5:8080",
        )
    },
    row(
        "externalTrafficPolicy Local: only node-a's backend",
        At::Packet,
        CLIENT,
        NODE,
        30014,
        "10.244.1.6:8080",
    ),
    row(
        "Local with no backend on node-a: no backend at all (no fallback)",
        At::Packet,
        CLIENT,
        NODE,
        30015,
        "DROP",
    ),
    row(
        "internalTrafficPolicy Local with no local backend",
        At::Socket,
        POD,
        "10.96.0.17",
        80,
        "DROP",
    ),
    row(
        "only terminating backends: the serving one takes new connections",
        At::Socket,
        POD,
        "10.96.0.18",
        80,
        "10.244.1.10:8080",
    ),
    row(
        "a Service without endpoints",
        At::Socket,
        POD,
        "10.96.0.19",
        80,
        "DROP",
    ),
    Row {
        config: &["bpf-lb-sock-hostns-only: \"true\""],
        ..row(
            "bpf-lb-sock-hostns-only: a Pod's socket is not translated",
            At::Socket,
            POD,
            "10.96.0.10",
            80,
            "none",
        )
    },
    row(
        "an address that is no Service",
        At::Packet,
        POD,
        "10.244.2.2",
        8080,
        "none",
    ),
];

fn dataplane(config: &[&str]) -> Box<dyn Dataplane> {
    let mut text = String::from(SCENARIO);
    text.push_str(
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cilium-config, namespace: kube-system}\ndata:\n  kube-proxy-replacement: \"true\"\n",
    );
    for line in config {
        text.push_str("  ");
        text.push_str(line);
        text.push('\n');
    }
    let (cluster, diags) = kpv_core::Code::ALL.parse(&text);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    let input = build_input(&cluster, &cluster.endpoint_slices, "node-a", IpFamily::V4)
        .expect("node-a has an IPv4 address");
    kpv_core::Code::ALL
        .compilers
        .compile(Mode::Cilium, &input, Default::default())
}

fn ip(s: &str) -> IpAddr {
    s.parse().expect("test IP")
}

fn run(dp: &dyn Dataplane, r: &Row) -> NodeOutcome {
    let src = ip(r.src);
    let pkt = Packet::new(
        SocketAddr::new(src, 40000),
        SocketAddr::new(ip(r.dst), r.port),
        Protocol::Tcp,
    );
    let mut state = NodeState::default();
    let mut chooser = Chooser::new(3);
    let from_node = src == ip(NODE);
    match r.at {
        At::Socket => dp
            .at_socket(&pkt, !from_node, &mut state, &mut chooser, 0)
            .unwrap_or(NodeOutcome {
                verdict: Verdict::None,
                candidates: Vec::new(),
                masquerade: false,
                steps: Vec::new(),
                rules_compared: 0,
            }),
        At::Packet => {
            let hook = if from_node {
                Hook::Output
            } else {
                Hook::Prerouting
            };
            dp.process(&pkt, hook, &mut state, &mut chooser, &AllAnswer, 0)
        }
    }
}

fn output_of(o: &NodeOutcome) -> String {
    match &o.verdict {
        Verdict::Dnat { endpoint } => {
            assert!(
                o.candidates.contains(endpoint),
                "{endpoint} not a candidate"
            );
            let mut c = o.candidates.clone();
            c.sort();
            c.iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        }
        Verdict::Drop { .. } => "DROP".into(),
        Verdict::Reject { .. } => "REJECT".into(),
        _ => "none".into(),
    }
}

#[test]
fn cilium_flows() {
    let mut failures = Vec::new();
    for r in ROWS {
        let dp = dataplane(r.config);
        let o = run(dp.as_ref(), r);
        let got = output_of(&o);
        let dsr = o
            .steps
            .iter()
            .any(|s| matches!(s.action, StepAction::Dsr { .. }));
        if got != r.out || o.masquerade != r.snat || dsr != r.dsr {
            let steps: Vec<String> = o
                .steps
                .iter()
                .map(|s| format!("      {}: {}", s.table_chain, s.rule))
                .collect();
            failures.push(format!(
                "{} ({:?} {} -> {}:{}):\n    want {:?} snat {} dsr {}\n    got  {got:?} snat {} dsr {dsr}\n{}",
                r.name,
                r.at,
                r.src,
                r.dst,
                r.port,
                r.out,
                r.snat,
                r.dsr,
                o.masquerade,
                steps.join("\n")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows differ:\n{}",
        failures.len(),
        ROWS.len(),
        failures.join("\n")
    );
}

/// Every node of `cluster` under Cilium, every compiler linked in.
fn cilium_sim<'a>(
    cluster: &'a kpv_core::model::Cluster,
    slices: &'a [kpv_core::model::EndpointSlice],
) -> kpv_core::net::trace::Sim<'a> {
    kpv_core::net::trace::Sim::new(
        cluster,
        slices,
        Mode::Cilium,
        None,
        kpv_core::Code::ALL.compilers,
    )
}

#[test]
fn a_socket_balanced_trace_has_no_dnat_on_the_wire() {
    use kpv_core::net::trace::{trace, Dest, HopKind, Origin, Place, Request};
    let (cluster, _) =
        kpv_core::Code::ALL.parse(include_str!("../../tests/scenarios/alpaca-bandicoot.yaml"));
    let slices = kpv_core::net::controller::steady_slices(&cluster);
    let sim = cilium_sim(&cluster, &slices);
    let pod = cluster
        .pods
        .iter()
        .find(|p| p.id.name.starts_with("bandicoot"))
        .map(|p| p.id.clone())
        .expect("the bandicoot Pod");
    let req = Request {
        origin: Origin::Pod { pod: pod.clone() },
        dst: Dest::Name("alpaca-service".into()),
        port: 8080,
        protocol: Protocol::Tcp,
        src_port: 45000,
        keep_open: false,
    };
    let t = trace(&sim, &req, &mut Default::default(), &mut Chooser::new(1), 0);
    // Every translation happens at the Pod, before the packet leaves it.
    let rewrites: Vec<&Place> = t
        .hops
        .iter()
        .filter(|h| h.before.dst != h.after.dst && h.what == HopKind::Rule)
        .map(|h| &h.place)
        .collect();
    assert_eq!(
        rewrites,
        vec![&Place::Pod(pod)],
        "{}",
        kpv_core::net::trace::render_text(&t)
    );
    let ep = t.verdict.endpoint().expect("a backend");
    // No node rule touched it: the node's hops only carry it.
    assert!(t
        .hops
        .iter()
        .filter(|h| matches!(h.place, Place::NodeProxy(_)))
        .all(|h| h.step.is_none()));
    // The reply reaches the client as from the ClusterIP (recvmsg()).
    let reply = t
        .hops
        .iter()
        .find(|h| matches!(h.what, HopKind::Reply { .. }))
        .expect("a reply");
    assert_eq!(reply.before.src, ep);
    assert_eq!(reply.after.src.port(), 8080);
    assert_ne!(reply.after.src, ep);
}

#[test]
fn a_dsr_reply_leaves_from_the_backend_s_node_past_the_entry_node() {
    let preset = include_str!("../../tests/scenarios/cilium.yaml");
    let dsr = reply_nodes(preset);
    assert!(dsr.0 > 0, "no connection went to another node's backend");
    // Under SNAT every reply goes back through the entry node.
    let snat = reply_nodes(&preset.replace("bpf-lb-mode: \"dsr\"", "bpf-lb-mode: \"snat\""));
    assert_eq!(snat.0, 0);
    assert!(snat.1 > 0);
}

/// Send 30 connections from outside to the preset's load balancer; check
/// where each reply leaves from, in the trace and as drawn: after DSR from
/// the backend's node, its drawn way back never passing the entry node;
/// otherwise through the entry node. (DSR replies, other replies.)
fn reply_nodes(text: &str) -> (usize, usize) {
    use kpv_core::net::trace::{trace, Dest, HopKind, Origin, Request};
    use kpv_core::view::scene::Place;
    let (cluster, diags) = kpv_core::Code::ALL.parse(text);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    let slices = kpv_core::net::controller::steady_slices(&cluster);
    let scene = kpv_core::view::scene::layout(&cluster, &slices);
    let sim = cilium_sim(&cluster, &slices);
    let (mut seen_dsr, mut others) = (0, 0);
    for port in 40000..40030 {
        let req = Request {
            origin: Origin::External { client: ip(CLIENT) },
            dst: Dest::Ip(ip("203.0.113.10")),
            port: 80,
            protocol: Protocol::Tcp,
            src_port: port,
            keep_open: false,
        };
        let t = trace(
            &sim,
            &req,
            &mut Default::default(),
            &mut Chooser::new(u64::from(port)),
            0,
        );
        let entry = t.node.clone().expect("an entry node");
        let dsr = t.hops.iter().any(|h| {
            h.step
                .as_ref()
                .is_some_and(|s| matches!(s.action, StepAction::Dsr { .. }))
        });
        let reply = t
            .hops
            .iter()
            .find(|h| matches!(h.what, HopKind::Reply { .. }))
            .expect("a reply");
        let backend_node = t
            .hops
            .iter()
            .rev()
            .find(|h| h.what == HopKind::Deliver)
            .and_then(|h| h.node.clone());
        let flight = kpv_core::view::timeline::Flight::new(&scene, &t, 0);
        let back = &flight.legs.last().expect("a reply leg").points;
        let entry_at = scene
            .anchor(&Place::NodeProxy(entry.clone()))
            .expect("the entry node is drawn");
        let passes_entry = back.contains(&entry_at);
        if dsr {
            assert!(!passes_entry, "{back:?} passes {entry}");
            seen_dsr += 1;
            assert_ne!(reply.node.as_deref(), Some(entry.as_str()));
            assert_eq!(reply.node, backend_node);
            // The backend saw the client's own address.
            assert!(
                matches!(t.outcome, kpv_core::net::trace::Outcome::Delivered { source, .. } if source.ip() == ip(CLIENT))
            );
        } else {
            others += 1;
            assert_eq!(reply.node.as_deref(), Some(entry.as_str()));
            assert!(passes_entry, "{back:?} misses {entry}");
        }
    }
    (seen_dsr, others)
}
