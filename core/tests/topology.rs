//! Topology hints: the EndpointSlice controller's hints for
//! `trafficDistribution` (`trafficdist.preferCloseHeuristic`) and kube-proxy's
//! use of them (`topologyModeFromHints`, `availableForTopology` in
//! `pkg/proxy/topology.go`), checked in the rules of every mode that has them
//! and in traced packets.

use kpv_core::model::packet::{IpFamily, Protocol};
use kpv_core::model::{Cluster, Mode};
use kpv_core::net::controller::steady_slices;
use kpv_core::net::trace::{trace, Dest, Origin, Outcome, Request, Sim, WorldState};
use kpv_core::util::choose::Chooser;
use kpv_core::util::diag::{Diagnostic, Severity};
use std::collections::BTreeSet;
use std::net::IpAddr;

const MODES: [Mode; 3] = [Mode::Iptables, Mode::Ipvs, Mode::Nftables];
const A: &str = "10.244.1.5";
const B: &str = "10.244.2.5";
const B2: &str = "10.244.2.6";

/// worker-1 in zone-a, worker-2 in zone-b, worker-3 in zone-c (no
/// endpoint), worker-4 with no zone label.
fn nodes() -> String {
    let mut out = String::new();
    for (i, zone) in [
        (1, Some("zone-a")),
        (2, Some("zone-b")),
        (3, Some("zone-c")),
        (4, None),
    ] {
        let labels = zone
            .map(|z| format!("\n  labels: {{topology.kubernetes.io/zone: {z}}}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "apiVersion: v1
kind: Node
metadata:
  name: worker-{i}{labels}
spec: {{podCIDR: 10.244.{i}.0/24}}
status: {{addresses: [{{type: InternalIP, address: 192.168.49.1{i}}}]}}
---
"
        ));
    }
    out
}

