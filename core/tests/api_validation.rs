//! Objects the API server would refuse are refused here too, with the API
//! server's own message at the object's field; what it would default is
//! defaulted; kpv's own limits are said to be the simulator's.

use kpv_core::model::{Cluster, NamespacedName};
use kpv_core::util::diag::{Diagnostic, Severity};

fn parse(yaml: &str) -> (Cluster, Vec<Diagnostic>) {
    kpv_core::Code::ALL.parse(yaml)
}

fn errors(diags: &[Diagnostic]) -> Vec<&Diagnostic> {
    diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect()
}

/// Exactly one error, whose message contains `needle`, at `field`.
fn refused(yaml: &str, needle: &str, field: &str) -> Cluster {
    let (c, diags) = parse(yaml);
    let errs = errors(&diags);
    let Some(d) = errs.iter().find(|d| d.message.contains(needle)) else {
        panic!("no error containing {needle:?} for\n{yaml}\n{errs:#?}")
    };
    assert_eq!(d.field.as_deref(), Some(field), "{d}");
    assert!(d.span.is_some(), "located: {d}");
    assert!(d.hint.is_some(), "says how to fix it: {d}");
    c
}

fn service(name: &str, ns: &str, spec: &str) -> String {
    format!("apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n{spec}")
}

#[test]
fn names_and_namespaces_follow_the_api_rules() {
    let label1035 = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
    let label1123 = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    let ports = "  ports: [{port: 80}]\n";
    // (name, namespace, expected message or None when accepted, field)
    let cases: &[(&str, &str, Option<String>, &str)] = &[
        ("web", "default", None, ""),
        ("web-1", "team-a", None, ""),
        (
            "1web",
            "default",
            Some(format!("Invalid value: \"1web\": {label1035}")),
            "metadata.name",
        ),
        (
            "web.api",
            "default",
            Some(format!("Invalid value: \"web.api\": {label1035}")),
            "metadata.name",
        ),
        (
            "Web",
            "default",
            Some(format!("Invalid value: \"Web\": {label1035}")),
            "metadata.name",
        ),
        (
            "web-",
            "default",
            Some(format!("Invalid value: \"web-\": {label1035}")),
            "metadata.name",
        ),
        (
            &"a".repeat(64),
            "default",
            Some("must be no more than 63 characters".into()),
            "metadata.name",
        ),
        (
            "web",
            "Team_A",
            Some(format!("Invalid value: \"Team_A\": {label1123}")),
            "metadata.namespace",
        ),
        (
            "web",
            "team.a",
            Some(format!("Invalid value: \"team.a\": {label1123}")),
            "metadata.namespace",
        ),
        ("web", "\"1team\"", None, ""),
    ];
    for (name, ns, msg, field) in cases {
        let yaml = service(name, ns, ports);
        match msg {
            None => {
                let (c, diags) = parse(&yaml);
                assert!(errors(&diags).is_empty(), "{name} {ns}: {diags:#?}");
                assert_eq!(c.services.len(), 1);
            }
            Some(m) => {
                let c = refused(&yaml, m, field);
                assert!(
                    c.services.is_empty(),
                    "refused objects are not in the cluster"
                );
            }
        }
    }
    // Other kinds' names are DNS-1123 subdomains: dots are fine.
    let (c, diags) = parse("apiVersion: v1\nkind: Pod\nmetadata: {name: web.v1}\n");
    assert!(errors(&diags).is_empty(), "{diags:#?}");
    assert_eq!(c.pods.len(), 1);
    refused(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web_v1}\n",
        "a lowercase RFC 1123 subdomain must consist of",
        "metadata.name",
    );
}

