//! Parsing and validation: the seed scenario, API-server defaults, and one
//! test per class of bad input (each must give a located diagnostic, never a panic).

use kpv_core::model::{NamespacedName, ServiceType, SliceSource};
use kpv_core::util::diag::{Diagnostic, Severity, Span};
use std::net::IpAddr;

const SEED: &str = include_str!("../../tests/scenarios/alpaca-bandicoot.yaml");

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap_or_else(|_| panic!("bad test IP {s}"))
}

/// Parse and return the diagnostics of one severity.
fn diags_of(yaml: &str, sev: Severity) -> Vec<Diagnostic> {
    let (_, diags) = kpv_core::Code::ALL.parse(yaml);
    diags.into_iter().filter(|d| d.severity == sev).collect()
}

/// One error whose message contains `needle`, at `field` and `line`.
fn check_error(yaml: &str, needle: &str, field: &str, line: usize) {
    let errors = diags_of(yaml, Severity::Error);
    let found = errors.iter().find(|d| d.message.contains(needle));
    let Some(d) = found else {
        panic!("no error containing {needle:?} in {errors:#?}")
    };
    assert_eq!(d.field.as_deref(), Some(field), "{d}");
    assert_eq!(d.span.map(|s| s.line), Some(line), "{d}");
    assert!(d.hint.is_some(), "errors say how to fix them: {d}");
}

#[test]
fn seed_scenario_parses_without_errors() {
    let (cluster, diags) = kpv_core::Code::ALL.parse(SEED);
    assert!(diags.is_empty(), "{diags:#?}");
    assert_eq!(cluster.nodes.len(), 3);
    assert_eq!(cluster.workloads.len(), 2);
    assert_eq!(cluster.services.len(), 2);
    let alpacas: Vec<_> = cluster
        .pods
        .iter()
        .filter(|p| p.owner.as_deref() == Some("alpaca-prod"))
        .collect();
    assert_eq!(alpacas.len(), 3);
    for p in &alpacas {
        // <deployment>-<pod-template-hash>-<5 chars>
        let rest = p.id.name.strip_prefix("alpaca-prod-").unwrap_or("");
        let (hash, suffix) = rest.rsplit_once('-').unwrap_or(("", ""));
        assert!(!hash.is_empty() && suffix.len() == 5, "{}", p.id.name);
        assert_eq!(p.labels.get("app").map(String::as_str), Some("alpaca"));
        let node = cluster
            .node(p.node_name.as_deref().unwrap_or(""))
            .unwrap_or_else(|| panic!("pod on no node"));
        let cidr = node.pod_cidrs[0];
        assert!(cidr.contains(&p.ips[0]), "{} not in {cidr}", p.ips[0]);
    }
    // Three replicas on three nodes: one each.
    let mut nodes: Vec<_> = alpacas.iter().filter_map(|p| p.node_name.clone()).collect();
    nodes.sort();
    nodes.dedup();
    assert_eq!(nodes.len(), 3);
    let svc = cluster
        .service(&NamespacedName::new("default", "alpaca-service"))
        .unwrap_or_else(|| panic!("no service"));
    assert_eq!(svc.service_type, ServiceType::ClusterIP);
    let cidr: ipnet::IpNet = "10.96.0.0/12".parse().unwrap_or_else(|_| panic!());
    assert!(cidr.contains(&svc.cluster_ips[0]));
    let probe = cluster.pods[0]
        .readiness_probe()
        .unwrap_or_else(|| panic!("no probe"));
    assert_eq!(
        (
            probe.period_seconds,
            probe.failure_threshold,
            probe.success_threshold
        ),
        (2, 3, 1)
    );
}

#[test]
fn parsing_is_deterministic_and_allocation_is_stable() {
    let (a, _) = kpv_core::Code::ALL.parse(SEED);
    let (b, _) = kpv_core::Code::ALL.parse(SEED);
    assert_eq!(a, b);
    // Adding an unrelated Service does not move the others' addresses.
    let more = format!("{SEED}\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: zebra\nspec:\n  type: NodePort\n  selector: {{app: zebra}}\n  ports:\n  - port: 80\n");
    let (c, _) = kpv_core::Code::ALL.parse(&more);
    for s in &a.services {
        let same = c.service(&s.id).map(|x| x.cluster_ips.clone());
        assert_eq!(same, Some(s.cluster_ips.clone()), "{}", s.id);
    }
    let zebra = c
        .service(&NamespacedName::new("default", "zebra"))
        .unwrap_or_else(|| panic!());
    let np = zebra.ports[0].node_port.unwrap_or(0);
    assert!((30000..=32767).contains(&np), "{np}");
}

#[test]
fn malformed_yaml_has_document_line_and_column() {
    let yaml = "apiVersion: v1\nkind: Service\nmetadata:\n  name: ok\nspec:\n  ports: [{port: 80}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: [broken\n";
    let errors = diags_of(yaml, Severity::Error);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0].document, 1);
    assert!(
        errors[0].span.is_some_and(|s| s.line >= 10),
        "{}",
        errors[0]
    );
    assert!(errors[0].message.contains("syntax"));
}

