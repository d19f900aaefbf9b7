//! The ingress conformance suite's features (`features/*.feature`) with
//! their own manifests, scenario by scenario: host rules (the manifest as
//! printed, TLS included), the default backend (every example row), load
//! balancing over ten replicas, and the ingress class. `http_ingress.rs`
//! has the path rules feature and the API's own tables.

use kpv_core::cli::{parse_args, run, Output};
use serde_json::Value;

/// One node and the feature's backends: each a Deployment and a Service on
/// port 8080 (named port `http`), with `replicas` Pods.
fn backends(names: &[(&str, u32)]) -> String {
    let mut s = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {podCIDR: 10.244.1.0/24}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.11}]}\n---\n".to_string();
    for (name, replicas) in names {
        s.push_str(&format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec: {{replicas: {replicas}, selector: {{matchLabels: {{app: {name}}}}}, template: {{metadata: {{labels: {{app: {name}}}}}, spec: {{containers: [{{name: c, ports: [{{containerPort: 3000}}]}}]}}}}}}\n---\napiVersion: v1\nkind: Service\nmetadata: {{name: {name}}}\nspec: {{selector: {{app: {name}}}, ports: [{{name: http, port: 8080, targetPort: 3000}}]}}\n---\n"));
    }
    s
}

/// A controller that is not ingress-nginx (the suite tests the API, not
/// ingress-nginx's own defaults such as its HTTP→HTTPS redirect).
const CLASS: &str = "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: conformance, annotations: {ingressclass.kubernetes.io/is-default-class: \"true\"}}\nspec: {controller: example.com/conformance}\n---\n";

fn kpv(yaml: &str, args: &[&str]) -> Output {
    let mut all: Vec<String> = vec![args[0].to_string(), "in.yaml".to_string()];
    all.extend(args[1..].iter().map(|s| s.to_string()));
    match parse_args(&all) {
        Ok(cmd) => run(&cmd, &[yaml.to_string()], &["in.yaml".to_string()]),
        Err(e) => panic!("{args:?}: {e}"),
    }
}

