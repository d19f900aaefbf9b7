//! The whole-path tracer: hop order from a client through the cloud load
//! balancer to a Pod and back, conntrack of established flows, determinism of
//! seeded choices, DNS names, and the JSON contracts of `kpv trace` and
//! `kpv rules --mode ipvs`.

use kpv_core::cli::{parse_args, run};
use kpv_core::model::packet::Protocol;
use kpv_core::model::{Cluster, EndpointSlice, Mode, NamespacedName};
use kpv_core::net::controller::steady_slices;
use kpv_core::net::trace::{
    trace, Dest, HopKind, Origin, Outcome, Request, Sim, Trace, WorldState,
};
use kpv_core::util::choose::Chooser;
use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};

const SEED: &str = include_str!("../../tests/scenarios/alpaca-bandicoot.yaml");
const LB_CLUSTER: &str = include_str!("../../tests/scenarios/loadbalancer-cluster.yaml");
const FLOWS: &str = include_str!("../../tests/scenarios/packet-flows.yaml");

fn parse(text: &str) -> Cluster {
    let (c, diags) = kpv_core::Code::ALL.parse(text);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    c
}

fn ip(s: &str) -> IpAddr {
    s.parse().expect("test IP")
}

fn sa(s: &str) -> SocketAddr {
    s.parse().expect("test socket address")
}

fn req(origin: Origin, dst: Dest, port: u16, src_port: u16) -> Request {
    Request {
        origin,
        dst,
        port,
        protocol: Protocol::Tcp,
        src_port,
        keep_open: false,
    }
}

fn pod_of(c: &Cluster, prefix: &str) -> NamespacedName {
    c.pods
        .iter()
        .find(|p| p.id.name.starts_with(prefix))
        .map(|p| p.id.clone())
        .expect("pod")
}

fn kinds(t: &Trace) -> Vec<&'static str> {
    t.hops
        .iter()
        .map(|h| match &h.what {
            HopKind::Dns { .. } => "dns",
            HopKind::Send => "send",
            HopKind::LoadBalancer { .. } => "lb",
            HopKind::Arrive { .. } => "arrive",
            HopKind::Established { .. } => "established",
            HopKind::Rule => "rule",
            HopKind::Masquerade { .. } => "masq",
            HopKind::PodNetwork { .. } => "podnet",
            HopKind::Deliver => "deliver",
            HopKind::NoAnswer => "noanswer",
            HopKind::Drop { .. } => "drop",
            HopKind::Reject { .. } => "reject",
            HopKind::Reply { .. } => "reply",
            HopKind::Http(_) => "http",
        })
        .collect()
}

/// The hop kinds with consecutive rule hops collapsed.
fn shape(t: &Trace) -> Vec<&'static str> {
    let mut k = kinds(t);
    k.dedup_by(|a, b| *a == "rule" && *b == "rule");
    k
}