#[test]
fn bad_ip_is_located() {
    check_error(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  clusterIP: 10.96.300.1\n  ports:\n  - port: 80\n",
        "not a valid IP",
        "spec.clusterIP",
        6,
    );
}

#[test]
fn bad_cidr_is_located() {
    check_error(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  type: LoadBalancer\n  ports:\n  - port: 80\n  loadBalancerSourceRanges:\n  - 10.0.0.0/40\n",
        "not a valid CIDR",
        "spec.loadBalancerSourceRanges[0]",
        10,
    );
}

#[test]
fn port_out_of_range_is_located() {
    check_error(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: alpaca-service\nspec:\n  ports:\n  - port: 70000\n",
        "out of range",
        "spec.ports[0].port",
        7,
    );
    let errors = diags_of("apiVersion: v1\nkind: Service\nmetadata:\n  name: alpaca-service\nspec:\n  ports:\n  - port: 70000\n", Severity::Error);
    assert_eq!(
        errors[0].object.as_deref(),
        Some("Service/default/alpaca-service")
    );
    assert_eq!(
        errors[0].span,
        Some(Span {
            line: 7,
            column: 11
        })
    );
}

#[test]
fn selector_matching_nothing_is_a_warning() {
    let warnings = diags_of("apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  selector:\n    app: nothing\n  ports:\n  - port: 80\n", Severity::Warning);
    assert!(
        warnings
            .iter()
            .any(|d| d.message.contains("matches no Pod")
                && d.field.as_deref() == Some("spec.selector")),
        "{warnings:#?}"
    );
}

#[test]
fn duplicate_names_are_errors_and_the_first_wins() {
    let yaml = "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  ports:\n  - port: 80\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  ports:\n  - port: 81\n";
    check_error(yaml, "duplicate Service", "metadata.name", 12);
    let (cluster, _) = kpv_core::Code::ALL.parse(yaml);
    assert_eq!(cluster.services.len(), 1);
    assert_eq!(cluster.services[0].ports[0].port, 80);
}

#[test]
fn unknown_kinds_and_fields_are_skipped_with_warnings() {
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  prots: []\n  ports:\n  - port: 80\n";
    let warnings = diags_of(yaml, Severity::Warning);
    assert!(
        warnings.iter().any(|d| d.message.contains("ConfigMap")),
        "{warnings:#?}"
    );
    assert!(
        warnings
            .iter()
            .any(|d| d.field.as_deref() == Some("spec.prots")),
        "{warnings:#?}"
    );
    assert!(diags_of(yaml, Severity::Error).is_empty());
}

#[test]
fn multi_port_services_need_port_names() {
    check_error(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  ports:\n  - port: 80\n  - port: 443\n",
        "must be named",
        "spec.ports[0].name",
        7,
    );
}

#[test]
fn leading_zeros_are_normalised() {
    let (cluster, diags) = kpv_core::Code::ALL.parse("apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  clusterIP: 010.096.000.010\n  externalIPs: [001.002.003.004]\n  ports:\n  - port: 80\n");
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    assert_eq!(cluster.services[0].cluster_ips, vec![ip("10.96.0.10")]);
    assert_eq!(cluster.services[0].external_ips, vec![ip("1.2.3.4")]);
}

#[test]
fn kind_list_items_are_objects_with_item_paths() {
    let yaml = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata:\n    name: a\n  spec:\n    ports:\n    - port: 80\n- apiVersion: v1\n  kind: Service\n  metadata:\n    name: b\n  spec:\n    ports:\n    - port: 0\n";
    let (cluster, diags) = kpv_core::Code::ALL.parse(yaml);
    assert_eq!(cluster.services.len(), 2);
    let e = diags
        .iter()
        .find(|d| d.is_error())
        .unwrap_or_else(|| panic!("{diags:#?}"));
    assert_eq!(e.field.as_deref(), Some("items[1].spec.ports[0].port"));
}

#[test]
fn legacy_endpoints_of_selectorless_services_are_mirrored() {
    let yaml = "apiVersion: v1\nkind: Service\nmetadata:\n  name: db\nspec:\n  ports:\n  - port: 5432\n---\napiVersion: v1\nkind: Endpoints\nmetadata:\n  name: db\nsubsets:\n- addresses:\n  - ip: 203.0.113.50\n  notReadyAddresses:\n  - ip: 203.0.113.51\n  ports:\n  - port: 5432\n";
    let (cluster, diags) = kpv_core::Code::ALL.parse(yaml);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    assert_eq!(cluster.endpoint_slices.len(), 1);
    let s = &cluster.endpoint_slices[0];
    assert_eq!(s.source, SliceSource::Mirrored);
    assert_eq!(s.service_name, "db");
    assert_eq!(s.endpoints.len(), 2);
    assert!(s.endpoints[0].ready && !s.endpoints[1].ready);
    assert_eq!(s.ports[0].port, 5432);
    // The name hashes `default/db#mirror0V4`. Pinned: the shipped .wasm is
    // built without Debug formatting, and must name the slice as the CLI does.
    assert_eq!(s.id.name, "db-6gvlx");
}

