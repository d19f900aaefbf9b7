//! Gateway API filters, backends and status, checked against the Gateway
//! API conformance suite's request tables (redirects, rewrites, header
//! modifiers, weights, invalid backends, ReferenceGrant, HTTPS listeners,
//! misdirected requests) and the API's status reasons.

mod gateway_support;
use gateway_support::*;
use kpv_core::http::walk::Reason;
use kpv_core::http::{compile, EntryPoint};

#[test]
fn httproute_redirect_port_and_scheme() {
    let rule = |path: &str, extra: &str| {
        format!("    - matches: [{{path: {{type: PathPrefix, value: {path}}}}}]\n      filters: [{{type: RequestRedirect, requestRedirect: {{hostname: example.org{extra}}}}}]\n")
    };
    let route = |name: &str, parent: &str, rules: &[(&str, &str)]| {
        let mut s = format!("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: {name}, namespace: gateway-conformance-infra}}\nspec:\n  parentRefs: [{{name: {parent}}}]\n  rules:\n");
        for (p, e) in rules {
            s.push_str(&rule(p, e));
        }
        s
    };
    let yaml = [
        route(
            "http-route-for-listener-on-port-80",
            "same-namespace",
            &[
                ("/scheme-nil-and-port-nil", ""),
                ("/scheme-nil-and-port-80", ", port: 80"),
                ("/scheme-nil-and-port-8080", ", port: 8080"),
                ("/scheme-https-and-port-nil", ", scheme: https"),
                ("/scheme-https-and-port-443", ", scheme: https, port: 443"),
                ("/scheme-https-and-port-8443", ", scheme: https, port: 8443"),
            ],
        ),
        route(
            "http-route-for-listener-on-port-8080",
            "same-namespace-with-http-listener-on-8080",
            &[
                ("/scheme-nil-and-port-nil", ""),
                ("/scheme-nil-and-port-80", ", port: 80"),
                ("/scheme-https-and-port-nil", ", scheme: https"),
            ],
        ),
        route(
            "http-route-for-listener-on-port-443",
            "same-namespace-with-https-listener",
            &[
                ("/scheme-nil-and-port-nil", ""),
                ("/scheme-nil-and-port-443", ", port: 443"),
                ("/scheme-nil-and-port-8443", ", port: 8443"),
                ("/scheme-http-and-port-nil", ", scheme: http"),
                ("/scheme-http-and-port-80", ", scheme: http, port: 80"),
                ("/scheme-http-and-port-8080", ", scheme: http, port: 8080"),
            ],
        ),
    ]
    .join("---\n");
    check(
        &yaml,
        "same-namespace",
        &[
            (
                get("http://gw/scheme-nil-and-port-nil"),
                Redirect(302, "http://example.org/scheme-nil-and-port-nil"),
            ),
            (
                get("http://gw/scheme-nil-and-port-80"),
                Redirect(302, "http://example.org/scheme-nil-and-port-80"),
            ),
            (
                get("http://gw/scheme-nil-and-port-8080"),
                Redirect(302, "http://example.org:8080/scheme-nil-and-port-8080"),
            ),
            (
                get("http://gw/scheme-https-and-port-nil"),
                Redirect(302, "https://example.org/scheme-https-and-port-nil"),
            ),
            (
                get("http://gw/scheme-https-and-port-443"),
                Redirect(302, "https://example.org/scheme-https-and-port-443"),
            ),
            (
                get("http://gw/scheme-https-and-port-8443"),
                Redirect(302, "https://example.org:8443/scheme-https-and-port-8443"),
            ),
        ],
    );
    check(
        &yaml,
        "same-namespace-with-http-listener-on-8080",
        &[
            (
                get("http://gw:8080/scheme-nil-and-port-nil"),
                Redirect(302, "http://example.org:8080/scheme-nil-and-port-nil"),
            ),
            (
                get("http://gw:8080/scheme-nil-and-port-80"),
                Redirect(302, "http://example.org/scheme-nil-and-port-80"),
            ),
            (
                get("http://gw:8080/scheme-https-and-port-nil"),
                Redirect(302, "https://example.org/scheme-https-and-port-nil"),
            ),
        ],
    );
    check(
        &yaml,
        "same-namespace-with-https-listener",
        &[
            (
                get("https://example.org/scheme-nil-and-port-nil"),
                Redirect(302, "https://example.org/scheme-nil-and-port-nil"),
            ),
            (
                get("https://example.org/scheme-nil-and-port-443"),
                Redirect(302, "https://example.org/scheme-nil-and-port-443"),
            ),
            (
                get("https://example.org/scheme-nil-and-port-8443"),
                Redirect(302, "https://example.org:8443/scheme-nil-and-port-8443"),
            ),
            (
                get("https://example.org/scheme-http-and-port-nil"),
                Redirect(302, "http://example.org/scheme-http-and-port-nil"),
            ),
            (
                get("https://example.org/scheme-http-and-port-80"),
                Redirect(302, "http://example.org/scheme-http-and-port-80"),
            ),
            (
                get("https://example.org/scheme-http-and-port-8080"),
                Redirect(302, "http://example.org:8080/scheme-http-and-port-8080"),
            ),
        ],
    );
}

