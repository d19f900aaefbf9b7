//! Cluster DNS checked against CoreDNS's `kubernetes` plugin tests
//! (`plugin/kubernetes/handler_test.go`, `TestServeDNS`): the same
//! Services and endpoints, written as the objects a cluster would hold,
//! and each query's response code and records. Two differences from that
//! table, both from the setup rather than the plugin: TTLs are 30 (kubeadm's
//! Corefile has `ttl 30`, the test sets 5), and `svcempty` has its own
//! ClusterIP 10.0.0.4 (the test gives it svc1's, which the API server
//! refuses). A name whose CNAME leaves the zone is answered with the CNAME
//! alone (the test stubs the upstream resolver).

use kpv_core::model::Cluster;
use kpv_core::net::controller::steady_slices;
use kpv_core::net::dns::render;
use kpv_core::net::dns::zone::{query, Qtype, Rcode};

const OBJECTS: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: testns}
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system}
spec:
  clusterIP: 10.0.0.10
  ports: [{name: dns, protocol: UDP, port: 53}]
---
apiVersion: v1
kind: Service
metadata: {name: svc1, namespace: testns}
spec:
  clusterIP: 10.0.0.1
  ports: [{name: http, protocol: TCP, port: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: svc1-slice1, namespace: testns, labels: {kubernetes.io/service-name: svc1}}
addressType: IPv4
endpoints: [{addresses: [172.0.0.1], hostname: ep1a}]
ports: [{name: http, protocol: TCP, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: svcempty, namespace: testns}
spec:
  clusterIP: 10.0.0.4
  ports: [{name: http, protocol: TCP, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: svc6, namespace: testns}
spec:
  clusterIP: 1234:abcd::1
  ipFamilies: [IPv6]
  ports: [{name: http, protocol: TCP, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: hdls1, namespace: testns}
spec:
  clusterIP: None
  ports: [{name: http, protocol: TCP, port: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: hdls1-slice1, namespace: testns, labels: {kubernetes.io/service-name: hdls1}}
addressType: IPv4
endpoints:
- {addresses: [172.0.0.2]}
- {addresses: [172.0.0.3]}
- {addresses: [172.0.0.4], hostname: dup-name}
- {addresses: [172.0.0.5], hostname: dup-name}
ports: [{name: http, protocol: TCP, port: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: hdls1-slice2, namespace: testns, labels: {kubernetes.io/service-name: hdls1}}
addressType: IPv6
endpoints:
- {addresses: ["5678:abcd::1"]}
- {addresses: ["5678:abcd::2"]}
ports: [{name: http, protocol: TCP, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: hdlsprtls, namespace: testns}
spec: {clusterIP: None}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: hdlsprtls-slice1, namespace: testns, labels: {kubernetes.io/service-name: hdlsprtls}}
addressType: IPv4
endpoints: [{addresses: [172.0.0.20]}]
---
apiVersion: v1
kind: Service
metadata: {name: external, namespace: testns}
spec:
  type: ExternalName
  externalName: ext.interwebs.test
  ports: [{name: http, protocol: TCP, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: external-to-service, namespace: testns}
spec:
  type: ExternalName
  externalName: svc1.testns.svc.cluster.local.
  ports: [{name: http, protocol: TCP, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: svc-dual-stack, namespace: testns}
spec:
  clusterIPs: [10.0.0.3, "10::3"]
  ipFamilyPolicy: RequireDualStack
  ipFamilies: [IPv4, IPv6]
  ports: [{name: http, protocol: TCP, port: 80}]
"#;

fn cluster() -> Cluster {
    let (c, diags) = kpv_core::Code::ALL.parse(OBJECTS);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    c
}

const NX: Rcode = Rcode::NxDomain;
const OK: Rcode = Rcode::NoError;

/// (name, type, code, answer records, additional records): the test's 45
/// queries, less one it asks twice (`hdls1` A). A code with no
/// answer is a negative response, which carries the zone's SOA.
type Case = (
    &'static str,
    Qtype,
    Rcode,
    &'static [&'static str],
    &'static [&'static str],
);

const CASES: &[Case] = &[
    ("svc1.testns.svc.cluster.local.", Qtype::A, OK, &["svc1.testns.svc.cluster.local. 30 IN A 10.0.0.1"], &[]),
    ("svcempty.testns.svc.cluster.local.", Qtype::A, OK, &["svcempty.testns.svc.cluster.local. 30 IN A 10.0.0.4"], &[]),
    ("svc1.testns.svc.cluster.local.", Qtype::Srv, OK, &["svc1.testns.svc.cluster.local. 30 IN SRV 0 100 80 svc1.testns.svc.cluster.local."], &["svc1.testns.svc.cluster.local. 30 IN A 10.0.0.1"]),
    ("svcempty.testns.svc.cluster.local.", Qtype::Srv, OK, &["svcempty.testns.svc.cluster.local. 30 IN SRV 0 100 80 svcempty.testns.svc.cluster.local."], &["svcempty.testns.svc.cluster.local. 30 IN A 10.0.0.4"]),
    ("_http._tcp.svcempty.testns.svc.cluster.local.", Qtype::Srv, OK, &["_http._tcp.svcempty.testns.svc.cluster.local. 30 IN SRV 0 100 80 svcempty.testns.svc.cluster.local."], &["svcempty.testns.svc.cluster.local. 30 IN A 10.0.0.4"]),
    ("svc6.testns.svc.cluster.local.", Qtype::Srv, OK, &["svc6.testns.svc.cluster.local. 30 IN SRV 0 100 80 svc6.testns.svc.cluster.local."], &["svc6.testns.svc.cluster.local. 30 IN AAAA 1234:abcd::1"]),
    ("_http._tcp.svc1.testns.svc.cluster.local.", Qtype::Srv, OK, &["_http._tcp.svc1.testns.svc.cluster.local. 30 IN SRV 0 100 80 svc1.testns.svc.cluster.local."], &["svc1.testns.svc.cluster.local. 30 IN A 10.0.0.1"]),
    ("hdls1.testns.svc.cluster.local.", Qtype::A, OK, &[
        "hdls1.testns.svc.cluster.local. 30 IN A 172.0.0.2",
        "hdls1.testns.svc.cluster.local. 30 IN A 172.0.0.3",
        "hdls1.testns.svc.cluster.local. 30 IN A 172.0.0.4",
        "hdls1.testns.svc.cluster.local. 30 IN A 172.0.0.5",
    ], &[]),
    ("hdlsprtls.testns.svc.cluster.local.", Qtype::A, OK, &["hdlsprtls.testns.svc.cluster.local. 30 IN A 172.0.0.20"], &[]),
    ("svc1.testns.svc.cluster.local.", Qtype::Aaaa, OK, &[], &[]),
    ("svc0.testns.svc.cluster.local.", Qtype::Aaaa, NX, &[], &[]),
    ("svc0.testns.svc.cluster.local.", Qtype::A, NX, &[], &[]),
    ("svc0.svc-nons.svc.cluster.local.", Qtype::A, NX, &[], &[]),
    ("dns-version.cluster.local.", Qtype::Txt, OK, &["dns-version.cluster.local. 28800 IN TXT \"1.1.0\""], &[]),
    ("svc1.testns.svc.cluster.local.", Qtype::Txt, OK, &[], &[]),
    ("svc0.svc-nons.svc.cluster.local.", Qtype::Txt, NX, &[], &[]),
    ("bogusendpoint.hdls1.testns.svc.cluster.local.", Qtype::A, NX, &[], &[]),
    ("bogusendpoint.svc0.testns.svc.cluster.local.", Qtype::A, NX, &[], &[]),
    ("svc6.testns.svc.cluster.local.", Qtype::Aaaa, OK, &["svc6.testns.svc.cluster.local. 30 IN AAAA 1234:abcd::1"], &[]),
    ("_http._tcp.svc6.testns.svc.cluster.local.", Qtype::Srv, OK, &["_http._tcp.svc6.testns.svc.cluster.local. 30 IN SRV 0 100 80 svc6.testns.svc.cluster.local."], &["svc6.testns.svc.cluster.local. 30 IN AAAA 1234:abcd::1"]),
    ("hdls1.testns.svc.cluster.local.", Qtype::Aaaa, OK, &[
        "hdls1.testns.svc.cluster.local. 30 IN AAAA 5678:abcd::1",
        "hdls1.testns.svc.cluster.local. 30 IN AAAA 5678:abcd::2",
    ], &[]),
    ("svc.cluster.local.", Qtype::A, OK, &[], &[]),
    ("pod.cluster.local.", Qtype::A, OK, &[], &[]),
    ("testns.svc.cluster.local.", Qtype::A, OK, &[], &[]),
    ("svc.cluster.local.", Qtype::Ns, OK, &[], &[]),
    ("testns.svc.cluster.local.", Qtype::Ns, OK, &[], &[]),
    ("foo.cluster.local.", Qtype::Ns, NX, &[], &[]),
    ("foo.svc.cluster.local.", Qtype::Ns, NX, &[], &[]),
    ("svc-dual-stack.testns.svc.cluster.local.", Qtype::A, OK, &["svc-dual-stack.testns.svc.cluster.local. 30 IN A 10.0.0.3"], &[]),
    ("svc-dual-stack.testns.svc.cluster.local.", Qtype::Aaaa, OK, &["svc-dual-stack.testns.svc.cluster.local. 30 IN AAAA 10::3"], &[]),
    ("svc-dual-stack.testns.svc.cluster.local.", Qtype::Srv, OK, &["svc-dual-stack.testns.svc.cluster.local. 30 IN SRV 0 50 80 svc-dual-stack.testns.svc.cluster.local."], &[
        "svc-dual-stack.testns.svc.cluster.local. 30 IN A 10.0.0.3",
        "svc-dual-stack.testns.svc.cluster.local. 30 IN AAAA 10::3",
    ]),
    ("svc1.testns.svc.cluster.local.", Qtype::Soa, OK, &[], &[]),
    ("endpoint.external.testns.svc.cluster.local.", Qtype::Cname, NX, &[], &[]),
    ("subdomain.subdomain.external.testns.svc.cluster.local.", Qtype::Cname, NX, &[], &[]),
    // dnsTestCases: names of endpoints.
    ("_http._tcp.hdls1.testns.svc.cluster.local.", Qtype::Srv, OK, &[
        "_http._tcp.hdls1.testns.svc.cluster.local. 30 IN SRV 0 16 80 172-0-0-2.hdls1.testns.svc.cluster.local.",
        "_http._tcp.hdls1.testns.svc.cluster.local. 30 IN SRV 0 16 80 172-0-0-3.hdls1.testns.svc.cluster.local.",
        "_http._tcp.hdls1.testns.svc.cluster.local. 30 IN SRV 0 16 80 5678-abcd--1.hdls1.testns.svc.cluster.local.",
        "_http._tcp.hdls1.testns.svc.cluster.local. 30 IN SRV 0 16 80 5678-abcd--2.hdls1.testns.svc.cluster.local.",
        "_http._tcp.hdls1.testns.svc.cluster.local. 30 IN SRV 0 16 80 dup-name.hdls1.testns.svc.cluster.local.",
    ], &[
        "172-0-0-2.hdls1.testns.svc.cluster.local. 30 IN A 172.0.0.2",
        "172-0-0-3.hdls1.testns.svc.cluster.local. 30 IN A 172.0.0.3",
        "5678-abcd--1.hdls1.testns.svc.cluster.local. 30 IN AAAA 5678:abcd::1",
        "5678-abcd--2.hdls1.testns.svc.cluster.local. 30 IN AAAA 5678:abcd::2",
        "dup-name.hdls1.testns.svc.cluster.local. 30 IN A 172.0.0.4",
        "dup-name.hdls1.testns.svc.cluster.local. 30 IN A 172.0.0.5",
    ]),
    ("5678-abcd--2.hdls1.testns.svc.cluster.local", Qtype::Aaaa, OK, &["5678-abcd--2.hdls1.testns.svc.cluster.local. 30 IN AAAA 5678:abcd::2"], &[]),
    ("5678-abcd--1.hdls1.testns.svc.cluster.local.", Qtype::Aaaa, OK, &["5678-abcd--1.hdls1.testns.svc.cluster.local. 30 IN AAAA 5678:abcd::1"], &[]),
    ("172-0-0-20.hdlsprtls.testns.svc.cluster.local.", Qtype::A, OK, &["172-0-0-20.hdlsprtls.testns.svc.cluster.local. 30 IN A 172.0.0.20"], &[]),
    ("172-0-0-2.hdls1.testns.svc.cluster.local.", Qtype::A, OK, &["172-0-0-2.hdls1.testns.svc.cluster.local. 30 IN A 172.0.0.2"], &[]),
    ("172-0-0-3.hdls1.testns.svc.cluster.local.", Qtype::A, OK, &["172-0-0-3.hdls1.testns.svc.cluster.local. 30 IN A 172.0.0.3"], &[]),
    ("dup-name.hdls1.testns.svc.cluster.local.", Qtype::A, OK, &[
        "dup-name.hdls1.testns.svc.cluster.local. 30 IN A 172.0.0.4",
        "dup-name.hdls1.testns.svc.cluster.local. 30 IN A 172.0.0.5",
    ], &[]),
    ("external.testns.svc.cluster.local.", Qtype::Cname, OK, &["external.testns.svc.cluster.local. 30 IN CNAME ext.interwebs.test."], &[]),
    ("external.testns.svc.cluster.local.", Qtype::A, OK, &["external.testns.svc.cluster.local. 30 IN CNAME ext.interwebs.test."], &[]),
    ("external-to-service.testns.svc.cluster.local", Qtype::A, OK, &[
        "external-to-service.testns.svc.cluster.local. 30 IN CNAME svc1.testns.svc.cluster.local.",
        "svc1.testns.svc.cluster.local. 30 IN A 10.0.0.1",
    ], &[]),
];

fn texts(records: &[kpv_core::net::dns::zone::Record]) -> Vec<String> {
    let mut v: Vec<String> = records
        .iter()
        .map(|r| render::record(r).replace('\t', " "))
        .collect();
    v.sort();
    v
}

#[test]
fn answers_as_the_kubernetes_plugin_tests() {
    let c = cluster();
    let slices = steady_slices(&c);
    for (name, qtype, rcode, answer, extra) in CASES {
        let r = query(&c, &slices, name, *qtype);
        let what = format!("{name} {}", qtype.as_str());
        assert_eq!(r.rcode, *rcode, "{what}");
        let mut want: Vec<String> = answer.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(texts(&r.answer), want, "{what}");
        let mut want: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(texts(&r.extra), want, "{what}");
        assert_eq!(r.authority_soa(), answer.is_empty(), "{what}");
    }
}

/// The plugin's names compare without case, as every DNS name does.
#[test]
fn names_compare_without_case() {
    let c = cluster();
    let slices = steady_slices(&c);
    let r = query(&c, &slices, "SVC1.TestNS.svc.CLUSTER.local.", Qtype::A);
    assert_eq!(
        texts(&r.answer),
        ["SVC1.TestNS.svc.CLUSTER.local. 30 IN A 10.0.0.1"]
    );
}

/// Reverse names: a ClusterIP names its Service, an endpoint's address
/// its endpoint under the Service; others are handed upstream.
#[test]
fn reverse_names() {
    let c = cluster();
    let slices = steady_slices(&c);
    let ptr = |name: &str| {
        let r = query(&c, &slices, name, Qtype::Ptr);
        (r.rcode, texts(&r.answer))
    };
    assert_eq!(
        ptr("1.0.0.10.in-addr.arpa."),
        (
            OK,
            vec!["1.0.0.10.in-addr.arpa. 30 IN PTR svc1.testns.svc.cluster.local.".to_string()]
        )
    );
    assert_eq!(
        ptr("4.0.0.172.in-addr.arpa."),
        (
            OK,
            vec![
                "4.0.0.172.in-addr.arpa. 30 IN PTR dup-name.hdls1.testns.svc.cluster.local."
                    .to_string()
            ]
        )
    );
    assert_eq!(ptr("9.9.9.9.in-addr.arpa.").0, Rcode::Upstream);
    // The zone's apex has its NS (with the DNS Service's address) and SOA.
    let ns = query(&c, &slices, "cluster.local.", Qtype::Ns);
    assert_eq!(
        texts(&ns.answer),
        ["cluster.local. 30 IN NS ns.dns.cluster.local."]
    );
    assert_eq!(
        texts(&ns.extra),
        ["ns.dns.cluster.local. 30 IN A 10.0.0.10"]
    );
    let soa = query(&c, &slices, "cluster.local.", Qtype::Soa);
    assert_eq!(soa.answer.len(), 1);
}
