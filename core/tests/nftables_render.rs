//! The nftables renderer: chain-name test vectors from kube-proxy's tests,
//! golden `nft list table` snapshots (reviewed by hand), and structural checks
//! that the two text forms and the JSON dump describe the same table.

use kpv_core::model::packet::{IpFamily, Protocol};
use kpv_core::model::Mode;
use kpv_core::net::modes::nftables::{self, endpoint_chain_base, hash_and_truncate, render};
use kpv_core::net::modes::{self, Dataplane};
use kpv_core::net::proxy::{build_input, ProxyInput, ServicePortName};

const OVERALL: &str = include_str!("../../tests/scenarios/nftables-overall.yaml");

fn overall_input() -> ProxyInput {
    let (cluster, diags) = kpv_core::Code::ALL.parse(OVERALL);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    let mut input = build_input(
        &cluster,
        &cluster.endpoint_slices,
        "test-node",
        IpFamily::V4,
    )
    .expect("test-node");
    // As upstream: svc4 has no NodePort (see the scenario's header).
    if let Some(s) = input
        .services
        .get_mut(&spn("ns4", "svc4", "p80", Protocol::Tcp))
    {
        s.node_port = 0;
    }
    input
}

fn spn(ns: &str, name: &str, port: &str, protocol: Protocol) -> ServicePortName {
    ServicePortName {
        service: kpv_core::model::NamespacedName::new(ns, name),
        port: port.into(),
        protocol,
    }
}

#[test]
fn chain_name_hash_vectors() {
    // From kube-proxy's nftables tests and a real cluster dump.
    for (input, hash) in [
        ("ns1/svc1/tcp/p80", "ULMVA6XW"),
        ("ns2/svc2/tcp/p80", "42NFTM6N"),
        ("ns3/svc3/tcp/p80", "4AT6LBPK"),
        ("ns4/svc4/tcp/p80", "LAUZTJTB"),
        ("ns5/svc5/tcp/p80", "HVFWP5L3"),
        ("ns2/svc2/tcp/p8080", "MHHHYRWA"),
        ("ns1/svc1/tcp/p80__10.180.0.1/80", "5OJB2KTY"),
        ("ns2/svc2/tcp/p80__10.180.0.2/80", "SGOXE6O3"),
        ("ns3/svc3/tcp/p80__10.180.0.3/80", "UEIP74TE"),
        ("ns4/svc4/tcp/p80__10.180.0.4/80", "UNZV3OEC"),
        ("ns4/svc4/tcp/p80__10.180.0.5/80", "5RFCDDV7"),
        ("ns5/svc5/tcp/p80__10.180.0.3/80", "GTK6MW7G"),
        ("ns1/svc1/tcp/p80__10.0.1.1/80", "5TPGNJF2"),
        ("ns2/svc2/tcp/p8080__10.0.2.1/8080", "7RVP4LUQ"),
        ("default/kubernetes/tcp/https", "2QRHZV4L"),
        ("kube-system/kube-dns/udp/dns", "FY5PMXPG"),
        ("kube-system/kube-dns/tcp/dns-tcp", "NWBZK7IH"),
        ("kube-system/kube-dns/tcp/metrics", "AS2KJYAD"),
        ("riset/hellopod-np-svc/tcp/", "P6J77WGM"),
    ] {
        assert_eq!(
            hash_and_truncate(input),
            format!("{hash}-{input}"),
            "{input}"
        );
    }
    assert_eq!(
        nftables::service_chain_base(&spn("kube-system", "kube-dns", "dns", Protocol::Udp)),
        "FY5PMXPG-kube-system/kube-dns/udp/dns"
    );
    assert_eq!(
        nftables::service_chain_base(&spn("riset", "hellopod-np-svc", "", Protocol::Tcp)),
        "P6J77WGM-riset/hellopod-np-svc/tcp/"
    );
    assert_eq!(
        endpoint_chain_base(
            &spn("ns1", "svc1", "p80", Protocol::Tcp),
            &"10.180.0.1:80".parse().unwrap()
        ),
        "5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80"
    );
    // IPv6: colons become dots before hashing.
    let v6 = endpoint_chain_base(
        &spn("ns1", "svc1", "p80", Protocol::Tcp),
        &"[fd00:10:180::1]:80".parse().unwrap(),
    );
    assert!(v6.ends_with("-ns1/svc1/tcp/p80__fd00.10.180..1/80"), "{v6}");
    assert_eq!(
        &v6[..9],
        &hash_and_truncate("ns1/svc1/tcp/p80__fd00.10.180..1/80")[..9]
    );
}

#[test]
fn long_names_are_truncated_to_240() {
    let long = format!("ns/{}/tcp/p", "x".repeat(300));
    let got = hash_and_truncate(&long);
    assert_eq!(got.len(), 240);
    assert!(got.ends_with("..."));
}