#[test]
fn httproute_redirect_path_host_and_status() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: redirect-path, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /original-prefix}}]
      filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /replacement-prefix}}}]
    - matches: [{path: {type: PathPrefix, value: /full}}]
      filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplaceFullPath, replaceFullPath: /full-path-replacement}}}]
    - matches: [{path: {type: PathPrefix, value: /hostname-redirect}}]
      filters: [{type: RequestRedirect, requestRedirect: {hostname: example.org}}]
    - matches: [{path: {type: PathPrefix, value: /host-and-status}}]
      filters: [{type: RequestRedirect, requestRedirect: {hostname: example.org, statusCode: 301}}]
"#;
    check(
        yaml,
        "same-namespace",
        &[
            (
                get("http://gw/original-prefix/lemon"),
                Redirect(302, "http://gw/replacement-prefix/lemon"),
            ),
            (
                get("http://gw/full/path/original"),
                Redirect(302, "http://gw/full-path-replacement"),
            ),
            (
                get("http://gw/hostname-redirect"),
                Redirect(302, "http://example.org/hostname-redirect"),
            ),
            (
                get("http://gw/host-and-status"),
                Redirect(301, "http://example.org/host-and-status"),
            ),
        ],
    );
}

#[test]
fn httproute_rewrite_path_and_host() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: rewrite-path, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /prefix/one}}]
      filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /one}}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /strip-prefix}}]
      filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /full/one}}]
      filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplaceFullPath, replaceFullPath: /one}}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /host}}]
      filters: [{type: URLRewrite, urlRewrite: {hostname: example.org}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
"#;
    for (url, path, host) in [
        ("http://gw/prefix/one/two", "/one/two", "gw"),
        ("http://gw/strip-prefix/three", "/three", "gw"),
        ("http://gw/strip-prefix", "/", "gw"),
        ("http://gw/full/one/two", "/one", "gw"),
        ("http://gw/host/x", "/host/x", "example.org"),
    ] {
        let d = decide(yaml, "same-namespace", &get(url), 1);
        assert_eq!(d.status, Some(200), "{url}");
        assert_eq!(d.request.path, path, "{url}");
        assert_eq!(d.request.host, host, "{url}");
    }
}

#[test]
fn httproute_request_and_response_header_modifiers() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: request-header-modifier, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /set}}]
      filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: X-Header-Set, value: set-overwrites-values}]}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /add}}]
      filters: [{type: RequestHeaderModifier, requestHeaderModifier: {add: [{name: X-Header-Add, value: add-appends-values}]}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /remove}}]
      filters: [{type: RequestHeaderModifier, requestHeaderModifier: {remove: [X-Header-Remove]}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /response}}]
      filters: [{type: ResponseHeaderModifier, responseHeaderModifier: {set: [{name: X-Header-Set, value: set-overwrites-values}], add: [{name: X-Header-Add, value: add-appends-values}], remove: [X-Header-Remove]}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
"#;
    let d = decide(
        yaml,
        "same-namespace",
        &with(
            "http://gw/set",
            &[
                ("Some-Other-Header", "val"),
                ("X-Header-Set", "some-other-value"),
            ],
        ),
        1,
    );
    assert_eq!(
        d.request.headers.get("x-header-set").map(String::as_str),
        Some("set-overwrites-values")
    );
    assert_eq!(
        d.request
            .headers
            .get("some-other-header")
            .map(String::as_str),
        Some("val")
    );
    let d = decide(
        yaml,
        "same-namespace",
        &with("http://gw/add", &[("X-Header-Add", "some-other-value")]),
        1,
    );
    assert_eq!(
        d.request.headers.get("x-header-add").map(String::as_str),
        Some("some-other-value,add-appends-values")
    );
    let d = decide(
        yaml,
        "same-namespace",
        &with("http://gw/remove", &[("X-Header-Remove", "val")]),
        1,
    );
    assert!(!d.request.headers.contains_key("x-header-remove"));
    let d = decide(yaml, "same-namespace", &get("http://gw/response"), 1);
    let backend = [
        ("X-Header-Set".to_string(), "original".to_string()),
        ("X-Header-Add".to_string(), "original".to_string()),
        ("X-Header-Remove".to_string(), "gone".to_string()),
    ];
    let got = d.response_headers(&backend);
    assert_eq!(
        got.get("x-header-set").map(String::as_str),
        Some("set-overwrites-values")
    );
    assert_eq!(
        got.get("x-header-add").map(String::as_str),
        Some("original,add-appends-values")
    );
    assert!(!got.contains_key("x-header-remove"));
}

#[test]
fn httproute_weight_shares_and_zero_weight() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: weighted-backends, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - backendRefs:
        - {name: infra-backend-v1, port: 8080, weight: 70}
        - {name: infra-backend-v2, port: 8080, weight: 30}
        - {name: infra-backend-v3, port: 8080, weight: 0}
"#;
    let f = Fixture::new(yaml);
    let mut counts = std::collections::BTreeMap::new();
    for seed in 0..1000 {
        let d = f.decide("same-namespace", &get("http://gw/"), seed);
        let name = d.backend.map(|b| b.service.name).unwrap_or_default();
        *counts.entry(name).or_insert(0) += 1;
    }
    let v1 = counts.get("infra-backend-v1").copied().unwrap_or(0);
    let v2 = counts.get("infra-backend-v2").copied().unwrap_or(0);
    assert!(!counts.contains_key("infra-backend-v3"), "{counts:?}");
    assert!((630..=770).contains(&v1), "{counts:?}");
    assert!((230..=370).contains(&v2), "{counts:?}");
}