#[test]
fn api_version_is_checked_per_kind() {
    // A Knative Service is not a core Service.
    let knative = "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: hello}\nspec:\n  template:\n    spec:\n      containers: [{image: hello}]\n";
    let (c, diags) = parse(knative);
    assert!(c.services.is_empty());
    let w = diags
        .iter()
        .find(|d| d.field.as_deref() == Some("apiVersion"))
        .unwrap_or_else(|| panic!("{diags:#?}"));
    assert_eq!(w.severity, Severity::Warning);
    assert!(
        w.message.contains("serving.knative.dev/v1") && w.message.contains("skipped"),
        "{w}"
    );
    assert_eq!(w.span.map(|s| s.line), Some(1));
    // (yaml, services kept, warning needle or "")
    let cases: &[(&str, usize, &str)] = &[
        ("apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n", 1, ""),
        ("kind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n", 1, "apiVersion not set"),
        ("apiVersion: example.com/v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n", 0, "is not the Kubernetes Service"),
    ];
    for (yaml, kept, needle) in cases {
        let (c, diags) = parse(yaml);
        assert_eq!(c.services.len(), *kept, "{yaml}");
        if needle.is_empty() {
            assert!(
                !diags
                    .iter()
                    .any(|d| d.field.as_deref() == Some("apiVersion")),
                "{diags:#?}"
            );
        } else {
            assert!(
                diags.iter().any(|d| d.message.contains(needle)),
                "{needle}: {diags:#?}"
            );
        }
    }
    // A removed API version is read, with the release that removed it.
    let old = "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: nginx}]}\n";
    let (c, diags) = parse(old);
    assert_eq!(c.pods.len(), 1);
    assert!(
        diags
            .iter()
            .any(|d| d.message.contains("removed in Kubernetes 1.16")
                && d.message.contains("apps/v1")),
        "{diags:#?}"
    );
}

fn pod_with_probe(probe: &str) -> String {
    format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:\n  - name: c\n    image: nginx\n    readinessProbe:\n      httpGet: {{path: /, port: 80}}\n{probe}")
}

#[test]
fn probe_zeros_are_defaulted_and_negatives_refused() {
    /// (period, timeout, success, failure)
    type Timings = (u32, u32, u32, u32);
    let cases: &[(&str, Timings)] = &[
        ("", (10, 1, 1, 3)),
        ("      periodSeconds: 0\n      timeoutSeconds: 0\n      successThreshold: 0\n      failureThreshold: 0\n", (10, 1, 1, 3)),
        ("      periodSeconds: 5\n      failureThreshold: 0\n", (5, 1, 1, 3)),
        ("      periodSeconds: 2\n      timeoutSeconds: 2\n      successThreshold: 2\n      failureThreshold: 1\n", (2, 2, 2, 1)),
    ];
    for (fields, want) in cases {
        let (c, diags) = parse(&pod_with_probe(fields));
        assert!(errors(&diags).is_empty(), "{fields}: {diags:#?}");
        let p = c.pods[0]
            .readiness_probe()
            .unwrap_or_else(|| panic!("probe"));
        assert_eq!(
            (
                p.period_seconds,
                p.timeout_seconds,
                p.success_threshold,
                p.failure_threshold
            ),
            *want,
            "{fields}"
        );
    }
    refused(
        &pod_with_probe("      periodSeconds: -1\n"),
        "Invalid value: -1: must be greater than or equal to 0",
        "spec.containers[0].readinessProbe.periodSeconds",
    );
    let liveness = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: nginx\n    livenessProbe:\n      tcpSocket: {port: 80}\n      successThreshold: 2\n";
    refused(
        liveness,
        "Invalid value: 2: must be 1",
        "spec.containers[0].livenessProbe.successThreshold",
    );
}

