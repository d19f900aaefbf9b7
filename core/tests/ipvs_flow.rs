//! IPVS mode end to end: virtual-server layout, packet flows in kube-proxy's
//! table style, persistence, the JSON contract and golden `render_text`.

use kpv_core::model::packet::{IpFamily, Packet, Protocol};
use kpv_core::model::{Mode, Scheduler};
use kpv_core::net::modes::{
    self, AllAnswer, CompileOptions, ConnCount, Dataplane, DropReason, Hook, NodeState, StepAction,
    Verdict,
};
use kpv_core::net::proxy::ProxyInput;
use kpv_core::util::choose::Chooser;
use std::net::SocketAddr;

fn input_of(text: &str, node: &str, family: IpFamily) -> ProxyInput {
    let (cluster, diags) = kpv_core::Code::ALL.parse(text);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    kpv_core::net::proxy::build_input(&cluster, &cluster.endpoint_slices, node, family).unwrap()
}

fn scenario(file: &str, family: IpFamily) -> ProxyInput {
    let text = std::fs::read_to_string(format!("../tests/scenarios/{file}")).unwrap();
    input_of(&text, "node-a", family)
}

fn ipvs(input: &ProxyInput, scheduler: Option<Scheduler>) -> Box<dyn Dataplane> {
    modes::Compilers::ALL.compile(Mode::Ipvs, input, CompileOptions { scheduler })
}