#[test]
fn invalid_backends_get_500_and_empty_backends_get_503() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: invalid, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /nonexistent}}]
      backendRefs: [{name: nonexistent, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /unknown-kind}}]
      backendRefs: [{group: unknownkind.example.com, kind: NonExistent, name: infra-backend-v1}]
    - matches: [{path: {type: PathPrefix, value: /no-backends}}]
    - matches: [{path: {type: PathPrefix, value: /all-zero}}]
      backendRefs: [{name: infra-backend-v1, port: 8080, weight: 0}]
    - matches: [{path: {type: PathPrefix, value: /cross-namespace}}]
      backendRefs: [{name: web-backend, namespace: gateway-conformance-web-backend, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /empty}}]
      backendRefs: [{name: empty, port: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: empty, namespace: gateway-conformance-infra}
spec: {selector: {app: nobody}, ports: [{port: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: web-backend, namespace: gateway-conformance-web-backend}
spec: {selector: {app: nobody}, ports: [{port: 8080}]}
"#;
    for (url, status, reason) in [
        (
            "http://gw/nonexistent",
            500,
            Reason::InvalidBackend {
                reason: "BackendNotFound",
            },
        ),
        (
            "http://gw/unknown-kind",
            500,
            Reason::InvalidBackend {
                reason: "InvalidKind",
            },
        ),
        ("http://gw/no-backends", 500, Reason::NoBackends),
        ("http://gw/all-zero", 500, Reason::NoBackends),
        (
            "http://gw/cross-namespace",
            500,
            Reason::InvalidBackend {
                reason: "RefNotPermitted",
            },
        ),
        ("http://gw/empty", 503, Reason::NoReadyEndpoints),
    ] {
        let d = decide(yaml, "same-namespace", &get(url), 1);
        assert_eq!((d.status, &d.reason), (Some(status), &reason), "{url}");
    }
}

#[test]
fn reference_grant_permits_a_cross_namespace_backend() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: reference-grant, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules: [{backendRefs: [{name: web-backend, namespace: gateway-conformance-web-backend, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: reference-grant, namespace: gateway-conformance-web-backend}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: gateway-conformance-infra}]
  to: [{group: "", kind: Service, name: web-backend}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web-backend, namespace: gateway-conformance-web-backend}
spec:
  replicas: 1
  selector: {matchLabels: {app: web-backend}}
  template:
    metadata: {labels: {app: web-backend}}
    spec: {containers: [{name: c, ports: [{containerPort: 3000}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: web-backend, namespace: gateway-conformance-web-backend}
spec: {selector: {app: web-backend}, ports: [{port: 8080, targetPort: 3000}]}
"#;
    check(
        yaml,
        "same-namespace",
        &[(get("http://gw/"), Backend("web-backend"))],
    );
    // The grant for another Service name does not cover this one.
    let other = yaml.replace("name: web-backend}]\n---", "name: other}]\n---");
    check(
        &other,
        "same-namespace",
        &[(get("http://gw/"), Status(500))],
    );
}

#[test]
fn https_listener_by_sni_and_misdirected_requests() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: two-https, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: conformance
  listeners:
    - {name: a, port: 443, protocol: HTTPS, hostname: a.example.com, tls: {certificateRefs: [{name: tls-validity-checks-certificate}]}}
    - {name: b, port: 443, protocol: HTTPS, hostname: b.example.com, tls: {certificateRefs: [{name: tls-validity-checks-certificate}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: a, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: two-https, sectionName: a}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: b, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: two-https, sectionName: b}]
  rules: [{backendRefs: [{name: infra-backend-v2, port: 8080}]}]
"#;
    let sni =
        |url: &'static str, sni: &'static str, host: &'static [(&'static str, &'static str)]| Req {
            url,
            method: "GET",
            headers: host,
            sni: Some(sni),
        };
    check(
        yaml,
        "two-https",
        &[
            (get("https://a.example.com/"), Backend("infra-backend-v1")),
            (get("https://b.example.com/"), Backend("infra-backend-v2")),
            (
                sni(
                    "https://a.example.com/",
                    "a.example.com",
                    &[("Host", "b.example.com")],
                ),
                Status(421),
            ),
        ],
    );
    let d = decide(yaml, "two-https", &get("https://c.example.com/"), 1);
    assert_eq!((d.status, d.reason), (None, Reason::TlsHandshakeFailed));
    let d = decide(yaml, "two-https", &get("http://a.example.com/"), 1);
    assert_eq!((d.status, d.reason), (None, Reason::NoListener));
}

#[test]
fn route_status_reasons_and_attached_routes() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: hosts, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: conformance
  listeners:
    - {name: only, port: 80, protocol: HTTP, hostname: foo.com}
    - {name: all, port: 8080, protocol: HTTP, hostname: bar.com, allowedRoutes: {namespaces: {from: All}}}
    - {name: selected, port: 8081, protocol: HTTP, allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {gateway-conformance: infra}}}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ok, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: hosts, sectionName: only}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: wrong-host, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: hosts, sectionName: only}]
  hostnames: [bar.com]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: wrong-section, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: hosts, sectionName: nope}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: wrong-port, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: hosts, sectionName: only, port: 8080}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: elsewhere, namespace: other}
