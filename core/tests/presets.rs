//! The scenario presets of `tests/scenarios/`: every file parses cleanly, and
//! each teaching preset really shows what its header comment says, traced end
//! to end through [`kpv_core::net::trace::trace`] with seeded choices.

use kpv_core::model::packet::Protocol;
use kpv_core::model::{Cluster, Mode, NamespacedName};
use kpv_core::net::controller::{steady_slices, AppChange, AppState};
use kpv_core::net::modes::{DropReason, StepAction};
use kpv_core::net::trace::{
    trace, Dest, HopKind, Origin, Outcome, Request, Sim, Trace, WorldState,
};
use kpv_core::util::choose::Chooser;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

fn scenarios_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/scenarios")
}

fn load(name: &str) -> Cluster {
    let path = scenarios_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let (cluster, diags) = kpv_core::Code::ALL.parse(&text);
    assert!(
        !kpv_core::util::diag::has_errors(&diags),
        "{name}: {diags:#?}"
    );
    cluster
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

fn external(client: &str) -> Origin {
    Origin::External { client: ip(client) }
}

fn pod_of(cluster: &Cluster, prefix: &str) -> NamespacedName {
    cluster
        .pods
        .iter()
        .find(|p| p.id.name.starts_with(prefix))
        .map(|p| p.id.clone())
        .unwrap_or_else(|| panic!("no Pod named {prefix}*"))
}

fn node_of_endpoint(cluster: &Cluster, ep: SocketAddr) -> Option<String> {
    cluster
        .pods
        .iter()
        .find(|p| p.ips.contains(&ep.ip()))
        .and_then(|p| p.node_name.clone())
}

fn one(sim: &Sim<'_>, r: &Request, seed: u64) -> Trace {
    let mut state = WorldState::default();
    trace(sim, r, &mut state, &mut Chooser::new(seed), 0)
}

const DATAPLANES: [Mode; 3] = [Mode::Iptables, Mode::Ipvs, Mode::Nftables];

#[test]
fn every_scenario_file_parses_without_errors() {
    let mut seen = 0;
    let mut entries: Vec<PathBuf> = std::fs::read_dir(scenarios_dir())
        .expect("tests/scenarios exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    entries.sort();
    for path in entries {
        let text = std::fs::read_to_string(&path).expect("readable");
        let (cluster, diags) = kpv_core::Code::ALL.parse(&text);
        assert!(
            !kpv_core::util::diag::has_errors(&diags),
            "{path:?}: {diags:#?}"
        );
        assert!(!cluster.nodes.is_empty(), "{path:?} has no Node");
        assert!(!cluster.services.is_empty(), "{path:?} has no Service");
        assert!(
            text.trim_start().starts_with('#'),
            "{path:?} must start with a comment saying what it teaches"
        );
        seen += 1;
    }
    assert!(seen >= 13, "only {seen} scenarios found");
}

#[test]
fn the_presets_the_web_app_names_exist_with_a_proxy_configuration() {
    for name in [
        "alpaca-bandicoot.yaml",
        "nodeport.yaml",
        "loadbalancer-cluster.yaml",
        "loadbalancer-local.yaml",
        "no-endpoints.yaml",
        "session-affinity.yaml",
        "external-database.yaml",
        "userspace-retry.yaml",
    ] {
        let c = load(name);
        assert!(c.proxy_config_given, "{name}: no KubeProxyConfiguration");
        assert!(!c.proxy.cluster_cidrs.is_empty(), "{name}: no clusterCIDR");
        for n in &c.nodes {
            assert!(
                !n.pod_cidrs.is_empty(),
                "{name}: node {} has no podCIDR",
                n.name
            );
        }
    }
}

#[test]
fn nodeport_answers_on_every_node_even_without_a_local_pod() {
    let c = load("nodeport.yaml");
    let slices = steady_slices(&c);
    for mode in DATAPLANES {
        let sim = Sim::new(
            &c,
            &slices,
            mode,
            None,
            kpv_core::net::modes::Compilers::ALL,
        );
        // worker-3 runs no web Pod (the two replicas are on worker-1 and -2).
        let t = one(
            &sim,
            &req(
                external("198.51.100.7"),
                Dest::Ip(ip("192.168.49.13")),
                30080,
                40000,
            ),
            1,
        );
        let Outcome::Delivered {
            endpoint, source, ..
        } = t.outcome
        else {
            panic!("{mode:?}: {:?}", t.outcome)
        };
        assert_ne!(node_of_endpoint(&c, endpoint).as_deref(), Some("worker-3"));
        assert!(t.masquerade, "{mode:?}");
        assert_eq!(
            source.ip(),
            ip("192.168.49.13"),
            "{mode:?}: SNAT to the node"
        );
        assert!(t
            .hops
            .iter()
            .any(|h| matches!(&h.what, HopKind::PodNetwork { from, .. } if from == "worker-3")));
        assert_eq!(t.endpoints.len(), 2, "{mode:?}: {:?}", t.endpoints);
    }
}

#[test]
fn loadbalancer_cluster_loses_the_client_ip() {
    let c = load("loadbalancer-cluster.yaml");
    let slices = steady_slices(&c);
    for mode in DATAPLANES {
        let sim = Sim::new(
            &c,
            &slices,
            mode,
            None,
            kpv_core::net::modes::Compilers::ALL,
        );
        let mut nodes = std::collections::BTreeSet::new();
        for seed in 0..60 {
            let t = one(
                &sim,
                &req(
                    external("198.51.100.7"),
                    Dest::Ip(ip("203.0.113.10")),
                    80,
                    40000,
                ),
                seed,
            );
            let node = t.node.clone().expect("a node handled it");
            nodes.insert(node.clone());
            let Outcome::Delivered { source, .. } = t.outcome else {
                panic!("{mode:?} seed {seed}: {:?}", t.outcome)
            };
            assert!(t.masquerade, "{mode:?} seed {seed}");
            assert_ne!(source.ip(), ip("198.51.100.7"), "{mode:?}: client IP kept?");
            assert_eq!(
                t.endpoints.len(),
                3,
                "{mode:?}: every endpoint is a candidate"
            );
            if node == "worker-3" {
                // No local endpoint: forwarded to another node as that node.
                assert_eq!(source.ip(), ip("192.168.49.13"), "{mode:?}");
            }
            let lb = t
                .hops
                .iter()
                .find_map(|h| match &h.what {
                    HopKind::LoadBalancer {
                        healthy_nodes,
                        total_nodes,
                        ..
                    } => Some((*healthy_nodes, *total_nodes)),
                    _ => None,
                })
                .expect("went through the load balancer");
            assert_eq!(lb, (3, 3), "every node passes the health check");
        }
        assert_eq!(
            nodes.len(),
            3,
            "{mode:?}: the LB uses every node: {nodes:?}"
        );
    }
}

#[test]
fn loadbalancer_local_keeps_the_client_ip_and_skips_nodes_without_endpoints() {
    let c = load("loadbalancer-local.yaml");
    let slices = steady_slices(&c);
    for mode in DATAPLANES {
        let sim = Sim::new(
            &c,
            &slices,
            mode,
            None,
            kpv_core::net::modes::Compilers::ALL,
        );
        let mut nodes = std::collections::BTreeSet::new();
        for seed in 0..100 {
            let t = one(
                &sim,
                &req(
                    external("198.51.100.7"),
                    Dest::Ip(ip("203.0.113.10")),
                    80,
                    40000,
                ),
                seed,
            );
            let node = t.node.clone().expect("a node handled it");
            assert_ne!(
                node, "worker-3",
                "{mode:?}: worker-3 fails the health check"
            );
            nodes.insert(node.clone());
            let Outcome::Delivered {
                endpoint, source, ..
            } = t.outcome
            else {
                panic!("{mode:?} seed {seed}: {:?}", t.outcome)
            };
            assert!(!t.masquerade, "{mode:?} seed {seed}");
            assert_eq!(source, sa("198.51.100.7:40000"), "{mode:?}");
            assert_eq!(
                node_of_endpoint(&c, endpoint),
                Some(node.clone()),
                "{mode:?}"
            );
            assert!(!t.hops.iter().any(|h| matches!(
                h.what,
                HopKind::PodNetwork { .. } | HopKind::Masquerade { .. }
            )));
        }
        assert_eq!(nodes.len(), 2, "{mode:?}: {nodes:?}");
    }
}

#[test]
fn loadbalancer_local_node_without_endpoints_drops_direct_nodeport_traffic() {
    // What the health check protects against: a client that goes straight to
    // worker-3's NodePort is dropped there (policy Local, no local endpoint).
    let c = load("loadbalancer-local.yaml");
    let slices = steady_slices(&c);
    for mode in [Mode::Iptables, Mode::Nftables] {
        let sim = Sim::new(
            &c,
            &slices,
            mode,
            None,
            kpv_core::net::modes::Compilers::ALL,
        );
        let t = one(
            &sim,
            &req(
                external("198.51.100.7"),
                Dest::Ip(ip("192.168.49.13")),
                30080,
                40000,
            ),
            1,
        );
        assert_eq!(
            t.outcome,
            Outcome::Dropped {
                reason: DropReason::NoLocalEndpoints
            },
            "{mode:?}"
        );
    }
}

#[test]
fn no_endpoints_rejects_in_every_rule_based_mode() {
    let c = load("no-endpoints.yaml");
    let slices = steady_slices(&c);
    assert!(slices
        .iter()
        .flat_map(|s| &s.endpoints)
        .all(|e| !e.ready && !e.serving));
    for mode in DATAPLANES {
        let sim = Sim::new(
            &c,
            &slices,
            mode,
            None,
            kpv_core::net::modes::Compilers::ALL,
        );
        for (origin, dst, port) in [
            (
                Origin::Node {
                    node: "worker-1".into(),
                    src: ip("192.168.49.11"),
                },
                "10.96.30.30",
                80,
            ),
            (external("198.51.100.7"), "192.168.49.12", 30090),
        ] {
            let t = one(&sim, &req(origin, Dest::Ip(ip(dst)), port, 40000), 1);
            assert_eq!(
                t.outcome,
                Outcome::Rejected {
                    reason: DropReason::NoEndpoints
                },
                "{mode:?} {dst}:{port}"
            );
            assert!(t.endpoints.is_empty());
        }
    }
}

#[test]
fn session_affinity_sends_one_client_to_one_pod() {
    let c = load("session-affinity.yaml");
    let slices = steady_slices(&c);
    let shop = pod_of(&c, "shop");
    for mode in Mode::ALL {
        let sim = Sim::new(
            &c,
            &slices,
            mode,
            None,
            kpv_core::net::modes::Compilers::ALL,
        );
        let mut state = WorldState::default();
        let mut chooser = Chooser::new(11);
        let mut seen = std::collections::BTreeSet::new();
        for (i, src_port) in (41000..41012).enumerate() {
            let t = trace(
                &sim,
                &req(
                    Origin::Pod { pod: shop.clone() },
                    Dest::Name("cart".into()),
                    80,
                    src_port,
                ),
                &mut state,
                &mut chooser,
                1000 * i as u64,
            );
            assert!(!t.established, "{mode:?}: new source port, new connection");
            match t.outcome {
                Outcome::Delivered { endpoint, .. } => {
                    seen.insert(endpoint);
                }
                o => panic!("{mode:?}: {o:?}"),
            }
        }
        assert_eq!(seen.len(), 1, "{mode:?}: {seen:?}");
    }
    // Without affinity the same connections spread out.
    let mut plain = c.clone();
    for s in &mut plain.services {
        s.session_affinity_seconds = None;
    }
    let sim = Sim::new(
        &plain,
        &slices,
        Mode::Iptables,
        None,
        kpv_core::net::modes::Compilers::ALL,
    );
    let mut state = WorldState::default();
    let mut chooser = Chooser::new(11);
    let spread: std::collections::BTreeSet<_> = (41000..41012)
        .filter_map(|p| {
            trace(
                &sim,
                &req(
                    Origin::Pod { pod: shop.clone() },
                    Dest::Name("cart".into()),
                    80,
                    p,
                ),
                &mut state,
                &mut chooser,
                0,
            )
            .verdict
            .endpoint()
        })
        .collect();
    assert!(spread.len() > 1, "{spread:?}");
}

#[test]
fn external_database_is_reached_through_its_service() {
    let c = load("external-database.yaml");
    let slices = steady_slices(&c);
    let orders = pod_of(&c, "orders");
    for mode in Mode::ALL {
        let sim = Sim::new(
            &c,
            &slices,
            mode,
            None,
            kpv_core::net::modes::Compilers::ALL,
        );
        for name in [
            "orders-db",
            "orders-db.default",
            "orders-db.default.svc.cluster.local",
        ] {
            let t = one(
                &sim,
                &req(
                    Origin::Pod {
                        pod: orders.clone(),
                    },
                    Dest::Name(name.into()),
                    5432,
                    40000,
                ),
                3,
            );
            match &t.outcome {
                Outcome::Delivered { pod, endpoint, .. } => {
                    assert_eq!(*pod, None, "{mode:?}: not a Pod");
                    assert_eq!(*endpoint, sa("172.16.5.20:5432"), "{mode:?}");
                }
                o => panic!("{mode:?} {name}: {o:?}"),
            }
            assert_eq!(t.endpoints, vec![sa("172.16.5.20:5432")], "{mode:?}");
        }
    }
}

#[test]
fn userspace_retries_a_dead_pod_where_iptables_times_out() {
    let c = load("userspace-retry.yaml");
    assert_eq!(c.proxy.mode, Mode::Userspace);
    let slices = steady_slices(&c);
    let dead = pod_of(&c, "kuard");
    let dead_ip = c
        .pod(&dead)
        .and_then(|p| p.ips.first().copied())
        .expect("IP");
    let changes = vec![AppChange {
        at_ms: 0,
        pod: dead.clone(),
        state: AppState::Down,
    }];
    // The Pod has no readiness probe: it stays Ready, so it stays an endpoint.
    assert!(slices
        .iter()
        .flat_map(|s| &s.endpoints)
        .any(|e| e.addresses.contains(&dead_ip) && e.ready));
    let origin = Origin::Node {
        node: "worker-2".into(),
        src: ip("192.168.49.12"),
    };
    let run = |mode: Mode| -> Vec<Trace> {
        let sim = Sim::new(
            &c,
            &slices,
            mode,
            None,
            kpv_core::net::modes::Compilers::ALL,
        )
        .with_app_changes(&changes);
        let mut state = WorldState::default();
        let mut chooser = Chooser::new(5);
        (0..12)
            .map(|i| {
                trace(
                    &sim,
                    &req(origin.clone(), Dest::Ip(ip("10.96.60.60")), 80, 42000 + i),
                    &mut state,
                    &mut chooser,
                    10_000,
                )
            })
            .collect()
    };
    let user = run(Mode::Userspace);
    let mut retried = 0;
    for t in &user {
        match &t.outcome {
            Outcome::Delivered { endpoint, .. } => assert_ne!(endpoint.ip(), dead_ip),
            o => panic!("userspace: {o:?}"),
        }
        let failed_dial = t.hops.iter().any(|h| {
            matches!(&h.step, Some(s) if matches!(s.action,
                StepAction::Connect { to, answered: false } if to.ip() == dead_ip))
        });
        retried += usize::from(failed_dial);
    }
    assert!(retried > 0, "the round robin never hit the dead Pod");
    let ipt = run(Mode::Iptables);
    let timed_out = ipt
        .iter()
        .filter(|t| matches!(&t.outcome, Outcome::TimedOut { endpoint, pod } if endpoint.ip() == dead_ip && pod.as_ref() == Some(&dead)))
        .count();
    assert!(timed_out > 0, "iptables never picked the dead Pod");
    assert!(ipt.iter().all(|t| matches!(
        t.outcome,
        Outcome::Delivered { .. } | Outcome::TimedOut { .. }
    )));
    assert!(ipt
        .iter()
        .any(|t| t.hops.iter().any(|h| matches!(h.what, HopKind::NoAnswer))));
}
