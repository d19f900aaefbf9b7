//! kube-proxy iptables mode: upstream expected outputs reproduced, packet-flow
//! tables in kube-proxy's own style (pkg/proxy/iptables/proxier_test.go), the
//! probability cascade, session affinity, and golden snapshots.

mod iptables_upstream;

use kpv_core::model::packet::{IpFamily, Packet, Protocol};
use kpv_core::model::Mode;
use kpv_core::net::modes::{AllAnswer, Dataplane, Hook, NodeState, StepAction, Verdict};
use kpv_core::util::choose::Chooser;
use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};

// ---------------------------------------------------------------- helpers

fn compile(yaml: &str, family: IpFamily) -> Box<dyn Dataplane> {
    let (cluster, diags) = kpv_core::Code::ALL.parse(yaml);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    let input =
        kpv_core::net::proxy::build_input(&cluster, &cluster.endpoint_slices, "test-node", family)
            .expect("node test-node has an address of this family");
    kpv_core::net::modes::Compilers::ALL.compile(Mode::Iptables, &input, Default::default())
}

/// NewFakeProxier's node and configuration: node test-node with the fake
/// eth0 addresses, Pod CIDR 10.0.0.0/8 (fd00:10::/64), localhostNodePorts.
fn fake(extra_config: &str, objects: &[String]) -> String {
    let mut docs = vec![
        format!(
            "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n\
             hostnameOverride: test-node\n{extra_config}"
        ),
        "apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata: {name: kubernetes}\n\
         spec: {cidrs: [172.30.0.0/16, fd00:172:30::/112]}"
            .to_string(),
        "apiVersion: v1\nkind: Node\nmetadata: {name: test-node}\nstatus:\n  addresses:\n\
         \x20 - {type: InternalIP, address: 192.168.0.2}\n\
         \x20 - {type: InternalIP, address: 192.168.1.2}\n\
         \x20 - {type: InternalIP, address: 192.168.99.11}\n\
         \x20 - {type: InternalIP, address: 2001:db8::1}\n\
         \x20 - {type: InternalIP, address: 2001:db8:1::2}"
            .to_string(),
    ];
    docs.extend(objects.iter().cloned());
    docs.join("\n---\n")
}

const V4_CONFIG: &str = "clusterCIDR: 10.0.0.0/8\n";
const V6_CONFIG: &str = "clusterCIDR: fd00:10::/64\n";

/// An endpoint of a slice: (ip, nodeName, (ready, serving, terminating)).
type Ep<'a> = (&'a str, Option<&'a str>, Option<(bool, bool, bool)>);

fn slice(ns: &str, svc: &str, family: &str, ports: &[(&str, u16, &str)], eps: &[Ep]) -> String {
    let mut s = format!(
        "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: {svc}-{}\n  \
         namespace: {ns}\n  labels: {{kubernetes.io/service-name: {svc}}}\naddressType: {family}\n\
         endpoints:",
        family.to_lowercase()
    );
    if eps.is_empty() {
        s.push_str(" []");
    }
    for (ip, node, cond) in eps {
        s.push_str(&format!("\n- addresses: [\"{ip}\"]"));
        if let Some(n) = node {
            s.push_str(&format!("\n  nodeName: {n}"));
        }
        if let Some((r, sv, t)) = cond {
            s.push_str(&format!(
                "\n  conditions: {{ready: {r}, serving: {sv}, terminating: {t}}}"
            ));
        }
    }
    s.push_str("\nports:");
    for (name, port, proto) in ports {
        if name.is_empty() {
            s.push_str(&format!("\n- {{port: {port}, protocol: {proto}}}"));
        } else {
            s.push_str(&format!(
                "\n- {{name: {name}, port: {port}, protocol: {proto}}}"
            ));
        }
    }
    s
}

/// One row of a kube-proxy packet-flow table.
struct Flow {
    name: &'static str,
    src: &'static str,
    proto: Protocol,
    dst: &'static str,
    port: u16,
    /// "10.180.0.1:80, 10.180.0.2:80" | "DROP" | "REJECT" | "ACCEPT" | "".
    output: String,
    masq: bool,
}

fn f(
    name: &'static str,
    src: &'static str,
    dst: &'static str,
    port: u16,
    output: &str,
    masq: bool,
) -> Flow {
    Flow {
        name,
        src,
        proto: Protocol::Tcp,
        dst,
        port,
        output: output.to_string(),
        masq,
    }
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap_or_else(|_| panic!("bad test IP {s}"))
}

/// The fake node's addresses: a packet from one of them (or loopback) is sent
/// by a host process (nat OUTPUT); anything else arrives on an interface.
const NODE_IPS: [&str; 5] = [
    "192.168.0.2",
    "192.168.1.2",
    "192.168.99.11",
    "2001:db8::1",
    "2001:db8:1::2",
];

fn hook_for(src: IpAddr) -> Hook {
    if src.is_loopback() || NODE_IPS.iter().any(|n| ip(n) == src) {
        Hook::Output
    } else {
        Hook::Prerouting
    }
}

/// Run a flow table like kube-proxy's `runPacketFlowTests`: the verdict must be
/// the expected one, a DNAT must go to one of the listed endpoints, the
/// candidates must be exactly the listed endpoints, and masquerade must match.
fn run_flows(dp: &dyn Dataplane, family: IpFamily, test: &str, flows: &[Flow]) {
    for (i, fl) in flows.iter().enumerate() {
        let src = ip(fl.src);
        let dst = ip(fl.dst);
        assert_eq!(IpFamily::of(&src), family, "{test}/{}: family", fl.name);
        let pkt = Packet::new(
            SocketAddr::new(src, 40000),
            SocketAddr::new(dst, fl.port),
            fl.proto,
        );
        let mut state = NodeState::default();
        let mut chooser = Chooser::new(1000 + i as u64);
        let out = dp.process(&pkt, hook_for(src), &mut state, &mut chooser, &AllAnswer, 0);
        let ctx = format!("{test}/{}: {out:#?}", fl.name);
        match fl.output.as_str() {
            "" => assert_eq!(out.verdict, Verdict::None, "{ctx}"),
            "DROP" => assert!(matches!(out.verdict, Verdict::Drop { .. }), "{ctx}"),
            "REJECT" => assert!(matches!(out.verdict, Verdict::Reject { .. }), "{ctx}"),
            "ACCEPT" => assert_eq!(out.verdict, Verdict::Accept, "{ctx}"),
            list => {
                let want: BTreeSet<String> = list.split(", ").map(str::to_string).collect();
                let got: BTreeSet<String> = out.candidates.iter().map(|a| a.to_string()).collect();
                assert_eq!(got, want, "{ctx}");
                let Verdict::Dnat { endpoint } = out.verdict else {
                    panic!("expected DNAT: {ctx}")
                };
                assert!(want.contains(&endpoint.to_string()), "{ctx}");
            }
        }
        assert_eq!(out.masquerade, fl.masq, "{ctx}");
        // Every step that names a rule points at that rule's line.
        let text = dp.render_text();
        let lines: Vec<&str> = text.lines().collect();
        for s in &out.steps {
            if let Some(l) = s.line {
                assert_eq!(lines.get(l).copied(), Some(s.rule.as_str()), "{ctx}");
            }
        }
    }
}

fn check_v4(yaml: &str, test: &str, flows: &[Flow]) {
    run_flows(
        compile(yaml, IpFamily::V4).as_ref(),
        IpFamily::V4,
        test,
        flows,
    );
}

fn check_v6(yaml: &str, test: &str, flows: &[Flow]) {
    run_flows(
        compile(yaml, IpFamily::V6).as_ref(),
        IpFamily::V6,
        test,
        flows,
    );
}

fn overall_yaml() -> &'static str {
    include_str!("../../tests/scenarios/iptables-overall.yaml")
}

// ------------------------------------------------ upstream expected outputs

#[test]
fn overall_iptables_rules_match_upstream_exactly() {
    let dp = compile(overall_yaml(), IpFamily::V4);
    assert_eq!(dp.render_text(), iptables_upstream::OVERALL);
    // The nat rule-count metric equals the nat `-A` lines (upstream checks it).
    let text = dp.render_text();
    let a_lines = text.lines().filter(|l| l.starts_with("-A ")).count();
    assert_eq!(dp.rule_count(), a_lines);
}