spec:
  parentRefs: [{name: hosts, namespace: gateway-conformance-infra}]
  rules: [{backendRefs: [{name: missing, port: 8080}]}]
"#;
    let text = format!("{INFRA}\n---\n{yaml}");
    let (cluster, _) = kpv_core::Code::ALL.parse(&text);
    let (objects, _) = kpv_core::http::parse(&text);
    let rt = compile(&objects, &cluster);
    let reason = |route: &str| -> Vec<(&str, &str)> {
        rt.route_status
            .iter()
            .filter(|s| s.route.name == route)
            .flat_map(|s| s.conditions.iter().map(|c| (c.kind, c.reason)))
            .collect()
    };
    assert_eq!(
        reason("ok"),
        [("Accepted", "Accepted"), ("ResolvedRefs", "ResolvedRefs")]
    );
    assert_eq!(
        reason("wrong-host")[0],
        ("Accepted", "NoMatchingListenerHostname")
    );
    assert_eq!(reason("wrong-section")[0], ("Accepted", "NoMatchingParent"));
    assert_eq!(reason("wrong-port")[0], ("Accepted", "NoMatchingParent"));
    // From namespace `other`: only the `all` listener takes it (the
    // selector wants the infra label); its backend does not exist.
    assert_eq!(
        reason("elsewhere"),
        [
            ("Accepted", "Accepted"),
            ("ResolvedRefs", "BackendNotFound")
        ]
    );
    let Some(kpv_core::http::table::Table::Gateway(g)) =
        rt.tables
            .get(&EntryPoint::Gateway(kpv_core::model::NamespacedName::new(
                NS, "hosts",
            )))
    else {
        panic!("no table for the Gateway");
    };
    let attached: Vec<usize> = g.listeners.iter().map(|l| l.attached_routes).collect();
    assert_eq!(attached, [1, 1, 0]);
}