#[test]
fn priorities_print_like_nft() {
    use nftables::model::NfHook;
    assert_eq!(
        render::priority_text(NfHook::Prerouting, -110),
        "dstnat - 10"
    );
    assert_eq!(render::priority_text(NfHook::Prerouting, -100), "dstnat");
    assert_eq!(render::priority_text(NfHook::Output, -110), "-110");
    assert_eq!(render::priority_text(NfHook::Output, -100), "-100");
    assert_eq!(render::priority_text(NfHook::Input, 0), "filter");
    assert_eq!(render::priority_text(NfHook::Postrouting, 100), "srcnat");
    assert_eq!(render::priority_text(NfHook::Output, -90), "-90");
    assert_eq!(render::duration_text(10800), "3h");
    assert_eq!(render::duration_text(90), "1m30s");
}

#[test]
fn overall_listing_snapshot() {
    let dp = modes::Compilers::ALL.compile(Mode::Nftables, &overall_input(), Default::default());
    insta::assert_snapshot!("nftables_overall_listing", dp.render_text());
}

#[test]
fn listing_and_add_commands_describe_the_same_rules() {
    let dp = nftables::compile(&overall_input());
    let t = dp.table();
    let text = dp.render_text();
    let lines: Vec<&str> = text.lines().collect();
    // Every rule of every chain appears, in order, inside its chain block.
    for c in &t.chains {
        let header = format!("\tchain {} {{", c.name);
        let start = lines
            .iter()
            .position(|l| *l == header)
            .expect("chain block");
        let end = start
            + lines[start..]
                .iter()
                .position(|l| *l == "\t}")
                .expect("block end");
        let body: Vec<&str> = lines[start + 1..end]
            .iter()
            .filter(|l| !l.starts_with("\t\ttype ") && !l.starts_with("\t\tcomment "))
            .map(|l| l.trim_start_matches('\t'))
            .collect();
        let want: Vec<String> = c
            .rules
            .iter()
            .map(|r| render::rule_text(t.family, r, render::Style::List))
            .collect();
        assert_eq!(body, want, "chain {}", c.name);
    }
    // The add-command form has one `add rule` per rule and one `add element`
    // per element.
    let adds = dp.render_add_commands();
    assert_eq!(
        adds.lines().filter(|l| l.starts_with("add rule ")).count(),
        dp.rule_count()
    );
    let elems: usize = t.sets.iter().map(|s| s.elements.len()).sum::<usize>()
        + t.maps.iter().map(|m| m.elements.len()).sum::<usize>();
    assert_eq!(
        adds.lines()
            .filter(|l| l.starts_with("add element "))
            .count(),
        elems
    );
    // JSON has the same chains and rule counts.
    let j = dp.render_json();
    let chains = j["chains"].as_array().expect("chains");
    assert_eq!(chains.len(), t.chains.len());
    let json_rules: usize = chains
        .iter()
        .map(|c| c["rules"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(json_rules, dp.rule_count());
    assert_eq!(j["table"]["family"], "ip");
    assert_eq!(j["maps"][0]["name"], "service-ips");
}

#[test]
fn ipv6_listing_snapshot() {
    let yaml = r#"
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
clusterCIDR: "fd00:10::/64"
---
apiVersion: v1
kind: Node
metadata: {name: test-node}
status:
  addresses:
  - {type: InternalIP, address: "2001:db8::1"}
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {name: kubernetes}
spec: {cidrs: ["fd00:10:96::/112"]}
---
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
    let (cluster, diags) = kpv_core::Code::ALL.parse(yaml);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    let input = build_input(
        &cluster,
        &cluster.endpoint_slices,
        "test-node",
        IpFamily::V6,
    )
    .expect("test-node");
    let dp = modes::Compilers::ALL.compile(Mode::Nftables, &input, Default::default());
    insta::assert_snapshot!("nftables_ipv6_listing", dp.render_text());
}

/// kube-proxy gives the nftables proxier `nftables.masqueradeBit`
/// (`createProxier` in server_linux.go) and the iptables and IPVS proxiers
/// `iptables.masqueradeBit`; each mode's rules use its own.
#[test]
fn each_mode_marks_with_its_own_masquerade_bit() {
    let config = "apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
iptables: {masqueradeBit: 10}
nftables: {masqueradeBit: 5}
";
    let text = OVERALL
        .split("\n---\n")
        .filter(|d| !d.contains("kind: KubeProxyConfiguration"))
        .chain([config])
        .collect::<Vec<_>>()
        .join("\n---\n");
    let (cluster, diags) = kpv_core::Code::ALL.parse(&text);
    assert!(diags.is_empty(), "{diags:#?}");
    let slices = kpv_core::net::controller::steady_slices(&cluster);
    let rules = |mode: Mode| {
        let sim = kpv_core::net::trace::Sim::new(
            &cluster,
            &slices,
            mode,
            None,
            kpv_core::net::modes::Compilers::ALL,
        );
        sim.dataplane("test-node", IpFamily::V4)
            .map(|dp| dp.render_text())
            .unwrap_or_default()
    };
    let nft = rules(Mode::Nftables);
    assert!(
        nft.contains("meta mark set meta mark | 0x00000020"),
        "{nft}"
    );
    assert!(!nft.contains("0x00000400"), "{nft}");
    for mode in [Mode::Iptables, Mode::Ipvs] {
        let text = rules(mode);
        assert!(text.contains("--mark 0x400/0x400"), "{mode:?}:\n{text}");
    }
    // Default: bit 14.
    let default = nftables::compile(&overall_input()).render_text();
    assert!(default.contains("meta mark set meta mark | 0x00004000"));
}
