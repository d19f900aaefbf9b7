//! Ingress semantics as the Ingress documentation and the ingress
//! conformance suite's features (host rules, path rules, default backend,
//! TLS) state them, and the API server's validation messages: each table
//! sends requests through `kpv_core::http::walk`.

use kpv_core::cli::requests::{request, HttpArgs, HttpFrom};
use kpv_core::http::journey::ClusterBackends;
use kpv_core::http::walk::{Decision, Reason};
use kpv_core::http::{compile, walk, EntryPoint};
use kpv_core::util::choose::Chooser;
use kpv_core::util::diag::Diagnostic;

/// Two nodes, backends a–d (one Pod each, port 80 → 8080), an empty
/// Service, the ingress-nginx IngressClass (default) and a TLS Secret.
const BASE: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: n1}
spec: {podCIDR: 10.244.1.0/24}
status: {addresses: [{type: InternalIP, address: 192.168.0.11}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: a}
spec: {replicas: 1, selector: {matchLabels: {app: a}}, template: {metadata: {labels: {app: a}}, spec: {containers: [{name: c}]}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: b}
spec: {replicas: 1, selector: {matchLabels: {app: b}}, template: {metadata: {labels: {app: b}}, spec: {containers: [{name: c}]}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: c}
spec: {replicas: 1, selector: {matchLabels: {app: c}}, template: {metadata: {labels: {app: c}}, spec: {containers: [{name: c}]}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec: {replicas: 1, selector: {matchLabels: {app: d}}, template: {metadata: {labels: {app: d}}, spec: {containers: [{name: c}]}}}
---
apiVersion: v1
kind: Service
metadata: {name: a}
spec: {selector: {app: a}, ports: [{name: http, port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: b}
spec: {selector: {app: b}, ports: [{name: http, port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: c}
spec: {selector: {app: c}, ports: [{name: http, port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: d}
spec: {selector: {app: d}, ports: [{name: http, port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: empty}
spec: {selector: {app: nobody}, ports: [{port: 80}]}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx, annotations: {ingressclass.kubernetes.io/is-default-class: "true"}}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: v1
kind: Secret
metadata: {name: tls-a}
type: kubernetes.io/tls
"#;

fn ingress(rules: &str) -> String {
    format!(
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: test}}\nspec:\n{rules}"
    )
}

fn path(p: &str, ty: &str, svc: &str) -> String {
    format!("          - {{path: {p}, pathType: {ty}, backend: {{service: {{name: {svc}, port: {{number: 80}}}}}}}}\n")
}

fn decide(yaml: &str, class: &str, url: &str, sni: Option<&str>) -> Decision {
    decide_with(yaml, class, url, sni, &[])
}

fn decide_with(
    yaml: &str,
    class: &str,
    url: &str,
    sni: Option<&str>,
    headers: &[(&str, &str)],
) -> Decision {
    let text = format!("{BASE}\n---\n{yaml}");
    let (cluster, diags) = kpv_core::Code::ALL.parse(&text);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    let rt = compile(&cluster.routing, &cluster);
    let slices = kpv_core::net::controller::steady_slices(&cluster);
    let view = ClusterBackends {
        cluster: &cluster,
        slices: &slices,
    };
    let args = HttpArgs {
        url: url.to_string(),
        via: None,
        sni: sni.map(str::to_string),
        method: "GET".into(),
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        backend_headers: Vec::new(),
        from: HttpFrom::External,
        seed: 1,
    };
    let req = request(&args).expect("valid request");
    walk(
        &rt,
        &EntryPoint::IngressClass(class.into()),
        &req,
        &view,
        &mut Chooser::new(1),
    )
    .expect("the class has a table")
}

/// The Service that got the request, or the status.
fn outcome(d: &Decision) -> String {
    match (&d.backend, d.status) {
        (Some(b), Some(200)) => b.service.name.clone(),
        (_, Some(s)) => s.to_string(),
        (_, None) => "-".into(),
    }
}

/// The documentation's pathType examples with several paths in one Ingress.
#[test]
fn longest_path_wins_and_exact_beats_prefix() {
    type Paths<'a> = &'a [(&'a str, &'a str, &'a str)];
    let cases: &[(Paths, &str, &str)] = &[
        (
            &[("/", "Prefix", "a"), ("/aaa", "Prefix", "b")],
            "/aaa/ccc",
            "b",
        ),
        (
            &[
                ("/", "Prefix", "a"),
                ("/aaa", "Prefix", "b"),
                ("/aaa/bbb", "Prefix", "c"),
            ],
            "/aaa/bbb",
            "c",
        ),
        (
            &[
                ("/", "Prefix", "a"),
                ("/aaa", "Prefix", "b"),
                ("/aaa/bbb", "Prefix", "c"),
            ],
            "/ccc",
            "a",
        ),
        (&[("/aaa", "Prefix", "b")], "/ccc", "404"),
        (
            &[("/foo", "Prefix", "a"), ("/foo", "Exact", "b")],
            "/foo",
            "b",
        ),
        (
            &[("/foo", "Prefix", "a"), ("/foo", "Exact", "b")],
            "/foo/",
            "a",
        ),
        (&[("/foo", "Exact", "b")], "/foo/", "404"),
        (&[("/aaa/bbb", "Prefix", "a")], "/aaa/bbbxyz", "404"),
        (&[("/aaa/bbb/", "Prefix", "a")], "/aaa/bbb", "a"),
        // ImplementationSpecific as ingress-nginx without use-regex: an
        // nginx prefix location, compared character by character.
        (&[("/aaa", "ImplementationSpecific", "a")], "/aaaxyz", "a"),
    ];
    for (paths, req, want) in cases {
        let mut rules =
            String::from("  rules:\n    - host: foo.com\n      http:\n        paths:\n");
        for (p, t, s) in *paths {
            rules.push_str(&path(p, t, s));
        }
        let d = decide(
            &ingress(&rules),
            "nginx",
            &format!("http://foo.com{req}"),
            None,
        );
        assert_eq!(outcome(&d), *want, "{paths:?} {req}: {:?}", d.compared);
    }
}

/// Host rules: exact, a one-label wildcard, and rules without a host.
#[test]
fn host_rules() {
    let rules = format!(
        "  rules:\n    - host: foo.bar.com\n      http:\n        paths:\n{}    - host: \"*.foo.com\"\n      http:\n        paths:\n{}    - http:\n        paths:\n{}",
        path("/", "Prefix", "a"),
        path("/", "Prefix", "b"),
        path("/", "Prefix", "c")
    );
    for (host, want) in [
        ("foo.bar.com", "a"),
        ("bar.foo.com", "b"),
        ("baz.bar.foo.com", "c"),
        ("foo.com", "c"),
        ("other.example", "c"),
    ] {
        let d = decide(&ingress(&rules), "nginx", &format!("http://{host}/"), None);
        assert_eq!(outcome(&d), want, "{host}");
    }
    let only_hosts = format!(
        "  rules:\n    - host: \"*.foo.com\"\n      http:\n        paths:\n{}",
        path("/", "Prefix", "b")
    );
    for (host, want) in [
        ("bar.foo.com", "b"),
        ("baz.bar.foo.com", "404"),
        ("foo.com", "404"),
    ] {
        let d = decide(
            &ingress(&only_hosts),
            "nginx",
            &format!("http://{host}/"),
            None,
        );
        assert_eq!(outcome(&d), want, "{host}");
    }
}

#[test]
fn default_backend_takes_what_no_rule_matches() {
    let yaml = format!(
        "{}  defaultBackend: {{service: {{name: d, port: {{number: 80}}}}}}\n",
        ingress(&format!(
            "  rules:\n    - host: foo.com\n      http:\n        paths:\n{}",
            path("/app", "Prefix", "a")
        ))
    );
    for (url, want, reason) in [
        ("http://foo.com/app", "a", Reason::Routed),
        ("http://foo.com/other", "d", Reason::DefaultBackend),
        ("http://unknown.example/", "d", Reason::DefaultBackend),
    ] {
        let d = decide(&yaml, "nginx", url, None);
        assert_eq!((outcome(&d), d.reason), (want.to_string(), reason), "{url}");
    }
}

#[test]
fn missing_service_and_no_endpoints_answer_503() {
    let rules = format!(
        "  rules:\n    - http:\n        paths:\n{}{}",
        path("/missing", "Prefix", "nope"),
        path("/empty", "Prefix", "empty")
    );
    let d = decide(&ingress(&rules), "nginx", "http://x.com/missing", None);
    assert_eq!((d.status, d.reason), (Some(503), Reason::ServiceNotFound));
    let d = decide(&ingress(&rules), "nginx", "http://x.com/empty", None);
    assert_eq!((d.status, d.reason), (Some(503), Reason::NoReadyEndpoints));
}

#[test]
fn tls_by_sni_and_ingress_nginx_redirects_http_to_https() {
    let yaml = format!(
        "{}  tls: [{{hosts: [foo.com], secretName: tls-a}}]\n",
        ingress(&format!(
            "  rules:\n    - host: foo.com\n      http:\n        paths:\n{}    - host: bar.com\n      http:\n        paths:\n{}",
            path("/", "Prefix", "a"),
            path("/", "Prefix", "b")
        ))
    );
    let d = decide(&yaml, "nginx", "https://foo.com/x", None);
    assert_eq!(outcome(&d), "a");
    assert_eq!(
        d.tls_certificate.map(|c| c.to_string()).as_deref(),
        Some("default/tls-a")
    );
    // bar.com has no Secret: the controller's own certificate, and no redirect.
    let d = decide(&yaml, "nginx", "https://bar.com/", None);
    assert!(d.default_certificate && d.tls_certificate.is_none());
    let d = decide(&yaml, "nginx", "http://bar.com/", None);
    assert_eq!(outcome(&d), "b");
    // HTTP to a host listed under tls: 308 to the same URL on https.
    let d = decide(&yaml, "nginx", "http://foo.com/x?y=1", None);
    assert_eq!(d.status, Some(308));
    assert_eq!(
        d.redirect.map(|r| r.location).as_deref(),
        Some("https://foo.com/x?y=1")
    );
    // The certificate follows SNI, the rule the Host header.
    let d = decide(&yaml, "nginx", "https://bar.com/", Some("foo.com"));
    assert_eq!(outcome(&d), "b");
    assert_eq!(
        d.tls_certificate.map(|c| c.to_string()).as_deref(),
        Some("default/tls-a")
    );
    // ssl-redirect: "false" turns the redirect off.
    let off = yaml.replace(
        "metadata: {name: test}",
        "metadata: {name: test, annotations: {nginx.ingress.kubernetes.io/ssl-redirect: \"false\"}}",
    );
    let d = decide(&off, "nginx", "http://foo.com/x", None);
    assert_eq!(outcome(&d), "a");
}

#[test]
fn the_class_picks_the_controller() {
    let one = |name: &str, class: &str, svc: &str| {
        format!(
            "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: {name}{class}}}\nspec:\n  rules:\n    - host: {name}.com\n      http:\n        paths:\n{}",
            path("/", "Prefix", svc)
        )
    };
    let yaml = [
        one("named", "}\nspec:\n  ingressClassName: other\n#", "a").replace("#}\nspec:\n", ""),
        one(
            "legacy",
            ", annotations: {kubernetes.io/ingress.class: other}",
            "b",
        ),
        one("defaulted", "", "c"),
    ]
    .join("---\n");
    let text = format!("{BASE}\n---\n{yaml}");
    let (cluster, diags) = kpv_core::Code::ALL.parse(&text);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    let classes: Vec<(String, Option<String>)> = cluster
        .routing
        .ingresses
        .iter()
        .map(|i| {
            (
                i.meta.id.name.clone(),
                kpv_core::http::table::ingress_class_of(&cluster.routing, i),
            )
        })
        .collect();
    assert_eq!(
        classes,
        [
            ("named".to_string(), Some("other".to_string())),
            ("legacy".to_string(), Some("other".to_string())),
            ("defaulted".to_string(), Some("nginx".to_string())),
        ]
    );
    assert_eq!(
        outcome(&decide(&yaml, "nginx", "http://defaulted.com/", None)),
        "c"
    );
    assert_eq!(
        outcome(&decide(&yaml, "nginx", "http://named.com/", None)),
        "404"
    );
    assert_eq!(
        outcome(&decide(&yaml, "other", "http://named.com/", None)),
        "a"
    );
    assert_eq!(
        outcome(&decide(&yaml, "other", "http://legacy.com/", None)),
        "b"
    );
}

fn errors(yaml: &str) -> Vec<Diagnostic> {
    let (_, diags) = kpv_core::Code::ALL.parse(yaml);
    diags
}

/// What the API server says about invalid Ingresses, at the right field.
#[test]
fn validation_as_the_api_server_does() {
    let bad = |p: &str| {
        format!("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: x}}\nspec:\n  rules:\n    - host: foo.com\n      http:\n        paths:\n          - {p}\n")
    };
    let svc = "backend: {service: {name: a, port: {number: 80}}}";
    for (path_yaml, field, message) in [
        (format!("{{path: /, {svc}}}"), "spec.rules[0].http.paths[0].pathType", "Required value: pathType must be specified"),
        (format!("{{path: foo, pathType: Prefix, {svc}}}"), "spec.rules[0].http.paths[0].path", "Invalid value: \"foo\": must be an absolute path"),
        (format!("{{path: /a//b, pathType: Exact, {svc}}}"), "spec.rules[0].http.paths[0].path", "must not contain '//'"),
        (format!("{{path: /a/../b, pathType: Prefix, {svc}}}"), "spec.rules[0].http.paths[0].path", "must not contain '/../'"),
        ("{path: /, pathType: Prefix, backend: {service: {name: a, port: {number: 80, name: http}}}}".into(), "spec.rules[0].http.paths[0].backend.service.port", "cannot set both port name & port number"),
        ("{path: /, pathType: Prefix, backend: {service: {name: a}}}".into(), "spec.rules[0].http.paths[0].backend.service.port", "port name or number is required"),
        (format!("{{path: /, pathType: Sideways, {svc}}}"), "spec.rules[0].http.paths[0].pathType", "Unsupported value: \"Sideways\""),
    ] {
        let d = errors(&bad(&path_yaml));
        let hit = d.iter().find(|d| d.is_error() && d.field.as_deref() == Some(field));
        assert!(
            hit.is_some_and(|d| d.message.contains(message) && d.span.is_some()),
            "{path_yaml}: {d:#?}"
        );
    }
    let ip_host = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: x}\nspec:\n  rules:\n    - host: 10.0.0.1\n      http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: a, port: {number: 80}}}}]}\n";
    assert!(errors(ip_host)
        .iter()
        .any(|d| d.field.as_deref() == Some("spec.rules[0].host")
            && d.message.contains("must be a DNS name, not an IP address")));
    let star = ip_host.replace("10.0.0.1", "\"foo.*.com\"");
    assert!(errors(&star)
        .iter()
        .any(|d| d.field.as_deref() == Some("spec.rules[0].host")
            && d.message.contains("wildcard DNS-1123 subdomain")
            || d.message.contains("RFC 1123 subdomain")));
}

/// The article's own manifest loads, converted, with one warning.
#[test]
fn the_articles_extensions_v1beta1_ingress_loads_with_a_warning() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/http");
    let article = std::fs::read_to_string(root.join("article-ingress.yaml")).expect("readable");
    let (cluster, diags) = kpv_core::Code::ALL.parse(&article);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    // (Alone it has no Node, which the model also warns about.)
    let warnings: Vec<&Diagnostic> = diags
        .iter()
        .filter(|d| d.object.as_deref() == Some("Ingress/default/test-ingress"))
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    let w = warnings[0];
    assert_eq!(w.field.as_deref(), Some("apiVersion"));
    assert!(
        w.message.contains("removed in Kubernetes 1.22"),
        "{}",
        w.message
    );
    assert!(
        w.message.contains("read as networking.k8s.io/v1"),
        "{}",
        w.message
    );
    assert!(
        w.message
            .contains("pathType defaulted to ImplementationSpecific"),
        "{}",
        w.message
    );
    assert!(
        w.message.contains("service.name `service-test`"),
        "{}",
        w.message
    );
    let ing = &cluster.routing.ingresses[0];
    assert_eq!(ing.class_annotation.as_deref(), Some("gce"));
    assert_eq!(ing.rules[0].paths[0].path, "/*");
    assert_eq!(
        ing.rules[0].paths[0].path_type,
        kpv_core::model::routing::PathType::ImplementationSpecific
    );
}

/// The ingress conformance suite: an Ingress of a class no controller
/// serves gets no address; a controller other than ingress-nginx answers
/// plain HTTP for a TLS host (host_rules.feature), where ingress-nginx's
/// documented default redirects it.
#[test]
fn unserved_classes_get_no_address_and_only_ingress_nginx_redirects() {
    let yaml = format!(
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: test-ingress-class}}\nspec:\n  ingressClassName: some-invalid-class-name\n  rules:\n    - host: ingress-class\n      http:\n        paths:\n{}",
        path("/", "Prefix", "a")
    );
    let text = format!("{BASE}\n---\n{yaml}");
    let args: Vec<String> = ["check", "in.yaml", "--format", "json"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let cmd = kpv_core::cli::parse_args(&args).expect("valid arguments");
    let out = kpv_core::cli::run(&cmd, std::slice::from_ref(&text), &["in.yaml".to_string()]);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(
        v["ingresses"][0]["address"],
        serde_json::Value::Null,
        "{}",
        out.stdout
    );
    let args: Vec<String> = [
        "http",
        "in.yaml",
        "http://ingress-class/",
        "--via",
        "ingressclass/some-invalid-class-name",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let cmd = kpv_core::cli::parse_args(&args).expect("valid arguments");
    let out = kpv_core::cli::run(&cmd, &[text], &["in.yaml".to_string()]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("no controller serves this class"),
        "{}",
        out.stderr
    );

    let other = "---\napiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: other}\nspec: {controller: example.com/other}\n";
    let tls = format!(
        "{}  ingressClassName: other\n  tls: [{{hosts: [foo.bar.com], secretName: tls-a}}]\n{other}",
        ingress(&format!(
            "  rules:\n    - host: foo.bar.com\n      http:\n        paths:\n{}",
            path("/", "Prefix", "a")
        ))
    );
    let d = decide(&tls, "other", "http://foo.bar.com/", None);
    assert_eq!(outcome(&d), "a");
    let d = decide(&tls, "other", "http://subdomain.bar.com/", None);
    assert_eq!(outcome(&d), "404");
}

/// The ingress conformance suite's path_rules feature, request by request.
#[test]
fn conformance_path_rules_feature() {
    let host = |h: &str, paths: &[(&str, &str, &str)]| {
        let mut s = format!("    - host: {h}\n      http:\n        paths:\n");
        for (p, t, svc) in paths {
            s.push_str(&path(p, t, svc));
        }
        s
    };
    // Service names a–d stand for the feature's backends:
    // a = foo-exact, b = foo-prefix, c = aaa-slash-bbb-prefix, d = aaa-prefix.
    let rules = format!(
        "  rules:\n{}{}{}{}",
        host("exact-path-rules", &[("/foo", "Exact", "a")]),
        host(
            "prefix-path-rules",
            &[
                ("/foo", "Prefix", "b"),
                ("/aaa/bbb", "Prefix", "c"),
                ("/aaa", "Prefix", "d")
            ]
        ),
        host(
            "mixed-path-rules",
            &[("/foo", "Prefix", "b"), ("/foo", "Exact", "a")]
        ),
        host(
            "trailing-slash-path-rules",
            &[("/aaa/bbb/", "Prefix", "c"), ("/foo/", "Exact", "a")]
        ),
    );
    let yaml = ingress(&rules);
    for (url, want) in [
        ("http://exact-path-rules/foo", "a"),
        ("http://exact-path-rules/foo/", "404"),
        ("http://exact-path-rules/FOO", "404"),
        ("http://exact-path-rules/bar", "404"),
        ("http://prefix-path-rules/foo", "b"),
        ("http://prefix-path-rules/foo/", "b"),
        ("http://prefix-path-rules/FOO", "404"),
        ("http://prefix-path-rules/aaa/bbb", "c"),
        ("http://prefix-path-rules/aaa/bbb/ccc", "c"),
        ("http://prefix-path-rules/aaa/ccc", "d"),
        ("http://prefix-path-rules/aaaccc", "404"),
        ("http://mixed-path-rules/foo", "a"),
        ("http://trailing-slash-path-rules/aaa/bbb", "c"),
        ("http://trailing-slash-path-rules/aaa/bbb/", "c"),
        ("http://trailing-slash-path-rules/foo", "404"),
    ] {
        let d = decide(&yaml, "nginx", url, None);
        assert_eq!(outcome(&d), want, "{url}: {:?}", d.compared);
    }
}

/// Two Ingresses claiming the same host and path: the older one keeps it
/// (ingress-nginx merges Ingresses of a class by creation time).
#[test]
fn the_oldest_ingress_keeps_a_contested_path() {
    let one = |name: &str, created: &str, svc: &str| {
        format!(
            "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: {name}, creationTimestamp: \"{created}\"}}\nspec:\n  rules:\n    - host: foo.com\n      http:\n        paths:\n{}",
            path("/", "Prefix", svc)
        )
    };
    let yaml = [
        one("newer", "2025-01-01T00:00:00Z", "a"),
        one("older", "2024-01-01T00:00:00Z", "b"),
    ]
    .join("---\n");
    let d = decide(&yaml, "nginx", "http://foo.com/", None);
    assert_eq!(outcome(&d), "b");
    assert_eq!(d.route.map(|r| r.name.name).as_deref(), Some("older"));
}

/// nginx matches locations on the decoded, dot-resolved, slash-merged URI
/// and forwards the URI as the client wrote it; a path above the root, or
/// two Host headers, get 400; a Host ending in a dot matches without it.
#[test]
fn ingress_nginx_reads_the_request_as_nginx_does() {
    let yaml = ingress(&format!(
        "  rules:\n    - host: testhost.com\n      http:\n        paths:\n{}{}",
        path("/api", "Prefix", "a"),
        path("/", "Prefix", "b")
    ));
    for url in [
        "http://testhost.com/public/../api/x",
        "http://testhost.com//api/x",
        "http://testhost.com/%61pi/x",
        "http://testhost.com./api/x",
    ] {
        let d = decide(&yaml, "nginx", url, None);
        assert_eq!(outcome(&d), "a", "{url}");
    }
    let d = decide(&yaml, "nginx", "http://testhost.com/public/../api/x", None);
    assert_eq!(d.matched_path.as_deref(), Some("/api/x"));
    assert_eq!(d.request.path, "/public/../api/x");
    let d = decide(&yaml, "nginx", "http://testhost.com/../x", None);
    assert_eq!((d.status, &d.reason), (Some(400), &Reason::BadRequest));
    let d = decide_with(
        &yaml,
        "nginx",
        "http://testhost.com/api",
        None,
        &[("Host", "testhost.com"), ("Host", "other.com")],
    );
    assert_eq!((d.status, &d.reason), (Some(400), &Reason::BadRequest));
    // The fragment is never sent.
    let d = decide(&yaml, "nginx", "http://testhost.com/api#frag", None);
    assert_eq!(
        (outcome(&d).as_str(), d.request.path.as_str()),
        ("a", "/api")
    );
}

/// A `tls` entry without `secretName`: the controller's own certificate,
/// and HTTP is still redirected (308) to HTTPS.
#[test]
fn tls_without_a_secret_still_redirects() {
    let yaml = format!(
        "{}  tls: [{{hosts: [foo.com]}}]\n",
        ingress(&format!(
            "  rules:\n    - host: foo.com\n      http:\n        paths:\n{}",
            path("/", "Prefix", "a")
        ))
    );
    let d = decide(&yaml, "nginx", "http://foo.com/x", None);
    assert_eq!(d.status, Some(308));
    assert_eq!(
        d.redirect.map(|r| r.location).as_deref(),
        Some("https://foo.com/x")
    );
    let d = decide(&yaml, "nginx", "https://foo.com/x", None);
    assert!(d.default_certificate);
    assert_eq!(outcome(&d), "a");
}

/// Two default IngressClasses: since Kubernetes 1.25 the DefaultIngressClass
/// admission plugin gives a class-less Ingress the newest (then the lowest
/// name) instead of refusing it, and `kpv` says so.
#[test]
fn of_two_default_classes_the_newest_is_given() {
    let class = |name: &str, created: &str| {
        format!("apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {{name: {name}, {created}annotations: {{ingressclass.kubernetes.io/is-default-class: \"true\"}}}}\nspec: {{controller: k8s.io/ingress-nginx}}\n")
    };
    let ing = ingress(&format!(
        "  rules:\n    - host: x.com\n      http:\n        paths:\n{}",
        path("/", "Prefix", "a")
    ));
    let class_of = |classes: &[String]| {
        // BASE's `nginx` default class has no timestamp: drop its mark.
        let base = BASE.replace(
            "annotations: {ingressclass.kubernetes.io/is-default-class: \"true\"}",
            "annotations: {}",
        );
        let text = format!("{base}\n---\n{}---\n{ing}", classes.join("---\n"));
        let (cluster, diags) = kpv_core::Code::ALL.parse(&text);
        assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
        let rt = compile(&cluster.routing, &cluster);
        let warned = kpv_core::http::report::diagnostics(&rt)
            .iter()
            .any(|d| d.message.contains("2 IngressClasses are marked default"));
        (
            kpv_core::http::table::ingress_class_of(
                &cluster.routing,
                &cluster.routing.ingresses[0],
            ),
            warned,
        )
    };
    let old = class("old", "creationTimestamp: \"2024-01-01T00:00:00Z\", ");
    let new = class("new", "creationTimestamp: \"2025-06-01T00:00:00Z\", ");
    assert_eq!(
        class_of(&[new.clone(), old.clone()]),
        (Some("new".into()), true)
    );
    assert_eq!(class_of(&[old.clone(), new]), (Some("new".into()), true));
    let same = class("b-same", "creationTimestamp: \"2024-01-01T00:00:00Z\", ");
    let other = class("a-same", "creationTimestamp: \"2024-01-01T00:00:00Z\", ");
    assert_eq!(class_of(&[same, other]), (Some("a-same".into()), true));
    assert_eq!(class_of(&[old]), (Some("old".into()), false));
}

/// ingress-nginx annotations kpv does not model are named, each once; the
/// four it reads are not.
#[test]
fn unmodelled_nginx_annotations_are_named() {
    let ing = ingress(&format!(
        "  rules:\n    - host: x.com\n      http:\n        paths:\n{}",
        path("/api(/|$)(.*)", "ImplementationSpecific", "a")
    ))
    .replace(
        "metadata: {name: test}",
        "metadata:\n  name: test\n  annotations:\n    nginx.ingress.kubernetes.io/rewrite-target: /$2\n    nginx.ingress.kubernetes.io/use-regex: \"true\"\n    nginx.ingress.kubernetes.io/proxy-body-size: 8m\n    nginx.ingress.kubernetes.io/ssl-redirect: \"false\"\n    example.com/other: x",
    );
    let named: Vec<String> = report(&ing)
        .into_iter()
        .filter(|d| d.message.starts_with("annotation "))
        .map(|d| d.message)
        .collect();
    assert_eq!(named.len(), 1, "{named:#?}");
    assert!(named[0].contains("proxy-body-size is not modelled: kpv routes as if it were absent"));
    // `kpv check` prints them with the Ingress located.
    let out = kpv_core::cli::run(
        &kpv_core::cli::parse_args(&["check".to_string(), "in.yaml".to_string()])
            .unwrap_or(kpv_core::cli::Command::Help(String::new())),
        &[format!("{BASE}\n---\n{ing}")],
        &["in.yaml".to_string()],
    );
    for want in ["Ingress/default/test", "proxy-body-size is not modelled"] {
        assert!(out.stderr.contains(want), "{want}: {}", out.stderr);
    }
}

/// `kpv check`'s routing diagnostics for `yaml` (after BASE).
fn report(yaml: &str) -> Vec<Diagnostic> {
    let (cluster, diags) = kpv_core::Code::ALL.parse(&format!("{BASE}\n---\n{yaml}"));
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    kpv_core::http::report::diagnostics(&compile(&cluster.routing, &cluster))
}

/// An Ingress named `name` with annotations `ann` (YAML lines) and paths.
fn annotated(name: &str, ann: &[&str], paths: &[(&str, &str, &str)]) -> String {
    let ann: String = ann.iter().map(|a| format!("    {a}\n")).collect();
    let paths: String = paths.iter().map(|(p, t, s)| path(p, t, s)).collect();
    format!(
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {name}\n  annotations:\n{ann}    x: y\nspec:\n  rules:\n    - host: rewrite.bar.com\n      http:\n        paths:\n{paths}"
    )
}

const USE_REGEX: &str = "nginx.ingress.kubernetes.io/use-regex: \"true\"";

/// The rewrite example of ingress-nginx's documentation (`/something(/|$)(.*)`
/// to `/$2`): the path the backend gets, case-insensitive, the query kept;
/// `kpv routes` shows the location as nginx writes it.
#[test]
fn the_documented_rewrite_target() {
    let yaml = annotated(
        "rewrite",
        &[USE_REGEX, "nginx.ingress.kubernetes.io/rewrite-target: /$2"],
        &[("/something(/|$)(.*)", "ImplementationSpecific", "a")],
    );
    for (url, path, query) in [
        ("http://rewrite.bar.com/something", "/", ""),
        ("http://rewrite.bar.com/something/", "/", ""),
        ("http://rewrite.bar.com/something/new", "/new", ""),
        ("http://rewrite.bar.com/SomeThing/new?x=1", "/new", "x=1"),
    ] {
        let d = decide(&yaml, "nginx", url, None);
        assert_eq!(outcome(&d), "a", "{url}");
        assert_eq!(
            (d.request.path.as_str(), d.request.query.as_str()),
            (path, query),
            "{url}"
        );
        assert_eq!(d.filters, vec!["rewrite-target"], "{url}");
    }
    // Anchored at the start only, and no other path: the controller's 404.
    let d = decide(&yaml, "nginx", "http://rewrite.bar.com/x/something", None);
    assert_eq!(outcome(&d), "404");
    let (cluster, _) = kpv_core::Code::ALL.parse(&format!("{BASE}\n---\n{yaml}"));
    let text = kpv_core::http::render::render_text(&compile(&cluster.routing, &cluster));
    assert!(
        text.contains("~* ^/something(/|$)(.*) → default/a:80 · rewrite /$2"),
        "{text}"
    );
    assert!(report(&yaml).is_empty(), "{:#?}", report(&yaml));
}

/// The same example as the documentation writes it, with `pathType:
/// Prefix`: ingress-nginx's admission webhook (strict-validate-path-type,
/// on by default) denies it, so nothing routes, and `kpv check` says why
/// and how to fix it.
#[test]
fn a_regular_expression_under_prefix_is_denied() {
    let yaml = annotated(
        "rewrite",
        &[USE_REGEX, "nginx.ingress.kubernetes.io/rewrite-target: /$2"],
        &[("/something(/|$)(.*)", "Prefix", "a")],
    );
    let d = decide(&yaml, "nginx", "http://rewrite.bar.com/something/new", None);
    assert_eq!(outcome(&d), "404");
    let diags = report(&yaml);
    let denied: Vec<&Diagnostic> = diags.iter().filter(|d| d.is_error()).collect();
    assert_eq!(denied.len(), 1, "{diags:#?}");
    assert!(denied[0]
        .message
        .contains("admission webhook denies this Ingress: path /something(/|$)(.*) cannot be used with pathType Prefix"));
    assert_eq!(
        denied[0].field.as_deref(),
        Some("spec.rules[0].http.paths[0].path")
    );
    assert!(denied[0]
        .hint
        .as_deref()
        .is_some_and(|h| h.contains("ImplementationSpecific")));
}

/// "Path Priority" of ingress-nginx's documentation: once one Ingress of a
/// host uses a rewrite, every path of the host is a regular expression,
/// tried longest first.
#[test]
fn regex_paths_are_tried_longest_first() {
    let one = annotated(
        "test-ingress-1",
        &[],
        &[("/foo/bar", "Prefix", "a"), ("/foo/bar/", "Prefix", "b")],
    );
    let two = annotated(
        "test-ingress-2",
        &["nginx.ingress.kubernetes.io/rewrite-target: /$1"],
        &[("/foo/bar/(.+)", "ImplementationSpecific", "c")],
    );
    let yaml = format!("{one}---\n{two}");
    for (path, want, forwarded) in [
        ("/foo/bar/1", "c", "/1"),
        ("/foo/bar/", "b", "/foo/bar/"),
        ("/foo/bar", "a", "/foo/bar"),
        // `Prefix /foo/bar` is now `~* ^/foo/bar`: it takes `/foo/barbaz`
        // and `/FOO/BAR` too.
        ("/foo/barbaz", "a", "/foo/barbaz"),
        ("/FOO/BAR", "a", "/FOO/BAR"),
    ] {
        let d = decide(
            &yaml,
            "nginx",
            &format!("http://rewrite.bar.com{path}"),
            None,
        );
        assert_eq!(
            (outcome(&d).as_str(), d.request.path.as_str()),
            (want, forwarded),
            "{path}"
        );
    }
    // Without the rewrite, the same host matches by pathType.
    let d = decide(&one, "nginx", "http://rewrite.bar.com/foo/barbaz", None);
    assert_eq!(outcome(&d), "404");
}

/// The documentation's warning: regular expressions match first in order,
/// so `/foo/bar/[A-Z0-9]{3}` (longer) takes `/foo/bar/bar` from the exact
/// text `/foo/bar/bar`.
#[test]
fn the_first_matching_expression_wins() {
    let yaml = annotated(
        "test-ingress-3",
        &[USE_REGEX],
        &[
            ("/foo/bar/bar", "ImplementationSpecific", "a"),
            ("\"/foo/bar/[A-Z0-9]{3}\"", "ImplementationSpecific", "b"),
        ],
    );
    let d = decide(&yaml, "nginx", "http://rewrite.bar.com/foo/bar/bar", None);
    assert_eq!(outcome(&d), "b");
    assert_eq!(d.request.path, "/foo/bar/bar");
    assert!(d.filters.is_empty());
}

/// A location nginx cannot load is an error (the reload fails); one kpv
/// cannot read is said, and matches nothing; a target's nginx variables
/// are named.
#[test]
fn expressions_nginx_or_kpv_cannot_read_are_reported() {
    let yaml = annotated(
        "bad",
        &[
            USE_REGEX,
            "nginx.ingress.kubernetes.io/rewrite-target: /$1$is_args$args",
        ],
        &[
            ("/a(b", "ImplementationSpecific", "a"),
            ("/(?=x)y", "ImplementationSpecific", "b"),
        ],
    );
    let diags = report(&yaml);
    let msgs: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
    assert!(msgs.iter().any(|m| m.contains("nginx cannot load `location ~* \"^/a(b\"`: missing ) at offset 2")), "{msgs:#?}");
    assert!(
        msgs.iter().any(|m| m
            .contains("kpv cannot read the regular expression `/(?=x)y`: a lookaround assertion")),
        "{msgs:#?}"
    );
    assert!(
        msgs.iter()
            .any(|m| m.contains("kpv does not expand nginx variables ($is_args, $args)")),
        "{msgs:#?}"
    );
    let d = decide(&yaml, "nginx", "http://rewrite.bar.com/a(b", None);
    assert_eq!(outcome(&d), "404");
}