/// Ties between routes go to the oldest, then to `namespace/name` order;
/// within a route, to the first rule.
#[test]
fn ties_go_to_the_oldest_route_then_by_name_then_rule_order() {
    let route = |name: &str, created: &str, backend: &str| {
        format!("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: {name}, namespace: gateway-conformance-infra{created}}}\nspec:\n  parentRefs: [{{name: same-namespace}}]\n  rules:\n    - matches: [{{path: {{type: PathPrefix, value: /same}}}}]\n      backendRefs: [{{name: {backend}, port: 8080}}]\n    - matches: [{{path: {{type: PathPrefix, value: /same}}}}]\n      backendRefs: [{{name: infra-backend-v3, port: 8080}}]\n")
    };
    let older = [
        route(
            "b",
            ", creationTimestamp: \"2024-01-01T00:00:00Z\"",
            "infra-backend-v1",
        ),
        route(
            "a",
            ", creationTimestamp: \"2025-01-01T00:00:00Z\"",
            "infra-backend-v2",
        ),
    ]
    .join("---\n");
    check(
        &older,
        "same-namespace",
        &[(get("http://gw/same"), Backend("infra-backend-v1"))],
    );
    let same_time = [
        route(
            "b",
            ", creationTimestamp: \"2024-01-01T00:00:00Z\"",
            "infra-backend-v1",
        ),
        route(
            "a",
            ", creationTimestamp: \"2024-01-01T00:00:00Z\"",
            "infra-backend-v2",
        ),
    ]
    .join("---\n");
    check(
        &same_time,
        "same-namespace",
        &[(get("http://gw/same"), Backend("infra-backend-v2"))],
    );
    // A more specific hostname beats everything below it in the order.
    let hosts = format!(
        "{}---\n{}",
        route("wild", "", "infra-backend-v1").replace(
            "  parentRefs",
            "  hostnames: [\"*.example.com\"]\n  parentRefs"
        ),
        route("exact", "", "infra-backend-v2")
            .replace(
                "  parentRefs",
                "  hostnames: [foo.example.com]\n  parentRefs"
            )
            .replace("value: /same}", "value: /}")
    );
    check(
        &hosts,
        "same-namespace",
        &[(
            get("http://foo.example.com/same"),
            Backend("infra-backend-v2"),
        )],
    );
}

#[test]
fn a_gateway_without_its_class_is_not_programmed() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: orphan, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: missing
  listeners: [{name: http, port: 80, protocol: HTTP}]
"#;
    let text = format!("{INFRA}\n---\n{yaml}");
    let mut cluster = kpv_core::Code::ALL.parse(&text).0;
    let rt = compile(&cluster.routing.clone(), &cluster);
    let proxies = kpv_core::http::proxies::place_proxies(&mut cluster, &rt);
    let orphan = EntryPoint::Gateway(kpv_core::model::NamespacedName::new(NS, "orphan"));
    assert!(proxies.iter().all(|p| p.entry != orphan), "{proxies:#?}");
    assert!(proxies.iter().any(|p| p.entry != orphan && p.synthesized));
}

