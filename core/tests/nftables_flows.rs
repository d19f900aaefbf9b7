//! Packet-flow tables for the nftables mode, in kube-proxy's own style
//! (`runPacketFlowTests` in pkg/proxy/nftables/proxier_test.go): {name,
//! source IP, dest IP, dest port} → every endpoint the packet could reach
//! ("10.180.0.1:80, 10.180.2.1:80"), "REJECT", "DROP" or "" (untouched), and
//! whether it is masqueraded. The rows are upstream's (v1.33–v1.35), with the
//! fake proxier's conventions: node test-node 192.168.0.2 (alt 192.168.1.2),
//! pods 10.0.0.0/8, Services 172.30.0.0/16, external client 203.0.113.2.

use kpv_core::model::packet::{IpFamily, Packet, Protocol};
use kpv_core::model::Mode;
use kpv_core::net::modes::{
    self, AllAnswer, Dataplane, DropReason, Hook, NodeState, StepAction, Verdict,
};
use kpv_core::net::proxy::build_input;
use kpv_core::util::choose::Chooser;
use std::net::{IpAddr, SocketAddr};

const NODE: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: test-node}
status:
  addresses:
  - {type: InternalIP, address: 192.168.0.2}
  - {type: InternalIP, address: 192.168.1.2}
  - {type: InternalIP, address: "2001:db8::1"}
  - {type: InternalIP, address: "2001:db8:1::2"}
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {name: kubernetes}
spec:
  cidrs: ["172.30.0.0/16", "fd00:10:96::/112"]
"#;

fn proxy_config(cluster_cidr: &str, extra: &str) -> String {
    format!(
        r#"
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
hostnameOverride: test-node
clusterCIDR: "{cluster_cidr}"
{extra}
"#
    )
}

fn compile_yaml(yaml: &str, family: IpFamily) -> Box<dyn Dataplane> {
    let (cluster, diags) = kpv_core::Code::ALL.parse(yaml);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    let input = build_input(&cluster, &cluster.endpoint_slices, "test-node", family)
        .expect("test-node exists");
    modes::Compilers::ALL.compile(Mode::Nftables, &input, Default::default())
}

fn scenario(
    cluster_cidr: &str,
    extra_cfg: &str,
    objects: &str,
    family: IpFamily,
) -> Box<dyn Dataplane> {
    let yaml = format!(
        "{}\n---\n{NODE}\n---\n{objects}",
        proxy_config(cluster_cidr, extra_cfg)
    );
    compile_yaml(&yaml, family)
}

fn v4(objects: &str) -> Box<dyn Dataplane> {
    scenario("10.0.0.0/8", "", objects, IpFamily::V4)
}

struct Flow {
    name: &'static str,
    src: &'static str,
    proto: Protocol,
    dst: &'static str,
    port: u16,
    out: &'static str,
    masq: bool,
}

const fn flow(
    name: &'static str,
    src: &'static str,
    dst: &'static str,
    port: u16,
    out: &'static str,
    masq: bool,
) -> Flow {
    Flow {
        name,
        src,
        proto: Protocol::Tcp,
        dst,
        port,
        out,
        masq,
    }
}

fn packet(src: &str, dst: &str, port: u16, proto: Protocol) -> Packet {
    let src: IpAddr = src.parse().expect("source IP");
    let dst: IpAddr = dst.parse().expect("dest IP");
    Packet::new(
        SocketAddr::new(src, 40000),
        SocketAddr::new(dst, port),
        proto,
    )
}

/// The output word kube-proxy's flow tests use.
fn output_of(v: &Verdict, candidates: &[SocketAddr]) -> String {
    match v {
        Verdict::Dnat { endpoint } => {
            assert!(
                candidates.contains(endpoint),
                "{endpoint} not in {candidates:?}"
            );
            let mut c: Vec<String> = candidates.iter().map(|a| a.to_string()).collect();
            c.sort();
            c.join(", ")
        }
        Verdict::Drop { .. } => "DROP".into(),
        Verdict::Reject { .. } => "REJECT".into(),
        Verdict::None | Verdict::Accept => String::new(),
        Verdict::Proxied { .. } => "PROXIED".into(),
    }
}

