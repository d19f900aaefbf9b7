//! kube-proxy's own `pkg/proxy/ipvs/proxier_test.go` (TestNodePortIPv4)
//! cases, reproduced: same inputs (node names lower-cased: kpv validates
//! names as the API server would), compared with its expected virtual servers
//! and its structural `ExpectedIptablesChain` ({JumpChain, MatchSet,
//! SourceAddress} per chain; nat and filter chains of one name are listed
//! together there, nat first).

use kpv_core::model::packet::IpFamily;
use kpv_core::model::Scheduler;
use kpv_core::net::modes::ipvs::glue::{Match, Target};

const SVC: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: testhostname}
status: {addresses: [{type: InternalIP, address: 100.101.102.103}]}
---
apiVersion: v1
kind: Node
metadata: {name: otherhost}
status: {addresses: [{type: InternalIP, address: 100.101.102.104}]}
---
apiVersion: v1
kind: Service
metadata: {name: svc1, namespace: ns1}
spec:
  type: NodePort
  clusterIP: 10.20.30.41
  externalTrafficPolicy: POLICY
  ports: [{name: p80, port: 80, targetPort: 80, nodePort: 3001, protocol: PROTO}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: svc1-1, namespace: ns1, labels: {kubernetes.io/service-name: svc1}}
addressType: IPv4
ports: [{name: p80, port: 80, protocol: PROTO}]
endpoints:
- {addresses: [10.180.0.1], nodeName: testhostname}
EXTRA
"#;

type Chain = Vec<(String, String, String)>;

fn compile(policy: &str, proto: &str, extra: &str) -> kpv_core::net::modes::ipvs::IpvsDataplane {
    let text = SVC
        .replace("POLICY", policy)
        .replace("PROTO", proto)
        .replace("EXTRA", extra);
    let (cluster, diags) = kpv_core::Code::ALL.parse(&text);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    let mut input = kpv_core::net::proxy::build_input(
        &cluster,
        &cluster.endpoint_slices,
        "testhostname",
        IpFamily::V4,
    )
    .unwrap();
    // The test's fake proxier: nodePortAddresses 0.0.0.0/0, NoOpLocalDetector.
    input.node_port_ips = Some(vec!["100.101.102.103".parse().unwrap()]);
    input.local_detector = kpv_core::net::proxy::LocalDetector::None;
    kpv_core::net::modes::ipvs::compile(&input, Scheduler::Rr)
}

/// {JumpChain, MatchSet, SourceAddress} of a chain's rules, nat then filter.
fn chain(dp: &kpv_core::net::modes::ipvs::IpvsDataplane, name: &str) -> Chain {
    let mut out = Vec::new();
    for table in [
        kpv_core::net::modes::ipvs::glue::Table::Nat,
        kpv_core::net::modes::ipvs::glue::Table::Filter,
    ] {
        for r in dp
            .ruleset
            .rules
            .iter()
            .filter(|r| r.table == table && r.chain == name)
        {
            let jump = match &r.target {
                Target::Jump(c) => c.clone(),
                Target::Accept => "ACCEPT".into(),
                Target::Return => "RETURN".into(),
                other => format!("{other:?}"),
            };
            let mut set = String::new();
            let mut src = String::new();
            for m in &r.matches {
                match m {
                    Match::Set { set: s, .. } => set = s.base_name().to_string(),
                    Match::Source { net, .. } => src = net.to_string(),
                    _ => {}
                }
            }
            out.push((jump, set, src));
        }
    }
    out
}

fn row(j: &str, s: &str, a: &str) -> (String, String, String) {
    (j.into(), s.into(), a.into())
}

fn vss(dp: &kpv_core::net::modes::ipvs::IpvsDataplane) -> Vec<(String, Vec<(String, i32)>)> {
    dp.ruleset
        .virtual_servers
        .iter()
        .map(|v| {
            let mut rs: Vec<(String, i32)> = v
                .real_servers
                .iter()
                .map(|r| (r.addr.to_string(), r.weight))
                .collect();
            rs.sort();
            (format!("{}:{}/{}", v.address, v.port, v.protocol), rs)
        })
        .collect()
}

