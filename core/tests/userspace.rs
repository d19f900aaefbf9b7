//! kube-proxy's legacy userspace mode: rules, listeners and packet flows.

use kpv_core::model::packet::{IpFamily, Packet, Protocol};
use kpv_core::model::Mode;
use kpv_core::net::modes::userspace::{self, UserspaceDataplane};
use kpv_core::net::modes::{
    AllAnswer, Dataplane, DropReason, Hook, NodeOutcome, NodeState, StepAction, Verdict, World,
};
use kpv_core::net::proxy::ProxyInput;
use kpv_core::util::choose::Chooser;
use std::collections::BTreeSet;
use std::net::SocketAddr;

const BASIC: &str = include_str!("../../tests/scenarios/userspace-basic.yaml");

fn input_of(yaml: &str, node: &str, family: IpFamily) -> ProxyInput {
    let (cluster, diags) = kpv_core::Code::ALL.parse(yaml);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    kpv_core::net::proxy::build_input(&cluster, &cluster.endpoint_slices, node, family).unwrap()
}

fn basic() -> UserspaceDataplane {
    userspace::compile(&input_of(BASIC, "node-a", IpFamily::V4))
}

fn sa(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// Backends that do not answer.
struct Down(BTreeSet<SocketAddr>);

impl World for Down {
    fn answers(&self, endpoint: SocketAddr) -> bool {
        !self.0.contains(&endpoint)
    }
}

fn down(eps: &[SocketAddr]) -> Down {
    Down(eps.iter().copied().collect())
}

fn conn(
    dp: &dyn Dataplane,
    state: &mut NodeState,
    world: &dyn World,
    (hook, proto): (Hook, Protocol),
    src: &str,
    dst: &str,
    now_ms: u64,
) -> NodeOutcome {
    let pkt = Packet::new(sa(src), sa(dst), proto);
    dp.process(&pkt, hook, state, &mut Chooser::new(1), world, now_ms)
}

fn tcp(dp: &dyn Dataplane, state: &mut NodeState, src: &str, dst: &str) -> NodeOutcome {
    conn(
        dp,
        state,
        &AllAnswer,
        (Hook::Prerouting, Protocol::Tcp),
        src,
        dst,
        0,
    )
}

fn backends(dp: &UserspaceDataplane, key: &str) -> Vec<SocketAddr> {
    dp.listeners()
        .iter()
        .find(|l| l.key == key)
        .unwrap()
        .backends
        .clone()
}

fn port(dp: &UserspaceDataplane, key: &str) -> u16 {
    dp.proxy_port(key).unwrap()
}

// ---------------------------------------------------------------- rules --

#[test]
fn rules_layout_for_one_service() {
    let dp = basic();
    let text = dp.render_text();
    let p = port(&dp, "default/web:http");
    let c = "-p tcp -m comment --comment \"default/web:http\" -m tcp";
    let expected = [
        "-A PREROUTING -m comment --comment \"handle ClusterIPs; NOTE: this must be before the NodePort rules\" -j KUBE-PORTALS-CONTAINER".to_string(),
        "-A PREROUTING -m addrtype --dst-type LOCAL -m comment --comment \"handle service NodePorts; NOTE: this must be the last rule in the chain\" -j KUBE-NODEPORT-CONTAINER".to_string(),
        "-A OUTPUT -m comment --comment \"handle ClusterIPs; NOTE: this must be before the NodePort rules\" -j KUBE-PORTALS-HOST".to_string(),
        "-A OUTPUT -m addrtype --dst-type LOCAL -m comment --comment \"handle service NodePorts; NOTE: this must be the last rule in the chain\" -j KUBE-NODEPORT-HOST".to_string(),
        "-A INPUT -m comment --comment \"Ensure that non-local NodePort traffic can flow\" -j KUBE-NODEPORT-NON-LOCAL".to_string(),
        // ClusterIP
        format!("-A KUBE-PORTALS-CONTAINER -d 10.0.0.10/32 {c} --dport 80 -j REDIRECT --to-ports {p}"),
        format!("-A KUBE-PORTALS-HOST -d 10.0.0.10/32 {c} --dport 80 -j DNAT --to-destination 10.240.0.5:{p}"),
        // externalIP: three rules
        format!("-A KUBE-PORTALS-CONTAINER -d 203.0.113.9/32 {c} --dport 80 -m physdev ! --physdev-is-in -j REDIRECT --to-ports {p}"),
        format!("-A KUBE-PORTALS-CONTAINER -d 203.0.113.9/32 {c} --dport 80 -m addrtype --dst-type LOCAL -j REDIRECT --to-ports {p}"),
        format!("-A KUBE-PORTALS-HOST -d 203.0.113.9/32 {c} --dport 80 -m addrtype --dst-type LOCAL -j DNAT --to-destination 10.240.0.5:{p}"),
        // LB ingress IP: like a ClusterIP
        format!("-A KUBE-PORTALS-CONTAINER -d 198.51.100.7/32 {c} --dport 80 -j REDIRECT --to-ports {p}"),
        format!("-A KUBE-PORTALS-HOST -d 198.51.100.7/32 {c} --dport 80 -j DNAT --to-destination 10.240.0.5:{p}"),
        // NodePort
        format!("-A KUBE-NODEPORT-CONTAINER {c} --dport 30080 -j REDIRECT --to-ports {p}"),
        format!("-A KUBE-NODEPORT-HOST {c} --dport 30080 -j DNAT --to-destination 10.240.0.5:{p}"),
        // filter: matches the proxy port, not the NodePort
        format!("-A KUBE-NODEPORT-NON-LOCAL {c} --dport {p} -m state --state NEW -j ACCEPT"),
    ];
    let lines: Vec<&str> = text.lines().collect();
    for e in &expected {
        assert_eq!(
            lines.iter().filter(|l| **l == e.as_str()).count(),
            1,
            "missing or repeated: {e}\n{text}"
        );
    }
    let web_rules = lines
        .iter()
        .filter(|l| l.contains("\"default/web:http\""))
        .count();
    assert_eq!(web_rules, 10, "{text}");
    // Order inside KUBE-PORTALS-CONTAINER: ClusterIP, externalIP (physdev, local), LB IP.
    let pos = |s: &str| lines.iter().position(|l| *l == s).unwrap();
    assert!(pos(&expected[5]) < pos(&expected[7]));
    assert!(pos(&expected[7]) < pos(&expected[8]));
    assert!(pos(&expected[8]) < pos(&expected[10]));
    // The portal jumps come first in PREROUTING / OUTPUT.
    assert!(pos(&expected[0]) < pos(&expected[1]));
    assert!(pos(&expected[2]) < pos(&expected[3]));
    // 5 jumps + empty 2 + sticky 2 + web 10 + dns 2.
    assert_eq!(dp.rule_count(), 21);
}

#[test]
fn first_line_labels_the_mode_as_legacy() {
    let text = basic().render_text();
    let first = text.lines().next().unwrap();
    assert!(first.contains("userspace"), "{first}");
    assert!(first.contains("removed in Kubernetes 1.26"), "{first}");
    let json = basic().render_json();
    assert_eq!(json["mode"], "userspace");
    assert_eq!(json["legacy"], "removed in Kubernetes 1.26");
}

/// The Kubernetes "Debug Services" page shows, for a userspace node:
/// ```text
/// -A KUBE-PORTALS-CONTAINER -d 10.0.1.175/32 -p tcp -m comment --comment "default/hostnames:default" -m tcp --dport 80 -j REDIRECT --to-ports 48577
/// -A KUBE-PORTALS-HOST -d 10.0.1.175/32 -p tcp -m comment --comment "default/hostnames:default" -m tcp --dport 80 -j DNAT --to-destination 10.240.115.247:48577
/// ```
/// Same input; the proxy port is the kernel's choice, so it is substituted.
#[test]
fn matches_the_debug_services_documentation() {
    let yaml = r#"
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  addresses: [{type: InternalIP, address: 10.240.115.247}]
---
apiVersion: v1
kind: Service
metadata: {name: hostnames, namespace: default}
spec:
  clusterIP: 10.0.1.175
  ports: [{name: default, port: 80, targetPort: 9376}]
"#;
    let dp = userspace::compile(&input_of(yaml, "n1", IpFamily::V4));
    let p = port(&dp, "default/hostnames:default");
    let got: Vec<String> = dp
        .render_text()
        .lines()
        .filter(|l| l.contains("hostnames"))
        .map(|l| l.replace(&p.to_string(), "48577"))
        .collect();
    assert_eq!(
        got,
        [
            "-A KUBE-PORTALS-CONTAINER -d 10.0.1.175/32 -p tcp -m comment --comment \"default/hostnames:default\" -m tcp --dport 80 -j REDIRECT --to-ports 48577",
            "-A KUBE-PORTALS-HOST -d 10.0.1.175/32 -p tcp -m comment --comment \"default/hostnames:default\" -m tcp --dport 80 -j DNAT --to-destination 10.240.115.247:48577",
            "# default/hostnames:default  TCP    0.0.0.0:48577  (no endpoints: connections are accepted, then closed)",
        ]
    );
}

/// Tokenise an iptables-save rule line (double quotes with backslash escapes).
fn tokens(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut in_tok = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' if quoted => cur.extend(chars.next()),
            '"' => {
                quoted = !quoted;
                in_tok = true;
            }
            ' ' if !quoted => {
                if in_tok {
                    out.push(std::mem::take(&mut cur));
                }
                in_tok = false;
            }
            c => {
                cur.push(c);
                in_tok = true;
            }
        }
    }
    if in_tok {
        out.push(cur);
    }
    out
}