#[test]
fn conflicted_listeners_take_no_requests() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: twice, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: conformance
  listeners:
    - {name: one, port: 80, protocol: HTTP, hostname: foo.com}
    - {name: two, port: 80, protocol: HTTP, hostname: foo.com}
    - {name: three, port: 80, protocol: HTTP, hostname: bar.com}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: all, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: twice}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
"#;
    check(
        yaml,
        "twice",
        &[
            (get("http://foo.com/"), Status(404)),
            (get("http://bar.com/"), Backend("infra-backend-v1")),
        ],
    );
}

#[test]
fn an_https_listener_needs_a_tls_secret_it_may_use() {
    let yaml = |cert_ref: &str, grant: &str| {
        format!(
            "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: tls, namespace: gateway-conformance-infra}}\nspec:\n  gatewayClassName: conformance\n  listeners: [{{name: https, port: 443, protocol: HTTPS, tls: {{certificateRefs: [{cert_ref}]}}}}]\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: r, namespace: gateway-conformance-infra}}\nspec:\n  parentRefs: [{{name: tls}}]\n  rules: [{{backendRefs: [{{name: infra-backend-v1, port: 8080}}]}}]\n---\napiVersion: v1\nkind: Secret\nmetadata: {{name: elsewhere, namespace: certs}}\ntype: kubernetes.io/tls\n{grant}"
        )
    };
    let grant = "---\napiVersion: gateway.networking.k8s.io/v1beta1\nkind: ReferenceGrant\nmetadata: {name: g, namespace: certs}\nspec:\n  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: gateway-conformance-infra}]\n  to: [{group: \"\", kind: Secret}]\n";
    for (cert_ref, grant, problem) in [
        ("{name: tls-validity-checks-certificate}", "", None),
        ("{name: missing}", "", Some("InvalidCertificateRef")),
        (
            "{name: elsewhere, namespace: certs}",
            "",
            Some("RefNotPermitted"),
        ),
        ("{name: elsewhere, namespace: certs}", grant, None),
    ] {
        let y = yaml(cert_ref, grant);
        let text = format!("{INFRA}\n---\n{y}");
        let (cluster, diags) = kpv_core::Code::ALL.parse(&text);
        assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
        let rt = compile(&cluster.routing, &cluster);
        let warned: Vec<String> = kpv_core::http::report::diagnostics(&rt)
            .into_iter()
            .map(|d| d.message)
            .collect();
        let d = decide(&y, "tls", &get("https://any.example/"), 1);
        match problem {
            None => {
                assert_eq!(d.status, Some(200), "{cert_ref}: {:?}", d.reason);
                assert!(warned.is_empty(), "{warned:?}");
            }
            Some(p) => {
                assert_eq!(
                    (d.status, &d.reason),
                    (None, &Reason::TlsHandshakeFailed),
                    "{cert_ref}"
                );
                assert!(
                    warned.iter().any(|w| w.contains(p)),
                    "{cert_ref}: {warned:?}"
                );
            }
        }
    }
}

#[test]
fn allowed_route_kinds_and_namespaces_decide_attachment() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: kinds, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: conformance
  listeners:
    - {name: grpc-only, port: 80, protocol: HTTP, allowedRoutes: {kinds: [{kind: GRPCRoute}]}}
    - {name: same, port: 8080, protocol: HTTP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: kinds, sectionName: grpc-only}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: other-ns, namespace: elsewhere}
spec:
  parentRefs: [{name: kinds, namespace: gateway-conformance-infra, sectionName: same}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
"#;
    let text = format!("{INFRA}\n---\n{yaml}");
    let (cluster, _) = kpv_core::Code::ALL.parse(&text);
    let rt = compile(&cluster.routing, &cluster);
    let accepted: Vec<(&str, &str)> = rt
        .route_status
        .iter()
        .map(|s| (s.route.name.as_str(), s.conditions[0].reason))
        .collect();
    assert_eq!(
        accepted,
        [
            ("r", "NotAllowedByListeners"),
            ("other-ns", "NotAllowedByListeners")
        ]
    );
    check(yaml, "kinds", &[(get("http://gw/"), Status(404))]);
}