#[test]
fn bad_ips_match_upstream_exactly() {
    let yaml = fake(
        V4_CONFIG,
        &[
            "apiVersion: v1\nkind: Service\nmetadata: {name: svc1, namespace: ns1}\nspec:\n  \
             type: LoadBalancer\n  clusterIP: 172.30.0.041\n  externalIPs: [192.168.099.022]\n  \
             loadBalancerSourceRanges: [203.0.113.000/025]\n  externalTrafficPolicy: Cluster\n  \
             ports:\n  - {name: p80, port: 80, protocol: TCP, nodePort: 3001}\n\
             status: {loadBalancer: {ingress: [{ip: 1.2.3.004}]}}"
                .to_string(),
            slice(
                "ns1",
                "svc1",
                "IPv4",
                &[("p80", 80, "TCP")],
                &[("10.180.00.001", None, None)],
            ),
        ],
    );
    assert_eq!(
        compile(&yaml, IpFamily::V4).render_text(),
        iptables_upstream::BAD_IPS
    );
}

#[test]
fn repeated_sync_initial_output_matches_upstream_exactly() {
    let yaml = fake(
        V4_CONFIG,
        &[
            "apiVersion: v1\nkind: Service\nmetadata: {name: svc1, namespace: ns1}\nspec:\n  \
             clusterIP: 172.30.0.41\n  ports:\n  - {name: p80, port: 80, protocol: TCP}"
                .to_string(),
            slice(
                "ns1",
                "svc1",
                "IPv4",
                &[("p80", 80, "TCP")],
                &[("10.0.1.1", None, None)],
            ),
            "apiVersion: v1\nkind: Service\nmetadata: {name: svc2, namespace: ns2}\nspec:\n  \
             clusterIP: 172.30.0.42\n  ports:\n  - {name: p8080, port: 8080, protocol: TCP}"
                .to_string(),
            slice(
                "ns2",
                "svc2",
                "IPv4",
                &[("p8080", 8080, "TCP")],
                &[("10.0.2.1", None, None)],
            ),
        ],
    );
    assert_eq!(
        compile(&yaml, IpFamily::V4).render_text(),
        iptables_upstream::REPEATED_INITIAL
    );
}

/// `checkIPTablesRuleJumps`: every jump target is declared, every jumped-to
/// chain has rules (except KUBE-NODEPORTS), every declared chain is used.
#[test]
fn rendered_chains_are_consistent() {
    for (yaml, fam) in [
        (overall_yaml().to_string(), IpFamily::V4),
        (node_ports_yaml(), IpFamily::V6),
    ] {
        let text = compile(&yaml, fam).render_text();
        for table in text.split("COMMIT\n").filter(|t| !t.is_empty()) {
            let declared: BTreeSet<&str> = table
                .lines()
                .filter_map(|l| l.strip_prefix(':'))
                .filter_map(|l| l.split(' ').next())
                .collect();
            let mut with_rules = BTreeSet::new();
            let mut jumped = BTreeSet::new();
            for l in table.lines().filter(|l| l.starts_with("-A ")) {
                let w: Vec<&str> = l.split(' ').collect();
                with_rules.insert(w[1]);
                assert!(declared.contains(w[1]), "undeclared chain in {l}");
                if let Some(p) = w.iter().position(|x| *x == "-j") {
                    let t = w[p + 1];
                    let builtin = [
                        "ACCEPT",
                        "REJECT",
                        "DROP",
                        "MARK",
                        "RETURN",
                        "DNAT",
                        "SNAT",
                        "MASQUERADE",
                    ];
                    if !builtin.contains(&t) {
                        assert!(declared.contains(t), "jump to undeclared {t}");
                        jumped.insert(t);
                    }
                }
            }
            for c in &jumped {
                assert!(
                    *c == "KUBE-NODEPORTS" || with_rules.contains(c),
                    "{c} is empty"
                );
            }
            let top = [
                "KUBE-SERVICES",
                "KUBE-EXTERNAL-SERVICES",
                "KUBE-FORWARD",
                "KUBE-NODEPORTS",
                "KUBE-POSTROUTING",
                "KUBE-MARK-MASQ",
                "KUBE-FIREWALL",
                "KUBE-PROXY-FIREWALL",
            ];
            for c in &declared {
                assert!(
                    top.contains(c) || jumped.contains(c),
                    "{c} is never jumped to"
                );
            }
        }
    }
}

// ------------------------------------------------------------ flow tables

/// TestTracePacket's flows, on TestOverallIPTablesRules' rules.
#[test]
fn trace_packet_static_rules() {
    check_v4(
        overall_yaml(),
        "TestTracePacket",
        &[
            f("no match", "10.0.0.2", "10.0.0.3", 80, "", false),
            f(
                "single endpoint",
                "10.0.0.2",
                "172.30.0.41",
                80,
                "10.180.0.1:80",
                false,
            ),
            f(
                "multiple endpoints",
                "10.0.0.2",
                "172.30.0.44",
                80,
                "10.180.0.4:80, 10.180.0.5:80",
                false,
            ),
            f(
                "LOCAL, KUBE-MARK-MASQ",
                "192.168.0.2",
                "192.168.99.22",
                80,
                "10.180.0.2:80",
                true,
            ),
            f("DROP", "203.0.113.2", "192.168.99.22", 80, "DROP", false),
            f(
                "ACCEPT (NodePortHealthCheck)",
                "192.168.0.2",
                "192.168.0.2",
                30000,
                "ACCEPT",
                false,
            ),
            f("REJECT", "10.0.0.2", "172.30.0.46", 80, "REJECT", false),
        ],
    );
}

#[test]
fn no_endpoints_reject() {
    let yaml = fake(
        V4_CONFIG,
        &[
            "apiVersion: v1\nkind: Service\nmetadata: {name: svc1, namespace: ns1}\nspec:\n  \
           type: LoadBalancer\n  clusterIP: 172.30.0.41\n  externalIPs: [192.168.99.11]\n  \
           ports:\n  - {name: p80, port: 80, protocol: TCP, nodePort: 3001}\n\
           status: {loadBalancer: {ingress: [{ip: 1.2.3.4}]}}"
                .to_string(),
        ],
    );
    check_v4(
        &yaml,
        "TestNoEndpointsReject",
        &[
            f(
                "pod to cluster IP with no endpoints",
                "10.0.0.2",
                "172.30.0.41",
                80,
                "REJECT",
                false,
            ),
            f(
                "external to external IP with no endpoints",
                "203.0.113.2",
                "192.168.99.11",
                80,
                "REJECT",
                false,
            ),
            f(
                "pod to NodePort with no endpoints",
                "10.0.0.2",
                "192.168.0.2",
                3001,
                "REJECT",
                false,
            ),
            f(
                "external to NodePort with no endpoints",
                "203.0.113.2",
                "192.168.0.2",
                3001,
                "REJECT",
                false,
            ),
            f(
                "pod to LoadBalancer IP with no endpoints",
                "10.0.0.2",
                "1.2.3.4",
                80,
                "REJECT",
                false,
            ),
            f(
                "external to LoadBalancer IP with no endpoints",
                "203.0.113.2",
                "1.2.3.4",
                80,
                "REJECT",
                false,
            ),
        ],
    );
}