#[test]
fn external_client_through_the_load_balancer_to_a_pod_on_another_node() {
    let c = parse(LB_CLUSTER);
    let slices = steady_slices(&c);
    let client = sa("198.51.100.7:40000");
    let lb = sa("203.0.113.10:80");
    for mode in [Mode::Iptables, Mode::Ipvs, Mode::Nftables] {
        let sim = Sim::new(
            &c,
            &slices,
            mode,
            None,
            kpv_core::net::modes::Compilers::ALL,
        );
        // Find a seed where the load balancer picks worker-3 (no web Pod).
        let t = (0..200)
            .map(|seed| {
                trace(
                    &sim,
                    &req(
                        Origin::External {
                            client: client.ip(),
                        },
                        Dest::Ip(lb.ip()),
                        80,
                        40000,
                    ),
                    &mut WorldState::default(),
                    &mut Chooser::new(seed),
                    0,
                )
            })
            .find(|t| t.node.as_deref() == Some("worker-3"))
            .expect("the LB picks worker-3 for some seed");
        assert_eq!(
            shape(&t),
            ["send", "lb", "arrive", "rule", "masq", "podnet", "deliver", "reply"],
            "{mode:?}: {:#?}",
            t.hops
        );
        let h = &t.hops;
        assert_eq!(h[0].before.dst, lb);
        assert_eq!(h[1].before.dst, lb);
        assert_eq!(h[1].after.dst, sa("192.168.49.13:30080"), "LB → NodePort");
        assert_eq!(h[1].after.src, client, "the LB keeps the client's address");
        let Some(masq) = h
            .iter()
            .find(|x| matches!(x.what, HopKind::Masquerade { .. }))
        else {
            unreachable!()
        };
        assert_eq!(masq.before.src, client);
        assert_eq!(masq.after.src.ip(), ip("192.168.49.13"));
        let deliver = h
            .iter()
            .find(|x| matches!(x.what, HopKind::Deliver))
            .expect("delivered");
        assert_eq!(deliver.after.src.ip(), ip("192.168.49.13"));
        let reply = h.last().expect("reply");
        assert!(matches!(reply.what, HopKind::Reply { .. }));
        // The reply leaves the Pod to the node and reaches the client from the
        // address it connected to: the LB IP, not the NodePort.
        assert_eq!(reply.before.src, deliver.after.dst);
        assert_eq!(reply.before.dst, deliver.after.src);
        assert_eq!(reply.after.src, lb, "{mode:?}");
        assert_eq!(reply.after.dst, client, "{mode:?}");
        assert!(matches!(t.outcome, Outcome::Delivered { .. }));
        assert!(t.masquerade);
        if mode == Mode::Iptables {
            // NodePort → the Service's external chain → its ClusterIP
            // service chain → the endpoint's DNAT, in that order.
            let chains: Vec<&str> = h
                .iter()
                .filter_map(|x| x.step.as_ref())
                .map(|s| s.table_chain.as_str())
                .collect();
            let pos = |needle: &str| {
                chains
                    .iter()
                    .position(|c| c.contains(needle))
                    .unwrap_or_else(|| panic!("{needle} not in {chains:?}"))
            };
            assert!(pos("KUBE-NODEPORTS") < pos("KUBE-EXT-"));
            assert!(pos("KUBE-EXT-") < pos("KUBE-SVC-"));
            assert!(pos("KUBE-SVC-") < pos("KUBE-SEP-"));
            assert!(pos("KUBE-SEP-") < pos("KUBE-POSTROUTING"));
        }
    }
}

#[test]
fn local_pod_needs_no_pod_network_hop() {
    let c = parse(LB_CLUSTER);
    let slices = steady_slices(&c);
    let sim = Sim::new(
        &c,
        &slices,
        Mode::Iptables,
        None,
        kpv_core::net::modes::Compilers::ALL,
    );
    let mut saw = false;
    for seed in 0..100 {
        let t = trace(
            &sim,
            &req(
                Origin::External {
                    client: ip("198.51.100.7"),
                },
                Dest::Ip(ip("203.0.113.10")),
                80,
                40000,
            ),
            &mut WorldState::default(),
            &mut Chooser::new(seed),
            0,
        );
        let Outcome::Delivered { pod: Some(pod), .. } = &t.outcome else {
            panic!("{:?}", t.outcome)
        };
        let pod_node = c.pod(pod).and_then(|p| p.node_name.clone());
        if pod_node == t.node {
            saw = true;
            assert!(!shape(&t).contains(&"podnet"), "{:?}", shape(&t));
        } else {
            assert!(shape(&t).contains(&"podnet"));
        }
    }
    assert!(saw);
}

fn without_endpoint(slices: &[EndpointSlice], gone: IpAddr) -> Vec<EndpointSlice> {
    slices
        .iter()
        .cloned()
        .map(|mut s| {
            s.endpoints.retain(|e| !e.addresses.contains(&gone));
            s
        })
        .collect()
}