fn run_flows_hook(dp: &dyn Dataplane, flows: &[Flow], hook: Hook) {
    let text = dp.render_text();
    let lines: Vec<&str> = text.lines().collect();
    let mut failures = Vec::new();
    for f in flows {
        let mut state = NodeState::default();
        let mut chooser = Chooser::new(7);
        let out = dp.process(
            &packet(f.src, f.dst, f.port, f.proto),
            hook,
            &mut state,
            &mut chooser,
            &AllAnswer,
            0,
        );
        let got = output_of(&out.verdict, &out.candidates);
        if got != f.out {
            failures.push(format!("{}: output {got:?}, want {:?}", f.name, f.out));
        } else if matches!(out.verdict, Verdict::Dnat { .. }) && out.masquerade != f.masq {
            failures.push(format!(
                "{}: masq {}, want {}",
                f.name, out.masquerade, f.masq
            ));
        }
        // Every step's line points at that rule in render_text().
        for s in &out.steps {
            if let Some(l) = s.line {
                let line = lines.get(l).copied().unwrap_or("");
                assert!(
                    line.contains(&s.rule),
                    "{}: step line {l} {line:?} does not show {:?}",
                    f.name,
                    s.rule
                );
            }
        }
        assert!(out.rules_compared >= out.steps.iter().filter(|s| s.line.is_some()).count() / 2);
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

fn run_flows(dp: &dyn Dataplane, flows: &[Flow]) {
    run_flows_hook(dp, flows, Hook::Prerouting)
}

// ---------------------------------------------------------------- ClusterIP

const CLUSTER_IP_GENERAL: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: svc1, namespace: ns1}
spec:
  clusterIP: 172.30.0.41
  ports: [{name: http, port: 80, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: svc1-1, namespace: ns1, labels: {kubernetes.io/service-name: svc1}}
addressType: IPv4
endpoints:
- {addresses: ["10.180.0.1"], nodeName: test-node}
ports: [{name: http, port: 80, protocol: TCP}]
---
apiVersion: v1
kind: Service
metadata: {name: svc2, namespace: ns2}
spec:
  clusterIP: 172.30.0.42
  ports:
  - {name: http, port: 80, protocol: TCP}
  - {name: https, port: 443, protocol: TCP, targetPort: 8443}
  - {name: dns-udp, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP, targetPort: 5353}
  - {name: dns-sctp, port: 53, protocol: SCTP}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: svc2-1, namespace: ns2, labels: {kubernetes.io/service-name: svc2}}
addressType: IPv4
endpoints:
- {addresses: ["10.180.0.1"], nodeName: test-node}
- {addresses: ["10.180.2.1"], nodeName: node2}
ports:
- {name: http, port: 80, protocol: TCP}
- {name: https, port: 8443, protocol: TCP}
- {name: dns-udp, port: 53, protocol: UDP}
- {name: dns-tcp, port: 5353, protocol: TCP}
- {name: dns-sctp, port: 53, protocol: SCTP}
"#;

#[test]
fn cluster_ip_general() {
    let dp = v4(CLUSTER_IP_GENERAL);
    let mut flows = vec![
        flow(
            "simple clusterIP",
            "10.180.0.2",
            "172.30.0.41",
            80,
            "10.180.0.1:80",
            false,
        ),
        flow(
            "hairpin to cluster IP",
            "10.180.0.1",
            "172.30.0.41",
            80,
            "10.180.0.1:80",
            true,
        ),
        flow(
            "clusterIP with multiple endpoints",
            "10.180.0.2",
            "172.30.0.42",
            80,
            "10.180.0.1:80, 10.180.2.1:80",
            false,
        ),
        flow(
            "clusterIP with TargetPort",
            "10.180.0.2",
            "172.30.0.42",
            443,
            "10.180.0.1:8443, 10.180.2.1:8443",
            false,
        ),
        flow(
            "clusterIP with TCP, UDP, and SCTP on same port (TCP)",
            "10.180.0.2",
            "172.30.0.42",
            53,
            "10.180.0.1:5353, 10.180.2.1:5353",
            false,
        ),
        flow(
            "clusterIP with TCP, UDP, and SCTP on same port (UDP)",
            "10.180.0.2",
            "172.30.0.42",
            53,
            "10.180.0.1:53, 10.180.2.1:53",
            false,
        ),
        flow(
            "clusterIP with TCP, UDP, and SCTP on same port (SCTP)",
            "10.180.0.2",
            "172.30.0.42",
            53,
            "10.180.0.1:53, 10.180.2.1:53",
            false,
        ),
        flow(
            "TCP-only port does not match UDP traffic",
            "10.180.0.2",
            "172.30.0.42",
            80,
            "REJECT",
            false,
        ),
        flow(
            "svc1 does not accept svc2's ports",
            "10.180.0.2",
            "172.30.0.41",
            443,
            "REJECT",
            false,
        ),
        flow(
            "packet to unallocated cluster ip",
            "10.180.0.2",
            "172.30.0.50",
            80,
            "DROP",
            false,
        ),
        // Not upstream rows: traffic from outside the pod network is masqueraded.
        flow(
            "node to clusterIP",
            "192.168.0.2",
            "172.30.0.41",
            80,
            "10.180.0.1:80",
            true,
        ),
        flow(
            "external to clusterIP",
            "203.0.113.2",
            "172.30.0.41",
            80,
            "10.180.0.1:80",
            true,
        ),
        flow(
            "outside the service CIDR is untouched",
            "10.180.0.2",
            "8.8.8.8",
            80,
            "",
            false,
        ),
    ];
    flows[5].proto = Protocol::Udp;
    flows[6].proto = Protocol::Sctp;
    flows[7].proto = Protocol::Udp;
    run_flows(dp.as_ref(), &flows);
}

#[test]
fn cluster_ip_reject_and_drop_reasons() {
    let dp = v4(CLUSTER_IP_GENERAL);
    let go = |dst: &str, port: u16| {
        dp.process(
            &packet("10.180.0.2", dst, port, Protocol::Tcp),
            Hook::Prerouting,
            &mut NodeState::default(),
            &mut Chooser::new(1),
            &AllAnswer,
            0,
        )
    };
    assert_eq!(
        go("172.30.0.41", 443).verdict,
        Verdict::Reject {
            reason: DropReason::UnknownPort
        }
    );
    assert_eq!(
        go("172.30.0.50", 80).verdict,
        Verdict::Drop {
            reason: DropReason::UnallocatedClusterIp
        }
    );
    // The walk for a plain ClusterIP connection: firewall-check (1 rule + 1
    // map lookup), services (1 rule + 1 lookup), the service chain (masq rule
    // + numgen rule + its map), endpoint chain (2 rules), then filter-forward
    // (2 jumps, each into a 1-rule chain with a lookup or set test) and
    // nat-postrouting → masquerading.
    let out = go("172.30.0.41", 80);
    assert_eq!(
        out.verdict,
        Verdict::Dnat {
            endpoint: "10.180.0.1:80".parse().unwrap()
        }
    );
    let chains: Vec<&str> = out.steps.iter().map(|s| s.table_chain.as_str()).collect();
    assert!(chains.contains(&"map service-ips"), "{chains:?}");
    assert!(out.rules_compared >= 12, "{}", out.rules_compared);
    assert!(out
        .steps
        .iter()
        .any(|s| matches!(s.action, StepAction::Choose { among: 1, .. })));
}

// ------------------------------------------------------------ LoadBalancer

const LOAD_BALANCER: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: svc1, namespace: ns1}
spec:
  type: LoadBalancer
  clusterIP: 172.30.0.41
  loadBalancerSourceRanges: ["192.168.0.0/24", " 203.0.113.0/25"]
  ports: [{name: p80, port: 80, protocol: TCP, nodePort: 3001}]
status:
  loadBalancer:
    ingress: [{ip: 1.2.3.4}, {ip: 5.6.7.8}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: svc1-1, namespace: ns1, labels: {kubernetes.io/service-name: svc1}}
addressType: IPv4
endpoints:
- {addresses: ["10.180.0.1"], nodeName: test-node}
ports: [{name: p80, port: 80, protocol: TCP}]
"#;