#[test]
fn cluster_ip_general() {
    let yaml = fake(
        V4_CONFIG,
        &[
            "apiVersion: v1\nkind: Service\nmetadata: {name: svc1, namespace: ns1}\nspec:\n  \
             clusterIP: 172.30.0.41\n  ports:\n  - {name: http, port: 80, protocol: TCP}"
                .to_string(),
            slice(
                "ns1",
                "svc1",
                "IPv4",
                &[("http", 80, "TCP")],
                &[("10.180.0.1", Some("test-node"), None)],
            ),
            "apiVersion: v1\nkind: Service\nmetadata: {name: svc2, namespace: ns2}\nspec:\n  \
             clusterIP: 172.30.0.42\n  ports:\n  - {name: http, port: 80, protocol: TCP}\n  \
             - {name: https, port: 443, protocol: TCP, targetPort: 8443}\n  \
             - {name: dns-udp, port: 53, protocol: UDP}\n  \
             - {name: dns-tcp, port: 53, protocol: TCP, targetPort: 5353}\n  \
             - {name: dns-sctp, port: 53, protocol: SCTP}"
                .to_string(),
            slice(
                "ns2",
                "svc2",
                "IPv4",
                &[
                    ("http", 80, "TCP"),
                    ("https", 8443, "TCP"),
                    ("dns-udp", 53, "UDP"),
                    ("dns-tcp", 5353, "TCP"),
                    ("dns-sctp", 53, "SCTP"),
                ],
                &[
                    ("10.180.0.1", Some("test-node"), None),
                    ("10.180.2.1", Some("node2"), None),
                ],
            ),
        ],
    );
    let mut flows = vec![
        f(
            "simple clusterIP",
            "10.180.0.2",
            "172.30.0.41",
            80,
            "10.180.0.1:80",
            false,
        ),
        f(
            "hairpin to cluster IP",
            "10.180.0.1",
            "172.30.0.41",
            80,
            "10.180.0.1:80",
            true,
        ),
        f(
            "clusterIP with multiple endpoints",
            "10.180.0.2",
            "172.30.0.42",
            80,
            "10.180.0.1:80, 10.180.2.1:80",
            false,
        ),
        f(
            "clusterIP with TargetPort",
            "10.180.0.2",
            "172.30.0.42",
            443,
            "10.180.0.1:8443, 10.180.2.1:8443",
            false,
        ),
        f(
            "clusterIP with TCP, UDP, and SCTP on same port (TCP)",
            "10.180.0.2",
            "172.30.0.42",
            53,
            "10.180.0.1:5353, 10.180.2.1:5353",
            false,
        ),
        f(
            "clusterIP with TCP, UDP, and SCTP on same port (UDP)",
            "10.180.0.2",
            "172.30.0.42",
            53,
            "10.180.0.1:53, 10.180.2.1:53",
            false,
        ),
        f(
            "clusterIP with TCP, UDP, and SCTP on same port (SCTP)",
            "10.180.0.2",
            "172.30.0.42",
            53,
            "10.180.0.1:53, 10.180.2.1:53",
            false,
        ),
        f(
            "TCP-only port does not match UDP traffic",
            "10.180.0.2",
            "172.30.0.42",
            80,
            "",
            false,
        ),
        f(
            "svc1 does not accept svc2's ports",
            "10.180.0.2",
            "172.30.0.41",
            443,
            "",
            false,
        ),
    ];
    flows[5].proto = Protocol::Udp;
    flows[6].proto = Protocol::Sctp;
    flows[7].proto = Protocol::Udp;
    check_v4(&yaml, "TestClusterIPGeneral", &flows);
}

#[test]
fn load_balancer_source_ranges() {
    let yaml = fake(
        V4_CONFIG,
        &[
            "apiVersion: v1\nkind: Service\nmetadata: {name: svc1, namespace: ns1}\nspec:\n  \
             type: LoadBalancer\n  clusterIP: 172.30.0.41\n  externalTrafficPolicy: Cluster\n  \
             loadBalancerSourceRanges: [192.168.0.0/24, \" 203.0.113.0/25\"]\n  \
             ports:\n  - {name: p80, port: 80, protocol: TCP, nodePort: 3001}\n\
             status: {loadBalancer: {ingress: [{ip: 1.2.3.4}, {ip: 5.6.7.8}]}}"
                .to_string(),
            slice(
                "ns1",
                "svc1",
                "IPv4",
                &[("p80", 80, "TCP")],
                &[("10.180.0.1", None, None)],
            ),
        ],
    );
    let ep = "10.180.0.1:80";
    check_v4(
        &yaml,
        "TestLoadBalancer",
        &[
            f(
                "pod to cluster IP",
                "10.0.0.2",
                "172.30.0.41",
                80,
                ep,
                false,
            ),
            f(
                "external to nodePort",
                "203.0.113.2",
                "192.168.0.2",
                3001,
                ep,
                true,
            ),
            f(
                "nodePort bypasses LoadBalancerSourceRanges",
                "203.0.113.130",
                "192.168.0.2",
                3001,
                ep,
                true,
            ),
            f(
                "accepted external to LB1",
                "203.0.113.2",
                "1.2.3.4",
                80,
                ep,
                true,
            ),
            f(
                "accepted external to LB2",
                "203.0.113.2",
                "5.6.7.8",
                80,
                ep,
                true,
            ),
            f(
                "blocked external to LB1",
                "203.0.113.130",
                "1.2.3.4",
                80,
                "DROP",
                false,
            ),
            f(
                "blocked external to LB2",
                "203.0.113.130",
                "5.6.7.8",
                80,
                "DROP",
                false,
            ),
            f(
                "pod to LB1 (blocked by LoadBalancerSourceRanges)",
                "10.0.0.2",
                "1.2.3.4",
                80,
                "DROP",
                false,
            ),
            f(
                "pod to LB2 (blocked by LoadBalancerSourceRanges)",
                "10.0.0.2",
                "5.6.7.8",
                80,
                "DROP",
                false,
            ),
            f(
                "node to LB1 (allowed by LoadBalancerSourceRanges)",
                "192.168.0.2",
                "1.2.3.4",
                80,
                ep,
                true,
            ),
            f(
                "node to LB2 (allowed by LoadBalancerSourceRanges)",
                "192.168.0.2",
                "5.6.7.8",
                80,
                ep,
                true,
            ),
            f(
                "same node to LB1, SNATted to LB1 (implicitly allowed)",
                "1.2.3.4",
                "1.2.3.4",
                80,
                ep,
                true,
            ),
            f(
                "same node to LB2, SNATted to LB2 (implicitly allowed)",
                "5.6.7.8",
                "5.6.7.8",
                80,
                ep,
                true,
            ),
        ],
    );
}

fn node_ports_service(v6: bool, config: &str) -> String {
    let (svc_ip, ep1, ep2, fam) = if v6 {
        (
            "fd00:172:30::41",
            "fd00:10:180::1",
            "fd00:10:180::2:1",
            "IPv6",
        )
    } else {
        ("172.30.0.41", "10.180.0.1", "10.180.2.1", "IPv4")
    };
    fake(
        config,
        &[
            format!(
                "apiVersion: v1\nkind: Service\nmetadata: {{name: svc1, namespace: ns1}}\nspec:\n  \
                 type: NodePort\n  clusterIP: \"{svc_ip}\"\n  \
                 ports:\n  - {{name: p80, port: 80, protocol: TCP, nodePort: 3001}}"
            ),
            slice(
                "ns1",
                "svc1",
                fam,
                &[("p80", 80, "TCP")],
                &[(ep1, None, None), (ep2, Some("test-node"), None)],
            ),
        ],
    )
}

fn node_ports_yaml() -> String {
    node_ports_service(true, V6_CONFIG)
}