#[test]
fn rendered_text_is_well_formed_iptables_save() {
    for dp in [
        basic(),
        userspace::compile(&input_of(V6, "node-6", IpFamily::V6)),
    ] {
        let text = dp.render_text();
        let mut table = None;
        let mut declared = BTreeSet::new();
        let mut rules = 0;
        let mut in_listeners = false;
        for line in text.lines() {
            if line.starts_with('#') {
                in_listeners |= line == "# kube-proxy (userspace) listeners";
                continue;
            }
            assert!(
                !in_listeners,
                "non-comment line after the listeners: {line}"
            );
            if let Some(t) = line.strip_prefix('*') {
                assert!(table.is_none());
                table = Some(t.to_string());
                declared.clear();
            } else if let Some(decl) = line.strip_prefix(':') {
                declared.insert(decl.split(' ').next().unwrap().to_string());
            } else if line == "COMMIT" {
                assert!(table.take().is_some());
            } else {
                let t = tokens(line);
                assert_eq!(t[0], "-A", "{line}");
                assert!(declared.contains(&t[1]), "{line}");
                let j = t.iter().position(|x| x == "-j").unwrap();
                let target = &t[j + 1];
                if target.starts_with("KUBE-") {
                    assert!(declared.contains(target), "{line}");
                }
                // The comment is one token after unquoting.
                let c = t.iter().position(|x| x == "--comment").unwrap();
                assert!(!t[c + 1].is_empty());
                rules += 1;
            }
        }
        assert!(table.is_none());
        assert_eq!(rules, dp.rule_count());
        // Round trip of the typed rules through the text.
        let from_text: Vec<&str> = text.lines().filter(|l| l.starts_with("-A ")).collect();
        let from_rules: Vec<String> = dp.rules().map(|(_, r)| r).collect();
        assert_eq!(from_text, from_rules);
    }
}

// ---------------------------------------------------------------- flows --

/// One row of a packet-flow table in kube-proxy's test style.
struct Flow {
    name: &'static str,
    hook: Hook,
    proto: Protocol,
    src: &'static str,
    dst: &'static str,
    /// Candidate endpoints, "REJECT", "DROP" or "" (untouched).
    output: &'static str,
}