#[test]
fn an_established_connection_keeps_its_endpoint_after_it_leaves_the_slice() {
    let c = parse(SEED);
    let slices = steady_slices(&c);
    let from = Origin::Pod {
        pod: pod_of(&c, "bandicoot"),
    };
    for mode in Mode::ALL {
        let mut state = WorldState::default();
        let mut chooser = Chooser::new(9);
        let r = req(
            from.clone(),
            Dest::Name("alpaca-service".into()),
            8080,
            45000,
        );
        let first = trace(
            &Sim::new(
                &c,
                &slices,
                mode,
                None,
                kpv_core::net::modes::Compilers::ALL,
            ),
            &r,
            &mut state,
            &mut chooser,
            0,
        );
        assert!(!first.established);
        let ep = first.verdict.endpoint().expect("first connection DNATed");
        // The endpoint leaves the EndpointSlice; kube-proxy resyncs.
        let later = without_endpoint(&slices, ep.ip());
        let sim2 = Sim::new(&c, &later, mode, None, kpv_core::net::modes::Compilers::ALL);
        let again = trace(&sim2, &r, &mut state, &mut chooser, 5_000);
        assert!(again.established, "{mode:?}");
        assert!(
            again
                .hops
                .iter()
                .any(|h| h.what == HopKind::Established { endpoint: ep }),
            "{mode:?}: {:#?}",
            again.hops
        );
        assert!(
            !again.hops.iter().any(|h| h.what == HopKind::Rule),
            "{mode:?}: {}",
            kpv_core::net::trace::render_text(&again)
        );
        match again.outcome {
            Outcome::Delivered { endpoint, .. } => assert_eq!(endpoint, ep, "{mode:?}"),
            o => panic!("{mode:?}: {o:?}"),
        }
        // A new connection (new source port) no longer reaches it.
        for p in 45001..45020 {
            let t = trace(
                &sim2,
                &req(from.clone(), Dest::Name("alpaca-service".into()), 8080, p),
                &mut state,
                &mut chooser,
                5_000,
            );
            assert!(!t.established);
            assert_ne!(t.verdict.endpoint(), Some(ep), "{mode:?}");
            assert!(!t.endpoints.contains(&ep));
        }
    }
}

#[test]
fn same_seed_same_trace_other_seeds_spread() {
    let c = parse(SEED);
    let slices = steady_slices(&c);
    let from = Origin::Pod {
        pod: pod_of(&c, "bandicoot"),
    };
    let r = req(from, Dest::Name("alpaca-service".into()), 8080, 40000);
    for mode in [Mode::Iptables, Mode::Nftables] {
        let sim = Sim::new(
            &c,
            &slices,
            mode,
            None,
            kpv_core::net::modes::Compilers::ALL,
        );
        let one = |seed| {
            trace(
                &sim,
                &r,
                &mut WorldState::default(),
                &mut Chooser::new(seed),
                0,
            )
        };
        assert_eq!(one(42), one(42), "{mode:?}");
        let eps: BTreeSet<SocketAddr> = (0..40).filter_map(|s| one(s).verdict.endpoint()).collect();
        assert_eq!(
            eps.len(),
            3,
            "{mode:?}: all three alpacas get picked: {eps:?}"
        );
    }
    // IPVS round robin spreads by state, not by seed.
    let sim = Sim::new(
        &c,
        &slices,
        Mode::Ipvs,
        None,
        kpv_core::net::modes::Compilers::ALL,
    );
    let mut state = WorldState::default();
    let eps: BTreeSet<SocketAddr> = (0..3)
        .filter_map(|i| {
            trace(
                &sim,
                &Request {
                    src_port: 40000 + i,
                    ..r.clone()
                },
                &mut state,
                &mut Chooser::new(1),
                0,
            )
            .verdict
            .endpoint()
        })
        .collect();
    assert_eq!(eps.len(), 3);
}