#[test]
fn the_simulators_own_limits_say_so() {
    let cases: &[(&str, &str, &str)] = &[
        ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 5000\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: nginx}]}\n", "spec.replicas", "1000"),
        (&pod_with_probe("      periodSeconds: 100000\n"), "spec.containers[0].readinessProbe.periodSeconds", "86400"),
    ];
    for (yaml, field, limit) in cases {
        let (_, diags) = parse(yaml);
        let d = diags
            .iter()
            .find(|d| d.field.as_deref() == Some(*field))
            .unwrap_or_else(|| panic!("{field}: {diags:#?}"));
        assert_eq!(d.severity, Severity::Warning, "{d}");
        assert!(
            d.message.contains("kpv simulates") && d.message.contains(limit),
            "{d}"
        );
        assert!(d.message.contains("Kubernetes itself accepts it"), "{d}");
    }
    let (c, _) = parse(cases[0].0);
    assert_eq!(c.pods.len(), 1000);
    // Negative replicas are the API's error, not the simulator's.
    let neg = cases[0].0.replace("5000", "-1");
    let c = refused(&neg, "must be greater than or equal to 0", "spec.replicas");
    assert!(c.service(&NamespacedName::new("default", "web")).is_none());
}

/// A Service document with the given spec lines.
fn svc(name: &str, spec: &str) -> String {
    format!("apiVersion: v1\nkind: Service\nmetadata: {{name: {name}}}\nspec:\n{spec}---\n")
}

const CIDR_V4: &str = "apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata: {name: kubernetes}\nspec: {cidrs: [10.96.0.0/16]}\n---\n";
const CIDR_DUAL: &str = "apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata: {name: kubernetes}\nspec: {cidrs: [10.96.0.0/16, \"fd00:10:96::/112\"]}\n---\n";