#[test]
fn udp_service_with_node_port_has_endpoints() {
    let dp = compile("Cluster", "UDP", "");
    assert_eq!(
        vss(&dp),
        vec![
            (
                "10.20.30.41:80/UDP".to_string(),
                vec![("10.180.0.1:80".to_string(), 1)]
            ),
            (
                "100.101.102.103:3001/UDP".to_string(),
                vec![("10.180.0.1:80".to_string(), 1)]
            ),
        ]
    );
    assert!(dp
        .ruleset
        .virtual_servers
        .iter()
        .all(|v| v.scheduler == Scheduler::Rr));
    assert_eq!(
        chain(&dp, "KUBE-NODE-PORT"),
        vec![
            row("KUBE-MARK-MASQ", "KUBE-NODE-PORT-UDP", ""),
            row("ACCEPT", "KUBE-HEALTH-CHECK-NODE-PORT", ""),
        ]
    );
    assert_eq!(
        chain(&dp, "KUBE-SERVICES"),
        vec![
            row("RETURN", "", "127.0.0.0/8"),
            row("KUBE-MARK-MASQ", "KUBE-CLUSTER-IP", ""),
            row("KUBE-NODE-PORT", "", ""),
            row("ACCEPT", "KUBE-CLUSTER-IP", ""),
        ]
    );
    // kubeNodePortSetUDP: {{Port: 3001, Protocol: "udp", SetType: BitmapPort}}
    let text = kpv_core::net::modes::Dataplane::render_text(&dp);
    assert!(text.contains("Name: KUBE-NODE-PORT-UDP\nType: bitmap:port\nHeader: range 0-65535\nReferences: 1\nNumber of entries: 1\nMembers:\n3001\n"));
}

#[test]
fn service_has_node_port_but_no_endpoints() {
    let text = SVC.replace("EXTRA", "");
    let no_eps = text
        .split("---\napiVersion: discovery.k8s.io/v1")
        .next()
        .unwrap();
    let (cluster, diags) =
        kpv_core::Code::ALL.parse(&no_eps.replace("POLICY", "Cluster").replace("PROTO", "TCP"));
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    let mut input = kpv_core::net::proxy::build_input(
        &cluster,
        &cluster.endpoint_slices,
        "testhostname",
        IpFamily::V4,
    )
    .unwrap();
    input.node_port_ips = Some(vec!["100.101.102.103".parse().unwrap()]);
    let dp = kpv_core::net::modes::ipvs::compile(&input, Scheduler::Rr);
    // "no real servers corresponding to no endpoints"
    assert_eq!(
        vss(&dp),
        vec![
            ("10.20.30.41:80/TCP".to_string(), vec![]),
            ("100.101.102.103:3001/TCP".to_string(), vec![]),
        ]
    );
}

#[test]
fn sctp_node_port_with_external_traffic_policy_local() {
    let other = "- {addresses: [10.180.1.1], nodeName: otherhost}";
    let dp = compile("Local", "SCTP", other);
    assert_eq!(
        vss(&dp),
        vec![
            (
                "10.20.30.41:80/SCTP".to_string(),
                vec![
                    ("10.180.0.1:80".to_string(), 1),
                    ("10.180.1.1:80".to_string(), 1)
                ]
            ),
            (
                "100.101.102.103:3001/SCTP".to_string(),
                vec![("10.180.0.1:80".to_string(), 1)]
            ),
        ]
    );
    assert_eq!(
        chain(&dp, "KUBE-NODE-PORT"),
        vec![
            row("RETURN", "KUBE-NODE-PORT-LOCAL-SCTP-HASH", ""),
            row("KUBE-MARK-MASQ", "KUBE-NODE-PORT-SCTP-HASH", ""),
            row("ACCEPT", "KUBE-HEALTH-CHECK-NODE-PORT", ""),
        ]
    );
    let text = kpv_core::net::modes::Dataplane::render_text(&dp);
    assert!(text.contains("SCTP  100.101.102.103:3001 rr\n"));
    assert!(text.contains("Members:\n100.101.102.103,sctp:3001\n"));
    assert!(text.contains(
        "-A KUBE-NODE-PORT -p sctp -m comment --comment \"Kubernetes nodeport SCTP port with externalTrafficPolicy=local with type \\'hash ip:port\\'\" -m set --match-set KUBE-NODE-PORT-LOCAL-SCTP-HASH dst,dst -j RETURN\n"
    ));
}