fn http(yaml: &str, args: &[&str]) -> Value {
    let mut all = vec!["http"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--via", "ingressclass/conformance", "--format", "json"]);
    let o = kpv(yaml, &all);
    assert_eq!(o.code, 0, "{args:?}: {}", o.stderr);
    serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", o.stdout))
}

/// (URL, status, Service, Host the backend sees, certificate presented)
type HostRow = (
    &'static str,
    u64,
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
);

/// host_rules.feature: its Ingress as printed (a wildcard rule, an exact
/// host with a named port, TLS for the exact host) and all six scenarios.
#[test]
fn host_rules_feature() {
    let yaml = [
        backends(&[("wildcard-foo-com", 1), ("foo-bar-com", 1)]),
        CLASS.to_string(),
        "apiVersion: v1\nkind: Secret\nmetadata: {name: conformance-tls}\ntype: kubernetes.io/tls\n---\n".into(),
        r#"apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: host-rules
spec:
  tls:
    - hosts:
        - foo.bar.com
      secretName: conformance-tls
  rules:
    - host: "*.foo.com"
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: wildcard-foo-com
                port:
                  number: 8080
    - host: foo.bar.com
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: foo-bar-com
                port:
                  name: http
"#
        .into(),
    ]
    .concat();
    let o = kpv(&yaml, &["check", "--format", "json"]);
    let v: Value = serde_json::from_str(&o.stdout).expect("json");
    assert!(
        v["ingresses"][0]["address"].is_string(),
        "the status shows an address: {}",
        o.stdout
    );
    let table: [HostRow; 6] = [
        (
            "https://foo.bar.com",
            200,
            Some("default/foo-bar-com:8080"),
            Some("foo.bar.com"),
            Some("default/conformance-tls"),
        ),
        (
            "http://foo.bar.com",
            200,
            Some("default/foo-bar-com:8080"),
            Some("foo.bar.com"),
            None,
        ),
        ("http://subdomain.bar.com", 404, None, None, None),
        (
            "http://bar.foo.com",
            200,
            Some("default/wildcard-foo-com:8080"),
            Some("bar.foo.com"),
            None,
        ),
        ("http://baz.bar.foo.com", 404, None, None, None),
        ("http://foo.com", 404, None, None, None),
    ];
    for (url, status, backend, host, cert) in table {
        let v = http(&yaml, &[url]);
        assert_eq!(v["status"], status, "{url}");
        assert_eq!(v["backend"].as_str(), backend, "{url}");
        if status == 200 {
            assert_eq!(v["request"]["host"].as_str(), host, "{url}");
            assert!(v["pod"].is_string(), "{url}: served by a Pod");
        }
        assert_eq!(v["tls_certificate"].as_str(), cert, "{url}");
    }
}

/// default_backend.feature: an Ingress with only `defaultBackend` sends
/// every method, host (or none: the address itself) and path there,
/// unchanged.
#[test]
fn default_backend_feature() {
    let yaml = [
        backends(&[("echo-service", 1)]),
        CLASS.to_string(),
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: default-backend}\nspec:\n  defaultBackend:\n    service:\n      name: echo-service\n      port:\n        number: 8080\n".into(),
    ]
    .concat();
    let o = kpv(&yaml, &["check", "--format", "json"]);
    let v: Value = serde_json::from_str(&o.stdout).expect("json");
    assert!(v["ingresses"][0]["address"].is_string(), "{}", o.stdout);
    // No host: the request goes to the controller's address.
    let address = v["ingresses"][0]["address"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    for (method, host, path) in [
        ("GET", "my-host", ""),
        ("GET", "my-host", "sub-path"),
        ("POST", "some-host", ""),
        ("PUT", "", "resource"),
        ("DELETE", "some-host", "resource"),
        ("PATCH", "my-host", "resource"),
    ] {
        let host = if host.is_empty() {
            address.as_str()
        } else {
            host
        };
        let url = format!("http://{host}/{path}");
        let v = http(&yaml, &[&url, "-X", method]);
        assert_eq!(v["status"], 200, "{method} {url}");
        assert_eq!(v["backend"], "default/echo-service:8080", "{method} {url}");
        assert_eq!(v["request"]["method"], method, "{method} {url}");
        assert_eq!(v["request"]["path"], format!("/{path}"), "{method} {url}");
        assert_eq!(v["reason"]["kind"], "default-backend", "{method} {url}");
    }
}

/// load_balancing.feature: the default backend scaled to 10 replicas; 100
/// requests (here 100 seeds) reach all 10 Pods.
#[test]
fn load_balancing_feature() {
    let yaml = [
        backends(&[("echo-service", 10)]),
        CLASS.to_string(),
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: load-balancing}\nspec:\n  defaultBackend:\n    service:\n      name: echo-service\n      port:\n        number: 8080\n".into(),
    ]
    .concat();
    let mut pods = std::collections::BTreeSet::new();
    for seed in 0..100 {
        let seed = seed.to_string();
        let v = http(&yaml, &["http://load-balancing/", "--seed", &seed]);
        assert_eq!(v["status"], 200, "seed {seed}");
        pods.insert(v["pod"].as_str().unwrap_or_default().to_string());
    }
    assert_eq!(pods.len(), 10, "{pods:?}");
}

/// ingress_class.feature: an Ingress whose class no controller serves gets
/// no address, and no entry point takes its requests.
#[test]
fn ingress_class_feature() {
    let yaml = [
        backends(&[("ingress-class-prefix", 1)]),
        CLASS.to_string(),
        r#"apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: test-ingress-class
spec:
  ingressClassName: some-invalid-class-name
  rules:
    - host: "ingress-class"
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: ingress-class-prefix
                port:
                  number: 8080
"#
        .into(),
    ]
    .concat();
    let o = kpv(&yaml, &["check", "--format", "json"]);
    let v: Value = serde_json::from_str(&o.stdout).expect("json");
    assert_eq!(v["ingresses"][0]["address"], Value::Null, "{}", o.stdout);
    let o = kpv(
        &yaml,
        &[
            "http",
            "http://ingress-class/",
            "--via",
            "ingressclass/some-invalid-class-name",
        ],
    );
    assert_ne!(o.code, 0, "{}", o.stdout);
    // Through the class that is served, the host has no rule: 404.
    let v = http(&yaml, &["http://ingress-class/"]);
    assert_eq!(v["status"], 404);
}