#[test]
fn load_balancer_source_ranges() {
    let dp = v4(LOAD_BALANCER);
    run_flows(
        dp.as_ref(),
        &[
            flow(
                "pod to cluster IP",
                "10.0.0.2",
                "172.30.0.41",
                80,
                "10.180.0.1:80",
                false,
            ),
            flow(
                "external to nodePort",
                "203.0.113.2",
                "192.168.0.2",
                3001,
                "10.180.0.1:80",
                true,
            ),
            flow(
                "nodePort bypasses LoadBalancerSourceRanges",
                "203.0.113.130",
                "192.168.0.2",
                3001,
                "10.180.0.1:80",
                true,
            ),
            flow(
                "accepted external to LB1",
                "203.0.113.2",
                "1.2.3.4",
                80,
                "10.180.0.1:80",
                true,
            ),
            flow(
                "accepted external to LB2",
                "203.0.113.2",
                "5.6.7.8",
                80,
                "10.180.0.1:80",
                true,
            ),
            flow(
                "blocked external to LB1",
                "203.0.113.130",
                "1.2.3.4",
                80,
                "DROP",
                false,
            ),
            flow(
                "blocked external to LB2",
                "203.0.113.130",
                "5.6.7.8",
                80,
                "DROP",
                false,
            ),
            flow(
                "pod to LB1 (blocked by LoadBalancerSourceRanges)",
                "10.0.0.2",
                "1.2.3.4",
                80,
                "DROP",
                false,
            ),
            flow(
                "pod to LB2 (blocked by LoadBalancerSourceRanges)",
                "10.0.0.2",
                "5.6.7.8",
                80,
                "DROP",
                false,
            ),
            flow(
                "node to LB1 (allowed by LoadBalancerSourceRanges)",
                "192.168.0.2",
                "1.2.3.4",
                80,
                "10.180.0.1:80",
                true,
            ),
            flow(
                "node to LB2 (allowed by LoadBalancerSourceRanges)",
                "192.168.0.2",
                "5.6.7.8",
                80,
                "10.180.0.1:80",
                true,
            ),
            flow(
                "same node to LB1, SNATted to LB1 (implicitly allowed)",
                "1.2.3.4",
                "1.2.3.4",
                80,
                "10.180.0.1:80",
                true,
            ),
            flow(
                "same node to LB2, SNATted to LB2 (implicitly allowed)",
                "5.6.7.8",
                "5.6.7.8",
                80,
                "10.180.0.1:80",
                true,
            ),
        ],
    );
    let out = dp.process(
        &packet("203.0.113.130", "1.2.3.4", 80, Protocol::Tcp),
        Hook::Prerouting,
        &mut NodeState::default(),
        &mut Chooser::new(1),
        &AllAnswer,
        0,
    );
    assert_eq!(
        out.verdict,
        Verdict::Drop {
            reason: DropReason::SourceRange
        }
    );
    // Dropped in filter-prerouting-pre-dnat, before any DNAT.
    assert!(!out
        .steps
        .iter()
        .any(|s| matches!(s.action, StepAction::Dnat { .. })));
    // nft shows the anonymous set sorted, with the node-allowed LB IPs.
    assert!(
        dp.render_text()
            .contains("ip saddr != { 1.2.3.4, 5.6.7.8, 192.168.0.0/24, 203.0.113.0/25 } drop"),
        "{}",
        dp.render_text()
    );
}

// --------------------------------------------------------------- NodePorts

const NODE_PORTS_V4: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: svc1, namespace: ns1}
spec:
  type: NodePort
  clusterIP: 172.30.0.41
  ports: [{name: p80, port: 80, protocol: TCP, nodePort: 3001}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: svc1-1, namespace: ns1, labels: {kubernetes.io/service-name: svc1}}
addressType: IPv4
endpoints:
- {addresses: ["10.180.0.1"], nodeName: other-node}
- {addresses: ["10.180.2.1"], nodeName: test-node}
ports: [{name: p80, port: 80, protocol: TCP}]
"#;

const NODE_PORTS_V6: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: svc1, namespace: ns1}
spec:
  type: NodePort
  clusterIP: "fd00:10:96::41"
  ipFamilies: [IPv6]
  ports: [{name: p80, port: 80, protocol: TCP, nodePort: 3001}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: svc1-1, namespace: ns1, labels: {kubernetes.io/service-name: svc1}}
addressType: IPv6
endpoints:
- {addresses: ["fd00:10:180::1"], nodeName: other-node}
- {addresses: ["fd00:10:180::2:1"], nodeName: test-node}
ports: [{name: p80, port: 80, protocol: TCP}]
"#;

#[test]
fn node_ports_ipv4_default_is_primary_ip_only() {
    let dp = v4(NODE_PORTS_V4);
    let both = "10.180.0.1:80, 10.180.2.1:80";
    run_flows(
        dp.as_ref(),
        &[
            flow(
                "pod to cluster IP",
                "10.0.0.2",
                "172.30.0.41",
                80,
                both,
                false,
            ),
            flow(
                "external to nodePort",
                "203.0.113.2",
                "192.168.0.2",
                3001,
                both,
                true,
            ),
            flow(
                "node to nodePort",
                "192.168.0.2",
                "192.168.0.2",
                3001,
                both,
                true,
            ),
            flow(
                "secondary nodeIP ignores NodePorts",
                "203.0.113.2",
                "192.168.1.2",
                3001,
                "",
                false,
            ),
            flow(
                "localhost never accepts NodePorts",
                "127.0.0.1",
                "127.0.0.1",
                3001,
                "",
                false,
            ),
        ],
    );
    // Hook::Output: a host process connecting to its own NodePort.
    run_flows_hook(
        dp.as_ref(),
        &[
            flow(
                "host process to nodePort",
                "192.168.0.2",
                "192.168.0.2",
                3001,
                both,
                true,
            ),
            flow(
                "host process to localhost nodePort",
                "127.0.0.1",
                "127.0.0.1",
                3001,
                "",
                false,
            ),
            flow(
                "host process to cluster IP",
                "192.168.0.2",
                "172.30.0.41",
                80,
                both,
                true,
            ),
        ],
        Hook::Output,
    );
    assert!(dp.render_text().contains("\t\telements = { 192.168.0.2 }"));
}

#[test]
fn node_ports_ipv4_multiple_node_port_addresses() {
    let dp = scenario(
        "10.0.0.0/8",
        "nodePortAddresses: [\"192.168.0.0/24\", \"192.168.1.0/24\", \"2001:db8::/64\"]",
        NODE_PORTS_V4,
        IpFamily::V4,
    );
    let both = "10.180.0.1:80, 10.180.2.1:80";
    run_flows(
        dp.as_ref(),
        &[
            flow(
                "external to nodePort",
                "203.0.113.2",
                "192.168.0.2",
                3001,
                both,
                true,
            ),
            flow(
                "external to nodePort on secondary IP",
                "203.0.113.2",
                "192.168.1.2",
                3001,
                both,
                true,
            ),
        ],
    );
}