#[test]
fn dns_names_resolve_like_cluster_dns() {
    let c = parse(SEED);
    let slices = steady_slices(&c);
    let sim = Sim::new(
        &c,
        &slices,
        Mode::Iptables,
        None,
        kpv_core::net::modes::Compilers::ALL,
    );
    let svc_ip = c
        .service(&NamespacedName::new("default", "alpaca-service"))
        .and_then(|s| s.cluster_ips.first().copied())
        .expect("cluster IP");
    let from = Origin::Pod {
        pod: pod_of(&c, "bandicoot"),
    };
    for name in [
        "alpaca-service",
        "alpaca-service.default",
        "alpaca-service.default.svc",
        "alpaca-service.default.svc.cluster.local",
        "alpaca-service.default.svc.cluster.local.",
    ] {
        let t = trace(
            &sim,
            &req(from.clone(), Dest::Name(name.into()), 8080, 40000),
            &mut WorldState::default(),
            &mut Chooser::new(1),
            0,
        );
        match &t.hops[0].what {
            HopKind::Dns { name: fqdn, answer } => {
                assert_eq!(fqdn, "alpaca-service.default.svc.cluster.local");
                assert_eq!(*answer, svc_ip, "{name}");
            }
            h => panic!("{name}: first hop {h:?}"),
        }
        assert!(matches!(t.outcome, Outcome::Delivered { .. }), "{name}");
    }
    for name in [
        "llama-service",
        "alpaca-service.kube-system",
        "alpaca-service.default.svc.other.domain",
    ] {
        let t = trace(
            &sim,
            &req(from.clone(), Dest::Name(name.into()), 8080, 40000),
            &mut WorldState::default(),
            &mut Chooser::new(1),
            0,
        );
        assert_eq!(
            t.outcome,
            Outcome::NoSuchName { name: name.into() },
            "{name}"
        );
        assert!(t.hops.is_empty(), "nothing is sent: {:?}", t.hops);
    }
}

fn kpv(args: &[&str], input: &str) -> kpv_core::cli::Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let cmd = parse_args(&args).expect("valid arguments");
    let texts: Vec<String> = cmd.files().iter().map(|_| input.to_string()).collect();
    let files = cmd.files().to_vec();
    run(&cmd, &texts, &files)
}

