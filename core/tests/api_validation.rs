//! Objects the API server would refuse are refused here too, with the API
//! server's own message at the object's field; what it would default is
//! defaulted; kpv's own limits are said to be the simulator's.

use kpv_core::diag::{Diagnostic, Severity};
use kpv_core::model::{self, Cluster, NamespacedName};

fn parse(yaml: &str) -> (Cluster, Vec<Diagnostic>) {
    model::parse(yaml)
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