#[test]
fn services_the_api_server_refuses() {
    // (input, message as the API server words it, field, Services kept)
    let cases: Vec<(String, &str, &str, usize)> = vec![
        // A NodePort used by two Services: the second is refused.
        (
            format!("{}{}", svc("a", "  type: NodePort\n  ports: [{port: 80, nodePort: 30080}]\n"), svc("b", "  type: NodePort\n  ports: [{port: 81, nodePort: 30080}]\n")),
            "The Service \"b\" is invalid: Invalid value: 30080: provided port is already allocated",
            "spec.ports[0].nodePort",
            1,
        ),
        // …also across protocols and between a port and a health check port.
        (
            format!("{}{}", svc("a", "  type: NodePort\n  ports: [{port: 53, protocol: UDP, nodePort: 30053}]\n"), svc("b", "  type: NodePort\n  ports: [{port: 53, protocol: TCP, nodePort: 30053}]\n")),
            "provided port is already allocated",
            "spec.ports[0].nodePort",
            1,
        ),
        // The same port and protocol twice in one Service.
        (
            svc("a", "  ports:\n  - {name: a, port: 80}\n  - {name: b, port: 80, targetPort: 8080}\n"),
            "Duplicate value: core.ServicePort{Name:\"\", Protocol:\"TCP\", AppProtocol:(*string)(nil), Port:80",
            "spec.ports[1]",
            0,
        ),
        // The same nodePort twice in one Service, same protocol.
        (
            svc("a", "  type: NodePort\n  ports:\n  - {name: a, port: 80, nodePort: 30080}\n  - {name: b, port: 81, nodePort: 30080}\n"),
            "Duplicate value: 30080",
            "spec.ports[1].nodePort",
            0,
        ),
        // nodePort on a ClusterIP Service.
        (
            svc("a", "  ports: [{port: 80, nodePort: 30080}]\n"),
            "Forbidden: may not be used when `type` is 'ClusterIP'",
            "spec.ports[0].nodePort",
            0,
        ),
        // A ClusterIP outside the service CIDR.
        (
            format!("{CIDR_V4}{}", svc("a", "  clusterIP: 10.200.0.1\n  ports: [{port: 80}]\n")),
            "Invalid value: []string{\"10.200.0.1\"}: failed to allocate IP 10.200.0.1: the provided IP (10.200.0.1) is not in the valid range. The range of valid IPs is 10.96.0.0/16",
            "spec.clusterIPs",
            0,
        ),
        // …or its network address.
        (
            format!("{CIDR_V4}{}", svc("a", "  clusterIP: 10.96.0.0\n  ports: [{port: 80}]\n")),
            "is not in the valid range",
            "spec.clusterIPs",
            0,
        ),
        // A ClusterIP already taken.
        (
            format!("{CIDR_V4}{}{}", svc("a", "  clusterIP: 10.96.0.10\n  ports: [{port: 80}]\n"), svc("b", "  clusterIP: 10.96.0.10\n  ports: [{port: 80}]\n")),
            "failed to allocate IP 10.96.0.10: provided IP is already allocated",
            "spec.clusterIPs",
            1,
        ),
        // A family the cluster lacks.
        (
            format!("{CIDR_V4}{}", svc("a", "  clusterIP: fd00::10\n  ports: [{port: 80}]\n")),
            "Invalid value: []string{\"fd00::10\"}: IPv6 is not configured on this cluster",
            "spec.clusterIPs[0]",
            0,
        ),
        (
            format!("{CIDR_V4}{}", svc("a", "  ipFamilies: [IPv6]\n  ports: [{port: 80}]\n")),
            "Invalid value: \"IPv6\": not configured on this cluster",
            "spec.ipFamilies[0]",
            0,
        ),
        (
            format!("{CIDR_V4}{}", svc("a", "  ipFamilyPolicy: RequireDualStack\n  ports: [{port: 80}]\n")),
            "Invalid value: \"RequireDualStack\": this cluster is not configured for dual-stack services",
            "spec.ipFamilyPolicy",
            0,
        ),
        // Families listed twice, or not a family.
        (
            svc("a", "  ipFamilyPolicy: PreferDualStack\n  ipFamilies: [IPv4, IPv4]\n  ports: [{port: 80}]\n"),
            "Duplicate value: \"IPv4\"",
            "spec.ipFamilies[1]",
            0,
        ),
        (
            svc("a", "  ipFamilies: [IPv5]\n  ports: [{port: 80}]\n"),
            "Unsupported value: \"IPv5\": supported values: \"IPv4\", \"IPv6\"",
            "spec.ipFamilies[0]",
            0,
        ),
        (
            svc("a", "  ipFamilyPolicy: DualStack\n  ports: [{port: 80}]\n"),
            "Unsupported value: \"DualStack\": supported values: \"PreferDualStack\", \"RequireDualStack\", \"SingleStack\"",
            "spec.ipFamilyPolicy",
            0,
        ),
        // Two families without a dual-stack policy.
        (
            format!("{CIDR_DUAL}{}", svc("a", "  ipFamilies: [IPv4, IPv6]\n  ports: [{port: 80}]\n")),
            "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
            "spec.ipFamilyPolicy",
            0,
        ),
        // clusterIPs that disagree with clusterIP or ipFamilies.
        (
            svc("a", "  clusterIP: 10.96.0.10\n  clusterIPs: [10.96.0.11]\n  ports: [{port: 80}]\n"),
            "first value must match `clusterIP`",
            "spec.clusterIPs",
            0,
        ),
        (
            svc("a", "  ipFamilyPolicy: PreferDualStack\n  clusterIPs: [10.96.0.10, 10.96.0.11]\n  ports: [{port: 80}]\n"),
            "may specify no more than one IP for each IP family",
            "spec.clusterIPs",
            0,
        ),
        (
            svc("a", "  clusterIP: 10.96.0.10\n  ipFamilies: [IPv6]\n  ports: [{port: 80}]\n"),
            "expected an IPv6 value as indicated by `ipFamilies[0]`",
            "spec.clusterIP",
            0,
        ),
    ];
    for (yaml, msg, field, kept) in &cases {
        let c = refused(yaml, msg, field);
        assert_eq!(c.services.len(), *kept, "{msg}\n{yaml}");
    }
}