fn run_flows(dp: &UserspaceDataplane, flows: &[Flow]) {
    for f in flows {
        let mut state = NodeState::default();
        let out = conn(
            dp,
            &mut state,
            &AllAnswer,
            (f.hook, f.proto),
            f.src,
            f.dst,
            0,
        );
        assert!(!out.masquerade, "{}: userspace never masquerades", f.name);
        let got = match &out.verdict {
            Verdict::Proxied { endpoint, source } => {
                assert!(out.candidates.contains(endpoint), "{}", f.name);
                assert_eq!(source.ip(), sa("10.240.0.5:0").ip(), "{}", f.name);
                out.candidates
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
            Verdict::Reject { .. } => "REJECT".into(),
            Verdict::Drop { .. } => "DROP".into(),
            Verdict::None => String::new(),
            v => panic!("{}: unexpected {v:?}", f.name),
        };
        assert_eq!(got, f.output, "{}: {:#?}", f.name, out.steps);
    }
}

#[test]
fn packet_flows() {
    let web = "10.244.1.11:8080, 10.244.2.12:8080, 10.244.2.13:8080";
    let dns = "10.244.1.20:53, 10.244.2.21:53";
    use Hook::{Output, Prerouting};
    use Protocol::{Tcp, Udp};
    #[rustfmt::skip]
    let flows = [
        Flow { name: "pod to ClusterIP", hook: Prerouting, proto: Tcp, src: "10.244.1.50:40000", dst: "10.0.0.10:80", output: web },
        Flow { name: "remote pod to ClusterIP", hook: Prerouting, proto: Tcp, src: "10.244.2.50:40000", dst: "10.0.0.10:80", output: web },
        Flow { name: "host to ClusterIP", hook: Output, proto: Tcp, src: "10.240.0.5:40000", dst: "10.0.0.10:80", output: web },
        Flow { name: "ClusterIP, wrong port", hook: Prerouting, proto: Tcp, src: "10.244.1.50:40000", dst: "10.0.0.10:81", output: "" },
        Flow { name: "ClusterIP, wrong protocol", hook: Prerouting, proto: Udp, src: "10.244.1.50:40000", dst: "10.0.0.10:80", output: "" },
        // externalTrafficPolicy: Local is ignored: remote endpoints too.
        Flow { name: "external to NodePort", hook: Prerouting, proto: Tcp, src: "192.0.2.10:40000", dst: "10.240.0.5:30080", output: web },
        Flow { name: "pod to NodePort", hook: Prerouting, proto: Tcp, src: "10.244.1.50:40000", dst: "10.240.0.5:30080", output: web },
        Flow { name: "host to NodePort", hook: Output, proto: Tcp, src: "10.240.0.5:40000", dst: "10.240.0.5:30080", output: web },
        Flow { name: "host to localhost NodePort", hook: Output, proto: Tcp, src: "127.0.0.1:40000", dst: "127.0.0.1:30080", output: web },
        Flow { name: "pod to other node's NodePort", hook: Prerouting, proto: Tcp, src: "10.244.1.50:40000", dst: "10.240.0.6:30080", output: "" },
        // loadBalancerSourceRanges are ignored: 203.0.113.200 is not in 192.0.2.0/24.
        Flow { name: "LB IP, source outside ranges", hook: Prerouting, proto: Tcp, src: "203.0.113.200:40000", dst: "198.51.100.7:80", output: web },
        Flow { name: "LB IP from host", hook: Output, proto: Tcp, src: "10.240.0.5:40000", dst: "198.51.100.7:80", output: web },
        Flow { name: "external to externalIP", hook: Prerouting, proto: Tcp, src: "192.0.2.10:40000", dst: "203.0.113.9:80", output: web },
        // A Pod behind the bridge matches neither externalIP rule (the IP is
        // not local): the packet is routed on, untouched.
        Flow { name: "pod to externalIP", hook: Prerouting, proto: Tcp, src: "10.244.1.50:40000", dst: "203.0.113.9:80", output: "" },
        Flow { name: "host to externalIP (not local)", hook: Output, proto: Tcp, src: "10.240.0.5:40000", dst: "203.0.113.9:80", output: "" },
        Flow { name: "no endpoints (TCP)", hook: Prerouting, proto: Tcp, src: "10.244.1.50:40000", dst: "10.0.0.20:8080", output: "REJECT" },
        Flow { name: "UDP ClusterIP", hook: Prerouting, proto: Udp, src: "10.244.1.50:40000", dst: "10.0.0.53:53", output: dns },
        Flow { name: "UDP ClusterIP from host", hook: Output, proto: Udp, src: "10.240.0.5:40000", dst: "10.0.0.53:53", output: dns },
        Flow { name: "unrelated", hook: Prerouting, proto: Tcp, src: "10.244.1.50:40000", dst: "8.8.8.8:443", output: "" },
    ];
    run_flows(&basic(), &flows);
}

#[test]
fn terminating_endpoints_are_never_used() {
    // 10.244.2.14 is serving+terminating: no fallback in userspace mode.
    let dp = basic();
    let b = backends(&dp, "default/web:http");
    assert_eq!(b.len(), 3);
    assert!(!b.contains(&sa("10.244.2.14:8080")));
    // Even when it is the only one left.
    let yaml = BASIC.replace(
        "- addresses:\n  - {ip: 10.244.1.11, nodeName: node-a}\n  - {ip: 10.244.2.12, nodeName: node-b}\n  - {ip: 10.244.2.13, nodeName: node-b}\n  notReadyAddresses:\n",
        "- notReadyAddresses:\n  - {ip: 10.244.1.11, nodeName: node-a}\n  - {ip: 10.244.2.12, nodeName: node-b}\n  - {ip: 10.244.2.13, nodeName: node-b}\n",
    );
    assert_ne!(yaml, BASIC);
    let dp = userspace::compile(&input_of(&yaml, "node-a", IpFamily::V4));
    assert!(backends(&dp, "default/web:http").is_empty());
    let out = tcp(
        &dp,
        &mut NodeState::default(),
        "10.244.1.50:1",
        "10.0.0.10:80",
    );
    assert_eq!(
        out.verdict,
        Verdict::Reject {
            reason: DropReason::NoEndpoints
        }
    );
}

#[test]
fn clusterip_path_steps() {
    let dp = basic();
    let p = port(&dp, "default/web:http");
    let out = tcp(
        &dp,
        &mut NodeState::default(),
        "10.244.1.50:40000",
        "10.0.0.10:80",
    );
    let chains: Vec<&str> = out.steps.iter().map(|s| s.table_chain.as_str()).collect();
    assert_eq!(
        chains,
        [
            "nat PREROUTING",
            "nat KUBE-PORTALS-CONTAINER",
            "filter INPUT",
            "filter KUBE-NODEPORT-NON-LOCAL",
            "kube-proxy process",
            "kube-proxy process",
            "kube-proxy process",
        ]
    );
    assert_eq!(
        out.steps[1].action,
        StepAction::Redirect {
            to: SocketAddr::new(sa("10.240.0.5:0").ip(), p)
        }
    );
    // web is the 3rd service port in PORTALS-CONTAINER (empty, sticky, web).
    assert_eq!(out.steps[1].compared, 3);
    // The NON-LOCAL ACCEPT matches the proxy port for ClusterIP traffic too.
    assert_eq!(out.steps[3].action, StepAction::Accept);
    assert!(matches!(
        out.steps[6].action,
        StepAction::Connect { answered: true, .. }
    ));
    assert!(out.steps[6]
        .rule
        .contains("the backend sees the node's address"));
    assert_eq!(out.rules_compared, 1 + 3 + 1 + 1);
    // Every iptables step points at its own line.
    let text = dp.render_text();
    let lines: Vec<&str> = text.lines().collect();
    for s in &out.steps {
        if let Some(l) = s.line {
            if s.table_chain != "kube-proxy process" {
                assert_eq!(lines[l], s.rule);
            } else {
                assert!(lines[l].contains("default/web:http"), "{}", lines[l]);
            }
        }
    }
}

#[test]
fn host_traffic_is_dnated_to_the_host_ip() {
    let dp = basic();
    let p = port(&dp, "default/web:http");
    let mut state = NodeState::default();
    let out = conn(
        &dp,
        &mut state,
        &AllAnswer,
        (Hook::Output, Protocol::Tcp),
        "10.240.0.5:40000",
        "10.0.0.10:80",
        0,
    );
    let dnat = out
        .steps
        .iter()
        .find(|s| s.table_chain == "nat KUBE-PORTALS-HOST")
        .unwrap();
    assert_eq!(
        dnat.action,
        StepAction::Dnat {
            to: SocketAddr::new(sa("10.240.0.5:0").ip(), p)
        }
    );
    let out = conn(
        &dp,
        &mut state,
        &AllAnswer,
        (Hook::Prerouting, Protocol::Tcp),
        "192.0.2.1:40000",
        "10.240.0.5:30080",
        0,
    );
    let np = out
        .steps
        .iter()
        .find(|s| s.table_chain == "nat KUBE-NODEPORT-CONTAINER")
        .unwrap();
    assert_eq!(
        np.action,
        StepAction::Redirect {
            to: SocketAddr::new(sa("10.240.0.5:0").ip(), p)
        }
    );
    // The portal chain was walked to its end first.
    assert!(out
        .steps
        .iter()
        .any(|s| s.table_chain == "nat KUBE-PORTALS-CONTAINER" && s.action == StepAction::Return));
}

// ------------------------------------------------------- load balancing --

fn endpoint_of(out: &NodeOutcome) -> SocketAddr {
    match out.verdict {
        Verdict::Proxied { endpoint, .. } => endpoint,
        ref v => panic!("not proxied: {v:?}"),
    }
}

#[test]
fn round_robin_cycles_exactly_over_three_backends() {
    let dp = basic();
    let b = backends(&dp, "default/web:http");
    assert_eq!(b.len(), 3);
    let mut state = NodeState::default();
    let got: Vec<SocketAddr> = (0..7)
        .map(|i| {
            endpoint_of(&tcp(
                &dp,
                &mut state,
                &format!("192.0.2.{i}:40000"),
                "10.0.0.10:80",
            ))
        })
        .collect();
    assert_eq!(got, [b[0], b[1], b[2], b[0], b[1], b[2], b[0]]);
    assert_eq!(state.rr.get("default/web:http"), Some(&1));
    // The NodePort shares the same listener, hence the same rotation.
    let out = tcp(&dp, &mut state, "192.0.2.9:40000", "10.240.0.5:30080");
    assert_eq!(endpoint_of(&out), b[1]);
}

#[test]
fn rotation_order_is_a_deterministic_shuffle() {
    let a = backends(&basic(), "default/web:http");
    let b = backends(&basic(), "default/web:http");
    assert_eq!(a, b);
    let mut sorted = a.clone();
    sorted.sort_by_key(|e| e.to_string());
    let listed = &basic()
        .listeners()
        .iter()
        .find(|l| l.key == "default/web:http")
        .unwrap()
        .candidates
        .clone();
    assert_eq!(&sorted, listed);
}

#[test]
fn retry_skips_a_backend_that_does_not_answer() {
    let dp = basic();
    let b = backends(&dp, "default/web:http");
    let world = down(&[b[1]]);
    let mut state = NodeState::default();
    let first = conn(
        &dp,
        &mut state,
        &world,
        (Hook::Prerouting, Protocol::Tcp),
        "192.0.2.1:1",
        "10.0.0.10:80",
        0,
    );
    assert_eq!(endpoint_of(&first), b[0]);
    let second = conn(
        &dp,
        &mut state,
        &world,
        (Hook::Prerouting, Protocol::Tcp),
        "192.0.2.2:1",
        "10.0.0.10:80",
        0,
    );
    assert_eq!(endpoint_of(&second), b[2]);
    let connects: Vec<(SocketAddr, bool, &str)> = second
        .steps
        .iter()
        .filter_map(|s| match s.action {
            StepAction::Connect { to, answered } => Some((to, answered, s.rule.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(connects.len(), 2);
    assert_eq!((connects[0].0, connects[0].1), (b[1], false));
    assert!(connects[0].2.contains("timeout 250ms"), "{}", connects[0].2);
    assert_eq!((connects[1].0, connects[1].1), (b[2], true));
    assert!(connects[1].2.contains("timeout 500ms"), "{}", connects[1].2);
    // Each attempt advanced the round robin: the next one starts at b[0].
    let third = conn(
        &dp,
        &mut state,
        &world,
        (Hook::Prerouting, Protocol::Tcp),
        "192.0.2.3:1",
        "10.0.0.10:80",
        0,
    );
    assert_eq!(endpoint_of(&third), b[0]);
    assert_eq!(second.candidates.len(), 3);
}

#[test]
fn all_backends_down_fails_after_four_attempts() {
    let dp = basic();
    let b = backends(&dp, "default/web:http");
    let world = down(&b);
    let mut state = NodeState::default();
    let out = conn(
        &dp,
        &mut state,
        &world,
        (Hook::Prerouting, Protocol::Tcp),
        "192.0.2.1:1",
        "10.0.0.10:80",
        0,
    );
    assert_eq!(
        out.verdict,
        Verdict::Reject {
            reason: DropReason::AllBackendsFailed
        }
    );
    let tried: Vec<(SocketAddr, String)> = out
        .steps
        .iter()
        .filter_map(|s| match s.action {
            StepAction::Connect {
                to,
                answered: false,
            } => Some((to, s.rule.clone())),
            _ => None,
        })
        .collect();
    // Four attempts (EndpointDialTimeouts), cycling: 3 backends, then the first again.
    let eps: Vec<SocketAddr> = tried.iter().map(|t| t.0).collect();
    assert_eq!(eps, [b[0], b[1], b[2], b[0]]);
    for (t, timeout) in tried.iter().zip(["250ms", "500ms", "1s", "2s"]) {
        assert!(t.1.contains(&format!("timeout {timeout}")), "{}", t.1);
    }
    let last = out.steps.last().unwrap();
    assert_eq!(last.action, StepAction::Reject);
    assert!(last.rule.contains("3.75s"), "{}", last.rule);
    assert_eq!(out.candidates.len(), 3);
    assert_eq!(state.rr.get("default/web:http"), Some(&1));
}

#[test]
fn a_single_backend_is_tried_four_times() {
    // proxysocket.go loops over the timeouts, not over the endpoints.
    let yaml = r#"
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  addresses: [{type: InternalIP, address: 10.240.0.5}]
---
apiVersion: v1
kind: Service
metadata: {name: one, namespace: default}
spec:
  clusterIP: 10.0.0.40
  ports: [{port: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: one-1
  namespace: default
  labels: {kubernetes.io/service-name: one}
addressType: IPv4
ports: [{port: 80}]
endpoints:
- addresses: [10.244.2.40]
  conditions: {ready: true}
"#;
    let dp = userspace::compile(&input_of(yaml, "n1", IpFamily::V4));
    let ep = sa("10.244.2.40:80");
    let out = conn(
        &dp,
        &mut NodeState::default(),
        &down(&[ep]),
        (Hook::Prerouting, Protocol::Tcp),
        "192.0.2.1:1",
        "10.0.0.40:80",
        0,
    );
    let tried = out
        .steps
        .iter()
        .filter(|s| matches!(s.action, StepAction::Connect { to, answered: false } if to == ep))
        .count();
    assert_eq!(tried, 4);
    assert_eq!(
        out.verdict,
        Verdict::Reject {
            reason: DropReason::AllBackendsFailed
        }
    );
}

#[test]
fn udp_dials_never_fail() {
    let dp = basic();
    let b = backends(&dp, "kube-system/dns:dns");
    let out = conn(
        &dp,
        &mut NodeState::default(),
        &down(&b),
        (Hook::Prerouting, Protocol::Udp),
        "10.244.1.50:5353",
        "10.0.0.53:53",
        0,
    );
    assert_eq!(endpoint_of(&out), b[0]);
    assert_eq!(
        out.steps
            .iter()
            .filter(|s| matches!(s.action, StepAction::Connect { .. }))
            .count(),
        1
    );
}

#[test]
fn udp_without_endpoints_is_dropped() {
    let yaml = BASIC.replace(
        "- addresses:\n  - {ip: 10.244.1.20, nodeName: node-a}\n  - {ip: 10.244.2.21, nodeName: node-b}\n",
        "- addresses: []\n",
    );
    assert_ne!(yaml, BASIC);
    let dp = userspace::compile(&input_of(&yaml, "node-a", IpFamily::V4));
    assert!(backends(&dp, "kube-system/dns:dns").is_empty());
    let out = conn(
        &dp,
        &mut NodeState::default(),
        &AllAnswer,
        (Hook::Prerouting, Protocol::Udp),
        "10.244.1.50:5353",
        "10.0.0.53:53",
        0,
    );
    assert_eq!(
        out.verdict,
        Verdict::Drop {
            reason: DropReason::NoEndpoints
        }
    );
    // The REDIRECT still happened.
    assert!(out
        .steps
        .iter()
        .any(|s| matches!(s.action, StepAction::Redirect { .. })));
}

#[test]
fn no_endpoints_redirects_then_closes() {
    let dp = basic();
    let out = tcp(
        &dp,
        &mut NodeState::default(),
        "10.244.1.50:40000",
        "10.0.0.20:8080",
    );
    assert_eq!(
        out.verdict,
        Verdict::Reject {
            reason: DropReason::NoEndpoints
        }
    );
    assert!(out
        .steps
        .iter()
        .any(|s| matches!(s.action, StepAction::Redirect { .. })));
    assert!(!out
        .steps
        .iter()
        .any(|s| matches!(s.action, StepAction::Connect { .. })));
    assert!(out.steps.last().unwrap().rule.contains("missing endpoints"));
    assert!(out.candidates.is_empty());
}

#[test]
fn session_affinity_sticks_until_the_timeout() {
    let dp = basic();
    let b = backends(&dp, "default/sticky:http");
    let mut state = NodeState::default();
    let at = |state: &mut NodeState, src: &str, ms: u64| {
        endpoint_of(&conn(
            &dp,
            state,
            &AllAnswer,
            (Hook::Prerouting, Protocol::Tcp),
            src,
            "10.0.0.30:80",
            ms,
        ))
    };
    assert_eq!(at(&mut state, "10.244.1.50:1000", 0), b[0]);
    assert_eq!(at(&mut state, "10.244.1.60:1000", 0), b[1]);
    // Same client IP, other port: sticks (the key is the IP only).
    assert_eq!(at(&mut state, "10.244.1.50:2000", 30_000), b[0]);
    // Sliding: last use at 30s, so 89.999s is 59s idle: still sticks.
    assert_eq!(at(&mut state, "10.244.1.50:3000", 89_999), b[0]);
    // int(60s idle) is not < 60: expired; the round robin goes on (b[2]).
    assert_eq!(at(&mut state, "10.244.1.50:4000", 149_999), b[2]);
    assert_eq!(
        state
            .affinity
            .get(&("default/sticky:http".to_string(), sa("10.244.1.50:0").ip())),
        Some(&(b[2], 149_999))
    );
    // Affinity steps say so.
    let out = conn(
        &dp,
        &mut state,
        &AllAnswer,
        (Hook::Prerouting, Protocol::Tcp),
        "10.244.1.50:5000",
        "10.0.0.30:80",
        150_000,
    );
    assert!(out.steps.iter().any(|s| matches!(&s.action, StepAction::Choose { how, .. } if how.starts_with("session affinity"))));
}

#[test]
fn affinity_is_reset_after_a_failed_dial() {
    let dp = basic();
    let b = backends(&dp, "default/sticky:http");
    let mut state = NodeState::default();
    let go = |state: &mut NodeState, world: &dyn World| {
        conn(
            &dp,
            state,
            world,
            (Hook::Prerouting, Protocol::Tcp),
            "10.244.1.50:1",
            "10.0.0.30:80",
            1000,
        )
    };
    assert_eq!(endpoint_of(&go(&mut state, &AllAnswer)), b[0]);
    // b[0] stops answering: first attempt is the sticky b[0], then the round robin (b[1]).
    let world = down(&[b[0]]);
    let out = go(&mut state, &world);
    assert_eq!(endpoint_of(&out), b[1]);
    let hows: Vec<&str> = out
        .steps
        .iter()
        .filter_map(|s| match &s.action {
            StepAction::Choose { how, .. } => Some(how.as_str()),
            _ => None,
        })
        .collect();
    assert!(hows[0].starts_with("session affinity"), "{hows:?}");
    assert!(hows[1].starts_with("round robin"), "{hows:?}");
    // The record now points at b[1].
    assert_eq!(endpoint_of(&go(&mut state, &world)), b[1]);
}

#[test]
fn changed_endpoints_reset_the_round_robin() {
    let dp = basic();
    let b = backends(&dp, "default/web:http");
    let mut state = NodeState::default();
    tcp(&dp, &mut state, "192.0.2.1:1", "10.0.0.10:80");
    assert_eq!(state.rr.get("default/web:http"), Some(&1));
    // Same set again: no reset.
    let dp2 = basic();
    assert_eq!(
        endpoint_of(&tcp(&dp2, &mut state, "192.0.2.1:1", "10.0.0.10:80")),
        b[1]
    );
    // One endpoint removed: new shuffle, index reset to 0.
    let yaml = BASIC.replace("{ip: 10.244.2.13,", "{ip: 10.244.2.99,");
    assert_ne!(yaml, BASIC);
    let dp3 = userspace::compile(&input_of(&yaml, "node-a", IpFamily::V4));
    let b3 = backends(&dp3, "default/web:http");
    assert_eq!(
        endpoint_of(&tcp(&dp3, &mut state, "192.0.2.1:1", "10.0.0.10:80")),
        b3[0]
    );
}

// ---------------------------------------------------------- proxy ports --

#[test]
fn proxy_ports_are_deterministic_and_distinct() {
    let a = basic();
    let b = basic();
    let mut seen = BTreeSet::new();
    for l in a.listeners() {
        let p = l.proxy_port.unwrap();
        assert_eq!(b.proxy_port(&l.key), Some(p));
        assert!((userspace::EPHEMERAL_LOW..=userspace::EPHEMERAL_HIGH).contains(&p));
        if l.protocol == Protocol::Tcp {
            assert_eq!(p % 2, 1, "TCP listeners get odd ports");
        }
        assert!(seen.insert((l.protocol, p)));
    }
    // A port depends on its own name, not on the other Services.
    let yaml = format!(
        "{BASIC}---\napiVersion: v1\nkind: Service\nmetadata: {{name: another, namespace: aaa}}\nspec:\n  clusterIP: 10.0.0.99\n  ports: [{{port: 1}}]\n"
    );
    let c = userspace::compile(&input_of(&yaml, "node-a", IpFamily::V4));
    assert!(c.proxy_port("aaa/another").is_some());
    for l in a.listeners() {
        assert_eq!(c.proxy_port(&l.key), l.proxy_port, "{}", l.key);
    }
}

#[test]
fn sctp_is_not_proxied() {
    let yaml = r#"
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  addresses: [{type: InternalIP, address: 10.240.0.5}]
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: default}
spec:
  clusterIP: 10.0.0.50
  ports: [{name: x, port: 9, protocol: SCTP}]
"#;
    let dp = userspace::compile(&input_of(yaml, "n1", IpFamily::V4));
    assert_eq!(dp.rule_count(), 5);
    assert!(dp
        .render_text()
        .contains("SCTP is not supported for user space proxy"));
    let out = conn(
        &dp,
        &mut NodeState::default(),
        &AllAnswer,
        (Hook::Prerouting, Protocol::Sctp),
        "10.244.1.5:1",
        "10.0.0.50:9",
        0,
    );
    assert_eq!(out.verdict, Verdict::None);
}

// ----------------------------------------------------------------- IPv6 --

const V6: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: node-6}
spec:
  podCIDR: fd00:244:1::/64
status:
  addresses: [{type: InternalIP, address: "fd00::5"}]
---
apiVersion: v1
kind: Service
metadata: {name: web6, namespace: default}
spec:
  type: NodePort
  ipFamilies: [IPv6]
  clusterIP: "fd00:10::10"
  externalIPs: ["2001:db8::9"]
  ports: [{name: http, port: 80, nodePort: 30081}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web6-1
  namespace: default
  labels: {kubernetes.io/service-name: web6}
addressType: IPv6
ports: [{name: http, port: 8080}]
endpoints:
- addresses: ["fd00:244:1::11"]
  conditions: {ready: true}
- addresses: ["fd00:244:2::12"]
  conditions: {ready: true}
"#;

#[test]
fn ipv6() {
    let dp = userspace::compile(&input_of(V6, "node-6", IpFamily::V6));
    let p = port(&dp, "default/web6:http");
    let text = dp.render_text();
    assert!(text.contains(&format!("-A KUBE-PORTALS-CONTAINER -d fd00:10::10/128 -p tcp -m comment --comment \"default/web6:http\" -m tcp --dport 80 -j REDIRECT --to-ports {p}")), "{text}");
    assert!(
        text.contains(&format!("-j DNAT --to-destination [fd00::5]:{p}")),
        "{text}"
    );
    assert!(text.contains(&format!("[::]:{p}")), "{text}");
    let out = conn(
        &dp,
        &mut NodeState::default(),
        &AllAnswer,
        (Hook::Prerouting, Protocol::Tcp),
        "[fd00:244:1::50]:40000",
        "[fd00:10::10]:80",
        0,
    );
    let Verdict::Proxied { endpoint, source } = out.verdict else {
        panic!("{:?}", out.verdict)
    };
    assert!(out.candidates.contains(&endpoint));
    assert_eq!(source.ip(), sa("[fd00::5]:0").ip());
    assert_eq!(source.port() % 2, 0, "connect() source ports are even");
    let out = conn(
        &dp,
        &mut NodeState::default(),
        &AllAnswer,
        (Hook::Prerouting, Protocol::Tcp),
        "[2001:db8::77]:40000",
        "[fd00::5]:30081",
        0,
    );
    assert_eq!(out.candidates.len(), 2);
    assert!(matches!(out.verdict, Verdict::Proxied { .. }));
}

// ------------------------------------------------------------ snapshots --

#[test]
fn snapshot_basic_text() {
    insta::assert_snapshot!("basic_text", basic().render_text());
}

#[test]
fn snapshot_ipv6_text() {
    let dp = userspace::compile(&input_of(V6, "node-6", IpFamily::V6));
    insta::assert_snapshot!("ipv6_text", dp.render_text());
}

#[test]
fn via_the_shared_compile_entry_point() {
    let input = input_of(BASIC, "node-a", IpFamily::V4);
    let dp =
        kpv_core::net::modes::Compilers::ALL.compile(Mode::Userspace, &input, Default::default());
    assert_eq!(dp.mode(), Mode::Userspace);
    assert_eq!(dp.render_text(), basic().render_text());
    assert_eq!(dp.rule_count(), basic().rule_count());
}

#[test]
fn external_ip_on_the_node_is_held_and_reachable_from_pods() {
    let yaml = r#"
apiVersion: v1
kind: Node
metadata: {name: n1}
spec: {podCIDR: 10.244.1.0/24}
status:
  addresses: [{type: InternalIP, address: 10.240.0.5}]
---
apiVersion: v1
kind: Service
metadata: {name: e, namespace: default}
spec:
  clusterIP: 10.0.0.60
  externalIPs: [10.240.0.5]
  ports: [{port: 8443}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: e-1
  namespace: default
  labels: {kubernetes.io/service-name: e}
addressType: IPv4
ports: [{port: 8443}]
endpoints:
- addresses: [10.244.2.60]
  conditions: {ready: true}
"#;
    let dp = userspace::compile(&input_of(yaml, "n1", IpFamily::V4));
    assert!(dp.render_text().contains("holds open: 10.240.0.5:8443/TCP"));
    // From a Pod behind the bridge the physdev rule does not match, the
    // dst-type LOCAL one does (the 2nd rule of the externalIP).
    let out = tcp(
        &dp,
        &mut NodeState::default(),
        "10.244.1.5:1",
        "10.240.0.5:8443",
    );
    let redirect = out
        .steps
        .iter()
        .find(|s| matches!(s.action, StepAction::Redirect { .. }))
        .unwrap();
    assert!(
        redirect.rule.contains("--dst-type LOCAL"),
        "{}",
        redirect.rule
    );
    assert_eq!(redirect.compared, 3);
    assert_eq!(endpoint_of(&out), sa("10.244.2.60:8443"));
    // From outside, the physdev rule matches first.
    let out = tcp(
        &dp,
        &mut NodeState::default(),
        "192.0.2.1:1",
        "10.240.0.5:8443",
    );
    let redirect = out
        .steps
        .iter()
        .find(|s| matches!(s.action, StepAction::Redirect { .. }))
        .unwrap();
    assert!(redirect.rule.contains("physdev"), "{}", redirect.rule);
}

proptest::proptest! {
    #[test]
    fn process_never_panics_and_stays_consistent(
        src in proptest::prelude::any::<[u8; 4]>(),
        sport in proptest::prelude::any::<u16>(),
        dst_pick in 0usize..8,
        dport in proptest::prelude::any::<u16>(),
        udp in proptest::prelude::any::<bool>(),
        output in proptest::prelude::any::<bool>(),
        down_mask in 0u8..8,
        now in 0u64..1_000_000,
    ) {
        let dsts = ["10.0.0.10", "10.0.0.20", "10.0.0.30", "10.0.0.53", "10.240.0.5", "127.0.0.1", "203.0.113.9", "198.51.100.7"];
        let dp = basic();
        let b = backends(&dp, "default/web:http");
        let world = down(&b.iter().enumerate().filter(|(i, _)| down_mask & (1 << i) != 0).map(|(_, e)| *e).collect::<Vec<_>>());
        let src = SocketAddr::from((src, sport));
        let dst: SocketAddr = format!("{}:{dport}", dsts[dst_pick]).parse().unwrap();
        let proto = if udp { Protocol::Udp } else { Protocol::Tcp };
        let hook = if output { Hook::Output } else { Hook::Prerouting };
        let mut state = NodeState::default();
        let text = dp.render_text();
        let n_lines = text.lines().count();
        for _ in 0..3 {
            let out = dp.process(&Packet::new(src, dst, proto), hook, &mut state, &mut Chooser::new(0), &world, now);
            proptest::prop_assert!(!out.masquerade);
            if let Some(ep) = out.verdict.endpoint() {
                proptest::prop_assert!(out.candidates.contains(&ep));
            }
            for s in &out.steps {
                if let Some(l) = s.line { proptest::prop_assert!(l < n_lines); }
            }
        }
    }
}

#[test]
fn node_port_addresses_are_ignored() {
    let yaml = BASIC.replace(
        "clusterCIDR: 10.244.0.0/16\n",
        "clusterCIDR: 10.244.0.0/16\nnodePortAddresses: [10.240.0.0/24]\n",
    );
    let input = input_of(&yaml, "node-a", IpFamily::V4);
    assert!(input.node_port_ips.is_some());
    let dp = userspace::compile(&input);
    assert!(dp.render_text().contains("# nodePortAddresses is ignored"));
    // 127.0.0.1 is outside nodePortAddresses, yet the NodePort answers there.
    let out = conn(
        &dp,
        &mut NodeState::default(),
        &AllAnswer,
        (Hook::Output, Protocol::Tcp),
        "127.0.0.1:1",
        "127.0.0.1:30080",
        0,
    );
    assert!(matches!(out.verdict, Verdict::Proxied { .. }));
}

#[test]
fn json_has_rules_and_listeners_with_backends() {
    let dp = basic();
    let json = dp.render_json();
    let text = dp.render_text();
    let lines: Vec<&str> = text.lines().collect();
    let mut n = 0;
    for t in json["tables"].as_array().unwrap() {
        for r in t["rules"].as_array().unwrap() {
            let line = r["line"].as_u64().unwrap() as usize;
            assert_eq!(lines[line], r["rule"].as_str().unwrap());
            n += 1;
        }
    }
    assert_eq!(n, dp.rule_count());
    let web = json["listeners"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["service_port"] == "default/web:http")
        .unwrap();
    let b: Vec<String> = backends(&dp, "default/web:http")
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(web["backends"], serde_json::json!(b));
    assert_eq!(web["proxy_port"], port(&dp, "default/web:http"));
    assert_eq!(web["portals"].as_array().unwrap().len(), 4);
    let line = web["line"].as_u64().unwrap() as usize;
    assert!(lines[line].starts_with("# default/web:http "));
}

/// The userspace proxier read v1.Endpoints: an EndpointSlice written by hand
/// gives it no backend (in `kpv rules` and in traces alike), and a userspace
/// scenario that has one is told so.
#[test]
fn endpoint_slices_written_by_hand_are_not_read() {
    let slice = "---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: extra-1, namespace: default, labels: {kubernetes.io/service-name: extra}}
addressType: IPv4
ports: [{name: http, port: 8080}]
endpoints: [{addresses: [10.244.1.77], nodeName: node-a}]
---
apiVersion: v1
kind: Service
metadata: {name: extra, namespace: default}
spec:
  clusterIP: 10.0.0.77
  ports: [{name: http, port: 80, targetPort: 8080}]
";
    let yaml = format!("{BASIC}{slice}");
    let (cluster, diags) = kpv_core::Code::ALL.parse(&yaml);
    assert!(
        diags.iter().any(
            |d| d.message.contains("reads Endpoints, not EndpointSlices")
                && d.message.contains("default/extra-1")
        ),
        "{diags:#?}"
    );
    let slices = kpv_core::net::controller::steady_slices(&cluster);
    let seen = kpv_core::net::proxy::slices_seen_by(Mode::Userspace, &slices);
    assert!(seen.iter().all(|s| s.id.name != "extra-1"));
    assert!(
        seen.iter().any(|s| s.service_name == "web"),
        "mirrored Endpoints stay"
    );
    let sim = kpv_core::net::trace::Sim::new(
        &cluster,
        &slices,
        Mode::Userspace,
        None,
        kpv_core::net::modes::Compilers::ALL,
    );
    let text = sim
        .dataplane("node-a", IpFamily::V4)
        .map(|dp| dp.render_text())
        .unwrap_or_default();
    assert!(!text.contains("10.244.1.77"), "{text}");
    let cmd = kpv_core::cli::parse_args(&["rules", "-", "--mode", "userspace"].map(String::from))
        .expect("args");
    let cli = kpv_core::cli::run(&cmd, std::slice::from_ref(&yaml), cmd.files());
    assert!(!cli.stdout.contains("10.244.1.77"), "{}", cli.stdout);
    // The other modes read it.
    let sim = kpv_core::net::trace::Sim::new(
        &cluster,
        &slices,
        Mode::Iptables,
        None,
        kpv_core::net::modes::Compilers::ALL,
    );
    let text = sim
        .dataplane("node-a", IpFamily::V4)
        .map(|dp| dp.render_text())
        .unwrap_or_default();
    assert!(text.contains("10.244.1.77"));
}

/// Without portRange the kernel's ephemeral range (32768–60999, 28,232
/// ports) holds the listeners: more TCP Service ports than that is said,
/// and the ports past it are shown as not proxied.
#[test]
fn more_service_ports_than_the_ephemeral_range_is_said() {
    let mut yaml = String::from(
        "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: userspace\n",
    );
    // 120 Services of 236 ports each: 28,320 TCP ports, 88 past the range.
    for s in 0..120u32 {
        let ports: Vec<String> = (0..236u32)
            .map(|p| format!("{{name: p{p}, port: {}}}", 1000 + p))
            .collect();
        yaml.push_str(&format!(
            "---\napiVersion: v1\nkind: Service\nmetadata: {{name: s{s}}}\nspec: {{clusterIP: 10.96.{}.{}, ports: [{}]}}\n",
            s / 200,
            s % 200 + 10,
            ports.join(", ")
        ));
    }
    let (cluster, diags) = kpv_core::Code::ALL.parse(&yaml);
    let said: Vec<&str> = diags
        .iter()
        .map(|d| d.message.as_str())
        .filter(|m| m.contains("proxy port per"))
        .collect();
    assert_eq!(
        said,
        ["userspace mode needs a proxy port per TCP Service port (28320), but the kernel's ephemeral port range 32768-60999 has 28232: kube-proxy fails to allocate the rest and those Service ports get no rules"]
    );
    let input = kpv_core::net::proxy::build_input(
        &cluster,
        &kpv_core::net::controller::steady_slices(&cluster),
        &cluster.nodes[0].name,
        IpFamily::V4,
    );
    let Some(input) = input else {
        panic!("no input")
    };
    let dp = kpv_core::net::modes::compile_userspace(&input, Default::default());
    let text = dp.render_text();
    assert_eq!(
        text.matches("not proxied: port allocation failed").count(),
        88,
        "{}",
        &text[..text.len().min(400)]
    );
}
