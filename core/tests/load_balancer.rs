//! What kube-proxy does with a LoadBalancer Service's status and spec, in
//! every mode: which addresses get rules (`ipMode`, the status only, never
//! `spec.loadBalancerIP`), NodePorts left out by
//! `allocateLoadBalancerNodePorts: false`, the health check that counts only
//! ready local endpoints, and `loadBalancerSourceRanges` on the path through
//! a NodePort (upstream `newBaseServiceInfo`, `LocalReadyEndpoints`,
//! `syncProxyRules`).

use ipnet::IpNet;
use kpv_core::model::packet::{IpFamily, Protocol};
use kpv_core::model::{Cluster, Mode};
use kpv_core::net::controller::steady_slices;
use kpv_core::net::modes::DropReason;
use kpv_core::net::trace::{
    trace, Dest, HopKind, Origin, Outcome, Request, Sim, Trace, WorldState,
};
use kpv_core::util::choose::Chooser;
use kpv_core::util::diag::Severity;
use std::net::IpAddr;

const NODES: &str = "apiVersion: v1
kind: Node
metadata: {name: worker-1}
spec: {podCIDR: 10.244.1.0/24}
status: {addresses: [{type: InternalIP, address: 192.168.49.11}]}
---
apiVersion: v1
kind: Node
metadata: {name: worker-2}
spec: {podCIDR: 10.244.2.0/24}
status: {addresses: [{type: InternalIP, address: 192.168.49.12}]}
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clusterCIDR: 10.244.0.0/16
";