#[test]
fn node_ports_outside_the_range() {
    let yaml = svc(
        "a",
        "  type: NodePort\n  ports: [{port: 80, nodePort: 8080}]\n",
    );
    // The API server's range is a flag: with the default, the Service is
    // refused, which kpv says (a warning: the range may have been widened).
    let (c, diags) = parse(&yaml);
    let d = diags
        .iter()
        .find(|d| d.field.as_deref() == Some("spec.ports[0].nodePort"))
        .unwrap_or_else(|| panic!("{diags:#?}"));
    assert_eq!(d.severity, Severity::Warning);
    assert!(d.message.contains("Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767"), "{d}");
    assert_eq!(c.services.len(), 1);
    // Declared by a kubeadm ClusterConfiguration (either extraArgs form).
    for config in [
        "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\napiServer:\n  extraArgs:\n  - {name: service-node-port-range, value: 30000-31000}\n---\n",
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\napiServer:\n  extraArgs: {service-node-port-range: \"30000+1000\"}\n---\n",
    ] {
        let c = refused(
            &format!("{config}{yaml}"),
            "The range of valid ports is 30000-31000",
            "spec.ports[0].nodePort",
        );
        assert!(c.services.is_empty());
        // Inside a declared wider range, it is fine.
        let wide = config.replace("30000-31000", "8000-32767").replace("30000+1000", "8000+24767");
        let (c, diags) = parse(&format!("{wide}{yaml}"));
        assert!(errors(&diags).is_empty(), "{diags:#?}");
        assert_eq!(c.services[0].ports[0].node_port, Some(8080));
    }
}

#[test]
fn dual_stack_policies_get_both_families() {
    // (CIDRs, spec, expected families of the ClusterIPs in order)
    use kpv_core::model::packet::IpFamily::{V4, V6};
    let cases: &[(&str, &str, &[kpv_core::model::packet::IpFamily])] = &[
        (CIDR_DUAL, "  ipFamilyPolicy: RequireDualStack\n", &[V4, V6]),
        (CIDR_DUAL, "  ipFamilyPolicy: PreferDualStack\n", &[V4, V6]),
        (
            CIDR_DUAL,
            "  ipFamilyPolicy: PreferDualStack\n  ipFamilies: [IPv6]\n",
            &[V6, V4],
        ),
        (
            CIDR_DUAL,
            "  ipFamilyPolicy: RequireDualStack\n  clusterIP: 10.96.0.50\n",
            &[V4, V6],
        ),
        (CIDR_DUAL, "", &[V4]),
        (
            CIDR_DUAL,
            "  ipFamilyPolicy: SingleStack\n  ipFamilies: [IPv6]\n",
            &[V6],
        ),
        // PreferDualStack on a single-stack cluster: one family, no error.
        (CIDR_V4, "  ipFamilyPolicy: PreferDualStack\n", &[V4]),
        // Without ServiceCIDRs, asking for dual-stack makes the cluster so.
        ("", "  ipFamilyPolicy: RequireDualStack\n", &[V4, V6]),
    ];
    for (cidrs, spec, want) in cases {
        let yaml = format!(
            "{cidrs}{}",
            svc("web", &format!("{spec}  ports: [{{port: 80}}]\n"))
        );
        let (c, diags) = parse(&yaml);
        assert!(errors(&diags).is_empty(), "{spec}: {diags:#?}");
        let got: Vec<_> = c.services[0]
            .cluster_ips
            .iter()
            .map(kpv_core::model::packet::IpFamily::of)
            .collect();
        assert_eq!(&got, want, "{spec}");
        if spec.contains("10.96.0.50") {
            assert_eq!(c.services[0].cluster_ips[0].to_string(), "10.96.0.50");
        }
    }
}

#[test]
fn dual_stack_services_get_rules_in_both_families() {
    let yaml = format!(
        "{CIDR_DUAL}apiVersion: v1\nkind: Node\nmetadata: {{name: n1}}\nspec: {{podCIDRs: [10.244.0.0/24, \"fd00:244::/64\"]}}\nstatus:\n  addresses:\n  - {{type: InternalIP, address: 192.168.0.2}}\n  - {{type: InternalIP, address: \"2001:db8::2\"}}\n---\n{}",
        svc("web", "  ipFamilyPolicy: RequireDualStack\n  selector: {app: web}\n  ports: [{port: 80}]\n")
    ) + "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: nginx}]}\n";
    let (c, diags) = parse(&yaml);
    assert!(errors(&diags).is_empty(), "{diags:#?}");
    let slices = kpv_core::net::controller::steady_slices(&c);
    for family in [
        kpv_core::model::packet::IpFamily::V4,
        kpv_core::model::packet::IpFamily::V6,
    ] {
        let input = kpv_core::net::proxy::build_input(&c, &slices, "n1", family)
            .unwrap_or_else(|| panic!("{family:?} input"));
        let ip = c.services[0]
            .cluster_ips
            .iter()
            .find(|ip| kpv_core::model::packet::IpFamily::of(ip) == family)
            .unwrap_or_else(|| panic!("{family:?} ClusterIP"));
        assert!(
            input.services.values().any(|s| s.cluster_ip == Some(*ip)),
            "{family:?}: kube-proxy of that family sees the Service"
        );
        // Pods on a dual-stack node have an address of each family, so the
        // Service has endpoints in both.
        let endpoints: usize = input.endpoints.values().map(Vec::len).sum();
        assert_eq!(endpoints, 2, "{family:?}");
    }
}

#[test]
fn an_exhausted_service_cidr_refuses_with_the_api_message() {
    // A /29 has five allocatable addresses (.0 network, .1 reserved, .7 broadcast).
    let cidr = "apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata: {name: tiny}\nspec: {cidrs: [10.96.0.0/29]}\n---\n";
    let mut yaml = cidr.to_string();
    for i in 0..8 {
        yaml.push_str(&svc(&format!("s{i}"), "  ports: [{port: 80}]\n"));
    }
    let (c, diags) = parse(&yaml);
    let full: Vec<_> = errors(&diags)
        .into_iter()
        .filter(|d| {
            d.message
                .contains("Internal error occurred: failed to allocate a serviceIP: range is full")
        })
        .collect();
    assert!(!full.is_empty(), "{diags:#?}");
    assert_eq!(c.services.len() + full.len(), 8);
    for s in &c.services {
        assert_eq!(s.cluster_ips.len(), 1, "{}", s.id);
    }
    for d in full {
        assert_eq!(d.field.as_deref(), Some("spec.clusterIPs"));
        assert!(d.span.is_some());
    }
}

#[test]
fn labels_port_names_and_other_fields_the_api_refuses() {
    let pod = |meta: &str, port: &str| {
        format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n{meta}spec:\n  containers:\n  - name: c\n    image: nginx\n    ports: [{{containerPort: 80{port}}}]\n")
    };
    // (yaml, message, field)
    let cases: Vec<(String, &str, &str)> = vec![
        (
            pod("  labels: {app: \"web server\"}\n", ""),
            "Invalid value: \"web server\": a valid label must be an empty string or consist of alphanumeric characters",
            "metadata.labels",
        ),
        (
            pod(&format!("  labels: {{app: {}}}\n", "v".repeat(64)), ""),
            "must be no more than 63 characters",
            "metadata.labels",
        ),
        (
            pod("  labels: {\"Example.com/app\": web}\n", ""),
            "prefix part a lowercase RFC 1123 subdomain",
            "metadata.labels",
        ),
        (
            pod("  labels: {\"-app\": web}\n", ""),
            "name part must consist of alphanumeric characters",
            "metadata.labels",
        ),
        (
            pod("", ", name: HTTP"),
            "Invalid value: \"HTTP\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-), must contain at least one letter (a-z)",
            "spec.containers[0].ports[0].name",
        ),
        (
            pod("", ", name: web-server-http-1"),
            "must be no more than 15 characters",
            "spec.containers[0].ports[0].name",
        ),
        (
            pod("", ", name: a--b"),
            "must not contain consecutive hyphens",
            "spec.containers[0].ports[0].name",
        ),
        (
            svc("s", "  ports:\n  - {name: HTTP, port: 80}\n"),
            "Invalid value: \"HTTP\": a lowercase RFC 1123 label must consist of",
            "spec.ports[0].name",
        ),
        (
            svc("s", "  type: ExternalName\n  externalName: DB.Example.com\n"),
            "Invalid value: \"DB.Example.com\": a lowercase RFC 1123 subdomain must consist of",
            "spec.externalName",
        ),
        (
            svc("s", "  type: NodePort\n  loadBalancerSourceRanges: [10.0.0.0/8]\n  ports: [{port: 80}]\n"),
            "Forbidden: may only be used when `type` is 'LoadBalancer'",
            "spec.loadBalancerSourceRanges",
        ),
        (
            svc("s", "  type: NodePort\n  clusterIP: None\n  ports: [{port: 80}]\n"),
            "only ClusterIP Services can be headless (clusterIP: None)",
            "spec.clusterIP",
        ),
        (
            svc("s", "  sessionAffinity: Sticky\n  ports: [{port: 80}]\n"),
            "unknown session affinity `Sticky`",
            "spec.sessionAffinity",
        ),
        (
            svc("s", "  internalTrafficPolicy: Nearby\n  ports: [{port: 80}]\n"),
            "unknown traffic policy `Nearby`",
            "spec.internalTrafficPolicy",
        ),
        (
            svc("s", "  ipFamilyPolicy: SingleStack\n  ipFamilies: [IPv4, IPv6]\n  ports: [{port: 80}]\n"),
            "Invalid value: \"SingleStack\": must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
            "spec.ipFamilyPolicy",
        ),
        (
            svc("s", "  trafficDistribution: Anywhere\n  ports: [{port: 80}]\n"),
            "unknown trafficDistribution `Anywhere`",
            "spec.trafficDistribution",
        ),
        (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: nginx}]}\n".to_string(),
            "Required value",
            "spec.selector",
        ),
        (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: api}}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {containers: [{name: c, image: nginx}]}\n".to_string(),
            "Invalid value: map[string]string{\"app\":\"web\", \"tier\":\"front\"}: `selector` does not match template `labels`",
            "spec.template.metadata.labels",
        ),
    ];
    for (yaml, msg, field) in &cases {
        refused(yaml, msg, field);
    }
    // What the API accepts stays accepted.
    for yaml in [
        pod(
            "  labels: {app.kubernetes.io/name: web, empty: \"\", v: 1.2_x}\n",
            ", name: http-alt",
        ),
        svc(
            "s",
            "  type: ExternalName\n  externalName: db.example.com.\n",
        ),
        svc(
            "s",
            "  ports:\n  - {name: http-2, port: 80}\n  - {name: '8443', port: 8443}\n",
        ),
    ] {
        let (_, diags) = parse(&yaml);
        assert!(errors(&diags).is_empty(), "{yaml}\n{diags:#?}");
    }
}

#[test]
fn an_endpointslice_holds_at_most_1000_endpoints() {
    let slice = |n: usize| {
        let eps: Vec<String> = (0..n)
            .map(|i| format!("- addresses: [10.1.{}.{}]", i / 250, i % 250 + 1))
            .collect();
        format!("apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: web-1\n  labels: {{kubernetes.io/service-name: web}}\naddressType: IPv4\nports: [{{port: 80}}]\nendpoints:\n{}\n", eps.join("\n"))
    };
    let (_, diags) = parse(&slice(1000));
    assert!(errors(&diags).is_empty(), "{:#?}", errors(&diags));
    refused(
        &slice(1001),
        "Too many: 1001: must have at most 1000 items",
        "endpoints",
    );
}