#[test]
fn kpv_trace_json_contract() {
    let out = kpv(
        &[
            "trace",
            "flows.yaml",
            "--src",
            "fd00:10:244:1::100",
            "--dst",
            "fd00:10:96::22",
            "--port",
            "80",
            "--format",
            "json",
        ],
        FLOWS,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(v["verdict"], "dnat");
    assert_eq!(v["masquerade"], false);
    assert_eq!(
        v["endpoints"],
        serde_json::json!(["[fd00:10:244:1::2]:8080", "[fd00:10:244:2::2]:8080"])
    );
    let ep = v["endpoint"].as_str().expect("endpoint");
    assert!(
        ep.starts_with("[fd00:10:244:") && ep.ends_with("]:8080"),
        "{ep}"
    );
    let hops = v["hops"].as_array().expect("hops");
    assert!(!hops.is_empty());
    for h in hops {
        for k in ["place", "what", "before", "after"] {
            assert!(h.get(k).is_some(), "hop without {k}: {h}");
        }
        assert!(h["before"]["src"]
            .as_str()
            .is_some_and(|s| s.starts_with('[')));
    }
    assert_eq!(hops[0]["what"]["kind"], "send");
    assert!(hops.iter().any(|h| h["what"]["kind"] == "rule"
        && h["table_chain"].is_string()
        && h["line"].is_u64()));
    assert_eq!(
        hops.last().map(|h| h["what"]["kind"].clone()),
        Some("reply".into())
    );
    // A rejected packet: verdict word and no endpoints.
    let out = kpv(
        &[
            "trace",
            "flows.yaml",
            "--src",
            "10.244.1.100",
            "--dst",
            "10.96.0.19",
            "--port",
            "80",
            "--format",
            "json",
        ],
        FLOWS,
    );
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(v["verdict"], "reject");
    assert_eq!(v["endpoints"], serde_json::json!([]));
    assert_eq!(v["endpoint"], serde_json::Value::Null);
}

#[test]
fn kpv_rules_ipvs_json_contract() {
    let out = kpv(
        &["rules", "flows.yaml", "--mode", "ipvs", "--format", "json"],
        FLOWS,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    // Dual-stack input: one ruleset per family.
    let sets = v.as_array().expect("an array of two families");
    assert_eq!(sets.len(), 2);
    let mut persistent = 0;
    let mut v6 = 0;
    for set in sets {
        for vs in set["virtual_servers"].as_array().expect("virtual_servers") {
            let addr: IpAddr = vs["address"]
                .as_str()
                .and_then(|a| a.parse().ok())
                .expect("address is a bare IP");
            v6 += usize::from(addr.is_ipv6());
            assert!(vs["port"].is_u64());
            assert!(["TCP", "UDP", "SCTP"].contains(&vs["protocol"].as_str().unwrap_or("")));
            assert_eq!(vs["scheduler"], "rr");
            match vs.get("persistence_timeout") {
                Some(t) => {
                    persistent += 1;
                    assert_eq!(t, 10800);
                    assert_eq!(vs["service"], "default/affinity:http");
                }
                None => assert_ne!(vs["service"], "default/affinity:http"),
            }
            for rs in vs["real_servers"].as_array().expect("real_servers") {
                assert!(rs["address"]
                    .as_str()
                    .is_some_and(|a| a.parse::<IpAddr>().is_ok()));
                assert_eq!(rs["port"], 8080);
                assert_eq!(rs["weight"], 1);
            }
        }
    }
    assert_eq!(persistent, 1, "only the ClientIP Service's ClusterIP VS");
    assert!(v6 >= 2, "IPv6 ClusterIP and NodePort virtual servers");
}

/// A Pod (or a node) calling another node's NodePort: no rule of its own node
/// takes the packet, it crosses the network addressed to that node, and that
/// node's rules send it to an endpoint, as they do for a client outside.
#[test]
fn a_pod_reaches_another_nodes_node_port_through_that_nodes_rules() {
    let c = parse(LB_CLUSTER);
    let slices = steady_slices(&c);
    let web1 = pod_of(&c, "web-1");
    for mode in [Mode::Iptables, Mode::Ipvs, Mode::Nftables, Mode::Userspace] {
        let sim = Sim::new(
            &c,
            &slices,
            mode,
            None,
            kpv_core::net::modes::Compilers::ALL,
        );
        for origin in [
            Origin::Pod { pod: web1.clone() },
            Origin::Node {
                node: "worker-1".into(),
                src: ip("192.168.49.11"),
            },
        ] {
            let t = trace(
                &sim,
                &req(origin.clone(), Dest::Ip(ip("192.168.49.13")), 30080, 40000),
                &mut WorldState::default(),
                &mut Chooser::new(1),
                0,
            );
            assert!(
                matches!(t.outcome, Outcome::Delivered { .. }),
                "{mode:?} from {origin:?}: {:#?}",
                t.hops
            );
            assert_eq!(
                t.node.as_deref(),
                Some("worker-3"),
                "{mode:?}: decided by worker-3's rules"
            );
            let arrivals: Vec<_> = t
                .hops
                .iter()
                .filter_map(|h| match &h.what {
                    HopKind::Arrive { node } => Some(node.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(arrivals, ["worker-3"], "{mode:?}");
        }
        // The node's own NodePort stays on the node.
        let t = trace(
            &sim,
            &req(
                Origin::Pod { pod: web1.clone() },
                Dest::Ip(ip("192.168.49.11")),
                30080,
                40000,
            ),
            &mut WorldState::default(),
            &mut Chooser::new(1),
            0,
        );
        assert_eq!(t.node.as_deref(), Some("worker-1"), "{mode:?}");
        assert!(!t
            .hops
            .iter()
            .any(|h| matches!(h.what, HopKind::Arrive { .. })));
        // Another node's address on a port no Service has is the node's own.
        let t = trace(
            &sim,
            &req(
                Origin::Pod { pod: web1.clone() },
                Dest::Ip(ip("192.168.49.13")),
                22,
                40000,
            ),
            &mut WorldState::default(),
            &mut Chooser::new(1),
            0,
        );
        assert_eq!(
            t.outcome,
            Outcome::AcceptedByNode {
                node: "worker-3".into()
            },
            "{mode:?}"
        );
    }
}

/// An endpoint written in an EndpointSlice with this node's name and no Pod
/// object is local: masqueraded traffic to it leaves by the Pod network's
/// bridge and takes its address (the Pod CIDR's first), as the kernel's
/// MASQUERADE does; a remote one takes the node's address.
#[test]
fn masquerade_to_a_local_endpoint_without_a_pod_takes_the_bridge_address() {
    let text = "apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
hostnameOverride: node-a
clusterCIDR: 10.244.0.0/16
---
apiVersion: v1
kind: Node
metadata: {name: node-a}
spec: {podCIDR: 10.244.1.0/24}
status: {addresses: [{type: InternalIP, address: 192.168.0.2}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  clusterIP: 10.96.0.10
  ports: [{name: p, port: 80, targetPort: 8080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-1
  namespace: default
  labels: {kubernetes.io/service-name: web}
addressType: IPv4
ports: [{name: p, port: 8080, protocol: TCP}]
endpoints:
- {addresses: [10.244.1.5], nodeName: node-a}
- {addresses: [10.244.2.5], nodeName: node-b}
";
    let c = parse(text);
    let slices = steady_slices(&c);
    let sim = Sim::new(
        &c,
        &slices,
        Mode::Iptables,
        None,
        kpv_core::net::modes::Compilers::ALL,
    );
    let mut seen = BTreeSet::new();
    for seed in 0..32 {
        // From outside the cluster CIDR: the ClusterIP rule masquerades.
        let origin = Origin::Node {
            node: "node-a".into(),
            src: ip("192.168.0.2"),
        };
        let t = trace(
            &sim,
            &req(origin, Dest::Ip(ip("10.96.0.10")), 80, 40000),
            &mut WorldState::default(),
            &mut Chooser::new(seed),
            0,
        );
        assert!(t.masquerade);
        let Outcome::Delivered {
            endpoint, source, ..
        } = t.outcome
        else {
            panic!("{:?}", t.outcome);
        };
        seen.insert((endpoint, source.ip()));
    }
    assert_eq!(
        seen,
        [
            (sa("10.244.1.5:8080"), ip("10.244.1.1")),
            (sa("10.244.2.5:8080"), ip("192.168.0.2")),
        ]
        .into_iter()
        .collect()
    );
}

/// Where no rule takes a connection to 127.0.0.1 (nftables mode has no
/// localhost NodePorts), the node itself gets it: it never leaves the node.
#[test]
fn an_untranslated_loopback_connection_stays_on_the_node() {
    let c = parse(include_str!("../../tests/scenarios/nodeport.yaml"));
    let node = c.nodes[0].name.clone();
    let port = c
        .services
        .iter()
        .find_map(|s| s.ports.iter().find_map(|p| p.node_port))
        .expect("a NodePort");
    for (mode, translated) in [(Mode::Nftables, false), (Mode::Iptables, true)] {
        let slices = steady_slices(&c);
        let sim = Sim::new(
            &c,
            &slices,
            mode,
            None,
            kpv_core::net::modes::Compilers::ALL,
        );
        let origin = Origin::Node {
            node: node.clone(),
            src: ip("127.0.0.1"),
        };
        let t = trace(
            &sim,
            &req(origin, Dest::Ip(ip("127.0.0.1")), port, 40000),
            &mut WorldState::default(),
            &mut Chooser::new(1),
            0,
        );
        if translated {
            assert!(
                matches!(t.outcome, Outcome::Delivered { .. }),
                "{:?}",
                t.outcome
            );
        } else {
            assert_eq!(t.outcome, Outcome::AcceptedByNode { node: node.clone() });
        }
    }
}

/// A dual-stack Pod talks to an IPv6 address from its IPv6 address and to
/// an IPv4 address from its IPv4 one (the kernel picks a source of the
/// destination's family), whichever of its `podIPs` is listed first.
#[test]
fn a_dual_stack_pod_sends_from_the_destinations_family() {
    let yaml = "apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata: {name: kubernetes}\nspec: {cidrs: [10.96.0.0/16, \"fd00:10:96::/112\"]}\n---\n\
apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {podCIDRs: [10.244.1.0/24, \"fd00:244:1::/64\"]}\nstatus:\n  addresses:\n  - {type: InternalIP, address: 192.168.0.11}\n  - {type: InternalIP, address: \"fd00::11\"}\n---\n\
apiVersion: v1\nkind: Pod\nmetadata: {name: client, namespace: default}\nspec: {nodeName: n1, containers: [{name: c, image: busybox}]}\nstatus:\n  podIPs: [{ip: 10.244.1.5}, {ip: \"fd00:244:1::5\"}]\n---\n\
apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default, labels: {app: web}}\nspec: {nodeName: n1, containers: [{name: c, image: nginx, ports: [{containerPort: 80}]}]}\nstatus:\n  podIPs: [{ip: 10.244.1.6}, {ip: \"fd00:244:1::6\"}]\n---\n\
apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec:\n  selector: {app: web}\n  ipFamilyPolicy: RequireDualStack\n  ipFamilies: [IPv4, IPv6]\n  clusterIPs: [10.96.0.20, \"fd00:10:96::20\"]\n  ports: [{port: 80}]\n";
    let c = parse(yaml);
    let slices = steady_slices(&c);
    let sim = Sim::new(
        &c,
        &slices,
        Mode::Iptables,
        None,
        kpv_core::net::modes::Compilers::ALL,
    );
    let client = NamespacedName::new("default", "client");
    for (dst, src, pod) in [
        ("fd00:10:96::20", "fd00:244:1::5", "fd00:244:1::6"),
        ("10.96.0.20", "10.244.1.5", "10.244.1.6"),
    ] {
        let t = trace(
            &sim,
            &req(
                Origin::Pod {
                    pod: client.clone(),
                },
                Dest::Ip(ip(dst)),
                80,
                40000,
            ),
            &mut WorldState::default(),
            &mut Chooser::new(1),
            0,
        );
        let sent = t
            .hops
            .iter()
            .find(|h| h.what == HopKind::Send)
            .expect("a send hop");
        assert_eq!(sent.before.src.ip(), ip(src), "to {dst}: {t:#?}");
        match &t.outcome {
            Outcome::Delivered {
                endpoint, source, ..
            } => {
                assert_eq!(endpoint.ip(), ip(pod), "to {dst}");
                assert_eq!(
                    source.ip(),
                    ip(src),
                    "to {dst}: no masquerade on the same node"
                );
            }
            other => panic!("to {dst}: {other:?}"),
        }
    }
}

/// One fresh trace of `r` in `mode` (new conntrack, seed 3, at 0 ms).
fn fresh(c: &Cluster, slices: &[EndpointSlice], mode: Mode, r: &Request) -> Trace {
    let sim = Sim::new(c, slices, mode, None, kpv_core::net::modes::Compilers::ALL);
    trace(&sim, r, &mut WorldState::default(), &mut Chooser::new(3), 0)
}

/// An embed at rest shows one packet at its telling hop: where the Service
/// address became a Pod's, in every mode; where it was refused when the
/// Service has no endpoint.
#[test]
fn the_poster_hop_is_where_the_address_is_translated_or_the_packet_refused() {
    let c = parse(SEED);
    let slices = steady_slices(&c);
    let from = Origin::Pod {
        pod: pod_of(&c, "bandicoot"),
    };
    let r = req(from, Dest::Name("alpaca-service".into()), 8080, 45000);
    for mode in Mode::ALL {
        let t = fresh(&c, &slices, mode, &r);
        let hop = &t.hops[t.poster_hop()];
        assert_eq!(hop.what, HopKind::Rule, "{mode:?}");
        assert_ne!(hop.after.dst, hop.before.dst, "{mode:?}");
        // Nothing before it translated the address.
        assert!(t.hops[..t.poster_hop()]
            .iter()
            .all(|h| h.after.dst == h.before.dst || !matches!(h.what, HopKind::Rule)));
    }
    let none = parse(include_str!("../../tests/scenarios/no-endpoints.yaml"));
    let slices = steady_slices(&none);
    let svc = none.services.first().expect("a Service");
    let ip = svc.cluster_ips.first().copied().expect("a ClusterIP");
    let port = svc.ports.first().map(|p| p.port).expect("a port");
    let from = Origin::Node {
        node: "worker-1".into(),
        src: "192.168.49.11".parse().expect("test IP"),
    };
    let r = req(from, Dest::Ip(ip), port, 45000);
    for mode in Mode::ALL {
        let t = fresh(&none, &slices, mode, &r);
        let at = t.poster_hop();
        let refused = t
            .hops
            .iter()
            .position(|h| matches!(h.what, HopKind::Drop { .. } | HopKind::Reject { .. }));
        assert_eq!(Some(at), refused, "{mode:?}: {:#?}", t.hops);
    }
}