/// A LoadBalancer Service `web` (spec and status lines given) with one ready
/// endpoint on worker-2 and, on worker-1, one that is `worker1` (YAML
/// conditions).
fn cluster(
    spec: &str,
    status: &str,
    worker1: &str,
) -> (Cluster, Vec<kpv_core::util::diag::Diagnostic>) {
    let text = format!(
        "{NODES}---
apiVersion: v1
kind: Service
metadata: {{name: web, namespace: default}}
spec:
  type: LoadBalancer
  clusterIP: 10.96.20.20
  ports: [{{name: http, protocol: TCP, port: 80, targetPort: 8080}}]
{spec}
status:
  loadBalancer:
{status}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-abc
  namespace: default
  labels: {{kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{{name: http, protocol: TCP, port: 8080}}]
endpoints:
  - addresses: [10.244.1.5]
    nodeName: worker-1
    conditions: {worker1}
  - addresses: [10.244.2.5]
    nodeName: worker-2
    conditions: {{ready: true}}
"
    );
    kpv_core::Code::ALL.parse(&text)
}

const READY: &str = "{ready: true}";
/// The modes that read EndpointSlices (the userspace proxy read Endpoints,
/// and these clusters give their endpoints as a slice).
const MODES: [Mode; 3] = [Mode::Iptables, Mode::Ipvs, Mode::Nftables];

fn ip(s: &str) -> IpAddr {
    s.parse().expect("test IP")
}

fn rules(c: &Cluster, mode: Mode) -> String {
    let slices = steady_slices(c);
    let sim = Sim::new(c, &slices, mode, None, kpv_core::net::modes::Compilers::ALL);
    sim.dataplane("worker-1", IpFamily::V4)
        .map(|dp| dp.render_text())
        .unwrap_or_default()
}

fn from_outside(c: &Cluster, mode: Mode, client: &str, dst: &str, seed: u64) -> Trace {
    let slices = steady_slices(c);
    let sim = Sim::new(c, &slices, mode, None, kpv_core::net::modes::Compilers::ALL);
    let req = Request {
        origin: Origin::External { client: ip(client) },
        dst: Dest::Ip(ip(dst)),
        port: 80,
        protocol: Protocol::Tcp,
        src_port: 40000,
        keep_open: false,
    };
    trace(
        &sim,
        &req,
        &mut WorldState::default(),
        &mut Chooser::new(seed),
        0,
    )
}

#[test]
fn only_vip_mode_status_addresses_get_rules() {
    let (c, diags) = cluster(
        "",
        "    ingress: [{ip: 203.0.113.10, ipMode: Proxy}, {ip: 203.0.113.11, ipMode: VIP}, {ip: 203.0.113.12}]",
        READY,
    );
    assert!(diags.is_empty(), "{diags:#?}");
    for mode in MODES {
        let text = rules(&c, mode);
        assert!(
            !text.contains("203.0.113.10"),
            "{mode:?}: a Proxy address got a rule:\n{text}"
        );
        assert!(
            text.contains("203.0.113.11"),
            "{mode:?}: VIP address missing:\n{text}"
        );
        assert!(
            text.contains("203.0.113.12"),
            "{mode:?}: default ipMode is VIP:\n{text}"
        );
        // The Proxy address is still the load balancer's: a client reaches
        // the Service through it, by the NodePort.
        let t = from_outside(&c, mode, "198.51.100.7", "203.0.113.10", 1);
        assert!(
            matches!(t.outcome, Outcome::Delivered { .. }),
            "{mode:?}: {:#?}",
            t.outcome
        );
        assert!(t
            .hops
            .iter()
            .any(|h| matches!(h.what, HopKind::LoadBalancer { .. })));
    }
    let (_, diags) = cluster(
        "",
        "    ingress: [{ip: 203.0.113.10, ipMode: Tunnel}]",
        READY,
    );
    assert!(
        diags.iter().any(|d| d.severity == Severity::Error
            && d.field.as_deref() == Some("status.loadBalancer.ingress[0].ipMode")),
        "{diags:#?}"
    );
}

/// kube-proxy never reads `spec.loadBalancerIP`: it is a request to the
/// cloud's controller. kpv's assumed controller grants it (as MetalLB and
/// most clouds do) by writing the status, which kube-proxy then reads; a
/// Service of another `loadBalancerClass` stays pending and gets no rules.
#[test]
fn spec_load_balancer_ip_is_a_request_the_assumed_controller_grants() {
    let (c, diags) = cluster("  loadBalancerIP: 203.0.113.50", "    ingress: []", READY);
    let svc = &c.services[0];
    assert_eq!(svc.load_balancer_ips, vec![ip("203.0.113.50")]);
    assert!(svc.load_balancer_assumed);
    for mode in MODES {
        let text = rules(&c, mode);
        assert!(text.contains("203.0.113.50"), "{mode:?}:\n{text}");
    }
    let assumed: Vec<_> = diags
        .iter()
        .filter(|d| d.severity == Severity::Warning && d.message.contains("assumes"))
        .collect();
    assert_eq!(assumed.len(), 1, "{diags:#?}");
    assert!(
        assumed[0]
            .message
            .contains("the spec.loadBalancerIP it asks for, 203.0.113.50"),
        "{}",
        assumed[0]
    );

    let (c, diags) = cluster(
        "  loadBalancerIP: 203.0.113.50\n  loadBalancerClass: example.com/internal",
        "    ingress: []",
        READY,
    );
    assert!(c.services[0].load_balancer_ips.is_empty());
    assert!(!c.services[0].load_balancer_assumed);
    for mode in MODES {
        let text = rules(&c, mode);
        assert!(!text.contains("203.0.113.50"), "{mode:?}:\n{text}");
    }
    assert!(
        diags.iter().any(|d| d.message.contains("stays pending")
            && d.hint
                .as_deref()
                .is_some_and(|h| h.contains("loadBalancerClass"))),
        "{diags:#?}"
    );
}

/// Without a status or a request, the assumed controller takes an address
/// of its stated range, one per family of the Service, never one already
/// written elsewhere; the same input always gets the same address.
#[test]
fn the_assumed_controller_gives_each_family_an_address_of_its_range() {
    let (c, diags) = cluster("", "    ingress: []", READY);
    let svc = &c.services[0];
    assert!(svc.load_balancer_assumed);
    let [lb] = svc.load_balancer_ips.as_slice() else {
        panic!("one address: {:?}", svc.load_balancer_ips)
    };
    let range: IpNet = "203.0.113.0/24".parse().unwrap_or_else(|_| panic!("range"));
    assert!(range.contains(lb), "{lb}");
    assert!(
        diags
            .iter()
            .any(|d| d.message.contains(&lb.to_string()) && d.message.contains("203.0.113.0/24")),
        "the warning names the address and its range: {diags:#?}"
    );
    let (again, _) = cluster("", "    ingress: []", READY);
    assert_eq!(again.services[0].load_balancer_ips, svc.load_balancer_ips);
    let t = from_outside(&c, MODES[0], "198.51.100.7", &lb.to_string(), 1);
    assert!(
        matches!(t.outcome, Outcome::Delivered { .. }),
        "{:#?}",
        t.outcome
    );

    let dual = "  ipFamilyPolicy: RequireDualStack\n  clusterIPs: [10.96.20.20, fd00:10:96::20]";
    let (c, diags) = cluster(dual, "    ingress: []", READY);
    let ips = &c.services[0].load_balancer_ips;
    assert_eq!(ips.len(), 2, "{ips:?} {diags:#?}");
    assert!(ips[0].is_ipv4() && ips[1].is_ipv6(), "{ips:?}");
}

#[test]
fn without_node_ports_the_load_balancer_sends_to_its_own_address() {
    let (c, diags) = cluster(
        "  allocateLoadBalancerNodePorts: false",
        "    ingress: [{ip: 203.0.113.10}]",
        READY,
    );
    assert!(diags.is_empty(), "{diags:#?}");
    assert_eq!(c.services[0].ports[0].node_port, None);
    for mode in MODES {
        let text = rules(&c, mode);
        assert!(
            !text.contains("3008"),
            "{mode:?}: a NodePort was invented:\n{text}"
        );
        // The packet arrives addressed to the load balancer's IP, and the
        // node's own rules for that address take it.
        let t = from_outside(&c, mode, "198.51.100.7", "203.0.113.10", 1);
        assert!(
            !t.hops
                .iter()
                .any(|h| matches!(h.what, HopKind::LoadBalancer { .. })),
            "{mode:?}: no NodePort to forward to"
        );
        assert!(
            matches!(t.outcome, Outcome::Delivered { .. }),
            "{mode:?}: {:#?}",
            t.hops
        );
    }
}

#[test]
fn a_node_whose_only_local_endpoint_is_terminating_fails_the_health_check() {
    let (c, diags) = cluster(
        "  externalTrafficPolicy: Local",
        "    ingress: [{ip: 203.0.113.10}]",
        "{ready: false, serving: true, terminating: true}",
    );
    assert!(diags.is_empty(), "{diags:#?}");
    for mode in MODES {
        for seed in 0..20 {
            let t = from_outside(&c, mode, "198.51.100.7", "203.0.113.10", seed);
            let lb = t.hops.iter().find_map(|h| match &h.what {
                HopKind::LoadBalancer {
                    node,
                    healthy_nodes,
                    total_nodes,
                } => Some((node.clone(), *healthy_nodes, *total_nodes)),
                _ => None,
            });
            assert_eq!(
                lb,
                Some(("worker-2".to_string(), 1, 2)),
                "{mode:?} seed {seed}"
            );
        }
    }
}

#[test]
fn source_ranges_hold_on_every_path_from_outside() {
    let (c, diags) = cluster(
        "  loadBalancerSourceRanges: [198.51.100.0/24]",
        "    ingress: [{ip: 203.0.113.10}]",
        READY,
    );
    assert!(diags.is_empty(), "{diags:#?}");
    for mode in MODES {
        // Through the NodePort: the cloud provider's firewall refuses.
        let t = from_outside(&c, mode, "8.8.8.8", "203.0.113.10", 1);
        assert_eq!(
            t.outcome,
            Outcome::Dropped {
                reason: DropReason::SourceRange
            },
            "{mode:?}"
        );
        assert_eq!(
            t.hops.len(),
            2,
            "{mode:?}: refused before any node: {:#?}",
            t.hops
        );
        assert!(kpv_core::net::trace::describe_hop(&t.hops[1]).starts_with("load balancer: DROP"));
        let t = from_outside(&c, mode, "198.51.100.7", "203.0.113.10", 1);
        assert!(
            matches!(t.outcome, Outcome::Delivered { .. }),
            "{mode:?}: {:#?}",
            t.outcome
        );
    }
    // Without NodePorts the packet reaches a node addressed to the load
    // balancer's IP, where kube-proxy's own firewall rules drop it.
    let (c, _) = cluster(
        "  loadBalancerSourceRanges: [198.51.100.0/24]\n  allocateLoadBalancerNodePorts: false",
        "    ingress: [{ip: 203.0.113.10}]",
        READY,
    );
    for mode in MODES {
        let t = from_outside(&c, mode, "8.8.8.8", "203.0.113.10", 1);
        assert_eq!(
            t.outcome,
            Outcome::Dropped {
                reason: DropReason::SourceRange
            },
            "{mode:?}: {:#?}",
            t.hops
        );
        assert!(t.node.is_some(), "{mode:?}: dropped by a node's rules");
    }
}

/// `0.0.0.0/0` allows any source, like no ranges at all, and ipset cannot
/// hold a zero-length prefix: kube-proxy drops the whole list.
#[test]
fn a_zero_length_source_range_means_no_firewall() {
    let (open, _) = cluster(
        "  loadBalancerSourceRanges: [0.0.0.0/0, 198.51.100.0/24]",
        "    ingress: [{ip: 203.0.113.10}]",
        READY,
    );
    let (plain, _) = cluster("", "    ingress: [{ip: 203.0.113.10}]", READY);
    for mode in MODES {
        assert_eq!(rules(&open, mode), rules(&plain, mode), "{mode:?}");
        let t = from_outside(&open, mode, "8.8.8.8", "203.0.113.10", 1);
        assert!(
            matches!(t.outcome, Outcome::Delivered { .. }),
            "{mode:?}: {:#?}",
            t.outcome
        );
    }
}