/// TestNodePorts: every case of localhostNodePorts × nodePortAddresses × family.
#[test]
fn node_ports() {
    struct Case {
        name: &'static str,
        v6: bool,
        localhost_nodeports: bool,
        node_port_addresses: &'static str,
        allow_alt_node_ip: bool,
        expect_firewall: bool,
    }
    let cases = [
        Case {
            name: "ipv4, localhost-nodeports enabled",
            v6: false,
            localhost_nodeports: true,
            node_port_addresses: "",
            allow_alt_node_ip: true,
            expect_firewall: true,
        },
        Case {
            name: "ipv4, localhost-nodeports disabled",
            v6: false,
            localhost_nodeports: false,
            node_port_addresses: "",
            allow_alt_node_ip: true,
            expect_firewall: false,
        },
        Case {
            name: "ipv4, localhost-nodeports disabled, localhost in nodeport-addresses",
            v6: false,
            localhost_nodeports: false,
            node_port_addresses: "[192.168.0.0/24, 127.0.0.1/32]",
            allow_alt_node_ip: false,
            expect_firewall: false,
        },
        Case {
            name: "ipv4, localhost-nodeports enabled, multiple nodeport-addresses",
            v6: false,
            localhost_nodeports: false,
            node_port_addresses: "[192.168.0.0/24, 192.168.1.0/24, \"2001:db8::/64\"]",
            allow_alt_node_ip: true,
            expect_firewall: false,
        },
        Case {
            name: "ipv6, localhost-nodeports enabled",
            v6: true,
            localhost_nodeports: true,
            node_port_addresses: "",
            allow_alt_node_ip: true,
            expect_firewall: false,
        },
        Case {
            name: "ipv6, localhost-nodeports disabled",
            v6: true,
            localhost_nodeports: false,
            node_port_addresses: "",
            allow_alt_node_ip: true,
            expect_firewall: false,
        },
        Case {
            name: "ipv6, localhost-nodeports disabled, multiple nodeport-addresses",
            v6: true,
            localhost_nodeports: false,
            node_port_addresses: "[192.168.0.0/24, 192.168.1.0/24, \"2001:db8::/64\"]",
            allow_alt_node_ip: false,
            expect_firewall: false,
        },
    ];
    for c in cases {
        let mut config = if c.v6 { V6_CONFIG } else { V4_CONFIG }.to_string();
        config.push_str(&format!(
            "iptables: {{localhostNodePorts: {}}}\n",
            c.localhost_nodeports
        ));
        if !c.node_port_addresses.is_empty() {
            config.push_str(&format!("nodePortAddresses: {}\n", c.node_port_addresses));
        }
        let yaml = node_ports_service(c.v6, &config);
        let (svc, pod, external, node, alt, lo, out) = if c.v6 {
            (
                "fd00:172:30::41",
                "fd00:10::2",
                "2600:5200::1",
                "2001:db8::1",
                "2001:db8:1::2",
                "::1",
                "[fd00:10:180::1]:80, [fd00:10:180::2:1]:80",
            )
        } else {
            (
                "172.30.0.41",
                "10.0.0.2",
                "203.0.113.2",
                "192.168.0.2",
                "192.168.1.2",
                "127.0.0.1",
                "10.180.0.1:80, 10.180.2.1:80",
            )
        };
        let mut flows = vec![
            f("pod to cluster IP", pod, svc, 80, out, false),
            f("external to nodePort", external, node, 3001, out, true),
            f("node to nodePort", node, node, 3001, out, true),
        ];
        if !c.v6 && c.localhost_nodeports {
            flows.push(f(
                "localhost to nodePort gets masqueraded",
                lo,
                lo,
                3001,
                out,
                true,
            ));
        } else {
            flows.push(f(
                "localhost to nodePort is ignored",
                lo,
                lo,
                3001,
                "",
                false,
            ));
        }
        if c.allow_alt_node_ip {
            flows.push(f(
                "external to nodePort on secondary IP",
                external,
                alt,
                3001,
                out,
                true,
            ));
        } else {
            flows.push(f(
                "secondary nodeIP ignores NodePorts",
                external,
                alt,
                3001,
                "",
                false,
            ));
        }
        let family = if c.v6 { IpFamily::V6 } else { IpFamily::V4 };
        if c.v6 {
            check_v6(&yaml, c.name, &flows);
        } else {
            check_v4(&yaml, c.name, &flows);
        }
        let text = compile(&yaml, family).render_text();
        let firewall: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("-A KUBE-FIREWALL "))
            .collect();
        if c.expect_firewall {
            assert_eq!(
                firewall,
                vec![
                    "-A KUBE-FIREWALL -m comment --comment \"block incoming localnet connections\" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP"
                ],
                "{}",
                c.name
            );
        } else {
            assert!(firewall.is_empty(), "{}: {firewall:?}", c.name);
        }
    }
}

#[test]
fn health_check_node_port() {
    let yaml = fake(
        &format!("{V4_CONFIG}nodePortAddresses: [127.0.0.0/8]\n"),
        &[
            "apiVersion: v1\nkind: Service\nmetadata: {name: svc1, namespace: ns1}\nspec:\n  \
           type: LoadBalancer\n  clusterIP: 172.30.0.42\n  externalTrafficPolicy: Local\n  \
           healthCheckNodePort: 30000\n  \
           ports:\n  - {name: p80, port: 80, protocol: TCP, nodePort: 3001}"
                .to_string(),
        ],
    );
    check_v4(
        &yaml,
        "TestHealthCheckNodePort",
        &[f(
            "firewall accepts HealthCheckNodePort",
            "1.2.3.4",
            "192.168.0.2",
            30000,
            "ACCEPT",
            false,
        )],
    );
    // After the Service is deleted the port has no rule.
    check_v4(
        &fake(
            &format!("{V4_CONFIG}nodePortAddresses: [127.0.0.0/8]\n"),
            &[],
        ),
        "TestHealthCheckNodePort (deleted)",
        &[f(
            "HealthCheckNodePort no longer has any rule",
            "1.2.3.4",
            "192.168.0.2",
            30000,
            "",
            false,
        )],
    );
}

fn etp_service(policy: &str) -> String {
    let hc = if policy == "Local" {
        "\n  healthCheckNodePort: 30000"
    } else {
        ""
    };
    fake(
        V4_CONFIG,
        &[
            format!(
                "apiVersion: v1\nkind: Service\nmetadata: {{name: svc1, namespace: ns1}}\nspec:\n  \
                 type: LoadBalancer\n  clusterIP: 172.30.0.41\n  externalTrafficPolicy: {policy}{hc}\n  \
                 externalIPs: [192.168.99.11]\n  \
                 ports:\n  - {{name: p80, port: 80, protocol: TCP, nodePort: 3001}}\n\
                 status: {{loadBalancer: {{ingress: [{{ip: 1.2.3.4}}]}}}}"
            ),
            slice("ns1", "svc1", "IPv4", &[("p80", 80, "TCP")], &[("10.180.0.1", None, None), ("10.180.2.1", Some("test-node"), None)]),
        ],
    )
}

#[test]
fn external_traffic_policy_local() {
    let both = "10.180.0.1:80, 10.180.2.1:80";
    let local = "10.180.2.1:80";
    check_v4(
        &etp_service("Local"),
        "TestExternalTrafficPolicyLocal",
        &[
            f(
                "pod to cluster IP hits both endpoints, unmasqueraded",
                "10.0.0.2",
                "172.30.0.41",
                80,
                both,
                false,
            ),
            f(
                "pod to external IP hits both endpoints, unmasqueraded",
                "10.0.0.2",
                "192.168.99.11",
                80,
                both,
                false,
            ),
            f(
                "external to external IP hits only local endpoint, unmasqueraded",
                "203.0.113.2",
                "192.168.99.11",
                80,
                local,
                false,
            ),
            f(
                "pod to LB IP hits only both endpoints, unmasqueraded",
                "10.0.0.2",
                "1.2.3.4",
                80,
                both,
                false,
            ),
            f(
                "external to LB IP hits only local endpoint, unmasqueraded",
                "203.0.113.2",
                "1.2.3.4",
                80,
                local,
                false,
            ),
            f(
                "pod to NodePort hits both endpoints, unmasqueraded",
                "10.0.0.2",
                "192.168.0.2",
                3001,
                both,
                false,
            ),
            f(
                "external to NodePort hits only local endpoint, unmasqueraded",
                "203.0.113.2",
                "192.168.0.2",
                3001,
                local,
                false,
            ),
        ],
    );
}