#[test]
fn node_ports_match_all_uses_fib_and_excludes_localhost() {
    let dp = scenario(
        "10.0.0.0/8",
        "nodePortAddresses: [\"0.0.0.0/0\"]",
        NODE_PORTS_V4,
        IpFamily::V4,
    );
    let text = dp.render_text();
    assert!(text.contains(
        "fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @service-nodeports"
    ), "{text}");
    assert!(!text.contains("set nodeport-ips"));
    let both = "10.180.0.1:80, 10.180.2.1:80";
    run_flows(
        dp.as_ref(),
        &[
            flow(
                "external to nodePort on secondary IP",
                "203.0.113.2",
                "192.168.1.2",
                3001,
                both,
                true,
            ),
            flow(
                "localhost never accepts NodePorts",
                "127.0.0.1",
                "127.0.0.1",
                3001,
                "",
                false,
            ),
        ],
    );
}

#[test]
fn node_ports_ipv6() {
    let dp = scenario("fd00:10::/64", "", NODE_PORTS_V6, IpFamily::V6);
    let both = "[fd00:10:180::1]:80, [fd00:10:180::2:1]:80";
    run_flows(
        dp.as_ref(),
        &[
            flow(
                "pod to cluster IP",
                "fd00:10::2",
                "fd00:10:96::41",
                80,
                both,
                false,
            ),
            flow(
                "external to nodePort",
                "2600:5200::1",
                "2001:db8::1",
                3001,
                both,
                true,
            ),
            flow(
                "node to nodePort",
                "2001:db8::1",
                "2001:db8::1",
                3001,
                both,
                true,
            ),
            flow(
                "secondary nodeIP ignores NodePorts",
                "2600:5200::1",
                "2001:db8:1::2",
                3001,
                "",
                false,
            ),
            flow(
                "unallocated cluster IP",
                "fd00:10::2",
                "fd00:10:96::99",
                80,
                "DROP",
                false,
            ),
        ],
    );
    let text = dp.render_text();
    assert!(text.starts_with("table ip6 kube-proxy {\n"));
    assert!(text.contains("type ipv6_addr . inet_proto . inet_service : verdict"));
    assert!(text.contains("meta l4proto tcp dnat to [fd00:10:180::1]:80"));
    assert!(text
        .contains("ip6 daddr fd00:10:96::41 ip6 saddr != fd00:10::/64 jump mark-for-masquerade"));
    // Colons of an IPv6 endpoint become dots in chain names.
    assert!(
        text.contains("/ns1/svc1/tcp/p80__fd00.10.180..1/80 {")
            || text.contains("-ns1/svc1/tcp/p80__fd00.10.180..1/80 {")
    );
}

#[test]
fn node_ports_ipv6_multiple_node_port_addresses() {
    let dp = scenario(
        "fd00:10::/64",
        "nodePortAddresses: [\"192.168.0.0/24\", \"192.168.1.0/24\", \"2001:db8::/64\", \"2001:db8:1::2/128\"]",
        NODE_PORTS_V6,
        IpFamily::V6,
    );
    let both = "[fd00:10:180::1]:80, [fd00:10:180::2:1]:80";
    run_flows(
        dp.as_ref(),
        &[flow(
            "external to nodePort on secondary IP",
            "2600:5200::1",
            "2001:db8:1::2",
            3001,
            both,
            true,
        )],
    );
}

// ------------------------------------------------- externalTrafficPolicy

fn etp_scenario(policy: &str) -> String {
    format!(
        r#"
apiVersion: v1
kind: Service
metadata: {{name: svc1, namespace: ns1}}
spec:
  type: LoadBalancer
  clusterIP: 172.30.0.41
  externalTrafficPolicy: {policy}
  externalIPs: ["192.168.99.11"]
  ports: [{{name: p80, port: 80, protocol: TCP, nodePort: 3001}}]
status:
  loadBalancer:
    ingress: [{{ip: 1.2.3.4}}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: svc1-1, namespace: ns1, labels: {{kubernetes.io/service-name: svc1}}}}
addressType: IPv4
endpoints:
- {{addresses: ["10.180.0.1"], nodeName: remote-node}}
- {{addresses: ["10.180.2.1"], nodeName: test-node}}
ports: [{{name: p80, port: 80, protocol: TCP}}]
"#
    )
}

#[test]
fn external_traffic_policy_local() {
    let dp = v4(&etp_scenario("Local"));
    let both = "10.180.0.1:80, 10.180.2.1:80";
    let local = "10.180.2.1:80";
    run_flows(
        dp.as_ref(),
        &[
            flow(
                "pod to cluster IP hits both endpoints, unmasqueraded",
                "10.0.0.2",
                "172.30.0.41",
                80,
                both,
                false,
            ),
            flow(
                "pod to external IP hits both endpoints, unmasqueraded",
                "10.0.0.2",
                "192.168.99.11",
                80,
                both,
                false,
            ),
            flow(
                "external to external IP hits only local endpoint, unmasqueraded",
                "203.0.113.2",
                "192.168.99.11",
                80,
                local,
                false,
            ),
            flow(
                "pod to LB IP hits only both endpoints, unmasqueraded",
                "10.0.0.2",
                "1.2.3.4",
                80,
                both,
                false,
            ),
            flow(
                "external to LB IP hits only local endpoint, unmasqueraded",
                "203.0.113.2",
                "1.2.3.4",
                80,
                local,
                false,
            ),
            flow(
                "pod to NodePort hits both endpoints, unmasqueraded",
                "10.0.0.2",
                "192.168.0.2",
                3001,
                both,
                false,
            ),
            flow(
                "external to NodePort hits only local endpoint, unmasqueraded",
                "203.0.113.2",
                "192.168.0.2",
                3001,
                local,
                false,
            ),
            // Not an upstream row: the node itself is short-circuited and masqueraded.
            flow(
                "node to LB IP hits both endpoints, masqueraded",
                "192.168.0.2",
                "1.2.3.4",
                80,
                both,
                true,
            ),
        ],
    );
}