#[test]
fn arbitrary_bytes_never_panic_the_parser() {
    // A deterministic sweep of awkward inputs (the fuzz target covers more).
    let samples = [
        "",
        "---",
        "- a\n- b",
        "kind: [",
        "kind: Service\nmetadata: 5",
        "{{{{",
        "kind: List\nitems: 5",
        "kind: Service\nmetadata:\n  name: s\nspec:\n  ports: {a: b}",
        "\u{0}\u{1}\u{2}",
        "a: &x *x",
        "kind: Pod\nmetadata:\n  name: p\nspec:\n  containers: [{ports: [{containerPort: x}]}]",
    ];
    for s in samples {
        let _ = kpv_core::Code::ALL.parse(s);
    }
}

/// A Node given without addresses gets one from the simulator, and says so
/// on that Node (its diagram box and its lines in the editor are marked).
#[test]
fn a_node_without_addresses_is_warned_about_on_that_node() {
    let text = "apiVersion: v1\nkind: Node\nmetadata: {name: bare}\nspec: {podCIDR: 10.244.1.0/24}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: full}\nspec: {podCIDR: 10.244.2.0/24}\nstatus: {addresses: [{type: InternalIP, address: 192.168.5.5}]}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: host-only}\nstatus: {addresses: [{type: Hostname, address: host-only}]}\n";
    let (c, d) = kpv_core::Code::ALL.parse(text);
    let warned: Vec<(&str, Option<usize>)> = d
        .iter()
        .filter(|d| d.field.as_deref() == Some("status.addresses"))
        .map(|d| (d.object.as_deref().unwrap_or(""), d.span.map(|s| s.line)))
        .collect();
    assert_eq!(
        warned,
        vec![("Node/bare", Some(3)), ("Node/host-only", Some(15))]
    );
    // Each still gets an address, and none collides with the real one.
    let ips: Vec<_> = c
        .nodes
        .iter()
        .map(|n| n.addresses[0].1.to_string())
        .collect();
    assert_eq!(ips.len(), 3);
    assert!(ips.contains(&"192.168.5.5".to_string()));
    assert_eq!(
        ips.iter().collect::<std::collections::BTreeSet<_>>().len(),
        3
    );
}

/// A chart's eleven ServiceAccounts are one warning that names them all,
/// not eleven; the list of modelled kinds is said once, on the first kind.
#[test]
fn unmodelled_kinds_are_one_warning_per_kind_naming_the_objects() {
    let mut yaml = String::new();
    for i in 0..11 {
        yaml.push_str(&format!(
            "---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa{i}\n"
        ));
    }
    yaml.push_str("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n");
    let warnings = diags_of(&yaml, Severity::Warning);
    let skipped: Vec<_> = warnings
        .iter()
        .filter(|d| d.message.contains("not modelled"))
        .collect();
    assert_eq!(skipped.len(), 2, "{skipped:#?}");
    assert_eq!(
        skipped[0].message,
        "kind `ServiceAccount` is not modelled: 11 objects skipped \
         (sa0, sa1, sa2, sa3, sa4, sa5, sa6, sa7 and 3 more)"
    );
    assert_eq!(skipped[0].document, 0, "{}", skipped[0]);
    assert_eq!(skipped[0].object.as_deref(), Some("ServiceAccount"));
    assert!(
        skipped[0]
            .hint
            .as_deref()
            .is_some_and(|h| h.contains("Service, ")),
        "{}",
        skipped[0]
    );
    assert_eq!(
        skipped[1].message,
        "kind `ConfigMap` is not modelled and is skipped"
    );
    assert_eq!(skipped[1].object.as_deref(), Some("ConfigMap/settings"));
    assert_eq!(skipped[1].hint, None, "the kinds are listed once");
}

/// Without Node objects and without a nodeName anywhere, kpv assumes three
/// nodes, says which (name, address, Pod CIDR), and spreads a Deployment's
/// replicas over them as the default scheduler does.
#[test]
fn without_nodes_three_are_assumed_stated_and_replicas_spread() {
    let yaml = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: web}]}
";
    let (c, diags) = kpv_core::Code::ALL.parse(yaml);
    let names: Vec<&str> = c.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["node-1", "node-2", "node-3"]);
    let mut on: Vec<&str> = c
        .pods
        .iter()
        .filter_map(|p| p.node_name.as_deref())
        .collect();
    on.sort();
    assert_eq!(on, ["node-1", "node-2", "node-3"], "one replica per node");
    let stated: Vec<_> = diags
        .iter()
        .filter(|d| d.message.starts_with("no Node objects given"))
        .collect();
    assert_eq!(stated.len(), 1, "{diags:#?}");
    assert_eq!(
        stated[0].message,
        "no Node objects given; assuming 3 nodes: node-1 (192.168.0.2, Pods 10.244.0.0/24); \
         node-2 (192.168.0.3, Pods 10.244.1.0/24); node-3 (192.168.0.4, Pods 10.244.2.0/24)"
    );
}