#[test]
fn external_traffic_policy_cluster() {
    let both = "10.180.0.1:80, 10.180.2.1:80";
    check_v4(
        &etp_service("Cluster"),
        "TestExternalTrafficPolicyCluster",
        &[
            f(
                "pod to cluster IP hits both endpoints, unmasqueraded",
                "10.0.0.2",
                "172.30.0.41",
                80,
                both,
                false,
            ),
            f(
                "pod to external IP hits both endpoints, masqueraded",
                "10.0.0.2",
                "192.168.99.11",
                80,
                both,
                true,
            ),
            f(
                "external to external IP hits both endpoints, masqueraded",
                "203.0.113.2",
                "192.168.99.11",
                80,
                both,
                true,
            ),
            f(
                "pod to LB IP hits both endpoints, masqueraded",
                "10.0.0.2",
                "1.2.3.4",
                80,
                both,
                true,
            ),
            f(
                "external to LB IP hits both endpoints, masqueraded",
                "203.0.113.2",
                "1.2.3.4",
                80,
                both,
                true,
            ),
            f(
                "pod to NodePort hits both endpoints, masqueraded",
                "10.0.0.2",
                "192.168.0.2",
                3001,
                both,
                true,
            ),
            f(
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
fn internal_traffic_policy() {
    let svc = |itp: &str| {
        format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{name: svc1, namespace: ns1}}\nspec:\n  \
             clusterIP: 172.30.1.1\n  internalTrafficPolicy: {itp}\n  \
             ports:\n  - {{port: 80, protocol: TCP}}"
        )
    };
    type Case<'a> = (&'a str, &'a str, [(&'a str, &'a str); 3], &'a str);
    let cases: [Case; 4] = [
        (
            "iTP Cluster",
            "Cluster",
            [
                ("10.0.1.1", "test-node"),
                ("10.0.1.2", "node1"),
                ("10.0.1.3", "node2"),
            ],
            "10.0.1.1:80, 10.0.1.2:80, 10.0.1.3:80",
        ),
        (
            "iTP Local, one local",
            "Local",
            [
                ("10.0.1.1", "test-node"),
                ("10.0.1.2", "node1"),
                ("10.0.1.3", "node2"),
            ],
            "10.0.1.1:80",
        ),
        (
            "iTP Local, multiple local",
            "Local",
            [
                ("10.0.1.1", "test-node"),
                ("10.0.1.2", "test-node"),
                ("10.0.1.3", "node2"),
            ],
            "10.0.1.1:80, 10.0.1.2:80",
        ),
        (
            "iTP Local, no local",
            "Local",
            [
                ("10.0.1.1", "node0"),
                ("10.0.1.2", "node1"),
                ("10.0.1.3", "node2"),
            ],
            "DROP",
        ),
    ];
    for (name, itp, eps, out) in cases {
        let eps: Vec<Ep> = eps
            .iter()
            .map(|(i, n)| (*i, Some(*n), Some((true, true, false))))
            .collect();
        let yaml = fake(
            V4_CONFIG,
            &[
                svc(itp),
                slice("ns1", "svc1", "IPv4", &[("", 80, "TCP")], &eps),
            ],
        );
        check_v4(
            &yaml,
            name,
            &[f(
                "pod to ClusterIP",
                "10.0.0.2",
                "172.30.1.1",
                80,
                out,
                false,
            )],
        );
        // Endpoints deleted.
        let yaml = fake(V4_CONFIG, &[svc(itp)]);
        check_v4(
            &yaml,
            name,
            &[f(
                "endpoints deleted",
                "10.0.0.2",
                "172.30.1.1",
                80,
                "REJECT",
                false,
            )],
        );
    }
}

/// TestTerminatingEndpointsTrafficPolicyLocal / ...Cluster.
#[test]
fn terminating_endpoints() {
    let t = true;
    let x = false;
    type Case<'a> = (
        &'a str,
        Vec<(&'a str, (bool, bool, bool), &'a str)>,
        &'a str,
        &'a str,
        &'a str,
        bool,
    );
    for etp in ["Local", "Cluster"] {
        let cases: Vec<Case> = if etp == "Local" {
            vec![
                (
                    "ready endpoints exist",
                    vec![
                        ("10.0.1.1", (t, t, x), "test-node"),
                        ("10.0.1.2", (t, t, x), "test-node"),
                        ("10.0.1.3", (x, t, t), "test-node"),
                        ("10.0.1.4", (x, x, t), "test-node"),
                        ("10.0.1.5", (t, t, x), "node-1"),
                    ],
                    "10.0.1.1:80, 10.0.1.2:80, 10.0.1.5:80",
                    "10.0.1.1:80, 10.0.1.2:80",
                    "",
                    false,
                ),
                (
                    "only terminating endpoints exist",
                    vec![
                        ("10.0.1.2", (x, t, t), "test-node"),
                        ("10.0.1.3", (x, t, t), "test-node"),
                        ("10.0.1.4", (x, x, t), "test-node"),
                        ("10.0.1.5", (t, t, x), "node-1"),
                    ],
                    "10.0.1.5:80",
                    "10.0.1.2:80, 10.0.1.3:80",
                    "",
                    false,
                ),
                (
                    "terminating endpoints on remote node",
                    vec![("10.0.1.5", (x, t, t), "node-1")],
                    "10.0.1.5:80",
                    "DROP",
                    "",
                    false,
                ),
                (
                    "no usable endpoints on any node",
                    vec![
                        ("10.0.1.5", (x, x, t), "test-node"),
                        ("10.0.1.5", (x, x, t), "node-1"),
                    ],
                    "REJECT",
                    "REJECT",
                    "",
                    false,
                ),
            ]
        } else {
            vec![
                (
                    "ready endpoints exist",
                    vec![
                        ("10.0.1.1", (t, t, x), "test-node"),
                        ("10.0.1.2", (t, t, x), "test-node"),
                        ("10.0.1.3", (x, t, t), "another-node"),
                        ("10.0.1.4", (x, x, t), "another-node"),
                        ("10.0.1.5", (t, t, x), "another-node"),
                    ],
                    "10.0.1.1:80, 10.0.1.2:80, 10.0.1.5:80",
                    "10.0.1.1:80, 10.0.1.2:80, 10.0.1.5:80",
                    "",
                    true,
                ),
                (
                    "only terminating endpoints exist",
                    vec![
                        ("10.0.1.2", (x, t, t), "test-node"),
                        ("10.0.1.3", (x, t, t), "test-node"),
                        ("10.0.1.4", (x, x, t), "another-node"),
                        ("10.0.1.5", (x, t, t), "another-node"),
                    ],
                    "10.0.1.2:80, 10.0.1.3:80, 10.0.1.5:80",
                    "10.0.1.2:80, 10.0.1.3:80, 10.0.1.5:80",
                    "",
                    true,
                ),
                (
                    "terminating endpoints on remote node",
                    vec![("10.0.1.5", (x, t, t), "node-1")],
                    "10.0.1.5:80",
                    "10.0.1.5:80",
                    "",
                    true,
                ),
                (
                    "no usable endpoints on any node",
                    vec![
                        ("10.0.1.5", (x, x, t), "test-node"),
                        ("10.0.1.5", (x, x, t), "node-1"),
                    ],
                    "REJECT",
                    "REJECT",
                    "",
                    false,
                ),
            ]
        };
        for (name, eps, to_cluster, to_lb, _, lb_masq) in cases {
            let hc = if etp == "Local" {
                "\n  healthCheckNodePort: 30000"
            } else {
                ""
            };
            let yaml = fake(
                V4_CONFIG,
                &[
                    format!(
                        "apiVersion: v1\nkind: Service\nmetadata: {{name: svc1, namespace: ns1}}\nspec:\n  \
                         type: LoadBalancer\n  clusterIP: 172.30.1.1\n  externalTrafficPolicy: {etp}{hc}\n  \
                         ports:\n  - {{port: 80, protocol: TCP}}\n\
                         status: {{loadBalancer: {{ingress: [{{ip: 1.2.3.4}}]}}}}"
                    ),
                    slice(
                        "ns1",
                        "svc1",
                        "IPv4",
                        &[("", 80, "TCP")],
                        &eps.iter().map(|(i, c, n)| (*i, Some(*n), Some(*c))).collect::<Vec<_>>(),
                    ),
                ],
            );
            let test = format!("terminating eTP {etp}: {name}");
            check_v4(
                &yaml,
                &test,
                &[
                    f(
                        "pod to clusterIP",
                        "10.0.0.2",
                        "172.30.1.1",
                        80,
                        to_cluster,
                        false,
                    ),
                    f(
                        "external to LB",
                        "203.0.113.2",
                        "1.2.3.4",
                        80,
                        to_lb,
                        lb_masq,
                    ),
                ],
            );
        }
    }
}