#[test]
fn external_traffic_policy_cluster() {
    let dp = v4(&etp_scenario("Cluster"));
    let both = "10.180.0.1:80, 10.180.2.1:80";
    run_flows(
        dp.as_ref(),
        &[
            flow(
                "pod to cluster IP hits both endpoints, unmasqueraded",
                "10.0.0.2",
                "172.30.0.41",
                80,
                both,
                false,
            ),
            flow(
                "pod to external IP hits both endpoints, masqueraded",
                "10.0.0.2",
                "192.168.99.11",
                80,
                both,
                true,
            ),
            flow(
                "external to external IP hits both endpoints, masqueraded",
                "203.0.113.2",
                "192.168.99.11",
                80,
                both,
                true,
            ),
            flow(
                "pod to LB IP hits both endpoints, masqueraded",
                "10.0.0.2",
                "1.2.3.4",
                80,
                both,
                true,
            ),
            flow(
                "external to LB IP hits both endpoints, masqueraded",
                "203.0.113.2",
                "1.2.3.4",
                80,
                both,
                true,
            ),
            flow(
                "pod to NodePort hits both endpoints, masqueraded",
                "10.0.0.2",
                "192.168.0.2",
                3001,
                both,
                true,
            ),
            flow(
                "external to NodePort hits both endpoints, masqueraded",
                "203.0.113.2",
                "192.168.0.2",
                3001,
                both,
                true,
            ),
        ],
    );
}

#[test]
fn external_traffic_policy_local_without_local_endpoints_drops_external() {
    let yaml = etp_scenario("Local").replace("nodeName: test-node", "nodeName: remote-node");
    let dp = v4(&yaml);
    let go = |src: &str, dst: &str, port: u16| {
        dp.process(
            &packet(src, dst, port, Protocol::Tcp),
            Hook::Prerouting,
            &mut NodeState::default(),
            &mut Chooser::new(3),
            &AllAnswer,
            0,
        )
    };
    let drop = Verdict::Drop {
        reason: DropReason::NoLocalEndpoints,
    };
    assert_eq!(go("203.0.113.2", "192.168.0.2", 3001).verdict, drop);
    assert_eq!(go("203.0.113.2", "1.2.3.4", 80).verdict, drop);
    // Pods are short-circuited to the cluster chain; the ClusterIP still works.
    assert!(matches!(
        go("10.0.0.2", "1.2.3.4", 80).verdict,
        Verdict::Dnat { .. }
    ));
    assert!(matches!(
        go("203.0.113.2", "172.30.0.41", 80).verdict,
        Verdict::Dnat { .. }
    ));
}

// ------------------------------------- TestInternalExternalMasquerade

const INTERNAL_EXTERNAL: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: svc1, namespace: ns1}
spec:
  type: LoadBalancer
  clusterIP: 172.30.0.41
  ports: [{name: p80, port: 80, protocol: TCP, nodePort: 3001}]
status: {loadBalancer: {ingress: [{ip: 1.2.3.4}]}}
---
apiVersion: v1
kind: Service
metadata: {name: svc2, namespace: ns2}
spec:
  type: LoadBalancer
  clusterIP: 172.30.0.42
  externalTrafficPolicy: Local
  healthCheckNodePort: 30002
  ports: [{name: p80, port: 80, protocol: TCP, nodePort: 3002}]
status: {loadBalancer: {ingress: [{ip: 5.6.7.8}]}}
---
apiVersion: v1
kind: Service
metadata: {name: svc3, namespace: ns3}
spec:
  type: LoadBalancer
  clusterIP: 172.30.0.43
  internalTrafficPolicy: Local
  ports: [{name: p80, port: 80, protocol: TCP, nodePort: 3003}]