fn sa(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn run(
    dp: &dyn Dataplane,
    state: &mut NodeState,
    hook: Hook,
    proto: Protocol,
    src: &str,
    dst: &str,
    now_ms: u64,
) -> modes::NodeOutcome {
    let p = Packet::new(sa(src), sa(dst), proto);
    dp.process(&p, hook, state, &mut Chooser::new(1), &AllAnswer, now_ms)
}

/// kube-proxy's test style: endpoint list, "REJECT", "DROP" or "" (no rule).
fn result(o: &modes::NodeOutcome) -> String {
    match &o.verdict {
        Verdict::Dnat { endpoint } => endpoint.to_string(),
        Verdict::Reject { .. } => "REJECT".into(),
        Verdict::Drop { .. } => "DROP".into(),
        Verdict::Accept => "ACCEPT".into(),
        _ => String::new(),
    }
}

struct Case {
    name: &'static str,
    hook: Hook,
    proto: Protocol,
    src: &'static str,
    dst: &'static str,
    output: &'static str,
    masq: bool,
}

const PRE: Hook = Hook::Prerouting;
const OUT: Hook = Hook::Output;
const TCP: Protocol = Protocol::Tcp;
const UDP: Protocol = Protocol::Udp;

fn check(dp: &dyn Dataplane, cases: &[Case]) {
    let text = dp.render_text();
    let lines: Vec<&str> = text.lines().collect();
    for c in cases {
        // A fresh node state per case: rr starts at the head of the list.
        let mut state = NodeState::default();
        let o = run(dp, &mut state, c.hook, c.proto, c.src, c.dst, 0);
        assert_eq!(result(&o), c.output, "{}: {o:#?}", c.name);
        assert_eq!(o.masquerade, c.masq, "{}: {o:#?}", c.name);
        // Every step's line is the rule it names.
        for s in &o.steps {
            if let Some(l) = s.line {
                let at = lines.get(l).copied().unwrap_or("");
                let shown = s.rule.trim_end();
                if s.table_chain != "IPVS" || matches!(s.action, StepAction::Lookup { .. }) {
                    assert_eq!(at.trim_end(), shown, "{}: line {l}", c.name);
                }
            }
        }
        let walked: usize = o.rules_compared;
        assert!(walked >= o.steps.iter().filter(|s| s.table_chain != "IPVS").count());
    }
}

#[test]
fn packet_flows_ipv4() {
    let input = scenario("ipvs-basic.yaml", IpFamily::V4);
    let dp = ipvs(&input, None);
    // Kernel list order is kube-proxy's add order reversed, so rr's first
    // pick is the highest "ip:port": 10.244.2.3:8080 for web.
    check(
        dp.as_ref(),
        &[
            Case {
                name: "pod to ClusterIP",
                hook: PRE,
                proto: TCP,
                src: "10.244.1.5:40000",
                dst: "10.96.0.10:80",
                output: "10.244.2.3:8080",
                masq: false,
            },
            Case {
                name: "off-cluster source to ClusterIP (! -s clusterCIDR)",
                hook: PRE,
                proto: TCP,
                src: "192.168.5.5:40000",
                dst: "10.96.0.10:80",
                output: "10.244.2.3:8080",
                masq: true,
            },
            Case {
                name: "host process to ClusterIP",
                hook: OUT,
                proto: TCP,
                src: "10.0.0.1:40000",
                dst: "10.96.0.10:80",
                output: "10.244.2.3:8080",
                masq: true,
            },
            Case {
                name: "ClusterIP, unknown port (KUBE-IPVS-FILTER)",
                hook: PRE,
                proto: TCP,
                src: "10.244.1.5:40000",
                dst: "10.96.0.10:81",
                output: "REJECT",
                masq: false,
            },
            Case {
                name: "NodePort on the InternalIP",
                hook: PRE,
                proto: TCP,
                src: "192.168.5.5:40000",
                dst: "10.0.0.1:30080",
                output: "10.244.2.3:8080",
                masq: true,
            },
            Case {
                name: "NodePort on the ExternalIP address",
                hook: PRE,
                proto: TCP,
                src: "192.168.5.5:40000",
                dst: "172.16.0.1:30080",
                output: "10.244.2.3:8080",
                masq: true,
            },
            Case {
                name: "NodePort of another node: routed, not ours",
                hook: PRE,
                proto: TCP,
                src: "192.168.5.5:40000",
                dst: "10.0.0.2:30080",
                output: "",
                masq: false,
            },
            Case {
                name: "externalIP from outside",
                hook: PRE,
                proto: TCP,
                src: "192.168.5.5:40000",
                dst: "203.0.113.7:80",
                output: "10.244.2.3:8080",
                masq: true,
            },
            Case {
                name: "LB from an allowed source, Local policy: no masquerade",
                hook: PRE,
                proto: TCP,
                src: "198.51.100.7:40000",
                dst: "192.0.2.10:443",
                output: "10.244.2.5:8443",
                masq: false,
            },
            Case {
                name: "LB from outside the source ranges",
                hook: PRE,
                proto: TCP,
                src: "203.0.113.99:40000",
                dst: "192.0.2.10:443",
                output: "DROP",
                masq: false,
            },
            Case {
                name: "LB from the node itself, node not in the source ranges",
                hook: OUT,
                proto: TCP,
                src: "192.0.2.10:40000",
                dst: "192.0.2.10:443",
                output: "DROP",
                masq: false,
            },
            Case {
                // kube-proxy IPVS: Local policy without local endpoints uses
                // all cluster endpoints (kubernetes#97081), unmasqueraded.
                name: "Local NodePort without a local endpoint",
                hook: PRE,
                proto: TCP,
                src: "192.168.5.5:40000",
                dst: "10.0.0.1:30443",
                output: "10.244.2.5:8443",
                masq: false,
            },
            Case {
                name: "health check node port",
                hook: PRE,
                proto: TCP,
                src: "192.168.5.5:40000",
                dst: "10.0.0.1:32000",
                output: "ACCEPT",
                masq: false,
            },
            Case {
                name: "no endpoints: ICMP port unreachable",
                hook: PRE,
                proto: TCP,
                src: "10.244.1.5:40000",
                dst: "10.96.0.99:80",
                output: "REJECT",
                masq: false,
            },
            Case {
                name: "UDP DNS",
                hook: PRE,
                proto: UDP,
                src: "10.244.1.5:5353",
                dst: "10.96.0.53:53",
                output: "10.244.2.8:53",
                masq: false,
            },
            Case {
                name: "not a service at all",
                hook: PRE,
                proto: TCP,
                src: "10.244.1.5:40000",
                dst: "10.244.2.3:8080",
                output: "",
                masq: false,
            },
        ],
    );
}

#[test]
fn reasons_and_steps() {
    let input = scenario("ipvs-basic.yaml", IpFamily::V4);
    let dp = ipvs(&input, None);
    let mut st = NodeState::default();
    let o = run(
        dp.as_ref(),
        &mut st,
        PRE,
        TCP,
        "10.244.1.5:1",
        "10.96.0.99:80",
        0,
    );
    assert_eq!(
        o.verdict,
        Verdict::Reject {
            reason: DropReason::NoEndpoints
        }
    );
    assert!(o.candidates.is_empty());
    let o = run(
        dp.as_ref(),
        &mut st,
        PRE,
        TCP,
        "203.0.113.99:1",
        "192.0.2.10:443",
        0,
    );
    assert_eq!(
        o.verdict,
        Verdict::Drop {
            reason: DropReason::SourceRange
        }
    );
    let o = run(
        dp.as_ref(),
        &mut st,
        PRE,
        TCP,
        "10.244.1.5:1",
        "10.96.0.10:81",
        0,
    );
    assert_eq!(
        o.verdict,
        Verdict::Reject {
            reason: DropReason::UnknownPort
        }
    );
    // One IPVS lookup counts 1; the rest are glue rules walked.
    let o = run(
        dp.as_ref(),
        &mut st,
        PRE,
        TCP,
        "10.244.1.5:1",
        "10.96.0.10:80",
        0,
    );
    let lookups: Vec<_> = o
        .steps
        .iter()
        .filter(|s| matches!(s.action, StepAction::Lookup { .. }))
        .collect();
    assert_eq!(lookups.len(), 1);
    assert_eq!(lookups[0].compared, 1);
    assert_eq!(
        lookups[0].action,
        StepAction::Lookup {
            matched: "TCP 10.96.0.10:80".into()
        }
    );
    assert_eq!(
        o.candidates,
        vec![sa("10.244.1.2:8080"), sa("10.244.2.3:8080")]
    );
    // nat: PREROUTING jump 1 + KUBE-SERVICES 8 (loopback, LB set, CLUSTER-IP
    // masq, 3 EXTERNAL-IP, addrtype → KUBE-NODE-PORT's 2 rules, CLUSTER-IP
    // ACCEPT); filter INPUT 3 jumps + IPVS-FILTER 2 + PROXY-FIREWALL 1 +
    // NODE-PORT 1; IPVS 1; filter OUTPUT 1 + OUT-FILTER 1; POSTROUTING 1 +
    // KUBE-POSTROUTING 2 (LOOP-BACK, unmarked RETURN).
    assert_eq!(o.rules_compared, 1 + 8 + 2 + 3 + 2 + 1 + 1 + 1 + 2 + 1 + 2);
    let chosen = o
        .steps
        .iter()
        .find_map(|s| match &s.action {
            StepAction::Choose { chosen, among, .. } => Some((*chosen, *among)),
            _ => None,
        })
        .unwrap();
    assert_eq!(chosen, (sa("10.244.2.3:8080"), 2));
}

#[test]
fn rr_alternates_and_counts_connections() {
    let input = scenario("ipvs-basic.yaml", IpFamily::V4);
    let dp = ipvs(&input, None);
    let mut st = NodeState::default();
    let picks: Vec<String> = (0..4)
        .map(|i| {
            let src = format!("10.244.1.5:{}", 40000 + i);
            result(&run(
                dp.as_ref(),
                &mut st,
                PRE,
                TCP,
                &src,
                "10.96.0.10:80",
                0,
            ))
        })
        .collect();
    assert_eq!(
        picks,
        vec![
            "10.244.2.3:8080",
            "10.244.1.2:8080",
            "10.244.2.3:8080",
            "10.244.1.2:8080"
        ]
    );
    let key = |ep: &str| ("TCP 10.96.0.10:80".to_string(), sa(ep));
    assert_eq!(
        st.conns.get(&key("10.244.2.3:8080")),
        Some(&ConnCount {
            active: 2,
            inactive: 0
        })
    );
    // The NodePort VS is another virtual server with its own rr position.
    let o = run(
        dp.as_ref(),
        &mut st,
        PRE,
        TCP,
        "192.168.5.5:1",
        "10.0.0.1:30080",
        0,
    );
    assert_eq!(result(&o), "10.244.2.3:8080");
    // UDP connections count as inactive.
    run(
        dp.as_ref(),
        &mut st,
        PRE,
        UDP,
        "10.244.1.5:1",
        "10.96.0.53:53",
        0,
    );
    assert_eq!(
        st.conns
            .get(&("UDP 10.96.0.53:53".to_string(), sa("10.244.2.8:53")))
            .copied(),
        Some(ConnCount {
            active: 0,
            inactive: 1
        })
    );
}

#[test]
fn hairpin_is_masqueraded() {
    let input = scenario("ipvs-basic.yaml", IpFamily::V4);
    let dp = ipvs(&input, None);
    let mut st = NodeState::default();
    // Cursor on list index 0 (10.244.2.3): the next rr pick is 10.244.1.2,
    // the client itself → KUBE-LOOP-BACK → MASQUERADE.
    st.rr.insert("TCP 10.96.0.10:80".into(), 0);
    let o = run(
        dp.as_ref(),
        &mut st,
        PRE,
        TCP,
        "10.244.1.2:5555",
        "10.96.0.10:80",
        0,
    );
    assert_eq!(result(&o), "10.244.1.2:8080");
    assert!(o.masquerade);
    assert!(o
        .steps
        .iter()
        .any(|s| s.rule.contains("KUBE-LOOP-BACK dst,dst,src -j MASQUERADE")));
}

#[test]
fn least_connection_schedulers_use_node_state() {
    let input = scenario("ipvs-basic.yaml", IpFamily::V4);
    for (sched, expect) in [
        (Scheduler::Lc, "10.244.1.2:8080"),
        (Scheduler::Wlc, "10.244.1.2:8080"),
        (Scheduler::Sed, "10.244.1.2:8080"),
        (Scheduler::Nq, "10.244.1.2:8080"),
    ] {
        let dp = ipvs(&input, Some(sched));
        let mut st = NodeState::default();
        // 10.244.2.3 (first in the list) is busy.
        st.conns.insert(
            ("TCP 10.96.0.10:80".into(), sa("10.244.2.3:8080")),
            ConnCount {
                active: 1,
                inactive: 0,
            },
        );
        let o = run(
            dp.as_ref(),
            &mut st,
            PRE,
            TCP,
            "10.244.1.5:1",
            "10.96.0.10:80",
            0,
        );
        assert_eq!(result(&o), expect, "{sched:?}");
        // Now both have one active: lc/wlc/sed tie → first in list order;
        // nq has no idle server → least (active+1)/weight, tie → first.
        let o = run(
            dp.as_ref(),
            &mut st,
            PRE,
            TCP,
            "10.244.1.5:2",
            "10.96.0.10:80",
            0,
        );
        assert_eq!(result(&o), "10.244.2.3:8080", "{sched:?}");
    }
    // lc: 300 inactive weigh more than one active (256).
    let dp = ipvs(&input, Some(Scheduler::Lc));
    let mut st = NodeState::default();
    st.conns.insert(
        ("TCP 10.96.0.10:80".into(), sa("10.244.2.3:8080")),
        ConnCount {
            active: 0,
            inactive: 300,
        },
    );
    st.conns.insert(
        ("TCP 10.96.0.10:80".into(), sa("10.244.1.2:8080")),
        ConnCount {
            active: 1,
            inactive: 0,
        },
    );
    let o = run(
        dp.as_ref(),
        &mut st,
        PRE,
        TCP,
        "10.244.1.5:1",
        "10.96.0.10:80",
        0,
    );
    assert_eq!(result(&o), "10.244.1.2:8080");
    // sed ignores inactive: 10.244.2.3 (0 active) wins.
    let dp = ipvs(&input, Some(Scheduler::Sed));
    let o = run(
        dp.as_ref(),
        &mut st,
        PRE,
        TCP,
        "10.244.1.5:1",
        "10.96.0.10:80",
        0,
    );
    assert_eq!(result(&o), "10.244.2.3:8080");
}

#[test]
fn hashing_schedulers_through_process() {
    let input = scenario("ipvs-basic.yaml", IpFamily::V4);
    // sh: same client → same server, whatever the port.
    let dp = ipvs(&input, Some(Scheduler::Sh));
    let mut st = NodeState::default();
    let a = result(&run(
        dp.as_ref(),
        &mut st,
        PRE,
        TCP,
        "10.244.1.5:1",
        "10.96.0.10:80",
        0,
    ));
    let b = result(&run(
        dp.as_ref(),
        &mut st,
        PRE,
        TCP,
        "10.244.1.5:2",
        "10.96.0.10:80",
        0,
    ));
    assert_eq!(a, b);
    // dh: all clients of one VIP go to one server.
    let dp = ipvs(&input, Some(Scheduler::Dh));
    let picks: std::collections::BTreeSet<String> = (0..20)
        .map(|i| {
            let src = format!("10.244.1.{}:1", i + 10);
            result(&run(
                dp.as_ref(),
                &mut st,
                PRE,
                TCP,
                &src,
                "10.96.0.10:80",
                0,
            ))
        })
        .collect();
    assert_eq!(picks.len(), 1);
    // mh: kube-proxy sets mh-port, so the same client spreads by source port.
    let dp = ipvs(&input, Some(Scheduler::Mh));
    assert!(dp
        .render_text()
        .contains("TCP  10.96.0.10:80 mh (mh-port)\n"));
    let picks: std::collections::BTreeSet<String> = (0..32)
        .map(|i| {
            let src = format!("10.244.1.5:{}", 40000 + i);
            result(&run(
                dp.as_ref(),
                &mut st,
                PRE,
                TCP,
                &src,
                "10.96.0.10:80",
                0,
            ))
        })
        .collect();
    assert_eq!(picks.len(), 2);
    let again = |port: u16| {
        let src = format!("10.244.1.5:{port}");
        result(&run(
            dp.as_ref(),
            &mut NodeState::default(),
            PRE,
            TCP,
            &src,
            "10.96.0.10:80",
            0,
        ))
    };
    assert_eq!(again(40007), again(40007));
}

#[test]
fn persistence_client_ip_affinity() {
    let input = scenario("ipvs-basic.yaml", IpFamily::V4);
    let dp = ipvs(&input, None);
    assert!(dp
        .render_text()
        .contains("TCP  10.96.0.53:53 rr persistent 600\n"));
    let mut st = NodeState::default();
    let vs = "TCP 10.96.0.53:53";
    let first = result(&run(
        dp.as_ref(),
        &mut st,
        PRE,
        TCP,
        "10.244.1.5:1000",
        "10.96.0.53:53",
        0,
    ));
    assert_eq!(first, "10.244.2.8:53");
    assert_eq!(
        st.affinity
            .get(&(vs.to_string(), "10.244.1.5".parse().unwrap())),
        Some(&(sa("10.244.2.8:53"), 0))
    );
    // Same client, new connections within the timeout: same backend (rr
    // alone would alternate), the template's last use moves forward.
    for (i, t) in [(1, 100_000u64), (2, 650_000), (3, 1_200_000)] {
        let src = format!("10.244.1.5:{}", 1000 + i);
        let o = run(dp.as_ref(), &mut st, PRE, TCP, &src, "10.96.0.53:53", t);
        assert_eq!(result(&o), "10.244.2.8:53", "at {t}");
    }
    // Another client is scheduled by rr: the next server.
    let other = result(&run(
        dp.as_ref(),
        &mut st,
        PRE,
        TCP,
        "10.244.1.6:1",
        "10.96.0.53:53",
        1_200_000,
    ));
    assert_eq!(other, "10.244.1.7:53");
    // Templates are per virtual server: UDP 53 is separate.
    let udp = result(&run(
        dp.as_ref(),
        &mut st,
        PRE,
        UDP,
        "10.244.1.5:1",
        "10.96.0.53:53",
        1_200_000,
    ));
    assert_eq!(udp, "10.244.2.8:53");
    // 600 s after the last use the template has expired: rescheduled (rr
    // moves on from 10.244.1.7 to 10.244.2.8... after wrapping).
    let late = run(
        dp.as_ref(),
        &mut st,
        PRE,
        TCP,
        "10.244.1.5:9",
        "10.96.0.53:53",
        1_800_000,
    );
    assert_eq!(result(&late), "10.244.2.8:53");
    assert!(late.steps.iter().any(|s| matches!(&s.action,
        StepAction::Choose { how, .. } if how.contains("new persistence template"))));
    let late2 = run(
        dp.as_ref(),
        &mut st,
        PRE,
        TCP,
        "10.244.1.6:9",
        "10.96.0.53:53",
        1_800_001 + 600_000,
    );
    assert_eq!(result(&late2), "10.244.1.7:53");
}

#[test]
fn virtual_server_layout() {
    let mut input = scenario("ipvs-basic.yaml", IpFamily::V4);
    let dp = modes::ipvs::compile(&input, Scheduler::Rr);
    let layout: Vec<(String, Vec<String>)> = dp
        .ruleset
        .virtual_servers
        .iter()
        .map(|v| {
            let mut eps: Vec<String> = v.real_servers.iter().map(|r| r.addr.to_string()).collect();
            eps.sort();
            (v.key(), eps)
        })
        .collect();
    let web = vec!["10.244.1.2:8080".to_string(), "10.244.2.3:8080".to_string()];
    let lb = vec!["10.244.2.5:8443".to_string()];
    let dns = vec!["10.244.1.7:53".to_string(), "10.244.2.8:53".to_string()];
    assert_eq!(
        layout,
        vec![
            ("TCP 10.0.0.1:30080".to_string(), web.clone()),
            ("TCP 10.0.0.1:30443".to_string(), lb.clone()),
            ("TCP 10.96.0.10:80".to_string(), web.clone()),
            ("TCP 10.96.0.20:443".to_string(), lb.clone()),
            ("TCP 10.96.0.53:53".to_string(), dns.clone()),
            ("TCP 10.96.0.99:80".to_string(), vec![]),
            ("TCP 172.16.0.1:30080".to_string(), web.clone()),
            ("TCP 172.16.0.1:30443".to_string(), lb.clone()),
            ("TCP 192.0.2.10:443".to_string(), lb.clone()),
            ("TCP 203.0.113.7:80".to_string(), web.clone()),
            ("UDP 10.96.0.53:53".to_string(), dns.clone()),
        ]
    );
    // Kernel list order: most recently added first.
    let web_vs = &dp.ruleset.virtual_servers[2];
    assert_eq!(web_vs.real_servers[0].addr, sa("10.244.2.3:8080"));
    assert!(web_vs.real_servers.iter().all(|r| r.weight == 1));
    // NodePort addresses are never bound; ClusterIPs, externalIPs and LB IPs are.
    let bound: Vec<String> = dp
        .ruleset
        .interface
        .addresses
        .iter()
        .map(|a| a.to_string())
        .collect();
    assert_eq!(
        bound,
        vec![
            "10.96.0.10",
            "10.96.0.20",
            "10.96.0.53",
            "10.96.0.99",
            "192.0.2.10",
            "203.0.113.7"
        ]
    );
    // nodePortAddresses: only the listed node IPs get NodePort VSs.
    input.node_port_ips = Some(vec![
        "10.0.0.1".parse().unwrap(),
        "127.0.0.1".parse().unwrap(),
    ]);
    let dp = modes::ipvs::compile(&input, Scheduler::Rr);
    let nodeport: Vec<String> = dp
        .ruleset
        .virtual_servers
        .iter()
        .filter(|v| v.kind == modes::ipvs::VsKind::NodePort)
        .map(|v| v.key())
        .collect();
    assert_eq!(nodeport, vec!["TCP 10.0.0.1:30080", "TCP 10.0.0.1:30443"]);
}

const TERMINATING: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {addresses: [{type: InternalIP, address: 10.0.0.1}]}
---
apiVersion: v1
kind: Service
metadata: {name: mixed, namespace: default}
spec:
  clusterIP: 10.96.1.1
  ports: [{port: 80, targetPort: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: mixed-1, namespace: default, labels: {kubernetes.io/service-name: mixed}}
addressType: IPv4
ports: [{port: 80}]
endpoints:
- {addresses: [10.244.1.1], nodeName: node-a, conditions: {ready: true}}
- {addresses: [10.244.1.2], nodeName: node-a, conditions: {ready: false, serving: true, terminating: true}}
---
apiVersion: v1
kind: Service
metadata: {name: draining, namespace: default}
spec:
  clusterIP: 10.96.1.2
  ports: [{port: 80, targetPort: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: draining-1, namespace: default, labels: {kubernetes.io/service-name: draining}}
addressType: IPv4
ports: [{port: 80}]
endpoints:
- {addresses: [10.244.1.3], nodeName: node-a, conditions: {ready: false, serving: true, terminating: true}}
- {addresses: [10.244.1.4], nodeName: node-a, conditions: {ready: false, serving: false, terminating: true}}
"#;

#[test]
fn terminating_endpoints_only_as_fallback() {
    let input = input_of(TERMINATING, "node-a", IpFamily::V4);
    let dp = ipvs(&input, None);
    let mut st = NodeState::default();
    let a = run(
        dp.as_ref(),
        &mut st,
        PRE,
        TCP,
        "10.244.1.9:1",
        "10.96.1.1:80",
        0,
    );
    let b = run(
        dp.as_ref(),
        &mut st,
        PRE,
        TCP,
        "10.244.1.9:2",
        "10.96.1.1:80",
        0,
    );
    assert_eq!(result(&a), "10.244.1.1:80");
    assert_eq!(result(&b), "10.244.1.1:80");
    assert_eq!(a.candidates, vec![sa("10.244.1.1:80")]);
    let c = run(
        dp.as_ref(),
        &mut st,
        PRE,
        TCP,
        "10.244.1.9:3",
        "10.96.1.2:80",
        0,
    );
    assert_eq!(result(&c), "10.244.1.3:80");
    assert_eq!(c.candidates, vec![sa("10.244.1.3:80")]);
    // Every local endpoint is in KUBE-LOOP-BACK, whatever its conditions.
    let text = dp.render_text();
    for ep in ["10.244.1.1", "10.244.1.2", "10.244.1.3", "10.244.1.4"] {
        assert!(text.contains(&format!("{ep},tcp:80,{ep}\n")), "{ep}");
    }
}

#[test]
fn packet_flows_ipv6() {
    let input = scenario("ipvs-ipv6.yaml", IpFamily::V6);
    let dp = ipvs(&input, None);
    // kube-proxy sorts endpoints by "ip:port" text: "[fd00:244:0:1::3]:8080"
    // < "[fd00:244::2]:8080", added in that order and prepended, so the
    // kernel list (and rr's first pick) starts with [fd00:244::2]:8080.
    check(
        dp.as_ref(),
        &[
            Case {
                name: "pod to ClusterIP",
                hook: PRE,
                proto: TCP,
                src: "[fd00:244::9]:40000",
                dst: "[fd00:10::a]:8080",
                output: "[fd00:244::2]:8080",
                masq: false,
            },
            Case {
                name: "outside to ClusterIP",
                hook: PRE,
                proto: TCP,
                src: "[2001:db8::1]:40000",
                dst: "[fd00:10::a]:8080",
                output: "[fd00:244::2]:8080",
                masq: true,
            },
            Case {
                name: "NodePort",
                hook: PRE,
                proto: TCP,
                src: "[2001:db8::1]:40000",
                dst: "[fd00::1]:30600",
                output: "[fd00:244::2]:8080",
                masq: true,
            },
            Case {
                name: "ClusterIP, unknown port",
                hook: PRE,
                proto: TCP,
                src: "[fd00:244::9]:40000",
                dst: "[fd00:10::a]:80",
                output: "REJECT",
                masq: false,
            },
            Case {
                name: "IPv4 packet to an IPv6 proxier",
                hook: PRE,
                proto: TCP,
                src: "10.0.0.9:1",
                dst: "10.96.0.10:80",
                output: "",
                masq: false,
            },
        ],
    );
    let mut st = NodeState::default();
    run(
        dp.as_ref(),
        &mut st,
        PRE,
        TCP,
        "[fd00:244::9]:1",
        "[fd00:10::a]:8080",
        0,
    );
    assert!(st.conns.contains_key(&(
        "TCP [fd00:10::a]:8080".to_string(),
        sa("[fd00:244::2]:8080")
    )));
}

#[test]
fn json_contract() {
    let input = scenario("ipvs-basic.yaml", IpFamily::V4);
    let dp = ipvs(&input, None);
    let j = dp.render_json();
    for k in ["virtual_servers", "ipsets", "interface"] {
        assert!(j.get(k).is_some(), "{k}");
    }
    assert_eq!(j["interface"]["name"], "kube-ipvs0");
    assert_eq!(j["interface"]["addresses"][0], "10.96.0.10");
    let vss = j["virtual_servers"].as_array().unwrap();
    let web = vss.iter().find(|v| v["address"] == "10.96.0.10").unwrap();
    assert_eq!(web["port"], 80);
    assert_eq!(web["protocol"], "TCP");
    assert_eq!(web["scheduler"], "rr");
    assert!(web.get("persistence_timeout").is_none());
    assert_eq!(
        web["real_servers"][0],
        serde_json::json!({"address": "10.244.1.2", "port": 8080, "weight": 1,
                           "forward": "Masq", "list_position": 1})
    );
    let dns = vss
        .iter()
        .find(|v| v["address"] == "10.96.0.53" && v["protocol"] == "UDP")
        .unwrap();
    assert_eq!(dns["persistence_timeout"], 600);
    assert_eq!(dns["port"], 53);
    let sets = j["ipsets"].as_array().unwrap();
    let cip = sets
        .iter()
        .find(|s| s["name"] == "KUBE-CLUSTER-IP")
        .unwrap();
    assert_eq!(cip["type"], "hash:ip,port");
    assert_eq!(cip["members"][0], "10.96.0.10,tcp:80");
}

#[test]
fn masquerade_all_and_no_local_detector() {
    let text = std::fs::read_to_string("../tests/scenarios/ipvs-basic.yaml").unwrap();
    let (cluster, _) = kpv_core::Code::ALL.parse(&text);
    let mut input = kpv_core::net::proxy::build_input(
        &cluster,
        &cluster.endpoint_slices,
        "node-a",
        IpFamily::V4,
    )
    .unwrap();
    input.local_detector = kpv_core::net::proxy::LocalDetector::None;
    let dp = ipvs(&input, None);
    assert!(dp.render_text().contains(
        "-A KUBE-SERVICES -m comment --comment \"Kubernetes service cluster ip + port for masquerade purpose\" -m set --match-set KUBE-CLUSTER-IP src,dst -j KUBE-MARK-MASQ\n"
    ));
    // src,dst: only a source that is itself a ClusterIP (host traffic picks
    // the VIP as source) is marked.
    let mut st = NodeState::default();
    let o = run(
        dp.as_ref(),
        &mut st,
        PRE,
        TCP,
        "192.168.5.5:1",
        "10.96.0.10:80",
        0,
    );
    assert!(!o.masquerade);
    let o = run(
        dp.as_ref(),
        &mut st,
        OUT,
        TCP,
        "10.96.0.10:40000",
        "10.96.0.10:80",
        0,
    );
    assert!(o.masquerade);
    input.config.iptables_masquerade_all = true;
    let dp = ipvs(&input, None);
    let o = run(
        dp.as_ref(),
        &mut st,
        PRE,
        TCP,
        "10.244.1.5:1",
        "10.96.0.10:80",
        0,
    );
    assert!(o.masquerade);
}

#[test]
fn snapshot_basic() {
    let input = scenario("ipvs-basic.yaml", IpFamily::V4);
    insta::assert_snapshot!("ipvs_basic", ipvs(&input, None).render_text());
}

#[test]
fn snapshot_ipv6() {
    let input = scenario("ipvs-ipv6.yaml", IpFamily::V6);
    insta::assert_snapshot!("ipvs_ipv6", ipvs(&input, None).render_text());
}