/// TestInternalExternalMasquerade with its four variants.
#[test]
fn internal_external_masquerade() {
    let mut objects = Vec::new();
    for (n, extra) in [
        (1, "externalTrafficPolicy: Cluster"),
        (2, "externalTrafficPolicy: Local"),
        (3, "internalTrafficPolicy: Local"),
    ] {
        objects.push(format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{name: svc{n}, namespace: ns{n}}}\nspec:\n  \
             type: LoadBalancer\n  clusterIP: 172.30.0.4{n}\n  {extra}\n  healthCheckNodePort: 3000{n}\n  \
             ports:\n  - {{name: p80, port: 80, protocol: TCP, nodePort: 300{n}}}\n\
             status: {{loadBalancer: {{ingress: [{{ip: {lb}}}]}}}}",
            lb = ["1.2.3.4", "5.6.7.8", "9.10.11.12"][n - 1]
        ));
        let local = format!("10.180.0.{n}");
        let remote = format!("10.180.1.{n}");
        objects.push(slice(
            &format!("ns{n}"),
            &format!("svc{n}"),
            "IPv4",
            &[("p80", 80, "TCP")],
            &[
                (&local, Some("test-node"), None),
                (&remote, Some("remote"), None),
            ],
        ));
    }
    let b = |n: u8| format!("10.180.0.{n}:80, 10.180.1.{n}:80");
    let base = || {
        vec![
            f(
                "pod to ClusterIP",
                "10.0.0.2",
                "172.30.0.41",
                80,
                &b(1),
                false,
            ),
            f(
                "pod to NodePort",
                "10.0.0.2",
                "192.168.0.2",
                3001,
                &b(1),
                true,
            ),
            f("pod to LB", "10.0.0.2", "1.2.3.4", 80, &b(1), true),
            f(
                "node to ClusterIP",
                "192.168.0.2",
                "172.30.0.41",
                80,
                &b(1),
                true,
            ),
            f(
                "node to NodePort",
                "192.168.0.2",
                "192.168.0.2",
                3001,
                &b(1),
                true,
            ),
            f(
                "localhost to NodePort",
                "127.0.0.1",
                "127.0.0.1",
                3001,
                &b(1),
                true,
            ),
            f("node to LB", "192.168.0.2", "1.2.3.4", 80, &b(1), true),
            f(
                "external to ClusterIP",
                "203.0.113.2",
                "172.30.0.41",
                80,
                &b(1),
                true,
            ),
            f(
                "external to NodePort",
                "203.0.113.2",
                "192.168.0.2",
                3001,
                &b(1),
                true,
            ),
            f("external to LB", "203.0.113.2", "1.2.3.4", 80, &b(1), true),
            f(
                "pod to ClusterIP with eTP:Local",
                "10.0.0.2",
                "172.30.0.42",
                80,
                &b(2),
                false,
            ),
            f(
                "pod to NodePort with eTP:Local",
                "10.0.0.2",
                "192.168.0.2",
                3002,
                &b(2),
                false,
            ),
            f(
                "pod to LB with eTP:Local",
                "10.0.0.2",
                "5.6.7.8",
                80,
                &b(2),
                false,
            ),
            f(
                "node to ClusterIP with eTP:Local",
                "192.168.0.2",
                "172.30.0.42",
                80,
                &b(2),
                true,
            ),
            f(
                "node to NodePort with eTP:Local",
                "192.168.0.2",
                "192.168.0.2",
                3001,
                &b(1),
                true,
            ),
            f(
                "localhost to NodePort with eTP:Local",
                "127.0.0.1",
                "127.0.0.1",
                3002,
                &b(2),
                true,
            ),
            f(
                "node to LB with eTP:Local",
                "192.168.0.2",
                "5.6.7.8",
                80,
                &b(2),
                true,
            ),
            f(
                "external to ClusterIP with eTP:Local",
                "203.0.113.2",
                "172.30.0.42",
                80,
                &b(2),
                true,
            ),
            f(
                "external to NodePort with eTP:Local",
                "203.0.113.2",
                "192.168.0.2",
                3002,
                "10.180.0.2:80",
                false,
            ),
            f(
                "external to LB with eTP:Local",
                "203.0.113.2",
                "5.6.7.8",
                80,
                "10.180.0.2:80",
                false,
            ),
            f(
                "pod to ClusterIP with iTP:Local",
                "10.0.0.2",
                "172.30.0.43",
                80,
                "10.180.0.3:80",
                false,
            ),
            f(
                "pod to NodePort with iTP:Local",
                "10.0.0.2",
                "192.168.0.2",
                3003,
                &b(3),
                true,
            ),
            f(
                "pod to LB with iTP:Local",
                "10.0.0.2",
                "9.10.11.12",
                80,
                &b(3),
                true,
            ),
            f(
                "node to ClusterIP with iTP:Local",
                "192.168.0.2",
                "172.30.0.43",
                80,
                "10.180.0.3:80",
                true,
            ),
            f(
                "node to NodePort with iTP:Local",
                "192.168.0.2",
                "192.168.0.2",
                3003,
                &b(3),
                true,
            ),
            f(
                "localhost to NodePort with iTP:Local",
                "127.0.0.1",
                "127.0.0.1",
                3003,
                &b(3),
                true,
            ),
            f(
                "node to LB with iTP:Local",
                "192.168.0.2",
                "9.10.11.12",
                80,
                &b(3),
                true,
            ),
            f(
                "external to ClusterIP with iTP:Local",
                "203.0.113.2",
                "172.30.0.43",
                80,
                "10.180.0.3:80",
                true,
            ),
            f(
                "external to NodePort with iTP:Local",
                "203.0.113.2",
                "192.168.0.2",
                3003,
                &b(3),
                true,
            ),
            f(
                "external to LB with iTP:Local",
                "203.0.113.2",
                "9.10.11.12",
                80,
                &b(3),
                true,
            ),
        ]
    };
    let no_detector_masq = [
        "node to ClusterIP",
        "node to ClusterIP with eTP:Local",
        "node to ClusterIP with iTP:Local",
        "external to ClusterIP",
        "external to ClusterIP with eTP:Local",
        "external to ClusterIP with iTP:Local",
    ];
    let no_detector_local = ["pod to NodePort with eTP:Local", "pod to LB with eTP:Local"];
    let masq_all = [
        "pod to ClusterIP",
        "pod to ClusterIP with eTP:Local",
        "pod to ClusterIP with iTP:Local",
    ];
    for (variant, config, detector, all) in [
        ("base", V4_CONFIG, true, false),
        ("no LocalTrafficDetector", "", false, false),
        (
            "masqueradeAll",
            "clusterCIDR: 10.0.0.0/8\niptables: {masqueradeAll: true}\n",
            true,
            true,
        ),
        (
            "masqueradeAll, no LocalTrafficDetector",
            "iptables: {masqueradeAll: true}\n",
            false,
            true,
        ),
    ] {
        let mut flows = base();
        for fl in flows.iter_mut() {
            if !detector && !all && no_detector_masq.contains(&fl.name) {
                fl.masq = false;
            }
            if !detector && no_detector_local.contains(&fl.name) {
                fl.output = "10.180.0.2:80".into();
            }
            if all && masq_all.contains(&fl.name) {
                fl.masq = true;
            }
        }
        check_v4(&fake(config, &objects), variant, &flows);
    }
}

// ------------------------------------------------- probability, affinity

#[test]
fn probability_strings_match_compute_probability() {
    use kpv_core::net::modes::iptables::rules::probability;
    for (n, p) in [
        (1, "1.0000000000"),
        (2, "0.5000000000"),
        (3, "0.3333333333"),
        (4, "0.2500000000"),
        (5, "0.2000000000"),
        (7, "0.1428571429"),
        (10, "0.1000000000"),
        (100, "0.0100000000"),
        (1000, "0.0010000000"),
        (10000, "0.0001000000"),
        (100000, "0.0000100000"),
        (100001, "0.0000099999"),
    ] {
        assert_eq!(probability(n), p, "n={n}");
    }
    let mut prev = 0.0f64;
    for n in (2..=100000usize).rev().step_by(997) {
        let v: f64 = probability(n).parse().unwrap_or(-1.0);
        assert!(v > prev, "not increasing at {n}");
        prev = v;
    }
}

#[test]
fn integer_probability_and_threshold_equal_the_float_reading() {
    use kpv_core::net::modes::iptables::rules::{probability, statistic_threshold};
    // The float formatting and parsing iptables and Go do, for comparison;
    // the app computes both in integers.
    let ns = (1..=5000usize)
        .chain((5001..=2_000_000).step_by(7919))
        .chain([
            1 << 20,
            1 << 31,
            (1 << 31) + 1,
            3_000_000_007,
            usize::MAX / 3,
        ]);
    for n in ns {
        let printed = format!("{:.10}", 1.0f64 / n as f64);
        assert_eq!(probability(n), printed, "n={n}");
        let parsed: f64 = printed.parse().unwrap_or(-1.0);
        let stored = (parsed * 2_147_483_648.0) as u64;
        assert_eq!(statistic_threshold(n), stored, "n={n}");
    }
    // Ties at the tenth decimal round half to even, as Go's %0.10f does:
    // 1/2048 = 0.00048828125 exactly, 1/4096 = 0.000244140625.
    assert_eq!(probability(2048), "0.0004882812");
    assert_eq!(probability(4096), "0.0002441406");
    assert_eq!(probability(0), "<bad value>");
}