status: {loadBalancer: {ingress: [{ip: 9.10.11.12}]}}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: svc1-1, namespace: ns1, labels: {kubernetes.io/service-name: svc1}}
addressType: IPv4
endpoints:
- {addresses: ["10.180.0.1"], nodeName: test-node}
- {addresses: ["10.180.1.1"], nodeName: remote}
ports: [{name: p80, port: 80, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: svc2-1, namespace: ns2, labels: {kubernetes.io/service-name: svc2}}
addressType: IPv4
endpoints:
- {addresses: ["10.180.0.2"], nodeName: test-node}
- {addresses: ["10.180.1.2"], nodeName: remote}
ports: [{name: p80, port: 80, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: svc3-1, namespace: ns3, labels: {kubernetes.io/service-name: svc3}}
addressType: IPv4
endpoints:
- {addresses: ["10.180.0.3"], nodeName: test-node}
- {addresses: ["10.180.1.3"], nodeName: remote}
ports: [{name: p80, port: 80, protocol: TCP}]
"#;

fn internal_external_flows() -> Vec<Flow> {
    let s1 = "10.180.0.1:80, 10.180.1.1:80";
    let s2 = "10.180.0.2:80, 10.180.1.2:80";
    let s3 = "10.180.0.3:80, 10.180.1.3:80";
    vec![
        flow("pod to ClusterIP", "10.0.0.2", "172.30.0.41", 80, s1, false),
        flow("pod to NodePort", "10.0.0.2", "192.168.0.2", 3001, s1, true),
        flow("pod to LB", "10.0.0.2", "1.2.3.4", 80, s1, true),
        flow(
            "node to ClusterIP",
            "192.168.0.2",
            "172.30.0.41",
            80,
            s1,
            true,
        ),
        flow(
            "node to NodePort",
            "192.168.0.2",
            "192.168.0.2",
            3001,
            s1,
            true,
        ),
        flow("node to LB", "192.168.0.2", "1.2.3.4", 80, s1, true),
        flow(
            "external to ClusterIP",
            "203.0.113.2",
            "172.30.0.41",
            80,
            s1,
            true,
        ),
        flow(
            "external to NodePort",
            "203.0.113.2",
            "192.168.0.2",
            3001,
            s1,
            true,
        ),
        flow("external to LB", "203.0.113.2", "1.2.3.4", 80, s1, true),
        flow(
            "pod to ClusterIP with eTP:Local",
            "10.0.0.2",
            "172.30.0.42",
            80,
            s2,
            false,
        ),
        flow(
            "pod to NodePort with eTP:Local",
            "10.0.0.2",
            "192.168.0.2",
            3002,
            s2,
            false,
        ),
        flow(
            "pod to LB with eTP:Local",
            "10.0.0.2",
            "5.6.7.8",
            80,
            s2,
            false,
        ),
        flow(
            "node to ClusterIP with eTP:Local",
            "192.168.0.2",
            "172.30.0.42",
            80,
            s2,
            true,
        ),
        flow(
            "node to NodePort with eTP:Local",
            "192.168.0.2",
            "192.168.0.2",
            3001,
            s1,
            true,
        ),
        flow(
            "node to LB with eTP:Local",
            "192.168.0.2",
            "5.6.7.8",
            80,
            s2,
            true,
        ),
        flow(
            "external to ClusterIP with eTP:Local",
            "203.0.113.2",
            "172.30.0.42",
            80,
            s2,
            true,
        ),
        flow(
            "external to NodePort with eTP:Local",
            "203.0.113.2",
            "192.168.0.2",
            3002,
            "10.180.0.2:80",
            false,
        ),
        flow(
            "external to LB with eTP:Local",
            "203.0.113.2",
            "5.6.7.8",
            80,
            "10.180.0.2:80",
            false,
        ),
        flow(
            "pod to ClusterIP with iTP:Local",
            "10.0.0.2",
            "172.30.0.43",
            80,
            "10.180.0.3:80",
            false,
        ),
        flow(
            "pod to NodePort with iTP:Local",
            "10.0.0.2",
            "192.168.0.2",
            3003,
            s3,
            true,
        ),
        flow(
            "pod to LB with iTP:Local",
            "10.0.0.2",
            "9.10.11.12",
            80,
            s3,
            true,
        ),
        flow(
            "node to ClusterIP with iTP:Local",
            "192.168.0.2",
            "172.30.0.43",
            80,
            "10.180.0.3:80",
            true,
        ),
        flow(
            "node to NodePort with iTP:Local",
            "192.168.0.2",
            "192.168.0.2",
            3003,
            s3,
            true,
        ),
        flow(
            "node to LB with iTP:Local",
            "192.168.0.2",
            "9.10.11.12",
            80,
            s3,
            true,
        ),
        flow(
            "external to ClusterIP with iTP:Local",
            "203.0.113.2",
            "172.30.0.43",
            80,
            "10.180.0.3:80",
            true,
        ),
        flow(
            "external to NodePort with iTP:Local",
            "203.0.113.2",
            "192.168.0.2",
            3003,
            s3,
            true,
        ),
        flow(
            "external to LB with iTP:Local",
            "203.0.113.2",
            "9.10.11.12",
            80,
            s3,
            true,
        ),
    ]
}

fn set_row(flows: &mut [Flow], name: &str, out: Option<&'static str>, masq: Option<bool>) {
    let row = flows
        .iter_mut()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no row {name}"));
    if let Some(o) = out {
        row.out = o;
    }
    if let Some(m) = masq {
        row.masq = m;
    }
}

fn no_detector_overrides(flows: &mut [Flow]) {
    // "With no LocalTrafficDetector, all traffic to a ClusterIP is assumed to
    // be from a pod, and thus to not require masquerading."
    for n in [
        "node to ClusterIP",
        "node to ClusterIP with eTP:Local",
        "node to ClusterIP with iTP:Local",
        "external to ClusterIP",
        "external to ClusterIP with eTP:Local",
        "external to ClusterIP with iTP:Local",
    ] {
        set_row(flows, n, None, Some(false));
    }
    // "And there's no eTP:Local short-circuit for pod traffic, so pods get
    // only the local endpoints."
    set_row(
        flows,
        "pod to NodePort with eTP:Local",
        Some("10.180.0.2:80"),
        None,
    );
    set_row(
        flows,
        "pod to LB with eTP:Local",
        Some("10.180.0.2:80"),
        None,
    );
}

fn masquerade_all_overrides(flows: &mut [Flow]) {
    // "All "to ClusterIP" traffic gets masqueraded when using --masquerade-all."
    for n in [
        "pod to ClusterIP",
        "pod to ClusterIP with eTP:Local",
        "pod to ClusterIP with iTP:Local",
    ] {
        set_row(flows, n, None, Some(true));
    }
}

#[test]
fn internal_external_masquerade_normal() {
    let dp = v4(INTERNAL_EXTERNAL);
    run_flows(dp.as_ref(), &internal_external_flows());
}

#[test]
fn internal_external_masquerade_no_local_detector() {
    let dp = scenario("", "", INTERNAL_EXTERNAL, IpFamily::V4);
    let mut flows = internal_external_flows();
    no_detector_overrides(&mut flows);
    run_flows(dp.as_ref(), &flows);
}

#[test]
fn internal_external_masquerade_all() {
    let dp = scenario(
        "10.0.0.0/8",
        "nftables: {masqueradeAll: true}",
        INTERNAL_EXTERNAL,
        IpFamily::V4,
    );
    let mut flows = internal_external_flows();
    masquerade_all_overrides(&mut flows);
    run_flows(dp.as_ref(), &flows);
    assert!(dp
        .render_text()
        .contains("ip daddr 172.30.0.41 jump mark-for-masquerade"));
}

#[test]
fn internal_external_masquerade_all_no_local_detector() {
    let dp = scenario(
        "",
        "nftables: {masqueradeAll: true}",
        INTERNAL_EXTERNAL,
        IpFamily::V4,
    );
    let mut flows = internal_external_flows();
    // As in "masqueradeAll" (every ClusterIP connection is marked, so the
    // no-detector "node/external to ClusterIP unmasqueraded" rows do not
    // apply), plus the no-detector loss of the eTP:Local pod short-circuit.
    masquerade_all_overrides(&mut flows);
    set_row(
        &mut flows,
        "pod to NodePort with eTP:Local",
        Some("10.180.0.2:80"),
        None,
    );
    set_row(
        &mut flows,
        "pod to LB with eTP:Local",
        Some("10.180.0.2:80"),
        None,
    );
    run_flows(dp.as_ref(), &flows);
}

#[test]
fn internal_traffic_policy_local_without_local_endpoints_drops() {
    let yaml = INTERNAL_EXTERNAL.replace(
        "- {addresses: [\"10.180.0.3\"], nodeName: test-node}",
        "- {addresses: [\"10.180.0.3\"], nodeName: remote}",
    );
    let dp = v4(&yaml);
    let out = dp.process(
        &packet("10.0.0.2", "172.30.0.43", 80, Protocol::Tcp),
        Hook::Prerouting,
        &mut NodeState::default(),
        &mut Chooser::new(1),
        &AllAnswer,
        0,
    );
    assert_eq!(
        out.verdict,
        Verdict::Drop {
            reason: DropReason::NoLocalEndpoints
        }
    );
    assert!(dp
        .render_text()
        .contains("172.30.0.43 . tcp . 80 comment \"ns3/svc3:p80\" : drop"));
}

// --------------------------------------------------- terminating endpoints

fn terminating(endpoints: &str) -> String {
    format!(
        r#"
apiVersion: v1
kind: Service
metadata: {{name: svc1, namespace: ns1}}
spec:
  type: LoadBalancer
  clusterIP: 172.30.0.41
  ports: [{{name: "", port: 80, protocol: TCP, nodePort: 30001}}]
status: {{loadBalancer: {{ingress: [{{ip: 1.2.3.4}}]}}}}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: svc1-1, namespace: ns1, labels: {{kubernetes.io/service-name: svc1}}}}
addressType: IPv4
endpoints:
{endpoints}
ports: [{{name: "", port: 80, protocol: TCP}}]
"#
    )
}