fn pod(name: &str, node: u8, ip: &str, ready: &str) -> String {
    format!(
        "apiVersion: v1
kind: Pod
metadata: {{name: {name}, labels: {{app: web}}}}
spec: {{nodeName: worker-{node}, containers: [{{name: c, ports: [{{containerPort: 8080}}]}}]}}
status: {{podIP: {ip}, conditions: [{{type: Ready, status: \"{ready}\"}}]}}
---
"
    )
}

/// Service `web` selecting the Pods, with extra spec lines and annotations.
fn service(spec: &str, annotations: &str) -> String {
    format!(
        "apiVersion: v1
kind: Service
metadata:
  name: web{annotations}
spec:
  clusterIP: 10.96.0.10
  selector: {{app: web}}
  ports: [{{name: http, port: 80, targetPort: 8080}}]
{spec}
"
    )
}

/// The nodes, a Service `web` without selector and its EndpointSlice
/// written by hand with these `endpoints:` entries.
fn selectorless(endpoints: &str) -> String {
    format!(
        "{}apiVersion: v1
kind: Service
metadata: {{name: web}}
spec:
  clusterIP: 10.96.0.10
  ports: [{{name: http, port: 80, targetPort: 8080}}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: web-1, labels: {{kubernetes.io/service-name: web}}}}
addressType: IPv4
ports: [{{name: http, port: 8080}}]
endpoints:
{endpoints}",
        nodes()
    )
}

fn parse(text: &str) -> (Cluster, Vec<Diagnostic>) {
    kpv_core::Code::ALL.parse(text)
}

fn prefer_close() -> Cluster {
    let text = format!(
        "{}{}{}{}",
        nodes(),
        pod("web-a", 1, A, "True"),
        pod("web-b", 2, B, "True"),
        service("  trafficDistribution: PreferClose", "")
    );
    let (c, diags) = parse(&text);
    assert!(diags.is_empty(), "{diags:#?}");
    c
}

/// The endpoints a node's rules send traffic to, read from the rendered
/// rules of `mode`: the DNAT targets, or IPVS's real servers.
fn used(c: &Cluster, mode: Mode, node: &str) -> BTreeSet<&'static str> {
    let slices = steady_slices(c);
    let sim = Sim::new(c, &slices, mode, None, kpv_core::net::modes::Compilers::ALL);
    let text = sim
        .dataplane(node, IpFamily::V4)
        .map(|dp| dp.render_text())
        .unwrap_or_default();
    [A, B, B2]
        .into_iter()
        .filter(|ip| {
            let target = match mode {
                Mode::Iptables => format!("--to-destination {ip}:8080"),
                Mode::Nftables => format!("dnat to {ip}:8080"),
                Mode::Ipvs => format!("-> {ip}:8080"),
                Mode::Userspace => format!("{ip}:8080"),
                Mode::Cilium => format!("ADDR={ip}:8080/TCP"),
            };
            text.contains(&target)
        })
        .collect()
}

fn set(ips: &[&'static str]) -> BTreeSet<&'static str> {
    ips.iter().copied().collect()
}

#[test]
fn prefer_close_keeps_cluster_traffic_in_the_nodes_zone() {
    let c = prefer_close();
    // The controller hints each ready endpoint for its own zone.
    let slices = steady_slices(&c);
    let hints: Vec<_> = slices[0]
        .endpoints
        .iter()
        .map(|e| {
            (
                e.addresses[0].to_string(),
                e.hints.for_zones.clone(),
                e.hints.for_nodes.clone(),
            )
        })
        .collect();
    assert_eq!(
        hints,
        [
            (A.to_string(), vec!["zone-a".to_string()], vec![]),
            (B.to_string(), vec!["zone-b".to_string()], vec![]),
        ]
    );
    for mode in MODES {
        assert_eq!(used(&c, mode, "worker-1"), set(&[A]), "{mode:?}");
        assert_eq!(used(&c, mode, "worker-2"), set(&[B]), "{mode:?}");
        // No endpoint hinted for zone-c, or no zone at all: every endpoint.
        assert_eq!(used(&c, mode, "worker-3"), set(&[A, B]), "{mode:?}");
        assert_eq!(used(&c, mode, "worker-4"), set(&[A, B]), "{mode:?}");
    }
    // The userspace proxy predates hints.
    assert_eq!(used(&c, Mode::Userspace, "worker-1"), set(&[A, B]));
}

#[test]
fn traced_packets_stay_in_the_zone() {
    let c = prefer_close();
    let slices = steady_slices(&c);
    for mode in MODES {
        let sim = Sim::new(
            &c,
            &slices,
            mode,
            None,
            kpv_core::net::modes::Compilers::ALL,
        );
        let mut reached = BTreeSet::new();
        for seed in 0..30 {
            let req = Request {
                origin: Origin::Node {
                    node: "worker-1".into(),
                    src: "192.168.49.11".parse::<IpAddr>().expect("ip"),
                },
                dst: Dest::Ip("10.96.0.10".parse().expect("ip")),
                port: 80,
                protocol: Protocol::Tcp,
                src_port: 40000 + seed as u16,
                keep_open: false,
            };
            let t = trace(
                &sim,
                &req,
                &mut WorldState::default(),
                &mut Chooser::new(seed),
                0,
            );
            if let Outcome::Delivered { endpoint, .. } = t.outcome {
                reached.insert(endpoint.ip().to_string());
            }
        }
        assert_eq!(reached, BTreeSet::from([A.to_string()]), "{mode:?}");
    }
}

#[test]
fn prefer_same_node_prefers_the_node_then_the_zone() {
    let text = format!(
        "{}{}{}{}{}",
        nodes(),
        pod("web-a", 1, A, "True"),
        pod("web-b", 2, B, "True"),
        pod("web-b2", 2, B2, "True"),
        service("  trafficDistribution: PreferSameNode", "")
    );
    let (c, diags) = parse(&text);
    assert!(diags.is_empty(), "{diags:#?}");
    let slices = steady_slices(&c);
    assert!(slices[0]
        .endpoints
        .iter()
        .all(|e| e.hints.for_nodes.len() == 1 && e.hints.for_zones.len() == 1));
    for mode in MODES {
        assert_eq!(used(&c, mode, "worker-1"), set(&[A]), "{mode:?}");
        assert_eq!(used(&c, mode, "worker-2"), set(&[B, B2]), "{mode:?}");
        assert_eq!(used(&c, mode, "worker-3"), set(&[A, B, B2]), "{mode:?}");
    }
}

#[test]
fn one_endpoint_without_a_hint_turns_hints_off() {
    // A hand-written slice (the Service has no selector): one ready
    // endpoint has no hint, so every node uses every endpoint.
    let slice = |hint_b: &str| {
        selectorless(&format!(
            "  - addresses: [{A}]
    nodeName: worker-1
    hints: {{forZones: [{{name: zone-a}}]}}
  - addresses: [{B}]
    nodeName: worker-2{hint_b}
"
        ))
    };
    let (c, diags) = parse(&slice(""));
    assert!(diags.is_empty(), "{diags:#?}");
    for mode in MODES {
        assert_eq!(used(&c, mode, "worker-1"), set(&[A, B]), "{mode:?}");
    }
    let (c, _) = parse(&slice("\n    hints: {forZones: [{name: zone-b}]}"));
    for mode in MODES {
        assert_eq!(used(&c, mode, "worker-1"), set(&[A]), "{mode:?}");
    }
    // A hint that is not ready does not count: B not ready, A hinted.
    let (c, _) = parse(&slice("\n    conditions: {ready: false}"));
    for mode in MODES {
        assert_eq!(used(&c, mode, "worker-1"), set(&[A]), "{mode:?}");
        assert_eq!(
            used(&c, mode, "worker-2"),
            set(&[A]),
            "{mode:?}: zone-b has no hinted endpoint"
        );
    }
}

#[test]
fn hints_leave_local_policies_and_the_terminating_fallback_alone() {
    // externalTrafficPolicy Local: NodePort traffic on worker-2 uses its own
    // endpoint; hints only narrow the cluster endpoints.
    let text = format!(
        "{}{}{}{}",
        nodes(),
        pod("web-a", 1, A, "True"),
        pod("web-b", 2, B, "True"),
        service(
            "  type: NodePort\n  externalTrafficPolicy: Local\n  trafficDistribution: PreferClose",
            ""
        )
    );
    let (c, diags) = parse(&text);
    assert!(diags.is_empty(), "{diags:#?}");
    for mode in MODES {
        // worker-1: zone-a cluster endpoint A, local endpoint A.
        assert_eq!(used(&c, mode, "worker-1"), set(&[A]), "{mode:?}");
        // worker-3: no local endpoint, no zone-c hint: cluster has both.
        assert_eq!(used(&c, mode, "worker-3"), set(&[A, B]), "{mode:?}");
    }
    // No ready endpoint anywhere: the serving-terminating one is used by
    // every node, whatever its hints.
    let slice = selectorless(&format!(
        "  - addresses: [{B}]
    nodeName: worker-2
    conditions: {{ready: false, serving: true, terminating: true}}
    hints: {{forZones: [{{name: zone-b}}]}}
"
    ));
    let (c, diags) = parse(&slice);
    assert!(diags.is_empty(), "{diags:#?}");
    for mode in MODES {
        assert_eq!(used(&c, mode, "worker-1"), set(&[B]), "{mode:?}");
    }
}

#[test]
fn topology_mode_auto_and_bad_values_are_reported() {
    let text = format!(
        "{}{}{}{}",
        nodes(),
        pod("web-a", 1, A, "True"),
        pod("web-b", 2, B, "True"),
        service(
            "  trafficDistribution: PreferClose",
            "\n  annotations: {service.kubernetes.io/topology-mode: Auto}"
        )
    );
    let (c, diags) = parse(&text);
    assert!(
        diags
            .iter()
            .any(|d| d.severity == Severity::Warning && d.message.contains("topology-mode Auto")),
        "{diags:#?}"
    );
    // Auto wins over trafficDistribution in the controller; kpv writes no
    // hints rather than the wrong ones.
    for mode in MODES {
        assert_eq!(used(&c, mode, "worker-1"), set(&[A, B]), "{mode:?}");
    }
    let (_, diags) = parse(&format!(
        "{}{}",
        nodes(),
        service("  trafficDistribution: Nearby", "")
    ));
    assert!(
        diags.iter().any(|d| d.severity == Severity::Error
            && d.field.as_deref() == Some("spec.trafficDistribution")),
        "{diags:#?}"
    );
    let (_, diags) = parse(&format!(
        "{}apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: web-1, labels: {{kubernetes.io/service-name: web}}}}
addressType: IPv4
endpoints:
  - addresses: [{A}]
    hints: {{forRegions: [{{name: r}}]}}
",
        nodes()
    ));
    assert!(
        diags
            .iter()
            .any(|d| d.field.as_deref() == Some("endpoints[0].hints.forRegions")),
        "{diags:#?}"
    );
}