fn n_endpoint_service(n: usize, affinity: bool) -> String {
    let eps: Vec<String> = (1..=n).map(|i| format!("10.180.0.{i}")).collect();
    let eps: Vec<Ep> = eps.iter().map(|s| (s.as_str(), None, None)).collect();
    let aff = if affinity {
        "\n  sessionAffinity: ClientIP\n  sessionAffinityConfig: {clientIP: {timeoutSeconds: 60}}"
    } else {
        ""
    };
    fake(
        V4_CONFIG,
        &[
            format!(
                "apiVersion: v1\nkind: Service\nmetadata: {{name: svc1, namespace: ns1}}\nspec:\n  \
                 clusterIP: 172.30.0.41{aff}\n  ports:\n  - {{name: p80, port: 80, protocol: TCP}}"
            ),
            slice("ns1", "svc1", "IPv4", &[("p80", 80, "TCP")], &eps),
        ],
    )
}

#[test]
fn probability_cascade_rules_and_distribution() {
    for (n, probs) in [
        (2, vec!["0.5000000000"]),
        (3, vec!["0.3333333333", "0.5000000000"]),
        (4, vec!["0.2500000000", "0.3333333333", "0.5000000000"]),
        (
            5,
            vec![
                "0.2000000000",
                "0.2500000000",
                "0.3333333333",
                "0.5000000000",
            ],
        ),
    ] {
        let text = compile(&n_endpoint_service(n, false), IpFamily::V4).render_text();
        let got: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("-A KUBE-SVC-") && l.contains(" -> "))
            .map(|l| match l.split("--probability ").nth(1) {
                Some(rest) => rest.split(' ').next().unwrap_or(""),
                None => "last",
            })
            .collect();
        let mut want = probs.clone();
        want.push("last");
        assert_eq!(got, want, "n={n}");
    }
    // 30,000 connections from distinct clients to a 3-endpoint Service.
    let dp = compile(&n_endpoint_service(3, false), IpFamily::V4);
    let mut chooser = Chooser::new(42);
    let mut counts = std::collections::BTreeMap::new();
    for i in 0..30_000u32 {
        let src = IpAddr::from([10, 1, (i >> 8) as u8, i as u8]);
        let pkt = Packet::new(
            SocketAddr::new(src, 40000),
            "172.30.0.41:80".parse().unwrap_or_else(|_| unreachable!()),
            Protocol::Tcp,
        );
        let out = dp.process(
            &pkt,
            Hook::Prerouting,
            &mut NodeState::default(),
            &mut chooser,
            &AllAnswer,
            0,
        );
        let ep = out
            .verdict
            .endpoint()
            .map(|e| e.to_string())
            .unwrap_or_default();
        *counts.entry(ep).or_insert(0u32) += 1;
    }
    assert_eq!(counts.len(), 3, "{counts:?}");
    for (ep, c) in &counts {
        assert!(
            (9_600..=10_400).contains(c),
            "{ep}: {c} of 30000 ({counts:?})"
        );
    }
}

#[test]
fn session_affinity_sticks_within_timeout() {
    let dp = compile(&n_endpoint_service(3, true), IpFamily::V4);
    let text = dp.render_text();
    assert!(text.contains("-m recent --name KUBE-SEP-"), "{text}");
    assert!(text.contains("--rcheck --seconds 60 --reap"), "{text}");
    let mut state = NodeState::default();
    let mut chooser = Chooser::new(7);
    let pkt = |client: &str| {
        Packet::new(
            SocketAddr::new(ip(client), 40000),
            "172.30.0.41:80".parse().unwrap_or_else(|_| unreachable!()),
            Protocol::Tcp,
        )
    };
    let mut go = |client: &str, now: u64, state: &mut NodeState| {
        let out = dp.process(
            &pkt(client),
            Hook::Prerouting,
            state,
            &mut chooser,
            &AllAnswer,
            now,
        );
        (out.verdict.endpoint(), out)
    };
    let (first, _) = go("10.0.0.2", 0, &mut state);
    let first = first.expect("DNAT");
    // Within the 60 s timeout the same client always lands on the same endpoint,
    // through the `-m recent --rcheck` rule.
    for t in 1..50u64 {
        let (ep, out) = go("10.0.0.2", t * 1000, &mut state);
        assert_eq!(ep, Some(first), "t={t}s");
        assert!(out
            .steps
            .iter()
            .any(|s| s.rule.contains("--rcheck") && matches!(s.action, StepAction::Jump { .. })));
    }
    // Each connection refreshes the entry (`--set`), so the window slides: after
    // 59 s of silence it still sticks ...
    let (ep, _) = go("10.0.0.2", 49_000 + 59_000, &mut state);
    assert_eq!(ep, Some(first));
    // ... and after more than 60 s of silence the choice is random again: over
    // many clients that expire, some move to another endpoint.
    let mut moved = 0;
    for c in 0..60u8 {
        let client = format!("10.0.9.{c}");
        let (a, _) = go(&client, 1_000_000, &mut state);
        let (b, _) = go(&client, 1_000_000 + 61_000, &mut state);
        let (b2, _) = go(&client, 1_000_000 + 62_000, &mut state);
        assert_eq!(b, b2, "sticks again after re-pick");
        if a != b {
            moved += 1;
        }
    }
    assert!(moved > 10, "only {moved} of 60 clients moved after expiry");
    // `--reap` forgot the first client's expired entry on the way.
    assert!(!state.affinity.keys().any(|(_, c)| *c == ip("10.0.0.2")));
}

// ---------------------------------------------------------- scaling, shape

#[test]
fn rules_compared_grows_linearly_with_services_ahead() {
    let mut objects = Vec::new();
    for i in 0..40u32 {
        objects.push(format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{name: s{i:02}, namespace: ns}}\nspec:\n  \
             clusterIP: 172.30.1.{}\n  ports:\n  - {{name: p80, port: 80, protocol: TCP}}",
            i + 1
        ));
        objects.push(slice(
            "ns",
            &format!("s{i:02}"),
            "IPv4",
            &[("p80", 80, "TCP")],
            &[(&format!("10.180.3.{}", i + 1), None, None)],
        ));
    }
    let dp = compile(&fake(V4_CONFIG, &objects), IpFamily::V4);
    let compared = |k: u32| {
        let pkt = Packet::new(
            "10.0.0.2:40000".parse().unwrap_or_else(|_| unreachable!()),
            SocketAddr::new(IpAddr::from([172, 30, 1, (k + 1) as u8]), 80),
            Protocol::Tcp,
        );
        let out = dp.process(
            &pkt,
            Hook::Prerouting,
            &mut NodeState::default(),
            &mut Chooser::new(1),
            &AllAnswer,
            0,
        );
        let step = out
            .steps
            .iter()
            .find(|s| s.table_chain == "nat KUBE-SERVICES")
            .map(|s| s.compared)
            .unwrap_or(0);
        (step, out.rules_compared)
    };
    let (s0, t0) = compared(0);
    assert_eq!(s0, 1);
    for k in 1..40 {
        let (s, t) = compared(k);
        assert_eq!(s, k as usize + 1, "k={k}");
        assert_eq!(t, t0 + k as usize, "k={k}");
    }
}

#[test]
fn ipv6_rules_use_ip6tables_spelling() {
    let text = compile(&node_ports_yaml(), IpFamily::V6).render_text();
    assert!(
        text.contains("-m addrtype --dst-type LOCAL ! -d ::1/128 -j KUBE-NODEPORTS"),
        "{text}"
    );
    assert!(
        text.contains("-j DNAT --to-destination [fd00:10:180::1]:80"),
        "{text}"
    );
    assert!(
        text.contains("-s fd00:10:180::1 -j KUBE-MARK-MASQ"),
        "{text}"
    );
    assert!(
        text.contains("! -s fd00:10::/64 -j KUBE-MARK-MASQ"),
        "{text}"
    );
    assert!(
        text.contains(":KUBE-SEP-OGYCNMB4EMRUSJ6N - [0:0]"),
        "{text}"
    );
    assert!(!text.contains("KUBE-FIREWALL"), "{text}");
    assert!(!text.contains("127.0.0.0/8"), "{text}");
}