#[test]
fn terminating_endpoints_traffic_policy_cluster() {
    let ready = terminating(
        r#"- {addresses: ["10.0.1.1"], nodeName: test-node, conditions: {ready: true, serving: true, terminating: false}}
- {addresses: ["10.0.1.2"], nodeName: test-node, conditions: {ready: true, serving: true, terminating: false}}
- {addresses: ["10.0.1.3"], nodeName: test-node, conditions: {ready: false, serving: true, terminating: true}}
- {addresses: ["10.0.1.4"], nodeName: test-node, conditions: {ready: false, serving: false, terminating: true}}
- {addresses: ["10.0.1.5"], nodeName: host-1, conditions: {ready: true, serving: true, terminating: false}}"#,
    );
    let dp = v4(&ready);
    let three = "10.0.1.1:80, 10.0.1.2:80, 10.0.1.5:80";
    run_flows(
        dp.as_ref(),
        &[
            flow(
                "pod to clusterIP",
                "10.0.0.2",
                "172.30.0.41",
                80,
                three,
                false,
            ),
            flow("external to LB", "203.0.113.2", "1.2.3.4", 80, three, true),
        ],
    );

    let only_terminating = terminating(
        r#"- {addresses: ["10.0.1.1"], nodeName: test-node, conditions: {ready: false, serving: false, terminating: true}}
- {addresses: ["10.0.1.2"], nodeName: test-node, conditions: {ready: false, serving: true, terminating: true}}
- {addresses: ["10.0.1.3"], nodeName: test-node, conditions: {ready: false, serving: true, terminating: true}}
- {addresses: ["10.0.1.4"], nodeName: test-node, conditions: {ready: false, serving: false, terminating: true}}
- {addresses: ["10.0.1.5"], nodeName: host-1, conditions: {ready: false, serving: true, terminating: true}}"#,
    );
    let dp = v4(&only_terminating);
    let fallback = "10.0.1.2:80, 10.0.1.3:80, 10.0.1.5:80";
    run_flows(
        dp.as_ref(),
        &[
            flow(
                "pod to clusterIP",
                "10.0.0.2",
                "172.30.0.41",
                80,
                fallback,
                false,
            ),
            flow(
                "external to LB",
                "203.0.113.2",
                "1.2.3.4",
                80,
                fallback,
                true,
            ),
        ],
    );

    let none = terminating(
        r#"- {addresses: ["10.0.1.1"], nodeName: test-node, conditions: {ready: false, serving: false, terminating: true}}
- {addresses: ["10.0.1.5"], nodeName: host-1, conditions: {ready: false, serving: false, terminating: true}}"#,
    );
    let dp = v4(&none);
    run_flows(
        dp.as_ref(),
        &[
            flow(
                "pod to clusterIP",
                "10.0.0.2",
                "172.30.0.41",
                80,
                "REJECT",
                false,
            ),
            flow(
                "external to LB",
                "203.0.113.2",
                "1.2.3.4",
                80,
                "REJECT",
                false,
            ),
        ],
    );
}

// ------------------------------------------------------------ no endpoints

#[test]
fn no_endpoints_reject() {
    let dp = v4(r#"
apiVersion: v1
kind: Service
metadata: {name: svc1, namespace: ns1}
spec:
  type: LoadBalancer
  clusterIP: 172.30.0.41
  externalIPs: ["192.168.99.11"]
  ports: [{name: p80, port: 80, protocol: TCP, nodePort: 3001}]
status: {loadBalancer: {ingress: [{ip: 1.2.3.4}]}}
"#);
    run_flows(
        dp.as_ref(),
        &[
            flow(
                "pod to cluster IP with no endpoints",
                "10.0.0.2",
                "172.30.0.41",
                80,
                "REJECT",
                false,
            ),
            flow(
                "external to external IP with no endpoints",
                "203.0.113.2",
                "192.168.99.11",
                80,
                "REJECT",
                false,
            ),
            flow(
                "pod to NodePort with no endpoints",
                "10.0.0.2",
                "192.168.0.2",
                3001,
                "REJECT",
                false,
            ),
            flow(
                "external to NodePort with no endpoints",
                "203.0.113.2",
                "192.168.0.2",
                3001,
                "REJECT",
                false,
            ),
            flow(
                "pod to LoadBalancer IP with no endpoints",
                "10.0.0.2",
                "1.2.3.4",
                80,
                "REJECT",
                false,
            ),
            flow(
                "external to LoadBalancer IP with no endpoints",
                "203.0.113.2",
                "1.2.3.4",
                80,
                "REJECT",
                false,
            ),
        ],
    );
    run_flows_hook(
        dp.as_ref(),
        &[
            flow(
                "host to cluster IP with no endpoints",
                "192.168.0.2",
                "172.30.0.41",
                80,
                "REJECT",
                false,
            ),
            flow(
                "host to own NodePort with no endpoints",
                "192.168.0.2",
                "192.168.0.2",
                3001,
                "REJECT",
                false,
            ),
        ],
        Hook::Output,
    );
    let out = dp.process(
        &packet("10.0.0.2", "172.30.0.41", 80, Protocol::Tcp),
        Hook::Prerouting,
        &mut NodeState::default(),
        &mut Chooser::new(1),
        &AllAnswer,
        0,
    );
    assert_eq!(
        out.verdict,
        Verdict::Reject {
            reason: DropReason::NoEndpoints
        }
    );
    let last = out.steps.last().expect("steps");
    assert_eq!(last.table_chain, "chain reject-chain");
    assert_eq!(last.action, StepAction::Reject);
}

// -------------------------------------------------------- session affinity

const AFFINITY: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: svc1, namespace: ns1}
spec:
  clusterIP: 172.30.0.41
  sessionAffinity: ClientIP
  sessionAffinityConfig: {clientIP: {timeoutSeconds: 60}}
  ports: [{name: p80, port: 80, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: svc1-1, namespace: ns1, labels: {kubernetes.io/service-name: svc1}}
addressType: IPv4
endpoints:
- {addresses: ["10.180.0.1"], nodeName: test-node}
- {addresses: ["10.180.0.2"], nodeName: test-node}
- {addresses: ["10.180.0.3"], nodeName: other}
ports: [{name: p80, port: 80, protocol: TCP}]
"#;

#[test]
fn session_affinity_sticks_until_timeout() {
    let dp = v4(AFFINITY);
    let mut state = NodeState::default();
    let mut chooser = Chooser::new(42);
    let pkt = packet("10.0.0.2", "172.30.0.41", 80, Protocol::Tcp);
    let first = dp.process(
        &pkt,
        Hook::Prerouting,
        &mut state,
        &mut chooser,
        &AllAnswer,
        1_000,
    );
    let Verdict::Dnat { endpoint } = first.verdict else {
        panic!("{:?}", first.verdict)
    };
    assert_eq!(first.candidates.len(), 3);
    assert_eq!(state.affinity.len(), 1);
    // Later connections from the same client stick, without numgen.
    for t in [2_000u64, 30_000, 60_999] {
        let again = dp.process(
            &pkt,
            Hook::Prerouting,
            &mut state,
            &mut chooser,
            &AllAnswer,
            t,
        );
        assert_eq!(again.verdict, Verdict::Dnat { endpoint });
        assert_eq!(again.candidates, vec![endpoint]);
        assert!(!again
            .steps
            .iter()
            .any(|s| matches!(s.action, StepAction::Choose { .. })));
        assert!(again
            .steps
            .iter()
            .any(|s| s.rule.starts_with("ip saddr @affinity-")));
    }
    // `update` refreshed the element at 60 999 ms: still alive at 120 998.
    let again = dp.process(
        &pkt,
        Hook::Prerouting,
        &mut state,
        &mut chooser,
        &AllAnswer,
        120_998,
    );
    assert_eq!(again.candidates, vec![endpoint]);
    // After 60 s of silence the element has expired: numgen picks again.
    let later = dp.process(
        &pkt,
        Hook::Prerouting,
        &mut state,
        &mut chooser,
        &AllAnswer,
        181_000,
    );
    assert!(later
        .steps
        .iter()
        .any(|s| matches!(s.action, StepAction::Choose { among: 3, .. })));
    // Another client is independent of the first.
    let other = packet("10.0.0.9", "172.30.0.41", 80, Protocol::Tcp);
    let o = dp.process(
        &other,
        Hook::Prerouting,
        &mut state,
        &mut chooser,
        &AllAnswer,
        181_000,
    );
    assert!(o
        .steps
        .iter()
        .any(|s| matches!(s.action, StepAction::Choose { .. })));
    let text = dp.render_text();
    assert!(text.contains("\t\tflags dynamic,timeout\n\t\ttimeout 1m\n"));
}

// ------------------------------------------------------------------ numgen

#[test]
fn numgen_distribution_is_uniform() {
    let dp = v4(&AFFINITY.replace(
        "  sessionAffinity: ClientIP\n  sessionAffinityConfig: {clientIP: {timeoutSeconds: 60}}\n",
        "",
    ));
    assert!(!dp.render_text().contains("affinity"));
    let mut chooser = Chooser::new(2024);
    let mut counts = std::collections::BTreeMap::new();
    let n = 30_000;
    for i in 0..n {
        let src = format!("10.0.{}.{}", (i / 250) % 250, i % 250 + 1);
        let pkt = packet(&src, "172.30.0.41", 80, Protocol::Tcp);
        let out = dp.process(
            &pkt,
            Hook::Prerouting,
            &mut NodeState::default(),
            &mut chooser,
            &AllAnswer,
            0,
        );
        let Verdict::Dnat { endpoint } = out.verdict else {
            panic!("{:?}", out.verdict)
        };
        *counts.entry(endpoint).or_insert(0u32) += 1;
    }
    assert_eq!(counts.len(), 3);
    for (ep, c) in &counts {
        let share = f64::from(*c) / f64::from(n);
        assert!((share - 1.0 / 3.0).abs() < 0.015, "{ep}: {share}");
    }
}

#[test]
fn same_seed_same_path() {
    let dp = v4(AFFINITY);
    let pkt = packet("10.0.0.2", "172.30.0.41", 80, Protocol::Tcp);
    let a = dp.process(
        &pkt,
        Hook::Prerouting,
        &mut NodeState::default(),
        &mut Chooser::new(5),
        &AllAnswer,
        0,
    );
    let b = dp.process(
        &pkt,
        Hook::Prerouting,
        &mut NodeState::default(),
        &mut Chooser::new(5),
        &AllAnswer,
        0,
    );
    assert_eq!(a, b);
}

#[test]
fn odd_input_never_panics() {
    // A Service with no ClusterIP family match, ports without endpoints, and a
    // packet of every protocol to every address.
    let dp = v4(CLUSTER_IP_GENERAL);
    for dst in [
        "0.0.0.0",
        "255.255.255.255",
        "127.0.0.1",
        "172.30.255.255",
        "192.168.0.2",
    ] {
        for proto in [Protocol::Tcp, Protocol::Udp, Protocol::Sctp] {
            for port in [0u16, 1, 80, 65535] {
                for hook in [Hook::Prerouting, Hook::Output] {
                    let _ = dp.process(
                        &packet("10.0.0.2", dst, port, proto),
                        hook,
                        &mut NodeState::default(),
                        &mut Chooser::new(1),
                        &AllAnswer,
                        u64::MAX,
                    );
                }
            }
        }
    }
    // An IPv6 packet through an IPv4 table is untouched.
    let out = dp.process(
        &packet("fd00::1", "fd00::2", 80, Protocol::Tcp),
        Hook::Prerouting,
        &mut NodeState::default(),
        &mut Chooser::new(1),
        &AllAnswer,
        0,
    );
    assert_eq!(out.verdict, Verdict::None);
}