#[test]
fn render_json_mirrors_the_text() {
    let dp = compile(overall_yaml(), IpFamily::V4);
    let text = dp.render_text();
    let lines: Vec<&str> = text.lines().collect();
    let json = dp.render_json();
    let mut n = 0;
    for t in json["tables"].as_array().into_iter().flatten() {
        for c in t["chains"].as_array().into_iter().flatten() {
            for r in c["rules"].as_array().into_iter().flatten() {
                let l = r["line"].as_u64().unwrap_or(u64::MAX) as usize;
                assert_eq!(
                    Some(r["text"].as_str().unwrap_or("")),
                    lines.get(l).copied()
                );
                n += 1;
            }
        }
    }
    assert_eq!(n, dp.rule_count());
}

// ----------------------------------------------------------------- snapshots

#[test]
fn snapshot_overall_trace() {
    let dp = compile(overall_yaml(), IpFamily::V4);
    let pkt = Packet::new(
        "203.0.113.2:40000"
            .parse()
            .unwrap_or_else(|_| unreachable!()),
        "5.6.7.8:80".parse().unwrap_or_else(|_| unreachable!()),
        Protocol::Tcp,
    );
    let out = dp.process(
        &pkt,
        Hook::Prerouting,
        &mut NodeState::default(),
        &mut Chooser::new(3),
        &AllAnswer,
        0,
    );
    let mut s = String::new();
    for st in &out.steps {
        s.push_str(&format!(
            "{:<28} line {:>4} compared {:>2} {:?}\n    {}\n",
            st.table_chain,
            st.line.map(|l| l.to_string()).unwrap_or_else(|| "-".into()),
            st.compared,
            st.action,
            st.rule
        ));
    }
    s.push_str(&format!(
        "verdict {:?}\nmasquerade {}\nrules_compared {}\n",
        out.verdict, out.masquerade, out.rules_compared
    ));
    insta::assert_snapshot!("iptables_overall_trace_lb_sourcerange", s);
}

#[test]
fn snapshot_scenarios() {
    insta::assert_snapshot!(
        "iptables_etp_local",
        compile(&etp_service("Local"), IpFamily::V4).render_text()
    );
    insta::assert_snapshot!(
        "iptables_nodeports_ipv6",
        compile(&node_ports_yaml(), IpFamily::V6).render_text()
    );
    insta::assert_snapshot!(
        "iptables_affinity",
        compile(&n_endpoint_service(3, true), IpFamily::V4).render_text()
    );
}

// ------------------------------------------------ corner cases, robustness

/// iTP=Local and eTP=Local together: kube-proxy's `UsesClusterEndpoints()` is
/// still true (the Service is externally accessible), so Pods and the node
/// reaching the NodePort/LB are short-circuited to the cluster chain, while
/// the ClusterIP only reaches local endpoints.
#[test]
fn both_policies_local() {
    let yaml = fake(
        V4_CONFIG,
        &[
            "apiVersion: v1\nkind: Service\nmetadata: {name: svc1, namespace: ns1}\nspec:\n  \
             type: LoadBalancer\n  clusterIP: 172.30.0.41\n  externalTrafficPolicy: Local\n  \
             internalTrafficPolicy: Local\n  healthCheckNodePort: 30000\n  \
             ports:\n  - {name: p80, port: 80, protocol: TCP, nodePort: 3001}\n\
             status: {loadBalancer: {ingress: [{ip: 1.2.3.4}]}}"
                .to_string(),
            slice(
                "ns1",
                "svc1",
                "IPv4",
                &[("p80", 80, "TCP")],
                &[
                    ("10.180.0.1", None, None),
                    ("10.180.2.1", Some("test-node"), None),
                ],
            ),
        ],
    );
    let both = "10.180.0.1:80, 10.180.2.1:80";
    check_v4(
        &yaml,
        "both policies Local",
        &[
            f(
                "pod to ClusterIP hits only the local endpoint",
                "10.0.0.2",
                "172.30.0.41",
                80,
                "10.180.2.1:80",
                false,
            ),
            f(
                "pod to NodePort is short-circuited to the cluster chain",
                "10.0.0.2",
                "192.168.0.2",
                3001,
                both,
                false,
            ),
            f(
                "node to LB is short-circuited and masqueraded",
                "192.168.0.2",
                "1.2.3.4",
                80,
                both,
                true,
            ),
            f(
                "external to LB hits only the local endpoint",
                "203.0.113.2",
                "1.2.3.4",
                80,
                "10.180.2.1:80",
                false,
            ),
            f(
                "external to the health check port",
                "203.0.113.2",
                "192.168.0.2",
                30000,
                "ACCEPT",
                false,
            ),
        ],
    );
}

/// TestSyncProxyRulesLargeClusterMode: above 1000 endpoints the SVC→SEP and
/// SEP rules lose their comments.
#[test]
fn large_cluster_mode_drops_endpoint_comments() {
    let ips: Vec<String> = (0..1001u32)
        .map(|i| format!("10.0.{}.{}", i / 256, i % 256))
        .collect();
    let eps: Vec<Ep> = ips.iter().map(|s| (s.as_str(), None, None)).collect();
    let yaml = fake(
        V4_CONFIG,
        &[
            "apiVersion: v1\nkind: Service\nmetadata: {name: svc1, namespace: ns1}\nspec:\n  \
             clusterIP: 172.30.0.41\n  ports:\n  - {name: p80, port: 80, protocol: TCP}"
                .to_string(),
            // The API allows at most 1,000 endpoints in one slice (the
            // upstream test builds its one slice without the API server).
            slice("ns1", "svc1", "IPv4", &[("p80", 80, "TCP")], &eps[..1000]),
            slice("ns1", "svc1", "IPv4", &[("p80", 80, "TCP")], &eps[1000..]).replacen(
                "name: svc1-ipv4",
                "name: svc1-ipv4-2",
                1,
            ),
        ],
    );
    let text = compile(&yaml, IpFamily::V4).render_text();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.contains(&"-A KUBE-SEP-DKGQUZGBKLTPAR56 -s 10.0.0.0 -j KUBE-MARK-MASQ"));
    assert!(lines.contains(
        &"-A KUBE-SEP-DKGQUZGBKLTPAR56 -m tcp -p tcp -j DNAT --to-destination 10.0.0.0:80"
    ));
    assert!(lines.contains(&"-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment \"ns1/svc1:p80 cluster IP\" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ"));
    assert!(lines.iter().any(|l| l.starts_with(
        "-A KUBE-SVC-XPGD46QRK7WJZT7O -m statistic --mode random --probability 0.0009990010 "
    )));
}

mod robustness {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// Any packet, either hook: no panic, every step's line is its rule,
        /// a DNAT goes to one of the candidates, rules_compared ≥ the steps'.
        #[test]
        fn any_packet_walks_cleanly(
            src in prop::sample::select(vec!["10.0.0.2", "10.180.0.3", "192.168.0.2", "127.0.0.1", "203.0.113.2", "203.0.113.130", "1.2.3.4", "::1"]),
            dst in prop::sample::select(vec!["172.30.0.41", "172.30.0.44", "172.30.0.45", "172.30.0.46", "192.168.0.2", "192.168.99.22", "192.168.99.33", "1.2.3.4", "5.6.7.8", "127.0.0.1", "10.0.0.9", "fd00::1"]),
            port in prop::sample::select(vec![80u16, 443, 3001, 3002, 3003, 30000, 0, 65535]),
            proto in prop::sample::select(vec![Protocol::Tcp, Protocol::Udp, Protocol::Sctp]),
            output in any::<bool>(),
            seed in any::<u64>(),
            now in any::<u64>(),
        ) {
            let dp = compile(overall_yaml(), IpFamily::V4);
            let text = dp.render_text();
            let lines: Vec<&str> = text.lines().collect();
            let pkt = Packet::new(SocketAddr::new(ip(src), 1234), SocketAddr::new(ip(dst), port), proto);
            let hook = if output { Hook::Output } else { Hook::Prerouting };
            let mut state = NodeState::default();
            let out = dp.process(&pkt, hook, &mut state, &mut Chooser::new(seed), &AllAnswer, now);
            for s in &out.steps {
                if let Some(l) = s.line {
                    prop_assert_eq!(lines.get(l).copied(), Some(s.rule.as_str()));
                }
            }
            if let Verdict::Dnat { endpoint } = out.verdict {
                prop_assert!(out.candidates.contains(&endpoint));
            }
            prop_assert!(out.rules_compared >= out.steps.iter().filter(|s| s.line.is_some()).count());
        }
    }
}
